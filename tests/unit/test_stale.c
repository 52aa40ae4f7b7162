/* Sweeping temporaries of killed runs (store/stale.c): what is removed and, above all, what
 * is kept: live pids, files a live writer holds locked (a real HDF5 or LMDB writer in a child
 * process), names that only look like ours, directories with unknown files. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_tmp.h"
#include "store/writer.h"

#ifdef LD_HAVE_HDF5
#include <hdf5.h>
#endif
#ifdef LD_HAVE_LMDB
#include <lmdb.h>
#endif

TestSuite(stale, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 60);

/* A pid that was just used and is gone: a child that exited and was reaped. */
static long dead_pid(void)
{
    pid_t p = fork();
    cr_assert(p >= 0);
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
    return (long)p;
}

static void path_of(char *out, size_t cap, const char *name)
{
    const int n = snprintf(out, cap, "%s/%s", ld_tmp, name);
    cr_assert(n > 0 && (size_t)n < cap, "path too long: %s", name);
}

static void touch(const char *name, size_t bytes)
{
    char p[1024];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f, "%s", p);
    for (size_t i = 0; i < bytes; i++)
        fputc('x', f);
    fclose(f);
}

static int exists(const char *name)
{
    char p[1024];
    struct stat st;
    path_of(p, sizeof p, name);
    return lstat(p, &st) == 0;
}

typedef struct seen {
    int n;
    long pid;
    uint64_t bytes;
    char path[1024];
} seen;

static void on_removed(void *user, const char *path, long pid, uint64_t bytes)
{
    seen *s = user;
    s->n++;
    s->pid = pid;
    s->bytes = bytes;
    snprintf(s->path, sizeof s->path, "%s", path);
}

static int sweep(seen *s)
{
    char final[1024];
    path_of(final, sizeof final, "out.h5");
    memset(s, 0, sizeof *s);
    return ld__sweep_stale_temps(final, on_removed, s);
}

Test(stale, a_dead_writers_file_is_removed_and_reported)
{
    long pid = dead_pid();
    char name[128], want[1024];
    snprintf(name, sizeof name, "out.h5.tmp-%ld-55d0c0ffee", pid);
    touch(name, 1234);
    seen s;
    cr_assert_eq(sweep(&s), 1);
    cr_assert_not(exists(name));
    path_of(want, sizeof want, name);
    cr_assert_str_eq(s.path, want);
    cr_assert_eq(s.pid, pid);
    cr_assert_eq(s.bytes, 1234);
}

Test(stale, live_pids_and_foreign_names_are_kept)
{
    const long dead = dead_pid();
    char names[8][128];
    snprintf(names[0], 128, "out.h5.tmp-%ld-1a", (long)getpid());  /* this process */
    snprintf(names[1], 128, "out.h5.tmp-%ld-1a", (long)getppid()); /* a live process */
    snprintf(names[2], 128, "out.h5.tmp-%ld", dead);               /* no owner part */
    snprintf(names[3], 128, "out.h5.tmp-%ld-xyz", dead);           /* not hex */
    snprintf(names[4], 128, "out.h5.tmp-%ld-1a.bak", dead);        /* a suffix */
    snprintf(names[5], 128, "other.h5.tmp-%ld-1a", dead);          /* another output */
    snprintf(names[6], 128, "out.h5.tmp--%ld-1a", dead);           /* sign */
    snprintf(names[7], 128, "out.h5");                             /* the output itself */
    for (int i = 0; i < 8; i++)
        touch(names[i], 10);
    seen s;
    cr_assert_eq(sweep(&s), 0, "removed %s", s.path);
    for (int i = 0; i < 8; i++)
        cr_assert(exists(names[i]), "%s was removed", names[i]);
}

Test(stale, a_file_someone_holds_locked_is_kept)
{
    /* as if its writer lived on another host of a network file system: the pid means
     * nothing here, the lock is what protects it */
    char name[128], p[512];
    snprintf(name, sizeof name, "out.h5.tmp-%ld-2b", dead_pid());
    touch(name, 10);
    path_of(p, sizeof p, name);
    int fd = open(p, O_RDONLY);
    cr_assert(fd >= 0 && flock(fd, LOCK_EX) == 0);
    seen s;
    cr_assert_eq(sweep(&s), 0);
    cr_assert(exists(name));
    close(fd);
    cr_assert_eq(sweep(&s), 1);
    cr_assert_not(exists(name));
}

/* Run `open_it` in a child that keeps the object open until we close the pipe. */
static pid_t hold_open(void (*open_it)(const char *), const char *path)
{
    int go[2], done[2];
    cr_assert(pipe(go) == 0 && pipe(done) == 0);
    pid_t p = fork();
    cr_assert(p >= 0);
    if (p == 0) {
        close(go[0]);
        close(done[1]);
        open_it(path);
        char c = 1;
        if (write(go[1], &c, 1) != 1) _exit(1);
        while (read(done[0], &c, 1) > 0) {
        }
        _exit(0);
    }
    close(go[1]);
    close(done[0]);
    char c;
    cr_assert_eq(read(go[0], &c, 1), 1, "the child could not open %s", path);
    close(go[0]);
    /* the caller closes the write end by killing the child when done */
    return p;
}

#ifdef LD_HAVE_HDF5
static void open_h5(const char *path)
{
    setenv("HDF5_USE_FILE_LOCKING", "TRUE", 1);
    if (H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT) < 0) _exit(1);
}

#endif

#ifdef LD_HAVE_LMDB
static void open_lmdb(const char *path)
{
    MDB_env *env;
    if (mkdir(path, 0755) != 0 || mdb_env_create(&env) != 0 ||
        mdb_env_open(env, path, 0, 0664) != 0)
        _exit(1);
}

#endif

static void check_live_writer_protects(void (*open_it)(const char *), const char *name)
{
    /* the name carries a dead pid: only the writer's own lock keeps the sweep off */
    char p[1024];
    path_of(p, sizeof p, name);
    pid_t child = hold_open(open_it, p);
    seen s;
    cr_assert_eq(sweep(&s), 0, "%s removed while its writer was alive", name);
    cr_assert(exists(name));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_assert_eq(sweep(&s), 1, "%s not removed after its writer died", name);
    cr_assert_not(exists(name));
}

#ifdef LD_HAVE_HDF5
Test(stale, a_live_hdf5_writer_keeps_its_file)
{
    char name[128];
    snprintf(name, sizeof name, "out.h5.tmp-%ld-3c", dead_pid());
    check_live_writer_protects(open_h5, name);
}

#endif

#ifdef LD_HAVE_LMDB
Test(stale, a_live_lmdb_writer_keeps_its_directory)
{
    char name[128];
    snprintf(name, sizeof name, "out.h5.tmp-%ld-4d", dead_pid());
    check_live_writer_protects(open_lmdb, name);
}

#endif

Test(stale, a_directory_with_unknown_files_is_kept)
{
    char name[128], p[512];
    snprintf(name, sizeof name, "out.h5.tmp-%ld-5e", dead_pid());
    path_of(p, sizeof p, name);
    cr_assert(mkdir(p, 0755) == 0);
    char f[600];
    snprintf(f, sizeof f, "%s/data.mdb", name);
    touch(f, 4096);
    snprintf(f, sizeof f, "%s/notes.txt", name);
    touch(f, 1);
    seen s;
    cr_assert_eq(sweep(&s), 0);
    cr_assert(exists(name));
    char n2[1100];
    snprintf(n2, sizeof n2, "%s/notes.txt", p);
    cr_assert(unlink(n2) == 0);
    cr_assert_eq(sweep(&s), 1);
    cr_assert_eq(s.bytes, 4096, "a database reports its data.mdb size, got %llu",
                 (unsigned long long)s.bytes);
    cr_assert_not(exists(name));
}
