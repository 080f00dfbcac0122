/*
 * Priorities and preemption: the order of the run queues at spawn, preemption at
 * spawn and signal and the preemptionYields switch, yield (also at and below the idle
 * priority), priority changes, and checkpoint.
 *
 * Green processes never call Criterion's asserts (they may run on small stacks): they
 * record what they see in a `world`, and GCHECK notes the first line whose condition
 * failed; the host asserts after stvm_run returns.
 */
#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(preemption, .timeout = 30);

static stvm_vm *vm_yields(bool yields)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.preemption_yields = yields;
    return vm_make(&cfg);
}


/* ---- spawning and run queues --------------------------------------------------- */

Test(preemption, spawn_from_host_only_queues_until_run)
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

Test(preemption, strictly_higher_priority_preempts_at_spawn)
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

Test(preemption, equal_priority_spawn_waits_at_the_back_of_its_queue)
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

Test(preemption, lower_priority_spawn_waits_until_the_spawner_is_done)
{
    world w = {.vm = vm_make(NULL)};
    spawn(w.vm, 40, "A", spawner_lower, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}

Test(preemption, processes_of_one_priority_run_first_in_first_out)
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

Test(preemption, preemption_yields_true_puts_preempted_process_at_back_of_its_queue)
{
    static const int want[] = {1, 2, 4, 3};
    preemption_scenario(true, want);
}

Test(preemption, preemption_yields_false_puts_preempted_process_at_front_of_its_queue)
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

Test(preemption, preemption_by_signal_follows_preemption_yields_true)
{
    static const int want[] = {1, 2, 4, 3};
    signal_preemption_scenario(true, want);
}

Test(preemption, preemption_by_signal_follows_preemption_yields_false)
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

Test(preemption, yield_runs_the_other_processes_of_equal_priority_only)
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

Test(preemption, yield_without_equal_priority_peers_is_a_noop)
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
Test(preemption, idle_process_exists_at_priority_10_as_a_yield_peer)
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

Test(preemption, processes_below_idle_priority_run_when_nothing_else_can, .timeout = 5)
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

Test(preemption, yield_below_idle_priority_runs_the_peer_first_with_preemption_yields_true,
     .timeout = 5)
{
    below_idle_yield(true);
}

Test(preemption, yield_below_idle_priority_runs_the_peer_first_with_preemption_yields_false,
     .timeout = 5)
{
    below_idle_yield(false);
}

/* ---- priorities ------------------------------------------------------------------- */

static void raiser(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_set_priority(vm, w->p[1], 50);
    trace_add(&w->t, 3);
}

Test(preemption, raising_a_ready_process_above_the_caller_preempts_it)
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

Test(preemption, lowering_the_active_process_below_a_ready_one_yields_to_it)
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

Test(preemption, changing_the_priority_of_a_ready_process_moves_it_to_the_back)
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

Test(preemption, a_waiting_process_runs_at_its_new_priority_when_woken)
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

Test(preemption, a_priority_set_while_suspended_applies_when_resumed)
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

Test(preemption, checkpoint_returns_0_when_nothing_is_due)
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

Test(preemption, checkpoint_delivers_a_due_timer_and_lets_a_higher_process_run)
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

