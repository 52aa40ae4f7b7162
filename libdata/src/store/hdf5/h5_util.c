/*
 * The HDF5 helpers every HDF5 file of the library uses (h5_util.h): the process-wide lock
 * around the serial HDF5 library, silencing its error printing, its error text, and reading
 * attributes.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

#ifdef LD_HAVE_HDF5
#include "store/hdf5/h5_util.h"

/* The library's one piece of process-wide state: Debian's serial HDF5 is not thread-safe, so
 * every HDF5 call of every handle is made with this mutex held (store.h). */
static pthread_mutex_t h5_mutex = PTHREAD_MUTEX_INITIALIZER;
void ld__h5_lock(void)
{
    pthread_mutex_lock(&h5_mutex);
}
void ld__h5_unlock(void)
{
    pthread_mutex_unlock(&h5_mutex);
}

/* ---- silencing and error text
 * ---------------------------------------------------------------------- */

void ld__h5_quiet_begin(ld_h5_quiet *q)
{
    ld__h5_lock(); /* serial HDF5: one thread inside it per process (store.h) */
    q->fn = NULL;
    q->data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void ld__h5_quiet_end(const ld_h5_quiet *q)
{
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
    ld__h5_unlock();
}

static herr_t first_desc(unsigned n, const H5E_error2_t *d, void *user)
{
    (void)n;
    const char **out = user;
    if (!*out && d->desc && d->desc[0]) *out = d->desc;
    return 0;
}

/* The sec2 driver's failure text holds the system's errno ("..., errno = 28, error message =
 * 'No space left on device', buf = 0x..., bytes actually written = 18446744073709551615"):
 * the one part a user can act on. */
static herr_t find_errno(unsigned n, const H5E_error2_t *d, void *user)
{
    (void)n;
    int *out = user;
    const char *p = d->desc ? strstr(d->desc, "errno = ") : NULL;
    if (!*out && p) *out = atoi(p + 8);
    return 0;
}

int ld__h5_err(ld_err *e, int code, const char *fmt, ...)
{
    char ctx[4 * LD_ERRMSG_MAX]; /* ld__err shortens the paths in it, not the reason */
    va_list ap;
    va_start(ap, fmt);
    ld__vformat_msg(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    const char *desc = NULL;
    int sys = 0;
    /* Upward: the innermost (most specific) record first, e.g. the errno of a failed open. */
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_desc, &desc);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, find_errno, &sys);
    if (sys > 0)
        ld__err(e, code, "%s: %s", ctx, strerror(sys));
    else if (desc)
        ld__err(e, code, "%s: %s", ctx, desc);
    else
        ld__err(e, code, "%s", ctx);
    if (e && sys > 0) e->sys_errno = sys;
    H5Eclear2(H5E_DEFAULT);
    return code;
}

/* ---- scalar attributes ----------------------------------------------------------------- */

int ld__h5_attr_dup(hid_t loc, const char *name, char **out)
{
    int ok = 0;
    *out = NULL;
    if (H5Aexists(loc, name) <= 0) return 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hid_t mt = H5I_INVALID_HID;
    if (t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_STRING &&
        H5Sget_simple_extent_npoints(sp) == 1 && (mt = H5Tcopy(H5T_C_S1)) >= 0 &&
        H5Tset_cset(mt, H5Tget_cset(t)) >= 0) { /* HDF5 will not convert ASCII <-> UTF-8 */
        if (H5Tis_variable_str(t) > 0) {
            char *v = NULL;
            if (H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Aread(a, mt, &v) >= 0 && v)
                ok = (*out = ld__strdup(v)) ? 1 : LD_ENOMEM;
            if (v) H5free_memory(v);
        } else {
            const size_t n = H5Tget_size(t); /* + 1: NUL-terminated whatever the padding */
            char *v = n > 0 ? calloc(1, n + 1) : NULL;
            if (n > 0 && !v) ok = LD_ENOMEM;
            if (v && H5Tset_size(mt, n + 1) >= 0 && H5Aread(a, mt, v) >= 0) {
                *out = v; /* NUL-terminated by calloc's extra byte */
                v = NULL;
                ok = 1;
            }
            free(v);
        }
    }
    if (mt >= 0) H5Tclose(mt);
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    if (a >= 0) H5Aclose(a);
    return ok;
}

int ld__h5_attr_text(hid_t loc, const char *name, char *out, size_t cap)
{
    char *v = NULL;
    const int ok = ld__h5_attr_dup(loc, name, &v) == 1;
    snprintf(out, cap, "%s", ok ? v : "");
    free(v);
    return ok;
}

int ld__h5_attr_i64(hid_t loc, const char *name, int64_t *v)
{
    if (H5Aexists(loc, name) <= 0) return 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    int64_t x = 0;
    const int ok =
        sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1 && H5Aread(a, H5T_NATIVE_INT64, &x) >= 0;
    if (sp >= 0) H5Sclose(sp);
    if (a >= 0) H5Aclose(a);
    if (ok) *v = x;
    return ok;
}

int ld__h5_attr_int(hid_t loc, const char *name, int *v)
{
    int64_t x;
    if (!ld__h5_attr_i64(loc, name, &x) || x < INT_MIN || x > INT_MAX) return 0;
    *v = (int)x;
    return 1;
}

/* ---- string lists -------------------------------------------------------------------- */

/* The strings HDF5 read into `raw` (n char * for variable length, else n records of `fixed`
 * NUL-terminated bytes) copied into one block: n pointers, then the text. NULL: no memory. */
static char **strings_block(const void *raw, size_t n, size_t fixed)
{
    size_t total = 0, at;
    if (!ld__mul_size(n, sizeof(char *), &at)) return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *s = fixed ? (const char *)raw + i * fixed : ((char *const *)raw)[i];
        total += (s ? strlen(s) : 0) + 1; /* bounded by what HDF5 already holds in memory */
    }
    char **v = malloc(at + total);
    if (!v) return NULL;
    char *text = (char *)v + at;
    for (size_t i = 0; i < n; i++) {
        const char *s = fixed ? (const char *)raw + i * fixed : ((char *const *)raw)[i];
        const size_t len = s ? strlen(s) : 0;
        v[i] = text;
        memcpy(text, s ? s : "", len);
        text[len] = '\0';
        text += len + 1;
    }
    return v;
}

int ld__h5_attr_strings(hid_t loc, const char *name, char ***out, size_t *n)
{
    int rc = LD_END;
    *out = NULL;
    *n = 0;
    if (H5Aexists(loc, name) <= 0) return LD_END;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hid_t mt = H5I_INVALID_HID;
    const hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    int vlen = 0, read = 0;
    size_t fixed = 0, bytes = 0;
    void *raw = NULL;
    if (t < 0 || np < 0 || np > (1 << 24) || H5Tget_class(t) != H5T_STRING ||
        (mt = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_cset(mt, H5Tget_cset(t)) < 0)
        goto done; /* HDF5 will not convert ASCII <-> UTF-8: read in the file's own set */
    vlen = H5Tis_variable_str(t) > 0;
    fixed = vlen ? 0 : H5Tget_size(t) + 1; /* + 1: NUL-terminated whatever the padding */
    if (!ld__mul_size(vlen ? sizeof(char *) : fixed, np ? (size_t)np : 1, &bytes) ||
        !(raw = calloc(1, bytes))) {
        rc = LD_ENOMEM;
        goto done;
    }
    read = H5Tset_size(mt, vlen ? H5T_VARIABLE : fixed) >= 0 && H5Aread(a, mt, raw) >= 0;
    if (read) {
        *out = strings_block(raw, (size_t)np, fixed);
        rc = *out ? LD_OK : LD_ENOMEM;
        *n = *out ? (size_t)np : 0;
    }
done: /* a failed read may have allocated some strings already: raw starts zeroed */
    if (raw && vlen)
        for (hssize_t i = 0; i < np; i++)
            if (((char **)raw)[i]) H5free_memory(((char **)raw)[i]);
    free(raw);
    if (mt >= 0) H5Tclose(mt);
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    if (a >= 0) H5Aclose(a);
    return rc;
}

int ld__h5_ds_dims(hid_t d, hsize_t dims[4], int *rank)
{
    hid_t sp = H5Dget_space(d);
    if (sp < 0) return -1;
    int r = H5Sget_simple_extent_ndims(sp);
    if (r >= 1 && r <= 4) H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    *rank = r;
    return (r >= 1 && r <= 4) ? 0 : -1;
}

#else /* !LD_HAVE_HDF5 */

void ld__h5_lock(void) {}
void ld__h5_unlock(void) {}

#endif
