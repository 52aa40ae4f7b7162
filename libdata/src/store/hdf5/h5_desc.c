/*
 * ld__h5_desc_read: what an HDF5 file records about itself (h5_format.h), into ld_desc.
 * The one place that reads libdata's root attributes for a description.
 */
#ifdef LD_HAVE_HDF5
#include "store/hdf5/h5_desc.h"

#include <stdlib.h>
#include <string.h>

#include "libdata/types.h"
#include "store/hdf5/h5_format.h"
#include "store/hdf5/h5_util.h"
#include "store/writer.h"

/* A string attribute into *out (owned; stays NULL when absent). LD_OK or LD_ENOMEM. */
static int text(hid_t f, const char *name, char **out)
{
    free(*out);
    return ld__h5_attr_dup(f, name, out) < 0 ? LD_ENOMEM : LD_OK;
}

/* An int attribute in [0, 2^30], else 0 (absent, negative or damaged). */
static int count(hid_t f, const char *name)
{
    int v = 0;
    return ld__h5_attr_int(f, name, &v) && v >= 0 && v <= 1 << 30 ? v : 0;
}

/* dims and dtype of dataset `name`: rank (1..4) or 0 when it is missing or unreadable. */
static int ds_shape(hid_t f, const char *name, hsize_t dims[4], int *dtype)
{
    int rank = 0;
    *dtype = 0;
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) return 0;
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) return 0;
    if (ld__h5_ds_dims(d, dims, &rank) < 0) rank = 0;
    hid_t t = H5Dget_type(d);
    if (t >= 0) {
        const H5T_class_t c = H5Tget_class(t);
        *dtype = c == H5T_FLOAT ? LD_DTYPE_F32 : c == H5T_INTEGER ? LD_DTYPE_U8 : 0;
        if (c == H5T_INTEGER && H5Tget_size(t) > 1) *dtype = LD_DTYPE_I32;
        H5Tclose(t);
    }
    H5Dclose(d);
    return rank;
}

static int h5_classes(hid_t f, ld_desc *d)
{
    char **v = NULL;
    size_t n = 0;
    int rc = ld__h5_attr_strings(f, LD_H5_ATTR_CLASS_NAMES, &v, &n);
    if (rc != LD_OK) return rc == LD_ENOMEM ? LD_ENOMEM : LD_OK;
    d->classes_recorded = 1;
    if (n && !(d->class_names = calloc(n, sizeof *d->class_names))) rc = LD_ENOMEM;
    for (size_t i = 0; rc == LD_OK && i < n; i++, d->n_classes++)
        if (!(d->class_names[i] = ld__strdup(v[i]))) rc = LD_ENOMEM;
    free(v);
    return rc;
}

int ld__h5_desc_from(hid_t f, const char *path, ld_desc *d, ld_err *e)
{
    int rc = LD_OK;
    char *fmt = NULL;
    hsize_t dims[4] = {0};
    int dt = 0, rank;
    d->format = LD_FORMAT_HDF5;
    if (!d->files) d->files = 1;
    LD_TRY(text(f, LD_H5_ATTR_FORMAT, &fmt));
    d->by_libdata = fmt && !strcmp(fmt, LD_H5_FORMAT_NAME);

    /* schema and counts: from the datasets (ours and other tools') */
    if ((rank = ds_shape(f, LD_H5_DS_DATA, dims, &dt)) >= 1) {
        const int64_t sd[3] = {rank == 4 ? (int64_t)dims[1] : 0, rank == 4 ? (int64_t)dims[2] : 0,
                               rank == 4 ? (int64_t)dims[3] : 0};
        LD_TRY(ld__desc_add_field(d, LD_H5_DS_DATA, LD_ROLE_IMAGE,
                                  dt == LD_DTYPE_F32 ? LD_DTYPE_F32 : LD_DTYPE_U8, 3, sd));
        d->samples = dims[0];
        d->samples_known = 1;
        d->dtype = dt == LD_DTYPE_F32 ? LD_DTYPE_F32 : LD_DTYPE_U8;
        if (rank == 4)
            d->channels = (int)dims[1], d->height = (int)dims[2], d->width = (int)dims[3];
    } else if (ds_shape(f, LD_H5_DS_ENCODED, dims, &dt) >= 1) {
        LD_TRY(ld__desc_add_field(d, LD_H5_DS_ENCODED, LD_ROLE_IMAGE, LD_DTYPE_U8, 3, NULL));
        d->encoded = 1;
        d->dtype = LD_DTYPE_U8;
        if (ds_shape(f, LD_H5_DS_OFFSETS, dims, &dt) == 1 && dims[0] >= 1) {
            d->samples = dims[0] - 1;
            d->samples_known = 1;
        }
    }
    if (ds_shape(f, LD_H5_DS_LABEL, dims, &dt) >= 1) {
        d->label_dtype = dt == LD_DTYPE_F32 ? LD_DTYPE_F32 : LD_DTYPE_I32;
        LD_TRY(ld__desc_add_field(d, LD_H5_DS_LABEL, LD_ROLE_LABEL, d->label_dtype, 0, NULL));
        if (!d->samples_known) {
            d->samples = dims[0];
            d->samples_known = 1;
        }
    }
    if (!d->by_libdata) goto fail; /* another tool's: no records of ours */

    /* provenance */
    int64_t v = 0;
    if (ld__h5_attr_i64(f, LD_H5_ATTR_FORMAT_VERSION, &v) && v > 0 && v < 1 << 30)
        d->format_version = (int)v;
    LD_TRY(text(f, LD_H5_ATTR_TOOL_VERSION, &d->tool_version));
    LD_TRY(text(f, LD_H5_ATTR_SOURCE, &d->source));
    LD_TRY(text(f, LD_H5_ATTR_NOTE, &d->note));

    /* storage */
    LD_TRY(text(f, LD_H5_ATTR_STORAGE, &d->storage));
    if (d->storage) d->encoded = !strcmp(d->storage, LD_H5_STORAGE_ENCODED);
    if (d->encoded) LD_TRY(text(f, LD_H5_ATTR_ENCODING, &d->encoding));
    LD_TRY(text(f, LD_H5_ATTR_CHANNEL_ORDER, &d->channel_order));
    LD_TRY(text(f, LD_H5_ATTR_LAYOUT, &d->layout));
    d->channels = count(f, LD_H5_ATTR_CHANNELS);
    d->height = count(f, LD_H5_ATTR_HEIGHT);
    d->width = count(f, LD_H5_ATTR_WIDTH);
    for (size_t i = 0; i < d->n_fields; i++)
        if (d->field[i].role == LD_ROLE_IMAGE) {
            d->field[i].dims[0] = d->channels;
            d->field[i].dims[1] = d->height;
            d->field[i].dims[2] = d->width;
        }

    /* settings */
    d->quality = count(f, LD_H5_ATTR_QUALITY);
    LD_TRY(text(f, LD_H5_ATTR_RESIZE_MODE, &d->resize_mode_name));
    d->resize_mode = ld__desc_resize_mode(d->resize_mode_name);
    d->resize_w = count(f, LD_H5_ATTR_RESIZE_W);
    d->resize_h = count(f, LD_H5_ATTR_RESIZE_H);

    /* classes */
    int nc = 0;
    if (ld__h5_attr_int(f, LD_H5_ATTR_NUM_CLASSES, &nc)) d->num_classes_recorded = nc;
    LD_TRY(h5_classes(f, d));

    /* shard identity; a merged file keeps shard_count, listing_total, run_id */
    int k = 0, cnt = 0;
    int64_t first = 0, listed = 0, total = 0;
    LD_TRY(text(f, LD_H5_ATTR_RUN_ID, &d->run_id));
    if (ld__h5_attr_i64(f, LD_H5_ATTR_LISTING_TOTAL, &total) && total >= 0)
        d->listing_total = (uint64_t)total;
    if (ld__h5_attr_int(f, LD_H5_ATTR_SHARD_COUNT, &cnt) && cnt > 0) {
        d->shard_count = (uint32_t)cnt;
        int ok = ld__h5_attr_int(f, LD_H5_ATTR_SHARD_INDEX, &k) &&
                 ld__h5_attr_i64(f, LD_H5_ATTR_SHARD_FIRST, &first) &&
                 ld__h5_attr_i64(f, LD_H5_ATTR_SHARD_LISTED, &listed) && d->run_id &&
                 H5Aexists(f, LD_H5_ATTR_LISTING_TOTAL) > 0;
        d->shard_damaged = !ok || k < 0 || first < 0 || listed < 0 || total < 0;
        if (ok) {
            d->shard_index = (uint32_t)k;
            d->shard_first = (uint64_t)first;
            d->shard_listed = (uint64_t)listed;
        }
    }
    char **parts = NULL;
    size_t np = 0;
    rc = ld__h5_attr_strings(f, LD_H5_ATTR_PARTS, &parts, &np);
    free(parts);
    if (rc == LD_ENOMEM) goto fail;
    rc = LD_OK;
    d->n_parts = np;
fail:
    free(fmt);
    if (rc == LD_ENOMEM) ld__err(e, rc, "%s: out of memory", path);
    return rc;
}

int ld__h5_desc_read(const char *path, ld_desc *d, ld_err *e)
{
    int rc;
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        rc = ld__temp_being_written(path, e);
        if (rc == LD_OK) rc = ld__h5_err(e, LD_EFORMAT, "%s: cannot open as HDF5", path);
    } else {
        rc = ld__h5_desc_from(f, path, d, e);
        H5Fclose(f);
    }
    ld__h5_quiet_end(&q);
    return rc;
}
#endif /* LD_HAVE_HDF5 */
