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

#include "../common/ld_internal.h"
#include "store.h"

typedef struct ld_mean {
    int c, h, w;
    float *data;        /* c*h*w floats, CHW; malloc'd, release with ld__mean_free */
    double channel[4];  /* per-channel means (first min(c, 4) channels) */
    uint64_t n;         /* samples averaged */
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

/* Read a binaryproto mean file (legacy num/channels/height/width or `shape`; num must be 1).
 * Fills out (c, h, w, data, channel). LD_OK, LD_EIO, LD_EFORMAT, LD_ENOMEM. */
int ld__mean_read(const char *path, ld_mean *out, ld_err *e);

void ld__mean_free(ld_mean *m);

#endif /* LD_MEAN_H */
