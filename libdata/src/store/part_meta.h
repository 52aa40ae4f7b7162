/*
 * Reading back what a shard part says about itself (h5_format.h, "Shards"): its identity
 * (K, N, first, listed, L, run_id) and whether it is complete, from the root attributes of an
 * HDF5 part or the libdata.json sidecar of an LMDB part. The converter uses it to resume (skip
 * a part that exists complete with the same run_id, refuse one from another run).
 */
#ifndef LD_PART_META_H
#define LD_PART_META_H

#include "store/desc.h"

/* Read the part at `path` (an HDF5 file, or with `lmdb` an LMDB directory) into *d (desc.h;
 * free it with ld__desc_free in every case).
 * LD_OK: a complete libdata dataset (every dataset / record count consistent; d->samples its
 *        samples; d->shard_count 0 when it has no shard attributes).
 * LD_END: nothing exists at `path`.
 * LD_EFORMAT: something exists but is not a complete libdata dataset (truncated, another
 *        tool's, a stray file, damaged shard records); the message says what is wrong.
 * LD_EIO, LD_ENOMEM, LD_ENOTSUP (format not built). */
int ld__part_read(const char *path, int lmdb, ld_desc *d, ld_err *e);

#endif /* LD_PART_META_H */
