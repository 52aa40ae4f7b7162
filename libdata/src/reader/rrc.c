/*
 * Random resized crop: the box rule and the per-sample crop + resample (see rrc.h).
 *
 * Randomness. The box is drawn from its own stream of the sample's generator (seed mixed with
 * a constant), so the mirror bit, which xform.c draws from the plain stream, stays independent
 * of it, and both depend only on (seed, epoch, sample): the same for any thread count.
 *
 * Speed. A box decode (codec/jpeg_crop.c) reads the header once more after ld__img_info (a
 * few microseconds against ~1 ms for the pixels), then decodes the box's rows at the smallest
 * DCT scale n/8 that keeps the box at least the output size; the resampler then takes the
 * box, in fractional scaled coordinates, straight to the output size. Files with restart
 * markers (what dataconv --quality writes) are first cut down to the box's restart segments
 * (codec/jpeg_splice.c), so that only those are Huffman-decoded: on the --max-side 256
 * --quality 90 recipe, 238 instead of 282 us of CPU per sample (docs/cli.md).
 */
#include "reader/rrc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/libdata.h"
#include "reader/sampler.h"

#define RRC_STREAM 0x5252432d626f7821ull /* "RRC-box!": the box's generator stream */

/* Uniform in [a, b). */
static double uniform(ld_rng *g, double a, double b)
{
    const double u = (double)(ld__rng_next(g) >> 11) * (1.0 / 9007199254740992.0);
    return a + (b - a) * u;
}

void ld__rrc_box(const ld_rrc *p, uint64_t epoch, uint64_t index, int src_w, int src_h, int box[4])
{
    ld_rng g = ld__rng_sample(p->seed ^ RRC_STREAM, epoch, index);
    const double area = (double)src_w * src_h;
    const double lr0 = log(p->ratio[0]), lr1 = log(p->ratio[1]);
    for (int attempt = 0; attempt < 10; attempt++) {
        const double target = area * uniform(&g, p->scale[0], p->scale[1]);
        const double ar = exp(uniform(&g, lr0, lr1));
        /* Python's round(): half to even, which nearbyint() does in the default rounding
         * mode */
        const double fw = nearbyint(sqrt(target * ar)), fh = nearbyint(sqrt(target / ar));
        if (fw > 0 && fw <= src_w && fh > 0 && fh <= src_h) {
            const int w = (int)fw, h = (int)fh;
            box[1] = (int)ld__rng_below(&g, (uint64_t)(src_h - h + 1));
            box[0] = (int)ld__rng_below(&g, (uint64_t)(src_w - w + 1));
            box[2] = w;
            box[3] = h;
            return;
        }
    }
    /* Fallback: the center, at the ratio bound nearest the image's own ratio. */
    const double in_ratio = (double)src_w / src_h;
    int w = src_w, h = src_h;
    if (in_ratio < p->ratio[0]) {
        h = (int)nearbyint(w / p->ratio[0]);
    } else if (in_ratio > p->ratio[1]) {
        w = (int)nearbyint(h * p->ratio[1]);
    }
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    box[0] = (src_w - w) / 2;
    box[1] = (src_h - h) / 2;
    box[2] = w;
    box[3] = h;
}

/* Resample rectangle rect of s->src to the output size into s->out. */
static int resample(const ld_rrc *p, ld_rrc_scratch *s, const double rect[4], ld_err *e)
{
    const ld_geometry g = {.mode = LD_RESIZE_SQUASH,
                           .w = p->w,
                           .h = p->h,
                           .rect = 1,
                           .rx = rect[0],
                           .ry = rect[1],
                           .rw = rect[2],
                           .rh = rect[3],
                           .filter = p->filter};
    return ld__resize(s->rs, &s->src, &g, &s->out, e);
}

static int scratch_ready(ld_rrc_scratch *s, ld_err *e)
{
    if (!s->rs && !(s->rs = ld__resizer_create()))
        return ld__err(e, LD_ENOMEM, "out of memory for the resampler");
    return LD_OK;
}

int ld__rrc_encoded(const ld_rrc *p, ld_codec *codec, ld_rrc_scratch *s, const uint8_t *buf,
                    size_t len, const char *name, const ld_decode_opts *o, uint64_t epoch,
                    uint64_t index, ld_err *e)
{
    int rc = LD_OK;
    ld_img_info ii;
    int box[4];
    double rect[4];
    LD_TRY(scratch_ready(s, e));
    LD_TRY(ld__img_info(codec, buf, len, name, &ii, e));
    ld__rrc_box(p, epoch, index, ii.w, ii.h, box);
    rc = LD_ENOTSUP;
    if (!p->full_decode && ii.format == LD_IMG_JPEG) {
        ld_decode_opts bo = *o;
        bo.min_w = p->w;
        bo.min_h = p->h;
        rc = ld__jpeg_decode_box(codec, buf, len, name, &bo, box, &s->src, rect, e);
        if (rc < 0 && rc != LD_ENOTSUP) goto fail;
    }
    if (rc == LD_ENOTSUP) { /* whole image: PNG, EXIF-rotated or CMYK JPEG, rrc_full_decode */
        ld_decode_opts fo = *o;
        fo.min_w = fo.min_h = 0;
        LD_TRY(ld__img_decode(codec, buf, len, name, &fo, &s->src, e));
        LD_CHECK(e, s->src.w == ii.w && s->src.h == ii.h, LD_EFORMAT,
                 "%s: decodes to %dx%d, its header says %dx%d", name, s->src.w, s->src.h, ii.w,
                 ii.h);
        for (int k = 0; k < 4; k++)
            rect[k] = box[k];
    }
    LD_TRY(resample(p, s, rect, e));
fail:
    return rc;
}

int ld__rrc_raw(const ld_rrc *p, ld_rrc_scratch *s, const uint8_t *chw, int c, int h, int w,
                uint64_t epoch, uint64_t index, ld_err *e)
{
    int rc = LD_OK;
    int box[4];
    LD_TRY(scratch_ready(s, e));
    ld__rrc_box(p, epoch, index, w, h, box);
    /* Interleave the box (planar -> HWC, what the resampler takes). */
    rc = ld__image_alloc(&s->src, box[2], box[3], c);
    LD_CHECK(e, rc == LD_OK, rc, "sample %llu: cannot allocate a %dx%dx%d crop",
             (unsigned long long)index, box[2], box[3], c);
    const size_t plane = (size_t)h * w;
    for (int y = 0; y < box[3]; y++) {
        uint8_t *o = s->src.px + (size_t)y * box[2] * c;
        for (int ch = 0; ch < c; ch++) {
            const uint8_t *row = chw + ch * plane + (size_t)(box[1] + y) * w + box[0];
            for (int x = 0; x < box[2]; x++)
                o[(size_t)x * c + ch] = row[x];
        }
    }
    const double rect[4] = {0, 0, box[2], box[3]};
    LD_TRY(resample(p, s, rect, e));
fail:
    return rc;
}

void ld__rrc_scratch_free(ld_rrc_scratch *s)
{
    ld__resizer_free(s->rs);
    ld__image_free(&s->src);
    ld__image_free(&s->out);
    memset(s, 0, sizeof *s);
}
