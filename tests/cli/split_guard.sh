#!/usr/bin/env bash
# --split names its list "<stem>.txt": when that is the input list itself, the run must stop
# before writing anything and the input list must be unchanged.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$LD_TEST_DATA/list.txt" "$tmp/train.txt"
set +e
"$DATACONV" "$LD_TEST_DATA/tree/" "$tmp/train.txt" "$tmp/train.h5" --resize 32 --split 10K \
    2> "$tmp/err"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "expected exit 1, got $rc"; cat "$tmp/err"; exit 1; }
grep -q "would overwrite this input list" "$tmp/err" || { cat "$tmp/err"; exit 1; }
cmp "$LD_TEST_DATA/list.txt" "$tmp/train.txt"
[ "$(ls "$tmp" | grep -c h5)" -eq 0 ] || { ls "$tmp"; echo "output left behind"; exit 1; }
# A different name works and writes the list Caffe's HDF5Data expects.
"$DATACONV" "$LD_TEST_DATA/tree/" "$tmp/train.txt" "$tmp/train_split.h5" --resize 32 \
    --split 10K --quiet
n=$(wc -l < "$tmp/train_split.txt")
[ "$n" -ge 2 ] || { echo "expected several files, got $n"; exit 1; }
"$PYTHON" - "$tmp/train_split.txt" <<'PY'
import sys, h5py
files = open(sys.argv[1]).read().split()
n = sum(h5py.File(f, "r")["data"].shape[0] for f in files)
assert n == 9, n
print(f"split_guard: {len(files)} files, {n} samples")
PY
