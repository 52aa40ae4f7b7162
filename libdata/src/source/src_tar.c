/*
 * Archive mode: a tar archive as input, read with libarchive (a well-kept library that knows
 * every tar dialect, ustar, pax and GNU long names, and every compression) and never extracted.
 *
 * Listing pass. One walk over the headers, as folder mode's walk over directories: the first
 * path component of a member is its class (leading "./" dropped), a member at the top level
 * that is itself a tar ("n01440764.tar") is opened in place and its members belong to the
 * class named after it, with relative path "n01440764/<member>" (ILSVRC2012's train tar).
 * Items are then sorted by relative path, exactly folder mode's order on the extracted tree;
 * a name that occurs twice keeps its last copy, as extraction would. Per member the source
 * keeps only what folder mode keeps (the relative path, the label) plus 24 bytes: the data's
 * offset in the archive file, its size, and the member's ordinal in the walk. Nothing else
 * grows with the number of members.
 *
 * Reading, in the sorted (or shuffled, or sharded) order:
 * - an uncompressed tar (the usual case for big datasets: JPEGs do not compress), also a tar
 *   of uncompressed tars: one pread of the member at its recorded offset, O(1) per member
 *   whatever the order. Listing it reads only the headers (libarchive seeks over the data).
 * - a compressed archive (or a compressed inner tar) cannot seek: it is streamed. Reading item
 *   i lays out a window of the next items in the wanted order (at most 64 MiB or 16,384
 *   members) and streams on until member i comes, which is read straight into the caller's
 *   buffer; window members the stream passes on the way are copied into the window and handed
 *   out from memory when their turn comes. The stream goes on while the window's members lie
 *   ahead of it and restarts from the top only when one lies behind. A sorted archive
 *   (Python's tarfile, `tar --sort=name`) is thus read in one pass after the listing pass,
 *   buffering nothing; an unsorted one (plain `tar`: readdir order) or a shuffle costs about
 *   one pass per 64 MiB of members. Memory stays bounded by the window.
 *
 * Skipped and named (ld_unlisted_why): '..' or absolute names, links, devices and FIFOs,
 * sparse files, hidden names, names not like images, loose images at the top level. A member
 * over 256 MiB (or over the caller's file limit, which max_pixels sets) is listed, then refused
 * on reading, by name, like an image over max_pixels: it would be held whole in memory, and a
 * compressed archive's declared sizes cost nothing to forge. 256 MiB holds any JPEG or WebP
 * within the default 100 Mpx, a PNG of a photo, and an uncompressed 8-bit RGB image up to 89 Mpx.
 */
#include "source/src_internal.h"

#include "codec/codec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t ld__source_archive_suffix(const char *name)
{
    static const char *const suffix[] = {".tar",     ".tar.gz", ".tgz",    ".tar.bz2",
                                         ".tbz2",    ".tbz",    ".tar.xz", ".txz",
                                         ".tar.zst", ".tzst",   ".taz",    ".tar.lz4"};
    const size_t len = strlen(name);
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        const size_t n = strlen(suffix[i]);
        if (len > n && strcasecmp(name + len - n, suffix[i]) == 0) return n;
    }
    return 0;
}

#ifndef LD_HAVE_ARCHIVE

int ld__source_open_archive(const char *archive, unsigned flags, ld_source_warn_fn warn,
                            ld_source_note_fn note, ld_source_tick_fn tick, void *user,
                            ld_source **out, ld_err *e)
{
    (void)flags, (void)warn, (void)note, (void)tick, (void)user;
    *out = NULL;
    return ld__err(e, LD_ENOTSUP,
                   "%s: tar archives as input need libdata built with libarchive "
                   "(LIBDATA_WITH_ARCHIVE=ON, package libarchive-dev); extract it and convert "
                   "the folder instead",
                   archive);
}

int ld__tar_read(ld_source *s, size_t i, const char *path, ld_buf *out, size_t max_bytes, ld_err *e)
{
    (void)s, (void)i, (void)out, (void)max_bytes;
    return ld__err(e, LD_ENOTSUP, "%s: archive support not built", path);
}

void ld__tar_free(ld_tar *t)
{
    (void)t;
}

void ld__tar_set_window(ld_source *s, uint64_t bytes)
{
    (void)s, (void)bytes;
}

#else /* LD_HAVE_ARCHIVE */

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 65536
#define MEMBER_MAX ((uint64_t)256 << 20)
#define WINDOW_BYTES ((uint64_t)64 << 20)
#define WINDOW_ITEMS 16384

/* Where an item's member is (stored after its relative path, ld__source_add_item_values). */
typedef struct tar_pos {
    uint64_t offset;  /* of its data in the archive file (meaningful when nothing is compressed) */
    uint64_t size;    /* its size as the header says */
    uint64_t ordinal; /* its place in the walk (walk_next), to find it again in a stream */
} tar_pos;

static tar_pos pos_of(const ld_source *s, size_t i)
{
    tar_pos p;
    memcpy(&p, ld__source_extra(s, i), sizeof p);
    return p;
}

/* ---- the walk: every entry of the archive and of its inner archives, in stream order ---- */

enum { ENT_PLAIN = 0, ENT_INNER_START = 1 };

typedef struct walk {
    const char *archive; /* the path, for messages */
    int fd;              /* the archive: libarchive reads it, inner archives pread from it */
    struct archive *outer, *inner;
    int outer_plain;                            /* the outer archive has no compression */
    uint64_t inner_base, inner_size, inner_pos; /* an inner archive's bytes in the file */
    ld_buf inner_name;                          /* its member name, NUL-terminated */
    size_t class_off, class_len;                /* its class name in inner_name ("./a.tar": a) */
    uint64_t ordinal;                           /* of the next entry returned */
    int compressed;                             /* some archive had a filter: streaming reads */
    ld_source_warn_fn warn;                     /* NULL: silent (the listing said it already) */
    void *user;
    uint8_t *block;
} walk;

typedef struct entry {
    struct archive_entry *ae;
    struct archive *from; /* read the data from here */
    int kind;             /* ENT_PLAIN or ENT_INNER_START (ae is the inner archive itself) */
    int inner;            /* a member of an inner archive */
    uint64_t offset;      /* of the data in the archive file */
    uint64_t ordinal;
} entry;

/* libarchive's message of the last failure ("" never NULL). */
static const char *aerr(struct archive *a)
{
    const char *m = archive_error_string(a);
    return m ? m : "unknown error";
}

static const char *entry_name(struct archive_entry *ae)
{
    const char *n = archive_entry_pathname(ae);
    return n ? n : archive_entry_pathname_utf8(ae);
}

/* Tar formats only (a .zip is not a tar); every compression libarchive reads. */
static struct archive *new_reader(void)
{
    struct archive *a = archive_read_new();
    if (!a) return NULL;
    if (archive_read_support_format_tar(a) != ARCHIVE_OK ||
        archive_read_support_filter_all(a) < ARCHIVE_WARN) {
        archive_read_free(a);
        return NULL;
    }
    return a;
}

/* An inner archive of an uncompressed outer one reads its bytes from the file directly, and
 * skips by moving a position: listing it reads only its headers. */
static la_ssize_t inner_pread(struct archive *a, void *user, const void **buf)
{
    walk *w = user;
    const uint64_t left = w->inner_size - w->inner_pos;
    const size_t want = left < BLOCK ? (size_t)left : BLOCK;
    ssize_t got;
    do
        got = pread(w->fd, w->block, want, (off_t)(w->inner_base + w->inner_pos));
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        archive_set_error(a, errno, "read error: %s", strerror(errno));
        return -1;
    }
    w->inner_pos += (uint64_t)got;
    *buf = w->block;
    return got;
}

static la_int64_t inner_skip(struct archive *a, void *user, la_int64_t request)
{
    walk *w = user;
    (void)a;
    const uint64_t left = w->inner_size - w->inner_pos;
    const uint64_t n = request < 0 ? 0 : (uint64_t)request < left ? (uint64_t)request : left;
    w->inner_pos += n;
    return (la_int64_t)n;
}

/* Of a compressed outer archive: the inner archive's bytes are the outer member's data. */
static la_ssize_t inner_stream(struct archive *a, void *user, const void **buf)
{
    walk *w = user;
    la_ssize_t got = archive_read_data(w->outer, w->block, BLOCK);
    if (got < 0) {
        archive_set_error(a, -1, "%s", aerr(w->outer));
        return -1;
    }
    *buf = w->block;
    return got;
}

/* "./a/b" -> "a/b", "cat/" -> "cat". Returns the start; *len its length. */
static const char *normalize(const char *name, size_t *len)
{
    while (name[0] == '.' && name[1] == '/') {
        name += 2;
        while (*name == '/')
            name++;
    }
    size_t n = strlen(name);
    while (n > 0 && name[n - 1] == '/')
        n--;
    *len = n;
    return name;
}

/* A top-level member that is a tar: read as an inner archive (one level deep). */
static int is_inner_archive(struct archive_entry *ae, size_t *stem)
{
    const char *name = entry_name(ae);
    if (!name || archive_entry_filetype(ae) != AE_IFREG || archive_entry_hardlink(ae)) return 0;
    size_t len;
    name = normalize(name, &len);
    if (len == 0 || name[len] != '\0' || memchr(name, '/', len) || name[0] == '.') return 0;
    const size_t suf = ld__source_archive_suffix(name);
    *stem = len - suf;
    return suf && *stem > 0;
}

/* The class name of the open inner archive (class_len bytes, not NUL-terminated). */
static const char *inner_class(const walk *w)
{
    return (const char *)w->inner_name.p + w->class_off;
}

static void walk_close_inner(walk *w)
{
    if (w->inner) archive_read_free(w->inner);
    w->inner = NULL;
}

static void walk_close(walk *w)
{
    walk_close_inner(w);
    if (w->outer) archive_read_free(w->outer);
    w->outer = NULL;
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    ld__buf_free(&w->inner_name);
    free(w->block);
    w->block = NULL;
}

static int walk_open(walk *w, const char *archive, ld_err *e)
{
    int rc = LD_OK;
    struct stat st;
    w->archive = archive;
    w->fd = open(archive, O_RDONLY | O_CLOEXEC);
    LD_CHECK(e, w->fd >= 0, LD_EIO, "%s: cannot open archive: %s", archive, strerror(errno));
    LD_CHECK(e, fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode), LD_EIO, "%s: not a regular file",
             archive);
    w->block = malloc(BLOCK);
    w->outer = new_reader();
    LD_CHECK(e, w->block && w->outer, LD_ENOMEM, "%s: out of memory", archive);
    LD_CHECK(e, archive_read_open_fd(w->outer, w->fd, BLOCK) == ARCHIVE_OK, LD_EFORMAT,
             "%s: not a tar archive: %s", archive, aerr(w->outer));
    return LD_OK;
fail:
    walk_close(w);
    return rc;
}

/* Open the inner archive `ae` of the outer one. 1 if open, 0 if it is no tar (warned; strict:
 * LD_EFORMAT). */
static int open_inner(walk *w, struct archive_entry *ae, size_t stem, int strict, ld_err *e)
{
    int rc = LD_OK;
    const char *name = entry_name(ae);
    w->inner_name.len = 0;
    LD_CHECK(e, ld__buf_append(&w->inner_name, name, strlen(name) + 1) == LD_OK, LD_ENOMEM,
             "out of memory");
    w->class_off = (size_t)(normalize(name, &(size_t){0}) - name);
    w->class_len = stem;
    w->inner_base = (uint64_t)archive_filter_bytes(w->outer, 0);
    w->inner_size = (uint64_t)archive_entry_size(ae);
    w->inner_pos = 0;
    w->inner = new_reader();
    LD_CHECK(e, w->inner, LD_ENOMEM, "out of memory");
    int r = w->outer_plain ? archive_read_open2(w->inner, w, NULL, inner_pread, inner_skip, NULL)
                           : archive_read_open2(w->inner, w, NULL, inner_stream, NULL, NULL);
    if (r != ARCHIVE_OK) {
        LD_CHECK(e, !strict, LD_EFORMAT, "%s/%s: not a tar archive: %s (stopped: strict)",
                 w->archive, name, aerr(w->inner));
        ld__source_warnf(w->warn, w->user, "%s/%s: not read as an inner archive: %s", w->archive,
                         name, aerr(w->inner));
        walk_close_inner(w);
        return 0;
    }
    return 1;
fail:
    walk_close_inner(w);
    return rc;
}

/* The next entry: 1, 0 at the end, < 0 when the outer archive is corrupt or truncated (the
 * walk cannot go on; e says where). A corrupt inner archive ends that archive with a warning,
 * or, strict, is the error. */
static int walk_next(walk *w, int strict, entry *out, ld_err *e)
{
    int rc = LD_OK;
    struct archive_entry *ae;
    int retries = 0; /* libarchive skipped a bad header: go on, but not forever */
    for (;;) {
        if (w->inner) {
            const int r = archive_read_next_header(w->inner, &ae);
            if (r == ARCHIVE_OK || r == ARCHIVE_WARN) {
                if (archive_filter_count(w->inner) > 1) w->compressed = 1;
                *out = (entry){ae,
                               w->inner,
                               ENT_PLAIN,
                               1,
                               w->inner_base + (uint64_t)archive_filter_bytes(w->inner, 0),
                               w->ordinal++};
                return 1;
            }
            if (r == ARCHIVE_RETRY && ++retries < 1000) continue;
            LD_CHECK(e, r == ARCHIVE_EOF || !strict, LD_EFORMAT,
                     "%s/%s: corrupt or truncated inner archive: %s (stopped: strict)", w->archive,
                     (const char *)w->inner_name.p, aerr(w->inner));
            if (r != ARCHIVE_EOF)
                ld__source_warnf(
                    w->warn, w->user,
                    "%s/%s: corrupt or truncated inner archive, the rest of it is not read: %s",
                    w->archive, (const char *)w->inner_name.p, aerr(w->inner));
            walk_close_inner(w);
        }
        const int r = archive_read_next_header(w->outer, &ae);
        if (r == ARCHIVE_EOF) return 0;
        if (r == ARCHIVE_RETRY && ++retries < 1000) continue;
        LD_CHECK(e, r == ARCHIVE_OK || r == ARCHIVE_WARN, LD_EFORMAT,
                 "%s: corrupt or truncated archive after %llu entries: %s%s", w->archive,
                 (unsigned long long)w->ordinal, aerr(w->outer),
                 strict ? " (stopped: strict)" : "");
        w->outer_plain = archive_filter_count(w->outer) <= 1;
        if (!w->outer_plain) w->compressed = 1;
        size_t stem;
        int kind = ENT_PLAIN;
        if (is_inner_archive(ae, &stem)) {
            LD_TRY(open_inner(w, ae, stem, strict, e));
            kind = rc ? ENT_INNER_START : ENT_PLAIN;
            rc = LD_OK;
        }
        *out = (entry){ae,          w->outer, kind, 0, (uint64_t)archive_filter_bytes(w->outer, 0),
                       w->ordinal++};
        return 1;
    }
fail:
    return rc;
}

/* ---- the listing pass ---------------------------------------------------------------- */

typedef struct lister {
    ld_source *s;
    walk w;
    unsigned flags;
    ld_source_note_fn note;
    ld_source_tick_fn tick;
    void *user;
    ld_buf rel;             /* the relative path being built */
    ld_buf tmp;             /* a note's path */
    const char *last_class; /* the class added last (arena), to add each one once in a row */
    size_t last_class_len;
} lister;

static void noted(lister *l, int why, const entry *en)
{
    l->s->unlisted[why]++;
    if (!l->note) return;
    l->tmp.len = 0;
    const char *name = entry_name(en->ae);
    if (ld__buf_printf(&l->tmp, "%s/%s%s%s", l->w.archive,
                       en->inner ? (const char *)l->w.inner_name.p : "", en->inner ? "/" : "",
                       name ? name : "?") < 0 ||
        ld__buf_append(&l->tmp, "", 1) < 0)
        return;
    l->note(l->user, why, (const char *)l->tmp.p);
}

static int add_class(lister *l, const char *name, size_t len)
{
    if (l->last_class && l->last_class_len == len && !memcmp(l->last_class, name, len))
        return LD_OK;
    if (ld__source_add_class(l->s, name, len) < 0) return LD_ENOMEM;
    l->last_class = l->s->classes[l->s->n_classes - 1];
    l->last_class_len = len;
    return LD_OK;
}

/* Why a member is not an image to convert (an ld_unlisted_why), or -1 when it is one. */
static int why_not(const entry *en, const char *name, size_t len, int flat)
{
    struct archive_entry *ae = en->ae;
    if (name[0] == '/') return LD_UNLISTED_UNSAFE;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && name[j] != '/')
            j++;
        if (j - i == 2 && name[i] == '.' && name[i + 1] == '.') return LD_UNLISTED_UNSAFE;
        i = j + 1;
    }
    for (size_t i = 0; i < len; i++)
        if (name[i] == '.' && (i == 0 || name[i - 1] == '/')) return LD_UNLISTED_HIDDEN;
    if (archive_entry_hardlink(ae) || archive_entry_filetype(ae) == AE_IFLNK)
        return LD_UNLISTED_LINK;
    if (archive_entry_filetype(ae) != AE_IFREG || archive_entry_sparse_count(ae) > 0)
        return LD_UNLISTED_SPECIAL;
    const char *base = name + len;
    while (base > name && base[-1] != '/')
        base--;
    if (!ld__img_name_known(base)) return LD_UNLISTED_NAME;
    if (!flat && !en->inner && base == name) return LD_UNLISTED_LOOSE;
    return -1;
}

static int list_entry(lister *l, const entry *en, ld_err *e)
{
    int rc = LD_OK;
    const int flat = (l->flags & LD_SRC_FLAT) != 0;
    const char *raw = entry_name(en->ae);
    size_t len;
    if (en->kind == ENT_INNER_START)
        return flat ? LD_OK : add_class(l, inner_class(&l->w), l->w.class_len);
    if (!raw) { /* a name libarchive cannot give in any encoding */
        noted(l, LD_UNLISTED_NAME, en);
        return LD_OK;
    }
    const char *name = normalize(raw, &len);
    if (len == 0) return LD_OK; /* "./" */
    size_t stem;
    if (!flat && !en->inner && is_inner_archive(en->ae, &stem))
        /* an inner tar that could not be read (walk_next warned) keeps its class and label
         * with no images, as an unreadable class folder does */
        return add_class(l, name, stem) == LD_OK ? LD_OK : ld__err(e, LD_ENOMEM, "out of memory");
    if (archive_entry_filetype(en->ae) == AE_IFDIR) {
        /* a top-level folder is a class, with images or not, as in folder mode */
        if (!flat && !en->inner && !memchr(name, '/', len) && name[0] != '.')
            LD_CHECK(e, add_class(l, name, len) == LD_OK, LD_ENOMEM, "out of memory");
        return LD_OK;
    }
    const int why = why_not(en, name, len, flat);
    if (why >= 0) {
        noted(l, why, en);
        return LD_OK;
    }
    l->rel.len = 0;
    if (en->inner) {
        LD_CHECK(e,
                 ld__buf_append(&l->rel, inner_class(&l->w), l->w.class_len) == LD_OK &&
                     ld__buf_append(&l->rel, "/", 1) == LD_OK,
                 LD_ENOMEM, "out of memory");
    }
    LD_CHECK(e, ld__buf_append(&l->rel, name, len) == LD_OK, LD_ENOMEM, "out of memory");
    const tar_pos p = {en->offset, (uint64_t)archive_entry_size(en->ae), en->ordinal};
    LD_CHECK(e,
             ld__source_add_item_values(l->s, (const char *)l->rel.p, l->rel.len, 0, &p,
                                        sizeof p) == LD_OK,
             LD_ENOMEM, "out of memory");
    if (!flat) {
        const char *slash = memchr(l->rel.p, '/', l->rel.len);
        LD_CHECK(e, add_class(l, (const char *)l->rel.p, (size_t)(slash - (char *)l->rel.p)) == 0,
                 LD_ENOMEM, "out of memory");
    }
fail:
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Classes sorted and unique (they were added as met, each once per run of members). */
static void sort_classes(ld_source *s)
{
    if (s->n_classes < 2) return;
    qsort(s->classes, s->n_classes, sizeof *s->classes, cmp_str);
    size_t k = 1;
    for (size_t i = 1; i < s->n_classes; i++)
        if (strcmp(s->classes[i], s->classes[k - 1])) s->classes[k++] = s->classes[i];
    s->n_classes = k;
}

/* After sorting by path: of members with the same path keep the last in the archive, as
 * extracting it would (tar -r appends a newer copy). */
static void keep_last_copies(ld_source *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (k && !strcmp(ld__source_rel(s, i), ld__source_rel(s, k - 1))) {
            if (pos_of(s, i).ordinal > pos_of(s, k - 1).ordinal) s->items[k - 1] = s->items[i];
            continue;
        }
        s->items[k++] = s->items[i];
    }
    s->n = k;
}

/* strcmp(cls, the first len bytes of key as a string) */
static int cmp_prefix(const char *cls, const char *key, size_t len)
{
    const int c = strncmp(cls, key, len);
    return c ? c : cls[len] != '\0';
}

/* Label = the index of the item's first path component among the sorted classes (every
 * item's class is there: list_entry added it). */
static void set_labels(ld_source *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const char *rel = ld__source_rel(s, i);
        const size_t len = (size_t)(strchr(rel, '/') - rel);
        size_t lo = 0, hi = s->n_classes;
        while (lo < hi) {
            const size_t mid = lo + (hi - lo) / 2;
            if (cmp_prefix(s->classes[mid], rel, len) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        ld__source_set_label(s, i, (int32_t)lo);
    }
}

struct ld_tar {
    char *path;
    int fd;         /* for pread; -1 until the first read */
    int compressed; /* streaming reads through the window */
    int strict;
    uint64_t n_ordinals;
    uint64_t window_bytes; /* WINDOW_BYTES; tests make it small */
    /* compressed: the stream, the item of each ordinal, the window of items [lo, hi) */
    walk w;
    int w_open;
    uint32_t *item_of; /* ordinal -> item index, or UINT32_MAX */
    size_t lo, hi;
    struct window_entry *win;
    size_t win_cap;
    ld_buf data;
};

typedef struct window_entry {
    uint64_t off, size; /* of its bytes in data */
    int rc;             /* LD_OK, 1 = not found yet, or why it could not be read */
    char *msg;          /* and what went wrong */
} window_entry;

void ld__tar_free(ld_tar *t)
{
    if (!t) return;
    if (t->w_open) walk_close(&t->w);
    if (t->fd >= 0) close(t->fd);
    for (size_t i = 0; t->win && i < t->hi - t->lo; i++)
        free(t->win[i].msg);
    free(t->win);
    free(t->item_of);
    ld__buf_free(&t->data);
    free(t->path);
    free(t);
}

/* The single class of flat mode: the archive's name without folder and suffix. */
static int flat_class(ld_source *s, const char *archive)
{
    const char *base = strrchr(archive, '/');
    base = base ? base + 1 : archive;
    size_t len = strlen(base) - ld__source_archive_suffix(base);
    return ld__source_add_class(s, len ? base : "0", len ? len : 1);
}

int ld__source_open_archive(const char *archive, unsigned flags, ld_source_warn_fn warn,
                            ld_source_note_fn note, ld_source_tick_fn tick, void *user,
                            ld_source **out, ld_err *e)
{
    int rc = LD_OK;
    lister l = {.flags = flags, .note = note, .tick = tick, .user = user};
    l.w.fd = -1;
    l.w.warn = warn;
    l.w.user = user;
    const int strict = (flags & LD_SRC_STRICT) != 0;
    *out = NULL;
    LD_CHECK(e, archive && *archive, LD_EINVAL, "no input archive given");
    LD_CHECK(e, ld__source_new(&l.s) == 0 && ld__source_set_root(l.s, archive) == 0, LD_ENOMEM,
             "out of memory");
    l.s->tar = calloc(1, sizeof *l.s->tar);
    LD_CHECK(e, l.s->tar && (l.s->tar->path = ld__strdup(archive)), LD_ENOMEM, "out of memory");
    l.s->tar->fd = -1;
    l.s->tar->strict = strict;
    l.s->tar->window_bytes = WINDOW_BYTES;
    if (flags & LD_SRC_FLAT) LD_CHECK(e, flat_class(l.s, archive) == 0, LD_ENOMEM, "out of memory");
    LD_TRY(walk_open(&l.w, archive, e));
    for (;;) {
        entry en;
        LD_CHECK(e, (l.w.ordinal & 4095) || !tick || !tick(user, l.s->n), LD_ECANCELED,
                 "canceled while listing the archive");
        int r = walk_next(&l.w, strict, &en, e);
        if (r == 0) break;
        if (r < 0 && (strict || r == LD_ENOMEM)) {
            rc = r;
            if (r == LD_EFORMAT) ld__err_reason(e, LD_WHY_STRICT);
            goto fail;
        }
        if (r < 0) { /* what was listed before stays; its last member may be cut short */
            ld__source_warnf(l.w.warn, l.w.user, "%s; the members listed before are converted",
                             e->msg);
            ld__err_clear(e);
            break;
        }
        LD_TRY(list_entry(&l, &en, e));
    }
    l.s->tar->compressed = l.w.compressed;
    l.s->tar->n_ordinals = l.w.ordinal;
    LD_CHECK(e, l.w.ordinal < UINT32_MAX && l.s->n_classes < (size_t)INT32_MAX, LD_ELIMIT,
             "%s: too many members", archive);
    if (!(flags & LD_SRC_FLAT)) sort_classes(l.s);
    ld__source_sort_items(l.s);
    keep_last_copies(l.s);
    if (!(flags & LD_SRC_FLAT)) set_labels(l.s);
    *out = l.s;
    l.s = NULL;
fail:
    walk_close(&l.w);
    ld__source_free(l.s);
    ld__buf_free(&l.rel);
    ld__buf_free(&l.tmp);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------- */

void ld__tar_set_window(ld_source *s, uint64_t bytes)
{
    if (s && s->tar) s->tar->window_bytes = bytes;
}

/* Uncompressed: the member's bytes are where the listing found them. */
static int read_at(ld_tar *t, const tar_pos *p, const char *path, ld_buf *out, ld_err *e)
{
    int rc = LD_OK;
    if (t->fd < 0) {
        t->fd = open(t->path, O_RDONLY | O_CLOEXEC);
        LD_CHECK(e, t->fd >= 0, LD_EIO, "%s: cannot open archive: %s", t->path, strerror(errno));
    }
    out->len = 0;
    LD_CHECK(e, ld__buf_reserve(out, (size_t)p->size + 1) == LD_OK, LD_ENOMEM,
             "%s: out of memory reading %llu bytes", path, (unsigned long long)p->size);
    while (out->len < p->size) {
        ssize_t n = pread(t->fd, out->p + out->len, (size_t)p->size - out->len,
                          (off_t)(p->offset + out->len));
        if (n < 0 && errno == EINTR) continue;
        LD_CHECK(e, n >= 0, LD_EIO, "%s: read error: %s", path, strerror(errno));
        LD_CHECK(e, n > 0, LD_EFORMAT,
                 "%s: archive truncated: the member has %zu of its %llu bytes", path, out->len,
                 (unsigned long long)p->size);
        out->len += (size_t)n;
    }
fail:
    return rc;
}

static void window_clear(ld_tar *t)
{
    for (size_t i = 0; t->win && i < t->hi - t->lo; i++) {
        free(t->win[i].msg);
        t->win[i].msg = NULL;
    }
    t->lo = t->hi = 0;
}

/* Lay out the window of items [first, ...) in t->data, as many as window_bytes holds (at
 * least one); a member is copied there only when the stream passes it before it is wanted. Members
 * over `limit` take no room: reading refuses them before the window. */
static int window_layout(ld_source *s, size_t first, uint64_t limit, uint64_t *min_ordinal)
{
    ld_tar *t = s->tar;
    size_t hi = first;
    uint64_t bytes = 0;
    *min_ordinal = UINT64_MAX;
    while (hi < s->n && hi - first < WINDOW_ITEMS) {
        const tar_pos p = pos_of(s, hi);
        const uint64_t size = p.size > limit ? 0 : p.size;
        if (hi > first && bytes + size > t->window_bytes) break;
        bytes += size;
        if (p.ordinal < *min_ordinal) *min_ordinal = p.ordinal;
        hi++;
    }
    if (hi - first > t->win_cap) {
        window_entry *w = realloc(t->win, (hi - first) * sizeof *w);
        if (!w) return LD_ENOMEM;
        t->win = w;
        t->win_cap = hi - first;
    }
    if (ld__buf_reserve(&t->data, (size_t)bytes + 1) < 0) return LD_ENOMEM;
    bytes = 0;
    for (size_t i = first; i < hi; i++) {
        const tar_pos p = pos_of(s, i);
        const uint64_t size = p.size > limit ? 0 : p.size;
        t->win[i - first] = (window_entry){bytes, size, 1, NULL};
        bytes += size;
    }
    t->lo = first;
    t->hi = hi;
    return LD_OK;
}

/* Read the stream's current member (size bytes, as listed) into dst. LD_OK, or LD_EFORMAT
 * with *msg (allocated) saying why. */
static int read_member(const entry *en, uint8_t *dst, uint64_t size, char **msg)
{
    uint64_t got = 0;
    if ((uint64_t)archive_entry_size(en->ae) != size) {
        *msg = ld__strdup("the archive changed since it was listed");
        return LD_EFORMAT;
    }
    while (got < size) {
        la_ssize_t n = archive_read_data(en->from, dst + got, (size_t)(size - got));
        if (n < 0) {
            *msg = ld__asprintf("corrupt or truncated archive member: %s", aerr(en->from));
            return LD_EFORMAT;
        }
        if (n == 0) break;
        got += (uint64_t)n;
    }
    if (got < size) {
        *msg = ld__asprintf("archive truncated: the member has %llu of its %llu bytes",
                            (unsigned long long)got, (unsigned long long)size);
        return LD_EFORMAT;
    }
    return LD_OK;
}

/* Every member of the window still to come fails with `why` (the stream ended or broke). */
static void window_fail_pending(ld_tar *t, const char *why)
{
    for (size_t k = 0; k < t->hi - t->lo; k++) {
        if (t->win[k].rc != 1) continue;
        t->win[k].rc = LD_EFORMAT;
        t->win[k].msg = ld__strdup(why);
    }
}

/* Compressed: a new window that starts at item `first`. The stream goes on from where it is
 * when every member of the window lies ahead of it, else it starts again from the top. */
static int window_start(ld_source *s, size_t first, uint64_t limit, ld_err *e)
{
    int rc = LD_OK;
    ld_tar *t = s->tar;
    uint64_t min_ordinal;
    window_clear(t);
    LD_CHECK(e, window_layout(s, first, limit, &min_ordinal) == LD_OK, LD_ENOMEM,
             "%s: out of memory", t->path);
    if (t->w_open && t->w.ordinal > min_ordinal) {
        walk_close(&t->w);
        t->w_open = 0;
    }
    if (!t->w_open) {
        memset(&t->w, 0, sizeof t->w);
        t->w.fd = -1;
        LD_TRY(walk_open(&t->w, t->path, e));
        t->w_open = 1;
    }
fail:
    return rc;
}

/* Compressed: stream on until item i is read into out (an archive in the wanted order needs
 * nothing else), keeping the members of the window met on the way. */
static int window_pull(ld_source *s, size_t i, const char *path, ld_buf *out, ld_err *e)
{
    int rc = LD_OK;
    ld_tar *t = s->tar;
    window_entry *want = &t->win[i - t->lo];
    char *msg = NULL;
    while (want->rc == 1) {
        entry en;
        ld_err werr;
        const int r = t->w_open ? walk_next(&t->w, t->strict, &en, &werr) : 0;
        if (r <= 0) {
            window_fail_pending(t, r < 0 ? werr.msg
                                         : "not found on reading the archive again (it "
                                           "changed since it was listed)");
            if (t->w_open) walk_close(&t->w);
            t->w_open = 0;
            break;
        }
        const uint32_t item = t->item_of[en.ordinal];
        if (item == UINT32_MAX || item < t->lo || item >= t->hi) continue;
        window_entry *we = &t->win[item - t->lo];
        if (item == i) { /* straight into the caller's buffer */
            out->len = 0;
            LD_CHECK(e, ld__buf_reserve(out, (size_t)we->size + 1) == LD_OK, LD_ENOMEM,
                     "%s: out of memory", path);
            we->rc = read_member(&en, out->p, we->size, &msg);
            LD_CHECK(e, we->rc == LD_OK, LD_EFORMAT, "%s: %s", path, msg ? msg : "out of memory");
            out->len = (size_t)we->size;
            return LD_OK;
        }
        we->rc = read_member(&en, t->data.p + we->off, we->size, &we->msg);
    }
    LD_CHECK(e, want->rc == LD_OK, LD_EFORMAT, "%s: %s", path,
             want->msg ? want->msg : "out of memory");
    out->len = 0;
    LD_CHECK(e, ld__buf_append(out, t->data.p + want->off, (size_t)want->size) == LD_OK, LD_ENOMEM,
             "%s: out of memory", path);
fail:
    free(msg);
    return rc;
}

/* ordinal -> item, once the order is final (after shuffle and slice, before reading). */
static int map_ordinals(ld_source *s)
{
    ld_tar *t = s->tar;
    size_t bytes;
    if (!ld__mul_size((size_t)t->n_ordinals + 1, sizeof *t->item_of, &bytes)) return LD_ENOMEM;
    t->item_of = malloc(bytes);
    if (!t->item_of) return LD_ENOMEM;
    memset(t->item_of, 0xff, bytes);
    for (size_t i = 0; i < s->n; i++)
        t->item_of[pos_of(s, i).ordinal] = (uint32_t)i;
    return LD_OK;
}

int ld__tar_read(ld_source *s, size_t i, const char *path, ld_buf *out, size_t max_bytes, ld_err *e)
{
    int rc = LD_OK;
    ld_tar *t = s->tar;
    LD_CHECK(e, i < s->n, LD_EINVAL, "%s: no such item", path);
    const tar_pos p = pos_of(s, i);
    const uint64_t limit = max_bytes < MEMBER_MAX ? max_bytes : MEMBER_MAX;
    LD_CHECK(e, p.size <= limit, LD_ELIMIT, "%s: archive member too large (%llu bytes, limit %llu)",
             path, (unsigned long long)p.size, (unsigned long long)limit);
    if (!t->compressed) return read_at(t, &p, path, out, e);
    if (!t->item_of) LD_CHECK(e, map_ordinals(s) == LD_OK, LD_ENOMEM, "%s: out of memory", path);
    if (i < t->lo || i >= t->hi) LD_TRY(window_start(s, i, limit, e));
    LD_TRY(window_pull(s, i, path, out, e));
fail:
    return rc;
}

#endif /* LD_HAVE_ARCHIVE */
