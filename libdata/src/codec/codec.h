/*
 * Image codecs: JPEG (libjpeg-turbo), PNG (libpng), TIFF (libtiff), WebP (libwebp), GIF
 * (giflib), BMP and PNM (our own parsers) decode to 8-bit gray or RGB; JPEG and PNG encode
 * from them; the EXIF orientation parser. Every setjmp/longjmp of libjpeg/libpng stays
 * inside the codec sources; callers only see status codes and an ld_err message.
 *
 * Thread rules: an ld_codec is used by one thread at a time (each worker owns one).
 */
#ifndef LD_CODEC_H
#define LD_CODEC_H

#include "common/ld_internal.h"

typedef enum ld_img_format {
    LD_IMG_UNKNOWN = 0,
    LD_IMG_JPEG = 1,
    LD_IMG_PNG = 2,
    LD_IMG_TIFF = 3, /* "II*\0", "MM\0*", BigTIFF "II+\0", "MM\0+" */
    LD_IMG_WEBP = 4, /* "RIFF" size "WEBP" */
    LD_IMG_GIF = 5,  /* "GIF87a", "GIF89a" */
    LD_IMG_BMP = 6,  /* "BM" and a known info-header size */
    LD_IMG_PNM = 7   /* "P1".."P6" and a blank */
} ld_img_format;

/* The format's name for messages ("JPEG", "TIFF", ...; "unknown"). */
const char *ld__img_format_name(ld_img_format f);

/* Whether a file name looks like an image we read (.jpg .jpeg .jpe .jfif .png .tif .tiff
 * .webp .gif .bmp .dib .pgm .ppm .pbm .pnm, any case, not the bare extension): the names
 * folder mode lists, and the probe's "a folder of images" test; decoding then goes by the
 * content. */
int ld__img_name_known(const char *name);

/* Sniff the format from the first bytes (magic numbers, not the file name). */
ld_img_format ld__img_sniff(const uint8_t *buf, size_t len);

/* What the header says. w, h are the *displayed* size, i.e. after EXIF orientation
 * (orientations 5..8 swap them). */
typedef struct ld_img_info {
    ld_img_format format;
    int w, h;
    int orientation; /* EXIF 1..8 (1 = none) */
    int channels;    /* 1 for a grayscale file (JPEG with one component, PNG gray or gray +
                        alpha), else 3: what decoding without forcing gives, as OpenCV's
                        IMREAD_ANYCOLOR (Caffe's DecodeDatumNative) does */
    int depth;       /* bits per sample the file holds: 16 for 16-bit PNG, TIFF and PNM
                        (maxval > 255), else 8 */
} ld_img_info;

typedef struct ld_decode_opts {
    int channels;        /* 1 (gray) or 3 (RGB) */
    uint64_t max_pixels; /* refuse w*h above this before allocating (LD_ELIMIT); 0 = no limit */
    /* DCT-scaled decoding hint (JPEG only): the decoder may shrink by M/8 as long as the
     * result, in displayed orientation, stays at least min_w x min_h. 0 = full size. */
    int min_w, min_h;
    int apply_orientation; /* 1 = rotate/flip per EXIF (default behaviour of the converter) */
    /* 1 = 16-bit output (out->depth 16): 16-bit PNG, TIFF and PNM samples as they are (a PNM's
     * maxval scaled to 65535), every 8-bit input widened exactly (v * 257). 0 = 8-bit output
     * (16-bit samples reduced to their high byte, as libpng's strip_16). */
    int depth16;
} ld_decode_opts;

/* Per-thread codec state: reusable scratch (row buffers, rotation buffer, libjpeg/libpng
 * structs where they can be reused). */
typedef struct ld_codec ld_codec;
ld_codec *ld__codec_create(void);
void ld__codec_free(ld_codec *c);

/* Parse only the header. LD_OK, LD_EFORMAT (message says why; `name` is put in front of
 * messages, usually the file path). */
int ld__img_info(ld_codec *c, const uint8_t *buf, size_t len, const char *name, ld_img_info *info,
                 ld_err *e);

/* Pages (TIFF) or frames (GIF, animated WebP) in the image decoded last by ld__img_decode on
 * this codec: 1 for a single image. Only the first is ever decoded; a converter uses this to
 * say so. */
int ld__codec_frames(const ld_codec *c);

/* Decode into `out` (grown if needed, reused otherwise). The result is interleaved HWC,
 * gray or RGB per opts->channels, EXIF orientation applied if asked.
 * LD_OK, LD_EFORMAT (corrupt/truncated/unsupported), LD_ELIMIT (too many pixels, checked
 * from the header before the pixels are allocated), LD_ENOMEM, LD_ENOTSUP (a format whose
 * library was not built in: "TIFF support not built"). A truncated file is an error (not
 * silently gray-filled). Multi-page TIFF, animated GIF and WebP: the first page/frame. */
int ld__img_decode(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                   const ld_decode_opts *opts, ld_image *out, ld_err *e);

/* Decode only the box (x, y, w, h) = box[0..3] of a JPEG (in full-size pixels; the box must
 * lie inside the image) at the smallest DCT scale n/8 (n = 1, 2, 4, 8) at which the box still
 * spans 1.5 x opts->min_w by 1.5 x opts->min_h pixels (0 = full scale; the margin keeps the
 * result within 35 dB of a full decode, see jpeg_crop.c), reading only the box's rows and,
 * rounded out to the iMCU grid, its columns (jpeg_crop.c). `out` receives those pixels (HWC,
 * opts->channels) and rect[0..3] the box in out's pixel coordinates, fractional (x, y, w, h),
 * for the resampler (ld_geometry.rect). LD_OK; LD_ENOTSUP without a message when the image needs
 * ld__img_decode (an EXIF orientation other than 1 with opts->apply_orientation, CMYK);
 * LD_EFORMAT, LD_ELIMIT, LD_ENOMEM as ld__img_decode; LD_EINVAL for a box outside the image.
 * Damage below the box is not detected (decoding stops at its last row). A baseline JPEG with
 * restart markers every R MCUs, R dividing the MCUs per row (what ld__jpeg_encode writes) or a
 * multiple of them, is cut down to the box's restart segments first (jpeg_splice.c): only those
 * are Huffman-decoded, and the box's pixels are exactly a full decode's. */
int ld__jpeg_decode_box(ld_codec *c, const uint8_t *buf, size_t len, const char *name,
                        const ld_decode_opts *opts, const int box[4], ld_image *out, double rect[4],
                        ld_err *e);

/* The DCT scale n (1, 2, 4 or 8: the image is decoded at n/8 of its size) that ld__img_decode
 * uses for a JPEG displayed (after EXIF orientation) w x h, given opts->min_w, min_h: the
 * smallest whose output, libjpeg's ceil(side * n / 8), still covers min_w x min_h; 8 when both
 * are <= 0. The converter's decode_scale auto takes min_w, min_h from ld__resize_min_source. */
int ld__jpeg_scale(int w, int h, int min_w, int min_h);

/* The rule under it and under ld__jpeg_decode_box's choice: the smallest n in {1, 2, 4} with
 * w * n >= tw and h * n >= th (thresholds in eighths of a pixel), else 8; 8 when both are 0. */
int ld__dct_scale(uint64_t w, uint64_t h, uint64_t tw, uint64_t th);

/* Encode `im` (gray or RGB, HWC) as JPEG at quality 1..100 (4:2:0 for quality < 90,
 * 4:4:4 otherwise, baseline, optimized Huffman off; with `restart`, restart markers every R
 * MCUs with R dividing the MCUs per row, for ld__jpeg_decode_box: jpeg_enc.c) into `out`
 * (out->len set; buffer reused). */
int ld__jpeg_encode(ld_codec *c, const ld_image *im, int quality, int restart, ld_buf *out,
                    ld_err *e);

/* Encode `im` as PNG (default compression) into `out`. */
int ld__png_encode(ld_codec *c, const ld_image *im, ld_buf *out, ld_err *e);

/* Decode a segmentation mask (a PNG) into `out` (one channel): class indices of one byte, or
 * with `wide` uint16 in host byte order (out->depth 16).
 * A palette PNG gives its palette indices (never the colours; tRNS ignored), gray gives its
 * values unscaled (1, 2, 4 bits as 0..1, 0..3, 0..15; 16 bits: without `wide`, when every value
 * is at most 255, else LD_EFORMAT naming the value and --mask-type uint16), alpha is dropped.
 * An RGB(A) PNG is LD_EFORMAT with what to do. No EXIF orientation is applied (the caller
 * applies the image's). Pixel limit as ld__img_decode (LD_ELIMIT before allocating).
 * LD_ENOTSUP without libpng. */
int ld__png_decode_indices(ld_codec *c, const uint8_t *buf, size_t len, const char *name, int wide,
                           uint64_t max_pixels, ld_image *out, ld_err *e);

/* EXIF: find the orientation tag (0x0112) in an APP1 "Exif\0\0" payload (the bytes after the
 * marker length). Returns 1..8, or 1 when absent or malformed (never reads out of bounds). */
int ld__exif_orientation(const uint8_t *app1, size_t len);

/* The same from bare TIFF data (a PNG eXIf chunk's payload). 1..8, or 1 when absent or
 * malformed. */
int ld__tiff_orientation(const uint8_t *tiff, size_t len);

/* Apply an EXIF orientation (2..8) to `im`, using `tmp` as scratch; result in `im`. */
int ld__image_orient(ld_image *im, int orientation, ld_image *tmp);

#endif /* LD_CODEC_H */
