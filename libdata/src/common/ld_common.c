/* Shared helpers: errors, buffers, images, files, clocks. */
#define _GNU_SOURCE
#include "common/ld_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

unsigned ld_version_number(void)
{
    return LD_VERSION_NUMBER;
}

const char *ld_version_string(void)
{
    return LD_VERSION_STRING;
}

const char *ld_strerror(int status)
{
    switch (status) {
    case LD_OK: return "success";
    case LD_END: return "end of epoch";
    case LD_ENOMEM: return "out of memory";
    case LD_EINVAL: return "invalid argument";
    case LD_EIO: return "input/output error";
    case LD_EFORMAT: return "corrupt or unsupported data";
    case LD_ELIMIT: return "over a limit";
    case LD_ECANCELED: return "canceled";
    case LD_ENOTSUP: return "not supported by this build";
    case LD_ESTATE: return "invalid call in this state";
    default: return "unknown status";
    }
}

int ld_has_feature(ld_feature f)
{
    switch (f) {
    case LD_FEATURE_HDF5:
#ifdef LD_HAVE_HDF5
        return 1;
#else
        return 0;
#endif
    case LD_FEATURE_LMDB:
#ifdef LD_HAVE_LMDB
        return 1;
#else
        return 0;
#endif
    case LD_FEATURE_PNG:
#ifdef LD_HAVE_PNG
        return 1;
#else
        return 0;
#endif
    case LD_FEATURE_THREADS: return 1;
    case LD_FEATURE_COCO:
#ifdef LD_HAVE_YAJL
        return 1;
#else
        return 0;
#endif
    case LD_FEATURE_VOC:
#ifdef LD_HAVE_LIBXML2
        return 1;
#else
        return 0;
#endif
    case LD_FEATURE_ARCHIVE:
#ifdef LD_HAVE_ARCHIVE
        return 1;
#else
        return 0;
#endif
    case LD_FEATURE_TIFF:
#ifdef LD_HAVE_TIFF
        return 1;
#else
        return 0;
#endif
    case LD_FEATURE_WEBP:
#ifdef LD_HAVE_WEBP
        return 1;
#else
        return 0;
#endif
    case LD_FEATURE_GIF:
#ifdef LD_HAVE_GIF
        return 1;
#else
        return 0;
#endif
    }
    return 0;
}

void ld_free(void *p)
{
    free(p);
}

/* Shorten s (NUL-terminated, in a buffer of its length + 1) in place to at most max bytes:
 * the longest space-free run loses its middle to "..." (keeping at least 8 of its bytes),
 * again and again while it is too long; the end is cut only when no run is long enough. */
static void shorten_middle(char *s, size_t max)
{
    size_t len = strlen(s);
    for (int round = 0; len > max && round < 64; round++) {
        size_t best = 0, best_len = 0;
        for (size_t i = 0; i < len;) {
            size_t j = i;
            while (j < len && s[j] != ' ')
                j++;
            if (j - i > best_len) best = i, best_len = j - i;
            i = j + 1;
        }
        if (best_len <= 11) break; /* "..." plus 8 kept bytes: nothing left to gain */
        size_t need = len - max;
        size_t keep = best_len > need + 3 + 8 ? best_len - need - 3 : 8;
        /* cut on a UTF-8 boundary so that the result stays valid where the input was */
        size_t head = keep / 2, tail = keep - head;
        while (head > 0 && ((unsigned char)s[best + head] & 0xC0) == 0x80)
            head--;
        while (tail > 0 && ((unsigned char)s[best + best_len - tail] & 0xC0) == 0x80)
            tail--;
        char *cut = s + best + head;
        memcpy(cut, "...", 3);
        memmove(cut + 3, s + best + best_len - tail, len - (best + best_len - tail) + 1);
        len = strlen(s);
    }
    if (len > max) {
        size_t n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
        s[n] = '\0';
    }
}

void ld__vformat_msg(char *dst, size_t cap, const char *fmt, va_list ap)
{
    if (!cap) return;
    va_list ap2;
    va_copy(ap2, ap);
    char *full = NULL;
    int n = vasprintf(&full, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        /* no memory for the long form: the plain cut is all that is left */
        vsnprintf(dst, cap, fmt, ap);
        return;
    }
    if ((size_t)n >= cap) shorten_middle(full, cap - 1);
    memcpy(dst, full, strlen(full) + 1);
    free(full);
}

void ld__format_msg(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ld__vformat_msg(dst, cap, fmt, ap);
    va_end(ap);
}

int ld__err(ld_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        ld__vformat_msg(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
        e->sys_errno = 0;
        e->param = -1;
        e->reason = LD_WHY_NONE;
        e->sample = -1;
        e->path[0] = '\0';
    }
    return code;
}

void ld__err_clear(ld_err *e)
{
    if (e) {
        e->code = LD_OK;
        e->sys_errno = 0;
        e->param = -1;
        e->reason = LD_WHY_NONE;
        e->sample = -1;
        e->path[0] = '\0';
        e->msg[0] = '\0';
    }
}

int ld__err_param(ld_err *e, int param)
{
    if (!e) return LD_EINVAL;
    e->param = param;
    return e->code;
}

int ld__err_reason(ld_err *e, int reason)
{
    if (!e) return LD_EINVAL;
    e->reason = reason;
    return e->code;
}

int ld__err_where(ld_err *e, const char *path, int64_t sample)
{
    if (!e) return LD_EINVAL;
    if (path) {
        size_t n = strlen(path);
        if (n >= sizeof e->path) n = sizeof e->path - 1; /* longer than any usable path */
        memcpy(e->path, path, n);
        e->path[n] = '\0';
    }
    if (sample >= 0) e->sample = sample;
    return e->code;
}

const ld_error_detail *ld__err_detail(const ld_err *e)
{
    /* The detail is a view of the record, rebuilt on each call (the record is copied by
     * value between threads, so it cannot keep a pointer into itself). */
    ld_err *m = (ld_err *)e;
    int set = e->code != LD_OK;
    m->detail.code = e->code;
    m->detail.param = set ? e->param : -1;
    m->detail.path = set && e->path[0] ? e->path : NULL;
    m->detail.sample = set ? e->sample : -1;
    return &m->detail;
}

int ld__buf_reserve(ld_buf *b, size_t cap)
{
    if (cap <= b->cap) return LD_OK;
    size_t ncap = b->cap ? b->cap : 4096;
    while (ncap < cap) {
        if (ncap > SIZE_MAX / 2) {
            ncap = cap;
            break;
        }
        ncap *= 2;
    }
    uint8_t *p = realloc(b->p, ncap);
    if (!p) return LD_ENOMEM;
    b->p = p;
    b->cap = ncap;
    return LD_OK;
}

int ld__buf_append(ld_buf *b, const void *data, size_t n)
{
    size_t need;
    if (!ld__add_size(b->len, n, &need)) return LD_ENOMEM;
    int rc = ld__buf_reserve(b, need);
    if (rc < 0) return rc;
    if (n) memcpy(b->p + b->len, data, n);
    b->len = need;
    return LD_OK;
}

int ld__buf_printf(ld_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return LD_EINVAL;
    size_t need;
    if (!ld__add_size(b->len, (size_t)n + 1, &need) || ld__buf_reserve(b, need) < 0)
        return LD_ENOMEM;
    va_start(ap, fmt);
    vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return LD_OK;
}

void ld__buf_free(ld_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

int ld__image_alloc(ld_image *im, int w, int h, int c)
{
    return ld__image_alloc_depth(im, w, h, c, 8);
}

int ld__image_alloc_depth(ld_image *im, int w, int h, int c, int depth)
{
    size_t n;
    if (w <= 0 || h <= 0 || c <= 0 || (depth != 8 && depth != 16) ||
        !ld__mul_size((size_t)w, (size_t)h, &n) || !ld__mul_size(n, (size_t)c * (depth / 8), &n))
        return LD_ELIMIT;
    if (n > im->cap) {
        /* free + malloc instead of realloc: the old pixels are not needed, don't copy them */
        free(im->px);
        im->px = malloc(n);
        im->cap = im->px ? n : 0;
        if (!im->px) return LD_ENOMEM;
    }
    im->w = w;
    im->h = h;
    im->c = c;
    im->depth = depth;
    return LD_OK;
}

void ld__image_free(ld_image *im)
{
    free(im->px);
    im->px = NULL;
    im->cap = 0;
    im->w = im->h = im->c = 0;
}

int ld__read_file(const char *path, ld_buf *out, size_t max_bytes, ld_err *e)
{
    int rc = LD_OK;
    struct stat st;
    /* O_NONBLOCK: opening a FIFO (or a device) named like an image must not block forever
     * waiting for a writer (the file type is checked right after); it changes nothing for
     * reads of a regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    LD_CHECK(e, fd >= 0, LD_EIO, "%s: cannot open: %s", path, strerror(errno));
    LD_CHECK(e, fstat(fd, &st) == 0, LD_EIO, "%s: cannot stat: %s", path, strerror(errno));
    LD_CHECK(e, !S_ISDIR(st.st_mode), LD_EIO, "%s: is a directory", path);
    LD_CHECK(e, S_ISREG(st.st_mode), LD_EIO, "%s: not a regular file", path);
    LD_CHECK(e, (uint64_t)st.st_size <= max_bytes, LD_ELIMIT,
             "%s: file too large (%lld bytes, limit %zu)", path, (long long)st.st_size, max_bytes);
    out->len = 0;
    LD_CHECK(e, ld__buf_reserve(out, (size_t)st.st_size + 1) == LD_OK, LD_ENOMEM,
             "%s: out of memory reading %lld bytes", path, (long long)st.st_size);
    /* Read until EOF rather than trusting st_size: the file may change under us. */
    for (;;) {
        if (out->len == out->cap) {
            LD_CHECK(e, out->len < max_bytes, LD_ELIMIT, "%s: file too large (limit %zu)", path,
                     max_bytes);
            LD_CHECK(e, ld__buf_reserve(out, out->cap + 1) == LD_OK, LD_ENOMEM, "%s: out of memory",
                     path);
        }
        ssize_t n = read(fd, out->p + out->len, out->cap - out->len);
        if (n < 0 && errno == EINTR) continue;
        LD_CHECK(e, n >= 0, LD_EIO, "%s: read error: %s", path, strerror(errno));
        if (n == 0) break;
        out->len += (size_t)n;
    }
fail:
    if (fd >= 0) close(fd);
    return rc;
}

int ld__cpu_count(void)
{
#ifdef __linux__
    cpu_set_t set; /* the CPUs this process may run on (taskset, a cgroup's cpuset) */
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

double ld__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *ld__strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

char *ld__strndup(const char *s, size_t n)
{
    char *d = n < SIZE_MAX ? malloc(n + 1) : NULL; /* (malloc: the fault injector fails it) */
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

int ld__utf8_seq(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    if (s[0] < 0x80) return 1;
    int n;
    unsigned lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3;
        if (s[0] == 0xE0) lo = 0xA0; /* overlong */
        if (s[0] == 0xED) hi = 0x9F; /* UTF-16 surrogates */
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4;
        if (s[0] == 0xF0) lo = 0x90; /* overlong */
        if (s[0] == 0xF4) hi = 0x8F; /* past U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

int ld__utf8_valid(const char *s)
{
    for (int n; *s; s += n)
        if (!(n = ld__utf8_seq(s))) return 0;
    return 1;
}

int ld__utf8_escape(ld_buf *b, const char *s, size_t (*esc)(unsigned char ch, int ascii, char *out))
{
    int rc = LD_OK;
    while (rc == LD_OK && s && *s) {
        const int n = ld__utf8_seq(s);
        char text[8];
        if (n > 1) { /* a well-formed multi-byte character, as is */
            rc = ld__buf_append(b, s, (size_t)n);
            s += n;
        } else {
            rc = ld__buf_append(b, text, esc((unsigned char)*s++, n == 1, text));
        }
    }
    return rc;
}

char *ld__asprintf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0) s = NULL;
    va_end(ap);
    return s;
}

int ld__explain_write_failure(ld_err *e, int err, const char *out, const char *file)
{
    struct stat st;
    unsigned long long size = stat(file, &st) == 0 ? (unsigned long long)st.st_size : 0;
    struct rlimit rl;
    int fsize_hit = getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
                    size >= (unsigned long long)rl.rlim_cur;
    if (err == EFBIG || ((err == EIO || err == 0) && fsize_hit)) {
        ld__err(e, LD_EIO,
                "file size limit exceeded while writing %s (%llu bytes written; the limit, "
                "'ulimit -f', is %llu bytes per file): raise the limit",
                out, size, fsize_hit ? (unsigned long long)rl.rlim_cur : size);
        if (e) e->sys_errno = EFBIG;
        return 1;
    }
    int full = err == ENOSPC || err == EDQUOT;
    if (!full && (err == EIO || err == 0)) {
        /* the folder of `file` (for an LMDB data.mdb, the database directory) */
        const char *slash = strrchr(file, '/');
        char *dir = slash ? ld__asprintf("%.*s", slash == file ? 1 : (int)(slash - file), file)
                          : ld__strdup(".");
        struct statvfs vs;
        full = dir && statvfs(dir, &vs) == 0 &&
               (unsigned long long)vs.f_bavail * vs.f_frsize < (1ull << 20);
        free(dir);
    }
    if (!full) return 0;
    ld__err(e, LD_EIO,
            "%s while writing %s (%llu bytes written; nothing was kept): free some "
            "space or write the output elsewhere",
            err == EDQUOT ? "disk quota exceeded" : "no space left on device", out, size);
    if (e) e->sys_errno = err == EDQUOT ? EDQUOT : ENOSPC;
    return 1;
}

int ld__path_within(const char *path, uint64_t dev, uint64_t ino)
{
    struct stat st;
    int fd = -1;
    if (stat(path, &st) == 0) {
        if ((uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino) return 2;
    }
    /* The folder holding path: path minus its last component (and trailing slashes). */
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 0 && path[n - 1] != '/')
        n--;
    while (n > 1 && path[n - 1] == '/')
        n--;
    char *dir = n ? ld__asprintf("%.*s", (int)n, path) : ld__strdup(".");
    if (!dir) return LD_ENOMEM;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    int found = 0;
    /* Up through ".." by descriptor: no path grows, and the walk follows the real tree. */
    for (int depth = 0; fd >= 0 && depth < 4096; depth++) {
        struct stat ds, ps;
        if (fstat(fd, &ds) != 0) break;
        if ((uint64_t)ds.st_dev == dev && (uint64_t)ds.st_ino == ino) {
            found = 1;
            break;
        }
        int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (up < 0 || fstat(up, &ps) != 0 || (ps.st_dev == ds.st_dev && ps.st_ino == ds.st_ino)) {
            if (up >= 0) close(up);
            break; /* "/" is its own parent */
        }
        close(fd);
        fd = up;
    }
    if (fd >= 0) close(fd);
    return found;
}

char *ld__list_entry_path(const char *list_path, const char *entry)
{
    const char *slash = strrchr(list_path, '/');
    if (entry[0] == '/' || !slash) return ld__strdup(entry);
    char *p = ld__asprintf("%.*s/%s", (int)(slash - list_path), list_path, entry);
    struct stat st;
    if (p && stat(p, &st) != 0 && stat(entry, &st) == 0) {
        free(p);
        return ld__strdup(entry);
    }
    return p;
}

char *ld__temp_name(const char *final_path, const void *owner)
{
    /* Strip trailing slashes so "out.lmdb/" gets "out.lmdb.tmp-..." beside it. */
    size_t n = strlen(final_path);
    while (n > 1 && final_path[n - 1] == '/')
        n--;
    return ld__asprintf("%.*s.tmp-%ld-%lx", (int)n, final_path, (long)getpid(),
                        (unsigned long)(uintptr_t)owner);
}

/* ---- parameter tables ---------------------------------------------------------------------- */

static const char *type_name(int type)
{
    switch (type) {
    case LD_PARAM_INT: return "integer";
    case LD_PARAM_BOOL: return "boolean";
    case LD_PARAM_ENUM: return "enum";
    case LD_PARAM_DOUBLE: return "double";
    case LD_PARAM_FLOATS: return "list-of-numbers";
    default: return "string";
    }
}

static const char *setter_suffix(int type)
{
    switch (type) {
    case LD_PARAM_DOUBLE: return "_double";
    case LD_PARAM_FLOATS: return "_floats";
    case LD_PARAM_STRING: return "_str";
    default: return "";
    }
}

int ld__param_wrong_type(ld_err *e, const char *who, const ld_param_desc *d)
{
    ld__err(e, LD_EINVAL, "%s: %s is a %s parameter: set it with ld_%s_set%s()", who, d->name,
            type_name(d->type), who, setter_suffix(d->type));
    return ld__err_param(e, d->id);
}

int ld__param_check(ld_err *e, const char *who, const ld_param_desc *d, int64_t v)
{
    if (d->type != LD_PARAM_INT && d->type != LD_PARAM_BOOL && d->type != LD_PARAM_ENUM)
        return ld__param_wrong_type(e, who, d);
    if (d->type != LD_PARAM_ENUM) {
        if (v < d->min || v > d->max) {
            ld__err(e, LD_EINVAL, "%s: %s = %lld is out of range [%lld, %lld]", who, d->name,
                    (long long)v, (long long)d->min, (long long)d->max);
            return ld__err_param(e, d->id);
        }
        return LD_OK;
    }
    char names[160] = "";
    size_t len = 0;
    for (size_t i = 0; i < d->nchoices; i++) {
        if (d->choices[i].value == v) return LD_OK;
        int k = snprintf(names + len, sizeof names - len, "%s%s = %lld", i ? ", " : "",
                         d->choices[i].name, (long long)d->choices[i].value);
        if (k > 0 && (size_t)k < sizeof names - len) len += (size_t)k;
    }
    ld__err(e, LD_EINVAL,
            "%s: %s = %lld is not one of its values (%s); a value of "
            "another enum is refused",
            who, d->name, (long long)v, names);
    return ld__err_param(e, d->id);
}

char *ld__lmdb_side_db_path(const char *path, const char *what)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    const int ext = n > 5 && !strncmp(path + n - 5, ".lmdb", 5);
    const size_t stem = ext ? n - 5 : n;
    return ld__asprintf("%.*s-%s%s", (int)stem, path, what, ext ? ".lmdb" : "");
}
