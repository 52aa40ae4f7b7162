/*
 * Fault injection: every allocation and every write of one conversion, one epoch, one mean,
 * one merge and one plan fails once in turn.
 *
 * This program is linked against the library's object files with
 * -Wl,--wrap=malloc,--wrap=calloc,... (tests/fault/CMakeLists.txt): the linker sends every call
 * that libdata's own code makes to one of these functions to __wrap_NAME below, which counts
 * it and makes the k-th one fail (NULL and ENOMEM for an allocation; -1 / EOF / short count and
 * ENOSPC for a write; EAGAIN/ENOMEM for pthread_create and lock initialisation). The
 * library's sources are untouched. The shared libraries it uses
 * (HDF5, LMDB, libjpeg, libpng, libc) are not relinked, so their own allocations and writes are
 * not failed here: LMDB's mdb_put writes through its own code. Every byte of an HDF5 file goes
 * through libdata's file driver (store/h5_vfd.c), so its pwrite and ftruncate are failed here.
 * tests/fault/unwrapped.sh fails when the library calls an allocation or write function that
 * is not wrapped here (the list is tests/fault/CMakeLists.txt's LD_FAULT_WRAPPED).
 *
 * For each case: one run with no fault counts the calls (N) and checks the result; then runs
 * k = 1..N each fail the k-th call and must
 *   - return LD_ENOMEM (allocation) or LD_EIO (write), or LD_OK only if the result is still
 *     complete (the call was one whose failure is harmless, e.g. a warning's text);
 *   - leave nothing in the output folder (no dataset, no temporary file, no lock file);
 *   - leak nothing: under AddressSanitizer each run ends with a LeakSanitizer check.
 * Runs are single-threaded (LD_C_THREADS / LD_R_THREADS 1) so call k is the same call every
 * time; a second pass with 2 threads fails every allocation again in a threaded pipeline.
 *
 *   fault_inject TESTDATA WORKDIR [CASE]      (CASE: one case name; default all)
 *
 * A defect is printed with the case, k, the failed function and its call site (resolve it with
 * the printed addr2line command), the status and the message.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "libdata/convert.h"
#include "libdata/plan.h"
#include "libdata/reader.h"

#if defined(__SANITIZE_ADDRESS__)
#define FI_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FI_LSAN 1
#endif
#endif
#ifdef FI_LSAN
#include <sanitizer/lsan_interface.h>
#endif

/* ---- the fault points ----------------------------------------------------------------- */

enum { KIND_ALLOC = 1, KIND_WRITE = 2, KIND_THREAD = 3 };

static atomic_int armed;       /* count calls only while the library runs a case */
static atomic_long calls;      /* calls counted in this run */
static atomic_long fail_at;    /* fail call number fail_at (1-based); 0 = none */
static atomic_int fired_kind;  /* KIND_* of the call that failed, 0 = none yet */
static const char *fired_name; /* its function */
static void *fired_stack[12];  /* its callers */
static int fired_depth;

static int inject(int kind, const char *name, void *site)
{
    if (!atomic_load(&armed)) return 0;
    long n = atomic_fetch_add(&calls, 1) + 1;
    if (n != atomic_load(&fail_at)) return 0;
    (void)site;
    fired_name = name;
    fired_depth = backtrace(fired_stack, 12);
    atomic_store(&fired_kind, kind);
    return 1;
}

#define SITE __builtin_return_address(0)

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
int __real_vasprintf(char **s, const char *fmt, va_list ap);
ssize_t __real_getline(char **line, size_t *cap, FILE *f);
char *__real_realpath(const char *path, char *resolved);
size_t __real_fwrite(const void *p, size_t size, size_t n, FILE *f);
int __real_fflush(FILE *f);
int __real_fsync(int fd);
int __real_fclose(FILE *f);
int __real_rename(const char *from, const char *to);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __real_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int __real_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int __real_posix_memalign(void **p, size_t align, size_t n);
ssize_t __real_pwrite64(int fd, const void *p, size_t n, off_t off);
int __real_ftruncate64(int fd, off_t len);
int __real_mkdir(const char *path, mode_t mode);

void *__wrap_malloc(size_t n)
{
    if (inject(KIND_ALLOC, "malloc", SITE)) return errno = ENOMEM, NULL;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (inject(KIND_ALLOC, "calloc", SITE)) return errno = ENOMEM, NULL;
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    if (inject(KIND_ALLOC, "realloc", SITE)) return errno = ENOMEM, NULL;
    return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    if (inject(KIND_ALLOC, "strdup", SITE)) return errno = ENOMEM, NULL;
    return __real_strdup(s);
}

int __wrap_vasprintf(char **s, const char *fmt, va_list ap)
{
    if (inject(KIND_ALLOC, "vasprintf", SITE))
        return errno = ENOMEM, -1; /* glibc leaves *s undefined */
    return __real_vasprintf(s, fmt, ap);
}

ssize_t __wrap_getline(char **line, size_t *cap, FILE *f)
{
    if (inject(KIND_ALLOC, "getline", SITE)) return errno = ENOMEM, -1;
    return __real_getline(line, cap, f);
}

char *__wrap_realpath(const char *path, char *resolved)
{
    if (!resolved && inject(KIND_ALLOC, "realpath", SITE)) return errno = ENOMEM, NULL;
    return __real_realpath(path, resolved);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
    if (inject(KIND_ALLOC, "posix_memalign", SITE)) return ENOMEM; /* errno untouched */
    return __real_posix_memalign(p, align, n);
}

/* With _FILE_OFFSET_BITS=64 glibc's headers call pwrite and ftruncate by these names. */
ssize_t __wrap_pwrite64(int fd, const void *p, size_t n, off_t off)
{
    if (n && inject(KIND_WRITE, "pwrite", SITE)) return errno = ENOSPC, -1;
    return __real_pwrite64(fd, p, n, off);
}

int __wrap_ftruncate64(int fd, off_t len)
{
    if (inject(KIND_WRITE, "ftruncate", SITE)) return errno = EFBIG, -1;
    return __real_ftruncate64(fd, len);
}

int __wrap_mkdir(const char *path, mode_t mode)
{
    if (inject(KIND_WRITE, "mkdir", SITE)) return errno = ENOSPC, -1;
    return __real_mkdir(path, mode);
}

size_t __wrap_fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    if (size && n && inject(KIND_WRITE, "fwrite", SITE)) {
        errno = ENOSPC; /* a short write: part of the data, as a full disk gives */
        return n > 1 ? __real_fwrite(p, size, n / 2, f) : 0;
    }
    return __real_fwrite(p, size, n, f);
}

int __wrap_fprintf(FILE *f, const char *fmt, ...)
{
    if (inject(KIND_WRITE, "fprintf", SITE)) return errno = ENOSPC, -1;
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(f, fmt, ap);
    va_end(ap);
    return r;
}

int __wrap_fflush(FILE *f)
{
    if (f && inject(KIND_WRITE, "fflush", SITE)) return errno = ENOSPC, EOF;
    return __real_fflush(f);
}

int __wrap_fsync(int fd)
{
    if (inject(KIND_WRITE, "fsync", SITE)) return errno = EIO, -1;
    return __real_fsync(fd);
}

int __wrap_fclose(FILE *f)
{
    /* the stream is closed either way (as a real failing fclose does) */
    int fail = inject(KIND_WRITE, "fclose", SITE);
    int r = __real_fclose(f);
    if (fail) return errno = EIO, EOF;
    return r;
}

int __wrap_rename(const char *from, const char *to)
{
    if (inject(KIND_WRITE, "rename", SITE)) return errno = EIO, -1;
    return __real_rename(from, to);
}

/* Threads and their locks: resources like memory (EAGAIN: no more threads; ENOMEM), so the
 * library's answer is LD_ENOMEM too. pthread_* return the error, errno is left alone: the
 * message must carry that error. A failed initialisation is never harmless (using the object
 * is undefined), so these runs must fail. */
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (inject(KIND_THREAD, "pthread_create", SITE)) return EAGAIN;
    return __real_pthread_create(t, a, fn, arg);
}

int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    if (inject(KIND_THREAD, "pthread_mutex_init", SITE)) return ENOMEM;
    return __real_pthread_mutex_init(m, a);
}

int __wrap_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
    if (inject(KIND_THREAD, "pthread_cond_init", SITE)) return ENOMEM;
    return __real_pthread_cond_init(c, a);
}

/* ---- helpers --------------------------------------------------------------------------- */

static const char *testdata, *workdir;
static int defects, threads = 1;

static void quiet_log(void *user, int level, const char *msg)
{
    (void)user, (void)level, (void)msg;
}

/* The failed call's stack, as function (file:line) lines: addr2line on this executable. */
static void print_stack(void)
{
    for (int i = 2; i < fired_depth; i++) { /* 0: inject, 1: the wrapper */
        Dl_info di;
        if (!dladdr(fired_stack[i], &di) || !di.dli_fname) continue;
        char cmd[1400], line[512];
        snprintf(cmd, sizeof cmd, "addr2line -f -s -e '%s' %#lx 2>/dev/null | paste -sd' '",
                 di.dli_fname, (unsigned long)((char *)fired_stack[i] - (char *)di.dli_fbase - 1));
        FILE *p = popen(cmd, "r");
        if (p && fgets(line, sizeof line, p) && strncmp(line, "??", 2) != 0)
            fprintf(stderr, "    %s", line);
        if (p) pclose(p);
        if (strstr(line, "_case ") || strstr(line, "count_epoch "))
            break; /* the test's own frames from here on */
    }
}

static int entries(const char *dir, char *first, size_t n)
{
    DIR *d = opendir(dir);
    int count = 0;
    struct dirent *de;
    if (first && n) first[0] = '\0';
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        if (count++ == 0 && first) snprintf(first, n, "%s", de->d_name);
    }
    if (d) closedir(d);
    return count;
}

static void clean(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "fault_inject: cannot reset %s\n", dir);
        exit(2);
    }
}

/* A case runs once with the fault armed; it returns the library's status and fills msg. The
 * check says whether a completed (LD_OK) run produced the full result. */
typedef struct fcase {
    const char *name;
    int (*run)(const struct fcase *fc, const char *out_dir, char *msg, size_t n);
    int (*check)(const struct fcase *fc, const char *out_dir);
    int writes; /* leaves output in out_dir */
    int param;
    int expect; /* status without a fault: LD_OK, or LD_EINVAL for a refusal */
} fcase;

#define ARM()                                                                                      \
    do {                                                                                           \
        atomic_store(&calls, 0);                                                                   \
        atomic_store(&fired_kind, 0);                                                              \
        atomic_store(&armed, 1);                                                                   \
    } while (0)
#define DISARM() atomic_store(&armed, 0)

/* ---- the cases -------------------------------------------------------------------------- */

static char tree[512];     /* fixture folder: 3 class folders, JPEG + PNG, a non-image */
static char ref_h5[512];   /* a raw HDF5 dataset made from it, read by the epoch cases */
static char ref_enc[512];  /* an encoded (JPEG q90) HDF5 dataset */
static char ref_lmdb[512]; /* an LMDB dataset */
static long ref_samples;   /* samples in each */

/* format: 0 raw HDF5, 1 encoded HDF5 (q90), 2 LMDB, 3 HDF5 split into several files + list */
static int convert_case(const fcase *fc, const char *out_dir, char *msg, size_t n)
{
    static const char *names[] = {"out.h5", "out.h5", "out.lmdb", "out.h5"};
    char out[1024];
    snprintf(out, sizeof out, "%s/%s", out_dir, names[fc->param]);
    ld_convert *c = ld_convert_create();
    int rc = LD_ENOMEM;
    snprintf(msg, n, "ld_convert_create returned NULL");
    if (c) {
        ld_convert_set_log(c, quiet_log, NULL);
        ld_convert_set(c, LD_C_RESIZE_W, 24);
        ld_convert_set(c, LD_C_RESIZE_H, 16);
        ld_convert_set(c, LD_C_THREADS, threads);
        if (fc->param == 1) ld_convert_set(c, LD_C_QUALITY, 90);
        if (fc->param == 3)
            ld_convert_set(c, LD_C_SPLIT_BYTES, 24 * 16 * 3 * 2); /* two samples a file */
        rc = ld_convert_run(c, tree, out);
        snprintf(msg, n, "%s", ld_convert_errmsg(c));
        ld_convert_free(c);
    }
    return rc;
}

static long count_epoch(const char *path, int dtype, char *msg, size_t n, int *status)
{
    ld_reader *r = ld_reader_create();
    long got = 0;
    *status = LD_ENOMEM;
    snprintf(msg, n, "ld_reader_create returned NULL");
    if (!r) return 0;
    ld_reader_set_log(r, quiet_log, NULL);
    ld_reader_set(r, LD_R_BATCH_SIZE, 3);
    ld_reader_set(r, LD_R_THREADS, threads);
    ld_reader_set(r, LD_R_DTYPE, dtype);
    int rc = ld_reader_open(r, path);
    const ld_batch *b;
    while (rc == LD_OK && (rc = ld_reader_next(r, &b)) == LD_OK)
        got += (long)b->n;
    *status = rc == LD_END ? LD_OK : rc;
    snprintf(msg, n, "%s", ld_reader_errmsg(r));
    ld_reader_free(r);
    return got;
}

static long last_epoch_samples;

/* param: 0 raw HDF5 u8, 1 raw HDF5 f32, 2 encoded HDF5, 3 LMDB */
static int epoch_case(const fcase *fc, const char *out_dir, char *msg, size_t n)
{
    (void)out_dir;
    const char *path = fc->param == 2 ? ref_enc : fc->param == 3 ? ref_lmdb : ref_h5;
    int rc;
    last_epoch_samples =
        count_epoch(path, fc->param == 1 ? LD_DTYPE_F32 : LD_DTYPE_U8, msg, n, &rc);
    return rc;
}

static int epoch_check(const fcase *fc, const char *out_dir)
{
    (void)fc, (void)out_dir;
    return last_epoch_samples == ref_samples;
}

static int mean_case(const fcase *fc, const char *out_dir, char *msg, size_t n)
{
    (void)fc;
    char out[1024], *err = NULL;
    double m[4];
    int ch = 0;
    snprintf(out, sizeof out, "%s/mean.binaryproto", out_dir);
    int rc = ld_compute_mean(ref_h5, out, m, &ch, &err);
    snprintf(msg, n, "%s", err ? err : "(no message)");
    DISARM(); /* ld_free is the library's; it frees, it does not allocate */
    ld_free(err);
    return rc;
}

/* A completed conversion: the reader sees every sample, the output folder holds the dataset
 * (and for a split, the list and its files). */
static int convert_check(const fcase *fc, const char *out_dir)
{
    static const char *names[] = {"out.h5", "out.h5", "out.lmdb", "out.txt"};
    char out[1024], msg[512];
    snprintf(out, sizeof out, "%s/%s", out_dir, names[fc->param]);
    int rc;
    long got = count_epoch(out, LD_DTYPE_U8, msg, sizeof msg, &rc);
    if (rc == LD_OK && got == ref_samples) return 1;
    fprintf(stderr, "  reading %s back: status %d, %ld of %ld samples: %s\n", out, rc, got,
            ref_samples, msg);
    return 0;
}

static int mean_check(const fcase *fc, const char *out_dir)
{
    (void)fc;
    char out[1024];
    struct stat st;
    snprintf(out, sizeof out, "%s/mean.binaryproto", out_dir);
    return stat(out, &st) == 0 && st.st_size > 0 && entries(out_dir, NULL, 0) == 1;
}

/* Merges of two parts made once (make_reference): param 0 HDF5, 1 LMDB. The merged HDF5 file
 * maps the parts by absolute path (it is written in out_dir, away from them). */
static char parts[2][2][512];

static int merge_case(const fcase *fc, const char *out_dir, char *msg, size_t n)
{
    char out[1024], *err = NULL;
    snprintf(out, sizeof out, "%s/%s", out_dir, fc->param ? "m.lmdb" : "m.h5");
    const char *p[2] = {parts[fc->param][0], parts[fc->param][1]};
    int rc = ld_merge(out, p, 2, NULL, NULL, &err);
    snprintf(msg, n, "%s", err ? err : "(no message)");
    DISARM();
    ld_free(err);
    return rc;
}

static int merge_check(const fcase *fc, const char *out_dir)
{
    char out[1024], msg[512];
    snprintf(out, sizeof out, "%s/%s", out_dir, fc->param ? "m.lmdb" : "m.h5");
    int rc;
    long got = count_epoch(out, LD_DTYPE_U8, msg, sizeof msg, &rc);
    if (rc == LD_OK && got == ref_samples && entries(out_dir, NULL, 0) == 1) return 1;
    fprintf(stderr, "  reading %s back: status %d, %ld of %ld samples: %s\n", out, rc, got,
            ref_samples, msg);
    return 0;
}

/* The plan of a small deploy net (make_reference writes it; no file is written by the plan):
 * a complete run gives the same total. */
static uint64_t plan_total;
static char plan_net[512];
static const char plan_text[] =
    "name: \"tiny\"\n"
    "layer { name: \"data\" type: \"Input\" top: \"data\"\n"
    "  input_param { shape { dim: 4 dim: 3 dim: 32 dim: 32 } } }\n"
    "layer { name: \"conv1\" type: \"Convolution\" bottom: \"data\" top: \"conv1\"\n"
    "  convolution_param { num_output: 8 kernel_size: 3 stride: 1 } }\n"
    "layer { name: \"relu1\" type: \"ReLU\" bottom: \"conv1\" top: \"conv1\" }\n"
    "layer { name: \"pool1\" type: \"Pooling\" bottom: \"conv1\" top: \"pool1\"\n"
    "  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }\n"
    "layer { name: \"ip1\" type: \"InnerProduct\" bottom: \"pool1\" top: \"ip1\"\n"
    "  inner_product_param { num_output: 10 } }\n"
    "layer { name: \"prob\" type: \"Softmax\" bottom: \"ip1\" top: \"prob\" }\n";

static int plan_case(const fcase *fc, const char *out_dir, char *msg, size_t n)
{
    (void)fc, (void)out_dir;
    ld_plan_info *info = NULL;
    char *err = NULL;
    int rc = ld_plan(plan_net, NULL, LD_PLAN_TEST, 8, (uint64_t)1 << 30, NULL, &info, &err);
    snprintf(msg, n, "%s", err ? err : "(no message)");
    DISARM();
    uint64_t total = info ? info->total : 0;
    ld_free(info);
    ld_free(err);
    if (rc == LD_OK && !plan_total) plan_total = total; /* the run without a fault is first */
    if (rc == LD_OK && total != plan_total) rc = -100;  /* an incomplete estimate */
    return rc;
}

static int plan_check(const fcase *fc, const char *out_dir)
{
    (void)fc, (void)out_dir;
    return plan_total > 0;
}

/* Refusals: the output would replace or land inside the input. An allocation failing inside
 * the safety check must not let the run through (a check that fails open). The check()
 * here holds after every run: nothing was written. param: 0 output inside the input folder,
 * 1 a --split whose list would replace the input list, 2 a mean inside an LMDB input. */
static char refuse_dir[512];

static int refuse_case(const fcase *fc, const char *out_dir, char *msg, size_t n)
{
    (void)out_dir;
    char in[600], out[700], list[700];
    if (fc->param == 2) {
        snprintf(out, sizeof out, "%s/mean.binaryproto", ref_lmdb);
        char *err = NULL;
        int rc = ld_compute_mean(ref_lmdb, out, NULL, NULL, &err);
        snprintf(msg, n, "%s", err ? err : "(no message)");
        DISARM();
        ld_free(err);
        return rc;
    }
    snprintf(in, sizeof in, "%s/tree", refuse_dir);
    snprintf(list, sizeof list, "%s/train.txt", refuse_dir);
    if (fc->param == 0)
        snprintf(out, sizeof out, "%s/cat/out.h5", in);
    else
        snprintf(out, sizeof out, "%s/train.h5", refuse_dir);
    ld_convert *c = ld_convert_create();
    if (!c) return snprintf(msg, n, "ld_convert_create returned NULL"), LD_ENOMEM;
    ld_convert_set_log(c, quiet_log, NULL);
    ld_convert_set(c, LD_C_RESIZE_W, 24);
    ld_convert_set(c, LD_C_RESIZE_H, 16);
    ld_convert_set(c, LD_C_THREADS, threads);
    int rc = LD_OK;
    if (fc->param == 1) {
        ld_convert_set(c, LD_C_SPLIT_BYTES, 24 * 16 * 3 * 2);
        rc = ld_convert_set_str(c, LD_C_LIST_FILE, list);
    }
    if (rc == LD_OK) rc = ld_convert_run(c, in, out);
    snprintf(msg, n, "%s", ld_convert_errmsg(c));
    ld_convert_free(c);
    return rc;
}

/* A listing of the folders a refusal must leave alone, compared with the one before. */
static void refuse_listing(const fcase *fc, char *buf, size_t n)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls -aR '%s' | md5sum", fc->param == 2 ? ref_lmdb : refuse_dir);
    FILE *p = popen(cmd, "r");
    buf[0] = '\0';
    if (!p || !fgets(buf, (int)n, p)) snprintf(buf, n, "(ls failed)");
    if (p) pclose(p);
}

static char refuse_before[64];

/* The refusal cases' own input: a copy of the tree and a list file naming its images (and no
 * mean file in the reference LMDB). */
static void refuse_reset(void)
{
    char cmd[2400];
    clean(refuse_dir);
    snprintf(cmd, sizeof cmd,
             "cp -r '%s' '%s/tree' && cp '%s/list.txt' '%s/train.txt' && "
             "rm -f '%s'/mean.binaryproto*",
             tree, refuse_dir, testdata, refuse_dir, ref_lmdb);
    if (system(cmd) != 0) {
        fprintf(stderr, "fault_inject: cannot copy the fixtures: %s\n", cmd);
        exit(2);
    }
}

static int refuse_check(const fcase *fc, const char *out_dir)
{
    (void)out_dir;
    char now[64];
    refuse_listing(fc, now, sizeof now);
    return !strcmp(now, refuse_before);
}

static const fcase cases[] = {
    {"convert_h5", convert_case, convert_check, 1, 0, LD_OK},
    {"convert_h5_jpeg", convert_case, convert_check, 1, 1, LD_OK},
    {"convert_lmdb", convert_case, convert_check, 1, 2, LD_OK},
    {"convert_h5_split", convert_case, convert_check, 1, 3, LD_OK},
    {"epoch_h5", epoch_case, epoch_check, 0, 0, LD_OK},
    {"epoch_h5_f32", epoch_case, epoch_check, 0, 1, LD_OK},
    {"epoch_h5_jpeg", epoch_case, epoch_check, 0, 2, LD_OK},
    {"epoch_lmdb", epoch_case, epoch_check, 0, 3, LD_OK},
    {"mean", mean_case, mean_check, 1, 0, LD_OK},
    {"merge_h5", merge_case, merge_check, 1, 0, LD_OK},
    {"merge_lmdb", merge_case, merge_check, 1, 1, LD_OK},
    {"plan", plan_case, plan_check, 0, 0, LD_OK},
    {"refuse_inside_input", refuse_case, refuse_check, 0, 0, LD_EINVAL},
    {"refuse_split_list", refuse_case, refuse_check, 0, 1, LD_EINVAL},
    {"refuse_mean_in_lmdb", refuse_case, refuse_check, 0, 2, LD_EINVAL},
};

/* ---- the driver ------------------------------------------------------------------------- */

static int leak_check(void)
{
#ifdef FI_LSAN
    return __lsan_do_recoverable_leak_check();
#else
    return 0;
#endif
}

static void defect(const fcase *fc, long k, const char *what, int rc, const char *msg)
{
    fprintf(stderr, "DEFECT %s threads %d k=%ld: %s\n  status %d (%s): %s\n  failed call: %s\n",
            fc->name, threads, k, what, rc, ld_strerror(rc), msg, fired_name ? fired_name : "?");
    print_stack();
    defects++;
}

#define LEAK_EVERY 16

static void run_case(const fcase *fc)
{
    char out_dir[400], msg[2048], first[256];
    snprintf(out_dir, sizeof out_dir, "%s/%s-t%d", workdir, fc->name, threads);
    clean(out_dir);
    if (fc->expect != LD_OK) refuse_listing(fc, refuse_before, sizeof refuse_before);
    ARM();
    atomic_store(&fail_at, 0);
    int rc = fc->run(fc, out_dir, msg, sizeof msg);
    DISARM();
    long total = atomic_load(&calls);
    if (rc != fc->expect || !fc->check(fc, out_dir)) {
        fprintf(stderr, "fault_inject: %s fails without a fault (status %d): %s\n", fc->name, rc,
                msg);
        exit(2);
    }
    if (leak_check()) defect(fc, 0, "leak in a run without a fault", rc, msg);
    long ok_runs = 0, not_reached = 0;
    for (long k = 1; k <= total; k++) {
        if (fc->writes) clean(out_dir); /* (a shell each time: only where it matters) */
        atomic_store(&fail_at, k);
        fired_name = NULL;
        fired_depth = 0;
        ARM();
        rc = fc->run(fc, out_dir, msg, sizeof msg);
        DISARM();
        atomic_store(&fail_at, 0);
        int kind = atomic_load(&fired_kind);
        if (!kind) { /* a threaded run took another path: fewer calls this time */
            not_reached++;
            continue;
        }
        int want = kind == KIND_WRITE ? LD_EIO : LD_ENOMEM;
        if (fc->expect != LD_OK) {
            if (rc == LD_OK)
                defect(fc, k, "the refusal was skipped: the run went through", rc, msg);
            else if (rc != fc->expect && rc != want)
                defect(fc, k, "expected the refusal or the fault's status", rc, msg);
            else if (rc == fc->expect)
                ok_runs++;
            if (!fc->check(fc, out_dir)) {
                defect(fc, k, "the refused run wrote something", rc, msg);
                refuse_reset(); /* so the next k starts from the same files */
            }
        } else if (kind == KIND_THREAD) {
            const char *why = strerror(strcmp(fired_name, "pthread_create") ? ENOMEM : EAGAIN);
            if (rc != want)
                defect(fc, k, "a failed thread or lock initialisation must fail the run", rc, msg);
            else if (!strstr(msg, why))
                defect(fc, k, "the message lacks the pthread error", rc, msg);
        } else if (rc == LD_OK) {
            /* a harmless call (a warning's text, a best-effort sync): the result must be whole */
            if (!fc->check(fc, out_dir))
                defect(fc, k, "returned LD_OK but the result is incomplete", rc, msg);
            else if (++ok_runs && getenv("FI_VERBOSE")) {
                fprintf(stderr, "harmless: %s k=%ld %s\n", fc->name, k, fired_name);
                print_stack();
            }
        } else {
            if (rc != want)
                defect(fc, k, kind == KIND_WRITE ? "expected LD_EIO" : "expected LD_ENOMEM", rc,
                       msg);
            else if (!msg[0])
                defect(fc, k, "no error message", rc, msg);
        }
        if (rc != LD_OK && fc->writes && entries(out_dir, first, sizeof first) != 0)
            defect(fc, k, "output left behind after the failure", rc, first);
        /* A leak stays unreachable, so a check every LEAK_EVERY runs finds it all the same
         * (the report names the allocation); one per run made the plan case (1,872 fault
         * points) take over 5 minutes under ASan. */
        if ((k % LEAK_EVERY == 0 || k == total) && leak_check())
            defect(fc, k, "leak in one of the last runs (LeakSanitizer report above)", rc, msg);
    }
    printf("%-18s threads %d: %4ld fault points, %ld completed anyway (harmless call), %ld not "
           "reached\n",
           fc->name, threads, total, ok_runs, not_reached);
    fflush(stdout);
    clean(out_dir);
}

static void make_reference(void)
{
    char msg[1024];
    static const fcase make[] = {{"ref", convert_case, NULL, 1, 0, LD_OK},
                                 {"ref", convert_case, NULL, 1, 1, LD_OK},
                                 {"ref", convert_case, NULL, 1, 2, LD_OK}};
    char *dst[] = {ref_h5, ref_enc, ref_lmdb};
    static const char *names[] = {"out.h5", "out.h5", "out.lmdb"};
    for (int i = 0; i < 3; i++) {
        char dir[400];
        snprintf(dir, sizeof dir, "%s/ref%d", workdir, i);
        clean(dir);
        int rc = convert_case(&make[i], dir, msg, sizeof msg);
        if (rc != LD_OK) {
            fprintf(stderr, "fault_inject: reference conversion failed: %s\n", msg);
            exit(2);
        }
        snprintf(dst[i], 512, "%s/%s", dir, names[i]);
    }
    snprintf(plan_net, sizeof plan_net, "%s/tiny.prototxt", workdir);
    FILE *pf = fopen(plan_net, "w");
    if (!pf || fputs(plan_text, pf) < 0 || fclose(pf) != 0) {
        fprintf(stderr, "fault_inject: cannot write %s\n", plan_net);
        exit(2);
    }
    for (int f = 0; f < 2; f++) /* two parts of each format, for the merge cases */
        for (int k = 0; k < 2; k++) {
            char dir[400], out[600];
            snprintf(dir, sizeof dir, "%s/parts%d", workdir, f);
            if (k == 0) clean(dir);
            snprintf(out, sizeof out, "%s/%s", dir, f ? "p.lmdb" : "p.h5");
            ld_convert *c = ld_convert_create();
            int rc = c ? LD_OK : LD_ENOMEM;
            if (c) {
                ld_convert_set_log(c, quiet_log, NULL);
                ld_convert_set(c, LD_C_RESIZE_W, 24);
                ld_convert_set(c, LD_C_RESIZE_H, 16);
                ld_convert_set(c, LD_C_SHARD_COUNT, 2);
                ld_convert_set(c, LD_C_SHARD_INDEX, k);
                rc = ld_convert_run(c, tree, out);
                snprintf(msg, sizeof msg, "%s", ld_convert_errmsg(c));
                ld_convert_free(c);
            }
            char *name = NULL;
            if (rc != LD_OK || ld_shard_part_name(out, k, 2, &name) != LD_OK) {
                fprintf(stderr, "fault_inject: part %d of %s failed: %s\n", k, out, msg);
                exit(2);
            }
            snprintf(parts[f][k], sizeof parts[f][k], "%s", name);
            ld_free(name);
        }
    int rc;
    ref_samples = count_epoch(ref_h5, LD_DTYPE_U8, msg, sizeof msg, &rc);
    if (rc != LD_OK || ref_samples < 4) {
        fprintf(stderr, "fault_inject: reference dataset unreadable (%ld samples): %s\n",
                ref_samples, msg);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s TESTDATA WORKDIR [CASE]\n", argv[0]);
        return 2;
    }
    testdata = argv[1];
    workdir = argv[2];
    const char *only = argc > 3 ? argv[3] : NULL;
    snprintf(tree, sizeof tree, "%s/tree", testdata);
    make_reference();
    snprintf(refuse_dir, sizeof refuse_dir, "%s/refuse", workdir);
    refuse_reset();
    for (threads = 1; threads <= 2; threads++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
            if ((!only || !strcmp(only, cases[i].name)) &&
                (threads == 1 || cases[i].run != plan_case)) /* the planner starts no thread */
                run_case(&cases[i]);
    if (defects) {
        fprintf(stderr, "fault_inject: %d defect(s)\n", defects);
        return 1;
    }
    printf("fault_inject: no defect\n");
    return 0;
}
