/*
 * WebP decoding with libwebp 1.2 (lossy, lossless, alpha, animation).
 *
 * A still image is decoded straight into the output buffer (WebPDecodeRGBInto) or, for gray
 * output, into scratch and reduced with libjpeg's luma formula. Alpha is dropped, not
 * composited, as for PNG. An animation goes through libwebpdemux's WebPAnimDecoder, which
 * composes frames on the canvas: the first frame's canvas is the image (what Pillow shows
 * for frame 0), and ld__codec_frames() gives the frame count.
 *
 * The pixel limit is checked on the size WebPGetFeatures reads from the header (for an
 * animation, the canvas) before libwebp or we allocate anything of that size.
 */
#ifdef LD_HAVE_WEBP

#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>
#include <webp/demux.h>

#include "codec/codec_int.h"

static const char *status_text(VP8StatusCode s)
{
    switch (s) {
    case VP8_STATUS_OK: return "ok";
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "corrupt bitstream";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "corrupt or truncated bitstream";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "truncated WebP (not enough data)";
    default: return "unknown error";
    }
}

static int features(const uint8_t *buf, size_t len, const char *name, WebPBitstreamFeatures *f,
                    ld_err *e)
{
    const VP8StatusCode s = WebPGetFeatures(buf, len, f);
    if (s != VP8_STATUS_OK)
        return ld__err(e, LD_EFORMAT, "%s: WebP: cannot read the header: %s", name, status_text(s));
    if (f->width <= 0 || f->height <= 0)
        return ld__err(e, LD_EFORMAT, "%s: WebP: bad image size %dx%d", name, f->width, f->height);
    return LD_OK;
}

int ld__webp_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                  ld_err *e)
{
    (void)c;
    WebPBitstreamFeatures f;
    const int rc = features(buf, len, name, &f, e);
    if (rc < 0) return rc;
    info->format = LD_IMG_WEBP;
    info->orientation = 1;
    info->w = f.width;
    info->h = f.height;
    info->channels = 3;
    return LD_OK;
}

/* RGBA (animation canvas) or RGB rows to the output's gray or RGB. */
static void from_rgbx(const uint8_t *s, int sc, size_t n, uint8_t *d, int dc)
{
    for (size_t i = 0; i < n; i++, s += sc) {
        if (dc == 3) {
            d[0] = s[0];
            d[1] = s[1];
            d[2] = s[2];
            d += 3;
        } else {
            *d++ = ld__luma(s[0], s[1], s[2]);
        }
    }
}

static int decode_anim(ld_codec *c, const uint8_t *buf, size_t len, const char *name, int ch,
                       ld_image *out, ld_err *e)
{
    int rc = LD_OK;
    WebPAnimDecoderOptions o;
    WebPAnimDecoder *d = NULL;
    LD_CHECK(e, WebPAnimDecoderOptionsInit(&o), LD_EFORMAT, "%s: WebP: library version mismatch",
             name);
    o.color_mode = MODE_RGBA;
    o.use_threads = 0;
    const WebPData data = {buf, len};
    d = WebPAnimDecoderNew(&data, &o);
    LD_CHECK(e, d, LD_EFORMAT, "%s: WebP: cannot read the animation (corrupt or truncated)", name);
    WebPAnimInfo ai;
    LD_CHECK(e, WebPAnimDecoderGetInfo(d, &ai), LD_EFORMAT, "%s: WebP: bad animation header", name);
    uint8_t *frame = NULL;
    int ts = 0;
    LD_CHECK(e, WebPAnimDecoderGetNext(d, &frame, &ts) && frame, LD_EFORMAT,
             "%s: WebP: cannot decode the first frame (corrupt or truncated)", name);
    c->frames = (int)(ai.frame_count > INT32_MAX ? INT32_MAX : ai.frame_count);
    rc = ld__image_alloc(out, (int)ai.canvas_width, (int)ai.canvas_height, ch);
    LD_CHECK(e, rc == LD_OK, rc, "%s: cannot allocate a %ux%ux%d image", name,
             (unsigned)ai.canvas_width, (unsigned)ai.canvas_height, ch);
    from_rgbx(frame, 4, (size_t)ai.canvas_width * ai.canvas_height, out->px, ch);
fail:
    WebPAnimDecoderDelete(d);
    return rc;
}

int ld__webp_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                    const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    WebPBitstreamFeatures f;
    int rc = features(buf, len, name, &f, e);
    if (rc < 0) return rc;
    const int lim = ld__img_limit(name, LD_IMG_WEBP, (uint64_t)f.width, (uint64_t)f.height,
                                  opts->max_pixels, e);
    if (lim < 0) return lim;
    const int ch = opts->channels;
    if (f.has_animation) return decode_anim(c, buf, len, name, ch, out, e);

    ld_image *dst = ch == 3 ? out : &c->tmp;
    rc = ld__image_alloc(dst, f.width, f.height, 3);
    if (rc == LD_OK && ch == 1) rc = ld__image_alloc(out, f.width, f.height, 1);
    if (rc < 0)
        return ld__err(e, rc, "%s: cannot allocate a %dx%dx%d image", name, f.width, f.height, ch);
    const size_t stride = (size_t)f.width * 3;
    if (!WebPDecodeRGBInto(buf, len, dst->px, stride * (size_t)f.height, (int)stride)) {
        /* WebPDecodeRGBInto gives no reason: ask the full decoder for it */
        WebPDecoderConfig cfg;
        VP8StatusCode s = VP8_STATUS_BITSTREAM_ERROR;
        if (WebPInitDecoderConfig(&cfg)) {
            cfg.output.colorspace = MODE_RGB;
            cfg.output.is_external_memory = 1;
            cfg.output.u.RGBA.rgba = dst->px;
            cfg.output.u.RGBA.stride = (int)stride;
            cfg.output.u.RGBA.size = stride * (size_t)f.height;
            s = WebPDecode(buf, len, &cfg);
            WebPFreeDecBuffer(&cfg.output);
        }
        return ld__err(e, LD_EFORMAT, "%s: WebP: cannot decode the image: %s", name,
                       status_text(s == VP8_STATUS_OK ? VP8_STATUS_BITSTREAM_ERROR : s));
    }
    if (ch == 1) from_rgbx(c->tmp.px, 3, (size_t)f.width * f.height, out->px, 1);
    return LD_OK;
}

#else
typedef int ld_webp_dec_unused; /* ISO C forbids an empty translation unit */
#endif /* LD_HAVE_WEBP */
