/*
 * libFuzzer target: the list-file parser of list mode (source/src_list.c,
 * ld__source_open_list), "relative/path v1 ... vK" lines. The input is written to a
 * temporary file and opened with a root folder. Checked: on success every item has a path
 * under the root (or, for an absolute listed path, that path), a non-empty relative path
 * that is its tail; with class labels a label within the class count, and the class names
 * are "0".."max label"; an unlabelled list's labels are 0; label vectors have K finite
 * values each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "source/source.h"

/* Labels up to 2^24 - 1 are accepted and class names "0".."max" are materialized (16M
 * strings, ~0.5 GB, ~1 s for one line "a 16777215"): a documented cost, not a bug, but it
 * makes the fuzzer crawl (30 exec/s). Inputs with a run of 6+ digits are skipped. */
static int has_long_number(const uint8_t *d, size_t n)
{
    for (size_t i = 0, run = 0; i < n; i++)
        if ((run = (d[i] >= '0' && d[i] <= '9') ? run + 1 : 0) >= 6) return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (has_long_number(data, size)) return 0;
    const char *path = fuzz_write("list.txt", data, size);
    ld_source *s = NULL;
    ld_err e;
    if (ld__source_open_list(path, "/root dir", NULL, NULL, NULL, &s, &e) != LD_OK) {
        if (s || !e.msg[0]) abort(); /* a failure leaves nothing and says why */
        return 0;
    }
    size_t n = ld__source_count(s), classes = ld__source_class_count(s);
    ld_buf full = {0};
    for (size_t i = 0; i < n; i++) {
        ld_item item;
        const ld_item *it = &item;
        if (ld__source_get(s, i, &full, &item) != LD_OK) abort();
        if (!it->rel || !it->rel[0] || !it->path) abort();
        if (it->rel != ld__source_rel(s, i) || it->label != ld__source_label(s, i)) abort();
        const uint32_t k = ld__source_label_count(s);
        if (k) { /* label vectors: K finite float32 values, no classes */
            float v[4096];
            if (k > 4096 || classes || ld__source_values(s, i, v) != LD_OK) abort();
            for (uint32_t m = 0; m < k; m++)
                if (!(v[m] == v[m]) || v[m] > 3.4028235e38f || v[m] < -3.4028235e38f) abort();
        } else if (ld__source_unlabelled(s)) {
            if (it->label != 0 || classes) abort();
        } else if (classes && (it->label < 0 || (size_t)it->label >= classes)) {
            abort();
        }
        size_t lp = strlen(it->path), lr = strlen(it->rel);
        if (lp < lr || strcmp(it->path + lp - lr, it->rel) != 0) abort();
        /* An absolute listed path is used as it is (path == rel), any other is under root
         * (corpus/list_file/absolute_path). */
        if (it->rel[0] == '/' ? strcmp(it->path, it->rel) != 0
                              : strncmp(it->path, "/root dir/", 10) != 0)
            abort();
    }
    for (size_t k = 0; k < classes; k++) {
        char want[24];
        snprintf(want, sizeof want, "%zu", k);
        if (strcmp(ld__source_class_name(s, k), want) != 0) abort();
    }
    ld__buf_free(&full);
    ld__source_shuffle(s, size);
    if (ld__source_count(s) != n) abort();
    ld__source_free(s);
    return 0;
}
