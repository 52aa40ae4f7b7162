/* Shared helpers: errors, buffers, images, files, clocks. */
#define _GNU_SOURCE
#include "ld_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    case LD_OK:
        return "success";
    case LD_END:
        return "end of epoch";
    case LD_ENOMEM:
        return "out of memory";
    case LD_EINVAL:
        return "invalid argument";
    case LD_EIO:
        return "input/output error";
    case LD_EFORMAT:
        return "corrupt or unsupported data";
    case LD_ELIMIT:
        return "over a limit";
    case LD_ECANCELED:
        return "canceled";
    case LD_ENOTSUP:
        return "not supported by this build";
    case LD_ESTATE:
        return "invalid call in this state";
    default:
        return "unknown status";
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
    case LD_FEATURE_THREADS:
        return 1;
    }
    return 0;
}

void ld_free(void *p)
{
    free(p);
}

int ld__err(ld_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
    }
    return code;
}

void ld__err_clear(ld_err *e)
{
    if (e) {
        e->code = LD_OK;
        e->msg[0] = '\0';
    }
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

void ld__buf_free(ld_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

int ld__image_alloc(ld_image *im, int w, int h, int c)
{
    size_t n;
    if (w <= 0 || h <= 0 || c <= 0 || !ld__mul_size((size_t)w, (size_t)h, &n) ||
        !ld__mul_size(n, (size_t)c, &n))
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

int ld__utf8_seq(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    if (s[0] < 0x80)
        return 1;
    int n;
    unsigned lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3;
        if (s[0] == 0xE0)
            lo = 0xA0; /* overlong */
        if (s[0] == 0xED)
            hi = 0x9F; /* UTF-16 surrogates */
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4;
        if (s[0] == 0xF0)
            lo = 0x90; /* overlong */
        if (s[0] == 0xF4)
            hi = 0x8F; /* past U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

int ld__utf8_valid(const char *s)
{
    for (int n; *s; s += n)
        if (!(n = ld__utf8_seq(s)))
            return 0;
    return 1;
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

char *ld__temp_name(const char *final_path, const void *owner)
{
    /* Strip trailing slashes so "out.lmdb/" gets "out.lmdb.tmp-..." beside it. */
    size_t n = strlen(final_path);
    while (n > 1 && final_path[n - 1] == '/')
        n--;
    return ld__asprintf("%.*s.tmp-%ld-%lx", (int)n, final_path, (long)getpid(),
                        (unsigned long)(uintptr_t)owner);
}
