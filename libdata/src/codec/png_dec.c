/*
 * PNG decoding with libpng 1.6, from memory.
 *
 * Output follows what Caffe/OpenCV (IMREAD_COLOR) give for the same file, so datasets made
 * by either tool agree: palette and low bit depths are expanded, 16-bit samples are
 * truncated to their high byte (png_set_strip_16, as OpenCV and PIL do), alpha and tRNS are
 * dropped (not composited), no gamma correction. Gray output of a colour PNG uses libjpeg's
 * luma formula so that it matches gray output of a JPEG.
 *
 * EXIF orientation in an eXIf chunk is applied, as for JPEG (and as Pillow's
 * ImageOps.exif_transpose does); the chunk is found by walking the chunk list in memory, so
 * the header-only ld__png_info sees it too, also when it comes after the image data.
 *
 * libpng reports errors by longjmp to the png_jmpbuf set here; the structs are made per
 * image because libpng cannot reset a read struct after an error.
 */
#ifdef LD_HAVE_PNG

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <zlib.h>

#include "codec/codec_int.h"

/* The largest ancillary chunk we let libpng allocate (see open_png). */
#define LD_PNG_CHUNK_MAX ((png_alloc_size_t)16 << 20)

typedef struct rd_ctx {
    const uint8_t *buf;
    size_t len, pos;
    int over_limit; /* a warning said a dimension exceeds png_set_user_limits */
    char msg[256];
} rd_ctx;

static void on_error(png_structp png, png_const_charp msg)
{
    rd_ctx *x = png_get_error_ptr(png);
    if (!x->over_limit) /* keep the more useful limit message */
        snprintf(x->msg, sizeof x->msg, "%s", msg ? msg : "unknown error");
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    /* Warnings are benign (ancillary chunk) problems, except that libpng reports a dimension
     * over the user limit as a warning followed by a generic "Invalid IHDR data" error. */
    rd_ctx *x = png_get_error_ptr(png);
    if (msg && strstr(msg, "user limit")) {
        x->over_limit = 1;
        snprintf(x->msg, sizeof x->msg, "%s", msg);
    }
    /* A chunk over png_set_chunk_malloc_max is only a "benign error" (a warning) on read, and
     * libpng would go on to allocate it: stop here instead. */
    if (msg && strstr(msg, "chunk data is too large")) {
        x->over_limit = 1;
        snprintf(x->msg, sizeof x->msg, "a chunk declares more than %u MiB of data",
                 (unsigned)(LD_PNG_CHUNK_MAX >> 20));
        png_longjmp(png, 1);
    }
}

static void read_mem(png_structp png, png_bytep dst, size_t n)
{
    rd_ctx *x = png_get_io_ptr(png);
    if (n > x->len - x->pos) png_error(png, "unexpected end of file (truncated PNG)");
    memcpy(dst, x->buf + x->pos, n);
    x->pos += n;
}

/* libpng's own limit errors mean "too big", not "corrupt". */
static int png_failure(rd_ctx *x, const char *name, ld_err *e)
{
    const int code = x->over_limit || strstr(x->msg, "user limit") ? LD_ELIMIT : LD_EFORMAT;
    return ld__err(e, code, "%s: PNG: %s", name, x->msg);
}

static png_structp open_png(rd_ctx *x, const uint8_t *buf, size_t len, png_infop *info)
{
    x->buf = buf;
    x->len = len;
    x->pos = 0;
    x->over_limit = 0;
    x->msg[0] = '\0';
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, x, on_error, on_warning);
    if (!png) return NULL;
    *info = png_create_info_struct(png);
    if (!*info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return NULL;
    }
    png_set_read_fn(png, x, read_mem);
    /* libpng allocates an ancillary chunk's whole declared length before reading it, and
     * Debian's build sets no cap: a 100-byte file declaring a 1.9 GB chunk made it allocate
     * 1.9 GB (found by fuzz_png_decode). Legitimate chunks (ICC profiles, text, EXIF) are far
     * smaller; image data (IDAT) is streamed and not subject to this. */
    png_set_chunk_malloc_max(png, LD_PNG_CHUNK_MAX);
    return png;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The orientation (1..8) of the first eXIf chunk, 1 if there is none. Walks the chunks of the
 * (untrusted) buffer with every length checked; stops at IEND or at anything malformed, and
 * ignores a chunk whose CRC is wrong (libpng drops such an ancillary chunk too). */
static int png_orientation(const uint8_t *buf, size_t len)
{
    size_t pos = 8; /* after the signature */
    if (len < pos) return 1;
    while (len - pos >= 12) {
        const uint32_t n = be32(buf + pos);
        const uint8_t *type = buf + pos + 4;
        if (n > len - pos - 12) return 1; /* truncated or corrupt: no orientation */
        if (memcmp(type, "IEND", 4) == 0) return 1;
        if (memcmp(type, "eXIf", 4) == 0) {
            const uLong crc = crc32(crc32(0L, Z_NULL, 0), type, (uInt)n + 4);
            if (crc != be32(buf + pos + 8 + n)) return 1;
            const uint8_t *d = buf + pos + 8;
            /* Some writers keep the JPEG APP1 "Exif\0\0" prefix; Pillow accepts both. */
            if (n >= 6 && memcmp(d, "Exif\0\0", 6) == 0) return ld__exif_orientation(d, n);
            return ld__tiff_orientation(d, n);
        }
        pos += 12 + (size_t)n;
    }
    return 1;
}

int ld__png_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                 ld_err *e)
{
    (void)c;
    rd_ctx x;
    png_infop pi = NULL;
    png_structp png = open_png(&x, buf, len, &pi);
    if (!png) return ld__err(e, LD_ENOMEM, "%s: out of memory creating the PNG decoder", name);
    int rc = LD_OK;
    if (setjmp(png_jmpbuf(png))) {
        rc = png_failure(&x, name, e);
        goto done;
    }
    png_read_info(png, pi);
    info->format = LD_IMG_PNG;
    info->orientation = png_orientation(buf, len);
    const int swap = info->orientation >= 5;
    info->w = (int)(swap ? png_get_image_height(png, pi) : png_get_image_width(png, pi));
    info->h = (int)(swap ? png_get_image_width(png, pi) : png_get_image_height(png, pi));
    info->channels = png_get_color_type(png, pi) & PNG_COLOR_MASK_COLOR ? 3 : 1;
    info->depth = png_get_bit_depth(png, pi) == 16 ? 16 : 8;
done:
    png_destroy_read_struct(&png, &pi, NULL);
    return rc;
}

int ld__png_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                   const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    rd_ctx x;
    png_infop pi = NULL;
    png_structp png = open_png(&x, buf, len, &pi);
    if (!png) return ld__err(e, LD_ENOMEM, "%s: out of memory creating the PNG decoder", name);
    int rc = LD_OK;
    if (setjmp(png_jmpbuf(png))) {
        rc = png_failure(&x, name, e);
        goto fail;
    }
    if (opts->max_pixels) {
        /* Per-dimension cap inside libpng, the product is checked below. */
        const uint64_t m = opts->max_pixels < 0x7fffffff ? opts->max_pixels : 0x7fffffff;
        png_set_user_limits(png, (png_uint_32)m, (png_uint_32)m);
    }
    png_read_info(png, pi);
    const png_uint_32 w = png_get_image_width(png, pi), h = png_get_image_height(png, pi);
    LD_TRY(ld__img_limit(name, LD_IMG_PNG, w, h, opts->max_pixels, e));
    const int ctype = png_get_color_type(png, pi);
    const int color = (ctype & PNG_COLOR_MASK_COLOR) != 0;
    /* 16-bit samples kept (in host order) when asked for; 8-bit ones are widened later */
    const int wide = opts->depth16 && png_get_bit_depth(png, pi) == 16, sb = wide ? 2 : 1;
    if (ctype == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png); /* also turns tRNS into alpha, stripped next */
    else if (png_get_bit_depth(png, pi) < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (!wide)
        png_set_strip_16(png);
    else if (ld__host_le())
        png_set_swap(png);
    png_set_strip_alpha(png);
    if (!color && opts->channels == 3) png_set_gray_to_rgb(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, pi);

    /* Colour to gray: decode RGB into scratch, convert after. */
    const int to_gray = color && opts->channels == 1;
    const int dc = to_gray ? 3 : opts->channels;
    ld_image *dst = to_gray ? &c->tmp : out;
    LD_CHECK(e,
             png_get_channels(png, pi) == dc && png_get_bit_depth(png, pi) == 8 * sb &&
                 png_get_rowbytes(png, pi) == (size_t)w * dc * sb,
             LD_EFORMAT, "%s: PNG: unsupported layout (colour type %d)", name, ctype);
    rc = ld__image_alloc_depth(dst, (int)w, (int)h, dc, 8 * sb);
    if (rc == LD_OK && to_gray) rc = ld__image_alloc_depth(out, (int)w, (int)h, 1, 8 * sb);
    if (rc == LD_OK) rc = ld__buf_reserve(&c->rows, (size_t)h * sizeof(png_bytep));
    LD_CHECK(e, rc == LD_OK, rc, "%s: cannot allocate a %ux%ux%d image", name, (unsigned)w,
             (unsigned)h, dc);
    png_bytep *rows = (png_bytep *)(void *)c->rows.p;
    for (png_uint_32 y = 0; y < h; y++)
        rows[y] = dst->px + (size_t)y * w * dc * sb;
    png_read_image(png, rows);
    png_read_end(png, NULL); /* checks the CRCs up to IEND */
    if (to_gray && wide) {
        const uint16_t *s = (const uint16_t *)(const void *)c->tmp.px;
        uint16_t *o = (uint16_t *)(void *)out->px;
        for (size_t i = 0; i < (size_t)w * h; i++, s += 3)
            o[i] = ld__luma16(s[0], s[1], s[2]);
    } else if (to_gray) {
        const uint8_t *s = c->tmp.px;
        for (size_t i = 0; i < (size_t)w * h; i++, s += 3)
            out->px[i] = ld__luma(s[0], s[1], s[2]);
    }
    if (opts->apply_orientation) {
        const int orient = png_orientation(buf, len);
        rc = ld__image_orient(out, orient, &c->tmp);
        LD_CHECK(e, rc == LD_OK, rc, "%s: out of memory applying EXIF orientation %d", name,
                 orient);
    }
fail:
    png_destroy_read_struct(&png, &pi, NULL);
    return rc;
}

/* A segmentation mask: class indices, never colours, one or two bytes each (see codec.h). */
int ld__png_decode_indices(ld_codec *c, const uint8_t *buf, size_t len, const char *name, int wide,
                           uint64_t max_pixels, ld_image *out, ld_err *e)
{
    rd_ctx x;
    png_infop pi = NULL;
    png_structp png = open_png(&x, buf, len, &pi);
    if (!png) return ld__err(e, LD_ENOMEM, "%s: out of memory creating the PNG decoder", name);
    int rc = LD_OK;
    if (setjmp(png_jmpbuf(png))) {
        rc = png_failure(&x, name, e);
        goto fail;
    }
    if (max_pixels) {
        const uint64_t m = max_pixels < 0x7fffffff ? max_pixels : 0x7fffffff;
        png_set_user_limits(png, (png_uint_32)m, (png_uint_32)m);
    }
    png_read_info(png, pi);
    const png_uint_32 w = png_get_image_width(png, pi), h = png_get_image_height(png, pi);
    LD_TRY(ld__img_limit(name, LD_IMG_PNG, w, h, max_pixels, e));
    const int ctype = png_get_color_type(png, pi), depth = png_get_bit_depth(png, pi);
    LD_CHECK(e, !(ctype & PNG_COLOR_MASK_COLOR) || ctype == PNG_COLOR_TYPE_PALETTE, LD_EFORMAT,
             "%s: an RGB mask: a mask holds class indices, as a palette PNG (VOC's "
             "SegmentationClass) or a gray PNG; map its colours to indices first (e.g. "
             "Pillow: Image.quantize(palette=...) or a colour -> index table)",
             name);
    if (depth < 8) png_set_packing(png); /* 1, 2, 4-bit indices or gray values, unscaled */
    if (ctype & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
    /* no png_set_palette_to_rgb, no png_set_tRNS_to_alpha: a palette PNG gives its indices */
    png_set_interlace_handling(png);
    png_read_update_info(png, pi);
    const int bytes = depth == 16 ? 2 : 1, obytes = wide ? 2 : 1;
    LD_CHECK(e, png_get_channels(png, pi) == 1 && png_get_rowbytes(png, pi) == (size_t)w * bytes,
             LD_EFORMAT, "%s: PNG mask: unsupported layout (colour type %d, depth %d)", name, ctype,
             depth);
    /* rows as the file has them; into the output directly when they are what it holds */
    const int direct = bytes == 1 && obytes == 1;
    ld_image *dst = direct ? out : &c->tmp;
    rc = ld__image_alloc(dst, (int)(w * bytes), (int)h, 1);
    if (rc == LD_OK && !direct) rc = ld__image_alloc_depth(out, (int)w, (int)h, 1, 8 * obytes);
    if (rc == LD_OK) rc = ld__buf_reserve(&c->rows, (size_t)h * sizeof(png_bytep));
    LD_CHECK(e, rc == LD_OK, rc, "%s: cannot allocate a %ux%u mask", name, (unsigned)w,
             (unsigned)h);
    png_bytep *rows = (png_bytep *)(void *)c->rows.p;
    for (png_uint_32 y = 0; y < h; y++)
        rows[y] = dst->px + (size_t)y * w * bytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    const uint8_t *s = c->tmp.px;
    const size_t n = (size_t)w * h;
    if (bytes == 2 && !wide) { /* 16-bit gray: big-endian samples; kept when every value fits */
        for (size_t i = 0; i < n; i++, s += 2) {
            const unsigned v = (unsigned)s[0] << 8 | s[1];
            LD_CHECK(e, v <= 255, LD_EFORMAT,
                     "%s: a 16-bit mask with class index %u at pixel (%zu, %zu): uint8 masks "
                     "hold indices 0..255; store uint16 masks (mask_type uint16)",
                     name, v, i % w, i / w);
            out->px[i] = (uint8_t)v;
        }
    } else if (wide) { /* uint16 in host order, whatever the file's depth */
        uint16_t *o = (uint16_t *)(void *)out->px;
        for (size_t i = 0; i < n; i++, s += bytes)
            o[i] = bytes == 2 ? (uint16_t)((unsigned)s[0] << 8 | s[1]) : s[0];
    }
fail:
    png_destroy_read_struct(&png, &pi, NULL);
    return rc;
}

#else
#include "codec/codec_int.h"

int ld__png_decode_indices(ld_codec *c, const uint8_t *buf, size_t len, const char *name, int wide,
                           uint64_t max_pixels, ld_image *out, ld_err *e)
{
    (void)c;
    (void)wide;
    (void)buf;
    (void)len;
    (void)max_pixels;
    (void)out;
    return ld__err(e, LD_ENOTSUP, "%s: masks are PNG files and PNG support was not built", name);
}
#endif /* LD_HAVE_PNG */
