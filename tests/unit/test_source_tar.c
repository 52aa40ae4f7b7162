/* Archive mode of the source: tar archives written here with libarchive's writer (names,
 * order, duplicates and compression chosen by each test), listed and read back. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "test_tmp.h"
#include "source/src_internal.h"

#ifdef LD_HAVE_ARCHIVE
#include <archive.h>
#include <archive_entry.h>

TestSuite(source_tar, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 30);

typedef struct member {
    const char *name;
    const char *data; /* NULL: a folder; "@target": a symlink */
} member;

/* Write the members, in the order given, as a pax tar (gzip-compressed when gz) at
 * ld_tmp/name; an inner archive's bytes may be given as (data, len) through `blob`. */
static void write_tar(const char *path, int gz, const member *m, size_t n, const ld_buf *blobs)
{
    struct archive *a = archive_write_new();
    cr_assert_not_null(a);
    cr_assert_eq(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
    if (gz) cr_assert_eq(archive_write_add_filter_gzip(a), ARCHIVE_OK);
    cr_assert_eq(archive_write_open_filename(a, path), ARCHIVE_OK, "%s", archive_error_string(a));
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, m[i].name);
        archive_entry_set_perm(e, 0644);
        const void *data = m[i].data;
        size_t len = m[i].data ? strlen(m[i].data) : 0;
        if (blobs && blobs[i].p) {
            data = blobs[i].p;
            len = blobs[i].len;
        }
        if (!m[i].data && !(blobs && blobs[i].p)) {
            archive_entry_set_filetype(e, AE_IFDIR);
            len = 0;
        } else if (m[i].data && m[i].data[0] == '@') {
            archive_entry_set_filetype(e, AE_IFLNK);
            archive_entry_set_symlink(e, m[i].data + 1);
            len = 0;
        } else {
            archive_entry_set_filetype(e, AE_IFREG);
        }
        archive_entry_set_size(e, (la_int64_t)len);
        cr_assert_eq(archive_write_header(a, e), ARCHIVE_OK, "%s", archive_error_string(a));
        if (len) cr_assert_eq(archive_write_data(a, data, len), (la_ssize_t)len);
        archive_entry_free(e);
    }
    cr_assert_eq(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
}

static ld_buf file_bytes(const char *path)
{
    ld_buf b = {0};
    ld_err e = {0};
    cr_assert_eq(ld__read_file(path, &b, 1 << 20, &e), LD_OK, "%s", e.msg);
    return b;
}

static ld_source *open_tar(const char *path, unsigned flags)
{
    ld_source *s = NULL;
    ld_err e = {0};
    int rc = ld__source_open_archive(path, flags, NULL, NULL, NULL, NULL, &s, &e);
    cr_assert_eq(rc, LD_OK, "%s: rc %d: %s", path, rc, e.msg);
    return s;
}

/* The bytes of item i as the converter reads them. */
static void expect_item(ld_source *s, size_t i, const char *rel, int32_t label, const char *data)
{
    ld_buf path = {0}, out = {0};
    ld_item it;
    ld_err e = {0};
    cr_assert_eq(ld__source_get(s, i, &path, &it), LD_OK);
    cr_assert_str_eq(it.rel, rel, "item %zu", i);
    cr_assert_eq(it.label, label, "%s: label %d", rel, (int)it.label);
    int rc = ld__source_read(s, i, it.path, &out, 1 << 20, &e);
    cr_assert_eq(rc, LD_OK, "%s: %s", rel, e.msg);
    cr_assert_eq(out.len, strlen(data), "%s: %zu bytes", rel, out.len);
    cr_assert(!memcmp(out.p, data, out.len), "%s: other bytes", rel);
    ld__buf_free(&path);
    ld__buf_free(&out);
}

Test(source_tar, members_come_in_folder_modes_order_with_classes_from_first_components)
{
    /* no folder entry for b, an empty class folder, "./" prefixes, archive order scrambled */
    const member m[] = {{"./b/z.jpg", "bz"},     {"./a/", NULL},      {"./a/sub/y.png", "ay"},
                        {"./empty/", NULL},      {"./a/x.jpg", "ax"}, {"./loose.jpg", "l"},
                        {"./a/readme.txt", "r"}, {"./b/.x.jpg", "h"}};
    char path[512];
    snprintf(path, sizeof path, "%s/t.tar", ld_tmp);
    write_tar(path, 0, m, sizeof m / sizeof *m, NULL);
    ld_source *s = open_tar(path, 0);
    cr_assert_eq(ld__source_class_count(s), 3);
    cr_assert_str_eq(ld__source_class_name(s, 0), "a");
    cr_assert_str_eq(ld__source_class_name(s, 1), "b");
    cr_assert_str_eq(ld__source_class_name(s, 2), "empty");
    cr_assert_eq(ld__source_count(s), 3);
    expect_item(s, 0, "a/sub/y.png", 0, "ay");
    expect_item(s, 1, "a/x.jpg", 0, "ax");
    expect_item(s, 2, "b/z.jpg", 1, "bz");
    cr_assert_eq(ld__source_unlisted(s, LD_UNLISTED_LOOSE), 1);
    cr_assert_eq(ld__source_unlisted(s, LD_UNLISTED_NAME), 1);
    cr_assert_eq(ld__source_unlisted(s, LD_UNLISTED_HIDDEN), 1);
    ld__source_free(s);
}

Test(source_tar, a_name_given_twice_keeps_its_last_copy_as_extraction_would)
{
    const member m[] = {{"c/x.jpg", "old"}, {"c/y.jpg", "y"}, {"c/x.jpg", "new!"}};
    char path[512];
    snprintf(path, sizeof path, "%s/t.tar", ld_tmp);
    write_tar(path, 0, m, 3, NULL);
    ld_source *s = open_tar(path, 0);
    cr_assert_eq(ld__source_count(s), 2);
    expect_item(s, 0, "c/x.jpg", 0, "new!");
    expect_item(s, 1, "c/y.jpg", 0, "y");
    ld__source_free(s);
}

Test(source_tar, names_that_leave_the_archive_and_links_are_passed_over)
{
    const member m[] = {{"../x.jpg", "1"},
                        {"/abs/y.jpg", "2"},
                        {"c/../../z.jpg", "3"},
                        {"c/l.jpg", "@x.jpg"},
                        {"c/ok.jpg", "ok"}};
    char path[512];
    snprintf(path, sizeof path, "%s/t.tar", ld_tmp);
    write_tar(path, 0, m, 5, NULL);
    ld_source *s = open_tar(path, 0);
    cr_assert_eq(ld__source_count(s), 1);
    expect_item(s, 0, "c/ok.jpg", 0, "ok");
    cr_assert_eq(ld__source_unlisted(s, LD_UNLISTED_UNSAFE), 3);
    cr_assert_eq(ld__source_unlisted(s, LD_UNLISTED_LINK), 1);
    ld__source_free(s);
}

/* A tar of tars, outer plain or compressed: class = inner tar's name; rel = "inner/member". */
static void tar_of_tars(int gz)
{
    const member inner_b[] = {{"b2.jpg", "b2"}, {"b1.jpg", "b1"}};
    const member inner_a[] = {{"./a1.jpg", "a1"}, {"sub/a0.jpg", "a0"}};
    char pa[512], pb[512], outer[512];
    snprintf(pa, sizeof pa, "%s/n0a.tar", ld_tmp);
    snprintf(pb, sizeof pb, "%s/n0b.tar", ld_tmp);
    snprintf(outer, sizeof outer, "%s/train.tar%s", ld_tmp, gz ? ".gz" : "");
    write_tar(pa, 0, inner_a, 2, NULL);
    write_tar(pb, gz, inner_b, 2, NULL); /* compressed inside too when gz */
    ld_buf blobs[3] = {file_bytes(pb), {0}, file_bytes(pa)};
    const member m[] = {{"n0b.tar", "x"}, {"n0c/", NULL}, {"n0a.tar", "x"}};
    write_tar(outer, gz, m, 3, blobs);
    ld_source *s = open_tar(outer, 0);
    cr_assert_eq(ld__source_class_count(s), 3);
    cr_assert_str_eq(ld__source_class_name(s, 0), "n0a");
    cr_assert_str_eq(ld__source_class_name(s, 1), "n0b");
    cr_assert_str_eq(ld__source_class_name(s, 2), "n0c");
    cr_assert_eq(ld__source_count(s), 4);
    expect_item(s, 0, "n0a/a1.jpg", 0, "a1");
    expect_item(s, 1, "n0a/sub/a0.jpg", 0, "a0");
    expect_item(s, 2, "n0b/b1.jpg", 1, "b1");
    expect_item(s, 3, "n0b/b2.jpg", 1, "b2");
    ld__source_free(s);
    ld__buf_free(&blobs[0]);
    ld__buf_free(&blobs[2]);
}

Test(source_tar, an_inner_tar_that_is_no_tar_keeps_its_class_with_no_images)
{
    const member inner[] = {{"x.jpg", "x"}};
    char pin[512], outer[512];
    snprintf(pin, sizeof pin, "%s/in.tar", ld_tmp);
    snprintf(outer, sizeof outer, "%s/train.tar", ld_tmp);
    write_tar(pin, 0, inner, 1, NULL);
    ld_buf blobs[2] = {{0}, file_bytes(pin)};
    const member m[] = {{"a.tar", "not a tar archive, only text"}, {"b.tar", "x"}};
    write_tar(outer, 0, m, 2, blobs);
    ld_source *s = open_tar(outer, 0);
    cr_assert_eq(ld__source_class_count(s), 2);
    cr_assert_str_eq(ld__source_class_name(s, 0), "a");
    cr_assert_str_eq(ld__source_class_name(s, 1), "b");
    cr_assert_eq(ld__source_count(s), 1);
    expect_item(s, 0, "b/x.jpg", 1, "x");
    ld__source_free(s);
    ld__buf_free(&blobs[1]);
}

Test(source_tar, a_tar_of_tars_has_one_class_per_inner_tar)
{
    tar_of_tars(0);
}

Test(source_tar, a_compressed_tar_of_compressed_tars_reads_the_same)
{
    tar_of_tars(1);
}

/* Every item of a shuffled (and sliced) source read back, the stream restarting whenever a
 * wanted member lies behind it (one member per window). */
static void any_order(int gz, size_t window)
{
    enum { N = 24 };
    member m[N];
    char names[N][32], data[N][48];
    for (int i = 0; i < N; i++) {
        const int k = (i * 7) % N; /* archive order is not the sorted order */
        snprintf(names[i], sizeof names[i], "c%d/img%02d.jpg", k % 3, k);
        snprintf(data[i], sizeof data[i], "bytes of %d %.*s", k, k, "xxxxxxxxxxxxxxxxxxxxxxxx");
        m[i] = (member){names[i], data[i]};
    }
    char path[512];
    snprintf(path, sizeof path, "%s/t.tar%s", ld_tmp, gz ? ".gz" : "");
    write_tar(path, gz, m, N, NULL);
    ld_source *s = open_tar(path, 0);
    cr_assert_eq(ld__source_count(s), N);
    ld__tar_set_window(s, window);
    ld__source_shuffle(s, 42);
    ld__source_slice(s, 3, N - 5);
    for (size_t i = 0; i < ld__source_count(s); i++) {
        const char *rel = ld__source_rel(s, i);
        int k = atoi(strstr(rel, "img") + 3);
        char want[48];
        snprintf(want, sizeof want, "bytes of %d %.*s", k, k, "xxxxxxxxxxxxxxxxxxxxxxxx");
        expect_item(s, i, rel, k % 3, want);
    }
    ld__source_free(s);
}

Test(source_tar, an_uncompressed_tar_is_read_in_any_order)
{
    any_order(0, 1);
}

Test(source_tar, a_compressed_tar_is_read_in_any_order_through_a_one_member_window)
{
    any_order(1, 1);
}

Test(source_tar, a_compressed_tar_is_read_in_any_order_through_a_larger_window)
{
    any_order(1, 100);
}

Test(source_tar, a_member_over_the_size_limit_is_refused_by_name)
{
    const member m[] = {{"c/big.jpg", "0123456789"}, {"c/small.jpg", "01"}};
    char path[512];
    snprintf(path, sizeof path, "%s/t.tgz", ld_tmp);
    write_tar(path, 1, m, 2, NULL);
    ld_source *s = open_tar(path, 0);
    ld_buf pb = {0}, out = {0};
    ld_item it;
    ld_err e = {0};
    cr_assert_eq(ld__source_get(s, 0, &pb, &it), LD_OK);
    cr_assert_eq(ld__source_read(s, 0, it.path, &out, 5, &e), LD_ELIMIT);
    cr_assert(strstr(e.msg, "t.tgz/c/big.jpg") && strstr(e.msg, "too large"), "%s", e.msg);
    cr_assert_eq(ld__source_get(s, 1, &pb, &it), LD_OK);
    cr_assert_eq(ld__source_read(s, 1, it.path, &out, 5, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(out.len, 2);
    ld__buf_free(&pb);
    ld__buf_free(&out);
    ld__source_free(s);
}

Test(source_tar, flat_mode_gives_every_image_label_0_in_a_class_named_after_the_archive)
{
    const member m[] = {{"x.jpg", "x"}, {"d/e/y.png", "y"}};
    char path[512];
    snprintf(path, sizeof path, "%s/photos.tar.gz", ld_tmp);
    write_tar(path, 1, m, 2, NULL);
    ld_source *s = open_tar(path, LD_SRC_FLAT);
    cr_assert_eq(ld__source_class_count(s), 1);
    cr_assert_str_eq(ld__source_class_name(s, 0), "photos");
    cr_assert_eq(ld__source_count(s), 2);
    expect_item(s, 0, "d/e/y.png", 0, "y");
    expect_item(s, 1, "x.jpg", 0, "x");
    ld__source_free(s);
}

Test(source_tar, a_file_that_is_no_tar_is_a_format_error)
{
    char path[512];
    snprintf(path, sizeof path, "%s/no.tar", ld_tmp);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs("this is not a tar archive at all, just some text that is long enough", f);
    fclose(f);
    ld_source *s = NULL;
    ld_err e = {0};
    cr_assert_eq(ld__source_open_archive(path, 0, NULL, NULL, NULL, NULL, &s, &e), LD_EFORMAT, "%s",
                 e.msg);
    cr_assert(strstr(e.msg, "no.tar"), "%s", e.msg);
    cr_assert_null(s);
}

#else

Test(source_tar, archives_are_refused_when_libarchive_is_not_built)
{
    ld_source *s = NULL;
    ld_err e = {0};
    cr_assert_eq(ld__source_open_archive("x.tar", 0, NULL, NULL, NULL, NULL, &s, &e), LD_ENOTSUP);
    cr_assert(strstr(e.msg, "libarchive"), "%s", e.msg);
}

#endif
