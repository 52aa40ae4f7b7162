/*
 * dataconv's MPI mode (built with -DLIBDATA_WITH_MPI=ON; the library itself never uses MPI):
 * `mpirun -np N dataconv SRC OUT [options]` converts part rank/N on each rank (the shard
 * parameters of the library), all ranks agree on success (MPI_Allreduce), rank 0 merges the
 * parts into OUT (ld_merge), and every rank exits non-zero when any rank or the merge failed;
 * then no merged file is written. Ranks finding their part complete from an earlier run of
 * the same command skip it (resume).
 */
#ifndef DATACONV_MPI_H
#define DATACONV_MPI_H

#include "options.h"

/** 1 if this dataconv was built with MPI. */
int dc_mpi_built(void);

/** What one conversion did, for the MPI job's summary. */
typedef struct dc_run_result {
    const char *out;    /* OUT as given (argv-owned); NULL before it is known */
    uint64_t converted; /* samples written */
    uint64_t skipped;   /* bad files skipped */
    int resumed;        /* 1: the part was complete from an earlier run */
} dc_run_result;

/** One conversion as dataconv runs it, filling *res. Returns an exit code. */
typedef int (*dc_convert_once_fn)(dc_opts *o, int argc, char **argv, dc_run_result *res);

/**
 * Run `once` as one rank of the MPI job this process was started in: MPI_Init, the shard
 * parameters set to rank/size in `o`, the conversion, agreement, rank 0's merge, MPI_Finalize.
 * @return the exit code (the same non-zero code on every rank when anything failed).
 */
int dc_mpi_convert(dc_opts *o, int argc, char **argv, dc_convert_once_fn once);

#endif /* DATACONV_MPI_H */
