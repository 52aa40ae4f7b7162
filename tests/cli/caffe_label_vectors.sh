#!/usr/bin/env bash
# Label vectors in Caffe (needs a Caffe build: CAFFE_ROOT, and libdata configured with
# -DLIBDATA_BUILD_CAFFE=ON; skipped otherwise): samples/caffe/run_labels.sh trains a tiny net
# 200 iterations five ways on dataconv's label-vector output, K = 3: stock HDF5Data on /label
# (N, 3) with EuclideanLoss and (int32 0/1) with SigmoidCrossEntropyLoss, two stock Data layers
# on the LMDB pair (images + label database) with EuclideanLoss, and the LibData layer on the
# .h5 and on the LMDB pair. Each way's loss must fall and beat the best constant prediction
# (which labels out of step with their images could not), and each way's label top must be
# 64 x 3 (the LibData layer's "Top shape: 64 3 (192)", as HDF5Data's), and the LibData
# layer's first batches must equal libdata's reader, all n x K label values included.
set -euo pipefail
source "$(dirname "$0")/lib/caffe.sh"
export LIBDATA_CAFFE_LAYER=$LAYER CAFFE_FIRST_BATCH=$CHECK DATACONV
TMP=$(mktemp -d "${TMPDIR:-/tmp}/caffe-labels.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

set +e
bash "$SRC/samples/caffe/run_labels.sh" "$TMP/work" >"$TMP/out" 2>&1
rc=$?
set -e
cat "$TMP/out"
[ "$rc" -eq 0 ] || fail "run_labels.sh exited $rc"
for way in regression_hdf5 regression_lmdb multilabel_hdf5 libdata_h5 libdata_lmdb; do
    grep -q "^ok: $way: loss fell and beat the constant prediction" "$TMP/out" ||
        fail "$way: the loss did not fall below the constant prediction's"
    grep -q "^ok: $way: label top 64 x 3" "$TMP/out" || fail "$way: no 64 x 3 label top"
done
# The LibData layer's label top is batch x K exactly (not 64 x 3 x 1 x 1 nor 64 x 1).
for way in libdata_h5 libdata_lmdb; do
    part=$(awk "/^== $way:/ { on = 1; next } /^== / { on = 0 } on" "$TMP/out")
    grep -qx "Top shape: 64 3 (192)" <<<"$part" || fail "$way: its label top is not 64 3 (192)"
done
# Their first batches, data and every label value, equal libdata's reader (2 ways x 2 batches).
n=$(grep -c "EQUAL$" "$TMP/out" || true)
[ "$n" -ge 4 ] || fail "expected at least 4 equal first batches (2 LibData ways x 2), got $n"
grep -q "DIFFERENT\|label shape differs" "$TMP/out" && fail "a batch differs"
echo "ok: label vectors train five ways in Caffe, label tops 64 x 3"
