#!/usr/bin/env bash
# A job array without a scheduler: N tasks run by `xargs -P`, each with the environment a
# scheduler gives its array tasks, each running the same `dataconv SRC OUT --shard auto`;
# then `dataconv merge OUT`. The merged dataset equals a single-process run (h5py,
# python-lmdb). Slurm: SLURM_ARRAY_TASK_ID/MIN/MAX/COUNT/STEP as `sbatch --array=1-8` sets
# them (ids from 1); Kubernetes Indexed Job: JOB_COMPLETION_INDEX with --shard auto/N.
# (No Slurm daemon is started here: the variables are what dataconv reads.)
source "$(dirname "$0")/lib/common.sh"
nm -D --defined-only "$LIBDATA_LIBRARY" | grep -qw ld_merge ||
    { echo "shard_jobarray: this libdata has no ld_merge yet (skipped)"; exit 77; }
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE JOB_COMPLETION_INDEX
equal=$SRC/tests/python/shard_merged_equal.py
big=$TMP/big
photo_folder "$big" abcd 3 # 288 photos
export DATACONV big TMP

check "Slurm array 1-8 (8 tasks, 4 at a time): HDF5, shuffled; merge equals a single run"
opts="--resize 32 --quality 75 --shuffle --seed 5"
export opts
seq 1 8 | xargs -P 4 -I{} env SLURM_ARRAY_JOB_ID=77 SLURM_ARRAY_TASK_ID={} SLURM_ARRAY_TASK_MIN=1 \
    SLURM_ARRAY_TASK_MAX=8 SLURM_ARRAY_TASK_COUNT=8 SLURM_ARRAY_TASK_STEP=1 \
    bash -c '"$DATACONV" "$big" "$TMP/a.h5" $opts --shard auto >"$TMP/task-{}.log" 2>&1' \
    || { cat "$TMP"/task-*.log; fail "a task failed"; }
for t in 1 2 3 4 5 6 7 8; do
    grep -q "part $((t - 1)) of 8 (0-based) from SLURM_ARRAY_TASK_ID=$t (MIN 1, MAX 8)" "$TMP/task-$t.log" ||
        { cat "$TMP/task-$t.log"; fail "task $t did not take part $((t - 1))"; }
done
run "$DATACONV" merge "$TMP/a.h5"
expect_rc 0
# shellcheck disable=SC2086
"$DATACONV" "$big" "$TMP/a-single.h5" $opts -q
"$PYTHON" "$equal" h5 "$TMP/a-single.h5" "$TMP/a.h5"

check "Kubernetes Indexed Job (completions 3, JOB_COMPLETION_INDEX 0..2): LMDB; merge equals a single run"
opts="--resize 24"
seq 0 2 | xargs -P 3 -I{} env JOB_COMPLETION_INDEX={} \
    bash -c '"$DATACONV" "$big" "$TMP/k.lmdb" $opts --shard auto/3 -q' || fail "a task failed"
run "$DATACONV" merge "$TMP/k.lmdb" "$TMP"/k-0000{0,1,2}-of-00003.lmdb
expect_rc 0
# shellcheck disable=SC2086
"$DATACONV" "$big" "$TMP/k-single.lmdb" $opts -q
"$PYTHON" "$equal" lmdb "$TMP/k-single.lmdb" "$TMP/k.lmdb"

check "a task that did not run: merge refuses, naming the missing part"
rm "$TMP/a-00005-of-00008.h5" "$TMP/a.h5"
run "$DATACONV" merge "$TMP/a.h5"
[ "$rc" -ne 0 ] || fail "merge accepted 7 of 8 parts"
expect_err "a-00005-of-00008.h5"
check "rerunning the whole array converts only the missing part, then merge works"
seq 1 8 | xargs -P 4 -I{} env SLURM_ARRAY_TASK_ID={} SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=8 \
    bash -c 'opts="--resize 32 --quality 75 --shuffle --seed 5"; "$DATACONV" "$big" "$TMP/a.h5" $opts --shard auto >"$TMP/again-{}.log" 2>&1'
[ "$(grep -l '^dataconv: converted' "$TMP"/again-*.log)" = "$TMP/again-6.log" ] ||
    fail "expected only task 6 (part 5) to convert: $(grep -l '^dataconv: converted' "$TMP"/again-*.log)"
run "$DATACONV" merge "$TMP/a.h5"
expect_rc 0
"$PYTHON" "$equal" h5 "$TMP/a-single.h5" "$TMP/a.h5"
echo "shard_jobarray: all checks passed"
