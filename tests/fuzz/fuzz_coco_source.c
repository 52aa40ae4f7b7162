/*
 * libFuzzer target: COCO mode of the source (source/src_coco.c, ld__source_open_coco): the
 * input is written to a temporary instances.json and opened, warnings collected. Checked: a
 * failure leaves nothing and says why (naming the file); on success the items are sorted by
 * relative path, every box is read and has finite x1 <= x2, y1 <= y2 and a label within the
 * box classes, and the class ids are strictly increasing. Then again with LD_SRC_STRICT, which
 * must fail whenever the lenient run warned.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "source/source.h"

static void count_warn(void *user, const char *msg)
{
    if (!msg || !strstr(msg, "instances.json:")) abort(); /* names file:line */
    ++*(int *)user;
}

static void check(const char *path, unsigned flags, int *warned)
{
    ld_source *s = NULL;
    ld_err e;
    int w = 0;
    const int rc = ld__source_open_coco(path, "/root", flags, count_warn, NULL, &w, &s, &e);
    if (flags & LD_SRC_STRICT && *warned && rc != LD_EFORMAT) abort();
    if (!(flags & LD_SRC_STRICT)) *warned = w;
    if (rc != LD_OK) {
        if (s || !strstr(e.msg, "instances.json")) abort();
        return;
    }
    const size_t n = ld__source_count(s), c = ld__source_box_class_count(s);
    if (!ld__source_has_boxes(s)) abort();
    for (size_t k = 1; k < c; k++)
        if (ld__source_box_class_id(s, k - 1) >= ld__source_box_class_id(s, k)) abort();
    for (size_t k = 0; k < c; k++)
        if (!ld__source_box_class_name(s, k)) abort();
    volatile float sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(ld__source_rel(s, i - 1), ld__source_rel(s, i)) > 0) abort();
        const uint32_t m = ld__source_box_count(s, i);
        for (uint32_t k = 0; k < m; k++) {
            ld_box b;
            ld__source_box(s, i, k, &b);
            if (!isfinite(b.x1) || !isfinite(b.y1) || !isfinite(b.x2) || !isfinite(b.y2) ||
                b.x1 > b.x2 || b.y1 > b.y2 || b.label < 0 || (size_t)b.label >= c ||
                (b.flags & ~LD_BOX_CROWD))
                abort();
            sum += b.x1 + b.y1 + b.x2 + b.y2;
        }
    }
    (void)sum;
    ld__source_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("instances.json", data, size);
    int warned = 0;
    check(path, 0, &warned);
    check(path, LD_SRC_STRICT, &warned);
    return 0;
}
