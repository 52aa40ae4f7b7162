/*
 * The reader: parameters, open (store + sampler + memory plan + ring + workers) and next().
 *
 * Work scheduling (thread/pool.h). Batch b of the epoch lives in ring slot b % nslots and is
 * cut into `pieces` contiguous ranges of samples; workers take pieces in batch order from the
 * pool's one counter, so all threads cooperate on the oldest unfinished batch (low
 * latency) and the next batches are started as soon as their slots are free (prefetch). A slot
 * is free once the caller has moved past the batch it held: the caller holds one batch, the
 * other nslots - 1 = prefetch batches are prepared meanwhile. The ring is allocated and
 * touched once at open, so no page fault and no allocation happens per batch.
 *
 * Epochs do not overlap: workers stop issuing at the last batch of an epoch; when the caller
 * reaches the end (LD_END), every batch of the epoch is finished, so the next permutation can
 * be written in place and workers restart at once, while the caller handles the epoch end.
 */
#define _GNU_SOURCE /* MADV_HUGEPAGE */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "codec/codec.h"
#include "common/ld_param_store.h"
#include "common/ld_params.h"
#include "libdata/reader.h"
#include "reader/sampler.h"
#include "reader/mean.h"
#include "store/store.h"
#include "thread/pool.h"
#include "reader/xform.h"
#include "reader/rrc.h"
#include "resize/resize.h"

#define AUTO_PREFETCH 2
#define MAX_AUTO_PREFETCH 4
/* Sequential runs are read with one call of at most this many samples / bytes: large enough
 * to cover an HDF5 chunk (1 MiB) with few system calls, small enough to keep the threads'
 * pieces interleaved. */
#define MAX_RUN 256
#define MAX_RUN_BYTES ((size_t)4 << 20)

static const ld_param_choice ORDERS[] = {{"sequential", LD_ORDER_SEQUENTIAL},
                                         {"shuffle", LD_ORDER_SHUFFLE},
                                         {"block_shuffle", LD_ORDER_BLOCK_SHUFFLE}};
static const ld_param_choice DTYPES[] = {
    {"uint8", LD_DTYPE_U8}, {"float32", LD_DTYPE_F32}, {"uint16", LD_DTYPE_U16}};
static const ld_param_choice LABEL_DTYPES[] = {{"float32", LD_DTYPE_F32}, {"int32", LD_DTYPE_I32}};
static const ld_param_choice LAYOUTS[] = {{"nchw", LD_LAYOUT_NCHW}, {"nhwc", LD_LAYOUT_NHWC}};
static const ld_param_choice RRC_FILTERS[] = {{"bilinear", LD_RRC_FILTER_BILINEAR},
                                              {"lanczos3", LD_RRC_FILTER_LANCZOS3}};
static const ld_param_choice CHANNELS[] = {
    {"as_stored", LD_CHANNELS_AS_STORED}, {"bgr", LD_CHANNELS_BGR}, {"rgb", LD_CHANNELS_RGB}};

static const ld_param_desc params[] = {
    INT(LD_R_BATCH_SIZE, "batch", 64, 1, 1 << 24, "samples", "samples per batch"),
    BOOL(LD_R_DROP_LAST, "drop_last", "drop the short final batch of an epoch"),
    ENUM(LD_R_ORDER, "order", ORDERS, LD_ORDER_SEQUENTIAL, "sequential", LD_ORDER_SEQUENTIAL,
         LD_ORDER_BLOCK_SHUFFLE, "sample order of an epoch"),
    INT(LD_R_SEED, "seed", 0, INT64_MIN, INT64_MAX, "", "seed of the order and random transforms"),
    INT(LD_R_RANK, "rank", 0, 0, 1 << 20, "", "this process's rank (0 <= rank < world)"),
    INT(LD_R_WORLD, "world", 1, 1, 1 << 20, "", "number of ranks sharing each epoch"),
    INT(LD_R_THREADS, "threads", 0, 0, 256, "", "worker threads (0 = online cores)"),
    INT(LD_R_PREFETCH, "prefetch", 0, 0, 64, "batches", "batches prepared ahead (0 = auto)"),
    INT(LD_R_MEMORY_BUDGET, "memory_budget", 0, 0, INT64_MAX, "bytes",
        "bytes the reader may use (0 = no limit)"),
    ENUM(LD_R_DTYPE, "dtype", DTYPES, LD_DTYPE_U8, "uint8", LD_DTYPE_U8, LD_DTYPE_U16,
         "pixel type of the batches (uint16: 16-bit datasets' samples as stored)"),
    ENUM(LD_R_LAYOUT, "layout", LAYOUTS, LD_LAYOUT_NCHW, "nchw", LD_LAYOUT_NCHW, LD_LAYOUT_NHWC,
         "batch layout"),
    INT(LD_R_CROP_W, "crop_w", 0, 0, 1 << 24, "pixels", "crop width (0 = none)"),
    INT(LD_R_CROP_H, "crop_h", 0, 0, 1 << 24, "pixels", "crop height (0 = none)"),
    BOOL(LD_R_RANDOM_CROP, "random_crop", "random crop position (else center)"),
    BOOL(LD_R_MIRROR, "mirror", "random left-right mirror"),
    ENUM(LD_R_CHANNEL_ORDER, "channel_order", CHANNELS, LD_CHANNELS_AS_STORED, "as_stored",
         LD_CHANNELS_AS_STORED, LD_CHANNELS_RGB,
         "channel order of 3-channel output (swapped when the dataset records the other)"),
    BOOL(LD_R_SWAP, "swap", "reverse the channel order unconditionally"),
    ENUM(LD_R_LABEL_DTYPE, "label_dtype", LABEL_DTYPES, LD_DTYPE_I32, "int32", LD_DTYPE_F32,
         LD_DTYPE_I32, "label type of the batches"),
    INT(LD_R_WINDOW, "window", 8, 1, 1 << 20, "blocks", "block shuffle: blocks per window"),
    INT(LD_R_EPOCH, "epoch", 0, 0, INT64_MAX, "", "epoch to start at"),
    BOOL(LD_R_DCT_SCALE, "dct_scale", "JPEG: decode reduced (>= crop) for speed"),
    INT(LD_R_CHANNELS, "channels", 0, 0, 3, "",
        "encoded images: 0 as stored, 1 gray, 3 color (Caffe's force_gray, force_color)"),
    STR(LD_R_DATA_NAME, "data_name", "data", "HDF5 pixel dataset"),
    STR(LD_R_LABEL_NAME, "label_name", "label", "HDF5 label dataset"),
    {LD_R_MEAN_VALUES, "mean_values", LD_PARAM_FLOATS, 0, 0, 4, "", NULL, 0, "",
     "per-channel means subtracted before scaling (float output)"},
    STR(LD_R_MEAN_FILE, "mean_file", "", "mean image (.binaryproto or .npy), float output"),
    {LD_R_SCALE, "scale", LD_PARAM_DOUBLE, 0, 0, 0, "", NULL, 0, "1",
     "multiplier applied after the mean (float output)"},
    INT(LD_R_RRC_W, "rrc_w", 0, 0, 65535, "pixels",
        "random resized crop (torchvision's RandomResizedCrop): output width (0 = off)"),
    INT(LD_R_RRC_H, "rrc_h", 0, 0, 65535, "pixels", "random resized crop: output height"),
    BOOL(LD_R_RRC_FULL_DECODE, "rrc_full_decode",
         "random resized crop: decode whole images (reference path), not just the box"),
    ENUM(LD_R_RRC_FILTER, "rrc_filter", RRC_FILTERS, LD_RRC_FILTER_BILINEAR, "bilinear",
         LD_RRC_FILTER_BILINEAR, LD_RRC_FILTER_LANCZOS3,
         "random resized crop: resampling filter (bilinear as torchvision, or lanczos3)"),
    {LD_R_RRC_SCALE, "rrc_scale", LD_PARAM_FLOATS, 0, 0, 2, "", NULL, 0, "0.08,1",
     "random resized crop: min,max fraction of the image area"},
    {LD_R_RRC_RATIO, "rrc_ratio", LD_PARAM_FLOATS, 0, 0, 2, "", NULL, 0, "0.75,1.33333",
     "random resized crop: min,max aspect ratio (width / height)"},
};
LD_PARAM_TABLE_DEFINE(TABLE, "reader", params, LD_R_RRC_FILTER, LD_R_RRC_RATIO);

typedef struct slot {
    uint8_t *data;
    void *labels;
    uint64_t *indices;
    uint8_t *masks; /* masks: cap x mask_bytes (the store has masks), else NULL */
    /* boxes (the store has them): each sample's, transformed, and its source size; packed into
     * the batch's arrays by ld_reader_next */
    ld_buf *sbox;
    uint32_t *snb;
    int *ssw, *ssh;
    ld_buf pbox, plab, pflag, poff;
} slot;

typedef struct worker {
    struct ld_reader *r;
    ld_store_ctx *cx;
    uint8_t *scratch; /* one stored sample, when it cannot go straight to the batch */
    ld_codec *codec;
    ld_image img;
    ld_rrc_scratch rrc;
    double labels[MAX_RUN]; /* labels of one read_run */
    double *vec;            /* one sample's label vector (store info.label_k values) */
    uint32_t *order;        /* a piece's batch positions in file order (read_gather only) */
    uint64_t *sorted;       /* and its sample indices in that order */
    ld_image mask;          /* one stored mask (masks) */
    ld_buf mout;            /* its random resized crop */
    ld_err err;
} worker;

struct ld_reader {
    ld_err err;
    ld_param_store params; /* the integer and string LD_R_* values, by id (P, PSTR) */
    float scale;
    float mean_vals[4];
    int n_mean;
    double rrc_scale[2], rrc_ratio[2]; /* LD_R_RRC_SCALE, LD_R_RRC_RATIO */
    ld_log_fn log;
    void *log_user;

    /* open state */
    char *path;
    int is_open;
    ld_store *store;
    ld_epoch_order order; /* this epoch's; rebuilt between epochs, when workers are idle */
    uint64_t epoch, share, nbatches, bsize;
    uint64_t cap; /* samples a batch slot holds: min(bsize, share), so a batch size
                     larger than the rank's epoch does not allocate for samples that
                     can never come */
    ld_xform xf;
    ld_xform mxf;      /* masks: the image's crop and mirror draws (place_mask), nothing else */
    size_t mask_bytes; /* masks: one output mask (xf.oh x xf.ow), 0 without masks */
    ld_rrc rrc;        /* the random resized crop (rrc.w == 0: none) */
    char xf_what[96];  /* xf.what */
    float *mean_img;
    float *mean_given; /* ld_reader_set_mean_image's copy (C x H x W), or NULL */
    int mean_given_c, mean_given_h, mean_given_w;
    size_t out_bytes; /* one output sample */
    size_t lab_size;
    int direct_out; /* raw store, plain transform: read straight into the batch */
    int check_gray; /* gray output from a store whose first image gave the channels:
                       refuse a colour image rather than decode it gray */
    int out_order;
    uint64_t memory;
    /* ring and workers */
    int nslots, nthreads, pieces;
    slot *slots;
    worker *workers;
    ld_pool *pool;
    uint64_t take; /* the next batch next() returns */
    int holding;   /* the caller holds batch take - 1, its data still in its slot */
    ld_batch out;
};

/* The value of an integer / a string parameter (NULL when unset). */
#define P(r, id) ld__params_int(&(r)->params, &TABLE, (id))
#define PSTR(r, id) ld__params_str(&(r)->params, &TABLE, (id))

const ld_param_desc *ld_reader_params(size_t *n)
{
    if (n) *n = TABLE.n;
    return params;
}

int ld_reader_param_bounds(ld_reader_param p, int64_t *min, int64_t *max)
{
    const ld_param_desc *d = ld__param_table_row(&TABLE, (int)p);
    if (!d) return LD_EINVAL;
    if (min) *min = d->min;
    if (max) *max = d->max;
    return LD_OK;
}

/* torchvision's defaults: scale (0.08, 1), ratio (3/4, 4/3) */
static void rrc_defaults(ld_reader *r, int p)
{
    double *v = p == LD_R_RRC_SCALE ? r->rrc_scale : r->rrc_ratio;
    v[0] = p == LD_R_RRC_SCALE ? 0.08 : 3.0 / 4.0;
    v[1] = p == LD_R_RRC_SCALE ? 1.0 : 4.0 / 3.0;
}

ld_reader *ld_reader_create(void)
{
    ld_reader *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    ld__params_init(&r->params, &TABLE);
    r->scale = 1.0f;
    rrc_defaults(r, LD_R_RRC_SCALE);
    rrc_defaults(r, LD_R_RRC_RATIO);
    ld__err_clear(&r->err);
    return r;
}

void ld_reader_set_log(ld_reader *r, ld_log_fn fn, void *user)
{
    if (!r) return;
    r->log = fn;
    r->log_user = user;
}

const char *ld_reader_errmsg(const ld_reader *r)
{
    return r ? r->err.msg : "no reader";
}

const ld_error_detail *ld_reader_error(const ld_reader *r)
{
    static const ld_error_detail none = {LD_EINVAL, -1, NULL, -1};
    return r ? ld__err_detail(&r->err) : &none;
}

/* The row of a parameter that may be set now: LD_ESTATE after open, LD_EINVAL if unknown. */
static int settable(ld_reader *r, int p, const ld_param_desc **d)
{
    if (r->is_open) return ld__err(&r->err, LD_ESTATE, "reader: parameters are set before open");
    if (!(*d = ld__params_row(&r->params, p)))
        return ld__err(&r->err, LD_EINVAL, "reader: unknown parameter %d", p);
    return LD_OK;
}

int ld_reader_set(ld_reader *r, ld_reader_param p, int64_t v)
{
    const ld_param_desc *d;
    int rc = settable(r, (int)p, &d);
    return rc < 0 ? rc : ld__params_set(&r->params, &r->err, (int)p, v);
}

int ld_reader_get(const ld_reader *r, ld_reader_param p, int64_t *v)
{
    return ld__params_get(&r->params, (int)p, v);
}

int ld_reader_get_info(const ld_reader *r, ld_reader_info p, int64_t *v)
{
    if (p < LD_R_INFO_SAMPLES || p > LD_R_INFO_MASK_DTYPE) return LD_EINVAL;
    if (!r->is_open) return LD_ESTATE;
    switch (p) {
    case LD_R_INFO_SAMPLES: *v = (int64_t)r->store->info.n; break;
    case LD_R_INFO_EPOCH_SAMPLES:
        *v = (int64_t)(P(r, LD_R_DROP_LAST) ? r->share / r->bsize * r->bsize : r->share);
        break;
    case LD_R_INFO_EPOCH_BATCHES: *v = (int64_t)r->nbatches; break;
    case LD_R_INFO_C: *v = r->xf.c; break;
    case LD_R_INFO_H: *v = r->xf.oh; break;
    case LD_R_INFO_W: *v = r->xf.ow; break;
    case LD_R_INFO_PREFETCH: *v = r->nslots - 1; break;
    case LD_R_INFO_THREADS: *v = r->nthreads; break;
    case LD_R_INFO_MEMORY: *v = (int64_t)r->memory; break;
    case LD_R_INFO_ENCODED: *v = r->store->info.encoded; break;
    case LD_R_INFO_ORDER: *v = r->out_order; break;
    case LD_R_INFO_LABEL_K: *v = r->store->info.label_k; break;
    case LD_R_INFO_MASK: *v = r->store->info.mask_h ? 1 + r->store->info.mask_is_label : 0; break;
    case LD_R_INFO_BOXES: *v = r->store->info.boxes; break;
    case LD_R_INFO_MASK_DTYPE:
        *v = !r->store->info.mask_h          ? 0
             : r->store->info.mask_elem == 2 ? LD_DTYPE_U16
                                             : LD_DTYPE_U8;
        break;
    }
    return LD_OK;
}

int ld_reader_crop_box(const ld_reader *r, uint64_t epoch, uint64_t index, int src_w, int src_h,
                       ld_crop_box *box)
{
    if (!r || !box || !P(r, LD_R_RRC_W) || !P(r, LD_R_RRC_H) || src_w < 1 || src_h < 1)
        return LD_EINVAL;
    ld_rrc q = {.w = (int)P(r, LD_R_RRC_W),
                .h = (int)P(r, LD_R_RRC_H),
                .scale = {r->rrc_scale[0], r->rrc_scale[1]},
                .ratio = {r->rrc_ratio[0], r->rrc_ratio[1]},
                .seed = (uint64_t)P(r, LD_R_SEED)};
    int b[4];
    ld__rrc_box(&q, epoch, index, src_w, src_h, b);
    box->x = b[0];
    box->y = b[1];
    box->w = b[2];
    box->h = b[3];
    box->mirror = 0;
    if (P(r, LD_R_MIRROR)) { /* xform.c's draw: the first of the sample's plain stream */
        ld_rng g = ld__rng_sample((uint64_t)P(r, LD_R_SEED), epoch, index);
        box->mirror = (int)(ld__rng_next(&g) >> 63);
    }
    return LD_OK;
}

int ld_reader_set_double(ld_reader *r, ld_reader_param p, double value)
{
    const ld_param_desc *d;
    int rc = settable(r, (int)p, &d);
    if (rc < 0) return rc;
    if (d->type != LD_PARAM_DOUBLE) return ld__param_wrong_type(&r->err, "reader", d);
    if (!isfinite(value) || !isfinite((float)value))
        return (ld__err(&r->err, LD_EINVAL, "reader: %s = %g is not a finite float32 number",
                        d->name, value),
                ld__err_param(&r->err, d->id));
    r->scale = (float)value;
    return LD_OK;
}

int ld_reader_set_floats(ld_reader *r, ld_reader_param p, const float *values, size_t n)
{
    const ld_param_desc *d;
    int rc = settable(r, (int)p, &d);
    if (rc < 0) return rc;
    if (d->type != LD_PARAM_FLOATS) return ld__param_wrong_type(&r->err, "reader", d);
    if (n > (size_t)d->max || (n && !values))
        return (ld__err(&r->err, LD_EINVAL, "reader: %s takes 0 to %lld numbers, not %zu", d->name,
                        (long long)d->max, n),
                ld__err_param(&r->err, d->id));
    for (size_t k = 0; k < n; k++)
        if (!isfinite(values[k]))
            return (
                ld__err(&r->err, LD_EINVAL, "reader: %s: value %zu is not finite", d->name, k + 1),
                ld__err_param(&r->err, d->id));
    if (p == LD_R_RRC_SCALE || p == LD_R_RRC_RATIO) {
        if (n && n != 2)
            return (ld__err(&r->err, LD_EINVAL,
                            "reader: %s takes two numbers min,max (e.g. %s), not %zu", d->name,
                            d->def_text, n),
                    ld__err_param(&r->err, d->id));
        if (n && !(values[0] > 0 && values[0] <= values[1]))
            return (ld__err(&r->err, LD_EINVAL,
                            "reader: %s = %g,%g: it needs 0 < min <= max (e.g. %s)", d->name,
                            (double)values[0], (double)values[1], d->def_text),
                    ld__err_param(&r->err, d->id));
        double *v = p == LD_R_RRC_SCALE ? r->rrc_scale : r->rrc_ratio;
        if (n) {
            v[0] = values[0];
            v[1] = values[1];
        } else {
            rrc_defaults(r, p);
        }
        return LD_OK;
    }
    if (n) memcpy(r->mean_vals, values, sizeof(float) * n);
    r->n_mean = (int)n;
    return LD_OK;
}

int ld_reader_set_mean_image(ld_reader *r, const float *data, int c, int h, int w)
{
    const ld_param_desc *d;
    int rc = settable(r, LD_R_MEAN_FILE, &d);
    if (rc < 0) return rc;
    float *copy = NULL;
    if (data) {
        if (c < 1 || c > 4 || h < 1 || w < 1 || (uint64_t)h * (uint64_t)w > ((uint64_t)1 << 28))
            return ld__err(&r->err, LD_EINVAL,
                           "reader: a mean image of %d x %d x %d: it needs "
                           "1 to 4 channels and a height and width of at least 1",
                           c, h, w);
        const size_t n = (size_t)c * (size_t)h * (size_t)w;
        for (size_t k = 0; k < n; k++)
            if (!isfinite(data[k]))
                return ld__err(&r->err, LD_EINVAL,
                               "reader: mean image: value %zu is not "
                               "finite",
                               k);
        if (!(copy = malloc(n * sizeof(float))))
            return ld__err(&r->err, LD_ENOMEM, "out of memory copying the mean image");
        memcpy(copy, data, n * sizeof(float));
    }
    free(r->mean_given);
    r->mean_given = copy;
    r->mean_given_c = c;
    r->mean_given_h = h;
    r->mean_given_w = w;
    if (copy) { /* it replaces a mean file */
        ld__params_clear_str(&r->params, LD_R_MEAN_FILE);
    }
    return LD_OK;
}

int ld_reader_set_str(ld_reader *r, ld_reader_param p, const char *value)
{
    const ld_param_desc *d;
    int rc = settable(r, (int)p, &d);
    if (rc == LD_OK) rc = ld__params_set_str(&r->params, &r->err, (int)p, value);
    if (rc == LD_OK && p == LD_R_MEAN_FILE && value) { /* a mean file replaces a mean image */
        free(r->mean_given);
        r->mean_given = NULL;
    }
    return rc;
}

/* ---- workers ------------------------------------------------------------------------------ */

/* Where the pixel paths put one label per sample: nowhere for label vectors (put_vectors). */
#define LABELS(r, sl) ((r)->store->info.label_k ? NULL : (sl)->labels)

/* Store the label of sample i at position j of a slot, in the label dtype asked for. A label
 * the dtype cannot hold exactly is an error, never clipped: int32 takes whole numbers in its
 * range (not 2.5, NaN or 1e12); float32 takes integer labels up to 2^24 exactly (16777217
 * is refused) and floating point labels rounded to float32 like any float64 -> float32
 * conversion, except a finite value it would turn into infinity. */
static int put_label(const ld_reader *r, void *labels, size_t j, double v, uint64_t i, ld_err *e)
{
    if (r->store->info.label_k && !labels) return LD_OK; /* vectors: see put_vectors */
    if (P(r, LD_R_LABEL_DTYPE) == LD_DTYPE_F32) {
        const float f = (float)v;
        if (isfinite(v) && (!isfinite(f) || (!r->store->info.label_float && (double)f != v)))
            return (ld__err(e, LD_EINVAL,
                            "sample %llu: label %.17g does not fit float32 "
                            "exactly (float32 holds whole numbers up to 16777216); read labels "
                            "as int32 (label_dtype int32)",
                            (unsigned long long)i, v),
                    ld__err_where(e, NULL, (int64_t)i), ld__err_param(e, LD_R_LABEL_DTYPE));
        ((float *)labels)[j] = f;
    } else {
        if (!(v >= (double)INT32_MIN && v <= (double)INT32_MAX && v == floor(v)))
            return (ld__err(e, LD_EINVAL,
                            "sample %llu: label %.17g is not a whole number in "
                            "the int32 range; read labels as float32 (label_dtype float32)",
                            (unsigned long long)i, v),
                    ld__err_where(e, NULL, (int64_t)i), ld__err_param(e, LD_R_LABEL_DTYPE));
        ((int32_t *)labels)[j] = (int32_t)v;
    }
    return LD_OK;
}

/* Decode the encoded sample i (record rec) into w->img and check it against the output
 * geometry. Every failure names the sample ("sample N") in w->err's message. */
static int decode_sample(const ld_reader *r, worker *w, uint64_t i, const ld_rec *rec)
{
    int rc = LD_OK;
    const ld_store_info *in = &r->store->info;
    ld_decode_opts o = {
        .channels = r->xf.c, .max_pixels = (uint64_t)1 << 28, .apply_orientation = 1};
    if (P(r, LD_R_DCT_SCALE)) {
        o.min_w = r->xf.ow;
        o.min_h = r->xf.oh;
    }
    char name[48];
    snprintf(name, sizeof name, "sample %llu", (unsigned long long)i);
    if (r->check_gray) {
        ld_img_info ii;
        LD_TRY(ld__img_info(w->codec, rec->data, rec->len, name, &ii, &w->err));
        LD_CHECK(&w->err, ii.channels == 1, LD_EFORMAT,
                 "sample %llu is a colour image "
                 "but the first sample, which gives the dataset its shape, is gray: set "
                 "channels to 3 to read every image in colour (force_color in Caffe) or "
                 "to 1 to read them gray (force_gray)",
                 (unsigned long long)i);
    }
    if (r->rrc.w) { /* crop and resample to the output size (rrc.c) */
        LD_TRY(ld__rrc_encoded(&r->rrc, w->codec, &w->rrc, rec->data, rec->len, name, &o, r->epoch,
                               i, &w->err));
        LD_CHECK(&w->err, w->rrc.out.c == r->xf.c, LD_EFORMAT, "sample %llu: %d channels, not %d",
                 (unsigned long long)i, w->rrc.out.c, r->xf.c);
        return LD_OK;
    }
    LD_TRY(ld__img_decode(w->codec, rec->data, rec->len, name, &o, &w->img, &w->err));
    const ld_image *im = &w->img;
    LD_CHECK(&w->err, im->c == r->xf.c, LD_EFORMAT, "sample %llu: %d channels, not %d",
             (unsigned long long)i, im->c, r->xf.c);
    /* Without a crop the output size is the dataset's common size: an image of
     * another size is a corrupt file, not something to crop silently. */
    LD_CHECKP(&w->err, P(r, LD_R_CROP_W) || (im->w == r->xf.ow && im->h == r->xf.oh), LD_EFORMAT,
              in->shape_from ? LD_R_CROP_W : -1,
              "sample %llu decodes to %dx%d, not the dataset's %dx%d%s", (unsigned long long)i,
              im->w, im->h, r->xf.ow, r->xf.oh,
              in->shape_from
                  ? " (the size of the first sample: the images differ in "
                    "size; set a crop no larger than the smallest image, crop_w and crop_h "
                    "(crop_size in Caffe), or convert with resize_w and resize_h)"
                  : "");
fail:
    return rc;
}

/* Sort o[0 .. n) by ids[o[k]] (heapsort: in place, no allocation, n log n for any order). */
static void sort_by_id(uint32_t *o, size_t n, const uint64_t *ids)
{
    for (size_t end = n, start = n / 2;;) {
        if (start > 0) {
            start--;
        } else if (end > 1) {
            end--;
            const uint32_t t = o[0];
            o[0] = o[end];
            o[end] = t;
        } else {
            return;
        }
        for (size_t at = start, c; (c = 2 * at + 1) < end; at = c) { /* sift o[at] down */
            if (c + 1 < end && ids[o[c + 1]] > ids[o[c]]) c++;
            if (ids[o[c]] <= ids[o[at]]) break;
            const uint32_t t = o[at];
            o[at] = o[c];
            o[c] = t;
        }
    }
}

/* fill_piece for raw samples read straight into the batch by a store with read_gather: the
 * piece's samples in file order, each run of consecutive samples with one read into their own
 * slots. A block-shuffled batch holds whole chunks with their samples permuted (sampler.c),
 * so runs in batch order are rare while runs in file order are the rule: one vectored read
 * of up to MAX_RUN_BYTES instead of one read per sample (a cold cache then sees large
 * requests, as dd does). The batch's bytes and indices are the same. */
static int fill_sorted(ld_reader *r, worker *w, slot *sl, size_t j0, size_t j1, uint64_t *cur)
{
    int rc = LD_OK;
    ld_store *st = r->store;
    const uint64_t *ids = sl->indices;
    uint32_t *o = w->order;
    const size_t n = j1 - j0;
    uint8_t *dst[MAX_RUN];
    for (size_t k = 0; k < n; k++)
        o[k] = (uint32_t)(j0 + k);
    sort_by_id(o, n, ids);
    if (st->vt->will_read) { /* the advice in the order of the reads: file order */
        for (size_t k = 0; k < n; k++)
            w->sorted[k] = ids[o[k]];
        st->vt->will_read(st, w->cx, w->sorted, n);
    }
    for (size_t k = 0; k < n;) {
        const uint64_t i = *cur = ids[o[k]];
        size_t run = 1;
        while (k + run < n && ids[o[k + run]] == i + run && run < MAX_RUN &&
               (run + 1) * r->out_bytes <= MAX_RUN_BYTES)
            run++;
        /* (a run of one is a plain read; slots that follow each other, as in sequential
         * reading, join into one destination) */
        for (size_t m = 0; m < run; m++)
            dst[m] = sl->data + o[k + m] * r->out_bytes;
        LD_TRY(st->vt->read_gather(st, w->cx, i, run, dst, w->labels, &w->err));
        for (size_t m = 0; m < run; m++)
            LD_TRY(put_label(r, LABELS(r, sl), o[k + m], w->labels[m], i + m, &w->err));
        k += run;
    }
fail:
    return rc;
}

/* Label vectors of samples [j0, j1) of slot sl: K values each, at j * K, checked as one
 * label is (put_label). */
static int put_vectors(ld_reader *r, worker *w, slot *sl, size_t j0, size_t j1, uint64_t *cur)
{
    ld_store *st = r->store;
    const uint32_t k = st->info.label_k;
    for (size_t j = j0; j < j1; j++) {
        const uint64_t i = *cur = sl->indices[j];
        int rc = st->vt->label_vec(st, w->cx, i, w->vec, &w->err);
        for (uint32_t m = 0; rc == LD_OK && m < k; m++)
            rc = put_label(r, sl->labels, j * k + m, w->vec[m], i, &w->err);
        if (rc < 0) return rc;
    }
    return LD_OK;
}

/* The crop of an sh x sw mask (indices of `elem` bytes) at the place and mirror the image's
 * draws give sample `index` (ld__xform_place) into out (x->oh x x->ow indices). */
static int place_mask(const ld_xform *x, const uint8_t *src, int sh, int sw, size_t elem,
                      uint64_t epoch, uint64_t index, uint8_t *out, ld_err *e)
{
    if (sh < x->oh || sw < x->ow)
        return (ld__err(e, LD_EFORMAT,
                        "sample %llu: its mask is %dx%d, smaller than the %dx%d crop",
                        (unsigned long long)index, sw, sh, x->ow, x->oh),
                ld__err_where(e, NULL, (int64_t)index));
    int yo, xo, mirror;
    ld__xform_place(x, sh, sw, epoch, index, &yo, &xo, &mirror);
    const size_t row = (size_t)x->ow * elem;
    for (int y = 0; y < x->oh; y++) {
        const uint8_t *s = src + ((size_t)(y + yo) * sw + xo) * elem;
        uint8_t *o = out + (size_t)y * row;
        if (!mirror) {
            memcpy(o, s, row);
        } else if (elem == 1) {
            for (int k = 0; k < x->ow; k++)
                o[k] = s[x->ow - 1 - k];
        } else {
            uint16_t v;
            for (int k = 0; k < x->ow; k++) {
                memcpy(&v, s + (size_t)(x->ow - 1 - k) * 2, 2);
                memcpy(o + (size_t)k * 2, &v, 2);
            }
        }
    }
    return LD_OK;
}

/* Masks of samples [j0, j1) of slot sl: read, then the image's crop and mirror (the same
 * draws: xform.c's per-sample generator) or its random resized crop box (ld__rrc_box, what
 * the image's resampling used) with nearest sampling. */
static int put_masks(ld_reader *r, worker *w, slot *sl, size_t j0, size_t j1, uint64_t *cur)
{
    int rc = LD_OK;
    ld_store *st = r->store;
    const ld_store_info *in = &st->info;
    const size_t elem = (size_t)in->mask_elem;
    for (size_t j = j0; j < j1; j++) {
        const uint64_t i = *cur = sl->indices[j];
        uint8_t *out = sl->masks + j * r->mask_bytes;
        LD_TRY(st->vt->mask(st, w->cx, i, w->mask.px, &w->err));
        if (r->rrc.w) {
            int box[4], ow, oh;
            ld__rrc_box(&r->rrc, r->epoch, i, in->mask_w, in->mask_h, box);
            const ld_geometry g = {.mode = LD_RESIZE_SQUASH,
                                   .w = r->rrc.w,
                                   .h = r->rrc.h,
                                   .rect = 1,
                                   .rx = box[0],
                                   .ry = box[1],
                                   .rw = box[2],
                                   .rh = box[3]};
            LD_TRY(ld__resize_nearest(&w->mask, &g, 0, &w->mout, &ow, &oh, &w->err));
            LD_TRY(place_mask(&r->mxf, w->mout.p, oh, ow, elem, r->epoch, i, out, &w->err));
        } else {
            LD_TRY(place_mask(&r->mxf, w->mask.px, in->mask_h, in->mask_w, elem, r->epoch, i, out,
                              &w->err));
        }
    }
fail:
    return rc;
}

/* Boxes of samples [j0, j1) of slot sl: read, then moved as the image's pixels: its crop and
 * mirror (ld__xform_place: the same draws) or its random resized crop box, clipped to the
 * output; boxes left without area are dropped. */
static int put_boxes(ld_reader *r, worker *w, slot *sl, size_t j0, size_t j1, uint64_t *cur)
{
    int rc = LD_OK;
    ld_store *st = r->store;
    const ld_store_info *in = &st->info;
    const ld_xform *x = &r->xf;
    for (size_t j = j0; j < j1; j++) {
        const uint64_t i = *cur = sl->indices[j];
        uint32_t m = 0, kept = 0;
        LD_TRY(st->vt->boxes(st, w->cx, i, &sl->sbox[j], &m, &w->err));
        ld_box *b = (ld_box *)(void *)sl->sbox[j].p;
        const int sw = in->w ? in->w : sl->ssw[j], sh = in->h ? in->h : sl->ssh[j];
        double ox = 0, oy = 0, fx = 1, fy = 1; /* x' = (x - ox) * fx */
        int yo, xo, mirror;
        if (r->rrc.w) {
            int box[4];
            ld__rrc_box(&r->rrc, r->epoch, i, sw, sh, box);
            ox = box[0], oy = box[1], fx = (double)r->rrc.w / box[2],
            fy = (double)r->rrc.h / box[3];
            ld__xform_place(x, x->oh, x->ow, r->epoch, i, &yo, &xo, &mirror); /* the mirror */
        } else {
            ld__xform_place(x, sh, sw, r->epoch, i, &yo, &xo, &mirror);
            ox = xo, oy = yo;
        }
        for (uint32_t k = 0; k < m; k++) {
            ld_box v = b[k];
            float x1 = (float)((v.x1 - ox) * fx), x2 = (float)((v.x2 - ox) * fx);
            float y1 = (float)((v.y1 - oy) * fy), y2 = (float)((v.y2 - oy) * fy);
            x1 = x1 < 0 ? 0 : x1 > x->ow ? (float)x->ow : x1;
            x2 = x2 < 0 ? 0 : x2 > x->ow ? (float)x->ow : x2;
            y1 = y1 < 0 ? 0 : y1 > x->oh ? (float)x->oh : y1;
            y2 = y2 < 0 ? 0 : y2 > x->oh ? (float)x->oh : y2;
            if (!(x2 > x1 && y2 > y1)) continue; /* cropped away */
            v.x1 = mirror ? (float)x->ow - x2 : x1;
            v.x2 = mirror ? (float)x->ow - x1 : x2;
            v.y1 = y1;
            v.y2 = y2;
            b[kept++] = v;
        }
        sl->snb[j] = kept;
    }
fail:
    return rc;
}

/* Fill samples [j0, j1) of batch b into slot sl. */
static int fill_piece(ld_reader *r, worker *w, slot *sl, uint64_t b, size_t j0, size_t j1)
{
    int rc = LD_OK;
    ld_store *st = r->store;
    const ld_store_info *in = &st->info;
    ld_rec rec;
    /* This piece's sample indices, computed here (the order is a pure function of the
     * position) into the slot, which reports them with the batch. */
    for (size_t j = j0; j < j1; j++)
        sl->indices[j] = ld__sampler_at(&r->order, b * r->bsize + j);
    const uint64_t *ids = sl->indices;
    uint64_t cur = ids[j0];
    if (w->order) {
        rc = fill_sorted(r, w, sl, j0, j1, &cur);
        if (rc == LD_OK && in->label_k) rc = put_vectors(r, w, sl, j0, j1, &cur);
        if (rc == LD_OK && sl->masks) rc = put_masks(r, w, sl, j0, j1, &cur);
        if (rc == LD_OK && sl->sbox) rc = put_boxes(r, w, sl, j0, j1, &cur);
        goto fail; /* names the sample on failure, as below */
    }
    if (st->vt->will_read) st->vt->will_read(st, w->cx, ids + j0, j1 - j0);
    for (size_t j = j0; j < j1; j++) {
        uint64_t i = cur = ids[j];
        uint8_t *out = sl->data + j * r->out_bytes;
        sl->indices[j] = i;
        size_t run = 1;
        if (r->direct_out && st->vt->read_run)
            while (j + run < j1 && ids[j + run] == i + run && run < MAX_RUN &&
                   (run + 1) * r->out_bytes <= MAX_RUN_BYTES)
                run++;
        if (run > 1) {
            /* Neighbours in storage order (sequential reading): one large read. */
            LD_TRY(st->vt->read_run(st, w->cx, i, run, out, w->labels, &w->err));
            for (size_t k = 0; k < run; k++) {
                sl->indices[j + k] = i + k;
                LD_TRY(put_label(r, LABELS(r, sl), j + k, w->labels[k], i + k, &w->err));
            }
            j += run - 1;
            continue;
        }
        if (r->direct_out) {
            LD_TRY(st->vt->read(st, w->cx, i, out, r->out_bytes, &rec, &w->err));
            if (rec.data != out) memcpy(out, rec.data, r->out_bytes);
        } else if (!in->encoded) {
            LD_TRY(st->vt->read(st, w->cx, i, w->scratch, in->sample_bytes, &rec, &w->err));
            ld_xsrc src = {rec.data,
                           in->dtype == LD_SDT_F32   ? LD_XE_F32
                           : in->dtype == LD_SDT_U16 ? LD_XE_U16
                                                     : LD_XE_U8,
                           in->h,
                           in->w,
                           (size_t)in->h * in->w,
                           (size_t)in->w,
                           1};
            if (r->rrc.w) {
                LD_TRY(ld__rrc_raw(&r->rrc, &w->rrc, rec.data, in->c, in->h, in->w, r->epoch, i,
                                   &w->err));
                const ld_image *im = &w->rrc.out;
                src = (ld_xsrc){im->px, 0, im->h, im->w, 1, (size_t)im->w * im->c, (size_t)im->c};
            }
            LD_TRY(ld__xform_apply(&r->xf, &src, r->epoch, i, out, &w->err));
        } else {
            LD_TRY(st->vt->read(st, w->cx, i, NULL, 0, &rec, &w->err));
            if ((rc = decode_sample(r, w, i, &rec)) < 0) {
                ld__err_where(&w->err, NULL, (int64_t)i); /* its messages name the sample */
                goto fail;
            }
            const ld_image *im = r->rrc.w ? &w->rrc.out : &w->img;
            ld_xsrc src = {im->px, 0, im->h, im->w, 1, (size_t)im->w * im->c, (size_t)im->c};
            LD_TRY(ld__xform_apply(&r->xf, &src, r->epoch, i, out, &w->err));
            if (sl->ssw && !r->rrc.w) { /* the boxes' source: this image's decoded size */
                sl->ssw[j] = im->w;
                sl->ssh[j] = im->h;
            }
        }
        LD_TRY(put_label(r, LABELS(r, sl), j, rec.label, i, &w->err));
    }
    if (in->label_k) rc = put_vectors(r, w, sl, j0, j1, &cur);
    if (rc == LD_OK && sl->masks) rc = put_masks(r, w, sl, j0, j1, &cur);
    if (rc == LD_OK && sl->sbox) rc = put_boxes(r, w, sl, j0, j1, &cur);
fail:
    /* A failure whose message names the sample records it (err.sample); name it otherwise. */
    if (rc < 0 && w->err.sample < 0) {
        char tmp[LD_ERRMSG_MAX];
        snprintf(tmp, sizeof tmp, "%s", w->err.msg);
        ld__format_msg(w->err.msg, sizeof w->err.msg, "%s (reading sample %llu)", tmp,
                       (unsigned long long)cur);
        ld__err_where(&w->err, NULL, (int64_t)cur);
    }
    return rc;
}

static size_t batch_len(const ld_reader *r, uint64_t b)
{
    uint64_t start = b * r->bsize;
    return (size_t)(r->share - start < r->bsize ? r->share - start : r->bsize);
}

/* Batch b is cut into at most `pieces` pieces, one per thread, never more than samples. */
static int batch_pieces(void *user, uint64_t b)
{
    const ld_reader *r = user;
    const size_t n = batch_len(r, b);
    return (size_t)r->pieces < n ? r->pieces : (int)n;
}

/* A pool task: fill piece pc of `pieces` of batch b into its ring slot. */
static int fill_task(void *user, int thread, uint64_t b, int pc, int pieces, ld_err *e)
{
    ld_reader *r = user;
    worker *w = &r->workers[thread];
    slot *sl = &r->slots[b % (uint64_t)r->nslots];
    const size_t n = batch_len(r, b);
    const size_t j0 = n * (size_t)pc / (size_t)pieces, j1 = n * (size_t)(pc + 1) / (size_t)pieces;
    const int rc = fill_piece(r, w, sl, b, j0, j1);
    if (rc < 0) {
        /* A store's failure names its file (and records it); name the dataset otherwise, or
         * when the file is a member of a --split list. */
        if (w->err.path[0] && !strcmp(w->err.path, r->path)) {
            *e = w->err;
        } else {
            ld__err(e, rc, "%s: %s", r->path, w->err.msg);
            ld__err_param(e, w->err.param);
            ld__err_where(e, w->err.path[0] ? w->err.path : NULL, w->err.sample);
        }
        if (!e->path[0]) ld__err_where(e, r->path, -1);
    }
    return rc;
}

/* The boxes of a batch's n samples in one set of arrays (the batch's): offsets, corners,
 * labels, flags. */
static int pack_boxes(ld_reader *r, slot *sl, size_t n, ld_batch *o)
{
    int rc = LD_OK;
    o->n_boxes = 0;
    o->boxes = NULL;
    o->box_labels = NULL;
    o->box_flags = NULL;
    o->box_offsets = NULL;
    if (!sl->sbox) return LD_OK;
    size_t total = 0;
    for (size_t j = 0; j < n; j++)
        total += sl->snb[j];
    const size_t t1 = total ? total : 1;
    LD_CHECK(&r->err,
             ld__buf_reserve(&sl->pbox, t1 * 16) == LD_OK &&
                 ld__buf_reserve(&sl->plab, t1 * 4) == LD_OK &&
                 ld__buf_reserve(&sl->pflag, t1) == LD_OK &&
                 ld__buf_reserve(&sl->poff, (n + 1) * 8) == LD_OK,
             LD_ENOMEM, "reader: out of memory for %zu boxes", total);
    float *xy = (float *)(void *)sl->pbox.p;
    int32_t *lab = (int32_t *)(void *)sl->plab.p;
    uint64_t *off = (uint64_t *)(void *)sl->poff.p;
    size_t at = 0;
    for (size_t j = 0; j < n; j++) {
        off[j] = at;
        const ld_box *b = (const ld_box *)(const void *)sl->sbox[j].p;
        for (uint32_t k = 0; k < sl->snb[j]; k++, at++) {
            xy[4 * at] = b[k].x1, xy[4 * at + 1] = b[k].y1;
            xy[4 * at + 2] = b[k].x2, xy[4 * at + 3] = b[k].y2;
            lab[at] = b[k].label;
            sl->pflag.p[at] = (uint8_t)b[k].flags;
        }
    }
    off[n] = at;
    o->n_boxes = total;
    o->boxes = xy;
    o->box_labels = lab;
    o->box_flags = sl->pflag.p;
    o->box_offsets = off;
fail:
    return rc;
}

/* ---- open / close ------------------------------------------------------------------------ */

static void close_reader(ld_reader *r)
{
    ld__pool_free(r->pool); /* joins the workers before their state is freed */
    r->pool = NULL;
    if (r->workers) {
        for (int k = 0; k < r->nthreads; k++) {
            worker *w = &r->workers[k];
            if (w->cx) r->store->vt->ctx_free(r->store, w->cx);
            free(w->scratch);
            free(w->vec);
            ld__image_free(&w->mask);
            ld__buf_free(&w->mout);
            free(w->order);
            free(w->sorted);
            ld__codec_free(w->codec);
            ld__image_free(&w->img);
            ld__rrc_scratch_free(&w->rrc);
        }
        free(r->workers);
        r->workers = NULL;
    }
    if (r->slots) {
        for (int k = 0; k < r->nslots; k++) {
            free(r->slots[k].data);
            free(r->slots[k].labels);
            free(r->slots[k].indices);
            free(r->slots[k].masks);
            slot *s = &r->slots[k];
            for (uint64_t j = 0; s->sbox && j < r->cap; j++)
                ld__buf_free(&s->sbox[j]);
            free(s->sbox);
            free(s->snb);
            free(s->ssw);
            free(s->ssh);
            ld__buf_free(&s->pbox);
            ld__buf_free(&s->plab);
            ld__buf_free(&s->pflag);
            ld__buf_free(&s->poff);
        }
        free(r->slots);
        r->slots = NULL;
    }
    if (r->store) r->store->vt->close(r->store);
    r->store = NULL;
    free(r->mean_img);
    r->mean_img = NULL;
    free(r->path);
    r->path = NULL;
    r->is_open = 0;
    r->holding = 0;
    r->nthreads = r->nslots = 0;
}

void ld_reader_free(ld_reader *r)
{
    if (!r) return;
    close_reader(r);
    ld__params_free(&r->params);
    free(r->mean_given);
    free(r);
}

static void logf_(ld_reader *r, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void logf_(ld_reader *r, int level, const char *fmt, ...)
{
    if (!r->log) return;
    char msg[LD_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    ld__vformat_msg(msg, sizeof msg, fmt, ap); /* a long path loses its middle, not the reason */
    va_end(ap);
    r->log(r->log_user, level, msg);
}

/* Load the mean file (Caffe binaryproto or NumPy .npy) and check it against the source and
 * crop sizes. */
static int load_mean(ld_reader *r, int sh, int sw, ld_err *e)
{
    int rc = LD_OK;
    ld_mean m = {0};
    char how[48];
    const char *path = PSTR(r, LD_R_MEAN_FILE);
    if (!path) { /* the image given with ld_reader_set_mean_image, C x H x W */
        path = "reader: mean image";
        const size_t n = (size_t)r->mean_given_c * r->mean_given_h * r->mean_given_w;
        m.c = r->mean_given_c;
        m.h = r->mean_given_h;
        m.w = r->mean_given_w;
        m.data = malloc(n * sizeof(float));
        LD_CHECK(e, m.data, LD_ENOMEM, "out of memory copying the mean image");
        memcpy(m.data, r->mean_given, n * sizeof(float));
    } else {
        LD_TRY(ld__mean_read(path, &m, e));
    }
    LD_TRY(ld__mean_arrange(&m, path, r->xf.c, sh, sw, r->xf.oh, r->xf.ow, how, sizeof how, e));
    if (m.npy_ndim)
        logf_(r, LD_LOG_INFO, "reader: mean file %s: a .npy array read as %s (%dx%dx%d)", path, how,
              m.c, m.h, m.w);
    LD_CHECK(e,
             m.c == r->xf.c && ((m.h == sh && m.w == sw) || (m.h == r->xf.oh && m.w == r->xf.ow)),
             LD_EINVAL,
             "%s: mean image is %dx%dx%d; it must be %dx%dx%d (the samples) or "
             "%dx%dx%d (the crop)",
             path, m.c, m.h, m.w, r->xf.c, sh, sw, r->xf.c, r->xf.oh, r->xf.ow);
    r->mean_img = m.data;
    m.data = NULL;
    r->xf.mean_img = r->mean_img;
    r->xf.mh = m.h;
    r->xf.mw = m.w;
fail:
    ld__mean_free(&m);
    return rc;
}

/* One batch buffer of the ring. Buffers of 2 MiB or more are 2 MiB aligned and asked to be
 * backed by transparent huge pages (MADV_HUGEPAGE; these machines' THP setting is "madvise",
 * so without the hint they get 4 KiB pages): the batch is written once per batch by pread at
 * memory speed, and 4 KiB pages cost a TLB miss every 4 KiB of it, and 512 times the page
 * faults when the ring is touched at open. The kernel may ignore the hint: the buffer works
 * the same. Freed with free(). */
static void *ring_alloc(size_t bytes)
{
#if defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (bytes >= huge) {
        void *p = NULL;
        if (posix_memalign(&p, huge, bytes) != 0) return NULL;
        /* whole huge pages only: the tail of the last one is shared with the heap */
        const size_t whole = bytes / huge * huge;
        madvise(p, whole, MADV_HUGEPAGE);
        return p;
    }
#endif
    return malloc(bytes);
}

static int alloc_ring(ld_reader *r, ld_err *e)
{
    int rc = LD_OK;
    r->slots = calloc((size_t)r->nslots, sizeof(slot));
    LD_CHECK(e, r->slots, LD_ENOMEM, "out of memory");
    for (int k = 0; k < r->nslots; k++) {
        slot *s = &r->slots[k];
        /* Touch every page now (calloc of a large block is lazily zero-mapped): the faults are
         * paid once at open, not during the first epoch. */
        s->data = ring_alloc(r->cap * r->out_bytes);
        if (s->data) memset(s->data, 0, r->cap * r->out_bytes);
        const size_t lk = r->store->info.label_k ? r->store->info.label_k : 1;
        s->labels = malloc(r->cap * 4 * lk);
        s->indices = malloc(r->cap * sizeof(uint64_t));
        LD_CHECK(e, s->data && s->labels && s->indices, LD_ENOMEM,
                 "out of memory for batch buffer %d of %d (%zu bytes each)", k + 1, r->nslots,
                 (size_t)(r->cap * r->out_bytes));
        memset(s->labels, 0, r->cap * 4 * lk);
        memset(s->indices, 0, r->cap * sizeof(uint64_t));
        if (r->store->info.boxes) {
            s->sbox = calloc(r->cap, sizeof *s->sbox);
            s->snb = calloc(r->cap, sizeof *s->snb);
            s->ssw = calloc(r->cap, sizeof *s->ssw);
            s->ssh = calloc(r->cap, sizeof *s->ssh);
            LD_CHECK(e, s->sbox && s->snb && s->ssw && s->ssh, LD_ENOMEM, "out of memory");
        }
        if (r->mask_bytes) {
            s->masks = ring_alloc(r->cap * r->mask_bytes);
            LD_CHECK(e, s->masks, LD_ENOMEM, "out of memory for the masks of batch buffer %d", k);
            memset(s->masks, 0, r->cap * r->mask_bytes);
        }
    }
fail:
    return rc;
}

/* open, step 1: the store, and the parameters that must agree with it. */
static int open_store(ld_reader *r, const char *path)
{
    int rc = LD_OK;
    ld_err *e = &r->err;
    ld_store_opts so = {PSTR(r, LD_R_DATA_NAME), PSTR(r, LD_R_LABEL_NAME),
                        P(r, LD_R_ORDER) != LD_ORDER_SEQUENTIAL};
    r->path = ld__strdup(path);
    LD_CHECK(e, r->path, LD_ENOMEM, "out of memory");
    LD_CHECK(e, P(r, LD_R_RANK) < P(r, LD_R_WORLD), LD_EINVAL,
             "reader: rank %lld is not below world "
             "%lld",
             (long long)P(r, LD_R_RANK), (long long)P(r, LD_R_WORLD));
    LD_CHECKP(e, (P(r, LD_R_CROP_W) == 0) == (P(r, LD_R_CROP_H) == 0), LD_EINVAL, LD_R_CROP_W,
              "reader: set both crop_w and crop_h, or neither");
    LD_TRY(ld__store_open(path, &so, &r->store, e));
    const ld_store_info *in = &r->store->info;
    LD_CHECK(e, in->n > 0, LD_EFORMAT, "%s: the dataset holds no sample", path);
    LD_CHECK(e, in->n >= (uint64_t)P(r, LD_R_WORLD), LD_EINVAL,
             "%s: %llu samples cannot be shared "
             "by %lld ranks",
             path, (unsigned long long)in->n, (long long)P(r, LD_R_WORLD));
    LD_CHECK(e, in->c >= 1 && in->c <= 4, LD_EFORMAT, "%s: %d channels are not supported", path,
             in->c);
    const int want_c = (int)P(r, LD_R_CHANNELS);
    LD_CHECK(e, want_c == 0 || want_c == 1 || want_c == 3, LD_EINVAL,
             "reader: channels must be 0 (as stored), 1 (gray) or 3 (color), not %d", want_c);
    LD_CHECK(e, want_c == 0 || in->encoded || want_c == in->c, LD_EINVAL,
             "%s: channels = %d applies to encoded images only; this dataset stores %d-channel "
             "pixels",
             path, want_c, in->c);
fail:
    return rc;
}

/* Equal as the float32 values ld_reader_set_floats() takes, or their 6-digit spelling. */
static int near(double a, double b)
{
    return fabs(a - b) <= 1e-5 * fabs(b);
}

/* The random resized crop's settings (r->rrc), and the settings it excludes. */
static int plan_rrc(ld_reader *r, const char *path)
{
    int rc = LD_OK;
    ld_err *e = &r->err;
    const ld_store_info *in = &r->store->info;
    memset(&r->rrc, 0, sizeof r->rrc);
    if (!P(r, LD_R_RRC_W) && !P(r, LD_R_RRC_H)) {
        LD_CHECKP(e,
                  !P(r, LD_R_RRC_FULL_DECODE) && P(r, LD_R_RRC_FILTER) == LD_RRC_FILTER_BILINEAR &&
                      near(r->rrc_scale[0], 0.08) && near(r->rrc_scale[1], 1.0) &&
                      near(r->rrc_ratio[0], 3.0 / 4.0) && near(r->rrc_ratio[1], 4.0 / 3.0),
                  LD_EINVAL, LD_R_RRC_W,
                  "reader: rrc_full_decode, rrc_filter, rrc_scale and rrc_ratio set the random "
                  "resized crop, which is off: set its output size too (rrc_w and rrc_h)");
        return LD_OK;
    }
    LD_CHECKP(e, P(r, LD_R_RRC_W) && P(r, LD_R_RRC_H), LD_EINVAL, LD_R_RRC_W,
              "reader: set both rrc_w and rrc_h (the random resized crop's output size), or "
              "neither");
    LD_CHECKP(e, !P(r, LD_R_CROP_W) && !P(r, LD_R_CROP_H), LD_EINVAL, LD_R_CROP_W,
              "reader: crop_w/crop_h and the random resized crop (rrc_w, rrc_h) exclude each "
              "other: the random resized crop picks its own box and resamples it to rrc_w x "
              "rrc_h; unset crop_w and crop_h");
    LD_CHECKP(e, !P(r, LD_R_RANDOM_CROP), LD_EINVAL, LD_R_RANDOM_CROP,
              "reader: random_crop and the random resized crop (rrc_w, rrc_h) exclude each "
              "other: the random resized crop places its box at random already; unset "
              "random_crop");
    LD_CHECKP(e, !P(r, LD_R_DCT_SCALE), LD_EINVAL, LD_R_DCT_SCALE,
              "reader: dct_scale applies to crop_w/crop_h; the random resized crop (rrc_w, "
              "rrc_h) picks its own DCT scale per box (rrc_full_decode decodes whole images "
              "instead); unset dct_scale");
    LD_CHECKP(e, in->encoded || in->dtype == LD_SDT_U8, LD_EINVAL, LD_R_RRC_W,
              "%s: the random resized crop (rrc_w, rrc_h) resamples 8-bit pixels and this "
              "dataset stores %s ones: read it without rrc_w/rrc_h, or convert the images "
              "to uint8 (or encoded) pixels",
              path, in->dtype == LD_SDT_U16 ? "16-bit" : "float32");
    r->rrc.w = (int)P(r, LD_R_RRC_W);
    r->rrc.h = (int)P(r, LD_R_RRC_H);
    memcpy(r->rrc.scale, r->rrc_scale, sizeof r->rrc.scale);
    memcpy(r->rrc.ratio, r->rrc_ratio, sizeof r->rrc.ratio);
    r->rrc.full_decode = (int)P(r, LD_R_RRC_FULL_DECODE);
    r->rrc.filter =
        P(r, LD_R_RRC_FILTER) == LD_RRC_FILTER_LANCZOS3 ? LD_FILTER_LANCZOS3 : LD_FILTER_BILINEAR;
    r->rrc.seed = (uint64_t)P(r, LD_R_SEED);
fail:
    return rc;
}

/* open, step 2, the output plan: geometry, channel order, mean and scale of one output
 * sample (r->xf, r->out_bytes), then the epoch's batches (r->order, r->nbatches, r->cap). */
static int plan_output(ld_reader *r, const char *path)
{
    int rc = LD_OK;
    ld_err *e = &r->err;
    const ld_store_info *in = &r->store->info;
    const int want_c = (int)P(r, LD_R_CHANNELS);
    ld_xform *x = &r->xf;
    memset(x, 0, sizeof(*x));
    x->out_f32 = P(r, LD_R_DTYPE) == LD_DTYPE_F32;
    x->out_u16 = P(r, LD_R_DTYPE) == LD_DTYPE_U16;
    x->nhwc = P(r, LD_R_LAYOUT) == LD_LAYOUT_NHWC;
    x->c = want_c ? want_c : in->c;
    /* Channels not recorded for every sample (a Caffe --encoded LMDB takes the first image's):
     * decoding must not turn a later colour image gray without being asked to. */
    r->check_gray = !want_c && in->encoded && x->c == 1 && in->shape_from;
    LD_TRY(plan_rrc(r, path));
    x->oh = r->rrc.h ? r->rrc.h : P(r, LD_R_CROP_H) ? (int)P(r, LD_R_CROP_H) : in->h;
    x->ow = r->rrc.w ? r->rrc.w : P(r, LD_R_CROP_W) ? (int)P(r, LD_R_CROP_W) : in->w;
    LD_CHECKP(e, x->oh > 0 && x->ow > 0, LD_EINVAL, LD_R_CROP_W,
              "%s: the images vary in size: set a crop "
              "(crop_w, crop_h) no larger than the smallest image",
              path);
    LD_CHECKP(e, r->rrc.w || ((in->h == 0 || x->oh <= in->h) && (in->w == 0 || x->ow <= in->w)),
              LD_EINVAL, LD_R_CROP_W, "%s: crop %dx%d is larger than the %dx%d samples", path,
              x->ow, x->oh, in->w, in->h);
    x->random_crop = (int)P(r, LD_R_RANDOM_CROP);
    x->mirror = (int)P(r, LD_R_MIRROR);
    x->seed = (uint64_t)P(r, LD_R_SEED);
    x->scale = r->scale;
    if (in->how && strstr(in->how, "lmdb")) {
        snprintf(r->xf_what, sizeof r->xf_what, "its Datum float_data");
    } else {
        const char *dn = PSTR(r, LD_R_DATA_NAME);
        snprintf(r->xf_what, sizeof r->xf_what, "dataset '/%s'", dn && *dn ? dn : "data");
    }
    x->what = r->xf_what;
    r->out_order = in->order == LD_SORDER_BGR   ? LD_CHANNELS_BGR
                   : in->order == LD_SORDER_RGB ? LD_CHANNELS_RGB
                                                : LD_CHANNELS_AS_STORED; /* unknown */
    /* Gray images decoded to colour (channels = 3) come out in Caffe's BGR unless the dataset
     * was made for RGB. */
    const int made = in->encoded && x->c == 3 && in->made_order != LD_SORDER_RGB
                         ? (in->made_order == LD_SORDER_UNKNOWN ? LD_SORDER_UNKNOWN : LD_SORDER_BGR)
                         : in->made_order;
    int dec_order = in->order;
    if (in->encoded && x->c == 3 && in->c != 3) {
        dec_order = LD_SORDER_RGB; /* what the decoder gives */
        r->out_order = LD_CHANNELS_RGB;
    }
    const int known = r->out_order != LD_CHANNELS_AS_STORED;
    if (P(r, LD_R_CHANNEL_ORDER) == LD_CHANNELS_AS_STORED && x->c == 3 && in->encoded &&
        (made == LD_SORDER_BGR || made == LD_SORDER_RGB) && made != dec_order) {
        /* "as stored" for JPEG means as the dataset was made: BGR unless made with --rgb */
        x->swap = 1;
    } else if (P(r, LD_R_CHANNEL_ORDER) != LD_CHANNELS_AS_STORED && x->c == 3) {
        LD_CHECKP(e, known, LD_EINVAL, LD_R_CHANNEL_ORDER,
                  "%s: the file does not record its channel "
                  "order; use swap to reverse the channels explicitly",
                  path);
        x->swap = r->out_order != P(r, LD_R_CHANNEL_ORDER);
    }
    if (P(r, LD_R_SWAP) && x->c == 3) x->swap = !x->swap;
    if (x->swap && known)
        r->out_order = r->out_order == LD_CHANNELS_BGR ? LD_CHANNELS_RGB : LD_CHANNELS_BGR;
    if (r->n_mean) {
        LD_CHECKP(e, r->n_mean == 1 || r->n_mean == x->c, LD_EINVAL, LD_R_MEAN_VALUES,
                  "reader: %d mean values for %d channels", r->n_mean, x->c);
        for (int k = r->n_mean; k < x->c; k++)
            r->mean_vals[k] = r->mean_vals[0];
        x->mean_vals = r->mean_vals;
    }
    if (PSTR(r, LD_R_MEAN_FILE) || r->mean_given)
        LD_TRY(load_mean(r, r->rrc.w ? x->oh : in->h, r->rrc.w ? x->ow : in->w, e));
    LD_CHECKP(e, x->out_f32 || (!x->mean_vals && !x->mean_img && x->scale == 1.0f), LD_EINVAL,
              LD_R_DTYPE, "reader: a mean or a scale needs float32 output (set dtype to float32)");
    ld__xform_init(x, in->h, in->w);
    if (r->rrc.w) x->plain = 0; /* the output is never the stored sample */
    size_t elems;               /* 32-bit: a 1 GiB uint8 sample is 4 GiB as float32, past size_t */
    LD_CHECK(e,
             ld__mul_size((size_t)x->c, (size_t)x->oh, &elems) &&
                 ld__mul_size(elems, (size_t)x->ow, &elems) &&
                 ld__mul_size(elems,
                              x->out_f32   ? 4
                              : x->out_u16 ? 2
                                           : 1,
                              &r->out_bytes),
             LD_ELIMIT,
             "%s: one output sample of %d x %d x %d %s is too large for this "
             "machine's address space (crop it, or use uint8 output)",
             path, x->c, x->oh, x->ow,
             x->out_f32   ? "float32"
             : x->out_u16 ? "uint16"
                          : "uint8");
    r->direct_out = !in->encoded && x->plain && in->dtype == LD_SDT_U8;
    LD_CHECK(e, !in->boxes || !r->rrc.w || (in->w && in->h), LD_EINVAL,
             "%s: its images vary in size and the random resized crop would need each one's "
             "size for its boxes: convert with a resize (resize_w, resize_h) to read boxes "
             "with rrc_w/rrc_h",
             path);
    r->mask_bytes = 0;
    if (in->mask_h) { /* masks get the image's crop and mirror: they must have its size */
        LD_CHECK(e, (in->h == 0 && in->w == 0) || (in->h == in->mask_h && in->w == in->mask_w),
                 LD_EFORMAT,
                 "%s: its masks are %dx%d but its images %dx%d: a mask must have its "
                 "image's size (rewrite the dataset)",
                 path, in->mask_w, in->mask_h, in->w, in->h);
        LD_CHECKP(e, r->rrc.w || (x->oh <= in->mask_h && x->ow <= in->mask_w), LD_EINVAL,
                  LD_R_CROP_W, "%s: crop %dx%d is larger than the %dx%d masks", path, x->ow, x->oh,
                  in->mask_w, in->mask_h);
        ld_xform *m = &r->mxf;
        *m = (ld_xform){.c = 1,
                        .oh = x->oh,
                        .ow = x->ow,
                        .random_crop = x->random_crop,
                        .mirror = x->mirror,
                        .seed = x->seed,
                        .scale = 1.0f,
                        .what = "its masks"};
        ld__xform_init(m, in->mask_h, in->mask_w);
        r->mask_bytes = (size_t)x->oh * (size_t)x->ow * (size_t)in->mask_elem;
    }

    /* Sampler. */
    const ld_sampler smp = {in->n,
                            (int)P(r, LD_R_ORDER),
                            (uint64_t)P(r, LD_R_SEED),
                            in->block ? in->block : 1,
                            (uint64_t)P(r, LD_R_WINDOW),
                            (uint64_t)P(r, LD_R_RANK),
                            (uint64_t)P(r, LD_R_WORLD)};
    r->epoch = (uint64_t)P(r, LD_R_EPOCH);
    ld__sampler_epoch(&smp, r->epoch, &r->order);
    r->share = ld__sampler_share(&smp);
    r->bsize = (uint64_t)P(r, LD_R_BATCH_SIZE);
    r->nbatches = P(r, LD_R_DROP_LAST) ? r->share / r->bsize : (r->share + r->bsize - 1) / r->bsize;
    LD_CHECK(e, r->nbatches > 0, LD_EINVAL,
             "%s: %llu samples per rank make no full batch of "
             "%llu (drop_last)",
             path, (unsigned long long)r->share, (unsigned long long)r->bsize);
    r->cap = r->bsize < r->share ? r->bsize : r->share;
fail:
    return rc;
}

/* open, step 3, the memory plan: fixed costs, then as many batch slots as the budget allows
 * (r->nslots, r->memory, r->pieces: the threads to start). */
static int plan_memory(ld_reader *r, const char *path)
{
    int rc = LD_OK;
    ld_err *e = &r->err;
    const ld_store_info *in = &r->store->info;
    const ld_xform *x = &r->xf;
    int threads = P(r, LD_R_THREADS) ? (int)P(r, LD_R_THREADS) : ld__cpu_count();
    /* Decode buffer per thread: the largest image when the store knows it, else a guess of
     * twice the crop (then the budget may be exceeded by larger images: documented). */
    uint64_t dec_bytes = !in->encoded     ? 0
                         : in->max_pixels ? in->max_pixels * (uint64_t)x->c
                         : in->h && in->w ? (uint64_t)in->h * in->w * x->c
                                          : (uint64_t)x->oh * x->ow * x->c * 2;
    uint64_t per_thread = in->ctx_bytes + (r->direct_out ? 0 : in->sample_bytes) + dec_bytes;
    if (r->rrc.w) { /* the box (encoded: decoded where dec_bytes counted the image, unused
                       then), the resampled output, and the resampler's intermediate image:
                       the box's rows by the output's width or the reverse, estimated as
                       the image plus the output (an estimate, as for undeclared image sizes) */
        const uint64_t src = in->encoded ? dec_bytes : (uint64_t)in->h * in->w * x->c;
        const uint64_t out = (uint64_t)x->oh * x->ow * x->c;
        per_thread += (in->encoded ? 0 : src) + src + 2 * out;
    }
    uint64_t fixed = in->store_bytes + (uint64_t)threads * per_thread +
                     (r->xf.mean_img ? (uint64_t)x->c * x->mh * x->mw * 4 : 0);
    const uint64_t lk = in->label_k ? in->label_k : 1; /* label values per sample */
    if (in->label_k) per_thread += lk * sizeof(double);
    if (r->mask_bytes) { /* one stored mask, and its resampled box */
        const uint64_t stored = (uint64_t)in->mask_h * in->mask_w * (uint64_t)in->mask_elem;
        per_thread += stored + (r->rrc.w ? r->mask_bytes : 0);
        fixed += (uint64_t)threads * (stored + (r->rrc.w ? r->mask_bytes : 0));
    }
    uint64_t per_sample = r->out_bytes + 4 * lk + 8 + r->mask_bytes, per_batch;
    /* boxes: a slot's sample may hold the most any sample has: as read (ld_box and the store's
     * column scratch, 45 bytes a box), packed for the batch (16 + 4 + 1), its offset */
    if (in->boxes) per_sample += (uint64_t)in->box_max * (45 + 21) + 8;
    size_t ring_bytes;
    LD_CHECK(e,
             !__builtin_mul_overflow(per_sample, r->cap, &per_batch) &&
                 ld__mul_size((size_t)r->cap, r->out_bytes, &ring_bytes) &&
                 ld__mul_size(ring_bytes, (size_t)(P(r, LD_R_PREFETCH) + 1), &ring_bytes),
             LD_ELIMIT,
             "%s: a batch of %llu samples of %zu bytes is too large for this "
             "machine's address space",
             path, (unsigned long long)r->cap, r->out_bytes);
    int prefetch = P(r, LD_R_PREFETCH) ? (int)P(r, LD_R_PREFETCH) : AUTO_PREFETCH;
    uint64_t budget = (uint64_t)P(r, LD_R_MEMORY_BUDGET);
    if (budget) {
        LD_CHECK(e, fixed < budget && (budget - fixed) / per_batch >= 1, LD_ELIMIT,
                 "%s: a batch of %llu needs %llu bytes besides %llu bytes of store and "
                 "per-thread scratch, over the memory budget of %llu bytes; the largest batch "
                 "that fits is %llu",
                 path, (unsigned long long)r->cap, (unsigned long long)per_batch,
                 (unsigned long long)fixed, (unsigned long long)budget,
                 (unsigned long long)(fixed < budget ? (budget - fixed) / per_sample : 0));
        uint64_t slots = (budget - fixed) / per_batch;
        if (!P(r, LD_R_PREFETCH))
            prefetch = (int)(slots - 1 < MAX_AUTO_PREFETCH ? slots - 1 : MAX_AUTO_PREFETCH);
        else if ((uint64_t)prefetch > slots - 1) {
            logf_(r, LD_LOG_INFO,
                  "reader: prefetch reduced from %d to %d to fit the memory "
                  "budget",
                  prefetch, (int)(slots - 1));
            prefetch = (int)(slots - 1);
        }
    }
    r->nslots = prefetch + 1;
    r->memory = fixed + (uint64_t)r->nslots * per_batch;
    r->pieces = threads;
fail:
    return rc;
}

/* open, step 4: the ring of batch slots, one worker state per thread, and the pool. */
static int start_workers(ld_reader *r, const char *path)
{
    int rc = LD_OK;
    ld_err *e = &r->err;
    const ld_store_info *in = &r->store->info;
    const int threads = r->pieces;
    LD_TRY(alloc_ring(r, e));
    r->take = 0;
    r->workers = calloc((size_t)threads, sizeof(worker));
    LD_CHECK(e, r->workers, LD_ENOMEM, "out of memory");
    r->nthreads = threads;
    for (int k = 0; k < threads; k++) {
        worker *w = &r->workers[k];
        w->r = r;
        LD_TRY(r->store->vt->ctx_create(r->store, &w->cx, e));
        if (!r->direct_out && !in->encoded) {
            w->scratch = malloc(in->sample_bytes);
            LD_CHECK(e, w->scratch, LD_ENOMEM, "out of memory");
        }
        if (r->direct_out && r->store->vt->read_gather) {
            w->order = malloc((size_t)r->cap * sizeof *w->order); /* a piece is <= a batch */
            w->sorted = malloc((size_t)r->cap * sizeof *w->sorted);
            LD_CHECK(e, w->order && w->sorted, LD_ENOMEM, "out of memory");
        }
        if (in->label_k) {
            w->vec = malloc(in->label_k * sizeof *w->vec);
            LD_CHECK(e, w->vec, LD_ENOMEM, "out of memory");
        }
        if (r->mask_bytes)
            LD_CHECK(e,
                     ld__image_alloc_depth(&w->mask, in->mask_w, in->mask_h, 1,
                                           8 * in->mask_elem) == LD_OK,
                     LD_ENOMEM, "out of memory");
        if (in->encoded) {
            w->codec = ld__codec_create();
            LD_CHECK(e, w->codec, LD_ENOMEM, "out of memory");
        }
    }
    r->is_open = 1;
    const ld_pool_opts po = {.threads = threads,
                             .window = (uint64_t)r->nslots,
                             .task = fill_task,
                             .pieces = batch_pieces,
                             .user = r};
    LD_TRY(ld__pool_create(&po, r->nbatches, &r->pool, e));
    if (r->rrc.w)
        logf_(r, LD_LOG_INFO,
              "reader: random resized crop to %dx%d, area %g-%g, ratio %g-%g, resampled %s; %s",
              r->rrc.w, r->rrc.h, r->rrc.scale[0], r->rrc.scale[1], r->rrc.ratio[0],
              r->rrc.ratio[1],
              r->rrc.filter == LD_FILTER_BILINEAR
                  ? "bilinear, antialiased (rrc_filter = bilinear: torchvision's default)"
                  : "Lanczos-3 (rrc_filter = lanczos3; torchvision's RandomResizedCrop "
                    "resamples bilinear)",
              !in->encoded ? "raw samples cropped and resampled"
              : r->rrc.full_decode
                  ? "images decoded whole (rrc_full_decode), then cropped"
                  : "JPEGs decoded over the box only, at a DCT scale that keeps it >= 1.5x the "
                    "output (rrc_full_decode = 1 decodes them whole)");
    logf_(r, LD_LOG_INFO,
          "reader: %s: %llu samples (%s), %llu per rank per epoch in %llu "
          "batches, %d threads, prefetch %d, %llu bytes",
          path, (unsigned long long)in->n, in->how ? in->how : "?", (unsigned long long)r->share,
          (unsigned long long)r->nbatches, threads, r->nslots - 1, (unsigned long long)r->memory);
fail:
    return rc;
}

/* Open: store -> output plan -> memory plan -> workers. On failure the caller closes what
 * was opened (close_reader). */
static int open_impl(ld_reader *r, const char *path)
{
    int rc = LD_OK;
    LD_TRY(open_store(r, path));
    LD_TRY(plan_output(r, path));
    LD_TRY(plan_memory(r, path));
    LD_TRY(start_workers(r, path));
fail:
    return rc;
}

int ld_reader_open(ld_reader *r, const char *path)
{
    if (!r) return LD_EINVAL;
    if (r->is_open) return ld__err(&r->err, LD_ESTATE, "reader: already open");
    ld__err_clear(&r->err);
    int rc = open_impl(r, path);
    if (rc < 0) {
        close_reader(r);
        logf_(r, LD_LOG_ERROR, "%s", r->err.msg);
    }
    return rc;
}

int ld_reader_take_data(ld_reader *r, void *replacement)
{
    if (!r) return LD_EINVAL;
    if (!replacement)
        return ld__err(&r->err, LD_EINVAL,
                       "reader: take_data needs a replacement buffer (ld_reader_buffer_alloc)");
    if (!r->is_open || !r->holding)
        return ld__err(&r->err, LD_ESTATE,
                       "reader: take_data: no batch is held (call it after ld_reader_next "
                       "returned a batch, once per batch)");
    /* The slot of batch take - 1 is not released to the workers before the next call of
     * next(), so no worker writes it now. */
    r->slots[(r->take - 1) % (uint64_t)r->nslots].data = replacement;
    r->holding = 0;
    return LD_OK;
}

void *ld_reader_buffer_alloc(const ld_reader *r, size_t *bytes)
{
    if (bytes) *bytes = 0;
    if (!r || !r->is_open) return NULL;
    const size_t n = (size_t)r->cap * r->out_bytes; /* checked to fit at open */
    uint8_t *p = ring_alloc(n);
    if (!p) return NULL;
    memset(p, 0, n); /* the faults now, not while a worker fills it */
    if (bytes) *bytes = n;
    return p;
}

void ld_reader_buffer_free(void *buffer)
{
    free(buffer);
}

int ld_reader_next(ld_reader *r, const ld_batch **b)
{
    int rc = LD_OK;
    *b = NULL;
    r->holding = 0;
    if (!r->is_open) return ld__err(&r->err, LD_ESTATE, "reader: not open");
    if (r->take == r->nbatches) {
        /* End of the epoch: every batch is finished and the workers are idle. Build the next
         * order and let them start on it right away. */
        r->epoch++;
        const ld_sampler smp = r->order.s;
        ld__sampler_epoch(&smp, r->epoch, &r->order);
        r->take = 0;
        ld__pool_restart(r->pool, r->nbatches);
        return LD_END;
    }
    ld__pool_release(r->pool, r->take); /* the caller is done with the batch it held */
    slot *sl = &r->slots[r->take % (uint64_t)r->nslots];
    rc = ld__pool_wait(r->pool, r->take, 0);
    if (rc < 0) {
        r->err = *ld__pool_error(r->pool);
        return rc;
    }
    const size_t n = batch_len(r, r->take);
    ld_batch *o = &r->out;
    o->n = n;
    o->dtype = r->xf.out_f32 ? LD_DTYPE_F32 : r->xf.out_u16 ? LD_DTYPE_U16 : LD_DTYPE_U8;
    o->layout = r->xf.nhwc ? LD_LAYOUT_NHWC : LD_LAYOUT_NCHW;
    o->c = r->xf.c;
    o->h = r->xf.oh;
    o->w = r->xf.ow;
    o->data = sl->data;
    o->data_bytes = n * r->out_bytes;
    o->label_dtype = (int)P(r, LD_R_LABEL_DTYPE);
    o->labels = sl->labels;
    o->label_k = (int)r->store->info.label_k;
    o->masks = sl->masks;
    o->mask_h = sl->masks ? r->xf.oh : 0;
    o->mask_w = sl->masks ? r->xf.ow : 0;
    o->mask_is_label = r->store->info.mask_is_label;
    o->mask_dtype = !sl->masks ? 0 : r->store->info.mask_elem == 2 ? LD_DTYPE_U16 : LD_DTYPE_U8;
    if ((rc = pack_boxes(r, sl, n, o)) < 0) return rc;
    o->indices = sl->indices;
    o->epoch = r->epoch;
    o->number = r->take;
    r->take++;
    r->holding = 1;
    *b = o;
    return LD_OK;
}
