#!/usr/bin/env bash
# Caffe integration, failures (needs CAFFE_ROOT and the LibData layer built): a libdata error
# becomes a Caffe fatal message carrying libdata's own message, not a crash or a C++ exception.
set -euo pipefail
source "$(dirname "$0")/lib/caffe.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/caffe-errors.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
check() { echo "check: $*"; }
show() { echo "--- stderr:" >&2; cat "$TMP/err" >&2; echo "---" >&2; }
# net SOURCE BATCH CROP: a net with one LibData layer (TRAIN) and a sink for its tops
net() {
    cat >"$TMP/net.prototxt" <<NET
name: "errors"
layer {
  name: "data" type: "LibData" top: "data" top: "label"
  data_param { source: "$1" batch_size: $2 }
  transform_param { crop_size: $3 }
}
layer { name: "sink" type: "Silence" bottom: "data" bottom: "label" }
NET
}
# caffe_time: runs `caffe time` on the net (builds it in TRAIN and runs forward/backward)
caffe_time() {
    set +e
    LD_PRELOAD="$PRELOAD" GLOG_logtostderr=1 "$CAFFE" time -model "$TMP/net.prototxt" \
        -iterations 2 >"$TMP/out" 2>"$TMP/err"
    rc=$?
    set -e
}

"$DATACONV" -q "$SRC/samples/images/" "$TMP/s.h5" --resize 32

check "the layer loads (LD_PRELOAD) and reads: caffe time succeeds"
net "$TMP/s.h5" 16 28
caffe_time
[ "$rc" -eq 0 ] || { show; fail "caffe time exited $rc"; }
grep -q "LibData layer 'data' (TRAIN" "$TMP/err" || { show; fail "no LibData setup line"; }

check "a missing source: fatal, naming the path, with libdata's message"
net "$TMP/missing.h5" 16 0
caffe_time
[ "$rc" -ne 0 ] || fail "caffe time succeeded on a missing file"
grep -q "LibData layer 'data': cannot open data_param.source: .*$TMP/missing.h5" "$TMP/err" ||
    { show; fail "no fatal message carrying libdata's message"; }

check "a crop larger than the images: libdata's parameter check, as a Caffe fatal error"
net "$TMP/s.h5" 16 40
caffe_time
[ "$rc" -ne 0 ] || fail "caffe time succeeded with crop 40 on 32x32 images"
grep -q "LibData layer 'data': cannot open data_param.source: .*(invalid argument)" "$TMP/err" ||
    { show; fail "no fatal message for the crop"; }

check "batch larger than the dataset (TRAIN drops short batches): libdata's message"
net "$TMP/s.h5" 1000 0
caffe_time
[ "$rc" -ne 0 ] || fail "caffe time succeeded with batch 1000 on 160 samples"
grep -q "no full batch of 1000" "$TMP/err" || { show; fail "no message for the batch"; }

check "without the layer library, Caffe does not know the type (what LD_PRELOAD is for)"
net "$TMP/s.h5" 16 0
set +e
GLOG_logtostderr=1 "$CAFFE" time -model "$TMP/net.prototxt" -iterations 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "LibData known without the layer library"
grep -q "Unknown layer type: LibData" "$TMP/err" || { show; fail "unexpected message"; }
echo "ok"
