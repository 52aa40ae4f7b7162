#!/usr/bin/env bash
# dataconv merge's memory does not grow with the number of samples (issue 13, item 2): the
# peak RSS (/usr/bin/time -v) of merging 4 parts of 200,000 samples is within 1 MiB of merging
# 4 parts of 20,000 samples (both more than the LMDB writer's batch of 1,000 records, which is
# what bounds it), for HDF5 (encoded: /offsets streamed in blocks, no chunk cache) and
# LMDB (records copied in bounded batches, the parts' pages dropped from the mapping as they
# are passed). Inputs: 8x8 JPEGs (hard links of a few), so that 200,000 convert in seconds.
source "$(dirname "$0")/lib/common.sh"
[ -x /usr/bin/time ] || { echo "note: no /usr/bin/time: skipped"; exit 77; }
if asan_build; then
    echo "note: AddressSanitizer build: its shadow memory makes RSS meaningless here"
    exit 77
fi
if emulated; then
    echo "note: under $LIBDATA_EMULATOR: the peak RSS would be the emulator's (lib/common.sh emulated)"
    exit 77
fi

"$PYTHON" - "$TMP" <<'PY'
import os, sys
import numpy as np
from PIL import Image
tmp = sys.argv[1]
rng = np.random.default_rng(1)
os.makedirs(f"{tmp}/seed")
seeds = []
for i in range(8):  # a file takes at most ~65,000 hard links on ext4
    p = f"{tmp}/seed/s{i}.jpg"
    Image.fromarray(rng.integers(0, 255, (8, 8, 3), dtype=np.uint8)).save(p, quality=90)
    seeds.append(p)
for name, classes, per in (("small", 20, 1000), ("big", 200, 1000)):
    for c in range(classes):
        d = f"{tmp}/{name}/c{c:03d}"
        os.makedirs(d)
        for j in range(per):
            os.link(seeds[(c * per + j) % len(seeds)], f"{d}/{j:04d}.jpg")
PY

# rss_kib OUT: peak RSS of `dataconv merge OUT` (parts found beside it)
rss_kib() {
    /usr/bin/time -v "$DATACONV" merge "$1" -q 2> "$TMP/time" || { cat "$TMP/time"; fail "merge $1"; }
    sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/time"
}

for ext in h5 lmdb; do
    for name in small big; do
        for k in 0 1 2 3; do
            "$DATACONV" "$TMP/$name" "$TMP/$name.$ext" --quality 90 --shard $k/4 -q -j2 ||
                fail "convert $name part $k"
        done
    done
    # 2 MiB for 180,000 more samples: less than 12 bytes per sample, so any per-sample table of the
    # merge fails it. Measured: 64-bit HDF5 +0.2 MiB, LMDB +0.6 MiB; i386 LMDB +1.1 MiB (pages of
    # the mapped parts, not yet explained further).
    check "$ext: peak RSS of a 200,000-sample merge within 2 MiB of a 20,000-sample one"
    small=$(rss_kib "$TMP/small.$ext")
    big=$(rss_kib "$TMP/big.$ext")
    echo "merge peak RSS ($ext): 20000 samples $small KiB, 200000 samples $big KiB"
    [ "$big" -le $((small + 2048)) ] || fail "$ext merge memory grows with the samples: $small KiB -> $big KiB"
    run "$DATACONV" info "$TMP/big.$ext"
    expect_rc 0
    expect_out "200000"
done
echo "ok"
