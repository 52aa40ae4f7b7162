/*
 * Merging the parts of a sharded conversion (ld_merge, <libdata/convert.h>): what the HDF5
 * merge (h5_merge.c) and the LMDB merge (lmdb_merge.c) share. merge.c finds the parts, picks
 * the format, refuses an output that is a part, and checks that the parts make one whole
 * listing; the format's merge reads each part's shard values (h5_format.h, "Sharded
 * conversion") and settings, and writes the merged dataset.
 */
#ifndef LD_MERGE_H
#define LD_MERGE_H

#include "common/ld_internal.h"

/* One part: the six shard values recorded in it, and what its file name says. */
typedef struct ld_shard {
    const char *path;             /* as given (borrowed) */
    size_t given;                 /* its position in the list given to ld_merge */
    int64_t index, count;         /* shard_index K, shard_count N */
    int64_t first, listed, total; /* shard_first, shard_listed, listing_total */
    char run_id[32];
    long long name_k, name_n; /* K and N spelled in the file name, -1 when it has none */
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

/* K and N from a part's file name "...-KKKKK-of-NNNNN<ext>" (ext: anything from the first
 * '.' of the name's tail, or nothing). 1 and *k, *n set when the name has that form, else 0. */
int ld__shard_name(const char *path, long long *k, long long *n);

/* The file name part K of N would have, given the name of another part of the same run
 * (`like`); NULL when `like` does not have the form above or out of memory. malloc'd. */
char *ld__shard_sibling(const char *like, long long k, long long n);

/* A part whose name spells another K/N than its shard values: LD_EINVAL naming it. */
int ld__shard_check_name(const ld_shard *s, ld_err *e);

/* Sort the parts by K and check that they are one complete set: the same N everywhere, N
 * parts, each K once. LD_OK or LD_EINVAL naming the file (or the missing part's name). */
int ld__merge_check_set(ld_shard *s, size_t n, ld_err *e);

/* After ld__merge_check_set: the same run (run_id, listing_total) and contiguous ranges of
 * the listing in K order covering it. LD_OK or LD_EINVAL naming the file. */
int ld__merge_check_run(const ld_shard *s, size_t n, ld_err *e);

/* The format merges. `parts` are checked and written in K order (they come unsorted). */
int ld__h5_merge(const char *output, ld_shard *parts, size_t n, const ld_merge_log *log, ld_err *e);
int ld__lmdb_merge(const char *output, ld_shard *parts, size_t n, const ld_merge_log *log,
                   ld_err *e);

#endif /* LD_MERGE_H */
