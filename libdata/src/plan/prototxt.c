/* Protobuf text-format parser for Caffe's prototxt files (see prototxt.h). */
#include "plan/prototxt.h"

#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct lexer {
    const char *p, *end;
    int line, col;
    size_t nodes;
    ld_err *e;
} lexer;

static void adv(lexer *L)
{
    if (*L->p == '\n') {
        L->line++;
        L->col = 1;
    } else {
        L->col++;
    }
    L->p++;
}

static void skip_ws(lexer *L)
{
    while (L->p < L->end) {
        unsigned char c = (unsigned char)*L->p;
        if (c == '#') {
            while (L->p < L->end && *L->p != '\n')
                adv(L);
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            adv(L);
        } else {
            break;
        }
    }
}

static int is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_ident(int c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* Describe the character at the cursor for an error message. */
static const char *here(const lexer *L, char *buf, size_t cap)
{
    if (L->p >= L->end) return "end of file";
    unsigned char c = (unsigned char)*L->p;
    if (c >= 0x21 && c < 0x7f)
        snprintf(buf, cap, "'%c'", c);
    else
        snprintf(buf, cap, "byte 0x%02x", c);
    return buf;
}

static int fail(lexer *L, int line, int col, const char *what)
{
    char b[16];
    return ld__err(L->e, LD_EFORMAT, "%d:%d: %s (found %s)", line, col, what, here(L, b, sizeof b));
}

static ld_pt_node *new_node(lexer *L, int line, int col)
{
    if (++L->nodes > LD_PT_MAX_NODES) {
        ld__err(L->e, LD_ELIMIT, "%d:%d: more than %zu fields: not a net definition", line, col,
                LD_PT_MAX_NODES);
        return NULL;
    }
    ld_pt_node *n = calloc(1, sizeof *n);
    if (!n) {
        ld__err(L->e, LD_ENOMEM, "out of memory parsing the text");
        return NULL;
    }
    n->line = line;
    n->col = col;
    return n;
}

static int add_kid(lexer *L, ld_pt_node *m, ld_pt_node *k)
{
    if (m->nkids == m->cap) {
        size_t c = m->cap ? m->cap * 2 : 8;
        ld_pt_node **t = realloc(m->kids, c * sizeof *t);
        if (!t) return ld__err(L->e, LD_ENOMEM, "out of memory parsing the text");
        m->kids = t;
        m->cap = c;
    }
    m->kids[m->nkids++] = k;
    return LD_OK;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One quoted string (cursor on the quote), appended unescaped to b. */
static int lex_string(lexer *L, ld_buf *b)
{
    int line = L->line, col = L->col;
    char q = *L->p;
    adv(L);
    for (;;) {
        if (L->p >= L->end || *L->p == '\n')
            return ld__err(L->e, LD_EFORMAT, "%d:%d: string not closed on its line", line, col);
        char c = *L->p;
        if (c == q) {
            adv(L);
            return LD_OK;
        }
        if (c != '\\') {
            if (ld__buf_append(b, &c, 1) != LD_OK) return ld__err(L->e, LD_ENOMEM, "out of memory");
            adv(L);
            continue;
        }
        int el = L->line, ec = L->col;
        adv(L);
        if (L->p >= L->end) return ld__err(L->e, LD_EFORMAT, "%d:%d: string not closed", line, col);
        unsigned v = 0;
        c = *L->p;
        switch (c) {
        case 'n':
            v = '\n';
            adv(L);
            break;
        case 't':
            v = '\t';
            adv(L);
            break;
        case 'r':
            v = '\r';
            adv(L);
            break;
        case 'a':
            v = '\a';
            adv(L);
            break;
        case 'b':
            v = '\b';
            adv(L);
            break;
        case 'f':
            v = '\f';
            adv(L);
            break;
        case 'v':
            v = '\v';
            adv(L);
            break;
        case '\\':
        case '\'':
        case '"':
        case '?':
            v = (unsigned char)c;
            adv(L);
            break;
        case 'x':
        case 'X': {
            adv(L);
            int digits = 0;
            while (digits < 2 && L->p < L->end && hexval(*L->p) >= 0) {
                v = v * 16 + (unsigned)hexval(*L->p);
                adv(L);
                digits++;
            }
            if (!digits)
                return ld__err(L->e, LD_EFORMAT, "%d:%d: \\x without hex digits in a string", el,
                               ec);
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                for (int d = 0; d < 3 && L->p < L->end && *L->p >= '0' && *L->p <= '7'; d++) {
                    v = v * 8 + (unsigned)(*L->p - '0');
                    adv(L);
                }
                if (v > 255)
                    return ld__err(L->e, LD_EFORMAT, "%d:%d: octal escape over \\377 in a string",
                                   el, ec);
            } else {
                return ld__err(L->e, LD_EFORMAT, "%d:%d: unknown escape '\\%c' in a string", el, ec,
                               (c >= 0x21 && c < 0x7f) ? c : '?');
            }
        }
        char ch = (char)v;
        if (ld__buf_append(b, &ch, 1) != LD_OK) return ld__err(L->e, LD_ENOMEM, "out of memory");
    }
}

/* A scalar value: strings (adjacent ones concatenated), identifiers, numbers. */
static int lex_value(lexer *L, ld_pt_node *n)
{
    ld_buf b = {0};
    int rc = LD_OK;
    if (L->p < L->end && (*L->p == '"' || *L->p == '\'')) {
        n->is_string = 1;
        while (L->p < L->end && (*L->p == '"' || *L->p == '\'')) {
            if ((rc = lex_string(L, &b)) != LD_OK) goto done;
            skip_ws(L);
        }
    } else {
        const char *s = L->p;
        if (L->p < L->end && (*L->p == '-' || *L->p == '+')) adv(L);
        while (L->p < L->end &&
               (is_ident(*L->p) || *L->p == '.' ||
                ((*L->p == '-' || *L->p == '+') && (L->p[-1] == 'e' || L->p[-1] == 'E'))))
            adv(L);
        if (L->p == s || (L->p == s + 1 && (*s == '-' || *s == '+'))) {
            rc = fail(L, L->line, L->col, "a value expected");
            goto done;
        }
        if (ld__buf_append(&b, s, (size_t)(L->p - s)) != LD_OK) {
            rc = ld__err(L->e, LD_ENOMEM, "out of memory");
            goto done;
        }
    }
    if (ld__buf_reserve(&b, b.len + 1) != LD_OK) {
        rc = ld__err(L->e, LD_ENOMEM, "out of memory");
        goto done;
    }
    b.p[b.len] = 0;
    n->value = (char *)b.p;
    n->len = b.len;
    return LD_OK;
done:
    ld__buf_free(&b);
    return rc;
}

static int parse_fields(lexer *L, ld_pt_node *m, char close, int depth);

static int parse_message_body(lexer *L, ld_pt_node *n, int depth)
{
    char open = *L->p, close = open == '{' ? '}' : '>';
    int line = L->line, col = L->col;
    if (depth >= LD_PT_MAX_DEPTH)
        return ld__err(L->e, LD_ELIMIT, "%d:%d: messages nested more than %d deep", line, col,
                       LD_PT_MAX_DEPTH);
    adv(L);
    int rc = parse_fields(L, n, close, depth + 1);
    if (rc != LD_OK) return rc;
    if (L->p >= L->end)
        return ld__err(L->e, LD_EFORMAT,
                       "%d:%d: '%c' opened here is not closed at the end of the file", line, col,
                       open);
    adv(L); /* the closing brace */
    return LD_OK;
}

static int parse_fields(lexer *L, ld_pt_node *m, char close, int depth)
{
    for (;;) {
        skip_ws(L);
        if (L->p >= L->end) return LD_OK; /* the caller decides whether that is an error */
        if (*L->p == close && close) return LD_OK;
        if (!is_ident_start((unsigned char)*L->p)) {
            if (*L->p == '}' || *L->p == '>')
                return fail(L, L->line, L->col, "a closing brace without an opening one");
            return fail(L, L->line, L->col, "a field name expected");
        }
        int line = L->line, col = L->col;
        const char *s = L->p;
        while (L->p < L->end && is_ident((unsigned char)*L->p))
            adv(L);
        size_t nl = (size_t)(L->p - s);
        skip_ws(L);
        int colon = 0;
        if (L->p < L->end && *L->p == ':') {
            colon = 1;
            adv(L);
            skip_ws(L);
        }
        if (L->p >= L->end)
            return ld__err(L->e, LD_EFORMAT,
                           "%d:%d: field '%.*s' has no value at the end of the file", line, col,
                           (int)(nl > 64 ? 64 : nl), s);
        int list = 0;
        if (colon && *L->p == '[') {
            list = 1;
            adv(L);
            skip_ws(L);
            if (L->p < L->end && *L->p == ']') { /* empty list */
                adv(L);
                goto sep;
            }
        }
        for (;;) {
            ld_pt_node *n = new_node(L, line, col);
            if (!n) return L->e ? L->e->code : LD_ENOMEM;
            n->name = malloc(nl + 1);
            if (!n->name) {
                free(n);
                return ld__err(L->e, LD_ENOMEM, "out of memory parsing the text");
            }
            memcpy(n->name, s, nl);
            n->name[nl] = 0;
            if (add_kid(L, m, n) != LD_OK) {
                ld__pt_free(n);
                return LD_ENOMEM;
            }
            int rc;
            if (L->p < L->end && (*L->p == '{' || *L->p == '<'))
                rc = parse_message_body(L, n, depth);
            else if (!colon)
                return fail(L, L->line, L->col, "':' or '{' expected after a field name");
            else
                rc = lex_value(L, n);
            if (rc != LD_OK) return rc;
            if (!list) break;
            skip_ws(L);
            if (L->p < L->end && *L->p == ',') {
                adv(L);
                skip_ws(L);
                continue;
            }
            if (L->p < L->end && *L->p == ']') {
                adv(L);
                break;
            }
            return fail(L, L->line, L->col, "',' or ']' expected in a list");
        }
    sep:
        skip_ws(L);
        if (L->p < L->end && (*L->p == ';' || *L->p == ',')) adv(L);
    }
}

int ld__pt_parse(const char *text, size_t len, ld_pt_node **root, ld_err *e)
{
    *root = NULL;
    if (len > LD_PT_MAX_INPUT)
        return ld__err(e, LD_ELIMIT, "%zu bytes of text: more than %zu MiB, not a net definition",
                       len, LD_PT_MAX_INPUT >> 20);
    lexer L = {text, text + len, 1, 1, 0, e};
    ld_pt_node *r = new_node(&L, 1, 1);
    if (!r) return e ? e->code : LD_ENOMEM;
    int rc = parse_fields(&L, r, 0, 0);
    if (rc == LD_OK && L.p < L.end)
        rc = fail(&L, L.line, L.col, "a closing brace without an opening one");
    if (rc != LD_OK) {
        ld__pt_free(r);
        return rc;
    }
    *root = r;
    return LD_OK;
}

void ld__pt_free(ld_pt_node *n)
{
    if (!n) return;
    /* Iterative over siblings, recursive over depth (bounded by LD_PT_MAX_DEPTH). */
    for (size_t i = 0; i < n->nkids; i++)
        ld__pt_free(n->kids[i]);
    free(n->kids);
    free(n->name);
    free(n->value);
    free(n);
}

const ld_pt_node *ld__pt_nth(const ld_pt_node *m, const char *name, size_t k)
{
    if (!m) return NULL;
    for (size_t i = 0; i < m->nkids; i++)
        if (strcmp(m->kids[i]->name, name) == 0 && k-- == 0) return m->kids[i];
    return NULL;
}

const ld_pt_node *ld__pt_get(const ld_pt_node *m, const char *name)
{
    return ld__pt_nth(m, name, 0);
}

size_t ld__pt_count(const ld_pt_node *m, const char *name)
{
    size_t n = 0;
    if (!m) return 0;
    for (size_t i = 0; i < m->nkids; i++)
        n += strcmp(m->kids[i]->name, name) == 0;
    return n;
}

int ld__pt_int(const ld_pt_node *f, int64_t lo, int64_t hi, int64_t *out, const char *what,
               ld_err *e)
{
    if (!f->value || f->is_string)
        return ld__err(e, LD_EFORMAT, "%d:%d: %s: a number expected", f->line, f->col, what);
    errno = 0;
    char *end = NULL;
    long long v = strtoll(f->value, &end, 0);
    if (end == f->value || *end || errno == ERANGE)
        return ld__err(e, LD_EFORMAT, "%d:%d: %s: '%.40s' is not an integer (or too large)",
                       f->line, f->col, what, f->value);
    if (v < lo || v > hi)
        return ld__err(e, LD_ELIMIT, "%d:%d: %s: %lld is out of range [%lld, %lld]", f->line,
                       f->col, what, v, (long long)lo, (long long)hi);
    *out = v;
    return LD_OK;
}

int ld__pt_get_int(const ld_pt_node *m, const char *name, int64_t def, int64_t lo, int64_t hi,
                   int64_t *out, ld_err *e)
{
    const ld_pt_node *f = ld__pt_get(m, name);
    if (!f) {
        *out = def;
        return LD_OK;
    }
    return ld__pt_int(f, lo, hi, out, name, e);
}

int ld__pt_get_double(const ld_pt_node *m, const char *name, double def, double *out, ld_err *e)
{
    const ld_pt_node *f = ld__pt_get(m, name);
    if (!f) {
        *out = def;
        return LD_OK;
    }
    char *end = NULL;
    if (!f->value || f->is_string || (*out = strtod(f->value, &end), end == f->value) ||
        (*end && !((*end == 'f' || *end == 'F') && !end[1])))
        return ld__err(e, LD_EFORMAT, "%d:%d: %s: a number expected", f->line, f->col, name);
    return LD_OK;
}

const char *ld__pt_get_str(const ld_pt_node *m, const char *name, const char *def)
{
    const ld_pt_node *f = ld__pt_get(m, name);
    if (!f) return def;
    return f->value;
}

int ld__pt_get_bool(const ld_pt_node *m, const char *name, int def, int *out, ld_err *e)
{
    const ld_pt_node *f = ld__pt_get(m, name);
    *out = def;
    if (!f) return LD_OK;
    const char *v = f->value;
    if (v && (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "t") || !strcmp(v, "1"))) {
        *out = 1;
        return LD_OK;
    }
    if (v && (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "f") || !strcmp(v, "0"))) {
        *out = 0;
        return LD_OK;
    }
    return ld__err(e, LD_EFORMAT, "%d:%d: %s: true or false expected", f->line, f->col, name);
}
