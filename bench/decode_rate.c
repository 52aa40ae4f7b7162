/*
 * Single-thread decode rate of the codec on real photos, per output mode and per DCT scale.
 * Built with -DLIBDATA_BUILD_BENCH=ON (bench/CMakeLists.txt); run after make_fixtures.py:
 *
 *   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DLIBDATA_BUILD_BENCH=ON
 *   cmake --build build-bench --target decode_rate
 *   build-bench/bench/decode_rate build/testdata/photos/p??.jpg
 *
 * Files are read into memory first, so this measures decoding only (no I/O).
 */
#include <stdio.h>
#include <stdlib.h>

#include "codec/codec.h"

#define MAX_FILES 256
#define REPS 20

static double rate(ld_codec *c, ld_buf *b, int n, const ld_decode_opts *o, ld_image *im)
{
    ld_err e;
    for (int i = 0; i < n; i++) /* warm up: buffers reach their working size */
        ld__img_decode(c, b[i].p, b[i].len, "warmup", o, im, &e);
    const double t0 = ld__now();
    for (int r = 0; r < REPS; r++)
        for (int i = 0; i < n; i++)
            if (ld__img_decode(c, b[i].p, b[i].len, "bench", o, im, &e) != LD_OK) {
                fprintf(stderr, "%s\n", e.msg);
                exit(1);
            }
    return (ld__now() - t0) / (REPS * n);
}

int main(int argc, char **argv)
{
    static ld_buf b[MAX_FILES];
    const int n = argc - 1 < MAX_FILES ? argc - 1 : MAX_FILES;
    ld_err e;
    if (n < 1) {
        fprintf(stderr, "usage: %s IMAGE...\n", argv[0]);
        return 2;
    }
    for (int i = 0; i < n; i++)
        if (ld__read_file(argv[i + 1], &b[i], (size_t)1 << 28, &e) != LD_OK) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
    ld_codec *c = ld__codec_create();
    ld_image im = {0};
    const struct {
        const char *what;
        int ch, min_w, min_h;
    } modes[] = {{"RGB, full size", 3, 0, 0},
                 {"gray, full size", 1, 0, 0},
                 {"RGB, at least 227x227", 3, 227, 227},
                 {"RGB, at least 112x112", 3, 112, 112}};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        const ld_decode_opts o = {.channels = modes[m].ch,
                                  .min_w = modes[m].min_w,
                                  .min_h = modes[m].min_h,
                                  .apply_orientation = 1};
        const double t = rate(c, b, n, &o, &im);
        printf("%-24s %6.0f images/s  %.3f ms/image (last %dx%d)\n", modes[m].what, 1 / t, 1000 * t,
               im.w, im.h);
    }
    ld__image_free(&im);
    ld__codec_free(c);
    for (int i = 0; i < n; i++)
        ld__buf_free(&b[i]);
    return 0;
}
