/*
 * The format probe and the format-independent part of a dataset's description (desc.h).
 */
#include "store/desc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "libdata/types.h"
#include "store/store.h"

/* ---- the probe ----------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static int is_image_name(const char *name)
{
    static const char *const ext[] = {".jpg", ".jpeg", ".png"};
    size_t n = strlen(name);
    if (name[0] == '.') return 0;
    for (size_t k = 0; k < sizeof ext / sizeof *ext; k++) {
        size_t m = strlen(ext[k]);
        if (n > m && strcasecmp(name + n - m, ext[k]) == 0) return 1;
    }
    return 0;
}

/* Whether a directory holds image files, at its top or one folder down (a class tree): a
 * folder given by mistake instead of the dataset made from it. Stops at the first. */
static int holds_images(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;
    if (!d) return 0;
    while (!found && (de = readdir(d)) != NULL) {
        if (is_image_name(de->d_name)) {
            found = 1;
        } else if (depth > 0 && de->d_name[0] != '.') {
            char *sub = ld__asprintf("%s/%s", dir, de->d_name);
            struct stat st;
            if (sub && stat(sub, &st) == 0 && S_ISDIR(st.st_mode))
                found = holds_images(sub, depth - 1);
            free(sub);
        }
    }
    closedir(d);
    return found;
}

void ld__probe_free(ld_probe *p)
{
    free(p->dir);
    p->dir = NULL;
}

int ld__format_probe(const char *path, ld_probe *p, ld_err *e)
{
    struct stat st;
    memset(p, 0, sizeof *p);
    if (stat(path, &st) != 0) return ld__err(e, LD_EIO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        char *mdb = ld__asprintf("%s/data.mdb", path);
        if (!mdb) return ld__err(e, LD_ENOMEM, "out of memory");
        const int has_mdb = stat(mdb, &st) == 0;
        free(mdb);
        if (!has_mdb && holds_images(path, 1))
            return ld__err(e, LD_EFORMAT,
                           "%s: a folder of images, not a dataset: convert it first (one "
                           "sub-folder per class, or a list file), then use the output",
                           path);
        if (!has_mdb)
            return ld__err(e, LD_EFORMAT,
                           "%s: a folder that is not an LMDB database (no data.mdb in it) and "
                           "holds no images",
                           path);
        p->kind = LD_PROBE_LMDB;
        p->dir = ld__strdup(path);
    } else if (!S_ISREG(st.st_mode)) {
        return ld__err(e, LD_EIO, "%s: not a regular file or directory", path);
    } else if (ends_with(path, ".mdb")) { /* data.mdb named itself: its folder holds the rest */
        const char *slash = strrchr(path, '/');
        p->kind = LD_PROBE_LMDB;
        p->mdb_file = 1;
        p->dir = slash ? ld__asprintf("%.*s", (int)(slash - path), path) : ld__strdup(".");
        if (p->dir && !p->dir[0]) { /* "/data.mdb" */
            free(p->dir);
            p->dir = ld__strdup("/");
        }
    } else if (ends_with(path, ".txt") || ends_with(path, ".list")) {
        p->kind = LD_PROBE_HDF5_LIST;
    } else {
        p->kind = LD_PROBE_HDF5;
    }
    if (p->kind == LD_PROBE_LMDB && !p->dir) return ld__err(e, LD_ENOMEM, "out of memory");
#ifndef LD_HAVE_LMDB
    if (p->kind == LD_PROBE_LMDB) {
        ld__probe_free(p);
        return ld__err(e, LD_ENOTSUP, "%s: LMDB support was not built into this libdata", path);
    }
#endif
#ifndef LD_HAVE_HDF5
    if (p->kind != LD_PROBE_LMDB)
        return ld__err(e, LD_ENOTSUP, "%s: HDF5 support was not built into this libdata", path);
#endif
    return LD_OK;
}

/* ---- the description ----------------------------------------------------------------------- */

void ld__desc_free(ld_desc *d)
{
    for (size_t i = 0; i < d->n_fields; i++)
        free(d->field[i].name);
    for (size_t i = 0; d->class_names && i < d->n_classes; i++)
        free(d->class_names[i]);
    free(d->class_names);
    free(d->storage);
    free(d->encoding);
    free(d->channel_order);
    free(d->layout);
    free(d->record);
    free(d->resize_mode_name);
    free(d->tool_version);
    free(d->source);
    free(d->note);
    free(d->run_id);
    memset(d, 0, sizeof *d);
}

int ld__desc_resize_mode(const char *name)
{
    static const char *const names[] = {"squash", "crop", "pad", "max"};
    for (int i = 0; name && i < 4; i++)
        if (!strcmp(name, names[i])) return LD_RESIZE_SQUASH + i;
    return 0;
}

int ld__desc_add_field(ld_desc *d, const char *name, int role, int dtype, int rank,
                       const int64_t *dims)
{
    if (d->n_fields >= LD_DESC_MAX_FIELDS || rank < 0 || rank > LD_DESC_MAX_RANK) return LD_EINVAL;
    ld_desc_field *f = &d->field[d->n_fields];
    memset(f, 0, sizeof *f);
    if (!(f->name = ld__strdup(name))) return LD_ENOMEM;
    f->role = role;
    f->dtype = dtype;
    f->rank = rank;
    for (int i = 0; i < rank; i++)
        f->dims[i] = dims ? dims[i] : 0;
    d->n_fields++;
    return LD_OK;
}

/* A --split list's first file and its number of files (as store_open.c reads the list). */
static int list_first(const char *path, char **first, uint32_t *files, ld_err *e)
{
    int rc = LD_OK;
    char line[4096];
    FILE *f = fopen(path, "r");
    *first = NULL;
    *files = 0;
    LD_CHECK(e, f, LD_EIO, "%s: cannot open: %s", path, strerror(errno));
    unsigned long lineno = 0;
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        lineno++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = 0;
        if (!len || line[0] == '#') continue;
        if (!*first) {
            struct stat st;
            *first = ld__list_entry_path(path, line);
            LD_CHECK(e, *first, LD_ENOMEM, "out of memory");
            LD_CHECK(e, stat(*first, &st) == 0, LD_EIO,
                     "%s: line %lu: part %s: %s (relative lines are looked up in the list's "
                     "folder, then in the current folder)",
                     path, lineno, *first, strerror(errno));
        }
        (*files)++;
    }
    LD_CHECK(e, *first, LD_EFORMAT, "%s: the list names no file", path);
fail:
    if (f) fclose(f);
    return rc;
}

int ld__desc_read(const char *path, ld_desc *d, ld_err *e)
{
    int rc = LD_OK;
    ld_probe p;
    char *first = NULL;
    memset(d, 0, sizeof *d);
    d->num_classes_recorded = -1;
    LD_TRY(ld__format_probe(path, &p, e));
    d->kind = p.kind;
    d->files = 1;
    if (p.kind == LD_PROBE_LMDB) {
        d->format = LD_FORMAT_LMDB;
#ifdef LD_HAVE_LMDB
        LD_TRY(ld__lmdb_desc_read(p.dir, d, e));
#endif
    } else {
        d->format = LD_FORMAT_HDF5;
#ifdef LD_HAVE_HDF5
        if (p.kind == LD_PROBE_HDF5_LIST) {
            uint32_t files = 0;
            LD_TRY(list_first(path, &first, &files, e));
            LD_TRY(ld__h5_desc_read(first, d, e)); /* its first file's records */
            d->files = files;
            d->samples_known = 0; /* the first file's count is not the list's */
        } else {
            LD_TRY(ld__h5_desc_read(path, d, e));
        }
#endif
    }
fail:
    free(first);
    ld__probe_free(&p);
    d->kind = p.kind;
    return rc;
}

/* The channel order ld_reader delivers by default (reader.c plan_output with
 * LD_CHANNELS_AS_STORED and channels 0). */
static int default_order(const ld_store_info *in)
{
    if (in->c != 3) return 0;
    if (in->encoded) /* decoded RGB, swapped to BGR when the dataset was made for BGR */
        return in->made_order == LD_SORDER_BGR ? LD_CHANNELS_BGR : LD_CHANNELS_RGB;
    return in->order == LD_SORDER_BGR   ? LD_CHANNELS_BGR
           : in->order == LD_SORDER_RGB ? LD_CHANNELS_RGB
                                        : 0;
}

void ld__desc_observe(ld_desc *d, const ld_store_info *in)
{
    d->samples = in->n;
    d->samples_known = 1;
    d->encoded = in->encoded;
    d->dtype = in->encoded || in->dtype != LD_SDT_F32 ? LD_DTYPE_U8 : LD_DTYPE_F32;
    d->label_dtype = in->label_float ? LD_DTYPE_F32 : LD_DTYPE_I32;
    d->channels = in->c;
    d->height = in->h;
    d->width = in->w;
    d->shape_of_first = in->shape_from != NULL;
    d->delivered_order = default_order(in);
    /* the schema as the reader sees it */
    for (size_t i = 0; i < d->n_fields; i++) {
        ld_desc_field *f = &d->field[i];
        if (f->role == LD_ROLE_IMAGE) {
            f->dtype = d->dtype;
            f->rank = 3;
            f->dims[0] = in->c;
            f->dims[1] = in->h;
            f->dims[2] = in->w;
        } else if (f->role == LD_ROLE_LABEL) {
            f->dtype = d->label_dtype;
        }
    }
}
