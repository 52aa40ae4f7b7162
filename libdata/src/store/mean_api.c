/* ld_compute_mean(): the public face of mean.c. */
#include <stdlib.h>
#include <string.h>

#include "common/ld_internal.h"
#include "store/mean.h"

/* Same default as the converter: enough for any real photo, refuses bombs. */
#define MEAN_MAX_PIXELS 100000000u

int ld_compute_mean(const char *input, const char *output, double channel_means[4],
                    int *channels, char **errmsg)
{
    ld_mean m;
    ld_err e;
    int rc;

    memset(&m, 0, sizeof m);
    ld__err_clear(&e);
    if (errmsg)
        *errmsg = NULL;
    if (!input) {
        rc = ld__err(&e, LD_EINVAL, "mean: an input dataset is required");
    } else {
        rc = ld__mean_path(input, MEAN_MAX_PIXELS, &m, &e);
        if (rc == LD_OK && output)
            rc = ld__mean_write(output, &m, &e);
    }
    if (rc == LD_OK) {
        if (channel_means)
            for (int i = 0; i < 4; i++)
                channel_means[i] = i < m.c ? m.channel[i] : 0.0;
        if (channels)
            *channels = m.c;
    } else if (errmsg) {
        *errmsg = strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    }
    ld__mean_free(&m);
    return rc;
}
