/*
 * HDF5 store tests: which access path each layout gets, sample bytes through the store API
 * (with and without a destination buffer), labels, and corrupt chunk tables.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"

#define FIX LD_TEST_DATA "/reader/"

TestSuite(h5_store, .timeout = 60);

static ld_store *open_store(const char *path, const char *data, const char *label)
{
    ld_err e = {0};
    ld_store *s = NULL;
    ld_store_opts o = {data, label, 0};
    int rc = ld__store_open(path, &o, &s, &e);
    cr_assert_eq(rc, LD_OK, "%s: %s", path, e.msg);
    cr_assert(s);
    return s;
}

/* Every sample of `path` through the store equals the same sample of raw_ours.h5 (the
 * fixtures hold the same pixels in every layout). */
static void same_as_ours(const char *path, const char *how)
{
    ld_store *ref = open_store(FIX "raw_ours.h5", NULL, NULL);
    ld_store *s = open_store(path, NULL, NULL);
    cr_assert(strstr(s->info.how, how), "%s: access '%s', expected '%s'", path, s->info.how, how);
    cr_assert_eq(s->info.n, 100);
    cr_assert_eq(s->info.sample_bytes, 3 * 24 * 20);
    ld_err e = {0};
    ld_store_ctx *a, *b;
    cr_assert_eq(ref->vt->ctx_create(ref, &a, &e), LD_OK);
    cr_assert_eq(s->vt->ctx_create(s, &b, &e), LD_OK);
    uint8_t dst[3 * 24 * 20], want[3 * 24 * 20];
    for (uint64_t k = 0; k < 100; k++) {
        uint64_t i = (k * 37) % 100; /* jump around */
        ld_rec ra, rb;
        cr_assert_eq(ref->vt->read(ref, a, i, want, sizeof want, &ra, &e), LD_OK, "%s", e.msg);
        if (ra.data != want) memcpy(want, ra.data, sizeof want);
        /* alternately with and without a destination */
        int rc = s->vt->read(s, b, i, k % 2 ? dst : NULL, k % 2 ? sizeof dst : 0, &rb, &e);
        cr_assert_eq(rc, LD_OK, "%s: sample %llu: %s", path, (unsigned long long)i, e.msg);
        cr_assert_eq(rb.len, sizeof want);
        cr_assert_eq(memcmp(rb.data, want, sizeof want), 0, "%s: sample %llu differs", path,
                     (unsigned long long)i);
        cr_assert_eq(rb.label, (double)((i * 7) % 10));
        cr_assert_eq(rb.c, 3);
    }
    ld_rec r;
    cr_assert_eq(s->vt->read(s, b, 100, NULL, 0, &r, &e), LD_EINVAL);
    s->vt->ctx_free(s, b);
    ref->vt->ctx_free(ref, a);
    s->vt->close(s);
    ref->vt->close(ref);
}

Test(h5_store, our_chunked_layout_is_read_directly)
{
    ld_store *s = open_store(FIX "raw_ours.h5", NULL, NULL);
    cr_assert_eq(s->info.block, 7);
    cr_assert_eq(s->info.order, LD_SORDER_BGR);
    cr_assert_eq(s->info.dtype, LD_SDT_U8);
    s->vt->close(s);
    same_as_ours(FIX "raw_ours.h5", "direct");
}

Test(h5_store, contiguous_is_read_directly)
{
    same_as_ours(FIX "raw_contig.h5", "contiguous");
}

Test(h5_store, default_chunking_and_deflate_fall_back_to_hdf5)
{
    same_as_ours(FIX "raw_default.h5", "via HDF5");
    same_as_ours(FIX "raw_deflate.h5", "via HDF5");
}

Test(h5_store, split_list_is_one_dataset)
{
    same_as_ours(FIX "split.txt", "list of 3");
}

Test(h5_store, float_data_and_float_labels_with_other_names)
{
    ld_store *s = open_store(FIX "raw_float.h5", "x", "y");
    cr_assert_eq(s->info.dtype, LD_SDT_F32);
    cr_assert_eq(s->info.sample_bytes, 4 * 3 * 24 * 20);
    cr_assert(s->info.label_float);
    cr_assert_eq(s->info.order, LD_SORDER_UNKNOWN);
    s->vt->close(s);
}

Test(h5_store, encoded_offsets_and_shapes)
{
    ld_store *s = open_store(FIX "enc.h5", NULL, NULL);
    cr_assert(s->info.encoded);
    cr_assert_eq(s->info.n, 24);
    cr_assert_eq(s->info.h, 0, "two sizes: no common height");
    cr_assert(strstr(s->info.how, "direct"), "%s", s->info.how);
    ld_err e = {0};
    ld_store_ctx *cx;
    cr_assert_eq(s->vt->ctx_create(s, &cx, &e), LD_OK);
    ld_rec r;
    cr_assert_eq(s->vt->read(s, cx, 3, NULL, 0, &r, &e), LD_OK, "%s", e.msg);
    cr_assert(r.len > 1000 && r.data[0] == 0xFF && r.data[1] == 0xD8, "not JPEG bytes");
    cr_assert(r.data[r.len - 2] == 0xFF && r.data[r.len - 1] == 0xD9, "JPEG end missing");
    cr_assert_eq(r.label, 3.0);
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
    s = open_store(FIX "enc_same.h5", NULL, NULL);
    cr_assert_eq(s->info.h, 90);
    cr_assert_eq(s->info.w, 120);
    s->vt->close(s);
}

Test(h5_store, chunk_table_beyond_the_end_of_the_file_is_refused)
{
    ld_err e = {0};
    ld_store *s = NULL;
    int rc = ld__h5_store_open(FIX "chunk_past_eof.h5", NULL, &s, &e);
    cr_assert_eq(rc, LD_EFORMAT, "%d: %s", rc, e.msg);
    cr_assert(s == NULL);
    cr_assert(strstr(e.msg, "chunk 10") && strstr(e.msg, "chunk_past_eof.h5"), "%s", e.msg);
}

Test(h5_store, missing_datasets_are_named)
{
    ld_err e = {0};
    ld_store *s = NULL;
    ld_store_opts o = {"nope", NULL, 0};
    cr_assert_eq(ld__h5_store_open(FIX "raw_ours.h5", &o, &s, &e), LD_EFORMAT);
    cr_assert(strstr(e.msg, "nope"), "%s", e.msg);
    o.data_name = NULL;
    o.label_name = "lbl";
    cr_assert_eq(ld__h5_store_open(FIX "raw_ours.h5", &o, &s, &e), LD_EFORMAT);
    cr_assert(strstr(e.msg, "lbl"), "%s", e.msg);
}

/* ---- files written by our own HDF5 writer (h5_write.c) ----------------------------------- */

#include "store/writer.h"
#include "test_desc.h"

static void write_ours(const char *path, int encoded, int n, uint8_t *pix)
{
    ld_writer_opts o = {0};
    o.path = path;
    o.desc = test_desc(&(test_rec){.encoded = encoded, .channels = 3, .rgb = 1});
    o.expected_n = (uint64_t)n;
    ld_err e = {0};
    ld_writer *w = NULL;
    cr_assert_eq(ld__h5_writer_create(&o, &w, &e), LD_OK, "%s", e.msg);
    for (int i = 0; i < n; i++) {
        ld_sample s = {pix + (size_t)i * 3 * 5 * 4,
                       3 * 5 * 4,
                       3,
                       5,
                       4,
                       i * 3,
                       "x.jpg",
                       NULL,
                       NULL,
                       0,
                       0,
                       NULL,
                       0};
        cr_assert_eq(w->vt->add(w, &s, &e), LD_OK, "%s", e.msg);
    }
    cr_assert_eq(w->vt->finish(w, &e), LD_OK, "%s", e.msg);
    w->vt->free(w);
}

Test(h5_store, files_from_our_writer_are_read_directly_with_their_attributes)
{
    char path[] = "/tmp/ld_h5_store_XXXXXX.h5";
    int fd = mkstemps(path, 3);
    cr_assert(fd >= 0);
    close(fd);
    enum { N = 50 };
    static uint8_t pix[N * 60];
    for (size_t k = 0; k < sizeof pix; k++)
        pix[k] = (uint8_t)(k * 31 + 7);
    write_ours(path, 0, N, pix);
    ld_store *s = open_store(path, NULL, NULL);
    cr_assert(strstr(s->info.how, "direct"), "writer output not read directly: %s", s->info.how);
    cr_assert_eq(s->info.n, N);
    cr_assert_eq(s->info.c, 3);
    cr_assert_eq(s->info.h, 5);
    cr_assert_eq(s->info.w, 4);
    cr_assert_eq(s->info.order, LD_SORDER_RGB, "channel_order attribute not understood");
    ld_err e = {0};
    ld_store_ctx *cx;
    cr_assert_eq(s->vt->ctx_create(s, &cx, &e), LD_OK);
    for (uint64_t i = 0; i < N; i++) {
        ld_rec r;
        cr_assert_eq(s->vt->read(s, cx, i, NULL, 0, &r, &e), LD_OK, "%s", e.msg);
        cr_assert_eq(memcmp(r.data, pix + i * 60, 60), 0, "sample %llu", (unsigned long long)i);
        cr_assert_eq(r.label, (double)(i * 3));
    }
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
    unlink(path);
}

Test(h5_store, encoded_files_from_our_writer_give_back_the_bytes)
{
    char path[] = "/tmp/ld_h5_store_XXXXXX.h5";
    int fd = mkstemps(path, 3);
    cr_assert(fd >= 0);
    close(fd);
    ld_buf jpg = {0};
    ld_err e = {0};
    cr_assert_eq(ld__read_file(LD_TEST_DATA "/photos/p01.jpg", &jpg, 1 << 24, &e), LD_OK, "%s",
                 e.msg);
    ld_writer_opts o = {0};
    o.path = path;
    o.desc = test_desc(&(test_rec){.encoded = 1, .channels = 3});
    o.expected_n = 5;
    ld_writer *w = NULL;
    cr_assert_eq(ld__h5_writer_create(&o, &w, &e), LD_OK, "%s", e.msg);
    for (int i = 0; i < 5; i++) {
        ld_sample s = {jpg.p, jpg.len, 3, 375, 500, 10 + i, "p01.jpg", NULL, NULL, 0, 0, NULL, 0};
        cr_assert_eq(w->vt->add(w, &s, &e), LD_OK, "%s", e.msg);
    }
    cr_assert_eq(w->vt->finish(w, &e), LD_OK, "%s", e.msg);
    w->vt->free(w);
    ld_store *s = open_store(path, NULL, NULL);
    cr_assert(s->info.encoded);
    cr_assert_eq(s->info.n, 5);
    cr_assert_eq(s->info.h, 375);
    cr_assert_eq(s->info.w, 500);
    ld_store_ctx *cx;
    cr_assert_eq(s->vt->ctx_create(s, &cx, &e), LD_OK);
    for (uint64_t i = 0; i < 5; i++) {
        ld_rec r;
        cr_assert_eq(s->vt->read(s, cx, 4 - i, NULL, 0, &r, &e), LD_OK, "%s", e.msg);
        cr_assert_eq(r.len, jpg.len);
        cr_assert_eq(memcmp(r.data, jpg.p, jpg.len), 0);
        cr_assert_eq(r.label, (double)(14 - i));
    }
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
    ld__buf_free(&jpg);
    unlink(path);
}

Test(h5_store, a_fifo_is_refused_without_blocking, .timeout = 10)
{
    char path[] = "/tmp/ld_fifo_XXXXXX";
    cr_assert(mkdtemp(path));
    char fifo[64];
    snprintf(fifo, sizeof fifo, "%s/f.h5", path);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    ld_err e = {0};
    ld_store *s = NULL;
    cr_assert_eq(ld__h5_store_open(fifo, NULL, &s, &e), LD_EIO, "%s", e.msg);
    cr_assert_eq(ld__store_open(fifo, NULL, &s, &e), LD_EIO, "%s", e.msg);
    cr_assert(strstr(e.msg, "f.h5"), "%s", e.msg);
    unlink(fifo);
    rmdir(path);
}

/* Label vectors as the writer makes them (/label (N, K) float32): the store reads each
 * sample's row when asked, so what it holds does not grow with N (a chunk address per 4,096
 * rows at most), and the values are the written ones. */
Test(h5_store, label_vectors_are_read_per_sample_not_held)
{
    char path[] = "/tmp/ld_h5_store_XXXXXX.h5";
    int fd = mkstemps(path, 3);
    cr_assert(fd >= 0);
    close(fd);
    enum { N = 20000, K = 5 };
    static uint8_t px[3 * 2 * 2];
    ld_desc *d = (ld_desc *)test_desc(&(test_rec){.channels = 3});
    const int64_t k = K;
    cr_assert_eq(ld__desc_add_field(d, "label", LD_ROLE_LABEL, LD_DTYPE_F32, 1, &k), LD_OK);
    d->label_dtype = LD_DTYPE_F32;
    ld_writer_opts o = {.path = path, .desc = d, .expected_n = N};
    ld_err e = {0};
    ld_writer *w = NULL;
    cr_assert_eq(ld__h5_writer_create(&o, &w, &e), LD_OK, "%s", e.msg);
    for (int i = 0; i < N; i++) {
        float v[K];
        for (int m = 0; m < K; m++)
            v[m] = (float)i + (float)m / 8 - 1000;
        ld_sample s = {px, sizeof px, 3, 2, 2, 0, "x.jpg", v, NULL, 0, 0, NULL, 0};
        cr_assert_eq(w->vt->add(w, &s, &e), LD_OK, "%s", e.msg);
    }
    cr_assert_eq(w->vt->finish(w, &e), LD_OK, "%s", e.msg);
    w->vt->free(w);
    free(d->field[0].name); /* (the test's own description: only the field is allocated) */
    d->n_fields = 0;

    ld_store *s = open_store(path, NULL, NULL);
    cr_assert_eq(s->info.label_k, K);
    cr_assert(s->info.label_float);
    cr_assert_lt(s->info.store_bytes, (size_t)N, "held %zu bytes for %d label vectors",
                 s->info.store_bytes, N);
    ld_store_ctx *cx;
    cr_assert_eq(s->vt->ctx_create(s, &cx, &e), LD_OK);
    const uint64_t probe[] = {0, 1, 4095, 4096, 12345, N - 1};
    for (size_t j = 0; j < sizeof probe / sizeof *probe; j++) {
        double v[K];
        cr_assert_eq(s->vt->label_vec(s, cx, probe[j], v, &e), LD_OK, "%s", e.msg);
        for (int m = 0; m < K; m++)
            cr_assert_eq(v[m], (double)((float)probe[j] + (float)m / 8 - 1000), "sample %llu",
                         (unsigned long long)probe[j]);
    }
    double v[K];
    cr_assert_eq(s->vt->label_vec(s, cx, N, v, &e), LD_EINVAL);
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
    unlink(path);
}
