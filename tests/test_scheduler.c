/*
 * The priority scheduler: preemption at spawn/signal/resume, FIFO run queues, the
 * preemptionYields switch, yield, suspend/resume/terminate, priority changes, process
 * states, stvm_run's results and the blocked report, and many processes at once.
 *
 * Green processes never call Criterion's asserts (they may run on small stacks): they
 * record what they see in a `world`, and GCHECK notes the first line whose condition
 * failed; the host asserts after stvm_run returns.
 */
#include <string.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(scheduler, .timeout = 30);

static stvm_vm *vm_yields(bool yields)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.preemption_yields = yields;
    return vm_make(&cfg);
}

static stvm_process_state state_of(stvm_vm *vm, stvm_process *p)
{
    stvm_process_info info;
    int err = stvm_process_info_get(vm, p, &info);
    cr_assert_eq(err, STVM_OK);
    return info.state;
}

/* A process that only logs its tag. */
static void log_tag(stvm_vm *vm, void *arg)
{
    (void)vm;
    actor *a = arg;
    trace_add(&a->w->t, a->tag);
}

/* ---- spawning and run queues --------------------------------------------------- */

Test(scheduler, spawn_from_host_only_queues_until_run)
{
    world w = {.vm = vm_make(NULL)};
    actor a30 = {&w, 30}, a50 = {&w, 50}, a40 = {&w, 40}, a41 = {&w, 41};
    stvm_process *p30 = spawn(w.vm, 30, "p30", log_tag, &a30);
    stvm_process *p50 = spawn(w.vm, 50, "p50", log_tag, &a50);
    stvm_process *p40 = spawn(w.vm, 40, "p40", log_tag, &a40);
    stvm_process *p41 = spawn(w.vm, 40, "p41", log_tag, &a41);
    cr_assert_eq(w.t.n, 0, "nothing runs before stvm_run");
    cr_assert_eq(state_of(w.vm, p30), STVM_PROCESS_READY);
    cr_assert_eq(state_of(w.vm, p50), STVM_PROCESS_READY);
    cr_assert_null(stvm_active_process(w.vm));
    run_ok_green(&w);
    static const int want[] = {50, 40, 41, 30};
    trace_expect(&w.t, want, 4);
    cr_assert_eq(state_of(w.vm, p30), STVM_PROCESS_TERMINATED);
    cr_assert_eq(state_of(w.vm, p41), STVM_PROCESS_TERMINATED);
    cr_assert_eq(state_of(w.vm, p40), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    vm_done(w.vm);
}

static void spawner_higher(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor h;
    h = (actor){w, 2};
    trace_add(&w->t, 1);
    w->rc[0] = stvm_spawn(vm, 50, "high", log_tag, &h, &w->p[1]);
    trace_add(&w->t, 3);
    w->info[1].state = gstate(w->vm, w->p[1]);
}

Test(scheduler, strictly_higher_priority_preempts_at_spawn)
{
    world w = {.vm = vm_make(NULL)};
    spawn(w.vm, 30, "spawner", spawner_higher, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    cr_assert_eq(w.info[1].state, STVM_PROCESS_TERMINATED, "ran to the end before spawn returned");
    vm_done(w.vm);
}

static void spawner_equal(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor b;
    b = (actor){w, 5};
    trace_add(&w->t, 1);
    w->rc[0] = stvm_spawn(vm, 30, "B", log_tag, &b, &w->p[1]);
    w->info[1].state = gstate(w->vm, w->p[1]);
    trace_add(&w->t, 2);
}

Test(scheduler, equal_priority_spawn_waits_at_the_back_of_its_queue)
{
    world w = {.vm = vm_make(NULL)};
    actor x = {&w, 4};
    spawn(w.vm, 30, "A", spawner_equal, &w);
    spawn(w.vm, 30, "X", log_tag, &x);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.info[1].state, STVM_PROCESS_READY);
    static const int want[] = {1, 2, 4, 5};   /* B behind X, which was queued first */
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

static void spawner_lower(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor l;
    l = (actor){w, 3};
    trace_add(&w->t, 1);
    w->rc[0] = stvm_spawn(vm, 20, "low", log_tag, &l, NULL);
    trace_add(&w->t, 2);
}

Test(scheduler, lower_priority_spawn_waits_until_the_spawner_is_done)
{
    world w = {.vm = vm_make(NULL)};
    spawn(w.vm, 40, "A", spawner_lower, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}

Test(scheduler, processes_of_one_priority_run_first_in_first_out)
{
    world w = {.vm = vm_make(NULL)};
    actor a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = (actor){&w, i};
        spawn(w.vm, 40, "fifo", log_tag, &a[i]);
    }
    run_ok_green(&w);
    static const int want[] = {0, 1, 2, 3, 4, 5, 6, 7};
    trace_expect(&w.t, want, 8);
    vm_done(w.vm);
}

/* ---- preemptionYields ------------------------------------------------------------- */

/* A (30) and B (30) are ready, A first. A logs 1 and spawns H (50), which logs 2 and
 * preempts A. Then: yields=true puts A behind B (B logs 4 before A logs 3);
 * yields=false puts A back in front (A logs 3, then B logs 4). */
static void preempted_a(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor h;
    h = (actor){w, 2};
    trace_add(&w->t, 1);
    w->rc[0] = stvm_spawn(vm, 50, "H", log_tag, &h, NULL);
    trace_add(&w->t, 3);
}

static void preemption_scenario(bool yields, const int want[4])
{
    world w = {.vm = vm_yields(yields)};
    actor b = {&w, 4};
    spawn(w.vm, 30, "A", preempted_a, &w);
    spawn(w.vm, 30, "B", log_tag, &b);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

Test(scheduler, preemption_yields_true_puts_preempted_process_at_back_of_its_queue)
{
    static const int want[] = {1, 2, 4, 3};
    preemption_scenario(true, want);
}

Test(scheduler, preemption_yields_false_puts_preempted_process_at_front_of_its_queue)
{
    static const int want[] = {1, 2, 3, 4};
    preemption_scenario(false, want);
}

/* The same distinction when the preemption comes from a semaphore signal. */
static void high_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[1] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 2);
}

static void signalling_a(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_semaphore_signal(vm, w->sem);
    trace_add(&w->t, 3);
}

static void signal_preemption_scenario(bool yields, const int want[4])
{
    world w = {.vm = vm_yields(yields)};
    actor b = {&w, 4};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    spawn(w.vm, 50, "H", high_waiter, &w);
    spawn(w.vm, 30, "A", signalling_a, &w);
    spawn(w.vm, 30, "B", log_tag, &b);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[1], STVM_OK);
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

Test(scheduler, preemption_by_signal_follows_preemption_yields_true)
{
    static const int want[] = {1, 2, 4, 3};
    signal_preemption_scenario(true, want);
}

Test(scheduler, preemption_by_signal_follows_preemption_yields_false)
{
    static const int want[] = {1, 2, 3, 4};
    signal_preemption_scenario(false, want);
}

/* ---- yield -------------------------------------------------------------------------- */

static void yielder(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_yield(vm);
    trace_add(&w->t, 3);
}

Test(scheduler, yield_runs_the_other_processes_of_equal_priority_only)
{
    world w = {.vm = vm_make(NULL)};
    actor b = {&w, 2}, low = {&w, 4};
    spawn(w.vm, 30, "A", yielder, &w);
    spawn(w.vm, 20, "L", log_tag, &low);
    spawn(w.vm, 30, "B", log_tag, &b);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

static void lonely_yielder(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    uint64_t before = switches(vm);
    w->rc[0] = stvm_yield(vm);
    w->u[0] = switches(vm) - before;
    trace_add(&w->t, 2);
}

Test(scheduler, yield_without_equal_priority_peers_is_a_noop)
{
    world w = {.vm = vm_make(NULL)};
    actor low = {&w, 3};
    spawn(w.vm, 40, "alone", lonely_yielder, &w);
    spawn(w.vm, 30, "lower", log_tag, &low);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.u[0], 0, "yield switched %llu times", (unsigned long long)w.u[0]);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}

/* The idle process is a peer at priority 10: yielding there passes through it. */
Test(scheduler, idle_process_exists_at_priority_10_as_a_yield_peer)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stats_of(w.vm).processes_live, 1, "the idle process");
    stvm_process *p = spawn(w.vm, STVM_PRIORITY_IDLE, "at10", lonely_yielder, &w);
    stvm_process_info info;
    cr_assert_eq(stvm_process_info_get(w.vm, p, &info), STVM_OK);
    cr_assert_eq(info.id, 2, "the idle process is 1");
    cr_assert_eq(info.vm_own, false);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.u[0], 2, "to the idle process and back, got %llu",
                 (unsigned long long)w.u[0]);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    vm_done(w.vm);
}

Test(scheduler, processes_below_idle_priority_run_when_nothing_else_can, .timeout = 5)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 5}, b = {&w, 1}, c = {&w, 30};
    spawn(w.vm, 5, "p5", log_tag, &a);
    spawn(w.vm, 1, "p1", log_tag, &b);
    spawn(w.vm, 30, "p30", log_tag, &c);
    run_ok_green(&w);
    static const int want[] = {30, 5, 1};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}

/* Two processes below the idle priority: yield lets the other one run first, whichever
 * end of its queue a preempted process goes to (the idle process taking the processor
 * back on the way must not put the yielder back in front of its peer). */
static void below_idle_yielder(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_yield(vm);
    trace_add(&w->t, 3);
}

static void below_idle_yield(bool yields)
{
    world w = {.vm = vm_yields(yields)};
    actor b = {&w, 2};
    spawn(w.vm, 5, "A", below_idle_yielder, &w);
    spawn(w.vm, 5, "B", log_tag, &b);
    run_ok_green(&w);
    vm_done(w.vm);   /* before the trace check: a failure must not leak the VM */
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
}

Test(scheduler, yield_below_idle_priority_runs_the_peer_first_with_preemption_yields_true,
     .timeout = 5)
{
    below_idle_yield(true);
}

Test(scheduler, yield_below_idle_priority_runs_the_peer_first_with_preemption_yields_false,
     .timeout = 5)
{
    below_idle_yield(false);
}

/* ---- calls that need a process, and stvm_run's results ------------------------------ */

Test(scheduler, calls_that_need_a_process_fail_on_the_host_with_enotproc)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *sem;
    stvm_mutex *m;
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    cr_assert_eq(stvm_yield(vm), STVM_ENOTPROC);
    cr_assert_eq(stvm_checkpoint(vm), STVM_ENOTPROC);
    cr_assert_eq(stvm_semaphore_wait(vm, sem), STVM_ENOTPROC);
    cr_assert_eq(stvm_mutex_enter(vm, m), STVM_ENOTPROC);
    cr_assert_eq(stvm_mutex_try_enter(vm, m), STVM_ENOTPROC);
    cr_assert_null(stvm_mutex_owner(vm, m));
    cr_assert_eq(stvm_semaphore_excess(vm, sem), 0);
    cr_assert_eq(stvm_yield(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_run(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    cr_assert_eq(stvm_mutex_free(vm, m), STVM_OK);
    vm_done(vm);
}

static void nested_runner(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_run(vm);
    w->p[0] = stvm_active_process(vm);
    trace_add(&w->t, 1);
}

Test(scheduler, run_from_inside_a_process_is_ebusy)
{
    world w = {.vm = vm_make(NULL)};
    stvm_process *p = spawn(w.vm, 40, "nested", nested_runner, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_EBUSY);
    cr_assert_eq(w.p[0], p, "still the same process after the refused run");
    static const int want[] = {1};
    trace_expect(&w.t, want, 1);
    vm_done(w.vm);
}

static void tree_root(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor kids[3];
    kids[0] = (actor){w, 60};
    kids[1] = (actor){w, 20};
    kids[2] = (actor){w, 40};
    trace_add(&w->t, 40);
    w->rc[0] = stvm_spawn(vm, 60, "k60", log_tag, &kids[0], NULL);
    w->rc[1] = stvm_spawn(vm, 20, "k20", log_tag, &kids[1], NULL);
    w->rc[2] = stvm_spawn(vm, 40, "k40", log_tag, &kids[2], NULL);
    trace_add(&w->t, 41);
}

Test(scheduler, run_returns_ok_when_every_user_process_has_finished)
{
    world w = {.vm = vm_make(NULL)};
    spawn(w.vm, 40, "root", tree_root, &w);
    run_ok_green(&w);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(w.rc[i], STVM_OK);
    static const int want[] = {40, 60, 41, 40, 20};
    trace_expect(&w.t, want, 5);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    cr_assert_null(stvm_active_process(w.vm));
    vm_done(w.vm);
}

static void sem_waiter(stvm_vm *vm, void *arg)
{
    actor *a = arg;
    a->w->rc[a->tag] = stvm_semaphore_wait(vm, a->w->sem);
    trace_add(&a->w->t, a->tag);
}

Test(scheduler, run_is_edeadlock_when_all_wait_and_the_report_names_them)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    actor a = {&w, 1}, b = {&w, 2};
    stvm_process *pa = spawn(w.vm, 40, "waiter", sem_waiter, &a);
    spawn(w.vm, 35, "other one", sem_waiter, &b);
    int err = stvm_run(w.vm);
    cr_assert_eq(err, STVM_EDEADLOCK, "stvm_run: %s", stvm_err_name(err));
    cr_assert_eq(w.t.n, 0);
    cr_assert_eq(state_of(w.vm, pa), STVM_PROCESS_WAITING);

    char buf[512];
    int n = stvm_blocked_report(w.vm, buf, sizeof buf);
    cr_assert_gt(n, 0);
    cr_assert_eq((size_t)n, strlen(buf));
    cr_assert_not_null(strstr(buf, "waiter"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "other one"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "priority 40"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "priority 35"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "semaphore"), "report: %s", buf);
    int lines = 0;
    for (const char *q = buf; *q; q++)
        lines += *q == '\n';
    cr_assert_eq(lines, 2, "one line per blocked process: %s", buf);
    /* sizing like snprintf */
    cr_assert_eq(stvm_blocked_report(w.vm, NULL, 0), n);
    char small[10];
    memset(small, 'x', sizeof small);
    cr_assert_eq(stvm_blocked_report(w.vm, small, sizeof small), n);
    cr_assert_eq(strlen(small), sizeof small - 1);
    cr_assert_eq(strncmp(small, buf, sizeof small - 1), 0);
    cr_assert_eq(stvm_blocked_report(w.vm, NULL, 5), STVM_EINVAL);
    cr_assert_eq(stvm_blocked_report(NULL, buf, sizeof buf), STVM_EINVAL);

    /* more work: one signal wakes the first waiter, the other still blocks */
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    cr_assert_eq(state_of(w.vm, pa), STVM_PROCESS_READY);
    err = stvm_run(w.vm);
    cr_assert_eq(err, STVM_EDEADLOCK, "stvm_run: %s", stvm_err_name(err));
    static const int want1[] = {1};
    trace_expect(&w.t, want1, 1);
    cr_assert_eq(w.rc[1], STVM_OK);
    n = stvm_blocked_report(w.vm, buf, sizeof buf);
    cr_assert_null(strstr(buf, "'waiter'"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "other one"), "report: %s", buf);

    /* and the last one */
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    run_ok_green(&w);
    static const int want2[] = {1, 2};
    trace_expect(&w.t, want2, 2);
    cr_assert_eq(w.rc[2], STVM_OK);
    cr_assert_eq(stvm_blocked_report(w.vm, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "");
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0);
    vm_done(w.vm);
}

static void lock_a_then_b(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    stvm_yield(vm);   /* the other takes its first mutex */
    stvm_mutex_enter(vm, w->m2);
    trace_add(&w->t, 1);
}

static void lock_b_then_a(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m2) == STVM_OK);
    stvm_yield(vm);
    stvm_mutex_enter(vm, w->m);
    trace_add(&w->t, 2);
}

Test(scheduler, two_processes_locking_two_mutexes_crosswise_are_a_reported_deadlock)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(w.vm, &w.m), STVM_OK);
    cr_assert_eq(stvm_mutex_new(w.vm, &w.m2), STVM_OK);
    stvm_mutex *mb = w.m2;
    stvm_process *a = spawn(w.vm, 40, "first", lock_a_then_b, &w);
    stvm_process *b = spawn(w.vm, 40, "second", lock_b_then_a, &w);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    ASSERT_GREEN_OK(&w);
    cr_assert_eq(w.t.n, 0);
    cr_assert_eq(stvm_mutex_owner(w.vm, w.m), a);
    cr_assert_eq(stvm_mutex_owner(w.vm, mb), b);
    char buf[512];
    stvm_blocked_report(w.vm, buf, sizeof buf);
    cr_assert_not_null(strstr(buf, "'first' (priority 40) waits on mutex"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "'second' (priority 40) waits on mutex"), "report: %s", buf);
    /* breaking the cycle: terminating one hands its mutex to the other */
    cr_assert_eq(stvm_process_terminate(w.vm, a), STVM_OK);
    cr_assert_eq(stvm_mutex_owner(w.vm, w.m), b);
    run_ok_green(&w);
    static const int want[] = {2};
    trace_expect(&w.t, want, 1);
    cr_assert_null(stvm_mutex_owner(w.vm, w.m), "released when b finished");
    cr_assert_null(stvm_mutex_owner(w.vm, mb));
    vm_done(w.vm);
}

Test(scheduler, run_again_after_adding_processes_runs_them)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1}, b = {&w, 2};
    spawn(w.vm, 40, "first", log_tag, &a);
    run_ok_green(&w);
    spawn(w.vm, 40, "second", log_tag, &b);
    run_ok_green(&w);
    static const int want[] = {1, 2};
    trace_expect(&w.t, want, 2);
    vm_done(w.vm);
}

Test(scheduler, terminating_blocked_processes_after_deadlock_lets_run_finish)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    actor a = {&w, 1};
    stvm_process *p = spawn(w.vm, 40, "stuck", sem_waiter, &a);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_process_terminate(w.vm, p), STVM_OK);
    cr_assert_eq(state_of(w.vm, p), STVM_PROCESS_TERMINATED);
    run_ok_green(&w);
    cr_assert_eq(w.t.n, 0, "its C code never resumed");
    cr_assert_eq(stvm_semaphore_free(w.vm, w.sem), STVM_OK, "no waiter left");
    vm_done(w.vm);
}

/* ---- suspend and resume ------------------------------------------------------------ */

static void suspend_resume_controller(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_process_suspend(vm, w->p[1]);
    w->info[0].state = gstate(w->vm, w->p[1]);
    trace_add(&w->t, 1);
    w->rc[1] = stvm_process_resume(vm, w->p[1]);
    w->info[1].state = gstate(w->vm, w->p[1]);
    trace_add(&w->t, 2);
}

Test(scheduler, suspend_takes_a_ready_process_off_its_queue_until_resumed)
{
    world w = {.vm = vm_make(NULL)};
    actor b = {&w, 3};
    spawn(w.vm, 40, "controller", suspend_resume_controller, &w);
    w.p[1] = spawn(w.vm, 30, "B", log_tag, &b);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.info[0].state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[1].state, STVM_PROCESS_READY);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}

static void suspends_itself(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_suspend(vm, stvm_active_process(vm));
    trace_add(&w->t, 2);
}

Test(scheduler, suspended_process_left_at_the_end_is_a_deadlock)
{
    world w = {.vm = vm_make(NULL)};
    stvm_process *p = spawn(w.vm, 30, "sleeper", suspends_itself, &w);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    cr_assert_eq(state_of(w.vm, p), STVM_PROCESS_SUSPENDED);
    char buf[256];
    stvm_blocked_report(w.vm, buf, sizeof buf);
    cr_assert_not_null(strstr(buf, "sleeper"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "suspended"), "report: %s", buf);
    cr_assert_eq(stvm_process_resume(w.vm, p), STVM_OK, "resume from the host");
    cr_assert_eq(state_of(w.vm, p), STVM_PROCESS_READY);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1, 2};
    trace_expect(&w.t, want, 2);
    vm_done(w.vm);
}

static void finisher(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

static void resume_refuser(stvm_vm *vm, void *arg)
{
    world *w = arg;
    stvm_process *self = stvm_active_process(vm);
    stvm_process *done = NULL;
    GCHECK(w, stvm_spawn(vm, 60, "done", finisher, NULL, &done) == STVM_OK);
    GCHECK(w, gstate(w->vm, done) == STVM_PROCESS_TERMINATED);
    uint64_t before = switches(vm);
    w->rc[0] = stvm_process_resume(vm, w->p[1]);   /* ready */
    w->rc[1] = stvm_process_resume(vm, w->p[2]);   /* waiting on sem */
    w->rc[2] = stvm_process_resume(vm, self);      /* active */
    w->rc[3] = stvm_process_resume(vm, done);      /* terminated */
    w->u[0] = switches(vm) - before;
    w->info[1].state = gstate(w->vm, w->p[1]);
    stvm_process_info_get(vm, w->p[2], &w->info[2]);
    w->info[3].state = gstate(w->vm, self);
    trace_add(&w->t, 1);
    stvm_semaphore_signal(vm, w->sem);   /* W (50) preempts */
    trace_add(&w->t, 3);
}

static void wake_logger(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[4] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 2);
}

Test(scheduler, resume_of_a_process_that_is_not_suspended_is_estate_and_changes_nothing)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    actor r = {&w, 4};
    w.p[2] = spawn(w.vm, 50, "W", wake_logger, &w);
    spawn(w.vm, 40, "C", resume_refuser, &w);
    w.p[1] = spawn(w.vm, 30, "R", log_tag, &r);
    run_ok_green(&w);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(w.rc[i], STVM_ESTATE, "resume #%d: %s", i, stvm_err_name(w.rc[i]));
    cr_assert_eq(w.u[0], 0, "no switch");
    cr_assert_eq(w.info[1].state, STVM_PROCESS_READY);
    cr_assert_eq(w.info[2].state, STVM_PROCESS_WAITING);
    cr_assert_eq(w.info[2].waiting_object, (const void *)w.sem);
    cr_assert_eq(w.info[3].state, STVM_PROCESS_ACTIVE);
    cr_assert_eq(w.rc[4], STVM_OK);
    static const int want[] = {1, 2, 3, 4};   /* R ran exactly once, last */
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

static void aborted_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 3);
}

static void waiter_suspender(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 2);
    w->rc[1] = stvm_process_suspend(vm, w->p[0]);
    w->info[0].state = gstate(w->vm, w->p[0]);
    w->rc[2] = stvm_semaphore_signal(vm, w->sem);   /* nobody waits: an excess signal */
    w->u[0] = (uint64_t)stvm_semaphore_excess(vm, w->sem);
    w->rc[3] = stvm_process_resume(vm, w->p[0]);    /* W (40) preempts, wait -> ESTATE */
    trace_add(&w->t, 4);
    w->u[1] = (uint64_t)stvm_semaphore_excess(vm, w->sem);
}

Test(scheduler, suspending_a_waiter_makes_its_wait_return_estate_once_resumed)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    w.p[0] = spawn(w.vm, 40, "W", aborted_waiter, &w);
    spawn(w.vm, 30, "C", waiter_suspender, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[0].state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(w.rc[2], STVM_OK);
    cr_assert_eq(w.u[0], 1, "the suspended waiter did not take the signal");
    cr_assert_eq(w.rc[3], STVM_OK);
    cr_assert_eq(w.rc[0], STVM_ESTATE, "wait returned %s", stvm_err_name(w.rc[0]));
    cr_assert_eq(w.u[1], 1, "the signal is still there");
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

Test(scheduler, suspend_of_a_suspended_or_finished_process_is_estate)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1};
    stvm_process *s = NULL, *f;
    cr_assert_eq(stvm_spawn_suspended(w.vm, 30, "s", log_tag, &a, 0, &s), STVM_OK);
    cr_assert_eq(stvm_process_suspend(w.vm, s), STVM_ESTATE);
    cr_assert_eq(state_of(w.vm, s), STVM_PROCESS_SUSPENDED);
    cr_assert_eq(stvm_process_terminate(w.vm, s), STVM_OK);
    cr_assert_eq(stvm_process_suspend(w.vm, s), STVM_ESTATE);
    f = spawn(w.vm, 30, "f", finisher, NULL);
    run_ok_green(&w);
    cr_assert_eq(stvm_process_suspend(w.vm, f), STVM_ESTATE);
    cr_assert_eq(state_of(w.vm, f), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stvm_process_suspend(w.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_process_resume(w.vm, NULL), STVM_EINVAL);
    vm_done(w.vm);
}

static void self_suspender(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_suspend(vm, stvm_active_process(vm));
    trace_add(&w->t, 3);
}

static void self_resumer(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->info[0].state = gstate(w->vm, w->p[0]);
    trace_add(&w->t, 2);
    w->rc[1] = stvm_process_resume(vm, w->p[0]);   /* 40 > 30: runs before this returns */
    trace_add(&w->t, 4);
}

Test(scheduler, a_process_suspending_itself_runs_again_only_after_resume)
{
    world w = {.vm = vm_make(NULL)};
    w.p[0] = spawn(w.vm, 40, "S", self_suspender, &w);
    spawn(w.vm, 30, "R", self_resumer, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[0].state, STVM_PROCESS_SUSPENDED);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

/* ---- terminate --------------------------------------------------------------------- */

static void self_terminator(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_terminate(vm, stvm_active_process(vm));
    trace_add(&w->t, 99);   /* never */
}

Test(scheduler, terminating_the_active_process_does_not_return)
{
    world w = {.vm = vm_make(NULL)};
    actor b = {&w, 2};
    w.rc[0] = 12345;
    stvm_process *p = spawn(w.vm, 40, "self", self_terminator, &w);
    spawn(w.vm, 40, "next", log_tag, &b);
    run_ok_green(&w);
    static const int want[] = {1, 2};
    trace_expect(&w.t, want, 2);
    cr_assert_eq(w.rc[0], 12345, "terminate returned");
    cr_assert_eq(state_of(w.vm, p), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    cr_assert_eq(stvm_process_terminate(w.vm, p), STVM_ESTATE);
    vm_done(w.vm);
}

static void terminator(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_terminate(vm, w->p[1]);   /* ready */
    w->rc[1] = stvm_process_terminate(vm, w->p[2]);   /* waiting on sem */
    w->info[1].state = gstate(w->vm, w->p[1]);
    w->info[2].state = gstate(w->vm, w->p[2]);
    w->rc[2] = stvm_process_terminate(vm, w->p[1]);   /* again */
    w->rc[3] = stvm_semaphore_signal(vm, w->sem);
    w->u[0] = (uint64_t)stvm_semaphore_excess(vm, w->sem);
    trace_add(&w->t, 2);
}

Test(scheduler, terminating_ready_and_waiting_processes_removes_them_for_good)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    actor r = {&w, 7}, ww = {&w, 6};
    w.p[2] = spawn(w.vm, 50, "waiter", sem_waiter, &ww);
    spawn(w.vm, 40, "T", terminator, &w);
    w.p[1] = spawn(w.vm, 30, "ready", log_tag, &r);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[1].state, STVM_PROCESS_TERMINATED);
    cr_assert_eq(w.info[2].state, STVM_PROCESS_TERMINATED);
    cr_assert_eq(w.rc[2], STVM_ESTATE);
    cr_assert_eq(w.u[0], 1, "the dead waiter did not take the signal");
    static const int want[] = {1, 2};   /* neither victim ever logged */
    trace_expect(&w.t, want, 2);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    vm_done(w.vm);
}

Test(scheduler, terminate_from_the_host_before_run)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1}, b = {&w, 2};
    stvm_process *pa = spawn(w.vm, 40, "a", log_tag, &a);
    spawn(w.vm, 40, "b", log_tag, &b);
    cr_assert_eq(stats_of(w.vm).processes_live, 3);
    cr_assert_eq(stvm_process_terminate(w.vm, pa), STVM_OK);
    cr_assert_eq(stats_of(w.vm).processes_live, 2);
    cr_assert_eq(stvm_process_terminate(w.vm, pa), STVM_ESTATE);
    cr_assert_eq(stvm_process_terminate(w.vm, NULL), STVM_EINVAL);
    stvm_semaphore *sem;
    cr_assert_eq(stvm_semaphore_new(w.vm, &sem), STVM_OK);
    cr_assert_eq(stvm_process_terminate(w.vm, (stvm_process *)sem), STVM_EINVAL,
                 "a semaphore is no process");
    cr_assert_eq(stvm_process_resume(w.vm, (stvm_process *)sem), STVM_EINVAL);
    run_ok_green(&w);
    static const int want[] = {2};
    trace_expect(&w.t, want, 1);
    vm_done(w.vm);
}

/* ---- priorities ------------------------------------------------------------------- */

static void raiser(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_set_priority(vm, w->p[1], 50);
    trace_add(&w->t, 3);
}

Test(scheduler, raising_a_ready_process_above_the_caller_preempts_it)
{
    world w = {.vm = vm_make(NULL)};
    actor r = {&w, 2};
    spawn(w.vm, 30, "A", raiser, &w);
    w.p[1] = spawn(w.vm, 20, "R", log_tag, &r);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    stvm_process_info info;
    cr_assert_eq(stvm_process_info_get(w.vm, w.p[1], &info), STVM_OK);
    cr_assert_eq(info.priority, 50);
    vm_done(w.vm);
}

static void lowerer(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_set_priority(vm, stvm_active_process(vm), 20);
    trace_add(&w->t, 3);
}

Test(scheduler, lowering_the_active_process_below_a_ready_one_yields_to_it)
{
    world w = {.vm = vm_make(NULL)};
    actor b = {&w, 2}, c = {&w, 4};
    spawn(w.vm, 40, "A", lowerer, &w);
    spawn(w.vm, 30, "B", log_tag, &b);
    spawn(w.vm, 10, "C", log_tag, &c);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

Test(scheduler, changing_the_priority_of_a_ready_process_moves_it_to_the_back)
{
    world w = {.vm = vm_make(NULL)};
    actor y = {&w, 1}, x = {&w, 2}, z = {&w, 3};
    stvm_process *py = spawn(w.vm, 30, "Y", log_tag, &y);
    spawn(w.vm, 30, "X", log_tag, &x);
    stvm_process *pz = spawn(w.vm, 20, "Z", log_tag, &z);
    cr_assert_eq(stvm_process_set_priority(w.vm, py, 30), STVM_OK);   /* behind X */
    cr_assert_eq(stvm_process_set_priority(w.vm, pz, 30), STVM_OK);   /* behind Y */
    cr_assert_eq(state_of(w.vm, pz), STVM_PROCESS_READY);
    run_ok_green(&w);
    static const int want[] = {2, 1, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}

static void raise_waiter_then_signal(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_process_set_priority(vm, w->p[1], 50);
    w->info[1].state = gstate(w->vm, w->p[1]);
    trace_add(&w->t, 1);
    stvm_semaphore_signal(vm, w->sem);   /* the waiter is now higher: preempts */
    trace_add(&w->t, 3);
}

static void waiter_logs_2(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[1] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 2);
}

Test(scheduler, a_waiting_process_runs_at_its_new_priority_when_woken)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    w.p[1] = spawn(w.vm, 45, "W", waiter_logs_2, &w);
    spawn(w.vm, 40, "C", raise_waiter_then_signal, &w);
    /* W at 45 runs first and waits; C raises it from 45 to 50 */
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.info[1].state, STVM_PROCESS_WAITING, "still waiting after the change");
    cr_assert_eq(w.rc[1], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}

Test(scheduler, set_priority_rejects_bad_priorities_and_finished_processes)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1};
    stvm_process *p = spawn(w.vm, 30, "p", log_tag, &a);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, 0), STVM_EINVAL);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, 81), STVM_EINVAL);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, -5), STVM_EINVAL);
    cr_assert_eq(stvm_process_set_priority(w.vm, NULL, 30), STVM_EINVAL);
    stvm_process_info info;
    cr_assert_eq(stvm_process_info_get(w.vm, p, &info), STVM_OK);
    cr_assert_eq(info.priority, 30);
    cr_assert_eq(info.state, STVM_PROCESS_READY);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, STVM_PRIORITY_MAX), STVM_OK);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, STVM_PRIORITY_MIN), STVM_OK);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, 30), STVM_OK);
    run_ok_green(&w);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, 40), STVM_ESTATE);
    cr_assert_eq(stvm_process_info_get(w.vm, p, &info), STVM_OK);
    cr_assert_eq(info.priority, 30);
    vm_done(w.vm);
}

Test(scheduler, a_priority_set_while_suspended_applies_when_resumed)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1}, b = {&w, 2};
    stvm_process *pa = NULL;
    cr_assert_eq(stvm_spawn_suspended(w.vm, 20, "A", log_tag, &a, 0, &pa), STVM_OK);
    spawn(w.vm, 40, "B", log_tag, &b);
    cr_assert_eq(stvm_process_set_priority(w.vm, pa, 60), STVM_OK);
    cr_assert_eq(state_of(w.vm, pa), STVM_PROCESS_SUSPENDED, "still suspended");
    cr_assert_eq(stvm_process_resume(w.vm, pa), STVM_OK);
    run_ok_green(&w);
    static const int want[] = {1, 2};   /* A now outranks B */
    trace_expect(&w.t, want, 2);
    vm_done(w.vm);
}

/* ---- process info ------------------------------------------------------------------ */

static void mutex_holder(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    GCHECK(w, stvm_semaphore_wait(vm, w->sem2) == STVM_OK);   /* holds the mutex */
    GCHECK(w, stvm_mutex_exit(vm, w->m) == STVM_OK);
}

static void mutex_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    GCHECK(w, stvm_mutex_exit(vm, w->m) == STVM_OK);
}

static void observer(stvm_vm *vm, void *arg)
{
    world *w = arg;
    stvm_process *self = stvm_active_process(vm);
    GCHECK(w, stvm_process_info_get(vm, self, &w->info[0]) == STVM_OK);
    for (int i = 1; i <= 4; i++)
        GCHECK(w, stvm_process_info_get(vm, w->p[i], &w->info[i]) == STVM_OK);
    stvm_semaphore_signal(vm, w->sem2);
    stvm_semaphore_signal(vm, w->sem);
    stvm_process_resume(vm, w->p[4]);
}

Test(scheduler, process_info_reports_every_state)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem2), STVM_OK);
    cr_assert_eq(stvm_mutex_new(w.vm, &w.m), STVM_OK);
    stvm_mutex *m = w.m;
    char name[16] = "observer";
    actor ww = {&w, 5}, rr = {&w, 6}, ss = {&w, 7};
    stvm_process *obs = spawn(w.vm, 40, name, observer, &w);
    strcpy(name, "clobbered");
    w.p[1] = spawn(w.vm, 30, "ready one", log_tag, &rr);
    w.p[2] = spawn(w.vm, 60, "sem waiter", sem_waiter, &ww);
    spawn(w.vm, 55, "holder", mutex_holder, &w);
    w.p[3] = spawn(w.vm, 50, "mutex waiter", mutex_waiter, &w);
    cr_assert_eq(stvm_spawn_suspended(w.vm, 20, NULL, log_tag, &ss, 0, &w.p[4]), STVM_OK);
    run_ok_green(&w);

    cr_assert_str_eq(w.info[0].name, "observer", "the name was copied");
    cr_assert_eq(w.info[0].state, STVM_PROCESS_ACTIVE);
    cr_assert_eq(w.info[0].priority, 40);
    cr_assert_eq(w.info[0].id, 2);
    cr_assert_eq(w.info[0].vm_own, false);
    cr_assert_null(w.info[0].waiting_on);
    cr_assert_null(w.info[0].waiting_object);

    cr_assert_eq(w.info[1].state, STVM_PROCESS_READY);
    cr_assert_str_eq(w.info[1].name, "ready one");
    cr_assert_eq(w.info[1].id, 3);
    cr_assert_null(w.info[1].waiting_on);

    cr_assert_eq(w.info[2].state, STVM_PROCESS_WAITING);
    cr_assert_str_eq(w.info[2].waiting_on, "semaphore");
    cr_assert_eq(w.info[2].waiting_object, (const void *)w.sem);
    cr_assert_eq(w.info[2].priority, 60);

    cr_assert_eq(w.info[3].state, STVM_PROCESS_WAITING);
    cr_assert_str_eq(w.info[3].waiting_on, "mutex");
    cr_assert_eq(w.info[3].waiting_object, (const void *)m);

    cr_assert_eq(w.info[4].state, STVM_PROCESS_SUSPENDED);
    cr_assert_str_eq(w.info[4].name, "", "NULL name is the empty string");
    cr_assert_eq(w.info[4].id, 7);
    cr_assert_null(w.info[4].waiting_on);

    stvm_process_info after;
    cr_assert_eq(stvm_process_info_get(w.vm, obs, &after), STVM_OK);
    cr_assert_eq(after.state, STVM_PROCESS_TERMINATED, "handles outlive their processes");
    cr_assert_str_eq(after.name, "observer");
    static const int want[] = {5, 6, 7};
    trace_expect(&w.t, want, 3);
    cr_assert_null(stvm_mutex_owner(w.vm, m));
    cr_assert_eq(stvm_mutex_free(w.vm, m), STVM_OK);
    vm_done(w.vm);
}

Test(scheduler, process_info_rejects_bad_arguments)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_process *p;
    stvm_semaphore *sem;
    cr_assert_eq(stvm_spawn(vm, 30, "p", finisher, NULL, &p), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    stvm_process_info info;
    cr_assert_eq(stvm_process_info_get(vm, NULL, &info), STVM_EINVAL);
    cr_assert_eq(stvm_process_info_get(vm, p, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_process_info_get(NULL, p, &info), STVM_EINVAL);
    cr_assert_eq(stvm_process_info_get(vm, (stvm_process *)sem, &info), STVM_EINVAL);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    vm_done(vm);
}

static void who_am_i(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->p[0] = stvm_active_process(vm);
}

Test(scheduler, active_process_is_the_caller_inside_and_null_on_the_host)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_null(stvm_active_process(w.vm));
    cr_assert_null(stvm_active_process(NULL));
    stvm_process *p = spawn(w.vm, 40, "me", who_am_i, &w);
    run_ok_green(&w);
    cr_assert_eq(w.p[0], p);
    cr_assert_null(stvm_active_process(w.vm));
    vm_done(w.vm);
}

/* ---- checkpoint ------------------------------------------------------------------- */

static void checkpointer(stvm_vm *vm, void *arg)
{
    world *w = arg;
    uint64_t before = switches(vm);
    w->rc[0] = stvm_checkpoint(vm);
    w->rc[1] = stvm_checkpoint(vm);
    w->u[0] = switches(vm) - before;
    trace_add(&w->t, 1);
}

Test(scheduler, checkpoint_returns_0_when_nothing_is_due)
{
    world w = {.vm = vm_make(NULL)};
    actor same = {&w, 2}, low = {&w, 3};
    spawn(w.vm, 40, "cp", checkpointer, &w);
    spawn(w.vm, 40, "same", log_tag, &same);   /* equal priority: no preemption */
    spawn(w.vm, 30, "low", log_tag, &low);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], 0);
    cr_assert_eq(w.rc[1], 0);
    cr_assert_eq(w.u[0], 0);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}

static void timer_checkpointer(stvm_vm *vm, void *arg)
{
    world *w = arg;
    stvm_oop now, args[2];
    int fail = 0;
    GCHECK(w, stvm_primitive_call(vm, 240, STVM_NIL, NULL, 0, &now, &fail) == STVM_OK);
    args[0] = stvm_semaphore_oop(w->sem);
    args[1] = now;   /* due at once: the simulated clock stands still while we run */
    GCHECK(w, stvm_primitive_call(vm, 242, STVM_NIL, args, 2, NULL, &fail) == STVM_OK);
    stvm_oop_release(vm, now);
    trace_add(&w->t, 1);
    w->rc[0] = stvm_checkpoint(vm);   /* fires the timer: the waiter (50) preempts */
    trace_add(&w->t, 3);
    w->rc[1] = stvm_checkpoint(vm);
}

static void timer_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[2] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 2);
}

Test(scheduler, checkpoint_delivers_a_due_timer_and_lets_a_higher_process_run)
{
    world w = {.vm = vm_make_sim(61, STVM_DELAY_CLOCK_US)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    spawn(w.vm, 50, "waiter", timer_waiter, &w);
    spawn(w.vm, 30, "worker", timer_checkpointer, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], 1, "checkpoint answered %d", w.rc[0]);
    cr_assert_eq(w.rc[1], 0);
    cr_assert_eq(w.rc[2], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    cr_assert_eq(stats_of(w.vm).timer_fires, 1);
    vm_done(w.vm);
}

/* ---- many processes, stacks, spawn arguments ------------------------------------- */

typedef struct many {
    long next, count, sum;
    int out_of_order;
} many;

typedef struct many_arg {
    many *m;
    long i;
} many_arg;

static void many_body(stvm_vm *vm, void *arg)
{
    (void)vm;
    many_arg *a = arg;
    if (a->i != a->m->next)
        a->m->out_of_order++;
    a->m->next = a->i + 1;
    a->m->count++;
    a->m->sum += a->i;
}

Test(scheduler, five_thousand_processes_are_spawned_run_in_order_and_finish)
{
    enum { N = 5000 };
    stvm_vm *vm = vm_make(NULL);
    many m = {0};
    static many_arg args[N];
    for (long i = 0; i < N; i++) {
        args[i] = (many_arg){&m, i};
        cr_assert_eq(stvm_spawn(vm, 30, "many", many_body, &args[i], NULL),
                     STVM_OK, "spawn #%ld", i);
    }
    stvm_stats s = stats_of(vm);
    cr_assert_eq(s.processes_live, N + 1);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(m.count, N);
    cr_assert_eq(m.sum, (long)N * (N - 1) / 2);
    cr_assert_eq(m.out_of_order, 0);
    s = stats_of(vm);
    cr_assert_eq(s.processes_live, 1);
    vm_done(vm);
}

static void many_spawner(stvm_vm *vm, void *arg)
{
    many *m = arg;
    static many_arg args[3000];
    for (long i = 0; i < 3000; i++) {
        args[i] = (many_arg){m, i};
        if (stvm_spawn(vm, 20, "child", many_body, &args[i], NULL) != STVM_OK)
            m->out_of_order += 1000000;
        if (i % 100 == 99)
            stvm_yield(vm);   /* no peers at 40: a no-op */
    }
}

Test(scheduler, thousands_of_processes_spawned_from_a_process_all_finish)
{
    stvm_vm *vm = vm_make(NULL);
    many m = {0};
    cr_assert_eq(stvm_spawn(vm, 40, "spawner", many_spawner, &m, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(m.count, 3000);
    cr_assert_eq(m.out_of_order, 0);
    cr_assert_eq(stats_of(vm).processes_live, 1);
    vm_done(vm);
}

Test(scheduler, spawn_sized_rejects_bad_stack_sizes_and_accepts_good_ones)
{
    world w = {.vm = vm_make(NULL)};
    actor a[4] = {{&w, 1}, {&w, 2}, {&w, 3}, {&w, 4}};
    const size_t bad[] = {1, 4096, 8191, ((size_t)64 << 20) + 1, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stvm_process *p = (stvm_process *)(uintptr_t)0x5EED0;
        cr_assert_eq(stvm_spawn_sized(w.vm, 30, "bad", log_tag, &a[0], bad[i], &p), STVM_EINVAL,
                     "size %zu", bad[i]);
        cr_assert_eq((uintptr_t)p, 0x5EED0, "out untouched");
        cr_assert_eq(stvm_spawn_suspended(w.vm, 30, "bad", log_tag, &a[0], bad[i], NULL),
                     STVM_EINVAL, "size %zu", bad[i]);
    }
    cr_assert_eq(stats_of(w.vm).processes_live, 1, "nothing was created");
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "8k", log_tag, &a[0], 8192, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "odd", log_tag, &a[1], 8192 + 100, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "1m", log_tag, &a[2], (size_t)1 << 20, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "default", log_tag, &a[3], 0, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "64m", finisher, NULL, (size_t)64 << 20, NULL),
                 STVM_OK, "the upper limit is allowed");
    run_ok_green(&w);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

Test(scheduler, spawn_rejects_bad_arguments_and_creates_nothing)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1};
    stvm_process *p = (stvm_process *)(uintptr_t)0x5EED0;
    cr_assert_eq(stvm_spawn(w.vm, 0, "x", log_tag, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn(w.vm, 81, "x", log_tag, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn(w.vm, 30, "x", NULL, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn(NULL, 30, "x", log_tag, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn_suspended(w.vm, 81, "x", log_tag, &a, 0, &p), STVM_EINVAL);
    cr_assert_eq((uintptr_t)p, 0x5EED0);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    cr_assert_eq(stvm_spawn(w.vm, STVM_PRIORITY_MAX, "max", log_tag, &a, NULL), STVM_OK,
                 "out may be NULL");
    run_ok_green(&w);
    static const int want[] = {1};
    trace_expect(&w.t, want, 1);
    vm_done(w.vm);
}

static void spawn_suspended_then_resume(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor h;
    h = (actor){w, 2};
    w->rc[0] = stvm_spawn_suspended(vm, 50, "later", log_tag, &h, 0, &w->p[1]);
    trace_add(&w->t, 1);
    w->info[1].state = gstate(w->vm, w->p[1]);
    w->rc[1] = stvm_process_resume(vm, w->p[1]);   /* higher: runs now */
    trace_add(&w->t, 3);
}

Test(scheduler, spawn_suspended_runs_only_after_resume)
{
    world w = {.vm = vm_make(NULL)};
    spawn(w.vm, 30, "starter", spawn_suspended_then_resume, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[1].state, STVM_PROCESS_SUSPENDED);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}
