/*
 * Epoch orders, one position at a time. The order is the same on every rank (it depends on
 * seed and epoch only); rank r takes positions [r * share, (r + 1) * share), so shares are
 * disjoint and equal, and the n mod world positions at the end are skipped that epoch.
 *
 * A shuffle is a keyed bijection of [0, n) evaluated at each position instead of a
 * Fisher-Yates array: 8 bytes per sample (800 MB for 10^8 samples) become nothing, and any
 * worker can compute any batch's indices on its own.
 *
 *  - Shuffle: sample = P(position), P a bijection of [0, n).
 *  - Block shuffle: blocks (storage chunks of `block` samples; the last may be short) are
 *    permuted by a bijection Q of [0, nb); the permuted blocks are laid out in order and cut
 *    into windows of `window` blocks; each window's positions are permuted by a bijection of
 *    its own size. A window therefore reads a few whole chunks, in random order.
 *
 * The bijection: a balanced 4-round Feistel network on 2h bits (2^2h >= n), with a 64-bit mix
 * of (key, round, half) as round function, cycle-walked into [0, n): a value >= n is
 * encrypted again until it lands below n, which permutes [0, n) (Black and Rogaway, 2002).
 * Less than 3/4 of the domain lies at or above n, so a walk averages at most 4 steps.
 */
#include "reader/sampler.h"

#include "libdata/reader.h"

uint64_t ld__rng_below(ld_rng *r, uint64_t bound)
{
    if (bound <= 1) return 0;
    uint64_t lo, hi = ld__mul64(ld__rng_next(r), bound, &lo);
    if (lo < bound) {
        uint64_t t = -bound % bound;
        while (lo < t)
            hi = ld__mul64(ld__rng_next(r), bound, &lo);
    }
    return hi;
}

static ld_perm perm_make(uint64_t n, uint64_t key)
{
    unsigned h = 1;
    while (h < 32 && ((uint64_t)1 << (2 * h)) < n)
        h++;
    return (ld_perm){n, key, ((uint64_t)1 << h) - 1, h};
}

static inline uint64_t round_fn(const ld_perm *p, unsigned r, uint64_t half)
{
    return ld__mix64(p->key + ((half << 2) | r)) & p->mask;
}

static uint64_t encrypt(const ld_perm *p, uint64_t x)
{
    uint64_t l = x >> p->h, r = x & p->mask;
    for (unsigned k = 0; k < 4; k++) {
        const uint64_t t = l ^ round_fn(p, k, r);
        l = r;
        r = t;
    }
    return l << p->h | r;
}

static uint64_t decrypt(const ld_perm *p, uint64_t y)
{
    uint64_t l = y >> p->h, r = y & p->mask;
    for (unsigned k = 4; k-- > 0;) {
        const uint64_t t = r ^ round_fn(p, k, l);
        r = l;
        l = t;
    }
    return l << p->h | r;
}

/* The image of x < n, and its inverse. */
static uint64_t perm_at(const ld_perm *p, uint64_t x)
{
    if (p->n < 2) return x;
    do
        x = encrypt(p, x);
    while (x >= p->n);
    return x;
}

static uint64_t perm_inv(const ld_perm *p, uint64_t y)
{
    if (p->n < 2) return y;
    do
        y = decrypt(p, y);
    while (y >= p->n);
    return y;
}

/* The sample at global position g of a block-shuffled epoch. */
static uint64_t block_at(const ld_epoch_order *o, uint64_t g)
{
    const ld_sampler *s = &o->s;
    const uint64_t n = s->n, b = s->block ? s->block : 1, win = s->window ? s->window : 1;
    const uint64_t nb = o->perm.n, last = n - (nb - 1) * b, d = b - last;
    /* Window ws holds the short last block, d samples short; later windows start d earlier. */
    const uint64_t ws = o->short_pos / win, wbytes = win * b;
    uint64_t j, start;
    if (g < (ws + 1) * wbytes - d) {
        j = g / wbytes;
        start = j * wbytes;
    } else {
        j = (g + d) / wbytes;
        start = j * wbytes - d;
    }
    const uint64_t cnt = nb - j * win < win ? nb - j * win : win;
    const uint64_t size = cnt * b - (j == ws ? d : 0);
    const ld_perm w = perm_make(size, ld__mix64(o->key ^ (j * 0xD1B54A32D192ED03ull + 2)));
    const uint64_t t = perm_at(&w, g - start);
    /* Position t inside the window -> (block m of the window, offset). */
    uint64_t m = t / b, off = t % b;
    if (j == ws) {
        const uint64_t ms = o->short_pos - j * win;
        if (t >= ms * b + last) {
            m = ms + 1 + (t - ms * b - last) / b;
            off = (t - ms * b - last) % b;
        } else if (t >= ms * b) {
            m = ms;
            off = t - ms * b;
        }
    }
    return perm_at(&o->perm, j * win + m) * b + off;
}

void ld__sampler_epoch(const ld_sampler *s, uint64_t epoch, ld_epoch_order *o)
{
    *o = (ld_epoch_order){.s = *s};
    o->key = ld__mix64(ld__mix64(s->seed ^ 0x5A3C1E7Du) + epoch);
    if (s->order == LD_ORDER_SHUFFLE) {
        o->perm = perm_make(s->n, o->key);
    } else if (s->order == LD_ORDER_BLOCK_SHUFFLE && s->n >= 2) {
        const uint64_t b = s->block ? s->block : 1, nb = (s->n + b - 1) / b;
        o->perm = perm_make(nb, ld__mix64(o->key ^ 1));
        o->short_pos = perm_inv(&o->perm, nb - 1);
    }
}

uint64_t ld__sampler_at(const ld_epoch_order *o, uint64_t k)
{
    const ld_sampler *s = &o->s;
    const uint64_t g = s->rank * ld__sampler_share(s) + k;
    if (s->order == LD_ORDER_SEQUENTIAL || s->n < 2) return g;
    if (s->order == LD_ORDER_SHUFFLE) return perm_at(&o->perm, g);
    return block_at(o, g);
}
