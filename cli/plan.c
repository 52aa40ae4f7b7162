/*
 * dataconv plan NET.prototxt [--solver S] [--ram 4G] [--batch N] [--phase train|test|auto]
 *                            [--shape NAME=C,H,W]... [--shapes]
 * Will a Caffe net fit in memory? Prints ld_plan()'s components, the total, the largest batch
 * that fits and what to change.
 */
#include "plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdata/libdata.h>
#include <libdata/plan.h>

#include "options.h"

void dc_plan_help(void *fp)
{
    FILE *f = fp;
    fputs("Usage: dataconv plan NET.prototxt [--solver SOLVER.prototxt] [--ram SIZE] [--batch N]\n"
          "                     [--phase train|test|auto] [--shape NAME=C,H,W]... [--shapes]\n"
          "       dataconv plan --solver SOLVER.prototxt ...   (the net the solver names)\n"
          "\n"
          "Before training starts: how much host memory Caffe 1.0 (CPU) will take for this net,\n"
          "component by component, and the largest batch that fits. The estimate follows Caffe's\n"
          "own allocation rules (activations and their gradients, parameters, solver history,\n"
          "im2col buffers, the data layer's prefetch batches, the test net) and the data source's\n"
          "cost: HDF5Data holds a whole file as float32 (4x a uint8 file), the Data layer's LMDB\n"
          "pages count in RSS, the LibData layer's ring is measured by opening its reader.\n"
          "Data sources are opened (relative paths from the current directory, as caffe does).\n"
          "\n"
          "  --solver FILE   the solver: its type (SGD 1x, Nesterov/AdaGrad/RMSProp 2x, Adam 3x,\n"
          "                  AdaDelta 4x the parameters), max_iter, and the test net when it has\n"
          "                  test_iter and test_interval\n"
          "  --ram SIZE      memory to fit in (K/M/G/T suffix, optionally followed by iB or B);\n"
          "                  default: MemAvailable now. 5% of it is kept for the estimate's error\n"
          "  --batch N       the planned phase's batch size (default: the net's batch_size)\n"
          "  --phase P       train (the TRAIN net, backward, solver, test net), test (the TEST\n"
          "                  net alone, forward: caffe test / deployment) or auto (default):\n"
          "                  train with --solver or when the net has a loss layer, else test\n"
          "  --shape NAME=C,H,W   the shape of data top NAME instead of its source's (repeatable;\n"
          "                  needed when the source is absent or its images vary in size, and\n"
          "                  for Python or MemoryData layers, then planned as inputs)\n"
          "  --shapes        also print every blob's shape (as Caffe's 'Top shape' log lines)\n"
          "  -h, --help      this text\n"
          "\n"
          "Accuracy: within 10% of Caffe 1.0's measured peak RSS on the nets of tests/data/plan\n"
          "(docs/caffe.md). A layer type it does not know, or a field caffe.proto does not have\n"
          "(Caffe refuses it too), is an error naming it and its line.\n"
          "Exit codes: 0 the batch fits (--ram, or MemAvailable, less 5%); 1 error reading a\n"
          "file; 2 usage error (also: a data shape that --shape must give); 3 the net is\n"
          "refused (malformed, unknown field or layer, bad shapes); 4 the batch does not fit.\n"
          "\n"
          "Examples:\n"
          "  dataconv plan train_val.prototxt --solver solver.prototxt --ram 4G\n"
          "  dataconv plan deploy.prototxt --phase test --shape data=3,227,227 --batch 1\n",
          f);
}

static void human(uint64_t b, char *out, size_t cap)
{
    if (b >= (uint64_t)1 << 30)
        snprintf(out, cap, "%.2f GiB", (double)b / (1 << 30));
    else if (b >= (uint64_t)1 << 20)
        snprintf(out, cap, "%.1f MiB", (double)b / (1 << 20));
    else if (b >= 1024)
        snprintf(out, cap, "%.1f KiB", (double)b / 1024);
    else
        snprintf(out, cap, "%" PRIu64 " B", b);
}

int dc_plan(int argc, char **argv, int first)
{
    const char *net = NULL, *solver = NULL;
    int phase = LD_PLAN_AUTO, batch = 0, show_shapes = 0;
    int64_t ram = 0;
    char shapes[4096] = "";
    size_t sl = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            dc_plan_help(stdout);
            return fflush(stdout) == 0 ? DC_EXIT_OK : DC_EXIT_FAIL;
        } else if (!strcmp(a, "--shapes")) {
            show_shapes = 1;
        } else if (!strcmp(a, "--solver") || !strcmp(a, "--ram") || !strcmp(a, "--batch") ||
                   !strcmp(a, "--phase") || !strcmp(a, "--shape")) {
            if (!v) return dc_usage_error("plan: %s needs a value", a);
            i++;
            int64_t n;
            if (!strcmp(a, "--solver")) {
                solver = v;
            } else if (!strcmp(a, "--ram")) {
                if (!dc_parse_size(v, &ram) || ram <= 0)
                    return dc_usage_error("plan: --ram '%s': a size such as 4G or 512M expected",
                                          v);
            } else if (!strcmp(a, "--batch")) {
                if (!dc_parse_i64(v, &n) || n < 1 || n > (1 << 24))
                    return dc_usage_error(
                        "plan: --batch '%s': a number from 1 to 16777216 expected", v);
                batch = (int)n;
            } else if (!strcmp(a, "--phase")) {
                if (!strcmp(v, "train") || !strcmp(v, "TRAIN"))
                    phase = LD_PLAN_TRAIN;
                else if (!strcmp(v, "test") || !strcmp(v, "TEST"))
                    phase = LD_PLAN_TEST;
                else if (!strcmp(v, "auto"))
                    phase = LD_PLAN_AUTO;
                else
                    return dc_usage_error("plan: --phase '%s': train, test or auto expected", v);
            } else {
                const char *eq = strchr(v, '=');
                if (!eq || eq == v || !eq[1])
                    return dc_usage_error(
                        "plan: --shape '%s': NAME=C,H,W expected (NAME: a data top)", v);
                size_t n2 = strlen(v);
                if (sl + n2 + 2 > sizeof shapes)
                    return dc_usage_error("plan: too many --shape values");
                if (sl) shapes[sl++] = ';';
                memcpy(shapes + sl, v, n2 + 1);
                sl += n2;
            }
        } else if (a[0] == '-' && a[1]) {
            return dc_usage_error("plan: unknown option '%s' ('dataconv plan --help')", a);
        } else if (!net) {
            net = a;
        } else {
            return dc_usage_error("plan: one net prototxt expected, got also '%s'", a);
        }
    }
    if (!net && !solver)
        return dc_usage_error(
            "plan: missing the net: dataconv plan TRAIN_VAL.prototxt [--solver S] [--ram 4G]");
    ld_plan_info *p = NULL;
    char *err = NULL;
    int rc = ld_plan(net, solver, phase, batch, (uint64_t)ram, sl ? shapes : NULL, &p, &err);
    if (rc != LD_OK) {
        fprintf(stderr, "dataconv: plan: %s\n", err ? err : ld_strerror(rc));
        /* LD_EINVAL from ld_plan: a shape its `shapes` argument must give (the CLI checked
         * its own arguments), named in the message in the library's terms */
        if (rc == LD_EINVAL)
            fprintf(stderr, "dataconv: plan: (`shapes` is --shape NAME=C,H,W here, once per "
                            "top)\n");
        ld_free(err);
        return rc == LD_EIO ? DC_EXIT_FAIL : rc == LD_EINVAL ? DC_EXIT_USAGE : DC_EXIT_BAD_INPUT;
    }
    if (show_shapes) {
        printf("Blob shapes (as Caffe logs 'Top shape'):\n");
        for (size_t i = 0; i < p->nblobs; i++) {
            const ld_plan_blob *b = &p->blobs[i];
            int64_t cnt = 1;
            printf("  %-5s %-24s %-24s", b->phase, b->layer, b->name);
            for (int k = 0; k < b->ndims; k++) {
                printf(" %" PRId64, b->dims[k]);
                cnt *= b->dims[k];
            }
            printf(" (%" PRId64 ")\n", cnt);
        }
        printf("\n");
    }
    char h[32], h2[32];
    /* which phase, why, and (when it was decided here) how to ask for the other */
    const int train = p->phase == LD_PLAN_TRAIN;
    printf("phase: %s (%s%s)\n", train ? "train" : "test", p->phase_reason,
           phase != LD_PLAN_AUTO ? ""
           : train               ? "; --phase test to plan inference"
                                 : "; --phase train to plan training");
    printf("Caffe 1.0 host memory, %s, batch %d:\n", train ? "training" : "test", p->batch);
    for (size_t i = 0; i < p->nitems; i++) {
        if (!p->items[i].bytes) continue;
        human(p->items[i].bytes, h, sizeof h);
        if (p->items[i].per_sample) {
            human(p->items[i].per_sample, h2, sizeof h2);
            printf("  %12s  %s (%s per sample)\n", h, p->items[i].name, h2);
        } else {
            printf("  %12s  %s\n", h, p->items[i].name);
        }
    }
    human(p->total, h, sizeof h);
    printf("  %12s  total (predicted peak RSS: %" PRIu64 " bytes)\n", h, p->total);
    human(p->ram, h, sizeof h);
    human(p->usable, h2, sizeof h2);
    if (p->largest_batch > 0)
        printf("\nLargest batch that fits in %s%s less %d%% for the estimate's error (%s): %" PRId64
               "\n",
               h, ram ? "" : " (MemAvailable)", LD_PLAN_HEADROOM_PCT, h2, p->largest_batch);
    else
        printf("\nLargest batch that fits in %s%s less %d%% for the estimate's error (%s): none "
               "(not even "
               "batch 1)\n",
               h, ram ? "" : " (MemAvailable)", LD_PLAN_HEADROOM_PCT, h2);
    for (size_t i = 0; i < p->nadvice; i++)
        printf("advice: %s\n", p->advice[i]);
    for (size_t i = 0; i < p->nnotes; i++)
        printf("note: %s\n", p->notes[i]);
    /* The library names conversion parameters; these are their flags here. */
    if (p->advice_terms & (LD_PLAN_TERM_SPLIT_BYTES | LD_PLAN_TERM_RESIZE))
        printf(
            "(%s%s%s)\n",
            p->advice_terms & LD_PLAN_TERM_SPLIT_BYTES ? "split_bytes: dataconv --split SIZE" : "",
            (p->advice_terms & LD_PLAN_TERM_SPLIT_BYTES) && (p->advice_terms & LD_PLAN_TERM_RESIZE)
                ? "; "
                : "",
            p->advice_terms & LD_PLAN_TERM_RESIZE ? "resize_w/resize_h: dataconv --resize WxH"
                                                  : "");
    int fits = p->total <= p->usable;
    if (!fits) {
        human(p->total, h, sizeof h);
        human(p->usable, h2, sizeof h2);
        if (p->largest_batch > 0)
            fprintf(stderr,
                    "dataconv: plan: batch %d needs %s, more than %s: use --batch %" PRId64
                    " or less, or the advice above\n",
                    p->batch, h, h2, p->largest_batch);
        else
            fprintf(stderr,
                    "dataconv: plan: batch %d needs %s, more than %s, and no batch fits: follow "
                    "the advice above\n",
                    p->batch, h, h2);
    }
    ld_free(p);
    if (fflush(stdout) != 0) return DC_EXIT_FAIL;
    return fits ? DC_EXIT_OK : 4;
}
