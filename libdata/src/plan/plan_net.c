/*
 * The layers of one phase of a Caffe net (layer / legacy layers, include/exclude rules,
 * Caffe's implicit Split layers) and their data sources.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libdata/reader.h"
#include "plan/plan_net.h"
#include "plan/plan_schema.h"

/* Legacy V1 `layers { type: CONVOLUTION }` enum names -> layer types. */
static const char *const v1_types[][2] = {
    {"ABSVAL", "AbsVal"},
    {"ACCURACY", "Accuracy"},
    {"ARGMAX", "ArgMax"},
    {"BNLL", "BNLL"},
    {"CONCAT", "Concat"},
    {"CONTRASTIVE_LOSS", "ContrastiveLoss"},
    {"CONVOLUTION", "Convolution"},
    {"DATA", "Data"},
    {"DECONVOLUTION", "Deconvolution"},
    {"DROPOUT", "Dropout"},
    {"DUMMY_DATA", "DummyData"},
    {"EUCLIDEAN_LOSS", "EuclideanLoss"},
    {"ELTWISE", "Eltwise"},
    {"EXP", "Exp"},
    {"FLATTEN", "Flatten"},
    {"HDF5_DATA", "HDF5Data"},
    {"HDF5_OUTPUT", "HDF5Output"},
    {"HINGE_LOSS", "HingeLoss"},
    {"IM2COL", "Im2col"},
    {"IMAGE_DATA", "ImageData"},
    {"INFOGAIN_LOSS", "InfogainLoss"},
    {"INNER_PRODUCT", "InnerProduct"},
    {"LRN", "LRN"},
    {"MEMORY_DATA", "MemoryData"},
    {"MULTINOMIAL_LOGISTIC_LOSS", "MultinomialLogisticLoss"},
    {"MVN", "MVN"},
    {"POOLING", "Pooling"},
    {"POWER", "Power"},
    {"RELU", "ReLU"},
    {"SIGMOID", "Sigmoid"},
    {"SIGMOID_CROSS_ENTROPY_LOSS", "SigmoidCrossEntropyLoss"},
    {"SILENCE", "Silence"},
    {"SOFTMAX", "Softmax"},
    {"SOFTMAX_LOSS", "SoftmaxWithLoss"},
    {"SPLIT", "Split"},
    {"SLICE", "Slice"},
    {"TANH", "TanH"},
    {"WINDOW_DATA", "WindowData"},
    {"THRESHOLD", "Threshold"},
};

static char *dup_or_null(const char *s)
{
    return s ? ld__strdup(s) : NULL;
}

/* Caffe's NetStateRule against the state {phase, level 0, no stages}. */
static int rule_meets(const ld_pt_node *r, int phase)
{
    const char *p = ld__pt_get_str(r, "phase", NULL);
    if (p && strcmp(p, phase ? "TEST" : "TRAIN") != 0) return 0;
    int64_t v = 0;
    const char *s;
    if ((s = ld__pt_get_str(r, "min_level", NULL)) != NULL && (v = strtoll(s, NULL, 0)) > 0)
        return 0;
    if ((s = ld__pt_get_str(r, "max_level", NULL)) != NULL && (v = strtoll(s, NULL, 0)) < 0)
        return 0;
    if (ld__pt_get(r, "stage")) return 0; /* the net state has no stages */
    return 1;
}

static int layer_in_phase(const ld_pt_node *l, int phase)
{
    size_t ni = ld__pt_count(l, "include"), nx = ld__pt_count(l, "exclude");
    if (ni) {
        for (size_t i = 0; i < ni; i++)
            if (rule_meets(ld__pt_nth(l, "include", i), phase)) return 1;
        return 0;
    }
    for (size_t i = 0; i < nx; i++)
        if (rule_meets(ld__pt_nth(l, "exclude", i), phase)) return 0;
    return 1;
}

static int push_layer(ld_plan_net *net, ld_plan_layer **out, ld_err *e)
{
    if (net->nlayers >= LD_PLAN_MAX_LAYERS)
        return ld__err(e, LD_ELIMIT, "more than %d layers: not a net the planner takes",
                       LD_PLAN_MAX_LAYERS);
    if (net->nlayers == net->cap) {
        size_t c = net->cap ? net->cap * 2 : 32;
        ld_plan_layer *t = realloc(net->layers, c * sizeof *t);
        if (!t) return ld__err(e, LD_ENOMEM, "out of memory");
        net->layers = t;
        net->cap = c;
    }
    *out = &net->layers[net->nlayers++];
    memset(*out, 0, sizeof **out);
    return LD_OK;
}

static int strv_from(const ld_pt_node *l, const char *field, char ***out, int *n, ld_err *e)
{
    size_t k = ld__pt_count(l, field);
    *n = 0;
    *out = NULL;
    if (!k) return LD_OK;
    if (k > 4096)
        return ld__err(e, LD_ELIMIT, "%d:%d: more than 4096 %s fields", l->line, l->col, field);
    *out = calloc(k, sizeof **out);
    if (!*out) return ld__err(e, LD_ENOMEM, "out of memory");
    for (size_t i = 0; i < k; i++) {
        const ld_pt_node *f = ld__pt_nth(l, field, i);
        if (!f->value)
            return ld__err(e, LD_EFORMAT, "%d:%d: %s: a blob name expected, not a message", f->line,
                           f->col, field);
        if (!((*out)[i] = ld__strdup(f->value))) return ld__err(e, LD_ENOMEM, "out of memory");
        *n = (int)i + 1;
    }
    return LD_OK;
}

/* The HDF5Data list file: the first file and every file's sample count. */
static int stat_hdf5_list(ld_plan_src *s, const char *list, ld_err *e)
{
    FILE *f = fopen(list, "r");
    if (!f) return ld__err(e, LD_EIO, "HDF5Data source %s: cannot open the list file", list);
    char line[4096];
    int rc = LD_OK;
    while (fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, "\r\n");
        line[n] = 0;
        /* Caffe reads the list with `>>`: whitespace-separated names. */
        char *save = NULL;
        for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
            ld_dataset_info *info = NULL;
            char *msg = NULL;
            int r = ld_dataset_stat(tok, &info, &msg);
            if (r != LD_OK) {
                rc = ld__err(e, r, "HDF5Data source %s lists %s: %s", list, tok,
                             msg ? msg : ld_strerror(r));
                ld_free(msg);
                goto done;
            }
            if (!s->nfiles) {
                struct stat st;
                s->c = info->channels;
                s->h = info->height;
                s->label_k = info->label_k;
                s->mask_h = info->mask_h;
                s->mask_w = info->mask_w;
                s->mask_is_label = info->mask_is_label;
                s->w = info->width;
                s->samples = info->samples;
                s->file_bytes = stat(tok, &st) == 0 ? (uint64_t)st.st_size : 0;
                s->first_file = ld__strdup(tok);
                s->known = info->height > 0;
            }
            if (info->samples > s->max_file_samples) s->max_file_samples = info->samples;
            s->nfiles++;
            ld_free(info);
        }
    }
    if (!s->nfiles) rc = ld__err(e, LD_EFORMAT, "HDF5Data source %s lists no file", list);
done:
    fclose(f);
    return rc;
}

int ld__plan_reader_memory(const char *path, int batch, int64_t crop, int64_t prefetch,
                           int64_t *mem, ld_err *e)
{
    ld_reader *r = ld_reader_create();
    if (!r) return ld__err(e, LD_ENOMEM, "out of memory");
    int rc = ld_reader_set(r, LD_R_BATCH_SIZE, batch);
    if (rc == LD_OK) rc = ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_F32);
    if (rc == LD_OK) rc = ld_reader_set(r, LD_R_LAYOUT, LD_LAYOUT_NCHW);
    if (rc == LD_OK) rc = ld_reader_set(r, LD_R_LABEL_DTYPE, LD_DTYPE_F32);
    if (rc == LD_OK && prefetch > 0) rc = ld_reader_set(r, LD_R_PREFETCH, prefetch);
    if (rc == LD_OK && crop > 0) rc = ld_reader_set(r, LD_R_CROP_W, crop);
    if (rc == LD_OK && crop > 0) rc = ld_reader_set(r, LD_R_CROP_H, crop);
    if (rc == LD_OK) rc = ld_reader_open(r, path);
    if (rc == LD_OK) rc = ld_reader_get_info(r, LD_R_INFO_MEMORY, mem);
    if (rc != LD_OK) rc = ld__err(e, rc, "LibData source %s: %s", path, ld_reader_errmsg(r));
    ld_reader_free(r);
    return rc;
}

/* Open a data layer's source to learn the sample shape (and what the source costs). */
static int open_source(ld_plan_layer *L, int v1, const ld_plan_cfg *cfg, ld_err *e)
{
    const char *t = L->type;
    int is_data = !strcmp(t, "Data"), is_h5 = !strcmp(t, "HDF5Data"), is_ld = !strcmp(t, "LibData");
    if (!is_data && !is_h5 && !is_ld) return LD_OK;
    int64_t od[LD_PLAN_MAXD];
    int ond;
    if (L->nt && ld__plan_shape_override(cfg->shapes, L->top[0], od, &ond)) return LD_OK;
    const ld_pt_node *p = ld__pt_get(L->node, is_h5 ? "hdf5_data_param" : "data_param");
    const char *src = ld__pt_get_str(p, "source", NULL);
    if (!src || !*src)
        return ld__err(e, LD_EFORMAT, "%s:%d: %s layer '%s' has no %s.source", cfg->file, L->line,
                       t, L->name, is_h5 ? "hdf5_data_param" : "data_param");
    ld_plan_src *s = calloc(1, sizeof *s);
    if (!s || !(s->path = ld__strdup(src))) {
        free(s);
        return ld__err(e, LD_ENOMEM, "out of memory");
    }
    L->src = s;
    int rc;
    if (is_h5) {
        rc = stat_hdf5_list(s, src, e);
    } else {
        ld_dataset_info *info = NULL;
        char *msg = NULL;
        rc = ld_dataset_stat(src, &info, &msg);
        if (rc != LD_OK) {
            rc = ld__err(e, rc, "%s layer '%s' (line %d): %s", t, L->name, L->line,
                         msg ? msg : ld_strerror(rc));
            ld_free(msg);
            return rc;
        }
        s->c = info->channels;
        s->h = info->height;
        s->label_k = info->label_k;
        s->mask_h = info->mask_h;
        s->mask_w = info->mask_w;
        s->mask_is_label = info->mask_is_label;
        s->w = info->width;
        s->samples = info->samples;
        s->known = info->height > 0;
        s->nfiles = info->files;
        if (info->format == LD_FORMAT_LMDB) {
            char *mdb = ld__asprintf("%s/data.mdb", src);
            struct stat st;
            if (mdb && stat(mdb, &st) == 0) s->file_bytes = (uint64_t)st.st_size;
            free(mdb);
        }
        ld_free(info);
    }
    if (rc != LD_OK) return rc; /* the message names the source */
    int64_t crop = 0;
    const ld_pt_node *tp = ld__pt_get(L->node, "transform_param");
    if ((rc = ld__pt_get_int(tp, "crop_size", 0, 0, 1 << 20, &crop, e)) != LD_OK) return rc;
    /* legacy V1 nets: Caffe moves data_param's crop_size into transform_param */
    if (v1 && ld__pt_get(p, "crop_size") &&
        (rc = ld__pt_get_int(p, "crop_size", 0, 0, 1 << 20, &crop, e)) != LD_OK)
        return rc;
    if (crop > 0 && s->known) {
        if (crop > s->h || crop > s->w)
            return ld__err(e, LD_EFORMAT,
                           "%s:%d: %s layer '%s': crop_size %lld is larger than the "
                           "%lldx%lld samples of %s",
                           cfg->file, L->line, t, L->name, (long long)crop, (long long)s->w,
                           (long long)s->h, src);
        s->h = s->w = crop;
    }
    if (is_ld && s->known) {
        /* the LibData layer passes data_param.prefetch to its reader when given */
        int64_t prefetch = 0;
        if ((rc = ld__pt_get_int(p, "prefetch", 0, 0, 1 << 20, &prefetch, e)) != LD_OK) return rc;
        if ((rc = ld__plan_reader_memory(src, 1, crop, prefetch, &s->reader_mem1, e)) != LD_OK)
            return rc;
        if ((rc = ld__plan_reader_memory(src, 2, crop, prefetch, &s->reader_mem2, e)) != LD_OK)
            return rc;
    }
    return LD_OK;
}

/* Add a sentence to net->notes unless it is there already (takes `s`). */
static int add_note(ld_plan_net *net, char *s, ld_err *e)
{
    if (!s) return ld__err(e, LD_ENOMEM, "out of memory");
    for (size_t i = 0; i < net->nnotes; i++) {
        if (!strcmp(net->notes[i], s)) {
            free(s);
            return LD_OK;
        }
    }
    char **t = realloc(net->notes, (net->nnotes + 1) * sizeof *t);
    if (!t) {
        free(s);
        return ld__err(e, LD_ENOMEM, "out of memory");
    }
    net->notes = t;
    t[net->nnotes++] = s;
    return LD_OK;
}

static int flag_set(const ld_pt_node *m, const char *name)
{
    const char *v = ld__pt_get_str(m, name, NULL);
    return v && (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "t") || !strcmp(v, "1"));
}

/* Whether the net has a loss (training needs one), and what the estimate leaves out: the
 * layer types whose parameters it does not all interpret. */
static int layer_notes(ld_plan_net *net, const ld_plan_cfg *cfg, ld_err *e)
{
    int rc = LD_OK;
    if (ld__pt_get(net->root, "state"))
        rc = add_note(net,
                      ld__strdup("the net's state (level, stage) is not interpreted: its layers "
                                 "are chosen for level 0 and no stages"),
                      e);
    for (size_t i = 0; i < net->nlayers && rc == LD_OK; i++) {
        const ld_plan_layer *L = &net->layers[i];
        const char *t = L->type;
        for (size_t k = 0; k < ld__pt_count(L->node, "loss_weight"); k++) {
            const char *v = ld__pt_nth(L->node, "loss_weight", k)->value;
            if (v && strtod(v, NULL) != 0.0) net->has_loss = 1;
        }
        if (ld__plan_is_loss_type(t)) {
            net->has_loss = 1;
            /* the losses whose scratch the estimate counts, and those that keep none */
            if (strcmp(t, "SoftmaxWithLoss") && strcmp(t, "EuclideanLoss") &&
                strcmp(t, "MultinomialLogisticLoss") && strcmp(t, "HingeLoss"))
                rc = add_note(net,
                              ld__asprintf("%s: planned as a loss of one value; the buffers "
                                           "the layer keeps inside are not counted",
                                           t),
                              e);
        }
        int64_t d[LD_PLAN_MAXD];
        int nd;
        if (rc == LD_OK && !L->nb && L->nt && !ld__plan_is_data_type(t) &&
            !ld__plan_is_known_type(t) && ld__plan_shape_override(cfg->shapes, L->top[0], d, &nd))
            rc = add_note(net,
                          ld__asprintf("%s (layer '%s'): planned as an input of the shape given "
                                       "in shapes; what the layer holds itself is not counted",
                                       t, L->name),
                          e);
        const ld_pt_node *tp = ld__pt_get(L->node, "transform_param");
        if (rc == LD_OK && (!strcmp(t, "Data") || !strcmp(t, "LibData")) &&
            (flag_set(tp, "force_color") || flag_set(tp, "force_gray") ||
             flag_set(ld__pt_get(L->node, "data_param"), "force_encoded_color")))
            rc = add_note(net,
                          ld__asprintf("%s: force_color / force_gray / force_encoded_color are "
                                       "not interpreted: the source's channels are taken as "
                                       "stored",
                                       t),
                          e);
        for (size_t k = 0; rc == LD_OK && k < ld__pt_count(L->node, "param"); k++) {
            const ld_pt_node *ps = ld__pt_nth(L->node, "param", k);
            /* param { name } (V1 nets: param: "name") */
            const char *pn = ps->value ? ps->value : ld__pt_get_str(ps, "name", NULL);
            if (pn && *pn)
                rc = add_note(net,
                              ld__asprintf("%s: shared parameters (param { name }) are counted "
                                           "for every layer that names them, not once",
                                           t),
                              e);
        }
    }
    return rc;
}

/* Which top a bottom named `name` of layer `i` reads: the latest earlier layer `j` with a top
 * of that name (its last such top, `t`). 0 when no earlier layer makes it. */
static int producer(const ld_plan_net *net, size_t i, const char *name, size_t *j, int *t)
{
    for (size_t k = i; k-- > 0;) {
        const ld_plan_layer *P = &net->layers[k];
        int hit = -1;
        for (int q = 0; q < P->nt; q++)
            if (!strcmp(P->top[q], name)) hit = q;
        if (hit >= 0) {
            *j = k;
            *t = hit;
            return 1;
        }
    }
    return 0;
}

/* Caffe's InsertSplits: a top read by several bottoms gets a Split layer right after its
 * producer, with one top per reader ("NAME_PRODUCER_split_K"). */
static int insert_splits(ld_plan_net *net, ld_err *e)
{
    size_t n = net->nlayers;
    /* For each (layer, top): readers. Blob names resolve to their latest producer. */
    int *cnt = NULL;
    int rc = LD_OK;
    size_t ntops = 0;
    for (size_t i = 0; i < n; i++)
        ntops += (size_t)net->layers[i].nt;
    size_t *base = calloc(n + 1, sizeof *base);
    cnt = calloc(ntops + 1, sizeof *cnt);
    if (!base || !cnt) {
        rc = ld__err(e, LD_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        base[i + 1] = base[i] + (size_t)net->layers[i].nt;
    /* Count readers: for each bottom, the latest earlier layer with that top. */
    for (size_t i = 0; i < n; i++) {
        ld_plan_layer *L = &net->layers[i];
        for (int b = 0; b < L->nb; b++) {
            size_t j;
            int hit;
            if (producer(net, i, L->bottom[b], &j, &hit)) cnt[base[j] + (size_t)hit]++;
        }
    }
    size_t extra = 0;
    for (size_t k = 0; k < ntops; k++)
        extra += cnt[k] > 1;
    if (!extra) goto done;
    /* Rebuild the layer list with the splits. */
    ld_plan_layer *nl = calloc(n + extra, sizeof *nl);
    int *seen = calloc(ntops + 1, sizeof *seen);
    if (!nl || !seen) {
        free(nl);
        free(seen);
        rc = ld__err(e, LD_ENOMEM, "out of memory");
        goto done;
    }
    size_t o = 0;
    size_t *newpos = calloc(n + 1, sizeof *newpos);
    if (!newpos) {
        free(nl);
        free(seen);
        rc = ld__err(e, LD_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        ld_plan_layer *L = &net->layers[i];
        /* Rename bottoms that read a split top. */
        for (int b = 0; b < L->nb; b++) {
            size_t j;
            int hit;
            if (producer(net, i, L->bottom[b], &j, &hit)) {
                const ld_plan_layer *P = &net->layers[j];
                size_t k = base[j] + (size_t)hit;
                if (cnt[k] > 1) {
                    char *nn =
                        ld__asprintf("%s_%s_%d_split_%d", P->top[hit], P->name, hit, seen[k]++);
                    if (!nn) {
                        rc = ld__err(e, LD_ENOMEM, "out of memory");
                    } else {
                        free(L->bottom[b]);
                        L->bottom[b] = nn;
                    }
                }
            }
        }
        newpos[i] = o;
        nl[o++] = *L;
        for (int t = 0; t < L->nt; t++) {
            size_t k = base[i] + (size_t)t;
            if (cnt[k] <= 1) continue;
            ld_plan_layer *S = &nl[o++];
            memset(S, 0, sizeof *S);
            S->is_split = 1;
            S->node = L->node;
            S->line = L->line;
            S->col = L->col;
            S->name = ld__asprintf("%s_%s_%d_split", L->top[t], L->name, t);
            S->type = ld__strdup("Split");
            S->bottom = calloc(1, sizeof *S->bottom);
            S->nb = S->bottom ? 1 : 0;
            S->top = calloc((size_t)cnt[k], sizeof *S->top);
            if (S->bottom) S->bottom[0] = ld__strdup(L->top[t]);
            if (S->top) {
                S->nt = cnt[k];
                for (int q = 0; q < cnt[k]; q++)
                    S->top[q] = ld__asprintf("%s_%s_%d_split_%d", L->top[t], L->name, t, q);
            }
            if (!S->name || !S->type || !S->bottom || !S->bottom[0] || !S->top)
                rc = ld__err(e, LD_ENOMEM, "out of memory");
            for (int q = 0; S->top && q < S->nt; q++)
                if (!S->top[q]) rc = ld__err(e, LD_ENOMEM, "out of memory");
        }
    }
    free(net->layers);
    net->layers = nl;
    net->nlayers = net->cap = o;
    free(seen);
    free(newpos);
done:
    free(base);
    free(cnt);
    return rc;
}

int ld__plan_net_load(ld_plan_net *net, const char *text, size_t len, int phase,
                      const ld_plan_cfg *cfg, ld_err *e)
{
    memset(net, 0, sizeof *net);
    net->train = phase == 0;
    ld_err pe;
    ld__err_clear(&pe);
    int rc = ld__pt_parse(text, len, &net->root, &pe);
    if (rc != LD_OK) return ld__err(e, rc, "%s:%s", cfg->file, pe.msg);
    /* Caffe refuses a field its caffe.proto lacks: a misspelt one must not be planned away. */
    if ((rc = ld__plan_schema_check(net->root, LD_PLAN_NET_PROTO, cfg->file, e)) != LD_OK)
        return rc;
    const ld_pt_node *root = net->root;
    size_t nv2 = ld__pt_count(root, "layer"), nv1 = ld__pt_count(root, "layers");
    if (nv2 && nv1)
        return ld__err(e, LD_EFORMAT,
                       "%s: both 'layer' and legacy 'layers' fields: use one (Caffe "
                       "refuses the mix)",
                       cfg->file);
    const char *field = nv1 ? "layers" : "layer";
    net->v1 = nv1 > 0;
    /* Net inputs: input: "data" + input_shape { dim } / input_dim (legacy). */
    size_t nin = ld__pt_count(root, "input");
    if (nin) {
        ld_plan_layer *L;
        if ((rc = push_layer(net, &L, e)) != LD_OK) return rc;
        L->node = root;
        L->line = ld__pt_get(root, "input")->line;
        L->name = ld__strdup("input");
        L->type = ld__strdup("NetInput");
        if (!L->name || !L->type) return ld__err(e, LD_ENOMEM, "out of memory");
        if ((rc = strv_from(root, "input", &L->top, &L->nt, e)) != LD_OK) return rc;
    }
    for (size_t i = 0; i < root->nkids; i++) {
        const ld_pt_node *l = root->kids[i];
        if (strcmp(l->name, field) != 0) continue;
        if (l->value)
            return ld__err(e, LD_EFORMAT, "%s:%d:%d: '%s' must be a message { ... }", cfg->file,
                           l->line, l->col, field);
        if (!layer_in_phase(l, phase)) continue;
        ld_plan_layer *L;
        if ((rc = push_layer(net, &L, e)) != LD_OK) return rc;
        L->node = l;
        L->line = l->line;
        L->col = l->col;
        const char *name = ld__pt_get_str(l, "name", NULL), *type = ld__pt_get_str(l, "type", NULL);
        if (!type)
            return ld__err(e, LD_EFORMAT, "%s:%d:%d: layer '%s' has no type", cfg->file, l->line,
                           l->col, name ? name : "(unnamed)");
        if (nv1) {
            for (size_t k = 0; k < sizeof v1_types / sizeof *v1_types; k++)
                if (!strcmp(type, v1_types[k][0])) type = v1_types[k][1];
        }
        char *tmp = ld__asprintf("(line %d)", l->line);
        L->name = name ? ld__strdup(name) : tmp;
        if (name) free(tmp);
        L->type = dup_or_null(type);
        if (!L->name || !L->type) return ld__err(e, LD_ENOMEM, "out of memory");
        if ((rc = strv_from(l, "bottom", &L->bottom, &L->nb, e)) != LD_OK) return rc;
        if ((rc = strv_from(l, "top", &L->top, &L->nt, e)) != LD_OK) return rc;
    }
    if (!net->nlayers)
        return ld__err(e, LD_EFORMAT, "%s: no layer of phase %s (is it a Caffe net prototxt?)",
                       cfg->file, phase ? "TEST" : "TRAIN");
    /* Blob names are resolved by search: bound the work untrusted text can ask for. */
    size_t links = 0;
    for (size_t i = 0; i < net->nlayers; i++)
        links += (size_t)(net->layers[i].nb + net->layers[i].nt);
    if (links > LD_PLAN_MAX_LINKS)
        return ld__err(e, LD_ELIMIT,
                       "%s: %zu bottoms and tops in all: more than %d, not a net the planner "
                       "takes",
                       cfg->file, links, LD_PLAN_MAX_LINKS);
    if ((rc = layer_notes(net, cfg, e)) != LD_OK) return rc;
    /* Sources first (their errors are the most useful), then the splits. */
    for (size_t i = 0; i < net->nlayers; i++)
        if ((rc = open_source(&net->layers[i], net->v1, cfg, e)) != LD_OK) return rc;
    return insert_splits(net, e);
}

void ld__plan_net_free(ld_plan_net *net)
{
    if (!net) return;
    for (size_t i = 0; i < net->nlayers; i++) {
        ld_plan_layer *L = &net->layers[i];
        for (int k = 0; k < L->nb; k++)
            free(L->bottom[k]);
        for (int k = 0; k < L->nt; k++)
            free(L->top[k]);
        free(L->bottom);
        free(L->top);
        free(L->name);
        free(L->type);
        if (L->src) {
            free(L->src->path);
            free(L->src->first_file);
            free(L->src);
        }
    }
    free(net->layers);
    for (size_t i = 0; i < net->nshapes; i++) {
        free(net->shapes[i].layer);
        free(net->shapes[i].name);
    }
    free(net->shapes);
    for (size_t i = 0; i < net->nadvice; i++)
        free(net->advice[i]);
    free(net->advice);
    for (size_t i = 0; i < net->nnotes; i++)
        free(net->notes[i]);
    free(net->notes);
    ld__pt_free(net->root);
    memset(net, 0, sizeof *net);
}
