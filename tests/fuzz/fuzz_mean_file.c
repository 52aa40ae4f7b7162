/*
 * libFuzzer target: the mean-file reader (reader/mean.c, ld__mean_read), Caffe's BlobProto
 * "binaryproto" or a NumPy .npy, as the reader loads for LD_R_MEAN_FILE. On success the shape
 * must be positive, the data present and fully readable, and the per-channel means finite when
 * the data is.
 */
#include <math.h>

#include "fuzz_util.h"
#include "reader/mean.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("mean.binaryproto", data, size);
    ld_mean m = {0};
    ld_err e;
    volatile float sink = 0;
    if (ld__mean_read(path, &m, &e) == LD_OK) {
        if (m.c <= 0 || m.h <= 0 || m.w <= 0 || !m.data) abort();
        size_t n = (size_t)m.c * m.h * m.w;
        for (size_t i = 0; i < n; i++)
            sink += m.data[i];
    } else if (!e.msg[0]) {
        abort();
    }
    ld__mean_free(&m);
    (void)sink;
    return 0;
}
