/*
 * Does the emulator keep a thread's state across a signal? (scripts/ci_32bit.sh runs this
 * under qemu-i386 before the i386 suite, and says what it found.)
 *
 * The main thread waits in pthread_cond_timedwait, as dataconv's does for its workers, and a
 * signal with a handler (SIGUSR1 here, SIGINT there) interrupts that wait while a worker still
 * runs; then the main thread joins the
 * worker. Natively the join waits for the worker and returns 0. Under qemu-i386 7.2 (Debian
 * 12) it returns EDEADLK at once (the main thread no longer knows which thread it is), so a
 * program frees what its running worker still uses: `dataconv` interrupted during a
 * conversion then crashes in a worker (tests/cli/interrupt.sh).
 * Exit 0: the join waited for the worker. Exit 1: it did not.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t caught;
static volatile int worker_done;
static pthread_t main_thread;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void on_signal(int sig)
{
    caught = sig;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
    (void)arg;
    struct timespec nap = {0, 200000000L}; /* the main thread is in its wait by then */
    nanosleep(&nap, NULL);
    pthread_kill(main_thread, SIGUSR1);
    const double t0 = now();
    while (now() - t0 < 1.0) { /* still running when the main thread joins */
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
    worker_done = 1;
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    main_thread = pthread_self();
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) return 2;
    pthread_mutex_lock(&mu);
    while (!caught) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&cv, &mu, &until);
    }
    pthread_mutex_unlock(&mu);
    const int rc = pthread_join(t, NULL);
    printf("pthread_join after a signal: %s, worker %s\n", rc ? strerror(rc) : "0",
           worker_done ? "finished" : "still running");
    return rc == 0 && worker_done ? 0 : 1;
}
