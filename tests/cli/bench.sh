#!/usr/bin/env bash
# dataconv bench: reads a dataset with libdata's reader and reports samples/s and memory;
# usage errors exit 2, a missing file exits 1.
source "$(dirname "$0")/lib/common.sh"

check "an h5py-made file (not ours): 1000 samples, 3 epochs, shuffled, batch 128"
"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('$TMP/other.h5', 'w') as f:
    f['data'] = np.random.default_rng(0).integers(0, 255, (1000, 3, 32, 32), dtype=np.uint8)
    f['label'] = np.arange(1000, dtype=np.int32) % 10
"
run "$DATACONV" bench "$TMP/other.h5" --batch 128 --shuffle --epochs 3 -j 2
expect_rc 0
expect_out "1000 samples, batch 128 x 3x32x32 uint8"
[ "$(grep -c '^epoch [0-9]: 8 batches, 1000 samples' "$TMP/out")" -eq 3 ] ||
    { cat "$TMP/out"; fail "expected 3 epochs of 8 batches"; }
expect_out "^total: 3000 samples"
expect_out "ms/batch"
expect_out "peak RSS"

check "float output with crop, mirror, mean and scale; --drop-last"
run "$DATACONV" bench "$TMP/other.h5" --batch 300 --drop-last --dtype f32 --crop 24 --random-crop \
    --mirror --mean-values 104,117,123 --scale 0.0078125 -j 2
expect_rc 0
expect_out "3x24x24 float32"
expect_out "^epoch 0: 3 batches, 900 samples"

check "a converted file reads back: the fixture tree"
run "$DATACONV" "$LD_TEST_DATA/tree" "$TMP/tree.h5" --resize 32 -q
expect_rc 0
run "$DATACONV" bench "$TMP/tree.h5" --batch 4
expect_rc 0
expect_out "^total: 9 samples"

check "errors: bad value -> 2, unknown flag -> 2, missing file -> 1 naming it"
run "$DATACONV" bench "$TMP/other.h5" --batch 0
expect_rc 2
expect_err "out of range"
run "$DATACONV" bench "$TMP/other.h5" --wobble
expect_rc 2
expect_err "unknown option"
run "$DATACONV" bench
expect_rc 2
expect_err "missing FILE"
run "$DATACONV" bench "$TMP/nope.h5"
expect_rc 1
expect_err "nope.h5"
run "$DATACONV" bench --help
expect_rc 0
expect_out "Usage: dataconv bench"
echo "bench: all checks passed"
