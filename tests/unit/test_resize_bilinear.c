/*
 * The resampler's bilinear filter (ld_geometry.filter = LD_FILTER_BILINEAR, the random resized
 * crop's default) against Pillow's rule for BILINEAR, computed here in double precision: output
 * pixel i of a source interval [x0, x0 + len) mapped onto n pixels is centred at
 * x0 + (i + 0.5) * len / n; with s = max(len / n, 1) it reads source pixels j (centres j + 0.5)
 * within s of the centre with weights 1 - |j + 0.5 - centre| / s, normalised to sum 1, clipped
 * at the image's edges (Pillow's precompute_coeffs with bilinear_filter, support 1). One axis at
 * a time (the other kept at scale 1, where the triangle is the identity), so the only
 * difference left is the Q14 quantisation of the weights: at most 1 level per pixel. Also: one
 * resizer switching filters on the same geometry gives a fresh resizer's bytes (the cached
 * tables are keyed on the filter).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/convert.h" /* LD_RESIZE_SQUASH */
#include "resize/resize.h"

static ld_image noise(int w, int h, int c, uint32_t seed)
{
    ld_image im = {0};
    cr_assert_eq(ld__image_alloc(&im, w, h, c), LD_OK);
    uint32_t x = seed | 1;
    for (size_t i = 0; i < (size_t)w * h * c; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        im.px[i] = (uint8_t)(x >> 24);
    }
    return im;
}

/* Pillow's BILINEAR value of output pixel i along an axis: samples p[j * step], j < in. */
static double pillow_bilinear(const uint8_t *p, size_t step, int in, double x0, double len, int n,
                              int i)
{
    const double scale = len / n, s = scale > 1.0 ? scale : 1.0;
    const double centre = x0 + (i + 0.5) * scale;
    int lo = (int)(centre - s + 0.5), hi = (int)(centre + s + 0.5);
    if (lo < 0) lo = 0;
    if (hi > in) hi = in;
    double sum = 0, total = 0;
    for (int j = lo; j < hi; j++) {
        const double t = fabs((j + 0.5 - centre) / s), w = t < 1.0 ? 1.0 - t : 0.0;
        sum += w * p[(size_t)j * step];
        total += w;
    }
    return sum / total;
}

typedef struct axis_case {
    int in, out;
    double x0, len; /* source interval */
} axis_case;

static const axis_case CASES[] = {
    {500, 224, 0, 500},        /* shrink 2.23x, whole axis */
    {375, 224, 40.25, 311.5},  /* shrink 1.39x from a fractional box */
    {333, 100, 17.75, 290.0},  /* shrink 2.9x */
    {300, 224, 100.5, 150.25}, /* enlarge 1.49x (support stays 1) */
    {64, 200, 0, 64},          /* enlarge 3.1x */
    {260, 224, 3.0, 224.0},    /* scale 1 off a whole-pixel box: a copy */
};

/* Resize along x (axis 0) or y (axis 1) only, c channels, and compare every output value. */
static void check_axis(int axis, int c, const axis_case *t)
{
    const int other = 37;
    const int w = axis == 0 ? t->in : other, h = axis == 0 ? other : t->in;
    ld_image src = noise(w, h, c, (uint32_t)(t->in * 7 + t->out + axis * 131 + c));
    ld_geometry g = {.mode = LD_RESIZE_SQUASH, .rect = 1, .filter = LD_FILTER_BILINEAR};
    if (axis == 0) {
        g.w = t->out, g.h = other;
        g.rx = t->x0, g.rw = t->len, g.ry = 0, g.rh = other;
    } else {
        g.w = other, g.h = t->out;
        g.rx = 0, g.rw = other, g.ry = t->x0, g.rh = t->len;
    }
    ld_resizer *r = ld__resizer_create();
    cr_assert(r);
    ld_image out = {0};
    ld_err e = {0};
    cr_assert_eq(ld__resize(r, &src, &g, &out, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(out.w, g.w);
    cr_assert_eq(out.h, g.h);
    double err_sum = 0;
    int worst = 0;
    for (int y = 0; y < out.h; y++)
        for (int x = 0; x < out.w; x++)
            for (int ch = 0; ch < c; ch++) {
                double ref;
                if (axis == 0)
                    ref = pillow_bilinear(src.px + (size_t)y * w * c + ch, (size_t)c, w, t->x0,
                                          t->len, t->out, x);
                else
                    ref = pillow_bilinear(src.px + (size_t)x * c + ch, (size_t)w * c, h, t->x0,
                                          t->len, t->out, y);
                const int got = out.px[((size_t)y * out.w + x) * c + ch];
                const int d = abs(got - (int)lround(ref));
                err_sum += fabs(got - ref);
                if (d > worst) worst = d;
                cr_assert(d <= 1,
                          "axis %d, c %d, %d -> %d from %g+%g: pixel (%d,%d,%d) is %d, "
                          "Pillow's rule gives %.3f",
                          axis, c, t->in, t->out, t->x0, t->len, x, y, ch, got, ref);
            }
    /* Rounding alone: the mean error of a correct filter stays near 0.25-0.5 levels. */
    const double mean = err_sum / ((double)out.w * out.h * c);
    cr_assert(mean < 0.6, "axis %d, %d -> %d: mean error %.3f levels", axis, t->in, t->out, mean);
    ld__image_free(&out);
    ld__image_free(&src);
    ld__resizer_free(r);
}

Test(resize_bilinear, x_axis_follows_pillows_rule)
{
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        check_axis(0, 3, &CASES[k]);
        check_axis(0, 1, &CASES[k]);
    }
}

Test(resize_bilinear, y_axis_follows_pillows_rule)
{
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        check_axis(1, 3, &CASES[k]);
        check_axis(1, 1, &CASES[k]);
    }
}

/* One resizer alternating filters on one geometry: each result equals a fresh resizer's, and
 * the two filters differ (the cached tables carry their filter). */
Test(resize_bilinear, cached_tables_are_per_filter)
{
    ld_image src = noise(300, 220, 3, 99);
    ld_geometry g = {.mode = LD_RESIZE_SQUASH,
                     .w = 112,
                     .h = 96,
                     .rect = 1,
                     .rx = 10.5,
                     .ry = 7.25,
                     .rw = 250,
                     .rh = 200};
    ld_image want[2] = {{0}}, got = {0};
    ld_err e = {0};
    for (int f = 0; f < 2; f++) {
        ld_resizer *fresh = ld__resizer_create();
        cr_assert(fresh);
        g.filter = f ? LD_FILTER_BILINEAR : LD_FILTER_LANCZOS3;
        cr_assert_eq(ld__resize(fresh, &src, &g, &want[f], &e), LD_OK, "%s", e.msg);
        ld__resizer_free(fresh);
    }
    const size_t n = (size_t)112 * 96 * 3;
    cr_assert(memcmp(want[0].px, want[1].px, n) != 0, "Lanczos-3 and bilinear gave equal bytes");
    ld_resizer *r = ld__resizer_create();
    cr_assert(r);
    for (int round = 0; round < 4; round++) {
        const int f = round % 2;
        g.filter = f ? LD_FILTER_BILINEAR : LD_FILTER_LANCZOS3;
        cr_assert_eq(ld__resize(r, &src, &g, &got, &e), LD_OK, "%s", e.msg);
        cr_assert(memcmp(got.px, want[f].px, n) == 0, "round %d (%s): not a fresh resizer's bytes",
                  round, f ? "bilinear" : "lanczos3");
    }
    ld__resizer_free(r);
    ld__image_free(&got);
    ld__image_free(&want[0]);
    ld__image_free(&want[1]);
    ld__image_free(&src);
}

Test(resize_bilinear, unknown_filter_is_refused)
{
    ld_image src = noise(40, 30, 3, 5), out = {0};
    const ld_geometry g = {.mode = LD_RESIZE_SQUASH, .w = 20, .h = 20, .filter = 7};
    ld_resizer *r = ld__resizer_create();
    cr_assert(r);
    ld_err e = {0};
    cr_assert_eq(ld__resize(r, &src, &g, &out, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "filter"), "%s", e.msg);
    ld__resizer_free(r);
    ld__image_free(&out);
    ld__image_free(&src);
}
