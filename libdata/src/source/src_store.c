/*
 * Dataset mode: a dataset as input (an HDF5 file of ours or another tool's /data + /label, a
 * merged file, a --split list, an LMDB of ours or Caffe's convert_imageset, raw or encoded),
 * read through the store layer (store/store.h), which finds the format with its one probe.
 *
 * Items are the records in stored order. Their names are the names the dataset records
 * (HDF5 /filename, LMDB keys without "%08d_"), else the record number "%08llu"; class names,
 * label names and box classes are what the dataset's description records (store/desc.h).
 *
 * Labels are filled as records are read, not at listing: an LMDB record's label is in its
 * Datum, after the pixels, so listing them would read the whole database twice. Convert reads
 * each record (ld__source_read) before it writes it, which is when it asks for the label. So
 * before a record is read its label is 0 (a shard's run_id covers names, not labels).
 *
 * Reading item i: the store's record. Encoded records are their bytes as stored (a re-encode
 * decodes them once; a run that changes nothing keeps them, convert.c's keep_original). Raw
 * records (uint8 or uint16 C x H x W, C = 1 or 3) are wrapped in a binary PNM (P5 gray, P6 RGB,
 * maxval 255 or 65535; the store's BGR planes, or planes of unrecorded order, taken as Caffe's
 * BGR) which the codecs' PNM decoder gives back pixel for pixel (uint16: with depth 16).
 *
 * Memory: the store's own index (LMDB 12 bytes a record; HDF5 labels and encoded offsets,
 * 4-16 bytes a sample) plus, per item, what every source keeps (8-byte pointer, 4-byte label,
 * the name and its NUL) and an 8-byte record number; label vectors add K x 4 bytes, boxes
 * 4 + 24 bytes a box. One record's bytes are held at a time (the caller's buffer, and one
 * scratch of a raw record). The store has one read context: one thread reads at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "source/src_internal.h"
#include "store/desc.h"
#include "store/store.h"

struct ld_dsrc {
    ld_store *st;
    ld_store_ctx *cx;
    int raw;          /* raw records: wrapped in PNM */
    int swap;         /* raw 3-channel planes in BGR order (RGB for PNM: reversed) */
    uint32_t k;       /* label values per item in the source (vectors; 0: one int32 label) */
    int vec_float;    /* the values are float32 (else int32) */
    uint32_t store_k; /* the store's label_k (0: scalar labels, maybe float: k = 1) */
    double *vec;      /* store_k (or 1) values, scratch */
    ld_buf px;        /* a raw record, when the store does not read it into our buffer */
    ld_buf box;       /* scratch for one record's boxes at listing */
    /* how the input's samples were made, as it records it (ld__source_dataset_made) */
    int quality, resize_w, resize_h, resize_mode;
    const char *encoding, *resize_mode_name; /* in the source's arena; NULL: not recorded */
};

void ld__dsrc_free(ld_dsrc *d)
{
    if (!d) return;
    if (d->st) {
        if (d->cx) d->st->vt->ctx_free(d->st, d->cx);
        d->st->vt->close(d->st);
    }
    free(d->vec);
    ld__buf_free(&d->px);
    ld__buf_free(&d->box);
    free(d);
}

int ld__source_is_dataset(const char *input)
{
    ld_probe p;
    ld_err e;
    struct stat st;
    if (!input || !*input || ld__source_archive_suffix(input)) {
        /* a folder named like an archive is still a folder (ld_convert_input_is_archive) */
        if (!input || !*input || stat(input, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    }
    ld__err_clear(&e);
    const int rc = ld__format_probe(input, &p, &e); /* the one probe: desc.h */
    ld__probe_free(&p);
    /* a format not built in is still a dataset: opening it says so */
    return rc == LD_OK || rc == LD_ENOTSUP;
}

/* Where item i's record number is: after its label values or boxes. */
static size_t extra_bytes(const ld_source *s, size_t i)
{
    if (s->boxes) return 4 + (size_t)ld__source_box_count(s, i) * sizeof(ld_box);
    return (size_t)s->label_k * 4;
}

static uint64_t record_of(const ld_source *s, size_t i)
{
    uint64_t r;
    memcpy(&r, (const char *)ld__source_extra(s, i) + extra_bytes(s, i), sizeof r);
    return r;
}

/* ---- listing ---------------------------------------------------------------------------- */

typedef struct lister {
    ld_source *s;
    ld_dsrc *d;
    ld_buf rec;   /* one item's extra bytes: values or boxes, then the record number */
    char gen[24]; /* a generated name */
    ld_source_tick_fn tick;
    void *user;
    ld_err *e;
    const char *path;
} lister;

/* Append record i with its name (and, for a dataset with boxes, its boxes). */
static int add_record(lister *l, uint64_t i, const char *name, size_t len)
{
    ld_source *s = l->s;
    ld_dsrc *d = l->d;
    ld_err *e = l->e;
    int rc = LD_OK;
    if (!len) { /* unnamed: its number */
        len = (size_t)snprintf(l->gen, sizeof l->gen, "%08llu", (unsigned long long)i);
        name = l->gen;
    }
    l->rec.len = 0;
    if (s->boxes) {
        uint32_t m = 0;
        LD_TRY(d->st->vt->boxes(d->st, d->cx, i, &d->box, &m, e));
        LD_CHECK(e,
                 ld__buf_append(&l->rec, &m, 4) == LD_OK &&
                     ld__buf_append(&l->rec, d->box.p, (size_t)m * sizeof(ld_box)) == LD_OK,
                 LD_ENOMEM, "out of memory");
    } else if (d->k) { /* zeros until the record is read */
        LD_CHECK(e, ld__buf_reserve(&l->rec, (size_t)d->k * 4) == LD_OK, LD_ENOMEM,
                 "out of memory");
        memset(l->rec.p, 0, (size_t)d->k * 4);
        l->rec.len = (size_t)d->k * 4;
    }
    LD_CHECK(e, ld__buf_append(&l->rec, &i, sizeof i) == LD_OK, LD_ENOMEM, "out of memory");
    LD_CHECK(e, ld__source_add_item_values(s, name, len, 0, l->rec.p, l->rec.len) == LD_OK,
             LD_ENOMEM, "out of memory");
    LD_CHECK(e, (s->n & 4095) || !l->tick || !l->tick(l->user, s->n), LD_ECANCELED,
             "canceled while listing %s", l->path);
fail:
    return rc;
}

/* vt->names' callback: records the store does not name (a list's unnamed file) get numbers. */
static int on_name(void *user, uint64_t i, const char *name, size_t len)
{
    lister *l = user;
    int rc = LD_OK;
    while (l->s->n < i && rc == LD_OK)
        rc = add_record(l, l->s->n, NULL, 0);
    if (rc == LD_OK) rc = add_record(l, i, name, len);
    return rc;
}

/* Class names, label names and box classes as the dataset records them. */
static int take_description(ld_source *s, const char *path, ld_err *e)
{
    int rc = LD_OK;
    ld_desc d;
    LD_TRY(ld__desc_read(path, &d, e));
    ld_dsrc *ds = s->dsrc;
    ds->quality = d.quality;
    ds->resize_w = d.resize_w;
    ds->resize_h = d.resize_h;
    ds->resize_mode = d.resize_mode;
    if (d.encoding)
        LD_CHECK(e, (ds->encoding = ld__source_strndup(s, d.encoding, strlen(d.encoding))) != NULL,
                 LD_ENOMEM, "out of memory");
    if (d.resize_mode_name)
        LD_CHECK(e,
                 (ds->resize_mode_name = ld__source_strndup(s, d.resize_mode_name,
                                                            strlen(d.resize_mode_name))) != NULL,
                 LD_ENOMEM, "out of memory");
    for (size_t i = 0; i < d.n_classes; i++) {
        const char *c = d.class_names[i] ? d.class_names[i] : "";
        LD_CHECK(e, ld__source_add_class(s, c, strlen(c)) == LD_OK, LD_ENOMEM, "out of memory");
    }
    if (d.n_label_names) {
        s->label_names = calloc(d.n_label_names, sizeof *s->label_names);
        LD_CHECK(e, s->label_names, LD_ENOMEM, "out of memory");
        for (size_t i = 0; i < d.n_label_names; i++) {
            const char *c = d.label_names[i] ? d.label_names[i] : "";
            LD_CHECK(e, (s->label_names[i] = ld__source_strndup(s, c, strlen(c))) != NULL,
                     LD_ENOMEM, "out of memory");
            s->n_label_names++;
        }
    }
    for (size_t i = 0; s->boxes && i < d.n_box_classes; i++) {
        const char *c = d.box_classes[i] ? d.box_classes[i] : "";
        LD_CHECK(e,
                 ld__source_add_box_class(
                     s, c, strlen(c), d.box_class_ids ? d.box_class_ids[i] : (int64_t)i) == LD_OK,
                 LD_ENOMEM, "out of memory");
    }
fail:
    ld__desc_free(&d);
    return rc;
}

/* What a dataset input can carry, from what the store holds. */
static int check_store(const ld_store_info *in, const char *path, ld_err *e)
{
    int rc = LD_OK;
    LD_CHECK(e, !in->mask_h, LD_EFORMAT,
             "%s holds segmentation masks (%dx%d), which a dataset input does not carry over "
             "yet: convert from its images and their mask folder instead (the masks "
             "parameter)",
             path, in->mask_h, in->mask_w);
    LD_CHECK(e, in->encoded || in->dtype == LD_SDT_U8 || in->dtype == LD_SDT_U16, LD_EFORMAT,
             "%s stores float32 pixels: a dataset input must hold uint8 or uint16 pixels or "
             "encoded images (libdata does not guess how floats map to 0..255)",
             path);
    LD_CHECK(e, in->encoded || in->c == 1 || in->c == 3, LD_EFORMAT,
             "%s: samples of %d channels: a dataset input must hold 1 (gray) or 3 channels", path,
             in->c);
    LD_CHECK(e, in->label_k <= LD_MAX_LABEL_K, LD_EFORMAT, "%s: %u label values per sample", path,
             (unsigned)in->label_k);
fail:
    return rc;
}

int ld__source_open_dataset(const char *path, ld_source_tick_fn tick, void *user, ld_source **out,
                            ld_err *e)
{
    int rc = LD_OK;
    lister l = {.tick = tick, .user = user, .e = e, .path = path};
    *out = NULL;
    LD_CHECK(e, ld__source_new(&l.s) == LD_OK && ld__source_set_root(l.s, path) == LD_OK, LD_ENOMEM,
             "out of memory");
    l.s->dsrc = l.d = calloc(1, sizeof *l.d);
    LD_CHECK(e, l.d, LD_ENOMEM, "out of memory");
    ld_store_opts so = {0};
    rc = ld__store_open(path, &so, &l.d->st, e);
    struct stat sb; /* a file that is not a dataset may be an image list given as input */
    if ((rc == LD_EFORMAT || rc == LD_EIO) && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
        !(strlen(path) >= 4 && !strcmp(path + strlen(path) - 4, ".mdb"))) {
        char why[LD_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", e->msg);
        rc = ld__err(e, rc,
                     "%s (as input, a file must be a dataset -- HDF5, LMDB data.mdb, a split .txt "
                     "list of HDF5 files -- or a tar archive; a 'path label' list of images is "
                     "the list_file parameter, with the input folder as its root)",
                     why);
    }
    LD_TRY(rc);
    const ld_store_info *in = &l.d->st->info;
    LD_TRY(check_store(in, path, e));
    LD_TRY(l.d->st->vt->ctx_create(l.d->st, &l.d->cx, e));
    l.d->raw = !in->encoded;
    l.d->swap = in->order != LD_SORDER_RGB; /* BGR, or not recorded: Caffe's BGR */
    l.d->store_k = in->label_k;
    /* float scalar labels (other tools' /label (N,) float) stay exact as one float32 value */
    l.d->k = in->label_k ? in->label_k : in->label_float ? 1 : 0;
    l.d->vec_float = in->label_float;
    l.d->vec = calloc(in->label_k ? in->label_k : 1, sizeof *l.d->vec);
    LD_CHECK(e, l.d->vec, LD_ENOMEM, "out of memory");
    l.s->label_k = l.d->k;
    l.s->label_type = l.d->vec_float ? LD_DTYPE_F32 : LD_DTYPE_I32;
    l.s->boxes = in->boxes && l.d->st->vt->boxes;
    /* an item keeps either label values or boxes after its name (src_internal.h) */
    LD_CHECK(e, !l.s->boxes || !l.d->k, LD_EFORMAT,
             "%s has detection boxes and %s labels: a dataset input carries boxes with one "
             "integer label per sample (or none)",
             path, in->label_k ? "vector" : "floating-point");
    LD_TRY(take_description(l.s, path, e));
    rc = l.d->st->vt->names ? l.d->st->vt->names(l.d->st, on_name, &l, e) : LD_STORE_NO_NAMES;
    LD_TRY(rc);
    rc = LD_OK;
    while (l.s->n < in->n) /* unnamed records (all of them when the dataset names none) */
        LD_TRY(add_record(&l, l.s->n, NULL, 0));
    LD_CHECK(e, l.s->n == in->n, LD_EFORMAT, "%s: %zu names for %llu samples", path, l.s->n,
             (unsigned long long)in->n);
    *out = l.s;
    l.s = NULL;
fail:
    ld__buf_free(&l.rec);
    ld__source_free(l.s);
    return rc;
}

/* ---- reading ---------------------------------------------------------------------------- */

int ld__source_from_dataset(const ld_source *s)
{
    return s && s->dsrc;
}

int ld__source_dataset_channels(const ld_source *s)
{
    return s && s->dsrc && s->dsrc->raw ? s->dsrc->st->info.c : 0;
}

int ld__source_dataset_encoded(const ld_source *s)
{
    return s && s->dsrc && !s->dsrc->raw;
}

/* Raw CHW planes (c = 1 or 3) as a binary PNM: gray P5, else P6 with RGB interleaved; uint16
 * samples (host order) as maxval 65535, big-endian (the PNM decoder keeps them with depth 16). */
static int wrap_pnm(const ld_dsrc *d, const ld_rec *rec, int c, int h, int w, int wide, ld_buf *out)
{
    const size_t plane = (size_t)h * (size_t)w, sb = wide ? 2 : 1;
    out->len = 0;
    if (ld__buf_printf(out, "P%c\n%d %d\n%d\n", c == 1 ? '5' : '6', w, h, wide ? 65535 : 255) < 0)
        return LD_ENOMEM;
    const size_t head = out->len;
    if (ld__buf_reserve(out, head + plane * (size_t)c * sb) < 0) return LD_ENOMEM;
    uint8_t *dst = out->p + head;
    if (wide) {
        const uint16_t *src = (const uint16_t *)(const void *)rec->data;
        for (size_t k = 0; k < plane; k++)
            for (int ch = 0; ch < c; ch++) { /* RGB interleaved from (maybe BGR) planes */
                const int from = c == 1 ? 0 : d->swap ? 2 - ch : ch;
                const uint16_t v = src[(size_t)from * plane + k];
                dst[2 * (k * c + ch)] = (uint8_t)(v >> 8);
                dst[2 * (k * c + ch) + 1] = (uint8_t)v;
            }
    } else if (c == 1) {
        memcpy(dst, rec->data, plane);
    } else {
        const uint8_t *r = rec->data + (d->swap ? 2 : 0) * plane, *g = rec->data + plane,
                      *b = rec->data + (d->swap ? 0 : 2) * plane;
        for (size_t k = 0; k < plane; k++) {
            dst[3 * k] = r[k];
            dst[3 * k + 1] = g[k];
            dst[3 * k + 2] = b[k];
        }
    }
    out->len = head + plane * (size_t)c * sb;
    return LD_OK;
}

/* The labels of record r into item i: its label, or its values (as the source's type). */
static int take_labels(ld_source *s, size_t i, uint64_t r, const ld_rec *rec, ld_err *e)
{
    ld_dsrc *d = s->dsrc;
    int rc = LD_OK;
    if (!d->k) {
        ld__source_set_label(s, i, (int32_t)rec->label);
        return LD_OK;
    }
    if (d->store_k)
        LD_TRY(d->st->vt->label_vec(d->st, d->cx, r, d->vec, e));
    else
        d->vec[0] = rec->label;
    char *vals = (char *)ld__source_extra(s, i); /* the arena is the source's own */
    for (uint32_t m = 0; m < d->k; m++) {
        const float f = (float)d->vec[m];
        const int32_t v = (int32_t)d->vec[m];
        memcpy(vals + 4 * m, d->vec_float ? (const void *)&f : (const void *)&v, 4);
    }
fail:
    return rc;
}

int ld__dsrc_read(ld_source *s, size_t i, const char *path, ld_buf *out, size_t max_bytes,
                  ld_err *e)
{
    ld_dsrc *d = s->dsrc;
    int rc = LD_OK;
    ld_rec rec;
    LD_CHECK(e, i < s->n, LD_EINVAL, "%s: no such item", path);
    const uint64_t r = record_of(s, i);
    const ld_store_info *in = &d->st->info;
    if (d->raw) {
        LD_CHECK(e, ld__buf_reserve(&d->px, in->sample_bytes) == LD_OK, LD_ENOMEM,
                 "%s: out of memory", path);
        LD_TRY(d->st->vt->read(d->st, d->cx, r, d->px.p, in->sample_bytes, &rec, e));
        LD_CHECK(e, rec.len >= in->sample_bytes, LD_EFORMAT, "%s: a short record (%zu bytes)", path,
                 rec.len);
        LD_CHECK(e, in->sample_bytes + 32 <= max_bytes, LD_ELIMIT,
                 "%s: %dx%dx%d is over the input limit (raise max_pixels)", path, in->c, in->h,
                 in->w);
        LD_CHECK(e, wrap_pnm(d, &rec, in->c, in->h, in->w, in->dtype == LD_SDT_U16, out) == LD_OK,
                 LD_ENOMEM, "%s: out of memory", path);
    } else {
        LD_TRY(d->st->vt->read(d->st, d->cx, r, NULL, 0, &rec, e));
        LD_CHECK(e, rec.len <= max_bytes, LD_ELIMIT,
                 "%s: the record has %zu bytes, over the input limit (raise max_pixels)", path,
                 rec.len);
        out->len = 0;
        LD_CHECK(e, ld__buf_append(out, rec.data, rec.len) == LD_OK, LD_ENOMEM, "%s: out of memory",
                 path);
    }
    LD_TRY(take_labels(s, i, r, &rec, e));
fail:
    return rc;
}

int ld__source_boxes_displayed(const ld_source *s)
{
    return s && s->dsrc && s->boxes;
}

int ld__source_dataset_made(const ld_source *s, ld_desc *d, int same_size, int same_bytes)
{
    const ld_dsrc *ds = s ? s->dsrc : NULL;
    int ok = 1;
    if (!ds) return LD_OK;
    if (same_size && ds->resize_mode && ds->resize_mode_name) {
        d->resize_w = ds->resize_w;
        d->resize_h = ds->resize_h;
        d->resize_mode = ds->resize_mode;
        ok &= ld__desc_set_text(&d->resize_mode_name, ds->resize_mode_name) == LD_OK;
    }
    if (same_bytes && !ds->raw) {
        d->quality = ds->quality;
        if (ds->encoding) ok &= ld__desc_set_text(&d->encoding, ds->encoding) == LD_OK;
    }
    return ok ? LD_OK : LD_ENOMEM;
}
