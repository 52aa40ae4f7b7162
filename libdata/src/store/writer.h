/*
 * Dataset writers (HDF5, LMDB) behind one small interface. The converter hands samples in
 * output order to exactly one writer, which owns its files. A writer writes to temporary
 * names and publishes (renames) only in finish(); free() without finish() removes every
 * temporary it made. Writers are used by one thread.
 */
#ifndef LD_WRITER_H
#define LD_WRITER_H

#include "common/ld_internal.h"
#include "store/desc.h"

/* Told about each temporary of a killed run that a writer removes (ld__sweep_stale_temps):
 * its path, the dead pid, its size in bytes (for an LMDB directory, its data.mdb). */
typedef void (*ld_stale_fn)(void *user, const char *path, long pid, uint64_t bytes);

/* How a writer writes, and what it records. Strings are borrowed for the duration of
 * create(); a writer copies what it keeps. */
typedef struct ld_writer_opts {
    /* What the dataset records (desc.h), copied at create: storage (d->encoded; encoding
     * "jpeg" | "png" | "original"), d->channels (1 or 3) and channel order, classes, settings,
     * source, note, tool_version, and with shard_count > 0 a part's identity (merged: a merged
     * dataset's). The writer records the shape (channels, height, width) and the number of
     * samples it wrote over those of the description. */
    const ld_desc *desc;
    const char *path;     /* final output path (file, LMDB directory, or split stem) */
    uint64_t expected_n;  /* number of inputs (an upper bound on samples); a hint */
    uint64_t split_bytes; /* HDF5 only: 0 = one file */
    int split_relative;   /* HDF5 split list: 1 = names relative to the list's folder,
                             0 = absolute paths (LD_C_SPLIT_PATHS) */
    int deflate;          /* HDF5 only: 0..9 */
    size_t max_rel_len;   /* HDF5: longest ld_sample.rel; > 0 stores /filename as fixed-length
                             strings of this size (no global heap, so the writer's memory does
                             not grow with N); 0 = variable-length strings */
    ld_stale_fn on_stale; /* before making a temporary beside an output name, the writer
                             removes those killed runs left there and reports each; may be
                             NULL (they are still removed) */
    void *on_stale_user;
} ld_writer_opts;

/* One sample, in output order. */
typedef struct ld_sample {
    const uint8_t *data; /* raw: c*h*w bytes, planar CHW in the dataset's channel order;
                            encoded: the image file bytes */
    size_t len;
    int c, h, w;           /* the image's shape (also for encoded samples) */
    int32_t label;         /* one label per sample (the description's label field is a scalar) */
    const char *rel;       /* source path relative to the input root */
    const void *label_vec; /* label vectors: the K values (ld__desc_label_k) in the label
                              field's dtype (float32 or int32); NULL for a scalar label */
    const uint8_t *mask;   /* the description has a mask field: mask_h x mask_w class indices
                              of its dtype (uint8, or uint16 in host order)
                              (the image's stored size); else NULL */
    int mask_h, mask_w;
    const ld_box *boxes; /* the description has a boxes field: n_boxes boxes in the stored
                            image's pixels (maybe none) */
    uint32_t n_boxes;
} ld_sample;

typedef struct ld_writer ld_writer;

typedef struct ld_writer_vt {
    /* Append one sample. Raw HDF5: the first sample fixes the shape; a different shape
     * later is LD_EINVAL with a message that names the file and says to use --resize. */
    int (*add)(ld_writer *w, const ld_sample *s, ld_err *e);
    /* Flush, close, rename temporaries to their final names. After finish only free. */
    int (*finish)(ld_writer *w, ld_err *e);
    /* Release; removes temporaries if finish() did not succeed. */
    void (*free)(ld_writer *w);
} ld_writer_vt;

struct ld_writer {
    const ld_writer_vt *vt;
    uint64_t files_out; /* dataset files published (HDF5 split) */
};

/* Constructors. LD_OK, LD_EIO (cannot create; the message names the path), LD_EINVAL,
 * LD_ENOTSUP (format not built), LD_ENOMEM. */
int ld__h5_writer_create(const ld_writer_opts *o, ld_writer **out, ld_err *e);
int ld__lmdb_writer_create(const ld_writer_opts *o, ld_writer **out, ld_err *e);

/* The stem of an HDF5 output path (without .h5, .hdf5 or .txt): --split parts are
 * "<stem>-00000.h5"..., their list "<stem>.txt". malloc'd, or NULL. */
char *ld__h5_split_stem(const char *path);

/* Describe a dataset for ld_describe(): append human-readable text to `out`.
 * LD_OK, LD_EIO, LD_EFORMAT (not this format / corrupt), LD_ENOMEM. */
int ld__h5_describe(const char *path, ld_buf *out, ld_err *e);
int ld__lmdb_describe(const char *path, ld_buf *out, ld_err *e);
/* The same on the store already open at `path` (ld_describe opens it once). */
struct ld_store;
int ld__lmdb_describe_store(const char *path, struct ld_store *s, ld_buf *out, ld_err *e);
/* Append a name (file, path, class) to a description: valid UTF-8 as is, a backslash as
 * "\\", newline/tab/CR as "\n" "\t" "\r", other control characters and bytes that are not
 * UTF-8 as "\xNN". A name can then not break the one-item-per-line text, the text is valid
 * UTF-8, and the bytes can be recovered (the Python bindings undo it for class names).
 * LD_OK or LD_ENOMEM. (describe.c) */
int ld__describe_escape(ld_buf *out, const char *s);

/* Remove what killed runs left beside `final_path`: "<final>.tmp-<pid>-<hex>" files and
 * LMDB directories (see ld__temp_name) whose process is gone and which nobody holds locked.
 * Calls `removed` (may be NULL) for each. Best effort, never fails: returns how many were
 * removed. */
int ld__sweep_stale_temps(const char *final_path, ld_stale_fn removed, void *user);

/* LD_EIO, naming the process, when another writer is writing final_path now: a temporary of
 * it other than own_tmp (our own, or NULL) that its writer holds locked (flock of an HDF5
 * file, LMDB's lock on lock.mdb), as the sweep above tells a live one. Call it once the own
 * temporary exists and is locked, so that of two writers that start together neither misses
 * the other (both are then refused; nothing is lost). */
int ld__refuse_second_writer(const char *final_path, const char *own_tmp, ld_err *e);

/* LD_EIO with a message naming the writer's process when `path` is a temporary (ld__temp_name)
 * that its writer holds locked now, else LD_OK: for readers that cannot open it. */
int ld__temp_being_written(const char *path, ld_err *e);

/* Remove an LMDB directory made by us or Caffe: only the files such a directory holds, then
 * the directory. Returns 0, or -1 (errno set) when something else was in it. */
int ld__remove_db_dir(const char *dir);

#endif /* LD_WRITER_H */
