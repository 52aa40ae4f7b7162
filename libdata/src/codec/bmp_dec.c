/*
 * BMP (Windows DIB) decoding, our own parser: the format is a header and rows of pixels, and
 * Debian has no BMP library worth a dependency. Fuzzed by tests/fuzz/fuzz_bmp_decode.c.
 *
 * Supported: OS/2 core (12-byte) and Windows info headers (40, 52, 56, 108, 124 bytes);
 * 1, 4, 8-bit palettes; 16-bit (5-5-5 by default, or bit-field masks), 24-bit BGR, 32-bit
 * (BGRX by default, or masks); RLE8 and RLE4; bottom-up and top-down rows. Alpha is dropped
 * (not composited), as for PNG. Not supported (LD_EFORMAT, saying so): embedded JPEG/PNG
 * (compression 4/5), Huffman 1D and the other OS/2 2.x codings.
 *
 * A masked channel of k bits is scaled to 8 bits as v * 255 / (2^k - 1), truncated, which is
 * what Pillow does (for 5-6-5 and 5-5-5 too), so both decode a file to the same pixels. Pixels
 * that an RLE image skips (delta and end-of-line codes) get palette entry 0, as in Pillow.
 *
 * Every offset and length comes from the file: each is checked against the buffer before
 * use, and the pixel limit is checked before the output is allocated.
 */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_int.h"

typedef struct bmp_hdr {
    int32_t w, h; /* h > 0 */
    int top_down;
    unsigned bpp, comp, hdr_size;
    uint32_t data_off;
    uint32_t mask[4]; /* R, G, B, A (bit fields) */
    const uint8_t *pal;
    unsigned pal_n, pal_entry; /* entries, bytes per entry (3 core, 4 info) */
} bmp_hdr;

enum { BI_RGB = 0, BI_RLE8 = 1, BI_RLE4 = 2, BI_BITFIELDS = 3, BI_ALPHABITFIELDS = 6 };

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static unsigned le16(const uint8_t *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static int parse(const uint8_t *b, size_t len, const char *name, bmp_hdr *h, ld_err *e)
{
    memset(h, 0, sizeof *h);
    if (len < 26 || b[0] != 'B' || b[1] != 'M')
        return ld__err(e, LD_EFORMAT, "%s: BMP: truncated file header", name);
    h->data_off = le32(b + 10);
    h->hdr_size = le32(b + 14);
    const unsigned hs = h->hdr_size;
    if (hs != 12 && hs != 40 && hs != 52 && hs != 56 && hs != 64 && hs != 108 && hs != 124)
        return ld__err(e, LD_EFORMAT, "%s: BMP: unknown header size %u", name, hs);
    if (len < 14 + (size_t)hs) return ld__err(e, LD_EFORMAT, "%s: BMP: truncated header", name);
    const uint8_t *d = b + 14;
    int64_t w, hh;
    if (hs == 12) {
        w = le16(d + 4);
        hh = le16(d + 6);
        h->bpp = le16(d + 10);
        h->comp = BI_RGB;
        h->pal_entry = 3;
    } else {
        w = (int32_t)le32(d + 4);
        hh = (int32_t)le32(d + 8);
        h->bpp = le16(d + 14);
        h->comp = le32(d + 16);
        h->pal_n = le32(d + 32);
        h->pal_entry = 4;
        if (hs == 64 && h->comp >= 3) /* OS/2 2.x: 3 = Huffman 1D, 4 = RLE24 */
            return ld__err(e, LD_EFORMAT, "%s: BMP: unsupported OS/2 compression %u", name,
                           h->comp);
    }
    if (le16(d + (hs == 12 ? 8 : 12)) != 1)
        return ld__err(e, LD_EFORMAT, "%s: BMP: planes must be 1", name);
    if (hh < 0) {
        h->top_down = 1;
        hh = -hh;
    }
    if (w <= 0 || hh <= 0 || w > INT32_MAX || hh > INT32_MAX)
        return ld__err(e, LD_EFORMAT, "%s: BMP: bad image size %lldx%lld", name, (long long)w,
                       (long long)hh);
    h->w = (int32_t)w;
    h->h = (int32_t)hh;
    switch (h->comp) {
    case BI_RGB:
        if (h->bpp != 1 && h->bpp != 4 && h->bpp != 8 && h->bpp != 16 && h->bpp != 24 &&
            h->bpp != 32)
            return ld__err(e, LD_EFORMAT, "%s: BMP: unsupported bit depth %u", name, h->bpp);
        if (h->bpp == 16) {
            h->mask[0] = 0x7c00, h->mask[1] = 0x03e0, h->mask[2] = 0x001f;
        } else if (h->bpp == 32) {
            h->mask[0] = 0xff0000, h->mask[1] = 0xff00, h->mask[2] = 0xff;
        }
        break;
    case BI_RLE8:
    case BI_RLE4:
        if (h->bpp != (h->comp == BI_RLE8 ? 8u : 4u) || h->top_down)
            return ld__err(e, LD_EFORMAT, "%s: BMP: RLE%u with bit depth %u%s", name,
                           h->comp == BI_RLE8 ? 8 : 4, h->bpp, h->top_down ? ", top-down" : "");
        break;
    case BI_BITFIELDS:
    case BI_ALPHABITFIELDS: {
        if (h->bpp != 16 && h->bpp != 32)
            return ld__err(e, LD_EFORMAT, "%s: BMP: bit fields with bit depth %u", name, h->bpp);
        /* Masks follow a 40-byte header, or are part of the larger ones. */
        const unsigned n = h->comp == BI_ALPHABITFIELDS ? 4 : 3;
        if (len < 14 + 40 + (size_t)n * 4)
            return ld__err(e, LD_EFORMAT, "%s: BMP: truncated bit-field masks", name);
        for (unsigned k = 0; k < n; k++)
            h->mask[k] = le32(d + 40 + 4 * k);
        for (unsigned k = 0; k < 3; k++)
            if (!h->mask[k]) return ld__err(e, LD_EFORMAT, "%s: BMP: a colour mask is 0", name);
        break;
    }
    default:
        return ld__err(e, LD_EFORMAT, "%s: BMP: unsupported compression %u%s", name, h->comp,
                       h->comp == 4 || h->comp == 5 ? " (embedded JPEG/PNG)" : "");
    }
    if (h->bpp <= 8) {
        const unsigned max = 1u << h->bpp;
        if (h->pal_n == 0 || h->pal_n > max) h->pal_n = max;
        /* The palette follows the header (and the masks of a 40-byte BI_BITFIELDS header,
         * which palette images do not have). */
        const size_t at = 14 + (size_t)hs;
        const size_t avail = len > at ? (len - at) / h->pal_entry : 0;
        if (avail == 0) return ld__err(e, LD_EFORMAT, "%s: BMP: missing palette", name);
        if (h->pal_n > avail) h->pal_n = (unsigned)avail;
        h->pal = b + at;
    }
    if (h->data_off >= len)
        return ld__err(e, LD_EFORMAT, "%s: BMP: pixel data offset %u is past the end of the file",
                       name, (unsigned)h->data_off);
    return LD_OK;
}

static int gray_palette(const bmp_hdr *h)
{
    for (unsigned i = 0; i < h->pal_n; i++) {
        const uint8_t *p = h->pal + (size_t)i * h->pal_entry;
        if (p[0] != p[1] || p[1] != p[2]) return 0;
    }
    return 1;
}

int ld__bmp_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                 ld_err *e)
{
    (void)c;
    bmp_hdr h;
    const int rc = parse(buf, len, name, &h, e);
    if (rc < 0) return rc;
    info->format = LD_IMG_BMP;
    info->orientation = 1;
    info->w = h.w;
    info->h = h.h;
    info->channels = h.bpp <= 8 && gray_palette(&h) ? 1 : 3;
    return LD_OK;
}

/* Shift and width of a bit-field mask, and the scaled 8-bit value of field v. */
static void mask_shape(uint32_t m, unsigned *shift, uint32_t *max)
{
    unsigned s = 0;
    while (m && !(m & 1)) {
        m >>= 1;
        s++;
    }
    *shift = s;
    *max = m; /* 2^k - 1 for a contiguous mask; a non-contiguous one still scales into 0..255 */
}

static void put(uint8_t *dst, int ch, unsigned r, unsigned g, unsigned b)
{
    if (ch == 3) {
        dst[0] = (uint8_t)r;
        dst[1] = (uint8_t)g;
        dst[2] = (uint8_t)b;
    } else {
        dst[0] = ld__luma(r, g, b);
    }
}

static void put_index(const bmp_hdr *h, uint8_t *dst, int ch, unsigned i)
{
    if (i >= h->pal_n) { /* outside the palette: black, as Pillow (which pads it with zeros) */
        put(dst, ch, 0, 0, 0);
        return;
    }
    const uint8_t *p = h->pal + (size_t)i * h->pal_entry;
    put(dst, ch, p[2], p[1], p[0]); /* stored B, G, R */
}

/* Row y of the file (in storage order) lands at output row oy. */
static size_t out_row(const bmp_hdr *h, int32_t y)
{
    return (size_t)(h->top_down ? y : h->h - 1 - y);
}

static int decode_rle(const bmp_hdr *h, const uint8_t *s, size_t n, const char *name, ld_image *out,
                      ld_err *e)
{
    const int ch = out->c, four = h->comp == BI_RLE4;
    int32_t x = 0, y = 0;
    for (size_t y0 = 0; y0 < (size_t)h->h; y0++) /* undefined pixels: palette entry 0 */
        for (int32_t k = 0; k < h->w; k++)
            put_index(h, out->px + (y0 * h->w + k) * ch, ch, 0);
    size_t i = 0;
    for (;;) {
        if (n - i < 2) return ld__err(e, LD_EFORMAT, "%s: BMP: truncated RLE data", name);
        const unsigned a = s[i], b = s[i + 1];
        i += 2;
        if (a > 0) { /* a pixels of b (RLE4: alternating nibbles) */
            for (unsigned k = 0; k < a && x < h->w; k++, x++)
                if (y < h->h)
                    put_index(h, out->px + (out_row(h, y) * h->w + x) * ch, ch,
                              four ? (k & 1 ? b & 15 : b >> 4) : b);
        } else if (b == 0) { /* end of line */
            x = 0;
            y++;
        } else if (b == 1) { /* end of bitmap */
            return LD_OK;
        } else if (b == 2) { /* delta */
            if (n - i < 2) return ld__err(e, LD_EFORMAT, "%s: BMP: truncated RLE delta", name);
            x += s[i];
            y += s[i + 1];
            i += 2;
        } else { /* absolute run of b pixels, padded to 16 bits */
            const size_t bytes = four ? (b + 1) / 2 : b;
            const size_t padded = bytes + (bytes & 1);
            if (n - i < padded) return ld__err(e, LD_EFORMAT, "%s: BMP: truncated RLE run", name);
            for (unsigned k = 0; k < b && x < h->w; k++, x++) {
                const unsigned v =
                    four ? (k & 1 ? s[i + k / 2] & 15 : s[i + k / 2] >> 4) : s[i + k];
                if (y < h->h) put_index(h, out->px + (out_row(h, y) * h->w + x) * ch, ch, v);
            }
            i += padded;
        }
        if (y >= h->h) return LD_OK; /* past the last row: the rest cannot show */
    }
}

int ld__bmp_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                   const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    (void)c;
    bmp_hdr h;
    int rc = parse(buf, len, name, &h, e);
    if (rc < 0) return rc;
    const int lim =
        ld__img_limit(name, LD_IMG_BMP, (uint64_t)h.w, (uint64_t)h.h, opts->max_pixels, e);
    if (lim < 0) return lim;
    const int ch = opts->channels;
    const uint8_t *s = buf + h.data_off;
    const size_t avail = len - h.data_off;
    if (h.comp == BI_RLE8 || h.comp == BI_RLE4) {
        rc = ld__image_alloc(out, h.w, h.h, ch);
        if (rc < 0)
            return ld__err(e, rc, "%s: cannot allocate a %dx%dx%d image", name, (int)h.w, (int)h.h,
                           ch);
        return decode_rle(&h, s, avail, name, out, e);
    }
    /* Rows are padded to 4 bytes. */
    const uint64_t stride = ((uint64_t)h.w * h.bpp + 31) / 32 * 4;
    if (stride * (uint64_t)h.h > avail)
        return ld__err(e, LD_EFORMAT,
                       "%s: BMP: truncated pixel data (%llu bytes of %llu for %dx%d at %u bits)",
                       name, (unsigned long long)avail, (unsigned long long)(stride * h.h),
                       (int)h.w, (int)h.h, h.bpp);
    rc = ld__image_alloc(out, h.w, h.h, ch);
    if (rc < 0)
        return ld__err(e, rc, "%s: cannot allocate a %dx%dx%d image", name, (int)h.w, (int)h.h, ch);
    unsigned sh[3] = {0, 0, 0};
    uint32_t mx[3] = {1, 1, 1};
    if (h.bpp >= 16)
        for (int k = 0; k < 3; k++)
            mask_shape(h.mask[k], &sh[k], &mx[k]);
    for (int32_t y = 0; y < h.h; y++) {
        const uint8_t *row = s + (size_t)y * stride;
        uint8_t *dst = out->px + out_row(&h, y) * h.w * ch;
        for (int32_t x = 0; x < h.w; x++, dst += ch) {
            switch (h.bpp) {
            case 1: put_index(&h, dst, ch, row[x >> 3] >> (7 - (x & 7)) & 1); break;
            case 4: put_index(&h, dst, ch, x & 1 ? row[x >> 1] & 15 : row[x >> 1] >> 4); break;
            case 8: put_index(&h, dst, ch, row[x]); break;
            case 24: put(dst, ch, row[3 * x + 2], row[3 * x + 1], row[3 * x]); break;
            default: {
                const uint32_t v =
                    h.bpp == 16 ? le16(row + 2 * (size_t)x) : le32(row + 4 * (size_t)x);
                unsigned c3[3];
                for (int k = 0; k < 3; k++) {
                    const uint64_t f = (v & h.mask[k]) >> sh[k];
                    c3[k] = (unsigned)(f * 255 / mx[k] > 255 ? 255 : f * 255 / mx[k]);
                }
                put(dst, ch, c3[0], c3[1], c3[2]);
            }
            }
        }
    }
    return LD_OK;
}
