/*
 * JPEG decoding with libjpeg-turbo (libjpeg API).
 *
 * One jpeg_decompress_struct per ld_codec, created on first use and made afresh for every
 * following image (read_header): a reused decompressor keeps the quantization and Huffman
 * tables of the previous file (libjpeg's "abbreviated datastream" support), so a damaged file
 * that lacks its DQT/DHT segments decoded *successfully* with the tables of whatever file the
 * worker decoded before, i.e. output depending on the thread count (found by the bad-input
 * corpus: tests/data/make_bad_corpus.py no_dqt.jpg, tests/cli/hardening_bad_corpus.sh). A
 * create + destroy costs ~0.4 us against ~500 us for decoding one of our test photos.
 *
 * Errors: libjpeg reports fatal errors through error_exit and corrupt-data *warnings*
 * through emit_message(-1). It recovers from the latter by padding with gray, so a
 * truncated or damaged file would decode "successfully". The converter must skip such
 * files, so every warning is an error here, except a few about metadata only.
 */
#include <setjmp.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "codec/codec_int.h"
#include "codec/jpeg_int.h"

struct ld_jdec {
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr jerr;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
    int used; /* d has read a header since it was created: recreate before the next one */
};

static void on_error(j_common_ptr cinfo)
{
    struct ld_jdec *d = cinfo->client_data;
    cinfo->err->format_message(cinfo, d->msg);
    longjmp(d->jb, 1);
}

static void on_message(j_common_ptr cinfo, int level)
{
    if (level >= 0) return; /* trace messages */
    switch (cinfo->err->msg_code) {
    /* Damaged metadata only; the pixels are fine. */
    case JWRN_JFIF_MAJOR:
    case JWRN_ADOBE_XFORM:
    case JWRN_BOGUS_ICC: return;
    default: on_error(cinfo);
    }
}

static void no_output(j_common_ptr cinfo)
{
    (void)cinfo; /* the library never prints */
}

void ld__jdec_free(struct ld_jdec *d)
{
    if (!d) return;
    jpeg_destroy_decompress(&d->d);
    free(d);
}

static struct ld_jdec *jdec_get(ld_codec *c)
{
    if (c->jdec) return c->jdec;
    struct ld_jdec *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->d.err = jpeg_std_error(&d->jerr);
    d->jerr.error_exit = on_error;
    d->jerr.emit_message = on_message;
    d->jerr.output_message = no_output;
    d->d.client_data = d;
    if (setjmp(d->jb)) { /* only out of memory can fail here */
        jpeg_destroy_decompress(&d->d);
        free(d);
        return NULL;
    }
    jpeg_create_decompress(&d->d);
    /* Keep APP1 for EXIF. APP14 (Adobe) is parsed by libjpeg itself. */
    jpeg_save_markers(&d->d, JPEG_APP0 + 1, 0xFFFF);
    c->jdec = d;
    return d;
}

static int orientation_of(j_decompress_ptr j)
{
    for (jpeg_saved_marker_ptr m = j->marker_list; m; m = m->next)
        if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && memcmp(m->data, "Exif\0", 6) == 0)
            return ld__exif_orientation(m->data, m->data_length);
    return 1;
}

/* Reads the header into d (state READY). Must be called under d's setjmp. */
static void read_header(struct ld_jdec *d, const uint8_t *buf, size_t len)
{
    if (d->used) { /* no tables left over from the previous file (see the top) */
        jpeg_destroy_decompress(&d->d); /* keeps err and client_data */
        jpeg_create_decompress(&d->d);  /* out of memory: error_exit, under the caller's setjmp */
        jpeg_save_markers(&d->d, JPEG_APP0 + 1, 0xFFFF);
    }
    d->used = 1;
    jpeg_mem_src(&d->d, buf, (unsigned long)len);
    jpeg_read_header(&d->d, TRUE);
}

int ld__jpeg_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                  ld_err *e)
{
    struct ld_jdec *d = jdec_get(c);
    if (!d) return ld__err(e, LD_ENOMEM, "%s: out of memory creating the JPEG decoder", name);
    int rc = LD_OK;
    if (setjmp(d->jb)) {
        rc = ld__err(e, LD_EFORMAT, "%s: JPEG: %s", name, d->msg);
        goto done;
    }
    read_header(d, buf, len);
    const int o = orientation_of(&d->d);
    const int w = (int)d->d.image_width, h = (int)d->d.image_height;
    info->format = LD_IMG_JPEG;
    info->orientation = o;
    info->w = o >= 5 ? h : w;
    info->h = o >= 5 ? w : h;
    info->channels = d->d.num_components == 1 ? 1 : 3;
done:
    jpeg_abort_decompress(&d->d);
    return rc;
}

/* Only n = 1, 2, 4, 8: libjpeg-turbo has fast (SIMD) IDCTs for those, while 3/8, 5/8, 6/8,
 * 7/8 go through generic scaled IDCTs that are *slower than a full-size decode* (500x375
 * photos, one core: 1/8 0.42 ms, 2/8 0.47, 3/8 0.61, 4/8 0.51, 5/8 0.85, 6/8 0.98, 7/8 1.28,
 * 8/8 0.64 ms). Decoding contracts only allow shrinking, so skipping those is within them. */
int ld__dct_scale(uint64_t w, uint64_t h, uint64_t tw, uint64_t th)
{
    if (tw == 0 && th == 0) return 8;
    for (int n = 1; n < 8; n *= 2)
        if (w * (uint64_t)n >= tw && h * (uint64_t)n >= th) return n;
    return 8;
}

/* libjpeg's output size is ceil(dim * n / 8) per axis, so ceil(w n / 8) >= m <=> w n >= 8 m - 7.
 * The axes of the displayed image are the stored ones, swapped for orientations 5..8: the same
 * per-axis test. */
int ld__jpeg_scale(int w, int h, int min_w, int min_h)
{
    if (min_w <= 0 && min_h <= 0) return 8;
    const uint64_t tw = min_w > 0 ? 8 * (uint64_t)min_w - 7 : 0;
    const uint64_t th = min_h > 0 ? 8 * (uint64_t)min_h - 7 : 0;
    return ld__dct_scale(w > 0 ? (uint64_t)w : 0, h > 0 ? (uint64_t)h : 0, tw, th);
}

/* Adobe/Photoshop CMYK is stored inverted (0 = full ink), so R = C'K'/255 with the stored
 * values; plain CMYK gets inverted first. YCCK arrives here already as CMYK. */
static void cmyk_row(const uint8_t *in, uint8_t *out, int w, int channels, int inverted)
{
    for (int x = 0; x < w; x++, in += 4) {
        unsigned cc = in[0], m = in[1], y = in[2], k = in[3];
        if (!inverted) {
            cc = 255 - cc;
            m = 255 - m;
            y = 255 - y;
            k = 255 - k;
        }
        const unsigned r = (cc * k + 127) / 255, g = (m * k + 127) / 255, b = (y * k + 127) / 255;
        if (channels == 3) {
            out[0] = (uint8_t)r;
            out[1] = (uint8_t)g;
            out[2] = (uint8_t)b;
            out += 3;
        } else {
            *out++ = ld__luma(r, g, b);
        }
    }
}

int ld__jpeg_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                    const ld_decode_opts *opts, ld_image *out, ld_err *e)
{
    struct ld_jdec *d = jdec_get(c);
    if (!d) return ld__err(e, LD_ENOMEM, "%s: out of memory creating the JPEG decoder", name);
    j_decompress_ptr j = &d->d;
    int rc = LD_OK;
    if (setjmp(d->jb)) {
        rc = ld__err(e, LD_EFORMAT, "%s: JPEG: %s", name, d->msg);
        goto fail;
    }
    read_header(d, buf, len);
    const int orient = opts->apply_orientation ? orientation_of(j) : 1;
    LD_TRY(ld__img_limit(name, LD_IMG_JPEG, j->image_width, j->image_height, opts->max_pixels, e));
    const int cmyk = j->jpeg_color_space == JCS_CMYK || j->jpeg_color_space == JCS_YCCK;
    if (cmyk)
        j->out_color_space = JCS_CMYK; /* libjpeg converts YCCK -> CMYK; we do CMYK -> RGB */
    else
        j->out_color_space = opts->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    const int swap = orient >= 5; /* the displayed size, which min_w x min_h refers to */
    j->scale_num = (unsigned)ld__jpeg_scale((int)(swap ? j->image_height : j->image_width),
                                            (int)(swap ? j->image_width : j->image_height),
                                            opts->min_w, opts->min_h);
    j->scale_denom = 8;
    jpeg_calc_output_dimensions(j);

    const int ow = (int)j->output_width, oh = (int)j->output_height, ch = opts->channels;
    rc = ld__image_alloc(out, ow, oh, ch);
    if (rc == LD_OK && cmyk) rc = ld__buf_reserve(&c->rows, (size_t)ow * 4);
    LD_CHECK(e, rc == LD_OK, rc, "%s: cannot allocate a %dx%dx%d image", name, ow, oh, ch);
    jpeg_start_decompress(j);
    const size_t stride = (size_t)ow * ch;
    while (j->output_scanline < j->output_height) {
        JSAMPROW rows[16];
        JDIMENSION got;
        if (cmyk) {
            rows[0] = c->rows.p;
            got = jpeg_read_scanlines(j, rows, 1);
            if (got == 1)
                cmyk_row(c->rows.p, out->px + (size_t)(j->output_scanline - 1) * stride, ow, ch,
                         j->saw_Adobe_marker);
        } else {
            /* Several rows per call: libjpeg emits up to rec_outbuf_height at once. */
            JDIMENSION n = j->output_height - j->output_scanline;
            if (n > 16) n = 16;
            for (JDIMENSION i = 0; i < n; i++)
                rows[i] = out->px + (size_t)(j->output_scanline + i) * stride;
            got = jpeg_read_scanlines(j, rows, n);
        }
        /* Cannot happen with a memory source (it fakes an EOI, which warns); never spin. */
        LD_CHECK(e, got > 0, LD_EFORMAT, "%s: JPEG: decoder made no progress", name);
    }
    /* Reads up to EOI, so damage after the last scanline is reported too. */
    jpeg_finish_decompress(j);
    rc = ld__image_orient(out, orient, &c->tmp);
    LD_CHECK(e, rc == LD_OK, rc, "%s: out of memory applying EXIF orientation %d", name, orient);
fail:
    /* Back to the idle state after any failure, so the struct serves the next image. */
    if (rc < 0) jpeg_abort_decompress(j);
    return rc;
}

/* ---- for the other JPEG decoders of codec/ (jpeg_crop.c), which share this decompressor,
 * its error handling and its fresh-tables-per-file rule ---------------------------------- */

struct ld_jdec *ld__jdec_get(ld_codec *c)
{
    return jdec_get(c);
}

jmp_buf *ld__jdec_jmp(struct ld_jdec *d)
{
    return &d->jb;
}

j_decompress_ptr ld__jdec_header(struct ld_jdec *d, const uint8_t *buf, size_t len)
{
    read_header(d, buf, len);
    return &d->d;
}

const char *ld__jdec_msg(const struct ld_jdec *d)
{
    return d->msg;
}

int ld__jdec_orientation(struct ld_jdec *d)
{
    return orientation_of(&d->d);
}
