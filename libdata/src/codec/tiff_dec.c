/*
 * TIFF decoding with libtiff 4.5, from memory (TIFFClientOpenExt over the caller's buffer).
 *
 * Only the first page (IFD) is decoded; ld__codec_frames() says how many there are, so the
 * converter can say once that later pages were left out.
 *
 * Two paths. Stripped, chunky, unsigned 8- or 16-bit gray, gray + alpha, RGB, RGBA and 8-bit
 * palette images (what ImageMagick, Pillow, scanners and most tools write) are read row by
 * row with TIFFReadScanline and converted here: 16-bit samples keep their high byte and alpha
 * is dropped, not composited, as for PNG (and as Pillow's convert("RGB") and OpenCV's
 * IMREAD_COLOR do). Everything else (tiles, planar, YCbCr/JPEG, CMYK, 1/2/4-bit, LogLuv...)
 * goes through libtiff's RGBA interface, which knows them all; it premultiplies unassociated
 * alpha, so such an image with alpha can differ from other decoders where alpha < 255.
 *
 * The orientation tag (274) is applied like EXIF orientation for JPEG.
 *
 * Errors and warnings go to per-handle handlers (TIFFOpenOptionsSetErrorHandlerExtR), never
 * to libtiff's process-wide ones: the first error's text becomes our message. libtiff is
 * told to refuse any single allocation over LD_TIFF_ALLOC_MAX, so a header that declares a
 * huge strip cannot make it allocate gigabytes (the pixel limit is checked before our own
 * allocation).
 */
#ifdef LD_HAVE_TIFF

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

#include "codec/codec_int.h"

#define LD_TIFF_ALLOC_MAX ((tmsize_t)256 << 20)

typedef struct mem_tiff {
    const uint8_t *buf;
    size_t len, pos;
    char msg[256]; /* the first error */
} mem_tiff;

static tmsize_t m_read(thandle_t h, void *dst, tmsize_t n)
{
    mem_tiff *m = (mem_tiff *)h;
    if (n < 0) return -1;
    size_t k = (size_t)n;
    if (m->pos >= m->len) return 0;
    if (k > m->len - m->pos) k = m->len - m->pos;
    memcpy(dst, m->buf + m->pos, k);
    m->pos += k;
    return (tmsize_t)k;
}

static tmsize_t m_write(thandle_t h, void *src, tmsize_t n)
{
    (void)h;
    (void)src;
    (void)n;
    return -1; /* read-only */
}

static toff_t m_seek(thandle_t h, toff_t off, int whence)
{
    mem_tiff *m = (mem_tiff *)h;
    uint64_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->len : 0;
    if (off > UINT64_MAX - base) return (toff_t)-1;
    /* past the end is allowed (a later read returns 0 bytes: "truncated") */
    m->pos = (size_t)(base + off > SIZE_MAX ? SIZE_MAX : base + off);
    return (toff_t)m->pos;
}

static int m_close(thandle_t h)
{
    (void)h;
    return 0;
}

static toff_t m_size(thandle_t h)
{
    return (toff_t)((mem_tiff *)h)->len;
}

/* Let libtiff read strips straight from the buffer instead of copying them. */
static int m_map(thandle_t h, void **base, toff_t *size)
{
    mem_tiff *m = (mem_tiff *)h;
    *base = (void *)(uintptr_t)m->buf; /* libtiff only reads a mapping opened "r" */
    *size = (toff_t)m->len;
    return 1;
}

static void m_unmap(thandle_t h, void *base, toff_t size)
{
    (void)h;
    (void)base;
    (void)size;
}

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    mem_tiff *m = user;
    (void)tif;
    if (!m->msg[0]) {
        char text[200];
        vsnprintf(text, sizeof text, fmt, ap);
        snprintf(m->msg, sizeof m->msg, "%s%s%s", module ? module : "", module ? ": " : "", text);
    }
    return 1; /* handled: libtiff's global handler stays silent */
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
    return 1; /* unknown tags and the like: the pixels decide */
}

static TIFF *open_tiff(mem_tiff *m, const uint8_t *buf, size_t len)
{
    m->buf = buf;
    m->len = len;
    m->pos = 0;
    m->msg[0] = '\0';
    TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
    if (!o) return NULL;
    TIFFOpenOptionsSetMaxSingleMemAlloc(o, LD_TIFF_ALLOC_MAX);
    TIFFOpenOptionsSetErrorHandlerExtR(o, on_error, m);
    TIFFOpenOptionsSetWarningHandlerExtR(o, on_warning, m);
    TIFF *t = TIFFClientOpenExt("tiff", "r", (thandle_t)m, m_read, m_write, m_seek, m_close, m_size,
                                m_map, m_unmap, o);
    TIFFOpenOptionsFree(o);
    return t;
}

static int tiff_failure(const mem_tiff *m, const char *name, const char *what, ld_err *e)
{
    return ld__err(e, LD_EFORMAT, "%s: TIFF: %s%s%s", name, what, m->msg[0] ? ": " : "", m->msg);
}

typedef struct tiff_hdr {
    uint32_t w, h;
    uint16_t spp, bps, photo, planar, fmt, orient, extra;
    int tiled;
} tiff_hdr;

static void read_hdr(TIFF *t, tiff_hdr *h)
{
    memset(h, 0, sizeof *h);
    uint16_t n_extra = 0, *extra = NULL;
    TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &h->w);
    TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h->h);
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &h->spp);
    TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &h->bps);
    TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &h->planar);
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &h->fmt);
    if (!TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &h->photo))
        h->photo = h->spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    if (!TIFFGetField(t, TIFFTAG_ORIENTATION, &h->orient) || h->orient < 1 || h->orient > 8)
        h->orient = 1;
    if (TIFFGetFieldDefaulted(t, TIFFTAG_EXTRASAMPLES, &n_extra, &extra)) h->extra = n_extra;
    h->tiled = TIFFIsTiled(t);
}

static int is_gray(const tiff_hdr *h)
{
    return h->photo == PHOTOMETRIC_MINISBLACK || h->photo == PHOTOMETRIC_MINISWHITE;
}

int ld__tiff_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                  ld_err *e)
{
    (void)c;
    mem_tiff m;
    TIFF *t = open_tiff(&m, buf, len);
    if (!t) return tiff_failure(&m, name, "cannot read the header", e);
    tiff_hdr h;
    read_hdr(t, &h);
    int rc = LD_OK;
    if (h.w == 0 || h.h == 0 || h.w > INT32_MAX || h.h > INT32_MAX) {
        rc = ld__err(e, LD_EFORMAT, "%s: TIFF: bad image size %ux%u", name, (unsigned)h.w,
                     (unsigned)h.h);
    } else {
        const int swap = h.orient >= 5;
        info->format = LD_IMG_TIFF;
        info->orientation = h.orient;
        info->w = (int)(swap ? h.h : h.w);
        info->h = (int)(swap ? h.w : h.h);
        info->channels = is_gray(&h) ? 1 : 3;
        info->depth = h.bps == 16 ? 16 : 8;
    }
    TIFFClose(t);
    return rc;
}

/* The fast path's layouts (see the top). */
static int own_layout(const tiff_hdr *h)
{
    if (h->tiled || h->planar != PLANARCONFIG_CONTIG || h->fmt != SAMPLEFORMAT_UINT) return 0;
    if (h->bps != 8 && h->bps != 16) return 0;
    if (is_gray(h)) return h->spp >= 1 && h->spp <= 2;
    if (h->photo == PHOTOMETRIC_RGB) return h->spp >= 3 && h->spp <= 4;
    if (h->photo == PHOTOMETRIC_PALETTE) return h->bps == 8 && h->spp == 1;
    return 0;
}

/* One decoded row (spp samples of bps bits each, host byte order) to gray or RGB: 8-bit
 * samples, or with `wide` (a 16-bit file, 16-bit output) uint16 samples. */
static void convert_row(const tiff_hdr *h, const uint8_t *in, uint8_t *out, int ch,
                        const uint16_t *const pal[3], int wide)
{
    const unsigned spp = h->spp;
    const unsigned top = wide ? 65535 : 255;
    uint16_t *o16 = (uint16_t *)(void *)out;
    for (uint32_t x = 0; x < h->w; x++) {
        unsigned v[3];
        const unsigned n = is_gray(h) || pal[0] ? 1 : 3;
        for (unsigned k = 0; k < n; k++)
            v[k] = h->bps == 16
                       ? ((const uint16_t *)(const void *)in)[(size_t)x * spp + k] >> (wide ? 0 : 8)
                       : in[(size_t)x * spp + k];
        if (pal[0]) { /* 16-bit colour map entries: keep the high byte (8-bit output) */
            const unsigned i = v[0], sh = wide ? 0 : 8;
            v[0] = pal[0][i] >> sh;
            v[1] = pal[1][i] >> sh;
            v[2] = pal[2][i] >> sh;
        } else if (n == 1) {
            if (h->photo == PHOTOMETRIC_MINISWHITE) v[0] = top - v[0];
            v[1] = v[2] = v[0];
        }
        if (wide) {
            if (ch == 3) {
                o16[0] = (uint16_t)v[0];
                o16[1] = (uint16_t)v[1];
                o16[2] = (uint16_t)v[2];
                o16 += 3;
            } else {
                *o16++ = n == 1 && !pal[0] ? (uint16_t)v[0] : ld__luma16(v[0], v[1], v[2]);
            }
            continue;
        }
        if (ch == 3) {
            out[0] = (uint8_t)v[0];
            out[1] = (uint8_t)v[1];
            out[2] = (uint8_t)v[2];
            out += 3;
        } else {
            *out++ = n == 1 && !pal[0] ? (uint8_t)v[0] : ld__luma(v[0], v[1], v[2]);
        }
    }
}

int ld__tiff_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                    const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    mem_tiff m;
    TIFF *t = open_tiff(&m, buf, len);
    if (!t) return tiff_failure(&m, name, "cannot read the header", e);
    int rc = LD_OK;
    tiff_hdr h;
    TIFFRGBAImage img;
    int img_open = 0;
    read_hdr(t, &h);
    const int ch = opts->channels;
    LD_CHECK(e, h.w > 0 && h.h > 0 && h.w <= INT32_MAX && h.h <= INT32_MAX, LD_EFORMAT,
             "%s: TIFF: bad image size %ux%u", name, (unsigned)h.w, (unsigned)h.h);
    const uint64_t npix = (uint64_t)h.w * h.h;
    LD_TRY(ld__img_limit(name, LD_IMG_TIFF, h.w, h.h, opts->max_pixels, e));
    c->frames = (int)TIFFNumberOfDirectories(t);
    LD_CHECK(e, TIFFSetDirectory(t, 0), LD_EFORMAT, "%s: TIFF: cannot go back to the first page",
             name);
    /* Damage in a later page (a bad next-IFD offset) stopped the count, not the first page. */
    m.msg[0] = '\0';
    /* 16-bit output of a 16-bit file through our own rows (else 8-bit, widened later) */
    const int wide = opts->depth16 && h.bps == 16 && own_layout(&h);
    rc = ld__image_alloc_depth(out, (int)h.w, (int)h.h, ch, wide ? 16 : 8);
    LD_CHECK(e, rc == LD_OK, rc, "%s: cannot allocate a %ux%ux%d image", name, (unsigned)h.w,
             (unsigned)h.h, ch);
    if (own_layout(&h)) {
        const uint16_t *pal[3] = {NULL, NULL, NULL};
        uint16_t *r = NULL, *g = NULL, *b = NULL;
        if (h.photo == PHOTOMETRIC_PALETTE) {
            LD_CHECK(e, TIFFGetField(t, TIFFTAG_COLORMAP, &r, &g, &b), LD_EFORMAT,
                     "%s: TIFF: palette image without a colour map", name);
            pal[0] = r, pal[1] = g, pal[2] = b; /* 1 << 8 entries, libtiff checked */
        }
        const tmsize_t sl = TIFFScanlineSize(t);
        const size_t need = (size_t)h.w * h.spp * (h.bps / 8);
        LD_CHECK(e, sl > 0 && (size_t)sl >= need, LD_EFORMAT, "%s: TIFF: bad scanline size%s%s",
                 name, m.msg[0] ? ": " : "", m.msg);
        rc = ld__buf_reserve(&c->rows, (size_t)sl);
        LD_CHECK(e, rc == LD_OK, rc, "%s: out of memory for a TIFF row", name);
        for (uint32_t y = 0; y < h.h; y++) {
            LD_CHECK(e, TIFFReadScanline(t, c->rows.p, y, 0) == 1, LD_EFORMAT,
                     "%s: TIFF: cannot read row %u (truncated or corrupt strip)%s%s", name,
                     (unsigned)y, m.msg[0] ? ": " : "", m.msg);
            convert_row(&h, c->rows.p, out->px + (size_t)y * h.w * ch * (wide ? 2 : 1), ch, pal,
                        wide);
        }
    } else {
        char why[1024] = "";
        LD_CHECK(e, TIFFRGBAImageOK(t, why) && TIFFRGBAImageBegin(&img, t, 1, why), LD_EFORMAT,
                 "%s: TIFF: unsupported layout (%u-bit, %u samples, photometric %u): %s", name,
                 (unsigned)h.bps, (unsigned)h.spp, (unsigned)h.photo, why);
        img_open = 1;
        /* Rows as stored: the orientation tag is applied below, like EXIF for JPEG. */
        img.req_orientation = img.orientation;
        size_t bytes;
        LD_CHECK(e, ld__mul_size((size_t)npix, 4, &bytes), LD_ELIMIT, "%s: TIFF too large", name);
        rc = ld__buf_reserve(&c->rows, bytes);
        LD_CHECK(e, rc == LD_OK, rc, "%s: out of memory for a %ux%u RGBA TIFF raster", name,
                 (unsigned)h.w, (unsigned)h.h);
        uint32_t *px = (uint32_t *)(void *)c->rows.p;
        LD_CHECK(e, TIFFRGBAImageGet(&img, px, h.w, h.h), LD_EFORMAT,
                 "%s: TIFF: cannot decode the image (truncated or corrupt)%s%s", name,
                 m.msg[0] ? ": " : "", m.msg);
        LD_CHECK(e, !m.msg[0], LD_EFORMAT, "%s: TIFF: %s", name, m.msg);
        for (size_t i = 0; i < (size_t)npix; i++) {
            const unsigned r = TIFFGetR(px[i]), g = TIFFGetG(px[i]), b = TIFFGetB(px[i]);
            if (ch == 3) {
                out->px[3 * i] = (uint8_t)r;
                out->px[3 * i + 1] = (uint8_t)g;
                out->px[3 * i + 2] = (uint8_t)b;
            } else {
                out->px[i] = ld__luma(r, g, b);
            }
        }
    }
    if (opts->apply_orientation) {
        rc = ld__image_orient(out, h.orient, &c->tmp);
        LD_CHECK(e, rc == LD_OK, rc, "%s: out of memory applying TIFF orientation %d", name,
                 (int)h.orient);
    }
fail:
    if (img_open) TIFFRGBAImageEnd(&img);
    TIFFClose(t);
    return rc;
}

#else
typedef int ld_tiff_dec_unused; /* ISO C forbids an empty translation unit */
#endif /* LD_HAVE_TIFF */
