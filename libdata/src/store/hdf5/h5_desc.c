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
        if (c == H5T_INTEGER && H5Tget_size(t) > 1)
            *dtype =
                H5Tget_size(t) == 2 && H5Tget_sign(t) == H5T_SGN_NONE ? LD_DTYPE_U16 : LD_DTYPE_I32;
        H5Tclose(t);
    }
    H5Dclose(d);
    return rank;
}

/* A string array attribute into *out / *n (owned). LD_OK (*found 1), LD_OK when absent or
 * unreadable (*found 0), LD_ENOMEM. */
/* The box class ids attribute into ids[0..n) when it holds exactly n integers (else left). */
static void ids(hid_t f, int64_t *ids, size_t n)
{
    if (H5Aexists(f, LD_H5_ATTR_BOX_CLASS_IDS) <= 0) return;
    hid_t a = H5Aopen(f, LD_H5_ATTR_BOX_CLASS_IDS, H5P_DEFAULT);
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    int64_t *tmp = malloc(n * sizeof *tmp);
    if (tmp && sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
        H5Sget_simple_extent_npoints(sp) == (hssize_t)n && H5Aread(a, H5T_NATIVE_INT64, tmp) >= 0)
        memcpy(ids, tmp, n * sizeof *tmp);
    free(tmp);
    if (sp >= 0) H5Sclose(sp);
    if (a >= 0) H5Aclose(a);
}

static int names(hid_t f, const char *attr, char ***out, size_t *n, int *found)
{
    char **v = NULL;
    size_t k = 0;
    *found = 0;
    int rc = ld__h5_attr_strings(f, attr, &v, &k);
    if (rc != LD_OK) return rc == LD_ENOMEM ? LD_ENOMEM : LD_OK;
    *found = 1;
    rc = ld__desc_copy_names(out, v, k);
    if (rc == LD_OK) *n = k;
    free(v);
    return rc;
}

/* The records of desc.h. LD_OK or LD_ENOMEM. */
static int records(hid_t f, ld_desc *d)
{
    for (size_t i = 0; i < ld__desc_n_records; i++) {
        const ld_desc_record *r = &ld__desc_records[i];
        int64_t v = 0;
        char *str = NULL;
        if (r->type != LD_REC_STR) {
            if (ld__h5_attr_i64(f, r->name, &v)) ld__desc_rec_set_num(d, i, v);
        } else if (ld__h5_attr_dup(f, r->name, &str) < 0) {
            return LD_ENOMEM;
        } else {
            ld__desc_rec_set_str(d, i, str);
        }
    }
    return LD_OK;
}

int ld__h5_desc_records(hid_t f, ld_desc *d)
{
    char *fmt = NULL;
    memset(d, 0, sizeof *d);
    d->format = LD_FORMAT_HDF5;
    if (ld__h5_attr_dup(f, LD_H5_ATTR_FORMAT, &fmt) < 0) return LD_ENOMEM;
    d->by_libdata = fmt && !strcmp(fmt, LD_H5_FORMAT_NAME);
    free(fmt);
    int rc = records(f, d); /* also another tool's file: it may say its channel order */
    ld__desc_records_done(d);
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
        /* (other integer types read as float32: ld__desc_observe says so) */
        const int pdt = dt == LD_DTYPE_F32 || dt == LD_DTYPE_U16 ? dt : LD_DTYPE_U8;
        LD_TRY(ld__desc_add_field(d, LD_H5_DS_DATA, LD_ROLE_IMAGE, pdt, 3, sd));
        d->samples = dims[0];
        d->samples_known = 1;
        d->dtype = pdt;
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
    if ((rank = ds_shape(f, LD_H5_DS_LABEL, dims, &dt)) == 4 && dims[1] == 1) {
        /* (N, 1, H, W): segmentation masks as the label (stock HDF5Data + SoftmaxWithLoss) */
        const int64_t md[3] = {1, (int64_t)dims[2], (int64_t)dims[3]};
        LD_TRY(ld__desc_add_field(d, LD_H5_DS_LABEL, LD_ROLE_MASK, dt, 3, md));
        if (!d->samples_known) {
            d->samples = dims[0];
            d->samples_known = 1;
        }
    } else if (rank >= 1) {
        /* (N,) one label per sample; (N, K) label vectors (K = 1 too) */
        const int64_t k = rank == 2 ? (int64_t)dims[1] : 0;
        d->label_dtype = dt == LD_DTYPE_F32 ? LD_DTYPE_F32 : LD_DTYPE_I32;
        LD_TRY(ld__desc_add_field(d, LD_H5_DS_LABEL, LD_ROLE_LABEL, d->label_dtype,
                                  rank == 2 ? 1 : 0, &k));
        if (!d->samples_known) {
            d->samples = dims[0];
            d->samples_known = 1;
        }
    }
    if ((rank = ds_shape(f, LD_H5_DS_BOXES, dims, &dt)) == 2 && dims[1] == 4) {
        const int64_t bd[2] = {0, 4}; /* (M, 4): M varies per sample */
        LD_TRY(ld__desc_add_field(d, LD_H5_DS_BOXES, LD_ROLE_BOXES, LD_DTYPE_F32, 2, bd));
    }
    if ((rank = ds_shape(f, LD_H5_DS_MASK, dims, &dt)) == 4 && dims[1] == 1) {
        const int64_t md[3] = {1, (int64_t)dims[2], (int64_t)dims[3]};
        LD_TRY(ld__desc_add_field(d, LD_H5_DS_MASK, LD_ROLE_MASK, dt, 3, md));
    }
    if (!d->by_libdata) goto fail; /* another tool's: no records of ours */

    /* the records of desc.h, then what only HDF5 records */
    LD_TRY(records(f, d));
    int64_t v = 0;
    if (ld__h5_attr_i64(f, LD_H5_ATTR_FORMAT_VERSION, &v) && v > 0 && v < 1 << 30)
        d->format_version = (int)v;
    LD_TRY(text(f, LD_H5_ATTR_TOOL_VERSION, &d->tool_version));
    LD_TRY(text(f, LD_H5_ATTR_LAYOUT, &d->layout));
    for (size_t i = 0; i < d->n_fields; i++)
        if (d->field[i].role == LD_ROLE_IMAGE) {
            d->field[i].dims[0] = d->channels;
            d->field[i].dims[1] = d->height;
            d->field[i].dims[2] = d->width;
        }
    LD_TRY(names(f, LD_H5_ATTR_CLASS_NAMES, &d->class_names, &d->n_classes, &d->classes_recorded));
    int found;
    LD_TRY(names(f, LD_H5_ATTR_LABEL_NAMES, &d->label_names, &d->n_label_names, &found));
    LD_TRY(names(f, LD_H5_ATTR_BOX_CLASSES, &d->box_classes, &d->n_box_classes, &found));
    if (d->n_box_classes) { /* their ids: 0..n-1 unless recorded */
        d->box_class_ids = calloc(d->n_box_classes, sizeof *d->box_class_ids);
        LD_CHECK(e, d->box_class_ids, LD_ENOMEM, "%s: out of memory", path);
        for (size_t i = 0; i < d->n_box_classes; i++)
            d->box_class_ids[i] = (int64_t)i;
        ids(f, d->box_class_ids, d->n_box_classes);
    }
    char **parts = NULL;
    size_t np = 0;
    rc = ld__h5_attr_strings(f, LD_H5_ATTR_PARTS, &parts, &np);
    free(parts);
    if (rc == LD_ENOMEM) goto fail;
    rc = LD_OK;
    d->n_parts = np;
    ld__desc_records_done(d);
fail:
    free(fmt);
    if (rc == LD_ENOMEM) ld__err(e, rc, "%s: out of memory", path);
    return rc;
}

/* ---- writing -------------------------------------------------------------------------------- */

/* Attribute `name` of `space` elements of ftype from v; 0 or -1. */
static int put(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hid_t space, const void *v)
{
    hid_t a =
        space < 0 ? H5I_INVALID_HID : H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, mtype, v) >= 0;
    if (a >= 0) ok &= H5Aclose(a) >= 0;
    return ok ? 0 : -1;
}

static int put_num(hid_t loc, hid_t scalar, const char *name, int64_t v, int wide)
{
    const int32_t v32 = (int32_t)v;
    return wide ? put(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, scalar, &v)
                : put(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, scalar, &v32);
}

static int put_str(hid_t loc, hid_t scalar, hid_t vstr, const char *name, const char *v)
{
    const char *p = v ? v : "";
    return put(loc, name, vstr, vstr, scalar, &p);
}

int ld__h5_desc_write(hid_t f, const ld_desc *d, const char *path, ld_err *e)
{
    hsize_t n = d->n_classes, nl = d->n_label_names, nb = d->n_box_classes;
    hid_t scalar = H5Screate(H5S_SCALAR), list = H5Screate_simple(1, &n, NULL);
    hid_t lnames = nl ? H5Screate_simple(1, &nl, NULL) : H5I_INVALID_HID;
    hid_t bnames = nb ? H5Screate_simple(1, &nb, NULL) : H5I_INVALID_HID;
    hid_t vstr = H5Tcopy(H5T_C_S1);
    int bad = scalar < 0 || list < 0 || vstr < 0 || H5Tset_size(vstr, H5T_VARIABLE) < 0 ||
              H5Tset_cset(vstr, H5T_CSET_UTF8) < 0;
    if (!bad) {
        bad |= put_str(f, scalar, vstr, LD_H5_ATTR_FORMAT, LD_H5_FORMAT_NAME);
        bad |= put_num(f, scalar, LD_H5_ATTR_FORMAT_VERSION, LD_H5_FORMAT_VERSION, 0);
        for (size_t i = 0; i < ld__desc_n_records; i++) {
            const ld_desc_record *r = &ld__desc_records[i];
            if (!ld__desc_rec_applies(d, r)) continue;
            if (r->type == LD_REC_STR)
                bad |= put_str(f, scalar, vstr, r->name, ld__desc_rec_str(d, r));
            else
                bad |= put_num(f, scalar, r->name, ld__desc_rec_num(d, r), r->type == LD_REC_U64);
        }
        bad |= put_str(f, scalar, vstr, LD_H5_ATTR_LAYOUT, LD_H5_LAYOUT_NCHW);
        bad |= put_str(f, scalar, vstr, LD_H5_ATTR_TOOL_VERSION, d->tool_version);
        /* HDF5 wants a buffer even for zero elements */
        const char *none[1] = {""};
        bad |= put(f, LD_H5_ATTR_CLASS_NAMES, vstr, vstr, list,
                   d->n_classes ? (const void *)d->class_names : (const void *)none);
        if (nl) bad |= put(f, LD_H5_ATTR_LABEL_NAMES, vstr, vstr, lnames, d->label_names);
        if (nb) {
            bad |= put(f, LD_H5_ATTR_BOX_CLASSES, vstr, vstr, bnames, d->box_classes);
            bad |= put(f, LD_H5_ATTR_BOX_CLASS_IDS, H5T_STD_I64LE, H5T_NATIVE_INT64, bnames,
                       d->box_class_ids);
        }
    }
    if (bnames >= 0) H5Sclose(bnames);
    if (lnames >= 0) H5Sclose(lnames);
    if (vstr >= 0) H5Tclose(vstr);
    if (list >= 0) H5Sclose(list);
    if (scalar >= 0) H5Sclose(scalar);
    return bad ? ld__h5_err(e, LD_EIO, "%s: cannot write attributes", path) : LD_OK;
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
