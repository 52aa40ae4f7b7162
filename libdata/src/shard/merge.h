/*
 * Merging the parts of a sharded conversion (ld_merge, <libdata/convert.h>). merge.c finds the
 * parts, picks the format, refuses an output that is a part, reads each part through its
 * format (store/merge_fmt.h), checks that the parts make one whole listing of one run, and lets
 * the format write the merged dataset. The checks and the part names are here, once; the
 * formats know nothing of them.
 */
#ifndef LD_MERGE_H
#define LD_MERGE_H

#include "store/merge_fmt.h"

/* A part whose name spells another K/N than its shard values: LD_EINVAL naming it. */
int ld__shard_check_name(const ld_shard *s, ld_err *e);

/* Sort the parts by K and check that they are one complete set: the same N everywhere, N
 * parts, each K once. LD_OK or LD_EINVAL naming the file (or the missing part's name). */
int ld__merge_check_set(ld_shard *s, size_t n, ld_err *e);

/* After ld__merge_check_set: the same run (run_id, listing_total) and contiguous ranges of
 * the listing in K order covering it. LD_OK or LD_EINVAL naming the file. */
int ld__merge_check_run(const ld_shard *s, size_t n, ld_err *e);

#endif /* LD_MERGE_H */
