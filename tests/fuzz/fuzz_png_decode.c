/*
 * libFuzzer target: PNG header parsing and decoding (gray and RGB output, 8 and 16-bit, every
 * colour type, bit depth and interlacing the input brings; RGB output also applies an eXIf
 * orientation: the chunk walk and the rotation), and the same bytes as a segmentation mask
 * (ld__png_decode_indices: palette indices, unscaled gray, 16-bit values checked or kept).
 * Every output byte is read.
 */
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decode(data, size, "fuzz.png");
    ld_codec *c = ld__codec_create();
    if (!c) return 0;
    ld_err e;
    ld_image im = {0};
    volatile unsigned sink = 0;
    for (int wide = 0; wide <= 1; wide++) /* uint8 and uint16 masks */
        if (ld__png_decode_indices(c, data, size, "fuzz.png", wide, 1u << 20, &im, &e) == LD_OK)
            sink += fuzz_sum_pixels(&im);
    (void)sink;
    ld__image_free(&im);
    ld__codec_free(c);
    return 0;
}
