/* A whole file in memory, for the unit tests that feed files to the library (fails the test
 * when the file cannot be read). Release with free(). */
#ifndef LD_TEST_FILE_H
#define LD_TEST_FILE_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(n ? (size_t)n : 1);
    cr_assert(p);
    cr_assert_eq(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return p;
}

#endif /* LD_TEST_FILE_H */
