/*
 * Format sniffing, the ld_codec handle, dispatch to the JPEG/PNG decoders, and EXIF
 * orientation applied to decoded pixels.
 */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_int.h"

ld_img_format ld__img_sniff(const uint8_t *buf, size_t len)
{
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (!buf) return LD_IMG_UNKNOWN;
    /* SOI followed by the first marker's 0xFF: rejects text that happens to start 0xFFD8. */
    if (len >= 3 && buf[0] == 0xFF && buf[1] == 0xD8 && buf[2] == 0xFF) return LD_IMG_JPEG;
    if (len >= 8 && memcmp(buf, png_sig, 8) == 0) return LD_IMG_PNG;
    return LD_IMG_UNKNOWN;
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

static int unknown_format(const uint8_t *buf, size_t len, const char *name, ld_err *e)
{
    if (len == 0) return ld__err(e, LD_EFORMAT, "%s: empty file", name);
    (void)buf;
    return ld__err(e, LD_EFORMAT, "%s: not a JPEG or PNG file (unknown signature)", name);
}

int ld__img_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                 ld_err *e)
{
    if (!name) name = "(image)";
    memset(info, 0, sizeof *info);
    switch (ld__img_sniff(buf, len)) {
    case LD_IMG_JPEG: return ld__jpeg_info(c, buf, len, name, info, e);
    case LD_IMG_PNG:
#ifdef LD_HAVE_PNG
        return ld__png_info(c, buf, len, name, info, e);
#else
        return ld__err(e, LD_ENOTSUP, "%s: PNG support not built", name);
#endif
    default: return unknown_format(buf, len, name, e);
    }
}

int ld__img_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                   const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    if (!name) name = "(image)";
    if (!opts || (opts->channels != 1 && opts->channels != 3))
        return ld__err(e, LD_EINVAL, "%s: decode channels must be 1 or 3", name);
    switch (ld__img_sniff(buf, len)) {
    case LD_IMG_JPEG: return ld__jpeg_decode(c, buf, len, name, opts, out, e);
    case LD_IMG_PNG:
#ifdef LD_HAVE_PNG
        return ld__png_decode(c, buf, len, name, opts, out, e);
#else
        return ld__err(e, LD_ENOTSUP, "%s: PNG support not built", name);
#endif
    default: return unknown_format(buf, len, name, e);
    }
}

/* In place: a row-order or in-row reversal needs no second buffer. */
static void mirror_h(ld_image *im)
{
    const int c = im->c;
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
    const size_t stride = (size_t)im->w * im->c;
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
    const int w = im->w, h = im->h, c = im->c;
    int rc = ld__image_alloc(tmp, h, w, c);
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
