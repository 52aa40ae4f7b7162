/* Dataset mean as a Caffe binaryproto. See mean.h. */
#define _GNU_SOURCE
#include "mean.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codec/codec.h"
#include "datum.h"

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
    if (!*sum)
        return ld__err(e, LD_ENOMEM, "mean: out of memory for %zu sums", n);
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
            } else {
                for (size_t k = 0; k < count; k++)
                    sum[k] += r.data[k];
            }
            continue;
        }
        /* encoded: channels as the dataset says (sidecar / Datum), default color */
        int want_c = in->c == 1 || (in->c == 0 && r.c == 1) ? 1 : 3;
        ld_decode_opts dop = {.channels = want_c, .max_pixels = max_pixels,
                              .apply_orientation = 1};
        char name[64];
        snprintf(name, sizeof name, "sample %llu", (unsigned long long)i);
        LD_TRY(ld__img_decode(codec, r.data, r.len, name, &dop, &im, e));
        if (!sum) {
            LD_TRY(set_shape(out, &sum, im.c, im.h, im.w, e));
            count = (size_t)im.c * (size_t)im.h * (size_t)im.w;
        }
        LD_CHECK(e, im.c == out->c && im.h == out->h && im.w == out->w, LD_EFORMAT,
                 "mean: sample %llu is %dx%dx%d but the first is %dx%dx%d: the mean needs one "
                 "size (convert with --resize)", (unsigned long long)i, im.c, im.h, im.w, out->c,
                 out->h, out->w);
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
        if (ch < 4)
            out->channel[ch] = acc / (double)plane;
    }
    out->n = in->n;
fail:
    if (rc < 0)
        ld__mean_free(out);
    free(sum);
    ld__image_free(&im);
    ld__codec_free(codec);
    if (cx)
        s->vt->ctx_free(s, cx);
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
    if (s)
        s->vt->close(s);
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
    if (f)
        fclose(f);
    if (rc < 0 && tmp)
        unlink(tmp);
    free(tmp);
    ld__buf_free(&b);
    return rc;
}

int ld__mean_read(const char *path, ld_mean *out, ld_err *e)
{
    int rc = LD_OK, num;
    ld_buf file = {0}, fl = {0};
    memset(out, 0, sizeof *out);
    LD_TRY(ld__read_file(path, &file, (size_t)1 << 30, e));
    LD_TRY(ld__blobproto_decode(file.p, file.len, &num, &out->c, &out->h, &out->w, &fl, path, e));
    LD_CHECK(e, num == 1 && out->c > 0 && out->h > 0 && out->w > 0, LD_EFORMAT,
             "%s: mean shape %dx%dx%dx%d is not 1 x C x H x W", path, num, out->c, out->h, out->w);
    out->data = (float *)(void *)fl.p; /* take the buffer */
    fl.p = NULL;
    size_t plane = (size_t)out->h * (size_t)out->w;
    for (int ch = 0; ch < out->c && ch < 4; ch++) {
        double acc = 0;
        for (size_t p = 0; p < plane; p++)
            acc += out->data[(size_t)ch * plane + p];
        out->channel[ch] = acc / (double)plane;
    }
fail:
    ld__buf_free(&file);
    ld__buf_free(&fl);
    return rc;
}
