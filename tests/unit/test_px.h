/* Fixture images for the resize tests: a .px file (tests/data/fixtures_resize.py) is "LDPX",
 * then uint32 little-endian width, height, channels, then the interleaved pixels. */
#ifndef LD_TEST_PX_H
#define LD_TEST_PX_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "resize/resize.h"

/* Load `path` into a newly allocated `im`: 0, or -1 when it is missing or not a .px file. */
static int load_px(const char *path, ld_image *im)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char hdr[16];
    int ok = fread(hdr, 1, 16, f) == 16 && memcmp(hdr, "LDPX", 4) == 0;
    uint32_t d[3] = {0, 0, 0};
    for (int i = 0; ok && i < 3; i++)
        d[i] = hdr[4 + 4 * i] | hdr[5 + 4 * i] << 8 | hdr[6 + 4 * i] << 16 |
               (uint32_t)hdr[7 + 4 * i] << 24;
    ok = ok && ld__image_alloc(im, (int)d[0], (int)d[1], (int)d[2]) == LD_OK;
    ok = ok && fread(im->px, 1, (size_t)d[0] * d[1] * d[2], f) == (size_t)d[0] * d[1] * d[2];
    fclose(f);
    return ok ? 0 : -1;
}

#endif /* LD_TEST_PX_H */
