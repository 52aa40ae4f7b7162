/*
 * LMDB merge (ld_merge): the parts of a sharded conversion -> one database, record by record
 * in K order, as a single run would have written it (Caffe's Data layer reads exactly one
 * database).
 *
 * Each part is first opened with the LMDB store (lmdb_store.c), which checks what a reader
 * checks (data.mdb not truncated, the first record valid) and counts its records; its
 * libdata.json gives the shard values and settings, compared with the first part given.
 * Then every record is copied through the LMDB writer (lmdb_write.c): it gives each record
 * the key a single run gives ("%08d_" + the part's key after its own number: the output index
 * restarts at 0 in every part, so the number is rewritten), appends with MDB_APPEND, commits
 * in batches of bounded size and publishes the database atomically. The Datum is decoded and
 * encoded again by the same encoder that wrote the part, so the value bytes are the part's.
 * The sidecar is part 0's without its shard_index/shard_first/shard_listed (it keeps
 * shard_count, listing_total and run_id, like the merged HDF5 file), with the writer's
 * entries/channels/height/width of the whole. Memory: one batch, whatever the number of
 * samples; the parts' pages are dropped from the process's mapping as they are passed.
 * Label vectors: each part's label database is read in step (through the store, record i
 * with record i) and the writer makes the merged label database beside the output.
 */
#define _GNU_SOURCE
#include "store/merge_fmt.h"

#ifdef LD_HAVE_LMDB
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/sysmacros.h>
#endif

#include "store/lmdb/datum.h"
#include "store/lmdb/lmdb_desc.h"
#include "store/lmdb/lmdb_store.h"
#include "store/store.h"
#include "store/writer.h"

#define DROP_EVERY 4096 /* records between dropping a part's pages from our mapping */

typedef struct lpart {
    uint64_t n; /* records */
} lpart;

/* Part s: its record count and description (*d, to free) -- its settings checked against
 * `ref`'s (the first given part's; NULL for that one). */
static int read_part(ld_shard *s, lpart *p, ld_desc *d, const ld_desc *ref, const char *first_path,
                     ld_err *e)
{
    int rc = LD_OK;
    ld_store *st = NULL;
    ld_buf side = {0};
    struct stat sb;
    LD_CHECK(e, stat(s->path, &sb) == 0 && S_ISDIR(sb.st_mode), LD_EFORMAT,
             "%s: not an LMDB directory: an LMDB merge takes the OUT-KKKKK-of-NNNNN.lmdb "
             "directories of a sharded conversion (shard_index/shard_count)",
             s->path);
    rc = ld__lmdb_store_open(s->path, NULL, &st, e);
    if (rc < 0) {
        char why[LD_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", e ? e->msg : "");
        ld__err(e, rc == LD_ENOMEM ? rc : LD_EFORMAT,
                "%s: not a valid LMDB part (%s): reconvert it with the same command and its "
                "shard_index/shard_count",
                s->path, why);
        rc = e ? e->code : LD_EFORMAT;
        goto fail;
    }
    p->n = st->info.n;
    st->vt->close(st);
    st = NULL;
    rc = ld__lmdb_sidecar_read(s->path, &side, e);
    LD_CHECK(e, rc != LD_END, LD_EFORMAT,
             "%s: no %s: not a part of a sharded conversion (shard_index/shard_count "
             "writes one)",
             s->path, LD_LMDB_SIDECAR);
    LD_TRY(rc);
    d->format = LD_FORMAT_LMDB;
    LD_TRY(ld__lmdb_desc_from((const char *)side.p, s->path, d, e));
    LD_CHECK(e, !d->storage || (strcmp(d->storage, "labels") && strcmp(d->storage, "masks")),
             LD_EINVAL,
             "%s: the %s database of a part, not a part: give the parts' image databases "
             "(OUT-KKKKK-of-NNNNN.lmdb); the databases beside each are merged with it",
             s->path, d->storage);
    LD_CHECK(e, !d->merged, LD_EINVAL,
             "%s: a merged database, not a part: give the parts it was merged from", s->path);
    LD_CHECK(e, d->shard_count && !d->shard_damaged, LD_EFORMAT,
             "%s: not a part of a sharded conversion (its %s has no shard_index, shard_count, "
             "run_id...): merge takes the parts of a sharded conversion (shard_index/shard_count)",
             s->path, LD_LMDB_SIDECAR);
    s->index = d->shard_index;
    s->count = d->shard_count;
    s->first = (int64_t)d->shard_first;
    s->listed = (int64_t)d->shard_listed;
    s->total = (int64_t)d->listing_total;
    snprintf(s->run_id, sizeof s->run_id, "%s", d->run_id);
    s->samples = p->n;
    if (ref) {
        char hv[256], wv[256];
        const char *name = ld__desc_first_difference(d, ref, hv, wv, sizeof hv);
        if (name && !strcmp(name, "class_names"))
            rc = ld__err(e, LD_EINVAL,
                         "%s: its class names differ from those of %s (%s here, %s there): the "
                         "parts come from different inputs; reconvert them from one listing",
                         s->path, first_path, hv, wv);
        else if (name)
            rc = ld__err(e, LD_EINVAL,
                         "%s: made with other settings than %s (%s is %s here, %s there): merge "
                         "the parts of one conversion (same options), or reconvert this part",
                         s->path, first_path, name, hv, wv);
    }
fail:
    if (st) st->vt->close(st);
    ld__buf_free(&side);
    return rc;
}

/* Label vectors and masks of a part: its label and mask databases, read through the store,
 * record i in step with the image record i, into one sample's values of type `dtype` (the
 * writer's) and its mask. */
typedef struct part_labels {
    ld_store *st;
    ld_store_ctx *cx;
    double *vals;
    void *out; /* k x 4 bytes: float or int32 */
    uint32_t k;
    int dtype;
    uint8_t *mask; /* mask_h x mask_w indices, when the parts have masks */
} part_labels;

static void labels_close(part_labels *l)
{
    if (l->cx) l->st->vt->ctx_free(l->st, l->cx);
    if (l->st) l->st->vt->close(l->st);
    free(l->vals);
    free(l->out);
    free(l->mask);
    memset(l, 0, sizeof *l);
}

static int labels_open(part_labels *l, const char *path, uint32_t k, int dtype, int masks,
                       ld_err *e)
{
    int rc = LD_OK;
    memset(l, 0, sizeof *l);
    if (!k && !masks) return LD_OK;
    l->k = k;
    l->dtype = dtype;
    LD_TRY(ld__lmdb_store_open(path, NULL, &l->st, e));
    const ld_store_info *in = &l->st->info;
    LD_CHECK(e, in->label_k == k, LD_EFORMAT,
             "%s: its description says %u label values per sample, its label database holds %u",
             path, (unsigned)k, (unsigned)in->label_k);
    LD_CHECK(e, !masks || in->mask_h, LD_EFORMAT,
             "%s: its description says it has masks, but it has no mask database", path);
    LD_TRY(l->st->vt->ctx_create(l->st, &l->cx, e));
    l->vals = malloc((k ? k : 1) * sizeof *l->vals);
    l->out = malloc((k ? k : 1) * 4);
    LD_CHECK(e, l->vals && l->out, LD_ENOMEM, "out of memory");
    if (masks) {
        l->mask = malloc((size_t)in->mask_h * (size_t)in->mask_w * (size_t)in->mask_elem);
        LD_CHECK(e, l->mask, LD_ENOMEM, "out of memory");
    }
fail:
    return rc;
}

/* Record i's values as the writer takes them. */
static int labels_get(part_labels *l, uint64_t i, ld_err *e)
{
    int rc = l->st->vt->label_vec(l->st, l->cx, i, l->vals, e);
    for (uint32_t m = 0; rc == LD_OK && m < l->k; m++)
        if (l->dtype == LD_DTYPE_I32)
            ((int32_t *)l->out)[m] = (int32_t)l->vals[m];
        else
            ((float *)l->out)[m] = (float)l->vals[m];
    return rc;
}

/* Copy every record of one part into the writer, in key order; with label vectors (nk > 0
 * values of type dtype) and masks their records too. */
static int copy_part(const ld_shard *s, const lpart *p, uint32_t nk, int dtype, int masks,
                     ld_writer *w, ld_err *e)
{
    int rc = LD_OK, m;
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_dbi dbi;
    MDB_val k, v;
    ld_buf rel = {0};
    uint64_t count = 0;
    part_labels lab;
    LD_TRY(labels_open(&lab, s->path, nk, dtype, masks, e));
    m = mdb_env_create(&env);
    if (m) {
        env = NULL;
        LD_TRY(ld__mdb_err(e, m, s->path, "cannot create an LMDB environment"));
    }
    m = mdb_env_open(env, s->path, MDB_RDONLY | MDB_NOTLS, 0664);
    if (m == EACCES || m == EROFS) { /* no lock file can be made: read without locking */
        mdb_env_close(env);
        m = mdb_env_create(&env);
        if (!m) m = mdb_env_open(env, s->path, MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK, 0664);
    }
    if (m) LD_TRY(ld__mdb_err(e, m, s->path, "cannot open"));
    m = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (!m) m = mdb_dbi_open(txn, NULL, 0, &dbi);
    if (!m) m = mdb_cursor_open(txn, dbi, &cur);
    if (m) LD_TRY(ld__mdb_err(e, m, s->path, "cannot read"));
    for (m = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !m;
         m = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        /* "<number>_<rest>": the rest is kept, the number becomes the whole's index */
        const char *key = k.mv_data;
        size_t d = 0;
        while (d < k.mv_size && key[d] >= '0' && key[d] <= '9')
            d++;
        LD_CHECK(e, d > 0 && d < k.mv_size && key[d] == '_' && !memchr(key, 0, k.mv_size),
                 LD_EFORMAT,
                 "%s: key '%.*s' is not '<number>_<path>' as libdata writes: not a part "
                 "of a sharded conversion",
                 s->path, (int)(k.mv_size > 200 ? 200 : k.mv_size), key);
        rel.len = 0;
        if (ld__buf_append(&rel, key + d + 1, k.mv_size - d - 1) < 0 ||
            ld__buf_append(&rel, "", 1) < 0)
            LD_CHECK(e, 0, LD_ENOMEM, "out of memory");
        ld_datum dt;
        char name[300];
        snprintf(name, sizeof name, "%s: key '%.*s'", s->path,
                 (int)(k.mv_size > 200 ? 200 : k.mv_size), key);
        LD_TRY(ld__datum_decode(v.mv_data, v.mv_size, &dt, NULL, name, e));
        LD_CHECK(e, dt.n_floats == 0 && (dt.has & LD_DATUM_HAS_DATA), LD_EFORMAT,
                 "%s: a record without image bytes (float_data?): not written by libdata", name);
        ld_sample smp = {.data = dt.data,
                         .len = dt.data_len,
                         .c = dt.channels,
                         .h = dt.height,
                         .w = dt.width,
                         .label = dt.label,
                         .rel = (const char *)rel.p};
        if (nk) {
            LD_TRY(labels_get(&lab, count, e));
            smp.label_vec = lab.out;
        }
        if (masks) {
            LD_TRY(lab.st->vt->mask(lab.st, lab.cx, count, lab.mask, e));
            smp.mask = lab.mask;
            smp.mask_h = lab.st->info.mask_h;
            smp.mask_w = lab.st->info.mask_w;
        }
        LD_TRY(w->vt->add(w, &smp, e));
        if (++count % DROP_EVERY == 0) ld__lmdb_drop_pages(env); /* else RSS grows with the parts */
    }
    if (m != MDB_NOTFOUND) LD_TRY(ld__mdb_err(e, m, s->path, "cannot read"));
    LD_CHECK(e, count == p->n, LD_EFORMAT, "%s: %llu records read, %llu counted at open", s->path,
             (unsigned long long)count, (unsigned long long)p->n);
fail:
    if (cur) mdb_cursor_close(cur);
    if (txn) mdb_txn_abort(txn);
    if (env) {
        ld__lmdb_drop_pages(env); /* else RSS grows with the parts */
        mdb_env_close(env);
    }
    ld__buf_free(&rel);
    labels_close(&lab);
    return rc;
}

static void stale_removed(void *user, const char *path, long pid, uint64_t bytes)
{
    ld__merge_log(user, LD_LOG_WARN,
                  "removed %s (%llu bytes), left by a merge that was killed (pid %ld)", path,
                  (unsigned long long)bytes, pid);
}

struct ld_merge_fmt {
    const char *output;
    ld_shard *sh;
    size_t n;
    const ld_merge_log *log;
    lpart *p;    /* in the order given */
    ld_desc ref; /* the first given part's description: the others must have its settings */
    ld_desc k0;  /* part 0's (K = 0): the merged database records it, as a merged one */
};

static void lm_end(ld_merge_fmt *m)
{
    if (!m) return;
    ld__desc_free(&m->ref);
    ld__desc_free(&m->k0);
    free(m->p);
    free(m);
}

static int lm_begin(const char *output, ld_shard *parts, size_t n, const ld_merge_log *log,
                    ld_merge_fmt **out, ld_err *e)
{
    ld_merge_fmt *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m || !(m->p = calloc(n ? n : 1, sizeof *m->p))) {
        free(m);
        return ld__err(e, LD_ENOMEM, "out of memory");
    }
    m->output = output;
    m->sh = parts;
    m->n = n;
    m->log = log;
    *out = m;
    return LD_OK;
}

/* The first given part is the reference for settings. */
static int lm_read_part(ld_merge_fmt *m, size_t i, ld_err *e)
{
    ld_desc d;
    memset(&d, 0, sizeof d);
    int rc = read_part(&m->sh[i], &m->p[i], &d, i ? &m->ref : NULL, m->sh[0].path, e);
    if (rc == LD_OK && i == 0) rc = ld__desc_copy(&m->ref, &d);
    if (rc == LD_OK && d.shard_index == 0 && !m->k0.format) rc = ld__desc_copy(&m->k0, &d);
    ld__desc_free(&d);
    return rc == LD_ENOMEM ? ld__err(e, rc, "out of memory") : rc;
}

static int lm_write(ld_merge_fmt *m, ld_err *e)
{
    int rc = LD_OK;
    ld_writer *w = NULL;
    uint64_t total = 0;
    for (size_t i = 0; i < m->n; i++)
        total += m->sh[i].samples;
    m->k0.merged = 1; /* without part 0's own shard values */
    ld_writer_opts o = {.desc = &m->k0,
                        .path = m->output,
                        .expected_n = total,
                        .on_stale = stale_removed,
                        .on_stale_user = (void *)m->log};
    LD_TRY(ld__lmdb_writer_create(&o, &w, e));
    for (size_t i = 0; i < m->n; i++)
        LD_TRY(copy_part(&m->sh[i], &m->p[m->sh[i].given], (uint32_t)ld__desc_label_k(&m->k0),
                         m->k0.label_dtype, ld__desc_mask(&m->k0) != NULL, w, e));
    LD_TRY(w->vt->finish(w, e));
    ld__merge_log(m->log, LD_LOG_INFO, "merged %zu parts (%llu records) into %s", m->n,
                  (unsigned long long)total, m->output);
fail:
    if (w) w->vt->free(w);
    return rc;
}

const ld_merge_ops ld__lmdb_merge_ops = {"record", lm_begin, lm_read_part, lm_write, lm_end};

#endif /* LD_HAVE_LMDB */
