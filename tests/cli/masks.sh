#!/usr/bin/env bash
# Segmentation masks (issue 28): --masks DIR gives each image the mask DIR/REL/name.png, kept as
# class indices (palette indices, gray values, 16-bit values that fit a byte), turned by the
# image's EXIF orientation and resized with its geometry by nearest sampling. Checked with h5py
# against Pillow's NEAREST on the same geometry, on flat-colour images whose pixels name their
# own region, and through the reader (crop + mirror, random resized crop) against the crop found
# independently (tests/cli/lib/masks_check.py).
source "$(dirname "$0")/lib/common.sh"
chk=$SRC/tests/cli/lib/masks_check.py
d=$TMP/seg
"$PYTHON" "$chk" make "$d" "$LD_TEST_DATA/photos"

check "an unlabelled list: the masks are /label (N, 1, H, W) uint8, for every resize mode"
for mode in squash crop pad; do
    run "$DATACONV" --list "$d/list.txt" --root "$d/img" --masks "$d/masks" "$TMP/$mode.h5" \
        --resize 64x48 --mode "$mode" --mask-pad 250
    expect_rc 0
    expect_err "converted 13 of 13"
    "$PYTHON" "$chk" stored "$TMP/$mode.h5" "$d" 64 48 "$mode" 250
done
"$PYTHON" - "$TMP/pad.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
assert "mask" not in f and f["label"].shape == (13, 1, 48, 64), list(f)
assert f["label"].dtype == "uint8" and f.attrs["mask_pad"] == 250, dict(f.attrs)
PY

check "the reader: masks cropped, mirrored and random-resized-cropped with their images"
libpy "$chk" reader "$TMP/crop.h5" "$d"

check "torch: masks as int64 (B, H, W), the image's crop and mirror (skipped without torch)"
libpy - "$TMP/crop.h5" <<'PY' ||
import sys
try:
    import torch
except ImportError:
    print("  skip: no torch"); sys.exit(0)
import numpy as np
import libdata
from libdata.torch import Dataset
from torch.utils.data import DataLoader
ds = Dataset(sys.argv[1], batch_size=4, shuffle=True, crop=(50, 40), random_crop=True,
             mirror=True, seed=3)
r = libdata.Reader(sys.argv[1], batch_size=4, shuffle=True, crop=(50, 40), random_crop=True,
                   mirror=True, seed=3)
for (x, y), (d, m) in zip(DataLoader(ds, batch_size=None), r):
    assert y.dtype == torch.int64 and tuple(y.shape) == (len(d), 40, 50), y.shape
    assert np.array_equal(y.numpy(), m[:, 0]) and np.array_equal(x.numpy(), d)
print(f"  torch: {len(ds)} batches of int64 masks equal to the reader's")
PY
    fail "torch masks"

check "another tool's file (h5py): deflated /mask beside /label, read through HDF5, cropped too"
libpy - "$TMP/other.h5" <<'PY'
import sys, h5py, numpy as np
import libdata
rng = np.random.default_rng(7)
d = rng.integers(0, 256, (9, 3, 12, 10), dtype=np.uint8)
m = rng.integers(0, 6, (9, 1, 12, 10), dtype=np.uint8)
with h5py.File(sys.argv[1], "w") as f:
    f["data"] = d
    f["label"] = np.arange(9, dtype=np.int32)
    f.create_dataset("mask", data=m, chunks=(2, 1, 12, 10), compression="gzip")
with libdata.Reader(sys.argv[1], batch_size=4, shuffle=True, crop=(8, 8), random_crop=True,
                    mirror=True, seed=1) as r:
    assert r.info.fields == ("data", "label", "mask"), r.info.fields
    for x, y, mm in r:
        for j, i in enumerate(r.indices):
            assert y[j] == i
            hits = [(a, b, fl) for fl in (0, 1) for a in range(5) for b in range(3)
                    if np.array_equal((d[i][..., ::-1] if fl else d[i])[:, a:a + 8, b:b + 8], x[j])]
            assert len(hits) == 1, hits
            a, b, fl = hits[0]
            assert np.array_equal((m[i][..., ::-1] if fl else m[i])[:, a:a + 8, b:b + 8], mm[j])
print("  9 masks of a deflated h5py /mask follow their images' crops and mirrors")
PY

check "LMDB: the images in OUT, the masks in OUT-masks (1 x H x W Datums, the same keys)"
run "$DATACONV" --list "$d/list.txt" --root "$d/img" --masks "$d/masks" "$TMP/seg.lmdb" \
    --resize 56x40 --mode crop
expect_rc 0
[ -d "$TMP/seg-masks.lmdb" ] || fail "no $TMP/seg-masks.lmdb"
"$PYTHON" "$chk" stored "$TMP/seg.lmdb" "$d" 56 40 crop
libpy "$chk" reader "$TMP/seg.lmdb" "$d"
mdb_stat "$TMP/seg-masks.lmdb" | grep -q "Entries: 13" || fail "mdb_stat: not 13 masks"

check "shards and merge keep the masks: the merged dataset equals one run's (HDF5 and LMDB)"
for ext in h5 lmdb; do
    for k in 0 1 2; do
        run "$DATACONV" --list "$d/list.txt" --root "$d/img" --masks "$d/masks" \
            "$TMP/sh.$ext" --resize 64x48 --mode crop --shard $k/3
        expect_rc 0
    done
    run "$DATACONV" merge "$TMP/merged.$ext" "$TMP"/sh-0000?-of-00003.$ext
    expect_rc 0
    "$PYTHON" "$chk" stored "$TMP/merged.$ext" "$d" 64 48 crop
done
"$PYTHON" - "$TMP/merged.h5" "$TMP/crop.h5" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
assert a["label"].is_virtual and np.array_equal(a["label"][:], b["label"][:])
assert np.array_equal(a["data"][:], b["data"][:])
PY
libpy "$chk" reader "$TMP/merged.h5" "$d"
libpy "$chk" reader "$TMP/merged.lmdb" "$d"

check "class folders: /label keeps the classes, the masks are /mask"
run "$DATACONV" "$d/img" "$TMP/cls.h5" --masks "$d/masks" --resize 40x40
expect_rc 0
"$PYTHON" - "$TMP/cls.h5" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
assert f["label"].shape == (13,) and f["mask"].shape == (13, 1, 40, 40), list(f)
assert sorted(set(f["label"][:].tolist())) == [0, 1]
PY
"$PYTHON" "$chk" stored "$TMP/cls.h5" "$d" 40 40 squash
run "$DATACONV" info "$TMP/cls.h5"
expect_out "masks: uint8 class indices, 1 x 40 x 40 per sample, /mask"

check "a missing, an RGB and a wrongly sized mask: each image skipped and named; --strict stops"
rm "$d/masks/flat/s1.png"
"$PYTHON" - "$d" <<'PY'
import sys
from PIL import Image
d = sys.argv[1]
Image.new("RGB", (101, 77), (10, 20, 30)).save(f"{d}/masks/flat/s1x.png")
Image.open(f"{d}/img/flat/s2.png").save(f"{d}/masks/flat/s2.png")            # RGB
Image.new("L", (10, 10)).save(f"{d}/masks/flat/s3.png")                     # 10x10
PY
run "$DATACONV" --list "$d/list.txt" --root "$d/img" --masks "$d/masks" "$TMP/bad.h5" --resize 32
expect_rc 0
expect_err "converted 10 of 13"
expect_err "masks/flat/s1.png"
expect_err "an RGB mask"
expect_err "must have its image's size"
run "$DATACONV" --list "$d/list.txt" --root "$d/img" --masks "$d/masks" "$TMP/strict.h5" \
    --resize 32 --strict
expect_rc 1 # a missing file is an I/O error, as for an image (exit 3 is for a bad file)
expect_err "its mask: .*masks/flat/s1.png: cannot open.*(stopped: strict)"
[ ! -e "$TMP/strict.h5" ] || fail "--strict left $TMP/strict.h5"
run "$DATACONV" --list "$d/list.txt" --root "$d/img" --masks "$TMP/nowhere" "$TMP/x.h5" --resize 32
expect_rc 1
expect_err "is not a folder"
run "$DATACONV" --list "$d/list.txt" --root "$d/img" --masks "$d/masks" "$TMP/x.h5" --max-side 32
expect_rc 1
expect_err "resize_mode max"
check "uint16 masks (--mask-type uint16): 16-bit values kept through every path"
# The same images; the masks now 16-bit gray PNGs with values up to 65535 (one stays an 8-bit
# palette PNG: its indices, widened). Without --mask-type uint16 each 16-bit mask is refused
# naming its value; with it, HDF5 /label is uint16 and the LMDB mask database float_data.
w=$TMP/wide
MASKS_WIDE=1 "$PYTHON" "$chk" make "$w" "$LD_TEST_DATA/photos"
run "$DATACONV" --list "$w/list.txt" --root "$w/img" --masks "$w/masks" "$TMP/w8.h5" --resize 32
expect_rc 0
expect_err "converted 1 of 13"
expect_err "class index 40000 at pixel .*mask_type uint16"
run "$DATACONV" --list "$w/list.txt" --root "$w/img" --masks "$w/masks" "$TMP/w8.h5" --resize 32 \
    --mask-pad 300
expect_rc 1
expect_err "mask_pad 300 does not fit uint8 masks"
for mode in crop pad; do
    run "$DATACONV" --list "$w/list.txt" --root "$w/img" --masks "$w/masks" "$TMP/w$mode.h5" \
        --resize 64x48 --mode $mode --mask-type uint16 --mask-pad 65534
    expect_rc 0
    expect_err "converted 13 of 13"
    MASKS_WIDE=1 "$PYTHON" "$chk" stored "$TMP/w$mode.h5" "$w" 64 48 $mode 65534
done
"$PYTHON" - "$TMP/wpad.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
assert f["label"].dtype == "uint16" and f["label"].shape == (13, 1, 48, 64), f["label"]
assert f.attrs["mask_pad"] == 65534 and f["label"][:].max() == 65535, dict(f.attrs)
PY
run "$DATACONV" info "$TMP/wcrop.h5"
expect_out "masks: uint16 class indices, 1 x 48 x 64 per sample"
MASKS_WIDE=1 libpy "$chk" reader "$TMP/wcrop.h5" "$w"
libpy - "$TMP/wcrop.h5" <<'PY' ||
import sys
try:
    import torch
except ImportError:
    print("  skip: no torch"); sys.exit(0)
import numpy as np
import libdata
from libdata.torch import Dataset
from torch.utils.data import DataLoader
kw = dict(batch_size=4, shuffle=True, crop=(50, 40), random_crop=True, mirror=True, seed=3)
r = libdata.Reader(sys.argv[1], **kw)
assert r.info.mask_dtype == np.uint16, r.info
n = 0
for (x, y), (d, m) in zip(DataLoader(Dataset(sys.argv[1], **kw), batch_size=None), r):
    assert y.dtype == torch.int64 and np.array_equal(y.numpy(), m[:, 0].astype(np.int64))
    n += int((y > 255).sum())
assert n > 0, "no value above 255 reached torch"
print(f"  torch: int64 masks equal the reader's uint16 ones ({n} values above 255)")
PY
    fail "torch uint16 masks"
libpy - "$TMP/other16.h5" <<'PY'
import sys, h5py, numpy as np
import libdata
rng = np.random.default_rng(8)
d = rng.integers(0, 256, (7, 3, 12, 10), dtype=np.uint8)
m = rng.integers(0, 65536, (7, 1, 12, 10), dtype=np.uint16)
for how in ("gzip", ">u2"):  # deflated little-endian; big-endian, contiguous
    with h5py.File(sys.argv[1], "w") as f:
        f["data"] = d
        if how == "gzip":
            f.create_dataset("label", data=m, chunks=(2, 1, 12, 10), compression="gzip")
        else:
            f.create_dataset("label", data=m.astype(">u2"))
    assert libdata.stat(sys.argv[1]).mask_dtype == np.uint16
    with libdata.Reader(sys.argv[1], batch_size=3, mirror=True, seed=2) as r:
        assert r.info.fields == ("data", "label"), r.info.fields
        for x, mm in r:
            for j, i in enumerate(r.indices):
                fl = not np.array_equal(d[i], x[j])
                assert mm.dtype == np.uint16
                assert np.array_equal((m[i][..., ::-1] if fl else m[i]), mm[j]), (how, i)
print("  h5py uint16 masks (deflated; big-endian) read through HDF5 follow their mirrors")
PY
run "$DATACONV" --list "$w/list.txt" --root "$w/img" --masks "$w/masks" "$TMP/wseg.lmdb" \
    --resize 56x40 --mode crop --mask-type uint16
expect_rc 0
MASKS_WIDE=1 "$PYTHON" "$chk" stored "$TMP/wseg.lmdb" "$w" 56 40 crop
MASKS_WIDE=1 libpy "$chk" reader "$TMP/wseg.lmdb" "$w"
for ext in h5 lmdb; do
    for k in 0 1; do
        run "$DATACONV" --list "$w/list.txt" --root "$w/img" --masks "$w/masks" \
            "$TMP/wsh.$ext" --resize 64x48 --mode crop --mask-type uint16 --shard $k/2
        expect_rc 0
    done
    run "$DATACONV" merge "$TMP/wmerged.$ext" "$TMP"/wsh-0000?-of-00002.$ext
    expect_rc 0
    MASKS_WIDE=1 "$PYTHON" "$chk" stored "$TMP/wmerged.$ext" "$w" 64 48 crop
    MASKS_WIDE=1 libpy "$chk" reader "$TMP/wmerged.$ext" "$w"
done
echo "masks: all checks passed"
