/*
 * page_folios FILE: how the page cache holds FILE right now: how many of its 4 KiB pages are
 * resident, and in folios of which sizes (a 4 KiB page of its own, or part of a large folio).
 * Linux only, and root only (/proc/kpageflags, and PFNs in /proc/self/pagemap).
 *
 * Why it matters (bench/warm_after_cold.sh): copying a cached file out of large folios is
 * faster than out of 4 KiB pages (fewer page-cache lookups per byte), and how a file came into
 * the cache decides which it gets: a sequential read() or a write brings large folios on file
 * systems that have them, POSIX_FADV_WILLNEED and small random reads bring 4 KiB pages.
 *
 * Method: mincore() says which pages are resident; only those are touched through a read-only
 * shared mapping (mapping a cached page reads nothing), their PFNs come from
 * /proc/self/pagemap and their flags from /proc/kpageflags (bit 15 compound head, bit 16
 * compound tail). Reads nothing that is not already cached.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define PFN_MASK ((UINT64_C(1) << 55) - 1)

static int read_u64(int fd, uint64_t index, uint64_t *v)
{
    return pread(fd, v, sizeof *v, (off_t)(index * sizeof *v)) == (ssize_t)sizeof *v ? 0 : -1;
}

/* Counts one finished folio of `pages` pages in hist[log2 of its size, rounded up]. */
static void count_folio(size_t *hist, size_t pages)
{
    int order = 0;
    while (order < 30 && ((size_t)1 << order) < pages)
        order++;
    hist[order]++;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE   (root: reads /proc/kpageflags)\n", argv[0]);
        return 2;
    }
    const long ps = sysconf(_SC_PAGESIZE);
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        perror(argv[1]);
        return 1;
    }
    const size_t pages = (size_t)(st.st_size / ps);
    if (pages == 0) {
        printf("%s: no whole page\n", argv[1]);
        return 0;
    }
    unsigned char *map = mmap(NULL, pages * (size_t)ps, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char *vec = malloc(pages);
    int pm = open("/proc/self/pagemap", O_RDONLY), kf = open("/proc/kpageflags", O_RDONLY);
    if (map == MAP_FAILED || !vec || mincore(map, pages * (size_t)ps, vec) < 0) {
        perror("mmap/mincore");
        return 1;
    }
    if (pm < 0 || kf < 0) {
        perror("/proc/self/pagemap or /proc/kpageflags (run as root)");
        return 1;
    }
    size_t resident = 0, single = 0, folios = 0, in_folios = 0, hist[31] = {0}, run = 0;
    volatile unsigned char sink = 0;
    for (size_t i = 0; i < pages; i++) {
        if (!(vec[i] & 1)) { /* not cached: ends a folio, read nothing */
            if (run) count_folio(hist, run);
            run = 0;
            continue;
        }
        resident++;
        sink ^= map[i * (size_t)ps]; /* map the cached page (a minor fault, no I/O) */
        uint64_t entry, flags;
        const uint64_t vpage = (uint64_t)(uintptr_t)(map + i * (size_t)ps) / (uint64_t)ps;
        if (read_u64(pm, vpage, &entry) < 0 || !(entry >> 63 & 1)) {
            /* a user-mode emulator (qemu-user) gives its guest other addresses than the
             * process's own, so the kernel's pagemap has nothing at the guest's address */
            fprintf(stderr,
                    "%s: page %zu is not present in /proc/self/pagemap "
                    "(under an emulator? run natively)\n",
                    argv[1], i);
            return 1;
        }
        if (!(entry & PFN_MASK) || read_u64(kf, entry & PFN_MASK, &flags) < 0) {
            fprintf(stderr, "%s: no page frame for page %zu (run as root)\n", argv[1], i);
            return 1;
        }
        if (flags >> KPF_COMPOUND_HEAD & 1) {
            if (run) count_folio(hist, run);
            run = 1;
            folios++;
            in_folios++;
        } else if (flags >> KPF_COMPOUND_TAIL & 1 && run) {
            run++;
            in_folios++;
        } else {
            if (run) count_folio(hist, run);
            run = 0;
            single++;
        }
    }
    if (run) count_folio(hist, run);
    printf("%s: %zu pages of %ld bytes, %zu resident: %zu as single pages, %zu in %zu large "
           "folios\n",
           argv[1], pages, ps, resident, single, in_folios, folios);
    for (int o = 0; o <= 30; o++)
        if (hist[o]) printf("  folios of %zu KiB: %zu\n", ((size_t)ps << o) / 1024, hist[o]);
    munmap(map, pages * (size_t)ps);
    free(vec);
    close(pm);
    close(kf);
    close(fd);
    return 0;
}
