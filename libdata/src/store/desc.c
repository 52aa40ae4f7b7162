/*
 * The format probe and the format-independent part of a dataset's description (desc.h).
 */
#include "store/desc.h"

#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "codec/codec.h"
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
    return name[0] != '.' && ld__img_name_known(name);
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

/* ---- the records ------------------------------------------------------------------------- */

/* A record describe.c prints its own way, and one `info` prints as "label: value". */
#define RECP(name, type, member, scope, setting, label)                                            \
    {                                                                                              \
        name, type, offsetof(ld_desc, member), scope, setting, label                               \
    }
#define REC(name, type, member, scope, setting) RECP(name, type, member, scope, setting, NULL)

/* In the order the writers write them. */
const ld_desc_record ld__desc_records[] = {
    REC("storage", LD_REC_STR, storage, LD_REC_ALL, 1),
    REC("encoding", LD_REC_STR, encoding, LD_REC_ENCODED, 1),
    REC("channel_order", LD_REC_STR, channel_order, LD_REC_ALL, 1),
    REC("channels", LD_REC_INT, channels, LD_REC_ALL, 0),
    REC("height", LD_REC_INT, height, LD_REC_ALL, 0),
    REC("width", LD_REC_INT, width, LD_REC_ALL, 0),
    REC("num_classes", LD_REC_INT, num_classes_recorded, LD_REC_ALL, 1),
    REC("quality", LD_REC_INT, quality, LD_REC_ALL, 1),
    REC("resize_mode", LD_REC_STR, resize_mode_name, LD_REC_ALL, 1),
    REC("resize_w", LD_REC_INT, resize_w, LD_REC_ALL, 1),
    REC("resize_h", LD_REC_INT, resize_h, LD_REC_ALL, 1),
    RECP("decode_scale", LD_REC_STR, decode_scale, LD_REC_IF_SET, 1, "decode scale"),
    RECP("mask_pad", LD_REC_INT, mask_pad, LD_REC_MASKED, 1, "mask padding index"),
    REC("source", LD_REC_STR, source, LD_REC_ALL, 0),
    REC("note", LD_REC_STR, note, LD_REC_ALL, 0),
    /* shard identity (h5_format.h, "Shards") */
    REC("shard_index", LD_REC_U32, shard_index, LD_REC_PART, 0),
    REC("shard_count", LD_REC_U32, shard_count, LD_REC_SHARDED, 0),
    REC("shard_first", LD_REC_U64, shard_first, LD_REC_PART, 0),
    REC("shard_listed", LD_REC_U64, shard_listed, LD_REC_PART, 0),
    REC("listing_total", LD_REC_U64, listing_total, LD_REC_SHARDED, 0),
    REC("run_id", LD_REC_STR, run_id, LD_REC_SHARDED, 0),
};
const size_t ld__desc_n_records = sizeof ld__desc_records / sizeof *ld__desc_records;

_Static_assert(sizeof ld__desc_records / sizeof *ld__desc_records <= 64,
               "ld_desc.recorded has one bit per record");

#define AT(d, r, type) ((type *)(void *)((char *)(d) + (r)->offset))
#define AT_C(d, r, type) ((const type *)(const void *)((const char *)(d) + (r)->offset))

static size_t rec_index(const char *name)
{
    for (size_t i = 0; i < ld__desc_n_records; i++)
        if (!strcmp(ld__desc_records[i].name, name)) return i;
    return ld__desc_n_records;
}

int ld__desc_has(const ld_desc *d, const char *name)
{
    const size_t i = rec_index(name);
    return i < ld__desc_n_records && (d->recorded >> i & 1);
}

int ld__desc_rec_applies(const ld_desc *d, const ld_desc_record *r)
{
    switch (r->scope) {
    case LD_REC_ENCODED: return d->encoded;
    case LD_REC_SHARDED: return d->shard_count > 0;
    case LD_REC_PART: return d->shard_count > 0 && !d->merged;
    case LD_REC_MASKED: return ld__desc_mask(d) != NULL;
    case LD_REC_IF_SET:
        return r->type == LD_REC_STR ? ld__desc_rec_str(d, r) != NULL : ld__desc_rec_num(d, r) != 0;
    default: return 1;
    }
}

const char *ld__desc_rec_str(const ld_desc *d, const ld_desc_record *r)
{
    return r->type == LD_REC_STR ? *AT_C(d, r, char *) : NULL;
}

int64_t ld__desc_rec_num(const ld_desc *d, const ld_desc_record *r)
{
    switch (r->type) {
    case LD_REC_INT: return *AT_C(d, r, int);
    case LD_REC_U32: return *AT_C(d, r, uint32_t);
    case LD_REC_U64: return (int64_t)*AT_C(d, r, uint64_t);
    default: return 0;
    }
}

void ld__desc_rec_set_num(ld_desc *d, size_t i, int64_t v)
{
    const ld_desc_record *r = &ld__desc_records[i];
    if (v < 0) return;
    if (r->type == LD_REC_INT && v <= 1 << 30)
        *AT(d, r, int) = (int)v;
    else if (r->type == LD_REC_U32 && v <= UINT32_MAX)
        *AT(d, r, uint32_t) = (uint32_t)v;
    else if (r->type == LD_REC_U64)
        *AT(d, r, uint64_t) = (uint64_t)v;
    else
        return;
    d->recorded |= (uint64_t)1 << i;
}

void ld__desc_rec_set_str(ld_desc *d, size_t i, char *owned)
{
    const ld_desc_record *r = &ld__desc_records[i];
    char **dst = AT(d, r, char *);
    free(*dst);
    *dst = owned;
    if (owned) d->recorded |= (uint64_t)1 << i;
}

void ld__desc_records_done(ld_desc *d)
{
    if (d->storage) d->encoded = !strcmp(d->storage, "encoded");
    d->resize_mode = ld__desc_resize_mode(d->resize_mode_name);
    if (!ld__desc_has(d, "num_classes")) d->num_classes_recorded = -1;
    const int part_records = ld__desc_has(d, "shard_index") + ld__desc_has(d, "shard_first") +
                             ld__desc_has(d, "shard_listed");
    if (d->n_parts || (d->shard_count && part_records == 0)) d->merged = 1;
    if (d->shard_count)
        d->shard_damaged = (!d->merged && part_records < 3) || !ld__desc_has(d, "listing_total") ||
                           !d->run_id || !d->run_id[0];
}

void ld__desc_mark_recorded(ld_desc *d)
{
    for (size_t i = 0; i < ld__desc_n_records; i++)
        if (ld__desc_rec_applies(d, &ld__desc_records[i])) d->recorded |= (uint64_t)1 << i;
    d->classes_recorded = 1;
}

int ld__desc_set_text(char **dst, const char *s)
{
    char *v = s ? ld__strdup(s) : NULL;
    if (s && !v) return LD_ENOMEM;
    free(*dst);
    *dst = v;
    return LD_OK;
}

/* The strings of a description that are not records. */
#define OTHER_STRINGS(d)                                                                           \
    {                                                                                              \
        &(d)->layout, &(d)->record, &(d)->tool_version, &(d)->label_db, &(d)->mask_db              \
    }

void ld__desc_free(ld_desc *d)
{
    for (size_t i = 0; i < d->n_fields; i++)
        free(d->field[i].name);
    for (size_t i = 0; d->class_names && i < d->n_classes; i++)
        free(d->class_names[i]);
    free(d->class_names);
    for (size_t i = 0; d->label_names && i < d->n_label_names; i++)
        free(d->label_names[i]);
    free(d->label_names);
    for (size_t i = 0; d->box_classes && i < d->n_box_classes; i++)
        free(d->box_classes[i]);
    free(d->box_classes);
    free(d->box_class_ids);
    for (size_t i = 0; i < ld__desc_n_records; i++)
        if (ld__desc_records[i].type == LD_REC_STR) free(*AT(d, &ld__desc_records[i], char *));
    char **other[] = OTHER_STRINGS(d);
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        free(*other[i]);
    memset(d, 0, sizeof *d);
}

int ld__desc_copy(ld_desc *dst, const ld_desc *src)
{
    int ok = 1;
    *dst = *src;
    for (size_t i = 0; i < dst->n_fields; i++)
        ok &= !src->field[i].name || !!(dst->field[i].name = ld__strdup(src->field[i].name));
    for (size_t i = 0; i < ld__desc_n_records; i++) {
        const ld_desc_record *r = &ld__desc_records[i];
        if (r->type == LD_REC_STR && *AT_C(src, r, char *))
            ok &= !!(*AT(dst, r, char *) = ld__strdup(*AT_C(src, r, char *)));
    }
    char **other[] = OTHER_STRINGS(dst);
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        if (*other[i]) ok &= !!(*other[i] = ld__strdup(*other[i]));
    dst->class_names = dst->label_names = NULL;
    dst->n_classes = dst->n_label_names = 0;
    if (ld__desc_copy_names(&dst->class_names, src->class_names, src->n_classes) == LD_OK)
        dst->n_classes = src->n_classes;
    else
        ok = 0;
    if (ld__desc_copy_names(&dst->label_names, src->label_names, src->n_label_names) == LD_OK)
        dst->n_label_names = src->n_label_names;
    else
        ok = 0;
    dst->box_classes = NULL;
    dst->box_class_ids = NULL;
    dst->n_box_classes = 0;
    if (ld__desc_set_box_classes(dst, src->box_classes, src->box_class_ids, src->n_box_classes) !=
        LD_OK)
        ok = 0;
    if (ok) return LD_OK;
    ld__desc_free(dst);
    return LD_ENOMEM;
}

static void value_text(const ld_desc *d, size_t i, char *out, size_t cap)
{
    const ld_desc_record *r = &ld__desc_records[i];
    if (!(d->recorded >> i & 1) && !(r->type == LD_REC_STR && ld__desc_rec_str(d, r)))
        snprintf(out, cap, "(absent)");
    else if (r->type == LD_REC_STR)
        snprintf(out, cap, "%s", ld__desc_rec_str(d, r) ? ld__desc_rec_str(d, r) : "");
    else
        snprintf(out, cap, "%lld", (long long)ld__desc_rec_num(d, r));
}

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The label field as text for messages: "int32", "float32 x 3". */
static void label_text(const ld_desc *d, char *out, size_t cap)
{
    const ld_desc_field *f = ld__desc_role(d, LD_ROLE_LABEL);
    if (!f) {
        snprintf(out, cap, ld__desc_mask(d) ? "masks as the label" : "(none)");
        return;
    }
    const char *t = f->dtype == LD_DTYPE_F32 ? "float32" : "int32";
    const ld_desc_field *m = ld__desc_mask(d);
    const char *masks = !m ? "" : strcmp(m->name, "label") ? ", masks" : ", masks as the label";
    if (f->rank == 1)
        snprintf(out, cap, "%s x %lld%s", t, (long long)f->dims[0], masks);
    else
        snprintf(out, cap, "%s%s", t, masks);
}

/* Where two name lists first differ: *k, or -1 when they are equal. */
static int64_t names_differ(char *const *a, size_t na, char *const *b, size_t nb)
{
    size_t k = 0;
    while (k < na && k < nb && !strcmp(a[k], b[k]))
        k++;
    return k == na && k == nb ? -1 : (int64_t)k;
}

const char *ld__desc_first_difference(const ld_desc *have, const ld_desc *want, char *hv, char *wv,
                                      size_t cap)
{
    hv[0] = wv[0] = '\0';
    if (have->format_version && want->format_version &&
        have->format_version != want->format_version) {
        snprintf(hv, cap, "%d", have->format_version);
        snprintf(wv, cap, "%d", want->format_version);
        return "format_version";
    }
    for (size_t i = 0; i < ld__desc_n_records; i++) {
        const ld_desc_record *r = &ld__desc_records[i];
        if (!r->setting) continue;
        const int hr = (int)(have->recorded >> i & 1), wr = (int)(want->recorded >> i & 1);
        int same = r->type == LD_REC_STR
                       ? same_text(ld__desc_rec_str(have, r), ld__desc_rec_str(want, r))
                       : hr == wr && ld__desc_rec_num(have, r) == ld__desc_rec_num(want, r);
        if (same) continue;
        value_text(have, i, hv, cap);
        value_text(want, i, wv, cap);
        return r->name;
    }
    label_text(have, hv, cap);
    label_text(want, wv, cap);
    if (strcmp(hv, wv)) return "label";
    int64_t l = names_differ(have->label_names, have->n_label_names, want->label_names,
                             want->n_label_names);
    if (l >= 0) {
        size_t k = (size_t)l;
        snprintf(hv, cap, "%zu names, name %zu '%s'", have->n_label_names, k,
                 k < have->n_label_names ? have->label_names[k] : "(none)");
        snprintf(wv, cap, "%zu names, name %zu '%s'", want->n_label_names, k,
                 k < want->n_label_names ? want->label_names[k] : "(none)");
        return "label_names";
    }
    int64_t b = names_differ(have->box_classes, have->n_box_classes, want->box_classes,
                             want->n_box_classes);
    if (b >= 0) {
        size_t k = (size_t)b;
        snprintf(hv, cap, "%zu box classes, class %zu '%s'", have->n_box_classes, k,
                 k < have->n_box_classes ? have->box_classes[k] : "(none)");
        snprintf(wv, cap, "%zu box classes, class %zu '%s'", want->n_box_classes, k,
                 k < want->n_box_classes ? want->box_classes[k] : "(none)");
        return "box_classes";
    }
    int64_t c =
        names_differ(have->class_names, have->n_classes, want->class_names, want->n_classes);
    if (c < 0 && have->classes_recorded == want->classes_recorded) {
        hv[0] = wv[0] = '\0';
        return NULL;
    }
    size_t k = c < 0 ? have->n_classes : (size_t)c;
    snprintf(hv, cap, "%zu classes, class %zu '%s'", have->n_classes, k,
             k < have->n_classes ? have->class_names[k] : "(none)");
    snprintf(wv, cap, "%zu classes, class %zu '%s'", want->n_classes, k,
             k < want->n_classes ? want->class_names[k] : "(none)");
    return "class_names";
}

int ld__desc_copy_names(char ***out, char *const *names, size_t n)
{
    *out = NULL;
    if (!n) return LD_OK;
    char **v = calloc(n, sizeof *v);
    if (!v) return LD_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!(v[i] = ld__strdup(names && names[i] ? names[i] : ""))) {
            while (i--)
                free(v[i]);
            free(v);
            return LD_ENOMEM;
        }
    *out = v;
    return LD_OK;
}

const ld_desc_field *ld__desc_role(const ld_desc *d, int role)
{
    for (size_t i = 0; i < d->n_fields; i++)
        if (d->field[i].role == role) return &d->field[i];
    return NULL;
}

int ld__desc_label_k(const ld_desc *d)
{
    const ld_desc_field *f = ld__desc_role(d, LD_ROLE_LABEL);
    return f && f->rank == 1 ? (int)f->dims[0] : 0;
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
    d->dtype = in->encoded               ? LD_DTYPE_U8
               : in->dtype == LD_SDT_F32 ? LD_DTYPE_F32
               : in->dtype == LD_SDT_U16 ? LD_DTYPE_U16
                                         : LD_DTYPE_U8;
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
            f->rank = in->label_k ? 1 : 0;
            f->dims[0] = in->label_k;
        } else if (f->role == LD_ROLE_MASK && in->mask_h) {
            f->dtype = in->mask_elem == 2 ? LD_DTYPE_U16 : LD_DTYPE_U8;
            f->dims[1] = in->mask_h;
            f->dims[2] = in->mask_w;
        }
    }
}

int ld__desc_set_box_classes(ld_desc *d, char *const *names, const int64_t *ids, size_t n)
{
    for (size_t i = 0; d->box_classes && i < d->n_box_classes; i++)
        free(d->box_classes[i]);
    free(d->box_classes);
    free(d->box_class_ids);
    d->box_classes = NULL;
    d->box_class_ids = NULL;
    d->n_box_classes = 0;
    if (!n) return LD_OK;
    d->box_class_ids = malloc(n * sizeof *d->box_class_ids);
    if (!d->box_class_ids || ld__desc_copy_names(&d->box_classes, names, n) != LD_OK) {
        free(d->box_class_ids);
        d->box_class_ids = NULL;
        return LD_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        d->box_class_ids[i] = ids ? ids[i] : (int64_t)i;
    d->n_box_classes = n;
    return LD_OK;
}
