/*
 * ld__h5_describe: a human-readable summary of an HDF5 dataset file (ours in full detail,
 * other tools' `data`/`label` files by shapes and types) or of a --split list file.
 */
#include "store/writer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "store/hdf5/h5_desc.h"
#include "store/hdf5/h5_format.h"
#include "store/hdf5/h5_util.h"

/* "<label><name, escaped>\n": names (paths, attributes) may hold newlines and any bytes. */
static int out_name(ld_buf *out, const char *label, const char *name)
{
    int rc = ld__buf_printf(out, "%s", label);
    if (rc == LD_OK) rc = ld__describe_escape(out, name);
    return rc == LD_OK ? ld__buf_printf(out, "\n") : rc;
}

static void type_name(hid_t t, char *buf, size_t cap)
{
    size_t sz = H5Tget_size(t);
    switch (H5Tget_class(t)) {
    case H5T_INTEGER:
        snprintf(buf, cap, "%sint%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", sz * 8);
        break;
    case H5T_FLOAT: snprintf(buf, cap, "float%zu", sz * 8); break;
    case H5T_STRING:
        snprintf(buf, cap, "%s string", H5Tis_variable_str(t) > 0 ? "variable-length" : "fixed");
        break;
    default: snprintf(buf, cap, "other type (%zu bytes)", sz); break;
    }
}

/* What describe_file collects while describing: the output, the file's path (virtual
 * datasets' sources are relative to its folder) and the problems found, which are listed
 * once more at the end so that they are not missed. */
typedef struct desc_ctx {
    ld_buf *out;
    const char *path;
    ld_buf problems;
    int nproblems;
    int merged; /* a merged file: its parts are described once, not per virtual dataset */
} desc_ctx;

static int problem(desc_ctx *cx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int problem(desc_ctx *cx, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cx->nproblems++;
    return ld__buf_printf(&cx->problems, "  %s\n", msg);
}

/* The sources of a virtual dataset: each found, or flagged (HDF5 reads a missing source as
 * fill values without an error). */
static int describe_vds(desc_ctx *cx, const char *name, hid_t dcpl)
{
    int rc = LD_OK;
    size_t count = 0;
    char file[1024], dset[512], resolved[2048];
    if (H5Pget_virtual_count(dcpl, &count) < 0)
        return problem(cx, "/%s is virtual but its mappings cannot be read", name);
    LD_TRY(ld__buf_printf(cx->out, ", virtual: %zu source%s%s\n", count, count == 1 ? "" : "s",
                          cx->merged ? " (the parts above)" : ""));
    for (size_t k = 0; k < count; k++) {
        int st = ld__h5_vds_source(dcpl, k, cx->path, file, sizeof file, dset, sizeof dset,
                                   resolved, sizeof resolved);
        const char *say = st == LD_VDS_OK           ? "found"
                          : st == LD_VDS_NO_FILE    ? "MISSING FILE"
                          : st == LD_VDS_NOT_HDF5   ? "NOT AN HDF5 FILE"
                          : st == LD_VDS_NO_DATASET ? "MISSING DATASET"
                          : st == LD_VDS_PATTERN    ? "name pattern, not checked"
                                                    : "unreadable mapping";
        if (cx->merged && (st == LD_VDS_OK || st == LD_VDS_NO_FILE)) /* told under "parts" */
            continue;
        if (k < 20 || (st != LD_VDS_OK && st != LD_VDS_PATTERN))
            LD_TRY(ld__buf_printf(cx->out, "    source %zu: %s %s: %s%s%s%s\n", k + 1, file, dset,
                                  say, resolved[0] ? " (" : "", resolved, resolved[0] ? ")" : ""));
        else if (k == 20)
            LD_TRY(ld__buf_printf(cx->out, "    ... (%zu sources in all; problems are listed)\n",
                                  count));
        if (st == LD_VDS_NO_FILE)
            LD_TRY(problem(cx,
                           "/%s: virtual source file %s does not exist (looked for as %s): "
                           "its part reads as fill values in HDF5; libdata's reader refuses "
                           "the file",
                           name, file, resolved));
        else if (st == LD_VDS_NOT_HDF5 || st == LD_VDS_NO_DATASET || st < 0)
            LD_TRY(problem(cx,
                           "/%s: virtual source %zu (%s %s) is %s: its part reads as fill "
                           "values in HDF5; libdata's reader refuses the file",
                           name, k + 1, file, dset,
                           st == LD_VDS_NOT_HDF5     ? "not an HDF5 file"
                           : st == LD_VDS_NO_DATASET ? "missing its dataset"
                                                     : "unreadable"));
    }
fail:
    return rc;
}

/* "name: (d0, d1, ...) type, chunks (...) filter" for one dataset. */
static int describe_ds(desc_ctx *cx, hid_t file, const char *name, hsize_t *n0)
{
    ld_buf *out = cx->out;
    int rc = LD_OK;
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0) return LD_EFORMAT;
    hid_t sp = H5Dget_space(ds), t = H5Dget_type(ds), dcpl = H5Dget_create_plist(ds);
    hsize_t dims[8] = {0}, chunk[8] = {0};
    int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (rank < 0 || rank > 8) {
        rc = LD_EFORMAT;
        goto done;
    }
    H5Sget_simple_extent_dims(sp, dims, NULL);
    if (n0) *n0 = rank > 0 ? dims[0] : 1;
    char tn[64];
    type_name(t, tn, sizeof tn);
    LD_TRY(ld__buf_printf(out, "  /%s: (", name));
    for (int i = 0; i < rank; i++)
        LD_TRY(ld__buf_printf(out, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]));
    LD_TRY(ld__buf_printf(out, ") %s", tn));
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED) {
        int cr = H5Pget_chunk(dcpl, 8, chunk);
        LD_TRY(ld__buf_printf(out, ", chunks ("));
        for (int i = 0; i < cr; i++)
            LD_TRY(ld__buf_printf(out, "%s%llu", i ? ", " : "", (unsigned long long)chunk[i]));
        hsize_t cb = H5Tget_size(t);
        for (int i = 0; i < cr; i++)
            cb *= chunk[i];
        LD_TRY(ld__buf_printf(out, ") = %llu bytes", (unsigned long long)cb));
    } else if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL) {
        LD_TRY(describe_vds(cx, name, dcpl));
        goto done;
    } else if (dcpl >= 0) {
        LD_TRY(ld__buf_printf(out, ", %s",
                              H5Pget_layout(dcpl) == H5D_CONTIGUOUS ? "contiguous" : "compact"));
    }
    int nf = dcpl >= 0 ? H5Pget_nfilters(dcpl) : 0;
    if (nf <= 0) {
        LD_TRY(ld__buf_printf(out, ", no filter\n"));
    } else {
        LD_TRY(ld__buf_printf(out, ", filters:"));
        for (int i = 0; i < nf; i++) {
            char fname[64] = "";
            unsigned flags;
            size_t nelem = 0;
            H5Pget_filter2(dcpl, (unsigned)i, &flags, &nelem, NULL, sizeof fname, fname, NULL);
            LD_TRY(ld__buf_printf(out, " %s", fname[0] ? fname : "?"));
        }
        LD_TRY(ld__buf_printf(out, "\n"));
    }
fail:
done:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(ds);
    return rc;
}

/* Min and max of an integer 1-D dataset, read in blocks (bounded memory). */
static int label_range(hid_t file, const char *name, long long *lo, long long *hi, hsize_t *n)
{
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0) return 0;
    int ok = 0;
    hid_t sp = H5Dget_space(ds), t = H5Dget_type(ds);
    hsize_t dims[2] = {0};
    enum { BLOCK = 65536 };
    int64_t *v = malloc(BLOCK * sizeof *v);
    if (v && sp >= 0 && t >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
        H5Tget_class(t) == H5T_INTEGER) {
        H5Sget_simple_extent_dims(sp, dims, NULL);
        *n = dims[0];
        ok = 1;
        for (hsize_t at = 0; at < dims[0] && ok; at += BLOCK) {
            hsize_t cnt = dims[0] - at < BLOCK ? dims[0] - at : BLOCK;
            hid_t ms = H5Screate_simple(1, &cnt, NULL);
            ok = ms >= 0 && H5Sselect_hyperslab(sp, H5S_SELECT_SET, &at, NULL, &cnt, NULL) >= 0 &&
                 H5Dread(ds, H5T_NATIVE_INT64, ms, sp, H5P_DEFAULT, v) >= 0;
            if (ms >= 0) H5Sclose(ms);
            for (hsize_t i = 0; ok && i < cnt; i++) {
                if (at + i == 0 || v[i] < *lo) *lo = v[i];
                if (at + i == 0 || v[i] > *hi) *hi = v[i];
            }
        }
    }
    free(v);
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(ds);
    return ok && *n > 0;
}

/* label_range of a dataset that may be virtual: a virtual one's sources are read one file
 * after the other (HDF5's VDS read keeps every source file open, half a megabyte of metadata
 * cache each: a merged file of 1000 parts would take half a gigabyte). Missing sources are
 * left out (they are problems of their own). */
static int label_range_any(const char *path, hid_t file, const char *name, long long *lo,
                           long long *hi, hsize_t *n)
{
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    hid_t dcpl = ds >= 0 ? H5Dget_create_plist(ds) : H5I_INVALID_HID;
    size_t count = 0;
    int virt =
        dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL && H5Pget_virtual_count(dcpl, &count) >= 0;
    int ok = 0;
    if (virt) {
        char vf[1024], vd[512], resolved[2048];
        *n = 0;
        for (size_t k = 0; k < count; k++) {
            long long plo = 0, phi = 0;
            hsize_t pn = 0;
            if (ld__h5_vds_source(dcpl, k, path, vf, sizeof vf, vd, sizeof vd, resolved,
                                  sizeof resolved) != LD_VDS_OK)
                continue;
            hid_t pf = H5Fopen(resolved, H5F_ACC_RDONLY, H5P_DEFAULT);
            if (pf < 0) continue;
            if (label_range(pf, vd, &plo, &phi, &pn)) {
                if (!ok || plo < *lo) *lo = plo;
                if (!ok || phi > *hi) *hi = phi;
                *n += pn;
                ok = 1;
            }
            H5Fclose(pf);
        }
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    if (ds >= 0) H5Dclose(ds);
    return virt ? ok : label_range(file, name, lo, hi, n);
}

/* First dimension of a dataset; -1 when there is no such dataset, -2 when the name exists
 * but the dataset cannot be opened or has no dimensions (a damaged object header). */
static long long first_dim(hid_t f, const char *name)
{
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) return -1;
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
    hsize_t dims[8] = {0};
    int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (r >= 1 && r <= 8) H5Sget_simple_extent_dims(sp, dims, NULL);
    if (sp >= 0) H5Sclose(sp);
    if (ds >= 0) H5Dclose(ds);
    return r >= 1 && r <= 8 ? (long long)dims[0] : -2;
}

/* The number of samples the pixel datasets hold (/data rows, or /offsets - 1 for encoded
 * storage) and the number of labels; a mismatch is a problem, which the reader refuses. */
static int sample_counts(desc_ctx *cx, hid_t f, long long *samples)
{
    long long nl = first_dim(f, LD_H5_DS_LABEL), nd = first_dim(f, LD_H5_DS_DATA);
    const char *dn = "/data";
    static const char *const names[] = {LD_H5_DS_DATA, LD_H5_DS_LABEL, LD_H5_DS_OFFSETS,
                                        LD_H5_DS_ENCODED};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (first_dim(f, names[i]) == -2)
            if (problem(cx,
                        "/%s exists but cannot be read (a damaged object header?): "
                        "libdata's reader refuses the file",
                        names[i]) < 0)
                return LD_ENOMEM;
    if (nd == -2) nd = -1;
    if (nl == -2) nl = -1;
    if (nd < 0 && first_dim(f, LD_H5_DS_OFFSETS) >= 1) {
        nd = first_dim(f, LD_H5_DS_OFFSETS) - 1;
        dn = "/encoded (by /offsets)";
    }
    *samples = nd >= 0 ? nd : nl;
    if (nd >= 0 && nl >= 0 && nd != nl)
        return problem(cx,
                       "%s holds %lld samples but /label holds %lld labels: every sample "
                       "needs exactly one label; libdata's reader refuses the file (it is "
                       "incomplete or was made wrongly)",
                       dn, nd, nl);
    return LD_OK;
}

/* Parts shown in full at the start and at the end of a merged file's list; in between only
 * those with a problem, at most PARTS_BAD_SHOWN of them. */
enum { PARTS_EDGE = 3, PARTS_BAD_SHOWN = 20 };

/* A merged file (a virtual /label over part files, issue 13): its parts in order with their
 * sample ranges, and each part's problems (missing, not HDF5, another sample count than its
 * mapping, another run_id): the reader refuses such a file, HDF5 reads fill values. */
static int describe_parts(desc_ctx *cx, hid_t f)
{
    int rc = LD_OK;
    ld_buf *out = cx->out;
    size_t count = 0, k = 0, hidden = 0, bad_shown = 0;
    char file[1024], dset[512], resolved[2048];
    ld_desc md, pdesc; /* the records (desc.h) of the merged file, of one part */
    memset(&md, 0, sizeof md);
    memset(&pdesc, 0, sizeof pdesc);
    char **listed = NULL;
    size_t nl = 0;
    long long shard_count = -1, total = -1;
    hid_t ds = H5Dopen2(f, LD_H5_DS_LABEL, H5P_DEFAULT);
    hid_t dcpl = ds >= 0 ? H5Dget_create_plist(ds) : H5I_INVALID_HID;
    if (dcpl < 0 || H5Pget_layout(dcpl) != H5D_VIRTUAL || H5Pget_virtual_count(dcpl, &count) < 0)
        goto fail; /* not a merged file */
    cx->merged = 1;
    if (ld__h5_attr_strings(f, LD_H5_ATTR_PARTS, &listed, &nl) == LD_ENOMEM) {
        rc = LD_ENOMEM;
        goto fail;
    }
    LD_TRY(ld__h5_desc_records(f, &md));
    if (ld__desc_has(&md, "shard_count")) shard_count = md.shard_count;
    if (ld__desc_has(&md, "listing_total")) total = (long long)md.listing_total;
    const char *run_id = md.run_id ? md.run_id : "";
    const size_t entries = nl > 0 ? nl : count;
    LD_TRY(ld__buf_printf(out, "merged: %zu parts (%zu with samples)", entries, count));
    if (shard_count >= 0) LD_TRY(ld__buf_printf(out, ", shard_count %lld", shard_count));
    if (total >= 0) LD_TRY(ld__buf_printf(out, ", listing_total %lld", total));
    if (run_id[0]) LD_TRY(ld__buf_printf(out, ", run_id %s", run_id));
    LD_TRY(ld__buf_printf(out, "\nparts (virtual datasets over these files, in order):\n"));
    if (nl == 0)
        LD_TRY(problem(cx,
                       "no '%s' attribute: not merged by libdata (the parts are the "
                       "virtual sources)",
                       LD_H5_ATTR_PARTS));
    else if (shard_count >= 0 && shard_count != (long long)nl)
        LD_TRY(problem(cx, "'%s' lists %lld files but shard_count is %lld", LD_H5_ATTR_PARTS,
                       (long long)nl, shard_count));
    for (size_t j = 0; j < entries; j++) {
        const char *name = nl > 0 ? listed[j] : NULL;
        unsigned long long first = 0, rows = 0;
        int mapped = 0, st = LD_VDS_NO_FILE;
        if (k < count) {
            st = ld__h5_vds_source(dcpl, k, cx->path, file, sizeof file, dset, sizeof dset,
                                   resolved, sizeof resolved);
            mapped = !name || !strcmp(name, file);
        }
        if (mapped) {
            hid_t vs = H5Pget_virtual_vspace(dcpl, k);
            hsize_t a[4] = {0}, b[4] = {0}; /* (one per dimension: /label is 1 to 4-D) */
            if (vs >= 0 && H5Sget_select_npoints(vs) > 0 && H5Sget_select_bounds(vs, a, b) >= 0) {
                first = a[0];
                rows = b[0] - a[0] + 1;
            }
            if (vs >= 0) H5Sclose(vs);
            name = file;
            k++;
        } else { /* an empty part: no mapping, looked for next to the merged file */
            const char *slash = strrchr(cx->path, '/');
            if (name[0] == '/' || !slash)
                snprintf(resolved, sizeof resolved, "%s", name);
            else
                snprintf(resolved, sizeof resolved, "%.*s/%s", (int)(slash - cx->path), cx->path,
                         name);
            struct stat pst;
            st = stat(resolved, &pst) == 0 ? LD_VDS_OK : LD_VDS_NO_FILE;
        }
        char what[2600] = "";
        hid_t pf =
            st == LD_VDS_OK ? H5Fopen(resolved, H5F_ACC_RDONLY, H5P_DEFAULT) : H5I_INVALID_HID;
        if (st == LD_VDS_NO_FILE) {
            snprintf(what, sizeof what, "MISSING (looked for as %s)", resolved);
        } else if (pf < 0) {
            snprintf(what, sizeof what, "NOT READABLE AS HDF5 (truncated or damaged)");
        } else {
            long long have = first_dim(pf, LD_H5_DS_LABEL);
            ld__desc_free(&pdesc);
            if (ld__h5_desc_records(pf, &pdesc) < 0) {
                H5Fclose(pf);
                LD_TRY(LD_ENOMEM);
            }
            const int pk = (int)pdesc.shard_index, pn = (int)pdesc.shard_count;
            if (have != (long long)rows)
                snprintf(what, sizeof what, "HOLDS %lld SAMPLES, the merged file maps %llu", have,
                         rows);
            else if (run_id[0] && pdesc.run_id && strcmp(pdesc.run_id, run_id))
                snprintf(what, sizeof what, "FROM ANOTHER RUN (run_id %s)", pdesc.run_id);
            else if (nl > 0 && ld__desc_has(&pdesc, "shard_index") &&
                     ld__desc_has(&pdesc, "shard_count") &&
                     (pk != (int)j || (shard_count >= 0 && pn != shard_count)))
                snprintf(what, sizeof what,
                         "IS SHARD %d OF %d (swapped or renamed after the merge)", pk, pn);
        }
        if (pf >= 0) H5Fclose(pf);
        const int swapped = !strncmp(what, "IS SHARD", 8);
        if (what[0])
            LD_TRY(problem(cx, "part %zu of %zu, %s: %s: libdata's reader refuses the file %s",
                           j + 1, entries, name, what,
                           swapped ? "(HDF5 reads the samples out of order); give each part its "
                                     "name back, or merge again"
                                   : "(HDF5 reads fill values for it); convert that part again, "
                                     "then merge again"));
        const int edge = j < PARTS_EDGE || j + PARTS_EDGE >= entries;
        if (edge || (what[0] && bad_shown < PARTS_BAD_SHOWN)) {
            if (hidden) LD_TRY(ld__buf_printf(out, "  ... %zu more\n", hidden));
            hidden = 0;
            bad_shown += !edge;
            LD_TRY(ld__buf_printf(out, "  %zu: ", j + 1));
            LD_TRY(ld__describe_escape(out, name));
            if (rows)
                LD_TRY(ld__buf_printf(out, ": samples %llu..%llu (%llu)", first, first + rows - 1,
                                      rows));
            else
                LD_TRY(ld__buf_printf(out, ": no samples"));
            LD_TRY(ld__buf_printf(out, "%s%s\n", what[0] ? ": " : "", what));
        } else {
            hidden++;
        }
    }
    if (k < count)
        LD_TRY(problem(cx,
                       "/%s maps %zu source files that '%s' does not list in that order: "
                       "merge again",
                       LD_H5_DS_LABEL, count - k, LD_H5_ATTR_PARTS));
fail:
    ld__desc_free(&md);
    ld__desc_free(&pdesc);
    free(listed);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (ds >= 0) H5Dclose(ds);
    return rc;
}

static int describe_ours(desc_ctx *cx, hid_t f, const ld_desc *d)
{
    ld_buf *out = cx->out;
    int rc = LD_OK;
    LD_TRY(ld__buf_printf(out, "format: libdata HDF5, format version %d\n", d->format_version));
    if (d->encoded)
        LD_TRY(ld__buf_printf(out, "storage: encoded (%s)\n", d->encoding ? d->encoding : "?"));
    else
        LD_TRY(ld__buf_printf(out, "storage: %s\n", d->storage ? d->storage : ""));
    long long lo = 0, hi = 0, n = 0;
    hsize_t nl = 0;
    int have_labels = label_range_any(cx->path, f, LD_H5_DS_LABEL, &lo, &hi, &nl);
    const int before = cx->nproblems;
    LD_TRY(sample_counts(cx, f, &n));
    LD_TRY(ld__buf_printf(out, "samples: %lld%s\n", n < 0 ? 0 : n,
                          cx->nproblems > before ? " (but see the problems below)" : ""));
    if (d->height > 0 && d->width > 0)
        LD_TRY(ld__buf_printf(out, "shape: %d x %d x %d (channels x height x width, layout %s)\n",
                              d->channels, d->height, d->width, d->layout ? d->layout : ""));
    else
        LD_TRY(ld__buf_printf(out, "shape: %d channels, variable height and width\n", d->channels));
    LD_TRY(ld__buf_printf(out, "channel order: %s\n", d->channel_order ? d->channel_order : ""));
    LD_TRY(describe_parts(cx, f));
    if (have_labels) LD_TRY(ld__buf_printf(out, "labels: min %lld, max %lld\n", lo, hi));
    LD_TRY(ld__buf_printf(out, "datasets:\n"));
    const char *names[] = {LD_H5_DS_DATA,  LD_H5_DS_ENCODED, LD_H5_DS_OFFSETS,
                           LD_H5_DS_SHAPE, LD_H5_DS_LABEL,   LD_H5_DS_FILENAME};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (H5Lexists(f, names[i], H5P_DEFAULT) > 0)
            LD_TRY(describe_ds(cx, f, names[i], NULL) == LD_ENOMEM ? LD_ENOMEM : LD_OK);
    LD_TRY(ld__desc_print(d, out)); /* classes, settings, provenance, shard: desc.h */
fail:
    return rc;
}

static herr_t list_root(hid_t g, const char *name, const H5L_info_t *info, void *user)
{
    (void)info;
    desc_ctx *cx = user;
    ld_buf *out = cx->out;
    /* H5Oopen + H5Iget_type works the same on HDF5 1.8, 1.10 and 1.12 */
    hid_t o = H5Oopen(g, name, H5P_DEFAULT);
    if (o < 0) return 0;
    H5I_type_t type = H5Iget_type(o);
    H5Oclose(o);
    if (type == H5I_DATASET) return describe_ds(cx, g, name, NULL) == LD_ENOMEM ? -1 : 0;
    return ld__buf_printf(out, "  /%s (%s)\n", name, type == H5I_GROUP ? "group" : "object") < 0
               ? -1
               : 0;
}

/* Samples in one of our files or a foreign data/label file; -1 if unknown. */
static long long count_samples(hid_t f)
{
    const char *cand[] = {LD_H5_DS_LABEL, LD_H5_DS_DATA};
    for (size_t i = 0; i < 2; i++) {
        const long long n = first_dim(f, cand[i]);
        if (n >= 0) return n;
    }
    return -1;
}

static int describe_file(const char *path, ld_buf *out, ld_err *e)
{
    int rc = LD_OK;
    ld_desc d;
    desc_ctx cx = {out, path, {0}, 0, 0};
    memset(&d, 0, sizeof d);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0 && ld__temp_being_written(path, e) < 0) return LD_EIO;
    if (f < 0) return ld__h5_err(e, LD_EFORMAT, "%s: cannot open as HDF5", path);
    LD_TRY(out_name(out, "file: ", path));
    LD_TRY(ld__h5_desc_from(f, path, &d, e));
    if (d.by_libdata) {
        LD_TRY(describe_ours(&cx, f, &d));
    } else {
        long long n = -1;
        LD_TRY(ld__buf_printf(out, "format: HDF5 (not written by libdata)\n"));
        LD_TRY(sample_counts(&cx, f, &n));
        if (cx.nproblems)
            LD_TRY(ld__buf_printf(out,
                                  "samples: /data and /label disagree (see the problems below)\n"));
        else if (n >= 0)
            LD_TRY(ld__buf_printf(out, "samples: %lld (first dimension of /data or /label)\n", n));
        LD_TRY(ld__buf_printf(out, "datasets at the root:\n"));
        if (H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, NULL, list_root, &cx) < 0)
            LD_CHECK(e, 0, LD_ENOMEM, "out of memory");
    }
    struct stat st;
    if (stat(path, &st) == 0)
        LD_TRY(ld__buf_printf(out, "file size: %lld bytes\n", (long long)st.st_size));
    if (cx.nproblems) {
        LD_TRY(ld__buf_printf(out, "PROBLEMS (%d):\n", cx.nproblems));
        LD_TRY(ld__buf_printf(out, "%.*s", (int)cx.problems.len, (const char *)cx.problems.p));
    }
fail:
    if (rc == LD_ENOMEM) ld__err(e, rc, "out of memory");
    ld__buf_free(&cx.problems);
    ld__desc_free(&d);
    H5Fclose(f);
    return rc;
}

/* A --split list: each non-empty line names an HDF5 file. */
static int describe_list(const char *path, ld_buf *out, ld_err *e)
{
    int rc = LD_OK;
    char line[4096];
    unsigned long files = 0;
    long long total = 0;
    ld_desc d;
    memset(&d, 0, sizeof d);
    FILE *fp = fopen(path, "rb");
    LD_CHECK(e, fp, LD_EIO, "%s: cannot open: %s", path, strerror(errno));
    LD_TRY(out_name(out, "file: ", path));
    LD_TRY(ld__buf_printf(out, "format: list of HDF5 files (Caffe HDF5Data source)\nfiles:\n"));
    while (fgets(line, sizeof line, fp)) {
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = '\0';
        if (n == 0) continue;
        /* relative lines: against the list's folder, else the current one (as the reader) */
        char *part = ld__list_entry_path(path, line);
        LD_CHECK(e, part, LD_ENOMEM, "out of memory");
        struct stat pst;
        int missing = stat(part, &pst) != 0;
        int err = errno;
        hid_t f = missing ? H5I_INVALID_HID : H5Fopen(part, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0) {
            size_t ln = strlen(line);
            int named_h5 = (ln > 3 && !strcasecmp(line + ln - 3, ".h5")) ||
                           (ln > 5 && !strcasecmp(line + ln - 5, ".hdf5"));
            /* A missing *.h5 line is a list with a missing part, not "not a list". */
            if (missing && (files || named_h5))
                rc = ld__err(e, LD_EIO,
                             "%s: line %lu: part %s: %s (relative lines are looked "
                             "up in the list's folder, then in the current folder)",
                             path, files + 1, part, strerror(err));
            else
                rc = ld__h5_err(e, files ? LD_EIO : LD_EFORMAT,
                                "%s: line %lu: %s is not a readable HDF5 file", path, files + 1,
                                part);
            free(part);
            goto fail;
        }
        long long k = count_samples(f);
        if (!files) rc = ld__h5_desc_from(f, part, &d, e); /* the list's records: its first's */
        H5Fclose(f);
        free(part);
        LD_TRY(rc);
        if (files < 20) {
            LD_TRY(ld__buf_printf(out, "  "));
            LD_TRY(ld__describe_escape(out, line));
            LD_TRY(ld__buf_printf(out, ": %lld samples\n", k));
        }
        files++;
        if (k > 0) total += k;
    }
    LD_CHECK(e, files > 0, LD_EFORMAT, "%s: neither an HDF5 file nor a list of HDF5 files", path);
    if (files > 20) LD_TRY(ld__buf_printf(out, "  ... (%lu files in all)\n", files));
    LD_TRY(ld__buf_printf(out, "total: %lu files, %lld samples\n", files, total));
    if (d.by_libdata) LD_TRY(ld__desc_print(&d, out));
fail:
    if (rc == LD_ENOMEM) ld__err(e, rc, "out of memory");
    ld__desc_free(&d);
    if (fp) fclose(fp);
    return rc;
}

int ld__h5_describe(const char *path, ld_buf *out, ld_err *e)
{
    int rc;
    ld_h5_quiet q;
    struct stat st;
    if (stat(path, &st) != 0) return ld__err(e, LD_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return ld__err(e, LD_EFORMAT, "%s: not an HDF5 file (not a regular file)", path);
    ld__h5_quiet_begin(&q);
#if H5_VERSION_GE(1, 12, 0)
    htri_t is_h5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
    htri_t is_h5 = H5Fis_hdf5(path);
#endif
    if (is_h5 > 0) {
        rc = describe_file(path, out, e);
    } else {
        /* A split list is short text; anything else is not ours. */
        size_t before = out->len;
        rc = st.st_size < (1 << 20) ? describe_list(path, out, e) : LD_EFORMAT;
        if (rc < 0) {
            out->len = before;
            if (rc == LD_EFORMAT)
                ld__err(e, rc, "%s: not an HDF5 file (nor a list of HDF5 files)", path);
        }
    }
    ld__h5_quiet_end(&q);
    if (rc == LD_OK && out->p && out->len < out->cap) out->p[out->len] = '\0';
    return rc;
}
