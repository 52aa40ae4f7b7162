#!/usr/bin/env bash
# Caffe integration, multi-solver shares (needs CAFFE_ROOT and the LibData layer built): with
# Caffe::solver_count() = W and each solver's RNG seeded with random_seed + rank (as Caffe's
# multi-GPU training does), the W LibData layers read disjoint shares of floor(N / W) samples
# (in full batches) of one epoch. Checked by caffe_first_batch --ranks, CPU only.
set -euo pipefail
source "$(dirname "$0")/lib/caffe.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/caffe-ranks.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

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
