/*
 * libFuzzer target: the Caffe Datum and BlobProto decoders (store/datum.c), i.e. what the
 * LMDB store runs on every record of a database it did not write.
 *
 * Properties checked beyond "no crash, no out-of-bounds read":
 *  - every byte of a decoded `data` field and every decoded float is read (so ASan/MSan see
 *    a view that points outside the input);
 *  - a record that decodes re-encodes, and the re-encoded bytes decode to the same fields
 *    (our encoder and decoder agree on everything the decoder accepts);
 *  - validate() never accepts a raw record whose shape does not match its payload.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/lmdb/datum.h"

static unsigned touch(const uint8_t *p, size_t n)
{
    unsigned s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

static void check_datum(const uint8_t *data, size_t size)
{
    ld_err e;
    ld_datum d, d2;
    ld_buf fl = {0}, fl2 = {0}, enc = {0};
    volatile unsigned sink = 0;
    if (ld__datum_decode(data, size, &d, &fl, "fuzz", &e) != LD_OK) goto done;
    if (d.data) {
        if (d.data < data || d.data + d.data_len > data + size)
            abort(); /* the borrowed view must stay inside the input */
        sink += touch(d.data, d.data_len);
    }
    if (d.n_floats) sink += touch((const uint8_t *)d.floats, d.n_floats * sizeof(float));
    if (ld__datum_validate(&d, "fuzz", &e) == LD_OK && !d.encoded) {
        uint64_t px = (uint64_t)d.channels * (uint64_t)d.height * (uint64_t)d.width;
        if (px != (d.data_len ? d.data_len : d.n_floats)) abort();
    }
    if (ld__datum_encode(&d, &enc) != LD_OK) goto done;
    if (ld__datum_decode(enc.p, enc.len, &d2, &fl2, "fuzz", &e) != LD_OK) abort();
    if (d2.channels != d.channels || d2.height != d.height || d2.width != d.width ||
        d2.label != d.label || d2.encoded != d.encoded || d2.data_len != d.data_len ||
        d2.n_floats != d.n_floats || (d.data_len && memcmp(d2.data, d.data, d.data_len)) ||
        (d.n_floats && memcmp(d2.floats, d.floats, d.n_floats * sizeof(float))))
        abort();
done:
    ld__buf_free(&fl);
    ld__buf_free(&fl2);
    ld__buf_free(&enc);
    (void)sink;
}

static void check_blob(const uint8_t *data, size_t size)
{
    ld_err e;
    ld_buf fl = {0};
    int n, c, h, w;
    volatile unsigned sink = 0;
    if (ld__blobproto_decode(data, size, &n, &c, &h, &w, &fl, "fuzz", &e) == LD_OK) {
        if ((uint64_t)n * c * h * w * sizeof(float) != fl.len) abort();
        sink += touch(fl.p, fl.len);
    }
    ld__buf_free(&fl);
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_datum(data, size);
    check_blob(data, size);
    return 0;
}
