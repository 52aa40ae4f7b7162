/*
 * The transform loop. One output row at a time: the source row pointer is computed once,
 * and the inner loops are simple enough for the compiler to vectorize the common cases
 * (uint8 -> uint8 rows are memcpy; uint8 -> float32 rows are convert-subtract-multiply).
 */
#include "xform.h"

#include <math.h>
#include <string.h>

#include "sampler.h"

void ld__xform_init(ld_xform *x, int sh, int sw)
{
    x->plain = !x->out_f32 && !x->nhwc && !x->mirror && !x->swap && x->oh == sh &&
               x->ow == sw && !x->mean_vals && !x->mean_img && x->scale == 1.0f;
}

static inline uint8_t clamp_u8(float v)
{
    return v <= 0.0f ? 0 : v >= 255.0f ? 255 : (uint8_t)lrintf(v);
}

int ld__xform_apply(const ld_xform *x, const ld_xsrc *s, uint64_t epoch, uint64_t index,
                    void *dst, ld_err *e)
{
    const int c = x->c, oh = x->oh, ow = x->ow;
    if (s->h < oh || s->w < ow)
        return ld__err(e, LD_EFORMAT, "sample %llu is %dx%d, smaller than the %dx%d crop",
                       (unsigned long long)index, s->w, s->h, ow, oh);
    int yo = (s->h - oh) / 2, xo = (s->w - ow) / 2, mirror = 0;
    if (x->random_crop || x->mirror) {
        /* Draw in a fixed order from the sample's own generator: reproducible whatever
         * thread handles the sample. */
        ld_rng g = ld__rng_sample(x->seed, epoch, index);
        if (x->random_crop) {
            yo = (int)ld__rng_below(&g, (uint64_t)(s->h - oh + 1));
            xo = (int)ld__rng_below(&g, (uint64_t)(s->w - ow + 1));
        }
        if (x->mirror)
            mirror = (int)(ld__rng_next(&g) >> 63);
    }
    const size_t ostride = x->nhwc ? (size_t)c : 1;
    const int myo = x->mh == oh && x->mw == ow ? 0 : yo, mxo = x->mh == oh && x->mw == ow ? 0 : xo;
    for (int oc = 0; oc < c; oc++) {
        const int sc = x->swap ? c - 1 - oc : oc;
        for (int y = 0; y < oh; y++) {
            const size_t srow = (size_t)sc * s->sc + (size_t)(y + yo) * s->sy + (size_t)xo * s->sx;
            const size_t obase = x->nhwc ? ((size_t)y * ow) * c + oc : ((size_t)oc * oh + y) * ow;
            if (!x->out_f32) {
                uint8_t *o = (uint8_t *)dst + obase;
                if (!s->f32) {
                    const uint8_t *r = (const uint8_t *)s->p + srow;
                    if (!mirror && s->sx == 1 && ostride == 1)
                        memcpy(o, r, (size_t)ow);
                    else if (!mirror)
                        for (int k = 0; k < ow; k++)
                            o[k * ostride] = r[k * s->sx];
                    else
                        for (int k = 0; k < ow; k++)
                            o[k * ostride] = r[(size_t)(ow - 1 - k) * s->sx];
                } else {
                    const float *r = (const float *)s->p + srow;
                    for (int k = 0; k < ow; k++)
                        o[k * ostride] = clamp_u8(r[(size_t)(mirror ? ow - 1 - k : k) * s->sx]);
                }
                continue;
            }
            float *o = (float *)dst + obase;
            const float sc_ = x->scale;
            const float mv = x->mean_vals ? x->mean_vals[oc] : 0.0f;
            const float *mrow =
                x->mean_img ? x->mean_img + ((size_t)oc * x->mh + y + myo) * x->mw + mxo : NULL;
            if (!s->f32) {
                const uint8_t *r = (const uint8_t *)s->p + srow;
                if (!mirror && s->sx == 1 && ostride == 1 && !mrow) {
                    for (int k = 0; k < ow; k++)
                        o[k] = ((float)r[k] - mv) * sc_;
                } else {
                    for (int k = 0; k < ow; k++) {
                        const int sk = mirror ? ow - 1 - k : k;
                        const float m = mrow ? mrow[sk] : mv;
                        o[k * ostride] = ((float)r[(size_t)sk * s->sx] - m) * sc_;
                    }
                }
            } else {
                const float *r = (const float *)s->p + srow;
                for (int k = 0; k < ow; k++) {
                    const int sk = mirror ? ow - 1 - k : k;
                    const float m = mrow ? mrow[sk] : mv;
                    o[k * ostride] = (r[(size_t)sk * s->sx] - m) * sc_;
                }
            }
        }
    }
    return LD_OK;
}
