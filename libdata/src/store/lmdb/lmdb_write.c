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
 *  - Transactions commit every LD_LMDB_BATCH records or LD_LMDB_BATCH_BYTES bytes (1 MiB),
 *    whichever comes first: a write transaction holds its dirty pages in malloc'd memory
 *    until commit, so the byte bound keeps the writer at about 2 x 1 MiB (dirty pages + the
 *    replay copy) however large the images are. Why 1 MiB: LMDB's commit writes the dirty
 *    pages in runs of up to 64 (a record's overflow pages are one), so a transaction of
 *    8 MiB went out in writes of ~8 MiB, which the page cache holds in 2 MiB folios. On a VM
 *    with free page reporting those come from memory the host took back and fill ~10x slower
 *    (bench/baselines --write): 2,000 raw 224x224 records took 0.21 s in writev with 8 MiB
 *    transactions, 0.08 s with 1 MiB ones; -j2 ran 1.20-1.31 s instead of 1.47-1.81 s, and
 *    peak RSS fell from 33 to 18 MiB. 256 KiB was slower again (-j2 1.78 s, measured while
 *    the mapping was still dropped after every commit). After each 8 MiB or more committed
 *    (LD_LMDB_DROP_BYTES), the writer drops its mapping of the database's pages (see
 *    ld__lmdb_drop_pages): LMDB reads tree pages through its read-only map, and each such
 *    read mapped a page-cache folio of up to 2 MiB that stayed resident. The map
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
 *  - The saved record index "libdata.idx" (lmdb_index.h): in finish(), once the database is
 *    synced and closed, the store opens it and walks it as the reader would (its pages are
 *    still cached), and the result is saved beside data.mdb, before the sidecar and the
 *    rename: the reader's open then reads 12 bytes per record instead of walking the tree.
 *    The label and mask databases get theirs in their own finish().
 *  - Label vectors (a description whose label field has K values) cannot go into a Datum's
 *    one int32 label. They go, as Caffe users do it, into a second database beside OUT, the
 *    label database (ld__lmdb_label_db_path: "train.lmdb" -> "train-labels.lmdb"): one Datum
 *    per sample under the same key, float_data = the K values, channels K, height = width = 1,
 *    so that a second stock Data layer reads them as a K x 1 x 1 blob in step with the
 *    images. The image records' label is 0. This writer makes both: a second writer of this
 *    file for the labels (label_db), finished first, so that the images' sidecar, which names
 *    it ("label_db"), is published only once it exists.
 *  - Segmentation masks go the same way into the mask database ("train.lmdb" ->
 *    "train-masks.lmdb"): one Datum per sample under the same key, channels 1, height x width
 *    uint8 class indices in `data` (uint16 masks: float_data), label 0; the sidecar names it
 * ("mask_db") and says which field the masks are ("mask_field": "label" when the input had no
 * labels, so that they are the dataset's label, else "mask").
 */
#define _GNU_SOURCE
#include "store/writer.h"

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

#include "store/lmdb/datum.h"
#include "store/lmdb/lmdb_desc.h"
#include "store/lmdb/lmdb_index.h"
#include "store/lmdb/lmdb_store.h"
#include "store/store.h"

#define LD_LMDB_BATCH 1000
#define LD_LMDB_BATCH_BYTES ((size_t)1 << 20)
#define LD_LMDB_DROP_BYTES ((size_t)8 << 20)
#define LD_LMDB_MAP_START ((size_t)64 << 20)

typedef struct lmdb_writer {
    ld_writer base;
    char *final, *tmp;
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    size_t mapsize;
    int maxkey;
    ld_buf key;
    /* The uncommitted batch, for replay after MDB_MAP_FULL: records as
     * [u32 key length][u32 value length][key][value]. */
    ld_buf batch;
    size_t batch_n;
    size_t undropped; /* bytes committed since the last ld__lmdb_drop_pages */
    uint64_t n;
    int finished, encoded;
    ld_desc desc; /* the sidecar's description (a copy of the options'), shape set at the end */
    int c, h, w;  /* shape of the first sample, for the sidecar */
    int same_shape;
    int label_k;               /* label vectors: values per sample (else 0) */
    int role;                  /* what the records are: SIDE_NONE images, SIDE_LABELS the
                                  label database of another writer, SIDE_MASKS its masks */
    struct lmdb_writer *label; /* the label database's writer, when label_k > 0 */
    struct lmdb_writer *mask;  /* the mask database's writer, when the samples have masks */
    ld_buf floats;             /* one label vector as float_data */
} lmdb_writer;

enum { SIDE_NONE = 0, SIDE_LABELS = 1, SIDE_MASKS = 2 };

/* A failed write of the database: a full disk or `ulimit -f` is said as such (LMDB itself
 * reports a short write as "Input/output error"). */
static int write_fail(lmdb_writer *w, ld_err *e, int mrc, const char *what)
{
    char *file = ld__asprintf("%s/data.mdb", w->tmp);
    int explained = file && mrc != ENOMEM && mrc > 0 &&
                    ld__explain_write_failure(e, mrc == EIO ? 0 : mrc, w->final, file);
    free(file);
    return explained ? LD_EIO : ld__mdb_err(e, mrc, w->final, what);
}

/* ---- sidecar JSON -------------------------------------------------------------------- */

/* The record and sidecar buffers report a failed allocation as a bare LD_ENOMEM: give it the
 * database's name. */
static int buf_rc(lmdb_writer *w, ld_err *e, int rc)
{
    return rc == LD_ENOMEM ? ld__err(e, rc, "%s: out of memory", w->final) : rc;
}

static int write_sidecar(lmdb_writer *w, ld_err *e)
{
    int rc = LD_OK;
    FILE *f = NULL;
    ld_buf text = {0};
    char *path = ld__asprintf("%s/%s", w->tmp, LD_LMDB_SIDECAR);
    LD_CHECK(e, path, LD_ENOMEM, "out of memory");
    w->desc.samples = w->n;
    w->desc.channels = w->c;
    w->desc.height = w->same_shape ? w->h : 0;
    w->desc.width = w->same_shape ? w->w : 0;
    LD_TRY(buf_rc(w, e, ld__lmdb_desc_write(&text, &w->desc)));
    f = fopen(path, "wb");
    LD_CHECK(e, f, LD_EIO, "%s: cannot create: %s", path, strerror(errno));
    int ok = fwrite(text.p, 1, text.len, f) == text.len;
    ok = (fflush(f) == 0) & ok;
    ok = (fsync(fileno(f)) == 0) & ok;
    ok = (fclose(f) == 0) & ok;
    f = NULL;
    LD_CHECK(e, ok, LD_EIO, "%s: write failed: %s", path, strerror(errno));
fail:
    ld__buf_free(&text);
    if (f) fclose(f);
    free(path);
    return rc;
}

/* ---- replacing database directories (removal: ld__remove_db_dir, stale.c) -------------- */

/* Is `path` something we may replace: absent, an empty directory, or an LMDB directory
 * (nothing in it but data.mdb, lock.mdb, our sidecar and saved index)? */
static int replaceable(const char *path, int *exists)
{
    struct stat st;
    *exists = 0;
    if (lstat(path, &st) != 0) return errno == ENOENT;
    *exists = 1;
    if (!S_ISDIR(st.st_mode)) return 0;
    int ok = 1;
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        if (strcmp(n, ".") && strcmp(n, "..") && strcmp(n, "data.mdb") && strcmp(n, "lock.mdb") &&
            strcmp(n, LD_LMDB_SIDECAR) && strcmp(n, LD_LMDB_INDEX))
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
        return ld__mdb_err(e, m, w->final, "cannot begin a write transaction");
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
        if (m == ENOMEM) /* LMDB maps the whole database: the address space ran out */
            return ld__err(e, LD_ENOMEM,
                           "%s: cannot grow the LMDB map to %zu MiB: %s: LMDB maps the whole "
                           "database into the address space%s",
                           w->final, ns >> 20, mdb_strerror(m),
                           sizeof(void *) < 8
                               ? " (a 32-bit process: about 2 GiB of database at most, see the "
                                 "README, \"32-bit systems\"); write HDF5 instead (OUT.h5), "
                                 "which has no such limit, or convert on a 64-bit system"
                               : "; raise the limit (ulimit -v) or write HDF5 (OUT.h5)");
        if (m) return ld__mdb_err(e, m, w->final, "cannot grow the map");
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
        if (m == MDB_MAP_FULL) continue;
        if (m) return write_fail(w, e, m, "write failed");
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
void ld__lmdb_drop_pages(struct MDB_env *env)
{
#ifdef __linux__
    int fd;
    struct stat st;
    if (mdb_env_get_fd(env, &fd) != 0 || fstat(fd, &st) != 0) return;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        unsigned long lo, hi, ino;
        unsigned long long off;
        unsigned maj, min;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s %llx %x:%x %lu", &lo, &hi, perms, &off, &maj, &min, &ino) ==
                7 &&
            ino == (unsigned long)st.st_ino && makedev(maj, min) == st.st_dev && perms[3] == 's')
            madvise((void *)(uintptr_t)lo, hi - lo, MADV_DONTNEED);
    }
    free(line);
    fclose(f);
#else
    (void)env;
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
        if (m) return write_fail(w, e, m, "commit failed");
        break;
    }
    w->undropped += w->batch.len;
    w->batch.len = 0;
    w->batch_n = 0;
    if (w->undropped >= LD_LMDB_DROP_BYTES) {
        ld__lmdb_drop_pages(w->env);
        w->undropped = 0;
    }
fail:
    return rc;
}

/* ---- the vtable ------------------------------------------------------------------------ */

/* The label database's Datum of sample s: its K values as float_data (K x 1 x 1). Integer
 * vectors must be exact in float32 (|v| <= 2^24). */
static int label_datum(lmdb_writer *w, const ld_sample *s, ld_datum *d, ld_err *e)
{
    int rc = LD_OK;
    const size_t k = (size_t)w->label_k;
    LD_CHECK(e, s->label_vec, LD_EINVAL, "%s: no label values for the label database", s->rel);
    LD_TRY(buf_rc(w, e, ld__buf_reserve(&w->floats, k * sizeof(float))));
    float *f = (float *)(void *)w->floats.p;
    if (w->desc.label_dtype == LD_DTYPE_I32) {
        for (size_t m = 0; m < k; m++) {
            int32_t v;
            memcpy(&v, (const uint8_t *)s->label_vec + 4 * m, 4);
            LD_CHECK(e, v >= -(1 << 24) && v <= 1 << 24, LD_EINVAL,
                     "%s: label value %d: the label database holds float_data, exact for "
                     "integers up to 2^24 only; write HDF5 (int32 (N, K)) instead",
                     s->rel, (int)v);
            f[m] = (float)v;
        }
    } else {
        memcpy(f, s->label_vec, k * sizeof(float));
    }
    *d = (ld_datum){.channels = (int32_t)k, .height = 1, .width = 1, .floats = f, .n_floats = k};
fail:
    return rc;
}

/* A mask's Datum: 1 x H x W bytes in `data`, or uint16 masks (a Datum's data is bytes) as
 * 1 x H x W float_data values, exact for every index 0..65535. */
static int mask_datum(lmdb_writer *w, const ld_sample *s, ld_datum *d, ld_err *e)
{
    int rc = LD_OK;
    LD_CHECK(e, s->mask && s->mask_h > 0 && s->mask_w > 0, LD_EINVAL, "%s: no mask", s->rel);
    const size_t n = (size_t)s->mask_h * (size_t)s->mask_w;
    *d = (ld_datum){.channels = 1, .height = s->mask_h, .width = s->mask_w};
    const ld_desc_field *mf = ld__desc_mask(&w->desc);
    if (!mf || mf->dtype != LD_DTYPE_U16) {
        d->data = s->mask;
        d->data_len = n;
        return LD_OK;
    }
    LD_TRY(buf_rc(w, e, ld__buf_reserve(&w->floats, n * sizeof(float))));
    float *f = (float *)(void *)w->floats.p;
    const uint16_t *m = (const uint16_t *)(const void *)s->mask;
    for (size_t k = 0; k < n; k++)
        f[k] = (float)m[k];
    d->floats = f;
    d->n_floats = n;
fail:
    return rc;
}

static int lmdb_add(ld_writer *base, const ld_sample *s, ld_err *e);

static int lmdb_add(ld_writer *base, const ld_sample *s, ld_err *e)
{
    lmdb_writer *w = (lmdb_writer *)base;
    int rc = LD_OK;
    size_t undo = SIZE_MAX; /* the batch's length before this record, until the record counts */
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

    ld_datum d = {.channels = s->c,
                  .height = s->h,
                  .width = s->w,
                  .label = w->label_k ? 0 : s->label,
                  .encoded = w->encoded,
                  .data = s->data ? s->data : (const uint8_t *)"",
                  .data_len = s->len};
    if (w->role == SIDE_LABELS) {
        LD_TRY(label_datum(w, s, &d, e));
    } else if (w->role == SIDE_MASKS) {
        LD_TRY(mask_datum(w, s, &d, e));
    } else if (!w->encoded) {
        size_t px;
        LD_CHECK(e,
                 s->c > 0 && s->h > 0 && s->w > 0 &&
                     ld__mul_size((size_t)s->c, (size_t)s->h, &px) &&
                     ld__mul_size(px, (size_t)s->w, &px) && px == s->len,
                 LD_EINVAL, "%s: raw sample of %zu bytes does not match its shape %dx%dx%d", s->rel,
                 s->len, s->c, s->h, s->w);
    }
    /* The record is encoded straight into the batch kept for a replay (header: key and record
     * lengths, then the key, then the record), and put from there: one copy of the pixels
     * fewer on the thread that writes. Until it counts, a failure takes it off again. */
    const size_t at = undo = w->batch.len;
    uint32_t hdr[2] = {(uint32_t)kl, 0};
    LD_TRY(buf_rc(w, e, ld__buf_append(&w->batch, hdr, sizeof hdr)));
    LD_TRY(buf_rc(w, e, ld__buf_append(&w->batch, w->key.p, (size_t)kl)));
    const size_t rec_at = w->batch.len;
    LD_TRY(buf_rc(w, e, ld__datum_encode(&d, &w->batch)));
    const size_t rec_len = w->batch.len - rec_at;
    LD_CHECK(e, rec_len <= UINT32_MAX, LD_ELIMIT, "%s: record too large", s->rel);
    hdr[1] = (uint32_t)rec_len;
    memcpy(w->batch.p + at + 4, &hdr[1], 4);
    if (w->label) LD_TRY(lmdb_add(&w->label->base, s, e)); /* its label Datum, same key */
    if (w->mask) LD_TRY(lmdb_add(&w->mask->base, s, e));   /* its mask Datum, same key */
    w->batch_n++;
    w->n++;
    undo = SIZE_MAX;
    int m = put_one(w, w->batch.p + at + 8, (size_t)kl, w->batch.p + rec_at, rec_len, w->n - 1);
    if (m == MDB_MAP_FULL)
        LD_TRY(grow_and_replay(w, e)); /* replays this record too */
    else if (m)
        LD_TRY(write_fail(w, e, m, "write failed"));

    if (w->n == 1) { /* (the label database's: K x 1 x 1) */
        w->c = d.channels;
        w->h = d.height;
        w->w = d.width;
    } else if (d.channels != w->c || d.height != w->h || d.width != w->w) {
        w->same_shape = 0;
    }
    if (w->batch_n >= LD_LMDB_BATCH || w->batch.len >= LD_LMDB_BATCH_BYTES) {
        LD_TRY(commit(w, e));
        LD_TRY(txn_begin(w, e));
    }
fail:
    if (undo != SIZE_MAX) w->batch.len = undo;
    return rc;
}

static int lmdb_finish(ld_writer *base, ld_err *e)
{
    lmdb_writer *w = (lmdb_writer *)base;
    int rc = LD_OK, exists = 0;
    char *old = NULL;
    LD_CHECK(e, !w->finished && w->env && w->txn, LD_ESTATE,
             "%s: cannot finish: the writer was finished or failed earlier", w->final);
    if (w->label) LD_TRY(lmdb_finish(&w->label->base, e)); /* first: the sidecar names it */
    if (w->mask) LD_TRY(lmdb_finish(&w->mask->base, e));
    LD_TRY(commit(w, e));
    int m = mdb_env_sync(w->env, 1);
    if (m) LD_TRY(write_fail(w, e, m, "sync failed"));
    mdb_dbi_close(w->env, w->dbi);
    mdb_env_close(w->env);
    w->env = NULL;
    ld__buf_free(&w->batch); /* no more records: their memory, before the index's 12 B each */
    LD_TRY(ld__lmdb_index_save(w->tmp, w->final, e));
    LD_TRY(write_sidecar(w, e));

    LD_CHECK(e, replaceable(w->final, &exists), LD_EIO,
             "%s: exists and is not an LMDB database; refusing to replace it", w->final);
    if (exists) {
        /* move the old database aside first, so the output name never holds a mix */
        old = ld__asprintf("%s.old", w->tmp);
        LD_CHECK(e, old, LD_ENOMEM, "out of memory");
        LD_CHECK(e, rename(w->final, old) == 0, LD_EIO,
                 "%s: cannot move the old database aside:"
                 " %s",
                 w->final, strerror(errno));
    }
    if (rename(w->tmp, w->final) != 0) {
        int err = errno;
        if (old) rename(old, w->final); /* put the old one back */
        LD_CHECK(e, 0, LD_EIO, "%s: cannot rename %s into place: %s", w->final, w->tmp,
                 strerror(err));
    }
    w->finished = 1;
    if (old) ld__remove_db_dir(old);
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
    if (!w) return;
    if (w->txn) mdb_txn_abort(w->txn);
    if (w->env) mdb_env_close(w->env);
    if (!w->finished && w->tmp) ld__remove_db_dir(w->tmp);
    if (w->label && w->label->finished && !w->finished)
        ld__remove_db_dir(w->label->final); /* published for images that were not */
    if (w->mask && w->mask->finished && !w->finished) ld__remove_db_dir(w->mask->final);
    lmdb_free(w->label ? &w->label->base : NULL);
    lmdb_free(w->mask ? &w->mask->base : NULL);
    ld__buf_free(&w->floats);
    ld__buf_free(&w->key);
    ld__buf_free(&w->batch);
    ld__desc_free(&w->desc);
    free(w->final);
    free(w->tmp);
    free(w);
}

static const ld_writer_vt lmdb_vt = {lmdb_add, lmdb_finish, lmdb_free};

static int writer_create(const ld_writer_opts *o, int role, ld_writer **out, ld_err *e);

/* The label or mask database's writer: the same options, its own path beside the images',
 * named in their sidecar (*name), a description of its records (no classes). */
static int side_writer(lmdb_writer *w, const ld_writer_opts *o, int role, ld_err *e)
{
    int rc = LD_OK;
    ld_writer_opts lo = *o;
    ld_writer *lw = NULL;
    char **name = role == SIDE_LABELS ? &w->desc.label_db : &w->desc.mask_db;
    char *path = ld__lmdb_side_db_path(w->final, role == SIDE_LABELS ? "labels" : "masks");
    LD_CHECK(e, path && ld__desc_set_text(name, NULL) == LD_OK, LD_ENOMEM, "out of memory");
    const char *slash = strrchr(path, '/');
    LD_CHECK(e, ld__desc_set_text(name, slash ? slash + 1 : path) == LD_OK, LD_ENOMEM,
             "out of memory");
    lo.path = path;
    rc = writer_create(&lo, role, &lw, e);
    *(role == SIDE_LABELS ? &w->label : &w->mask) = (lmdb_writer *)lw;
fail:
    free(path);
    return rc;
}

int ld__lmdb_writer_create(const ld_writer_opts *o, ld_writer **out, ld_err *e)
{
    return writer_create(o, 0, out, e);
}

static int writer_create(const ld_writer_opts *o, int role, ld_writer **out, ld_err *e)
{
    int rc = LD_OK, exists, m;
    lmdb_writer *w = calloc(1, sizeof *w);
    *out = NULL;
    if (!w) return ld__err(e, LD_ENOMEM, "out of memory");
    w->base.vt = &lmdb_vt;
    w->same_shape = 1;
    w->mapsize = LD_LMDB_MAP_START;
    LD_CHECK(e, o->path && *o->path, LD_EINVAL, "no output path");
    LD_CHECK(e, !o->desc || !ld__desc_boxes(o->desc), LD_ENOTSUP,
             "%s: detection boxes are stored in HDF5 (/boxes, /box_label, /box_flags, "
             "/box_offsets), not in LMDB: give an .h5 output",
             o->path);
    w->final = ld__strdup(o->path);
    LD_CHECK(e, w->final, LD_ENOMEM, "out of memory");
    for (size_t n = strlen(w->final); n > 1 && w->final[n - 1] == '/'; n--)
        w->final[n - 1] = 0;
    LD_CHECK(e, replaceable(w->final, &exists), LD_EIO,
             "%s: exists and is not an LMDB database (only data.mdb, lock.mdb, %s and %s may "
             "be in the directory); refusing to replace it",
             w->final, LD_LMDB_SIDECAR, LD_LMDB_INDEX);
    ld__sweep_stale_temps(w->final, o->on_stale, o->on_stale_user);
    w->tmp = ld__temp_name(w->final, w);
    LD_CHECK(e, w->tmp, LD_ENOMEM, "out of memory");
    LD_CHECK(e, o->desc && ld__desc_copy(&w->desc, o->desc) == LD_OK, LD_ENOMEM, "out of memory");
    w->encoded = w->desc.encoded != 0;
    w->label_k = ld__desc_label_k(&w->desc);
    w->role = role;
    if (role) { /* K x 1 x 1 float_data records or 1 x H x W masks, not images */
        w->encoded = w->desc.encoded = 0;
        w->desc.channels = role == SIDE_LABELS ? w->label_k : 1;
        LD_CHECK(e,
                 ld__desc_set_text(&w->desc.storage, role == SIDE_LABELS ? "labels" : "masks") ==
                         LD_OK &&
                     ld__desc_set_text(&w->desc.label_db, NULL) == LD_OK &&
                     ld__desc_set_text(&w->desc.mask_db, NULL) == LD_OK &&
                     ld__desc_set_text(&w->desc.encoding, NULL) == LD_OK &&
                     ld__desc_set_text(&w->desc.channel_order, NULL) == LD_OK,
                 LD_ENOMEM, "out of memory");
    } else if (w->desc.channels == 1) /* GRAY says the images have 1 channel */
        LD_CHECK(e, ld__desc_set_text(&w->desc.channel_order, "GRAY") == LD_OK, LD_ENOMEM,
                 "out of memory");
    LD_CHECK(e, mkdir(w->tmp, 0777) == 0, LD_EIO, "%s: cannot create directory %s: %s", w->final,
             w->tmp, strerror(errno));
    m = mdb_env_create(&w->env);
    if (m) {
        w->env = NULL;
        LD_TRY(ld__mdb_err(e, m, w->final, "cannot create an LMDB environment"));
    }
    m = mdb_env_set_mapsize(w->env, w->mapsize);
    if (!m) m = mdb_env_open(w->env, w->tmp, MDB_NOSYNC | MDB_NOMETASYNC, 0664);
    if (m) LD_TRY(ld__mdb_err(e, m, w->tmp, "cannot open the LMDB environment"));
    LD_TRY(ld__refuse_second_writer(w->final, w->tmp, e)); /* ours is locked now */
    w->maxkey = mdb_env_get_maxkeysize(w->env);
    LD_TRY(txn_begin(w, e));
    m = mdb_dbi_open(w->txn, NULL, 0, &w->dbi);
    if (m) LD_TRY(ld__mdb_err(e, m, w->tmp, "cannot open the database"));
    if (w->label_k && !role) LD_TRY(side_writer(w, o, SIDE_LABELS, e));
    if (ld__desc_mask(&w->desc) && !role) LD_TRY(side_writer(w, o, SIDE_MASKS, e));
    *out = &w->base;
    return LD_OK;
fail:
    lmdb_free(&w->base);
    return rc;
}
