/* Caffe Datum / BlobProto codec: round trips, byte equality with python3-protobuf, and the
 * malformed inputs the decoder must reject cleanly. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/lmdb/datum.h"

static ld_err err;

static int decode(const void *p, size_t n, ld_datum *d, ld_buf *fl)
{
    ld__err_clear(&err);
    return ld__datum_decode(p, n, d, fl, "key", &err);
}

Test(datum, raw_record_round_trips_with_every_field)
{
    uint8_t px[2 * 3 * 4];
    for (size_t i = 0; i < sizeof px; i++)
        px[i] = (uint8_t)(i * 11);
    ld_datum in = {
        .channels = 2, .height = 3, .width = 4, .label = 7, .data = px, .data_len = sizeof px};
    ld_buf b = {0}, fl = {0};
    cr_assert_eq(ld__datum_encode(&in, &b), LD_OK);
    ld_datum d;
    cr_assert_eq(decode(b.p, b.len, &d, &fl), LD_OK, "%s", err.msg);
    cr_assert_eq(d.channels, 2);
    cr_assert_eq(d.height, 3);
    cr_assert_eq(d.width, 4);
    cr_assert_eq(d.label, 7);
    cr_assert_eq(d.encoded, 0);
    cr_assert(d.has & LD_DATUM_HAS_ENCODED, "encoded=false must be written explicitly");
    cr_assert_eq(d.data_len, sizeof px);
    cr_assert_arr_eq(d.data, px, sizeof px);
    cr_assert_eq(ld__datum_validate(&d, "key", &err), LD_OK, "%s", err.msg);
    ld__buf_free(&b);
    ld__buf_free(&fl);
}

Test(datum, negative_label_is_a_ten_byte_varint_like_protobuf)
{
    ld_datum in = {.channels = 1,
                   .height = 1,
                   .width = 1,
                   .label = -3,
                   .data = (const uint8_t *)"x",
                   .data_len = 1};
    ld_buf b = {0};
    cr_assert_eq(ld__datum_encode(&in, &b), LD_OK);
    /* 3 one-byte int fields (2 bytes each) + data (3) + label (1 + 10) + encoded (2) */
    cr_assert_eq(b.len, 6 + 3 + 11 + 2);
    ld_datum d;
    cr_assert_eq(decode(b.p, b.len, &d, NULL), LD_OK, "%s", err.msg);
    cr_assert_eq(d.label, -3);
    ld__buf_free(&b);
}

/* Our bytes must equal what python3-protobuf serializes for the same message. */
Test(datum, bytes_equal_protobuf_serialization)
{
    uint8_t px[3 * 5 * 7];
    for (size_t i = 0; i < sizeof px; i++)
        px[i] = (uint8_t)(i * 37 + 1);
    ld_datum cases[] = {
        {.channels = 3,
         .height = 5,
         .width = 7,
         .label = 1234567,
         .data = px,
         .data_len = sizeof px},
        {.channels = 3,
         .height = 500,
         .width = 375,
         .label = -1,
         .encoded = 1,
         .data = px,
         .data_len = 20},
        {.channels = 0,
         .height = 0,
         .width = 0,
         .label = 0,
         .encoded = 1,
         .data = px,
         .data_len = 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ld_buf b = {0};
        cr_assert_eq(ld__datum_encode(&cases[c], &b), LD_OK);
        char path[] = "/tmp/ld_datum_XXXXXX";
        int fd = mkstemp(path);
        cr_assert(fd >= 0);
        FILE *f = fdopen(fd, "wb");
        fwrite(b.p, 1, b.len, f);
        fclose(f);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s %s/tests/python/lmdb_pb_equal.py %s %d %d %d %d %d %zu",
                 LD_PYTHON, LD_SOURCE_DIR, path, cases[c].channels, cases[c].height, cases[c].width,
                 cases[c].label, cases[c].encoded, cases[c].data_len);
        int st = system(cmd);
        unlink(path);
        cr_assert_eq(st, 0, "case %zu: protobuf serializes differently (status %d)", c, st);
        ld__buf_free(&b);
    }
}

Test(datum, float_data_is_read_packed_and_not_packed)
{
    /* channels=1 height=1 width=3, float_data 1.0 non-packed, then 2.0, 3.0 packed */
    const uint8_t msg[] = {0x08, 1, 0x10, 1, 0x18, 3,    0x35, 0, 0,    0x80, 0x3f,
                           0x32, 8, 0,    0, 0,    0x40, 0,    0, 0x40, 0x40};
    ld_datum d;
    ld_buf fl = {0};
    cr_assert_eq(decode(msg, sizeof msg, &d, &fl), LD_OK, "%s", err.msg);
    cr_assert_eq(d.n_floats, 3);
    cr_assert_float_eq(d.floats[0], 1.0f, 0);
    cr_assert_float_eq(d.floats[1], 2.0f, 0);
    cr_assert_float_eq(d.floats[2], 3.0f, 0);
    cr_assert_eq(ld__datum_validate(&d, "key", &err), LD_OK, "%s", err.msg);
    /* without a buffer they are only counted */
    cr_assert_eq(decode(msg, sizeof msg, &d, NULL), LD_OK, "%s", err.msg);
    cr_assert_eq(d.n_floats, 3);
    cr_assert_null(d.floats);
    ld__buf_free(&fl);
}

Test(datum, unknown_fields_of_every_wire_type_are_skipped)
{
    const uint8_t msg[] = {
        0x08, 1,                                /* channels=1 */
        0x48, 0x96, 0x01,                       /* field 9 varint */
        0x51, 1,    2,    3,   4,   5, 6, 7, 8, /* field 10 fixed64 */
        0x5a, 3,    'a',  'b', 'c',             /* field 11 bytes */
        0x65, 1,    2,    3,   4,               /* field 12 fixed32 */
        0x28, 9,                                /* label=9 */
    };
    ld_datum d;
    cr_assert_eq(decode(msg, sizeof msg, &d, NULL), LD_OK, "%s", err.msg);
    cr_assert_eq(d.channels, 1);
    cr_assert_eq(d.label, 9);
}

Test(datum, last_occurrence_of_a_field_wins)
{
    const uint8_t msg[] = {0x28, 1, 0x28, 2};
    ld_datum d;
    cr_assert_eq(decode(msg, sizeof msg, &d, NULL), LD_OK, "%s", err.msg);
    cr_assert_eq(d.label, 2);
}

static void expect_bad(const uint8_t *msg, size_t n, const char *what)
{
    ld_datum d;
    ld_buf fl = {0};
    int rc = decode(msg, n, &d, &fl);
    cr_assert_eq(rc, LD_EFORMAT, "%s: rc %d", what, rc);
    cr_assert(strstr(err.msg, "key") && strstr(err.msg, "malformed"), "%s: message '%s'", what,
              err.msg);
    ld__buf_free(&fl);
}

Test(datum, malformed_records_are_rejected_with_a_message)
{
    const uint8_t trunc_varint[] = {0x08, 0x80};
    expect_bad(trunc_varint, sizeof trunc_varint, "truncated varint");
    const uint8_t trunc_tag[] = {0x80};
    expect_bad(trunc_tag, sizeof trunc_tag, "truncated tag");
    const uint8_t long_varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    expect_bad(long_varint, sizeof long_varint, "11-byte varint");
    const uint8_t overflow_varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0x02};
    expect_bad(overflow_varint, sizeof overflow_varint, "varint over 64 bits");
    const uint8_t len_past[] = {0x22, 0x05, 1, 2};
    expect_bad(len_past, sizeof len_past, "data length past the end");
    const uint8_t huge_len[] = {0x22, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    expect_bad(huge_len, sizeof huge_len, "2^63 length");
    const uint8_t wrong_wt[] = {0x0d, 1, 0, 0, 0}; /* channels as fixed32 */
    expect_bad(wrong_wt, sizeof wrong_wt, "channels with wire type 5");
    const uint8_t data_varint[] = {0x20, 1}; /* data as varint */
    expect_bad(data_varint, sizeof data_varint, "data with wire type 0");
    const uint8_t enc_len[] = {0x3a, 0}; /* encoded as bytes */
    expect_bad(enc_len, sizeof enc_len, "encoded with wire type 2");
    const uint8_t float_varint[] = {0x30, 1};
    expect_bad(float_varint, sizeof float_varint, "float_data as varint");
    const uint8_t packed_odd[] = {0x32, 3, 0, 0, 0};
    expect_bad(packed_odd, sizeof packed_odd, "packed floats of 3 bytes");
    const uint8_t float_trunc[] = {0x35, 0, 0};
    expect_bad(float_trunc, sizeof float_trunc, "truncated fixed32 float");
    const uint8_t field0[] = {0x00, 1};
    expect_bad(field0, sizeof field0, "field number 0");
    const uint8_t group[] = {0x4b, 0x4c}; /* field 9 start/end group */
    expect_bad(group, sizeof group, "group");
    const uint8_t wt7[] = {0x4f};
    expect_bad(wt7, sizeof wt7, "wire type 7");
    const uint8_t skip_past[] = {0x49, 1, 2, 3}; /* unknown fixed64 truncated */
    expect_bad(skip_past, sizeof skip_past, "unknown fixed64 past the end");
}

Test(datum, validate_rejects_shape_mismatch_huge_and_negative_dims)
{
    ld_datum d = {.channels = 3,
                  .height = 2,
                  .width = 2,
                  .data = (const uint8_t *)"abcdefghijk",
                  .data_len = 11};
    cr_assert_eq(ld__datum_validate(&d, "00000001_a.jpg", &err), LD_EFORMAT);
    cr_assert(strstr(err.msg, "00000001_a.jpg") && strstr(err.msg, "11 bytes"), "%s", err.msg);
    d.data_len = 12;
    cr_assert_eq(ld__datum_validate(&d, "k", &err), LD_OK, "%s", err.msg);
    d.height = 1 << 30;
    d.width = 1 << 30;
    cr_assert_eq(ld__datum_validate(&d, "k", &err), LD_EFORMAT);
    cr_assert(strstr(err.msg, "bad shape"), "%s", err.msg);
    d.height = -2;
    d.width = 2;
    cr_assert_eq(ld__datum_validate(&d, "k", &err), LD_EFORMAT);
    ld_datum enc = {.encoded = 1};
    cr_assert_eq(ld__datum_validate(&enc, "k", &err), LD_EFORMAT);
    cr_assert(strstr(err.msg, "without image bytes"), "%s", err.msg);
    ld_datum none = {0};
    cr_assert_eq(ld__datum_validate(&none, "k", &err), LD_EFORMAT);
}

Test(datum, blobproto_round_trips_and_reads_shape_only_files)
{
    float v[2 * 3 * 4];
    for (int i = 0; i < 24; i++)
        v[i] = (float)i * 0.5f - 3.0f;
    ld_buf b = {0}, fl = {0};
    int n, c, h, w;
    cr_assert_eq(ld__blobproto_encode(2, 3, 4, v, &b), LD_OK);
    cr_assert_eq(ld__blobproto_decode(b.p, b.len, &n, &c, &h, &w, &fl, "m", &err), LD_OK, "%s",
                 err.msg);
    cr_assert(n == 1 && c == 2 && h == 3 && w == 4);
    cr_assert_eq(fl.len, sizeof v);
    cr_assert_arr_eq(fl.p, v, sizeof v);
    /* shape {dim: [1, 1, 2, 1]} packed, data non-packed 2 floats (what Blob::ToProto can give) */
    const uint8_t shaped[] = {0x3a, 6, 0x0a, 4,    1,    1, 2, 1, 0x2d,
                              0,    0, 0x80, 0x3f, 0x2d, 0, 0, 0, 0x40};
    cr_assert_eq(ld__blobproto_decode(shaped, sizeof shaped, &n, &c, &h, &w, &fl, "m", &err), LD_OK,
                 "%s", err.msg);
    cr_assert(n == 1 && c == 1 && h == 2 && w == 1, "%d %d %d %d", n, c, h, w);
    /* count mismatch */
    const uint8_t bad[] = {0x08, 1, 0x10, 3, 0x18, 1, 0x20, 1, 0x2d, 0, 0, 0x80, 0x3f};
    cr_assert_eq(ld__blobproto_decode(bad, sizeof bad, &n, &c, &h, &w, &fl, "m", &err), LD_EFORMAT);
    cr_assert(strstr(err.msg, "needs 3 values"), "%s", err.msg);
    ld__buf_free(&b);
    ld__buf_free(&fl);
}
