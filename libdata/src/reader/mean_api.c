/* ld_compute_mean(): the public face of mean.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/ld_internal.h"
#include "reader/mean.h"

/* Same default as the converter: enough for any real photo, refuses bombs. */
#define MEAN_MAX_PIXELS 100000000u

/* The mean file must not replace what it is computed from: the input file, anything in an
 * input LMDB directory, or a file that an input --split list names. LD_OK or LD_EINVAL. */
static int check_output(const char *input, const char *output, ld_err *e)
{
    struct stat st;
    if (stat(input, &st) != 0) return LD_OK; /* the mean itself reports a missing input */
    int within = ld__path_within(output, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
    if (within < 0) return ld__err(e, within, "%s: out of memory", output);
    if (within)
        return ld__err(e, LD_EINVAL,
                       "%s: the mean file would %s the input %s; give another "
                       "output name",
                       output, within == 2 ? "replace" : "be written inside", input);
    if (!S_ISREG(st.st_mode) || st.st_size >= (1 << 20)) return LD_OK;
    FILE *f = fopen(input, "rb");
    char line[4096];
    int rc = LD_OK;
    /* a --split list names HDF5 files; an HDF5 file yields no such line, or none that exists */
    while (f && rc == LD_OK && fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, "\r\n");
        line[n] = '\0';
        if (!n || line[0] == '#' || memchr(line, '\0', n)) continue;
        char *part = ld__list_entry_path(input, line);
        struct stat ps;
        int same = part && stat(part, &ps) == 0
                       ? ld__path_within(output, (uint64_t)ps.st_dev, (uint64_t)ps.st_ino)
                       : 0;
        if (!part || same < 0)
            rc = ld__err(e, LD_ENOMEM, "%s: out of memory", output);
        else if (same == 2)
            rc = ld__err(e, LD_EINVAL,
                         "%s: the mean file would replace %s, a file of the input "
                         "list %s; give another output name",
                         output, part, input);
        free(part);
    }
    if (f) fclose(f);
    return rc;
}

int ld_compute_mean(const char *input, const char *output, double channel_means[4], int *channels,
                    char **errmsg)
{
    ld_mean m;
    ld_err e;
    int rc;

    memset(&m, 0, sizeof m);
    ld__err_clear(&e);
    if (errmsg) *errmsg = NULL;
    if (!input) {
        rc = ld__err(&e, LD_EINVAL, "mean: an input dataset is required");
    } else {
        rc = output ? check_output(input, output, &e) : LD_OK;
        if (rc == LD_OK) rc = ld__mean_path(input, MEAN_MAX_PIXELS, &m, &e);
        if (rc == LD_OK && output) rc = ld__mean_write(output, &m, &e);
    }
    if (rc == LD_OK) {
        if (channel_means)
            for (int i = 0; i < 4; i++)
                channel_means[i] = i < m.c ? m.channel[i] : 0.0;
        if (channels) *channels = m.c;
    } else if (errmsg) {
        *errmsg = strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    }
    ld__mean_free(&m);
    return rc;
}
