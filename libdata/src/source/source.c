/* The source record shared by folder and list mode: item storage, class names, shuffle. */
#include "source/src_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Strings go into 64 KiB blocks: one malloc per ~1,000 paths instead of one per path, and
 * blocks never move, so item pointers stay valid while the list grows. */
#define ARENA_BLOCK 65536

struct ld_arena_block {
    ld_arena_block *next;
    size_t size, used;
    char data[];
};

int ld__source_new(ld_source **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? LD_OK : LD_ENOMEM;
}

static char *arena_alloc(ld_source *s, size_t n)
{
    ld_arena_block *b = s->arena;
    if (!b || b->size - b->used < n) {
        size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        size_t total;
        if (!ld__add_size(size, sizeof *b, &total)) return NULL;
        b = malloc(total);
        if (!b) return NULL;
        b->size = size;
        b->used = 0;
        b->next = s->arena;
        s->arena = b;
    }
    char *p = b->data + b->used;
    b->used += n;
    return p;
}

char *ld__source_strndup(ld_source *s, const char *p, size_t n)
{
    size_t total;
    if (!ld__add_size(n, 1, &total)) return NULL;
    char *d = arena_alloc(s, total);
    if (!d) return NULL;
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return LD_OK;
    size_t ncap = *cap ? *cap : 256;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) return LD_ENOMEM;
        ncap *= 2;
    }
    size_t bytes;
    if (!ld__mul_size(ncap, elem, &bytes)) return LD_ENOMEM;
    void *p = realloc(*arr, bytes);
    if (!p) return LD_ENOMEM;
    *arr = p;
    *cap = ncap;
    return LD_OK;
}

int ld__source_set_root(ld_source *s, const char *root)
{
    free(s->root);
    s->root = NULL;
    s->root_len = 0;
    s->root_sep = 0;
    if (!root || !*root) return LD_OK;
    s->root = ld__strdup(root);
    if (!s->root) return LD_ENOMEM;
    s->root_len = strlen(root);
    s->root_sep = root[s->root_len - 1] != '/';
    return LD_OK;
}

/* The label is the first 4 bytes of an item's record, stored unaligned. */
#define LABEL_BYTES sizeof(int32_t)

int ld__source_add_item_values(ld_source *s, const char *rel, size_t rel_len, int32_t label,
                               const void *values, size_t vec_bytes)
{
    if (grow((void **)&s->items, &s->cap, s->n + 1, sizeof *s->items) < 0) return LD_ENOMEM;
    size_t total;
    if (!ld__add_size(LABEL_BYTES + 1 + vec_bytes, rel_len, &total)) return LD_ENOMEM;
    char *p = arena_alloc(s, total);
    if (!p) return LD_ENOMEM;
    memcpy(p, &label, LABEL_BYTES);
    memcpy(p + LABEL_BYTES, rel, rel_len);
    p[LABEL_BYTES + rel_len] = '\0';
    if (vec_bytes) memcpy(p + LABEL_BYTES + rel_len + 1, values, vec_bytes);
    s->items[s->n++] = p;
    return LD_OK;
}

int ld__source_add_item(ld_source *s, const char *rel, size_t rel_len, int32_t label)
{
    return ld__source_add_item_values(s, rel, rel_len, label, NULL, 0);
}

const void *ld__source_extra(const ld_source *s, size_t i)
{
    const char *rel = s->items[i] + LABEL_BYTES;
    return rel + strlen(rel) + 1;
}

void ld__source_set_label(ld_source *s, size_t i, int32_t label)
{
    memcpy((char *)s->items[i], &label, LABEL_BYTES); /* the arena is the source's own */
}

int ld__source_add_class(ld_source *s, const char *name, size_t len)
{
    if (grow((void **)&s->classes, &s->cap_classes, s->n_classes + 1, sizeof *s->classes) < 0)
        return LD_ENOMEM;
    char *p = ld__source_strndup(s, name, len);
    if (!p) return LD_ENOMEM;
    s->classes[s->n_classes++] = p;
    return LD_OK;
}

void ld__source_warnf(ld_source_warn_fn warn, void *user, const char *fmt, ...)
{
    if (!warn) return;
    char msg[LD_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    ld__vformat_msg(msg, sizeof msg, fmt, ap);
    va_end(ap);
    warn(user, msg);
}

static int cmp_rel(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a + LABEL_BYTES, *(const char *const *)b + LABEL_BYTES);
}

void ld__source_sort_items(ld_source *s)
{
    /* Relative paths are unique within one tree, so the unstable qsort is deterministic. */
    if (s->n > 1) qsort(s->items, s->n, sizeof *s->items, cmp_rel);
}

void ld__source_free(ld_source *s)
{
    if (!s) return;
    ld_arena_block *b = s->arena;
    while (b) {
        ld_arena_block *next = b->next;
        free(b);
        b = next;
    }
    ld__tar_free(s->tar);
    ld__dsrc_free(s->dsrc);
    free(s->items);
    free(s->classes);
    free(s->label_names);
    free(s->box_classes);
    free(s->box_class_ids);
    free(s->root);
    free(s);
}

uint64_t ld__source_unlisted(const ld_source *s, int why)
{
    return s && why >= 0 && why < LD_UNLISTED_N ? s->unlisted[why] : 0;
}

size_t ld__source_count(const ld_source *s)
{
    return s ? s->n : 0;
}

const char *ld__source_rel(const ld_source *s, size_t i)
{
    return s && i < s->n ? s->items[i] + LABEL_BYTES : NULL;
}

int32_t ld__source_label(const ld_source *s, size_t i)
{
    int32_t label = -1;
    if (s && i < s->n) memcpy(&label, s->items[i], LABEL_BYTES);
    return label;
}

int ld__source_read(ld_source *s, size_t i, const char *path, ld_buf *out, size_t max_bytes,
                    ld_err *e)
{
    if (s && s->tar) return ld__tar_read(s, i, path, out, max_bytes, e);
    if (s && s->dsrc) return ld__dsrc_read(s, i, path, out, max_bytes, e);
    return ld__read_file(path, out, max_bytes, e);
}

int ld__source_get(const ld_source *s, size_t i, ld_buf *path_buf, ld_item *out)
{
    memset(out, 0, sizeof *out);
    if (!s || i >= s->n) return LD_EINVAL;
    const char *rel = s->items[i] + LABEL_BYTES;
    size_t rel_len = strlen(rel);
    /* An absolute listed path is used as it is; otherwise "root" + "/" + rel, with no second
     * '/' when the root already ends in one ("photos/" + "cat/a.jpg"). */
    size_t root_len = rel[0] == '/' ? 0 : s->root_len;
    int sep = root_len ? s->root_sep : 0;
    size_t total;
    if (!ld__add_size(root_len + (size_t)sep + 1, rel_len, &total) ||
        ld__buf_reserve(path_buf, total) < 0)
        return LD_ENOMEM;
    char *p = (char *)path_buf->p;
    if (root_len) memcpy(p, s->root, root_len);
    if (sep) p[root_len] = '/';
    memcpy(p + root_len + sep, rel, rel_len + 1);
    path_buf->len = total - 1;
    out->path = p;
    out->rel = rel;
    memcpy(&out->label, s->items[i], LABEL_BYTES);
    return LD_OK;
}

uint32_t ld__source_label_count(const ld_source *s)
{
    return s ? s->label_k : 0;
}

int ld__source_label_type(const ld_source *s)
{
    return s && s->label_k ? s->label_type : LD_DTYPE_I32;
}

int ld__source_unlabelled(const ld_source *s)
{
    return s && s->unlabelled;
}

int ld__source_values(const ld_source *s, size_t i, void *out)
{
    if (!s || i >= s->n || !s->label_k) return LD_EINVAL;
    const char *rel = s->items[i] + LABEL_BYTES;
    memcpy(out, rel + strlen(rel) + 1, (size_t)s->label_k * 4);
    return LD_OK;
}

size_t ld__source_label_name_count(const ld_source *s)
{
    return s ? s->n_label_names : 0;
}

const char *ld__source_label_name(const ld_source *s, size_t i)
{
    return s && i < s->n_label_names ? s->label_names[i] : NULL;
}

size_t ld__source_class_count(const ld_source *s)
{
    return s ? s->n_classes : 0;
}

const char *ld__source_class_name(const ld_source *s, size_t i)
{
    return s && i < s->n_classes ? s->classes[i] : NULL;
}

/* SplitMix64 (Steele, Lea, Flood 2014): tiny, fixed-width integer arithmetic only, so the
 * sequence is the same on every platform and compiler. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, bound) without modulo bias: reject the top partial range. */
static uint64_t uniform_below(uint64_t *state, uint64_t bound)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound; /* a multiple of bound */
    uint64_t r;
    do {
        r = splitmix64(state);
    } while (r >= limit);
    return r % bound;
}

void ld__source_shuffle(ld_source *s, uint64_t seed)
{
    if (!s || s->n < 2) return;
    uint64_t state = seed;
    for (size_t i = s->n - 1; i > 0; i--) {
        size_t j = (size_t)uniform_below(&state, (uint64_t)i + 1);
        const char *t = s->items[i];
        s->items[i] = s->items[j];
        s->items[j] = t;
    }
}

void ld__source_slice(ld_source *s, size_t first, size_t count)
{
    if (!s) return;
    if (first > s->n) first = s->n;
    if (count > s->n - first) count = s->n - first;
    if (first && count) memmove(s->items, s->items + first, count * sizeof *s->items);
    s->n = count;
}

/* ---- detection boxes ---------------------------------------------------------------------- */

int ld__source_add_item_boxes(ld_source *s, const char *rel, size_t rel_len, const ld_box *boxes,
                              uint32_t m)
{
    size_t bytes;
    if (!ld__mul_size((size_t)m, sizeof(ld_box), &bytes) || !ld__add_size(bytes, 4, &bytes))
        return LD_ENOMEM;
    char *rec = malloc(bytes); /* "<u32 M><M boxes>", copied into the arena with the path */
    if (!rec) return LD_ENOMEM;
    memcpy(rec, &m, 4);
    if (m) memcpy(rec + 4, boxes, (size_t)m * sizeof(ld_box));
    const int rc = ld__source_add_item_values(s, rel, rel_len, 0, rec, bytes);
    free(rec);
    if (rc == LD_OK) s->boxes = 1;
    return rc;
}

int ld__source_add_box_class(ld_source *s, const char *name, size_t len, int64_t id)
{
    size_t cap = s->cap_box_classes;
    if (grow((void **)&s->box_classes, &cap, s->n_box_classes + 1, sizeof *s->box_classes) < 0 ||
        grow((void **)&s->box_class_ids, &s->cap_box_classes, s->n_box_classes + 1,
             sizeof *s->box_class_ids) < 0)
        return LD_ENOMEM;
    const char *copy = ld__source_strndup(s, name, len);
    if (!copy) return LD_ENOMEM;
    s->box_classes[s->n_box_classes] = copy;
    s->box_class_ids[s->n_box_classes++] = id;
    return LD_OK;
}

int ld__source_has_boxes(const ld_source *s)
{
    return s && s->boxes;
}

uint32_t ld__source_box_count(const ld_source *s, size_t i)
{
    uint32_t m = 0;
    if (s && s->boxes && i < s->n) memcpy(&m, ld__source_extra(s, i), 4);
    return m;
}

void ld__source_box(const ld_source *s, size_t i, uint32_t k, ld_box *out)
{
    memcpy(out, (const char *)ld__source_extra(s, i) + 4 + (size_t)k * sizeof *out, sizeof *out);
}

size_t ld__source_box_class_count(const ld_source *s)
{
    return s ? s->n_box_classes : 0;
}

const char *ld__source_box_class_name(const ld_source *s, size_t c)
{
    return s && c < s->n_box_classes ? s->box_classes[c] : NULL;
}

int64_t ld__source_box_class_id(const ld_source *s, size_t c)
{
    return s && c < s->n_box_classes ? s->box_class_ids[c] : -1;
}
