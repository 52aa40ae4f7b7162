/*
 * The saved record index: "libdata.idx" beside data.mdb, written by our LMDB writer when it
 * publishes a database (lmdb_write.c: conversions, shard parts, merge, the label and mask
 * databases), so that the store need not walk every record at open (lmdb_store.c: the walk
 * of 1.28 M records took 2.4-6 s, most of it reading the leaf pages from disk when cold).
 *
 * The file holds exactly what the walk gives, made by the walk itself: the writer opens the
 * finished database with the store, which walks it, and saves the result. It is used only
 * for the snapshot it was made from; anything else (another tool's write, a copy of another
 * database's data.mdb, a truncated or damaged file, another version) makes the store walk as
 * before, saying why in info.how. Caffe and other tools ignore the file.
 *
 * Format, version 1, every integer little-endian:
 *   off  size
 *     0     8  magic "LDLMDBIX"
 *     8     4  version (1)
 *    12     4  header size (96): the arrays start there
 *    16     8  n: records (the main database's ms_entries)
 *    24     8  the snapshot's transaction id (mdb_txn_id of the read transaction walked)
 *    32     8  its last page number (MDB_envinfo.me_last_pgno)
 *    40     8  data.mdb's size in bytes
 *    48     4  page size
 *    52     4  maxlen: the largest value in bytes (the largest len below other than BAD)
 *    56     4  flags: bit 0 = keyed (keys are "%08d_" of 0..n-1)
 *    60     4  tree depth (MDB_stat.ms_depth)
 *    64     8  branch pages   72  8  leaf pages   80  8  overflow pages (MDB_stat)
 *    88     8  zero
 *    96   8 n  off[i]: where record i's value starts in data.mdb
 *  +8 n   4 n  len[i]: its size, or LD_LMDB_BAD (0xffffffff, with off 0) when the walk found
 *              it outside the file (a corrupt database: the read of that record fails)
 *  +12 n    4  CRC-32 (zlib's polynomial and conventions) of every byte before it
 * Size: 100 + 12 n bytes (15 MiB for ImageNet's 1,281,167 records).
 */
#ifndef LD_LMDB_INDEX_H
#define LD_LMDB_INDEX_H

#include "common/ld_internal.h"

#include "store/lmdb/lmdb_store.h" /* LD_LMDB_INDEX, the file's name */

#define LD_LMDB_INDEX_VERSION 1

/* index.len of a record whose value does not lie inside data.mdb (a corrupt database): its
 * read is LD_EFORMAT. */
#define LD_LMDB_BAD UINT32_MAX

/* What identifies the snapshot an index belongs to. */
typedef struct ld_lmdb_snap {
    uint64_t n, txnid, last_pgno, fsize;
    uint64_t branch, leaf, overflow;
    uint32_t psize, depth;
} ld_lmdb_snap;

/* Write dir/libdata.idx for snapshot `id` and its n offsets and sizes (synced). LD_OK,
 * LD_ENOMEM, LD_EIO (the file is removed then; a full disk or the file size limit is said as
 * such, naming `out`, the output dir becomes). */
int ld__lmdb_index_write(const char *dir, const char *out, const ld_lmdb_snap *id,
                         const uint64_t *off, const uint32_t *len, uint32_t maxlen, int keyed,
                         ld_err *e);

/* Read dir/libdata.idx into off[want->n] and len[want->n] (the caller's arrays) when it was
 * made for snapshot `want`, its CRC holds and every value lies inside data.mdb; sets *maxlen
 * and *keyed. LD_OK; LD_END: there is none; LD_EFORMAT: it is not for this snapshot, damaged
 * or of another version, LD_EIO: unreadable -- then `why` (cap bytes) says so, and off/len hold
 * garbage. Reads with pread; maps nothing. */
int ld__lmdb_index_read(const char *dir, const ld_lmdb_snap *want, uint64_t *off, uint32_t *len,
                        uint32_t *maxlen, int *keyed, char *why, size_t cap);

#endif /* LD_LMDB_INDEX_H */
