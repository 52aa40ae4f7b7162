/* Sources: folder trees and list files -> a deterministic item list with labels. */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_tmp.h"
#include "source/source.h"

TestSuite(source, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 30);

/* Create ld_tmp/rel (and its parent folders) with a few bytes in it. */
static void touch(const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", ld_tmp, rel);
    for (char *q = p + strlen(ld_tmp) + 1; *q; q++) {
        if (*q == '/') {
            *q = '\0';
            mkdir(p, 0755);
            *q = '/';
        }
    }
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f, "%s: %s", p, strerror(errno));
    fputs("x", f);
    fclose(f);
}

static void mkdir_rel(const char *rel)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", ld_tmp, rel);
    cr_assert_eq(mkdir(p, 0755), 0, "%s: %s", p, strerror(errno));
}

static void write_text(const char *rel, const char *text, char *path_out, size_t cap)
{
    snprintf(path_out, cap, "%s/%s", ld_tmp, rel);
    FILE *f = fopen(path_out, "wb");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

typedef struct warns {
    int n;
    char first[1024], last[1024];
} warns;

static void on_warn(void *user, const char *msg)
{
    warns *w = user;
    if (w->n++ == 0) snprintf(w->first, sizeof w->first, "%s", msg);
    snprintf(w->last, sizeof w->last, "%s", msg);
}

/* Item i with its full path composed into a buffer shared by all calls (the path is valid
 * until the next call; tests run one per process, so the buffer is not a leak). */
static ld_item item_at(const ld_source *s, size_t i)
{
    static ld_buf path;
    ld_item it;
    int rc = ld__source_get(s, i, &path, &it);
    cr_assert_eq(rc, LD_OK, "item %zu: rc %d", i, rc);
    cr_assert_str_eq(it.rel, ld__source_rel(s, i));
    cr_assert_eq(it.label, ld__source_label(s, i));
    return it;
}

Test(source, fixture_tree_gives_sorted_classes_and_paths)
{
    ld_err e = {0};
    ld_source *s = NULL;
    int rc = ld__source_open_dir(LD_TEST_DATA "/tree", NULL, NULL, NULL, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_dir: %s", e.msg);
    static const char *want[] = {"bird/h.jpg", "bird/i.png",     "car/e.Jpeg",
                                 "car/f.PNG",  "car/g.jpg",      "cat/a.jpg",
                                 "cat/b.JPG",  "cat/sub/c.jpeg", "cat/sub/deeper/d.png"};
    static const int labels[] = {0, 0, 1, 1, 1, 2, 2, 2, 2};
    cr_assert_eq(ld__source_count(s), 9, "found %zu items", ld__source_count(s));
    for (size_t i = 0; i < 9; i++) {
        ld_item it = item_at(s, i);
        cr_assert_str_eq(it.rel, want[i]);
        cr_assert_eq(it.label, labels[i], "%s: label %d", it.rel, it.label);
        char full[512];
        snprintf(full, sizeof full, "%s/%s", LD_TEST_DATA "/tree", want[i]);
        cr_assert_str_eq(it.path, full);
        cr_assert_eq(access(it.path, R_OK), 0, "%s not readable", it.path);
    }
    ld_item none;
    ld_buf buf = {0};
    cr_assert_eq(ld__source_get(s, 9, &buf, &none), LD_EINVAL);
    cr_assert_null(none.path);
    cr_assert_null(ld__source_rel(s, 9));
    cr_assert_eq(ld__source_label(s, 9), -1);
    ld__buf_free(&buf);
    cr_assert_eq(ld__source_class_count(s), 3);
    cr_assert_str_eq(ld__source_class_name(s, 0), "bird");
    cr_assert_str_eq(ld__source_class_name(s, 1), "car");
    cr_assert_str_eq(ld__source_class_name(s, 2), "cat");
    cr_assert_null(ld__source_class_name(s, 3));
    ld__source_free(s);
}

Test(source, fixture_list_keeps_file_order_and_number_classes)
{
    ld_err e = {0};
    ld_source *s = NULL;
    int rc = ld__source_open_list(LD_TEST_DATA "/list.txt", LD_TEST_DATA "/tree/", NULL, NULL, NULL,
                                  &s, &e);
    cr_assert_eq(rc, LD_OK, "open_list: %s", e.msg);
    cr_assert_eq(ld__source_count(s), 9);
    ld_item it = item_at(s, 7);
    cr_assert_str_eq(it.rel, "cat/sub/c.jpeg");
    cr_assert_str_eq(it.path, LD_TEST_DATA "/tree/cat/sub/c.jpeg");
    cr_assert_eq(it.label, 2);
    cr_assert_eq(ld__source_class_count(s), 3);
    cr_assert_str_eq(ld__source_class_name(s, 2), "2");
    for (size_t i = 0; i < 9; i++)
        cr_assert_eq(access(item_at(s, i).path, R_OK), 0, "%s", item_at(s, i).path);
    ld__source_free(s);
}

Test(source, nested_hidden_mixed_case_and_root_images)
{
    touch("top.JPEG");
    touch("b/x/y/z/deep.PnG");
    touch("b/shallow.jpg");
    touch("b/.hidden.jpg");
    touch("b/.git/inside.jpg");
    touch("b/readme.txt");
    touch("b/noext");
    touch("b/jpg");
    touch("a/one.jpeg");
    touch("a/dir.jpg/inner.png"); /* a folder named like an image is a folder */
    mkdir_rel("empty");
    mkdir_rel(".hiddenclass");
    touch(".hiddenclass/h.jpg");
    touch("a/\xff\xfe raw bytes.jpg"); /* not UTF-8: just bytes */

    ld_err e = {0};
    ld_source *s = NULL;
    warns w = {0};
    int rc = ld__source_open_dir(ld_tmp, on_warn, NULL, &w, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_dir: %s", e.msg);
    /* classes: the folders by strcmp (empty ones included); the root image is skipped with a
     * warning instead of forming a class "." that shifted every label */
    cr_assert_eq(ld__source_class_count(s), 3);
    cr_assert_str_eq(ld__source_class_name(s, 0), "a");
    cr_assert_str_eq(ld__source_class_name(s, 1), "b");
    cr_assert_str_eq(ld__source_class_name(s, 2), "empty");
    static const char *want[] = {"a/dir.jpg/inner.png", "a/one.jpeg", "a/\xff\xfe raw bytes.jpg",
                                 "b/shallow.jpg", "b/x/y/z/deep.PnG"};
    static const int labels[] = {0, 0, 0, 1, 1};
    cr_assert_eq(ld__source_count(s), 5, "found %zu", ld__source_count(s));
    for (size_t i = 0; i < 5; i++) {
        cr_assert_str_eq(item_at(s, i).rel, want[i]);
        cr_assert_eq(item_at(s, i).label, labels[i], "%s", want[i]);
    }
    cr_assert_eq(w.n, 2, "warnings: %d, last: %s", w.n, w.last);
    cr_assert(strstr(w.first, "top.JPEG") && strstr(w.first, "use flat"), "warning: %s", w.first);
    cr_assert(strstr(w.last, "empty"), "warning: %s", w.last);
    ld__source_free(s);
}

Test(source, symlink_loop_is_reported_and_not_followed)
{
    touch("c/a.jpg");
    touch("c/sub/b.jpg");
    touch("real/r.png");
    char p[512], target[512];
    snprintf(p, sizeof p, "%s/c/sub/loop", ld_tmp);
    cr_assert_eq(symlink("..", p), 0, "%s", strerror(errno));
    snprintf(p, sizeof p, "%s/c/toroot", ld_tmp);
    cr_assert_eq(symlink(ld_tmp, p), 0);
    snprintf(p, sizeof p, "%s/c/linked", ld_tmp);
    snprintf(target, sizeof target, "%s/real", ld_tmp);
    cr_assert_eq(symlink(target, p), 0); /* a symlinked folder is followed */
    snprintf(p, sizeof p, "%s/c/link.jpg", ld_tmp);
    snprintf(target, sizeof target, "%s/real/r.png", ld_tmp);
    cr_assert_eq(symlink(target, p), 0); /* a symlinked file is followed */

    ld_err e = {0};
    ld_source *s = NULL;
    warns w = {0};
    int rc = ld__source_open_dir(ld_tmp, on_warn, NULL, &w, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_dir: %s", e.msg);
    cr_assert_eq(w.n, 2, "warnings: %d, last: %s", w.n, w.last);
    cr_assert(strstr(w.last, "loop"), "warning: %s", w.last);
    static const char *want[] = {"c/a.jpg", "c/link.jpg", "c/linked/r.png", "c/sub/b.jpg",
                                 "real/r.png"};
    cr_assert_eq(ld__source_count(s), 5, "found %zu", ld__source_count(s));
    for (size_t i = 0; i < 5; i++)
        cr_assert_str_eq(item_at(s, i).rel, want[i]);
    ld__source_free(s);
}

Test(source, missing_or_non_folder_root_is_an_error)
{
    ld_err e = {0};
    ld_source *s = NULL;
    char p[512];
    snprintf(p, sizeof p, "%s/nope", ld_tmp);
    cr_assert_eq(ld__source_open_dir(p, NULL, NULL, NULL, &s, &e), LD_EIO);
    cr_assert(strstr(e.msg, "nope"), "%s", e.msg);
    cr_assert_null(s);
    touch("file.jpg");
    snprintf(p, sizeof p, "%s/file.jpg", ld_tmp);
    cr_assert_eq(ld__source_open_dir(p, NULL, NULL, NULL, &s, &e), LD_EINVAL, "%s", e.msg);
    cr_assert(strstr(e.msg, "not a folder"), "%s", e.msg);
    /* a file holding "x" is a list of one unlabelled path */
    cr_assert_eq(ld__source_open_list(p, NULL, NULL, NULL, NULL, &s, &e), LD_OK, "%s", e.msg);
    cr_assert(ld__source_count(s) == 1 && ld__source_unlabelled(s));
    ld__source_free(s);
    snprintf(p, sizeof p, "%s/nolist.txt", ld_tmp);
    cr_assert_eq(ld__source_open_list(p, NULL, NULL, NULL, NULL, &s, &e), LD_EIO);
    cr_assert(strstr(e.msg, "nolist.txt"), "%s", e.msg);
}

Test(source, list_with_spaces_crlf_and_blank_lines)
{
    char list[512];
    write_text("l.txt",
               "my photos/a b.jpg 3\r\n"
               "\r\n"
               "plain.png 0\n"
               "   \n"
               "/abs/path.jpg 1  \n"
               "two  spaces.jpg  2\n"
               "last.jpg 2", /* no final newline */
               list, sizeof list);
    ld_err e = {0};
    ld_source *s = NULL;
    int rc = ld__source_open_list(list, "root", NULL, NULL, NULL, &s, &e);
    cr_assert_eq(rc, LD_OK, "open_list: %s", e.msg);
    cr_assert_eq(ld__source_count(s), 5);
    cr_assert_str_eq(item_at(s, 0).rel, "my photos/a b.jpg");
    cr_assert_str_eq(item_at(s, 0).path, "root/my photos/a b.jpg");
    cr_assert_eq(item_at(s, 0).label, 3);
    cr_assert_str_eq(item_at(s, 1).rel, "plain.png");
    cr_assert_eq(item_at(s, 1).label, 0);
    cr_assert_str_eq(item_at(s, 2).path, "/abs/path.jpg");
    cr_assert_str_eq(item_at(s, 3).rel, "two  spaces.jpg");
    cr_assert_str_eq(item_at(s, 4).rel, "last.jpg");
    cr_assert_eq(ld__source_class_count(s), 4);
    cr_assert_str_eq(ld__source_class_name(s, 3), "3");
    ld__source_free(s);

    /* no root: paths as written */
    cr_assert_eq(ld__source_open_list(list, NULL, NULL, NULL, NULL, &s, &e), LD_OK, "%s", e.msg);
    cr_assert_str_eq(item_at(s, 0).path, "my photos/a b.jpg");
    ld__source_free(s);
}

static void expect_bad_list(const char *text, int code, const char *where, const char *what)
{
    char list[512];
    write_text("bad.txt", text, list, sizeof list);
    ld_err e = {0};
    ld_source *s = (ld_source *)1;
    int rc = ld__source_open_list(list, NULL, NULL, NULL, NULL, &s, &e);
    cr_assert_eq(rc, code, "rc %d for %s: %s", rc, text, e.msg);
    cr_assert_null(s);
    cr_assert(strstr(e.msg, where), "message lacks '%s': %s", where, e.msg);
    cr_assert(strstr(e.msg, what), "message lacks '%s': %s", what, e.msg);
}

Test(source, bad_list_lines_name_the_file_and_line)
{
    expect_bad_list("a.jpg 1\nb.jpg\n", LD_EFORMAT, "bad.txt:2", "found 0");
    expect_bad_list("a.jpg 1\n\nb.jpg x\n", LD_EFORMAT, "bad.txt:3", "b.jpg x");
    expect_bad_list("a.jpg 1\r\nb.jpg 2x\r\n", LD_EFORMAT, "bad.txt:2", "2x");
    expect_bad_list("a.jpg 1\n 4\n", LD_EFORMAT, "bad.txt:2", "found 0");
    /* every line has the first line's number of values */
    expect_bad_list("a.jpg 1 2\nb.jpg 3\n", LD_EFORMAT, "bad.txt:2", "found 1");
    expect_bad_list("a.jpg 1 2\nb.jpg 3 4 5\n", LD_EFORMAT, "bad.txt:2", "more than 2");
    expect_bad_list("a.jpg\nb.jpg 3\n", LD_EFORMAT, "bad.txt:2", "more than 0");
    expect_bad_list("a.jpg 1e39\n", LD_EFORMAT, "bad.txt:1", "does not fit float32");
}

static void order_of(ld_source *s, const char **out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = item_at(s, i).rel;
}

Test(source, shuffle_is_a_seeded_permutation)
{
    /* 200 items so that two seeds colliding by chance is impossible in practice */
    char list[512];
    char *text = malloc(200 * 32);
    cr_assert_not_null(text);
    text[0] = '\0';
    for (int i = 0; i < 200; i++)
        sprintf(text + strlen(text), "f%03d.jpg %d\n", i, i % 7);
    write_text("many.txt", text, list, sizeof list);
    free(text);

    ld_err e = {0};
    ld_source *a = NULL, *b = NULL, *c = NULL;
    cr_assert_eq(ld__source_open_list(list, NULL, NULL, NULL, NULL, &a, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(ld__source_open_list(list, NULL, NULL, NULL, NULL, &b, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(ld__source_open_list(list, NULL, NULL, NULL, NULL, &c, &e), LD_OK, "%s", e.msg);
    ld__source_shuffle(a, 42);
    ld__source_shuffle(b, 42);
    ld__source_shuffle(c, 43);
    const char *oa[200], *ob[200], *oc[200];
    order_of(a, oa, 200);
    order_of(b, ob, 200);
    order_of(c, oc, 200);
    int same_ab = 1, same_ac = 1, moved = 0;
    for (int i = 0; i < 200; i++) {
        same_ab &= strcmp(oa[i], ob[i]) == 0;
        same_ac &= strcmp(oa[i], oc[i]) == 0;
        char want[16];
        snprintf(want, sizeof want, "f%03d.jpg", i);
        moved += strcmp(oa[i], want) != 0;
    }
    cr_assert(same_ab, "same seed gave different orders");
    cr_assert(!same_ac, "different seeds gave the same order");
    cr_assert_gt(moved, 150, "only %d of 200 items moved", moved);
    /* every item exactly once, and labels travel with their paths */
    int seen[200] = {0};
    for (int i = 0; i < 200; i++) {
        ld_item it = item_at(a, (size_t)i);
        int k = atoi(it.rel + 1);
        cr_assert(k >= 0 && k < 200);
        seen[k]++;
        cr_assert_eq(it.label, k % 7, "%s has label %d", it.rel, it.label);
    }
    for (int i = 0; i < 200; i++)
        cr_assert_eq(seen[i], 1, "item %d seen %d times", i, seen[i]);
    /* Known values (from an independent Python SplitMix64 + Fisher-Yates) pin the algorithm,
     * so the order is the same on every platform and in every release. */
    cr_assert_str_eq(oa[0], "f127.jpg");
    cr_assert_str_eq(oa[1], "f044.jpg");
    cr_assert_str_eq(oa[2], "f052.jpg");
    cr_assert_str_eq(oa[199], "f013.jpg");
    ld__source_free(a);
    ld__source_free(b);
    ld__source_free(c);
}

Test(source, many_files_enumerate_in_strcmp_order)
{
    /* more paths than one 64 KiB arena block holds */
    char rel[128];
    for (int i = 0; i < 1500; i++) {
        snprintf(rel, sizeof rel, "k%d/%s_%04d_with_a_fairly_long_file_name_to_fill_blocks.jpg",
                 i % 3, (i & 1) ? "B" : "a", (i * 7919) % 10000);
        touch(rel);
    }
    ld_err e = {0};
    ld_source *s = NULL;
    cr_assert_eq(ld__source_open_dir(ld_tmp, NULL, NULL, NULL, &s, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(ld__source_count(s), 1500);
    for (size_t i = 1; i < 1500; i++)
        cr_assert_lt(strcmp(item_at(s, i - 1).rel, item_at(s, i).rel), 0);
    ld__source_free(s);
}

/* ---- listing progress and cancel ----------------------------------------------------- */

typedef struct ticks {
    int calls, cancel_at;
    size_t last_found;
} ticks;

static int on_tick(void *user, size_t found)
{
    ticks *t = user;
    t->calls++;
    cr_assert(found >= t->last_found, "found went down: %zu after %zu", found, t->last_found);
    t->last_found = found;
    return t->calls == t->cancel_at;
}

Test(source, folder_listing_reports_progress_and_can_be_canceled)
{
    ld_err e = {0};
    ld_source *s = NULL;
    ticks t = {0, 0, 0}; /* never cancels: one tick per folder (bird car cat cat/sub deeper) */
    cr_assert_eq(ld__source_open_dir(LD_TEST_DATA "/tree", NULL, on_tick, &t, &s, &e), LD_OK, "%s",
                 e.msg);
    cr_assert_eq(t.calls, 5, "%d ticks", t.calls);
    cr_assert(t.last_found > 0 && t.last_found < 9, "found %zu before the last folder",
              t.last_found);
    ld__source_free(s);
    s = NULL;
    t = (ticks){0, 2, 0};
    cr_assert_eq(ld__source_open_dir(LD_TEST_DATA "/tree", NULL, on_tick, &t, &s, &e),
                 LD_ECANCELED);
    cr_assert_null(s);
    cr_assert(strstr(e.msg, "canceled"), "%s", e.msg);
    cr_assert_eq(t.calls, 2);
}

Test(source, list_reading_reports_progress_and_can_be_canceled)
{
    char list[512];
    char *text = malloc(10000 * 16);
    cr_assert_not_null(text);
    size_t len = 0;
    for (int i = 0; i < 10000; i++)
        len += (size_t)sprintf(text + len, "f%05d.jpg %d\n", i, i % 7);
    write_text("big.txt", text, list, sizeof list);
    free(text);
    ld_err e = {0};
    ld_source *s = NULL;
    ticks t = {0, 0, 0};
    cr_assert_eq(ld__source_open_list(list, NULL, NULL, on_tick, &t, &s, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(t.calls, 2, "one tick per 4096 lines: %d", t.calls);
    cr_assert_eq(t.last_found, 8191);
    cr_assert_eq(ld__source_count(s), 10000);
    ld__source_free(s);
    s = NULL;
    t = (ticks){0, 1, 0};
    cr_assert_eq(ld__source_open_list(list, NULL, NULL, on_tick, &t, &s, &e), LD_ECANCELED);
    cr_assert_null(s);
    cr_assert(strstr(e.msg, "canceled"), "%s", e.msg);
}

/* Folder mode names every entry it passes over, with its reason (issue 29 item 1). */
typedef struct notes {
    int n[LD_UNLISTED_N];
    char text[4096];
} notes;

static void on_note(void *user, int why, const char *path)
{
    notes *t = user;
    cr_assert(why >= 0 && why < LD_UNLISTED_N, "reason %d", why);
    t->n[why]++;
    const size_t len = strlen(t->text);
    snprintf(t->text + len, sizeof t->text - len, "%d %s\n", why, path + strlen(ld_tmp));
}

Test(source, entries_not_listed_are_named_and_counted_by_reason)
{
    touch("cls/a.tif");
    touch("cls/b.WEBP");
    touch("cls/c.gif");
    touch("cls/d.bmp");
    touch("cls/e.pgm");
    touch("cls/f.jpe");
    touch("cls/g.JFIF");
    touch("cls/readme.txt");
    touch("cls/noext");
    touch("cls/.DS_Store");
    touch("cls/.git/inside.jpg"); /* a hidden folder counts once, its contents are not read */
    touch("loose.png");           /* in no class folder */
    touch("notes.md");            /* beside the class folders */
    char p[1024];
    snprintf(p, sizeof p, "%s/cls/pipe", ld_tmp);
    cr_assert_eq(mkfifo(p, 0644), 0, "%s", strerror(errno));
    snprintf(p, sizeof p, "%s/cls/dangling", ld_tmp);
    cr_assert_eq(symlink("nowhere", p), 0, "%s", strerror(errno));

    ld_err e = {0};
    ld_source *s = NULL;
    notes t = {0};
    cr_assert_eq(ld__source_open_dir_notes(ld_tmp, 0, NULL, on_note, NULL, &t, &s, &e), LD_OK, "%s",
                 e.msg);
    cr_assert_eq(ld__source_count(s), 7, "listed %zu", ld__source_count(s));
    cr_assert_eq(t.n[LD_UNLISTED_NAME], 3, "%s", t.text);    /* readme.txt noext notes.md */
    cr_assert_eq(t.n[LD_UNLISTED_HIDDEN], 2, "%s", t.text);  /* .DS_Store .git */
    cr_assert_eq(t.n[LD_UNLISTED_SPECIAL], 2, "%s", t.text); /* pipe, dangling */
    cr_assert_eq(t.n[LD_UNLISTED_LOOSE], 1, "%s", t.text);   /* loose.png */
    for (int why = 0; why < LD_UNLISTED_N; why++)
        cr_assert_eq(ld__source_unlisted(s, why), (uint64_t)t.n[why], "reason %d", why);
    cr_assert(strstr(t.text, "0 /cls/readme.txt\n") && strstr(t.text, "1 /cls/.git\n") &&
                  strstr(t.text, "2 /cls/pipe\n") && strstr(t.text, "3 /loose.png\n"),
              "%s", t.text);
    ld__source_free(s);
}

/* One list file: its items' paths, labels and values as ld__source_* give them. */
static ld_source *open_text(const char *name, const char *text, const ld_list_opts *o)
{
    char list[512];
    write_text(name, text, list, sizeof list);
    ld_err e = {0};
    ld_source *s = NULL;
    int rc = ld__source_open_list(list, NULL, o, NULL, NULL, &s, &e);
    cr_assert_eq(rc, LD_OK, "%s: %s", name, e.msg);
    return s;
}

static void expect_values(const ld_source *s, size_t i, const float *want, uint32_t k)
{
    float v[8];
    cr_assert_eq(ld__source_label_count(s), k);
    cr_assert_eq(ld__source_values(s, i, v), LD_OK);
    for (uint32_t m = 0; m < k; m++)
        cr_assert_float_eq(v[m], want[m], 1e-6, "item %zu value %u: %g, want %g", i, m, v[m],
                           want[m]);
}

Test(source, label_vectors_take_k_from_the_first_line)
{
    ld_source *s = open_text("v.txt",
                             "my photos/a 2.jpg 0.5 -1.25 3\n"
                             "b.png 1 2 1e-3\r\n"
                             "c d.jpg\t4 5 6\n",
                             NULL);
    cr_assert_eq(ld__source_count(s), 3);
    cr_assert_str_eq(ld__source_rel(s, 0), "my photos/a 2.jpg");
    cr_assert_str_eq(ld__source_rel(s, 2), "c d.jpg");
    cr_assert_eq(ld__source_label_type(s), LD_DTYPE_F32);
    cr_assert_eq(ld__source_class_count(s), 0, "label vectors have no classes");
    expect_values(s, 0, (const float[]){0.5f, -1.25f, 3}, 3);
    expect_values(s, 1, (const float[]){1, 2, 1e-3f}, 3);
    expect_values(s, 2, (const float[]){4, 5, 6}, 3);
    /* values survive a shuffle with their item */
    ld__source_shuffle(s, 7);
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(ld__source_rel(s, i), "b.png"))
            expect_values(s, i, (const float[]){1, 2, 1e-3f}, 3);
    ld__source_free(s);
}

Test(source, label_types)
{
    /* auto: one integer per line stays an int32 class label */
    ld_source *s = open_text("i.txt", "a.jpg 2\nb.jpg 0\n", NULL);
    cr_assert_eq(ld__source_label_count(s), 0);
    cr_assert_eq(ld__source_label(s, 0), 2);
    cr_assert_eq(ld__source_class_count(s), 3);
    ld__source_free(s);
    /* auto: one number that is not an integer makes every label float32, K = 1 */
    s = open_text("f.txt", "a.jpg 2\nb.jpg 0.25\n", NULL);
    expect_values(s, 0, (const float[]){2}, 1);
    expect_values(s, 1, (const float[]){0.25f}, 1);
    cr_assert_eq(ld__source_class_count(s), 0);
    ld__source_free(s);
    /* negative or huge integers: int32 labels without classes */
    s = open_text("n.txt", "a.jpg -1\nb.jpg 2000000000\n", NULL);
    cr_assert_eq(ld__source_label_count(s), 0);
    cr_assert_eq(ld__source_label(s, 0), -1);
    cr_assert_eq(ld__source_label(s, 1), 2000000000);
    cr_assert_eq(ld__source_class_count(s), 0);
    ld__source_free(s);
    /* float32 asked for: integers too */
    ld_list_opts f32 = {-1, LD_DTYPE_F32};
    s = open_text("i2.txt", "a.jpg 2\n", &f32);
    expect_values(s, 0, (const float[]){2}, 1);
    ld__source_free(s);
    /* int32 vectors (multi-label 0/1 kept as integers) */
    ld_list_opts i32 = {-1, LD_DTYPE_I32};
    s = open_text("m.txt", "a.jpg 0 1 1\nb.jpg 1 0 -7\n", &i32);
    int32_t v[3];
    cr_assert_eq(ld__source_label_count(s), 3);
    cr_assert_eq(ld__source_label_type(s), LD_DTYPE_I32);
    cr_assert_eq(ld__source_values(s, 1, v), LD_OK);
    cr_assert(v[0] == 1 && v[1] == 0 && v[2] == -7);
    ld__source_free(s);
    /* int32 refuses a fraction, naming the line */
    char list[512];
    write_text("bad32.txt", "a.jpg 1 2\nb.jpg 1 2.5\n", list, sizeof list);
    ld_err e = {0};
    cr_assert_eq(ld__source_open_list(list, NULL, &i32, NULL, NULL, &s, &e), LD_EFORMAT);
    cr_assert(strstr(e.msg, "bad32.txt:2") && strstr(e.msg, "2.5"), "%s", e.msg);
}

Test(source, label_count_and_unlabelled_lists)
{
    /* --label-count: a path whose last word is a number is still a path */
    ld_list_opts one = {1, 0};
    ld_source *s = open_text("c.txt", "take 2 3\nb.jpg 4\n", &one);
    cr_assert_str_eq(ld__source_rel(s, 0), "take 2");
    cr_assert_eq(ld__source_label(s, 0), 3);
    ld__source_free(s);
    /* paths only: unlabelled, label 0, no classes */
    s = open_text("u.txt", "a b.jpg\nc.png\n", NULL);
    cr_assert_eq(ld__source_count(s), 2);
    cr_assert(ld__source_unlabelled(s));
    cr_assert_str_eq(ld__source_rel(s, 0), "a b.jpg");
    cr_assert_eq(ld__source_label(s, 1), 0);
    cr_assert_eq(ld__source_class_count(s), 0);
    ld__source_free(s);
}

Test(source, csv_lists_keep_the_header_names)
{
    ld_source *s = open_text("l.csv",
                             "path, yaw ,pitch,roll\r\n"
                             "\"a,b.jpg\",1,2,3\n"
                             "\"say \"\"hi\"\".png\", -0.5 , 0 ,1e2\n"
                             "plain.jpg,7,8,9\n",
                             NULL);
    cr_assert_eq(ld__source_count(s), 3);
    cr_assert_str_eq(ld__source_rel(s, 0), "a,b.jpg");
    cr_assert_str_eq(ld__source_rel(s, 1), "say \"hi\".png");
    expect_values(s, 1, (const float[]){-0.5f, 0, 100}, 3);
    cr_assert_eq(ld__source_label_name_count(s), 3);
    cr_assert_str_eq(ld__source_label_name(s, 0), "yaw");
    cr_assert_str_eq(ld__source_label_name(s, 2), "roll");
    ld__source_free(s);
    /* one integer column: class labels, as a text list */
    s = open_text("k.csv", "file,class\na.jpg,1\nb.jpg,0\n", NULL);
    cr_assert_eq(ld__source_label_count(s), 0);
    cr_assert_eq(ld__source_class_count(s), 2);
    ld__source_free(s);
    /* bad rows name the file and line */
    const char *bad[][3] = {{"path,a,b\nx.jpg,1\n", "b1.csv:2", "1 label value"},
                            {"path,a\nx.jpg,one\n", "b2.csv:2", "not a number"},
                            {"path,a\n\"x.jpg,1\n", "b3.csv:2", "quoted field"},
                            {"path,a\n,1\n", "b4.csv:2", "empty path"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char list[512], name[16];
        snprintf(name, sizeof name, "b%zu.csv", i + 1);
        write_text(name, bad[i][0], list, sizeof list);
        ld_err e = {0};
        ld_source *t = NULL;
        cr_assert_eq(ld__source_open_list(list, NULL, NULL, NULL, NULL, &t, &e), LD_EFORMAT, "%s",
                     bad[i][0]);
        cr_assert(strstr(e.msg, bad[i][1]) && strstr(e.msg, bad[i][2]), "%s", e.msg);
    }
}
