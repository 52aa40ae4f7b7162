/*
 * ld__lmdb_desc_read: what an LMDB database's libdata.json sidecar records (lmdb_write.c),
 * into ld_desc; and the one typed reader of that sidecar (lmdb_desc.h).
 */
#include "store/lmdb/lmdb_desc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/types.h"
#include "store/lmdb/lmdb_store.h"

#ifdef LD_HAVE_LMDB
/* ---- the typed sidecar reader ------------------------------------------------------------- */

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

int ld__side_raw(const char *text, const char *key, const char **v, size_t *n)
{
    *v = ld__lmdb_sidecar_value(text, key);
    *n = 0;
    if (!*v) return 0;
    *n = strcspn(*v, "\n");
    while (*n && ((*v)[*n - 1] == ',' || (*v)[*n - 1] == ' ' || (*v)[*n - 1] == '\r'))
        (*n)--;
    return 1;
}

int ld__side_str(const char *text, const char *key, char **out)
{
    int bad = 0;
    const char *v = ld__lmdb_sidecar_value(text, key);
    *out = NULL;
    if (!v || *v != '"') return 0;
    v++;
    *out = json_string(&v, &bad);
    return *out ? 1 : bad ? LD_EFORMAT : LD_ENOMEM;
}

int ld__side_i64(const char *text, const char *key, int64_t *out)
{
    const char *v = ld__lmdb_sidecar_value(text, key);
    char *end;
    if (!v || !((*v >= '0' && *v <= '9') || (*v == '-' && v[1] >= '0' && v[1] <= '9'))) return 0;
    long long x = strtoll(v, &end, 10);
    if (*end != ',' && *end != '\n' && *end != '\r' && *end != '\0' && *end != ' ') return 0;
    *out = (int64_t)x;
    return 1;
}

int ld__side_strings(const char *text, const char *key, char ***out, size_t *n)
{
    int rc = LD_OK, bad = 0;
    size_t cap = 0;
    const char *v = ld__lmdb_sidecar_value(text, key);
    *out = NULL;
    *n = 0;
    if (!v) return 0;
    while (*v == ' ')
        v++;
    if (*v++ != '[') goto malformed;
    for (;;) {
        while (*v == ' ')
            v++;
        if (*v == ']') break;
        if (*v++ != '"') goto malformed;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **t = realloc(*out, cap * sizeof *t);
            if (!t) goto nomem;
            *out = t;
        }
        char *s = json_string(&v, &bad);
        if (!s && bad) goto malformed;
        if (!s) goto nomem;
        (*out)[(*n)++] = s;
        while (*v == ' ')
            v++;
        if (*v == ',')
            v++;
        else if (*v != ']')
            goto malformed;
    }
    return 1;
malformed:
    rc = LD_EFORMAT;
    goto free_all;
nomem:
    rc = LD_ENOMEM;
free_all:
    for (size_t i = 0; i < *n; i++)
        free((*out)[i]);
    free(*out);
    *out = NULL;
    *n = 0;
    return rc;
}

/* ---- the description ----------------------------------------------------------------------- */

/* A string key into *dst (owned). LD_OK (absent is fine), LD_ENOMEM, LD_EFORMAT. */
static int str_key(const char *t, const char *key, char **dst, const char *dir, ld_err *e)
{
    free(*dst);
    int r = ld__side_str(t, key, dst);
    if (r == LD_ENOMEM) return ld__err(e, r, "%s: out of memory", dir);
    if (r == LD_EFORMAT)
        return ld__err(e, r,
                       "%s/%s: %s is not a well-formed string: the file was edited or damaged; "
                       "convert the dataset again, or remove the file",
                       dir, LD_LMDB_SIDECAR, key);
    return LD_OK;
}

/* An integer key in [0, 2^30], else 0. */
static int count_key(const char *t, const char *key)
{
    int64_t v = 0;
    return ld__side_i64(t, key, &v) && v >= 0 && v <= 1 << 30 ? (int)v : 0;
}

int ld__lmdb_desc_from(const char *t, const char *dir, ld_desc *d, ld_err *e)
{
    int rc = LD_OK;
    char *fmt = NULL, *tool = NULL;
    int64_t v = 0;
    LD_TRY(str_key(t, "format", &fmt, dir, e));
    d->by_libdata = fmt && !strcmp(fmt, "libdata-lmdb");
    if (!d->by_libdata) goto fail;
    if (ld__side_i64(t, "format_version", &v) && v > 0 && v < 1 << 30) d->format_version = (int)v;
    LD_TRY(str_key(t, "tool", &tool, dir, e));
    if (tool) {
        const char *ver = !strncmp(tool, "libdata ", 8) ? tool + 8 : tool;
        d->tool_version = ld__strdup(ver);
        LD_CHECK(e, d->tool_version, LD_ENOMEM, "%s: out of memory", dir);
    }
    LD_TRY(str_key(t, "source", &d->source, dir, e));
    LD_TRY(str_key(t, "note", &d->note, dir, e));
    LD_TRY(str_key(t, "record", &d->record, dir, e));
    LD_TRY(str_key(t, "storage", &d->storage, dir, e));
    d->encoded = d->storage && !strcmp(d->storage, "encoded");
    if (d->encoded) LD_TRY(str_key(t, "encoding", &d->encoding, dir, e));
    LD_TRY(str_key(t, "channel_order", &d->channel_order, dir, e));
    LD_TRY(str_key(t, "layout", &d->layout, dir, e));
    d->quality = count_key(t, "quality");
    LD_TRY(str_key(t, "resize_mode", &d->resize_mode_name, dir, e));
    d->resize_mode = ld__desc_resize_mode(d->resize_mode_name);
    d->resize_w = count_key(t, "resize_w");
    d->resize_h = count_key(t, "resize_h");
    if (ld__side_i64(t, "num_classes", &v) && v >= 0 && v <= 1 << 30)
        d->num_classes_recorded = (int)v;
    int r = ld__side_strings(t, "class_names", &d->class_names, &d->n_classes);
    LD_CHECK(e, r != LD_ENOMEM, LD_ENOMEM, "%s: out of memory", dir);
    LD_CHECK(e, r != LD_EFORMAT, LD_EFORMAT,
             "%s/%s: class_names is not a list of strings on one line: the file was "
             "edited or damaged; convert the dataset again, or remove the file",
             dir, LD_LMDB_SIDECAR);
    d->classes_recorded = r == 1;
    if (ld__side_i64(t, "entries", &v) && v >= 0) {
        d->samples = (uint64_t)v;
        d->samples_known = 1;
    }
    d->channels = count_key(t, "channels");
    d->height = count_key(t, "height");
    d->width = count_key(t, "width");
    d->dtype = LD_DTYPE_U8;
    d->label_dtype = LD_DTYPE_I32;
    /* shard identity (h5_format.h "Shards"); a merged database keeps count, total, run_id */
    LD_TRY(str_key(t, "run_id", &d->run_id, dir, e));
    if (ld__side_i64(t, "listing_total", &v) && v >= 0) d->listing_total = (uint64_t)v;
    if (ld__side_i64(t, "shard_count", &v) && v > 0 && v <= UINT32_MAX) {
        int64_t k = -1, first = -1, listed = -1;
        d->shard_count = (uint32_t)v;
        int ok = ld__side_i64(t, "shard_index", &k) && ld__side_i64(t, "shard_first", &first) &&
                 ld__side_i64(t, "shard_listed", &listed) &&
                 ld__lmdb_sidecar_value(t, "listing_total") && d->run_id && d->run_id[0];
        d->shard_damaged = !ok || k < 0 || k > UINT32_MAX || first < 0 || listed < 0;
        if (!d->shard_damaged) {
            d->shard_index = (uint32_t)k;
            d->shard_first = (uint64_t)first;
            d->shard_listed = (uint64_t)listed;
        }
    }
fail:
    free(fmt);
    free(tool);
    return rc;
}

int ld__lmdb_desc_read(const char *dir, ld_desc *d, ld_err *e)
{
    int rc;
    ld_buf side = {0};
    d->format = LD_FORMAT_LMDB;
    d->files = 1;
    LD_TRY(ld__desc_add_field(d, "data", LD_ROLE_IMAGE, LD_DTYPE_U8, 3, NULL) == LD_OK
               ? LD_OK
               : ld__err(e, LD_ENOMEM, "out of memory"));
    LD_TRY(ld__desc_add_field(d, "label", LD_ROLE_LABEL, LD_DTYPE_I32, 0, NULL) == LD_OK
               ? LD_OK
               : ld__err(e, LD_ENOMEM, "out of memory"));
    rc = ld__lmdb_sidecar_read(dir, &side, e);
    if (rc == LD_END) return LD_OK; /* Caffe's: nothing recorded */
    if (rc == LD_OK) rc = ld__lmdb_desc_from((const char *)side.p, dir, d, e);
    if (rc == LD_OK && d->field[0].name)
        for (int i = 0; i < 3; i++)
            d->field[0].dims[i] = i == 0 ? d->channels : i == 1 ? d->height : d->width;
fail:
    ld__buf_free(&side);
    return rc;
}
#endif /* LD_HAVE_LMDB */
