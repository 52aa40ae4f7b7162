/*
 * List mode: Caffe convert_imageset's "relative/path label" lines. The split is at the
 * last space (as Caffe's find_last_of(' ')), so paths may contain spaces; the order is the
 * file's order.
 */
#include "source/src_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABEL ((1 << 24) - 1)

/* Parse a non-negative decimal that fits in int32. Returns 1 on success. */
static int parse_label(const char *p, size_t n, int32_t *out)
{
    if (n == 0) return 0;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        v = v * 10 + (p[i] - '0');
        if (v > INT32_MAX) return 0;
    }
    *out = (int32_t)v;
    return 1;
}

int ld__source_open_list(const char *list_file, const char *root, ld_source_tick_fn tick,
                         void *user, ld_source **out, ld_err *e)
{
    int rc = LD_OK;
    ld_source *s = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    FILE *f = NULL;
    int32_t max_label = -1;
    *out = NULL;

    LD_CHECK(e, list_file && *list_file, LD_EINVAL, "no list file given");
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
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' ||
                         line[n - 1] == '\t'))
            n--;
        size_t first = 0;
        while (first < n && (line[first] == ' ' || line[first] == '\t'))
            first++;
        if (first == n) continue; /* empty or blank line */
        line[n] = '\0';
        char *sp = strrchr(line, ' ');
        LD_CHECK(e, sp, LD_EFORMAT,
                 "%s:%lu: expected \"relative/path label\", found no label in \"%.200s\"",
                 list_file, lineno, line);
        int32_t label;
        const char *lab = sp + 1;
        LD_CHECK(e, parse_label(lab, strlen(lab), &label), LD_EFORMAT,
                 "%s:%lu: label \"%.40s\" is not a non-negative integer below 2^31", list_file,
                 lineno, lab);
        /* Class names "0".."max" are materialized, so a huge label would cost gigabytes. */
        LD_CHECK(e, label <= MAX_LABEL, LD_ELIMIT,
                 "%s:%lu: label %d is larger than the supported maximum %d (labels are class "
                 "indices 0..classes-1)",
                 list_file, lineno, (int)label, MAX_LABEL);
        size_t path_len = (size_t)(sp - line);
        while (path_len > 0 && line[path_len - 1] == ' ')
            path_len--; /* "a.jpg  3": several blanks before the label */
        LD_CHECK(e, path_len > 0, LD_EFORMAT, "%s:%lu: empty path before label %d", list_file,
                 lineno, (int)label);
        LD_CHECK(e, ld__source_add_item(s, line, path_len, label) == 0, LD_ENOMEM,
                 "out of memory reading %s", list_file);
        if (label > max_label) max_label = label;
    }
    /* Class names are the label numbers, so label k is always class k. */
    for (int32_t k = 0; k <= max_label; k++) {
        char name[16];
        int len = snprintf(name, sizeof name, "%d", (int)k);
        LD_CHECK(e, ld__source_add_class(s, name, (size_t)len) == 0, LD_ENOMEM, "out of memory");
    }
    *out = s;
    s = NULL;
fail:
    ld__source_free(s);
    free(line);
    if (f) fclose(f);
    return rc;
}
