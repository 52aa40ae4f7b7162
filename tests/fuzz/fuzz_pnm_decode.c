/*
 * libFuzzer target: PNM header parsing and decoding, gray and RGB output (our own parser: P1..P6,
 * ASCII and binary, maxval 1..65535). Pixels capped at 1 Mpx, as the other decode targets; every
 * output byte is read.
 */
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decode(data, size, "fuzz.pnm");
    return 0;
}
