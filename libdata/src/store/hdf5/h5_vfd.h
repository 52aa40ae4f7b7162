/*
 * The HDF5 writer's file driver: POSIX pread/pwrite like HDF5's own sec2 driver, plus a
 * "discard" switch for an output that failed.
 *
 * Why: when a write fails (disk full, `ulimit -f`), closing the file still has to write
 * (chunk caches, metadata, superblock, the final truncate) and fails again. HDF5 1.10's
 * H5Fclose then frees the file's structures but keeps its id, and HDF5's exit-time cleanup
 * (H5_term_library -> H5F__close_cb) closes that id a second time and crashes the process
 * at exit (a Python interpreter that called convert() dies with SIGSEGV at exit). No public
 * HDF5 call can drop such an id. Once discarding, every write and truncate of the file
 * succeeds without touching it, so the close succeeds and leaves nothing behind; the
 * caller deletes the file.
 *
 * Discarding only after a failure is not enough: once a write has failed inside HDF5 (a
 * chunk or the metadata cache flushed at H5Fflush), HDF5's own state holds the failure and
 * H5Fclose fails again however the driver answers (a disk that fills while a file is
 * finished). So a file opened with a sink (ld__h5_vfd_set) never fails a write or a truncate
 * in HDF5's eyes: the driver records the first errno in the sink, starts discarding, and
 * answers success. HDF5 stays consistent, every close succeeds, and the caller, which checks
 * the sink after each call that writes, reports the failure and deletes the file.
 *
 * Call with the HDF5 lock held (h5_util.h).
 */
#ifndef LD_H5_VFD_H
#define LD_H5_VFD_H

#include <hdf5.h>

/* Register the driver (once per writer, for H5Pset_driver(fapl, id, NULL)). Returns its id, to
 * pass to ld__h5_vfd_release, or < 0 (HDF5's error stack says why). */
hid_t ld__h5_vfd_register(void);

/* Use `driver` for files opened with `fapl`; a write or truncate that fails stores its errno in
 * *sink (the first one; *sink stays 0 while every write succeeds) and the file discards from
 * then on. Returns 0 or < 0. */
int ld__h5_vfd_set(hid_t fapl, hid_t driver, int *sink);

/* Drop the writer's reference taken by ld__h5_vfd_use (after its files are closed). */
void ld__h5_vfd_release(hid_t driver);

/* From now on, writes and truncates of the open `file` succeed and change nothing. Returns 0,
 * or -1 when `file` does not use `driver` (from ld__h5_vfd_use). */
int ld__h5_vfd_discard(hid_t file, hid_t driver);

#endif /* LD_H5_VFD_H */
