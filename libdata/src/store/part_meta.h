/*
 * Reading back what a shard part says about itself (h5_format.h, "Shards"): its identity
 * (K, N, first, listed, L, run_id) and whether it is complete, from the root attributes of an
 * HDF5 part or the libdata.json sidecar of an LMDB part. The converter uses it to resume (skip
 * a part that exists complete with the same run_id, refuse one from another run).
 */
#ifndef LD_PART_META_H
#define LD_PART_META_H

#include "store/writer.h"

typedef struct ld_part_meta {
    ld_shard_info shard; /* count == 0: the dataset has no shard attributes */
    uint64_t samples;    /* samples the dataset holds */
    /* settings recorded with the dataset, to say what differs from a new run */
    char storage[16];       /* "raw" | "encoded" */
    char resize_mode[16];   /* "none" | "squash" | ... */
    char channel_order[16]; /* "BGR" | "RGB" | "GRAY" */
    int32_t quality, resize_w, resize_h, num_classes;
} ld_part_meta;

/* Read the part at `path` (an HDF5 file, or with `lmdb` an LMDB directory).
 * LD_OK: a complete libdata dataset (every dataset / record count consistent; `m` filled;
 *        m->shard.count is 0 when it has no shard attributes).
 * LD_END: nothing exists at `path`.
 * LD_EFORMAT: something exists but is not a complete libdata dataset (truncated, another
 *        tool's, a stray file); the message says what is wrong.
 * LD_EIO, LD_ENOMEM, LD_ENOTSUP (format not built). */
int ld__part_meta_read(const char *path, int lmdb, ld_part_meta *m, ld_err *e);

#endif /* LD_PART_META_H */
