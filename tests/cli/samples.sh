#!/usr/bin/env bash
# The demo set in samples/ converts: folder mode (160 images, 4 classes), the train/val
# lists, and variable-size JPEG storage with --max-side.
source "$(dirname "$0")/lib/common.sh"

s=$SRC/samples
[ -d "$s/images" ] || fail "no $s/images (run samples/make_samples.py)"

check "dataconv samples/images/ samples.h5 --resize 64: 160 samples, 4 classes"
run "$DATACONV" "$s/images/" "$TMP/samples.h5" --resize 64
expect_rc 0
expect_err "converted 160 of 160"
"$PYTHON" - "$TMP/samples.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    assert f["data"].shape == (160, 3, 64, 64), f["data"].shape
    names = [n.decode() if isinstance(n, bytes) else n for n in f.attrs["class_names"]]
    assert names == ["circle", "square", "stripes", "triangle"], names
    assert np.bincount(f["label"][:]).tolist() == [40, 40, 40, 40]
PY

check "train.txt and val.txt (convert_imageset order, HDF5 names): 128 + 32"
run "$DATACONV" "$s/images/" "$s/train.txt" "$TMP/train.h5" --resize 64
expect_rc 0
expect_err "converted 128 of 128"
run "$DATACONV" --list "$s/val.txt" --root "$s/images" "$TMP/val.h5" --resize 64
expect_rc 0
expect_err "converted 32 of 32"

check "--max-side 128 --quality 80: variable sizes, longer side <= 128, never enlarged"
run "$DATACONV" "$s/images/" "$TMP/var.h5" --max-side 128 --quality 80
expect_rc 0
"$PYTHON" - "$TMP/var.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    shp = f["shape"][:]
    assert len(shp) == 160
    assert max(int(s[1:].max()) for s in shp) == 128, shp[:5]
    assert any(int(s[1:].max()) == 64 for s in shp), "64x64 images must not be enlarged"
    assert len({tuple(s) for s in shp}) > 3, "expected several sizes"
PY
check "shapes.csv (regression sample): make_samples.py writes it again the same; every shape lies"
check "inside its picture (centre at least a radius from each edge, radius 0.2-0.42 of the side)"
"$PYTHON" "$s/make_samples.py" "$TMP/again" >/dev/null
cmp "$s/shapes.csv" "$TMP/again/shapes.csv" || fail "make_samples.py no longer writes shapes.csv"
run "$DATACONV" --list "$s/shapes.csv" --root "$s/images" "$TMP/shapes.h5" --resize 64
expect_rc 0
expect_err "converted 120 of 120"
"$PYTHON" - "$TMP/shapes.h5" "$s" <<'PY'
import csv, sys, h5py, numpy as np
from PIL import Image
rows = list(csv.reader(open(f"{sys.argv[2]}/shapes.csv")))
with h5py.File(sys.argv[1], "r") as f:
    lab = f["label"][:]
    assert lab.shape == (120, 3) and lab.dtype == np.float32, (lab.shape, lab.dtype)
    assert list(f.attrs["label_names"]) == rows[0][1:]
assert np.allclose(lab, np.array([[float(v) for v in r[1:]] for r in rows[1:]], np.float32))
for (path, *_), (x, y, r) in zip(rows[1:], lab):
    w, h = Image.open(f"{sys.argv[2]}/images/{path}").size
    rad, tol = r * min(w, h), 1e-3 * max(w, h)  # (4 decimals in the file)
    assert 0.2 - 1e-3 <= r <= 0.42 + 1e-3, (path, r)
    assert rad - tol <= x * w <= w - rad + tol and rad - tol <= y * h <= h - rad + tol, (path, x, y, r)
print("shapes.csv: 120 rows, every shape inside its picture")
PY
check "seg.txt + masks/ (segmentation sample): make_samples.py writes the same masks again; each"
check "mask holds its picture's class + 1 on the shape and 0 around it, and PNG pictures agree"
cmp "$s/seg.txt" "$TMP/again/seg.txt" || fail "make_samples.py no longer writes seg.txt"
diff -r "$s/masks" "$TMP/again/masks" >/dev/null || fail "make_samples.py no longer writes masks/"
run "$DATACONV" --list "$s/seg.txt" --root "$s/images" --masks "$s/masks" "$TMP/seg.h5" \
    --resize 64 --mode pad
expect_rc 0
expect_err "converted 160 of 160"
"$PYTHON" - "$TMP/seg.h5" "$s" <<'PY'
import sys, h5py, numpy as np
from PIL import Image
classes = ["circle", "square", "stripes", "triangle"]
with h5py.File(sys.argv[1], "r") as f:
    m, names = f["label"][:], [n.decode() for n in f["filename"][:]]
assert m.shape == (160, 1, 64, 64) and m.dtype == np.uint8, (m.shape, m.dtype)
agree = 0
for i, p in enumerate(names):
    assert set(np.unique(m[i]).tolist()) - {0, 255} == {classes.index(p.split("/")[0]) + 1}, p
    src = np.asarray(Image.open(f"{sys.argv[2]}/masks/{p.rsplit('.', 1)[0]}.png"))
    img = Image.open(f"{sys.argv[2]}/images/{p}")
    if p.endswith(".png") and img.mode == "RGB":  # no noise, no palette: shape = one colour
        px = np.asarray(img).reshape(-1, 3)
        fg = {tuple(c) for c in px[src.reshape(-1) > 0]}
        assert len(fg) == 1, (p, len(fg))
        agree += 1
print(f"seg.txt: 160 masks of the right class; {agree} RGB PNG pictures one colour on the mask")
PY
check "shapes_coco.json (detection sample): written again the same; each box is its mask's extent"
cmp "$s/shapes_coco.json" "$TMP/again/shapes_coco.json" || fail "make_samples.py no longer writes it"
run "$DATACONV" --coco "$s/shapes_coco.json" --root "$s/images" "$TMP/det.h5" --encoded
expect_rc 0
expect_err "boxes     120 written, 0 cropped away"
"$PYTHON" - "$TMP/det.h5" "$s" <<'PY'
import sys, h5py, numpy as np
from PIL import Image
with h5py.File(sys.argv[1], "r") as f:
    b, off = f["boxes"][:], f["box_offsets"][:]
    names = [n.decode() for n in f["filename"][:]]
for i, p in enumerate(names):
    m = np.asarray(Image.open(f"{sys.argv[2]}/masks/{p.rsplit('.', 1)[0]}.png"))
    if p.startswith("stripes/"):
        assert off[i + 1] == off[i], p
        continue
    ys, xs = np.nonzero(m)
    assert np.array_equal(b[off[i]:off[i + 1]], [[xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]]), p
print("shapes_coco.json: 120 boxes, each its mask's extent (--encoded: the files as they are)")
PY
echo "samples: all checks passed"
