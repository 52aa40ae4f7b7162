/*
 * The bound of the random resized crop's box decoder (issue 16 item 3): for the same boxes as
 * the reader draws (torchvision's rule, reader/rrc.c, seed 0, epoch 0, sample = file index),
 * the single-thread CPU time per image of
 *
 *   full      ld__img_decode of the whole image (what rrc_full_decode decodes)
 *   box       ld__jpeg_decode_box: only the box's rows and columns (the fast path)
 *   rrc_full  the whole transform by full decode + crop + resample (header, decode, resize)
 *   rrc_box   the whole transform through the box decoder
 *
 * so that decode alone gives X = full / box, the most the box decoder can gain, and with the
 * resampling both paths share (rrc_* minus the decode) the bound Y = rrc_full / rrc_box of
 * the reader's (a)/(b) (which adds the same batch work to both: it can only be lower).
 * Files are read into memory first: no I/O. Built with -DLIBDATA_BUILD_BENCH=ON; run by
 * bench/rrc_bench.py on its photos:
 *
 *   build/bench/rrc_rate [--seconds S] [--size N] [--only MODE] IMAGE...
 *
 * Prints one line per measure and a last line of JSON with the same figures. --only MODE runs
 * that mode alone for S seconds (for perf record) and prints its line only.
 *
 * Files with restart markers (a DRI before the scan, as dataconv --quality writes them) let the
 * box decoder cut out the box's restart segments (libdata/src/codec/jpeg_splice.c): the report
 * says how many of the files have them ("restart_files" in the JSON).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/codec.h"
#include "reader/rrc.h"

#define MAX_FILES 4096

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct bench {
    ld_codec *codec;
    ld_buf *files;
    int n, size;
    int (*box)[4]; /* each file's box */
    ld_rrc rrc_full, rrc_box;
    ld_rrc_scratch scratch;
    ld_image im;
} bench;

enum { M_FULL, M_BOX, M_RRC_FULL, M_RRC_BOX, M_COUNT };
static const char *const mode_names[M_COUNT] = {"full", "box", "rrc_full", "rrc_box"};

/* One pass of mode m over every file; exits on a decode error (the photos are valid). */
static void pass(bench *b, int m)
{
    const ld_decode_opts o = {
        .channels = 3, .max_pixels = (uint64_t)1 << 28, .apply_orientation = 1};
    ld_decode_opts bo = o;
    bo.min_w = bo.min_h = b->size;
    ld_err e;
    for (int i = 0; i < b->n; i++) {
        const uint8_t *p = b->files[i].p;
        const size_t len = b->files[i].len;
        double rect[4];
        int rc = LD_OK;
        switch (m) {
        case M_FULL: rc = ld__img_decode(b->codec, p, len, "full", &o, &b->im, &e); break;
        case M_BOX:
            rc = ld__jpeg_decode_box(b->codec, p, len, "box", &bo, b->box[i], &b->im, rect, &e);
            break;
        case M_RRC_FULL:
            rc = ld__rrc_encoded(&b->rrc_full, b->codec, &b->scratch, p, len, "rrc_full", &o, 0,
                                 (uint64_t)i, &e);
            break;
        default:
            rc = ld__rrc_encoded(&b->rrc_box, b->codec, &b->scratch, p, len, "rrc_box", &o, 0,
                                 (uint64_t)i, &e);
        }
        if (rc == LD_ENOTSUP) {
            fprintf(stderr,
                    "rrc_rate: image %d is EXIF-rotated or CMYK, which the box decoder "
                    "leaves to a full decode: give plain photos\n",
                    i);
            exit(1);
        }
        if (rc != LD_OK) {
            fprintf(stderr, "rrc_rate: %s\n", e.msg);
            exit(1);
        }
    }
}

/* 1 when the JPEG's header (up to its first SOS) has a DRI with a non-zero interval. */
static int has_restarts(const uint8_t *p, size_t len)
{
    size_t i = 2;
    while (i + 4 <= len && p[i] == 0xFF) {
        const uint8_t m = p[i + 1];
        const size_t n = (size_t)p[i + 2] << 8 | p[i + 3];
        if (m == 0xDA) return 0;
        if (m == 0xDD && n == 4 && i + 6 <= len) return (p[i + 4] | p[i + 5]) != 0;
        i += 2 + n;
    }
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, c = *(const double *)y;
    return a < c ? -1 : a > c;
}

int main(int argc, char **argv)
{
    double seconds = 2.0;
    int size = 224, a = 1, only = -1;
    for (; a + 1 < argc && argv[a][0] == '-' && argv[a][1] == '-'; a += 2) {
        if (strcmp(argv[a], "--seconds") == 0) {
            seconds = atof(argv[a + 1]);
        } else if (strcmp(argv[a], "--size") == 0) {
            size = atoi(argv[a + 1]);
        } else if (strcmp(argv[a], "--only") == 0) {
            for (int m = 0; m < M_COUNT; m++)
                if (strcmp(argv[a + 1], mode_names[m]) == 0) only = m;
            if (only < 0) {
                fprintf(stderr, "rrc_rate: --only full|box|rrc_full|rrc_box\n");
                return 2;
            }
        } else {
            break;
        }
    }
    const int n = argc - a < MAX_FILES ? argc - a : MAX_FILES;
    if (n < 1 || seconds < 0 || size < 1) {
        fprintf(stderr, "usage: %s [--seconds S] [--size N] [--only MODE] JPEG...\n", argv[0]);
        return 2;
    }
    static ld_buf files[MAX_FILES];
    static int boxes[MAX_FILES][4];
    int restart_files = 0;
    ld_err e;
    bench b = {.codec = ld__codec_create(), .files = files, .n = n, .size = size, .box = boxes};
    if (!b.codec) {
        fprintf(stderr, "rrc_rate: out of memory\n");
        return 1;
    }
    b.rrc_box = (ld_rrc){.w = size,
                         .h = size,
                         .scale = {0.08, 1.0},
                         .ratio = {3.0 / 4.0, 4.0 / 3.0},
                         .filter = LD_FILTER_BILINEAR};
    b.rrc_full = b.rrc_box;
    b.rrc_full.full_decode = 1;
    for (int i = 0; i < n; i++) {
        ld_img_info ii;
        if (ld__read_file(argv[a + i], &files[i], (size_t)1 << 28, &e) != LD_OK ||
            ld__img_info(b.codec, files[i].p, files[i].len, argv[a + i], &ii, &e) != LD_OK) {
            fprintf(stderr, "rrc_rate: %s\n", e.msg);
            return 1;
        }
        if (ii.format != LD_IMG_JPEG) {
            fprintf(stderr, "rrc_rate: %s is not a JPEG: give JPEG photos\n", argv[a + i]);
            return 1;
        }
        ld__rrc_box(&b.rrc_box, 0, (uint64_t)i, ii.w, ii.h, boxes[i]);
        restart_files += has_restarts(files[i].p, files[i].len);
    }
    /* Rounds of one pass per mode, interleaved (drifting load hits every mode alike), until
     * `seconds` of CPU time; the best round per mode: on a shared machine, other processes
     * only ever add time (cache and core contention), so the least is the steadiest figure
     * (the medians varied by 20 % between runs on the 2-core VM, the minima by a few %). */
    enum { MAX_ROUNDS = 64 };
    double t[M_COUNT][MAX_ROUNDS];
    if (only >= 0) {
        pass(&b, only);
        int passes = 0;
        const double t0 = cpu_now();
        do {
            pass(&b, only);
            passes++;
        } while (cpu_now() < t0 + seconds);
        const double u = (cpu_now() - t0) / passes / n * 1e6;
        printf("%-9s %8.1f us/image  %7.0f images/CPU-s\n", mode_names[only], u, 1e6 / u);
        goto done;
    }
    for (int m = 0; m < M_COUNT; m++)
        pass(&b, m); /* warm up: buffers and tables reach their working size */
    int rounds = 0;
    const double t_end = cpu_now() + seconds;
    do {
        for (int m = 0; m < M_COUNT; m++) {
            const double t0 = cpu_now();
            pass(&b, m);
            t[m][rounds] = (cpu_now() - t0) / n;
        }
        rounds++;
    } while (rounds < 3 || (rounds < MAX_ROUNDS && cpu_now() < t_end));
    double us[M_COUNT];
    for (int m = 0; m < M_COUNT; m++) {
        qsort(t[m], (size_t)rounds, sizeof(double), cmp_double);
        us[m] = t[m][0] * 1e6;
        printf("%-9s %8.1f us/image  %7.0f images/CPU-s\n", mode_names[m], us[m], 1e6 / us[m]);
    }
    const double x = us[M_FULL] / us[M_BOX], y = us[M_RRC_FULL] / us[M_RRC_BOX];
    const double r_full = us[M_RRC_FULL] - us[M_FULL], r_box = us[M_RRC_BOX] - us[M_BOX];
    printf("decode alone: full / box = %.2f; with the resampling (%.0f us full path, %.0f us box "
           "path): rrc_full / rrc_box = %.2f, the bound of (a)/(b)\n",
           x, r_full, r_box, y);
    printf("%d of %d files have restart markers (the box decoder splices their segments)\n",
           restart_files, n);
    printf("{\"images\": %d, \"rounds\": %d, \"size\": %d, \"full_us\": %.2f, \"box_us\": %.2f, "
           "\"rrc_full_us\": %.2f, \"rrc_box_us\": %.2f, \"decode_ratio\": %.4f, "
           "\"bound\": %.4f, \"restart_files\": %d}\n",
           n, rounds, size, us[M_FULL], us[M_BOX], us[M_RRC_FULL], us[M_RRC_BOX], x, y,
           restart_files);
done:
    ld__rrc_scratch_free(&b.scratch);
    ld__image_free(&b.im);
    ld__codec_free(b.codec);
    for (int i = 0; i < n; i++)
        ld__buf_free(&files[i]);
    return 0;
}
