/*
 * A parser of protobuf's text format as Caffe writes nets and solvers (train_val.prototxt,
 * solver.prototxt), without protobuf and without a schema: nested messages `name { ... }`
 * (or `name: { }`, `name < >`), scalar fields `name: value` (identifiers, numbers, quoted
 * strings with C escapes, adjacent strings concatenated), repeated fields by repetition or
 * `[a, b]`, `#` comments, optional `;`/`,` separators. It reads untrusted text: nesting depth,
 * input size and node count are bounded, and every error names line:column.
 */
#ifndef LD_PROTOTXT_H
#define LD_PROTOTXT_H

#include <stddef.h>

#include "common/ld_internal.h"

#define LD_PT_MAX_DEPTH 100                /* nested messages */
#define LD_PT_MAX_INPUT ((size_t)64 << 20) /* bytes of text */
#define LD_PT_MAX_NODES ((size_t)4 << 20)  /* fields in all */

typedef struct ld_pt_node ld_pt_node;
struct ld_pt_node {
    char *name;        /* field name */
    char *value;       /* scalar: the text (strings unescaped, may hold NUL: see len); NULL
                          for a message */
    size_t len;        /* bytes of value */
    int is_string;     /* value came from a quoted string */
    int line, col;     /* where the field name starts (1-based) */
    ld_pt_node **kids; /* a message's fields, in order */
    size_t nkids, cap;
};

/* Parse `len` bytes of text. On success *root is a message node (free with ld__pt_free).
 * Errors: LD_EFORMAT "LINE:COL: reason", LD_ELIMIT (too deep / too big), LD_ENOMEM. */
int ld__pt_parse(const char *text, size_t len, ld_pt_node **root, ld_err *e);
void ld__pt_free(ld_pt_node *n);

/* The first field `name` of message `m` (NULL if none), and the k-th one. */
const ld_pt_node *ld__pt_get(const ld_pt_node *m, const char *name);
const ld_pt_node *ld__pt_nth(const ld_pt_node *m, const char *name, size_t k);
size_t ld__pt_count(const ld_pt_node *m, const char *name);

/* Scalars: LD_OK and *out, or LD_EFORMAT naming `what`, the line and the column when the
 * field is a message, not a number, or out of [lo, hi]. A missing field gives `def`. */
int ld__pt_int(const ld_pt_node *f, int64_t lo, int64_t hi, int64_t *out, const char *what,
               ld_err *e);
int ld__pt_get_int(const ld_pt_node *m, const char *name, int64_t def, int64_t lo, int64_t hi,
                   int64_t *out, ld_err *e);
int ld__pt_get_double(const ld_pt_node *m, const char *name, double def, double *out, ld_err *e);
/* A field's text, or `def` when missing; NULL when it is a message. */
const char *ld__pt_get_str(const ld_pt_node *m, const char *name, const char *def);
/* Boolean: true/false/1/0/t/f. */
int ld__pt_get_bool(const ld_pt_node *m, const char *name, int def, int *out, ld_err *e);

#endif /* LD_PROTOTXT_H */
