/*
 * VOC mode: a Pascal VOC folder (Annotations/<id>.xml, JPEGImages/, ImageSets/Main/<set>.txt) as a
 * detection source: one item per listed image with its boxes.
 *
 * Safety. Annotation files are untrusted XML. Each is read by us (at most 1 MiB) and handed
 * to libxml2 as memory, so the parser never opens a file or a URL itself; before parsing, a
 * document holding "<!DOCTYPE" or "<!ENTITY" is refused (VOC's files have neither, and a DTD
 * is where external entities (XXE) and entity bombs (billion laughs) live), and libxml2 runs
 * with XML_PARSE_NONET, as UTF-8 whatever the document declares, and without XML_PARSE_NOENT (no
 * substitution), XML_PARSE_DTDLOAD, XML_PARSE_DTDATTR, XML_PARSE_XINCLUDE or XML_PARSE_HUGE. After
 * parsing, an entity reference node anywhere is refused too (belt and braces: undeclared references
 * are errors already). libxml2's messages go to a per-context handler, never to stderr.
 *
 * Classes. VOC's 20 names in their standard order, id = index; a name outside them is a
 * class of its own, appended after the 20 in sorted order, so every box's label can only be
 * final once every file is read: items are collected (path and boxes) and added at the end.
 * VOC sets are small (VOC2012: 17k images, 40k boxes), so this costs little.
 */
#include "source/src_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef LD_HAVE_LIBXML2

int ld__source_open_voc(const char *dir, const char *list, unsigned flags, ld_source_warn_fn warn,
                        ld_source_tick_fn tick, void *user, ld_source **out, ld_err *e)
{
    (void)list, (void)flags, (void)warn, (void)tick, (void)user;
    *out = NULL;
    return ld__err(e, LD_ENOTSUP,
                   "%s: Pascal VOC input needs libdata built with libxml2 (LIBDATA_WITH_VOC=ON, "
                   "package libxml2-dev)",
                   dir);
}

#else

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#define MAX_XML (1u << 20)

static const char *const voc_classes[20] = {
    "aeroplane", "bicycle",     "bird",  "boat",        "bottle", "bus",      "car",
    "cat",       "chair",       "cow",   "diningtable", "dog",    "horse",    "motorbike",
    "person",    "pottedplant", "sheep", "sofa",        "train",  "tvmonitor"};

typedef struct pending {
    char *rel;    /* "JPEGImages/<filename>" */
    size_t first; /* its boxes in voc.boxes */
    uint32_t m;
} pending;

typedef struct voc {
    const char *dir;
    unsigned flags;
    ld_source_warn_fn warn;
    void *user;
    ld_err *e;
    pending *items;
    size_t n_items, cap_items;
    ld_box *boxes; /* labels: < 20 VOC's, else 20 + index in extra */
    size_t n_boxes, cap_boxes;
    char **extra; /* other class names, in the order found */
    size_t n_extra, cap_extra;
    ld_buf path, text, xml;
    /* the first error libxml2 reported for the current file */
    int xml_line;
    char xml_msg[256];
} voc;

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 64, bytes;
    if (!ld__mul_size(nc, size, &bytes)) return -1;
    void *q = realloc(*p, bytes);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* A bad file: a warning (the image skipped, LD_OK) or with LD_SRC_STRICT the error `code`. */
static int bad(voc *v, int code, const char *file, long line, const char *fmt, const char *arg)
{
    char what[512];
    snprintf(what, sizeof what, fmt, arg);
    if (v->flags & LD_SRC_STRICT) return ld__err(v->e, code, "%s:%ld: %s", file, line, what);
    ld__source_warnf(v->warn, v->user, "%s:%ld: %s; skipped", file, line, what);
    return LD_OK;
}

static void on_xml_error(void *user, xmlErrorPtr err)
{
    xmlParserCtxtPtr ctxt = user; /* libxml2 passes the context's userData: the context */
    voc *v = ctxt ? ctxt->_private : NULL;
    if (!v || !err || err->level < XML_ERR_ERROR || v->xml_msg[0]) return;
    v->xml_line = err->line;
    snprintf(v->xml_msg, sizeof v->xml_msg, "%s", err->message ? err->message : "XML error");
    const size_t n = strlen(v->xml_msg);
    if (n && v->xml_msg[n - 1] == '\n') v->xml_msg[n - 1] = '\0';
}

static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx, (void)msg;
}

/* The line of the first occurrence of `what` in the document, for messages. */
static long line_of(const ld_buf *b, const char *at)
{
    long line = 1;
    for (const uint8_t *p = b->p; p < (const uint8_t *)at; p++)
        line += *p == '\n';
    return line;
}

/* Whether the text of b holds `needle` (the document may hold NULs: memmem-like scan). */
static const char *find(const ld_buf *b, const char *needle)
{
    const size_t n = strlen(needle);
    for (size_t i = 0; i + n <= b->len; i++)
        if (b->p[i] == (uint8_t)needle[0] && memcmp(b->p + i, needle, n) == 0)
            return (const char *)b->p + i;
    return NULL;
}

/* The text content of element `el` (its text and CDATA children), trimmed, into v->text. */
static const char *text_of(voc *v, xmlNodePtr el)
{
    v->text.len = 0;
    for (xmlNodePtr t = el ? el->children : NULL; t; t = t->next)
        if ((t->type == XML_TEXT_NODE || t->type == XML_CDATA_SECTION_NODE) && t->content)
            if (ld__buf_append(&v->text, t->content, strlen((const char *)t->content)) < 0)
                return NULL;
    if (ld__buf_append(&v->text, "", 1) < 0) return NULL;
    char *p = (char *)v->text.p, *z = p + v->text.len - 1;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    while (z > p && (z[-1] == ' ' || z[-1] == '\t' || z[-1] == '\n' || z[-1] == '\r'))
        *--z = '\0';
    return p;
}

static xmlNodePtr child(xmlNodePtr el, const char *name)
{
    for (xmlNodePtr c = el ? el->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0) return c;
    return NULL;
}

static int has_entity_ref(xmlNodePtr n)
{
    for (; n; n = n->next) {
        if (n->type == XML_ENTITY_REF_NODE || n->type == XML_ENTITY_NODE ||
            n->type == XML_ENTITY_DECL || n->type == XML_DTD_NODE)
            return 1;
        if (n->type == XML_ELEMENT_NODE && has_entity_ref(n->children)) return 1;
    }
    return 0;
}

/* The label of a class name: VOC's index, else 20 + its index among the others (added). */
static int label_of(voc *v, const char *name, int32_t *label)
{
    for (int k = 0; k < 20; k++)
        if (strcmp(name, voc_classes[k]) == 0) return *label = k, 0;
    for (size_t k = 0; k < v->n_extra; k++)
        if (strcmp(name, v->extra[k]) == 0) return *label = (int32_t)(20 + k), 0;
    if (grow((void **)&v->extra, &v->cap_extra, v->n_extra, sizeof *v->extra) < 0) return -1;
    if (!(v->extra[v->n_extra] = strdup(name))) return -1;
    *label = (int32_t)(20 + v->n_extra++);
    return 0;
}

static int coord(const char *s, double *out)
{
    char *end;
    if (!s || !*s) return 0;
    *out = strtod(s, &end);
    return *end == '\0' && isfinite(*out) && fabs(*out) < 1e9;
}

/* One annotation file: its boxes appended to v->boxes, its item to v->items. A bad file is a
 * warning (LD_OK, nothing added) or an error; LD_ENOMEM. */
static int read_one(voc *v, const char *id, size_t id_len)
{
    int rc = LD_OK;
    FILE *f = NULL;
    xmlParserCtxtPtr ctxt = NULL;
    xmlDocPtr doc = NULL;
    const size_t boxes0 = v->n_boxes;
    int added = 0;
    ld_err *e = v->e;
    v->path.len = 0;
    LD_CHECK(e, ld__buf_printf(&v->path, "%s/Annotations/%.*s.xml", v->dir, (int)id_len, id) == 0,
             LD_ENOMEM, "out of memory");
    const char *file = (const char *)v->path.p;
    struct stat st;
    f = fopen(file, "rb");
    if (!f || fstat(fileno(f), &st) != 0) {
        rc = bad(v, LD_EIO, file, 0, "cannot open: %s", strerror(errno));
        goto fail;
    }
    if (st.st_size > MAX_XML) {
        rc = bad(v, LD_EFORMAT, file, 0, "larger than %s (not a VOC annotation)", "1 MiB");
        goto fail;
    }
    v->xml.len = 0;
    LD_CHECK(e, ld__buf_reserve(&v->xml, (size_t)st.st_size + 1) == 0, LD_ENOMEM, "out of memory");
    v->xml.len = fread(v->xml.p, 1, (size_t)st.st_size + 1, f);
    if (ferror(f) || v->xml.len > MAX_XML) {
        rc = bad(v, LD_EIO, file, 0, "%s", ferror(f) ? "read error" : "grew while read");
        goto fail;
    }
    const char *dtd = find(&v->xml, "<!DOCTYPE"), *ent = find(&v->xml, "<!ENTITY");
    if (dtd || ent) {
        rc = bad(v, LD_EFORMAT, file, line_of(&v->xml, dtd ? dtd : ent),
                 "refused: a %s (DTDs and entities are not read: XXE, entity bombs)",
                 dtd ? "DOCTYPE declaration" : "entity declaration");
        goto fail;
    }
    ctxt = xmlNewParserCtxt();
    LD_CHECK(e, ctxt, LD_ENOMEM, "out of memory");
    ctxt->_private = v;
    ctxt->sax->serror = on_xml_error; /* to us, not stderr */
    ctxt->sax->warning = NULL;
    ctxt->sax->error = NULL;
    v->xml_msg[0] = '\0', v->xml_line = 0;
    /* Errors raised without a context (encoding errors) go to libxml2's generic handler, which
     * prints to stderr: silenced around the parse, and the caller's handler put back (this
     * state is per thread in libxml2). */
    xmlGenericErrorFunc old = xmlGenericError;
    void *old_ctx = xmlGenericErrorContext;
    xmlSetGenericErrorFunc(NULL, quiet);
    /* Read as UTF-8 whatever the document declares (XML_PARSE_IGNORE_ENC): the byte scan above
     * must see what the parser sees, and UTF-16, EBCDIC or UTF-7 could spell "<!DOCTYPE" in
     * bytes it would not find. VOC's files are ASCII. */
    doc = xmlCtxtReadMemory(ctxt, (const char *)v->xml.p, (int)v->xml.len, file, "UTF-8",
                            XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_IGNORE_ENC);
    xmlSetGenericErrorFunc(old_ctx, old);
    if (!doc || !ctxt->wellFormed) {
        rc = bad(v, LD_EFORMAT, file, v->xml_line, "malformed XML: %s",
                 v->xml_msg[0] ? v->xml_msg : "not well-formed");
        goto fail;
    }
    xmlNodePtr root = xmlDocGetRootElement(doc);
    if (doc->intSubset || doc->extSubset || has_entity_ref(doc->children)) {
        rc = bad(v, LD_EFORMAT, file, 1, "refused: %s", "a DTD or an entity reference");
        goto fail;
    }
    if (!root || strcmp((const char *)root->name, "annotation") != 0) {
        rc = bad(v, LD_EFORMAT, file, root ? xmlGetLineNo(root) : 1, "%s",
                 "not a VOC annotation (the root element is not <annotation>)");
        goto fail;
    }
    for (xmlNodePtr o = root->children; o; o = o->next) {
        if (o->type != XML_ELEMENT_NODE || strcmp((const char *)o->name, "object") != 0) continue;
        const long line = xmlGetLineNo(o);
        const char *name = text_of(v, child(o, "name"));
        LD_CHECK(e, name, LD_ENOMEM, "out of memory");
        if (!*name) {
            rc = bad(v, LD_EFORMAT, file, line, "%s", "an <object> without a <name>");
            goto fail;
        }
        ld_box b = {0};
        LD_CHECK(e, label_of(v, name, &b.label) == 0, LD_ENOMEM, "out of memory");
        const char *dif = text_of(v, child(o, "difficult"));
        LD_CHECK(e, dif, LD_ENOMEM, "out of memory");
        if (*dif && strcmp(dif, "0") != 0) b.flags |= LD_BOX_DIFFICULT;
        xmlNodePtr bb = child(o, "bndbox");
        static const char *const tag[4] = {"xmin", "ymin", "xmax", "ymax"};
        double c[4];
        for (int k = 0; k < 4; k++) {
            const char *t = text_of(v, child(bb, tag[k]));
            LD_CHECK(e, t, LD_ENOMEM, "out of memory");
            if (!bb || !coord(t, &c[k])) {
                rc = bad(v, LD_EFORMAT, file, bb ? xmlGetLineNo(bb) : line,
                         "an <object> whose <bndbox> has no number <%s>", tag[k]);
                goto fail;
            }
        }
        if (c[2] < c[0] || c[3] < c[1]) {
            rc = bad(v, LD_EFORMAT, file, xmlGetLineNo(bb), "%s",
                     "a <bndbox> with xmax < xmin or ymax < ymin");
            goto fail;
        }
        /* VOC pixels are 1-based and inclusive: pixel xmin is our 0-based column xmin - 1,
         * and the box ends after column xmax - 1, at xmax. */
        b.x1 = (float)(c[0] - 1), b.y1 = (float)(c[1] - 1);
        b.x2 = (float)c[2], b.y2 = (float)c[3];
        LD_CHECK(e, grow((void **)&v->boxes, &v->cap_boxes, v->n_boxes, sizeof *v->boxes) == 0,
                 LD_ENOMEM, "out of memory");
        v->boxes[v->n_boxes++] = b;
    }
    const char *fn = text_of(v, child(root, "filename"));
    LD_CHECK(e, fn, LD_ENOMEM, "out of memory");
    ld_buf rel = {0};
    const int r = *fn ? ld__buf_printf(&rel, "JPEGImages/%s", fn)
                      : ld__buf_printf(&rel, "JPEGImages/%.*s.jpg", (int)id_len, id);
    if (r != 0) {
        ld__buf_free(&rel);
        LD_CHECK(e, 0, LD_ENOMEM, "out of memory");
    }
    if (strchr(fn, '/') || strcmp(fn, "..") == 0 || strcmp(fn, ".") == 0) {
        ld__buf_free(&rel);
        rc = bad(v, LD_EFORMAT, file, xmlGetLineNo(child(root, "filename")),
                 "<filename> \"%.100s\" is not a file name", fn);
        goto fail;
    }
    if (grow((void **)&v->items, &v->cap_items, v->n_items, sizeof *v->items) < 0) {
        ld__buf_free(&rel);
        LD_CHECK(e, 0, LD_ENOMEM, "out of memory");
    }
    v->items[v->n_items++] = (pending){(char *)rel.p, boxes0, (uint32_t)(v->n_boxes - boxes0)};
    added = 1;
fail:
    if (!added) v->n_boxes = boxes0; /* a skipped file keeps no boxes */
    if (doc) xmlFreeDoc(doc);
    if (ctxt) xmlFreeParserCtxt(ctxt);
    if (f) fclose(f);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every Annotations/<id>.xml, ids sorted. */
static int list_all(voc *v, char ***ids, size_t *n)
{
    int rc = LD_OK;
    size_t cap = 0;
    v->path.len = 0;
    LD_CHECK(v->e, ld__buf_printf(&v->path, "%s/Annotations", v->dir) == 0, LD_ENOMEM,
             "out of memory");
    DIR *d = opendir((const char *)v->path.p);
    LD_CHECK(v->e, d, LD_EIO, "%s: cannot read: %s", (const char *)v->path.p, strerror(errno));
    for (struct dirent *de; (de = readdir(d));) {
        const size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len <= 4 || strcmp(de->d_name + len - 4, ".xml") != 0) continue;
        if (grow((void **)ids, &cap, *n, sizeof **ids) < 0 ||
            !((*ids)[*n] = ld__strndup(de->d_name, len - 4))) {
            closedir(d);
            LD_CHECK(v->e, 0, LD_ENOMEM, "out of memory");
        }
        (*n)++;
    }
    closedir(d);
    if (*n) qsort(*ids, *n, sizeof **ids, cmp_str);
fail:
    return rc;
}

/* The ids of a list file: the first word of each line. A bad id names list:line. */
static int list_file(voc *v, const char *list, char ***ids, size_t *n)
{
    int rc = LD_OK;
    size_t cap = 0, line_cap = 0;
    char *line = NULL;
    FILE *f = fopen(list, "rb");
    if (!f && errno == ENOENT && list[0] != '/') { /* relative to the VOC folder */
        v->path.len = 0;
        LD_CHECK(v->e, ld__buf_printf(&v->path, "%s/%s", v->dir, list) == 0, LD_ENOMEM,
                 "out of memory");
        list = (const char *)v->path.p;
        f = fopen(list, "rb");
    }
    LD_CHECK(v->e, f, LD_EIO, "%s: cannot open list file: %s", list, strerror(errno));
    for (unsigned long lineno = 1;; lineno++) {
        ssize_t got = getline(&line, &line_cap, f);
        if (got < 0) break;
        size_t b = 0, z;
        while (b < (size_t)got && (line[b] == ' ' || line[b] == '\t'))
            b++;
        for (z = b; z < (size_t)got && line[z] != ' ' && line[z] != '\t' && line[z] != '\n' &&
                    line[z] != '\r';
             z++)
            ;
        if (z == b) continue;
        line[z] = '\0'; /* (z < got, or the NUL getline wrote) */
        if (memchr(line + b, '/', z - b) || memchr(line + b, '\0', z - b) || line[b] == '.') {
            LD_TRY(
                bad(v, LD_EFORMAT, list, (long)lineno, "\"%.100s\" is not an image id", line + b));
            continue;
        }
        if (grow((void **)ids, &cap, *n, sizeof **ids) < 0 ||
            !((*ids)[*n] = ld__strndup(line + b, z - b)))
            LD_CHECK(v->e, 0, LD_ENOMEM, "out of memory");
        (*n)++;
    }
    LD_CHECK(v->e, !ferror(f), LD_EIO, "%s: read error", list);
fail:
    free(line);
    if (f) fclose(f);
    return rc;
}

int ld__source_open_voc(const char *dir, const char *list, unsigned flags, ld_source_warn_fn warn,
                        ld_source_tick_fn tick, void *user, ld_source **out, ld_err *e)
{
    int rc = LD_OK;
    ld_source *s = NULL;
    char **ids = NULL;
    size_t n_ids = 0;
    int32_t *remap = NULL;
    voc v = {.dir = dir, .flags = flags, .warn = warn, .user = user, .e = e};
    *out = NULL;
    LD_CHECK(e, dir && *dir, LD_EINVAL, "no VOC folder given");
    xmlInitParser();
    LD_TRY(list ? list_file(&v, list, &ids, &n_ids) : list_all(&v, &ids, &n_ids));
    for (size_t i = 0; i < n_ids; i++) {
        LD_CHECK(e, (i + 1) % 4096 || !tick || !tick(user, v.n_items), LD_ECANCELED,
                 "%s: canceled while reading annotations", dir);
        LD_TRY(read_one(&v, ids[i], strlen(ids[i])));
    }
    /* the other class names, sorted, after VOC's 20 */
    remap = malloc((v.n_extra + 1) * sizeof *remap);
    LD_CHECK(e, remap && ld__source_new(&s) == 0 && ld__source_set_root(s, dir) == 0, LD_ENOMEM,
             "out of memory");
    for (int k = 0; k < 20; k++)
        LD_CHECK(e, ld__source_add_box_class(s, voc_classes[k], strlen(voc_classes[k]), k) == 0,
                 LD_ENOMEM, "out of memory");
    char **sorted = malloc((v.n_extra + 1) * sizeof *sorted);
    LD_CHECK(e, sorted, LD_ENOMEM, "out of memory");
    if (v.n_extra) memcpy(sorted, v.extra, v.n_extra * sizeof *sorted);
    qsort(sorted, v.n_extra, sizeof *sorted, cmp_str);
    for (size_t k = 0; k < v.n_extra; k++) {
        for (size_t j = 0; j < v.n_extra; j++)
            if (v.extra[j] == sorted[k]) remap[j] = (int32_t)(20 + k);
        if (ld__source_add_box_class(s, sorted[k], strlen(sorted[k]), (int64_t)(20 + k)) != 0) {
            free(sorted);
            LD_CHECK(e, 0, LD_ENOMEM, "out of memory");
        }
    }
    free(sorted);
    for (size_t b = 0; b < v.n_boxes; b++)
        if (v.boxes[b].label >= 20) v.boxes[b].label = remap[v.boxes[b].label - 20];
    for (size_t i = 0; i < v.n_items; i++) {
        const pending *p = &v.items[i];
        LD_CHECK(e,
                 ld__source_add_item_boxes(s, p->rel, strlen(p->rel),
                                           p->m ? v.boxes + p->first : NULL, p->m) == 0,
                 LD_ENOMEM, "out of memory");
    }
    s->boxes = 1;
    *out = s;
    s = NULL;
fail:
    ld__source_free(s);
    for (size_t i = 0; i < n_ids; i++)
        free(ids[i]);
    free(ids);
    for (size_t i = 0; i < v.n_items; i++)
        free(v.items[i].rel);
    free(v.items);
    free(v.boxes);
    for (size_t k = 0; k < v.n_extra; k++)
        free(v.extra[k]);
    free(v.extra);
    free(remap);
    ld__buf_free(&v.path);
    ld__buf_free(&v.text);
    ld__buf_free(&v.xml);
    return rc;
}

#endif /* LD_HAVE_LIBXML2 */
