/* ld_describe(): find out which format a path holds and let that format describe it. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/ld_internal.h"
#include "store/writer.h"

int ld_describe(const char *path, char **text)
{
    int rc = LD_OK;
    ld_buf out = {0};
    ld_err e;
    struct stat st;

    ld__err_clear(&e);
    if (text) *text = NULL;
    if (!path || !text) return LD_EINVAL;
    if (stat(path, &st) != 0) {
        rc = ld__err(&e, LD_EIO, "%s: no such file or directory", path);
    } else if (S_ISDIR(st.st_mode)) {
#ifdef LD_HAVE_LMDB
        rc = ld__lmdb_describe(path, &out, &e);
#else
        rc = ld__err(&e, LD_ENOTSUP, "%s: LMDB support was not built into this libdata", path);
#endif
    } else {
#ifdef LD_HAVE_HDF5
        rc = ld__h5_describe(path, &out, &e);
#else
        rc = ld__err(&e, LD_ENOTSUP, "%s: HDF5 support was not built into this libdata", path);
#endif
    }
    if (rc == LD_OK && ld__buf_append(&out, "", 1) < 0)
        rc = ld__err(&e, LD_ENOMEM, "out of memory");
    if (rc == LD_OK) {
        *text = (char *)out.p;
        return LD_OK;
    }
    ld__buf_free(&out);
    *text = strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    return rc;
}
