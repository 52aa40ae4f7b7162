/* A fresh temporary folder for every test of a suite, shared by the unit tests:
 *
 *     TestSuite(name, .init = ld_tmp_make, .fini = ld_tmp_remove);
 *
 * and the folder is `ld_tmp`. Criterion runs each test in its own process, so one static
 * buffer per test file is enough. */
#ifndef LD_TEST_TMP_H
#define LD_TEST_TMP_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char ld_tmp[256];

static void ld_tmp_make(void)
{
    snprintf(ld_tmp, sizeof ld_tmp, "/tmp/ld_test_XXXXXX");
    cr_assert_not_null(mkdtemp(ld_tmp), "mkdtemp: %s", strerror(errno));
}

static void ld_tmp_remove(void)
{
    char cmd[sizeof ld_tmp + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ld_tmp);
    cr_expect_eq(system(cmd), 0, "cannot remove %s", ld_tmp);
}

#endif /* LD_TEST_TMP_H */
