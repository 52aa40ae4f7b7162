/*
 * Virtual datasets of HDF5 (what `dataconv merge` writes): every source must be there
 * (ld__h5_vds_check, h5_util.h, also used by describe and the merge), and a virtual dataset
 * of whole parts in order is read directly from its parts' files (h5_store_int.h).
 */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* realpath */
#endif
#include "store/store.h"

#ifdef LD_HAVE_HDF5
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/hdf5/h5_desc.h"
#include "store/hdf5/h5_format.h"
#include "store/hdf5/h5_store_int.h"
#include "store/hdf5/h5_util.h"

/* ---- virtual datasets: every source must be there (h5_util.h) ----------------------------- */

static int is_regular(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir + "/" + name into out (name alone when dir is empty). 0 when it does not fit. */
static int join(char *out, size_t cap, const char *dir, size_t dlen, const char *name)
{
    int n =
        dlen ? snprintf(out, cap, "%.*s/%s", (int)dlen, dir, name) : snprintf(out, cap, "%s", name);
    return n >= 0 && (size_t)n < cap;
}

/* ld__h5_vds_source without opening the file: LD_VDS_OK (found), LD_VDS_NO_FILE,
 * LD_VDS_PATTERN or LD_EFORMAT. */
static int vds_locate(hid_t dcpl, size_t k, const char *vds_path, char *file, size_t fcap,
                      char *dset, size_t dcap, char *resolved, size_t rcap)
{
    file[0] = dset[0] = resolved[0] = 0;
    if (H5Pget_virtual_filename(dcpl, k, file, fcap) < 0 ||
        H5Pget_virtual_dsetname(dcpl, k, dset, dcap) < 0)
        return LD_EFORMAT;
    if (strchr(file, '%') || strchr(dset, '%')) return LD_VDS_PATTERN;
    if (!strcmp(file, ".")) { /* the VDS file itself */
        snprintf(resolved, rcap, "%s", vds_path);
    } else {
        const char *name = file;
        const char *slash = strrchr(vds_path, '/');
        const size_t vdir = slash ? (size_t)(slash - vds_path) + (slash == vds_path) : 0;
        char cand[4096];
        int found = 0;
        if (file[0] == '/') {
            found = is_regular(file);
            if (found) snprintf(resolved, rcap, "%s", file);
            name = strrchr(file, '/') + 1;
        }
        const char *env = getenv("HDF5_VDS_PREFIX");
        while (!found && env && *env) {
            const char *end = strchr(env, ':');
            size_t len = end ? (size_t)(end - env) : strlen(env);
            char pre[2048];
            if (len >= 9 && !strncmp(env, "${ORIGIN}", 9))
                snprintf(pre, sizeof pre, "%.*s%.*s", (int)vdir, vds_path, (int)(len - 9), env + 9);
            else
                snprintf(pre, sizeof pre, "%.*s", (int)len, env);
            if (pre[0] && join(cand, sizeof cand, pre, strlen(pre), name) && is_regular(cand)) {
                found = 1;
                snprintf(resolved, rcap, "%s", cand);
            }
            env = end ? end + 1 : NULL;
        }
        if (!found && join(cand, sizeof cand, vds_path, vdir, name)) {
            snprintf(resolved, rcap, "%s", cand); /* also what a "not found" message shows */
            found = is_regular(cand);
        }
        if (!found && is_regular(name)) {
            found = 1;
            snprintf(resolved, rcap, "%s", name);
        }
        if (!found) return LD_VDS_NO_FILE;
    }
    return LD_VDS_OK;
}

int ld__h5_vds_source(hid_t dcpl, size_t k, const char *vds_path, char *file, size_t fcap,
                      char *dset, size_t dcap, char *resolved, size_t rcap)
{
    int st = vds_locate(dcpl, k, vds_path, file, fcap, dset, dcap, resolved, rcap);
    if (st != LD_VDS_OK) return st;
    hid_t f = H5Fopen(resolved, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return LD_VDS_NOT_HDF5;
    const int have = H5Lexists(f, dset[0] == '/' ? dset + 1 : dset, H5P_DEFAULT) > 0 ||
                     (dset[0] == '/' && !dset[1]);
    H5Fclose(f);
    return have ? LD_VDS_OK : LD_VDS_NO_DATASET;
}

int ld__h5_vds_check(hid_t d, const char *vds_path, const char *name, ld_err *e)
{
    int rc = LD_OK;
    size_t count = 0;
    char file[1024], dset[512], resolved[2048];
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0 || H5Pget_layout(dcpl) != H5D_VIRTUAL) goto done;
    LD_CHECK(e, H5Pget_virtual_count(dcpl, &count) >= 0, LD_EFORMAT,
             "%s: dataset '/%s' is virtual but its mappings cannot be read (corrupt?)", vds_path,
             name);
    for (size_t k = 0; k < count; k++) {
        int st = ld__h5_vds_source(dcpl, k, vds_path, file, sizeof file, dset, sizeof dset,
                                   resolved, sizeof resolved);
        LD_CHECK(e, st >= 0, LD_EFORMAT,
                 "%s: dataset '/%s' is virtual but source %zu of %zu "
                 "cannot be read (corrupt?)",
                 vds_path, name, k + 1, count);
        LD_CHECK(e, st != LD_VDS_NO_FILE, LD_EFORMAT,
                 "%s: dataset '/%s' is virtual and its "
                 "source file '%s' (source %zu of %zu; looked for as %s) does not exist: HDF5 "
                 "would read its part as fill values. Put the file back (source paths are "
                 "relative to the folder of %s), or rebuild the virtual dataset",
                 vds_path, name, file, k + 1, count, resolved, vds_path);
        LD_CHECK(e, st != LD_VDS_NOT_HDF5, LD_EFORMAT,
                 "%s: dataset '/%s' is virtual and its "
                 "source file %s (source %zu of %zu) is not a readable HDF5 file",
                 vds_path, name, resolved, k + 1, count);
        LD_CHECK(e, st != LD_VDS_NO_DATASET, LD_EFORMAT,
                 "%s: dataset '/%s' is virtual and its "
                 "source file %s has no dataset '%s' (source %zu of %zu): HDF5 would read its "
                 "part as fill values",
                 vds_path, name, resolved, dset, k + 1, count);
    }
done:
fail:
    if (dcpl >= 0) H5Pclose(dcpl);
    return rc;
}

/* ---- virtual datasets read directly from their parts ------------------------------------- *
 * A virtual dataset whose mappings are "the whole source dataset -> the next rows along dim 0"
 * in order, without gaps (what `dataconv merge` writes; any h5py VirtualLayout filled that
 * way), is resolved at open into one part per mapping: the part file, the dataset bytes
 * before it, and the part's own direct map (as for one file). Reads then pread the parts:
 * no HDF5 call and no HDF5 lock (a per-store mutex is held only to pick the descriptor), at
 * one file's speed (HDF5's VDS read path builds selections on every call, serialized by the
 * HDF5 lock, and keeps every source file open).
 *
 * Descriptors: a part's file is opened at its first read and kept open; at most fd_cap of
 * them are open at once (half of RLIMIT_NOFILE's soft limit, at most VDS_MAX_FDS: the other
 * half is the application's), the least recently used one without a read in flight is
 * closed when another is needed, or when open() finds no descriptor left. Memory is
 * per part a path and the chunk table that part's bytes need anyway (a 64-part merge holds
 * the same chunk addresses as one file of the same data, plus one partial chunk per part).
 * At open each part is opened through HDF5 once per virtual dataset read (pixels, labels),
 * checked and closed again (HDF5 keeps no part open; the labels are read part by part). When a part
 * is opened for reading it must still be the file checked at open (device, inode, size,
 * modification time): a part rewritten since gives an error naming it, never other bytes. */

void ld__h5_vds_free(vds_parts *v)
{
    for (size_t k = 0; k < v->n; k++) {
        if (v->p[k].fd >= 0) close(v->p[k].fd);
        free(v->p[k].path);
        free(v->p[k].map.addr);
    }
    free(v->p);
    if (v->mu_ok) pthread_mutex_destroy(&v->mu);
    memset(v, 0, sizeof *v);
}

/* Memory the parts hold, for the memory budget. */
size_t ld__h5_vds_bytes(const vds_parts *v)
{
    size_t b = v->n * sizeof *v->p;
    for (size_t k = 0; k < v->n; k++)
        b += strlen(v->p[k].path) + 1 + (size_t)v->p[k].map.nchunks * 8;
    return b;
}

int ld__h5_is_virtual(hid_t d)
{
    hid_t dcpl = H5Dget_create_plist(d);
    int v = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL;
    if (dcpl >= 0) H5Pclose(dcpl);
    return v;
}

/* The part holding dataset byte pos (the last part starting at or before it). */
size_t ld__h5_vds_part_of(const vds_parts *v, uint64_t pos)
{
    size_t lo = 0, hi = v->n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (v->p[mid].start <= pos)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Close the least recently used open part without a read in flight (under v->mu). 1 when
 * one was closed. */
static int vds_close_lru(vds_parts *v)
{
    size_t old = v->n;
    for (size_t j = 0; j < v->n; j++)
        if (v->p[j].fd >= 0 && !v->p[j].users && (old == v->n || v->p[j].last < v->p[old].last))
            old = j;
    if (old == v->n) return 0;
    close(v->p[old].fd);
    v->p[old].fd = -1;
    v->fd_open--;
    return 1;
}

/* A descriptor of part k for one read (vds_release after it), opening it when needed. */
int ld__h5_vds_acquire(vds_parts *v, size_t k, const char *vds_path, int *fd, ld_err *e)
{
    int rc = LD_OK;
    vds_part *p = &v->p[k];
    pthread_mutex_lock(&v->mu);
    if (p->fd < 0) {
        if (v->fd_open >= v->fd_cap) vds_close_lru(v);
        int f = open(p->path, O_RDONLY | O_CLOEXEC);
        while (f < 0 && (errno == EMFILE || errno == ENFILE) && vds_close_lru(v))
            f = open(p->path, O_RDONLY | O_CLOEXEC); /* the application took the rest */
        struct stat st;
        if (f < 0) {
            rc = ld__err(e, errno == ENOENT ? LD_EFORMAT : LD_EIO,
                         "%s: part %s cannot be opened: %s (it was there when the merged file "
                         "was opened: put it back, or merge again)",
                         vds_path, p->path, strerror(errno));
            goto out;
        }
        if (fstat(f, &st) != 0 || st.st_dev != p->dev || st.st_ino != p->ino ||
            st.st_size != p->size || st.st_mtime != p->mtime) {
            close(f);
            rc = ld__err(e, LD_EFORMAT,
                         "%s: part %s was replaced or changed since the merged file was opened "
                         "(its chunk addresses may no longer hold): open the merged file again",
                         vds_path, p->path);
            goto out;
        }
        p->fd = f;
        v->fd_open++;
    }
    p->users++;
    p->last = ++v->tick;
    *fd = p->fd;
out:
    pthread_mutex_unlock(&v->mu);
    return rc;
}

void ld__h5_vds_release(vds_parts *v, size_t k)
{
    pthread_mutex_lock(&v->mu);
    v->p[k].users--;
    pthread_mutex_unlock(&v->mu);
}

/* Bytes [pos, pos+len) of the virtual dataset, part after part. */
int ld__h5_vds_read(vds_parts *v, const char *vds_path, uint64_t pos, size_t len, gather *g,
                    uint64_t i, ld_store_ctx *cx, ld_err *e)
{
    while (len) {
        size_t k = ld__h5_vds_part_of(v, pos);
        const vds_part *p = &v->p[k];
        if (pos < p->start || pos - p->start >= p->bytes)
            return ld__err(e, LD_EFORMAT, "%s: sample %llu: bytes beyond the dataset", vds_path,
                           (unsigned long long)i);
        uint64_t room = p->bytes - (pos - p->start);
        size_t part = room < len ? (size_t)room : len;
        int fd = -1;
        int rc = ld__h5_vds_acquire(v, k, vds_path, &fd, e);
        if (rc < 0) return rc;
        rc = ld__h5_read_map(&p->map, fd, p->path, pos - p->start, part, g, i, cx, e);
        ld__h5_vds_release(v, k);
        if (rc < 0) return rc;
        pos += part;
        len -= part;
    }
    return LD_OK;
}

/* Whether mapping k of dcpl takes the whole of its source to the rows [row, row + src[0]) of
 * the virtual dataset of dims[] (rank dims), spanning all other dimensions; src[] is then the
 * extent the source dataset must have. A source selection "all" (h5py's VirtualSource,
 * `dataconv merge`) is stored without the source's extent (HDF5 gives a scalar space): the
 * mapped block says it. A hyperslab selection must cover its whole extent. 1 yes, 0 no. */
static int vds_whole_rows(hid_t dcpl, size_t k, int rank, const hsize_t dims[4], uint64_t row,
                          hsize_t src[4])
{
    int ok = 0;
    hid_t vs = H5Pget_virtual_vspace(dcpl, k), ss = H5Pget_virtual_srcspace(dcpl, k);
    hsize_t start[4], end[4], box = 1;
    if (vs < 0 || ss < 0 || H5Sget_simple_extent_ndims(vs) != rank) goto done;
    hssize_t vn = H5Sget_select_npoints(vs);
    if (vn <= 0 || H5Sget_select_bounds(vs, start, end) < 0) goto done;
    for (int j = 0; j < rank; j++) {
        src[j] = end[j] - start[j] + 1;
        box *= src[j];
    }
    if (box != (hsize_t)vn || start[0] != row) goto done;
    for (int j = 1; j < rank; j++)
        if (start[j] != 0 || src[j] != dims[j]) goto done;
    if (H5Sget_select_type(ss) != H5S_SEL_ALL) {
        hsize_t ext[4];
        if (H5Sget_simple_extent_ndims(ss) != rank || H5Sget_select_npoints(ss) != vn ||
            H5Sget_simple_extent_npoints(ss) != vn)
            goto done;
        H5Sget_simple_extent_dims(ss, ext, NULL);
        for (int j = 0; j < rank; j++)
            if (ext[j] != src[j]) goto done;
    }
    ok = 1;
done:
    if (vs >= 0) H5Sclose(vs);
    if (ss >= 0) H5Sclose(ss);
    return ok;
}

/* Check a virtual dataset d ('/name', dims[rank]) mapped "whole part -> next rows" against its
 * parts, and with want_direct build the parts' direct maps (rows of row_bytes bytes) into
 * *into; with read_buf read the whole dataset into it as read_type, part after part (HDF5's
 * own VDS read keeps every source file open, half a megabyte of metadata cache each).
 * Returns 1 when *into now reads it directly (want_direct) or read_buf holds it, 0 when it is
 * not of that shape (or a part cannot be read directly: HDF5 reads it, after the checks),
 * < 0 when a part is missing, truncated, of another shape, type or length than its mapping,
 * or from another run. A virtual dataset of another shape is checked by ld__h5_vds_check
 * (every source found, as HDF5 looks for them) and left to HDF5 (0). A non-virtual d: 0. */
int ld__h5_vds_resolve(h5_store *s, hid_t d, const char *name, int rank, const hsize_t dims[4],
                       size_t row_bytes, int want_direct, hid_t read_type, void *read_buf,
                       vds_parts *into, ld_err *e)
{
    int rc = 0, direct = want_direct, bad = 0;
    int prev_k = -1, prev_n = 0; /* shard_index, shard_count of the last part with them */
    size_t count = 0;
    uint64_t row = 0;
    hsize_t src[4] = {0};
    char file[1024], dset[512], resolved[2048];
    vds_parts v = {0};
    ld_desc part; /* a part's records (desc.h) */
    memset(&part, 0, sizeof part);
    hid_t dcpl = H5Dget_create_plist(d), vtype = H5Dget_type(d), fapl = -1, pf = -1, pd = -1,
          pt = -1;
    if (dcpl < 0 || vtype < 0 || H5Pget_layout(dcpl) != H5D_VIRTUAL) goto done;
    if (H5Pget_virtual_count(dcpl, &count) < 0 || count == 0) goto generic;
    for (size_t k = 0; k < count; k++) { /* the shape first: other VDS go through HDF5 */
        if (!vds_whole_rows(dcpl, k, rank, dims, row, src)) goto generic;
        row += src[0];
    }
    if (row != dims[0]) goto generic;
    v.p = calloc(count, sizeof *v.p);
    LD_CHECK(e, v.p, LD_ENOMEM, "%s: out of memory for %zu parts", s->path, count);
    for (size_t k = 0; k < count; k++)
        v.p[k].fd = -1;
    v.n = count;
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    LD_CHECK(e, fapl >= 0 && H5Pset_fapl_sec2(fapl) >= 0, LD_ENOMEM,
             "%s: cannot set up HDF5 file access (out of memory?)", s->path);
    row = 0;
    for (size_t k = 0; k < count; k++) {
        vds_part *p = &v.p[k];
        hsize_t pdims[4] = {0};
        int prank = 0;
        vds_whole_rows(dcpl, k, rank, dims, row, src);
        int st = vds_locate(dcpl, k, s->path, file, sizeof file, dset, sizeof dset, resolved,
                            sizeof resolved);
        if (st == LD_VDS_PATTERN) /* "%b" names: HDF5 resolves them */
            goto generic;
        pf = st == LD_VDS_OK ? H5Fopen(resolved, H5F_ACC_RDONLY, fapl) : H5I_INVALID_HID;
        if (pf < 0 ||
            (dset[0] && H5Lexists(pf, dset[0] == '/' ? dset + 1 : dset, H5P_DEFAULT) <= 0)) {
            bad = 1; /* missing, not HDF5 or no such dataset: the check says which */
            goto generic;
        }
        void *handle = NULL;
        struct stat sb;
        LD_CHECK(e,
                 H5Fget_vfd_handle(pf, H5P_DEFAULT, &handle) >= 0 && handle &&
                     fstat(*(const int *)handle, &sb) == 0,
                 LD_EIO, "%s: part %s: HDF5 does not give its file descriptor", s->path, resolved);
        pd = H5Dopen2(pf, dset, H5P_DEFAULT);
        LD_CHECK(e, pd >= 0 && ld__h5_ds_dims(pd, pdims, &prank) == 0, LD_EFORMAT,
                 "%s: dataset '/%s': part %s has no readable dataset '%s' (damaged?)", s->path,
                 name, resolved, dset);
        int same = prank == rank;
        for (int j = 0; same && j < rank; j++)
            same = pdims[j] == src[j];
        LD_CHECK(e, same, LD_EFORMAT,
                 "%s: dataset '/%s' maps %llu rows of part %s (rows %llu..%llu), but that "
                 "part's '%s' holds %llu rows%s: the part was rewritten, truncated or swapped "
                 "after the merge, and HDF5 would read fill values or drop samples. Convert "
                 "the part again and merge again",
                 s->path, name, (unsigned long long)src[0], resolved, (unsigned long long)row,
                 (unsigned long long)(row + src[0] - 1), dset,
                 (unsigned long long)(prank >= 1 ? pdims[0] : 0),
                 prank == rank ? " (or other sample dimensions)" : " of another rank");
        pt = H5Dget_type(pd);
        LD_CHECK(e, pt >= 0 && H5Tequal(pt, vtype) > 0, LD_EFORMAT,
                 "%s: dataset '/%s': part %s stores '%s' with another element type than the "
                 "merged file declares (made with other options?): merge parts of one run only",
                 s->path, name, resolved, dset);
        ld__desc_free(&part);
        LD_CHECK(e, ld__h5_desc_records(pf, &part) == LD_OK, LD_ENOMEM, "%s: out of memory",
                 resolved);
        const char *rid = part.run_id;
        if (s->run_id[0] && rid && rid[0])
            LD_CHECK(e, !strcmp(rid, s->run_id), LD_EFORMAT,
                     "%s: part %s comes from another run (its run_id %s, the merged file's %s: "
                     "other options, input or part count): re-convert it with the same "
                     "command as the other parts, then merge again",
                     s->path, resolved, rid, s->run_id);
        /* Parts of equal size swapped or renamed after the merge pass every check above:
         * the shard numbers each part recorded must come in the order of the mappings. */
        if (ld__desc_has(&part, "shard_index") && ld__desc_has(&part, "shard_count")) {
            const int pk = (int)part.shard_index, pn = (int)part.shard_count;
            LD_CHECK(e, pk > prev_k && (!prev_n || pn == prev_n), LD_EFORMAT,
                     "%s: dataset '/%s': mapping %zu of %zu reads %s, which is shard %d of %d, "
                     "after shard %d of %d: the part files were swapped or renamed after the "
                     "merge. Give each part its name back, or merge again",
                     s->path, name, k + 1, count, resolved, pk, pn, prev_k, prev_n);
            prev_k = pk;
            prev_n = pn;
        }
        if (read_buf && src[0]) {
            size_t per_row = H5Tget_size(read_type);
            for (int j = 1; j < rank; j++)
                per_row *= (size_t)dims[j];
            LD_CHECK(e,
                     H5Dread(pd, read_type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                             (char *)read_buf + (size_t)row * per_row) >= 0,
                     LD_EFORMAT, "%s: dataset '/%s': part %s: cannot read '%s' (damaged?)", s->path,
                     name, resolved, dset);
        }
        if (direct) {
            int dr = ld__h5_build_direct(resolved, (uint64_t)sb.st_size, pd, rank, pdims, row_bytes,
                                         &p->map, e);
            LD_TRY(dr);
            direct = dr;
        }
        p->start = row * (uint64_t)row_bytes;
        p->bytes = src[0] * (uint64_t)row_bytes;
        p->dev = sb.st_dev;
        p->ino = sb.st_ino;
        p->size = sb.st_size;
        p->mtime = sb.st_mtime;
        p->path = realpath(resolved, NULL); /* the process may change folder later */
        if (!p->path) p->path = ld__strdup(resolved);
        LD_CHECK(e, p->path, LD_ENOMEM, "%s: out of memory", s->path);
        H5Tclose(pt);
        H5Dclose(pd);
        H5Fclose(pf);
        pt = pd = pf = -1;
        row += src[0];
    }
    rc = direct || read_buf;
    if (direct) {
        struct rlimit rl;
        rlim_t cap = VDS_MAX_FDS;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur / 2 < cap)
            cap = rl.rlim_cur / 2;
        v.fd_cap = cap < 4 ? 4 : (int)cap;
        LD_CHECK(e, pthread_mutex_init(&v.mu, NULL) == 0, LD_ENOMEM,
                 "%s: cannot create a mutex (out of resources?)", s->path);
        v.mu_ok = 1;
        *into = v;
        memset(&v, 0, sizeof v);
    }
    goto done;
generic: /* not of the merged shape, or a source that is not there: HDF5 reads it, once its
          * sources are found (a missing one is refused with the message naming it) */
    rc = ld__h5_vds_check(d, s->path, name, e);
    LD_CHECK(e, rc < 0 || !bad, LD_EFORMAT,
             "%s: dataset '/%s': part %s cannot be read (not an HDF5 file with a dataset "
             "'%s'?): put the part back, or merge again",
             s->path, name, resolved, dset);
    rc = rc < 0 ? rc : 0;
done:
fail:
    ld__desc_free(&part);
    ld__h5_vds_free(&v);
    if (pt >= 0) H5Tclose(pt);
    if (pd >= 0) H5Dclose(pd);
    if (pf >= 0) H5Fclose(pf);
    if (fapl >= 0) H5Pclose(fapl);
    if (vtype >= 0) H5Tclose(vtype);
    if (dcpl >= 0) H5Pclose(dcpl);
    return rc;
}

#endif /* LD_HAVE_HDF5 */
