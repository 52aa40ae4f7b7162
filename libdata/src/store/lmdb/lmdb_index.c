/* The saved record index file, libdata.idx: format and checks in lmdb_index.h. */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include "store/lmdb/lmdb_index.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define HDR 96                           /* header bytes */
#define CHUNK ((size_t)64 << 10)         /* the writer's buffer */
#define IO_MAX ((size_t)1 << 30)         /* bytes per read()/write() call (Linux: < 2 GiB) */
static const char magic[8] = "LDLMDBIX"; /* not NUL-terminated */

/* ---- CRC-32: zlib's crc32_z, which the library already uses (png_dec.c checks PNG chunks
 * with it), over the header and both arrays as stored. */

/* ---- little-endian fields ---- */

static void put32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int k = 0; k < 8; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static int big_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0;
}

static void header(uint8_t *h, const ld_lmdb_snap *id, uint32_t maxlen, int keyed)
{
    memset(h, 0, HDR);
    memcpy(h, magic, sizeof magic);
    put32(h + 8, LD_LMDB_INDEX_VERSION);
    put32(h + 12, HDR);
    put64(h + 16, id->n);
    put64(h + 24, id->txnid);
    put64(h + 32, id->last_pgno);
    put64(h + 40, id->fsize);
    put32(h + 48, id->psize);
    put32(h + 52, maxlen);
    put32(h + 56, keyed ? 1 : 0);
    put32(h + 60, id->depth);
    put64(h + 64, id->branch);
    put64(h + 72, id->leaf);
    put64(h + 80, id->overflow);
}

/* ---- writing ---- */

/* n bytes at *at (advanced): 0, or -1 with errno. pwrite, which tests/fault wraps. */
static int write_all(int fd, const uint8_t *p, size_t n, uint64_t *at)
{
    while (n) {
        const ssize_t w = pwrite(fd, p, n < IO_MAX ? n : IO_MAX, (off_t)*at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? -1 : (errno = EIO, -1);
        p += w;
        *at += (uint64_t)w;
        n -= (size_t)w;
    }
    return 0;
}

/* Room for `need` more bytes in buf (CHUNK), which holds `*used`: when it is full, add it to
 * the CRC and write it out. 1, or 0 when the write failed. */
static int room(uLong *crc, int fd, uint8_t *buf, size_t *used, size_t need, uint64_t *at)
{
    if (*used + need <= CHUNK) return 1;
    *crc = crc32_z(*crc, buf, *used);
    const int ok = write_all(fd, buf, *used, at) == 0;
    *used = 0;
    return ok;
}

int ld__lmdb_index_write(const char *dir, const char *out, const ld_lmdb_snap *id,
                         const uint64_t *off, const uint32_t *len, uint32_t maxlen, int keyed,
                         ld_err *e)
{
    int rc = LD_OK, fd = -1, ok = 1;
    uLong crc = crc32_z(0L, Z_NULL, 0);
    uint8_t *buf = malloc(CHUNK);
    size_t used = HDR;
    uint64_t at = 0; /* the file's bytes written */
    char *path = ld__asprintf("%s/%s", dir, LD_LMDB_INDEX);
    LD_CHECK(e, buf && path, LD_ENOMEM, "%s: out of memory", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    LD_CHECK(e, fd >= 0, LD_EIO, "%s: cannot create: %s", path, strerror(errno));
    header(buf, id, maxlen, keyed);
    /* the arrays, converted to little-endian through the buffer */
    for (uint64_t i = 0; ok && i < id->n; i++) {
        ok = room(&crc, fd, buf, &used, 8, &at);
        put64(buf + used, off[i]);
        used += 8;
    }
    for (uint64_t i = 0; ok && i < id->n; i++) {
        ok = room(&crc, fd, buf, &used, 4, &at);
        put32(buf + used, len[i]);
        used += 4;
    }
    if (ok) {
        crc = crc32_z(crc, buf, used);
        if (used + 4 > CHUNK) {
            ok = write_all(fd, buf, used, &at) == 0;
            used = 0;
        }
        put32(buf + used, (uint32_t)crc);
        used += 4;
    }
    ok = ok && write_all(fd, buf, used, &at) == 0 && fsync(fd) == 0;
    const int err = ok ? 0 : errno;
    ok = (close(fd) == 0) & ok;
    fd = -1;
    if (!ok && !ld__explain_write_failure(e, err ? err : errno, out, path))
        ld__err(e, LD_EIO, "%s: write failed: %s", path, strerror(err ? err : errno));
    if (!ok) rc = LD_EIO;
fail:
    if (fd >= 0) close(fd);
    if (rc < 0 && path) unlink(path);
    free(path);
    free(buf);
    return rc;
}

/* ---- reading ---- */

/* n bytes at `at`: 0, or -1 with errno (EIO: the file ends first). */
static int read_full(int fd, void *to, size_t n, uint64_t at)
{
    uint8_t *p = to;
    while (n) {
        const ssize_t r = pread(fd, p, n < IO_MAX ? n : IO_MAX, (off_t)at);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return r < 0 ? -1 : (errno = EIO, -1);
        p += r;
        at += (uint64_t)r;
        n -= (size_t)r;
    }
    return 0;
}

/* Say why the file is not used: *rc = code, the reason into why; 1, for
 * `if (bad && WHY(...)) goto done;`. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int
say(char *why, size_t cap, int *rc, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    *rc = code;
    return 1;
}
#define WHY(code, ...) say(why, cap, &rc, (code), __VA_ARGS__)

int ld__lmdb_index_read(const char *dir, const ld_lmdb_snap *want, uint64_t *off, uint32_t *len,
                        uint32_t *maxlen, int *keyed, char *why, size_t cap)
{
    int rc = LD_OK, fd = -1;
    uint8_t h[HDR], tail[4];
    struct stat st;
    const uint64_t n = want->n;
    char *path = ld__asprintf("%s/%s", dir, LD_LMDB_INDEX);
    snprintf(why, cap, "?");
    if (!path) {
        snprintf(why, cap, "out of memory");
        return LD_EIO;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = errno == ENOENT ? LD_END : LD_EIO;
        snprintf(why, cap, "cannot open it: %s", strerror(errno));
        goto done;
    }
    if (fstat(fd, &st) != 0 && WHY(LD_EIO, "cannot stat it: %s", strerror(errno))) goto done;
    if (read_full(fd, h, HDR, 0) != 0 &&
        WHY(errno == EIO ? LD_EFORMAT : LD_EIO, "cannot read its header: %s",
            errno == EIO ? "the file is shorter" : strerror(errno)))
        goto done;
    const uint32_t version = get32(h + 8), flags = get32(h + 56), hmax = get32(h + 52);
    const uint64_t size = HDR + 12 * n + 4; /* n <= data.mdb's size / 10: no overflow */
    if (memcmp(h, magic, sizeof magic) != 0) {
        WHY(LD_EFORMAT, "not a libdata record index (magic)");
    } else if (version != LD_LMDB_INDEX_VERSION || get32(h + 12) != HDR) {
        WHY(LD_EFORMAT, "version %u, this build reads version %u", version, LD_LMDB_INDEX_VERSION);
    } else if (get64(h + 16) != n) {
        WHY(LD_EFORMAT, "made for %llu records, the database holds %llu",
            (unsigned long long)get64(h + 16), (unsigned long long)n);
    } else if (get64(h + 24) != want->txnid) {
        WHY(LD_EFORMAT,
            "made for transaction %llu, the database is at %llu (written since, by another "
            "program?)",
            (unsigned long long)get64(h + 24), (unsigned long long)want->txnid);
    } else if (get64(h + 32) != want->last_pgno || get64(h + 40) != want->fsize ||
               get32(h + 48) != want->psize || get32(h + 60) != want->depth ||
               get64(h + 64) != want->branch || get64(h + 72) != want->leaf ||
               get64(h + 80) != want->overflow || get64(h + 88) != 0 || flags > 1) {
        WHY(LD_EFORMAT, "made for another data.mdb (its size, pages or tree differ)");
    } else if ((uint64_t)st.st_size != size) {
        WHY(LD_EFORMAT, "%lld bytes, %llu expected (truncated?)", (long long)st.st_size,
            (unsigned long long)size);
    }
    if (rc < 0) goto done;
    posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED); /* all of it, at once (cold: one pass) */
    if ((read_full(fd, off, (size_t)n * 8, HDR) != 0 ||
         read_full(fd, len, (size_t)n * 4, HDR + 8 * n) != 0 ||
         read_full(fd, tail, 4, HDR + 12 * n) != 0) &&
        WHY(LD_EIO, "cannot read it: %s", strerror(errno)))
        goto done;
    uLong crc = crc32_z(0L, h, HDR);
    crc = crc32_z(crc, (const uint8_t *)off, (size_t)n * 8);
    crc = crc32_z(crc, (const uint8_t *)len, (size_t)n * 4);
    if ((uint32_t)crc != get32(tail) && WHY(LD_EFORMAT, "its CRC does not match (damaged)"))
        goto done;
    if (big_endian()) {
        for (uint64_t i = 0; i < n; i++) {
            off[i] = get64((const uint8_t *)&off[i]);
            len[i] = get32((const uint8_t *)&len[i]);
        }
    }
    uint32_t max = 0;
    for (uint64_t i = 0; i < n; i++) {
        const int bad = len[i] == LD_LMDB_BAD;
        if (bad ? off[i] != 0 : off[i] > want->fsize || len[i] > want->fsize - off[i]) {
            WHY(LD_EFORMAT, "record %llu lies outside data.mdb", (unsigned long long)i);
            goto done;
        }
        if (!bad && len[i] > max) max = len[i];
    }
    if (max != hmax && WHY(LD_EFORMAT, "its largest record is %lu bytes, not %lu",
                           (unsigned long)max, (unsigned long)hmax))
        goto done;
    *maxlen = max;
    *keyed = (int)(flags & 1);
done:
    if (fd >= 0) close(fd);
    free(path);
    return rc;
}
