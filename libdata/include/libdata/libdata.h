/*
 * libdata: turn image folders into training-ready datasets (HDF5, LMDB) and stream
 * fixed-size mini-batches from them with memory bounded by the batch, not the dataset.
 *
 * This header holds what every part of the API shares: the version, status codes,
 * logging and progress callbacks, and memory release. The operations live in
 * <libdata/convert.h> (folder -> dataset) and <libdata/reader.h> (dataset -> batches).
 *
 * Conventions (the same for every function of the library):
 *  - Functions return an int status: LD_OK (0) on success, LD_END (1) at the end of an
 *    epoch, a negative LD_E* code on failure. `rc < 0` always means failure.
 *  - Handles are opaque, created by *_create() and released by *_free(); *_free(NULL) is
 *    a no-op. A failed call leaves a detailed message (file, sample, reason) in the handle,
 *    read with the handle's *_errmsg() function; ld_strerror() names the code. Messages
 *    speak of parameters by their table names (max_pixels, resize_w); the same failure in
 *    machine-readable form (code, parameter id, file, sample) is the handle's *_error()
 *    (ld_error_detail below), for a program that wants to decide or to translate.
 *  - Calls without a handle (ld_describe, ld_dataset_stat, ld_compute_mean) end with
 *    `char **errmsg`: on failure it receives the detailed message (release with ld_free();
 *    NULL if even that could not be allocated), on success NULL; pass NULL when not wanted.
 *    Their other outputs are set only on success.
 *  - One thread uses a handle at a time; separate handles are independent. The library's
 *    only process-wide state is the lock that serialises every call it makes into the serial
 *    HDF5 library (HDF5 keeps global state of its own): readers, conversions, ld_describe,
 *    ld_dataset_stat and ld_compute_mean all take it; see the threads note in
 *    <libdata/reader.h>.
 *  - Callbacks always run on the thread that called into the library (never on a worker).
 *  - The caller owns what it passes in; the library copies strings and arrays it keeps.
 *    Memory the library hands over is released with ld_free().
 */
#ifndef LIBDATA_LIBDATA_H
#define LIBDATA_LIBDATA_H

#include <stddef.h>
#include <stdint.h>
#include "types.h" /* the shared enums: formats, resize modes, channel orders, dtypes */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LD_STATIC_DEFINE)
#define LD_API
#elif defined(_WIN32)
#ifdef LD_BUILDING
#define LD_API __declspec(dllexport)
#else
#define LD_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define LD_API __attribute__((visibility("default")))
#else
#define LD_API
#endif

/** @name Version
 * Compile-time version of the header; compare with ld_version_number() at run time. */
/** @{ */
#define LD_VERSION_MAJOR 1
#define LD_VERSION_MINOR 0
#define LD_VERSION_PATCH 0
#define LD_VERSION_NUMBER (LD_VERSION_MAJOR * 10000 + LD_VERSION_MINOR * 100 + LD_VERSION_PATCH)
#define LD_VERSION_STRING "1.0.0"
/** @} */

/** @return the version of the linked library, as LD_VERSION_NUMBER (major*10000+minor*100+patch).
 */
LD_API unsigned ld_version_number(void);
/** @return the version of the linked library as a static string such as "1.0.0". */
LD_API const char *ld_version_string(void);

/** Status codes. Values are fixed forever: never renumbered, never reused. */
typedef enum ld_status {
    LD_OK = 0,         /**< success */
    LD_END = 1,        /**< end of an epoch (not an error) */
    LD_ENOMEM = -1,    /**< out of memory */
    LD_EINVAL = -2,    /**< invalid argument or option value */
    LD_EIO = -3,       /**< input/output error (open, read, write, rename, disk full) */
    LD_EFORMAT = -4,   /**< corrupt, truncated or unsupported input */
    LD_ELIMIT = -5,    /**< over a limit: maximum pixels, memory budget, format size */
    LD_ECANCELED = -6, /**< canceled by a callback */
    LD_ENOTSUP = -7,   /**< feature not built into this library */
    LD_ESTATE = -8     /**< call not valid in the handle's current state */
} ld_status;

/**
 * @return a static, human-readable name for a status code ("out of memory", ...);
 *         "unknown status" for a value that is not an ld_status. Thread-safe.
 */
LD_API const char *ld_strerror(int status);

/**
 * The last failure of a handle in machine-readable form, from ld_convert_error() and
 * ld_reader_error(). The library owns it (valid until the next call on the handle or its
 * free; never allocate or copy one): fields may be added at the end in later 1.x versions.
 * A field that does not apply is -1 (NULL for path).
 */
typedef struct ld_error_detail {
    int code;         /**< the failure's ld_status; LD_OK when the handle holds no failure */
    int param;        /**< the ld_convert_param / ld_reader_param id the failure is about (a
                           value refused, a limit hit, the setting that stopped the run, the
                           one to change), or -1; its name is in the handle's params table */
    const char *path; /**< the file the failure is in (an input image, a dataset file), or
                           NULL */
    int64_t sample;   /**< reader: the sample index in the dataset; converter: the index of
                           the input in the run's input order; or -1 */
} ld_error_detail;

/** Optional features, for ld_has_feature(). Values are fixed forever. */
typedef enum ld_feature {
    LD_FEATURE_HDF5 = 1,
    LD_FEATURE_LMDB = 2,
    LD_FEATURE_PNG = 3,
    LD_FEATURE_THREADS = 4,
    /* added after 1.0.0; without one, its files are skipped as "<format> support not built" */
    LD_FEATURE_TIFF = 5,    /**< TIFF input (libtiff) */
    LD_FEATURE_WEBP = 6,    /**< WebP input (libwebp) */
    LD_FEATURE_GIF = 7,     /**< GIF input (giflib) */
    LD_FEATURE_ARCHIVE = 8, /**< tar archives as convert input (libarchive) */
    LD_FEATURE_COCO = 9,    /**< COCO instances JSON as convert input (libyajl) */
    LD_FEATURE_VOC = 10     /**< Pascal VOC XML as convert input (libxml2) */
} ld_feature;

/** @return 1 if the feature was built into this library, 0 if not (its calls give LD_ENOTSUP). */
LD_API int ld_has_feature(ld_feature f);

/** Log levels passed to an ld_log_fn. */
typedef enum ld_log_level {
    LD_LOG_ERROR = 0, /**< the operation failed; the same text is in the handle's errmsg */
    LD_LOG_WARN = 1,  /**< a file was skipped, or something suspicious: the message names it */
    LD_LOG_INFO = 2,  /**< what the library decided (sizes, layout, threads) */
    LD_LOG_DEBUG = 3
} ld_log_level;

/**
 * Log callback. `msg` is valid only during the call. Runs on the thread that called the
 * library, never on a worker thread, so it may call back into other handles.
 */
typedef void (*ld_log_fn)(void *user, int level, const char *msg);

/**
 * @name Parameter model
 * Both handles (ld_convert, ld_reader) take their settings the same way: an enum-typed
 * parameter id and a setter of the parameter's type. The library describes every parameter in
 * a static table (ld_convert_params(), ld_reader_params()) giving its name, type, unit,
 * default, bounds and, for an enum parameter, the names and values of its choices; dataconv's
 * flags and help, `dataconv bench`'s flags and the Python keyword arguments are generated from
 * these tables, so a parameter added here reaches them without a change there.
 *
 * Every enum of values has its own prefix and its own range (LD_ORDER_* are 0x100..,
 * LD_DTYPE_* 0x200.., ...), so a value of the wrong enum (LD_ORDER_SHUFFLE given to
 * LD_R_CHANNEL_ORDER) is refused with LD_EINVAL instead of being taken as a number.
 * The parameter ids are not: each handle numbers its own (ld_convert_param and
 * ld_reader_param both start at 1, strings at 100), so an id of the other handle is taken as
 * the id with that number (LD_R_SEED given to ld_convert_set() sets LD_C_RESIZE_H). Pass each
 * handle its own enum: C compilers warn when an enum of the other type is passed (GCC's
 * -Wenum-conversion, part of -Wextra); the tables and the bindings go by name.
 */
/** @{ */
typedef enum ld_param_type {
    LD_PARAM_INT = 1,    /**< int64 in [min, max]; set with *_set() */
    LD_PARAM_BOOL = 2,   /**< 0 or 1; set with *_set() */
    LD_PARAM_ENUM = 3,   /**< one of `choices`; set with *_set() */
    LD_PARAM_DOUBLE = 4, /**< a finite number; set with *_set_double() (default in `def_text`) */
    LD_PARAM_FLOATS = 5, /**< 0 to `max` numbers; set with *_set_floats() */
    LD_PARAM_STRING = 6  /**< text (a name or a path); set with *_set_str() */
} ld_param_type;

/** One value of an enum parameter. */
typedef struct ld_param_choice {
    const char *name; /**< keyword, e.g. "shuffle" (lower case, no prefix) */
    int64_t value;    /**< the enum constant, e.g. LD_ORDER_SHUFFLE */
} ld_param_choice;

/** Description of one parameter (a row of ld_convert_params() / ld_reader_params()). */
typedef struct ld_param_desc {
    int id;                         /**< ld_convert_param or ld_reader_param value */
    const char *name;               /**< keyword, e.g. "quality"; unique within the table */
    int type;                       /**< ld_param_type */
    int64_t def, min, max;          /**< INT/BOOL/ENUM: default and bounds; FLOATS: max =
                                         most numbers; others 0 */
    const char *unit;               /**< "bytes", "pixels", "samples", ... or "" */
    const ld_param_choice *choices; /**< ENUM: the accepted values; else NULL */
    size_t nchoices;
    const char *def_text; /**< the default as text, for every type ("shuffle",
                               "1", "" ...) */
    const char *help;     /**< one line */
} ld_param_desc;
/** @} */

/**
 * Release memory that the library handed to the caller (e.g. the text of ld_describe()).
 * NULL is a no-op.
 */
LD_API void ld_free(void *p);

/**
 * Describe what a dataset file holds (HDF5 file, LMDB directory or a --split list file):
 * format, sample count, shape, storage kind, channel order, classes and how it was made.
 *
 * @param path   the dataset.
 * @param text   on success: a NUL-terminated, multi-line description (release with
 *               ld_free()); NULL on failure.
 * @param errmsg on failure, a message naming the path and the reason (release with ld_free());
 *               NULL on success. May be NULL.
 * @return LD_OK, or LD_EIO / LD_EFORMAT / LD_ENOTSUP / LD_ENOMEM / LD_EINVAL (no path/text).
 * Thread-safe: uses no shared state.
 */
LD_API int ld_describe(const char *path, char **text, char **errmsg);

/**
 * Per-pixel mean of a dataset, written as Caffe's BlobProto `binaryproto` (num=1, channels,
 * height, width, float data), which the `mean_file` of Caffe's transform_param and libdata's
 * reader (LD_R_MEAN_FILE) accept. Streams over the samples: memory is one image of running
 * sums, independent of the number of samples. Channel order: BGR for 3-channel data (raw as
 * stored; encoded images are decoded to BGR, as Caffe does).
 *
 * @param input         HDF5 file, `--split` list or LMDB directory; all samples one shape.
 * @param output        the .binaryproto to write (atomically: temporary file, then rename);
 *                      NULL = compute only.
 * @param channel_means receives the mean of each channel (first min(C, 4)); may be NULL.
 * @param channels      receives C; may be NULL.
 * @param errmsg        on failure, a message naming the file and reason (release with
 *                      ld_free()); set to NULL on success. May be NULL.
 * @return LD_OK, LD_EIO, LD_EFORMAT (corrupt, or samples of different shapes), LD_ENOMEM,
 *         LD_ENOTSUP, LD_EINVAL (`output` is `input`, lies inside an LMDB `input`, or is a
 *         file a list `input` names; nothing is written). Thread-safe: uses no shared state.
 */
LD_API int ld_compute_mean(const char *input, const char *output, double channel_means[4],
                           int *channels, char **errmsg);

#ifdef __cplusplus
}
#endif
#endif /* LIBDATA_LIBDATA_H */
