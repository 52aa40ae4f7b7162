#!/usr/bin/env bash
# dataconv bench --mean-file F.npy (issue 12, item 12): NumPy means are read (C x H x W or
# H x W x C, -v says which), bad ones are refused saying why, and messages name the bench flag
# to use instead of a C enum value.
source "$(dirname "$0")/lib/common.sh"

"$PYTHON" -c "
import h5py, numpy as np
rng = np.random.default_rng(0)
with h5py.File('$TMP/x.h5', 'w') as f:
    f['data'] = rng.integers(0, 255, (50, 3, 16, 12), dtype=np.uint8)
    f['label'] = np.arange(50, dtype=np.int32) % 5
m = rng.uniform(0, 255, (3, 16, 12)).astype(np.float32)
np.save('$TMP/chw.npy', m)
np.save('$TMP/hwc.npy', np.ascontiguousarray(m.transpose(1, 2, 0)))
np.save('$TMP/crop.npy', m[:, :8, :8].astype(np.float64))
np.save('$TMP/fortran.npy', np.asfortranarray(m))
np.save('$TMP/wrong.npy', m[:, :15])
open('$TMP/trunc.npy', 'wb').write(open('$TMP/chw.npy', 'rb').read()[:200])
"

check "a C x H x W .npy mean with float output"
run "$DATACONV" bench "$TMP/x.h5" --dtype f32 --mean-file "$TMP/chw.npy" -v -j 2
expect_rc 0
expect_out "^total: 50 samples"
expect_err "read as C x H x W (3x16x12)"

check "an H x W x C .npy mean: transposed, and -v says so"
run "$DATACONV" bench "$TMP/x.h5" --dtype f32 --mean-file "$TMP/hwc.npy" -v -j 2
expect_rc 0
expect_err "read as H x W x C (transposed to C x H x W)"

check "a float64 .npy mean of the crop size"
run "$DATACONV" bench "$TMP/x.h5" --dtype f32 --crop 8 --mean-file "$TMP/crop.npy" -j 2
expect_rc 0

check "Fortran order, a truncated file, a wrong shape: refused, saying why"
run "$DATACONV" bench "$TMP/x.h5" --dtype f32 --mean-file "$TMP/fortran.npy"
expect_rc 1
expect_err "Fortran order"
run "$DATACONV" bench "$TMP/x.h5" --dtype f32 --mean-file "$TMP/trunc.npy"
expect_rc 1
expect_err "trunc.npy: the .npy array needs 2304 bytes of data"
run "$DATACONV" bench "$TMP/x.h5" --dtype f32 --mean-file "$TMP/wrong.npy"
expect_rc 2
expect_err "(3, 15, 12), which is neither C x H x W nor H x W x C"

check "a mean without float output: the message names the parameter and the bench flag"
run "$DATACONV" bench "$TMP/x.h5" --mean-file "$TMP/chw.npy"
expect_rc 2
expect_err "needs float32 output (set dtype to float32)"
expect_err "in dataconv bench that is --dtype f32"
if grep -q "dtype = 1" "$TMP/err"; then show; fail "raw enum value in the message"; fi

check "float labels that are not whole numbers: the message gives --label-dtype f32"
"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('$TMP/fl.h5', 'w') as f:
    f['data'] = np.zeros((4, 1, 2, 2), np.uint8)
    f['label'] = np.array([0.5, 1, 2, 3], np.float32)
"
run "$DATACONV" bench "$TMP/fl.h5" --batch 4
expect_rc 1
expect_err "label 0.5 is not a whole number"
expect_err "in dataconv bench that is --label-dtype f32"
run "$DATACONV" bench "$TMP/fl.h5" --batch 4 --label-dtype f32
expect_rc 0
echo "ok"
