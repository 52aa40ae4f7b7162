/*
 * PNG encoding (8-bit gray or RGB, default zlib level) into a reusable ld_buf.
 */
#include <setjmp.h>
#include <stdio.h>

#include "codec/codec_int.h"

#ifdef LD_HAVE_PNG
#include <png.h>

typedef struct wr_ctx {
    ld_buf *out;
    int oom;
    char msg[256];
} wr_ctx;

static void on_error(png_structp png, png_const_charp msg)
{
    wr_ctx *x = png_get_error_ptr(png);
    snprintf(x->msg, sizeof x->msg, "%s", msg ? msg : "unknown error");
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void write_mem(png_structp png, png_bytep data, size_t n)
{
    wr_ctx *x = png_get_io_ptr(png);
    if (ld__buf_append(x->out, data, n) < 0) {
        x->oom = 1;
        png_error(png, "out of memory growing the output buffer");
    }
}

static void flush_mem(png_structp png)
{
    (void)png;
}

int ld__png_encode(ld_codec *c, const ld_image *im, ld_buf *out, ld_err *e)
{
    (void)c;
    if (!im || !im->px || im->w <= 0 || im->h <= 0 || (im->c != 1 && im->c != 3))
        return ld__err(e, LD_EINVAL, "PNG encode: need a gray or RGB image");
    wr_ctx x = {out, 0, ""};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &x, on_error, on_warning);
    png_infop pi = png ? png_create_info_struct(png) : NULL;
    if (!pi) {
        png_destroy_write_struct(&png, NULL);
        return ld__err(e, LD_ENOMEM, "PNG encode: out of memory creating the encoder");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &pi);
        return ld__err(e, x.oom ? LD_ENOMEM : LD_EFORMAT, "PNG encode: %s", x.msg);
    }
    out->len = 0;
    png_set_write_fn(png, &x, write_mem, flush_mem);
    png_set_IHDR(png, pi, (png_uint_32)im->w, (png_uint_32)im->h, 8,
                 im->c == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, pi);
    const size_t stride = (size_t)im->w * im->c;
    for (int y = 0; y < im->h; y++)
        png_write_row(png, im->px + (size_t)y * stride);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &pi);
    return LD_OK;
}

#else
int ld__png_encode(ld_codec *c, const ld_image *im, ld_buf *out, ld_err *e)
{
    (void)c;
    (void)im;
    (void)out;
    return ld__err(e, LD_ENOTSUP, "PNG encode: PNG support not built");
}
#endif /* LD_HAVE_PNG */
