/*
 * Opening any dataset path, and the `--split` list store: several HDF5 files read as one
 * dataset, in list order. The list store keeps, per file, the cumulative sample count (binary
 * search maps a global index to a file) and gives each worker one read context per file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/desc.h"
#include "store/store.h"

typedef struct list_store {
    ld_store base;
    size_t nfiles;
    ld_store **files;
    uint64_t *start; /* nfiles + 1 cumulative sample counts */
    char how[96];
} list_store;

struct ld_store_ctx {
    size_t nfiles;
    ld_store_ctx *sub[]; /* one context per file */
};

static void list_ctx_free(ld_store *st, ld_store_ctx *cx)
{
    list_store *s = (list_store *)st;
    if (!cx) return;
    for (size_t k = 0; k < cx->nfiles; k++)
        if (cx->sub[k]) s->files[k]->vt->ctx_free(s->files[k], cx->sub[k]);
    free(cx);
}

static int list_ctx_create(ld_store *st, ld_store_ctx **out, ld_err *e)
{
    list_store *s = (list_store *)st;
    int rc = LD_OK;
    ld_store_ctx *cx = calloc(1, sizeof(*cx) + s->nfiles * sizeof(cx->sub[0]));
    LD_CHECK(e, cx, LD_ENOMEM, "out of memory (read context)");
    cx->nfiles = s->nfiles;
    for (size_t k = 0; k < s->nfiles; k++)
        LD_TRY(s->files[k]->vt->ctx_create(s->files[k], &cx->sub[k], e));
    *out = cx;
    return LD_OK;
fail:
    list_ctx_free(st, cx);
    *out = NULL;
    return rc;
}

static size_t file_of(const list_store *s, uint64_t i)
{
    size_t lo = 0, hi = s->nfiles; /* find k with start[k] <= i < start[k+1] */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (s->start[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* A member file's failure names the sample by its number in that file (message and detail):
 * give the detail the dataset's number. Returns rc. */
static int global_sample(const list_store *s, size_t f, ld_err *e, int rc)
{
    if (rc < 0 && e && e->sample >= 0) e->sample += (int64_t)s->start[f];
    return rc;
}

static int list_read(ld_store *st, ld_store_ctx *cx, uint64_t i, uint8_t *dst, size_t dst_len,
                     ld_rec *rec, ld_err *e)
{
    list_store *s = (list_store *)st;
    if (i >= st->info.n)
        return (ld__err(e, LD_EINVAL, "sample %llu out of range (%llu samples)",
                        (unsigned long long)i, (unsigned long long)st->info.n),
                ld__err_where(e, NULL, (int64_t)i));
    size_t f = file_of(s, i);
    return global_sample(
        s, f, e,
        s->files[f]->vt->read(s->files[f], cx->sub[f], i - s->start[f], dst, dst_len, rec, e));
}

static void list_will_read(ld_store *st, ld_store_ctx *cx, const uint64_t *idx, size_t n)
{
    list_store *s = (list_store *)st;
    for (size_t k = 0; k < n; k++) {
        if (idx[k] >= st->info.n) continue;
        size_t f = file_of(s, idx[k]);
        uint64_t local = idx[k] - s->start[f];
        if (s->files[f]->vt->will_read)
            s->files[f]->vt->will_read(s->files[f], cx->sub[f], &local, 1);
    }
}

static int list_read_run(ld_store *st, ld_store_ctx *cx, uint64_t first, size_t count, uint8_t *dst,
                         double *labels, ld_err *e)
{
    list_store *s = (list_store *)st;
    const size_t sb = st->info.sample_bytes;
    while (count) { /* split the run at file boundaries */
        if (first >= st->info.n)
            return (ld__err(e, LD_EINVAL, "sample %llu out of range", (unsigned long long)first),
                    ld__err_where(e, NULL, (int64_t)first));
        size_t f = file_of(s, first);
        ld_store *sub = s->files[f];
        uint64_t local = first - s->start[f];
        size_t part = (size_t)(sub->info.n - local) < count ? (size_t)(sub->info.n - local) : count;
        int rc = LD_OK;
        if (sub->vt->read_run) {
            rc = sub->vt->read_run(sub, cx->sub[f], local, part, dst, labels, e);
        } else {
            for (size_t k = 0; k < part; k++) {
                ld_rec rec;
                rc = sub->vt->read(sub, cx->sub[f], local + k, dst + k * sb, sb, &rec, e);
                if (rc < 0) break;
                if (rec.data != dst + k * sb) memcpy(dst + k * sb, rec.data, sb);
                labels[k] = rec.label;
            }
        }
        if (rc < 0) return global_sample(s, f, e, rc);
        first += part;
        count -= part;
        dst += part * sb;
        labels += part;
    }
    return LD_OK;
}

/* The member file of sample i and its number there; LD_EINVAL naming i when out of range. */
static int member(const list_store *s, uint64_t i, size_t *f, uint64_t *local, ld_err *e)
{
    if (i >= s->base.info.n)
        return (ld__err(e, LD_EINVAL, "sample %llu out of range", (unsigned long long)i),
                ld__err_where(e, NULL, (int64_t)i));
    *f = file_of(s, i);
    *local = i - s->start[*f];
    return LD_OK;
}

static int list_label_vec(ld_store *st, ld_store_ctx *cx, uint64_t i, double *out, ld_err *e)
{
    list_store *s = (list_store *)st;
    size_t f = 0; /* set by member() when it succeeds; gcc -O3 cannot see that */
    uint64_t k = 0;
    int rc = member(s, i, &f, &k, e);
    if (rc < 0) return rc;
    ld_store *sub = s->files[f];
    return global_sample(s, f, e, sub->vt->label_vec(sub, cx->sub[f], k, out, e));
}

static int list_mask(ld_store *st, ld_store_ctx *cx, uint64_t i, uint8_t *out, ld_err *e)
{
    list_store *s = (list_store *)st;
    size_t f = 0;
    uint64_t k = 0;
    int rc = member(s, i, &f, &k, e);
    if (rc < 0) return rc;
    ld_store *sub = s->files[f];
    return global_sample(s, f, e, sub->vt->mask(sub, cx->sub[f], k, out, e));
}

static int list_boxes(ld_store *st, ld_store_ctx *cx, uint64_t i, ld_buf *out, uint32_t *m,
                      ld_err *e)
{
    list_store *s = (list_store *)st;
    size_t f = 0;
    uint64_t k = 0;
    int rc = member(s, i, &f, &k, e);
    if (rc < 0) return rc;
    ld_store *sub = s->files[f];
    return global_sample(s, f, e, sub->vt->boxes(sub, cx->sub[f], k, out, m, e));
}

typedef struct list_names_ctx {
    ld_store_name_fn fn;
    void *user;
    uint64_t start; /* the member file's first sample in the dataset */
} list_names_ctx;

static int list_name(void *user, uint64_t i, const char *name, size_t len)
{
    const list_names_ctx *c = user;
    return c->fn(c->user, c->start + i, name, len);
}

/* The member files' names, renumbered; files that name nothing are passed over. */
static int list_names(ld_store *st, ld_store_name_fn fn, void *user, ld_err *e)
{
    list_store *s = (list_store *)st;
    int named = 0;
    for (size_t k = 0; k < s->nfiles; k++) {
        ld_store *sub = s->files[k];
        list_names_ctx c = {fn, user, s->start[k]};
        const int rc = sub->vt->names ? sub->vt->names(sub, list_name, &c, e) : LD_STORE_NO_NAMES;
        if (rc < 0) return global_sample(s, k, e, rc);
        named |= rc == LD_OK;
    }
    return named ? LD_OK : LD_STORE_NO_NAMES;
}

static void list_close(ld_store *st)
{
    list_store *s = (list_store *)st;
    if (!s) return;
    for (size_t k = 0; k < s->nfiles; k++)
        if (s->files[k]) s->files[k]->vt->close(s->files[k]);
    free(s->files);
    free(s->start);
    free(s);
}

static const ld_store_vt list_vt = {list_ctx_create, list_ctx_free, list_read, list_will_read,
                                    list_close,      list_read_run, NULL,      list_label_vec,
                                    list_mask,       list_boxes,    list_names};

static int open_list(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e)
{
    int rc = LD_OK;
    FILE *f = NULL;
    char line[4096];
    list_store *s = calloc(1, sizeof(*s));
    LD_CHECK(e, s, LD_ENOMEM, "out of memory");
    s->base.vt = &list_vt;
    f = fopen(path, "r");
    LD_CHECK(e, f, LD_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = 0;
        if (!len || line[0] == '#') continue;
        if (s->nfiles == cap) {
            cap = cap ? cap * 2 : 8;
            ld_store **nf = realloc(s->files, cap * sizeof(*nf));
            LD_CHECK(e, nf, LD_ENOMEM, "out of memory");
            s->files = nf;
            uint64_t *ns = realloc(s->start, (cap + 1) * sizeof(*ns));
            LD_CHECK(e, ns, LD_ENOMEM, "out of memory");
            s->start = ns;
        }
        /* relative lines: against the list's folder, else the current one (ld_internal.h) */
        char *p = ld__list_entry_path(path, line);
        LD_CHECK(e, p, LD_ENOMEM, "out of memory");
        s->files[s->nfiles] = NULL;
        rc = ld__h5_store_open(p, o, &s->files[s->nfiles], e);
        free(p);
        LD_TRY(rc);
        s->nfiles++;
    }
    LD_CHECK(e, s->nfiles, LD_EFORMAT, "%s: the list names no file", path);
    const ld_store_info *a = &s->files[0]->info;
    s->base.info = *a;
    s->start[0] = 0;
    for (size_t k = 0; k < s->nfiles; k++) {
        const ld_store_info *b = &s->files[k]->info;
        LD_CHECK(e,
                 b->encoded == a->encoded && b->dtype == a->dtype && b->c == a->c &&
                     (a->encoded || (b->h == a->h && b->w == a->w)) && b->label_k == a->label_k &&
                     b->mask_h == a->mask_h && b->mask_w == a->mask_w &&
                     b->mask_elem == a->mask_elem && b->boxes == a->boxes,
                 LD_EFORMAT,
                 "%s: file %zu of the list holds samples of another kind or shape "
                 "than the first (%dx%dx%d %s, %u label values, masks %dx%d)",
                 path, k + 1, a->c, a->h, a->w, a->encoded ? "encoded" : "raw",
                 (unsigned)(a->label_k ? a->label_k : 1), a->mask_h, a->mask_w);
        s->start[k + 1] = s->start[k] + b->n;
        if (b->h != a->h || b->w != a->w) s->base.info.h = s->base.info.w = 0;
        if (b->order != a->order) s->base.info.order = LD_SORDER_UNKNOWN;
        if (b->box_max > s->base.info.box_max) s->base.info.box_max = b->box_max;
        s->base.info.label_float |= b->label_float;
        s->base.info.store_bytes += k ? b->store_bytes : 0;
    }
    s->base.info.n = s->start[s->nfiles];
    /* Every context holds one sub-context per file, each with its own scratch. */
    s->base.info.ctx_bytes = a->ctx_bytes * s->nfiles;
    snprintf(s->how, sizeof s->how, "list of %zu files: %s", s->nfiles, a->how);
    s->base.info.how = s->how;
    fclose(f);
    *out = &s->base;
    return LD_OK;
fail:
    if (f) fclose(f);
    list_close(s ? &s->base : NULL);
    *out = NULL;
    return rc;
}

int ld__store_open(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e)
{
    ld_probe p;
    int rc;
    *out = NULL;
    LD_TRY(ld__format_probe(path, &p, e)); /* the one probe: desc.h */
    rc = p.kind == LD_PROBE_LMDB        ? ld__lmdb_store_open(path, o, out, e)
         : p.kind == LD_PROBE_HDF5_LIST ? open_list(path, o, out, e)
                                        : ld__h5_store_open(path, o, out, e);
    ld__probe_free(&p);
fail:
    return rc;
}
