/*
 * read_bench: stream batches from a dataset through the public reader API and print one JSON
 * line: samples/s, MB/s, milliseconds per batch and peak RSS. A user of the API only (the
 * logic `dataconv bench` wraps).
 *
 *   read_bench FILE [batch B] [order 0|1|2] [threads T] [epochs E] [dtype 0|1] [crop W H]
 *              [prefetch P] [budget BYTES] [dct 0|1] [layout 0|1] [mirror 0|1] [warm 0|1]
 *
 * With warm 1 (default) one untimed epoch runs first: the page cache is warm and the ring
 * touched, as in a training loop's steady state.
 *
 *   read_bench --io FILE SAMPLE_BYTES
 *
 * The access-method experiment behind h5_store.c's choice: copy the first GiB of FILE (warm
 * in the page cache) into a reused 256-sample buffer by pread per sample, pread per 6 samples
 * (one 1 MiB chunk), pread per sample in random order, and memcpy from a 64 MiB mmap window
 * slid along the file (plain, MAP_POPULATE, MADV_WILLNEED), and random memcpy from a mapping
 * of the whole range (which a bounded address space does not allow). Prints GB/s for each.
 *
 *   read_bench --decode SECONDS FILE.jpg...
 *
 * The baseline for encoded reading: plain libjpeg-turbo (jpeg_read_scanlines into a reused
 * RGB buffer, default settings), one thread, the files held in memory; prints images/s.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jpeglib.h>

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

static int io_experiment(const char *path, size_t sb)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || sb == 0)
        return 1;
    const size_t nbuf = 256, win = (size_t)64 << 20;
    size_t total = (size_t)st.st_size < ((size_t)1 << 30) ? (size_t)st.st_size : (size_t)1 << 30;
    total = total / win * win;
    const size_t n = total / sb;
    unsigned char *buf = malloc(nbuf * sb);
    size_t *idx = malloc(n * sizeof(size_t));
    if (!buf || !idx || n < 2)
        return 1;
    memset(buf, 1, nbuf * sb);
    uint64_t x = 88172645463325252ull; /* xorshift: a fixed random order */
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t j = x % (i + 1), t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    for (int rep = 0; rep < 2; rep++) {
        double t = now();
        for (size_t i = 0; i < n; i++)
            if (pread(fd, buf + (i % nbuf) * sb, sb, (off_t)(i * sb)) < 0)
                return 1;
        printf("pread per sample, sequential:   %6.2f GB/s\n", n * sb / (now() - t) / 1e9);
        t = now();
        for (size_t i = 0; i + 6 <= n; i += 6)
            if (pread(fd, buf + (i % (nbuf - 6)) * sb, 6 * sb, (off_t)(i * sb)) < 0)
                return 1;
        printf("pread per 6 samples, sequential: %5.2f GB/s\n", n * sb / (now() - t) / 1e9);
        t = now();
        for (size_t i = 0; i < n; i++)
            if (pread(fd, buf + (i % nbuf) * sb, sb, (off_t)(idx[i] * sb)) < 0)
                return 1;
        printf("pread per sample, random:       %6.2f GB/s\n", n * sb / (now() - t) / 1e9);
        for (int mode = 0; mode < 3; mode++) {
            t = now();
            size_t done = 0;
            for (size_t off = 0; off < total; off += win) {
                unsigned char *m = mmap(NULL, win, PROT_READ,
                                        MAP_SHARED | (mode == 1 ? MAP_POPULATE : 0), fd,
                                        (off_t)off);
                if (m == MAP_FAILED)
                    return 1;
                if (mode == 2)
                    madvise(m, win, MADV_WILLNEED);
                for (size_t s = 0; s + sb <= win; s += sb, done++)
                    memcpy(buf + (done % nbuf) * sb, m + s, sb);
                munmap(m, win);
            }
            printf("mmap 64 MiB window%-13s: %5.2f GB/s\n",
                   mode == 1 ? " POPULATE" : mode == 2 ? " WILLNEED" : "",
                   done * sb / (now() - t) / 1e9);
        }
        unsigned char *m = mmap(NULL, total, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            return 1;
        t = now();
        for (size_t i = 0; i < n; i++)
            memcpy(buf + (i % nbuf) * sb, m + idx[i] * sb, sb);
        printf("mmap whole range, random memcpy: %5.2f GB/s\n\n", n * sb / (now() - t) / 1e9);
        munmap(m, total);
    }
    free(buf);
    free(idx);
    close(fd);
    return 0;
}

static int decode_baseline(double seconds, int nfiles, char **files)
{
    unsigned char *data[64];
    unsigned long len[64];
    int n = nfiles < 64 ? nfiles : 64;
    for (int k = 0; k < n; k++) {
        FILE *f = fopen(files[k], "rb");
        if (!f)
            return 1;
        fseek(f, 0, SEEK_END);
        len[k] = (unsigned long)ftell(f);
        fseek(f, 0, SEEK_SET);
        data[k] = malloc(len[k]);
        if (!data[k] || fread(data[k], 1, len[k], f) != len[k])
            return 1;
        fclose(f);
    }
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr jerr;
    d.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&d);
    unsigned char *px = NULL;
    size_t cap = 0, done = 0;
    double t0 = now();
    while (now() - t0 < seconds || done < (size_t)n) {
        int k = (int)(done % (size_t)n);
        jpeg_mem_src(&d, data[k], len[k]);
        jpeg_read_header(&d, TRUE);
        d.out_color_space = JCS_RGB;
        jpeg_start_decompress(&d);
        size_t row = (size_t)d.output_width * d.output_components;
        if (row * d.output_height > cap) {
            cap = row * d.output_height;
            px = realloc(px, cap);
            memset(px, 0, cap);
        }
        while (d.output_scanline < d.output_height) {
            JSAMPROW r = px + row * d.output_scanline;
            jpeg_read_scanlines(&d, &r, 1);
        }
        jpeg_finish_decompress(&d);
        done++;
    }
    double dt = now() - t0;
    jpeg_destroy_decompress(&d);
    printf("{\"images\": %zu, \"seconds\": %.3f, \"images_per_s\": %.1f}\n", done, dt,
           done / dt);
    free(px);
    for (int k = 0; k < n; k++)
        free(data[k]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--decode"))
        return decode_baseline(atof(argv[2]), argc - 3, argv + 3);
    if (argc == 4 && !strcmp(argv[1], "--io"))
        return io_experiment(argv[2], (size_t)atoll(argv[3]));
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
            rc = ld_reader_set(r, LD_R_ORDER, LD_ORDER_SEQUENTIAL + v); /* 0 seq, 1, 2 */
        else if (!strcmp(key, "threads"))
            rc = ld_reader_set(r, LD_R_THREADS, v);
        else if (!strcmp(key, "dtype"))
            rc = ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_U8 + v); /* 0 u8, 1 f32 */
        else if (!strcmp(key, "prefetch"))
            rc = ld_reader_set(r, LD_R_PREFETCH, v);
        else if (!strcmp(key, "budget"))
            rc = ld_reader_set(r, LD_R_MEMORY_BUDGET, v);
        else if (!strcmp(key, "layout"))
            rc = ld_reader_set(r, LD_R_LAYOUT, LD_LAYOUT_NCHW + v); /* 0 NCHW, 1 NHWC */
        else if (!strcmp(key, "mirror"))
            rc = ld_reader_set(r, LD_R_MIRROR, v);
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
    ld_reader_get_info(r, LD_R_INFO_THREADS, &threads);
    ld_reader_get_info(r, LD_R_INFO_PREFETCH, &prefetch);
    ld_reader_get_info(r, LD_R_INFO_MEMORY, &mem);
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
