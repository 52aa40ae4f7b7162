/*
 * decode_scale auto (issue 30): the DCT scale the converter decodes a JPEG at, i.e.
 * ld__resize_min_source (what each resize mode needs: 2 source pixels per output pixel of the
 * part it keeps) followed by ld__jpeg_scale (the smallest n/8 whose libjpeg output covers
 * that). Each resize mode, the 2x rule at its boundaries, EXIF orientation, images that must
 * not be scaled, and real decodes that come out at the predicted size.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "codec/codec.h"
#include "libdata/types.h"
#include "resize/resize.h"

#define DIR LD_TEST_DATA "/codec/"

/* The scale convert.c's process() decodes a w x h (displayed) JPEG at for this geometry. */
static int scale_for(int mode, int tw, int th, int w, int h)
{
    const ld_geometry g = {.mode = mode, .w = tw, .h = th};
    int mw, mh;
    ld__resize_min_source(&g, w, h, &mw, &mh);
    return ld__jpeg_scale(w, h, mw, mh);
}

typedef struct scale_case {
    int mode, tw, th, w, h, want;
    const char *why;
} scale_case;

ParameterizedTestParameters(decode_scale, each_mode_keeps_2x_the_output)
{
    static scale_case cases[] = {
        /* squash 224: 448 x 448 needed */
        {LD_RESIZE_SQUASH, 224, 224, 4000, 3000, 2, "1/8 is 375 rows, 1/4 750"},
        {LD_RESIZE_SQUASH, 224, 224, 1920, 1080, 4, "1/4 is 270 rows"},
        {LD_RESIZE_SQUASH, 224, 224, 3577, 3577, 1, "ceil(3577/8) = 448: 1/8 just covers"},
        {LD_RESIZE_SQUASH, 224, 224, 3576, 3576, 2, "3576/8 = 447: one short"},
        {LD_RESIZE_SQUASH, 224, 224, 1789, 1789, 2, "ceil(1789/4) = 448"},
        {LD_RESIZE_SQUASH, 224, 224, 1788, 1788, 4, "1788/4 = 447"},
        {LD_RESIZE_SQUASH, 224, 224, 897, 897, 4, "ceil(897/2) = 449 >= 448"},
        {LD_RESIZE_SQUASH, 224, 224, 896, 896, 4, "896/2 = 448 exactly"},
        {LD_RESIZE_SQUASH, 224, 224, 895, 895, 4, "ceil(895/2) = 448"},
        {LD_RESIZE_SQUASH, 224, 224, 894, 894, 8, "894/2 = 447: one short, full size"},
        {LD_RESIZE_SQUASH, 224, 224, 448, 448, 8, "exactly 2x: nothing to shrink"},
        {LD_RESIZE_SQUASH, 224, 224, 447, 600, 8, "under 2x on one axis"},
        {LD_RESIZE_SQUASH, 224, 224, 100, 80, 8, "smaller than the output: never scaled"},
        {LD_RESIZE_SQUASH, 224, 224, 224, 224, 8, "the output size: identity"},
        /* crop 224: the shorter side gives 448, the longer keeps its share */
        {LD_RESIZE_CROP, 224, 224, 4000, 3000, 2, "crop 3000x3000: 598 x 448 needed"},
        {LD_RESIZE_CROP, 224, 224, 4000, 2000, 2, "crop 2000x2000: 896 x 448 needed"},
        {LD_RESIZE_CROP, 224, 224, 3000, 4000, 2, "portrait: 448 x 598"},
        {LD_RESIZE_CROP, 256, 256, 1920, 1080, 4, "short side 1080 / 4 = 270 < 512"},
        {LD_RESIZE_CROP, 256, 256, 500, 375, 8, "short side 375 < 512"},
        /* pad and max: the image is shrunk whole, so the longer side decides */
        {LD_RESIZE_PAD, 224, 224, 4000, 2000, 1, "scaled 224x112: 448 x 224 needed"},
        {LD_RESIZE_PAD, 224, 224, 2000, 4000, 1, "portrait: 224 x 448"},
        {LD_RESIZE_PAD, 224, 224, 1920, 1080, 2, "1/8 is 240 wide"},
        {LD_RESIZE_MAX, 224, 224, 4000, 2000, 1, "longer side 224: as pad"},
        {LD_RESIZE_MAX, 224, 224, 1920, 1080, 2, "as pad"},
        {LD_RESIZE_MAX, 224, 224, 200, 100, 8, "max never enlarges: identity"},
        {LD_RESIZE_MAX, 224, 224, 300, 200, 8, "shrinks by 1.3: under 2x"},
        /* no resize: full size */
        {LD_RESIZE_SQUASH, 0, 0, 4000, 3000, 8, "no resize"},
    };
    return cr_make_param_array(scale_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(scale_case *t, decode_scale, each_mode_keeps_2x_the_output)
{
    static const char *const modes[] = {"squash", "crop", "pad", "max"};
    const int n = scale_for(t->mode, t->tw, t->th, t->w, t->h);
    cr_expect_eq(n, t->want, "%s %dx%d of %dx%d: scale %d/8, want %d/8 (%s)",
                 modes[t->mode - LD_RESIZE_SQUASH], t->tw, t->th, t->w, t->h, n, t->want, t->why);
    if (n < 8) { /* the 2x rule holds at the chosen scale, and not at the next smaller one */
        const ld_geometry g = {.mode = t->mode, .w = t->tw, .h = t->th};
        int mw, mh;
        ld__resize_min_source(&g, t->w, t->h, &mw, &mh);
        cr_expect((t->w * n + 7) / 8 >= mw && (t->h * n + 7) / 8 >= mh,
                  "%dx%d at %d/8 is under %dx%d", t->w, t->h, n, mw, mh);
        if (n > 1)
            cr_expect((t->w * (n / 2) + 7) / 8 < mw || (t->h * (n / 2) + 7) / 8 < mh,
                      "%d/8 would do for %dx%d", n / 2, t->w, t->h);
    }
}

/* The axes are the displayed ones: a stored 2000x4000 photo shown 4000x2000 (EXIF 6) padded to
 * 224 needs 448 x 224 displayed, which 1/8 gives (500 x 250); taken in stored orientation
 * (250 x 500) 1/8 would fail the width and 1/4 be chosen. */
Test(decode_scale, exif_rotation_uses_the_displayed_axes)
{
    cr_expect_eq(scale_for(LD_RESIZE_PAD, 224, 224, 4000, 2000), 1);
    cr_expect_eq(ld__jpeg_scale(2000, 4000, 448, 224), 2, "stored axes give another answer");
}

static void decode_at(const char *file, int mode, int tw, int th, int want_n, int want_w,
                      int want_h)
{
    ld_buf b = {0};
    ld_err e = {0};
    ld_img_info info;
    ld_image im = {0};
    ld_codec *c = ld__codec_create();
    cr_assert_not_null(c);
    cr_assert_eq(ld__read_file(file, &b, (size_t)1 << 26, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(ld__img_info(c, b.p, b.len, file, &info, &e), LD_OK, "%s", e.msg);
    const ld_geometry g = {.mode = mode, .w = tw, .h = th};
    ld_decode_opts o = {.channels = 3, .apply_orientation = 1};
    ld__resize_min_source(&g, info.w, info.h, &o.min_w, &o.min_h);
    const int n = ld__jpeg_scale(info.w, info.h, o.min_w, o.min_h);
    cr_expect_eq(n, want_n, "%s to %dx%d: scale %d/8, want %d/8", file, tw, th, n, want_n);
    cr_assert_eq(ld__img_decode(c, b.p, b.len, file, &o, &im, &e), LD_OK, "%s", e.msg);
    cr_expect(im.w == want_w && im.h == want_h, "%s to %dx%d: decoded %dx%d, want %dx%d", file, tw,
              th, im.w, im.h, want_w, want_h);
    ld__image_free(&im);
    ld__codec_free(c);
    ld__buf_free(&b);
}

/* Real files: the decoder shrinks by exactly the predicted scale, rotated ones included. */
Test(decode_scale, real_decodes_come_out_at_the_predicted_scale)
{
    /* base.jpg: 500x375 */
    decode_at(DIR "base.jpg", LD_RESIZE_SQUASH, 60, 40, 2, 125, 94); /* 120x80 needed */
    decode_at(DIR "base.jpg", LD_RESIZE_CROP, 60, 60, 4, 250, 188);  /* 160x120 needed */
    decode_at(DIR "base.jpg", LD_RESIZE_PAD, 60, 60, 2, 125, 94);    /* 60x45 -> 120x90 */
    decode_at(DIR "base.jpg", LD_RESIZE_MAX, 30, 30, 1, 63, 47);     /* 30x23 -> 60x46 */
    decode_at(DIR "base.jpg", LD_RESIZE_SQUASH, 224, 224, 8, 500, 375);
    /* orient6.jpg: stored 160x240, displayed 240x160; pad 60: 60x40 -> 120x80 needed, which
     * 1/2 gives displayed (in stored axes it would not: 80x120) */
    decode_at(DIR "orient6.jpg", LD_RESIZE_PAD, 60, 60, 4, 120, 80);
    decode_at(DIR "orient6.jpg", LD_RESIZE_SQUASH, 61, 40, 8, 240, 160); /* 122 > 120 */
}

/* The rule under both JPEG decoders (ld__jpeg_decode_box uses thresholds 12 x min: 1.5x). */
Test(decode_scale, dct_scale_thresholds)
{
    cr_expect_eq(ld__dct_scale(4000, 3000, 0, 0), 8, "no threshold: full size");
    cr_expect_eq(ld__dct_scale(4000, 3000, 4000, 0), 1);
    cr_expect_eq(ld__dct_scale(4000, 3000, 4001, 0), 2);
    cr_expect_eq(ld__dct_scale(4000, 3000, 0, 12000), 4);
    cr_expect_eq(ld__dct_scale(4000, 3000, 0, 12001), 8);
    cr_expect_eq(ld__jpeg_scale(4000, 3000, 0, 0), 8);
    cr_expect_eq(ld__jpeg_scale(4000, 3000, -5, 375), 1, "a negative minimum is no minimum");
}
