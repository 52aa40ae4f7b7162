/*
 * The resampler's run-time x86 kernels (SSSE3/AVX2, chosen by __builtin_cpu_supports) give
 * the same bytes as its portable code: this file compiles a second copy of
 * libdata/src/resize/resample.c with -DLD_NO_X86_DISPATCH (SSE2 and scalar only, as
 * bench/kernel_rate_sse2 does) under other names, and compares the two on real photographs
 * (the fixtures' resize/ pixels) and on textured images of awkward sizes, in every mode, RGB
 * and gray, shrinking and enlarging, and with one resizer switching between geometries (its
 * cached coefficient tables), interleaved and as planes (ld__resize_planar, whose AVX2 path
 * writes CHW from the last pass). Conversion output must not depend on the CPU it ran on.
 * On a CPU without AVX2 both copies run the same code and the test passes trivially.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The portable copy: its three entry points renamed, everything else is static. */
#define LD_NO_X86_DISPATCH 1
#define ld__resizer_create port_resizer_create
#define ld__resizer_free port_resizer_free
#define ld__resize port_resize
#define ld__resize_planar port_resize_planar
#include "resize/resample.c"
#undef ld__resizer_create
#undef ld__resizer_free
#undef ld__resize
#undef ld__resize_planar

#include "test_px.h"

/* The library's own (dispatching) copy, as libdata_obj built it. */
ld_resizer *ld__resizer_create(void);
void ld__resizer_free(ld_resizer *r);
int ld__resize(ld_resizer *r, const ld_image *src, const ld_geometry *g, ld_image *dst, ld_err *e);
int ld__resize_planar(ld_resizer *r, const ld_image *src, const ld_geometry *g, const int ch[3],
                      ld_buf *out, int *out_w, int *out_h, ld_err *e);

/* Texture with hard edges and extremes (Lanczos overshoot clips at both ends). */
static ld_image texture(int w, int h, int c, uint32_t seed)
{
    ld_image im = {0};
    cr_assert_eq(ld__image_alloc(&im, w, h, c), LD_OK);
    uint32_t x = seed | 1;
    for (size_t i = 0; i < (size_t)w * h * c; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        im.px[i] = (i / (size_t)(c * 7)) % 3 == 0 ? (uint8_t)(x >> 24) : (x & 1 ? 255 : 0);
    }
    return im;
}

/* Resize src both ways with the given resizers; the bytes must match. */
static void same(ld_resizer *fast, ld_resizer *port, const ld_image *src, const ld_geometry *g,
                 const char *what)
{
    ld_image a = {0}, b = {0};
    ld_err e = {0};
    cr_assert_eq(ld__resize(fast, src, g, &a, &e), LD_OK, "%s: %s", what, e.msg);
    cr_assert_eq(port_resize(port, src, g, &b, &e), LD_OK, "%s: %s", what, e.msg);
    cr_assert(a.w == b.w && a.h == b.h && a.c == b.c, "%s: sizes differ", what);
    const size_t n = (size_t)a.w * a.h * a.c;
    size_t diff = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (a.px[i] != b.px[i]) {
            diff++;
            if (first == n) first = i;
        }
    cr_expect_eq(diff, 0,
                 "%s (%dx%dx%d -> %dx%d mode %d): %zu of %zu bytes differ from the portable "
                 "code, first at byte %zu (%d vs %d)",
                 what, src->w, src->h, src->c, g->w, g->h, g->mode, diff, n, first,
                 first < n ? a.px[first] : 0, first < n ? b.px[first] : 0);

    /* Planar output (what raw conversion stores), both channel orders: the same bytes as
     * the portable interleaved result, deinterleaved. */
    const int orders[2][3] = {{2, 1, 0}, {0, 1, 2}};
    uint8_t *want = malloc(n ? n : 1);
    cr_assert_not_null(want);
    for (int o = 0; o < 2; o++) {
        ld_buf planes = {0};
        int pw = 0, ph = 0;
        if (b.c == 3)
            ld__deinterleave3(b.px, (size_t)b.w * 3, b.h, b.w, orders[o], 0, want);
        else
            memcpy(want, b.px, n);
        cr_assert_eq(ld__resize_planar(fast, src, g, orders[o], &planes, &pw, &ph, &e), LD_OK,
                     "%s: %s", what, e.msg);
        cr_assert(pw == b.w && ph == b.h && planes.len == n, "%s: planar size %dx%d, %zu bytes",
                  what, pw, ph, planes.len);
        size_t pd = 0, pfirst = n;
        for (size_t i = 0; i < n; i++)
            if (planes.p[i] != want[i]) {
                pd++;
                if (pfirst == n) pfirst = i;
            }
        cr_expect_eq(pd, 0,
                     "%s (%dx%dx%d -> %dx%d mode %d, order %d): planar output: %zu of %zu bytes "
                     "differ from the portable code deinterleaved, first at byte %zu",
                     what, src->w, src->h, src->c, g->w, g->h, g->mode, o, pd, n, pfirst);
        ld__buf_free(&planes);
    }
    free(want);
    ld__image_free(&a);
    ld__image_free(&b);
}

static const ld_geometry GEOMS[] = {
    {.mode = LD_RESIZE_SQUASH, .w = 224, .h = 224, .pad_value = 0},
    {.mode = LD_RESIZE_SQUASH, .w = 223, .h = 97, .pad_value = 0},
    {.mode = LD_RESIZE_CROP, .w = 227, .h = 227, .pad_value = 0},
    {.mode = LD_RESIZE_CROP, .w = 99, .h = 301, .pad_value = 0},
    {.mode = LD_RESIZE_PAD, .w = 200, .h = 150, .pad_value = 7},
    {.mode = LD_RESIZE_MAX, .w = 131, .h = 131, .pad_value = 0},
    {.mode = LD_RESIZE_SQUASH, .w = 1, .h = 3, .pad_value = 0},
    {.mode = LD_RESIZE_SQUASH, .w = 640, .h = 700, .pad_value = 0},
    {.mode = LD_RESIZE_SQUASH, .w = 31, .h = 640, .pad_value = 0},
    {.mode = LD_RESIZE_CROP, .w = 5, .h = 5, .pad_value = 0},
};
#define NGEOMS (sizeof GEOMS / sizeof GEOMS[0])

Test(resize_simd, dispatched_kernels_match_portable_code_on_photos)
{
    const char *photos[] = {"p00", "p03", "p05", "p07", "skg_camera", "sk_chelsea", "sk_coffee"};
    ld_resizer *fast = ld__resizer_create(), *port = port_resizer_create();
    cr_assert(fast && port);
    for (size_t k = 0; k < sizeof photos / sizeof *photos; k++) {
        char path[1024];
        ld_image src = {0};
        snprintf(path, sizeof path, "%s/resize/%s.src.px", LD_TEST_DATA, photos[k]);
        cr_assert_eq(load_px(path, &src), 0, "cannot load %s", path);
        for (size_t g = 0; g < NGEOMS; g++)
            same(fast, port, &src, &GEOMS[g], photos[k]);
        ld__image_free(&src);
    }
    ld__resizer_free(fast);
    port_resizer_free(port);
}

Test(resize_simd, dispatched_kernels_match_portable_code_on_awkward_sizes)
{
    const int sizes[][2] = {{500, 375}, {375, 500}, {17, 9},    {1, 1},
                            {3, 400},   {401, 2},   {1001, 333}};
    ld_resizer *fast = ld__resizer_create(), *port = port_resizer_create();
    cr_assert(fast && port);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int c = 1; c <= 3; c += 2) {
            ld_image src = texture(sizes[s][0], sizes[s][1], c, (uint32_t)(s * 7 + c));
            for (size_t g = 0; g < NGEOMS; g++)
                same(fast, port, &src, &GEOMS[g], "texture");
            ld__image_free(&src);
        }
    ld__resizer_free(fast);
    port_resizer_free(port);
}

/* One resizer alternating between landscape and portrait photos of a dataset (two cached
 * coefficient tables per axis), and a third geometry that evicts one: every result equals a
 * fresh portable resizer's. */
Test(resize_simd, cached_tables_give_the_same_bytes_as_a_fresh_resizer)
{
    ld_image land = texture(500, 375, 3, 11), port_im = texture(375, 500, 3, 12),
             odd = texture(333, 444, 3, 13);
    const ld_image *seq[] = {&land, &port_im, &land,    &land, &port_im,
                             &odd,  &land,    &port_im, &odd,  &port_im};
    const ld_geometry g = {.mode = LD_RESIZE_SQUASH, .w = 224, .h = 224};
    ld_resizer *fast = ld__resizer_create();
    cr_assert_not_null(fast);
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++) {
        ld_resizer *fresh = port_resizer_create();
        cr_assert_not_null(fresh);
        char what[32];
        snprintf(what, sizeof what, "step %zu", i);
        same(fast, fresh, seq[i], &g, what);
        port_resizer_free(fresh);
    }
    ld__resizer_free(fast);
    ld__image_free(&land);
    ld__image_free(&port_im);
    ld__image_free(&odd);
}

/* The random resized crop's bilinear filter (fractional boxes, shrinking and enlarging) goes
 * through the same kernels (hrow_rgb_avx2 reading only the tap groups in use):
 * the same bytes with and without them. */
Test(resize_simd, bilinear_boxes_match_portable_code)
{
    const ld_geometry boxes[] = {
        {.mode = LD_RESIZE_SQUASH,
         .w = 224,
         .h = 224,
         .rect = 1,
         .rx = 13.5,
         .ry = 7.25,
         .rw = 431.0,
         .rh = 350.5,
         .filter = LD_FILTER_BILINEAR},
        {.mode = LD_RESIZE_SQUASH,
         .w = 224,
         .h = 224,
         .rect = 1,
         .rx = 100.75,
         .ry = 40,
         .rw = 151.5,
         .rh = 120.25,
         .filter = LD_FILTER_BILINEAR},
        {.mode = LD_RESIZE_SQUASH,
         .w = 64,
         .h = 56,
         .rect = 1,
         .rx = 0,
         .ry = 0,
         .rw = 500,
         .rh = 375,
         .filter = LD_FILTER_BILINEAR},
        /* shrink 3.6: tables of 16 taps of which at most 8 are used (hrow_rgb_avx2
         * reads 2 of the 4 groups) */
        {.mode = LD_RESIZE_SQUASH,
         .w = 112,
         .h = 100,
         .rect = 1,
         .rx = 31.3,
         .ry = 2.5,
         .rw = 403.2,
         .rh = 360,
         .filter = LD_FILTER_BILINEAR},
    };
    ld_resizer *fast = ld__resizer_create(), *port = port_resizer_create();
    cr_assert(fast && port);
    for (int c = 1; c <= 3; c += 2) {
        ld_image src = texture(500, 375, c, (uint32_t)(40 + c));
        for (size_t g = 0; g < sizeof boxes / sizeof *boxes; g++)
            same(fast, port, &src, &boxes[g], "bilinear box");
        ld__image_free(&src);
    }
    ld__resizer_free(fast);
    port_resizer_free(port);
}
