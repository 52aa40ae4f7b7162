/*
 * Helpers shared by the fuzz targets whose parser reads a path, not a buffer (list files,
 * HDF5 files, LMDB databases, mean files): the input is written to a file in a private
 * temporary folder made once per process (removed at exit), then parsed from there.
 * Test code: a static folder name per process is fine here (the library has no such state).
 */
#ifndef LD_FUZZ_UTIL_H
#define LD_FUZZ_UTIL_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "store/store.h"

static char fuzz_dir[256];

static inline void fuzz_cleanup(void)
{
    if (!fuzz_dir[0]) return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
    if (system(cmd) != 0) { /* best effort */
    }
}

/* The folder (created on first use); aborts if it cannot be made, which is not a finding. */
static inline const char *fuzz_tmpdir(void)
{
    if (!fuzz_dir[0]) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/ld-fuzz-XXXXXX", base);
        if (!mkdtemp(fuzz_dir)) {
            perror("mkdtemp");
            abort();
        }
        atexit(fuzz_cleanup);
    }
    return fuzz_dir;
}

/* Read every decoded byte (so ASan sees any bad row); the sum keeps the reads alive. */
static inline unsigned fuzz_sum_pixels(const ld_image *im)
{
    unsigned s = 0;
    const size_t n = (size_t)im->w * im->h * im->c * ld__image_sample_bytes(im);
    for (size_t i = 0; i < n; i++)
        s += im->px[i];
    return s;
}

/* One input through a decoder target: the header probe, then decoding to gray and to RGB
 * (which also applies the orientation), pixels capped at 1 Mpx, every output byte read.
 * `name` is the file name messages give ("fuzz.bmp"); the format goes by the content. */
static inline void fuzz_decode(const uint8_t *data, size_t size, const char *name)
{
    ld_codec *c = ld__codec_create();
    if (!c) return;
    ld_err e;
    ld_img_info info;
    ld_image im = {0};
    volatile unsigned sink = 0;
    ld__img_info(c, data, size, name, &info, &e);
    for (int k = 0; k < 4; k++) { /* gray and RGB, 8 and 16-bit output */
        const int ch = k & 1 ? 3 : 1;
        const ld_decode_opts o = {.channels = ch,
                                  .max_pixels = 1u << 20,
                                  .apply_orientation = ch == 3,
                                  .depth16 = k >= 2};
        if (ld__img_decode(c, data, size, name, &o, &im, &e) == LD_OK)
            sink += fuzz_sum_pixels(&im) + (unsigned)ld__codec_frames(c);
    }
    (void)sink;
    ld__image_free(&im);
    ld__codec_free(c);
}

/* Write data to <tmpdir>/<name> (replacing it); returns the path in a static buffer. */
static inline const char *fuzz_write(const char *name, const uint8_t *data, size_t size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_tmpdir(), name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror(path);
        abort();
    }
    for (size_t off = 0; off < size;) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            perror(path);
            abort();
        }
        off += (size_t)w;
    }
    close(fd);
    return path;
}

/* Read every sample of an open store through one context (at most `max` samples, plus the
 * first and last ones out of order, plus one out-of-range index which must be refused) and
 * touch every byte returned, so ASan sees a record pointing outside its buffer. */
static inline unsigned fuzz_read_store(ld_store *s, uint64_t max)
{
    ld_store_ctx *cx = NULL;
    ld_err e;
    ld_rec rec;
    unsigned sum = 0;
    uint8_t *dst = NULL;
    size_t dst_len = s->info.sample_bytes;
    if (s->vt->ctx_create(s, &cx, &e) != LD_OK) return 0;
    if (dst_len && dst_len <= ((size_t)64 << 20)) dst = malloc(dst_len);
    uint64_t n = s->info.n < max ? s->info.n : max;
    for (uint64_t k = 0; k < n + 2; k++) {
        uint64_t i = k < n ? k : (k == n ? s->info.n - 1 : 0); /* then last, then first */
        if (s->vt->read(s, cx, i, dst, dst ? dst_len : 0, &rec, &e) != LD_OK) continue;
        for (size_t b = 0; b < rec.len; b++)
            sum += rec.data[b];
    }
    if (s->vt->read(s, cx, s->info.n, dst, dst ? dst_len : 0, &rec, &e) == LD_OK) abort();
    if (s->vt->read_run && dst && n >= 2 && dst_len <= ((size_t)16 << 20)) {
        uint8_t *two = malloc(2 * dst_len);
        double lab[2];
        if (two && s->vt->read_run(s, cx, 0, 2, two, lab, &e) == LD_OK)
            for (size_t b = 0; b < 2 * dst_len; b++)
                sum += two[b];
        free(two);
    }
    if (s->vt->will_read && n) {
        uint64_t idx[2] = {0, s->info.n - 1};
        s->vt->will_read(s, cx, idx, 2);
    }
    const size_t mask_len = (size_t)s->info.mask_h * (size_t)s->info.mask_w;
    uint8_t *mask = mask_len && mask_len <= ((size_t)64 << 20) ? malloc(mask_len) : NULL;
    for (uint64_t k = 0; mask && k < n; k++) /* masks: every byte read */
        if (s->vt->mask(s, cx, k, mask, &e) == LD_OK)
            for (size_t b = 0; b < mask_len; b++)
                sum += mask[b];
    if (mask && s->vt->mask(s, cx, s->info.n, mask, &e) == LD_OK) abort();
    free(mask);
    free(dst);
    s->vt->ctx_free(s, cx);
    return sum;
}

#endif /* LD_FUZZ_UTIL_H */
