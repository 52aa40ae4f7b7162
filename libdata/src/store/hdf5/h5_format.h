/*
 * The libdata HDF5 layout: dataset and attribute names, values and sizes shared by the
 * writer (h5_write.c), the describer (h5_describe.c) and the reader (h5_store.c).
 *
 * Format "libdata", version 1. Every name lives at the root group "/".
 *
 * Raw storage (LD_H5_STORAGE_RAW):
 *   /data      uint8  (N, C, H, W)  chunked along N only: chunk = (k, C, H, W) with
 *                                   k = max(1, floor(LD_H5_CHUNK_BYTES / (C*H*W))),
 *                                   maxdims (unlimited, C, H, W); no filter unless deflate.
 *   /label     int32  (N,)          chunked (LD_H5_LABEL_CHUNK), maxdims unlimited; label
 *              vectors (list mode, K values per line): float32 (or int32) (N, K), chunk
 *              (min(LD_H5_LABEL_CHUNK, 65536 / (4 K)), K)
 *   /filename  vlen UTF-8 string (N,)  the sample's path relative to the input root,
 *                                   chunked (LD_H5_NAME_CHUNK), maxdims unlimited
 *
 * Encoded storage (LD_H5_STORAGE_ENCODED):
 *   /encoded   uint8  (total_bytes,)  all samples' image file bytes concatenated,
 *                                   1-D, chunk LD_H5_CHUNK_BYTES (less, in 4 KiB steps, when
 *                                   the data is smaller), maxdims unlimited
 *   /offsets   uint64 (N+1,)        sample i is encoded[offsets[i] : offsets[i+1]]
 *   /shape     uint32 (N, 3)        (c, h, w) of each sample (decoded shape)
 *   /label, /filename as above.
 *
 * Root attributes (scalars of fixed-width types: int32 little-endian for numbers, never a
 * native long; strings are scalar variable-length UTF-8 strings, as h5py writes them, so that
 * h5py returns `str`; class_names is a 1-D array of variable-length UTF-8 strings). A reader
 * should also accept fixed-length strings (files from other tools):
 *   format="libdata"  format_version=1 (int32)  storage="raw"|"encoded"
 *   encoding="jpeg"|"png"|"original"  (encoded only)
 *   channel_order="BGR"|"RGB"|"GRAY"  layout="NCHW"
 *   channels, height, width (int32; height/width 0 when samples vary in size)
 *   class_names (vlen str array, may be empty), num_classes (int32)
 *   label_names (vlen str array; label vectors with named values only: a CSV header)
 *   quality (int32), resize_mode="squash"|"crop"|"pad"|"max"|"none", resize_w, resize_h (int32)
 *   source, note, tool_version (strings)
 *
 * The records shared with LMDB's sidecar (every attribute above but format, format_version,
 * layout, tool_version and class_names) are one table, store/desc.c; h5_desc.c reads and
 * writes them. Files use the HDF5 1.8 file format (object headers with checksums: a damaged
 * header is refused at open), which HDF5 1.8 and later read.
 *
 * Files made by other tools have no "format" attribute; the reader then looks for
 * `data`/`label` datasets of any chunking/type.
 *
 * Split output (--split): "<stem>-00000.h5", "<stem>-00001.h5", ... each a complete file in
 * the layout above, plus "<stem>.txt" listing them one per line (Caffe HDF5Data `source`).
 *
 * Shards (LD_C_SHARD_INDEX K, LD_C_SHARD_COUNT N; dataconv --shard K/N), the contract between
 * the sharded converter, `dataconv merge` and the reader of merged files:
 *  - Part names: K is 0-based (0 <= K < N <= LD_SHARD_MAX). LD_SHARD_NAME_FMT goes before a
 *    final .h5 / .hdf5 / .lmdb (any case; trailing '/' of a directory dropped), else at the
 *    end: "out.h5" -> "out-00002-of-00008.h5", "out.lmdb" -> "out-00002-of-00008.lmdb",
 *    "db/" -> "db-00002-of-00008" (ld_shard_part_name()).
 *  - Selection: every part lists the WHOLE input (class names and labels come from the whole
 *    listing, sorted, or shuffled with the seed over the whole listing); of the L listed
 *    samples part K takes the contiguous range [floor(K*L/N), floor((K+1)*L/N)). Skipped bad
 *    files leave a part with fewer samples than it listed; a part may hold 0 samples.
 *  - /filename is fixed-length of the longest relative path of the whole listing, so every
 *    part (and a single run) has the same string type.
 *  - HDF5 part = a normal libdata file plus these root attributes (LD_H5_ATTR_SHARD_*):
 *      shard_index   int32  K
 *      shard_count   int32  N
 *      shard_first   int64  index in the whole listing of the part's first listed sample
 *      shard_listed  int64  listed samples in this part (including ones skipped as bad)
 *      listing_total int64  L
 *      run_id        string 16 lowercase hex digits: FNV-1a 64 over every setting that changes
 *                           the output's samples (convert/shard.c lists them), N, L, the class
 *                           names and the listed relative paths and labels in order. Same
 *                           command on the same input -> same run_id; any difference -> another.
 *    The "note" attribute (dataconv's command line) leaves out --shard, so that the parts of
 *    one run carry the same note.
 *  - LMDB part = a normal libdata LMDB whose libdata.json sidecar has the same six keys
 *    ("shard_index": 2, ..., "run_id": "0123456789abcdef"). Its keys are "%08d_<rel>"
 *    numbered from 0 within the part, like any libdata LMDB (a part is a valid database by
 *    itself); a merge renumbers them: merged key = "%08d" of the record's index in the merged
 *    database + the part key from its first '_' on. That is the single run's key.
 *  - Resume: a run whose part already exists as a complete part with the same K, N and run_id
 *    does nothing (ld_progress.resumed); a part under that name from another run is refused.
 * Merged files (`dataconv merge`) are described with the merge code.
 */
#ifndef LD_H5_FORMAT_H
#define LD_H5_FORMAT_H

#define LD_H5_FORMAT_NAME "libdata"
#define LD_H5_FORMAT_VERSION 1

/* datasets */
#define LD_H5_DS_DATA "data"   /* raw pixels */
#define LD_H5_DS_LABEL "label" /* (N,) or (N, K); (N, 1, H, W) uint8: masks as the label */
#define LD_H5_DS_MASK "mask"   /* (N, 1, H, W) uint8 segmentation masks beside class labels */
/* detection boxes (ragged): sample i's are rows box_offsets[i] .. box_offsets[i + 1] - 1 */
#define LD_H5_DS_BOXES "boxes"             /* (M, 4) float32 x1, y1, x2, y2 in pixels */
#define LD_H5_DS_BOX_LABEL "box_label"     /* (M,) int32: index into box_classes */
#define LD_H5_DS_BOX_FLAGS "box_flags"     /* (M,) uint8: 1 crowd (COCO), 2 difficult (VOC) */
#define LD_H5_DS_BOX_OFFSETS "box_offsets" /* (N + 1,) int64 */
#define LD_H5_DS_FILENAME "filename"
#define LD_H5_DS_ENCODED "encoded" /* encoded bytes */
#define LD_H5_DS_OFFSETS "offsets"
#define LD_H5_DS_SHAPE "shape"

/* root attributes */
#define LD_H5_ATTR_FORMAT "format"
#define LD_H5_ATTR_FORMAT_VERSION "format_version"
#define LD_H5_ATTR_STORAGE "storage"
#define LD_H5_ATTR_ENCODING "encoding"
#define LD_H5_ATTR_CHANNEL_ORDER "channel_order"
#define LD_H5_ATTR_LAYOUT "layout"
#define LD_H5_ATTR_CHANNELS "channels"
#define LD_H5_ATTR_HEIGHT "height"
#define LD_H5_ATTR_WIDTH "width"
#define LD_H5_ATTR_CLASS_NAMES "class_names"
/* Label vectors (/label (N, K)): the names of the K values (a CSV list's header), when known */
#define LD_H5_ATTR_LABEL_NAMES "label_names"
#define LD_H5_ATTR_BOX_CLASSES "box_classes"     /* names of the box classes */
#define LD_H5_ATTR_BOX_CLASS_IDS "box_class_ids" /* int64: the input's id of each (COCO) */
#define LD_H5_ATTR_NUM_CLASSES "num_classes"
#define LD_H5_ATTR_QUALITY "quality"
#define LD_H5_ATTR_RESIZE_MODE "resize_mode"
#define LD_H5_ATTR_RESIZE_W "resize_w"
#define LD_H5_ATTR_RESIZE_H "resize_h"
#define LD_H5_ATTR_SOURCE "source"
#define LD_H5_ATTR_NOTE "note"
#define LD_H5_ATTR_TOOL_VERSION "tool_version"

/* sharded conversion (issue 13): part files carry all six, a merged file (virtual datasets
 * over the parts) shard_count, listing_total, run_id and parts. Reading a merged file:
 * h5_store.c resolves its virtual datasets into the parts and preads them directly; a
 * missing or truncated part, one whose dataset differs from its mapping, or one whose run_id
 * differs from the merged file's is refused, naming the part. */
#define LD_H5_ATTR_SHARD_INDEX "shard_index"     /* int32 K, 0-based */
#define LD_H5_ATTR_SHARD_COUNT "shard_count"     /* int32 N */
#define LD_H5_ATTR_SHARD_FIRST "shard_first"     /* int64 */
#define LD_H5_ATTR_SHARD_LISTED "shard_listed"   /* int64 */
#define LD_H5_ATTR_LISTING_TOTAL "listing_total" /* int64 */
#define LD_H5_ATTR_RUN_ID "run_id"               /* 16 lowercase hex digits */
#define LD_H5_ATTR_PARTS "parts"                 /* merged: 1-D vlen UTF-8, the part files */

/* attribute values */
#define LD_H5_STORAGE_RAW "raw"
#define LD_H5_STORAGE_ENCODED "encoded"
#define LD_H5_LAYOUT_NCHW "NCHW"
#define LD_H5_ORDER_BGR "BGR"
#define LD_H5_ORDER_RGB "RGB"
#define LD_H5_ORDER_GRAY "GRAY"

/* chunking */
#define LD_H5_CHUNK_BYTES ((size_t)1 << 20) /* target bytes per /data and /encoded chunk */
#define LD_H5_LABEL_CHUNK 4096              /* elements per /label and /offsets chunk */
#define LD_H5_NAME_CHUNK 1024               /* elements per /filename chunk */
#define LD_H5_SHAPE_CHUNK 4096              /* rows per /shape chunk */

/* Caffe's HDF5Data layer keeps a blob per file; blob counts are int: with --split each
 * dataset stays under this many elements per file. */
#define LD_H5_MAX_ELEMS_PER_FILE 2147483647ULL

/* Merged file (ld_merge, h5_merge.c; the parts' contract: shard_* attributes, part names).
 * Root attributes copied from part 0 except shard_index, shard_first, shard_listed (it keeps
 * shard_count, listing_total, run_id); channels, height, width, channel_order as a single run
 * records them (height/width 0 when the non-empty parts differ); plus
 *   parts  1-D vlen UTF-8 string array: the part files in K order, as the VDS mappings name
 *          them (relative to the merged file's folder when the parts are in it or below it,
 *          else absolute; a name with '%' is refused: HDF5 reads it as a pattern).
 * /data, /label, /filename (raw) and /encoded, /shape, /label, /filename (encoded) are
 * VIRTUAL datasets: mapping m takes the WHOLE dataset of the same name in part m (source
 * selection = all; source dataset name without '/') to the rows [start_m, start_m + n_m)
 * along dim 0 (for /encoded: the byte range), in K order, no gaps; a part with 0 samples has
 * no mapping but is listed in `parts`. /offsets (encoded) is a REAL uint64 (N+1) dataset,
 * chunked like a single file's, each part's offsets shifted by the bytes of the parts before
 * it. Same dtypes and element shapes as a single file (fixed-length /filename strings as wide
 * as the widest part's). File format: HDF5 1.8 to 1.10 objects (virtual datasets need 1.10). */

/* split file names: "<stem>" LD_H5_SPLIT_FMT ".h5", list "<stem>.txt" */
#define LD_H5_SPLIT_FMT "-%05u"
#define LD_H5_SPLIT_EXT ".h5"
#define LD_H5_LIST_EXT ".txt"

/* shard parts (see the top of this file) */
#define LD_SHARD_NAME_FMT "-%05u-of-%05u"
#define LD_SHARD_MAX 99999 /* most parts: five digits in the name */
#define LD_SHARD_RUN_ID_LEN 16
/* (the shard attribute names are defined with the other root attributes above) */

#endif /* LD_H5_FORMAT_H */
