/*
 * ld_plan (libdata/plan.h) and its prototxt parser: the text format, errors that name the
 * line, bounds on untrusted text, Caffe's layer rules (phases, legacy V1 layers, implicit
 * splits), every layer kind's shapes against what real Caffe 1.0 logged
 * (tests/data/plan_layers), the largest-batch search, and a bounded mutation run over the
 * fuzz corpus (tests/fuzz/corpus/prototxt).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/plan.h"
#include "plan/prototxt.h"
#include "test_tmp.h"

TestSuite(plan, .init = ld_tmp_make, .fini = ld_tmp_remove);

static const char *write_net(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", ld_tmp, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* ld_plan on a text; returns the status, *msg the message (static copy) or "". */
static int plan_text(const char *text, int phase, int batch, ld_plan_info **info, char *msg,
                     size_t cap)
{
    const char *p = write_net("net.prototxt", text);
    char *err = NULL;
    ld_plan_info *i = NULL;
    int rc = ld_plan(p, NULL, phase, batch, (uint64_t)8 << 30, NULL, &i, &err);
    snprintf(msg, cap, "%s", err ? err : "");
    ld_free(err);
    if (info)
        *info = i;
    else
        ld_free(i);
    return rc;
}

static int parse_err(const char *text, char *msg, size_t cap)
{
    ld_pt_node *root = NULL;
    ld_err e;
    ld__err_clear(&e);
    int rc = ld__pt_parse(text, strlen(text), &root, &e);
    snprintf(msg, cap, "%s", e.msg);
    ld__pt_free(root);
    return rc;
}

Test(plan, parser_reads_the_text_format)
{
    const char *t = "# a comment\n"
                    "name: \"n\\x41\\101\\n\" 'two'  # adjacent strings join\n"
                    "layer { name: \"a\" type: \"Input\" top: 'x' top: \"y\" }\n"
                    "layer: { nested < k: [1, 2, 3]; e: 1.5e-3 > }\n"
                    "flag: true\n";
    ld_pt_node *root = NULL;
    ld_err e;
    ld__err_clear(&e);
    cr_assert_eq(ld__pt_parse(t, strlen(t), &root, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(ld__pt_count(root, "layer"), 2);
    cr_assert_eq(ld__pt_get(root, "name")->len, 7);
    cr_assert_eq(memcmp(ld__pt_get_str(root, "name", NULL), "nAA\ntwo", 7), 0);
    const ld_pt_node *l0 = ld__pt_get(root, "layer");
    cr_assert_eq(ld__pt_count(l0, "top"), 2);
    cr_assert_str_eq(ld__pt_nth(l0, "top", 1)->value, "y");
    const ld_pt_node *nested = ld__pt_get(ld__pt_nth(root, "layer", 1), "nested");
    cr_assert_eq(ld__pt_count(nested, "k"), 3);
    int64_t v;
    cr_assert_eq(ld__pt_int(ld__pt_nth(nested, "k", 2), 0, 10, &v, "k", &e), LD_OK);
    cr_assert_eq(v, 3);
    double d;
    cr_assert_eq(ld__pt_get_double(nested, "e", 0, &d, &e), LD_OK);
    cr_assert_float_eq(d, 1.5e-3, 1e-12);
    cr_assert_eq(ld__pt_get(root, "flag")->line, 5);
    ld__pt_free(root);
}

Test(plan, parser_errors_name_line_and_column)
{
    char m[1024];
    cr_assert_eq(parse_err("layer {\n  name: \"a\"\n", m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "1:7:") && strstr(m, "not closed"), "%s", m);
    cr_assert_eq(parse_err("a: 1\n}\n", m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "2:1:") && strstr(m, "closing brace"), "%s", m);
    cr_assert_eq(parse_err("a: \"abc\n", m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "1:4:") && strstr(m, "string not closed"), "%s", m);
    cr_assert_eq(parse_err("a: \"\\q\"", m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "1:5:") && strstr(m, "unknown escape"), "%s", m);
    cr_assert_eq(parse_err("x {\n a \n}", m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "3:1:") && strstr(m, "':' or '{' expected"), "%s", m);
    cr_assert_eq(parse_err("a: [1, 2", m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "1:9:"), "%s", m);
    cr_assert_eq(parse_err("a: \xff", m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "byte 0xff"), "%s", m);
}

Test(plan, parser_bounds_nesting)
{
    /* 100 levels are fine, 101 are refused (the parser recurses per level). */
    char *t = malloc(8 * 1000 + 16);
    cr_assert_not_null(t);
    for (int depth = 100; depth <= 101; depth++) {
        size_t n = 0;
        for (int i = 0; i < depth; i++)
            n += (size_t)sprintf(t + n, "a { ");
        for (int i = 0; i < depth; i++)
            n += (size_t)sprintf(t + n, "} ");
        char m[1024];
        int rc = parse_err(t, m, sizeof m);
        if (depth == 100)
            cr_assert_eq(rc, LD_OK, "%s", m);
        else
            cr_assert(rc == LD_ELIMIT && strstr(m, "nested more than 100"), "%d %s", rc, m);
    }
    free(t);
}

static const char *const head =
    "layer { name: \"data\" type: \"Input\" top: \"data\" top: \"label\"\n"
    "  input_param { shape { dim: 4 dim: 3 dim: 32 dim: 32 } shape { dim: 4 } } }\n";

Test(plan, unknown_layer_type_is_named_with_its_line)
{
    char text[2048], m[1024];
    snprintf(text, sizeof text,
             "%s\nlayer { name: \"odd\" type: \"Python\" bottom: \"data\" top: \"o\" }\n", head);
    cr_assert_eq(plan_text(text, LD_PLAN_TRAIN, 0, NULL, m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "net.prototxt:4:") && strstr(m, "'Python'") && strstr(m, "odd"), "%s", m);
}

Test(plan, missing_bottom_and_cycle_are_refused_with_the_line)
{
    char text[2048], m[1024];
    snprintf(text, sizeof text,
             "%slayer { name: \"ip\" type: \"InnerProduct\" bottom: \"dta\" top: \"ip\"\n"
             "  inner_product_param { num_output: 2 } }\n",
             head);
    cr_assert_eq(plan_text(text, LD_PLAN_TRAIN, 0, NULL, m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, ":3:") && strstr(m, "'dta'") && strstr(m, "not produced"), "%s", m);
    /* a cycle: a reads b, which only a later layer produces from a */
    snprintf(text, sizeof text,
             "%slayer { name: \"a\" type: \"ReLU\" bottom: \"b\" top: \"a\" }\n"
             "layer { name: \"b\" type: \"ReLU\" bottom: \"a\" top: \"b\" }\n",
             head);
    cr_assert_eq(plan_text(text, LD_PLAN_TRAIN, 0, NULL, m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, ":3:") && strstr(m, "'b'") && strstr(m, "cycle"), "%s", m);
}

Test(plan, absurd_sizes_are_refused_not_overflowed)
{
    char m[1024];
    /* 2^31 elements in one blob: Caffe's Blob limit */
    const char *big = "layer { name: \"data\" type: \"Input\" top: \"data\"\n"
                      "  input_param { shape { dim: 65536 dim: 65536 dim: 1 } } }\n";
    cr_assert_eq(plan_text(big, LD_PLAN_TRAIN, 0, NULL, m, sizeof m), LD_ELIMIT);
    cr_assert(strstr(m, ":1:") && strstr(m, "2^31-1"), "%s", m);
    /* a dim past int64 */
    const char *huge = "layer { name: \"data\" type: \"Input\" top: \"data\"\n"
                       "  input_param { shape { dim: 99999999999999999999 } } }\n";
    cr_assert_eq(plan_text(huge, LD_PLAN_TRAIN, 0, NULL, m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "2:") && strstr(m, "too large"), "%s", m);
    /* num_output over INT_MAX */
    char text[2048];
    snprintf(text, sizeof text,
             "%slayer { name: \"c\" type: \"Convolution\" bottom: \"data\" top: \"c\"\n"
             "  convolution_param { num_output: 4294967296 kernel_size: 3 } }\n",
             head);
    cr_assert_eq(plan_text(text, LD_PLAN_TRAIN, 0, NULL, m, sizeof m), LD_ELIMIT);
    cr_assert(strstr(m, "4:") && strstr(m, "num_output"), "%s", m);
    /* an InnerProduct whose weights overflow */
    snprintf(text, sizeof text,
             "%slayer { name: \"ip\" type: \"InnerProduct\" bottom: \"data\" top: \"ip\"\n"
             "  inner_product_param { num_output: 2000000000 } }\n",
             head);
    cr_assert_eq(plan_text(text, LD_PLAN_TRAIN, 0, NULL, m, sizeof m), LD_ELIMIT);
    cr_assert(strstr(m, ":3:") && strstr(m, "2^31-1"), "%s", m);
}

/* Every layer kind against the shapes Caffe 1.0 logged for tests/data/plan_layers. */
Test(plan, shapes_of_every_layer_kind_match_caffe)
{
    ld_plan_info *info = NULL;
    char *err = NULL;
    int rc = ld_plan(LD_SOURCE_DIR "/tests/data/plan_layers/layers.prototxt", NULL, LD_PLAN_TRAIN,
                     0, (uint64_t)1 << 30, NULL, &info, &err);
    cr_assert_eq(rc, LD_OK, "%s", err ? err : "");
    FILE *f = fopen(LD_SOURCE_DIR "/tests/data/plan_layers/shapes.txt", "r");
    cr_assert_not_null(f);
    char line[512];
    size_t i = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\n")] = 0;
        char *tab = strchr(line, '\t');
        cr_assert_not_null(tab);
        *tab = 0;
        cr_assert_lt(i, info->nblobs, "Caffe logged more tops than we inferred");
        const ld_plan_blob *b = &info->blobs[i++];
        char got[256] = "";
        size_t n = 0;
        for (int k = 0; k < b->ndims; k++)
            n += (size_t)snprintf(got + n, sizeof got - n, "%s%lld", k ? " " : "",
                                  (long long)b->dims[k]);
        if (!b->ndims) snprintf(got, sizeof got, "(scalar)");
        cr_expect_str_eq(b->layer, line, "top %zu: layer %s, Caffe: %s", i, b->layer, line);
        cr_expect_str_eq(got, tab + 1, "layer %s: shape %s, Caffe logged %s", line, got, tab + 1);
    }
    fclose(f);
    cr_assert_eq(i, info->nblobs, "we inferred %zu tops, Caffe logged %zu", info->nblobs, i);
    ld_free(info);
}

Test(plan, legacy_v1_layers_and_net_inputs)
{
    const char *t =
        "input: \"data\"\ninput_dim: 2 input_dim: 3 input_dim: 10 input_dim: 12\n"
        "layers { name: \"c\" type: CONVOLUTION bottom: \"data\" top: \"c\"\n"
        "  blobs_lr: 1 blobs_lr: 2 convolution_param { num_output: 4 kernel_size: 3 } }\n"
        "layers { name: \"p\" type: POOLING bottom: \"c\" top: \"p\"\n"
        "  pooling_param { pool: MAX kernel_size: 3 stride: 2 } }\n"
        "layers { name: \"t\" type: SOFTMAX_LOSS bottom: \"p\" bottom: \"p\" top: \"l\""
        "  include { phase: TEST } }\n";
    ld_plan_info *info = NULL;
    char m[1024];
    cr_assert_eq(plan_text(t, LD_PLAN_TRAIN, 0, &info, m, sizeof m), LD_OK, "%s", m);
    cr_assert_eq(info->nblobs, 3); /* the TEST-only loss is not in the TRAIN net */
    cr_assert_str_eq(info->blobs[1].layer, "c");
    cr_assert_eq(info->blobs[1].dims[1], 4);
    cr_assert_eq(info->blobs[1].dims[2], 8);
    cr_assert_eq(info->blobs[2].dims[2], 4); /* ceil((8 - 3) / 2) + 1 */
    cr_assert_eq(info->blobs[2].dims[3], 5); /* ceil((10 - 3) / 2) + 1 */
    ld_free(info);
    /* both layer and layers: refused */
    cr_assert_eq(plan_text("layer { type: \"ReLU\" }\nlayers { type: RELU }\n", LD_PLAN_TRAIN, 0,
                           NULL, m, sizeof m),
                 LD_EFORMAT);
    cr_assert(strstr(m, "legacy"), "%s", m);
}

/* The largest batch: it fits and one more does not. */
Test(plan, largest_batch_is_the_boundary)
{
    char text[2048], m[1024];
    snprintf(text, sizeof text,
             "%slayer { name: \"c\" type: \"Convolution\" bottom: \"data\" top: \"c\"\n"
             "  convolution_param { num_output: 64 kernel_size: 3 pad: 1 } }\n"
             "layer { name: \"ip\" type: \"InnerProduct\" bottom: \"c\" top: \"ip\" "
             "inner_product_param { num_output: 10 } }\n"
             "layer { name: \"loss\" type: \"SoftmaxWithLoss\" bottom: \"ip\" bottom: \"label\" "
             "top: \"l\" }\n",
             head);
    const char *p = write_net("b.prototxt", text);
    uint64_t ram = (uint64_t)300 << 20;
    ld_plan_info *a = NULL, *b = NULL, *c = NULL;
    char *err = NULL;
    cr_assert_eq(ld_plan(p, NULL, LD_PLAN_TRAIN, 0, ram, NULL, &a, &err), LD_OK, "%s", err);
    cr_assert_gt(a->largest_batch, 4);
    cr_assert_eq(a->batch, 4);
    cr_assert_eq(ld_plan(p, NULL, LD_PLAN_TRAIN, (int)a->largest_batch, ram, NULL, &b, &err),
                 LD_OK);
    cr_assert_eq(ld_plan(p, NULL, LD_PLAN_TRAIN, (int)a->largest_batch + 1, ram, NULL, &c, &err),
                 LD_OK);
    /* fitted to ram less the headroom for the estimate's error */
    cr_assert_eq(a->usable, ram - ram / 100 * LD_PLAN_HEADROOM_PCT);
    cr_assert_leq(b->total, a->usable);
    cr_assert_gt(c->total, a->usable);
    /* components add up and grow with the batch */
    uint64_t sum = 0;
    for (size_t i = 0; i < b->nitems; i++)
        sum += b->items[i].bytes;
    cr_assert_eq(sum, b->total);
    cr_assert_gt(c->total, a->total);
    ld_free(a);
    ld_free(b);
    ld_free(c);
    (void)m;
}

Test(plan, bad_arguments_and_missing_files)
{
    ld_plan_info *info = NULL;
    char *err = NULL;
    cr_assert_eq(ld_plan(NULL, NULL, LD_PLAN_TRAIN, 0, 0, NULL, &info, &err), LD_EINVAL);
    cr_assert_not_null(err);
    ld_free(err);
    err = NULL;
    cr_assert_eq(ld_plan("/nonexistent/net.prototxt", NULL, LD_PLAN_TRAIN, 0, 0, NULL, &info, &err),
                 LD_EIO);
    cr_assert(err && strstr(err, "/nonexistent/net.prototxt"), "%s", err);
    ld_free(err);
    /* a Data layer whose LMDB is missing: the message names the layer and the source */
    err = NULL;
    const char *p = write_net("d.prototxt",
                              "layer { name: \"d\" type: \"Data\" top: \"data\"\n"
                              "  data_param { source: \"/nonexistent/x.lmdb\" batch_size: 2 } }\n");
    cr_assert_neq(ld_plan(p, NULL, LD_PLAN_TRAIN, 0, 0, NULL, &info, &err), LD_OK);
    cr_assert(err && strstr(err, "/nonexistent/x.lmdb") && strstr(err, "line 1"), "%s", err);
    cr_assert_null(info);
    ld_free(err);
}

/* A bounded mutation run over the fuzz corpus (the CI side of tests/fuzz/fuzz_prototxt.c):
 * random byte flips, deletions, duplications and brace/quote insertions; every input parses
 * or fails with a message naming line:column, nothing crashes (ASan build: nothing leaks). */
Test(plan, mutated_nets_never_crash, .timeout = 120)
{
    static const char *const seeds[] = {"layers", "resnet",    "small",
                                        "syntax", "legacy_v1", "solver"};
    static const char inserts[] = "{}<>[]:;,\"'\\#\n 0-9e.";
    unsigned seed = 12345;
    for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++) {
        char path[512];
        snprintf(path, sizeof path, LD_SOURCE_DIR "/tests/fuzz/corpus/prototxt/%s", seeds[s]);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        char base[16384];
        size_t n = fread(base, 1, sizeof base, f);
        fclose(f);
        for (int iter = 0; iter < 400; iter++) {
            char buf[16384 + 64];
            memcpy(buf, base, n);
            size_t len = n;
            int edits = 1 + (int)(rand_r(&seed) % 4);
            for (int k = 0; k < edits && len > 1; k++) {
                size_t at = (size_t)rand_r(&seed) % len;
                switch (rand_r(&seed) % 4) {
                case 0: buf[at] = (char)rand_r(&seed); break;
                case 1:
                    memmove(buf + at, buf + at + 1, len - at - 1);
                    len--;
                    break;
                case 2:
                    if (len < sizeof buf - 1) {
                        memmove(buf + at + 1, buf + at, len - at);
                        buf[at] = inserts[(size_t)rand_r(&seed) % (sizeof inserts - 1)];
                        len++;
                    }
                    break;
                default: len = at + 1; /* truncate */
                }
            }
            ld_pt_node *root = NULL;
            ld_err e;
            ld__err_clear(&e);
            int rc = ld__pt_parse(buf, len, &root, &e);
            if (rc == LD_EFORMAT)
                cr_assert(e.msg[0] >= '1' && e.msg[0] <= '9' && strchr(e.msg, ':'), "%s", e.msg);
            ld__pt_free(root);
            if (rc != LD_OK || iter % 8) continue;
            /* every 8th parsable mutation also goes through ld_plan */
            const char *mp = write_net("m.prototxt", "");
            FILE *o = fopen(mp, "wb");
            cr_assert_not_null(o);
            fwrite(buf, 1, len, o);
            fclose(o);
            ld_plan_info *info = NULL;
            char *err = NULL;
            rc = ld_plan(mp, NULL, LD_PLAN_TRAIN, 0, (uint64_t)1 << 30, NULL, &info, &err);
            (void)rc;
            ld_free(info);
            ld_free(err);
        }
    }
}

/* Untrusted text cannot ask for unbounded work: layer and link counts are bounded. */
Test(plan, too_many_layers_are_refused)
{
    size_t cap = 5100 * 64 + 512, n = 0;
    char *t = malloc(cap);
    cr_assert_not_null(t);
    n += (size_t)snprintf(t, cap, "%s", head);
    for (int i = 0; i < 5001; i++)
        n += (size_t)snprintf(
            t + n, cap - n,
            "layer { name: \"r%d\" type: \"ReLU\" bottom: \"data\" top: \"data\" }\n", i);
    char m[1024];
    cr_assert_eq(plan_text(t, LD_PLAN_TRAIN, 0, NULL, m, sizeof m), LD_ELIMIT);
    cr_assert(strstr(m, "more than 5000 layers"), "%s", m);
    free(t);
}

/* An older solver names its TEST net in a file of its own (test_net:). */
Test(plan, solver_with_a_separate_test_net)
{
    char text[2048];
    snprintf(text, sizeof text,
             "%slayer { name: \"ip\" type: \"InnerProduct\" bottom: \"data\" top: \"ip\"\n"
             "  inner_product_param { num_output: 10 } }\n"
             "layer { name: \"loss\" type: \"SoftmaxWithLoss\" bottom: \"ip\" bottom: \"label\" "
             "top: \"l\" }\n",
             head);
    char train[512], test[512], solver[512];
    snprintf(train, sizeof train, "%s", write_net("train.prototxt", text));
    /* the test net: batch 50 instead of 4 */
    char *t50 = strdup(text);
    cr_assert_not_null(t50);
    char *at = strstr(t50, "dim: 4 dim: 3");
    memcpy(at, "dim: 9", 6);
    snprintf(test, sizeof test, "%s", write_net("test.prototxt", t50));
    free(t50);
    char stext[2048];
    snprintf(stext, sizeof stext,
             "train_net: \"%s\"\ntest_net: \"%s\"\ntest_iter: 1\ntest_interval: 5\n"
             "max_iter: 10\ntype: \"Adam\"\n",
             train, test);
    snprintf(solver, sizeof solver, "%s", write_net("solver.prototxt", stext));
    ld_plan_info *info = NULL;
    char *err = NULL;
    cr_assert_eq(ld_plan(NULL, solver, LD_PLAN_TRAIN, 0, (uint64_t)1 << 30, NULL, &info, &err),
                 LD_OK, "%s", err);
    int test_batch = 0;
    for (size_t i = 0; i < info->nblobs; i++)
        if (!strcmp(info->blobs[i].phase, "TEST") && !strcmp(info->blobs[i].name, "data"))
            test_batch = (int)info->blobs[i].dims[0];
    cr_assert_eq(test_batch, 9, "the TEST net comes from test_net");
    ld_free(info);
}
