/* The conversion pipeline through the public API, checked with independent readers. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_tmp.h"
#include "libdata/convert.h"

TestSuite(convert, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 120);

static char *path_in_tmp(const char *name)
{
    static char p[2][512];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", ld_tmp, name);
    return p[k];
}

static int run_cmd(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    if (d) closedir(d);
    return n;
}

static int convert(ld_convert *c, const char *in, const char *out)
{
    /* the photos folder has no class folders: --flat (loose images are skipped otherwise) */
    if (strstr(in, "/photos")) ld_convert_set(c, LD_C_FLAT, 1);
    int rc = ld_convert_run(c, in, out);
    return rc;
}

Test(convert, raw_tree_matches_an_independent_decode_and_resize)
{
    ld_convert *c = ld_convert_create();
    cr_assert_not_null(c);
    ld_convert_set(c, LD_C_RESIZE_W, 64);
    ld_convert_set(c, LD_C_RESIZE_H, 48);
    const char *out = path_in_tmp("tree.h5");
    int rc = convert(c, LD_TEST_DATA "/tree", out);
    cr_assert_eq(rc, LD_OK, "%s", ld_convert_errmsg(c));
    const ld_progress *s = ld_convert_stats(c);
    cr_assert_eq(s->converted, 9, "converted %llu", (unsigned long long)s->converted);
    cr_assert_eq(s->skipped, 0);
    ld_convert_free(c);
    /* h5py reads it; pixels are within a few levels of Pillow's decode + LANCZOS resize in
     * BGR CHW order, labels follow the sorted class folders. */
    cr_assert_eq(run_cmd("%s %s/tests/python/check_convert.py raw %s %s/tree", LD_PYTHON,
                         LD_SOURCE_DIR, out, LD_TEST_DATA),
                 0);
}

Test(convert, output_is_byte_identical_for_any_thread_count)
{
    const char *names[2] = {"j1.h5", "j2.h5"};
    for (int j = 0; j < 2; j++) {
        ld_convert *c = ld_convert_create();
        ld_convert_set(c, LD_C_THREADS, j + 1);
        ld_convert_set(c, LD_C_RESIZE_W, 96);
        ld_convert_set(c, LD_C_RESIZE_H, 96);
        ld_convert_set(c, LD_C_RESIZE_MODE, LD_RESIZE_CROP);
        ld_convert_set(c, LD_C_QUALITY, 80);
        cr_assert_eq(convert(c, LD_TEST_DATA "/photos", path_in_tmp(names[j])), LD_OK, "%s",
                     ld_convert_errmsg(c));
        ld_convert_free(c);
    }
    cr_assert_eq(run_cmd("cmp -s %s/j1.h5 %s/j2.h5", ld_tmp, ld_tmp), 0, "outputs differ");
}

Test(convert, jpeg_storage_decodes_back_to_the_images)
{
    ld_convert *c = ld_convert_create();
    ld_convert_set(c, LD_C_QUALITY, 90);
    ld_convert_set(c, LD_C_RESIZE_W, 64);
    ld_convert_set(c, LD_C_RESIZE_H, 64);
    ld_convert_set(c, LD_C_CHANNEL_ORDER, LD_CHANNELS_RGB);
    const char *out = path_in_tmp("q90.h5");
    cr_assert_eq(convert(c, LD_TEST_DATA "/tree", out), LD_OK, "%s", ld_convert_errmsg(c));
    ld_convert_free(c);
    cr_assert_eq(run_cmd("%s %s/tests/python/check_convert.py jpeg %s %s/tree", LD_PYTHON,
                         LD_SOURCE_DIR, out, LD_TEST_DATA),
                 0);
}

Test(convert, list_file_labels_are_kept)
{
    ld_convert *c = ld_convert_create();
    ld_convert_set(c, LD_C_RESIZE_W, 32);
    ld_convert_set(c, LD_C_RESIZE_H, 32);
    ld_convert_set_str(c, LD_C_LIST_FILE, LD_TEST_DATA "/list.txt");
    const char *out = path_in_tmp("list.h5");
    cr_assert_eq(convert(c, LD_TEST_DATA "/tree", out), LD_OK, "%s", ld_convert_errmsg(c));
    ld_convert_free(c);
    cr_assert_eq(run_cmd("%s %s/tests/python/check_convert.py list %s %s/list.txt", LD_PYTHON,
                         LD_SOURCE_DIR, out, LD_TEST_DATA),
                 0);
}

/* Bad files are skipped with a warning naming them; the output holds exactly the good ones. */
static int warnings;
static char last_warning[2048];
static void count_warn(void *user, int level, const char *msg)
{
    (void)user;
    if (level == LD_LOG_WARN) {
        warnings++;
        snprintf(last_warning, sizeof last_warning, "%s", msg);
    }
}

static void make_bad_tree(void)
{
    cr_assert_eq(run_cmd("mkdir -p %s/bad/a %s/bad/b && cp %s/photos/p00.jpg %s/photos/p01.jpg "
                         "%s/bad/a/ && cp %s/photos/p02.jpg %s/bad/b/ && "
                         ": > %s/bad/a/empty.jpg && echo hello > %s/bad/b/text.png && "
                         "head -c 3000 %s/photos/p03.jpg > %s/bad/b/trunc.jpg",
                         ld_tmp, ld_tmp, LD_TEST_DATA, LD_TEST_DATA, ld_tmp, LD_TEST_DATA, ld_tmp,
                         ld_tmp, ld_tmp, LD_TEST_DATA, ld_tmp),
                 0);
}

Test(convert, bad_files_are_skipped_and_named)
{
    make_bad_tree();
    ld_convert *c = ld_convert_create();
    ld_convert_set(c, LD_C_RESIZE_W, 32);
    ld_convert_set(c, LD_C_RESIZE_H, 32);
    warnings = 0;
    ld_convert_set_log(c, count_warn, NULL);
    cr_assert_eq(convert(c, path_in_tmp("bad"), path_in_tmp("bad.h5")), LD_OK, "%s",
                 ld_convert_errmsg(c));
    const ld_progress *s = ld_convert_stats(c);
    cr_assert_eq(s->converted, 3);
    cr_assert_eq(s->skipped, 3);
    cr_assert_eq(warnings, 3);
    cr_assert(strstr(last_warning, "/bad/b/") != NULL, "warning without a path: %s", last_warning);
    ld_convert_free(c);
}

Test(convert, strict_mode_stops_and_leaves_nothing)
{
    make_bad_tree();
    ld_convert *c = ld_convert_create();
    ld_convert_set(c, LD_C_RESIZE_W, 32);
    ld_convert_set(c, LD_C_RESIZE_H, 32);
    ld_convert_set(c, LD_C_STRICT, 1);
    mkdir(path_in_tmp("out"), 0755);
    int rc = convert(c, path_in_tmp("bad"), path_in_tmp("out/strict.h5"));
    cr_assert_eq(rc, LD_EFORMAT, "rc %d: %s", rc, ld_convert_errmsg(c));
    cr_assert(strstr(ld_convert_errmsg(c), "empty.jpg") != NULL, "%s", ld_convert_errmsg(c));
    cr_assert_eq(count_entries(path_in_tmp("out")), 0, "something was left behind");
    ld_convert_free(c);
}

static int cancel_after(void *user, const ld_progress *p)
{
    return p->done >= *(uint64_t *)user;
}

Test(convert, cancel_leaves_no_output_and_no_temporary)
{
    mkdir(path_in_tmp("out"), 0755);
    ld_convert *c = ld_convert_create();
    ld_convert_set(c, LD_C_THREADS, 1);
    ld_convert_set(c, LD_C_RESIZE_W, 32);
    ld_convert_set(c, LD_C_RESIZE_H, 32);
    uint64_t after = 3;
    ld_convert_set_progress(c, cancel_after, &after);
    int rc = convert(c, LD_TEST_DATA "/photos", path_in_tmp("out/x.h5"));
    cr_assert_eq(rc, LD_ECANCELED, "rc %d: %s", rc, ld_convert_errmsg(c));
    cr_assert_eq(count_entries(path_in_tmp("out")), 0, "something was left behind");
    ld_convert_free(c);
}

Test(convert, raw_storage_of_mixed_sizes_says_what_to_do)
{
    ld_convert *c = ld_convert_create();
    int rc = convert(c, LD_TEST_DATA "/photos", path_in_tmp("mixed.h5"));
    cr_assert_eq(rc, LD_EINVAL, "%s", ld_convert_errmsg(c));
    cr_assert(strstr(ld_convert_errmsg(c), "resize_w") != NULL, "%s", ld_convert_errmsg(c));
    cr_assert_eq(ld_convert_error(c)->param, LD_C_RESIZE_W);
    cr_assert_eq(access(path_in_tmp("mixed.h5"), F_OK), -1);
    ld_convert_free(c);
}

Test(convert, parameters_are_bounded)
{
    ld_convert *c = ld_convert_create();
    cr_assert_eq(ld_convert_set(c, LD_C_QUALITY, 101), LD_EINVAL);
    cr_assert(strstr(ld_convert_errmsg(c), "quality") != NULL);
    cr_assert_eq(ld_convert_set(c, (ld_convert_param)999, 1), LD_EINVAL);
    int64_t lo, hi, v;
    cr_assert_eq(ld_convert_param_bounds(LD_C_QUALITY, &lo, &hi), LD_OK);
    cr_assert_eq(hi, 100);
    cr_assert_eq(ld_convert_set(c, LD_C_QUALITY, 70), LD_OK);
    cr_assert_eq(ld_convert_get(c, LD_C_QUALITY, &v), LD_OK);
    cr_assert_eq(v, 70);
    size_t n;
    const ld_param_desc *t = ld_convert_params(&n);
    cr_assert_gt(n, 10);
    cr_assert_str_eq(t[1].name, "quality");
    ld_convert_free(c);
    ld_convert_free(NULL);
}

Test(convert, missing_input_is_an_io_error_naming_it)
{
    ld_convert *c = ld_convert_create();
    int rc = convert(c, "/nonexistent/folder", path_in_tmp("x.h5"));
    cr_assert_eq(rc, LD_EIO, "%d %s", rc, ld_convert_errmsg(c));
    cr_assert(strstr(ld_convert_errmsg(c), "/nonexistent/folder") != NULL, "%s",
              ld_convert_errmsg(c));
    ld_convert_free(c);
}

Test(convert, mean_file_of_a_converted_dataset_matches_numpy)
{
    ld_convert *c = ld_convert_create();
    ld_convert_set(c, LD_C_RESIZE_W, 40);
    ld_convert_set(c, LD_C_RESIZE_H, 30);
    const char *out = path_in_tmp("m.h5");
    cr_assert_eq(convert(c, LD_TEST_DATA "/photos", out), LD_OK, "%s", ld_convert_errmsg(c));
    ld_convert_free(c);
    double means[4];
    int channels = 0;
    char *msg = NULL;
    char proto[600];
    snprintf(proto, sizeof proto, "%s/m.binaryproto", ld_tmp);
    int rc = ld_compute_mean(out, proto, means, &channels, &msg);
    cr_assert_eq(rc, LD_OK, "%s", msg ? msg : "");
    cr_assert_eq(channels, 3);
    cr_assert_null(msg);
    /* numpy's per-channel means of the same file */
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "%s -c \"import h5py; d=h5py.File('%s')['data'][:].astype('float64'); "
             "print(*d.mean(axis=(0,2,3)))\"",
             LD_PYTHON, out);
    FILE *p = popen(cmd, "r");
    double ref[3] = {-1, -1, -1};
    cr_assert_eq(fscanf(p, "%lf %lf %lf", &ref[0], &ref[1], &ref[2]), 3);
    pclose(p);
    for (int i = 0; i < 3; i++)
        cr_assert_float_eq(means[i], ref[i], 1e-3, "channel %d: %f vs numpy %f", i, means[i],
                           ref[i]);
    struct stat st;
    cr_assert_eq(stat(proto, &st), 0);
    cr_assert_gt(st.st_size, 3 * 40 * 30 * 4, "binaryproto too small: %lld", (long long)st.st_size);
    /* a missing input is an error with a message */
    rc = ld_compute_mean("/nonexistent.h5", NULL, NULL, NULL, &msg);
    cr_assert_lt(rc, 0);
    cr_assert_not_null(msg);
    cr_assert(strstr(msg, "/nonexistent.h5") != NULL, "%s", msg);
    ld_free(msg);
}
