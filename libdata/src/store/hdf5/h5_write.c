/*
 * HDF5 writer: the libdata layout of h5_format.h, streamed sample by sample.
 *
 * Every dataset is written one whole chunk at a time from an in-memory chunk buffer (zero
 * padded at the end), and grown with H5Dset_extent just before each write; finish() shrinks
 * each dataset to its real length. Whole-chunk writes never make HDF5 read back a chunk, and
 * together with no object time stamps and no fill writes they make the file's bytes a
 * function of the samples only (same input -> byte-identical file).
 *
 * Used by one thread; HDF5 (serial build) is not thread-safe, so the converter makes every
 * HDF5 call from its writer thread.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* realpath */
#endif
#include "store/writer.h"

#include "libdata/libdata.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/hdf5/h5_desc.h"
#include "store/hdf5/h5_format.h"
#include "store/hdf5/h5_util.h"
#include "store/hdf5/h5_vfd.h"
#include "store/store.h"

/* ---- one dataset, written in whole chunks -------------------------------------------------- */

typedef struct col {
    const char *name;
    hid_t ds;
    hid_t ftype, mtype; /* file and memory types (mtype owned only for strings) */
    int rank;
    hsize_t row[3];   /* dims after the first; row elements = product */
    size_t row_bytes; /* bytes of one row in memory */
    size_t chunk_rows;
    uint8_t *buf;     /* chunk_rows * row_bytes */
    size_t fill;      /* rows buffered */
    uint64_t written; /* rows written to the file (a multiple of chunk_rows) */
    int deflate;
    int vlen; /* variable-length strings: buf holds char *, text in `text` */
    ld_buf text;
    size_t *text_off;
} col;

static int col_init(col *c, const char *name, hid_t ftype, hid_t mtype, int rank,
                    const hsize_t *row, size_t elem_bytes, size_t chunk_rows)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->ds = H5I_INVALID_HID;
    c->ftype = ftype;
    c->mtype = mtype;
    c->rank = rank;
    size_t rb = elem_bytes;
    for (int i = 1; i < rank; i++) {
        c->row[i - 1] = row[i - 1];
        if (!ld__mul_size(rb, (size_t)row[i - 1], &rb)) return LD_ELIMIT;
    }
    c->row_bytes = rb;
    c->chunk_rows = chunk_rows;
    size_t bytes;
    if (!ld__mul_size(rb, chunk_rows, &bytes)) return LD_ELIMIT;
    c->buf = calloc(1, bytes);
    return c->buf ? LD_OK : LD_ENOMEM;
}

static void col_free(col *c)
{
    if (c->ds >= 0) H5Dclose(c->ds);
    c->ds = H5I_INVALID_HID;
    free(c->buf);
    c->buf = NULL;
    ld__buf_free(&c->text);
    free(c->text_off);
    c->text_off = NULL;
}

/* Every column is written in whole chunks straight to the file, so HDF5's chunk cache would
 * only hold copies of chunks that are never touched again: up to 1 MiB per dataset, filled
 * only by long conversions (the small columns' chunks are 16-48 KiB). */
static int no_chunk_cache(hid_t dapl, const col *c, ld_err *e)
{
    if (H5Pset_chunk_cache(dapl, H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0, H5D_CHUNK_CACHE_W0_DEFAULT) < 0)
        return ld__err(e, LD_EINVAL, "HDF5: cannot set up dataset /%s", c->name);
    return LD_OK;
}

static int col_create(col *c, hid_t file, ld_err *e)
{
    int rc = LD_OK;
    hid_t space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, dapl = H5I_INVALID_HID;
    hsize_t dims[4] = {0}, maxdims[4] = {H5S_UNLIMITED}, chunk[4] = {c->chunk_rows};
    for (int i = 1; i < c->rank; i++)
        dims[i] = maxdims[i] = chunk[i] = c->row[i - 1];
    space = H5Screate_simple(c->rank, dims, maxdims);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    dapl = H5Pcreate(H5P_DATASET_ACCESS);
    LD_CHECK(e, space >= 0 && dcpl >= 0 && dapl >= 0, LD_ENOMEM, "HDF5: out of memory");
    LD_CHECK(e,
             H5Pset_chunk(dcpl, c->rank, chunk) >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0 &&
                 H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_INCR) >= 0,
             LD_EINVAL, "HDF5: cannot set up dataset /%s", c->name);
    /* Never write fill values: every chunk is fully written by us. HDF5 refuses NEVER for
     * variable-length types, which keep the default (no fill value is defined anyway). */
    if (!c->vlen)
        LD_CHECK(e, H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0, LD_EINVAL,
                 "HDF5: cannot set fill time of /%s", c->name);
    if (c->deflate > 0)
        LD_CHECK(e, H5Pset_deflate(dcpl, (unsigned)c->deflate) >= 0, LD_ENOTSUP,
                 "HDF5: deflate filter not available for /%s", c->name);
    LD_TRY(no_chunk_cache(dapl, c, e));
    c->ds = H5Dcreate2(file, c->name, c->ftype, space, H5P_DEFAULT, dcpl, dapl);
    if (c->ds < 0) rc = ld__h5_err(e, LD_EIO, "HDF5: cannot create dataset /%s", c->name);
    c->written = 0;
    c->fill = 0;
fail:
    if (space >= 0) H5Sclose(space);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (dapl >= 0) H5Pclose(dapl);
    return rc;
}

/* Open the existing dataset again after the file was reopened (see file_reopen). */
static int col_open(col *c, hid_t file, ld_err *e)
{
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl < 0) return ld__err(e, LD_ENOMEM, "HDF5: out of memory");
    int rc = no_chunk_cache(dapl, c, e);
    if (rc < 0) {
        H5Pclose(dapl);
        return rc;
    }
    c->ds = H5Dopen2(file, c->name, dapl);
    H5Pclose(dapl);
    if (c->ds < 0) return ld__h5_err(e, LD_EIO, "HDF5: cannot reopen dataset /%s", c->name);
    return LD_OK;
}

/* Write the buffered rows as one whole chunk (zero padded), growing the dataset to cover it. */
static int col_flush(col *c, ld_err *e)
{
    int rc = LD_OK;
    hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
    if (c->fill == 0) return LD_OK;
    if (c->vlen) {
        /* Pointers are made only now: the text buffer may have moved while it grew. */
        char **ptr = (char **)(void *)c->buf;
        for (size_t i = 0; i < c->chunk_rows; i++)
            ptr[i] = i < c->fill ? (char *)c->text.p + c->text_off[i] : NULL;
    } else if (c->fill < c->chunk_rows) {
        memset(c->buf + c->fill * c->row_bytes, 0, (c->chunk_rows - c->fill) * c->row_bytes);
    }
    hsize_t dims[4], start[4] = {c->written}, count[4] = {c->chunk_rows};
    dims[0] = c->written + c->chunk_rows;
    for (int i = 1; i < c->rank; i++)
        dims[i] = count[i] = c->row[i - 1];
    if (H5Dset_extent(c->ds, dims) < 0) {
        rc = ld__h5_err(e, LD_EIO, "HDF5: cannot extend /%s to %llu rows", c->name,
                        (unsigned long long)dims[0]);
        goto fail;
    }
    fspace = H5Dget_space(c->ds);
    mspace = H5Screate_simple(c->rank, count, NULL);
    if (fspace < 0 || mspace < 0 ||
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dwrite(c->ds, c->mtype, mspace, fspace, H5P_DEFAULT, c->buf) < 0) {
        rc = ld__h5_err(e, LD_EIO, "HDF5: cannot write /%s rows %llu..%llu", c->name,
                        (unsigned long long)c->written, (unsigned long long)dims[0]);
        goto fail;
    }
    c->written += c->chunk_rows;
    c->fill = 0;
    c->text.len = 0;
fail:
    if (fspace >= 0) H5Sclose(fspace);
    if (mspace >= 0) H5Sclose(mspace);
    return rc;
}

/* Append rows (n * row_bytes bytes), flushing whole chunks as they fill. */
static int col_append(col *c, const void *rows, size_t n, ld_err *e)
{
    const uint8_t *p = rows;
    while (n > 0) {
        size_t take = c->chunk_rows - c->fill;
        if (take > n) take = n;
        memcpy(c->buf + c->fill * c->row_bytes, p, take * c->row_bytes);
        c->fill += take;
        p += take * c->row_bytes;
        n -= take;
        if (c->fill == c->chunk_rows) {
            int rc = col_flush(c, e);
            if (rc < 0) return rc;
        }
    }
    return LD_OK;
}

static int col_append_str(col *c, const char *s, ld_err *e)
{
    if (!c->text_off) {
        c->text_off = malloc(c->chunk_rows * sizeof *c->text_off);
        if (!c->text_off) return ld__err(e, LD_ENOMEM, "out of memory");
    }
    c->text_off[c->fill] = c->text.len;
    if (ld__buf_append(&c->text, s, strlen(s) + 1) < 0)
        return ld__err(e, LD_ENOMEM, "out of memory");
    if (++c->fill == c->chunk_rows) return col_flush(c, e);
    return LD_OK;
}

/* Flush the last partial chunk and shrink the dataset to `rows`. */
static int col_close(col *c, uint64_t rows, ld_err *e)
{
    int rc = col_flush(c, e);
    if (rc < 0) return rc;
    hsize_t dims[4] = {rows};
    for (int i = 1; i < c->rank; i++)
        dims[i] = c->row[i - 1];
    if (H5Dset_extent(c->ds, dims) < 0)
        return ld__h5_err(e, LD_EIO, "HDF5: cannot set the final size of /%s", c->name);
    if (H5Dclose(c->ds) < 0) {
        c->ds = H5I_INVALID_HID;
        return ld__h5_err(e, LD_EIO, "HDF5: cannot close /%s", c->name);
    }
    c->ds = H5I_INVALID_HID;
    return LD_OK;
}

/* ---- the writer ------------------------------------------------------------------------------ */

typedef struct h5w {
    ld_writer base;
    ld_desc rec; /* what the files record (a copy of the options'); shape set at the end */
    char *path, *stem;
    int encoded, channels, deflate; /* from rec */
    uint64_t split_bytes;
    int split_relative; /* list lines relative to the list's folder (else absolute) */
    /* raw shape, fixed by the first sample */
    int c, h, w;
    size_t sample_bytes;
    char *first_rel;
    /* the open file */
    hid_t file;
    col data, label, name, offsets, shape;
    col mask;      /* segmentation masks (N, 1, H, W) uint8, when the description has them */
    int has_label; /* the description has a label field (not so: an unlabelled list's masks
                      are the label, named "label" and written as the mask column) */
    int mh, mw;    /* the masks' size, fixed by the first sample */
    /* detection boxes (ragged): rows of all samples, and where each sample's start */
    col boxes, box_label, box_flags, box_offsets;
    int has_boxes;
    uint64_t file_boxes; /* rows in this file's /boxes */
    int cols_ready;
    int io_err; /* errno of the first write the driver failed (h5_vfd.h: its sink), or 0 */
    uint64_t file_n, file_bytes;
    uint64_t reopen_at;         /* reopen the file when /data has this many rows written */
    int file_c, file_h, file_w; /* encoded: common shape of this file's samples, -1 if mixed */
    /* every file made so far: temporary name -> final name */
    char **tmp, **final;
    size_t n_files, cap_files;
    hid_t vstr; /* variable-length UTF-8 string type */
    hid_t vfd;  /* our file driver (h5_vfd.h), registered by make_fapl */
    hid_t fstr; /* fixed-length UTF-8 string type for /filename, or invalid */
    size_t max_rel_len;
    uint64_t expected_n;  /* inputs announced: caps the chunk of small datasets */
    ld_stale_fn on_stale; /* see ld_writer_opts */
    void *on_stale_user;
    int finished, failed;
} h5w;

static int lower_ascii(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
}

static int has_ext(const char *p, const char *ext)
{
    size_t n = strlen(p), m = strlen(ext);
    if (n <= m) return 0;
    for (size_t i = 0; i < m; i++)
        if (lower_ascii((unsigned char)p[n - m + i]) != ext[i]) return 0;
    return 1;
}

char *ld__h5_split_stem(const char *path)
{
    /* the output path without its .h5/.hdf5 (or .txt, the list's own) extension */
    char *stem = ld__strdup(path);
    if (!stem) return NULL;
    if (has_ext(stem, ".h5") || has_ext(stem, ".txt"))
        stem[strlen(stem) - (has_ext(stem, ".h5") ? 3 : 4)] = '\0';
    else if (has_ext(stem, ".hdf5"))
        stem[strlen(stem) - 5] = '\0';
    return stem;
}

/* The root attributes of the open file: the description with this file's shape. */
static int write_attrs(h5w *w, ld_err *e)
{
    int c = w->encoded ? w->channels : w->c;
    if (w->encoded && w->file_c > 0) c = w->file_c;
    w->rec.channels = c;
    w->rec.height = w->encoded ? (w->file_h > 0 ? w->file_h : 0) : w->h;
    w->rec.width = w->encoded ? (w->file_w > 0 ? w->file_w : 0) : w->w;
    /* GRAY says the images have 1 channel (encoded originals may have 3 in a gray run) */
    const char *order = w->rec.channel_order ? w->rec.channel_order : LD_H5_ORDER_BGR;
    if (c == 1 || !strcmp(order, LD_H5_ORDER_GRAY))
        order = c == 1 ? LD_H5_ORDER_GRAY : LD_H5_ORDER_BGR;
    if (ld__desc_set_text(&w->rec.channel_order, order) < 0)
        return ld__err(e, LD_ENOMEM, "out of memory");
    return ld__h5_desc_write(w->file, &w->rec, w->tmp[w->n_files - 1], e);
}

/* Bytes per /encoded chunk: LD_H5_CHUNK_BYTES, unless the data will be smaller: then the
 * estimate from the first image (first_len x the announced inputs, +25 %), and never more
 * than a --split part holds, in multiples of 4 KiB. Every chunk is written whole, so a
 * 1 MiB chunk made a 20 KiB dataset (or split part) a 1.1 MiB file. */
static size_t encoded_chunk(const h5w *w, size_t first_len)
{
    const uint64_t page = 4096, max = LD_H5_CHUNK_BYTES;
    uint64_t want = max;
    if (first_len && w->expected_n && first_len <= max && w->expected_n <= max) {
        uint64_t est = (uint64_t)first_len * w->expected_n;
        est += est / 4;
        if (est < want) want = est;
    }
    if (w->split_bytes && w->split_bytes < want) want = w->split_bytes;
    want = (want + page - 1) / page * page;
    return (size_t)(want < page ? page : want > max ? max : want);
}

/* Rows per chunk of the small per-sample columns: `def`, or fewer when fewer samples (+1 for
 * /offsets) were announced, so that a small file is not made of mostly padding. */
static size_t small_chunk(const h5w *w, size_t def)
{
    return w->expected_n && w->expected_n + 1 < def ? (size_t)w->expected_n + 1 : def;
}

/* Rows per /label chunk: LD_H5_LABEL_CHUNK, fewer for long label vectors (chunks of at most
 * LD_H5_LABEL_CHUNK x 16 bytes: one row of 4,096 values is a 16 KiB chunk). */
static size_t label_chunk_rows(int k)
{
    const size_t max_bytes = (size_t)LD_H5_LABEL_CHUNK * 16, row = 4 * (size_t)(k > 1 ? k : 1);
    const size_t rows = max_bytes / row;
    return rows > LD_H5_LABEL_CHUNK ? LD_H5_LABEL_CHUNK : rows ? rows : 1;
}

/* Set up the column layouts (not the datasets) once the sample shape is known (encoded:
 * once the first image's size is, or at finish() when there was none). */
/* Bytes of one stored sample value: 2 for uint16 pixels (depth 16), else 1. */
static size_t sample_size(const h5w *w)
{
    return w->rec.dtype == LD_DTYPE_U16 ? 2 : 1;
}

static int cols_setup(h5w *w, size_t first_len, ld_err *e)
{
    int rc = LD_OK;
    hsize_t none[1] = {0};
    if (w->encoded) {
        hsize_t three[1] = {3};
        LD_TRY(col_init(&w->data, LD_H5_DS_ENCODED, H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, none, 1,
                        encoded_chunk(w, first_len)));
        LD_TRY(col_init(&w->offsets, LD_H5_DS_OFFSETS, H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, none, 8,
                        small_chunk(w, LD_H5_LABEL_CHUNK)));
        LD_TRY(col_init(&w->shape, LD_H5_DS_SHAPE, H5T_STD_U32LE, H5T_NATIVE_UINT32, 2, three, 4,
                        small_chunk(w, LD_H5_SHAPE_CHUNK)));
    } else {
        hsize_t row[3] = {(hsize_t)w->c, (hsize_t)w->h, (hsize_t)w->w};
        size_t k = LD_H5_CHUNK_BYTES / w->sample_bytes;
        /* A small dataset (or split file) gets chunks no larger than itself. */
        if (w->expected_n && k > w->expected_n) k = (size_t)w->expected_n;
        if (w->split_bytes && k > w->split_bytes / w->sample_bytes)
            k = (size_t)(w->split_bytes / w->sample_bytes);
        const int wide = w->rec.dtype == LD_DTYPE_U16; /* uint16 samples (depth 16) */
        LD_TRY(col_init(&w->data, LD_H5_DS_DATA, wide ? H5T_STD_U16LE : H5T_STD_U8LE,
                        wide ? H5T_NATIVE_UINT16 : H5T_NATIVE_UINT8, 4, row, wide ? 2 : 1,
                        k ? k : 1));
        w->data.deflate = w->deflate;
    }
    /* one int32 label per sample, or label vectors (N, K) of the label field's type */
    const int k = ld__desc_label_k(&w->rec);
    const int lf = w->rec.label_dtype == LD_DTYPE_F32;
    hsize_t kdim[1] = {(hsize_t)k};
    if (w->has_label)
        LD_TRY(col_init(&w->label, LD_H5_DS_LABEL, lf ? H5T_IEEE_F32LE : H5T_STD_I32LE,
                        lf ? H5T_NATIVE_FLOAT : H5T_NATIVE_INT32, k ? 2 : 1, k ? kdim : none, 4,
                        small_chunk(w, label_chunk_rows(k))));
    if (w->has_boxes) { /* chunks of LD_H5_LABEL_CHUNK rows */
        hsize_t four[1] = {4};
        LD_TRY(col_init(&w->boxes, LD_H5_DS_BOXES, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 2, four, 4,
                        LD_H5_LABEL_CHUNK));
        LD_TRY(col_init(&w->box_label, LD_H5_DS_BOX_LABEL, H5T_STD_I32LE, H5T_NATIVE_INT32, 1, none,
                        4, LD_H5_LABEL_CHUNK));
        LD_TRY(col_init(&w->box_flags, LD_H5_DS_BOX_FLAGS, H5T_STD_U8LE, H5T_NATIVE_UINT8, 1, none,
                        1, LD_H5_LABEL_CHUNK));
        LD_TRY(col_init(&w->box_offsets, LD_H5_DS_BOX_OFFSETS, H5T_STD_I64LE, H5T_NATIVE_INT64, 1,
                        none, 8, small_chunk(w, LD_H5_LABEL_CHUNK)));
    }
    const ld_desc_field *mf = ld__desc_mask(&w->rec);
    if (mf) { /* chunks of whole masks, about as many bytes as /data's */
        hsize_t row[3] = {1, (hsize_t)w->mh, (hsize_t)w->mw};
        const int wide = mf->dtype == LD_DTYPE_U16; /* uint16 masks (--mask-type uint16) */
        const size_t eb = wide ? 2 : 1;
        size_t rows = LD_H5_CHUNK_BYTES / ((size_t)w->mh * (size_t)w->mw * eb);
        if (w->expected_n && rows > w->expected_n) rows = (size_t)w->expected_n;
        LD_TRY(col_init(&w->mask, mf->name, wide ? H5T_STD_U16LE : H5T_STD_U8LE,
                        wide ? H5T_NATIVE_UINT16 : H5T_NATIVE_UINT8, 4, row, eb, rows ? rows : 1));
        w->mask.deflate = w->deflate;
    }
    if (w->fstr >= 0) {
        LD_TRY(col_init(&w->name, LD_H5_DS_FILENAME, w->fstr, w->fstr, 1, none, w->max_rel_len,
                        small_chunk(w, LD_H5_NAME_CHUNK)));
    } else {
        LD_TRY(col_init(&w->name, LD_H5_DS_FILENAME, w->vstr, w->vstr, 1, none, sizeof(char *),
                        small_chunk(w, LD_H5_NAME_CHUNK)));
        w->name.vlen = 1;
    }
    w->cols_ready = 1;
fail:
    if (rc < 0) ld__err(e, rc, "cannot allocate the HDF5 chunk buffers");
    return rc;
}

static int cols_create(h5w *w, ld_err *e)
{
    int rc = LD_OK;
    LD_TRY(col_create(&w->data, w->file, e));
    if (w->encoded) {
        LD_TRY(col_create(&w->offsets, w->file, e));
        LD_TRY(col_create(&w->shape, w->file, e));
        uint64_t zero = 0; /* offsets[0] */
        LD_TRY(col_append(&w->offsets, &zero, 1, e));
    }
    if (w->has_label) LD_TRY(col_create(&w->label, w->file, e));
    if (w->mask.buf) LD_TRY(col_create(&w->mask, w->file, e));
    if (w->has_boxes) {
        LD_TRY(col_create(&w->boxes, w->file, e));
        LD_TRY(col_create(&w->box_label, w->file, e));
        LD_TRY(col_create(&w->box_flags, w->file, e));
        LD_TRY(col_create(&w->box_offsets, w->file, e));
        const int64_t zero = 0; /* box_offsets[0] */
        LD_TRY(col_append(&w->box_offsets, &zero, 1, e));
        w->file_boxes = 0;
    }
    LD_TRY(col_create(&w->name, w->file, e));
fail:
    return rc;
}

static int add_name(h5w *w, char *tmp, char *final)
{
    if (w->n_files == w->cap_files) {
        size_t cap = w->cap_files ? w->cap_files * 2 : 8;
        char **t = realloc(w->tmp, cap * sizeof *t);
        if (t) w->tmp = t;
        char **f = realloc(w->final, cap * sizeof *f);
        if (f) w->final = f;
        if (!t || !f) return LD_ENOMEM;
        w->cap_files = cap;
    }
    w->tmp[w->n_files] = tmp;
    w->final[w->n_files] = final;
    w->n_files++;
    return LD_OK;
}

/* File access properties, the same when a file is created and when it is reopened. */
static int make_fapl(h5w *w, hid_t *out, ld_err *e)
{
    if (w->vfd < 0 && (w->vfd = ld__h5_vfd_register()) < 0)
        return ld__h5_err(e, LD_EINVAL, "HDF5: cannot register the file driver");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) return ld__err(e, LD_ENOMEM, "HDF5: out of memory");
    /* The HDF5 1.8 file format, which HDF5 1.8 (Caffe builds) reads: its object headers
     * hold attributes over 64 KiB (many class names) and carry checksums, so that a damaged
     * header is refused at open instead of read (a flipped byte in a string attribute's
     * length made HDF5 1.10 allocate and clear gigabytes in a 1.6-format header).
     * Big chunks start on 4 KiB boundaries: a reader can map or read them page-aligned. */
    if (H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) < 0 ||
        ld__h5_vfd_set(fapl, w->vfd, &w->io_err) < 0 || /* h5_vfd.h: failures close cleanly */
        H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
        H5Pset_alignment(fapl, 65536, 4096) < 0) {
        H5Pclose(fapl);
        return ld__err(e, LD_EINVAL, "HDF5: cannot set file properties");
    }
    *out = fapl;
    return LD_OK;
}

/* Start the next output file (under its temporary name). */
static int file_open(h5w *w, ld_err *e)
{
    int rc = LD_OK;
    char *final = NULL, *tmp = NULL;
    hid_t fcpl = H5I_INVALID_HID, fapl = H5I_INVALID_HID;
    if (w->split_bytes)
        final = ld__asprintf("%s" LD_H5_SPLIT_FMT LD_H5_SPLIT_EXT, w->stem, (unsigned)w->n_files);
    else
        final = ld__strdup(w->path);
    LD_CHECK(e, final, LD_ENOMEM, "out of memory");
    ld__sweep_stale_temps(final, w->on_stale, w->on_stale_user);
    tmp = ld__temp_name(final, w);
    LD_CHECK(e, tmp, LD_ENOMEM, "out of memory");
    LD_CHECK(e, add_name(w, tmp, final) == LD_OK, LD_ENOMEM, "out of memory");
    final = tmp = NULL; /* owned by the name list now */

    fcpl = H5Pcreate(H5P_FILE_CREATE);
    LD_CHECK(e, fcpl >= 0, LD_ENOMEM, "HDF5: out of memory");
    /* No time stamps on the root group (reproducible bytes). */
    LD_CHECK(e, H5Pset_obj_track_times(fcpl, 0) >= 0, LD_EINVAL,
             "HDF5: cannot set file properties");
    LD_TRY(make_fapl(w, &fapl, e));
    errno = 0;
    w->file = H5Fcreate(w->tmp[w->n_files - 1], H5F_ACC_TRUNC, fcpl, fapl);
    if (w->file < 0) {
        /* The open(2) failure says it best ("No such file or directory"); HDF5's own text
         * repeats the temporary name and its flags. */
        int err = errno;
        if (err) {
            H5Eclear2(H5E_DEFAULT);
            rc = ld__err(e, err == ENOMEM ? LD_ENOMEM : LD_EIO,
                         "%s: cannot create the output file: %s (writing %s)",
                         w->final[w->n_files - 1], strerror(err), w->tmp[w->n_files - 1]);
        } else {
            rc = ld__h5_err(e, LD_EIO, "%s: cannot create the output file (writing %s)",
                            w->final[w->n_files - 1], w->tmp[w->n_files - 1]);
        }
        goto fail;
    }
    if (w->n_files == 1) /* our temporary exists, locked: is another run writing there? */
        LD_TRY(ld__refuse_second_writer(w->final[0], w->tmp[0], e));
    w->file_n = w->file_bytes = 0;
    w->file_c = w->file_h = w->file_w = 0;
    w->reopen_at = 0;
    if (w->cols_ready) LD_TRY(cols_create(w, e));
fail:
    free(final);
    free(tmp);
    if (fcpl >= 0) H5Pclose(fcpl);
    if (fapl >= 0) H5Pclose(fapl);
    return rc;
}

/* A write that the driver failed (h5_vfd.h): HDF5 saw a success, the file is lost. */
static int io_check(const h5w *w, ld_err *e)
{
    if (!w->io_err) return LD_OK;
    ld__err(e, LD_EIO, "%s: cannot write HDF5 file: %s", w->tmp[w->n_files - 1],
            strerror(w->io_err));
    if (e) e->sys_errno = w->io_err;
    return LD_EIO;
}

/* Complete the open file: last chunks, final sizes, attributes, close. */
static int file_close(h5w *w, ld_err *e)
{
    int rc = LD_OK;
    if (w->cols_ready) {
        LD_TRY(col_close(&w->data, w->encoded ? w->file_bytes : w->file_n, e));
        if (w->encoded) {
            LD_TRY(col_close(&w->offsets, w->file_n + 1, e));
            LD_TRY(col_close(&w->shape, w->file_n, e));
        }
        if (w->has_label) LD_TRY(col_close(&w->label, w->file_n, e));
        if (w->mask.buf) LD_TRY(col_close(&w->mask, w->file_n, e));
        if (w->has_boxes) {
            LD_TRY(col_close(&w->boxes, w->file_boxes, e));
            LD_TRY(col_close(&w->box_label, w->file_boxes, e));
            LD_TRY(col_close(&w->box_flags, w->file_boxes, e));
            LD_TRY(col_close(&w->box_offsets, w->file_n + 1, e));
        }
        LD_TRY(col_close(&w->name, w->file_n, e));
    }
    LD_TRY(write_attrs(w, e));
    if (H5Fflush(w->file, H5F_SCOPE_LOCAL) < 0) {
        LD_TRY(ld__h5_err(e, LD_EIO, "%s: cannot write HDF5 file", w->tmp[w->n_files - 1]));
    }
    LD_TRY(io_check(w, e));
    herr_t r = H5Fclose(w->file); /* cannot fail for a write: the driver's sink took it */
    w->file = H5I_INVALID_HID;
    if (r < 0) rc = ld__h5_err(e, LD_EIO, "%s: cannot close HDF5 file", w->tmp[w->n_files - 1]);
    if (rc == LD_OK) rc = io_check(w, e);
fail:
    return rc;
}

/*
 * Close the open file and open it again, every REOPEN_CHUNKS chunks of /data (/encoded).
 * HDF5 keeps two things per chunk for as long as a file is open, so a long conversion would
 * grow without bound: the chunk index's B-tree nodes in the metadata cache (~300 bytes per
 * chunk: each node holds 65 native keys of 272 bytes) until the cache reaches its size
 * (megabytes), and a free-space record (~170 bytes) for the gap that 4 KiB alignment leaves
 * before each chunk (a /data chunk is rarely a multiple of 4 KiB; the gaps are too small for
 * anything the file still allocates). Closing writes the nodes out and drops the records
 * (free space is not persistent in our file format, so the gaps stay unused, as they would
 * anyway). The reopen happens at fixed row counts, so the bytes still depend only on the
 * samples. Our own chunk buffers are untouched: rows buffered since the last chunk stay.
 */
#define REOPEN_CHUNKS 256

static int file_reopen(h5w *w, ld_err *e)
{
    int rc = LD_OK;
    hid_t fapl = H5I_INVALID_HID;
    const char *tmp = w->tmp[w->n_files - 1];
    col *cols[] = {&w->data, &w->label, &w->name,      &w->offsets,   &w->shape,
                   &w->mask, &w->boxes, &w->box_label, &w->box_flags, &w->box_offsets};
    int open[sizeof cols / sizeof cols[0]];
    if (H5Fflush(w->file, H5F_SCOPE_LOCAL) < 0)
        LD_TRY(ld__h5_err(e, LD_EIO, "%s: cannot write HDF5 file", tmp));
    LD_TRY(io_check(w, e)); /* a reopened file would read what the driver discarded */
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        open[i] = cols[i]->ds >= 0;
        if (open[i] && H5Dclose(cols[i]->ds) < 0) {
            cols[i]->ds = H5I_INVALID_HID;
            LD_TRY(ld__h5_err(e, LD_EIO, "HDF5: cannot close /%s", cols[i]->name));
        }
        cols[i]->ds = H5I_INVALID_HID;
    }
    herr_t r = H5Fclose(w->file);
    w->file = H5I_INVALID_HID;
    if (r < 0) LD_TRY(ld__h5_err(e, LD_EIO, "%s: cannot close HDF5 file", tmp));
    LD_TRY(io_check(w, e));
    LD_TRY(make_fapl(w, &fapl, e));
    w->file = H5Fopen(tmp, H5F_ACC_RDWR, fapl);
    if (w->file < 0) LD_TRY(ld__h5_err(e, LD_EIO, "%s: cannot reopen HDF5 file", tmp));
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        if (open[i]) LD_TRY(col_open(cols[i], w->file, e));
fail:
    if (fapl >= 0) H5Pclose(fapl);
    return rc;
}

/* A write that failed for want of space (or past `ulimit -f`) says so, naming the output. */
static void explain_io(const h5w *w, ld_err *e)
{
    if (w->n_files && e)
        ld__explain_write_failure(e, e->sys_errno, w->final[w->n_files - 1],
                                  w->tmp[w->n_files - 1] ? w->tmp[w->n_files - 1] : "");
}

static int h5w_add(ld_writer *base, const ld_sample *s, ld_err *e)
{
    h5w *w = (h5w *)base;
    int rc = LD_OK;
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    LD_CHECK(e, !w->finished && !w->failed, LD_ESTATE,
             "HDF5 writer: add() after finish() or after a failed write");
    LD_CHECK(e, s->c >= 1 && s->h >= 1 && s->w >= 1 && s->rel, LD_EINVAL,
             "HDF5 writer: sample %s has an invalid shape %dx%dx%d", s->rel ? s->rel : "?", s->c,
             s->h, s->w);
    if (ld__desc_mask(&w->rec)) {
        LD_CHECK(e, s->mask && s->mask_h >= 1 && s->mask_w >= 1, LD_EINVAL,
                 "HDF5 writer: sample %s has no mask", s->rel);
        if (!w->cols_ready) {
            w->mh = s->mask_h;
            w->mw = s->mask_w;
        }
        LD_CHECKR(e, s->mask_h == w->mh && s->mask_w == w->mw, LD_EINVAL, LD_WHY_SHAPE_DIFFERS,
                  "%s: mask is %dx%d (height x width) but the dataset's masks are %dx%d: masks "
                  "are stored as one array, all of one size; set resize_w and resize_h",
                  s->rel, s->mask_h, s->mask_w, w->mh, w->mw);
    }
    if (!w->encoded) {
        if (!w->first_rel) {
            size_t n;
            LD_CHECK(e,
                     ld__mul_size((size_t)s->c, (size_t)s->h, &n) &&
                         ld__mul_size(n, (size_t)s->w * sample_size(w), &n),
                     LD_ELIMIT, "%s: image too large", s->rel);
            LD_CHECK(e, !w->split_bytes || n <= w->split_bytes, LD_EINVAL,
                     "split size %llu bytes is smaller than one sample (%dx%dx%d = %zu bytes)",
                     (unsigned long long)w->split_bytes, s->c, s->h, s->w, n);
            w->c = s->c;
            w->h = s->h;
            w->w = s->w;
            w->sample_bytes = n;
            LD_TRY(cols_setup(w, 0, e));
            w->first_rel = ld__strdup(s->rel);
            LD_CHECK(e, w->first_rel, LD_ENOMEM, "out of memory");
            LD_TRY(cols_create(w, e));
        }
        LD_CHECKR(e, s->c == w->c && s->h == w->h && s->w == w->w, LD_EINVAL, LD_WHY_SHAPE_DIFFERS,
                  "%s: image is %dx%dx%d (channels x height x width) but the dataset's images are "
                  "%dx%dx%d (fixed by the first image, %s); raw HDF5 storage needs one size: set "
                  "resize_w and resize_h to give every image the same size, or quality to store "
                  "encoded images",
                  s->rel, s->c, s->h, s->w, w->c, w->h, w->w, w->first_rel);
        LD_CHECK(e, s->len == w->sample_bytes, LD_EINVAL,
                 "%s: sample has %zu bytes, expected %zu for %dx%dx%d", s->rel, s->len,
                 w->sample_bytes, s->c, s->h, s->w);
    } else {
        LD_CHECK(e, !w->split_bytes || s->len <= w->split_bytes, LD_EINVAL,
                 "%s: encoded image (%zu bytes) is larger than the split size %llu", s->rel, s->len,
                 (unsigned long long)w->split_bytes);
        if (!w->cols_ready) {
            LD_TRY(cols_setup(w, s->len, e));
            LD_TRY(cols_create(w, e));
        }
    }
    /* Split: a new file when this sample would push the data over the limit (or over
     * Caffe's 2^31-1 elements per blob). */
    if (w->split_bytes && w->file_n > 0 &&
        (w->file_bytes + s->len > w->split_bytes ||
         w->file_bytes + s->len > LD_H5_MAX_ELEMS_PER_FILE)) {
        LD_TRY(file_close(w, e));
        LD_TRY(file_open(w, e));
    }
    LD_TRY(col_append(&w->data, s->data, w->encoded ? s->len : 1, e));
    if (w->encoded) {
        uint64_t end = w->file_bytes + s->len;
        uint32_t shp[3] = {(uint32_t)s->c, (uint32_t)s->h, (uint32_t)s->w};
        LD_TRY(col_append(&w->offsets, &end, 1, e));
        LD_TRY(col_append(&w->shape, shp, 1, e));
        if (w->file_n == 0) {
            w->file_c = s->c;
            w->file_h = s->h;
            w->file_w = s->w;
        } else {
            if (w->file_c != s->c) w->file_c = -1;
            if (w->file_h != s->h || w->file_w != s->w) w->file_h = w->file_w = -1;
        }
    }
    if (w->has_label)
        LD_TRY(col_append(&w->label, w->label.rank == 2 ? s->label_vec : &s->label, 1, e));
    if (w->mask.buf) LD_TRY(col_append(&w->mask, s->mask, 1, e));
    if (w->has_boxes) { /* the sample's rows, then where the next sample's start */
        for (uint32_t k = 0; k < s->n_boxes; k++) {
            const ld_box *b = &s->boxes[k];
            const float xy[4] = {b->x1, b->y1, b->x2, b->y2};
            const uint8_t fl = (uint8_t)b->flags;
            LD_TRY(col_append(&w->boxes, xy, 1, e));
            LD_TRY(col_append(&w->box_label, &b->label, 1, e));
            LD_TRY(col_append(&w->box_flags, &fl, 1, e));
        }
        w->file_boxes += s->n_boxes;
        const int64_t end = (int64_t)w->file_boxes;
        LD_TRY(col_append(&w->box_offsets, &end, 1, e));
    }
    if (w->name.vlen) {
        LD_TRY(col_append_str(&w->name, s->rel, e));
    } else {
        /* Fixed-length, NUL-padded: the row is written straight into the chunk buffer. */
        size_t n = s->rel ? strlen(s->rel) : 0;
        LD_CHECK(e, n <= w->max_rel_len, LD_EINVAL, "%s: name longer than announced (%zu > %zu)",
                 s->rel, n, w->max_rel_len);
        uint8_t *row = w->name.buf + w->name.fill * w->name.row_bytes;
        memset(row, 0, w->name.row_bytes);
        memcpy(row, s->rel, n);
        if (++w->name.fill == w->name.chunk_rows) LD_TRY(col_flush(&w->name, e));
    }
    LD_TRY(io_check(w, e));
    w->file_n++;
    w->file_bytes += s->len;
    if (!w->reopen_at) w->reopen_at = (uint64_t)REOPEN_CHUNKS * w->data.chunk_rows;
    if (w->data.written >= w->reopen_at) {
        w->reopen_at += (uint64_t)REOPEN_CHUNKS * w->data.chunk_rows;
        LD_TRY(file_reopen(w, e));
    }
fail:
    if (rc < 0 && rc != LD_EINVAL && rc != LD_ESTATE)
        w->failed = 1; /* the file may be inconsistent: refuse further writes */
    if (rc == LD_EIO) explain_io(w, e);
    ld__h5_quiet_end(&q);
    return rc;
}

/* Make a file's data durable before it gets its final name. */
static int sync_file(const char *path, ld_err *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ld__err(e, LD_EIO, "%s: cannot reopen to sync: %s", path, strerror(errno));
    int r = fsync(fd);
    int saved = errno;
    close(fd);
    if (r != 0 && saved != EINVAL && saved != EROFS) {
        ld__err(e, LD_EIO, "%s: fsync failed: %s", path, strerror(saved));
        if (e) e->sys_errno = saved; /* delayed allocation: ENOSPC may first show here */
        return LD_EIO;
    }
    return LD_OK;
}

/* The list names each part by its absolute path (Caffe's HDF5Data opens the lines relative
 * to its own working folder, so only absolute paths work from anywhere), or with
 * LD_SPLIT_PATHS_RELATIVE by its bare name: the parts are always beside the list, and
 * libdata's readers resolve a relative line against the list's folder. */
static int write_list(h5w *w, const char *tmp, ld_err *e)
{
    char *dir = NULL;
    if (!w->split_relative) {
        const char *slash = strrchr(w->stem, '/');
        char *d = slash == w->stem ? ld__strdup("/")
                  : slash          ? ld__asprintf("%.*s", (int)(slash - w->stem), w->stem)
                                   : ld__strdup(".");
        if (!d) return ld__err(e, LD_ENOMEM, "out of memory");
        dir = realpath(d, NULL);
        int err = errno;
        free(d);
        if (!dir)
            return ld__err(e, err == ENOMEM ? LD_ENOMEM : LD_EIO,
                           "%s: cannot make the absolute path of its folder: %s", w->stem,
                           strerror(err));
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int err = errno;
        free(dir);
        return ld__err(e, LD_EIO, "%s: cannot create list file: %s", tmp, strerror(err));
    }
    int bad = 0;
    for (size_t i = 0; i < w->n_files; i++) {
        const char *slash = strrchr(w->final[i], '/');
        const char *base = slash ? slash + 1 : w->final[i];
        if (dir)
            bad |= fprintf(f, "%s%s%s\n", dir, strcmp(dir, "/") ? "/" : "", base) < 0;
        else
            bad |= fprintf(f, "%s\n", base) < 0;
    }
    free(dir);
    bad |= fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS;
    int saved = errno;
    bad |= fclose(f) != 0;
    if (bad) return ld__err(e, LD_EIO, "%s: cannot write list file: %s", tmp, strerror(saved));
    return LD_OK;
}

static int h5w_finish(ld_writer *base, ld_err *e)
{
    h5w *w = (h5w *)base;
    int rc = LD_OK;
    char *list = NULL, *list_tmp = NULL;
    size_t published = 0; /* parts renamed into place by this call */
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    LD_CHECK(e, !w->finished && !w->failed, LD_ESTATE,
             "HDF5 writer: finish() after finish() or after a failed write");
    if (!w->cols_ready) {
        /* No sample at all: an empty dataset still needs a shape; raw takes the resize size. */
        LD_CHECK(e,
                 w->encoded || (w->rec.resize_w > 0 && w->rec.resize_h > 0 &&
                                w->rec.resize_mode != LD_RESIZE_MAX),
                 LD_EINVAL, "no image was written, so the HDF5 dataset has no shape");
        if (!w->encoded) {
            w->c = w->channels;
            w->h = w->rec.resize_h;
            w->w = w->rec.resize_w;
            w->sample_bytes = (size_t)w->c * (size_t)w->h * (size_t)w->w * sample_size(w);
        }
        w->mh = w->rec.resize_h > 0 ? w->rec.resize_h : 1; /* an empty encoded dataset's */
        w->mw = w->rec.resize_w > 0 ? w->rec.resize_w : 1;
        LD_TRY(cols_setup(w, 0, e));
        LD_TRY(cols_create(w, e));
    }
    LD_TRY(file_close(w, e));
    for (size_t i = 0; i < w->n_files; i++)
        LD_TRY(sync_file(w->tmp[i], e));
    if (w->split_bytes) {
        list = ld__asprintf("%s" LD_H5_LIST_EXT, w->stem);
        LD_CHECK(e, list, LD_ENOMEM, "out of memory");
        ld__sweep_stale_temps(list, w->on_stale, w->on_stale_user);
        list_tmp = ld__temp_name(list, w);
        LD_CHECK(e, list_tmp, LD_ENOMEM, "out of memory");
        LD_TRY(write_list(w, list_tmp, e));
    }
    for (size_t i = 0; i < w->n_files; i++) {
        LD_CHECK(e, rename(w->tmp[i], w->final[i]) == 0, LD_EIO, "%s: cannot rename to %s: %s",
                 w->tmp[i], w->final[i], strerror(errno));
        free(w->tmp[i]);
        w->tmp[i] = NULL; /* published: free() must not remove it */
        published = i + 1;
    }
    /* The list last: a reader that sees the list finds every file it names. */
    if (list_tmp) {
        LD_CHECK(e, rename(list_tmp, list) == 0, LD_EIO, "%s: cannot rename to %s: %s", list_tmp,
                 list, strerror(errno));
    }
    w->base.files_out = w->n_files;
    w->finished = 1;
fail:
    if (rc < 0) {
        w->failed = 1;
        if (rc == LD_EIO) explain_io(w, e);
        if (list_tmp) unlink(list_tmp);
        /* A split is whole or absent: take back the parts already renamed into place. */
        for (size_t i = 0; i < published; i++)
            unlink(w->final[i]);
    }
    free(list);
    free(list_tmp);
    ld__h5_quiet_end(&q);
    return rc;
}

static void h5w_free(ld_writer *base)
{
    h5w *w = (h5w *)base;
    if (!w) return;
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    col *cols[] = {&w->data, &w->label, &w->name,      &w->offsets,   &w->shape,
                   &w->mask, &w->boxes, &w->box_label, &w->box_flags, &w->box_offsets};
    /* Abandoned or failed: nothing is kept, and closing must not fail (h5_vfd.h). */
    if (!w->finished && w->file >= 0) ld__h5_vfd_discard(w->file, w->vfd);
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
        col_free(cols[i]);
    if (w->file >= 0) H5Fclose(w->file);
    ld__h5_vfd_release(w->vfd);
    for (size_t i = 0; i < w->n_files; i++) {
        if (w->tmp[i]) unlink(w->tmp[i]); /* not published: finish() did not run or failed */
        free(w->tmp[i]);
        free(w->final[i]);
    }
    if (w->vstr >= 0) H5Tclose(w->vstr);
    if (w->fstr >= 0) H5Tclose(w->fstr);
    ld__h5_quiet_end(&q);
    free(w->tmp);
    free(w->final);
    ld__desc_free(&w->rec);
    free(w->path);
    free(w->stem);
    free(w->first_rel);
    free(w);
}

static const ld_writer_vt h5w_vt = {h5w_add, h5w_finish, h5w_free};

int ld__h5_writer_create(const ld_writer_opts *o, ld_writer **out, ld_err *e)
{
    int rc = LD_OK;
    h5w *w = NULL;
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    *out = NULL;
    LD_CHECK(e, o && o->path && *o->path, LD_EINVAL, "HDF5 writer: no output path");
    const ld_desc *d = o->desc;
    LD_CHECK(e, d && (d->channels == 1 || d->channels == 3), LD_EINVAL,
             "HDF5 writer: channels must be 1 or 3, not %d", d ? d->channels : 0);
    LD_CHECK(e, o->deflate >= 0 && o->deflate <= 9, LD_EINVAL,
             "HDF5 writer: deflate level must be 0..9, not %d", o->deflate);
    LD_CHECK(e, d->n_classes <= INT32_MAX, LD_EINVAL, "HDF5 writer: too many classes");
    LD_CHECK(e, !d->shard_count || !o->split_bytes, LD_EINVAL,
             "HDF5 writer: a shard part cannot be split");
    w = calloc(1, sizeof *w);
    LD_CHECK(e, w, LD_ENOMEM, "out of memory");
    w->base.vt = &h5w_vt;
    w->file = H5I_INVALID_HID;
    w->vstr = H5I_INVALID_HID;
    w->vfd = H5I_INVALID_HID;
    w->fstr = H5I_INVALID_HID;
    w->data.ds = w->label.ds = w->name.ds = w->offsets.ds = w->shape.ds = w->mask.ds = w->boxes.ds =
        w->box_label.ds = w->box_flags.ds = w->box_offsets.ds = H5I_INVALID_HID;
    LD_CHECK(e, ld__desc_copy(&w->rec, d) == LD_OK, LD_ENOMEM, "out of memory");
    w->has_label = ld__desc_role(d, LD_ROLE_LABEL) || !d->n_fields; /* (a bare test desc) */
    w->has_boxes = ld__desc_boxes(d) != NULL;
    w->encoded = d->encoded != 0;
    w->channels = d->channels;
    w->deflate = o->deflate;
    w->split_bytes = o->split_bytes;
    w->split_relative = o->split_relative;
    w->expected_n = o->expected_n;
    w->on_stale = o->on_stale;
    w->on_stale_user = o->on_stale_user;
    w->path = ld__strdup(o->path);
    LD_CHECK(e, w->path, LD_ENOMEM, "out of memory");
    w->stem = ld__h5_split_stem(o->path);
    LD_CHECK(e, w->stem, LD_ENOMEM, "out of memory");
    if (w->split_bytes && d->source) {
        /* "dataconv ROOT/ train.txt train.h5 --split 1G" would replace the input list
         * train.txt with the list of output files: refuse before anything is written. */
        char *list = ld__asprintf("%s" LD_H5_LIST_EXT, w->stem);
        LD_CHECK(e, list, LD_ENOMEM, "out of memory");
        struct stat a, b;
        int same = list && stat(list, &a) == 0 && stat(d->source, &b) == 0 &&
                   a.st_dev == b.st_dev && a.st_ino == b.st_ino;
        free(list);
        LD_CHECKR(e, !same, LD_EINVAL, LD_WHY_OVERWRITES_INPUT,
                  "%s: split_bytes would overwrite this input list with the list of output files; "
                  "choose another output name (e.g. %s_split.h5)",
                  d->source, w->stem);
    }
    w->vstr = H5Tcopy(H5T_C_S1);
    LD_CHECK(e,
             w->vstr >= 0 && H5Tset_size(w->vstr, H5T_VARIABLE) >= 0 &&
                 H5Tset_cset(w->vstr, H5T_CSET_UTF8) >= 0,
             LD_ENOMEM, "HDF5: cannot make the string type");
    if (o->max_rel_len > 0) {
        w->max_rel_len = o->max_rel_len;
        w->fstr = H5Tcopy(H5T_C_S1);
        LD_CHECK(e,
                 w->fstr >= 0 && H5Tset_size(w->fstr, o->max_rel_len) >= 0 &&
                     H5Tset_strpad(w->fstr, H5T_STR_NULLPAD) >= 0 &&
                     H5Tset_cset(w->fstr, H5T_CSET_UTF8) >= 0,
                 LD_ENOMEM, "HDF5: cannot make the string type");
    }
    LD_TRY(file_open(w, e));
    *out = &w->base;
    w = NULL;
fail:
    ld__h5_quiet_end(&q);
    h5w_free(w ? &w->base : NULL);
    return rc;
}
