/*
 * Small HDF5 helpers shared by the HDF5 writer and describer (defined in h5_write.c).
 *
 * HDF5 prints its error stack to stderr by default; a library must not print. Every entry
 * point that calls HDF5 brackets its calls with ld__h5_quiet_begin/end, which take the
 * process-wide HDF5 lock (ld__h5_lock, store.h: Debian's serial HDF5 is not thread-safe),
 * turn the automatic printing off and restore whatever the application had on the way out
 * (h5py in the same process keeps its own setting). Sections do not nest.
 */
#ifndef LD_H5_UTIL_H
#define LD_H5_UTIL_H

#include <hdf5.h>

#include "../common/ld_internal.h"

typedef struct ld_h5_quiet {
    H5E_auto2_t fn;
    void *data;
} ld_h5_quiet;

void ld__h5_quiet_begin(ld_h5_quiet *q);
void ld__h5_quiet_end(const ld_h5_quiet *q);

/* Record a failure: "<context>: <HDF5's most specific error text>", then clear HDF5's error
 * stack. Returns `code`. */
int ld__h5_err(ld_err *e, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif /* LD_H5_UTIL_H */
