# Shared set-up of the Caffe integration tests tests/cli/caffe_*.sh (sourced; not a test
# itself). Without a Caffe build (CAFFE_ROOT) or without the LibData layer and
# caffe_first_batch (configure with -DLIBDATA_BUILD_CAFFE=ON) the test says so and exits 77,
# which ctest reports as skipped (tests/CMakeLists.txt: SKIP_RETURN_CODE).
# Otherwise it sets SRC; LAYER, CHECK (caffe_first_batch) and PRELOAD (the LD_PRELOAD that
# loads the layer into Caffe); CAFFE (Caffe's tool) and caffe_tool for the others; fail().
# shellcheck shell=bash
set -euo pipefail
if [ -z "${CAFFE_ROOT:-}" ]; then
    echo "skipped: no Caffe build (set CAFFE_ROOT)"
    exit 77
fi
SRC=${SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
lib_dir=$(dirname "${LIBDATA_LIBRARY:-$SRC/build/libdata.so}")
LAYER=${LIBDATA_CAFFE_LAYER:-$lib_dir/bindings/caffe/libdata_caffe_layer.so}
CHECK=${CAFFE_FIRST_BATCH:-$lib_dir/bindings/caffe/caffe_first_batch}
if [ ! -e "$LAYER" ] || [ ! -e "$CHECK" ]; then
    echo "skipped: $LAYER or $CHECK not built (configure with -DLIBDATA_BUILD_CAFFE=ON)"
    exit 77
fi
: "${DATACONV:?set DATACONV to the dataconv binary}"
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$SRC/samples/caffe/caffe_tools.sh"
PRELOAD=$(caffe_preload "$LAYER")
CAFFE=$(caffe_tool caffe) || fail "no caffe tool under CAFFE_ROOT=$CAFFE_ROOT"
