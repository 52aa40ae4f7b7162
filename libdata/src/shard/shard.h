/*
 * Shards of a conversion (h5_format.h, "Shards"): part names, the contiguous range of the
 * whole listing a part takes, and the run_id that tells parts of the same run from others.
 */
#ifndef LD_SHARD_H
#define LD_SHARD_H

#include "source/source.h"
#include "store/desc.h"

/* Parts: at most LD_SHARD_MAX (five digits in the names). */
#define LD_SHARD_MAX 99999

/* Part names (name.c, the one rule): "out.h5" -> "out-0000K-of-0000N.h5" (ld_shard_part_name).
 * malloc'd, NULL when out of memory. */
char *ld__shard_part_path(const char *output, unsigned long long k, unsigned long long n);

/* "<stem>-*-of-*<ext>": how the parts of `output` are named, for messages. malloc'd. */
char *ld__shard_pattern(const char *output);

/* K and N from a part's name (the inverse of ld__shard_part_path). 1 and *k, *n set when the
 * name has that form, else 0 and both -1. */
int ld__shard_name(const char *path, long long *k, long long *n);

/* The name part K of N would have, given the name of another part of the same run (`like`);
 * NULL when `like` is not a part name or out of memory. malloc'd. */
char *ld__shard_sibling(const char *like, long long k, long long n);

/* Part k of n of `total` listed samples: [floor(k*total/n), floor((k+1)*total/n)). */
void ld__shard_range(uint64_t total, unsigned k, unsigned n, uint64_t *first, uint64_t *count);

/* The settings that change a run's output samples, by name, for the run_id (shard.c says
 * how they are hashed). */
typedef struct ld_shard_setting {
    const char *name;
    int64_t value;
} ld_shard_setting;

/* run_id (16 lowercase hex digits + NUL into out) of a run with these settings, n parts, over
 * the whole listing `src` (its order: after the shuffle, before the part is cut out). */
void ld__shard_run_id(const ld_shard_setting *set, size_t nset, unsigned n, const ld_source *src,
                      char out[17]);

/* A shard part's identity (h5_format.h, "Shards"): the converter computes it and records it
 * in the part's description (store/desc.h). */
typedef struct ld_shard_info {
    uint32_t index, count; /* K, N (count > 0) */
    uint64_t first;        /* index of the part's first listed sample in the whole listing */
    uint64_t listed;       /* samples the part listed (skipped ones included) */
    uint64_t total;        /* L: samples in the whole listing */
    char run_id[17];       /* 16 lowercase hex digits + NUL */
} ld_shard_info;

/* Resume: what is at `part_path` (an LMDB directory with `lmdb`) against the part this run
 * would write (`want`; `expect` is what the run records, desc.h: its settings are compared).
 * LD_OK and *complete = 1: a complete part of this very run (same K, N, run_id): skip it.
 * LD_OK and *complete = 0: nothing there: convert.
 * LD_EINVAL: something else is there (a part of another run, a damaged part, another file);
 * the message names the file and what differs, and says how to go on. */
int ld__shard_resume_check(const char *part_path, int lmdb, const ld_shard_info *want,
                           const ld_desc *expect, int *complete, ld_err *e);

#endif /* LD_SHARD_H */
