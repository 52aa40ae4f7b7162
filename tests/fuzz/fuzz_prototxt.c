/*
 * libFuzzer target: the prototxt parser (plan/prototxt.c, ld__pt_parse) and, on the same
 * text as a net file, ld_plan() (layers, splits, shape inference, memory). Checked: a parse
 * failure says where ("LINE:COL: ..."), a parsed tree has a name on every field and either a
 * value or fields, ld_plan's components add up to its total and every shape is non-negative.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "libdata/plan.h"
#include "plan/prototxt.h"

static void check_tree(const ld_pt_node *n, int depth)
{
    if (depth > LD_PT_MAX_DEPTH + 1) abort();
    for (size_t i = 0; i < n->nkids; i++) {
        const ld_pt_node *k = n->kids[i];
        if (!k->name || !k->name[0]) abort();
        if (k->value && k->nkids) abort();
        if (k->line < 1 || k->col < 1) abort();
        check_tree(k, depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ld_pt_node *root = NULL;
    ld_err e;
    ld__err_clear(&e);
    int rc = ld__pt_parse((const char *)data, size, &root, &e);
    if (rc != LD_OK) {
        if (root || !e.msg[0]) abort();
        if (rc == LD_EFORMAT && !(e.msg[0] >= '1' && e.msg[0] <= '9')) abort(); /* "LINE:COL:" */
        return 0;
    }
    check_tree(root, 0);
    ld__pt_free(root);

    const char *path = fuzz_write("net.prototxt", data, size);
    ld_plan_info *info = NULL;
    char *msg = NULL;
    rc = ld_plan(path, NULL, LD_PLAN_TRAIN, 0, (uint64_t)1 << 30, NULL, &info, &msg);
    if (rc != LD_OK) {
        if (info || !msg || !msg[0]) abort();
        ld_free(msg);
        return 0;
    }
    if (msg) abort();
    uint64_t sum = 0;
    for (size_t i = 0; i < info->nitems; i++)
        sum += info->items[i].bytes;
    if (sum != info->total) abort();
    for (size_t i = 0; i < info->nblobs; i++)
        for (int k = 0; k < info->blobs[i].ndims; k++)
            if (info->blobs[i].dims[k] < 0) abort();
    ld_free(info);
    return 0;
}
