/*
 * Mutexes: owner, re-entrancy, FIFO direct hand-off (no barging), exit by a non-owner,
 * try_enter, critical, ownership passing on terminate, freeing.
 */
#include <string.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(mutex, .timeout = 30);

static world world_new(void)
{
    world w;
    memset(&w, 0, sizeof w);
    w.vm = vm_make(NULL);
    cr_assert_eq(stvm_mutex_new(w.vm, &w.m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    return w;
}

/* ---- owner and re-entrancy -------------------------------------------------------- */

static void reentrant_user(stvm_vm *vm, void *arg)
{
    world *w = arg;
    stvm_process *self = stvm_active_process(vm);
    w->owner[0] = stvm_mutex_owner(vm, w->m);
    w->rc[0] = stvm_mutex_enter(vm, w->m);
    w->owner[1] = stvm_mutex_owner(vm, w->m);
    w->rc[1] = stvm_mutex_enter(vm, w->m);
    w->owner[2] = stvm_mutex_owner(vm, w->m);
    w->rc[2] = stvm_mutex_exit(vm, w->m);
    w->owner[3] = stvm_mutex_owner(vm, w->m);   /* still owned: one more exit due */
    w->rc[3] = stvm_mutex_exit(vm, w->m);
    w->owner[4] = stvm_mutex_owner(vm, w->m);
    w->rc[4] = stvm_mutex_exit(vm, w->m);       /* one exit too many */
    w->owner[5] = stvm_mutex_owner(vm, w->m);
    w->p[0] = self;
}

Test(mutex, enter_twice_needs_two_exits_and_a_third_exit_is_eperm)
{
    world w = world_new();
    cr_assert_null(stvm_mutex_owner(w.vm, w.m));
    spawn(w.vm, 40, "user", reentrant_user, &w);
    run_ok(w.vm);
    stvm_process *self = w.p[0];
    cr_assert_null(w.owner[0]);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.owner[1], self);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.owner[2], self);
    cr_assert_eq(w.rc[2], STVM_OK);
    cr_assert_eq(w.owner[3], self, "still owned after the first exit");
    cr_assert_eq(w.rc[3], STVM_OK);
    cr_assert_null(w.owner[4]);
    cr_assert_eq(w.rc[4], STVM_EPERM);
    cr_assert_null(w.owner[5]);
    cr_assert_eq(stvm_mutex_free(w.vm, w.m), STVM_OK);
    world_done(&w);
}

/* ---- hand-off ----------------------------------------------------------------------- */

/* O (30) takes the mutex and yields; W (30) blocks on it; O exits: W owns the mutex at
 * once although it has not run yet; O can neither try_enter nor barge with enter: it
 * queues behind and gets the mutex when W leaves. */
static void handoff_owner(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    trace_add(&w->t, 1);
    stvm_yield(vm);                                  /* W runs and blocks */
    stvm_process_info_get(vm, w->p[1], &w->info[0]);
    trace_add(&w->t, 3);
    w->rc[0] = stvm_mutex_exit(vm, w->m);
    w->owner[0] = stvm_mutex_owner(vm, w->m);
    w->info[1].state = gstate(w->vm, w->p[1]);
    w->rc[1] = stvm_mutex_try_enter(vm, w->m);
    w->rc[2] = stvm_mutex_enter(vm, w->m);           /* waits behind W */
    w->owner[1] = stvm_mutex_owner(vm, w->m);
    trace_add(&w->t, 5);
    w->rc[3] = stvm_mutex_exit(vm, w->m);
}

static void handoff_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 2);
    w->rc[4] = stvm_mutex_enter(vm, w->m);
    trace_add(&w->t, 4);
    w->rc[5] = stvm_mutex_exit(vm, w->m);
}

Test(mutex, exit_hands_the_mutex_to_the_first_waiter_before_it_runs_and_nobody_barges)
{
    world w = world_new();
    w.p[0] = spawn(w.vm, 30, "O", handoff_owner, &w);
    w.p[1] = spawn(w.vm, 30, "W", handoff_waiter, &w);
    run_ok(w.vm);
    cr_assert_eq(w.info[0].state, STVM_PROCESS_WAITING);
    cr_assert_str_eq(w.info[0].waiting_on, "mutex");
    cr_assert_eq(w.info[0].waiting_object, (const void *)w.m);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.owner[0], w.p[1], "W owns the mutex right after O's exit");
    cr_assert_eq(w.info[1].state, STVM_PROCESS_READY, "W has not run yet");
    cr_assert_eq(w.rc[1], 0, "try_enter cannot take a handed-off mutex");
    cr_assert_eq(w.rc[2], STVM_OK);
    cr_assert_eq(w.owner[1], w.p[0]);
    cr_assert_eq(w.rc[3], STVM_OK);
    cr_assert_eq(w.rc[4], STVM_OK);
    cr_assert_eq(w.rc[5], STVM_OK);
    static const int want[] = {1, 2, 3, 4, 5};
    trace_expect(&w.t, want, 5);
    cr_assert_null(stvm_mutex_owner(w.vm, w.m));
    world_done(&w);
}

static void fifo_waiter(stvm_vm *vm, void *arg)
{
    actor *a = arg;
    GCHECK(a->w, stvm_mutex_enter(vm, a->w->m) == STVM_OK);
    GCHECK(a->w, stvm_mutex_owner(vm, a->w->m) == stvm_active_process(vm));
    trace_add(&a->w->t, a->tag);
    GCHECK(a->w, stvm_mutex_exit(vm, a->w->m) == STVM_OK);
}

static void fifo_owner(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor a[3];
    static const int prios[3] = {35, 45, 40};
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    for (int i = 0; i < 3; i++) {   /* each runs at once and blocks on the mutex */
        a[i] = (actor){w, prios[i]};
        GCHECK(w, stvm_spawn(vm, prios[i], "waiter", fifo_waiter, &a[i], NULL) == STVM_OK);
    }
    trace_add(&w->t, 1);
    GCHECK(w, stvm_mutex_exit(vm, w->m) == STVM_OK);
    trace_add(&w->t, 2);
}

Test(mutex, waiters_get_the_mutex_in_arrival_order_whatever_their_priority)
{
    world w = world_new();
    spawn(w.vm, 20, "owner", fifo_owner, &w);
    run_ok(w.vm);
    /* 35 gets it first (preempting the owner) and hands it to 45 on exit, which
     * preempts 35 at once; 45 hands it to 40, which runs after 45 finishes. */
    static const int want[] = {1, 35, 45, 40, 2};
    trace_expect(&w.t, want, 5);
    cr_assert_null(stvm_mutex_owner(w.vm, w.m));
    world_done(&w);
}

static void high_mutex_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_mutex_enter(vm, w->m);
    trace_add(&w->t, 2);
    w->rc[1] = stvm_mutex_exit(vm, w->m);
}

static void low_mutex_owner(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    GCHECK(w, stvm_spawn(vm, 50, "high", high_mutex_waiter, w, NULL) == STVM_OK);
    trace_add(&w->t, 1);
    w->rc[2] = stvm_mutex_exit(vm, w->m);   /* hands off; the waiter preempts */
    trace_add(&w->t, 3);
}

Test(mutex, exit_to_a_higher_priority_waiter_preempts_the_caller)
{
    world w = world_new();
    spawn(w.vm, 30, "low", low_mutex_owner, &w);
    run_ok(w.vm);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.rc[2], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    world_done(&w);
}

/* ---- exit by a non-owner, try_enter ----------------------------------------------- */

static void holder_waits(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    GCHECK(w, stvm_semaphore_wait(vm, w->sem) == STVM_OK);
    GCHECK(w, stvm_mutex_exit(vm, w->m) == STVM_OK);
}

static void intruder(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_mutex_exit(vm, w->m);
    w->owner[0] = stvm_mutex_owner(vm, w->m);
    w->rc[1] = stvm_mutex_try_enter(vm, w->m);
    w->owner[1] = stvm_mutex_owner(vm, w->m);
    stvm_semaphore_signal(vm, w->sem);   /* the holder (50) runs and releases */
    w->owner[2] = stvm_mutex_owner(vm, w->m);
    w->rc[2] = stvm_mutex_try_enter(vm, w->m);   /* free: taken */
    w->owner[3] = stvm_mutex_owner(vm, w->m);
    w->rc[3] = stvm_mutex_try_enter(vm, w->m);   /* own: re-entered */
    w->rc[4] = stvm_mutex_exit(vm, w->m);
    w->owner[4] = stvm_mutex_owner(vm, w->m);    /* still ours: two try_enters */
    w->rc[5] = stvm_mutex_exit(vm, w->m);
    w->owner[5] = stvm_mutex_owner(vm, w->m);
    w->p[1] = stvm_active_process(vm);
}

Test(mutex, exit_by_a_non_owner_is_eperm_and_try_enter_answers_1_or_0)
{
    world w = world_new();
    w.p[0] = spawn(w.vm, 50, "holder", holder_waits, &w);
    spawn(w.vm, 40, "intruder", intruder, &w);
    run_ok(w.vm);
    stvm_process *me = w.p[1];
    cr_assert_eq(w.rc[0], STVM_EPERM);
    cr_assert_eq(w.owner[0], w.p[0], "the owner is unchanged");
    cr_assert_eq(w.rc[1], 0);
    cr_assert_eq(w.owner[1], w.p[0]);
    cr_assert_null(w.owner[2]);
    cr_assert_eq(w.rc[2], 1);
    cr_assert_eq(w.owner[3], me);
    cr_assert_eq(w.rc[3], 1);
    cr_assert_eq(w.rc[4], STVM_OK);
    cr_assert_eq(w.owner[4], me);
    cr_assert_eq(w.rc[5], STVM_OK);
    cr_assert_null(w.owner[5]);
    world_done(&w);
}

Test(mutex, calls_from_the_host_or_with_bad_handles_fail)
{
    world w = world_new();
    cr_assert_eq(stvm_mutex_exit(w.vm, w.m), STVM_EPERM, "the host owns nothing");
    cr_assert_eq(stvm_mutex_enter(w.vm, w.m), STVM_ENOTPROC);
    cr_assert_eq(stvm_mutex_try_enter(w.vm, w.m), STVM_ENOTPROC);
    stvm_mutex *not_mutex = (stvm_mutex *)w.sem;
    cr_assert_eq(stvm_mutex_enter(w.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_enter(w.vm, not_mutex), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_exit(w.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_exit(w.vm, not_mutex), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_try_enter(NULL, w.m), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_free(w.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_free(w.vm, not_mutex), STVM_EINVAL);
    cr_assert_null(stvm_mutex_owner(w.vm, NULL));
    cr_assert_null(stvm_mutex_owner(NULL, w.m));
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0, "the semaphore is untouched");
    world_done(&w);
}

/* ---- critical ----------------------------------------------------------------------- */

static void inside_critical(stvm_vm *vm, void *arg)
{
    actor *a = arg;
    GCHECK(a->w, stvm_mutex_owner(vm, a->w->m) == stvm_active_process(vm));
    trace_add(&a->w->t, a->tag);
    stvm_yield(vm);   /* let the other one try: it must wait */
    trace_add(&a->w->t, a->tag + 1);
}

static void critical_user(stvm_vm *vm, void *arg)
{
    actor *a = arg;
    a->w->rc[a->tag] = stvm_mutex_critical(vm, a->w->m, inside_critical, a);
    a->w->owner[a->tag / 10] = stvm_mutex_owner(vm, a->w->m);
}

Test(mutex, critical_runs_the_function_holding_the_mutex_one_process_at_a_time)
{
    world w = world_new();
    actor a = {&w, 0}, b = {&w, 10};
    w.p[0] = spawn(w.vm, 30, "A", critical_user, &a);
    w.p[1] = spawn(w.vm, 30, "B", critical_user, &b);
    run_ok(w.vm);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[10], STVM_OK);
    static const int want[] = {0, 1, 10, 11};
    trace_expect(&w.t, want, 4);
    cr_assert_eq(w.owner[0], w.p[1], "A's exit handed the mutex to B");
    cr_assert_null(w.owner[1]);
    cr_assert_eq(stvm_mutex_critical(w.vm, w.m, NULL, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_critical(w.vm, w.m, inside_critical, &a), STVM_ENOTPROC);
    cr_assert_eq(w.t.n, 4, "fn was not called");
    world_done(&w);
}

/* ---- terminate and ownership ------------------------------------------------------ */

static void owner_stuck(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);   /* depth 2 */
    trace_add(&w->t, 1);
    stvm_semaphore_wait(vm, w->sem);   /* never signalled */
    trace_add(&w->t, 99);
}

static void next_in_line(stvm_vm *vm, void *arg)
{
    actor *a = arg;
    a->w->rc[a->tag] = stvm_mutex_enter(vm, a->w->m);
    trace_add(&a->w->t, a->tag);
    a->w->rc[a->tag + 1] = stvm_mutex_exit(vm, a->w->m);
}

static void killer(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 2);
    w->rc[0] = stvm_process_terminate(vm, w->p[0]);   /* the 50 waiter preempts */
    trace_add(&w->t, 4);
}

Test(mutex, terminating_the_owner_passes_the_mutex_to_the_next_waiter)
{
    world w = world_new();
    actor nx = {&w, 3};
    w.p[0] = spawn(w.vm, 60, "owner", owner_stuck, &w);
    w.p[1] = spawn(w.vm, 50, "next", next_in_line, &nx);
    spawn(w.vm, 30, "killer", killer, &w);
    run_ok(w.vm);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[3], STVM_OK, "the waiter's enter succeeded");
    cr_assert_eq(w.rc[4], STVM_OK, "one exit released it (depth restarts at 1)");
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&w.t, want, 4);
    cr_assert_null(stvm_mutex_owner(w.vm, w.m));
    cr_assert_eq(stvm_mutex_free(w.vm, w.m), STVM_OK);
    world_done(&w);
}

static void finishes_holding(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    trace_add(&w->t, 1);
    stvm_yield(vm);   /* the other one blocks on the mutex */
    trace_add(&w->t, 2);
    /* returns without exit */
}

Test(mutex, a_process_that_finishes_while_owning_hands_the_mutex_on)
{
    world w = world_new();
    actor nx = {&w, 3};
    spawn(w.vm, 30, "careless", finishes_holding, &w);
    w.p[1] = spawn(w.vm, 30, "next", next_in_line, &nx);
    run_ok(w.vm);
    cr_assert_eq(w.rc[3], STVM_OK);
    cr_assert_eq(w.rc[4], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    cr_assert_null(stvm_mutex_owner(w.vm, w.m));
    world_done(&w);
}

static void waiter_killer(stvm_vm *vm, void *arg)
{
    world *w = arg;
    /* p[0] holds the mutex waiting on sem; p[1] and p[2] wait for the mutex */
    w->rc[0] = stvm_process_terminate(vm, w->p[1]);
    stvm_semaphore_signal(vm, w->sem);   /* holder (60) exits: p[2] gets the mutex */
    trace_add(&w->t, 9);
}

Test(mutex, terminating_a_waiter_takes_it_out_of_the_queue)
{
    world w = world_new();
    actor first = {&w, 3}, second = {&w, 5};
    w.p[0] = spawn(w.vm, 60, "holder", holder_waits, &w);
    w.p[1] = spawn(w.vm, 50, "first", next_in_line, &first);
    w.p[2] = spawn(w.vm, 50, "second", next_in_line, &second);
    spawn(w.vm, 30, "killer", waiter_killer, &w);
    run_ok(w.vm);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {5, 9};
    trace_expect(&w.t, want, 2);
    cr_assert_eq(w.rc[5], STVM_OK);
    cr_assert_eq(w.rc[6], STVM_OK);
    cr_assert_null(stvm_mutex_owner(w.vm, w.m));
    world_done(&w);
}

static void aborted_mutex_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_mutex_enter(vm, w->m);   /* blocks; suspended off the queue */
    w->owner[0] = stvm_mutex_owner(vm, w->m);
    trace_add(&w->t, 2);
    w->rc[1] = stvm_mutex_exit(vm, w->m);    /* it owns nothing */
}

static void mutex_waiter_suspender(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[2] = stvm_process_suspend(vm, w->p[1]);
    w->info[0].state = gstate(w->vm, w->p[1]);
    trace_add(&w->t, 1);
    w->rc[3] = stvm_process_resume(vm, w->p[1]);   /* 50 > 30: runs now */
    trace_add(&w->t, 3);
    stvm_semaphore_signal(vm, w->sem);             /* the holder exits */
    w->owner[1] = stvm_mutex_owner(vm, w->m);
}

Test(mutex, a_waiter_suspended_off_the_queue_gets_estate_and_never_the_mutex)
{
    world w = world_new();
    w.p[0] = spawn(w.vm, 60, "holder", holder_waits, &w);
    w.p[1] = spawn(w.vm, 50, "waiter", aborted_mutex_waiter, &w);
    spawn(w.vm, 30, "suspender", mutex_waiter_suspender, &w);
    run_ok(w.vm);
    cr_assert_eq(w.rc[2], STVM_OK);
    cr_assert_eq(w.info[0].state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(w.rc[3], STVM_OK);
    cr_assert_eq(w.rc[0], STVM_ESTATE, "enter returned %s", stvm_err_name(w.rc[0]));
    cr_assert_eq(w.owner[0], w.p[0], "the holder still owns it");
    cr_assert_eq(w.rc[1], STVM_EPERM);
    cr_assert_null(w.owner[1], "released by the holder, handed to nobody");
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    world_done(&w);
}

/* ---- free --------------------------------------------------------------------------- */

static void hold_forever(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    stvm_semaphore_wait(vm, w->sem);
    GCHECK(w, stvm_mutex_exit(vm, w->m) == STVM_OK);
}

Test(mutex, free_of_an_owned_mutex_is_estate)
{
    world w = world_new();
    stvm_process *p = spawn(w.vm, 40, "holder", hold_forever, &w);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_mutex_owner(w.vm, w.m), p);
    cr_assert_eq(stvm_mutex_free(w.vm, w.m), STVM_ESTATE);
    cr_assert_eq(stvm_mutex_owner(w.vm, w.m), p, "still there, still owned");
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    run_ok(w.vm);
    cr_assert_null(stvm_mutex_owner(w.vm, w.m));
    stvm_stats before, after;
    stvm_get_stats(w.vm, &before);
    cr_assert_eq(stvm_mutex_free(w.vm, w.m), STVM_OK);
    stvm_get_stats(w.vm, &after);
    cr_assert_eq(after.objects_live, before.objects_live - 1);
    world_done(&w);
}
