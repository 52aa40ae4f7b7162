/* Structured errors (issue 14, item 3): besides the message, a failure is handed out as an
 * ld_error_detail (code, parameter id, file, sample) by ld_convert_error / ld_reader_error,
 * and the messages speak of parameters by their table names, not by dataconv's flags. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_tmp.h"
#include "libdata/convert.h"
#include "libdata/reader.h"

TestSuite(errdetail, .init = ld_tmp_make, .fini = ld_tmp_remove);

static char *in_tmp(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", ld_tmp, name);
    return p;
}

Test(errdetail, a_fresh_handle_holds_no_failure)
{
    ld_convert *c = ld_convert_create();
    const ld_error_detail *d = ld_convert_error(c);
    cr_assert_eq(d->code, LD_OK);
    cr_assert_eq(d->param, -1);
    cr_assert_null(d->path);
    cr_assert_eq(d->sample, -1);
    ld_convert_free(c);
    ld_reader *r = ld_reader_create();
    cr_assert_eq(ld_reader_error(r)->code, LD_OK);
    cr_assert_eq(ld_reader_error(r)->param, -1);
    ld_reader_free(r);
}

Test(errdetail, a_bad_parameter_value_names_the_parameter)
{
    ld_convert *c = ld_convert_create();
    cr_assert_eq(ld_convert_set(c, LD_C_QUALITY, 101), LD_EINVAL);
    const ld_error_detail *d = ld_convert_error(c);
    cr_assert_eq(d->code, LD_EINVAL);
    cr_assert_eq(d->param, LD_C_QUALITY, "param %d: %s", d->param, ld_convert_errmsg(c));
    cr_assert_null(d->path);
    cr_assert_eq(d->sample, -1);
    cr_assert_not_null(strstr(ld_convert_errmsg(c), "quality"), "%s", ld_convert_errmsg(c));
    ld_convert_free(c);

    ld_reader *r = ld_reader_create();
    /* a value of another enum */
    cr_assert_eq(ld_reader_set(r, LD_R_ORDER, LD_DTYPE_F32), LD_EINVAL);
    cr_assert_eq(ld_reader_error(r)->param, LD_R_ORDER, "%s", ld_reader_errmsg(r));
    /* a number for an integer parameter */
    cr_assert_eq(ld_reader_set_double(r, LD_R_BATCH_SIZE, 2.0), LD_EINVAL);
    cr_assert_eq(ld_reader_error(r)->param, LD_R_BATCH_SIZE, "%s", ld_reader_errmsg(r));
    ld_reader_free(r);
}

Test(errdetail, a_mean_without_float_output_names_dtype_at_open)
{
    ld_reader *r = ld_reader_create();
    const float mean[1] = {100.0f};
    cr_assert_eq(ld_reader_set_floats(r, LD_R_MEAN_VALUES, mean, 1), LD_OK);
    cr_assert_eq(ld_reader_open(r, LD_TEST_DATA "/reader/enc_corrupt.h5"), LD_EINVAL);
    cr_assert_eq(ld_reader_error(r)->param, LD_R_DTYPE, "%s", ld_reader_errmsg(r));
    cr_assert_not_null(strstr(ld_reader_errmsg(r), "dtype"), "%s", ld_reader_errmsg(r));
    cr_assert_null(strstr(ld_reader_errmsg(r), "--"), "%s", ld_reader_errmsg(r));
    ld_reader_free(r);
}

Test(errdetail, max_pixels_exceeded_names_the_parameter_the_image_and_its_index)
{
    ld_convert *c = ld_convert_create();
    cr_assert_eq(ld_convert_set(c, LD_C_MAX_PIXELS, 1000), LD_OK);
    cr_assert_eq(ld_convert_set(c, LD_C_STRICT, 1), LD_OK);
    cr_assert_eq(ld_convert_set(c, LD_C_RESIZE_W, 16), LD_OK);
    cr_assert_eq(ld_convert_set(c, LD_C_RESIZE_H, 16), LD_OK);
    cr_assert_eq(ld_convert_set(c, LD_C_THREADS, 2), LD_OK);
    int rc = ld_convert_run(c, LD_TEST_DATA "/tree", in_tmp("big.h5"));
    const char *msg = ld_convert_errmsg(c);
    cr_assert_eq(rc, LD_ELIMIT, "%d: %s", rc, msg);
    const ld_error_detail *d = ld_convert_error(c);
    cr_assert_eq(d->code, LD_ELIMIT);
    /* the limit, not the strict setting that made it stop the run */
    cr_assert_eq(d->param, LD_C_MAX_PIXELS, "param %d: %s", d->param, msg);
    cr_assert_not_null(strstr(msg, "max_pixels"), "%s", msg);
    cr_assert_null(strstr(msg, "--"), "a dataconv flag in a library message: %s", msg);
    /* every image of the tree is over 1000 pixels: the run stops at the first input */
    cr_assert_eq(d->sample, 0, "sample %lld", (long long)d->sample);
    cr_assert_not_null(d->path);
    cr_assert(strncmp(d->path, LD_TEST_DATA "/tree/", strlen(LD_TEST_DATA "/tree/")) == 0, "%s",
              d->path);
    cr_assert_eq(access(d->path, R_OK), 0, "not a real file: %s", d->path);
    cr_assert_not_null(strstr(msg, d->path), "the message names another file: %s", msg);
    cr_assert_eq(access(in_tmp("big.h5"), F_OK), -1, "output written");
    ld_convert_free(c);
}

Test(errdetail, strict_stop_on_a_bad_file_names_strict)
{
    ld_convert *c = ld_convert_create();
    cr_assert_eq(ld_convert_set(c, LD_C_STRICT, 1), LD_OK);
    cr_assert_eq(ld_convert_set(c, LD_C_RESIZE_W, 16), LD_OK);
    cr_assert_eq(ld_convert_set(c, LD_C_RESIZE_H, 16), LD_OK);
    /* a class folder of its own: a real photo, then a file that is not an image */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/bad/a && cp %s/photos/p00.jpg %s/bad/a/ && echo hello > %s/bad/a/zz.jpg",
             ld_tmp, LD_TEST_DATA, ld_tmp, ld_tmp);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char src[512];
    snprintf(src, sizeof src, "%s/bad", ld_tmp);
    int rc = ld_convert_run(c, src, in_tmp("bad.h5"));
    cr_assert_lt(rc, 0, "%s", ld_convert_errmsg(c));
    const ld_error_detail *d = ld_convert_error(c);
    cr_assert_eq(d->code, rc);
    cr_assert_eq(d->param, LD_C_STRICT, "param %d: %s", d->param, ld_convert_errmsg(c));
    cr_assert_not_null(d->path, "%s", ld_convert_errmsg(c));
    cr_assert_geq(d->sample, 0);
    cr_assert_not_null(strstr(ld_convert_errmsg(c), "(stopped: strict)"), "%s",
                       ld_convert_errmsg(c));
    ld_convert_free(c);
}

Test(errdetail, a_corrupt_sample_in_an_epoch_gives_its_index_and_file)
{
    ld_reader *r = ld_reader_create();
    ld_reader_set(r, LD_R_BATCH_SIZE, 1);
    ld_reader_set(r, LD_R_THREADS, 1);
    const char *path = LD_TEST_DATA "/reader/enc_corrupt.h5";
    cr_assert_eq(ld_reader_open(r, path), LD_OK, "%s", ld_reader_errmsg(r));
    const ld_batch *b;
    int rc;
    size_t got = 0;
    while ((rc = ld_reader_next(r, &b)) == LD_OK)
        got++;
    cr_assert_eq(rc, LD_EFORMAT, "%d: %s", rc, ld_reader_errmsg(r));
    const ld_error_detail *d = ld_reader_error(r);
    cr_assert_eq(d->code, LD_EFORMAT);
    /* samples 5 and 7 of the fixture are corrupt; in order, one thread: 5 comes first */
    cr_assert_eq(d->sample, 5, "sample %lld: %s", (long long)d->sample, ld_reader_errmsg(r));
    cr_assert_leq(got, 5);
    cr_assert_not_null(d->path);
    cr_assert_str_eq(d->path, path);
    cr_assert_eq(d->param, -1, "param %d: %s", d->param, ld_reader_errmsg(r));
    ld_reader_free(r);
}
