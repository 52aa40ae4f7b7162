/*
 * libdata types: the vocabulary every part of the library shares (the converter, the reader,
 * the dataset description): output formats, resize geometry, channel order, element types.
 * Included by libdata.h; values are fixed forever.
 */
#ifndef LIBDATA_TYPES_H
#define LIBDATA_TYPES_H

/** Output formats (LD_C_FORMAT). */
typedef enum ld_format {
    LD_FORMAT_AUTO = 0x400, /**< from the output name: .lmdb or an existing directory -> LMDB,
                                 else HDF5 */
    LD_FORMAT_HDF5 = 0x401,
    LD_FORMAT_LMDB = 0x402
} ld_format;

/** Resize geometry (LD_C_RESIZE_MODE). Values are fixed forever. */
typedef enum ld_resize_mode {
    LD_RESIZE_SQUASH = 0x500, /**< stretch to exactly W x H, ignoring aspect (convert_imageset) */
    LD_RESIZE_CROP = 0x501,   /**< scale the shorter side to fit W x H, then center-crop */
    LD_RESIZE_PAD = 0x502,    /**< scale to fit inside W x H keeping aspect, pad the rest
                                   (LD_C_PAD_VALUE) */
    LD_RESIZE_MAX = 0x503     /**< keep aspect, longer side at most max(W, H); never enlarges;
                                   variable sizes */
} ld_resize_mode;

/** Channel order of 3-channel data (LD_C_CHANNEL_ORDER, LD_R_CHANNEL_ORDER, LD_R_INFO_ORDER). */
typedef enum ld_channel_order {
    LD_CHANNELS_AS_STORED = 0x600, /**< reader: keep the dataset's order (LD_R_CHANNEL_ORDER's
                                        default); LD_R_INFO_ORDER: the order is not known */
    LD_CHANNELS_BGR = 0x601,       /**< Caffe / OpenCV convention (the converter's default) */
    LD_CHANNELS_RGB = 0x602
} ld_channel_order;

/** Element types (LD_R_DTYPE, LD_R_LABEL_DTYPE). Values are fixed forever. */
typedef enum ld_dtype {
    LD_DTYPE_U8 = 0x200,  /**< uint8 */
    LD_DTYPE_F32 = 0x201, /**< float32 */
    LD_DTYPE_I32 = 0x202, /**< int32 (labels only) */
    LD_DTYPE_U16 = 0x203  /**< uint16 (segmentation masks with more than 256 classes) */
} ld_dtype;

#endif /* LIBDATA_TYPES_H */
