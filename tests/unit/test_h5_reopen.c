/* HDF5 writer, long conversions: the writer closes and reopens its file every 256 chunks of
 * /data so that HDF5's per-chunk bookkeeping does not grow with the number of images
 * (h5_write.c, file_reopen). Announcing one sample (expected_n = 1) makes every chunk one
 * sample, so a few hundred small samples cross the reopen points; the files are checked by
 * h5py (tests/python/check_h5.py), h5dump and byte-for-byte reproducibility. Samples are
 * 3x150x150 (67,500 bytes): over the 64 KiB threshold of 4 KiB chunk alignment, and not a
 * multiple of 4 KiB, like real images, so every chunk leaves an alignment gap. */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_tmp.h"
#include "store/writer.h"
#include "test_desc.h"

#define CHECK_PY LD_PYTHON " " LD_SOURCE_DIR "/tests/python/check_h5.py"

static const char *const classes[] = {"bird", "car", "cat"};

TestSuite(h5_reopen, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 120);

static void tpath(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", ld_tmp, name);
}

#define SIDE 150
#define SAMPLE_BYTES (3 * SIDE * SIDE)

/* Raw 3xSIDExSIDE samples with the pixels, names and labels check_h5.py expects. */
static void write_raw(const char *path, int n, uint64_t split_bytes, uint64_t *files_out)
{
    ld_writer_opts o = {0};
    o.path = path;
    o.desc = test_desc(&(test_rec){.channels = 3,
                                   .n_classes = 3,
                                   .classes = classes,
                                   .resize_w = SIDE,
                                   .resize_h = SIDE,
                                   .source = "/some/input",
                                   .note = "test note"});
    o.expected_n = 1; /* caps the chunk at one sample */
    o.split_bytes = split_bytes;
    ld_err e = {0};
    ld_writer *wr = NULL;
    int rc = ld__h5_writer_create(&o, &wr, &e);
    cr_assert_eq(rc, LD_OK, "create: %s", e.msg);
    uint8_t *px = malloc(SAMPLE_BYTES);
    cr_assert_not_null(px);
    char rel[64];
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < SAMPLE_BYTES; j++)
            px[j] = (uint8_t)(((uint64_t)i * 31 + j * 7) % 251);
        snprintf(rel, sizeof rel, "cls%d/img_%04d.jpg", i % 3, i);
        ld_sample s = {px, SAMPLE_BYTES, 3, SIDE, SIDE, i % 3, rel, NULL, NULL, 0, 0, NULL, 0};
        rc = wr->vt->add(wr, &s, &e);
        cr_assert_eq(rc, LD_OK, "add %d: %s", i, e.msg);
    }
    free(px);
    rc = wr->vt->finish(wr, &e);
    cr_assert_eq(rc, LD_OK, "finish: %s", e.msg);
    if (files_out) *files_out = wr->files_out;
    wr->vt->free(wr);
}

static int run(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(h5_reopen, many_chunks_cross_reopens_and_read_back_intact)
{
    /* 700 one-sample chunks: the file is reopened after chunks 256 and 512 */
    char a[512], b[512], cmd[2048];
    tpath(a, sizeof a, "a.h5");
    tpath(b, sizeof b, "b.h5");
    write_raw(a, 700, 0, NULL);
    snprintf(cmd, sizeof cmd, CHECK_PY " raw '%s' 700 3 %d %d", a, SIDE, SIDE);
    cr_assert_eq(run(cmd), 0, "h5py check failed: %s", cmd);
    snprintf(cmd, sizeof cmd, "h5dump -H '%s' > /dev/null", a);
    cr_assert_eq(run(cmd), 0, "h5dump -H failed on %s", a);
    /* the reopen points are fixed row counts: the same samples give the same bytes */
    write_raw(b, 700, 0, NULL);
    snprintf(cmd, sizeof cmd, "cmp '%s' '%s'", a, b);
    cr_assert_eq(run(cmd), 0, "files differ: %s", cmd);
}

Test(h5_reopen, split_files_each_count_their_own_chunks)
{
    /* 300 samples per file: each of the two files is reopened once */
    char p[512], cmd[2048];
    tpath(p, sizeof p, "parts.h5");
    uint64_t files = 0;
    write_raw(p, 600, 300 * SAMPLE_BYTES, &files);
    cr_assert_eq(files, 2, "%llu files", (unsigned long long)files);
    for (int f = 0; f < 2; f++) {
        snprintf(cmd, sizeof cmd, CHECK_PY " raw '%s/parts-%05d.h5' 300 3 %d %d --first %d", ld_tmp,
                 f, SIDE, SIDE, f * 300);
        cr_assert_eq(run(cmd), 0, "h5py check failed: %s", cmd);
    }
}

Test(h5_reopen, reopen_right_before_finish_keeps_the_file_complete)
{
    /* the 256th sample fills the 256th chunk: the reopen is the last thing before finish */
    char p[512], cmd[2048];
    tpath(p, sizeof p, "edge.h5");
    write_raw(p, 256, 0, NULL);
    snprintf(cmd, sizeof cmd, CHECK_PY " raw '%s' 256 3 %d %d", p, SIDE, SIDE);
    cr_assert_eq(run(cmd), 0, "h5py check failed: %s", cmd);
}
