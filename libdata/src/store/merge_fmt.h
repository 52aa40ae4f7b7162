/*
 * What a format offers a merge of shard parts. The merge itself (shard/merge.c: finding the
 * parts, checking that they are one whole run, the order) knows no format; a format knows
 * only its parts and how to write one merged dataset from them:
 *
 *     ld_merge_fmt *m;
 *     LD_TRY(ops->begin(output, parts, n, &log, &m, e));
 *     for (i = 0; i < n; i++) LD_TRY(ops->read_part(m, i, e));   // fills parts[i]
 *     ... the caller checks the parts and sorts `parts` by K ...
 *     LD_TRY(ops->write(m, e));
 *     ops->end(m);                                                // always, also after errors
 */
#ifndef LD_MERGE_FMT_H
#define LD_MERGE_FMT_H

#include "common/ld_internal.h"

/* One part: the shard values recorded in it, and what its file name says. */
typedef struct ld_shard {
    const char *path;             /* as given (borrowed) */
    size_t given;                 /* its position in the list given to ld_merge */
    int64_t index, count;         /* shard_index K, shard_count N */
    int64_t first, listed, total; /* shard_first, shard_listed, listing_total */
    char run_id[32];
    long long name_k, name_n; /* K and N spelled in the file name, -1 when it has none */
    uint64_t samples;         /* samples (records) the part holds */
} ld_shard;

/* Where messages go (the caller's ld_log_fn). */
typedef struct ld_merge_log {
    ld_log_fn fn;
    void *user;
} ld_merge_log;

void ld__merge_log(const ld_merge_log *l, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

typedef struct ld_merge_fmt ld_merge_fmt; /* a merge in progress, defined by each format */

typedef struct ld_merge_ops {
    const char *unit; /* what a part holds, for messages: "sample", "record" */
    /* Start merging the n parts at `parts` (borrowed until end(); the caller fills path, given,
     * name_k, name_n) into `output`. LD_OK, LD_ENOMEM. */
    int (*begin)(const char *output, ld_shard *parts, size_t n, const ld_merge_log *log,
                 ld_merge_fmt **out, ld_err *e);
    /* Read part i (the i-th given; parts are read in the order given): its shard values and
     * sample count into parts[i], its settings checked against those of part 0.
     * LD_OK; LD_EFORMAT (not a part: another tool's file, damaged, no shard values);
     * LD_EINVAL (settings that differ from part 0's, naming both); LD_EIO, LD_ENOMEM. */
    int (*read_part)(ld_merge_fmt *m, size_t i, ld_err *e);
    /* Write the merged dataset. `parts` is now sorted by K, each keeping `given`, and checked to
     * be one complete run holding at least one sample. Publishes `output` only when complete;
     * logs what it made (LD_LOG_INFO). LD_OK, LD_EIO, LD_ENOMEM, LD_EFORMAT. */
    int (*write)(ld_merge_fmt *m, ld_err *e);
    /* Free everything (NULL ok); removes a temporary that write() did not publish. */
    void (*end)(ld_merge_fmt *m);
} ld_merge_ops;

extern const ld_merge_ops ld__h5_merge_ops;   /* hdf5/h5_merge.c: a file of virtual datasets */
extern const ld_merge_ops ld__lmdb_merge_ops; /* lmdb/lmdb_merge.c: one database */

#endif /* LD_MERGE_FMT_H */
