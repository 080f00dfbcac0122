/*
 * Monitors (stvm_monitor_*): re-entry with a depth, exit by a non-owner, entrants served
 * in arrival order, condition waits that release the monitor whatever its depth and take
 * it again with that depth on every way out (signal, timeout on the simulated clock,
 * interrupt, suspend, cancellation), signal and signal-all order, named queues and
 * Pharo's fall-back to the default queue, predicates, termination at every point of a
 * wait, the give-back of a monitor or a signal its waiter never ran to take, freeing, the
 * trace and process info. Pharo's own MonitorTest is test_pharo_monitor.c.
 */
#include "helpers.h"

TestSuite(monitor, .timeout = 30);

typedef struct ms {
    stvm_vm *vm;
    stvm_monitor *m;
    stvm_semaphore *sem;
    stvm_process *victim, *other;
    trace_log log;
    int rc[8];
    int nrc;
    int64_t depth[8];
    uint64_t at_ms[8];
    int counter;
    int queue;
    int bad_line;
} ms;

static ms make(void)
{
    ms s = {.vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0)};
    cr_assert_eq(stvm_monitor_new(s.vm, &s.m), STVM_OK);
    s.sem = sem_make(s.vm);
    return s;
}

static void note(ms *s, int rc)
{
    if (s->nrc < 8) {
        s->depth[s->nrc] = stvm_monitor_depth(s->vm, s->m);
        s->at_ms[s->nrc] = (stvm_vm_now_us(s->vm) - SIM_START) / 1000;
        s->rc[s->nrc++] = rc;
    }
}

static bool owns(ms *s)
{
    return stvm_monitor_owner(s->vm, s->m) == stvm_vm_active_process(s->vm);
}

/* Spawn with a held handle; from green processes too (no Criterion there). */
static stvm_process *go(stvm_vm *vm, int prio, const char *name, stvm_fn fn, void *arg)
{
    stvm_process *p = NULL;
    if (stvm_spawn(vm, prio, name, fn, arg, &p) != STVM_OK)
        abort();
    return p;
}

static void done_with(ms *s)
{
    ASSERT_GREEN_OK(s);
    cr_assert_null(stvm_monitor_owner(s->vm, s->m));
    cr_assert_eq(stvm_monitor_free(s->vm, s->m), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(s->vm, s->sem), STVM_OK);
    vm_done(s->vm);
}

static void release(ms *s, stvm_process *p)
{
    if (p)
        cr_assert_eq(stvm_process_release(s->vm, p), STVM_OK);
}

/* ---- entering and leaving -------------------------------------------------------------- */

static void enters_three_times(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    for (int i = 1; i <= 3; i++) {
        GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
        GCHECK(s, owns(s) && stvm_monitor_depth(vm, s->m) == i);
    }
    GCHECK(s, stvm_monitor_try_enter(vm, s->m) == STVM_OK && stvm_monitor_depth(vm, s->m) == 4);
    for (int i = 3; i >= 0; i--) {
        GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
        GCHECK(s, stvm_monitor_depth(vm, s->m) == i);
    }
    GCHECK(s, stvm_monitor_owner(vm, s->m) == NULL);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_EPERM);
}

Test(monitor, the_owner_enters_again_and_each_exit_leaves_one_level)
{
    ms s = make();
    go(s.vm, 40, "owner", enters_three_times, &s);
    run_ok(s.vm);
    done_with(&s);
}

static void holds_at_depth_two(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_semaphore_wait(vm, s->sem) == STVM_OK);
    stvm_monitor_exit(vm, s->m);
    stvm_monitor_exit(vm, s->m);
}

static void meddles(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_EPERM);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == STVM_EPERM);
    GCHECK(s, stvm_monitor_signal_all(vm, s->m) == STVM_EPERM);
    GCHECK(s, stvm_monitor_wait(vm, s->m) == STVM_EPERM);
    GCHECK(s, stvm_monitor_wait_timeout_ms(vm, s->m, 5) == STVM_EPERM);
    GCHECK(s, stvm_monitor_try_enter(vm, s->m) == STVM_EAGAIN);
    GCHECK(s, stvm_monitor_depth(vm, s->m) == 2 && stvm_monitor_owner(vm, s->m) == s->victim);
    stvm_semaphore_signal(vm, s->sem);
}

Test(monitor, a_non_owner_cannot_exit_signal_or_wait_and_changes_nothing)
{
    ms s = make();
    s.victim = go(s.vm, 40, "owner", holds_at_depth_two, &s);
    go(s.vm, 30, "meddler", meddles, &s);
    cr_assert_eq(stvm_monitor_exit(s.vm, s.m), STVM_EPERM);   /* the host owns nothing */
    cr_assert_eq(stvm_monitor_enter(s.vm, s.m), STVM_ENOTPROC);
    run_ok(s.vm);
    release(&s, s.victim);
    done_with(&s);
}

static void enters_and_logs(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    int me = ++s->counter;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    trace_add(&s->log, me);
    GCHECK(s, stvm_monitor_depth(vm, s->m) == 1);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

static void holds_then_lets_three_in(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    for (int i = 0; i < 3; i++)
        go(vm, 30, "entrant", enters_and_logs, s);
    stvm_delay_wait_ms(vm, 5);   /* all three wait to enter meanwhile */
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
    /* Handed to the first entrant: no barging back in, though it has not run yet. */
    GCHECK(s, stvm_monitor_try_enter(vm, s->m) == STVM_EAGAIN);
    trace_add(&s->log, 0);
}

Test(monitor, entrants_are_served_in_arrival_order_and_the_last_exit_hands_it_on)
{
    ms s = make();
    go(s.vm, 40, "holder", holds_then_lets_three_in, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){0, 1, 2, 3}, 4);
    done_with(&s);
}

static void inside(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, owns(s));
    trace_add(&s->log, (int)stvm_monitor_depth(vm, s->m));
}

static void leaves_inside(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_monitor_exit(vm, s->m);
}

static void uses_critical(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_critical(vm, s->m, inside, s) == STVM_OK);
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_critical(vm, s->m, inside, s) == STVM_OK);
    GCHECK(s, stvm_monitor_depth(vm, s->m) == 1);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_critical(vm, s->m, leaves_inside, s) == STVM_EPERM);
    GCHECK(s, stvm_monitor_critical(vm, s->m, NULL, s) == STVM_EINVAL);
    GCHECK(s, stvm_monitor_owner(vm, s->m) == NULL);
}

Test(monitor, critical_runs_fn_one_level_deeper_and_eperm_when_fn_left_the_monitor)
{
    ms s = make();
    go(s.vm, 40, "critical", uses_critical, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){1, 2}, 2);
    done_with(&s);
}

/* A cleanup fn registers and does not pop: it is the process's, as stvm_ensure says,
 * and runs when the process finishes; critical's own way out must not drop it. */
static void counts_cleanup(stvm_vm *vm, void *arg)
{
    (void)vm;
    trace_add(&((ms *)arg)->log, 7);
}

static void registers_a_cleanup(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_ensure(vm, counts_cleanup, s) == STVM_OK);
}

static void leaves_a_cleanup_inside_critical(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_critical(vm, s->m, registers_a_cleanup, s) == STVM_OK);
    GCHECK(s, stvm_monitor_owner(vm, s->m) == NULL);
    trace_add(&s->log, 1);   /* the cleanup has not run yet: the process goes on */
}

Test(monitor, a_cleanup_fn_leaves_registered_inside_critical_stays_and_runs_when_the_process_ends)
{
    ms s = make();
    go(s.vm, 40, "leaves", leaves_a_cleanup_inside_critical, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){1, 7}, 2);
    done_with(&s);
}

static void times_out_entering(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    note(s, stvm_monitor_enter_timeout_ms(vm, s->m, 10));
    note(s, stvm_monitor_enter_timeout_ms(vm, s->m, 0));
    note(s, stvm_monitor_enter_timeout_ms(vm, s->m, 100));   /* the owner leaves at 30 */
    stvm_monitor_exit(vm, s->m);
}

static void holds_for_30_ms(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    stvm_delay_wait_ms(vm, 30);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, a_timed_enter_times_out_on_the_simulated_clock_while_another_owns_it)
{
    ms s = make();
    go(s.vm, 40, "holder", holds_for_30_ms, &s);
    go(s.vm, 30, "timed", times_out_entering, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_ETIMEDOUT);
    cr_assert_eq(s.at_ms[0], 10);
    cr_assert_eq(s.rc[1], STVM_ETIMEDOUT);
    cr_assert_eq(s.rc[2], STVM_OK);
    cr_assert_eq(s.at_ms[2], 30);
    cr_assert_eq(s.depth[2], 1);
    done_with(&s);
}

/* ---- waiting and signalling -------------------------------------------------------------- */

/* Enters three times, waits on s->queue, logs what it got back. */
static void waits_at_depth_three(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    for (int i = 0; i < 3; i++)
        GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    note(s, stvm_monitor_wait_on(vm, s->m, s->queue));
    GCHECK(s, owns(s));
    for (int i = 0; i < 3; i++)
        GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

static void enters_and_signals(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);   /* free: the waiter released it */
    GCHECK(s, stvm_monitor_depth(vm, s->m) == 1);
    GCHECK(s, stvm_monitor_signal_on(vm, s->m, s->queue) == 1);
    GCHECK(s, owns(s));   /* the signaller keeps it */
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, a_wait_releases_the_monitor_whatever_its_depth_and_retakes_that_depth)
{
    ms s = make();
    go(s.vm, 40, "waiter", waits_at_depth_three, &s);
    go(s.vm, 30, "signaller", enters_and_signals, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_OK);
    cr_assert_eq(s.depth[0], 3);
    done_with(&s);
}

static void waits_and_logs(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    int me = ++s->counter;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    int rc = stvm_monitor_wait_on(vm, s->m, s->queue);
    GCHECK(s, owns(s));
    trace_add(&s->log, rc == STVM_OK ? me : -me);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

static void signals_one_at_a_time(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    for (int i = 0; i < 3; i++) {
        GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
        GCHECK(s, stvm_monitor_signal(vm, s->m) == 1);
        GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
        stvm_delay_wait_ms(vm, 1);
        trace_add(&s->log, 0);
    }
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 0);   /* nobody waits: lost */
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, signal_wakes_the_longest_waiter_first)
{
    ms s = make();
    for (int i = 0; i < 3; i++)
        go(s.vm, 30, "waiter", waits_and_logs, &s);
    go(s.vm, 20, "signaller", signals_one_at_a_time, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){1, 0, 2, 0, 3, 0}, 6);
    done_with(&s);
}

static void signals_then_waits_a_little(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 0);
    note(s, stvm_monitor_wait_timeout_ms(vm, s->m, 10));   /* the signal was not kept */
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, a_signal_with_nobody_waiting_is_lost)
{
    ms s = make();
    go(s.vm, 30, "p", signals_then_waits_a_little, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_ETIMEDOUT);
    cr_assert_eq(s.at_ms[0], 10);
    done_with(&s);
}

static void signals_all(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal_all(vm, s->m) == 3);
    trace_add(&s->log, 0);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, signal_all_wakes_every_waiter_oldest_first_and_answers_how_many)
{
    ms s = make();
    for (int i = 0; i < 3; i++)
        go(s.vm, 30, "waiter", waits_and_logs, &s);
    go(s.vm, 20, "signaller", signals_all, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){0, 1, 2, 3}, 4);
    done_with(&s);
}

static void signals_and_watches(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 1);
    /* The higher waiter ran at the signal and now waits to take the monitor again. */
    stvm_process_info info;
    GCHECK(s, stvm_process_get_info(vm, s->victim, &info) == STVM_OK);
    GCHECK(s, info.state == STVM_PROCESS_WAITING && info.waiting_on &&
                  strcmp(info.waiting_on, "monitor") == 0 && info.waiting_object == s->m);
    trace_add(&s->log, 0);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);   /* hands it over: it runs here */
    trace_add(&s->log, 9);
}

static void high_waiter(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    int rc = stvm_monitor_wait(vm, s->m);
    GCHECK(s, rc == STVM_OK && owns(s));
    trace_add(&s->log, 1);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

static void watches_waiter(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_process_info info;
    GCHECK(s, stvm_process_get_info(vm, s->victim, &info) == STVM_OK);
    GCHECK(s, info.waiting_on && strcmp(info.waiting_on, "monitor condition") == 0 &&
                  info.waiting_object == s->m);
    char buf[256];
    GCHECK(s, stvm_vm_blocked_report(vm, buf, sizeof buf) > 0 && strstr(buf, "monitor condition"));
    signals_and_watches(vm, s);
}

Test(monitor, a_woken_higher_waiter_runs_at_the_signal_then_waits_to_take_the_monitor_again)
{
    ms s = make();
    s.victim = go(s.vm, 50, "high", high_waiter, &s);
    go(s.vm, 30, "low", watches_waiter, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){0, 1, 9}, 3);
    release(&s, s.victim);
    done_with(&s);
}

static void waits_10_ms(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    note(s, stvm_monitor_wait_timeout_ms(vm, s->m, 10));
    GCHECK(s, owns(s));
    note(s, stvm_monitor_wait_timeout_ms(vm, s->m, 0));   /* at once, keeping it */
    stvm_monitor_exit(vm, s->m);
    stvm_monitor_exit(vm, s->m);
}

Test(monitor, a_timed_out_wait_takes_the_monitor_again_before_it_answers_etimedout)
{
    ms s = make();
    go(s.vm, 40, "waiter", waits_10_ms, &s);
    go(s.vm, 30, "holder", holds_for_30_ms, &s);   /* enters at 0, leaves at 30 */
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_ETIMEDOUT);
    cr_assert_eq(s.at_ms[0], 30, "it timed out at 10 but owned the monitor only at %llu",
                 (unsigned long long)s.at_ms[0]);
    cr_assert_eq(s.depth[0], 2);
    cr_assert_eq(s.rc[1], STVM_ETIMEDOUT);
    cr_assert_eq(s.at_ms[1], 30);
    done_with(&s);
}

static void waits_100_ms(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    note(s, stvm_monitor_wait_timeout_ms(vm, s->m, 100));
    stvm_monitor_exit(vm, s->m);
}

static void signals_at_7_ms(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_delay_wait_ms(vm, 7);
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 1);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, a_timed_wait_signalled_in_time_answers_ok_at_the_signal)
{
    ms s = make();
    go(s.vm, 40, "waiter", waits_100_ms, &s);
    go(s.vm, 30, "signaller", signals_at_7_ms, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_OK);
    cr_assert_eq(s.at_ms[0], 7);
    stvm_stats st = stats_of(s.vm);
    cr_assert_eq(st.delays_unscheduled, 1, "the timeout's Delay is unscheduled");
    done_with(&s);
}

/* ---- named queues ------------------------------------------------------------------------ */

typedef struct qw {
    ms *s;
    int queue;
    int tag;
} qw;

static void waits_on_queue(stvm_vm *vm, void *arg)
{
    qw *w = arg;
    ms *s = w->s;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_wait_on(vm, s->m, w->queue) == STVM_OK);
    trace_add(&s->log, w->tag);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

static void signals_the_named_queues(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    /* default: 1, 2; queue 2: 21, 22; queue 5: 51 */
    GCHECK(s, stvm_monitor_signal_on(vm, s->m, 2) == 1);   /* 21 */
    trace_add(&s->log, 0);
    GCHECK(s, stvm_monitor_signal_on(vm, s->m, 3) == 1);   /* nobody on 3: default's 1 */
    trace_add(&s->log, 0);
    GCHECK(s, stvm_monitor_signal_all_on(vm, s->m, 2) == 2);   /* default's 2, then 22 */
    trace_add(&s->log, 0);
    GCHECK(s, stvm_monitor_signal_all(vm, s->m) == 0);
    GCHECK(s, stvm_monitor_signal_really_all(vm, s->m) == 1);   /* 51 */
    trace_add(&s->log, 0);
    GCHECK(s, stvm_monitor_signal_on(vm, s->m, STVM_MONITOR_QUEUES) == STVM_EINVAL);
    GCHECK(s, stvm_monitor_wait_on(vm, s->m, -1) == STVM_EINVAL);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, named_queues_follow_pharos_signal_rules)
{
    ms s = make();
    qw w[] = {{&s, 0, 1}, {&s, 0, 2}, {&s, 2, 21}, {&s, 2, 22}, {&s, 5, 51}};
    for (int i = 0; i < 5; i++)
        go(s.vm, 40, "waiter", waits_on_queue, &w[i]);
    go(s.vm, 30, "signaller", signals_the_named_queues, &s);
    run_ok(s.vm);
    /* Higher waiters run at their signal and queue to re-enter; each gets the monitor
     * when the signaller leaves, in the order they queued. */
    trace_expect(&s.log, (int[]){0, 0, 0, 0, 21, 1, 2, 22, 51}, 9);
    done_with(&s);
}

/* ---- predicates ---------------------------------------------------------------------------- */

static bool below_three(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, owns(s));
    trace_add(&s->log, 100 + s->counter);
    return s->counter < 3;
}

static void waits_while_below_three(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    note(s, s->queue ? stvm_monitor_wait_while_on(vm, s->m, s->queue, below_three, s)
                     : stvm_monitor_wait_while(vm, s->m, below_three, s));
    GCHECK(s, owns(s) && s->counter == 3);
    stvm_monitor_exit(vm, s->m);
}

static bool at_least_three(stvm_vm *vm, void *arg)
{
    return !below_three(vm, arg);
}

static void waits_until_three(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    note(s, s->queue ? stvm_monitor_wait_until_on(vm, s->m, s->queue, at_least_three, s)
                     : stvm_monitor_wait_until(vm, s->m, at_least_three, s));
    GCHECK(s, owns(s) && s->counter == 3);
    stvm_monitor_exit(vm, s->m);
}

static void counts_to_three(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    for (int i = 0; i < 3; i++) {
        GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
        s->counter++;
        GCHECK(s, stvm_monitor_signal_on(vm, s->m, s->queue) == 1);
        GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
    }
}

static void predicate_case(stvm_fn waiter, int queue)
{
    ms s = make();
    s.queue = queue;
    go(s.vm, 40, "waiter", waiter, &s);
    go(s.vm, 30, "counter", counts_to_three, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_OK);
    /* Checked before any wait and after each signal, always holding the monitor. */
    trace_expect(&s.log, (int[]){100, 101, 102, 103}, 4);
    done_with(&s);
}

Test(monitor, wait_while_waits_until_the_predicate_turns_false)
{
    predicate_case(waits_while_below_three, 0);
}

Test(monitor, wait_until_waits_until_the_predicate_turns_true)
{
    predicate_case(waits_until_three, 0);
}

Test(monitor, the_predicate_waits_on_a_named_queue_too)
{
    predicate_case(waits_while_below_three, 4);
    predicate_case(waits_until_three, 6);
}

/* ---- termination at every point ---------------------------------------------------------- */

static void waits_inside_critical_body(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);   /* depth 2 inside */
    stvm_monitor_wait(vm, s->m);
    trace_add(&s->log, -1);   /* never: terminated */
}

static void waits_inside_critical(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_monitor_critical(vm, s->m, waits_inside_critical_body, s);
    trace_add(&s->log, -2);
}

static void enters_terminates_the_waiter(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
    /* Its way out (critical's cleanup) left nothing of ours. */
    GCHECK(s, owns(s) && stvm_monitor_depth(vm, s->m) == 1);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 0);   /* it is off the queue */
    GCHECK(s, stvm_vm_check_invariants(vm, NULL, 0) == STVM_OK);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
    trace_add(&s->log, 1);
}

Test(monitor, a_waiter_terminated_on_a_condition_takes_nothing_and_leaves_nothing)
{
    ms s = make();
    s.victim = go(s.vm, 40, "waiter", waits_inside_critical, &s);
    go(s.vm, 30, "terminator", enters_terminates_the_waiter, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){1}, 1);
    release(&s, s.victim);
    done_with(&s);
}

static void signals_then_terminates_victim(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_delay_wait_ms(vm, 1);   /* both wait first */
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 1);   /* the victim, first: handed */
    GCHECK(s, stvm_monitor_free(vm, s->m) == STVM_EINUSE);
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, a_waiter_terminated_after_its_signal_before_it_ran_passes_it_to_the_next)
{
    ms s = make();
    s.victim = go(s.vm, 30, "victim", waits_and_logs, &s);   /* 1 */
    go(s.vm, 30, "next", waits_and_logs, &s);                /* 2 */
    go(s.vm, 40, "signaller", signals_then_terminates_victim, &s);
    cr_assert_eq(stvm_trace_start(s.vm, 4096), STVM_OK);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){2}, 1);
    bool gave = false;
    for (int64_t i = 0; i < stvm_trace_count(s.vm); i++) {
        stvm_trace_event ev;
        stvm_trace_get(s.vm, (size_t)i, &ev);
        gave |= ev.kind == STVM_TRACE_GIVEN_BACK && ev.detail == STVM_TRACE_GAVE_MONITOR_SIGNAL;
    }
    cr_assert(gave, "no GIVEN_BACK of a monitor's signal was traced");
    release(&s, s.victim);
    done_with(&s);
}

/* S wakes V with a signal-all and waits itself; T, before V runs, terminates V: what V
 * gives back must not wake S, who came after the signal-all. */
static void signals_all_then_waits(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_delay_wait_ms(vm, 1);
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal_all(vm, s->m) == 1);   /* V: handed, not run */
    stvm_semaphore_signal(vm, s->sem);                   /* T: ready, runs once S waits */
    note(s, stvm_monitor_wait(vm, s->m));
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

static void terminates_v_then_signals(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_semaphore_wait(vm, s->sem) == STVM_OK);
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 1);   /* S still waited */
    trace_add(&s->log, 5);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, a_waiter_of_signal_all_terminated_before_it_ran_wakes_no_later_waiter)
{
    ms s = make();
    s.victim = go(s.vm, 20, "victim", waits_and_logs, &s);
    go(s.vm, 30, "signaller", signals_all_then_waits, &s);
    go(s.vm, 30, "terminator", terminates_v_then_signals, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){5}, 1);
    cr_assert_eq(s.rc[0], STVM_OK, "%s at %llu ms", stvm_err_name(s.rc[0]),
                 (unsigned long long)s.at_ms[0]);
    cr_assert_eq(s.at_ms[0], 1);
    release(&s, s.victim);
    done_with(&s);
}

static void signals_holds_terminates(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 1);
    stvm_delay_wait_ms(vm, 1);   /* the victim runs and waits to take it again */
    stvm_process_info info;
    GCHECK(s, stvm_process_get_info(vm, s->victim, &info) == STVM_OK &&
                  strcmp(info.waiting_on, "monitor") == 0);
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
    GCHECK(s, owns(s) && stvm_monitor_depth(vm, s->m) == 1);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_owner(vm, s->m) == NULL);   /* nobody was left to hand it to */
}

Test(monitor, a_waiter_terminated_while_it_waits_to_take_the_monitor_again_takes_nothing)
{
    ms s = make();
    s.victim = go(s.vm, 30, "victim", waits_and_logs, &s);
    go(s.vm, 20, "signaller", signals_holds_terminates, &s);
    run_ok(s.vm);
    cr_assert_eq(s.log.n, 0);
    release(&s, s.victim);
    done_with(&s);
}

static void exits_then_terminates_victim(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    s->victim = go(vm, 30, "victim", enters_and_logs, s);   /* 1 */
    go(vm, 30, "next", enters_and_logs, s);                 /* 2 */
    stvm_delay_wait_ms(vm, 1);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);   /* handed to the victim */
    GCHECK(s, stvm_monitor_owner(vm, s->m) == s->victim);
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
    GCHECK(s, stvm_monitor_owner(vm, s->m) != s->victim);   /* handed to the next */
    GCHECK(s, stvm_monitor_depth(vm, s->m) == 1);
}

Test(monitor, an_entrant_terminated_when_handed_the_monitor_before_it_ran_gives_it_to_the_next)
{
    ms s = make();
    go(s.vm, 40, "owner", exits_then_terminates_victim, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){2}, 1);
    release(&s, s.victim);
    done_with(&s);
}

static void blocks_inside(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_semaphore_wait(vm, s->sem);   /* terminated here, at depth 2 */
}

static void enters_then_critical(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    stvm_monitor_critical(vm, s->m, blocks_inside, s);
}

static void depth_checker(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_depth(vm, s->m) == 1 && owns(s));   /* from the finished owner */
    trace_add(&s->log, 7);
}

static void cleanup_sees_depth(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    s->depth[7] = stvm_monitor_depth(vm, s->m);   /* after critical's own way out */
}

static void enters_then_critical_with_cleanup(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_ensure(vm, cleanup_sees_depth, s);
    enters_then_critical(vm, arg);
}

static void terminates_the_owner(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_depth(vm, s->m) == 2);
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
}

static void entrant_waits(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    depth_checker(vm, s);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, an_owner_terminated_inside_critical_leaves_that_level_then_hands_the_monitor_on)
{
    ms s = make();
    s.victim = go(s.vm, 40, "owner", enters_then_critical_with_cleanup, &s);
    go(s.vm, 35, "entrant", entrant_waits, &s);
    go(s.vm, 30, "terminator", terminates_the_owner, &s);
    run_ok(s.vm);
    cr_assert_eq(s.depth[7], 1, "critical's cleanup left its level first (depth %lld)",
                 (long long)s.depth[7]);
    cr_assert_geq(s.log.n, 1);
    cr_assert_eq(s.log.ev[0], 7);
    release(&s, s.victim);
    done_with(&s);
}

static void enters_and_returns(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    go(vm, 30, "entrant", entrant_waits, s);
    stvm_yield(vm);
    /* returns owning it at depth 2 */
}

Test(monitor, an_owner_that_finishes_hands_the_monitor_to_the_next_entrant)
{
    ms s = make();
    go(s.vm, 30, "owner", enters_and_returns, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){7}, 1);
    done_with(&s);
}

/* ---- interrupts, suspension, cancellation ------------------------------------------------ */

static void logs_interrupt(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    trace_add(&s->log, 50 + (owns(s) ? 1 : 0));
}

static void interrupts_the_waiter(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_process_interrupt(vm, s->victim, logs_interrupt, s) == STVM_OK);
}

Test(monitor, an_interrupted_waiter_runs_the_interrupt_and_answers_eintr_with_the_monitor_retaken)
{
    ms s = make();
    s.victim = go(s.vm, 40, "waiter", waits_at_depth_three, &s);
    go(s.vm, 30, "interrupter", interrupts_the_waiter, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_EINTR);
    cr_assert_eq(s.depth[0], 3);
    trace_expect(&s.log, (int[]){50}, 1);   /* it ran outside the monitor, before the retake */
    release(&s, s.victim);
    done_with(&s);
}

static void signals_then_interrupts_victim(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_delay_wait_ms(vm, 1);   /* both wait first */
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 1);   /* the victim: handed */
    GCHECK(s, stvm_process_interrupt(vm, s->victim, NULL, NULL) == STVM_OK);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, a_waiter_interrupted_after_its_signal_answers_eintr_and_the_signal_goes_on)
{
    ms s = make();
    s.victim = go(s.vm, 30, "victim", waits_and_logs, &s);   /* 1 */
    go(s.vm, 30, "next", waits_and_logs, &s);                /* 2 */
    go(s.vm, 40, "signaller", signals_then_interrupts_victim, &s);
    run_ok(s.vm);
    trace_expect(&s.log, (int[]){-1, 2}, 2);
    release(&s, s.victim);
    done_with(&s);
}

static void signals_then_interrupts_retaker(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 1);   /* it runs, waits to retake */
    GCHECK(s, stvm_process_interrupt(vm, s->victim, logs_interrupt, s) == STVM_OK);
    trace_add(&s->log, 0);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

static void high_waits_and_logs(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    note(s, stvm_monitor_wait(vm, s->m));
    GCHECK(s, owns(s));
    trace_add(&s->log, 1);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, an_interrupt_while_the_monitor_is_retaken_runs_and_the_retake_goes_on)
{
    ms s = make();
    s.victim = go(s.vm, 40, "waiter", high_waits_and_logs, &s);
    go(s.vm, 30, "signaller", signals_then_interrupts_retaker, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_OK, "the signal it had taken stands: %s", stvm_err_name(s.rc[0]));
    trace_expect(&s.log, (int[]){50, 0, 1}, 3);
    release(&s, s.victim);
    done_with(&s);
}

static void suspends_resumes_the_waiter(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_process_suspend(vm, s->victim) == STVM_OK);
    GCHECK(s, stvm_monitor_signal(vm, s->m) == 0);   /* off the queue */
    GCHECK(s, stvm_process_resume(vm, s->victim) == STVM_OK);   /* runs: waits to retake */
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, a_suspended_waiter_answers_estate_when_resumed_with_the_monitor_retaken)
{
    ms s = make();
    s.victim = go(s.vm, 40, "waiter", waits_at_depth_three, &s);
    go(s.vm, 30, "suspender", suspends_resumes_the_waiter, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_ESTATE);
    cr_assert_eq(s.depth[0], 3);
    release(&s, s.victim);
    done_with(&s);
}

static void waits_within(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    note(s, stvm_monitor_wait(vm, s->m));   /* cut at 10 ms; the holder leaves at 30 */
    GCHECK(s, owns(s));
    stvm_monitor_exit(vm, s->m);
}

static void runs_within_10_ms(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    note(s, stvm_call_within_ms(vm, waits_within, s, 10));
}

Test(monitor, a_waiter_whose_waits_are_cancelled_still_waits_to_take_the_monitor_again)
{
    ms s = make();
    go(s.vm, 40, "within", runs_within_10_ms, &s);
    go(s.vm, 30, "holder", holds_for_30_ms, &s);
    run_ok(s.vm);
    cr_assert_eq(s.rc[0], STVM_EINTR);
    cr_assert_eq(s.at_ms[0], 30);
    cr_assert_eq(s.rc[1], STVM_ETIMEDOUT);
    done_with(&s);
}

/* ---- freeing, bad input, the trace ------------------------------------------------------- */

static void frees_in_every_state(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_free(vm, s->m) == STVM_EINUSE);   /* owned by the caller */
    stvm_delay_wait_ms(vm, 1);   /* meanwhile the waiter and the critical one wait to enter */
    GCHECK(s, stvm_monitor_free(vm, s->m) == STVM_EINUSE);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

static void waits_to_enter_then_waits(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_wait_timeout_ms(vm, s->m, 50) == STVM_ETIMEDOUT);
    stvm_monitor_exit(vm, s->m);
}

static void frees_while_waited(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_delay_wait_ms(vm, 5);
    GCHECK(s, stvm_monitor_owner(vm, s->m) == NULL);
    GCHECK(s, stvm_monitor_free(vm, s->m) == STVM_EINUSE);   /* a condition waiter */
}

static void frees_inside_critical_body(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    stvm_monitor_exit(vm, s->m);
    GCHECK(s, stvm_monitor_free(vm, s->m) == STVM_EINUSE);   /* critical still needs it */
}

static void frees_inside_critical(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_critical(vm, s->m, frees_inside_critical_body, s) == STVM_EPERM);
}

Test(monitor, free_is_refused_while_owned_waited_on_or_inside_critical)
{
    ms s = make();
    go(s.vm, 40, "freer", frees_in_every_state, &s);
    go(s.vm, 30, "waiter", waits_to_enter_then_waits, &s);
    go(s.vm, 20, "later", frees_while_waited, &s);
    go(s.vm, 10, "critical", frees_inside_critical, &s);
    run_ok(s.vm);
    cr_assert_eq(stvm_monitor_free(s.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_monitor_free(s.vm, (stvm_monitor *)s.sem), STVM_EINVAL);
    cr_assert_eq(stvm_mutex_free(s.vm, (stvm_mutex *)s.m), STVM_EINVAL,
                 "a monitor's entry does not pass for a mutex");
    done_with(&s);
}

Test(monitor, bad_input_is_refused_and_changes_nothing)
{
    ms s = make();
    stvm_monitor *out = (stvm_monitor *)&s;
    cr_assert_eq(stvm_monitor_new(NULL, &out), STVM_EINVAL);
    cr_assert_eq(stvm_monitor_new(s.vm, NULL), STVM_EINVAL);
    cr_assert_eq(out, (stvm_monitor *)&s);
    cr_assert_eq(stvm_monitor_enter(s.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_monitor_wait(s.vm, s.m), STVM_ENOTPROC);
    cr_assert_eq(stvm_monitor_wait_on(s.vm, s.m, STVM_MONITOR_QUEUES), STVM_EINVAL);
    cr_assert_eq(stvm_monitor_signal(s.vm, s.m), STVM_EPERM);
    cr_assert_eq(stvm_monitor_depth(NULL, s.m), STVM_EINVAL);
    cr_assert_eq(stvm_monitor_depth(s.vm, s.m), 0);
    cr_assert_null(stvm_monitor_owner(s.vm, (stvm_monitor *)s.sem));
    cr_assert_str_eq(stvm_oop_class_name(s.vm, (stvm_oop)s.m), "Monitor");
    done_with(&s);
}

static void ping(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_wait_on(vm, s->m, 3) == STVM_OK);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

static void pong(stvm_vm *vm, void *arg)
{
    ms *s = arg;
    GCHECK(s, stvm_monitor_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_monitor_signal_on(vm, s->m, 3) == 1);
    GCHECK(s, stvm_monitor_exit(vm, s->m) == STVM_OK);
}

Test(monitor, waits_and_signals_are_traced_and_shown_in_both_timelines)
{
    ms s = make();
    cr_assert_eq(stvm_trace_start(s.vm, 4096), STVM_OK);
    go(s.vm, 40, "ping", ping, &s);
    go(s.vm, 30, "pong", pong, &s);
    run_ok(s.vm);
    int waits = 0, signals = 0, handed = 0;
    for (int64_t i = 0; i < stvm_trace_count(s.vm); i++) {
        stvm_trace_event ev;
        cr_assert_eq(stvm_trace_get(s.vm, (size_t)i, &ev), STVM_OK);
        if (ev.kind == STVM_TRACE_MONITOR_WAIT) {
            cr_assert_eq(ev.object, (uint64_t)(uintptr_t)s.m);
            cr_assert(ev.detail == 3 || ev.detail == STVM_TRACE_MONITOR_ENTRY);
            waits += ev.detail == 3;
        }
        if (ev.kind == STVM_TRACE_MONITOR_SIGNAL) {
            cr_assert(ev.extra == 3 || ev.extra == STVM_TRACE_MONITOR_ENTRY, "extra %lld detail %lld",
                      (long long)ev.extra, (long long)ev.detail);
            cr_assert_neq(ev.detail, 0);
            signals += ev.extra == 3;
            handed += ev.extra == STVM_TRACE_MONITOR_ENTRY;   /* pong's exit, to ping */
        }
    }
    cr_assert_eq(waits, 1);
    cr_assert_eq(signals, 1);
    cr_assert_eq(handed, 1);
    cr_assert_str_eq(stvm_trace_kind_name(STVM_TRACE_MONITOR_WAIT), "monitor-wait");
    cr_assert_str_eq(stvm_trace_kind_name(STVM_TRACE_MONITOR_SIGNAL), "monitor-signal");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(stvm_trace_write_text(s.vm, f), STVM_OK);
    fclose(f);
    cr_assert(strstr(text, "monitor-wait") && strstr(text, "monitor1, releases it, waits on queue 3"),
              "%s", text);
    cr_assert(strstr(text, "monitor1 queue 3 wakes ping#"), "%s", text);
    cr_assert(strstr(text, "monitor1 handed to ping#"), "%s", text);
    free(text);
    check_json_of(s.vm);
    done_with(&s);
}
