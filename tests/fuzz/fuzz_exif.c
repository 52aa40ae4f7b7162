/*
 * libFuzzer target: the EXIF orientation parser (codec/exif.c) on an APP1 payload, the bytes
 * after the marker length. It must return 1..8 for anything and never read outside the input.
 * A second call on a copy shorter by one byte checks that a truncated TIFF header or IFD is
 * handled as "absent" (the exact-size copy makes ASan see a read past the end).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int o = ld__exif_orientation(data, size);
    if (o < 1 || o > 8) abort();
    if (size > 1) {
        uint8_t *cut = malloc(size - 1);
        if (!cut) return 0;
        memcpy(cut, data, size - 1);
        o = ld__exif_orientation(cut, size - 1);
        free(cut);
        if (o < 1 || o > 8) abort();
    }
    return 0;
}
