/* ld_merge's own pieces (shard/merge.c, shard/name.c): part names (K/N from
 * "...-KKKKK-of-NNNNN<ext>", the name of a missing part, one rule for building and parsing), the
 * set and run checks on shard values, and the handle-less call convention (errmsg, log). Merging
 * real parts is tested by tests/cli/merge_*.sh. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/convert.h"
#include "shard/merge.h"
#include "shard/shard.h"
#include "test_tmp.h"

TestSuite(merge, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 60);

Test(merge, part_names_give_k_and_n)
{
    long long k, n;
    cr_assert(ld__shard_name("out-00002-of-00008.h5", &k, &n));
    cr_assert(k == 2 && n == 8);
    cr_assert(ld__shard_name("/a/b-c/train-00000-of-00001.lmdb/", &k, &n));
    cr_assert(k == 0 && n == 1);
    cr_assert(ld__shard_name("db-00011-of-00040", &k, &n)); /* no extension */
    cr_assert(k == 11 && n == 40);
    cr_assert(ld__shard_name("x-of-y.tar-00003-of-00004.h5", &k, &n)); /* of "x-of-y.tar.h5" */
    cr_assert(k == 3 && n == 4);
    cr_assert(ld__shard_name("big-123456-of-200000.h5", &k, &n)); /* more than 5 digits */
    cr_assert(k == 123456 && n == 200000);
    /* not part names: K and N are left at -1 */
    const char *no[] = {
        "out.h5",
        "out-of-8.h5",
        "out-2-of-.h5",
        "-2-of-8.h5",
        "out-2-of-8x.h5",
        "out-2_of-8.h5",
        "out-00002-of-00008",
        "x-00003-of-00004.tar.h5", /* the tag goes before the .h5, never elsewhere */
        "",
        "of-"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        int got = ld__shard_name(no[i], &k, &n);
        if (i == 6) { /* "out-00002-of-00008" is one: numbers at the end */
            cr_assert(got && k == 2 && n == 8);
            continue;
        }
        cr_assert(!got && k == -1 && n == -1, "'%s' taken as a part name", no[i]);
    }
}

Test(merge, names_are_parsed_by_the_rule_that_builds_them)
{
    const char *outs[] = {"out.h5",   "dir/Out.HDF5",  "db.lmdb/",         "db.LMDB", "plain",
                          "a.b.c.h5", "x-of-y.tar.h5", "/abs/p-1-of-2.h5", "d.mdb"};
    for (size_t i = 0; i < sizeof outs / sizeof *outs; i++)
        for (unsigned k = 0; k < 3; k++) {
            char *part = ld__shard_part_path(outs[i], k, 3);
            long long pk, pn;
            cr_assert(part && ld__shard_name(part, &pk, &pn), "%s: %s", outs[i], part);
            cr_assert(pk == k && pn == 3, "%s -> %s -> %lld of %lld", outs[i], part, pk, pn);
            char *sib = ld__shard_sibling(part, 2, 3), *two = ld__shard_part_path(outs[i], 2, 3);
            cr_assert_str_eq(sib, two);
            free(sib);
            free(two);
            free(part);
        }
    char *pat = ld__shard_pattern("dir/Out.HDF5");
    cr_assert_str_eq(pat, "dir/Out-*-of-*.HDF5");
    free(pat);
}

Test(merge, a_missing_part_is_named_like_its_siblings)
{
    char *s = ld__shard_sibling("dir/out-00002-of-00008.h5", 5, 8);
    cr_assert_str_eq(s, "dir/out-00005-of-00008.h5");
    free(s);
    s = ld__shard_sibling("db-00000-of-00003", 2, 3);
    cr_assert_str_eq(s, "db-00002-of-00003");
    free(s);
    cr_assert_null(ld__shard_sibling("plain.h5", 1, 2));
}

static ld_shard shard(const char *path, int64_t k, int64_t n, int64_t first, int64_t listed,
                      int64_t total, const char *run)
{
    ld_shard s;
    memset(&s, 0, sizeof s);
    s.path = path;
    s.index = k;
    s.count = n;
    s.first = first;
    s.listed = listed;
    s.total = total;
    snprintf(s.run_id, sizeof s.run_id, "%s", run);
    ld__shard_name(path, &s.name_k, &s.name_n);
    return s;
}

Test(merge, the_set_check_sorts_and_refuses_gaps_twins_and_other_n)
{
    ld_err e;
    ld__err_clear(&e);
    ld_shard s[3] = {shard("o-00002-of-00003.h5", 2, 3, 6, 4, 10, "a"),
                     shard("o-00000-of-00003.h5", 0, 3, 0, 3, 10, "a"),
                     shard("o-00001-of-00003.h5", 1, 3, 3, 3, 10, "a")};
    cr_assert_eq(ld__merge_check_set(s, 3, &e), LD_OK, "%s", e.msg);
    cr_assert(s[0].index == 0 && s[1].index == 1 && s[2].index == 2);
    cr_assert_eq(ld__merge_check_run(s, 3, &e), LD_OK, "%s", e.msg);

    ld_shard gap[2] = {shard("o-00000-of-00003.h5", 0, 3, 0, 3, 10, "a"),
                       shard("o-00002-of-00003.h5", 2, 3, 6, 4, 10, "a")};
    cr_assert_eq(ld__merge_check_set(gap, 2, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "o-00001-of-00003.h5: missing (part 1 of 3"), "%s", e.msg);
    /* library terms and plain numbers (issue 26 item 10: "shard_index 1 of shard_count 3") */
    cr_assert(strstr(e.msg, "2 of the 3 parts were given") &&
                  strstr(e.msg, "shard_index 1, shard_count 3, then merge the 3 parts") &&
                  !strstr(e.msg, "dataconv"),
              "%s", e.msg);
    ld_shard one[1] = {shard("o-00000-of-00003.h5", 0, 3, 0, 3, 10, "a")};
    cr_assert_eq(ld__merge_check_set(one, 1, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "1 of the 3 parts was given"), "%s", e.msg);

    ld_shard twice[3] = {shard("a/o-00000-of-00003.h5", 0, 3, 0, 3, 10, "a"),
                         shard("o-00001-of-00003.h5", 1, 3, 3, 3, 10, "a"),
                         shard("b/o-00000-of-00003.h5", 0, 3, 0, 3, 10, "a")};
    cr_assert_eq(ld__merge_check_set(twice, 3, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "given twice") && strstr(e.msg, "a/o-00000") &&
                  strstr(e.msg, "b/o-00000"),
              "%s", e.msg);

    ld_shard other_n[2] = {shard("o-00000-of-00002.h5", 0, 2, 0, 5, 10, "a"),
                           shard("o-00001-of-00003.h5", 1, 3, 3, 3, 10, "b")};
    cr_assert_eq(ld__merge_check_set(other_n, 2, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "o-00001-of-00003.h5: part 1 of 3") && strstr(e.msg, "N mismatch"),
              "%s", e.msg);

    ld_shard bad_k[1] = {shard("o.h5", 3, 3, 0, 10, 10, "a")};
    cr_assert_eq(ld__merge_check_set(bad_k, 1, &e), LD_EFORMAT);
}

Test(merge, the_run_check_refuses_another_run_and_ranges_that_do_not_tile)
{
    ld_err e;
    ld__err_clear(&e);
    ld_shard run[2] = {shard("o-00000-of-00002.h5", 0, 2, 0, 5, 10, "aaaa"),
                       shard("o-00001-of-00002.h5", 1, 2, 5, 5, 10, "bbbb")};
    cr_assert_eq(ld__merge_check_run(run, 2, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "o-00001-of-00002.h5: a part from another run") &&
                  strstr(e.msg, "run_id bbbb, not aaaa"),
              "%s", e.msg);

    ld_shard size[2] = {shard("o-00000-of-00002.h5", 0, 2, 0, 5, 10, "a"),
                        shard("o-00001-of-00002.h5", 1, 2, 5, 6, 11, "a")};
    cr_assert_eq(ld__merge_check_run(size, 2, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "lists 11 samples, not 10"), "%s", e.msg);

    ld_shard hole[2] = {shard("o-00000-of-00002.h5", 0, 2, 0, 4, 10, "a"),
                        shard("o-00001-of-00002.h5", 1, 2, 5, 5, 10, "a")};
    cr_assert_eq(ld__merge_check_run(hole, 2, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "o-00001-of-00002.h5: holds listed samples 5.. but the parts before "
                            "it end at 4"),
              "%s", e.msg);

    ld_shard short_[2] = {shard("o-00000-of-00002.h5", 0, 2, 0, 5, 10, "a"),
                          shard("o-00001-of-00002.h5", 1, 2, 5, 4, 10, "a")};
    cr_assert_eq(ld__merge_check_run(short_, 2, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "cover 9 listed samples, but the listing has 10"), "%s", e.msg);

    ld_shard renamed = shard("o-00001-of-00002.h5", 0, 2, 0, 5, 10, "a");
    cr_assert_eq(ld__shard_check_name(&renamed, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "rename it back to o-00000-of-00002.h5"), "%s", e.msg);
}

typedef struct logged {
    int errors;
    char last[1024];
} logged;

static void on_log(void *user, int level, const char *msg)
{
    logged *l = user;
    if (level == LD_LOG_ERROR) l->errors++;
    snprintf(l->last, sizeof l->last, "%s", msg);
}

Test(merge, handle_less_convention)
{
    char *err = (char *)1;
    logged l = {0, ""};
    cr_assert_eq(ld_merge(NULL, NULL, 0, on_log, &l, &err), LD_EINVAL);
    cr_assert(err && strstr(err, "an output name is required"), "%s", err ? err : "(null)");
    cr_assert_eq(l.errors, 1);
    cr_assert_str_eq(l.last, err);
    ld_free(err);
    cr_assert_eq(ld_merge("x.h5", NULL, 2, NULL, NULL, NULL), LD_EINVAL); /* errmsg not wanted */

    char out[4096], part[4096];
    snprintf(out, sizeof out, "%s/none.h5", ld_tmp);
    cr_assert_eq(ld_merge(out, NULL, 0, NULL, NULL, &err), LD_EINVAL);
    cr_assert(strstr(err, "no parts found beside it"), "%s", err);
    ld_free(err);

    /* a missing part given by name: its path and the reason */
    snprintf(part, sizeof part, "%s/gone-00000-of-00001.h5", ld_tmp);
    const char *parts[] = {part};
    cr_assert_eq(ld_merge(out, parts, 1, NULL, NULL, &err), LD_EIO);
    cr_assert(strstr(err, part) && strstr(err, "No such file"), "%s", err);
    ld_free(err);
    /* a file that is no HDF5 file: named, nothing written */
    FILE *f = fopen(part, "wb");
    cr_assert_not_null(f);
    fputs("not hdf5", f);
    fclose(f);
    cr_assert_eq(ld_merge(out, parts, 1, NULL, NULL, &err), LD_EFORMAT);
    cr_assert(strstr(err, part) && strstr(err, "not a readable HDF5 file"), "%s", err);
    ld_free(err);
    FILE *o = fopen(out, "rb");
    cr_assert_null(o, "a refused merge wrote %s", out);
}
