/*
 * Semaphores (primitives 85/86 through the C API): excess signals, FIFO waiters,
 * signalling from the host, preemption by a signal, freeing, counters.
 *
 * Green processes record what they see in their test's scenario struct (see helpers.h);
 * the host asserts after stvm_run returns.
 */
#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(semaphore, .timeout = 30);

/* ---- excess signals ----------------------------------------------------------------- */

typedef struct consumer {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    int wait_rc[3];              /* three waits on excess signals */
    int64_t excess_after[3];     /* the excess count after each of them */
    uint64_t switches;           /* during the three */
    int blocked_wait_rc;         /* a fourth wait, with no signal left */
    int bad_line;
} consumer;

static void consume_three(stvm_vm *vm, void *arg)
{
    consumer *s = arg;
    uint64_t before = switches(vm);
    for (int i = 0; i < 3; i++) {
        s->wait_rc[i] = stvm_semaphore_wait(vm, s->sem);
        s->excess_after[i] = stvm_semaphore_excess(vm, s->sem);
    }
    s->switches = switches(vm) - before;
    trace_add(&s->log, 1);
    s->blocked_wait_rc = stvm_semaphore_wait(vm, s->sem);   /* nothing left: blocks for good */
    trace_add(&s->log, 2);
}

Test(semaphore, excess_signals_are_counted_and_consumed_one_per_wait)
{
    consumer s = {.vm = vm_make(NULL)};
    s.sem = sem_make(s.vm);
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.sem), 0);
    for (int i = 1; i <= 3; i++) {
        cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
        cr_assert_eq(stvm_semaphore_excess(s.vm, s.sem), i);
    }
    spawn(s.vm, 40, "consumer", consume_three, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(s.wait_rc[i], STVM_OK);
        cr_assert_eq(s.excess_after[i], 2 - i, "excess after wait %d is %lld", i,
                     (long long)s.excess_after[i]);
    }
    cr_assert_eq(s.switches, 0, "waits with excess signals never switch");
    static const int want[] = {1};
    trace_expect(&s.log, want, 1);
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.sem), 0);
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.sem), 0, "the signal went to the waiter");
    run_ok(s.vm);
    static const int want2[] = {1, 2};
    trace_expect(&s.log, want2, 2);
    cr_assert_eq(s.blocked_wait_rc, STVM_OK);
    SCENARIO_DONE(&s);
}

Test(semaphore, a_million_excess_signals_are_all_counted)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *sem = sem_make(vm);
    for (int i = 0; i < 1000000; i++)
        stvm_semaphore_signal(vm, sem);
    cr_assert_eq(stvm_semaphore_excess(vm, sem), 1000000);
    vm_done(vm);
}

/* ---- FIFO ------------------------------------------------------------------------- */

/* Waiters on one semaphore (wait_and_log, a failed wait noted in bad_line) that log
 * their tags. */
typedef struct queue {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    int signal_rc[3];   /* the controller's signals */
    int bad_line;
} queue;

static logged_wait queued(queue *q, int tag)
{
    return (logged_wait){.sem = q->sem, .log = &q->log, .tag = tag, .bad_line = &q->bad_line};
}

Test(semaphore, waiters_of_one_priority_wake_in_fifo_order)
{
    queue q = {.vm = vm_make(NULL)};
    q.sem = sem_make(q.vm);
    logged_wait a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = queued(&q, i);
        spawn(q.vm, 40, "waiter", wait_and_log, &a[i]);
    }
    cr_assert_eq(stvm_run(q.vm), STVM_EDEADLOCK);
    cr_assert_eq(q.log.n, 0);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(stvm_semaphore_signal(q.vm, q.sem), STVM_OK);
    run_ok(q.vm);
    static const int want[] = {0, 1, 2, 3, 4, 5, 6, 7};
    trace_expect(&q.log, want, 8);
    cr_assert_eq(stvm_semaphore_excess(q.vm, q.sem), 0);
    SCENARIO_DONE(&q);
}

/* Waiters of priorities 35, 45, 40 queue in that order (each spawned by a lower
 * controller, so each waits before the next exists); three signals wake them in
 * arrival order, not by priority. */
static void fifo_controller(stvm_vm *vm, void *arg)
{
    queue *q = arg;
    static logged_wait a[3];
    static const int prios[3] = {35, 45, 40};
    for (int i = 0; i < 3; i++) {
        a[i] = queued(q, prios[i]);
        GCHECK(q, stvm_spawn(vm, prios[i], "waiter", wait_and_log, &a[i], NULL) == STVM_OK);
    }
    trace_add(&q->log, 1);
    for (int i = 0; i < 3; i++) {
        q->signal_rc[i] = stvm_semaphore_signal(vm, q->sem);   /* each waiter preempts */
        trace_add(&q->log, 2 + i);
    }
}

Test(semaphore, waiters_wake_in_arrival_order_whatever_their_priority)
{
    queue q = {.vm = vm_make(NULL)};
    q.sem = sem_make(q.vm);
    spawn(q.vm, 20, "controller", fifo_controller, &q);
    run_ok(q.vm);
    static const int want[] = {1, 35, 2, 45, 3, 40, 4};
    trace_expect(&q.log, want, 7);
    SCENARIO_DONE(&q);
}

/* Waiters (wait_and_log) and a process that signals their semaphore. */
typedef struct signalled {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    int signal_rc;
    int bad_line;
} signalled;

static void single_signaller(stvm_vm *vm, void *arg)
{
    signalled *s = arg;
    s->signal_rc = stvm_semaphore_signal(vm, s->sem);
    trace_add(&s->log, 3);
}

Test(semaphore, one_signal_wakes_only_the_first_waiter)
{
    signalled s = {.vm = vm_make(NULL)};
    s.sem = sem_make(s.vm);
    logged_wait first = {.sem = s.sem, .log = &s.log, .tag = 1};
    logged_wait second_wait = {.sem = s.sem, .log = &s.log, .tag = 2};
    spawn(s.vm, 50, "first", wait_and_log, &first);
    stvm_process *second = spawn(s.vm, 50, "second", wait_and_log, &second_wait);
    spawn(s.vm, 30, "signaller", single_signaller, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    static const int want[] = {1, 3};
    trace_expect(&s.log, want, 2);
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(s.vm, second, &info), STVM_OK);
    cr_assert_eq(info.state, STVM_PROCESS_WAITING);
    cr_assert_eq(info.waiting_object, (const void *)s.sem);
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.sem), 0);
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
    run_ok(s.vm);
    SCENARIO_DONE(&s);
}

/* ---- signal from the host ----------------------------------------------------------- */

typedef struct one_wait {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    int wait_rc;
    uint64_t switches;   /* during the wait */
    int bad_line;
} one_wait;

static void wait_once(stvm_vm *vm, void *arg)
{
    one_wait *s = arg;
    uint64_t before = switches(vm);
    s->wait_rc = stvm_semaphore_wait(vm, s->sem);
    s->switches = switches(vm) - before;
    trace_add(&s->log, 1);
}

Test(semaphore, a_signal_from_the_host_before_run_is_kept_for_the_first_wait)
{
    one_wait s = {.vm = vm_make(NULL)};
    s.sem = sem_make(s.vm);
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
    spawn(s.vm, 40, "waiter", wait_once, &s);
    run_ok(s.vm);
    cr_assert_eq(s.wait_rc, STVM_OK);
    cr_assert_eq(s.switches, 0, "did not block");
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.sem), 0);
    SCENARIO_DONE(&s);
}

Test(semaphore, a_signal_from_the_host_between_runs_readies_the_waiter_without_running_it)
{
    one_wait s = {.vm = vm_make(NULL)};
    s.sem = sem_make(s.vm);
    stvm_process *p = spawn(s.vm, 40, "waiter", wait_once, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(s.vm, p, &info), STVM_OK);
    cr_assert_eq(info.state, STVM_PROCESS_READY);
    cr_assert_eq(s.log.n, 0, "the host does not run processes");
    run_ok(s.vm);
    cr_assert_eq(s.wait_rc, STVM_OK);
    static const int want[] = {1};
    trace_expect(&s.log, want, 1);
    SCENARIO_DONE(&s);
}

/* ---- preemption by a signal --------------------------------------------------------- */

static void low_signaller(stvm_vm *vm, void *arg)
{
    signalled *s = arg;
    trace_add(&s->log, 1);
    s->signal_rc = stvm_semaphore_signal(vm, s->sem);
    trace_add(&s->log, 3);
}

Test(semaphore, signal_waking_a_higher_priority_process_preempts_the_signaller)
{
    signalled s = {.vm = vm_make(NULL)};
    s.sem = sem_make(s.vm);
    logged_wait high = {.sem = s.sem, .log = &s.log, .tag = 2};
    spawn(s.vm, 50, "high", wait_and_log, &high);
    spawn(s.vm, 30, "low", low_signaller, &s);
    run_ok(s.vm);
    cr_assert_eq(high.rc, STVM_OK);
    cr_assert_eq(s.signal_rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    SCENARIO_DONE(&s);
}

Test(semaphore, signal_waking_an_equal_or_lower_process_does_not_preempt)
{
    signalled s = {.vm = vm_make(NULL)};
    s.sem = sem_make(s.vm);
    logged_wait equal = {.sem = s.sem, .log = &s.log, .tag = 2};
    spawn(s.vm, 30, "equal", wait_and_log, &equal);   /* logs 2 */
    spawn(s.vm, 30, "signaller", low_signaller, &s);
    run_ok(s.vm);
    static const int want[] = {1, 3, 2};
    trace_expect(&s.log, want, 3);

    /* a lower waiter (20) queued in an earlier run */
    signalled s2 = {.vm = vm_make(NULL)};
    s2.sem = sem_make(s2.vm);
    logged_wait lower = {.sem = s2.sem, .log = &s2.log, .tag = 2};
    spawn(s2.vm, 20, "lower", wait_and_log, &lower);
    cr_assert_eq(stvm_run(s2.vm), STVM_EDEADLOCK);
    spawn(s2.vm, 30, "signaller", low_signaller, &s2);
    run_ok(s2.vm);
    trace_expect(&s2.log, want, 3);
    SCENARIO_DONE(&s);
    SCENARIO_DONE(&s2);
}

/* ---- ping-pong and counters --------------------------------------------------------- */

enum { ROUNDS = 10000 };

typedef struct ping_pong {
    stvm_vm *vm;
    stvm_semaphore *to_pong, *to_ping;
    long rounds;   /* completed by ping */
    int bad_line;
} ping_pong;

static void ping(stvm_vm *vm, void *arg)
{
    ping_pong *s = arg;
    for (int i = 0; i < ROUNDS; i++) {
        GCHECK(s, stvm_semaphore_signal(vm, s->to_pong) == STVM_OK);
        GCHECK(s, stvm_semaphore_wait(vm, s->to_ping) == STVM_OK);
        s->rounds++;
    }
}

static void pong(stvm_vm *vm, void *arg)
{
    ping_pong *s = arg;
    for (int i = 0; i < ROUNDS; i++) {
        GCHECK(s, stvm_semaphore_wait(vm, s->to_pong) == STVM_OK);
        GCHECK(s, s->rounds == i);   /* strictly alternating */
        GCHECK(s, stvm_semaphore_signal(vm, s->to_ping) == STVM_OK);
    }
}

Test(semaphore, ping_pong_alternates_exactly_and_counts_signals_and_waits)
{
    ping_pong s = {.vm = vm_make(NULL)};
    s.to_pong = sem_make(s.vm);
    s.to_ping = sem_make(s.vm);
    stvm_vm_reset_stats(s.vm);
    spawn(s.vm, 40, "ping", ping, &s);
    spawn(s.vm, 40, "pong", pong, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rounds, ROUNDS);
    stvm_stats st;
    cr_assert_eq(stvm_vm_get_stats(s.vm, &st), STVM_OK);
    cr_assert_eq(st.semaphore_signals, 2 * ROUNDS);
    cr_assert_eq(st.semaphore_waits, 2 * ROUNDS);
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.to_pong), 0);
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.to_ping), 0);
    SCENARIO_DONE(&s);
}

/* ---- freeing and bad arguments ------------------------------------------------------ */

/* Freeing an object a process waits on answers EINUSE, for every kind (include/README.md,
 * "One situation, one code"); it was ESTATE for semaphores before 0.3.0. */
Test(semaphore, free_while_waited_on_answers_einuse)
{
    one_wait s = {.vm = vm_make(NULL)};
    s.sem = sem_make(s.vm);
    stvm_semaphore *other = sem_make(s.vm);
    spawn(s.vm, 40, "waiter", wait_once, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    int rc = stvm_semaphore_free(s.vm, s.sem);
    cr_assert_eq(rc, STVM_EINUSE, "%s", stvm_err_name(rc));
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK, "still a live semaphore");
    run_ok(s.vm);
    cr_assert_eq(s.wait_rc, STVM_OK);
    stvm_stats before, after;
    stvm_vm_get_stats(s.vm, &before);
    cr_assert_eq(stvm_semaphore_free(s.vm, s.sem), STVM_OK);
    stvm_vm_get_stats(s.vm, &after);
    cr_assert_eq(after.objects_live, before.objects_live - 1);
    cr_assert_eq(stvm_semaphore_free(s.vm, other), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(s.vm, NULL), STVM_EINVAL);
    vm_done(s.vm);
}

/* A process inside Semaphore>>critical: will signal the semaphore on its way out, so
 * the semaphore cannot be freed meanwhile (found by fuzz_api: the exit signal went to
 * freed memory). */
typedef struct inside_critical {
    stvm_vm *vm;
    stvm_semaphore *sem;
    int free_rc;
    int critical_rc;
    int bad_line;
} inside_critical;

static void frees_it(stvm_vm *vm, void *arg)
{
    inside_critical *s = arg;
    s->free_rc = stvm_semaphore_free(vm, s->sem);
}

static void yields_inside(stvm_vm *vm, void *arg)
{
    inside_critical *s = arg;
    spawn(vm, 40, "freer", frees_it, s);
    GCHECK(s, stvm_yield(vm) == STVM_OK);   /* the freer runs now */
}

static void enters_critical(stvm_vm *vm, void *arg)
{
    inside_critical *s = arg;
    s->critical_rc = stvm_semaphore_critical(vm, s->sem, yields_inside, s);
}

Test(semaphore, free_while_a_process_is_inside_critical_answers_einuse)
{
    inside_critical s = {.vm = vm_make(NULL), .free_rc = 77};
    s.sem = sem_make(s.vm);
    stvm_semaphore_signal(s.vm, s.sem);
    spawn(s.vm, 40, "critical", enters_critical, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.critical_rc, STVM_OK);
    cr_assert_eq(s.free_rc, STVM_EINUSE);
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.sem), 1, "the exit signal came back");
    cr_assert_eq(stvm_semaphore_free(s.vm, s.sem), STVM_OK);
    SCENARIO_DONE(&s);
}

/* A cleanup fn registers inside critical and leaves there is the process's (stvm_ensure):
 * it runs when the process ends; critical's own way out used to drop it unrun. */
typedef struct leaves_cleanup {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    int bad_line;
} leaves_cleanup;

static void logs_cleanup(stvm_vm *vm, void *arg)
{
    (void)vm;
    trace_add(&((leaves_cleanup *)arg)->log, 7);
}

static void registers_cleanup(stvm_vm *vm, void *arg)
{
    leaves_cleanup *s = arg;
    GCHECK(s, stvm_ensure(vm, logs_cleanup, s) == STVM_OK);
}

static void critical_leaving_cleanup(stvm_vm *vm, void *arg)
{
    leaves_cleanup *s = arg;
    GCHECK(s, stvm_semaphore_critical(vm, s->sem, registers_cleanup, s) == STVM_OK);
    trace_add(&s->log, 1);   /* not run yet: the process goes on */
}

Test(semaphore, a_cleanup_left_registered_inside_critical_runs_when_the_process_ends)
{
    leaves_cleanup s = {.vm = vm_make(NULL)};
    s.sem = sem_make(s.vm);
    stvm_semaphore_signal(s.vm, s.sem);
    spawn(s.vm, 40, "critical", critical_leaving_cleanup, &s);
    RUN_OK_GREEN(&s);
    trace_expect(&s.log, (int[]){1, 7}, 2);
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.sem), 1);
    cr_assert_eq(stvm_semaphore_free(s.vm, s.sem), STVM_OK);
    SCENARIO_DONE(&s);
}

/* A try finds nothing: EAGAIN, no time limit passed. A time limit of 0 that passes is
 * ETIMEDOUT: the two situations keep their own codes. */
typedef struct tries {
    stvm_semaphore *sem;
    int try_rc, zero_rc, try_after_signal_rc;
} tries;

static void try_then_zero(stvm_vm *vm, void *arg)
{
    tries *t = arg;
    t->try_rc = stvm_semaphore_try_wait(vm, t->sem);
    t->zero_rc = stvm_semaphore_wait_timeout_ms(vm, t->sem, 0);
    stvm_semaphore_signal(vm, t->sem);
    t->try_after_signal_rc = stvm_semaphore_try_wait(vm, t->sem);
}

Test(semaphore, try_wait_with_nothing_answers_eagain)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    tries t = {.sem = sem_make(vm)};
    spawn(vm, 40, "trier", try_then_zero, &t);
    run_ok(vm);
    cr_expect_eq(t.try_rc, STVM_EAGAIN, "%s", stvm_err_name(t.try_rc));
    cr_expect_eq(t.zero_rc, STVM_ETIMEDOUT, "%s", stvm_err_name(t.zero_rc));
    cr_expect_eq(t.try_after_signal_rc, STVM_OK);
    cr_expect_eq(stvm_semaphore_excess(vm, t.sem), 0);
    cr_expect_eq(stvm_semaphore_free(vm, t.sem), STVM_OK);
    vm_done(vm);
}

Test(semaphore, free_with_excess_signals_is_allowed)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *sem = sem_make(vm);
    stvm_semaphore_signal(vm, sem);
    stvm_semaphore_signal(vm, sem);
    cr_assert_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    vm_done(vm);
}

Test(semaphore, calls_with_null_or_wrong_handles_are_einval)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *sem = sem_make(vm);
    stvm_mutex *m;
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    stvm_semaphore *not_sem = (stvm_semaphore *)m;
    cr_assert_eq(stvm_semaphore_signal(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_signal(NULL, sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_signal(vm, not_sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_wait(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_excess(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_excess(NULL, sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_excess(vm, not_sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_free(vm, not_sem), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_owner(vm, m), NULL, "the mutex is untouched");
    /* a semaphore of another VM */
    stvm_vm *other = vm_make(NULL);
    cr_assert_eq(stvm_semaphore_signal(other, sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_free(other, sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_excess(vm, sem), 0);
    vm_done(other);
    cr_assert_eq(stvm_mutex_free(vm, m), STVM_OK);
    vm_done(vm);
}
