/*
 * ld_reader_take_data / ld_reader_buffer_alloc / ld_reader_buffer_free (reader.h): the batch
 * buffers a caller keeps hold their batch for good, the reader goes on correctly with the
 * replacements (the same batches as a reader whose data is never taken), ownership moves
 * exactly once (ASan: no leak, no double free, also when taken buffers outlive the reader),
 * and misuse is refused with LD_ESTATE / LD_EINVAL.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libdata/reader.h"

#define FIX LD_TEST_DATA "/reader/raw_ours.h5" /* 100 samples of 3x24x20, chunks of 7 */

TestSuite(reader_take, .timeout = 120);

static ld_reader *open_shuffled(int threads)
{
    ld_reader *r = ld_reader_create();
    cr_assert(r);
    cr_assert_eq(ld_reader_set(r, LD_R_BATCH_SIZE, 8), LD_OK);
    cr_assert_eq(ld_reader_set(r, LD_R_ORDER, LD_ORDER_SHUFFLE), LD_OK);
    cr_assert_eq(ld_reader_set(r, LD_R_SEED, 11), LD_OK);
    cr_assert_eq(ld_reader_set(r, LD_R_THREADS, threads), LD_OK);
    cr_assert_eq(ld_reader_set(r, LD_R_PREFETCH, 2), LD_OK);
    cr_assert_eq(ld_reader_open(r, FIX), LD_OK, "%s", ld_reader_errmsg(r));
    return r;
}

Test(reader_take, kept_buffers_hold_their_batches_and_the_reader_goes_on)
{
    /* reference: the same reader, data never taken, batches copied out */
    enum { EPOCHS = 3, MAXB = 64 };
    ld_reader *ref = open_shuffled(2), *r = open_shuffled(2);
    uint8_t *want[MAXB], *kept[MAXB];
    size_t len[MAXB], nb = 0;
    const ld_batch *a, *b;
    for (int e = 0; e < EPOCHS; e++) {
        int ra, rb;
        while ((ra = ld_reader_next(ref, &a)) == LD_OK) {
            rb = ld_reader_next(r, &b);
            cr_assert_eq(rb, LD_OK, "%s", ld_reader_errmsg(r));
            cr_assert_eq(a->n, b->n);
            cr_assert_eq(memcmp(a->indices, b->indices, a->n * sizeof(uint64_t)), 0);
            cr_assert_lt(nb, (size_t)MAXB);
            want[nb] = malloc(a->data_bytes);
            cr_assert(want[nb]);
            memcpy(want[nb], a->data, a->data_bytes);
            len[nb] = a->data_bytes;
            /* every other batch is kept; a buffer from alloc replaces it */
            if (nb % 2 == 0) {
                size_t bytes = 0;
                void *spare = ld_reader_buffer_alloc(r, &bytes);
                cr_assert(spare && bytes >= b->data_bytes);
                kept[nb] = (uint8_t *)b->data;
                cr_assert_eq(ld_reader_take_data(r, spare), LD_OK, "%s", ld_reader_errmsg(r));
                cr_assert_eq(ld_reader_take_data(r, spare), LD_ESTATE, "taken twice");
            } else {
                kept[nb] = NULL;
                cr_assert_eq(memcmp(b->data, a->data, a->data_bytes), 0, "batch %zu", nb);
            }
            nb++;
        }
        cr_assert_eq(ra, LD_END);
        cr_assert_eq(ld_reader_next(r, &b), LD_END);
        void *spare = ld_reader_buffer_alloc(r, NULL);
        cr_assert(spare);
        cr_assert_eq(ld_reader_take_data(r, spare), LD_ESTATE, "after LD_END no batch is held");
        ld_reader_buffer_free(spare);
    }
    ld_reader_free(ref);
    ld_reader_free(r); /* the kept buffers are the caller's: still readable */
    for (size_t k = 0; k < nb; k++) {
        if (kept[k]) cr_assert_eq(memcmp(kept[k], want[k], len[k]), 0, "kept batch %zu", k);
        ld_reader_buffer_free(kept[k]);
        free(want[k]);
    }
}

Test(reader_take, misuse_is_refused)
{
    ld_reader *r = ld_reader_create();
    size_t bytes = 123;
    cr_assert_null(ld_reader_buffer_alloc(r, &bytes), "not open: no buffer");
    cr_assert_eq(bytes, 0);
    int dummy;
    cr_assert_eq(ld_reader_take_data(r, &dummy), LD_ESTATE);
    cr_assert_eq(ld_reader_take_data(NULL, &dummy), LD_EINVAL);
    ld_reader_free(r);
    r = open_shuffled(1);
    void *spare = ld_reader_buffer_alloc(r, &bytes);
    cr_assert(spare);
    cr_assert_eq(bytes, (size_t)8 * 3 * 24 * 20);
    cr_assert_eq(ld_reader_take_data(r, spare), LD_ESTATE, "before the first batch");
    cr_assert(strstr(ld_reader_errmsg(r), "no batch is held"), "%s", ld_reader_errmsg(r));
    const ld_batch *b;
    cr_assert_eq(ld_reader_next(r, &b), LD_OK);
    cr_assert_eq(ld_reader_take_data(r, NULL), LD_EINVAL);
    ld_reader_buffer_free(spare); /* never given: still ours */
    ld_reader_buffer_free(NULL);
    ld_reader_free(r);
}
