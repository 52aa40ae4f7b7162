/*
 * ld_dataset_stat(): what a dataset holds, as a struct (dataset.h). The description of desc.h:
 * what libdata recorded (ld__desc_read: the HDF5 root attributes, for a --split list its first
 * file's; the LMDB libdata.json sidecar) under what the store sees when it opens the dataset
 * as the reader does (ld__desc_observe). The result is one allocation, released with ld_free().
 */
#include <stdlib.h>
#include <string.h>

#include "libdata/dataset.h"
#include "store/desc.h"
#include "store/store.h"

/* One block: the struct, the class-name pointers, then the strings. */
static ld_dataset_info *pack(const char *path, const ld_desc *m)
{
    const char *encoding = m->encoded && m->encoding ? m->encoding : "";
    size_t bytes = sizeof(ld_dataset_info) + m->n_classes * sizeof(char *) + strlen(path) + 1 +
                   strlen(encoding) + 1;
    for (size_t i = 0; i < m->n_classes; i++)
        bytes += strlen(m->class_names[i]) + 1;
    ld_dataset_info *d = calloc(1, bytes);
    if (!d) return NULL;
    const char **names = (const char **)(d + 1);
    char *text = (char *)(names + m->n_classes);
#define COPY(dst, s) (dst = strcpy(text, s), text += strlen(s) + 1)
    COPY(d->path, path);
    if (encoding[0]) COPY(d->encoding, encoding);
    for (size_t i = 0; i < m->n_classes; i++)
        COPY(names[i], m->class_names[i]);
#undef COPY
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
    return d;
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
    *info = pack(path, &m);
    LD_CHECK(&e, *info, LD_ENOMEM, "out of memory");
fail:
    if (s) s->vt->close(s);
    ld__desc_free(&m);
    if (rc < 0 && errmsg) *errmsg = strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    return rc;
}
