/*
 * libFuzzer target: JPEG header parsing and decoding (all scales, gray and RGB, EXIF
 * orientation) through the codec's public-internal API. Output pixels are all read so that
 * MemorySanitizer/ASan see any uninitialised or out-of-bounds row.
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
    ld__img_info(c, data, size, "fuzz.jpg", &info, &e);
    /* The last input byte picks the options, so the fuzzer explores them too. */
    const uint8_t k = size ? data[size - 1] : 0;
    ld_decode_opts o = {
        .channels = (k & 1) ? 1 : 3,
        .max_pixels = 1u << 20, /* ~1 Mpx keeps each run fast, like TurboJPEG's fuzzers */
        .min_w = (k & 2) ? (k >> 2) : 0,
        .min_h = (k & 2) ? (k >> 3) : 0,
        .apply_orientation = 1,
    };
    if (ld__img_decode(c, data, size, "fuzz.jpg", &o, &im, &e) == LD_OK)
        sink += fuzz_sum_pixels(&im);
    /* Second decode with the same handle: exercises reuse after success or error. */
    o.channels = 4 - o.channels;
    o.min_w = o.min_h = 0;
    if (ld__img_decode(c, data, size, "fuzz.jpg", &o, &im, &e) == LD_OK)
        sink += fuzz_sum_pixels(&im);
    (void)sink;
    ld__image_free(&im);
    ld__codec_free(c);
    return 0;
}
