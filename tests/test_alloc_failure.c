/*
 * Allocation failures, SQLite's way (issue 32): the sanitizer build's fault injector
 * (vm/alloc.h, -DSTVM_FAULTS) fails the Nth allocation the library makes, and each
 * workload below is run with N = 1, 2, 3, ... until it completes with no failure
 * injected. After every run that met one: each call that met it answered STVM_ENOMEM
 * (its documented code) and the invariants held right then; the call made again did what
 * it should (a failed call changes nothing, so the workload goes on and must end with
 * exactly the results of a run without faults); the invariants hold at the end, the VM
 * is freed, and LeakSanitizer finds nothing (__lsan_do_recoverable_leak_check, run after
 * every N). A failure the library meets where no call can answer it (inside stvm_run:
 * the timing process, the drain of the external table) must be survived: the workload's
 * results tell.
 *
 * Each test prints its figures: the workload's allocation points (the allocations of a
 * run without faults), the runs made, the calls that answered a failure, and the Ns that
 * broke a rule (none, or the test fails naming them). Regression Ns found by this suite
 * and fixed are listed with their workload (REGRESSIONS below) and run first.
 *
 * Only the build with the injector has these tests (make check runs them in the
 * sanitizer build); the other builds compile an empty suite. To look at one failure:
 * STVM_AF_N=21 STVM_FAULT_BACKTRACE=1 build/asan/stvm-tests --filter 'alloc_failure/NAME'
 * runs only N = 21 and prints where the allocation failed.
 */
#include "helpers.h"

#ifdef STVM_FAULTS
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../vm/alloc.h"

/* ---- the harness ------------------------------------------------------------------------ */

/* One run of a workload. Green processes never assert: they note the first broken rule. */
typedef struct af_run {
    int bad_line;                    /* the first broken rule, by line */
    char bad[400];                   /* what broke it */
    int answered;                    /* calls that answered an injected failure */
    stvm_vm *vm;                     /* the workload's VM, for the invariant check */
    bool lenient;                    /* every allocation fails from N on: results and
                                        answers are not judged, only the invariants,
                                        crashes and leaks */
} af_run;

static af_run R;
static const char *current_workload;
static unsigned long current_n;

static void af_bad(int line, const char *what, int64_t rc)
{
    if (!R.bad_line && !R.lenient) {
        R.bad_line = line;
        snprintf(R.bad, sizeof R.bad, "%s answered %s", what,
                 rc < INT32_MIN ? "?" : stvm_err_name((int)rc));
    }
}

static void af_check_invariants(int line, const char *when)
{
    char why[200];
    if (R.vm && stvm_vm_check_invariants(R.vm, why, sizeof why) != STVM_OK && !R.bad_line) {
        R.bad_line = line;
        snprintf(R.bad, sizeof R.bad, "after %s: %s", when, why);
    }
}

/* A call that met an injected failure must answer STVM_ENOMEM, leave the invariants
 * whole, and work when made again (the injector fails one allocation only). */
static void af_answered(int line, const char *what, int64_t rc)
{
    R.answered++;
    if (rc != STVM_ENOMEM)
        af_bad(line, what, rc);
    af_check_invariants(line, what);
}

/* out = expr, made again once if it answered a failure the injector made during it; then
 * ok (an expression of r_, the answer) must hold. */
#define TRY_WANT(out, expr, ok)                                    \
    do {                                                           \
        unsigned long f0_ = stvm__fault_failed();                  \
        int64_t r_ = (int64_t)(expr);                              \
        if (!(ok) && stvm__fault_failed() != f0_) {                \
            af_answered(__LINE__, #expr, r_);                      \
            r_ = (int64_t)(expr);                                  \
        }                                                          \
        if (!(ok))                                                 \
            af_bad(__LINE__, #expr, r_);                           \
        (out) = r_;                                                \
    } while (0)
/* A call that must work (answer 0 or more). */
#define TRY(out, expr) TRY_WANT(out, expr, r_ >= 0)
#define DO(expr)                \
    do {                        \
        int64_t ignored_;       \
        TRY(ignored_, expr);    \
        (void)ignored_;         \
    } while (0)
/* A wait whose time must run out. */
#define TIMES_OUT(expr)                                        \
    do {                                                       \
        int64_t ignored_;                                      \
        TRY_WANT(ignored_, expr, r_ == STVM_ETIMEDOUT);        \
        (void)ignored_;                                        \
    } while (0)
/* A try that must find nothing there. */
#define FINDS_NOTHING(expr)                                    \
    do {                                                       \
        int64_t ignored_;                                      \
        TRY_WANT(ignored_, expr, r_ == STVM_EAGAIN);           \
        (void)ignored_;                                        \
    } while (0)
/* A result the workload must reach whatever failed on the way. */
#define EXPECT(cond)                                          \
    do {                                                      \
        if (!(cond) && !R.bad_line && !R.lenient) {           \
            R.bad_line = __LINE__;                            \
            snprintf(R.bad, sizeof R.bad, "expected %s", #cond); \
        }                                                     \
    } while (0)

/* A workload's VM: vm_new through TRY, so that its own allocations are failed too. */
static stvm_vm *af_vm(const stvm_config *cfg)
{
    stvm_vm *vm = NULL;
    DO(stvm_vm_create(cfg, &vm));
    R.vm = vm;
    return vm;
}

static stvm_vm *af_sim_vm(int smallint_bits)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.smallint_bits = smallint_bits;
    cfg.sim_start_us = SIM_START;
    return af_vm(&cfg);
}

/* The end of every workload: the invariants, then the VM freed. */
static void af_vm_done(stvm_vm *vm)
{
    if (!vm)
        return;
    af_check_invariants(__LINE__, "the workload");
    stvm_vm_free(vm);
    R.vm = NULL;
}

/* A crash names the workload and N that made it. */
static void af_death(void)
{
    fprintf(stderr, "alloc_failure: died in workload %s at N = %lu\n",
            current_workload ? current_workload : "?", current_n);
}

typedef void af_workload(void);

typedef struct af_tally {
    unsigned long runs, met;
    int answered, broken;
    char what[1500];                 /* the Ns that broke a rule, and why */
    size_t len;
} af_tally;

/* LeakSanitizer's check takes tens of milliseconds (it stops the process and scans it),
 * more than most runs: a workload of many allocation points is checked every
 * leak_stride-th run (and after its last), and a leak found is reported with the Ns
 * since the previous check. */
static unsigned long leak_stride = 1;

/* One run with the injector armed at n; notes a broken rule or a leak in t. Answers
 * whether a failure was injected. */
static bool af_run_once(af_workload *w, unsigned long n, bool persist, af_tally *t)
{
    memset(&R, 0, sizeof R);
    R.lenient = persist;
    current_n = n;
    stvm__fault_arm(n, persist);
    w();
    unsigned long failed = stvm__fault_failed();
    stvm__fault_arm(0, false);
    t->runs++;
    t->met += failed != 0;
    t->answered += R.answered;
    /* STVM_AF_VERBOSE=1: the Ns whose failure no call answered (survived inside) */
    if (getenv("STVM_AF_VERBOSE") && failed && !R.answered && !persist)
        fprintf(stderr, "alloc_failure: %s: N=%lu answered by no call\n", current_workload, n);
    bool check = n % leak_stride == 0 || !failed;
    int leaked = check && __lsan_do_recoverable_leak_check();
    if (R.bad_line || leaked) {
        t->broken++;
        char from[32] = "";
        if (leaked && leak_stride > 1)
            snprintf(from, sizeof from, " (or from N=%lu)",
                     n > leak_stride ? n - leak_stride + 1 : 1);
        if (t->len < sizeof t->what - 100)
            t->len += (size_t)snprintf(t->what + t->len, sizeof t->what - t->len,
                                       "%sN=%lu%s%s: %s%s", t->broken > 1 ? "; " : "", n, from,
                                       persist ? " and after" : "", leaked ? "leak " : "",
                                       R.bad_line ? R.bad : "");
    }
    return failed != 0;
}

/* Run w with N = 1, 2, ... until a run meets no injected failure (first the Ns of
 * `first`, the regressions), each failure alone; then, with persist, again with every
 * allocation failing from N on (a VM that has run out for good must still keep its
 * invariants and shut down without a leak). Fails naming every N that broke a rule. */
static void sweep(const char *name, af_workload *w, const unsigned long *first, size_t nfirst,
                  bool persist)
{
    __sanitizer_set_death_callback(af_death);
    current_workload = name;
    /* A run without faults: the allocation points, and the results every run must have. */
    memset(&R, 0, sizeof R);
    stvm__fault_arm(ULONG_MAX, false);
    w();
    unsigned long points = stvm__fault_seen();
    stvm__fault_arm(0, false);
    cr_assert_eq(R.bad_line, 0, "%s without faults: line %d: %s", name, R.bad_line, R.bad);
    cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "%s leaks without faults", name);
    leak_stride = points <= 100 ? 1 : (points + 99) / 100;

    /* STVM_AF_N=N runs only that N (with STVM_FAULT_BACKTRACE=1 the library prints
     * where it failed the allocation). */
    const char *only = getenv("STVM_AF_N");
    unsigned long one = only ? strtoul(only, NULL, 10) : 0;
    af_tally once = {0}, after = {0};
    if (one) {
        af_run_once(w, one, false, &once);
    } else {
        for (size_t i = 0; i < nfirst; i++)
            af_run_once(w, first[i], false, &once);
        for (unsigned long n = 1; af_run_once(w, n, false, &once); n++)
            ;
        for (unsigned long n = 1; persist && af_run_once(w, n, true, &after); n++)
            ;
    }
    current_workload = NULL;
    fprintf(stderr,
            "alloc_failure: %s: %lu allocation points; one failure: %lu runs (%lu met it), "
            "%d calls answered it, %d broke a rule; every one from N on: %lu runs, %d broke "
            "a rule; leaks checked every %lu run%s\n",
            name, points, once.runs, once.met, once.answered, once.broken, after.runs,
            after.broken, leak_stride, leak_stride > 1 ? "s and after the last" : "");
    cr_assert_eq(once.broken + after.broken, 0, "%s: %s%s%s", name, once.what,
                 once.broken && after.broken ? "; " : "", after.what);
}

/* ---- workload: processes ----------------------------------------------------------------
 * Spawning (plain, sized, suspended, with and without a handle), process-local values
 * (set, inherited, bound during a function), cleanups (stvm_ensure), interrupts,
 * priority changes, joins, terminating a waiting process, releasing handles. */

typedef struct procs {
    stvm_local *loc;
    stvm_semaphore *sem;
    int ran, cleaned, interrupted, inherited, bound;
} procs;

static procs P;

static void *inherit_same(void *value, stvm_process *child)
{
    (void)child;
    return value;
}

static void cleanup_counts(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
    P.cleaned++;
}

static void child_runs(stvm_vm *vm, void *arg)
{
    void *v = NULL;
    DO(stvm_local_get(vm, P.loc, &v));
    P.inherited += v == arg;
    DO(stvm_ensure(vm, cleanup_counts, NULL));
    DO(stvm_yield(vm));
    P.ran++;
}

static void interrupt_fn(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
    P.interrupted++;
}

static void waits_forever(stvm_vm *vm, void *arg)
{
    (void)arg;
    DO(stvm_ensure(vm, cleanup_counts, NULL));
    int rc = stvm_semaphore_wait(vm, P.sem);   /* terminated in here */
    af_bad(__LINE__, "a terminated wait returned", rc);
}

static void in_binding(stvm_vm *vm, void *arg)
{
    void *v = NULL;
    DO(stvm_local_get(vm, P.loc, &v));
    P.bound += v == arg;
}

static void parent(stvm_vm *vm, void *arg)
{
    (void)arg;
    static int token = 7, other = 8;
    DO(stvm_local_set(vm, P.loc, &token));
    stvm_process *h[4] = {NULL};
    DO(stvm_spawn(vm, 40, "child-a", child_runs, &token, &h[0]));
    DO(stvm_spawn_sized(vm, 40, "child-b", child_runs, &token, 64 * 1024, &h[1]));
    DO(stvm_spawn_suspended(vm, 40, "child-c", child_runs, &token, 0, &h[2]));
    DO(stvm_spawn(vm, 40, "child-d", child_runs, &token, NULL));
    DO(stvm_spawn(vm, 50, "waiter", waits_forever, NULL, &h[3]));
    DO(stvm_process_interrupt(vm, h[0], interrupt_fn, NULL));
    DO(stvm_process_set_priority(vm, h[1], 35));
    DO(stvm_process_resume(vm, h[2]));
    DO(stvm_local_during(vm, P.loc, &other, in_binding, &other));
    for (int i = 0; i < 3; i++)
        DO(stvm_process_join(vm, h[i], i == 0 ? -1 : 1000));
    DO(stvm_process_terminate(vm, h[3]));
    DO(stvm_process_release(vm, h[3]));
}

static void wl_processes(void)
{
    memset(&P, 0, sizeof P);
    stvm_vm *vm = af_sim_vm(61);
    if (!vm)
        return;
    DO(stvm_local_new(vm, STVM_LOCAL_INHERITABLE, NULL, NULL, inherit_same, &P.loc));
    DO(stvm_semaphore_new(vm, &P.sem));
    DO(stvm_spawn(vm, 40, "parent", parent, NULL, NULL));
    DO(stvm_run(vm));
    EXPECT(P.ran == 4 && P.inherited == 4 && P.cleaned == 5 && P.interrupted == 1 &&
           P.bound == 1);
    DO(stvm_local_free(vm, P.loc));
    DO(stvm_semaphore_free(vm, P.sem));
    af_vm_done(vm);
}

Test(alloc_failure, spawning_and_finishing_processes, .timeout = 120)
{
    sweep("processes", wl_processes, NULL, 0, true);
}

/* ---- workload: waits ----------------------------------------------------------------------
 * Every kind of wait, with and without a timeout that runs out: semaphores (plain,
 * timed, try, critical), mutexes (plain, timed, critical), Delays (ms and us), joins,
 * runs with a time limit, on a 31-bit VM (boxed microsecond timestamps) and the
 * microsecond Delay scheduler. */

typedef struct waits {
    stvm_semaphore *sem;
    stvm_mutex *mtx;
    int signalled, done;
} waits;

static waits W;

static void in_critical(stvm_vm *vm, void *arg)
{
    (void)arg;
    DO(stvm_delay_wait_us(vm, 300));
}

static void slow(stvm_vm *vm, void *arg)
{
    (void)arg;
    int64_t rc;
    TRY_WANT(rc, stvm_delay_wait_ms(vm, 50), r_ == STVM_EINTR);   /* cut short by the limit */
    (void)rc;
}

static void waiter_side(stvm_vm *vm, void *arg)
{
    (void)arg;
    TIMES_OUT(stvm_semaphore_wait_timeout_ms(vm, W.sem, 5));
    DO(stvm_semaphore_wait(vm, W.sem));                      /* the signaller's, at 10 ms */
    W.signalled++;
    DO(stvm_semaphore_wait_timeout_us(vm, W.sem, 20000));    /* at 11.5 ms, in time */
    W.signalled++;
    DO(stvm_mutex_critical(vm, W.mtx, in_critical, NULL));   /* before the signaller's */
    TIMES_OUT(stvm_mutex_enter_timeout_ms(vm, W.mtx, 2));    /* held 5 ms by the signaller */
    DO(stvm_mutex_enter_timeout_ms(vm, W.mtx, 100));         /* released in time */
    DO(stvm_mutex_exit(vm, W.mtx));
    TIMES_OUT(stvm_call_within_ms(vm, slow, NULL, 3));
    DO(stvm_semaphore_critical(vm, W.sem, in_critical, NULL));
    W.done++;
}

static void signaller_side(stvm_vm *vm, void *arg)
{
    stvm_process *other = arg;
    DO(stvm_delay_wait_ms(vm, 10));
    DO(stvm_semaphore_signal(vm, W.sem));
    DO(stvm_delay_wait_us(vm, 1500));
    DO(stvm_semaphore_signal(vm, W.sem));
    DO(stvm_delay_wait_us(vm, 100));
    DO(stvm_mutex_enter(vm, W.mtx));
    DO(stvm_delay_wait_ms(vm, 5));
    DO(stvm_mutex_exit(vm, W.mtx));
    TIMES_OUT(stvm_process_join(vm, other, 1));
    DO(stvm_semaphore_signal(vm, W.sem));   /* for the critical section */
    DO(stvm_process_join(vm, other, -1));   /* gives the handle back */
    W.done++;
}

static void wl_waits(void)
{
    memset(&W, 0, sizeof W);
    stvm_vm *vm = af_sim_vm(31);
    if (!vm)
        return;
    DO(stvm_semaphore_new(vm, &W.sem));
    DO(stvm_mutex_new(vm, &W.mtx));
    stvm_process *w = NULL;
    DO(stvm_spawn(vm, 40, "waiter", waiter_side, NULL, &w));
    DO(stvm_spawn(vm, 40, "signaller", signaller_side, w, NULL));
    DO(stvm_run(vm));
    EXPECT(W.signalled == 2 && W.done == 2);
    DO(stvm_semaphore_free(vm, W.sem));
    DO(stvm_mutex_free(vm, W.mtx));
    af_vm_done(vm);
}

Test(alloc_failure, every_kind_of_wait_with_and_without_timeouts, .timeout = 120)
{
    /* The Ns of two defects this workload found (in today's numbering): 15 and 16, the
     * cells of a 31-bit VM's boxed timestamps, which the timing process used to allocate
     * itself in its pass, aborting the program when it could not ("the Delay
     * scheduler's timing process cannot go on"; now reserved by the process that hands
     * it a Delay), with 18 the heap slot; 20, the watchdog of stvm_call_within_ms, whose
     * own timed wait and interrupt failed with nobody to tell and let the run go on
     * without its limit (found at N = 21: "stvm_delay_wait_ms(vm, 50) answered
     * STVM_OK"). */
    static const unsigned long regressions[] = {15, 16, 18, 20};
    sweep("waits", wl_waits, regressions, 4, true);
}

/* A call whose injected failure may also be answered alt (its documented code for the
 * failure it met: libffi's closure memory is ESYS). */
#define DO_OR(expr, alt)                                                              \
    do {                                                                              \
        unsigned long f0_ = stvm__fault_failed();                                     \
        int64_t r_ = (int64_t)(expr);                                                 \
        if (r_ < 0 && stvm__fault_failed() != f0_) {                                  \
            af_answered(__LINE__, #expr, r_ == (alt) ? STVM_ENOMEM : r_);             \
            r_ = (int64_t)(expr);                                                     \
        }                                                                             \
        if (r_ < 0)                                                                   \
            af_bad(__LINE__, #expr, r_);                                              \
    } while (0)

static stvm_vm *af_real_vm(void)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.ffi_workers = 2;
    return af_vm(&cfg);
}

/* ---- workload: queues fed by threads ----------------------------------------------------
 * A bounded queue between green processes (put, timed put that runs out, take, timed
 * take, try, peek, size, flush), and a queue open to other threads that two OS threads
 * feed (stvm_queue_put_external: its failures are the threads' to answer), read by a
 * green process; both freed with what is left handed to a function. The real clock. */

#define QTHREADS 2
#define QPER 40

typedef struct queues {
    stvm_queue *bounded, *fed;
    long sum_bounded, sum_fed;
    int taken_fed, flushed, handed;
    atomic_int threads_go;
} queues;

static queues Q;

static void *feeder(void *arg)
{
    intptr_t base = (intptr_t)arg;
    while (!atomic_load(&Q.threads_go))
        sched_yield();
    for (intptr_t i = 1; i <= QPER; i++)
        DO(stvm_queue_put_external(Q.fed, (void *)(base + i), -1));
    return NULL;
}

static void count_item(void *item, void *arg)
{
    (void)item;
    (void)arg;
    Q.handed++;
}

static void bounded_producer(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (intptr_t i = 1; i <= 12; i++)
        DO(stvm_queue_put_timeout_ms(vm, Q.bounded, (void *)i, 2000));
    DO(stvm_queue_put(vm, Q.bounded, (void *)100));   /* left for the flush */
    DO(stvm_queue_put(vm, Q.bounded, (void *)200));
    DO(stvm_queue_put(vm, Q.bounded, (void *)300));
    DO(stvm_queue_put(vm, Q.bounded, (void *)400));
    TIMES_OUT(stvm_queue_put_timeout_ms(vm, Q.bounded, (void *)500, 3));   /* full */
}

static void bounded_consumer(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (int i = 0; i < 12; i++) {
        void *item = NULL;
        if (i % 3 == 0)
            DO(stvm_queue_take(vm, Q.bounded, &item));
        else
            DO(stvm_queue_take_timeout_ms(vm, Q.bounded, 2000, &item));
        Q.sum_bounded += (intptr_t)item;
        if (i % 4 == 0)
            DO(stvm_yield(vm));
    }
    DO(stvm_delay_wait_ms(vm, 10));   /* the producer fills it and times out */
    void *peeked = NULL;
    DO(stvm_queue_peek(vm, Q.bounded, &peeked));
    EXPECT(peeked == (void *)100);
    EXPECT(stvm_queue_size(vm, Q.bounded) == 4);
    int64_t n;
    TRY(n, stvm_queue_flush(vm, Q.bounded, NULL, NULL));
    Q.flushed = (int)n;
    void *none;
    FINDS_NOTHING(stvm_queue_try_take(vm, Q.bounded, &none));
}

static void fed_reader(stvm_vm *vm, void *arg)
{
    (void)arg;
    atomic_store(&Q.threads_go, 1);
    for (int i = 0; i < QTHREADS * QPER - 5; i++) {   /* the last 5 stay for the free */
        void *item = NULL;
        DO(stvm_queue_take_timeout_ms(vm, Q.fed, 10000, &item));
        Q.sum_fed += (intptr_t)item;
        Q.taken_fed++;
    }
}

static void wl_queues(void)
{
    memset(&Q, 0, sizeof Q);
    stvm_vm *vm = af_real_vm();
    if (!vm)
        return;
    DO(stvm_queue_new(vm, 4, &Q.bounded));
    DO(stvm_queue_new(vm, 0, &Q.fed));
    DO(stvm_queue_open_external(vm, Q.fed));
    pthread_t t[QTHREADS];
    for (int i = 0; i < QTHREADS; i++)
        pthread_create(&t[i], NULL, feeder, (void *)(intptr_t)(1000 * (i + 1)));
    DO(stvm_spawn(vm, 40, "producer", bounded_producer, NULL, NULL));
    DO(stvm_spawn(vm, 40, "consumer", bounded_consumer, NULL, NULL));
    DO(stvm_spawn(vm, 45, "reader", fed_reader, NULL, NULL));
    DO(stvm_run(vm));
    atomic_store(&Q.threads_go, 1);
    for (int i = 0; i < QTHREADS; i++)
        pthread_join(t[i], NULL);
    EXPECT(Q.sum_bounded == 78 && Q.flushed == 4);
    EXPECT(Q.taken_fed == QTHREADS * QPER - 5);
    DO(stvm_queue_free(vm, Q.bounded, count_item, NULL));
    DO(stvm_queue_free(vm, Q.fed, count_item, NULL));
    long all = 0;
    for (int i = 0; i < QTHREADS; i++)
        all += 1000L * (i + 1) * QPER + QPER * (QPER + 1) / 2;
    EXPECT(Q.handed == 5);
    (void)all;
    af_vm_done(vm);
}

Test(alloc_failure, queues_fed_by_threads, .timeout = 240)
{
    sweep("queues", wl_queues, NULL, 0, false);
}

/* ---- workload: monitors -------------------------------------------------------------------
 * Pharo's Monitor: enter (again), try, timed enter, critical, waits on the default and a
 * named queue (plain, timed that runs out, while a condition holds), signal, signal_all. */

typedef struct mon {
    stvm_monitor *m;
    int items, produced, consumed, woken;
} mon;

static mon M;

static bool nothing_there(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
    return M.items == 0;
}

static void mon_consumer(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        DO(stvm_monitor_enter(vm, M.m));
        DO(stvm_monitor_wait_while(vm, M.m, nothing_there, NULL));
        M.items--;
        M.consumed++;
        DO(stvm_monitor_exit(vm, M.m));
    }
    DO(stvm_monitor_enter(vm, M.m));
    DO(stvm_monitor_wait_on(vm, M.m, 3));     /* the named queue: signal_all */
    M.woken++;
    DO(stvm_monitor_exit(vm, M.m));
}

static void produce(stvm_vm *vm, void *arg)
{
    (void)arg;
    M.items++;
    M.produced++;
    DO(stvm_monitor_signal(vm, M.m));
}

static void mon_producer(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        DO(stvm_monitor_critical(vm, M.m, produce, NULL));
        DO(stvm_delay_wait_ms(vm, 1));
    }
    DO(stvm_monitor_enter(vm, M.m));
    DO(stvm_monitor_enter(vm, M.m));          /* again: depth 2 */
    TIMES_OUT(stvm_monitor_wait_timeout_ms(vm, M.m, 2));
    EXPECT(stvm_monitor_depth(vm, M.m) == 2);
    DO(stvm_monitor_exit(vm, M.m));
    DO(stvm_monitor_exit(vm, M.m));
    DO(stvm_delay_wait_ms(vm, 1));
    DO(stvm_monitor_enter_timeout_ms(vm, M.m, 100));
    DO(stvm_monitor_signal_all_on(vm, M.m, 3));
    DO(stvm_monitor_exit(vm, M.m));
    int64_t got;
    TRY(got, stvm_monitor_try_enter(vm, M.m));
    if (got == STVM_OK)
        DO(stvm_monitor_exit(vm, M.m));
}

static void wl_monitor(void)
{
    memset(&M, 0, sizeof M);
    stvm_vm *vm = af_sim_vm(61);
    if (!vm)
        return;
    DO(stvm_monitor_new(vm, &M.m));
    DO(stvm_spawn(vm, 40, "consumer", mon_consumer, NULL, NULL));
    DO(stvm_spawn(vm, 40, "producer", mon_producer, NULL, NULL));
    DO(stvm_run(vm));
    EXPECT(M.produced == 3 && M.consumed == 3 && M.woken == 1);
    DO(stvm_monitor_free(vm, M.m));
    af_vm_done(vm);
}

Test(alloc_failure, monitors, .timeout = 120)
{
    sweep("monitor", wl_monitor, NULL, 0, true);
}

/* ---- workload: Delay objects --------------------------------------------------------------
 * Delays made once and used again (wait, schedule, unschedule, the time to go, expiry),
 * timeout semaphores, and their names, on a 31-bit VM with the microsecond scheduler. */

typedef struct delays {
    stvm_delay *d1, *d2, *timeout;
    stvm_semaphore *sem;
    int waited, expired;
} delays;

static delays D;

static void delay_user(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        DO(stvm_delay_wait(vm, D.d1));
        D.waited++;
    }
    DO(stvm_delay_schedule(vm, D.d2));
    int64_t togo = -1;
    DO(stvm_delay_us_to_go(vm, D.d2, &togo));
    EXPECT(togo > 0);
    DO(stvm_delay_unschedule(vm, D.d2));
    DO(stvm_delay_schedule(vm, D.d2));
    DO(stvm_delay_wait_ms(vm, 10));
    D.expired += stvm_delay_is_expired(vm, D.d2) == 1;
    DO(stvm_delay_timeout_semaphore_ms(vm, D.sem, 3, &D.timeout));
    DO(stvm_semaphore_wait(vm, D.sem));
    D.expired++;
}

static void wl_delays(void)
{
    memset(&D, 0, sizeof D);
    stvm_vm *vm = af_sim_vm(31);
    if (!vm)
        return;
    DO(stvm_delay_new_ms(vm, 2, &D.d1));
    DO(stvm_delay_new_us(vm, 1500, &D.d2));
    DO(stvm_delay_set_name(vm, D.d1, "tick"));
    DO(stvm_semaphore_new(vm, &D.sem));
    DO(stvm_spawn(vm, 40, "user", delay_user, NULL, NULL));
    DO(stvm_run(vm));
    EXPECT(D.waited == 3 && D.expired == 2);
    char name[16] = "";
    DO(stvm_delay_get_name(vm, D.d1, name, sizeof name));
    EXPECT(strcmp(name, "tick") == 0);
    DO(stvm_delay_free(vm, D.d1));
    DO(stvm_delay_free(vm, D.d2));
    if (D.timeout)
        DO(stvm_delay_free(vm, D.timeout));
    DO(stvm_semaphore_free(vm, D.sem));
    af_vm_done(vm);
}

Test(alloc_failure, delay_objects, .timeout = 120)
{
    sweep("delays", wl_delays, NULL, 0, true);
}

/* ---- workload: sockets and streams over loopback ----------------------------------------
 * A TCP listener with a handler process per connection serving lines through a stream,
 * clients connecting by address and by name (looked up on the worker threads), a Unix
 * domain socket pair of processes, stvm_fd_wait on a pipe, and the sockets' addresses.
 * The real clock; every wait bounded. */

#define CLIENTS 3

typedef struct net {
    stvm_socket *listener, *ulistener;
    int port;
    char upath[64];
    int pipe[2];
    int answered, served, unix_ok, piped;
} net;

static net N;

static void line_server(stvm_vm *vm, void *arg)
{
    stvm_socket *c = arg;
    stvm_stream *st = NULL;
    DO(stvm_stream_open(vm, c, 5000, &st));
    char line[64];
    int64_t n;
    while (st && (n = stvm_stream_read_line(vm, st, line, sizeof line)) >= 0) {
        char out[80];
        int len = snprintf(out, sizeof out, "echo %s\n", line);
        DO(stvm_stream_write(vm, st, out, (size_t)len));
        DO(stvm_stream_flush(vm, st));
        N.served++;
    }
    if (st)
        DO(stvm_stream_close(vm, st));   /* the socket stays open */
    DO(stvm_socket_close(vm, c));
}

static void acceptor(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (int i = 0; i < CLIENTS; i++) {
        stvm_socket *c = NULL;
        DO(stvm_socket_accept(vm, N.listener, 5000, &c));
        if (!c)
            return;
        char peer[64];
        DO(stvm_socket_peer_address(vm, c, peer, sizeof peer, NULL));
        DO(stvm_spawn(vm, 40, "line server", line_server, c, NULL));
    }
}

static void client(stvm_vm *vm, void *arg)
{
    const char *host = arg;
    stvm_socket *s = NULL;
    DO(stvm_tcp_connect(vm, host, N.port, 5000, &s));
    if (!s)
        return;
    static const char req[] = "hello\n";
    int64_t n;
    TRY(n, stvm_socket_send(vm, s, req, sizeof req - 1, 5000));
    char buf[64];
    TRY(n, stvm_socket_recv(vm, s, buf, sizeof buf, 5000));
    N.answered += n == 11 && memcmp(buf, "echo hello\n", 11) == 0;
    DO(stvm_socket_shutdown(vm, s, SHUT_WR));
    TRY_WANT(n, stvm_socket_recv(vm, s, buf, sizeof buf, 5000), r_ == STVM_EEOF);
    DO(stvm_socket_close(vm, s));
}

static void unix_side(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_socket *s = NULL, *c = NULL;
    DO(stvm_unix_connect(vm, N.upath, 5000, &s));
    DO(stvm_socket_accept(vm, N.ulistener, 5000, &c));
    if (!s || !c)
        return;
    int64_t n;
    TRY(n, stvm_socket_send(vm, s, "x", 1, 5000));
    char b;
    TRY(n, stvm_socket_recv(vm, c, &b, 1, 5000));
    N.unix_ok = n == 1 && b == 'x';
    DO(stvm_socket_close(vm, s));
    DO(stvm_socket_close(vm, c));
}

static void pipe_reader(stvm_vm *vm, void *arg)
{
    (void)arg;
    int64_t ev;
    TRY(ev, stvm_fd_wait(vm, N.pipe[0], STVM_IO_READ, 5000));
    char b;
    N.piped = ev == STVM_IO_READ && read(N.pipe[0], &b, 1) == 1;
}

static void pipe_writer(stvm_vm *vm, void *arg)
{
    (void)arg;
    DO(stvm_delay_wait_ms(vm, 2));
    N.piped += write(N.pipe[1], "p", 1) == 1 ? 0 : -10;
}

static void wl_sockets(void)
{
    memset(&N, 0, sizeof N);
    N.pipe[0] = N.pipe[1] = -1;
    stvm_vm *vm = af_real_vm();
    if (!vm)
        return;
    DO(stvm_tcp_listen(vm, "127.0.0.1", 0, 16, &N.listener));
    snprintf(N.upath, sizeof N.upath, "/tmp/stvm-af-%d.sock", (int)getpid());
    unlink(N.upath);
    DO(stvm_unix_listen(vm, N.upath, 4, &N.ulistener));
    if (N.listener)
        N.port = stvm_socket_port(N.listener);
    if (pipe2(N.pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        af_bad(__LINE__, "pipe2", STVM_ESYS);
    DO(stvm_spawn(vm, 40, "acceptor", acceptor, NULL, NULL));
    DO(stvm_spawn(vm, 40, "client 1", client, "127.0.0.1", NULL));
    DO(stvm_spawn(vm, 40, "client 2", client, "127.0.0.1", NULL));
    DO(stvm_spawn(vm, 40, "client 3", client, "localhost", NULL));
    DO(stvm_spawn(vm, 40, "unix", unix_side, NULL, NULL));
    DO(stvm_spawn(vm, 40, "pipe reader", pipe_reader, NULL, NULL));
    DO(stvm_spawn(vm, 40, "pipe writer", pipe_writer, NULL, NULL));
    DO(stvm_run(vm));
    EXPECT(N.answered == CLIENTS && N.served == CLIENTS && N.unix_ok && N.piped == 1);
    if (N.listener)
        DO(stvm_socket_close(vm, N.listener));
    if (N.ulistener)
        DO(stvm_socket_close(vm, N.ulistener));
    unlink(N.upath);
    close(N.pipe[0]);
    close(N.pipe[1]);
    af_vm_done(vm);
}

Test(alloc_failure, sockets_and_streams_over_loopback, .timeout = 240)
{
    sweep("sockets", wl_sockets, NULL, 0, false);
}

/* ---- workload: tracing --------------------------------------------------------------------
 * A ring that records a run of named objects and processes, a hook, the text and JSON
 * writers. */

typedef struct tr {
    stvm_semaphore *sem;
    int hooked;
    char json[64];
} tr;

static tr T;

static void hook(stvm_vm *vm, const stvm_trace_event *e, void *arg)
{
    (void)vm;
    (void)e;
    (void)arg;
    T.hooked++;
}

static void traced_worker(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        DO(stvm_semaphore_signal(vm, T.sem));
        DO(stvm_delay_wait_ms(vm, 1));
    }
}

static void traced_waiter(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        DO(stvm_semaphore_wait(vm, T.sem));
}

static void wl_trace(void)
{
    memset(&T, 0, sizeof T);
    stvm_vm *vm = af_sim_vm(61);
    if (!vm)
        return;
    DO(stvm_semaphore_new(vm, &T.sem));
    DO(stvm_semaphore_set_name(vm, T.sem, "frames"));
    DO(stvm_spawn(vm, 41, "waiter", traced_waiter, NULL, NULL));
    DO(stvm_trace_start(vm, 256));
    /* What existed at the start is named in the ring (a start that could not name it
     * all used to succeed, silently without those names). */
    char idle[32] = "", waiter[32] = "";
    EXPECT(stvm_trace_process_name(vm, 1, idle, sizeof idle) == STVM_OK &&
           stvm_trace_process_name(vm, 2, waiter, sizeof waiter) == STVM_OK &&
           strcmp(idle, "Idle Process#1") == 0 && strcmp(waiter, "waiter#2") == 0);
    DO(stvm_trace_set_hook(vm, hook, NULL));
    DO(stvm_spawn(vm, 40, "worker", traced_worker, NULL, NULL));
    DO(stvm_run(vm));
    EXPECT(T.hooked > 10 && stvm_trace_count(vm) > 10);
    FILE *out = fopen("/dev/null", "w");
    DO(stvm_trace_write_text(vm, out));
    fclose(out);
    snprintf(T.json, sizeof T.json, "/tmp/stvm-af-%d.json", (int)getpid());
    DO(stvm_trace_write_json(vm, T.json));
    unlink(T.json);
    DO(stvm_trace_stop(vm));
    DO(stvm_semaphore_free(vm, T.sem));
    af_vm_done(vm);
}

Test(alloc_failure, tracing, .timeout = 120)
{
    /* N = 16: a start whose names of the living processes found no memory succeeded
     * without them (the ring's first name; now ENOMEM, the old ring kept). */
    static const unsigned long regressions[] = {16, 17};
    sweep("trace", wl_trace, regressions, 2, true);
}

/* ---- workload: FFI calls ------------------------------------------------------------------
 * Callouts on the VM's thread, on the pool and on a named worker, a boxed result, and a
 * callback (a libffi closure) called from qsort on the VM's thread. */

typedef struct ffi {
    int compared;
    long sum;
} ffi;

static ffi F;

/* A SmallInteger (small values never allocate). */
static stvm_oop si(stvm_vm *vm, int64_t v)
{
    stvm_oop o = STVM_NIL;
    stvm_int_from_i64(vm, v, &o);
    return o;
}

static int64_t add3(int64_t a, int64_t b, int64_t c)
{
    return a + b + c;
}

static int compare(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs, stvm_oop *result)
{
    (void)arg;
    (void)nargs;
    void *pa = NULL, *pb = NULL;
    if (stvm_oop_ptr(vm, args[0], &pa) || stvm_oop_ptr(vm, args[1], &pb))
        return STVM_EINVAL;
    int a = *(const int *)pa, b = *(const int *)pb;
    F.compared++;
    *result = si(vm, (a > b) - (a < b));
    return STVM_OK;
}

static void ffi_user(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_ffi_function *fadd = NULL, *fqsort = NULL;
    stvm_ffi_worker *w = NULL;
    stvm_ffi_callback *cb = NULL;
    void *cfn = NULL;
    DO(stvm_ffi_function_at(vm, (void *)add3, "i64(i64,i64,i64)", &fadd));
    DO(stvm_ffi_function_new(vm, NULL, "qsort", "void(ptr,size,size,ptr)", &fqsort));
    DO(stvm_ffi_worker_new(vm, "adder", &w));
    DO_OR(stvm_ffi_callback_new(vm, "i32(ptr,ptr)", compare, NULL, &cb, &cfn), STVM_ESYS);
    if (!fadd || !fqsort || !w || !cb)
        return;
    stvm_oop args[3] = {si(vm, 1), si(vm, 2), 0};
    stvm_oop r = STVM_NIL;
    DO(stvm_int_from_i64(vm, INT64_C(1) << 40, &args[2]));   /* boxed on a 31-bit VM */
    DO(stvm_ffi_call(vm, fadd, args, 3, &r));
    F.sum += r != STVM_NIL;
    stvm_oop_release(vm, r);
    r = STVM_NIL;
    DO(stvm_ffi_call_threaded(vm, fadd, args, 3, &r));
    F.sum += r != STVM_NIL;
    stvm_oop_release(vm, r);
    r = STVM_NIL;
    DO(stvm_ffi_call_on(vm, w, fadd, args, 3, &r));
    F.sum += r != STVM_NIL;
    stvm_oop_release(vm, r);
    stvm_oop_release(vm, args[2]);
    int data[5] = {5, 3, 4, 1, 2};
    stvm_oop qargs[4] = {STVM_NIL, si(vm, 5),
                         si(vm, (int64_t)sizeof(int)), STVM_NIL};
    DO(stvm_ptr_oop(vm, data, &qargs[0]));
    DO(stvm_ptr_oop(vm, cfn, &qargs[3]));
    if (qargs[0] != STVM_NIL && qargs[3] != STVM_NIL)
        DO(stvm_ffi_call(vm, fqsort, qargs, 4, NULL));
    EXPECT(data[0] == 1 && data[4] == 5);
    stvm_oop_release(vm, qargs[0]);
    stvm_oop_release(vm, qargs[3]);
    stvm_ffi_callback_free(vm, cb);
    DO(stvm_ffi_worker_free(vm, w));
    stvm_ffi_function_free(vm, fadd);
    stvm_ffi_function_free(vm, fqsort);
}

static void wl_ffi(void)
{
    memset(&F, 0, sizeof F);
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.smallint_bits = 31;
    cfg.ffi_workers = 2;
    stvm_vm *vm = af_vm(&cfg);
    if (!vm)
        return;
    DO(stvm_spawn(vm, 40, "ffi user", ffi_user, NULL, NULL));
    DO(stvm_run(vm));
    EXPECT(F.sum == 3 && F.compared > 0);
    af_vm_done(vm);
}

Test(alloc_failure, ffi_calls_and_callbacks, .timeout = 240)
{
    /* N = 20 to 24: after a failure answered past the first callback, the invariants
     * found the callback process (priority 70) runnable above the caller: the first
     * callback only made it ready (test_ffi.c has the plain case). */
    static const unsigned long regressions[] = {20, 21, 22, 23, 24};
    sweep("ffi", wl_ffi, regressions, 5, true);
}

/* ---- workload: names and the listing ---------------------------------------------------
 * Names on every kind of object (and their internal semaphores), the process listing
 * with what each waits on, the blocked report, with processes waiting on each kind. */

typedef struct names {
    stvm_semaphore *sem;
    stvm_mutex *mtx;
    stvm_queue *q;
    stvm_monitor *m;
    stvm_delay *d;
    int listed;
} names;

static names NM;

static void sleeper(stvm_vm *vm, void *arg)
{
    (void)arg;
    DO(stvm_semaphore_wait_timeout_ms(vm, NM.sem, 50));
}

static void queue_waiter(stvm_vm *vm, void *arg)
{
    (void)arg;
    void *item;
    TIMES_OUT(stvm_queue_take_timeout_ms(vm, NM.q, 20, &item));
}

static void lister(stvm_vm *vm, void *arg)
{
    (void)arg;
    DO(stvm_delay_wait_ms(vm, 1));
    stvm_process *list[16];
    size_t count = 0;
    DO(stvm_vm_processes(vm, list, 16, &count));
    for (size_t i = 0; i < count && i < 16; i++) {
        stvm_process_info info;
        DO(stvm_process_get_info(vm, list[i], &info));
        NM.listed += info.wait_name != NULL;
    }
    char report[2048];
    DO(stvm_vm_blocked_report(vm, report, sizeof report));
    DO(stvm_semaphore_signal(vm, NM.sem));
}

static void wl_names(void)
{
    memset(&NM, 0, sizeof NM);
    stvm_vm *vm = af_sim_vm(61);
    if (!vm)
        return;
    DO(stvm_semaphore_new(vm, &NM.sem));
    DO(stvm_mutex_new(vm, &NM.mtx));
    DO(stvm_queue_new(vm, 2, &NM.q));
    DO(stvm_monitor_new(vm, &NM.m));
    DO(stvm_delay_new_ms(vm, 5, &NM.d));
    DO(stvm_semaphore_set_name(vm, NM.sem, "go"));
    DO(stvm_mutex_set_name(vm, NM.mtx, "lock"));
    DO(stvm_queue_set_name(vm, NM.q, "frames"));
    DO(stvm_monitor_set_name(vm, NM.m, "buffer"));
    DO(stvm_delay_set_name(vm, NM.d, "tick"));
    DO(stvm_semaphore_set_name(vm, NM.sem, "go, renamed"));
    DO(stvm_spawn(vm, 40, "sleeper", sleeper, NULL, NULL));
    DO(stvm_spawn(vm, 40, "queue waiter", queue_waiter, NULL, NULL));
    DO(stvm_spawn(vm, 40, "lister", lister, NULL, NULL));
    DO(stvm_run(vm));
    EXPECT(NM.listed == 2);
    char name[32] = "";
    DO(stvm_queue_get_name(vm, NM.q, name, sizeof name));
    EXPECT(strcmp(name, "frames") == 0);
    DO(stvm_semaphore_free(vm, NM.sem));
    DO(stvm_mutex_free(vm, NM.mtx));
    DO(stvm_queue_free(vm, NM.q, NULL, NULL));
    DO(stvm_monitor_free(vm, NM.m));
    DO(stvm_delay_free(vm, NM.d));
    af_vm_done(vm);
}

Test(alloc_failure, names_and_the_process_listing, .timeout = 120)
{
    sweep("names", wl_names, NULL, 0, true);
}

/* ---- workload: growth ---------------------------------------------------------------------
 * Every table past its first size, where a failed growth must leave it as it was: 300
 * processes (the object set past 256, the stack free lists, the trace's names past 16,
 * each with a name), each in a timed wait at once (the Delay heap past 256), half of them
 * signalled early (their cancelled entries: the dead set past 128 numbers), 300 external
 * slots (a second chunk of the table) and 40 names (the names table past 16). */

#define GROWN 300

typedef struct growth {
    stvm_semaphore *sem;
    stvm_semaphore *ext[GROWN];
    int idx[GROWN];
    int signalled, timed_out;
} growth;

static growth G;

static void grower(stvm_vm *vm, void *arg)
{
    intptr_t i = (intptr_t)arg;
    int64_t rc;
    TRY_WANT(rc, stvm_semaphore_wait_timeout_ms(vm, G.sem, 10 + i % 7),
             r_ == STVM_OK || r_ == STVM_ETIMEDOUT);
    G.signalled += rc == STVM_OK;
    G.timed_out += rc == STVM_ETIMEDOUT;
}

static void signaller(stvm_vm *vm, void *arg)
{
    (void)arg;
    DO(stvm_delay_wait_ms(vm, 1));
    for (int i = 0; i < GROWN / 2; i++)
        DO(stvm_semaphore_signal(vm, G.sem));
}

static void wl_growth(void)
{
    memset(&G, 0, sizeof G);
    stvm_vm *vm = af_sim_vm(61);
    if (!vm)
        return;
    DO(stvm_trace_start(vm, 64));
    DO(stvm_semaphore_new(vm, &G.sem));
    for (int i = 0; i < GROWN; i++) {
        DO(stvm_semaphore_new(vm, &G.ext[i]));
        if (G.ext[i])
            DO(stvm_external_register(vm, G.ext[i], &G.idx[i]));
        if (G.ext[i] && i < 40) {
            char name[16];
            snprintf(name, sizeof name, "ext %d", i);
            DO(stvm_semaphore_set_name(vm, G.ext[i], name));
        }
    }
    for (intptr_t i = 0; i < GROWN; i++) {
        char name[16];
        snprintf(name, sizeof name, "grower %d", (int)i);
        DO(stvm_spawn(vm, 40, name, grower, (void *)i, NULL));
    }
    DO(stvm_spawn(vm, 30, "signaller", signaller, NULL, NULL));
    DO(stvm_run(vm));
    EXPECT(G.signalled == GROWN / 2 && G.timed_out == GROWN / 2);
    for (int i = 0; i < GROWN; i++) {
        if (G.idx[i])
            DO(stvm_external_unregister(vm, G.idx[i]));
        if (G.ext[i])
            DO(stvm_semaphore_free(vm, G.ext[i]));
    }
    DO(stvm_semaphore_free(vm, G.sem));
    DO(stvm_trace_stop(vm));
    af_vm_done(vm);
}

Test(alloc_failure, every_table_past_its_first_size, .timeout = 240)
{
    sweep("growth", wl_growth, NULL, 0, true);
}

#else
/* The build without the injector: no tests here (ISO C wants a declaration). */
typedef int alloc_failure_needs_stvm_faults;
#endif
