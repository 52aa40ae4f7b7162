#!/usr/bin/env bash
# --decode-scale auto|exact (issue 30, item 2): on large JPEGs made at test time from the fixture
# photos, auto decodes at a reduced DCT scale (said by -v), within 40 dB of exact; exact is the
# full decode (the same bytes as the images decoded whole by Pillow, stored as PNG and converted
# by dataconv); auto is the default; only exact is recorded, and parts of both do not merge.
source "$(dirname "$0")/lib/common.sh"
"$PYTHON" -c 'import h5py, numpy, PIL' 2>/dev/null || { echo "needs h5py, numpy, PIL"; exit 77; }

big=$TMP/big/photos
png=$TMP/png/photos
mkdir -p "$big" "$png"
# Three photos resized up to camera sizes, 2000x1500 (1/2 scale for 224), 3600x2700 (1/4) and
# 2000x1500 stored turned (1500x2000, EXIF orientation 6), quality 92; and the same pixels
# decoded by Pillow (libjpeg-turbo, full size, EXIF applied) as PNG.
"$PYTHON" - "$LD_TEST_DATA/photos" "$big" "$png" <<'PY'
import glob, sys
from PIL import Image, ImageOps
src, big, png = sys.argv[1:4]
for i, p in enumerate(sorted(glob.glob(f"{src}/p*.jpg"))[:3]):
    im = Image.open(p).convert("RGB")
    im = im.resize((3600, 2700) if i == 1 else (2000, 1500), Image.LANCZOS)
    kw = {}
    if i == 2:
        im = im.transpose(Image.Transpose.ROTATE_90)  # shown upright by orientation 6
        ex = Image.Exif()
        ex[0x0112] = 6
        kw["exif"] = ex.tobytes()
    im.save(f"{big}/b{i}.jpg", quality=92, **kw)
    ImageOps.exif_transpose(Image.open(f"{big}/b{i}.jpg")).convert("RGB").save(f"{png}/b{i}.png")
PY

for mode in squash crop; do
    check "$mode 224: auto (the default) decodes at a reduced scale and says so with -v"
    run "$DATACONV" -v "$TMP/big" "$TMP/auto_$mode.h5" --resize 224 --mode $mode --decode-scale auto
    expect_rc 0
    expect_err "decode scale auto: 3 JPEGs decoded at a reduced DCT scale (1/2: 2, 1/4: 1, 1/8: 0)"
    run "$DATACONV" -v "$TMP/big" "$TMP/default_$mode.h5" --resize 224 --mode $mode
    expect_rc 0
    expect_err "decode scale auto: 3 JPEGs"
    run "$DATACONV" -v "$TMP/big" "$TMP/exact_$mode.h5" --resize 224 --mode $mode \
        --decode-scale exact
    expect_rc 0
    grep -q "decode scale auto" "$TMP/err" && fail "exact says it scaled"

    check "$mode 224: exact is the full decode: the same samples as Pillow's full decode via PNG"
    run "$DATACONV" "$TMP/png" "$TMP/png_$mode.h5" --resize 224 --mode $mode
    expect_rc 0
    check "$mode 224: auto differs from exact but by no less than 40 dB PSNR; default = auto"
    "$PYTHON" - "$TMP" "$mode" <<'PY' || fail "sample comparison ($mode)"
import sys, h5py, numpy as np
tmp, mode = sys.argv[1:3]
d = {k: h5py.File(f"{tmp}/{k}_{mode}.h5", "r")["data"][...] for k in ("auto", "default", "exact", "png")}
assert d["exact"].shape == (3, 3, 224, 224), d["exact"].shape
assert np.array_equal(d["exact"], d["png"]), "exact is not the full decode + resize"
assert np.array_equal(d["auto"], d["default"]), "the default is not auto"
for i in range(3):
    a, e = d["auto"][i].astype(float), d["exact"][i].astype(float)
    mse = np.mean((a - e) ** 2)
    assert mse > 0, f"sample {i}: auto is exact: nothing was scaled"
    p = 10 * np.log10(255 ** 2 / mse)
    print(f"sample {i}: auto vs exact {p:.2f} dB")
    assert p >= 40, f"sample {i}: {p:.2f} dB < 40"
PY
done

check "info shows the record of exact, and no record for auto (absent means auto)"
run "$DATACONV" info "$TMP/exact_crop.h5"
expect_rc 0
expect_out "^decode scale: exact$"
run "$DATACONV" info "$TMP/auto_crop.h5"
expect_rc 0
grep -q "decode scale" "$TMP/out" && fail "auto recorded a decode scale"

check "LMDB records exact too (libdata.json), and info prints it"
run "$DATACONV" "$TMP/big" "$TMP/exact.lmdb" --resize 224 --decode-scale exact
expect_rc 0
grep -q '"decode_scale": "exact"' "$TMP/exact.lmdb/libdata.json" || fail "no decode_scale in libdata.json"
run "$DATACONV" info "$TMP/exact.lmdb"
expect_rc 0
expect_out "^decode scale: exact$"

check "images under 2x the output (500x375 to 224), and no resize at all: exact and auto give the same samples"
mkdir -p "$TMP/a" "$TMP/e"
(cd "$TMP/a" && run "$DATACONV" "$LD_TEST_DATA/tree" out.h5 --resize 224 && expect_rc 0)
(cd "$TMP/e" && run "$DATACONV" "$LD_TEST_DATA/tree" out.h5 --resize 224 --decode-scale exact &&
    expect_rc 0)
"$PYTHON" - "$TMP" <<'PY' || fail "small images: auto differs from the default"
import sys, h5py, numpy as np
a, e = (h5py.File(f"{sys.argv[1]}/{k}/out.h5", "r")["data"][...] for k in ("a", "e"))
assert a.shape[0] > 0 and np.array_equal(a, e)
PY
run "$DATACONV" "$TMP/big" "$TMP/nr_auto.h5" --quality 90
expect_rc 0
run "$DATACONV" "$TMP/big" "$TMP/nr_exact.h5" --quality 90 --decode-scale exact
expect_rc 0
"$PYTHON" - "$TMP" <<'PY' || fail "no-resize comparison"
import sys, h5py, numpy as np
a, e = (h5py.File(f"{sys.argv[1]}/nr_{k}.h5", "r") for k in ("auto", "exact"))
assert np.array_equal(a["encoded"][...], e["encoded"][...]), "no resize: auto differs from exact"
assert "decode_scale" not in e.attrs, "no resize: exact recorded a decode scale"
PY

check "parts converted with exact and with auto do not merge"
mkdir -p "$TMP/p"
run "$DATACONV" "$TMP/big" "$TMP/p/out.h5" --resize 224 --shard 0/2 --decode-scale exact
expect_rc 0
run "$DATACONV" "$TMP/big" "$TMP/p/out.h5" --resize 224 --shard 1/2
expect_rc 0
run "$DATACONV" merge "$TMP/m.h5" "$TMP/p/out-00000-of-00002.h5" "$TMP/p/out-00001-of-00002.h5"
[ "$rc" -ne 0 ] || fail "parts of exact and auto merged"
[ ! -e "$TMP/m.h5" ] || fail "a refused merge wrote its output"
check "resuming an exact part with auto is refused, naming decode_scale"
run "$DATACONV" "$TMP/big" "$TMP/p/out.h5" --resize 224 --shard 0/2
[ "$rc" -ne 0 ] || fail "an exact part was resumed by an auto run"
expect_err "decode_scale"

check "a value that is neither auto nor exact is a usage error"
run "$DATACONV" "$TMP/big" "$TMP/x.h5" --resize 224 --decode-scale fast
[ "$rc" -ne 0 ] || fail "--decode-scale fast was accepted"
expect_err "auto"
echo "decode_scale: all checks passed"
