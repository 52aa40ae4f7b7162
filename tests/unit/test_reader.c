/*
 * Reader tests: order and sharding, bit-exactness against h5py (tests/python/reader_dump.py),
 * transforms against a NumPy reference, budgets, corrupt files, and the big RLIMIT_AS run.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_tmp.h"
#include "test_file.h"
#include "libdata/reader.h"
#include "reader/sampler.h"
#include "reader/mean.h"

#define FIX LD_TEST_DATA "/reader/"
#define DUMP LD_PYTHON " " LD_SOURCE_DIR "/tests/python/reader_dump.py"

TestSuite(reader, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 600);

/* ---- helpers ------------------------------------------------------------------------------ */

static ld_reader *open_reader(const char *path, const int64_t *kv, size_t nkv)
{
    ld_reader *r = ld_reader_create();
    cr_assert(r);
    for (size_t k = 0; k + 1 < nkv; k += 2)
        cr_assert_eq(ld_reader_set(r, (ld_reader_param)kv[k], kv[k + 1]), LD_OK, "%s",
                     ld_reader_errmsg(r));
    int rc = ld_reader_open(r, path);
    cr_assert_eq(rc, LD_OK, "open %s: %s", path, ld_reader_errmsg(r));
    return r;
}

/* Read one epoch: concatenated data, labels (as double) and indices. Returns the sample count. */
typedef struct epoch_out {
    uint8_t *data;
    double *labels;
    uint64_t *idx;
    size_t n, bytes, batches;
    size_t last_n;
} epoch_out;

static void read_epoch(ld_reader *r, epoch_out *o)
{
    memset(o, 0, sizeof(*o));
    const ld_batch *b;
    int rc;
    while ((rc = ld_reader_next(r, &b)) == LD_OK) {
        o->data = realloc(o->data, o->bytes + b->data_bytes);
        o->labels = realloc(o->labels, (o->n + b->n) * sizeof(double));
        o->idx = realloc(o->idx, (o->n + b->n) * sizeof(uint64_t));
        cr_assert(o->data && o->labels && o->idx);
        memcpy(o->data + o->bytes, b->data, b->data_bytes);
        memcpy(o->idx + o->n, b->indices, b->n * sizeof(uint64_t));
        for (size_t j = 0; j < b->n; j++)
            o->labels[o->n + j] = b->label_dtype == LD_DTYPE_F32 ? ((const float *)b->labels)[j]
                                                                 : ((const int32_t *)b->labels)[j];
        cr_assert_eq(b->number, o->batches, "batch number");
        o->bytes += b->data_bytes;
        o->n += b->n;
        o->batches++;
        o->last_n = b->n;
    }
    cr_assert_eq(rc, LD_END, "next: %d %s", rc, ld_reader_errmsg(r));
}

static void free_epoch(epoch_out *o)
{
    free(o->data);
    free(o->labels);
    free(o->idx);
}

/* Run reader_dump.py MODE on the given indices; returns its output. */
static uint8_t *dump(const char *mode, const char *file, const char *dset, const uint64_t *idx,
                     size_t n, const char *extra, size_t *len)
{
    char ip[300], op[300], cmd[2048];
    snprintf(ip, sizeof ip, "%s/idx.bin", ld_tmp);
    snprintf(op, sizeof op, "%s/out.bin", ld_tmp);
    FILE *f = fopen(ip, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(idx, sizeof(uint64_t), n, f), n);
    fclose(f);
    snprintf(cmd, sizeof cmd, DUMP " %s '%s' %s %s %s %s", mode, file, dset, ip, op,
             extra ? extra : "");
    cr_assert_eq(system(cmd), 0, "%s failed", cmd);
    return slurp(op, len);
}

/* Compare a read epoch with h5py's bytes and labels for the same indices. */
static void check_against_h5py(const char *file, const char *dset, const char *lset,
                               const epoch_out *o)
{
    size_t len;
    uint8_t *want = dump("bytes", file, dset, o->idx, o->n, NULL, &len);
    cr_assert_eq(len, o->bytes, "%s: h5py gives %zu bytes, reader %zu", file, len, o->bytes);
    for (size_t k = 0; k < len; k++)
        if (want[k] != o->data[k])
            cr_assert_fail("%s: byte %zu differs (sample %llu): %u vs h5py %u", file, k,
                           (unsigned long long)o->idx[k / (len / o->n)], o->data[k], want[k]);
    free(want);
    double *lab = (double *)dump("labels", file, lset, o->idx, o->n, NULL, &len);
    cr_assert_eq(len, o->n * sizeof(double));
    for (size_t k = 0; k < o->n; k++)
        cr_assert(lab[k] == o->labels[k] || (float)lab[k] == (float)o->labels[k],
                  "%s: label of sample %llu: %g vs h5py %g", file, (unsigned long long)o->idx[k],
                  o->labels[k], lab[k]);
    free(lab);
}

/* ---- order -------------------------------------------------------------------------------- */

static void check_cover(int order, int world, size_t n)
{
    unsigned char *seen = calloc(n, 1);
    size_t total = 0;
    for (int rank = 0; rank < world; rank++) {
        int64_t kv[] = {LD_R_ORDER,      order, LD_R_WORLD, world, LD_R_RANK,    rank,
                        LD_R_BATCH_SIZE, 8,     LD_R_SEED,  11,    LD_R_THREADS, 2};
        ld_reader *r = open_reader(FIX "raw_ours.h5", kv, sizeof kv / sizeof kv[0]);
        epoch_out o;
        read_epoch(r, &o);
        cr_assert_eq(o.n, n / (size_t)world, "rank %d got %zu samples, not %zu", rank, o.n,
                     n / (size_t)world);
        for (size_t k = 0; k < o.n; k++) {
            cr_assert(o.idx[k] < n);
            cr_assert_eq(seen[o.idx[k]], 0, "sample %llu twice (order %d, world %d)",
                         (unsigned long long)o.idx[k], order, world);
            seen[o.idx[k]] = 1;
        }
        total += o.n;
        free_epoch(&o);
        ld_reader_free(r);
    }
    cr_assert_eq(total, n - n % (size_t)world);
    free(seen);
}

Test(reader, each_sample_appears_once_per_epoch_across_ranks)
{
    for (int order = LD_ORDER_SEQUENTIAL; order <= LD_ORDER_BLOCK_SHUFFLE; order++) {
        check_cover(order, 1, 100);
        check_cover(order, 4, 100);
        check_cover(order, 3, 100); /* one sample left over each epoch */
    }
}

Test(reader, same_seed_gives_same_order_and_each_epoch_a_new_one)
{
    int64_t kv[] = {LD_R_ORDER, LD_ORDER_SHUFFLE, LD_R_BATCH_SIZE, 16, LD_R_SEED, 5, LD_R_THREADS,
                    2};
    ld_reader *a = open_reader(FIX "raw_ours.h5", kv, 8);
    kv[7] = 1; /* another thread count: same order */
    ld_reader *b = open_reader(FIX "raw_ours.h5", kv, 8);
    epoch_out a0, a1, b0;
    read_epoch(a, &a0);
    read_epoch(a, &a1);
    read_epoch(b, &b0);
    cr_assert_eq(memcmp(a0.idx, b0.idx, a0.n * 8), 0, "same seed, different order");
    cr_assert_eq(memcmp(a0.data, b0.data, a0.bytes), 0);
    cr_assert_neq(memcmp(a0.idx, a1.idx, a0.n * 8), 0, "epoch 1 repeats epoch 0's order");
    int sorted = 1;
    for (size_t k = 1; k < a0.n; k++)
        sorted &= a0.idx[k] > a0.idx[k - 1];
    cr_assert(!sorted, "shuffle gave the sequential order");
    /* resuming at epoch 1 gives epoch 1's order */
    int64_t kv2[] = {LD_R_ORDER, LD_ORDER_SHUFFLE, LD_R_BATCH_SIZE, 16, LD_R_SEED, 5, LD_R_EPOCH,
                     1};
    ld_reader *c = open_reader(FIX "raw_ours.h5", kv2, 8);
    epoch_out c1;
    read_epoch(c, &c1);
    cr_assert_eq(memcmp(a1.idx, c1.idx, a1.n * 8), 0, "resumed epoch differs");
    int64_t ep;
    cr_assert_eq(ld_reader_get_info(c, LD_R_INFO_SAMPLES, &ep), LD_OK);
    cr_assert_eq(ep, 100);
    free_epoch(&a0);
    free_epoch(&a1);
    free_epoch(&b0);
    free_epoch(&c1);
    ld_reader_free(a);
    ld_reader_free(b);
    ld_reader_free(c);
}

Test(reader, block_shuffle_keeps_reads_within_windows_of_chunks)
{
    /* raw_ours has chunks of 7 samples: with a window of 2 chunks, the samples of each chunk
     * sit within 14 consecutive positions of the order, and the order is not sequential. */
    int64_t kv[] = {LD_R_ORDER, LD_ORDER_BLOCK_SHUFFLE, LD_R_WINDOW, 2, LD_R_BATCH_SIZE, 10};
    ld_reader *r = open_reader(FIX "raw_ours.h5", kv, 6);
    epoch_out o;
    read_epoch(r, &o);
    cr_assert_eq(o.n, 100);
    size_t first[15], last[15], moved = 0;
    for (int c = 0; c < 15; c++)
        first[c] = SIZE_MAX, last[c] = 0;
    for (size_t k = 0; k < o.n; k++) {
        uint64_t c = o.idx[k] / 7;
        first[c] = first[c] < k ? first[c] : k;
        last[c] = last[c] > k ? last[c] : k;
        moved += o.idx[k] != k;
    }
    for (int c = 0; c < 15; c++)
        cr_assert(last[c] - first[c] < 14, "chunk %d spread over positions %zu..%zu", c, first[c],
                  last[c]);
    cr_assert(moved > 50, "block shuffle left the order almost sequential");
    free_epoch(&o);
    ld_reader_free(r);
}

Test(reader, drop_last_or_short_final_batch)
{
    int64_t kv[] = {LD_R_BATCH_SIZE, 32, LD_R_DROP_LAST, 0};
    ld_reader *r = open_reader(FIX "raw_ours.h5", kv, 4);
    epoch_out o;
    read_epoch(r, &o);
    cr_assert_eq(o.batches, 4);
    cr_assert_eq(o.last_n, 4);
    int64_t v;
    cr_assert_eq(ld_reader_get_info(r, LD_R_INFO_EPOCH_BATCHES, &v), LD_OK);
    cr_assert_eq(v, 4);
    free_epoch(&o);
    ld_reader_free(r);
    kv[3] = 1;
    r = open_reader(FIX "raw_ours.h5", kv, 4);
    read_epoch(r, &o);
    cr_assert_eq(o.batches, 3);
    cr_assert_eq(o.n, 96);
    free_epoch(&o);
    /* the next epoch works too, and reports its epoch number */
    const ld_batch *b;
    cr_assert_eq(ld_reader_next(r, &b), LD_OK, "%s", ld_reader_errmsg(r));
    cr_assert_eq(b->epoch, 1);
    ld_reader_free(r);
}

/* ---- bytes against h5py --------------------------------------------------------------- */

static void check_file(const char *file, const char *dset)
{
    /* shuffled (sample by sample) and sequential (runs of neighbours read at once) */
    for (int order = LD_ORDER_SHUFFLE; order >= LD_ORDER_SEQUENTIAL; order--) {
        int64_t kv[] = {LD_R_ORDER,   order, LD_R_BATCH_SIZE, 13, LD_R_SEED, 3,
                        LD_R_THREADS, 2,     LD_R_PREFETCH,   3};
        ld_reader *r = open_reader(file, kv, sizeof kv / sizeof kv[0]);
        epoch_out o;
        read_epoch(r, &o);
        check_against_h5py(file, dset, "label", &o);
        free_epoch(&o);
        ld_reader_free(r);
    }
}

Test(reader, uint8_batches_are_bit_identical_to_h5py_for_every_layout)
{
    check_file(FIX "raw_ours.h5", "data");
    check_file(FIX "raw_default.h5", "data");
    check_file(FIX "raw_contig.h5", "data");
    check_file(FIX "raw_deflate.h5", "data");
    check_file(FIX "raw_gray.h5", "data");
    check_file(FIX "split.txt", "data");
}

Test(reader, float_pixels_and_other_dataset_names)
{
    ld_reader *r = ld_reader_create();
    cr_assert_eq(ld_reader_set_str(r, LD_R_DATA_NAME, "x"), LD_OK);
    cr_assert_eq(ld_reader_set_str(r, LD_R_LABEL_NAME, "y"), LD_OK);
    cr_assert_eq(ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_F32), LD_OK);
    cr_assert_eq(ld_reader_set(r, LD_R_LABEL_DTYPE, LD_DTYPE_F32), LD_OK);
    cr_assert_eq(ld_reader_set(r, LD_R_ORDER, LD_ORDER_SHUFFLE), LD_OK);
    cr_assert_eq(ld_reader_open(r, FIX "raw_float.h5"), LD_OK, "%s", ld_reader_errmsg(r));
    epoch_out o;
    read_epoch(r, &o);
    size_t len;
    uint8_t *want = dump("bytes", FIX "raw_float.h5", "x", o.idx, o.n, NULL, &len);
    cr_assert_eq(len, o.bytes);
    cr_assert_eq(memcmp(want, o.data, len), 0, "float32 pixels differ from h5py");
    free(want);
    for (size_t k = 0; k < o.n; k++)
        cr_assert_float_eq(o.labels[k], (double)((o.idx[k] * 7) % 10) + 0.5, 1e-6);
    free_epoch(&o);
    ld_reader_free(r);
}

/* ---- transforms ------------------------------------------------------------------------ */

Test(reader, float_batches_equal_the_reference_transform)
{
    const char *file = FIX "raw_ours.h5";
    for (int nhwc = 0; nhwc <= 1; nhwc++) {
        ld_reader *r = ld_reader_create();
        cr_assert_eq(ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_F32), LD_OK);
        cr_assert_eq(ld_reader_set(r, LD_R_LAYOUT, nhwc ? LD_LAYOUT_NHWC : LD_LAYOUT_NCHW), LD_OK);
        cr_assert_eq(ld_reader_set(r, LD_R_CROP_W, 16), LD_OK);
        cr_assert_eq(ld_reader_set(r, LD_R_CROP_H, 12), LD_OK);
        cr_assert_eq(ld_reader_set(r, LD_R_CHANNEL_ORDER, LD_CHANNELS_RGB), LD_OK); /* file: BGR */
        cr_assert_eq(ld_reader_set(r, LD_R_ORDER, LD_ORDER_SHUFFLE), LD_OK);
        cr_assert_eq(ld_reader_set(r, LD_R_BATCH_SIZE, 10), LD_OK);
        cr_assert_eq(ld_reader_set_floats(r, LD_R_MEAN_VALUES, (const float[]){10, 20, 30}, 3),
                     LD_OK);
        cr_assert_eq(ld_reader_set_double(r, LD_R_SCALE, 0.5), LD_OK);
        cr_assert_eq(ld_reader_open(r, file), LD_OK, "%s", ld_reader_errmsg(r));
        int64_t v;
        cr_assert_eq(ld_reader_get_info(r, LD_R_INFO_ORDER, &v), LD_OK);
        cr_assert_eq(v, LD_CHANNELS_RGB);
        epoch_out o;
        read_epoch(r, &o);
        size_t len;
        char extra[64];
        snprintf(extra, sizeof extra, "16 12 10,20,30 0.5 1 %d", nhwc);
        float *want = (float *)dump("ref", file, "data", o.idx, o.n, extra, &len);
        cr_assert_eq(len, o.bytes, "reference has %zu bytes, reader %zu", len, o.bytes);
        const float *got = (const float *)o.data;
        for (size_t k = 0; k < len / 4; k++)
            cr_assert_float_eq(got[k], want[k], 1e-5, "element %zu: %g vs %g (nhwc %d)", k, got[k],
                               want[k], nhwc);
        free(want);
        free_epoch(&o);
        ld_reader_free(r);
    }
}

/* Is `got` (c x ch x cw, uint8 NCHW) some crop of `src` (c x h x w), mirrored or not?
 * Returns 1 + mirrored, or 0. */
static int is_crop(const uint8_t *got, const uint8_t *src, int c, int h, int w, int cw, int ch)
{
    for (int y0 = 0; y0 + ch <= h; y0++)
        for (int x0 = 0; x0 + cw <= w; x0++)
            for (int m = 0; m < 2; m++) {
                int ok = 1;
                for (int k = 0; k < c && ok; k++)
                    for (int y = 0; y < ch && ok; y++)
                        for (int x = 0; x < cw && ok; x++) {
                            int sx = m ? x0 + cw - 1 - x : x0 + x;
                            ok = got[(k * ch + y) * cw + x] == src[(k * h + y0 + y) * w + sx];
                        }
                if (ok) return 1 + m;
            }
    return 0;
}

Test(reader, random_crop_and_mirror_are_reproducible_for_any_thread_count)
{
    const int sizes[2][2] = {{8, 8}, {19, 13}}; /* 19: the 8-byte reversal and its tail */
    for (int z = 0; z < 2; z++) {
        const int cw = sizes[z][0], ch = sizes[z][1];
        epoch_out o[3];
        for (int t = 0; t < 3; t++) {
            int64_t kv[] = {LD_R_CROP_W,      cw, LD_R_CROP_H,  ch,
                            LD_R_RANDOM_CROP, 1,  LD_R_MIRROR,  1,
                            LD_R_SEED,        9,  LD_R_THREADS, t + 1,
                            LD_R_BATCH_SIZE,  7,  LD_R_ORDER,   LD_ORDER_SHUFFLE};
            ld_reader *r = open_reader(FIX "raw_ours.h5", kv, sizeof kv / sizeof kv[0]);
            read_epoch(r, &o[t]);
            ld_reader_free(r);
        }
        cr_assert_eq(memcmp(o[0].data, o[1].data, o[0].bytes), 0, "1 vs 2 threads differ");
        cr_assert_eq(memcmp(o[0].data, o[2].data, o[0].bytes), 0, "1 vs 3 threads differ");
        size_t len;
        uint8_t *src = dump("bytes", FIX "raw_ours.h5", "data", o[0].idx, o[0].n, NULL, &len);
        int mirrored = 0, off_center = 0;
        const size_t ob = (size_t)3 * cw * ch;
        for (size_t k = 0; k < o[0].n; k++) {
            const uint8_t *g = o[0].data + k * ob, *s = src + k * 3 * 24 * 20;
            int m = is_crop(g, s, 3, 24, 20, cw, ch);
            cr_assert(m, "sample %llu is not a %dx%d crop of the source",
                      (unsigned long long)o[0].idx[k], cw, ch);
            mirrored += m == 2;
            off_center += memcmp(g, s + ((24 - ch) / 2 * 20 + (20 - cw) / 2), (size_t)cw) != 0;
        }
        cr_assert(off_center > 50, "crops look centered: random crop not applied");
        cr_assert(mirrored > 25 && mirrored < 75, "%d of 100 mirrored", mirrored);
        free(src);
        for (int t = 0; t < 3; t++)
            free_epoch(&o[t]);
    }
}

/* ---- encoded ------------------------------------------------------------------------------ */

Test(reader, encoded_jpeg_batches_decode_like_pil)
{
    int64_t kv[] = {LD_R_BATCH_SIZE, 5, LD_R_THREADS, 2, LD_R_ORDER, LD_ORDER_SHUFFLE};
    ld_reader *r = open_reader(FIX "enc_same.h5", kv, 6);
    int64_t v;
    cr_assert_eq(ld_reader_get_info(r, LD_R_INFO_ENCODED, &v), LD_OK);
    cr_assert_eq(v, 1);
    epoch_out o;
    read_epoch(r, &o);
    cr_assert_eq(o.n, 12);
    cr_assert_eq(o.bytes, 12 * 3 * 90 * 120);
    size_t len;
    uint8_t *want = dump("decode", FIX "enc_same.h5", "encoded", o.idx, o.n, NULL, &len);
    cr_assert_eq(len, o.bytes);
    long sum = 0, maxd = 0;
    for (size_t k = 0; k < len; k++) {
        long d = labs((long)want[k] - (long)o.data[k]);
        sum += d;
        maxd = d > maxd ? d : maxd;
    }
    cr_assert(maxd <= 4 && (double)sum / (double)len < 0.5,
              "decoded pixels differ from PIL: max %ld, mean %g", maxd, (double)sum / len);
    for (size_t k = 0; k < o.n; k++)
        cr_assert_eq(o.labels[k], (double)o.idx[k]);
    free(want);
    free_epoch(&o);
    ld_reader_free(r);
}

Test(reader, encoded_photos_of_two_sizes_need_a_crop)
{
    ld_reader *r = ld_reader_create();
    cr_assert_eq(ld_reader_open(r, FIX "enc.h5"), LD_EINVAL);
    cr_assert(strstr(ld_reader_errmsg(r), "crop"), "%s", ld_reader_errmsg(r));
    ld_reader_set(r, LD_R_CROP_W, 224);
    ld_reader_set(r, LD_R_CROP_H, 224);
    ld_reader_set(r, LD_R_DCT_SCALE, 1);
    ld_reader_set(r, LD_R_BATCH_SIZE, 8);
    cr_assert_eq(ld_reader_open(r, FIX "enc.h5"), LD_OK, "%s", ld_reader_errmsg(r));
    epoch_out o;
    read_epoch(r, &o);
    cr_assert_eq(o.n, 24);
    cr_assert_eq(o.bytes, 24 * 3 * 224 * 224);
    free_epoch(&o);
    ld_reader_free(r);
}

/* ---- memory budget -------------------------------------------------------------------- */

Test(reader, memory_budget_sizes_prefetch_and_names_the_largest_batch)
{
    /* a sample is 1440 bytes (+12 for label and index) */
    int64_t kv[] = {LD_R_BATCH_SIZE, 10, LD_R_MEMORY_BUDGET, 200000, LD_R_THREADS, 1};
    ld_reader *r = open_reader(FIX "raw_ours.h5", kv, 6);
    int64_t pf, mem;
    cr_assert_eq(ld_reader_get_info(r, LD_R_INFO_PREFETCH, &pf), LD_OK);
    cr_assert_eq(ld_reader_get_info(r, LD_R_INFO_MEMORY, &mem), LD_OK);
    cr_assert(pf >= 1 && mem <= 200000, "prefetch %lld, memory %lld", (long long)pf,
              (long long)mem);
    ld_reader_free(r);

    r = ld_reader_create();
    ld_reader_set(r, LD_R_BATCH_SIZE, 1000);
    ld_reader_set(r, LD_R_MEMORY_BUDGET, 60000);
    ld_reader_set(r, LD_R_THREADS, 1);
    cr_assert_eq(ld_reader_open(r, FIX "raw_ours.h5"), LD_ELIMIT, "%s", ld_reader_errmsg(r));
    const char *m = strstr(ld_reader_errmsg(r), "largest batch that fits is ");
    cr_assert(m, "%s", ld_reader_errmsg(r));
    long fit = atol(m + strlen("largest batch that fits is "));
    cr_assert(fit > 10 && fit < 1000, "%s", ld_reader_errmsg(r));
    /* and that batch does open within the same budget */
    ld_reader_set(r, LD_R_BATCH_SIZE, fit);
    cr_assert_eq(ld_reader_open(r, FIX "raw_ours.h5"), LD_OK, "%s", ld_reader_errmsg(r));
    ld_reader_free(r);
}

/* ---- errors ------------------------------------------------------------------------------- */

Test(reader, corrupt_missing_and_truncated_files_are_errors)
{
    struct {
        const char *path;
        int rc;
    } cases[] = {
        {FIX "garbage.h5", LD_EFORMAT},
        {FIX "empty.h5", LD_EFORMAT},
        {FIX "truncated.h5", LD_EFORMAT},
        {FIX "no_such_file.h5", LD_EIO},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ld_reader *r = ld_reader_create();
        int rc = ld_reader_open(r, cases[k].path);
        cr_assert_eq(rc, cases[k].rc, "%s: %d (%s)", cases[k].path, rc, ld_reader_errmsg(r));
        cr_assert(strstr(ld_reader_errmsg(r), cases[k].path), "message lacks the path: %s",
                  ld_reader_errmsg(r));
        ld_reader_free(r);
    }
}

Test(reader, a_file_truncated_while_open_gives_an_error_not_a_crash)
{
    char path[300], cmd[700];
    snprintf(path, sizeof path, "%s/t.h5", ld_tmp);
    /* sequential: runs in batch order; block shuffle: vectored reads of storage runs */
    const int64_t orders[] = {LD_ORDER_SEQUENTIAL, LD_ORDER_BLOCK_SHUFFLE};
    for (int o = 0; o < 2; o++) {
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", FIX "raw_ours.h5", path);
        cr_assert_eq(system(cmd), 0);
        int64_t kv[] = {LD_R_BATCH_SIZE, 10, LD_R_PREFETCH, 1,
                        LD_R_THREADS,    1,  LD_R_ORDER,    orders[o]};
        ld_reader *r = open_reader(path, kv, 8);
        const ld_batch *b;
        cr_assert_eq(ld_reader_next(r, &b), LD_OK);
        cr_assert_eq(truncate(path, 4096), 0);
        int rc;
        while ((rc = ld_reader_next(r, &b)) == LD_OK)
            ;
        cr_assert_eq(rc, LD_EFORMAT, "%d: %s", rc, ld_reader_errmsg(r));
        cr_assert(strstr(ld_reader_errmsg(r), "sample"), "%s", ld_reader_errmsg(r));
        cr_assert(strstr(ld_reader_errmsg(r), "truncated while open"), "%s", ld_reader_errmsg(r));
        ld_reader_free(r);
    }
}

Test(reader, bad_parameters_are_refused)
{
    ld_reader *r = ld_reader_create();
    cr_assert_eq(ld_reader_set(r, LD_R_BATCH_SIZE, 0), LD_EINVAL);
    cr_assert(strstr(ld_reader_errmsg(r), "batch"), "%s", ld_reader_errmsg(r));
    cr_assert_eq(ld_reader_set(r, (ld_reader_param)999, 1), LD_EINVAL);
    cr_assert_eq(ld_reader_set_floats(r, LD_R_MEAN_VALUES, (const float[]){1, NAN}, 2), LD_EINVAL);
    cr_assert_eq(ld_reader_set_double(r, LD_R_SCALE, 1), LD_OK);
    const ld_batch *b;
    cr_assert_eq(ld_reader_next(r, &b), LD_ESTATE);
    ld_reader_set(r, LD_R_WORLD, 2);
    ld_reader_set(r, LD_R_RANK, 2);
    cr_assert_eq(ld_reader_open(r, FIX "raw_ours.h5"), LD_EINVAL, "%s", ld_reader_errmsg(r));
    ld_reader_set(r, LD_R_RANK, 1);
    ld_reader_set_floats(r, LD_R_MEAN_VALUES, (const float[]){1, 2, 3}, 3);
    cr_assert_eq(ld_reader_open(r, FIX "raw_ours.h5"), LD_EINVAL, "mean with uint8 output");
    ld_reader_set_floats(r, LD_R_MEAN_VALUES, NULL, 0);
    ld_reader_set(r, LD_R_CROP_W, 100);
    ld_reader_set(r, LD_R_CROP_H, 100);
    cr_assert_eq(ld_reader_open(r, FIX "raw_ours.h5"), LD_EINVAL, "crop larger than samples");
    ld_reader_set(r, LD_R_CROP_W, 0);
    ld_reader_set(r, LD_R_CROP_H, 0);
    cr_assert_eq(ld_reader_open(r, FIX "raw_ours.h5"), LD_OK, "%s", ld_reader_errmsg(r));
    cr_assert_eq(ld_reader_set(r, LD_R_BATCH_SIZE, 3), LD_ESTATE);
    cr_assert_eq(ld_reader_open(r, FIX "raw_ours.h5"), LD_ESTATE);
    ld_reader_free(r);
    ld_reader_free(NULL);
    size_t n;
    cr_assert(ld_reader_params(&n) && n >= 20);
}

/* ---- the big one: >= 2 GiB under RLIMIT_AS = 256 MiB ------------------------------------ */

static uint32_t crc_table[256];
static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    if (!crc_table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            crc_table[i] = c;
        }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* Whether setrlimit(RLIMIT_AS) limits a process here: qemu-user (the i386 suite on a kernel
 * without IA32 emulation, scripts/ci_32bit.sh) accepts the call and ignores it. */
static int rlimit_as_enforced(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {256u << 20, 256u << 20};
        if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(2); /* the test's own child reports it */
        void *p = mmap(NULL, 512u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        _exit(p == MAP_FAILED ? 0 : 1);
    }
    int st = 0;
    return !(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 1);
}

Test(reader, shuffled_epoch_of_2GiB_under_a_256MiB_address_space_limit, .timeout = 900)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    cr_skip_test("sanitizers reserve terabytes of address space: no RLIMIT_AS test");
#endif
    if (!rlimit_as_enforced())
        cr_skip_test("RLIMIT_AS is not enforced here (qemu-user ignores it); scripts/big_32bit.sh "
                     "reads 5 GiB in a 512 MiB guest address space instead");
    const char *big = LD_TEST_DATA "/reader/big_2g.h5";
    const size_t n = 14300; /* x 150528 bytes = 2.15 GB */
    struct stat sb;
    if (stat(big, &sb) != 0) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, DUMP " big '%s' %zu", big, n);
        cr_assert_eq(system(cmd), 0, "making %s failed", big);
    }
    cr_assert_eq(stat(big, &sb), 0);
    cr_assert(sb.st_size >= (off_t)2147483648LL, "big file is only %lld bytes",
              (long long)sb.st_size);
    char idxp[300], crcp[300];
    snprintf(idxp, sizeof idxp, "%s/big_idx.bin", ld_tmp);
    snprintf(crcp, sizeof crcp, "%s/big_crc.bin", ld_tmp);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        /* child: limit the address space, read one shuffled epoch, record index + crc */
        struct rlimit rl = {256u << 20, 256u << 20};
        if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(10);
        ld_reader *r = ld_reader_create();
        ld_reader_set(r, LD_R_BATCH_SIZE, 64);
        ld_reader_set(r, LD_R_ORDER, LD_ORDER_SHUFFLE);
        ld_reader_set(r, LD_R_SEED, 77);
        ld_reader_set(r, LD_R_THREADS, 2);
        if (ld_reader_open(r, big) != LD_OK) {
            fprintf(stderr, "open: %s\n", ld_reader_errmsg(r));
            _exit(11);
        }
        FILE *fi = fopen(idxp, "wb"), *fc = fopen(crcp, "wb");
        if (!fi || !fc) _exit(12);
        const ld_batch *b;
        int rc;
        size_t seen = 0;
        while ((rc = ld_reader_next(r, &b)) == LD_OK) {
            const size_t sb1 = b->data_bytes / b->n;
            for (size_t j = 0; j < b->n; j++) {
                uint32_t c = crc32_of((const uint8_t *)b->data + j * sb1, sb1);
                fwrite(&b->indices[j], 8, 1, fi);
                fwrite(&c, 4, 1, fc);
            }
            seen += b->n;
        }
        if (rc != LD_END) {
            fprintf(stderr, "next: %s\n", ld_reader_errmsg(r));
            _exit(13);
        }
        fclose(fi);
        fclose(fc);
        ld_reader_free(r);
        _exit(seen == n ? 0 : 14);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed: status %d", st);
    size_t ilen, clen;
    uint64_t *idx = (uint64_t *)slurp(idxp, &ilen);
    uint32_t *crc = (uint32_t *)slurp(crcp, &clen);
    cr_assert_eq(ilen / 8, n);
    unsigned char *seen = calloc(n, 1);
    for (size_t k = 0; k < n; k++) {
        cr_assert(idx[k] < n && !seen[idx[k]], "index %llu repeated or out of range",
                  (unsigned long long)idx[k]);
        seen[idx[k]] = 1;
    }
    free(seen);
    size_t wlen;
    uint32_t *want = (uint32_t *)dump("crc", big, "data", idx, n, NULL, &wlen);
    cr_assert_eq(wlen, clen);
    for (size_t k = 0; k < n; k++)
        cr_assert_eq(crc[k], want[k], "sample %llu (position %zu) differs from h5py",
                     (unsigned long long)idx[k], k);
    free(want);
    free(idx);
    free(crc);
}

/* ---- LMDB through the same API (the store is lmdb_store.c) ------------------------------- */

/* Generous timeout: the databases are made by python3-lmdb, whose commits fsync; on a shared
 * machine with heavy disk traffic one fsync took tens of seconds. */
Test(reader, lmdb_databases_read_through_the_same_api, .timeout = 600)
{
    char db[300], cmd[800];
    snprintf(db, sizeof db, "%s/tiny.lmdb", ld_tmp);
    snprintf(cmd, sizeof cmd,
             LD_PYTHON " " LD_SOURCE_DIR "/tests/python/lmdb_make_caffe_db.py "
                       "'%s' tiny",
             db);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    int64_t kv[] = {LD_R_ORDER,      LD_ORDER_SHUFFLE,
                    LD_R_BATCH_SIZE, 128,
                    LD_R_THREADS,    2,
                    LD_R_WORLD,      2,
                    LD_R_RANK,       1};
    ld_reader *r = open_reader(db, kv, sizeof kv / sizeof kv[0]);
    epoch_out o;
    read_epoch(r, &o);
    cr_assert_eq(o.n, 2500);
    cr_assert_eq(o.bytes, 2500);
    for (size_t k = 0; k < o.n; k++) {
        cr_assert_eq(o.data[k], o.idx[k] % 251, "record %llu: pixel %u",
                     (unsigned long long)o.idx[k], o.data[k]);
        cr_assert_eq(o.labels[k], (double)(o.idx[k] % 251));
    }
    free_epoch(&o);
    ld_reader_free(r);

    snprintf(db, sizeof db, "%s/raw.lmdb", ld_tmp);
    snprintf(cmd, sizeof cmd,
             LD_PYTHON " " LD_SOURCE_DIR "/tests/python/lmdb_make_caffe_db.py "
                       "'%s' raw",
             db);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    int64_t kv2[] = {LD_R_BATCH_SIZE, 3, LD_R_DTYPE, LD_DTYPE_F32, LD_R_CROP_W, 8, LD_R_CROP_H, 8};
    r = open_reader(db, kv2, sizeof kv2 / sizeof kv2[0]);
    int64_t v;
    cr_assert_eq(ld_reader_get_info(r, LD_R_INFO_ORDER, &v), LD_OK);
    cr_assert_eq(v, LD_CHANNELS_BGR, "convert_imageset databases are BGR");
    read_epoch(r, &o);
    cr_assert_eq(o.n, 8);
    cr_assert_eq(o.batches, 3);
    const double want[8] = {0, 1, 3, 0, 1, 3, 0, 1}; /* ids 0,1,3,4,5,7,8,9 % 4 */
    for (size_t k = 0; k < 8; k++)
        cr_assert_eq(o.labels[k], want[k], "record %zu: label %g", k, o.labels[k]);
    free_epoch(&o);
    ld_reader_free(r);
}

Test(reader, mean_file_is_subtracted_at_the_crop_position)
{
    /* a Caffe binaryproto mean image of the full 3x24x20 samples, written by reader/mean.c */
    char mp[300];
    snprintf(mp, sizeof mp, "%s/mean.binaryproto", ld_tmp);
    float mean[3 * 24 * 20];
    for (int k = 0; k < 3 * 24 * 20; k++)
        mean[k] = (float)(k % 97);
    ld_mean m = {3, 24, 20, mean, {0}, 1, 0, {0}};
    ld_err e = {0};
    cr_assert_eq(ld__mean_write(mp, &m, &e), LD_OK, "%s", e.msg);
    int64_t kv[] = {LD_R_DTYPE, LD_DTYPE_F32, LD_R_CROP_W, 10, LD_R_CROP_H, 8, LD_R_BATCH_SIZE, 16};
    ld_reader *r = ld_reader_create();
    for (size_t k = 0; k < 8; k += 2)
        ld_reader_set(r, (ld_reader_param)kv[k], kv[k + 1]);
    cr_assert_eq(ld_reader_set_str(r, LD_R_MEAN_FILE, mp), LD_OK);
    cr_assert_eq(ld_reader_set_double(r, LD_R_SCALE, 0.25), LD_OK);
    cr_assert_eq(ld_reader_open(r, FIX "raw_ours.h5"), LD_OK, "%s", ld_reader_errmsg(r));
    epoch_out o;
    read_epoch(r, &o);
    size_t len;
    uint8_t *src = dump("bytes", FIX "raw_ours.h5", "data", o.idx, o.n, NULL, &len);
    const float *got = (const float *)o.data;
    const int yo = (24 - 8) / 2, xo = (20 - 10) / 2;
    for (size_t k = 0; k < o.n; k++)
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < 8; y++)
                for (int x = 0; x < 10; x++) {
                    size_t si = ((size_t)c * 24 + y + yo) * 20 + x + xo;
                    float want = ((float)src[k * 1440 + si] - mean[si]) * 0.25f;
                    float g = got[((k * 3 + c) * 8 + y) * 10 + x];
                    cr_assert_float_eq(g, want, 1e-5, "sample %zu c%d y%d x%d: %g vs %g", k, c, y,
                                       x, g, want);
                }
    free(src);
    free_epoch(&o);
    ld_reader_free(r);
    /* a mean of the wrong size is refused at open */
    float small[3 * 4 * 4] = {0};
    ld_mean m2 = {3, 4, 4, small, {0}, 1, 0, {0}};
    cr_assert_eq(ld__mean_write(mp, &m2, &e), LD_OK, "%s", e.msg);
    r = ld_reader_create();
    ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_F32);
    ld_reader_set_str(r, LD_R_MEAN_FILE, mp);
    cr_assert_eq(ld_reader_open(r, FIX "raw_ours.h5"), LD_EINVAL, "%s", ld_reader_errmsg(r));
    cr_assert(strstr(ld_reader_errmsg(r), "mean"), "%s", ld_reader_errmsg(r));
    ld_reader_free(r);
}

Test(reader, corrupt_encoded_samples_are_errors_naming_file_and_sample)
{
    for (int order = LD_ORDER_SEQUENTIAL; order <= LD_ORDER_SHUFFLE; order++) {
        ld_reader *r = ld_reader_create();
        ld_reader_set(r, LD_R_BATCH_SIZE, 1);
        ld_reader_set(r, LD_R_THREADS, 2);
        ld_reader_set(r, LD_R_ORDER, (ld_order)order);
        cr_assert_eq(ld_reader_open(r, FIX "enc_corrupt.h5"), LD_OK, "%s", ld_reader_errmsg(r));
        const ld_batch *b;
        int rc;
        size_t got = 0;
        while ((rc = ld_reader_next(r, &b)) == LD_OK)
            got++;
        cr_assert_eq(rc, LD_EFORMAT, "%d: %s", rc, ld_reader_errmsg(r));
        cr_assert(order || got <= 5, "read %zu batches past a corrupt sample 5", got);
        cr_assert(strstr(ld_reader_errmsg(r), "enc_corrupt.h5") &&
                      (strstr(ld_reader_errmsg(r), "sample 5") ||
                       strstr(ld_reader_errmsg(r), "sample 7")),
                  "%s", ld_reader_errmsg(r));
        /* the reader stays in error */
        cr_assert_eq(ld_reader_next(r, &b), LD_EFORMAT);
        ld_reader_free(r);
    }
}

Test(reader, two_readers_of_compressed_files_in_one_process)
{
    /* Both read through HDF5 from 2 workers each: the process-wide HDF5 lock keeps the
     * non-thread-safe library consistent. */
    int64_t kv[] = {LD_R_ORDER, LD_ORDER_SHUFFLE, LD_R_BATCH_SIZE, 9, LD_R_THREADS, 2, LD_R_SEED,
                    1};
    ld_reader *a = open_reader(FIX "raw_deflate.h5", kv, 8);
    kv[7] = 2;
    ld_reader *b = open_reader(FIX "raw_default.h5", kv, 8);
    epoch_out oa = {0}, ob = {0};
    const ld_batch *ba, *bb;
    int ra = LD_OK, rb = LD_OK;
    while (ra == LD_OK || rb == LD_OK) {
        if (ra == LD_OK && (ra = ld_reader_next(a, &ba)) == LD_OK) {
            oa.data = realloc(oa.data, oa.bytes + ba->data_bytes);
            oa.idx = realloc(oa.idx, (oa.n + ba->n) * 8);
            memcpy(oa.data + oa.bytes, ba->data, ba->data_bytes);
            memcpy(oa.idx + oa.n, ba->indices, ba->n * 8);
            oa.bytes += ba->data_bytes;
            oa.n += ba->n;
        }
        if (rb == LD_OK && (rb = ld_reader_next(b, &bb)) == LD_OK) {
            ob.data = realloc(ob.data, ob.bytes + bb->data_bytes);
            ob.idx = realloc(ob.idx, (ob.n + bb->n) * 8);
            memcpy(ob.data + ob.bytes, bb->data, bb->data_bytes);
            memcpy(ob.idx + ob.n, bb->indices, bb->n * 8);
            ob.bytes += bb->data_bytes;
            ob.n += bb->n;
        }
    }
    cr_assert_eq(ra, LD_END, "%s", ld_reader_errmsg(a));
    cr_assert_eq(rb, LD_END, "%s", ld_reader_errmsg(b));
    size_t len;
    uint8_t *wa = dump("bytes", FIX "raw_deflate.h5", "data", oa.idx, oa.n, NULL, &len);
    cr_assert_eq(len, oa.bytes);
    cr_assert_eq(memcmp(wa, oa.data, len), 0, "deflate reader differs from h5py");
    uint8_t *wb = dump("bytes", FIX "raw_default.h5", "data", ob.idx, ob.n, NULL, &len);
    cr_assert_eq(len, ob.bytes);
    cr_assert_eq(memcmp(wb, ob.data, len), 0, "default-chunked reader differs from h5py");
    free(wa);
    free(wb);
    free_epoch(&oa);
    free_epoch(&ob);
    ld_reader_free(a);
    ld_reader_free(b);
}

/* Same seed and order: the NHWC batch with swapped channels must be the NCHW batch's pixels
 * transposed and channel-reversed, cropped and mirrored identically. The two layouts take
 * different kernels (and, for decoded JPEGs, the SIMD deinterleave for NCHW), so each checks
 * the other. */
static void check_nhwc_is_nchw_transposed(const char *file, int cw, int chh)
{
    epoch_out o[2];
    for (int nhwc = 0; nhwc <= 1; nhwc++) {
        int64_t kv[] = {LD_R_LAYOUT,      nhwc ? LD_LAYOUT_NHWC : LD_LAYOUT_NCHW,
                        LD_R_SWAP,        nhwc,
                        LD_R_MIRROR,      1,
                        LD_R_SEED,        4,
                        LD_R_ORDER,       LD_ORDER_SHUFFLE,
                        LD_R_BATCH_SIZE,  32,
                        LD_R_CROP_W,      cw,
                        LD_R_CROP_H,      chh,
                        LD_R_RANDOM_CROP, 1};
        ld_reader *r = open_reader(file, kv, sizeof kv / sizeof kv[0]);
        read_epoch(r, &o[nhwc]);
        ld_reader_free(r);
    }
    cr_assert_eq(o[0].n, o[1].n);
    cr_assert_eq(memcmp(o[0].idx, o[1].idx, o[0].n * 8), 0);
    const size_t ss = (size_t)3 * chh * cw;
    for (size_t k = 0; k < o[0].n; k++)
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < chh; y++)
                for (int x = 0; x < cw; x++) {
                    uint8_t a = o[0].data[k * ss + (size_t)(c * chh + y) * cw + x];
                    uint8_t b = o[1].data[k * ss + (size_t)(y * cw + x) * 3 + (2 - c)];
                    cr_assert_eq(a, b, "%s: sample %zu c%d y%d x%d", file, k, c, y, x);
                }
    free_epoch(&o[0]);
    free_epoch(&o[1]);
}

Test(reader, nhwc_uint8_is_the_transpose_of_nchw_with_swap_and_mirror)
{
    check_nhwc_is_nchw_transposed(FIX "raw_ours.h5", 17, 9);
}

Test(reader, decoded_jpegs_deinterleave_alike_in_both_layouts)
{
    /* 37 columns: two 16-pixel SIMD blocks and a 5-pixel scalar tail, mirrored or not */
    check_nhwc_is_nchw_transposed(FIX "enc_same.h5", 37, 20);
    check_nhwc_is_nchw_transposed(FIX "enc_same.h5", 120, 90);
}

/* ---- the sampler itself: every order is a permutation, for awkward sizes ------------------ */

/* All positions of all ranks, for one epoch: each sample at most once, exactly n - n % world
 * samples; block shuffle keeps each block inside one window's span of positions. */
static void check_sampler(int order, uint64_t n, uint64_t block, uint64_t window, uint64_t world,
                          uint64_t epoch)
{
    unsigned char *seen = calloc(n ? n : 1, 1);
    uint64_t *pos = malloc((n ? n : 1) * sizeof *pos);
    cr_assert(seen && pos);
    uint64_t total = 0, moved = 0;
    for (uint64_t rank = 0; rank < world; rank++) {
        const ld_sampler s = {n, order, 99, block, window, rank, world};
        const uint64_t share = ld__sampler_share(&s);
        ld_epoch_order o;
        ld__sampler_epoch(&s, epoch, &o);
        for (uint64_t k = 0; k < share; k++) {
            const uint64_t i = ld__sampler_at(&o, k), g = rank * share + k;
            cr_assert(i < n, "order %d n %llu: sample %llu out of range", order,
                      (unsigned long long)n, (unsigned long long)i);
            cr_assert_eq(seen[i], 0, "order %d n %llu b %llu w %llu world %llu: sample %llu twice",
                         order, (unsigned long long)n, (unsigned long long)block,
                         (unsigned long long)window, (unsigned long long)world,
                         (unsigned long long)i);
            seen[i] = 1;
            pos[i] = g;
            moved += i != g;
            total++;
        }
    }
    cr_assert_eq(total, n - n % world);
    if (order == LD_ORDER_BLOCK_SHUFFLE && world == 1)
        for (uint64_t blk = 0; blk * block < n; blk++) {
            uint64_t lo = UINT64_MAX, hi = 0;
            for (uint64_t i = blk * block; i < n && i < (blk + 1) * block; i++) {
                lo = pos[i] < lo ? pos[i] : lo;
                hi = pos[i] > hi ? pos[i] : hi;
            }
            cr_assert(hi - lo < block * window,
                      "n %llu b %llu w %llu: block %llu spread over "
                      "positions %llu..%llu",
                      (unsigned long long)n, (unsigned long long)block, (unsigned long long)window,
                      (unsigned long long)blk, (unsigned long long)lo, (unsigned long long)hi);
        }
    if (order != LD_ORDER_SEQUENTIAL && n >= 64)
        cr_assert(moved > n / 2, "order %d n %llu: only %llu of the samples moved", order,
                  (unsigned long long)n, (unsigned long long)moved);
    free(seen);
    free(pos);
}

Test(reader, sampler_orders_are_permutations_for_awkward_sizes)
{
    static const uint64_t ns[] = {0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 100, 255, 256, 257, 1000, 4097};
    static const uint64_t blocks[] = {1, 2, 7, 64};
    static const uint64_t windows[] = {1, 2, 3, 8};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (uint64_t world = 1; world <= 3; world += 2)
            for (int order = LD_ORDER_SEQUENTIAL; order <= LD_ORDER_BLOCK_SHUFFLE; order++)
                for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++)
                    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++)
                        for (uint64_t epoch = 0; epoch < 2; epoch++)
                            check_sampler(order, ns[a], blocks[b], windows[w], world, epoch);
    /* a large n exercises the wider Feistel halves */
    check_sampler(LD_ORDER_SHUFFLE, 1000003, 1, 1, 1, 5);
    check_sampler(LD_ORDER_BLOCK_SHUFFLE, 1000003, 6, 8, 1, 5);
}

Test(reader, sampler_epochs_and_seeds_give_different_orders)
{
    const uint64_t n = 1000;
    ld_sampler a = {n, LD_ORDER_SHUFFLE, 1, 1, 1, 0, 1}, b = a;
    b.seed = 2;
    ld_epoch_order a0, a1, b0;
    ld__sampler_epoch(&a, 0, &a0);
    ld__sampler_epoch(&a, 1, &a1);
    ld__sampler_epoch(&b, 0, &b0);
    size_t same_epoch = 0, same_seed = 0;
    for (uint64_t k = 0; k < n; k++) {
        same_epoch += ld__sampler_at(&a0, k) == ld__sampler_at(&a1, k);
        same_seed += ld__sampler_at(&a0, k) == ld__sampler_at(&b0, k);
    }
    /* a random permutation pair agrees at about one position */
    cr_assert(same_epoch < 10, "epochs 0 and 1 agree at %zu of %llu positions", same_epoch,
              (unsigned long long)n);
    cr_assert(same_seed < 10, "seeds 1 and 2 agree at %zu positions", same_seed);
}
