/*
 * Temporaries that a killed run left behind. Writers build their output under
 * "<final>.tmp-<pid>-<hex>" (ld__temp_name) and rename it only on success, so SIGKILL or a
 * power cut leaves that temporary beside the output, possibly gigabytes of it. The next run
 * for the same output removes it, but only when both tests say its writer is gone:
 *
 *  - the pid in the name is not a live process here (kill(pid, 0) fails with ESRCH), and
 *  - nobody holds the file locked. HDF5 (1.10+) keeps an flock on every file it has open and
 *    LMDB a record lock on lock.mdb, so a writer that is alive on another host of a network
 *    file system, where our pid test means nothing, still protects its temporary.
 *
 * A reused pid or an unexpected file makes us keep the temporary: we never remove what might
 * be someone's work.
 */
#include "store/writer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/lmdb/lmdb_store.h"

static const char *const db_files[] = {"data.mdb", "lock.mdb", LD_LMDB_SIDECAR, LD_LMDB_INDEX};

int ld__remove_db_dir(const char *dir)
{
    for (size_t i = 0; i < sizeof db_files / sizeof *db_files; i++) {
        char *p = ld__asprintf("%s/%s", dir, db_files[i]);
        if (!p) return -1;
        unlink(p);
        free(p);
    }
    return rmdir(dir);
}

/* "<pid>-<hex>" and nothing more: the tail of a name made by ld__temp_name. */
static int parse_tail(const char *s, long *pid)
{
    char *end;
    errno = 0;
    *pid = strtol(s, &end, 10);
    if (errno || end == s || *end != '-' || *pid <= 0) return 0;
    s = end + 1;
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'))) return 0;
    return 1;
}

static int pid_alive(long pid)
{
    return pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

/* Is a regular file free of locks? flock, as HDF5 takes it; the probe lock is dropped with
 * the descriptor. */
static int file_unlocked(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    int free_ = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return free_;
}

/* Does an LMDB temporary hold only what our writer puts there, with no live environment
 * (a record lock on lock.mdb)? */
static int db_dir_unused(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int ok = 1;
    struct dirent *de;
    while (ok && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        int known = 0;
        for (size_t i = 0; i < sizeof db_files / sizeof *db_files; i++)
            known |= !strcmp(de->d_name, db_files[i]);
        ok = known;
    }
    closedir(d);
    char *lock = ok ? ld__asprintf("%s/lock.mdb", dir) : NULL;
    if (ok && !lock) return 0;
    if (lock) {
        int fd = open(lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
            ok = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type == F_UNLCK;
            close(fd);
        } else {
            ok = errno == ENOENT;
        }
        free(lock);
    }
    return ok;
}

/* Calls fn(user, path, pid, st) for each "<final>.tmp-<pid>-<hex>" beside final_path (an lstat
 * of it in st) until fn returns nonzero; returns that value, or 0. */
typedef int (*temp_fn)(void *user, const char *path, long pid, struct stat *st);
static int for_each_temp(const char *final_path, temp_fn fn, void *user)
{
    size_t n = strlen(final_path);
    while (n > 1 && final_path[n - 1] == '/')
        n--;
    size_t slash = n;
    while (slash > 0 && final_path[slash - 1] != '/')
        slash--;
    char *dir = slash ? ld__asprintf("%.*s", (int)(slash > 1 ? slash - 1 : 1), final_path)
                      : ld__asprintf(".");
    char *prefix = ld__asprintf("%.*s.tmp-", (int)(n - slash), final_path + slash);
    DIR *d = dir && prefix ? opendir(dir) : NULL;
    int stop = 0;
    struct dirent *de;
    while (!stop && d && (de = readdir(d))) {
        long pid;
        if (strncmp(de->d_name, prefix, strlen(prefix)) ||
            !parse_tail(de->d_name + strlen(prefix), &pid))
            continue;
        char *path = slash ? ld__asprintf("%s/%s", dir, de->d_name) : ld__strdup(de->d_name);
        struct stat st;
        if (path && lstat(path, &st) == 0) stop = fn(user, path, pid, &st);
        free(path);
    }
    if (d) closedir(d);
    free(dir);
    free(prefix);
    return stop;
}

typedef struct sweep {
    ld_stale_fn removed;
    void *user;
    int count;
} sweep;

static int sweep_one(void *user, const char *path, long pid, struct stat *st)
{
    sweep *sw = user;
    if (pid_alive(pid)) return 0;
    int gone = 0;
    if (S_ISREG(st->st_mode) && file_unlocked(path))
        gone = unlink(path) == 0;
    else if (S_ISDIR(st->st_mode) && db_dir_unused(path)) {
        char *data = ld__asprintf("%s/data.mdb", path);
        struct stat ds;
        st->st_size = data && stat(data, &ds) == 0 ? ds.st_size : 0;
        free(data);
        gone = ld__remove_db_dir(path) == 0;
    }
    if (gone) {
        sw->count++;
        if (sw->removed) sw->removed(sw->user, path, pid, (uint64_t)st->st_size);
    }
    return 0;
}

int ld__sweep_stale_temps(const char *final_path, ld_stale_fn removed, void *user)
{
    sweep sw = {removed, user, 0};
    for_each_temp(final_path, sweep_one, &sw);
    return sw.count;
}

typedef struct live {
    const char *own;
    char *path;
    long pid;
} live;

static int live_one(void *user, const char *path, long pid, struct stat *st)
{
    live *l = user;
    const char *base = strrchr(path, '/');
    if (l->own && !strcmp(base ? base + 1 : path, l->own)) return 0;
    const int held = S_ISREG(st->st_mode)   ? !file_unlocked(path)
                     : S_ISDIR(st->st_mode) ? !db_dir_unused(path)
                                            : 0;
    if (!held) return 0;
    l->path = ld__strdup(path);
    l->pid = pid;
    return 1;
}

int ld__refuse_second_writer(const char *final_path, const char *own_tmp, ld_err *e)
{
    const char *slash = own_tmp ? strrchr(own_tmp, '/') : NULL;
    live l = {own_tmp ? (slash ? slash + 1 : own_tmp) : NULL, NULL, 0};
    if (!for_each_temp(final_path, live_one, &l)) return LD_OK;
    int rc = ld__err(e, LD_EIO,
                     "%s is being written by another conversion (process %ld, into %s): wait "
                     "for it to finish, or write to another name",
                     final_path, l.pid, l.path ? l.path : "its temporary");
    free(l.path);
    return rc;
}

int ld__temp_being_written(const char *path, ld_err *e)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *tail = strstr(base, ".tmp-");
    long pid;
    while (tail && !parse_tail(tail + 5, &pid))
        tail = strstr(tail + 1, ".tmp-");
    struct stat st;
    if (!tail || lstat(path, &st) != 0) return LD_OK;
    const int held = S_ISREG(st.st_mode)   ? !file_unlocked(path)
                     : S_ISDIR(st.st_mode) ? !db_dir_unused(path)
                                           : 0;
    if (!held) return LD_OK;
    return ld__err(e, LD_EIO,
                   "%s: a conversion (process %ld) is still writing this temporary: read its "
                   "output once that conversion has finished and renamed it",
                   path, pid);
}
