/*
 * dataconv's MPI mode (mpi.h). Only this file calls MPI; without LIBDATA_WITH_MPI it reduces
 * to dc_mpi_built() == 0 and dataconv refuses to run as several mpirun processes without
 * --shard (dataconv.c).
 *
 * Collective steps, in this order on every rank: MPI_Init_thread (FUNNELED: the library's
 * worker threads never call MPI), convert this rank's part, MPI_Allreduce(MIN) of "my part
 * is there", rank 0 merges if all are, MPI_Bcast of the merge's outcome, MPI_Finalize. A
 * rank that fails still reaches the Allreduce, so the others never wait forever; a rank that
 * dies (killed, crashed) makes mpirun end the job before any merge.
 */
#include "mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdata/convert.h>
#include <libdata/libdata.h>

#ifdef DC_HAVE_MPI
#include <mpi.h>

int dc_mpi_built(void)
{
    return 1;
}

/* The merge's log lines, as `dataconv merge` prints them. */
static void merge_log(void *user, int level, const char *msg)
{
    const dc_opts *o = user;
    if (o->quiet || level == LD_LOG_ERROR || level == LD_LOG_DEBUG) return;
    if (level == LD_LOG_INFO && !o->verbose && strncmp(msg, "merged ", 7) != 0) return;
    fprintf(stderr, "dataconv: %s%s\n", level == LD_LOG_WARN ? "warning: " : "", msg);
}

/* Rank 0: merge the parts of `out` (every rank converted its part). Returns an exit code. */
static int merge_parts(const dc_opts *o, const char *out, int size)
{
    char **parts = calloc((size_t)size, sizeof *parts);
    char *err = NULL;
    int code = DC_EXIT_FAIL, rc = LD_ENOMEM;
    for (int k = 0; parts && k < size; k++)
        if (ld_shard_part_name(out, k, size, &parts[k]) < 0) goto done;
    if (!parts) goto done;
    rc = ld_merge(out, (const char *const *)parts, (size_t)size, merge_log, (void *)o, &err);
    code = rc >= 0                               ? DC_EXIT_OK
           : rc == LD_EINVAL || rc == LD_EFORMAT ? DC_EXIT_BAD_INPUT
                                                 : DC_EXIT_FAIL;
done:
    if (rc < 0)
        fprintf(stderr, "dataconv: rank 0: merging the %d parts into %s failed: %s\n", size, out,
                err ? err : ld_strerror(rc));
    ld_free(err);
    for (int k = 0; parts && k < size; k++)
        ld_free(parts[k]);
    free(parts);
    return code;
}

int dc_mpi_convert(dc_opts *o, int argc, char **argv, dc_convert_once_fn once)
{
    int provided = 0, rank = 0, size = 1;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "dataconv: MPI_Init failed: run under mpirun/srun, or give --shard K/N "
                        "to convert one part without MPI\n");
        return DC_EXIT_FAIL;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* This rank's part: the shard parameters, as --shard rank/size would set them. */
    size_t count = 0;
    const ld_param_desc *t = ld_convert_params(&count);
    int code = DC_EXIT_USAGE;
    dc_run_result res = {0};
    if (size > 99999)
        fprintf(stderr, "dataconv: %d MPI ranks: at most 99999 parts\n", size);
    else if (o->nparams + 2 > DC_MAX_PARAMS)
        fprintf(stderr, "dataconv: too many options\n");
    else if (dc_param_shortcut("", t, count, LD_C_SHARD_COUNT, "(MPI size)", size,
                               &o->params[o->nparams]) == DC_EXIT_OK &&
             dc_param_shortcut("", t, count, LD_C_SHARD_INDEX, "(MPI rank)", rank,
                               &o->params[o->nparams + 1]) == DC_EXIT_OK) {
        o->nparams += 2;
        if (!o->quiet && rank == 0)
            fprintf(stderr,
                    "dataconv: MPI mode: %d ranks, each converts one part; rank 0 "
                    "merges them\n",
                    size);
        code = once(o, argc, argv, &res);
    }

    /* Every rank's part is there (converted now or complete from before)? */
    int mine = code == DC_EXIT_OK, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int merged = DC_EXIT_FAIL;
    if (all) {
        /* the job's summary: which parts were converted now, and the images of all */
        unsigned long long mine3[3] = {res.converted, res.skipped, (unsigned long long)res.resumed};
        unsigned long long sum[3] = {0, 0, 0};
        MPI_Reduce(mine3, sum, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0 && !o->quiet)
            fprintf(stderr,
                    "dataconv: MPI mode: all %d parts are there (%llu converted now, %llu "
                    "complete from an earlier run): %llu images converted, %llu files skipped\n",
                    size, (unsigned long long)size - sum[2], sum[2], sum[0], sum[1]);
        if (rank == 0) merged = merge_parts(o, res.out, size);
    }
    MPI_Bcast(&merged, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!all) {
        if (mine)
            fprintf(stderr,
                    "dataconv: rank %d: another rank failed (its message is above): "
                    "no merged file written; the complete parts stay, and the same "
                    "command converts only the missing ones\n",
                    rank);
        /* a failed rank keeps its own exit code; the others fail too */
        merged = mine ? DC_EXIT_FAIL : code;
    } else if (merged != DC_EXIT_OK && rank != 0 && !o->quiet) {
        fprintf(stderr, "dataconv: rank %d: the merge on rank 0 failed (its message is above)\n",
                rank);
    }
    MPI_Finalize();
    return merged;
}

#else /* !DC_HAVE_MPI */

int dc_mpi_built(void)
{
    return 0;
}

int dc_mpi_convert(dc_opts *o, int argc, char **argv, dc_convert_once_fn once)
{
    dc_run_result res = {0};
    return once(o, argc, argv, &res);
}

#endif
