/*
 * Detection boxes through the converter's geometry (issue 28): ld__box_orient and
 * ld__resize_boxes, checked against the pixels themselves. A box is painted into an image
 * (a mask of 1s on 0); the image goes through the code that moves pixels (ld__image_orient,
 * ld__resize_nearest with the same geometry); the painted pixels' bounding rectangle must be
 * where the box code puts the box, within the one pixel that nearest sampling can move an
 * edge by.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "codec/codec.h"
#include "libdata/types.h"
#include "resize/resize.h"

/* An image of w x h with the box's pixels [x1, x2) x [y1, y2) set to 1. */
static void paint(ld_image *im, int w, int h, const ld_box *b)
{
    cr_assert_eq(ld__image_alloc(im, w, h, 1), LD_OK);
    memset(im->px, 0, (size_t)w * h);
    for (int y = (int)b->y1; y < (int)b->y2; y++)
        for (int x = (int)b->x1; x < (int)b->x2; x++)
            im->px[(size_t)y * w + x] = 1;
}

/* The bounding rectangle of the 1s of a w x h plane, as a box; 0 when there is none. */
static int bounds(const uint8_t *px, int w, int h, ld_box *b)
{
    int x1 = w, y1 = h, x2 = -1, y2 = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (px[(size_t)y * w + x] == 1) {
                x1 = x < x1 ? x : x1, x2 = x > x2 ? x : x2;
                y1 = y < y1 ? y : y1, y2 = y > y2 ? y : y2;
            }
    *b = (ld_box){(float)x1, (float)y1, (float)x2 + 1, (float)y2 + 1, 0, 0};
    return x2 >= 0;
}

Test(boxes, orientation_moves_a_box_as_the_pixels_move)
{
    const int w = 37, h = 23;
    const ld_box box = {5, 3, 19, 11, 7, LD_BOX_CROWD};
    for (int o = 1; o <= 8; o++) {
        ld_image im = {0}, tmp = {0};
        paint(&im, w, h, &box);
        cr_assert_eq(ld__image_orient(&im, o, &tmp), LD_OK);
        ld_box want, got = box;
        cr_assert(bounds(im.px, im.w, im.h, &want));
        ld__box_orient(&got, o, w, h);
        cr_assert(got.x1 == want.x1 && got.y1 == want.y1 && got.x2 == want.x2 && got.y2 == want.y2,
                  "orientation %d: box %g,%g-%g,%g, pixels %g,%g-%g,%g", o, got.x1, got.y1, got.x2,
                  got.y2, want.x1, want.y1, want.x2, want.y2);
        cr_assert(got.label == 7 && got.flags == LD_BOX_CROWD);
        ld__image_free(&im);
        ld__image_free(&tmp);
    }
}

Test(boxes, every_resize_mode_moves_a_box_as_nearest_moves_its_pixels)
{
    const int modes[] = {LD_RESIZE_SQUASH, LD_RESIZE_CROP, LD_RESIZE_PAD, LD_RESIZE_MAX};
    const int sizes[][2] = {{200, 120}, {90, 160}, {64, 64}};
    const ld_box boxes[] = {{20, 10, 140, 90, 0, 0}, {1, 1, 50, 40, 1, 0}, {30, 20, 60, 50, 2, 0}};
    for (size_t m = 0; m < 4; m++)
        for (size_t s = 0; s < 3; s++)
            for (size_t k = 0; k < 3; k++) {
                const int w = sizes[s][0], h = sizes[s][1];
                ld_box b = boxes[k];
                if (b.x2 > w || b.y2 > h) continue;
                const ld_geometry g = {.mode = modes[m], .w = 48, .h = 40};
                ld_image im = {0};
                paint(&im, w, h, &b);
                ld_buf out = {0};
                int ow, oh;
                ld_err e;
                cr_assert_eq(ld__resize_nearest(&im, &g, 0, &out, &ow, &oh, &e), LD_OK, "%s",
                             e.msg);
                ld_box want;
                uint32_t n = 1, dropped = 0;
                cr_assert_eq(ld__resize_boxes(&g, w, h, &b, &n, &dropped, &e), LD_OK, "%s", e.msg);
                if (!bounds(out.p, ow, oh, &want)) { /* cropped away: dropped too */
                    cr_assert(n == 0 && dropped == 1, "mode %d %dx%d box %zu", modes[m], w, h, k);
                } else {
                    cr_assert_eq(n, 1);
                    /* nearest takes the pixel under each output pixel's centre: an edge lands
                     * within one output pixel of the exact mapping */
                    cr_assert(fabsf(b.x1 - want.x1) <= 1 && fabsf(b.x2 - want.x2) <= 1 &&
                                  fabsf(b.y1 - want.y1) <= 1 && fabsf(b.y2 - want.y2) <= 1,
                              "mode %d, %dx%d, box %zu: %g,%g-%g,%g vs pixels %g,%g-%g,%g",
                              modes[m], w, h, k, b.x1, b.y1, b.x2, b.y2, want.x1, want.y1, want.x2,
                              want.y2);
                }
                ld__image_free(&im);
                ld__buf_free(&out);
            }
}

Test(boxes, a_crop_clips_and_drops)
{
    /* crop mode, 200 x 100 to 50 x 50: the middle 100 x 100 is kept, scaled by 1/2 */
    const ld_geometry g = {.mode = LD_RESIZE_CROP, .w = 50, .h = 50};
    ld_box b[4] = {{0, 0, 40, 40, 0, 0},      /* left of the crop: dropped */
                   {40, 10, 80, 30, 1, 0},    /* clipped at x = 50 -> 0 */
                   {60, 20, 100, 60, 2, 0},   /* inside: (5, 10) - (25, 30) */
                   {140, 0, 200, 100, 3, 0}}; /* clipped at x = 150: 2.5 px wide left */
    uint32_t n = 4, dropped = 0;
    ld_err e;
    cr_assert_eq(ld__resize_boxes(&g, 200, 100, b, &n, &dropped, &e), LD_OK);
    cr_assert(n == 3 && dropped == 1);
    cr_assert(b[0].label == 1 && b[0].x1 == 0 && b[0].x2 == 15 && b[0].y1 == 5 && b[0].y2 == 15);
    cr_assert(b[1].label == 2 && b[1].x1 == 5 && b[1].x2 == 25 && b[1].y1 == 10 && b[1].y2 == 30);
    cr_assert(b[2].label == 3 && b[2].x1 == 45 && b[2].x2 == 50);
}
