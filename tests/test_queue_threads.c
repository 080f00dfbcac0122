/*
 * SharedQueue fed by other OS threads (stvm_queue_open_external,
 * stvm_queue_put_external): a pool of threads putting into a bounded queue that green
 * readers drain, every item arriving once and each thread's items in order; the threads'
 * backpressure when the queue is full; stvm_run waiting for the threads instead of
 * answering a deadlock. Also under ThreadSanitizer (mk/tsan.mk). Real clock: the
 * threads are real.
 */
#include <pthread.h>

#include "helpers.h"

TestSuite(queue_threads, .timeout = 60);

enum { THREADS = 4, PER_THREAD = 5000 };

typedef struct pool {
    stvm_vm *vm;
    stvm_queue *q;
    /* Two readers take turns, so each one sees each thread's items in increasing order
     * (not consecutive): last[reader][thread]; and every item arrives once. */
    int last[2][THREADS];
    unsigned char seen[THREADS][PER_THREAD];
    int readers_started;
    int received;
    int out_of_order;
    int put_errors[THREADS];
    int bad_line;
} pool;

typedef struct feeder {
    pool *p;
    int id;
} feeder;

/* Items carry the thread in the top bits and a sequence number below. */
#define ENCODE(t, n) ((void *)(uintptr_t)(((uintptr_t)(t) << 24) | (uintptr_t)(n) | 1u << 30))

static void *feed(void *arg)
{
    feeder *f = arg;
    for (int n = 0; n < PER_THREAD; n++)
        if (stvm_queue_put_external(f->p->q, ENCODE(f->id, n), -1) != STVM_OK)
            f->p->put_errors[f->id]++;
    return NULL;
}

static void reader(stvm_vm *vm, void *arg)
{
    pool *p = arg;
    int me = p->readers_started++;
    for (int t = 0; t < THREADS; t++)
        p->last[me][t] = -1;
    for (;;) {
        void *item = NULL;
        int rc = stvm_queue_take(vm, p->q, &item);
        GCHECK(p, rc == STVM_OK);
        if (rc || !item)
            return;   /* NULL: the other reader took the last item */
        uintptr_t v = (uintptr_t)item;
        int t = (int)((v >> 24) & 0x3f), n = (int)(v & 0xffffff);
        GCHECK(p, t >= 0 && t < THREADS);
        if (t < 0 || t >= THREADS)
            return;
        GCHECK(p, n < PER_THREAD && !p->seen[t][n]);
        if (n >= PER_THREAD)
            return;
        p->seen[t][n] = 1;
        if (n <= p->last[me][t])
            p->out_of_order++;
        p->last[me][t] = n;
        if (++p->received == THREADS * PER_THREAD) {
            GCHECK(p, stvm_queue_put(vm, p->q, NULL) == STVM_OK);
            return;
        }
        if (p->received % 97 == 0)
            stvm_yield(vm);   /* let the other reader in too */
    }
}

static void run_pool(size_t capacity)
{
    pool *p = calloc(1, sizeof *p);   /* 20 KB of bookkeeping: not on the stack */
    cr_assert_not_null(p);
    p->vm = vm_make(NULL);
    cr_assert_eq(stvm_queue_new(p->vm, capacity, &p->q), STVM_OK);
    cr_assert_eq(stvm_queue_open_external(p->vm, p->q), STVM_OK);
    cr_assert_eq(stvm_spawn(p->vm, 40, "reader 1", reader, p, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(p->vm, 40, "reader 2", reader, p, NULL), STVM_OK);
    pthread_t th[THREADS];
    feeder f[THREADS];
    for (int i = 0; i < THREADS; i++) {
        f[i] = (feeder){.p = p, .id = i};
        cr_assert_eq(pthread_create(&th[i], NULL, feed, &f[i]), 0);
    }
    /* The readers wait on an empty queue again and again: stvm_run must wait for the
     * threads, not answer STVM_EDEADLOCK. */
    int rc = stvm_run(p->vm);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(rc, STVM_OK, "stvm_run: %s", stvm_err_name(rc));
    ASSERT_GREEN_OK(p);
    cr_assert_eq(p->received, THREADS * PER_THREAD);
    cr_assert_eq(p->out_of_order, 0, "each thread's items keep their order");
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(p->put_errors[i], 0);
    cr_assert_eq(stvm_queue_size(p->vm, p->q), 0);
    cr_assert_eq(stvm_queue_free(p->vm, p->q, NULL, NULL), STVM_OK);
    vm_done(p->vm);
    free(p);
}

Test(queue_threads, a_thread_pool_feeds_green_readers_through_an_unbounded_queue)
{
    run_pool(0);
}

Test(queue_threads, a_thread_pool_feeds_a_bounded_queue_and_waits_while_it_is_full)
{
    run_pool(8);
}

static void *put_one(void *arg)
{
    stvm_queue *q = arg;
    return (void *)(intptr_t)stvm_queue_put_external(q, ENCODE(0, 1), 0);
}

static void *put_with_timeout(void *arg)
{
    stvm_queue *q = arg;
    return (void *)(intptr_t)stvm_queue_put_external(q, ENCODE(0, 2), 20);
}

Test(queue_threads, a_thread_finds_a_full_queue_full_or_times_out_waiting_for_room)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_queue *q = NULL;
    cr_assert_eq(stvm_queue_new(vm, 1, &q), STVM_OK);
    cr_assert_eq(stvm_queue_open_external(vm, q), STVM_OK);
    pthread_t t;
    void *rc = NULL;
    cr_assert_eq(pthread_create(&t, NULL, put_one, q), 0);
    pthread_join(t, &rc);
    cr_assert_eq((intptr_t)rc, STVM_OK);
    cr_assert_eq(pthread_create(&t, NULL, put_one, q), 0);
    pthread_join(t, &rc);
    cr_assert_eq((intptr_t)rc, STVM_EFULL, "timeout 0 only tries");
    cr_assert_eq(pthread_create(&t, NULL, put_with_timeout, q), 0);
    pthread_join(t, &rc);
    cr_assert_eq((intptr_t)rc, STVM_ETIMEDOUT);
    cr_assert_eq(stvm_queue_put(vm, q, ENCODE(0, 3)), STVM_EFULL, "the host sees it full");
    cr_assert_eq(stvm_queue_free(vm, q, NULL, NULL), STVM_OK);
    vm_done(vm);
}
