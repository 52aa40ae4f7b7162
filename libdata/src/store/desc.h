/*
 * One description of a dataset (issue 27): what libdata's records say about a dataset on disk
 * (the HDF5 root attributes of h5_format.h, the LMDB libdata.json sidecar of lmdb_write.c),
 * read by one reader per format (hdf5/h5_desc.c, lmdb/lmdb_desc.c) into one struct, and the
 * one format probe that ld__store_open, ld_dataset_stat, ld_describe and the resume check
 * share, so that they accept and refuse the same paths.
 *
 * The reader fills what is RECORDED; what the store sees when it opens the dataset (sample
 * count, shape, dtypes, channel order as delivered) is laid over it by ld__desc_observe(), so
 * a description of a dataset the reader opens says what the reader gives. Every string is
 * owned by the struct (ld__desc_free), NULL when not recorded; nothing is truncated.
 */
#ifndef LD_DESC_H
#define LD_DESC_H

#include "common/ld_internal.h"

struct ld_store_info;

/* ---- the format probe ------------------------------------------------------------------ */

typedef enum ld_probe_kind {
    LD_PROBE_HDF5 = 1,      /* an HDF5 file (ours, merged, or another tool's) */
    LD_PROBE_HDF5_LIST = 2, /* a --split list of HDF5 files (*.txt, *.list) */
    LD_PROBE_LMDB = 3       /* an LMDB directory, or its data.mdb (any *.mdb) named itself */
} ld_probe_kind;

typedef struct ld_probe {
    int kind;     /* ld_probe_kind */
    char *dir;    /* LMDB: the directory (the sidecar's), owned; else NULL */
    int mdb_file; /* LMDB: the path is the data file itself, not its directory */
} ld_probe;

/* What `path` holds, from its name and type only (no content is parsed, except that a
 * directory must hold data.mdb). LD_OK and *p filled (free p->dir), or an error naming the
 * path: LD_EIO (nothing there), LD_EFORMAT (a folder of images -- "convert it first" --, a
 * folder without data.mdb, not a file or folder), LD_ENOTSUP (the format was not built in),
 * LD_ENOMEM. */
int ld__format_probe(const char *path, ld_probe *p, ld_err *e);
void ld__probe_free(ld_probe *p);

/* ---- the description ------------------------------------------------------------------- */

/* A field of a sample. Today a dataset has an image field (HDF5 "data" raw / "encoded"; LMDB
 * the Datum's pixels) and a scalar label; issue 28 adds label vectors, masks and boxes as
 * further fields. */
typedef enum ld_field_role {
    LD_ROLE_IMAGE = 1,
    LD_ROLE_LABEL = 2,
    LD_ROLE_MASK = 3, /* a segmentation mask: uint8 class indices, rank 3 (1, H, W) */
    LD_ROLE_BOXES = 4 /* detection boxes: ragged, rank 2 (M, 4) float32 x1, y1, x2, y2, with
                         their class index and flags (HDF5 /boxes, /box_label, /box_flags,
                         /box_offsets) */
} ld_field_role;

#define LD_DESC_MAX_FIELDS 8
#define LD_DESC_MAX_RANK 4

typedef struct ld_desc_field {
    char *name;                     /* as stored ("data", "encoded", "label"), owned */
    int role;                       /* ld_field_role */
    int dtype;                      /* LD_DTYPE_*; 0 unknown */
    int rank;                       /* per-sample rank: image 3 (C, H, W), label 0 (scalar) */
    int64_t dims[LD_DESC_MAX_RANK]; /* per-sample dims; 0 = varies or unknown */
} ld_desc_field;

typedef struct ld_desc {
    int format;     /* LD_FORMAT_HDF5 / LD_FORMAT_LMDB */
    int kind;       /* ld_probe_kind */
    uint32_t files; /* HDF5 files read: 1, or a --split list's; LMDB 1 */

    /* schema */
    size_t n_fields;
    ld_desc_field field[LD_DESC_MAX_FIELDS];

    /* storage */
    uint64_t samples;            /* recorded (LMDB sidecar entries, HDF5 first dimension) or seen */
    int samples_known;           /* 0: nothing says (a Caffe LMDB before ld__desc_observe) */
    int encoded;                 /* 1: encoded image bytes */
    char *storage;               /* "raw" | "encoded" as recorded */
    char *encoding;              /* "jpeg" | "png" | "original"; NULL raw or not recorded */
    int dtype;                   /* LD_DTYPE_U8 / LD_DTYPE_F32 (pixels as stored) */
    int label_dtype;             /* LD_DTYPE_I32 / LD_DTYPE_F32 */
    int channels, height, width; /* one sample (encoded: decoded); 0 = varies / unknown */
    int shape_of_first;          /* the shape is only the first sample's (Caffe --encoded LMDB) */
    char *channel_order;         /* as recorded: "BGR" | "RGB" | "GRAY"; NULL when not recorded */
    int delivered_order; /* LD_CHANNELS_BGR/RGB as ld_reader gives 3 channels; 0 (observe) */
    char *layout;        /* "NCHW" (HDF5) | "CHW" (LMDB) */
    char *record;        /* LMDB: "caffe.Datum" */
    char *label_db;      /* LMDB with label vectors: the label database's name, beside it */
    char *mask_db;       /* LMDB with masks: the mask database's name, beside it */

    /* settings */
    int quality;            /* JPEG quality of re-encoded images; 0 not recorded */
    char *resize_mode_name; /* as recorded: "none" | "squash" | "crop" | "pad" | "max" */
    int resize_mode;        /* LD_RESIZE_*; 0 none or not recorded */
    int resize_w, resize_h;
    int mask_pad;       /* masks: the class index of pad mode's padding (LD_C_MASK_PAD) */
    char *decode_scale; /* "exact" when JPEGs were decoded whole before a resize; NULL (not
                           recorded): DCT-scaled where >= 2x the output (decode_scale auto) */

    /* provenance */
    int by_libdata;     /* the format attribute / sidecar key says libdata */
    int format_version; /* 0 not recorded */
    char *tool_version; /* HDF5 tool_version "1.2.0"; LMDB "tool" without "libdata " */
    char *source, *note;

    /* classes */
    int num_classes_recorded; /* the num_classes attribute / key (-1 absent) */
    size_t n_classes;
    char **class_names;   /* n_classes, owned; NULL when none recorded */
    int classes_recorded; /* class_names exists (maybe empty) */
    /* label vectors: the names of their values (a CSV list's header), NULL/0 when none */
    size_t n_label_names;
    char **label_names;
    /* detection boxes: the names of their classes (box label i is box_classes[i]) and the
     * input's own id of each (COCO category_id); NULL/0 when none */
    size_t n_box_classes;
    char **box_classes;
    int64_t *box_class_ids;

    /* shard identity (h5_format.h "Shards"); shard_count 0 = not a part */
    uint32_t shard_index, shard_count;
    uint64_t shard_first, shard_listed, listing_total;
    char *run_id;
    int shard_damaged; /* shard_count > 0 but another shard key missing or negative */
    size_t n_parts;    /* a merged file: entries of its `parts` attribute (0: not merged) */
    int merged; /* a merged dataset: written without the part-only records; read: HDF5 `parts`,
                   or shard_count, listing_total, run_id without any part-only record */

    uint64_t recorded; /* bit i: ld__desc_records[i] was read, present and in range */
} ld_desc;

/* ---- the records ----------------------------------------------------------------------- *
 * What both formats record under the same names (HDF5 root attributes, libdata.json keys),
 * as one table: each format's reader and writer walk it (hdf5/h5_desc.c, lmdb/lmdb_desc.c),
 * ld__desc_free frees its strings, the merge and the resume check compare its settings. A new
 * record is a member of ld_desc plus a row in desc.c (with a label, `info` prints it too);
 * the formats, merges, resume check and describe need no change. What only
 * one format has (HDF5 format/layout/tool_version/parts, LMDB format/record/layout/tool/
 * entries) and the class_names array are written by the format's own code. */

typedef enum ld_rec_type {
    LD_REC_STR = 1, /* char *: HDF5 vlen UTF-8 string, JSON string; NULL written as "" */
    LD_REC_INT,     /* int in [0, 2^30]: HDF5 int32, JSON number */
    LD_REC_U32,     /* uint32_t: HDF5 int32, JSON number */
    LD_REC_U64      /* uint64_t below 2^63: HDF5 int64, JSON number */
} ld_rec_type;

typedef enum ld_rec_scope {
    LD_REC_ALL = 0, /* every dataset */
    LD_REC_ENCODED, /* encoded storage only */
    LD_REC_SHARDED, /* shard parts and merged datasets (shard_count > 0) */
    LD_REC_PART,    /* shard parts only (not a merged dataset) */
    LD_REC_MASKED,  /* datasets with a mask field (LD_ROLE_MASK) */
    LD_REC_IF_SET   /* only when set (a string not NULL, a number not 0): absent means what
                       libdata did before the record existed */
} ld_rec_scope;

typedef struct ld_desc_record {
    const char *name;  /* the attribute / key */
    int type;          /* ld_rec_type */
    size_t offset;     /* of the member in ld_desc */
    int scope;         /* ld_rec_scope */
    int setting;       /* 1: how the samples were made; the parts of one merge, and a part and
                          the run that resumes it, must agree on it */
    const char *label; /* `dataconv info` prints "label: value" when recorded; NULL: printed
                          by describe.c's own lines (settings, shard, ...) */
} ld_desc_record;

extern const ld_desc_record ld__desc_records[];
extern const size_t ld__desc_n_records;

/* Whether the record `name` was read (present and in range). */
int ld__desc_has(const ld_desc *d, const char *name);
/* Whether a writer writes record r for d (its scope). */
int ld__desc_rec_applies(const ld_desc *d, const ld_desc_record *r);
/* A record's value: the string (NULL when none), or the number. */
const char *ld__desc_rec_str(const ld_desc *d, const ld_desc_record *r);
int64_t ld__desc_rec_num(const ld_desc *d, const ld_desc_record *r);
/* Store what a format read for record r: a number (kept, and marked recorded, only when in
 * the type's range), or a string (owned by d from now on; NULL = absent). */
void ld__desc_rec_set_num(ld_desc *d, size_t i, int64_t v);
void ld__desc_rec_set_str(ld_desc *d, size_t i, char *owned);
/* After a format read the records: what follows from them (encoded, resize_mode,
 * num_classes_recorded -1 when absent, shard_damaged). */
void ld__desc_records_done(ld_desc *d);

/* Mark what a writer records of d as recorded (every record in scope, the class names): a
 * description made for a writer then compares with one read back. */
void ld__desc_mark_recorded(ld_desc *d);

/* A deep copy of src into *dst (zeroed first; free with ld__desc_free). LD_OK or LD_ENOMEM. */
int ld__desc_copy(ld_desc *dst, const ld_desc *src);
/* *dst = a copy of s (NULL stays NULL), freeing the old value. LD_OK or LD_ENOMEM. */
int ld__desc_set_text(char **dst, const char *s);

/* The first setting (a `setting` record, the format version, the label field's type and
 * count, the label names, the class names) in which
 * `have` differs from `want`: its name ("class_names" for the classes), with both values as
 * text in hv[cap] and wv[cap] ("(absent)" when not recorded; for the classes "3 classes,
 * class 1 'dog'" at the first name that differs); NULL when they agree. */
const char *ld__desc_first_difference(const ld_desc *have, const ld_desc *want, char *hv, char *wv,
                                      size_t cap);

void ld__desc_free(ld_desc *d);

/* Read what is recorded about the dataset at `path` (found by ld__format_probe) into *d
 * (zeroed first; free with ld__desc_free even on failure). A dataset of another tool is
 * described too (by_libdata 0, HDF5: its data/label shapes). LD_OK, or an error naming the
 * path (the probe's, LD_EFORMAT unreadable file / damaged sidecar, LD_EIO, LD_ENOMEM). */
int ld__desc_read(const char *path, ld_desc *d, ld_err *e);

/* Lay what an open store sees over the description: samples, encoded, dtypes, shape, the
 * order ld_reader delivers by default. */
void ld__desc_observe(ld_desc *d, const struct ld_store_info *in);

/* LD_RESIZE_* of a recorded resize mode name; 0 for "none", absent or unknown. */
int ld__desc_resize_mode(const char *name);

/* Append the recorded part of a description as `dataconv info` prints it for every format:
 * classes, settings, source, note, tool version, shard identity (describe.c). LD_OK or
 * LD_ENOMEM. */
int ld__desc_print(const ld_desc *d, ld_buf *out);

/* Format readers (desc.c dispatches to them by the probe). */
int ld__h5_desc_read(const char *path, ld_desc *d, ld_err *e);
int ld__lmdb_desc_read(const char *dir, ld_desc *d, ld_err *e);

/* The first field of `role`, or NULL. */
const ld_desc_field *ld__desc_role(const ld_desc *d, int role);
/* The boxes field (LD_ROLE_BOXES), or NULL. */
#define ld__desc_boxes(d) ld__desc_role((d), LD_ROLE_BOXES)
/* The mask field (LD_ROLE_MASK), or NULL. */
#define ld__desc_mask(d) ld__desc_role((d), LD_ROLE_MASK)
/* Values per label: 0 for one scalar label per sample (or none), K for label vectors
 * (a label field of rank 1, dims[0] = K; HDF5 /label (N, K)). */
int ld__desc_label_k(const ld_desc *d);
/* Set the box classes: copies of n names and their ids (NULL ids: 0..n-1), replacing any.
 * LD_OK or LD_ENOMEM. */
int ld__desc_set_box_classes(ld_desc *d, char *const *names, const int64_t *ids, size_t n);
/* Copy n strings into a new array (*out, owned; NULL when n is 0). LD_OK or LD_ENOMEM. */
int ld__desc_copy_names(char ***out, char *const *names, size_t n);

/* Set a field (copies name). LD_OK, LD_ENOMEM, LD_EINVAL (no room). */
int ld__desc_add_field(ld_desc *d, const char *name, int role, int dtype, int rank,
                       const int64_t *dims);

#endif /* LD_DESC_H */
