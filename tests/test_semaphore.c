/*
 * Semaphores (primitives 85/86 through the C API): excess signals, FIFO waiters,
 * signalling from the host, preemption by a signal, freeing, counters.
 */
#include <string.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(semaphore, .timeout = 30);

static world world_new(void)
{
    world w;
    memset(&w, 0, sizeof w);
    w.vm = vm_make(NULL);
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem2), STVM_OK);
    return w;
}

/* ---- excess signals ----------------------------------------------------------------- */

static void consume_three(stvm_vm *vm, void *arg)
{
    world *w = arg;
    uint64_t before = switches(vm);
    for (int i = 0; i < 3; i++) {
        w->rc[i] = stvm_semaphore_wait(vm, w->sem);
        w->x[i] = stvm_semaphore_excess(vm, w->sem);
    }
    w->u[0] = switches(vm) - before;
    trace_add(&w->t, 1);
    w->rc[3] = stvm_semaphore_wait(vm, w->sem);   /* nothing left: blocks for good */
    trace_add(&w->t, 2);
}

Test(semaphore, excess_signals_are_counted_and_consumed_one_per_wait)
{
    world w = world_new();
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0);
    for (int i = 1; i <= 3; i++) {
        cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
        cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), i);
    }
    spawn(w.vm, 40, "consumer", consume_three, &w);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(w.rc[i], STVM_OK);
        cr_assert_eq(w.x[i], 2 - i, "excess after wait %d is %lld", i, (long long)w.x[i]);
    }
    cr_assert_eq(w.u[0], 0, "waits with excess signals never switch");
    static const int want[] = {1};
    trace_expect(&w.t, want, 1);
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0);
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0, "the signal went to the waiter");
    run_ok(w.vm);
    static const int want2[] = {1, 2};
    trace_expect(&w.t, want2, 2);
    cr_assert_eq(w.rc[3], STVM_OK);
    world_done(&w);
}

Test(semaphore, a_million_excess_signals_are_all_counted)
{
    world w = world_new();
    for (int i = 0; i < 1000000; i++)
        stvm_semaphore_signal(w.vm, w.sem);
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 1000000);
    world_done(&w);
}

/* ---- FIFO ------------------------------------------------------------------------- */

static void logging_waiter(stvm_vm *vm, void *arg)
{
    actor *a = arg;
    GCHECK(a->w, stvm_semaphore_wait(vm, a->w->sem) == STVM_OK);
    trace_add(&a->w->t, a->tag);
}

Test(semaphore, waiters_of_one_priority_wake_in_fifo_order)
{
    world w = world_new();
    actor a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = (actor){&w, i};
        spawn(w.vm, 40, "waiter", logging_waiter, &a[i]);
    }
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    cr_assert_eq(w.t.n, 0);
    for (int i = 0; i < 8; i++)
        cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    run_ok(w.vm);
    static const int want[] = {0, 1, 2, 3, 4, 5, 6, 7};
    trace_expect(&w.t, want, 8);
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0);
    world_done(&w);
}

/* Waiters of priorities 35, 45, 40 queue in that order (each spawned by a lower
 * controller, so each waits before the next exists); three signals wake them in
 * arrival order, not by priority. */
static void fifo_controller(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor a[3];
    static const int prios[3] = {35, 45, 40};
    for (int i = 0; i < 3; i++) {
        a[i] = (actor){w, prios[i]};
        GCHECK(w, stvm_spawn(vm, prios[i], "waiter", logging_waiter, &a[i], NULL) == STVM_OK);
    }
    trace_add(&w->t, 1);
    for (int i = 0; i < 3; i++) {
        w->rc[i] = stvm_semaphore_signal(vm, w->sem);   /* each waiter preempts */
        trace_add(&w->t, 2 + i);
    }
}

Test(semaphore, waiters_wake_in_arrival_order_whatever_their_priority)
{
    world w = world_new();
    spawn(w.vm, 20, "controller", fifo_controller, &w);
    run_ok(w.vm);
    static const int want[] = {1, 35, 2, 45, 3, 40, 4};
    trace_expect(&w.t, want, 7);
    world_done(&w);
}

static void first_of_two(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 1);
}

static void second_of_two(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[1] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 2);
}

static void single_signaller(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[2] = stvm_semaphore_signal(vm, w->sem);
    trace_add(&w->t, 3);
}

Test(semaphore, one_signal_wakes_only_the_first_waiter)
{
    world w = world_new();
    spawn(w.vm, 50, "first", first_of_two, &w);
    stvm_process *second = spawn(w.vm, 50, "second", second_of_two, &w);
    spawn(w.vm, 30, "signaller", single_signaller, &w);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    static const int want[] = {1, 3};
    trace_expect(&w.t, want, 2);
    stvm_process_info info;
    cr_assert_eq(stvm_process_info_get(w.vm, second, &info), STVM_OK);
    cr_assert_eq(info.state, STVM_PROCESS_WAITING);
    cr_assert_eq(info.waiting_object, (const void *)w.sem);
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0);
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    run_ok(w.vm);
    world_done(&w);
}

/* ---- signal from the host ----------------------------------------------------------- */

static void wait_once(stvm_vm *vm, void *arg)
{
    world *w = arg;
    uint64_t before = switches(vm);
    w->rc[0] = stvm_semaphore_wait(vm, w->sem);
    w->u[0] = switches(vm) - before;
    trace_add(&w->t, 1);
}

Test(semaphore, a_signal_from_the_host_before_run_is_kept_for_the_first_wait)
{
    world w = world_new();
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    spawn(w.vm, 40, "waiter", wait_once, &w);
    run_ok(w.vm);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.u[0], 0, "did not block");
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0);
    world_done(&w);
}

Test(semaphore, a_signal_from_the_host_between_runs_readies_the_waiter_without_running_it)
{
    world w = world_new();
    stvm_process *p = spawn(w.vm, 40, "waiter", wait_once, &w);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    stvm_process_info info;
    cr_assert_eq(stvm_process_info_get(w.vm, p, &info), STVM_OK);
    cr_assert_eq(info.state, STVM_PROCESS_READY);
    cr_assert_eq(w.t.n, 0, "the host does not run processes");
    run_ok(w.vm);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1};
    trace_expect(&w.t, want, 1);
    world_done(&w);
}

/* ---- preemption by a signal --------------------------------------------------------- */

static void high_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 2);
}

static void low_signaller(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[1] = stvm_semaphore_signal(vm, w->sem);
    trace_add(&w->t, 3);
}

Test(semaphore, signal_waking_a_higher_priority_process_preempts_the_signaller)
{
    world w = world_new();
    spawn(w.vm, 50, "high", high_waiter, &w);
    spawn(w.vm, 30, "low", low_signaller, &w);
    run_ok(w.vm);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[1], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    world_done(&w);
}

Test(semaphore, signal_waking_an_equal_or_lower_process_does_not_preempt)
{
    world w = world_new();
    spawn(w.vm, 30, "equal", high_waiter, &w);   /* logs 2 */
    spawn(w.vm, 30, "signaller", low_signaller, &w);
    run_ok(w.vm);
    static const int want[] = {1, 3, 2};
    trace_expect(&w.t, want, 3);

    /* a lower waiter (20) queued in an earlier run */
    world w2 = world_new();
    spawn(w2.vm, 20, "lower", high_waiter, &w2);
    cr_assert_eq(stvm_run(w2.vm), STVM_EDEADLOCK);
    spawn(w2.vm, 30, "signaller", low_signaller, &w2);
    run_ok(w2.vm);
    trace_expect(&w2.t, want, 3);
    world_done(&w);
    world_done(&w2);
}

/* ---- ping-pong and counters --------------------------------------------------------- */

enum { ROUNDS = 10000 };

static void ping(stvm_vm *vm, void *arg)
{
    world *w = arg;
    for (int i = 0; i < ROUNDS; i++) {
        GCHECK(w, stvm_semaphore_signal(vm, w->sem) == STVM_OK);
        GCHECK(w, stvm_semaphore_wait(vm, w->sem2) == STVM_OK);
        w->count++;
    }
}

static void pong(stvm_vm *vm, void *arg)
{
    world *w = arg;
    for (int i = 0; i < ROUNDS; i++) {
        GCHECK(w, stvm_semaphore_wait(vm, w->sem) == STVM_OK);
        GCHECK(w, w->count == i);   /* strictly alternating */
        GCHECK(w, stvm_semaphore_signal(vm, w->sem2) == STVM_OK);
    }
}

Test(semaphore, ping_pong_alternates_exactly_and_counts_signals_and_waits)
{
    world w = world_new();
    stvm_reset_stats(w.vm);
    spawn(w.vm, 40, "ping", ping, &w);
    spawn(w.vm, 40, "pong", pong, &w);
    run_ok(w.vm);
    cr_assert_eq(w.count, ROUNDS);
    stvm_stats s;
    cr_assert_eq(stvm_get_stats(w.vm, &s), STVM_OK);
    cr_assert_eq(s.semaphore_signals, 2 * ROUNDS);
    cr_assert_eq(s.semaphore_waits, 2 * ROUNDS);
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0);
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem2), 0);
    world_done(&w);
}

/* ---- freeing and bad arguments ------------------------------------------------------ */

Test(semaphore, free_with_waiters_is_estate_and_free_without_is_ok)
{
    world w = world_new();
    spawn(w.vm, 40, "waiter", wait_once, &w);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_semaphore_free(w.vm, w.sem), STVM_ESTATE);
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK, "still a live semaphore");
    run_ok(w.vm);
    cr_assert_eq(w.rc[0], STVM_OK);
    stvm_stats before, after;
    stvm_get_stats(w.vm, &before);
    cr_assert_eq(stvm_semaphore_free(w.vm, w.sem), STVM_OK);
    stvm_get_stats(w.vm, &after);
    cr_assert_eq(after.objects_live, before.objects_live - 1);
    cr_assert_eq(stvm_semaphore_free(w.vm, w.sem2), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(w.vm, NULL), STVM_EINVAL);
    vm_done(w.vm);
}

Test(semaphore, free_with_excess_signals_is_allowed)
{
    world w = world_new();
    stvm_semaphore_signal(w.vm, w.sem);
    stvm_semaphore_signal(w.vm, w.sem);
    cr_assert_eq(stvm_semaphore_free(w.vm, w.sem), STVM_OK);
    world_done(&w);
}

Test(semaphore, calls_with_null_or_wrong_handles_are_einval)
{
    world w = world_new();
    stvm_mutex *m;
    cr_assert_eq(stvm_mutex_new(w.vm, &m), STVM_OK);
    stvm_semaphore *not_sem = (stvm_semaphore *)m;
    cr_assert_eq(stvm_semaphore_signal(w.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_signal(NULL, w.sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_signal(w.vm, not_sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_wait(w.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_excess(w.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_excess(NULL, w.sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_excess(w.vm, not_sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_free(w.vm, not_sem), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_owner(w.vm, m), NULL, "the mutex is untouched");
    /* a semaphore of another VM */
    stvm_vm *other = vm_make(NULL);
    cr_assert_eq(stvm_semaphore_signal(other, w.sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_free(other, w.sem), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0);
    vm_done(other);
    cr_assert_eq(stvm_mutex_free(w.vm, m), STVM_OK);
    world_done(&w);
}
