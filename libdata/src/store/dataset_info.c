/*
 * ld_dataset_stat(): what a dataset holds, as a struct (reader.h). The store gives what the
 * reader sees (count, shape, dtypes, channel order); libdata's own records give how it was
 * made and the class names: the root attributes of an HDF5 file (h5_format.h; for a --split
 * list, its first file's), the libdata.json sidecar of an LMDB directory (lmdb_write.c).
 * The result is one allocation, released with ld_free().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libdata/dataset.h"
#include "store/store.h"
#ifdef LD_HAVE_HDF5
#include "store/hdf5/h5_format.h"
#include "store/hdf5/h5_util.h"
#include "store/writer.h"
#endif
#ifdef LD_HAVE_LMDB
#include "store/lmdb/lmdb_store.h"
#endif

/* How the dataset was made, from libdata's own records. */
typedef struct made {
    int ours;
    char encoding[16];
    int quality, resize_mode, resize_w, resize_h;
    size_t n_classes;
    char **class_names; /* n_classes, each malloc'd */
} made;

static void made_free(made *m)
{
    for (size_t i = 0; m->class_names && i < m->n_classes; i++)
        free(m->class_names[i]);
    free(m->class_names);
    m->class_names = NULL;
    m->n_classes = 0;
}

/* LD_RESIZE_* of a recorded mode name ("squash", ...); 0 for "none" or an unknown name. */
static int resize_mode_of(const char *name)
{
    static const char *const names[] = {"squash", "crop", "pad", "max"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, names[i])) return LD_RESIZE_SQUASH + i;
    return 0;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* ---- HDF5: root attributes ------------------------------------------------------------- */

#ifdef LD_HAVE_HDF5
/* A size attribute read as sidecar_int reads the LMDB sidecar: 0 when absent or out of range. */
static int attr_count(hid_t f, const char *name)
{
    int v = 0;
    return ld__h5_attr_int(f, name, &v) && v >= 0 && v <= 1 << 30 ? v : 0;
}

/* The class_names attribute. LD_OK (none is fine), LD_ENOMEM. */
static int attr_names(hid_t f, made *m)
{
    char **v = NULL;
    size_t n = 0;
    int rc = ld__h5_attr_strings(f, LD_H5_ATTR_CLASS_NAMES, &v, &n);
    if (rc != LD_OK) return rc == LD_ENOMEM ? LD_ENOMEM : LD_OK;
    if (n && !(m->class_names = calloc(n, sizeof *m->class_names))) rc = LD_ENOMEM;
    for (size_t i = 0; rc == LD_OK && i < n; i++, m->n_classes++)
        if (!(m->class_names[i] = strdup(v[i]))) rc = LD_ENOMEM;
    free(v);
    return rc;
}

/* How an HDF5 file of ours was made; nothing for another tool's. */
static int h5_made(const char *path, made *m, ld_err *e)
{
    int rc = LD_OK;
    char s[64];
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        rc = ld__temp_being_written(path, e);
        if (rc == LD_OK) rc = ld__h5_err(e, LD_EFORMAT, "%s: cannot open as HDF5", path);
        goto done;
    }
    ld__h5_attr_text(f, LD_H5_ATTR_FORMAT, s, sizeof s);
    m->ours = strcmp(s, LD_H5_FORMAT_NAME) == 0;
    if (!m->ours) goto done;
    ld__h5_attr_text(f, LD_H5_ATTR_STORAGE, s, sizeof s);
    if (!strcmp(s, LD_H5_STORAGE_ENCODED))
        ld__h5_attr_text(f, LD_H5_ATTR_ENCODING, m->encoding, sizeof m->encoding);
    m->quality = attr_count(f, LD_H5_ATTR_QUALITY);
    ld__h5_attr_text(f, LD_H5_ATTR_RESIZE_MODE, s, sizeof s);
    m->resize_mode = resize_mode_of(s);
    m->resize_w = attr_count(f, LD_H5_ATTR_RESIZE_W);
    m->resize_h = attr_count(f, LD_H5_ATTR_RESIZE_H);
    if (attr_names(f, m) < 0) rc = ld__err(e, LD_ENOMEM, "%s: out of memory", path);
done:
    if (f >= 0) H5Fclose(f);
    ld__h5_quiet_end(&q);
    return rc;
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
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = 0;
        if (!len || line[0] == '#') continue;
        if (!*first) {
            *first = ld__list_entry_path(path, line);
            LD_CHECK(e, *first, LD_ENOMEM, "out of memory");
        }
        (*files)++;
    }
fail:
    if (f) fclose(f);
    return rc;
}
#endif

/* ---- LMDB: the libdata.json sidecar ----------------------------------------------------- */

#ifdef LD_HAVE_LMDB
/* Append code point cp as UTF-8; a lone \udcXX (XX >= 0x80) is the byte XX, as the writer
 * (and Python's surrogateescape) puts a byte that is not UTF-8. */
static int put_cp(ld_buf *b, unsigned cp)
{
    uint8_t u[4];
    size_t n;
    if (cp >= 0xdc80 && cp <= 0xdcff) {
        u[0] = (uint8_t)(cp - 0xdc00), n = 1;
    } else if (cp < 0x80) {
        u[0] = (uint8_t)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (uint8_t)(0xc0 | cp >> 6), u[1] = (uint8_t)(0x80 | (cp & 0x3f)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (uint8_t)(0xe0 | cp >> 12), u[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
        u[2] = (uint8_t)(0x80 | (cp & 0x3f)), n = 3;
    } else {
        u[0] = (uint8_t)(0xf0 | cp >> 18), u[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
        u[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f)), u[3] = (uint8_t)(0x80 | (cp & 0x3f)), n = 4;
    }
    return ld__buf_append(b, u, n);
}

static int hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        const char c = s[i];
        const int d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
        if (d < 0) return 0;
        *v = *v << 4 | (unsigned)d;
    }
    return 1;
}

/* One JSON string at *p (after its opening quote) into a malloc'd C string; *p moves past
 * the closing quote. NULL with *bad = 1 on malformed text, NULL with *bad = 0 on ENOMEM. */
static char *json_string(const char **p, int *bad)
{
    ld_buf b = {0};
    const char *s = *p;
    int rc = LD_OK;
    *bad = 0;
    while (rc == LD_OK && *s && *s != '"' && *s != '\n') {
        if (*s != '\\') {
            rc = ld__buf_append(&b, s++, 1);
            continue;
        }
        const char c = s[1];
        const char *simple = strchr("\"\\/bfnrt", c);
        unsigned cp;
        if (c && simple) {
            static const char out[] = "\"\\/\b\f\n\r\t";
            rc = ld__buf_append(&b, &out[simple - "\"\\/bfnrt"], 1);
            s += 2;
        } else if (c == 'u' && hex4(s + 2, &cp)) {
            unsigned lo;
            s += 6;
            if (cp >= 0xd800 && cp < 0xdc00 && s[0] == '\\' && s[1] == 'u' && hex4(s + 2, &lo) &&
                lo >= 0xdc00 && lo < 0xe000) { /* a surrogate pair */
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                s += 6;
            }
            rc = put_cp(&b, cp);
        } else {
            rc = LD_EFORMAT;
        }
    }
    if (rc == LD_OK && *s != '"') rc = LD_EFORMAT;
    if (rc == LD_OK) rc = ld__buf_append(&b, "", 1);
    if (rc < 0) {
        *bad = rc == LD_EFORMAT;
        ld__buf_free(&b);
        return NULL;
    }
    *p = s + 1;
    return (char *)b.p;
}

/* The sidecar's `"class_names": ["a", "b"]` line. */
static int sidecar_names(const char *v, made *m, const char *path, ld_err *e)
{
    int rc = LD_OK, bad = 0;
    size_t cap = 0;
    while (*v == ' ')
        v++;
    if (*v++ != '[') goto malformed;
    for (;;) {
        while (*v == ' ')
            v++;
        if (*v == ']') break;
        if (*v++ != '"') goto malformed;
        if (m->n_classes == cap) {
            cap = cap ? cap * 2 : 16;
            char **t = realloc(m->class_names, cap * sizeof *t);
            LD_CHECK(e, t, LD_ENOMEM, "out of memory");
            m->class_names = t;
        }
        char *name = json_string(&v, &bad);
        if (!name && bad) goto malformed;
        LD_CHECK(e, name, LD_ENOMEM, "out of memory");
        m->class_names[m->n_classes++] = name;
        while (*v == ' ')
            v++;
        if (*v == ',')
            v++;
        else if (*v != ']')
            goto malformed;
    }
    return LD_OK;
malformed:
    rc = ld__err(e, LD_EFORMAT,
                 "%s/%s: class_names is not a list of strings on one line: the file was "
                 "edited or damaged; convert the dataset again, or remove the file",
                 path, LD_LMDB_SIDECAR);
fail:
    return rc;
}

/* A quoted sidecar value ("jpeg") into buf; "" when absent. */
static void sidecar_text(const char *side, const char *key, char *buf, size_t cap)
{
    const char *v = ld__lmdb_sidecar_value(side, key);
    buf[0] = '\0';
    if (v && *v == '"') {
        size_t n = strcspn(v + 1, "\"\n");
        snprintf(buf, cap, "%.*s", (int)n, v + 1);
    }
}

static int sidecar_int(const char *side, const char *key)
{
    const char *v = ld__lmdb_sidecar_value(side, key);
    const long x = v ? strtol(v, NULL, 10) : 0;
    return x >= 0 && x <= 1 << 30 ? (int)x : 0;
}

/* How an LMDB database of ours was made (its sidecar); nothing for Caffe's. */
static int lmdb_made(const char *dir, made *m, ld_err *e)
{
    int rc = LD_OK;
    ld_buf side = {0};
    char s[64];
    rc = ld__lmdb_sidecar_read(dir, &side, e);
    if (rc == LD_END) return LD_OK;
    LD_TRY(rc);
    const char *t = (const char *)side.p;
    sidecar_text(t, "format", s, sizeof s);
    m->ours = strcmp(s, "libdata-lmdb") == 0;
    if (!m->ours) goto fail;
    sidecar_text(t, "storage", s, sizeof s);
    if (!strcmp(s, "encoded")) sidecar_text(t, "encoding", m->encoding, sizeof m->encoding);
    m->quality = sidecar_int(t, "quality");
    sidecar_text(t, "resize_mode", s, sizeof s);
    m->resize_mode = resize_mode_of(s);
    m->resize_w = sidecar_int(t, "resize_w");
    m->resize_h = sidecar_int(t, "resize_h");
    const char *names = ld__lmdb_sidecar_value(t, "class_names");
    if (names) LD_TRY(sidecar_names(names, m, dir, e));
fail:
    ld__buf_free(&side);
    return rc;
}
#endif

/* ---- the result ---------------------------------------------------------------------------- */

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

/* One block: the struct, the class-name pointers, then the strings. */
static ld_dataset_info *pack(const char *path, const ld_store_info *in, const made *m, int format,
                             uint32_t files)
{
    size_t bytes = sizeof(ld_dataset_info) + m->n_classes * sizeof(char *) + strlen(path) + 1 +
                   strlen(m->encoding) + 1;
    for (size_t i = 0; i < m->n_classes; i++)
        bytes += strlen(m->class_names[i]) + 1;
    ld_dataset_info *d = calloc(1, bytes);
    if (!d) return NULL;
    const char **names = (const char **)(d + 1);
    char *text = (char *)(names + m->n_classes);
#define COPY(dst, s) (dst = strcpy(text, s), text += strlen(s) + 1)
    COPY(d->path, path);
    if (m->encoding[0]) COPY(d->encoding, m->encoding);
    for (size_t i = 0; i < m->n_classes; i++)
        COPY(names[i], m->class_names[i]);
#undef COPY
    d->class_names = m->n_classes ? names : NULL;
    d->num_classes = m->n_classes;
    d->format = format;
    d->by_libdata = m->ours;
    d->files = files;
    d->samples = in->n;
    d->encoded = in->encoded;
    d->quality = m->quality;
    d->dtype = in->dtype == LD_SDT_F32 ? LD_DTYPE_F32 : LD_DTYPE_U8;
    d->label_dtype = in->label_float ? LD_DTYPE_F32 : LD_DTYPE_I32;
    d->channels = in->c;
    d->height = in->h;
    d->width = in->w;
    d->shape_of_first = in->shape_from != NULL;
    d->channel_order = default_order(in);
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
    made m = {0};
    char *first = NULL;
    struct stat st;
    uint32_t files = 1;
    int format = LD_FORMAT_HDF5;

    ld__err_clear(&e);
    if (info) *info = NULL;
    if (errmsg) *errmsg = NULL;
    if (!path || !info) {
        if (errmsg) *errmsg = strdup("ld_dataset_stat: path and info are required");
        return LD_EINVAL;
    }
    LD_TRY(ld__store_open(path, NULL, &s, &e));
    LD_CHECK(&e, stat(path, &st) == 0, LD_EIO, "%s: %s", path, strerror(errno));
    /* the formats as ld__store_open tells them apart */
    if (S_ISDIR(st.st_mode) || ends_with(path, ".mdb")) {
        format = LD_FORMAT_LMDB;
#ifdef LD_HAVE_LMDB
        if (S_ISDIR(st.st_mode)) {
            LD_TRY(lmdb_made(path, &m, &e));
        } else { /* data.mdb named itself: the sidecar is beside it */
            const char *slash = strrchr(path, '/');
            char *dir = slash ? ld__asprintf("%.*s", (int)(slash - path), path) : ld__strdup(".");
            LD_CHECK(&e, dir, LD_ENOMEM, "out of memory");
            rc = lmdb_made(dir, &m, &e);
            free(dir);
            LD_TRY(rc);
        }
#endif
    } else {
#ifdef LD_HAVE_HDF5
        if (ends_with(path, ".txt") || ends_with(path, ".list")) {
            LD_TRY(list_first(path, &first, &files, &e));
            LD_CHECK(&e, first, LD_EFORMAT, "%s: the list names no file", path);
        }
        LD_TRY(h5_made(first ? first : path, &m, &e));
#endif
    }
    *info = pack(path, &s->info, &m, format, files);
    LD_CHECK(&e, *info, LD_ENOMEM, "out of memory");
fail:
    if (s) s->vt->close(s);
    made_free(&m);
    free(first);
    if (rc < 0 && errmsg) *errmsg = strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    return rc;
}
