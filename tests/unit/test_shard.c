/* Shards: part names, the contiguous ranges of the whole listing, the run_id. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard/shard.h"
#include "libdata/convert.h"
#include "source/src_internal.h"

TestSuite(shard, .timeout = 30);

static void name_is(const char *out, int k, int n, const char *want)
{
    char *got = NULL;
    int rc = ld_shard_part_name(out, k, n, &got);
    cr_assert_eq(rc, LD_OK, "%s %d/%d: rc %d", out, k, n, rc);
    cr_expect_str_eq(got, want, "%s %d/%d", out, k, n);
    ld_free(got);
}

Test(shard, part_names_put_the_tag_before_the_dataset_extension)
{
    name_is("out.h5", 2, 8, "out-00002-of-00008.h5");
    name_is("dir/out.HDF5", 0, 1, "dir/out-00000-of-00001.HDF5");
    name_is("train.lmdb", 7, 12, "train-00007-of-00012.lmdb");
    name_is("train.lmdb///", 1, 2, "train-00001-of-00002.lmdb");
    name_is("db/", 1, 3, "db-00001-of-00003");
    name_is("plain", 99998, 99999, "plain-99998-of-99999");
    name_is("a.b.txt", 0, 2, "a.b.txt-00000-of-00002");
    name_is("x/.h5", 0, 2, "x/.h5-00000-of-00002"); /* no name before the extension */
}

Test(shard, part_name_refuses_what_no_run_writes)
{
    char *got = (char *)"untouched";
    cr_expect_eq(ld_shard_part_name("o.h5", 2, 2, &got), LD_EINVAL);
    cr_expect_null(got);
    cr_expect_eq(ld_shard_part_name("o.h5", -1, 2, &got), LD_EINVAL);
    cr_expect_eq(ld_shard_part_name("o.h5", 0, 0, &got), LD_EINVAL);
    cr_expect_eq(ld_shard_part_name("o.h5", 0, 100000, &got), LD_EINVAL);
    cr_expect_eq(ld_shard_part_name("", 0, 1, &got), LD_EINVAL);
    cr_expect_eq(ld_shard_part_name(NULL, 0, 1, &got), LD_EINVAL);
    cr_expect_eq(ld_shard_part_name("o.h5", 0, 1, NULL), LD_EINVAL);
}

/* The parts of any listing are contiguous, in order, cover it exactly, and each is
 * [floor(K*L/N), floor((K+1)*L/N)), also where K*L overflows 64 bits. */
Test(shard, ranges_partition_the_listing_exactly)
{
    const uint64_t totals[] = {0,         1, 7, 9, 12, 1281167, (uint64_t)1 << 40, UINT64_MAX / 3,
                               UINT64_MAX};
    const unsigned counts[] = {1, 2, 3, 8, 16, 1000, 99999};
    for (size_t a = 0; a < sizeof totals / sizeof totals[0]; a++) {
        for (size_t b = 0; b < sizeof counts / sizeof counts[0]; b++) {
            const uint64_t L = totals[a];
            const unsigned n = counts[b];
            uint64_t next = 0, min = UINT64_MAX, max = 0;
            for (unsigned k = 0; k < n; k++) {
                uint64_t first, count;
                ld__shard_range(L, k, n, &first, &count);
                cr_assert_eq(first, next, "L %llu N %u K %u: starts at %llu, not %llu",
                             (unsigned long long)L, n, k, (unsigned long long)first,
                             (unsigned long long)next);
                if (L < ((uint64_t)1 << 40)) /* exact formula where it fits in 64 bits */
                    cr_assert_eq(first, L * k / n, "L %llu N %u K %u", (unsigned long long)L, n, k);
                next = first + count;
                min = count < min ? count : min;
                max = count > max ? count : max;
            }
            cr_assert_eq(next, L, "L %llu N %u: the parts end at %llu", (unsigned long long)L, n,
                         (unsigned long long)next);
            cr_assert_leq(max - min, 1, "L %llu N %u: parts of %llu..%llu samples",
                          (unsigned long long)L, n, (unsigned long long)min,
                          (unsigned long long)max);
        }
    }
}

static ld_source *listing(const char *const *rel, const int32_t *labels, size_t n,
                          const char *const *classes, size_t nc)
{
    ld_source *s = NULL;
    cr_assert_eq(ld__source_new(&s), LD_OK);
    for (size_t i = 0; i < nc; i++)
        cr_assert_eq(ld__source_add_class(s, classes[i], strlen(classes[i])), LD_OK);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(ld__source_add_item(s, rel[i], strlen(rel[i]), labels[i]), LD_OK);
    return s;
}

Test(shard, run_id_changes_with_any_setting_name_label_order_or_count)
{
    const char *rel[] = {"a/1.jpg", "a/2.jpg", "b/3.jpg"},
               *rel2[] = {"a/1.jpg", "a/2.jpg", "b/4.jpg"};
    const char *cls[] = {"a", "b"}, *cls2[] = {"a", "c"};
    const int32_t lab[] = {0, 0, 1}, lab2[] = {0, 1, 1};
    const ld_shard_setting set[] = {{"quality", 90}, {"resize_w", 32}};
    const ld_shard_setting set2[] = {{"quality", 91}, {"resize_w", 32}};
    ld_source *base = listing(rel, lab, 3, cls, 2), *same = listing(rel, lab, 3, cls, 2);
    ld_source *names = listing(rel2, lab, 3, cls, 2), *labels = listing(rel, lab2, 3, cls, 2);
    ld_source *classes = listing(rel, lab, 3, cls2, 2), *fewer = listing(rel, lab, 2, cls, 2);
    ld_source *order = listing(rel, lab, 3, cls, 2);
    ld__source_shuffle(order, 5);
    char id[17], other[17];
    ld__shard_run_id(set, 2, 4, base, id);
    cr_assert_eq(strlen(id), 16);
    cr_assert_eq(strspn(id, "0123456789abcdef"), 16, "run_id %s", id);
    ld__shard_run_id(set, 2, 4, same, other);
    cr_expect_str_eq(id, other, "the same listing and settings give the same run_id");
    struct {
        const char *what;
        const ld_shard_setting *set;
        unsigned n;
        ld_source *src;
    } diff[] = {{"a setting", set2, 4, base},      {"N", set, 5, base},
                {"a file name", set, 4, names},    {"a label", set, 4, labels},
                {"a class name", set, 4, classes}, {"the count", set, 4, fewer},
                {"the order", set, 4, order}};
    for (size_t i = 0; i < sizeof diff / sizeof diff[0]; i++) {
        ld__shard_run_id(diff[i].set, 2, diff[i].n, diff[i].src, other);
        cr_expect_str_neq(id, other, "another %s gives the same run_id %s", diff[i].what, id);
    }
    ld__source_free(base);
    ld__source_free(same);
    ld__source_free(names);
    ld__source_free(labels);
    ld__source_free(classes);
    ld__source_free(fewer);
    ld__source_free(order);
}

Test(shard, slice_keeps_the_range_and_the_class_names)
{
    const char *rel[] = {"a/1.jpg", "a/2.jpg", "b/3.jpg", "b/4.jpg"}, *cls[] = {"a", "b"};
    const int32_t lab[] = {0, 0, 1, 1};
    ld_source *s = listing(rel, lab, 4, cls, 2);
    ld__source_slice(s, 1, 2);
    cr_assert_eq(ld__source_count(s), 2);
    cr_expect_str_eq(ld__source_rel(s, 0), "a/2.jpg");
    cr_expect_str_eq(ld__source_rel(s, 1), "b/3.jpg");
    cr_expect_eq(ld__source_label(s, 1), 1);
    cr_expect_eq(ld__source_class_count(s), 2);
    ld__source_slice(s, 5, 3); /* past the end: empty */
    cr_expect_eq(ld__source_count(s), 0);
    ld__source_free(s);
}
