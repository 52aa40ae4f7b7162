/*
 * libdata dataset: what a dataset on disk holds, as a struct (ld_dataset_stat) -- the
 * machine-readable side of ld_describe(). Included by reader.h.
 */
#ifndef LIBDATA_DATASET_H
#define LIBDATA_DATASET_H

#include "libdata.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * What a dataset holds, filled by ld_dataset_stat(): the facts `dataconv info` (ld_describe())
 * prints, as fields, so that programs and bindings need not parse that text.
 *
 * ABI: the library allocates it (one block; release it with ld_free()) and later 1.x versions
 * only add fields at the end: never allocate or copy one by sizeof. A field that does not
 * apply is 0 (NULL for pointers). Names come from file names and keep their bytes: UTF-8 for
 * UTF-8 folder names, the raw bytes otherwise.
 */
typedef struct ld_dataset_info {
    const char *path;     /**< the path given to ld_dataset_stat() */
    int format;           /**< LD_FORMAT_HDF5 (one file, or a --split list of files) or
                               LD_FORMAT_LMDB */
    int by_libdata;       /**< 1 when libdata wrote it (its HDF5 attributes, its LMDB
                               libdata.json); 0 for another tool's (Caffe, h5py) */
    uint32_t files;       /**< HDF5 files read: 1, or the files of a --split list; LMDB: 1 */
    uint64_t samples;     /**< samples (LMDB: records) */
    int encoded;          /**< 1: encoded images (JPEG/PNG bytes); 0: raw pixels */
    const char *encoding; /**< encoded, as libdata recorded it: "jpeg", "png" (re-encoded) or
                               "original" (the input files' bytes); NULL when raw or not
                               recorded */
    int quality;          /**< JPEG quality of re-encoded images; 0 when not re-encoded or not
                               recorded */
    int dtype;            /**< pixels as stored: LD_DTYPE_U8 or LD_DTYPE_F32 (encoded: U8) */
    int label_dtype;      /**< labels as stored: LD_DTYPE_I32 (integers) or LD_DTYPE_F32 */
    int channels, height, width; /**< one sample, C x H x W (encoded: as decoded); height and
                                      width are 0 when the sizes vary */
    int shape_of_first;          /**< 1 when channels/height/width are only the first
                                      sample's (a Caffe --encoded LMDB records no shape;
                                      later ones may differ) */
    int channel_order;      /**< LD_CHANNELS_BGR or LD_CHANNELS_RGB: the order in which ld_reader
                                 delivers 3-channel samples by default (LD_CHANNELS_AS_STORED);
                                 0 when the dataset does not record it or channels != 3 */
    int resize_mode;        /**< the LD_RESIZE_* the images were resized with; 0 when not
                                 resized or not recorded */
    int resize_w, resize_h; /**< the resize target; 0 when not resized or not recorded */
    size_t num_classes;     /**< class names recorded; 0 when none */
    const char *const *class_names; /**< num_classes names: label i is class_names[i]; NULL
                                         when none are recorded */
    /* (Added after 1.0.0.) Label vectors: */
    int label_k;                    /**< 0: one label per sample; K >= 1: label vectors of K
                                         values (HDF5 /label (N, K), an LMDB label database) */
    size_t num_label_names;         /**< names of the K values recorded (a CSV header); 0 when
                                         none */
    const char *const *label_names; /**< num_label_names names; NULL when none */
    /* (Added after 1.0.0.) Segmentation masks: */
    int mask_h, mask_w; /**< every sample's mask of class indices is 1 x mask_h x mask_w
                             (HDF5 /mask or /label (N, 1, H, W), an LMDB mask database);
                             0 0 without masks */
    int mask_is_label;  /**< 1 when the masks are the dataset's label (no class labels) */
    /* (Added after 1.0.0.) Detection boxes: */
    int boxes;                      /**< 1 when the samples carry boxes (HDF5 /boxes) */
    size_t num_box_classes;         /**< box class names recorded; 0 when none */
    const char *const *box_classes; /**< num_box_classes names: box label i is box_classes[i] */
    const int64_t *box_class_ids;   /**< the input's id of each (COCO category_id) */
    /* (Added after 1.0.0.) */
    int mask_dtype; /**< the masks' element type: LD_DTYPE_U8 or LD_DTYPE_U16; 0 without */
} ld_dataset_info;

/**
 * Read what a dataset holds (format, count, shape, storage, dtypes, channel order, how it was
 * made, class names) into a struct: the machine-readable side of ld_describe(). Opens the
 * dataset as ld_reader_open() does, so a dataset it accepts is one the reader can open.
 *
 * @param path   an HDF5 file, a --split list of HDF5 files, or an LMDB directory (as
 *               ld_reader_open()).
 * @param info   on success: the description (release with ld_free()); NULL on failure.
 * @param errmsg on failure, a message naming the path and the reason (release with ld_free());
 *               NULL on success. May be NULL.
 * @return LD_OK, or LD_EIO / LD_EFORMAT / LD_ENOTSUP / LD_ENOMEM / LD_EINVAL (no path/info).
 * Thread-safe: uses no shared state besides the HDF5 lock.
 */
LD_API int ld_dataset_stat(const char *path, ld_dataset_info **info, char **errmsg);

#ifdef __cplusplus
}
#endif
#endif /* LIBDATA_DATASET_H */
