/* The reader's open time and first-batch latency, for bench/scale.sh (dataconv bench reports
 * the open and whole epochs, not the first batch). Opens FILE with shuffled batches of BATCH
 * (default 256), takes one batch, and prints
 *   "open S first S rss KIB"
 * open: ld_reader_open (for LMDB, the walk of the tree into the record index); first: from the
 * end of open to the first batch in hand; rss: the peak resident set then (KiB).
 * Built by bench/scale.sh with cc against the build's libdata:
 *   cc -O2 -Ilibdata/include bench/first_batch.c -Lbuild -ldata -Wl,-rpath,build
 * Usage: first_batch FILE [BATCH] */
#define _POSIX_C_SOURCE 200809L
#include <libdata/reader.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: first_batch FILE [BATCH]\n");
        return 2;
    }
    ld_reader *r = ld_reader_create();
    if (!r) return 1;
    ld_reader_set(r, LD_R_BATCH_SIZE, argc > 2 ? atoll(argv[2]) : 256);
    ld_reader_set(r, LD_R_ORDER, LD_ORDER_SHUFFLE);
    const double t0 = now();
    if (ld_reader_open(r, argv[1]) < 0) {
        fprintf(stderr, "first_batch: %s\n", ld_reader_errmsg(r));
        ld_reader_free(r);
        return 1;
    }
    const double t1 = now();
    const ld_batch *b;
    if (ld_reader_next(r, &b) != LD_OK) {
        fprintf(stderr, "first_batch: %s\n", ld_reader_errmsg(r));
        ld_reader_free(r);
        return 1;
    }
    const double t2 = now();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("open %.3f first %.4f rss %ld\n", t1 - t0, t2 - t1, ru.ru_maxrss);
    ld_reader_free(r);
    return 0;
}
