/*
 * baselines: the two measurements the benchmarks compare libdata's reader against, with no
 * libdata code in them. The reader itself is measured by `dataconv bench` (cli/bench.c).
 *
 *   baselines --io FILE SAMPLE_BYTES
 *
 * The access-method experiment behind h5_store.c's choice: copy the first GiB of FILE (warm
 * in the page cache) into a reused 256-sample buffer by pread per sample, pread per 6 samples
 * (one 1 MiB chunk), pread per sample in random order, and memcpy from a 64 MiB mmap window
 * slid along the file (plain, MAP_POPULATE, MADV_WILLNEED), and random memcpy from a mapping
 * of the whole range (which a bounded address space does not allow). Prints GB/s for each.
 *
 *   baselines --decode SECONDS FILE.jpg...
 *
 * The baseline for encoded reading: plain libjpeg-turbo (jpeg_read_scanlines into a reused
 * RGB buffer, default settings), one thread, the first 64 files held in memory; prints one
 * JSON line with images/s and this process's CPU ms per image (the CPU figure holds up on a
 * busy machine, the wall-time rate does not).
 *
 *   baselines --decode-all SECONDS FILE.jpg...
 *
 * The same over every file given (bench/suite_convert.py: the limit of `dataconv -j1`, decode
 * alone of the very files it converts).
 *
 *   baselines --pread SECONDS THREADS FILE
 *
 * The kernel's page-cache copy, what any pread-based reader is made of: THREADS threads each
 * read FILE (warm in the page cache) in 4 MiB preads into its own reused 64 MiB destination,
 * one 4 MiB slice after the other, starting at its own share of the file and wrapping, for
 * SECONDS; prints one JSON line with the bytes per second of all threads together. The
 * destination is what the reader's batch ring is: larger than the CPU's caches (as memcpy's
 * 256 MiB are) and backed by transparent huge pages (reader.c ring_alloc). Both matter
 * (raw9000.h5 warm, 3 runs each, 1 / 2 threads): a reused 4 MiB buffer of 4 KiB pages gave
 * 5.3-5.5 / 8.6-9.2 GB/s, 64 MiB of 4 KiB pages 4.2-4.6 / 7.4-8.1, 64 MiB of huge pages
 * 7.9-8.9 / 12.3-13.4: the kernel's copy pays a TLB miss per 4 KiB page it writes. The reader's
 * warm rows are compared with memcpy on one core (issue 16's limit); this is the rate a reader that
 * copies out of the page cache cannot pass.
 *
 *   baselines --direct-qd SECONDS QD FILE [seq]
 *
 * What the disk gives with QD reads in flight and no page cache: QD threads, each with one
 * blocking O_DIRECT pread at a time (so QD requests in flight; threads, not io_uring: the
 * machine has liburing2 but not liburing-dev), of 512 KiB to 4 MiB (a multiple of 512 KiB)
 * at random offsets aligned to 512 KiB, into an aligned buffer of its own, for SECONDS; with
 * `seq`, 4 MiB reads of consecutive blocks of the file instead (the threads take the next
 * block in turn, so the disk sees one sequential stream QD deep, as dd's with QD = 1).
 * Prints one JSON line: bytes per second of all threads together and this process's system
 * CPU seconds per GB. O_DIRECT reads go to the device whatever the guest's page cache holds;
 * a VM's host may still cache the image, so runs drop the file's pages first as for dd.
 *
 *   baselines --touch BYTES
 *
 * Fault in BYTES of anonymous memory (transparent huge pages where the kernel allows them) and
 * free it: bench/suite_read.py's preparation of a cold-cache run. On a VM with free page
 * reporting the memory the guest freed is handed back to the host, and the page cache's next
 * 2 MiB folios come from it at the cost of a host fault per page; touching it first puts dd and
 * the reader in the same state, that of a machine without that cost. Prints the seconds taken.
 *
 *   baselines --write MIB ROUNDS PAUSE FILE
 *
 * Writing into new page cache by write size, what an output's writer is made of: after PAUSE
 * seconds, FILE is created (it must not exist), MIB MiB are written to it with pwrite()s of
 * 128 KiB, 1 MiB, 2 MiB or 8 MiB from one reused buffer (no fsync, timed), and it is deleted;
 * ROUNDS rounds, the sizes in a rotated order in each. Prints one JSON line per size: the
 * median, lowest and highest seconds. Behind the LMDB writer's 1 MiB transactions
 * (lmdb_write.c): the page cache takes folios as large as the write, up to 2 MiB
 * (bench/page_folios shows them), and on a VM with free page reporting 2 MiB folios come from
 * memory the host took back (see --touch). The pause lets the memory of the file just deleted
 * go back to the host, as it has between two conversions (3 s does here; with 0 the next
 * write reuses it at once). Here
 * (`--write 300 3 3 FILE`): 0.041-0.048 s in writes of 128 KiB or 1 MiB, 0.41-0.56 s in
 * writes of 2 or 8 MiB.
 *
 * A CMake target with -DLIBDATA_BUILD_BENCH=ON (bench/CMakeLists.txt): BUILD/bench/baselines.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jpeglib.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int io_experiment(const char *path, size_t sb)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || sb == 0) return 1;
    const size_t nbuf = 256, win = (size_t)64 << 20;
    size_t total = (size_t)st.st_size < ((size_t)1 << 30) ? (size_t)st.st_size : (size_t)1 << 30;
    total = total / win * win;
    const size_t n = total / sb;
    unsigned char *buf = malloc(nbuf * sb);
    size_t *idx = malloc(n * sizeof(size_t));
    if (!buf || !idx || n < 2) return 1;
    memset(buf, 1, nbuf * sb);
    uint64_t x = 88172645463325252ull; /* xorshift: a fixed random order */
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t j = x % (i + 1), t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    for (int rep = 0; rep < 2; rep++) {
        double t = now();
        for (size_t i = 0; i < n; i++)
            if (pread(fd, buf + (i % nbuf) * sb, sb, (off_t)(i * sb)) < 0) return 1;
        printf("pread per sample, sequential:   %6.2f GB/s\n", n * sb / (now() - t) / 1e9);
        t = now();
        for (size_t i = 0; i + 6 <= n; i += 6)
            if (pread(fd, buf + (i % (nbuf - 6)) * sb, 6 * sb, (off_t)(i * sb)) < 0) return 1;
        printf("pread per 6 samples, sequential: %5.2f GB/s\n", n * sb / (now() - t) / 1e9);
        t = now();
        for (size_t i = 0; i < n; i++)
            if (pread(fd, buf + (i % nbuf) * sb, sb, (off_t)(idx[i] * sb)) < 0) return 1;
        printf("pread per sample, random:       %6.2f GB/s\n", n * sb / (now() - t) / 1e9);
        for (int mode = 0; mode < 3; mode++) {
            t = now();
            size_t done = 0;
            for (size_t off = 0; off < total; off += win) {
                unsigned char *m =
                    mmap(NULL, win, PROT_READ, MAP_SHARED | (mode == 1 ? MAP_POPULATE : 0), fd,
                         (off_t)off);
                if (m == MAP_FAILED) return 1;
                if (mode == 2) madvise(m, win, MADV_WILLNEED);
                for (size_t s = 0; s + sb <= win; s += sb, done++)
                    memcpy(buf + (done % nbuf) * sb, m + s, sb);
                munmap(m, win);
            }
            printf("mmap 64 MiB window%-13s: %5.2f GB/s\n",
                   mode == 1   ? " POPULATE"
                   : mode == 2 ? " WILLNEED"
                               : "",
                   done * sb / (now() - t) / 1e9);
        }
        unsigned char *m = mmap(NULL, total, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) return 1;
        t = now();
        for (size_t i = 0; i < n; i++)
            memcpy(buf + (i % nbuf) * sb, m + idx[i] * sb, sb);
        printf("mmap whole range, random memcpy: %5.2f GB/s\n\n", n * sb / (now() - t) / 1e9);
        munmap(m, total);
    }
    free(buf);
    free(idx);
    close(fd);
    return 0;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int decode_baseline(double seconds, int nfiles, char **files, int max_files)
{
    int n = nfiles < max_files ? nfiles : max_files;
    unsigned char **data = calloc((size_t)n, sizeof *data);
    unsigned long *len = calloc((size_t)n, sizeof *len);
    if (!data || !len) return 1;
    for (int k = 0; k < n; k++) {
        FILE *f = fopen(files[k], "rb");
        if (!f) return 1;
        fseek(f, 0, SEEK_END);
        len[k] = (unsigned long)ftell(f);
        fseek(f, 0, SEEK_SET);
        data[k] = malloc(len[k]);
        if (!data[k] || fread(data[k], 1, len[k], f) != len[k]) return 1;
        fclose(f);
    }
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr jerr;
    d.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&d);
    unsigned char *px = NULL;
    size_t cap = 0, done = 0;
    double t0 = now(), c0 = cpu_now();
    while (now() - t0 < seconds || done < (size_t)n) {
        int k = (int)(done % (size_t)n);
        jpeg_mem_src(&d, data[k], len[k]);
        jpeg_read_header(&d, TRUE);
        d.out_color_space = JCS_RGB;
        jpeg_start_decompress(&d);
        size_t row = (size_t)d.output_width * d.output_components;
        if (row * d.output_height > cap) {
            cap = row * d.output_height;
            px = realloc(px, cap);
            memset(px, 0, cap);
        }
        while (d.output_scanline < d.output_height) {
            JSAMPROW r = px + row * d.output_scanline;
            jpeg_read_scanlines(&d, &r, 1);
        }
        jpeg_finish_decompress(&d);
        done++;
    }
    double dt = now() - t0, cpu = cpu_now() - c0;
    jpeg_destroy_decompress(&d);
    printf("{\"images\": %zu, \"files\": %d, \"seconds\": %.3f, \"images_per_s\": %.1f, "
           "\"cpu_ms_per_image\": %.4f}\n",
           done, n, dt, done / dt, 1e3 * cpu / done);
    free(px);
    for (int k = 0; k < n; k++)
        free(data[k]);
    free(data);
    free(len);
    return 0;
}

/* What every timed reading thread has: its file, when to stop, and what it read. */
typedef struct {
    int fd;
    uint64_t size, bytes;
    double stop;
    int failed;
} io_job;

/* Runs fn on each of jobs[0 .. n) (`each` bytes apart, every one starting with an io_job), one
 * thread per job, and waits for them: the bytes all read, or -1 when a thread failed or did
 * not start. */
static int64_t run_jobs(void *(*fn)(void *), void *jobs, size_t each, int n)
{
    pthread_t tid[256];
    int started = 0, failed = 0;
    while (started < n && started < 256 &&
           pthread_create(&tid[started], NULL, fn, (char *)jobs + (size_t)started * each) == 0)
        started++;
    uint64_t bytes = 0;
    for (int k = 0; k < started; k++) {
        pthread_join(tid[k], NULL);
        const io_job *j = (const io_job *)((char *)jobs + (size_t)k * each);
        bytes += j->bytes;
        failed |= j->failed;
    }
    return failed || started < n ? -1 : (int64_t)bytes;
}

/* Each --pread thread starts its own clock once its destination is faulted in (at 0.34 GB/s
 * of page faults, 64 MiB took longer than a whole 0.2 s run under load or qemu, which then
 * timed no read); the rate is the sum of the threads' own rates. */
typedef struct {
    io_job io;
    uint64_t start;
    double seconds, elapsed; /* asked, and measured by the thread */
} pread_job;

static void *pread_loop(void *arg)
{
    pread_job *pj = arg;
    io_job *j = &pj->io;
    const size_t blk = (size_t)4 << 20, slices = 16; /* 64 MiB of destination */
    void *mem = NULL;
    if (posix_memalign(&mem, (size_t)2 << 20, blk * slices) != 0) {
        j->failed = 1;
        return NULL;
    }
    unsigned char *buf = mem;
#ifdef MADV_HUGEPAGE
    madvise(buf, blk * slices, MADV_HUGEPAGE); /* as the reader's batch ring */
#endif
    memset(buf, 0, blk * slices); /* fault it in before the clock starts */
    const double t0 = now();
    j->stop = t0 + pj->seconds;
    uint64_t pos = pj->start - pj->start % blk;
    for (size_t slice = 0; now() < j->stop; slice = (slice + 1) % slices) {
        if (pos >= j->size) pos = 0;
        const size_t want = j->size - pos < blk ? (size_t)(j->size - pos) : blk;
        const ssize_t got = pread(j->fd, buf + slice * blk, want, (off_t)pos);
        if (got <= 0) {
            j->failed = 1;
            break;
        }
        j->bytes += (uint64_t)got;
        pos += (uint64_t)got;
    }
    pj->elapsed = now() - t0;
    free(buf);
    return NULL;
}

static int pread_rate(double seconds, int threads, const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || threads < 1 || threads > 256) {
        fprintf(stderr, "baselines --pread: cannot read %s\n", path);
        if (fd >= 0) close(fd);
        return 1;
    }
    pread_job jobs[256];
    for (int k = 0; k < threads; k++)
        jobs[k] = (pread_job){
            {fd, (uint64_t)st.st_size, 0, 0, 0}, (uint64_t)st.st_size / threads * k, seconds, 0};
    const int64_t bytes = run_jobs(pread_loop, jobs, sizeof *jobs, threads);
    double dt = 0, rate = 0;
    for (int k = 0; bytes >= 0 && k < threads; k++) {
        dt = jobs[k].elapsed > dt ? jobs[k].elapsed : dt;
        if (jobs[k].elapsed > 0) rate += jobs[k].io.bytes / jobs[k].elapsed / 1e9;
    }
    close(fd);
    if (bytes < 0) {
        fprintf(stderr, "baselines --pread: a thread failed on %s\n", path);
        return 1;
    }
    printf("{\"threads\": %d, \"seconds\": %.3f, \"GB_per_s\": %.3f}\n", threads, dt, rate);
    return 0;
}

typedef struct {
    io_job io;
    uint64_t seed;
    unsigned long *next; /* seq: the next 4 MiB block to read, shared (atomic); NULL: random */
} direct_job;

static void *direct_loop(void *arg)
{
    direct_job *dj = arg;
    io_job *j = &dj->io;
    const size_t unit = (size_t)512 << 10, blk = (size_t)4 << 20;
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, blk) != 0) {
        j->failed = 1;
        return NULL;
    }
    memset(buf, 0, blk);
    uint64_t x = dj->seed | 1;
    const uint64_t units = j->size / unit;
    while (now() < j->stop) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t len = unit * (size_t)(1 + (x >> 40) % 8);
        uint64_t off = (x % units) * unit;
        if (dj->next) { /* seq: the next block, wrapping at the end of the file */
            len = blk;
            off =
                (uint64_t)__atomic_fetch_add(dj->next, 1, __ATOMIC_RELAXED) * blk % (units * unit);
        }
        if (off + len > j->size) len = (size_t)((j->size - off) / unit * unit);
        if (len == 0) continue;
        const ssize_t got = pread(j->fd, buf, len, (off_t)off);
        if (got <= 0) {
            j->failed = 1;
            break;
        }
        j->bytes += (uint64_t)got;
    }
    free(buf);
    return NULL;
}

static int direct_rate(double seconds, int qd, const char *path, int seq)
{
    int fd = open(path, O_RDONLY | O_DIRECT);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (8 << 20) || qd < 1 || qd > 256) {
        fprintf(stderr, "baselines --direct-qd: cannot read %s with O_DIRECT\n", path);
        if (fd >= 0) close(fd);
        return 1;
    }
    direct_job jobs[256];
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    const double t0 = now();
    unsigned long next = 0; /* (not uint64_t: 64-bit atomics need libatomic on some 32-bit ABIs) */
    for (int k = 0; k < qd; k++) {
        const uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(k + 1) ^ (uint64_t)(t0 * 1e6);
        jobs[k] =
            (direct_job){{fd, (uint64_t)st.st_size, 0, t0 + seconds, 0}, seed, seq ? &next : NULL};
    }
    const int64_t bytes = run_jobs(direct_loop, jobs, sizeof *jobs, qd);
    const double dt = now() - t0;
    getrusage(RUSAGE_SELF, &r1);
    close(fd);
    if (bytes <= 0) {
        fprintf(stderr, "baselines --direct-qd: a thread failed on %s\n", path);
        return 1;
    }
    const double sys = (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
                       (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) * 1e-6;
    printf("{\"qd\": %d, \"pattern\": \"%s\", \"seconds\": %.3f, \"GB_per_s\": %.3f, "
           "\"sys_s_per_GB\": %.3f}\n",
           qd, seq ? "seq" : "random", dt, bytes / dt / 1e9, sys / (bytes / 1e9));
    return 0;
}

static int touch(size_t bytes)
{
    double t = now();
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE); /* fewer faults; refused where THP is off: no matter */
#endif
    memset(p, 1, bytes);
    munmap(p, bytes);
    printf("{\"seconds\": %.3f}\n", now() - t);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int write_sizes(size_t mib, int rounds, double pause, const char *path)
{
    enum { NSIZES = 4, MAX_ROUNDS = 64 };
    static const size_t sizes[NSIZES] = {128 << 10, 1 << 20, 2 << 20, 8 << 20};
    double t[NSIZES][MAX_ROUNDS];
    if (rounds < 1 || rounds > MAX_ROUNDS || mib < 8 || mib > SIZE_MAX >> 21 ||
        !(pause >= 0 && pause <= 60)) {
        fprintf(stderr, "--write: MIB >= 8, 1 <= ROUNDS <= %d, 0 <= PAUSE <= 60\n", MAX_ROUNDS);
        return 2;
    }
    char *buf = malloc(sizes[NSIZES - 1]);
    if (!buf) return 1;
    memset(buf, 1, sizes[NSIZES - 1]); /* touched once: the source costs the same for all */
    const size_t total = mib << 20;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < NSIZES; k++) {
            const int i = (k + r) % NSIZES;
            struct timespec ts = {(time_t)pause, (long)((pause - (double)(time_t)pause) * 1e9)};
            nanosleep(&ts, NULL);
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
            if (fd < 0) {
                perror(path);
                free(buf);
                return 1;
            }
            double t0 = now();
            for (size_t off = 0; off < total; off += sizes[i])
                if (pwrite(fd, buf, sizes[i], (off_t)off) != (ssize_t)sizes[i]) {
                    perror(path);
                    close(fd);
                    unlink(path);
                    free(buf);
                    return 1;
                }
            t[i][r] = now() - t0;
            close(fd);
            unlink(path);
        }
    free(buf);
    for (int i = 0; i < NSIZES; i++) {
        qsort(t[i], (size_t)rounds, sizeof t[i][0], cmp_double);
        printf("{\"write_kib\": %zu, \"mib\": %zu, \"rounds\": %d, \"median_s\": %.4f, "
               "\"min_s\": %.4f, \"max_s\": %.4f}\n",
               sizes[i] >> 10, mib, rounds, t[i][rounds / 2], t[i][0], t[i][rounds - 1]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "--decode"))
        return decode_baseline(atof(argv[2]), argc - 3, argv + 3, 64);
    if (argc >= 4 && !strcmp(argv[1], "--decode-all"))
        return decode_baseline(atof(argv[2]), argc - 3, argv + 3, argc - 3);
    if (argc == 3 && !strcmp(argv[1], "--touch") && atoll(argv[2]) > 0)
        return touch((size_t)atoll(argv[2]));
    if (argc == 5 && !strcmp(argv[1], "--pread"))
        return pread_rate(atof(argv[2]), atoi(argv[3]), argv[4]);
    if ((argc == 5 || (argc == 6 && !strcmp(argv[5], "seq"))) && !strcmp(argv[1], "--direct-qd"))
        return direct_rate(atof(argv[2]), atoi(argv[3]), argv[4], argc == 6);
    if (argc == 4 && !strcmp(argv[1], "--io"))
        return io_experiment(argv[2], (size_t)atoll(argv[3]));
    if (argc == 6 && !strcmp(argv[1], "--write"))
        return write_sizes((size_t)atoll(argv[2]), atoi(argv[3]), atof(argv[4]), argv[5]);
    fprintf(stderr,
            "usage: %s --io FILE SAMPLE_BYTES | --pread SECONDS THREADS FILE | "
            "--direct-qd SECONDS QD FILE [seq] | --touch BYTES | --write MIB ROUNDS PAUSE FILE | "
            "--decode SECONDS FILE.jpg... | --decode-all SECONDS FILE.jpg...\n"
            "(the reader is measured by `dataconv bench FILE`)\n",
            argv[0]);
    return 2;
}
