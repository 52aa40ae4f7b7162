/*
 * The input-format decoders (TIFF, WebP, GIF, BMP, PNM) on the seed files of their fuzz
 * targets (tests/fuzz/corpus/<fmt>_decode/, written by ImageMagick): header and decode agree,
 * gray output is the luma of RGB output, the pixel limit refuses from the header before the
 * output is allocated, and multi-page/animated files report their frame count. Pixel values
 * against Pillow/OpenCV are checked by tests/cli/input_formats.sh.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"

#define SEEDS LD_SOURCE_DIR "/tests/fuzz/corpus/"

static const char *const formats[] = {"tiff", "webp", "gif", "bmp", "pnm"};

static ld_buf load(const char *path)
{
    ld_buf b = {0};
    ld_err e = {0};
    int rc = ld__read_file(path, &b, (size_t)1 << 30, &e);
    cr_assert_eq(rc, LD_OK, "read %s: %s", path, e.msg);
    return b;
}

/* Calls fn on every seed of every format; returns how many decoded. */
static int each_seed(void (*fn)(const char *path, const ld_buf *b, int *decoded))
{
    int decoded = 0;
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        char dir[512];
        snprintf(dir, sizeof dir, SEEDS "%s_decode", formats[f]);
        DIR *d = opendir(dir);
        cr_assert_not_null(d, "no seed folder %s", dir);
        int seen = 0;
        for (struct dirent *de; (de = readdir(d));) {
            if (de->d_name[0] == '.') continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            ld_buf b = load(path);
            fn(path, &b, &decoded);
            ld__buf_free(&b);
            seen++;
        }
        closedir(d);
        cr_assert_gt(seen, 3, "%s: only %d seeds", dir, seen);
    }
    return decoded;
}

static void gray_is_luma_of_rgb(const char *path, const ld_buf *b, int *decoded)
{
    ld_codec *c = ld__codec_create();
    ld_err e = {0};
    ld_img_info info;
    ld_image rgb = {0}, gray = {0};
    const ld_decode_opts o3 = {.channels = 3, .max_pixels = 1u << 20, .apply_orientation = 1};
    const ld_decode_opts o1 = {.channels = 1, .max_pixels = 1u << 20, .apply_orientation = 1};
    const int rc = ld__img_decode(c, b->p, b->len, path, &o3, &rgb, &e);
    if (rc == LD_OK) {
        (*decoded)++;
        cr_assert_eq(ld__img_info(c, b->p, b->len, path, &info, &e), LD_OK, "%s", e.msg);
        cr_assert(info.w == rgb.w && info.h == rgb.h, "%s: header %dx%d, decoded %dx%d", path,
                  info.w, info.h, rgb.w, rgb.h);
        cr_assert_eq(ld__img_decode(c, b->p, b->len, path, &o1, &gray, &e), LD_OK, "%s", e.msg);
        cr_assert(gray.w == rgb.w && gray.h == rgb.h && gray.c == 1 && rgb.c == 3, "%s", path);
        for (size_t i = 0; i < (size_t)rgb.w * rgb.h; i++) {
            const unsigned r = rgb.px[3 * i], g = rgb.px[3 * i + 1], bl = rgb.px[3 * i + 2];
            const unsigned y = (19595u * r + 38470u * g + 7471u * bl + 32768u) >> 16;
            cr_assert_eq(gray.px[i], y, "%s: pixel %zu gray %u, luma of RGB %u", path, i,
                         gray.px[i], y);
        }
    } else {
        cr_assert(rc == LD_EFORMAT || rc == LD_ELIMIT, "%s: %d %s", path, rc, e.msg);
        cr_assert(strlen(e.msg) > strlen(path) + 3, "%s: no reason given: '%s'", path, e.msg);
    }
    ld__image_free(&rgb);
    ld__image_free(&gray);
    ld__codec_free(c);
}

Test(codec_formats, header_and_decode_agree_and_gray_is_the_luma_of_rgb)
{
    cr_assert_gt(each_seed(gray_is_luma_of_rgb), 30);
}

static void limit_before_allocation(const char *path, const ld_buf *b, int *decoded)
{
    ld_codec *c = ld__codec_create();
    ld_err e = {0};
    ld_image im = {0};
    ld_decode_opts o = {.channels = 3, .max_pixels = 1u << 20};
    if (ld__img_decode(c, b->p, b->len, path, &o, &im, &e) == LD_OK) {
        (*decoded)++;
        ld_image fresh = {0};
        o.max_pixels = (uint64_t)im.w * im.h - 1;
        if (o.max_pixels == 0) o.max_pixels = 1; /* a 1x1 image cannot go below */
        const int rc = ld__img_decode(c, b->p, b->len, path, &o, &fresh, &e);
        if ((uint64_t)im.w * im.h > 1) {
            cr_assert_eq(rc, LD_ELIMIT, "%s: %dx%d with max_pixels %llu: %d %s", path, im.w, im.h,
                         (unsigned long long)o.max_pixels, rc, e.msg);
            cr_assert(fresh.px == NULL && fresh.cap == 0, "%s: output allocated before the limit",
                      path);
            cr_assert(strstr(e.msg, "over the limit") != NULL, "%s: '%s'", path, e.msg);
        }
        ld__image_free(&fresh);
    }
    ld__image_free(&im);
    ld__codec_free(c);
}

Test(codec_formats, the_pixel_limit_refuses_before_the_output_is_allocated)
{
    cr_assert_gt(each_seed(limit_before_allocation), 30);
}

static int frames_of(const char *path)
{
    ld_buf b = load(path);
    ld_codec *c = ld__codec_create();
    ld_err e = {0};
    ld_image im = {0};
    const ld_decode_opts o = {.channels = 3, .max_pixels = 1u << 20};
    cr_assert_eq(ld__img_decode(c, b.p, b.len, path, &o, &im, &e), LD_OK, "%s", e.msg);
    const int n = ld__codec_frames(c);
    ld__image_free(&im);
    ld__codec_free(c);
    ld__buf_free(&b);
    return n;
}

Test(codec_formats, multi_page_and_animated_files_give_their_frame_count)
{
    cr_assert_eq(frames_of(SEEDS "tiff_decode/pages2.tif"), 2);
    cr_assert_eq(frames_of(SEEDS "gif_decode/anim.gif"), 2);
    cr_assert_eq(frames_of(SEEDS "webp_decode/anim.webp"), 2);
    cr_assert_eq(frames_of(SEEDS "tiff_decode/rgb_lzw.tif"), 1);
    cr_assert_eq(frames_of(SEEDS "gif_decode/palette.gif"), 1);
    cr_assert_eq(frames_of(SEEDS "bmp_decode/rgb24.bmp"), 1);
}

Test(codec_formats, sniffing_needs_more_than_two_letters)
{
    static const char text[] = "BMW owners club: meeting on Friday\nP1 is the first point\n";
    cr_assert_eq(ld__img_sniff((const uint8_t *)text, sizeof text - 1), LD_IMG_UNKNOWN);
    cr_assert_eq(ld__img_sniff((const uint8_t *)text + 35, sizeof text - 36), LD_IMG_UNKNOWN);
    static const uint8_t tif[] = {'I', 'I', 42, 0, 8, 0, 0, 0};
    cr_assert_eq(ld__img_sniff(tif, sizeof tif), LD_IMG_TIFF);
    static const char webp[] = "RIFF\x10\0\0\0WEBPVP8 ";
    cr_assert_eq(ld__img_sniff((const uint8_t *)webp, sizeof webp - 1), LD_IMG_WEBP);
    static const char wav[] = "RIFF\x10\0\0\0WAVEfmt ";
    cr_assert_eq(ld__img_sniff((const uint8_t *)wav, sizeof wav - 1), LD_IMG_UNKNOWN);
    static const char pgm[] = "P5\n2 2\n255\n";
    cr_assert_eq(ld__img_sniff((const uint8_t *)pgm, sizeof pgm - 1), LD_IMG_PNM);
    cr_assert_eq(ld__img_sniff((const uint8_t *)"GIF89a", 6), LD_IMG_GIF);
}
