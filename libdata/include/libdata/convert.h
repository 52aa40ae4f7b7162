/*
 * libdata convert: a folder of images (or a Caffe-style "path label" list file) -> an HDF5
 * file or an LMDB database, decoded, optionally resized and re-encoded, in parallel, with
 * memory bounded by the number of threads (never by the number of images).
 *
 * Sequence (LMDB's): create -> set parameters -> run -> free.
 *
 *     ld_convert *c = ld_convert_create();
 *     ld_convert_set(c, LD_C_RESIZE_W, 224);
 *     ld_convert_set(c, LD_C_RESIZE_H, 224);
 *     ld_convert_set(c, LD_C_QUALITY, 70);
 *     if (ld_convert_run(c, "images/", "out.h5") < 0)
 *         fprintf(stderr, "%s\n", ld_convert_errmsg(c));
 *     ld_convert_free(c);
 *
 * Output is written under a temporary name beside the output (`<out>.tmp-<pid>-<n>`) and
 * renamed to the output name only when the whole run succeeded; on failure, cancelation
 * or error the temporary is removed. A process killed outright (SIGKILL) may leave the
 * temporary behind, but never a partial file under the output name.
 *
 * The output is byte-identical for any number of threads.
 */
#ifndef LIBDATA_CONVERT_H
#define LIBDATA_CONVERT_H

#include "libdata.h"
#include "shard.h" /* ld_merge, ld_shard_part_name */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ld_convert ld_convert;

/**
 * Converter parameters. Sticky: they keep their value across runs. Values are fixed forever.
 * Integer, boolean and enum parameters are set with ld_convert_set(), string ones (100 and
 * up) with ld_convert_set_str(); a setter of the wrong type is LD_EINVAL. ld_convert_params()
 * describes each one (type, unit, default, bounds, choices).
 */
typedef enum ld_convert_param {
    LD_C_FORMAT = 1,        /**< ld_format; default LD_FORMAT_AUTO */
    LD_C_QUALITY = 2,       /**< 0 = store raw pixels (default); 1..100 = re-encode JPEG at Q */
    LD_C_RESIZE_W = 3,      /**< target width; 0 = keep the source size (default) */
    LD_C_RESIZE_H = 4,      /**< target height; 0 = keep the source size (default) */
    LD_C_RESIZE_MODE = 5,   /**< ld_resize_mode; default LD_RESIZE_SQUASH */
    LD_C_PAD_VALUE = 6,     /**< gray level of the padding in LD_RESIZE_PAD; default 0 */
    LD_C_GRAY = 7,          /**< 1 = 1-channel gray output; default 0 (3 channels) */
    LD_C_CHANNEL_ORDER = 8, /**< ld_channel_order: LD_CHANNELS_BGR (default) or LD_CHANNELS_RGB */
    LD_C_THREADS = 9,       /**< decoding workers; 0 = all cores (default); no more than the
                                 CPUs the process may use (sched_getaffinity) */
    LD_C_SHUFFLE = 10,      /**< 1 = shuffle the input order with LD_C_SEED; default 0 */
    LD_C_SEED = 11,         /**< shuffle seed; default 0. Same seed -> same order */
    LD_C_STRICT = 12,       /**< 1 = stop at the first bad input file; default 0 (skip it, warn) */
    LD_C_MAX_PIXELS = 13,   /**< refuse images with more pixels than this; default 100,000,000 */
    LD_C_SPLIT_BYTES =
        14,            /**< HDF5: start a new file when /data would exceed this many bytes and
                            write `<out>.txt` listing the files (Caffe HDF5Data); 0 = one file */
    LD_C_DEFLATE = 15, /**< HDF5: deflate level 1..9 for raw /data; 0 = none (default, mappable) */
    LD_C_CHECK_SIZE = 16,  /**< 1 = every image must have the same size (convert_imageset's
                                --check_size): a different one stops the run with LD_EINVAL.
                                Raw HDF5 storage always requires it. */
    LD_C_ENCODED = 17,     /**< 1 = store encoded images; with no resize and no LD_C_QUALITY the
                                original file bytes are kept (convert_imageset --encoded) */
    LD_C_ENCODE_PNG = 18,  /**< 1 = re-encode as PNG instead of JPEG (convert_imageset
                                --encode_type=png); implies LD_C_ENCODED */
    LD_C_FLAT = 19,        /**< folder mode: 1 = the input folder has no class folders: every
                                image below it, at any depth, gets label 0 (one class named
                                after the folder). 0 (default): sub-folders are classes and
                                images directly in the input folder are skipped with a warning */
    LD_C_SPLIT_PATHS = 20, /**< ld_split_paths: how the LD_C_SPLIT_BYTES list names its files;
                                default LD_SPLIT_PATHS_ABSOLUTE */
    LD_C_SHARD_INDEX = 21, /**< shards: which part K (0-based, < LD_C_SHARD_COUNT) this run
                                converts; default 0 */
    LD_C_SHARD_COUNT = 22, /**< shards: 0 = not sharded (default); N = 1..99999: the run lists
                                the whole input (sorted or shuffled with the seed, class names
                                and labels from all of it), converts only part K, the
                                contiguous range [floor(K*L/N), floor((K+1)*L/N)) of the L
                                listed samples, and writes it to ld_shard_part_name(output)
                                with attributes naming K, N and the run (run_id). A part that
                                exists complete with the same K, N and run_id is left as it is
                                (ld_progress.resumed = 1, nothing is read); a part of another
                                run under that name is refused (LD_EINVAL naming what
                                differs). Not with LD_C_SPLIT_BYTES. */
    /** 1 = JPEGs re-encoded with LD_C_QUALITY carry restart markers, so that the reader's
        random resized crop (LD_R_RRC_W) Huffman-decodes only the crop's part of each image;
        files about 5 % larger, full decodes about 6 % slower. Default 0 */
    LD_C_RESTART_MARKERS = 23,
    /** List mode: the type of the labels, ld_label_type; default LD_LABEL_AUTO (int32 when
        every line has one integer, else float32) */
    LD_C_LABEL_TYPE = 24,
    /** List mode: label values per line; -1 = from the first line (default: the numbers at
        its end; a CSV list: its header), 0 = no labels (paths only) */
    LD_C_LABEL_COUNT = 25,
    /** ld_decode_scale: whether a JPEG that the resize shrinks 4x or more is decoded at a
        reduced DCT scale; default LD_DECODE_SCALE_AUTO */
    LD_C_DECODE_SCALE = 26,
    /** Segmentation masks (LD_C_MASKS): the class index of the pixels that pad mode adds
        around the image (and nothing else); default 255, Caffe's usual ignore_label */
    LD_C_MASK_PAD = 27,
    /** Segmentation masks: the stored type, LD_DTYPE_U8 (default: indices 0..255) or
        LD_DTYPE_U16 (0..65535: 16-bit gray PNG masks of more than 256 classes). With uint8, a
        mask holding an index above 255 skips its image naming the value */
    LD_C_MASK_TYPE = 28,
    /** Bits per stored sample: 8 (default; 16-bit PNG, TIFF and PNM samples are reduced to their
        high byte, counted in ld_progress.reduced_16bit) or 16: raw HDF5 /data of uint16, 16-bit
        samples kept as they are (a PNM's maxval scaled to 65535), 8-bit inputs widened exactly
        (v * 257), resized on 16-bit samples. 16 needs raw HDF5 output (JPEG, PNG re-encoding
        and LMDB Datums hold 8-bit samples) */
    LD_C_DEPTH = 29,
    /** 1 = store raw pixels also when the input is a dataset of encoded images (which otherwise
        stays encoded, its bytes kept when nothing asks for a change): each image is decoded
        once. Image files are stored raw by default anyway. Not with LD_C_QUALITY, LD_C_ENCODED
        or LD_C_ENCODE_PNG. Default 0 */
    LD_C_RAW = 30,
    LD_C_LIST_FILE = 100,   /**< string: a "relative/path label" list file; ld_convert_run's
                                 `input` is then the root folder the paths are relative to.
                                 NULL = folder mode (default) */
    LD_C_SOURCE_NOTE = 101, /**< string: free text stored with the dataset (e.g. the command
                                 line) */
    /** string: a folder of segmentation masks. The mask of input REL/name.ext (its path
        relative to the input folder or list root) is MASKS/REL/name.png: a palette PNG (its
        indices are kept) or gray PNG of class indices in the image file's pixel grid, the
        image's size. It gets the image's EXIF orientation and geometry (resize, crop, pad)
        with nearest-neighbour sampling, and is stored as 1 x H x W (LD_C_MASK_TYPE) per sample:
       HDF5 /label (N, 1, H, W) when the input has no class labels (an unlabelled list), else /mask;
       LMDB a second database OUT-masks beside OUT. A missing or bad mask skips its image (or stops
       the run with LD_C_STRICT). NULL = no masks (default) */
    LD_C_MASKS = 102,
    /** string: a COCO instances JSON (annotations/instances_train2017.json): the images it
        lists, with their detection boxes, are read from ld_convert_run's `input` folder (their
        file_name below it); streamed, memory does not grow with the file beyond the images'
        records and boxes. NULL = no COCO input (default) */
    LD_C_COCO = 103,
    /** string: a Pascal VOC folder (VOC2012: Annotations/, JPEGImages/, ImageSets/): its
        images with the boxes of their Annotations XML; LD_C_LIST_FILE then names an ImageSets
        list (ImageSets/Main/train.txt), else every annotation is read. NULL = none (default) */
    LD_C_VOC = 104

} ld_convert_param;

/** Label types of list mode (LD_C_LABEL_TYPE). Values are fixed forever. */
typedef enum ld_label_type {
    LD_LABEL_AUTO = 0x900,   /**< one integer per line: int32 labels (N,); else float32 (N, K) */
    LD_LABEL_INT32 = 0x901,  /**< int32: (N,) for one value per line, else (N, K) */
    LD_LABEL_FLOAT32 = 0x902 /**< float32 (N, K), also for one value per line */
} ld_label_type;

/** How the list of a split HDF5 output names its files (LD_C_SPLIT_PATHS). */
typedef enum ld_split_paths {
    LD_SPLIT_PATHS_ABSOLUTE = 0x700, /**< absolute paths: Caffe's HDF5Data (which opens them
                                      relative to its working folder) and libdata read the list from
                                      any folder; moving the files breaks it */
    LD_SPLIT_PATHS_RELATIVE = 0x701  /**< file names relative to the list's folder: the files can be
                                      moved together; libdata's reader finds them from anywhere,
                                      Caffe only when run from the list's folder */
} ld_split_paths;

/**
 * How JPEGs are decoded before the resize (LD_C_DECODE_SCALE). Other formats are always
 * decoded at full size. Values are fixed forever.
 */
typedef enum ld_decode_scale {
    /** Decode at the smallest DCT scale 1/8, 1/4 or 1/2 that keeps at least 2 source pixels
        per output pixel on each axis (of the part the resize mode keeps, in displayed
        orientation); images that shrink less than 4x, and runs without a resize, are decoded at
        full size (the same bytes as LD_DECODE_SCALE_EXACT). About 2x faster for camera-size
        photos resized to 224-256; PSNR against EXACT median 48-50 dB, 33-35 dB on the worst
        photos measured (README, speed section). What every libdata before this parameter did;
        not recorded in the dataset (absent = auto) */
    LD_DECODE_SCALE_AUTO = 0xA00,
    /** Always decode at full size, then resize: the reference pixels. Recorded in the dataset
        (the decode_scale attribute / libdata.json key, "exact") when the run resizes */
    LD_DECODE_SCALE_EXACT = 0xA01
} ld_decode_scale;

/**
 * Progress and summary of a run. Allocated by the library; fields may be added at the end.
 * Counts refer to input files.
 */
typedef struct ld_progress {
    uint64_t total;          /**< input files found */
    uint64_t done;           /**< files handled so far (converted + skipped) */
    uint64_t converted;      /**< samples written */
    uint64_t skipped;        /**< files skipped (each one logged at LD_LOG_WARN with its reason) */
    uint64_t skipped_format; /**< of which: corrupt, truncated, not an image, unsupported */
    uint64_t skipped_io;     /**< of which: unreadable (permissions, vanished, a directory) */
    uint64_t skipped_limit;  /**< of which: over LD_C_MAX_PIXELS or too large for the format */
    uint64_t bytes_in;       /**< bytes of input files read */
    uint64_t bytes_out;      /**< bytes of sample data written (pixels or encoded bytes) */
    double elapsed;          /**< seconds since the run started */
    uint32_t files_out;      /**< dataset files written (more than 1 with LD_C_SPLIT_BYTES) */
    uint32_t resumed;        /**< shards: 1 = the part existed complete from the same run and
                                  was left as it is (nothing converted) */
    /* Added after 1.0.0: what folder mode did not list, and multi-frame inputs. Entries below the
       input folder that are not listed as images are not in `total`; each is named at LD_LOG_INFO
       ("not converted: <path>: <reason>"). 0 in list mode. */
    uint64_t unlisted;         /**< entries not listed, the sum of the four below */
    uint64_t unlisted_name;    /**< of which: files not named like an image (.txt, no extension) */
    uint64_t unlisted_hidden;  /**< of which: hidden files and folders ('.' first) */
    uint64_t unlisted_special; /**< of which: not regular files (FIFO, socket, dangling link) */
    uint64_t unlisted_loose;   /**< of which: images directly in the input folder (no class) */
    uint64_t first_frame_only; /**< converted files with more than one page or frame
                                    (multi-page TIFF, animated GIF/WebP): only the first is
                                    converted; the first such file is named at LD_LOG_WARN */
    /* Added with tar input: archive members whose name leaves the archive ('..' or an
       absolute path); never extracted, named at LD_LOG_INFO. Also counted in `unlisted`. */
    uint64_t unlisted_unsafe;
    /* Added with detection boxes (COCO, VOC inputs): boxes written, and boxes that the resize
       (a crop) left without area, dropped. */
    uint64_t boxes;
    uint64_t boxes_dropped;
    /* Added with LD_C_DEPTH: images with 16-bit samples stored as 8 bits (depth 8). */
    uint64_t reduced_16bit;
} ld_progress;

/**
 * Progress callback, called on the thread running ld_convert_run() about 10 times a
 * second and once at the end. Return nonzero to cancel the run (LD_ECANCELED, nothing is
 * left under the output name). `p` is valid only during the call.
 */
typedef int (*ld_progress_fn)(void *user, const ld_progress *p);

/** @return a new converter with default parameters, or NULL when out of memory. */
LD_API ld_convert *ld_convert_create(void);

/** Release a converter. NULL is a no-op. */
LD_API void ld_convert_free(ld_convert *c);

/**
 * Set an integer, boolean or enum parameter.
 * @return LD_OK, or LD_EINVAL for an unknown parameter, a string parameter, a value outside
 *         its bounds or, for an enum, a value that is not one of its choices (a value of
 *         another enum); the errmsg names the parameter and what it accepts.
 */
LD_API int ld_convert_set(ld_convert *c, ld_convert_param p, int64_t value);

/** @return the current value of an integer, boolean or enum parameter in *value; LD_EINVAL
 *          for an unknown or a string parameter. */
LD_API int ld_convert_get(const ld_convert *c, ld_convert_param p, int64_t *value);

/** Set a string parameter (copied; NULL resets it).
 *  @return LD_OK, LD_EINVAL (unknown, or not a string parameter), LD_ENOMEM. */
LD_API int ld_convert_set_str(ld_convert *c, ld_convert_param p, const char *value);

/**
 * The table of all converter parameters (ld_param_desc: name, type, unit, default, bounds,
 * choices, help), for CLIs and bindings.
 * @param n receives the number of entries.
 * @return a static array; valid for the life of the program. Thread-safe.
 */
LD_API const ld_param_desc *ld_convert_params(size_t *n);

/** Look up a parameter's bounds. @return LD_OK or LD_EINVAL for an unknown parameter. */
LD_API int ld_convert_param_bounds(ld_convert_param p, int64_t *min, int64_t *max);

/** Set the log callback (NULL = silent). Skipped files are reported at LD_LOG_WARN. */
LD_API void ld_convert_set_log(ld_convert *c, ld_log_fn fn, void *user);

/** Set the progress callback (NULL = none). */
LD_API void ld_convert_set_progress(ld_convert *c, ld_progress_fn fn, void *user);

/**
 * Whether ld_convert_run reads `input` as a tar archive: a name ending in .tar, .tar.gz,
 * .tgz, .tar.bz2, .tbz2, .tar.xz, .txz, .tar.zst or .tzst (any case) that is not a folder,
 * without LD_C_LIST_FILE. By name (nothing is opened or read). Archives need libarchive
 * (ld_has_feature( LD_FEATURE_ARCHIVE)); without it the run fails with LD_ENOTSUP.
 * @return 1 or 0.
 */
LD_API int ld_convert_input_is_archive(const char *input);

/**
 * Convert `input` (a folder, a tar archive of class folders or of one tar per class, or with
 * LD_C_LIST_FILE the root of the listed paths) into `output`. Blocks until done. Bad input files
 * are skipped with a warning unless LD_C_STRICT is set.
 *
 * @return LD_OK when the output was written (even if some files were skipped);
 *         LD_EINVAL for contradictory parameters (e.g. raw storage without a fixed size and
 *         differently sized images) and for an `output` that is, or lies inside, an input
 *         (the list file, the input folder, an input image; by device and inode; checked
 *         before anything is written), LD_EIO (also "no space left on device while
 *         writing ..." and "file size limit exceeded ..."), LD_EFORMAT (strict mode, or no
 *         usable image), LD_ECANCELED, LD_ENOMEM, LD_ENOTSUP (format not built). The errmsg
 *         says why and what to do next.
 */
LD_API int ld_convert_run(ld_convert *c, const char *input, const char *output);

/**
 * @return the summary of the last (or current) run; valid until the next run or free.
 */
LD_API const ld_progress *ld_convert_stats(const ld_convert *c);

/** @return the message of the last failure ("" if none); valid until the next call. */
LD_API const char *ld_convert_errmsg(const ld_convert *c);

/** @return the last failure in machine-readable form (ld_error_detail: code, the
 *          ld_convert_param it is about, the input file and its index in the run); valid
 *          until the next call on `c`. Never NULL. */
LD_API const ld_error_detail *ld_convert_error(const ld_convert *c);

#ifdef __cplusplus
}
#endif
#endif /* LIBDATA_CONVERT_H */
