/*
 * Resize: geometry planning (the four ld_resize_mode modes) and a separable, antialiased
 * resampler on 8-bit HWC images (1 or 3 channels); 16-bit images (ld_image.depth 16) take the
 * same tables in a scalar path with 64-bit sums.
 *
 * Thread rules: an ld_resizer is used by one thread at a time (each worker owns one).
 */
#ifndef LD_RESIZE_H
#define LD_RESIZE_H

#include "common/ld_internal.h"

typedef struct ld_geometry {
    int mode; /* ld_resize_mode (libdata/convert.h) */
    int w, h; /* target; w == 0 && h == 0: no resize */
    uint8_t pad_value;
    /* rect = 1: resample the source rectangle (rx, ry, rw, rh) (pixels, fractional, inside the
     * image) to w x h, whatever the mode (the random resized crop, reader/rrc.c). The filter
     * reads the pixels just outside the rectangle where the image has any, as Pillow's
     * resize(box=...) does. */
    int rect;
    double rx, ry, rw, rh;
    int filter; /* ld_filter; 0 (zero-initialized) = Lanczos-3, what conversion uses */
} ld_geometry;

/* The resampling kernel. Both are antialiased the same way: when shrinking by s the kernel is
 * stretched by s. Lanczos-3 (support 3) is the conversion's; bilinear is Pillow's BILINEAR
 * (triangle 1 - |x|, support 1), what torchvision's RandomResizedCrop uses on PIL images. */
typedef enum ld_filter { LD_FILTER_LANCZOS3 = 0, LD_FILTER_BILINEAR = 1 } ld_filter;

/* What to do with a src_w x src_h image:
 * take the source rectangle (crop_x, crop_y, crop_w, crop_h) (in source pixels, fractional),
 * resample it to scaled_w x scaled_h, and place it at (off_x, off_y) in an out_w x out_h
 * image whose other pixels are pad_value (only LD_RESIZE_PAD pads). */
typedef struct ld_resize_plan {
    double crop_x, crop_y, crop_w, crop_h;
    int scaled_w, scaled_h;
    int off_x, off_y;
    int out_w, out_h;
    int identity; /* 1 when the output equals the input (no work to do) */
} ld_resize_plan;

/* Plan the geometry. LD_OK or LD_EINVAL (bad geometry, message in e). */
int ld__resize_plan(const ld_geometry *g, int src_w, int src_h, ld_resize_plan *plan, ld_err *e);

/* The smallest decoded size worth asking a DCT-scaled JPEG decoder for, so that the
 * resampler still has at least 2x oversampling: fills min_w, min_h (0 = full size). */
void ld__resize_min_source(const ld_geometry *g, int src_w, int src_h, int *min_w, int *min_h);

typedef struct ld_resizer ld_resizer; /* per-thread scratch (coefficients, row buffers) */
ld_resizer *ld__resizer_create(void);
void ld__resizer_free(ld_resizer *r);

/* Resize `src` per `g` into `dst` (grown if needed; of src's depth). Antialiased: the filter
 * support widens with the shrink factor (Lanczos-3 / box-area for large factors), so nothing
 * aliases. A 16-bit image's pad gray level is g->pad_value * 257. LD_OK, LD_ENOMEM, LD_EINVAL. */
int ld__resize(ld_resizer *r, const ld_image *src, const ld_geometry *g, ld_image *dst, ld_err *e);

/* The same result as planes (CHW, what raw datasets store) in `out` (grown if needed; out->len
 * set to out_w * out_h * c): plane p holds channel ch[p] of a 3-channel source (ignored for
 * 1 channel). The same bytes as ld__resize + ld__deinterleave3; with the AVX2 kernel the last
 * pass writes the planes itself (no transpose of the resized image). src->c is 1 or 3.
 * LD_OK, LD_ENOMEM, LD_EINVAL. */
int ld__resize_planar(ld_resizer *r, const ld_image *src, const ld_geometry *g, const int ch[3],
                      ld_buf *out, int *out_w, int *out_h, ld_err *e);

/* The same geometry with nearest-neighbour sampling, for class-index images (segmentation
 * masks: an index is never blended with another); src->c must be 1, of 8 bits (uint8) or 16
 * (uint16 in host order: src->depth 16). The canvas outside the scaled area (pad mode) is `pad`.
 * out holds out_w x out_h indices (out->len set, in bytes). LD_OK, LD_ENOMEM, LD_EINVAL, LD_ELIMIT.
 */
int ld__resize_nearest(const ld_image *src, const ld_geometry *g, unsigned pad, ld_buf *out,
                       int *out_w, int *out_h, ld_err *e);

/* Detection boxes through the same geometry (issue 28): each box of a src_w x src_h image is
 * mapped as its pixels are (the crop rectangle scaled to the scaled area at its offset),
 * clipped to the scaled area; a box left without area is dropped (counted in *dropped). In
 * place: boxes[0 .. *m) keep their order. LD_OK or LD_EINVAL (bad geometry). */
int ld__resize_boxes(const ld_geometry *g, int src_w, int src_h, ld_box *boxes, uint32_t *m,
                     uint32_t *dropped, ld_err *e);
/* A box of a file_w x file_h image file (its stored pixels) as the image is displayed after
 * EXIF orientation 1..8 (ld__image_orient): 5..8 swap the axes. */
void ld__box_orient(ld_box *b, int orientation, int file_w, int file_h);

#endif /* LD_RESIZE_H */
