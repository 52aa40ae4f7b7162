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

/* Sidecar keys every part must share with the first. */
static const char *const same_keys[] = {
    "format",  "format_version", "record",   "storage",  "encoding",    "channel_order", "layout",
    "quality", "resize_mode",    "resize_w", "resize_h", "num_classes", "class_names"};
#define N_SAME (sizeof same_keys / sizeof *same_keys)

/* Sidecar keys of part 0 the merged sidecar leaves out (the part's own; the writer adds the
 * whole's entries, channels, height, width). */
static const char *const dropped[] = {"shard_index", "shard_first", "shard_listed", "entries",
                                      "channels",    "height",      "width"};

#define DROP_EVERY 4096 /* records between dropping a part's pages from our mapping */

typedef struct lpart {
    uint64_t n;  /* records */
    ld_buf side; /* libdata.json, NUL-terminated */
} lpart;

/* Part 0's sidecar up to the writer's tail: "{", then each line but the dropped keys, each
 * ending in ",\n" (lmdb_write.c writes one key per line). */
static int sidecar_head(const char *text, ld_buf *out)
{
    int rc = ld__buf_append(out, "{\n", 2);
    for (const char *l = text; rc == LD_OK && l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        const char *next = nl ? nl + 1 : NULL;
        while (n > 0 && (l[n - 1] == ',' || l[n - 1] == ' ' || l[n - 1] == '\r'))
            n--;
        int keep = n > 0 && l[0] == '"';
        for (size_t k = 0; keep && k < sizeof dropped / sizeof *dropped; k++) {
            size_t kl = strlen(dropped[k]);
            if (n > kl + 1 && !strncmp(l + 1, dropped[k], kl) && l[kl + 1] == '"') keep = 0;
        }
        if (keep) {
            rc = ld__buf_append(out, l, n);
            if (rc == LD_OK) rc = ld__buf_append(out, ",\n", 2);
        }
        l = next;
    }
    return rc == LD_OK ? ld__buf_append(out, "", 1) : rc;
}

static int read_part(ld_shard *s, lpart *p, const lpart *first, const char *first_path, ld_err *e)
{
    int rc = LD_OK;
    ld_store *st = NULL;
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
    rc = ld__lmdb_sidecar_read(s->path, &p->side, e);
    LD_CHECK(e, rc != LD_END, LD_EFORMAT,
             "%s: no %s: not a part of a sharded conversion (shard_index/shard_count "
             "writes one)",
             s->path, LD_LMDB_SIDECAR);
    LD_TRY(rc);
    const char *t = (const char *)p->side.p;
    char *id = NULL;
    int shard =
        ld__side_i64(t, "shard_index", &s->index) && ld__side_i64(t, "shard_count", &s->count) &&
        ld__side_i64(t, "shard_first", &s->first) && ld__side_i64(t, "shard_listed", &s->listed) &&
        ld__side_i64(t, "listing_total", &s->total);
    if (shard && (shard = ld__side_str(t, "run_id", &id)) == LD_ENOMEM)
        LD_CHECK(e, 0, LD_ENOMEM, "%s: out of memory", s->path);
    LD_CHECK(e, shard == 1, LD_EFORMAT,
             "%s: not a part of a sharded conversion (its %s has no shard_index, shard_count, "
             "run_id...): merge takes the parts of a sharded conversion (shard_index/shard_count)",
             s->path, LD_LMDB_SIDECAR);
    snprintf(s->run_id, sizeof s->run_id, "%s", id);
    free(id);
    s->samples = p->n;
    if (first) {
        const char *f = (const char *)first->side.p;
        for (size_t k = 0; k < N_SAME; k++) {
            const char *a, *b;
            size_t al, bl;
            int ha = ld__side_raw(t, same_keys[k], &a, &al);
            int hb = ld__side_raw(f, same_keys[k], &b, &bl);
            if (ha == hb && al == bl && (!al || !memcmp(a, b, al))) continue;
            if (!strcmp(same_keys[k], "class_names"))
                rc = ld__err(e, LD_EINVAL,
                             "%s: its class names differ from those of %s: the parts come from "
                             "different inputs; reconvert them from one listing",
                             s->path, first_path);
            else
                rc = ld__err(e, LD_EINVAL,
                             "%s: made with other settings than %s (%s is %.*s here, %.*s "
                             "there): merge the parts of one conversion (same options), or "
                             "reconvert this part",
                             s->path, first_path, same_keys[k], ha ? (int)al : 8,
                             ha ? a : "(absent)", hb ? (int)bl : 8, hb ? b : "(absent)");
            goto fail;
        }
    }
fail:
    if (st) st->vt->close(st);
    return rc;
}

/* Copy every record of one part into the writer, in key order. */
static int copy_part(const ld_shard *s, const lpart *p, ld_writer *w, ld_err *e)
{
    int rc = LD_OK, m;
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_cursor *cur = NULL;
    MDB_dbi dbi;
    MDB_val k, v;
    ld_buf rel = {0};
    uint64_t count = 0;
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
    lpart *p; /* in the order given */
};

static void lm_end(ld_merge_fmt *m)
{
    if (!m) return;
    for (size_t i = 0; m->p && i < m->n; i++)
        ld__buf_free(&m->p[i].side);
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
    return read_part(&m->sh[i], &m->p[i], i ? &m->p[0] : NULL, m->sh[0].path, e);
}

static int lm_write(ld_merge_fmt *m, ld_err *e)
{
    int rc = LD_OK;
    ld_buf head = {0};
    ld_writer *w = NULL;
    const lpart *first = &m->p[m->sh[0].given]; /* part 0 */
    uint64_t total = 0;
    for (size_t i = 0; i < m->n; i++)
        total += m->sh[i].samples;
    LD_CHECK(e, sidecar_head((const char *)first->side.p, &head) == LD_OK, LD_ENOMEM,
             "out of memory");
    char *storage = NULL;
    LD_CHECK(e, ld__side_str((const char *)first->side.p, "storage", &storage) != LD_ENOMEM,
             LD_ENOMEM, "out of memory");
    const int encoded = storage && !strcmp(storage, "encoded");
    free(storage);
    ld_writer_opts o = {.path = m->output,
                        .encoded = encoded,
                        .channels = 3,
                        .expected_n = total,
                        .lmdb_meta_head = (const char *)head.p,
                        .on_stale = stale_removed,
                        .on_stale_user = (void *)m->log};
    LD_TRY(ld__lmdb_writer_create(&o, &w, e));
    for (size_t i = 0; i < m->n; i++)
        LD_TRY(copy_part(&m->sh[i], &m->p[m->sh[i].given], w, e));
    LD_TRY(w->vt->finish(w, e));
    ld__merge_log(m->log, LD_LOG_INFO, "merged %zu parts (%llu records) into %s", m->n,
                  (unsigned long long)total, m->output);
fail:
    if (w) w->vt->free(w);
    ld__buf_free(&head);
    return rc;
}

const ld_merge_ops ld__lmdb_merge_ops = {"record", lm_begin, lm_read_part, lm_write, lm_end};

#endif /* LD_HAVE_LMDB */
