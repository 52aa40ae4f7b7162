/* ld_describe(): find out which format a path holds and let that format describe it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/ld_internal.h"
#include "store/writer.h"

static size_t text_esc(unsigned char ch, int ascii, char *out)
{
    const char *named = ch == '\\'   ? "\\\\"
                        : ch == '\n' ? "\\n"
                        : ch == '\t' ? "\\t"
                        : ch == '\r' ? "\\r"
                                     : NULL;
    if (named) return (size_t)snprintf(out, 8, "%s", named);
    if (!ascii || ch < 0x20 || ch == 0x7f) return (size_t)snprintf(out, 8, "\\x%02x", ch);
    out[0] = (char)ch;
    return 1;
}

int ld__describe_escape(ld_buf *out, const char *s)
{
    return ld__utf8_escape(out, s, text_esc);
}

#ifdef LD_HAVE_LMDB
static int is_image_name(const char *name)
{
    static const char *const ext[] = {".jpg", ".jpeg", ".png"};
    size_t n = strlen(name);
    if (name[0] == '.') return 0;
    for (size_t k = 0; k < sizeof ext / sizeof *ext; k++) {
        size_t m = strlen(ext[k]);
        if (n > m && strcasecmp(name + n - m, ext[k]) == 0) return 1;
    }
    return 0;
}

/* Whether a directory holds image files, at its top or one folder down (a class tree): a
 * folder given to `info` by mistake instead of the dataset made from it. Stops at the first. */
static int holds_images(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;
    if (!d) return 0;
    while (!found && (de = readdir(d)) != NULL) {
        if (is_image_name(de->d_name)) {
            found = 1;
        } else if (depth > 0 && de->d_name[0] != '.') {
            char *sub = ld__asprintf("%s/%s", dir, de->d_name);
            struct stat st;
            if (sub && stat(sub, &st) == 0 && S_ISDIR(st.st_mode))
                found = holds_images(sub, depth - 1);
            free(sub);
        }
    }
    closedir(d);
    return found;
}

/* A directory is described as an LMDB database when it holds data.mdb; anything else is
 * said plainly (a folder of images is the usual mistake: say how to convert it). */
static int describe_dir(const char *path, ld_buf *out, ld_err *e)
{
    struct stat st;
    char *mdb = ld__asprintf("%s/data.mdb", path);
    if (!mdb) return ld__err(e, LD_ENOMEM, "out of memory");
    int has_mdb = stat(mdb, &st) == 0;
    free(mdb);
    if (has_mdb) return ld__lmdb_describe(path, out, e);
    if (holds_images(path, 1))
        return ld__err(e, LD_EFORMAT,
                       "%s: a folder of images, not a dataset: convert it first (one "
                       "sub-folder per class, or a list file), then describe the output",
                       path);
    return ld__err(e, LD_EFORMAT,
                   "%s: a folder that is not an LMDB database (no data.mdb "
                   "in it) and holds no images",
                   path);
}
#endif

int ld_describe(const char *path, char **text, char **errmsg)
{
    int rc = LD_OK;
    ld_buf out = {0};
    ld_err e;
    struct stat st;

    ld__err_clear(&e);
    if (text) *text = NULL;
    if (errmsg) *errmsg = NULL;
    if (!path || !text) {
        if (errmsg) *errmsg = strdup("ld_describe: path and text are required");
        return LD_EINVAL;
    }
    if (stat(path, &st) != 0) {
        rc = ld__err(&e, LD_EIO, "%s: no such file or directory", path);
    } else if (S_ISDIR(st.st_mode)) {
#ifdef LD_HAVE_LMDB
        rc = describe_dir(path, &out, &e);
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
    if (errmsg) *errmsg = strdup(e.msg[0] ? e.msg : ld_strerror(rc));
    return rc;
}
