#!/usr/bin/env bash
# A batch size larger than the dataset (issue 12, item 14): the reader sizes its batch buffers
# by the samples this rank can get in an epoch, not by the requested batch size, so
# `--batch 100000` on 300 samples needs a few MiB, not 100000 samples x 3 buffers (3.7 GB here).
source "$(dirname "$0")/lib/common.sh"

"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('$TMP/small.h5', 'w') as f:
    f['data'] = np.random.default_rng(1).integers(0, 255, (300, 3, 64, 64), dtype=np.uint8)
    f['label'] = np.arange(300, dtype=np.int32) % 7
"
# 1 GiB of address space: far below 100000 x 12288 bytes, plenty for 300 x 12288 bytes.
# AddressSanitizer reserves terabytes of shadow memory and cannot start under `ulimit -v`:
# there only the memory budget check below applies.
LIMIT_KIB=1048576
if asan_build; then
    LIMIT_KIB=unlimited
    echo "note: AddressSanitizer build: no ulimit -v"
fi

check "batch 100000 on 300 samples under ulimit -v 1 GiB: one batch of 300"
run bash -c "ulimit -Sv $LIMIT_KIB; exec \"\$@\"" _ "$DATACONV" bench "$TMP/small.h5" --batch 100000 -j 2
expect_rc 0
expect_out "^epoch 0: 1 batches, 300 samples"

check "the same, float32 output and 2 epochs"
run bash -c "ulimit -Sv $LIMIT_KIB; exec \"\$@\"" _ "$DATACONV" bench "$TMP/small.h5" --batch 100000 --dtype f32 --epochs 2 -j 2
expect_rc 0
expect_out "^epoch 1: 1 batches, 300 samples"

check "rank 1 of 2: its share is 150 samples, one batch of 150"
run bash -c "ulimit -Sv $LIMIT_KIB; exec \"\$@\"" _ "$DATACONV" bench "$TMP/small.h5" --batch 100000 --rank 1 --world 2 -j 2
expect_rc 0
expect_out "^epoch 0: 1 batches, 150 samples"

check "batch 100000 within a 64 MiB memory budget: the plan counts 300 samples per slot"
run "$DATACONV" bench "$TMP/small.h5" --batch 100000 --memory 64M -j 2
expect_rc 0
expect_out "^epoch 0: 1 batches, 300 samples"

check "drop_last with a batch larger than the share: refused, saying why"
run "$DATACONV" bench "$TMP/small.h5" --batch 100000 --drop-last
expect_rc 2
expect_err "make no full batch of 100000"

check "the reader reports the memory it plans for 300 samples, not 100000"
run "$DATACONV" bench "$TMP/small.h5" --batch 100000 -j 2 --prefetch 1
expect_rc 0
"$PYTHON" - "$TMP/out" <<'PY'
import re, sys
line = open(sys.argv[1]).read().splitlines()[0]
m = re.search(r"reader memory ([\d.]+) (\w+)", line)
assert m, line
v, u = float(m.group(1)), m.group(2)
mib = v * {"B": 2**-20, "KiB": 2**-10, "MiB": 1, "GiB": 1024}[u]
# 2 slots x 300 x 12288 bytes is 7 MiB; a 100000-sample slot would be 1172 MiB
assert mib < 64, line
PY
echo "ok"
