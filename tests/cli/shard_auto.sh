#!/usr/bin/env bash
# --shard auto: K/N from the environment, set here the way each launcher sets it:
#   Open MPI mpirun (OMPI_COMM_WORLD_RANK/SIZE), MPICH / Slurm srun (PMI_RANK/SIZE), a Slurm
#   array (SLURM_ARRAY_TASK_ID/MIN/MAX/COUNT/STEP, ids need not start at 0), a Kubernetes
#   Indexed Job (JOB_COMPLETION_INDEX, with --shard auto/N); and what is refused: no launcher,
#   a count that contradicts auto/N, JOB_COMPLETION_INDEX without N, a Slurm array with a step
#   or gaps, garbage values; several mpirun processes without --shard (each would write OUT).
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree
# Nothing of the test runner's own environment may leak into the cases.
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE SLURM_ARRAY_TASK_ID \
    SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_STEP \
    JOB_COMPLETION_INDEX

auto() { # EXPECTED_PART_FILE SHARD_VALUE VAR=VALUE...
    local want=$1 val=$2
    shift 2
    check "--shard $val with $*"
    rm -f "$TMP"/o-*.h5
    run env "$@" "$DATACONV" "$tree" "$TMP/o.h5" --resize 16 --shard "$val"
    expect_rc 0
    [ -f "$TMP/$want" ] || { show; fail "$want not written"; }
    [ "$(compgen -G "$TMP/o-*.h5" | wc -l)" -eq 1 ] || fail "more than one part written"
}

auto o-00002-of-00004.h5 auto OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4
expect_err "part 2 of 4 (0-based) from OMPI_COMM_WORLD_RANK=2, OMPI_COMM_WORLD_SIZE=4"
auto o-00001-of-00003.h5 auto PMI_RANK=1 PMI_SIZE=3
expect_err "from PMI_RANK=1, PMI_SIZE=3"
# sbatch --array=1-8: ids 1..8 -> parts 0..7
auto o-00006-of-00008.h5 auto SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=8 \
    SLURM_ARRAY_TASK_COUNT=8 SLURM_ARRAY_TASK_STEP=1
expect_err "SLURM_ARRAY_TASK_ID=7 (MIN 1, MAX 8)"
# auto/N in an array: the task ids are the parts, whatever subset was submitted (issue 26
# item 5: --array=3,7 resubmitting two failed tasks of 0-7)
auto o-00007-of-00008.h5 auto/8 SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_MAX=7 \
    SLURM_ARRAY_TASK_COUNT=2
expect_err "part 7 of 8 (0-based) from SLURM_ARRAY_TASK_ID=7"
# srun inside an array task (PMI_SIZE=1 at pmi2 sites) does not make every task part 0 of 1
auto o-00002-of-00004.h5 auto PMI_RANK=0 PMI_SIZE=1 SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=5 \
    SLURM_ARRAY_TASK_MAX=8
auto o-00003-of-00004.h5 auto/4 PMI_RANK=0 PMI_SIZE=1 SLURM_ARRAY_TASK_ID=3
auto o-00004-of-00005.h5 auto/5 JOB_COMPLETION_INDEX=4
expect_err "JOB_COMPLETION_INDEX=4"
# Open MPI comes first when several launchers' variables are set (mpirun inside a Slurm job)
auto o-00003-of-00004.h5 auto OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 SLURM_ARRAY_TASK_ID=0 \
    SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=1

refused() { # MESSAGE SHARD_VALUE VAR=VALUE...
    local msg=$1 val=$2
    shift 2
    check "--shard $val with ${*:-no launcher variables} is refused"
    rm -f "$TMP"/o*.h5
    run env "$@" "$DATACONV" "$tree" "$TMP/o.h5" --resize 16 --shard "$val"
    expect_rc 2
    expect_err "$msg"
    [ -z "$(compgen -G "$TMP/o*.h5")" ] || fail "a file was written"
}
refused "no launcher told this process its part" auto
refused "gives the part but not the count: use --shard auto/N" auto JOB_COMPLETION_INDEX=1
refused "the environment says 4 parts" auto/8 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4
refused "part 5 (JOB_COMPLETION_INDEX=5) is not in 0..4" auto/5 JOB_COMPLETION_INDEX=5
refused "not one contiguous run (ids 0..6, step 2, 4 tasks), so they do not say the parts: give --shard auto/N" auto SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=0 \
    SLURM_ARRAY_TASK_MAX=6 SLURM_ARRAY_TASK_STEP=2
refused "not one contiguous run (ids 1..7, step 1, 3 tasks)" auto SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 \
    SLURM_ARRAY_TASK_MAX=7 SLURM_ARRAY_TASK_COUNT=3
refused "SLURM_ARRAY_TASK_MIN/MAX are missing" auto SLURM_ARRAY_TASK_ID=3
refused "SLURM_ARRAY_TASK_ID=10 is not a part of 2: with auto/N the array's task ids are the parts, 0..1" \
    auto/2 SLURM_ARRAY_TASK_ID=10 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_MAX=11

check "--shard auto: a resubmitted subset of an array (MIN/MAX changed) is refused where parts of the full count exist"
rm -f "$TMP"/o*.h5
for id in 5 6; do
    env SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_MAX=8 SLURM_ARRAY_TASK_COUNT=4 \
        "$DATACONV" "$tree" "$TMP/o.h5" --resize 16 --shard auto -q
done
run env SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=7 SLURM_ARRAY_TASK_MAX=8 SLURM_ARRAY_TASK_COUNT=2 \
    "$DATACONV" "$tree" "$TMP/o.h5" --resize 16 --shard auto
expect_rc 2
expect_err "counts 2 parts, but .*o-0000[01]-of-00004.h5 is part of 4: the array's MIN/MAX changed"
expect_err "Give --shard auto/4 so that each task id is its part"
[ -z "$(compgen -G "$TMP/o-*-of-00002.h5")" ] || fail "a part of 2 was written"
check "--shard auto/4 converts the resubmitted tasks 2 and 3 (ids 2, 3) into the parts they are"
for id in 2 3; do
    env SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=2 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=2 \
        "$DATACONV" "$tree" "$TMP/o.h5" --resize 16 --shard auto/4 -q
done
[ "$(compgen -G "$TMP/o-*-of-00004.h5" | wc -l)" -eq 4 ] || fail "not the 4 parts: $(ls "$TMP")"
run "$DATACONV" merge "$TMP/o.h5" -q
expect_rc 0
refused "expected two numbers" auto PMI_RANK=x PMI_SIZE=2
refused "JOB_COMPLETION_INDEX=abc is not a number" auto/3 JOB_COMPLETION_INDEX=abc

if "$DATACONV" --version | grep -q " mpi"; then
    # an MPI build takes this as MPI mode (MPI_Init needs a real mpirun: mpi_convert.sh)
    echo "note: dataconv is built with MPI: the refusal without MPI is not checked here"
else
    check "mpirun's variables without --shard, no MPI built in: refused (each would write OUT)"
    run env OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=4 "$DATACONV" "$tree" "$TMP/o.h5" --resize 16
    expect_rc 2
    expect_err "started as one of 4 processes (OMPI_COMM_WORLD_SIZE=4) without --shard"
    [ ! -e "$TMP/o.h5" ] || fail "o.h5 written"
fi
echo "shard_auto: all checks passed"
