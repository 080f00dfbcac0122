/*
 * The simulated clock's outside world and CPU work (suite sim_world): stvm_sim_at runs
 * its events in time order as the clock passes them, is not a deadline (the legacy idle
 * mode's blind jump sleeps through it, the poll mode's jump ends at it), keeps a VM with
 * nothing else pending alive, and drops what is pending at stvm_vm_free; stvm_work_us
 * moves the simulated clock by exactly its length, letting timers and outside events
 * happen at their own instants. Simulated clock only: no wall-clock sleeps.
 */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helpers.h"
#include "../vm/sim_world.h"

TestSuite(sim_world, .timeout = 30);

/* ---- outside events ------------------------------------------------------------------ */

typedef struct seen {
    stvm_vm *vm;
    int tags[8];
    uint64_t at[8];
    int n;
    uint64_t start;
} seen;

typedef struct tag_event {
    seen *s;
    int tag;
} tag_event;

static void note(stvm_vm *vm, void *arg)
{
    tag_event *t = arg;
    t->s->tags[t->s->n] = t->tag;
    t->s->at[t->s->n++] = stvm_vm_now_us(vm);
}

static void wait_100us(stvm_vm *vm, void *arg)
{
    cr_assert_eq(stvm_delay_wait_us(vm, 100), STVM_OK);
}

Test(sim_world, sim_at_refuses_bad_input_and_schedules_nothing)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    seen s = {.vm = vm};
    tag_event t = {&s, 1};
    uint64_t now = stvm_vm_now_us(vm);
    cr_assert_eq(stvm_sim_at(NULL, now, note, &t), STVM_EINVAL);
    cr_assert_eq(stvm_sim_at(vm, now, NULL, &t), STVM_EINVAL);
    cr_assert_eq(stvm_sim_at(vm, now - 1, note, &t), STVM_ERANGE);
    cr_assert_eq(stvm_sim_at(vm, (uint64_t)1 << 62, note, &t), STVM_ERANGE);
    cr_assert_eq(stvm_sim_at(vm, UINT64_MAX, note, &t), STVM_ERANGE);
    spawn(vm, 40, "waiter", wait_100us, NULL);
    run_ok(vm);
    cr_assert_eq(s.n, 0, "a refused event ran");
    vm_done(vm);

    stvm_config cfg;
    stvm_config_init(&cfg);
    vm = vm_make(&cfg);
    cr_assert_eq(stvm_sim_at(vm, stvm_vm_now_us(vm) + 10, note, &t), STVM_ESTATE,
                 "the real clock has no outside world to schedule");
    vm_done(vm);
}

Test(sim_world, outside_events_run_in_time_order_and_equal_times_in_the_order_made)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    seen s = {.vm = vm};
    tag_event t[4] = {{&s, 30}, {&s, 10}, {&s, 11}, {&s, 20}};
    uint64_t start = stvm_vm_now_us(vm), when[4] = {30, 10, 10, 20};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(stvm_sim_at(vm, start + when[i], note, &t[i]), STVM_OK);
    spawn(vm, 40, "waiter", wait_100us, NULL);
    run_ok(vm);
    int want[4] = {10, 11, 20, 30};
    uint64_t want_at[4] = {10, 10, 20, 30};
    cr_assert_eq(s.n, 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(s.tags[i], want[i], "event %d", i);
        cr_assert_eq(s.at[i] - start, want_at[i], "event %d ran at +%llu us", i,
                     (unsigned long long)(s.at[i] - start));
    }
    vm_done(vm);
}

/* A process waits on a registered semaphore that only the outside world signals: the
 * pending event keeps stvm_run from calling it a deadlock, and the signal comes at the
 * event's time. */
typedef struct external_wait {
    stvm_semaphore *sem;
    int index;
    uint64_t woke;
} external_wait;

static void signal_it(stvm_vm *vm, void *arg)
{
    external_wait *w = arg;
    cr_assert_eq(stvm_external_signal(vm, w->index), STVM_OK);
}

static void wait_external(stvm_vm *vm, void *arg)
{
    external_wait *w = arg;
    cr_assert_eq(stvm_semaphore_wait(vm, w->sem), STVM_OK);
    w->woke = stvm_vm_now_us(vm);
}

Test(sim_world, a_pending_outside_event_is_something_that_can_still_wake_the_vm)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    external_wait w = {.sem = sem_make(vm)};
    cr_assert_eq(stvm_external_register(vm, w.sem, &w.index), STVM_OK);
    uint64_t start = stvm_vm_now_us(vm);
    cr_assert_eq(stvm_sim_at(vm, start + 7000, signal_it, &w), STVM_OK);
    spawn(vm, 40, "waiter", wait_external, &w);
    run_ok(vm);
    cr_assert_eq(w.woke - start, 7000u);
    cr_assert_eq(stvm_external_unregister(vm, w.index), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, w.sem), STVM_OK);
    vm_done(vm);
}

Test(sim_world, events_pending_at_vm_free_are_dropped_uncalled)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    seen s = {.vm = vm};
    tag_event t = {&s, 1};
    for (int i = 0; i < 20; i++)   /* past the first growth of the array */
        cr_assert_eq(stvm_sim_at(vm, stvm_vm_now_us(vm) + 1000 + (uint64_t)i, note, &t), STVM_OK);
    vm_done(vm);   /* AddressSanitizer's leak check covers the array */
    cr_assert_eq(s.n, 0);
}

/* ---- the blind jump of the legacy idle mode -------------------------------------------- */

typedef struct peer {
    int fds[2];                /* [0] the reader's, [1] the outside world's */
    uint64_t start, woke;
    int rc;
} peer;

static void peer_writes(stvm_vm *vm, void *arg)
{
    peer *p = arg;
    cr_assert_eq(write(p->fds[1], "x", 1), 1);
}

static void read_peer(stvm_vm *vm, void *arg)
{
    peer *p = arg;
    p->start = stvm_vm_now_us(vm);
    cr_assert_eq(stvm_sim_at(vm, p->start + 40, peer_writes, p), STVM_OK);
    p->rc = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, 30000);
    p->woke = stvm_vm_now_us(vm);
}

/* How long the reader waited for a peer answering 40 us after it began, with every
 * wake-up costing inject us, or what wake says. */
static uint64_t wait_for_peer_woken(int idle_mode, uint32_t inject, stvm_sim_wake_fn wake,
                                    void *arg)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = STVM_CLOCK_SIMULATED;
    cfg.sim_start_us = SIM_START;
    cfg.idle_mode = idle_mode;
    cfg.idle_relinquish_us = STVM_RELINQUISH_PHARO5_US;
    cfg.wake_inject_us = inject;
    stvm_vm *vm = vm_make(&cfg);
    if (wake)
        stvm__sim_set_wake_cost(vm, wake, arg);
    peer p = {0};
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p.fds), 0);
    spawn(vm, 40, "reader", read_peer, &p);
    run_ok(vm);
    cr_assert_eq(p.rc, STVM_IO_READ);
    close(p.fds[0]);
    close(p.fds[1]);
    vm_done(vm);
    return p.woke - p.start;
}

static uint64_t wait_for_peer(int idle_mode)
{
    return wait_for_peer_woken(idle_mode, 0, NULL, NULL);
}

Test(sim_world, in_poll_mode_a_descriptor_the_outside_world_readies_wakes_its_waiter_at_once)
{
    cr_assert_eq(wait_for_peer(STVM_IDLE_POLL), 40u);
}

Test(sim_world, in_legacy_mode_the_waiter_sees_it_only_after_the_whole_blind_jump)
{
    cr_assert_eq(wait_for_peer(STVM_IDLE_LEGACY), 1000u, "Pharo 5's quantum, 1 ms");
}

Test(sim_world, every_simulated_wake_up_costs_wake_inject_us_after_what_ended_the_jump)
{
    cr_assert_eq(wait_for_peer_woken(STVM_IDLE_POLL, 250, NULL, NULL), 40u + 250u);
    cr_assert_eq(wait_for_peer_woken(STVM_IDLE_LEGACY, 250, NULL, NULL), 1000u + 250u);
}

typedef struct wake_seen {
    uint64_t requested, slept;
    int end, calls;
} wake_seen;

static uint64_t wake_13us(stvm_vm *vm, void *arg, uint64_t requested, uint64_t slept, int end)
{
    wake_seen *w = arg;
    *w = (wake_seen){requested, slept, end, w->calls + 1};
    return 13;
}

Test(sim_world, a_wake_cost_function_is_told_each_jump_and_its_answer_replaces_wake_inject_us)
{
    wake_seen w = {0};
    cr_assert_eq(wait_for_peer_woken(STVM_IDLE_POLL, 250, wake_13us, &w), 40u + 13u);
    cr_assert_eq(w.calls, 1, "one jump, to the peer's answer");
    cr_assert_eq(w.slept, 40u);
    cr_assert_eq(w.end, STVM_TRACE_END_OUTSIDE);
    w = (wake_seen){0};
    cr_assert_eq(wait_for_peer_woken(STVM_IDLE_LEGACY, 0, wake_13us, &w), 1000u + 13u);
    cr_assert_eq(w.requested, 1000u, "the blind quantum was asked for");
    cr_assert_eq(w.slept, 1000u);
    cr_assert_eq(w.end, STVM_TRACE_END_TIMEOUT);
}

/* ---- work ---------------------------------------------------------------------------------- */

typedef struct worker {
    uint64_t us, t0, t1, woke;
    int rc;
} worker;

static void work(stvm_vm *vm, void *arg)
{
    worker *w = arg;
    w->t0 = stvm_vm_now_us(vm);
    w->rc = stvm_work_us(vm, w->us);
    w->t1 = stvm_vm_now_us(vm);
}

static void sleep_100us(stvm_vm *vm, void *arg)
{
    worker *w = arg;
    cr_assert_eq(stvm_delay_wait_us(vm, 100), STVM_OK);
    w->woke = stvm_vm_now_us(vm);
}

Test(sim_world, work_moves_the_simulated_clock_by_exactly_its_length)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    worker w = {.us = 250};
    spawn(vm, 40, "worker", work, &w);
    run_ok(vm);
    cr_assert_eq(w.rc, STVM_OK);
    cr_assert_eq(w.t1 - w.t0, 250u);
    vm_done(vm);
}

Test(sim_world, a_delay_ending_during_work_wakes_its_higher_priority_process_at_its_instant)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    worker lo = {.us = 300}, hi = {0};
    spawn(vm, 50, "hi", sleep_100us, &hi);   /* its Delay starts first */
    spawn(vm, 30, "lo", work, &lo);
    run_ok(vm);
    cr_assert_eq(lo.rc, STVM_OK);
    cr_assert_eq(hi.woke - lo.t0, 100u, "hi woke %llu us into lo's work",
                 (unsigned long long)(hi.woke - lo.t0));
    cr_assert_eq(lo.t1 - lo.t0, 300u, "hi ran in no simulated time");
    vm_done(vm);
}

static void work_past_an_event(stvm_vm *vm, void *arg)
{
    seen *s = arg;
    static tag_event t;
    t = (tag_event){s, 1};
    uint64_t start = s->start = stvm_vm_now_us(vm);
    cr_assert_eq(stvm_sim_at(vm, start + 40, note, &t), STVM_OK);
    cr_assert_eq(stvm_work_us(vm, 100), STVM_OK);
    s->at[1] = stvm_vm_now_us(vm) - start;
    s->at[0] -= start;
}

Test(sim_world, an_outside_event_during_work_runs_at_its_own_time_and_is_traced)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    cr_assert_eq(stvm_trace_start(vm, 256), STVM_OK);
    seen s = {.vm = vm};
    spawn(vm, 40, "worker", work_past_an_event, &s);
    run_ok(vm);
    cr_assert_eq(s.n, 1);
    cr_assert_eq(s.at[0], 40u);
    cr_assert_eq(s.at[1], 100u);
    int outside = 0;
    stvm_trace_event ev;
    for (int64_t i = 0; i < stvm_trace_count(vm); i++) {
        cr_assert_eq(stvm_trace_get(vm, (size_t)i, &ev), STVM_OK);
        if (ev.kind == STVM_TRACE_OUTSIDE) {
            outside++;
            cr_assert_eq(ev.time_us, s.start + 40);
        }
    }
    cr_assert_eq(outside, 1);
    vm_done(vm);
}

typedef struct work_refusals {
    int rc[2];
    uint64_t t0, t1;
} work_refusals;

static void refuse_work(stvm_vm *vm, void *arg)
{
    work_refusals *r = arg;
    r->t0 = stvm_vm_now_us(vm);
    r->rc[0] = stvm_work_us(vm, STVM_MAX_WORK_US + 1);
    r->rc[1] = stvm_work_us(NULL, 1);
    r->t1 = stvm_vm_now_us(vm);
}

Test(sim_world, work_refuses_bad_input_and_spends_nothing)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    cr_assert_eq(stvm_work_us(vm, 1), STVM_ENOTPROC, "the host thread is no process");
    work_refusals r = {0};
    spawn(vm, 40, "refuser", refuse_work, &r);
    run_ok(vm);
    cr_assert_eq(r.rc[0], STVM_ERANGE);
    cr_assert_eq(r.rc[1], STVM_EINVAL);
    cr_assert_eq(r.t1, r.t0);
    vm_done(vm);
}
