/* The threading module (thread/pool.h): ordered completion, the window bound, pieces, epochs
 * (restart), a failing task; and every pthread_* failure on the way up, in the pool itself and
 * through ld_convert_run and ld_reader_open, which must return LD_ENOMEM with the reason that
 * the pthread function *returned* (it does not set errno), start nothing and leave no output.
 *
 * pthread_create, pthread_mutex_init and pthread_cond_init are interposed by this executable;
 * an armed failure only hits calls made from this executable (libdata's objects are linked
 * in), never from HDF5, LMDB or Criterion. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libdata/convert.h"
#include "libdata/reader.h"
#include "test_tmp.h"
#include "thread/pool.h"

TestSuite(pool, .init = ld_tmp_make, .fini = ld_tmp_remove, .timeout = 120);

/* ---- interposed pthread functions ------------------------------------------------------ */

/* Which call to fail: 0 = none, k = the k-th call from this executable from now on. */
static atomic_int fail_create, fail_mutex, fail_cond;

static int from_here(const void *ret)
{
    Dl_info caller, self;
    return dladdr(ret, &caller) && dladdr((void *)from_here, &self) &&
           caller.dli_fbase == self.dli_fbase;
}

/* Counts down armed failures; 1 when this call is the one to fail. */
static int take_failure(atomic_int *k, const void *ret)
{
    if (!from_here(ret)) return 0;
    int v = atomic_load(k);
    while (v > 0 && !atomic_compare_exchange_weak(k, &v, v - 1))
        ;
    return v == 1;
}

int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
    if (take_failure(&fail_create, __builtin_return_address(0))) {
        errno = 0; /* what errno holds is unrelated: the error is the return value */
        return EAGAIN;
    }
    return real(t, a, fn, arg);
}

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    static int (*real)(pthread_mutex_t *, const pthread_mutexattr_t *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_mutex_init");
    if (take_failure(&fail_mutex, __builtin_return_address(0))) {
        errno = 0;
        return ENOMEM;
    }
    return real(m, a);
}

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
    static int (*real)(pthread_cond_t *, const pthread_condattr_t *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "pthread_cond_init");
    if (take_failure(&fail_cond, __builtin_return_address(0))) {
        errno = 0;
        return EAGAIN;
    }
    return real(c, a);
}

/* ---- a pool over a ring of results ------------------------------------------------------ */

#define WINDOW 3
#define MAXP 5

typedef struct ring {
    int done[WINDOW][MAXP]; /* pieces finished of the item in the slot */
    uint64_t item[WINDOW];
    atomic_ullong released; /* mirror of what the consumer released */
    atomic_int too_early;   /* an item started beyond released + WINDOW */
    atomic_int started;     /* tasks run */
    uint64_t fail_item;     /* a task of this item fails (UINT64_MAX: none) */
} ring;

static int ring_pieces(void *user, uint64_t item)
{
    (void)user;
    return (int)(item % MAXP) + 1; /* 1..MAXP */
}

static int ring_task(void *user, int thread, uint64_t item, int piece, int pieces, ld_err *e)
{
    ring *g = user;
    atomic_fetch_add(&g->started, 1);
    cr_assert(thread >= 0 && thread < 3);
    cr_assert_eq(pieces, ring_pieces(NULL, item));
    if (item >= atomic_load(&g->released) + WINDOW) atomic_store(&g->too_early, 1);
    if (item == g->fail_item)
        return ld__err(e, LD_EFORMAT, "item %llu: broken", (unsigned long long)item);
    usleep((useconds_t)(item * 7 % 5) * 300); /* finish out of order */
    g->item[item % WINDOW] = item;
    g->done[item % WINDOW][piece] = 1;
    return LD_OK;
}

static void consume_run(ld_pool *p, ring *g, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        int rc = ld__pool_wait(p, i, (int)(i % 2)); /* with and without a timeout */
        while (rc == LD_POOL_TIMEOUT)
            rc = ld__pool_wait(p, i, 1);
        cr_assert_eq(rc, LD_OK);
        cr_assert_eq(g->item[i % WINDOW], i, "item %llu not in its slot", (unsigned long long)i);
        for (int k = 0; k < ring_pieces(NULL, i); k++) {
            cr_assert(g->done[i % WINDOW][k], "item %llu piece %d not done", (unsigned long long)i,
                      k);
            g->done[i % WINDOW][k] = 0;
        }
        atomic_store(&g->released, i + 1);
        ld__pool_release(p, i + 1);
    }
}

Test(pool, items_complete_in_order_within_the_window_over_restarts)
{
    ring g = {.fail_item = UINT64_MAX};
    ld_err e = {0};
    ld_pool *p = NULL;
    const ld_pool_opts o = {
        .threads = 3, .window = WINDOW, .task = ring_task, .pieces = ring_pieces, .user = &g};
    cr_assert_eq(ld__pool_create(&o, 40, &p, &e), LD_OK, "%s", e.msg);
    consume_run(p, &g, 40);
    for (int epoch = 0; epoch < 3; epoch++) {
        atomic_store(&g.released, 0);
        ld__pool_restart(p, 17 + (uint64_t)epoch);
        consume_run(p, &g, 17 + (uint64_t)epoch);
    }
    cr_assert_null(ld__pool_error(p));
    ld__pool_free(p);
    cr_assert_not(atomic_load(&g.too_early), "an item started outside the window");
    int expect = 0;
    for (uint64_t i = 0; i < 40; i++)
        expect += ring_pieces(NULL, i);
    for (uint64_t n = 17; n < 20; n++)
        for (uint64_t i = 0; i < n; i++)
            expect += ring_pieces(NULL, i);
    cr_assert_eq(atomic_load(&g.started), expect);
}

Test(pool, a_failing_task_stops_the_pool_and_every_wait_reports_it)
{
    ring g = {.fail_item = 4};
    ld_err e = {0};
    ld_pool *p = NULL;
    const ld_pool_opts o = {
        .threads = 2, .window = WINDOW, .task = ring_task, .pieces = ring_pieces, .user = &g};
    cr_assert_eq(ld__pool_create(&o, 1000, &p, &e), LD_OK, "%s", e.msg);
    int rc = LD_OK;
    uint64_t i = 0;
    for (; i < 1000 && (rc = ld__pool_wait(p, i, 0)) == LD_OK; i++) {
        atomic_store(&g.released, i + 1);
        ld__pool_release(p, i + 1);
    }
    cr_assert_eq(rc, LD_EFORMAT);
    cr_assert_leq(i, 4);
    cr_assert_eq(ld__pool_wait(p, i, 0), LD_EFORMAT, "a later wait must fail too");
    const ld_err *pe = ld__pool_error(p);
    cr_assert_not_null(pe);
    cr_assert_eq(pe->code, LD_EFORMAT);
    cr_assert_str_eq(pe->msg, "item 4: broken");
    ld__pool_free(p);
    /* no item past the window of the failure was started */
    cr_assert_leq(atomic_load(&g.started), 4 * MAXP + WINDOW * MAXP);
}

/* Items 1 and 2 fail; item 2 fails first (item 1 sleeps before failing). */
static int late_early_task(void *user, int thread, uint64_t item, int piece, int pieces, ld_err *e)
{
    (void)user, (void)thread, (void)pieces;
    if (item == 1) {
        usleep(50000);
        return ld__err(e, LD_EIO, "item 1 piece %d: slow failure", piece);
    }
    if (item == 2) return ld__err(e, LD_EFORMAT, "item 2 piece %d: quick failure", piece);
    return LD_OK;
}

static int two_pieces(void *user, uint64_t item)
{
    (void)user, (void)item;
    return 2;
}

/* The failure reported is the earliest in item order, whatever the timing: items before it
 * are delivered, and its wait gives its own code and message (not the one that came first). */
Test(pool, the_earliest_failure_in_item_order_is_reported_after_the_items_before_it)
{
    for (int round = 0; round < 20; round++) {
        ld_err e = {0};
        ld_pool *p = NULL;
        const ld_pool_opts o = {
            .threads = 3, .window = 3, .task = late_early_task, .pieces = two_pieces};
        cr_assert_eq(ld__pool_create(&o, 10, &p, &e), LD_OK, "%s", e.msg);
        cr_assert_eq(ld__pool_wait(p, 0, 0), LD_OK, "round %d: item 0 was not delivered", round);
        ld__pool_release(p, 1);
        cr_assert_eq(ld__pool_wait(p, 1, 0), LD_EIO, "round %d", round);
        const ld_err *pe = ld__pool_error(p);
        cr_assert_str_eq(pe->msg, "item 1 piece 0: slow failure", "round %d: %s", round, pe->msg);
        cr_assert_eq(ld__pool_wait(p, 2, 0), LD_EIO, "a later wait gives the same failure");
        ld__pool_free(p);
    }
}

Test(pool, bad_settings_are_refused)
{
    ld_err e = {0};
    ld_pool *p = (ld_pool *)&e;
    const ld_pool_opts o = {.threads = 0, .window = 2, .task = ring_task};
    cr_assert_eq(ld__pool_create(&o, 1, &p, &e), LD_EINVAL);
    cr_assert_null(p);
    ld__pool_free(NULL);
}

/* Every pthread_* failure of create, at each position: LD_ENOMEM, the returned reason in the
 * message, nothing left running (ASan/LSan see the joins and frees). */
Test(pool, each_pthread_failure_is_reported_with_its_returned_reason)
{
    ring g = {.fail_item = UINT64_MAX};
    const ld_pool_opts o = {
        .threads = 3, .window = WINDOW, .task = ring_task, .pieces = ring_pieces, .user = &g};
    struct {
        atomic_int *arm;
        int k;
        const char *what;
        int err;
    } cases[] = {
        {&fail_mutex, 1, "cannot create a mutex for the worker threads", ENOMEM},
        {&fail_cond, 1, "cannot create a condition variable", EAGAIN},
        {&fail_cond, 2, "cannot create a condition variable", EAGAIN},
        {&fail_create, 1, "cannot start worker thread 1 of 3", EAGAIN},
        {&fail_create, 2, "cannot start worker thread 2 of 3", EAGAIN},
        {&fail_create, 3, "cannot start worker thread 3 of 3", EAGAIN},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ld_err e = {0};
        ld_pool *p = NULL;
        atomic_store(cases[k].arm, cases[k].k);
        cr_assert_eq(ld__pool_create(&o, 50, &p, &e), LD_ENOMEM, "case %zu", k);
        atomic_store(cases[k].arm, 0);
        cr_assert_null(p);
        cr_assert(strstr(e.msg, cases[k].what), "case %zu: %s", k, e.msg);
        cr_assert(strstr(e.msg, strerror(cases[k].err)), "case %zu: no reason in: %s", k, e.msg);
    }
    cr_assert_eq(atomic_load(&g.started), 0, "a task ran although create failed");
}

/* ---- the same through the public API ---------------------------------------------------- */

static int count_entries(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 0", dir);
    return system(cmd) == 0 ? 0 : 1;
}

/* Convert the tree fixture with 3 threads while `arm` fails its k-th call. */
static void convert_fails_cleanly(atomic_int *arm, int k, int err, const char *what)
{
    char out[512];
    snprintf(out, sizeof out, "%s/out.h5", ld_tmp);
    ld_convert *c = ld_convert_create();
    cr_assert_not_null(c);
    ld_convert_set(c, LD_C_THREADS, 3);
    ld_convert_set(c, LD_C_RESIZE_W, 32);
    ld_convert_set(c, LD_C_RESIZE_H, 32);
    atomic_store(arm, k);
    const int rc = ld_convert_run(c, LD_TEST_DATA "/tree", out);
    atomic_store(arm, 0);
    cr_assert_eq(rc, LD_ENOMEM, "%s", ld_convert_errmsg(c));
    cr_assert(strstr(ld_convert_errmsg(c), what), "%s", ld_convert_errmsg(c));
    cr_assert(strstr(ld_convert_errmsg(c), strerror(err)), "no reason in: %s",
              ld_convert_errmsg(c));
    cr_assert_eq(count_entries(ld_tmp), 0, "the failed run left files in %s", ld_tmp);
    /* and the same handle converts once the failure is gone */
    cr_assert_eq(ld_convert_run(c, LD_TEST_DATA "/tree", out), LD_OK, "%s", ld_convert_errmsg(c));
    ld_convert_free(c);
}

Test(pool, convert_reports_a_thread_that_cannot_start)
{
    /* 3 threads asked, no more than the CPUs started: the second fails where there are two or
     * more (the first started, and must be stopped), else the only one */
    const int n = ld__cpu_count() < 3 ? ld__cpu_count() : 3, k = n >= 2 ? 2 : 1;
    char what[64];
    snprintf(what, sizeof what, "cannot start worker thread %d of %d", k, n);
    convert_fails_cleanly(&fail_create, k, EAGAIN, what);
}

Test(pool, convert_reports_a_mutex_that_cannot_be_made)
{
    convert_fails_cleanly(&fail_mutex, 1, ENOMEM, "cannot create a mutex");
}

Test(pool, convert_reports_a_condition_variable_that_cannot_be_made)
{
    convert_fails_cleanly(&fail_cond, 2, EAGAIN, "cannot create a condition variable");
}

static void reader_fails_cleanly(atomic_int *arm, int k, int err, const char *what)
{
    ld_reader *r = ld_reader_create();
    cr_assert_not_null(r);
    cr_assert_eq(ld_reader_set(r, LD_R_THREADS, 3), LD_OK);
    cr_assert_eq(ld_reader_set(r, LD_R_BATCH_SIZE, 4), LD_OK);
    atomic_store(arm, k);
    const int rc = ld_reader_open(r, LD_TEST_DATA "/reader/raw_default.h5");
    atomic_store(arm, 0);
    cr_assert_eq(rc, LD_ENOMEM, "%s", ld_reader_errmsg(r));
    cr_assert(strstr(ld_reader_errmsg(r), what), "%s", ld_reader_errmsg(r));
    cr_assert(strstr(ld_reader_errmsg(r), strerror(err)), "no reason in: %s", ld_reader_errmsg(r));
    /* the reader is closed again: it opens once the failure is gone, and reads */
    const ld_batch *b = NULL;
    cr_assert_eq(ld_reader_open(r, LD_TEST_DATA "/reader/raw_default.h5"), LD_OK, "%s",
                 ld_reader_errmsg(r));
    cr_assert_eq(ld_reader_next(r, &b), LD_OK, "%s", ld_reader_errmsg(r));
    cr_assert_eq(b->n, 4);
    ld_reader_free(r);
}

Test(pool, reader_reports_a_thread_that_cannot_start)
{
    reader_fails_cleanly(&fail_create, 3, EAGAIN, "cannot start worker thread 3 of 3");
}

Test(pool, reader_reports_a_condition_variable_that_cannot_be_made)
{
    reader_fails_cleanly(&fail_cond, 1, EAGAIN, "cannot create a condition variable");
}
