/*
 * PNM decoding (Netpbm PBM/PGM/PPM: P1..P6), our own parser: a text header and rows of
 * samples. Fuzzed by tests/fuzz/fuzz_pnm_decode.c.
 *
 * Samples are scaled to 8 bits: maxval 255 as is, maxval 65535 (16-bit) keeps the high byte
 * as for 16-bit PNG and TIFF, any other maxval v * 255 / maxval rounded. Bitmaps (P1, P4) are
 * 1 = black. Only the first image of a file with several is read. A sample above maxval is an
 * error, as is a file that ends early.
 *
 * The header's width and height are checked against the pixel limit, and the file's size
 * against what they need, before the output is allocated.
 */
#include <stdlib.h>
#include <string.h>

#include "codec/codec_int.h"

typedef struct pnm {
    const uint8_t *b;
    size_t len, pos;
    int kind; /* 1..6 */
    uint32_t w, h, maxval;
} pnm;

static int is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Skip blanks and '#' comments (to the end of their line). */
static void skip_blank(pnm *p)
{
    while (p->pos < p->len) {
        if (is_space(p->b[p->pos])) {
            p->pos++;
        } else if (p->b[p->pos] == '#') {
            while (p->pos < p->len && p->b[p->pos] != '\n' && p->b[p->pos] != '\r')
                p->pos++;
        } else {
            break;
        }
    }
}

/* A decimal header field or ASCII sample. 1, or 0 when missing or over `max`. */
static int read_uint(pnm *p, uint32_t max, uint32_t *out)
{
    skip_blank(p);
    uint64_t v = 0;
    size_t start = p->pos;
    while (p->pos < p->len && p->b[p->pos] >= '0' && p->b[p->pos] <= '9') {
        v = v * 10 + (p->b[p->pos++] - '0');
        if (v > max) return 0;
    }
    if (p->pos == start) return 0;
    *out = (uint32_t)v;
    return 1;
}

static int parse(pnm *p, const uint8_t *buf, size_t len, const char *name, ld_err *e)
{
    memset(p, 0, sizeof *p);
    p->b = buf;
    p->len = len;
    if (len < 3 || buf[0] != 'P' || buf[1] < '1' || buf[1] > '6' || !is_space(buf[2]))
        return ld__err(e, LD_EFORMAT, "%s: PNM: bad signature", name);
    p->kind = buf[1] - '0';
    p->pos = 2;
    if (!read_uint(p, INT32_MAX, &p->w) || !read_uint(p, INT32_MAX, &p->h))
        return ld__err(e, LD_EFORMAT, "%s: PNM: truncated or bad header (width, height)", name);
    if (p->w == 0 || p->h == 0)
        return ld__err(e, LD_EFORMAT, "%s: PNM: bad image size %ux%u", name, (unsigned)p->w,
                       (unsigned)p->h);
    p->maxval = 1;
    if (p->kind != 1 && p->kind != 4) {
        if (!read_uint(p, 65535, &p->maxval) || p->maxval == 0)
            return ld__err(e, LD_EFORMAT, "%s: PNM: bad maxval (1..65535)", name);
    }
    /* Exactly one blank ends the header of the binary kinds; P4 bitmaps too. */
    if (p->kind >= 4) {
        if (p->pos >= len || !is_space(buf[p->pos]))
            return ld__err(e, LD_EFORMAT, "%s: PNM: truncated header", name);
        p->pos++;
    }
    return LD_OK;
}

int ld__pnm_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                 ld_err *e)
{
    (void)c;
    pnm p;
    const int rc = parse(&p, buf, len, name, e);
    if (rc < 0) return rc;
    info->format = LD_IMG_PNM;
    info->orientation = 1;
    info->w = (int)p.w;
    info->h = (int)p.h;
    info->channels = p.kind == 3 || p.kind == 6 ? 3 : 1;
    info->depth = p.maxval > 255 ? 16 : 8;
    return LD_OK;
}

static unsigned scale(uint32_t v, uint32_t maxval)
{
    if (maxval == 255) return v;
    if (maxval == 65535) return v >> 8;
    return (unsigned)((v * 255u + maxval / 2) / maxval);
}

/* A sample on 0..65535 (16-bit output of a maxval > 255 file). */
static unsigned scale16(uint32_t v, uint32_t maxval)
{
    if (maxval == 65535) return v;
    return (unsigned)(((uint64_t)v * 65535u + maxval / 2) / maxval);
}

int ld__pnm_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                   const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    (void)c;
    pnm p;
    int rc = parse(&p, buf, len, name, e);
    if (rc < 0) return rc;
    const uint64_t npix = (uint64_t)p.w * p.h;
    const int lim = ld__img_limit(name, LD_IMG_PNM, p.w, p.h, opts->max_pixels, e);
    if (lim < 0) return lim;
    const unsigned spp = p.kind == 3 || p.kind == 6 ? 3 : 1;
    const unsigned bytes = p.maxval > 255 ? 2 : 1;
    /* Binary data must all be there: refuse a short file before allocating. ASCII samples
     * take at least a byte each (P1 digits may touch). */
    const uint64_t row_bytes = p.kind == 4 ? ((uint64_t)p.w + 7) / 8 : (uint64_t)p.w * spp * bytes;
    const uint64_t need = p.kind >= 4 ? row_bytes * p.h : npix * spp;
    if (need > len - p.pos)
        return ld__err(e, LD_EFORMAT, "%s: PNM: truncated pixel data (%llu bytes, %llu needed)",
                       name, (unsigned long long)(len - p.pos), (unsigned long long)need);
    const int ch = opts->channels;
    const int wide = opts->depth16 && p.maxval > 255; /* 16-bit output (else widened later) */
    rc = ld__image_alloc_depth(out, (int)p.w, (int)p.h, ch, wide ? 16 : 8);
    if (rc < 0)
        return ld__err(e, rc, "%s: cannot allocate a %ux%ux%d image", name, (unsigned)p.w,
                       (unsigned)p.h, ch);
    uint8_t *dst = out->px;
    uint16_t *dst16 = (uint16_t *)(void *)out->px;
    const uint8_t *s = buf + p.pos;
    for (uint32_t y = 0; y < p.h; y++) {
        for (uint32_t x = 0; x < p.w; x++, dst += ch, dst16 += ch) {
            unsigned v[3];
            for (unsigned k = 0; k < spp; k++) {
                uint32_t raw;
                if (p.kind == 4) {
                    raw = s[(size_t)y * row_bytes + x / 8] >> (7 - x % 8) & 1;
                } else if (p.kind == 1) {
                    skip_blank(&p); /* P1 digits need no blank between them */
                    if (p.pos >= p.len || (p.b[p.pos] != '0' && p.b[p.pos] != '1'))
                        return ld__err(e, LD_EFORMAT, "%s: PNM: truncated or bad bitmap at row %u",
                                       name, (unsigned)y);
                    raw = (uint32_t)(p.b[p.pos++] - '0');
                } else if (p.kind <= 3) {
                    if (!read_uint(&p, p.maxval, &raw))
                        return ld__err(e, LD_EFORMAT,
                                       "%s: PNM: truncated, bad or over-maxval sample at row %u",
                                       name, (unsigned)y);
                } else {
                    const uint8_t *q = s + (size_t)y * row_bytes + ((size_t)x * spp + k) * bytes;
                    raw = bytes == 2 ? (uint32_t)q[0] << 8 | q[1] : q[0];
                    if (raw > p.maxval)
                        return ld__err(e, LD_EFORMAT, "%s: PNM: sample %u over maxval %u at row %u",
                                       name, (unsigned)raw, (unsigned)p.maxval, (unsigned)y);
                }
                v[k] = p.kind == 1 || p.kind == 4 ? (raw ? 0 : 255)
                       : wide                     ? scale16(raw, p.maxval)
                                                  : scale(raw, p.maxval);
            }
            if (spp == 1) {
                v[1] = v[2] = v[0];
            }
            if (wide && ch == 3) {
                dst16[0] = (uint16_t)v[0];
                dst16[1] = (uint16_t)v[1];
                dst16[2] = (uint16_t)v[2];
            } else if (wide) {
                dst16[0] = spp == 1 ? (uint16_t)v[0] : ld__luma16(v[0], v[1], v[2]);
            } else if (ch == 3) {
                dst[0] = (uint8_t)v[0];
                dst[1] = (uint8_t)v[1];
                dst[2] = (uint8_t)v[2];
            } else {
                dst[0] = spp == 1 ? (uint8_t)v[0] : ld__luma(v[0], v[1], v[2]);
            }
        }
    }
    return LD_OK;
}
