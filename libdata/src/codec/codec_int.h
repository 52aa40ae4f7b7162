/*
 * Private to libdata/src/codec: the ld_codec layout and the per-format entry points that
 * codec.c dispatches to. Nothing outside codec/ includes this.
 */
#ifndef LD_CODEC_INT_H
#define LD_CODEC_INT_H

#include <string.h>

#include "codec/codec.h"

struct ld_jdec; /* jpeg_dec.c: a reusable jpeg_decompress_struct + error manager */
struct ld_jenc; /* jpeg_enc.c: a reusable jpeg_compress_struct + destination manager */

struct ld_codec {
    struct ld_jdec *jdec; /* created on first JPEG decode */
    struct ld_jenc *jenc; /* created on first JPEG encode */
    ld_image tmp;         /* orientation / colour conversion scratch */
    ld_buf rows;          /* row buffers (CMYK rows, PNG row pointers) */
    ld_buf splice, segs;  /* the box decoder's spliced JPEG and its segment offsets */
    int frames;           /* pages/frames of the image decoded last (ld__codec_frames) */
};

/* The pixel limit, checked from the header before any pixel is allocated: LD_OK, or
 * LD_ELIMIT "NAME: FMT is WxH = N pixels, over the limit of MAX" (max_pixels 0: no limit). */
int ld__img_limit(const char *name, ld_img_format f, uint64_t w, uint64_t h, uint64_t max_pixels,
                  ld_err *e);

int ld__jpeg_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                  ld_err *e);
int ld__jpeg_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                    const ld_decode_opts *opts, ld_image *out, ld_err *e);
void ld__jdec_free(struct ld_jdec *d);
/* jpeg_dec.c's decompressor, shared with the other JPEG decoders of codec/: codec/jpeg_int.h
 * (it needs jpeglib.h). */
void ld__jenc_free(struct ld_jenc *j);

#ifdef LD_HAVE_PNG
int ld__png_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                 ld_err *e);
int ld__png_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                   const ld_decode_opts *opts, ld_image *out, ld_err *e);
#endif

/* The other decoders, one file each, with the same contract as ld__img_info/ld__img_decode. */
#define LD_DECODER(fmt)                                                                            \
    int ld__##fmt##_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name,            \
                         ld_img_info *info, ld_err *e);                                            \
    int ld__##fmt##_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,          \
                           const ld_decode_opts *opts, ld_image *out, ld_err *e)
#ifdef LD_HAVE_TIFF
LD_DECODER(tiff); /* tiff_dec.c, libtiff */
#endif
#ifdef LD_HAVE_WEBP
LD_DECODER(webp); /* webp_dec.c, libwebp + libwebpdemux */
#endif
#ifdef LD_HAVE_GIF
LD_DECODER(gif); /* gif_dec.c, giflib */
#endif
LD_DECODER(bmp); /* bmp_dec.c, our own */
LD_DECODER(pnm); /* pnm_dec.c, our own */
#undef LD_DECODER

/* libjpeg's RGB -> luma (jccolor.c/jdcolor.c: 0.299, 0.587, 0.114 in 16-bit fixed point,
 * rounded), shared so that PNG and CMYK gray output match JPEG gray output exactly. */
static inline uint8_t ld__luma(unsigned r, unsigned g, unsigned b)
{
    return (uint8_t)((19595u * r + 38470u * g + 7471u * b + 32768u) >> 16);
}

/* The same weights on 16-bit samples. */
static inline uint16_t ld__luma16(unsigned r, unsigned g, unsigned b)
{
    return (uint16_t)((19595ull * r + 38470ull * g + 7471ull * b + 32768u) >> 16);
}

/* 1 on a little-endian host (16-bit samples in files are big-endian: PNG, PNM). */
static inline int ld__host_le(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b;
}

#endif /* LD_CODEC_INT_H */
