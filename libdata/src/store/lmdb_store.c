/* LMDB store: Caffe Datum records by index. The design is in lmdb_store.h. */
#define _GNU_SOURCE
#include "store/lmdb_store.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/codec.h"
#include "store/datum.h"
#include "store/store.h"

typedef struct lmdb_store {
    ld_store base;
    MDB_env *env;
    MDB_dbi dbi;
    char *path;
    int keyed;  /* "%08d_" contiguous keys: MDB_SET_RANGE */
    int floats; /* records carry float_data */
    int fd;     /* data.mdb, for pread */
    /* The file's bytes in LMDB's map: a value (an overflow record of a corrupt database)
     * that reaches past them would be a SIGBUS, so every value is checked against them. */
    const uint8_t *map_lo, *map_hi;
    size_t psize, fsize;
    uint64_t last_pgno;
} lmdb_store;

static int in_file(const uint8_t *lo, const uint8_t *hi, const MDB_val *v)
{
    const uint8_t *p = v->mv_data;
    return p >= lo && p <= hi && v->mv_size <= (size_t)(hi - p);
}

static int value_in_file(const lmdb_store *s, const MDB_val *v)
{
    return in_file(s->map_lo, s->map_hi, v);
}

typedef struct ckpt {
    uint64_t idx;
    char *key;
    size_t len;
} ckpt;

struct ld_store_ctx {
    MDB_txn *txn;
    MDB_cursor *cur;
    ld_buf floats;
    char name[320]; /* "<path>: key '<key>'" for messages */
    uint64_t pos;   /* cursor mode: index of the record under the cursor */
    int positioned;
    ckpt ck[LD_LMDB_CHECKPOINTS];
    size_t n_ck;
    uint64_t stride;
    const uint8_t *lo, *hi;  /* the file's bytes in the map (see lmdb_store.map_lo) */
    size_t reads_since_drop; /* see account_read */
    ld_buf body;             /* the record read with pread (see LD_LMDB_PREAD) */
};

/* Resident memory. LMDB returns values as pointers into its shared, read-only map of
 * data.mdb, and every page read through a map stays mapped: one epoch over a 3 GB database
 * ended at 2.9 GiB RSS (clean page cache, but RSS all the same, and the OOM killer counts
 * it). So record bodies of LD_LMDB_PREAD bytes or more (overflow pages: a raw 224x224 image
 * is 150 KB) are read with pread() into a per-context buffer instead, never touching their
 * pages through the map; a database truncated under the reader then gives a short read, an
 * error, instead of SIGBUS. Only LMDB's own tree walks still fault pages in (with
 * fault-around, 64 KiB each): each context drops the whole map from the process every
 * LD_LMDB_DROP_EVERY records, which keeps that part at a few MiB per thread. Dropping is
 * safe while other threads read: the pages stay in the page cache, and one another thread
 * is reading is faulted straight back with the same bytes. */
#define LD_LMDB_PREAD ((size_t)16 << 10)
#define LD_LMDB_DROP_EVERY 256

static void account_read(const lmdb_store *s, ld_store_ctx *cx)
{
    if (++cx->reads_since_drop >= LD_LMDB_DROP_EVERY) {
        cx->reads_since_drop = 0;
        madvise((void *)(uintptr_t)s->map_lo, s->fsize, MADV_DONTNEED);
    }
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

/* ---- key scheme --------------------------------------------------------------------- */

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

static void set_name(ld_store_ctx *cx, const lmdb_store *s, const MDB_val *k)
{
    int kl = k->mv_size > 200 ? 200 : (int)k->mv_size;
    if (!value_in_file(s, k)) /* a corrupt node: its key is not even inside the file */
        snprintf(cx->name, sizeof cx->name, "%s: record %llu (corrupt key)", s->path,
                 (unsigned long long)cx->pos);
    else
        snprintf(cx->name, sizeof cx->name, "%s: key '%.*s'", s->path, kl,
                 (const char *)k->mv_data);
}

/* ---- contexts ----------------------------------------------------------------------- */

static void ctx_free(ld_store *base, ld_store_ctx *cx)
{
    (void)base;
    if (!cx) return;
    if (cx->cur) mdb_cursor_close(cx->cur);
    if (cx->txn) mdb_txn_abort(cx->txn);
    for (size_t i = 0; i < cx->n_ck; i++)
        free(cx->ck[i].key);
    ld__buf_free(&cx->floats);
    ld__buf_free(&cx->body);
    free(cx);
}

static int ctx_create(ld_store *base, ld_store_ctx **out, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    int rc = LD_OK, m;
    ld_store_ctx *cx = calloc(1, sizeof *cx);
    *out = NULL;
    if (!cx) return ld__err(e, LD_ENOMEM, "out of memory");
    cx->stride = 1;
    cx->lo = s->map_lo;
    cx->hi = s->map_hi;
    /* A read transaction for the context's life: values point into the map while it lives. */
    if ((m = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &cx->txn)) != 0) {
        cx->txn = NULL;
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot begin a read transaction"));
    }
    if ((m = mdb_cursor_open(cx->txn, s->dbi, &cx->cur)) != 0) {
        cx->cur = NULL;
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot open a cursor"));
    }
    *out = cx;
    return LD_OK;
fail:
    ctx_free(base, cx);
    return rc;
}

/* Remember the cursor's key as a checkpoint for index `idx` (kept sorted by index). */
static void add_ckpt(ld_store_ctx *cx, uint64_t idx, const MDB_val *k)
{
    size_t lo = 0;
    while (lo < cx->n_ck && cx->ck[lo].idx < idx)
        lo++;
    if (lo < cx->n_ck && cx->ck[lo].idx == idx) return;
    if (cx->n_ck == LD_LMDB_CHECKPOINTS) {
        /* thin out: keep multiples of twice the stride, then retry */
        size_t j = 0;
        cx->stride *= 2;
        for (size_t i = 0; i < cx->n_ck; i++) {
            if (cx->ck[i].idx % cx->stride == 0)
                cx->ck[j++] = cx->ck[i];
            else
                free(cx->ck[i].key);
        }
        cx->n_ck = j;
        if (idx % cx->stride == 0) add_ckpt(cx, idx, k);
        return;
    }
    if (!in_file(cx->lo, cx->hi, k))
        return; /* a corrupt key: no checkpoint (the read reports the record) */
    char *key = malloc(k->mv_size ? k->mv_size : 1);
    if (!key) return; /* checkpoints are an optimisation */
    memcpy(key, k->mv_data, k->mv_size);
    memmove(cx->ck + lo + 1, cx->ck + lo, (cx->n_ck - lo) * sizeof *cx->ck);
    cx->ck[lo] = (ckpt){idx, key, k->mv_size};
    cx->n_ck++;
}

static int step(ld_store_ctx *cx, MDB_cursor_op op, MDB_val *k, MDB_val *v)
{
    int m = mdb_cursor_get(cx->cur, k, v, op);
    if (m == 0) {
        cx->pos += op == MDB_PREV ? (uint64_t)-1 : 1;
        if (op == MDB_NEXT && cx->pos % cx->stride == 0) add_ckpt(cx, cx->pos, k);
    }
    return m;
}

/* Position the cursor on record i by stepping (cursor mode). */
static int seek_cursor(lmdb_store *s, ld_store_ctx *cx, uint64_t i, MDB_val *k, MDB_val *v,
                       ld_err *e)
{
    int m = 0;
    /* nearest checkpoint at or below i */
    size_t c = cx->n_ck;
    while (c > 0 && cx->ck[c - 1].idx > i)
        c--;
    uint64_t from = c ? cx->ck[c - 1].idx : 0;
    if (cx->positioned && cx->pos >= from && cx->pos <= i) {
        m = mdb_cursor_get(cx->cur, k, v, MDB_GET_CURRENT);
    } else if (cx->positioned && cx->pos > i && cx->pos - i < i - from) {
        m = mdb_cursor_get(cx->cur, k, v, MDB_GET_CURRENT);
        while (!m && cx->pos > i)
            m = step(cx, MDB_PREV, k, v);
    } else if (c) {
        *k = (MDB_val){cx->ck[c - 1].len, cx->ck[c - 1].key};
        m = mdb_cursor_get(cx->cur, k, v, MDB_SET_KEY);
        cx->pos = from;
    } else {
        m = mdb_cursor_get(cx->cur, k, v, MDB_FIRST);
        cx->pos = 0;
        if (!m) add_ckpt(cx, 0, k);
    }
    cx->positioned = m == 0;
    while (!m && cx->pos < i)
        m = step(cx, MDB_NEXT, k, v);
    if (m) {
        cx->positioned = 0;
        if (m == MDB_NOTFOUND)
            return ld__err(e, LD_EFORMAT, "%s: record %llu not found (database changed?)", s->path,
                           (unsigned long long)i);
        return ld__mdb_err(e, m, s->path, "cursor read failed");
    }
    return LD_OK;
}

static int seek_keyed(lmdb_store *s, ld_store_ctx *cx, uint64_t i, MDB_val *k, MDB_val *v,
                      ld_err *e)
{
    char prefix[32];
    int pl = snprintf(prefix, sizeof prefix, "%08llu_", (unsigned long long)i);
    *k = (MDB_val){(size_t)pl, prefix};
    int m = mdb_cursor_get(cx->cur, k, v, MDB_SET_RANGE);
    if (m == 0 && !in_file(cx->lo, cx->hi, k))
        return ld__err(e, LD_EFORMAT, "%s: record %llu: corrupt key (past the end of data.mdb)",
                       s->path, (unsigned long long)i);
    if (m == 0 && (k->mv_size < (size_t)pl || memcmp(k->mv_data, prefix, (size_t)pl) != 0))
        m = MDB_NOTFOUND;
    if (m == MDB_NOTFOUND)
        return ld__err(e, LD_EFORMAT,
                       "%s: no key starting with '%s' for record %llu: the keys "
                       "are not numbered 0..N-1",
                       s->path, prefix, (unsigned long long)i);
    return m ? ld__mdb_err(e, m, s->path, "cursor read failed") : LD_OK;
}

/* Decode + validate the value under the cursor into rec. */
static int decode_rec(lmdb_store *s, ld_store_ctx *cx, const MDB_val *k, const MDB_val *v,
                      ld_rec *rec, ld_err *e)
{
    ld_datum d;
    int rc = LD_OK;
    const ld_store_info *in = &s->base.info;
    set_name(cx, s, k);
    LD_CHECK(e, value_in_file(s, v), LD_EFORMAT, "%s: record reaches past the end of data.mdb",
             cx->name);
    const uint8_t *body = v->mv_data;
    if (v->mv_size >= LD_LMDB_PREAD) {
        const off_t at = (off_t)(body - s->map_lo);
        LD_TRY(ld__buf_reserve(&cx->body, v->mv_size));
        size_t got = 0;
        while (got < v->mv_size) {
            ssize_t r = pread(s->fd, cx->body.p + got, v->mv_size - got, at + (off_t)got);
            if (r < 0 && errno == EINTR) continue;
            LD_CHECK(e, r > 0, r < 0 ? LD_EIO : LD_EFORMAT, "%s: %s", cx->name,
                     r < 0 ? strerror(errno) : "data.mdb ends inside the record (truncated?)");
            got += (size_t)r;
        }
        body = cx->body.p;
    }
    LD_TRY(ld__datum_decode(body, v->mv_size, &d, &cx->floats, cx->name, e));
    LD_TRY(ld__datum_validate(&d, cx->name, e));
    LD_CHECK(e, d.encoded == in->encoded, LD_EFORMAT, "%s: %s record in a database of %s records",
             cx->name, d.encoded ? "encoded" : "raw", in->encoded ? "encoded" : "raw");
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
             cx->name, d.channels, d.height, d.width, d.data_len ? "bytes" : "floats", in->c, in->h,
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

static int st_read(ld_store *base, ld_store_ctx *cx, uint64_t i, uint8_t *dst, size_t dst_len,
                   ld_rec *rec, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    MDB_val k, v;
    int rc = LD_OK;
    (void)dst; /* records are returned in place (pointers into the map): no copy here */
    (void)dst_len;
    LD_CHECK(e, i < base->info.n, LD_EINVAL, "%s: record %llu out of range (%llu records)", s->path,
             (unsigned long long)i, (unsigned long long)base->info.n);
    if (s->keyed)
        LD_TRY(seek_keyed(s, cx, i, &k, &v, e));
    else
        LD_TRY(seek_cursor(s, cx, i, &k, &v, e));
    LD_TRY(decode_rec(s, cx, &k, &v, rec, e));
    account_read(s, cx);
fail:
    if (rc < 0) ld__err_where(e, s->path, -1); /* the message names the file ("record N") */
    return rc;
}

/* A run of neighbours: one positioning, then MDB_NEXT, which walks the leaf pages in order
 * instead of descending the tree for every record. Raw stores only (the contract's). */
static int st_read_run(ld_store *base, ld_store_ctx *cx, uint64_t first, size_t count, uint8_t *dst,
                       double *labels, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    const ld_store_info *in = &base->info;
    MDB_val k, v;
    ld_rec r;
    int rc = LD_OK, m;
    LD_CHECK(e, !in->encoded, LD_EINVAL, "%s: read_run needs raw records", s->path);
    LD_CHECK(e, first <= in->n && count <= in->n - first, LD_EINVAL,
             "%s: records %llu..+%zu out of range (%llu records)", s->path,
             (unsigned long long)first, count, (unsigned long long)in->n);
    for (size_t j = 0; j < count; j++) {
        if (j == 0 && s->keyed) {
            LD_TRY(seek_keyed(s, cx, first, &k, &v, e));
        } else if (j == 0) {
            LD_TRY(seek_cursor(s, cx, first, &k, &v, e));
        } else {
            m = s->keyed ? mdb_cursor_get(cx->cur, &k, &v, MDB_NEXT) : step(cx, MDB_NEXT, &k, &v);
            LD_CHECK(e, m != MDB_NOTFOUND, LD_EFORMAT, "%s: record %llu not found", s->path,
                     (unsigned long long)(first + j));
            if (m) LD_TRY(ld__mdb_err(e, m, s->path, "cursor read failed"));
            if (s->keyed) { /* the numbering is checked on every record, as in seek_keyed */
                char prefix[32];
                int pl =
                    snprintf(prefix, sizeof prefix, "%08llu_", (unsigned long long)(first + j));
                LD_CHECK(e, in_file(cx->lo, cx->hi, &k), LD_EFORMAT,
                         "%s: record %llu: corrupt key (past the end of data.mdb)", s->path,
                         (unsigned long long)(first + j));
                LD_CHECK(e, k.mv_size >= (size_t)pl && !memcmp(k.mv_data, prefix, (size_t)pl),
                         LD_EFORMAT,
                         "%s: expected a key starting with '%s': the keys are not "
                         "numbered 0..N-1",
                         s->path, prefix);
            }
        }
        LD_TRY(decode_rec(s, cx, &k, &v, &r, e));
        memcpy(dst + j * in->sample_bytes, r.data, in->sample_bytes);
        labels[j] = r.label;
        account_read(s, cx);
    }
fail:
    if (rc < 0 && !s->keyed) cx->positioned = 0;
    if (rc < 0) ld__err_where(e, s->path, -1);
    return rc;
}

int ld__lmdb_scan(ld_store *base, uint64_t max, ld_lmdb_scan_fn fn, void *user, ld_err *e)
{
    lmdb_store *s = (lmdb_store *)base;
    ld_store_ctx *cx = NULL;
    MDB_val k, v;
    int rc = LD_OK, m;
    LD_TRY(ctx_create(base, &cx, e));
    m = mdb_cursor_get(cx->cur, &k, &v, MDB_FIRST);
    for (uint64_t i = 0; i < max && m == 0; i++, m = mdb_cursor_get(cx->cur, &k, &v, MDB_NEXT)) {
        ld_datum d;
        ld_err bad = {0};
        set_name(cx, s, &k);
        int ok = value_in_file(s, &v) &&
                 ld__datum_decode(v.mv_data, v.mv_size, &d, NULL, cx->name, &bad) == LD_OK &&
                 ld__datum_validate(&d, cx->name, &bad) == LD_OK;
        if (fn(user, i, ok ? &d : NULL, cx->name, ok ? NULL : bad.msg)) break;
        account_read(s, cx); /* the values were read through the map: drop it now and then */
    }
    if (m && m != MDB_NOTFOUND) rc = ld__mdb_err(e, m, s->path, "cursor read failed");
fail:
    ctx_free(base, cx);
    return rc;
}

/* Readahead for a batch in keyed mode: locate each record and ask the kernel to read its
 * pages (the environment is opened with MDB_NORDAHEAD for random access, so this is the only
 * readahead then). Cursor mode skips it: seeking would cost the steps the read saves. */
static void st_will_read(ld_store *base, ld_store_ctx *cx, const uint64_t *idx, size_t n)
{
    lmdb_store *s = (lmdb_store *)base;
    long page = sysconf(_SC_PAGESIZE);
    if (!s->keyed || page <= 0) return;
    for (size_t j = 0; j < n; j++) {
        MDB_val k, v;
        if (idx[j] >= base->info.n || seek_keyed(s, cx, idx[j], &k, &v, NULL) != LD_OK) continue;
        uintptr_t a = (uintptr_t)v.mv_data & ~(uintptr_t)(page - 1);
        madvise((void *)a, (uintptr_t)v.mv_data + v.mv_size - a, MADV_WILLNEED);
    }
}

static void st_close(ld_store *base)
{
    lmdb_store *s = (lmdb_store *)base;
    if (!s) return;
    if (s->env) mdb_env_close(s->env);
    free(s->path);
    free(s);
}

static const ld_store_vt lmdb_store_vt = {.ctx_create = ctx_create,
                                          .ctx_free = ctx_free,
                                          .read = st_read,
                                          .will_read = st_will_read,
                                          .close = st_close,
                                          .read_run = st_read_run};

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

/* probe, the first record: where LMDB mapped the file, then its Datum, which gives the storage
 * and (raw) the shape. `d` points into the map or `fl`; `name` (name_size bytes) is set to
 * the record's name for messages; `first_zero`: its key is number 0. */
static int probe_first(lmdb_store *s, MDB_cursor *cur, ld_datum *d, ld_buf *fl, char *name,
                       size_t name_size, int *first_zero, ld_err *e)
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
    LD_CHECK(e, value_in_file(s, &k), LD_EFORMAT, "%s: the first key lies past the end of data.mdb",
             s->path);
    *first_zero = key_number(&k) == 0;
    snprintf(name, name_size, "%s: key '%.*s'", s->path, k.mv_size > 200 ? 200 : (int)k.mv_size,
             (const char *)k.mv_data);
    LD_CHECK(e, value_in_file(s, &v), LD_EFORMAT, "%s: record reaches past the end of data.mdb",
             name);
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
    } else {
        in->dtype = LD_SDT_U8;
        in->order = LD_SORDER_RGB;
        in->made_order = LD_SORDER_BGR; /* Caffe's DecodeDatumNative gives BGR */
    }
fail:
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
    const char *t = (const char *)side.p, *val;
    if ((val = ld__lmdb_sidecar_value(t, "channel_order"))) {
        int o = !strncmp(val, "\"RGB\"", 5)    ? LD_SORDER_RGB
                : !strncmp(val, "\"GRAY\"", 6) ? LD_SORDER_GRAY
                                               : LD_SORDER_BGR;
        if (encoded)
            in->made_order = o;
        else
            in->order = o;
    }
    const char *vc = ld__lmdb_sidecar_value(t, "channels");
    const char *vh = ld__lmdb_sidecar_value(t, "height");
    const char *vw = ld__lmdb_sidecar_value(t, "width");
    if (encoded && vc && atoi(vc) > 0) /* the channels decoding should give */
        in->c = atoi(vc);
    if (encoded && vc && vh && vw && atoi(vh) > 0 && atoi(vw) > 0) {
        in->h = atoi(vh);
        in->w = atoi(vw);
        in->max_pixels = (uint64_t)in->h * (uint64_t)in->w;
    }
fail:
    ld__buf_free(&side);
    return rc;
}

/* Fill info: the record count, the first record, the key scheme (from the last key), the
 * sidecar, and what the reader needs per thread. */
static int probe(lmdb_store *s, const ld_store_opts *o, ld_err *e)
{
    int rc = LD_OK, m;
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_stat stat;
    MDB_val k, v;
    ld_buf fl = {0};
    ld_datum d;
    ld_store_info *in = &s->base.info;
    char name[320];
    int first_zero = 0;
    (void)o;

    if ((m = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) != 0) {
        txn = NULL;
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot begin a read transaction"));
    }
    if ((m = mdb_dbi_open(txn, NULL, 0, &s->dbi)) || (m = mdb_stat(txn, s->dbi, &stat)) ||
        (m = mdb_cursor_open(txn, s->dbi, &cur)))
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot open the database"));
    in->n = stat.ms_entries;
    in->block = 1;
    in->how = "lmdb (empty)";
    if (in->n == 0) /* a valid, empty database: describe says so, the reader refuses it */
        goto fail;
    LD_TRY(probe_first(s, cur, &d, &fl, name, sizeof name, &first_zero, e));
    if ((m = mdb_cursor_get(cur, &k, &v, MDB_LAST)))
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot read the last record"));
    LD_CHECK(e, value_in_file(s, &k), LD_EFORMAT, "%s: the last key lies past the end of data.mdb",
             s->path);
    s->keyed = first_zero && in->n <= 100000000u && key_number(&k) == (int64_t)(in->n - 1);
    LD_TRY(probe_sidecar(s, d.encoded, e));
    if (d.encoded && (in->c <= 0 || in->h <= 0 || in->w <= 0)) LD_TRY(first_shape(&d, name, in, e));
    in->ctx_bytes = sizeof(ld_store_ctx) + (s->floats ? in->sample_bytes : 0) +
                    (s->keyed ? 0 : (size_t)LD_LMDB_CHECKPOINTS * 64);
    in->store_bytes = sizeof *s;
    in->how = s->keyed ? "lmdb, %08d_ keys (MDB_SET_RANGE)"
                       : "lmdb, cursor stepping (keys not numbered 0..N-1)";
fail:
    if (cur) mdb_cursor_close(cur);
    if (txn) {
        if (rc == LD_OK && (m = mdb_txn_commit(txn)) != 0) /* keeps the dbi handle open */
            rc = ld__mdb_err(e, m, s->path, "cannot open the database");
        else if (rc != LD_OK)
            mdb_txn_abort(txn);
    }
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

int ld__lmdb_store_open(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e)
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
             "%s: a folder without "
             "data.mdb, not an LMDB database (a folder of images is converted first: `dataconv "
             "%s OUT`)",
             path, path);
    if (m) LD_TRY(open_error(path, S_ISDIR(st.st_mode), m, e));
    LD_TRY(check_file_size(s, path, e));
    if (!S_ISDIR(st.st_mode)) { /* sidecar lives beside data.mdb */
        char *slash = strrchr(s->path, '/');
        if (slash)
            *slash = 0;
        else
            strcpy(s->path, ".");
    }
    LD_TRY(probe(s, o, e));
    *out = &s->base;
    return LD_OK;
fail:
    st_close(&s->base);
    return rc;
}
