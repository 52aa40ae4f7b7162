#!/usr/bin/env bash
# A sample whose output size does not fit in size_t (issue 15). A 1 x 32768 x 32768 uint8
# sample is 1 GiB; as float32 it is 4 GiB, which wrapped to 0 in a 32-bit build's size_t:
# the reader allocated nothing and wrote 4 GiB into it (segmentation fault). Now: LD_ELIMIT at
# open, naming the sample size. A 64-bit build computes the size and, under the same
# `ulimit -v 2 GiB`, cannot allocate it: also an error with a message, never a crash.
# The file is tiny (HDF5 allocates chunks on first write; open reads no pixel).
source "$(dirname "$0")/lib/common.sh"
bits=$(( $(od -An -j4 -N1 -tu1 "${LIBDATA_LIBRARY:?}" | tr -d ' ') * 32 ))
"$PYTHON" - "$TMP/huge.h5" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("data", (2, 1, 32768, 32768), np.uint8, chunks=(1, 1, 32768, 32768))
    f["label"] = np.zeros(2, np.int32)
PY
# ASan reserves terabytes of shadow memory at start: it cannot run under ulimit -v at all
if ! asan_build; then
    check "$bits-bit: float32 output of a 1 GiB uint8 sample under ulimit -v 2 GiB: an error, no crash"
    run bash -c 'ulimit -Sv 2097152 && exec "$@"' _ "$DATACONV" bench "$TMP/huge.h5" --batch 1 --dtype f32 --epochs 1
    [ "$rc" -lt 128 ] || { show; fail "crash (exit $rc)"; }
    expect_rc 1
    if [ "$bits" = 32 ]; then
        expect_err "one output sample of 1 x 32768 x 32768 float32 is too large for this machine's address space"
    else
        expect_err "out of memory"
    fi
else
    echo "note: ASan build: the ulimit -v run is skipped (ASan cannot start under ulimit -v)"
fi
if [ "$bits" = 32 ]; then
    check "32-bit, no ulimit (where the wrapped size crashed): the same error"
    run "$DATACONV" bench "$TMP/huge.h5" --batch 1 --dtype f32 --epochs 1
    [ "$rc" -lt 128 ] || { show; fail "crash (exit $rc)"; }
    expect_rc 1
    expect_err "is too large for this machine's address space"
fi
echo "sample_size_32bit: all checks passed"
