/*
 * The random resized crop (LD_R_RRC_W/H, LD_R_RRC_SCALE, LD_R_RRC_RATIO): torchvision's
 * RandomResizedCrop box rule, drawn from the sample's own generator, and the crop + resample
 * of one sample: encoded JPEGs through the box decoder (codec/jpeg_crop.c, only the box's
 * rows and columns at a reduced DCT scale), other images and raw samples from their full
 * pixels. Run in the worker threads; the result is an HWC uint8 image of the output size that
 * the usual transform (reader/xform.c: mirror, channel order, mean, scale, dtype, layout) then
 * writes into the batch.
 */
#ifndef LD_RRC_H
#define LD_RRC_H

#include "codec/codec.h"
#include "common/ld_internal.h"
#include "resize/resize.h"

typedef struct ld_rrc {
    int w, h;        /* output size; 0 = no random resized crop */
    double scale[2]; /* area fraction range */
    double ratio[2]; /* aspect ratio (w / h) range */
    int full_decode; /* 1 = decode whole images (the reference path) */
    int filter;      /* ld_filter (resize/resize.h) of the resampling */
    uint64_t seed;
} ld_rrc;

/* Per-thread scratch: the decoded (or interleaved raw) pixels, the resampled output and the
 * resampler's tables. */
typedef struct ld_rrc_scratch {
    ld_resizer *rs;
    ld_image src, out;
} ld_rrc_scratch;

/* The crop box (x, y, w, h) of sample `index` of `epoch` in a src_w x src_h image:
 * torchvision's RandomResizedCrop.get_params (up to 10 draws of an area fraction, uniform in
 * scale, and an aspect ratio, log-uniform in ratio, rounded half to even as Python does; the
 * first that fits is placed uniformly; else the whole image, or its center cropped to the
 * nearest ratio bound). */
void ld__rrc_box(const ld_rrc *p, uint64_t epoch, uint64_t index, int src_w, int src_h, int box[4]);

/* Decode encoded sample `index` (buf, len; messages start with `name`) with o->channels and
 * o->max_pixels, crop its box and resample it to p->w x p->h into s->out. EXIF orientation is
 * applied first when o->apply_orientation (the box is in displayed pixels). */
int ld__rrc_encoded(const ld_rrc *p, ld_codec *codec, ld_rrc_scratch *s, const uint8_t *buf,
                    size_t len, const char *name, const ld_decode_opts *o, uint64_t epoch,
                    uint64_t index, ld_err *e);

/* The same for a raw uint8 sample stored planar (c x h x w at `chw`). */
int ld__rrc_raw(const ld_rrc *p, ld_rrc_scratch *s, const uint8_t *chw, int c, int h, int w,
                uint64_t epoch, uint64_t index, ld_err *e);

void ld__rrc_scratch_free(ld_rrc_scratch *s);

#endif /* LD_RRC_H */
