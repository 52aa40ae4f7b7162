/*
 * libdata shards: the parts of a conversion cut into N runs (LD_C_SHARD_INDEX /
 * LD_C_SHARD_COUNT, `dataconv --shard K/N`): the name of each part, and the merge of the parts
 * into one dataset. Included by convert.h.
 */
#ifndef LIBDATA_SHARD_H
#define LIBDATA_SHARD_H

#include "libdata.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Merge the parts of a sharded conversion (`dataconv SRC OUT --shard K/N`, which writes
 * `OUT-KKKKK-of-NNNNN.h5` or `.lmdb`) into the one dataset `output`, written atomically
 * (temporary beside it, renamed when complete; nothing under `output` on failure).
 *
 * HDF5 (`output` not ending in .lmdb, parts are files): a small file whose /data, /label,
 * /filename (raw) or /encoded, /shape, /label, /filename (encoded) are virtual datasets
 * mapping the parts in order, by paths relative to `output`'s folder when the parts are in it
 * or below it (the folder can be moved as a whole), else absolute; /offsets (encoded) is a
 * real dataset, each part's offsets shifted by the bytes before it. The parts must stay: the
 * merged file holds no sample data. LMDB (`output` ending in .lmdb, or the parts are
 * directories): the records are copied in order into one database (MDB_APPEND, commits in
 * batches: memory bounded), with the keys and sidecar a single run would have written.
 * The on-disk contract is in libdata/src/store/hdf5/h5_format.h. Memory does not grow with the
 * number of samples.
 *
 * @param output   the merged dataset; must not be one of the parts.
 * @param parts    the part files or directories, in any order; NULL with nparts 0 = every
 *                 `<output stem>-*-of-*<ext>` beside `output`.
 * @param log      called with what was found and done (LD_LOG_INFO) and removed
 *                 temporaries of killed runs (LD_LOG_WARN); NULL = silent. Runs on the
 *                 calling thread.
 * @param errmsg   on failure, a message naming the file and the reason, and what to do
 *                 (release with ld_free()); NULL on success. May be NULL.
 * @return LD_OK; LD_EINVAL when the parts do not belong together (a part missing, given
 *         twice or of another N, from another run, with other settings or class names, a
 *         file whose name says another K/N than its attributes, `output` is a part);
 *         LD_EFORMAT for a part that is not a valid dataset (truncated, not a shard);
 *         LD_EIO, LD_ENOMEM, LD_ENOTSUP (format not built). Thread-safe: no shared state
 *         (HDF5 calls take the library's HDF5 lock).
 */
LD_API int ld_merge(const char *output, const char *const *parts, size_t nparts, ld_log_fn log,
                    void *log_user, char **errmsg);

/**
 * The file (or LMDB directory) a shard run writes for `output`: "-KKKKK-of-NNNNN" (five
 * digits each, K 0-based) goes before a final .h5, .hdf5 or .lmdb (any case), else at the end;
 * trailing '/' are dropped: "out.h5", 2, 8 -> "out-00002-of-00008.h5"; "db/" ->
 * "db-00002-of-00008".
 * @param name receives the name (release with ld_free()); NULL on failure.
 * @return LD_OK, LD_EINVAL (no output, shard_count outside 1..99999, shard_index outside
 *         0..shard_count-1), LD_ENOMEM. Thread-safe.
 */
LD_API int ld_shard_part_name(const char *output, int shard_index, int shard_count, char **name);

#ifdef __cplusplus
}
#endif
#endif /* LIBDATA_SHARD_H */
