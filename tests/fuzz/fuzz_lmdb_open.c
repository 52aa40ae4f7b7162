/*
 * libFuzzer target: opening an LMDB database we did not write (store/lmdb_store.c and the
 * describe scan of `dataconv info`). The input is a mutated data.mdb (seeds: small databases
 * of our writer and of python-lmdb, make_seeds.py), written as <tmp>/db/data.mdb and opened
 * read-only; every record is read.
 *
 * Scope: LMDB trusts the pages of its file (it has no checksums and, by design, follows page
 * numbers it finds), so a mutated data.mdb can crash liblmdb itself; such inputs are reported
 * as a property of LMDB, not kept as regression cases. What libdata adds on top (key numbering,
 * Datum parsing, shapes, sidecar, the saved record index) must never crash.
 *
 * The saved index (store/lmdb/lmdb_index.h): when the database opens, the index the writer
 * would save for it is written beside it, then variants of that file, each opened and read
 * whole: as saved (used), with a byte flipped (refused by its CRC), and, with a valid CRC, an
 * entry's offset or size changed, two entries swapped, a wrong maxlen. The store must refuse
 * them or fail the reads they misplace, never crash.
 */
#include <sys/stat.h>

#include "fuzz_util.h"
#include "store/lmdb/lmdb_index.h"
#include "store/lmdb/lmdb_store.h"
#include "store/writer.h"

static uint64_t le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int k = bytes - 1; k >= 0; k--)
        v = v << 8 | p[k];
    return v;
}

static void open_read(const char *dir)
{
    ld_store *s = NULL;
    ld_err e;
    if (ld__lmdb_store_open(dir, NULL, &s, &e) == LD_OK) {
        fuzz_read_store(s, 64);
        s->vt->close(s);
    } else if (s || !e.msg[0]) {
        abort();
    }
}

static void index_variants(const char *dir, const uint8_t *data, size_t size)
{
    ld_err e;
    ld_buf f = {0};
    char path[600];
    uint64_t h = 14695981039346656037u; /* FNV-1a of the input: which entries to change */
    for (size_t k = 0; k < size; k++)
        h = (h ^ data[k]) * 1099511628211u;
    snprintf(path, sizeof path, "%s/%s", dir, LD_LMDB_INDEX);
    if (ld__lmdb_index_save(dir, dir, &e) != LD_OK ||
        ld__read_file(path, &f, 1 << 28, &e) != LD_OK || f.len < 100)
        goto done;
    const uint8_t *b = f.p;
    const ld_lmdb_snap id = {le(b + 16, 8), le(b + 24, 8),           le(b + 32, 8),
                             le(b + 40, 8), le(b + 64, 8),           le(b + 72, 8),
                             le(b + 80, 8), (uint32_t)le(b + 48, 4), (uint32_t)le(b + 60, 4)};
    const uint64_t n = id.n;
    if (!n || f.len != 100 + 12 * n) abort(); /* the writer's own file */
    uint64_t *off = malloc(n * sizeof *off);
    uint32_t *len = malloc(n * sizeof *len);
    for (int v = 0; off && len && v < 6; v++) {
        for (uint64_t i = 0; i < n; i++) {
            off[i] = le(b + 96 + 8 * i, 8);
            len[i] = (uint32_t)le(b + 96 + 8 * n + 4 * i, 4);
        }
        const uint64_t i = h % n, j = (h >> 20) % n;
        uint32_t maxlen = (uint32_t)le(b + 52, 4);
        if (v == 1) { /* a flipped byte: its CRC no longer holds */
            f.p[h % f.len] ^= (uint8_t)(1u << (h >> 61));
            fuzz_write("db/" LD_LMDB_INDEX, f.p, f.len);
            f.p[h % f.len] ^= (uint8_t)(1u << (h >> 61));
            open_read(dir);
            continue;
        }
        if (v == 2) off[i] ^= (h >> 32 & 0xfff) | 1; /* mostly still inside the file */
        if (v == 3) len[i] ^= (uint32_t)(h >> 40 & 0xff) | 1;
        if (v == 4) {
            const uint64_t o = off[i];
            const uint32_t l = len[i];
            off[i] = off[j], len[i] = len[j], off[j] = o, len[j] = l;
        }
        if (v == 5) maxlen++;
        if (ld__lmdb_index_write(dir, dir, &id, off, len, maxlen, (int)(le(b + 56, 4) & 1), &e) ==
            LD_OK)
            open_read(dir);
    }
    free(off);
    free(len);
done:
    ld__buf_free(&f);
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/db", fuzz_tmpdir());
    mkdir(dir, 0700);
    fuzz_write("db/data.mdb", data, size);
    char lock[600];
    snprintf(lock, sizeof lock, "%s/lock.mdb", dir);
    unlink(lock); /* no reader table left over from the previous input */
    snprintf(lock, sizeof lock, "%s/%s", dir, LD_LMDB_INDEX);
    unlink(lock); /* nor an index */
    ld_store *s = NULL;
    ld_err e;
    volatile unsigned sink = 0;
    ld_store_opts o = {.random_access = size & 1};
    const int opened = ld__lmdb_store_open(dir, &o, &s, &e) == LD_OK;
    if (opened) {
        sink += fuzz_read_store(s, 64);
        s->vt->close(s);
    } else if (s || !e.msg[0]) {
        abort();
    }
    ld_buf text = {0};
    ld__lmdb_describe(dir, &text, &e);
    ld__buf_free(&text);
    if (opened) index_variants(dir, data, size);
    (void)sink;
    return 0;
}
