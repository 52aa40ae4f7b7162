/*
 * libFuzzer target: GIF header parsing and decoding, gray and RGB output (the first frame,
 * interlaced or not, on its logical screen; the frame count walks the rest). Pixels capped at 1
 * Mpx, as the other decode targets; every output byte is read.
 */
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decode(data, size, "fuzz.gif");
    return 0;
}
