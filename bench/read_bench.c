/*
 * read_bench: stream batches from a dataset through the public reader API and print one JSON
 * line: samples/s, MB/s, milliseconds per batch and peak RSS. A user of the API only (the
 * logic `dataconv bench` wraps).
 *
 *   read_bench FILE [batch B] [order 0|1|2] [threads T] [epochs E] [dtype 0|1] [crop W H]
 *              [prefetch P] [budget BYTES] [dct 0|1] [warm 0|1]
 *
 * With warm 1 (default) one untimed epoch runs first: the page cache is warm and the ring
 * touched, as in a training loop's steady state.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libdata/reader.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int epoch(ld_reader *r, size_t *n, size_t *bytes, size_t *batches, uint64_t *sum)
{
    const ld_batch *b;
    int rc;
    while ((rc = ld_reader_next(r, &b)) == LD_OK) {
        *n += b->n;
        *bytes += b->data_bytes;
        (*batches)++;
        /* touch the batch as a consumer would (one byte per 4 KiB page) */
        const unsigned char *p = b->data;
        for (size_t k = 0; k < b->data_bytes; k += 4096)
            *sum += p[k];
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [batch B] [order O] [threads T] [epochs E] [dtype D] "
                        "[crop W H] [prefetch P] [budget BYTES] [dct 0|1] [warm 0|1]\n",
                argv[0]);
        return 2;
    }
    ld_reader *r = ld_reader_create();
    int epochs = 1, warm = 1;
    for (int k = 2; k + 1 < argc; k += 2) {
        const char *key = argv[k];
        long long v = atoll(argv[k + 1]);
        int rc = LD_OK;
        if (!strcmp(key, "batch"))
            rc = ld_reader_set(r, LD_R_BATCH_SIZE, v);
        else if (!strcmp(key, "order"))
            rc = ld_reader_set(r, LD_R_ORDER, v);
        else if (!strcmp(key, "threads"))
            rc = ld_reader_set(r, LD_R_THREADS, v);
        else if (!strcmp(key, "dtype"))
            rc = ld_reader_set(r, LD_R_DTYPE, v);
        else if (!strcmp(key, "prefetch"))
            rc = ld_reader_set(r, LD_R_PREFETCH, v);
        else if (!strcmp(key, "budget"))
            rc = ld_reader_set(r, LD_R_MEMORY_BUDGET, v);
        else if (!strcmp(key, "dct"))
            rc = ld_reader_set(r, LD_R_DCT_SCALE, v);
        else if (!strcmp(key, "epochs"))
            epochs = (int)v;
        else if (!strcmp(key, "warm"))
            warm = (int)v;
        else if (!strcmp(key, "crop") && k + 2 < argc) {
            rc = ld_reader_set(r, LD_R_CROP_W, v);
            if (rc == LD_OK)
                rc = ld_reader_set(r, LD_R_CROP_H, atoll(argv[k + 2]));
            k++;
        } else {
            fprintf(stderr, "unknown option %s\n", key);
            return 2;
        }
        if (rc < 0) {
            fprintf(stderr, "%s\n", ld_reader_errmsg(r));
            return 1;
        }
    }
    double t0 = now();
    if (ld_reader_open(r, argv[1]) < 0) {
        fprintf(stderr, "%s\n", ld_reader_errmsg(r));
        return 1;
    }
    double t_open = now() - t0;
    size_t n = 0, bytes = 0, batches = 0;
    uint64_t sum = 0;
    int rc = LD_END;
    if (warm)
        rc = epoch(r, &n, &bytes, &batches, &sum);
    n = bytes = batches = 0;
    t0 = now();
    for (int e = 0; e < epochs && rc == LD_END; e++)
        rc = epoch(r, &n, &bytes, &batches, &sum);
    double dt = now() - t0;
    if (rc != LD_END) {
        fprintf(stderr, "%s\n", ld_reader_errmsg(r));
        return 1;
    }
    int64_t threads = 0, prefetch = 0, mem = 0;
    ld_reader_get(r, LD_R_INFO_THREADS, &threads);
    ld_reader_get(r, LD_R_INFO_PREFETCH, &prefetch);
    ld_reader_get(r, LD_R_INFO_MEMORY, &mem);
    ld_reader_free(r);
    /* VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss across exec, so a benchmark
     * started by a big Python process would report the parent's peak. */
    double hwm = 0;
    FILE *st = fopen("/proc/self/status", "r");
    char line[256];
    while (st && fgets(line, sizeof line, st))
        if (!strncmp(line, "VmHWM:", 6))
            hwm = atof(line + 6) / 1024.0;
    if (st)
        fclose(st);
    printf("{\"samples\": %zu, \"seconds\": %.4f, \"samples_per_s\": %.1f, \"MB_per_s\": %.1f, "
           "\"ms_per_batch\": %.3f, \"open_s\": %.3f, \"threads\": %lld, \"prefetch\": %lld, "
           "\"reader_bytes\": %lld, \"peak_rss_MB\": %.1f, \"checksum\": %llu}\n",
           n, dt, n / dt, bytes / dt / 1e6, batches ? dt * 1e3 / batches : 0.0, t_open,
           (long long)threads, (long long)prefetch, (long long)mem, hwm,
           (unsigned long long)sum);
    return 0;
}
