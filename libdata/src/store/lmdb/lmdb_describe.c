/*
 * ld__lmdb_describe: a human-readable summary of an LMDB dataset (ours or Caffe's
 * convert_imageset's), beside h5_describe.c; `dataconv info` prints it (describe.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "store/desc.h"
#include "store/lmdb/datum.h"
#include "store/lmdb/lmdb_store.h"
#include "store/store.h"
#include "store/writer.h"

#define LD_LMDB_LABEL_SCAN 100000u /* records scanned for labels by describe */

typedef struct scan_state {
    uint8_t *seen; /* one bit per label value in 0..65535 */
    uint64_t n, distinct, other, bad;
    double lo, hi;
    int c, h, w, shapes_differ, hmin, hmax, wmin, wmax;
    char first_bad[LD_ERRMSG_MAX];
    ld_codec *codec; /* encoded records without a shape: read from the image header */
} scan_state;

static int scan_one(void *user, uint64_t i, const ld_datum *dd, const char *name, const char *bad)
{
    scan_state *st = user;
    ld_datum shaped;
    const ld_datum *d = dd;
    ld_err he = {0};
    (void)i;
    if (d && d->encoded && (d->height <= 0 || d->width <= 0)) {
        ld_img_info ii; /* convert_imageset --encoded: no shape in the Datum */
        if (ld__img_info(st->codec, d->data, d->data_len, name, &ii, &he) == LD_OK) {
            shaped = *d;
            shaped.channels = ii.channels;
            shaped.height = ii.h;
            shaped.width = ii.w;
            d = &shaped;
        } else {
            d = NULL;
            bad = he.msg;
        }
    }
    if (!d) {
        if (!st->bad++) snprintf(st->first_bad, sizeof st->first_bad, "%s", bad);
        return 0;
    }
    double l = d->label;
    if (st->n == 0 || l < st->lo) st->lo = l;
    if (st->n == 0 || l > st->hi) st->hi = l;
    if (d->label >= 0 && d->label < 65536) {
        unsigned u = (unsigned)d->label;
        st->distinct += !(st->seen[u / 8] >> (u % 8) & 1);
        st->seen[u / 8] |= (uint8_t)(1u << (u % 8));
    } else {
        st->other++;
    }
    if (st->n == 0) {
        st->c = d->channels;
        st->hmin = st->hmax = st->h = d->height;
        st->wmin = st->wmax = st->w = d->width;
    } else if ((!d->encoded && d->channels != st->c) || d->height != st->h ||
               d->width != st->w) { /* encoded: the reader converts the channels */
        st->shapes_differ = 1;
    }
    st->hmin = d->height < st->hmin ? d->height : st->hmin;
    st->hmax = d->height > st->hmax ? d->height : st->hmax;
    st->wmin = d->width < st->wmin ? d->width : st->wmin;
    st->wmax = d->width > st->wmax ? d->width : st->wmax;
    st->n++;
    return 0;
}

int ld__lmdb_describe(const char *path, ld_buf *out, ld_err *e)
{
    ld_store *s = NULL;
    int rc = ld__lmdb_store_open(path, NULL, &s, e);
    if (rc == LD_OK) rc = ld__lmdb_describe_store(path, s, out, e);
    if (s) s->vt->close(s);
    return rc;
}

int ld__lmdb_describe_store(const char *path, ld_store *s, ld_buf *out, ld_err *e)
{
    int rc = LD_OK;
    ld_store_ctx *cx = NULL;
    ld_desc d;
    ld_probe probe = {0};
    uint8_t *seen = NULL;
    memset(&d, 0, sizeof d);
    scan_state st = {0};
    LD_TRY(s->vt->ctx_create(s, &cx, e));
    const ld_store_info *in = &s->info;
    LD_TRY(ld__buf_printf(out, "format: LMDB, Caffe Datum records\npath: "));
    LD_TRY(ld__describe_escape(out, path));
    LD_TRY(ld__buf_printf(out, "\nentries: %llu%s\n", (unsigned long long)in->n,
                          in->n ? "" : " (an empty database: 0 samples)"));
    if (in->n && in->encoded) {
        ld_rec r;
        LD_TRY(s->vt->read(s, cx, 0, NULL, 0, &r, e));
        LD_TRY(ld__buf_printf(out, "records: encoded images (first: %zu bytes, %s)\n", r.len,
                              r.len > 3 && r.data[0] == 0xff && r.data[1] == 0xd8  ? "JPEG"
                              : r.len > 3 && r.data[0] == 0x89 && r.data[1] == 'P' ? "PNG"
                                                                                   : "unknown"));
        if (in->h > 0)
            LD_TRY(ld__buf_printf(out, "shape: %d x %d x %d (CHW, %s%s)\n", in->c, in->h, in->w,
                                  in->shape_from ? "from " : "every record's, from ",
                                  in->shape_from ? in->shape_from : LD_LMDB_SIDECAR));
        else if (r.h > 0)
            LD_TRY(ld__buf_printf(out,
                                  "shape: %d x %d x %d (CHW, the first record's Datum fields)\n",
                                  r.c, r.h, r.w));
    } else if (in->n) {
        LD_TRY(ld__buf_printf(out,
                              "records: raw %s pixels, CHW\nshape: %d x %d x %d (from the first "
                              "record)\n",
                              in->dtype == 1 ? "float32" : "uint8", in->c, in->h, in->w));
    }
    static const char *const orders[] = {"unknown", "BGR", "RGB", "GRAY"};
    /* What the reader delivers: for encoded records the order the database was made for
     * (made_order, BGR for Caffe's), see reader.c; Caffe's Data layer always gives BGR. */
    if (in->n && in->encoded && in->c == 1)
        LD_TRY(ld__buf_printf(out, "channel order: GRAY (1 channel after decoding)\n"));
    else if (in->n && in->encoded && in->made_order == LD_SORDER_RGB)
        LD_TRY(ld__buf_printf(out,
                              "channel order: RGB after decoding by libdata's reader (the database "
                              "was made for RGB); Caffe's Data layer decodes to BGR\n"));
    else if (in->n && in->encoded)
        LD_TRY(ld__buf_printf(out,
                              "channel order: BGR after decoding (libdata's reader decodes to BGR, "
                              "as Caffe's Data layer does)\n"));
    else if (in->n)
        LD_TRY(ld__buf_printf(out, "channel order: %s\n", orders[in->order & 3]));
    LD_TRY(ld__buf_printf(out, "index: %s\n", in->how));

    /* labels and shapes: one cursor pass over the first records */
    st.seen = seen = calloc(65536 / 8, 1);
    LD_CHECK(e, seen, LD_ENOMEM, "out of memory");
    st.codec = ld__codec_create();
    LD_CHECK(e, st.codec, LD_ENOMEM, "out of memory");
    uint64_t scan = in->n < LD_LMDB_LABEL_SCAN ? in->n : LD_LMDB_LABEL_SCAN;
    LD_TRY(ld__lmdb_scan(s, scan, scan_one, &st, e));
    if (!in->encoded && st.shapes_differ)
        LD_TRY(
            ld__buf_printf(out,
                           "shapes: vary (%d..%d x %d..%d): raw records of different sizes cannot "
                           "be read; convert again with a resize (resize_w, resize_h)\n",
                           st.hmin, st.hmax, st.wmin, st.wmax));
    else if (st.shapes_differ)
        LD_TRY(
            ld__buf_printf(out,
                           "sizes: vary (%d..%d x %d..%d in the first %llu records): reading needs "
                           "a crop no larger than the smallest (crop_w, crop_h), or convert again "
                           "with a resize (resize_w, resize_h)\n",
                           st.hmin, st.hmax, st.wmin, st.wmax, (unsigned long long)st.n));
    else if (in->encoded && in->shape_from && st.n)
        LD_TRY(ld__buf_printf(out, "sizes: %s %llu records have the first one's shape\n",
                              in->n > scan ? "the first" : "all", (unsigned long long)st.n));
    if (in->n && !in->label_k) /* (label vectors: the Datums' labels are 0) */
        LD_TRY(ld__buf_printf(out,
                              "labels: %llu distinct in 0..65535%s, range %.0f..%.0f, in the first "
                              "%llu records%s\n",
                              (unsigned long long)st.distinct,
                              st.other ? " (+ others outside)" : "", st.lo, st.hi,
                              (unsigned long long)st.n,
                              in->n > scan ? " (scan capped; the rest not read)" : " (all)"));
    if (st.bad) { /* the message holds the key: a file name */
        LD_TRY(ld__buf_printf(out, "malformed: %llu records, first: ", (unsigned long long)st.bad));
        LD_TRY(ld__describe_escape(out, st.first_bad));
        LD_TRY(ld__buf_printf(out, "\n"));
    }

    LD_TRY(ld__format_probe(path, &probe, e)); /* the sidecar's folder (data.mdb named) */
    LD_TRY(ld__lmdb_desc_read(probe.dir, &d, e));
    if (!d.by_libdata)
        LD_TRY(ld__buf_printf(out, "made by: unknown (no %s: convert_imageset or another tool)\n",
                              LD_LMDB_SIDECAR));
    else
        LD_TRY(ld__desc_print(&d, out)); /* classes, settings, provenance, shard: desc.h */
fail:
    ld__probe_free(&probe);
    ld__desc_free(&d);
    free(seen);
    ld__codec_free(st.codec);
    if (cx) s->vt->ctx_free(s, cx);
    return rc;
}
