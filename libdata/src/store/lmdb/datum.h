/*
 * A hand-written proto2 codec for the two Caffe messages libdata needs:
 *
 *   message Datum {                      message BlobProto {
 *     optional int32 channels = 1;         optional int32 num = 1;  channels = 2;
 *     optional int32 height = 2;           optional int32 height = 3;  width = 4;
 *     optional int32 width = 3;            repeated float data = 5 [packed = true];
 *     optional bytes data = 4;             optional BlobShape shape = 7;   (dim = 1, int64)
 *     optional int32 label = 5;          }
 *     repeated float float_data = 6;
 *     optional bool encoded = 7 [default = false];
 *   }
 *
 * Why by hand: two flat messages do not justify a protobuf runtime dependency, and a small
 * decoder that borrows the `data` bytes straight out of an LMDB page (no copy) is what the
 * reader wants. The encoder writes fields in field-number order, exactly as protobuf's own
 * serializer does, so our bytes equal protobuf's for the same message (tests check this with
 * python3-protobuf).
 *
 * The decoder is strict where protobuf is strict and lenient where protobuf is lenient:
 *  - malformed varints (more than 10 bytes), lengths past the end, field number 0, and a
 *    known field with the wrong wire type are LD_EFORMAT;
 *  - unknown fields are skipped (wire types 0, 1, 2, 5); groups (3, 4) are rejected;
 *  - repeated floats are accepted both non-packed (Caffe's Datum) and packed (BlobProto);
 *  - int32 fields keep the low 32 bits of the varint (protobuf's behaviour), a later
 *    occurrence of an optional field overrides an earlier one (protobuf's "last one wins").
 * Every length is checked against what is left before it is used; no allocation depends on
 * a length that has not been checked against the input size.
 */
#ifndef LD_DATUM_H
#define LD_DATUM_H

#include "common/ld_internal.h"

/* A decoded Datum. `data` borrows from the input buffer (valid while it is). Float data,
 * when present, is copied into the caller's ld_buf as host floats (`floats`). */
typedef struct ld_datum {
    int32_t channels, height, width, label;
    int encoded;         /* 0 or 1 */
    unsigned has;        /* LD_DATUM_HAS_* bits: which fields were present */
    const uint8_t *data; /* NULL when absent */
    size_t data_len;
    const float *floats; /* into the floats buffer given to decode; NULL when none */
    size_t n_floats;     /* counted even when no buffer was given */
} ld_datum;

enum {
    LD_DATUM_HAS_CHANNELS = 1u << 1,
    LD_DATUM_HAS_HEIGHT = 1u << 2,
    LD_DATUM_HAS_WIDTH = 1u << 3,
    LD_DATUM_HAS_DATA = 1u << 4,
    LD_DATUM_HAS_LABEL = 1u << 5,
    LD_DATUM_HAS_FLOATS = 1u << 6,
    LD_DATUM_HAS_ENCODED = 1u << 7
};

/* Encode a Datum at the end of `out` (appended: out->len grows by the message size). Writes
 * channels, height, width, data, label and encoded (always, also when false: NVIDIA DALI
 * treats a missing `encoded` as true), then float_data non-packed if n_floats > 0, in
 * field-number order. LD_OK or LD_ENOMEM. */
int ld__datum_encode(const ld_datum *d, ld_buf *out);

/* Decode a Datum from p[0..n). `floats` receives float_data (may be NULL: the floats are then
 * only counted). LD_OK or LD_EFORMAT with a message that starts with `name` (e.g. the key)
 * and gives the byte offset. `d->data` points into p. */
int ld__datum_decode(const uint8_t *p, size_t n, ld_datum *d, ld_buf *floats, const char *name,
                     ld_err *e);

/* Limits for validation: a record bigger than this in any dimension is refused, whatever
 * its byte count says (protects consumers that allocate c*h*w from the header). */
#define LD_DATUM_MAX_DIM 65536
#define LD_DATUM_MAX_CHANNELS 4096

/* Check that a decoded Datum describes a usable image:
 *  - encoded: data present and non-empty (shape fields, when set, must be >= 0);
 *  - raw: channels, height, width in 1..LD_DATUM_MAX_*, and channels*height*width equal to
 *    data_len (8-bit) or, when there are no bytes, to n_floats.
 * LD_OK or LD_EFORMAT naming `name` and the mismatch. */
int ld__datum_validate(const ld_datum *d, const char *name, ld_err *e);

/* BlobProto as Caffe's compute_image_mean writes it (num, channels, height, width, packed
 * data) so that the Data layer's `mean_file` and caffe.io.blobproto_to_array read it.
 * Writes exactly num=1 .. width and `data`, no `shape` (compute_image_mean does the same;
 * Blob::FromProto prefers the legacy fields when present). */
int ld__blobproto_encode(int channels, int height, int width, const float *data, ld_buf *out);

/* Decode a BlobProto: shape from the legacy fields when any is present, else from `shape`
 * (which must then have 1..4 dims, read as (num, channels, height, width) right-aligned);
 * `data` (packed or not) copied into `floats` as host floats. The element count must equal
 * num*channels*height*width. LD_OK, LD_EFORMAT (message starts with name), LD_ENOMEM. */
int ld__blobproto_decode(const uint8_t *p, size_t n, int *num, int *channels, int *height,
                         int *width, ld_buf *floats, const char *name, ld_err *e);

#endif /* LD_DATUM_H */
