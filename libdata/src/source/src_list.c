/*
 * List mode: the listed files with their labels, in the file's order.
 *
 * Text lists are Caffe convert_imageset's "relative/path label" lines, generalized to
 * "relative/path v1 ... vK". The values are the last K blank-separated words of a line, so
 * paths may contain spaces (Caffe splits at the last space too). K is --label-count, or else
 * the number of words at the end of the FIRST line that are numbers (leaving a path): every
 * other line must have exactly K (fewer, or one more number before them, is refused naming
 * file:line; a file name that is itself a number cannot be listed, which no image name is).
 * K = 0 (paths only) is an unlabelled list: every label 0, no classes.
 *
 * CSV lists (*.csv): a header row, then one row per image: the path in the first column, the
 * K label values in the others (the header's other names are kept as label names). Fields are
 * separated by commas and may be double-quoted ("a,b.jpg", "" for a quote).
 *
 * Types (ld_list_opts.label_type): auto makes one integer per line an int32 label (class
 * labels when all are in 0..2^24-1, as Caffe's), anything else float32; int32 refuses a value
 * that is not an integer in range; float32 keeps every value as float32. A value is a decimal
 * number ("3", "-0.5", "1e-3"); an integer has digits only (and a sign). Non-finite values are
 * refused. CRLF accepted; blank lines skipped.
 */
#include "source/src_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABEL ((1 << 24) - 1)
#define MAX_K 4096 /* values per line at most */

/* One value of a line: its text parsed. */
typedef struct value {
    double v;
    int integer; /* digits only (with a sign) and within int32 */
} value;

/* Whether p[0..n) is a decimal number (digits, sign, point, exponent only, all consumed by
 * strtod, finite); fills *out. */
static int parse_value(const char *p, size_t n, value *out)
{
    char tmp[64];
    if (n == 0 || n >= sizeof tmp) return 0;
    int digits_only = 1;
    for (size_t i = 0; i < n; i++) {
        const char ch = p[i];
        const int sign = (ch == '-' || ch == '+') && i == 0;
        if (!(ch >= '0' && ch <= '9') && !sign) {
            digits_only = 0;
            if (ch != '.' && ch != 'e' && ch != 'E' && ch != '-' && ch != '+') return 0;
        }
    }
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(tmp, &end);
    if (end != tmp + n || !isfinite(v)) return 0;
    out->v = v;
    out->integer =
        digits_only && (p[n - 1] >= '0' && p[n - 1] <= '9') && v >= INT32_MIN && v <= INT32_MAX;
    return 1;
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* The start of the last word of line[0..end) (after trailing blanks are skipped), and its
 * length; 0 when the line holds one word or none (a path must stay). */
static size_t last_word(const char *line, size_t end, size_t *start)
{
    while (end > 0 && is_blank(line[end - 1]))
        end--;
    size_t b = end;
    while (b > 0 && !is_blank(line[b - 1]))
        b--;
    size_t p = b;
    while (p > 0 && is_blank(line[p - 1]))
        p--;
    if (p == 0) return 0; /* nothing before the word: it is the path */
    *start = b;
    return end - b;
}

/* Labels of a list being read: the values of one line, and what all lines so far say. */
typedef struct list_reader {
    const char *file;
    ld_list_opts o;
    int k;          /* values per line; -1 until the first line */
    value *vals;    /* MAX_K */
    int all_int;    /* every value so far is an integer */
    int64_t lo, hi; /* range of integer values */
    int32_t *ints;  /* one line's values as written to the item */
    float *floats;
} list_reader;

/* Split a text line (trimmed, NUL-terminated at n) into its path length and values. */
static int split_text(list_reader *lr, const char *line, size_t n, unsigned long lineno,
                      size_t *path_len, ld_err *e)
{
    int rc = LD_OK;
    size_t end = n;
    int got = 0;
    if (lr->k < 0) { /* first line: count the numbers at its end */
        size_t b, len;
        while (got < MAX_K && (len = last_word(line, end, &b)) > 0 &&
               parse_value(line + b, len, &lr->vals[got]))
            got++, end = b;
        lr->k = got;
    } else {
        for (; got < lr->k; got++) {
            size_t b, len = last_word(line, end, &b);
            LD_CHECK(e, len > 0 && parse_value(line + b, len, &lr->vals[got]), LD_EFORMAT,
                     "%s:%lu: expected a path and %d label value%s, found %d in \"%.200s\"",
                     lr->file, lineno, lr->k, lr->k == 1 ? "" : "s", got, line);
            end = b;
        }
        /* K from the first line: one number more is a line that differs, not a path */
        size_t b, len = lr->o.label_count < 0 ? last_word(line, end, &b) : 0;
        value extra;
        LD_CHECK(e, !len || !parse_value(line + b, len, &extra), LD_EFORMAT,
                 "%s:%lu: more than %d label value%s in \"%.200s\" (every line must have as "
                 "many as the first; label_count K says how many there are)",
                 lr->file, lineno, lr->k, lr->k == 1 ? "" : "s", line);
    }
    /* the values were taken last first */
    for (int a = 0, z = got - 1; a < z; a++, z--) {
        value t = lr->vals[a];
        lr->vals[a] = lr->vals[z];
        lr->vals[z] = t;
    }
    while (end > 0 && is_blank(line[end - 1]))
        end--;
    *path_len = end;
fail:
    return rc;
}

/* One CSV field starting at *pos: unquoted (trimmed) or "quoted" ("" is a quote), copied into
 * out (NUL-terminated). *pos moves past the field and its comma; *last set at the line end.
 * LD_OK, 1 (a quote not closed, or text after it), LD_ENOMEM. */
static int csv_field(const char *line, size_t n, size_t *pos, ld_buf *out, int *last)
{
    size_t i = *pos;
    out->len = 0;
    while (i < n && is_blank(line[i]))
        i++;
    if (i < n && line[i] == '"') {
        for (i++;; i++) {
            if (i >= n) return 1; /* unterminated */
            if (line[i] == '"') {
                if (i + 1 < n && line[i + 1] == '"') {
                    i++;
                } else {
                    i++;
                    break;
                }
            }
            if (ld__buf_append(out, line + i, 1) < 0) return LD_ENOMEM;
        }
        while (i < n && is_blank(line[i]))
            i++;
        if (i < n && line[i] != ',') return 1;
    } else {
        size_t b = i;
        while (i < n && line[i] != ',')
            i++;
        size_t z = i;
        while (z > b && is_blank(line[z - 1]))
            z--;
        if (memchr(line + b, '"', z - b)) return 1;
        if (ld__buf_append(out, line + b, z - b) < 0) return LD_ENOMEM;
    }
    *last = i >= n;
    *pos = i + 1;
    return ld__buf_append(out, "", 1) < 0 ? LD_ENOMEM : LD_OK;
}

/* Split a CSV row into its path (copied to path) and values; the header when header != 0. */
static int split_csv(list_reader *lr, ld_source *s, const char *line, size_t n,
                     unsigned long lineno, int header, ld_buf *path, ld_buf *field, ld_err *e)
{
    int rc = LD_OK, last = 0, got = -1;
    size_t pos = 0;
    while (!last) {
        int r = csv_field(line, n, &pos, got < 0 ? path : field, &last);
        LD_CHECK(e, r != LD_ENOMEM, LD_ENOMEM, "out of memory");
        LD_CHECK(e, r == LD_OK, LD_EFORMAT,
                 "%s:%lu: a quoted field is not closed, or text follows its closing quote "
                 "(a field with commas or quotes is written \"a,b\" with \"\" for a quote)",
                 lr->file, lineno);
        if (got < 0) {
            got = 0;
            continue;
        }
        LD_CHECK(e, got < MAX_K, LD_ELIMIT, "%s:%lu: more than %d columns", lr->file, lineno,
                 MAX_K + 1);
        if (header) {
            if (s->n_label_names % 64 == 0) {
                const char **t =
                    realloc(s->label_names, (s->n_label_names + 64) * sizeof *s->label_names);
                LD_CHECK(e, t, LD_ENOMEM, "out of memory");
                s->label_names = t;
            }
            const char *name = ld__source_strndup(s, (const char *)field->p, field->len - 1);
            LD_CHECK(e, name, LD_ENOMEM, "out of memory");
            s->label_names[s->n_label_names++] = name;
        } else {
            LD_CHECK(e, parse_value((const char *)field->p, field->len - 1, &lr->vals[got]),
                     LD_EFORMAT, "%s:%lu: column %d: \"%.40s\" is not a number", lr->file, lineno,
                     got + 2, (const char *)field->p);
        }
        got++;
    }
    if (header) {
        LD_CHECK(e, lr->o.label_count < 0 || lr->o.label_count == got, LD_EFORMAT,
                 "%s:1: the header names %d label column%s, label_count says %d", lr->file, got,
                 got == 1 ? "" : "s", lr->o.label_count);
        lr->k = got;
    } else {
        LD_CHECK(e, got == lr->k, LD_EFORMAT, "%s:%lu: %d label value%s, the header names %d",
                 lr->file, lineno, got, got == 1 ? "" : "s", lr->k);
        LD_CHECK(e, path->len > 1, LD_EFORMAT, "%s:%lu: empty path", lr->file, lineno);
    }
fail:
    return rc;
}

/* Check the line's values against the label type and note what they are. */
static int take_values(list_reader *lr, unsigned long lineno, ld_err *e)
{
    int rc = LD_OK;
    for (int i = 0; i < lr->k; i++) {
        const value *v = &lr->vals[i];
        LD_CHECK(e, lr->o.label_type != LD_DTYPE_I32 || v->integer, LD_EFORMAT,
                 "%s:%lu: label value %.17g is not an integer in the int32 range "
                 "(label_type int32; float32 keeps it)",
                 lr->file, lineno, v->v);
        LD_CHECK(e, v->integer || isfinite((float)v->v), LD_EFORMAT,
                 "%s:%lu: label value %.17g does not fit float32", lr->file, lineno, v->v);
        if (!v->integer) {
            lr->all_int = 0;
        } else {
            lr->lo = (int64_t)v->v < lr->lo ? (int64_t)v->v : lr->lo;
            lr->hi = (int64_t)v->v > lr->hi ? (int64_t)v->v : lr->hi;
        }
        lr->ints[i] = v->integer ? (int32_t)v->v : 0;
        lr->floats[i] = (float)v->v;
    }
fail:
    return rc;
}

/* Store one item. One value per line keeps the int32 in the item's label and, unless int32
 * was asked for, the float32 beside it (auto decides at the end); K values are stored in the
 * type they will have. */
static int add_item(list_reader *lr, ld_source *s, const char *path, size_t path_len)
{
    const int as_int = lr->o.label_type == LD_DTYPE_I32;
    if (lr->k == 0) return ld__source_add_item(s, path, path_len, 0);
    if (lr->k == 1)
        return ld__source_add_item_values(s, path, path_len, lr->ints[0], lr->floats,
                                          as_int ? 0 : 4);
    return ld__source_add_item_values(s, path, path_len, 0,
                                      as_int ? (const void *)lr->ints : (const void *)lr->floats,
                                      (size_t)lr->k * 4);
}

/* After the last line: what the labels are (source.h's ld__source_label_count). */
static int settle_labels(list_reader *lr, ld_source *s, ld_err *e)
{
    int rc = LD_OK;
    if (lr->k <= 0) { /* no lines, or paths only */
        s->unlabelled = s->n > 0;
        return LD_OK;
    }
    const int scalar_int =
        lr->k == 1 && (lr->o.label_type == LD_DTYPE_I32 || (!lr->o.label_type && lr->all_int));
    if (!scalar_int) {
        s->label_k = (uint32_t)lr->k;
        s->label_type = lr->o.label_type == LD_DTYPE_I32 ? LD_DTYPE_I32 : LD_DTYPE_F32;
        return LD_OK;
    }
    /* One integer each: class labels when they can be class indices (names "0".."max"; a
     * huge label would cost gigabytes of names), else int32 values without classes. */
    if (s->n && lr->lo >= 0 && lr->hi <= MAX_LABEL)
        for (int32_t k = 0; k <= (int32_t)lr->hi; k++) {
            char name[16];
            int len = snprintf(name, sizeof name, "%d", (int)k);
            LD_CHECK(e, ld__source_add_class(s, name, (size_t)len) == 0, LD_ENOMEM,
                     "out of memory");
        }
fail:
    return rc;
}

static int has_csv_ext(const char *p)
{
    size_t n = strlen(p);
    return n > 4 && p[n - 4] == '.' && (p[n - 3] | 32) == 'c' && (p[n - 2] | 32) == 's' &&
           (p[n - 1] | 32) == 'v';
}

int ld__source_open_list(const char *list_file, const char *root, const ld_list_opts *o,
                         ld_source_tick_fn tick, void *user, ld_source **out, ld_err *e)
{
    int rc = LD_OK;
    ld_source *s = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    FILE *f = NULL;
    ld_buf path = {0}, field = {0};
    list_reader lr = {.file = list_file, .k = -1, .all_int = 1, .lo = INT64_MAX, .hi = -1};
    *out = NULL;

    LD_CHECK(e, list_file && *list_file, LD_EINVAL, "no list file given");
    lr.o = o ? *o : (ld_list_opts){-1, 0};
    LD_CHECK(e, lr.o.label_count <= MAX_K, LD_EINVAL, "label_count %d: at most %d",
             lr.o.label_count, MAX_K);
    lr.k = has_csv_ext(list_file) ? -1 : lr.o.label_count;
    lr.ints = malloc(MAX_K * sizeof *lr.ints);
    lr.floats = malloc(MAX_K * sizeof *lr.floats);
    lr.vals = malloc(MAX_K * sizeof *lr.vals);
    LD_CHECK(e, lr.ints && lr.floats && lr.vals, LD_ENOMEM, "out of memory");
    const int csv = has_csv_ext(list_file);
    f = fopen(list_file, "rb");
    LD_CHECK(e, f, LD_EIO, "%s: cannot open list file: %s", list_file, strerror(errno));
    LD_CHECK(e, ld__source_new(&s) == 0 && ld__source_set_root(s, root) == 0, LD_ENOMEM,
             "out of memory");
    for (unsigned long lineno = 1;; lineno++) {
        LD_CHECK(e, lineno % 4096 || !tick || !tick(user, s->n), LD_ECANCELED,
                 "canceled while reading the list file");
        errno = 0;
        ssize_t got = getline(&line, &line_cap, f);
        if (got < 0) {
            LD_CHECK(e, !ferror(f), LD_EIO, "%s: read error: %s", list_file, strerror(errno));
            break;
        }
        size_t n = (size_t)got;
        LD_CHECK(e, memchr(line, '\0', n) == NULL, LD_EFORMAT,
                 "%s:%lu: line contains a NUL byte (not a text list file?)", list_file, lineno);
        /* Trailing newline, CR (CRLF files) and stray blanks after the label. */
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || is_blank(line[n - 1])))
            n--;
        size_t first = 0;
        while (first < n && is_blank(line[first]))
            first++;
        if (first == n) continue; /* empty or blank line */
        line[n] = '\0';
        if (csv) {
            const int header = lr.k < 0;
            LD_TRY(split_csv(&lr, s, line, n, lineno, header, &path, &field, e));
            if (header) continue;
            LD_TRY(take_values(&lr, lineno, e));
            LD_CHECK(e, add_item(&lr, s, (const char *)path.p, path.len - 1) == 0, LD_ENOMEM,
                     "out of memory reading %s", list_file);
            continue;
        }
        size_t path_len = 0;
        LD_TRY(split_text(&lr, line, n, lineno, &path_len, e));
        LD_CHECK(e, path_len > 0, LD_EFORMAT, "%s:%lu: empty path", list_file, lineno);
        LD_TRY(take_values(&lr, lineno, e));
        LD_CHECK(e, add_item(&lr, s, line, path_len) == 0, LD_ENOMEM, "out of memory reading %s",
                 list_file);
    }
    LD_TRY(settle_labels(&lr, s, e));
    *out = s;
    s = NULL;
fail:
    ld__source_free(s);
    free(line);
    free(lr.ints);
    free(lr.floats);
    free(lr.vals);
    ld__buf_free(&path);
    ld__buf_free(&field);
    if (f) fclose(f);
    return rc;
}
