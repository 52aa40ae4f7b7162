/*
 * Codec: JPEG/PNG decoding against PIL's decode of the same files (fixtures from
 * tests/data/fixtures_codec.py, references stored as PPM/PGM), EXIF orientation, DCT
 * scaling, damaged and hostile inputs, encoder round trips.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jpeglib.h>

#include "codec/codec.h"

#define DIR LD_TEST_DATA "/codec/"

/* ---- helpers ------------------------------------------------------------------------------ */

static ld_buf load(const char *path)
{
    ld_buf b = {0};
    ld_err e = {0};
    int rc = ld__read_file(path, &b, (size_t)1 << 30, &e);
    cr_assert_eq(rc, LD_OK, "read %s: %s", path, e.msg);
    return b;
}

/* Binary PPM (P6) or PGM (P5) with maxval 255, as PIL writes them. */
static ld_image load_pnm(const char *path)
{
    ld_image im = {0};
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "open %s", path);
    char magic[3] = {0};
    int w, h, maxv;
    cr_assert_eq(fscanf(f, "%2s %d %d %d", magic, &w, &h, &maxv), 4, "header of %s", path);
    fgetc(f); /* the single whitespace after maxval */
    int c = strcmp(magic, "P6") == 0 ? 3 : 1;
    cr_assert(maxv == 255 && (c == 3 || strcmp(magic, "P5") == 0), "format of %s", path);
    cr_assert_eq(ld__image_alloc(&im, w, h, c), LD_OK);
    cr_assert_eq(fread(im.px, 1, (size_t)w * h * c, f), (size_t)w * h * c, "pixels of %s", path);
    fclose(f);
    return im;
}

static int decode(ld_codec *c, const char *path, const ld_decode_opts *o, ld_image *out, ld_err *e)
{
    ld_buf b = load(path);
    int rc = ld__img_decode(c, b.p, b.len, path, o, out, e);
    ld__buf_free(&b);
    return rc;
}

static int max_diff(const ld_image *a, const ld_image *b)
{
    cr_assert(a->w == b->w && a->h == b->h && a->c == b->c, "size %dx%dx%d vs %dx%dx%d", a->w, a->h,
              a->c, b->w, b->h, b->c);
    int m = 0;
    for (size_t i = 0; i < (size_t)a->w * a->h * a->c; i++) {
        int d = abs((int)a->px[i] - (int)b->px[i]);
        if (d > m) m = d;
    }
    return m;
}

static double psnr(const ld_image *a, const ld_image *b)
{
    cr_assert(a->w == b->w && a->h == b->h && a->c == b->c, "psnr: sizes differ");
    double se = 0;
    const size_t n = (size_t)a->w * a->h * a->c;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a->px[i] - b->px[i];
        se += d * d;
    }
    return se == 0 ? 99.0 : 10 * log10(255.0 * 255.0 / (se / n));
}

/* Decode `stem`.<ext> at 1 and 3 channels and compare with stem.pgm / stem.ppm. */
static void check_against_ref(const char *file, const char *stem, int tol)
{
    ld_codec *c = ld__codec_create();
    cr_assert_not_null(c);
    for (int ch = 1; ch <= 3; ch += 2) {
        char path[512], ref[512];
        snprintf(path, sizeof path, DIR "%s", file);
        snprintf(ref, sizeof ref, DIR "%s.%s", stem, ch == 3 ? "ppm" : "pgm");
        ld_decode_opts o = {.channels = ch, .apply_orientation = 1};
        ld_image im = {0}, want = load_pnm(ref);
        ld_err e = {0};
        int rc = decode(c, path, &o, &im, &e);
        cr_assert_eq(rc, LD_OK, "%s: %s", file, e.msg);
        int d = max_diff(&im, &want);
        cr_log_info("%s, %d channel(s): max difference to the reference %d", file, ch, d);
        cr_expect_leq(d, tol, "%s, %d channel(s): max difference %d > %d", file, ch, d, tol);
        ld__image_free(&im);
        ld__image_free(&want);
    }
    ld__codec_free(c);
}

/* ---- JPEG decoding -------------------------------------------------------------------------- */

/* Same libjpeg-turbo with the same (default) settings as PIL: expect bit-exact. */
Test(codec, baseline_jpeg_matches_pil_exactly)
{
    check_against_ref("base.jpg", "base", 0);
}
Test(codec, progressive_jpeg_matches_pil_exactly)
{
    check_against_ref("prog.jpg", "prog", 0);
}
Test(codec, grayscale_jpeg_matches_pil_exactly)
{
    check_against_ref("gray.jpg", "gray", 0);
}
Test(codec, full_chroma_jpeg_matches_pil_exactly)
{
    check_against_ref("q444.jpg", "q444", 0);
}
/* Reference computed from PIL's CMYK decode with the same integer formula. */
Test(codec, adobe_cmyk_jpeg_converts_to_rgb)
{
    check_against_ref("cmyk.jpg", "cmyk", 0);
}

/* YCCK: libjpeg converts our inverted-CMYK source to YCCK when writing; decoding must undo
 * both the YCC transform and the Adobe inversion. Made here because PIL cannot write YCCK. */
struct jerr_jmp {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
};
static void jerr_exit(j_common_ptr ci)
{
    longjmp(((struct jerr_jmp *)ci->err)->jb, 1);
}

/* Encode a synthetic 4-channel image as `space` (JCS_CMYK or JCS_YCCK), with or without the
 * Adobe marker, decode it and compare with the expected RGB: stored values are inverted
 * (R = C*K/255) with the Adobe marker, plain (R = (255-C)(255-K)/255) without. */
static void check_four_channel(J_COLOR_SPACE space, int adobe, const char *label)
{
    const int w = 96, h = 64;
    uint8_t *cmyk = malloc((size_t)w * h * 4);
    cr_assert_not_null(cmyk);
    ld_image want = {0};
    cr_assert_eq(ld__image_alloc(&want, w, h, 3), LD_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = cmyk + ((size_t)y * w + x) * 4;
            p[0] = (uint8_t)(x * 255 / (w - 1)); /* smooth ramps: JPEG keeps them well */
            p[1] = (uint8_t)(y * 255 / (h - 1));
            p[2] = 128;
            p[3] = (uint8_t)(255 - (x + y));
            const unsigned k = adobe ? p[3] : 255u - p[3];
            for (int i = 0; i < 3; i++) {
                const unsigned v = adobe ? p[i] : 255u - p[i];
                want.px[((size_t)y * w + x) * 3 + i] = (uint8_t)((v * k + 127) / 255);
            }
        }
    struct jpeg_compress_struct ci;
    struct jerr_jmp je;
    ci.err = jpeg_std_error(&je.pub);
    je.pub.error_exit = jerr_exit;
    unsigned char *jpg = NULL;
    unsigned long jlen = 0;
    cr_assert_eq(setjmp(je.jb), 0, "%s: libjpeg failed writing the fixture", label);
    jpeg_create_compress(&ci);
    jpeg_mem_dest(&ci, &jpg, &jlen);
    ci.image_width = w;
    ci.image_height = h;
    ci.input_components = 4;
    ci.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&ci);
    jpeg_set_colorspace(&ci, space); /* YCCK: converted while writing, Adobe transform 2 */
    ci.write_Adobe_marker = adobe ? TRUE : FALSE;
    jpeg_set_quality(&ci, 100, TRUE);
    for (int i = 0; i < 4; i++)
        ci.comp_info[i].h_samp_factor = ci.comp_info[i].v_samp_factor = 1;
    jpeg_start_compress(&ci, TRUE);
    while (ci.next_scanline < ci.image_height) {
        JSAMPROW row = cmyk + (size_t)ci.next_scanline * w * 4;
        jpeg_write_scanlines(&ci, &row, 1);
    }
    jpeg_finish_compress(&ci);
    jpeg_destroy_compress(&ci);

    ld_codec *c = ld__codec_create();
    ld_image im = {0};
    ld_err e = {0};
    ld_decode_opts o = {.channels = 3};
    int rc = ld__img_decode(c, jpg, jlen, label, &o, &im, &e);
    cr_assert_eq(rc, LD_OK, "%s", e.msg);
    double q = psnr(&im, &want);
    int d = max_diff(&im, &want);
    cr_log_info("%s: PSNR %.1f dB, max difference %d", label, q, d);
    cr_expect_gt(q, 40.0, "%s: decode PSNR %.1f dB", label, q);
    cr_expect_leq(d, 8, "%s: decode max difference %d", label, d);
    ld__image_free(&im);
    ld__image_free(&want);
    ld__codec_free(c);
    free(jpg);
    free(cmyk);
}

/* YCCK only exists with the Adobe marker (it names the transform). PIL cannot write YCCK. */
Test(codec, ycck_jpeg_decodes_to_rgb)
{
    check_four_channel(JCS_YCCK, 1, "YCCK (Adobe)");
}
Test(codec, plain_cmyk_without_adobe_marker_is_not_inverted)
{
    check_four_channel(JCS_CMYK, 0, "CMYK (no Adobe marker)");
}

/* ---- EXIF orientation --------------------------------------------------------------------- */

Test(codec, every_exif_orientation_is_applied)
{
    ld_codec *c = ld__codec_create();
    ld_image up = load_pnm(DIR "up.ppm"), im = {0};
    for (int o = 1; o <= 8; o++) {
        char path[256], ref[256], stored[256];
        snprintf(path, sizeof path, DIR "orient%d.jpg", o);
        snprintf(ref, sizeof ref, DIR "orient%d.ppm", o);
        snprintf(stored, sizeof stored, DIR "orient%d_stored.ppm", o);
        ld_err e = {0};
        ld_buf b = load(path);
        ld_img_info info;
        cr_assert_eq(ld__img_info(c, b.p, b.len, path, &info, &e), LD_OK, "%s", e.msg);
        cr_expect(info.orientation == o && info.w == 240 && info.h == 160,
                  "orientation %d: info says %d, %dx%d", o, info.orientation, info.w, info.h);

        ld_decode_opts opt = {.channels = 3, .apply_orientation = 1};
        cr_assert_eq(ld__img_decode(c, b.p, b.len, path, &opt, &im, &e), LD_OK, "%s", e.msg);
        ld_image want = load_pnm(ref);
        int d = max_diff(&im, &want);
        cr_expect_eq(d, 0, "orientation %d vs PIL exif_transpose: max difference %d", o, d);
        double q = psnr(&im, &up);
        cr_log_info("orientation %d: PSNR %.1f dB against the upright crop", o, q);
        cr_expect_gt(q, 38.0, "orientation %d vs the upright crop: PSNR %.1f dB", o, q);
        ld__image_free(&want);

        opt.apply_orientation = 0; /* as stored */
        cr_assert_eq(ld__img_decode(c, b.p, b.len, path, &opt, &im, &e), LD_OK, "%s", e.msg);
        want = load_pnm(stored);
        d = max_diff(&im, &want);
        cr_expect_eq(d, 0, "orientation %d not applied: max difference %d", o, d);
        ld__image_free(&want);
        ld__buf_free(&b);
    }
    ld__image_free(&up);
    ld__image_free(&im);
    ld__codec_free(c);
}

/* Each orientation on a 3x2 image with distinct pixels, 1 and 3 channels. */
Test(codec, image_orient_maps_pixels_like_exif_says)
{
    /* Source (values are 10*row + col):   00 01 02
     *                                      10 11 12                     */
    static const int want[9][6] = {
        {0},
        {0, 1, 2, 10, 11, 12}, /* 1 */
        {2, 1, 0, 12, 11, 10}, /* 2 mirror horizontally */
        {12, 11, 10, 2, 1, 0}, /* 3 rotate 180 */
        {10, 11, 12, 0, 1, 2}, /* 4 mirror vertically */
        {0, 10, 1, 11, 2, 12}, /* 5 transpose */
        {10, 0, 11, 1, 12, 2}, /* 6 rotate 90 CW */
        {12, 2, 11, 1, 10, 0}, /* 7 transverse */
        {2, 12, 1, 11, 0, 10}, /* 8 rotate 270 CW */
    };
    for (int ch = 1; ch <= 3; ch += 2)
        for (int o = 1; o <= 8; o++) {
            ld_image im = {0}, tmp = {0};
            cr_assert_eq(ld__image_alloc(&im, 3, 2, ch), LD_OK);
            for (int i = 0; i < 6; i++)
                for (int k = 0; k < ch; k++)
                    im.px[i * ch + k] = (uint8_t)((i / 3) * 10 + i % 3 + 100 * k);
            cr_assert_eq(ld__image_orient(&im, o, &tmp), LD_OK);
            const int sw = o >= 5;
            cr_expect(im.w == (sw ? 2 : 3) && im.h == (sw ? 3 : 2), "o=%d size %dx%d", o, im.w,
                      im.h);
            for (int i = 0; i < 6; i++)
                for (int k = 0; k < ch; k++)
                    cr_expect_eq(im.px[i * ch + k], want[o][i] + 100 * k,
                                 "orientation %d, %d ch, pixel %d channel %d: %d", o, ch, i, k,
                                 im.px[i * ch + k]);
            ld__image_free(&im);
            ld__image_free(&tmp);
        }
}

static size_t put16(uint8_t *p, unsigned v, int le)
{
    p[le ? 0 : 1] = (uint8_t)v;
    p[le ? 1 : 0] = (uint8_t)(v >> 8);
    return 2;
}
static size_t put32(uint8_t *p, uint32_t v, int le)
{
    put16(p + (le ? 0 : 2), v & 0xFFFF, le);
    put16(p + (le ? 2 : 0), v >> 16, le);
    return 4;
}

/* "Exif\0\0" + TIFF header + IFD0 with one entry. */
static size_t exif_payload(uint8_t *p, int le, unsigned tag, unsigned type, uint32_t count,
                           unsigned value, uint32_t ifd, unsigned nent)
{
    size_t n = 0;
    memcpy(p, "Exif\0\0", 6);
    n = 6;
    p[n++] = le ? 'I' : 'M';
    p[n++] = le ? 'I' : 'M';
    n += put16(p + n, 42, le);
    n += put32(p + n, ifd, le);
    n += put16(p + n, nent, le);
    n += put16(p + n, tag, le);
    n += put16(p + n, type, le);
    n += put32(p + n, count, le);
    n += put16(p + n, value, le);
    n += put16(p + n, 0, le);
    n += put32(p + n, 0, le); /* next IFD */
    return n;
}

Test(codec, exif_parser_reads_both_byte_orders_and_rejects_damage)
{
    uint8_t p[64];
    size_t n;
    for (int le = 0; le <= 1; le++) {
        n = exif_payload(p, le, 0x0112, 3, 1, 6, 8, 1);
        cr_expect_eq(ld__exif_orientation(p, n), 6, "valid %s payload", le ? "II" : "MM");
        for (size_t cut = 0; cut < n; cut++) /* every truncation: absent, never out of bounds */
            cr_expect_eq(ld__exif_orientation(p, cut), cut >= 6 + 8 + 2 + 12 ? 6 : 1, "cut at %zu",
                         cut);
    }
    n = exif_payload(p, 1, 0x0112, 3, 1, 9, 8, 1);
    cr_expect_eq(ld__exif_orientation(p, n), 1, "value 9 is out of range");
    n = exif_payload(p, 1, 0x0112, 4, 1, 6, 8, 1);
    cr_expect_eq(ld__exif_orientation(p, n), 1, "type LONG is not valid for orientation");
    n = exif_payload(p, 1, 0x0110, 3, 1, 6, 8, 1);
    cr_expect_eq(ld__exif_orientation(p, n), 1, "no orientation tag");
    n = exif_payload(p, 1, 0x0112, 3, 1, 6, 0xFFFFFFF0u, 1);
    cr_expect_eq(ld__exif_orientation(p, n), 1, "IFD offset far out of bounds");
    n = exif_payload(p, 1, 0x0112, 3, 1, 6, 8, 0xFFFF);
    cr_expect_eq(ld__exif_orientation(p, n), 1, "entry count beyond the payload");
    n = exif_payload(p, 1, 0x0112, 3, 1, 6, 8, 1);
    p[6] = 'X';
    cr_expect_eq(ld__exif_orientation(p, n), 1, "bad byte order mark");
    cr_expect_eq(ld__exif_orientation(NULL, 0), 1);
}

/* ---- scaled decoding ------------------------------------------------------------------------ */

static void scaled(const char *file, int min_w, int min_h, int ew, int eh)
{
    ld_codec *c = ld__codec_create();
    ld_image im = {0};
    ld_err e = {0};
    ld_decode_opts o = {.channels = 3, .min_w = min_w, .min_h = min_h, .apply_orientation = 1};
    cr_assert_eq(decode(c, file, &o, &im, &e), LD_OK, "%s", e.msg);
    cr_expect(im.w == ew && im.h == eh, "%s with min %dx%d: got %dx%d, want %dx%d", file, min_w,
              min_h, im.w, im.h, ew, eh);
    ld__image_free(&im);
    ld__codec_free(c);
}

/* Scales are 1/8, 2/8, 4/8 or 8/8 (see ld__dct_scale in jpeg_dec.c for why not 3/8 etc.). */
Test(codec, scaled_decode_picks_the_smallest_sufficient_scale)
{
    scaled(DIR "base.jpg", 0, 0, 500, 375);
    scaled(DIR "base.jpg", 1, 1, 63, 47);       /* 1/8 */
    scaled(DIR "base.jpg", 63, 47, 63, 47);     /* 1/8, exactly */
    scaled(DIR "base.jpg", 64, 0, 125, 94);     /* 2/8 */
    scaled(DIR "base.jpg", 120, 90, 125, 94);   /* 2/8 */
    scaled(DIR "base.jpg", 126, 0, 250, 188);   /* 4/8: 2/8 is one pixel short */
    scaled(DIR "base.jpg", 250, 188, 250, 188); /* 4/8 */
    scaled(DIR "base.jpg", 0, 189, 500, 375);   /* 4/8 is one row short */
}

Test(codec, scaled_decode_limits_apply_to_the_displayed_orientation)
{
    /* Stored 160x240, displayed 240x160: 4/8 gives 120x80 displayed. Read in stored
     * orientation, 120 wide would need 6/8 -> full size. */
    scaled(DIR "orient6.jpg", 120, 80, 120, 80);
    scaled(DIR "orient6.jpg", 60, 40, 60, 40);
    scaled(DIR "orient6.jpg", 121, 80, 240, 160);
    /* Larger than the image: full size, never upscaled. */
    scaled(DIR "base.jpg", 1000, 1000, 500, 375);
}

Test(codec, half_scale_matches_pil_draft_exactly)
{
    ld_codec *c = ld__codec_create();
    ld_image im = {0}, want = load_pnm(DIR "base_half.ppm");
    ld_err e = {0};
    ld_decode_opts o = {.channels = 3, .min_w = 250, .min_h = 188};
    cr_assert_eq(decode(c, DIR "base.jpg", &o, &im, &e), LD_OK, "%s", e.msg);
    int d = max_diff(&im, &want);
    cr_expect_eq(d, 0, "1/2 scale vs PIL draft: max difference %d", d);
    ld__image_free(&im);
    ld__image_free(&want);
    ld__codec_free(c);
}

/* ---- PNG decoding ------------------------------------------------------------------------- */

Test(codec, png_variants_decode_exactly)
{
    static const char *stems[] = {"rgb8",      "rgba8",           "gray8",
                                  "graya8",    "rgb16",           "rgba16",
                                  "gray16",    "rgb8_interlaced", "gray16_interlaced",
                                  "gray1",     "gray4",           "pal4",
                                  "pal8_trns", "gray8_trns",      "rgb8_trns"};
    for (size_t i = 0; i < sizeof stems / sizeof *stems; i++) {
        char file[64];
        snprintf(file, sizeof file, "%s.png", stems[i]);
        check_against_ref(file, stems[i], 0);
    }
}

Test(codec, info_reads_headers)
{
    ld_codec *c = ld__codec_create();
    static const struct {
        const char *f;
        int fmt, w, h;
    } cases[] = {{DIR "base.jpg", LD_IMG_JPEG, 500, 375},
                 {DIR "rgb8_interlaced.png", LD_IMG_PNG, 61, 47},
                 {DIR "bomb.jpg", LD_IMG_JPEG, 60000, 60000},
                 {DIR "bomb.png", LD_IMG_PNG, 60000, 60000}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ld_buf b = load(cases[i].f);
        ld_img_info info;
        ld_err e = {0};
        cr_assert_eq(ld__img_info(c, b.p, b.len, cases[i].f, &info, &e), LD_OK, "%s", e.msg);
        cr_expect((int)info.format == cases[i].fmt && info.w == cases[i].w &&
                      info.h == cases[i].h && info.orientation == 1,
                  "%s: format %d %dx%d orientation %d", cases[i].f, info.format, info.w, info.h,
                  info.orientation);
        ld__buf_free(&b);
    }
    ld__codec_free(c);
}

/* ---- damaged and hostile input -------------------------------------------------------------- */

static double thread_cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Returns the message (a static copy, valid until the next call). */
static const char *expect_error(ld_codec *c, const char *name, const uint8_t *p, size_t n, int code)
{
    ld_decode_opts o = {.channels = 3, .max_pixels = 100000000, .apply_orientation = 1};
    ld_image im = {0};
    static ld_err e;
    memset(&e, 0, sizeof e);
    /* CPU time of this thread, not wall time: a loaded machine must not fail it (a bomb that
     * decodes for long still does) */
    const double t0 = thread_cpu_seconds();
    int rc = ld__img_decode(c, p, n, name, &o, &im, &e);
    const double dt = thread_cpu_seconds() - t0;
    cr_expect_eq(rc, code, "%s (%zu bytes): rc %d (%s), want %d", name, n, rc, e.msg, code);
    cr_expect(strstr(e.msg, name) == e.msg, "message should start with the name: '%s'", e.msg);
    cr_expect_lt(dt, 0.5, "%s took %.3f s", name, dt);
    ld__image_free(&im);
    return e.msg;
}

static void expect_file_error(const char *file, int code)
{
    ld_codec *c = ld__codec_create();
    ld_buf b = load(file);
    cr_log_info("%s", expect_error(c, file, b.p, b.len, code));
    ld__buf_free(&b);
    ld__codec_free(c);
}

Test(codec, truncated_jpeg_is_a_format_error_at_every_cut)
{
    ld_codec *c = ld__codec_create();
    ld_buf b = load(DIR "base.jpg");
    ld_buf p = load(DIR "prog.jpg");
    const size_t small[] = {3, 20, 100, 300, 600};
    char name[128];
    for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
        snprintf(name, sizeof name, "base.jpg cut at %zu", small[i]);
        expect_error(c, name, b.p, small[i], LD_EFORMAT);
    }
    for (int k = 1; k < 10; k++) {
        snprintf(name, sizeof name, "base.jpg cut at %d/10", k);
        const char *msg = expect_error(c, name, b.p, b.len * k / 10, LD_EFORMAT);
        if (k == 5) cr_log_info("%s", msg);
        snprintf(name, sizeof name, "prog.jpg cut at %d/10", k);
        expect_error(c, name, p.p, p.len * k / 10, LD_EFORMAT);
    }
    expect_error(c, "base.jpg without EOI", b.p, b.len - 2, LD_EFORMAT);
    expect_error(c, "base.jpg half an EOI", b.p, b.len - 1, LD_EFORMAT);
    /* The codec is still usable after all those longjmps. */
    ld_decode_opts o = {.channels = 3};
    ld_image im = {0}, want = load_pnm(DIR "base.ppm");
    ld_err e = {0};
    cr_assert_eq(ld__img_decode(c, b.p, b.len, "base.jpg", &o, &im, &e), LD_OK, "%s", e.msg);
    cr_expect_eq(max_diff(&im, &want), 0, "decode after errors differs");
    ld__image_free(&im);
    ld__image_free(&want);
    ld__buf_free(&b);
    ld__buf_free(&p);
    ld__codec_free(c);
}

Test(codec, corrupt_jpeg_data_is_a_format_error)
{
    ld_codec *c = ld__codec_create();
    ld_buf b = load(DIR "base.jpg");
    /* Damage entropy-coded data in the middle: libjpeg only warns, we must fail. */
    size_t sos = 0;
    for (size_t i = 0; i + 1 < b.len; i++)
        if (b.p[i] == 0xFF && b.p[i + 1] == 0xDA) {
            sos = i;
            break;
        }
    cr_assert(sos > 0, "no SOS marker");
    const size_t at = sos + (b.len - sos) / 2;
    b.p[at] = 0xFF; /* a marker in the middle of the scan */
    b.p[at + 1] = 0xD3;
    cr_log_info("%s", expect_error(c, "base.jpg with a bogus RST marker", b.p, b.len, LD_EFORMAT));
    ld__buf_free(&b);
    ld__codec_free(c);
}

Test(codec, garbage_and_empty_inputs_are_format_errors)
{
    expect_file_error(DIR "empty.jpg", LD_EFORMAT);
    expect_file_error(DIR "random.jpg", LD_EFORMAT);
    expect_file_error(DIR "random_soi.jpg", LD_EFORMAT);
    expect_file_error(DIR "text.png", LD_EFORMAT);
}

Test(codec, damaged_png_is_a_format_error)
{
    expect_file_error(DIR "bad_crc.png", LD_EFORMAT);
    expect_file_error(DIR "bad_zlib.png", LD_EFORMAT);
    expect_file_error(DIR "bad_ihdr.png", LD_EFORMAT);
    expect_file_error(DIR "trunc_idat.png", LD_EFORMAT);
    ld_buf b = load(DIR "rgb8.png");
    ld_codec *c = ld__codec_create();
    for (size_t cut = 8; cut < b.len; cut += 97) {
        char name[64];
        snprintf(name, sizeof name, "rgb8.png cut at %zu", cut);
        expect_error(c, name, b.p, cut, LD_EFORMAT);
    }
    ld__codec_free(c);
    ld__buf_free(&b);
}

Test(codec, decompression_bombs_hit_the_pixel_limit_quickly)
{
    expect_file_error(DIR "bomb.jpg", LD_ELIMIT);
    expect_file_error(DIR "bomb.png", LD_ELIMIT);
}

Test(codec, pixel_limit_is_inclusive)
{
    ld_codec *c = ld__codec_create();
    ld_buf b = load(DIR "base.jpg");
    ld_image im = {0};
    ld_err e = {0};
    ld_decode_opts o = {.channels = 3, .max_pixels = 500 * 375};
    cr_expect_eq(ld__img_decode(c, b.p, b.len, "base.jpg", &o, &im, &e), LD_OK, "%s", e.msg);
    o.max_pixels--;
    cr_expect_eq(ld__img_decode(c, b.p, b.len, "base.jpg", &o, &im, &e), LD_ELIMIT, "%s", e.msg);
    ld_buf p = load(DIR "rgb8.png");
    o.max_pixels = 61 * 47;
    cr_expect_eq(ld__img_decode(c, p.p, p.len, "rgb8.png", &o, &im, &e), LD_OK, "%s", e.msg);
    o.max_pixels--;
    cr_expect_eq(ld__img_decode(c, p.p, p.len, "rgb8.png", &o, &im, &e), LD_ELIMIT, "%s", e.msg);
    o.max_pixels = 40; /* below one dimension: libpng's own limit, still LD_ELIMIT */
    cr_expect_eq(ld__img_decode(c, p.p, p.len, "rgb8.png", &o, &im, &e), LD_ELIMIT, "%s", e.msg);
    ld__image_free(&im);
    ld__buf_free(&b);
    ld__buf_free(&p);
    ld__codec_free(c);
}

/* ---- encoding ------------------------------------------------------------------------------ */

/* Sampling factor of component 0 from the SOF0 marker of a JPEG we wrote. */
static int luma_sampling(const ld_buf *j)
{
    for (size_t i = 2; i + 11 < j->len; i++)
        if (j->p[i] == 0xFF && j->p[i + 1] == 0xC0) return j->p[i + 11];
    return -1;
}

Test(codec, jpeg_encode_round_trip)
{
    ld_codec *c = ld__codec_create();
    /* up.ppm is cut from the photo at (60, 40): off the original 16x16 MCU grid, so this is
     * not just re-quantising the same blocks. */
    ld_image src = load_pnm(DIR "up.ppm"), gray = load_pnm(DIR "base.pgm"), im = {0};
    ld_buf out = {0};
    ld_err e = {0};
    ld_decode_opts o3 = {.channels = 3}, o1 = {.channels = 1};
    static const int qs[] = {90, 75, 95};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(ld__jpeg_encode(c, &src, qs[i], 0, &out, &e), LD_OK, "%s", e.msg);
        cr_expect_eq(luma_sampling(&out), qs[i] >= 90 ? 0x11 : 0x22, "q%d sampling %#x", qs[i],
                     luma_sampling(&out));
        cr_assert_eq(ld__img_decode(c, out.p, out.len, "enc", &o3, &im, &e), LD_OK, "%s", e.msg);
        double q = psnr(&im, &src);
        cr_log_info("q%d RGB: %zu bytes, PSNR %.1f dB", qs[i], out.len, q);
        cr_expect_gt(q, qs[i] >= 90 ? 30.0 : 28.0, "q%d PSNR %.1f dB", qs[i], q);
    }
    const uint8_t *first = out.p;
    cr_assert_eq(ld__jpeg_encode(c, &src, 90, 0, &out, &e), LD_OK, "%s", e.msg);
    cr_expect_eq(out.p, first, "the output buffer should be reused, not reallocated");

    cr_assert_eq(ld__jpeg_encode(c, &gray, 90, 0, &out, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(ld__img_decode(c, out.p, out.len, "enc", &o1, &im, &e), LD_OK, "%s", e.msg);
    double q = psnr(&im, &gray);
    cr_expect_gt(q, 30.0, "gray q90 PSNR %.1f dB", q);
    cr_expect_eq(ld__jpeg_encode(c, &src, 0, 0, &out, &e), LD_EINVAL);
    cr_expect_eq(ld__jpeg_encode(c, &src, 101, 0, &out, &e), LD_EINVAL);
    ld__image_free(&src);
    ld__image_free(&gray);
    ld__image_free(&im);
    ld__buf_free(&out);
    ld__codec_free(c);
}

Test(codec, png_encode_round_trip_is_lossless)
{
    ld_codec *c = ld__codec_create();
    ld_buf out = {0};
    ld_err e = {0};
    const char *refs[] = {DIR "base.ppm", DIR "base.pgm"};
    for (int i = 0; i < 2; i++) {
        ld_image src = load_pnm(refs[i]), im = {0};
        ld_decode_opts o = {.channels = src.c};
        cr_assert_eq(ld__png_encode(c, &src, &out, &e), LD_OK, "%s", e.msg);
        cr_assert_eq(ld__img_decode(c, out.p, out.len, "enc.png", &o, &im, &e), LD_OK, "%s", e.msg);
        cr_expect_eq(max_diff(&im, &src), 0, "%s: PNG round trip not exact", refs[i]);
        ld__image_free(&src);
        ld__image_free(&im);
    }
    ld__buf_free(&out);
    ld__codec_free(c);
}

Test(codec, sniffing_uses_magic_numbers)
{
    const uint8_t jpg[] = {0xFF, 0xD8, 0xFF, 0xE0};
    const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    cr_expect_eq(ld__img_sniff(jpg, 4), LD_IMG_JPEG);
    cr_expect_eq(ld__img_sniff(jpg, 2), LD_IMG_UNKNOWN);
    cr_expect_eq(ld__img_sniff(png, 8), LD_IMG_PNG);
    cr_expect_eq(ld__img_sniff(png, 7), LD_IMG_UNKNOWN);
    /* GIF is a format now (issue 29); plain text is still nothing */
    cr_expect_eq(ld__img_sniff((const uint8_t *)"GIF89a", 6), LD_IMG_GIF);
    cr_expect_eq(ld__img_sniff((const uint8_t *)"GIF90a", 6), LD_IMG_UNKNOWN);
    cr_expect_eq(ld__img_sniff((const uint8_t *)"hello, world", 12), LD_IMG_UNKNOWN);
}

/* ---- threads ------------------------------------------------------------------------------- */

/* One codec per thread, no shared state: two threads decoding at once get exact results. */
struct thread_job {
    ld_buf jpg, png;
    ld_image want_jpg, want_png;
    int bad; /* number of wrong decodes */
};

static void *decode_loop(void *arg)
{
    struct thread_job *j = arg;
    ld_codec *c = ld__codec_create();
    ld_image im = {0};
    ld_err e;
    const ld_decode_opts o = {.channels = 3, .apply_orientation = 1};
    for (int i = 0; c && i < 20; i++) {
        if (ld__img_decode(c, j->jpg.p, j->jpg.len, "base.jpg", &o, &im, &e) != LD_OK ||
            im.w != j->want_jpg.w || memcmp(im.px, j->want_jpg.px, (size_t)im.w * im.h * 3))
            j->bad++;
        if (ld__img_decode(c, j->png.p, j->png.len, "rgb8.png", &o, &im, &e) != LD_OK ||
            im.w != j->want_png.w || memcmp(im.px, j->want_png.px, (size_t)im.w * im.h * 3))
            j->bad++;
    }
    if (!c) j->bad = -1;
    ld__image_free(&im);
    ld__codec_free(c);
    return NULL;
}

Test(codec, independent_codecs_decode_concurrently)
{
    struct thread_job jobs[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        jobs[t] = (struct thread_job){.jpg = load(DIR "base.jpg"),
                                      .png = load(DIR "rgb8.png"),
                                      .want_jpg = load_pnm(DIR "base.ppm"),
                                      .want_png = load_pnm(DIR "rgb8.ppm")};
        cr_assert_eq(pthread_create(&th[t], NULL, decode_loop, &jobs[t]), 0);
    }
    for (int t = 0; t < 2; t++) {
        pthread_join(th[t], NULL);
        cr_expect_eq(jobs[t].bad, 0, "thread %d: %d wrong decodes", t, jobs[t].bad);
        ld__buf_free(&jobs[t].jpg);
        ld__buf_free(&jobs[t].png);
        ld__image_free(&jobs[t].want_jpg);
        ld__image_free(&jobs[t].want_png);
    }
}

/* VmPeak of this process in KiB (the largest address space it ever had). */
static long vm_peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmPeak:", 7)) kib = atol(line + 7);
    if (f) fclose(f);
    return kib;
}

Test(codec, png_declaring_a_huge_chunk_is_refused_without_allocating_it)
{
    /* 108 bytes found by fuzz_png_decode: after a 53-byte chunk, a chunk declaring 1.9 GB.
     * libpng allocated the declared length before reading (Debian's build sets no cap), so
     * each such file cost 1.9 GB of address space per decoding thread. Decoded in a child so
     * its VmPeak says what the decode allocated. */
    const char *path = LD_SOURCE_DIR "/tests/fuzz/corpus/png_decode/huge_chunk_length.png";
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        ld_codec *c = ld__codec_create();
        ld_image im = {0};
        ld_err e = {0};
        const ld_decode_opts o = {.channels = 3};
        const long before = vm_peak_kib();
        const int rc = decode(c, path, &o, &im, &e);
        const long grew = vm_peak_kib() - before;
        fprintf(stderr, "decode: %d (%s), VmPeak grew by %ld KiB\n", rc, e.msg, grew);
        ld__image_free(&im);
        ld__codec_free(c);
        _exit(rc < 0 && strstr(e.msg, path) && grew < 64 * 1024 ? 0 : 1);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "the huge chunk was allocated, or the error did not name the file (see stderr)");
}
