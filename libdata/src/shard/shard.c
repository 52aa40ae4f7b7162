/*
 * Shards: part names, ranges and the run_id (shard.h; the contract is in h5_format.h).
 *
 * run_id = FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over, in order:
 *   "libdata-shard-1\n"
 *   for each setting that changes the output's samples: "<name>=<decimal value>\n"
 *     (the converter passes: format, encoded, keep_original, encode_png, quality, resize_w,
 *     resize_h, resize_mode, pad_value, channels, channel_order, check_size, shuffle, seed
 *     (0 unless shuffled), flat, list_mode, max_pixels, deflate)
 *   "parts=<N>\n" "listed=<L>\n"
 *   each class name followed by a NUL byte, then "\n"
 *   for each listed sample in the listing's order: its relative path, a NUL byte, the label
 *     in decimal, "\n".
 * FNV-1a is not a cryptographic hash: the run_id tells apart runs that differ by mistake
 * (another option, a file added to the input), which is what resume and merge need. Hashing
 * 1.3 M paths (about 40 MB of text) takes ~0.1 s, next to the seconds the listing takes.
 */
#include "shard/shard.h"
#include "store/part_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/shard.h"

#define FNV_BASIS 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= FNV_PRIME;
    }
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return fnv(h, s, strlen(s));
}

static uint64_t fnv_printf(uint64_t h, const char *fmt, const char *name, long long v)
{
    char line[128];
    int n = snprintf(line, sizeof line, fmt, name, v);
    return fnv(h, line, n > 0 ? (size_t)n : 0);
}

void ld__shard_run_id(const ld_shard_setting *set, size_t nset, unsigned n, const ld_source *src,
                      char out[17])
{
    uint64_t h = fnv_str(FNV_BASIS, "libdata-shard-1\n");
    for (size_t i = 0; i < nset; i++)
        h = fnv_printf(h, "%s=%lld\n", set[i].name, (long long)set[i].value);
    const size_t total = ld__source_count(src);
    h = fnv_printf(h, "%s=%lld\n", "parts", (long long)n);
    h = fnv_printf(h, "%s=%lld\n", "listed", (long long)total);
    for (size_t i = 0; i < ld__source_class_count(src); i++) {
        const char *name = ld__source_class_name(src, i);
        h = fnv(h, name, strlen(name) + 1);
    }
    h = fnv(h, "\n", 1);
    /* label vectors: their count and type, and every item's values (bytes, fixed width) */
    const uint32_t lk = ld__source_label_count(src);
    uint8_t vec[4 * 4096];
    if (lk && lk <= 4096) {
        h = fnv_printf(h, "%s=%lld\n", "label_count", (long long)lk);
        h = fnv_printf(h, "%s=%lld\n", "label_type", (long long)ld__source_label_type(src));
    }
    for (size_t i = 0; i < total; i++) {
        const char *rel = ld__source_rel(src, i);
        char label[16];
        int k = snprintf(label, sizeof label, "%ld\n", (long)ld__source_label(src, i));
        h = fnv(h, rel, strlen(rel) + 1);
        h = fnv(h, label, (size_t)k);
        if (lk && lk <= 4096 && ld__source_values(src, i, vec) == LD_OK)
            for (uint32_t v = 0; v < lk; v++) { /* little-endian on every machine */
                uint32_t bits;
                memcpy(&bits, vec + 4 * v, 4);
                const uint8_t le[4] = {(uint8_t)bits, (uint8_t)(bits >> 8), (uint8_t)(bits >> 16),
                                       (uint8_t)(bits >> 24)};
                h = fnv(h, le, 4);
            }
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* floor(t * k / n) without overflow: t = q*n + r gives q*k + floor(r*k / n), and r*k < n*n
 * fits in 64 bits for any n <= LD_SHARD_MAX. */
static uint64_t scaled(uint64_t t, uint64_t k, uint64_t n)
{
    return t / n * k + t % n * k / n;
}

void ld__shard_range(uint64_t total, unsigned k, unsigned n, uint64_t *first, uint64_t *count)
{
    const uint64_t lo = scaled(total, k, n), hi = scaled(total, (uint64_t)k + 1, n);
    *first = lo;
    *count = hi - lo;
}

/* The first recorded setting that differs from this run's, as "quality 70 (this run: 90)",
 * into buf; "" when they all agree. */
static void first_difference(const ld_desc *have, const ld_desc *want, char *buf, size_t cap)
{
    char hv[128], wv[128];
    const char *name = ld__desc_first_difference(have, want, hv, wv, sizeof hv);
    buf[0] = '\0';
    if (name) snprintf(buf, cap, "%s %s (this run: %s)", name, hv, wv);
}

static const char next[] = "remove it to convert this part again, or run with the options it "
                           "was made with (nothing was written)";

/* The complete dataset `h` at part_path against the part this run makes: LD_OK when it is
 * that part, else LD_EINVAL saying what differs (diff[cap] is scratch). */
static int check_part(const char *part_path, const ld_desc *h, const ld_shard_info *want,
                      const ld_desc *expect, char *diff, size_t cap, ld_err *e)
{
    if (h->merged)
        return ld__err(e, LD_EINVAL, "%s exists but is a merged dataset, not a part; %s", part_path,
                       next);
    if (!h->shard_count)
        return ld__err(e, LD_EINVAL,
                       "%s exists but is not a shard part (no shard attributes: a single run's "
                       "output?); %s",
                       part_path, next);
    if (h->shard_count != want->count)
        return ld__err(e, LD_EINVAL, "%s is part %u of %u parts, this run makes %u parts; %s",
                       part_path, h->shard_index, h->shard_count, want->count, next);
    if (h->shard_index != want->index)
        return ld__err(e, LD_EINVAL, "%s holds part %u, not part %u (a renamed file?); %s",
                       part_path, h->shard_index, want->index, next);
    if (strcmp(h->run_id, want->run_id)) {
        first_difference(h, expect, diff, cap);
        if (!diff[0] && h->listing_total != want->total)
            snprintf(diff, cap,
                     "a listing of %llu samples (this run lists %llu: the "
                     "input changed)",
                     (unsigned long long)h->listing_total, (unsigned long long)want->total);
        return ld__err(e, LD_EINVAL,
                       "%s is from another run (run_id %s, this run %s): it was made with %s; %s",
                       part_path, h->run_id, want->run_id,
                       diff[0] ? diff
                               : "other settings or another input listing (file names, labels, "
                                 "order, shuffle seed, or a setting not recorded in the file)",
                       next);
    }
    if (h->shard_first != want->first || h->shard_listed != want->listed ||
        h->listing_total != want->total)
        return ld__err(e, LD_EINVAL,
                       "%s has the run's run_id but covers samples %llu..%llu of %llu, not "
                       "%llu..%llu of %llu (damaged attributes?); %s",
                       part_path, (unsigned long long)h->shard_first,
                       (unsigned long long)(h->shard_first + h->shard_listed),
                       (unsigned long long)h->listing_total, (unsigned long long)want->first,
                       (unsigned long long)(want->first + want->listed),
                       (unsigned long long)want->total, next);
    return LD_OK;
}

int ld__shard_resume_check(const char *part_path, int lmdb, const ld_shard_info *want,
                           const ld_desc *expect, int *complete, ld_err *e)
{
    ld_desc have;
    ld_err why;
    char diff[300];
    *complete = 0;
    ld__err_clear(&why);
    int rc = ld__part_read(part_path, lmdb, &have, &why);
    if (rc == LD_END) {
        rc = LD_OK; /* nothing there: convert */
    } else if (rc == LD_OK) {
        rc = check_part(part_path, &have, want, expect, diff, sizeof diff, e);
        *complete = rc == LD_OK;
    } else if (rc == LD_EFORMAT) {
        rc = ld__err(e, LD_EINVAL, "%s exists but is not a complete libdata part (%s); %s",
                     part_path, why.msg, next);
    } else {
        rc = ld__err(e, rc, "%s", why.msg);
    }
    ld__desc_free(&have);
    return rc;
}
