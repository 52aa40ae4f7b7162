/*
 * Issue 14 items 1 and 2: one parameter model. Both handles take enum-typed parameter ids and
 * a setter of the parameter's type; the tables describe type, unit, default and choices; each
 * enum has its own prefix and values, so a value of another enum is refused.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libdata/convert.h"
#include "libdata/reader.h"

Test(params, reader_channel_order_refuses_a_sample_order_value)
{
    ld_reader *r = ld_reader_create();
    cr_assert(r);
    cr_assert_eq(ld_reader_set(r, LD_R_CHANNEL_ORDER, LD_ORDER_SHUFFLE), LD_EINVAL);
    cr_assert(strstr(ld_reader_errmsg(r), "channel_order"), "%s", ld_reader_errmsg(r));
    cr_assert(strstr(ld_reader_errmsg(r), "another enum"), "%s", ld_reader_errmsg(r));
    cr_assert_eq(ld_reader_set(r, LD_R_ORDER, LD_CHANNELS_RGB), LD_EINVAL);
    cr_assert_eq(ld_reader_set(r, LD_R_DTYPE, LD_LAYOUT_NHWC), LD_EINVAL);
    cr_assert_eq(ld_reader_set(r, LD_R_LABEL_DTYPE, LD_DTYPE_U8), LD_EINVAL);
    cr_assert_eq(ld_reader_set(r, LD_R_CHANNEL_ORDER, LD_CHANNELS_RGB), LD_OK);
    int64_t v;
    cr_assert_eq(ld_reader_get(r, LD_R_CHANNEL_ORDER, &v), LD_OK);
    cr_assert_eq(v, LD_CHANNELS_RGB);
    ld_reader_free(r);
}

Test(params, convert_enums_refuse_values_of_other_enums)
{
    ld_convert *c = ld_convert_create();
    cr_assert(c);
    cr_assert_eq(ld_convert_set(c, LD_C_CHANNEL_ORDER, LD_ORDER_SHUFFLE), LD_EINVAL);
    cr_assert_eq(ld_convert_set(c, LD_C_CHANNEL_ORDER, LD_CHANNELS_AS_STORED), LD_EINVAL,
                 "as stored is the reader's, not an output order");
    cr_assert_eq(ld_convert_set(c, LD_C_FORMAT, LD_RESIZE_CROP), LD_EINVAL);
    cr_assert_eq(ld_convert_set(c, LD_C_RESIZE_MODE, LD_FORMAT_LMDB), LD_EINVAL);
    cr_assert_eq(ld_convert_set(c, LD_C_SPLIT_PATHS, 1), LD_EINVAL, "a bare number");
    cr_assert_eq(ld_convert_set(c, LD_C_SPLIT_PATHS, LD_SPLIT_PATHS_RELATIVE), LD_OK);
    ld_convert_free(c);
}

Test(params, a_setter_of_the_wrong_type_is_refused_naming_the_right_one)
{
    ld_reader *r = ld_reader_create();
    cr_assert_eq(ld_reader_set_str(r, LD_R_SCALE, "0.5"), LD_EINVAL);
    cr_assert(strstr(ld_reader_errmsg(r), "ld_reader_set_double"), "%s", ld_reader_errmsg(r));
    cr_assert_eq(ld_reader_set(r, LD_R_MEAN_FILE, 1), LD_EINVAL);
    cr_assert(strstr(ld_reader_errmsg(r), "ld_reader_set_str"), "%s", ld_reader_errmsg(r));
    cr_assert_eq(ld_reader_set_double(r, LD_R_BATCH_SIZE, 2.0), LD_EINVAL);
    cr_assert_eq(ld_reader_set_double(r, LD_R_SCALE, NAN), LD_EINVAL);
    cr_assert_eq(ld_reader_set_double(r, LD_R_SCALE, 1.0 / 255), LD_OK);
    const float five[5] = {1, 2, 3, 4, 5};
    cr_assert_eq(ld_reader_set_floats(r, LD_R_MEAN_VALUES, five, 5), LD_EINVAL);
    cr_assert_eq(ld_reader_set_floats(r, LD_R_MEAN_VALUES, five, 3), LD_OK);
    int64_t v;
    cr_assert_eq(ld_reader_get(r, LD_R_SCALE, &v), LD_EINVAL, "not an integer parameter");
    cr_assert_eq(ld_reader_get_info(r, LD_R_INFO_SAMPLES, &v), LD_ESTATE);
    ld_reader_free(r);

    ld_convert *c = ld_convert_create();
    cr_assert_eq(ld_convert_set(c, LD_C_LIST_FILE, 1), LD_EINVAL);
    cr_assert(strstr(ld_convert_errmsg(c), "ld_convert_set_str"), "%s", ld_convert_errmsg(c));
    cr_assert_eq(ld_convert_set_str(c, LD_C_QUALITY, "70"), LD_EINVAL);
    cr_assert_eq(ld_convert_set_str(c, LD_C_SOURCE_NOTE, "note"), LD_OK);
    ld_convert_free(c);
}

/* Every row: a type, a default inside the bounds (an enum's among its choices), help. */
static void check_table(const ld_param_desc *t, size_t n)
{
    cr_assert(t && n);
    for (size_t i = 0; i < n; i++) {
        const ld_param_desc *d = &t[i];
        cr_assert(d->name && d->help && d->unit && d->def_text, "row %zu", i);
        cr_assert(d->type >= LD_PARAM_INT && d->type <= LD_PARAM_STRING, "%s", d->name);
        if (d->type == LD_PARAM_ENUM) {
            int found = 0;
            for (size_t k = 0; k < d->nchoices; k++) {
                cr_assert(d->choices[k].value >= d->min && d->choices[k].value <= d->max);
                if (d->choices[k].value == d->def) {
                    found = 1;
                    cr_assert_str_eq(d->choices[k].name, d->def_text, "%s", d->name);
                }
            }
            cr_assert(found, "%s: default is not a choice", d->name);
        } else if (d->type == LD_PARAM_INT || d->type == LD_PARAM_BOOL) {
            cr_assert(d->def >= d->min && d->def <= d->max, "%s", d->name);
            cr_assert(d->choices == NULL && d->nchoices == 0, "%s", d->name);
        }
    }
}

Test(params, tables_describe_type_default_and_choices)
{
    size_t n = 0;
    const ld_param_desc *t = ld_convert_params(&n);
    check_table(t, n);
    t = ld_reader_params(&n);
    check_table(t, n);
}

/* Issue 14 item 4: a mean image set from memory gives exactly the batches of the same image
 * read from a mean file (the Python bindings used to encode a protobuf file for this). */
static float *epoch_floats(ld_reader *r, size_t *count)
{
    cr_assert_eq(ld_reader_open(r, LD_TEST_DATA "/reader/raw_ours.h5"), LD_OK, "%s",
                 ld_reader_errmsg(r));
    float *all = NULL;
    size_t n = 0;
    const ld_batch *b;
    int rc;
    while ((rc = ld_reader_next(r, &b)) == LD_OK) {
        const size_t k = b->data_bytes / sizeof(float);
        all = realloc(all, (n + k) * sizeof(float));
        cr_assert(all);
        memcpy(all + n, b->data, b->data_bytes);
        n += k;
    }
    cr_assert_eq(rc, LD_END, "%s", ld_reader_errmsg(r));
    *count = n;
    return all;
}

Test(params, a_mean_image_from_memory_equals_the_same_mean_file)
{
    static float mean[3 * 24 * 20];
    for (int k = 0; k < 3 * 24 * 20; k++)
        mean[k] = (float)(k % 89) * 0.5f;
    char mp[] = "/tmp/ld_test_mean_XXXXXX";
    int fd = mkstemp(mp);
    cr_assert(fd >= 0);
    close(fd);
    /* BlobProto: num 1, channels 3, height 24, width 20, packed float data (field 5) */
    FILE *f = fopen(mp, "wb");
    cr_assert(f);
    /* tag, value pairs; 5760 data bytes = varint 0x80 0x2d */
    const unsigned char head[] = {0x08, 1, 0x10, 3, 0x18, 24, 0x20, 20, 0x2a, 0x80, 0x2d};
    cr_assert_eq(sizeof mean, 0x2d * 128);
    fwrite(head, 1, sizeof head, f);
    fwrite(mean, 1, sizeof mean, f);
    cr_assert_eq(fclose(f), 0);

    size_t n1, n2;
    ld_reader *a = ld_reader_create();
    ld_reader_set(a, LD_R_DTYPE, LD_DTYPE_F32);
    ld_reader_set(a, LD_R_CROP_W, 10);
    ld_reader_set(a, LD_R_CROP_H, 8);
    cr_assert_eq(ld_reader_set_str(a, LD_R_MEAN_FILE, mp), LD_OK);
    float *from_file = epoch_floats(a, &n1);
    ld_reader *b = ld_reader_create();
    ld_reader_set(b, LD_R_DTYPE, LD_DTYPE_F32);
    ld_reader_set(b, LD_R_CROP_W, 10);
    ld_reader_set(b, LD_R_CROP_H, 8);
    cr_assert_eq(ld_reader_set_str(b, LD_R_MEAN_FILE, "/nonexistent.binaryproto"), LD_OK);
    cr_assert_eq(ld_reader_set_mean_image(b, mean, 3, 24, 20), LD_OK, "replaces the file");
    float *from_memory = epoch_floats(b, &n2);
    cr_assert_eq(n1, n2);
    cr_assert(n1 > 0);
    cr_assert_eq(memcmp(from_file, from_memory, n1 * sizeof(float)), 0);
    free(from_file);
    free(from_memory);
    ld_reader_free(a);
    ld_reader_free(b);
    unlink(mp);

    ld_reader *c = ld_reader_create();
    cr_assert_eq(ld_reader_set_mean_image(c, mean, 5, 24, 20), LD_EINVAL);
    ld_reader_set(c, LD_R_DTYPE, LD_DTYPE_F32);
    cr_assert_eq(ld_reader_set_mean_image(c, mean, 3, 4, 4), LD_OK);
    cr_assert_eq(ld_reader_open(c, LD_TEST_DATA "/reader/raw_ours.h5"), LD_EINVAL,
                 "a mean image of the wrong size is refused at open");
    cr_assert(strstr(ld_reader_errmsg(c), "mean"), "%s", ld_reader_errmsg(c));
    ld_reader_free(c);
}

/* Every row of a table reaches its value through the handle by its id (one parameter store,
 * dense slots): integer kinds read back their default and keep a value set at a bound; strings
 * take a value; ids between and around the rows are refused. */
static int is_int_kind(int type)
{
    return type == LD_PARAM_INT || type == LD_PARAM_BOOL || type == LD_PARAM_ENUM;
}

Test(params, every_row_is_reached_by_its_id_and_no_other_id_is)
{
    size_t n;
    const ld_param_desc *t = ld_convert_params(&n);
    ld_convert *c = ld_convert_create();
    cr_assert(c && t && n > 20);
    for (size_t i = 0; i < n; i++) {
        int64_t v = -12345, lo, hi;
        if (is_int_kind(t[i].type)) {
            cr_assert_eq(ld_convert_get(c, (ld_convert_param)t[i].id, &v), LD_OK, "%s", t[i].name);
            cr_assert_eq(v, t[i].def, "%s: %lld, default %lld", t[i].name, (long long)v,
                         (long long)t[i].def);
            cr_assert_eq(ld_convert_param_bounds((ld_convert_param)t[i].id, &lo, &hi), LD_OK);
            cr_assert(lo == t[i].min && hi == t[i].max, "%s", t[i].name);
            if (t[i].type != LD_PARAM_ENUM) {
                cr_assert_eq(ld_convert_set(c, (ld_convert_param)t[i].id, t[i].max), LD_OK);
                cr_assert_eq(ld_convert_get(c, (ld_convert_param)t[i].id, &v), LD_OK);
                cr_assert_eq(v, t[i].max, "%s", t[i].name);
            }
        } else if (t[i].type == LD_PARAM_STRING) {
            cr_assert_eq(ld_convert_set_str(c, (ld_convert_param)t[i].id, "x"), LD_OK, "%s",
                         t[i].name);
        }
    }
    const int convert_unknown[] = {0, -1, 31, 99, 105, 1000};
    for (size_t i = 0; i < sizeof convert_unknown / sizeof *convert_unknown; i++) {
        int64_t v;
        cr_assert_eq(ld_convert_get(c, (ld_convert_param)convert_unknown[i], &v), LD_EINVAL);
        cr_assert_eq(ld_convert_set(c, (ld_convert_param)convert_unknown[i], 0), LD_EINVAL);
    }
    ld_convert_free(c);

    t = ld_reader_params(&n);
    ld_reader *r = ld_reader_create();
    cr_assert(r && t && n > 20);
    for (size_t i = 0; i < n; i++) {
        int64_t v = -12345, lo, hi;
        if (is_int_kind(t[i].type)) {
            cr_assert_eq(ld_reader_get(r, (ld_reader_param)t[i].id, &v), LD_OK, "%s", t[i].name);
            cr_assert_eq(v, t[i].def, "%s", t[i].name);
            cr_assert_eq(ld_reader_param_bounds((ld_reader_param)t[i].id, &lo, &hi), LD_OK);
            cr_assert(lo == t[i].min && hi == t[i].max, "%s", t[i].name);
        } else if (t[i].type == LD_PARAM_STRING) {
            cr_assert_eq(ld_reader_set_str(r, (ld_reader_param)t[i].id, "x"), LD_OK, "%s",
                         t[i].name);
        }
    }
    const int reader_unknown[] = {0, -1, 27, 99, 107, 1000};
    for (size_t i = 0; i < sizeof reader_unknown / sizeof *reader_unknown; i++) {
        int64_t v;
        cr_assert_eq(ld_reader_get(r, (ld_reader_param)reader_unknown[i], &v), LD_EINVAL);
        cr_assert_eq(ld_reader_set(r, (ld_reader_param)reader_unknown[i], 0), LD_EINVAL);
    }
    ld_reader_free(r);
}
