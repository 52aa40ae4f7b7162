/*
 * libFuzzer target: opening an LMDB database we did not write (store/lmdb_store.c and the
 * describe scan of `dataconv info`). The input is a mutated data.mdb (seeds: small databases
 * of our writer and of python-lmdb, make_seeds.py), written as <tmp>/db/data.mdb and opened
 * read-only; every record is read.
 *
 * Scope: LMDB trusts the pages of its file (it has no checksums and, by design, follows page
 * numbers it finds), so a mutated data.mdb can crash liblmdb itself; such inputs are reported
 * as a property of LMDB, not kept as regression cases. What libdata adds on top (key numbering,
 * Datum parsing, shapes, sidecar) must never crash.
 */
#include <sys/stat.h>

#include "fuzz_util.h"
#include "store/writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/db", fuzz_tmpdir());
    mkdir(dir, 0700);
    fuzz_write("db/data.mdb", data, size);
    char lock[600];
    snprintf(lock, sizeof lock, "%s/lock.mdb", dir);
    unlink(lock); /* no reader table left over from the previous input */
    ld_store *s = NULL;
    ld_err e;
    volatile unsigned sink = 0;
    ld_store_opts o = {.random_access = size & 1};
    if (ld__lmdb_store_open(dir, &o, &s, &e) == LD_OK) {
        sink += fuzz_read_store(s, 64);
        s->vt->close(s);
    } else if (s || !e.msg[0]) {
        abort();
    }
    ld_buf text = {0};
    ld__lmdb_describe(dir, &text, &e);
    ld__buf_free(&text);
    (void)sink;
    return 0;
}
