/*
 * External semaphores: the 1-based table, its limits, signals from the host and from
 * other OS threads (N requests become exactly N signals), waking an idle VM, the
 * checkpoint that delivers them, and unregistering.
 *
 * The threaded tests use no sleeps: signalling threads run as fast as they can, and the
 * VM's processes wait; a thread that must signal "after the VM went idle" spins on an
 * atomic flag set by the green process, then busy-waits on the real clock.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(external, .timeout = 30);

static stvm_vm *vm_table(int size)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.external_table_size = size;
    return vm_make(&cfg);
}

static int reg(stvm_vm *vm, stvm_semaphore *s)
{
    int idx = -77;
    int err = stvm_external_register(vm, s, &idx);
    cr_assert_eq(err, STVM_OK, "register: %s", stvm_err_name(err));
    return idx;
}

/* ---- the table -------------------------------------------------------------------- */

Test(external, register_answers_one_based_indices_and_reuses_freed_slots)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *a = sem_make(vm), *b = sem_make(vm), *c = sem_make(vm), *d = sem_make(vm);
    cr_assert_eq(reg(vm, a), 1);
    cr_assert_eq(reg(vm, b), 2);
    cr_assert_eq(reg(vm, c), 3);
    cr_assert_eq(stvm_external_unregister(vm, 2), STVM_OK);
    cr_assert_eq(reg(vm, d), 2, "the lowest free slot");
    cr_assert_eq(reg(vm, b), 4, "b may be registered again");
    for (int i = 1; i <= 4; i++)
        cr_assert_eq(stvm_external_unregister(vm, i), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, a), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, b), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, c), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, d), STVM_OK);
    vm_done(vm);
}

Test(external, register_is_efull_when_the_configured_table_is_full)
{
    stvm_vm *vm = vm_table(2);
    stvm_semaphore *a = sem_make(vm), *b = sem_make(vm), *c = sem_make(vm);
    cr_assert_eq(reg(vm, a), 1);
    cr_assert_eq(reg(vm, b), 2);
    int idx = -77;
    cr_assert_eq(stvm_external_register(vm, c, &idx), STVM_EFULL);
    cr_assert_eq(idx, -77, "index untouched");
    cr_assert_eq(stvm_semaphore_free(vm, c), STVM_OK, "c was not registered");
    cr_assert_eq(stvm_external_signal(vm, 3), STVM_EINVAL, "beyond the table");
    cr_assert_eq(stvm_external_unregister(vm, 1), STVM_OK);
    c = sem_make(vm);
    cr_assert_eq(reg(vm, c), 1);
    vm_done(vm);
}

Test(external, registering_the_same_semaphore_twice_is_estate)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *a = sem_make(vm), *b = sem_make(vm);
    cr_assert_eq(reg(vm, a), 1);
    int idx = -77;
    cr_assert_eq(stvm_external_register(vm, a, &idx), STVM_ESTATE);
    cr_assert_eq(idx, -77);
    cr_assert_eq(reg(vm, b), 2, "the refused call took no slot");
    vm_done(vm);
}

Test(external, register_and_unregister_reject_bad_arguments)
{
    stvm_vm *vm = vm_table(4);
    stvm_semaphore *a = sem_make(vm);
    stvm_mutex *m;
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    int idx = -77;
    cr_assert_eq(stvm_external_register(vm, NULL, &idx), STVM_EINVAL);
    cr_assert_eq(stvm_external_register(vm, a, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_external_register(NULL, a, &idx), STVM_EINVAL);
    cr_assert_eq(stvm_external_register(vm, (stvm_semaphore *)m, &idx), STVM_EINVAL);
    stvm_vm *other = vm_make(NULL);
    cr_assert_eq(stvm_external_register(other, a, &idx), STVM_EINVAL, "another VM's semaphore");
    vm_done(other);
    cr_assert_eq(idx, -77);
    cr_assert_eq(stvm_external_unregister(vm, 1), STVM_EINVAL, "slot not in use");
    cr_assert_eq(stvm_external_unregister(vm, 0), STVM_EINVAL);
    cr_assert_eq(stvm_external_unregister(vm, 5), STVM_EINVAL);
    cr_assert_eq(stvm_external_unregister(NULL, 1), STVM_EINVAL);
    cr_assert_eq(reg(vm, a), 1);
    cr_assert_eq(stvm_external_unregister(vm, 1), STVM_OK);
    cr_assert_eq(stvm_external_unregister(vm, 1), STVM_EINVAL, "already free");
    vm_done(vm);
}

Test(external, signal_external_with_a_bad_index_is_einval)
{
    stvm_vm *vm = vm_table(8);
    cr_assert_eq(stvm_external_signal(vm, 0), STVM_EINVAL);
    cr_assert_eq(stvm_external_signal(vm, -1), STVM_EINVAL);
    cr_assert_eq(stvm_external_signal(vm, 9), STVM_EINVAL);
    cr_assert_eq(stvm_external_signal(vm, INT32_MIN), STVM_EINVAL);
    cr_assert_eq(stvm_external_signal(NULL, 1), STVM_EINVAL);
    cr_assert_eq(stvm_external_signal(vm, 8), STVM_OK, "an unused slot: dropped later");
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(stats_of(vm).external_signals, 0);
    vm_done(vm);
}

Test(external, a_registered_semaphore_cannot_be_freed_until_unregistered)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *a = sem_make(vm);
    int idx = reg(vm, a);
    cr_assert_eq(stvm_semaphore_free(vm, a), STVM_EINUSE);
    cr_assert_eq(stvm_external_unregister(vm, idx), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, a), STVM_OK);
    vm_done(vm);
}

/* The default table holds 65,536 slots (three per socket: 21,845 sockets), taken in
 * chunks of 256 as they are used; every slot up to the last is registrable. */
Test(external, the_default_table_registers_65536_slots_in_order_then_is_full)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_config got;
    cr_assert_eq(stvm_vm_config(vm, &got), STVM_OK);
    cr_assert_eq(got.external_table_size, 65536);
    static stvm_semaphore *sems[65536];
    for (int i = 0; i < 65536; i++) {
        sems[i] = sem_make(vm);
        int idx = -77, err = stvm_external_register(vm, sems[i], &idx);
        cr_assert_eq(err, STVM_OK, "slot %d: %s", i + 1, stvm_err_name(err));
        cr_assert_eq(idx, i + 1);
    }
    stvm_semaphore *extra = sem_make(vm);
    int idx = -77;
    cr_assert_eq(stvm_external_register(vm, extra, &idx), STVM_EFULL);
    cr_assert_eq(idx, -77);
    /* A freed slot in the middle of a chunk is the next one handed out. */
    cr_assert_eq(stvm_external_unregister(vm, 40000), STVM_OK);
    cr_assert_eq(reg(vm, extra), 40000);
    vm_done(vm);
}

/* Requests on slots across chunk and bitmap-word boundaries (the pending bitmap has a
 * word per 64 slots and a summary bit per word) each arrive as exactly their count of
 * signals, and a request for a slot of a chunk never used is dropped. */
Test(external, requests_across_chunks_and_bitmap_words_become_exactly_their_signals)
{
    stvm_vm *vm = vm_make(NULL);
    static const int slots[] = {1, 63, 64, 65, 128, 255, 256, 257, 4095, 4096, 4097, 4160,
                                8191, 20000, 32768};
    enum { N = sizeof slots / sizeof slots[0] };
    static stvm_semaphore *sems[32768];
    for (int i = 0; i < 32768; i++)
        cr_assert_eq(reg(vm, sems[i] = sem_make(vm)), i + 1);
    uint64_t total = 0;
    for (int k = 0; k < N; k++)
        for (int r = 0; r <= k; r++, total++)
            cr_assert_eq(stvm_external_signal(vm, slots[k]), STVM_OK);
    cr_assert_eq(stvm_external_signal(vm, 65536), STVM_OK, "a chunk never made");
    cr_assert_eq(stvm_run(vm), STVM_OK);
    for (int k = 0; k < N; k++)
        cr_assert_eq(stvm_semaphore_excess(vm, sems[slots[k] - 1]), k + 1, "slot %d",
                     slots[k]);
    cr_assert_eq(stvm_semaphore_excess(vm, sems[1]), 0, "a slot nobody signalled");
    cr_assert_eq(stats_of(vm).external_signals, total);
    /* Every bit was taken: a second run delivers nothing more. */
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(stats_of(vm).external_signals, total);
    vm_done(vm);
}

/* ---- signals from the host --------------------------------------------------------- */

typedef struct three_waits {
    stvm_semaphore *sem;
    int index;   /* sem's external index */
    int wait_rc[3];
    trace_log log;
} three_waits;

static void wait_three(stvm_vm *vm, void *arg)
{
    three_waits *s = arg;
    for (int i = 0; i < 3; i++)
        s->wait_rc[i] = stvm_semaphore_wait(vm, s->sem);
    trace_add(&s->log, 1);
}

Test(external, host_requests_become_exactly_that_many_signals_when_the_vm_runs)
{
    stvm_vm *vm = vm_make(NULL);
    three_waits s = {.sem = sem_make(vm)};
    s.index = reg(vm, s.sem);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(stvm_external_signal(vm, s.index), STVM_OK);
    cr_assert_eq(stvm_semaphore_excess(vm, s.sem), 0, "delivered at a scheduling point");
    cr_assert_eq(stvm_spawn(vm, 40, "waiter", wait_three, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(s.wait_rc[i], STVM_OK);
    static const int want[] = {1};
    trace_expect(&s.log, want, 1);
    cr_assert_eq(stats_of(vm).external_signals, 3);
    cr_assert_eq(stvm_semaphore_excess(vm, s.sem), 0);
    vm_done(vm);
}

Test(external, requests_made_before_registration_are_forgotten)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *old = sem_make(vm), *fresh = sem_make(vm);
    int idx = reg(vm, old);
    cr_assert_eq(stvm_external_signal(vm, idx), STVM_OK);
    cr_assert_eq(stvm_external_unregister(vm, idx), STVM_OK);
    cr_assert_eq(stvm_external_signal(vm, idx), STVM_OK);   /* unused slot */
    cr_assert_eq(reg(vm, fresh), idx);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(stvm_semaphore_excess(vm, old), 0, "dropped at unregister");
    cr_assert_eq(stvm_semaphore_excess(vm, fresh), 0, "not inherited");
    cr_assert_eq(stats_of(vm).external_signals, 0);
    /* a request after registration does arrive */
    cr_assert_eq(stvm_external_signal(vm, idx), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(stvm_semaphore_excess(vm, fresh), 1);
    cr_assert_eq(stats_of(vm).external_signals, 1);
    vm_done(vm);
}

Test(external, a_waiter_on_an_unregistered_semaphore_is_a_deadlock)
{
    stvm_vm *vm = vm_make(NULL);
    trace_log log = {0};
    logged_wait waiter = {.sem = sem_make(vm), .log = &log, .tag = 1};
    int idx = reg(vm, waiter.sem);
    cr_assert_eq(stvm_external_unregister(vm, idx), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 40, "waiter", wait_and_log, &waiter, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK, "nothing can signal it any more");
    cr_assert_eq(log.n, 0);
    cr_assert_eq(stvm_semaphore_signal(vm, waiter.sem), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(waiter.rc, STVM_OK);
    vm_done(vm);
}

/* ---- checkpoint --------------------------------------------------------------------- */

typedef struct delivery {
    stvm_semaphore *sem;
    int index;   /* sem's external index */
    trace_log log;
    int signal_rc;
    int first_checkpoint, second_checkpoint;   /* what the two checkpoints answered */
} delivery;

static void ext_low_worker(stvm_vm *vm, void *arg)
{
    delivery *s = arg;
    trace_add(&s->log, 1);
    s->signal_rc = stvm_external_signal(vm, s->index);   /* as an interrupt handler would */
    s->first_checkpoint = stvm_checkpoint(vm);           /* delivers it: the waiter preempts */
    trace_add(&s->log, 3);
    s->second_checkpoint = stvm_checkpoint(vm);
}

Test(external, checkpoint_delivers_a_pending_external_signal_and_lets_the_waiter_preempt)
{
    stvm_vm *vm = vm_make(NULL);
    delivery s = {.sem = sem_make(vm)};
    s.index = reg(vm, s.sem);
    logged_wait high = {.sem = s.sem, .log = &s.log, .tag = 2};
    cr_assert_eq(stvm_spawn(vm, 50, "high", wait_and_log, &high, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 30, "low", ext_low_worker, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(high.rc, STVM_OK);
    cr_assert_eq(s.signal_rc, STVM_OK);
    cr_assert_eq(s.first_checkpoint, 1, "checkpoint answered %d", s.first_checkpoint);
    cr_assert_eq(s.second_checkpoint, 0);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    cr_assert_eq(stats_of(vm).external_signals, 1);
    vm_done(vm);
}

/* stvm_external_signal is async-signal-safe: a signal handler may call it. raise()
 * runs the handler on this thread before it returns. */
static stvm_vm *handler_vm;
static int handler_index;

static void on_sigusr1(int sig)
{
    (void)sig;
    stvm_external_signal(handler_vm, handler_index);
}

typedef struct raised {
    stvm_semaphore *sem;
    int index;   /* sem's external index */
    trace_log log;
    int first_raise_rc, second_raise_rc, checkpoint_rc;
    int first_wait_rc, second_wait_rc;
} raised;

static void raiser(stvm_vm *vm, void *arg)
{
    raised *s = arg;
    trace_add(&s->log, 1);
    s->first_raise_rc = raise(SIGUSR1);
    s->second_raise_rc = raise(SIGUSR1);
    s->checkpoint_rc = stvm_checkpoint(vm);   /* both delivered: the waiter preempts */
    trace_add(&s->log, 3);
}

static void double_waiter(stvm_vm *vm, void *arg)
{
    raised *s = arg;
    s->first_wait_rc = stvm_semaphore_wait(vm, s->sem);
    s->second_wait_rc = stvm_semaphore_wait(vm, s->sem);   /* the second signal is an excess one */
    trace_add(&s->log, 2);
}

Test(external, a_signal_handler_may_signal_an_external_semaphore)
{
    stvm_vm *vm = vm_make(NULL);
    raised s = {.sem = sem_make(vm)};
    s.index = reg(vm, s.sem);
    handler_vm = vm;
    handler_index = s.index;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigusr1;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGUSR1, &sa, &old), 0);
    cr_assert_eq(stvm_spawn(vm, 50, "waiter", double_waiter, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 30, "raiser", raiser, &s, NULL), STVM_OK);
    int err = stvm_run(vm);
    sigaction(SIGUSR1, &old, NULL);
    cr_assert_eq(err, STVM_OK, "stvm_run: %s", stvm_err_name(err));
    cr_assert_eq(s.first_raise_rc, 0);
    cr_assert_eq(s.second_raise_rc, 0);
    cr_assert_eq(s.checkpoint_rc, 1);
    cr_assert_eq(s.first_wait_rc, STVM_OK);
    cr_assert_eq(s.second_wait_rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    cr_assert_eq(stats_of(vm).external_signals, 2);
    vm_done(vm);
}

/* ---- other OS threads ---------------------------------------------------------------- */

enum { SIGNALLERS = 4, PER_THREAD = 100000 };

typedef struct hammer {
    stvm_vm *vm;
    int index;
    atomic_int *go;
    int errors;
} hammer;

static void *hammer_thread(void *arg)
{
    hammer *h = arg;
    while (!atomic_load(h->go))
        sched_yield();
    for (int i = 0; i < PER_THREAD; i++)
        if (stvm_external_signal(h->vm, h->index) != STVM_OK)
            h->errors++;
    return NULL;
}

typedef struct hammered {
    stvm_semaphore *sem;
    int index;      /* sem's external index */
    atomic_int go;  /* set by the waiter, read by the signalling threads */
    long waits;
    int bad_line;
} hammered;

static void many_waits(stvm_vm *vm, void *arg)
{
    hammered *s = arg;
    atomic_store(&s->go, 1);   /* start the signalling threads */
    for (long i = 0; i < (long)SIGNALLERS * PER_THREAD; i++) {
        if (stvm_semaphore_wait(vm, s->sem) != STVM_OK)
            s->bad_line = __LINE__;
        s->waits++;
    }
}

Test(external, four_threads_signalling_100000_times_each_wake_400000_waits_exactly)
{
    stvm_vm *vm = vm_make(NULL);
    hammered s;
    memset(&s, 0, sizeof s);
    atomic_init(&s.go, 0);
    s.sem = sem_make(vm);
    s.index = reg(vm, s.sem);
    cr_assert_eq(stvm_spawn(vm, 40, "waiter", many_waits, &s, NULL), STVM_OK);
    hammer h[SIGNALLERS];
    pthread_t th[SIGNALLERS];
    for (int i = 0; i < SIGNALLERS; i++) {
        h[i] = (hammer){vm, s.index, &s.go, 0};
        cr_assert_eq(pthread_create(&th[i], NULL, hammer_thread, &h[i]), 0);
    }
    int err = stvm_run(vm);
    for (int i = 0; i < SIGNALLERS; i++)
        cr_assert_eq(pthread_join(th[i], NULL), 0);
    cr_assert_eq(err, STVM_OK, "stvm_run: %s", stvm_err_name(err));
    cr_assert_eq(s.bad_line, 0, "a wait failed");
    for (int i = 0; i < SIGNALLERS; i++)
        cr_assert_eq(h[i].errors, 0);
    cr_assert_eq(s.waits, (long)SIGNALLERS * PER_THREAD);
    stvm_stats st = stats_of(vm);
    cr_assert_eq(st.external_signals, (uint64_t)SIGNALLERS * PER_THREAD);
    cr_assert_eq(st.semaphore_waits, (uint64_t)SIGNALLERS * PER_THREAD);
    cr_assert_eq(stvm_semaphore_excess(vm, s.sem), 0, "no signal lost or invented");
    vm_done(vm);
}

/* Threads signal slots spread over the whole table while a green process drains at
 * its checkpoints: a request that races with a drain (its bit set after the drain took
 * the word) is delivered by the next one, so every slot gets exactly its count. */
enum { SPREAD_THREADS = 4, SPREAD_SLOTS = 16, SPREAD_ROUNDS = 2000 };

typedef struct spread {
    stvm_vm *vm;
    stvm_semaphore *sems[SPREAD_THREADS * SPREAD_SLOTS];
    int index[SPREAD_THREADS * SPREAD_SLOTS];
    atomic_int go;
    atomic_int errors;
    long checkpoints;
} spread;

typedef struct spread_thread {
    spread *s;
    int first;      /* its slots: index[first .. first + SPREAD_SLOTS) */
} spread_thread;

static void *spread_signaller(void *arg)
{
    spread_thread *t = arg;
    while (!atomic_load(&t->s->go))
        sched_yield();
    for (int r = 0; r < SPREAD_ROUNDS; r++)
        for (int k = 0; k < SPREAD_SLOTS; k++)
            if (stvm_external_signal(t->s->vm, t->s->index[t->first + k]) != STVM_OK)
                atomic_fetch_add(&t->s->errors, 1);
    return NULL;
}

static void spread_drainer(stvm_vm *vm, void *arg)
{
    spread *s = arg;
    atomic_store(&s->go, 1);
    for (;;) {
        int64_t sum = 0;
        for (int i = 0; i < SPREAD_THREADS * SPREAD_SLOTS; i++)
            sum += stvm_semaphore_excess(vm, s->sems[i]);
        if (sum == (int64_t)SPREAD_THREADS * SPREAD_SLOTS * SPREAD_ROUNDS)
            return;
        stvm_checkpoint(vm);
        s->checkpoints++;
    }
}

Test(external, signals_spread_over_the_table_from_four_threads_arrive_exactly)
{
    stvm_vm *vm = vm_make(NULL);
    static spread s;
    memset(&s, 0, sizeof s);
    s.vm = vm;
    atomic_init(&s.go, 0);
    atomic_init(&s.errors, 0);
    static stvm_semaphore *fill[65536];
    int want = 0;
    for (int i = 1; i <= 65536; i++) {
        fill[i - 1] = sem_make(vm);
        cr_assert_eq(reg(vm, fill[i - 1]), i);
        /* Every 1021st slot (a prime stride: all offsets in a word, many chunks). */
        if (i % 1021 == 7 && want < SPREAD_THREADS * SPREAD_SLOTS) {
            s.sems[want] = fill[i - 1];
            s.index[want++] = i;
        }
    }
    cr_assert_eq(want, SPREAD_THREADS * SPREAD_SLOTS);
    cr_assert_eq(stvm_spawn(vm, 40, "drainer", spread_drainer, &s, NULL), STVM_OK);
    spread_thread t[SPREAD_THREADS];
    pthread_t th[SPREAD_THREADS];
    for (int i = 0; i < SPREAD_THREADS; i++) {
        t[i] = (spread_thread){&s, i * SPREAD_SLOTS};
        cr_assert_eq(pthread_create(&th[i], NULL, spread_signaller, &t[i]), 0);
    }
    int err = stvm_run(vm);
    for (int i = 0; i < SPREAD_THREADS; i++)
        cr_assert_eq(pthread_join(th[i], NULL), 0);
    cr_assert_eq(err, STVM_OK, "stvm_run: %s", stvm_err_name(err));
    cr_assert_eq(atomic_load(&s.errors), 0);
    for (int i = 0; i < SPREAD_THREADS * SPREAD_SLOTS; i++)
        cr_assert_eq(stvm_semaphore_excess(vm, s.sems[i]), SPREAD_ROUNDS, "slot %d",
                     s.index[i]);
    cr_assert_eq(stats_of(vm).external_signals,
                 (uint64_t)SPREAD_THREADS * SPREAD_SLOTS * SPREAD_ROUNDS);
    vm_done(vm);
}

typedef struct late_signal {
    stvm_vm *vm;
    int index;
    atomic_int *ready;
} late_signal;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits until the green process is about to block, lets the VM go idle (busy-waiting
 * 20 ms on the real clock), then signals once. */
static void *late_signaller(void *arg)
{
    late_signal *ls = arg;
    while (!atomic_load(ls->ready))
        sched_yield();
    int64_t until = mono_ns() + 20 * 1000000;
    while (mono_ns() < until)
        sched_yield();
    stvm_external_signal(ls->vm, ls->index);
    return NULL;
}

typedef struct idle_waiter {
    stvm_semaphore *sem;
    int index;         /* sem's external index */
    atomic_int ready;  /* set by the waiter just before it blocks */
    int wait_rc;
    trace_log log;
} idle_waiter;

static void flag_then_wait(stvm_vm *vm, void *arg)
{
    idle_waiter *s = arg;
    atomic_store(&s->ready, 1);
    s->wait_rc = stvm_semaphore_wait(vm, s->sem);
    trace_add(&s->log, 1);
}

static void idle_wakeup_on(int clock_kind)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = clock_kind;
    stvm_vm *vm = vm_make(&cfg);
    idle_waiter s;
    memset(&s, 0, sizeof s);
    atomic_init(&s.ready, 0);
    s.sem = sem_make(vm);
    s.index = reg(vm, s.sem);
    cr_assert_eq(stvm_spawn(vm, 40, "sleeper", flag_then_wait, &s, NULL), STVM_OK);
    late_signal ls = {vm, s.index, &s.ready};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, late_signaller, &ls), 0);
    int err = stvm_run(vm);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(err, STVM_OK, "stvm_run: %s", stvm_err_name(err));
    cr_assert_eq(s.wait_rc, STVM_OK);
    static const int want[] = {1};
    trace_expect(&s.log, want, 1);
    stvm_stats st = stats_of(vm);
    cr_assert_eq(st.external_signals, 1);
    cr_assert_eq(stvm_semaphore_excess(vm, s.sem), 0);
    vm_done(vm);
}

Test(external, an_idle_vm_wakes_when_another_thread_signals, .timeout = 20)
{
    idle_wakeup_on(STVM_CLOCK_REAL);
}

/* On the simulated clock with no timer armed the idle VM sleeps without a timeout:
 * only the external signal's wake-up can end the sleep (a lost wake-up hangs). */
Test(external, an_idle_vm_on_the_simulated_clock_sleeps_until_the_signal_wakes_it,
     .timeout = 20)
{
    idle_wakeup_on(STVM_CLOCK_SIMULATED);
}
