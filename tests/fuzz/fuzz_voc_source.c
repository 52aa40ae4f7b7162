/*
 * libFuzzer target: VOC mode of the source (source/src_voc.c, ld__source_open_voc): the input
 * is written as the one annotation file of a temporary VOC folder (Annotations/a.xml) and the
 * folder opened without a list, then with a list naming it, strictly. Checked: a failure
 * leaves nothing and names the file; on success there is at most one item, under JPEGImages/,
 * every box is read and has finite x1 <= x2, y1 <= y2, a label within the classes, and the
 * first 20 classes are VOC's; a strict open fails exactly when the lenient one skipped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"
#include "source/source.h"

static void count_warn(void *user, const char *msg)
{
    if (!msg || !strstr(msg, "a.xml")) abort(); /* names the file */
    ++*(int *)user;
}

static size_t check(const char *dir, const char *list, unsigned flags)
{
    ld_source *s = NULL;
    ld_err e;
    int w = 0;
    const int rc = ld__source_open_voc(dir, list, flags, count_warn, NULL, &w, &s, &e);
    if (rc != LD_OK) {
        if (s || !strstr(e.msg, "a.xml") || !(flags & LD_SRC_STRICT)) abort();
        return 0;
    }
    const size_t n = ld__source_count(s), c = ld__source_box_class_count(s);
    if (n > 1 || n + (size_t)w != 1 || c < 20 ||
        strcmp(ld__source_box_class_name(s, 0), "aeroplane"))
        abort();
    volatile float sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(ld__source_rel(s, i), "JPEGImages/", 11) != 0) abort();
        for (uint32_t k = 0, m = ld__source_box_count(s, i); k < m; k++) {
            ld_box b;
            ld__source_box(s, i, k, &b);
            if (!isfinite(b.x1) || !isfinite(b.y2) || b.x1 > b.x2 || b.y1 > b.y2 || b.label < 0 ||
                (size_t)b.label >= c || (b.flags & ~LD_BOX_DIFFICULT))
                abort();
            sum += b.x1 + b.y1 + b.x2 + b.y2;
        }
    }
    (void)sum;
    ld__source_free(s);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[512], ann[600];
    snprintf(dir, sizeof dir, "%s/voc", fuzz_tmpdir());
    snprintf(ann, sizeof ann, "%s/Annotations", dir);
    mkdir(dir, 0700);
    mkdir(ann, 0700);
    fuzz_write("voc/Annotations/a.xml", data, size);
    const size_t got = check(dir, NULL, 0);
    const char *list = fuzz_write("voc/list.txt", (const uint8_t *)"a\n", 2);
    const size_t strict = check(dir, list, LD_SRC_STRICT);
    if (got != strict) abort();
    return 0;
}
