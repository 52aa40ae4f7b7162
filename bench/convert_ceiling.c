/*
 * The ceiling of `dataconv -j1` raw → HDF5: what any conversion producing the same pixels must
 * spend, with no I/O, no container and no threads. Every file is read into memory first, then
 * one thread runs, over every file in turn, exactly the pixel work of convert.c's process():
 * libdata's codec decodes with the conversion's options (3 channels, the DCT scale the resize
 * allows, EXIF orientation), and ld__resize_planar() resamples it (Lanczos-3) straight into
 * BGR CHW planes, into one reused buffer.
 *
 *   convert_ceiling SECONDS SIZE FILE.jpg...
 *
 * Runs two loops, each for at least SECONDS and at least one pass over the files:
 *   decode          the codec alone, the conversion's options (DCT scale included);
 *   decode+resize   the codec, then the resize to SIZE x SIZE (squash), as dataconv --resize SIZE.
 * Prints one JSON line: images/s and this process's CPU ms per image for each loop, and for
 * decode+resize the thread CPU ms of each of its two parts. bench/suite_convert.py puts it next
 * to libjpeg-turbo decode alone (baselines --decode-all) and dataconv -j1.
 *
 * A CMake target with -DLIBDATA_BUILD_BENCH=ON (bench/CMakeLists.txt), linked with the library's
 * object files (libdata_obj), so it calls the internal functions the converter calls; no new
 * public symbol.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "codec/codec.h"
#include "libdata/convert.h"
#include "resize/resize.h"

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct bench {
    int n;
    ld_buf *files;
    char **names;
    ld_codec *codec;
    ld_resizer *resizer;
    ld_geometry geom;
    ld_image dec;
    ld_buf out;
    double t_decode, t_resize; /* thread CPU seconds of each part (decode+resize loop) */
} bench;

/* One image, as convert.c's process() does it for raw output. */
static int one(bench *b, int k, int resize, ld_err *e)
{
    ld_img_info info;
    const ld_buf *f = &b->files[k];
    if (ld__img_info(b->codec, f->p, f->len, b->names[k], &info, e) != LD_OK) return -1;
    ld_decode_opts o = {.channels = 3, .max_pixels = (uint64_t)1 << 30, .apply_orientation = 1};
    ld__resize_min_source(&b->geom, info.w, info.h, &o.min_w, &o.min_h);
    const double t0 = resize ? clock_s(CLOCK_THREAD_CPUTIME_ID) : 0;
    if (ld__img_decode(b->codec, f->p, f->len, b->names[k], &o, &b->dec, e) != LD_OK) return -1;
    if (!resize) return 0;
    const double t1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    const int ch[3] = {2, 1, 0}; /* BGR, dataconv's default order */
    int w, h;
    if (ld__resize_planar(b->resizer, &b->dec, &b->geom, ch, &b->out, &w, &h, e) != LD_OK)
        return -1;
    const double t2 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    b->t_decode += t1 - t0;
    b->t_resize += t2 - t1;
    return 0;
}

/* Loop over the files for at least `seconds` and one pass; images/s and CPU ms per image. */
static int loop(bench *b, double seconds, int resize, double *ips, double *cpu_ms, size_t *done)
{
    ld_err e;
    for (int k = 0; k < b->n; k++) /* warm-up: buffers and coefficient caches reach their size */
        if (one(b, k, resize, &e) < 0) goto bad;
    b->t_decode = b->t_resize = 0;
    size_t i = 0;
    const double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    while (i < (size_t)b->n || clock_s(CLOCK_MONOTONIC) - t0 < seconds)
        if (one(b, (int)(i++ % (size_t)b->n), resize, &e) < 0) goto bad;
    const double dt = clock_s(CLOCK_MONOTONIC) - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    *ips = (double)i / dt;
    *cpu_ms = 1e3 * cpu / (double)i;
    *done = i;
    return 0;
bad:
    fprintf(stderr, "convert_ceiling: %s\n", e.msg);
    return -1;
}

int main(int argc, char **argv)
{
    int rc = 1;
    if (argc < 4 || atof(argv[1]) < 0 || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: %s SECONDS SIZE FILE.jpg...\n", argv[0]);
        return 2;
    }
    const double seconds = atof(argv[1]);
    bench b = {.n = argc - 3, .names = argv + 3};
    b.geom = (ld_geometry){.mode = LD_RESIZE_SQUASH, .w = atoi(argv[2]), .h = atoi(argv[2])};
    b.files = calloc((size_t)b.n, sizeof *b.files);
    b.codec = ld__codec_create();
    b.resizer = ld__resizer_create();
    if (!b.files || !b.codec || !b.resizer) {
        fprintf(stderr, "convert_ceiling: out of memory\n");
        goto done;
    }
    for (int k = 0; k < b.n; k++) {
        ld_err e;
        if (ld__read_file(b.names[k], &b.files[k], (size_t)1 << 28, &e) != LD_OK) {
            fprintf(stderr, "convert_ceiling: %s\n", e.msg);
            goto done;
        }
    }
    double d_ips, d_cpu, r_ips, r_cpu;
    size_t d_n, r_n;
    if (loop(&b, seconds, 0, &d_ips, &d_cpu, &d_n) < 0) goto done;
    if (loop(&b, seconds, 1, &r_ips, &r_cpu, &r_n) < 0) goto done;
    printf("{\"files\": %d, \"size\": %d, \"decode_images\": %zu, \"decode_ips\": %.1f, "
           "\"decode_cpu_ms\": %.4f, \"decode_resize_images\": %zu, \"decode_resize_ips\": %.1f, "
           "\"decode_resize_cpu_ms\": %.4f, \"part_decode_cpu_ms\": %.4f, "
           "\"part_resize_cpu_ms\": %.4f}\n",
           b.n, b.geom.w, d_n, d_ips, d_cpu, r_n, r_ips, r_cpu, 1e3 * b.t_decode / (double)r_n,
           1e3 * b.t_resize / (double)r_n);
    rc = 0;
done:
    for (int k = 0; b.files && k < b.n; k++)
        ld__buf_free(&b.files[k]);
    free(b.files);
    ld__image_free(&b.dec);
    ld__buf_free(&b.out);
    ld__resizer_free(b.resizer);
    ld__codec_free(b.codec);
    return rc;
}
