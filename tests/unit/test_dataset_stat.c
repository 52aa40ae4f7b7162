/*
 * Issue 14 item 4: ld_dataset_stat() gives what a dataset holds as a struct. Each case makes a
 * real dataset (ours with ld_convert, Caffe's with python-lmdb + protobuf, another tool's with
 * h5py) and compares the struct with what tests/python/dataset_stat_ref.py reads with h5py,
 * python-lmdb, json and PIL (one line each, compared as strings), and with what the reader
 * delivers from the same path with default parameters.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "libdata/reader.h"
#include "test_tmp.h"

TestSuite(dataset_stat, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 300);

#define TREE LD_TEST_DATA "/tree"

static void format_line(const ld_dataset_info *d, char *out, size_t cap)
{
    static const char *const modes[] = {"squash", "crop", "pad", "max"};
    char resize[64] = "-", classes[4096] = "-";
    if (d->resize_mode >= LD_RESIZE_SQUASH && d->resize_mode <= LD_RESIZE_MAX)
        snprintf(resize, sizeof resize, "%s:%dx%d", modes[d->resize_mode - LD_RESIZE_SQUASH],
                 d->resize_w, d->resize_h);
    if (d->num_classes) {
        size_t at = 0;
        for (size_t i = 0; i < d->num_classes; i++) {
            if (i) at += (size_t)snprintf(classes + at, sizeof classes - at, ",");
            for (const unsigned char *p = (const unsigned char *)d->class_names[i]; *p; p++)
                at += (size_t)snprintf(classes + at, sizeof classes - at, "%02x", *p);
        }
    }
    snprintf(out, cap,
             "format=%s ours=%d files=%u samples=%llu encoded=%d encoding=%s quality=%d "
             "dtype=%s label=%s shape=%dx%dx%d first=%d order=%s resize=%s classes=%s",
             d->format == LD_FORMAT_LMDB   ? "lmdb"
             : d->format == LD_FORMAT_HDF5 ? "hdf5"
                                           : "?",
             d->by_libdata, (unsigned)d->files, (unsigned long long)d->samples, d->encoded,
             d->encoding ? d->encoding : "-", d->quality, d->dtype == LD_DTYPE_F32 ? "f32" : "u8",
             d->label_dtype == LD_DTYPE_F32 ? "f32" : "i32", d->channels, d->height, d->width,
             d->shape_of_first,
             d->channel_order == LD_CHANNELS_BGR   ? "BGR"
             : d->channel_order == LD_CHANNELS_RGB ? "RGB"
                                                   : "-",
             resize, classes);
}

static void run_python(const char *args, char *out, size_t cap)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s", LD_PYTHON, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "%s", cmd);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    while (n && out[n - 1] == '\n')
        out[--n] = 0;
    cr_assert_eq(pclose(p), 0, "%s failed: %s", cmd, out);
}

/* The struct against the independent reading, and against the reader's view. */
static void check(const char *path)
{
    ld_dataset_info *d = NULL;
    char *err = NULL, ours[8192], want[8192], args[1024];
    int rc = ld_dataset_stat(path, &d, &err);
    cr_assert_eq(rc, LD_OK, "%s: %s", path, err ? err : "?");
    cr_assert_null(err);
    cr_assert_str_eq(d->path, path);
    format_line(d, ours, sizeof ours);
    snprintf(args, sizeof args, "'%s/tests/python/dataset_stat_ref.py' '%s'", LD_SOURCE_DIR, path);
    run_python(args, want, sizeof want);
    cr_expect_str_eq(ours, want, "%s:\n  ld_dataset_stat: %s\n  h5py/lmdb:       %s", path, ours,
                     want);

    /* What the reader delivers with default parameters (a small crop: the sizes may vary). */
    ld_reader *r = ld_reader_create();
    int64_t v;
    ld_reader_set(r, LD_R_CROP_W, 8);
    ld_reader_set(r, LD_R_CROP_H, 8);
    ld_reader_set(r, LD_R_THREADS, 1);
    cr_assert_eq(ld_reader_open(r, path), LD_OK, "%s", ld_reader_errmsg(r));
    ld_reader_get_info(r, LD_R_INFO_SAMPLES, &v);
    cr_expect_eq((uint64_t)v, d->samples, "%s: samples", path);
    ld_reader_get_info(r, LD_R_INFO_C, &v);
    cr_expect_eq(v, d->channels, "%s: channels", path);
    ld_reader_get_info(r, LD_R_INFO_ENCODED, &v);
    cr_expect_eq(v, d->encoded, "%s: encoded", path);
    ld_reader_get_info(r, LD_R_INFO_ORDER, &v);
    if (d->channels == 3)
        cr_expect_eq(v, d->channel_order ? d->channel_order : LD_CHANNELS_AS_STORED,
                     "%s: channel order: reader %lld, stat %d", path, (long long)v,
                     d->channel_order);
    ld_reader_free(r);
    ld_free(d);
}

typedef struct setting {
    ld_convert_param p;
    int64_t v;
} setting;

static void convert(const char *in, const char *out, const setting *s, size_t n)
{
    ld_convert *c = ld_convert_create();
    ld_convert_set(c, LD_C_THREADS, 2);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(ld_convert_set(c, s[i].p, s[i].v), LD_OK, "%s", ld_convert_errmsg(c));
    cr_assert_eq(ld_convert_run(c, in, out), LD_OK, "%s", ld_convert_errmsg(c));
    ld_convert_free(c);
}

static const char *tmp_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", ld_tmp, name);
    return buf;
}

Test(dataset_stat, ours_hdf5_raw_with_classes)
{
    char out[512];
    const setting s[] = {
        {LD_C_RESIZE_W, 16}, {LD_C_RESIZE_H, 12}, {LD_C_RESIZE_MODE, LD_RESIZE_CROP}};
    convert(TREE, tmp_path(out, sizeof out, "raw.h5"), s, 3);
    check(out);
}

Test(dataset_stat, ours_hdf5_split_list_gray)
{
    char out[512];
    const setting s[] = {
        {LD_C_RESIZE_W, 16}, {LD_C_RESIZE_H, 16}, {LD_C_GRAY, 1}, {LD_C_SPLIT_BYTES, 600}};
    convert(TREE, tmp_path(out, sizeof out, "split.h5"), s, 4);
    check(tmp_path(out, sizeof out, "split.txt"));
    ld_dataset_info *d;
    cr_assert_eq(ld_dataset_stat(out, &d, NULL), LD_OK);
    cr_expect_gt(d->files, 1, "a list of %u files", d->files);
    ld_free(d);
}

Test(dataset_stat, ours_hdf5_png_rgb_sizes_vary)
{
    char out[512];
    const setting s[] = {{LD_C_ENCODE_PNG, 1}, {LD_C_CHANNEL_ORDER, LD_CHANNELS_RGB}};
    convert(TREE, tmp_path(out, sizeof out, "png.h5"), s, 2);
    check(out);
}

Test(dataset_stat, ours_lmdb_jpeg_rgb)
{
    char out[512];
    const setting s[] = {{LD_C_QUALITY, 80},
                         {LD_C_RESIZE_W, 20},
                         {LD_C_RESIZE_H, 12},
                         {LD_C_CHANNEL_ORDER, LD_CHANNELS_RGB}};
    convert(TREE, tmp_path(out, sizeof out, "jpeg.lmdb"), s, 4);
    check(out);
}

Test(dataset_stat, ours_lmdb_original_bytes_shape_of_the_first)
{
    char out[512];
    const setting s[] = {{LD_C_ENCODED, 1}};
    convert(TREE, tmp_path(out, sizeof out, "orig.lmdb"), s, 1);
    check(out);
}

Test(dataset_stat, ours_lmdb_class_names_that_are_not_utf8)
{
    char src[512], out[512], cmd[2048];
    tmp_path(src, sizeof src, "src");
    /* names as bytes: Latin-1 e-acute, a newline, a quote and a backslash */
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && cd '%s' && for d in \"$(printf 'caf\\351')\" "
             "\"$(printf 'new\\nline')\" 'q\"uote\\back'; do mkdir \"$d\" && "
             "cp '%s/bird/h.jpg' \"$d/x.jpg\" || exit 1; done",
             src, src, TREE);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    const setting s[] = {{LD_C_RESIZE_W, 8}, {LD_C_RESIZE_H, 8}};
    convert(src, tmp_path(out, sizeof out, "names.lmdb"), s, 2);
    check(out);
    convert(src, tmp_path(out, sizeof out, "names.h5"), s, 2);
    check(out);
}

Test(dataset_stat, caffe_lmdb_raw_and_encoded_without_sidecar)
{
    char out[512], args[1024], res[256];
    const char *kinds[] = {"raw", "encoded"};
    for (int k = 0; k < 2; k++) {
        snprintf(out, sizeof out, "%s/caffe_%s", ld_tmp, kinds[k]);
        snprintf(args, sizeof args, "'%s/tests/python/lmdb_make_caffe_db.py' '%s' %s",
                 LD_SOURCE_DIR, out, kinds[k]);
        run_python(args, res, sizeof res);
        check(out);
    }
}

Test(dataset_stat, another_tools_hdf5_float)
{
    char out[512], args[2048], res[256];
    tmp_path(out, sizeof out, "h5py.h5");
    snprintf(args, sizeof args,
             "-c \"import h5py, numpy as np; f = h5py.File('%s', 'w'); "
             "f['data'] = np.random.default_rng(1).random((10, 3, 9, 11), dtype=np.float32); "
             "f['label'] = np.arange(10, dtype=np.float32) / 2; f.close()\"",
             out);
    run_python(args, res, sizeof res);
    check(out);
}

Test(dataset_stat, errors_name_the_path_and_leave_no_result)
{
    ld_dataset_info *d = (ld_dataset_info *)1;
    char *err = (char *)1;
    const char *missing = LD_TEST_DATA "/no/such.h5";
    cr_assert_eq(ld_dataset_stat(missing, &d, &err), LD_EIO);
    cr_assert_null(d);
    cr_assert(err && strstr(err, missing), "%s", err ? err : "(null)");
    ld_free(err);

    d = (ld_dataset_info *)1;
    cr_assert_eq(ld_dataset_stat(TREE, &d, &err), LD_EFORMAT, "a folder of images");
    cr_assert_null(d);
    cr_assert(err && strstr(err, "convert"), "%s", err ? err : "(null)");
    ld_free(err);

    cr_assert_eq(ld_dataset_stat(NULL, &d, NULL), LD_EINVAL);
    cr_assert_eq(ld_dataset_stat(TREE, NULL, &err), LD_EINVAL);
    cr_assert_not_null(err);
    ld_free(err);
}

Test(dataset_stat, a_damaged_class_list_in_the_sidecar_is_an_error)
{
    char out[512], side[600], cmd[2048];
    const setting s[] = {{LD_C_RESIZE_W, 8}, {LD_C_RESIZE_H, 8}};
    convert(TREE, tmp_path(out, sizeof out, "bad.lmdb"), s, 2);
    snprintf(side, sizeof side, "%s/libdata.json", out);
    snprintf(cmd, sizeof cmd,
             "sed -i 's/^\"class_names\": \\[\"bird\"/\"class_names\": [bird/' '%s'", side);
    cr_assert_eq(system(cmd), 0);
    ld_dataset_info *d = (ld_dataset_info *)1;
    char *err = NULL;
    cr_assert_eq(ld_dataset_stat(out, &d, &err), LD_EFORMAT);
    cr_assert_null(d);
    cr_assert(err && strstr(err, "libdata.json") && strstr(err, "class_names"), "%s",
              err ? err : "(null)");
    ld_free(err);
}
