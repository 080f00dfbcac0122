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
} af_run;

static af_run R;
static const char *current_workload;
static unsigned long current_n;

static void af_bad(int line, const char *what, int64_t rc)
{
    if (!R.bad_line) {
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
/* A result the workload must reach whatever failed on the way. */
#define EXPECT(cond)                                          \
    do {                                                      \
        if (!(cond) && !R.bad_line) {                         \
            R.bad_line = __LINE__;                            \
            snprintf(R.bad, sizeof R.bad, "expected %s", #cond); \
        }                                                     \
    } while (0)

/* A workload's VM: vm_new through TRY, so that its own allocations are failed too. */
static stvm_vm *af_vm(const stvm_config *cfg)
{
    stvm_vm *vm = NULL;
    DO(stvm_vm_new(&vm, cfg));
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

/* Run w with N = 1, 2, ... until a run meets no injected failure (first the Ns of
 * `first`, the regressions); fail naming every N that broke a rule. */
static void sweep(const char *name, af_workload *w, const unsigned long *first, size_t nfirst)
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

    /* STVM_AF_N=N runs only that N (with STVM_FAULT_BACKTRACE=1 the library prints
     * where it failed the allocation). */
    const char *only = getenv("STVM_AF_N");
    unsigned long one = only ? strtoul(only, NULL, 10) : 0;
    if (one) {
        first = &one;
        nfirst = 1;
    }
    char broken[1500] = "";
    size_t blen = 0;
    int nbroken = 0, answered = 0;
    unsigned long runs = 0, met = 0;
    for (size_t i = 0; i <= nfirst && !(one && i == nfirst); i++) {
        for (unsigned long n = i < nfirst ? first[i] : 1;; n++) {
            memset(&R, 0, sizeof R);
            current_n = n;
            stvm__fault_arm(n, false);
            w();
            unsigned long failed = stvm__fault_failed();
            stvm__fault_arm(0, false);
            runs++;
            met += failed != 0;
            answered += R.answered;
            int leaked = __lsan_do_recoverable_leak_check();
            if (R.bad_line || leaked) {
                nbroken++;
                if (blen < sizeof broken - 100)
                    blen += (size_t)snprintf(broken + blen, sizeof broken - blen,
                                             "%sN=%lu: %s%s", nbroken > 1 ? "; " : "", n,
                                             leaked ? "leak " : "", R.bad_line ? R.bad : "");
            }
            if (i < nfirst || !failed)
                break;
        }
    }
    current_workload = NULL;
    fprintf(stderr,
            "alloc_failure: %s: %lu allocation points, %lu runs (%lu met their failure), "
            "%d calls answered one, %d broke a rule\n",
            name, points, runs, met, answered, nbroken);
    cr_assert_eq(nbroken, 0, "%s: %s", name, broken);
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
    sweep("processes", wl_processes, NULL, 0);
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
    TIMES_OUT(stvm_run_within_ms(vm, 3, slow, NULL));
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
    sweep("waits", wl_waits, NULL, 0);
}

#else
/* The build without the injector: no tests here (ISO C wants a declaration). */
typedef int alloc_failure_needs_stvm_faults;
#endif
