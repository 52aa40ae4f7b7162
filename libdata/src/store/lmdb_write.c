/*
 * LMDB writer: one Caffe Datum per sample, the layout convert_imageset writes, so Caffe's
 * Data layer reads our databases unchanged.
 *
 *  - Keys "%08d_<rel>" with the output index: Caffe reads in key order, which is then the
 *    output order. The keys grow, so records go in with MDB_APPEND (no page splits in the
 *    middle, a compact tree) while the index has 8 digits; past 10^8 the keys no longer sort
 *    numerically (convert_imageset has the same limit) and we fall back to plain puts.
 *  - Records: raw = channels/height/width + CHW bytes as given (BGR by default) + label +
 *    encoded=false written explicitly (DALI treats a missing field as encoded). Encoded =
 *    the image bytes with encoded=true. We also set channels/height/width on encoded records
 *    (convert_imageset leaves them 0): Caffe ignores them for encoded data (DecodeDatumNative
 *    and DataTransformer::InferBlobShape take the shape from the decoded image), and they let
 *    `info` and our store report the shape without decoding.
 *  - Transactions commit every LD_LMDB_BATCH records or LD_LMDB_BATCH_BYTES bytes (8 MiB),
 *    whichever comes first: a write transaction holds its dirty pages in malloc'd memory
 *    until commit, so the byte bound keeps the writer at about 2 x 8 MiB (dirty pages + the
 *    replay copy) however large the images are. (32 MiB was no faster: commits without
 *    fsync are cheap.) After each commit the writer drops its mapping of the database's
 *    pages (see drop_mapped_pages): LMDB reads tree pages through its read-only map, and
 *    each such read mapped a page-cache folio of up to 2 MiB that stayed resident. The map
 *    starts at 64 MiB and grows on MDB_MAP_FULL: abort the transaction, enlarge the map,
 *    replay the uncommitted batch (kept in memory, bounded by the two limits above). No 1 TB
 *    sparse map, which 32-bit systems and some file systems refuse.
 *  - MDB_NOSYNC while writing and one mdb_env_sync() in finish(): the database is not
 *    visible under its final name before finish(), so a crash mid-way loses nothing that
 *    was published; syncing every commit would only cost time.
 *  - The database is built in a temporary directory beside the output and renamed in
 *    finish(). An existing LMDB under the output name is replaced: it is renamed aside, the
 *    new one renamed into place, then the old one deleted. Between those two renames the
 *    output name briefly does not exist (POSIX cannot swap two directories atomically);
 *    the old database is never half-overwritten. Anything else under the output name
 *    (a file, a directory with other files) is refused.
 *  - Metadata (class names, settings) goes to a sidecar file "libdata.json" inside the LMDB
 *    directory, not into the database: Caffe's Data layer parses every value as a Datum, so
 *    an extra key would break it. Caffe ignores other files in the directory.
 */
#define _GNU_SOURCE
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/sysmacros.h>
#endif
#include <unistd.h>
#include <dirent.h>
#include <stdarg.h>

#include "../codec/codec.h"
#include "datum.h"
#include "lmdb_store.h"
#include "store.h"

#define LD_LMDB_BATCH 1000
#define LD_LMDB_BATCH_BYTES ((size_t)8 << 20)
#define LD_LMDB_MAP_START ((size_t)64 << 20)

typedef struct lmdb_writer {
    ld_writer base;
    char *final, *tmp;
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    size_t mapsize;
    int maxkey;
    ld_buf rec, key;
    /* The uncommitted batch, for replay after MDB_MAP_FULL: records as
     * [u32 key length][u32 value length][key][value]. */
    ld_buf batch;
    size_t batch_n;
    uint64_t n;
    int finished, encoded;
    /* sidecar data, copied at create */
    ld_buf meta;
    int c, h, w; /* shape of the first sample, for the sidecar */
    int same_shape;
} lmdb_writer;

static int mdb_fail(ld_err *e, int mrc, const char *what, const char *path)
{
    int code = mrc == ENOMEM ? LD_ENOMEM : LD_EIO;
    return ld__err(e, code, "%s: %s: %s", path, what, mdb_strerror(mrc));
}

/* A failed write of the database: a full disk or `ulimit -f` is said as such (LMDB itself
 * reports a short write as "Input/output error"). */
static int write_fail(lmdb_writer *w, ld_err *e, int mrc, const char *what)
{
    char *file = ld__asprintf("%s/data.mdb", w->tmp);
    int explained = file && mrc != ENOMEM && mrc > 0 &&
                    ld__explain_write_failure(e, mrc == EIO ? 0 : mrc, w->final, file);
    free(file);
    return explained ? LD_EIO : mdb_fail(e, mrc, what, w->final);
}

/* ---- sidecar JSON -------------------------------------------------------------------- */

/* A JSON string. Names come from the file system and need not be UTF-8: a byte that does not
 * start a well-formed sequence is written as the lone surrogate U+DC00 + byte, Python's
 * "surrogateescape" (json.load gives the str that os.fsdecode gives for the same bytes, and
 * .encode("utf-8", "surrogateescape") restores them), so the file stays valid JSON and
 * nothing is lost. */
/* The record and sidecar buffers report a failed allocation as a bare LD_ENOMEM: give it the
 * database's name. */
static int buf_rc(lmdb_writer *w, ld_err *e, int rc)
{
    return rc == LD_ENOMEM ? ld__err(e, rc, "%s: out of memory", w->final) : rc;
}

static int json_str(ld_buf *b, const char *s)
{
    int rc = ld__buf_append(b, "\"", 1);
    while (rc == LD_OK && s && *s) {
        const unsigned char ch = (unsigned char)*s;
        const int n = ld__utf8_seq(s);
        char esc[8];
        if (n > 1) { /* a well-formed multi-byte character, as is */
            rc = ld__buf_append(b, s, (size_t)n);
            s += n;
            continue;
        }
        if (ch == '"' || ch == '\\')
            snprintf(esc, sizeof esc, "\\%c", ch);
        else if (ch < 0x20)
            snprintf(esc, sizeof esc, "\\u%04x", ch);
        else if (n == 0)
            snprintf(esc, sizeof esc, "\\udc%02x", ch);
        else {
            esc[0] = (char)ch;
            esc[1] = 0;
        }
        rc = ld__buf_append(b, esc, strlen(esc));
        s++;
    }
    return rc < 0 ? rc : ld__buf_append(b, "\"", 1);
}

static int json_raw(ld_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int json_raw(ld_buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return ld__buf_append(b, tmp, k < 0 ? 0 : (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

static const char *mode_name(int m, int w, int h)
{
    static const char *const names[] = {"squash", "crop", "pad", "max"};
    if (w == 0 && h == 0)
        return "none";
    return m >= 0 && m <= 3 ? names[m] : "unknown";
}

/* The part of the sidecar known at create time. One key per line: lmdb_store.c and
 * describe read it back with a line scanner, not a JSON parser (see lmdb_store.h). */
static int meta_begin(lmdb_writer *w, const ld_writer_opts *o)
{
    ld_buf *b = &w->meta;
    int rc = LD_OK;
    LD_TRY(json_raw(b, "{\n\"format\": \"libdata-lmdb\",\n\"format_version\": 1,\n"));
    LD_TRY(json_raw(b, "\"record\": \"caffe.Datum\",\n\"storage\": \"%s\",\n",
                    o->encoded ? "encoded" : "raw"));
    if (o->encoded) {
        LD_TRY(json_raw(b, "\"encoding\": "));
        LD_TRY(json_str(b, o->encoding ? o->encoding : "original"));
        LD_TRY(json_raw(b, ",\n"));
    }
    LD_TRY(json_raw(b, "\"channel_order\": \"%s\",\n\"layout\": \"CHW\",\n",
                    o->channels == 1 ? "GRAY" : o->channel_order == 1 ? "RGB" : "BGR"));
    LD_TRY(json_raw(b, "\"quality\": %d,\n\"resize_mode\": \"%s\",\n\"resize_w\": %d,\n"
                       "\"resize_h\": %d,\n",
                    o->quality, mode_name(o->resize_mode, o->resize_w, o->resize_h), o->resize_w,
                    o->resize_h));
    LD_TRY(json_raw(b, "\"source\": "));
    LD_TRY(json_str(b, o->source ? o->source : ""));
    LD_TRY(json_raw(b, ",\n\"note\": "));
    LD_TRY(json_str(b, o->note ? o->note : ""));
    LD_TRY(json_raw(b, ",\n\"tool\": \"libdata %s\",\n\"num_classes\": %zu,\n\"class_names\": [",
                    LD_VERSION_STRING, o->n_classes));
    for (size_t i = 0; i < o->n_classes; i++) {
        if (i)
            LD_TRY(json_raw(b, ", "));
        LD_TRY(json_str(b, o->class_names && o->class_names[i] ? o->class_names[i] : ""));
    }
    LD_TRY(json_raw(b, "],\n"));
fail:
    return rc;
}

static int write_sidecar(lmdb_writer *w, ld_err *e)
{
    int rc = LD_OK;
    FILE *f = NULL;
    size_t keep = w->meta.len;
    char *path = ld__asprintf("%s/%s", w->tmp, LD_LMDB_SIDECAR);
    LD_CHECK(e, path, LD_ENOMEM, "out of memory");
    LD_TRY(buf_rc(w, e, json_raw(&w->meta, "\"entries\": %llu,\n\"channels\": %d,\n"
                                           "\"height\": %d,\n\"width\": %d\n}\n",
                                 (unsigned long long)w->n, w->c, w->same_shape ? w->h : 0,
                                 w->same_shape ? w->w : 0)));
    f = fopen(path, "wb");
    LD_CHECK(e, f, LD_EIO, "%s: cannot create: %s", path, strerror(errno));
    int ok = fwrite(w->meta.p, 1, w->meta.len, f) == w->meta.len;
    ok = (fflush(f) == 0) & ok;
    ok = (fsync(fileno(f)) == 0) & ok;
    ok = (fclose(f) == 0) & ok;
    f = NULL;
    LD_CHECK(e, ok, LD_EIO, "%s: write failed: %s", path, strerror(errno));
fail:
    w->meta.len = keep; /* the tail is rewritten on a retry */
    if (f)
        fclose(f);
    free(path);
    return rc;
}

/* ---- replacing database directories (removal: ld__remove_db_dir, stale.c) -------------- */

/* Is `path` something we may replace: absent, an empty directory, or an LMDB directory
 * (nothing in it but data.mdb, lock.mdb, our sidecar)? */
static int replaceable(const char *path, int *exists)
{
    struct stat st;
    *exists = 0;
    if (lstat(path, &st) != 0)
        return errno == ENOENT;
    *exists = 1;
    if (!S_ISDIR(st.st_mode))
        return 0;
    int ok = 1;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        if (strcmp(n, ".") && strcmp(n, "..") && strcmp(n, "data.mdb") && strcmp(n, "lock.mdb") &&
            strcmp(n, LD_LMDB_SIDECAR))
            ok = 0;
    }
    closedir(d);
    return ok;
}

/* ---- transactions --------------------------------------------------------------------- */

static int txn_begin(lmdb_writer *w, ld_err *e)
{
    int m = mdb_txn_begin(w->env, NULL, 0, &w->txn);
    if (m) {
        w->txn = NULL;
        return mdb_fail(e, m, "cannot begin a write transaction", w->final);
    }
    return LD_OK;
}

static int put_one(lmdb_writer *w, const void *k, size_t kl, const void *v, size_t vl,
                   uint64_t index)
{
    MDB_val key = {kl, (void *)k}, val = {vl, (void *)v};
    /* keys of 8-digit indexes arrive in increasing order: append without searching */
    unsigned flags = index < 100000000u ? MDB_APPEND : 0;
    return mdb_put(w->txn, w->dbi, &key, &val, flags);
}

/* Grow the map after MDB_MAP_FULL and replay the uncommitted batch into a new transaction.
 * Doubling up to 1 GiB, then steps of max(1 GiB, 1/8 of the map): few replays (about 40 from
 * 1 GiB to 100 GiB), and the reserved address space stays within 12.5% of the data once it
 * is large (it matters on 32-bit systems). */
static int grow_and_replay(lmdb_writer *w, ld_err *e)
{
    int rc = LD_OK;
    for (;;) {
        mdb_txn_abort(w->txn);
        w->txn = NULL;
        const size_t gib = (size_t)1 << 30;
        size_t step = w->mapsize < gib ? w->mapsize : w->mapsize / 8 > gib ? w->mapsize / 8 : gib;
        size_t ns;
        LD_CHECK(e, ld__add_size(w->mapsize, step, &ns), LD_ELIMIT,
                 "%s: the database does not fit in the address space", w->final);
        int m = mdb_env_set_mapsize(w->env, ns);
        if (m)
            return mdb_fail(e, m, "cannot grow the map", w->final);
        w->mapsize = ns;
        LD_TRY(txn_begin(w, e));
        size_t off = 0;
        uint64_t idx = w->n - w->batch_n;
        m = 0;
        while (off < w->batch.len && !m) {
            uint32_t kl, vl;
            memcpy(&kl, w->batch.p + off, 4);
            memcpy(&vl, w->batch.p + off + 4, 4);
            const uint8_t *k = w->batch.p + off + 8;
            m = put_one(w, k, kl, k + kl, vl, idx++);
            off += 8 + (size_t)kl + vl;
        }
        if (m == MDB_MAP_FULL)
            continue;
        if (m)
            return write_fail(w, e, m, "write failed");
        return LD_OK;
    }
fail:
    return rc;
}

/* Unmap (from this process only) the database pages LMDB touched through its map. LMDB
 * copies the tree pages it changes out of the map, and each first touch faults in a
 * page-cache folio (fault-around maps 64 KiB, large folios up to 2 MiB). New leaves sit after
 * the previous transaction's records, so every transaction mapped new pages and resident
 * memory grew with the database (88 MiB at 2,000 x 150 KB records, 136 MiB at 20,000). The
 * map is read-only and shared: dropping it discards nothing, the pages stay in the page cache
 * and LMDB faults them back if it needs them. Called between transactions, when LMDB holds
 * no pointers into the map.
 *
 * LMDB does not tell where it mapped the file (MDB_envinfo.me_mapaddr is only set with
 * MDB_FIXEDMAP), so we look for the shared mapping of data.mdb's inode in /proc/self/maps.
 * Elsewhere than Linux this does nothing. */
static void drop_mapped_pages(lmdb_writer *w)
{
#ifdef __linux__
    int fd;
    struct stat st;
    if (mdb_env_get_fd(w->env, &fd) != 0 || fstat(fd, &st) != 0)
        return;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        unsigned long lo, hi, ino;
        unsigned long long off;
        unsigned maj, min;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s %llx %x:%x %lu", &lo, &hi, perms, &off, &maj, &min,
                   &ino) == 7 &&
            ino == (unsigned long)st.st_ino && makedev(maj, min) == st.st_dev &&
            perms[3] == 's')
            madvise((void *)(uintptr_t)lo, hi - lo, MADV_DONTNEED);
    }
    free(line);
    fclose(f);
#else
    (void)w;
#endif
}

static int commit(lmdb_writer *w, ld_err *e)
{
    int rc = LD_OK;
    for (;;) {
        int m = mdb_txn_commit(w->txn);
        w->txn = NULL; /* a failed commit frees the transaction too */
        if (m == MDB_MAP_FULL) {
            LD_TRY(txn_begin(w, e)); /* grow_and_replay aborts it again */
            LD_TRY(grow_and_replay(w, e));
            continue;
        }
        if (m)
            return write_fail(w, e, m, "commit failed");
        break;
    }
    w->batch.len = 0;
    w->batch_n = 0;
    drop_mapped_pages(w);
fail:
    return rc;
}

/* ---- the vtable ------------------------------------------------------------------------ */

static int lmdb_add(ld_writer *base, const ld_sample *s, ld_err *e)
{
    lmdb_writer *w = (lmdb_writer *)base;
    int rc = LD_OK;
    LD_CHECK(e, !w->finished && w->env && w->txn, LD_ESTATE,
             "%s: cannot add: the writer was finished or failed earlier", w->final);
    LD_CHECK(e, s->len <= UINT32_MAX - 64, LD_ELIMIT, "%s: sample too large for a record",
             s->rel ? s->rel : "?");
    int kl = snprintf(NULL, 0, "%08llu_%s", (unsigned long long)w->n, s->rel ? s->rel : "");
    LD_CHECK(e, kl >= 0 && kl <= w->maxkey, LD_EINVAL,
             "%s: LMDB key '%08llu_<path>' would be %d bytes, over LMDB's maximum key size of %d;"
             " use shorter paths (a list file with shorter relative paths)",
             s->rel ? s->rel : "?", (unsigned long long)w->n, kl, w->maxkey);
    LD_TRY(buf_rc(w, e, ld__buf_reserve(&w->key, (size_t)kl + 1)));
    snprintf((char *)w->key.p, (size_t)kl + 1, "%08llu_%s", (unsigned long long)w->n,
             s->rel ? s->rel : "");

    ld_datum d = {.channels = s->c, .height = s->h, .width = s->w, .label = s->label,
                  .encoded = w->encoded, .data = s->data ? s->data : (const uint8_t *)"",
                  .data_len = s->len};
    if (!w->encoded) {
        size_t px;
        LD_CHECK(e, s->c > 0 && s->h > 0 && s->w > 0 && ld__mul_size((size_t)s->c, (size_t)s->h,
                 &px) && ld__mul_size(px, (size_t)s->w, &px) && px == s->len, LD_EINVAL,
                 "%s: raw sample of %zu bytes does not match its shape %dx%dx%d", s->rel,
                 s->len, s->c, s->h, s->w);
    }
    LD_TRY(buf_rc(w, e, ld__datum_encode(&d, &w->rec)));
    LD_CHECK(e, w->rec.len <= UINT32_MAX, LD_ELIMIT, "%s: record too large", s->rel);

    /* keep the record for a replay, then put it */
    uint32_t hdr[2] = {(uint32_t)kl, (uint32_t)w->rec.len};
    LD_TRY(buf_rc(w, e, ld__buf_append(&w->batch, hdr, sizeof hdr)));
    LD_TRY(buf_rc(w, e, ld__buf_append(&w->batch, w->key.p, (size_t)kl)));
    LD_TRY(buf_rc(w, e, ld__buf_append(&w->batch, w->rec.p, w->rec.len)));
    w->batch_n++;
    w->n++;
    int m = put_one(w, w->key.p, (size_t)kl, w->rec.p, w->rec.len, w->n - 1);
    if (m == MDB_MAP_FULL)
        LD_TRY(grow_and_replay(w, e)); /* replays this record too */
    else if (m)
        LD_TRY(write_fail(w, e, m, "write failed"));

    if (w->n == 1) {
        w->c = s->c;
        w->h = s->h;
        w->w = s->w;
    } else if (s->c != w->c || s->h != w->h || s->w != w->w) {
        w->same_shape = 0;
    }
    if (w->batch_n >= LD_LMDB_BATCH || w->batch.len >= LD_LMDB_BATCH_BYTES) {
        LD_TRY(commit(w, e));
        LD_TRY(txn_begin(w, e));
    }
fail:
    return rc;
}

static int lmdb_finish(ld_writer *base, ld_err *e)
{
    lmdb_writer *w = (lmdb_writer *)base;
    int rc = LD_OK, exists = 0;
    char *old = NULL;
    LD_CHECK(e, !w->finished && w->env && w->txn, LD_ESTATE,
             "%s: cannot finish: the writer was finished or failed earlier", w->final);
    LD_TRY(commit(w, e));
    int m = mdb_env_sync(w->env, 1);
    if (m)
        LD_TRY(write_fail(w, e, m, "sync failed"));
    mdb_dbi_close(w->env, w->dbi);
    mdb_env_close(w->env);
    w->env = NULL;
    LD_TRY(write_sidecar(w, e));

    LD_CHECK(e, replaceable(w->final, &exists), LD_EIO,
             "%s: exists and is not an LMDB database; refusing to replace it", w->final);
    if (exists) {
        /* move the old database aside first, so the output name never holds a mix */
        old = ld__asprintf("%s.old", w->tmp);
        LD_CHECK(e, old, LD_ENOMEM, "out of memory");
        LD_CHECK(e, rename(w->final, old) == 0, LD_EIO, "%s: cannot move the old database aside:"
                 " %s", w->final, strerror(errno));
    }
    if (rename(w->tmp, w->final) != 0) {
        int err = errno;
        if (old)
            rename(old, w->final); /* put the old one back */
        LD_CHECK(e, 0, LD_EIO, "%s: cannot rename %s into place: %s", w->final, w->tmp,
                 strerror(err));
    }
    w->finished = 1;
    if (old)
        ld__remove_db_dir(old);
    /* make the rename durable */
    char *parent = ld__strdup(w->final);
    if (parent) {
        char *slash = strrchr(parent, '/');
        const char *dir = slash ? (slash == parent ? "/" : (*slash = 0, parent)) : ".";
        int fd = open(dir, O_RDONLY | O_DIRECTORY);
        if (fd >= 0) {
            fsync(fd);
            close(fd);
        }
        free(parent);
    }
    w->base.files_out = 1;
fail:
    free(old);
    return rc;
}

static void lmdb_free(ld_writer *base)
{
    lmdb_writer *w = (lmdb_writer *)base;
    if (!w)
        return;
    if (w->txn)
        mdb_txn_abort(w->txn);
    if (w->env)
        mdb_env_close(w->env);
    if (!w->finished && w->tmp)
        ld__remove_db_dir(w->tmp);
    ld__buf_free(&w->rec);
    ld__buf_free(&w->key);
    ld__buf_free(&w->batch);
    ld__buf_free(&w->meta);
    free(w->final);
    free(w->tmp);
    free(w);
}

static const ld_writer_vt lmdb_vt = {lmdb_add, lmdb_finish, lmdb_free};

int ld__lmdb_writer_create(const ld_writer_opts *o, ld_writer **out, ld_err *e)
{
    int rc = LD_OK, exists, m;
    lmdb_writer *w = calloc(1, sizeof *w);
    *out = NULL;
    if (!w)
        return ld__err(e, LD_ENOMEM, "out of memory");
    w->base.vt = &lmdb_vt;
    w->encoded = o->encoded != 0;
    w->same_shape = 1;
    w->mapsize = LD_LMDB_MAP_START;
    LD_CHECK(e, o->path && *o->path, LD_EINVAL, "no output path");
    w->final = ld__strdup(o->path);
    LD_CHECK(e, w->final, LD_ENOMEM, "out of memory");
    for (size_t n = strlen(w->final); n > 1 && w->final[n - 1] == '/'; n--)
        w->final[n - 1] = 0;
    LD_CHECK(e, replaceable(w->final, &exists), LD_EIO,
             "%s: exists and is not an LMDB database (only data.mdb, lock.mdb and %s may be in "
             "the directory); refusing to replace it", w->final, LD_LMDB_SIDECAR);
    ld__sweep_stale_temps(w->final, o->on_stale, o->on_stale_user);
    w->tmp = ld__temp_name(w->final, w);
    LD_CHECK(e, w->tmp, LD_ENOMEM, "out of memory");
    LD_TRY(buf_rc(w, e, meta_begin(w, o)));
    LD_CHECK(e, mkdir(w->tmp, 0777) == 0, LD_EIO, "%s: cannot create directory %s: %s", w->final,
             w->tmp, strerror(errno));
    m = mdb_env_create(&w->env);
    if (m) {
        w->env = NULL;
        LD_TRY(mdb_fail(e, m, "cannot create an LMDB environment", w->final));
    }
    m = mdb_env_set_mapsize(w->env, w->mapsize);
    if (!m)
        m = mdb_env_open(w->env, w->tmp, MDB_NOSYNC | MDB_NOMETASYNC, 0664);
    if (m)
        LD_TRY(mdb_fail(e, m, "cannot open the LMDB environment", w->tmp));
    w->maxkey = mdb_env_get_maxkeysize(w->env);
    LD_TRY(txn_begin(w, e));
    m = mdb_dbi_open(w->txn, NULL, 0, &w->dbi);
    if (m)
        LD_TRY(mdb_fail(e, m, "cannot open the database", w->tmp));
    *out = &w->base;
    return LD_OK;
fail:
    lmdb_free(&w->base);
    return rc;
}

/* ---- describe ------------------------------------------------------------------------ */

#define LD_LMDB_LABEL_SCAN 100000u /* records scanned for labels by describe */

static int text(ld_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int text(ld_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0)
        return LD_OK;
    int rc = ld__buf_reserve(b, b->len + (size_t)k + 1);
    if (rc < 0)
        return rc;
    va_start(ap, fmt);
    vsnprintf((char *)b->p + b->len, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)k;
    return LD_OK;
}

typedef struct scan_state {
    uint8_t *seen; /* one bit per label value in 0..65535 */
    uint64_t n, distinct, other, bad;
    double lo, hi;
    int c, h, w, shapes_differ, hmin, hmax, wmin, wmax;
    char first_bad[LD_ERRMSG_MAX];
    ld_codec *codec; /* encoded records without a shape: read from the image header */
} scan_state;

static int scan_one(void *user, uint64_t i, const ld_datum *dd, const char *name,
                    const char *bad)
{
    scan_state *st = user;
    ld_datum shaped;
    const ld_datum *d = dd;
    ld_err he = {0};
    (void)i;
    if (d && d->encoded && (d->height <= 0 || d->width <= 0)) {
        ld_img_info ii; /* convert_imageset --encoded: no shape in the Datum */
        if (ld__img_info(st->codec, d->data, d->data_len, name, &ii, &he) == LD_OK) {
            shaped = *d;
            shaped.channels = ii.channels;
            shaped.height = ii.h;
            shaped.width = ii.w;
            d = &shaped;
        } else {
            d = NULL;
            bad = he.msg;
        }
    }
    if (!d) {
        if (!st->bad++)
            snprintf(st->first_bad, sizeof st->first_bad, "%s", bad);
        return 0;
    }
    double l = d->label;
    if (st->n == 0 || l < st->lo)
        st->lo = l;
    if (st->n == 0 || l > st->hi)
        st->hi = l;
    if (d->label >= 0 && d->label < 65536) {
        unsigned u = (unsigned)d->label;
        st->distinct += !(st->seen[u / 8] >> (u % 8) & 1);
        st->seen[u / 8] |= (uint8_t)(1u << (u % 8));
    } else {
        st->other++;
    }
    if (st->n == 0) {
        st->c = d->channels;
        st->hmin = st->hmax = st->h = d->height;
        st->wmin = st->wmax = st->w = d->width;
    } else if ((!d->encoded && d->channels != st->c) || d->height != st->h ||
               d->width != st->w) { /* encoded: the reader converts the channels */
        st->shapes_differ = 1;
    }
    st->hmin = d->height < st->hmin ? d->height : st->hmin;
    st->hmax = d->height > st->hmax ? d->height : st->hmax;
    st->wmin = d->width < st->wmin ? d->width : st->wmin;
    st->wmax = d->width > st->wmax ? d->width : st->wmax;
    st->n++;
    return 0;
}

int ld__lmdb_describe(const char *path, ld_buf *out, ld_err *e)
{
    int rc = LD_OK;
    ld_store *s = NULL;
    ld_store_ctx *cx = NULL;
    ld_buf side = {0};
    uint8_t *seen = NULL;
    scan_state st = {0};
    LD_TRY(ld__lmdb_store_open(path, NULL, &s, e));
    LD_TRY(s->vt->ctx_create(s, &cx, e));
    const ld_store_info *in = &s->info;
    LD_TRY(text(out, "format: LMDB, Caffe Datum records\npath: "));
    LD_TRY(ld__describe_escape(out, path));
    LD_TRY(text(out, "\nentries: %llu%s\n", (unsigned long long)in->n,
                in->n ? "" : " (an empty database: 0 samples)"));
    if (in->n && in->encoded) {
        ld_rec r;
        LD_TRY(s->vt->read(s, cx, 0, NULL, 0, &r, e));
        LD_TRY(text(out, "records: encoded images (first: %zu bytes, %s)\n", r.len,
                    r.len > 3 && r.data[0] == 0xff && r.data[1] == 0xd8 ? "JPEG"
                    : r.len > 3 && r.data[0] == 0x89 && r.data[1] == 'P' ? "PNG" : "unknown"));
        if (in->h > 0)
            LD_TRY(text(out, "shape: %d x %d x %d (CHW, %s%s)\n", in->c, in->h, in->w,
                        in->shape_from ? "from " : "every record's, from ",
                        in->shape_from ? in->shape_from : LD_LMDB_SIDECAR));
        else if (r.h > 0)
            LD_TRY(text(out, "shape: %d x %d x %d (CHW, the first record's Datum fields)\n",
                        r.c, r.h, r.w));
    } else if (in->n) {
        LD_TRY(text(out, "records: raw %s pixels, CHW\nshape: %d x %d x %d (from the first "
                    "record)\n", in->dtype == 1 ? "float32" : "uint8", in->c, in->h, in->w));
    }
    static const char *const orders[] = {"unknown", "BGR", "RGB", "GRAY"};
    /* What the reader delivers: for encoded records the order the database was made for
     * (made_order, BGR for Caffe's), see reader.c; Caffe's Data layer always gives BGR. */
    if (in->n && in->encoded && in->c == 1)
        LD_TRY(text(out, "channel order: GRAY (1 channel after decoding)\n"));
    else if (in->n && in->encoded && in->made_order == LD_SORDER_RGB)
        LD_TRY(text(out, "channel order: RGB after decoding by libdata's reader (the database "
                         "was made for RGB); Caffe's Data layer decodes to BGR\n"));
    else if (in->n && in->encoded)
        LD_TRY(text(out, "channel order: BGR after decoding (libdata's reader decodes to BGR, "
                         "as Caffe's Data layer does)\n"));
    else if (in->n)
        LD_TRY(text(out, "channel order: %s\n", orders[in->order & 3]));
    LD_TRY(text(out, "index: %s\n", in->how));

    /* labels and shapes: one cursor pass over the first records */
    st.seen = seen = calloc(65536 / 8, 1);
    LD_CHECK(e, seen, LD_ENOMEM, "out of memory");
    st.codec = ld__codec_create();
    LD_CHECK(e, st.codec, LD_ENOMEM, "out of memory");
    uint64_t scan = in->n < LD_LMDB_LABEL_SCAN ? in->n : LD_LMDB_LABEL_SCAN;
    LD_TRY(ld__lmdb_scan(s, scan, scan_one, &st, e));
    if (!in->encoded && st.shapes_differ)
        LD_TRY(text(out, "shapes: vary (%d..%d x %d..%d): raw records of different sizes cannot "
                    "be read; convert again with --resize\n", st.hmin, st.hmax, st.wmin,
                    st.wmax));
    else if (st.shapes_differ)
        LD_TRY(text(out, "sizes: vary (%d..%d x %d..%d in the first %llu records): reading needs "
                    "a crop no larger than the smallest (--crop WxH), or convert again with "
                    "--resize\n", st.hmin, st.hmax, st.wmin, st.wmax,
                    (unsigned long long)st.n));
    else if (in->encoded && in->shape_from && st.n)
        LD_TRY(text(out, "sizes: %s %llu records have the first one's shape\n",
                    in->n > scan ? "the first" : "all", (unsigned long long)st.n));
    if (in->n)
        LD_TRY(text(out, "labels: %llu distinct in 0..65535%s, range %.0f..%.0f, in the first "
                    "%llu records%s\n", (unsigned long long)st.distinct,
                    st.other ? " (+ others outside)" : "", st.lo, st.hi,
                    (unsigned long long)st.n, in->n > scan ? " (scan capped; the rest not read)"
                                                            : " (all)"));
    if (st.bad) { /* the message holds the key: a file name */
        LD_TRY(text(out, "malformed: %llu records, first: ", (unsigned long long)st.bad));
        LD_TRY(ld__describe_escape(out, st.first_bad));
        LD_TRY(text(out, "\n"));
    }

    rc = ld__lmdb_sidecar_read(path, &side, e);
    if (rc == LD_END) {
        rc = LD_OK;
        LD_TRY(text(out, "made by: unknown (no %s: convert_imageset or another tool)\n",
                    LD_LMDB_SIDECAR));
    } else if (rc == LD_OK) {
        static const char *const keys[] = {"num_classes", "class_names", "storage", "encoding",
                                           "quality", "resize_mode", "resize_w", "resize_h",
                                           "source", "note", "tool"};
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            const char *v = ld__lmdb_sidecar_value((const char *)side.p, keys[k]);
            if (!v)
                continue;
            size_t vl = strcspn(v, "\n");
            if (vl && v[vl - 1] == ',')
                vl--;
            LD_TRY(text(out, "%s: %.*s\n", keys[k], (int)vl, v));
        }
    } else {
        goto fail;
    }
fail:
    free(seen);
    ld__codec_free(st.codec);
    ld__buf_free(&side);
    if (s) {
        s->vt->ctx_free(s, cx);
        s->vt->close(s);
    }
    return rc;
}
