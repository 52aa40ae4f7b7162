/*
 * Random resized crop (issue 16 item 3), the C side: the JPEG box decoder against a full decode
 * of the same pixels, the reader's output for 1 and 2 threads, ld_reader_crop_box, the settings
 * it refuses, and corrupt files. Pixels against Pillow and box statistics against torchvision:
 * tests/python/test_py_rrc.py.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_file.h"
#include "codec/codec.h"
#include "libdata/reader.h"

#define FIX LD_TEST_DATA "/reader/"
#define PHOTO LD_TEST_DATA "/photos/p01.jpg"

/* `part` is the region of `ref` at (x0, y0): equal but for the chroma upsampling context
 * at the first iMCU row boundary after jpeg_skip_scanlines (libjpeg-turbo restarts the fancy
 * upsampler there): measured at most 5 levels on under 0.7 % of the values. A box in the wrong
 * place (one pixel off) differs in most values by far more. */
static void same_pixels(const ld_image *part, const ld_image *ref, int x0, int y0, const char *what)
{
    int worst = 0;
    size_t ndiff = 0, n = (size_t)part->w * part->h * 3;
    cr_assert(x0 >= 0 && y0 >= 0 && x0 + part->w <= ref->w && y0 + part->h <= ref->h);
    for (int y = 0; y < part->h; y++)
        for (int i = 0; i < part->w * 3; i++) {
            const int d = abs(part->px[(size_t)y * part->w * 3 + i] -
                              ref->px[((size_t)(y0 + y) * ref->w + x0) * 3 + i]);
            ndiff += d != 0;
            worst = d > worst ? d : worst;
        }
    cr_assert(worst <= 8 && ndiff * 100 < n, "%s: %zu of %zu values differ, by up to %d", what,
              ndiff, n, worst);
}

/* The box decoder's pixels are the full decode's (at 1/2 and 1/4: the scaled full decode's),
 * where the returned rectangle says. */
Test(rrc, box_decoder_matches_full_decode)
{
    size_t len;
    uint8_t *buf = slurp(PHOTO, &len);
    ld_codec *c = ld__codec_create();
    ld_image full = {0}, part = {0}, half = {0};
    ld_err e;
    ld_decode_opts o = {.channels = 3, .apply_orientation = 1};
    cr_assert_eq(ld__img_decode(c, buf, len, "p01", &o, &full, &e), LD_OK, "%s", e.msg);
    const int boxes[][4] = {{0, 0, 500, 375}, {37, 61, 201, 150}, {123, 200, 377, 175},
                            {0, 300, 17, 75}, {499, 0, 1, 1},     {250, 17, 64, 300}};
    for (size_t k = 0; k < sizeof boxes / sizeof boxes[0]; k++) {
        const int *b = boxes[k];
        double rect[4];
        cr_assert_eq(ld__jpeg_decode_box(c, buf, len, "p01", &o, b, &part, rect, &e), LD_OK, "%s",
                     e.msg);
        const int x0 = b[0] - (int)rect[0], y0 = b[1] - (int)rect[1];
        cr_assert(rect[0] >= 0 && rect[0] < 16 && rect[1] == 0 && rect[2] == b[2] &&
                      rect[3] == b[3] && part.h == b[3] && x0 + part.w <= full.w,
                  "box %zu: rect %g,%g %gx%g in %dx%d", k, rect[0], rect[1], rect[2], rect[3],
                  part.w, part.h);
        same_pixels(&part, &full, x0, y0, "full scale");
    }
    /* DCT scales: a 400x300 box for 100x75 (1/2: 1.5x kept) and 50x37 (1/4) */
    const int big[4] = {60, 40, 400, 300};
    const int outs[][2] = {{100, 75}, {50, 37}};
    const int want_n[] = {4, 2};
    for (int k = 0; k < 2; k++) {
        ld_decode_opts so = o;
        so.min_w = outs[k][0];
        so.min_h = outs[k][1];
        double rect[4];
        cr_assert_eq(ld__jpeg_decode_box(c, buf, len, "p01", &so, big, &part, rect, &e), LD_OK,
                     "%s", e.msg);
        const double s = want_n[k] / 8.0;
        cr_assert(fabs(rect[2] - 400 * s) < 1e-9 && fabs(rect[3] - 300 * s) < 1e-9,
                  "scale %d/8 expected: rect %gx%g", want_n[k], rect[2], rect[3]);
        cr_assert(rect[2] >= 1.5 * outs[k][0] && rect[3] >= 1.5 * outs[k][1]);
        /* same pixels as the whole image decoded at that scale */
        ld_decode_opts ho = o;
        ho.min_w = (int)ceil(500 * s);
        ho.min_h = (int)ceil(375 * s);
        cr_assert_eq(ld__img_decode(c, buf, len, "p01", &ho, &half, &e), LD_OK, "%s", e.msg);
        cr_assert_eq(half.w, (int)ceil(500 * s));
        const int xo = (int)llround(60 * s - rect[0]), yo = (int)llround(40 * s - rect[1]);
        same_pixels(&part, &half, xo, yo, want_n[k] == 4 ? "scale 4/8" : "scale 2/8");
    }
    /* a box outside the image */
    const int out_box[4] = {450, 0, 51, 10};
    double rect[4];
    cr_assert_eq(ld__jpeg_decode_box(c, buf, len, "p01", &o, out_box, &part, rect, &e), LD_EINVAL);
    /* truncated inside the box: an error, not gray rows */
    const int all[4] = {0, 0, 500, 375};
    cr_assert_eq(ld__jpeg_decode_box(c, buf, len / 2, "p01", &o, all, &part, rect, &e), LD_EFORMAT);
    cr_assert(strstr(e.msg, "p01: JPEG:"), "%s", e.msg);
    ld__image_free(&full);
    ld__image_free(&part);
    ld__image_free(&half);
    ld__codec_free(c);
    free(buf);
}

static ld_reader *rrc_reader(int threads, int w, int h, int full)
{
    ld_reader *r = ld_reader_create();
    cr_assert(r);
    const int64_t kv[] = {LD_R_BATCH_SIZE, 5, LD_R_ORDER,           LD_ORDER_SHUFFLE,
                          LD_R_SEED,       9, LD_R_THREADS,         threads,
                          LD_R_MIRROR,     1, LD_R_RRC_W,           w,
                          LD_R_RRC_H,      h, LD_R_RRC_FULL_DECODE, full};
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k += 2)
        cr_assert_eq(ld_reader_set(r, (ld_reader_param)kv[k], kv[k + 1]), LD_OK, "%s",
                     ld_reader_errmsg(r));
    return r;
}

/* Two epochs of `path`, concatenated. */
static uint8_t *two_epochs(ld_reader *r, const char *path, size_t *bytes)
{
    cr_assert_eq(ld_reader_open(r, path), LD_OK, "%s", ld_reader_errmsg(r));
    uint8_t *all = NULL;
    size_t n = 0;
    for (int ep = 0; ep < 2; ep++) {
        const ld_batch *b;
        int rc;
        while ((rc = ld_reader_next(r, &b)) == LD_OK) {
            all = realloc(all, n + b->data_bytes);
            cr_assert(all);
            memcpy(all + n, b->data, b->data_bytes);
            n += b->data_bytes;
        }
        cr_assert_eq(rc, LD_END, "%s", ld_reader_errmsg(r));
    }
    *bytes = n;
    return all;
}

Test(rrc, same_output_for_one_and_two_threads)
{
    const char *files[] = {FIX "enc.h5", FIX "raw_ours.h5"};
    for (int f = 0; f < 2; f++)
        for (int full = 0; full < 2; full++) {
            size_t n1, n2;
            ld_reader *a = rrc_reader(1, 40, 24, full), *b = rrc_reader(2, 40, 24, full);
            uint8_t *d1 = two_epochs(a, files[f], &n1), *d2 = two_epochs(b, files[f], &n2);
            int64_t v;
            cr_assert_eq(ld_reader_get_info(a, LD_R_INFO_W, &v), LD_OK);
            cr_assert_eq(v, 40);
            cr_assert_eq(ld_reader_get_info(a, LD_R_INFO_H, &v), LD_OK);
            cr_assert_eq(v, 24);
            cr_assert(n1 == n2 && n1 > 0 && !memcmp(d1, d2, n1), "%s full=%d: threads differ",
                      files[f], full);
            free(d1);
            free(d2);
            ld_reader_free(a);
            ld_reader_free(b);
        }
}

Test(rrc, crop_box)
{
    ld_reader *r = ld_reader_create();
    ld_crop_box box;
    cr_assert_eq(ld_reader_crop_box(r, 0, 0, 100, 100, &box), LD_EINVAL); /* rrc off */
    ld_reader_set(r, LD_R_RRC_W, 32);
    ld_reader_set(r, LD_R_RRC_H, 32);
    cr_assert_eq(ld_reader_crop_box(r, 0, 0, 0, 100, &box), LD_EINVAL);
    int fallback = 0, differ = 0;
    ld_crop_box prev = {0};
    for (uint64_t i = 0; i < 2000; i++) {
        cr_assert_eq(ld_reader_crop_box(r, i % 3, i, 500, 375, &box), LD_OK);
        cr_assert(box.x >= 0 && box.y >= 0 && box.w > 0 && box.h > 0 && box.x + box.w <= 500 &&
                  box.y + box.h <= 375 && box.mirror == 0);
        const double a = (double)box.w * box.h / (500.0 * 375);
        cr_assert(a >= 0.079 && a <= 1.0, "area %g", a);
        cr_assert(box.w <= 4.0 / 3 * (box.h + 0.5) + 0.5 && box.h <= 4.0 / 3 * (box.w + 0.5) + 0.5);
        if (box.x == 0 && box.y == 0 && box.w == 500 && box.h == 375) fallback++;
        differ += memcmp(&box, &prev, sizeof box) != 0;
        prev = box;
    }
    cr_assert(differ > 1990);
    /* nothing fits a scale above 1: the fallback, the center at the nearest ratio bound */
    const float sc[2] = {1.5f, 2.0f};
    cr_assert_eq(ld_reader_set_floats(r, LD_R_RRC_SCALE, sc, 2), LD_OK);
    cr_assert_eq(ld_reader_crop_box(r, 0, 7, 900, 100, &box), LD_OK);
    cr_assert(box.w == 133 && box.h == 100 && box.x == 383 && box.y == 0, "%d %d %d %d", box.x,
              box.y, box.w, box.h);
    cr_assert_eq(ld_reader_crop_box(r, 0, 7, 100, 900, &box), LD_OK);
    cr_assert(box.w == 100 && box.h == 133 && box.x == 0 && box.y == 383);
    cr_assert_eq(ld_reader_crop_box(r, 0, 7, 500, 375, &box), LD_OK);
    cr_assert(box.w == 500 && box.h == 375 && box.x == 0 && box.y == 0);
    /* mirror: the same bit the reader uses, about half the samples */
    ld_reader_set(r, LD_R_MIRROR, 1);
    int m = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        cr_assert_eq(ld_reader_crop_box(r, 0, i, 500, 375, &box), LD_OK);
        m += box.mirror;
    }
    cr_assert(m > 400 && m < 600, "%d mirrored of 1000", m);
    ld_reader_free(r);
}

static void refused(const int64_t *kv, size_t n, const float *sc, size_t nsc, const char *path,
                    int param, const char *words)
{
    ld_reader *r = ld_reader_create();
    for (size_t k = 0; k < n; k += 2)
        cr_assert_eq(ld_reader_set(r, (ld_reader_param)kv[k], kv[k + 1]), LD_OK);
    if (sc) cr_assert_eq(ld_reader_set_floats(r, LD_R_RRC_SCALE, sc, nsc), LD_OK);
    cr_assert_eq(ld_reader_open(r, path), LD_EINVAL, "%s", words);
    cr_assert(strstr(ld_reader_errmsg(r), words), "%s", ld_reader_errmsg(r));
    cr_assert_eq(ld_reader_error(r)->param, param, "%s", ld_reader_errmsg(r));
    ld_reader_free(r);
}

Test(rrc, contradictory_settings_are_refused)
{
    const int64_t crop[] = {LD_R_RRC_W, 8, LD_R_RRC_H, 8, LD_R_CROP_W, 4, LD_R_CROP_H, 4};
    refused(crop, 8, NULL, 0, FIX "enc.h5", LD_R_CROP_W, "unset crop_w and crop_h");
    const int64_t rnd[] = {LD_R_RRC_W, 8, LD_R_RRC_H, 8, LD_R_RANDOM_CROP, 1};
    refused(rnd, 6, NULL, 0, FIX "enc.h5", LD_R_RANDOM_CROP, "unset random_crop");
    const int64_t dct[] = {LD_R_RRC_W, 8, LD_R_RRC_H, 8, LD_R_DCT_SCALE, 1};
    refused(dct, 6, NULL, 0, FIX "enc.h5", LD_R_DCT_SCALE, "unset dct_scale");
    const int64_t half[] = {LD_R_RRC_W, 8};
    refused(half, 2, NULL, 0, FIX "enc.h5", LD_R_RRC_W, "set both rrc_w and rrc_h");
    const int64_t off[] = {LD_R_RRC_FULL_DECODE, 1};
    refused(off, 2, NULL, 0, FIX "enc.h5", LD_R_RRC_W, "set its output size too");
    const int64_t filt[] = {LD_R_RRC_FILTER, LD_RRC_FILTER_LANCZOS3};
    refused(filt, 2, NULL, 0, FIX "enc.h5", LD_R_RRC_W, "set its output size too");
    const float sc[2] = {0.2f, 0.5f};
    refused(NULL, 0, sc, 2, FIX "enc.h5", LD_R_RRC_W, "set its output size too");
    ld_reader *r = ld_reader_create();
    ld_reader_set(r, LD_R_RRC_W, 8);
    ld_reader_set(r, LD_R_RRC_H, 8);
    ld_reader_set_str(r, LD_R_DATA_NAME, "x");
    ld_reader_set_str(r, LD_R_LABEL_NAME, "y");
    cr_assert_eq(ld_reader_open(r, FIX "raw_float.h5"), LD_EINVAL, "%s", ld_reader_errmsg(r));
    cr_assert(strstr(ld_reader_errmsg(r), "float32"), "%s", ld_reader_errmsg(r));
    ld_reader_free(r);

    r = ld_reader_create();
    const float bad[][2] = {{0.5f, 0.2f}, {0.0f, 1.0f}, {-1.0f, 1.0f}};
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(ld_reader_set_floats(r, LD_R_RRC_RATIO, bad[k], 2), LD_EINVAL);
        cr_assert(strstr(ld_reader_errmsg(r), "0 < min <= max"), "%s", ld_reader_errmsg(r));
    }
    /* rrc_filter takes its two enum values only (0x800, 0x801), not 0/1 or another enum's */
    const int64_t bad_filters[] = {0, 1, 0x7ff, 0x802, LD_LAYOUT_NHWC};
    for (int k = 0; k < 5; k++)
        cr_assert_eq(ld_reader_set(r, LD_R_RRC_FILTER, bad_filters[k]), LD_EINVAL, "%lld",
                     (long long)bad_filters[k]);
    cr_assert_eq(ld_reader_set(r, LD_R_RRC_FILTER, LD_RRC_FILTER_BILINEAR), LD_OK);
    cr_assert_eq(ld_reader_set(r, LD_R_RRC_FILTER, LD_RRC_FILTER_LANCZOS3), LD_OK);
    cr_assert_eq(ld_reader_set_floats(r, LD_R_RRC_RATIO, bad[0], 1), LD_EINVAL);
    cr_assert(strstr(ld_reader_errmsg(r), "two numbers"), "%s", ld_reader_errmsg(r));
    cr_assert_eq(ld_reader_set_floats(r, LD_R_RRC_RATIO, NULL, 0), LD_OK); /* default again */
    ld_reader_free(r);
}

/* Damaged samples: the full decode always reports them; the box decoder reports damage in the
 * rows it decodes and never crashes or hangs. */
Test(rrc, corrupt_samples)
{
    for (int full = 0; full < 2; full++) {
        ld_reader *r = rrc_reader(2, 16, 16, full);
        ld_reader_set(r, LD_R_BATCH_SIZE, 1);
        cr_assert_eq(ld_reader_open(r, FIX "enc_corrupt.h5"), LD_OK, "%s", ld_reader_errmsg(r));
        const ld_batch *b;
        int rc;
        while ((rc = ld_reader_next(r, &b)) == LD_OK)
            ;
        cr_assert_eq(rc, LD_EFORMAT, "full=%d: %d %s", full, rc, ld_reader_errmsg(r));
        cr_assert(strstr(ld_reader_errmsg(r), "sample 5") ||
                      strstr(ld_reader_errmsg(r), "sample 7"),
                  "%s", ld_reader_errmsg(r));
        ld_reader_free(r);
    }
}
