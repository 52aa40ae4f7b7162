/*
 * HDF5 merge (ld_merge): the parts of a sharded conversion -> one small file of virtual
 * datasets (VDS) that map the parts in K order, per h5_format.h ("Merged file").
 *
 * Two passes over the parts, one part file open at a time (thousands of parts stay under the
 * open-file limit): the first reads each part's shard values, settings and dataset shapes and
 * checks them against the first part given; the second (encoded only) streams each part's
 * /offsets in blocks into the merged /offsets, shifted by the bytes of the parts before it.
 * Memory: a few bytes per part plus two blocks, whatever the number of samples.
 *
 * The merged file is written under a temporary name beside the output and renamed when
 * complete (as the converter's outputs are); before the rename every mapping is resolved the
 * way HDF5 will resolve it (ld__h5_vds_check), so a merged file never maps a missing part.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* realpath */
#endif
#include "store/merge_fmt.h"

#ifdef LD_HAVE_HDF5
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/hdf5/h5_desc.h"
#include "store/hdf5/h5_format.h"
#include "store/hdf5/h5_util.h"
#include "store/hdf5/h5_vfd.h"
#include "store/writer.h"

#define OFFSETS_BLOCK 65536 /* /offsets elements per read and per write (512 KiB) */

typedef struct h5part {
    uint64_t n;       /* samples */
    uint64_t bytes;   /* encoded: length of /encoded */
    hsize_t row[3];   /* raw: /data's C, H, W */
    hsize_t mrow[3];  /* masks: 1, H, W */
    uint64_t nboxes;  /* detection boxes: rows of /boxes */
    size_t name_size; /* /filename: fixed-length size, 0 = variable-length strings */
    int32_t c, h, w;  /* channels, height, width attributes */
    char order[16];   /* channel_order attribute */
    char *src;        /* the part's name in the mappings and in `parts` */
} h5part;

typedef struct ld_merge_fmt {
    const char *output;
    ld_shard *sh;
    h5part *p;
    size_t n;
    const ld_merge_log *log;
    int encoded;
    ld_desc ref; /* the first given part's description: the others must have its settings */
    ld_desc k0;  /* part 0's (K = 0): the merged file records it, without the part's own shard
                    values, with the shape and channel order of the whole */
    hid_t label_t, data_t, shape_t; /* types of the first part's datasets */
    hid_t mask_t;                   /* and of its masks (a mask field: /mask or /label) */
    char *tmp;
} h5merge;

/* Part i's settings against the first given part's: LD_OK or LD_EINVAL naming both. */
static int compare_settings(const h5merge *m, size_t i, const ld_desc *d, ld_err *e)
{
    char hv[256], wv[256];
    const char *name = ld__desc_first_difference(d, &m->ref, hv, wv, sizeof hv);
    const char *first = m->sh[0].path, *here = m->sh[i].path;
    if (!name) return LD_OK;
    if (!strcmp(name, "class_names"))
        return ld__err(e, LD_EINVAL,
                       "%s: its class names differ from those of %s (%s here, %s there): the "
                       "parts come from different inputs; reconvert them from one listing",
                       here, first, hv, wv);
    return ld__err(e, LD_EINVAL,
                   "%s: made with other settings than %s (%s is %s here, %s there): merge the "
                   "parts of one conversion (same options), or reconvert this part",
                   here, first, name, hv, wv);
}

/* ---- pass 1: each part's values ------------------------------------------------------------- */

static int ds_shape(hid_t f, const char *name, int want_rank, hsize_t dims[4], hid_t *type,
                    const char *path, ld_err *e)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0)
        return ld__h5_err(e, LD_EFORMAT,
                          "%s: no dataset /%s: not a complete libdata part; "
                          "reconvert it",
                          path, name);
    hid_t sp = H5Dget_space(d);
    int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (r == want_rank) H5Sget_simple_extent_dims(sp, dims, NULL);
    if (sp >= 0) H5Sclose(sp);
    hid_t t = type ? H5Dget_type(d) : H5I_INVALID_HID;
    H5Dclose(d);
    if (r != want_rank || (type && t < 0)) {
        if (t >= 0) H5Tclose(t);
        return ld__err(e, LD_EFORMAT, "%s: /%s has %d dimensions, not %d: not a libdata part", path,
                       name, r, want_rank);
    }
    if (type) *type = t;
    return LD_OK;
}

/* The dataset type `*t` (consumed: closed, or kept as the reference; *t is invalid after)
 * against the first part's. */
static int same_type(hid_t *ref, hid_t *t, const char *name, const h5merge *m, size_t i, ld_err *e)
{
    hid_t got = *t;
    *t = H5I_INVALID_HID;
    if (*ref < 0) {
        *ref = got;
        return LD_OK;
    }
    int eq = H5Tequal(*ref, got) > 0;
    H5Tclose(got);
    if (eq) return LD_OK;
    return ld__err(e, LD_EINVAL,
                   "%s: /%s has another element type than in %s: merge the parts "
                   "of one conversion",
                   m->sh[i].path, name, m->sh[0].path);
}

static int read_part(h5merge *m, size_t i, ld_err *e)
{
    int rc = LD_OK;
    ld_shard *s = &m->sh[i];
    h5part *p = &m->p[i];
    ld_desc d;
    hid_t t = H5I_INVALID_HID;
    struct stat sb;
    memset(&d, 0, sizeof d);
    if (stat(s->path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return ld__err(e, LD_EINVAL,
                       "%s: a directory (an LMDB part?) among HDF5 parts: merge the parts of one "
                       "output (OUT.h5 or OUT.lmdb)",
                       s->path);
    hid_t f = H5Fopen(s->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        H5Eclear2(H5E_DEFAULT);
        return ld__err(e, LD_EFORMAT,
                       "%s: not a readable HDF5 file (truncated, or still being written?): "
                       "reconvert this part with the same command and its shard_index/shard_count",
                       s->path);
    }
    LD_TRY(ld__h5_desc_from(f, s->path, &d, e)); /* identity, storage, shape: desc.h */
    LD_CHECK(e, H5Aexists(f, LD_H5_ATTR_PARTS) <= 0, LD_EINVAL,
             "%s: a merged file, not a part: give the part files it maps", s->path);
    LD_CHECK(e, d.shard_count && !d.shard_damaged && d.storage && d.storage[0], LD_EFORMAT,
             "%s: not a part of a sharded conversion (no shard_index, shard_count, run_id... "
             "attributes): merge takes the files of a sharded conversion (shard_index/shard_count)",
             s->path);
    s->index = d.shard_index;
    s->count = d.shard_count;
    s->first = (int64_t)d.shard_first;
    s->listed = (int64_t)d.shard_listed;
    s->total = (int64_t)d.listing_total;
    snprintf(s->run_id, sizeof s->run_id, "%s", d.run_id);
    const char *storage = d.storage;
    LD_CHECK(e, !strcmp(storage, LD_H5_STORAGE_RAW) || !strcmp(storage, LD_H5_STORAGE_ENCODED),
             LD_EFORMAT, "%s: unknown storage '%s'", s->path, storage);
    if (i == 0) m->encoded = !strcmp(storage, LD_H5_STORAGE_ENCODED);
    if (i == 0)
        LD_CHECK(e, ld__desc_copy(&m->ref, &d) == LD_OK, LD_ENOMEM, "out of memory");
    else
        LD_TRY(compare_settings(m, i, &d, e));
    if (d.shard_index == 0 && !m->k0.format) /* K = 0 (the set is checked after the reads) */
        LD_CHECK(e, ld__desc_copy(&m->k0, &d) == LD_OK, LD_ENOMEM, "out of memory");
    p->c = d.channels;
    p->h = d.height;
    p->w = d.width;
    snprintf(p->order, sizeof p->order, "%s", d.channel_order ? d.channel_order : "");

    hsize_t dims[4] = {0};
    if (m->encoded) {
        LD_TRY(ds_shape(f, LD_H5_DS_ENCODED, 1, dims, &t, s->path, e));
        LD_TRY(same_type(&m->data_t, &t, LD_H5_DS_ENCODED, m, i, e));
        p->bytes = dims[0];
        LD_TRY(ds_shape(f, LD_H5_DS_SHAPE, 2, dims, &t, s->path, e));
        LD_TRY(same_type(&m->shape_t, &t, LD_H5_DS_SHAPE, m, i, e));
        p->n = dims[0];
        LD_CHECK(e, dims[1] == 3, LD_EFORMAT, "%s: /shape rows have %llu values, not 3", s->path,
                 (unsigned long long)dims[1]);
        LD_TRY(ds_shape(f, LD_H5_DS_OFFSETS, 1, dims, NULL, s->path, e));
        LD_CHECK(e, dims[0] == p->n + 1, LD_EFORMAT,
                 "%s: /offsets has %llu entries for %llu samples (not samples + 1): a damaged "
                 "part; reconvert it",
                 s->path, (unsigned long long)dims[0], (unsigned long long)p->n);
    } else {
        LD_TRY(ds_shape(f, LD_H5_DS_DATA, 4, dims, &t, s->path, e));
        LD_TRY(same_type(&m->data_t, &t, LD_H5_DS_DATA, m, i, e));
        p->n = dims[0];
        memcpy(p->row, dims + 1, sizeof p->row);
        LD_CHECK(e, i == 0 || !memcmp(p->row, m->p[0].row, sizeof p->row), LD_EINVAL,
                 "%s: its images are %llux%llux%llu (channels x height x width), those of %s "
                 "%llux%llux%llu: made with other settings; merge the parts of one conversion",
                 s->path, (unsigned long long)p->row[0], (unsigned long long)p->row[1],
                 (unsigned long long)p->row[2], m->sh[0].path, (unsigned long long)m->p[0].row[0],
                 (unsigned long long)m->p[0].row[1], (unsigned long long)m->p[0].row[2]);
    }
    if (ld__desc_boxes(&m->ref)) { /* detection boxes: (M, 4) rows, of this part's samples */
        LD_TRY(ds_shape(f, LD_H5_DS_BOXES, 2, dims, NULL, s->path, e));
        LD_CHECK(e, dims[1] == 4, LD_EFORMAT, "%s: /boxes rows have %llu values, not 4", s->path,
                 (unsigned long long)dims[1]);
        p->nboxes = dims[0];
        LD_TRY(ds_shape(f, LD_H5_DS_BOX_OFFSETS, 1, dims, NULL, s->path, e));
        LD_CHECK(e, dims[0] == p->n + 1, LD_EFORMAT,
                 "%s: /box_offsets has %llu entries for %llu samples: a damaged part; reconvert "
                 "it",
                 s->path, (unsigned long long)dims[0], (unsigned long long)p->n);
    }
    /* masks (N, 1, H, W), of one size in every part */
    const ld_desc_field *mf = ld__desc_mask(&m->ref);
    if (mf) {
        LD_TRY(ds_shape(f, mf->name, 4, dims, &t, s->path, e));
        LD_TRY(same_type(&m->mask_t, &t, mf->name, m, i, e));
        memcpy(p->mrow, dims + 1, sizeof p->mrow);
        LD_CHECK(e, dims[0] == p->n, LD_EFORMAT,
                 "%s: /%s has %llu masks for %llu samples: a damaged part; reconvert it", s->path,
                 mf->name, (unsigned long long)dims[0], (unsigned long long)p->n);
        LD_CHECK(e, i == 0 || !memcmp(p->mrow, m->p[0].mrow, sizeof p->mrow), LD_EINVAL,
                 "%s: its masks are %llux%llu, those of %s %llux%llu: made with other settings; "
                 "merge the parts of one conversion",
                 s->path, (unsigned long long)p->mrow[1], (unsigned long long)p->mrow[2],
                 m->sh[0].path, (unsigned long long)m->p[0].mrow[1],
                 (unsigned long long)m->p[0].mrow[2]);
    }
    /* no label field: the masks are the label, or a detection dataset (boxes only) */
    if (!ld__desc_role(&m->ref, LD_ROLE_LABEL)) goto names;
    /* (N,) labels, or (N, K) label vectors: the parts agree on K (their descriptions) */
    const int k = ld__desc_label_k(&m->ref);
    LD_TRY(ds_shape(f, LD_H5_DS_LABEL, k ? 2 : 1, dims, &t, s->path, e));
    LD_TRY(same_type(&m->label_t, &t, LD_H5_DS_LABEL, m, i, e));
    LD_CHECK(e, !k || dims[1] == (hsize_t)k, LD_EFORMAT,
             "%s: /label rows have %llu values, its description says %d: a damaged part", s->path,
             (unsigned long long)dims[1], k);
    LD_CHECK(e, dims[0] == p->n, LD_EFORMAT,
             "%s: /label has %llu rows for %llu samples: a damaged part; reconvert it", s->path,
             (unsigned long long)dims[0], (unsigned long long)p->n);
names:
    LD_TRY(ds_shape(f, LD_H5_DS_FILENAME, 1, dims, &t, s->path, e));
    LD_CHECK(e, dims[0] == p->n, LD_EFORMAT,
             "%s: /filename has %llu rows for %llu samples: a damaged part; reconvert it", s->path,
             (unsigned long long)dims[0], (unsigned long long)p->n);
    LD_CHECK(e, H5Tget_class(t) == H5T_STRING, LD_EFORMAT, "%s: /filename does not hold strings",
             s->path);
    p->name_size = H5Tis_variable_str(t) > 0 ? 0 : H5Tget_size(t);
    LD_CHECK(e, i == 0 || (p->name_size == 0) == (m->p[0].name_size == 0), LD_EINVAL,
             "%s: /filename is stored as %s strings, in %s as %s strings: merge the parts of one "
             "conversion",
             s->path, p->name_size ? "fixed-length" : "variable-length", m->sh[0].path,
             m->p[0].name_size ? "fixed-length" : "variable-length");
fail:
    if (t >= 0) H5Tclose(t);
    ld__desc_free(&d);
    H5Fclose(f);
    return rc;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* The name the mappings give part `path`: relative to the output's folder `dir` (a real path)
 * when the part lies in it or below it, else its absolute path. malloc'd, or NULL. */
static char *source_name(const char *dir, const char *path)
{
    char *real = realpath(path, NULL);
    if (!real) return NULL;
    size_t dl = strlen(dir);
    if (dl == 1 && dir[0] == '/') dl = 0; /* the root folder: every path is below it */
    if (!strncmp(real, dir, dl) && real[dl] == '/') {
        char *rel = ld__strdup(real + dl + 1);
        free(real);
        return rel;
    }
    return real;
}

/* A virtual dataset `name` (rank dims; rows after the first in `row`) mapping the whole of
 * each non-empty part's `name` to its rows, in part order. */
/* What a virtual dataset's rows are, per part: samples, bytes (/encoded), boxes (/boxes...). */
enum { BY_SAMPLES = 0, BY_BYTES = 1, BY_BOXES = 2 };

static uint64_t part_rows(const h5part *p, int by)
{
    return by == BY_BYTES ? p->bytes : by == BY_BOXES ? p->nboxes : p->n;
}

static int make_vds(h5merge *m, hid_t file, const char *name, hid_t type, int rank,
                    const hsize_t *row, int by_bytes, ld_err *e)
{
    int rc = LD_OK;
    hsize_t dims[4] = {0}, start[4] = {0}, count[4] = {0};
    hid_t vspace = H5I_INVALID_HID, src = H5I_INVALID_HID, d = H5I_INVALID_HID;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    for (size_t i = 0; i < m->n; i++)
        dims[0] += part_rows(&m->p[i], by_bytes);
    for (int k = 1; k < rank; k++)
        dims[k] = count[k] = row[k - 1];
    vspace = H5Screate_simple(rank, dims, NULL);
    LD_CHECK(e, dcpl >= 0 && vspace >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0, LD_ENOMEM,
             "HDF5: out of memory");
    for (size_t i = 0; i < m->n; i++) {
        count[0] = part_rows(&m->p[i], by_bytes);
        if (count[0] == 0) {
            continue; /* an empty part has no mapping; it is still listed in `parts` */
        }
        src = H5Screate_simple(rank, count, NULL);
        if (src < 0 || H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Pset_virtual(dcpl, vspace, m->p[i].src, name, src) < 0)
            LD_TRY(
                ld__h5_err(e, LD_EIO, "%s: cannot map /%s of %s", m->output, name, m->sh[i].path));
        H5Sclose(src);
        src = H5I_INVALID_HID;
        start[0] += count[0];
    }
    H5Sselect_all(vspace);
    d = H5Dcreate2(file, name, type, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0)
        LD_TRY(ld__h5_err(e, LD_EIO, "%s: cannot create the virtual dataset /%s", m->output, name));
    /* resolved as HDF5 will resolve it, from the file's folder: no mapping to nothing */
    LD_TRY(ld__h5_vds_check(d, m->tmp, name, e));
fail:
    if (d >= 0) H5Dclose(d);
    if (src >= 0) H5Sclose(src);
    if (vspace >= 0) H5Sclose(vspace);
    if (dcpl >= 0) H5Pclose(dcpl);
    return rc;
}

/* Append `n` values to the merged /offsets through the block `out` (flushed when full). */
typedef struct off_out {
    hid_t ds;
    uint64_t *buf;
    size_t fill;
    uint64_t at; /* rows written */
} off_out;

static int off_flush(off_out *o, const char *output, ld_err *e)
{
    if (!o->fill) return LD_OK;
    hsize_t start = o->at, count = o->fill;
    hid_t fs = H5Dget_space(o->ds), ms = H5Screate_simple(1, &count, NULL);
    int ok = fs >= 0 && ms >= 0 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) >= 0 &&
             H5Dwrite(o->ds, H5T_NATIVE_UINT64, ms, fs, H5P_DEFAULT, o->buf) >= 0;
    if (fs >= 0) H5Sclose(fs);
    if (ms >= 0) H5Sclose(ms);
    if (!ok) return ld__h5_err(e, LD_EIO, "%s: cannot write /offsets", output);
    o->at += o->fill;
    o->fill = 0;
    return LD_OK;
}

static int off_put(off_out *o, uint64_t v, const char *output, ld_err *e)
{
    o->buf[o->fill++] = v;
    return o->fill == OFFSETS_BLOCK ? off_flush(o, output, e) : LD_OK;
}

/* The real /offsets: 0, then each part's offsets[1..n] + the bytes of the parts before it,
 * each part's checked (starts at 0, never decreases, ends at its /encoded length). */
/* The merged offsets dataset `name` (/offsets into /encoded, by BY_BYTES; /box_offsets into
 * /boxes, by BY_BOXES): each part's, shifted by the rows of the parts before it. */
static int write_offsets(h5merge *m, hid_t file, const char *name, int by, ld_err *e)
{
    int rc = LD_OK;
    off_out o = {H5I_INVALID_HID, NULL, 0, 0};
    uint64_t *in = NULL;
    hid_t pf = H5I_INVALID_HID, pd = H5I_INVALID_HID, fs = H5I_INVALID_HID, ms = H5I_INVALID_HID;
    hsize_t total = 1;
    for (size_t i = 0; i < m->n; i++)
        total += m->p[i].n;
    hsize_t chunk = total < LD_H5_LABEL_CHUNK ? total : LD_H5_LABEL_CHUNK;
    hid_t space = H5Screate_simple(1, &total, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    LD_CHECK(e,
             space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 1, &chunk) >= 0 &&
                 H5Pset_obj_track_times(dcpl, 0) >= 0 &&
                 H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0,
             LD_ENOMEM, "HDF5: out of memory");
    /* Blocks are whole chunks (but the last): HDF5's chunk cache would only keep copies of
     * chunks never touched again, up to 1 MiB per dataset (memory growing with the samples up
     * to that size). No cache, for the parts' /offsets either. */
    LD_CHECK(e,
             dapl >= 0 && H5Pset_chunk_cache(dapl, H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0,
                                             H5D_CHUNK_CACHE_W0_DEFAULT) >= 0,
             LD_ENOMEM, "HDF5: out of memory");
    const char *rows = by == BY_BYTES ? "bytes of /encoded" : "rows of /boxes";
    o.ds = H5Dcreate2(file, name, by == BY_BYTES ? H5T_STD_U64LE : H5T_STD_I64LE, space,
                      H5P_DEFAULT, dcpl, dapl);
    if (o.ds < 0) LD_TRY(ld__h5_err(e, LD_EIO, "%s: cannot create /%s", m->output, name));
    o.buf = malloc(OFFSETS_BLOCK * sizeof *o.buf);
    in = malloc(OFFSETS_BLOCK * sizeof *in);
    LD_CHECK(e, o.buf && in, LD_ENOMEM, "out of memory");
    LD_TRY(off_put(&o, 0, m->output, e));
    uint64_t base = 0;
    for (size_t i = 0; i < m->n; i++) {
        const char *path = m->sh[i].path;
        pf = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        pd = pf >= 0 ? H5Dopen2(pf, name, dapl) : H5I_INVALID_HID;
        fs = pd >= 0 ? H5Dget_space(pd) : H5I_INVALID_HID;
        if (fs < 0) LD_TRY(ld__h5_err(e, LD_EFORMAT, "%s: cannot open /%s", path, name));
        const uint64_t part = part_rows(&m->p[i], by);
        uint64_t prev = 0;
        for (hsize_t at = 0; at < m->p[i].n + 1;) {
            hsize_t cnt = m->p[i].n + 1 - at;
            if (cnt > OFFSETS_BLOCK) cnt = OFFSETS_BLOCK;
            ms = H5Screate_simple(1, &cnt, NULL);
            if (ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &cnt, NULL) < 0 ||
                H5Dread(pd, H5T_NATIVE_UINT64, ms, fs, H5P_DEFAULT, in) < 0)
                LD_TRY(ld__h5_err(e, LD_EFORMAT,
                                  "%s: cannot read /%s (a damaged part? reconvert it)", path,
                                  name));
            H5Sclose(ms);
            ms = H5I_INVALID_HID;
            for (hsize_t j = 0; j < cnt; j++) {
                uint64_t v = in[j];
                LD_CHECK(e, (at + j == 0 ? v == 0 : v >= prev) && v <= part, LD_EFORMAT,
                         "%s: /%s[%llu] = %llu is out of order or past the %llu %s: a damaged "
                         "part; reconvert it",
                         path, name, (unsigned long long)(at + j), (unsigned long long)v,
                         (unsigned long long)part, rows);
                prev = v;
                if (at + j > 0) LD_TRY(off_put(&o, base + v, m->output, e));
            }
            at += cnt;
        }
        LD_CHECK(e, prev == part, LD_EFORMAT,
                 "%s: /%s ends at %llu but there are %llu %s: a damaged part; reconvert it", path,
                 name, (unsigned long long)prev, (unsigned long long)part, rows);
        base += part;
        H5Sclose(fs);
        H5Dclose(pd);
        H5Fclose(pf);
        fs = pd = pf = H5I_INVALID_HID;
    }
    LD_TRY(off_flush(&o, m->output, e));
fail:
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (pd >= 0) H5Dclose(pd);
    if (pf >= 0) H5Fclose(pf);
    if (o.ds >= 0) H5Dclose(o.ds);
    if (space >= 0) H5Sclose(space);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (dapl >= 0) H5Pclose(dapl);
    free(o.buf);
    free(in);
    return rc;
}

/* A 1-D attribute of n strings. 0 or -1. */
static int put_strs(hid_t loc, const char *name, hid_t vstr, const char **v, size_t n)
{
    hsize_t dims = n;
    hid_t s = H5Screate_simple(1, &dims, NULL);
    hid_t a = s >= 0 ? H5Acreate2(loc, name, vstr, s, H5P_DEFAULT, H5P_DEFAULT) : -1;
    int ok = a >= 0 && H5Awrite(a, vstr, v) >= 0;
    if (a >= 0) H5Aclose(a);
    if (s >= 0) H5Sclose(s);
    return ok ? 0 : -1;
}

/* Root attributes: part 0's description (desc.h) as a merged file's (without its own shard
 * values), the shape and channel order of the whole (a value only when every non-empty part
 * has the same, as a single run records it), and `parts`. */
static int write_attrs(h5merge *m, hid_t file, hid_t vstr, ld_err *e)
{
    int rc = LD_OK;
    const char **names = NULL;
    ld_desc md;
    memset(&md, 0, sizeof md);
    LD_CHECK(e, ld__desc_copy(&md, &m->k0) == LD_OK, LD_ENOMEM, "out of memory");
    int32_t c = -1, h = -1, w = -1;
    const char *order = NULL;
    for (size_t i = 0; i < m->n; i++) {
        const h5part *p = &m->p[i];
        if (!p->n) continue; /* an empty part records no image's shape */
        c = c == -1 ? p->c : c == p->c ? c : 3;
        if (h == -1 || (h == p->h && w == p->w)) {
            h = p->h;
            w = p->w;
        } else {
            h = w = 0;
        }
        /* GRAY says the images have 1 channel: a mix is recorded as the color order */
        if (!order || !strcmp(order, LD_H5_ORDER_GRAY)) order = p->order;
    }
    md.merged = 1;
    md.channels = c < 0 ? m->p[0].c : c;
    md.height = h < 0 ? m->p[0].h : h;
    md.width = w < 0 ? m->p[0].w : w;
    LD_CHECK(e, ld__desc_set_text(&md.channel_order, order ? order : m->p[0].order) == LD_OK,
             LD_ENOMEM, "out of memory");
    LD_TRY(ld__h5_desc_write(file, &md, m->output, e));
    names = calloc(m->n, sizeof *names);
    LD_CHECK(e, names, LD_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->n; i++)
        names[i] = m->p[i].src;
    LD_CHECK(e, !put_strs(file, LD_H5_ATTR_PARTS, vstr, names, m->n), LD_EIO,
             "%s: cannot write the attributes", m->output);
fail:
    ld__desc_free(&md);
    free(names);
    return rc;
}

static void stale_removed(void *user, const char *path, long pid, uint64_t bytes)
{
    const h5merge *m = user;
    ld__merge_log(m->log, LD_LOG_WARN,
                  "removed %s (%llu bytes), left by a merge that was killed (pid %ld)", path,
                  (unsigned long long)bytes, pid);
}

static int sync_path(const char *path, ld_err *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ld__err(e, LD_EIO, "%s: cannot reopen to sync: %s", path, strerror(errno));
    int r = fsync(fd), err = errno;
    close(fd);
    if (r != 0 && err != EINVAL && err != EROFS)
        return ld__err(e, LD_EIO, "%s: fsync failed: %s", path, strerror(err));
    return LD_OK;
}

static int write_merged(h5merge *m, ld_err *e)
{
    int rc = LD_OK;
    hid_t fcpl = H5I_INVALID_HID, fapl = H5I_INVALID_HID, file = H5I_INVALID_HID;
    hid_t vstr = H5I_INVALID_HID, ntype = H5I_INVALID_HID, vfd = H5I_INVALID_HID;
    char *dir = NULL, *real_dir = NULL;
    int published = 0;
    int io_err = 0; /* a write the driver failed (h5_vfd.h) */

    const char *slash = strrchr(m->output, '/');
    dir = slash == m->output ? ld__strdup("/")
          : slash            ? ld__asprintf("%.*s", (int)(slash - m->output), m->output)
                             : ld__strdup(".");
    LD_CHECK(e, dir, LD_ENOMEM, "out of memory");
    real_dir = realpath(dir, NULL);
    LD_CHECK(e, real_dir, errno == ENOMEM ? LD_ENOMEM : LD_EIO,
             "%s: cannot write into the folder %s: %s", m->output, dir, strerror(errno));
    for (size_t i = 0; i < m->n; i++) {
        m->p[i].src = source_name(real_dir, m->sh[i].path);
        LD_CHECK(e, m->p[i].src, errno == ENOMEM ? LD_ENOMEM : LD_EIO,
                 "%s: cannot make its absolute path: %s", m->sh[i].path, strerror(errno));
        /* HDF5 reads '%' in a mapping's file name as a pattern ("%b" = block number) */
        LD_CHECK(e, !strchr(m->p[i].src, '%'), LD_EINVAL,
                 "%s: HDF5 virtual datasets take '%%' in a file name as a pattern, and the merged "
                 "file would name this part '%s': rename it (or its folder) without '%%'",
                 m->sh[i].path, m->p[i].src);
    }

    ld__sweep_stale_temps(m->output, stale_removed, m);
    m->tmp = ld__temp_name(m->output, m);
    LD_CHECK(e, m->tmp, LD_ENOMEM, "out of memory");
    vfd = ld__h5_vfd_register();
    fcpl = H5Pcreate(H5P_FILE_CREATE);
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    vstr = H5Tcopy(H5T_C_S1);
    LD_CHECK(e, vfd >= 0 && fcpl >= 0 && fapl >= 0 && vstr >= 0, LD_ENOMEM, "HDF5: out of memory");
    /* Virtual datasets need the HDF5 1.10 file format; nothing newer, so that every 1.10
     * reader (h5py, Caffe builds) opens the file. No time stamps: same parts, same bytes. */
    LD_CHECK(e,
             H5Pset_obj_track_times(fcpl, 0) >= 0 &&
                 H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V110) >= 0 &&
                 ld__h5_vfd_set(fapl, vfd, &io_err) >= 0 &&
                 H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0 &&
                 H5Tset_size(vstr, H5T_VARIABLE) >= 0 && H5Tset_cset(vstr, H5T_CSET_UTF8) >= 0,
             LD_EINVAL, "HDF5: cannot set file properties");
    errno = 0;
    file = H5Fcreate(m->tmp, H5F_ACC_TRUNC, fcpl, fapl);
    if (file < 0)
        LD_TRY(ld__h5_err(e, errno == ENOMEM ? LD_ENOMEM : LD_EIO,
                          "%s: cannot create the merged file (writing %s)", m->output, m->tmp));
    LD_TRY(ld__refuse_second_writer(m->output, m->tmp, e));

    if (m->encoded) {
        LD_TRY(make_vds(m, file, LD_H5_DS_ENCODED, m->data_t, 1, NULL, 1, e));
        hsize_t three = 3;
        LD_TRY(make_vds(m, file, LD_H5_DS_SHAPE, m->shape_t, 2, &three, 0, e));
        LD_TRY(write_offsets(m, file, LD_H5_DS_OFFSETS, BY_BYTES, e));
    } else {
        LD_TRY(make_vds(m, file, LD_H5_DS_DATA, m->data_t, 4, m->p[0].row, 0, e));
    }
    const hsize_t krow[1] = {(hsize_t)ld__desc_label_k(&m->ref)};
    const ld_desc_field *mf = ld__desc_mask(&m->ref);
    if (ld__desc_role(&m->ref, LD_ROLE_LABEL))
        LD_TRY(make_vds(m, file, LD_H5_DS_LABEL, m->label_t, krow[0] ? 2 : 1, krow, 0, e));
    if (mf) LD_TRY(make_vds(m, file, mf->name, m->mask_t, 4, m->p[0].mrow, 0, e));
    if (ld__desc_boxes(&m->ref)) { /* the rows of every part's boxes, offsets shifted */
        const hsize_t four = 4;
        LD_TRY(make_vds(m, file, LD_H5_DS_BOXES, H5T_IEEE_F32LE, 2, &four, BY_BOXES, e));
        LD_TRY(make_vds(m, file, LD_H5_DS_BOX_LABEL, H5T_STD_I32LE, 1, NULL, BY_BOXES, e));
        LD_TRY(make_vds(m, file, LD_H5_DS_BOX_FLAGS, H5T_STD_U8LE, 1, NULL, BY_BOXES, e));
        LD_TRY(write_offsets(m, file, LD_H5_DS_BOX_OFFSETS, BY_BOXES, e));
    }
    /* /filename: fixed-length strings as wide as the widest part's (a single run's width:
     * the longest name of the whole listing), or variable-length as the parts */
    size_t width = 0;
    for (size_t i = 0; i < m->n; i++)
        width = m->p[i].name_size > width ? m->p[i].name_size : width;
    ntype = H5Tcopy(H5T_C_S1);
    LD_CHECK(e,
             ntype >= 0 && H5Tset_cset(ntype, H5T_CSET_UTF8) >= 0 &&
                 (width
                      ? H5Tset_size(ntype, width) >= 0 && H5Tset_strpad(ntype, H5T_STR_NULLPAD) >= 0
                      : H5Tset_size(ntype, H5T_VARIABLE) >= 0),
             LD_ENOMEM, "HDF5: cannot make the string type");
    LD_TRY(make_vds(m, file, LD_H5_DS_FILENAME, ntype, 1, NULL, 0, e));
    LD_TRY(write_attrs(m, file, vstr, e));

    if (H5Fflush(file, H5F_SCOPE_LOCAL) < 0)
        LD_TRY(ld__h5_err(e, LD_EIO, "%s: cannot write the merged file", m->tmp));
    herr_t r = H5Fclose(file); /* cannot fail for a write: the driver's sink took it */
    file = H5I_INVALID_HID;
    if (r < 0) LD_TRY(ld__h5_err(e, LD_EIO, "%s: cannot close the merged file", m->tmp));
    if (io_err) {
        LD_TRY(
            ld__err(e, LD_EIO, "%s: cannot write the merged file: %s", m->tmp, strerror(io_err)));
    }
    LD_TRY(sync_path(m->tmp, e));
    LD_CHECK(e, rename(m->tmp, m->output) == 0, LD_EIO, "%s: cannot rename to %s: %s", m->tmp,
             m->output, strerror(errno));
    published = 1;
fail:
    if (file >= 0) {
        ld__h5_vfd_discard(file, vfd); /* a failed output closes without writing (h5_vfd.h) */
        H5Fclose(file);
    }
    if (!published && m->tmp) unlink(m->tmp);
    if (vfd >= 0) ld__h5_vfd_release(vfd);
    if (fcpl >= 0) H5Pclose(fcpl);
    if (fapl >= 0) H5Pclose(fapl);
    if (vstr >= 0) H5Tclose(vstr);
    if (ntype >= 0) H5Tclose(ntype);
    free(dir);
    free(real_dir);
    return rc;
}

static void h5m_end(ld_merge_fmt *m)
{
    if (!m) return;
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    if (m->p)
        for (size_t i = 0; i < m->n; i++)
            free(m->p[i].src);
    free(m->p);
    ld__desc_free(&m->ref);
    ld__desc_free(&m->k0);
    if (m->label_t >= 0) H5Tclose(m->label_t);
    if (m->data_t >= 0) H5Tclose(m->data_t);
    if (m->shape_t >= 0) H5Tclose(m->shape_t);
    if (m->mask_t >= 0) H5Tclose(m->mask_t);
    free(m->tmp);
    ld__h5_quiet_end(&q);
    free(m);
}

static int h5m_begin(const char *output, ld_shard *parts, size_t n, const ld_merge_log *log,
                     ld_merge_fmt **out, ld_err *e)
{
    h5merge *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m || !(m->p = calloc(n ? n : 1, sizeof *m->p))) {
        free(m);
        return ld__err(e, LD_ENOMEM, "out of memory");
    }
    m->output = output;
    m->sh = parts;
    m->n = n;
    m->log = log;
    m->label_t = m->data_t = m->shape_t = m->mask_t = H5I_INVALID_HID;
    *out = m;
    return LD_OK;
}

/* The first given part is the reference for settings. */
static int h5m_read_part(ld_merge_fmt *m, size_t i, ld_err *e)
{
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    int rc = read_part(m, i, e);
    m->sh[i].samples = m->p[i].n;
    ld__h5_quiet_end(&q);
    return rc;
}

static int h5m_write(ld_merge_fmt *m, ld_err *e)
{
    int rc = LD_OK;
    const size_t n = m->n;
    h5part *sorted = calloc(n, sizeof *sorted);
    if (!sorted) return ld__err(e, LD_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) /* into K order, as the parts now are */
        sorted[i] = m->p[m->sh[i].given];
    free(m->p);
    m->p = sorted;
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    rc = write_merged(m, e);
    ld__h5_quiet_end(&q);
    LD_TRY(rc);
    uint64_t samples = 0;
    int absolute = 0;
    for (size_t i = 0; i < n; i++) {
        samples += m->p[i].n;
        absolute |= m->p[i].src[0] == '/';
    }
    ld__merge_log(m->log, LD_LOG_INFO,
                  "merged %zu parts (%llu samples) into %s, which reads them: %s", n,
                  (unsigned long long)samples, m->output,
                  absolute ? "keep the parts where they are (named by their absolute paths)"
                           : "keep the parts in its folder (named relative to it: the folder can "
                             "be moved as a whole)");
fail:
    return rc;
}

const ld_merge_ops ld__h5_merge_ops = {"sample", h5m_begin, h5m_read_part, h5m_write, h5m_end};

#endif /* LD_HAVE_HDF5 */
