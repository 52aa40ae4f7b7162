/*
 * Stores: the read side of a dataset format (HDF5, LMDB), giving the reader random access to
 * sample i with as little copying as possible.
 *
 * A store is opened once by the reader (one thread) and then read concurrently by the
 * reader's worker threads, each through its own read context (ld_store_ctx): a context holds
 * whatever per-thread state reading needs (an LMDB read transaction and cursor, a scratch
 * buffer for a decompressed HDF5 chunk, a file descriptor position...). The store itself is
 * read-only after open, so workers share it without locks; a store that wraps a library that
 * is not thread-safe (serial HDF5) serializes those calls itself.
 *
 *     ld_store *s;  ld_store_ctx *cx;  ld_rec rec;
 *     LD_TRY(ld__h5_store_open(path, &opts, &s, e));
 *     LD_TRY(s->vt->ctx_create(s, &cx, e));              // once per worker thread
 *     LD_TRY(s->vt->read(s, cx, i, dst, dst_len, &rec, e));
 *     if (rec.data != dst) memcpy(dst, rec.data, rec.len); // or decode rec.data if encoded
 *     s->vt->ctx_free(cx);  s->vt->close(s);
 *
 * Implementing a store: fill an ld_store_info at open, provide the five functions below,
 * embed `ld_store` as the FIRST member of your own struct (so `(ld_store *)` casts work), and
 * keep everything O(1) in N except, at most, small per-sample integers (labels, an index).
 */
#ifndef LD_STORE_H
#define LD_STORE_H

#include "common/ld_internal.h"

/* Element type of raw samples as stored (info.dtype). The reader converts to the requested
 * output dtype. */
typedef enum ld_store_dtype {
    LD_SDT_U8 = 0,  /* uint8 pixels (our files, Caffe Datum.data) */
    LD_SDT_F32 = 1, /* float32 pixels (other tools' HDF5 files, Datum.float_data) */
    LD_SDT_U16 = 2  /* uint16 pixels in host order (HDF5 uint16: dataconv --depth 16) */
} ld_store_dtype;

/* Channel order of what read() returns (raw) or of what the decoder will give (encoded:
 * codec output is RGB, so an encoded store says LD_SORDER_RGB). */
typedef enum ld_store_order {
    LD_SORDER_UNKNOWN = 0, /* not recorded (other tools' files); the reader swaps nothing
                              unless asked to swap explicitly */
    LD_SORDER_BGR = 1,
    LD_SORDER_RGB = 2,
    LD_SORDER_GRAY = 3
} ld_store_order;

/* Label vectors longer than this are refused at open (a damaged shape must not size buffers). */
#define LD_MAX_LABEL_K 65536

/* What a store holds; filled by the store's open function, constant afterwards. */
typedef struct ld_store_info {
    uint64_t n;          /* number of samples */
    int encoded;         /* 0: raw planar CHW pixels; 1: encoded image bytes (JPEG/PNG) */
    int dtype;           /* raw: ld_store_dtype of the pixels */
    int c, h, w;         /* raw: every sample's shape (CHW). encoded: the common decoded shape
                            when all samples share one, else the first sample's when the store
                            can tell it cheaply (see shape_from), else 0 (then read() gives
                            each one's) */
    size_t sample_bytes; /* raw: c*h*w*element size; encoded: 0 */
    int order;           /* ld_store_order */
    int label_float;     /* 1 when the stored labels are floating point (else integers) */
    /* Locality: samples [k*block, (k+1)*block) are stored together (one HDF5 chunk, one
     * LMDB page run...). Block shuffle shuffles these blocks. 1 when there is no such unit. */
    uint64_t block;
    /* Memory one read context may hold at most (scratch buffers), for the memory budget. */
    size_t ctx_bytes;
    /* Memory the open store holds (labels, index, chunk table), for the memory budget. */
    size_t store_bytes;
    /* A short description of how the store reads ("hdf5 chunked, direct pread",
     * "hdf5 deflate, via HDF5 (serialized)", "lmdb"), for logs and benchmarks. Static or
     * owned by the store. */
    const char *how;
    /* Encoded stores: the largest decoded w*h of any sample when the store knows it (HDF5
     * /shape), else 0. The reader sizes per-thread decode buffers for its memory budget from
     * it. (Added after the first version; 0 is always a valid value.) */
    uint64_t max_pixels;
    /* Encoded stores: the channel order the dataset was made for (ld_store_order: the HDF5
     * channel_order attribute, the LMDB sidecar, or BGR for a Caffe LMDB without one, since
     * Caffe decodes to BGR). The reader delivers this order by default, so that a JPEG
     * dataset reads in the same order as a raw one made with the same flags. 0 = unknown. */
    int made_order;
    /* Encoded stores whose c/h/w are not known for every sample (Caffe's convert_imageset
     * --encoded records carry no shape): c/h/w are then the FIRST sample's, taken from its
     * record or its image header, and this names where from, for messages ("the first
     * record's image header"); other samples may differ in size (the reader refuses those
     * without a crop). NULL when c/h/w hold for every sample or are 0. Static string. */
    const char *shape_from;
    /* Label vectors: K values per sample (HDF5 /label (N, K), an LMDB pair's float_data
     * Datums), read with vt->label_vec; 0 for one label per sample (ld_rec.label).
     * (Appended; 0 is the first version's meaning.) */
    uint32_t label_k;
    /* Segmentation masks: every sample has a mask_h x mask_w mask of class indices (HDF5
     * /mask or /label (N, 1, H, W), an LMDB mask database), read with vt->mask; 0 0: none.
     * (Appended.) */
    int mask_h, mask_w;
    int mask_is_label; /* the masks are the dataset's label (no other labels: all 0) */
    int boxes;         /* detection boxes: read with vt->boxes */
    /* Bytes per mask index: 1 (uint8) or 2 (uint16 in host order; HDF5 uint16 masks, an LMDB
     * mask database of float_data Datums). (Appended; masks of the first version are 1.) */
    int mask_elem;
    /* Boxes: the most any one sample has (what a batch slot may have to hold). (Appended.) */
    uint32_t box_max;
} ld_store_info;

/* One sample as read. Borrowed: `data` stays valid until the next read() or ctx_free() on the
 * same context (it may point into the caller's dst, into the context's scratch, or into a
 * mapping / LMDB page). */
typedef struct ld_rec {
    const uint8_t *data; /* raw: sample_bytes bytes, CHW, info.dtype elements (native endian);
                            encoded: the image file bytes */
    size_t len;          /* bytes at data */
    int c, h, w;         /* this sample's shape: raw = info's; encoded = decoded shape when the
                            store knows it (HDF5 /shape, Datum channels/height/width), else 0 */
    double label;        /* the label as stored, converted to double (exact for int32/float32) */
} ld_rec;

typedef struct ld_store ld_store;
typedef struct ld_store_ctx ld_store_ctx; /* defined by each store */

/* Sample i's name (len bytes at name, NUL-terminated), for vt->names; < 0 stops the walk. */
typedef int (*ld_store_name_fn)(void *user, uint64_t i, const char *name, size_t len);

typedef struct ld_store_vt {
    /* Create a per-thread read context. LD_OK, LD_ENOMEM, LD_EIO. Called on the reader's
     * thread before workers start; each context is then used by exactly one worker. */
    int (*ctx_create)(ld_store *s, ld_store_ctx **out, ld_err *e);
    /* Free a context (NULL ok). */
    void (*ctx_free)(ld_store *s, ld_store_ctx *cx);
    /* Read sample i (0 <= i < info.n) through context cx. Thread-safe across different
     * contexts of the same store.
     *   dst, dst_len: optional destination (may be NULL/0). For a raw store, when dst_len ==
     *   info.sample_bytes the store MAY write the sample there directly (pread into the batch
     *   buffer: no extra copy) and then sets rec->data = dst. Otherwise rec->data points to
     *   memory the store owns. Callers compare rec->data with dst to know whether to copy.
     * Errors: LD_EFORMAT (corrupt or truncated: a chunk beyond the end of the file, a record
     * that does not parse; the message names the file and the sample), LD_EIO, LD_ENOMEM,
     * LD_EINVAL (i out of range). Never crashes on a corrupt file. */
    int (*read)(ld_store *s, ld_store_ctx *cx, uint64_t i, uint8_t *dst, size_t dst_len,
                ld_rec *rec, ld_err *e);
    /* Optional (may be NULL): the reader is about to read these samples soon through cx, in
     * this order (one batch). A store may issue readahead (posix_fadvise/madvise WILLNEED) or
     * slide a mapping window. Advisory: errors are ignored. */
    void (*will_read)(ld_store *s, ld_store_ctx *cx, const uint64_t *idx, size_t n);
    /* Close the store and free it (NULL ok). All contexts are freed first. */
    void (*close)(ld_store *s);
    /* Optional (may be NULL; added after the first version, so positional initializers of
     * five members stay valid). Raw stores only: read `count` consecutive samples
     * [first, first + count) into dst (count * sample_bytes bytes) and their labels into
     * labels[0 .. count). Lets a store read a run of neighbours with one large read (a whole
     * HDF5 chunk per pread) when the order is sequential. Same errors as read(). */
    int (*read_run)(ld_store *s, ld_store_ctx *cx, uint64_t first, size_t count, uint8_t *dst,
                    double *labels, ld_err *e);
    /* Optional (may be NULL; appended as read_run). Raw stores only: as read_run, but sample
     * first + k goes to dst[k] (sample_bytes each, anywhere). Lets a store read consecutive
     * samples that a batch holds in another order (block shuffle permutes a chunk's samples)
     * with one vectored read into their own batch slots. Same errors as read(). */
    int (*read_gather)(ld_store *s, ld_store_ctx *cx, uint64_t first, size_t count,
                       uint8_t *const *dst, double *labels, ld_err *e);
    /* Label vectors (info.label_k > 0; NULL otherwise): sample i's K values into out[0..K).
     * read(), read_run() and read_gather() then give its first value as the label. Same
     * errors as read(). */
    int (*label_vec)(ld_store *s, ld_store_ctx *cx, uint64_t i, double *out, ld_err *e);
    /* Masks (info.mask_h > 0; NULL otherwise): sample i's mask_h x mask_w indices of
     * info.mask_elem bytes each (uint8, or uint16 in host order) into out.
     * Same errors as read(). */
    int (*mask)(ld_store *s, ld_store_ctx *cx, uint64_t i, uint8_t *out, ld_err *e);
    /* Boxes (info.boxes; NULL otherwise): sample i's boxes into out (grown; out->len = *m x
     * sizeof(ld_box)), *m of them. Same errors as read(). */
    int (*boxes)(ld_store *s, ld_store_ctx *cx, uint64_t i, ld_buf *out, uint32_t *m, ld_err *e);
    /* Optional (may be NULL: no names; appended): every sample's name, in order, to fn: the
     * relative path a libdata dataset records (HDF5 /filename; an LMDB key, "%08d_" dropped
     * when the key starts so), valid during the call. Reads as it goes (HDF5: 4096 names at a
     * time; LMDB: the keys of the snapshot the store holds), holds nothing. Called on one
     * thread, with no read of the store in flight. LD_OK; LD_STORE_NO_NAMES when the dataset
     * names no sample (another tool's HDF5 file: fn not called; a --split list whose files
     * name only some: the named ones, in order, and LD_OK); fn's negative return stops the
     * walk and is returned; LD_EFORMAT (unreadable names), LD_ENOMEM. fn runs outside the
     * HDF5 lock: it may read the store (vt->boxes). */
    int (*names)(ld_store *s, ld_store_name_fn fn, void *user, ld_err *e);
} ld_store_vt;

/* What vt->names returns when a dataset names no sample (not an error). */
#define LD_STORE_NO_NAMES 1

/* Every store struct starts with this. */
struct ld_store {
    const ld_store_vt *vt;
    ld_store_info info;
};

/* Options for opening a store; zero-initialized means defaults. Strings are borrowed for the
 * duration of the open call. */
typedef struct ld_store_opts {
    const char *data_name;  /* HDF5 pixel dataset name; NULL = "data" (or "encoded") */
    const char *label_name; /* HDF5 label dataset name; NULL = "label" */
    /* 1: the reader will read in a random order (shuffle). A store may choose its access
     * method per pattern (e.g. pread instead of mmap). */
    int random_access;
} ld_store_opts;

/* Open an HDF5 file (ours or any tool's; see h5_store.c for the layouts read).
 * LD_OK, LD_EIO (cannot open), LD_EFORMAT (not HDF5, missing/odd datasets, chunk table
 * pointing outside the file), LD_ENOTSUP (built without HDF5), LD_ENOMEM. On failure *out
 * is NULL and e says why, naming the path. */
int ld__h5_store_open(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e);

/* Open an LMDB directory (or data.mdb file) of Caffe Datum records, ours or convert_imageset's
 * (implemented in lmdb_store.c; documented in lmdb_store.h). Same return codes. */
int ld__lmdb_store_open(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e);

/* Open any dataset: an LMDB directory or data.mdb, a `--split` list file (.txt: one .h5 path
 * per line, relative paths resolved against the current directory first, then against the
 * list's directory; the files must share shape/dtype and are one dataset in list order), or
 * an HDF5 file (store_open.c). */
int ld__store_open(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e);

/* The serial HDF5 library (Debian's libhdf5-dev) is not thread-safe: no two threads of a
 * process may be inside HDF5 at once, even on different files. Every HDF5 call of libdata
 * (reader stores and writers alike) is made between ld__h5_lock() and ld__h5_unlock(),
 * through ld__h5_quiet_begin/end (h5_util.h). The lock is one static mutex in h5_util.c: the
 * only process-wide state of the library, and it protects a dependency that is itself
 * process-wide state, so it cannot be per handle. Calls must not nest (the mutex is not
 * recursive). HDF5's automatic error printing is turned off inside each locked section
 * (ld__h5_quiet_begin), never globally. No-ops when built without HDF5. */
void ld__h5_lock(void);
void ld__h5_unlock(void);

#endif /* LD_STORE_H */
