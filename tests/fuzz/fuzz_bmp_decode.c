/*
 * libFuzzer target: BMP header parsing and decoding, gray and RGB output (our own parser: core and
 * info headers, palettes, bit fields, RLE8/RLE4, top-down rows). Pixels capped at 1 Mpx, as the
 * other decode targets; every output byte is read.
 */
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ld_codec *c = ld__codec_create();
    if (!c) return 0;
    ld_err e;
    ld_img_info info;
    ld_image im = {0};
    volatile unsigned sink = 0;
    ld__img_info(c, data, size, "fuzz.bmp", &info, &e);
    for (int ch = 1; ch <= 3; ch += 2) {
        const ld_decode_opts o = {
            .channels = ch, .max_pixels = 1u << 20, .apply_orientation = ch == 3};
        if (ld__img_decode(c, data, size, "fuzz.bmp", &o, &im, &e) == LD_OK)
            sink += fuzz_sum_pixels(&im) + (unsigned)ld__codec_frames(c);
    }
    (void)sink;
    ld__image_free(&im);
    ld__codec_free(c);
    return 0;
}
