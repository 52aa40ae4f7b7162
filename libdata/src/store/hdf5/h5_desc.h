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

/* Only the records of desc.h (and by_libdata) of the open file f, into *d (zeroed first; free
 * with ld__desc_free): what a reader opening a file needs, without its class names or
 * dataset shapes; also the attributes of these names in another tool's file (by_libdata 0).
 * LD_OK or LD_ENOMEM. */
int ld__h5_desc_records(hid_t f, ld_desc *d);

/* Write d's records (desc.h), class names and what HDF5 alone records (format, version,
 * layout, tool_version) as root attributes of the open file f; never the `parts` of a merged
 * file, nor shape-only facts the datasets carry. LD_OK or LD_EIO naming path. */
int ld__h5_desc_write(hid_t f, const ld_desc *d, const char *path, ld_err *e);

#endif /* LD_H5_DESC_H */
