/* The two-pass packer (common/ld_pack.h): alignment of every reservation, a block of exactly
 * the counted size, strings and formatted strings, an empty result, overflow of the size
 * arithmetic, a bad alignment, a fill whose passes differ and a fill that fails. */
#include <criterion/criterion.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ld_pack.h"
#include "libdata/libdata.h"

TestSuite(pack, .timeout = 60);

typedef struct res {
    char c;
    size_t n;
    const char **names;
    const int64_t *dims;
    const char *label;
} res;

typedef struct src {
    size_t n;
    const char *const *names;
    const int64_t *dims;
    int id;
} src;

/* A header, a pointer array, an int64 array placed after odd-sized strings (so it needs
 * padding), a formatted string. */
static int fill_res(ld_pack *p, void *arg)
{
    const src *s = arg;
    res *r = LD_PACK_NEW(p, res);
    const char **names = LD_PACK_ARRAY(p, s->n, const char *);
    for (size_t i = 0; i < s->n; i++) {
        const char *c = ld__pack_str(p, s->names[i]);
        if (names) names[i] = c;
    }
    int64_t *d = LD_PACK_ARRAY(p, s->n, int64_t);
    const char *label = ld__pack_printf(p, "item %d of %zu", s->id, s->n);
    if (r) {
        r->c = 'x';
        r->n = s->n;
        r->names = names;
        if (s->n) memcpy(d, s->dims, s->n * sizeof *d);
        r->dims = d;
        r->label = label;
    }
    return LD_OK;
}

static size_t expected_size(const src *s)
{
    size_t off = sizeof(res);
    off = (off + alignof(const char *) - 1) & ~(alignof(const char *) - 1);
    off += s->n * sizeof(const char *);
    for (size_t i = 0; i < s->n; i++)
        off += strlen(s->names[i]) + 1;
    off = (off + alignof(int64_t) - 1) & ~(alignof(int64_t) - 1);
    off += s->n * sizeof(int64_t);
    char tmp[64];
    off += (size_t)snprintf(tmp, sizeof tmp, "item %d of %zu", s->id, s->n) + 1;
    return off;
}

Test(pack, exact_size_strings_and_arrays)
{
    static const char *const names[] = {"a", "bcd", "efghij"};
    static const int64_t dims[] = {2, -3, INT64_MAX};
    src s = {3, names, dims, 7};
    void *blk = NULL;
    size_t size = 0;
    cr_assert_eq(ld__pack_run(fill_res, &s, &blk, &size), LD_OK);
    const res *r = blk;
    cr_assert_not_null(r);
    cr_expect_eq(size, expected_size(&s), "size %zu, expected %zu", size, expected_size(&s));
    cr_expect_eq(r->c, 'x');
    cr_assert_eq(r->n, 3);
    for (size_t i = 0; i < 3; i++) {
        cr_expect_str_eq(r->names[i], names[i]);
        cr_expect_eq(r->dims[i], dims[i]);
        /* everything lies inside the block */
        cr_expect((const char *)r->names[i] >= (const char *)r);
        cr_expect((const char *)r->names[i] + strlen(names[i]) < (const char *)r + size);
    }
    cr_expect_str_eq(r->label, "item 7 of 3");
    cr_expect_eq((const char *)r->label + strlen(r->label) + 1, (const char *)r + size,
                 "the last string ends the block: no slack");
    free(blk);
}

Test(pack, alignment)
{
    /* every alignment up to max_align_t, after an odd offset, on both passes */
    char block[256] __attribute__((aligned(alignof(max_align_t))));
    for (size_t a = 1; a <= alignof(max_align_t); a *= 2) {
        ld_pack count = {NULL, 0, 0, 0};
        cr_assert_null(ld__pack_reserve(&count, 3, 1));
        cr_assert_null(ld__pack_reserve(&count, 5, a));
        cr_expect_eq(count.used, ((3 + a - 1) & ~(a - 1)) + 5, "align %zu: used %zu", a,
                     count.used);
        ld_pack fill = {block, 0, count.used, 0};
        cr_assert_not_null(ld__pack_reserve(&fill, 3, 1));
        char *q = ld__pack_reserve(&fill, 5, a);
        cr_assert_not_null(q);
        cr_expect_eq((uintptr_t)q % a, 0, "align %zu: %p", a, (void *)q);
        cr_expect_eq(fill.used, count.used);
        cr_expect_eq(fill.failed, 0);
    }
    /* not a power of two, zero, or more than malloc guarantees */
    static const size_t bad[] = {0, 3, 12, 2 * alignof(max_align_t)};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ld_pack p = {NULL, 0, 0, 0};
        cr_expect_null(ld__pack_reserve(&p, 1, bad[i]));
        cr_expect_eq(p.failed, LD_EINVAL, "align %zu", bad[i]);
    }
}

static int fill_nothing(ld_pack *p, void *arg)
{
    (void)p;
    (void)arg;
    return LD_OK;
}

Test(pack, empty_result)
{
    void *r = NULL;
    size_t size = 1;
    cr_assert_eq(ld__pack_run(fill_nothing, NULL, &r, &size), LD_OK);
    cr_expect_not_null(r, "an empty result is still a block to free()");
    cr_expect_eq(size, 0);
    free(r);
    /* a struct with empty arrays and an empty string */
    src s = {0, NULL, NULL, 0};
    cr_assert_eq(ld__pack_run(fill_res, &s, &r, &size), LD_OK);
    const res *q = r;
    cr_expect_eq(size, expected_size(&s));
    cr_expect_eq(q->n, 0);
    cr_expect_not_null(q->names);
    cr_expect_str_eq(q->label, "item 0 of 0");
    free(r);
    /* a NULL string packs nothing */
    ld_pack p = {NULL, 0, 0, 0};
    cr_expect_null(ld__pack_str(&p, NULL));
    cr_expect_eq(p.used, 0);
    cr_expect_eq(p.failed, 0);
}

typedef struct huge {
    size_t n, size;
    int calls;
} huge;

static int fill_huge(ld_pack *p, void *arg)
{
    huge *h = arg;
    h->calls++;
    ld__pack_reserve(p, 16, 8);
    ld__pack_array(p, h->n, h->size, 8);
    ld__pack_str(p, "after"); /* ignored once failed */
    return LD_OK;
}

Test(pack, size_overflow)
{
    /* n * size overflows */
    huge h = {SIZE_MAX / 2, 4, 0};
    void *r = (void *)1;
    cr_expect_eq(ld__pack_run(fill_huge, &h, &r, NULL), LD_ELIMIT);
    cr_expect_null(r);
    cr_expect_eq(h.calls, 1, "no filling pass after an overflow");
    /* used + bytes overflows */
    h = (huge){1, SIZE_MAX - 8, 0};
    cr_expect_eq(ld__pack_run(fill_huge, &h, &r, NULL), LD_ELIMIT);
    /* the alignment padding overflows */
    ld_pack p = {NULL, SIZE_MAX - 2, 0, 0};
    cr_expect_null(ld__pack_reserve(&p, 0, 8));
    cr_expect_eq(p.failed, LD_ELIMIT);
    cr_expect_null(ld__pack_reserve(&p, 0, 1), "sticky");
}

static int fill_grows(ld_pack *p, void *arg)
{
    int *calls = arg;
    ld__pack_reserve(p, (size_t)8 * (size_t)++ * calls, 8); /* 8 bytes, then 16 */
    return LD_OK;
}

static int fill_shrinks(ld_pack *p, void *arg)
{
    int *calls = arg;
    ld__pack_reserve(p, ++*calls == 1 ? 16 : 8, 8);
    return LD_OK;
}

static int fill_fails(ld_pack *p, void *arg)
{
    int *calls = arg;
    ld__pack_str(p, "x");
    return ++*calls == 2 ? LD_ENOMEM : LD_OK;
}

Test(pack, passes_that_differ_or_fail)
{
    void *r = (void *)1;
    int calls = 0;
    cr_expect_eq(ld__pack_run(fill_grows, &calls, &r, NULL), LD_EINVAL);
    cr_expect_null(r);
    calls = 0;
    cr_expect_eq(ld__pack_run(fill_shrinks, &calls, &r, NULL), LD_EINVAL);
    cr_expect_null(r);
    calls = 0;
    cr_expect_eq(ld__pack_run(fill_fails, &calls, &r, NULL), LD_ENOMEM, "fill's own code");
    cr_expect_null(r);
    cr_expect_eq(calls, 2);
}
