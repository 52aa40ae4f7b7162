/*
 * Private to store/hdf5: the HDF5 store's own structures, shared by h5_store.c (the store:
 * open, read, advice) and h5_vds.c (merged files: virtual datasets read from their parts).
 * Calls that take HDF5 ids are made under the HDF5 lock (ld__h5_quiet_begin).
 */
#ifndef LD_H5_STORE_INT_H
#define LD_H5_STORE_INT_H

#include <hdf5.h>
#include <pthread.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "store/store.h"

/* Bytes one joined WILLNEED call covers at most: the kernel reads at most the device's
 * read-ahead or I/O size per call (force_page_cache_ra), 1280 KiB on many disks; a longer
 * range would be cut short silently. */
#define ADVISE_MAX ((uint64_t)1 << 20)

/* Entries of a context's iovec array: one vectored read at most (Linux's IOV_MAX). */
#define GATHER_IOV 1024

/* Fallback reads load this many bytes of consecutive samples at most (one chunk row). */
#define FALLBACK_MAX_BYTES ((size_t)16 << 20)

/* How a dataset's logical bytes map to the file (direct access only). Logical byte p lives in
 * chunk p / chunk_bytes at file offset addr[chunk] + p % chunk_bytes. */
typedef struct direct_map {
    uint64_t chunk_bytes;
    uint64_t nchunks;
    uint64_t *addr;
} direct_map;

#define VDS_MAX_FDS 65536

typedef struct vds_part {
    char *path;     /* the part file, as opened (absolute when it could be resolved) */
    uint64_t start; /* dataset bytes before this part */
    uint64_t bytes; /* dataset bytes in this part */
    direct_map map;
    dev_t dev; /* the file checked at open */
    ino_t ino;
    off_t size;
    time_t mtime;
    int fd;         /* -1 while closed; fd, users, last under vds->mu */
    unsigned users; /* reads in flight */
    uint64_t last;  /* when last used (vds->tick), for closing the least recently used */
} vds_part;

typedef struct vds_parts {
    size_t n;
    vds_part *p;
    pthread_mutex_t mu;
    int mu_ok;
    int fd_cap, fd_open;
    uint64_t tick;
} vds_parts;

typedef struct h5_store {
    ld_store base;
    char *path;
    int fd;
    uint64_t file_size;
    hid_t file, dset; /* kept open only when reads fall back to HDF5; else -1 */
    int direct;       /* 1 = pread through `map` */
    direct_map map;
    hid_t memtype; /* fallback memory type (H5T_NATIVE_UINT8 / FLOAT), not owned */
    hid_t dxpl;    /* fallback transfer list with conv_guard's callback, or H5P_DEFAULT */
    /* The stored pixel type when HDF5 converts it to float32 (see conv_guard); the first
     * value it could not convert exactly, written and read under the HDF5 lock. */
    H5T_class_t src_class;
    size_t src_size;
    int src_signed;
    int conv_hit;
    char conv_what[80];
    uint64_t rows;  /* fallback: samples per HDF5 read (raw) */
    int32_t *lab_i; /* labels: one of the two (integers are checked to fit int32; */
    double *lab_f;  /* floating point ones are kept as they are, float64 included) */
    /* Label vectors of libdata's layout (native float32 or int32 (N, K), rows whole in each
     * chunk, no filter): read per sample through this map, nothing held (lab_i, lab_f NULL) */
    direct_map lab_map;
    vds_parts lab_vds; /* the same for a merged file's label vectors: read from its parts */
    int lab_map_float;
    /* Masks (N, 1, H, W) uint8 (/mask, or /label when it holds them): read per sample through
     * msk_map (or a merged file's msk_vds parts); else through HDF5 (msk_ds, under its lock) */
    direct_map msk_map;
    vds_parts msk_vds;
    hid_t msk_ds;
    hsize_t msk_dims[4];
    /* Detection boxes: where each sample's rows start (n + 1, held: 8 bytes a sample), the
     * three datasets read through HDF5 (under its lock) */
    int64_t *box_off;
    hid_t box_ds, box_label_ds, box_flags_ds;
    uint64_t *offsets; /* encoded: n + 1 byte offsets into /encoded */
    uint64_t enc_len;  /* encoded: bytes in /encoded */
    int enc_c, enc_h, enc_w;
    vds_parts vds;   /* direct reads of a virtual pixel dataset: its parts (n = 0 if not) */
    char run_id[40]; /* the file's run_id attribute (merged files), "" when none */
    char how[96];
    char dname[64]; /* the pixel dataset's name, for messages */
} h5_store;

/* Where the bytes of a read go: byte p of it (counted from the read's first byte, plus `at`)
 * to dst[p / each] + p % each. One destination (each = the length) is a plain buffer; a run
 * of consecutive samples read into their own batch slots has one per sample (each =
 * sample_bytes). iov (cap entries) is the scratch for the vectored reads. */
typedef struct gather {
    uint8_t *const *dst;
    size_t each;
    uint64_t at;
    struct iovec *iov;
    size_t cap;
} gather;

/* Bytes [pos, pos+len) of the dataset mapped by m (in the file fd/path) to g's destinations,
 * for sample i (messages); cx (may be NULL) probes the page cache (h5_store.c). */
int ld__h5_read_map(const direct_map *m, int fd, const char *path, uint64_t pos, size_t len,
                    gather *g, uint64_t i, ld_store_ctx *cx, ld_err *e);

/* A direct map for dataset d (in the file `path` of `file_size` bytes) of rows of `row_bytes`:
 * 1 when direct access is possible (map filled), 0 when HDF5 must read it, < 0 on a corrupt
 * chunk table (h5_store.c). */
int ld__h5_build_direct(const char *path, uint64_t file_size, hid_t d, int rank,
                        const hsize_t dims[4], size_t row_bytes, direct_map *map, ld_err *e);

/* ---- h5_vds.c: virtual datasets read directly from their parts ---- */
void ld__h5_vds_free(vds_parts *v);
size_t ld__h5_vds_bytes(const vds_parts *v); /* memory held, for the budget */
int ld__h5_is_virtual(hid_t d);
size_t ld__h5_vds_part_of(const vds_parts *v, uint64_t pos); /* the part holding byte pos */
/* A descriptor of part k for a read (opened, checked, counted), and its release. */
int ld__h5_vds_acquire(vds_parts *v, size_t k, const char *vds_path, int *fd, ld_err *e);
void ld__h5_vds_release(vds_parts *v, size_t k);
/* Bytes [pos, pos+len) of the virtual dataset, part after part. */
int ld__h5_vds_read(vds_parts *v, const char *vds_path, uint64_t pos, size_t len, gather *g,
                    uint64_t i, ld_store_ctx *cx, ld_err *e);
/* Resolve the virtual dataset d into *into (s->vds for the pixels; see h5_vds.c). 1, 0 or
 * < 0. */
int ld__h5_vds_resolve(h5_store *s, hid_t d, const char *name, int rank, const hsize_t dims[4],
                       size_t row_bytes, int want_direct, hid_t read_type, void *read_buf,
                       vds_parts *into, ld_err *e);

#endif /* LD_H5_STORE_INT_H */
