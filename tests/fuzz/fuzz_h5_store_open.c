/*
 * libFuzzer target: opening a dataset file we did not write (store/h5_store.c through
 * ld__store_open, and h5_describe.c as `dataconv info` runs it). The input, mutated from
 * small HDF5 files of our writer and of h5py (corpus/h5_store_open, make_seeds.py), is
 * written to a temporary .h5 file, opened, described, and every sample read.
 *
 * Scope: a crash inside libhdf5 itself on a malformed file is a bug of that library (HDF5
 * has many such CVEs); such inputs are reported, not kept in the regression corpus, since
 * libdata cannot avoid handing the file to HDF5. Crashes in libdata's own code (chunk
 * addresses, offsets, label counts, shapes) are ours.
 */
#include "fuzz_util.h"
#include "store/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("in.h5", data, size);
    ld_store *s = NULL;
    ld_err e;
    volatile unsigned sink = 0;
    ld_store_opts o = {.random_access = size & 1};
    if (ld__h5_store_open(path, &o, &s, &e) == LD_OK) {
        const ld_store_info *in = &s->info;
        if (!in->encoded && in->sample_bytes == 0) abort();
        sink += fuzz_read_store(s, 64);
        s->vt->close(s);
    } else if (s || !e.msg[0]) {
        abort();
    }
    ld_buf text = {0};
    ld__h5_describe(path, &text, &e);
    ld__buf_free(&text);
    (void)sink;
    return 0;
}
