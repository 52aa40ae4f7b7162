/*
 * ld_plan(): Caffe's peak host memory for a net (and solver), by component, and the largest
 * batch that fits. The rules are Caffe 1.0's (plan_shape.c, docs/caffe_memory.md); the
 * process baseline is measured (tests/data/plan/measured.tsv).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/plan.h"
#include "plan/plan_net.h"
#include "plan/plan_schema.h"

/* Caffe 1.0 (CPU, OpenBLAS) on a trivial net: the binary, its libraries (boost, protobuf,
 * glog, OpenCV, HDF5, LMDB, BLAS) and the BLAS and malloc arenas of its threads. Measured
 * with /usr/bin/time -v (tests/data/plan/measured.tsv, the "baseline" rows). */
#define LD_PLAN_BASELINE ((uint64_t)59900 << 10)

typedef struct solver {
    const char *type;
    int64_t max_iter, test_interval, test_iter;
    int test_init, l1;
    const char *net, *test_net;
} solver;

static int read_text(const char *path, char **out, size_t *len, ld_err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) return ld__err(e, LD_EIO, "%s: cannot open", path);
    ld_buf b = {0};
    char chunk[65536];
    size_t n;
    int rc = LD_OK;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.len + n > LD_PT_MAX_INPUT) {
            rc = ld__err(e, LD_ELIMIT, "%s: larger than %zu MiB: not a prototxt", path,
                         LD_PT_MAX_INPUT >> 20);
            break;
        }
        if (ld__buf_append(&b, chunk, n) != LD_OK) {
            rc = ld__err(e, LD_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc == LD_OK && ferror(f)) rc = ld__err(e, LD_EIO, "%s: read error", path);
    fclose(f);
    if (rc == LD_OK && ld__buf_reserve(&b, b.len + 1) != LD_OK)
        rc = ld__err(e, LD_ENOMEM, "out of memory");
    if (rc != LD_OK) {
        ld__buf_free(&b);
        return rc;
    }
    b.p[b.len] = 0;
    *out = (char *)b.p;
    *len = b.len;
    return LD_OK;
}

static int parse_solver(const char *path, ld_pt_node **root, solver *s, ld_err *e)
{
    char *text = NULL;
    size_t len = 0;
    ld_err pe;
    ld__err_clear(&pe);
    memset(s, 0, sizeof *s);
    int rc = read_text(path, &text, &len, e);
    if (rc != LD_OK) return rc;
    rc = ld__pt_parse(text, len, root, &pe);
    free(text);
    if (rc != LD_OK) return ld__err(e, rc, "%s:%s", path, pe.msg);
    if ((rc = ld__plan_schema_check(*root, LD_PLAN_SOLVER_PROTO, path, e)) != LD_OK) return rc;
    const ld_pt_node *r = *root;
    s->type = ld__pt_get_str(r, "type", NULL);
    if (!s->type) s->type = ld__pt_get_str(r, "solver_type", "SGD");
    static const char *const known[][2] = {
        {"SGD", "SGD"},           {"NESTEROV", "Nesterov"}, {"ADAGRAD", "AdaGrad"},
        {"RMSPROP", "RMSProp"},   {"ADADELTA", "AdaDelta"}, {"ADAM", "Adam"},
        {"Nesterov", "Nesterov"}, {"AdaGrad", "AdaGrad"},   {"RMSProp", "RMSProp"},
        {"AdaDelta", "AdaDelta"}, {"Adam", "Adam"}};
    const char *t = NULL;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(s->type, known[i][0])) t = known[i][1];
    if (!t) {
        const ld_pt_node *f = ld__pt_get(r, "type");
        return ld__err(e, LD_EFORMAT,
                       "%s:%d: solver type '%s' is not one of Caffe 1.0's (SGD, Nesterov, "
                       "AdaGrad, RMSProp, AdaDelta, Adam)",
                       path, f ? f->line : 1, s->type);
    }
    s->type = t;
    if ((rc = ld__pt_get_int(r, "max_iter", 0, 0, INT32_MAX, &s->max_iter, e)) != LD_OK) goto bad;
    if ((rc = ld__pt_get_int(r, "test_interval", 0, 0, INT32_MAX, &s->test_interval, e)) != LD_OK)
        goto bad;
    if ((rc = ld__pt_get_int(r, "test_iter", 0, 0, INT32_MAX, &s->test_iter, e)) != LD_OK) goto bad;
    if ((rc = ld__pt_get_bool(r, "test_initialization", 1, &s->test_init, e)) != LD_OK) goto bad;
    const char *reg = ld__pt_get_str(r, "regularization_type", "L2");
    s->l1 = reg && !strcmp(reg, "L1");
    s->net = ld__pt_get_str(r, "net", NULL);
    if (!s->net) s->net = ld__pt_get_str(r, "train_net", NULL);
    s->test_net = ld__pt_get_str(r, "test_net", NULL); /* older solvers: a separate TEST net file */
    return LD_OK;
bad:
    return ld__err(e, rc, "%s: %s", path, e ? e->msg : "bad field");
}

/* Solver state per learnable float (Caffe 1.0's solvers/\*.cpp: which buffers they touch). */
static int history_factor(const solver *s)
{
    if (!s) return 1; /* training always has a solver: SGD's unless told */
    if (!strcmp(s->type, "SGD")) return 1 + s->l1;      /* history_ (+ temp_ for L1) */
    if (!strcmp(s->type, "Nesterov")) return 2 + s->l1; /* history_, update_ */
    if (!strcmp(s->type, "AdaGrad")) return 2 + s->l1;  /* history_, update_ */
    if (!strcmp(s->type, "RMSProp")) return 2 + s->l1;  /* history_, update_ */
    if (!strcmp(s->type, "AdaDelta")) return 4;         /* 2 histories, update_, temp_ */
    return 3;                                           /* Adam: m, v, temp_ */
}

static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    fclose(f);
    return (uint64_t)kb * 1024;
}

typedef struct item {
    const char *name;
    int phase; /* 0 train-or-primary, 1 test, 2 process */
    int comp;  /* LD_PM_*, -1 history, -2 baseline */
} item;

typedef struct ctx {
    ld_plan_net main, test;
    int has_test;
    ld_plan_cfg cfg_main, cfg_test;
    solver sol;
    int has_solver;
    int phase;
    int main_batch;   /* the planned net's batch at the last evaluate() */
    int test_batch;   /* the TEST net's, when it is planned too */
    ld_plan_mem last; /* the planned net's memory at the last evaluate() */
} ctx;

/* Bytes of every item at batch b (main net); returns the total. */
static int evaluate(ctx *c, int batch, uint64_t *bytes, size_t nitems, const item *items,
                    uint64_t *total, ld_err *e)
{
    ld_plan_mem mm, mt;
    memset(&mt, 0, sizeof mt);
    c->cfg_main.batch = batch;
    int rc = ld__plan_net_estimate(&c->main, &c->cfg_main, &mm, e);
    if (rc == LD_OK && c->has_test) rc = ld__plan_net_estimate(&c->test, &c->cfg_test, &mt, e);
    if (rc != LD_OK) return rc;
    /* The test net's parameters are freed once it shares the train net's (first test). */
    mt.c[LD_PM_PARAM] = 0;
    /* One LMDB mapped by both nets counts once. */
    if (c->has_test && mt.c[LD_PM_SOURCE] && mm.c[LD_PM_SOURCE]) {
        const ld_plan_layer *a = NULL, *b = NULL;
        for (size_t i = 0; i < c->main.nlayers && !a; i++)
            if (c->main.layers[i].src) a = &c->main.layers[i];
        for (size_t i = 0; i < c->test.nlayers && !b; i++)
            if (c->test.layers[i].src) b = &c->test.layers[i];
        if (a && b && !strcmp(a->src->path, b->src->path) && !strcmp(a->type, "Data") &&
            !strcmp(b->type, "Data"))
            mt.c[LD_PM_SOURCE] = mt.c[LD_PM_SOURCE] > mm.c[LD_PM_SOURCE]
                                     ? mt.c[LD_PM_SOURCE] - mm.c[LD_PM_SOURCE]
                                     : 0;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < nitems; i++) {
        const item *it = &items[i];
        uint64_t v;
        if (it->comp == -2)
            v = LD_PLAN_BASELINE;
        else if (it->comp == -1)
            v = mm.param_count * 4 * (uint64_t)history_factor(c->has_solver ? &c->sol : NULL);
        else
            v = (it->phase ? mt : mm).c[it->comp];
        bytes[i] = v;
        if (__builtin_add_overflow(sum, v, &sum))
            return ld__err(e, LD_ELIMIT, "the memory total overflows 64 bits: absurd sizes");
    }
    *total = sum;
    c->main_batch = mm.batch;
    c->test_batch = mt.batch;
    c->last = mm;
    return LD_OK;
}

static int add_advice(char ***adv, size_t *n, char *s, ld_err *e)
{
    if (!s) return ld__err(e, LD_ENOMEM, "out of memory");
    char **t = realloc(*adv, (*n + 1) * sizeof *t);
    if (!t) {
        free(s);
        return ld__err(e, LD_ENOMEM, "out of memory");
    }
    t[(*n)++] = s;
    *adv = t;
    return LD_OK;
}

static void human(uint64_t b, char *out, size_t cap)
{
    if (b >= (uint64_t)1 << 30)
        snprintf(out, cap, "%.1f GiB", (double)b / (1 << 30));
    else if (b >= (uint64_t)1 << 20)
        snprintf(out, cap, "%.0f MiB", (double)b / (1 << 20));
    else
        snprintf(out, cap, "%.0f KiB", (double)b / 1024);
}

/* A count of floats: 37.7M, 307.2K, 96. */
static void floats(uint64_t n, char *out, size_t cap)
{
    if (n >= 1000000)
        snprintf(out, cap, "%.1fM", (double)n / 1e6);
    else if (n >= 1000)
        snprintf(out, cap, "%.1fK", (double)n / 1e3);
    else
        snprintf(out, cap, "%llu", (unsigned long long)n);
}

/* Largest b in [1, 2^24] with total(b) <= ram (totals grow with b); 0 if none. */
static int largest(ctx *c, uint64_t ram, uint64_t *bytes, size_t ni, const item *items,
                   int64_t *out, ld_err *e)
{
    uint64_t tot;
    int rc;
    int64_t lo = 0, hi = 1;
    for (;;) {
        if ((rc = evaluate(c, (int)hi, bytes, ni, items, &tot, e)) != LD_OK) {
            if (rc == LD_ELIMIT && hi > 1) break; /* past Caffe's blob limit: too big anyway */
            return rc;
        }
        if (tot > ram) break;
        lo = hi;
        if (hi >= (1 << 24)) {
            *out = lo;
            return LD_OK;
        }
        hi *= 2;
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        rc = evaluate(c, (int)mid, bytes, ni, items, &tot, e);
        if (rc != LD_OK && rc != LD_ELIMIT) return rc;
        if (rc == LD_OK && tot <= ram)
            lo = mid;
        else
            hi = mid;
    }
    *out = lo;
    return LD_OK;
}

/* When not even batch 1 fits: what does not grow with the batch, largest first, each with its
 * size and what reduces it. `fixed` is each item's share that batch 1 and batch 2 both need. */
static int fixed_advice(ctx *c, const item *items, size_t ni, const uint64_t *fixed, char ***adv,
                        size_t *nadv, unsigned *terms, ld_err *e)
{
    enum { G_PARAMS, G_HISTORY, G_SOURCE, G_TEST, G_BASELINE, G_COL, G_OTHER, G_N };
    uint64_t g[G_N] = {0};
    for (size_t i = 0; i < ni; i++) {
        int k = items[i].comp, grp = G_OTHER;
        if (items[i].phase == 1)
            grp = G_TEST;
        else if (k == -2)
            grp = G_BASELINE;
        else if (k == -1)
            grp = G_HISTORY;
        else if (k == LD_PM_PARAM || k == LD_PM_PARAM_DIFF)
            grp = G_PARAMS;
        else if (k == LD_PM_SOURCE)
            grp = G_SOURCE;
        else if (k == LD_PM_COL)
            grp = G_COL;
        g[grp] += fixed[i];
    }
    uint64_t sum = 0;
    for (int k = 0; k < G_N; k++)
        sum += g[k];
    const ld_plan_mem *m = &c->last;
    const int train = c->phase == LD_PLAN_TRAIN;
    const char *stype = c->has_solver ? c->sol.type : "SGD";
    const int hf = history_factor(c->has_solver ? &c->sol : NULL);
    char h[32], h2[32], f[32];
    int rc = LD_OK;
    for (int done = 0; done < G_N && rc == LD_OK; done++) {
        int k = -1;
        for (int q = 0; q < G_N; q++)
            if (g[q] && (k < 0 || g[q] > g[k])) k = q;
        /* the parts that matter: 1 MiB and 2 % of the whole at least */
        if (k < 0 || g[k] < ((uint64_t)1 << 20) || g[k] < sum / 50) break;
        human(g[k], h, sizeof h);
        char *a = NULL;
        if (k == G_PARAMS) {
            char list[512] = "", cure[256] = "";
            size_t used = 0;
            for (int b = 0; b < LD_PLAN_NBIG && m->big[b].count; b++) {
                const ld_plan_layer *L = &c->main.layers[m->big[b].layer];
                floats(m->big[b].count, f, sizeof f);
                human(m->big[b].count * 4 * (train ? 2 : 1), h2, sizeof h2);
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s '%s' %s (%s)",
                                         b ? ", " : "", L->type, L->name, f, h2);
                if (used >= sizeof list) used = sizeof list - 1;
                if (m->big[b].bottom_nd > 1 && !cure[0]) {
                    char dims[96] = "";
                    size_t du = 0;
                    for (int q = 1; q < m->big[b].bottom_nd && du < sizeof dims - 24; q++)
                        du += (size_t)snprintf(dims + du, sizeof dims - du, "%s%lld",
                                               q > 1 ? "x" : "", (long long)m->big[b].bottom_d[q]);
                    snprintf(cure, sizeof cure,
                             ", or a smaller input to '%s' (%s per sample: a smaller input size "
                             "or more pooling before it)",
                             L->name, dims);
                }
            }
            if (list[0])
                a = ld__asprintf("parameters%s: %s; the largest: %s. A smaller num_output in "
                                 "them%s reduces it",
                                 train ? " and their gradients" : "", h, list, cure);
            else
                a = ld__asprintf("parameters%s: %s", train ? " and their gradients" : "", h);
        } else if (k == G_HISTORY) {
            const char *cure = "SGD keeps 1 (type: \"SGD\" in the solver), Nesterov, AdaGrad "
                               "and RMSProp 2";
            if (hf == 1)
                cure = "the least of Caffe's solvers: only fewer parameters reduce it";
            else if (!strcmp(stype, "SGD")) /* SGD with L1 regularization */
                cure = "regularization_type L2 keeps one fewer";
            a = ld__asprintf("solver history: %s keeps %d value%s per parameter (%s): %s", stype,
                             hf, hf == 1 ? "" : "s", h, cure);
        } else if (k == G_SOURCE) {
            const ld_plan_layer *L = NULL;
            for (size_t i = 0; i < c->main.nlayers && !L; i++)
                if (c->main.layers[i].src) L = &c->main.layers[i];
            if (L && !strcmp(L->type, "HDF5Data")) {
                *terms |= LD_PLAN_TERM_SPLIT_BYTES;
                a = ld__asprintf("data source: HDF5Data '%s' holds a whole file as float32 (%s): "
                                 "smaller files (split_bytes at conversion) or the LibData "
                                 "layer reduce it",
                                 L->name, h);
            } else {
                a = ld__asprintf("data source: the Data layer%s%s%s keeps the LMDB pages it "
                                 "reads mapped, and they count in RSS (%s): the LibData layer "
                                 "(bindings/caffe) reads them without keeping them, or a "
                                 "smaller max_iter reads fewer",
                                 L ? " '" : "", L ? L->name : "", L ? "'" : "", h);
            }
        } else if (k == G_TEST) {
            a = ld__asprintf("the TEST net at its batch %d: %s: a smaller batch_size in its data "
                             "layer, or no test net during training (no test_iter / "
                             "test_interval in the solver)",
                             c->test_batch, h);
        } else if (k == G_BASELINE) {
            a = ld__asprintf("Caffe's own process (binary, libraries, BLAS): %s, whatever the "
                             "net",
                             h);
        } else if (k == G_COL) {
            a = ld__asprintf("im2col buffers (one image's worth per convolution): %s: a smaller "
                             "input size reduces them",
                             h);
        } else {
            a = ld__asprintf("other buffers that do not grow with the batch: %s", h);
        }
        rc = add_advice(adv, nadv, a, e);
        g[k] = 0;
    }
    return rc;
}

static const char *const comp_names[LD_PM_N] = {
    "activations (top data)",
    "gradients (top diff)",
    "parameters",
    "parameter gradients",
    "layer buffers (pooling masks, BatchNorm, LRN, dropout, softmax)",
    "im2col buffers",
    "data layer batches (prefetch / reader ring)",
    "data source (HDF5 file as float32 / LMDB pages mapped)"};

int ld_plan(const char *net_path, const char *solver_path, int phase, int batch, uint64_t ram,
            const char *shapes, ld_plan_info **info, char **errmsg)
{
    ld_err e;
    ld__err_clear(&e);
    ctx c;
    memset(&c, 0, sizeof c);
    ld_pt_node *sroot = NULL;
    char *text = NULL, *net_owned = NULL, *test_text = NULL;
    size_t len = 0, test_len = 0, ni = 0, nadv = 0;
    unsigned terms = 0; /* LD_PLAN_TERM_* the advice uses */
    char **adv = NULL;
    item items[2 * LD_PM_N + 2];
    uint64_t bytes[2 * LD_PM_N + 2], total = 0;
    int64_t best = 0;
    int rc = LD_OK;
    if (info) *info = NULL;
    if (errmsg) *errmsg = NULL;
    if (!info || (!net_path && !solver_path) ||
        (phase != LD_PLAN_TRAIN && phase != LD_PLAN_TEST && phase != LD_PLAN_AUTO) || batch < 0) {
        rc = ld__err(&e, LD_EINVAL,
                     "ld_plan: a net or a solver path, a phase (LD_PLAN_TRAIN/TEST/AUTO) and a "
                     "batch >= 0 are required");
        goto fail;
    }
    const char *phase_reason = "as asked";
    if (solver_path) {
        if ((rc = parse_solver(solver_path, &sroot, &c.sol, &e)) != LD_OK) goto fail;
        c.has_solver = 1;
        if (!net_path) {
            if (!c.sol.net) {
                rc = ld__err(&e, LD_EFORMAT,
                             "%s: the solver names no net file (net: or train_net:%s): give the "
                             "net prototxt",
                             solver_path,
                             ld__pt_get(sroot, "net_param") || ld__pt_get(sroot, "train_net_param")
                                 ? "; a net written inside the solver is not read"
                                 : "");
                goto fail;
            }
            net_path = net_owned = ld__strdup(c.sol.net);
            if (!net_owned) {
                rc = ld__err(&e, LD_ENOMEM, "out of memory");
                goto fail;
            }
        }
    }
    if ((rc = read_text(net_path, &text, &len, &e)) != LD_OK) goto fail;
    /* LD_PLAN_AUTO: training needs a solver or a loss; a net with neither is deployed. */
    const int asked = phase;
    if (asked == LD_PLAN_AUTO) {
        phase = LD_PLAN_TRAIN;
        phase_reason = c.has_solver ? "a solver is given" : "the net has a loss layer";
    }
    c.phase = phase;
    c.cfg_main = (ld_plan_cfg){
        phase == LD_PLAN_TRAIN, batch, c.has_solver ? c.sol.max_iter : 0, shapes, net_path, ""};
    if ((rc = ld__plan_net_load(&c.main, text, len, phase, &c.cfg_main, &e)) != LD_OK) goto fail;
    if (asked == LD_PLAN_AUTO && !c.has_solver && !c.main.has_loss) {
        ld__plan_net_free(&c.main);
        c.phase = phase = LD_PLAN_TEST;
        phase_reason = "the net has no loss layer";
        c.cfg_main.train = 0;
        if ((rc = ld__plan_net_load(&c.main, text, len, phase, &c.cfg_main, &e)) != LD_OK)
            goto fail;
    }
    c.has_test =
        phase == LD_PLAN_TRAIN && c.has_solver && c.sol.test_iter > 0 && c.sol.test_interval > 0;
    if (c.has_test) {
        int64_t ntests = c.sol.max_iter / c.sol.test_interval + c.sol.test_init;
        c.cfg_test =
            (ld_plan_cfg){0, 0, c.sol.test_iter * (ntests ? ntests : 1), shapes, net_path, ""};
        if (c.sol.test_net) {
            if ((rc = read_text(c.sol.test_net, &test_text, &test_len, &e)) != LD_OK) goto fail;
            c.cfg_test.file = c.sol.test_net;
        }
        if ((rc = ld__plan_net_load(&c.test, test_text ? test_text : text,
                                    test_text ? test_len : len, 1, &c.cfg_test, &e)) != LD_OK)
            goto fail;
    }
    /* The components. */
    for (int k = 0; k < LD_PM_N; k++) {
        items[ni++] = (item){comp_names[k], 0, k};
        if (k == LD_PM_PARAM_DIFF && phase == LD_PLAN_TRAIN)
            items[ni++] = (item){"solver history", 0, -1};
    }
    if (c.has_test)
        for (int k = 0; k < LD_PM_N; k++)
            if (k != LD_PM_TOP_DIFF && k != LD_PM_PARAM && k != LD_PM_PARAM_DIFF)
                items[ni++] = (item){comp_names[k], 1, k};
    items[ni++] = (item){"process baseline (caffe, libraries, BLAS and malloc arenas)", 2, -2};

    uint64_t tmp[2 * LD_PM_N + 2];
    if (!ram) ram = mem_available();
    const uint64_t usable = ram - ram / 100 * LD_PLAN_HEADROOM_PCT;
    if ((rc = largest(&c, usable, tmp, ni, items, &best, &e)) != LD_OK) goto fail;
    if ((rc = evaluate(&c, batch, bytes, ni, items, &total, &e)) != LD_OK) goto fail;
    int used_batch = c.main_batch;
    uint64_t per[2 * LD_PM_N + 2];
    {
        /* what grows per sample: the difference to one more */
        uint64_t t1;
        if (evaluate(&c, used_batch + 1, tmp, ni, items, &t1, &e) == LD_OK) {
            for (size_t i = 0; i < ni; i++)
                per[i] = tmp[i] > bytes[i] ? tmp[i] - bytes[i] : 0;
        } else {
            memset(per, 0, sizeof per);
        }
    }

    /* Advice tied to this project. */
    char h1[32], h2[32], h3[32];
    if (total > usable) {
        human(total, h1, sizeof h1);
        human(usable, h2, sizeof h2);
        if (best > 0) {
            char *a = ld__asprintf("batch %d needs %s, more than the %s usable: the largest batch "
                                   "that fits is %lld",
                                   used_batch, h1, h2, (long long)best);
            if ((rc = add_advice(&adv, &nadv, a, &e)) != LD_OK) goto fail;
        } else {
            /* What batch 1 and batch 2 both need does not grow with the batch. */
            uint64_t b1[2 * LD_PM_N + 2], fixed[2 * LD_PM_N + 2], t1, t2, all = 0;
            if ((rc = evaluate(&c, 1, b1, ni, items, &t1, &e)) != LD_OK ||
                (rc = evaluate(&c, 2, tmp, ni, items, &t2, &e)) != LD_OK)
                goto fail;
            for (size_t i = 0; i < ni; i++) {
                uint64_t grow = tmp[i] > b1[i] ? tmp[i] - b1[i] : 0;
                fixed[i] = b1[i] > grow ? b1[i] - grow : 0;
                all += fixed[i];
            }
            human(all, h3, sizeof h3);
            char *a = ld__asprintf("batch %d needs %s, more than the %s usable, and no batch size "
                                   "fits: what does not grow with the batch needs %s by itself. "
                                   "Its largest parts, and what reduces them:",
                                   used_batch, h1, h2, h3);
            if ((rc = add_advice(&adv, &nadv, a, &e)) != LD_OK) goto fail;
            if ((rc = fixed_advice(&c, items, ni, fixed, &adv, &nadv, &terms, &e)) != LD_OK)
                goto fail;
        }
    }
    for (size_t i = 0; i < c.main.nlayers; i++) {
        const ld_plan_layer *L = &c.main.layers[i];
        if (!L->src || strcmp(L->type, "HDF5Data") || !L->src->first_file || !L->src->samples)
            continue;
        const ld_plan_src *s = L->src;
        uint64_t per_sample_f = (uint64_t)(s->c * s->h * s->w + 1) * 4;
        uint64_t fl = s->max_file_samples * per_sample_f;
        double ratio = (double)per_sample_f / ((double)s->file_bytes / (double)s->samples);
        int64_t m1 = 0, m2 = 0;
        ld_err re;
        ld__err_clear(&re);
        int64_t crop = 0;
        ld__pt_get_int(ld__pt_get(L->node, "transform_param"), "crop_size", 0, 0, 1 << 20, &crop,
                       &re);
        char *libdata_part = NULL;
        {
            /* the LibData layer's ring for this file at this batch */
            if (ld__plan_reader_memory(s->first_file, 1, crop, 0, &m1, &re) == LD_OK &&
                ld__plan_reader_memory(s->first_file, 2, crop, 0, &m2, &re) == LD_OK) {
                human((uint64_t)(m1 + (m2 - m1) * (used_batch - 1)), h3, sizeof h3);
                libdata_part =
                    ld__asprintf(" or use the LibData layer (bindings/caffe; its reader needs %s "
                                 "at batch %d)",
                                 h3, used_batch);
            }
        }
        human(fl, h1, sizeof h1);
        human((uint64_t)(ratio * (256 << 20)), h2, sizeof h2);
        rc = add_advice(
            &adv, &nadv,
            ld__asprintf("HDF5Data '%s' holds a whole file of %s as float32: %s for %s (%.1fx "
                         "its size on disk); convert it again with split_bytes 256M "
                         "(files of <= %s as float32)%s",
                         L->name, s->path, h1, s->first_file, ratio, h2,
                         libdata_part ? libdata_part : ""),
            &e);
        free(libdata_part);
        if (rc != LD_OK) goto fail;
        terms |= LD_PLAN_TERM_SPLIT_BYTES;
    }
    /* A smaller input: the largest batch at 5/8 of the height and width (256 -> 160). */
    for (size_t i = 0; i < c.main.nlayers; i++) {
        const ld_plan_layer *L = &c.main.layers[i];
        if (!L->src || !L->src->known || !L->nt || L->src->h < 16) continue;
        int64_t od[LD_PLAN_MAXD];
        int ond;
        if (ld__plan_shape_override(shapes, L->top[0], od, &ond)) break;
        int64_t nh = L->src->h * 5 / 8, nw = L->src->w * 5 / 8;
        char *ov =
            ld__asprintf("%s=%lld,%lld,%lld%s%s", L->top[0], (long long)L->src->c, (long long)nh,
                         (long long)nw, shapes ? ";" : "", shapes ? shapes : "");
        if (!ov) {
            rc = ld__err(&e, LD_ENOMEM, "out of memory");
            goto fail;
        }
        const char *save_m = c.cfg_main.shapes, *save_t = c.cfg_test.shapes;
        c.cfg_main.shapes = c.cfg_test.shapes = ov;
        int64_t b2 = 0;
        ld_err e2;
        ld__err_clear(&e2);
        int r2 = largest(&c, usable, tmp, ni, items, &b2, &e2);
        c.cfg_main.shapes = save_m;
        c.cfg_test.shapes = save_t;
        free(ov);
        if (r2 == LD_OK && b2 > best) {
            rc = add_advice(
                &adv, &nadv,
                ld__asprintf("with %lldx%lld input instead of %lldx%lld (e.g. resize_w/resize_h "
                             "%lld at conversion%s) the largest batch is %lld instead of %lld",
                             (long long)nw, (long long)nh, (long long)L->src->w,
                             (long long)L->src->h, (long long)(nw > nh ? nw : nh),
                             ld__pt_get(ld__pt_get(L->node, "transform_param"), "crop_size")
                                 ? ", and a crop_size to match"
                                 : "",
                             (long long)b2, (long long)best),
                &e);
            if (rc != LD_OK) goto fail;
            terms |= LD_PLAN_TERM_RESIZE;
        }
        break;
    }
    /* The numbers (and the shapes kept in the nets) at the planned batch. */
    if ((rc = evaluate(&c, batch, bytes, ni, items, &total, &e)) != LD_OK) goto fail;

    /* Pack everything into one block. */
    size_t nblobs = c.main.nshapes + (c.has_test ? c.test.nshapes : 0);
    size_t need = sizeof(ld_plan_info) + ni * sizeof(ld_plan_item) + nblobs * sizeof(ld_plan_blob) +
                  nadv * sizeof(char *) + 16;
    for (size_t i = 0; i < ni; i++)
        need += strlen(items[i].name) + 16;
    for (int p = 0; p < 2; p++) {
        const ld_plan_net *n = p ? &c.test : &c.main;
        if (p && !c.has_test) break;
        for (size_t i = 0; i < n->nshapes; i++)
            need += strlen(n->shapes[i].layer) + strlen(n->shapes[i].name) + 2 +
                    (size_t)n->shapes[i].nd * sizeof(int64_t) + 8;
    }
    for (size_t i = 0; i < nadv; i++)
        need += strlen(adv[i]) + 1;
    /* the notes of both nets, once each */
    const char *notes[64];
    size_t nnotes = 0;
    for (int p = 0; p < 2; p++) {
        const ld_plan_net *n = p ? &c.test : &c.main;
        if (p && !c.has_test) break;
        for (size_t i = 0; i < n->nnotes && nnotes < sizeof notes / sizeof *notes; i++) {
            size_t q = 0;
            while (q < nnotes && strcmp(notes[q], n->notes[i]))
                q++;
            if (q == nnotes) notes[nnotes++] = n->notes[i];
        }
    }
    need += nnotes * sizeof(char *) + strlen(phase_reason) + 1;
    for (size_t i = 0; i < nnotes; i++)
        need += strlen(notes[i]) + 1;
    char *blk = calloc(1, need);
    if (!blk) {
        rc = ld__err(&e, LD_ENOMEM, "out of memory");
        goto fail;
    }
    ld_plan_info *r = (ld_plan_info *)blk;
    size_t off = sizeof *r;
    off = (off + 7) & ~(size_t)7;
    ld_plan_item *its = (ld_plan_item *)(blk + off);
    off += ni * sizeof *its;
    ld_plan_blob *bl = (ld_plan_blob *)(blk + off);
    off += nblobs * sizeof *bl;
    int64_t *dims = (int64_t *)(blk + off);
    size_t nd_total = 0;
    for (int p = 0; p < 2; p++) {
        const ld_plan_net *n = p ? &c.test : &c.main;
        if (p && !c.has_test) break;
        for (size_t i = 0; i < n->nshapes; i++)
            nd_total += (size_t)n->shapes[i].nd;
    }
    off += nd_total * sizeof(int64_t);
    const char **advp = (const char **)(blk + off);
    off += nadv * sizeof(char *);
    const char **notep = (const char **)(blk + off);
    off += nnotes * sizeof(char *);
    char *str = blk + off;
    static const char *const pre[3] = {"", "TEST net: ", ""};
    for (size_t i = 0; i < ni; i++) {
        int w = sprintf(str, "%s%s%s", pre[items[i].phase],
                        items[i].phase == 0 && c.has_test ? "TRAIN net: " : "", items[i].name);
        its[i].name = str;
        str += w + 1;
        its[i].bytes = bytes[i];
        its[i].per_sample = per[i];
    }
    size_t bi = 0, di = 0;
    for (int p = 0; p < 2; p++) {
        const ld_plan_net *n = p ? &c.test : &c.main;
        if (p && !c.has_test) break;
        for (size_t i = 0; i < n->nshapes; i++, bi++) {
            const ld_plan_shape *sh = &n->shapes[i];
            bl[bi].phase = (p || phase == LD_PLAN_TEST) ? "TEST" : "TRAIN";
            bl[bi].layer = str;
            str += sprintf(str, "%s", sh->layer) + 1;
            bl[bi].name = str;
            str += sprintf(str, "%s", sh->name) + 1;
            bl[bi].ndims = sh->nd;
            bl[bi].dims = dims + di;
            for (int k = 0; k < sh->nd; k++)
                dims[di++] = sh->d[k];
        }
    }
    for (size_t i = 0; i < nadv; i++) {
        advp[i] = str;
        str += sprintf(str, "%s", adv[i]) + 1;
    }
    for (size_t i = 0; i < nnotes; i++) {
        notep[i] = str;
        str += sprintf(str, "%s", notes[i]) + 1;
    }
    r->phase_reason = str;
    str += sprintf(str, "%s", phase_reason) + 1;
    r->batch = used_batch;
    r->total = total;
    r->ram = ram;
    r->largest_batch = best;
    r->usable = usable;
    r->nitems = ni;
    r->items = its;
    r->nblobs = nblobs;
    r->blobs = bl;
    r->nadvice = nadv;
    r->advice = advp;
    r->phase = phase;
    r->nnotes = nnotes;
    r->notes = notep;
    r->advice_terms = terms;
    *info = r;
fail:
    for (size_t i = 0; i < nadv; i++)
        free(adv[i]);
    free(adv);
    free(text);
    free(test_text);
    free(net_owned);
    ld__pt_free(sroot);
    ld__plan_net_free(&c.main);
    ld__plan_net_free(&c.test);
    if (rc != LD_OK && errmsg) *errmsg = ld__strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    return rc;
}
