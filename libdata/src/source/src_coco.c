/*
 * COCO mode: a COCO "instances" JSON file (images[], annotations[], categories[]) as a
 * detection source: one item per image with its boxes.
 *
 * Streaming. COCO train2017's instances file is ~450 MB, most of it segmentation polygons and
 * RLE counts; a DOM parser would hold gigabytes. The file is fed to yajl's event parser in
 * 64 KiB pieces and only what a box needs is kept, in compact arrays: per image its id, name
 * and size; per annotation its image id, category id, box, crowd flag and where it was (line
 * and byte, for messages); per category its id and name. Memory is those records (48
 * bytes an annotation, 40 an image plus its name; 24 a box once added) and one piece of the file,
 * whatever the file's size. Numbers arrive as text (yajl's number callback) and only the fields we
 * keep are converted, so skipping a polygon costs the lexer and nothing else.
 *
 * Top-level keys may come in any order (annotations before images), so joining waits for the
 * end: annotations are sorted by (image id, position in the file), categories by id (box class
 * index = that rank, the class id = category_id), and images by file_name, which is the item
 * order (deterministic whatever the file's order). An image keeps its annotations in file
 * order; an image without any is kept with M = 0.
 *
 * Bad records are warnings naming file:line (yajl reports byte offsets: lines are counted as
 * the pieces are fed; the official files are one line, so the byte is given as well) and are
 * skipped; with LD_SRC_STRICT each is an LD_EFORMAT error. Malformed JSON is always an error.
 * File names that are absolute or hold a ".." component are refused like a bad record: a
 * label file must not send the converter outside the image root.
 */
#include "source/src_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LD_HAVE_YAJL

int ld__source_open_coco(const char *json, const char *root, unsigned flags, ld_source_warn_fn warn,
                         ld_source_tick_fn tick, void *user, ld_source **out, ld_err *e)
{
    (void)root, (void)flags, (void)warn, (void)tick, (void)user;
    *out = NULL;
    return ld__err(e, LD_ENOTSUP,
                   "%s: COCO input needs libdata built with yajl (LIBDATA_WITH_COCO=ON, "
                   "package libyajl-dev)",
                   json);
}

#else

#include <yajl/yajl_parse.h>

#define PIECE (64u << 10)

enum { SEC_NONE = 0, SEC_IMAGES, SEC_ANNS, SEC_CATS };
enum { F_NONE = 0, F_ID, F_FILE, F_W, F_H, F_IMAGE_ID, F_BBOX, F_CAT_ID, F_CROWD, F_NAME };

typedef struct image {
    int64_t id;
    size_t name;    /* offset in coco.names */
    const char *nm; /* the name, once the parse is over (names no longer move) */
    uint32_t name_len;
    uint32_t w, h;
    uint32_t line;
} image;

typedef struct ann {
    int64_t image_id, cat_id;
    float b[4]; /* x1, y1, x2, y2 */
    uint32_t flags;
    uint32_t line;
    uint64_t byte;
} ann;

typedef struct cat {
    int64_t id;
    size_t name; /* offset in coco.names */
    uint32_t name_len;
    uint32_t line;
} cat;

typedef struct coco {
    const char *file;
    unsigned flags;
    ld_source_warn_fn warn;
    ld_source_tick_fn tick;
    void *user;
    ld_err *e;
    int rc; /* set when a callback stops the parse */
    yajl_handle h;
    /* where the parser is: lines before the current piece, and newlines counted in it */
    const unsigned char *piece;
    uint64_t piece_byte;
    unsigned long line;
    size_t line_pos;
    /* the structure: depth of open containers, the section (top-level key) we are in, the
     * key at element level, and the element being read */
    int depth, section, field, elem_ok;
    uint8_t kinds[4]; /* container kinds (1 map, 2 array) at depths 1..4 */
    int has[F_NAME + 1];
    image im;
    ann an;
    cat ca;
    int bbox_n, bbox_bad;
    double bbox[4];
    ld_buf names; /* file names and category names, back to back */
    image *images;
    ann *anns;
    cat *cats;
    size_t n_images, n_anns, n_cats, cap_images, cap_anns, cap_cats;
    size_t elems;
    int saw_images;
} coco;

/* The line of the parser's position (the end of the token being reported): newlines are
 * counted from where the last count stopped, so the whole file is scanned once. */
static unsigned long where(coco *c, uint64_t *byte)
{
    const size_t off = yajl_get_bytes_consumed(c->h);
    for (; c->line_pos < off; c->line_pos++)
        c->line += c->piece[c->line_pos] == '\n';
    if (byte) *byte = c->piece_byte + off;
    return c->line;
}

/* A bad record: a warning, or with LD_SRC_STRICT the error that stops the parse (returns 0,
 * which also cancels yajl). */
static int bad(coco *c, unsigned long line, uint64_t byte, const char *what)
{
    char at[40] = "";
    if (byte) snprintf(at, sizeof at, " (byte %llu)", (unsigned long long)byte);
    if (c->flags & LD_SRC_STRICT) {
        c->rc = ld__err(c->e, LD_EFORMAT, "%s:%lu: %s%s", c->file, line, what, at);
        return 0;
    }
    ld__source_warnf(c->warn, c->user, "%s:%lu: %s%s; skipped", c->file, line, what, at);
    return 1;
}

static int oom(coco *c)
{
    c->rc = ld__err(c->e, LD_ENOMEM, "%s: out of memory", c->file);
    return 0;
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 1024, bytes;
    if (!ld__mul_size(nc, size, &bytes)) return -1;
    void *q = realloc(*p, bytes);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* Number text to an int64 (an integer, or a float with no fraction as some writers emit) or a
 * double; 0 when it is neither. */
static int num_double(const char *s, size_t n, double *out)
{
    char tmp[64];
    if (n == 0 || n >= sizeof tmp) return 0;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *end;
    *out = strtod(tmp, &end);
    return end == tmp + n && isfinite(*out);
}

static int num_int(const char *s, size_t n, int64_t *out)
{
    double d;
    char tmp[24], *end;
    if (n && n < sizeof tmp && !memchr(s, '.', n) && !memchr(s, 'e', n) && !memchr(s, 'E', n)) {
        memcpy(tmp, s, n); /* digits only: exact, beyond double's 2^53 */
        tmp[n] = '\0';
        errno = 0;
        const long long v = strtoll(tmp, &end, 10);
        if (end != tmp + n || errno) return 0;
        *out = (int64_t)v;
        return 1;
    }
    if (!num_double(s, n, &d) || d != floor(d) || d < -9.0e18 || d > 9.0e18) return 0;
    *out = (int64_t)d;
    return 1;
}

static int tick_elem(coco *c)
{
    if (++c->elems % 4096 == 0 && c->tick && c->tick(c->user, c->n_images)) {
        c->rc = ld__err(c->e, LD_ECANCELED, "%s: canceled while reading", c->file);
        return 0;
    }
    return 1;
}

/* ---- yajl callbacks ---------------------------------------------------------------------- */

static int on_number(void *ctx, const char *s, size_t n)
{
    coco *c = ctx;
    if (c->depth == 4 && c->field == F_BBOX && c->kinds[3] == 2) {
        double d;
        if (c->bbox_n < 4 && num_double(s, n, &d))
            c->bbox[c->bbox_n] = d;
        else
            c->bbox_bad = 1;
        c->bbox_n++;
        return 1;
    }
    if (c->depth != 3 || !c->elem_ok || c->field == F_NONE) return 1;
    int64_t v;
    double d;
    int ok = 1;
    switch (c->field) {
    case F_ID:
        if ((ok = num_int(s, n, &v))) c->section == SEC_CATS ? (c->ca.id = v) : (c->im.id = v);
        break;
    case F_W:
    case F_H:
        ok = num_double(s, n, &d) && d >= 0 && d < 4294967296.0;
        if (ok) *(c->field == F_W ? &c->im.w : &c->im.h) = (uint32_t)d;
        break;
    case F_IMAGE_ID:
        if ((ok = num_int(s, n, &v))) c->an.image_id = v;
        break;
    case F_CAT_ID:
        if ((ok = num_int(s, n, &v))) c->an.cat_id = v;
        break;
    case F_CROWD:
        if ((ok = num_int(s, n, &v)) && v) c->an.flags |= LD_BOX_CROWD;
        break;
    default: ok = 0;
    }
    c->has[c->field] = ok ? 1 : -1;
    return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n)
{
    coco *c = ctx;
    if (c->depth == 4 && c->field == F_BBOX) c->bbox_bad = 1, c->bbox_n++;
    if (c->depth != 3 || !c->elem_ok) return 1;
    if (c->field == F_FILE || (c->field == F_NAME && c->section == SEC_CATS)) {
        const size_t at = c->names.len;
        if (n > 4096 || memchr(s, '\0', n)) { /* not a name we can use */
            c->has[c->field] = -1;
            return 1;
        }
        if (ld__buf_append(&c->names, s, n) < 0) return oom(c);
        if (c->field == F_FILE) {
            c->im.name = at, c->im.name_len = (uint32_t)n;
        } else {
            c->ca.name = at, c->ca.name_len = (uint32_t)n;
        }
        c->has[c->field] = 1;
    } else if (c->field != F_NONE) {
        c->has[c->field] = -1; /* a string where a number belongs */
    }
    return 1;
}

static int on_other(void *ctx)
{
    coco *c = ctx;
    if (c->depth == 4 && c->field == F_BBOX) c->bbox_bad = 1, c->bbox_n++;
    if (c->depth == 3 && c->elem_ok && c->field != F_NONE) c->has[c->field] = -1;
    return 1;
}
static int on_bool(void *ctx, int b)
{
    coco *c = ctx;
    if (c->depth == 3 && c->elem_ok && c->field == F_CROWD) { /* iscrowd: true */
        if (b) c->an.flags |= LD_BOX_CROWD;
        c->has[F_CROWD] = 1;
        return 1;
    }
    return on_other(ctx);
}

static int on_key(void *ctx, const unsigned char *k, size_t n)
{
    coco *c = ctx;
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)
    if (c->depth == 1) {
        c->section = IS("images")        ? SEC_IMAGES
                     : IS("annotations") ? SEC_ANNS
                     : IS("categories")  ? SEC_CATS
                                         : SEC_NONE;
    } else if (c->depth == 3) {
        int f = F_NONE;
        if (c->section == SEC_IMAGES)
            f = IS("id")          ? F_ID
                : IS("file_name") ? F_FILE
                : IS("width")     ? F_W
                : IS("height")    ? F_H
                                  : F_NONE;
        else if (c->section == SEC_ANNS)
            f = IS("image_id")      ? F_IMAGE_ID
                : IS("bbox")        ? F_BBOX
                : IS("category_id") ? F_CAT_ID
                : IS("iscrowd")     ? F_CROWD
                                    : F_NONE;
        else if (c->section == SEC_CATS)
            f = IS("id") ? F_ID : IS("name") ? F_NAME : F_NONE;
        c->field = f;
    }
#undef IS
    return 1;
}

static int start(coco *c, int kind)
{
    if (c->depth < 4) c->kinds[c->depth] = (uint8_t)kind;
    c->depth++;
    if (c->depth == 1 && kind != 1) {
        c->rc = ld__err(c->e, LD_EFORMAT,
                        "%s:%lu: not a COCO instances file (the top level is "
                        "not an object)",
                        c->file, where(c, NULL));
        return 0;
    }
    if (c->depth == 2 && c->section == SEC_IMAGES) c->saw_images = 1;
    if (c->depth == 3) { /* an element of images[], annotations[] or categories[] */
        c->elem_ok = kind == 1 && c->kinds[1] == 2 && c->section != SEC_NONE;
        c->field = F_NONE;
        memset(c->has, 0, sizeof c->has);
        memset(&c->im, 0, sizeof c->im);
        memset(&c->an, 0, sizeof c->an);
        memset(&c->ca, 0, sizeof c->ca);
    }
    if (c->depth == 4 && c->field == F_BBOX) {
        c->bbox_n = 0, c->bbox_bad = kind != 2;
        c->has[F_BBOX] = 1;
    }
    return 1;
}

/* The end of an element: check it and keep it. */
static int finish(coco *c)
{
    uint64_t byte;
    const unsigned long line = where(c, &byte);
    if (c->section == SEC_IMAGES) {
        if (c->has[F_ID] != 1 || c->has[F_FILE] != 1)
            return bad(c, line, byte, "an image without an integer \"id\" and a \"file_name\"");
        const char *nm = (const char *)c->names.p + c->im.name;
        int unsafe = c->im.name_len == 0 || nm[0] == '/';
        for (uint32_t i = 0; i < c->im.name_len && !unsafe; i++) /* ".." components */
            unsafe = (i == 0 || nm[i - 1] == '/') && nm[i] == '.' && i + 1 < c->im.name_len &&
                     nm[i + 1] == '.' && (i + 2 == c->im.name_len || nm[i + 2] == '/');
        if (unsafe)
            return bad(c, line, byte, "an image file_name that is empty, absolute or has '..'");
        if (grow((void **)&c->images, &c->cap_images, c->n_images, sizeof *c->images) < 0)
            return oom(c);
        c->im.line = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
        c->images[c->n_images++] = c->im;
    } else if (c->section == SEC_ANNS) {
        if (c->has[F_IMAGE_ID] != 1 || c->has[F_CAT_ID] != 1)
            return bad(c, line, byte,
                       "an annotation without an integer \"image_id\" and \"category_id\"");
        if (c->has[F_BBOX] != 1 || c->bbox_bad || c->bbox_n != 4)
            return bad(c, line, byte, "an annotation whose bbox is not 4 finite numbers");
        const double *b = c->bbox;
        if (b[2] < 0 || b[3] < 0)
            return bad(c, line, byte, "an annotation whose bbox has a negative width or height");
        const double x2 = b[0] + b[2], y2 = b[1] + b[3];
        if (!isfinite((float)b[0]) || !isfinite((float)b[1]) || !isfinite((float)x2) ||
            !isfinite((float)y2))
            return bad(c, line, byte, "an annotation whose bbox does not fit float32");
        c->an.b[0] = (float)b[0], c->an.b[1] = (float)b[1];
        c->an.b[2] = (float)x2, c->an.b[3] = (float)y2;
        c->an.line = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
        c->an.byte = byte;
        if (grow((void **)&c->anns, &c->cap_anns, c->n_anns, sizeof *c->anns) < 0) return oom(c);
        c->anns[c->n_anns++] = c->an;
    } else {
        if (c->has[F_ID] != 1 || c->has[F_NAME] != 1)
            return bad(c, line, byte, "a category without an integer \"id\" and a \"name\"");
        c->ca.line = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
        if (grow((void **)&c->cats, &c->cap_cats, c->n_cats, sizeof *c->cats) < 0) return oom(c);
        c->cats[c->n_cats++] = c->ca;
    }
    return tick_elem(c);
}

static int end(coco *c)
{
    int ok = 1;
    if (c->depth == 3 && c->elem_ok) {
        ok = finish(c);
        c->elem_ok = 0;
    }
    if (c->depth == 4) c->field = F_NONE; /* a key's container value ended */
    if (c->depth == 2) c->section = SEC_NONE;
    c->depth--;
    return ok;
}

static int on_start_map(void *ctx)
{
    return start(ctx, 1);
}
static int on_start_array(void *ctx)
{
    return start(ctx, 2);
}
static int on_end(void *ctx)
{
    return end(ctx);
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_other,
    .yajl_boolean = on_bool,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

/* ---- joining ----------------------------------------------------------------------------- */

static int cmp_ann(const void *a, const void *b)
{
    const ann *x = a, *y = b;
    if (x->image_id != y->image_id) return x->image_id < y->image_id ? -1 : 1;
    return x->byte < y->byte ? -1 : x->byte > y->byte;
}
static int cmp_cat_id(const void *a, const void *b)
{
    const cat *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}
/* By id, then file order (names are appended as the file goes). */
static int cmp_cat(const void *a, const void *b)
{
    const cat *x = a, *y = b;
    const int d = cmp_cat_id(a, b);
    return d ? d : x->name < y->name ? -1 : x->name > y->name;
}
static int cmp_image_id(const void *a, const void *b)
{
    const image *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}
/* By file name (as strcmp: the names hold no NUL), then id. */
static int cmp_image_name(const void *a, const void *b)
{
    const image *x = a, *y = b;
    const int d = memcmp(x->nm, y->nm, x->name_len < y->name_len ? x->name_len : y->name_len);
    if (d) return d;
    if (x->name_len != y->name_len) return x->name_len < y->name_len ? -1 : 1;
    return cmp_image_id(a, b);
}

/* Index of the first annotation of image `id` in the sorted annotations (n when none). */
static size_t first_ann(const coco *c, int64_t id)
{
    size_t lo = 0, hi = c->n_anns;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (c->anns[mid].image_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static long find_cat(const coco *c, int64_t id)
{
    const cat key = {.id = id};
    const cat *f = c->n_cats ? bsearch(&key, c->cats, c->n_cats, sizeof key, cmp_cat_id) : NULL;
    return f ? (long)(f - c->cats) : -1;
}

static int check_rec(coco *c, unsigned long line, uint64_t byte, const char *what)
{
    if (bad(c, line, byte, what)) return LD_OK;
    return c->rc;
}

/* Sort, check ids, and add the items. Images and annotations are sorted in place. */
static int join(coco *c, ld_source *s)
{
    int rc = LD_OK;
    ld_box *boxes = NULL;
    size_t cap_boxes = 0;
    char msg[160];
    if (c->n_cats) qsort(c->cats, c->n_cats, sizeof *c->cats, cmp_cat);
    size_t kept = 0; /* one pass: a category id given twice keeps its first */
    for (size_t k = 0; k < c->n_cats; k++) {
        if (kept && c->cats[k].id == c->cats[kept - 1].id) {
            snprintf(msg, sizeof msg, "category id %lld given twice (the first is kept)",
                     (long long)c->cats[k].id);
            LD_TRY(check_rec(c, c->cats[k].line, 0, msg));
            continue;
        }
        c->cats[kept++] = c->cats[k];
    }
    c->n_cats = kept;
    for (size_t k = 0; k < c->n_cats; k++)
        LD_CHECK(c->e,
                 ld__source_add_box_class(s, (const char *)c->names.p + c->cats[k].name,
                                          c->cats[k].name_len, c->cats[k].id) == LD_OK,
                 LD_ENOMEM, "%s: out of memory", c->file);
    if (c->n_anns) qsort(c->anns, c->n_anns, sizeof *c->anns, cmp_ann);
    if (c->n_images) qsort(c->images, c->n_images, sizeof *c->images, cmp_image_id);
    /* annotations naming no image (walk both sorted lists), or an unknown category */
    for (size_t a = 0, i = 0; a < c->n_anns; a++) {
        while (i < c->n_images && c->images[i].id < c->anns[a].image_id)
            i++;
        const int known = i < c->n_images && c->images[i].id == c->anns[a].image_id;
        if (!known || find_cat(c, c->anns[a].cat_id) < 0) {
            snprintf(msg, sizeof msg, "an annotation names %s %lld, which is not in %s",
                     known ? "category_id" : "image_id",
                     (long long)(known ? c->anns[a].cat_id : c->anns[a].image_id),
                     known ? "categories[]" : "images[]");
            LD_TRY(check_rec(c, c->anns[a].line, c->anns[a].byte, msg));
            c->anns[a].flags |= 0x80000000u; /* dropped */
        }
    }
    for (size_t i = 1; i < c->n_images; i++)
        if (c->images[i].id == c->images[i - 1].id) {
            snprintf(msg, sizeof msg, "image id %lld given twice (its annotations go to each)",
                     (long long)c->images[i].id);
            LD_TRY(check_rec(c, c->images[i].line, 0, msg));
        }
    /* items in file_name order */
    for (size_t i = 0; i < c->n_images; i++)
        c->images[i].nm = (const char *)c->names.p + c->images[i].name;
    if (c->n_images) qsort(c->images, c->n_images, sizeof *c->images, cmp_image_name);
    for (size_t i = 0; i < c->n_images; i++) {
        LD_CHECK(c->e, (i + 1) % 4096 || !c->tick || !c->tick(c->user, i), LD_ECANCELED,
                 "%s: canceled while listing", c->file);
        const image *im = &c->images[i];
        uint32_t m = 0;
        for (size_t a = first_ann(c, im->id); a < c->n_anns && c->anns[a].image_id == im->id; a++) {
            const ann *an = &c->anns[a];
            if (an->flags & 0x80000000u) continue;
            LD_CHECK(c->e, grow((void **)&boxes, &cap_boxes, m, sizeof *boxes) == 0, LD_ENOMEM,
                     "%s: out of memory", c->file);
            boxes[m++] =
                (ld_box){an->b[0], an->b[1], an->b[2], an->b[3], (int32_t)find_cat(c, an->cat_id),
                         an->flags};
        }
        LD_CHECK(c->e, ld__source_add_item_boxes(s, im->nm, im->name_len, boxes, m) == LD_OK,
                 LD_ENOMEM, "%s: out of memory", c->file);
    }
    s->boxes = 1; /* even with no images */
fail:
    free(boxes);
    return rc;
}

int ld__source_open_coco(const char *json, const char *root, unsigned flags, ld_source_warn_fn warn,
                         ld_source_tick_fn tick, void *user, ld_source **out, ld_err *e)
{
    int rc = LD_OK;
    ld_source *s = NULL;
    FILE *f = NULL;
    unsigned char *piece = NULL;
    coco c = {
        .file = json, .flags = flags, .warn = warn, .tick = tick, .user = user, .e = e, .line = 1};
    *out = NULL;
    LD_CHECK(e, json && *json, LD_EINVAL, "no COCO file given");
    f = fopen(json, "rb");
    LD_CHECK(e, f, LD_EIO, "%s: cannot open: %s", json, strerror(errno));
    piece = malloc(PIECE);
    c.h = yajl_alloc(&callbacks, NULL, &c);
    /* (names.p is never NULL, so that an empty name points somewhere) */
    LD_CHECK(e, piece && c.h && ld__buf_reserve(&c.names, 4096) == 0, LD_ENOMEM,
             "%s: out of memory", json);
    for (;;) {
        const size_t got = fread(piece, 1, PIECE, f);
        LD_CHECK(e, got > 0 || !ferror(f), LD_EIO, "%s: read error: %s", json, strerror(errno));
        c.piece = piece, c.line_pos = 0;
        const yajl_status st = got ? yajl_parse(c.h, piece, got) : yajl_complete_parse(c.h);
        if (st == yajl_status_client_canceled) {
            rc = c.rc;
            goto fail;
        }
        if (st != yajl_status_ok) {
            uint64_t byte;
            const unsigned long line = where(&c, &byte);
            unsigned char *m = yajl_get_error(c.h, 0, piece, got);
            char *nl = m ? strchr((char *)m, '\n') : NULL;
            if (nl) *nl = '\0';
            rc = ld__err(e, LD_EFORMAT, "%s:%lu: malformed JSON (byte %llu): %s", json, line,
                         (unsigned long long)byte, m ? (const char *)m : "parse error");
            if (m) yajl_free_error(c.h, m);
            goto fail;
        }
        if (!got) break;
        where(&c, NULL); /* count the rest of the piece's lines */
        for (size_t k = c.line_pos; k < got; k++)
            c.line += piece[k] == '\n';
        c.piece_byte += got;
    }
    LD_CHECK(e, c.saw_images, LD_EFORMAT,
             "%s: not a COCO instances file (no \"images\" array at the top level)", json);
    LD_CHECK(e, ld__source_new(&s) == 0 && ld__source_set_root(s, root) == 0, LD_ENOMEM,
             "out of memory");
    LD_TRY(join(&c, s));
    *out = s;
    s = NULL;
fail:
    ld__source_free(s);
    if (c.h) yajl_free(c.h);
    free(piece);
    free(c.images);
    free(c.anns);
    free(c.cats);
    ld__buf_free(&c.names);
    if (f) fclose(f);
    return rc;
}

#endif /* LD_HAVE_YAJL */
