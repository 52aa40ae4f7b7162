/*
 * Reading back a shard part's identity and checking it is complete (part_meta.h).
 *
 * "Complete" means what a finished writer leaves: parts are published by rename, so a file
 * under the part's name was whole when it got there; what this catches is a file damaged or
 * replaced since (truncated by a full disk or a copy, another tool's file, a stray directory).
 * HDF5 refuses to open a file shorter than its recorded end; on top of that every per-sample
 * dataset must have the same length (and /offsets must end at the size of /encoded). For LMDB
 * the sidecar's entry count must match the database's.
 */
#define _GNU_SOURCE
#include "store/part_meta.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libdata/types.h"
#include "store/desc.h"
#include "store/hdf5/h5_format.h"
#ifdef LD_HAVE_HDF5
#include "store/hdf5/h5_desc.h"
#include "store/hdf5/h5_util.h"
#endif
#ifdef LD_HAVE_LMDB
#include <lmdb.h>

#include "store/lmdb/lmdb_desc.h"
#include "store/lmdb/lmdb_store.h"
#endif

/* A part's shard records must be whole. */
static int check_shard(const ld_desc *d, const char *path, ld_err *e)
{
    if (!d->shard_count || !d->shard_damaged) return LD_OK;
    return ld__err(e, LD_EFORMAT,
                   "%s: damaged shard %s (shard_count %u, but shard_index, shard_first, "
                   "shard_listed, listing_total or run_id missing or negative)",
                   path, d->format == LD_FORMAT_LMDB ? "keys in libdata.json" : "attributes",
                   d->shard_count);
}

/* ---- HDF5 ------------------------------------------------------------------------------- */
#ifdef LD_HAVE_HDF5

/* Length along dim 0 of dataset `name`, or -1 when it is missing or not 1..4-D. */
static int64_t ds_rows(hid_t f, const char *name)
{
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) return -1;
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t dims[4] = {0};
    int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    int64_t n = -1;
    if (r >= 1 && r <= 4 && H5Sget_simple_extent_dims(sp, dims, NULL) >= 0) n = (int64_t)dims[0];
    if (sp >= 0) H5Sclose(sp);
    if (d >= 0) H5Dclose(d);
    return n;
}

/* The last element of /offsets (n + 1 elements), or UINT64_MAX when it cannot be read. */
static uint64_t last_offset(hid_t f, uint64_t n)
{
    uint64_t v = UINT64_MAX;
    hid_t d = H5Dopen2(f, LD_H5_DS_OFFSETS, H5P_DEFAULT);
    hid_t fs = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hsize_t start[1] = {n}, count[1] = {1};
    hid_t ms = H5Screate_simple(1, count, NULL);
    if (fs >= 0 && ms >= 0 &&
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
        H5Dread(d, H5T_NATIVE_UINT64, ms, fs, H5P_DEFAULT, &v) < 0)
        v = UINT64_MAX;
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (d >= 0) H5Dclose(d);
    return v;
}

static int h5_read(const char *path, ld_desc *d, ld_err *e)
{
    int rc = LD_OK;
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        rc =
            ld__h5_err(e, LD_EFORMAT, "%s: not a readable HDF5 file (truncated or damaged?)", path);
        goto fail;
    }
    LD_TRY(ld__h5_desc_from(f, path, d, e));
    LD_CHECK(e, d->by_libdata, LD_EFORMAT,
             "%s: not a libdata HDF5 file (no format=\"libdata\" attribute)", path);
    LD_TRY(check_shard(d, path, e));
    const int encoded = d->storage && !strcmp(d->storage, LD_H5_STORAGE_ENCODED);
    const int64_t n = ds_rows(f, LD_H5_DS_LABEL);
    const int64_t names = ds_rows(f, LD_H5_DS_FILENAME);
    LD_CHECK(e, n >= 0 && names == n, LD_EFORMAT,
             "%s: incomplete: /label has %lld rows, /filename %lld", path, (long long)n,
             (long long)names);
    if (encoded) {
        const int64_t offs = ds_rows(f, LD_H5_DS_OFFSETS), shp = ds_rows(f, LD_H5_DS_SHAPE);
        const int64_t bytes = ds_rows(f, LD_H5_DS_ENCODED);
        LD_CHECK(e, offs == n + 1 && shp == n && bytes >= 0, LD_EFORMAT,
                 "%s: incomplete: %lld samples but /offsets has %lld rows, /shape %lld", path,
                 (long long)n, (long long)offs, (long long)shp);
        uint64_t end = last_offset(f, (uint64_t)n);
        LD_CHECK(e, end == (uint64_t)bytes, LD_EFORMAT,
                 "%s: incomplete: /offsets ends at %llu but /encoded holds %lld bytes", path,
                 (unsigned long long)end, (long long)bytes);
    } else {
        const int64_t rows = ds_rows(f, LD_H5_DS_DATA);
        LD_CHECK(e, rows == n, LD_EFORMAT, "%s: incomplete: /data has %lld rows, /label %lld", path,
                 (long long)rows, (long long)n);
    }
    d->samples = (uint64_t)n;
    d->samples_known = 1;

fail:
    if (f >= 0) H5Fclose(f);
    ld__h5_quiet_end(&q);
    return rc;
}
#endif /* LD_HAVE_HDF5 */

/* ---- LMDB -------------------------------------------------------------------------------- */
#ifdef LD_HAVE_LMDB

static int lmdb_read(const char *path, ld_desc *d, ld_err *e)
{
    int rc = LD_OK, mr;
    ld_buf side = {0};
    MDB_env *env = NULL;
    MDB_stat ms;
    int64_t entries = 0;
    struct stat st;
    LD_CHECK(e, stat(path, &st) == 0 && S_ISDIR(st.st_mode), LD_EFORMAT,
             "%s: not an LMDB directory", path);
    rc = ld__lmdb_sidecar_read(path, &side, e);
    LD_CHECK(e, rc != LD_END, LD_EFORMAT, "%s: no %s inside: not a libdata LMDB", path,
             LD_LMDB_SIDECAR);
    LD_TRY(rc);
    const char *t = (const char *)side.p;
    LD_CHECK(e, ld__lmdb_sidecar_value(t, "format") && ld__side_i64(t, "entries", &entries),
             LD_EFORMAT, "%s: %s is incomplete (no format or entries)", path, LD_LMDB_SIDECAR);
    d->format = LD_FORMAT_LMDB;
    LD_TRY(ld__lmdb_desc_from(t, path, d, e));
    LD_TRY(check_shard(d, path, e));
    /* The database itself: opened read-only without the lock file (nobody writes a
     * published part), its record count against the sidecar's. */
    mr = mdb_env_create(&env);
    if (!mr) mr = mdb_env_set_mapsize(env, 0);
    if (!mr) mr = mdb_env_open(env, path, MDB_RDONLY | MDB_NOLOCK, 0444);
    if (!mr) mr = mdb_env_stat(env, &ms);
    LD_CHECK(e, !mr, LD_EFORMAT, "%s: cannot open the database: %s", path, mdb_strerror(mr));
    LD_CHECK(e, entries >= 0 && ms.ms_entries == (uint64_t)entries, LD_EFORMAT,
             "%s: incomplete: the database holds %llu records, %s says %llu", path,
             (unsigned long long)ms.ms_entries, LD_LMDB_SIDECAR, (unsigned long long)entries);
    d->samples = (uint64_t)entries;
    d->samples_known = 1;
fail:
    if (env) mdb_env_close(env);
    ld__buf_free(&side);
    return rc;
}
#endif /* LD_HAVE_LMDB */

int ld__part_read(const char *path, int lmdb, ld_desc *d, ld_err *e)
{
    struct stat st;
    memset(d, 0, sizeof *d);
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return LD_END;
        return ld__err(e, LD_EIO, "%s: %s", path, strerror(errno));
    }
    /* the one probe (desc.h), as the reader and describe tell the formats apart */
    ld_probe p;
    int rc = ld__format_probe(path, &p, e);
    if (rc < 0) return rc;
    const int kind = p.kind, mdb_file = p.mdb_file;
    ld__probe_free(&p);
    if (lmdb && (kind != LD_PROBE_LMDB || mdb_file))
        return ld__err(e, LD_EFORMAT, "%s: not an LMDB directory", path);
    if (!lmdb && kind == LD_PROBE_LMDB)
        return ld__err(e, LD_EFORMAT, "%s: an LMDB database, not an HDF5 file", path);
    if (lmdb) {
#ifdef LD_HAVE_LMDB
        return lmdb_read(path, d, e);
#else
        return ld__err(e, LD_ENOTSUP, "%s: this libdata was built without LMDB", path);
#endif
    }
#ifdef LD_HAVE_HDF5
    if (!S_ISREG(st.st_mode)) return ld__err(e, LD_EFORMAT, "%s: not a file", path);
    return h5_read(path, d, e);
#else
    return ld__err(e, LD_ENOTSUP, "%s: this libdata was built without HDF5", path);
#endif
}
