#!/usr/bin/env bash
# The > 4 GiB proof of a 32-bit build (issue 15), run by scripts/ci_32bit.sh after the suites:
#  1. a 5.04 GiB raw HDF5 (110000 samples of 3x128x128, every sample distinct: see
#     tests/large/big_pattern.h) written by h5py + plain writes (make_big_h5.py);
#  2. the i386 reader streams it in shuffled batches of 256: every sample exactly once, every
#     byte and label checked (tests/large/big_stream.c); again under `ulimit -v 512M`; and the
#     64-bit build's reader gives the same order and content checksums;
#  3. the i386 dataconv converts 440 photos (the 24 fixture photos repeated) resized to
#     2048x2048, raw, into a 5.16 GiB HDF5 file; h5py checks every sample against the 64-bit
#     dataconv's conversion of the 24 distinct photos.
# Usage: scripts/big_32bit.sh BUILD32 BUILD64
# Files go to $LIBDATA_BIG_DIR, default /dev/shm when it has 6 GiB free (tmpfs: the files are
# real, every byte written and read, at memory speed so the check fits in CI), else BUILD32.
# Each is deleted right after use.
set -euo pipefail
cd "$(dirname "$0")/.."
b32=$(cd "$1" && pwd) b64=$(cd "$2" && pwd)
PY=/usr/bin/python3
need=$((6 * 1024 * 1024)) # KiB
dir=${LIBDATA_BIG_DIR:-}
if [ -z "$dir" ]; then
    if [ "$(df -k --output=avail /dev/shm 2>/dev/null | tail -1)" -gt "$need" ] 2>/dev/null; then
        dir=/dev/shm
    else
        dir=$b32
    fi
fi
[ "$(df -k --output=avail "$dir" | tail -1)" -gt "$need" ] \
    || { echo "FAIL: $dir has less than 6 GiB free for the > 4 GiB files" >&2; exit 1; }
work=$(mktemp -d "$dir/libdata-big.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "== > 4 GiB checks in $work"
t0=$SECONDS
file -L "$b32/tests/big_stream" | grep -q 'ELF 32-bit' || { echo "FAIL: $b32 is not a 32-bit build" >&2; exit 1; }

"$PY" tests/large/make_big_h5.py "$work/big.h5" 110000 3 128 128
echo "-- written in $((SECONDS - t0)) s"
"$b32/tests/big_stream" "$work/big.h5" 256 | tee "$work/r32.txt"
(ulimit -Sv 524288 && "$b32/tests/big_stream" "$work/big.h5" 256) | tee "$work/r32v.txt"
"$b64/tests/big_stream" "$work/big.h5" 256 | tee "$work/r64.txt"
sums() { grep -E '^(samples|order|content)' "$1" | sed 's/ in .*//'; }
for f in r32v r64; do
    [ "$(sums "$work/r32.txt")" = "$(sums "$work/$f.txt")" ] \
        || { echo "FAIL: $f differs from the 32-bit run" >&2; exit 1; }
done
echo "-- reads: same samples and checksums (32-bit, 32-bit under ulimit -v 512M, 64-bit)"
rm -f "$work/big.h5"

photos=$b32/testdata/photos
[ -d "$photos" ] || { echo "FAIL: no fixtures in $photos (run ctest first)" >&2; exit 1; }
"$PY" - "$photos" "$work" <<'PY'
import os, sys
ps = sorted(p for p in os.listdir(sys.argv[1]) if p.endswith(".jpg"))
open(f"{sys.argv[2]}/all.txt", "w").write("".join(f"{ps[i % len(ps)]} {i % len(ps)}\n" for i in range(440)))
open(f"{sys.argv[2]}/once.txt", "w").write("".join(f"{p} {i}\n" for i, p in enumerate(ps)))
PY
t1=$SECONDS
"$b32/dataconv" --list "$work/all.txt" --root "$photos" "$work/conv.h5" --resize 2048x2048 -q
echo "-- i386 dataconv wrote $(stat -c %s "$work/conv.h5") bytes in $((SECONDS - t1)) s"
"$b64/dataconv" --list "$work/once.txt" --root "$photos" "$work/ref.h5" --resize 2048x2048 -q
"$PY" - "$work/conv.h5" "$work/ref.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f, h5py.File(sys.argv[2], "r") as g:
    d, r, lab, rl = f["data"], g["data"][:], f["label"][:], g["label"][:]
    m = len(r)
    assert d.shape == (440, 3, 2048, 2048) and d.dtype == np.uint8, d.shape
    size = d.id.get_storage_size()
    assert size > 4 << 30, size
    for i in range(len(d)):
        assert np.array_equal(d[i], r[i % m]) and lab[i] == rl[i % m], f"sample {i} differs"
print(f"h5py: all 440 samples ({size} bytes of data) equal the 64-bit conversion")
PY
echo "== > 4 GiB checks passed in $((SECONDS - t0)) s"
