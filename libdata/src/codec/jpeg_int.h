/*
 * Private to libdata/src/codec: jpeg_dec.c's decompressor (struct ld_jdec: one
 * jpeg_decompress_struct per ld_codec, its error manager that turns every corrupt-data warning
 * into an error, and fresh tables for every file) for the other JPEG decoders (jpeg_crop.c).
 *
 * Use: d = ld__jdec_get(c); if (setjmp(*ld__jdec_jmp(d))) { error: ld__jdec_msg(d) };
 * j = ld__jdec_header(d, buf, len); ... jpeg_* calls under that setjmp ...; after a failure
 * jpeg_abort_decompress(j) puts the struct back to idle for the next image.
 */
#ifndef LD_JPEG_INT_H
#define LD_JPEG_INT_H

#include <setjmp.h>
#include <stdio.h> /* jpeglib.h needs FILE */

#include <jpeglib.h>

#include "codec/codec_int.h"

/* The codec's decompressor, created on first use; NULL when out of memory. */
struct ld_jdec *ld__jdec_get(ld_codec *c);
/* The jump buffer libjpeg's errors longjmp to (the message is then ld__jdec_msg). */
jmp_buf *ld__jdec_jmp(struct ld_jdec *d);
/* Read the header of buf (state READY). Under the caller's setjmp. */
j_decompress_ptr ld__jdec_header(struct ld_jdec *d, const uint8_t *buf, size_t len);
const char *ld__jdec_msg(const struct ld_jdec *d);
/* EXIF orientation 1..8 of the file whose header was read (1 when absent). */
int ld__jdec_orientation(struct ld_jdec *d);

/* jpeg_splice.c: for j, whose header was read from buf (len bytes), build in `out` a JPEG of
 * only the restart segments covering box (x, y, w, h; inside the image), with sub = the
 * sub-image's place (x, y, w, h) in the image, and return 1; 0 when the file does not allow
 * it (the caller decodes the original instead); LD_ENOMEM. `segs` is scratch. */
int ld__jpeg_splice(j_decompress_ptr j, const uint8_t *buf, size_t len, const int box[4],
                    ld_buf *out, ld_buf *segs, int sub[4]);

#endif /* LD_JPEG_INT_H */
