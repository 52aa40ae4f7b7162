/*
 * Two-pass packing of a result into one exactly sized block (ld_pack.h).
 */
#include "common/ld_pack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/libdata.h"

static void pack_fail(ld_pack *p, int code)
{
    if (!p->failed) p->failed = code;
}

void *ld__pack_reserve(ld_pack *p, size_t bytes, size_t align)
{
    if (p->failed) return NULL;
    if (!align || (align & (align - 1)) || align > alignof(max_align_t)) {
        pack_fail(p, LD_EINVAL);
        return NULL;
    }
    size_t at, end;
    if (__builtin_add_overflow(p->used, align - 1, &at) ||
        __builtin_add_overflow(at & ~(align - 1), bytes, &end)) {
        pack_fail(p, LD_ELIMIT);
        return NULL;
    }
    at &= ~(align - 1);
    if (p->base && end > p->cap) { /* the filling pass asks for more than was counted */
        pack_fail(p, LD_EINVAL);
        return NULL;
    }
    p->used = end;
    return p->base ? p->base + at : NULL;
}

void *ld__pack_array(ld_pack *p, size_t n, size_t size, size_t align)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        pack_fail(p, LD_ELIMIT);
        return NULL;
    }
    return ld__pack_reserve(p, bytes, align);
}

char *ld__pack_str(ld_pack *p, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s);
    char *d = ld__pack_reserve(p, n + 1, 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

char *ld__pack_printf(ld_pack *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        pack_fail(p, LD_EINVAL);
        return NULL;
    }
    char *d = ld__pack_reserve(p, (size_t)n + 1, 1);
    if (d) {
        va_start(ap, fmt);
        vsnprintf(d, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return d;
}

int ld__pack_run(ld_pack_fill_fn fill, void *arg, void **out, size_t *size)
{
    ld_pack p = {NULL, 0, 0, 0};
    *out = NULL;
    int rc = fill(&p, arg);
    if (rc < 0) return rc;
    if (p.failed) return p.failed;
    const size_t need = p.used;
    /* malloc(0) may return NULL: an empty result is still a block to free() */
    p.base = calloc(1, need ? need : 1);
    if (!p.base) return LD_ENOMEM;
    p.cap = need;
    p.used = 0;
    rc = fill(&p, arg);
    if (rc >= 0 && p.failed) rc = p.failed;
    if (rc >= 0 && p.used != need) rc = LD_EINVAL; /* the passes differed */
    if (rc < 0) {
        free(p.base);
        return rc;
    }
    *out = p.base;
    if (size) *size = need;
    return LD_OK;
}
