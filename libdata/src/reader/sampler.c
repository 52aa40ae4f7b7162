/*
 * Epoch orders. The permutation is the same on every rank (it depends on seed and epoch
 * only); each rank then takes its contiguous share, so shares are disjoint and equal, and the
 * n mod world samples at the end of the permutation are skipped that epoch.
 */
#include "sampler.h"

#include "libdata/reader.h"

uint64_t ld__rng_below(ld_rng *r, uint64_t bound)
{
    if (bound <= 1)
        return 0;
    unsigned __int128 m = (unsigned __int128)ld__rng_next(r) * bound;
    uint64_t lo = (uint64_t)m;
    if (lo < bound) {
        uint64_t t = -bound % bound;
        while (lo < t) {
            m = (unsigned __int128)ld__rng_next(r) * bound;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Fisher-Yates over a[0..n). */
static void shuffle(uint64_t *a, uint64_t n, ld_rng *g)
{
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = ld__rng_below(g, i);
        uint64_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

void ld__sampler_epoch(const ld_sampler *s, uint64_t epoch, uint64_t *out)
{
    const uint64_t n = s->n, share = ld__sampler_share(s), first = s->rank * share;
    ld_rng g = {ld__mix64(ld__mix64(s->seed ^ 0x5A3C1E7Du) + epoch)};
    if (s->order == LD_ORDER_SEQUENTIAL || n < 2) {
        for (uint64_t k = 0; k < share; k++)
            out[k] = first + k;
        return;
    }
    if (s->order == LD_ORDER_SHUFFLE) {
        for (uint64_t i = 0; i < n; i++)
            out[i] = i;
        shuffle(out, n, &g);
    } else {
        /* Block shuffle: a permutation of the blocks, written out as their samples in storage
         * order, then shuffled within consecutive windows of `window` blocks. The block
         * permutation is built in the tail of `out` (block ids never outnumber samples) and
         * consumed front to back while samples fill the front. Writing never reaches an
         * unread block id: after k + 1 < nb blocks at most (k + 1) * b samples are written,
         * and (k + 1) * b <= n - nb + k + 1 because (nb - 1) * b < n. Each window is shuffled
         * as soon as its blocks are written (it lies below the read position). */
        const uint64_t b = s->block ? s->block : 1, nb = (n + b - 1) / b;
        uint64_t *perm = out + (n - nb);
        for (uint64_t k = 0; k < nb; k++)
            perm[k] = k;
        shuffle(perm, nb, &g);
        const uint64_t win = s->window ? s->window : 1;
        uint64_t w = 0, start = 0;
        for (uint64_t k = 0; k < nb; k++) {
            uint64_t blk = perm[k], lo = blk * b, hi = lo + b < n ? lo + b : n;
            for (uint64_t i = lo; i < hi; i++)
                out[w++] = i;
            if ((k + 1) % win == 0 || k + 1 == nb) { /* a window of blocks is complete */
                shuffle(out + start, w - start, &g);
                start = w;
            }
        }
    }
    if (first)
        for (uint64_t k = 0; k < share; k++)
            out[k] = out[first + k];
}
