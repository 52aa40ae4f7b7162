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
#include "store/store.h"

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

static int mask_keys(const char *t, const char *dir, ld_desc *d, ld_err *e);

/* The label field: one int32 per sample (a Datum's label), or label vectors of label_count
 * values (in the label database label_db), with their type and names. */
static int label_keys(const char *t, const char *dir, ld_desc *d, ld_err *e)
{
    int rc = LD_OK;
    int64_t k = 0;
    char *type = NULL;
    if (ld__side_i64(t, "label_count", &k) && k >= 1 && k <= LD_MAX_LABEL_K) {
        LD_TRY(str_key(t, "label_type", &type, dir, e));
        d->label_dtype = type && !strcmp(type, "int32") ? LD_DTYPE_I32 : LD_DTYPE_F32;
        LD_TRY(str_key(t, "label_db", &d->label_db, dir, e));
        int r = ld__side_strings(t, "label_names", &d->label_names, &d->n_label_names);
        LD_CHECK(e, r != LD_ENOMEM, LD_ENOMEM, "%s: out of memory", dir);
    } else {
        k = 0;
    }
    /* (ld__lmdb_desc_read gives every description an image and a label field first) */
    ld_desc_field *f = (ld_desc_field *)ld__desc_role(d, LD_ROLE_LABEL);
    if (f) {
        f->dtype = d->label_dtype;
        f->rank = k ? 1 : 0;
        f->dims[0] = k;
    } else {
        LD_CHECK(e,
                 ld__desc_add_field(d, "label", LD_ROLE_LABEL, d->label_dtype, k ? 1 : 0, &k) ==
                     LD_OK,
                 LD_ENOMEM, "%s: out of memory", dir);
    }
fail:
    free(type);
    return rc;
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
    LD_TRY(str_key(t, "record", &d->record, dir, e));
    LD_TRY(str_key(t, "layout", &d->layout, dir, e));
    /* the records of desc.h */
    for (size_t i = 0; i < ld__desc_n_records; i++) {
        const ld_desc_record *r = &ld__desc_records[i];
        char *str = NULL;
        if (r->type != LD_REC_STR) {
            if (ld__side_i64(t, r->name, &v)) ld__desc_rec_set_num(d, i, v);
            continue;
        }
        LD_TRY(str_key(t, r->name, &str, dir, e));
        ld__desc_rec_set_str(d, i, str);
    }
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
    d->dtype = LD_DTYPE_U8;
    d->label_dtype = LD_DTYPE_I32;
    LD_TRY(label_keys(t, dir, d, e));
    LD_TRY(mask_keys(t, dir, d, e));
    ld__desc_records_done(d);
fail:
    free(fmt);
    free(tool);
    return rc;
}

/* Segmentation masks (sidecar "mask_db", "mask_field", "mask_type"): a mask field, named "label"
 * (and then the masks are the dataset's label: no label field) or "mask", uint8 or uint16. */
static int mask_keys(const char *t, const char *dir, ld_desc *d, ld_err *e)
{
    int rc = LD_OK;
    char *field = NULL, *type = NULL;
    LD_TRY(str_key(t, "mask_db", &d->mask_db, dir, e));
    if (!d->mask_db) return LD_OK;
    LD_TRY(str_key(t, "mask_field", &field, dir, e));
    LD_TRY(str_key(t, "mask_type", &type, dir, e));
    const int is_label = field && !strcmp(field, "label");
    const int64_t dims[3] = {1, 0, 0}; /* the size: the mask database's records */
    const int dt = type && !strcmp(type, "uint16") ? LD_DTYPE_U16 : LD_DTYPE_U8;
    LD_CHECK(e,
             ld__desc_add_field(d, is_label ? "label" : "mask", LD_ROLE_MASK, dt, 3, dims) == LD_OK,
             LD_ENOMEM, "%s: out of memory", dir);
    for (size_t i = 0; is_label && i < d->n_fields; i++) {
        if (d->field[i].role != LD_ROLE_LABEL) continue;
        free(d->field[i].name);
        memmove(&d->field[i], &d->field[i + 1], (d->n_fields - i - 1) * sizeof d->field[0]);
        d->n_fields--;
        break;
    }
fail:
    free(field);
    free(type);
    return rc;
}

/* ---- writing -------------------------------------------------------------------------------- */

/* A JSON string. Names come from the file system and need not be UTF-8: a byte that does not
 * start a well-formed sequence is written as the lone surrogate U+DC00 + byte, Python's
 * "surrogateescape" (json.load gives the str that os.fsdecode gives for the same bytes, and
 * .encode("utf-8", "surrogateescape") restores them), so the file stays valid JSON and
 * nothing is lost. */
static size_t json_esc(unsigned char ch, int ascii, char *out)
{
    if (ch == '"' || ch == '\\') return (size_t)snprintf(out, 8, "\\%c", ch);
    if (ch < 0x20) return (size_t)snprintf(out, 8, "\\u%04x", ch);
    if (!ascii) return (size_t)snprintf(out, 8, "\\udc%02x", ch);
    out[0] = (char)ch;
    return 1;
}

/* "key": "value" */
static int json_str(ld_buf *b, const char *key, const char *s)
{
    int rc = ld__buf_printf(b, "\"%s\": \"", key);
    if (rc == LD_OK) rc = ld__utf8_escape(b, s ? s : "", json_esc);
    return rc < 0 ? rc : ld__buf_append(b, "\"", 1);
}

/* "key": ["a", "b"], on one line (ld__side_strings reads it back) */
static int json_strings(ld_buf *b, const char *key, char *const *v, size_t n)
{
    int rc = ld__buf_printf(b, "\"%s\": [", key);
    for (size_t i = 0; rc == LD_OK && i < n; i++) {
        if (i) rc = ld__buf_printf(b, ", ");
        if (rc == LD_OK) rc = ld__buf_append(b, "\"", 1);
        if (rc == LD_OK) rc = ld__utf8_escape(b, v[i] ? v[i] : "", json_esc);
        if (rc == LD_OK) rc = ld__buf_append(b, "\"", 1);
    }
    return rc == LD_OK ? ld__buf_printf(b, "],\n") : rc;
}

int ld__lmdb_desc_write(ld_buf *b, const ld_desc *d)
{
    int rc = LD_OK;
    LD_TRY(ld__buf_printf(b, "{\n\"format\": \"libdata-lmdb\",\n\"format_version\": 1,\n"
                             "\"record\": \"caffe.Datum\",\n\"layout\": \"CHW\",\n"));
    for (size_t i = 0; i < ld__desc_n_records; i++) {
        const ld_desc_record *r = &ld__desc_records[i];
        if (!ld__desc_rec_applies(d, r)) continue;
        if (r->type == LD_REC_STR)
            LD_TRY(json_str(b, r->name, ld__desc_rec_str(d, r)));
        else
            LD_TRY(ld__buf_printf(b, "\"%s\": %lld", r->name, (long long)ld__desc_rec_num(d, r)));
        LD_TRY(ld__buf_append(b, ",\n", 2));
    }
    LD_TRY(ld__buf_printf(b, "\"tool\": \"libdata "));
    LD_TRY(ld__utf8_escape(b, d->tool_version ? d->tool_version : "", json_esc));
    LD_TRY(ld__buf_printf(b, "\",\n"));
    LD_TRY(json_strings(b, "class_names", d->class_names, d->n_classes));
    const int k = ld__desc_label_k(d);
    if (k) { /* label vectors: their count, type, names, and the database that holds them */
        LD_TRY(ld__buf_printf(b, "\"label_count\": %d,\n\"label_type\": \"%s\",\n", k,
                              d->label_dtype == LD_DTYPE_I32 ? "int32" : "float32"));
        if (d->label_db) LD_TRY(json_str(b, "label_db", d->label_db));
        if (d->label_db) LD_TRY(ld__buf_append(b, ",\n", 2));
        LD_TRY(json_strings(b, "label_names", d->label_names, d->n_label_names));
    }
    const ld_desc_field *mf = ld__desc_mask(d);
    if (mf && d->mask_db) { /* masks: the database that holds them, and which field they are */
        LD_TRY(json_str(b, "mask_db", d->mask_db));
        LD_TRY(ld__buf_append(b, ",\n", 2));
        LD_TRY(json_str(b, "mask_field", mf->name));
        LD_TRY(ld__buf_append(b, ",\n", 2));
        if (mf->dtype == LD_DTYPE_U16) /* (uint8 when absent: the first masks') */
            LD_TRY(ld__buf_printf(b, "\"mask_type\": \"uint16\",\n"));
    }
    LD_TRY(ld__buf_printf(b, "\"entries\": %llu\n}\n", (unsigned long long)d->samples));
fail:
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
