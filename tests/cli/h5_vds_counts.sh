#!/usr/bin/env bash
# HDF5 files whose datasets do not all hold what they claim (issue 12, items 15 and 20):
# - a virtual dataset (VDS) is described as virtual with its source files; a missing source
#   file or source dataset (which HDF5 reads as fill values, silently) is flagged by `info`
#   and refused by the reader with a message naming it;
# - /data and /label of different lengths are flagged by `info` and refused by the reader.
source "$(dirname "$0")/lib/common.sh"
export PYTHONPATH="$SRC/bindings/python${PYTHONPATH:+:$PYTHONPATH}"

mkdir -p "$TMP/v" "$TMP/elsewhere"
cd "$TMP/v"
"$PYTHON" -c "
import h5py, numpy as np
lay = h5py.VirtualLayout(shape=(10, 3, 4, 4), dtype=np.uint8)
for k in range(2):
    with h5py.File(f'src{k}.h5', 'w') as f:
        f['data'] = np.random.default_rng(k).integers(1, 255, (5, 3, 4, 4), dtype=np.uint8)
    lay[5 * k:5 * k + 5] = h5py.VirtualSource(f'src{k}.h5', 'data', shape=(5, 3, 4, 4))
with h5py.File('vds.h5', 'w', libver='latest') as f:
    f.create_virtual_dataset('data', lay, fillvalue=0)
    f['label'] = np.arange(10, dtype=np.int32)
"
# relative source paths are resolved against the VDS file's folder, not the current one
cd "$TMP/elsewhere"

check "a complete VDS: info says virtual and lists its found sources"
run "$DATACONV" info ../v/vds.h5
expect_rc 0
expect_out "/data: (10, 3, 4, 4) uint8, virtual: 2 sources"
expect_out "source 1: src0.h5 data: found (../v/src0.h5)"
expect_out "source 2: src1.h5 data: found (../v/src1.h5)"
if grep -q "compact\|PROBLEMS" "$TMP/out"; then cat "$TMP/out"; fail "complete VDS flagged"; fi

check "a complete VDS reads the same pixels as h5py, from another folder"
# (python cannot load an AddressSanitizer build of the library: see python_bindings.sh)
if asan_build; then
    echo "note: AddressSanitizer build: pixel cross-check with h5py skipped"
elif [ "$(od -An -j4 -N1 -tu1 "$LIBDATA_LIBRARY" | tr -d ' ')" = 1 ]; then
    echo "note: 32-bit library (scripts/ci_32bit.sh): the 64-bit python cannot load it, pixel cross-check with h5py skipped"
else
    "$PYTHON" - ../v/vds.h5 <<'PY'
import sys, h5py, numpy as np, libdata
with h5py.File(sys.argv[1], "r") as f:
    ref = f["data"][:]
with libdata.Reader(sys.argv[1], batch_size=10, threads=1) as r:
    (d, l), = list(r)
np.testing.assert_array_equal(d, ref)
assert (ref != 0).all()  # no fill values: every source was read
PY
fi

check "a source file gone: info flags it, the reader refuses naming it"
mv ../v/src1.h5 ../v/src1.moved
run "$DATACONV" info ../v/vds.h5
expect_out "source 2: src1.h5 data: MISSING FILE (../v/src1.h5)"
expect_out "^PROBLEMS (1):"
expect_out "virtual source file src1.h5 does not exist"
run "$DATACONV" bench ../v/vds.h5 --batch 10
expect_rc 1
expect_err "dataset '/data' is virtual and its source file 'src1.h5' (source 2 of 2; looked for as ../v/src1.h5) does not exist"

check "a source file without the source dataset: flagged and refused"
"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('../v/src1.h5', 'w') as f:
    f['other'] = np.zeros(3)
"
run "$DATACONV" info ../v/vds.h5
expect_out "source 2: src1.h5 data: MISSING DATASET"
expect_out "^PROBLEMS (1):"
run "$DATACONV" bench ../v/vds.h5 --batch 10
expect_rc 1
expect_err "has no dataset 'data' (source 2 of 2)"

check "HDF5_VDS_PREFIX is honoured as HDF5 does"
mkdir -p ../pre && cp ../v/src1.moved ../pre/src1.h5 && rm ../v/src1.h5
HDF5_VDS_PREFIX="$TMP/pre" run "$DATACONV" info ../v/vds.h5
expect_out "source 2: src1.h5 data: found ($TMP/pre/src1.h5)"
HDF5_VDS_PREFIX="$TMP/pre" run "$DATACONV" bench ../v/vds.h5 --batch 10
expect_rc 0

check "an h5py file with 103 data rows and 50 labels: info flags it, the reader refuses"
"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('mism.h5', 'w') as f:
    f['data'] = np.zeros((103, 3, 4, 4), np.uint8)
    f['label'] = np.arange(50, dtype=np.int32)
"
run "$DATACONV" info mism.h5
expect_rc 0
expect_out "^samples: /data and /label disagree"
expect_out "/data holds 103 samples but /label holds 50 labels"
if grep -q "^samples: 50" "$TMP/out"; then cat "$TMP/out"; fail "mismatch shown as 50 samples"; fi
run "$DATACONV" bench mism.h5
expect_rc 1
expect_err "label dataset '/label' has 50 entries but the pixel dataset has 103 samples"

check "one of our files with a label dataset cut short: flagged as well"
run "$DATACONV" "$LD_TEST_DATA/tree" ours.h5 --resize 16 -q
expect_rc 0
"$PYTHON" -c "
import h5py
with h5py.File('ours.h5', 'a') as f:
    lab = f['label'][:5]
    del f['label']
    f['label'] = lab
"
run "$DATACONV" info ours.h5
expect_out "^format: libdata HDF5"
expect_out "^samples: 9 (but see the problems below)"
expect_out "/data holds 9 samples but /label holds 5 labels"
echo "ok"
