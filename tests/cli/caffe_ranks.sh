#!/usr/bin/env bash
# Caffe integration, multi-solver shares (needs CAFFE_ROOT and the LibData layer built): with
# Caffe::solver_count() = W and each solver's RNG seeded with random_seed + rank (as Caffe's
# multi-GPU training does), the W LibData layers read disjoint shares of floor(N / W) samples
# (in full batches) of one epoch. Checked by caffe_first_batch --ranks, CPU only.
set -euo pipefail
if [ -z "${CAFFE_ROOT:-}" ]; then
    echo "skipped: no Caffe build (set CAFFE_ROOT)"
    exit 0
fi
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
lib_dir=$(dirname "${LIBDATA_LIBRARY:-$SRC/build/libdata.so}")
LAYER=${LIBDATA_CAFFE_LAYER:-$lib_dir/bindings/caffe/libdata_caffe_layer.so}
CHECK=${CAFFE_FIRST_BATCH:-$lib_dir/bindings/caffe/caffe_first_batch}
if [ ! -e "$LAYER" ] || [ ! -e "$CHECK" ]; then
    echo "skipped: $LAYER not built (configure with -DLIBDATA_BUILD_CAFFE=ON)"
    exit 0
fi
# A layer built with -DLIBDATA_SANITIZE links the sanitizer runtimes, which must be loaded
# before anything else: preload them too.
sanitizer_rt=$( (ldd "$LAYER" 2>/dev/null || true) |
    awk '/lib(asan|ubsan|tsan)\.so/ { printf "%s:", $3 }')
PRELOAD=$sanitizer_rt$LAYER
: "${DATACONV:?set DATACONV to the dataconv binary}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/caffe-ranks.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$DATACONV" -q "$SRC/samples/images/" "$TMP/s.h5" --resize 32
for lmdb in 0 1; do
    src=$TMP/s.h5
    if [ "$lmdb" = 1 ]; then
        "$DATACONV" -q "$SRC/samples/images/" "$TMP/s.lmdb" --resize 32
        src=$TMP/s.lmdb
    fi
    cat >"$TMP/net.prototxt" <<NET
layer { name: "data" type: "LibData" top: "data" top: "label"
  data_param { source: "$src" batch_size: 16 }
  transform_param { mean_value: 128 scale: 0.00390625 } }
layer { name: "sink" type: "Silence" bottom: "data" bottom: "label" }
NET
    for world in 1 2 3; do
        echo "check: $world solver(s) on $(basename "$src")"
        LD_PRELOAD="$PRELOAD" "$CHECK" --ranks "$world" "$TMP/net.prototxt" | tee "$TMP/out" ||
            fail "$world ranks on $src"
        grep -q "DISJOINT" "$TMP/out" || fail "no DISJOINT line"
    done
done
# 160 samples: 2 ranks x 5 batches of 16 = all; 3 ranks x 3 batches of 16 = 144
grep -q "^3 ranks: 144 samples read, 144 distinct, of 160" "$TMP/out" || fail "3 ranks: counts"
echo "ok"
