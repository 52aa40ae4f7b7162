/*
 * ld_dataset_stat(): what a dataset holds, as a struct (dataset.h). The description of desc.h:
 * what libdata recorded (ld__desc_read: the HDF5 root attributes, for a --split list its first
 * file's; the LMDB libdata.json sidecar) under what the store sees when it opens the dataset
 * as the reader does (ld__desc_observe). The result is one allocation, released with ld_free().
 */
#include <stdlib.h>
#include <string.h>

#include "libdata/dataset.h"
#include "common/ld_pack.h"
#include "store/desc.h"
#include "store/store.h"

typedef struct stat_src {
    const char *path;
    const ld_desc *m;
} stat_src;

/* The result as one block (common/ld_pack.h): the struct, the class-name pointers, the
 * strings. Called twice by ld__pack_run: d and names are NULL while counting. */
static int fill(ld_pack *p, void *arg)
{
    const stat_src *a = arg;
    const ld_desc *m = a->m;
    ld_dataset_info *d = LD_PACK_NEW(p, ld_dataset_info);
    const char **names = LD_PACK_ARRAY(p, m->n_classes, const char *);
    const char **lnames = LD_PACK_ARRAY(p, m->n_label_names, const char *);
    const char **bnames = LD_PACK_ARRAY(p, m->n_box_classes, const char *);
    int64_t *bids = LD_PACK_ARRAY(p, m->n_box_classes, int64_t);
    const char *path = ld__pack_str(p, a->path);
    const char *encoding =
        m->encoded && m->encoding && m->encoding[0] ? ld__pack_str(p, m->encoding) : NULL;
    for (size_t i = 0; i < m->n_classes; i++) {
        const char *name = ld__pack_str(p, m->class_names[i]);
        if (names) names[i] = name;
    }
    for (size_t i = 0; i < m->n_label_names; i++) {
        const char *name = ld__pack_str(p, m->label_names[i]);
        if (lnames) lnames[i] = name;
    }
    for (size_t i = 0; i < m->n_box_classes; i++) {
        const char *name = ld__pack_str(p, m->box_classes[i]);
        if (bnames) bnames[i] = name;
        if (bids) bids[i] = m->box_class_ids[i];
    }
    if (!d) return LD_OK; /* counting */
    d->boxes = ld__desc_boxes(m) != NULL;
    d->num_box_classes = m->n_box_classes;
    d->box_classes = m->n_box_classes ? bnames : NULL;
    d->box_class_ids = m->n_box_classes ? bids : NULL;
    d->label_k = ld__desc_label_k(m);
    const ld_desc_field *mf = ld__desc_mask(m); /* (its size: the store's, ld__desc_observe) */
    d->mask_h = mf ? (int)mf->dims[1] : 0;
    d->mask_w = mf ? (int)mf->dims[2] : 0;
    d->mask_is_label = mf && !strcmp(mf->name, "label");
    d->mask_dtype = mf ? mf->dtype : 0;
    d->num_label_names = m->n_label_names;
    d->label_names = m->n_label_names ? lnames : NULL;
    d->path = path;
    d->encoding = encoding;
    d->class_names = m->n_classes ? names : NULL;
    d->num_classes = m->n_classes;
    d->format = m->format;
    d->by_libdata = m->by_libdata;
    d->files = m->files;
    d->samples = m->samples;
    d->encoded = m->encoded;
    d->quality = m->quality;
    d->dtype = m->dtype;
    d->label_dtype = m->label_dtype;
    d->channels = m->channels;
    d->height = m->height;
    d->width = m->width;
    d->shape_of_first = m->shape_of_first;
    d->channel_order = m->delivered_order;
    d->resize_mode = m->resize_mode;
    d->resize_w = m->resize_w;
    d->resize_h = m->resize_h;
    return LD_OK;
}

int ld_dataset_stat(const char *path, ld_dataset_info **info, char **errmsg)
{
    int rc = LD_OK;
    ld_err e;
    ld_store *s = NULL;
    ld_desc m;

    memset(&m, 0, sizeof m);
    ld__err_clear(&e);
    if (info) *info = NULL;
    if (errmsg) *errmsg = NULL;
    if (!path || !info) {
        if (errmsg) *errmsg = strdup("ld_dataset_stat: path and info are required");
        return LD_EINVAL;
    }
    /* the store first: a path the reader refuses is refused with the reader's reason */
    LD_TRY(ld__store_open(path, NULL, &s, &e));
    LD_TRY(ld__desc_read(path, &m, &e));
    ld__desc_observe(&m, &s->info);
    stat_src src = {path, &m};
    void *blk = NULL;
    rc = ld__pack_run(fill, &src, &blk, NULL);
    LD_CHECK(&e, rc == LD_OK, rc, "%s: %s", path,
             rc == LD_ENOMEM ? "out of memory" : ld_strerror(rc));
    *info = blk;
fail:
    if (s) s->vt->close(s);
    ld__desc_free(&m);
    if (rc < 0 && errmsg) *errmsg = strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    return rc;
}
