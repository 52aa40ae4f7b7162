/*
 * The conversion pipeline:
 *
 *   caller thread ──► slot window ──► worker threads ──► slot ──► caller thread ──► writer
 *   reads the file    (W slots,        decode, resize,          in input order:      ──► rename
 *   W images ahead    bounded)         CHW or re-encode         log, progress, write
 *
 * Workers take input indices in order, but never more than W ahead of the next index the
 * caller thread will write, so memory is O(W) images whatever the number of inputs. The
 * caller thread also reads each input file into its slot before the slot's image may start
 * (slot idx % W is free once image idx - W is written): the workers, the critical path of
 * the run, only decode and resize, and a file read (open, copy from the page cache, close:
 * about 3 % of a worker's time on 44 KB photos) overlaps their work. The
 * caller thread alone touches the writer (HDF5 is not thread-safe) and alone calls the user's
 * callbacks. Because samples reach the writer in input order, the output is byte-identical
 * for any thread count.
 */
#define _GNU_SOURCE
#include "libdata/convert.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "codec/codec.h"
#include "common/ld_internal.h"
#include "common/ld_param_store.h"
#include "shard/shard.h"
#include "common/ld_params.h"
#include "resize/resize.h"
#include "source/source.h"
#include "store/desc.h"
#include "store/hdf5/h5_format.h"
#include "store/writer.h"
#include "thread/pool.h"

/* ---- parameters ------------------------------------------------------------------------ */

static const ld_param_choice FORMATS[] = {
    {"auto", LD_FORMAT_AUTO}, {"hdf5", LD_FORMAT_HDF5}, {"lmdb", LD_FORMAT_LMDB}};
static const ld_param_choice MODES[] = {{"squash", LD_RESIZE_SQUASH},
                                        {"crop", LD_RESIZE_CROP},
                                        {"pad", LD_RESIZE_PAD},
                                        {"max", LD_RESIZE_MAX}};
static const ld_param_choice CHANNELS[] = {{"bgr", LD_CHANNELS_BGR}, {"rgb", LD_CHANNELS_RGB}};
static const ld_param_choice LABEL_TYPES[] = {
    {"auto", LD_LABEL_AUTO}, {"int32", LD_LABEL_INT32}, {"float32", LD_LABEL_FLOAT32}};
static const ld_param_choice MASK_TYPES[] = {{"uint8", LD_DTYPE_U8}, {"uint16", LD_DTYPE_U16}};
static const ld_param_choice SPLIT_PATHS[] = {{"absolute", LD_SPLIT_PATHS_ABSOLUTE},
                                              {"relative", LD_SPLIT_PATHS_RELATIVE}};
static const ld_param_choice DECODE_SCALES[] = {{"auto", LD_DECODE_SCALE_AUTO},
                                                {"exact", LD_DECODE_SCALE_EXACT}};

static const ld_param_desc PARAMS[] = {
    ENUM(LD_C_FORMAT, "format", FORMATS, LD_FORMAT_AUTO, "auto", LD_FORMAT_AUTO, LD_FORMAT_LMDB,
         "output format (auto: LMDB for a name ending in "
         ".lmdb or an existing folder, else HDF5)"),
    INT(LD_C_QUALITY, "quality", 0, 0, 100, "",
        "0 = raw pixels; 1..100 = re-encode as JPEG at this quality"),
    INT(LD_C_RESIZE_W, "resize_w", 0, 0, 65535, "pixels", "target width (0 = keep)"),
    INT(LD_C_RESIZE_H, "resize_h", 0, 0, 65535, "pixels", "target height (0 = keep)"),
    ENUM(LD_C_RESIZE_MODE, "resize_mode", MODES, LD_RESIZE_SQUASH, "squash", LD_RESIZE_SQUASH,
         LD_RESIZE_MAX,
         "squash (stretch to WxH), crop (fit the shorter side, center crop), pad (fit, pad the "
         "rest), max (keep aspect, longer side at most W; variable sizes)"),
    INT(LD_C_PAD_VALUE, "pad_value", 0, 0, 255, "", "gray level of the padding (pad mode)"),
    BOOL(LD_C_GRAY, "gray", "one gray channel instead of 3"),
    ENUM(LD_C_CHANNEL_ORDER, "channel_order", CHANNELS, LD_CHANNELS_BGR, "bgr", LD_CHANNELS_BGR,
         LD_CHANNELS_RGB, "channel order of 3-channel output (bgr: Caffe, OpenCV)"),
    INT(LD_C_THREADS, "threads", 0, 0, 1024, "",
        "decoding worker threads (0 = all cores); the calling thread reads files and writes"),
    BOOL(LD_C_SHUFFLE, "shuffle", "shuffle the input order, reproducibly (see seed)"),
    INT(LD_C_SEED, "seed", 0, 0, INT64_MAX, "", "shuffle seed"),
    BOOL(LD_C_STRICT, "strict",
         "stop at the first bad input file or unreadable folder (else skip it and warn)"),
    INT(LD_C_MAX_PIXELS, "max_pixels", 100000000, 1, (int64_t)1 << 40, "pixels",
        "refuse (skip) images with more pixels"),
    INT(LD_C_SPLIT_BYTES, "split_bytes", 0, 0, INT64_MAX, "bytes",
        "HDF5: bytes of data per file, plus a list of the files (0 = one file)"),
    INT(LD_C_DEFLATE, "deflate", 0, 0, 9, "", "HDF5: deflate level for raw data (0 = none)"),
    BOOL(LD_C_CHECK_SIZE, "check_size", "all images must have the same size"),
    BOOL(LD_C_ENCODED, "encoded", "store encoded images (original bytes if no resize)"),
    BOOL(LD_C_ENCODE_PNG, "encode_png", "re-encode as PNG instead of JPEG (implies encoded)"),
    BOOL(LD_C_FLAT, "flat", "folder without class folders: every image gets label 0"),
    ENUM(LD_C_SPLIT_PATHS, "split_paths", SPLIT_PATHS, LD_SPLIT_PATHS_ABSOLUTE, "absolute",
         LD_SPLIT_PATHS_ABSOLUTE, LD_SPLIT_PATHS_RELATIVE,
         "how the split list names its files: absolute, or relative to the list's folder"),
    INT(LD_C_SHARD_INDEX, "shard_index", 0, 0, LD_SHARD_MAX - 1, "",
        "shards: the part this run converts, 0..shard_count-1"),
    INT(LD_C_SHARD_COUNT, "shard_count", 0, 0, LD_SHARD_MAX, "",
        "shards: 0 = one output; N = convert part shard_index of N contiguous parts of the "
        "whole listing into OUT-0000K-of-0000N.h5 (or .lmdb)"),
    BOOL(LD_C_RESTART_MARKERS, "restart_markers",
         "re-encoded JPEGs get restart markers: a random resized crop then decodes only its "
         "part of each image (files ~5 % larger, full decodes ~6 % slower)"),
    ENUM(LD_C_LABEL_TYPE, "label_type", LABEL_TYPES, LD_LABEL_AUTO, "auto", LD_LABEL_AUTO,
         LD_LABEL_FLOAT32,
         "list labels: auto (int32 when every line has one integer, else float32), int32, "
         "float32"),
    INT(LD_C_LABEL_COUNT, "label_count", -1, -1, 4096, "",
        "list labels per line (-1 = from the first line or the CSV header, 0 = none)"),
    ENUM(LD_C_DECODE_SCALE, "decode_scale", DECODE_SCALES, LD_DECODE_SCALE_AUTO, "auto",
         LD_DECODE_SCALE_AUTO, LD_DECODE_SCALE_EXACT,
         "JPEG inputs: auto decodes at 1/2, 1/4 or 1/8 scale when that keeps >= 2 pixels per "
         "output pixel (camera-size photos to 224: ~2x faster), exact always at full size"),
    STR(LD_C_LIST_FILE, "list_file", "",
        "a 'relative/path label...' list or a CSV file; input is then its root"),
    INT(LD_C_MASK_PAD, "mask_pad", 255, 0, 65535, "",
        "masks: class index of the padding (pad mode); 255 = Caffe's usual ignore_label"),
    ENUM(LD_C_MASK_TYPE, "mask_type", MASK_TYPES, LD_DTYPE_U8, "uint8", LD_DTYPE_U8, LD_DTYPE_U16,
         "masks: stored as uint8 (indices 0..255) or uint16 (0..65535)"),
    INT(LD_C_DEPTH, "depth", 8, 8, 16, "bits",
        "bits per stored sample: 8, or 16 (raw HDF5 uint16: 16-bit PNG/TIFF/PNM kept)"),
    BOOL(LD_C_RAW, "raw",
         "store raw pixels, also from a dataset of encoded images (decoded once; else it stays "
         "encoded)"),
    STR(LD_C_SOURCE_NOTE, "source_note", "", "free text stored with the dataset"),
    STR(LD_C_MASKS, "masks", "",
        "folder of segmentation masks: the mask of REL/name.ext is MASKS/REL/name.png (class "
        "indices)"),
    STR(LD_C_COCO, "coco", "",
        "a COCO instances JSON: its images (below the input folder) with their detection boxes"),
    STR(LD_C_VOC, "voc", "",
        "a Pascal VOC folder: its images with the boxes of Annotations/*.xml (list_file: an "
        "ImageSets list)"),
};
LD_PARAM_TABLE_DEFINE(TABLE, "convert", PARAMS, LD_C_RAW, LD_C_VOC);

/* Largest input file we read whole: no sane image file holds more than ~8 bytes per pixel
 * of the pixel limit (16-bit RGBA TIFF, uncompressed), so bigger "images" are refused rather
 * than slurped (never above 1 GiB). */
static size_t max_file_bytes(uint64_t max_pixels)
{
    const uint64_t cap = (uint64_t)1 << 30;
    return (size_t)(max_pixels > (cap >> 3) ? cap : (max_pixels << 3) + ((uint64_t)1 << 20));
}
/* JPEG quality used when images must be re-encoded but no quality was given (OpenCV's). */
#define DEFAULT_REENCODE_QUALITY 95

struct ld_convert {
    ld_param_store params; /* every LD_C_* value, by id (P, PSTR) */
    ld_log_fn log;
    void *log_user;
    ld_progress_fn progress;
    void *progress_user;
    ld_progress stats;
    ld_err err;
};

const ld_param_desc *ld_convert_params(size_t *n)
{
    if (n) *n = TABLE.n;
    return PARAMS;
}

int ld_convert_param_bounds(ld_convert_param p, int64_t *min, int64_t *max)
{
    const ld_param_desc *d = ld__param_table_row(&TABLE, (int)p);
    if (!d) return LD_EINVAL;
    if (min) *min = d->min;
    if (max) *max = d->max;
    return LD_OK;
}

ld_convert *ld_convert_create(void)
{
    ld_convert *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    ld__params_init(&c->params, &TABLE);
    ld__err_clear(&c->err);
    return c;
}

void ld_convert_free(ld_convert *c)
{
    if (!c) return;
    ld__params_free(&c->params);
    free(c);
}

int ld_convert_set(ld_convert *c, ld_convert_param p, int64_t value)
{
    return ld__params_set(&c->params, &c->err, (int)p, value);
}

int ld_convert_get(const ld_convert *c, ld_convert_param p, int64_t *value)
{
    return ld__params_get(&c->params, (int)p, value);
}

int ld_convert_set_str(ld_convert *c, ld_convert_param p, const char *value)
{
    return ld__params_set_str(&c->params, &c->err, (int)p, value);
}

void ld_convert_set_log(ld_convert *c, ld_log_fn fn, void *user)
{
    c->log = fn;
    c->log_user = user;
}

void ld_convert_set_progress(ld_convert *c, ld_progress_fn fn, void *user)
{
    c->progress = fn;
    c->progress_user = user;
}

const ld_progress *ld_convert_stats(const ld_convert *c)
{
    return &c->stats;
}

const char *ld_convert_errmsg(const ld_convert *c)
{
    return c->err.msg;
}

const ld_error_detail *ld_convert_error(const ld_convert *c)
{
    static const ld_error_detail none = {LD_EINVAL, -1, NULL, -1};
    return c ? ld__err_detail(&c->err) : &none;
}

/* The value of an integer / a string parameter (NULL when unset) of the run. */
#define P(c, id) ld__params_int(&(c)->params, &TABLE, (id))
#define PSTR(c, id) ld__params_str(&(c)->params, &TABLE, (id))

/* ---- one run --------------------------------------------------------------------------- */

/* What a worker produced for one input, handed to the caller thread through a slot. */
typedef struct slot {
    int status;  /* LD_OK, or why the file was skipped */
    int fatal;   /* the failure stops the run whatever LD_C_STRICT says */
    int read_rc; /* the caller thread's read of the file: LD_OK, or why not (err filled) */
    ld_buf path; /* the input's full path, composed by the caller thread; reused */
    ld_buf file; /* the input file's bytes, read by the caller thread; reused */
    ld_buf out;  /* raw CHW pixels or encoded bytes; reused */
    int c, h, w;
    int frames;  /* pages/frames of the input (only the first is converted) */
    int reduced; /* a 16-bit input stored as 8 bits */
    int dct;     /* the JPEG was decoded at dct/8 of its size (1, 2, 4), else 8 */
    uint64_t bytes_in;
    /* masks (LD_C_MASKS): the mask's path and file (read by the caller thread with the image),
     * and its class indices at the image's output size */
    ld_buf mpath, mfile, mout;
    int mh, mw;
    /* detection boxes: the input's, moved with the image's orientation and geometry */
    ld_buf boxes; /* nb ld_box */
    uint32_t nb, boxes_dropped;
    ld_err err; /* why, when status < 0 */
} slot;

/* Per-thread decode state, reused for every image the thread handles. */
typedef struct worker {
    struct run *run;
    ld_codec *codec;
    ld_resizer *resizer;
    ld_image dec, resized;
    ld_image mask, mtmp; /* the decoded mask, orientation scratch */
} worker;

/* An output file that exists already (and so might be one of the inputs). */
typedef struct out_file {
    uint64_t dev, ino;
    char *path;
} out_file;

typedef struct run {
    /* fixed for the run */
    ld_source *src;       /* not const: reading an archive moves its stream */
    const out_file *outs; /* existing files the run would replace; an input among them stops it */
    size_t n_outs;
    size_t n;
    int channels, order_rgb, encoded, keep_original, encode_png, quality, check_size;
    int restart_markers; /* JPEG re-encode: restart markers for the box decoder */
    int decode_exact;    /* LD_DECODE_SCALE_EXACT: no DCT-scaled decoding (also with masks,
                            whose geometry is then planned on the same size as the image's) */
    const char *masks;   /* LD_C_MASKS folder, or NULL */
    int boxes;           /* the source has detection boxes */
    unsigned mask_pad;
    int depth16;   /* LD_C_DEPTH 16: uint16 samples */
    int mask_wide; /* LD_C_MASK_TYPE uint16: masks of 2-byte indices */
    ld_geometry geom;
    uint64_t max_pixels;
    /* image idx is converted by a worker into slots[idx % window], then written by the
     * caller thread in input order (thread/pool.h) */
    size_t window;
    slot *slots;
    worker *workers;
} run;

/* Planar CHW from interleaved HWC; 3 channels are written in the dataset's order. */
static void to_chw(const ld_image *im, int order_rgb, uint8_t *dst)
{
    if (im->depth == 16) { /* uint16 samples */
        const size_t plane = (size_t)im->w * im->h;
        const uint16_t *s = (const uint16_t *)(const void *)im->px;
        uint16_t *d = (uint16_t *)(void *)dst;
        for (int k = 0; k < im->c; k++) {
            const int sc = im->c == 1 ? 0 : order_rgb ? k : 2 - k; /* BGR: B in plane 0 */
            for (size_t i = 0; i < plane; i++)
                d[(size_t)k * plane + i] = s[i * im->c + sc];
        }
        return;
    }
    const size_t plane = (size_t)im->w * im->h;
    const uint8_t *s = im->px;
    if (im->c == 1) {
        memcpy(dst, s, plane);
        return;
    }
    /* Source is RGB. BGR order puts B in plane 0. */
    const int ch[3] = {order_rgb ? 0 : 2, 1, order_rgb ? 2 : 0};
    ld__deinterleave3(s, (size_t)im->w * 3, im->h, im->w, ch, 0, dst);
}

/* The mask of the input at `rel` (relative to the input root): masks/REL/name.png, the
 * extension of the name replaced (an absolute listed path: its name only). */
static int mask_path(const char *masks, const char *rel, ld_buf *out)
{
    if (rel[0] == '/') rel = strrchr(rel, '/') + 1;
    const char *slash = strrchr(rel, '/'), *dot = strrchr(rel, '.');
    const size_t stem = dot && dot > (slash ? slash : rel) ? (size_t)(dot - rel) : strlen(rel);
    out->len = 0;
    if (ld__buf_printf(out, "%s%s%.*s.png", masks,
                       *masks && masks[strlen(masks) - 1] == '/' ? "" : "/", (int)stem, rel) < 0)
        return LD_ENOMEM;
    return LD_OK;
}

/* On the caller thread, before image idx may start: compose its path and read its file into
 * its slot. The outcome is the slot's (a file that cannot be read is skipped by the worker like
 * one that does not decode). */
static void read_ahead(run *r, size_t idx)
{
    slot *sl = &r->slots[idx % r->window];
    ld_err *e = &sl->err;
    int rc = LD_OK;
    ld_item item = {0};
    const ld_item *it = &item;

    sl->fatal = 0;
    sl->frames = 1;
    sl->dct = 8;
    sl->bytes_in = 0;
    LD_CHECK(e, ld__source_get(r->src, idx, &sl->path, &item) == LD_OK, LD_ENOMEM,
             "%s: out of memory", ld__source_rel(r->src, idx));
    if (r->n_outs) {
        /* One stat per input, only when the output exists already (a re-run). */
        struct stat st;
        for (size_t k = 0; stat(it->path, &st) == 0 && k < r->n_outs; k++) {
            if (r->outs[k].dev == (uint64_t)st.st_dev && r->outs[k].ino == (uint64_t)st.st_ino) {
                sl->fatal = 1;
                LD_CHECK(e, 0, LD_EINVAL,
                         "%s: this input image is also the output file %s, which the run would "
                         "replace: give the output another name (nothing was written)",
                         it->path, r->outs[k].path);
            }
        }
    }
    LD_TRY(ld__source_read(r->src, idx, it->path, &sl->file, max_file_bytes(r->max_pixels), e));
    sl->bytes_in = sl->file.len;
    if (r->masks) {
        LD_CHECK(e, mask_path(r->masks, it->rel, &sl->mpath) == LD_OK, LD_ENOMEM,
                 "%s: out of memory", it->path);
        rc = ld__read_file((const char *)sl->mpath.p, &sl->mfile, max_file_bytes(r->max_pixels), e);
        if (rc < 0) {
            char why[LD_ERRMSG_MAX];
            snprintf(why, sizeof why, "%s", e->msg);
            rc = ld__err(e, rc, "%s: its mask: %s", it->path, why);
            goto fail;
        }
        sl->bytes_in += sl->mfile.len;
    }
fail:
    if (rc < 0) ld__err_where(e, it->path, (int64_t)idx);
    sl->read_rc = rc;
}

/* The mask of the image in slot sl (its file read by read_ahead): class indices in the image
 * file's pixel grid, given the image's EXIF orientation and its geometry with nearest
 * sampling, into sl->mout (sl->mh x sl->mw). */
static int process_mask(worker *wk, slot *sl, const ld_img_info *info, ld_err *e)
{
    const run *r = wk->run;
    int rc = LD_OK;
    const char *img = (const char *)sl->path.p, *path = (const char *)sl->mpath.p;
    LD_TRY(ld__png_decode_indices(wk->codec, sl->mfile.p, sl->mfile.len, path, r->mask_wide,
                                  r->max_pixels, &wk->mask, e));
    /* the image file's grid: its displayed size before the orientation turns it */
    const int turned = info->orientation >= 5, fw = turned ? info->h : info->w,
              fh = turned ? info->w : info->h;
    LD_CHECK(e, wk->mask.w == fw && wk->mask.h == fh, LD_EFORMAT,
             "%s is %dx%d but its image %s is %dx%d: a mask must have its image's size", path,
             wk->mask.w, wk->mask.h, img, fw, fh);
    LD_CHECK(e, ld__image_orient(&wk->mask, info->orientation, &wk->mtmp) == LD_OK, LD_ENOMEM,
             "%s: out of memory", path);
    if (r->geom.w || r->geom.h) {
        LD_TRY(
            ld__resize_nearest(&wk->mask, &r->geom, r->mask_pad, &sl->mout, &sl->mw, &sl->mh, e));
    } else {
        const size_t n = (size_t)wk->mask.w * wk->mask.h * ld__image_sample_bytes(&wk->mask);
        LD_CHECK(e, ld__buf_reserve(&sl->mout, n) == LD_OK, LD_ENOMEM, "%s: out of memory", path);
        memcpy(sl->mout.p, wk->mask.px, n);
        sl->mout.len = n;
        sl->mw = wk->mask.w;
        sl->mh = wk->mask.h;
    }
fail:
    return rc;
}

/* The boxes of input idx (in the image file's pixels) as the image comes out: its EXIF
 * orientation, then its resize (clipped to the image; boxes left without area dropped and
 * counted), into sl->boxes. */
static int process_boxes(worker *wk, size_t idx, slot *sl, const ld_img_info *info, ld_err *e)
{
    const run *r = wk->run;
    int rc = LD_OK;
    uint32_t m = ld__source_box_count(r->src, idx);
    sl->nb = sl->boxes_dropped = 0;
    LD_CHECK(e, ld__buf_reserve(&sl->boxes, (size_t)(m ? m : 1) * sizeof(ld_box)) == LD_OK,
             LD_ENOMEM, "%s: out of memory for %u boxes", (const char *)sl->path.p, m);
    ld_box *b = (ld_box *)(void *)sl->boxes.p;
    const int turned = info->orientation >= 5; /* the file's size: before the orientation */
    const int fw = turned ? info->h : info->w, fh = turned ? info->w : info->h;
    /* a dataset input's boxes are in the displayed image's pixels already */
    const int orientation = ld__source_boxes_displayed(r->src) ? 1 : info->orientation;
    for (uint32_t k = 0; k < m; k++) {
        ld__source_box(r->src, idx, k, &b[k]);
        ld__box_orient(&b[k], orientation, fw, fh);
    }
    /* no resize: the identity geometry still clips them to the image */
    LD_TRY(ld__resize_boxes(&r->geom, info->w, info->h, b, &m, &sl->boxes_dropped, e));
    sl->nb = m;
fail:
    return rc;
}

/* Turn one input file (read into its slot) into the bytes the writer stores. Returns LD_OK or
 * a skip reason. */
static int process(worker *wk, size_t idx, slot *sl, ld_err *e)
{
    run *r = wk->run;
    int rc = LD_OK;
    ld_img_info info;
    const ld_item item = {.path = (const char *)sl->path.p}; /* read_ahead composed it */
    const ld_item *it = &item;

    if (sl->read_rc < 0) { /* the caller thread could not read it: its message stands */
        *e = sl->err;
        return sl->read_rc;
    }
    LD_TRY(ld__img_info(wk->codec, sl->file.p, sl->file.len, it->path, &info, e));
    LD_CHECKP(e, (uint64_t)info.w * (uint64_t)info.h <= r->max_pixels, LD_ELIMIT, LD_C_MAX_PIXELS,
              "%s: %dx%d is over the %llu-pixel limit (raise it with max_pixels)", it->path, info.w,
              info.h, (unsigned long long)r->max_pixels);

    ld_decode_opts dopt = {.channels = r->channels,
                           .max_pixels = r->max_pixels,
                           .apply_orientation = 1,
                           .depth16 = r->depth16};
    sl->reduced = !r->depth16 && info.depth == 16;
    if (!r->decode_exact && !r->masks)
        ld__resize_min_source(&r->geom, info.w, info.h, &dopt.min_w, &dopt.min_h);
    /* Even when the original bytes are kept, decode fully: a file that does not decode must
     * be skipped here, not crash a training job later. */
    LD_TRY(ld__img_decode(wk->codec, sl->file.p, sl->file.len, it->path, &dopt, &wk->dec, e));
    sl->frames = ld__codec_frames(wk->codec);
    sl->dct = info.format == LD_IMG_JPEG && wk->dec.w < info.w
                  ? ld__jpeg_scale(info.w, info.h, dopt.min_w, dopt.min_h)
                  : 8;

    if (r->masks) LD_TRY(process_mask(wk, sl, &info, e));
    if (r->boxes) LD_TRY(process_boxes(wk, idx, sl, &info, e));
    const ld_image *im = &wk->dec;
    const int raw = !r->keep_original && !r->encoded;
    if ((r->geom.w || r->geom.h) && raw && !r->depth16) {
        /* Raw output: the resizer writes the planes itself (no transpose of the result). */
        const int ch[3] = {r->order_rgb ? 0 : 2, 1, r->order_rgb ? 2 : 0};
        LD_TRY(ld__resize_planar(wk->resizer, &wk->dec, &r->geom, ch, &sl->out, &sl->w, &sl->h, e));
        sl->c = wk->dec.c;
        return LD_OK;
    }
    if (r->geom.w || r->geom.h) {
        LD_TRY(ld__resize(wk->resizer, &wk->dec, &r->geom, &wk->resized, e));
        im = &wk->resized;
    }
    sl->c = im->c;
    sl->h = im->h;
    sl->w = im->w;

    if (r->keep_original && info.format != LD_IMG_JPEG && info.format != LD_IMG_PNG) {
        /* Stored encodings are JPEG and PNG only (what every reader of the dataset decodes):
         * other formats are kept losslessly as PNG. */
        sl->out.len = 0;
        LD_TRY(ld__png_encode(wk->codec, im, &sl->out, e));
    } else if (r->keep_original) {
        /* Hand the file buffer itself to the slot's output: no copy. */
        ld_buf t = sl->out;
        sl->out = sl->file;
        sl->file = t;
    } else if (r->encoded) {
        sl->out.len = 0;
        if (r->encode_png)
            LD_TRY(ld__png_encode(wk->codec, im, &sl->out, e));
        else
            LD_TRY(ld__jpeg_encode(wk->codec, im, r->quality, r->restart_markers, &sl->out, e));
    } else {
        const size_t n = (size_t)im->w * im->h * im->c * ld__image_sample_bytes(im);
        LD_CHECK(e, ld__buf_reserve(&sl->out, n) == LD_OK, LD_ENOMEM, "%s: out of memory",
                 it->path);
        to_chw(im, r->order_rgb, sl->out.p);
        sl->out.len = n;
    }
fail:
    if (rc < 0) ld__err_where(e, it->path, (int64_t)idx);
    return rc;
}

/* A pool task: convert image idx into its slot. A skipped file is this slot's outcome, not
 * a pool failure: the caller decides in order whether it stops the run. */
static int convert_task(void *user, int thread, uint64_t idx, int piece, int pieces, ld_err *e)
{
    run *r = user;
    slot *sl = &r->slots[idx % r->window];
    (void)piece;
    (void)pieces;
    sl->status = process(&r->workers[thread], (size_t)idx, sl, e);
    if (sl->status < 0) sl->err = *e;
    return LD_OK;
}

static void worker_free(worker *wk)
{
    ld__codec_free(wk->codec);
    ld__resizer_free(wk->resizer);
    ld__image_free(&wk->dec);
    ld__image_free(&wk->resized);
    ld__image_free(&wk->mask);
    ld__image_free(&wk->mtmp);
}

static void logf_(ld_convert *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void logf_(ld_convert *c, int level, const char *fmt, ...)
{
    if (!c->log) return;
    char msg[LD_ERRMSG_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    ld__vformat_msg(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->log(c->log_user, level, msg);
}

static int is_lmdb_output(const char *out)
{
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        n--;
    if (n >= 5 && strncmp(out + n - 5, ".lmdb", 5) == 0) return 1;
    struct stat st;
    return stat(out, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A writer removed what a killed run left beside the output: say so, it may be gigabytes. */
static void stale_removed(void *user, const char *path, long pid, uint64_t bytes)
{
    logf_(user, LD_LOG_WARN, "removed %s (%.1f MiB), left by an interrupted run (process %ld)",
          path, (double)bytes / (1 << 20), pid);
}

/* The listing of the input: its warnings, and progress reports (total still 0, which the
 * CLI shows as "scanning") that give the caller a chance to cancel a listing of millions of
 * files. */
typedef struct listing {
    ld_convert *c;
    double t0, last;
} listing;

static void source_warn(void *user, const char *msg)
{
    logf_(((listing *)user)->c, LD_LOG_WARN, "%s", msg);
}

/* An entry folder mode did not list: named at LD_LOG_INFO, counted in the summary. */
static void source_note(void *user, int why, const char *path)
{
    static const char *const reason[LD_UNLISTED_N] = {
        [LD_UNLISTED_NAME] = "not named like an image",
        [LD_UNLISTED_HIDDEN] = "hidden",
        [LD_UNLISTED_SPECIAL] = "not a regular file",
        [LD_UNLISTED_LOOSE] = "in no class folder",
        [LD_UNLISTED_UNSAFE] = "name leaves the archive ('..' or "
                               "absolute path), not extracted",
        [LD_UNLISTED_LINK] = "a link (hard or "
                             "symbolic)"};
    logf_(((listing *)user)->c, LD_LOG_INFO, "not converted: %s: %s", path,
          why >= 0 && why < LD_UNLISTED_N ? reason[why] : "not listed");
}

static int source_tick(void *user, size_t found)
{
    listing *l = user;
    const double now = ld__now();
    (void)found;
    if (!l->c->progress || now - l->last < 0.1) return 0;
    l->last = now;
    l->c->stats.elapsed = now - l->t0;
    return l->c->progress(l->c->progress_user, &l->c->stats);
}

/* ---- an output must never replace an input ------------------------------------------- */

typedef struct out_files {
    out_file *f;
    size_t n, cap;
} out_files;

static void out_files_free(out_files *o)
{
    for (size_t i = 0; i < o->n; i++)
        free(o->f[i].path);
    free(o->f);
    memset(o, 0, sizeof *o);
}

/* Remember `path` (taken over) if it exists. Returns 1 if it did, 0 if not, LD_ENOMEM. */
static int out_files_add(out_files *o, char *path)
{
    struct stat st;
    if (!path) return LD_ENOMEM;
    if (stat(path, &st) != 0 || S_ISDIR(st.st_mode)) {
        free(path);
        return 0;
    }
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 8;
        out_file *f = realloc(o->f, cap * sizeof *f);
        if (!f) {
            free(path);
            return LD_ENOMEM;
        }
        o->f = f;
        o->cap = cap;
    }
    o->f[o->n++] = (out_file){(uint64_t)st.st_dev, (uint64_t)st.st_ino, path};
    return 1;
}

/* The files of `output` that exist already and that publishing would replace: the HDF5 file;
 * with --split the list and the parts (consecutive from -00000, as a run writes them); for
 * LMDB what is in the directory. Their number, not the inputs', sizes this. */
static int existing_outputs(const char *output, int format, int split, out_files *o)
{
    int r;
    if (format == LD_FORMAT_LMDB) {
        static const char *const names[] = {"data.mdb", "lock.mdb", "libdata.json", "libdata.idx"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if ((r = out_files_add(o, ld__asprintf("%s/%s", output, names[i]))) < 0) return r;
        return LD_OK;
    }
    if (!split) return out_files_add(o, ld__strdup(output)) < 0 ? LD_ENOMEM : LD_OK;
    char *stem = ld__h5_split_stem(output);
    if (!stem) return LD_ENOMEM;
    r = out_files_add(o, ld__asprintf("%s.txt", stem));
    for (unsigned k = 0; r >= 0 && k < 100000; k++)
        if ((r = out_files_add(o, ld__asprintf("%s-%05u.h5", stem, k))) == 0) break;
    free(stem);
    return r < 0 ? LD_ENOMEM : LD_OK;
}

/* Before anything is read: refuse an output that is the list file, the input folder, or (in
 * folder mode) lies inside the input folder, where it could replace an image and where the
 * next run would read it as input. Images are compared with `outs` as they are read. */
static int check_output_vs_inputs(ld_convert *c, const char *input, const char *output,
                                  const out_files *outs, const char *split_list)
{
    struct stat st;
    const char *list_file = PSTR(c, LD_C_LIST_FILE);
    if (list_file && stat(list_file, &st) == 0) {
        for (size_t k = 0; k < outs->n; k++) {
            if (outs->f[k].dev != (uint64_t)st.st_dev || outs->f[k].ino != (uint64_t)st.st_ino)
                continue;
            if (split_list && !strcmp(outs->f[k].path, split_list))
                return (ld__err(&c->err, LD_EINVAL,
                                "%s: split_bytes would overwrite this input list with the list "
                                "of output files; choose another output name (e.g. "
                                "%.*s_split.h5) (nothing was written)",
                                list_file, (int)(strlen(split_list) - 4), split_list),
                        ld__err_param(&c->err, LD_C_SPLIT_BYTES));
            return ld__err(&c->err, LD_EINVAL,
                           "%s is the input list file %s: the output would replace it; give "
                           "the output another name (nothing was written)",
                           outs->f[k].path, list_file);
        }
        int same = ld__path_within(output, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
        if (same < 0) return ld__err(&c->err, same, "%s: out of memory", output);
        if (same == 2)
            return ld__err(&c->err, LD_EINVAL,
                           "%s is the input list file %s: the output would replace it; give "
                           "the output another name (nothing was written)",
                           output, list_file);
    }
    if (input && *input && !list_file && stat(input, &st) == 0 && S_ISREG(st.st_mode)) {
        for (size_t k = 0; k < outs->n; k++) /* an archive as input */
            if (outs->f[k].dev == (uint64_t)st.st_dev && outs->f[k].ino == (uint64_t)st.st_ino)
                return ld__err(&c->err, LD_EINVAL,
                               "%s is the input %s %s: the output would replace it; give "
                               "the output another name (nothing was written)",
                               outs->f[k].path,
                               ld_convert_input_is_archive(input) ? "archive" : "dataset", input);
    }
    if (input && *input && stat(input, &st) == 0 && S_ISDIR(st.st_mode)) {
        int within = ld__path_within(output, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
        if (within < 0) return ld__err(&c->err, within, "%s: out of memory", output);
        if (within == 2)
            return ld__err(&c->err, LD_EINVAL,
                           "%s is the input folder: the output would replace it; give the "
                           "output another name (nothing was written)",
                           output);
        if (within && !list_file)
            return ld__err(&c->err, LD_EINVAL,
                           "%s lies inside the input folder %s: it could replace an input "
                           "image, and the next run would read it as input; write it outside "
                           "%s (nothing was written)",
                           output, input, input);
    }
    return LD_OK;
}

static const char *MODE_NAMES[] = {"squash", "crop", "pad", "max"};

/* -v: what the run decided, one line per subject (input, sizes, storage and layout). */
static void log_decisions(ld_convert *c, const run *r, int format, size_t ncls, int archive)
{
    if (!c->log) return;
    const uint32_t k = ld__source_label_count(r->src);
    if (k)
        logf_(c, LD_LOG_INFO, "input: %zu files, label vectors of %u %s value%s from the list file",
              r->n, k, ld__source_label_type(r->src) == LD_DTYPE_I32 ? "int32" : "float32",
              k == 1 ? "" : "s");
    else if (ld__source_from_dataset(r->src))
        logf_(c, LD_LOG_INFO,
              "input: a dataset of %zu %s records in %zu class%s (stored order; labels, names "
              "and classes as it records them)",
              r->n, ld__source_dataset_encoded(r->src) ? "encoded" : "raw", ncls,
              ncls == 1 ? "" : "es");
    else if (ld__source_unlabelled(r->src))
        logf_(c, LD_LOG_INFO, "input: %zu files, no labels in the list file (all label 0)", r->n);
    else
        logf_(c, LD_LOG_INFO, "input: %zu files in %zu class%s (%s)", r->n, ncls,
              ncls == 1 ? "" : "es",
              PSTR(c, LD_C_LIST_FILE) ? "labels from the list file"
              : P(c, LD_C_FLAT)       ? "flat: all label 0"
              : archive ? "an archive: one class per top-level folder or inner tar, labels in "
                          "sorted name order"
                        : "one class per sub-folder, labels in sorted name order");
    if (r->geom.w && r->geom.mode == LD_RESIZE_MAX)
        logf_(c, LD_LOG_INFO,
              "sizes: longer side scaled down to at most %d, aspect kept "
              "(sizes vary)",
              r->geom.w);
    else if (r->geom.w)
        logf_(c, LD_LOG_INFO, "sizes: every image resized to %dx%d (%s)", r->geom.w, r->geom.h,
              MODE_NAMES[r->geom.mode - LD_RESIZE_SQUASH]);
    else
        logf_(c, LD_LOG_INFO, "sizes: kept as they are%s",
              r->check_size ? "; every image must have the size of the first" : "");
    const char *order = r->channels == 1 ? "gray" : r->order_rgb ? "RGB" : "BGR";
    if (!r->encoded)
        logf_(c, LD_LOG_INFO, "storage: %s, raw uint8 pixels, layout %s (%d channel%s, %s)",
              format == LD_FORMAT_LMDB ? "LMDB" : "HDF5",
              format == LD_FORMAT_LMDB ? "one Caffe Datum per image, C x H x W"
                                       : "/data N x C x H x W",
              r->channels, r->channels == 1 ? "" : "s", order);
    else if (r->keep_original)
        logf_(c, LD_LOG_INFO,
              "storage: %s, the original file bytes of each JPEG and PNG, other formats as "
              "PNG (%s)",
              format == LD_FORMAT_LMDB ? "LMDB" : "HDF5", order);
    else if (r->encode_png)
        logf_(c, LD_LOG_INFO, "storage: %s, each image re-encoded as PNG (%d channel%s, %s)",
              format == LD_FORMAT_LMDB ? "LMDB" : "HDF5", r->channels, r->channels == 1 ? "" : "s",
              order);
    else
        logf_(c, LD_LOG_INFO,
              "storage: %s, each image re-encoded as JPEG quality %d (%d "
              "channel%s, %s%s)",
              format == LD_FORMAT_LMDB ? "LMDB" : "HDF5", r->quality, r->channels,
              r->channels == 1 ? "" : "s", order, r->restart_markers ? ", restart markers" : "");
    if (format == LD_FORMAT_HDF5 && P(c, LD_C_SPLIT_BYTES))
        logf_(c, LD_LOG_INFO, "split: files of at most %lld bytes of data, listed with %s paths",
              (long long)P(c, LD_C_SPLIT_BYTES),
              P(c, LD_C_SPLIT_PATHS) == LD_SPLIT_PATHS_RELATIVE ? "relative" : "absolute");
}

/* Everything one ld_convert_run holds, whichever step it stopped at: job_free releases it. */
typedef struct job {
    run r; /* what the workers read */
    int format;
    ld_source *src;
    ld_writer *wr;
    ld_pool *pool;
    int nthreads; /* workers allocated (r.workers) */
    ld_desc rec;  /* what the output records (store/desc.h) */
    out_files outs;
    char *split_list;
    char *part_path; /* shards: the part's file, which replaces the output */
    ld_shard_info shard;
    int resumed;     /* shards: the part was complete already; nothing else to do */
    int in_encoded;  /* the input is a dataset of encoded images */
    int in_gray;     /* the input is a dataset of raw 1-channel images */
    void *label_vec; /* label vectors: one sample's values for the writer; NULL for scalars */
    double t0;
    uint64_t dct[3]; /* samples decoded at 1/8, 2/8, 4/8 (decode_scale auto) */
} job;

/* What the output records (store/desc.h): storage, channels, classes, settings, provenance;
 * a shard part adds its identity after shard_select. */
static int describe_output(ld_convert *c, const run *r, job *j, const char *source)
{
    static const char *const modes[] = {"squash", "crop", "pad", "max"};
    ld_desc *d = &j->rec;
    const size_t ncls = ld__source_class_count(j->src);
    int rc = LD_OK, ok = 1;
    d->format = j->format;
    d->encoded = r->encoded;
    d->dtype = r->depth16 ? LD_DTYPE_U16 : LD_DTYPE_U8;
    d->channels = r->channels;
    d->quality = r->encoded && !r->keep_original && !r->encode_png ? r->quality : 0;
    d->resize_w = r->geom.w;
    d->resize_h = r->geom.h;
    d->resize_mode = r->geom.w || r->geom.h ? r->geom.mode : 0;
    /* recorded only when it changes samples: exact decoding before a resize (absent: auto) */
    ok &= ld__desc_set_text(&d->decode_scale, r->decode_exact && d->resize_mode ? "exact" : NULL) ==
          LD_OK;
    d->num_classes_recorded = (int)ncls;
    ok &= ld__desc_set_text(&d->storage, r->encoded ? "encoded" : "raw") == LD_OK;
    if (r->encoded)
        ok &= ld__desc_set_text(&d->encoding, r->keep_original ? "original"
                                              : r->encode_png  ? "png"
                                                               : "jpeg") == LD_OK;
    ok &= ld__desc_set_text(&d->channel_order, r->channels == 1 ? "GRAY"
                                               : r->order_rgb   ? "RGB"
                                                                : "BGR") == LD_OK;
    ok &= ld__desc_set_text(&d->resize_mode_name,
                            d->resize_mode ? modes[(d->resize_mode - LD_RESIZE_SQUASH) & 3]
                                           : "none") == LD_OK;
    ok &= ld__desc_set_text(&d->source, source) == LD_OK;
    ok &= ld__desc_set_text(&d->note, PSTR(c, LD_C_SOURCE_NOTE)) == LD_OK;
    ok &= ld__desc_set_text(&d->tool_version, LD_VERSION_STRING) == LD_OK;
    d->class_names = calloc(ncls ? ncls : 1, sizeof *d->class_names);
    ok &= d->class_names != NULL;
    for (size_t i = 0; ok && i < ncls; i++, d->n_classes++) {
        const char *name = ld__source_class_name(j->src, i);
        ok &= (d->class_names[i] = ld__strdup(name ? name : "")) != NULL;
    }
    /* the label field: one int32 per sample, or K values (list mode's label vectors); with
     * masks and no labels at all (an unlabelled list), the mask is the label (HDF5 /label
     * (N, 1, H, W): stock HDF5Data + SoftmaxWithLoss trains on it) */
    const int64_t k = ld__source_label_count(j->src);
    const int mask_is_label = r->masks && !k && ld__source_unlabelled(j->src);
    d->label_dtype = ld__source_label_type(j->src);
    /* detection inputs (COCO, VOC) have boxes and no image labels: no label field */
    if (!mask_is_label && !(r->boxes && !ncls))
        ok &= ld__desc_add_field(d, "label", LD_ROLE_LABEL, d->label_dtype, k ? 1 : 0, &k) == LD_OK;
    if (r->boxes) { /* ragged (M, 4), their classes and the input's ids for them */
        const int64_t bd[2] = {0, 4};
        const size_t nb = ld__source_box_class_count(j->src);
        char **names = calloc(nb ? nb : 1, sizeof *names);
        int64_t *ids = calloc(nb ? nb : 1, sizeof *ids);
        ok &= names && ids;
        for (size_t i = 0; ok && i < nb; i++) {
            names[i] = (char *)ld__source_box_class_name(j->src, i);
            ids[i] = ld__source_box_class_id(j->src, i);
        }
        ok &= ok && ld__desc_set_box_classes(d, names, ids, nb) == LD_OK;
        ok &= ld__desc_add_field(d, "boxes", LD_ROLE_BOXES, LD_DTYPE_F32, 2, bd) == LD_OK;
        free(names);
        free(ids);
    }
    if (r->masks) {
        const int64_t dims[3] = {1, r->geom.h, r->geom.w}; /* 0 x 0: each image's own size */
        ok &= ld__desc_add_field(d, mask_is_label ? "label" : "mask", LD_ROLE_MASK,
                                 r->mask_wide ? LD_DTYPE_U16 : LD_DTYPE_U8, 3, dims) == LD_OK;
        d->mask_pad = r->mask_pad;
    }
    const size_t nl = ld__source_label_name_count(j->src);
    d->label_names = nl ? calloc(nl, sizeof *d->label_names) : NULL;
    ok &= !nl || d->label_names;
    for (size_t i = 0; ok && i < nl; i++, d->n_label_names++)
        ok &= (d->label_names[i] = ld__strdup(ld__source_label_name(j->src, i))) != NULL;
    /* a dataset input: what made its samples, where this run keeps it (size, bytes) */
    ok &= ld__source_dataset_made(j->src, d, !d->resize_mode, r->keep_original) == LD_OK;
    LD_CHECK(&c->err, ok, LD_ENOMEM, "out of memory");
    ld__desc_mark_recorded(d);
    return LD_OK;
fail:
    return rc;
}

/* Shards: the run_id over the whole listing, this part's range, and resume. Called after the
 * whole input is listed (and shuffled) and before the writer exists. Sets *done when the part
 * is already complete from the same run; otherwise cuts the source down to the part. */
static int shard_select(ld_convert *c, run *r, ld_source *src, int format, const char *part,
                        const ld_desc *want, ld_shard_info *sh, int *done)
{
    ld_shard_setting set[] = {
        {"format", format},
        {"encoded", r->encoded},
        {"keep_original", r->keep_original},
        {"encode_png", r->encode_png},
        {"quality", want->quality},
        {"resize_w", r->geom.w},
        {"resize_h", r->geom.h},
        {"resize_mode", r->geom.mode},
        {"pad_value", r->geom.pad_value},
        {"channels", r->channels},
        {"channel_order", r->order_rgb},
        {"check_size", r->check_size},
        {"shuffle", P(c, LD_C_SHUFFLE)},
        {"seed", P(c, LD_C_SHUFFLE) ? P(c, LD_C_SEED) : 0},
        {"flat", P(c, LD_C_FLAT)},
        {"list_mode", PSTR(c, LD_C_LIST_FILE) != NULL},
        {"max_pixels", (int64_t)r->max_pixels},
        {"deflate", P(c, LD_C_DEFLATE)},
        /* last, and counted only when on: parts written before these settings existed keep
         * their run_id */
        {"restart_markers", r->restart_markers},
        {"decode_scale", 1},
        {"depth", 16},
        {"mask_type", 16},
    };
    size_t nset = sizeof set / sizeof set[0] - 4;
    if (r->restart_markers) nset++;
    if (want->decode_scale) set[nset++] = (ld_shard_setting){"decode_scale", 1};
    if (r->depth16) set[nset++] = (ld_shard_setting){"depth", 16};
    if (r->mask_wide) set[nset++] = (ld_shard_setting){"mask_type", 16};
    const uint64_t total = ld__source_count(src);
    memset(sh, 0, sizeof *sh);
    sh->index = (uint32_t)P(c, LD_C_SHARD_INDEX);
    sh->count = (uint32_t)P(c, LD_C_SHARD_COUNT);
    sh->total = total;
    ld__shard_range(total, sh->index, sh->count, &sh->first, &sh->listed);
    ld__shard_run_id(set, nset, sh->count, src, sh->run_id);

    int rc = ld__shard_resume_check(part, format == LD_FORMAT_LMDB, sh, want, done, &c->err);
    if (rc < 0) return rc;
    if (*done) {
        /* what killed attempts at this part left beside it goes, as a writer would do */
        ld__sweep_stale_temps(part, stale_removed, c);
        logf_(c, LD_LOG_INFO, "part %u/%u: %s already complete, skipped", sh->index, sh->count,
              part);
        return LD_OK;
    }
    logf_(c, LD_LOG_INFO,
          "shard: part %u of %u parts (0-based): listed samples %llu..%llu of %llu, run_id %s",
          sh->index, sh->count, (unsigned long long)sh->first,
          (unsigned long long)(sh->first + sh->listed), (unsigned long long)total, sh->run_id);
    ld__source_slice(src, (size_t)sh->first, (size_t)sh->listed);
    r->n = (size_t)sh->listed;
    return LD_OK;
}

/* Shards: the checks of the shard parameters and the part's name, which is the output from
 * here on (*output points into j). */
static int shard_output(ld_convert *c, const char **output, job *j)
{
    int rc = LD_OK;
    const unsigned nparts = (unsigned)P(c, LD_C_SHARD_COUNT);
    LD_CHECKP(&c->err, nparts || P(c, LD_C_SHARD_INDEX) == 0, LD_EINVAL, LD_C_SHARD_COUNT,
              "shard_index %lld without shard_count: set shard_count to the number of parts",
              (long long)P(c, LD_C_SHARD_INDEX));
    if (!nparts) return LD_OK;
    LD_CHECKP(&c->err, P(c, LD_C_SHARD_INDEX) < (int64_t)nparts, LD_EINVAL, LD_C_SHARD_INDEX,
              "shard_index %lld is not below shard_count %u: parts are numbered 0..%u",
              (long long)P(c, LD_C_SHARD_INDEX), nparts, nparts - 1);
    LD_CHECKP(&c->err, P(c, LD_C_SPLIT_BYTES) == 0, LD_EINVAL, LD_C_SPLIT_BYTES,
              "split_bytes cannot be combined with shards: each part is one file (merge "
              "the parts into one dataset, or split a single run instead)");
    j->part_path = ld__shard_part_path(*output, (unsigned)P(c, LD_C_SHARD_INDEX), nparts);
    LD_CHECK(&c->err, j->part_path, LD_ENOMEM, "out of memory");
    *output = j->part_path;
fail:
    return rc;
}

/* Step 1: the settings, and the contradictions a user can make with them. */
static int resolve_settings(ld_convert *c, const char *output, job *j)
{
    int rc = LD_OK;
    run *r = &j->r;
    const int quality = (int)P(c, LD_C_QUALITY);
    const int encode_png = (int)P(c, LD_C_ENCODE_PNG);
    /* an encoded dataset input stays encoded (its bytes kept when nothing asks for a change) */
    const int encoded = quality > 0 || encode_png || P(c, LD_C_ENCODED) || j->in_encoded;
    r->geom.mode = (int)P(c, LD_C_RESIZE_MODE);
    r->geom.w = (int)P(c, LD_C_RESIZE_W);
    r->geom.h = (int)P(c, LD_C_RESIZE_H);
    r->geom.pad_value = (uint8_t)P(c, LD_C_PAD_VALUE);
    r->channels = P(c, LD_C_GRAY) || j->in_gray ? 1 : 3; /* a gray raw dataset stays gray */
    r->order_rgb = P(c, LD_C_CHANNEL_ORDER) == LD_CHANNELS_RGB;
    r->encoded = encoded;
    r->encode_png = encode_png;
    r->quality = quality ? quality : DEFAULT_REENCODE_QUALITY;
    r->max_pixels = (uint64_t)P(c, LD_C_MAX_PIXELS);
    /* convert_imageset --encoded without resize keeps the file's own bytes. Gray output
     * needs a re-encode (the stored image must be what the dataset says it is). */
    r->keep_original = encoded && !quality && !encode_png && !r->geom.w && !r->geom.h &&
                       (r->channels == 3 || j->in_gray);
    r->restart_markers = (int)P(c, LD_C_RESTART_MARKERS);
    r->decode_exact = P(c, LD_C_DECODE_SCALE) == LD_DECODE_SCALE_EXACT;
    LD_CHECKP(&c->err, !r->restart_markers || (encoded && !encode_png && !r->keep_original),
              LD_EINVAL, LD_C_RESTART_MARKERS,
              "restart_markers applies to JPEGs this run encodes: set quality (1..100) too "
              "(raw pixels, PNG and original file bytes have no restart markers)");
    LD_CHECKP(&c->err, (r->geom.w == 0) == (r->geom.h == 0), LD_EINVAL,
              r->geom.w ? LD_C_RESIZE_H : LD_C_RESIZE_W,
              "resize: give both width and height (resize_w and resize_h)");

    j->format = (int)P(c, LD_C_FORMAT);
    if (j->format == LD_FORMAT_AUTO)
        j->format = is_lmdb_output(output) ? LD_FORMAT_LMDB : LD_FORMAT_HDF5;
    const int fixed_size = (r->geom.w && r->geom.mode != LD_RESIZE_MAX);
    LD_CHECKP(&c->err,
              encoded || j->format != LD_FORMAT_HDF5 || !r->geom.w || r->geom.mode != LD_RESIZE_MAX,
              LD_EINVAL, LD_C_RESIZE_MODE,
              "raw HDF5 storage needs one image size, but resize_mode max keeps each image's "
              "aspect: store JPEG with quality Q, or use resize_mode squash, crop or pad");
    r->masks = PSTR(c, LD_C_MASKS);
    r->mask_pad = (unsigned)P(c, LD_C_MASK_PAD);
    r->mask_wide = P(c, LD_C_MASK_TYPE) == LD_DTYPE_U16;
    r->depth16 = P(c, LD_C_DEPTH) == 16;
    LD_CHECKP(&c->err, !P(c, LD_C_RAW) || !(quality > 0 || encode_png || P(c, LD_C_ENCODED)),
              LD_EINVAL, LD_C_RAW,
              "raw asks for raw pixels, and quality, encoded or encode_png for encoded images: "
              "choose one");
    LD_CHECKP(&c->err, P(c, LD_C_DEPTH) == 8 || P(c, LD_C_DEPTH) == 16, LD_EINVAL, LD_C_DEPTH,
              "depth %lld: stored samples have 8 or 16 bits", (long long)P(c, LD_C_DEPTH));
    LD_CHECKP(&c->err, !r->depth16 || (!encoded && j->format == LD_FORMAT_HDF5), LD_EINVAL,
              LD_C_DEPTH,
              "depth 16 keeps 16-bit samples in raw HDF5 only: JPEG and PNG re-encoding and LMDB "
              "Datums hold 8-bit samples; write an .h5 file without quality, encoded or "
              "encode_png");
    LD_CHECKP(&c->err, r->mask_wide || r->mask_pad <= 255, LD_EINVAL, LD_C_MASK_PAD,
              "mask_pad %u does not fit uint8 masks (0..255): use mask_type uint16, or a smaller "
              "padding index",
              r->mask_pad);
    if (r->masks) {
        struct stat st;
        LD_CHECKP(&c->err, stat(r->masks, &st) == 0 && S_ISDIR(st.st_mode), LD_EIO, LD_C_MASKS,
                  "masks: %s is not a folder (give the folder that holds the masks, e.g. VOC's "
                  "SegmentationClass)",
                  r->masks);
        LD_CHECKP(&c->err, !r->geom.w || r->geom.mode != LD_RESIZE_MAX, LD_EINVAL, LD_C_RESIZE_MODE,
                  "masks are stored as one H x W array per sample, all of one size, but "
                  "resize_mode max keeps each image's aspect: use squash, crop or pad");
    }
    /* Raw HDF5 is an N x C x H x W array: every image must come out the same size (and so
     * must masks, in every format). */
    r->check_size =
        (P(c, LD_C_CHECK_SIZE) || (!encoded && j->format == LD_FORMAT_HDF5) || r->masks) &&
        !fixed_size;
fail:
    return rc;
}

/* Step 2: the input listing and the writer, after making sure the output is not an input.
 * The writer is created before any work so that an unwritable output fails at once. */
static int open_source_and_writer(ld_convert *c, const char *input, const char *output, job *j)
{
    int rc = LD_OK;
    const char *list_file = PSTR(c, LD_C_LIST_FILE);
    run *r = &j->r;

    /* The output must not be (or lie inside) an input. */
    LD_CHECK(&c->err,
             existing_outputs(output, j->format, P(c, LD_C_SPLIT_BYTES) > 0, &j->outs) == LD_OK,
             LD_ENOMEM, "out of memory");
    if (j->format == LD_FORMAT_HDF5 && P(c, LD_C_SPLIT_BYTES) > 0) {
        char *stem = ld__h5_split_stem(output);
        j->split_list = stem ? ld__asprintf("%s.txt", stem) : NULL;
        free(stem);
        LD_CHECK(&c->err, j->split_list, LD_ENOMEM, "out of memory");
    }
    LD_TRY(check_output_vs_inputs(c, input, output, &j->outs, j->split_list));
    r->outs = j->outs.f;
    r->n_outs = j->outs.n;

    /* Inputs. */
    listing lst = {c, j->t0, j->t0};
    const unsigned src_flags =
        (P(c, LD_C_STRICT) ? LD_SRC_STRICT : 0u) | (P(c, LD_C_FLAT) ? LD_SRC_FLAT : 0u);
    const int64_t lt = P(c, LD_C_LABEL_TYPE);
    const ld_list_opts lo = {(int)P(c, LD_C_LABEL_COUNT), lt == LD_LABEL_INT32     ? LD_DTYPE_I32
                                                          : lt == LD_LABEL_FLOAT32 ? LD_DTYPE_F32
                                                                                   : 0};
    const char *coco = PSTR(c, LD_C_COCO), *voc = PSTR(c, LD_C_VOC);
    LD_CHECKP(&c->err, !coco || !voc, LD_EINVAL, LD_C_VOC, "coco and voc exclude each other");
    LD_CHECKP(&c->err, !coco || !list_file, LD_EINVAL, LD_C_LIST_FILE,
              "coco: the JSON lists the images; give no list_file");
    if (coco)
        rc = ld__source_open_coco(coco, input, src_flags, source_warn, source_tick, &lst, &j->src,
                                  &c->err);
    else if (voc)
        rc = ld__source_open_voc(voc, list_file, src_flags, source_warn, source_tick, &lst, &j->src,
                                 &c->err);
    else if (list_file)
        rc = ld__source_open_list(list_file, input, &lo, source_tick, &lst, &j->src, &c->err);
    else if (ld_convert_input_is_archive(input))
        rc = ld__source_open_archive(input, src_flags, source_warn, source_note, source_tick, &lst,
                                     &j->src, &c->err);
    else if (ld__source_is_dataset(input))
        rc = ld__source_open_dataset(input, source_tick, &lst, &j->src, &c->err);
    else
        rc = ld__source_open_dir_notes(input, src_flags, source_warn, source_note, source_tick,
                                       &lst, &j->src, &c->err);
    LD_CHECK(&c->err, rc != LD_ECANCELED, LD_ECANCELED, "canceled: nothing was written to %s",
             output);
    LD_TRY(rc);
    j->in_encoded = ld__source_dataset_encoded(j->src) && !r->encoded && !P(c, LD_C_RAW);
    j->in_gray = ld__source_dataset_channels(j->src) == 1 && r->channels == 3;
    if (j->in_encoded || j->in_gray) { /* the input's storage: settings again, format kept */
        const int format = j->format;
        LD_TRY(resolve_settings(c, output, j));
        j->format = format;
    }
    r->src = j->src;
    r->boxes = ld__source_has_boxes(j->src);
    r->n = ld__source_count(j->src);
    c->stats.unlisted_name = ld__source_unlisted(j->src, LD_UNLISTED_NAME);
    c->stats.unlisted_hidden = ld__source_unlisted(j->src, LD_UNLISTED_HIDDEN);
    /* links are not regular files; they are named as links */
    c->stats.unlisted_special = ld__source_unlisted(j->src, LD_UNLISTED_SPECIAL) +
                                ld__source_unlisted(j->src, LD_UNLISTED_LINK);
    c->stats.unlisted_loose = ld__source_unlisted(j->src, LD_UNLISTED_LOOSE);
    c->stats.unlisted_unsafe = ld__source_unlisted(j->src, LD_UNLISTED_UNSAFE);
    c->stats.unlisted = c->stats.unlisted_name + c->stats.unlisted_hidden +
                        c->stats.unlisted_special + c->stats.unlisted_loose +
                        c->stats.unlisted_unsafe;
    LD_CHECKP(&c->err, r->n > 0, LD_EFORMAT,
              coco || voc || list_file || P(c, LD_C_FLAT) ? -1 : LD_C_FLAT,
              coco || voc                    ? "%s: no image with annotations"
              : list_file                    ? "%s: the list file names no images"
              : ld__source_is_dataset(input) ? "%s: the dataset holds no samples"
              : P(c, LD_C_FLAT) ? "%s: no image files found (.jpg, .png, .tif, .webp, .gif, "
                                  ".bmp, .ppm...)"
                                : "%s: no images found (expected one sub-folder per class holding "
                                  ".jpg, .jpeg or .png files, or .tif, .webp, .gif, .bmp, .ppm...; "
                                  "flat for a folder without class folders)",
              coco        ? coco
              : voc       ? voc
              : list_file ? list_file
                          : input);
    if (P(c, LD_C_SHUFFLE)) ld__source_shuffle(j->src, (uint64_t)P(c, LD_C_SEED));
    c->stats.total = r->n;

    /* The writer. */
    const size_t ncls = ld__source_class_count(j->src);
    if (ld__source_label_count(j->src)) {
        j->label_vec = malloc((size_t)ld__source_label_count(j->src) * 4);
        LD_CHECK(&c->err, j->label_vec, LD_ENOMEM, "out of memory");
    }
    LD_TRY(describe_output(c, r, j, coco ? coco : voc ? voc : list_file ? list_file : input));
    size_t max_rel = 1;
    for (size_t i = 0; i < r->n; i++) {
        size_t len = strlen(ld__source_rel(j->src, i));
        max_rel = len > max_rel ? len : max_rel;
    }
    ld_writer_opts wo = {
        .desc = &j->rec,
        .max_rel_len = max_rel,
        .path = output,
        .expected_n = r->n,
        .split_bytes = (uint64_t)P(c, LD_C_SPLIT_BYTES),
        .split_relative = P(c, LD_C_SPLIT_PATHS) == LD_SPLIT_PATHS_RELATIVE,
        .deflate = (int)P(c, LD_C_DEFLATE),
        .on_stale = stale_removed,
        .on_stale_user = c,
    };
    if (j->part_path) {
        LD_TRY(shard_select(c, r, j->src, j->format, output, &j->rec, &j->shard, &j->resumed));
        c->stats.total = r->n;
        if (j->resumed) {
            c->stats.resumed = 1;
            return LD_OK; /* nothing to do */
        }
        wo.expected_n = r->n;
        const ld_shard_info *sh = &j->shard;
        j->rec.shard_index = sh->index;
        j->rec.shard_count = sh->count;
        j->rec.shard_first = sh->first;
        j->rec.shard_listed = sh->listed;
        j->rec.listing_total = sh->total;
        LD_CHECK(&c->err, ld__desc_set_text(&j->rec.run_id, sh->run_id) == LD_OK, LD_ENOMEM,
                 "out of memory");
        ld__desc_mark_recorded(&j->rec);
    }
    if (j->format == LD_FORMAT_LMDB)
        LD_TRY(ld__lmdb_writer_create(&wo, &j->wr, &c->err));
    else
        LD_TRY(ld__h5_writer_create(&wo, &j->wr, &c->err));
    log_decisions(c, r, j->format, ncls, !list_file && ld_convert_input_is_archive(input));
fail:
    return rc;
}

/* Step 3: the workers and the window of slots between them and the caller thread. */
static int start_pool(ld_convert *c, job *j)
{
    int rc = LD_OK;
    run *r = &j->r;
    /* The workers only compute (the calling thread reads and writes), so more of them than
     * the CPUs the process may use cannot run at once: they only took turns and cost more
     * hand-offs (2 cores, 2,000 photos: -j4 ran at 0.87-0.93 of -j2 for raw outputs). */
    const int cpus = ld__cpu_count(), asked = (int)P(c, LD_C_THREADS);
    int nthreads = asked > 0 && asked < cpus ? asked : cpus;
    if ((size_t)nthreads > r->n) nthreads = r->n ? (int)r->n : 1; /* a shard may list nothing */
    r->window = (size_t)nthreads * 2 + 2;
    logf_(c, LD_LOG_INFO,
          "threads: %d decoding worker%s%s, at most %zu images in flight; the calling thread "
          "reads the files ahead and writes (output identical for any thread count)",
          nthreads, nthreads == 1 ? "" : "s",
          asked > cpus ? " (no more than the CPUs this process may use)" : "", r->window);
    r->slots = calloc(r->window, sizeof *r->slots);
    r->workers = calloc((size_t)nthreads, sizeof *r->workers);
    LD_CHECK(&c->err, r->slots && r->workers, LD_ENOMEM, "out of memory");
    j->nthreads = nthreads;
    for (int i = 0; i < nthreads; i++) {
        worker *wk = &r->workers[i];
        wk->run = r;
        wk->codec = ld__codec_create();
        wk->resizer = ld__resizer_create();
        LD_CHECK(&c->err, wk->codec && wk->resizer, LD_ENOMEM, "out of memory");
    }
    /* The first window's files, before any worker may start them (drain_in_order reads the
     * next one each time it frees a slot). */
    for (size_t idx = 0; idx < r->window && idx < r->n; idx++)
        read_ahead(r, idx);
    const ld_pool_opts po = {
        .threads = nthreads, .window = r->window, .task = convert_task, .user = r};
    LD_TRY(ld__pool_create(&po, r->n, &j->pool, &c->err));
fail:
    return rc;
}

/* The size of the first image converted, which check_size holds the others to. */
typedef struct slot_size {
    int c, h, w;
    const char *rel; /* its name, NULL before the first image */
} slot_size;

/* A failed slot that stops the run: out of memory, an input that is an output, or any bad
 * file under strict. */
static int stop_at_slot(ld_convert *c, const slot *sl)
{
    const int stopped = !(sl->status == LD_ENOMEM || sl->fatal);
    int rc = ld__err(&c->err, sl->status, "%s%s", sl->err.msg, stopped ? " (stopped: strict)" : "");
    ld__err_param(&c->err, sl->err.param >= 0 ? sl->err.param : stopped ? LD_C_STRICT : -1);
    ld__err_where(&c->err, sl->err.path[0] ? sl->err.path : NULL, sl->err.sample);
    return rc;
}

/* The progress callback with the counts at `now`: LD_OK, or LD_ECANCELED when it asks to stop
 * (nothing is published then). */
static int report_progress(ld_convert *c, const job *j, const char *output, double now)
{
    c->stats.elapsed = now - j->t0;
    if (c->progress(c->progress_user, &c->stats) == 0) return LD_OK;
    return ld__err(&c->err, LD_ECANCELED, "canceled: nothing was written to %s", output);
}

/* The check_size failure: input idx is not the size of the first image. */
static int size_mismatch(ld_convert *c, const job *j, size_t idx, const slot *sl,
                         const slot_size *first)
{
    ld_buf path = {0}; /* the input's full path, for the message that names it */
    ld_item it;
    int rc;
    if (ld__source_get(j->src, idx, &path, &it) != LD_OK) {
        rc = ld__err(&c->err, LD_ENOMEM, "%s: out of memory", ld__source_rel(j->src, idx));
    } else {
        rc = ld__err(&c->err, LD_EINVAL,
                     "%s is %dx%d but %s was %dx%d: %s needs every image the same "
                     "size; set resize_w and resize_h (e.g. 224 x 224)%s",
                     it.path, sl->w, sl->h, first->rel, first->w, first->h,
                     P(c, LD_C_CHECK_SIZE) ? "check_size"
                     : j->r.masks          ? "a dataset with masks"
                                           : "raw HDF5 storage",
                     P(c, LD_C_CHECK_SIZE) || j->r.masks ? "" : " or store JPEG with quality Q");
        ld__err_param(&c->err, LD_C_RESIZE_W);
        ld__err_where(&c->err, it.path, (int64_t)idx);
    }
    ld__buf_free(&path);
    return rc;
}

/* Take the result of input idx (done) from its slot: write it, or count and log its skip;
 * LD_OK, or the failure that stops the run. */
static int take_slot(ld_convert *c, job *j, size_t idx, slot_size *first)
{
    run *r = &j->r;
    const slot *sl = &r->slots[idx % r->window];
    const char *rel = ld__source_rel(j->src, idx);
    c->stats.bytes_in += sl->bytes_in;
    if (sl->status == LD_OK && r->check_size) {
        if (!first->rel)
            *first = (slot_size){sl->c, sl->h, sl->w, rel};
        else if (sl->c != first->c || sl->h != first->h || sl->w != first->w)
            return size_mismatch(c, j, idx, sl, first);
    }
    if (sl->status == LD_OK) {
        ld_sample s = {.data = sl->out.p,
                       .len = sl->out.len,
                       .c = sl->c,
                       .h = sl->h,
                       .w = sl->w,
                       .label = ld__source_label(j->src, idx),
                       .label_vec = j->label_vec,
                       .rel = rel,
                       .mask = r->masks ? sl->mout.p : NULL,
                       .mask_h = sl->mh,
                       .mask_w = sl->mw,
                       .boxes = r->boxes ? (const ld_box *)(const void *)sl->boxes.p : NULL,
                       .n_boxes = r->boxes ? sl->nb : 0};
        if (j->label_vec) ld__source_values(j->src, idx, j->label_vec);
        const int rc = j->wr->vt->add(j->wr, &s, &c->err);
        if (rc < 0) return rc;
        c->stats.converted++;
        c->stats.bytes_out += sl->out.len;
        c->stats.reduced_16bit += (uint64_t)sl->reduced;
        if (r->boxes) {
            c->stats.boxes += sl->nb;
            c->stats.boxes_dropped += sl->boxes_dropped;
        }
        if (sl->dct < 8) j->dct[sl->dct == 1 ? 0 : sl->dct == 2 ? 1 : 2]++;
        if (sl->frames > 1 && c->stats.first_frame_only++ == 0)
            logf_(c, LD_LOG_WARN,
                  "%s has %d pages or frames: only the first is converted (said once; the "
                  "summary counts such files)",
                  (const char *)sl->path.p, sl->frames);
    } else if (sl->status == LD_ENOMEM || sl->fatal || P(c, LD_C_STRICT)) {
        return stop_at_slot(c, sl);
    } else {
        c->stats.skipped++;
        if (sl->status == LD_EIO)
            c->stats.skipped_io++;
        else if (sl->status == LD_ELIMIT)
            c->stats.skipped_limit++;
        else
            c->stats.skipped_format++;
        logf_(c, LD_LOG_WARN, "skipped %s", sl->err.msg);
    }
    c->stats.done++;
    return LD_OK;
}

/* Step 4, on the caller thread: take the results in input order, write them, report; then
 * publish the output. */
static int drain_in_order(ld_convert *c, const char *output, job *j)
{
    int rc = LD_OK;
    run *r = &j->r;
    double last_progress = 0;
    slot_size first = {0, 0, 0, NULL}; /* check_size: the first image's */
    for (size_t idx = 0; idx < r->n; idx++) {
        /* Wake up now and then so the progress callback runs even on slow files. */
        while ((rc = ld__pool_wait(j->pool, idx, c->progress ? 100 : 0)) == LD_POOL_TIMEOUT)
            LD_TRY(report_progress(c, j, output, ld__now()));
        if (rc < 0) { /* not expected: a skip is the slot's status, not a pool failure */
            c->err = *ld__pool_error(j->pool);
            goto fail;
        }
        LD_TRY(take_slot(c, j, idx, &first));

        /* The slot is free: the file of the image that will take it, then let it start. */
        if (idx + r->window < r->n) read_ahead(r, idx + r->window);
        ld__pool_release(j->pool, idx + 1);

        const double now = ld__now();
        if (c->progress && now - last_progress >= 0.1) {
            last_progress = now;
            LD_TRY(report_progress(c, j, output, now));
        }
    }
    if (j->dct[0] + j->dct[1] + j->dct[2])
        logf_(c, LD_LOG_INFO,
              "decode scale auto: %llu JPEGs decoded at a reduced DCT scale (1/2: %llu, 1/4: "
              "%llu, 1/8: %llu), each still >= 2x the output size; decode_scale exact decodes "
              "them whole",
              (unsigned long long)(j->dct[0] + j->dct[1] + j->dct[2]),
              (unsigned long long)j->dct[2], (unsigned long long)j->dct[1],
              (unsigned long long)j->dct[0]);
    /* A shard part may come out empty (it listed nothing, or only bad files): it is still
     * written, so that a merge finds every part; raw storage of unresized images has no
     * shape for it, though. */
    const ld_shard_info *sh = &j->shard;
    if (j->part_path && c->stats.converted == 0) {
        LD_CHECKP(&c->err,
                  r->encoded || j->format == LD_FORMAT_LMDB ||
                      (r->geom.w && r->geom.mode != LD_RESIZE_MAX),
                  LD_EFORMAT, LD_C_RESIZE_W,
                  "part %u/%u: no image could be converted (%llu listed, %llu skipped), and raw "
                  "HDF5 storage without resize_w/resize_h has no image size for an empty part: "
                  "give resize_w and resize_h, or quality; nothing was written to %s",
                  sh->index, sh->count, (unsigned long long)r->n,
                  (unsigned long long)c->stats.skipped, output);
        logf_(c, LD_LOG_WARN,
              "part %u/%u: no image could be converted (%llu listed, %llu skipped): %s holds 0 "
              "samples",
              sh->index, sh->count, (unsigned long long)r->n, (unsigned long long)c->stats.skipped,
              output);
    }
    /* every input over a limit: the parameter to change is max_pixels */
    LD_CHECKP(&c->err, j->part_path || c->stats.converted > 0, LD_EFORMAT,
              c->stats.skipped && c->stats.skipped_limit == c->stats.skipped ? LD_C_MAX_PIXELS : -1,
              "no image could be converted (%llu skipped%s); nothing was written to %s",
              (unsigned long long)c->stats.skipped,
              c->stats.skipped && c->stats.skipped_limit == c->stats.skipped
                  ? ", every one over a limit: max_pixels or the format's"
                  : "",
              output);
    /* The last progress report comes before publishing, so a cancel there still leaves
     * nothing under the output name. */
    if (c->progress) LD_TRY(report_progress(c, j, output, ld__now()));
    LD_TRY(j->wr->vt->finish(j->wr, &c->err));
    c->stats.files_out = (uint32_t)j->wr->files_out;
    return LD_OK;
fail:
    return rc;
}

static void job_free(job *j)
{
    ld__pool_free(j->pool); /* joins the workers before their state is freed */
    for (int i = 0; j->r.workers && i < j->nthreads; i++)
        worker_free(&j->r.workers[i]);
    for (size_t i = 0; j->r.slots && i < j->r.window; i++) {
        ld__buf_free(&j->r.slots[i].out);
        ld__buf_free(&j->r.slots[i].file);
        ld__buf_free(&j->r.slots[i].path);
        ld__buf_free(&j->r.slots[i].mpath);
        ld__buf_free(&j->r.slots[i].mfile);
        ld__buf_free(&j->r.slots[i].mout);
        ld__buf_free(&j->r.slots[i].boxes);
    }
    free(j->r.slots);
    free(j->r.workers);
    if (j->wr) j->wr->vt->free(j->wr); /* removes temporaries unless finish() published them */
    ld__desc_free(&j->rec);
    out_files_free(&j->outs);
    free(j->split_list);
    free(j->part_path);
    free(j->label_vec);
    ld__source_free(j->src);
}

/* The parameter that changes what a lower module refused, by its reason (ld_reason). */
static int param_of_reason(int why)
{
    switch (why) {
    case LD_WHY_SHAPE_DIFFERS: return LD_C_RESIZE_W;
    case LD_WHY_OVERWRITES_INPUT: return LD_C_SPLIT_BYTES;
    case LD_WHY_STRICT: return LD_C_STRICT;
    default: return -1;
    }
}

int ld_convert_input_is_archive(const char *input)
{
    struct stat st; /* a folder named like an archive stays a folder */
    return input && ld__source_archive_suffix(input) > 0 &&
           !(stat(input, &st) == 0 && S_ISDIR(st.st_mode));
}

int ld_convert_run(ld_convert *c, const char *input, const char *output)
{
    int rc = LD_OK;
    job j;
    memset(&j, 0, sizeof j);
    j.t0 = ld__now();
    memset(&c->stats, 0, sizeof c->stats);
    ld__err_clear(&c->err);
    LD_CHECK(&c->err, input && output && *input && *output, LD_EINVAL,
             "convert: an input and an output path are required");
    LD_TRY(resolve_settings(c, output, &j)); /* the format from the name given, not the part's */
    LD_TRY(shard_output(c, &output, &j));
    LD_TRY(open_source_and_writer(c, input, output, &j));
    if (j.resumed) goto fail; /* rc == LD_OK: the part is there from the same run */
    LD_TRY(start_pool(c, &j));
    LD_TRY(drain_in_order(c, output, &j));
fail:
    job_free(&j);
    c->stats.elapsed = ld__now() - j.t0;
    if (rc < 0 && c->err.param < 0) ld__err_param(&c->err, param_of_reason(c->err.reason));
    if (rc < 0) logf_(c, LD_LOG_ERROR, "%s", c->err.msg);
    return rc;
}
