/* Error messages longer than their buffer keep their reason: the middle of the longest
 * space-free runs (the paths) gives way, not the end (issue 12, item 18). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ld_internal.h"

/* A path of about n bytes: "/data/" + nested 9-byte folders + "/bad.jpg". */
static char *long_path(size_t n, const char *folder)
{
    char *p = malloc(n + 64);
    cr_assert_not_null(p);
    strcpy(p, "/data");
    while (strlen(p) + strlen(folder) + 1 < n)
        strcat(strcat(p, "/"), folder);
    strcat(p, "/bad.jpg");
    return p;
}

Test(errmsg, a_4000_byte_path_keeps_the_reason)
{
    char *path = long_path(4000, "folder_x");
    ld_err e = {0};
    int rc = ld__err(&e, LD_EFORMAT, "%s: not a JPEG or PNG file (unknown signature)", path);
    cr_assert_eq(rc, LD_EFORMAT);
    size_t n = strlen(e.msg);
    cr_assert_leq(n, LD_ERRMSG_MAX - 1);
    cr_assert_gt(n, LD_ERRMSG_MAX - 16, "used only %zu bytes", n); /* no needless loss */
    const char *reason = ": not a JPEG or PNG file (unknown signature)";
    cr_assert_str_eq(e.msg + n - strlen(reason), reason, "%s", e.msg);
    cr_assert(strncmp(e.msg, "/data/folder_x/", 15) == 0, "head kept: %.40s", e.msg);
    cr_assert_not_null(strstr(e.msg, "/bad.jpg:"), "file name kept");
    cr_assert_not_null(strstr(e.msg, "..."), "the cut is marked");
    free(path);
}

Test(errmsg, two_long_paths_both_shortened_and_the_words_between_kept)
{
    char *a = long_path(3000, "aaaaaaaa"), *b = long_path(3000, "bbbbbbbb");
    ld_err e = {0};
    ld__err(&e, LD_EIO, "%s: cannot rename to %s: No space left on device", a, b);
    size_t n = strlen(e.msg);
    cr_assert_leq(n, LD_ERRMSG_MAX - 1);
    cr_assert_not_null(strstr(e.msg, ": cannot rename to /data/bbbbbbbb"), "%s", e.msg);
    cr_assert_not_null(strstr(e.msg, "bad.jpg: No space left on device"), "%s", e.msg);
    free(a);
    free(b);
}

Test(errmsg, utf8_paths_are_cut_between_characters)
{
    char *path = long_path(4000, "\xc3\xa9t\xc3\xa9_\xe7\x8c\xab"); /* "été_猫" */
    ld_err e = {0};
    ld__err(&e, LD_EIO, "%s: cannot open: Permission denied", path);
    cr_assert(ld__utf8_valid(e.msg), "cut inside a character: %s", e.msg);
    cr_assert_not_null(strstr(e.msg, "cannot open: Permission denied"));
    free(path);
}

Test(errmsg, short_messages_are_unchanged_and_one_long_word_is_cut_at_the_end)
{
    ld_err e = {0};
    ld__err(&e, LD_EIO, "%s: %d", "short", 42);
    cr_assert_str_eq(e.msg, "short: 42");
    char small[16];
    ld__format_msg(small, sizeof small, "%s", "abcdefghijklmnopqrstuvwxyz");
    cr_assert_eq(strlen(small), 15);
    cr_assert(strstr(small, "...") && small[0] == 'a' && small[14] == 'z', "%s", small);
    ld__format_msg(small, sizeof small, "%s", "a b c d e f g h i j k");
    cr_assert_eq(strlen(small), 15, "no long word: cut at the end");
}
