/*
 * libFuzzer target: TIFF header parsing and decoding, gray and RGB output (first page of multi-page
 * files; stripped 8/16-bit files through our row path, tiles, planar, YCbCr/JPEG and the rest
 * through libtiff's RGBA interface; the orientation tag). Pixels capped at 1 Mpx, as the other
 * decode targets; every output byte is read.
 */
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decode(data, size, "fuzz.tiff");
    return 0;
}
