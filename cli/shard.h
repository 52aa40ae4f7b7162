/*
 * dataconv --shard: which part of a sharded conversion this process converts.
 *
 *   --shard K/N     part K (0-based) of N
 *   --shard auto    K and N from the launcher's environment, the first of:
 *                     OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE   (Open MPI mpirun)
 *                     PMI_RANK / PMI_SIZE                           (MPICH, Slurm srun)
 *                     SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN / _MAX
 *                       (sbatch --array: K = ID - MIN, N = MAX - MIN + 1; one contiguous
 *                       run of ids only; parts of another count beside the output are
 *                       refused: see dc_shard_check_siblings)
 *                   A launcher of one process (PMI_SIZE=1: srun inside an array task) does
 *                   not count when SLURM_ARRAY_TASK_ID is set.
 *   --shard auto/N  the same, N given: needed for JOB_COMPLETION_INDEX (a Kubernetes Indexed
 *                   Job, which does not tell the count); a count from the environment must
 *                   equal N. In a Slurm array the task ids are the parts: K = ID, 0 <= ID < N,
 *                   so any subset of the array can be resubmitted (--array=3,7).
 */
#ifndef DATACONV_SHARD_H
#define DATACONV_SHARD_H

#include <stddef.h>

/**
 * Parse a --shard value. On success *k, *n are set and `from` (size `cap`) receives where they
 * came from ("" for K/N, e.g. "SLURM_ARRAY_TASK_ID=7 (MIN 1, MAX 8)" for auto); *derived is 1
 * when N came from a Slurm array's MIN/MAX (--shard auto). On a bad value prints a usage error
 * naming `flag` and returns DC_EXIT_USAGE; else DC_EXIT_OK.
 */
int dc_shard_parse(const char *flag, const char *val, int *k, int *n, char *from, size_t cap,
                   int *derived);

/**
 * For a count N taken from a Slurm array's MIN/MAX: DC_EXIT_USAGE (with a message) when parts
 * of `output` with another count exist already. Resubmitting some tasks of an array (e.g.
 * --array=7-8 of 5-8) changes MIN/MAX, and N with them, silently: the parts would not merge.
 */
int dc_shard_check_siblings(const char *output, int n, const char *from);

/**
 * The size of the MPI job this process was started in, from the launcher's environment
 * (OMPI_COMM_WORLD_SIZE, PMI_SIZE), or 0 when there is none; *var receives the variable.
 */
int dc_shard_mpi_size(const char **var);

#endif /* DATACONV_SHARD_H */
