#!/usr/bin/env bash
# Detection boxes (issue 28): COCO instances JSON and Pascal VOC XML inputs become HDF5 /boxes
# (M, 4), /box_label, /box_flags, /box_offsets (N + 1) that follow each image's EXIF orientation
# and resize (NumPy on the annotation files, 1e-3 px), keep their classes and ids, survive
# shards and merge; the reader moves them with the image under crop + mirror and random resized
# crop (NumPy on the stored boxes, the crop found from the pixels, the RRC box from
# Reader.crop_box), also for another tool's file (h5py); torch gets torchvision's detection
# targets (tests/cli/lib/boxes_check.py).
source "$(dirname "$0")/lib/common.sh"
chk=$SRC/tests/cli/lib/boxes_check.py
py() { (cd "$TMP" && "$PYTHON" "$chk" "$@"); } # h5py only, no libdata

check "an h5py detection file: the reader's boxes under crop + mirror and random resized crop"
py h5 "$TMP/det.h5"
libpy "$chk" reader "$TMP/det.h5"
run "$DATACONV" info "$TMP/det.h5"
expect_rc 0
expect_out "labels int32, boxes"

check "a damaged /box_offsets is refused at open, naming it"
"$PYTHON" - "$TMP/det.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "a") as f:
    off = f["box_offsets"][:]
    off[3] = off[-1] + 5
    f["box_offsets"][...] = off
PY
run "$DATACONV" bench "$TMP/det.h5"
expect_rc 1
expect_err "box_offsets entry 3"
if ! "$DATACONV" --version | grep -q " coco voc"; then
    echo "skip: dataconv was built without COCO/VOC input (libyajl, libxml2)"
    exit 0
fi
check "COCO instances JSON (annotations first, ids 3/7/11, crowd flags, EXIF-turned photos):"
check "/boxes equal the JSON's boxes under each resize mode (NumPy, 1e-3 px), /box_label the"
check "classes' indices, box_class_ids the JSON's category ids; no /label"
py coco "$TMP/c" "$LD_TEST_DATA/photos"
for mode in squash crop pad; do
    run "$DATACONV" --coco "$TMP/c/instances.json" --root "$TMP/c/images" "$TMP/coco_$mode.h5" \
        --resize 96x64 --mode "$mode"
    expect_rc 0
    expect_err "converted 12 of 12"
    py stored "$TMP/coco_$mode.h5" "$TMP/c" coco 96 64 "$mode"
done
expect_err "boxes .* written, .* cropped away"
libpy "$chk" reader "$TMP/coco_crop.h5"

check "Pascal VOC (1-based XML pixels, an ImageSets list of 9 of the 12)"
run "$DATACONV" --voc "$TMP/c/voc" --list "$TMP/c/voc/ImageSets/Main/train.txt" "$TMP/voc.h5" \
    --resize 80x80 --mode crop
expect_rc 0
expect_err "converted 9 of 9"
py stored "$TMP/voc.h5" "$TMP/c" voc 80 80 crop
run "$DATACONV" info "$TMP/voc.h5"
expect_out "box classes: 20: aeroplane, bicycle"

check "shards and merge: the merged dataset's boxes equal one run's (offsets shifted per part)"
for k in 0 1 2; do
    run "$DATACONV" --coco "$TMP/c/instances.json" --root "$TMP/c/images" "$TMP/sh.h5" \
        --resize 96x64 --mode crop --shard $k/3
    expect_rc 0
done
run "$DATACONV" merge "$TMP/merged.h5" "$TMP"/sh-0000?-of-00003.h5
expect_rc 0
"$PYTHON" - "$TMP/merged.h5" "$TMP/coco_crop.h5" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
for k in ("boxes", "box_label", "box_flags", "box_offsets", "data"):
    assert np.array_equal(a[k][:], b[k][:]), k
assert a["boxes"].is_virtual and not a["box_offsets"].is_virtual
PY
libpy "$chk" reader "$TMP/merged.h5"

check "--split: each file its own boxes and offsets; the list reads as the single file"
run "$DATACONV" --coco "$TMP/c/instances.json" --root "$TMP/c/images" "$TMP/spl.h5" \
    --resize 96x64 --mode crop --split 40K
expect_rc 0
libpy - "$TMP/spl.txt" "$TMP/coco_crop.h5" <<'PY'
import sys, h5py, numpy as np
import libdata
with h5py.File(sys.argv[2], "r") as f:
    off, bx, lab = f["box_offsets"][:], f["boxes"][:], f["box_label"][:]
n = len(open(sys.argv[1]).read().split())
assert n > 1, "not split"
with libdata.Reader(sys.argv[1], batch_size=12) as r:
    x, t = next(iter(r))
for j in range(12):
    assert np.array_equal(t[j]["boxes"], bx[off[j]:off[j + 1]]), j
    assert np.array_equal(t[j]["labels"], lab[off[j]:off[j + 1]]), j
print(f"  {n} files: every sample's boxes equal the single file's")
PY

check "LMDB output refuses boxes, saying where they go"
run "$DATACONV" --coco "$TMP/c/instances.json" --root "$TMP/c/images" "$TMP/x.lmdb" --resize 32
expect_rc 1
expect_err "give an .h5 output"
[ ! -e "$TMP/x.lmdb" ] || fail "a refused run left $TMP/x.lmdb"
echo "boxes: all checks passed"
