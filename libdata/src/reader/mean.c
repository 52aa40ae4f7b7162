/* Dataset mean as a Caffe binaryproto. See mean.h. */
#define _GNU_SOURCE
#include "reader/mean.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "store/lmdb/datum.h"

void ld__mean_free(ld_mean *m)
{
    if (m) {
        free(m->data);
        m->data = NULL;
    }
}

static int set_shape(ld_mean *m, double **sum, int c, int h, int w, ld_err *e)
{
    size_t n;
    if (c <= 0 || h <= 0 || w <= 0 || !ld__mul_size((size_t)c, (size_t)h, &n) ||
        !ld__mul_size(n, (size_t)w, &n) || n > SIZE_MAX / sizeof(double))
        return ld__err(e, LD_ELIMIT, "mean: bad sample shape %dx%dx%d", c, h, w);
    *sum = calloc(n, sizeof(double));
    if (!*sum) return ld__err(e, LD_ENOMEM, "mean: out of memory for %zu sums", n);
    m->c = c;
    m->h = h;
    m->w = w;
    return LD_OK;
}

/* Add a decoded HWC image (gray or RGB) to CHW sums, RGB -> BGR as Caffe decodes. */
static void add_image(double *sum, const ld_image *im)
{
    size_t plane = (size_t)im->w * (size_t)im->h;
    for (size_t p = 0; p < plane; p++)
        for (int ch = 0; ch < im->c; ch++) {
            int dst = im->c == 3 ? 2 - ch : ch;
            sum[(size_t)dst * plane + p] += im->px[p * (size_t)im->c + (size_t)ch];
        }
}

int ld__mean_store(ld_store *s, uint64_t max_pixels, ld_mean *out, ld_err *e)
{
    int rc = LD_OK;
    ld_store_ctx *cx = NULL;
    ld_codec *codec = NULL;
    ld_image im = {0};
    double *sum = NULL;
    const ld_store_info *in = &s->info;
    size_t count = 0;
    memset(out, 0, sizeof *out);
    LD_CHECK(e, in->n > 0, LD_EFORMAT, "mean: the dataset is empty");
    LD_TRY(s->vt->ctx_create(s, &cx, e));
    if (!in->encoded) {
        LD_TRY(set_shape(out, &sum, in->c, in->h, in->w, e));
        count = (size_t)in->c * (size_t)in->h * (size_t)in->w;
    } else {
        codec = ld__codec_create();
        LD_CHECK(e, codec, LD_ENOMEM, "out of memory");
    }
    for (uint64_t i = 0; i < in->n; i++) {
        ld_rec r;
        LD_TRY(s->vt->read(s, cx, i, NULL, 0, &r, e));
        if (!in->encoded) {
            if (in->dtype == LD_SDT_F32) {
                const float *f = (const float *)(const void *)r.data;
                for (size_t k = 0; k < count; k++)
                    sum[k] += f[k];
            } else if (in->dtype == LD_SDT_U16) {
                const uint16_t *u = (const uint16_t *)(const void *)r.data;
                for (size_t k = 0; k < count; k++)
                    sum[k] += u[k];
            } else {
                for (size_t k = 0; k < count; k++)
                    sum[k] += r.data[k];
            }
            continue;
        }
        /* encoded: channels as the dataset says (sidecar / Datum), default color */
        int want_c = in->c == 1 || (in->c == 0 && r.c == 1) ? 1 : 3;
        ld_decode_opts dop = {.channels = want_c, .max_pixels = max_pixels, .apply_orientation = 1};
        char name[64];
        snprintf(name, sizeof name, "sample %llu", (unsigned long long)i);
        LD_TRY(ld__img_decode(codec, r.data, r.len, name, &dop, &im, e));
        if (!sum) {
            LD_TRY(set_shape(out, &sum, im.c, im.h, im.w, e));
            count = (size_t)im.c * (size_t)im.h * (size_t)im.w;
        }
        LD_CHECK(e, im.c == out->c && im.h == out->h && im.w == out->w, LD_EFORMAT,
                 "mean: sample %llu is %dx%dx%d but the first is %dx%dx%d: the mean needs one "
                 "size (convert with resize_w and resize_h)",
                 (unsigned long long)i, im.c, im.h, im.w, out->c, out->h, out->w);
        add_image(sum, &im);
    }
    out->data = malloc(count * sizeof(float));
    LD_CHECK(e, out->data, LD_ENOMEM, "out of memory");
    size_t plane = (size_t)out->h * (size_t)out->w;
    for (int ch = 0; ch < out->c; ch++) {
        double acc = 0;
        for (size_t p = 0; p < plane; p++) {
            double v = sum[(size_t)ch * plane + p] / (double)in->n;
            out->data[(size_t)ch * plane + p] = (float)v;
            acc += v;
        }
        if (ch < 4) out->channel[ch] = acc / (double)plane;
    }
    out->n = in->n;
fail:
    if (rc < 0) ld__mean_free(out);
    free(sum);
    ld__image_free(&im);
    ld__codec_free(codec);
    if (cx) s->vt->ctx_free(s, cx);
    return rc;
}

int ld__mean_path(const char *input, uint64_t max_pixels, ld_mean *out, ld_err *e)
{
    ld_store *s = NULL;
    int rc = LD_OK;
    memset(out, 0, sizeof *out);
    /* any store: LMDB directory or data.mdb, HDF5 file, --split list */
    LD_TRY(ld__store_open(input, NULL, &s, e));
    LD_TRY(ld__mean_store(s, max_pixels, out, e));
fail:
    if (s) s->vt->close(s);
    return rc;
}

int ld__mean_write(const char *path, const ld_mean *m, ld_err *e)
{
    int rc = LD_OK;
    ld_buf b = {0};
    FILE *f = NULL;
    char *tmp = ld__temp_name(path, m);
    LD_CHECK(e, tmp, LD_ENOMEM, "out of memory");
    rc = ld__blobproto_encode(m->c, m->h, m->w, m->data, &b);
    LD_CHECK(e, rc == LD_OK, rc, "%s: cannot encode the mean", path);
    f = fopen(tmp, "wb");
    LD_CHECK(e, f, LD_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    int ok = fwrite(b.p, 1, b.len, f) == b.len;
    ok = (fflush(f) == 0) & ok;
    ok = (fsync(fileno(f)) == 0) & ok;
    ok = (fclose(f) == 0) & ok;
    f = NULL;
    LD_CHECK(e, ok, LD_EIO, "%s: write failed: %s", tmp, strerror(errno));
    LD_CHECK(e, rename(tmp, path) == 0, LD_EIO, "%s: cannot rename into place: %s", path,
             strerror(errno));
fail:
    if (f) fclose(f);
    if (rc < 0 && tmp) unlink(tmp);
    free(tmp);
    ld__buf_free(&b);
    return rc;
}

/* ---- NumPy .npy ---------------------------------------------------------------------------
 * The format (numpy.lib.format): magic "\x93NUMPY", version major/minor, header length
 * (2 bytes little-endian in 1.0, 4 in 2.0/3.0), then a Python dict literal
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 32, 32), }
 * padded with spaces and a newline, then the array bytes. The dict is parsed strictly (keys
 * in any order, each once; only the three keys), so a damaged header is refused rather
 * than guessed at. */

typedef struct npy_hdr {
    char descr[8];
    int fortran;
    int ndim;
    uint64_t dims[4];
} npy_hdr;

static const char *npy_space(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* A quoted string ('...' or "...") of at most cap - 1 bytes. NULL when malformed. */
static const char *npy_string(const char *p, const char *end, char *out, size_t cap)
{
    if (p >= end || (*p != '\'' && *p != '"')) return NULL;
    const char q = *p++;
    size_t n = 0;
    while (p < end && *p != q) {
        if (n + 1 >= cap || *p == '\\') return NULL;
        out[n++] = *p++;
    }
    if (p >= end) return NULL;
    out[n] = 0;
    return p + 1;
}

/* Parse the header dict at [p, end). 0, or -1 with a reason in why. */
static int npy_parse(const char *p, const char *end, npy_hdr *h, const char **why)
{
    int seen = 0; /* bits: descr, fortran_order, shape */
    *why = "its header is not a valid .npy header dict";
    p = npy_space(p, end);
    if (p >= end || *p++ != '{') return -1;
    for (;;) {
        char key[16];
        p = npy_space(p, end);
        if (p < end && *p == '}') break;
        if (!(p = npy_string(p, end, key, sizeof key))) return -1;
        p = npy_space(p, end);
        if (p >= end || *p++ != ':') return -1;
        p = npy_space(p, end);
        if (!strcmp(key, "descr") && !(seen & 1)) {
            if (!(p = npy_string(p, end, h->descr, sizeof h->descr))) {
                *why = "its dtype is not one of float32, float64, uint8";
                return -1;
            }
            seen |= 1;
        } else if (!strcmp(key, "fortran_order") && !(seen & 2)) {
            if (end - p >= 4 && !memcmp(p, "True", 4)) {
                h->fortran = 1;
                p += 4;
            } else if (end - p >= 5 && !memcmp(p, "False", 5)) {
                p += 5;
            } else {
                return -1;
            }
            seen |= 2;
        } else if (!strcmp(key, "shape") && !(seen & 4)) {
            if (p >= end || *p++ != '(') return -1;
            h->ndim = 0;
            for (;;) {
                p = npy_space(p, end);
                if (p < end && *p == ')') {
                    p++;
                    break;
                }
                if (p >= end || *p < '0' || *p > '9') {
                    *why = "its shape is not a tuple of sizes";
                    return -1;
                }
                uint64_t v = 0;
                while (p < end && *p >= '0' && *p <= '9') {
                    if (v > ((uint64_t)1 << 40)) {
                        *why = "a dimension of its shape is implausibly large";
                        return -1;
                    }
                    v = v * 10 + (uint64_t)(*p++ - '0');
                }
                if (h->ndim == 4) {
                    *why = "it has more than 4 dimensions (a mean is C x H x W or H x W x C)";
                    return -1;
                }
                h->dims[h->ndim++] = v;
                p = npy_space(p, end);
                if (p < end && *p == ',')
                    p++;
                else if (p >= end || *p != ')')
                    return -1;
            }
            seen |= 4;
        } else {
            return -1; /* unknown or repeated key */
        }
        p = npy_space(p, end);
        if (p < end && *p == ',')
            p++;
        else if (p >= end || *p != '}')
            return -1;
    }
    if (seen != 7) {
        *why = "its header lacks descr, fortran_order or shape";
        return -1;
    }
    return 0;
}

static int npy_read(const char *path, const uint8_t *b, size_t len, ld_mean *out, ld_err *e)
{
    int rc = LD_OK;
    npy_hdr h;
    memset(&h, 0, sizeof h);
    const char *why = NULL;
    LD_CHECK(e, len >= 10, LD_EFORMAT, "%s: truncated .npy file (%zu bytes)", path, len);
    const int major = b[6];
    LD_CHECK(e, major >= 1 && major <= 3, LD_EFORMAT,
             "%s: .npy format version %d.%d is not "
             "supported (1.0 to 3.0 are)",
             path, major, b[7]);
    size_t hlen, start;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        start = 10;
    } else {
        LD_CHECK(e, len >= 12, LD_EFORMAT, "%s: truncated .npy file (%zu bytes)", path, len);
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        start = 12;
    }
    LD_CHECK(e, hlen <= len - start, LD_EFORMAT,
             "%s: truncated .npy file: its header says "
             "%zu bytes, the file has %zu after the preamble",
             path, hlen, len - start);
    LD_CHECK(e, npy_parse((const char *)b + start, (const char *)b + start + hlen, &h, &why) == 0,
             LD_EFORMAT, "%s: not a usable .npy mean: %s", path, why);
    size_t isz = 0;
    if (!strcmp(h.descr, "<f4"))
        isz = 4;
    else if (!strcmp(h.descr, "<f8"))
        isz = 8;
    else if (!strcmp(h.descr, "|u1") || !strcmp(h.descr, "<u1"))
        isz = 1;
    LD_CHECK(e, isz, LD_EFORMAT,
             "%s: .npy dtype '%s' is not supported: a mean must be "
             "little-endian float32 ('<f4'), float64 ('<f8') or uint8 ('|u1'), e.g. "
             "np.save(path, mean.astype(np.float32))",
             path, h.descr);
    LD_CHECK(e, !h.fortran, LD_EFORMAT,
             "%s: the .npy array is in Fortran order: save a C-order "
             "array (np.save(path, np.ascontiguousarray(mean)))",
             path);
    if (h.ndim == 4 && h.dims[0] == 1) { /* (1, A, B, C), like a Caffe blob of num 1 */
        memmove(h.dims, h.dims + 1, 3 * sizeof h.dims[0]);
        h.ndim = 3;
    }
    LD_CHECK(e, h.ndim == 2 || h.ndim == 3, LD_EFORMAT,
             "%s: the .npy array has %d dimensions; "
             "a mean is C x H x W, H x W x C or H x W",
             path, h.ndim);
    uint64_t count = 1;
    for (int k = 0; k < h.ndim; k++) {
        LD_CHECK(e, h.dims[k] >= 1 && h.dims[k] <= (1u << 24), LD_EFORMAT,
                 "%s: .npy dimension %d is %llu", path, k, (unsigned long long)h.dims[k]);
        count *= h.dims[k];
        LD_CHECK(e, count <= ((uint64_t)1 << 28), LD_EFORMAT,
                 "%s: the .npy array is too "
                 "large for a mean image",
                 path);
    }
    LD_CHECK(e, len - start - hlen == count * isz, LD_EFORMAT,
             "%s: the .npy array needs %llu "
             "bytes of data, the file has %zu (truncated or not a .npy file)",
             path, (unsigned long long)(count * isz), len - start - hlen);
    out->data = malloc((size_t)count * sizeof(float));
    LD_CHECK(e, out->data, LD_ENOMEM, "%s: out of memory", path);
    const uint8_t *d = b + start + hlen;
    for (size_t k = 0; k < (size_t)count; k++) {
        if (isz == 1) {
            out->data[k] = d[k];
        } else if (isz == 4) {
            uint32_t u = (uint32_t)d[4 * k] | (uint32_t)d[4 * k + 1] << 8 |
                         (uint32_t)d[4 * k + 2] << 16 | (uint32_t)d[4 * k + 3] << 24;
            memcpy(&out->data[k], &u, 4);
        } else {
            uint64_t u = 0;
            for (int j = 7; j >= 0; j--)
                u = u << 8 | d[8 * k + (size_t)j];
            double v;
            memcpy(&v, &u, 8);
            out->data[k] = (float)v;
        }
    }
    out->npy_ndim = h.ndim;
    for (int k = 0; k < h.ndim; k++)
        out->npy_dims[k] = (int)h.dims[k];
    out->c = h.ndim == 3 ? (int)h.dims[0] : 1;
    out->h = (int)h.dims[h.ndim - 2];
    out->w = (int)h.dims[h.ndim - 1];
fail:
    return rc;
}

static void channel_means(ld_mean *m)
{
    size_t plane = (size_t)m->h * (size_t)m->w;
    for (int ch = 0; ch < 4; ch++) {
        double acc = 0;
        for (size_t p = 0; ch < m->c && p < plane; p++)
            acc += m->data[(size_t)ch * plane + p];
        m->channel[ch] = ch < m->c ? acc / (double)plane : 0.0;
    }
}

int ld__mean_arrange(ld_mean *m, const char *path, int c, int h, int w, int ch, int cw, char *how,
                     size_t how_cap, ld_err *e)
{
    int rc = LD_OK;
    snprintf(how, how_cap, "C x H x W");
    if (m->npy_ndim != 3) {
        if (m->npy_ndim == 2) snprintf(how, how_cap, "H x W");
        return LD_OK;
    }
    const int *d = m->npy_dims;
#define SIZE_OK(a, b) (((a) == h && (b) == w) || ((a) == ch && (b) == cw))
    if (d[0] == c && SIZE_OK(d[1], d[2]))
        return LD_OK; /* C x H x W, Caffe's order, preferred when both fit */
    LD_CHECK(e, d[2] == c && SIZE_OK(d[0], d[1]), LD_EINVAL,
             "%s: the .npy mean has shape (%d, %d, %d), which is neither C x H x W nor "
             "H x W x C of the output: (%d, %d, %d) or (%d, %d, %d) for the samples, "
             "(%d, %d, %d) or (%d, %d, %d) for the crop",
             path, d[0], d[1], d[2], c, h, w, h, w, c, c, ch, cw, ch, cw, c);
#undef SIZE_OK
    {
        const size_t hh = (size_t)d[0], ww = (size_t)d[1], cc = (size_t)d[2];
        float *t = malloc(hh * ww * cc * sizeof(float));
        LD_CHECK(e, t, LD_ENOMEM, "%s: out of memory", path);
        for (size_t y = 0; y < hh; y++)
            for (size_t x = 0; x < ww; x++)
                for (size_t k = 0; k < cc; k++)
                    t[(k * hh + y) * ww + x] = m->data[(y * ww + x) * cc + k];
        free(m->data);
        m->data = t;
        m->c = (int)cc;
        m->h = (int)hh;
        m->w = (int)ww;
        channel_means(m);
        snprintf(how, how_cap, "H x W x C (transposed to C x H x W)");
    }
fail:
    return rc;
}

int ld__mean_read(const char *path, ld_mean *out, ld_err *e)
{
    int rc = LD_OK, num;
    ld_buf file = {0}, fl = {0};
    memset(out, 0, sizeof *out);
    LD_TRY(ld__read_file(path, &file, (size_t)1 << 30, e));
    if (file.len >= 6 && !memcmp(file.p, "\x93NUMPY", 6)) {
        LD_TRY(npy_read(path, file.p, file.len, out, e));
        channel_means(out);
        goto fail;
    }
    LD_TRY(ld__blobproto_decode(file.p, file.len, &num, &out->c, &out->h, &out->w, &fl, path, e));
    LD_CHECK(e, num == 1 && out->c > 0 && out->h > 0 && out->w > 0, LD_EFORMAT,
             "%s: mean shape %dx%dx%dx%d is not 1 x C x H x W", path, num, out->c, out->h, out->w);
    out->data = (float *)(void *)fl.p; /* take the buffer */
    fl.p = NULL;
    channel_means(out);
fail:
    if (rc < 0) ld__mean_free(out);
    ld__buf_free(&file);
    ld__buf_free(&fl);
    return rc;
}
