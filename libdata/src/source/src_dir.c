/*
 * Folder mode: root/<class>/.../<image>. Each directory is read completely and closed
 * before descending, so at most one directory handle is open whatever the depth.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* struct dirent d_type */
#endif
#include "source/src_internal.h"

#include "codec/codec.h"

#include "libdata/libdata.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The chain of directories from the root to the one being read, to recognize a symlinked
 * directory that leads back to one of its own ancestors. */
typedef struct dir_id {
    dev_t dev;
    ino_t ino;
    const struct dir_id *parent;
} dir_id;

typedef struct walk {
    ld_source *s;
    ld_buf path; /* root + "/" + rel of the directory being read, NUL-terminated */
    size_t root_len;
    ld_source_warn_fn warn;
    ld_source_note_fn note;
    ld_source_tick_fn tick;
    void *user;
    ld_err *e;
    int strict;           /* LD_SRC_STRICT: an unreadable folder is an error, not a warning */
    int class_level;      /* set just before walk_dir reads a class folder itself */
    int class_unreadable; /* set by walk_dir when that class folder could not be read */
    int32_t class_label;
} walk;

/* Give the caller its chance to report and to cancel. */
static int tick(walk *w)
{
    if (w->tick && w->tick(w->user, w->s->n))
        return ld__err(w->e, LD_ECANCELED, "canceled while listing the input folder");
    return LD_OK;
}

static int set_path(walk *w, const char *rel, size_t rel_len);

/* An entry the listing passes over: counted by reason in the source, and named to `note`. */
static void unlisted(walk *w, int why, const char *rel, size_t rel_len)
{
    w->s->unlisted[why]++;
    if (!w->note || set_path(w, rel, rel_len) < 0) return;
    w->note(w->user, why, (const char *)w->path.p);
}

/* The names folder mode lists (the decoder then goes by the content, not the name). */
static int is_image_name(const char *name)
{
    return ld__img_name_known(name);
}

/* Entry types as read from the directory, before following symlinks. */
enum { ENT_FILE = 'f', ENT_DIR = 'd', ENT_OTHER = 'o', ENT_UNKNOWN = 'u', ENT_HIDDEN = 'h' };

/* Read the names of one directory into `names` as a sequence of "<type char><name>\0"
 * records; hidden names ('.' first, not "." and "..") get type ENT_HIDDEN. LD_OK, LD_EIO
 * (errno left set), LD_ENOMEM. */
static int read_names(const char *dir, ld_buf *names)
{
    names->len = 0;
    DIR *d = opendir(dir);
    if (!d) return LD_EIO;
    int rc = LD_OK;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno) {
                rc = LD_EIO;
            }
            break;
        }
        const char *dn = de->d_name;
        if (dn[0] == '.' && (dn[1] == '\0' || (dn[1] == '.' && dn[2] == '\0'))) continue;
        char t;
        if (dn[0] == '.')
            t = ENT_HIDDEN;
        else
            switch (de->d_type) {
            case DT_REG: t = ENT_FILE; break;
            case DT_DIR: t = ENT_DIR; break;
            case DT_LNK:
            case DT_UNKNOWN: t = ENT_UNKNOWN; break;
            default: t = ENT_OTHER; break;
            }
        if (ld__buf_append(names, &t, 1) < 0 ||
            ld__buf_append(names, de->d_name, strlen(de->d_name) + 1) < 0) {
            rc = LD_ENOMEM;
            break;
        }
    }
    int saved = errno;
    closedir(d);
    errno = saved;
    return rc;
}

/* Set w->path to the root joined with rel[0..rel_len). */
static int set_path(walk *w, const char *rel, size_t rel_len)
{
    w->path.len = w->root_len;
    if (rel_len && ld__buf_append(&w->path, "/", 1) < 0) return LD_ENOMEM;
    if (ld__buf_append(&w->path, rel, rel_len) < 0 || ld__buf_append(&w->path, "", 1) < 0)
        return LD_ENOMEM;
    return LD_OK;
}

/* Enumerate the images below the directory `rel` (relative to the root) with `label`. */
static int walk_dir(walk *w, const char *rel, const dir_id *self, int32_t label)
{
    int rc = LD_OK;
    ld_buf names = {0}, child = {0};
    size_t rel_len = strlen(rel);
    const int class_level = w->class_level;
    w->class_level = 0;
    LD_TRY(tick(w));
    LD_TRY(set_path(w, rel, rel_len));
    int r = read_names((const char *)w->path.p, &names);
    LD_CHECK(w->e, r != LD_ENOMEM, LD_ENOMEM, "%s: out of memory listing folder",
             (const char *)w->path.p);
    if (r < 0) {
        int err = errno;
        LD_CHECKR(w->e, !w->strict, LD_EIO, LD_WHY_STRICT,
                  "%s: cannot read %sfolder: %s (stopped: strict)", (const char *)w->path.p,
                  class_level ? "class " : "", strerror(err));
        w->class_unreadable = class_level;
        if (class_level)
            ld__source_warnf(
                w->warn, w->user,
                "%s: cannot read class folder: %s; class '%s' keeps its label %d with no "
                "images, so that the other classes keep theirs (fix the permissions and run "
                "again; strict stops here instead)",
                (const char *)w->path.p, strerror(err), rel, (int)w->class_label);
        else
            ld__source_warnf(
                w->warn, w->user,
                "%s: cannot read folder, its images are skipped: %s (strict stops here "
                "instead)",
                (const char *)w->path.p, strerror(err));
        goto fail; /* a warning, not a failure: rc stays LD_OK */
    }
    for (size_t off = 0; off < names.len;) {
        char type = (char)names.p[off];
        const char *name = (const char *)names.p + off + 1;
        size_t name_len = strlen(name);
        off += name_len + 2;
        /* child = rel + "/" + name */
        child.len = 0;
        if (rel_len)
            LD_CHECK(w->e,
                     ld__buf_append(&child, rel, rel_len) == 0 &&
                         ld__buf_append(&child, "/", 1) == 0,
                     LD_ENOMEM, "out of memory");
        LD_CHECK(w->e, ld__buf_append(&child, name, name_len + 1) == 0, LD_ENOMEM, "out of memory");
        if (type == ENT_HIDDEN || type == ENT_OTHER || (type == ENT_FILE && !is_image_name(name))) {
            unlisted(w,
                     type == ENT_HIDDEN  ? LD_UNLISTED_HIDDEN
                     : type == ENT_OTHER ? LD_UNLISTED_SPECIAL
                                         : LD_UNLISTED_NAME,
                     (const char *)child.p, child.len - 1);
            continue;
        }
        const char *crel = (const char *)child.p;
        size_t crel_len = child.len - 1;
        struct stat st;
        int have_stat = 0;
        if (type != ENT_FILE) {
            LD_TRY(set_path(w, crel, crel_len));
            have_stat = stat((const char *)w->path.p, &st) == 0;
            if (!have_stat) {
                /* A dangling link named like an image is kept, so the converter reports it
                 * as unreadable instead of it silently vanishing; anything else is noise. */
                if (is_image_name(name))
                    LD_CHECK(w->e, ld__source_add_item(w->s, crel, crel_len, label) == 0, LD_ENOMEM,
                             "out of memory");
                else
                    unlisted(w, LD_UNLISTED_SPECIAL, crel, crel_len);
                continue;
            }
        }
        if (have_stat && S_ISDIR(st.st_mode)) {
            const dir_id *a = self;
            while (a && !(a->dev == st.st_dev && a->ino == st.st_ino))
                a = a->parent;
            if (a) {
                ld__source_warnf(
                    w->warn, w->user,
                    "%s: symlink loop (leads back to an enclosing folder), not followed",
                    (const char *)w->path.p);
                continue;
            }
            dir_id id = {st.st_dev, st.st_ino, self};
            LD_TRY(walk_dir(w, crel, &id, label));
            continue;
        }
        if (have_stat && !S_ISREG(st.st_mode))
            unlisted(w, LD_UNLISTED_SPECIAL, crel, crel_len);
        else if (is_image_name(name))
            LD_CHECK(w->e, ld__source_add_item(w->s, crel, crel_len, label) == 0, LD_ENOMEM,
                     "out of memory");
        else
            unlisted(w, LD_UNLISTED_NAME, crel, crel_len);
    }
fail:
    ld__buf_free(&names);
    ld__buf_free(&child);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A sub-folder of the input that is a dataset, not a class: an LMDB directory (ours or
 * Caffe's: it holds data.mdb) or the temporary of a run ("NAME.tmp-PID-HEX"). */
static int is_dataset_dir(walk *w, const char *name)
{
    const char *t = strstr(name, ".tmp-");
    if (t && t[5] >= '0' && t[5] <= '9') return 1;
    if (set_path(w, name, strlen(name)) < 0) return 0;
    w->path.len--; /* drop set_path's NUL: the suffix brings its own */
    if (ld__buf_append(&w->path, "/data.mdb", sizeof "/data.mdb") < 0) return 0;
    struct stat st;
    return stat((const char *)w->path.p, &st) == 0;
}

/* The last path component of root, for the single class of flat mode ("photos/" -> "photos"). */
static void flat_class_name(const char *root, size_t root_len, const char **name, size_t *len)
{
    size_t end = root_len, start;
    while (end > 1 && root[end - 1] == '/')
        end--;
    start = end;
    while (start > 0 && root[start - 1] != '/')
        start--;
    *name = root + start;
    *len = end - start;
    if (*len == 0 || (*len == 1 && root[start] == '.') ||
        (*len == 2 && !strncmp(root + start, "..", 2))) {
        *name = "0";
        *len = 1;
    }
}

int ld__source_open_dir(const char *root, ld_source_warn_fn warn, ld_source_tick_fn tick_fn,
                        void *user, ld_source **out, ld_err *e)
{
    return ld__source_open_dir_flags(root, 0, warn, tick_fn, user, out, e);
}

int ld__source_open_dir_flags(const char *root, unsigned flags, ld_source_warn_fn warn,
                              ld_source_tick_fn tick_fn, void *user, ld_source **out, ld_err *e)
{
    return ld__source_open_dir_notes(root, flags, warn, NULL, tick_fn, user, out, e);
}

int ld__source_open_dir_notes(const char *root, unsigned flags, ld_source_warn_fn warn,
                              ld_source_note_fn note, ld_source_tick_fn tick_fn, void *user,
                              ld_source **out, ld_err *e)
{
    int rc = LD_OK;
    ld_source *s = NULL;
    ld_buf names = {0};
    const char **classes = NULL;
    size_t n_classes = 0, n_root_images = 0;
    walk w = {0};
    struct stat st;
    *out = NULL;

    LD_CHECK(e, root && *root, LD_EINVAL, "no input folder given");
    LD_CHECK(e, stat(root, &st) == 0, LD_EIO, "%s: cannot open input folder: %s", root,
             strerror(errno));
    LD_CHECK(e, S_ISDIR(st.st_mode), LD_EINVAL, "%s: not a folder", root);
    LD_CHECK(e, ld__source_new(&s) == 0 && ld__source_set_root(s, root) == 0, LD_ENOMEM,
             "out of memory");
    w.s = s;
    w.warn = warn;
    w.note = note;
    w.tick = tick_fn;
    w.user = user;
    w.e = e;
    w.strict = (flags & LD_SRC_STRICT) != 0;
    /* Keep the root exactly as given ("photos/" stays "photos/" + "cat/..."): item paths are
     * joined the same way by ld__source_get. */
    w.root_len = strlen(root);
    while (w.root_len > 1 && root[w.root_len - 1] == '/')
        w.root_len--;
    LD_CHECK(e, ld__buf_append(&w.path, root, w.root_len) == 0, LD_ENOMEM, "out of memory");

    int r = read_names(root, &names);
    LD_CHECK(e, r != LD_ENOMEM, LD_ENOMEM, "%s: out of memory listing folder", root);
    LD_CHECK(e, r == LD_OK, LD_EIO, "%s: cannot read input folder: %s", root, strerror(errno));

    dir_id root_id = {st.st_dev, st.st_ino, NULL};
    if (flags & LD_SRC_FLAT) {
        /* One class: everything below the root, at any depth, label 0. */
        const char *cname;
        size_t clen;
        flat_class_name(root, w.root_len, &cname, &clen);
        LD_CHECK(e, ld__source_add_class(s, cname, clen) == 0, LD_ENOMEM, "out of memory");
        w.class_label = 0;
        LD_TRY(walk_dir(&w, "", &root_id, 0));
        ld__source_sort_items(s);
        *out = s;
        s = NULL;
        goto fail;
    }

    /* First pass over the root: class folders (pointers into `names`) and loose images. */
    size_t n_entries = 0;
    for (size_t off = 0; off < names.len; off += strlen((const char *)names.p + off + 1) + 2)
        n_entries++;
    if (n_entries) {
        classes = malloc(n_entries * sizeof *classes);
        LD_CHECK(e, classes, LD_ENOMEM, "out of memory");
    }
    const char *loose_example = NULL;
    for (size_t off = 0; off < names.len;) {
        char type = (char)names.p[off];
        const char *name = (const char *)names.p + off + 1;
        off += strlen(name) + 2;
        if (type == ENT_HIDDEN) {
            unlisted(&w, LD_UNLISTED_HIDDEN, name, strlen(name));
            continue;
        }
        int is_dir = type == ENT_DIR;
        if (type == ENT_UNKNOWN) {
            LD_TRY(set_path(&w, name, strlen(name)));
            struct stat cst;
            if (stat((const char *)w.path.p, &cst) == 0)
                is_dir = S_ISDIR(cst.st_mode);
            else
                type = ENT_FILE; /* dangling: kept if named like an image, see walk_dir */
        }
        if (is_dir && is_dataset_dir(&w, name)) {
            LD_TRY(set_path(&w, name, strlen(name)));
            ld__source_warnf(
                w.warn, w.user,
                "%s: a dataset (LMDB database or a conversion's temporary), not a class "
                "folder: skipped",
                (const char *)w.path.p);
        } else if (is_dir) {
            classes[n_classes++] = name;
        } else if (type == ENT_OTHER) {
            unlisted(&w, LD_UNLISTED_SPECIAL, name, strlen(name));
        } else if (!is_image_name(name)) {
            unlisted(&w, LD_UNLISTED_NAME, name, strlen(name));
        } else {
            unlisted(&w, LD_UNLISTED_LOOSE, name, strlen(name));
            if (n_root_images++ == 0 || strcmp(name, loose_example) < 0) loose_example = name;
        }
    }
    qsort(classes, n_classes, sizeof *classes, cmp_str);
    /* Images directly in the root belong to no class. They used to form a class "." with
     * label 0, which shifted the label of every real class by one: skip them, and say so. */
    if (n_root_images) {
        LD_TRY(set_path(&w, loose_example, strlen(loose_example)));
        ld__source_warnf(w.warn, w.user,
                         "%zu image file%s directly in the input folder (e.g. %s) %s in no class "
                         "folder: skipped (labels come from the sub-folders; use flat for a folder "
                         "without class folders, every image label 0)",
                         n_root_images, n_root_images == 1 ? "" : "s", (const char *)w.path.p,
                         n_root_images == 1 ? "is" : "are");
    }

    LD_CHECK(e, n_classes < (size_t)INT32_MAX, LD_ELIMIT, "%s: too many class folders", root);
    for (size_t i = 0; i < n_classes; i++)
        LD_CHECK(e, ld__source_add_class(s, classes[i], strlen(classes[i])) == 0, LD_ENOMEM,
                 "out of memory");

    for (size_t i = 0; i < n_classes; i++) {
        LD_TRY(set_path(&w, classes[i], strlen(classes[i])));
        struct stat cst;
        if (stat((const char *)w.path.p, &cst) != 0) {
            int err = errno;
            LD_CHECKR(e, !w.strict, LD_EIO, LD_WHY_STRICT,
                      "%s: cannot open class folder: %s (stopped: strict)", (const char *)w.path.p,
                      strerror(err));
            ld__source_warnf(
                w.warn, w.user,
                "%s: cannot open class folder: %s; class '%s' keeps its label %d with no "
                "images, so that the other classes keep theirs (strict stops here instead)",
                (const char *)w.path.p, strerror(err), classes[i], (int)i);
            continue;
        }
        if (cst.st_dev == st.st_dev && cst.st_ino == st.st_ino) {
            ld__source_warnf(w.warn, w.user,
                             "%s: symlink loop (leads back to the input folder), not followed",
                             (const char *)w.path.p);
            continue;
        }
        dir_id id = {cst.st_dev, cst.st_ino, &root_id};
        size_t before = s->n;
        w.class_level = 1;
        w.class_unreadable = 0;
        w.class_label = (int32_t)i;
        LD_TRY(walk_dir(&w, classes[i], &id, (int32_t)i));
        if (s->n == before && !w.class_unreadable) {
            LD_TRY(set_path(&w, classes[i], strlen(classes[i])));
            ld__source_warnf(
                w.warn, w.user,
                "%s: class folder has no images (no file named .jpg, .png, .tif, .webp, "
                ".gif, .bmp, .ppm... below it; class '%s' keeps label %d)",
                (const char *)w.path.p, classes[i], (int)i);
        }
    }
    ld__source_sort_items(s);
    *out = s;
    s = NULL;
fail:
    ld__source_free(s);
    ld__buf_free(&names);
    ld__buf_free(&w.path);
    free(classes);
    return rc;
}
