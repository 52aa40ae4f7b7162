/* Caffe Datum / BlobProto proto2 codec. See datum.h for the rules it follows. */
#include "store/lmdb/datum.h"

#include <stdio.h>
#include <string.h>

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

/* ---- encoding ------------------------------------------------------------------------ */

static size_t put_varint(uint8_t *o, uint64_t v)
{
    size_t k = 0;
    while (v >= 0x80) {
        o[k++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    o[k++] = (uint8_t)v;
    return k;
}

static int emit_varint(ld_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    return ld__buf_append(b, tmp, put_varint(tmp, v));
}

static int emit_tag(ld_buf *b, unsigned field, unsigned wt)
{
    return emit_varint(b, ((uint64_t)field << 3) | wt);
}

/* proto2 int32: negative values are sign-extended to 64 bits (10-byte varint), as protobuf
 * does, so that a reader using int64 sees the same number. */
static int emit_int32(ld_buf *b, unsigned field, int32_t v)
{
    int rc = emit_tag(b, field, WT_VARINT);
    return rc < 0 ? rc : emit_varint(b, (uint64_t)(int64_t)v);
}

static void put_f32(uint8_t *o, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    o[0] = (uint8_t)u;
    o[1] = (uint8_t)(u >> 8);
    o[2] = (uint8_t)(u >> 16);
    o[3] = (uint8_t)(u >> 24);
}

static float get_f32(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int ld__datum_encode(const ld_datum *d, ld_buf *out)
{
    int rc = LD_OK;
    LD_TRY(emit_int32(out, 1, d->channels));
    LD_TRY(emit_int32(out, 2, d->height));
    LD_TRY(emit_int32(out, 3, d->width));
    if (d->data) {
        LD_TRY(emit_tag(out, 4, WT_LEN));
        LD_TRY(emit_varint(out, d->data_len));
        LD_TRY(ld__buf_append(out, d->data, d->data_len));
    }
    LD_TRY(emit_int32(out, 5, d->label));
    for (size_t i = 0; i < d->n_floats; i++) { /* Caffe declares float_data non-packed */
        uint8_t f[5] = {(6 << 3) | WT_I32};
        put_f32(f + 1, d->floats[i]);
        LD_TRY(ld__buf_append(out, f, 5));
    }
    LD_TRY(emit_tag(out, 7, WT_VARINT));
    LD_TRY(emit_varint(out, d->encoded ? 1 : 0));
fail:
    return rc;
}

int ld__blobproto_encode(int channels, int height, int width, const float *data, ld_buf *out)
{
    int rc = LD_OK;
    size_t n, bytes;
    out->len = 0;
    if (channels < 0 || height < 0 || width < 0 ||
        !ld__mul_size((size_t)channels, (size_t)height, &n) ||
        !ld__mul_size(n, (size_t)width, &n) || !ld__mul_size(n, 4, &bytes))
        return LD_EINVAL;
    LD_TRY(emit_int32(out, 1, 1));
    LD_TRY(emit_int32(out, 2, channels));
    LD_TRY(emit_int32(out, 3, height));
    LD_TRY(emit_int32(out, 4, width));
    if (n > 0) { /* protobuf omits an empty packed field */
        LD_TRY(emit_tag(out, 5, WT_LEN));
        LD_TRY(emit_varint(out, bytes));
        LD_TRY(ld__buf_reserve(out, out->len + bytes));
        for (size_t i = 0; i < n; i++)
            put_f32(out->p + out->len + 4 * i, data[i]);
        out->len += bytes;
    }
fail:
    return rc;
}

/* ---- decoding ------------------------------------------------------------------------ */

typedef struct rd {
    const uint8_t *p;
    size_t n, pos;
    const char *name;
    ld_err *e;
} rd;

static int bad(rd *r, const char *why)
{
    return ld__err(r->e, LD_EFORMAT, "%s: malformed record at byte %zu of %zu: %s",
                   r->name ? r->name : "record", r->pos, r->n, why);
}

static int rd_varint(rd *r, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (r->pos >= r->n) return bad(r, "truncated varint");
        uint8_t b = r->p[r->pos++];
        if (i == 9 && b > 1) /* the 10th byte holds only bit 63 */
            return bad(r, "varint longer than 64 bits");
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return LD_OK;
        }
    }
    return bad(r, "varint longer than 10 bytes");
}

/* Read a length prefix and check it against what is left. */
static int rd_len(rd *r, size_t *len)
{
    uint64_t v = 0;
    int rc = rd_varint(r, &v);
    if (rc < 0) return rc;
    if (v > r->n - r->pos) return bad(r, "length runs past the end of the record");
    *len = (size_t)v;
    return LD_OK;
}

static int rd_tag(rd *r, unsigned *field, unsigned *wt)
{
    uint64_t v = 0;
    int rc = rd_varint(r, &v);
    if (rc < 0) return rc;
    if (v >> 3 == 0 || v >> 3 > 0x1fffffff) /* protobuf field numbers are 1..2^29-1 */
        return bad(r, "invalid field number");
    *field = (unsigned)(v >> 3);
    *wt = (unsigned)(v & 7);
    return LD_OK;
}

static int rd_skip(rd *r, unsigned wt)
{
    uint64_t v = 0;
    size_t len = 0;
    int rc = LD_OK;
    switch (wt) {
    case WT_VARINT: return rd_varint(r, &v);
    case WT_I64: len = 8; break;
    case WT_I32: len = 4; break;
    case WT_LEN:
        rc = rd_len(r, &len);
        if (rc < 0) return rc;
        break;
    default: return bad(r, "unsupported wire type (group or invalid)");
    }
    if (len > r->n - r->pos) return bad(r, "fixed-size field runs past the end");
    r->pos += len;
    return LD_OK;
}

static int want(rd *r, unsigned wt, unsigned expected, const char *field)
{
    if (wt == expected) return LD_OK;
    char why[96];
    snprintf(why, sizeof why, "field '%s' has wire type %u, expected %u", field, wt, expected);
    return bad(r, why);
}

static int rd_int32(rd *r, unsigned wt, const char *field, int32_t *out)
{
    uint64_t v = 0;
    int rc = want(r, wt, WT_VARINT, field);
    if (rc < 0 || (rc = rd_varint(r, &v)) < 0) return rc;
    *out = (int32_t)(uint32_t)v; /* low 32 bits, as protobuf's int32 parser */
    return LD_OK;
}

/* A repeated float field, packed (LEN) or not (I32); appends to `floats` when not NULL. */
static int rd_floats(rd *r, unsigned wt, ld_buf *floats, size_t *count)
{
    size_t len = 0, k;
    int rc;
    if (wt == WT_I32) {
        len = 4;
        if (r->n - r->pos < 4) return bad(r, "float runs past the end");
    } else if (wt == WT_LEN) {
        if ((rc = rd_len(r, &len)) < 0) return rc;
        if (len % 4) return bad(r, "packed float field length is not a multiple of 4");
    } else {
        return bad(r, "float field has a wrong wire type");
    }
    k = len / 4;
    if (floats) {
        size_t need;
        if (!ld__mul_size(*count + k, sizeof(float), &need)) return bad(r, "too many floats");
        if (ld__buf_reserve(floats, need) < 0)
            return ld__err(r->e, LD_ENOMEM, "%s: out of memory for float data", r->name);
        float *f = (float *)(void *)floats->p;
        for (size_t i = 0; i < k; i++)
            f[*count + i] = get_f32(r->p + r->pos + 4 * i);
        floats->len = need;
    }
    *count += k;
    r->pos += len;
    return LD_OK;
}

int ld__datum_decode(const uint8_t *p, size_t n, ld_datum *d, ld_buf *floats, const char *name,
                     ld_err *e)
{
    rd r = {p, n, 0, name ? name : "record", e};
    int rc = LD_OK;
    memset(d, 0, sizeof *d);
    if (floats) floats->len = 0;
    while (r.pos < r.n) {
        unsigned f = 0, wt = 0;
        uint64_t v = 0;
        LD_TRY(rd_tag(&r, &f, &wt));
        switch (f) {
        case 1: LD_TRY(rd_int32(&r, wt, "channels", &d->channels)); break;
        case 2: LD_TRY(rd_int32(&r, wt, "height", &d->height)); break;
        case 3: LD_TRY(rd_int32(&r, wt, "width", &d->width)); break;
        case 5: LD_TRY(rd_int32(&r, wt, "label", &d->label)); break;
        case 4:
            LD_TRY(want(&r, wt, WT_LEN, "data"));
            LD_TRY(rd_len(&r, &d->data_len));
            d->data = p + r.pos;
            r.pos += d->data_len;
            break;
        case 6: LD_TRY(rd_floats(&r, wt, floats, &d->n_floats)); break;
        case 7:
            LD_TRY(want(&r, wt, WT_VARINT, "encoded"));
            LD_TRY(rd_varint(&r, &v));
            d->encoded = v != 0;
            break;
        default: LD_TRY(rd_skip(&r, wt)); continue;
        }
        d->has |= 1u << f;
    }
    if (floats && d->n_floats) d->floats = (const float *)(const void *)floats->p;
fail:
    return rc;
}

int ld__datum_validate(const ld_datum *d, const char *name, ld_err *e)
{
    int rc = LD_OK;
    if (!name) name = "record";
    if (d->encoded) {
        LD_CHECK(e, d->data && d->data_len > 0, LD_EFORMAT,
                 "%s: encoded record without image bytes", name);
        LD_CHECK(e, d->channels >= 0 && d->height >= 0 && d->width >= 0, LD_EFORMAT,
                 "%s: negative shape %d x %d x %d", name, d->channels, d->height, d->width);
        return LD_OK;
    }
    LD_CHECK(e,
             d->channels >= 1 && d->channels <= LD_DATUM_MAX_CHANNELS && d->height >= 1 &&
                 d->height <= LD_DATUM_MAX_DIM && d->width >= 1 && d->width <= LD_DATUM_MAX_DIM,
             LD_EFORMAT, "%s: bad shape channels=%d height=%d width=%d (limits 1..%d, 1..%d)", name,
             d->channels, d->height, d->width, LD_DATUM_MAX_CHANNELS, LD_DATUM_MAX_DIM);
    /* cannot overflow 64 bits with the limits above */
    uint64_t want = (uint64_t)d->channels * (uint64_t)d->height * (uint64_t)d->width;
    if (d->data_len > 0 || d->n_floats == 0)
        LD_CHECK(e, d->data_len == want, LD_EFORMAT,
                 "%s: channels*height*width = %d*%d*%d = %llu but data has %zu bytes", name,
                 d->channels, d->height, d->width, (unsigned long long)want, d->data_len);
    else
        LD_CHECK(e, d->n_floats == want, LD_EFORMAT,
                 "%s: channels*height*width = %llu but float_data has %zu values", name,
                 (unsigned long long)want, d->n_floats);
fail:
    return rc;
}

/* BlobShape { repeated int64 dim = 1 [packed = true]; } nested in field 7. */
static int rd_shape(rd *outer, int64_t dims[4], int *ndim)
{
    size_t len = 0;
    int rc = rd_len(outer, &len);
    if (rc < 0) return rc;
    rd r = {outer->p, outer->pos + len, outer->pos, outer->name, outer->e};
    *ndim = 0;
    while (r.pos < r.n) {
        unsigned f = 0, wt = 0;
        uint64_t v = 0;
        if ((rc = rd_tag(&r, &f, &wt)) < 0) return rc;
        if (f != 1) {
            if ((rc = rd_skip(&r, wt)) < 0) return rc;
            continue;
        }
        size_t end;
        if (wt == WT_LEN) {
            size_t l = 0;
            if ((rc = rd_len(&r, &l)) < 0) return rc;
            end = r.pos + l;
        } else if (wt == WT_VARINT) {
            end = r.n; /* one value: the loop below runs once */
        } else {
            return bad(&r, "shape dim has a wrong wire type");
        }
        do {
            if (wt == WT_LEN && r.pos == end) break; /* an empty packed field is valid */
            rd sub = {r.p, end, r.pos, r.name, r.e};
            if ((rc = rd_varint(&sub, &v)) < 0) return rc;
            r.pos = sub.pos;
            if (*ndim >= 4) return bad(&r, "shape has more than 4 dims");
            dims[(*ndim)++] = (int64_t)v;
        } while (wt == WT_LEN && r.pos < end);
    }
    outer->pos = r.n;
    return LD_OK;
}

int ld__blobproto_decode(const uint8_t *p, size_t n, int *num, int *channels, int *height,
                         int *width, ld_buf *floats, const char *name, ld_err *e)
{
    if (!name) name = "blobproto";
    rd r = {p, n, 0, name, e};
    int rc = LD_OK, legacy = 0, ndim = -1;
    int32_t l[4] = {0, 0, 0, 0};
    int64_t dims[4];
    size_t count = 0;
    floats->len = 0;
    while (r.pos < r.n) {
        unsigned f = 0, wt = 0;
        LD_TRY(rd_tag(&r, &f, &wt));
        if (f >= 1 && f <= 4) {
            LD_TRY(rd_int32(&r, wt, "num/channels/height/width", &l[f - 1]));
            legacy = 1;
        } else if (f == 5) {
            LD_TRY(rd_floats(&r, wt, floats, &count));
        } else if (f == 7) {
            LD_TRY(want(&r, wt, WT_LEN, "shape"));
            LD_TRY(rd_shape(&r, dims, &ndim));
        } else {
            LD_TRY(rd_skip(&r, wt));
        }
    }
    if (!legacy) {
        LD_CHECK(e, ndim >= 1, LD_EFORMAT,
                 "%s: BlobProto has neither num/channels/height/width nor shape", name);
        l[0] = l[1] = l[2] = l[3] = 1;
        for (int i = 0; i < ndim; i++) {
            LD_CHECK(e, dims[i] >= 0 && dims[i] <= INT32_MAX, LD_EFORMAT,
                     "%s: BlobProto shape dim %d out of range", name, i);
            l[4 - ndim + i] = (int32_t)dims[i];
        }
    }
    uint64_t want_n = 1;
    for (int i = 0; i < 4; i++) {
        LD_CHECK(e, l[i] >= 0, LD_EFORMAT, "%s: BlobProto has a negative dimension", name);
        LD_CHECK(e, !__builtin_mul_overflow(want_n, (uint64_t)l[i], &want_n), LD_EFORMAT,
                 "%s: BlobProto dimensions overflow", name);
    }
    LD_CHECK(e, want_n == count, LD_EFORMAT,
             "%s: BlobProto shape %dx%dx%dx%d needs %llu values but data has %zu", name, l[0], l[1],
             l[2], l[3], (unsigned long long)want_n, count);
    *num = l[0];
    *channels = l[1];
    *height = l[2];
    *width = l[3];
fail:
    return rc;
}
