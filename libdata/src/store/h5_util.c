/*
 * The HDF5 helpers every HDF5 file of the library uses (h5_util.h): the process-wide lock
 * around the serial HDF5 library, silencing its error printing, and its error text.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

#ifdef LD_HAVE_HDF5
#include "store/h5_util.h"

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

#else /* !LD_HAVE_HDF5 */

void ld__h5_lock(void) {}
void ld__h5_unlock(void) {}

#endif
