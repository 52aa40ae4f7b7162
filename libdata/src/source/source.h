/*
 * Sources: the deterministic list of input files with their labels and class names,
 * from a folder tree (one sub-folder per class) or a Caffe "relative/path label" list file.
 *
 * Folder mode: the immediate sub-folders of the root are the classes, sorted by byte-wise
 * name (strcmp), class index = position; images are found recursively below each class
 * folder (nested folders allowed), extensions .jpg .jpeg .jpe .jfif .png .tif .tiff .webp .gif
 * .bmp .dib .pgm .ppm .pbm .pnm matched case-insensitively (the decoder goes by content),
 * names starting with '.' (files and folders) ignored, the final order sorted by relative
 * path. Images directly in the root (no class folder) are skipped with one warning; so are
 * sub-folders that are datasets (hold data.mdb, or are a run's "*.tmp-PID-HEX"). A class
 * folder that cannot be read keeps its class (and label) with no images, with a warning,
 * or is an LD_EIO error with LD_SRC_STRICT. With LD_SRC_FLAT there are no class folders:
 * every image below the root, at any depth, gets label 0 in one class named after the root.
 * Symlinks are followed for files; symlinked directories are followed once (loops are
 * detected by device/inode and reported).
 *
 * List mode: a text list of "relative/path v1 ... vK" lines, or a CSV file with a header
 * (src_list.c says how lines are split and typed). One non-negative integer per line is a
 * class label, as Caffe's convert_imageset reads it: class names are then the label numbers
 * as text ("0", "1", ...) up to the largest label. Anything else is a label vector
 * (ld__source_label_count). A bad line is an LD_EFORMAT error naming the file and line.
 *
 * Archive mode (src_tar.c): a tar archive (.tar, .tar.gz/.tgz, .tar.bz2, .tar.xz, .tar.zst)
 * read with libarchive, never extracted: the same classes, labels, names and order as folder
 * mode on the extracted tree; a member that is itself a tar at the top level is a class of
 * its own (a tar of tars, as ILSVRC2012's train tar). See src_tar.c for how members are
 * found again after sorting.
 *
 * Memory: the file list and nothing else. The root is stored once; each file costs its
 * relative path, its label and one pointer (about 12 bytes plus the relative path), so a
 * conversion's memory hardly grows with the number of files. Full paths are composed on
 * demand into a buffer the caller owns and reuses.
 */
#ifndef LD_SOURCE_H
#define LD_SOURCE_H

#include "common/ld_internal.h"

typedef struct ld_item {
    const char *path; /* full path to open (root joined with the relative path) */
    const char *rel;  /* path relative to the root (as stored in the dataset and in keys) */
    int32_t label;
} ld_item;

typedef struct ld_source ld_source;

/* Warnings (e.g. a symlink loop, an unreadable sub-folder) go to `warn` if not NULL. */
typedef void (*ld_source_warn_fn)(void *user, const char *msg);

/* Called now and then while listing (before each folder is read; every 4096 lines of a list)
 * with the number of files found so far, so that a listing of millions of files can report
 * and be canceled: nonzero stops it with LD_ECANCELED. May be NULL. */
typedef int (*ld_source_tick_fn)(void *user, size_t found);

int ld__source_open_dir(const char *root, ld_source_warn_fn warn, ld_source_tick_fn tick,
                        void *user, ld_source **out, ld_err *e);
/* Flags of ld__source_open_dir_flags. */
#define LD_SRC_STRICT 1u /* an unreadable folder is an error (LD_EIO), not a warning */
#define LD_SRC_FLAT 2u   /* no class folders: all images, label 0 */
int ld__source_open_dir_flags(const char *root, unsigned flags, ld_source_warn_fn warn,
                              ld_source_tick_fn tick, void *user, ld_source **out, ld_err *e);
/* Why folder mode passed over an entry below the input folder (ld__source_unlisted, the
 * note callback). Values index ld_source.unlisted. */
typedef enum ld_unlisted_why {
    LD_UNLISTED_NAME = 0,    /* a file not named like an image (.txt, .xml, no extension...) */
    LD_UNLISTED_HIDDEN = 1,  /* a hidden file or folder ('.' first); a folder counts once */
    LD_UNLISTED_SPECIAL = 2, /* not a regular file (FIFO, socket, device, dangling link) */
    LD_UNLISTED_LOOSE = 3,   /* an image directly in the input folder: no class folder */
    LD_UNLISTED_UNSAFE = 4,  /* archive member named with '..' or an absolute path */
    LD_UNLISTED_LINK = 5,    /* archive member that is a hard or symbolic link */
    LD_UNLISTED_N = 6
} ld_unlisted_why;
/* Called with each entry folder mode passes over: the reason and its path (root joined with
 * the relative path; valid during the call). */
typedef void (*ld_source_note_fn)(void *user, int why, const char *path);
/* ld__source_open_dir_flags that also names every entry it passes over to `note` (may be
 * NULL; they are counted either way). Symlink loops, unreadable folders and datasets are
 * warnings (`warn`), not entries. */
int ld__source_open_dir_notes(const char *root, unsigned flags, ld_source_warn_fn warn,
                              ld_source_note_fn note, ld_source_tick_fn tick, void *user,
                              ld_source **out, ld_err *e);
/* How many entries folder mode passed over for `why` (0 in list mode). */
uint64_t ld__source_unlisted(const ld_source *s, int why);
/* The length of name's tar suffix (".tar", ".tar.gz", ".tgz", ...; case-insensitive), 0 when
 * it has none: such an input is read in archive mode. */
size_t ld__source_archive_suffix(const char *name);
/* Archive mode, with ld__source_open_dir_notes' flags (LD_SRC_STRICT: a corrupt archive or
 * inner archive is an error, not a warning; LD_SRC_FLAT) and callbacks. LD_ENOTSUP when
 * libdata was built without libarchive. Items' paths are "archive/relative path". */
int ld__source_open_archive(const char *archive, unsigned flags, ld_source_warn_fn warn,
                            ld_source_note_fn note, ld_source_tick_fn tick, void *user,
                            ld_source **out, ld_err *e);
/* Dataset mode (src_store.c): a dataset as input -- an HDF5 file (ours, another tool's
 * /data + /label, a merged one), a --split list, an LMDB (ours or convert_imageset's, raw or
 * encoded) -- opened through the store layer (ld__store_open, its one format probe). Items:
 * the records in stored order, named as the dataset names them (HDF5 /filename, LMDB key
 * without "%08d_"; else the record number "%08llu"), with the class names, label names and
 * box classes it records; label vectors (and float scalar labels, as one float32 value) stay
 * label vectors; boxes are carried in the stored image's pixels. Labels are taken as each
 * record is read (ld__source_read): 0 before. Items' paths are "dataset/name". Reading gives
 * an encoded record's bytes as stored, a raw one's pixels as a binary PNM (P5 gray, P6 RGB).
 * LD_EFORMAT (unsupported input) for a dataset with masks, float32 pixels or other than 1
 * or 3 channels (the message says what to do), the store's errors (LD_EFORMAT corrupt, LD_EIO),
 * LD_ENOMEM, LD_ECANCELED (tick, every 4096 records). Reading moves the store's one read context:
 * one thread at a time. See src_store.c for memory. */
int ld__source_open_dataset(const char *path, ld_source_tick_fn tick, void *user, ld_source **out,
                            ld_err *e);
/* 1 when `input` is read in dataset mode: not an archive by name (a folder named so excepted)
 * and the store layer's probe takes it (an LMDB folder or *.mdb, a .txt/.list split list, any
 * other regular file as HDF5); a folder of images is not. Reads no content. */
int ld__source_is_dataset(const char *input);
/* 1 when s was opened in dataset mode. */
int ld__source_from_dataset(const ld_source *s);
/* Dataset mode: lay over d (the output's description) how the input's samples were made, as
 * it records it: its resize settings when same_size (this run resizes nothing), its quality
 * and encoding when same_bytes (an encoded input's bytes are kept). Nothing for another
 * source. LD_OK or LD_ENOMEM. */
struct ld_desc;
int ld__source_dataset_made(const ld_source *s, struct ld_desc *d, int same_size, int same_bytes);
/* The channels of a raw dataset's records (1 or 3); 0 for an encoded one or another source. */
int ld__source_dataset_channels(const ld_source *s);
/* 1 when s is a dataset of encoded records (their bytes are what ld__source_read gives). */
int ld__source_dataset_encoded(const ld_source *s);
/* 1 when the items' boxes are in the displayed (oriented) image's pixels: a dataset input's
 * are as its reader gives them, not before an EXIF orientation as COCO's and VOC's are. */
int ld__source_boxes_displayed(const ld_source *s);

/* The bytes of item i (the file at `path`, as ld__source_get composed it, or the archive
 * member) into *out, at most max_bytes (archive members: at most 256 MiB). LD_OK, LD_EIO,
 * LD_EFORMAT (truncated or corrupt archive), LD_ELIMIT, LD_ENOMEM; `e` names the file or
 * member. Reading an archive moves its stream: one thread at a time. */
int ld__source_read(ld_source *s, size_t i, const char *path, ld_buf *out, size_t max_bytes,
                    ld_err *e);
/* How list mode reads labels (see src_list.c). */
typedef struct ld_list_opts {
    int label_count; /* values per line; -1: from the first line (CSV: from the header) */
    int label_type;  /* 0 auto (int32 when every line has one integer, else float32),
                        LD_DTYPE_I32 or LD_DTYPE_F32 */
} ld_list_opts;
int ld__source_open_list(const char *list_file, const char *root, const ld_list_opts *o,
                         ld_source_tick_fn tick, void *user, ld_source **out, ld_err *e);
void ld__source_free(ld_source *s);

size_t ld__source_count(const ld_source *s);
/* Item i: `rel` points into the source (valid until it is freed; shuffling moves items, not
 * strings), `path` into *path_buf, which the caller reuses for every item and frees (full
 * paths are not stored). LD_OK, LD_EINVAL (i out of range, *out cleared), LD_ENOMEM. */
int ld__source_get(const ld_source *s, size_t i, ld_buf *path_buf, ld_item *out);
/* Relative path and label of item i without composing its path; NULL / -1 out of range. */
const char *ld__source_rel(const ld_source *s, size_t i);
int32_t ld__source_label(const ld_source *s, size_t i);
/* Labels. 0: every item has one int32 label (ld__source_label; class labels, or in list mode
 * integers; 0 for an unlabelled list). K >= 1 (list mode): every item has K values of
 * ld__source_label_type (LD_DTYPE_F32, or LD_DTYPE_I32 asked for), ld__source_values copies
 * them (K x 4 bytes) to out. */
uint32_t ld__source_label_count(const ld_source *s);
int ld__source_label_type(const ld_source *s);
int ld__source_values(const ld_source *s, size_t i, void *out);
/* 1 when a list had no labels at all (every label 0, no classes). */
int ld__source_unlabelled(const ld_source *s);
/* A CSV list's header: the names of the label columns (0 when there is none). */
size_t ld__source_label_name_count(const ld_source *s);
const char *ld__source_label_name(const ld_source *s, size_t i);
/* Detection boxes (COCO and VOC sources; ld_box: common/ld_internal.h): item i's boxes in
 * the input image's pixels, as its file stores them (before any EXIF orientation). */
/* 1 when the items carry boxes (every item, maybe none: M = 0). */
int ld__source_has_boxes(const ld_source *s);
/* How many boxes item i has; box k of item i into *out (k < that count). */
uint32_t ld__source_box_count(const ld_source *s, size_t i);
void ld__source_box(const ld_source *s, size_t i, uint32_t k, ld_box *out);
/* The box classes: names, and the input's own id of each (COCO category_id; VOC: the index). */
size_t ld__source_box_class_count(const ld_source *s);
const char *ld__source_box_class_name(const ld_source *s, size_t c);
int64_t ld__source_box_class_id(const ld_source *s, size_t c);
size_t ld__source_class_count(const ld_source *s);
const char *ld__source_class_name(const ld_source *s, size_t i);

/* Shuffle the order with a seeded PRNG (SplitMix64 + Fisher-Yates): the same seed gives the
 * same order on every platform. */
void ld__source_shuffle(ld_source *s, uint64_t seed);

/* Keep only items [first, first + count) (clamped to the list), renumbered from 0: a shard's
 * part of the whole listing. Class names are kept as they are (they come from the whole
 * listing). The other items' strings stay in the arena until the source is freed. */
void ld__source_slice(ld_source *s, size_t first, size_t count);

/* Detection sources (src_coco.c, src_voc.c): every item carries its boxes (ld__source_box).
 *
 * COCO: `json` is an instances file (images[], annotations[], categories[]), read streaming
 * (memory: the kept records, not the file). One item per image, sorted by file_name: rel =
 * file_name, path = root/file_name (NULL or "": as written). bbox [x,y,w,h] becomes x1 = x,
 * y1 = y, x2 = x + w, y2 = y + h; iscrowd sets LD_BOX_CROWD. Box classes = categories sorted
 * by id (label = rank, ld__source_box_class_id = category_id). Images without annotations are
 * kept (no boxes). An annotation naming an unknown image or category, a bbox that is not 4
 * finite numbers or has w or h < 0, an image without id or file_name (or one that is absolute
 * or holds ".."), a duplicated category id: a warning naming file:line (and the byte: COCO
 * files are often one line), skipped; with LD_SRC_STRICT an LD_EFORMAT error. Malformed JSON:
 * LD_EFORMAT naming file:line and the parser's message. LD_EIO (cannot read), LD_ENOMEM,
 * LD_ECANCELED (tick, called every 4096 records), LD_ENOTSUP (built without yajl). */
int ld__source_open_coco(const char *json, const char *root, unsigned flags, ld_source_warn_fn warn,
                         ld_source_tick_fn tick, void *user, ld_source **out, ld_err *e);
/* Pascal VOC: `dir` is a VOC2012-style folder (Annotations/ID.xml, JPEGImages/, ImageSets/);
 * `list` an ImageSets file (the first word of each line is an image id; a relative path not
 * found as given is looked up under dir), or NULL for every Annotations/<id>.xml, sorted.
 * Items in the list's order: rel = "JPEGImages/" + <filename> (else ID.jpg), root = dir.
 * Boxes from <object><name> and <bndbox> (VOC's 1-based pixels: x1 = xmin - 1, y1 = ymin - 1,
 * x2 = xmax, y2 = ymax), <difficult>1 sets LD_BOX_DIFFICULT. Box classes: VOC's 20 names in
 * their standard order (id = index), then any other name found, sorted. XML is parsed without
 * network, DTD loading or entity substitution, and a file with a DOCTYPE, an entity
 * declaration or an entity reference other than XML's five is refused (XXE, billion laughs),
 * as is a file over 1 MiB. A malformed or refused file, or a listed id without a readable
 * file: a warning naming file:line, the image skipped; with LD_SRC_STRICT an LD_EFORMAT (LD_EIO
 * for an unreadable file) error. LD_ENOMEM, LD_ECANCELED (tick, every 4096 images),
 * LD_ENOTSUP (built without libxml2). */
int ld__source_open_voc(const char *dir, const char *list, unsigned flags, ld_source_warn_fn warn,
                        ld_source_tick_fn tick, void *user, ld_source **out, ld_err *e);

#endif /* LD_SOURCE_H */
