/*
 * Opening an HDF5 file while another process replaces it by rename (what dataconv's atomic
 * publish does). The store reads pixels with pread on its own descriptor and learns where they
 * are from HDF5; both must be looking at the same file, or chunk addresses of one file are
 * applied to the bytes of another and wrong pixels come back with no error (issue 12, item 3).
 *
 * A child process writes files with our HDF5 writer and renames each over one name, as fast as
 * it can; every file holds a distinct constant pixel value that is also every sample's label,
 * and the files differ in sample count and attribute length so their chunks sit at different
 * addresses. The test opens that name many times and checks that sample 0's pixels equal its
 * label: zero mismatches and zero errors are allowed.
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_tmp.h"
#include "store/store.h"
#include "store/writer.h"
#include "test_desc.h"

#define SIDE 32
#define SAMPLE_BYTES (3 * SIDE * SIDE)

TestSuite(h5_replace, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 120);

/* One file whose pixels and labels all equal v (1..250); k varies the layout. */
static int write_const(const char *path, int v, int k)
{
    static const char *const classes[] = {"a"};
    char note[300];
    memset(note, 'x', sizeof note);
    note[(k * 37) % 290 + 1] = 0; /* attribute length varies: chunk addresses move */
    ld_writer_opts o = {0};
    o.path = path;
    o.desc = test_desc(&(test_rec){
        .channels = 3, .n_classes = 1, .classes = classes, .source = "/in", .note = note});
    o.expected_n = 1 + k % 5;
    ld_err e = {0};
    ld_writer *wr = NULL;
    if (ld__h5_writer_create(&o, &wr, &e) < 0) return -1;
    uint8_t px[SAMPLE_BYTES];
    memset(px, v, sizeof px);
    int rc = 0;
    for (int i = 0; i < 1 + k % 5 && rc == 0; i++) {
        ld_sample s = {px, sizeof px, 3, SIDE, SIDE, v, "a/x.png", NULL, NULL, 0, 0, NULL, 0};
        rc = wr->vt->add(wr, &s, &e);
    }
    if (rc == 0) rc = wr->vt->finish(wr, &e);
    wr->vt->free(wr);
    return rc;
}

Test(h5_replace, a_file_renamed_over_while_opening_is_read_consistently)
{
    char path[512];
    snprintf(path, sizeof path, "%s/live.h5", ld_tmp);
    cr_assert_eq(write_const(path, 1, 0), 0);
    fflush(NULL);
    pid_t child = fork();
    cr_assert(child >= 0);
    if (child == 0) {
        for (int k = 1;; k++)
            if (write_const(path, 1 + k % 250, k) != 0) _exit(3);
    }
    int opens = 0, errors = 0, mismatches = 0, seen[256] = {0}, distinct = 0;
    char first_err[LD_ERRMSG_MAX] = "";
    time_t t0 = time(NULL);
    while (opens < 8000 && time(NULL) - t0 < 30) {
        ld_err e = {0};
        ld_store *s = NULL;
        opens++;
        if (ld__h5_store_open(path, NULL, &s, &e) < 0) {
            if (!errors++) snprintf(first_err, sizeof first_err, "%s", e.msg);
            continue;
        }
        ld_store_ctx *cx = NULL;
        uint8_t dst[SAMPLE_BYTES];
        ld_rec rec;
        cr_assert_eq(s->vt->ctx_create(s, &cx, &e), LD_OK);
        if (s->vt->read(s, cx, 0, dst, sizeof dst, &rec, &e) < 0) {
            if (!errors++) snprintf(first_err, sizeof first_err, "%s", e.msg);
        } else {
            int v = (int)rec.label, bad = v < 1 || v > 250;
            for (size_t j = 0; j < rec.len && !bad; j++)
                bad = rec.data[j] != v;
            mismatches += bad;
            if (!bad && !seen[v]++) distinct++;
        }
        s->vt->ctx_free(s, cx);
        s->vt->close(s);
    }
    kill(child, SIGKILL);
    int st = 0;
    waitpid(child, &st, 0);
    cr_assert_eq(mismatches, 0, "%d of %d opens read pixels of another file than their labels",
                 mismatches, opens);
    cr_assert_eq(errors, 0, "%d of %d opens failed, first: %s", errors, opens, first_err);
    /* the race was exercised: the name pointed at many different files during the loop */
    cr_assert_gt(distinct, 20, "only %d distinct files seen in %d opens", distinct, opens);
}
