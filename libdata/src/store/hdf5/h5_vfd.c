/*
 * The HDF5 writer's file driver (h5_vfd.h): HDF5 1.10's sec2 driver in behaviour (same
 * features, so the same file bytes), with a discard switch for failed outputs.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include "store/hdf5/h5_vfd.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct vfd {
    H5FD_t pub; /* first: HDF5 sees this */
    int fd;
    haddr_t eoa, eof;
    dev_t dev;
    ino_t ino;
    int discard;
    int *sink; /* where a failed write's errno goes (ld__h5_vfd_set), or NULL */
} vfd;

/* The driver's file access property (H5Pset_driver's info; HDF5 copies it). */
typedef struct vfd_fapl {
    int *sink;
} vfd_fapl;

/* A write or truncate of f failed with errno: recorded in the sink, which makes it a success
 * for HDF5 (1), or not (0: HDF5 is told, as by sec2). */
static int vfd_sunk(vfd *f)
{
    if (!f->sink) return 0;
    if (!*f->sink) *f->sink = errno ? errno : EIO;
    f->discard = 1;
    return 1;
}

/* Put a failed system call on HDF5's error stack as sec2 does ("errno = N" is what
 * ld__h5_err looks for). */
#define VFD_FAIL(minor, what)                                                                      \
    do {                                                                                           \
        int saved_ = errno;                                                                        \
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_IO, (minor),          \
                 "%s, errno = %d, error message = '%s'", (what), saved_, strerror(saved_));        \
        errno = saved_;                                                                            \
    } while (0)

static H5FD_t *vfd_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    (void)maxaddr;
    int o = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
    if (flags & H5F_ACC_TRUNC) o |= O_TRUNC;
    if (flags & H5F_ACC_CREAT) o |= O_CREAT;
    if (flags & H5F_ACC_EXCL) o |= O_EXCL;
    int fd = open(name, o | O_CLOEXEC, 0666);
    if (fd < 0) {
        VFD_FAIL(H5E_CANTOPENFILE, "unable to open file");
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        VFD_FAIL(H5E_BADFILE, "unable to fstat file");
        close(fd);
        return NULL;
    }
    vfd *f = calloc(1, sizeof *f);
    if (!f) {
        int saved = errno; /* ENOMEM, for the caller's message and code */
        close(fd);
        errno = saved;
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_RESOURCE, H5E_NOSPACE,
                 "out of memory");
        return NULL;
    }
    f->fd = fd;
    f->eof = (haddr_t)st.st_size;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    const vfd_fapl *fi = H5Pget_driver_info(fapl);
    f->sink = fi ? fi->sink : NULL;
    return &f->pub;
}

static herr_t vfd_close(H5FD_t *file)
{
    vfd *f = (vfd *)file;
    int r = close(f->fd);
    if (r != 0) VFD_FAIL(H5E_CANTCLOSEFILE, "unable to close file");
    free(f);
    return r == 0 ? 0 : -1;
}

static int vfd_cmp(const H5FD_t *a, const H5FD_t *b)
{
    const vfd *x = (const vfd *)a, *y = (const vfd *)b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
    return 0;
}

static herr_t vfd_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    /* sec2's set (HDF5 1.10.8), so that the file layout is the same */
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA | H5FD_FEAT_POSIX_COMPAT_HANDLE |
             H5FD_FEAT_SUPPORTS_SWMR_IO | H5FD_FEAT_DEFAULT_VFD_COMPATIBLE;
    return 0;
}

static haddr_t vfd_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const vfd *)file)->eoa;
}

static herr_t vfd_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    ((vfd *)file)->eoa = addr;
    return 0;
}

static haddr_t vfd_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const vfd *)file)->eof;
}

/* The handle is the fd, as sec2's (H5Fget_vfd_handle callers expect an int *). */
static herr_t vfd_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
    (void)fapl;
    *handle = &((vfd *)file)->fd;
    return 0;
}

static herr_t vfd_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                       void *buf)
{
    (void)type;
    (void)dxpl;
    vfd *f = (vfd *)file;
    uint8_t *p = buf;
    while (size > 0) {
        ssize_t n = pread(f->fd, p, size, (off_t)addr);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            VFD_FAIL(H5E_READERROR, "file read failed");
            return -1;
        }
        if (n == 0) { /* past the end of the file: zeros, as sec2 */
            memset(p, 0, size);
            break;
        }
        p += n;
        addr += (haddr_t)n;
        size -= (size_t)n;
    }
    return 0;
}

static herr_t vfd_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                        const void *buf)
{
    (void)type;
    (void)dxpl;
    vfd *f = (vfd *)file;
    haddr_t end = addr + size;
    if (!f->discard) {
        const uint8_t *p = buf;
        while (size > 0) {
            ssize_t n = pwrite(f->fd, p, size, (off_t)addr);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                if (vfd_sunk(f)) break;
                VFD_FAIL(H5E_WRITEERROR, "file write failed");
                return -1;
            }
            p += n;
            addr += (haddr_t)n;
            size -= (size_t)n;
        }
    }
    if (end > f->eof) f->eof = end;
    return 0;
}

static herr_t vfd_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)dxpl;
    (void)closing;
    vfd *f = (vfd *)file;
    if (f->eoa == f->eof) return 0;
    if (!f->discard && ftruncate(f->fd, (off_t)f->eoa) != 0 && !vfd_sunk(f)) {
        VFD_FAIL(H5E_SEEKERROR, "unable to extend file properly");
        return -1;
    }
    f->eof = f->eoa;
    return 0;
}

/* Lock the file as HDF5's sec2 driver does (flock, shared for readers, exclusive for a
 * writer, never waiting), so that the sweep of stale temporaries (store/stale.c) still sees a
 * live writer's file as taken, also from another host of a network file system. */
static herr_t vfd_lock(H5FD_t *file, hbool_t rw)
{
    vfd *f = (vfd *)file;
    if (flock(f->fd, (rw ? LOCK_EX : LOCK_SH) | LOCK_NB) < 0) {
        if (errno == ENOSYS) return 0; /* no locks on this file system: as sec2 with locks off */
        VFD_FAIL(H5E_CANTLOCKFILE, "unable to lock the file");
        return -1;
    }
    return 0;
}

static herr_t vfd_unlock(H5FD_t *file)
{
    vfd *f = (vfd *)file;
    if (flock(f->fd, LOCK_UN) < 0 && errno != ENOSYS) {
        VFD_FAIL(H5E_CANTUNLOCKFILE, "unable to unlock the file");
        return -1;
    }
    return 0;
}

static const H5FD_class_t vfd_class = {
    .name = "libdata_sec2",
    .maxaddr = (haddr_t)INT64_MAX,
    .fc_degree = H5F_CLOSE_WEAK,
    .fapl_size = sizeof(vfd_fapl),
    .open = vfd_open,
    .close = vfd_close,
    .cmp = vfd_cmp,
    .query = vfd_query,
    .get_eoa = vfd_get_eoa,
    .set_eoa = vfd_set_eoa,
    .get_eof = vfd_get_eof,
    .get_handle = vfd_get_handle,
    .read = vfd_read,
    .write = vfd_write,
    .truncate = vfd_truncate,
    .lock = vfd_lock,
    .unlock = vfd_unlock,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

hid_t ld__h5_vfd_register(void)
{
    return H5FDregister(&vfd_class);
}

int ld__h5_vfd_set(hid_t fapl, hid_t driver, int *sink)
{
    const vfd_fapl fi = {sink};
    return H5Pset_driver(fapl, driver, &fi) < 0 ? -1 : 0;
}

void ld__h5_vfd_release(hid_t driver)
{
    if (driver >= 0) H5FDunregister(driver);
}

int ld__h5_vfd_discard(hid_t file, hid_t driver)
{
    /* The handle points at the fd inside our struct only if the file uses this driver. */
    hid_t fapl = H5Fget_access_plist(file);
    if (fapl < 0) return -1;
    hid_t drv = H5Pget_driver(fapl);
    H5Pclose(fapl);
    void *handle = NULL;
    if (drv < 0 || drv != driver || H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle)
        return -1;
    vfd *f = (vfd *)(void *)((char *)handle - offsetof(vfd, fd));
    f->discard = 1;
    return 0;
}
