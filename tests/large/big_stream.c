/*
 * Stream a large dataset made by tests/large/make_big_h5.py through the reader in shuffled
 * batches and check it: every sample exactly once per epoch, every byte and label as
 * big_pattern.h says. Prints checksums (of the delivered order, and of the content) that must
 * be equal in every build (32- and 64-bit), the time, and the process's peak resident memory
 * (VmHWM) and peak address space (VmPeak) from /proc/self/status.
 *
 *   big_stream FILE.h5 [BATCH [MEMORY_BUDGET_BYTES]]
 * Exit 0 when everything checks, 1 otherwise (the first problems are printed).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libdata/reader.h>

#include "big_pattern.h"

static void print_status(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key))) fputs(line, stdout);
    if (f) fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s FILE.h5 [BATCH [MEMORY_BUDGET_BYTES]]\n", argv[0]);
        return 2;
    }
    const long long batch = argc > 2 ? atoll(argv[2]) : 256;
    const long long budget = argc > 3 ? atoll(argv[3]) : 64ll << 20;
    uint8_t *base = malloc(2 * LD_BIG_PERIOD);
    ld_reader *r = ld_reader_create();
    if (!base || !r) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (uint64_t k = 0; k < 2 * LD_BIG_PERIOD; k++)
        base[k] = ld_big_base(k);
    if (ld_reader_set(r, LD_R_BATCH_SIZE, batch) < 0 ||
        ld_reader_set(r, LD_R_ORDER, LD_ORDER_SHUFFLE) < 0 ||
        ld_reader_set(r, LD_R_SEED, 20260) < 0 || ld_reader_set(r, LD_R_THREADS, 2) < 0 ||
        ld_reader_set(r, LD_R_MEMORY_BUDGET, budget) < 0) {
        fprintf(stderr, "parameters: %s\n", ld_reader_errmsg(r));
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = ld_reader_open(r, argv[1]);
    if (rc < 0) {
        fprintf(stderr, "open: %s\n", ld_reader_errmsg(r));
        return 1;
    }
    int64_t n = 0;
    ld_reader_get_info(r, LD_R_INFO_SAMPLES, &n);
    unsigned char *seen = calloc((size_t)(n / 8 + 1), 1);
    if (!seen) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    uint64_t order_hash = 1469598103934665603ull, content_sum = 0, count = 0, bytes = 0;
    unsigned long bad = 0;
    const ld_batch *b;
    while ((rc = ld_reader_next(r, &b)) == LD_OK) {
        const size_t s = (size_t)b->c * (size_t)b->h * (size_t)b->w;
        for (size_t j = 0; j < b->n; j++) {
            const uint64_t i = b->indices[j];
            const uint8_t *px = (const uint8_t *)b->data + j * s;
            const int32_t label = ((const int32_t *)b->labels)[j];
            uint64_t stamp;
            memcpy(&stamp, px, 8); /* little-endian machines (x86, ARM as Debian runs it) */
            if ((int64_t)i >= n || (seen[i / 8] >> (i % 8) & 1) || stamp != i ||
                label != ld_big_label(i) || memcmp(px + 8, base + ld_big_offset(i), s - 8)) {
                if (bad++ < 10)
                    fprintf(stderr, "sample %" PRIu64 ": %s\n", i,
                            (int64_t)i >= n                ? "index out of range"
                            : (seen[i / 8] >> (i % 8) & 1) ? "delivered twice"
                            : stamp != i                   ? "wrong index stamp"
                            : label != ld_big_label(i)     ? "wrong label"
                                                           : "wrong pixels");
                continue;
            }
            seen[i / 8] |= (unsigned char)(1u << (i % 8));
            order_hash = (order_hash ^ i) * 1099511628211ull;
            /* a content hash per sample (64-bit words), summed: independent of the order */
            uint64_t h = 14695981039346656037ull ^ (uint64_t)label;
            for (size_t k = 0; k + 8 <= s; k += 8) {
                uint64_t w;
                memcpy(&w, px + k, 8);
                h = (h ^ w) * 1099511628211ull;
            }
            content_sum += h;
            count++;
            bytes += s;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc < 0) {
        fprintf(stderr, "read: %s\n", ld_reader_errmsg(r));
        bad++;
    }
    if ((int64_t)count != n) {
        fprintf(stderr, "%" PRIu64 " of %" PRId64 " samples delivered once\n", count, n);
        bad++;
    }
    int64_t mem = 0;
    ld_reader_get_info(r, LD_R_INFO_MEMORY, &mem);
    const double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("pointer bits: %d\n", (int)(8 * sizeof(void *)));
    printf("samples: %" PRIu64 " of %" PRId64 ", bytes: %" PRIu64
           " (%.2f GiB) in %.1f s (%.0f MiB/s)\n",
           count, n, bytes, (double)bytes / (1u << 30), secs, (double)bytes / (1 << 20) / secs);
    printf("order checksum: %016" PRIx64 "\ncontent checksum: %016" PRIx64 "\n", order_hash,
           content_sum);
    printf("reader memory: %" PRId64 " bytes\n", mem);
    print_status("VmPeak");
    print_status("VmHWM");
    ld_reader_free(r);
    free(seen);
    free(base);
    if (bad) fprintf(stderr, "FAIL: %lu problems\n", bad);
    return bad ? 1 : 0;
}
