/*
 * Issue 14 item 3: one convention for the calls without a handle. ld_describe and
 * ld_compute_mean both end with `char **errmsg`: the message on failure (NULL on success),
 * their other outputs only on success; errmsg may be NULL.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "libdata/libdata.h"

#define RAW LD_TEST_DATA "/reader/raw_ours.h5"
#define MISSING LD_TEST_DATA "/no/such/dataset.h5"

Test(handleless, describe_gives_text_or_errmsg)
{
    char *text = (char *)1, *err = (char *)1;
    cr_assert_eq(ld_describe(RAW, &text, &err), LD_OK);
    cr_assert(text && strstr(text, "samples"), "%s", text ? text : "(null)");
    cr_assert_null(err);
    ld_free(text);

    text = (char *)1;
    err = (char *)1;
    cr_assert_eq(ld_describe(MISSING, &text, &err), LD_EIO);
    cr_assert_null(text, "no text on failure");
    cr_assert(err && strstr(err, MISSING), "%s", err ? err : "(null)");
    ld_free(err);

    text = (char *)1;
    cr_assert_eq(ld_describe(MISSING, &text, NULL), LD_EIO, "errmsg may be NULL");
    cr_assert_null(text);
}

Test(handleless, compute_mean_follows_the_same_convention)
{
    double means[4] = {-1, -1, -1, -1};
    int c = -1;
    char *err = (char *)1;
    cr_assert_eq(ld_compute_mean(RAW, NULL, means, &c, &err), LD_OK);
    cr_assert_null(err);
    cr_assert_eq(c, 3);
    err = (char *)1;
    cr_assert_lt(ld_compute_mean(MISSING, NULL, means, &c, &err), 0);
    cr_assert(err && strstr(err, MISSING), "%s", err ? err : "(null)");
    ld_free(err);
}
