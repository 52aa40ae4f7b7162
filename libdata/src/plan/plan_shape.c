/*
 * Shapes and memory of one net, layer by layer, as Caffe 1.0 computes and allocates them.
 *
 * Shapes follow each layer's Reshape() in caffe/src/caffe/layers/. Memory follows Caffe's
 * allocation rules (docs/caffe_memory.md): a SyncedMemory is allocated (malloc + memset, so
 * resident) on its first access only; a top's data on the first forward, its diff when
 * backward first writes or reads it; in-place tops share the bottom's blob; Split tops share
 * the data and own a diff; Flatten/Reshape tops share data and diff; Data/ImageData/LibData
 * tops borrow the prefetch buffers. Per-layer buffers: im2col, bias multipliers, pooling
 * masks, dropout masks, LRN/BatchNorm/Scale/Softmax scratch.
 *
 * One table, rules[], holds a row per layer type the planner knows: {type, shape rule, memory
 * rule, flags}; find_rule() is the one place a type is looked up.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan_net.h"

typedef struct pblob {
    const char *name;
    int nd;
    int64_t d[LD_PLAN_MAXD];
    int alias;       /* data (and diff) of another blob: Flatten/Reshape (-1: none) */
    int data_shared; /* data not allocated here (Split tops, borrowed prefetch buffers) */
    int diff;        /* diff allocated (train) */
    int need_bw;
} pblob;

typedef struct player {
    int *bot, *top; /* blob ids */
    int nb, nt;
    int lr_params; /* has a parameter with lr_mult != 0 */
    int loss;      /* a top has a loss weight */
    int need_bw;
    int *bot_bw;                   /* propagate down to bottom k */
    uint64_t col_fwd, col_bw;      /* im2col bytes allocated on forward / on backward only */
    uint64_t buf_train_only;       /* scratch allocated only in training (backward, dropout) */
    const struct layer_rule *rule; /* its row of rules[] (NULL: a data layer) */
} player;

typedef struct est {
    ld_plan_net *net;
    const ld_plan_cfg *cfg;
    ld_err *e;
    pblob *b;
    size_t nb, cap;
    player *pl;
    ld_plan_mem *m;
} est;

static int64_t count_of(const pblob *b, int from, int to)
{
    int64_t c = 1;
    for (int i = from; i < to && i < b->nd; i++)
        c *= b->d[i];
    return c;
}

/* Add n floats (4 bytes) to component k, checked. */
static int add_bytes(est *s, int k, int64_t n, int bytes_per)
{
    uint64_t v;
    if (n < 0 || __builtin_mul_overflow((uint64_t)n, (uint64_t)bytes_per, &v) ||
        __builtin_add_overflow(s->m->c[k], v, &s->m->c[k]))
        return ld__err(s->e, LD_ELIMIT, "%s: the memory total overflows 64 bits: absurd sizes",
                       s->cfg->file);
    return LD_OK;
}

static int lerr(est *s, const ld_plan_layer *L, int code, const char *fmt, const char *detail)
{
    return ld__err(s->e, code, "%s:%d: layer '%s' (%s): %s%s", s->cfg->file, L->line, L->name,
                   L->type, fmt, detail ? detail : "");
}

static int find_blob(const est *s, const char *name)
{
    for (size_t i = s->nb; i-- > 0;)
        if (!strcmp(s->b[i].name, name)) return (int)i;
    return -1;
}

/* Record the shape of L's top `name` for the caller (Caffe's "Top shape" lines). */
static int record_shape(est *s, const ld_plan_layer *L, const char *name, int nd, const int64_t *d)
{
    ld_plan_net *net = s->net;
    ld_plan_shape *t = realloc(net->shapes, (net->nshapes + 1) * sizeof *t);
    if (!t) return ld__err(s->e, LD_ENOMEM, "out of memory");
    net->shapes = t;
    ld_plan_shape *sh = &t[net->nshapes++];
    memset(sh, 0, sizeof *sh);
    sh->layer = ld__strdup(L->name);
    sh->name = ld__strdup(name);
    sh->nd = nd;
    memcpy(sh->d, d, (size_t)nd * sizeof *d);
    if (!sh->layer || !sh->name) return ld__err(s->e, LD_ENOMEM, "out of memory");
    return LD_OK;
}

static int new_blob(est *s, const ld_plan_layer *L, const char *name, int nd, const int64_t *d)
{
    if (nd > LD_PLAN_MAXD) return lerr(s, L, LD_ELIMIT, "more axes than the planner handles", NULL);
    int64_t c = 1;
    for (int i = 0; i < nd; i++) {
        if (d[i] < 0 || (d[i] > 0 && c > INT_MAX / d[i])) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "top '%s' would have more than 2^31-1 elements (or a negative "
                     "size): Caffe refuses it (Blob count over INT_MAX)",
                     name);
            return lerr(s, L, LD_ELIMIT, msg, NULL);
        }
        c *= d[i];
    }
    if (s->nb == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        pblob *t = realloc(s->b, cap * sizeof *t);
        if (!t) return ld__err(s->e, LD_ENOMEM, "out of memory");
        s->b = t;
        s->cap = cap;
    }
    pblob *b = &s->b[s->nb];
    memset(b, 0, sizeof *b);
    b->name = name;
    b->nd = nd;
    b->alias = -1;
    memcpy(b->d, d, (size_t)nd * sizeof *d);
    int rc = record_shape(s, L, name, nd, d);
    if (rc != LD_OK) return rc;
    return (int)s->nb++;
}

/* Repeated or single spatial values: kernel_size / kernel_h+kernel_w etc. */
static int spatial(est *s, const ld_plan_layer *L, const ld_pt_node *p, const char *rep,
                   const char *hname, const char *wname, int nsp, int64_t def, int64_t lo,
                   int64_t *out)
{
    int rc;
    size_t n = ld__pt_count(p, rep);
    int64_t h, w;
    if (ld__pt_get(p, hname) || ld__pt_get(p, wname)) {
        if (nsp != 2) return lerr(s, L, LD_EFORMAT, hname, " is for 2 spatial axes only");
        if (n) {
            char msg[128];
            snprintf(msg, sizeof msg, "both %s and %s/%s given: use one", rep, hname, wname);
            return lerr(s, L, LD_EFORMAT, msg, NULL);
        }
        if ((rc = ld__pt_get_int(p, hname, def, lo, INT_MAX, &h, s->e)) != LD_OK) return rc;
        if ((rc = ld__pt_get_int(p, wname, def, lo, INT_MAX, &w, s->e)) != LD_OK) return rc;
        out[0] = h;
        out[1] = w;
        return LD_OK;
    }
    if (n != 0 && n != 1 && n != (size_t)nsp)
        return lerr(s, L, LD_EFORMAT, rep, ": give 1 value or one per spatial axis");
    for (int i = 0; i < nsp; i++) {
        if (!n) {
            out[i] = def;
            continue;
        }
        if ((rc = ld__pt_int(ld__pt_nth(p, rep, n == 1 ? 0 : (size_t)i), lo, INT_MAX, &out[i], rep,
                             s->e)) != LD_OK)
            return rc;
    }
    if (def < 0 && !n) return lerr(s, L, LD_EFORMAT, rep, " is required");
    return LD_OK;
}

static int has_lr(const ld_plan_layer *L, int nparams)
{
    /* param { lr_mult } per parameter blob (legacy: blobs_lr); missing = 1. */
    size_t np = ld__pt_count(L->node, "param"), nl = ld__pt_count(L->node, "blobs_lr");
    for (int i = 0; i < nparams; i++) {
        const char *v = NULL;
        if ((size_t)i < np)
            v = ld__pt_get_str(ld__pt_nth(L->node, "param", (size_t)i), "lr_mult", NULL);
        else if ((size_t)i < nl)
            v = ld__pt_nth(L->node, "blobs_lr", (size_t)i)->value;
        if (!v || strtod(v, NULL) != 0.0) return 1;
    }
    return 0;
}

static int axis_of(est *s, const ld_plan_layer *L, const ld_pt_node *p, const char *field,
                   int64_t def, int nd, int *axis)
{
    int64_t a;
    int rc = ld__pt_get_int(p, field, def, -nd, nd - 1, &a, s->e);
    if (rc != LD_OK) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s out of range for a %d-axis bottom", field, nd);
        return lerr(s, L, LD_EFORMAT, msg, NULL);
    }
    *axis = (int)(a < 0 ? a + nd : a);
    return LD_OK;
}

/* Shape overrides "NAME=C,H,W;NAME2=N,C,H,W". 1 when `name` is given (dims filled). */
int ld__plan_shape_override(const char *shapes, const char *name, int64_t *d, int *nd)
{
    if (!shapes) return 0;
    size_t nl = strlen(name);
    const char *p = shapes;
    while (*p) {
        const char *end = strchr(p, ';');
        if (!end) end = p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq && (size_t)(eq - p) == nl && !strncmp(p, name, nl)) {
            int n = 0;
            const char *q = eq + 1;
            while (q < end && n < LD_PLAN_MAXD) {
                char *e2;
                d[n++] = strtoll(q, &e2, 10);
                q = e2;
                if (q < end && (*q == ',' || *q == 'x'))
                    q++;
                else
                    break;
            }
            *nd = n;
            return 1;
        }
        p = *end ? end + 1 : end;
    }
    return 0;
}

static int batch_of(est *s, const ld_plan_layer *L, const char *param, int64_t *batch)
{
    int rc = ld__pt_get_int(ld__pt_get(L->node, param), "batch_size", 0, 0, INT_MAX, batch, s->e);
    if (rc != LD_OK) return rc;
    if (s->cfg->batch > 0) *batch = s->cfg->batch;
    if (*batch <= 0) return lerr(s, L, LD_EFORMAT, param, ".batch_size is missing or 0");
    if (!s->m->batch) s->m->batch = (int)*batch;
    return LD_OK;
}

int ld__plan_is_loss_type(const char *t)
{
    size_t n = strlen(t);
    return n >= 4 && !strcmp(t + n - 4, "Loss");
}

/* The tops of a layer without bottoms whose shapes the planner cannot read (Python,
 * MemoryData, WindowData, a type it does not know): from the shapes given for them, else a
 * refusal that says how to give them. */
static int other_input(est *s, const ld_plan_layer *L, player *P)
{
    const char *t = L->type;
    int64_t d[LD_PLAN_MAXD];
    int nd = 0;
    if (!L->nt || !ld__plan_shape_override(s->cfg->shapes, L->top[0], d, &nd)) {
        const char *top = L->nt ? L->top[0] : "data", *why, *from = "";
        char chw[96] = "C,H,W";
        if (!strcmp(t, "Python")) {
            why = "a Python layer without bottoms is a data layer whose tops are made by "
                  "Python code the planner does not run";
        } else if (!strcmp(t, "MemoryData")) {
            const ld_pt_node *mp = ld__pt_get(L->node, "memory_data_param");
            why = "a MemoryData layer is fed by the program that runs the net";
            if (ld__pt_get(mp, "channels") && ld__pt_get(mp, "height") && ld__pt_get(mp, "width")) {
                snprintf(chw, sizeof chw, "%.20s,%.20s,%.20s", ld__pt_get_str(mp, "channels", ""),
                         ld__pt_get_str(mp, "height", ""), ld__pt_get_str(mp, "width", ""));
                from = ", as its memory_data_param says";
            }
        } else if (!strcmp(t, "WindowData")) {
            why = "a WindowData layer crops windows listed in a file";
        } else {
            why = "a layer type the planner does not know; without bottoms it is a data layer";
        }
        return ld__err(s->e, LD_EINVAL,
                       "%s:%d: layer '%s' (%s): not supported: %s. Give the shape of its top "
                       "in shapes (%s=%s%s%s), or plan a copy of the net with an Input layer "
                       "in its place (input_param { shape { dim: N dim: C dim: H dim: W } })",
                       s->cfg->file, L->line, L->name, t, why, top, chw, from,
                       L->nt > 1 ? "; its other tops are one label per sample unless given too"
                                 : "");
    }
    /* N: --batch, else the given shape's first axis (C,H,W has none), else the layer's own */
    int64_t batch = s->cfg->batch;
    if (batch <= 0 && nd != 3) batch = d[0];
    if (batch <= 0) {
        int rc;
        const char *bp = !strcmp(t, "MemoryData")   ? "memory_data_param"
                         : !strcmp(t, "WindowData") ? "window_data_param"
                                                    : NULL;
        if (bp && (rc = ld__pt_get_int(ld__pt_get(L->node, bp), "batch_size", 1, 1, INT_MAX, &batch,
                                       s->e)) != LD_OK)
            return rc;
        if (batch <= 0) batch = 1;
    }
    for (int k = 0; k < L->nt; k++) {
        /* top 0's shape is in d already; the others' when given, else a label per sample */
        if (k > 0 && !ld__plan_shape_override(s->cfg->shapes, L->top[k], d, &nd)) nd = 0;
        if (nd == 3) {
            memmove(d + 1, d, 3 * sizeof *d);
            nd = 4;
        }
        if (!nd) nd = 1;
        d[0] = batch;
        if (!s->m->batch) s->m->batch = (int)batch;
        int id = new_blob(s, L, L->top[k], nd, d);
        if (id < 0) return id;
        P->top[k] = id;
    }
    return LD_OK;
}

/* ---- one rule per layer type: its tops' shapes, then its memory ------------------------- */

/* One layer while its rules run. The shape rule makes its tops (a data layer's directly; any
 * other's into td/tnd, preset to the first bottom's shape) and notes what it parsed for the
 * memory rule; the memory rule adds the layer's buffers and sets params/nparams. */
typedef struct lctx {
    est *s;
    const ld_plan_layer *L;
    player *P;
    const pblob *b0;             /* the first bottom (NULL: none: data layers, Silence) */
    int64_t (*td)[LD_PLAN_MAXD]; /* top shapes */
    int *tnd;
    int train;
    int64_t params; /* parameter floats (memory rule) */
    int nparams;    /* parameter blobs (memory rule) */
    /* what the shape rule parsed that the memory rule uses */
    int axis, end; /* the layer's axis; Scale/Bias: one past its last parameter axis */
    int bias;      /* bias_term */
    int one;       /* Convolution: every kernel 1, stride 1, pad 0 (im2col only backward) */
    int64_t group, ksz, size; /* Convolution: group, kernel elements; LRN: local_size */
    int64_t batch, sample;    /* data layers: batch size, floats per sample (C*H*W) */
} lctx;

typedef int (*rule_fn)(lctx *c);

enum {
    LR_NO_BOTTOM_OK = 1,  /* Silence: may have no bottom */
    LR_SHARES_DATA = 2,   /* Split: the tops share the bottom's data, own a diff */
    LR_ALIAS = 4,         /* Flatten/Reshape: the top is the bottom's data and diff */
    LR_TRAIN_FWD_BUF = 8, /* Dropout: its training buffer is allocated on forward */
    LR_STATS_PARAMS = 16, /* BatchNorm: its parameter blobs are statistics, never learned */
    LR_BIG_BOTTOM = 32,   /* InnerProduct: the bottom's shape makes the weights (advice) */
    LR_DATA = 64          /* a data layer: its tops come from the net, its source or `shapes` */
};

typedef struct layer_rule {
    const char *type;
    rule_fn shape; /* NULL: the tops have the first bottom's shape */
    rule_fn mem;   /* NULL: no parameters, no buffers */
    unsigned flags;
} layer_rule;

static int cerr(const lctx *c, int code, const char *fmt, const char *detail)
{
    return lerr(c->s, c->L, code, fmt, detail);
}

/* ---- data layers: their tops from the net, the source or `shapes` ----------------------- */

/* The declared shape of input top k of an Input, NetInput or DummyData layer: the net's
 * input_shape / input_dim (NetInput), input_param, dummy_data_param (or its legacy
 * num/channels/height/width). */
static int input_dims(lctx *c, int k, int64_t *d, int *nd)
{
    est *s = c->s;
    const ld_plan_layer *L = c->L;
    const char *t = L->type;
    const ld_pt_node *root = s->net->root, *sh = NULL;
    int rc;
    if (!strcmp(t, "NetInput")) {
        if (ld__pt_count(root, "input_shape")) {
            sh = ld__pt_nth(root, "input_shape", (size_t)k);
        } else if (ld__pt_count(root, "input_dim")) {
            for (size_t i = 0; i < 4; i++) {
                const ld_pt_node *f = ld__pt_nth(root, "input_dim", (size_t)k * 4 + i);
                if (!f) return cerr(c, LD_EFORMAT, "input_dim: 4 per input expected", NULL);
                if ((rc = ld__pt_int(f, 0, INT_MAX, &d[(*nd)++], "input_dim", s->e)) != LD_OK)
                    return rc;
            }
        }
    } else {
        const ld_pt_node *ip =
            ld__pt_get(L->node, !strcmp(t, "Input") ? "input_param" : "dummy_data_param");
        size_t ns = ld__pt_count(ip, "shape");
        sh = ld__pt_nth(ip, "shape", ns == 1 ? 0 : (size_t)k);
        /* DummyData's legacy num/channels/height/width: one each, or one per top */
        static const char *const legacy[] = {"num", "channels", "height", "width"};
        for (int i = 0; !ns && i < 4 && ld__pt_count(ip, "num"); i++) {
            size_t nv = ld__pt_count(ip, legacy[i]);
            const ld_pt_node *f = ld__pt_nth(ip, legacy[i], nv == 1 ? 0 : (size_t)k);
            if (!f) return cerr(c, LD_EFORMAT, legacy[i], ": give one value, or one per top");
            if ((rc = ld__pt_int(f, 0, INT_MAX, &d[(*nd)++], legacy[i], s->e)) != LD_OK) return rc;
        }
    }
    if (sh) {
        size_t n = ld__pt_count(sh, "dim");
        if (n > LD_PLAN_MAXD) return cerr(c, LD_ELIMIT, "too many dims", NULL);
        for (size_t i = 0; i < n; i++)
            if ((rc = ld__pt_int(ld__pt_nth(sh, "dim", i), 0, INT_MAX, &d[(*nd)++], "dim", s->e)) !=
                LD_OK)
                return rc;
    }
    if (!*nd) {
        char msg[200];
        snprintf(msg, sizeof msg, "no shape for input '%s': give one in shapes (%s=C,H,W)",
                 L->top[k], L->top[k]);
        return cerr(c, LD_EINVAL, msg, NULL);
    }
    return LD_OK;
}

/* Input, NetInput, DummyData: each top from `shapes` (C,H,W gets the batch in front), else
 * as the net declares it; --batch replaces the first axis. */
static int input_shape(lctx *c)
{
    est *s = c->s;
    const ld_plan_layer *L = c->L;
    for (int k = 0; k < L->nt; k++) {
        int64_t d[LD_PLAN_MAXD];
        int nd = 0, rc;
        if (!ld__plan_shape_override(s->cfg->shapes, L->top[k], d, &nd)) {
            if ((rc = input_dims(c, k, d, &nd)) != LD_OK) return rc;
        } else if (nd == 3) {
            memmove(d + 1, d, 3 * sizeof *d);
            d[0] = s->cfg->batch > 0 ? s->cfg->batch : 1;
            nd = 4;
        }
        if (s->cfg->batch > 0 && nd > 0) d[0] = s->cfg->batch;
        if (!s->m->batch && nd) s->m->batch = (int)d[0];
        int id = new_blob(s, L, L->top[k], nd, d);
        if (id < 0) return id;
        c->P->top[k] = id;
    }
    return LD_OK;
}

/* ImageData's sample: is_color, new_height/new_width, crop_size. */
static int image_sample(lctx *c, int64_t *ch, int64_t *h, int64_t *w)
{
    est *s = c->s;
    const ld_plan_layer *L = c->L;
    const ld_pt_node *ip = ld__pt_get(L->node, "image_data_param");
    int64_t nh, nw, crop;
    int color, rc;
    if ((rc = ld__pt_get_int(ip, "new_height", 0, 0, INT_MAX, &nh, s->e)) != LD_OK) return rc;
    if ((rc = ld__pt_get_int(ip, "new_width", 0, 0, INT_MAX, &nw, s->e)) != LD_OK) return rc;
    if ((rc = ld__pt_get_bool(ip, "is_color", 1, &color, s->e)) != LD_OK) return rc;
    if ((rc = ld__pt_get_int(ld__pt_get(L->node, "transform_param"), "crop_size", 0, 0, INT_MAX,
                             &crop, s->e)) != LD_OK)
        return rc;
    if (s->net->v1 && ld__pt_get(ip, "crop_size") &&
        (rc = ld__pt_get_int(ip, "crop_size", 0, 0, INT_MAX, &crop, s->e)) != LD_OK)
        return rc;
    if (!nh || !nw) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "the image size depends on the files (no new_height/new_width): "
                 "give it in shapes (%s=C,H,W)",
                 L->nt ? L->top[0] : "data");
        return cerr(c, LD_EINVAL, msg, NULL);
    }
    *ch = color ? 3 : 1;
    *h = crop ? crop : nh;
    *w = crop ? crop : nw;
    return LD_OK;
}

/* Data, HDF5Data, LibData: the sample the source recorded when it was opened. */
static int source_sample(lctx *c, int64_t *ch, int64_t *h, int64_t *w)
{
    const ld_plan_src *src = c->L->src;
    if (!src || !src->known) {
        char msg[240];
        snprintf(msg, sizeof msg,
                 "the sample size of %s is not recorded (images of different "
                 "sizes?): give it in shapes (%s=C,H,W)",
                 src && src->path ? src->path : "the source", c->L->nt ? c->L->top[0] : "data");
        return cerr(c, LD_EINVAL, msg, NULL);
    }
    *ch = src->c;
    *h = src->h;
    *w = src->w;
    return LD_OK;
}

enum { LEND_NONE, LEND_DATA, LEND_ALL }; /* which tops borrow the layer's buffers */

/* A source's tops: data [N, C, H, W] (C,H,W from `shapes`, else `sample`) and labels [N], or
 * [N, K] for label vectors when the layer gives them (`vectors`: HDF5Data, LibData; Caffe's
 * Data layer gives a Datum's one label, and an LMDB's vectors come from a second Data layer
 * on the label database, whose data top is N x K x 1 x 1). */
static int source_tops(lctx *c, const char *param, int lend, int vectors,
                       int (*sample)(lctx *c, int64_t *ch, int64_t *h, int64_t *w))
{
    est *s = c->s;
    const ld_plan_layer *L = c->L;
    int64_t d[LD_PLAN_MAXD], ch = 0, h = 0, w = 0;
    int nd = 0, rc;
    if ((rc = batch_of(s, L, param, &c->batch)) != LD_OK) return rc;
    if (L->nt > 0 && ld__plan_shape_override(s->cfg->shapes, L->top[0], d, &nd)) {
        if (nd < 3) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "the shape given for top '%s' in shapes has %d number%s: a data layer's "
                     "needs C,H,W (or N,C,H,W)",
                     L->top[0], nd, nd == 1 ? "" : "s");
            return cerr(c, LD_EINVAL, msg, NULL);
        }
        ch = d[nd - 3];
        h = d[nd - 2];
        w = d[nd - 1];
    } else if ((rc = sample(c, &ch, &h, &w)) != LD_OK) {
        return rc;
    }
    const int64_t lk = vectors && L->src ? L->src->label_k : 0;
    /* segmentation masks, [N, 1, H, W] as the data's H x W: the label top when they are the
     * label, else (LibData) a third top */
    const int masks = vectors && L->src && L->src->mask_h;
    const int mask_top = !masks ? 0 : L->src->mask_is_label ? 1 : 2;
    int64_t sd[4] = {c->batch, ch, h, w}, ld1[2] = {c->batch, lk}, md[4] = {c->batch, 1, h, w};
    for (int k = 0; k < L->nt; k++) {
        int id = k == 0          ? new_blob(s, L, L->top[k], 4, sd)
                 : k == mask_top ? new_blob(s, L, L->top[k], 4, md)
                                 : new_blob(s, L, L->top[k], lk ? 2 : 1, ld1);
        if (id < 0) return id;
        c->P->top[k] = id;
        /* Prefetching layers (and LibData's data top) lend their buffers to the tops. */
        if (lend == LEND_ALL || (lend == LEND_DATA && k == 0)) s->b[id].data_shared = 1;
    }
    c->sample = ch * h * w;
    return LD_OK;
}

static int data_shape(lctx *c)
{
    return source_tops(c, "data_param", LEND_ALL, 0, source_sample);
}

static int image_shape(lctx *c)
{
    return source_tops(c, "image_data_param", LEND_ALL, 0, image_sample);
}

static int hdf5_shape(lctx *c)
{
    return source_tops(c, "hdf5_data_param", LEND_NONE, 1, source_sample);
}

static int libdata_shape(lctx *c)
{
    return source_tops(c, "data_param", LEND_DATA, 1, source_sample);
}

/* Data, ImageData: the prefetch batches; Data: the LMDB pages its cursor touched, which stay
 * mapped and count in RSS (file-backed). */
static int data_mem(lctx *c)
{
    est *s = c->s;
    const ld_plan_layer *L = c->L;
    const ld_plan_src *src = L->src;
    int64_t prefetch;
    int rc;
    if ((rc = ld__pt_get_int(ld__pt_get(L->node, "data_param"), "prefetch", 4, 1, 1 << 20,
                             &prefetch, s->e)) != LD_OK)
        return rc;
    const int64_t labels = L->nt > 1; /* a Datum's one label */
    if ((rc = add_bytes(s, LD_PM_PREFETCH, prefetch * c->batch * (c->sample + labels), 4)) != LD_OK)
        return rc;
    if (!src || !src->file_bytes || !src->samples) return LD_OK;
    uint64_t rec = src->file_bytes / src->samples;
    uint64_t reads = s->cfg->iters > 0
                         ? (uint64_t)(s->cfg->iters + prefetch + 1) * (uint64_t)c->batch
                         : src->samples;
    if (reads > src->samples) reads = src->samples;
    return add_bytes(s, LD_PM_SOURCE, (int64_t)(reads * rec), 1);
}

/* HDF5Data: the whole current file as float32 (data and labels). */
static int hdf5_mem(lctx *c)
{
    est *s = c->s;
    const ld_plan_src *src = c->L->src;
    uint64_t n = src ? src->samples : 0;
    if (src && s->cfg->iters > 0 && (uint64_t)(s->cfg->iters * c->batch) > n)
        n = src->max_file_samples;
    if (src && s->cfg->iters == 0) n = src->max_file_samples;
    const int64_t labels = !src                 ? 1
                           : src->mask_is_label ? src->mask_h * src->mask_w
                           : src->label_k       ? src->label_k
                                                : 1;
    return add_bytes(s, LD_PM_SOURCE, (int64_t)n * (c->sample + labels), 4);
}

/* LibData: the libdata reader's ring, measured at batch 1 and 2 when the net was loaded. */
static int libdata_mem(lctx *c)
{
    const ld_plan_src *src = c->L->src;
    if (!src) return LD_OK;
    int64_t mem = src->reader_mem1 + (src->reader_mem2 - src->reader_mem1) * (c->batch - 1);
    return add_bytes(c->s, LD_PM_PREFETCH, mem, 1);
}

static int same_shape(const pblob *a, const pblob *b)
{
    if (a->nd != b->nd) return 0;
    for (int i = 0; i < a->nd; i++)
        if (a->d[i] != b->d[i]) return 0;
    return 1;
}

/* Tops 1.. get top 0's shape (Convolution, Pooling). */
static void copy_top0(lctx *c)
{
    for (int q = 1; q < c->L->nt; q++)
        memcpy(c->td[q], c->td[0], sizeof c->td[q]);
}

static int in_place(const ld_plan_layer *L)
{
    return L->nt && L->nb && !strcmp(L->top[0], L->bottom[0]);
}

static int conv_shape(lctx *c)
{
    est *s = c->s;
    const pblob *b0 = c->b0;
    const int deconv = c->L->type[0] == 'D';
    const ld_pt_node *p = ld__pt_get(c->L->node, "convolution_param");
    int rc;
    if ((rc = axis_of(s, c->L, p, "axis", 1, b0->nd, &c->axis)) != LD_OK) return rc;
    int nsp = b0->nd - c->axis - 1;
    if (nsp < 1 || nsp > LD_PLAN_MAXD - 2)
        return cerr(c, LD_EFORMAT, "bottom has no spatial axes", NULL);
    int64_t k[LD_PLAN_MAXD], st[LD_PLAN_MAXD], pad[LD_PLAN_MAXD], dil[LD_PLAN_MAXD], nout;
    if ((rc = spatial(s, c->L, p, "kernel_size", "kernel_h", "kernel_w", nsp, -1, 1, k)) != LD_OK)
        return rc;
    if ((rc = spatial(s, c->L, p, "stride", "stride_h", "stride_w", nsp, 1, 1, st)) != LD_OK)
        return rc;
    if ((rc = spatial(s, c->L, p, "pad", "pad_h", "pad_w", nsp, 0, 0, pad)) != LD_OK) return rc;
    if ((rc = spatial(s, c->L, p, "dilation", "dilation_h", "dilation_w", nsp, 1, 1, dil)) != LD_OK)
        return rc;
    if ((rc = ld__pt_get_int(p, "num_output", 0, 1, INT_MAX, &nout, s->e)) != LD_OK) return rc;
    if (!nout) return cerr(c, LD_EFORMAT, "convolution_param.num_output is required", NULL);
    if ((rc = ld__pt_get_int(p, "group", 1, 1, INT_MAX, &c->group, s->e)) != LD_OK) return rc;
    if ((rc = ld__pt_get_bool(p, "bias_term", 1, &c->bias, s->e)) != LD_OK) return rc;
    if (b0->d[c->axis] % c->group || nout % c->group)
        return cerr(c, LD_EFORMAT, "channels and num_output must be multiples of group", NULL);
    c->ksz = 1;
    c->one = 1;
    for (int i = 0; i < nsp; i++) {
        int64_t in = b0->d[c->axis + 1 + i], ext = dil[i] * (k[i] - 1) + 1, o;
        if (deconv) {
            o = st[i] * (in - 1) + ext - 2 * pad[i];
        } else {
            if (in + 2 * pad[i] < ext)
                return cerr(c, LD_EFORMAT, "kernel larger than the padded input", NULL);
            o = (in + 2 * pad[i] - ext) / st[i] + 1;
        }
        if (o <= 0) return cerr(c, LD_EFORMAT, "output size is not positive", NULL);
        c->td[0][c->axis + 1 + i] = o;
        c->ksz *= k[i];
        c->one &= k[i] == 1 && st[i] == 1 && pad[i] == 0;
    }
    c->td[0][c->axis] = nout;
    copy_top0(c);
    return LD_OK;
}

static int64_t prod(const int64_t *d, int from, int to)
{
    int64_t c = 1;
    for (int i = from; i < to; i++)
        c *= d[i];
    return c;
}

static int conv_mem(lctx *c)
{
    const int deconv = c->L->type[0] == 'D';
    const int64_t cin = c->b0->d[c->axis], nout = c->td[0][c->axis];
    const int64_t out_sp = prod(c->td[0], c->axis + 1, c->b0->nd);
    c->params = (deconv ? cin * (nout / c->group) : nout * (cin / c->group)) * c->ksz +
                (c->bias ? nout : 0);
    c->nparams = c->bias ? 2 : 1;
    /* im2col buffer, one image: [C_in * k, out spatial] (deconv: [num_output * k, top
     * spatial]); a 1x1 conv uses it only when computing its bottom's gradient. */
    int64_t col = deconv ? nout * c->ksz * out_sp : cin * c->ksz * out_sp;
    if (!c->one)
        c->P->col_fwd = (uint64_t)col * 4;
    else
        c->P->col_bw = (uint64_t)col * 4;
    return c->bias ? add_bytes(c->s, LD_PM_LAYER_BUF, out_sp, 4) : LD_OK;
}

static int pool_shape(lctx *c)
{
    est *s = c->s;
    const pblob *b0 = c->b0;
    const ld_pt_node *p = ld__pt_get(c->L->node, "pooling_param");
    if (b0->nd != 4) return cerr(c, LD_EFORMAT, "Pooling needs a 4-axis bottom", NULL);
    int global, rc;
    int64_t k[2], st[2], pad[2];
    if ((rc = ld__pt_get_bool(p, "global_pooling", 0, &global, s->e)) != LD_OK) return rc;
    const int round_down = !strcmp(ld__pt_get_str(p, "round_mode", "CEIL"), "FLOOR");
    if (global) {
        k[0] = b0->d[2];
        k[1] = b0->d[3];
        st[0] = st[1] = 1;
        pad[0] = pad[1] = 0;
    } else {
        if ((rc = spatial(s, c->L, p, "kernel_size", "kernel_h", "kernel_w", 2, -1, 1, k)) != LD_OK)
            return rc;
        if ((rc = spatial(s, c->L, p, "stride", "stride_h", "stride_w", 2, 1, 1, st)) != LD_OK)
            return rc;
        if ((rc = spatial(s, c->L, p, "pad", "pad_h", "pad_w", 2, 0, 0, pad)) != LD_OK) return rc;
    }
    for (int i = 0; i < 2; i++) {
        int64_t in = b0->d[2 + i];
        if (pad[i] >= k[i]) return cerr(c, LD_EFORMAT, "pad must be smaller than the kernel", NULL);
        if (in + 2 * pad[i] < k[i])
            return cerr(c, LD_EFORMAT, "kernel larger than the padded input", NULL);
        /* Caffe: ceil (round_mode FLOOR: floor), then clip so the last window starts
         * inside the (unpadded+pad) image. */
        int64_t o = (in + 2 * pad[i] - k[i] + (round_down ? 0 : st[i] - 1)) / st[i] + 1;
        if (pad[i] && (o - 1) * st[i] >= in + pad[i]) o--;
        c->td[0][2 + i] = o;
    }
    copy_top0(c);
    return LD_OK;
}

static int pool_mem(lctx *c)
{
    const char *pool = ld__pt_get_str(ld__pt_get(c->L->node, "pooling_param"), "pool", "MAX");
    int64_t cnt = prod(c->td[0], 0, 4);
    /* MAX: the argmax mask (unless it is a second top); STOCHASTIC: rand_idx_ in training */
    if ((!strcmp(pool, "MAX") && c->L->nt == 1) || (!strcmp(pool, "STOCHASTIC") && c->train))
        return add_bytes(c->s, LD_PM_LAYER_BUF, cnt, 4);
    return LD_OK;
}

static int ip_shape(lctx *c)
{
    est *s = c->s;
    const ld_pt_node *p = ld__pt_get(c->L->node, "inner_product_param");
    int64_t nout;
    int rc;
    if ((rc = axis_of(s, c->L, p, "axis", 1, c->b0->nd, &c->axis)) != LD_OK) return rc;
    if ((rc = ld__pt_get_int(p, "num_output", 0, 1, INT_MAX, &nout, s->e)) != LD_OK) return rc;
    if (!nout) return cerr(c, LD_EFORMAT, "inner_product_param.num_output is required", NULL);
    if ((rc = ld__pt_get_bool(p, "bias_term", 1, &c->bias, s->e)) != LD_OK) return rc;
    c->tnd[0] = c->axis + 1;
    c->td[0][c->axis] = nout;
    return LD_OK;
}

static int ip_mem(lctx *c)
{
    const pblob *b0 = c->b0;
    const int64_t nout = c->td[0][c->axis];
    const int64_t K = count_of(b0, c->axis, b0->nd), M = count_of(b0, 0, c->axis);
    if (nout > INT_MAX / (K ? K : 1))
        return cerr(c, LD_ELIMIT, "weights over 2^31-1 elements", NULL);
    c->params = nout * K + (c->bias ? nout : 0);
    c->nparams = c->bias ? 2 : 1;
    return c->bias ? add_bytes(c->s, LD_PM_LAYER_BUF, M, 4) : LD_OK;
}

static int prelu_mem(lctx *c)
{
    const pblob *b0 = c->b0;
    int shared, rc;
    if ((rc = ld__pt_get_bool(ld__pt_get(c->L->node, "prelu_param"), "channel_shared", 0, &shared,
                              c->s->e)) != LD_OK)
        return rc;
    c->params = shared ? 1 : (b0->nd > 1 ? b0->d[1] : 1);
    c->nparams = 1;
    int64_t c1 = count_of(b0, 1, b0->nd);
    if ((rc = add_bytes(c->s, LD_PM_LAYER_BUF, 2 * c1, 4)) != LD_OK) return rc;
    if (in_place(c->L)) return add_bytes(c->s, LD_PM_LAYER_BUF, count_of(b0, 0, b0->nd), 4);
    return LD_OK;
}

static int dropout_mem(lctx *c)
{
    if (c->train)
        c->P->buf_train_only += (uint64_t)count_of(c->b0, 0, c->b0->nd) * 4; /* rand_vec_ */
    return LD_OK;
}

static int lrn_shape(lctx *c)
{
    int rc;
    if ((rc = ld__pt_get_int(ld__pt_get(c->L->node, "lrn_param"), "local_size", 5, 1, INT_MAX,
                             &c->size, c->s->e)) != LD_OK)
        return rc;
    if (!(c->size & 1)) return cerr(c, LD_EFORMAT, "lrn_param.local_size must be odd", NULL);
    if (c->b0->nd != 4) return cerr(c, LD_EFORMAT, "LRN needs a 4-axis bottom", NULL);
    return LD_OK;
}

static int lrn_mem(lctx *c)
{
    const pblob *b0 = c->b0;
    const char *reg =
        ld__pt_get_str(ld__pt_get(c->L->node, "lrn_param"), "norm_region", "ACROSS_CHANNELS");
    int64_t cnt = count_of(b0, 0, 4), hw = b0->d[2] * b0->d[3];
    if (!strcmp(reg, "WITHIN_CHANNEL")) return add_bytes(c->s, LD_PM_LAYER_BUF, 4 * cnt, 4);
    /* scale_ (bottom-sized) and padded_square (C + size - 1) x H x W */
    int rc = add_bytes(c->s, LD_PM_LAYER_BUF, cnt + (b0->d[1] + c->size - 1) * hw, 4);
    if (rc == LD_OK && c->train)
        c->P->buf_train_only += (uint64_t)((b0->d[1] + c->size - 1) * hw + hw) * 4;
    return rc;
}

static int batchnorm_mem(lctx *c)
{
    const pblob *b0 = c->b0;
    int64_t C = b0->nd > 1 ? b0->d[1] : 1, N = b0->d[0], cnt = count_of(b0, 0, b0->nd);
    c->params = 2 * C + 1;
    c->nparams = 3;
    /* temp_ and x_norm_ (bottom-sized), mean/variance, multipliers, num_by_chans */
    int rc =
        add_bytes(c->s, LD_PM_LAYER_BUF, 2 * cnt + 2 * C + N + count_of(b0, 2, b0->nd) + N * C, 4);
    /* in place, Backward_cpu copies the top's diff into x_norm_'s diff first */
    if (rc == LD_OK && in_place(c->L)) c->P->buf_train_only += (uint64_t)cnt * 4;
    return rc;
}

/* Scale and Bias: axis, num_axes; Scale's bias_term. */
static int scale_shape(lctx *c)
{
    const int scale = c->L->type[0] == 'S';
    const ld_pt_node *p = ld__pt_get(c->L->node, scale ? "scale_param" : "bias_param");
    int64_t na;
    int rc;
    c->bias = 0;
    if ((rc = axis_of(c->s, c->L, p, "axis", 1, c->b0->nd, &c->axis)) != LD_OK) return rc;
    if ((rc = ld__pt_get_int(p, "num_axes", 1, -1, c->b0->nd, &na, c->s->e)) != LD_OK) return rc;
    if (scale && (rc = ld__pt_get_bool(p, "bias_term", 0, &c->bias, c->s->e)) != LD_OK) return rc;
    c->end = na < 0 ? c->b0->nd : c->axis + (int)na;
    if (c->end > c->b0->nd) return cerr(c, LD_EFORMAT, "num_axes past the bottom's axes", NULL);
    return LD_OK;
}

static int scale_mem(lctx *c)
{
    const int scale = c->L->type[0] == 'S';
    const pblob *b0 = c->b0;
    const player *P = c->P;
    int64_t pc = P->nb > 1 ? 0 : count_of(b0, c->axis, c->end),
            inner = count_of(b0, c->end, b0->nd);
    if (P->nb == 1) {
        c->params = pc * (1 + (scale && c->bias));
        c->nparams = 1 + (scale && c->bias);
    }
    int64_t buf = c->bias || !scale ? inner : 0; /* bias_multiplier_ */
    if (scale) {
        if (in_place(c->L)) buf += count_of(b0, 0, b0->nd); /* temp_ */
        if (c->train)
            c->P->buf_train_only += (uint64_t)(inner + count_of(b0, 0, c->end)) * 4; /* sum_* */
    }
    return add_bytes(c->s, LD_PM_LAYER_BUF, buf, 4);
}

static int eltwise_shape(lctx *c)
{
    for (int i = 1; i < c->P->nb; i++)
        if (!same_shape(c->b0, &c->s->b[c->P->bot[i]]))
            return cerr(c, LD_EFORMAT, "bottoms of different shapes", NULL);
    return LD_OK;
}

static int eltwise_mem(lctx *c)
{
    const char *op = ld__pt_get_str(ld__pt_get(c->L->node, "eltwise_param"), "operation", "SUM");
    if (!strcmp(op, "MAX")) /* max_idx_ */
        return add_bytes(c->s, LD_PM_LAYER_BUF, count_of(c->b0, 0, c->b0->nd), 4);
    return LD_OK;
}

static int concat_shape(lctx *c)
{
    const pblob *b0 = c->b0;
    const ld_pt_node *p = ld__pt_get(c->L->node, "concat_param");
    int axis = 0, rc;
    if ((rc = axis_of(c->s, c->L, p, ld__pt_get(p, "concat_dim") ? "concat_dim" : "axis", 1, b0->nd,
                      &axis)) != LD_OK)
        return rc;
    int64_t sum = 0;
    for (int i = 0; i < c->P->nb; i++) {
        const pblob *bi = &c->s->b[c->P->bot[i]];
        if (bi->nd != b0->nd)
            return cerr(c, LD_EFORMAT, "bottoms with different axis counts", NULL);
        for (int a = 0; a < b0->nd; a++)
            if (a != axis && bi->d[a] != b0->d[a])
                return cerr(c, LD_EFORMAT, "bottoms differ outside the concat axis", NULL);
        sum += bi->d[axis];
    }
    c->td[0][axis] = sum;
    return LD_OK;
}

static int slice_shape(lctx *c)
{
    const ld_plan_layer *L = c->L;
    const ld_pt_node *p = ld__pt_get(L->node, "slice_param");
    int axis = 0, rc;
    if ((rc = axis_of(c->s, L, p, ld__pt_get(p, "slice_dim") ? "slice_dim" : "axis", 1, c->b0->nd,
                      &axis)) != LD_OK)
        return rc;
    size_t np = ld__pt_count(p, "slice_point");
    int64_t dim = c->b0->d[axis], prev = 0;
    if (!np) {
        if (!L->nt || dim % L->nt)
            return cerr(c, LD_EFORMAT, "the axis does not divide evenly among the tops", NULL);
        for (int q = 0; q < L->nt; q++)
            c->td[q][axis] = dim / L->nt;
        return LD_OK;
    }
    if (np + 1 != (size_t)L->nt)
        return cerr(c, LD_EFORMAT, "slice_point count must be tops - 1", NULL);
    for (int q = 0; q < L->nt; q++) {
        int64_t sp = dim;
        if ((size_t)q < np && (rc = ld__pt_int(ld__pt_nth(p, "slice_point", (size_t)q), prev + 1,
                                               dim - 1, &sp, "slice_point", c->s->e)) != LD_OK)
            return rc;
        c->td[q][axis] = sp - prev;
        prev = sp;
    }
    return LD_OK;
}

static int flatten_shape(lctx *c)
{
    const pblob *b0 = c->b0;
    const ld_pt_node *p = ld__pt_get(c->L->node, "flatten_param");
    int axis = 0, end = 0, rc; /* (set by axis_of when it succeeds) */
    if ((rc = axis_of(c->s, c->L, p, "axis", 1, b0->nd, &axis)) != LD_OK) return rc;
    if ((rc = axis_of(c->s, c->L, p, "end_axis", -1, b0->nd, &end)) != LD_OK) return rc;
    int q = 0;
    for (int a = 0; a < axis; a++)
        c->td[0][q++] = b0->d[a];
    c->td[0][q++] = count_of(b0, axis, end + 1);
    for (int a = end + 1; a < b0->nd; a++)
        c->td[0][q++] = b0->d[a];
    c->tnd[0] = q;
    return LD_OK;
}

static int reshape_shape(lctx *c)
{
    est *s = c->s;
    const pblob *b0 = c->b0;
    int64_t *td = c->td[0];
    const ld_pt_node *p = ld__pt_get(c->L->node, "reshape_param"), *sh = ld__pt_get(p, "shape");
    int axis = 0, rc;
    int64_t na;
    if ((rc = ld__pt_get_int(p, "num_axes", -1, -1, b0->nd, &na, s->e)) != LD_OK) return rc;
    if ((rc = axis_of(s, c->L, p, "axis", 0, b0->nd + 1, &axis)) != LD_OK) return rc;
    int end = na < 0 ? b0->nd : axis + (int)na;
    if (end > b0->nd) return cerr(c, LD_EFORMAT, "axis + num_axes past the bottom's axes", NULL);
    size_t nds = ld__pt_count(sh, "dim");
    if ((size_t)axis + nds + (size_t)(b0->nd - end) > LD_PLAN_MAXD)
        return cerr(c, LD_ELIMIT, "too many axes", NULL);
    int q = 0, infer = -1;
    for (int a = 0; a < axis; a++)
        td[q++] = b0->d[a];
    for (size_t i = 0; i < nds; i++) {
        int64_t v;
        if ((rc = ld__pt_int(ld__pt_nth(sh, "dim", i), -1, INT_MAX, &v, "dim", s->e)) != LD_OK)
            return rc;
        if (v == 0) {
            if (axis + (int)i >= b0->nd)
                return cerr(c, LD_EFORMAT, "dim 0 copies a bottom axis that does not exist", NULL);
            v = b0->d[axis + (int)i];
        } else if (v == -1) {
            if (infer >= 0) return cerr(c, LD_EFORMAT, "more than one -1 dim", NULL);
            infer = q;
            v = 1;
        }
        td[q++] = v;
    }
    for (int a = end; a < b0->nd; a++)
        td[q++] = b0->d[a];
    c->tnd[0] = q;
    int64_t have = count_of(b0, 0, b0->nd), got = prod(td, 0, q);
    if (infer >= 0) {
        if (!got || have % got) return cerr(c, LD_EFORMAT, "cannot infer the -1 dim", NULL);
        td[infer] = have / got;
    } else if (got != have) {
        return cerr(c, LD_EFORMAT, "the new shape has another element count than the bottom", NULL);
    }
    return LD_OK;
}

static int softmax_shape(lctx *c)
{
    return axis_of(c->s, c->L, ld__pt_get(c->L->node, "softmax_param"), "axis", 1, c->b0->nd,
                   &c->axis);
}

static int softmax_loss_shape(lctx *c)
{
    int rc = softmax_shape(c);
    c->tnd[0] = 0;
    return rc;
}

/* scale_ and sum_multiplier_; SoftmaxWithLoss also its prob_ (bottom-sized). */
static int softmax_buffers(lctx *c, int with_loss)
{
    const pblob *b0 = c->b0;
    int64_t outer = count_of(b0, 0, c->axis), inner = count_of(b0, c->axis + 1, b0->nd);
    int64_t buf = outer * inner + b0->d[c->axis];
    if (with_loss) buf += count_of(b0, 0, b0->nd);
    return add_bytes(c->s, LD_PM_LAYER_BUF, buf, 4);
}

static int softmax_mem(lctx *c)
{
    return softmax_buffers(c, 0);
}

static int softmax_loss_mem(lctx *c)
{
    return softmax_buffers(c, 1);
}

static int accuracy_shape(lctx *c)
{
    int axis = 0, rc;
    if ((rc = axis_of(c->s, c->L, ld__pt_get(c->L->node, "accuracy_param"), "axis", 1, c->b0->nd,
                      &axis)) != LD_OK)
        return rc;
    c->tnd[0] = 0;
    if (c->L->nt > 1) { /* per-class accuracy: one value per class along the label axis */
        c->tnd[1] = 1;
        c->td[1][0] = c->b0->d[axis];
    }
    return LD_OK;
}

static int euclidean_shape(lctx *c)
{
    const pblob *b0 = c->b0, *b1 = c->P->nb < 2 ? NULL : &c->s->b[c->P->bot[1]];
    if (!b1 || count_of(b0, 0, b0->nd) != count_of(b1, 0, b1->nd))
        return cerr(c, LD_EFORMAT, "EuclideanLoss needs two bottoms of the same size", NULL);
    c->tnd[0] = 0;
    return LD_OK;
}

static int euclidean_mem(lctx *c)
{
    return add_bytes(c->s, LD_PM_LAYER_BUF, count_of(c->b0, 0, c->b0->nd), 4); /* diff_ */
}

/* Every other *Loss layer: a scalar. */
static int loss_shape(lctx *c)
{
    c->tnd[0] = 0;
    return LD_OK;
}

static int crop_shape(lctx *c)
{
    if (c->P->nb < 2) return cerr(c, LD_EFORMAT, "Crop needs two bottoms", NULL);
    const pblob *b0 = c->b0, *b1 = &c->s->b[c->P->bot[1]];
    const ld_pt_node *p = ld__pt_get(c->L->node, "crop_param");
    int axis = 0, rc;
    if ((rc = axis_of(c->s, c->L, p, "axis", 2, b0->nd, &axis)) != LD_OK) return rc;
    if (b1->nd != b0->nd) return cerr(c, LD_EFORMAT, "bottoms with different axis counts", NULL);
    size_t no = ld__pt_count(p, "offset");
    if (no > 1 && no != (size_t)(b0->nd - axis))
        return cerr(c, LD_EFORMAT, "give 1 offset or one per cropped axis", NULL);
    for (int a = axis; a < b0->nd; a++) {
        int64_t off = 0;
        if (no && (rc = ld__pt_int(ld__pt_nth(p, "offset", no == 1 ? 0 : (size_t)(a - axis)), 0,
                                   INT_MAX, &off, "offset", c->s->e)) != LD_OK)
            return rc;
        if (b1->d[a] + off > b0->d[a])
            return cerr(c, LD_EFORMAT, "crop offset + size past the bottom", NULL);
        c->td[0][a] = b1->d[a];
    }
    return LD_OK;
}

/* The layer types the planner knows (docs/caffe.md lists them): data layers, then the layers
 * it computes from their bottoms. */
static const layer_rule rules[] = {
    {"Data", data_shape, data_mem, LR_DATA},
    {"ImageData", image_shape, data_mem, LR_DATA},
    {"HDF5Data", hdf5_shape, hdf5_mem, LR_DATA},
    {"LibData", libdata_shape, libdata_mem, LR_DATA},
    {"Input", input_shape, NULL, LR_DATA},
    {"NetInput", input_shape, NULL, LR_DATA},
    {"DummyData", input_shape, NULL, LR_DATA},
    {"Convolution", conv_shape, conv_mem, 0},
    {"Deconvolution", conv_shape, conv_mem, 0},
    {"Pooling", pool_shape, pool_mem, 0},
    {"InnerProduct", ip_shape, ip_mem, LR_BIG_BOTTOM},
    {"ReLU", NULL, NULL, 0},
    {"Sigmoid", NULL, NULL, 0},
    {"TanH", NULL, NULL, 0},
    {"ELU", NULL, NULL, 0},
    {"Power", NULL, NULL, 0},
    {"AbsVal", NULL, NULL, 0},
    {"BNLL", NULL, NULL, 0},
    {"Exp", NULL, NULL, 0},
    {"Log", NULL, NULL, 0},
    {"Threshold", NULL, NULL, 0},
    {"Split", NULL, NULL, LR_SHARES_DATA},
    {"PReLU", NULL, prelu_mem, 0},
    {"Dropout", NULL, dropout_mem, LR_TRAIN_FWD_BUF},
    {"LRN", lrn_shape, lrn_mem, 0},
    {"BatchNorm", NULL, batchnorm_mem, LR_STATS_PARAMS},
    {"Scale", scale_shape, scale_mem, 0},
    {"Bias", scale_shape, scale_mem, 0},
    {"Eltwise", eltwise_shape, eltwise_mem, 0},
    {"Concat", concat_shape, NULL, 0},
    {"Slice", slice_shape, NULL, 0},
    {"Flatten", flatten_shape, NULL, LR_ALIAS},
    {"Reshape", reshape_shape, NULL, LR_ALIAS},
    {"Softmax", softmax_shape, softmax_mem, 0},
    {"SoftmaxWithLoss", softmax_loss_shape, softmax_loss_mem, 0},
    {"Accuracy", accuracy_shape, NULL, 0},
    {"EuclideanLoss", euclidean_shape, euclidean_mem, 0},
    {"Crop", crop_shape, NULL, 0},
    {"Silence", NULL, NULL, LR_NO_BOTTOM_OK},
};

/* Any other Caffe *Loss type. */
static const layer_rule loss_rule = {"*Loss", loss_shape, NULL, 0};

/* The rule for a layer type, or NULL when the planner does not know it: the one lookup. */
static const layer_rule *find_rule(const char *type)
{
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (!strcmp(type, rules[i].type)) return &rules[i];
    return ld__plan_is_loss_type(type) ? &loss_rule : NULL;
}

int ld__plan_is_data_type(const char *t)
{
    const layer_rule *r = find_rule(t);
    return r && (r->flags & LR_DATA);
}

int ld__plan_is_known_type(const char *t)
{
    const layer_rule *r = find_rule(t);
    return r && !(r->flags & LR_DATA);
}

/* Count a layer's parameters; keep the LD_PLAN_NBIG largest, for the advice when they do
 * not fit. */
static int add_params(lctx *c, const layer_rule *r)
{
    est *s = c->s;
    int rc = add_bytes(s, LD_PM_PARAM, c->params, 4);
    if (rc != LD_OK) return rc;
    s->m->param_count += (uint64_t)c->params;
    ld_plan_big *big = s->m->big;
    int at = LD_PLAN_NBIG;
    while (at > 0 && big[at - 1].count < (uint64_t)c->params)
        at--;
    if (at < LD_PLAN_NBIG) {
        memmove(big + at + 1, big + at, (size_t)(LD_PLAN_NBIG - 1 - at) * sizeof *big);
        memset(&big[at], 0, sizeof big[at]);
        big[at].layer = (size_t)(c->L - s->net->layers);
        big[at].count = (uint64_t)c->params;
        if (r->flags & LR_BIG_BOTTOM) {
            big[at].bottom_nd = c->b0->nd;
            memcpy(big[at].bottom_d, c->b0->d, sizeof big[at].bottom_d);
        }
    }
    c->P->lr_params = has_lr(c->L, c->nparams) && !(r->flags & LR_STATS_PARAMS);
    return LD_OK;
}

/* Shapes of the tops of one (non-data) layer into td/tnd; memory of its params and buffers. */
static int layer_shapes(est *s, const ld_plan_layer *L, player *P, const layer_rule *r,
                        int64_t td[][LD_PLAN_MAXD], int *tnd)
{
    const pblob *b0 = P->nb ? &s->b[P->bot[0]] : NULL;
    for (int k = 0; k < L->nt; k++) { /* default: the bottom's shape */
        tnd[k] = b0 ? b0->nd : 0;
        if (b0) memcpy(td[k], b0->d, sizeof td[k]);
    }
    if (!b0 && !(r && (r->flags & LR_NO_BOTTOM_OK)))
        return lerr(s, L, LD_EFORMAT, "no bottom: the layer computes its tops from one", NULL);
    if (!r) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "layer type '%s' is not one the planner knows: its memory cannot be "
                 "estimated (docs/caffe.md lists the supported types)",
                 L->type);
        return ld__err(s->e, LD_EFORMAT, "%s:%d: layer '%s': %s", s->cfg->file, L->line, L->name,
                       msg);
    }
    lctx c = {.s = s, .L = L, .P = P, .b0 = b0, .td = td, .tnd = tnd, .train = s->cfg->train};
    int rc;
    if (r->shape && (rc = r->shape(&c)) != LD_OK) return rc;
    if (r->mem && (rc = r->mem(&c)) != LD_OK) return rc;
    return c.params ? add_params(&c, r) : LD_OK;
}

/* ---- the estimate: forward through the layers, then what training adds ----------------- */

/* The blobs the bottoms of L name (the latest top of each name). */
static int link_bottoms(est *s, const ld_plan_layer *L, player *P)
{
    for (int k = 0; k < L->nb; k++) {
        int id = find_blob(s, L->bottom[k]);
        if (id < 0) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "bottom '%.100s' is not produced by any earlier layer (a missing "
                     "layer, a typo, or a cycle)",
                     L->bottom[k]);
            return lerr(s, L, LD_EFORMAT, msg, NULL);
        }
        P->bot[k] = id;
    }
    return LD_OK;
}

/* Loss weights: explicit loss_weight fields, or 1 on a loss layer's first top. */
static void loss_weights(const ld_plan_layer *L, player *P)
{
    size_t n = ld__pt_count(L->node, "loss_weight");
    for (size_t q = 0; q < n; q++) {
        const char *v = ld__pt_nth(L->node, "loss_weight", q)->value;
        if (v && strtod(v, NULL) != 0.0) P->loss = 1;
    }
    if (!n && ld__plan_is_loss_type(L->type) && !L->is_split) P->loss = 1;
}

/* The tops of a non-data layer: a top named like a bottom is that blob (in place: its shape
 * must not change, and Caffe logs it again), any other a new blob. */
static int place_tops(est *s, const ld_plan_layer *L, player *P, int64_t td[][LD_PLAN_MAXD],
                      const int *tnd)
{
    const unsigned flags = P->rule ? P->rule->flags : 0;
    for (int k = 0; k < L->nt; k++) {
        int inplace = -1;
        for (int q = 0; q < L->nb; q++)
            if (!strcmp(L->top[k], L->bottom[q])) inplace = P->bot[q];
        if (inplace >= 0) {
            pblob tmp = s->b[inplace];
            tmp.nd = tnd[k];
            memcpy(tmp.d, td[k], sizeof tmp.d);
            if (!same_shape(&tmp, &s->b[inplace]))
                return lerr(s, L, LD_EFORMAT, "in-place layer changes the shape", NULL);
            P->top[k] = inplace;
            int rc = record_shape(s, L, L->top[k], tmp.nd, tmp.d);
            if (rc != LD_OK) return rc;
            continue;
        }
        int id = new_blob(s, L, L->top[k], tnd[k], td[k]);
        if (id < 0) return id;
        P->top[k] = id;
        if (L->is_split || (flags & LR_SHARES_DATA)) s->b[id].data_shared = 1;
        if (flags & LR_ALIAS) s->b[id].alias = P->bot[0];
    }
    return LD_OK;
}

/* Layer i forward: its bottoms, its tops and their shapes, its memory without backward. */
static int forward_layer(est *s, size_t i)
{
    ld_plan_layer *L = &s->net->layers[i];
    player *P = &s->pl[i];
    P->bot = calloc((size_t)L->nb + 1, sizeof *P->bot);
    P->bot_bw = calloc((size_t)L->nb + 1, sizeof *P->bot_bw);
    P->top = calloc((size_t)L->nt + 1, sizeof *P->top);
    int64_t(*td)[LD_PLAN_MAXD] = calloc((size_t)L->nt + 1, sizeof *td);
    int *tnd = calloc((size_t)L->nt + 1, sizeof *tnd);
    int rc = LD_OK;
    if (!P->bot || !P->top || !P->bot_bw || !td || !tnd) {
        rc = ld__err(s->e, LD_ENOMEM, "out of memory");
        goto done;
    }
    P->nb = L->nb;
    P->nt = L->nt;
    if ((rc = link_bottoms(s, L, P)) != LD_OK) goto done;
    const layer_rule *r = P->rule = find_rule(L->type);
    if (r && (r->flags & LR_DATA)) {
        lctx c = {.s = s, .L = L, .P = P, .train = s->cfg->train};
        rc = r->shape(&c);
        if (rc == LD_OK && r->mem) rc = r->mem(&c);
    } else if (!L->nb && !r) { /* Python, MemoryData... */
        rc = other_input(s, L, P);
    } else if ((rc = layer_shapes(s, L, P, r, td, tnd)) == LD_OK) {
        loss_weights(L, P);
        rc = place_tops(s, L, P, td, tnd);
        if (rc == LD_OK && P->col_fwd && !s->cfg->train)
            rc = add_bytes(s, LD_PM_COL, (int64_t)P->col_fwd, 1);
    }
done:
    free(td);
    free(tnd);
    return rc;
}

/* Backward (Net::Init): which layers and blobs need it. */
static void mark_backward(est *s)
{
    const ld_plan_net *net = s->net;
    for (size_t i = 0; i < net->nlayers; i++) {
        player *P = &s->pl[i];
        int nb = P->lr_params;
        for (int k = 0; k < P->nb; k++)
            nb |= s->b[P->bot[k]].need_bw;
        P->need_bw = nb;
        for (int k = 0; k < P->nb; k++) {
            P->bot_bw[k] = s->b[P->bot[k]].need_bw;
            const ld_pt_node *pd = ld__pt_nth(net->layers[i].node, "propagate_down", (size_t)k);
            if (pd && pd->value && !net->layers[i].is_split)
                P->bot_bw[k] = strcmp(pd->value, "false") && strcmp(pd->value, "0");
        }
        if (nb)
            for (int k = 0; k < P->nt; k++)
                s->b[P->top[k]].need_bw = 1;
    }
}

/* Layers that do not contribute to a loss run no backward (by blob names, as Caffe does). */
static int prune_backward(est *s)
{
    const ld_plan_net *net = s->net;
    const size_t nl = net->nlayers;
    size_t nbot = 1;
    for (size_t i = 0; i < nl; i++)
        nbot += (size_t)s->pl[i].nb;
    char **under = calloc(nbot, sizeof *under), **skip = calloc(nbot, sizeof *skip);
    size_t nu = 0, ns = 0;
    if (!under || !skip) {
        free(under);
        free(skip);
        return ld__err(s->e, LD_ENOMEM, "out of memory");
    }
    for (size_t i = nl; i-- > 0;) {
        player *P = &s->pl[i];
        const ld_plan_layer *L = &net->layers[i];
        int contributes = 0, skip_pd = 1;
        for (int k = 0; k < P->nt; k++) {
            int hit = P->loss && k == 0, sk = 0;
            for (size_t q = 0; q < nu && !hit; q++)
                hit = !strcmp(under[q], L->top[k]);
            for (size_t q = 0; q < ns && !sk; q++)
                sk = !strcmp(skip[q], L->top[k]);
            contributes |= hit;
            if (!sk) skip_pd = 0;
        }
        if (P->need_bw && skip_pd) {
            P->need_bw = 0;
            for (int k = 0; k < P->nb; k++)
                P->bot_bw[k] = 0;
        }
        if (!contributes) P->need_bw = 0;
        for (int k = 0; k < P->nb; k++) {
            if (contributes) {
                if (nu < nbot) under[nu++] = L->bottom[k];
            } else {
                P->bot_bw[k] = 0;
            }
            if (!P->bot_bw[k] && ns < nbot) skip[ns++] = L->bottom[k];
        }
    }
    free(under);
    free(skip);
    return LD_OK;
}

/* Training: diffs of the tops of layers that run backward (read), of the bottoms they
 * propagate to (written) and of loss tops (SetLossWeights); im2col and the buffers only
 * training allocates. */
static int train_memory(est *s)
{
    int rc;
    for (size_t i = 0; i < s->net->nlayers; i++) {
        player *P = &s->pl[i];
        for (int k = 0; k < P->nt; k++)
            if (P->need_bw || (P->loss && k == 0)) s->b[P->top[k]].diff = 1;
        for (int k = 0; k < P->nb; k++)
            if (P->need_bw && P->bot_bw[k]) s->b[P->bot[k]].diff = 1;
        if (P->need_bw || P->col_fwd) {
            uint64_t col = P->col_fwd;
            if (P->need_bw) {
                int any_pd = 0;
                for (int k = 0; k < P->nb; k++)
                    any_pd |= P->bot_bw[k];
                if (!col && any_pd) col = P->col_bw;
                if ((rc = add_bytes(s, LD_PM_LAYER_BUF, (int64_t)P->buf_train_only, 1)) != LD_OK)
                    return rc;
            }
            if ((rc = add_bytes(s, LD_PM_COL, (int64_t)col, 1)) != LD_OK) return rc;
        } else if (P->rule && (P->rule->flags & LR_TRAIN_FWD_BUF)) {
            if ((rc = add_bytes(s, LD_PM_LAYER_BUF, (int64_t)P->buf_train_only, 1)) != LD_OK)
                return rc;
        }
    }
    return LD_OK;
}

/* Data and diff of every blob that owns them (Flatten/Reshape tops share their bottom's). */
static int blob_memory(est *s)
{
    int rc;
    for (size_t i = 0; i < s->nb; i++) {
        const pblob *b = &s->b[i];
        int64_t cnt = count_of(b, 0, b->nd);
        if (b->alias >= 0) continue;
        if (!b->data_shared && (rc = add_bytes(s, LD_PM_TOP_DATA, cnt, 4)) != LD_OK) return rc;
        if (b->diff && (rc = add_bytes(s, LD_PM_TOP_DIFF, cnt, 4)) != LD_OK) return rc;
    }
    return LD_OK;
}

int ld__plan_net_estimate(ld_plan_net *net, const ld_plan_cfg *cfg, ld_plan_mem *m, ld_err *e)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < net->nshapes; i++) {
        free(net->shapes[i].layer);
        free(net->shapes[i].name);
    }
    net->nshapes = 0;
    est s = {net, cfg, e, NULL, 0, 0, NULL, m};
    const size_t nl = net->nlayers;
    s.pl = calloc(nl, sizeof *s.pl);
    if (!s.pl) return ld__err(e, LD_ENOMEM, "out of memory");
    int rc = LD_OK;
    for (size_t i = 0; i < nl && rc == LD_OK; i++)
        rc = forward_layer(&s, i);
    if (rc == LD_OK && cfg->train) {
        mark_backward(&s);
        rc = prune_backward(&s);
        if (rc == LD_OK) rc = train_memory(&s);
    } else if (rc == LD_OK) { /* forward only: loss tops still get a diff (SetLossWeights) */
        for (size_t i = 0; i < nl; i++)
            if (s.pl[i].loss && s.pl[i].nt) s.b[s.pl[i].top[0]].diff = 1;
    }
    if (rc == LD_OK) rc = blob_memory(&s);
    if (rc == LD_OK && cfg->train) m->c[LD_PM_PARAM_DIFF] = m->c[LD_PM_PARAM];
    for (size_t i = 0; i < nl; i++) {
        free(s.pl[i].bot);
        free(s.pl[i].top);
        free(s.pl[i].bot_bw);
    }
    free(s.pl);
    free(s.b);
    return rc;
}
