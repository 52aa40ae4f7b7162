/*
 * Per-pixel mean of a dataset, written as Caffe's BlobProto "binaryproto" (the `mean_file`
 * of Caffe's transform_param), plus the per-channel means (for `mean_value`).
 *
 * Streams over the samples through one store read context: memory is c*h*w doubles (the
 * running sums) plus one decoded image, independent of the number of samples. Sums are kept
 * in double (Caffe's compute_image_mean sums in float, which loses precision past ~10^5
 * images).
 *
 * Channel order of the mean: raw records as stored (BGR for our default and for
 * convert_imageset databases); encoded records are decoded and converted to BGR, the order
 * Caffe's DecodeDatumNative gives them, so the mean subtracts correctly in Caffe's Data layer.
 * Every sample must have the same shape (Caffe requires it too); a different one is
 * LD_EFORMAT naming the sample.
 */
#ifndef LD_MEAN_H
#define LD_MEAN_H

#include "common/ld_internal.h"
#include "store/store.h"

typedef struct ld_mean {
    int c, h, w;
    float *data;       /* c*h*w floats, CHW; malloc'd, release with ld__mean_free */
    double channel[4]; /* per-channel means (first min(c, 4) channels) */
    uint64_t n;        /* samples averaged */
    /* A NumPy .npy mean (ld__mean_read): its 2 or 3 dimensions as in the file and the data in
     * file order (converted to float). c, h, w are then the file's dimensions taken as
     * C x H x W (H x W: c = 1) until ld__mean_arrange decides the axis order. 0 otherwise. */
    int npy_ndim;
    int npy_dims[3];
} ld_mean;

/* Compute the mean over every sample of an open store. max_pixels bounds decoding of
 * encoded samples (0 = no limit). LD_OK, LD_EFORMAT, LD_ELIMIT, LD_ENOMEM, LD_EIO. */
int ld__mean_store(ld_store *s, uint64_t max_pixels, ld_mean *out, ld_err *e);

/* Open `input` with ld__store_open (LMDB directory or data.mdb, HDF5 file, --split list)
 * and compute its mean. Same return codes, plus the store's open errors. */
int ld__mean_path(const char *input, uint64_t max_pixels, ld_mean *out, ld_err *e);

/* Write m as a BlobProto (num=1, channels, height, width, packed data; see datum.h) to
 * `path` atomically (temporary file beside it, then rename). LD_OK, LD_EIO, LD_ENOMEM. */
int ld__mean_write(const char *path, const ld_mean *m, ld_err *e);

/* Read a mean file: Caffe's binaryproto (legacy num/channels/height/width or `shape`; num
 * must be 1), or a NumPy .npy array (recognised by its magic, whatever the file is called):
 * version 1-3, little-endian float32 ('<f4'), float64 ('<f8') or uint8 ('|u1'), C order,
 * shape (H, W), (A, B, C) or (1, A, B, C); the axis order of a 3-D array is decided by
 * ld__mean_arrange. Fills out (c, h, w, data, channel). LD_OK, LD_EIO, LD_EFORMAT (with the
 * reason: Fortran order, big-endian or other dtypes, a truncated file...), LD_ENOMEM. */
int ld__mean_read(const char *path, ld_mean *out, ld_err *e);

/* Fit a mean read by ld__mean_read to the reader's output of c channels whose images are
 * h x w (the samples) or ch x cw (the crop). A binaryproto is C x H x W already. A 3-D .npy
 * array is taken as C x H x W when its shape is (c, h, w) or (c, ch, cw), else as
 * H x W x C when it is (h, w, c) or (ch, cw, c) and transposed to C x H x W; (H, W) needs
 * c = 1. `how` receives the order taken ("C x H x W", "H x W x C (transposed)"), for the
 * reader's log. Only the axis order is decided here; the size check stays the caller's.
 * LD_OK, LD_EINVAL (shape fits neither order; the message names both), LD_ENOMEM. */
int ld__mean_arrange(ld_mean *m, const char *path, int c, int h, int w, int ch, int cw, char *how,
                     size_t how_cap, ld_err *e);

void ld__mean_free(ld_mean *m);

#endif /* LD_MEAN_H */
