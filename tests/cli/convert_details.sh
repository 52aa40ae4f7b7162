#!/usr/bin/env bash
# Smaller conversion defects of issue 12, item 20:
#  - `-v` prints what --help promises (sizes, layout, threads), not one line;
#  - with --quality, a tiny --split part (or a tiny file) is not padded to a 1 MiB /encoded chunk;
#  - under --strict the reason comes before the "stopped after" summary line.
source "$(dirname "$0")/lib/common.sh"
cd "$TMP"

check "-v: input, sizes, storage layout and threads, each on its own line"
run "$DATACONV" "$LD_TEST_DATA/tree" v.h5 --resize 24x16 --mode crop -j 2 -v
expect_rc 0
expect_err "dataconv: input: 9 files in 3 classes"
expect_err "dataconv: sizes: every image resized to 24x16 (crop)"
expect_err "dataconv: storage: HDF5, raw uint8 pixels, layout /data N x C x H x W (3 channels, BGR)"
n=$(nproc)
expect_err "dataconv: threads: $((n < 2 ? n : 2)) decoding worker"
check "-j above the CPUs this process may use: that many workers, said"
run "$DATACONV" "$LD_TEST_DATA/tree" v.h5 --resize 24x16 -j $((n + 3)) -v
expect_rc 0
expect_err "dataconv: threads: $n decoding worker.* (no more than the CPUs this process may use)"
if command -v taskset > /dev/null && taskset -c 0 true 2> /dev/null; then
    run taskset -c 0 "$DATACONV" "$LD_TEST_DATA/tree" v.h5 --resize 24x16 -v
    expect_rc 0
    expect_err "dataconv: threads: 1 decoding worker,"
fi
run "$DATACONV" "$LD_TEST_DATA/tree" v.lmdb --max-side 32 --quality 70 --gray -v
expect_rc 0
expect_err "sizes: longer side scaled down to at most 32"
expect_err "storage: LMDB, each image re-encoded as JPEG quality 70 (1 channel, gray)"
run "$DATACONV" "$LD_TEST_DATA/tree" q.h5 --resize 16 --quality 70 --split 2K -q
check "-q stays quiet"
[ ! -s "$TMP/err" ] || { show; fail "-q printed something"; }

check "--quality: tiny files and --split parts are not padded to 1 MiB"
n=0
while read -r part; do
    size=$(stat -c %s "$part")
    [ "$size" -lt 100000 ] || fail "$part is $size bytes for 2 KiB of data"
    n=$((n + 1))
done < q.txt
[ "$n" -ge 2 ] || fail "expected several parts, got $n"
run "$DATACONV" "$LD_TEST_DATA/tree" small.h5 --resize 16 --quality 70 -q
size=$(stat -c %s small.h5)
[ "$size" -lt 100000 ] || fail "small.h5 is $size bytes for 9 16x16 JPEGs"
"$PYTHON" - q.txt small.h5 <<'PY'
import io, sys, h5py
from PIL import Image
files = [l.strip() for l in open(sys.argv[1]) if l.strip()] + [sys.argv[2]]
for p in files:
    with h5py.File(p, "r") as f:
        o, e = f["offsets"][:], f["encoded"]
        assert e.chunks[0] % 4096 == 0 and e.chunks[0] <= 1 << 20, e.chunks
        for i in range(len(o) - 1):  # every sample still decodes, at its recorded shape
            im = Image.open(io.BytesIO(e[o[i]:o[i + 1]].tobytes()))
            c, h, w = f["shape"][i]
            assert im.size == (w, h), (p, i, im.size, (w, h))
print(f"{len(files)} files check out")
PY
run "$DATACONV" bench q.txt --epochs 1
expect_rc 0
expect_out "9 samples"

check "--strict: the reason first, then the summary line"
cp -r "$LD_TEST_DATA/tree" bad
printf 'junk' > bad/cat/zz.jpg
run "$DATACONV" bad strict.h5 --resize 8 --strict
expect_rc 3
head -1 "$TMP/err" | grep -q "zz.jpg: not an image file" || { show; fail "reason not first"; }
tail -1 "$TMP/err" | grep -q "stopped after" || { show; fail "summary not last"; }
echo "convert_details: all checks passed"
