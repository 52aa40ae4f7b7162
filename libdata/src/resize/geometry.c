/*
 * Resize geometry: turn (mode, W, H, source size) into a plan the resampler executes.
 *
 * Every mode is expressed as "resample this source rectangle to scaled_w x scaled_h and put
 * it at (off_x, off_y) in an out_w x out_h canvas". CROP keeps its crop in *source*
 * coordinates (fractional), so the resampler only reads the pixels that survive the crop and
 * the result equals "scale to cover, then center-crop" without an intermediate image.
 */
#include "resize/resize.h"

#include <math.h>
#include <string.h>

#include "libdata/libdata.h"

#define LD_RESIZE_MAX_SIDE 65535

/* round(a * b / c) for positive operands, at least 1: scaled sizes keep at least one pixel
 * even for extreme aspect ratios (1 x 1000 squeezed to 224 wide). */
static int round_ratio(int64_t a, int64_t b, int64_t c)
{
    int64_t v = (2 * a * b + c) / (2 * c);
    return v < 1 ? 1 : (int)v;
}

static void plan_identity(int src_w, int src_h, ld_resize_plan *p)
{
    p->crop_x = p->crop_y = 0.0;
    p->crop_w = src_w;
    p->crop_h = src_h;
    p->scaled_w = p->out_w = src_w;
    p->scaled_h = p->out_h = src_h;
    p->off_x = p->off_y = 0;
    p->identity = 1;
}

/* ld_geometry.rect: the given source rectangle to w x h. */
static int plan_rect(const ld_geometry *g, int src_w, int src_h, ld_resize_plan *p, ld_err *e)
{
    int rc = LD_OK;
    LD_CHECK(e,
             g->rx >= 0 && g->ry >= 0 && g->rw > 0 && g->rh > 0 && g->rx + g->rw <= src_w + 1e-9 &&
                 g->ry + g->rh <= src_h + 1e-9 && g->w > 0 && g->h > 0,
             LD_EINVAL, "resize: rectangle %g,%g %gx%g of the %dx%d image to %dx%d: not inside",
             g->rx, g->ry, g->rw, g->rh, src_w, src_h, g->w, g->h);
    p->crop_x = g->rx;
    p->crop_y = g->ry;
    p->crop_w = g->rw;
    p->crop_h = g->rh;
    p->scaled_w = p->out_w = g->w;
    p->scaled_h = p->out_h = g->h;
    p->off_x = p->off_y = 0;
    p->identity = g->w == src_w && g->h == src_h && g->rx == 0.0 && g->ry == 0.0 &&
                  g->rw == src_w && g->rh == src_h;
fail:
    return rc;
}

int ld__resize_plan(const ld_geometry *g, int src_w, int src_h, ld_resize_plan *p, ld_err *e)
{
    int rc = LD_OK;
    const int w = g->w, h = g->h;
    LD_CHECK(e, src_w > 0 && src_h > 0, LD_EINVAL, "resize: invalid source size %dx%d", src_w,
             src_h);
    LD_CHECK(e, w >= 0 && h >= 0 && w <= LD_RESIZE_MAX_SIDE && h <= LD_RESIZE_MAX_SIDE, LD_EINVAL,
             "resize: target size %dx%d out of range (each side 0..%d)", w, h, LD_RESIZE_MAX_SIDE);
    LD_CHECK(e, g->mode >= LD_RESIZE_SQUASH && g->mode <= LD_RESIZE_MAX, LD_EINVAL,
             "resize: unknown resize mode %d (not an ld_resize_mode)", g->mode);

    plan_identity(src_w, src_h, p);
    if (g->rect) return plan_rect(g, src_w, src_h, p, e);
    if (w == 0 && h == 0) return LD_OK;
    /* MAX only needs a bound on the longer side; the others need both sides. */
    LD_CHECK(e, g->mode == LD_RESIZE_MAX || (w > 0 && h > 0), LD_EINVAL,
             "resize: target %dx%d: this mode needs both width and height (or both 0 for no "
             "resize)",
             w, h);

    switch (g->mode) {
    case LD_RESIZE_SQUASH:
        p->scaled_w = p->out_w = w;
        p->scaled_h = p->out_h = h;
        break;
    case LD_RESIZE_CROP:
        /* Scale s = max(w/src_w, h/src_h); the limiting axis uses the whole source, the other
         * keeps w/s (or h/s) source pixels around the center. The integer comparison decides
         * the limiting axis exactly, so a matching aspect crops nothing. */
        if ((int64_t)w * src_h >= (int64_t)h * src_w) {
            p->crop_h = (double)h * src_w / w;
            p->crop_y = (src_h - p->crop_h) / 2.0;
        } else {
            p->crop_w = (double)w * src_h / h;
            p->crop_x = (src_w - p->crop_w) / 2.0;
        }
        p->scaled_w = p->out_w = w;
        p->scaled_h = p->out_h = h;
        break;
    case LD_RESIZE_PAD:
        if ((int64_t)w * src_h <= (int64_t)h * src_w) { /* width limits */
            p->scaled_w = w;
            p->scaled_h = round_ratio(src_h, w, src_w);
            if (p->scaled_h > h) p->scaled_h = h;
        } else {
            p->scaled_h = h;
            p->scaled_w = round_ratio(src_w, h, src_h);
            if (p->scaled_w > w) p->scaled_w = w;
        }
        p->out_w = w;
        p->out_h = h;
        p->off_x = (w - p->scaled_w) / 2;
        p->off_y = (h - p->scaled_h) / 2;
        break;
    case LD_RESIZE_MAX: {
        const int m = w > h ? w : h;
        if (src_w <= m && src_h <= m) return LD_OK; /* never enlarge */
        if (src_w >= src_h) {
            p->scaled_w = m;
            p->scaled_h = round_ratio(src_h, m, src_w);
        } else {
            p->scaled_h = m;
            p->scaled_w = round_ratio(src_w, m, src_h);
        }
        p->out_w = p->scaled_w;
        p->out_h = p->scaled_h;
        break;
    }
    }
    p->identity = p->out_w == src_w && p->out_h == src_h && p->scaled_w == src_w &&
                  p->scaled_h == src_h && p->crop_x == 0.0 && p->crop_y == 0.0 &&
                  p->crop_w == src_w && p->crop_h == src_h;
fail:
    return rc;
}

/* A DCT-scaled JPEG decode shrinks the whole image by M/8. The resampler wants at least two
 * source pixels per output pixel inside the crop rectangle (a 2x oversampling margin keeps
 * the Lanczos result close to resampling the full-size image), so the decoded image must be
 * at least 2 * scaled / (crop fraction) on each axis. */
void ld__resize_min_source(const ld_geometry *g, int src_w, int src_h, int *min_w, int *min_h)
{
    ld_resize_plan p;
    *min_w = *min_h = 0;
    if (ld__resize_plan(g, src_w, src_h, &p, NULL) < 0 || p.identity) return;
    const double need_w = 2.0 * p.scaled_w * src_w / p.crop_w;
    const double need_h = 2.0 * p.scaled_h * src_h / p.crop_h;
    if (need_w >= src_w || need_h >= src_h) return; /* no shrink possible: full size */
    /* ceil, minus a hair so exact ratios computed in floating point do not round up */
    *min_w = (int)(need_w - 1e-9) + 1;
    *min_h = (int)(need_h - 1e-9) + 1;
}

/* Nearest neighbour: output pixel (x, y) of the scaled area takes the source pixel under its
 * centre, floor(crop_x + (x + 0.5) * crop_w / scaled_w) clamped to the image (Pillow's
 * NEAREST on the same box); the rest of the canvas is `pad`. */
int ld__resize_nearest(const ld_image *src, const ld_geometry *g, unsigned pad, ld_buf *out,
                       int *out_w, int *out_h, ld_err *e)
{
    int rc = LD_OK;
    ld_resize_plan p;
    LD_CHECK(e, src->c == 1, LD_EINVAL, "resize: nearest takes one channel, not %d", src->c);
    const int c = ld__image_sample_bytes(src); /* bytes per index: 1 (uint8) or 2 (uint16) */
    LD_TRY(ld__resize_plan(g, src->w, src->h, &p, e));
    size_t n;
    LD_CHECK(e, ld__mul_size((size_t)p.out_w * c, (size_t)p.out_h, &n), LD_ELIMIT,
             "resize: %dx%d is too large", p.out_w, p.out_h);
    LD_CHECK(e, ld__buf_reserve(out, n) == LD_OK, LD_ENOMEM, "resize: out of memory (%zu bytes)",
             n);
    out->len = n;
    *out_w = p.out_w;
    *out_h = p.out_h;
    if (p.identity) {
        memcpy(out->p, src->px, n);
        return LD_OK;
    }
    if (p.scaled_w < p.out_w || p.scaled_h < p.out_h) {
        if (c == 1) {
            memset(out->p, (int)pad, n);
        } else {
            uint16_t *o = (uint16_t *)(void *)out->p;
            for (size_t i = 0; i < n / 2; i++)
                o[i] = (uint16_t)pad;
        }
    }
    const double fx = p.crop_w / p.scaled_w, fy = p.crop_h / p.scaled_h;
    for (int y = 0; y < p.scaled_h; y++) {
        int sy = (int)floor(p.crop_y + (y + 0.5) * fy);
        sy = sy < 0 ? 0 : sy >= src->h ? src->h - 1 : sy;
        const uint8_t *row = src->px + (size_t)sy * src->w * c;
        uint8_t *d = out->p + ((size_t)(y + p.off_y) * p.out_w + p.off_x) * c;
        for (int x = 0; x < p.scaled_w; x++) {
            int sx = (int)floor(p.crop_x + (x + 0.5) * fx);
            sx = sx < 0 ? 0 : sx >= src->w ? src->w - 1 : sx;
            memcpy(d + (size_t)x * c, row + (size_t)sx * c, (size_t)c);
        }
    }
fail:
    return rc;
}

void ld__box_orient(ld_box *b, int orientation, int file_w, int file_h)
{
    const float W = (float)file_w, H = (float)file_h;
    const float x1 = b->x1, y1 = b->y1, x2 = b->x2, y2 = b->y2;
    switch (orientation) { /* where a point (x, y) of the file lands in the displayed image */
    case 2: b->x1 = W - x2, b->x2 = W - x1; break;                                 /* (W - x, y) */
    case 3: b->x1 = W - x2, b->x2 = W - x1, b->y1 = H - y2, b->y2 = H - y1; break; /* 180 */
    case 4: b->y1 = H - y2, b->y2 = H - y1; break;                                 /* (x, H - y) */
    case 5: b->x1 = y1, b->x2 = y2, b->y1 = x1, b->y2 = x2; break;                 /* (y, x) */
    case 6: b->x1 = H - y2, b->x2 = H - y1, b->y1 = x1, b->y2 = x2; break;         /* (H - y, x) */
    case 7: b->x1 = H - y2, b->x2 = H - y1, b->y1 = W - x2, b->y2 = W - x1; break;
    case 8: b->x1 = y1, b->x2 = y2, b->y1 = W - x2, b->y2 = W - x1; break; /* (y, W - x) */
    default: break;
    }
}

/* Where source x lands: scaled from the crop rectangle to the scaled area at its offset. */
static float map_x(const ld_resize_plan *p, float x)
{
    return (float)((x - p->crop_x) * p->scaled_w / p->crop_w + p->off_x);
}

static float map_y(const ld_resize_plan *p, float y)
{
    return (float)((y - p->crop_y) * p->scaled_h / p->crop_h + p->off_y);
}

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int ld__resize_boxes(const ld_geometry *g, int src_w, int src_h, ld_box *boxes, uint32_t *m,
                     uint32_t *dropped, ld_err *e)
{
    int rc = LD_OK;
    ld_resize_plan p;
    LD_TRY(ld__resize_plan(g, src_w, src_h, &p, e));
    /* the image's pixels lie in the scaled area: boxes are clipped to it (pad mode's canvas
     * around it holds no object) */
    const float lx = (float)p.off_x, hx = (float)(p.off_x + p.scaled_w), ly = (float)p.off_y,
                hy = (float)(p.off_y + p.scaled_h);
    uint32_t kept = 0;
    for (uint32_t k = 0; k < *m; k++) {
        ld_box b = boxes[k];
        b.x1 = clampf(map_x(&p, b.x1), lx, hx);
        b.x2 = clampf(map_x(&p, b.x2), lx, hx);
        b.y1 = clampf(map_y(&p, b.y1), ly, hy);
        b.y2 = clampf(map_y(&p, b.y2), ly, hy);
        if (b.x2 > b.x1 && b.y2 > b.y1)
            boxes[kept++] = b;
        else
            ++*dropped;
    }
    *m = kept;
fail:
    return rc;
}
