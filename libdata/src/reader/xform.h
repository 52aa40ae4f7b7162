/*
 * Per-sample transforms, run in the worker threads: crop (center or random), mirror, channel
 * swap, mean subtraction and scaling, and the conversion to the output dtype and layout, in one
 * pass from the stored sample to its slot in the batch. Caffe's DataTransformer order:
 * crop -> mirror -> (value - mean) * scale; the mean image is aligned with the source pixels
 * (before mirroring), as in Caffe.
 */
#ifndef LD_XFORM_H
#define LD_XFORM_H

#include "common/ld_internal.h"

typedef struct ld_xform {
    int out_f32; /* 1 = float32 output, 0 = uint8 (or uint16: out_u16) */
    int out_u16; /* 1 = uint16 output (the stored values, unchanged) */
    int nhwc;    /* 1 = NHWC output, 0 = NCHW */
    int c;       /* channels */
    int oh, ow;  /* output (crop) size */
    int random_crop, mirror, swap;
    uint64_t seed;
    const float *mean_vals; /* c values (output channel order) or NULL */
    const float *mean_img;  /* c*mh*mw (output channel order) or NULL */
    int mh, mw;             /* mean image size: the source size (offset with the crop) or the
                               crop size */
    float scale;
    const char *what; /* the stored pixels, for messages ("dataset '/data'"); borrowed */
    int plain;        /* no transform at all: the output is the stored sample (set by
                         ld__xform_init) */
} ld_xform;

/* Decide whether the transform is the identity for samples of sh x sw (u8 source). */
void ld__xform_init(ld_xform *x, int sh, int sw);

/* The source of one sample: element type and strides (in elements) of its c, y, x axes, so
 * planar CHW (stored raw samples) and interleaved HWC (decoded images) are handled alike. */
typedef struct ld_xsrc {
    const void *p;
    int et; /* element type: LD_XE_U8, LD_XE_F32 or LD_XE_U16 */
    int h, w;
    size_t sc, sy, sx;
} ld_xsrc;
enum { LD_XE_U8 = 0, LD_XE_F32 = 1, LD_XE_U16 = 2 };

/* Where the crop of sample `index` of `epoch` lies in its sh x sw source (top-left yo, xo) and
 * whether it is mirrored: the draws ld__xform_apply makes (the boxes follow them). */
void ld__xform_place(const ld_xform *x, int sh, int sw, uint64_t epoch, uint64_t index, int *yo,
                     int *xo, int *mirror);

/* Transform sample `index` of `epoch` into dst (c*oh*ow elements of the output type).
 * LD_OK, LD_EFORMAT when the source is smaller than the crop, or LD_EINVAL when a source value
 * does not fit an integer output (not a whole number in 0..255 for uint8, 0..65535 for uint16;
 * messages name the sample). */
int ld__xform_apply(const ld_xform *x, const ld_xsrc *src, uint64_t epoch, uint64_t index,
                    void *dst, ld_err *e);

#endif /* LD_XFORM_H */
