/*
 * ld_plan(): Caffe's peak host memory for a net (and solver), by component, and the largest
 * batch that fits. The rules are Caffe 1.0's (plan_shape.c, docs/caffe_memory.md); the
 * process baseline is measured (tests/data/plan/measured.tsv).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ld_pack.h"
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

#define PLAN_NITEMS (2 * LD_PM_N + 2)
#define PLAN_MAXNOTES 64

/* ld_plan() between its steps: the inputs, the nets, the numbers, the advice. */
typedef struct plan_run {
    ctx c;
    ld_err e;
    const char *net_path, *shapes;
    int phase;                /* LD_PLAN_TRAIN or LD_PLAN_TEST once the nets are loaded */
    int batch;                /* as asked (0: the net's own) */
    const char *phase_reason; /* static text */
    ld_pt_node *sroot;        /* the solver */
    char *text, *test_text, *net_owned;
    size_t len, test_len;
    item items[PLAN_NITEMS];
    size_t ni;
    uint64_t bytes[PLAN_NITEMS], per[PLAN_NITEMS], total, ram, usable;
    int64_t best;   /* the largest batch that fits `usable` */
    int used_batch; /* the planned net's batch at `batch` */
    char **adv;
    size_t nadv;
    unsigned terms;                   /* LD_PLAN_TERM_* the advice uses */
    const char *notes[PLAN_MAXNOTES]; /* the notes of both nets, once each (borrowed) */
    size_t nnotes;
} plan_run;

/* The solver, and the net it names when no net is given. */
static int open_solver(plan_run *r, const char *solver_path)
{
    int rc = parse_solver(solver_path, &r->sroot, &r->c.sol, &r->e);
    if (rc != LD_OK) return rc;
    r->c.has_solver = 1;
    if (r->net_path) return LD_OK;
    if (!r->c.sol.net)
        return ld__err(&r->e, LD_EFORMAT,
                       "%s: the solver names no net file (net: or train_net:%s): give the net "
                       "prototxt",
                       solver_path,
                       ld__pt_get(r->sroot, "net_param") || ld__pt_get(r->sroot, "train_net_param")
                           ? "; a net written inside the solver is not read"
                           : "");
    r->net_path = r->net_owned = ld__strdup(r->c.sol.net);
    if (!r->net_owned) return ld__err(&r->e, LD_ENOMEM, "out of memory");
    return LD_OK;
}

/* The planned net in its phase (LD_PLAN_AUTO decided here), and the TEST net the solver
 * runs during training. */
static int load_nets(plan_run *r)
{
    ctx *c = &r->c;
    int rc = read_text(r->net_path, &r->text, &r->len, &r->e);
    if (rc != LD_OK) return rc;
    /* LD_PLAN_AUTO: training needs a solver or a loss; a net with neither is deployed. */
    const int asked = r->phase;
    if (asked == LD_PLAN_AUTO) {
        r->phase = LD_PLAN_TRAIN;
        r->phase_reason = c->has_solver ? "a solver is given" : "the net has a loss layer";
    }
    c->phase = r->phase;
    c->cfg_main = (ld_plan_cfg){r->phase == LD_PLAN_TRAIN,
                                r->batch,
                                c->has_solver ? c->sol.max_iter : 0,
                                r->shapes,
                                r->net_path,
                                ""};
    if ((rc = ld__plan_net_load(&c->main, r->text, r->len, r->phase, &c->cfg_main, &r->e)) != LD_OK)
        return rc;
    if (asked == LD_PLAN_AUTO && !c->has_solver && !c->main.has_loss) {
        ld__plan_net_free(&c->main);
        c->phase = r->phase = LD_PLAN_TEST;
        r->phase_reason = "the net has no loss layer";
        c->cfg_main.train = 0;
        if ((rc = ld__plan_net_load(&c->main, r->text, r->len, r->phase, &c->cfg_main, &r->e)) !=
            LD_OK)
            return rc;
    }
    c->has_test = r->phase == LD_PLAN_TRAIN && c->has_solver && c->sol.test_iter > 0 &&
                  c->sol.test_interval > 0;
    if (!c->has_test) return LD_OK;
    int64_t ntests = c->sol.max_iter / c->sol.test_interval + c->sol.test_init;
    c->cfg_test =
        (ld_plan_cfg){0, 0, c->sol.test_iter * (ntests ? ntests : 1), r->shapes, r->net_path, ""};
    if (c->sol.test_net) {
        if ((rc = read_text(c->sol.test_net, &r->test_text, &r->test_len, &r->e)) != LD_OK)
            return rc;
        c->cfg_test.file = c->sol.test_net;
    }
    return ld__plan_net_load(&c->test, r->test_text ? r->test_text : r->text,
                             r->test_text ? r->test_len : r->len, 1, &c->cfg_test, &r->e);
}

/* The components the estimate lists. */
static void list_items(plan_run *r)
{
    for (int k = 0; k < LD_PM_N; k++) {
        r->items[r->ni++] = (item){comp_names[k], 0, k};
        if (k == LD_PM_PARAM_DIFF && r->phase == LD_PLAN_TRAIN)
            r->items[r->ni++] = (item){"solver history", 0, -1};
    }
    if (r->c.has_test)
        for (int k = 0; k < LD_PM_N; k++)
            if (k != LD_PM_TOP_DIFF && k != LD_PM_PARAM && k != LD_PM_PARAM_DIFF)
                r->items[r->ni++] = (item){comp_names[k], 1, k};
    r->items[r->ni++] =
        (item){"process baseline (caffe, libraries, BLAS and malloc arenas)", 2, -2};
}

/* The largest batch that fits, the numbers at the asked batch, and what grows per sample
 * (the difference to one more). */
static int measure(plan_run *r)
{
    uint64_t tmp[PLAN_NITEMS], t1;
    if (!r->ram) r->ram = mem_available();
    r->usable = r->ram - r->ram / 100 * LD_PLAN_HEADROOM_PCT;
    int rc = largest(&r->c, r->usable, tmp, r->ni, r->items, &r->best, &r->e);
    if (rc == LD_OK) rc = evaluate(&r->c, r->batch, r->bytes, r->ni, r->items, &r->total, &r->e);
    if (rc != LD_OK) return rc;
    r->used_batch = r->c.main_batch;
    if (evaluate(&r->c, r->used_batch + 1, tmp, r->ni, r->items, &t1, &r->e) == LD_OK) {
        for (size_t i = 0; i < r->ni; i++)
            r->per[i] = tmp[i] > r->bytes[i] ? tmp[i] - r->bytes[i] : 0;
    } else {
        memset(r->per, 0, sizeof r->per);
    }
    return LD_OK;
}

/* Advice when the batch does not fit: the largest that does, or, when none does, what does
 * not grow with the batch (what batch 1 and batch 2 both need). */
static int fit_advice(plan_run *r)
{
    char h1[32], h2[32], h3[32];
    if (r->total <= r->usable) return LD_OK;
    human(r->total, h1, sizeof h1);
    human(r->usable, h2, sizeof h2);
    if (r->best > 0)
        return add_advice(&r->adv, &r->nadv,
                          ld__asprintf("batch %d needs %s, more than the %s usable: the largest "
                                       "batch that fits is %lld",
                                       r->used_batch, h1, h2, (long long)r->best),
                          &r->e);
    uint64_t b1[PLAN_NITEMS], b2[PLAN_NITEMS], fixed[PLAN_NITEMS], t1, t2, all = 0;
    int rc;
    if ((rc = evaluate(&r->c, 1, b1, r->ni, r->items, &t1, &r->e)) != LD_OK ||
        (rc = evaluate(&r->c, 2, b2, r->ni, r->items, &t2, &r->e)) != LD_OK)
        return rc;
    for (size_t i = 0; i < r->ni; i++) {
        uint64_t grow = b2[i] > b1[i] ? b2[i] - b1[i] : 0;
        fixed[i] = b1[i] > grow ? b1[i] - grow : 0;
        all += fixed[i];
    }
    human(all, h3, sizeof h3);
    char *a = ld__asprintf("batch %d needs %s, more than the %s usable, and no batch size "
                           "fits: what does not grow with the batch needs %s by itself. "
                           "Its largest parts, and what reduces them:",
                           r->used_batch, h1, h2, h3);
    if ((rc = add_advice(&r->adv, &r->nadv, a, &r->e)) != LD_OK) return rc;
    return fixed_advice(&r->c, r->items, r->ni, fixed, &r->adv, &r->nadv, &r->terms, &r->e);
}

/* HDF5Data holds a whole file as float32: smaller files, or the LibData layer. */
static int hdf5_advice(plan_run *r, const ld_plan_layer *L)
{
    const ld_plan_src *s = L->src;
    char h1[32], h2[32], h3[32];
    uint64_t per_sample_f = (uint64_t)(s->c * s->h * s->w + 1) * 4;
    uint64_t fl = s->max_file_samples * per_sample_f;
    double ratio = (double)per_sample_f / ((double)s->file_bytes / (double)s->samples);
    int64_t m1 = 0, m2 = 0, crop = 0;
    ld_err re;
    ld__err_clear(&re);
    ld__pt_get_int(ld__pt_get(L->node, "transform_param"), "crop_size", 0, 0, 1 << 20, &crop, &re);
    char *libdata_part = NULL;
    /* the LibData layer's ring for this file at this batch */
    if (ld__plan_reader_memory(s->first_file, 1, crop, 0, &m1, &re) == LD_OK &&
        ld__plan_reader_memory(s->first_file, 2, crop, 0, &m2, &re) == LD_OK) {
        human((uint64_t)(m1 + (m2 - m1) * (r->used_batch - 1)), h3, sizeof h3);
        libdata_part = ld__asprintf(" or use the LibData layer (bindings/caffe; its reader needs "
                                    "%s at batch %d)",
                                    h3, r->used_batch);
    }
    human(fl, h1, sizeof h1);
    human((uint64_t)(ratio * (256 << 20)), h2, sizeof h2);
    int rc = add_advice(
        &r->adv, &r->nadv,
        ld__asprintf("HDF5Data '%s' holds a whole file of %s as float32: %s for %s (%.1fx "
                     "its size on disk); convert it again with split_bytes 256M "
                     "(files of <= %s as float32)%s",
                     L->name, s->path, h1, s->first_file, ratio, h2,
                     libdata_part ? libdata_part : ""),
        &r->e);
    free(libdata_part);
    if (rc == LD_OK) r->terms |= LD_PLAN_TERM_SPLIT_BYTES;
    return rc;
}

/* A smaller input: the largest batch at 5/8 of the height and width (256 -> 160), for the
 * first data layer whose sample size is known and not given in `shapes`. */
static int resize_advice(plan_run *r)
{
    ctx *c = &r->c;
    for (size_t i = 0; i < c->main.nlayers; i++) {
        const ld_plan_layer *L = &c->main.layers[i];
        if (!L->src || !L->src->known || !L->nt || L->src->h < 16) continue;
        int64_t od[LD_PLAN_MAXD];
        int ond;
        if (ld__plan_shape_override(r->shapes, L->top[0], od, &ond)) return LD_OK;
        int64_t nh = L->src->h * 5 / 8, nw = L->src->w * 5 / 8;
        char *ov =
            ld__asprintf("%s=%lld,%lld,%lld%s%s", L->top[0], (long long)L->src->c, (long long)nh,
                         (long long)nw, r->shapes ? ";" : "", r->shapes ? r->shapes : "");
        if (!ov) return ld__err(&r->e, LD_ENOMEM, "out of memory");
        const char *save_m = c->cfg_main.shapes, *save_t = c->cfg_test.shapes;
        c->cfg_main.shapes = c->cfg_test.shapes = ov;
        uint64_t tmp[PLAN_NITEMS];
        int64_t b2 = 0;
        ld_err e2;
        ld__err_clear(&e2);
        int r2 = largest(c, r->usable, tmp, r->ni, r->items, &b2, &e2);
        c->cfg_main.shapes = save_m;
        c->cfg_test.shapes = save_t;
        free(ov);
        if (r2 != LD_OK || b2 <= r->best) return LD_OK;
        int rc = add_advice(
            &r->adv, &r->nadv,
            ld__asprintf("with %lldx%lld input instead of %lldx%lld (e.g. resize_w/resize_h "
                         "%lld at conversion%s) the largest batch is %lld instead of %lld",
                         (long long)nw, (long long)nh, (long long)L->src->w, (long long)L->src->h,
                         (long long)(nw > nh ? nw : nh),
                         ld__pt_get(ld__pt_get(L->node, "transform_param"), "crop_size")
                             ? ", and a crop_size to match"
                             : "",
                         (long long)b2, (long long)r->best),
            &r->e);
        if (rc == LD_OK) r->terms |= LD_PLAN_TERM_RESIZE;
        return rc;
    }
    return LD_OK;
}

/* Advice tied to this project. */
static int advise(plan_run *r)
{
    int rc = fit_advice(r);
    for (size_t i = 0; rc == LD_OK && i < r->c.main.nlayers; i++) {
        const ld_plan_layer *L = &r->c.main.layers[i];
        if (L->src && !strcmp(L->type, "HDF5Data") && L->src->first_file && L->src->samples)
            rc = hdf5_advice(r, L);
    }
    return rc == LD_OK ? resize_advice(r) : rc;
}

/* The nets planned: the main one, and the TEST net when the solver runs it. */
static int nnets(const plan_run *r)
{
    return r->c.has_test ? 2 : 1;
}

static const ld_plan_net *net_of(const plan_run *r, int p)
{
    return p ? &r->c.test : &r->c.main;
}

/* The notes of both nets, once each. */
static void collect_notes(plan_run *r)
{
    for (int p = 0; p < nnets(r); p++) {
        const ld_plan_net *n = net_of(r, p);
        for (size_t i = 0; i < n->nnotes && r->nnotes < PLAN_MAXNOTES; i++) {
            size_t q = 0;
            while (q < r->nnotes && strcmp(r->notes[q], n->notes[i]))
                q++;
            if (q == r->nnotes) r->notes[r->nnotes++] = n->notes[i];
        }
    }
}

/* Every top of both nets, with its shape. */
static ld_plan_blob *pack_blobs(ld_pack *p, const plan_run *r, size_t *nblobs)
{
    *nblobs = 0;
    for (int q = 0; q < nnets(r); q++)
        *nblobs += net_of(r, q)->nshapes;
    ld_plan_blob *bl = LD_PACK_ARRAY(p, *nblobs, ld_plan_blob);
    size_t bi = 0;
    for (int q = 0; q < nnets(r); q++) {
        const ld_plan_net *n = net_of(r, q);
        for (size_t i = 0; i < n->nshapes; i++, bi++) {
            const ld_plan_shape *sh = &n->shapes[i];
            const char *layer = ld__pack_str(p, sh->layer), *name = ld__pack_str(p, sh->name);
            int64_t *dims = LD_PACK_ARRAY(p, (size_t)sh->nd, int64_t);
            if (!bl) continue; /* counting */
            bl[bi].phase = (q || r->phase == LD_PLAN_TEST) ? "TEST" : "TRAIN";
            bl[bi].layer = layer;
            bl[bi].name = name;
            bl[bi].ndims = sh->nd;
            bl[bi].dims = dims;
            if (sh->nd) memcpy(dims, sh->d, (size_t)sh->nd * sizeof *dims);
        }
    }
    return bl;
}

/* n strings: an array of pointers and their copies. */
static const char **pack_strv(ld_pack *p, const char *const *v, size_t n)
{
    const char **out = LD_PACK_ARRAY(p, n, const char *);
    for (size_t i = 0; i < n; i++) {
        const char *s = ld__pack_str(p, v[i]);
        if (out) out[i] = s;
    }
    return out;
}

/* The result, in one block (ld_pack: run once to count, once to fill). */
static int fill_info(ld_pack *p, void *arg)
{
    const plan_run *r = arg;
    static const char *const pre[3] = {"", "TEST net: ", ""};
    ld_plan_info *info = LD_PACK_NEW(p, ld_plan_info);
    ld_plan_item *its = LD_PACK_ARRAY(p, r->ni, ld_plan_item);
    for (size_t i = 0; i < r->ni; i++) {
        const item *it = &r->items[i];
        const char *name =
            ld__pack_printf(p, "%s%s%s", pre[it->phase],
                            it->phase == 0 && r->c.has_test ? "TRAIN net: " : "", it->name);
        if (its) its[i] = (ld_plan_item){name, r->bytes[i], r->per[i]};
    }
    size_t nblobs;
    const ld_plan_blob *bl = pack_blobs(p, r, &nblobs);
    const char **advp = pack_strv(p, (const char *const *)r->adv, r->nadv);
    const char **notep = pack_strv(p, r->notes, r->nnotes);
    const char *reason = ld__pack_str(p, r->phase_reason);
    if (!info) return LD_OK; /* counting */
    info->batch = r->used_batch;
    info->total = r->total;
    info->ram = r->ram;
    info->largest_batch = r->best;
    info->usable = r->usable;
    info->nitems = r->ni;
    info->items = its;
    info->nblobs = nblobs;
    info->blobs = bl;
    info->nadvice = r->nadv;
    info->advice = advp;
    info->phase = r->phase;
    info->phase_reason = reason;
    info->nnotes = r->nnotes;
    info->notes = notep;
    info->advice_terms = r->terms;
    return LD_OK;
}

static void run_free(plan_run *r)
{
    for (size_t i = 0; i < r->nadv; i++)
        free(r->adv[i]);
    free(r->adv);
    free(r->text);
    free(r->test_text);
    free(r->net_owned);
    ld__pt_free(r->sroot);
    ld__plan_net_free(&r->c.main);
    ld__plan_net_free(&r->c.test);
}

int ld_plan(const char *net_path, const char *solver_path, int phase, int batch, uint64_t ram,
            const char *shapes, ld_plan_info **info, char **errmsg)
{
    plan_run run, *r = &run;
    memset(r, 0, sizeof *r);
    int rc = LD_OK;
    if (info) *info = NULL;
    if (errmsg) *errmsg = NULL;
    ld__err_clear(&r->e);
    r->net_path = net_path;
    r->shapes = shapes;
    r->phase = phase;
    r->batch = batch;
    r->ram = ram;
    r->phase_reason = "as asked";
    if (!info || (!net_path && !solver_path) ||
        (phase != LD_PLAN_TRAIN && phase != LD_PLAN_TEST && phase != LD_PLAN_AUTO) || batch < 0) {
        rc = ld__err(&r->e, LD_EINVAL,
                     "ld_plan: a net or a solver path, a phase (LD_PLAN_TRAIN/TEST/AUTO) and a "
                     "batch >= 0 are required");
        goto fail;
    }
    if (solver_path && (rc = open_solver(r, solver_path)) != LD_OK) goto fail;
    if ((rc = load_nets(r)) != LD_OK) goto fail;
    list_items(r);
    if ((rc = measure(r)) != LD_OK || (rc = advise(r)) != LD_OK) goto fail;
    /* The numbers (and the shapes kept in the nets) at the planned batch. */
    if ((rc = evaluate(&r->c, batch, r->bytes, r->ni, r->items, &r->total, &r->e)) != LD_OK)
        goto fail;
    collect_notes(r);
    void *blk = NULL;
    if ((rc = ld__pack_run(fill_info, r, &blk, NULL)) != LD_OK)
        rc = ld__err(&r->e, rc,
                     rc == LD_ENOMEM ? "out of memory"
                                     : "ld_plan: the result does not fit one block");
    else
        *info = blk;
fail:
    if (rc != LD_OK && errmsg) *errmsg = ld__strdup(r->e.msg[0] ? r->e.msg : ld_strerror(rc));
    run_free(r);
    return rc;
}
