/*
 * libdata plan: will a Caffe net fit in memory? Parses a Caffe text-format net (and solver),
 * infers every blob's shape from its data layers, and estimates the host memory (peak RSS)
 * that BVLC Caffe 1.0 (CPU) allocates for it, component by component, following Caffe's own
 * allocation rules; then the largest batch that fits a memory figure. `dataconv plan` prints it.
 */
#ifndef LIBDATA_PLAN_H
#define LIBDATA_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "libdata/libdata.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The net phase to estimate. */
typedef enum ld_plan_phase {
    LD_PLAN_TRAIN = 0, /**< `caffe train`: the TRAIN net with backward and solver state, plus
                            the TEST net when the solver has test_iter/test_interval */
    LD_PLAN_TEST = 1,  /**< the TEST net alone, forward only (`caffe test`, deployment) */
    LD_PLAN_AUTO = 2   /**< TRAIN when a solver is given or the net has a loss layer in its
                            TRAIN phase; TEST otherwise: a net without a loss (a deploy net) is
                            not trained. ld_plan_info.phase and .phase_reason say which was
                            planned and why */
} ld_plan_phase;

/** One component of the estimate. */
typedef struct ld_plan_item {
    const char *name;    /**< what it is, e.g. "train: top data (activations)", "HDF5Data
                              'data': current file as float32" */
    uint64_t bytes;      /**< bytes at the plan's batch size */
    uint64_t per_sample; /**< how much of `bytes` grows with each sample of the batch */
} ld_plan_item;

/** One blob and its shape, as Caffe's log prints it ("Top shape: 64 3 227 227"). */
typedef struct ld_plan_blob {
    const char *phase;   /**< "TRAIN" or "TEST" */
    const char *layer;   /**< the layer that produces it */
    const char *name;    /**< the top's name */
    int ndims;           /**< dimensions */
    const int64_t *dims; /**< ndims sizes */
} ld_plan_blob;

/**
 * The estimate, filled by ld_plan(). ABI: one block allocated by the library (release it with
 * ld_free()); later 1.x versions only add fields at the end.
 */
typedef struct ld_plan_info {
    int batch;             /**< the TRAIN (or, LD_PLAN_TEST, TEST) batch size used */
    uint64_t total;        /**< predicted peak host memory (bytes) */
    uint64_t ram;          /**< the memory figure the largest batch is fitted to */
    int64_t largest_batch; /**< largest batch whose total fits `usable`; 0 when not
                                even batch 1 fits */
    size_t nitems;
    const ld_plan_item *items; /**< the components; their bytes add up to `total` */
    size_t nblobs;
    const ld_plan_blob *blobs; /**< every top blob of the net(s), in layer order */
    size_t nadvice;
    const char *const *advice; /**< sentences: what to change (may be 0) */
    uint64_t usable;           /**< `ram` less LD_PLAN_HEADROOM_PCT percent for the estimate's
                                    error: what largest_batch is fitted to, and what a batch
                                    "fits" in (total <= usable) */
    /* Added after `usable`: a program that may run with an older libdata.so checks
     * ld_version_number() before reading them. */
    int phase;                /**< the phase planned: LD_PLAN_TRAIN or LD_PLAN_TEST (what
                                   LD_PLAN_AUTO became) */
    const char *phase_reason; /**< why that phase: "as asked", "a solver is given", "the net has
                                   a loss layer", "the net has no loss layer" */
    size_t nnotes;
    const char *const *notes; /**< sentences: what the estimate does not fully cover (layer
                                   types whose parameters were not all interpreted, layers
                                   planned from a given shape); may be 0 */
    unsigned advice_terms;    /**< LD_PLAN_TERM_* bits: the parameter names the advice uses,
                                   for a program that translates them into its own */
} ld_plan_info;

/** ld_plan_info.advice_terms: conversion parameters the advice names (convert.h). */
#define LD_PLAN_TERM_SPLIT_BYTES 1u /**< split_bytes */
#define LD_PLAN_TERM_RESIZE 2u      /**< resize_w / resize_h */

/** Percent of `ram` kept free for the estimate's error (measured: -2.1 % to +4.7 % of Caffe's
 *  peak RSS, docs/caffe.md). */
#define LD_PLAN_HEADROOM_PCT 5

/**
 * Estimate Caffe's host memory for a net.
 *
 * @param net     a train_val (or deploy) prototxt, Caffe text format (`layer` or legacy
 *                `layers`). Data sources (LMDB, HDF5 lists, libdata datasets) named by its
 *                data layers are opened to learn the sample shape; relative paths are taken
 *                from the current directory, as caffe does.
 * @param solver  a solver prototxt or NULL: its type (SGD, Nesterov, Adam...), test_iter /
 *                test_interval (test net) and max_iter; `net:` in it is used when `net` is NULL.
 * @param phase   an ld_plan_phase; LD_PLAN_AUTO decides from the solver and the net's loss.
 * @param batch   batch size of the planned phase's data layers; 0 keeps the net's own. The
 *                other phase's batch keeps its own.
 * @param ram     bytes the run may use; 0: the machine's MemAvailable. largest_batch is fitted
 *                to it less LD_PLAN_HEADROOM_PCT percent (`usable`).
 * @param shapes  NULL, or input shapes that override the data layers': "NAME=C,H,W" or
 *                "NAME=N,C,H,W" items separated by ';' (a top name; N replaced by the batch).
 *                A layer without bottoms that the planner cannot read a shape from (Python,
 *                MemoryData, WindowData) is planned as an input of the shapes given for its
 *                tops (its own memory is then not counted: a note says so).
 * @param info    on success: the estimate (release with ld_free()); NULL on failure.
 * @param errmsg  on failure, a message naming the file, the line:column and the reason
 *                (release with ld_free()); NULL on success. May be NULL.
 * @return LD_OK, LD_EIO (a file cannot be read), LD_EFORMAT (malformed text, a field
 *         caffe.proto does not have for its message, a layer type it does not know, a
 *         missing bottom, inconsistent shapes), LD_ELIMIT (sizes that overflow, nesting too
 *         deep), LD_EINVAL (a bad argument; also a data top whose shape must be given in
 *         `shapes` because neither the net nor its source gives it: ImageData without
 *         new_height/new_width, a source of images of different sizes, an Input without a
 *         shape, a Python, MemoryData or WindowData layer), LD_ENOMEM.
 * Thread-safe: no shared state besides the HDF5 lock (data sources are opened).
 */
LD_API int ld_plan(const char *net, const char *solver, int phase, int batch, uint64_t ram,
                   const char *shapes, ld_plan_info **info, char **errmsg);

#ifdef __cplusplus
}
#endif
#endif /* LIBDATA_PLAN_H */
