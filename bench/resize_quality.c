/*
 * Driver for bench/resize_quality.py: runs libdata's resizer on raw pixels.
 *
 *   resize_quality MODE W H            < in.px > out.px   resize one image
 *   resize_quality --time MODE W H N   < in.px            time N resizes (one resizer, warm)
 *
 * MODE is squash, crop, pad or max. A .px stream is "LDPX" + little-endian uint32 width,
 * height, channels, then HWC uint8 pixels (tests/data/fixtures_resize.py writes the same).
 * A CMake target with -DLIBDATA_BUILD_BENCH=ON (BUILD/bench/resize_quality), which
 * resize_quality.py runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libdata/convert.h"
#include "resize/resize.h"

static int read_px(FILE *f, ld_image *im)
{
    unsigned char h[16];
    if (fread(h, 1, 16, f) != 16 || memcmp(h, "LDPX", 4) != 0) return -1;
    uint32_t d[3];
    for (int i = 0; i < 3; i++)
        d[i] = h[4 + 4 * i] | h[5 + 4 * i] << 8 | h[6 + 4 * i] << 16 | (uint32_t)h[7 + 4 * i] << 24;
    if (ld__image_alloc(im, (int)d[0], (int)d[1], (int)d[2]) != LD_OK) return -1;
    const size_t n = (size_t)d[0] * d[1] * d[2];
    return fread(im->px, 1, n, f) == n ? 0 : -1;
}

static int write_px(FILE *f, const ld_image *im)
{
    unsigned char h[16] = {'L', 'D', 'P', 'X'};
    const uint32_t d[3] = {(uint32_t)im->w, (uint32_t)im->h, (uint32_t)im->c};
    for (int i = 0; i < 3; i++)
        for (int b = 0; b < 4; b++)
            h[4 + 4 * i + b] = (unsigned char)(d[i] >> (8 * b));
    const size_t n = (size_t)im->w * im->h * im->c;
    return fwrite(h, 1, 16, f) == 16 && fwrite(im->px, 1, n, f) == n ? 0 : -1;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const int timing = argc > 1 && strcmp(argv[1], "--time") == 0;
    char **a = argv + timing;
    if (argc - timing < 4 || (timing && argc < 6)) {
        fprintf(stderr, "usage: %s [--time] squash|crop|pad|max W H [N] < in.px > out.px\n",
                argv[0]);
        return 2;
    }
    static const char *modes[] = {"squash", "crop", "pad", "max"};
    ld_geometry g = {.mode = -1, .w = atoi(a[2]), .h = atoi(a[3])};
    for (int i = 0; i < 4; i++)
        if (strcmp(a[1], modes[i]) == 0)
            g.mode = LD_RESIZE_SQUASH + i; /* ld_resize_mode values, in the order of modes[] */
    ld_image src = {0}, dst = {0};
    ld_err e = {0};
    ld_resizer *r = ld__resizer_create();
    if (!r || read_px(stdin, &src) < 0) {
        fprintf(stderr, "resize_quality: cannot read a .px image on stdin\n");
        return 1;
    }
    int rc = ld__resize(r, &src, &g, &dst, &e);
    if (rc == LD_OK && timing) {
        const int n = atoi(a[4]);
        double best = 1e9, total = 0;
        for (int i = 0; i < n && rc == LD_OK; i++) {
            const double t0 = now();
            rc = ld__resize(r, &src, &g, &dst, &e);
            const double t = now() - t0;
            total += t;
            if (t < best) best = t;
        }
        printf("%dx%dx%d -> %dx%d %s: mean %.1f us, best %.1f us over %d runs\n", src.w, src.h,
               src.c, dst.w, dst.h, a[1], total / n * 1e6, best * 1e6, n);
    } else if (rc == LD_OK && write_px(stdout, &dst) < 0) {
        fprintf(stderr, "resize_quality: write failed\n");
        rc = LD_EIO;
    }
    if (rc < 0) fprintf(stderr, "resize_quality: %s\n", e.msg);
    ld__resizer_free(r);
    ld__image_free(&src);
    ld__image_free(&dst);
    return rc < 0;
}
