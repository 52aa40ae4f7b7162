/*
 * HDF5 helpers shared by the HDF5 store, writer, describer and merge (defined in h5_util.c,
 * except the virtual-dataset checks).
 *
 * HDF5 prints its error stack to stderr by default; a library must not print. Every HDF5 call
 * of the library is bracketed by ld__h5_quiet_begin/end (the one way to silence HDF5 here),
 * which take the process-wide HDF5 lock (ld__h5_lock, store.h: Debian's serial HDF5 is not
 * thread-safe), turn the automatic printing off and restore whatever the application had on
 * the way out (h5py in the same process keeps its own setting). Sections do not nest.
 */
#ifndef LD_H5_UTIL_H
#define LD_H5_UTIL_H

#include <hdf5.h>

#include "common/ld_internal.h"

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

/* Scalar attributes of `loc` (a file or an object), with the HDF5 lock held. Each returns 1
 * when the attribute exists, is a single value of the right class and was read; 0 otherwise,
 * leaving *v unchanged and out = "".
 * ld__h5_attr_text: a string, fixed or variable length, ASCII or UTF-8, into out[cap]
 *                   (truncated to cap - 1 bytes);
 * ld__h5_attr_i64:  an integer of any width, converted by HDF5;
 * ld__h5_attr_int:  the same, 0 also when the value does not fit an int. */
int ld__h5_attr_text(hid_t loc, const char *name, char *out, size_t cap);
/* The same string attribute, whole, into *out (malloc'd; NULL when absent): 1 read, 0 absent
 * or not a single string, LD_ENOMEM. */
int ld__h5_attr_dup(hid_t loc, const char *name, char **out);
int ld__h5_attr_i64(hid_t loc, const char *name, int64_t *v);
int ld__h5_attr_int(hid_t loc, const char *name, int *v);

/* A 1-D string attribute (fixed or variable length, ASCII or UTF-8, at most 2^24 entries) as
 * *n strings in one block, *out, freed with free(); entries HDF5 cannot give are "". LD_OK when
 * read (*n may be 0), LD_END when absent or not strings (*out = NULL, *n = 0), LD_ENOMEM. */
int ld__h5_attr_strings(hid_t loc, const char *name, char ***out, size_t *n);

/* A 1- to 4-D dataset's extent: 0 and dims[0 .. *rank) set, or -1 (another rank, an error). */
int ld__h5_ds_dims(hid_t d, hsize_t dims[4], int *rank);

/* Virtual datasets (VDS). HDF5 reads a mapping whose source file or source dataset is
 * missing as the fill value, without an error; these helpers find such mappings first.
 * Defined in h5_store.c; call them with the HDF5 lock held.
 *
 * What source `k` of the virtual dataset creation list `dcpl` is, for a VDS in the file
 * `vds_path`: its file and dataset names as recorded (file "." is the VDS file itself),
 * and the path HDF5 would open, found the way HDF5 1.10 looks (an absolute name, else its
 * last component; then each HDF5_VDS_PREFIX entry with ${ORIGIN} = the VDS file's folder,
 * the VDS file's folder, the current directory). Returns LD_VDS_OK, LD_VDS_NO_FILE (not
 * found: `resolved` is the VDS-folder candidate), LD_VDS_NOT_HDF5, LD_VDS_NO_DATASET,
 * LD_VDS_PATTERN (a printf-style "%b" name, resolved only when read: not checked), or < 0
 * when HDF5 cannot say (LD_EFORMAT). */
enum {
    LD_VDS_OK = 0,
    LD_VDS_NO_FILE = 1,
    LD_VDS_NOT_HDF5 = 2,
    LD_VDS_NO_DATASET = 3,
    LD_VDS_PATTERN = 4
};
int ld__h5_vds_source(hid_t dcpl, size_t k, const char *vds_path, char *file, size_t fcap,
                      char *dset, size_t dcap, char *resolved, size_t rcap);

/* Check every source of dataset `d` (a no-op unless it is virtual). LD_OK, or LD_EFORMAT with
 * a message naming the dataset, the missing source file or dataset, and where it was looked
 * for. `name` is the dataset's name, `vds_path` the file's. */
int ld__h5_vds_check(hid_t d, const char *vds_path, const char *name, ld_err *e);

#endif /* LD_H5_UTIL_H */
