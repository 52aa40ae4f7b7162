/*
 * dataconv --shard: which part of a sharded conversion this process converts.
 *
 *   --shard K/N     part K (0-based) of N
 *   --shard auto    K and N from the launcher's environment, the first of:
 *                     OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE   (Open MPI mpirun)
 *                     PMI_RANK / PMI_SIZE                           (MPICH, Slurm srun)
 *                     SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN / _MAX
 *                       (sbatch --array: K = ID - MIN, N = MAX - MIN + 1; step 1 only)
 *   --shard auto/N  the same, N given: needed for JOB_COMPLETION_INDEX (a Kubernetes Indexed
 *                   Job, which does not tell the count); a count from the environment must
 *                   equal N.
 */
#ifndef DATACONV_SHARD_H
#define DATACONV_SHARD_H

#include <stddef.h>

/**
 * Parse a --shard value. On success *k, *n are set and `from` (size `cap`) receives where they
 * came from ("" for K/N, e.g. "SLURM_ARRAY_TASK_ID=7 (MIN 1, MAX 8)" for auto). On a bad value
 * prints a usage error naming `flag` and returns DC_EXIT_USAGE; else DC_EXIT_OK.
 */
int dc_shard_parse(const char *flag, const char *val, int *k, int *n, char *from, size_t cap);

/**
 * The size of the MPI job this process was started in, from the launcher's environment
 * (OMPI_COMM_WORLD_SIZE, PMI_SIZE), or 0 when there is none; *var receives the variable.
 */
int dc_shard_mpi_size(const char **var);

#endif /* DATACONV_SHARD_H */
