/* HDF5 writer: files checked by an independent reader (h5py via tests/python/check_h5.py),
 * h5dump, byte-for-byte reproducibility, split output, atomic publication, describe. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_tmp.h"
#include "store/writer.h"
#include "test_desc.h"
#include "libdata/convert.h"

#define CHECK_PY LD_PYTHON " " LD_SOURCE_DIR "/tests/python/check_h5.py"

static const char *const classes[] = {"bird", "car", "cat"};

TestSuite(h5_write, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 120);

static char *tpath(const char *name)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 512, "%s/%s", ld_tmp, name);
    return p;
}

static ld_writer_opts base_opts(const char *path, int encoded, int h, int w)
{
    ld_writer_opts o = {0};
    o.path = path;
    o.desc = test_desc(&(test_rec){.encoded = encoded,
                                   .encoding = "jpeg",
                                   .channels = 3,
                                   .n_classes = 3,
                                   .classes = classes,
                                   .quality = encoded ? 90 : 0,
                                   .resize_w = w,
                                   .resize_h = h,
                                   .source = "/some/input",
                                   .note = "test note"});
    return o;
}

/* Same formulas as check_h5.py. */
static void raw_pixels(int i, uint8_t *px, size_t n)
{
    for (size_t j = 0; j < n; j++)
        px[j] = (uint8_t)(((uint64_t)i * 31 + j * 7) % 251);
}

static size_t enc_bytes(int i, uint8_t *b)
{
    size_t n = 1000 + ((size_t)i * 7919) % 60000;
    for (size_t j = 0; j < n; j++)
        b[j] = (uint8_t)((i + j * 13) % 256);
    return n;
}

static void rel_of(int i, char *out, size_t cap)
{
    snprintf(out, cap, "cls%d/img_%04d.jpg", i % 3, i);
}

static void write_raw(const ld_writer_opts *o, int n, int c, int h, int w, uint64_t *files_out)
{
    ld_err e = {0};
    ld_writer *wr = NULL;
    int rc = ld__h5_writer_create(o, &wr, &e);
    cr_assert_eq(rc, LD_OK, "create: %s", e.msg);
    size_t len = (size_t)c * h * w;
    uint8_t *px = malloc(len);
    cr_assert_not_null(px);
    char rel[64];
    for (int i = 0; i < n; i++) {
        raw_pixels(i, px, len);
        rel_of(i, rel, sizeof rel);
        ld_sample s = {px, len, c, h, w, i % 3, rel, NULL, NULL, 0, 0, NULL, 0};
        rc = wr->vt->add(wr, &s, &e);
        cr_assert_eq(rc, LD_OK, "add %d: %s", i, e.msg);
    }
    free(px);
    rc = wr->vt->finish(wr, &e);
    cr_assert_eq(rc, LD_OK, "finish: %s", e.msg);
    if (files_out) *files_out = wr->files_out;
    wr->vt->free(wr);
}

static uint64_t write_encoded_files(const ld_writer_opts *o, int n);

static void write_encoded(const ld_writer_opts *o, int n)
{
    cr_assert_eq(write_encoded_files(o, n), 1);
}

static uint64_t write_encoded_files(const ld_writer_opts *o, int n)
{
    ld_err e = {0};
    ld_writer *wr = NULL;
    int rc = ld__h5_writer_create(o, &wr, &e);
    cr_assert_eq(rc, LD_OK, "create: %s", e.msg);
    uint8_t *b = malloc(70000);
    char rel[64];
    for (int i = 0; i < n; i++) {
        size_t len = enc_bytes(i, b);
        rel_of(i, rel, sizeof rel);
        ld_sample s = {b, len, 3, 10 + i % 4, 20 + i % 3, i % 3, rel, NULL, NULL, 0, 0, NULL, 0};
        rc = wr->vt->add(wr, &s, &e);
        cr_assert_eq(rc, LD_OK, "add %d: %s", i, e.msg);
    }
    free(b);
    cr_assert_eq(wr->vt->finish(wr, &e), LD_OK, "finish: %s", e.msg);
    uint64_t files = wr->files_out;
    wr->vt->free(wr);
    return files;
}

static int run(const char *fmt, const char *a)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

Test(h5_write, raw_file_reads_back_in_h5py_with_chunks_and_attributes)
{
    /* 3x64x64 = 12 KiB samples: 85 per 1 MiB chunk, so 200 samples span 3 chunks */
    const char *p = tpath("raw.h5");
    ld_writer_opts o = base_opts(p, 0, 64, 64);
    uint64_t files = 0;
    write_raw(&o, 200, 3, 64, 64, &files);
    cr_assert_eq(files, 1);
    char arg[600];
    snprintf(arg, sizeof arg, "%s 200 3 64 64", p);
    cr_assert_eq(run(CHECK_PY " raw %s", arg), 0, "h5py check failed for %s", p);
    cr_assert_eq(run("h5dump -H '%s' > /dev/null", p), 0, "h5dump -H failed on %s", p);
    cr_assert_eq(dir_entries(ld_tmp), 1, "temporary left beside the output");
}

Test(h5_write, small_samples_fill_one_partial_chunk)
{
    const char *p = tpath("small.h5");
    ld_writer_opts o = base_opts(p, 0, 17, 23);
    write_raw(&o, 37, 3, 17, 23, NULL);
    char arg[600];
    snprintf(arg, sizeof arg, "%s 37 3 17 23", p);
    cr_assert_eq(run(CHECK_PY " raw %s", arg), 0, "h5py check failed for %s", p);
}

Test(h5_write, deflate_sets_the_gzip_filter)
{
    const char *p = tpath("z.hdf5");
    ld_writer_opts o = base_opts(p, 0, 32, 32);
    o.deflate = 4;
    write_raw(&o, 50, 3, 32, 32, NULL);
    char arg[600];
    snprintf(arg, sizeof arg, "%s 50 3 32 32 --deflate 4", p);
    cr_assert_eq(run(CHECK_PY " raw %s", arg), 0, "h5py check failed for %s", p);
}

Test(h5_write, encoded_file_reads_back_in_h5py)
{
    /* ~31 KB per sample: 60 samples span two 1 MiB chunks of /encoded */
    const char *p = tpath("enc.h5");
    ld_writer_opts o = base_opts(p, 1, 0, 0);
    write_encoded(&o, 60);
    char arg[600];
    snprintf(arg, sizeof arg, "%s 60", p);
    cr_assert_eq(run(CHECK_PY " encoded %s", arg), 0, "h5py check failed for %s", p);
    cr_assert_eq(run("h5dump -H '%s' > /dev/null", p), 0, "h5dump -H failed on %s", p);
}

Test(h5_write, identical_input_gives_identical_bytes)
{
    const char *a = tpath("a.h5"), *b = tpath("b.h5");
    ld_writer_opts oa = base_opts(a, 0, 64, 64), ob = base_opts(b, 0, 64, 64);
    write_raw(&oa, 100, 3, 64, 64, NULL);
    sleep(1); /* HDF5 time stamps have 1 s resolution: they must not be in the file */
    write_raw(&ob, 100, 3, 64, 64, NULL);
    char arg[1100];
    snprintf(arg, sizeof arg, "'%s' '%s'", a, b);
    cr_assert_eq(run("cmp %s", arg), 0, "raw files differ: %s", arg);
    const char *c = tpath("c.h5"), *d = tpath("d.h5");
    ld_writer_opts oc = base_opts(c, 1, 0, 0), od = base_opts(d, 1, 0, 0);
    write_encoded(&oc, 40);
    write_encoded(&od, 40);
    snprintf(arg, sizeof arg, "'%s' '%s'", c, d);
    cr_assert_eq(run("cmp %s", arg), 0, "encoded files differ: %s", arg);
}

Test(h5_write, split_writes_numbered_files_and_a_caffe_list)
{
    /* 12,288-byte samples, limit 100,000 bytes: 8 per file, 50 samples -> 7 files */
    const char *p = tpath("parts.h5");
    ld_writer_opts o = base_opts(p, 0, 64, 64);
    o.split_bytes = 100000;
    uint64_t files = 0;
    write_raw(&o, 50, 3, 64, 64, &files);
    cr_assert_eq(files, 7, "files_out %llu", (unsigned long long)files);
    cr_assert_eq(access(p, F_OK), -1, "%s should not exist with split", p);
    char arg[600];
    snprintf(arg, sizeof arg, "%s 50 100000 3 64 64", tpath("parts.txt"));
    cr_assert_eq(run(CHECK_PY " split %s > /dev/null", arg), 0, "split check failed");
    cr_assert_eq(dir_entries(ld_tmp), 8, "7 files + list expected, found %d entries",
                 dir_entries(ld_tmp));

    ld_buf out = {0};
    ld_err e = {0};
    cr_assert_eq(ld__h5_describe(tpath("parts.txt"), &out, &e), LD_OK, "%s", e.msg);
    cr_assert_not_null(strstr((char *)out.p, "7 files, 50 samples"), "%s", (char *)out.p);
    ld__buf_free(&out);
}

Test(h5_write, encoded_split_restarts_offsets_in_each_file)
{
    /* samples of 1,000..61,000 bytes, at most 200,000 bytes of /encoded per file */
    const char *p = tpath("encparts");
    ld_writer_opts o = base_opts(p, 1, 0, 0);
    o.split_bytes = 200000;
    uint64_t files = write_encoded_files(&o, 40);
    cr_assert_gt(files, 4, "files_out %llu", (unsigned long long)files);
    char arg[600];
    snprintf(arg, sizeof arg, "%s 40 200000", tpath("encparts.txt"));
    cr_assert_eq(run(CHECK_PY " split-encoded %s > /dev/null", arg), 0, "split check failed");
    cr_assert_eq(access(tpath("encparts-00000.h5"), F_OK), 0, "first part missing");
    cr_assert_eq((uint64_t)dir_entries(ld_tmp), files + 1, "files + list expected");
}

Test(h5_write, many_class_names_fit_in_the_attributes)
{
    /* 30,000 names: over the 64 KiB that an HDF5 1.6-format object header holds */
    enum { NC = 30000 };
    char **names = malloc(NC * sizeof *names);
    for (int i = 0; i < NC; i++)
        names[i] = ld__asprintf("n%05d_synset_name", i);
    const char *p = tpath("many.h5");
    ld_writer_opts o = base_opts(p, 0, 8, 8);
    o.desc = test_desc(&(test_rec){.channels = 3,
                                   .n_classes = NC,
                                   .classes = (const char *const *)names,
                                   .resize_w = 8,
                                   .resize_h = 8,
                                   .source = "/some/input",
                                   .note = "test note"});
    ld_err e = {0};
    ld_writer *wr = NULL;
    cr_assert_eq(ld__h5_writer_create(&o, &wr, &e), LD_OK, "%s", e.msg);
    uint8_t px[3 * 8 * 8] = {0};
    ld_sample smp = {px, sizeof px, 3, 8, 8, NC - 1, "x.jpg", NULL, NULL, 0, 0, NULL, 0};
    cr_assert_eq(wr->vt->add(wr, &smp, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(wr->vt->finish(wr, &e), LD_OK, "%s", e.msg);
    wr->vt->free(wr);
    for (int i = 0; i < NC; i++)
        free(names[i]);
    free(names);
    cr_assert_eq(run(LD_PYTHON
                     " -c \"import h5py,sys; a=h5py.File(sys.argv[1],'r').attrs; "
                     "n=a['class_names']; assert len(n)==30000 and n[29999]=='n29999_synset_name'"
                     " and a['num_classes']==30000, n[:2]\" %s",
                     p),
                 0, "h5py cannot read 30,000 class names");
}

Test(h5_write, empty_dataset_takes_the_resize_shape_or_fails_without_one)
{
    const char *p = tpath("empty.h5");
    ld_writer_opts o = base_opts(p, 0, 16, 24);
    write_raw(&o, 0, 3, 16, 24, NULL);
    cr_assert_eq(run(LD_PYTHON " -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
                               "assert f['data'].shape==(0,3,16,24) and f['label'].shape==(0,), "
                               "f['data'].shape\" %s",
                     p),
                 0, "empty file not readable as (0,3,16,24)");

    ld_writer_opts o2 = base_opts(tpath("nosize.h5"), 0, 0, 0);
    ld_err e = {0};
    ld_writer *wr = NULL;
    cr_assert_eq(ld__h5_writer_create(&o2, &wr, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(wr->vt->finish(wr, &e), LD_EINVAL, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "no image"), "%s", e.msg);
    wr->vt->free(wr);
    cr_assert_eq(access(tpath("nosize.h5"), F_OK), -1, "failed finish published a file");
}

Test(h5_write, raw_shape_mismatch_names_the_file_and_suggests_resize)
{
    const char *p = tpath("mm.h5");
    ld_writer_opts o = base_opts(p, 0, 0, 0);
    ld_err e = {0};
    ld_writer *wr = NULL;
    cr_assert_eq(ld__h5_writer_create(&o, &wr, &e), LD_OK, "%s", e.msg);
    uint8_t px[3 * 8 * 10] = {0};
    ld_sample s1 = {px, 3 * 8 * 10, 3, 8, 10, 0, "a/first.jpg", NULL, NULL, 0, 0, NULL, 0};
    cr_assert_eq(wr->vt->add(wr, &s1, &e), LD_OK, "%s", e.msg);
    ld_sample s2 = {px, 3 * 10 * 8, 3, 10, 8, 1, "b/second.jpg", NULL, NULL, 0, 0, NULL, 0};
    cr_assert_eq(wr->vt->add(wr, &s2, &e), LD_EINVAL, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "b/second.jpg"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "3x10x8"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "3x8x10"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "resize_w"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "quality"), "%s", e.msg);
    cr_assert_eq(e.reason, LD_WHY_SHAPE_DIFFERS); /* the converter names resize_w for it */
    wr->vt->free(wr);
    cr_assert_eq(dir_entries(ld_tmp), 0, "free without finish left files behind");
}

Test(h5_write, free_without_finish_leaves_nothing)
{
    const char *p = tpath("gone.h5");
    ld_writer_opts o = base_opts(p, 0, 64, 64);
    o.split_bytes = 100000;
    ld_err e = {0};
    ld_writer *wr = NULL;
    cr_assert_eq(ld__h5_writer_create(&o, &wr, &e), LD_OK, "%s", e.msg);
    static uint8_t px[3 * 64 * 64];
    for (int i = 0; i < 20; i++) { /* crosses two split boundaries */
        ld_sample s = {px, sizeof px, 3, 64, 64, 0, "x.jpg", NULL, NULL, 0, 0, NULL, 0};
        cr_assert_eq(wr->vt->add(wr, &s, &e), LD_OK, "%s", e.msg);
    }
    cr_assert_gt(dir_entries(ld_tmp), 0, "temporaries should exist while writing");
    wr->vt->free(wr);
    cr_assert_eq(dir_entries(ld_tmp), 0, "free without finish left %d entries",
                 dir_entries(ld_tmp));
}

Test(h5_write, describe_reports_count_shape_and_classes)
{
    const char *p = tpath("d.h5");
    ld_writer_opts o = base_opts(p, 0, 16, 24);
    write_raw(&o, 30, 3, 16, 24, NULL);
    ld_buf out = {0};
    ld_err e = {0};
    cr_assert_eq(ld__h5_describe(p, &out, &e), LD_OK, "%s", e.msg);
    const char *t = (const char *)out.p;
    cr_assert_not_null(strstr(t, "samples: 30"), "%s", t);
    cr_assert_not_null(strstr(t, "3 x 16 x 24"), "%s", t);
    cr_assert_not_null(strstr(t, "classes: 3: bird, car, cat"), "%s", t);
    cr_assert_not_null(strstr(t, "labels: min 0, max 2"), "%s", t);
    cr_assert_not_null(strstr(t, "BGR"), "%s", t);
    cr_assert_not_null(strstr(t, "no filter"), "%s", t);
    cr_assert_not_null(strstr(t, "file size:"), "%s", t);
    ld__buf_free(&out);

    /* encoded */
    const char *q = tpath("e.h5");
    ld_writer_opts oe = base_opts(q, 1, 0, 0);
    write_encoded(&oe, 5);
    cr_assert_eq(ld__h5_describe(q, &out, &e), LD_OK, "%s", e.msg);
    t = (const char *)out.p;
    cr_assert_not_null(strstr(t, "storage: encoded (jpeg)"), "%s", t);
    cr_assert_not_null(strstr(t, "samples: 5"), "%s", t);
    ld__buf_free(&out);
}

Test(h5_write, describe_handles_foreign_files_and_rejects_non_hdf5)
{
    const char *p = tpath("foreign.h5");
    cr_assert_eq(run(CHECK_PY " foreign %s", p), 0);
    ld_buf out = {0};
    ld_err e = {0};
    cr_assert_eq(ld__h5_describe(p, &out, &e), LD_OK, "%s", e.msg);
    const char *t = (const char *)out.p;
    cr_assert_not_null(strstr(t, "/data: (4, 3, 8, 8) float32"), "%s", t);
    cr_assert_not_null(strstr(t, "/label: (4) float32"), "%s", t);
    cr_assert_not_null(strstr(t, "samples: 4"), "%s", t);
    ld__buf_free(&out);

    const char *junk = tpath("junk.h5");
    FILE *f = fopen(junk, "wb");
    fputs("this is not hdf5\n", f);
    fclose(f);
    cr_assert_eq(ld__h5_describe(junk, &out, &e), LD_EFORMAT, "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "junk.h5"), "%s", e.msg);
    cr_assert_eq(ld__h5_describe(tpath("missing.h5"), &out, &e), LD_EIO, "%s", e.msg);
    ld__buf_free(&out);
}

Test(h5_write, unwritable_output_is_an_io_error_naming_the_path)
{
    ld_writer_opts o = base_opts("/nonexistent-dir/x.h5", 0, 8, 8);
    ld_err e = {0};
    ld_writer *wr = NULL;
    cr_assert_eq(ld__h5_writer_create(&o, &wr, &e), LD_EIO, "%s", e.msg);
    cr_assert_null(wr);
    cr_assert_not_null(strstr(e.msg, "/nonexistent-dir/x.h5"), "%s", e.msg);
}

Test(h5_write, no_hdf5_output_on_stderr)
{
    /* The library must not print: HDF5's own error stack printing stays off. */
    fflush(stderr);
    int saved = dup(2);
    FILE *cap = tmpfile();
    dup2(fileno(cap), 2);
    ld_writer_opts o = base_opts("/nonexistent-dir/x.h5", 0, 8, 8);
    ld_err e = {0};
    ld_writer *wr = NULL;
    ld__h5_writer_create(&o, &wr, &e);
    ld_buf out = {0};
    ld__h5_describe(LD_SOURCE_DIR "/CMakeLists.txt", &out, &e);
    ld__buf_free(&out);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    long size = ftell(cap);
    fseek(cap, 0, SEEK_END);
    size = ftell(cap);
    fclose(cap);
    cr_assert_eq(size, 0, "HDF5 printed %ld bytes to stderr", size);
}
