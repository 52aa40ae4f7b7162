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

#endif /* LD_JPEG_INT_H */
