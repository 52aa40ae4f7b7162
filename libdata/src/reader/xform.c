/*
 * The transform loop. Work is organised by output row so that the source and destination of
 * each inner loop are contiguous or constant-stride: NCHW output walks (channel, row) and
 * copies/reverses/converts one row; NHWC output walks rows and interleaves all channels of a
 * pixel at once (the usual planar -> interleaved transpose). Inner loops take restrict
 * pointers and unit or constant strides so the compiler can vectorize the common cases:
 * uint8 rows are memcpy, mirrored rows a reversed copy, float rows convert-subtract-multiply.
 * Measured on the 2-core test machine (3x224x224 samples, 2 threads, shuffled, samples/s):
 * NCHW uint8 63k (pread bound); with a generic strided loop NHWC uint8 was 19k, NHWC float 9k;
 * with these kernels NHWC uint8 26k, NHWC float 20k, NCHW float 28k.
 */
#include "reader/xform.h"

#include <math.h>
#include <string.h>

#include "libdata/reader.h"
#include "reader/sampler.h"

void ld__xform_init(ld_xform *x, int sh, int sw)
{
    x->plain = !x->out_f32 && !x->out_u16 && !x->nhwc && !x->mirror && !x->swap && x->oh == sh &&
               x->ow == sw && !x->mean_vals && !x->mean_img && x->scale == 1.0f;
}

/* One output row of one channel, NCHW (contiguous output). */
static void row_u8_u8(uint8_t *restrict o, const uint8_t *restrict r, size_t sx, int n, int mirror)
{
    if (sx == 1 && !mirror) {
        memcpy(o, r, (size_t)n);
    } else if (sx == 1) {
        /* reversed copy, 8 bytes at a time: a byte swap of a 64-bit word reverses it */
        int k = 0;
        for (; k + 8 <= n; k += 8) {
            uint64_t v;
            memcpy(&v, r + n - 8 - k, 8);
            v = __builtin_bswap64(v);
            memcpy(o + k, &v, 8);
        }
        for (; k < n; k++)
            o[k] = r[n - 1 - k];
    } else {
        const ptrdiff_t step = mirror ? -(ptrdiff_t)sx : (ptrdiff_t)sx;
        const uint8_t *p = mirror ? r + (size_t)(n - 1) * sx : r;
        for (int k = 0; k < n; k++, p += step)
            o[k] = *p;
    }
}

/* Value of source element k of a row (mirrored or not), as float. */
#define SRC_AT(r, et, sx, k)                                                                       \
    ((et) == LD_XE_F32   ? ((const float *)(r))[(size_t)(k) * (sx)]                                \
     : (et) == LD_XE_U16 ? (float)((const uint16_t *)(r))[(size_t)(k) * (sx)]                      \
                         : (float)((const uint8_t *)(r))[(size_t)(k) * (sx)])

/* Integer output (uint8 or uint16) from a uint16 or float source: exact or an error, never
 * clipped (1000 is not 255, 0.5 is not 0 or 1). */
static int int_row(const ld_xform *x, const ld_xsrc *s, const void *r, int mirror, void *o,
                   size_t ostride, uint64_t index, ld_err *e)
{
    const float top = x->out_u16 ? 65535.0f : 255.0f;
    for (int k = 0; k < x->ow; k++) {
        const float v = SRC_AT(r, s->et, s->sx, mirror ? x->ow - 1 - k : k);
        if (!(v >= 0.0f && v <= top && v == floorf(v)))
            return (ld__err(e, LD_EINVAL,
                            "sample %llu: %s holds the value %.9g, which %s output cannot hold "
                            "(whole numbers 0 to %.0f); read pixels as float32 (dtype float32%s)",
                            (unsigned long long)index, x->what ? x->what : "the data", (double)v,
                            x->out_u16 ? "uint16" : "uint8", (double)top,
                            s->et == LD_XE_U16 ? ", or uint16: the stored values" : ""),
                    ld__err_where(e, NULL, (int64_t)index), ld__err_param(e, LD_R_DTYPE));
        if (x->out_u16)
            ((uint16_t *)o)[k * ostride] = (uint16_t)v;
        else
            ((uint8_t *)o)[k * ostride] = (uint8_t)v;
    }
    return LD_OK;
}

void ld__xform_place(const ld_xform *x, int sh, int sw, uint64_t epoch, uint64_t index, int *yo,
                     int *xo, int *mirror)
{
    *yo = (sh - x->oh) / 2;
    *xo = (sw - x->ow) / 2;
    *mirror = 0;
    if (x->random_crop || x->mirror) {
        /* Draw in a fixed order from the sample's own generator: reproducible whatever
         * thread handles the sample. */
        ld_rng g = ld__rng_sample(x->seed, epoch, index);
        if (x->random_crop) {
            *yo = (int)ld__rng_below(&g, (uint64_t)(sh - x->oh + 1));
            *xo = (int)ld__rng_below(&g, (uint64_t)(sw - x->ow + 1));
        }
        if (x->mirror) *mirror = (int)(ld__rng_next(&g) >> 63);
    }
}

int ld__xform_apply(const ld_xform *x, const ld_xsrc *s, uint64_t epoch, uint64_t index, void *dst,
                    ld_err *e)
{
    const int c = x->c, oh = x->oh, ow = x->ow;
    if (s->h < oh || s->w < ow)
        return (ld__err(e, LD_EFORMAT, "sample %llu is %dx%d, smaller than the %dx%d crop",
                        (unsigned long long)index, s->w, s->h, ow, oh),
                ld__err_where(e, NULL, (int64_t)index));
    int yo, xo, mirror;
    ld__xform_place(x, s->h, s->w, epoch, index, &yo, &xo, &mirror);
    const int mfull = !(x->mh == oh && x->mw == ow); /* mean image of the source size */
    const int myo = mfull ? yo : 0, mxo = mfull ? xo : 0;
    const size_t esz = s->et == LD_XE_F32 ? 4 : s->et == LD_XE_U16 ? 2 : 1;
    const int u8_to_u8 = !x->out_f32 && !x->out_u16 && s->et == LD_XE_U8;
    const uint8_t *base = (const uint8_t *)s->p;
    /* Source row of output channel oc, output row y: a pointer to its first element. */
#define SROW(oc, y)                                                                                \
    (base + esz * ((size_t)(x->swap ? c - 1 - (oc) : (oc)) * s->sc + (size_t)((y) + yo) * s->sy +  \
                   (size_t)xo * s->sx))

    if (u8_to_u8 && !x->nhwc && c == 3 && s->sx == 3 && s->sc == 1) {
        /* interleaved (a decoded JPEG) -> planar, all three channels in one pass (the scalar
         * loop was 22 % of a q70 epoch) */
        const int ch[3] = {x->swap ? 2 : 0, 1, x->swap ? 0 : 2};
        ld__deinterleave3(base + (size_t)yo * s->sy + (size_t)xo * 3, s->sy, oh, ow, ch, mirror,
                          dst);
        return LD_OK;
    }
    if (u8_to_u8 && !x->nhwc) {
        for (int oc = 0; oc < c; oc++)
            for (int y = 0; y < oh; y++)
                row_u8_u8((uint8_t *)dst + ((size_t)oc * oh + y) * ow, SROW(oc, y), s->sx, ow,
                          mirror);
        return LD_OK;
    }
    if (u8_to_u8 && c == 3 && s->sx == 1) {
        /* planar -> interleaved, three channels */
        for (int y = 0; y < oh; y++) {
            const uint8_t *restrict r0 = SROW(0, y), *restrict r1 = SROW(1, y),
                                    *restrict r2 = SROW(2, y);
            uint8_t *restrict o = (uint8_t *)dst + (size_t)y * ow * 3;
            if (!mirror) {
                for (int k = 0; k < ow; k++) {
                    o[3 * k] = r0[k];
                    o[3 * k + 1] = r1[k];
                    o[3 * k + 2] = r2[k];
                }
            } else {
                for (int k = 0; k < ow; k++) {
                    o[3 * k] = r0[ow - 1 - k];
                    o[3 * k + 1] = r1[ow - 1 - k];
                    o[3 * k + 2] = r2[ow - 1 - k];
                }
            }
        }
        return LD_OK;
    }
    /* Everything else: float output (mean, scale), float input, interleaved sources, other
     * channel counts. One output row of one channel at a time; the output stride is 1 (NCHW)
     * or c (NHWC). */
    const size_t ostride = x->nhwc ? (size_t)c : 1;
    for (int oc = 0; oc < c; oc++) {
        for (int y = 0; y < oh; y++) {
            const void *r = SROW(oc, y);
            const size_t obase = x->nhwc ? (size_t)y * ow * c + oc : ((size_t)oc * oh + y) * ow;
            const float mv = x->mean_vals ? x->mean_vals[oc] : 0.0f, sc = x->scale;
            const float *mrow =
                x->mean_img ? x->mean_img + ((size_t)oc * x->mh + y + myo) * x->mw + mxo : NULL;
            if (x->out_u16 && s->et != LD_XE_F32) { /* uint8 or uint16 values as uint16 */
                uint16_t *o = (uint16_t *)dst + obase;
                for (int k = 0; k < ow; k++) {
                    const size_t sk = (size_t)(mirror ? ow - 1 - k : k) * s->sx;
                    o[k * ostride] =
                        s->et == LD_XE_U16 ? ((const uint16_t *)r)[sk] : ((const uint8_t *)r)[sk];
                }
                continue;
            }
            if (!x->out_f32) {
                uint8_t *o = (uint8_t *)dst + obase;
                if (s->et == LD_XE_U8) {
                    const uint8_t *ru = r;
                    for (int k = 0; k < ow; k++)
                        o[k * ostride] = ru[(size_t)(mirror ? ow - 1 - k : k) * s->sx];
                } else {
                    void *ob = x->out_u16 ? (void *)((uint16_t *)dst + obase) : (void *)o;
                    const int rc = int_row(x, s, r, mirror, ob, ostride, index, e);
                    if (rc < 0) return rc;
                }
                continue;
            }
            float *restrict o = (float *)dst + obase;
            if (s->et == LD_XE_U8 && s->sx == 1 && ostride == 1 && !mirror && !mrow) {
                const uint8_t *restrict ru = r;
                for (int k = 0; k < ow; k++)
                    o[k] = ((float)ru[k] - mv) * sc;
            } else if (s->et == LD_XE_U8 && s->sx == 1 && !mrow) {
                const uint8_t *restrict ru = r;
                for (int k = 0; k < ow; k++)
                    o[k * ostride] = ((float)ru[mirror ? ow - 1 - k : k] - mv) * sc;
            } else {
                /* the mean image is indexed at the source pixel (before mirroring) */
                for (int k = 0; k < ow; k++) {
                    const int sk = mirror ? ow - 1 - k : k;
                    o[k * ostride] = (SRC_AT(r, s->et, s->sx, sk) - (mrow ? mrow[sk] : mv)) * sc;
                }
            }
        }
    }
#undef SROW
    return LD_OK;
}
