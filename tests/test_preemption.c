/*
 * Priorities and preemption: the order of the run queues at spawn, preemption at
 * spawn and signal and the preemptionYields switch, yield (also at and below the idle
 * priority), priority changes, and checkpoint.
 *
 * Green processes record what they see in their test's scenario struct (see helpers.h);
 * the host asserts after stvm_run returns.
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
    run_order s = {.vm = vm_make(NULL)};
    tagged a30 = {&s.log, 30}, a50 = {&s.log, 50}, a40 = {&s.log, 40}, a41 = {&s.log, 41};
    stvm_process *p30 = spawn(s.vm, 30, "p30", log_tag, &a30);
    stvm_process *p50 = spawn(s.vm, 50, "p50", log_tag, &a50);
    stvm_process *p40 = spawn(s.vm, 40, "p40", log_tag, &a40);
    stvm_process *p41 = spawn(s.vm, 40, "p41", log_tag, &a41);
    cr_assert_eq(s.log.n, 0, "nothing runs before stvm_run");
    cr_assert_eq(state_of(s.vm, p30), STVM_PROCESS_READY);
    cr_assert_eq(state_of(s.vm, p50), STVM_PROCESS_READY);
    cr_assert_null(stvm_vm_active_process(s.vm));
    RUN_OK_GREEN(&s);
    static const int want[] = {50, 40, 41, 30};
    trace_expect(&s.log, want, 4);
    cr_assert_eq(state_of(s.vm, p30), STVM_PROCESS_TERMINATED);
    cr_assert_eq(state_of(s.vm, p41), STVM_PROCESS_TERMINATED);
    cr_assert_eq(state_of(s.vm, p40), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stats_of(s.vm).processes_live, 1);
    vm_done(s.vm);
}

/* A process that spawns another one (which logs its tag) and records the spawn. */
typedef struct spawner {
    stvm_vm *vm;
    trace_log log;
    int spawn_rc;
    stvm_process *spawned;
    stvm_process_state spawned_state;   /* once stvm_spawn has returned */
    int bad_line;
} spawner;

static void spawner_higher(stvm_vm *vm, void *arg)
{
    spawner *s = arg;
    static tagged h;
    h = (tagged){&s->log, 2};
    trace_add(&s->log, 1);
    s->spawn_rc = stvm_spawn(vm, 50, "high", log_tag, &h, &s->spawned);
    trace_add(&s->log, 3);
    s->spawned_state = gstate(s->vm, s->spawned);
}

Test(preemption, strictly_higher_priority_preempts_at_spawn)
{
    spawner s = {.vm = vm_make(NULL)};
    spawn(s.vm, 30, "spawner", spawner_higher, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.spawn_rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    cr_assert_eq(s.spawned_state, STVM_PROCESS_TERMINATED, "ran to the end before spawn returned");
    vm_done(s.vm);
}

static void spawner_equal(stvm_vm *vm, void *arg)
{
    spawner *s = arg;
    static tagged b;
    b = (tagged){&s->log, 5};
    trace_add(&s->log, 1);
    s->spawn_rc = stvm_spawn(vm, 30, "B", log_tag, &b, &s->spawned);
    s->spawned_state = gstate(s->vm, s->spawned);
    trace_add(&s->log, 2);
}

Test(preemption, equal_priority_spawn_waits_at_the_back_of_its_queue)
{
    spawner s = {.vm = vm_make(NULL)};
    tagged x = {&s.log, 4};
    spawn(s.vm, 30, "A", spawner_equal, &s);
    spawn(s.vm, 30, "X", log_tag, &x);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.spawn_rc, STVM_OK);
    cr_assert_eq(s.spawned_state, STVM_PROCESS_READY);
    static const int want[] = {1, 2, 4, 5};   /* B behind X, which was queued first */
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
}

static void spawner_lower(stvm_vm *vm, void *arg)
{
    spawner *s = arg;
    static tagged l;
    l = (tagged){&s->log, 3};
    trace_add(&s->log, 1);
    s->spawn_rc = stvm_spawn(vm, 20, "low", log_tag, &l, NULL);
    trace_add(&s->log, 2);
}

Test(preemption, lower_priority_spawn_waits_until_the_spawner_is_done)
{
    spawner s = {.vm = vm_make(NULL)};
    spawn(s.vm, 40, "A", spawner_lower, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.spawn_rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    vm_done(s.vm);
}

Test(preemption, processes_of_one_priority_run_first_in_first_out)
{
    run_order s = {.vm = vm_make(NULL)};
    tagged a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = (tagged){&s.log, i};
        spawn(s.vm, 40, "fifo", log_tag, &a[i]);
    }
    RUN_OK_GREEN(&s);
    static const int want[] = {0, 1, 2, 3, 4, 5, 6, 7};
    trace_expect(&s.log, want, 8);
    vm_done(s.vm);
}

/* ---- preemptionYields ------------------------------------------------------------- */

/* A (30) and B (30) are ready, A first. A logs 1 and spawns H (50), which logs 2 and
 * preempts A. Then: yields=true puts A behind B (B logs 4 before A logs 3);
 * yields=false puts A back in front (A logs 3, then B logs 4). */
static void preempted_a(stvm_vm *vm, void *arg)
{
    spawner *s = arg;
    static tagged h;
    h = (tagged){&s->log, 2};
    trace_add(&s->log, 1);
    s->spawn_rc = stvm_spawn(vm, 50, "H", log_tag, &h, NULL);
    trace_add(&s->log, 3);
}

static void preemption_scenario(bool yields, const int want[4])
{
    spawner s = {.vm = vm_yields(yields)};
    tagged b = {&s.log, 4};
    spawn(s.vm, 30, "A", preempted_a, &s);
    spawn(s.vm, 30, "B", log_tag, &b);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.spawn_rc, STVM_OK);
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
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
typedef struct signal_preemption {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    int signal_rc;
    int bad_line;
} signal_preemption;

static void signalling_a(stvm_vm *vm, void *arg)
{
    signal_preemption *s = arg;
    trace_add(&s->log, 1);
    s->signal_rc = stvm_semaphore_signal(vm, s->sem);
    trace_add(&s->log, 3);
}

static void signal_preemption_scenario(bool yields, const int want[4])
{
    signal_preemption s = {.vm = vm_yields(yields)};
    tagged b = {&s.log, 4};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    logged_wait h = {.sem = s.sem, .log = &s.log, .tag = 2};
    spawn(s.vm, 50, "H", wait_and_log, &h);
    spawn(s.vm, 30, "A", signalling_a, &s);
    spawn(s.vm, 30, "B", log_tag, &b);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.signal_rc, STVM_OK);
    cr_assert_eq(h.rc, STVM_OK);
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
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

typedef struct yielding {
    stvm_vm *vm;
    trace_log log;
    int yield_rc;
    uint64_t yield_switches;   /* context switches during the yield */
    int bad_line;
} yielding;

static void yielder(stvm_vm *vm, void *arg)
{
    yielding *s = arg;
    trace_add(&s->log, 1);
    s->yield_rc = stvm_yield(vm);
    trace_add(&s->log, 3);
}

Test(preemption, yield_runs_the_other_processes_of_equal_priority_only)
{
    yielding s = {.vm = vm_make(NULL)};
    tagged b = {&s.log, 2}, low = {&s.log, 4};
    spawn(s.vm, 30, "A", yielder, &s);
    spawn(s.vm, 20, "L", log_tag, &low);
    spawn(s.vm, 30, "B", log_tag, &b);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.yield_rc, STVM_OK);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
}

static void lonely_yielder(stvm_vm *vm, void *arg)
{
    yielding *s = arg;
    trace_add(&s->log, 1);
    uint64_t before = switches(vm);
    s->yield_rc = stvm_yield(vm);
    s->yield_switches = switches(vm) - before;
    trace_add(&s->log, 2);
}

Test(preemption, yield_without_equal_priority_peers_is_a_noop)
{
    yielding s = {.vm = vm_make(NULL)};
    tagged low = {&s.log, 3};
    spawn(s.vm, 40, "alone", lonely_yielder, &s);
    spawn(s.vm, 30, "lower", log_tag, &low);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.yield_rc, STVM_OK);
    cr_assert_eq(s.yield_switches, 0, "yield switched %llu times",
                 (unsigned long long)s.yield_switches);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    vm_done(s.vm);
}

/* The idle process is a peer at priority 10: yielding there passes through it. */
Test(preemption, idle_process_exists_at_priority_10_as_a_yield_peer)
{
    yielding s = {.vm = vm_make(NULL)};
    cr_assert_eq(stats_of(s.vm).processes_live, 1, "the idle process");
    stvm_process *p = spawn(s.vm, STVM_PRIORITY_IDLE, "at10", lonely_yielder, &s);
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(s.vm, p, &info), STVM_OK);
    cr_assert_eq(info.id, 2, "the idle process is 1");
    cr_assert_eq(info.vm_own, false);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.yield_rc, STVM_OK);
    cr_assert_eq(s.yield_switches, 2, "to the idle process and back, got %llu",
                 (unsigned long long)s.yield_switches);
    cr_assert_eq(stats_of(s.vm).processes_live, 1);
    vm_done(s.vm);
}

Test(preemption, processes_below_idle_priority_run_when_nothing_else_can, .timeout = 5)
{
    run_order s = {.vm = vm_make(NULL)};
    tagged a = {&s.log, 5}, b = {&s.log, 1}, c = {&s.log, 30};
    spawn(s.vm, 5, "p5", log_tag, &a);
    spawn(s.vm, 1, "p1", log_tag, &b);
    spawn(s.vm, 30, "p30", log_tag, &c);
    RUN_OK_GREEN(&s);
    static const int want[] = {30, 5, 1};
    trace_expect(&s.log, want, 3);
    vm_done(s.vm);
}

/* Two processes below the idle priority: yield lets the other one run first, whichever
 * end of its queue a preempted process goes to (the idle process taking the processor
 * back on the way must not put the yielder back in front of its peer). */
static void below_idle_yield(bool yields)
{
    yielding s = {.vm = vm_yields(yields)};
    tagged b = {&s.log, 2};
    spawn(s.vm, 5, "A", yielder, &s);
    spawn(s.vm, 5, "B", log_tag, &b);
    RUN_OK_GREEN(&s);
    vm_done(s.vm);   /* before the trace check: a failure must not leak the VM */
    cr_assert_eq(s.yield_rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
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

/* A controller changes a process's priority (its own or another's); that process may
 * wait on sem meanwhile. */
typedef struct reprioritizing {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    stvm_process *target;
    int set_priority_rc;
    stvm_process_state target_state;   /* right after the change */
    int bad_line;
} reprioritizing;

static void raiser(stvm_vm *vm, void *arg)
{
    reprioritizing *s = arg;
    trace_add(&s->log, 1);
    s->set_priority_rc = stvm_process_set_priority(vm, s->target, 50);
    trace_add(&s->log, 3);
}

Test(preemption, raising_a_ready_process_above_the_caller_preempts_it)
{
    reprioritizing s = {.vm = vm_make(NULL)};
    tagged r = {&s.log, 2};
    spawn(s.vm, 30, "A", raiser, &s);
    s.target = spawn(s.vm, 20, "R", log_tag, &r);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.set_priority_rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(s.vm, s.target, &info), STVM_OK);
    cr_assert_eq(info.priority, 50);
    vm_done(s.vm);
}

static void lowerer(stvm_vm *vm, void *arg)
{
    reprioritizing *s = arg;
    trace_add(&s->log, 1);
    s->set_priority_rc = stvm_process_set_priority(vm, stvm_vm_active_process(vm), 20);
    trace_add(&s->log, 3);
}

Test(preemption, lowering_the_active_process_below_a_ready_one_yields_to_it)
{
    reprioritizing s = {.vm = vm_make(NULL)};
    tagged b = {&s.log, 2}, c = {&s.log, 4};
    spawn(s.vm, 40, "A", lowerer, &s);
    spawn(s.vm, 30, "B", log_tag, &b);
    spawn(s.vm, 10, "C", log_tag, &c);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.set_priority_rc, STVM_OK);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
}

Test(preemption, changing_the_priority_of_a_ready_process_moves_it_to_the_back)
{
    run_order s = {.vm = vm_make(NULL)};
    tagged y = {&s.log, 1}, x = {&s.log, 2}, z = {&s.log, 3};
    stvm_process *py = spawn(s.vm, 30, "Y", log_tag, &y);
    spawn(s.vm, 30, "X", log_tag, &x);
    stvm_process *pz = spawn(s.vm, 20, "Z", log_tag, &z);
    cr_assert_eq(stvm_process_set_priority(s.vm, py, 30), STVM_OK);   /* behind X */
    cr_assert_eq(stvm_process_set_priority(s.vm, pz, 30), STVM_OK);   /* behind Y */
    cr_assert_eq(state_of(s.vm, pz), STVM_PROCESS_READY);
    RUN_OK_GREEN(&s);
    static const int want[] = {2, 1, 3};
    trace_expect(&s.log, want, 3);
    vm_done(s.vm);
}

static void raise_waiter_then_signal(stvm_vm *vm, void *arg)
{
    reprioritizing *s = arg;
    s->set_priority_rc = stvm_process_set_priority(vm, s->target, 50);
    s->target_state = gstate(s->vm, s->target);
    trace_add(&s->log, 1);
    stvm_semaphore_signal(vm, s->sem);   /* the waiter is now higher: preempts */
    trace_add(&s->log, 3);
}

Test(preemption, a_waiting_process_runs_at_its_new_priority_when_woken)
{
    reprioritizing s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    logged_wait w = {.sem = s.sem, .log = &s.log, .tag = 2};
    s.target = spawn(s.vm, 45, "W", wait_and_log, &w);
    spawn(s.vm, 40, "C", raise_waiter_then_signal, &s);
    /* W at 45 runs first and waits; C raises it from 45 to 50 */
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.set_priority_rc, STVM_OK);
    cr_assert_eq(s.target_state, STVM_PROCESS_WAITING, "still waiting after the change");
    cr_assert_eq(w.rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    vm_done(s.vm);
}

Test(preemption, a_priority_set_while_suspended_applies_when_resumed)
{
    run_order s = {.vm = vm_make(NULL)};
    tagged a = {&s.log, 1}, b = {&s.log, 2};
    stvm_process *pa = NULL;
    cr_assert_eq(stvm_spawn_suspended(s.vm, 20, "A", log_tag, &a, 0, &pa), STVM_OK);
    spawn(s.vm, 40, "B", log_tag, &b);
    cr_assert_eq(stvm_process_set_priority(s.vm, pa, 60), STVM_OK);
    cr_assert_eq(state_of(s.vm, pa), STVM_PROCESS_SUSPENDED, "still suspended");
    cr_assert_eq(stvm_process_resume(s.vm, pa), STVM_OK);
    RUN_OK_GREEN(&s);
    static const int want[] = {1, 2};   /* A now outranks B */
    trace_expect(&s.log, want, 2);
    vm_done(s.vm);
}

/* ---- checkpoint ------------------------------------------------------------------- */

typedef struct checkpointing {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    int first_checkpoint, second_checkpoint;   /* what the two checkpoints answered */
    uint64_t switches;                          /* context switches during both */
    int bad_line;
} checkpointing;

static void checkpointer(stvm_vm *vm, void *arg)
{
    checkpointing *s = arg;
    uint64_t before = switches(vm);
    s->first_checkpoint = stvm_checkpoint(vm);
    s->second_checkpoint = stvm_checkpoint(vm);
    s->switches = switches(vm) - before;
    trace_add(&s->log, 1);
}

Test(preemption, checkpoint_returns_0_when_nothing_is_due)
{
    checkpointing s = {.vm = vm_make(NULL)};
    tagged same = {&s.log, 2}, low = {&s.log, 3};
    spawn(s.vm, 40, "cp", checkpointer, &s);
    spawn(s.vm, 40, "same", log_tag, &same);   /* equal priority: no preemption */
    spawn(s.vm, 30, "low", log_tag, &low);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.first_checkpoint, 0);
    cr_assert_eq(s.second_checkpoint, 0);
    cr_assert_eq(s.switches, 0);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    vm_done(s.vm);
}

static void timer_checkpointer(stvm_vm *vm, void *arg)
{
    checkpointing *s = arg;
    stvm_oop now, args[2];
    int fail = 0;
    GCHECK(s, stvm_primitive_call(vm, 240, STVM_NIL, NULL, 0, &now, &fail) == STVM_OK);
    args[0] = stvm_semaphore_oop(s->sem);
    args[1] = now;   /* due at once: the simulated clock stands still while we run */
    GCHECK(s, stvm_primitive_call(vm, 242, STVM_NIL, args, 2, NULL, &fail) == STVM_OK);
    stvm_oop_release(vm, now);
    trace_add(&s->log, 1);
    s->first_checkpoint = stvm_checkpoint(vm);   /* fires the timer: the waiter (50) preempts */
    trace_add(&s->log, 3);
    s->second_checkpoint = stvm_checkpoint(vm);
}

Test(preemption, checkpoint_delivers_a_due_timer_and_lets_a_higher_process_run)
{
    checkpointing s = {.vm = vm_make_sim(61, STVM_DELAY_CLOCK_US)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    logged_wait w = {.sem = s.sem, .log = &s.log, .tag = 2};
    spawn(s.vm, 50, "waiter", wait_and_log, &w);
    spawn(s.vm, 30, "worker", timer_checkpointer, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.first_checkpoint, 1, "checkpoint answered %d", s.first_checkpoint);
    cr_assert_eq(s.second_checkpoint, 0);
    cr_assert_eq(w.rc, STVM_OK);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    cr_assert_eq(stats_of(s.vm).timer_fires, 1);
    vm_done(s.vm);
}
