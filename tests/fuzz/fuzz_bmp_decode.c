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
    fuzz_decode(data, size, "fuzz.bmp");
    return 0;
}
