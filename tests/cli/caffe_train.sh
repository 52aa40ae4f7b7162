#!/usr/bin/env bash
# Caffe integration, end to end (needs a Caffe build: CAFFE_ROOT, and libdata configured with
# -DLIBDATA_BUILD_CAFFE=ON): samples/caffe/run_all.sh trains the tiny net 100 iterations three
# ways (LibData layer on .h5/.lmdb, stock Data on our LMDB, stock HDF5Data on --split output);
# the loss must fall each way and each net's first test batches must equal libdata's reader.
set -euo pipefail
source "$(dirname "$0")/lib/caffe.sh"
export LIBDATA_CAFFE_LAYER=$LAYER CAFFE_FIRST_BATCH=$CHECK DATACONV
TMP=$(mktemp -d "${TMPDIR:-/tmp}/caffe-train.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

set +e
bash "$SRC/samples/caffe/run_all.sh" "$TMP/work" >"$TMP/out" 2>&1
rc=$?
set -e
cat "$TMP/out"
[ "$rc" -eq 0 ] || fail "run_all.sh exited $rc"
for way in libdata data_lmdb hdf5; do
    grep -q "^ok: $way: mean loss" "$TMP/out" || fail "$way: no falling loss"
done
n=$(grep -c "EQUAL$" "$TMP/out" || true)
[ "$n" -ge 6 ] || fail "expected at least 6 equal first batches (3 ways x 2), got $n"
grep -q "DIFFERENT" "$TMP/out" && fail "a batch differs"
if grep -q "^== mean_file" "$TMP/out"; then
    n=$(grep -c "^ok: dataconv mean .* = compute_image_mean" "$TMP/out" || true)
    [ "$n" -eq 2 ] || fail "expected dataconv mean = compute_image_mean for train.lmdb and train.h5"
fi
echo "ok: three ways train, first batches equal libdata's reader"
