/*
 * JPEG encoding into a reusable ld_buf. A destination manager of our own writes straight
 * into the caller's buffer and grows it only when an image does not fit, so encoding many
 * images of similar size allocates nothing after the first (jpeg_mem_dest would malloc a
 * fresh buffer per image).
 */
#include <setjmp.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <stdlib.h>

#include <jerror.h>
#include <jpeglib.h>

#include "codec/codec_int.h"

struct ld_jenc {
    struct jpeg_compress_struct j;
    struct jpeg_error_mgr jerr;
    struct jpeg_destination_mgr dest;
    ld_buf *out;
    int oom; /* the destination could not grow: report LD_ENOMEM, not a format error */
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
};

static void on_error(j_common_ptr cinfo)
{
    struct ld_jenc *x = cinfo->client_data;
    cinfo->err->format_message(cinfo, x->msg);
    longjmp(x->jb, 1);
}

static void on_message(j_common_ptr cinfo, int level)
{
    (void)cinfo; /* the encoder's warnings do not affect the output we produce */
    (void)level;
}

static void dest_init(j_compress_ptr cinfo)
{
    struct ld_jenc *x = cinfo->client_data;
    x->out->len = 0;
    if (ld__buf_reserve(x->out, 16384) < 0) {
        x->oom = 1;
        ERREXIT(cinfo, JERR_OUT_OF_MEMORY);
    }
    x->dest.next_output_byte = x->out->p;
    x->dest.free_in_buffer = x->out->cap;
}

static boolean dest_grow(j_compress_ptr cinfo)
{
    /* libjpeg calls this only when the whole buffer is full. */
    struct ld_jenc *x = cinfo->client_data;
    const size_t used = x->out->cap;
    if (used > SIZE_MAX / 2 || ld__buf_reserve(x->out, used * 2) < 0) {
        x->oom = 1;
        ERREXIT(cinfo, JERR_OUT_OF_MEMORY);
    }
    x->dest.next_output_byte = x->out->p + used;
    x->dest.free_in_buffer = x->out->cap - used;
    return TRUE;
}

static void dest_term(j_compress_ptr cinfo)
{
    struct ld_jenc *x = cinfo->client_data;
    x->out->len = x->out->cap - x->dest.free_in_buffer;
}

void ld__jenc_free(struct ld_jenc *x)
{
    if (!x) return;
    jpeg_destroy_compress(&x->j);
    free(x);
}

static struct ld_jenc *jenc_get(ld_codec *c)
{
    if (c->jenc) return c->jenc;
    struct ld_jenc *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->j.err = jpeg_std_error(&x->jerr);
    x->jerr.error_exit = on_error;
    x->jerr.emit_message = on_message;
    x->j.client_data = x;
    if (setjmp(x->jb)) {
        jpeg_destroy_compress(&x->j);
        free(x);
        return NULL;
    }
    jpeg_create_compress(&x->j);
    x->dest.init_destination = dest_init;
    x->dest.empty_output_buffer = dest_grow;
    x->dest.term_destination = dest_term;
    x->j.dest = &x->dest;
    c->jenc = x;
    return x;
}

/* The restart interval, in MCUs, for an image w pixels wide whose MCUs are mcu_w wide: the
 * largest divisor of the MCUs per row up to RESTART_MAX, so that the box decoder can cut a
 * box's columns as well as its rows out of the compressed data (jpeg_splice.c); whole rows when
 * that divisor is 1 (a prime number of MCUs per row: a marker every MCU would cost ~15 %).
 *
 * RESTART_MAX 4: each marker costs ~4 bytes (the marker, the padding to a byte boundary, the
 * first DC coded whole). On 400 photos stored at --max-side 256 --quality 90 (256 x 192,
 * 4:4:4, 32 or 24 MCUs per row) the files grow by 4.7 % with 4 (2: 9.6 %, 8: 2.3 %, 16: 1.1 %,
 * 32: 0.5 %), and the box decoder takes 0.60 of a full decode's time with 4 (min of 5 runs;
 * 0.78 without restart markers; in one run each, 2: 0.57, 4: 0.58, 8: 0.64, 16: 0.70): beyond 4
 * the box's columns are cut too coarsely to gain, below it the bytes grow for nothing. The
 * price besides the bytes: libjpeg-turbo 2.1 takes its generic Huffman path (perf:
 * jpeg_fill_bit_buffer, jpeg_huff_decode) for any stream with restart markers, so a full decode
 * of these files takes ~6 % longer (239 vs 225 us). bench/rrc_rate, docs/cli.md. */
#define RESTART_MAX 4u

static unsigned restart_interval(int w, int mcu_w)
{
    const unsigned per_row = (unsigned)((w + mcu_w - 1) / mcu_w);
    unsigned r = 1;
    for (unsigned d = 2; d <= RESTART_MAX && d <= per_row; d++)
        if (per_row % d == 0) r = d;
    return r == 1 ? per_row : r;
}

int ld__jpeg_encode(ld_codec *c, const ld_image *im, int quality, int restart, ld_buf *out,
                    ld_err *e)
{
    if (!im || !im->px || im->w <= 0 || im->h <= 0 || (im->c != 1 && im->c != 3))
        return ld__err(e, LD_EINVAL, "JPEG encode: need a gray or RGB image");
    if (quality < 1 || quality > 100)
        return ld__err(e, LD_EINVAL, "JPEG encode: quality %d is not in 1..100", quality);
    if (im->w > JPEG_MAX_DIMENSION || im->h > JPEG_MAX_DIMENSION)
        return ld__err(e, LD_ELIMIT, "JPEG encode: %dx%d is larger than JPEG allows (%d)", im->w,
                       im->h, (int)JPEG_MAX_DIMENSION);
    struct ld_jenc *x = jenc_get(c);
    if (!x) return ld__err(e, LD_ENOMEM, "JPEG encode: out of memory creating the encoder");
    j_compress_ptr j = &x->j;
    x->out = out;
    x->oom = 0;
    if (setjmp(x->jb)) {
        jpeg_abort_compress(j);
        return ld__err(e, x->oom ? LD_ENOMEM : LD_EFORMAT, "JPEG encode: %s", x->msg);
    }
    j->image_width = (JDIMENSION)im->w;
    j->image_height = (JDIMENSION)im->h;
    j->input_components = im->c;
    j->in_color_space = im->c == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(j);
    jpeg_set_quality(j, quality, TRUE);
    j->optimize_coding = FALSE;
    if (im->c == 3) {
        /* Chroma subsampling costs visible quality at high settings (what cjpeg and PIL do
         * is 4:2:0 everywhere; we keep full chroma from q90, where the user asked for fidelity). */
        const int s = quality < 90 ? 2 : 1;
        j->comp_info[0].h_samp_factor = s;
        j->comp_info[0].v_samp_factor = s;
        j->comp_info[1].h_samp_factor = j->comp_info[1].v_samp_factor = 1;
        j->comp_info[2].h_samp_factor = j->comp_info[2].v_samp_factor = 1;
    }
    const int mcu_w = im->c == 3 ? 8 * j->comp_info[0].h_samp_factor : 8;
    j->restart_interval = restart ? restart_interval(im->w, mcu_w) : 0;
    jpeg_start_compress(j, TRUE);
    const size_t stride = (size_t)im->w * im->c;
    while (j->next_scanline < j->image_height) {
        JSAMPROW rows[16];
        JDIMENSION n = j->image_height - j->next_scanline;
        if (n > 16) n = 16;
        for (JDIMENSION i = 0; i < n; i++)
            rows[i] = im->px + (size_t)(j->next_scanline + i) * stride;
        jpeg_write_scanlines(j, rows, n);
    }
    jpeg_finish_compress(j);
    return LD_OK;
}
