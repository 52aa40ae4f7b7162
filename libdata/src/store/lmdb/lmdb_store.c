/* LMDB store: Caffe Datum records by index. The design is in lmdb_store.h. */
/* 64-bit off_t for pread/posix_fadvise on 32-bit machines; a no-op on 64-bit ones. Must come
 * before any system header. */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#define _GNU_SOURCE /* preadv2 and RWF_NOWAIT (the cache probe, see struct ld_store_ctx) */
#include "store/lmdb/lmdb_store.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "codec/codec.h"
#include "store/lmdb/datum.h"
#include "store/lmdb/lmdb_desc.h"
#include "store/lmdb/lmdb_index.h"
#include "store/store.h"

typedef struct lmdb_store {
    ld_store base;
    MDB_env *env;
    MDB_dbi dbi;
    char *path;
    /* The read transaction of the index, held until close: LMDB never hands the pages of a
     * snapshot that a reader holds to a writer, so the offsets stay valid while another
     * process adds to the database. */
    MDB_txn *snap;
    uint64_t *off;   /* record i's value is data.mdb[off[i], off[i] + len[i]) */
    uint32_t *len;   /* LD_LMDB_BAD: outside the file */
    uint32_t maxlen; /* the largest value, for the memory budget */
    int keyed;       /* record i's key starts with "%08d_" of i: errors name it cheaply */
    /* Raw 8-bit records: the first record's bytes before its pixels (channels, height, width,
     * the data field's tag and length), when short enough; 0 = no direct reads. See
     * read_direct. */
    uint8_t head[32];
    size_t head_len;
    int32_t head_label; /* the label the head sets (0: none), unless a record's tail does */
    int floats;         /* records carry float_data */
    int fd;             /* data.mdb, for pread */
    /* The file's bytes in LMDB's map: a key or value (of a corrupt database) that reaches past
     * them would be a SIGBUS, so every one is checked against them. */
    const uint8_t *map_lo, *map_hi;
    size_t psize, fsize;
    uint64_t last_pgno;
    ld_store *labels; /* label vectors: the label database (lmdb_write.c), or NULL */
    ld_store *masks;  /* segmentation masks: the mask database (lmdb_write.c), or NULL */
    ld_lmdb_snap id;  /* the snapshot s->snap, as the saved index names it (lmdb_index.h) */
    int idx_ok;       /* the database is <dir>/data.mdb: <dir>/libdata.idx may be its index */
    char how[256];    /* info.how when the saved index was not used */
} lmdb_store;

static int in_file(const lmdb_store *s, const MDB_val *v)
{
    const uint8_t *p = v->mv_data;
    return p >= s->map_lo && p <= s->map_hi && v->mv_size <= (size_t)(s->map_hi - p);
}

/* Where value v lies in data.mdb: its offset, and its size or LD_LMDB_BAD when it does not lie
 * inside the file (a corrupt database). */
static uint32_t value_at(const lmdb_store *s, const MDB_val *v, uint64_t *off)
{
    const int ok = in_file(s, v) && v->mv_size < LD_LMDB_BAD;
    *off = ok ? (uint64_t)((const uint8_t *)v->mv_data - s->map_lo) : 0;
    return ok ? (uint32_t)v->mv_size : LD_LMDB_BAD;
}

/* Read-ahead advice only when the records are not cached, as the HDF5 store does (see the
 * comment above its struct ld_store_ctx): posix_fadvise(WILLNEED) walks the page cache for
 * every page it is given even when all are cached: 6.3 % of a warm shuffled `dataconv bench`
 * (perf, 2,000 raw 3x224x224 records, -j1; 9 % of the worker's time). Skipping it when warm:
 * +18 % samples/s at -j2, +4 % at -j1 (medians of 6 alternating runs on the shared 2-core
 * machine, whose load made single runs vary by 2x). Reads first try preadv2(RWF_NOWAIT), which
 * copies what is cached and stops at the first page that is not (the rest is read with a plain
 * preadv); a context whose last piece was read wholly from the cache is warm and skips the advice
 * of the next piece. An advised piece proves nothing by its hits: the piece after it is advised
 * unless three of its records probe cached (looks_cached). So a cold epoch is advised piece by
 * piece as before. Without RWF_NOWAIT (EOPNOTSUPP, EINVAL, ENOSYS) the context always
 * advises.
 * The probe is preadv2 on the file rather than mincore() on LMDB's map: the records are read
 * with pread, not through the map, and the map is dropped from the process after open
 * (drop_map), while mincore() on a file mapping only sees the page cache for a caller that
 * owns the file or may write it (Linux >= 5.0); any other reader would always look cold. And
 * preadv2 probes while it reads: no system call is added on warm data. */
struct ld_store_ctx {
    uint8_t head[32], tail[64]; /* read_direct: the bytes around the pixels */
    ld_buf body;                /* the record's value, read with pread */
    ld_buf floats;              /* float_data records, converted */
    char name[320];             /* "<path>: record <i>, key '<key>'" for messages */
    ld_store_ctx *labels;       /* the label database's context */
    ld_store_ctx *masks;        /* the mask database's context */
    unsigned char probe;        /* reads try RWF_NOWAIT first */
    unsigned char missed;       /* a probed read since the last will_read found pages not cached */
    unsigned char pieces;       /* will_read called before (the first piece is always advised) */
    unsigned char advised;      /* the last piece was advised: its reads may hit because of it */
};

/* Resident memory. LMDB returns values as pointers into its shared, read-only map of
 * data.mdb, and every page read through a map stays mapped: one epoch over a 3 GB database
 * ended at 2.9 GiB RSS (clean page cache, but RSS all the same, and the OOM killer counts
 * it). Worse, when the page cache holds data.mdb in large folios (a copied database, or one
 * read sequentially by `cat` or `cp`), one fault maps the whole folio, up to 2 MiB around a
 * 4 KiB tree page: a shuffled epoch over 9,000 raw records touched about 100 leaf pages and
 * ended at 299 MB, 134 MB for 1,000 (issue 16).
 *
 * So the store walks the tree once, at open, and keeps where every record's value lies in
 * the file (12 bytes per record; ImageNet's 1.28 M records: 15 MiB), or reads that from the
 * index our writer saved from the same walk (lmdb_index.h, load_index). Reads are then one
 * pread() of the value into the context's buffer and advice is posix_fadvise(): after open,
 * nothing touches the map, and a database truncated under the reader gives a short read, an
 * error, instead of SIGBUS. The walk drops the map from the process every
 * LD_LMDB_DROP_EVERY records, so open itself stays at a few MiB. The describe scan
 * (ld__lmdb_scan), which needs the keys, walks with a cursor and drops the same way, and
 * reads the values with pread too.
 * Dropping is safe while other threads read: the pages stay in the page cache, and one
 * another thread is reading is faulted straight back with the same bytes. */
#define LD_LMDB_DROP_EVERY 256
/* Bytes the index walk advises ahead of itself (build_index). */
#define LD_LMDB_WALK_AHEAD ((uint64_t)16 << 20)
#define LD_LMDB_FOLIO ((uint64_t)2 << 20) /* the largest folio a fault maps (PMD size) */

static void drop_map(const lmdb_store *s)
{
    madvise((void *)(uintptr_t)s->map_lo, s->fsize, MADV_DONTNEED);
}

int ld__mdb_err(ld_err *e, int m, const char *path, const char *what)
{
    return ld__err(e, m == ENOMEM ? LD_ENOMEM : LD_EIO, "%s: %s: %s", path, what, mdb_strerror(m));
}

/* ---- sidecar ------------------------------------------------------------------------ */

int ld__lmdb_sidecar_read(const char *dir, ld_buf *out, ld_err *e)
{
    char *p = ld__asprintf("%s/%s", dir, LD_LMDB_SIDECAR);
    struct stat st;
    int rc;
    if (!p) return ld__err(e, LD_ENOMEM, "out of memory");
    if (stat(p, &st) != 0 && errno == ENOENT) {
        free(p);
        return LD_END;
    }
    out->len = 0;
    rc = ld__read_file(p, out, (size_t)1 << 24, e);
    if (rc == LD_OK) rc = ld__buf_append(out, "", 1);
    free(p);
    return rc;
}

const char *ld__lmdb_sidecar_value(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (l[0] == '"' && strncmp(l + 1, key, kl) == 0 && strncmp(l + 1 + kl, "\": ", 3) == 0)
            return l + kl + 4;
    }
    return NULL;
}

/* ---- keys --------------------------------------------------------------------------- */

/* The number before '_' of a "%08d_..." key, or -1. */
static int64_t key_number(const MDB_val *k)
{
    const char *s = k->mv_data;
    int64_t v = 0;
    size_t i = 0;
    for (; i < k->mv_size && i < 12 && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (s[i] - '0');
    return i >= 8 && i < k->mv_size && s[i] == '_' ? v : -1;
}

/* "<path>: key '<key>'", or "<path>: record <i> (corrupt key)" for a key outside the file. */
static void key_name(const lmdb_store *s, uint64_t i, const MDB_val *k, char *buf, size_t cap)
{
    int kl = k->mv_size > 200 ? 200 : (int)k->mv_size;
    if (!in_file(s, k))
        snprintf(buf, cap, "%s: record %llu (corrupt key)", s->path, (unsigned long long)i);
    else
        snprintf(buf, cap, "%s: key '%.*s'", s->path, kl, (const char *)k->mv_data);
}

/* Name record i for a message: its key, looked up only now (reads go by the index and never
 * see keys). Keys numbered 0..N-1 are found with one MDB_SET_RANGE; other databases are
 * stepped through, which costs a scan up to i, once, on the way to an error. */
static void name_record(const lmdb_store *s, uint64_t i, char *buf, size_t cap)
{
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val k, v;
    char prefix[32];
    int m;
    snprintf(buf, cap, "%s: record %llu", s->path, (unsigned long long)i);
    /* The failure may be the file shrunk under the reader: then a tree page past the new end
     * is a SIGBUS when touched through the map, so the key is looked up only in a file still
     * as long as it was at open. */
    struct stat st;
    if (fstat(s->fd, &st) != 0 || (uint64_t)st.st_size < s->fsize) return;
    if (mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) return;
    if (!mdb_cursor_open(txn, s->dbi, &cur)) {
        if (s->keyed) {
            int pl = snprintf(prefix, sizeof prefix, "%08llu_", (unsigned long long)i);
            k = (MDB_val){(size_t)pl, prefix};
            m = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        } else {
            m = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
            for (uint64_t j = 0; !m && j < i; j++)
                m = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
        }
        if (!m) key_name(s, i, &k, buf, cap);
        mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    drop_map(s);
}

/* ---- contexts ----------------------------------------------------------------------- */

static void ctx_free(ld_store *base, ld_store_ctx *cx)
{
    lmdb_store *s = (lmdb_store *)base;
    if (!cx) return;
    if (cx->labels) s->labels->vt->ctx_free(s->labels, cx->labels);
    if (cx->masks) s->masks->vt->ctx_free(s->masks, cx->masks);
    ld__buf_free(&cx->floats);
    ld__buf_free(&cx->body);
    free(cx);
}

static int ctx_create(ld_store *base, ld_store_ctx **out, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    *out = calloc(1, sizeof **out);
    if (!*out) return ld__err(e, LD_ENOMEM, "out of memory");
#if defined(RWF_NOWAIT)
    (*out)->probe = 1; /* cold until a piece is read wholly from the cache */
#endif
    int rc = s->labels ? s->labels->vt->ctx_create(s->labels, &(*out)->labels, e) : LD_OK;
    if (rc == LD_OK && s->masks) rc = s->masks->vt->ctx_create(s->masks, &(*out)->masks, e);
    if (rc < 0) {
        ctx_free(base, *out);
        *out = NULL;
    }
    return rc;
}

/* Label vectors: sample i's record in the label database (K x 1 x 1 float_data). */
static int st_label_vec(ld_store *base, ld_store_ctx *cx, uint64_t i, double *out, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    ld_rec rec;
    const int rc = s->labels->vt->read(s->labels, cx->labels, i, NULL, 0, &rec, e);
    if (rc < 0) return rc;
    for (uint32_t m = 0; m < base->info.label_k; m++) {
        float f;
        memcpy(&f, rec.data + 4 * m, sizeof f);
        out[m] = f;
    }
    return LD_OK;
}

/* Masks: sample i's record in the mask database: 1 x H x W bytes, or (uint16 masks) 1 x H x W
 * float_data values, each a whole number 0..65535. */
static int st_mask(ld_store *base, ld_store_ctx *cx, uint64_t i, uint8_t *out, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    const size_t n = (size_t)base->info.mask_h * (size_t)base->info.mask_w;
    ld_rec rec;
    if (base->info.mask_elem == 1) {
        const int rc = s->masks->vt->read(s->masks, cx->masks, i, out, n, &rec, e);
        if (rc < 0) return rc;
        if (rec.data != out) memcpy(out, rec.data, n);
        return LD_OK;
    }
    const int rc = s->masks->vt->read(s->masks, cx->masks, i, NULL, 0, &rec, e);
    if (rc < 0) return rc;
    uint16_t *o = (uint16_t *)(void *)out;
    for (size_t k = 0; k < n; k++) {
        float f;
        memcpy(&f, rec.data + 4 * k, sizeof f);
        if (!(f >= 0.0f && f <= 65535.0f && f == floorf(f)))
            return (ld__err(e, LD_EFORMAT,
                            "%s: the mask of sample %llu holds %.9g, not a class index 0..65535 "
                            "(corrupt mask database?)",
                            s->path, (unsigned long long)i, (double)f),
                    ld__err_where(e, s->path, (int64_t)i));
        o[k] = (uint16_t)f;
    }
    return LD_OK;
}

/* ---- reading ------------------------------------------------------------------------ */

/* Read iov[0 .. n) (consumed) from data.mdb at off: the bytes read, fewer where the file
 * ends, or -1 (errno) on an error. A context that probes first copies what the page cache
 * holds without waiting for I/O (preadv2 RWF_NOWAIT, see struct ld_store_ctx) and notes a
 * miss; the rest is read with preadv. */
static ssize_t read_at(const lmdb_store *s, ld_store_ctx *cx, struct iovec *iov, int n,
                       uint64_t off)
{
    size_t len = 0, done = 0;
    for (int k = 0; k < n; k++)
        len += iov[k].iov_len;
    int probe = 0;
#if defined(RWF_NOWAIT)
    probe = cx && cx->probe;
#else
    (void)cx;
#endif
    while (done < len) {
        ssize_t got;
#if defined(RWF_NOWAIT)
        if (probe) { /* what the page cache holds, without waiting for I/O */
            probe = 0;
            got = preadv2(s->fd, iov, n, (off_t)(off + done), RWF_NOWAIT);
            if (got < 0 && (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS)) {
                cx->probe = 0; /* not supported here: advise always */
                continue;
            }
            if (got != (ssize_t)(len - done)) cx->missed = 1;
            if (got <= 0) continue; /* EAGAIN: nothing cached at off; wait below */
        } else
#endif
            got = preadv(s->fd, iov, n, (off_t)(off + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -1;
        if (got == 0) break; /* the file ends */
        done += (size_t)got;
        while (got > 0) { /* drop what was read from the front of iov */
            if ((size_t)got >= iov->iov_len) {
                got -= (ssize_t)iov->iov_len;
                iov++;
                n--;
            } else {
                iov->iov_base = (uint8_t *)iov->iov_base + got;
                iov->iov_len -= (size_t)got;
                got = 0;
            }
        }
    }
    return (ssize_t)done;
}

/* Read the value at data.mdb[off, off + len) into `body` (len LD_LMDB_BAD: a value outside
 * the file); cx (or NULL) probes the cache. `name` names the record in messages. */
static int read_value(const lmdb_store *s, ld_store_ctx *cx, ld_buf *body, uint64_t off,
                      uint32_t len, const char *name, ld_err *e)
{
    int rc = LD_OK;
    LD_CHECK(e, len != LD_LMDB_BAD, LD_EFORMAT, "%s: record reaches past the end of data.mdb",
             name);
    LD_CHECK(e, ld__buf_reserve(body, len ? len : 1) == LD_OK, LD_ENOMEM,
             "%s: out of memory for a record of %lu bytes", name, (unsigned long)len);
    struct iovec v = {body->p, len};
    const ssize_t r = len ? read_at(s, cx, &v, 1, off) : 0;
    LD_CHECK(e, r == (ssize_t)len, r < 0 ? LD_EIO : LD_EFORMAT, "%s: %s", name,
             r < 0 ? strerror(errno) : "data.mdb ends inside the record (truncated?)");
fail:
    return rc;
}

/* Decode + validate the value in cx->body (`len` bytes) into rec. */
static int parse_rec(const lmdb_store *s, ld_store_ctx *cx, size_t len, const char *name,
                     ld_rec *rec, ld_err *e)
{
    ld_datum d;
    int rc = LD_OK;
    const ld_store_info *in = &s->base.info;
    LD_TRY(ld__datum_decode(cx->body.p, len, &d, &cx->floats, name, e));
    LD_TRY(ld__datum_validate(&d, name, e));
    LD_CHECK(e, d.encoded == in->encoded, LD_EFORMAT, "%s: %s record in a database of %s records",
             name, d.encoded ? "encoded" : "raw", in->encoded ? "encoded" : "raw");
    memset(rec, 0, sizeof *rec);
    rec->label = d.label;
    rec->c = d.channels;
    rec->h = d.height;
    rec->w = d.width;
    if (d.encoded) {
        rec->data = d.data;
        rec->len = d.data_len;
        return LD_OK;
    }
    LD_CHECK(e,
             d.channels == in->c && d.height == in->h && d.width == in->w &&
                 (d.data_len == 0) == (in->dtype == LD_SDT_F32),
             LD_EFORMAT,
             "%s: record shape %dx%dx%d (%s) differs from the first record's "
             "%dx%dx%d: raw records of different sizes cannot be batched (convert with "
             "resize_w and resize_h, or store encoded images)",
             name, d.channels, d.height, d.width, d.data_len ? "bytes" : "floats", in->c, in->h,
             in->w);
    if (in->dtype == LD_SDT_F32) {
        rec->data = (const uint8_t *)d.floats;
        rec->len = d.n_floats * sizeof(float);
    } else {
        rec->data = d.data;
        rec->len = d.data_len;
    }
fail:
    return rc;
}

/* Record i into rec (pointing into cx). The key costs a tree lookup, so the first attempt
 * names nothing; a failure is read again with the record's name for the message. */
static int read_rec(const lmdb_store *s, ld_store_ctx *cx, uint64_t i, ld_rec *rec, ld_err *e)
{
    if (read_value(s, cx, &cx->body, s->off[i], s->len[i], "", NULL) == LD_OK &&
        parse_rec(s, cx, s->len[i], "", rec, NULL) == LD_OK)
        return LD_OK;
    name_record(s, i, cx->name, sizeof cx->name);
    int rc = read_value(s, NULL, &cx->body, s->off[i], s->len[i], cx->name, e);
    if (rc == LD_OK) rc = parse_rec(s, cx, s->len[i], cx->name, rec, e);
    return rc;
}

/* The pixels of raw record i straight into dst (info.sample_bytes), with the label into rec;
 * 0 when the record is not laid out as the first one was (the caller then reads it whole).
 * Caffe's serializer and ours write a Datum's fields in field-number order: channels, height,
 * width, then `data`, then label and encoded. So a record whose bytes before its pixels equal
 * the first record's (s->head) has the same shape and pixel count, and one preadv puts the
 * pixels in the batch and the few bytes around them in the context: no copy of the pixels.
 * The tail is decoded on its own, and taken only when it sets none of the fields the head
 * gave or the pixels (proto2: a later field would override them) and does not say encoded:
 * such a record decodes whole to exactly these pixels and label. */
static int read_direct(const lmdb_store *s, ld_store_ctx *cx, uint64_t i, uint8_t *dst, ld_rec *rec)
{
    const size_t sb = s->base.info.sample_bytes, h = s->head_len, len = s->len[i];
    ld_datum t;
    if (!h || len == LD_LMDB_BAD || len < h + sb || len - h - sb > sizeof cx->tail) return 0;
    const size_t tl = len - h - sb;
    struct iovec iov[3] = {{cx->head, h}, {dst, sb}, {cx->tail, tl}};
    if (read_at(s, cx, iov, tl ? 3 : 2, s->off[i]) != (ssize_t)len) return 0;
    if (memcmp(cx->head, s->head, h) != 0) return 0;
    if (ld__datum_decode(cx->tail, tl, &t, NULL, "", NULL) != LD_OK || t.encoded ||
        (t.has & (LD_DATUM_HAS_CHANNELS | LD_DATUM_HAS_HEIGHT | LD_DATUM_HAS_WIDTH |
                  LD_DATUM_HAS_DATA | LD_DATUM_HAS_FLOATS)))
        return 0;
    *rec = (ld_rec){.data = dst,
                    .len = sb,
                    .c = s->base.info.c,
                    .h = s->base.info.h,
                    .w = s->base.info.w,
                    .label = t.has & LD_DATUM_HAS_LABEL ? t.label : s->head_label};
    return 1;
}

static int st_read(ld_store *base, ld_store_ctx *cx, uint64_t i, uint8_t *dst, size_t dst_len,
                   ld_rec *rec, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    int rc = LD_OK;
    LD_CHECK(e, i < base->info.n, LD_EINVAL, "%s: record %llu out of range (%llu records)", s->path,
             (unsigned long long)i, (unsigned long long)base->info.n);
    if (dst && dst_len == base->info.sample_bytes && read_direct(s, cx, i, dst, rec)) return LD_OK;
    LD_TRY(read_rec(s, cx, i, rec, e));
fail:
    if (rc < 0) ld__err_where(e, s->path, -1); /* the message names the file and the record */
    return rc;
}

/* A run of neighbours. Raw stores only (the contract's). */
static int st_read_run(ld_store *base, ld_store_ctx *cx, uint64_t first, size_t count, uint8_t *dst,
                       double *labels, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    const ld_store_info *in = &base->info;
    ld_rec r;
    int rc = LD_OK;
    int64_t at = -1; /* the record that failed */
    LD_CHECK(e, !in->encoded, LD_EINVAL, "%s: read_run needs raw records", s->path);
    LD_CHECK(e, first <= in->n && count <= in->n - first, LD_EINVAL,
             "%s: records %llu..+%zu out of range (%llu records)", s->path,
             (unsigned long long)first, count, (unsigned long long)in->n);
    for (size_t j = 0; j < count; j++) {
        uint8_t *to = dst + j * in->sample_bytes;
        if (!read_direct(s, cx, first + j, to, &r)) {
            at = (int64_t)(first + j);
            LD_TRY(read_rec(s, cx, first + j, &r, e));
            memcpy(to, r.data, in->sample_bytes);
        }
        labels[j] = r.label;
    }
fail:
    if (rc < 0) ld__err_where(e, s->path, at);
    return rc;
}

/* Whether the first byte of each of records idx[0], idx[n / 2] and idx[n - 1] is in the page
 * cache (preadv2 RWF_NOWAIT of one byte; 1 when it cannot be told). */
static int looks_cached(const lmdb_store *s, const uint64_t *idx, size_t n)
{
#if defined(RWF_NOWAIT)
    const size_t at[3] = {0, n / 2, n - 1};
    for (size_t t = 0; t < 3 && n; t++) {
        const uint64_t i = idx[at[t]];
        if (i >= s->base.info.n || s->len[i] == LD_LMDB_BAD || !s->len[i]) continue;
        uint8_t byte;
        struct iovec v = {&byte, 1};
        if (preadv2(s->fd, &v, 1, (off_t)s->off[i], RWF_NOWAIT) < 0 && errno == EAGAIN) return 0;
    }
#else
    (void)s;
    (void)idx;
    (void)n;
#endif
    return 1;
}

/* Readahead for a batch: the environment is opened with MDB_NORDAHEAD for random access, so
 * this is the only readahead then. Neighbouring values are advised as one range. Skipped
 * while the context reads from the cache (struct ld_store_ctx); the scan (cx NULL) always
 * advises. */
static void st_will_read(ld_store *base, ld_store_ctx *cx, const uint64_t *idx, size_t n)
{
    lmdb_store *s = (lmdb_store *)base;
    uint64_t poff = 0, plen = 0; /* the pending range */
    if (cx) {
        int warm = cx->probe && !cx->missed && cx->pieces;
        if (warm && cx->advised) warm = looks_cached(s, idx, n);
        cx->pieces = 1;
        cx->missed = 0;
        cx->advised = !warm;
        if (warm) return;
    }
    for (size_t j = 0; j < n; j++) {
        if (idx[j] >= base->info.n || s->len[idx[j]] == LD_LMDB_BAD) continue;
        const uint64_t off = s->off[idx[j]], len = s->len[idx[j]];
        if (plen && off >= poff && off <= poff + plen + s->psize) {
            plen = off + len > poff + plen ? off + len - poff : plen;
            continue;
        }
        if (plen) posix_fadvise(s->fd, (off_t)poff, (off_t)plen, POSIX_FADV_WILLNEED);
        poff = off;
        plen = len;
    }
    if (plen) posix_fadvise(s->fd, (off_t)poff, (off_t)plen, POSIX_FADV_WILLNEED);
}

/* The scan's readahead: advice for the next 2 x LD_LMDB_SCAN_AHEAD records' values, by the
 * index, every LD_LMDB_SCAN_AHEAD records. */
#define LD_LMDB_SCAN_AHEAD 64

static void scan_ahead(ld_store *base, uint64_t i)
{
    uint64_t idx[2 * LD_LMDB_SCAN_AHEAD];
    size_t n = 0;
    for (; n < 2 * LD_LMDB_SCAN_AHEAD && i + n < base->info.n; n++)
        idx[n] = i + n;
    st_will_read(base, NULL, idx, n);
}

int ld__lmdb_scan(ld_store *base, uint64_t max, ld_lmdb_scan_fn fn, void *user, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    ld_buf body = {0};
    char name[320];
    int rc = LD_OK, m;
    if ((m = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) != 0) {
        txn = NULL;
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot begin a read transaction"));
    }
    if ((m = mdb_cursor_open(txn, s->dbi, &cur)) != 0) {
        cur = NULL;
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot open a cursor"));
    }
    m = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
    for (uint64_t i = 0; i < max && m == 0; i++, m = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        ld_datum d;
        ld_err bad = {0};
        key_name(s, i, &k, name, sizeof name);
        if (i % LD_LMDB_SCAN_AHEAD == 0) scan_ahead(base, i);
        /* the value with pread, as the reader does; only the keys come through the map */
        uint64_t off;
        const uint32_t len = value_at(s, &v, &off);
        int got = read_value(s, NULL, &body, off, len, name, &bad);
        if (got == LD_ENOMEM) LD_TRY(ld__err(e, LD_ENOMEM, "%s", bad.msg));
        int ok = got == LD_OK &&
                 ld__datum_decode(body.p, v.mv_size, &d, NULL, name, &bad) == LD_OK &&
                 ld__datum_validate(&d, name, &bad) == LD_OK;
        if (fn(user, i, ok ? &d : NULL, name, ok ? NULL : bad.msg)) break;
        if ((i + 1) % LD_LMDB_DROP_EVERY == 0) drop_map(s); /* the tree pages */
    }
    if (m && m != MDB_NOTFOUND) rc = ld__mdb_err(e, m, s->path, "cursor read failed");
fail:
    if (cur) mdb_cursor_close(cur);
    if (txn) mdb_txn_abort(txn);
    ld__buf_free(&body);
    drop_map(s);
    return rc;
}

static void st_close(ld_store *base)
{
    lmdb_store *s = (lmdb_store *)base;
    if (!s) return;
    if (s->snap) mdb_txn_abort(s->snap);
    if (s->env) mdb_env_close(s->env);
    if (s->labels) s->labels->vt->close(s->labels);
    if (s->masks) s->masks->vt->close(s->masks);
    free(s->off);
    free(s->len);
    free(s->path);
    free(s);
}

/* Names: the keys of the snapshot the index was built from (record i = the i-th key), with a
 * "%08d_" prefix dropped (ours and convert_imageset's keys are "%08d_<relative path>"). Keys
 * lie in the tree's leaf pages: the walk reads no value. */
static int st_names(ld_store *base, ld_store_name_fn fn, void *user, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int rc = LD_OK, m;
    if ((m = mdb_cursor_open(s->snap, s->dbi, &cur)) != 0) {
        cur = NULL;
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot open a cursor"));
    }
    uint64_t i = 0;
    for (m = mdb_cursor_get(cur, &k, &v, MDB_FIRST); m == 0 && i < base->info.n;
         m = mdb_cursor_get(cur, &k, &v, MDB_NEXT), i++) {
        LD_CHECK(e, in_file(s, &k), LD_EFORMAT, "%s: record %llu: its key lies outside data.mdb",
                 s->path, (unsigned long long)i);
        const char *key = k.mv_data;
        const size_t skip =
            key_number(&k) >= 0 ? (size_t)((const char *)memchr(key, '_', k.mv_size) - key) + 1 : 0;
        char name[512]; /* LMDB keys are at most 511 bytes */
        const size_t len = k.mv_size - skip < sizeof name ? k.mv_size - skip : sizeof name - 1;
        memcpy(name, key + skip, len);
        name[len] = '\0';
        LD_TRY(fn(user, i, name, strlen(name)));
        if ((i + 1) % LD_LMDB_DROP_EVERY == 0) drop_map(s);
    }
    LD_CHECK(e, i == base->info.n, LD_EFORMAT,
             "%s: %llu keys for %llu records (the database changed or is corrupt)", s->path,
             (unsigned long long)i, (unsigned long long)base->info.n);
fail:
    if (cur) mdb_cursor_close(cur);
    drop_map(s);
    return rc;
}

static const ld_store_vt lmdb_store_vt = {.ctx_create = ctx_create,
                                          .ctx_free = ctx_free,
                                          .read = st_read,
                                          .will_read = st_will_read,
                                          .close = st_close,
                                          .read_run = st_read_run,
                                          .label_vec = st_label_vec,
                                          .mask = st_mask,
                                          .names = st_names};
/* Returns an LMDB/errno code (0 = ok), not an ld status. */
static int env_open(lmdb_store *s, unsigned flags)
{
    int m = mdb_env_create(&s->env);
    if (m) {
        s->env = NULL;
        return m;
    }
    m = mdb_env_set_maxreaders(s->env, 256);
    if (!m) m = mdb_env_open(s->env, s->path, flags, 0664);
    if (m) {
        mdb_env_close(s->env);
        s->env = NULL;
        return m;
    }
    return 0;
}

/* LMDB maps data.mdb and trusts it: a page past the end of a truncated file is a SIGBUS
 * on first touch. The meta page says how many pages are in use, so compare that with the
 * file's real size before reading anything. (A file truncated by someone else *while* it is
 * being read cannot be caught this way; see reader.h.) */
static int check_file_size(lmdb_store *s, const char *path, ld_err *e)
{
    int rc = LD_OK, fd = -1;
    MDB_envinfo info;
    MDB_stat st;
    struct stat fs;
    LD_CHECK(e,
             mdb_env_get_fd(s->env, &fd) == 0 && fd >= 0 && fstat(fd, &fs) == 0 &&
                 mdb_env_info(s->env, &info) == 0 && mdb_env_stat(s->env, &st) == 0,
             LD_EIO, "%s: cannot inspect the LMDB file", path);
    const uint64_t need = ((uint64_t)info.me_last_pgno + 1) * (uint64_t)st.ms_psize;
    LD_CHECK(e, (uint64_t)fs.st_size >= need, LD_EFORMAT,
             "%s: data.mdb is truncated (%lld bytes, its pages need %llu)", path,
             (long long)fs.st_size, (unsigned long long)need);
    s->psize = st.ms_psize;
    s->fsize = (size_t)fs.st_size;
    s->fd = fd;
    s->last_pgno = info.me_last_pgno;
fail:
    return rc;
}

/* Encoded records without a shape for every sample (no sidecar, or ours made without
 * --resize): take the first record's, from its Datum fields when set (ours), else from its
 * image header (convert_imageset --encoded sets neither channels nor height nor width). The
 * channels are the sidecar's when it gave them, else the record's, else the file's own (gray
 * JPEG/PNG: 1, else 3), which is what Caffe's DecodeDatumNative gives. */
static int first_shape(const ld_datum *d, const char *name, ld_store_info *in, ld_err *e)
{
    int rc = LD_OK;
    ld_codec *codec = NULL;
    if (d->channels > 0 && d->height > 0 && d->width > 0) {
        in->c = in->c > 0 ? in->c : d->channels;
        in->h = d->height;
        in->w = d->width;
        in->shape_from = "the first record's Datum fields";
        return LD_OK;
    }
    ld_img_info ii;
    ld_err he = {0};
    codec = ld__codec_create();
    LD_CHECK(e, codec, LD_ENOMEM, "out of memory");
    LD_CHECK(e, ld__img_info(codec, d->data, d->data_len, name, &ii, &he) == LD_OK, LD_EFORMAT,
             "%s (the first record: its Datum has no shape, so it is read from the image "
             "header)",
             he.msg);
    LD_CHECK(e, ii.w > 0 && ii.h > 0 && ii.w <= LD_DATUM_MAX_DIM && ii.h <= LD_DATUM_MAX_DIM,
             LD_EFORMAT, "%s: image of %dx%d pixels is not supported", name, ii.w, ii.h);
    in->c = in->c > 0 ? in->c : ii.channels;
    in->h = ii.h;
    in->w = ii.w;
    in->shape_from = "the first record's image header";
fail:
    ld__codec_free(codec);
    return rc;
}

/* probe, the first record of 8-bit pixels: its `h` bytes before them become s->head (see
 * read_direct) when they set nothing but the shape, the pixels' field and perhaps the label.
 * What they set is found by decoding them followed by zeros in place of the pixels. */
static int set_head(lmdb_store *s, const uint8_t *value, size_t h, ld_err *e)
{
    const size_t sb = s->base.info.sample_bytes;
    ld_datum hd;
    if (h > sizeof s->head) return LD_OK;
    uint8_t *buf = calloc(1, h + sb);
    if (!buf) return ld__err(e, LD_ENOMEM, "out of memory");
    memcpy(buf, value, h);
    if (ld__datum_decode(buf, h + sb, &hd, NULL, "", NULL) == LD_OK && hd.data == buf + h &&
        hd.data_len == sb && !hd.encoded && !(hd.has & LD_DATUM_HAS_FLOATS)) {
        memcpy(s->head, value, h);
        s->head_len = h;
        s->head_label = hd.label;
    }
    free(buf);
    return LD_OK;
}

/* probe, the first record: where LMDB mapped the file, then its Datum, which gives the storage
 * and (raw) the shape. `d` points into the map or `fl`; `name` (name_size bytes) is set to
 * the record's name for messages. */
static int probe_first(lmdb_store *s, MDB_cursor *cur, ld_datum *d, ld_buf *fl, char *name,
                       size_t name_size, ld_err *e)
{
    int rc = LD_OK, m;
    MDB_val k, v;
    ld_store_info *in = &s->base.info;
    if ((m = mdb_cursor_get(cur, &k, &v, MDB_FIRST)))
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot read the first record"));
    {
        /* LMDB does not say where it mapped the file (me_mapaddr is only for fixed maps), but
         * every page starts with its own page number: the page holding the first record's
         * node header gives the base. LMDB has just read that header (8 bytes before the
         * key), so its page lies inside the file; the key and value may not. */
        const uint8_t *pg =
            (const uint8_t *)(((uintptr_t)k.mv_data - 8) & ~(uintptr_t)(s->psize - 1));
        size_t pgno;
        memcpy(&pgno, pg, sizeof pgno);
        LD_CHECK(e, pgno <= s->last_pgno, LD_EFORMAT, "%s: corrupt page header", s->path);
        s->map_lo = pg - pgno * s->psize;
        s->map_hi = s->map_lo + s->fsize;
    }
    LD_CHECK(e, in_file(s, &k), LD_EFORMAT, "%s: the first key lies past the end of data.mdb",
             s->path);
    snprintf(name, name_size, "%s: key '%.*s'", s->path, k.mv_size > 200 ? 200 : (int)k.mv_size,
             (const char *)k.mv_data);
    LD_CHECK(e, in_file(s, &v), LD_EFORMAT, "%s: record reaches past the end of data.mdb", name);
    LD_TRY(ld__datum_decode(v.mv_data, v.mv_size, d, fl, name, e));
    LD_TRY(ld__datum_validate(d, name, e));
    in->encoded = d->encoded;
    in->label_float = 0;
    if (!d->encoded) {
        in->c = d->channels;
        in->h = d->height;
        in->w = d->width;
        in->dtype = d->data_len ? LD_SDT_U8 : LD_SDT_F32;
        in->sample_bytes = (size_t)d->channels * (size_t)d->height * (size_t)d->width *
                           (in->dtype == LD_SDT_F32 ? sizeof(float) : 1);
        in->order = d->channels == 3   ? LD_SORDER_BGR
                    : d->channels == 1 ? LD_SORDER_GRAY
                                       : LD_SORDER_UNKNOWN;
        s->floats = in->dtype == LD_SDT_F32;
        if (!s->floats)
            LD_TRY(set_head(s, v.mv_data, (size_t)(d->data - (const uint8_t *)v.mv_data), e));
    } else {
        in->dtype = LD_SDT_U8;
        in->order = LD_SORDER_RGB;
        in->made_order = LD_SORDER_BGR; /* Caffe's DecodeDatumNative gives BGR */
    }
fail:
    return rc;
}

/* The database named by sidecar key `key` (label_db, mask_db) beside this one, holding `what`:
 * opened into *out with its path in *path (free it); LD_OK with *out NULL when the key is
 * absent. Only a name beside this database is taken, never a path elsewhere. */
static int open_side_db(lmdb_store *s, const char *t, const char *key, const char *what,
                        ld_store **out, char **path, ld_err *e)
{
    int rc = LD_OK;
    char *name = NULL;
    *path = NULL;
    LD_CHECK(e, ld__side_str(t, key, &name) != LD_ENOMEM, LD_ENOMEM, "out of memory");
    if (!name) return LD_OK;
    LD_CHECK(e, *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, ".."), LD_EFORMAT,
             "%s/%s: %s '%s' is not a database name beside it", s->path, LD_LMDB_SIDECAR, key,
             name);
    size_t n = strlen(s->path);
    while (n > 1 && s->path[n - 1] == '/')
        n--;
    while (n > 0 && s->path[n - 1] != '/')
        n--;
    *path = ld__asprintf("%.*s%s", (int)n, s->path, name);
    LD_CHECK(e, *path, LD_ENOMEM, "out of memory");
    struct stat st;
    LD_CHECK(e, stat(*path, &st) == 0, LD_EIO,
             "%s: its %s are in %s, which is missing (%s): keep the two databases together",
             s->path, what, *path, strerror(errno));
    LD_TRY(ld__lmdb_store_open(*path, NULL, out, e));
fail:
    free(name);
    return rc;
}

/* Label vectors (sidecar "label_count" and "label_db"): open the label database beside this
 * one; it must hold one K x 1 x 1 float record per image record. */
static int open_label_db(lmdb_store *s, const char *t, ld_err *e)
{
    int rc = LD_OK;
    int64_t k = 0;
    char *path = NULL;
    if (!ld__side_i64(t, "label_count", &k) || k < 1 || k > LD_MAX_LABEL_K) return LD_OK;
    LD_TRY(open_side_db(s, t, "label_db", "label vectors", &s->labels, &path, e));
    if (!s->labels) return LD_OK; /* the label database itself */
    const ld_store_info *l = &s->labels->info;
    LD_CHECK(e,
             l->n == s->base.info.n && !l->encoded && l->dtype == LD_SDT_F32 && l->c == k &&
                 l->h == 1 && l->w == 1,
             LD_EFORMAT,
             "%s: its label database %s holds %llu records of %dx%dx%d %s, not %llu of %lldx1x1 "
             "floats: the two do not belong together; convert again",
             s->path, path, (unsigned long long)l->n, l->c, l->h, l->w,
             l->dtype == LD_SDT_F32 ? "floats" : "bytes", (unsigned long long)s->base.info.n,
             (long long)k);
    s->base.info.label_k = (uint32_t)k;
    s->base.info.label_float = 1;
    s->base.info.store_bytes += l->store_bytes;
    s->base.info.ctx_bytes += l->ctx_bytes;
fail:
    free(path);
    return rc;
}

/* Masks (sidecar "mask_db"): open the mask database beside this one; it must hold one
 * 1 x H x W uint8 record per image record, of the images' size. */
static int open_mask_db(lmdb_store *s, const char *t, ld_err *e)
{
    int rc = LD_OK;
    char *path = NULL, *field = NULL;
    LD_TRY(open_side_db(s, t, "mask_db", "masks", &s->masks, &path, e));
    if (!s->masks) return LD_OK;
    const ld_store_info *m = &s->masks->info;
    LD_CHECK(e,
             m->n == s->base.info.n && !m->encoded &&
                 (m->dtype == LD_SDT_U8 || m->dtype == LD_SDT_F32) && m->c == 1 && m->h >= 1 &&
                 m->w >= 1,
             LD_EFORMAT,
             "%s: its mask database %s holds %llu records of %dx%dx%d %s, not %llu masks of "
             "1xHxW bytes or (uint16 masks) float_data values: the two do not belong together; "
             "convert again",
             s->path, path, (unsigned long long)m->n, m->c, m->h, m->w,
             m->encoded ? "encoded images" : "values", (unsigned long long)s->base.info.n);
    LD_CHECK(e, ld__side_str(t, "mask_field", &field) != LD_ENOMEM, LD_ENOMEM, "out of memory");
    s->base.info.mask_h = m->h;
    s->base.info.mask_w = m->w;
    s->base.info.mask_is_label = field && !strcmp(field, "label");
    s->base.info.mask_elem = m->dtype == LD_SDT_F32 ? 2 : 1;
    s->base.info.store_bytes += m->store_bytes;
    s->base.info.ctx_bytes += m->ctx_bytes;
fail:
    free(path);
    free(field);
    return rc;
}

/* probe, the libdata.json sidecar when there is one (ours): the channel order, and for
 * encoded records the channels and the common size decoding gives. */
static int probe_sidecar(lmdb_store *s, int encoded, ld_err *e)
{
    ld_buf side = {0};
    ld_store_info *in = &s->base.info;
    int rc = ld__lmdb_sidecar_read(s->path, &side, e);
    if (rc == LD_END) return LD_OK;
    if (rc != LD_OK) goto fail;
    const char *t = (const char *)side.p;
    char *order = NULL;
    int64_t c = 0, h = 0, w = 0;
    rc = ld__side_str(t, "channel_order", &order); /* the typed reader: lmdb_desc.h */
    LD_CHECK(e, rc != LD_ENOMEM, LD_ENOMEM, "%s: out of memory", s->path);
    rc = LD_OK;
    if (order) {
        int o = !strcmp(order, "RGB")    ? LD_SORDER_RGB
                : !strcmp(order, "GRAY") ? LD_SORDER_GRAY
                                         : LD_SORDER_BGR;
        free(order);
        if (encoded)
            in->made_order = o;
        else
            in->order = o;
    }
    LD_TRY(open_label_db(s, t, e));
    LD_TRY(open_mask_db(s, t, e));
    const int hc = ld__side_i64(t, "channels", &c) && c > 0 && c <= LD_DATUM_MAX_CHANNELS;
    if (encoded && hc) /* the channels decoding should give */
        in->c = (int)c;
    if (encoded && hc && ld__side_i64(t, "height", &h) && ld__side_i64(t, "width", &w) && h > 0 &&
        w > 0 && h <= INT32_MAX && w <= INT32_MAX) {
        in->h = (int)h;
        in->w = (int)w;
        in->max_pixels = (uint64_t)in->h * (uint64_t)in->w;
    }
fail:
    ld__buf_free(&side);
    return rc;
}

/* The index (see LD_LMDB_DROP_EVERY): walk every record in key order with `cur` (of s->snap)
 * and keep where its value lies. Record i is the i-th in key order, as Caffe's Data layer
 * reads them, whatever the keys; `keyed` says they are also numbered "%08d_" 0..N-1. A value
 * outside the file is marked LD_LMDB_BAD (its read is the error, not the open); a tree LMDB
 * cannot walk is an error now. */
static int build_index(lmdb_store *s, MDB_cursor *cur, const MDB_stat *st, ld_err *e)
{
    int rc = LD_OK, m;
    MDB_val k, v;
    const uint64_t n = s->base.info.n;
    uint64_t i = 0;
    /* Read-ahead for the walk. The map is MDB_NORDAHEAD (MADV_RANDOM): every leaf page the
     * walk touches is its own 4 KiB read when not cached. Records of up to ~2 KiB lie in the
     * leaf pages themselves, which are then most of the file, written in key order: a cold
     * open of 100,000 such records (3x24x24 raw, 197 MiB) took 3.7-9.2 s (bench/scale.sh),
     * ~50,000 pages one at a time; 0.34-0.68 s with this (warm: 0.2-0.3 s). When the tree's
     * pages are at
     * least half of the file, the walk advises (WILLNEED) the LD_LMDB_WALK_AHEAD bytes from
     * the leaf page it is on, topped up as it passes the middle; larger records lie in
     * overflow pages between the leaf pages, where this would read the values too, so those
     * databases are walked as before. */
    const uint64_t tree = (uint64_t)st->ms_leaf_pages + st->ms_branch_pages;
    const int ahead = tree >= (s->last_pgno + 1) / 2;
    uint64_t adv_lo = 0, adv_hi = 0; /* the range advised last */
    /* The leaf pages walked since the map was last dropped: dropping only them costs less
     * than the whole map's page tables every LD_LMDB_DROP_EVERY records (the tree's few
     * branch pages are dropped at the end). */
    uint64_t span_lo = UINT64_MAX, span_hi = 0;
    /* A record's node takes at least 10 bytes of a leaf page (header, one key byte, its slot):
     * a count past that is a corrupt header, not an index to allocate (fuzz_lmdb_open). */
    LD_CHECK(e, n <= s->fsize / 10, LD_EFORMAT,
             "%s: the database says it holds %llu records, more than its %zu bytes can (corrupt?)",
             s->path, (unsigned long long)n, s->fsize);
    LD_CHECK(e, n <= SIZE_MAX / sizeof *s->off, LD_ENOMEM, "%s: %llu records: too many to index",
             s->path, (unsigned long long)n);
    s->off = malloc((size_t)n * sizeof *s->off);
    s->len = malloc((size_t)n * sizeof *s->len);
    LD_CHECK(e, s->off && s->len, LD_ENOMEM, "%s: out of memory for the index of %llu records",
             s->path, (unsigned long long)n);
    s->keyed = n <= 100000000u;
    for (m = mdb_cursor_get(cur, &k, &v, MDB_FIRST); m == 0 && i < n;
         m = mdb_cursor_get(cur, &k, &v, MDB_NEXT), i++) {
        if (s->keyed && (!in_file(s, &k) || key_number(&k) != (int64_t)i)) s->keyed = 0;
        const uint64_t at = in_file(s, &k) ? (uint64_t)((const uint8_t *)k.mv_data - s->map_lo) &
                                                 ~(uint64_t)(s->psize - 1)
                                           : UINT64_MAX;
        if (at != UINT64_MAX) {
            span_lo = at < span_lo ? at : span_lo;
            span_hi = at > span_hi ? at : span_hi;
        } else {
            span_lo = 0; /* a key outside the file: drop the whole map */
            span_hi = s->fsize;
        }
        if (ahead && at != UINT64_MAX) {
            if (at < adv_lo || at + LD_LMDB_WALK_AHEAD / 2 >= adv_hi) {
                const uint64_t from = at >= adv_lo && at < adv_hi ? adv_hi : at;
                posix_fadvise(s->fd, (off_t)from, (off_t)(at + LD_LMDB_WALK_AHEAD - from),
                              POSIX_FADV_WILLNEED);
                adv_lo = at;
                adv_hi = at + LD_LMDB_WALK_AHEAD;
            }
        }
        s->len[i] = value_at(s, &v, &s->off[i]);
        if (s->len[i] != LD_LMDB_BAD && s->len[i] > s->maxlen) s->maxlen = s->len[i];
        if ((i + 1) % LD_LMDB_DROP_EVERY == 0) {
            /* a fault maps the large folio around a page (up to 2 MiB): that much around */
            const uint64_t lo =
                span_lo > LD_LMDB_FOLIO ? (span_lo - LD_LMDB_FOLIO) & ~(LD_LMDB_FOLIO - 1) : 0;
            uint64_t hi = (span_hi + 2 * LD_LMDB_FOLIO) & ~(LD_LMDB_FOLIO - 1);
            hi = hi < s->fsize ? hi : s->fsize;
            madvise((void *)(uintptr_t)(s->map_lo + lo), (size_t)(hi - lo), MADV_DONTNEED);
            span_lo = UINT64_MAX;
            span_hi = 0;
        }
    }
    if (m && m != MDB_NOTFOUND) LD_TRY(ld__mdb_err(e, m, s->path, "cannot walk the records"));
    LD_CHECK(e, i == n && m != 0, LD_EFORMAT,
             "%s: the database says it holds %llu records, its tree %s%llu (corrupt?)", s->path,
             (unsigned long long)n, i == n ? "more than " : "", (unsigned long long)i);
fail:
    drop_map(s);
    return rc;
}

/* Does record i of the loaded index lie where the tree says (cur at it: k, v), and, in a
 * keyed index, is its key numbered i? */
static int index_agrees(const lmdb_store *s, uint64_t i, const MDB_val *k, const MDB_val *v)
{
    uint64_t off;
    const uint32_t len = value_at(s, v, &off);
    return off == s->off[i] && len == s->len[i] &&
           (!s->keyed || (in_file(s, k) && key_number(k) == (int64_t)i));
}

/* The index from the saved file (lmdb_index.h) instead of the walk, when the file was made for
 * this very snapshot. Beyond what ld__lmdb_index_read checks, the first and last records and,
 * when the keys are numbered, 8 between are looked up in the tree (a few pages: 1 + 9 descents)
 * and must lie where the file says. LD_OK: s->off, s->len, maxlen, keyed are set; else they
 * are not (the caller walks) and `why` says why, empty for a missing file. */
static int load_index(lmdb_store *s, MDB_cursor *cur, char *why, size_t cap)
{
    const uint64_t n = s->base.info.n;
    MDB_val k, v;
    int rc;
    why[0] = 0;
    /* what build_index refuses, it refuses with its message */
    if (!s->idx_ok || n > s->fsize / 10 || n > SIZE_MAX / sizeof *s->off) return LD_END;
    s->off = malloc((size_t)n * sizeof *s->off);
    s->len = malloc((size_t)n * sizeof *s->len);
    if (!s->off || !s->len) {
        rc = LD_ENOMEM;
        goto fail;
    }
    rc = ld__lmdb_index_read(s->path, &s->id, s->off, s->len, &s->maxlen, &s->keyed, why, cap);
    if (rc != LD_OK) {
        if (rc == LD_END) why[0] = 0;
        goto fail;
    }
    /* The map is dropped after each lookup: a descent maps the large folio around each page
     * it touches (see LD_LMDB_DROP_EVERY), up to 2 MiB a page; ten at once were +12 MiB of
     * peak RSS (cli_lmdb_memory). */
    int ok = !mdb_cursor_get(cur, &k, &v, MDB_FIRST) && index_agrees(s, 0, &k, &v);
    drop_map(s);
    ok = ok && !mdb_cursor_get(cur, &k, &v, MDB_LAST) && index_agrees(s, n - 1, &k, &v);
    drop_map(s);
    for (uint64_t j = 1; ok && s->keyed && j <= 8; j++) {
        const uint64_t i = n * j / 9;
        char prefix[32];
        const int pl = snprintf(prefix, sizeof prefix, "%08llu_", (unsigned long long)i);
        k = (MDB_val){(size_t)pl, prefix};
        ok = !mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE) && index_agrees(s, i, &k, &v);
        drop_map(s);
    }
    if (ok) return LD_OK;
    snprintf(why, cap, "its records do not lie where the database's tree has them");
    rc = LD_EFORMAT;
fail:
    free(s->off);
    free(s->len);
    s->off = NULL;
    s->len = NULL;
    s->maxlen = 0;
    s->keyed = 0;
    return rc;
}

/* Fill info: the record count, the first record, the sidecar, the index (saved or walked:
 * `walk` 1 always walks), and what the reader needs per thread. */
static int probe(lmdb_store *s, const ld_store_opts *o, int walk, ld_err *e)
{
    int rc = LD_OK, m;
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_stat stat;
    ld_buf fl = {0};
    ld_datum d;
    ld_store_info *in = &s->base.info;
    char name[320];
    (void)o;

    if ((m = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) != 0) {
        txn = NULL;
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot begin a read transaction"));
    }
    if ((m = mdb_dbi_open(txn, NULL, 0, &s->dbi)) || (m = mdb_stat(txn, s->dbi, &stat)))
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot open the database"));
    m = mdb_txn_commit(txn); /* keeps the dbi handle open */
    txn = NULL;
    if (m) LD_TRY(ld__mdb_err(e, m, s->path, "cannot open the database"));
    if ((m = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &s->snap)) != 0) {
        s->snap = NULL;
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot begin a read transaction"));
    }
    if ((m = mdb_cursor_open(s->snap, s->dbi, &cur)) || (m = mdb_stat(s->snap, s->dbi, &stat)))
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot open the database"));
    in->n = stat.ms_entries;
    s->id = (ld_lmdb_snap){.n = stat.ms_entries,
                           .txnid = (uint64_t)mdb_txn_id(s->snap),
                           .last_pgno = s->last_pgno,
                           .fsize = s->fsize,
                           .branch = stat.ms_branch_pages,
                           .leaf = stat.ms_leaf_pages,
                           .overflow = stat.ms_overflow_pages,
                           .psize = (uint32_t)s->psize,
                           .depth = stat.ms_depth};
    in->block = 1;
    in->how = "lmdb (empty)";
    if (in->n == 0) /* a valid, empty database: describe says so, the reader refuses it */
        goto fail;
    LD_TRY(probe_first(s, cur, &d, &fl, name, sizeof name, e));
    LD_TRY(probe_sidecar(s, d.encoded, e));
    if (d.encoded && (in->c <= 0 || in->h <= 0 || in->w <= 0)) LD_TRY(first_shape(&d, name, in, e));
    char why[160] = "";
    const int saved = walk ? LD_END : load_index(s, cur, why, sizeof why);
    LD_CHECK(e, saved != LD_ENOMEM, LD_ENOMEM, "%s: out of memory for the index of %llu records",
             s->path, (unsigned long long)in->n);
    if (saved != LD_OK) LD_TRY(build_index(s, cur, &stat, e));
    in->ctx_bytes = sizeof(ld_store_ctx) + s->maxlen + (s->floats ? in->sample_bytes : 0);
    in->store_bytes = sizeof *s + (size_t)in->n * (sizeof *s->off + sizeof *s->len);
    in->how = saved == LD_OK ? "lmdb, saved record index (pread)" : "lmdb, record index (pread)";
    if (saved != LD_OK && why[0]) { /* a saved index that does not fit: say why */
        snprintf(s->how, sizeof s->how, "lmdb, record index (pread; %s not used: %s)",
                 LD_LMDB_INDEX, why);
        in->how = s->how;
    }
fail:
    if (cur) mdb_cursor_close(cur);
    if (txn) mdb_txn_abort(txn);
    ld__buf_free(&fl);
    return rc;
}

/* LMDB files are not portable between 32- and 64-bit programs: page numbers and sizes are
 * size_t in the file. The meta page (page 0) starts with a page header whose first field is a
 * size_t, then the magic number: at byte 12 in a file written by a 32-bit program, at byte 16
 * by a 64-bit one. Returns 32, 64, or 0 (neither: not LMDB, or unreadable). Also gives the
 * size of data.mdb and the map size its meta page records (LMDB maps at least that much). */
static int lmdb_word_bits(const char *path, int is_dir, long long *fsize, uint64_t *mapsize)
{
    char data[4096];
    uint8_t meta[48];
    struct stat st;
    int bits = 0;
    snprintf(data, sizeof data, is_dir ? "%s/data.mdb" : "%s", path);
    FILE *f = fopen(data, "rb");
    *fsize = f && fstat(fileno(f), &st) == 0 ? (long long)st.st_size : -1;
    *mapsize = 0;
    if (f && fread(meta, 1, sizeof meta, f) == sizeof meta) {
        uint32_t m32, m64, v32;
        uint64_t v64;
        memcpy(&m32, meta + 12, 4);
        memcpy(&m64, meta + 16, 4);
        memcpy(&v32, meta + 24, 4); /* magic, version, address, then the map size */
        memcpy(&v64, meta + 32, 8);
        if (m32 == 0xBEEFC0DEu) {
            bits = 32;
            *mapsize = v32;
        } else if (m64 == 0xBEEFC0DEu) {
            bits = 64;
            *mapsize = v64;
        }
    }
    if (f) fclose(f);
    return bits;
}

/* The error of an environment that would not open: LMDB's reason plus what it means here. */
static int open_error(const char *path, int is_dir, int m, ld_err *e)
{
    long long fsize;
    uint64_t mapsize;
    const int bits = lmdb_word_bits(path, is_dir, &fsize, &mapsize);
    const int mine = (int)(8 * sizeof(void *));
    if (m == MDB_INVALID && bits && bits != mine)
        return ld__err(
            e, LD_EFORMAT,
            "%s: written by a %d-bit program, and this is a %d-bit one: LMDB files are "
            "not portable between 32- and 64-bit programs (page numbers are the size of a "
            "pointer); read it with a %d-bit build, or convert the images again here",
            path, bits, mine, bits);
    if (m == MDB_INVALID || m == MDB_VERSION_MISMATCH)
        return ld__err(e, LD_EFORMAT, "%s: not an LMDB database: %s", path, mdb_strerror(m));
    if (m == ENOMEM) {
        const uint64_t need = fsize > 0 && (uint64_t)fsize > mapsize ? (uint64_t)fsize : mapsize;
        return ld__err(e, LD_ENOMEM,
                       "%s: cannot open LMDB database: %s: LMDB maps the whole database (%llu MiB) "
                       "into the address space, and this process has no free range that large%s",
                       path, mdb_strerror(m), (unsigned long long)(need >> 20),
                       mine < 64 ? " (a 32-bit process: about 2.5 GiB at most, see the README, "
                                   "\"32-bit systems\"); read it on a 64-bit system, or use HDF5, "
                                   "which the reader streams at any size with bounded memory"
                                 : "; raise the limit (ulimit -v) or free address space");
    }
    return ld__mdb_err(e, m, path, "cannot open LMDB database");
}

static int store_open(const char *path, const ld_store_opts *o, int walk, ld_store **out, ld_err *e)
{
    int rc = LD_OK, m;
    struct stat st;
    static const ld_store_opts defaults = {0};
    lmdb_store *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s) return ld__err(e, LD_ENOMEM, "out of memory");
    if (!o) o = &defaults;
    s->base.vt = &lmdb_store_vt;
    s->path = ld__strdup(path);
    LD_CHECK(e, s->path, LD_ENOMEM, "out of memory");
    LD_CHECK(e, stat(path, &st) == 0, LD_EIO, "%s: %s", path, strerror(errno));
    unsigned flags = MDB_RDONLY | MDB_NOTLS | (o->random_access ? MDB_NORDAHEAD : 0) |
                     (S_ISDIR(st.st_mode) ? 0 : MDB_NOSUBDIR);
    m = env_open(s, flags);
    if (m == EACCES || m == EROFS) /* cannot create/open lock.mdb: read without locking */
        m = env_open(s, flags | MDB_NOLOCK);
    LD_CHECK(e, !(m == ENOENT && S_ISDIR(st.st_mode)), LD_EFORMAT,
             "%s: a folder without data.mdb, not an LMDB database (a folder of images is "
             "converted into a dataset first)",
             path);
    if (m) LD_TRY(open_error(path, S_ISDIR(st.st_mode), m, e));
    LD_TRY(check_file_size(s, path, e));
    if (!S_ISDIR(st.st_mode)) { /* sidecar lives beside data.mdb */
        char *slash = strrchr(s->path, '/');
        if (slash)
            *slash = 0;
        else
            strcpy(s->path, ".");
    }
    /* a data.mdb given by name is the directory's only when it is called data.mdb */
    const char *base = strrchr(path, '/');
    s->idx_ok = S_ISDIR(st.st_mode) || !strcmp(base ? base + 1 : path, "data.mdb");
    LD_TRY(probe(s, o, walk, e));
    *out = &s->base;
    return LD_OK;
fail:
    st_close(&s->base);
    return rc;
}

int ld__lmdb_store_open(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e)
{
    return store_open(path, o, 0, out, e);
}

/* The writer's: the walk is the reader's own, so the two agree by construction. */
int ld__lmdb_index_save(const char *dir, const char *out, ld_err *e)
{
    ld_store *st = NULL;
    ld_err oe = {0};
    int rc = LD_OK;
    if (store_open(dir, NULL, 1, &st, &oe) < 0) return LD_OK;
    const lmdb_store *s = (const lmdb_store *)st;
    if (st->info.n) /* an empty database has nothing to index */
        rc = ld__lmdb_index_write(dir, out, &s->id, s->off, s->len, s->maxlen, s->keyed, e);
    st->vt->close(st);
    return rc;
}
