/*
 * The net model of ld_plan(): Caffe layers of one phase, blobs with shapes (Caffe 1.0's
 * shape rules), and the memory Caffe 1.0 allocates for them (its allocation rules).
 */
#ifndef LD_PLAN_NET_H
#define LD_PLAN_NET_H

#include <stdint.h>

#include "common/ld_internal.h"
#include "plan/prototxt.h"

#define LD_PLAN_MAXD 8          /* blob axes (Caffe's kMaxBlobAxes is 32; nets use <= 5) */
#define LD_PLAN_MAX_LAYERS 5000 /* ResNet-152 has ~500 */
#define LD_PLAN_MAX_LINKS 20000 /* bottoms + tops of all layers */

/* A data layer's source, learned once (opening it) and reused for every batch tried. */
typedef struct ld_plan_src {
    int known;                 /* shape known */
    int64_t c, h, w;           /* one sample after crop */
    int64_t label_k;           /* label vectors: K values per sample ([N, K]); 0: [N] labels */
    int64_t mask_h, mask_w;    /* segmentation masks: 1 x H x W per sample; 0 0: none */
    int mask_is_label;         /* the masks are the label top ([N, 1, H, W]) */
    uint64_t samples;          /* in the source (HDF5Data: in the first file) */
    uint64_t file_bytes;       /* LMDB data.mdb bytes; HDF5Data: first file's bytes */
    uint64_t max_file_samples; /* HDF5Data: samples of the largest file of the list */
    uint64_t nfiles;
    int64_t reader_mem1, reader_mem2; /* LibData: libdata reader memory at batch 1 and 2 */
    char *path;                       /* the source as written */
    char *first_file;                 /* HDF5Data: the first listed file */
} ld_plan_src;

typedef struct ld_plan_layer {
    const ld_pt_node *node;
    char *name, *type;
    int line, col;
    char **bottom, **top;
    int nb, nt;
    int is_split;     /* inserted by us (Caffe's InsertSplits) */
    int split_of;     /* for a split: the producer layer's index */
    ld_plan_src *src; /* data layers */
} ld_plan_layer;

/* Inputs the caller gives: solver facts and overrides. */
typedef struct ld_plan_cfg {
    int train;            /* this net is the TRAIN net (backward, dropout masks) */
    int batch;            /* 0: the net's own */
    int64_t iters;        /* forward passes before the peak (LMDB pages touched); 0: all */
    const char *shapes;   /* overrides, "NAME=C,H,W;..." */
    const char *file;     /* the prototxt path, for messages */
    const char *base_dir; /* "" : sources relative to the current directory */
} ld_plan_cfg;

/* The memory of one net, by component (bytes). */
enum {
    LD_PM_TOP_DATA,
    LD_PM_TOP_DIFF,
    LD_PM_PARAM,
    LD_PM_PARAM_DIFF,
    LD_PM_LAYER_BUF,
    LD_PM_COL,
    LD_PM_PREFETCH,
    LD_PM_SOURCE,
    LD_PM_N
};

/* A layer holding many parameters (what to shrink when they do not fit). */
typedef struct ld_plan_big {
    size_t layer;   /* index in net->layers */
    uint64_t count; /* its parameter floats; 0: unused entry */
    int bottom_nd;  /* InnerProduct: its bottom's shape, whose size makes the weights */
    int64_t bottom_d[LD_PLAN_MAXD];
} ld_plan_big;

#define LD_PLAN_NBIG 3

typedef struct ld_plan_mem {
    uint64_t c[LD_PM_N];
    uint64_t param_count;          /* learnable parameter floats (solver history) */
    int batch;                     /* the batch of the first data layer */
    ld_plan_big big[LD_PLAN_NBIG]; /* the layers with the most parameters, largest first */
} ld_plan_mem;

typedef struct ld_plan_shape {
    char *layer, *name;
    int nd;
    int64_t d[LD_PLAN_MAXD];
} ld_plan_shape;

/* A parsed net of one phase. */
typedef struct ld_plan_net {
    ld_plan_layer *layers;
    size_t nlayers, cap;
    int train;
    ld_pt_node *root;      /* owned */
    ld_plan_shape *shapes; /* after ld__plan_net_estimate: every top */
    size_t nshapes;
    char **advice; /* facts for advice, "HDF5DATA\t..." lines */
    size_t nadvice;
    char **notes; /* what the estimate does not fully cover (sentences, no duplicates) */
    size_t nnotes;
    int has_loss; /* a layer of this phase is a loss (a *Loss type or a loss_weight) */
    int v1;       /* legacy `layers` (V1LayerParameter) */
} ld_plan_net;

/* Parse the text of `file` and collect the layers of `phase` (0 TRAIN, 1 TEST), with
 * Caffe's implicit Split layers. Sources are opened to learn shapes. */
int ld__plan_net_load(ld_plan_net *net, const char *text, size_t len, int phase,
                      const ld_plan_cfg *cfg, ld_err *e);
/* Infer shapes and memory at cfg->batch (0: the net's own). Records shapes in net->shapes. */
int ld__plan_net_estimate(ld_plan_net *net, const ld_plan_cfg *cfg, ld_plan_mem *m, ld_err *e);
void ld__plan_net_free(ld_plan_net *net);
/* Bytes a libdata reader (the LibData layer's) allocates for `path` at `batch` (float32,
 * NCHW, crop, prefetch; 0: the reader's default). */
int ld__plan_reader_memory(const char *path, int batch, int64_t crop, int64_t prefetch,
                           int64_t *mem, ld_err *e);
/* --shape overrides "NAME=C,H,W;NAME2=N,C,H,W": 1 when `name` is given (d, nd filled). */
int ld__plan_shape_override(const char *shapes, const char *name, int64_t *d, int *nd);
/* Data layers whose tops' shapes the planner reads (net inputs, sources, parameters). */
int ld__plan_is_data_type(const char *type);
/* Layer types the planner computes shapes and memory for from their bottoms. */
int ld__plan_is_known_type(const char *type);
/* A loss layer type (Caffe's *Loss layers). */
int ld__plan_is_loss_type(const char *type);

#endif /* LD_PLAN_NET_H */
