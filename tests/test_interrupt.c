/*
 * Interrupts (stvm_process_interrupt), the give-back rule of the one blocking routine,
 * Semaphore>>critical: (stvm_semaphore_critical), runs with a time limit
 * (stvm_call_within_ms/us) and the terminate that completes a cleanup in progress. All on
 * the simulated clock.
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

typedef struct intr {
    stvm_vm *vm;
    stvm_semaphore *sem, *sem2;
    stvm_mutex *m;
    stvm_process *victim, *other;
    trace_log log;
    int rc[8];                 /* what the victim's calls answered, in order */
    int nrc;
    int ran_in_victim;         /* interrupt functions that ran with the victim active */
    int interrupt_rc;
    uint64_t at_us;
    int bad_line;
} intr;

static stvm_vm *sim(void)
{
    return vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
}

static void note(intr *t, int rc)
{
    if (t->nrc < 8)
        t->rc[t->nrc++] = rc;
}

/* An interrupt function: logs 100 and notes that it ran in the victim. */
static void in_victim(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    if (stvm_vm_active_process(vm) == t->victim)
        t->ran_in_victim++;
    trace_add(&t->log, 100);
}

static void waits_on_sem(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    trace_add(&t->log, 1);
    note(t, stvm_semaphore_wait(vm, t->sem));
    trace_add(&t->log, 2);
}

static void interrupts_victim(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    trace_add(&t->log, 10);
    t->interrupt_rc = stvm_process_interrupt(vm, t->victim, in_victim, t);
    trace_add(&t->log, 11);
}

Test(interrupt, a_semaphore_wait_answers_eintr_after_the_function_ran_in_the_waiter)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.victim = spawn(t.vm, 40, "victim", waits_on_sem, &t);
    spawn(t.vm, 30, "interrupter", interrupts_victim, &t);
    RUN_OK_GREEN(&t);
    /* The victim (40) preempts the interrupter (30) at once, runs the function, then
     * its wait answers EINTR; the interrupter goes on afterwards. */
    trace_expect(&t.log, (int[]){1, 10, 100, 2, 11}, 5);
    cr_assert_eq(t.interrupt_rc, STVM_OK);
    cr_assert_eq(t.rc[0], STVM_EINTR);
    cr_assert_eq(t.ran_in_victim, 1);
    cr_assert_eq(stvm_semaphore_excess(t.vm, t.sem), 0, "nothing taken, nothing left");
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

static void enters_mutex(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_mutex_enter(vm, t->m));
    trace_add(&t->log, 2);
}

static void holds_mutex_then_interrupts(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_mutex_enter(vm, t->m);
    stvm_yield(vm);   /* the victim waits for the mutex */
    t->interrupt_rc = stvm_process_interrupt(vm, t->victim, NULL, NULL);
    GCHECK(t, stvm_mutex_owner(vm, t->m) == stvm_vm_active_process(vm));
    stvm_mutex_exit(vm, t->m);
    GCHECK(t, stvm_mutex_owner(vm, t->m) == NULL);
}

Test(interrupt, a_mutex_wait_answers_eintr_and_the_mutex_stays_with_its_owner)
{
    intr t = {.vm = sim()};
    stvm_mutex_new(t.vm, &t.m);
    spawn(t.vm, 30, "owner", holds_mutex_then_interrupts, &t);
    t.victim = spawn(t.vm, 30, "victim", enters_mutex, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc[0], STVM_EINTR);
    stvm_process_release(t.vm, t.victim);
    stvm_mutex_free(t.vm, t.m);
    SCENARIO_DONE(&t);
}

/* Woken by a signal, interrupted before it runs: the signal goes to the next waiter. */
static void signals_then_interrupts(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_semaphore_signal(vm, t->sem);   /* hands it to the victim, who runs later */
    t->interrupt_rc = stvm_process_interrupt(vm, t->victim, NULL, NULL);
    trace_add(&t->log, 10);
}

static void second_waiter(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_semaphore_wait(vm, t->sem));
    trace_add(&t->log, 3);
}

Test(interrupt, a_waiter_handed_a_signal_and_interrupted_before_it_runs_gives_it_back)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.victim = spawn(t.vm, 20, "victim", waits_on_sem, &t);
    spawn(t.vm, 20, "second", second_waiter, &t);
    spawn(t.vm, 20, "signaller", signals_then_interrupts, &t);   /* equal: no preemption */
    RUN_OK_GREEN(&t);
    /* Both wait (1), the signaller hands the signal to the victim and interrupts it:
     * the victim answers EINTR (2) and the second waiter gets the signal (3). */
    trace_expect(&t.log, (int[]){1, 10, 2, 3}, 4);
    cr_assert_eq(t.rc[0], STVM_EINTR, "the victim");
    cr_assert_eq(t.rc[1], STVM_OK, "the second waiter");
    cr_assert_eq(stvm_semaphore_excess(t.vm, t.sem), 0);
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

static void signals_then_terminates(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_semaphore_signal(vm, t->sem);
    stvm_process_terminate(vm, t->victim);
    trace_add(&t->log, 10);
}

Test(interrupt, a_waiter_handed_a_signal_and_terminated_before_it_runs_gives_it_back)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.victim = spawn(t.vm, 20, "victim", waits_on_sem, &t);
    spawn(t.vm, 20, "signaller", signals_then_terminates, &t);
    RUN_OK_GREEN(&t);
    trace_expect(&t.log, (int[]){1, 10}, 2);
    cr_assert_eq(stvm_semaphore_excess(t.vm, t.sem), 1, "the signal is back, not lost");
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

static void waits_for_mutex(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_mutex_enter(vm, t->m));
    if (t->rc[t->nrc - 1] == STVM_OK) {
        trace_add(&t->log, 3);
        stvm_mutex_exit(vm, t->m);
    }
}

static void hands_mutex_then_interrupts(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_mutex_enter(vm, t->m);
    stvm_yield(vm);                           /* both waiters queue on the mutex */
    stvm_process_set_priority(vm, stvm_vm_active_process(vm), 50);
    stvm_mutex_exit(vm, t->m);                /* handed to the victim, who has not run */
    stvm_process_interrupt(vm, t->victim, NULL, NULL);
    GCHECK(t, stvm_mutex_owner(vm, t->m) == t->other);
}

Test(interrupt, a_waiter_handed_a_mutex_and_interrupted_before_it_runs_hands_it_on)
{
    intr t = {.vm = sim()};
    stvm_mutex_new(t.vm, &t.m);
    spawn(t.vm, 30, "owner", hands_mutex_then_interrupts, &t);
    t.victim = spawn(t.vm, 30, "victim", waits_for_mutex, &t);
    t.other = spawn(t.vm, 30, "other", waits_for_mutex, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc[0], STVM_EINTR, "the victim");
    cr_assert_eq(t.rc[1], STVM_OK, "the other");
    trace_expect(&t.log, (int[]){3}, 1);
    stvm_process_release(t.vm, t.victim);
    stvm_process_release(t.vm, t.other);
    stvm_mutex_free(t.vm, t.m);
    SCENARIO_DONE(&t);
}

static void sleeps(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_delay_wait_ms(vm, 1000));
    t->at_us = stvm_vm_now_us(vm) - SIM_START;
    note(t, stvm_semaphore_wait_timeout_ms(vm, t->sem, 1000));
    note(t, stvm_process_join(vm, t->other, -1));
}

static void interrupts_three_times(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    for (int i = 0; i < 3; i++) {
        stvm_delay_wait_ms(vm, 10);
        stvm_process_interrupt(vm, t->victim, NULL, NULL);
    }
    stvm_process_terminate(vm, t->other);
}

static void idles(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_semaphore_wait(vm, t->sem2);
}

Test(interrupt, delay_timed_wait_and_join_answer_eintr_and_leave_no_delay_behind)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.sem2 = sem_make(t.vm);
    t.other = spawn(t.vm, 20, "other", idles, &t);
    t.victim = spawn(t.vm, 30, "victim", sleeps, &t);
    spawn(t.vm, 40, "interrupter", interrupts_three_times, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc[0], STVM_EINTR, "the Delay");
    cr_assert_eq(t.at_us, 10000, "left its Delay at the interrupt, not at its end");
    cr_assert_eq(t.rc[1], STVM_EINTR, "the timed wait");
    cr_assert_eq(t.rc[2], STVM_EINTR, "the join");
    cr_assert_eq(stvm_vm_now_us(t.vm) - SIM_START, 30000, "no Delay of the victim ran on");
    stvm_process_release(t.vm, t.victim);
    stvm_process_release(t.vm, t.other);
    SCENARIO_DONE(&t);
}

static void works_then_waits(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_yield(vm);                     /* the interrupter queues an interrupt meanwhile */
    trace_add(&t->log, 1);
    note(t, stvm_semaphore_try_wait(vm, t->sem));
}

static void interrupts_ready(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    t->interrupt_rc = stvm_process_interrupt(vm, t->victim, in_victim, t);
    trace_add(&t->log, 10);
}

Test(interrupt, a_ready_process_runs_the_function_when_it_next_runs_and_goes_on)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.victim = spawn(t.vm, 30, "victim", works_then_waits, &t);
    spawn(t.vm, 30, "interrupter", interrupts_ready, &t);
    RUN_OK_GREEN(&t);
    trace_expect(&t.log, (int[]){10, 100, 1}, 3);
    cr_assert_eq(t.ran_in_victim, 1);
    cr_assert_eq(t.rc[0], STVM_EAGAIN, "its next call is not interrupted");
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

static void interrupts_itself(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    t->victim = stvm_vm_active_process(vm);
    t->interrupt_rc = stvm_process_interrupt(vm, t->victim, in_victim, t);
    trace_add(&t->log, 1);
}

Test(interrupt, the_caller_itself_runs_the_function_at_once)
{
    intr t = {.vm = sim()};
    spawn(t.vm, 30, "self", interrupts_itself, &t);
    RUN_OK_GREEN(&t);
    trace_expect(&t.log, (int[]){100, 1}, 2);
    cr_assert_eq(t.interrupt_rc, STVM_OK);
    SCENARIO_DONE(&t);
}

static void logs_tag(stvm_vm *vm, void *arg)
{
    (void)vm;
    tagged *a = arg;
    trace_add(a->log, a->tag);
}

static void waits_in_interrupt(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    trace_add(&t->log, 50);
    note(t, stvm_semaphore_wait(vm, t->sem2));   /* an interrupt function may wait */
    trace_add(&t->log, 51);
}

static void interrupts_twice_then_signals(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    static tagged second;
    second = (tagged){&t->log, 60};
    stvm_yield(vm);   /* the victim waits */
    stvm_process_interrupt(vm, t->victim, waits_in_interrupt, t);
    stvm_process_interrupt(vm, t->victim, logs_tag, &second);
    trace_add(&t->log, 10);
    stvm_delay_wait_ms(vm, 1);   /* the victim runs the first function, which waits */
    stvm_semaphore_signal(vm, t->sem2);
    trace_add(&t->log, 11);
}

Test(interrupt, interrupts_run_oldest_first_and_may_wait)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.sem2 = sem_make(t.vm);
    t.victim = spawn(t.vm, 30, "victim", waits_on_sem, &t);
    spawn(t.vm, 30, "interrupter", interrupts_twice_then_signals, &t);
    RUN_OK_GREEN(&t);
    /* The victim waits (1); the interrupter queues two interrupts (10) and sleeps; the
     * first function runs in the victim and waits itself (50); the interrupter signals
     * (11): the first function ends (51), the second runs (60), then the victim's own
     * wait answers EINTR (2). */
    trace_expect(&t.log, (int[]){1, 10, 50, 11, 51, 60, 2}, 7);
    cr_assert_eq(t.rc[0], STVM_OK, "the interrupt's own wait");
    cr_assert_eq(t.rc[1], STVM_EINTR, "the victim's wait");
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

Test(interrupt, a_suspended_process_runs_the_function_when_resumed)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    cr_assert_eq(stvm_spawn_suspended(t.vm, 30, "victim", works_then_waits, &t, 0, &t.victim),
                 STVM_OK);
    cr_assert_eq(stvm_process_interrupt(t.vm, t.victim, in_victim, &t), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_EDEADLOCK, "only a suspended process");
    cr_assert_eq(t.log.n, 0, "suspended: nothing ran");
    cr_assert_eq(stvm_process_resume(t.vm, t.victim), STVM_OK);
    RUN_OK_GREEN(&t);
    trace_expect(&t.log, (int[]){100, 1}, 2);
    cr_assert_eq(t.ran_in_victim, 1);
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

static void nothing(stvm_vm *vm, void *arg)
{
    (void)vm, (void)arg;
}

Test(interrupt, refused_for_a_finished_process_and_the_vms_own_with_nothing_changed)
{
    intr t = {.vm = sim()};
    t.victim = spawn(t.vm, 30, "done", nothing, &t);
    run_ok(t.vm);
    cr_assert_eq(stvm_process_interrupt(t.vm, t.victim, in_victim, &t), STVM_ESTATE);
    cr_assert_eq(stvm_process_interrupt(t.vm, NULL, in_victim, &t), STVM_EINVAL);
    cr_assert_eq(stvm_process_interrupt(NULL, t.victim, in_victim, &t), STVM_EINVAL);
    cr_assert_eq(t.log.n, 0);
    stvm_process_release(t.vm, t.victim);
    vm_done(t.vm);
}

static void pending_interrupt_victim(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_semaphore_wait(vm, t->sem);
}

Test(interrupt, a_process_that_finishes_with_interrupts_pending_leaks_nothing)
{
    intr t = {.vm = sim()};
    cr_assert_eq(stvm_spawn_suspended(t.vm, 30, "victim", pending_interrupt_victim, &t, 0,
                                      &t.victim), STVM_OK);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(stvm_process_interrupt(t.vm, t.victim, in_victim, &t), STVM_OK);
    cr_assert_eq(stvm_process_terminate(t.vm, t.victim), STVM_OK);
    cr_assert_eq(t.log.n, 0, "a terminated process runs no interrupt");
    stvm_process_release(t.vm, t.victim);
    vm_done(t.vm);   /* under ASan, a leaked record fails here */
}

/* ---- Semaphore>>critical: ----------------------------------------------------------- */

static void critical_body(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    trace_add(&t->log, 5);
    stvm_semaphore_wait(vm, t->sem2);   /* terminated here: inside the critical section */
    trace_add(&t->log, 6);
}

static void enters_critical(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_semaphore_critical(vm, t->sem, critical_body, t));
}

static void terminates_victim_after_signal(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_semaphore_signal(vm, t->sem);   /* the victim may enter, but has not run */
    stvm_process_terminate(vm, t->victim);
}

static void takes_after(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_semaphore_wait_timeout_ms(vm, t->sem, 100));
}

Test(interrupt, semaphore_critical_terminated_after_its_wait_ends_gives_the_signal_back)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.sem2 = sem_make(t.vm);
    t.victim = spawn(t.vm, 30, "victim", enters_critical, &t);
    spawn(t.vm, 40, "terminator", terminates_victim_after_signal, &t);
    spawn(t.vm, 20, "later", takes_after, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.log.n, 0, "the victim never entered");
    cr_assert_eq(t.rc[0], STVM_OK, "a later taker gets the signal");
    cr_assert_eq(stvm_semaphore_excess(t.vm, t.sem), 0);
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

static void terminates_victim_inside(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_process_terminate(vm, t->victim);
}

Test(interrupt, semaphore_critical_terminated_inside_signals_on_its_way_out)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.sem2 = sem_make(t.vm);
    stvm_semaphore_signal(t.vm, t.sem);
    t.victim = spawn(t.vm, 40, "victim", enters_critical, &t);
    spawn(t.vm, 30, "terminator", terminates_victim_inside, &t);
    RUN_OK_GREEN(&t);
    trace_expect(&t.log, (int[]){5}, 1);
    cr_assert_eq(stvm_semaphore_excess(t.vm, t.sem), 1, "released by the cleanup");
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

static void critical_pops(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_ensure_pop(vm, false));   /* the library's cleanup is not the caller's */
}

static void enters_critical_pops(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_semaphore_critical(vm, t->sem, critical_pops, t));
}

Test(interrupt, semaphore_critical_keeps_its_cleanup_from_stvm_ensure_pop)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    stvm_semaphore_signal(t.vm, t.sem);
    spawn(t.vm, 30, "popper", enters_critical_pops, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc[0], STVM_ESTATE);
    cr_assert_eq(t.rc[1], STVM_OK);
    cr_assert_eq(stvm_semaphore_excess(t.vm, t.sem), 1);
    SCENARIO_DONE(&t);
}

/* ---- runs with a time limit ---------------------------------------------------------- */

static void sleeps_then_waits(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_delay_wait_ms(vm, 100));
    t->at_us = stvm_vm_now_us(vm) - SIM_START;
    note(t, stvm_semaphore_wait(vm, t->sem));   /* cancelled: at once */
    note(t, stvm_checkpoint(vm));
    note(t, stvm_work_us(vm, 10));
}

static void runs_within(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_call_within_ms(vm, sleeps_then_waits, t, 30));
    note(t, stvm_delay_wait_ms(vm, 1));   /* after the run: waits again */
}

Test(interrupt, call_within_cuts_the_run_short_at_its_time)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    spawn(t.vm, 30, "runner", runs_within, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc[0], STVM_EINTR, "the Delay inside");
    cr_assert_eq(t.at_us, 30000);
    cr_assert_eq(t.rc[1], STVM_EINTR, "a wait after the time ran out");
    cr_assert_eq(t.rc[2], STVM_EINTR, "a checkpoint");
    cr_assert_eq(t.rc[3], STVM_EINTR, "work");
    cr_assert_eq(t.rc[4], STVM_ETIMEDOUT, "the run");
    cr_assert_eq(t.rc[5], STVM_OK, "waits work again afterwards");
    cr_assert_eq(stvm_vm_now_us(t.vm) - SIM_START, 31000);
    SCENARIO_DONE(&t);
}

static void quick(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_delay_wait_ms(vm, 5));
}

static void runs_quick_within(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_call_within_us(vm, quick, t, 50000));
    note(t, stvm_delay_wait_ms(vm, 100));   /* the watchdog must not fire in here */
}

Test(interrupt, call_within_answers_ok_when_the_function_returns_in_time)
{
    intr t = {.vm = sim()};
    spawn(t.vm, 30, "runner", runs_quick_within, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc[0], STVM_OK);
    cr_assert_eq(t.rc[1], STVM_OK);
    cr_assert_eq(t.rc[2], STVM_OK);
    cr_assert_eq(stvm_vm_now_us(t.vm) - SIM_START, 105000);
    SCENARIO_DONE(&t);
}

static void inner_long(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_call_within_ms(vm, quick, t, 1000));     /* 5 ms, in time */
    note(t, stvm_delay_wait_ms(vm, 100));                 /* cut by the outer 20 ms */
}

static void runs_nested(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_call_within_ms(vm, inner_long, t, 20));
}

Test(interrupt, nested_runs_keep_their_own_limits)
{
    intr t = {.vm = sim()};
    spawn(t.vm, 30, "runner", runs_nested, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.rc[0], STVM_OK, "inner's Delay");
    cr_assert_eq(t.rc[1], STVM_OK, "inner run in time");
    cr_assert_eq(t.rc[2], STVM_EINTR, "cut by the outer limit");
    cr_assert_eq(t.rc[3], STVM_ETIMEDOUT, "outer run");
    cr_assert_eq(stvm_vm_now_us(t.vm) - SIM_START, 20000);
    SCENARIO_DONE(&t);
}

/* Found by fuzz_api (regress-run-within-caller-terminated): the watchdog waited on a
 * semaphore in the caller's frame, and only the run's own end terminated it. With the
 * caller terminated inside fn, the watchdog lived on, waiting on the dead caller's stack
 * (the invariant checker read it: SEGV under ASan's fake stacks), and at the limit
 * interrupted the dead caller through that frame. The run's end is now a cleanup of the
 * library's own, as Pharo's valueWithin:onTimeout: ends its watchdog in an ensure:. */
static void runs_within_then_waits(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_call_within_ms(vm, waits_on_sem, t, 50));
    trace_add(&t->log, 3);   /* never: the runner is terminated inside */
}

static void terminates_runner(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_stats before, after;
    stvm_vm_get_stats(vm, &before);   /* the runner and its watchdog among them */
    t->interrupt_rc = stvm_process_terminate(vm, t->victim);
    stvm_vm_get_stats(vm, &after);
    t->at_us = before.processes_live - after.processes_live;
    trace_add(&t->log, 10);
    note(t, stvm_delay_wait_ms(vm, 100));   /* past the limit the watchdog was set for */
    trace_add(&t->log, 11);
}

Test(interrupt, a_caller_terminated_inside_run_within_takes_its_watchdog_with_it)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    stvm_stats base;
    stvm_vm_get_stats(t.vm, &base);
    t.victim = spawn(t.vm, 30, "runner", runs_within_then_waits, &t);
    spawn(t.vm, 20, "terminator", terminates_runner, &t);
    RUN_OK_GREEN(&t);
    trace_expect(&t.log, (int[]){1, 10, 11}, 3);
    cr_assert_eq(t.interrupt_rc, STVM_OK);
    cr_assert_eq(t.at_us, 2, "%llu processes ended with the runner (it and its watchdog)",
                 (unsigned long long)t.at_us);
    cr_assert_eq(t.rc[0], STVM_OK, "the terminator's Delay");
    stvm_stats end;
    stvm_vm_get_stats(t.vm, &end);
    cr_assert_eq(end.processes_live, base.processes_live + 1, "the timing process only");
    cr_assert_eq(gstate(t.vm, t.victim), STVM_PROCESS_TERMINATED);
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

/* Found by fuzz_api after the change above (regress-run-within-caller-terminated-early):
 * the caller of a run could be terminated before fn, in the switches to its new
 * watchdog (priority 79) and to the timing process, before the run's end was
 * registered: the watchdog was left waiting on the dead caller's frame. The end is now
 * registered before anything can switch. */
static void runs_within_at_once(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_delay_wait_ms(vm, 1);   /* woken first, the terminator right behind */
    note(t, stvm_call_within_ms(vm, waits_on_sem, t, 50));   /* terminated before fn */
    trace_add(&t->log, 3);
}

static void starts_the_delay_scheduler(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_delay_wait_ms(vm, 0);
}

static void terminates_at_once(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_delay_wait_ms(vm, 1);
    stvm_stats before, after;
    stvm_vm_get_stats(vm, &before);
    t->interrupt_rc = stvm_process_terminate(vm, t->victim);
    stvm_vm_get_stats(vm, &after);
    t->at_us = before.processes_live - after.processes_live;
    trace_add(&t->log, 10);
}

Test(interrupt, a_caller_terminated_before_run_within_calls_fn_takes_its_watchdog_with_it)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    spawn(t.vm, 30, "warm-up", starts_the_delay_scheduler, &t);
    run_ok(t.vm);
    /* Both wake at 1 ms, the runner first; preempted by its new watchdog, it goes behind
     * the terminator, queued at the same priority (preemption_yields). */
    t.victim = spawn(t.vm, 30, "runner", runs_within_at_once, &t);
    spawn(t.vm, 30, "terminator", terminates_at_once, &t);
    RUN_OK_GREEN(&t);
    trace_expect(&t.log, (int[]){10}, 1);
    cr_assert_eq(t.nrc, 0, "the run never returned");
    cr_assert_eq(t.interrupt_rc, STVM_OK);
    cr_assert_eq(t.at_us, 2, "%llu processes ended with the runner (it and its watchdog)",
                 (unsigned long long)t.at_us);
    cr_assert_eq(gstate(t.vm, t.victim), STVM_PROCESS_TERMINATED);
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

/* The same run left unfinished at stvm_vm_free: its cleanup runs there, with no active
 * process, and everything goes (the sanitizer build finds a leak or a bad access). */
Test(interrupt, vm_free_with_a_caller_inside_run_within_leaves_nothing)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.victim = spawn(t.vm, 30, "runner", runs_within_then_waits, &t);
    cr_assert_eq(stvm_run_mode(t.vm, STVM_RUN_NOWAIT), 1);   /* it waits for its Delay */
    trace_expect(&t.log, (int[]){1}, 1);
    vm_check(t.vm);
    stvm_vm_free(t.vm);
}

static void cleanup_waits_long(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    trace_add(&t->log, 1);
    note(t, stvm_delay_wait_ms(vm, 1000));
    trace_add(&t->log, 2);
    note(t, stvm_semaphore_wait(vm, t->sem));   /* waits no more: EINTR at once */
    trace_add(&t->log, 3);
}

static void cleanup_after(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_semaphore_wait(vm, t->sem));
    trace_add(&t->log, 4);
}

static void victim_with_cleanups(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_ensure(vm, cleanup_after, t);
    stvm_ensure(vm, cleanup_waits_long, t);
    stvm_semaphore_wait(vm, t->sem);
}

static void terminates_twice_10ms_apart(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_process_terminate(vm, t->victim);   /* the first cleanup starts its Delay */
    stvm_delay_wait_ms(vm, 10);
    trace_add(&t->log, 10);
    t->interrupt_rc = stvm_process_terminate(vm, t->victim);
    trace_add(&t->log, 11);
}

Test(interrupt, a_second_terminate_completes_the_cleanup_in_progress_and_the_rest_without_waits)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.victim = spawn(t.vm, 30, "victim", victim_with_cleanups, &t);
    spawn(t.vm, 20, "terminator", terminates_twice_10ms_apart, &t);
    RUN_OK_GREEN(&t);
    trace_expect(&t.log, (int[]){1, 10, 2, 3, 4, 11}, 6);
    cr_assert_eq(t.interrupt_rc, STVM_OK);
    cr_assert_eq(t.rc[0], STVM_EINTR, "the Delay in progress");
    cr_assert_eq(t.rc[1], STVM_EINTR, "a later wait in that cleanup");
    cr_assert_eq(t.rc[2], STVM_EINTR, "a wait in the next cleanup");
    cr_assert_eq(stvm_vm_now_us(t.vm) - SIM_START, 10000);
    cr_assert_eq(gstate(t.vm, t.victim), STVM_PROCESS_TERMINATED);
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

static void cleanup_terminates_itself(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    note(t, stvm_process_terminate(vm, stvm_vm_active_process(vm)));
    trace_add(&t->log, 1);
    note(t, stvm_semaphore_wait(vm, t->sem));
    trace_add(&t->log, 2);
}

static void victim_terminating_itself(stvm_vm *vm, void *arg)
{
    intr *t = arg;
    stvm_ensure(vm, cleanup_terminates_itself, t);
}

Test(interrupt, a_cleanup_terminating_its_own_process_goes_on_without_waits)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.victim = spawn(t.vm, 30, "victim", victim_terminating_itself, &t);
    RUN_OK_GREEN(&t);
    trace_expect(&t.log, (int[]){1, 2}, 2);
    cr_assert_eq(t.rc[0], STVM_OK);
    cr_assert_eq(t.rc[1], STVM_EINTR);
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

/* ---- the trace ------------------------------------------------------------------------ */

static int count_kind(stvm_vm *vm, int kind, int64_t detail)
{
    int n = 0;
    stvm_trace_event ev;
    for (size_t i = 0; stvm_trace_get(vm, i, &ev) == STVM_OK; i++)
        n += ev.kind == kind && ev.detail == detail;
    return n;
}

Test(interrupt, the_trace_shows_interrupts_give_backs_and_cancelled_waits)
{
    intr t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    cr_assert_eq(stvm_trace_start(t.vm, 4096), STVM_OK);
    t.victim = spawn(t.vm, 20, "victim", waits_on_sem, &t);
    spawn(t.vm, 20, "signaller", signals_then_interrupts, &t);
    spawn(t.vm, 20, "second", second_waiter, &t);
    spawn(t.vm, 30, "runner", runs_within, &t);
    RUN_OK_GREEN(&t);
    stvm_trace_stop(t.vm);
    cr_assert_geq(count_kind(t.vm, STVM_TRACE_INTERRUPT, STVM_TRACE_INTR_QUEUED), 2);
    cr_assert_geq(count_kind(t.vm, STVM_TRACE_INTERRUPT, STVM_TRACE_INTR_CANCELLED), 1);
    cr_assert_eq(count_kind(t.vm, STVM_TRACE_GIVEN_BACK, STVM_TRACE_GAVE_SIGNAL), 1);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(stvm_trace_write_text(t.vm, f), STVM_OK);
    fclose(f);
    cr_assert(strstr(text, "gives back a semaphore's signal"), "%s", text);
    cr_assert(strstr(text, "cancelled: a wait answers EINTR at once"));
    free(text);
    check_json_of(t.vm);
    stvm_process_release(t.vm, t.victim);
    SCENARIO_DONE(&t);
}

/* Found by the model: an interrupt that makes its target give back a hand-off wakes the
 * next waiter; when that one is higher than the interrupting process it runs at once (the
 * preemption rule), not at the caller's next scheduling point. */
typedef struct {
    stvm_semaphore *sem;
    stvm_process *first;
    bool high_ran;
    bool seen_at_return;
} giveback_world;

static void gb_waiter(stvm_vm *vm, void *arg)
{
    giveback_world *w = arg;
    if (stvm_semaphore_wait(vm, w->sem) == STVM_OK)
        w->high_ran = true;
}

static void gb_caller(stvm_vm *vm, void *arg)
{
    giveback_world *w = arg;
    cr_assert_eq(stvm_semaphore_signal(vm, w->sem), STVM_OK);   /* handed to first, lower */
    cr_assert_eq(stvm_process_interrupt(vm, w->first, NULL, NULL), STVM_OK);
    w->seen_at_return = w->high_ran;
}

Test(interrupt, a_give_back_that_wakes_a_higher_waiter_lets_it_run_at_once)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    giveback_world w = {0};
    w.sem = sem_make(vm);
    w.first = spawn(vm, 20, "first", gb_waiter, &w);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    stvm_process *high = spawn(vm, 30, "high", gb_waiter, &w);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);   /* both wait, first in front */
    spawn(vm, 25, "caller", gb_caller, &w);
    cr_assert_eq(stvm_run(vm), STVM_OK);   /* first answers EINTR and returns */
    cr_assert(w.high_ran);
    cr_assert(w.seen_at_return, "the higher waiter ran only after the interrupt returned");
    cr_assert_eq(stvm_process_release(vm, w.first), STVM_OK);
    cr_assert_eq(stvm_process_release(vm, high), STVM_OK);
    vm_done(vm);
}
