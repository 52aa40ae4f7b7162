/*
 * The LMDB store: read side of Caffe Datum databases, ours (lmdb_write.c) and those made by
 * Caffe's convert_imageset (raw or encoded records). It implements the ld_store vtable of
 * store.h; ld__lmdb_store_open() is declared there.
 *
 * Opening: `path` is an LMDB directory (data.mdb + lock.mdb) or a data.mdb file. The
 * environment is opened read-only with MDB_NOTLS (a context is created on the reader's thread
 * and used on a worker) and, for random access, MDB_NORDAHEAD. If the lock file cannot be
 * opened (read-only media, no write permission) it is opened again with MDB_NOLOCK, which is
 * safe as long as no process writes the database meanwhile.
 *
 * What open checks: the first record, when there is one, parses and validates (raw:
 * channels*height*width == data length, every dimension within LD_DATUM_MAX_*; encoded: has
 * bytes). An empty database opens with n = 0 (describe reports it; the reader refuses it).
 * The first record fixes info: raw stores give every sample's shape (a raw record of a
 * different shape later is LD_EFORMAT naming its key). Encoded stores give every sample's
 * c/h/w when our sidecar says they share one; otherwise the first record's (info.shape_from
 * says so): from its Datum channels/height/width when set (ours), else from its image header
 * (convert_imageset --encoded sets none of them), with the channels of the sidecar, else of
 * the record, else of the file (1 for a gray JPEG/PNG, else 3, as Caffe decodes them).
 * read() gives each record's Datum channels/height/width (0 for convert_imageset's encoded
 * records); the reader finds a record of another size when it decodes it. dtype is U8 for
 * `data` bytes and F32 for `float_data`. Order: the sidecar's channel_order; without one,
 * BGR for 3-channel raw records (convert_imageset stores OpenCV's BGR), GRAY for 1 channel,
 * RGB for encoded records (our codec decodes to RGB).
 *
 * Index -> record: record i is the i-th in key order, as Caffe's Data layer reads them,
 * whatever the keys look like (convert_imageset leaves gaps in its "%08d_" numbering when it
 * skips unreadable images; other tools use file names). At open the store walks the tree once
 * (or, for a database our writer made, reads the index it saved: lmdb_index.h) and keeps each
 * value's offset and size in data.mdb (12 bytes per record, counted in
 * info.store_bytes), inside a read transaction it holds until close, so a writer in another
 * process never reuses those pages meanwhile: the store reads the snapshot it opened. Reads
 * are one pread() of the value and advice is posix_fadvise(); nothing reads through LMDB's
 * map after open, so resident memory does not grow with the database however the page cache
 * holds it (see LD_LMDB_DROP_EVERY in lmdb_store.c), and a file truncated under the reader is
 * an error, not SIGBUS. A tree LMDB cannot walk, or one that holds another number of records
 * than its header says, fails the open (LD_EFORMAT / LD_EIO); a value outside the file fails
 * the read of that record.
 *
 * Records are returned as borrowed pointers into the context's buffer, valid until the next
 * read on the same context; float_data records are converted into the context's scratch.
 * Every malformed record is LD_EFORMAT with a message naming the database and the key (looked
 * up only then: one MDB_SET_RANGE when the keys are numbered "%08d_" 0..N-1, else a scan).
 *
 * Limits: the whole data.mdb is mapped, so a database larger than the address space (32-bit)
 * cannot be opened; LMDB files are not portable between 32- and 64-bit builds.
 */
#ifndef LD_LMDB_STORE_H
#define LD_LMDB_STORE_H

#include "common/ld_internal.h"

/* The sidecar file inside the LMDB directory: class names and settings, one JSON key per
 * line (written by lmdb_write.c). Caffe ignores files other than data.mdb/lock.mdb. */
#define LD_LMDB_SIDECAR "libdata.json"
/* The saved record index beside data.mdb (lmdb_index.h) */
#define LD_LMDB_INDEX "libdata.idx"

/* Read the sidecar of an LMDB directory into `out` (NUL-terminated). LD_OK, LD_END when there
 * is none (not an error), LD_EIO. */
int ld__lmdb_sidecar_read(const char *dir, ld_buf *out, ld_err *e);

/* Find `"key": ` at the start of a line of sidecar text; returns a pointer to the value (up to
 * the end of the line) or NULL. */
const char *ld__lmdb_sidecar_value(const char *text, const char *key);

/* The saved record index (lmdb_index.h): open the finished database in directory `dir` with
 * the store, which walks it as the reader does, and write dir/libdata.idx from that walk, for
 * the writer, before it publishes `dir` as `out`. None for an empty database, nor for one the
 * store does not open (the reader's open will say why): LD_OK. LD_EIO / LD_ENOMEM when the
 * file cannot be written (then there is none). */
int ld__lmdb_index_save(const char *dir, const char *out, ld_err *e);

/* Record an LMDB failure: "<path>: <what>: <LMDB's text for m>", LD_ENOMEM for ENOMEM, else
 * LD_EIO. Returns that code. The one LMDB error helper of the store and the writer. */
int ld__mdb_err(ld_err *e, int m, const char *path, const char *what);

/* Drop from this process's address space the pages of env's shared data.mdb map (they stay in
 * the page cache; LMDB faults them back when needed), so that resident memory does not grow
 * with the database while writing or merging. Call between transactions. Linux only; a no-op
 * elsewhere (lmdb_write.c). */
struct MDB_env;
void ld__lmdb_drop_pages(struct MDB_env *env);

/* Visit up to `max` records in key order with one cursor (MDB_NEXT: sequential pages, no
 * tree descent per record), for describe and tools that need every record once. Each record
 * is decoded and validated (float_data only counted, not copied); `fn` gets the Datum, or
 * d == NULL and the reason in `bad` for a malformed record (the scan goes on). `name` is
 * "<path>: key '<key>'". fn returns nonzero to stop. LD_OK, LD_EIO, LD_ENOMEM. */
struct ld_store;
struct ld_datum;
typedef int (*ld_lmdb_scan_fn)(void *user, uint64_t i, const struct ld_datum *d, const char *name,
                               const char *bad);
int ld__lmdb_scan(struct ld_store *s, uint64_t max, ld_lmdb_scan_fn fn, void *user, ld_err *e);

#endif /* LD_LMDB_STORE_H */
