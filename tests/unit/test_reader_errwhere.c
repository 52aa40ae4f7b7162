/* Where a failed epoch says it failed: the reader names the file and the sample once each in
 * its message, and the detail (ld_reader_error) gives the same file and sample. The reader
 * decides this from the detail the store fills in (the store's message names its file and,
 * for HDF5, the sample), not by searching its messages for the path or the word "sample". */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_tmp.h"
#include "libdata/reader.h"

TestSuite(reader_errwhere, .init = ld_tmp_make, .fini = ld_tmp_remove);

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out, "cannot copy %s to %s", from, to);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        cr_assert_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    cr_assert_eq(fclose(out), 0);
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Open `path` (one thread, batches of one, in order), cut `victim` to half its size, read the
 * epoch: it must stop with LD_EFORMAT. */
static ld_reader *read_cut(const char *path, const char *victim)
{
    ld_reader *r = ld_reader_create();
    ld_reader_set(r, LD_R_BATCH_SIZE, 1);
    ld_reader_set(r, LD_R_THREADS, 1);
    cr_assert_eq(ld_reader_open(r, path), LD_OK, "%s", ld_reader_errmsg(r));
    FILE *f = fopen(victim, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fclose(f);
    cr_assert_eq(truncate(victim, size / 2), 0);
    const ld_batch *b;
    int rc;
    while ((rc = ld_reader_next(r, &b)) == LD_OK)
        ;
    cr_assert_eq(rc, LD_EFORMAT, "%d: %s", rc, ld_reader_errmsg(r));
    return r;
}

Test(reader_errwhere, a_file_cut_while_open_is_named_once_with_its_sample)
{
    char h5[512], want[64];
    snprintf(h5, sizeof h5, "%s/cut.h5", ld_tmp);
    copy_file(LD_TEST_DATA "/reader/raw_ours.h5", h5);
    ld_reader *r = read_cut(h5, h5);
    const char *msg = ld_reader_errmsg(r);
    const ld_error_detail *d = ld_reader_error(r);
    cr_assert_not_null(d->path, "%s", msg);
    cr_assert_str_eq(d->path, h5);
    cr_assert_gt(d->sample, 0, "%s", msg);
    snprintf(want, sizeof want, "sample %lld:", (long long)d->sample);
    cr_assert_not_null(strstr(msg, want), "the message names another sample: %s", msg);
    cr_assert_eq(count_of(msg, h5), 1, "the file is not named once: %s", msg);
    cr_assert_eq(count_of(msg, "sample"), 1, "the sample is not named once: %s", msg);
    ld_reader_free(r);
}

Test(reader_errwhere, a_split_member_cut_while_open_gives_the_dataset_sample_and_member_file)
{
    char a[512], b[512], list[512], want[64];
    snprintf(a, sizeof a, "%s/a.h5", ld_tmp);
    snprintf(b, sizeof b, "%s/b.h5", ld_tmp);
    snprintf(list, sizeof list, "%s/list.txt", ld_tmp);
    copy_file(LD_TEST_DATA "/reader/raw_ours.h5", a);
    copy_file(LD_TEST_DATA "/reader/raw_ours.h5", b);
    FILE *f = fopen(list, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s\n%s\n", a, b);
    cr_assert_eq(fclose(f), 0);

    ld_reader *r = read_cut(list, b);
    const char *msg = ld_reader_errmsg(r);
    const ld_error_detail *d = ld_reader_error(r);
    /* the message: the list, then the member and the sample as numbered in the member */
    cr_assert_eq(strncmp(msg, list, strlen(list)), 0, "the list is not named first: %s", msg);
    cr_assert_eq(count_of(msg, b), 1, "the member is not named once: %s", msg);
    cr_assert_eq(count_of(msg, "sample"), 1, "the sample is not named once: %s", msg);
    /* the detail: the member file, and the sample as numbered in the dataset (a.h5 holds 100) */
    cr_assert_not_null(d->path, "%s", msg);
    cr_assert_str_eq(d->path, b, "%s", msg);
    cr_assert_gt(d->sample, 100, "%s", msg);
    snprintf(want, sizeof want, "sample %lld:", (long long)(d->sample - 100));
    cr_assert_not_null(strstr(msg, want), "detail sample %lld, message: %s", (long long)d->sample,
                       msg);
    ld_reader_free(r);
}
