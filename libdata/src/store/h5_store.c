/*
 * HDF5 read side. At open, everything is looked up through HDF5 once (under the process-wide
 * HDF5 lock): the pixel dataset's layout, its chunks' file addresses (H5Dget_chunk_info_by_coord,
 * O(log n) per chunk with the B-tree index, unlike H5Dget_chunk_info's O(n) by index), the labels
 * and, for encoded files, the offsets. When the pixel bytes sit in the file as they are (no
 * filter, chunks spanning whole samples, or contiguous), reads are plain pread() calls at
 * computed offsets, straight into the caller's buffer (preadv into the batch slots of a run of
 * consecutive samples, h5_read_gather): no HDF5 call, no lock, no copy. Every
 * chunk address + size is checked against the file size at open, and every pread's length is
 * checked, so a corrupt or truncated file gives LD_EFORMAT, never a crash.
 *
 * Why pread and not mmap (bench/read_bench --io, 2-core test machine, 1 GiB warm in the page
 * cache, 150 KB samples copied into a reused buffer, one thread): pread per sample 5.8 GB/s
 * sequential and 7.0 GB/s random, pread per 1 MiB chunk 7.3 GB/s; memcpy from a 64 MiB mmap
 * window slid along the file 5.2 GB/s (4.9 with MAP_POPULATE, 5.3 with MADV_WILLNEED); random
 * memcpy from a whole-file mapping 5.8 GB/s. Each first touch of a mapped page is a fault, a
 * pread is one copy into memory that is already faulted. pread also needs no address space (the
 * reader works under RLIMIT_AS for any dataset size, with no window to manage) and a file
 * truncated underneath gives a short read (LD_EFORMAT), where a mapping gives SIGBUS.
 *
 * A merged file (virtual datasets mapping whole part files to consecutive rows, issue 13) is
 * read the same way from its parts: see "virtual datasets read directly" below.
 *
 * Everything else (deflate, chunks cut inside a sample, unallocated chunks, non-uint8/float32
 * pixel types) falls back to HDF5 reads of whole chunk rows into a per-context cache, under the
 * lock, with HDF5 converting the type (integers and float64 -> float32).
 *
 * The file is opened twice, by our open() (for pread) and by HDF5 (by name). A name renamed
 * over in between (an atomic publish of a new version) would give chunk addresses of one file
 * to the bytes of another, so the store checks that HDF5's descriptor is the same file as ours
 * (device, inode, size, mtime) and starts again when it is not.
 */
/* 64-bit off_t for pread/posix_fadvise on 32-bit machines (datasets over 2 GiB on a
 * Raspberry Pi); a no-op on 64-bit ones. Must come before any system header. */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* realpath; preadv2 and RWF_NOWAIT (cache probe, see preadv_all) */
#endif
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifdef LD_HAVE_HDF5
#include <hdf5.h>

#include "store/h5_format.h"
#include "store/h5_util.h"
#include "store/writer.h"

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
    uint64_t rows;     /* fallback: samples per HDF5 read (raw) */
    int32_t *lab_i;    /* labels: one of the two (integers are checked to fit int32; */
    double *lab_f;     /* floating point ones are kept as they are, float64 included) */
    uint64_t *offsets; /* encoded: n + 1 byte offsets into /encoded */
    uint64_t enc_len;  /* encoded: bytes in /encoded */
    int enc_c, enc_h, enc_w;
    vds_parts vds;   /* direct reads of a virtual pixel dataset: its parts (n = 0 if not) */
    char run_id[40]; /* the file's run_id attribute (merged files), "" when none */
    char how[96];
    char dname[64]; /* the pixel dataset's name, for messages */
} h5_store;

/* Read-ahead advice only when the data is not cached. posix_fadvise(WILLNEED) walks the page
 * cache for every page it is given, even when all are cached: on warm data it cost 11 % of a
 * worker's time (perf, shuffled 150 KB samples), as much as a tenth of the copy itself. So
 * direct reads first try preadv2(RWF_NOWAIT), which copies what is cached and stops at the
 * first page that is not; a context whose last batch piece was served wholly from the cache
 * is "warm" and skips the advice for the next piece (its reads still probe: the first miss
 * makes the context cold again, and the rest of that read waits with a plain pread). A cold
 * context advises every piece, as before, so a cold cache or a disk still sees a whole
 * batch's requests at once. A piece that was advised proves nothing by its hits (the advice
 * brought its pages in): the piece after it is advised unless a probe of three of its samples
 * finds them cached (looks_cached), so a cold epoch is advised whole. Kernels or file systems
 * without RWF_NOWAIT (EOPNOTSUPP, EINVAL, ENOSYS) turn the probe off for the context: it then
 * always advises.
 *
 * Cold reading, measured and not taken (issue 16, 2.4 GB file, block order, 2 threads, kernel
 * 6.18 on the 2-core virtio VM, interleaved with dd). A cold epoch spends ~1 s of system time
 * against dd's 0.2-0.4 s: perf puts half of it in the copy into the batch slots (dd copies
 * into one cache-hot 4 MiB buffer; with bs=64M, a cold destination as a batch ring is, dd too
 * spends 0.53-0.56 s instead of 0.21-0.29) and a third in WILLNEED itself, which fills the cache
 * with 4 KiB pages (force_page_cache_ra -> page_cache_ra_unbounded) where dd's sequential
 * read-ahead allocates large folios (page_cache_ra_order). readahead(2) is the same kernel
 * path (ksys_readahead -> generic_fadvise). Joined ranges of 8 MiB instead of 1 MiB: more
 * system time (1.18-1.33 s vs 0.82-1.07 in 5 pairs), same rate. No advice: 0.9-1.2 GB/s vs
 * 1.2-1.8. O_DIRECT (no page cache, no copy from it; bench/baselines --direct-qd): 0.8-1.5
 * GB/s at 1, 4 or 8 reads in flight, random or sequential, against 1.6-2.0 for buffered dd in
 * the same minutes: more I/O in flight does not make this disk faster, so the reader keeps
 * buffered reads and one advice per piece. */
struct ld_store_ctx {
    ld_buf buf;     /* fallback cache (raw rows) or encoded bytes */
    uint64_t first; /* raw fallback: first sample held in buf, count held */
    uint64_t count;
    /* (flags in bytes: the context stays the size it had before iov, one malloc size class) */
    unsigned char probe;   /* reads try RWF_NOWAIT first */
    unsigned char missed;  /* a probed read since the last will_read found pages not cached */
    unsigned char pieces;  /* will_read called before (the first piece is always advised) */
    unsigned char advised; /* the last piece was advised: its reads may hit *because* of it */
    struct iovec *iov;     /* GATHER_IOV entries for h5_read_gather (raw direct stores only) */
};

/* ---- small HDF5 helpers (call between ld__h5_quiet_begin and _end) ------------------------ */

static int link_exists(hid_t file, const char *name)
{
    return name && *name && H5Lexists(file, name, H5P_DEFAULT) > 0;
}

/* Dimensions of a dataset (rank <= 4). */
static int ds_dims(hid_t d, hsize_t dims[4], int *rank)
{
    hid_t sp = H5Dget_space(d);
    if (sp < 0) return -1;
    int r = H5Sget_simple_extent_ndims(sp);
    if (r >= 1 && r <= 4) H5Sget_simple_extent_dims(sp, dims, NULL);
    H5Sclose(sp);
    *rank = r;
    return (r >= 1 && r <= 4) ? 0 : -1;
}

/* Read rows [first, first+count) of a dataset of `rank` dims into buf with memory type mt. */
static herr_t read_rows(hid_t d, int rank, const hsize_t dims[4], uint64_t first, uint64_t count,
                        hid_t mt, hid_t dxpl, void *buf)
{
    hsize_t start[4] = {first, 0, 0, 0}, cnt[4] = {count, 0, 0, 0};
    for (int k = 1; k < rank; k++)
        cnt[k] = dims[k];
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(rank, cnt, NULL);
    herr_t st = -1;
    if (fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0)
        st = H5Dread(d, mt, ms, fs, dxpl, buf);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return st;
}

/* HDF5 converts pixels of other types to float32 in fallback reads, and by default rounds an
 * integer above 2^24 or turns a float64 beyond float32's range into infinity, silently. This
 * callback makes such a value fail the read instead, and notes it for the message. Rounding
 * the fraction of a float64 is accepted (that is what float32 output means), and so are
 * infinities and NaN, which float32 holds. Called with the HDF5 lock held. */
static H5T_conv_ret_t conv_guard(H5T_conv_except_t kind, hid_t src, hid_t dst, void *sbuf,
                                 void *dbuf, void *user)
{
    h5_store *s = user;
    (void)src;
    (void)dst;
    (void)dbuf;
    if (kind != H5T_CONV_EXCEPT_RANGE_HI && kind != H5T_CONV_EXCEPT_RANGE_LOW &&
        !(kind == H5T_CONV_EXCEPT_PRECISION && s->src_class == H5T_INTEGER))
        return H5T_CONV_UNHANDLED;
    if (s->src_class == H5T_INTEGER && sbuf && (s->src_size == 4 || s->src_size == 8)) {
        /* HDF5 raises PRECISION from the span of set bits, which for negative numbers is
         * wider than the value needs (-2^24 is exact): decide from the magnitude */
        uint64_t m;
        int neg = 0;
        if (s->src_size == 8) {
            uint64_t u;
            memcpy(&u, sbuf, 8);
            neg = s->src_signed && (int64_t)u < 0;
            m = neg ? (uint64_t)0 - u : u;
        } else {
            uint32_t u;
            memcpy(&u, sbuf, 4);
            neg = s->src_signed && (int32_t)u < 0;
            m = neg ? (uint64_t)((uint32_t)0 - u) : u;
        }
        if (m == 0 || (m >> __builtin_ctzll(m)) < ((uint64_t)1 << 24))
            return H5T_CONV_UNHANDLED; /* 24 significant bits: float32 holds it exactly */
        if (!s->conv_hit) {
            s->conv_hit = 1;
            snprintf(s->conv_what, sizeof s->conv_what, "the value %s%llu", neg ? "-" : "",
                     (unsigned long long)m);
        }
        return H5T_CONV_ABORT;
    }
    if (!s->conv_hit && sbuf) {
        s->conv_hit = 1;
        if (s->src_class == H5T_FLOAT && s->src_size == 8) {
            double v;
            memcpy(&v, sbuf, 8);
            snprintf(s->conv_what, sizeof s->conv_what, "the value %.17g", v);
        } else {
            snprintf(s->conv_what, sizeof s->conv_what, "a value");
        }
    }
    return H5T_CONV_ABORT;
}

/* ---- virtual datasets: every source must be there (h5_util.h) ----------------------------- */

static int is_regular(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir + "/" + name into out (name alone when dir is empty). 0 when it does not fit. */
static int join(char *out, size_t cap, const char *dir, size_t dlen, const char *name)
{
    int n =
        dlen ? snprintf(out, cap, "%.*s/%s", (int)dlen, dir, name) : snprintf(out, cap, "%s", name);
    return n >= 0 && (size_t)n < cap;
}

/* ld__h5_vds_source without opening the file: LD_VDS_OK (found), LD_VDS_NO_FILE,
 * LD_VDS_PATTERN or LD_EFORMAT. */
static int vds_locate(hid_t dcpl, size_t k, const char *vds_path, char *file, size_t fcap,
                      char *dset, size_t dcap, char *resolved, size_t rcap)
{
    file[0] = dset[0] = resolved[0] = 0;
    if (H5Pget_virtual_filename(dcpl, k, file, fcap) < 0 ||
        H5Pget_virtual_dsetname(dcpl, k, dset, dcap) < 0)
        return LD_EFORMAT;
    if (strchr(file, '%') || strchr(dset, '%')) return LD_VDS_PATTERN;
    if (!strcmp(file, ".")) { /* the VDS file itself */
        snprintf(resolved, rcap, "%s", vds_path);
    } else {
        const char *name = file;
        const char *slash = strrchr(vds_path, '/');
        const size_t vdir = slash ? (size_t)(slash - vds_path) + (slash == vds_path) : 0;
        char cand[4096];
        int found = 0;
        if (file[0] == '/') {
            found = is_regular(file);
            if (found) snprintf(resolved, rcap, "%s", file);
            name = strrchr(file, '/') + 1;
        }
        const char *env = getenv("HDF5_VDS_PREFIX");
        while (!found && env && *env) {
            const char *end = strchr(env, ':');
            size_t len = end ? (size_t)(end - env) : strlen(env);
            char pre[2048];
            if (len >= 9 && !strncmp(env, "${ORIGIN}", 9))
                snprintf(pre, sizeof pre, "%.*s%.*s", (int)vdir, vds_path, (int)(len - 9), env + 9);
            else
                snprintf(pre, sizeof pre, "%.*s", (int)len, env);
            if (pre[0] && join(cand, sizeof cand, pre, strlen(pre), name) && is_regular(cand)) {
                found = 1;
                snprintf(resolved, rcap, "%s", cand);
            }
            env = end ? end + 1 : NULL;
        }
        if (!found && join(cand, sizeof cand, vds_path, vdir, name)) {
            snprintf(resolved, rcap, "%s", cand); /* also what a "not found" message shows */
            found = is_regular(cand);
        }
        if (!found && is_regular(name)) {
            found = 1;
            snprintf(resolved, rcap, "%s", name);
        }
        if (!found) return LD_VDS_NO_FILE;
    }
    return LD_VDS_OK;
}

int ld__h5_vds_source(hid_t dcpl, size_t k, const char *vds_path, char *file, size_t fcap,
                      char *dset, size_t dcap, char *resolved, size_t rcap)
{
    int st = vds_locate(dcpl, k, vds_path, file, fcap, dset, dcap, resolved, rcap);
    if (st != LD_VDS_OK) return st;
    hid_t f = H5Fopen(resolved, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return LD_VDS_NOT_HDF5;
    const int have = H5Lexists(f, dset[0] == '/' ? dset + 1 : dset, H5P_DEFAULT) > 0 ||
                     (dset[0] == '/' && !dset[1]);
    H5Fclose(f);
    return have ? LD_VDS_OK : LD_VDS_NO_DATASET;
}

int ld__h5_vds_check(hid_t d, const char *vds_path, const char *name, ld_err *e)
{
    int rc = LD_OK;
    size_t count = 0;
    char file[1024], dset[512], resolved[2048];
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0 || H5Pget_layout(dcpl) != H5D_VIRTUAL) goto done;
    LD_CHECK(e, H5Pget_virtual_count(dcpl, &count) >= 0, LD_EFORMAT,
             "%s: dataset '/%s' is virtual but its mappings cannot be read (corrupt?)", vds_path,
             name);
    for (size_t k = 0; k < count; k++) {
        int st = ld__h5_vds_source(dcpl, k, vds_path, file, sizeof file, dset, sizeof dset,
                                   resolved, sizeof resolved);
        LD_CHECK(e, st >= 0, LD_EFORMAT,
                 "%s: dataset '/%s' is virtual but source %zu of %zu "
                 "cannot be read (corrupt?)",
                 vds_path, name, k + 1, count);
        LD_CHECK(e, st != LD_VDS_NO_FILE, LD_EFORMAT,
                 "%s: dataset '/%s' is virtual and its "
                 "source file '%s' (source %zu of %zu; looked for as %s) does not exist: HDF5 "
                 "would read its part as fill values. Put the file back (source paths are "
                 "relative to the folder of %s), or rebuild the virtual dataset",
                 vds_path, name, file, k + 1, count, resolved, vds_path);
        LD_CHECK(e, st != LD_VDS_NOT_HDF5, LD_EFORMAT,
                 "%s: dataset '/%s' is virtual and its "
                 "source file %s (source %zu of %zu) is not a readable HDF5 file",
                 vds_path, name, resolved, k + 1, count);
        LD_CHECK(e, st != LD_VDS_NO_DATASET, LD_EFORMAT,
                 "%s: dataset '/%s' is virtual and its "
                 "source file %s has no dataset '%s' (source %zu of %zu): HDF5 would read its "
                 "part as fill values",
                 vds_path, name, resolved, dset, k + 1, count);
    }
done:
fail:
    if (dcpl >= 0) H5Pclose(dcpl);
    return rc;
}

/* Try to build a direct map for dataset d (in the file `path` of `file_size` bytes) whose
 * logical rows are `row_bytes` bytes each. Returns 1 when direct access is possible (map
 * filled), 0 when HDF5 must read it, <0 on a corrupt chunk table (message in e). */
static int build_direct(const char *path, uint64_t file_size, hid_t d, int rank,
                        const hsize_t dims[4], size_t row_bytes, direct_map *map, ld_err *e)
{
    int rc = 0;
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0) return 0;
    H5D_layout_t lay = H5Pget_layout(dcpl);
    uint64_t total = (uint64_t)dims[0] * row_bytes;
    if (lay == H5D_CONTIGUOUS) {
        haddr_t a = H5Dget_offset(d);
        if (a == HADDR_UNDEF) /* never written: HDF5 gives fill values */
            goto done;
        if (a > file_size || total > file_size - a) {
            rc = ld__err(e, LD_EFORMAT,
                         "%s: contiguous dataset extends beyond the end of the "
                         "file (%llu + %llu > %llu bytes): truncated or corrupt",
                         path, (unsigned long long)a, (unsigned long long)total,
                         (unsigned long long)file_size);
            goto done;
        }
        map->addr = malloc(sizeof(uint64_t));
        if (!map->addr) {
            rc = ld__err(e, LD_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        map->addr[0] = a;
        map->nchunks = 1;
        map->chunk_bytes = total ? total : 1;
        rc = 1;
    } else if (lay == H5D_CHUNKED && H5Pget_nfilters(dcpl) == 0) {
        hsize_t cd[4] = {0};
        if (H5Pget_chunk(dcpl, rank, cd) != rank) goto done;
        for (int k = 1; k < rank; k++)
            if (cd[k] != dims[k]) /* chunk cuts a row: rows are not contiguous bytes */
                goto done;
        uint64_t nch = (dims[0] + cd[0] - 1) / cd[0];
        uint64_t cbytes = (uint64_t)cd[0] * row_bytes;
        map->addr = nch <= SIZE_MAX / sizeof(uint64_t) /* 32-bit size_t */
                        ? malloc((size_t)(nch ? nch : 1) * sizeof(uint64_t))
                        : NULL;
        if (!map->addr) {
            rc = ld__err(e, LD_ENOMEM, "%s: out of memory for %llu chunk addresses", path,
                         (unsigned long long)nch);
            goto done;
        }
        for (uint64_t j = 0; j < nch; j++) {
            hsize_t off[4] = {j * cd[0], 0, 0, 0};
            unsigned mask = 0;
            haddr_t a = HADDR_UNDEF;
            hsize_t sz = 0;
            if (H5Dget_chunk_info_by_coord(d, off, &mask, &a, &sz) < 0 || a == HADDR_UNDEF) {
                free(map->addr); /* unallocated chunk: let HDF5 supply fill values */
                map->addr = NULL;
                goto done;
            }
            if (sz != cbytes || a > file_size || sz > file_size - a) {
                rc = ld__err(e, LD_EFORMAT,
                             "%s: chunk %llu at byte %llu, %llu bytes, does not "
                             "fit the file (%llu bytes) or the chunk shape (%llu bytes): "
                             "truncated or corrupt",
                             path, (unsigned long long)j, (unsigned long long)a,
                             (unsigned long long)sz, (unsigned long long)file_size,
                             (unsigned long long)cbytes);
                goto done;
            }
            map->addr[j] = a;
        }
        map->nchunks = nch;
        map->chunk_bytes = cbytes;
        rc = 1;
    }
done:
    H5Pclose(dcpl);
    return rc;
}

/* A read of sample i at off returned got <= 0 (errno set for < 0): the error. */
static int read_failed(const char *path, uint64_t i, uint64_t off, ssize_t got, ld_err *e)
{
    if (got < 0)
        return ld__err(e, LD_EIO, "%s: sample %llu: read error at byte %llu: %s", path,
                       (unsigned long long)i, (unsigned long long)off, strerror(errno));
    return ld__err(e, LD_EFORMAT, "%s: sample %llu: file ends at byte %llu (truncated while open?)",
                   path, (unsigned long long)i, (unsigned long long)off);
}

/* Read exactly the bytes of iov[0 .. n) at off of `fd` (the file `path`; iov is consumed), or
 * fail with a message naming sample i. A context that probes first copies what the page cache
 * holds without waiting for I/O (preadv2 RWF_NOWAIT, see struct ld_store_ctx) and reads the
 * rest with a plain pread (one entry) or preadv. */
static int preadv_all(int fd, const char *path, struct iovec *iov, size_t n, uint64_t off,
                      uint64_t i, ld_store_ctx *cx, ld_err *e)
{
    size_t len = 0;
    for (size_t k = 0; k < n; k++)
        len += iov[k].iov_len;
    int probe = 0;
#if defined(RWF_NOWAIT)
    probe = cx && cx->probe;
#else
    (void)cx;
#endif
    while (len) {
        ssize_t got;
#if defined(RWF_NOWAIT)
        if (probe) { /* what the page cache holds, without waiting for I/O */
            got = preadv2(fd, iov, (int)n, (off_t)off, RWF_NOWAIT);
            probe = 0;
            if (got < 0 && (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS)) {
                cx->probe = 0; /* not supported here: advise always */
                continue;
            }
            if (got != (ssize_t)len) cx->missed = 1;
            if (got <= 0) continue; /* EAGAIN: nothing cached at off; wait below */
        } else
#endif
            got = n == 1 ? pread(fd, iov->iov_base, iov->iov_len, (off_t)off)
                         : preadv(fd, iov, (int)n, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return read_failed(path, i, off, got, e);
        len -= (size_t)got;
        off += (uint64_t)got;
        while (got > 0) { /* drop what was read from the front of iov */
            if ((size_t)got >= iov->iov_len) {
                got -= (ssize_t)iov->iov_len;
                iov++;
                n--;
            } else {
                iov->iov_base = (uint8_t *)iov->iov_base + got;
                iov->iov_len -= (size_t)got;
                got = 0;
            }
        }
    }
    return LD_OK;
}

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

/* Bytes [pos, pos+len) of the dataset mapped by m (in the file fd/path) to g's destinations:
 * chunk pieces that follow each other in the file are read together, with one preadv over
 * their destinations (a destination that continues the previous one extends its entry). */
static int read_map(const direct_map *m, int fd, const char *path, uint64_t pos, size_t len,
                    gather *g, uint64_t i, ld_store_ctx *cx, ld_err *e)
{
    size_t nv = 0;
    uint64_t from = 0, end = 0; /* file bytes [from, end) are in iov[0 .. nv) */
    while (len) {
        uint64_t j = pos / m->chunk_bytes, in = pos % m->chunk_bytes;
        if (j >= m->nchunks)
            return ld__err(e, LD_EFORMAT, "%s: sample %llu: bytes beyond the dataset", path,
                           (unsigned long long)i);
        uint64_t room = m->chunk_bytes - in; /* may exceed size_t on 32-bit machines */
        size_t part = room < len ? (size_t)room : len;
        const uint64_t addr = m->addr[j] + in;
        for (size_t done = 0; done < part;) {
            const uint64_t p = g->at;
            uint8_t *to = g->dst[p / g->each] + p % g->each;
            size_t l = g->each - (size_t)(p % g->each);
            if (l > part - done) l = part - done;
            const int follows = nv && end == addr + done;
            if (follows && (uint8_t *)g->iov[nv - 1].iov_base + g->iov[nv - 1].iov_len == to) {
                g->iov[nv - 1].iov_len += l;
            } else {
                if (nv && (!follows || nv == g->cap)) { /* a gap in the file, or no room */
                    int rc = preadv_all(fd, path, g->iov, nv, from, i, cx, e);
                    if (rc < 0) return rc;
                    nv = 0;
                }
                if (!nv) from = addr + done;
                g->iov[nv++] = (struct iovec){to, l};
            }
            end = addr + done + l;
            done += l;
            g->at += l;
        }
        pos += part;
        len -= part;
    }
    return nv ? preadv_all(fd, path, g->iov, nv, from, i, cx, e) : LD_OK;
}

/* ---- virtual datasets read directly from their parts ------------------------------------- *
 * A virtual dataset whose mappings are "the whole source dataset -> the next rows along dim 0"
 * in order, without gaps (what `dataconv merge` writes; any h5py VirtualLayout filled that
 * way), is resolved at open into one part per mapping: the part file, the dataset bytes
 * before it, and the part's own direct map (as for one file). Reads then pread the parts:
 * no HDF5 call and no HDF5 lock (a per-store mutex is held only to pick the descriptor), at
 * one file's speed (HDF5's VDS read path builds selections on every call, serialized by the
 * HDF5 lock, and keeps every source file open).
 *
 * Descriptors: a part's file is opened at its first read and kept open; at most fd_cap of
 * them are open at once (half of RLIMIT_NOFILE's soft limit, at most VDS_MAX_FDS: the other
 * half is the application's), the least recently used one without a read in flight is
 * closed when another is needed, or when open() finds no descriptor left. Memory is
 * per part a path and the chunk table that part's bytes need anyway (a 64-part merge holds
 * the same chunk addresses as one file of the same data, plus one partial chunk per part).
 * At open each part is opened through HDF5 once per virtual dataset read (pixels, labels),
 * checked and closed again (HDF5 keeps no part open; the labels are read part by part). When a part
 * is opened for reading it must still be the file checked at open (device, inode, size,
 * modification time): a part rewritten since gives an error naming it, never other bytes. */

static void vds_free(vds_parts *v)
{
    for (size_t k = 0; k < v->n; k++) {
        if (v->p[k].fd >= 0) close(v->p[k].fd);
        free(v->p[k].path);
        free(v->p[k].map.addr);
    }
    free(v->p);
    if (v->mu_ok) pthread_mutex_destroy(&v->mu);
    memset(v, 0, sizeof *v);
}

/* Memory the parts hold, for the memory budget. */
static size_t vds_bytes(const vds_parts *v)
{
    size_t b = v->n * sizeof *v->p;
    for (size_t k = 0; k < v->n; k++)
        b += strlen(v->p[k].path) + 1 + (size_t)v->p[k].map.nchunks * 8;
    return b;
}

static int is_virtual(hid_t d)
{
    hid_t dcpl = H5Dget_create_plist(d);
    int v = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL;
    if (dcpl >= 0) H5Pclose(dcpl);
    return v;
}

/* The part holding dataset byte pos (the last part starting at or before it). */
static size_t vds_part_of(const vds_parts *v, uint64_t pos)
{
    size_t lo = 0, hi = v->n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (v->p[mid].start <= pos)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Close the least recently used open part without a read in flight (under v->mu). 1 when
 * one was closed. */
static int vds_close_lru(vds_parts *v)
{
    size_t old = v->n;
    for (size_t j = 0; j < v->n; j++)
        if (v->p[j].fd >= 0 && !v->p[j].users && (old == v->n || v->p[j].last < v->p[old].last))
            old = j;
    if (old == v->n) return 0;
    close(v->p[old].fd);
    v->p[old].fd = -1;
    v->fd_open--;
    return 1;
}

/* A descriptor of part k for one read (vds_release after it), opening it when needed. */
static int vds_acquire(vds_parts *v, size_t k, const char *vds_path, int *fd, ld_err *e)
{
    int rc = LD_OK;
    vds_part *p = &v->p[k];
    pthread_mutex_lock(&v->mu);
    if (p->fd < 0) {
        if (v->fd_open >= v->fd_cap) vds_close_lru(v);
        int f = open(p->path, O_RDONLY | O_CLOEXEC);
        while (f < 0 && (errno == EMFILE || errno == ENFILE) && vds_close_lru(v))
            f = open(p->path, O_RDONLY | O_CLOEXEC); /* the application took the rest */
        struct stat st;
        if (f < 0) {
            rc = ld__err(e, errno == ENOENT ? LD_EFORMAT : LD_EIO,
                         "%s: part %s cannot be opened: %s (it was there when the merged file "
                         "was opened: put it back, or merge again)",
                         vds_path, p->path, strerror(errno));
            goto out;
        }
        if (fstat(f, &st) != 0 || st.st_dev != p->dev || st.st_ino != p->ino ||
            st.st_size != p->size || st.st_mtime != p->mtime) {
            close(f);
            rc = ld__err(e, LD_EFORMAT,
                         "%s: part %s was replaced or changed since the merged file was opened "
                         "(its chunk addresses may no longer hold): open the merged file again",
                         vds_path, p->path);
            goto out;
        }
        p->fd = f;
        v->fd_open++;
    }
    p->users++;
    p->last = ++v->tick;
    *fd = p->fd;
out:
    pthread_mutex_unlock(&v->mu);
    return rc;
}

static void vds_release(vds_parts *v, size_t k)
{
    pthread_mutex_lock(&v->mu);
    v->p[k].users--;
    pthread_mutex_unlock(&v->mu);
}

/* Bytes [pos, pos+len) of the virtual dataset, part after part. */
static int vds_read(vds_parts *v, const char *vds_path, uint64_t pos, size_t len, gather *g,
                    uint64_t i, ld_store_ctx *cx, ld_err *e)
{
    while (len) {
        size_t k = vds_part_of(v, pos);
        const vds_part *p = &v->p[k];
        if (pos < p->start || pos - p->start >= p->bytes)
            return ld__err(e, LD_EFORMAT, "%s: sample %llu: bytes beyond the dataset", vds_path,
                           (unsigned long long)i);
        uint64_t room = p->bytes - (pos - p->start);
        size_t part = room < len ? (size_t)room : len;
        int fd = -1;
        int rc = vds_acquire(v, k, vds_path, &fd, e);
        if (rc < 0) return rc;
        rc = read_map(&p->map, fd, p->path, pos - p->start, part, g, i, cx, e);
        vds_release(v, k);
        if (rc < 0) return rc;
        pos += part;
        len -= part;
    }
    return LD_OK;
}

/* Bytes [pos, pos+len) of the pixel dataset, from its parts or its one file. */
static int read_gathered(h5_store *s, ld_store_ctx *cx, uint64_t pos, size_t len, gather *g,
                         uint64_t i, ld_err *e)
{
    if (s->vds.n) return vds_read(&s->vds, s->path, pos, len, g, i, cx, e);
    return read_map(&s->map, s->fd, s->path, pos, len, g, i, cx, e);
}

/* Bytes [pos, pos+len) of the pixel dataset into dst. */
static int read_direct(h5_store *s, ld_store_ctx *cx, uint64_t pos, size_t len, uint8_t *dst,
                       uint64_t i, ld_err *e)
{
    struct iovec iov[8];
    gather g = {&dst, len ? len : 1, 0, iov, sizeof iov / sizeof iov[0]};
    return read_gathered(s, cx, pos, len, &g, i, e);
}

/* Whether mapping k of dcpl takes the whole of its source to the rows [row, row + src[0]) of
 * the virtual dataset of dims[] (rank dims), spanning all other dimensions; src[] is then the
 * extent the source dataset must have. A source selection "all" (h5py's VirtualSource,
 * `dataconv merge`) is stored without the source's extent (HDF5 gives a scalar space): the
 * mapped block says it. A hyperslab selection must cover its whole extent. 1 yes, 0 no. */
static int vds_whole_rows(hid_t dcpl, size_t k, int rank, const hsize_t dims[4], uint64_t row,
                          hsize_t src[4])
{
    int ok = 0;
    hid_t vs = H5Pget_virtual_vspace(dcpl, k), ss = H5Pget_virtual_srcspace(dcpl, k);
    hsize_t start[4], end[4], box = 1;
    if (vs < 0 || ss < 0 || H5Sget_simple_extent_ndims(vs) != rank) goto done;
    hssize_t vn = H5Sget_select_npoints(vs);
    if (vn <= 0 || H5Sget_select_bounds(vs, start, end) < 0) goto done;
    for (int j = 0; j < rank; j++) {
        src[j] = end[j] - start[j] + 1;
        box *= src[j];
    }
    if (box != (hsize_t)vn || start[0] != row) goto done;
    for (int j = 1; j < rank; j++)
        if (start[j] != 0 || src[j] != dims[j]) goto done;
    if (H5Sget_select_type(ss) != H5S_SEL_ALL) {
        hsize_t ext[4];
        if (H5Sget_simple_extent_ndims(ss) != rank || H5Sget_select_npoints(ss) != vn ||
            H5Sget_simple_extent_npoints(ss) != vn)
            goto done;
        H5Sget_simple_extent_dims(ss, ext, NULL);
        for (int j = 0; j < rank; j++)
            if (ext[j] != src[j]) goto done;
    }
    ok = 1;
done:
    if (vs >= 0) H5Sclose(vs);
    if (ss >= 0) H5Sclose(ss);
    return ok;
}

/* Check a virtual dataset d ('/name', dims[rank]) mapped "whole part -> next rows" against its
 * parts, and with want_direct build the parts' direct maps (rows of row_bytes bytes) into
 * s->vds; with read_buf read the whole dataset into it as read_type, part after part (HDF5's
 * own VDS read keeps every source file open, half a megabyte of metadata cache each).
 * Returns 1 when s->vds now reads it directly (want_direct) or read_buf holds it, 0 when it is
 * not of that shape (or a part cannot be read directly: HDF5 reads it, after the checks),
 * < 0 when a part is missing, truncated, of another shape, type or length than its mapping,
 * or from another run. A virtual dataset of another shape is checked by ld__h5_vds_check
 * (every source found, as HDF5 looks for them) and left to HDF5 (0). A non-virtual d: 0. */
static int vds_resolve(h5_store *s, hid_t d, const char *name, int rank, const hsize_t dims[4],
                       size_t row_bytes, int want_direct, hid_t read_type, void *read_buf,
                       ld_err *e)
{
    int rc = 0, direct = want_direct, bad = 0;
    int prev_k = -1, prev_n = 0; /* shard_index, shard_count of the last part with them */
    size_t count = 0;
    uint64_t row = 0;
    hsize_t src[4] = {0};
    char file[1024], dset[512], resolved[2048], rid[40];
    vds_parts v = {0};
    hid_t dcpl = H5Dget_create_plist(d), vtype = H5Dget_type(d), fapl = -1, pf = -1, pd = -1,
          pt = -1;
    if (dcpl < 0 || vtype < 0 || H5Pget_layout(dcpl) != H5D_VIRTUAL) goto done;
    if (H5Pget_virtual_count(dcpl, &count) < 0 || count == 0) goto generic;
    for (size_t k = 0; k < count; k++) { /* the shape first: other VDS go through HDF5 */
        if (!vds_whole_rows(dcpl, k, rank, dims, row, src)) goto generic;
        row += src[0];
    }
    if (row != dims[0]) goto generic;
    v.p = calloc(count, sizeof *v.p);
    LD_CHECK(e, v.p, LD_ENOMEM, "%s: out of memory for %zu parts", s->path, count);
    for (size_t k = 0; k < count; k++)
        v.p[k].fd = -1;
    v.n = count;
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    LD_CHECK(e, fapl >= 0 && H5Pset_fapl_sec2(fapl) >= 0, LD_ENOMEM,
             "%s: cannot set up HDF5 file access (out of memory?)", s->path);
    row = 0;
    for (size_t k = 0; k < count; k++) {
        vds_part *p = &v.p[k];
        hsize_t pdims[4] = {0};
        int prank = 0;
        vds_whole_rows(dcpl, k, rank, dims, row, src);
        int st = vds_locate(dcpl, k, s->path, file, sizeof file, dset, sizeof dset, resolved,
                            sizeof resolved);
        if (st == LD_VDS_PATTERN) /* "%b" names: HDF5 resolves them */
            goto generic;
        pf = st == LD_VDS_OK ? H5Fopen(resolved, H5F_ACC_RDONLY, fapl) : H5I_INVALID_HID;
        if (pf < 0 ||
            (dset[0] && H5Lexists(pf, dset[0] == '/' ? dset + 1 : dset, H5P_DEFAULT) <= 0)) {
            bad = 1; /* missing, not HDF5 or no such dataset: the check says which */
            goto generic;
        }
        void *handle = NULL;
        struct stat sb;
        LD_CHECK(e,
                 H5Fget_vfd_handle(pf, H5P_DEFAULT, &handle) >= 0 && handle &&
                     fstat(*(const int *)handle, &sb) == 0,
                 LD_EIO, "%s: part %s: HDF5 does not give its file descriptor", s->path, resolved);
        pd = H5Dopen2(pf, dset, H5P_DEFAULT);
        LD_CHECK(e, pd >= 0 && ds_dims(pd, pdims, &prank) == 0, LD_EFORMAT,
                 "%s: dataset '/%s': part %s has no readable dataset '%s' (damaged?)", s->path,
                 name, resolved, dset);
        int same = prank == rank;
        for (int j = 0; same && j < rank; j++)
            same = pdims[j] == src[j];
        LD_CHECK(e, same, LD_EFORMAT,
                 "%s: dataset '/%s' maps %llu rows of part %s (rows %llu..%llu), but that "
                 "part's '%s' holds %llu rows%s: the part was rewritten, truncated or swapped "
                 "after the merge, and HDF5 would read fill values or drop samples. Convert "
                 "the part again and merge again",
                 s->path, name, (unsigned long long)src[0], resolved, (unsigned long long)row,
                 (unsigned long long)(row + src[0] - 1), dset,
                 (unsigned long long)(prank >= 1 ? pdims[0] : 0),
                 prank == rank ? " (or other sample dimensions)" : " of another rank");
        pt = H5Dget_type(pd);
        LD_CHECK(e, pt >= 0 && H5Tequal(pt, vtype) > 0, LD_EFORMAT,
                 "%s: dataset '/%s': part %s stores '%s' with another element type than the "
                 "merged file declares (made with other options?): merge parts of one run only",
                 s->path, name, resolved, dset);
        if (s->run_id[0] && ld__h5_attr_text(pf, LD_H5_ATTR_RUN_ID, rid, sizeof rid) && rid[0])
            LD_CHECK(e, !strcmp(rid, s->run_id), LD_EFORMAT,
                     "%s: part %s comes from another run (its run_id %s, the merged file's %s: "
                     "other options, input or part count): re-convert it with the same "
                     "command as the other parts, then merge again",
                     s->path, resolved, rid, s->run_id);
        /* Parts of equal size swapped or renamed after the merge pass every check above:
         * the shard numbers each part recorded must come in the order of the mappings. */
        int pk, pn;
        if (ld__h5_attr_int(pf, LD_H5_ATTR_SHARD_INDEX, &pk) &&
            ld__h5_attr_int(pf, LD_H5_ATTR_SHARD_COUNT, &pn)) {
            LD_CHECK(e, pk > prev_k && (!prev_n || pn == prev_n), LD_EFORMAT,
                     "%s: dataset '/%s': mapping %zu of %zu reads %s, which is shard %d of %d, "
                     "after shard %d of %d: the part files were swapped or renamed after the "
                     "merge. Give each part its name back, or merge again",
                     s->path, name, k + 1, count, resolved, pk, pn, prev_k, prev_n);
            prev_k = pk;
            prev_n = pn;
        }
        if (read_buf && src[0]) {
            size_t per_row = H5Tget_size(read_type);
            for (int j = 1; j < rank; j++)
                per_row *= (size_t)dims[j];
            LD_CHECK(e,
                     H5Dread(pd, read_type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                             (char *)read_buf + (size_t)row * per_row) >= 0,
                     LD_EFORMAT, "%s: dataset '/%s': part %s: cannot read '%s' (damaged?)", s->path,
                     name, resolved, dset);
        }
        if (direct) {
            int dr = build_direct(resolved, (uint64_t)sb.st_size, pd, rank, pdims, row_bytes,
                                  &p->map, e);
            LD_TRY(dr);
            direct = dr;
        }
        p->start = row * (uint64_t)row_bytes;
        p->bytes = src[0] * (uint64_t)row_bytes;
        p->dev = sb.st_dev;
        p->ino = sb.st_ino;
        p->size = sb.st_size;
        p->mtime = sb.st_mtime;
        p->path = realpath(resolved, NULL); /* the process may change folder later */
        if (!p->path) p->path = ld__strdup(resolved);
        LD_CHECK(e, p->path, LD_ENOMEM, "%s: out of memory", s->path);
        H5Tclose(pt);
        H5Dclose(pd);
        H5Fclose(pf);
        pt = pd = pf = -1;
        row += src[0];
    }
    rc = direct || read_buf;
    if (direct) {
        struct rlimit rl;
        rlim_t cap = VDS_MAX_FDS;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur / 2 < cap)
            cap = rl.rlim_cur / 2;
        v.fd_cap = cap < 4 ? 4 : (int)cap;
        LD_CHECK(e, pthread_mutex_init(&v.mu, NULL) == 0, LD_ENOMEM,
                 "%s: cannot create a mutex (out of resources?)", s->path);
        v.mu_ok = 1;
        s->vds = v;
        memset(&v, 0, sizeof v);
    }
    goto done;
generic: /* not of the merged shape, or a source that is not there: HDF5 reads it, once its
          * sources are found (a missing one is refused with the message naming it) */
    rc = ld__h5_vds_check(d, s->path, name, e);
    LD_CHECK(e, rc < 0 || !bad, LD_EFORMAT,
             "%s: dataset '/%s': part %s cannot be read (not an HDF5 file with a dataset "
             "'%s'?): put the part back, or merge again",
             s->path, name, resolved, dset);
    rc = rc < 0 ? rc : 0;
done:
fail:
    vds_free(&v);
    if (pt >= 0) H5Tclose(pt);
    if (pd >= 0) H5Dclose(pd);
    if (pf >= 0) H5Fclose(pf);
    if (fapl >= 0) H5Pclose(fapl);
    if (vtype >= 0) H5Tclose(vtype);
    if (dcpl >= 0) H5Pclose(dcpl);
    return rc;
}

/* ---- vtable -------------------------------------------------------------------------------- */

static int h5_ctx_create(ld_store *st, ld_store_ctx **out, ld_err *e)
{
    *out = calloc(1, sizeof(**out));
    if (!*out) return ld__err(e, LD_ENOMEM, "out of memory (read context)");
    const h5_store *s = (const h5_store *)st;
    if (s->direct && !st->info.encoded) { /* h5_read_gather's, allocated once here */
        (*out)->iov = malloc(GATHER_IOV * sizeof(struct iovec));
        if (!(*out)->iov) {
            free(*out);
            *out = NULL;
            return ld__err(e, LD_ENOMEM, "out of memory (read context)");
        }
    }
#if defined(RWF_NOWAIT)
    (*out)->probe = 1; /* cold until a piece is read wholly from the cache */
#endif
    return LD_OK;
}

static void h5_ctx_free(ld_store *st, ld_store_ctx *cx)
{
    (void)st;
    if (!cx) return;
    ld__buf_free(&cx->buf);
    free(cx->iov);
    free(cx);
}

static double label_of(const h5_store *s, uint64_t i)
{
    return s->lab_f ? (double)s->lab_f[i] : (double)s->lab_i[i];
}

/* h5_read without the detail: every failure names s->path and sample i in its message. */
static int read_sample(ld_store *st, ld_store_ctx *cx, uint64_t i, uint8_t *dst, size_t dst_len,
                       ld_rec *rec, ld_err *e)
{
    h5_store *s = (h5_store *)st;
    const ld_store_info *in = &st->info;
    int rc = LD_OK;
    if (i >= in->n)
        return ld__err(e, LD_EINVAL, "%s: sample %llu out of range (%llu samples)", s->path,
                       (unsigned long long)i, (unsigned long long)in->n);
    rec->label = label_of(s, i);
    rec->c = in->c;
    rec->h = in->h;
    rec->w = in->w;
    if (in->encoded) {
        uint64_t a = s->offsets[i], b = s->offsets[i + 1];
        size_t len = (size_t)(b - a);
        rec->c = s->enc_c;
        rec->h = s->enc_h;
        rec->w = s->enc_w;
        if (ld__buf_reserve(&cx->buf, len ? len : 1) < 0)
            return ld__err(e, LD_ENOMEM, "%s: sample %llu: out of memory (%zu bytes)", s->path,
                           (unsigned long long)i, len);
        if (s->direct) {
            rc = read_direct(s, cx, a, len, cx->buf.p, i, e);
        } else if (len) {
            hsize_t dims[4] = {s->enc_len};
            ld_h5_quiet q;
            ld__h5_quiet_begin(&q);
            rc = read_rows(s->dset, 1, dims, a, len, H5T_NATIVE_UINT8, H5P_DEFAULT, cx->buf.p) < 0
                     ? -1
                     : 0;
            ld__h5_quiet_end(&q);
            if (rc < 0)
                rc = ld__err(e, LD_EFORMAT,
                             "%s: sample %llu: HDF5 could not read its %zu "
                             "encoded bytes (corrupt file?)",
                             s->path, (unsigned long long)i, len);
        }
        cx->first = cx->count = 0;
        rec->data = cx->buf.p;
        rec->len = len;
        return rc;
    }
    size_t sb = in->sample_bytes;
    rec->len = sb;
    if (s->direct) {
        uint8_t *to = dst;
        if (!dst || dst_len != sb) {
            if (ld__buf_reserve(&cx->buf, sb) < 0)
                return ld__err(e, LD_ENOMEM, "%s: sample %llu: out of memory", s->path,
                               (unsigned long long)i);
            to = cx->buf.p;
        }
        rc = read_direct(s, cx, i * (uint64_t)sb, sb, to, i, e);
        rec->data = to;
        return rc;
    }
    /* Fallback: keep a row of consecutive samples (one chunk's worth) per context, so that
     * sequential and block-shuffled reads decompress each chunk once. */
    if (!(cx->count && i >= cx->first && i < cx->first + cx->count)) {
        uint64_t first = i / s->rows * s->rows;
        uint64_t cnt = in->n - first < s->rows ? in->n - first : s->rows;
        if (ld__buf_reserve(&cx->buf, (size_t)cnt * sb) < 0)
            return ld__err(e, LD_ENOMEM, "%s: sample %llu: out of memory", s->path,
                           (unsigned long long)i);
        hsize_t dims[4];
        int rank = 0, st2 = -1;
        ld_h5_quiet q;
        ld__h5_quiet_begin(&q);
        if (ds_dims(s->dset, dims, &rank) == 0)
            st2 = read_rows(s->dset, rank, dims, first, cnt, s->memtype, s->dxpl, cx->buf.p) < 0
                      ? -1
                      : 0;
        char what[sizeof s->conv_what];
        const int inexact = s->conv_hit;
        if (inexact) memcpy(what, s->conv_what, sizeof what);
        s->conv_hit = 0;
        ld__h5_quiet_end(&q);
        cx->count = 0;
        if (st2 < 0 && inexact) {
            char where[64];
            if (cnt == 1)
                snprintf(where, sizeof where, "sample %llu", (unsigned long long)first);
            else
                snprintf(where, sizeof where, "one of samples %llu..%llu",
                         (unsigned long long)first, (unsigned long long)(first + cnt - 1));
            return ld__err(e, LD_EINVAL,
                           "%s: %s: dataset '/%s' holds %s, which float32 "
                           "cannot hold exactly; libdata reads pixels as uint8 or float32 "
                           "only: store the pixels as float32 (or uint8/int16/uint16)",
                           s->path, where, s->dname, what);
        }
        if (st2 < 0)
            return ld__err(e, LD_EFORMAT,
                           "%s: samples %llu..%llu: HDF5 read failed (corrupt or "
                           "truncated file, or a filter that is not available)",
                           s->path, (unsigned long long)first,
                           (unsigned long long)(first + cnt - 1));
        cx->first = first;
        cx->count = cnt;
    }
    rec->data = cx->buf.p + (size_t)(i - cx->first) * sb;
    return LD_OK;
}

/* The message names the file and the sample: so does the detail (the reader relies on it). */
static int h5_read(ld_store *st, ld_store_ctx *cx, uint64_t i, uint8_t *dst, size_t dst_len,
                   ld_rec *rec, ld_err *e)
{
    const int rc = read_sample(st, cx, i, dst, dst_len, rec, e);
    if (rc < 0) ld__err_where(e, ((h5_store *)st)->path, (int64_t)i);
    return rc;
}

static void h5_close(ld_store *st)
{
    h5_store *s = (h5_store *)st;
    if (!s) return;
    if (s->dset >= 0 || s->file >= 0 || s->dxpl != H5P_DEFAULT) {
        ld_h5_quiet q;
        ld__h5_quiet_begin(&q);
        if (s->dxpl != H5P_DEFAULT && s->dxpl >= 0) H5Pclose(s->dxpl);
        if (s->dset >= 0) H5Dclose(s->dset);
        if (s->file >= 0) H5Fclose(s->file);
        ld__h5_quiet_end(&q);
    }
    if (s->fd >= 0) close(s->fd);
    vds_free(&s->vds);
    free(s->map.addr);
    free(s->lab_i);
    free(s->lab_f);
    free(s->offsets);
    free(s->path);
    free(s);
}

/* Whether the first byte of each of samples idx[0], idx[n / 2] and idx[n - 1] is in the page
 * cache (preadv2 RWF_NOWAIT of one byte; 1 when it cannot be told). */
static int looks_cached(h5_store *s, const uint64_t *idx, size_t n)
{
#if defined(RWF_NOWAIT)
    const ld_store_info *in = &s->base.info;
    const size_t at[3] = {0, n / 2, n - 1};
    for (size_t t = 0; t < 3 && n; t++) {
        const uint64_t i = idx[at[t]];
        if (i >= in->n) continue;
        uint64_t pos = in->encoded ? s->offsets[i] : i * (uint64_t)in->sample_bytes;
        if (in->encoded && s->offsets[i + 1] == pos) continue; /* an empty record */
        int fd = s->fd;
        const direct_map *m = &s->map;
        size_t k = 0;
        if (s->vds.n) {
            k = vds_part_of(&s->vds, pos);
            const vds_part *p = &s->vds.p[k];
            if (pos < p->start || pos - p->start >= p->bytes) continue;
            ld_err quiet = {0};
            if (vds_acquire(&s->vds, k, s->path, &fd, &quiet) < 0) continue;
            m = &p->map;
            pos -= p->start;
        }
        const uint64_t j = pos / m->chunk_bytes;
        ssize_t got = 1;
        if (j < m->nchunks) {
            uint8_t byte;
            struct iovec v = {&byte, 1};
            got = preadv2(fd, &v, 1, (off_t)(m->addr[j] + pos % m->chunk_bytes), RWF_NOWAIT);
        }
        if (s->vds.n) vds_release(&s->vds, k);
        if (got < 0 && errno == EAGAIN) return 0;
    }
#else
    (void)s;
    (void)idx;
    (void)n;
#endif
    return 1;
}

/* Ask the kernel to start reading a batch's byte ranges now (they are read one after the
 * other right after), so a cold cache or a disk sees all requests at once instead of one
 * sample at a time; skipped while the context reads from the cache (struct ld_store_ctx).
 * A piece whose reads all hit the cache after it was advised proves nothing (a cold
 * block-shuffled epoch advised 38 % of its bytes when it counted as warm): the next piece is
 * then probed (looks_cached) and advised unless its samples are cached. Ranges that follow
 * each other in the file (samples in file order, as the reader gives raw runs) are advised
 * with one call of up to ADVISE_MAX bytes. */
static void h5_will_read(ld_store *st, ld_store_ctx *cx, const uint64_t *idx, size_t n)
{
    h5_store *s = (h5_store *)st;
    if (!s->direct) return;
    if (cx) {
        int warm = cx->probe && !cx->missed && cx->pieces;
        if (warm && cx->advised) warm = looks_cached(s, idx, n);
        cx->pieces = 1;
        cx->missed = 0;
        cx->advised = !warm;
        if (warm) return;
    }
    int pfd = -1; /* the pending range: [poff, poff + plen) of pfd */
    uint64_t poff = 0, plen = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t i = idx[k], pos, len;
        if (i >= st->info.n) continue;
        if (st->info.encoded) {
            pos = s->offsets[i];
            len = s->offsets[i + 1] - pos;
        } else {
            pos = i * (uint64_t)st->info.sample_bytes;
            len = st->info.sample_bytes;
        }
        int fd = s->fd;
        const direct_map *m = &s->map;
        size_t vp = 0;  /* its part, when the dataset is virtual */
        if (s->vds.n) { /* a sample lies in one part (a merged file's do) or is not advised */
            vp = vds_part_of(&s->vds, pos);
            const vds_part *p = &s->vds.p[vp];
            if (pos < p->start || pos - p->start + len > p->bytes) continue;
            ld_err quiet = {0};
            if (vds_acquire(&s->vds, vp, s->path, &fd, &quiet) < 0) continue;
            m = &p->map;
            pos -= p->start;
        }
        while (len) { /* per chunk piece: chunks need not be adjacent in the file */
            uint64_t j = pos / m->chunk_bytes, in = pos % m->chunk_bytes;
            uint64_t part = m->chunk_bytes - in < len ? m->chunk_bytes - in : len;
            if (j >= m->nchunks) break;
            const uint64_t off = m->addr[j] + in;
            if (fd == pfd && off == poff + plen && plen + part <= ADVISE_MAX) {
                plen += part;
            } else {
                if (pfd >= 0) posix_fadvise(pfd, (off_t)poff, (off_t)plen, POSIX_FADV_WILLNEED);
                pfd = fd;
                poff = off;
                plen = part;
            }
            pos += part;
            len -= part;
        }
        if (s->vds.n) { /* the part stays open while its range is pending: advise it now */
            if (pfd >= 0) posix_fadvise(pfd, (off_t)poff, (off_t)plen, POSIX_FADV_WILLNEED);
            pfd = -1;
            vds_release(&s->vds, vp);
        }
    }
    if (pfd >= 0) posix_fadvise(pfd, (off_t)poff, (off_t)plen, POSIX_FADV_WILLNEED);
}

static int read_samples(ld_store *st, ld_store_ctx *cx, uint64_t first, size_t count, uint8_t *dst,
                        double *labels, ld_err *e)
{
    h5_store *s = (h5_store *)st;
    const size_t sb = st->info.sample_bytes;
    if (st->info.encoded || first > st->info.n || count > st->info.n - first)
        return ld__err(e, LD_EINVAL, "%s: samples %llu + %zu out of range", s->path,
                       (unsigned long long)first, count);
    for (size_t k = 0; k < count; k++)
        labels[k] = label_of(s, first + k);
    if (s->direct) /* one pread per chunk piece, straight into the batch */
        return read_direct(s, cx, first * (uint64_t)sb, count * sb, dst, first, e);
    for (size_t k = 0; k < count; k++) {
        ld_rec rec;
        int rc = h5_read(st, cx, first + k, dst + k * sb, sb, &rec, e);
        if (rc < 0) return rc;
        if (rec.data != dst + k * sb) memcpy(dst + k * sb, rec.data, sb);
    }
    return LD_OK;
}

/* As h5_read: the detail names the file and the sample (the first of the run unless a
 * single read named its own). */
static int h5_read_run(ld_store *st, ld_store_ctx *cx, uint64_t first, size_t count, uint8_t *dst,
                       double *labels, ld_err *e)
{
    const int rc = read_samples(st, cx, first, count, dst, labels, e);
    if (rc < 0) ld__err_where(e, ((h5_store *)st)->path, e && e->sample >= 0 ? -1 : (int64_t)first);
    return rc;
}

/* Samples [first, first + count) into dst[0 .. count): one preadv per range of the file that
 * holds them in a row (see store.h). */
static int h5_read_gather(ld_store *st, ld_store_ctx *cx, uint64_t first, size_t count,
                          uint8_t *const *dst, double *labels, ld_err *e)
{
    h5_store *s = (h5_store *)st;
    const size_t sb = st->info.sample_bytes;
    int rc = LD_OK;
    if (st->info.encoded || first > st->info.n || count > st->info.n - first) {
        rc = ld__err(e, LD_EINVAL, "%s: samples %llu + %zu out of range", s->path,
                     (unsigned long long)first, count);
    } else if (s->direct && cx->iov) {
        for (size_t k = 0; k < count; k++)
            labels[k] = label_of(s, first + k);
        gather g = {dst, sb, 0, cx->iov, GATHER_IOV};
        rc = read_gathered(s, cx, first * (uint64_t)sb, count * sb, &g, first, e);
    } else { /* through HDF5: sample by sample, from the context's row of a chunk */
        for (size_t k = 0; k < count; k++) {
            ld_rec rec;
            rc = h5_read(st, cx, first + k, dst[k], sb, &rec, e);
            if (rc < 0) break;
            if (rec.data != dst[k]) memcpy(dst[k], rec.data, sb);
            labels[k] = rec.label;
        }
        return rc; /* h5_read's detail names the file and the sample */
    }
    if (rc < 0) ld__err_where(e, s->path, e && e->sample >= 0 ? -1 : (int64_t)first);
    return rc;
}

static const ld_store_vt h5_vt = {h5_ctx_create, h5_ctx_free, h5_read,       h5_will_read,
                                  h5_close,      h5_read_run, h5_read_gather};

/* ---- open ---------------------------------------------------------------------------------- */

/* Integer labels are read as 64-bit and must fit int32, libdata's label type: HDF5 would
 * clip 3000000000 to 2147483647 without a word. Floating point labels are kept as doubles;
 * the reader checks each against the label dtype it delivers. */
static int load_labels(h5_store *s, hid_t file, const char *name, uint64_t n, ld_err *e)
{
    int rc = LD_OK;
    hid_t d = -1, t = -1;
    hsize_t dims[4];
    int rank = 0;
    void *wide = NULL;
    if (!link_exists(file, name))
        return ld__err(e, LD_EFORMAT, "%s: no label dataset '/%s' (set the label dataset name)",
                       s->path, name);
    d = H5Dopen2(file, name, H5P_DEFAULT);
    LD_CHECK(e, d >= 0 && ds_dims(d, dims, &rank) == 0, LD_EFORMAT,
             "%s: cannot open label dataset '/%s'", s->path, name);
    LD_CHECK(e, rank == 1 || (rank == 2 && dims[1] == 1), LD_EFORMAT,
             "%s: label dataset '/%s' must have shape (N,) (one number per sample)", s->path, name);
    LD_CHECK(e, dims[0] == n, LD_EFORMAT,
             "%s: label dataset '/%s' has %llu entries but the pixel dataset has %llu samples: "
             "every sample needs exactly one label (the file is incomplete or was made "
             "wrongly; rewrite it)",
             s->path, name, (unsigned long long)dims[0], (unsigned long long)n);
    t = H5Dget_type(d);
    H5T_class_t cl = H5Tget_class(t);
    LD_CHECK(e, cl == H5T_INTEGER || cl == H5T_FLOAT, LD_EFORMAT,
             "%s: label dataset '/%s' is not numeric", s->path, name);
    const int is_unsigned = cl == H5T_INTEGER && H5Tget_sign(t) == H5T_SGN_NONE;
    wide = malloc((size_t)(n ? n : 1) * 8);
    if (cl == H5T_FLOAT) {
        s->lab_f = wide;
        wide = NULL;
        s->base.info.label_float = 1;
    } else {
        s->lab_i = malloc((size_t)(n ? n : 1) * 4);
    }
    LD_CHECK(e, (s->lab_f || wide) && (s->lab_f || s->lab_i), LD_ENOMEM,
             "%s: out of memory for %llu labels", s->path, (unsigned long long)n);
    hid_t mt = s->lab_f ? H5T_NATIVE_DOUBLE : is_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
    void *into = s->lab_f ? (void *)s->lab_f : wide;
    /* a merged file: every part checked against its mapping, and read one after the other */
    const int by_parts = vds_resolve(s, d, name, rank, dims, 0, 0, mt, n ? into : NULL, e);
    LD_TRY(by_parts);
    rc = LD_OK;
    if (n && !by_parts)
        LD_CHECK(e, H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, into) >= 0, LD_EFORMAT,
                 "%s: cannot read labels '/%s' (corrupt?)", s->path, name);
    if (s->lab_i) {
        /* every label must fit: report the whole range so the user sees what the file holds */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        uint64_t bad = UINT64_MAX, uhi = 0;
        for (uint64_t k = 0; k < n; k++) {
            if (is_unsigned) {
                uint64_t v = ((const uint64_t *)wide)[k];
                uhi = v > uhi ? v : uhi;
                if (v > INT32_MAX && bad == UINT64_MAX) bad = k;
                s->lab_i[k] = (int32_t)(v <= INT32_MAX ? v : 0);
                lo = (int64_t)(v < (uint64_t)lo ? v : (uint64_t)lo);
            } else {
                int64_t v = ((const int64_t *)wide)[k];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
                if ((v > INT32_MAX || v < INT32_MIN) && bad == UINT64_MAX) bad = k;
                s->lab_i[k] = (int32_t)(v <= INT32_MAX && v >= INT32_MIN ? v : 0);
            }
        }
        if (bad != UINT64_MAX) {
            char range[64];
            if (is_unsigned)
                snprintf(range, sizeof range, "%lld to %llu", (long long)lo,
                         (unsigned long long)uhi);
            else
                snprintf(range, sizeof range, "%lld to %lld", (long long)lo, (long long)hi);
            rc = ld__err(e, LD_EFORMAT,
                         "%s: label dataset '/%s' holds values from %s (the "
                         "first out of range at sample %llu); libdata's labels are int32 "
                         "(-2147483648 to 2147483647): renumber the labels to fit",
                         s->path, name, range, (unsigned long long)bad);
            goto fail;
        }
    }
    s->base.info.store_bytes += (size_t)(n ? n : 1) * (s->lab_f ? 8 : 4);
fail:
    free(wide);
    if (t >= 0) H5Tclose(t);
    if (d >= 0) H5Dclose(d);
    return rc;
}

static int open_raw(h5_store *s, hid_t file, const char *name, ld_err *e)
{
    int rc = LD_OK;
    hid_t t = -1;
    hsize_t dims[4] = {0, 1, 1, 1};
    int rank = 0;
    ld_store_info *in = &s->base.info;
    snprintf(s->dname, sizeof s->dname, "%s", name);
    s->dset = H5Dopen2(file, name, H5P_DEFAULT);
    LD_CHECK(e, s->dset >= 0, LD_EFORMAT, "%s: cannot open dataset '/%s'", s->path, name);
    LD_CHECK(e, ds_dims(s->dset, dims, &rank) == 0 && rank >= 2, LD_EFORMAT,
             "%s: dataset '/%s' must have 2 to 4 dimensions (N,C,H,W), (N,H,W) or (N,D)", s->path,
             name);
    in->n = dims[0];
    in->c = rank == 4 ? (int)dims[1] : 1;
    in->h = rank == 4 ? (int)dims[2] : rank == 3 ? (int)dims[1] : 1;
    in->w = (int)dims[rank - 1];
    LD_CHECK(e,
             dims[rank - 1] <= (1u << 24) && (rank < 3 || dims[rank - 2] <= (1u << 24)) &&
                 (rank < 4 || dims[1] <= 4096),
             LD_EFORMAT, "%s: dataset '/%s' has implausible sample dimensions", s->path, name);
    t = H5Dget_type(s->dset);
    H5T_class_t cl = H5Tget_class(t);
    LD_CHECK(e, cl == H5T_INTEGER || cl == H5T_FLOAT, LD_EFORMAT,
             "%s: dataset '/%s' is not numeric", s->path, name);
    int is_u8 = cl == H5T_INTEGER && H5Tget_size(t) == 1 && H5Tget_sign(t) == H5T_SGN_NONE;
    int is_f32 = cl == H5T_FLOAT && H5Tequal(t, H5T_NATIVE_FLOAT) > 0;
    in->dtype = is_u8 ? LD_SDT_U8 : LD_SDT_F32;
    s->memtype = is_u8 ? H5T_NATIVE_UINT8 : H5T_NATIVE_FLOAT;
    if (!is_u8 && !is_f32) { /* HDF5 converts: make any inexact value an error */
        s->src_class = cl;
        s->src_size = H5Tget_size(t);
        s->src_signed = cl == H5T_INTEGER && H5Tget_sign(t) != H5T_SGN_NONE;
        s->dxpl = H5Pcreate(H5P_DATASET_XFER);
        LD_CHECK(e, s->dxpl >= 0 && H5Pset_type_conv_cb(s->dxpl, conv_guard, s) >= 0, LD_ENOMEM,
                 "%s: cannot set up HDF5 type conversion (out of memory?)", s->path);
    }
    size_t px;
    LD_CHECK(e,
             ld__mul_size((size_t)in->c * (size_t)in->h, (size_t)in->w, &px) &&
                 ld__mul_size(px, is_u8 ? 1 : 4, &in->sample_bytes),
             LD_EFORMAT, "%s: sample size overflows", s->path);
    in->block = 1;
    const int virt = is_virtual(s->dset); /* (each look copies all of a VDS's mappings) */
    if (virt) {
        int d = vds_resolve(s, s->dset, name, rank, dims, in->sample_bytes, is_u8 || is_f32, -1,
                            NULL, e);
        LD_TRY(d);
        s->direct = d;
        rc = LD_OK;
    } else if (is_u8 || is_f32) {
        int d =
            build_direct(s->path, s->file_size, s->dset, rank, dims, in->sample_bytes, &s->map, e);
        LD_TRY(d);
        s->direct = d;
        rc = LD_OK;
    }
    {
        /* Samples per fallback read: the chunk's row count when chunks span whole samples. */
        hid_t dcpl = virt ? H5I_INVALID_HID : H5Dget_create_plist(s->dset);
        hsize_t cd[4] = {1, 0, 0, 0};
        s->rows = 1;
        if (s->vds.n && s->vds.p[0].map.nchunks > 1) /* locality: the first part's chunks */
            in->block = s->vds.p[0].map.chunk_bytes / in->sample_bytes;
        if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
            H5Pget_chunk(dcpl, rank, cd) == rank && cd[0] >= 1) {
            in->block = cd[0];
            if (cd[0] * in->sample_bytes <= FALLBACK_MAX_BYTES) s->rows = cd[0];
        }
        if (dcpl >= 0) H5Pclose(dcpl);
    }
    in->ctx_bytes = s->direct ? in->sample_bytes : (size_t)s->rows * in->sample_bytes;
    s->base.info.store_bytes += s->map.nchunks * 8 + vds_bytes(&s->vds);
    if (s->vds.n)
        snprintf(s->how, sizeof s->how, "hdf5 raw %s virtual, %zu parts, direct pread",
                 is_u8 ? "uint8" : "float32", s->vds.n);
    else
        snprintf(s->how, sizeof s->how, "hdf5 raw %s %s%s", is_u8 ? "uint8" : "float32",
                 virt ? "virtual, " : "",
                 s->direct
                     ? (s->map.nchunks == 1 ? "contiguous, direct pread" : "chunked, direct pread")
                     : "via HDF5 (serialized)");
fail:
    if (t >= 0) H5Tclose(t);
    return rc;
}

static int open_encoded(h5_store *s, hid_t file, const char *name, ld_err *e)
{
    int rc = LD_OK;
    hid_t d = -1, t = -1;
    hsize_t dims[4], odims[4];
    int rank = 0, orank = 0;
    uint32_t *shp = NULL;
    ld_store_info *in = &s->base.info;
    in->encoded = 1;
    s->dset = H5Dopen2(file, name, H5P_DEFAULT);
    LD_CHECK(e, s->dset >= 0 && ds_dims(s->dset, dims, &rank) == 0 && rank == 1, LD_EFORMAT,
             "%s: encoded dataset '/%s' must be 1-D uint8", s->path, name);
    t = H5Dget_type(s->dset);
    LD_CHECK(e, H5Tget_class(t) == H5T_INTEGER && H5Tget_size(t) == 1, LD_EFORMAT,
             "%s: encoded dataset '/%s' must be 1-D uint8", s->path, name);
    s->enc_len = dims[0];
    d = H5Dopen2(file, LD_H5_DS_OFFSETS, H5P_DEFAULT);
    LD_CHECK(e, d >= 0 && ds_dims(d, odims, &orank) == 0 && orank == 1 && odims[0] >= 1, LD_EFORMAT,
             "%s: encoded file without a valid '/%s' dataset", s->path, LD_H5_DS_OFFSETS);
    in->n = odims[0] - 1;
    s->offsets = malloc((size_t)odims[0] * sizeof(uint64_t));
    LD_CHECK(e, s->offsets, LD_ENOMEM, "%s: out of memory for offsets", s->path);
    LD_CHECK(e, H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, s->offsets) >= 0,
             LD_EFORMAT, "%s: cannot read '/%s'", s->path, LD_H5_DS_OFFSETS);
    in->store_bytes += (size_t)odims[0] * 8;
    uint64_t longest = 0;
    for (uint64_t i = 0; i < in->n; i++) {
        LD_CHECK(e,
                 s->offsets[i] <= s->offsets[i + 1] && s->offsets[i + 1] <= s->enc_len &&
                     s->offsets[i + 1] - s->offsets[i] <= ((uint64_t)1 << 30),
                 LD_EFORMAT,
                 "%s: offsets of sample %llu are out of order or beyond the %llu "
                 "encoded bytes (corrupt)",
                 s->path, (unsigned long long)i, (unsigned long long)s->enc_len);
        if (s->offsets[i + 1] - s->offsets[i] > longest)
            longest = s->offsets[i + 1] - s->offsets[i];
    }
    /* Decoded shape: the attributes when the writer recorded a common size, else /shape. */
    int c = 0, h = 0, w = 0;
    ld__h5_attr_int(file, LD_H5_ATTR_CHANNELS, &c);
    ld__h5_attr_int(file, LD_H5_ATTR_HEIGHT, &h);
    ld__h5_attr_int(file, LD_H5_ATTR_WIDTH, &w);
    if (c > 0 && h > 0 && w > 0) in->max_pixels = (uint64_t)h * (uint64_t)w;
    if (link_exists(file, LD_H5_DS_SHAPE) && in->n && (c <= 0 || h <= 0 || w <= 0)) {
        hid_t sd = H5Dopen2(file, LD_H5_DS_SHAPE, H5P_DEFAULT);
        hsize_t sdims[4];
        int srank = 0;
        if (sd >= 0 && ds_dims(sd, sdims, &srank) == 0 && srank == 2 && sdims[1] == 3 &&
            sdims[0] == in->n && (shp = malloc((size_t)in->n * 12)) &&
            H5Dread(sd, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, shp) >= 0) {
            c = (int)shp[0];
            h = (int)shp[1];
            w = (int)shp[2];
            for (uint64_t i = 0; i < in->n; i++) {
                uint64_t px = (uint64_t)shp[3 * i + 1] * shp[3 * i + 2];
                in->max_pixels = px > in->max_pixels ? px : in->max_pixels;
                if ((int)shp[3 * i + 1] != h || (int)shp[3 * i + 2] != w) h = w = 0;
            }
        }
        if (sd >= 0) H5Dclose(sd);
    }
    s->enc_c = (c == 1 || c == 3) ? c : 3;
    s->enc_h = h > 0 ? h : 0;
    s->enc_w = w > 0 ? w : 0;
    in->c = s->enc_c;
    in->h = s->enc_h;
    in->w = s->enc_w;
    in->order = s->enc_c == 1 ? LD_SORDER_GRAY : LD_SORDER_RGB; /* the codec gives RGB */
    in->block = 1;
    const int virt = is_virtual(s->dset);
    {
        hsize_t one[4] = {s->enc_len};
        int dr = virt ? vds_resolve(s, s->dset, name, 1, one, 1, 1, -1, NULL, e)
                      : build_direct(s->path, s->file_size, s->dset, 1, one, 1, &s->map, e);
        LD_TRY(dr);
        s->direct = dr;
        rc = LD_OK;
    }
    for (size_t k = 1; k < s->vds.n; k++) { /* each part starts a sample: /offsets was shifted */
        const uint64_t b = s->vds.p[k].start;
        uint64_t lo = 0, hi = in->n; /* the first i with offsets[i] >= b */
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (s->offsets[mid] < b)
                lo = mid + 1;
            else
                hi = mid;
        }
        LD_CHECK(e, s->offsets[lo] == b, LD_EFORMAT,
                 "%s: part %s starts at byte %llu of '/%s', inside sample %llu (by '/%s'): "
                 "the merged file's offsets do not match its parts. Merge again",
                 s->path, s->vds.p[k].path, (unsigned long long)b, name,
                 (unsigned long long)(lo ? lo - 1 : 0), LD_H5_DS_OFFSETS);
    }
    in->ctx_bytes = (size_t)longest; /* the read buffer grows to the longest sample */
    in->store_bytes += s->map.nchunks * 8 + vds_bytes(&s->vds);
    if (s->vds.n)
        snprintf(s->how, sizeof s->how, "hdf5 encoded virtual, %zu parts, direct pread", s->vds.n);
    else
        snprintf(s->how, sizeof s->how, "hdf5 encoded %s%s", virt ? "virtual, " : "",
                 s->direct ? "direct pread" : "via HDF5 (serialized)");
fail:
    free(shp);
    if (t >= 0) H5Tclose(t);
    if (d >= 0) H5Dclose(d);
    return rc;
}

/* open_locked's answer when the name no longer refers to the file our descriptor holds. */
#define REPLACED 2

/* 1 when HDF5's own descriptor for `file` is the file `ours` describes (same device and
 * inode, same size and modification time), 0 when not, -1 when HDF5 does not say. */
static int same_file(hid_t file, const struct stat *ours)
{
    void *handle = NULL;
    struct stat st;
    if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle ||
        fstat(*(const int *)handle, &st) != 0)
        return -1;
    return st.st_dev == ours->st_dev && st.st_ino == ours->st_ino && st.st_size == ours->st_size &&
           st.st_mtime == ours->st_mtime;
}

static int open_locked(h5_store *s, const ld_store_opts *o, const struct stat *sb, ld_err *e)
{
    int rc = LD_OK;
    char fmt[32], storage[32], order[16];
    /* The sec2 driver explicitly: its handle is the POSIX descriptor that same_file needs. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    LD_CHECK(e, fapl >= 0 && H5Pset_fapl_sec2(fapl) >= 0, LD_ENOMEM,
             "%s: cannot set up HDF5 file access (out of memory?)", s->path);
    s->file = H5Fopen(s->path, H5F_ACC_RDONLY, fapl);
    if (s->file < 0) LD_TRY(ld__temp_being_written(s->path, e));
    LD_CHECK(e, s->file >= 0, LD_EFORMAT, "%s: not an HDF5 file, or corrupt/truncated", s->path);
    /* HDF5 opens the file by name again: if the name was renamed over since our open() (an
     * atomic publish of a new version), HDF5's chunk addresses belong to another file than
     * the one pread() reads. Both views must be one file; the caller retries otherwise. */
    int same = same_file(s->file, sb);
    LD_CHECK(e, same >= 0, LD_EIO, "%s: HDF5 does not give its file descriptor", s->path);
    if (!same) {
        rc = REPLACED;
        goto fail;
    }
    ld__h5_attr_text(s->file, LD_H5_ATTR_FORMAT, fmt, sizeof fmt);
    ld__h5_attr_text(s->file, LD_H5_ATTR_RUN_ID, s->run_id, sizeof s->run_id);
    ld__h5_attr_text(s->file, LD_H5_ATTR_STORAGE, storage, sizeof storage);
    const char *dname = o && o->data_name && *o->data_name ? o->data_name : NULL;
    const char *lname = o && o->label_name && *o->label_name ? o->label_name : LD_H5_DS_LABEL;
    int encoded = 0;
    if (!dname) {
        if (!strcmp(storage, LD_H5_STORAGE_ENCODED) ||
            (!link_exists(s->file, LD_H5_DS_DATA) && link_exists(s->file, LD_H5_DS_ENCODED) &&
             link_exists(s->file, LD_H5_DS_OFFSETS)))
            encoded = 1;
        dname = encoded ? LD_H5_DS_ENCODED : LD_H5_DS_DATA;
    } else if (!strcmp(dname, LD_H5_DS_ENCODED) && link_exists(s->file, LD_H5_DS_OFFSETS)) {
        encoded = 1;
    }
    LD_CHECK(e, link_exists(s->file, dname), LD_EFORMAT,
             "%s: no dataset '/%s' (set the data dataset name)", s->path, dname);
    if (encoded)
        LD_TRY(open_encoded(s, s->file, dname, e));
    else
        LD_TRY(open_raw(s, s->file, dname, e));
    if (s->direct) { /* read directly: HDF5's view of the pixels (a VDS: all its mappings) */
        H5Dclose(s->dset);
        s->dset = -1;
    }
    LD_TRY(load_labels(s, s->file, lname, s->base.info.n, e));
    if (ld__h5_attr_text(s->file, LD_H5_ATTR_CHANNEL_ORDER, order, sizeof order)) {
        int o = !strcmp(order, LD_H5_ORDER_BGR)    ? LD_SORDER_BGR
                : !strcmp(order, LD_H5_ORDER_RGB)  ? LD_SORDER_RGB
                : !strcmp(order, LD_H5_ORDER_GRAY) ? LD_SORDER_GRAY
                                                   : LD_SORDER_UNKNOWN;
        if (encoded)
            s->base.info.made_order = o; /* the decoder gives RGB; the file says what to give */
        else
            s->base.info.order = o;
    }
    if (s->direct) { /* nothing more to ask HDF5: release its caches and the file */
        H5Fclose(s->file);
        s->file = -1;
    }
fail:
    if (fapl >= 0) H5Pclose(fapl);
    return rc;
}

/* How many times a file replaced during open is opened again before giving up. */
#define REPLACE_TRIES 20

/* One attempt: LD_OK (store in *out), REPLACED, or an error. */
static int open_once(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e)
{
    int rc = LD_OK;
    struct stat sb;
    *out = NULL;
    h5_store *s = calloc(1, sizeof(*s));
    LD_CHECK(e, s, LD_ENOMEM, "%s: out of memory", path);
    s->base.vt = &h5_vt;
    s->fd = -1;
    s->file = s->dset = -1;
    s->dxpl = H5P_DEFAULT;
    s->base.info.how = s->how;
    s->path = ld__strdup(path);
    LD_CHECK(e, s->path, LD_ENOMEM, "%s: out of memory", path);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; we refuse it right after. */
    s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    LD_CHECK(e, s->fd >= 0, LD_EIO, "%s: cannot open: %s", path, strerror(errno));
    LD_CHECK(e, fstat(s->fd, &sb) == 0 && S_ISREG(sb.st_mode), LD_EIO, "%s: not a regular file",
             path);
    fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) & ~O_NONBLOCK);
    s->file_size = (uint64_t)sb.st_size;
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    rc = open_locked(s, o, &sb, e);
    ld__h5_quiet_end(&q);
    if (rc != LD_OK) goto fail;
    *out = &s->base;
    return LD_OK;
fail:
    h5_close(s ? &s->base : NULL);
    return rc;
}

int ld__h5_store_open(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e)
{
    int rc = REPLACED;
    for (int k = 0; k < REPLACE_TRIES && rc == REPLACED; k++) {
        if (k) { /* 2 ms .. 64 ms: let the writer finish */
            struct timespec ts = {0, 1000000L << (k < 6 ? k : 6)};
            nanosleep(&ts, NULL);
        }
        rc = open_once(path, o, out, e);
    }
    if (rc == REPLACED)
        rc = ld__err(e, LD_EIO,
                     "%s: the file was replaced %d times while being opened "
                     "(another program keeps rewriting it); open it again once it is done",
                     path, REPLACE_TRIES);
    return rc;
}

#else /* !LD_HAVE_HDF5 */

int ld__h5_store_open(const char *path, const ld_store_opts *o, ld_store **out, ld_err *e)
{
    (void)o;
    *out = NULL;
    return ld__err(e, LD_ENOTSUP, "%s: this libdata was built without HDF5", path);
}

#endif
