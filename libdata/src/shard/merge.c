/* ld_merge(): find the parts of a sharded conversion, check that they form one whole, and let
 * the format (h5_merge.c, lmdb_merge.c) write the merged dataset. See merge.h. */
#include "shard/merge.h"

#include "libdata/shard.h"
#include "shard/shard.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int ld__shard_check_name(const ld_shard *s, ld_err *e)
{
    if (s->name_k < 0 || (s->name_k == s->index && s->name_n == s->count)) return LD_OK;
    char *own = ld__shard_sibling(s->path, s->index, s->count);
    ld__err(e, LD_EINVAL,
            "%s: renamed part: its name says part %lld of %lld but it holds part %lld of %lld "
            "(shard_index/shard_count); rename it back to %s, or reconvert part %lld of %lld",
            s->path, s->name_k, s->name_n, (long long)s->index, (long long)s->count,
            own ? own : "its own name", s->name_k, s->name_n);
    free(own);
    return LD_EINVAL;
}

static int by_index(const void *a, const void *b)
{
    const ld_shard *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

int ld__merge_check_set(ld_shard *s, size_t n, ld_err *e)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i].count < 1 || s[i].index < 0 || s[i].index >= s[i].count)
            return ld__err(e, LD_EFORMAT,
                           "%s: invalid shard values (shard_index %lld, shard_count %lld): not a "
                           "part of a sharded conversion; reconvert it",
                           s[i].path, (long long)s[i].index, (long long)s[i].count);
        if (s[i].count != s[0].count)
            return ld__err(e, LD_EINVAL,
                           "%s: part %lld of %lld, but %s is a part of %lld (N mismatch): these "
                           "are parts of different conversions; merge the %lld parts of one run",
                           s[i].path, (long long)s[i].index, (long long)s[i].count, s[0].path,
                           (long long)s[0].count, (long long)s[0].count);
    }
    qsort(s, n, sizeof *s, by_index);
    for (size_t i = 1; i < n; i++)
        if (s[i].index == s[i - 1].index)
            return ld__err(e, LD_EINVAL,
                           "%s: part %lld of %lld is given twice (also %s, duplicate K): give "
                           "each part once",
                           s[i].path, (long long)s[i].index, (long long)s[i].count, s[i - 1].path);
    if (n == 0 || (int64_t)n == s[0].count) return LD_OK;
    int64_t k = 0;
    for (size_t i = 0; i < n && s[i].index == k; i++)
        k++;
    char *name = ld__shard_sibling(s[0].path, k, s[0].count);
    ld__err(e, LD_EINVAL,
            "%s: missing (part %lld of %lld; %zu of the %lld parts %s given): convert it with the "
            "settings of the other parts and shard_index %lld, shard_count %lld, then merge the "
            "%lld parts",
            name ? name : "a part", (long long)k, (long long)s[0].count, n, (long long)s[0].count,
            n == 1 ? "was" : "were", (long long)k, (long long)s[0].count, (long long)s[0].count);
    free(name);
    return LD_EINVAL;
}

int ld__merge_check_run(const ld_shard *s, size_t n, ld_err *e)
{
    int64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].total != s[0].total)
            return ld__err(e, LD_EINVAL,
                           "%s: a part from another run than %s (its input lists %lld samples, "
                           "not %lld): reconvert it from the same input as the other parts",
                           s[i].path, s[0].path, (long long)s[i].total, (long long)s[0].total);
        if (strcmp(s[i].run_id, s[0].run_id) != 0)
            return ld__err(e, LD_EINVAL,
                           "%s: a part from another run than %s (run_id %s, not %s): made from "
                           "another input or with other options; reconvert it with the same "
                           "command as the other parts",
                           s[i].path, s[0].path, s[i].run_id, s[0].run_id);
        if (s[i].first != at || s[i].listed < 0)
            return ld__err(e, LD_EINVAL,
                           "%s: holds listed samples %lld.. but the parts before it end at %lld: "
                           "the parts do not cover the listing in order; reconvert it",
                           s[i].path, (long long)s[i].first, (long long)at);
        at += s[i].listed;
    }
    if (n && at != s[0].total)
        return ld__err(e, LD_EINVAL,
                       "%s: the parts cover %lld listed samples, but the listing has %lld; "
                       "reconvert the last part",
                       s[n - 1].path, (long long)at, (long long)s[0].total);
    return LD_OK;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t m = strlen(suffix);
    return n >= m && strncasecmp(s + n - m, suffix, m) == 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The last component of a path, ignoring trailing slashes: [*b, *b + *len). */
static void base_of(const char *path, const char **b, size_t *len)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t s = n;
    while (s > 0 && path[s - 1] != '/')
        s--;
    *b = path + s;
    *len = n - s;
}

/* Every part name of `output` (shard/name.c) beside it, sorted by name. */
static int discover(const char *output, char ***out, size_t *nout, ld_err *e)
{
    int rc = LD_OK;
    const char *b;
    size_t blen;
    base_of(output, &b, &blen);
    char *base = ld__asprintf("%.*s", (int)blen, b);
    char *dir = b == output ? ld__strdup(".") : ld__asprintf("%.*s", (int)(b - output), output);
    char **names = NULL, *pattern = NULL;
    size_t n = 0, cap = 0;
    DIR *d = NULL;
    LD_CHECK(e, dir && base, LD_ENOMEM, "out of memory");
    d = opendir(dir);
    LD_CHECK(e, d, LD_EIO, "%s: cannot list the folder to find the parts of %s: %s", dir, output,
             strerror(errno));
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        long long k, nn;
        if (!ld__shard_name(nm, &k, &nn)) continue;
        char *want = ld__shard_part_path(base, (unsigned long long)k, (unsigned long long)nn);
        LD_CHECK(e, want, LD_ENOMEM, "out of memory");
        int match = strcmp(want, nm) == 0;
        free(want);
        if (!match) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **t = realloc(names, cap * sizeof *t);
            LD_CHECK(e, t, LD_ENOMEM, "out of memory");
            names = t;
        }
        names[n] = b == output ? ld__strdup(nm) : ld__asprintf("%s%s", dir, nm);
        LD_CHECK(e, names[n], LD_ENOMEM, "out of memory");
        n++;
    }
    if (n == 0) {
        pattern = ld__shard_pattern(base);
        LD_CHECK(e, pattern, LD_ENOMEM, "out of memory");
        LD_CHECK(e, 0, LD_EINVAL,
                 "%s: no parts found beside it (looked for %s%s); give the parts after the output "
                 "name",
                 output, b == output ? "" : dir, pattern);
    }
    qsort(names, n, sizeof *names, name_cmp);
    *out = names;
    *nout = n;
    names = NULL;
    n = 0;
fail:
    if (d) closedir(d);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(dir);
    free(base);
    free(pattern);
    return rc;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The output must not replace a part, nor (LMDB) be written inside one. */
static int check_output(const char *output, const char *const *parts, size_t n, ld_err *e)
{
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (!parts[i] || !*parts[i])
            return ld__err(e, LD_EINVAL, "merge: part %zu has an empty name", i + 1);
        if (stat(parts[i], &st) != 0)
            return ld__err(e, LD_EIO, "%s: cannot open this part: %s", parts[i], strerror(errno));
        int within = ld__path_within(output, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
        if (within < 0) return ld__err(e, LD_ENOMEM, "%s: out of memory", output);
        if (within)
            return ld__err(e, LD_EINVAL,
                           "%s: the merged output would %s the part %s; give another output name",
                           output, within == 2 ? "replace" : "be written inside", parts[i]);
    }
    return LD_OK;
}

/* Read every part through the format, check that they are one whole run, write. */
static int merge_with(const ld_merge_ops *ops, const char *output, ld_shard *sh, size_t n,
                      const ld_merge_log *lg, ld_err *e)
{
    int rc = LD_OK;
    ld_merge_fmt *m = NULL;
    LD_CHECK(e, n > 0, LD_EINVAL, "%s: no parts to merge", output);
    LD_TRY(ops->begin(output, sh, n, lg, &m, e));
    for (size_t i = 0; i < n; i++) {
        LD_TRY(ops->read_part(m, i, e));
        LD_TRY(ld__shard_check_name(&sh[i], e));
    }
    LD_TRY(ld__merge_check_set(sh, n, e));
    LD_TRY(ld__merge_check_run(sh, n, e));
    uint64_t samples = 0;
    for (size_t i = 0; i < n; i++)
        samples += sh[i].samples;
    LD_CHECK(e, samples > 0, LD_EINVAL, "%s: the %zu part%s hold%s no %s at all: nothing to merge",
             output, n, n == 1 ? "" : "s", n == 1 ? "s" : "", ops->unit);
    rc = ops->write(m, e);
fail:
    ops->end(m);
    return rc;
}

int ld_merge(const char *output, const char *const *parts, size_t nparts, ld_log_fn log,
             void *log_user, char **errmsg)
{
    int rc = LD_OK;
    ld_err e;
    ld_merge_log lg = {log, log_user};
    char **found = NULL;
    size_t nfound = 0;
    ld_shard *sh = NULL;

    ld__err_clear(&e);
    if (errmsg) *errmsg = NULL;
    LD_CHECK(&e, output && *output, LD_EINVAL, "merge: an output name is required");
    LD_CHECK(&e, nparts == 0 || parts, LD_EINVAL, "merge: %zu parts announced but none given",
             nparts);
    size_t olen = strlen(output);
    while (olen > 1 && output[olen - 1] == '/')
        olen--;
    if (nparts == 0) {
        LD_TRY(discover(output, &found, &nfound, &e));
        parts = (const char *const *)found;
        nparts = nfound;
        ld__merge_log(&lg, LD_LOG_INFO, "merge: found %zu parts beside %s", nparts, output);
    }
    LD_TRY(check_output(output, parts, nparts, &e));
    /* LMDB parts are directories (the output need not exist yet) */
    int lmdb = ends_with(output, olen, ".lmdb") || is_dir(parts[0]);
    sh = calloc(nparts, sizeof *sh);
    LD_CHECK(&e, sh, LD_ENOMEM, "out of memory");
    size_t given = nparts;
    nparts = 0;
    for (size_t i = 0; i < given; i++) {
        int labels_of_part = 0; /* a part's label or mask database (OUT-*-of-* matches it) */
        for (size_t j = 0; lmdb && j < given && !labels_of_part; j++) {
            char *ldb = j != i ? ld__lmdb_side_db_path(parts[j], "labels") : NULL;
            char *mdb = j != i ? ld__lmdb_side_db_path(parts[j], "masks") : NULL;
            const int ok = (ldb && mdb) || j == i;
            labels_of_part = ok && ldb && (!strcmp(ldb, parts[i]) || !strcmp(mdb, parts[i]));
            free(ldb);
            free(mdb);
            LD_CHECK(&e, ok, LD_ENOMEM, "out of memory");
        }
        if (labels_of_part) continue; /* merged with its part */
        const size_t k = nparts++;
        sh[k].path = parts[i];
        sh[k].given = k;
        sh[k].index = sh[k].count = sh[k].first = sh[k].listed = sh[k].total = -1;
        ld__shard_name(parts[i], &sh[k].name_k, &sh[k].name_n);
    }
    const ld_merge_ops *ops = NULL;
#ifdef LD_HAVE_LMDB
    if (lmdb) ops = &ld__lmdb_merge_ops;
#endif
#ifdef LD_HAVE_HDF5
    if (!lmdb) ops = &ld__h5_merge_ops;
#endif
    LD_CHECK(&e, ops, LD_ENOTSUP, "%s: %s support was not built into this libdata", output,
             lmdb ? "LMDB" : "HDF5");
    rc = merge_with(ops, output, sh, nparts, &lg, &e);
fail:
    if (rc < 0) {
        if (log) log(log_user, LD_LOG_ERROR, e.msg[0] ? e.msg : ld_strerror(rc));
        if (errmsg) *errmsg = ld__strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    }
    for (size_t i = 0; i < nfound; i++)
        free(found[i]);
    free(found);
    free(sh);
    return rc;
}
