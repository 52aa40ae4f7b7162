/*
 * ld_plan (libdata/plan.h) and its prototxt parser: the text format, errors that name the
 * line, bounds on untrusted text, Caffe's layer rules (phases, legacy V1 layers, implicit
 * splits), every layer kind's shapes against what real Caffe 1.0 logged
 * (tests/data/plan_layers), the largest-batch search, and a bounded mutation run over the
 * fuzz corpus (tests/fuzz/corpus/prototxt). Issue 26: fields caffe.proto lacks are refused (and
 * every field it has is accepted), a deploy net is planned as inference, the advice names what
 * does not grow with the batch, and Python/MemoryData data layers say how to give a shape.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/plan.h"
#include "plan/plan_schema.h"
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

/* ---- issue 26, items 7-10 ---- */

#define DEPLOY LD_SOURCE_DIR "/tests/data/plan/deploy_caffenet.prototxt"

static int has_item(const ld_plan_info *p, const char *name)
{
    for (size_t i = 0; i < p->nitems; i++)
        if (strstr(p->items[i].name, name) && p->items[i].bytes) return 1;
    return 0;
}

static const char *find_advice(const ld_plan_info *p, const char *a, const char *b)
{
    for (size_t i = 0; i < p->nadvice; i++)
        if (strstr(p->advice[i], a) && (!b || strstr(p->advice[i], b))) return p->advice[i];
    return NULL;
}

/* Item 8: Caffe refuses a field its caffe.proto does not have for the message ("Message type
 * "caffe.ConvolutionParameter" has no field named "strde""); the planner must too, instead of
 * planning conv1 without its stride (96x217x217, 4.63 GiB). */
Test(plan, misspelt_fields_are_refused_as_caffe_refuses_them)
{
    char text[2048], m[1024];
    snprintf(text, sizeof text,
             "%slayer { name: \"c\" type: \"Convolution\" bottom: \"data\" top: \"c\"\n"
             "  convolution_param { num_output: 4 kernel_size: 3 strde: 2 } }\n",
             head);
    cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_EFORMAT, "%s", m);
    cr_assert(strstr(m, "net.prototxt:4:52:") && strstr(m, "layer 'c'") &&
                  strstr(m, "message type \"caffe.ConvolutionParameter\" has no field named "
                            "\"strde\"") &&
                  strstr(m, "did you mean \"stride\""),
              "%s", m);
    /* in the layer itself: lrn_parm for lrn_param */
    snprintf(text, sizeof text,
             "%slayer { name: \"n\" type: \"LRN\" bottom: \"data\" top: \"n\"\n"
             "  lrn_parm { local_size: 3 } }\n",
             head);
    cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_EFORMAT, "%s", m);
    cr_assert(strstr(m, "net.prototxt:4:3:") && strstr(m, "\"caffe.LayerParameter\"") &&
                  strstr(m, "\"lrn_parm\"") && strstr(m, "did you mean \"lrn_param\""),
              "%s", m);
    /* in the net, in a nested message, and in the solver */
    cr_assert_eq(plan_text("inptu: \"data\"\n", LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, ":1:1:") && strstr(m, "\"caffe.NetParameter\"") && strstr(m, "\"inptu\""),
              "%s", m);
    snprintf(text, sizeof text, "%s", head);
    char *at = strstr(text, "shape { dim: 4 }");
    memcpy(at, "shape { dmi: 4 }", 16);
    cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, ":2:") && strstr(m, "\"caffe.BlobShape\"") && strstr(m, "\"dmi\""), "%s",
              m);
    const char *net = write_net("s_net.prototxt", head);
    char stext[1024];
    snprintf(stext, sizeof stext, "net: \"%s\"\nbase_lr: 0.01\nmax_itre: 10\n", net);
    const char *solver = write_net("s.prototxt", stext);
    ld_plan_info *info = NULL;
    char *err = NULL;
    cr_assert_eq(ld_plan(NULL, solver, LD_PLAN_TRAIN, 0, (uint64_t)1 << 30, NULL, &info, &err),
                 LD_EFORMAT);
    cr_assert(err && strstr(err, "s.prototxt:3:1:") && strstr(err, "\"caffe.SolverParameter\"") &&
                  strstr(err, "\"max_itre\"") && strstr(err, "\"max_iter\""),
              "%s", err);
    ld_free(err);
    /* a message given a value, a value given a message, an enum value Caffe lacks, a string
     * without quotes: all refused by Caffe's text parser */
    static const char *const bad[][2] = {
        {"convolution_param: 3", "is a message"},
        {"convolution_param { num_output: 4 kernel_size: 3 stride { } }", "takes a value"},
        {"convolution_param { num_output: 4 kernel_size: 3 engine: CUDA }",
         "caffe.ConvolutionParameter.Engine"},
        {"convolution_param { num_output: 4 kernel_size: 3 group: \"1\" }", "a whole number"},
        {"convolution_param { num_output: 4 kernel_size: 3 weight_filler { type: msra } }",
         "a quoted string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(
            text, sizeof text,
            "%slayer { name: \"c\" type: \"Convolution\" bottom: \"data\" top: \"c\"\n  %s }\n",
            head, bad[i][0]);
        cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_EFORMAT, "%s: %s",
                     bad[i][0], m);
        cr_assert(strstr(m, "net.prototxt:4:") && strstr(m, bad[i][1]), "%s: %s", bad[i][0], m);
    }
}

/* The other side of item 8: refusing a field Caffe accepts is worse than missing a typo. Every
 * net and solver of the tree passes, and so does a net full of fields the planner ignores. */
Test(plan, every_caffe_proto_field_is_accepted)
{
    static const char *const files[] = {
        "tests/data/plan/nets/caffenet/data_train_val.prototxt",
        "tests/data/plan/nets/caffenet/data_solver.prototxt",
        "tests/data/plan/nets/caffenet/hdf5_train_val.prototxt",
        "tests/data/plan/nets/caffenet/libdata_train_val.prototxt",
        "tests/data/plan/nets/lenet/data_train_val.prototxt",
        "tests/data/plan/nets/lenet/data_solver.prototxt",
        "tests/data/plan/nets/resnet/data_train_val.prototxt",
        "tests/data/plan/nets/resnet/hdf5_solver.prototxt",
        "tests/data/plan/nets/vgg/libdata_train_val.prototxt",
        "tests/data/plan/nets/vgg/libdata_solver.prototxt",
        "tests/data/plan_layers/layers.prototxt",
        "tests/data/plan/deploy_caffenet.prototxt",
        "samples/caffe/data_lmdb_train_val.prototxt",
        "samples/caffe/data_lmdb_solver.prototxt",
        "samples/caffe/hdf5_train_val.prototxt",
        "samples/caffe/libdata_train_val.prototxt",
        "samples/caffe/libdata_solver.prototxt",
        "tests/fuzz/corpus/prototxt/legacy_v1",
        "tests/fuzz/corpus/prototxt/solver",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[512], text[65536];
        snprintf(path, sizeof path, "%s/%s", LD_SOURCE_DIR, files[i]);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = 0;
        for (char *t = strstr(text, "TRAIN_BATCH"); t; t = strstr(t, "TRAIN_BATCH"))
            memcpy(t, "         16", 11); /* plan_measure.sh's placeholder */
        ld_pt_node *root = NULL;
        ld_err e;
        ld__err_clear(&e);
        cr_assert_eq(ld__pt_parse(text, n, &root, &e), LD_OK, "%s: %s", path, e.msg);
        int which = strstr(files[i], "solver") ? LD_PLAN_SOLVER_PROTO : LD_PLAN_NET_PROTO;
        cr_expect_eq(ld__plan_schema_check(root, which, path, &e), LD_OK, "%s", e.msg);
        ld__pt_free(root);
    }
    /* fields of caffe.proto that the planner does not read, in every kind of message */
    const char *t =
        "name: \"all\" force_backward: true debug_info: false\n"
        "state { phase: TEST level: 0 }\n"
        "layer { name: \"data\" type: \"Input\" top: \"data\" phase: TEST\n"
        "  input_param { shape { dim: 2 dim: 3 dim: 8 dim: 8 } } }\n"
        "layer { name: \"c\" type: \"Convolution\" bottom: \"data\" top: \"c\"\n"
        "  param { lr_mult: 1 decay_mult: 1 share_mode: PERMISSIVE } param { lr_mult: 2 }\n"
        "  propagate_down: false exclude { stage: \"deploy\" not_stage: \"x\" min_level: 1 }\n"
        "  convolution_param { num_output: 4 kernel_size: 3 engine: CAFFE force_nd_im2col: false\n"
        "    weight_filler { type: \"xavier\" std: 0.01 variance_norm: FAN_AVG_IS_NOT sparse: -1 "
        "}\n"
        "    bias_filler { type: \"constant\" value: 0.1 } } }\n";
    char m[1024];
    cr_assert_eq(plan_text(t, LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_EFORMAT, "%s", m);
    cr_assert(strstr(m, "\"FAN_AVG_IS_NOT\"") && strstr(m, "FAN_IN, FAN_OUT, AVERAGE"), "%s", m);
    char fixed[2048];
    snprintf(fixed, sizeof fixed, "%s", t);
    char *at = strstr(fixed, "FAN_AVG_IS_NOT");
    memcpy(at, "AVERAGE       ", 14);
    strcat(fixed, "layer { name: \"r\" type: \"ReLU\" bottom: \"c\" top: \"c\"\n"
                  "  relu_param { negative_slope: 0.1 engine: DEFAULT } }\n"
                  "layer { name: \"d\" type: \"Dropout\" bottom: \"c\" top: \"c\"\n"
                  "  dropout_param { dropout_ratio: 0.5 } }\n"
                  "layer { name: \"p\" type: \"Softmax\" bottom: \"c\" top: \"p\"\n"
                  "  loss_param { ignore_label: -1 normalization: VALID normalize: true }\n"
                  "  softmax_param { axis: 1 engine: CAFFE } }\n");
    cr_assert_eq(plan_text(fixed, LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_OK, "%s", m);
}

/* Caffe's text parser: an enum by number, the last value of a field given twice, two
 * non-repeated messages merged. The planner reads the tree Caffe would build. */
Test(plan, enums_by_number_and_repeated_fields_read_as_caffe_reads_them)
{
    char text[2048], m[1024];
    uint64_t totals[2];
    static const char *const pools[2] = {"AVE", "1"}; /* PoolMethod AVE = 1 */
    for (int i = 0; i < 2; i++) {
        snprintf(text, sizeof text,
                 "%slayer { name: \"p\" type: \"Pooling\" bottom: \"data\" top: \"p\"\n"
                 "  pooling_param { pool: %s kernel_size: 2 stride: 2 } }\n",
                 head, pools[i]);
        ld_plan_info *info = NULL;
        cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, &info, m, sizeof m), LD_OK, "%s", m);
        totals[i] = info->total;
        ld_free(info);
    }
    cr_assert_eq(totals[0], totals[1], "pool: 1 is AVE (no max-pooling mask)");
    /* kernel_size given twice in a PoolingParameter (not repeated): Caffe keeps 3 */
    snprintf(text, sizeof text,
             "%slayer { name: \"p\" type: \"Pooling\" bottom: \"data\" top: \"p\"\n"
             "  pooling_param { kernel_size: 2 kernel_size: 3 stride: 3 } }\n",
             head);
    ld_plan_info *info = NULL;
    cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, &info, m, sizeof m), LD_OK, "%s", m);
    cr_assert_eq(info->nblobs, 3);
    cr_assert_eq(info->blobs[2].dims[2], 11, "3x3 stride 3 on 32: 11, got %lld",
                 (long long)info->blobs[2].dims[2]);
    cr_assert_eq(info->blobs[2].dims[3], 11);
    ld_free(info);
    /* convolution_param twice: merged into one */
    snprintf(text, sizeof text,
             "%slayer { name: \"c\" type: \"Convolution\" bottom: \"data\" top: \"c\"\n"
             "  convolution_param { num_output: 5 } convolution_param { kernel_size: 3 } }\n",
             head);
    cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, &info, m, sizeof m), LD_OK, "%s", m);
    cr_assert_eq(info->blobs[2].dims[1], 5);
    cr_assert_eq(info->blobs[2].dims[2], 30);
    ld_free(info);
}

/* Item 7: a deploy net (net inputs, no loss) and no solver is inference, and the plan says
 * which phase it assumed and why; --phase train still plans training. */
Test(plan, deploy_net_is_planned_as_inference_by_default)
{
    ld_plan_info *a = NULL, *t = NULL, *tr = NULL;
    char *err = NULL;
    uint64_t ram = (uint64_t)8 << 30;
    cr_assert_eq(ld_plan(DEPLOY, NULL, LD_PLAN_AUTO, 0, ram, NULL, &a, &err), LD_OK, "%s", err);
    cr_assert_eq(ld_plan(DEPLOY, NULL, LD_PLAN_TEST, 0, ram, NULL, &t, &err), LD_OK, "%s", err);
    cr_assert_eq(ld_plan(DEPLOY, NULL, LD_PLAN_TRAIN, 0, ram, NULL, &tr, &err), LD_OK, "%s", err);
    cr_assert_eq(a->phase, LD_PLAN_TEST);
    cr_assert_str_eq(a->phase_reason, "the net has no loss layer");
    cr_assert_str_eq(a->blobs[0].phase, "TEST");
    cr_assert_eq(a->total, t->total, "auto %llu, test %llu", (unsigned long long)a->total,
                 (unsigned long long)t->total);
    cr_assert(!has_item(a, "parameter gradients") && !has_item(a, "solver history"));
    cr_assert_eq(tr->phase, LD_PLAN_TRAIN);
    cr_assert_str_eq(tr->phase_reason, "as asked");
    cr_assert(has_item(tr, "parameter gradients") && has_item(tr, "solver history"));
    cr_assert_gt(tr->total, 2 * a->total);
    ld_free(a);
    ld_free(t);
    ld_free(tr);
    /* a loss layer, or a solver, means training */
    char text[2048], m[1024];
    snprintf(text, sizeof text,
             "%slayer { name: \"ip\" type: \"InnerProduct\" bottom: \"data\" top: \"ip\"\n"
             "  inner_product_param { num_output: 2 } }\n"
             "layer { name: \"l\" type: \"SigmoidCrossEntropyLoss\" bottom: \"ip\" bottom: \"ip\" "
             "top: \"l\" }\n",
             head);
    cr_assert_eq(plan_text(text, LD_PLAN_AUTO, 0, &a, m, sizeof m), LD_OK, "%s", m);
    cr_assert_eq(a->phase, LD_PLAN_TRAIN);
    cr_assert_str_eq(a->phase_reason, "the net has a loss layer");
    ld_free(a);
    char stext[1024];
    snprintf(stext, sizeof stext, "net: \"%s\"\ntype: \"Adam\"\n", DEPLOY);
    const char *solver = write_net("deploy_solver.prototxt", stext);
    cr_assert_eq(ld_plan(NULL, solver, LD_PLAN_AUTO, 0, ram, NULL, &a, &err), LD_OK, "%s", err);
    cr_assert_eq(a->phase, LD_PLAN_TRAIN);
    cr_assert_str_eq(a->phase_reason, "a solver is given");
    ld_free(a);
}

/* Item 9: when not even batch 1 fits, the advice names the largest parts that do not grow
 * with the batch (fc6's parameters, Adam's history) with their sizes and what reduces each. */
Test(plan, nothing_fits_names_the_fixed_parts_and_their_cures)
{
    ld_plan_info *p = NULL;
    char *err = NULL;
    cr_assert_eq(ld_plan(DEPLOY, NULL, LD_PLAN_TEST, 0, (uint64_t)200 << 20, NULL, &p, &err), LD_OK,
                 "%s", err);
    cr_assert_eq(p->largest_batch, 0);
    cr_assert(find_advice(p, "no batch size fits", "by itself"), "%s",
              p->nadvice ? p->advice[0] : "(no advice)");
    const char *a = find_advice(p, "parameters: 217 MiB", "'fc6' 37.8M (144 MiB)");
    cr_assert(a && strstr(a, "'fc7' 16.8M") && strstr(a, "num_output") &&
                  strstr(a, "smaller input to 'fc6' (256x6x6 per sample"),
              "%s", a ? a : (p->nadvice > 1 ? p->advice[1] : "(none)"));
    cr_assert_eq(p->advice_terms, 0u, "no conversion parameter in this advice");
    ld_free(p);
    /* training with Adam: its 3 history values per parameter are named too */
    char stext[1024];
    snprintf(stext, sizeof stext, "net: \"%s\"\ntype: \"Adam\"\n", DEPLOY);
    const char *solver = write_net("adam.prototxt", stext);
    cr_assert_eq(ld_plan(NULL, solver, LD_PLAN_TRAIN, 0, (uint64_t)500 << 20, NULL, &p, &err),
                 LD_OK, "%s", err);
    cr_assert_eq(p->largest_batch, 0);
    a = find_advice(p, "solver history: Adam keeps 3 values per parameter (651 MiB)",
                    "SGD keeps 1");
    cr_assert(a, "%s", p->nadvice > 2 ? p->advice[2] : "(none)");
    cr_assert(find_advice(p, "parameters and their gradients: 434 MiB", "'fc6' 37.8M (288 MiB)"));
    ld_free(p);
}

/* Item 9: a Python or MemoryData data layer is not "no bottom": it is not supported, and the
 * message says how to give the shape (shapes, or an Input layer); with shapes it is planned. */
Test(plan, python_and_memorydata_layers_say_how_to_give_the_shape)
{
    static const char *const tail =
        "layer { name: \"ip\" type: \"InnerProduct\" bottom: \"data\" top: \"ip\"\n"
        "  inner_product_param { num_output: 2 } }\n";
    char text[2048], m[1024];
    snprintf(text, sizeof text,
             "layer { name: \"data\" type: \"Python\" top: \"data\" top: \"label\"\n"
             "  python_param { module: \"feed\" layer: \"Feed\" } }\n%s",
             tail);
    cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_EINVAL, "%s", m);
    cr_assert(strstr(m, "net.prototxt:1: layer 'data' (Python): not supported") &&
                  strstr(m, "in shapes (data=C,H,W") && strstr(m, "an Input layer") &&
                  !strstr(m, "no bottom"),
              "%s", m);
    snprintf(text, sizeof text,
             "layer { name: \"data\" type: \"MemoryData\" top: \"data\" top: \"label\"\n"
             "  memory_data_param { batch_size: 8 channels: 3 height: 32 width: 24 } }\n%s",
             tail);
    cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_EINVAL, "%s", m);
    cr_assert(strstr(m, "(MemoryData): not supported") && strstr(m, "shapes (data=3,32,24"), "%s",
              m);
    /* with the shape: planned as an input, at the layer's batch, and a note says so */
    const char *p = write_net("md.prototxt", text);
    ld_plan_info *info = NULL;
    char *err = NULL;
    cr_assert_eq(ld_plan(p, NULL, LD_PLAN_TEST, 0, (uint64_t)1 << 30, "data=3,32,24", &info, &err),
                 LD_OK, "%s", err);
    cr_assert_eq(info->nblobs, 3);
    cr_assert_eq(info->blobs[0].ndims, 4);
    cr_assert_eq(info->blobs[0].dims[0], 8);
    cr_assert_eq(info->blobs[0].dims[3], 24);
    cr_assert_eq(info->blobs[1].ndims, 1, "the label: one per sample");
    cr_assert_eq(info->nnotes, 1);
    cr_assert(strstr(info->notes[0], "MemoryData (layer 'data'): planned as an input"), "%s",
              info->notes[0]);
    ld_free(info);
}

/* Item 9: the other shape failures are LD_EINVAL too (the caller's `shapes` must give them),
 * while a malformed net stays LD_EFORMAT: a program can tell when to ask for a shape. */
Test(plan, missing_shapes_are_einval_other_failures_are_not)
{
    char m[1024];
    cr_assert_eq(plan_text("layer { name: \"in\" type: \"Input\" top: \"data\" }\n", LD_PLAN_TEST,
                           0, NULL, m, sizeof m),
                 LD_EINVAL, "%s", m);
    cr_assert(strstr(m, "shapes (data=C,H,W)"), "%s", m);
    cr_assert_eq(plan_text("layer { name: \"d\" type: \"ImageData\" top: \"data\" top: \"l\"\n"
                           "  image_data_param { source: \"x.txt\" batch_size: 2 } }\n",
                           LD_PLAN_TEST, 0, NULL, m, sizeof m),
                 LD_EINVAL, "%s", m);
    cr_assert_eq(plan_text("layer { name: \"a\"\n", LD_PLAN_TEST, 0, NULL, m, sizeof m),
                 LD_EFORMAT);
    cr_assert(!strstr(m, "shapes"), "%s", m);
}

/* Item 10: library messages speak the library's terms, not the tool's. */
Test(plan, library_messages_name_no_tool)
{
    char text[2048], m[1024];
    snprintf(text, sizeof text,
             "%slayer { name: \"x\" type: \"Mystery\" bottom: \"data\" top: \"x\" }\n", head);
    cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, NULL, m, sizeof m), LD_EFORMAT);
    cr_assert(strstr(m, "layer type 'Mystery' is not one the planner knows"), "%s", m);
    cr_assert(!strstr(m, "dataconv") && !strstr(m, "--"), "%s", m);
}

static const ld_plan_blob *blob(const ld_plan_info *p, const char *name)
{
    for (size_t i = 0; i < p->nblobs; i++)
        if (!strcmp(p->blobs[i].name, name)) return &p->blobs[i];
    cr_assert_fail("no blob '%s'", name);
    return NULL;
}

/* Fields of messages the planner reads that change shapes: Pooling's round_mode, Accuracy's
 * axis, DummyData's legacy num/channels/height/width (Caffe 9b89154's Reshape). */
Test(plan, round_mode_accuracy_axis_and_dummydata_legacy_dims)
{
    char text[2048], m[1024];
    snprintf(text, sizeof text,
             "%slayer { name: \"l2\" type: \"Input\" top: \"l2\"\n"
             "  input_param { shape { dim: 4 dim: 3 dim: 32 } } }\n"
             "layer { name: \"p\" type: \"Pooling\" bottom: \"data\" top: \"p\"\n"
             "  pooling_param { pool: MAX kernel_size: 3 stride: 2 round_mode: FLOOR } }\n"
             "layer { name: \"q\" type: \"Pooling\" bottom: \"data\" top: \"q\"\n"
             "  pooling_param { pool: MAX kernel_size: 3 stride: 2 } }\n"
             "layer { name: \"a\" type: \"Accuracy\" bottom: \"data\" bottom: \"l2\" top: \"a\" "
             "top: \"per_class\" accuracy_param { axis: 3 } }\n"
             "layer { name: \"dd\" type: \"DummyData\" top: \"x\" top: \"y\"\n"
             "  dummy_data_param { num: 5 channels: 2 channels: 7 height: 4 width: 6 } }\n",
             head);
    ld_plan_info *info = NULL;
    cr_assert_eq(plan_text(text, LD_PLAN_TEST, 0, &info, m, sizeof m), LD_OK, "%s", m);
    cr_assert_eq(blob(info, "p")->dims[2], 15, "floor((32 - 3) / 2) + 1");
    cr_assert_eq(blob(info, "q")->dims[2], 16, "ceil((32 - 3) / 2) + 1");
    const ld_plan_blob *pc = blob(info, "per_class");
    cr_assert(pc->ndims == 1 && pc->dims[0] == 32, "one accuracy per class along axis 3: %lld",
              (long long)pc->dims[0]);
    const ld_plan_blob *x = blob(info, "x"), *y = blob(info, "y");
    cr_assert(x->ndims == 4 && x->dims[0] == 5 && x->dims[1] == 2 && x->dims[2] == 4 &&
                  x->dims[3] == 6,
              "x: %d axes", x->ndims);
    cr_assert(y->ndims == 4 && y->dims[1] == 7 && y->dims[3] == 6, "y: %d axes", y->ndims);
    ld_free(info);
}

/* Item 8, last part: the layer types whose parameters the planner does not all interpret are
 * named in notes (the estimate stays, with its limits said). */
Test(plan, notes_name_layer_types_not_fully_interpreted)
{
    char text[2048], m[1024];
    snprintf(text, sizeof text,
             "state { level: 1 }\n%s"
             "layer { name: \"a\" type: \"InnerProduct\" bottom: \"data\" top: \"a\"\n"
             "  param { name: \"w\" } inner_product_param { num_output: 2 bias_term: false } }\n"
             "layer { name: \"b\" type: \"InnerProduct\" bottom: \"data\" top: \"b\"\n"
             "  param { name: \"w\" } inner_product_param { num_output: 2 bias_term: false } }\n"
             "layer { name: \"l\" type: \"SigmoidCrossEntropyLoss\" bottom: \"a\" bottom: \"b\" "
             "top: \"l\" }\n",
             head);
    ld_plan_info *info = NULL;
    cr_assert_eq(plan_text(text, LD_PLAN_TRAIN, 0, &info, m, sizeof m), LD_OK, "%s", m);
    cr_assert_eq(info->nnotes, 3);
    cr_assert(strstr(info->notes[0], "the net's state (level, stage) is not interpreted"), "%s",
              info->notes[0]);
    cr_assert(strstr(info->notes[1], "InnerProduct: shared parameters"), "%s", info->notes[1]);
    cr_assert(strstr(info->notes[2], "SigmoidCrossEntropyLoss: planned as a loss of one value"),
              "%s", info->notes[2]);
    ld_free(info);
    /* a net the planner reads whole has none */
    cr_assert_eq(plan_text(head, LD_PLAN_TEST, 0, &info, m, sizeof m), LD_OK, "%s", m);
    cr_assert_eq(info->nnotes, 0);
    ld_free(info);
}
