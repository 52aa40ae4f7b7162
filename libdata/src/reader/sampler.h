/*
 * Sampler: the order of one epoch for one rank, and the per-sample random numbers of the
 * transforms. Everything is a pure function of (seed, epoch, rank, world, sample index), so
 * results do not depend on the number of threads or on how far the reader prefetches.
 */
#ifndef LD_SAMPLER_H
#define LD_SAMPLER_H

#include "common/ld_internal.h"

typedef struct ld_sampler {
    uint64_t n; /* samples in the dataset */
    int order;  /* ld_order */
    uint64_t seed;
    uint64_t block;  /* samples per storage block (block shuffle); >= 1 */
    uint64_t window; /* blocks per shuffle window (block shuffle); >= 1 */
    uint64_t rank, world;
} ld_sampler;

/* Samples one rank gets per epoch: floor(n / world). */
static inline uint64_t ld__sampler_share(const ld_sampler *s)
{
    return s->n / s->world;
}

/* A keyed bijection of [0, n) (see sampler.c). */
typedef struct ld_perm {
    uint64_t n, key, mask;
    unsigned h; /* bits per half */
} ld_perm;

/* One epoch's order: what every position of it needs, computed once per epoch. */
typedef struct ld_epoch_order {
    ld_sampler s;
    uint64_t key;
    ld_perm perm;       /* shuffle: of the samples; block shuffle: of the blocks */
    uint64_t short_pos; /* block shuffle: where the short last block went in `perm` */
} ld_epoch_order;

void ld__sampler_epoch(const ld_sampler *s, uint64_t epoch, ld_epoch_order *o);

/* The sample at position k (0 <= k < share) of this rank's order. O(1) time and memory: the
 * shuffles are keyed bijections evaluated per position (see sampler.c), never a materialized
 * permutation, so nothing in the reader grows with the dataset. */
uint64_t ld__sampler_at(const ld_epoch_order *o, uint64_t k);

/* splitmix64 finalizer: a good 64-bit mix, used to derive independent streams. */
static inline uint64_t ld__mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A small generator (splitmix64 stream): fast, and good enough for shuffles and crops. */
typedef struct ld_rng {
    uint64_t s;
} ld_rng;

static inline uint64_t ld__rng_next(ld_rng *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    uint64_t x = r->s;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The 128-bit product a * b: returns its high 64 bits and stores the low 64 in *lo. Built from
 * 32-bit halves because 32-bit targets (i386, armhf) have no unsigned __int128; one code path
 * everywhere, so every platform draws the same numbers (test_sampler_mul.c). */
static inline uint64_t ld__mul64(uint64_t a, uint64_t b, uint64_t *lo)
{
    const uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10; /* < 3 * 2^32 */
    *lo = (mid << 32) | (uint32_t)p00;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* Uniform integer in [0, bound) without modulo bias (Lemire's multiply-and-reject). */
uint64_t ld__rng_below(ld_rng *r, uint64_t bound);

/* The generator of sample `index` in `epoch`: the transforms draw from it. */
static inline ld_rng ld__rng_sample(uint64_t seed, uint64_t epoch, uint64_t index)
{
    ld_rng r = {ld__mix64(ld__mix64(ld__mix64(seed) ^ epoch) ^ (index * 0xD1B54A32D192ED03ull))};
    return r;
}

#endif /* LD_SAMPLER_H */
