/*
 * libdata reader: stream fixed-size mini-batches from a dataset (an HDF5 file, a `--split`
 * list of HDF5 files, or an LMDB directory) with memory bounded by the batch, never by the
 * dataset.
 *
 * Sequence (LMDB's): create -> set parameters -> open -> next ... -> free.
 *
 *     ld_reader *r = ld_reader_create();
 *     ld_reader_set(r, LD_R_BATCH_SIZE, 256);
 *     ld_reader_set(r, LD_R_ORDER, LD_ORDER_SHUFFLE);
 *     ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_F32);
 *     ld_reader_set_double(r, LD_R_SCALE, 1.0 / 256);
 *     if (ld_reader_open(r, "train.h5") < 0) { fprintf(stderr, "%s\n", ld_reader_errmsg(r)); ... }
 *     for (int epoch = 0; epoch < 10; epoch++) {
 *         const ld_batch *b;
 *         int rc;
 *         while ((rc = ld_reader_next(r, &b)) == LD_OK)
 *             train(b->data, b->labels, b->n);      // valid until the next ld_reader_next()
 *         if (rc < 0) { fprintf(stderr, "%s\n", ld_reader_errmsg(r)); break; }
 *     }                                             // rc == LD_END: the next call starts epoch+1
 *     ld_reader_free(r);
 *
 * How it works. The order of an epoch is a keyed bijection evaluated per position, so no index
 * list is kept and nothing grows with the dataset. Worker threads gather samples straight from the
 * file (HDF5 chunks located once at open, then plain pread() into the batch buffer: no HDF5 call
 * and no extra copy on the hot path), decode encoded samples, apply the transforms and write the
 * batch in the requested dtype/layout. Batches live in a ring of preallocated buffers (prefetch +
 * 1 of them, allocated and pre-faulted once at open, reused forever), so memory is `(prefetch + 1)
 * x batch bytes` plus per-thread scratch. HDF5 files are not memory-mapped (measured: pread into
 * the reused batch buffer is as fast or faster than copying from a sliding mapping, see
 * h5_store.c), so the reader works under a small address-space limit (ulimit -v) whatever the
 * dataset size, and a file truncated while being read gives LD_EFORMAT, not SIGBUS. LMDB databases
 * are mapped whole by LMDB itself: there the address space must hold the database (a limit on
 * 32-bit machines), but the reader walks LMDB's tree only once, at open, into an index of the
 * records' offsets (12 bytes per record), and then reads records with pread(): resident memory
 * stays bounded, and a database truncated while being read gives LD_EFORMAT too.
 *
 * Results are reproducible: the same seed, epoch, rank and world give the same order and the
 * same random crops/mirrors whatever the number of threads (each sample's randomness is
 * derived from (seed, epoch, sample index), not from a shared generator).
 *
 * Threads: one thread uses a reader at a time. The reader owns its worker threads; they never
 * call user code. Readers and conversions are independent of each other, with one documented
 * exception: the serial HDF5 library is not thread-safe, so every HDF5 call the library makes
 * (readers, conversions, ld_describe alike) goes through one process-wide lock, the library's
 * only global state. Several readers and conversions in one process are therefore safe. The
 * hot path of raw unfiltered or contiguous files makes no HDF5 call; compressed files
 * (deflate) are read through HDF5 and then serialize with other HDF5 users in the process.
 * Another HDF5 user in the same process that does not take this lock (h5py, the application's
 * own HDF5 calls) must not run at the same time as a libdata HDF5 call.
 */
#ifndef LIBDATA_READER_H
#define LIBDATA_READER_H

#include "libdata.h"
#include "convert.h" /* (1.0 programs may use the converter through this header) */
#include "dataset.h" /* ld_dataset_info, ld_dataset_stat */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ld_reader ld_reader;

/** Sample order within an epoch (LD_R_ORDER). Values are fixed forever. */
typedef enum ld_order {
    LD_ORDER_SEQUENTIAL = 0x100,   /**< 0, 1, 2, ... (each rank a contiguous range) */
    LD_ORDER_SHUFFLE = 0x101,      /**< a full random permutation, new each epoch */
    LD_ORDER_BLOCK_SHUFFLE = 0x102 /**< storage blocks (HDF5 chunks) in random order, then samples
                                    shuffled within windows of LD_R_WINDOW blocks: random
                                    enough for SGD, and reads stay local on disk */
} ld_order;

/** Resampling filters of the random resized crop (LD_R_RRC_FILTER). Values are fixed forever. */
typedef enum ld_rrc_filter {
    LD_RRC_FILTER_BILINEAR = 0x800, /**< Pillow's antialiased BILINEAR (triangle, support
                                         stretched by the shrink factor): what torchvision's
                                         RandomResizedCrop does to PIL images (default) */
    LD_RRC_FILTER_LANCZOS3 = 0x801  /**< antialiased Lanczos-3, the conversion's filter: sharper,
                                         slower */
} ld_rrc_filter;

/** Batch layouts (LD_R_LAYOUT). Values are fixed forever. */
typedef enum ld_layout {
    LD_LAYOUT_NCHW = 0x300, /**< planar: Caffe, PyTorch */
    LD_LAYOUT_NHWC = 0x301  /**< interleaved: TensorFlow, image libraries */
} ld_layout;

/**
 * Reader parameters, set before ld_reader_open(). Sticky. Values are fixed forever.
 * Integer, boolean and enum parameters (1..26) are set with ld_reader_set(); LD_R_SCALE with
 * ld_reader_set_double(), LD_R_MEAN_VALUES, LD_R_RRC_SCALE and LD_R_RRC_RATIO with
 * ld_reader_set_floats(), the names and paths
 * with ld_reader_set_str(); a setter of the wrong type is LD_EINVAL. ld_reader_params()
 * describes each one (type, unit, default, bounds, choices).
 */
typedef enum ld_reader_param {
    LD_R_BATCH_SIZE = 1,     /**< samples per batch; default 64 */
    LD_R_DROP_LAST = 2,      /**< 1 = drop the short final batch of an epoch; 0 = deliver it
                                  (default) */
    LD_R_ORDER = 3,          /**< ld_order; default LD_ORDER_SEQUENTIAL */
    LD_R_SEED = 4,           /**< seed for the order and the random transforms; default 0 */
    LD_R_RANK = 5,           /**< this process's rank, 0 <= rank < world; default 0 */
    LD_R_WORLD = 6,          /**< number of ranks; default 1. Each epoch, the N samples' permutation
                                  (identical on every rank) is cut into `world` contiguous shares of
                                  floor(N / world) samples; the N mod world left over are skipped
                                  that epoch (different ones each epoch when shuffling) */
    LD_R_THREADS = 7,        /**< worker threads; 0 = online cores (default) */
    LD_R_PREFETCH = 8,       /**< batches prepared ahead of the one the caller holds; 0 = auto
                                  (2, or what LD_R_MEMORY_BUDGET allows, at most 4) */
    LD_R_MEMORY_BUDGET = 9,  /**< bytes the reader may use (batch ring, per-thread scratch,
                                 labels); 0 = no limit (default). Prefetch is reduced to fit; when
                                 not even one batch fits, open fails with LD_ELIMIT and a message
                                 naming the largest batch size that fits. Encoded images whose
                                 sizes the dataset does not record (convert_imageset LMDBs) are
                                 budgeted at twice the crop per thread; larger images grow the
                                 decode buffers past the budget */
    LD_R_DTYPE = 10,         /**< ld_dtype of the pixels: LD_DTYPE_U8 (default), LD_DTYPE_F32, or
                                  LD_DTYPE_U16 (the stored values as they are: a 16-bit dataset,
                                  dataconv --depth 16, needs uint16 or float32 for values
                                  above 255) */
    LD_R_LAYOUT = 11,        /**< ld_layout; default LD_LAYOUT_NCHW */
    LD_R_CROP_W = 12,        /**< crop width; 0 = no crop (default). Both or neither */
    LD_R_CROP_H = 13,        /**< crop height; 0 = no crop (default) */
    LD_R_RANDOM_CROP = 14,   /**< 1 = random crop position per sample; 0 = center crop (default) */
    LD_R_MIRROR = 15,        /**< 1 = mirror each sample left-right with probability 1/2;
                                  default 0 */
    LD_R_CHANNEL_ORDER = 16, /**< ld_channel_order: LD_CHANNELS_AS_STORED (default; encoded images
                                come out in the order the dataset was made for: BGR unless converted
                                with --rgb, and BGR for Caffe LMDBs, as Caffe decodes them);
                                LD_CHANNELS_BGR or LD_CHANNELS_RGB: swap the
                                channels when the dataset records the other order (3 channels only;
                                a dataset with no recorded order is LD_EINVAL, use LD_R_SWAP) */
    LD_R_SWAP = 17,          /**< 1 = reverse the channel order unconditionally (BGR <-> RGB) */
    LD_R_LABEL_DTYPE = 18,   /**< LD_DTYPE_I32 (default) or LD_DTYPE_F32. A label the type cannot
                                  hold exactly is an error of ld_reader_next() naming the sample,
                                  never clipped: int32 needs whole numbers in range (not 2.5, NaN,
                                  1e12); float32 holds integer labels up to 2^24 (float ones are
                                  rounded, never overflowed to infinity). Pixels likewise: uint8
                                  output of non-uint8 data needs whole numbers 0..255, float32
                                  output of integer data beyond 2^24 is refused */
    LD_R_WINDOW = 19,        /**< block shuffle: blocks per shuffle window; default 8 */
    LD_R_EPOCH = 20,         /**< the epoch the next ld_reader_open() starts at (to resume);
                                  default 0 */
    LD_R_DCT_SCALE = 21,     /**< encoded JPEG with a crop: 1 = let the decoder shrink by up to 8x
                                  (DCT scaling) while the image stays at least the crop size, i.e.
                                  crop from a reduced image (faster, different pixels); default 0 */
    LD_R_CHANNELS = 22,      /**< channels of decoded (encoded) images: 0 = as the dataset says
                                  (default; for a database that records no shape, such as
                                  convert_imageset --encoded, the first image's: a later colour
                                  image then fails with LD_EFORMAT instead of being made gray),
                                  1 = decode every image gray, 3 = in colour (Caffe's force_gray
                                  / force_color). LD_EINVAL for raw datasets of another count */
    LD_R_RRC_W = 23,         /**< random resized crop (torchvision's RandomResizedCrop), output
                                  width; 0 = off (default). With LD_R_RRC_H. Each sample, a box of
                                  a random fraction of the image's area (LD_R_RRC_SCALE) and a
                                  random aspect ratio w/h (LD_R_RRC_RATIO, drawn log-uniform) is
                                  taken (up to 10 draws; when none fits, the whole image, or its
                                  center cut to the nearest ratio bound) and resampled (antialiased,
                                  LD_R_RRC_FILTER: bilinear by default) to LD_R_RRC_W x
                                  LD_R_RRC_H; the box is a function of (seed, epoch, sample)
                                  alone: ld_reader_crop_box(). Then mirror
                                  (LD_R_MIRROR: torchvision's RandomHorizontalFlip), channel order,
                                  mean, scale, dtype, layout as usual. Encoded JPEGs decode only
                                  the box's rows and columns, at the smallest DCT scale (1/8, 1/4,
                                  1/2, 1) that keeps the box at least 1.5x the output size (at 1x
                                  the worst sample was 31.9 dB from a full decode, at 1.5x 43.7
                                  dB); PNG, EXIF-rotated and CMYK JPEGs decode whole; raw uint8
                                  samples are cropped and resampled (float32 ones are LD_EINVAL).
                                  The output may be larger than the images (upsampled). Excludes
                                  LD_R_CROP_W/H, LD_R_RANDOM_CROP, LD_R_DCT_SCALE (LD_EINVAL at
                                  open). A mean image is of the output size. Store images at a
                                  bounded size for this (`dataconv --max-side 256 --quality 90`):
                                  the decode then stays cheap whatever the originals' size */
    LD_R_RRC_H = 24,         /**< random resized crop: output height; 0 = off (default) */
    /** random resized crop: 1 = decode every whole image at full scale, then crop and
     *  resample (the reference path: slower; the pixels differ by the DCT scaling and the
     *  filter's context at the box's edges only); default 0 */
    LD_R_RRC_FULL_DECODE = 25,
    /** random resized crop: the resampling filter, ld_rrc_filter. Default
     *  LD_RRC_FILTER_BILINEAR, because the transform's point is to reproduce torchvision's
     *  RandomResizedCrop, which resamples PIL images with antialiased bilinear: a model trained
     *  on these pixels sees the same softness as with torchvision. It is also the faster one
     *  (support 1 instead of 3: a third of the taps, and no sines in the per-box tables):
     *  1824 vs 1564 samples per CPU second with the box decoder, 1411 vs 1220 with
     *  LD_R_RRC_FULL_DECODE (bench/rrc_bench.py, 2 threads, 400 photos of ~460x400).
     *  LD_RRC_FILTER_LANCZOS3 is the conversion's filter (sharper) */
    LD_R_RRC_FILTER = 26,
    LD_R_DATA_NAME = 100,   /**< string: HDF5 pixel dataset; default "data" (or our "encoded") */
    LD_R_LABEL_NAME = 101,  /**< string: HDF5 label dataset; default "label" */
    LD_R_MEAN_VALUES = 102, /**< floats: 1 to 4 per-channel means (output channel order),
                                 subtracted before scaling; float output only; none by default */
    LD_R_MEAN_FILE = 103, /**< string: a mean image: Caffe's mean.binaryproto (BlobProto, as written
                             by compute_image_mean or `dataconv mean`), C x H x W of the stored
                               samples (cropped with them, aligned with the source pixels before
                               mirroring, as in Caffe) or of the crop; indexed by output channel,
                               so a Caffe (BGR) mean goes with BGR output; float output only.
                               Or a NumPy .npy array (little-endian float32, float64 or uint8,
                               C order), C x H x W or H x W x C (C x H x W is taken when both
                               fit; the log says which) */
    LD_R_SCALE = 104,     /**< double: multiplier applied after the mean, e.g. 1.0 / 256;
                               default 1; float output only unless 1 */
    LD_R_RRC_SCALE = 105, /**< floats: random resized crop, (min, max) fraction of the image's
                               area, 0 < min <= max; default 0.08, 1 (0 values restore it) */
    LD_R_RRC_RATIO = 106  /**< floats: random resized crop, (min, max) aspect ratio w / h,
                               0 < min <= max; default 3/4, 4/3 */
} ld_reader_param;

/**
 * Read-only values, for ld_reader_get_info() after a successful open (LD_ESTATE before).
 * Values are fixed forever.
 */
typedef enum ld_reader_info {
    LD_R_INFO_SAMPLES = 200,       /**< samples in the dataset (all ranks) */
    LD_R_INFO_EPOCH_SAMPLES = 201, /**< samples this rank delivers per epoch (after drop_last) */
    LD_R_INFO_EPOCH_BATCHES = 202, /**< batches this rank delivers per epoch */
    LD_R_INFO_C = 203,             /**< output channels */
    LD_R_INFO_H = 204,             /**< output height */
    LD_R_INFO_W = 205,             /**< output width */
    LD_R_INFO_PREFETCH = 206,      /**< prefetch depth chosen */
    LD_R_INFO_THREADS = 207,       /**< worker threads started */
    LD_R_INFO_MEMORY = 208,        /**< bytes the reader allocated (ring + scratch) */
    LD_R_INFO_ENCODED = 209,       /**< 1 when the dataset holds encoded images */
    LD_R_INFO_ORDER = 210,         /**< ld_channel_order of 3-channel output: LD_CHANNELS_BGR,
                                        LD_CHANNELS_RGB, or LD_CHANNELS_AS_STORED when the
                                        dataset does not record it */
    LD_R_INFO_LABEL_K = 211,       /**< 0: one label per sample; K >= 1: label vectors of K
                                        values (ld_batch.label_k) */
    LD_R_INFO_MASK = 212,          /**< 0: no masks; 1: segmentation masks beside the labels
                                        (HDF5 /mask); 2: masks that are the dataset's label
                                        (HDF5 /label (N, 1, H, W); labels are then all 0) */
    LD_R_INFO_BOXES = 213,         /**< 1: the dataset has detection boxes (ld_batch.boxes) */
    LD_R_INFO_MASK_DTYPE = 214     /**< the masks' element type: LD_DTYPE_U8 or LD_DTYPE_U16
                                        (ld_batch.mask_dtype); 0 without masks */
} ld_reader_info;

/**
 * One batch. Allocated by the reader and handed out as `const *`; valid until the next
 * ld_reader_next() or ld_reader_free() on the same reader (copy to keep). Fields may be added
 * at the end in later versions.
 */
typedef struct ld_batch {
    size_t n;                /**< samples in this batch: the batch size, or fewer for the final
                                  batch of an epoch (unless LD_R_DROP_LAST) */
    int dtype;               /**< ld_dtype of data */
    int layout;              /**< ld_layout of data */
    int c, h, w;             /**< shape of one sample */
    const void *data;        /**< n * c * h * w elements of dtype */
    size_t data_bytes;       /**< bytes at data */
    int label_dtype;         /**< ld_dtype of labels (LD_DTYPE_I32 or LD_DTYPE_F32) */
    const void *labels;      /**< n labels */
    const uint64_t *indices; /**< n dataset indices (0-based, across all files of a split list):
                                  sample j of this batch is dataset sample indices[j] */
    uint64_t epoch;          /**< epoch this batch belongs to */
    uint64_t number;         /**< batch number within the epoch for this rank, from 0 */
    /** (Added after 1.0.0.) 0: one label per sample, `labels` holds n values; K >= 1: the dataset's
        labels are vectors (HDF5 /label (N, K), an LMDB pair), `labels` holds n * K values,
        sample j's at j * K. Each value is checked against label_dtype as one label is */
    int label_k;
    /** (Added after 1.0.0.) Segmentation masks: n * mask_h * mask_w class indices of
        mask_dtype (uint8, or uint16 in host byte order: then cast to const uint16_t *), sample
        j's at j * mask_h * mask_w, cropped, mirrored and resampled (nearest) with their image,
        so mask_h x mask_w = h x w; NULL when the dataset has none */
    const uint8_t *masks;
    int mask_h, mask_w;
    /** 1 when the masks are the dataset's label (HDF5 /label (N, 1, H, W)): `labels` is then
        all 0 */
    int mask_is_label;
    /** (Added after 1.0.0.) Detection boxes (HDF5 /boxes ...): sample j's are entries
        box_offsets[j] .. box_offsets[j + 1] - 1 of boxes (x1, y1, x2, y2 each, in the output
        sample's pixels: cropped, mirrored or random-resized-cropped with the image, clipped to
        it, those left without area dropped), box_labels (class index) and box_flags (1 crowd,
        2 difficult); n_boxes in all. NULL without boxes */
    size_t n_boxes;
    const float *boxes;
    const int32_t *box_labels;
    const uint8_t *box_flags;
    const uint64_t *box_offsets;
    /** (Added after 1.0.0.) The element type of `masks`: LD_DTYPE_U8, or LD_DTYPE_U16 for
        masks stored as uint16 (more than 256 classes); 0 without masks */
    int mask_dtype;
} ld_batch;

/** @return a new reader with default parameters, or NULL when out of memory. */
LD_API ld_reader *ld_reader_create(void);

/**
 * Release a reader: stops and joins its workers, closes files, frees every buffer (batches
 * handed out become invalid). NULL is a no-op.
 */
LD_API void ld_reader_free(ld_reader *r);

/**
 * Set an integer, boolean or enum parameter. Only before ld_reader_open().
 * @return LD_OK; LD_EINVAL for an unknown parameter, a parameter of another type, a value out
 *         of bounds or, for an enum, a value that is not one of its choices (e.g. a value of
 *         another enum): the errmsg names the parameter and what it accepts; LD_ESTATE after
 *         open.
 */
LD_API int ld_reader_set(ld_reader *r, ld_reader_param p, int64_t value);

/** Set a number parameter (LD_R_SCALE). @return LD_OK, LD_EINVAL (not finite, or not a
 *  double parameter), LD_ESTATE. */
LD_API int ld_reader_set_double(ld_reader *r, ld_reader_param p, double value);

/** Set a list-of-numbers parameter (LD_R_MEAN_VALUES): `n` values (n = 0 restores the
 *  default). @return LD_OK, LD_EINVAL (too many, not finite, wrong type), LD_ESTATE. */
LD_API int ld_reader_set_floats(ld_reader *r, ld_reader_param p, const float *values, size_t n);

/**
 * Set a string parameter (LD_R_DATA_NAME, LD_R_LABEL_NAME, LD_R_MEAN_FILE). The string is
 * copied; NULL restores the default.
 * @return LD_OK, LD_EINVAL (unknown, or not a string parameter), LD_ENOMEM, LD_ESTATE.
 */
LD_API int ld_reader_set_str(ld_reader *r, ld_reader_param p, const char *value);

/**
 * Set a mean image from memory instead of a mean file (LD_R_MEAN_FILE): `c` x `h` x `w` floats
 * in C x H x W order, copied; used exactly as a mean file's image (the samples' or the crop's
 * size, indexed by output channel; float output only). Replaces a mean file set before, and a
 * mean file set after replaces it; data = NULL removes it.
 * @return LD_OK, LD_EINVAL (c not 1..4, empty, a value not finite), LD_ENOMEM, LD_ESTATE.
 */
LD_API int ld_reader_set_mean_image(ld_reader *r, const float *data, int c, int h, int w);

/**
 * Read an integer, boolean or enum parameter.
 * @return LD_OK, LD_EINVAL (unknown, or of another type).
 */
LD_API int ld_reader_get(const ld_reader *r, ld_reader_param p, int64_t *value);

/**
 * Read a read-only value (ld_reader_info) after a successful open.
 * @return LD_OK, LD_EINVAL (unknown), LD_ESTATE (before open).
 */
LD_API int ld_reader_get_info(const ld_reader *r, ld_reader_info i, int64_t *value);

/**
 * The table of all reader parameters (ld_param_desc: name, type, unit, default, bounds,
 * choices, help), for CLIs and bindings.
 * @param n receives the number of entries.
 * @return a static array, valid for the life of the program. Thread-safe.
 */
LD_API const ld_param_desc *ld_reader_params(size_t *n);

/** Bounds of an integer, boolean or enum parameter. @return LD_OK or LD_EINVAL for an unknown
 *  one. Thread-safe. */
LD_API int ld_reader_param_bounds(ld_reader_param p, int64_t *min, int64_t *max);

/**
 * Open a dataset and start the workers prefetching the first batches.
 *
 * @param path an HDF5 file (ours, or any tool's `data`/`label` datasets of any chunking,
 *             contiguous or deflate-compressed, uint8 or other numeric pixels, any numeric
 *             labels), a `.txt` list of HDF5 files (one per line; relative paths resolve
 *             against the current directory first, then the list's directory), or an LMDB
 *             directory of Caffe Datum records.
 * @return LD_OK; LD_EIO (cannot open: the message names the path); LD_EFORMAT (not a dataset,
 *         corrupt, a chunk beyond the end of the file, mismatched files in a list);
 *         LD_EINVAL (contradictory parameters: crop larger than the samples, mean or scale
 *         with uint8 output, rank >= world, fewer samples than ranks, varying encoded image
 *         sizes without a crop); LD_ELIMIT (one batch does not fit LD_R_MEMORY_BUDGET: the
 *         message names the largest batch size that fits); LD_ENOTSUP (format not built);
 *         LD_ENOMEM; LD_ESTATE (already open). After a failure the reader may be freed or
 *         opened again.
 */
LD_API int ld_reader_open(ld_reader *r, const char *path);

/**
 * Take the next batch of the current epoch.
 *
 * @param b receives the batch on LD_OK (borrowed: valid until the next call on `r`).
 * @return LD_OK; LD_END when the epoch is over (no batch; the next call returns the first
 *         batch of the next epoch, whose permutation is new and reproducible); LD_EFORMAT /
 *         LD_EIO / LD_ENOMEM when a sample could not be read or decoded (the errmsg names
 *         the file and the sample index; it comes at the batch that holds the sample,
 *         after every batch before it, and names the earliest bad sample of that batch
 *         whatever the number of threads; the reader then stays in error: free it);
 *         LD_ESTATE when not open.
 */
LD_API int ld_reader_next(ld_reader *r, const ld_batch **b);

/**
 * Keep the pixels of the batch ld_reader_next() returned last, without copying them: its
 * `data` buffer becomes the caller's (valid until ld_reader_buffer_free(), also after
 * ld_reader_free()), and the reader goes on with `replacement` in its place. For bindings
 * that hand out batches the user may keep (libdata.Reader's copy=True): recycling the buffers
 * the user dropped costs nothing per batch, where a copy costs a memcpy and a fresh buffer
 * page faults as well. The batch's labels and indices stay the reader's (copy them).
 *
 * @param replacement a buffer from ld_reader_buffer_alloc() of this reader since it was
 *        opened, that nothing else uses; the reader owns and frees it from now on.
 * @return LD_OK; LD_EINVAL (replacement NULL); LD_ESTATE when the reader holds no batch for
 *         the caller (not open, no batch taken yet, after LD_END or an error, or this batch's
 *         data already taken).
 */
LD_API int ld_reader_take_data(ld_reader *r, void *replacement);

/**
 * A buffer for ld_reader_take_data(): the size of one batch's pixels of the open reader
 * (stored in *bytes), its pages already touched (no page faults later), on transparent huge
 * pages where the system offers them.
 * @return the buffer, or NULL when out of memory or the reader is not open.
 */
LD_API void *ld_reader_buffer_alloc(const ld_reader *r, size_t *bytes);

/** Free a buffer of ld_reader_buffer_alloc() or ld_reader_take_data(). NULL is a no-op. */
LD_API void ld_reader_buffer_free(void *buffer);

/** @return the last failure's message ("" if none); valid until the next call on `r`. */
LD_API const char *ld_reader_errmsg(const ld_reader *r);

/** @return the last failure in machine-readable form (ld_error_detail: code, the
 *          ld_reader_param it is about, the dataset file, the sample index); valid until the
 *          next call on `r`. Never NULL. */
LD_API const ld_error_detail *ld_reader_error(const ld_reader *r);

/** A random resized crop box (ld_reader_crop_box()), in pixels of the decoded image (after
 *  its EXIF orientation) or of the stored raw sample. The caller allocates it: its layout is
 *  fixed within 1.x. */
typedef struct ld_crop_box {
    int x, y, w, h; /**< the box: columns x .. x + w - 1, rows y .. y + h - 1 */
    int mirror;     /**< 1 when the sample is mirrored (LD_R_MIRROR), 0 otherwise */
} ld_crop_box;

/**
 * The random resized crop box (LD_R_RRC_W) that the reader takes from sample `index` (dataset
 * index, as ld_batch.indices) of `epoch` when the image is src_w x src_h: a pure function of
 * the parameters set (seed, rrc_scale, rrc_ratio, mirror), before or after open, so that a
 * program can reproduce the reader's output (crop the decoded image to the box, resample it
 * to LD_R_RRC_W x LD_R_RRC_H, mirror it when box->mirror).
 * @return LD_OK; LD_EINVAL when LD_R_RRC_W is 0 or the size is not positive.
 */
LD_API int ld_reader_crop_box(const ld_reader *r, uint64_t epoch, uint64_t index, int src_w,
                              int src_h, ld_crop_box *box);

/** Set the log callback (NULL = silent); called on the caller's thread during open/next. */
LD_API void ld_reader_set_log(ld_reader *r, ld_log_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif /* LIBDATA_READER_H */
