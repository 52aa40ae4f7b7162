#!/usr/bin/env bash
# Detection boxes in Caffe (needs a Caffe build: CAFFE_ROOT, and libdata configured with
# -DLIBDATA_BUILD_CAFFE=ON; skipped otherwise). dataconv converts samples/shapes_coco.json with
# more boxes (caffe_boxes_check.py json: several per image, two of a class, crowds; 40 images
# without boxes) at 80x64 --mode pad (W x H: not square, so swapped x and y would show), then
# h5py marks every fifth box difficult. The LibData layer's label top must be SSD's
# AnnotatedData blob, 1 x 1 x M x 8 with M the batch's boxes:
#  - TEST phase, no crop: 22 batches of 8 (an epoch of 20 and two of the next), every row
#    against h5py on /boxes, /box_label, /box_flags, /box_offsets (caffe_boxes_check.py test),
#    including the batches without boxes (one row of -1, as SSD's layer gives);
#  - TRAIN phase, random 56x56 crop and mirror: 20 batches against libdata's reader with the
#    layer's seed (caffe_first_batch --train: equal pixels, so the same crops and mirrors, and
#    every box row equal).
# caffe_first_batch also checks each batch's shape and rows against the reader in both phases;
# then Caffe's caffe tool runs the TRAIN net (caffe time), the layer LD_PRELOAD'ed; and a file
# with boxes and masks as its label (h5py) gives the boxes as the label, the masks as a third top.
source "$(dirname "$0")/lib/caffe.sh"
PYTHON=${PYTHON:-/usr/bin/python3} # with numpy and h5py
chk=$SRC/tests/cli/lib/caffe_boxes_check.py
TMP=$(mktemp -d "${TMPDIR:-/tmp}/caffe-boxes.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
if ! "$DATACONV" --version | grep -q " coco"; then
    echo "skipped: dataconv was built without COCO input (libyajl)"
    exit 77
fi
cd "$TMP"
"$PYTHON" "$chk" json "$SRC/samples/shapes_coco.json" det.json
"$DATACONV" -q --coco det.json --root "$SRC/samples/images" det.h5 --resize 80x64 --mode pad ||
    fail "dataconv --coco failed"
"$PYTHON" "$chk" difficult det.h5
net() { # net PHASE_TRANSFORM: a net of the LibData layer alone, data and label tops
    printf 'name: "boxes"\nlayer {\n  name: "data" type: "LibData" top: "data" top: "label"\n'
    printf '  data_param { source: "det.h5" batch_size: 8 }\n'
    printf '  transform_param { scale: 0.00390625 %s }\n}\n' "$1"
}
net "" >test.prototxt
net "crop_size: 56 mirror: true" >train.prototxt

echo "== TEST phase, no crop: 22 batches vs h5py"
set +e
LD_PRELOAD="$PRELOAD" GLOG_minloglevel=1 "$CHECK" --rows test.rows test.prototxt 22 >test.out 2>&1
rc=$?
set -e
cat test.out
# h5py's verdict first, so that a failure shows both
"$PYTHON" "$chk" test det.h5 test.rows 8 || fail "TEST phase: the label tops differ from h5py's"
[ "$rc" -eq 0 ] || fail "caffe_first_batch (TEST phase) exited $rc: Caffe's batches differ"
n=$(grep -c " -> EQUAL$" test.out || true)
[ "$n" -eq 22 ] || fail "TEST phase: $n of 22 batches equal the reader"
grep -q "boxes 1 1 1 8 (8) (0 in the batch" test.out ||
    fail "TEST phase: no batch without boxes as 1 x 1 x 1 x 8"

echo "== TRAIN phase, random 56x56 crop + mirror: 20 batches vs libdata's reader"
set +e
LD_PRELOAD="$PRELOAD" GLOG_minloglevel=1 "$CHECK" --train 5 --rows train.rows train.prototxt 20 \
    >train.out 2>&1
rc=$?
set -e
cat train.out
[ "$rc" -eq 0 ] || fail "caffe_first_batch --train exited $rc: Caffe's batches differ"
n=$(grep -c "data 8 3 56 56 (75264) .* boxes 1 1 [0-9]* 8 .* -> EQUAL$" train.out || true)
[ "$n" -eq 20 ] || fail "TRAIN phase: $n of 20 batches of 8 x 3 x 56 x 56 equal the reader"
"$PYTHON" "$chk" train train.rows || fail "TRAIN phase: implausible rows"
echo "== caffe time -phase TRAIN: the caffe tool runs the net (the label top set up as 1 1 1 8)"
LD_PRELOAD="$PRELOAD" GLOG_logtostderr=1 "$CAFFE" time -model train.prototxt -phase TRAIN \
    -iterations 5 >time.log 2>&1 || { tail -n 20 time.log; fail "caffe time failed"; }
grep -E "Top shape|Average Forward pass" time.log | sed 's/^.*\] //'
grep -q "Top shape: 1 1 1 8 (8)$" time.log || fail "caffe time: no 1 x 1 x 1 x 8 label top"
echo "== boxes and masks (/label (N, 1, H, W)): the label top is the boxes, the masks a third top"
"$PYTHON" "$chk" masks det.h5 both.h5
sed -e 's/det.h5/both.h5/' -e 's/top: "label"/top: "label" top: "mask"/' train.prototxt >both.prototxt
LD_PRELOAD="$PRELOAD" GLOG_minloglevel=1 "$CHECK" both.prototxt 2 >both.out 2>&1 ||
    { cat both.out; fail "boxes and masks: the tops differ from the reader's"; }
cat both.out
n=$(grep -c "boxes 1 1 [0-9]* 8 .* masks 8 1 56 56 (25088) differing: 0 -> EQUAL$" both.out || true)
[ "$n" -eq 2 ] || fail "boxes and masks: $n of 2 batches with box rows and masks equal"
echo "ok: the LibData layer's box label tops are SSD's 1 x 1 x M x 8, equal to h5py (TEST) and" \
     "to the reader (TRAIN)"
