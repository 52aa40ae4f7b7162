/*
 * Worker threads with an ordered completion window (see pool.h).
 *
 * Every pthread_* call that can fail is checked; they return their error number instead of
 * setting errno, so messages are made from that return value.
 */
#include "thread/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Where item i stands: slot i % window. Complete when item == i and pieces_left == 0. */
typedef struct pslot {
    uint64_t item; /* UINT64_MAX: not started in this run */
    int pieces, pieces_left;
} pslot;

typedef struct pthr {
    ld_pool *pool;
    int index;
    pthread_t tid;
    ld_err err;
} pthr;

struct ld_pool {
    ld_pool_opts o;
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* threads wait for an item to start */
    pthread_cond_t done_cv; /* the consumer waits for its item */
    uint64_t n, issue, released, waiting;
    int issue_piece;
    int stop;
    int go;     /* set once every thread started: none takes a task before, so a create that
                   fails part-way has run nothing */
    int failed; /* the earliest failing task's code, 0 while none failed */
    uint64_t fail_item;
    int fail_piece; /* where that task was: a failure earlier in order replaces it */
    ld_err err;     /* its message */
    pslot *slots;
    pthr *thr;
    int started;
};

static int can_issue(const ld_pool *p)
{
    /* after a failure, only the items up to the failing one run (to their last piece), so
     * that an earlier failure still found later replaces it */
    return (!p->failed || p->issue <= p->fail_item) && p->issue < p->n &&
           p->issue < p->released + p->o.window;
}

static void *thread_main(void *arg)
{
    pthr *t = arg;
    ld_pool *p = t->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && (!p->go || !can_issue(p)))
            pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop) break;
        const uint64_t item = p->issue;
        pslot *s = &p->slots[item % p->o.window];
        if (p->issue_piece == 0) {
            const int n = p->o.pieces ? p->o.pieces(p->o.user, item) : 1;
            s->item = item;
            s->pieces = s->pieces_left = n > 0 ? n : 1;
        }
        const int piece = p->issue_piece++, pieces = s->pieces;
        if (p->issue_piece >= pieces) {
            p->issue++;
            p->issue_piece = 0;
        }
        pthread_mutex_unlock(&p->mu);

        ld__err_clear(&t->err);
        const int rc = p->o.task(p->o.user, t->index, item, piece, pieces, &t->err);

        pthread_mutex_lock(&p->mu);
        if (rc < 0 && (!p->failed || item < p->fail_item ||
                       (item == p->fail_item && piece < p->fail_piece))) {
            p->failed = rc;
            p->fail_item = item;
            p->fail_piece = piece;
            p->err = t->err;
            p->err.code = rc;
        }
        if (--s->pieces_left == 0 && item == p->waiting) pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Stop and join the started threads, destroy the sync objects, free. */
static void pool_destroy(ld_pool *p, int sync_objects)
{
    if (p->started) { /* threads run only once all three sync objects exist */
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->work_cv);
        pthread_mutex_unlock(&p->mu);
    }
    for (int k = 0; k < p->started; k++)
        pthread_join(p->thr[k].tid, NULL);
    if (sync_objects >= 3) pthread_cond_destroy(&p->done_cv);
    if (sync_objects >= 2) pthread_cond_destroy(&p->work_cv);
    if (sync_objects >= 1) pthread_mutex_destroy(&p->mu);
    free(p->thr);
    free(p->slots);
    free(p);
}

int ld__pool_create(const ld_pool_opts *o, uint64_t n_items, ld_pool **out, ld_err *e)
{
    int rc = LD_OK, made = 0, prc;
    ld_pool *p = NULL;
    *out = NULL;
    LD_CHECK(e, o && o->threads >= 1 && o->window >= 1 && o->task, LD_EINVAL,
             "thread pool: bad settings (threads %d)", o ? o->threads : 0);
    LD_CHECK(e, o->window <= SIZE_MAX / sizeof(pslot), LD_ENOMEM, "out of memory");
    p = calloc(1, sizeof *p);
    LD_CHECK(e, p, LD_ENOMEM, "out of memory");
    p->o = *o;
    p->n = n_items;
    p->waiting = UINT64_MAX;
    p->slots = malloc((size_t)o->window * sizeof *p->slots);
    p->thr = calloc((size_t)o->threads, sizeof *p->thr);
    LD_CHECK(e, p->slots && p->thr, LD_ENOMEM, "out of memory");
    for (uint64_t k = 0; k < o->window; k++)
        p->slots[k] = (pslot){UINT64_MAX, 0, 0};
    prc = pthread_mutex_init(&p->mu, NULL);
    LD_CHECK(e, prc == 0, LD_ENOMEM, "cannot create a mutex for the worker threads: %s",
             strerror(prc));
    made = 1;
    prc = pthread_cond_init(&p->work_cv, NULL);
    LD_CHECK(e, prc == 0, LD_ENOMEM,
             "cannot create a condition variable for the worker threads: %s", strerror(prc));
    made = 2;
    prc = pthread_cond_init(&p->done_cv, NULL);
    LD_CHECK(e, prc == 0, LD_ENOMEM,
             "cannot create a condition variable for the worker threads: %s", strerror(prc));
    made = 3;
    for (int k = 0; k < o->threads; k++) {
        pthr *t = &p->thr[k];
        t->pool = p;
        t->index = k;
        prc = pthread_create(&t->tid, NULL, thread_main, t);
        LD_CHECK(e, prc == 0, LD_ENOMEM,
                 "cannot start worker thread %d of %d: %s (use fewer threads, or raise the "
                 "process or memory limits)",
                 k + 1, o->threads, strerror(prc));
        p->started = k + 1;
    }
    pthread_mutex_lock(&p->mu);
    p->go = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    *out = p;
    return LD_OK;
fail:
    if (p) pool_destroy(p, made);
    return rc;
}

int ld__pool_wait(ld_pool *p, uint64_t item, int timeout_ms)
{
    int rc = LD_OK, timed_out = 0;
    const pslot *s = &p->slots[item % p->o.window];
    struct timespec until;
    if (timeout_ms > 0) {
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&p->mu);
    p->waiting = item;
    for (;;) {
        if (p->failed && item > p->fail_item) { /* waits come in order: not reached */
            rc = p->failed;
            break;
        }
        if (s->item == item && s->pieces_left == 0) {
            if (p->failed && item == p->fail_item) rc = p->failed;
            break;
        }
        if (timed_out) {
            rc = LD_POOL_TIMEOUT;
            break;
        }
        if (timeout_ms > 0)
            timed_out = pthread_cond_timedwait(&p->done_cv, &p->mu, &until) == ETIMEDOUT;
        else
            pthread_cond_wait(&p->done_cv, &p->mu);
    }
    p->waiting = UINT64_MAX;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void ld__pool_release(ld_pool *p, uint64_t count)
{
    pthread_mutex_lock(&p->mu);
    if (count > p->released) {
        p->released = count;
        pthread_cond_broadcast(&p->work_cv);
    }
    pthread_mutex_unlock(&p->mu);
}

void ld__pool_restart(ld_pool *p, uint64_t n_items)
{
    pthread_mutex_lock(&p->mu);
    p->n = n_items;
    p->issue = p->released = 0;
    p->issue_piece = 0;
    for (uint64_t k = 0; k < p->o.window; k++)
        p->slots[k] = (pslot){UINT64_MAX, 0, 0};
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
}

const ld_err *ld__pool_error(ld_pool *p)
{
    pthread_mutex_lock(&p->mu);
    const ld_err *err = p->failed ? &p->err : NULL;
    pthread_mutex_unlock(&p->mu);
    return err;
}

void ld__pool_free(ld_pool *p)
{
    if (p) pool_destroy(p, 3);
}
