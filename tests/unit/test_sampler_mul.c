/*
 * The sampler's 64x64 -> 128-bit multiply and the unbiased draws built on it (reader/sampler.h)
 * are exact on every target: 32-bit builds (i386, armhf) have no unsigned __int128, so the
 * product is assembled from 32-bit halves. Python's integers, exact at any size, recompute
 * every product and the whole ld__rng_below stream (splitmix64 + Lemire's rejection), so an
 * i386 or armhf build must draw the very numbers an x86-64 build draws (shuffles, crops).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_tmp.h"
#include "reader/sampler.h"

TestSuite(sampler_mul, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 120);

static const char *const CHECK_PY =
    "import sys\n"
    "M = (1 << 64) - 1\n"
    "def mix(s):\n"
    "    x = s\n"
    "    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M\n"
    "    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M\n"
    "    return x ^ (x >> 31)\n"
    "bad = 0\n"
    "for line in open(sys.argv[1]):\n"
    "    f = line.split()\n"
    "    if f[0] == 'mul':\n"
    "        a, b, hi, lo = (int(v, 16) for v in f[1:])\n"
    "        if a * b != (hi << 64) | lo: bad += 1; print('mul', line.strip())\n"
    "    else:\n"
    "        s, bound, got = (int(v, 16) for v in f[1:])\n"
    "        while True:\n"
    "            s = (s + 0x9E3779B97F4A7C15) & M\n"
    "            m = mix(s) * bound\n"
    "            if (m & M) >= (-bound % (1 << 64)) % bound: break\n"
    "        if m >> 64 != got: bad += 1; print('below', line.strip(), hex(m >> 64))\n"
    "sys.exit(1 if bad else 0)\n";

Test(sampler_mul, products_and_draws_match_exact_arithmetic)
{
    char data[300], py[300], cmd[800];
    snprintf(data, sizeof data, "%s/cases.txt", ld_tmp);
    snprintf(py, sizeof py, "%s/check.py", ld_tmp);
    FILE *f = fopen(py, "w");
    cr_assert_not_null(f);
    fputs(CHECK_PY, f);
    fclose(f);
    f = fopen(data, "w");
    cr_assert_not_null(f);
    /* Edge operands (carries out of every 32-bit half) crossed with each other, then a
     * pseudo-random sweep of magnitudes. */
    const uint64_t edge[] = {0,
                             1,
                             2,
                             0xFFFFFFFFull,
                             0x100000000ull,
                             0x1FFFFFFFFull,
                             0x8000000000000000ull,
                             0xFFFFFFFF00000000ull,
                             0xFFFFFFFFFFFFFFFFull,
                             0xFFFFFFFFFFFFFFFEull,
                             0x9E3779B97F4A7C15ull};
    const size_t ne = sizeof edge / sizeof edge[0];
    unsigned nmul = 0;
    for (size_t i = 0; i < ne; i++)
        for (size_t j = 0; j < ne; j++) {
            uint64_t lo, hi = ld__mul64(edge[i], edge[j], &lo);
            fprintf(f, "mul %llx %llx %llx %llx\n", (unsigned long long)edge[i],
                    (unsigned long long)edge[j], (unsigned long long)hi, (unsigned long long)lo);
            nmul++;
        }
    ld_rng r = {12345};
    for (int k = 0; k < 2000; k++) {
        const uint64_t a = ld__rng_next(&r) >> (k % 64), b = ld__rng_next(&r) >> ((k / 64) % 64);
        uint64_t lo, hi = ld__mul64(a, b, &lo);
        fprintf(f, "mul %llx %llx %llx %llx\n", (unsigned long long)a, (unsigned long long)b,
                (unsigned long long)hi, (unsigned long long)lo);
        nmul++;
    }
    /* Draws: small bounds, bounds past 2^32 (the sample counts of > 4 GiB datasets), and bounds
     * near 2^64 where the rejection loop runs often. */
    const uint64_t bounds[] = {2,
                               3,
                               10,
                               1000003,
                               0xFFFFFFFFull,
                               0x100000001ull,
                               5000000000ull,
                               0x8000000000000001ull,
                               0xFFFFFFFFFFFFFFFFull};
    unsigned ndraw = 0;
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
        ld_rng g = ld__rng_sample(7, b, 42);
        for (int k = 0; k < 200; k++) {
            const uint64_t state = g.s, v = ld__rng_below(&g, bounds[b]);
            cr_assert_lt(v, bounds[b]);
            fprintf(f, "below %llx %llx %llx\n", (unsigned long long)state,
                    (unsigned long long)bounds[b], (unsigned long long)v);
            ndraw++;
        }
    }
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(nmul, ne * ne + 2000);
    cr_assert_eq(ndraw, 9 * 200);
    snprintf(cmd, sizeof cmd, "%s %s %s", LD_PYTHON, py, data);
    cr_assert_eq(system(cmd), 0, "ld__mul64 / ld__rng_below differ from exact arithmetic");
}
