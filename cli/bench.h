/* dataconv bench: read a dataset with libdata's reader and report throughput and memory. */
#ifndef DATACONV_BENCH_H
#define DATACONV_BENCH_H

/** Run `dataconv bench`; argv[first..] are its arguments. @return an exit code (options.h). */
int dc_bench(int argc, char **argv, int first);

/** Print the bench options to `f` (a FILE *). */
void dc_bench_help(void *f);

#endif /* DATACONV_BENCH_H */
