/*
 * libFuzzer target: the random resized crop's JPEG box decoder (ld__jpeg_decode_box), whose
 * fast path cuts the box's restart segments out of the compressed data (codec/jpeg_splice.c)
 * and otherwise skips scanlines (codec/jpeg_crop.c). The seeds are small JPEGs written by our
 * encoder (restart markers every few MCUs, 4:4:4, 4:2:0 and gray), so mutations land in the
 * segment walk: RSTs out of sequence, missing, extra, stuffing, fill bytes, truncation. The
 * last four input bytes pick the box and the options; the output pixels are all read so that
 * ASan/MSan see any bad row.
 */
#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8) return 0;
    ld_codec *c = ld__codec_create();
    if (!c) return 0;
    ld_err e;
    ld_img_info info;
    ld_image im = {0};
    volatile unsigned sink = 0;
    const uint8_t *k = data + size - 4;
    if (ld__img_info(c, data, size, "fuzz.jpg", &info, &e) == LD_OK && info.w > 0 && info.h > 0 &&
        (uint64_t)info.w * info.h <= (1u << 20)) {
        int box[4];
        box[0] = (int)(k[0] * (unsigned)info.w / 256);
        box[1] = (int)(k[1] * (unsigned)info.h / 256);
        box[2] = 1 + (int)(k[2] * (unsigned)(info.w - box[0]) / 256);
        box[3] = 1 + (int)((k[3] & 0x3f) * (unsigned)(info.h - box[1]) / 64);
        const int min = (k[3] & 0x40) ? box[2] / 8 : 0;
        ld_decode_opts o = {
            .channels = (k[3] & 0x80) ? 1 : 3,
            .max_pixels = 1u << 20,
            .min_w = min,
            .min_h = min,
            .apply_orientation = 0,
        };
        double rect[4];
        if (ld__jpeg_decode_box(c, data, size, "fuzz.jpg", &o, box, &im, rect, &e) == LD_OK)
            sink += fuzz_sum_pixels(&im);
        /* again with the same handle, the whole image: reuse after success or error */
        const int all[4] = {0, 0, info.w, info.h};
        o.channels = 4 - o.channels;
        if (ld__jpeg_decode_box(c, data, size, "fuzz.jpg", &o, all, &im, rect, &e) == LD_OK)
            sink += fuzz_sum_pixels(&im);
    }
    (void)sink;
    ld__image_free(&im);
    ld__codec_free(c);
    return 0;
}
