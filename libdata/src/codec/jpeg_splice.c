/*
 * Restart-marker splicing for the box decoder (jpeg_crop.c): a baseline JPEG with restart
 * markers (DRI, every R MCUs) is a sequence of independent entropy-coded segments (the DC
 * predictions reset at each RSTn), so the segments that cover a box can be cut out of the
 * compressed data and put into a smaller JPEG of their own, and libjpeg then Huffman-decodes
 * only those, not every MCU above the box and beside it (jpeg_skip_scanlines and
 * jpeg_crop_scanline both still entropy-decode them, about half of a decode's time).
 *
 * The small JPEG is the original's bytes up to the end of its SOS segment (tables, DRI, SOS
 * unchanged), with the SOF's height and width set to the sub-image's, then the chosen segments
 * with their RST markers renumbered 0, 1, ..., 7, 0, ... (libjpeg checks the sequence: a wrong
 * number is a corrupt-data warning, which jpeg_dec.c's error manager makes an error), and EOI.
 *
 * Which segments: with R dividing the MCUs per row, each MCU row is mcux / R segments, and
 * the sub-image is the box's MCU rows and its MCU columns rounded out to multiples of R; with
 * R a multiple of the row (k rows per segment), the box's MCU rows rounded out to multiples of
 * k, full width. With chroma subsampling, one MCU of margin on each side (where the image has
 * one) first: the fancy upsampler takes each pixel's chroma from its neighbouring samples,
 * and with the margin they are the same as in the whole image, so the box's pixels equal a
 * full decode's (tests/unit/test_jpeg_splice.c). Without subsampling every 8x8 block decodes
 * on its own (IDCT, colour conversion per pixel): no margin.
 *
 * Anything else (progressive, arithmetic, 12-bit, several scans, no DRI, R that fits neither
 * rule) is left to the scanline-skipping path, and so is damage the segment walk sees (a RST
 * out of sequence, a missing one, another marker inside the scan, data ending early): that
 * path decodes the file as libjpeg reads it and reports what is wrong. Damage inside the
 * copied segments that the walk cannot see (bad Huffman codes) is found when the small JPEG is
 * decoded and reported as an error. Every read is bounded by len.
 */
#include <string.h>

#include "codec/jpeg_int.h"

/* Offsets of markers in the header: the SOF0/SOF1 segment's length field and the first
 * byte of entropy-coded data after SOS. 0 when the header is not one we can splice. */
static size_t header_walk(const uint8_t *buf, size_t len, size_t *sof)
{
    size_t p = 2; /* after SOI */
    *sof = 0;
    while (p < len) {
        if (buf[p] != 0xFF) return 0;
        while (p < len && buf[p] == 0xFF) /* fill bytes before a marker */
            p++;
        if (p + 3 > len) return 0;
        const uint8_t m = buf[p++];
        if (m == 0x01 || (m >= 0xD0 && m <= 0xD9)) return 0; /* no standalone marker here */
        const size_t seg = (size_t)buf[p] << 8 | buf[p + 1];
        if (seg < 2 || seg > len - p) return 0;
        if (m == 0xC0 || m == 0xC1) {
            if (seg < 8) return 0;
            *sof = p;
        } else if (m >= 0xC2 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
            return 0; /* progressive, lossless, hierarchical, arithmetic */
        } else if (m == 0xDC) {
            return 0; /* DNL: the height comes after the data */
        } else if (m == 0xDA) {
            return *sof ? p + seg : 0;
        }
        p += seg;
    }
    return 0;
}

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

int ld__jpeg_splice(j_decompress_ptr j, const uint8_t *buf, size_t len, const int box[4],
                    ld_buf *out, ld_buf *segs, int sub[4])
{
    const unsigned R = j->restart_interval;
    if (R == 0 || j->progressive_mode || j->arith_code || j->data_precision != 8 ||
        j->comps_in_scan != j->num_components)
        return 0;
    const int sampled =
        j->num_components > 1 && (j->max_h_samp_factor > 1 || j->max_v_samp_factor > 1);
    const long mcu_w = j->comps_in_scan == 1 ? 8 : 8L * j->max_h_samp_factor;
    const long mcu_h = j->comps_in_scan == 1 ? 8 : 8L * j->max_v_samp_factor;
    const long W = (long)j->image_width, H = (long)j->image_height;
    const long mcux = (W + mcu_w - 1) / mcu_w, mcuy = (H + mcu_h - 1) / mcu_h;
    if (mcux < 1 || mcuy < 1) return 0;
    size_t sof;
    const size_t data = header_walk(buf, len, &sof);
    if (!data || j->src == NULL || j->src->next_input_byte != buf + data) return 0;

    /* The box's MCUs, with the margin, then rounded out to whole segments. */
    const long m = sampled ? 1 : 0;
    long c0 = box[0] / mcu_w - m, c1 = (box[0] + box[2] - 1) / mcu_w + 1 + m;
    long r0 = box[1] / mcu_h - m, r1 = (box[1] + box[3] - 1) / mcu_h + 1 + m;
    c0 = c0 < 0 ? 0 : c0;
    r0 = r0 < 0 ? 0 : r0;
    c1 = c1 > mcux ? mcux : c1;
    r1 = r1 > mcuy ? mcuy : r1;
    long per_row, rows_per, g0, g1; /* segments per MCU row, MCU rows per segment, columns */
    if (mcux % (long)R == 0) {
        per_row = mcux / (long)R;
        rows_per = 1;
        g0 = c0 / (long)R;
        g1 = (c1 + (long)R - 1) / (long)R;
    } else if ((long)R % mcux == 0) {
        per_row = 1;
        rows_per = (long)R / mcux;
        g0 = 0;
        g1 = 1;
        r0 = r0 / rows_per * rows_per;
        r1 = (r1 + rows_per - 1) / rows_per * rows_per;
        r1 = r1 > mcuy ? mcuy : r1;
    } else {
        return 0;
    }
    c0 = g0 * (mcux / per_row);
    c1 = g1 * (mcux / per_row);
    const long total = (mcux * mcuy + (long)R - 1) / (long)R;
    const long s_last = (r1 - 1) / rows_per * per_row + g1 - 1;

    /* Walk the entropy-coded data up to the end of segment s_last: seg[2s] = its first byte,
     * seg[2s + 1] = one past its last (where its RST or EOI starts). */
    if (ld__buf_reserve(segs, (size_t)(s_last + 1) * 2 * sizeof(size_t)) < 0) return LD_ENOMEM;
    size_t *seg = (size_t *)(void *)segs->p;
    long s = 0;
    size_t p = data;
    seg[0] = data;
    while (s <= s_last) {
        const uint8_t *f = p < len ? memchr(buf + p, 0xFF, len - p) : NULL;
        if (!f) return 0; /* ends inside the scan */
        const size_t q = (size_t)(f - buf);
        size_t r = q + 1;
        if (r < len && buf[r] == 0x00) { /* a stuffed 0xFF data byte */
            p = r + 1;
            continue;
        }
        while (r < len && buf[r] == 0xFF)
            r++;
        if (r >= len) return 0;
        const uint8_t mk = buf[r];
        if (mk >= 0xD0 && mk <= 0xD7) {
            if (mk - 0xD0 != s % 8 || s + 1 >= total) return 0; /* out of sequence, extra */
            seg[2 * s + 1] = q;
            s++;
            seg[2 * s] = p = r + 1;
        } else if (mk == 0xD9) {
            if (s + 1 != total) return 0; /* RSTs missing */
            seg[2 * s + 1] = q;
            s++;
        } else {
            return 0; /* another marker inside the scan (DNL, a second scan's tables) */
        }
    }

    /* The small JPEG: header, the chosen segments with RSTs renumbered, EOI. */
    size_t need = data + 2;
    for (long rr = r0; rr < r1; rr += rows_per)
        for (long g = g0; g < g1; g++) {
            const long k = rr / rows_per * per_row + g;
            need += seg[2 * k + 1] - seg[2 * k] + 2;
        }
    if (ld__buf_reserve(out, need) < 0) return LD_ENOMEM;
    uint8_t *o = out->p;
    memcpy(o, buf, data);
    const long sw = (c1 == mcux ? W : c1 * mcu_w) - c0 * mcu_w;
    const long sh = (r1 == mcuy ? H : r1 * mcu_h) - r0 * mcu_h;
    put16(o + sof + 3, (unsigned)sh);
    put16(o + sof + 5, (unsigned)sw);
    size_t n = data;
    unsigned rst = 0;
    int first = 1;
    for (long rr = r0; rr < r1; rr += rows_per)
        for (long g = g0; g < g1; g++) {
            const long k = rr / rows_per * per_row + g;
            if (!first) {
                o[n++] = 0xFF;
                o[n++] = (uint8_t)(0xD0 + rst);
                rst = (rst + 1) & 7;
            }
            first = 0;
            memcpy(o + n, buf + seg[2 * k], seg[2 * k + 1] - seg[2 * k]);
            n += seg[2 * k + 1] - seg[2 * k];
        }
    o[n++] = 0xFF;
    o[n++] = 0xD9;
    out->len = n;
    sub[0] = (int)(c0 * mcu_w);
    sub[1] = (int)(r0 * mcu_h);
    sub[2] = (int)sw;
    sub[3] = (int)sh;
    return 1;
}
