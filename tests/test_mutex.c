/*
 * Mutexes: owner, re-entrancy, FIFO direct hand-off (no barging), exit by a non-owner,
 * try_enter, critical, ownership passing on terminate, freeing.
 *
 * Green processes record what they see in their test's scenario struct (see helpers.h);
 * the host asserts after stvm_run returns.
 */
#include "helpers.h"
#include "../vm/objects.h"   /* one test sets a re-entry depth directly */

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(mutex, .timeout = 30);

/* One call on the mutex: what it answered and who owned the mutex right after. */
typedef struct step {
    int rc;
    stvm_process *owner_after;
} step;

static void take(step *st, int rc, stvm_vm *vm, stvm_mutex *m)
{
    st->rc = rc;
    st->owner_after = stvm_mutex_owner(vm, m);
}

/* ---- owner and re-entrancy -------------------------------------------------------- */

typedef struct reentry {
    stvm_vm *vm;
    stvm_mutex *m;
    stvm_process *self;
    stvm_process *owner_before;
    step enter, reenter, exit, last_exit, extra_exit;
    int bad_line;
} reentry;

static void reentrant_user(stvm_vm *vm, void *arg)
{
    reentry *s = arg;
    stvm_process *self = stvm_vm_active_process(vm);
    s->owner_before = stvm_mutex_owner(vm, s->m);
    take(&s->enter, stvm_mutex_enter(vm, s->m), vm, s->m);
    take(&s->reenter, stvm_mutex_enter(vm, s->m), vm, s->m);
    take(&s->exit, stvm_mutex_exit(vm, s->m), vm, s->m);   /* still owned: one more exit due */
    take(&s->last_exit, stvm_mutex_exit(vm, s->m), vm, s->m);
    take(&s->extra_exit, stvm_mutex_exit(vm, s->m), vm, s->m);   /* one exit too many */
    s->self = self;
}

Test(mutex, enter_twice_needs_two_exits_and_a_third_exit_is_eperm)
{
    reentry s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    cr_assert_null(stvm_mutex_owner(s.vm, s.m));
    spawn(s.vm, 40, "user", reentrant_user, &s);
    run_ok(s.vm);
    stvm_process *self = s.self;
    cr_assert_null(s.owner_before);
    cr_assert_eq(s.enter.rc, STVM_OK);
    cr_assert_eq(s.enter.owner_after, self);
    cr_assert_eq(s.reenter.rc, STVM_OK);
    cr_assert_eq(s.reenter.owner_after, self);
    cr_assert_eq(s.exit.rc, STVM_OK);
    cr_assert_eq(s.exit.owner_after, self, "still owned after the first exit");
    cr_assert_eq(s.last_exit.rc, STVM_OK);
    cr_assert_null(s.last_exit.owner_after);
    cr_assert_eq(s.extra_exit.rc, STVM_EPERM);
    cr_assert_null(s.extra_exit.owner_after);
    cr_assert_eq(stvm_mutex_free(s.vm, s.m), STVM_OK);
    SCENARIO_DONE(&s);
}

/* ---- hand-off ----------------------------------------------------------------------- */

/* O (30) takes the mutex and yields; W (30) blocks on it; O exits: W owns the mutex at
 * once although it has not run yet; O can neither try_enter nor barge with enter: it
 * queues behind and gets the mutex when W leaves. */
typedef struct handoff {
    stvm_vm *vm;
    stvm_mutex *m;
    trace_log log;
    stvm_process *o, *w;
    stvm_process_info w_info;   /* while W waits */
    step o_exit;
    stvm_process_state w_state_after_exit;
    int o_try_enter_rc;
    step o_enter_again;          /* waits behind W */
    int o_last_exit_rc;
    int w_enter_rc, w_exit_rc;
    int bad_line;
} handoff;

static void handoff_owner(stvm_vm *vm, void *arg)
{
    handoff *s = arg;
    GCHECK(s, stvm_mutex_enter(vm, s->m) == STVM_OK);
    trace_add(&s->log, 1);
    stvm_yield(vm);                                  /* W runs and blocks */
    stvm_process_get_info(vm, s->w, &s->w_info);
    trace_add(&s->log, 3);
    take(&s->o_exit, stvm_mutex_exit(vm, s->m), vm, s->m);
    s->w_state_after_exit = gstate(s->vm, s->w);
    s->o_try_enter_rc = stvm_mutex_try_enter(vm, s->m);
    take(&s->o_enter_again, stvm_mutex_enter(vm, s->m), vm, s->m);   /* waits behind W */
    trace_add(&s->log, 5);
    s->o_last_exit_rc = stvm_mutex_exit(vm, s->m);
}

static void handoff_waiter(stvm_vm *vm, void *arg)
{
    handoff *s = arg;
    trace_add(&s->log, 2);
    s->w_enter_rc = stvm_mutex_enter(vm, s->m);
    trace_add(&s->log, 4);
    s->w_exit_rc = stvm_mutex_exit(vm, s->m);
}

Test(mutex, exit_hands_the_mutex_to_the_first_waiter_before_it_runs_and_nobody_barges)
{
    handoff s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    s.o = spawn(s.vm, 30, "O", handoff_owner, &s);
    s.w = spawn(s.vm, 30, "W", handoff_waiter, &s);
    run_ok(s.vm);
    cr_assert_eq(s.w_info.state, STVM_PROCESS_WAITING);
    cr_assert_str_eq(s.w_info.waiting_on, "mutex");
    cr_assert_eq(s.w_info.waiting_object, (const void *)s.m);
    cr_assert_eq(s.o_exit.rc, STVM_OK);
    cr_assert_eq(s.o_exit.owner_after, s.w, "W owns the mutex right after O's exit");
    cr_assert_eq(s.w_state_after_exit, STVM_PROCESS_READY, "W has not run yet");
    cr_assert_eq(s.o_try_enter_rc, STVM_EAGAIN, "try_enter cannot take a handed-off mutex");
    cr_assert_eq(s.o_enter_again.rc, STVM_OK);
    cr_assert_eq(s.o_enter_again.owner_after, s.o);
    cr_assert_eq(s.o_last_exit_rc, STVM_OK);
    cr_assert_eq(s.w_enter_rc, STVM_OK);
    cr_assert_eq(s.w_exit_rc, STVM_OK);
    static const int want[] = {1, 2, 3, 4, 5};
    trace_expect(&s.log, want, 5);
    cr_assert_null(stvm_mutex_owner(s.vm, s.m));
    SCENARIO_DONE(&s);
}

/* Waiters for one mutex that log their tags. */
typedef struct queue {
    stvm_vm *vm;
    stvm_mutex *m;
    trace_log log;
    int bad_line;
} queue;

typedef struct queued {
    queue *q;
    int tag;
} queued;

static void fifo_waiter(stvm_vm *vm, void *arg)
{
    queued *a = arg;
    GCHECK(a->q, stvm_mutex_enter(vm, a->q->m) == STVM_OK);
    GCHECK(a->q, stvm_mutex_owner(vm, a->q->m) == stvm_vm_active_process(vm));
    trace_add(&a->q->log, a->tag);
    GCHECK(a->q, stvm_mutex_exit(vm, a->q->m) == STVM_OK);
}

static void fifo_owner(stvm_vm *vm, void *arg)
{
    queue *q = arg;
    static queued a[3];
    static const int prios[3] = {35, 45, 40};
    GCHECK(q, stvm_mutex_enter(vm, q->m) == STVM_OK);
    for (int i = 0; i < 3; i++) {   /* each runs at once and blocks on the mutex */
        a[i] = (queued){q, prios[i]};
        GCHECK(q, stvm_spawn(vm, prios[i], "waiter", fifo_waiter, &a[i], NULL) == STVM_OK);
    }
    trace_add(&q->log, 1);
    GCHECK(q, stvm_mutex_exit(vm, q->m) == STVM_OK);
    trace_add(&q->log, 2);
}

Test(mutex, waiters_get_the_mutex_in_arrival_order_whatever_their_priority)
{
    queue q = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(q.vm, &q.m), STVM_OK);
    spawn(q.vm, 20, "owner", fifo_owner, &q);
    run_ok(q.vm);
    /* 35 gets it first (preempting the owner) and hands it to 45 on exit, which
     * preempts 35 at once; 45 hands it to 40, which runs after 45 finishes. */
    static const int want[] = {1, 35, 45, 40, 2};
    trace_expect(&q.log, want, 5);
    cr_assert_null(stvm_mutex_owner(q.vm, q.m));
    SCENARIO_DONE(&q);
}

typedef struct preempting_handoff {
    stvm_vm *vm;
    stvm_mutex *m;
    trace_log log;
    int waiter_enter_rc, waiter_exit_rc, owner_exit_rc;
    int bad_line;
} preempting_handoff;

static void high_mutex_waiter(stvm_vm *vm, void *arg)
{
    preempting_handoff *s = arg;
    s->waiter_enter_rc = stvm_mutex_enter(vm, s->m);
    trace_add(&s->log, 2);
    s->waiter_exit_rc = stvm_mutex_exit(vm, s->m);
}

static void low_mutex_owner(stvm_vm *vm, void *arg)
{
    preempting_handoff *s = arg;
    GCHECK(s, stvm_mutex_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_spawn(vm, 50, "high", high_mutex_waiter, s, NULL) == STVM_OK);
    trace_add(&s->log, 1);
    s->owner_exit_rc = stvm_mutex_exit(vm, s->m);   /* hands off; the waiter preempts */
    trace_add(&s->log, 3);
}

Test(mutex, exit_to_a_higher_priority_waiter_preempts_the_caller)
{
    preempting_handoff s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    spawn(s.vm, 30, "low", low_mutex_owner, &s);
    run_ok(s.vm);
    cr_assert_eq(s.waiter_enter_rc, STVM_OK);
    cr_assert_eq(s.waiter_exit_rc, STVM_OK);
    cr_assert_eq(s.owner_exit_rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    SCENARIO_DONE(&s);
}

/* ---- exit by a non-owner, try_enter ----------------------------------------------- */

/* A holder (hold_until_signalled) owns the mutex while an intruder tries it. */
typedef struct intrusion {
    stvm_vm *vm;
    stvm_mutex *m;
    stvm_semaphore *release;
    stvm_process *holder, *intruder;
    step foreign_exit, busy_try;   /* while the holder owns it */
    stvm_process *owner_after_release;
    step free_try, own_try, exit, last_exit;
    int bad_line;
} intrusion;

static void intruder(stvm_vm *vm, void *arg)
{
    intrusion *s = arg;
    take(&s->foreign_exit, stvm_mutex_exit(vm, s->m), vm, s->m);
    take(&s->busy_try, stvm_mutex_try_enter(vm, s->m), vm, s->m);
    stvm_semaphore_signal(vm, s->release);   /* the holder (50) runs and releases */
    s->owner_after_release = stvm_mutex_owner(vm, s->m);
    take(&s->free_try, stvm_mutex_try_enter(vm, s->m), vm, s->m);   /* free: taken */
    s->own_try.rc = stvm_mutex_try_enter(vm, s->m);                  /* own: re-entered */
    take(&s->exit, stvm_mutex_exit(vm, s->m), vm, s->m);   /* still ours: two try_enters */
    take(&s->last_exit, stvm_mutex_exit(vm, s->m), vm, s->m);
    s->intruder = stvm_vm_active_process(vm);
}

Test(mutex, exit_by_a_non_owner_is_eperm_and_try_enter_answers_ok_or_eagain)
{
    intrusion s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.release), STVM_OK);
    holder h = {s.m, s.release, &s.bad_line};
    s.holder = spawn(s.vm, 50, "holder", hold_until_signalled, &h);
    spawn(s.vm, 40, "intruder", intruder, &s);
    run_ok(s.vm);
    stvm_process *me = s.intruder;
    cr_assert_eq(s.foreign_exit.rc, STVM_EPERM);
    cr_assert_eq(s.foreign_exit.owner_after, s.holder, "the owner is unchanged");
    cr_assert_eq(s.busy_try.rc, STVM_EAGAIN, "%s", stvm_err_name(s.busy_try.rc));
    cr_assert_eq(s.busy_try.owner_after, s.holder);
    cr_assert_null(s.owner_after_release);
    cr_assert_eq(s.free_try.rc, STVM_OK);
    cr_assert_eq(s.free_try.owner_after, me);
    cr_assert_eq(s.own_try.rc, STVM_OK);
    cr_assert_eq(s.exit.rc, STVM_OK);
    cr_assert_eq(s.exit.owner_after, me);
    cr_assert_eq(s.last_exit.rc, STVM_OK);
    cr_assert_null(s.last_exit.owner_after);
    SCENARIO_DONE(&s);
}

Test(mutex, calls_from_the_host_or_with_bad_handles_fail)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_mutex *m;
    stvm_semaphore *sem;
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    cr_assert_eq(stvm_mutex_exit(vm, m), STVM_EPERM, "the host owns nothing");
    cr_assert_eq(stvm_mutex_enter(vm, m), STVM_ENOTPROC);
    cr_assert_eq(stvm_mutex_try_enter(vm, m), STVM_ENOTPROC);
    stvm_mutex *not_mutex = (stvm_mutex *)sem;
    cr_assert_eq(stvm_mutex_enter(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_enter(vm, not_mutex), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_exit(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_exit(vm, not_mutex), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_try_enter(NULL, m), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_free(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_free(vm, not_mutex), STVM_EINVAL);
    cr_assert_null(stvm_mutex_owner(vm, NULL));
    cr_assert_null(stvm_mutex_owner(NULL, m));
    cr_assert_eq(stvm_semaphore_excess(vm, sem), 0, "the semaphore is untouched");
    vm_done(vm);
}

/* ---- critical ----------------------------------------------------------------------- */

typedef struct critical {
    stvm_vm *vm;
    stvm_mutex *m;
    trace_log log;
    stvm_process *a, *b;
    int bad_line;
} critical;

/* A process calling critical: its tag, what critical answered, the owner after it. */
typedef struct critical_user_arg {
    critical *s;
    int tag;
    int rc;
    stvm_process *owner_after;
} critical_user_arg;

static void inside_critical(stvm_vm *vm, void *arg)
{
    critical_user_arg *a = arg;
    GCHECK(a->s, stvm_mutex_owner(vm, a->s->m) == stvm_vm_active_process(vm));
    trace_add(&a->s->log, a->tag);
    stvm_yield(vm);   /* let the other one try: it must wait */
    trace_add(&a->s->log, a->tag + 1);
}

static void critical_user(stvm_vm *vm, void *arg)
{
    critical_user_arg *a = arg;
    a->rc = stvm_mutex_critical(vm, a->s->m, inside_critical, a);
    a->owner_after = stvm_mutex_owner(vm, a->s->m);
}

Test(mutex, critical_runs_the_function_holding_the_mutex_one_process_at_a_time)
{
    critical s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    critical_user_arg a = {&s, 0, 0, NULL}, b = {&s, 10, 0, NULL};
    s.a = spawn(s.vm, 30, "A", critical_user, &a);
    s.b = spawn(s.vm, 30, "B", critical_user, &b);
    run_ok(s.vm);
    cr_assert_eq(a.rc, STVM_OK);
    cr_assert_eq(b.rc, STVM_OK);
    static const int want[] = {0, 1, 10, 11};
    trace_expect(&s.log, want, 4);
    cr_assert_eq(a.owner_after, s.b, "A's exit handed the mutex to B");
    cr_assert_null(b.owner_after);
    cr_assert_eq(stvm_mutex_critical(s.vm, s.m, NULL, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_critical(s.vm, s.m, inside_critical, &a), STVM_ENOTPROC);
    cr_assert_eq(s.log.n, 4, "fn was not called");
    SCENARIO_DONE(&s);
}

/* ---- terminate and ownership ------------------------------------------------------ */

/* The mutex passing on when its owner, or a waiter, goes away. */
typedef struct succession {
    stvm_vm *vm;
    stvm_mutex *m;
    stvm_semaphore *sem;   /* the owner's: never signalled, or its release */
    trace_log log;
    stvm_process *victim;
    int terminate_rc;
    int bad_line;
} succession;

/* A waiter for the mutex: its tag, what its enter and exit answered. */
typedef struct successor {
    succession *s;
    int tag;
    int enter_rc, exit_rc;
} successor;

static void owner_stuck(stvm_vm *vm, void *arg)
{
    succession *s = arg;
    GCHECK(s, stvm_mutex_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_mutex_enter(vm, s->m) == STVM_OK);   /* depth 2 */
    trace_add(&s->log, 1);
    stvm_semaphore_wait(vm, s->sem);   /* never signalled */
    trace_add(&s->log, 99);
}

static void next_in_line(stvm_vm *vm, void *arg)
{
    successor *a = arg;
    a->enter_rc = stvm_mutex_enter(vm, a->s->m);
    trace_add(&a->s->log, a->tag);
    a->exit_rc = stvm_mutex_exit(vm, a->s->m);
}

static void killer(stvm_vm *vm, void *arg)
{
    succession *s = arg;
    trace_add(&s->log, 2);
    s->terminate_rc = stvm_process_terminate(vm, s->victim);   /* the 50 waiter preempts */
    trace_add(&s->log, 4);
}

Test(mutex, terminating_the_owner_passes_the_mutex_to_the_next_waiter)
{
    succession s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    successor nx = {&s, 3, 0, 0};
    s.victim = spawn(s.vm, 60, "owner", owner_stuck, &s);
    spawn(s.vm, 50, "next", next_in_line, &nx);
    spawn(s.vm, 30, "killer", killer, &s);
    run_ok(s.vm);
    cr_assert_eq(s.terminate_rc, STVM_OK);
    cr_assert_eq(nx.enter_rc, STVM_OK, "the waiter's enter succeeded");
    cr_assert_eq(nx.exit_rc, STVM_OK, "one exit released it (depth restarts at 1)");
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&s.log, want, 4);
    cr_assert_null(stvm_mutex_owner(s.vm, s.m));
    cr_assert_eq(stvm_mutex_free(s.vm, s.m), STVM_OK);
    SCENARIO_DONE(&s);
}

static void finishes_holding(stvm_vm *vm, void *arg)
{
    succession *s = arg;
    GCHECK(s, stvm_mutex_enter(vm, s->m) == STVM_OK);
    trace_add(&s->log, 1);
    stvm_yield(vm);   /* the other one blocks on the mutex */
    trace_add(&s->log, 2);
    /* returns without exit */
}

Test(mutex, a_process_that_finishes_while_owning_hands_the_mutex_on)
{
    succession s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    successor nx = {&s, 3, 0, 0};
    spawn(s.vm, 30, "careless", finishes_holding, &s);
    spawn(s.vm, 30, "next", next_in_line, &nx);
    run_ok(s.vm);
    cr_assert_eq(nx.enter_rc, STVM_OK);
    cr_assert_eq(nx.exit_rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    cr_assert_null(stvm_mutex_owner(s.vm, s.m));
    SCENARIO_DONE(&s);
}

static void waiter_killer(stvm_vm *vm, void *arg)
{
    succession *s = arg;
    /* the holder owns the mutex waiting on sem; the victim and another wait for it */
    s->terminate_rc = stvm_process_terminate(vm, s->victim);
    stvm_semaphore_signal(vm, s->sem);   /* holder (60) exits: the other gets the mutex */
    trace_add(&s->log, 9);
}

Test(mutex, terminating_a_waiter_takes_it_out_of_the_queue)
{
    succession s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    holder h = {s.m, s.sem, &s.bad_line};
    successor first = {&s, 3, 0, 0}, second = {&s, 5, 0, 0};
    spawn(s.vm, 60, "holder", hold_until_signalled, &h);
    s.victim = spawn(s.vm, 50, "first", next_in_line, &first);
    spawn(s.vm, 50, "second", next_in_line, &second);
    spawn(s.vm, 30, "killer", waiter_killer, &s);
    run_ok(s.vm);
    cr_assert_eq(s.terminate_rc, STVM_OK);
    static const int want[] = {5, 9};
    trace_expect(&s.log, want, 2);
    cr_assert_eq(second.enter_rc, STVM_OK);
    cr_assert_eq(second.exit_rc, STVM_OK);
    cr_assert_null(stvm_mutex_owner(s.vm, s.m));
    SCENARIO_DONE(&s);
}

/* A waiter suspended while it waits for the mutex, then resumed. */
typedef struct aborted_enter {
    stvm_vm *vm;
    stvm_mutex *m;
    stvm_semaphore *release;
    trace_log log;
    stvm_process *holder, *waiter;
    step waiter_enter;   /* cut short by the suspend */
    int waiter_exit_rc;
    int suspend_rc, resume_rc;
    stvm_process_state suspended_state;
    stvm_process *owner_after_release;
    int bad_line;
} aborted_enter;

static void aborted_mutex_waiter(stvm_vm *vm, void *arg)
{
    aborted_enter *s = arg;
    /* blocks; suspended off the queue */
    take(&s->waiter_enter, stvm_mutex_enter(vm, s->m), vm, s->m);
    trace_add(&s->log, 2);
    s->waiter_exit_rc = stvm_mutex_exit(vm, s->m);    /* it owns nothing */
}

static void mutex_waiter_suspender(stvm_vm *vm, void *arg)
{
    aborted_enter *s = arg;
    s->suspend_rc = stvm_process_suspend(vm, s->waiter);
    s->suspended_state = gstate(s->vm, s->waiter);
    trace_add(&s->log, 1);
    s->resume_rc = stvm_process_resume(vm, s->waiter);   /* 50 > 30: runs now */
    trace_add(&s->log, 3);
    stvm_semaphore_signal(vm, s->release);               /* the holder exits */
    s->owner_after_release = stvm_mutex_owner(vm, s->m);
}

Test(mutex, a_waiter_suspended_off_the_queue_gets_estate_and_never_the_mutex)
{
    aborted_enter s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.release), STVM_OK);
    holder h = {s.m, s.release, &s.bad_line};
    s.holder = spawn(s.vm, 60, "holder", hold_until_signalled, &h);
    s.waiter = spawn(s.vm, 50, "waiter", aborted_mutex_waiter, &s);
    spawn(s.vm, 30, "suspender", mutex_waiter_suspender, &s);
    run_ok(s.vm);
    cr_assert_eq(s.suspend_rc, STVM_OK);
    cr_assert_eq(s.suspended_state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(s.resume_rc, STVM_OK);
    cr_assert_eq(s.waiter_enter.rc, STVM_ESTATE, "enter returned %s",
                 stvm_err_name(s.waiter_enter.rc));
    cr_assert_eq(s.waiter_enter.owner_after, s.holder, "the holder still owns it");
    cr_assert_eq(s.waiter_exit_rc, STVM_EPERM);
    cr_assert_null(s.owner_after_release, "released by the holder, handed to nobody");
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    SCENARIO_DONE(&s);
}

/* ---- free --------------------------------------------------------------------------- */

typedef struct owned {
    stvm_vm *vm;
    stvm_mutex *m;
    stvm_semaphore *release;
    int bad_line;
} owned;

static void hold_forever(stvm_vm *vm, void *arg)
{
    owned *s = arg;
    GCHECK(s, stvm_mutex_enter(vm, s->m) == STVM_OK);
    stvm_semaphore_wait(vm, s->release);
    GCHECK(s, stvm_mutex_exit(vm, s->m) == STVM_OK);
}

Test(mutex, free_of_an_owned_mutex_answers_einuse)
{
    owned s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.release), STVM_OK);
    stvm_process *p = spawn(s.vm, 40, "holder", hold_forever, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_mutex_owner(s.vm, s.m), p);
    cr_assert_eq(stvm_mutex_free(s.vm, s.m), STVM_EINUSE);
    cr_assert_eq(stvm_mutex_owner(s.vm, s.m), p, "still there, still owned");
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.release), STVM_OK);
    run_ok(s.vm);
    cr_assert_null(stvm_mutex_owner(s.vm, s.m));
    stvm_stats before, after;
    stvm_vm_get_stats(s.vm, &before);
    cr_assert_eq(stvm_mutex_free(s.vm, s.m), STVM_OK);
    stvm_vm_get_stats(s.vm, &after);
    cr_assert_eq(after.objects_live, before.objects_live - 1);
    SCENARIO_DONE(&s);
}

/* ---- the re-entry limit ------------------------------------------------------------ */

/* Reaching 2^32 - 1 nested enters the honest way takes minutes; the depth is set just
 * below the limit instead (white-box: the mutex struct of vm/objects.h). */
typedef struct deep {
    stvm_vm *vm;
    stvm_mutex *m;
    stvm_semaphore *go;
    int try_at_limit, try_past, enter_past;
    stvm_process *owner_after_exit;
    int bad_line;
} deep;

static void deep_owner(stvm_vm *vm, void *arg)
{
    deep *s = arg;
    GCHECK(s, stvm_mutex_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_semaphore_wait(vm, s->go) == STVM_OK);   /* the host deepens it */
    s->try_at_limit = stvm_mutex_try_enter(vm, s->m);
    s->try_past = stvm_mutex_try_enter(vm, s->m);
    s->enter_past = stvm_mutex_enter(vm, s->m);
    GCHECK(s, stvm_mutex_exit(vm, s->m) == STVM_OK);
    s->owner_after_exit = stvm_mutex_owner(vm, s->m);
    GCHECK(s, stvm_semaphore_wait(vm, s->go) == STVM_OK);   /* the host makes it 1 */
    GCHECK(s, stvm_mutex_exit(vm, s->m) == STVM_OK);
}

Test(mutex, try_enter_and_enter_stop_at_the_same_depth_limit_and_change_nothing)
{
    deep s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.go), STVM_OK);
    stvm_process *p = spawn(s.vm, 40, "deep", deep_owner, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    s.m->depth = UINT32_MAX - 1;
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.go), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    cr_assert_eq(s.try_at_limit, STVM_OK, "the last enter that fits");
    cr_assert_eq(s.try_past, STVM_ERANGE, "try_enter past the limit");
    cr_assert_eq(s.enter_past, STVM_ERANGE, "enter past the limit");
    cr_assert_eq(s.m->depth, UINT32_MAX - 1, "one exit after the refusals");
    cr_assert_eq(s.owner_after_exit, p, "still owned: the refusals did not wrap the depth");
    s.m->depth = 1;
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.go), STVM_OK);
    RUN_OK_GREEN(&s);
    cr_assert_null(stvm_mutex_owner(s.vm, s.m));
    vm_done(s.vm);
}
