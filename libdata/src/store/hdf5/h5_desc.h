/*
 * The HDF5 reader of a dataset's description (desc.h): the root attributes of h5_format.h,
 * and for a file of another tool its data/label datasets' shapes and types.
 */
#ifndef LD_H5_DESC_H
#define LD_H5_DESC_H

#include <hdf5.h>

#include "store/desc.h"

/* Fill *d (as ld__desc_read, zeroed first) from the open file `f` at `path`; call with the
 * HDF5 lock held (ld__h5_quiet_begin). LD_OK or LD_ENOMEM. */
int ld__h5_desc_from(hid_t f, const char *path, ld_desc *d, ld_err *e);

#endif /* LD_H5_DESC_H */
