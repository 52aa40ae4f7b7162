/* ld_describe(): find out which format a path holds and let that format describe it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ld_internal.h"
#include "libdata/types.h"
#include "store/desc.h"
#include "store/store.h"
#include "store/writer.h"

static size_t text_esc(unsigned char ch, int ascii, char *out)
{
    const char *named = ch == '\\'   ? "\\\\"
                        : ch == '\n' ? "\\n"
                        : ch == '\t' ? "\\t"
                        : ch == '\r' ? "\\r"
                                     : NULL;
    if (named) return (size_t)snprintf(out, 8, "%s", named);
    if (!ascii || ch < 0x20 || ch == 0x7f) return (size_t)snprintf(out, 8, "\\x%02x", ch);
    out[0] = (char)ch;
    return 1;
}

int ld__describe_escape(ld_buf *out, const char *s)
{
    return ld__utf8_escape(out, s, text_esc);
}

/* One name per item of a list, escaped; at most 20, then ", ...". */
static int print_names(ld_buf *out, char *const *names, size_t n)
{
    int rc = LD_OK;
    for (size_t i = 0; i < n && i < 20; i++) {
        LD_TRY(ld__buf_printf(out, "%s ", i ? "," : ""));
        LD_TRY(ld__describe_escape(out, names[i]));
    }
    LD_TRY(ld__buf_printf(out, "%s\n", n > 20 ? ", ..." : ""));
fail:
    return rc;
}

static int print_name(ld_buf *out, const char *label, const char *name)
{
    int rc = ld__buf_printf(out, "%s", label);
    if (rc == LD_OK) rc = ld__describe_escape(out, name);
    return rc == LD_OK ? ld__buf_printf(out, "\n") : rc;
}

int ld__desc_print(const ld_desc *d, ld_buf *out)
{
    int rc = LD_OK;
    const int k = ld__desc_label_k(d);
    if (k) { /* label vectors: their count, type, names, where they are */
        LD_TRY(ld__buf_printf(out, "label vectors: %d value%s per sample, %s", k, k == 1 ? "" : "s",
                              d->label_dtype == LD_DTYPE_I32 ? "int32" : "float32"));
        if (d->label_db) {
            LD_TRY(ld__buf_printf(out, ", in the label database "));
            LD_TRY(ld__describe_escape(out, d->label_db));
        }
        LD_TRY(ld__buf_printf(out, "\n"));
        if (d->n_label_names) {
            LD_TRY(ld__buf_printf(out, "label names:"));
            LD_TRY(print_names(out, d->label_names, d->n_label_names));
        }
    }
    const ld_desc_field *mf = ld__desc_mask(d);
    if (mf) { /* segmentation masks: their shape, where they are, the padding index */
        LD_TRY(ld__buf_printf(out, "masks: %s class indices",
                              mf->dtype == LD_DTYPE_U16 ? "uint16" : "uint8"));
        if (mf->dims[1] > 0) /* (an LMDB's: its mask database's records, on the reader line) */
            LD_TRY(ld__buf_printf(out, ", 1 x %lld x %lld per sample", (long long)mf->dims[1],
                                  (long long)mf->dims[2]));
        if (d->mask_db) {
            LD_TRY(ld__buf_printf(out, ", in the mask database "));
            LD_TRY(ld__describe_escape(out, d->mask_db));
        } else {
            LD_TRY(ld__buf_printf(out, ", /%s", mf->name));
        }
        LD_TRY(ld__buf_printf(out, "%s\n",
                              strcmp(mf->name, "label") ? "" : " (the label: no classes)"));
    }
    if (ld__desc_boxes(d)) { /* detection boxes: ragged, and their classes */
        LD_TRY(ld__buf_printf(out, "boxes: float32 x1, y1, x2, y2 per box, any number per "
                                   "sample (/boxes, /box_label, /box_flags, /box_offsets)\n"));
        if (d->n_box_classes) {
            LD_TRY(ld__buf_printf(out, "box classes: %zu:", d->n_box_classes));
            LD_TRY(print_names(out, d->box_classes, d->n_box_classes));
        }
    }
    if (d->classes_recorded && d->n_classes == 0)
        LD_TRY(ld__buf_printf(out, "classes: none recorded\n"));
    else if (d->classes_recorded) {
        LD_TRY(ld__buf_printf(out, "classes: %zu:", d->n_classes));
        LD_TRY(print_names(out, d->class_names, d->n_classes));
    }
    if (!d->by_libdata) return LD_OK;
    char qs[48];
    const char *enc = d->encoding ? d->encoding : "";
    if (d->encoded && !strcmp(enc, "original"))
        snprintf(qs, sizeof qs, "original file bytes");
    else if (d->encoded && !strcmp(enc, "png"))
        snprintf(qs, sizeof qs, "PNG re-encoded");
    else if (d->quality)
        snprintf(qs, sizeof qs, "JPEG quality %d", d->quality);
    else
        snprintf(qs, sizeof qs, d->dtype == LD_DTYPE_U16 ? "raw 16-bit pixels" : "raw pixels");
    if (d->resize_w || d->resize_h)
        LD_TRY(ld__buf_printf(out, "settings: resize %s %dx%d, %s\n",
                              d->resize_mode_name ? d->resize_mode_name : "?", d->resize_w,
                              d->resize_h, qs));
    else
        LD_TRY(ld__buf_printf(out, "settings: no resize, %s\n", qs));
    if (d->source && d->source[0]) LD_TRY(print_name(out, "source: ", d->source));
    if (d->note && d->note[0]) LD_TRY(print_name(out, "note: ", d->note));
    if (d->tool_version) LD_TRY(ld__buf_printf(out, "tool version: libdata %s\n", d->tool_version));
    if (d->shard_count && !d->merged && !d->shard_damaged)
        LD_TRY(ld__buf_printf(out,
                              "shard: part %u of %u (0-based), listed samples %llu..%llu of "
                              "%llu, run_id %s\n",
                              d->shard_index, d->shard_count, (unsigned long long)d->shard_first,
                              (unsigned long long)(d->shard_first + d->shard_listed),
                              (unsigned long long)d->listing_total, d->run_id ? d->run_id : ""));
    else if (d->shard_count && d->merged && !d->shard_damaged)
        LD_TRY(ld__buf_printf(out,
                              "shard: merged from the %u parts of one run, listing %llu samples, "
                              "run_id %s\n",
                              d->shard_count, (unsigned long long)d->listing_total, d->run_id));
    else if (d->shard_damaged)
        LD_TRY(ld__buf_printf(out, "shard: damaged records (shard_count %u, other keys missing)\n",
                              d->shard_count));
    for (size_t i = 0; i < ld__desc_n_records; i++) { /* records with a label of their own */
        const ld_desc_record *r = &ld__desc_records[i];
        if (!r->label || !ld__desc_has(d, r->name)) continue;
        char label[64];
        snprintf(label, sizeof label, "%s: ", r->label);
        if (r->type == LD_REC_STR)
            LD_TRY(print_name(out, label, ld__desc_rec_str(d, r)));
        else
            LD_TRY(ld__buf_printf(out, "%s%lld\n", label, (long long)ld__desc_rec_num(d, r)));
    }
fail:
    return rc;
}

/* What ld_reader gives (the store opened as the reader opens it), or why it refuses. */
static int print_reader(ld_buf *out, const ld_desc *d, int rc_open, const char *why)
{
    static const char *const dt[] = {"uint8", "float32", "int32", "uint16"};
    if (rc_open < 0) return ld__buf_printf(out, "reader: refuses it: %s\n", why);
    const char *order = d->delivered_order == LD_CHANNELS_BGR   ? "BGR"
                        : d->delivered_order == LD_CHANNELS_RGB ? "RGB"
                        : d->channels == 1                      ? "GRAY"
                                                                : "as stored";
    const int k = ld__desc_label_k(d);
    char lk[80] = "";
    const ld_desc_field *mf = ld__desc_mask(d);
    if (k) snprintf(lk, sizeof lk, " x %d", k);
    if (ld__desc_boxes(d)) snprintf(lk + strlen(lk), sizeof lk - strlen(lk), ", boxes");
    if (mf) /* the masks come with every batch, cropped and mirrored with the images */
        snprintf(lk + strlen(lk), sizeof lk - strlen(lk), "%s, masks 1 x %lld x %lld %s",
                 strcmp(mf->name, "label") ? "" : " (all 0)", (long long)mf->dims[1],
                 (long long)mf->dims[2], mf->dtype == LD_DTYPE_U16 ? "uint16" : "uint8");
    return ld__buf_printf(out,
                          "reader: %s, %llu samples, %s %s, %d x %d x %d%s, channel order %s, "
                          "labels %s%s\n",
                          d->format == LD_FORMAT_LMDB ? "LMDB" : "HDF5",
                          (unsigned long long)d->samples, d->encoded ? "encoded" : "raw",
                          dt[(d->dtype - LD_DTYPE_U8) & 3], d->channels, d->height, d->width,
                          d->shape_of_first ? " (the first sample's)" : "", order,
                          dt[d->label_dtype == LD_DTYPE_F32 ? 1 : 2], lk);
}

int ld_describe(const char *path, char **text, char **errmsg)
{
    int rc = LD_OK;
    ld_buf out = {0};
    ld_err e, se;
    ld_desc d;
    ld_store *s = NULL;

    memset(&d, 0, sizeof d);
    ld__err_clear(&e);
    ld__err_clear(&se);
    if (text) *text = NULL;
    if (errmsg) *errmsg = NULL;
    if (!path || !text) {
        if (errmsg) *errmsg = strdup("ld_describe: path and text are required");
        return LD_EINVAL;
    }
    /* the probe and the records (desc.h): a path the probe refuses, everything refuses */
    LD_TRY(ld__desc_read(path, &d, &e));
    /* the store as the reader opens it: what it gives, or why it refuses (a damaged file is
     * still described: its problems are the point) */
    const int rc_open = ld__store_open(path, NULL, &s, &se);
    if (rc_open == LD_OK) ld__desc_observe(&d, &s->info);
#ifdef LD_HAVE_LMDB
    if (d.format == LD_FORMAT_LMDB) { /* opened once: an LMDB open walks every record */
        if (rc_open < 0) {
            rc = rc_open;
            e = se;
            goto fail;
        }
        LD_TRY(ld__lmdb_describe_store(path, s, &out, &e));
    }
#endif
    if (s) s->vt->close(s);
    s = NULL;
#ifdef LD_HAVE_HDF5
    if (d.format == LD_FORMAT_HDF5) LD_TRY(ld__h5_describe(path, &out, &e));
#endif
    LD_TRY(print_reader(&out, &d, rc_open, se.msg[0] ? se.msg : ld_strerror(rc_open)));
    LD_CHECK(&e, ld__buf_append(&out, "", 1) == LD_OK, LD_ENOMEM, "out of memory");
    *text = (char *)out.p;
    ld__desc_free(&d);
    return LD_OK;
fail:
    if (s) s->vt->close(s);
    if (rc == LD_ENOMEM && !e.msg[0]) ld__err(&e, rc, "out of memory");
    ld__desc_free(&d);
    ld__buf_free(&out);
    if (errmsg) *errmsg = strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    return rc;
}
