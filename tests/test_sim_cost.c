/*
 * The simulated clock's modelled cost per scheduler operation (suite sim_cost):
 * stvm_sim_set_cost refuses bad input and changes nothing then; each operation moves the
 * clock by exactly its cost, with or without a trace recording; costs of 0 leave a run
 * exactly as it was; an outside event due during a charge runs at its own time, and a
 * deadline passed during one fires late, never early. Simulated clock only.
 */
#include "helpers.h"

TestSuite(sim_cost, .timeout = 30);

static stvm_vm *sim_with(uint32_t switch_us, uint32_t signal_us, uint32_t wait_us, uint32_t delay_us)
{
    stvm_vm *vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
    uint32_t us[STVM_SIM_COST_OPS] = {switch_us, signal_us, wait_us, delay_us};
    for (int op = 0; op < STVM_SIM_COST_OPS; op++)
        cr_assert_eq(stvm_sim_set_cost(vm, op, us[op]), STVM_OK);
    return vm;
}

Test(sim_cost, set_cost_refuses_bad_input_and_keeps_the_costs_it_had)
{
    stvm_vm *vm = sim_with(1, 2, 3, 4);
    cr_assert_eq(stvm_sim_set_cost(NULL, STVM_SIM_COST_SWITCH, 5), STVM_EINVAL);
    cr_assert_eq(stvm_sim_set_cost(vm, -1, 5), STVM_EINVAL);
    cr_assert_eq(stvm_sim_set_cost(vm, STVM_SIM_COST_OPS, 5), STVM_EINVAL);
    cr_assert_eq(stvm_sim_set_cost(vm, STVM_SIM_COST_WAIT, STVM_SIM_COST_MAX_US + 1), STVM_ERANGE);
    cr_assert_eq(stvm_sim_set_cost(vm, STVM_SIM_COST_WAIT, UINT32_MAX), STVM_ERANGE);
    for (int op = 0; op < STVM_SIM_COST_OPS; op++)
        cr_assert_eq(stvm_sim_cost(vm, op), op + 1, "op %d's cost changed", op);
    cr_assert_eq(stvm_sim_cost(NULL, 0), STVM_EINVAL);
    cr_assert_eq(stvm_sim_cost(vm, STVM_SIM_COST_OPS), STVM_EINVAL);
    cr_assert_eq(stvm_sim_set_cost(vm, STVM_SIM_COST_DELAY, STVM_SIM_COST_MAX_US), STVM_OK);
    cr_assert_eq(stvm_sim_cost(vm, STVM_SIM_COST_DELAY), STVM_SIM_COST_MAX_US);
    vm_done(vm);

    stvm_config cfg;
    stvm_config_init(&cfg);
    vm = vm_make(&cfg);
    cr_assert_eq(stvm_sim_set_cost(vm, STVM_SIM_COST_SWITCH, 1), STVM_ESTATE,
                 "the real clock's operations take the time they take");
    cr_assert_eq(stvm_sim_cost(vm, STVM_SIM_COST_SWITCH), 0);
    vm_done(vm);
}

/* A signal with nobody waiting, then a wait that takes it: no switch at all. */
static void signal_then_wait(stvm_vm *vm, void *arg)
{
    stvm_semaphore *s = arg;
    stvm_semaphore_signal(vm, s);
    stvm_semaphore_wait(vm, s);
}

Test(sim_cost, a_signal_and_a_wait_move_the_clock_by_exactly_their_costs)
{
    stvm_vm *vm = sim_with(0, 3, 5, 0);
    stvm_semaphore *s = sem_make(vm);
    uint64_t start = stvm_vm_now_us(vm);
    spawn(vm, 40, "signals then waits", signal_then_wait, s);
    run_ok(vm);
    cr_assert_eq(stvm_vm_now_us(vm) - start, 8, "3 us signal + 5 us wait, got %llu",
                 (unsigned long long)(stvm_vm_now_us(vm) - start));
    vm_done(vm);
}

static void yields(stvm_vm *vm, void *arg)
{
    for (int i = 0; i < 10; i++)
        stvm_yield(vm);
}

/* Two processes yielding to each other; the trace, when asked, counts the switches
 * between processes. Answers the simulated time the run took. */
static uint64_t yield_run(bool traced, int64_t *process_switches)
{
    stvm_vm *vm = sim_with(7, 0, 0, 0);
    if (traced)
        cr_assert_eq(stvm_trace_start(vm, 4096), STVM_OK);
    uint64_t start = stvm_vm_now_us(vm);
    spawn(vm, 40, "a", yields, NULL);
    spawn(vm, 40, "b", yields, NULL);
    run_ok(vm);
    uint64_t took = stvm_vm_now_us(vm) - start;
    *process_switches = 0;
    for (int64_t i = 0; traced && i < stvm_trace_count(vm); i++) {
        stvm_trace_event ev;
        cr_assert_eq(stvm_trace_get(vm, (size_t)i, &ev), STVM_OK);
        *process_switches += ev.kind == STVM_TRACE_SWITCH && ev.process && ev.object;
    }
    vm_done(vm);
    return took;
}

Test(sim_cost, each_switch_between_processes_costs_its_time_traced_or_not)
{
    int64_t n, unused;
    uint64_t traced = yield_run(true, &n), untraced = yield_run(false, &unused);
    cr_assert_gt(n, 20, "two processes yielding ten times each switch at least 20 times");
    cr_assert_eq(traced, (uint64_t)n * 7, "%lld switches of 7 us took %llu us", (long long)n,
                 (unsigned long long)traced);
    cr_assert_eq(untraced, traced, "the cost is charged whether or not a trace records");
}

static void sleeps_100us(stvm_vm *vm, void *arg)
{
    stvm_delay_wait_us(vm, 100);
}

/* Every event's time, in order, of a run of two Delays and a yield. */
static int trace_times(stvm_vm *vm, uint64_t *times, int max)
{
    spawn(vm, 40, "sleeps", sleeps_100us, NULL);
    spawn(vm, 40, "yields", yields, NULL);
    cr_assert_eq(stvm_trace_start(vm, 4096), STVM_OK);
    run_ok(vm);
    int n = (int)stvm_trace_count(vm);
    cr_assert_leq(n, max);
    for (int i = 0; i < n; i++) {
        stvm_trace_event ev;
        cr_assert_eq(stvm_trace_get(vm, (size_t)i, &ev), STVM_OK);
        times[i] = ev.time_us;
    }
    return n;
}

Test(sim_cost, costs_set_back_to_zero_leave_the_run_exactly_as_without_them)
{
    uint64_t plain[512], zeroed[512];
    stvm_vm *vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
    int n = trace_times(vm, plain, 512);
    vm_done(vm);
    vm = sim_with(5, 5, 5, 5);
    for (int op = 0; op < STVM_SIM_COST_OPS; op++)
        cr_assert_eq(stvm_sim_set_cost(vm, op, 0), STVM_OK);
    cr_assert_eq(trace_times(vm, zeroed, 512), n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(zeroed[i], plain[i], "event %d at %llu, not %llu", i,
                     (unsigned long long)zeroed[i], (unsigned long long)plain[i]);
    vm_done(vm);
}

Test(sim_cost, with_costs_events_fall_at_distinct_times_in_the_order_they_happen)
{
    uint64_t t[512];
    stvm_vm *vm = sim_with(1, 1, 1, 1);
    int n = trace_times(vm, t, 512), distinct = 1;
    for (int i = 1; i < n; i++) {
        cr_assert_geq(t[i], t[i - 1], "event %d goes back in time", i);
        distinct += t[i] != t[i - 1];
    }
    vm_done(vm);
    vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
    int plain = 1, m = trace_times(vm, t, 512);
    for (int i = 1; i < m; i++)
        plain += t[i] != t[i - 1];
    vm_done(vm);
    cr_assert_gt(distinct, 3 * plain, "%d distinct times with costs, %d without", distinct, plain);
}

typedef struct when {
    stvm_vm *vm;
    uint64_t at;
} when;

static void note_time(stvm_vm *vm, void *arg)
{
    ((when *)arg)->at = stvm_vm_now_us(vm);
}

Test(sim_cost, an_outside_event_due_during_a_charge_runs_at_its_own_time)
{
    stvm_vm *vm = sim_with(50, 0, 0, 0);
    uint64_t start = stvm_vm_now_us(vm);
    when w = {vm, 0};
    cr_assert_eq(stvm_sim_at(vm, start + 10, note_time, &w), STVM_OK);
    spawn(vm, 40, "a", yields, NULL);
    spawn(vm, 40, "b", yields, NULL);
    run_ok(vm);
    cr_assert_eq(w.at, start + 10, "the outside event ran at +%llu us",
                 (unsigned long long)(w.at - start));
    cr_assert_geq(stvm_vm_now_us(vm) - start, 50 * 20);
    vm_done(vm);
}

typedef struct sleeper {
    uint64_t asked, woke;
} sleeper;

static void sleeps_10us_noting(stvm_vm *vm, void *arg)
{
    sleeper *s = arg;
    s->asked = stvm_vm_now_us(vm);
    stvm_delay_wait_us(vm, 10);
    s->woke = stvm_vm_now_us(vm);
}

Test(sim_cost, a_deadline_passed_during_a_charge_fires_late_never_early)
{
    stvm_vm *vm = sim_with(30, 30, 30, 30);
    sleeper s = {0};
    spawn(vm, 40, "sleeps", sleeps_10us_noting, &s);
    spawn(vm, 40, "yields", yields, NULL);
    run_ok(vm);
    cr_assert_geq(s.woke, s.asked + 10, "woke %llu us after asking for 10",
                  (unsigned long long)(s.woke - s.asked));
    vm_done(vm);
}
