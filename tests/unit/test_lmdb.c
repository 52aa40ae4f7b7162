/* LMDB writer, store, describe and mean, cross-checked with python3-lmdb + python3-protobuf
 * (tests/python/lmdb_*.py), i.e. with code that is not ours. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_tmp.h"
#include "store/lmdb/lmdb_store.h"
#include "reader/mean.h"
#include "store/store.h"
#include "store/writer.h"
#include "test_desc.h"

static ld_err err;

TestSuite(lmdb, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 120);

static int run(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

/* The synthetic image of record i as planar CHW BGR (see lmdb_check_written.py). */
static void pattern(uint8_t *px, int i, int h, int w)
{
    size_t plane = (size_t)h * (size_t)w;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t p = (size_t)y * (size_t)w + (size_t)x;
            px[p] = (uint8_t)(x + y + 2 * i);         /* B */
            px[plane + p] = (uint8_t)(y * 5);         /* G */
            px[2 * plane + p] = (uint8_t)(x * 3 + i); /* R */
        }
}

static void check_mean(const char *db);

static const char *const classes[] = {"cls0", "cls1", "cls2"};

static ld_writer_opts opts_for(const char *path, int encoded)
{
    ld_writer_opts o = {.path = path,
                        .desc = test_desc(&(test_rec){.encoded = encoded,
                                                      .channels = 3,
                                                      .n_classes = 3,
                                                      .classes = classes,
                                                      .source = "synthetic",
                                                      .note = "test_lmdb"})};
    return o;
}

/* Write n records of h x w; returns the writer (not freed) when keep != 0. */
static int write_db(const char *path, int encoded, int n, int h, int w, int finish)
{
    ld_writer_opts o = opts_for(path, encoded);
    ld_writer *wr = NULL;
    int rc = ld__lmdb_writer_create(&o, &wr, &err);
    cr_assert_eq(rc, LD_OK, "create: %s", err.msg);
    size_t cap = encoded ? (size_t)(102 + n) : (size_t)3 * h * w;
    uint8_t *buf = malloc(cap);
    char rel[64];
    for (int i = 0; i < n && rc == LD_OK; i++) {
        ld_sample s = {.data = buf, .c = 3, .h = h, .w = w, .label = i % 5, .rel = rel};
        snprintf(rel, sizeof rel, "cls%d/img_%d.png", i % 3, i);
        if (encoded) {
            buf[0] = 0xff;
            buf[1] = 0xd8;
            for (int j = 0; j < 100 + i; j++)
                buf[2 + j] = (uint8_t)(i + j);
            s.len = (size_t)(102 + i);
        } else {
            pattern(buf, i, h, w);
            s.len = cap;
        }
        rc = wr->vt->add(wr, &s, &err);
    }
    if (rc == LD_OK && finish) rc = wr->vt->finish(wr, &err);
    wr->vt->free(wr);
    free(buf);
    return rc;
}

/* Names in dir (other than . and ..). */
static int count_entries(const char *d)
{
    DIR *dd = opendir(d);
    int n = 0;
    struct dirent *de;
    while (dd && (de = readdir(dd)))
        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    if (dd) closedir(dd);
    return n;
}

Test(lmdb, raw_database_reads_back_in_python_lmdb_and_protobuf)
{
    char db[300];
    snprintf(db, sizeof db, "%s/out.lmdb", ld_tmp);
    cr_assert_eq(write_db(db, 0, 25, 16, 20, 1), LD_OK, "%s", err.msg);
    cr_assert_eq(run("%s %s/tests/python/lmdb_check_written.py %s raw 25 16 20", LD_PYTHON,
                     LD_SOURCE_DIR, db),
                 0, "python cross-check failed");
    cr_assert_eq(count_entries(ld_tmp), 1, "temporary left behind");
}

Test(lmdb, encoded_database_reads_back_in_python_lmdb_and_protobuf)
{
    char db[300];
    snprintf(db, sizeof db, "%s/enc.lmdb", ld_tmp);
    cr_assert_eq(write_db(db, 1, 12, 30, 40, 1), LD_OK, "%s", err.msg);
    cr_assert_eq(run("%s %s/tests/python/lmdb_check_written.py %s encoded 12 30 40", LD_PYTHON,
                     LD_SOURCE_DIR, db),
                 0, "python cross-check failed");
    ld_store *s;
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert(s->info.encoded && s->info.c == 3 && s->info.h == 30 && s->info.w == 40,
              "the sidecar gives the common shape");
    cr_assert_eq(s->info.max_pixels, 30 * 40);
    s->vt->close(s);
}

Test(lmdb, store_reads_our_database_by_index_in_any_order)
{
    char db[300];
    snprintf(db, sizeof db, "%s/out.lmdb", ld_tmp);
    cr_assert_eq(write_db(db, 0, 30, 8, 6, 1), LD_OK, "%s", err.msg);
    ld_store *s;
    ld_store_ctx *cx;
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->info.n, 30);
    cr_assert(s->info.c == 3 && s->info.h == 8 && s->info.w == 6 && !s->info.encoded);
    cr_assert_eq(s->info.sample_bytes, 3 * 8 * 6);
    cr_assert_eq(s->info.order, LD_SORDER_BGR);
    cr_assert(strstr(s->info.how, "record index"), "%s", s->info.how);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    uint8_t want[3 * 8 * 6];
    const uint64_t batch[4] = {29, 3, 17, 99};
    s->vt->will_read(s, cx, batch, 4); /* advisory; out-of-range ignored */
    for (int k = 0; k < 60; k++) {
        int i = (k * 17 + 5) % 30;
        ld_rec r;
        cr_assert_eq(s->vt->read(s, cx, (uint64_t)i, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
        pattern(want, i, 8, 6);
        cr_assert_eq(r.len, sizeof want);
        cr_assert_arr_eq(r.data, want, sizeof want, "record %d pixels", i);
        cr_assert_eq(r.label, i % 5);
    }
    ld_rec r;
    cr_assert_eq(s->vt->read(s, cx, 30, NULL, 0, &r, &err), LD_EINVAL);
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
    /* the data.mdb file itself opens too */
    char file[400];
    snprintf(file, sizeof file, "%s/data.mdb", db);
    cr_assert_eq(ld__lmdb_store_open(file, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->info.n, 30);
    s->vt->close(s);
}

Test(lmdb, store_open_rejects_what_is_not_an_lmdb)
{
    ld_store *s = (ld_store *)1;
    char path[400];
    cr_assert_eq(ld__lmdb_store_open(ld_tmp, NULL, &s, &err), LD_EFORMAT, "empty dir: %s", err.msg);
    cr_assert_null(s);
    cr_assert(strstr(err.msg, ld_tmp) && strstr(err.msg, "without data.mdb"), "%s", err.msg);
    snprintf(path, sizeof path, "%s/junk.mdb", ld_tmp);
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 20000; i++)
        fputc(i * 7, f);
    fclose(f);
    int rc = ld__lmdb_store_open(path, NULL, &s, &err);
    cr_assert_eq(rc, LD_EFORMAT, "junk file: rc %d %s", rc, err.msg);
    snprintf(path, sizeof path, "%s/empty.lmdb", ld_tmp);
    cr_assert_eq(run("%s -c 'import lmdb; lmdb.open(\"%s\").close()'", LD_PYTHON, path), 0);
    /* an empty database is valid: it opens with no sample (describe says so, the reader
     * refuses it) */
    cr_assert_eq(ld__lmdb_store_open(path, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->info.n, 0);
    s->vt->close(s);
}

Test(lmdb, map_grows_past_its_initial_size)
{
    char db[300], path[400];
    snprintf(db, sizeof db, "%s/big.lmdb", ld_tmp);
    /* 3x256x256 = 196 KiB per record, 500 records = 96 MiB > the 64 MiB starting map: it fills
     * mid-run, and the growth replays the uncommitted batch (up to 1 MiB of records) */
    cr_assert_eq(write_db(db, 0, 500, 256, 256, 1), LD_OK, "%s", err.msg);
    cr_assert_eq(run("mdb_stat %s | grep -q 'Entries: 500'", db), 0, "mdb_stat entry count");
    cr_assert_eq(run("mdb_stat -e %s | awk '/Map size/ {exit !($3 > 67108864)}'", db), 0,
                 "the map did not grow past 64 MiB");
    snprintf(path, sizeof path, "%s/data.mdb", db);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert(st.st_size < (off_t)200 << 20, "data.mdb is %lld bytes", (long long)st.st_size);
    ld_store *s;
    ld_store_ctx *cx;
    ld_rec r;
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    uint8_t *want = malloc(3 * 256 * 256);
    for (int i = 0; i < 500; i += 123) {
        cr_assert_eq(s->vt->read(s, cx, (uint64_t)i, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
        pattern(want, i, 256, 256);
        cr_assert_arr_eq(r.data, want, 3 * 256 * 256, "record %d", i);
    }
    free(want);
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
}

Test(lmdb, key_over_the_maximum_size_is_an_error_naming_the_file)
{
    char db[300], rel[700];
    snprintf(db, sizeof db, "%s/long.lmdb", ld_tmp);
    memset(rel, 'a', sizeof rel - 1);
    rel[sizeof rel - 1] = 0;
    memcpy(rel + sizeof rel - 9, "/abc.jpg", 8);
    ld_writer_opts o = opts_for(db, 0);
    ld_writer *wr;
    cr_assert_eq(ld__lmdb_writer_create(&o, &wr, &err), LD_OK, "%s", err.msg);
    uint8_t px[3] = {1, 2, 3};
    ld_sample s = {.data = px, .len = 3, .c = 3, .h = 1, .w = 1, .rel = rel};
    cr_assert_eq(wr->vt->add(wr, &s, &err), LD_EINVAL);
    cr_assert(strstr(err.msg, "abc.jpg") && strstr(err.msg, "maximum key size"), "%s", err.msg);
    wr->vt->free(wr);
    cr_assert_eq(count_entries(ld_tmp), 0, "something left behind");
}

Test(lmdb, writer_errors_name_the_path_and_state)
{
    char db[300];
    snprintf(db, sizeof db, "%s/no/such/dir/x.lmdb", ld_tmp);
    ld_writer_opts o = opts_for(db, 0);
    ld_writer *wr = (ld_writer *)1;
    cr_assert_eq(ld__lmdb_writer_create(&o, &wr, &err), LD_EIO);
    cr_assert_null(wr);
    cr_assert(strstr(err.msg, "no/such/dir"), "%s", err.msg);
    snprintf(db, sizeof db, "%s/s.lmdb", ld_tmp);
    o = opts_for(db, 0);
    cr_assert_eq(ld__lmdb_writer_create(&o, &wr, &err), LD_OK, "%s", err.msg);
    uint8_t px[12] = {0};
    ld_sample s = {.data = px, .len = 11, .c = 3, .h = 2, .w = 2, .rel = "odd.jpg"};
    cr_assert_eq(wr->vt->add(wr, &s, &err), LD_EINVAL, "raw size mismatch accepted");
    cr_assert(strstr(err.msg, "odd.jpg"), "%s", err.msg);
    s.len = 12;
    cr_assert_eq(wr->vt->add(wr, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(wr->vt->finish(wr, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(wr->vt->add(wr, &s, &err), LD_ESTATE);
    cr_assert_eq(wr->vt->finish(wr, &err), LD_ESTATE);
    wr->vt->free(wr);
    cr_assert_eq(run("mdb_stat %s | grep -q 'Entries: 1'", db), 0, "published database");
}

Test(lmdb, free_without_finish_leaves_nothing)
{
    char db[300];
    snprintf(db, sizeof db, "%s/int.lmdb", ld_tmp);
    cr_assert_eq(write_db(db, 0, 1500, 4, 4, 0), LD_OK, "%s", err.msg); /* one commit done */
    cr_assert_eq(count_entries(ld_tmp), 0, "interrupted run left files in %s", ld_tmp);
}

Test(lmdb, an_existing_database_is_replaced_and_other_things_are_not)
{
    char db[300], file[300];
    snprintf(db, sizeof db, "%s/re.lmdb", ld_tmp);
    cr_assert_eq(write_db(db, 0, 10, 4, 4, 1), LD_OK, "%s", err.msg);
    cr_assert_eq(write_db(db, 0, 3, 4, 4, 1), LD_OK, "%s", err.msg);
    cr_assert_eq(run("mdb_stat %s | grep -q 'Entries: 3'", db), 0, "not replaced");
    cr_assert_eq(count_entries(ld_tmp), 1, "old database left behind");
    snprintf(file, sizeof file, "%s/plain", ld_tmp);
    FILE *f = fopen(file, "w");
    fclose(f);
    ld_writer_opts o = opts_for(file, 0);
    ld_writer *wr;
    cr_assert_eq(ld__lmdb_writer_create(&o, &wr, &err), LD_EIO);
    cr_assert(strstr(err.msg, "refusing"), "%s", err.msg);
}

Test(lmdb, store_reads_convert_imageset_raw_database_with_key_gaps)
{
    char db[300];
    snprintf(db, sizeof db, "%s/caffe_raw", ld_tmp);
    cr_assert_eq(
        run("%s %s/tests/python/lmdb_make_caffe_db.py %s raw", LD_PYTHON, LD_SOURCE_DIR, db), 0);
    ld_store *s;
    ld_store_ctx *cx;
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->info.n, 8);
    cr_assert_eq(s->info.order, LD_SORDER_BGR);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    const int ids[8] = {0, 1, 3, 4, 5, 7, 8, 9};
    uint8_t want[3 * 12 * 10];
    for (int k = 0; k < 24; k++) {
        int i = (k * 5 + 3) % 8;
        ld_rec r;
        cr_assert_eq(s->vt->read(s, cx, (uint64_t)i, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
        pattern(want, ids[i], 12, 10);
        cr_assert_arr_eq(r.data, want, sizeof want, "record %d", i);
        cr_assert_eq(r.label, ids[i] % 4);
    }
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
}

/* The store reads by file offsets it took at open. A writer that puts every record again
 * frees the old pages, and LMDB reuses freed pages in its next transactions unless a reader's
 * snapshot still holds them: the store holds its snapshot until close, so it reads the records
 * as they were when it opened, never another record's bytes. */
Test(lmdb, store_reads_its_snapshot_while_another_process_rewrites_the_database)
{
    char db[300];
    snprintf(db, sizeof db, "%s/rewritten.lmdb", ld_tmp);
    cr_assert_eq(write_db(db, 0, 24, 40, 40, 1), LD_OK, "%s", err.msg); /* overflow values */
    ld_store *s;
    ld_store_ctx *cx;
    ld_rec r;
    static uint8_t want[3 * 40 * 40];
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(
        run("%s %s/tests/python/lmdb_make_caffe_db.py %s overwrite", LD_PYTHON, LD_SOURCE_DIR, db),
        0);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    for (int i = 0; i < 24; i++) {
        cr_assert_eq(s->vt->read(s, cx, (uint64_t)i, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
        pattern(want, i, 40, 40);
        cr_assert_eq(r.len, sizeof want);
        cr_assert_arr_eq(r.data, want, sizeof want, "record %d is not the one the store opened", i);
    }
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
    /* opened again, it reads the new records */
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->vt->read(s, cx, 5, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
    pattern(want, 5 + 102, 40, 40);
    cr_assert_arr_eq(r.data, want, sizeof want, "record 5 after the rewrite");
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
}

/* Raw records are read straight into the caller's buffer when their bytes before the pixels
 * equal the first record's (read_direct); any other layout protobuf accepts is read whole and
 * decoded. Every record, by read with and without a destination and by read_run, must give
 * what protobuf itself parses (expected.bin): a label before the pixels, an unknown field, a
 * second `data` field (the last wins), no label, the shape said twice. */
static void check_layouts(int label_head)
{
    char db[300], exp[400];
    snprintf(db, sizeof db, "%s/layouts%d", ld_tmp, label_head);
    cr_assert_eq(run("LABEL_HEAD=%d %s %s/tests/python/lmdb_make_caffe_db.py %s layouts",
                     label_head, LD_PYTHON, LD_SOURCE_DIR, db),
                 0);
    snprintf(exp, sizeof exp, "%s/expected.bin", db);
    enum { N = 8, SB = 3 * 4 * 5, REC = 4 + SB };
    uint8_t want[N * REC], slot[SB + 1], run_px[N * SB];
    double run_lab[N];
    FILE *f = fopen(exp, "rb");
    cr_assert(f && fread(want, 1, sizeof want, f) == sizeof want, "%s", exp);
    fclose(f);
    ld_store *s;
    ld_store_ctx *cx;
    ld_rec r;
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->info.sample_bytes, SB);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->vt->read_run(s, cx, 0, N, run_px, run_lab, &err), LD_OK, "%s", err.msg);
    for (int i = 0; i < N; i++) {
        int32_t label;
        memcpy(&label, want + i * REC, 4);
        const uint8_t *px = want + i * REC + 4;
        for (int with_dst = 0; with_dst < 2; with_dst++) {
            memset(slot, 0xee, sizeof slot);
            cr_assert_eq(s->vt->read(s, cx, (uint64_t)i, with_dst ? slot : NULL, with_dst ? SB : 0,
                                     &r, &err),
                         LD_OK, "%s", err.msg);
            cr_assert_eq(r.len, SB);
            cr_assert_arr_eq(r.data, px, SB, "record %d pixels (dst %d, label_head %d)", i,
                             with_dst, label_head);
            cr_assert_eq(r.label, label, "record %d label %g, protobuf %d (dst %d)", i, r.label,
                         label, with_dst);
            cr_assert_eq(slot[SB], 0xee, "wrote past the sample");
        }
        cr_assert_arr_eq(run_px + i * SB, px, SB, "read_run: record %d pixels", i);
        cr_assert_eq(run_lab[i], label, "read_run: record %d label", i);
    }
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
}

Test(lmdb, raw_records_of_any_protobuf_layout_read_as_protobuf_parses_them)
{
    check_layouts(0);
    check_layouts(1);
}

/* read_run gives the same bytes and labels as read, with keys numbered 0..N-1 and with gaps */
static void check_runs(const char *db, int h, int w, const int *ids, int mod)
{
    ld_store *s;
    ld_store_ctx *cx;
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    size_t sb = s->info.sample_bytes, n = (size_t)s->info.n;
    uint8_t *buf = malloc(sb * n), *want = malloc(sb);
    double labels[64];
    const uint64_t starts[] = {0, 3, 1, n - 2};
    for (size_t t = 0; t < 4; t++) {
        size_t cnt = n - starts[t] < 5 ? n - starts[t] : 5;
        cr_assert_eq(s->vt->read_run(s, cx, starts[t], cnt, buf, labels, &err), LD_OK, "%s",
                     err.msg);
        for (size_t j = 0; j < cnt; j++) {
            int id = ids ? ids[starts[t] + j] : (int)(starts[t] + j);
            pattern(want, id, h, w);
            cr_assert_arr_eq(buf + j * sb, want, sb, "run at %llu, record %zu",
                             (unsigned long long)starts[t], j);
            cr_assert_eq(labels[j], id % mod, "label of record %d", id);
        }
    }
    cr_assert_eq(s->vt->read_run(s, cx, n - 1, 2, buf, labels, &err), LD_EINVAL);
    free(buf);
    free(want);
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
}

Test(lmdb, read_run_matches_read_with_numbered_keys_and_with_gaps)
{
    char db[300];
    snprintf(db, sizeof db, "%s/ours.lmdb", ld_tmp);
    cr_assert_eq(write_db(db, 0, 12, 5, 4, 1), LD_OK, "%s", err.msg);
    check_runs(db, 5, 4, NULL, 5);
    snprintf(db, sizeof db, "%s/caffe_raw", ld_tmp);
    cr_assert_eq(
        run("%s %s/tests/python/lmdb_make_caffe_db.py %s raw", LD_PYTHON, LD_SOURCE_DIR, db), 0);
    const int ids[8] = {0, 1, 3, 4, 5, 7, 8, 9};
    check_runs(db, 12, 10, ids, 4);
}

Test(lmdb, store_reads_convert_imageset_encoded_database)
{
    char db[300];
    snprintf(db, sizeof db, "%s/caffe_enc", ld_tmp);
    cr_assert_eq(
        run("%s %s/tests/python/lmdb_make_caffe_db.py %s encoded", LD_PYTHON, LD_SOURCE_DIR, db),
        0);
    ld_store *s;
    ld_store_ctx *cx;
    ld_rec r;
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    /* no shape in the records, no sidecar: the first record's PNG header gives it */
    cr_assert(s->info.encoded && s->info.n == 8, "%d %llu", s->info.encoded,
              (unsigned long long)s->info.n);
    cr_assert(s->info.c == 3 && s->info.h == 12 && s->info.w == 10, "%dx%dx%d", s->info.c,
              s->info.h, s->info.w);
    cr_assert(s->info.shape_from && strstr(s->info.shape_from, "header"));
    cr_assert_eq(s->info.made_order, LD_SORDER_BGR);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    for (int i = 7; i >= 0; i--) {
        cr_assert_eq(s->vt->read(s, cx, (uint64_t)i, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
        cr_assert(r.len > 8 && !memcmp(r.data, "\x89PNG", 4), "record %d is not PNG", i);
        cr_assert_eq(r.h, 0, "convert_imageset leaves the shape unset");
    }
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
}

/* Open `db` made by lmdb_make_caffe_db.py KIND from photos `a` and `b` and check the shape the
 * store reports and where it says it comes from. */
static void check_caffe_shape(const char *kind, const char *a, const char *b, int c, int h, int w,
                              const char *from)
{
    static int made; /* one database per call */
    char db[300];
    ld_store *s;
    snprintf(db, sizeof db, "%s/db%d", ld_tmp, made++);
    cr_assert_eq(run("%s %s/tests/python/lmdb_make_caffe_db.py '%s' '%s' %s/photos/%s "
                     "%s/photos/%s",
                     LD_PYTHON, LD_SOURCE_DIR, db, kind, LD_TEST_DATA, a, LD_TEST_DATA, b),
                 0);
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s: %s", kind, err.msg);
    cr_assert(s->info.encoded && s->info.n == 2, "%s", kind);
    cr_assert(s->info.c == c && s->info.h == h && s->info.w == w, "%s: %dx%dx%d", kind, s->info.c,
              s->info.h, s->info.w);
    cr_assert(s->info.shape_from && strstr(s->info.shape_from, from), "%s: %s", kind,
              s->info.shape_from ? s->info.shape_from : "(null)");
    s->vt->close(s);
}

Test(lmdb, shapeless_encoded_records_take_the_first_image_header_shape)
{
    /* p00 is 375 wide and 500 high, p01 500 x 375 */
    check_caffe_shape("cis-jpg", "p00.jpg", "p01.jpg", 3, 500, 375, "image header");
    check_caffe_shape("cis-jpg", "p01.jpg", "p00.jpg", 3, 375, 500, "image header");
    check_caffe_shape("cis-png", "p01.jpg", "p00.jpg", 3, 375, 500, "image header");
    check_caffe_shape("cis-jpg,gray,resize=40x30", "p00.jpg", "p01.jpg", 1, 30, 40, "image header");
    check_caffe_shape("cis-png,gray", "p00.jpg", "p01.jpg", 1, 500, 375, "image header");
}

Test(lmdb, store_reads_float_data_records_and_averages_them)
{
    char db[300];
    snprintf(db, sizeof db, "%s/float", ld_tmp);
    cr_assert_eq(
        run("%s %s/tests/python/lmdb_make_caffe_db.py %s float", LD_PYTHON, LD_SOURCE_DIR, db), 0);
    ld_store *s;
    ld_store_ctx *cx;
    ld_rec r;
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->info.dtype, LD_SDT_F32);
    cr_assert_eq(s->info.sample_bytes, 12 * sizeof(float));
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    for (int i = 3; i >= 0; i--) {
        cr_assert_eq(s->vt->read(s, cx, (uint64_t)i, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
        cr_assert_eq(r.len, 12 * sizeof(float));
        const float *f = (const float *)(const void *)r.data;
        for (int j = 0; j < 12; j++)
            cr_assert_float_eq(f[j], (float)((i * 12 + j) * 0.25 - 1.0), 0, "record %d", i);
    }
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
    check_mean(db);
}

Test(lmdb, cursor_mode_random_access_over_many_records_is_exact)
{
    char db[300];
    snprintf(db, sizeof db, "%s/tiny", ld_tmp);
    cr_assert_eq(
        run("%s %s/tests/python/lmdb_make_caffe_db.py %s tiny", LD_PYTHON, LD_SOURCE_DIR, db), 0);
    ld_store *s;
    ld_store_ctx *cx;
    ld_rec r;
    ld_store_opts o = {.random_access = 1};
    cr_assert_eq(ld__lmdb_store_open(db, &o, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->info.n, 5000);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    /* sequential pass (fills checkpoints past their cap), then a scattered pass */
    for (uint64_t i = 0; i < 5000; i++) {
        cr_assert_eq(s->vt->read(s, cx, i, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
        cr_assert_eq(r.label, (double)(i % 251));
    }
    uint64_t x = 12345;
    for (int k = 0; k < 3000; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t i = (x >> 33) % 5000;
        cr_assert_eq(s->vt->read(s, cx, i, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
        cr_assert_eq(r.label, (double)(i % 251), "record %llu", (unsigned long long)i);
        cr_assert_eq(r.data[0], i % 251);
    }
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
}

/* `kind` of lmdb_make_caffe_db.py: record 1, key `key`, is malformed; the message says
 * `expect` and names the key (found by MDB_SET_RANGE, or, without numbered keys, by stepping) */
static void bad_fixture(const char *kind, const char *key, const char *expect)
{
    char db[300];
    snprintf(db, sizeof db, "%s/%s", ld_tmp, kind);
    cr_assert_eq(run("%s %s/tests/python/lmdb_make_caffe_db.py '%s' '%s'", LD_PYTHON, LD_SOURCE_DIR,
                     db, kind),
                 0);
    ld_store *s;
    ld_store_ctx *cx;
    ld_rec r;
    cr_assert_eq(ld__lmdb_store_open(db, NULL, &s, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->vt->ctx_create(s, &cx, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->vt->read(s, cx, 0, NULL, 0, &r, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(s->vt->read(s, cx, 1, NULL, 0, &r, &err), LD_EFORMAT, "%s accepted", kind);
    cr_assert(strstr(err.msg, key) && strstr(err.msg, expect),
              "%s: message '%s' should name the key and say '%s'", kind, err.msg, expect);
    cr_assert_eq(s->vt->read(s, cx, 2, NULL, 0, &r, &err), LD_OK, "after a bad one: %s", err.msg);
    s->vt->ctx_free(s, cx);
    s->vt->close(s);
    ld_buf out = {0};
    cr_assert_eq(ld__lmdb_describe(db, &out, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(ld__buf_append(&out, "", 1), LD_OK);
    cr_assert(strstr((char *)out.p, "malformed: 1 records, first: ") &&
                  strstr((char *)out.p, key) && strstr((char *)out.p, "entries: 3"),
              "%s", (char *)out.p);
    ld__buf_free(&out);
}

Test(lmdb, malformed_records_are_rejected_naming_the_key)
{
    const char *numbered = "key '00000001_bad.jpg'";
    bad_fixture("bad-truncvarint", numbered, "truncated varint");
    bad_fixture("bad-lenpast", numbered, "past the end");
    bad_fixture("bad-shape", numbered, "11 bytes");
    bad_fixture("bad-hugedims", numbered, "bad shape");
    bad_fixture("bad-wiretype", numbered, "wire type");
    bad_fixture("bad-shape,plain", "key 'b_bad.jpg'", "11 bytes");
}

Test(lmdb, describe_reports_entries_shape_labels_and_classes)
{
    char db[300];
    ld_buf out = {0};
    snprintf(db, sizeof db, "%s/d.lmdb", ld_tmp);
    cr_assert_eq(write_db(db, 0, 20, 6, 7, 1), LD_OK, "%s", err.msg);
    cr_assert_eq(ld__lmdb_describe(db, &out, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(ld__buf_append(&out, "", 1), LD_OK);
    const char *t = (const char *)out.p;
    cr_assert(strstr(t, "entries: 20"), "%s", t);
    cr_assert(strstr(t, "shape: 3 x 6 x 7"), "%s", t);
    cr_assert(strstr(t, "labels: 5 distinct"), "%s", t);
    cr_assert(strstr(t, "classes: 3: cls0, cls1, cls2"), "%s", t);
    cr_assert(strstr(t, "channel order: BGR"), "%s", t);
    ld__buf_free(&out);
}

static void check_mean(const char *db)
{
    char mpath[400];
    ld_mean m, back;
    snprintf(mpath, sizeof mpath, "%s/mean.binaryproto", ld_tmp);
    cr_assert_eq(ld__mean_path(db, 0, &m, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(ld__mean_write(mpath, &m, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(
        run("%s %s/tests/python/lmdb_check_mean.py %s %s", LD_PYTHON, LD_SOURCE_DIR, db, mpath), 0,
        "numpy disagrees with our mean");
    cr_assert_eq(ld__mean_read(mpath, &back, &err), LD_OK, "%s", err.msg);
    cr_assert(back.c == m.c && back.h == m.h && back.w == m.w);
    cr_assert_arr_eq(back.data, m.data, sizeof(float) * (size_t)m.c * m.h * m.w);
    for (int c = 0; c < 3; c++)
        cr_assert_float_eq(back.channel[c], m.channel[c], 1e-4);
    ld__mean_free(&m);
    ld__mean_free(&back);
}

Test(lmdb, mean_of_our_database_equals_numpy)
{
    char db[300];
    snprintf(db, sizeof db, "%s/m.lmdb", ld_tmp);
    cr_assert_eq(write_db(db, 0, 1200, 9, 11, 1), LD_OK, "%s", err.msg);
    check_mean(db);
}

Test(lmdb, mean_of_an_hdf5_file_equals_numpy)
{
    char h5[300], mpath[400];
    snprintf(h5, sizeof h5, "%s/x.h5", ld_tmp);
    snprintf(mpath, sizeof mpath, "%s/mean.binaryproto", ld_tmp);
    cr_assert_eq(run("%s -c 'import h5py, numpy as np; r = np.random.default_rng(1);"
                     "f = h5py.File(\"%s\", \"w\");"
                     "f[\"data\"] = r.integers(0, 256, (37, 3, 5, 6), dtype=np.uint8);"
                     "f[\"label\"] = np.arange(37, dtype=np.int32); f.close()'",
                     LD_PYTHON, h5),
                 0);
    ld_mean m;
    cr_assert_eq(ld__mean_path(h5, 0, &m, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(ld__mean_write(mpath, &m, &err), LD_OK, "%s", err.msg);
    cr_assert_eq(run("%s -c 'import sys, h5py, numpy as np;"
                     "sys.path.insert(0, \"%s/tests/python\");"
                     "from lmdb_caffe_pb import BlobProto; b = BlobProto();"
                     "b.ParseFromString(open(\"%s\", \"rb\").read());"
                     "want = h5py.File(\"%s\")[\"data\"][()].astype(np.float64).mean(0);"
                     "got = np.array(b.data).reshape(b.channels, b.height, b.width);"
                     "sys.exit(0 if b.num == 1 and np.abs(got - want).max() < 1e-4 else 1)'",
                     LD_PYTHON, LD_SOURCE_DIR, mpath, h5),
                 0, "numpy disagrees");
    ld__mean_free(&m);
}

Test(lmdb, mean_of_encoded_caffe_database_equals_numpy_with_opencv)
{
    char db[300];
    snprintf(db, sizeof db, "%s/caffe_enc", ld_tmp);
    cr_assert_eq(
        run("%s %s/tests/python/lmdb_make_caffe_db.py %s encoded", LD_PYTHON, LD_SOURCE_DIR, db),
        0);
    check_mean(db);
}
