/* Read shuffled mini-batches of float32 NCHW from a dataset, two epochs.
 *
 *   cc read_batches.c $(pkg-config --cflags --libs libdata) -o read_batches
 *   ./read_batches out.h5
 */
#include <stdio.h>

#include <libdata/reader.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DATASET (.h5, split .txt or LMDB directory)\n", argv[0]);
        return 2;
    }
    ld_reader *r = ld_reader_create();
    if (!r) return 1;
    ld_reader_set(r, LD_R_BATCH_SIZE, 32);
    ld_reader_set(r, LD_R_ORDER, LD_ORDER_SHUFFLE);
    ld_reader_set(r, LD_R_SEED, 7);
    ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_F32);
    ld_reader_set(r, LD_R_MIRROR, 1);
    ld_reader_set_double(r, LD_R_SCALE, 1.0 / 255);
    ld_reader_set(r, LD_R_MEMORY_BUDGET, 64 << 20); /* everything the reader holds */

    int rc = ld_reader_open(r, argv[1]);
    for (int epoch = 0; rc >= 0 && epoch < 2; epoch++) {
        const ld_batch *b;
        size_t samples = 0, batches = 0;
        double sum = 0;
        while ((rc = ld_reader_next(r, &b)) == LD_OK) {
            const float *x = b->data; /* valid until the next ld_reader_next() */
            const int32_t *y = b->labels;
            sum += x[0] + y[0];
            samples += b->n;
            batches++;
        }
        if (rc == LD_END) /* end of the epoch: the next call starts the next one */
            printf("epoch %d: %zu batches, %zu samples (checksum %.3f)\n", epoch, batches, samples,
                   sum);
    }
    if (rc < 0) fprintf(stderr, "error (%s): %s\n", ld_strerror(rc), ld_reader_errmsg(r));
    ld_reader_free(r);
    return rc < 0;
}
