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

#include "store/hdf5/h5_desc.h"
#include "store/hdf5/h5_format.h"
#include "store/hdf5/h5_util.h"
#include "store/writer.h"

#include "store/hdf5/h5_store_int.h"

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
    ld_buf lab;     /* one label vector read directly (h5_label_vec) */
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

/* Try to build a direct map for dataset d (in the file `path` of `file_size` bytes) whose
 * logical rows are `row_bytes` bytes each. Returns 1 when direct access is possible (map
 * filled), 0 when HDF5 must read it, <0 on a corrupt chunk table (message in e). */
int ld__h5_build_direct(const char *path, uint64_t file_size, hid_t d, int rank,
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

/* Bytes [pos, pos+len) of the dataset mapped by m (in the file fd/path) to g's destinations:
 * chunk pieces that follow each other in the file are read together, with one preadv over
 * their destinations (a destination that continues the previous one extends its entry). */
int ld__h5_read_map(const direct_map *m, int fd, const char *path, uint64_t pos, size_t len,
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

/* Bytes [pos, pos+len) of the pixel dataset, from its parts or its one file. */
static int read_gathered(h5_store *s, ld_store_ctx *cx, uint64_t pos, size_t len, gather *g,
                         uint64_t i, ld_err *e)
{
    if (s->vds.n) return ld__h5_vds_read(&s->vds, s->path, pos, len, g, i, cx, e);
    return ld__h5_read_map(&s->map, s->fd, s->path, pos, len, g, i, cx, e);
}

/* Bytes [pos, pos+len) of the pixel dataset into dst. */
static int read_direct(h5_store *s, ld_store_ctx *cx, uint64_t pos, size_t len, uint8_t *dst,
                       uint64_t i, ld_err *e)
{
    struct iovec iov[8];
    gather g = {&dst, len ? len : 1, 0, iov, sizeof iov / sizeof iov[0]};
    return read_gathered(s, cx, pos, len, &g, i, e);
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
    ld__buf_free(&cx->lab);
    free(cx->iov);
    free(cx);
}

/* Sample i's label; with label vectors, its first value. */
static double label_of(const h5_store *s, uint64_t i)
{
    if (s->lab_map.addr || s->lab_vds.n) return 0; /* vectors read per sample: h5_label_vec */
    if (!s->lab_f && !s->lab_i) return 0;          /* no labels: /label holds the masks */
    const uint64_t at = i * (s->base.info.label_k ? s->base.info.label_k : 1);
    return s->lab_f ? (double)s->lab_f[at] : (double)s->lab_i[at];
}

static int h5_label_vec(ld_store *st, ld_store_ctx *cx, uint64_t i, double *out, ld_err *e)
{
    h5_store *s = (h5_store *)st; /* (lab_vds: its descriptor cache changes) */
    const uint32_t k = st->info.label_k;
    if (i >= st->info.n)
        return ld__err(e, LD_EINVAL, "%s: sample %llu out of range", s->path,
                       (unsigned long long)i);
    if (s->lab_map.addr || s->lab_vds.n) { /* one read of the row into the context's buffer */
        const size_t row = (size_t)k * 4;
        if (ld__buf_reserve(&cx->lab, row) < 0)
            return ld__err(e, LD_ENOMEM, "%s: out of memory", s->path);
        uint8_t *dst = cx->lab.p;
        struct iovec iov[2]; /* (a chunk holds whole rows: one entry) */
        gather g = {&dst, row, 0, iov, 2};
        const int rc =
            s->lab_vds.n
                ? ld__h5_vds_read(&s->lab_vds, s->path, i * row, row, &g, i, NULL, e)
                : ld__h5_read_map(&s->lab_map, s->fd, s->path, i * row, row, &g, i, NULL, e);
        if (rc < 0) return rc;
        for (uint32_t m = 0; m < k; m++) {
            float f;
            int32_t v;
            memcpy(s->lab_map_float ? (void *)&f : (void *)&v, dst + 4 * m, 4);
            out[m] = s->lab_map_float ? (double)f : (double)v;
        }
        return LD_OK;
    }
    for (uint32_t m = 0; m < k; m++)
        out[m] = s->lab_f ? s->lab_f[i * k + m] : (double)s->lab_i[i * k + m];
    return LD_OK;
}

/* Sample i's mask (info.mask_h x mask_w indices of info.mask_elem bytes) into out. */
static int h5_mask(ld_store *st, ld_store_ctx *cx, uint64_t i, uint8_t *out, ld_err *e)
{
    h5_store *s = (h5_store *)st; /* (msk_vds: its descriptor cache changes) */
    (void)cx;
    const size_t row =
        (size_t)st->info.mask_h * (size_t)st->info.mask_w * (size_t)st->info.mask_elem;
    int rc = LD_OK;
    if (i >= st->info.n)
        return ld__err(e, LD_EINVAL, "%s: sample %llu out of range", s->path,
                       (unsigned long long)i);
    if (s->msk_map.addr || s->msk_vds.n) { /* a chunk holds whole masks: one entry */
        struct iovec iov[2];
        gather g = {&out, row, 0, iov, 2};
        rc = s->msk_vds.n
                 ? ld__h5_vds_read(&s->msk_vds, s->path, i * row, row, &g, i, NULL, e)
                 : ld__h5_read_map(&s->msk_map, s->fd, s->path, i * row, row, &g, i, NULL, e);
    } else {
        ld_h5_quiet q;
        ld__h5_quiet_begin(&q);
        const hid_t mt = st->info.mask_elem == 2 ? H5T_NATIVE_UINT16 : H5T_NATIVE_UINT8;
        if (read_rows(s->msk_ds, 4, s->msk_dims, i, 1, mt, H5P_DEFAULT, out) < 0)
            rc = ld__err(e, LD_EFORMAT, "%s: cannot read the mask of sample %llu (corrupt?)",
                         s->path, (unsigned long long)i);
        ld__h5_quiet_end(&q);
    }
    if (rc < 0) ld__err_where(e, s->path, (int64_t)i);
    return rc;
}

/* Sample i's boxes: rows box_off[i] .. box_off[i + 1] - 1 of /boxes, /box_label, /box_flags. */
static int h5_boxes(ld_store *st, ld_store_ctx *cx, uint64_t i, ld_buf *out, uint32_t *m, ld_err *e)
{
    h5_store *s = (h5_store *)st;
    (void)cx;
    int rc = LD_OK;
    *m = 0;
    if (i >= st->info.n)
        return ld__err(e, LD_EINVAL, "%s: sample %llu out of range", s->path,
                       (unsigned long long)i);
    const uint64_t a = (uint64_t)s->box_off[i], k = (uint64_t)(s->box_off[i + 1] - s->box_off[i]);
    /* the columns are read after the k boxes they become: xy at 24k, labels at 40k, flags at
     * 44k (45 bytes a box) */
    LD_CHECK(e, k <= UINT32_MAX && ld__buf_reserve(out, (size_t)(k ? k : 1) * 45) == LD_OK,
             LD_ENOMEM, "%s: out of memory for the %llu boxes of sample %llu", s->path,
             (unsigned long long)k, (unsigned long long)i);
    if (k) {
        uint8_t *p = out->p; /* (malloc-aligned) */
        float *xy = (float *)(void *)(p + k * 24);
        int32_t *lab = (int32_t *)(void *)(p + k * 40);
        uint8_t *fl = p + k * 44;
        static const hsize_t dims4[4] = {0, 4, 0, 0}, dims1[4] = {0, 0, 0, 0};
        ld_h5_quiet q;
        ld__h5_quiet_begin(&q);
        const int ok =
            read_rows(s->box_ds, 2, dims4, a, k, H5T_NATIVE_FLOAT, H5P_DEFAULT, xy) >= 0 &&
            read_rows(s->box_label_ds, 1, dims1, a, k, H5T_NATIVE_INT32, H5P_DEFAULT, lab) >= 0 &&
            read_rows(s->box_flags_ds, 1, dims1, a, k, H5T_NATIVE_UINT8, H5P_DEFAULT, fl) >= 0;
        ld__h5_quiet_end(&q);
        LD_CHECK(e, ok, LD_EFORMAT, "%s: cannot read the boxes of sample %llu (corrupt?)", s->path,
                 (unsigned long long)i);
        ld_box *b = (ld_box *)(void *)p; /* k * 24 bytes: before the columns it reads */
        for (uint64_t j = 0; j < k; j++) {
            ld_box v = {xy[4 * j], xy[4 * j + 1], xy[4 * j + 2], xy[4 * j + 3], lab[j], fl[j]};
            b[j] = v;
        }
    }
    out->len = (size_t)k * sizeof(ld_box);
    *m = (uint32_t)k;
fail:
    if (rc < 0) ld__err_where(e, s->path, (int64_t)i);
    return rc;
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
        if (ld__h5_ds_dims(s->dset, dims, &rank) == 0)
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
    if (s->dset >= 0 || s->file >= 0 || s->msk_ds >= 0 || s->box_ds >= 0 || s->box_label_ds >= 0 ||
        s->box_flags_ds >= 0 || s->dxpl != H5P_DEFAULT) {
        ld_h5_quiet q;
        ld__h5_quiet_begin(&q);
        if (s->dxpl != H5P_DEFAULT && s->dxpl >= 0) H5Pclose(s->dxpl);
        if (s->dset >= 0) H5Dclose(s->dset);
        if (s->msk_ds >= 0) H5Dclose(s->msk_ds);
        hid_t bds[3] = {s->box_ds, s->box_label_ds, s->box_flags_ds};
        for (int k = 0; k < 3; k++)
            if (bds[k] >= 0) H5Dclose(bds[k]);
        if (s->file >= 0) H5Fclose(s->file);
        ld__h5_quiet_end(&q);
    }
    if (s->fd >= 0) close(s->fd);
    ld__h5_vds_free(&s->vds);
    ld__h5_vds_free(&s->lab_vds);
    ld__h5_vds_free(&s->msk_vds);
    free(s->map.addr);
    free(s->lab_map.addr);
    free(s->msk_map.addr);
    free(s->box_off);
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
            k = ld__h5_vds_part_of(&s->vds, pos);
            const vds_part *p = &s->vds.p[k];
            if (pos < p->start || pos - p->start >= p->bytes) continue;
            ld_err quiet = {0};
            if (ld__h5_vds_acquire(&s->vds, k, s->path, &fd, &quiet) < 0) continue;
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
        if (s->vds.n) ld__h5_vds_release(&s->vds, k);
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
            vp = ld__h5_vds_part_of(&s->vds, pos);
            const vds_part *p = &s->vds.p[vp];
            if (pos < p->start || pos - p->start + len > p->bytes) continue;
            ld_err quiet = {0};
            if (ld__h5_vds_acquire(&s->vds, vp, s->path, &fd, &quiet) < 0) continue;
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
            ld__h5_vds_release(&s->vds, vp);
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

/* Names: /filename read NAMES_ROWS rows at a time (fixed-length or variable-length strings,
 * in the file's character set) under the HDF5 lock, copied out with their trailing padding
 * dropped, and passed on with the lock released (fn may read the store). */
#define NAMES_ROWS 4096

typedef struct names_rd {
    hid_t file, d, t, mt; /* file: the store's, or opened here (own) */
    int own, vlen;
    size_t fixed, bytes;
    char *raw;
    hsize_t dims[4];
} names_rd;

static void names_close(names_rd *r)
{
    free(r->raw);
    if (r->mt >= 0) H5Tclose(r->mt);
    if (r->t >= 0) H5Tclose(r->t);
    if (r->d >= 0) H5Dclose(r->d);
    if (r->own && r->file >= 0) H5Fclose(r->file);
}

/* LD_OK, LD_STORE_NO_NAMES or an error; locked. */
static int names_open(h5_store *s, names_rd *r, ld_err *e)
{
    int rc = LD_OK, rank = 0;
    /* the store may have closed its own handle after open (direct reads) */
    r->own = s->file < 0;
    r->file = r->own ? H5Fopen(s->path, H5F_ACC_RDONLY, H5P_DEFAULT) : s->file;
    LD_CHECK(e, r->file >= 0, LD_EFORMAT, "%s: cannot open it again to read its names", s->path);
    if (!link_exists(r->file, LD_H5_DS_FILENAME)) return LD_STORE_NO_NAMES;
    r->d = H5Dopen2(r->file, LD_H5_DS_FILENAME, H5P_DEFAULT);
    r->t = r->d >= 0 ? H5Dget_type(r->d) : -1;
    LD_CHECK(e,
             r->t >= 0 && H5Tget_class(r->t) == H5T_STRING &&
                 ld__h5_ds_dims(r->d, r->dims, &rank) == 0 && rank == 1 &&
                 r->dims[0] == s->base.info.n,
             LD_EFORMAT, "%s: /filename is not %llu strings (damaged file?)", s->path,
             (unsigned long long)s->base.info.n);
    r->vlen = H5Tis_variable_str(r->t) > 0;
    r->fixed = r->vlen ? 0 : H5Tget_size(r->t) + 1; /* + 1: NUL-terminated whatever the padding */
    r->mt = H5Tcopy(H5T_C_S1);
    LD_CHECK(e,
             r->mt >= 0 && H5Tset_cset(r->mt, H5Tget_cset(r->t)) >= 0 &&
                 H5Tset_size(r->mt, r->vlen ? H5T_VARIABLE : r->fixed) >= 0 &&
                 ld__mul_size(r->vlen ? sizeof(char *) : r->fixed, NAMES_ROWS, &r->bytes),
             LD_ENOMEM, "%s: out of memory", s->path);
    r->raw = calloc(1, r->bytes);
    LD_CHECK(e, r->raw, LD_ENOMEM, "%s: out of memory", s->path);
fail:
    return rc;
}

/* Rows [first, first + cnt) into out as NUL-terminated names one after another; locked. */
static int names_block(h5_store *s, names_rd *r, uint64_t first, uint64_t cnt, ld_buf *out,
                       ld_err *e)
{
    int rc = LD_OK, ok = 1;
    out->len = 0;
    if (r->vlen) memset(r->raw, 0, r->bytes);
    LD_CHECK(e, read_rows(r->d, 1, r->dims, first, cnt, r->mt, H5P_DEFAULT, r->raw) >= 0,
             LD_EFORMAT, "%s: cannot read /filename rows %llu..%llu (corrupt or truncated file)",
             s->path, (unsigned long long)first, (unsigned long long)(first + cnt));
    for (uint64_t k = 0; k < cnt; k++) {
        const char *name = r->vlen ? ((char **)(void *)r->raw)[k] : r->raw + k * r->fixed;
        size_t len = name ? strnlen(name, r->vlen ? SIZE_MAX : r->fixed) : 0;
        while (len && name[len - 1] == ' ') /* space-padded fixed strings */
            len--;
        ok &= ld__buf_append(out, name ? name : "", len) == LD_OK &&
              ld__buf_append(out, "", 1) == LD_OK;
        if (r->vlen && name) H5free_memory((char *)name);
    }
    LD_CHECK(e, ok, LD_ENOMEM, "%s: out of memory", s->path);
fail:
    return rc;
}

static int h5_names(ld_store *st, ld_store_name_fn fn, void *user, ld_err *e)
{
    h5_store *s = (h5_store *)st;
    names_rd r = {.file = -1, .d = -1, .t = -1, .mt = -1};
    ld_buf blk = {0};
    ld_h5_quiet q;
    ld__h5_quiet_begin(&q);
    int rc = names_open(s, &r, e);
    ld__h5_quiet_end(&q);
    const uint64_t n = st->info.n;
    for (uint64_t first = 0; rc == LD_OK && first < n; first += NAMES_ROWS) {
        const uint64_t cnt = n - first < NAMES_ROWS ? n - first : NAMES_ROWS;
        ld__h5_quiet_begin(&q);
        rc = names_block(s, &r, first, cnt, &blk, e);
        ld__h5_quiet_end(&q);
        const char *p = (const char *)blk.p;
        for (uint64_t k = 0; rc == LD_OK && k < cnt; k++) {
            const size_t len = strlen(p);
            rc = fn(user, first + k, p, len);
            p += len + 1;
        }
    }
    ld__h5_quiet_begin(&q);
    names_close(&r);
    ld__h5_quiet_end(&q);
    ld__buf_free(&blk);
    return rc;
}

static const ld_store_vt h5_vt = {h5_ctx_create, h5_ctx_free, h5_read,        h5_will_read,
                                  h5_close,      h5_read_run, h5_read_gather, h5_label_vec,
                                  h5_mask,       h5_boxes,    h5_names};

/* ---- open ---------------------------------------------------------------------------------- */

/* Integer labels are read as 64-bit and must fit int32, libdata's label type: HDF5 would
 * clip 3000000000 to 2147483647 without a word. Floating point labels are kept as doubles;
 * the reader checks each against the label dtype it delivers. (N,) is one label per sample;
 * (N, K) label vectors (info.label_k = K): as libdata writes them (native float32 or int32,
 * chunks of whole rows, no filter) read per sample with one pread of the row through a chunk
 * map (8 bytes per chunk held), also from a merged file's parts (lab_vds); other tools'
 * (another type, deflate) held whole like one label, N x K x 8 bytes (floating point) or 4
 * (integers), in the memory budget. */
/* Detection boxes: /box_offsets (n + 1 nondecreasing row numbers from 0 to the rows of
 * /boxes (M, 4), /box_label (M,) and /box_flags (M,)), held; the three kept open. */
static int load_boxes(h5_store *s, hid_t file, uint64_t n, ld_err *e)
{
    int rc = LD_OK;
    hsize_t dims[4];
    int rank = 0;
    const char *names[3] = {LD_H5_DS_BOXES, LD_H5_DS_BOX_LABEL, LD_H5_DS_BOX_FLAGS};
    hid_t *ds[3] = {&s->box_ds, &s->box_label_ds, &s->box_flags_ds};
    hsize_t rows = 0;
    hid_t d = H5I_INVALID_HID;
    for (int k = 0; k < 3; k++) {
        LD_CHECK(e, link_exists(file, names[k]), LD_EFORMAT,
                 "%s: /%s without /%s: the boxes are incomplete (rewrite the file)", s->path,
                 LD_H5_DS_BOXES, names[k]);
        *ds[k] = H5Dopen2(file, names[k], H5P_DEFAULT);
        LD_CHECK(e, *ds[k] >= 0 && ld__h5_ds_dims(*ds[k], dims, &rank) == 0, LD_EFORMAT,
                 "%s: cannot open /%s", s->path, names[k]);
        LD_CHECK(e, rank == (k ? 1 : 2) && (k || dims[1] == 4) && (!k || dims[0] == rows),
                 LD_EFORMAT, "%s: /%s has the wrong shape (boxes (M, 4), labels and flags (M,))",
                 s->path, names[k]);
        rows = dims[0];
    }
    d = H5Dopen2(file, LD_H5_DS_BOX_OFFSETS, H5P_DEFAULT);
    LD_CHECK(e, d >= 0 && ld__h5_ds_dims(d, dims, &rank) == 0 && rank == 1 && dims[0] == n + 1,
             LD_EFORMAT, "%s: /%s must hold %llu entries (samples + 1)", s->path,
             LD_H5_DS_BOX_OFFSETS, (unsigned long long)n + 1);
    s->box_off = malloc((size_t)(n + 1) * sizeof *s->box_off);
    LD_CHECK(e, s->box_off, LD_ENOMEM, "%s: out of memory for %llu box offsets", s->path,
             (unsigned long long)n + 1);
    LD_CHECK(e, H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, s->box_off) >= 0,
             LD_EFORMAT, "%s: cannot read /%s (corrupt?)", s->path, LD_H5_DS_BOX_OFFSETS);
    for (uint64_t i = 0; i <= n; i++) /* every sample's rows inside /boxes, in order */
        LD_CHECK(e,
                 (i ? s->box_off[i] >= s->box_off[i - 1] : s->box_off[0] == 0) &&
                     (uint64_t)s->box_off[i] <= rows,
                 LD_EFORMAT, "%s: /%s entry %llu (%lld) is out of order or past the %llu boxes",
                 s->path, LD_H5_DS_BOX_OFFSETS, (unsigned long long)i, (long long)s->box_off[i],
                 (unsigned long long)rows);
    LD_CHECK(e, (uint64_t)s->box_off[n] == rows, LD_EFORMAT,
             "%s: /%s ends at %lld but /%s has %llu rows", s->path, LD_H5_DS_BOX_OFFSETS,
             (long long)s->box_off[n], LD_H5_DS_BOXES, (unsigned long long)rows);
    s->base.info.boxes = 1;
    for (uint64_t i = 0; i < n; i++) {
        const int64_t k = s->box_off[i + 1] - s->box_off[i];
        LD_CHECK(e, k <= UINT32_MAX, LD_EFORMAT, "%s: sample %llu has %lld boxes (corrupt?)",
                 s->path, (unsigned long long)i, (long long)k);
        if ((uint32_t)k > s->base.info.box_max) s->base.info.box_max = (uint32_t)k;
    }
    s->base.info.store_bytes += (size_t)(n + 1) * sizeof *s->box_off;
fail:
    if (d >= 0) H5Dclose(d);
    return rc;
}

/* Segmentation masks: dataset `name` of shape (N, 1, H, W) and an unsigned 8 or 16-bit integer
 * type, read per sample directly (msk_map; a merged file's parts: msk_vds) or, when its layout
 * needs HDF5 (filters, other chunk shapes, big-endian uint16), through msk_ds. */
static int load_masks(h5_store *s, hid_t file, const char *name, uint64_t n, ld_err *e)
{
    int rc = LD_OK;
    hsize_t *dims = s->msk_dims;
    int rank = 0;
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT), t = -1;
    LD_CHECK(e, d >= 0 && ld__h5_ds_dims(d, dims, &rank) == 0, LD_EFORMAT,
             "%s: cannot open the mask dataset '/%s'", s->path, name);
    t = H5Dget_type(d);
    const size_t elem = t >= 0 && H5Tget_class(t) == H5T_INTEGER ? H5Tget_size(t) : 0;
    LD_CHECK(e,
             rank == 4 && dims[1] == 1 && dims[2] >= 1 && dims[2] <= 65535 && dims[3] >= 1 &&
                 dims[3] <= 65535 && (elem == 1 || (elem == 2 && H5Tget_sign(t) == H5T_SGN_NONE)),
             LD_EFORMAT,
             "%s: mask dataset '/%s' must be uint8 or uint16 of shape (N, 1, H, W) (class "
             "indices; H and W at most 65535)",
             s->path, name);
    LD_CHECK(e, dims[0] == n, LD_EFORMAT,
             "%s: mask dataset '/%s' has %llu masks but the pixel dataset has %llu samples (the "
             "file is incomplete or was made wrongly; rewrite it)",
             s->path, name, (unsigned long long)dims[0], (unsigned long long)n);
    /* the file's bytes are the host's (little-endian) uint16 only when its order says so */
    const int as_stored = elem == 1 || H5Tget_order(t) == H5T_ORDER_LE;
    const size_t row = (size_t)dims[2] * (size_t)dims[3] * elem;
    const int dr =
        !as_stored ? 0
        : ld__h5_is_virtual(d)
            ? ld__h5_vds_resolve(s, d, name, 4, dims, row, 1, -1, NULL, &s->msk_vds, e)
            : ld__h5_build_direct(s->path, s->file_size, d, 4, dims, row, &s->msk_map, e);
    LD_TRY(dr < 0 ? dr : LD_OK);
    if (dr == 1) {
        s->base.info.store_bytes +=
            (size_t)s->msk_map.nchunks * sizeof(uint64_t) + ld__h5_vds_bytes(&s->msk_vds);
        if (s->msk_vds.n) s->msk_vds.fd_cap = s->msk_vds.fd_cap / 4 < 4 ? 4 : s->msk_vds.fd_cap / 4;
    } else {
        s->msk_ds = d; /* read through HDF5 */
        d = -1;
    }
    s->base.info.mask_elem = (int)elem;
    s->base.info.mask_h = (int)dims[2];
    s->base.info.mask_w = (int)dims[3];
fail:
    if (t >= 0) H5Tclose(t);
    if (d >= 0) H5Dclose(d);
    return rc;
}

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
    LD_CHECK(e, d >= 0 && ld__h5_ds_dims(d, dims, &rank) == 0, LD_EFORMAT,
             "%s: cannot open label dataset '/%s'", s->path, name);
    LD_CHECK(e, rank == 1 || (rank == 2 && dims[1] >= 1 && dims[1] <= LD_MAX_LABEL_K), LD_EFORMAT,
             "%s: label dataset '/%s' must have shape (N,) (one number per sample) or (N, K) "
             "(label vectors, 1 <= K <= %d)",
             s->path, name, LD_MAX_LABEL_K);
    const uint64_t k = rank == 2 ? dims[1] : 1;
    s->base.info.label_k = rank == 2 ? (uint32_t)k : 0;
    uint64_t nv; /* values */
    LD_CHECK(e, !__builtin_mul_overflow(n, k, &nv) && nv < SIZE_MAX / 8, LD_ELIMIT,
             "%s: label dataset '/%s' (%llu x %llu) does not fit this machine's memory", s->path,
             name, (unsigned long long)n, (unsigned long long)k);
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
    if (rank == 2 && (H5Tequal(t, H5T_NATIVE_FLOAT) > 0 || H5Tequal(t, H5T_NATIVE_INT32) > 0)) {
        /* label vectors as libdata writes them, in one file or a merged file's parts: read
         * per sample, nothing held */
        const int dr = ld__h5_is_virtual(d) ? ld__h5_vds_resolve(s, d, name, 2, dims, (size_t)k * 4,
                                                                 1, -1, NULL, &s->lab_vds, e)
                                            : ld__h5_build_direct(s->path, s->file_size, d, 2, dims,
                                                                  (size_t)k * 4, &s->lab_map, e);
        LD_TRY(dr < 0 ? dr : LD_OK);
        if (dr == 1) {
            s->lab_map_float = cl == H5T_FLOAT;
            s->base.info.label_float = cl == H5T_FLOAT;
            s->base.info.store_bytes +=
                (size_t)s->lab_map.nchunks * sizeof(uint64_t) + ld__h5_vds_bytes(&s->lab_vds);
            s->base.info.ctx_bytes += (size_t)k * 4;
            /* the pixels' parts keep most of the descriptors the process may open */
            if (s->lab_vds.n)
                s->lab_vds.fd_cap = s->lab_vds.fd_cap / 4 < 4 ? 4 : s->lab_vds.fd_cap / 4;
            goto fail; /* (done) */
        }
    }
    wide = malloc((size_t)(nv ? nv : 1) * 8);
    if (cl == H5T_FLOAT) {
        s->lab_f = wide;
        wide = NULL;
        s->base.info.label_float = 1;
    } else {
        s->lab_i = malloc((size_t)(nv ? nv : 1) * 4);
    }
    LD_CHECK(e, (s->lab_f || wide) && (s->lab_f || s->lab_i), LD_ENOMEM,
             "%s: out of memory for %llu labels", s->path, (unsigned long long)n);
    hid_t mt = s->lab_f ? H5T_NATIVE_DOUBLE : is_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
    void *into = s->lab_f ? (void *)s->lab_f : wide;
    /* a merged file: every part checked against its mapping, and read one after the other */
    const int by_parts =
        ld__h5_vds_resolve(s, d, name, rank, dims, 0, 0, mt, n ? into : NULL, &s->vds, e);
    LD_TRY(by_parts);
    rc = LD_OK;
    if (n && !by_parts)
        LD_CHECK(e, H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, into) >= 0, LD_EFORMAT,
                 "%s: cannot read labels '/%s' (corrupt?)", s->path, name);
    if (s->lab_i) {
        /* every label must fit: report the whole range so the user sees what the file holds */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        uint64_t bad = UINT64_MAX, uhi = 0;
        for (uint64_t k = 0; k < nv; k++) {
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
                         s->path, name, range, (unsigned long long)(bad / k));
            goto fail;
        }
    }
    s->base.info.store_bytes += (size_t)(nv ? nv : 1) * (s->lab_f ? 8 : 4);
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
    LD_CHECK(e, ld__h5_ds_dims(s->dset, dims, &rank) == 0 && rank >= 2, LD_EFORMAT,
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
    LD_CHECK(e, in->c > 0 && in->h > 0 && in->w > 0, LD_EFORMAT,
             "%s: dataset '/%s' has empty samples (a dimension after N is 0)", s->path, name);
    t = H5Dget_type(s->dset);
    H5T_class_t cl = H5Tget_class(t);
    LD_CHECK(e, cl == H5T_INTEGER || cl == H5T_FLOAT, LD_EFORMAT,
             "%s: dataset '/%s' is not numeric", s->path, name);
    int is_u8 = cl == H5T_INTEGER && H5Tget_size(t) == 1 && H5Tget_sign(t) == H5T_SGN_NONE;
    int is_f32 = cl == H5T_FLOAT && H5Tequal(t, H5T_NATIVE_FLOAT) > 0;
    /* uint16 (dataconv --depth 16): as stored when little-endian, else converted by HDF5 */
    const int is_u16 = cl == H5T_INTEGER && H5Tget_size(t) == 2 && H5Tget_sign(t) == H5T_SGN_NONE;
    const int u16_le = is_u16 && H5Tget_order(t) == H5T_ORDER_LE;
    in->dtype = is_u8 ? LD_SDT_U8 : is_u16 ? LD_SDT_U16 : LD_SDT_F32;
    s->memtype = is_u8 ? H5T_NATIVE_UINT8 : is_u16 ? H5T_NATIVE_UINT16 : H5T_NATIVE_FLOAT;
    if (!is_u8 && !is_f32 && !is_u16) { /* HDF5 converts: make any inexact value an error */
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
                 ld__mul_size(px,
                              is_u8    ? 1
                              : is_u16 ? 2
                                       : 4,
                              &in->sample_bytes),
             LD_EFORMAT, "%s: sample size overflows", s->path);
    in->block = 1;
    const int virt = ld__h5_is_virtual(s->dset); /* (each look copies all of a VDS's mappings) */
    if (virt) {
        int d = ld__h5_vds_resolve(s, s->dset, name, rank, dims, in->sample_bytes,
                                   is_u8 || is_f32 || u16_le, -1, NULL, &s->vds, e);
        LD_TRY(d);
        s->direct = d;
        rc = LD_OK;
    } else if (is_u8 || is_f32 || u16_le) {
        int d = ld__h5_build_direct(s->path, s->file_size, s->dset, rank, dims, in->sample_bytes,
                                    &s->map, e);
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
    s->base.info.store_bytes += s->map.nchunks * 8 + ld__h5_vds_bytes(&s->vds);
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

static int open_encoded(h5_store *s, hid_t file, const char *name, const ld_desc *rd, ld_err *e)
{
    int rc = LD_OK;
    hid_t d = -1, t = -1;
    hsize_t dims[4], odims[4];
    int rank = 0, orank = 0;
    uint32_t *shp = NULL;
    ld_store_info *in = &s->base.info;
    in->encoded = 1;
    s->dset = H5Dopen2(file, name, H5P_DEFAULT);
    LD_CHECK(e, s->dset >= 0 && ld__h5_ds_dims(s->dset, dims, &rank) == 0 && rank == 1, LD_EFORMAT,
             "%s: encoded dataset '/%s' must be 1-D uint8", s->path, name);
    t = H5Dget_type(s->dset);
    LD_CHECK(e, H5Tget_class(t) == H5T_INTEGER && H5Tget_size(t) == 1, LD_EFORMAT,
             "%s: encoded dataset '/%s' must be 1-D uint8", s->path, name);
    s->enc_len = dims[0];
    d = H5Dopen2(file, LD_H5_DS_OFFSETS, H5P_DEFAULT);
    LD_CHECK(e, d >= 0 && ld__h5_ds_dims(d, odims, &orank) == 0 && orank == 1 && odims[0] >= 1,
             LD_EFORMAT, "%s: encoded file without a valid '/%s' dataset", s->path,
             LD_H5_DS_OFFSETS);
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
    int c = rd->channels, h = rd->height, w = rd->width;
    if (c > 0 && h > 0 && w > 0) in->max_pixels = (uint64_t)h * (uint64_t)w;
    if (link_exists(file, LD_H5_DS_SHAPE) && in->n && (c <= 0 || h <= 0 || w <= 0)) {
        hid_t sd = H5Dopen2(file, LD_H5_DS_SHAPE, H5P_DEFAULT);
        hsize_t sdims[4];
        int srank = 0;
        if (sd >= 0 && ld__h5_ds_dims(sd, sdims, &srank) == 0 && srank == 2 && sdims[1] == 3 &&
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
    const int virt = ld__h5_is_virtual(s->dset);
    {
        hsize_t one[4] = {s->enc_len};
        int dr = virt ? ld__h5_vds_resolve(s, s->dset, name, 1, one, 1, 1, -1, NULL, &s->vds, e)
                      : ld__h5_build_direct(s->path, s->file_size, s->dset, 1, one, 1, &s->map, e);
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
    in->store_bytes += s->map.nchunks * 8 + ld__h5_vds_bytes(&s->vds);
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
    ld_desc rd; /* the file's records (desc.h) */
    memset(&rd, 0, sizeof rd);
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
    LD_CHECK(e, ld__h5_desc_records(s->file, &rd) == LD_OK, LD_ENOMEM, "%s: out of memory",
             s->path);
    snprintf(s->run_id, sizeof s->run_id, "%s", rd.run_id ? rd.run_id : "");
    const char *storage = rd.storage ? rd.storage : "";
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
        LD_TRY(open_encoded(s, s->file, dname, &rd, e));
    else
        LD_TRY(open_raw(s, s->file, dname, e));
    if (s->direct) { /* read directly: HDF5's view of the pixels (a VDS: all its mappings) */
        H5Dclose(s->dset);
        s->dset = -1;
    }
    /* masks: /mask beside the labels, or /label itself when it is (N, 1, H, W) */
    hsize_t ld_dims[4];
    int ld_rank = 0;
    hid_t ld_ds = link_exists(s->file, lname) ? H5Dopen2(s->file, lname, H5P_DEFAULT) : -1;
    if (ld_ds >= 0 && ld__h5_ds_dims(ld_ds, ld_dims, &ld_rank) < 0) ld_rank = 0;
    if (ld_ds >= 0) H5Dclose(ld_ds);
    if (ld_rank == 4) {
        LD_TRY(load_masks(s, s->file, lname, s->base.info.n, e));
        s->base.info.mask_is_label = 1;
    } else if (ld_ds >= 0 || !link_exists(s->file, LD_H5_DS_BOXES)) { /* (a detection dataset */
        LD_TRY(load_labels(s, s->file, lname, s->base.info.n, e));    /* has boxes, no labels) */
    }
    if (ld_rank != 4 && link_exists(s->file, LD_H5_DS_MASK))
        LD_TRY(load_masks(s, s->file, LD_H5_DS_MASK, s->base.info.n, e));
    if (link_exists(s->file, LD_H5_DS_BOXES)) LD_TRY(load_boxes(s, s->file, s->base.info.n, e));
    if (rd.channel_order) {
        const char *order = rd.channel_order;
        int o = !strcmp(order, LD_H5_ORDER_BGR)    ? LD_SORDER_BGR
                : !strcmp(order, LD_H5_ORDER_RGB)  ? LD_SORDER_RGB
                : !strcmp(order, LD_H5_ORDER_GRAY) ? LD_SORDER_GRAY
                                                   : LD_SORDER_UNKNOWN;
        if (encoded)
            s->base.info.made_order = o; /* the decoder gives RGB; the file says what to give */
        else
            s->base.info.order = o;
    }
    if (s->direct && s->msk_ds < 0 && s->box_ds < 0) { /* nothing more to ask HDF5 */
        H5Fclose(s->file);
        s->file = -1;
    }
fail:
    ld__desc_free(&rd);
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
    s->file = s->dset = s->msk_ds = s->box_ds = s->box_label_ds = s->box_flags_ds = -1;
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
