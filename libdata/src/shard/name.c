/*
 * Part names: the one rule, built and parsed here only (shard.h). A part of `output` is named
 * "<stem>-KKKKK-of-NNNNN<ext>": ext is a final .h5, .hdf5 or .lmdb of the output's name (any
 * case, kept as spelled), or nothing; stem is the rest; K and N have at least five digits.
 * Trailing '/' of a directory name are dropped.
 */
#include "shard/shard.h"

#include "libdata/shard.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lower_ascii(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch + 32 : ch;
}

/* Length of the extension of s[0..n) that the part tag goes before, or 0. */
static size_t ext_len(const char *s, size_t n)
{
    static const char *const exts[] = {".h5", ".hdf5", ".lmdb"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t m = strlen(exts[i]), j = 0;
        if (n <= m) continue;
        while (j < m && lower_ascii((unsigned char)s[n - m + j]) == exts[i][j])
            j++;
        if (j == m && s[n - m - 1] != '/') return m;
    }
    return 0;
}

/* The length of path without trailing slashes (a lone "/" stays). */
static size_t trimmed_len(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    return n;
}

/* In path[0..len): where the tag "-K-of-N" starts and ends (it ends where the extension
 * begins). 1 when the name has one after a non-empty stem. */
static int tag_span(const char *path, size_t len, size_t *at, size_t *end)
{
    size_t base = len;
    while (base > 0 && path[base - 1] != '/')
        base--;
    const size_t e = len - ext_len(path + base, len - base);
    size_t i = e;
    while (i > base && isdigit((unsigned char)path[i - 1]))
        i--;
    if (i == e || e - i > 12 || i < base + 4 || memcmp(path + i - 4, "-of-", 4) != 0) return 0;
    size_t j = i - 4;
    const size_t k_end = j;
    while (j > base && isdigit((unsigned char)path[j - 1]))
        j--;
    if (j == k_end || k_end - j > 12 || j < base + 2 || path[j - 1] != '-') return 0;
    *at = j - 1;
    *end = e;
    return 1;
}

char *ld__shard_part_path(const char *output, unsigned long long k, unsigned long long n)
{
    const size_t len = trimmed_len(output);
    size_t base = len;
    while (base > 0 && output[base - 1] != '/')
        base--;
    const size_t ext = ext_len(output + base, len - base);
    return ld__asprintf("%.*s-%05llu-of-%05llu%.*s", (int)(len - ext), output, k, n, (int)ext,
                        output + len - ext);
}

int ld__shard_name(const char *path, long long *k, long long *n)
{
    size_t at, end;
    *k = *n = -1;
    if (!tag_span(path, trimmed_len(path), &at, &end)) return 0;
    char *of;
    *k = strtoll(path + at + 1, &of, 10);
    *n = strtoll(of + 4, NULL, 10);
    return 1;
}

char *ld__shard_sibling(const char *like, long long k, long long n)
{
    const size_t len = trimmed_len(like);
    size_t at, end;
    if (k < 0 || n < 0 || !tag_span(like, len, &at, &end)) return NULL;
    return ld__asprintf("%.*s-%05lld-of-%05lld%.*s", (int)at, like, k, n, (int)(len - end),
                        like + end);
}

int ld_shard_part_name(const char *output, int shard_index, int shard_count, char **name)
{
    if (name) *name = NULL;
    if (!output || !*output || !name || shard_count < 1 || shard_count > LD_SHARD_MAX ||
        shard_index < 0 || shard_index >= shard_count)
        return LD_EINVAL;
    *name = ld__shard_part_path(output, (unsigned)shard_index, (unsigned)shard_count);
    return *name ? LD_OK : LD_ENOMEM;
}

char *ld__shard_pattern(const char *output)
{
    char *p = ld__shard_part_path(output, 0, 0);
    size_t at, end;
    char *out = p && tag_span(p, strlen(p), &at, &end)
                    ? ld__asprintf("%.*s-*-of-*%s", (int)at, p, p + end)
                    : NULL;
    free(p);
    return out;
}
