/*
 * Internal helpers shared by every module: the error record, check macros, growable
 * buffers, overflow-checked size arithmetic and the image type passed between modules.
 * Nothing here is part of the public API.
 */
#ifndef LD_INTERNAL_H
#define LD_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "libdata/libdata.h"

#define LD_ERRMSG_MAX 1024
#define LD_ERRPATH_MAX 4096

/* The detailed message of a failure. Every handle owns one; internal functions that can
 * fail take an `ld_err *` and fill it in. Not shared between threads. Besides the message,
 * the machine-readable detail handed out by ld_reader_error() / ld_convert_error(): the
 * parameter the failure is about, the file and the sample (set with ld__err_param and
 * ld__err_where after ld__err, which resets them). */
typedef struct ld_err {
    int code;
    int sys_errno;  /* the errno behind an LD_EIO when a layer below reported one, else 0 */
    int param;      /* ld_convert_param / ld_reader_param id, or -1 */
    int reason;     /* ld_reason of a lower module's failure, or LD_WHY_NONE */
    int64_t sample; /* sample (reader) or input (converter) index, or -1 */
    char path[LD_ERRPATH_MAX]; /* the file, or "" */
    char msg[LD_ERRMSG_MAX];
    ld_error_detail detail; /* filled by ld__err_detail() from the fields above */
} ld_err;

/* Why a lower module (store, source) failed, in its own terms. Those modules know no
 * parameters; the pipeline that owns them (convert) maps a reason to the parameter to change
 * (ld_err.param). ld__err resets it. */
typedef enum ld_reason {
    LD_WHY_NONE = 0,
    LD_WHY_SHAPE_DIFFERS,    /* raw storage needs every sample of one shape */
    LD_WHY_OVERWRITES_INPUT, /* an output file would overwrite an input (a split's list) */
    LD_WHY_STRICT            /* stopped at an unreadable input, as asked (strict) */
} ld_reason;

/* Record a failure: sets e->code and e->msg (printf format) and returns `code`, so that
 * `return ld__err(e, LD_EFORMAT, "%s: bad", path);` reads naturally. `e` may be NULL.
 * A message longer than the buffer keeps its reason: the middle of its longest words (the
 * paths) is replaced by "..." instead of the end being cut off (see ld__vformat_msg). */
int ld__err(ld_err *e, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void ld__err_clear(ld_err *e);
/* Name the parameter a failure is about (its enum id). Returns e->code (LD_EINVAL if e is
 * NULL), so that `return ld__err_param(e, LD_C_STRICT);` follows an ld__err. */
int ld__err_param(ld_err *e, int param);
/* Give the reason (ld_reason) of a failure. Returns e->code (LD_EINVAL if e is NULL). */
int ld__err_reason(ld_err *e, int reason);
/* Name the file (NULL keeps the one set) and the sample (-1 keeps it) of a failure. Returns
 * e->code. */
int ld__err_where(ld_err *e, const char *path, int64_t sample);
/* The public detail of e: code, param, path (NULL when none), sample; all "none" when e
 * holds no error. Points into e. */
const ld_error_detail *ld__err_detail(const ld_err *e);

/* vsnprintf into dst[cap] for messages: when the text does not fit, the longest
 * space-free runs (paths, in our messages) lose their middle to "..." until it does, so
 * that the reason at the end survives a 4000-byte path. Only if that is not enough is the
 * end cut. */
void ld__vformat_msg(char *dst, size_t cap, const char *fmt, va_list ap);
void ld__format_msg(char *dst, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Check macros for functions with one exit: `int rc = LD_OK; ... fail: cleanup; return rc;` */
#define LD_CHECK(err, cond, code, ...)                                                             \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            rc = ld__err((err), (code), __VA_ARGS__);                                              \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* LD_CHECK that also gives the reason (ld_reason) of the failure. */
#define LD_CHECKR(err, cond, code, why, ...)                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            rc = ld__err((err), (code), __VA_ARGS__);                                              \
            ld__err_reason((err), (why));                                                          \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

/* LD_CHECK that also names the parameter (its enum id) the failure is about. */
#define LD_CHECKP(err, cond, code, param, ...)                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            rc = ld__err((err), (code), __VA_ARGS__);                                              \
            ld__err_param((err), (param));                                                         \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

#define LD_TRY(expr)                                                                               \
    do {                                                                                           \
        rc = (expr);                                                                               \
        if (rc < 0) goto fail;                                                                     \
    } while (0)

/* Overflow-checked size arithmetic: return 0 on overflow, 1 on success. */
static inline int ld__mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline int ld__add_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* A growable byte buffer. Grows only; reused across samples so that the hot path never
 * allocates once it has reached its working size. */
typedef struct ld_buf {
    uint8_t *p;
    size_t len, cap;
} ld_buf;

int ld__buf_reserve(ld_buf *b, size_t cap); /* LD_OK or LD_ENOMEM */
int ld__buf_append(ld_buf *b, const void *data, size_t n);
/* Append printf-formatted text (not NUL-counted: b->len grows by the text's length, and a NUL
 * follows it in the buffer). LD_OK, LD_ENOMEM, or LD_EINVAL for a format that fails. */
int ld__buf_printf(ld_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void ld__buf_free(ld_buf *b);

/* A decoded image, interleaved (HWC), `c` = 1 (gray) or 3 (RGB order), of 8-bit samples or
 * (depth 16) uint16 samples in host byte order. The pixel buffer grows only (`cap` bytes) and
 * is reused across images. Rows are tightly packed: stride = w * c samples. */
typedef struct ld_image {
    uint8_t *px;
    int w, h, c;
    size_t cap;
    int depth; /* bits per sample: 8 (0 counts as 8) or 16 */
} ld_image;

/* Make room for a w x h x c image of 8-bit samples (sets w, h, c, depth). LD_OK, LD_ENOMEM or
 * LD_ELIMIT on overflow. */
int ld__image_alloc(ld_image *im, int w, int h, int c);
/* The same with `depth` 8 or 16 bits per sample. */
int ld__image_alloc_depth(ld_image *im, int w, int h, int c, int depth);
/* Bytes per sample of im: 1 or 2. */
static inline int ld__image_sample_bytes(const ld_image *im)
{
    return im->depth == 16 ? 2 : 1;
}
void ld__image_free(ld_image *im);

/* Read a whole file into a reusable buffer. LD_OK, LD_EIO (message names path and errno),
 * LD_ELIMIT when larger than max_bytes. */
int ld__read_file(const char *path, ld_buf *out, size_t max_bytes, ld_err *e);

/* Number of online CPUs (at least 1). */
int ld__cpu_count(void);

/* Monotonic clock in seconds. */
double ld__now(void);

/* Strings: strdup that returns NULL on failure; snprintf into a new string. */
char *ld__strdup(const char *s);
/* The first n bytes of s (which must have them) and a NUL, malloc'd; NULL when out of memory. */
char *ld__strndup(const char *s, size_t n);

/* Interleaved 3-channel rows -> three planes: plane p of the oh x ow output (dst, planes
 * oh * ow bytes apart) takes channel ch[p] of the source, whose row y starts at
 * src + y * sy; mirror = 1 reverses each row. SSSE3 when the CPU has it (16 pixels per step;
 * the scalar loop needs three strided byte loads per pixel: 46-84 vs 10-12 us per 224x224
 * image, bench/kernel_rate.c). */
void ld__deinterleave3(const uint8_t *src, size_t sy, int oh, int ow, const int ch[3], int mirror,
                       uint8_t *dst);

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 if the bytes there are not one
 * (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, truncated).
 * s must be NUL-terminated. */
int ld__utf8_seq(const char *s);
/* Is the whole NUL-terminated string well-formed UTF-8? */
int ld__utf8_valid(const char *s);
/* Append s to b, each well-formed multi-byte UTF-8 character as it is and every other byte
 * as `esc` spells it: esc(byte, ascii, out) writes the byte's text to out (room for 8) and
 * returns its length; `ascii` is 0 for a byte that does not start a well-formed sequence.
 * The shared walk of the escapers for describe text and sidecar JSON. LD_OK or LD_ENOMEM. */
int ld__utf8_escape(ld_buf *b, const char *s,
                    size_t (*esc)(unsigned char ch, int ascii, char *out));
char *ld__asprintf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* After a failed write to `file`, the temporary of the output `out`: when the cause was a full
 * disk, a quota or the file size limit (`ulimit -f`), replace e's message with one that says
 * so, names `out` and the bytes written, and return 1; else leave e alone and return 0.
 * `err` is the errno the write failed with, when known: ENOSPC, EDQUOT, EFBIG decide; for
 * EIO or 0 (LMDB turns a short write into EIO) the file system is asked: `file`'s size
 * against RLIMIT_FSIZE, then the free space of its folder (under 1 MiB counts as full). */
int ld__explain_write_failure(ld_err *e, int err, const char *out, const char *file);

/* Is `path` (existing or not) the object dev/ino, or inside that directory? Walks from path
 * (or, when it does not exist, its parent folder) up through ".." to "/" comparing device
 * and inode, so symlinks, "..", hard links and bind mounts cannot hide it. Returns 2 for
 * the same object, 1 for inside it, 0 for neither (also when path's folder cannot be
 * opened: then nothing can be written there anyway), LD_ENOMEM when it could not tell (a
 * safety check must then refuse, not pass). */
int ld__path_within(const char *path, uint64_t dev, uint64_t ino);

/* Where an entry of a --split list (one HDF5 file per line) is: an absolute entry as it is;
 * a relative one relative to the list file's folder, or, when nothing is there, relative to
 * the current folder (where Caffe's HDF5Data layer looks). malloc'd, or NULL. */
char *ld__list_entry_path(const char *list_path, const char *entry);

/* A unique temporary name beside `final_path`: "<final>.tmp-<pid>-<owner address>", unique
 * per process and per live owner object without global state. malloc'd, or NULL. */
char *ld__temp_name(const char *final_path, const void *owner);

/* A database beside the LMDB at `path` holding another field of its samples (store/lmdb/
 * lmdb_write.c): `what` "labels" (label vectors) or "masks" (segmentation masks):
 * "train.lmdb" -> "train-labels.lmdb", "train_lmdb" -> "train_lmdb-labels". malloc'd, or
 * NULL. */
char *ld__lmdb_side_db_path(const char *path, const char *what);

/* A detection box (issue 28): corners x1 <= x2, y1 <= y2 in pixels (the box spans
 * [x1, x2) x [y1, y2): a whole image of w x h is 0, 0, w, h), its class index (into the
 * dataset's box classes) and flags LD_BOX_*. */
typedef struct ld_box {
    float x1, y1, x2, y2;
    int32_t label;
    uint32_t flags;
} ld_box;
#define LD_BOX_CROWD 1u     /* COCO iscrowd: a region of many objects */
#define LD_BOX_DIFFICULT 2u /* VOC difficult */

/* ---- parameter tables (ld_param_desc, shared by convert and reader) ---- */

/* Check `v` for the integer, boolean or enum parameter `d` of the handle named `who`
 * ("convert", "reader"): LD_OK, or LD_EINVAL with a message naming the parameter and what it
 * accepts (the range, or the choice names: a value of another enum is not one of them). A
 * parameter of another type is refused naming the setter to use. */
int ld__param_check(ld_err *e, const char *who, const ld_param_desc *d, int64_t v);

/* LD_EINVAL "who: NAME is a T parameter: set it with SETTER" for a setter of the wrong type. */
int ld__param_wrong_type(ld_err *e, const char *who, const ld_param_desc *d);

#endif /* LD_INTERNAL_H */
