/*
 * Format sniffing, the ld_codec handle, dispatch to the decoders (one file per format), and
 * EXIF orientation applied to decoded pixels.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/codec_int.h"

ld_img_format ld__img_sniff(const uint8_t *buf, size_t len)
{
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (!buf) return LD_IMG_UNKNOWN;
    /* SOI followed by the first marker's 0xFF: rejects text that happens to start 0xFFD8. */
    if (len >= 3 && buf[0] == 0xFF && buf[1] == 0xD8 && buf[2] == 0xFF) return LD_IMG_JPEG;
    if (len >= 8 && memcmp(buf, png_sig, 8) == 0) return LD_IMG_PNG;
    if (len >= 4 && (memcmp(buf, "II*\0", 4) == 0 || memcmp(buf, "MM\0*", 4) == 0 ||
                     memcmp(buf, "II+\0", 4) == 0 || memcmp(buf, "MM\0+", 4) == 0))
        return LD_IMG_TIFF;
    if (len >= 12 && memcmp(buf, "RIFF", 4) == 0 && memcmp(buf + 8, "WEBP", 4) == 0)
        return LD_IMG_WEBP;
    if (len >= 6 && (memcmp(buf, "GIF87a", 6) == 0 || memcmp(buf, "GIF89a", 6) == 0))
        return LD_IMG_GIF;
    /* "BM" alone is too weak (a text file may start so): the info header's size must be one
     * of the known ones. */
    if (len >= 18 && buf[0] == 'B' && buf[1] == 'M') {
        const uint32_t hs = (uint32_t)buf[14] | (uint32_t)buf[15] << 8 | (uint32_t)buf[16] << 16 |
                            (uint32_t)buf[17] << 24;
        if (hs == 12 || hs == 40 || hs == 52 || hs == 56 || hs == 64 || hs == 108 || hs == 124)
            return LD_IMG_BMP;
    }
    /* PNM: "P1".."P6", blanks or '#' comments, then the width's first digit ("P1 is..." in a
     * text file is not an image). */
    if (len >= 4 && buf[0] == 'P' && buf[1] >= '1' && buf[1] <= '6') {
        size_t i = 2;
        int blank = 0;
        while (i < len && i < 4096) {
            if (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r') {
                blank = 1;
                i++;
            } else if (buf[i] == '#' && blank) {
                while (i < len && buf[i] != '\n' && buf[i] != '\r')
                    i++;
            } else {
                break;
            }
        }
        if (blank && i < len && buf[i] >= '0' && buf[i] <= '9') return LD_IMG_PNM;
    }
    return LD_IMG_UNKNOWN;
}

int ld__img_name_known(const char *name)
{
    static const char *const ext[] = {".jpg", ".jpeg", ".jpe",  ".jfif", ".png",
                                      ".tif", ".tiff", ".webp", ".gif",  ".bmp",
                                      ".dib", ".pgm",  ".ppm",  ".pbm",  ".pnm"};
    const size_t len = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        const size_t n = strlen(ext[i]);
        if (len > n && strcasecmp(name + len - n, ext[i]) == 0) return 1;
    }
    return 0;
}

int ld__img_limit(const char *name, ld_img_format f, uint64_t w, uint64_t h, uint64_t max_pixels,
                  ld_err *e)
{
    const uint64_t npix = w * h;
    if (!max_pixels || npix <= max_pixels) return LD_OK;
    return ld__err(e, LD_ELIMIT, "%s: %s is %llux%llu = %llu pixels, over the limit of %llu", name,
                   ld__img_format_name(f), (unsigned long long)w, (unsigned long long)h,
                   (unsigned long long)npix, (unsigned long long)max_pixels);
}

const char *ld__img_format_name(ld_img_format f)
{
    switch (f) {
    case LD_IMG_JPEG: return "JPEG";
    case LD_IMG_PNG: return "PNG";
    case LD_IMG_TIFF: return "TIFF";
    case LD_IMG_WEBP: return "WebP";
    case LD_IMG_GIF: return "GIF";
    case LD_IMG_BMP: return "BMP";
    case LD_IMG_PNM: return "PNM";
    default: return "unknown";
    }
}

ld_codec *ld__codec_create(void)
{
    return calloc(1, sizeof(ld_codec));
}

void ld__codec_free(ld_codec *c)
{
    if (!c) return;
    ld__jdec_free(c->jdec);
    ld__jenc_free(c->jenc);
    ld__image_free(&c->tmp);
    ld__buf_free(&c->rows);
    ld__buf_free(&c->splice);
    ld__buf_free(&c->segs);
    free(c);
}

int ld__codec_frames(const ld_codec *c)
{
    return c && c->frames > 1 ? c->frames : 1;
}

static int unknown_format(const uint8_t *buf, size_t len, const char *name, ld_err *e)
{
    if (len == 0) return ld__err(e, LD_EFORMAT, "%s: empty file", name);
    (void)buf;
    /* JPEG, PNG, TIFF, WebP, GIF, BMP and PNM are known (ld__img_sniff) */
    return ld__err(e, LD_EFORMAT, "%s: not an image file (unknown signature)", name);
}

static int not_built(ld_img_format f, const char *name, ld_err *e)
{
    return ld__err(e, LD_ENOTSUP, "%s: %s support not built", name, ld__img_format_name(f));
}

int ld__img_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                 ld_err *e)
{
    if (!name) name = "(image)";
    memset(info, 0, sizeof *info);
    info->depth = 8; /* (PNG, TIFF, PNM: the file's) */
    const ld_img_format f = ld__img_sniff(buf, len);
    switch (f) {
    case LD_IMG_JPEG: return ld__jpeg_info(c, buf, len, name, info, e);
#ifdef LD_HAVE_PNG
    case LD_IMG_PNG: return ld__png_info(c, buf, len, name, info, e);
#endif
#ifdef LD_HAVE_TIFF
    case LD_IMG_TIFF: return ld__tiff_info(c, buf, len, name, info, e);
#endif
#ifdef LD_HAVE_WEBP
    case LD_IMG_WEBP: return ld__webp_info(c, buf, len, name, info, e);
#endif
#ifdef LD_HAVE_GIF
    case LD_IMG_GIF: return ld__gif_info(c, buf, len, name, info, e);
#endif
    case LD_IMG_BMP: return ld__bmp_info(c, buf, len, name, info, e);
    case LD_IMG_PNM: return ld__pnm_info(c, buf, len, name, info, e);
    case LD_IMG_UNKNOWN: return unknown_format(buf, len, name, e);
    default: return not_built(f, name, e);
    }
}

static int decode_format(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                         const ld_decode_opts *opts, ld_image *out, ld_err *e);

int ld__img_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                   const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    if (!name) name = "(image)";
    if (!opts || (opts->channels != 1 && opts->channels != 3))
        return ld__err(e, LD_EINVAL, "%s: decode channels must be 1 or 3", name);
    c->frames = 1;
    const int rc = decode_format(c, buf, len, name, opts, out, e);
    if (rc < 0 || !opts->depth16 || out->depth == 16) return rc;
    /* 16-bit output of an 8-bit image: each sample v becomes v * 257 (0 -> 0, 255 -> 65535) */
    const size_t n = (size_t)out->w * out->h * out->c;
    if (ld__image_alloc_depth(&c->tmp, out->w, out->h, out->c, 16) < 0)
        return ld__err(e, LD_ENOMEM, "%s: out of memory for a 16-bit %dx%dx%d image", name, out->w,
                       out->h, out->c);
    uint16_t *d = (uint16_t *)(void *)c->tmp.px;
    for (size_t i = 0; i < n; i++)
        d[i] = (uint16_t)(out->px[i] * 257u);
    const ld_image t = *out;
    *out = c->tmp;
    c->tmp = t;
    return LD_OK;
}

static int decode_format(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                         const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    const ld_img_format f = ld__img_sniff(buf, len);
    switch (f) {
    case LD_IMG_JPEG: return ld__jpeg_decode(c, buf, len, name, opts, out, e);
#ifdef LD_HAVE_PNG
    case LD_IMG_PNG: return ld__png_decode(c, buf, len, name, opts, out, e);
#endif
#ifdef LD_HAVE_TIFF
    case LD_IMG_TIFF: return ld__tiff_decode(c, buf, len, name, opts, out, e);
#endif
#ifdef LD_HAVE_WEBP
    case LD_IMG_WEBP: return ld__webp_decode(c, buf, len, name, opts, out, e);
#endif
#ifdef LD_HAVE_GIF
    case LD_IMG_GIF: return ld__gif_decode(c, buf, len, name, opts, out, e);
#endif
    case LD_IMG_BMP: return ld__bmp_decode(c, buf, len, name, opts, out, e);
    case LD_IMG_PNM: return ld__pnm_decode(c, buf, len, name, opts, out, e);
    case LD_IMG_UNKNOWN: return unknown_format(buf, len, name, e);
    default: return not_built(f, name, e);
    }
}

/* In place: a row-order or in-row reversal needs no second buffer. */
static void mirror_h(ld_image *im)
{
    const int c = im->c * ld__image_sample_bytes(im); /* bytes per pixel */
    for (int y = 0; y < im->h; y++) {
        uint8_t *a = im->px + (size_t)y * im->w * c;
        uint8_t *b = a + (size_t)(im->w - 1) * c;
        for (; a < b; a += c, b -= c)
            for (int k = 0; k < c; k++) {
                uint8_t t = a[k];
                a[k] = b[k];
                b[k] = t;
            }
    }
}

static void mirror_v(ld_image *im)
{
    const size_t stride = (size_t)im->w * im->c * ld__image_sample_bytes(im);
    for (int y = 0; y < im->h / 2; y++) {
        uint8_t *a = im->px + (size_t)y * stride;
        uint8_t *b = im->px + (size_t)(im->h - 1 - y) * stride;
        for (size_t i = 0; i < stride; i++) {
            uint8_t t = a[i];
            a[i] = b[i];
            b[i] = t;
        }
    }
}

int ld__image_orient(ld_image *im, int orientation, ld_image *tmp)
{
    if (orientation <= 1 || orientation > 8) return LD_OK;
    if (orientation == 2 || orientation == 3) mirror_h(im);
    if (orientation == 3 || orientation == 4) mirror_v(im);
    if (orientation <= 4) return LD_OK;

    /* 5..8 swap width and height: write the result into tmp, then exchange the two pixel
     * buffers so neither side allocates again once both have reached working size. */
    const int w = im->w, h = im->h, c = im->c * ld__image_sample_bytes(im); /* bytes a pixel */
    int rc = ld__image_alloc_depth(tmp, h, w, im->c, im->depth == 16 ? 16 : 8);
    if (rc < 0) return rc;
    /* Output (x', y') = (column, row) of a w'=h by h'=w image; walk the source in order and
     * compute where each pixel lands. */
    for (int y = 0; y < h; y++) {
        const uint8_t *src = im->px + (size_t)y * w * c;
        for (int x = 0; x < w; x++, src += c) {
            int ox, oy; /* position in the output, which is h wide and w tall */
            switch (orientation) {
            case 5: /* transpose */
                ox = y;
                oy = x;
                break;
            case 6: /* rotate 90 CW */
                ox = h - 1 - y;
                oy = x;
                break;
            case 7: /* transverse */
                ox = h - 1 - y;
                oy = w - 1 - x;
                break;
            default: /* 8: rotate 270 CW */
                ox = y;
                oy = w - 1 - x;
                break;
            }
            uint8_t *dst = tmp->px + ((size_t)oy * h + ox) * c;
            for (int k = 0; k < c; k++)
                dst[k] = src[k];
        }
    }
    ld_image t = *im;
    *im = *tmp;
    *tmp = t;
    return LD_OK;
}
