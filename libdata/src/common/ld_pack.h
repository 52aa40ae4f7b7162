/*
 * One malloc'd block for a result made of a struct, its arrays and its strings, sized exactly
 * by running the same fill function twice:
 *
 *   pass 1 (counting): p->base is NULL; every ld__pack_* call only adds its bytes (and the
 *                      padding its alignment needs) to p->used and returns NULL;
 *   pass 2 (filling):  p->base is a zeroed block of exactly the counted size; the same calls,
 *                      in the same order, return their place in it (strings copied).
 *
 * No size is estimated by hand and there is no slack: the block is what the fill asked for.
 * The caller frees the block with free(); pointers inside it stay valid until then.
 *
 *   static int fill(ld_pack *p, void *arg) {                  // ld__pack_run calls it twice
 *       const src *s = arg; res *r = LD_PACK_NEW(p, res);      // NULL while counting
 *       char *name = ld__pack_str(p, s->name); int64_t *d = LD_PACK_ARRAY(p, s->nd, int64_t);
 *       if (r) { r->name = name; r->d = memcpy(d, s->d, s->nd * sizeof *d); } return LD_OK; }
 *   void *blk; int rc = ld__pack_run(fill, &s, &blk, NULL); res *r = blk; ... free(r);
 *
 * The fill must make the same calls with the same sizes on both passes (it reads the same
 * inputs); ld__pack_run checks that the filling pass used exactly the counted bytes.
 * No global state; an ld_pack belongs to one thread.
 */
#ifndef LD_PACK_H
#define LD_PACK_H

#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>

typedef struct ld_pack {
    char *base;  /* NULL while counting; the block while filling */
    size_t used; /* bytes reserved so far (with alignment padding) */
    size_t cap;  /* the block's size while filling (the counted total); 0 while counting */
    int failed;  /* sticky: LD_ELIMIT (size arithmetic overflowed), LD_EINVAL (a bad
                    alignment, or the filling pass asked for more than was counted) */
} ld_pack;

/* Reserve `bytes` at an offset that is a multiple of `align` (a power of two, at most
 * alignof(max_align_t)). Counting: NULL. Filling: the place (zeroed), also for 0 bytes.
 * NULL on either pass once p->failed is set (overflow of size_t, bad align, over the count). */
void *ld__pack_reserve(ld_pack *p, size_t bytes, size_t align);
/* An array of n elements of `size` bytes: n * size overflow-checked (sets LD_ELIMIT). */
void *ld__pack_array(ld_pack *p, size_t n, size_t size, size_t align);
/* A copy of the NUL-terminated s (strlen + 1 bytes, no alignment). Counting: NULL; filling:
 * the copy. s == NULL packs nothing and returns NULL on both passes. */
char *ld__pack_str(ld_pack *p, const char *s);
/* A printf-formatted string (vsnprintf measures it on the counting pass). A format error
 * sets LD_EINVAL. */
char *ld__pack_printf(ld_pack *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#define LD_PACK_NEW(p, type) ((type *)ld__pack_reserve((p), sizeof(type), alignof(type)))
#define LD_PACK_ARRAY(p, n, type) ((type *)ld__pack_array((p), (n), sizeof(type), alignof(type)))

/* The fill function: the same ld__pack_* calls on both passes. Returns LD_OK, or a negative
 * LD_E* code that stops ld__pack_run (on either pass) and is returned by it. */
typedef int (*ld_pack_fill_fn)(ld_pack *p, void *arg);

/* Run fill twice (count, then allocate exactly the counted bytes, zeroed, and fill).
 * On LD_OK, *out is the block (free() it; never NULL, also for an empty result) and *size,
 * when size is not NULL, its byte count. On failure *out is NULL and the code is: fill's own,
 * LD_ENOMEM, LD_ELIMIT (the size overflows size_t), LD_EINVAL (bad alignment, or the
 * filling pass differed from the counting pass: a bug in fill). */
int ld__pack_run(ld_pack_fill_fn fill, void *arg, void **out, size_t *size);

#endif /* LD_PACK_H */
