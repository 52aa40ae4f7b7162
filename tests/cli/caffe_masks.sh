#!/usr/bin/env bash
# Segmentation masks in Caffe (needs a Caffe build: CAFFE_ROOT, and libdata configured with
# -DLIBDATA_BUILD_CAFFE=ON; skipped otherwise): samples/caffe/run_seg.sh converts the
# segmentation sample (160 images, masks of 5 classes, 48x48 --mode pad, padding 255) and trains
# a tiny fully convolutional net (SoftmaxWithLoss { ignore_label: 255 }) 300 iterations four
# ways: stock HDF5Data on /label (N, 1, 48, 48), two stock Data layers on the LMDB pair (images
# + mask database), and the LibData layer on the .h5 and on the LMDB pair with a random 40x40
# crop and mirror. Each way's loss must fall and beat the best constant prediction (which masks
# out of step with their images could not), its pixel accuracy must beat the most frequent
# class's, and its label top must be batch x 1 x H x W (16 1 48 48, the LibData ways 16 1 40 40);
# the LibData layer's first batches, and stock HDF5Data's (in file order), must equal libdata's
# reader, every mask value included; and in the TRAIN phase the LibData layer's masks must get
# exactly their images' random crops and mirrors (run_seg.sh's seg_align: 100 iterations of a
# loss that is 0 only when they do).
set -euo pipefail
source "$(dirname "$0")/lib/caffe.sh"
export LIBDATA_CAFFE_LAYER=$LAYER CAFFE_FIRST_BATCH=$CHECK DATACONV
TMP=$(mktemp -d "${TMPDIR:-/tmp}/caffe-masks.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

set +e
bash "$SRC/samples/caffe/run_seg.sh" "$TMP/work" >"$TMP/out" 2>&1
rc=$?
set -e
cat "$TMP/out"
[ "$rc" -eq 0 ] || fail "run_seg.sh exited $rc"
for way in seg_hdf5 seg_lmdb seg_libdata seg_libdata_lmdb; do
    grep -q "^ok: $way: loss fell and beat the constant prediction" "$TMP/out" ||
        fail "$way: the loss did not fall below the constant prediction's"
    grep -q "^ok: $way: pixel accuracy above the most frequent class's" "$TMP/out" ||
        fail "$way: the pixel accuracy is not above the most frequent class's"
    grep -q "^ok: $way: label top 16 x 1 x " "$TMP/out" || fail "$way: no 16 x 1 x H x W label top"
done
# The label tops exactly: 16 x 1 x 48 x 48 for the stock layers, the 40x40 crop for LibData.
for way in seg_hdf5 seg_lmdb seg_libdata seg_libdata_lmdb; do
    part=$(awk "/^== $way:/ { on = 1; next } /^== / { on = 0 } on" "$TMP/out")
    case $way in
        seg_libdata*) want="Top shape: 16 1 40 40 (25600)" ;;
        *) want="Top shape: 16 1 48 48 (36864)" ;;
    esac
    grep -qxF "$want" <<<"$part" || fail "$way: its label top is not '$want'"
done
# The first batches, data and every mask value, equal libdata's reader (3 nets x 2 batches).
n=$(grep -c "masks 16 1 [0-9]* [0-9]* ([0-9]*) differing: 0 -> EQUAL$" "$TMP/out" || true)
[ "$n" -ge 6 ] || fail "expected at least 6 equal first batches with masks (3 nets x 2), got $n"
grep -q "DIFFERENT\|shape differs" "$TMP/out" && fail "a batch differs"
grep -q "^ok: seg_align: the masks got their images' crops and mirrors" "$TMP/out" ||
    fail "seg_align: the LibData layer's masks did not follow their images' crops and mirrors"
echo "ok: segmentation masks train four ways in Caffe, label tops 16 x 1 x H x W"
