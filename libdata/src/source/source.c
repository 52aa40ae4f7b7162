/* The source record shared by folder and list mode: item storage, class names, shuffle. */
#include "src_internal.h"

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

int ld__source_add_item(ld_source *s, const char *root, const char *rel, size_t rel_len,
                        int32_t label)
{
    if (grow((void **)&s->items, &s->cap, s->n + 1, sizeof *s->items) < 0) return LD_ENOMEM;
    size_t root_len = root ? strlen(root) : 0;
    if (rel_len > 0 && rel[0] == '/') root_len = 0;
    /* "root/rel" stored once; rel points into it, so each file costs one string. */
    int sep = root_len > 0 && root[root_len - 1] != '/';
    size_t total;
    if (!ld__add_size(root_len + (size_t)sep, rel_len, &total) || !ld__add_size(total, 1, &total))
        return LD_ENOMEM;
    char *p = arena_alloc(s, total);
    if (!p) return LD_ENOMEM;
    if (root_len) memcpy(p, root, root_len);
    if (sep) p[root_len] = '/';
    memcpy(p + root_len + sep, rel, rel_len);
    p[root_len + sep + rel_len] = '\0';
    ld_item *it = &s->items[s->n++];
    it->path = p;
    it->rel = p + root_len + sep;
    it->label = label;
    return LD_OK;
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

static int cmp_rel(const void *a, const void *b)
{
    return strcmp(((const ld_item *)a)->rel, ((const ld_item *)b)->rel);
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
    free(s->items);
    free(s->classes);
    free(s);
}

size_t ld__source_count(const ld_source *s)
{
    return s ? s->n : 0;
}

const ld_item *ld__source_item(const ld_source *s, size_t i)
{
    return s && i < s->n ? &s->items[i] : NULL;
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
        ld_item t = s->items[i];
        s->items[i] = s->items[j];
        s->items[j] = t;
    }
}
