/*
 * Restart-marker splicing (codec/jpeg_splice.c, issue 16 item 3): on real photos re-encoded by
 * our encoder (which writes restart markers), the box decoder's pixels equal a full decode's
 * byte for byte over the box (random boxes, edges and corners, gray and RGB, 4:4:4 and 4:2:0,
 * DCT scales); the spliced JPEG decodes with a plain libjpeg decompressor without a single
 * warning; restart markers do not change the encoder's pixels; streams that do not qualify
 * (no DRI, progressive, an interval that fits neither rule) take the scanline-skipping path;
 * damaged streams give LD_EFORMAT or, where the damage is outside what is decoded, pixels,
 * never a crash (run under ASan by the sanitizer build).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "test_file.h"
#include "codec/codec.h"
#include "codec/jpeg_int.h"

#define PHOTOS LD_TEST_DATA "/photos/"

/* ---- a plain libjpeg encoder/decoder of the test's own, with a warning counter --------- */

struct tj {
    struct jpeg_error_mgr jerr;
    jmp_buf jb;
    int warnings;
};

static void tj_error(j_common_ptr c)
{
    longjmp(((struct tj *)c->client_data)->jb, 1);
}

static void tj_message(j_common_ptr c, int level)
{
    if (level < 0) ((struct tj *)c->client_data)->warnings++;
}

/* Encode im with libjpeg's defaults at `quality`, luma sampling factors samp_h x samp_v (1 x 1
 * = 4:4:4, 2 x 2 = 4:2:0, 2 x 1 = 4:2:2), restart interval `restart` MCUs (0 = none),
 * progressive or not. malloc'd. */
static uint8_t *tj_encode2(const ld_image *im, int quality, int samp_h, int samp_v,
                           unsigned restart, int progressive, size_t *len)
{
    struct jpeg_compress_struct j;
    struct tj t = {0};
    unsigned char *out = NULL;
    unsigned long n = 0;
    j.err = jpeg_std_error(&t.jerr);
    t.jerr.error_exit = tj_error;
    j.client_data = &t;
    cr_assert(!setjmp(t.jb), "test encoder failed");
    jpeg_create_compress(&j);
    jpeg_mem_dest(&j, &out, &n);
    j.image_width = (JDIMENSION)im->w;
    j.image_height = (JDIMENSION)im->h;
    j.input_components = im->c;
    j.in_color_space = im->c == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&j);
    jpeg_set_quality(&j, quality, TRUE);
    if (im->c == 3) {
        j.comp_info[0].h_samp_factor = samp_h;
        j.comp_info[0].v_samp_factor = samp_v;
        j.comp_info[1].h_samp_factor = j.comp_info[1].v_samp_factor = 1;
        j.comp_info[2].h_samp_factor = j.comp_info[2].v_samp_factor = 1;
    }
    j.restart_interval = restart;
    if (progressive) jpeg_simple_progression(&j);
    jpeg_start_compress(&j, TRUE);
    while (j.next_scanline < j.image_height) {
        JSAMPROW row = im->px + (size_t)j.next_scanline * im->w * im->c;
        jpeg_write_scanlines(&j, &row, 1);
    }
    jpeg_finish_compress(&j);
    jpeg_destroy_compress(&j);
    *len = n;
    return out;
}

static uint8_t *tj_encode(const ld_image *im, int quality, int samp, unsigned restart,
                          int progressive, size_t *len)
{
    return tj_encode2(im, quality, samp, samp, restart, progressive, len);
}

/* Full decode with a plain libjpeg decompressor; returns the warnings it emitted. */
static int tj_decode(const uint8_t *buf, size_t len, int channels, ld_image *out)
{
    struct jpeg_decompress_struct j;
    struct tj t = {0};
    j.err = jpeg_std_error(&t.jerr);
    t.jerr.error_exit = tj_error;
    t.jerr.emit_message = tj_message;
    j.client_data = &t;
    cr_assert(!setjmp(t.jb), "libjpeg refused the stream");
    jpeg_create_decompress(&j);
    jpeg_mem_src(&j, buf, (unsigned long)len);
    jpeg_read_header(&j, TRUE);
    j.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&j);
    cr_assert_eq(ld__image_alloc(out, (int)j.output_width, (int)j.output_height, channels), LD_OK);
    while (j.output_scanline < j.output_height) {
        JSAMPROW row = out->px + (size_t)j.output_scanline * out->w * channels;
        jpeg_read_scanlines(&j, &row, 1);
    }
    jpeg_finish_decompress(&j);
    jpeg_destroy_decompress(&j);
    return t.warnings;
}

/* ---- helpers --------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

/* Photo `k` decoded (channels 1 or 3) and re-encoded by our encoder at `quality`. */
static uint8_t *reencode(ld_codec *c, int k, int channels, int quality, ld_image *src, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, PHOTOS "p%02d.jpg", k);
    size_t n;
    uint8_t *buf = slurp(path, &n);
    ld_err e;
    const ld_decode_opts o = {.channels = channels, .apply_orientation = 1};
    cr_assert_eq(ld__img_decode(c, buf, n, path, &o, src, &e), LD_OK, "%s", e.msg);
    free(buf);
    ld_buf enc = {0};
    cr_assert_eq(ld__jpeg_encode(c, src, quality, 1, &enc, &e), LD_OK, "%s", e.msg);
    *len = enc.len;
    return enc.p;
}

/* What ld__jpeg_splice says about buf for `box` (1 spliced, 0 not), the spliced JPEG in out. */
static int try_splice(ld_codec *c, const uint8_t *buf, size_t len, const int box[4], ld_buf *out,
                      int sub[4])
{
    struct ld_jdec *d = ld__jdec_get(c);
    cr_assert(d);
    ld_buf segs = {0};
    volatile int r = -100;
    if (setjmp(*ld__jdec_jmp(d)) == 0) {
        j_decompress_ptr j = ld__jdec_header(d, buf, len);
        r = ld__jpeg_splice(j, buf, len, box, out, &segs, sub);
        jpeg_abort_decompress(j);
    }
    ld__buf_free(&segs);
    cr_assert(r != -100, "header refused: %s", ld__jdec_msg(d));
    return r;
}

/* The box decoder's output for box at scale min (0 = full) equals `full` (the full decode at
 * the same DCT scale) over the box, byte for byte. */
static void check_box(ld_codec *c, const uint8_t *buf, size_t len, int channels, const int box[4],
                      int min, const ld_image *full, int n, const char *what)
{
    ld_image part = {0};
    double rect[4];
    ld_err e;
    const ld_decode_opts o = {
        .channels = channels, .min_w = min, .min_h = min, .apply_orientation = 1};
    cr_assert_eq(ld__jpeg_decode_box(c, buf, len, "box", &o, box, &part, rect, &e), LD_OK, "%s: %s",
                 what, e.msg);
    const double s = n / 8.0;
    cr_assert(fabs(rect[2] - box[2] * s) < 1e-9 && fabs(rect[3] - box[3] * s) < 1e-9,
              "%s: box %d,%d %dx%d: rect %gx%g, not at scale %d/8", what, box[0], box[1], box[2],
              box[3], rect[2], rect[3], n);
    /* where part's pixel (0, 0) is in the full decode */
    const double ox = box[0] * s - rect[0], oy = box[1] * s - rect[1];
    cr_assert(ox == floor(ox) && oy == floor(oy) && ox >= 0 && oy >= 0, "%s: origin %g,%g", what,
              ox, oy);
    const int px0 = (int)floor(rect[0]), px1 = (int)ceil(rect[0] + rect[2]);
    const int py0 = (int)floor(rect[1]), py1 = (int)ceil(rect[1] + rect[3]);
    cr_assert(px1 <= part.w && py1 <= part.h && (int)ox + px1 <= full->w &&
                  (int)oy + py1 <= full->h,
              "%s: box %d,%d %dx%d: rect %g,%g %gx%g in %dx%d", what, box[0], box[1], box[2],
              box[3], rect[0], rect[1], rect[2], rect[3], part.w, part.h);
    for (int y = py0; y < py1; y++) {
        const uint8_t *a = part.px + ((size_t)y * part.w + px0) * channels;
        const uint8_t *b = full->px + ((size_t)(y + (int)oy) * full->w + (int)ox + px0) * channels;
        if (memcmp(a, b, (size_t)(px1 - px0) * channels) != 0) {
            int x = 0;
            while (a[x] == b[x])
                x++;
            cr_assert_fail("%s: box %d,%d %dx%d at %d/8: row %d differs at value %d (%d vs %d)",
                           what, box[0], box[1], box[2], box[3], n, y - py0, x, a[x], b[x]);
        }
    }
    ld__image_free(&part);
}

/* Random boxes plus the corners, the edges and the whole image, for a W x H image. */
static int make_boxes(int W, int H, int (*b)[4], int max)
{
    int n = 0;
    const int fixed[][4] = {{0, 0, W, H},
                            {0, 0, 1, 1},
                            {W - 1, H - 1, 1, 1},
                            {0, H - 1, 1, 1},
                            {W - 1, 0, 1, 1},
                            {0, 0, W / 3, H / 4},
                            {W - W / 3, H - H / 4, W / 3, H / 4},
                            {0, H / 2, W, 9},
                            {W / 2, 0, 17, H},
                            {W - 40, 0, 40, H / 2},
                            {0, H - 33, 70, 33}};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0] && n < max; k++)
        memcpy(b[n++], fixed[k], sizeof fixed[k]);
    while (n < max) {
        const int w = 1 + (int)rnd((unsigned)W), h = 1 + (int)rnd((unsigned)H);
        b[n][0] = (int)rnd((unsigned)(W - w + 1));
        b[n][1] = (int)rnd((unsigned)(H - h + 1));
        b[n][2] = w;
        b[n][3] = h;
        n++;
    }
    return n;
}

/* ---- the tests ------------------------------------------------------------------------- */

/* Our re-encoded photos are spliced for boxes short of the whole image, and the box decoder's
 * pixels equal the full decode's exactly: gray, RGB 4:4:4 (quality 90, the RRC recipe's) and
 * RGB 4:2:0 (quality 80), landscape and portrait, 120 boxes each at full scale and at the
 * 1/2, 1/4, 1/8 DCT scales. */
Test(splice, box_equals_full_decode)
{
    ld_codec *c = ld__codec_create();
    const struct {
        int channels, quality;
    } kinds[] = {{3, 90}, {3, 80}, {1, 90}};
    const int photos[] = {0, 1, 2, 6};
    ld_image src = {0}, full = {0};
    ld_buf sp = {0};
    int spliced = 0, smaller = 0;
    for (size_t kk = 0; kk < sizeof kinds / sizeof kinds[0]; kk++)
        for (size_t pp = 0; pp < sizeof photos / sizeof photos[0]; pp++) {
            const int ch = kinds[kk].channels;
            size_t len;
            uint8_t *buf = reencode(c, photos[pp], ch, kinds[kk].quality, &src, &len);
            char what[64];
            snprintf(what, sizeof what, "p%02d, %d channels, q%d", photos[pp], ch,
                     kinds[kk].quality);
            int boxes[120][4];
            const int nb = make_boxes(src.w, src.h, boxes, 120);
            for (int n = 8; n >= 1; n /= 2) {
                /* the full decode at n/8 (the box's min = the size that gives n/8 for it) */
                ld_err e;
                const ld_decode_opts fo = {.channels = ch,
                                           .min_w = (src.w * n + 7) / 8,
                                           .min_h = (src.h * n + 7) / 8,
                                           .apply_orientation = 1};
                cr_assert_eq(ld__img_decode(c, buf, len, "full", &fo, &full, &e), LD_OK, "%s",
                             e.msg);
                cr_assert_eq(full.w, (src.w * n + 7) / 8);
                for (int k = 0; k < nb; k++) {
                    const int *b = boxes[k];
                    /* min such that box_scale picks n: the box spans 1.5x min at n/8, not
                     * at n/16 */
                    int min = 0;
                    if (n < 8) {
                        const int mn = b[2] < b[3] ? b[2] : b[3];
                        min = mn * n / 12;
                        if (min < 1 || (n > 1 && mn * (n / 2) >= 12 * min)) continue;
                    }
                    int sub[4];
                    const int r = try_splice(c, buf, len, b, &sp, sub);
                    cr_assert_eq(r, 1, "%s: box %d,%d %dx%d not spliced", what, b[0], b[1], b[2],
                                 b[3]);
                    spliced++;
                    smaller += sp.len < len;
                    check_box(c, buf, len, ch, b, min, &full, n, what);
                }
            }
            free(buf);
        }
    cr_assert(spliced > 2000, "%d boxes spliced", spliced);
    cr_assert(smaller * 10 > spliced * 8, "only %d of %d spliced JPEGs are smaller", smaller,
              spliced);
    ld__buf_free(&sp);
    ld__image_free(&src);
    ld__image_free(&full);
    ld__codec_free(c);
}

/* The spliced JPEG is a valid stream by itself: a plain libjpeg decompressor reads it to EOI
 * without a warning (libjpeg warns about RST numbers out of sequence), and its pixels are the
 * original's over the sub-image (away from the margin where chroma is subsampled). */
Test(splice, spliced_stream_decodes_without_warnings)
{
    ld_codec *c = ld__codec_create();
    ld_image src = {0}, whole = {0}, part = {0};
    ld_buf sp = {0};
    const int qualities[] = {90, 80};
    for (int qq = 0; qq < 2; qq++) {
        size_t len;
        uint8_t *buf = reencode(c, 3, 3, qualities[qq], &src, &len);
        cr_assert_eq(tj_decode(buf, len, 3, &whole), 0);
        int boxes[60][4];
        const int nb = make_boxes(src.w, src.h, boxes, 60);
        for (int k = 0; k < nb; k++) {
            int sub[4];
            cr_assert_eq(try_splice(c, buf, len, boxes[k], &sp, sub), 1);
            cr_assert_eq(tj_decode(sp.p, sp.len, 3, &part), 0, "warnings for box %d", k);
            cr_assert(part.w == sub[2] && part.h == sub[3]);
            const int m = qualities[qq] < 90 ? 16 : 0; /* margin of the subsampled case */
            for (int y = sub[1] ? m : 0; y < part.h - (sub[1] + sub[3] < src.h ? m : 0); y++) {
                const int xa = sub[0] ? m : 0, xb = part.w - (sub[0] + sub[2] < src.w ? m : 0);
                cr_assert(memcmp(part.px + ((size_t)y * part.w + xa) * 3,
                                 whole.px + ((size_t)(y + sub[1]) * whole.w + sub[0] + xa) * 3,
                                 (size_t)(xb - xa) * 3) == 0,
                          "q%d box %d: row %d of the sub-image differs", qualities[qq], k, y);
            }
        }
        free(buf);
    }
    ld__buf_free(&sp);
    ld__image_free(&src);
    ld__image_free(&whole);
    ld__image_free(&part);
    ld__codec_free(c);
}

/* Our encoder writes a DRI whose interval divides the MCUs per row (whole rows when their
 * number is prime), and restart markers do not change the pixels: the same image encoded with
 * libjpeg's defaults and no restart markers decodes to the same bytes. */
Test(splice, encoder_writes_restart_markers_same_pixels)
{
    ld_codec *c = ld__codec_create();
    ld_image src = {0}, a = {0}, b = {0};
    const struct {
        int channels, quality, samp;
    } kinds[] = {{3, 90, 1}, {3, 80, 2}, {1, 90, 1}};
    for (int kk = 0; kk < 3; kk++)
        for (int k = 0; k < 8; k++) {
            size_t len, len0;
            uint8_t *buf = reencode(c, k, kinds[kk].channels, kinds[kk].quality, &src, &len);
            /* DRI: FF DD 00 04 Ri */
            const uint8_t *dri = NULL;
            for (size_t i = 2; i + 6 <= len && !dri; i++)
                if (buf[i] == 0xFF && buf[i + 1] == 0xDD) dri = buf + i;
            cr_assert(dri, "p%02d: no DRI", k);
            const unsigned R = (unsigned)dri[4] << 8 | dri[5];
            const int mcu = 8 * (kinds[kk].channels == 3 ? kinds[kk].samp : 1);
            const unsigned per_row = (unsigned)((src.w + mcu - 1) / mcu);
            cr_assert(R >= 1 && per_row % R == 0, "p%02d: interval %u, %u MCUs per row", k, R,
                      per_row);
            uint8_t *plain = tj_encode(&src, kinds[kk].quality, kinds[kk].samp, 0, 0, &len0);
            cr_assert(len > len0, "restart markers cost bytes");
            cr_assert_eq(tj_decode(buf, len, kinds[kk].channels, &a), 0);
            cr_assert_eq(tj_decode(plain, len0, kinds[kk].channels, &b), 0);
            cr_assert(a.w == b.w && a.h == b.h && memcmp(a.px, b.px, (size_t)a.w * a.h * a.c) == 0,
                      "p%02d: restart markers changed the pixels", k);
            free(plain);
            free(buf);
        }
    /* 61 MCUs per row (prime): a marker every row, spliced by rows, exact */
    ld_image narrow = {0};
    cr_assert_eq(ld__image_alloc(&narrow, 61 * 8, src.h, src.c), LD_OK);
    for (int y = 0; y < src.h; y++)
        memcpy(narrow.px + (size_t)y * narrow.w * src.c, src.px + (size_t)y * src.w * src.c,
               (size_t)narrow.w * src.c);
    ld_buf enc = {0}, sp = {0};
    ld_err e;
    cr_assert_eq(ld__jpeg_encode(c, &narrow, 90, 1, &enc, &e), LD_OK, "%s", e.msg);
    size_t i = 2;
    while (i + 6 <= enc.len && !(enc.p[i] == 0xFF && enc.p[i + 1] == 0xDD))
        i++;
    cr_assert(i + 6 <= enc.len && (enc.p[i + 4] << 8 | enc.p[i + 5]) == 61, "whole rows");
    const int box[4] = {101, 77, 150, 120};
    int sub[4];
    cr_assert_eq(try_splice(c, enc.p, enc.len, box, &sp, sub), 1);
    cr_assert(sub[0] == 0 && sub[2] == narrow.w && sub[1] == 72 && sub[3] == 128);
    const ld_decode_opts fo = {.channels = src.c, .apply_orientation = 1};
    cr_assert_eq(ld__img_decode(c, enc.p, enc.len, "full", &fo, &a, &e), LD_OK, "%s", e.msg);
    check_box(c, enc.p, enc.len, src.c, box, 0, &a, 8, "61 MCUs per row");
    ld__buf_free(&enc);
    ld__buf_free(&sp);
    ld__image_free(&narrow);
    ld__image_free(&src);
    ld__image_free(&a);
    ld__image_free(&b);
    ld__codec_free(c);
}

/* Streams that do not qualify are decoded by the scanline-skipping path: no DRI (the photos
 * as Pillow wrote them), progressive with restarts, an interval that neither divides the
 * MCUs per row nor is a multiple of them. An interval of two whole rows is spliced by rows,
 * and so are 4:2:2 and 4:2:0 streams from libjpeg with restart markers (exact pixels); 4:4:0
 * (1x2) has 63 MCUs per row, which 4 does not divide: the old path. */
Test(splice, other_streams_take_the_old_path)
{
    ld_codec *c = ld__codec_create();
    ld_image src = {0}, full = {0};
    ld_buf sp = {0};
    size_t len;
    uint8_t *orig = slurp(PHOTOS "p01.jpg", &len);
    const ld_decode_opts o = {.channels = 3, .apply_orientation = 1};
    ld_err e;
    cr_assert_eq(ld__img_decode(c, orig, len, "p01", &o, &src, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(src.w, 500); /* 63 MCUs per row at 4:4:4 */
    const int box[4] = {100, 150, 200, 120};
    int sub[4];
    cr_assert_eq(try_splice(c, orig, len, box, &sp, sub), 0, "no DRI");
    struct {
        unsigned restart;
        int progressive, want;
    } cases[] = {{5, 0, 0}, {63 * 2, 0, 1}, {7, 1, 0}, {9, 0, 1}};
    for (int k = 0; k < 4; k++) {
        size_t n;
        uint8_t *buf = tj_encode(&src, 90, 1, cases[k].restart, cases[k].progressive, &n);
        cr_assert_eq(try_splice(c, buf, n, box, &sp, sub), cases[k].want, "case %d", k);
        if (cases[k].want) cr_assert(sp.len < n);
        cr_assert_eq(ld__img_decode(c, buf, n, "full", &o, &full, &e), LD_OK, "%s", e.msg);
        /* exact when spliced or 4:4:4 (the old path differs only by the upsampler restart) */
        check_box(c, buf, n, 3, box, 0, &full, 8, "old path");
        free(buf);
    }
    /* Other encoders' sampling (cjpeg -sample, cameras' 4:2:2) with restart markers every 4
     * MCUs (500 pixels: 32 MCUs of 16 per row): spliced, exact */
    const int samp[][2] = {{2, 1}, {2, 2}, {1, 2}};
    for (int k = 0; k < 3; k++) {
        size_t n;
        uint8_t *buf = tj_encode2(&src, 85, samp[k][0], samp[k][1], 4, 0, &n);
        cr_assert_eq(ld__img_decode(c, buf, n, "full", &o, &full, &e), LD_OK, "%s", e.msg);
        int boxes[40][4];
        const int nb = make_boxes(src.w, src.h, boxes, 40);
        for (int b = 0; b < nb; b++) {
            cr_assert_eq(try_splice(c, buf, n, boxes[b], &sp, sub), samp[k][0] == 2 ? 1 : 0,
                         "sampling %dx%d", samp[k][0], samp[k][1]);
            check_box(c, buf, n, 3, boxes[b], 0, &full, 8, "libjpeg, other sampling");
        }
        free(buf);
    }
    free(orig);
    ld__buf_free(&sp);
    ld__image_free(&src);
    ld__image_free(&full);
    ld__codec_free(c);
}

/* Damaged spliceable streams: truncated, one RST removed, a RST out of sequence, an extra one,
 * garbage over the data. The box decoder returns LD_EFORMAT where the damage is in what it
 * reads (always for a box reaching the bottom right), LD_OK otherwise, and never reads out of
 * bounds (ASan). */
Test(splice, damaged_streams_error_cleanly)
{
    ld_codec *c = ld__codec_create();
    ld_image src = {0}, part = {0};
    size_t len;
    uint8_t *buf = reencode(c, 4, 3, 90, &src, &len);
    size_t rst[4096];
    int nrst = 0;
    size_t data = 0;
    for (size_t i = 2; i + 1 < len; i++) {
        if (buf[i] != 0xFF) continue;
        if (buf[i + 1] == 0xDA && !data) data = i + 2 + ((size_t)buf[i + 2] << 8 | buf[i + 3]);
        if (data && i >= data && buf[i + 1] >= 0xD0 && buf[i + 1] <= 0xD7 && nrst < 4096)
            rst[nrst++] = i;
    }
    cr_assert(data && nrst > 20, "%d restart markers", nrst);
    const int bottom[4] = {src.w / 2, src.h / 2, src.w - src.w / 2, src.h - src.h / 2};
    const int top[4] = {0, 0, 40, 20};
    uint8_t *bad = malloc(len + 16);
    cr_assert(bad);
    ld_err e;
    const ld_decode_opts o = {.channels = 3, .apply_orientation = 1};
    double rect[4];
    for (int kind = 0; kind < 5; kind++)
        for (int t = 0; t < 12; t++) {
            size_t n = len;
            const size_t at = rst[(size_t)(nrst / 3) + (size_t)t * (nrst / 2) / 12];
            memcpy(bad, buf, len);
            switch (kind) {
            case 0: n = data + (len - data) * (size_t)(t + 1) / 14; break;        /* truncated */
            case 1: memmove(bad + at, bad + at + 2, len - at - 2), n -= 2; break; /* RST gone */
            case 2: bad[at + 1] = (uint8_t)(0xD0 + ((bad[at + 1] - 0xD0 + 3) & 7)); break;
            case 3: /* an extra RST */
                memmove(bad + at + 2, bad + at, len - at);
                bad[at + 1] = (uint8_t)(bad[at + 1] == 0xD7 ? 0xD0 : bad[at + 1] + 1);
                n += 2;
                break;
            default: /* garbage over 64 bytes of data */
                for (int i = 0; i < 64; i++)
                    bad[at - 70 + i] = (uint8_t)rnd(256);
            }
            const int r = ld__jpeg_decode_box(c, bad, n, "bad", &o, bottom, &part, rect, &e);
            if (kind < 4)
                cr_assert_eq(r, LD_EFORMAT, "kind %d, case %d: %d", kind, t, r);
            else
                cr_assert(r == LD_OK || r == LD_EFORMAT, "garbage, case %d: %d", t, r);
            if (r == LD_EFORMAT) cr_assert(strstr(e.msg, "bad: JPEG"), "%s", e.msg);
            const int r2 = ld__jpeg_decode_box(c, bad, n, "bad", &o, top, &part, rect, &e);
            cr_assert(r2 == LD_OK || r2 == LD_EFORMAT, "top box: %d", r2);
        }
    free(bad);
    free(buf);
    ld__image_free(&src);
    ld__image_free(&part);
    ld__codec_free(c);
}
