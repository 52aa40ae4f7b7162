/*
 * Worker threads with an ordered completion window: the one threading module of the library,
 * used by conversion (one item per input image, written in input order) and by the reader
 * (one item per batch, cut into pieces that several threads fill at once).
 *
 * A run has items 0..n-1; item i is cut into pieces(user, i) pieces (1 without a pieces
 * callback). Threads take pieces in item order from one counter, so they cooperate on the
 * oldest unfinished item. At most `window` items are in flight: item i is started only when
 * i < released + window, where `released` counts the items the consumer is done with. One
 * consumer thread waits for items in order (ld__pool_wait), uses the finished item, and
 * releases it (ld__pool_release), which lets the threads start the item `window` places on.
 * The caller keeps its per-item state in a ring of `window` slots indexed by item % window:
 * a slot is only touched by the threads filling its item, then by the consumer.
 *
 * Errors: a task returning < 0 fails the pool at its (item, piece). No item after it is
 * started; the items before it (and the other pieces of its item) still run, so that the
 * failure reported is the earliest in item order whatever the timing: a wait for an item
 * before the failing one succeeds, and the wait for the failing item (or any later one)
 * returns the code of the earliest failure, whose message ld__pool_error() gives. A task
 * that wants to report a per-item outcome without stopping (a skipped file) keeps it in its
 * slot and returns LD_OK.
 *
 * Thread rules: create, wait, release, restart and free are called by one consumer thread.
 * Nothing here is global: each pool owns its mutex, condition variables and threads.
 */
#ifndef LD_POOL_H
#define LD_POOL_H

#include "common/ld_internal.h"

/* Fill piece `piece` of `pieces` of item `item`, on worker thread `thread` (0..threads-1,
 * so per-thread scratch can be indexed by it). LD_OK, or < 0 with `e` filled in. */
typedef int (*ld_pool_task_fn)(void *user, int thread, uint64_t item, int piece, int pieces,
                               ld_err *e);
/* The number of pieces of `item` (>= 1). Called under the pool's mutex: keep it cheap. */
typedef int (*ld_pool_pieces_fn)(void *user, uint64_t item);

typedef struct ld_pool_opts {
    int threads;     /* >= 1 */
    uint64_t window; /* items in flight, >= 1 */
    ld_pool_task_fn task;
    ld_pool_pieces_fn pieces; /* NULL: one piece per item */
    void *user;
} ld_pool_opts;

typedef struct ld_pool ld_pool;

/* Start `o->threads` threads on items 0..n_items-1. LD_OK; LD_ENOMEM when memory, a mutex,
 * a condition variable or a thread cannot be had (the message says which and why, from the
 * pthread function's return value); nothing is left running on failure. */
int ld__pool_create(const ld_pool_opts *o, uint64_t n_items, ld_pool **out, ld_err *e);

/* Wait until every piece of `item` is done. LD_OK; LD_POOL_TIMEOUT when timeout_ms > 0
 * passed first; the earliest failure's code when `item` is at or after it (see the Errors
 * paragraph above and ld__pool_error). */
#define LD_POOL_TIMEOUT 1
int ld__pool_wait(ld_pool *p, uint64_t item, int timeout_ms);

/* The consumer is done with items < count: their slots may be reused. */
void ld__pool_release(ld_pool *p, uint64_t count);

/* Begin a new run of n_items items from 0. Only once every item of the current run is done
 * (the consumer waited for the last one): the threads are idle then, so the caller may change
 * what the tasks read before calling this. */
void ld__pool_restart(ld_pool *p, uint64_t n_items);

/* The failing task's message (code < 0), or NULL while no task failed. Valid until free. */
const ld_err *ld__pool_error(ld_pool *p);

/* Stop issuing, let running pieces finish, join every thread, free. NULL is fine. */
void ld__pool_free(ld_pool *p);

#endif /* LD_POOL_H */
