/*
 * libFuzzer target: archive mode of the source (source/src_tar.c): the listing of a tar (or a
 * compressed tar, or a tar of tars: libarchive recognizes them by content) and the reads of
 * its members in a shuffled order through a one-member window, so that compressed streams
 * restart. Checked: on success every item has a relative path that neither is absolute nor
 * holds a ".." component, its label is within the class count, the class names are sorted and
 * unique, and a read succeeds or fails with a message; a failed open leaves nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "source/src_internal.h"

static int has_dotdot(const char *rel)
{
    for (const char *p = rel; *p;) {
        const char *q = strchr(p, '/');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') return 1;
        p += n + (q != NULL);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("in.tar", data, size);
    ld_source *s = NULL;
    ld_err e;
    const int rc = ld__source_open_archive(path, 0, NULL, NULL, NULL, NULL, &s, &e);
    if (rc != LD_OK) {
        if (s || !e.msg[0]) abort(); /* a failure leaves nothing and says why */
        return 0;
    }
    const size_t n = ld__source_count(s), classes = ld__source_class_count(s);
    for (size_t k = 1; k < classes; k++)
        if (strcmp(ld__source_class_name(s, k - 1), ld__source_class_name(s, k)) >= 0) abort();
    ld__tar_set_window(s, 1);
    ld__source_shuffle(s, size);
    ld_buf full = {0}, bytes = {0};
    volatile unsigned sum = 0; /* every byte read, so ASan sees a read past a member */
    for (size_t i = 0; i < n; i++) {
        ld_item it;
        if (ld__source_get(s, i, &full, &it) != LD_OK) abort();
        if (!it.rel[0] || it.rel[0] == '/' || has_dotdot(it.rel)) abort();
        if (it.label < 0 || (size_t)it.label >= classes) abort();
        ld_err re;
        re.msg[0] = '\0';
        const int r = ld__source_read(s, i, it.path, &bytes, 1 << 20, &re);
        if (r < 0 && !re.msg[0]) abort();
        for (size_t b = 0; r == LD_OK && b < bytes.len; b++)
            sum += bytes.p[b];
    }
    ld__buf_free(&full);
    ld__buf_free(&bytes);
    ld__source_free(s);
    return 0;
}
