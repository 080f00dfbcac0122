/*
 * SharedQueue fed by other OS threads (stvm_queue_open_external,
 * stvm_queue_put_external): a pool of threads putting into a bounded queue that green
 * readers drain, every item arriving once and each thread's items in order; the threads'
 * backpressure when the queue is full; stvm_run waiting for the threads instead of
 * answering a deadlock; the close that ends such a pipeline without a poison pill
 * (the last producer closes, consumers at three priorities end at the end of the queue),
 * a closed queue no longer keeping stvm_run waiting, and threads waiting for room
 * released by the close. Also under ThreadSanitizer (mk/tsan.mk). Real clock: the
 * threads are real, every wait bounded by the suite's timeout.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

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
#define ITEM_UNTOUCHED ((void *)(uintptr_t)0x5a5a)

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

/* A time limit of 0 that passes is ETIMEDOUT, as for a process's put_timeout_ms; the host,
 * which cannot wait, tries: EAGAIN. */
Test(queue_threads, a_thread_times_out_on_a_full_queue_at_once_or_after_waiting_for_room)
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
    cr_assert_eq((intptr_t)rc, STVM_ETIMEDOUT, "timeout 0 only tries");
    cr_assert_eq(pthread_create(&t, NULL, put_with_timeout, q), 0);
    pthread_join(t, &rc);
    cr_assert_eq((intptr_t)rc, STVM_ETIMEDOUT);
    cr_assert_eq(stvm_queue_put(vm, q, ENCODE(0, 3)), STVM_EAGAIN, "the host sees it full");
    cr_assert_eq(stvm_queue_free(vm, q, NULL, NULL), STVM_OK);
    vm_done(vm);
}

/* ---- closing: the end of the queue instead of a poison pill ------------------------- */

enum { CONSUMERS = 3 };

/* Four producer threads feed a bounded queue; the last one to finish closes it
 * (stvm_queue_close_external), and green consumers at three priorities take until the
 * end of the queue, counting under a monitor: no item marks the end. */
typedef struct pipeline {
    stvm_vm *vm;
    stvm_queue *q;
    stvm_monitor *count_lock;
    atomic_int producers_left;
    atomic_int closers;
    atomic_int close_rc;
    int put_errors[THREADS];
    unsigned char seen[THREADS][PER_THREAD];
    int per_consumer[CONSUMERS];
    int received, eofs;
    int bad_line;
} pipeline;

typedef struct producer {
    pipeline *p;
    int id;
} producer;

static void *produce(void *arg)
{
    producer *f = arg;
    pipeline *p = f->p;
    for (int n = 0; n < PER_THREAD; n++)
        if (stvm_queue_put_external(p->q, ENCODE(f->id, n), -1) != STVM_OK)
            p->put_errors[f->id]++;
    /* Several producers close once between them: the last one to finish does. */
    if (atomic_fetch_sub(&p->producers_left, 1) == 1) {
        atomic_fetch_add(&p->closers, 1);
        atomic_store(&p->close_rc, stvm_queue_close_external(p->q));
    }
    return NULL;
}

typedef struct consumer_arg {
    pipeline *p;
    int me;
} consumer_arg;

static void consume(stvm_vm *vm, void *arg)
{
    consumer_arg *c = arg;
    pipeline *p = c->p;
    for (;;) {
        void *item = NULL;
        int rc = stvm_queue_take(vm, p->q, &item);
        GCHECK(p, rc == STVM_OK || rc == STVM_EEOF);
        if (rc != STVM_OK)
            break;
        uintptr_t v = (uintptr_t)item;
        int t = (int)((v >> 24) & 0x3f), n = (int)(v & 0xffffff);
        GCHECK(p, t < THREADS && n < PER_THREAD);
        if (t >= THREADS || n >= PER_THREAD)
            return;
        GCHECK(p, stvm_monitor_enter(vm, p->count_lock) == STVM_OK);
        GCHECK(p, !p->seen[t][n]);
        p->seen[t][n] = 1;
        p->received++;
        p->per_consumer[c->me]++;
        GCHECK(p, stvm_monitor_exit(vm, p->count_lock) == STVM_OK);
    }
    void *item = ITEM_UNTOUCHED;
    GCHECK(p, stvm_queue_take(vm, p->q, &item) == STVM_EEOF && item == ITEM_UNTOUCHED);
    GCHECK(p, stvm_queue_try_take(vm, p->q, &item) == STVM_EEOF);
    GCHECK(p, stvm_monitor_enter(vm, p->count_lock) == STVM_OK);
    p->eofs++;
    GCHECK(p, stvm_monitor_exit(vm, p->count_lock) == STVM_OK);
}

Test(queue_threads, four_threads_feed_consumers_at_three_priorities_that_end_at_the_close)
{
    pipeline *p = calloc(1, sizeof *p);
    cr_assert_not_null(p);
    p->vm = vm_make(NULL);
    atomic_init(&p->producers_left, THREADS);
    atomic_init(&p->closers, 0);
    atomic_init(&p->close_rc, 1);
    cr_assert_eq(stvm_queue_new(p->vm, 8, &p->q), STVM_OK);
    cr_assert_eq(stvm_queue_open_external(p->vm, p->q), STVM_OK);
    cr_assert_eq(stvm_monitor_new(p->vm, &p->count_lock), STVM_OK);
    static const int prio[CONSUMERS] = {30, 40, 50};
    consumer_arg c[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++) {
        c[i] = (consumer_arg){.p = p, .me = i};
        cr_assert_eq(stvm_spawn(p->vm, prio[i], "consumer", consume, &c[i], NULL), STVM_OK);
    }
    pthread_t th[THREADS];
    producer f[THREADS];
    for (int i = 0; i < THREADS; i++) {
        f[i] = (producer){.p = p, .id = i};
        cr_assert_eq(pthread_create(&th[i], NULL, produce, &f[i]), 0);
    }
    int rc = stvm_run(p->vm);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(rc, STVM_OK, "stvm_run: %s (every consumer ends at the close)", stvm_err_name(rc));
    ASSERT_GREEN_OK(p);
    cr_assert_eq(atomic_load(&p->closers), 1);
    cr_assert_eq(atomic_load(&p->close_rc), STVM_OK);
    for (int i = 0; i < THREADS; i++)
        cr_assert_eq(p->put_errors[i], 0);
    /* Each item once. (Not each thread's items in order per consumer: of two readers
     * woken in turn, one of higher priority runs first and takes the front item, the
     * one promised to the earlier; run_pool checks the order with readers of one
     * priority.) */
    cr_assert_eq(p->received, THREADS * PER_THREAD, "every item once");
    cr_assert_eq(p->eofs, CONSUMERS, "every consumer saw the end");
    for (int i = 0; i < CONSUMERS; i++)
        cr_assert_gt(p->per_consumer[i], 0, "consumer at %d took items too", prio[i]);
    cr_assert_eq(stvm_queue_close_external(p->q), STVM_ECLOSED, "closed once");
    cr_assert_eq(stvm_monitor_free(p->vm, p->count_lock), STVM_OK);
    cr_assert_eq(stvm_queue_free(p->vm, p->q, NULL, NULL), STVM_OK);
    vm_done(p->vm);
    free(p);
}

/* A reader waiting on a queue open to other threads keeps stvm_run waiting for them;
 * once a thread closes the queue it no longer does: the reader gets the end, and a
 * process stuck elsewhere is reported (EDEADLOCK), not waited for in silence. */
typedef struct forgotten {
    stvm_queue *q;
    stvm_semaphore *never;
    int taken, end_rc, stuck_rc;
} forgotten;

static void takes_until_the_end(stvm_vm *vm, void *arg)
{
    forgotten *s = arg;
    void *item = NULL;
    int rc;
    while ((rc = stvm_queue_take(vm, s->q, &item)) == STVM_OK)
        s->taken++;
    s->end_rc = rc;
}

static void waits_for_ever(stvm_vm *vm, void *arg)
{
    forgotten *s = arg;
    s->stuck_rc = stvm_semaphore_wait(vm, s->never);
}

static void *puts_three_then_closes(void *arg)
{
    forgotten *s = arg;
    for (int n = 0; n < 3; n++)
        stvm_queue_put_external(s->q, ENCODE(0, n), -1);
    struct timespec pause = {0, 20 * 1000 * 1000};   /* the reader waits meanwhile */
    nanosleep(&pause, NULL);
    return (void *)(intptr_t)stvm_queue_close_external(s->q);
}

Test(queue_threads, closed_external_queue_no_longer_keeps_run_alive)
{
    stvm_vm *vm = vm_make(NULL);
    forgotten s = {.never = sem_make(vm), .stuck_rc = 77};
    cr_assert_eq(stvm_queue_new(vm, 0, &s.q), STVM_OK);
    cr_assert_eq(stvm_queue_open_external(vm, s.q), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 40, "reader", takes_until_the_end, &s, NULL), STVM_OK);
    stvm_process *stuck = spawn(vm, 30, "stuck", waits_for_ever, &s);
    cr_assert_eq(stvm_trace_start(vm, 4096), STVM_OK);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, puts_three_then_closes, &s), 0);
    int rc = stvm_run(vm);
    void *close_rc = NULL;
    pthread_join(t, &close_rc);
    cr_assert_eq(rc, STVM_EDEADLOCK, "stvm_run: %s", stvm_err_name(rc));
    cr_assert_eq((intptr_t)close_rc, STVM_OK);
    cr_assert_eq(s.taken, 3);
    cr_assert_eq(s.end_rc, STVM_EEOF, "%s", stvm_err_name(s.end_rc));
    /* The trace tells the VM's half of the thread's close, by nobody of the VM's. */
    int closes = 0;
    stvm_trace_event ev;
    for (size_t i = 0; stvm_trace_get(vm, i, &ev) == STVM_OK; i++)
        if (ev.kind == STVM_TRACE_QUEUE_CLOSE) {
            closes++;
            cr_assert_eq(ev.process, 0, "a thread's close");
            cr_assert_eq(ev.object, (uintptr_t)s.q);
        }
    cr_assert_eq(closes, 1);
    stvm_trace_stop(vm);
    char report[256];
    cr_assert_gt(stvm_vm_blocked_report(vm, report, sizeof report), 0);
    cr_assert(strstr(report, "stuck") && !strstr(report, "reader"), "%s", report);
    cr_assert_eq(stvm_process_terminate(vm, stuck), STVM_OK);
    stvm_process_release(vm, stuck);
    cr_assert_eq(stvm_queue_free(vm, s.q, NULL, NULL), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, s.never), STVM_OK);
    vm_done(vm);
}

/* A thread waiting for room in a full queue is released by the close with ECLOSED, its
 * item not put; later puts and closes from threads are refused too. */
static void *waits_for_room(void *arg)
{
    stvm_queue *q = arg;
    return (void *)(intptr_t)stvm_queue_put_external(q, ENCODE(1, 1), -1);
}

Test(queue_threads, a_thread_waiting_for_room_is_released_by_the_close_with_eclosed)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_queue *q = NULL;
    cr_assert_eq(stvm_queue_new(vm, 1, &q), STVM_OK);
    cr_assert_eq(stvm_queue_open_external(vm, q), STVM_OK);
    cr_assert_eq(stvm_queue_put(vm, q, ENCODE(0, 1)), STVM_OK);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, waits_for_room, q), 0);
    struct timespec pause = {0, 20 * 1000 * 1000};   /* it blocks meanwhile (or sees the close) */
    nanosleep(&pause, NULL);
    cr_assert_eq(stvm_queue_close(vm, q), STVM_OK);
    void *rc = NULL;
    pthread_join(t, &rc);
    cr_assert_eq((intptr_t)rc, STVM_ECLOSED, "%s", stvm_err_name((int)(intptr_t)rc));
    cr_assert_eq(stvm_queue_put_external(q, ENCODE(2, 1), 0), STVM_ECLOSED);
    cr_assert_eq(stvm_queue_close_external(q), STVM_ECLOSED);
    cr_assert_eq(stvm_queue_size(vm, q), 1, "only the item put before the close");
    cr_assert_eq(stvm_queue_free(vm, q, NULL, NULL), STVM_OK);
    vm_done(vm);
}
