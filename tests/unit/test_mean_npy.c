/*
 * NumPy .npy mean files (reader/mean.c): a valid file reads back exactly; every truncation of
 * it and thousands of damaged headers are refused with a message (or, when the damage leaves
 * a valid file, read within bounds), never a crash or an over-read (run under ASan too).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_tmp.h"
#include "reader/mean.h"

TestSuite(mean_npy, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 60);

/* A version-1 (or 2) .npy of shape (3, 4, 5) float32 holding 0.5 * k. */
static size_t make_npy(uint8_t *out, int version, const char *dict)
{
    char hdr[256];
    const size_t pre = version == 1 ? 10 : 12;
    int n = snprintf(hdr, sizeof hdr, "%s", dict);
    while ((pre + (size_t)n + 1) % 64)
        hdr[n++] = ' ';
    hdr[n++] = '\n';
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (uint8_t)version;
    out[7] = 0;
    out[8] = (uint8_t)(n & 0xff);
    out[9] = (uint8_t)(n >> 8);
    if (version != 1) out[10] = out[11] = 0;
    memcpy(out + pre, hdr, (size_t)n);
    size_t len = pre + (size_t)n;
    for (int k = 0; k < 60; k++) {
        float v = 0.5f * (float)k;
        memcpy(out + len + 4 * (size_t)k, &v, 4); /* the test machine is little-endian */
    }
    return len + 240;
}

static int read_bytes(const uint8_t *b, size_t len, ld_mean *m, ld_err *e)
{
    char p[300];
    snprintf(p, sizeof p, "%s/m.npy", ld_tmp);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(b, 1, len, f), len);
    fclose(f);
    memset(e, 0, sizeof *e);
    return ld__mean_read(p, m, e);
}

static const char *const DICT = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 5), }";

Test(mean_npy, a_valid_file_reads_back_exactly)
{
    uint8_t b[512];
    for (int version = 1; version <= 2; version++) {
        size_t len = make_npy(b, version, DICT);
        ld_mean m;
        ld_err e;
        cr_assert_eq(read_bytes(b, len, &m, &e), LD_OK, "%s", e.msg);
        cr_assert_eq(m.npy_ndim, 3);
        cr_assert(m.c == 3 && m.h == 4 && m.w == 5);
        for (int k = 0; k < 60; k++)
            cr_assert_eq(m.data[k], 0.5f * (float)k);
        cr_assert_float_eq(m.channel[1], 0.5 * (20 + 39) / 2.0, 1e-6);
        ld__mean_free(&m);
    }
}

Test(mean_npy, every_truncation_is_refused_with_a_message)
{
    uint8_t b[512];
    size_t len = make_npy(b, 1, DICT);
    for (size_t cut = 0; cut < len; cut++) {
        ld_mean m;
        ld_err e;
        int rc = read_bytes(b, cut, &m, &e);
        cr_assert(rc < 0, "a file cut at %zu of %zu bytes was accepted", cut, len);
        cr_assert(e.msg[0], "no message at cut %zu", cut);
        cr_assert_null(m.data);
    }
}

Test(mean_npy, damaged_headers_never_crash)
{
    uint8_t good[512], b[512];
    size_t len = make_npy(good, 1, DICT);
    uint64_t x = 0x9E3779B97F4A7C15u;
    int accepted = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(b, good, len);
        int flips = 1 + it % 4;
        for (int f = 0; f < flips; f++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t at = (size_t)(x % 128); /* preamble and header */
            b[at] = (uint8_t)(x >> 32);
        }
        ld_mean m;
        ld_err e;
        if (read_bytes(b, len, &m, &e) == LD_OK) {
            accepted++;
            cr_assert(m.c > 0 && m.h > 0 && m.w > 0 && m.data);
            volatile float s = 0;
            for (size_t k = 0; k < (size_t)m.c * m.h * m.w; k++)
                s += m.data[k];
            (void)s;
            ld__mean_free(&m);
        } else {
            cr_assert(e.msg[0], "refused without a message (iteration %d)", it);
        }
    }
    cr_assert_lt(accepted, 3000);
}

Test(mean_npy, unusable_headers_say_why)
{
    static const struct {
        const char *dict, *says;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4, 5), }", "Fortran order"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (3, 4, 5), }", "'>f4'"},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (3, 4, 5), }", "'<i8'"},
        {"{'descr': '<f4', 'shape': (3, 4, 5), }", "lacks"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 5, 6, 7), }", "dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (60,), }", "1 dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 6), }", "needs 288 bytes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 5), 'x': 1}", "header"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 5)}", "header"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 99999999999999, 5)}", "large"},
    };
    uint8_t b[512];
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        size_t len = make_npy(b, 1, cases[k].dict);
        ld_mean m;
        ld_err e;
        cr_assert(read_bytes(b, len, &m, &e) < 0, "accepted: %s", cases[k].dict);
        cr_assert(strstr(e.msg, cases[k].says), "%s: '%s' lacks '%s'", cases[k].dict, e.msg,
                  cases[k].says);
    }
}

Test(mean_npy, axis_order_is_chosen_by_the_output_shape)
{
    uint8_t b[512];
    char how[64];
    ld_mean m;
    ld_err e;
    /* (3, 4, 5) as C x H x W for 3 channels of 4x5 */
    size_t len = make_npy(b, 1, DICT);
    cr_assert_eq(read_bytes(b, len, &m, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(ld__mean_arrange(&m, "m.npy", 3, 4, 5, 4, 5, how, sizeof how, &e), LD_OK);
    cr_assert(strstr(how, "C x H x W"), "%s", how);
    ld__mean_free(&m);
    /* (3, 4, 5) as H x W x C for 5 channels of 3x4: transposed */
    cr_assert_eq(read_bytes(b, len, &m, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(ld__mean_arrange(&m, "m.npy", 5, 3, 4, 2, 2, how, sizeof how, &e), LD_OK, "%s",
                 e.msg);
    cr_assert(strstr(how, "H x W x C"), "%s", how);
    cr_assert(m.c == 5 && m.h == 3 && m.w == 4);
    /* element (y=1, x=2, c=3) of the file is k = (1*4 + 2)*5 + 3 = 33 */
    cr_assert_eq(m.data[(3 * 3 + 1) * 4 + 2], 0.5f * 33);
    ld__mean_free(&m);
    /* neither order */
    cr_assert_eq(read_bytes(b, len, &m, &e), LD_OK, "%s", e.msg);
    cr_assert_eq(ld__mean_arrange(&m, "m.npy", 3, 8, 8, 4, 4, how, sizeof how, &e), LD_EINVAL);
    cr_assert(strstr(e.msg, "(3, 4, 5)"), "%s", e.msg);
    ld__mean_free(&m);
}
