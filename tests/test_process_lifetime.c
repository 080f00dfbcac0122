/*
 * Process lifetimes: a finished process gives its memory back at once; a held handle
 * stays until released or joined; cleanups (stvm_ensure) run newest first in the
 * process itself, also when another process or the embedding thread terminates it,
 * and at stvm_vm_free for processes that never finished.
 */
#include <stdio.h>
#include <unistd.h>

#include "helpers.h"

TestSuite(process_lifetime, .timeout = 60);

/* ---- a scenario the processes of one test share -------------------------------- */

typedef struct lifetime {
    stvm_vm *vm;
    stvm_semaphore *sem;
    stvm_semaphore *go;            /* terminators wait for it: the victim waits first */
    stvm_mutex *m;
    stvm_process *child, *joiner[3];
    trace_log log;                 /* who did what, in order */
    int join_rc[3], release_rc, ensure_rc, pop_rc;
    int terminate_rc;
    int cleanup_wait_rc[2];        /* what the waits in cleanup_waits answered, in order */
    int cleanup_waits;             /* how many there were */
    uint64_t join_at_us[3];        /* when each join returned (simulated clock) */
    stvm_process *cleanup_ran_in;  /* stvm_vm_active_process() inside a cleanup */
    int cleanup_priority;
    int bad_line;
} lifetime;

static stvm_vm *sim(void)
{
    return vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
}

static uint64_t elapsed_us(stvm_vm *vm)
{
    return stvm_vm_now_us(vm) - SIM_START;
}

/* ---- handles ------------------------------------------------------------------- */

static void nothing(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

Test(process_lifetime, spawning_and_finishing_without_handles_keeps_memory_flat)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_stats before = stats_of(vm);
    long rss_warm = 0;
    for (int round = 0; round < 100; round++) {
        for (int i = 0; i < 1000; i++)
            cr_assert_eq(stvm_spawn(vm, 40, "short-lived request handler", nothing, NULL, NULL),
                         STVM_OK);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        if (round == 9)
            rss_warm = rss_kib();
    }
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.objects_live, before.objects_live, "no handle outlives its process");
    cr_assert_eq(after.bytes_live, before.bytes_live);
    cr_assert_eq(after.processes_live, 1, "only the idle process is left");
    /* 90,000 more spawns after the warm-up: the leak this guards against cost about
     * 250 bytes each (23 MB here); stacks and handles are reused instead. */
    long grown = rss_kib() - rss_warm;
    cr_assert_lt(grown, 2048, "resident memory grew by %ld KiB over 90,000 spawns", grown);
    vm_done(vm);
}

Test(process_lifetime, a_held_handle_outlives_its_process_until_released)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_stats before = stats_of(vm);
    stvm_process *p = spawn(vm, 40, "held", nothing, NULL);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(vm, p, &info), STVM_OK);
    cr_assert_eq(info.state, STVM_PROCESS_TERMINATED);
    cr_assert(info.held);
    cr_assert_str_eq(info.name, "held");
    cr_assert_null(info.stack_guard, "a finished process has no stack");
    cr_assert_gt(stats_of(vm).objects_live, before.objects_live);
    cr_assert_eq(stvm_process_release(vm, p), STVM_OK);
    cr_assert_eq(stats_of(vm).objects_live, before.objects_live, "the handle went");
    vm_done(vm);
}

static void waits_on_sem(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_semaphore_wait(vm, t->sem);
}

Test(process_lifetime, releasing_a_running_process_frees_its_handle_when_it_finishes)
{
    lifetime t = {.vm = vm_make(NULL)};
    t.sem = sem_make(t.vm);
    stvm_stats before = stats_of(t.vm);
    t.child = spawn(t.vm, 40, "child", waits_on_sem, &t);
    cr_assert_eq(stvm_run(t.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_process_release(t.vm, t.child), STVM_OK);
    cr_assert_eq(stvm_process_release(t.vm, t.child), STVM_ESTATE, "released already");
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(t.vm, t.child, &info), STVM_OK, "usable while it lives");
    cr_assert_eq(info.state, STVM_PROCESS_WAITING);
    cr_assert_not(info.held);
    cr_assert_eq(stvm_semaphore_signal(t.vm, t.sem), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    cr_assert_eq(stats_of(t.vm).objects_live, before.objects_live);
    vm_done(t.vm);
}

Test(process_lifetime, the_vms_own_processes_cannot_be_released)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_process *idle = NULL;
    /* The idle process is the one running when a process asks from a wait: find it
     * through the primitive table's Process oops is not public, so use info ids. */
    stvm_process *p = spawn(vm, 40, "user", nothing, NULL);
    cr_assert_eq(stvm_process_release(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_process_release(NULL, p), STVM_EINVAL);
    cr_assert_eq(stvm_process_release(vm, (stvm_process *)sem_make(vm)), STVM_EINVAL,
                 "a semaphore is not a process");
    (void)idle;
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(stvm_process_release(vm, p), STVM_OK);
    vm_done(vm);
}

/* ---- join ---------------------------------------------------------------------- */

static void sleeps_100ms(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_delay_wait_ms(vm, 100);
    trace_add(&t->log, 1);
}

static void joins_child(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    t->join_rc[0] = stvm_process_join(vm, t->child, -1);
    t->join_at_us[0] = elapsed_us(vm);
    trace_add(&t->log, 2);
}

Test(process_lifetime, join_waits_for_the_process_and_gives_its_handle_back)
{
    lifetime t = {.vm = sim()};
    stvm_stats before = stats_of(t.vm);
    t.child = spawn(t.vm, 40, "child", sleeps_100ms, &t);
    cr_assert_eq(stvm_spawn(t.vm, 30, "joiner", joins_child, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    cr_assert_eq(t.join_rc[0], STVM_OK);
    cr_assert_eq(t.join_at_us[0], 100000, "joined when the child finished");
    trace_expect(&t.log, (int[]){1, 2}, 2);
    stvm_stats after = stats_of(t.vm);
    /* Made meanwhile: the Delay scheduler's semaphore and its process's handle. */
    cr_assert_eq(after.objects_live, before.objects_live + 2, "the child's handle went");
    vm_done(t.vm);
}

static void joins_with_timeouts(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    t->join_rc[0] = stvm_process_join(vm, t->child, 0);
    t->join_rc[1] = stvm_process_join(vm, t->child, 30);
    t->join_at_us[1] = elapsed_us(vm);
    t->join_rc[2] = stvm_process_join(vm, t->child, 1000);
    t->join_at_us[2] = elapsed_us(vm);
}

Test(process_lifetime, join_with_a_timeout_answers_etimedout_and_keeps_the_handle)
{
    lifetime t = {.vm = sim()};
    t.child = spawn(t.vm, 40, "child", sleeps_100ms, &t);
    cr_assert_eq(stvm_spawn(t.vm, 30, "joiner", joins_with_timeouts, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    cr_assert_eq(t.join_rc[0], STVM_ETIMEDOUT, "0 only checks");
    cr_assert_eq(t.join_rc[1], STVM_ETIMEDOUT);
    cr_assert_eq(t.join_at_us[1], 30000);
    cr_assert_eq(t.join_rc[2], STVM_OK, "the handle was still held after the timeout");
    cr_assert_eq(t.join_at_us[2], 100000);
    vm_done(t.vm);
}

static void joins_at(stvm_vm *vm, void *arg, int i)
{
    lifetime *t = arg;
    t->join_rc[i] = stvm_process_join(vm, t->child, -1);
    t->join_at_us[i] = elapsed_us(vm);
    trace_add(&t->log, 10 + i);
}
static void joins_0(stvm_vm *vm, void *arg) { joins_at(vm, arg, 0); }
static void joins_1(stvm_vm *vm, void *arg) { joins_at(vm, arg, 1); }
static void joins_2(stvm_vm *vm, void *arg) { joins_at(vm, arg, 2); }

Test(process_lifetime, several_joiners_all_wake_in_order_and_the_handle_goes_after_the_last)
{
    lifetime t = {.vm = sim()};
    stvm_stats before = stats_of(t.vm);
    t.child = spawn(t.vm, 40, "child", sleeps_100ms, &t);
    stvm_fn joiners[] = {joins_0, joins_1, joins_2};
    for (int i = 0; i < 3; i++)
        cr_assert_eq(stvm_spawn(t.vm, 30, "joiner", joiners[i], &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(t.join_rc[i], STVM_OK);
        cr_assert_eq(t.join_at_us[i], 100000);
    }
    trace_expect(&t.log, (int[]){1, 10, 11, 12}, 4);
    cr_assert_eq(stats_of(t.vm).objects_live, before.objects_live + 2, "as above");
    vm_done(t.vm);
}

static void bad_joins(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    t->join_rc[0] = stvm_process_join(vm, stvm_vm_active_process(vm), -1);
    t->join_rc[1] = stvm_process_join(vm, t->child, -2);
    t->join_rc[2] = stvm_process_join(vm, (stvm_process *)t->sem, -1);
}

Test(process_lifetime, joining_oneself_bad_timeouts_and_the_host_thread_are_refused)
{
    lifetime t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.child = spawn(t.vm, 40, "child", sleeps_100ms, &t);
    cr_assert_eq(stvm_process_join(t.vm, t.child, -1), STVM_ENOTPROC, "the host cannot wait");
    stvm_process *joiner = spawn(t.vm, 30, "joiner", bad_joins, &t);
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    cr_assert_eq(t.join_rc[0], STVM_EINVAL, "joining oneself");
    cr_assert_eq(t.join_rc[1], STVM_EINVAL, "timeout below -1");
    cr_assert_eq(t.join_rc[2], STVM_EINVAL, "not a process");
    cr_assert_eq(stvm_process_release(t.vm, t.child), STVM_OK);
    cr_assert_eq(stvm_process_release(t.vm, joiner), STVM_OK);
    vm_done(t.vm);
}

static void joins_unheld(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    t->join_rc[0] = stvm_process_join(vm, t->joiner[0], -1);
}

static void waits_forever(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    t->joiner[0] = stvm_vm_active_process(vm);   /* nobody holds this handle */
    stvm_semaphore_wait(vm, t->sem);
}

Test(process_lifetime, a_handle_nobody_holds_cannot_be_joined)
{
    lifetime t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    cr_assert_eq(stvm_spawn(t.vm, 50, "unheld", waits_forever, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(t.vm, 40, "joiner", joins_unheld, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_EDEADLOCK);
    cr_assert_eq(t.join_rc[0], STVM_ESTATE);
    vm_done(t.vm);
}

/* ---- cleanups ---------------------------------------------------------------------- */

/* Run until the victim and the terminator both wait, then let the terminator go. */
static void run_then_go(lifetime *t)
{
    cr_assert_eq(stvm_run(t->vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_semaphore_signal(t->vm, t->go), STVM_OK);
    cr_assert_eq(stvm_run(t->vm), STVM_OK);
}

static void log_1(stvm_vm *vm, void *arg) { (void)vm; trace_add(&((lifetime *)arg)->log, 1); }
static void log_2(stvm_vm *vm, void *arg) { (void)vm; trace_add(&((lifetime *)arg)->log, 2); }
static void log_3(stvm_vm *vm, void *arg) { (void)vm; trace_add(&((lifetime *)arg)->log, 3); }

static void registers_three(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    GCHECK(t, stvm_ensure(vm, log_1, t) == STVM_OK);
    GCHECK(t, stvm_ensure(vm, log_2, t) == STVM_OK);
    GCHECK(t, stvm_ensure(vm, log_3, t) == STVM_OK);
    trace_add(&t->log, 0);
}

Test(process_lifetime, cleanups_run_newest_first_when_the_process_returns)
{
    lifetime t = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_spawn(t.vm, 40, "p", registers_three, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    cr_assert_eq(t.bad_line, 0, "line %d", t.bad_line);
    trace_expect(&t.log, (int[]){0, 3, 2, 1}, 4);
    vm_done(t.vm);
}

static void pops(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    GCHECK(t, stvm_ensure_pop(vm, true) == STVM_ESTATE);
    GCHECK(t, stvm_ensure(vm, log_1, t) == STVM_OK);
    GCHECK(t, stvm_ensure(vm, log_2, t) == STVM_OK);
    GCHECK(t, stvm_ensure(vm, log_3, t) == STVM_OK);
    GCHECK(t, stvm_ensure_pop(vm, true) == STVM_OK);    /* 3 runs now */
    GCHECK(t, stvm_ensure_pop(vm, false) == STVM_OK);   /* 2 never runs */
    trace_add(&t->log, 0);
    GCHECK(t, stvm_ensure(vm, NULL, t) == STVM_EINVAL);
}

Test(process_lifetime, ensure_pop_removes_the_newest_cleanup_and_runs_it_when_asked)
{
    lifetime t = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_spawn(t.vm, 40, "p", pops, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    cr_assert_eq(t.bad_line, 0, "line %d", t.bad_line);
    trace_expect(&t.log, (int[]){3, 0, 1}, 3);
    cr_assert_eq(stvm_ensure(t.vm, log_1, &t), STVM_ENOTPROC);
    cr_assert_eq(stvm_ensure_pop(t.vm, true), STVM_ENOTPROC);
    cr_assert_eq(stvm_ensure(NULL, log_1, &t), STVM_EINVAL);
    cr_assert_eq(stvm_ensure_pop(NULL, true), STVM_EINVAL);
    vm_done(t.vm);
}

static void cleanup_notes_who(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    t->cleanup_ran_in = stvm_vm_active_process(vm);
    stvm_process_info info;
    if (t->cleanup_ran_in) {   /* NULL at stvm_vm_free */
        GCHECK(t, stvm_process_get_info(vm, t->cleanup_ran_in, &info) == STVM_OK);
        t->cleanup_priority = info.priority;
        GCHECK(t, info.terminating);
    }
    trace_add(&t->log, 1);
}

static void waits_with_cleanup(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_ensure(vm, cleanup_notes_who, t);
    stvm_semaphore_wait(vm, t->sem);
    trace_add(&t->log, 99);   /* never: terminated while waiting */
}

static void terminates_child(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_semaphore_wait(vm, t->go);
    trace_add(&t->log, 0);
    t->terminate_rc = stvm_process_terminate(vm, t->child);
    trace_add(&t->log, 2);
}

Test(process_lifetime, a_terminated_waiter_runs_its_cleanups_itself_before_terminate_returns)
{
    lifetime t = {.vm = vm_make(NULL)};
    t.sem = sem_make(t.vm);
    t.go = sem_make(t.vm);
    t.child = spawn(t.vm, 30, "victim", waits_with_cleanup, &t);
    cr_assert_eq(stvm_spawn(t.vm, 40, "terminator", terminates_child, &t, NULL), STVM_OK);
    run_then_go(&t);
    cr_assert_eq(t.bad_line, 0, "line %d", t.bad_line);
    cr_assert_eq(t.terminate_rc, STVM_OK);
    trace_expect(&t.log, (int[]){0, 1, 2}, 3);
    cr_assert_eq(t.cleanup_ran_in, t.child, "the cleanup ran in the terminated process");
    cr_assert_eq(t.cleanup_priority, 40, "at the terminator's priority");
    cr_assert_eq(gstate(t.vm, t.child), STVM_PROCESS_TERMINATED);
    cr_assert(stvm_semaphore_free(t.vm, t.sem) == STVM_OK, "nobody waits on it any more");
    vm_done(t.vm);
}

Test(process_lifetime, a_process_terminated_from_the_host_runs_its_cleanups_at_the_next_run)
{
    lifetime t = {.vm = vm_make(NULL)};
    t.sem = sem_make(t.vm);
    t.child = spawn(t.vm, 30, "victim", waits_with_cleanup, &t);
    cr_assert_eq(stvm_run(t.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_process_terminate(t.vm, t.child), STVM_OK);
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(t.vm, t.child, &info), STVM_OK);
    cr_assert(info.terminating);
    cr_assert_eq(info.state, STVM_PROCESS_READY, "queued to run its cleanup");
    cr_assert_eq(t.log.n, 0, "nothing ran on the host thread");
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    trace_expect(&t.log, (int[]){1}, 1);
    cr_assert_eq(t.cleanup_priority, 30, "at its own priority");
    cr_assert_eq(gstate(t.vm, t.child), STVM_PROCESS_TERMINATED);
    vm_done(t.vm);
}

static void cleanup_waits(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    trace_add(&t->log, 1);
    int rc = stvm_semaphore_wait(vm, t->sem);   /* a cleanup may wait: it runs in its process */
    if (t->cleanup_waits < 2)
        t->cleanup_wait_rc[t->cleanup_waits++] = rc;
    trace_add(&t->log, 3);
}

static void waits_with_waiting_cleanup(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_ensure(vm, cleanup_waits, t);
    stvm_semaphore_wait(vm, t->sem);
}

static void terminates_then_signals(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_semaphore_wait(vm, t->go);
    t->terminate_rc = stvm_process_terminate(vm, t->child);
    trace_add(&t->log, 2);
    GCHECK(t, gstate(vm, t->child) == STVM_PROCESS_WAITING);
    stvm_semaphore_signal(vm, t->sem);
    trace_add(&t->log, 4);
}

Test(process_lifetime, a_cleanup_that_waits_lets_terminate_return_and_finishes_when_woken)
{
    lifetime t = {.vm = vm_make(NULL)};
    t.sem = sem_make(t.vm);
    t.go = sem_make(t.vm);
    t.child = spawn(t.vm, 30, "victim", waits_with_waiting_cleanup, &t);
    cr_assert_eq(stvm_spawn(t.vm, 40, "terminator", terminates_then_signals, &t, NULL), STVM_OK);
    run_then_go(&t);
    cr_assert_eq(t.bad_line, 0, "line %d", t.bad_line);
    /* Signalled, the cleanup (boosted to 40, the terminator's priority) goes on after
     * the signaller's turn: equal priorities do not preempt. */
    trace_expect(&t.log, (int[]){1, 2, 4, 3}, 4);
    cr_assert_eq(gstate(t.vm, t.child), STVM_PROCESS_TERMINATED);
    vm_done(t.vm);
}

static void terminates_twice(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_semaphore_wait(vm, t->go);
    stvm_process_terminate(vm, t->child);   /* its first cleanup waits */
    trace_add(&t->log, 2);
    t->terminate_rc = stvm_process_terminate(vm, t->child);
    trace_add(&t->log, 4);
}

static void two_cleanups_first_waits(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_ensure(vm, log_3, t);          /* runs second */
    stvm_ensure(vm, cleanup_waits, t);  /* runs first, and waits */
    stvm_semaphore_wait(vm, t->sem);
}

Test(process_lifetime, terminating_a_process_in_its_cleanup_completes_that_cleanup_without_waiting)
{
    lifetime t = {.vm = vm_make(NULL)};
    t.sem = sem_make(t.vm);
    t.go = sem_make(t.vm);
    t.child = spawn(t.vm, 30, "victim", two_cleanups_first_waits, &t);
    cr_assert_eq(stvm_spawn(t.vm, 40, "terminator", terminates_twice, &t, NULL), STVM_OK);
    run_then_go(&t);
    cr_assert_eq(t.terminate_rc, STVM_OK);
    /* 1: the waiting cleanup starts; 2: the first terminate returns; the second ends
     * that cleanup's wait with EINTR, so the cleanup runs to its end (3), then log_3
     * (3), all before the second terminate returns (4): Pharo 10's rule. */
    trace_expect(&t.log, (int[]){1, 2, 3, 3, 4}, 5);
    cr_assert_eq(t.cleanup_waits, 1);
    cr_assert_eq(t.cleanup_wait_rc[0], STVM_EINTR);
    cr_assert_eq(stvm_semaphore_excess(t.vm, t.sem), 0, "the interrupted wait took nothing");
    cr_assert_eq(gstate(t.vm, t.child), STVM_PROCESS_TERMINATED);
    vm_done(t.vm);
}

static void unlock_in_cleanup(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    t->ensure_rc = stvm_mutex_exit(vm, t->m);
}

static void holds_mutex_with_cleanup(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_mutex_enter(vm, t->m);
    stvm_ensure(vm, unlock_in_cleanup, t);
    stvm_semaphore_wait(vm, t->sem);
}

Test(process_lifetime, a_cleanup_of_a_terminated_process_may_exit_the_mutex_it_owns)
{
    lifetime t = {.vm = vm_make(NULL)};
    t.sem = sem_make(t.vm);
    t.go = sem_make(t.vm);
    cr_assert_eq(stvm_mutex_new(t.vm, &t.m), STVM_OK);
    t.child = spawn(t.vm, 30, "owner", holds_mutex_with_cleanup, &t);
    cr_assert_eq(stvm_spawn(t.vm, 40, "terminator", terminates_child, &t, NULL), STVM_OK);
    run_then_go(&t);
    cr_assert_eq(t.ensure_rc, STVM_OK, "the cleanup ran as the owner");
    cr_assert_null(stvm_mutex_owner(t.vm, t.m));
    cr_assert_eq(stvm_mutex_free(t.vm, t.m), STVM_OK);
    vm_done(t.vm);
}

static void terminates_itself(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_ensure(vm, log_1, t);
    stvm_process_terminate(vm, stvm_vm_active_process(vm));
    trace_add(&t->log, 99);
}

Test(process_lifetime, a_process_terminating_itself_runs_its_cleanups_and_does_not_return)
{
    lifetime t = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_spawn(t.vm, 40, "self", terminates_itself, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    trace_expect(&t.log, (int[]){1}, 1);
    vm_done(t.vm);
}

Test(process_lifetime, cleanups_of_processes_that_never_finished_run_at_vm_free)
{
    lifetime t = {.vm = vm_make(NULL)};
    t.sem = sem_make(t.vm);
    cr_assert_eq(stvm_spawn(t.vm, 30, "stuck", waits_with_cleanup, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_EDEADLOCK);
    vm_check(t.vm);
    stvm_vm_free(t.vm);
    trace_expect(&t.log, (int[]){1}, 1);
    cr_assert_null(t.cleanup_ran_in, "no process is active at stvm_vm_free");
}

static void joins_then_logs(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    t->join_rc[0] = stvm_process_join(vm, t->child, -1);
    trace_add(&t->log, 5);
}

static void terminates_child_late(stvm_vm *vm, void *arg)
{
    lifetime *t = arg;
    stvm_yield(vm);   /* let the joiner start waiting */
    t->terminate_rc = stvm_process_terminate(vm, t->child);
}

Test(process_lifetime, joiners_wake_when_the_joined_process_is_terminated)
{
    lifetime t = {.vm = vm_make(NULL)};
    t.sem = sem_make(t.vm);
    t.child = spawn(t.vm, 40, "victim", waits_forever, &t);
    cr_assert_eq(stvm_spawn(t.vm, 30, "joiner", joins_then_logs, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(t.vm, 30, "terminator", terminates_child_late, &t, NULL), STVM_OK);
    cr_assert_eq(stvm_run(t.vm), STVM_OK);
    cr_assert_eq(t.terminate_rc, STVM_OK);
    cr_assert_eq(t.join_rc[0], STVM_OK);
    trace_expect(&t.log, (int[]){5}, 1);
    vm_done(t.vm);
}

/* ---- the address space of processes that never finish ------------------------------- */

/* The process's size (VmSize, KiB): what stays mapped, resident or not. */
static long vm_size_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    cr_assert_not_null(f);
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

typedef struct parked {
    stvm_vm *vm;
    stvm_semaphore *gate;          /* nobody signals it */
} parked;

static __attribute__((noinline)) void fill(volatile char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)i;
}

/* A frame with an array whose address is taken: under AddressSanitizer with
 * detect_stack_use_after_return=1 it lives on the process's fake stack. */
static void parks_with_a_frame(stvm_vm *vm, void *arg)
{
    parked *p = arg;
    volatile char buf[64];
    fill(buf, sizeof buf);
    stvm_semaphore_wait(vm, p->gate);
}

/* 300 processes that never finish: half terminated while switched out, the rest freed
 * with their VM. Under ASan with detect_stack_use_after_return=1 (make check's mode,
 * scripts/run-sanitized.sh) each had a fake stack of about 700 KiB, which the library
 * before this kept mapped for ever (about 210 MB a round); in the other builds the
 * stacks' arenas come and go with the VM. The first round's growth (the allocator's,
 * the sanitizer's own tables) is the baseline. */
Test(process_lifetime, processes_that_never_finish_leave_nothing_mapped_after_vm_free)
{
    enum { N = 300, ROUNDS = 4 };
    long base = 0;
    for (int round = 0; round < ROUNDS; round++) {
        parked p = {.vm = vm_make(NULL)};
        cr_assert_eq(stvm_semaphore_new(p.vm, &p.gate), STVM_OK);
        stvm_process *h[N];
        for (int i = 0; i < N; i++)
            cr_assert_eq(stvm_spawn(p.vm, 40, "parked", parks_with_a_frame, &p, &h[i]),
                         STVM_OK);
        cr_assert_eq(stvm_run(p.vm), STVM_EDEADLOCK);
        for (int i = 0; i < N; i += 2)
            cr_assert_eq(stvm_process_terminate(p.vm, h[i]), STVM_OK);
        for (int i = 0; i < N; i++)
            stvm_process_release(p.vm, h[i]);
        stvm_vm_free(p.vm);
        long now = vm_size_kib();
        if (round == 0)
            base = now;
        else
            cr_assert_leq(now - base, 20 * 1024, "round %d: %ld KiB more mapped than after the first",
                          round, now - base);
    }
}
