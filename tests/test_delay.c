/*
 * Suite "delay": the Delay scheduler (image-stubs/kernel/delay_scheduler.c) through stvm_delay_wait_ms
 * and stvm_delay_wait_us, in the four integer/clock representations:
 *
 *   ms-smallint31  millisecond scheduler (135/136), 31-bit SmallIntegers
 *   us-largeint31  microsecond scheduler (240/242), 31-bit: timestamps are boxes
 *   us-smallint61  microsecond scheduler, 61-bit: timestamps are SmallIntegers
 *   ms-smallint61  millisecond scheduler, 61-bit
 *
 * All but one test run on the simulated clock, so elapsed times are exact: the
 * microsecond scheduler ends a delay exactly `duration` later; the millisecond one
 * counts whole ticks of the millisecond clock (documented: up to 1 ms early by the
 * microsecond clock), which is exact when the delay starts on a tick boundary, as every
 * delay does when simulated time only ever moves to millisecond deadlines.
 *
 * Green processes only record; the host asserts after stvm_run.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

/* A guard against hangs: on the simulated clock a stale timer or delay would keep a
 * blocked VM going forever. */
TestSuite(delay, .timeout = 30);

#define MS_LIMIT 0x0FFFFFFFll           /* longest delay of the millisecond scheduler */
#define US_LIMIT (1ll << 52)            /* longest delay of the microsecond scheduler */

static bool boxes(const rep *r) { return r->bits == 31 && r->dclock == STVM_DELAY_CLOCK_US; }

/* ---- helpers --------------------------------------------------------------------- */

/* A process waiting n times for a pseudo-random duration in [lo, hi] ms and checking
 * each elapsed time exactly (see the file comment for why the ms scheduler is exact). */
typedef struct sleeper {
    int n;
    uint32_t seed;
    int lo, hi;
    /* results */
    int done, errs, wrong;
    int first_err;
    int64_t wrong_ms;
    uint64_t wrong_elapsed;
    uint64_t total_ms;
} sleeper;

static void sleeper_fn(stvm_vm *vm, void *arg)
{
    sleeper *s = arg;
    for (int i = 0; i < s->n; i++) {
        int64_t ms = s->lo + (int64_t)(lcg(&s->seed) % (uint32_t)(s->hi - s->lo + 1));
        uint64_t t0 = stvm_vm_now_us(vm);
        int rc = stvm_delay_wait_ms(vm, ms);
        uint64_t el = stvm_vm_now_us(vm) - t0;
        if (rc != STVM_OK) {
            if (!s->errs++)
                s->first_err = rc;
        } else if (el != (uint64_t)ms * 1000u) {
            if (!s->wrong++) {
                s->wrong_ms = ms;
                s->wrong_elapsed = el;
            }
        }
        s->total_ms += (uint64_t)ms;
        s->done++;
    }
}

static void check_sleeper(const rep *r, const sleeper *s, int idx)
{
    cr_assert_eq(s->done, s->n, "%s: sleeper %d did %d of %d waits", r->name, idx, s->done, s->n);
    cr_assert_eq(s->errs, 0, "%s: sleeper %d: %d waits failed, first %s", r->name, idx, s->errs,
                 stvm_err_name(s->first_err));
    cr_assert_eq(s->wrong, 0, "%s: sleeper %d: %d waits took the wrong time, first %lld ms took %llu us",
                 r->name, idx, s->wrong, (long long)s->wrong_ms,
                 (unsigned long long)s->wrong_elapsed);
}

/* One wait and what it saw. */
typedef struct one_wait {
    int64_t amount;
    bool in_us;
    int rc;
    uint64_t t0, t1;
    int order_tag;
    trace_log *log;
} one_wait;

static void one_wait_fn(stvm_vm *vm, void *arg)
{
    one_wait *w = arg;
    w->t0 = stvm_vm_now_us(vm);
    w->rc = w->in_us ? stvm_delay_wait_us(vm, w->amount) : stvm_delay_wait_ms(vm, w->amount);
    w->t1 = stvm_vm_now_us(vm);
    if (w->log)
        trace_add(w->log, w->order_tag);
}

/* Start the Delay scheduler with a 0 ms delay in a run of its own: starting it
 * preempts the first requester (the timing process is spawned at priority 80), which
 * would otherwise shift the request order against the spawn order. */
static void warm_up(stvm_vm *vm)
{
    one_wait w = {.amount = 0, .rc = -999};
    spawn(vm, 40, "warm-up", one_wait_fn, &w);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(w.rc, STVM_OK);
}

/* A process that waits on a semaphore nobody signals, recording when it got there. */
typedef struct stuck {
    stvm_semaphore *sem;
    int64_t pre_ms;      /* a delay first (-1: none) */
    int pre_rc;
    uint64_t blocked_at;
    int wait_rc;
    bool woke;
} stuck;

static void stuck_fn(stvm_vm *vm, void *arg)
{
    stuck *s = arg;
    if (s->pre_ms >= 0)
        s->pre_rc = stvm_delay_wait_ms(vm, s->pre_ms);
    s->blocked_at = stvm_vm_now_us(vm);
    s->wait_rc = stvm_semaphore_wait(vm, s->sem);
    s->woke = true;
}

/* ---- exact timing, every representation ---------------------------------------- */

Test(delay, each_delay_fires_once_and_never_before_its_resumption_time)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        sleeper s[5];
        for (int i = 0; i < 5; i++) {
            s[i] = (sleeper){.n = 20, .seed = 1000u + (uint32_t)i * 77u, .lo = 1, .hi = 50};
            spawn(vm, 30 + i, "sleeper", sleeper_fn, &s[i]);
        }
        cr_assert_eq(stvm_run(vm), STVM_OK, "%s", r->name);
        uint64_t longest = 0;
        for (int i = 0; i < 5; i++) {
            check_sleeper(r, &s[i], i);
            if (s[i].total_ms > longest)
                longest = s[i].total_ms;
        }
        stvm_stats st = stats_of(vm);
        cr_assert_eq(st.delays_scheduled, 100u, "%s", r->name);
        cr_assert_eq(st.delays_expired, 100u, "%s", r->name);
        cr_assert_eq(st.delays_unscheduled, 0u, "%s", r->name);
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START + longest * 1000u,
                     "%s: the VM must stop when the last delay ends", r->name);
        vm_done(vm);
    }
}

/* Aligned start: exactly 250000 us in every representation. (The mid-tick case is
 * below, after the helper that gets there.) */
static void aligned_250(void)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        one_wait w = {.amount = 250};
        spawn(vm, 40, "w", one_wait_fn, &w);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert_eq(w.rc, STVM_OK, "%s: %s", r->name, stvm_err_name(w.rc));
        cr_assert_eq(w.t1 - w.t0, 250000u, "%s: took %llu us", r->name,
                     (unsigned long long)(w.t1 - w.t0));
        vm_done(vm);
    }
}

/* Start a delay 400 us into a millisecond tick (a private 242 timer moves time there
 * before the Delay scheduler exists). */
typedef struct midtick {
    stvm_semaphore *sem;
    int64_t ms;
    int rc;
    uint64_t t0, t1;
} midtick;

static void midtick_fn(stvm_vm *vm, void *arg)
{
    midtick *m = arg;
    stvm_oop t = STVM_NIL;
    stvm_int_from_u64(vm, stvm_vm_now_us(vm) + 400, &t);
    stvm_oop args[2] = {stvm_semaphore_oop(m->sem), t};
    if (stvm_primitive_call(vm, 242, STVM_NIL, args, 2, NULL, NULL) != STVM_OK) {
        m->rc = -999;
        return;
    }
    stvm_oop_release(vm, t);
    stvm_semaphore_wait(vm, m->sem);
    m->t0 = stvm_vm_now_us(vm);
    m->rc = stvm_delay_wait_ms(vm, m->ms);
    m->t1 = stvm_vm_now_us(vm);
}

Test(delay, a_250_ms_delay_takes_exactly_250000_us_and_mid_tick_the_ms_scheduler_at_most_1_ms_less)
{
    aligned_250();
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        midtick m = {.sem = sem_make(vm), .ms = 250};
        spawn(vm, 40, "midtick", midtick_fn, &m);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert_eq(m.rc, STVM_OK, "%s: %s", r->name, stvm_err_name(m.rc));
        cr_assert_eq(m.t0, SIM_START + 400);
        uint64_t el = m.t1 - m.t0;
        if (is_ms(r)) {
            cr_assert(el >= 249000u && el <= 250000u, "%s: %llu us", r->name,
                      (unsigned long long)el);
            /* whole ticks: it ends where tick start+250 begins */
            cr_assert_eq(m.t1, SIM_START + 250000u, "%s", r->name);
        } else {
            cr_assert_eq(el, 250000u, "%s: %llu us", r->name, (unsigned long long)el);
        }
        vm_done(vm);
    }
}

Test(delay, us_delays_are_exact_on_the_us_scheduler_and_whole_ticks_on_the_ms_scheduler)
{
    static const int64_t amounts[] = {250, 1, 999, 1001, 123456};
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        if (is_ms(r))
            continue;
        for (int k = 0; k < 5; k++) {
            stvm_vm *vm = rep_vm(r);
            one_wait w = {.amount = amounts[k], .in_us = true};
            spawn(vm, 40, "w", one_wait_fn, &w);
            cr_assert_eq(stvm_run(vm), STVM_OK);
            cr_assert_eq(w.rc, STVM_OK);
            cr_assert_eq(w.t1 - w.t0, (uint64_t)amounts[k], "%s: %lld us took %llu", r->name,
                         (long long)amounts[k], (unsigned long long)(w.t1 - w.t0));
            vm_done(vm);
        }
    }
    /* the ms scheduler rounds them up to whole ticks */
    static const int64_t ms_amounts[] = {250, 1, 1000, 1001, 2500};
    static const uint64_t want[] = {1000, 1000, 1000, 2000, 3000};
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        if (!is_ms(r))
            continue;
        for (int k = 0; k < 5; k++) {
            stvm_vm *vm = rep_vm(r);
            one_wait w = {.amount = ms_amounts[k], .in_us = true};
            spawn(vm, 40, "w", one_wait_fn, &w);
            cr_assert_eq(stvm_run(vm), STVM_OK);
            cr_assert_eq(w.rc, STVM_OK);
            cr_assert_eq(w.t1 - w.t0, want[k], "%s: %lld us took %llu", r->name,
                         (long long)ms_amounts[k], (unsigned long long)(w.t1 - w.t0));
            vm_done(vm);
        }
    }
}

Test(delay, zero_delay_returns_at_once_without_time_passing)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        for (int in_us = 0; in_us < 2; in_us++) {
            stvm_vm *vm = rep_vm(r);
            one_wait w = {.amount = 0, .in_us = in_us};
            spawn(vm, 40, "w", one_wait_fn, &w);
            cr_assert_eq(stvm_run(vm), STVM_OK);
            cr_assert_eq(w.rc, STVM_OK, "%s", r->name);
            cr_assert_eq(w.t0, SIM_START);
            cr_assert_eq(w.t1, SIM_START, "%s: a 0 delay let time pass", r->name);
            cr_assert_eq(stvm_vm_now_us(vm), SIM_START);
            stvm_stats st = stats_of(vm);
            cr_assert_eq(st.delays_scheduled, 1u);
            cr_assert_eq(st.delays_expired, 1u);
            cr_assert_eq(st.timing_loop_passes, 1u, "%s: it expires in the pass that takes it",
                         r->name);
            cr_assert_eq(st.timer_fires, 0u, "no timer was needed");
            vm_done(vm);
        }
    }
}

/* ---- order ------------------------------------------------------------------------- */

static void different_request_times_same_deadline(void);

Test(delay, equal_resumption_times_fire_in_scheduling_order)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        warm_up(vm);
        trace_log log = {0};
        one_wait w[12];
        for (int i = 0; i < 12; i++) {
            w[i] = (one_wait){.amount = 20, .order_tag = i, .log = &log};
            spawn(vm, 40, "w", one_wait_fn, &w[i]);
        }
        cr_assert_eq(stvm_run(vm), STVM_OK);
        int want[12];
        for (int i = 0; i < 12; i++) {
            want[i] = i;
            cr_assert_eq(w[i].t1, SIM_START + 20000u, "%s", r->name);
        }
        trace_expect(&log, want, 12);
        vm_done(vm);
    }
    different_request_times_same_deadline();
}

/* First wait `first` ms, then `second` ms: different request times, same deadline. */
typedef struct two_step {
    int64_t first, second;
    int tag;
    trace_log *log;
    uint64_t t1;
    int rc;
} two_step;

static void two_step_fn(stvm_vm *vm, void *arg)
{
    two_step *t = arg;
    t->rc = stvm_delay_wait_ms(vm, t->first);
    t->rc |= stvm_delay_wait_ms(vm, t->second);
    t->t1 = stvm_vm_now_us(vm);
    trace_add(t->log, t->tag);
}

static void different_request_times_same_deadline(void)
{
    /* Process i waits 10-2i ms, then 2i+20: all end at 30 ms; they request the second
     * delay in the order 4, 3, 2, 1, 0 (mixed in with longer and shorter ones). */
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        trace_log log = {0};
        two_step t[5];
        for (int i = 0; i < 5; i++) {
            t[i] = (two_step){.first = 10 - 2 * i, .second = 20 + 2 * i, .tag = i, .log = &log};
            spawn(vm, 40, "two-step", two_step_fn, &t[i]);
        }
        one_wait early = {.amount = 29}, late = {.amount = 31};
        spawn(vm, 40, "early", one_wait_fn, &early);
        spawn(vm, 40, "late", one_wait_fn, &late);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        for (int i = 0; i < 5; i++) {
            cr_assert_eq(t[i].rc, STVM_OK);
            cr_assert_eq(t[i].t1, SIM_START + 30000u, "%s", r->name);
        }
        int want[5] = {4, 3, 2, 1, 0};
        trace_expect(&log, want, 5);
        cr_assert_eq(early.t1, SIM_START + 29000u);
        cr_assert_eq(late.t1, SIM_START + 31000u);
        vm_done(vm);
    }
}

typedef struct prio_sleeper {
    int64_t pre, ms;
    int tag;
    trace_log *log;
    uint64_t t1;
} prio_sleeper;

static void prio_sleeper_fn(stvm_vm *vm, void *arg)
{
    prio_sleeper *p = arg;
    if (p->pre)
        stvm_delay_wait_ms(vm, p->pre);
    stvm_delay_wait_ms(vm, p->ms);
    p->t1 = stvm_vm_now_us(vm);
    trace_add(p->log, p->tag);
}

Test(delay, a_higher_priority_sleeper_waking_at_the_same_time_runs_first)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        trace_log log = {0};
        /* The low ones schedule their 20 ms deadline first (at 0 ms), the high one last
         * (at 5 ms): priority, not scheduling order, decides who runs first. */
        prio_sleeper lo = {.ms = 20, .tag = 30, .log = &log};
        prio_sleeper mid = {.ms = 20, .tag = 35, .log = &log};
        prio_sleeper hi = {.pre = 5, .ms = 15, .tag = 45, .log = &log};
        spawn(vm, 30, "lo", prio_sleeper_fn, &lo);
        spawn(vm, 35, "mid", prio_sleeper_fn, &mid);
        spawn(vm, 45, "hi", prio_sleeper_fn, &hi);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        int want[3] = {45, 35, 30};
        trace_expect(&log, want, 3);
        cr_assert_eq(lo.t1, SIM_START + 20000u);
        cr_assert_eq(mid.t1, SIM_START + 20000u);
        cr_assert_eq(hi.t1, SIM_START + 20000u);
        vm_done(vm);
    }
}

Test(delay, processes_at_timing_priority_and_below_idle_priority_get_their_delays)
{
    static const int prios[] = {STVM_PRIORITY_TIMING, 5, 1};
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        for (int k = 0; k < 3; k++) {
            stvm_vm *vm = rep_vm(r);
            sleeper s = {.n = 10, .seed = 7, .lo = 0, .hi = 30};
            spawn(vm, prios[k], "sleeper", sleeper_fn, &s);
            cr_assert_eq(stvm_run(vm), STVM_OK, "%s priority %d", r->name, prios[k]);
            check_sleeper(r, &s, prios[k]);
            cr_assert_eq(stvm_vm_now_us(vm), SIM_START + s.total_ms * 1000u);
            vm_done(vm);
        }
    }
}

/* ---- counters ---------------------------------------------------------------------- */

typedef struct probe {
    int n;
    int64_t ms;
    stvm_stats s0, s1, s2;
    int errs;
    uint64_t t1, t2;
} probe;

static void probe_fn(stvm_vm *vm, void *arg)
{
    probe *p = arg;
    stvm_vm_get_stats(vm, &p->s0);
    p->errs += stvm_delay_wait_ms(vm, p->ms) != STVM_OK;
    stvm_vm_get_stats(vm, &p->s1);
    p->t1 = stvm_vm_now_us(vm);
    for (int i = 0; i < p->n; i++)
        p->errs += stvm_delay_wait_ms(vm, p->ms) != STVM_OK;
    p->t2 = stvm_vm_now_us(vm);
    stvm_vm_get_stats(vm, &p->s2);
}

Test(delay, boxed_timestamps_only_on_the_31_bit_us_scheduler_and_none_leak)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        probe p = {.n = 20, .ms = 10};
        spawn(vm, 40, "probe", probe_fn, &p);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert_eq(p.errs, 0);
        cr_assert_eq(p.t2 - p.t1, 20u * 10000u, "%s", r->name);
        uint64_t boxed = p.s2.boxed_allocated - p.s0.boxed_allocated;
        uint64_t lops = p.s2.large_int_ops - p.s0.large_int_ops;
        uint64_t delays = (uint64_t)p.n + 1;
        if (boxes(r)) {
            cr_assert(boxed >= 3 * delays && boxed <= 7 * delays,
                      "%s: %llu boxes for %llu delays", r->name, (unsigned long long)boxed,
                      (unsigned long long)delays);
            cr_assert_gt(lops, 0u, "%s", r->name);
        } else {
            cr_assert_eq(boxed, 0u, "%s: %llu boxes", r->name, (unsigned long long)boxed);
            cr_assert_eq(lops, 0u, "%s: %llu large integer operations", r->name,
                         (unsigned long long)lops);
        }
        /* Once the scheduler runs, delays leave no object behind. */
        cr_assert_eq(p.s2.objects_live, p.s1.objects_live, "%s: %lld objects leaked", r->name,
                     (long long)(p.s2.objects_live - p.s1.objects_live));
        cr_assert_eq(p.s2.bytes_live, p.s1.bytes_live, "%s", r->name);
        /* Each isolated delay: one pass takes the request, one expires it (on the timer). */
        cr_assert_eq(p.s2.timing_loop_passes - p.s1.timing_loop_passes, 2u * (uint64_t)p.n,
                     "%s", r->name);
        cr_assert_eq(p.s2.timer_fires - p.s1.timer_fires, (uint64_t)p.n, "%s", r->name);
        cr_assert_geq(p.s2.clock_reads - p.s1.clock_reads, 2u * (uint64_t)p.n,
                      "%s: every pass reads the clock", r->name);
        cr_assert_eq(p.s2.delays_scheduled - p.s0.delays_scheduled, delays);
        cr_assert_eq(p.s2.delays_expired - p.s0.delays_expired, delays);
        vm_done(vm);
    }
}

Test(delay, a_delay_longer_than_a_second_wakes_the_timing_process_every_second)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        one_wait w = {.amount = 3500};
        spawn(vm, 40, "w", one_wait_fn, &w);
        stvm_stats s0 = stats_of(vm);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        stvm_stats s1 = stats_of(vm);
        cr_assert_eq(w.rc, STVM_OK);
        cr_assert_eq(w.t1 - w.t0, 3500000u, "%s", r->name);
        /* request, 1 s, 2 s, 3 s, expiry at 3.5 s */
        cr_assert_eq(s1.timing_loop_passes - s0.timing_loop_passes, 5u, "%s", r->name);
        cr_assert_eq(s1.timer_fires - s0.timer_fires, 4u, "%s", r->name);
        cr_assert_eq(s1.delays_expired, 1u);
        vm_done(vm);
    }
}

/* On a 31-bit VM, 1000 * ms is itself a box beyond 1073741 ms, and so is a duration in
 * us beyond 2^30: such delays are exact and give every box back. */
Test(delay, durations_beyond_the_smallint_range_are_exact_and_release_their_boxes)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        one_wait warm = {.amount = 0};
        spawn(vm, 40, "warm-up", one_wait_fn, &warm);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        one_wait a = {.amount = 1200000, .rc = -999};                 /* 20 min in ms */
        one_wait b = {.amount = (1ll << 31) + 5, .in_us = true, .rc = -999}; /* ~36 min */
        spawn(vm, 40, "ms", one_wait_fn, &a);
        spawn(vm, 40, "us", one_wait_fn, &b);
        stvm_stats s0 = stats_of(vm);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        stvm_stats s1 = stats_of(vm);
        cr_assert_eq(a.rc, STVM_OK);
        cr_assert_eq(b.rc, STVM_OK);
        cr_assert_eq(a.t1 - a.t0, 1200000000u, "%s", r->name);
        /* the ms scheduler rounds the us one up to whole ticks */
        cr_assert_eq(b.t1 - b.t0, is_ms(r) ? (((1ull << 31) + 5 + 999) / 1000) * 1000
                                           : (1ull << 31) + 5, "%s", r->name);
        cr_assert_eq(s1.objects_live, s0.objects_live, "%s: %lld objects left", r->name,
                     (long long)(s1.objects_live - s0.objects_live));
        cr_assert_eq(s1.delays_expired - s0.delays_expired, 2u);
        vm_done(vm);
    }
}

Test(delay, objects_live_after_a_run_of_many_delays_equals_its_value_before)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        one_wait warm = {.amount = 1};
        spawn(vm, 40, "warm-up", one_wait_fn, &warm);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        sleeper s[8];
        for (int i = 0; i < 8; i++) {
            s[i] = (sleeper){.n = 25, .seed = 99u * (uint32_t)i + 5u, .lo = 0, .hi = 2500};
            spawn(vm, 40, "sleeper", sleeper_fn, &s[i]);
        }
        stvm_stats before = stats_of(vm);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        stvm_stats after = stats_of(vm);
        for (int i = 0; i < 8; i++)
            check_sleeper(r, &s[i], i);
        cr_assert_eq(after.objects_live, before.objects_live, "%s: %lld objects leaked", r->name,
                     (long long)(after.objects_live - before.objects_live));
        cr_assert_eq(after.bytes_live, before.bytes_live, "%s", r->name);
        if (boxes(r))
            cr_assert_gt(after.boxed_allocated, before.boxed_allocated);
        else
            cr_assert_eq(after.boxed_allocated, before.boxed_allocated, "%s", r->name);
        vm_done(vm);
    }
}

/* ---- bad input --------------------------------------------------------------------- */

typedef struct bad_calls {
    bool ms_sched;
    int rc[12];
    uint64_t t0, t1;
    stvm_stats s0, s1;
} bad_calls;

static void bad_calls_fn(stvm_vm *vm, void *arg)
{
    bad_calls *b = arg;
    stvm_vm_get_stats(vm, &b->s0);
    b->t0 = stvm_vm_now_us(vm);
    int i = 0;
    b->rc[i++] = stvm_delay_wait_ms(vm, -1);
    b->rc[i++] = stvm_delay_wait_us(vm, -1);
    b->rc[i++] = stvm_delay_wait_ms(vm, INT64_MIN);
    b->rc[i++] = stvm_delay_wait_us(vm, INT64_MIN);
    b->rc[i++] = stvm_delay_wait_ms(vm, INT64_MAX);
    b->rc[i++] = stvm_delay_wait_us(vm, US_LIMIT + 1);
    b->rc[i++] = stvm_delay_wait_ms(vm, US_LIMIT / 1000 + 1);
    if (b->ms_sched) {
        b->rc[i++] = stvm_delay_wait_ms(vm, MS_LIMIT + 1);
        b->rc[i++] = stvm_delay_wait_us(vm, MS_LIMIT * 1000 + 1);
    }
    b->t1 = stvm_vm_now_us(vm);
    stvm_vm_get_stats(vm, &b->s1);
}

Test(delay, negative_durations_are_einval_and_too_long_ones_erange_and_nothing_is_scheduled)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        bad_calls b = {.ms_sched = is_ms(r)};
        spawn(vm, 40, "bad", bad_calls_fn, &b);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        static const int want[9] = {STVM_EINVAL, STVM_EINVAL, STVM_EINVAL, STVM_EINVAL,
                                    STVM_ERANGE, STVM_ERANGE, STVM_ERANGE, STVM_ERANGE,
                                    STVM_ERANGE};
        int n = is_ms(r) ? 9 : 7;
        for (int i = 0; i < n; i++)
            cr_assert_eq(b.rc[i], want[i], "%s: call %d gave %s, expected %s", r->name, i,
                         stvm_err_name(b.rc[i]), stvm_err_name(want[i]));
        cr_assert_eq(b.t1, b.t0, "%s", r->name);
        cr_assert_eq(b.s1.delays_scheduled, b.s0.delays_scheduled, "%s", r->name);
        cr_assert_eq(b.s1.timing_loop_passes, b.s0.timing_loop_passes, "%s", r->name);
        cr_assert_eq(b.s1.processes_live, b.s0.processes_live,
                     "%s: a rejected delay must not start the scheduler", r->name);
        vm_done(vm);
    }
}

/* stvm_delay_wait_us(INT64_MAX) must answer ERANGE without signed overflow on the way
 * (the millisecond conversion (duration + 999) / 1000); UBSan, which the asan variant
 * is meant to enable, aborts on it. */
typedef struct huge_us {
    int rc;
} huge_us;

static void huge_us_fn(stvm_vm *vm, void *arg)
{
    ((huge_us *)arg)->rc = stvm_delay_wait_us(vm, INT64_MAX);
}

Test(delay, the_largest_us_duration_is_erange)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        huge_us h = {.rc = -999};
        spawn(vm, 40, "huge", huge_us_fn, &h);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert_eq(h.rc, STVM_ERANGE, "%s: %s", r->name, stvm_err_name(h.rc));
        cr_assert_eq(stats_of(vm).delays_scheduled, 0u);
        vm_done(vm);
    }
}

/* The longest allowed delay is accepted (then terminated by a watcher). */
typedef struct long_waiter {
    int64_t amount;
    bool in_us;
    int rc;
} long_waiter;

static void long_waiter_fn(stvm_vm *vm, void *arg)
{
    long_waiter *l = arg;
    l->rc = l->in_us ? stvm_delay_wait_us(vm, l->amount) : stvm_delay_wait_ms(vm, l->amount);
}

typedef struct killer {
    stvm_process *victim;
    int64_t after_ms;
    stvm_process_info info;
    int info_rc, kill_rc;
    stvm_stats before, after;
    uint64_t at;
    stvm_semaphore *then_block_on;
} killer;

static void killer_fn(stvm_vm *vm, void *arg)
{
    killer *k = arg;
    stvm_delay_wait_ms(vm, k->after_ms);
    k->info_rc = stvm_process_get_info(vm, k->victim, &k->info);
    stvm_vm_get_stats(vm, &k->before);
    k->kill_rc = stvm_process_terminate(vm, k->victim);
    stvm_vm_get_stats(vm, &k->after);
    k->at = stvm_vm_now_us(vm);
    if (k->then_block_on)
        stvm_semaphore_wait(vm, k->then_block_on);
}

Test(delay, the_longest_allowed_durations_are_accepted)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        /* ms scheduler: 0x0FFFFFFF ms either way; us scheduler: 2^52 us, 2^52/1000 ms */
        const long_waiter cases[2] = {
            {.amount = is_ms(r) ? MS_LIMIT : US_LIMIT, .in_us = !is_ms(r)},
            {.amount = is_ms(r) ? MS_LIMIT * 1000 : US_LIMIT / 1000, .in_us = is_ms(r)},
        };
        for (int c = 0; c < 2; c++) {
            stvm_vm *vm = rep_vm(r);
            long_waiter l = cases[c];
            l.rc = -999;
            killer k = {.after_ms = 5};
            k.victim = spawn(vm, 30, "long", long_waiter_fn, &l);
            spawn(vm, 40, "killer", killer_fn, &k);
            cr_assert_eq(stvm_run(vm), STVM_OK, "%s case %d", r->name, c);
            cr_assert_eq(l.rc, -999, "%s case %d: the wait returned %s", r->name, c,
                         stvm_err_name(l.rc));
            cr_assert_eq(k.info_rc, STVM_OK);
            cr_assert_eq(k.info.state, STVM_PROCESS_WAITING, "%s case %d", r->name, c);
            cr_assert_str_eq(k.info.waiting_on, "delay");
            cr_assert_eq(k.kill_rc, STVM_OK);
            cr_assert_eq(k.before.delays_scheduled, 2u, "%s case %d", r->name, c);
            cr_assert_eq(k.after.delays_unscheduled, 1u);
            cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 5000u);
            vm_done(vm);
        }
    }
}

Test(delay, delays_from_the_host_are_enotproc)
{
    for (int ri = 0; ri < NREPS; ri++) {
        stvm_vm *vm = rep_vm(&REPS[ri]);
        stvm_stats s0 = stats_of(vm);
        cr_assert_eq(stvm_delay_wait_ms(vm, 10), STVM_ENOTPROC);
        cr_assert_eq(stvm_delay_wait_us(vm, 10), STVM_ENOTPROC);
        cr_assert_eq(stvm_delay_wait_ms(vm, 0), STVM_ENOTPROC);
        stvm_stats s1 = stats_of(vm);
        cr_assert_eq(s1.delays_scheduled, s0.delays_scheduled);
        cr_assert_eq(s1.processes_live, s0.processes_live, "no timing process was started");
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START);
        cr_assert_eq(stvm_run(vm), STVM_OK, "nothing left to do");
        vm_done(vm);
    }
    cr_assert_eq(stvm_delay_wait_ms(NULL, 10), STVM_EINVAL);
    cr_assert_eq(stvm_delay_wait_us(NULL, 10), STVM_EINVAL);
}

/* ---- the periodic re-arm is not work -------------------------------------------------- */

Test(delay, periodic_rearm_is_not_pending_work_on_the_sim_clock)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        stuck s = {.sem = sem_make(vm), .pre_ms = 10};
        spawn(vm, 40, "stuck", stuck_fn, &s);
        cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK, "%s", r->name);
        cr_assert_eq(s.pre_rc, STVM_OK);
        cr_assert_eq(s.blocked_at, SIM_START + 10000u);
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 10000u,
                     "%s: time moved on to the timing process's 1 s re-arm", r->name);
        char buf[256];
        cr_assert_gt(stvm_vm_blocked_report(vm, buf, sizeof buf), 0);
        cr_assert(strstr(buf, "'stuck'") && strstr(buf, "semaphore"), "report: %s", buf);
        /* The VM can be given more work and run again. */
        cr_assert_eq(stvm_semaphore_signal(vm, s.sem), STVM_OK);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert(s.woke);
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 10000u);
        vm_done(vm);
    }
}

/* Real clock (one of the few): a 20 ms delay takes 20 ms .. 2 s, and afterwards a lone
 * waiter makes stvm_run return EDEADLOCK at once, not after the 1 s re-arms. */
Test(delay, real_clock_20_ms_delay_then_lone_waiter_deadlocks_promptly, .timeout = 10)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    stvm_vm *vm = vm_make(&cfg);
    stuck s = {.sem = sem_make(vm), .pre_ms = 20};
    spawn(vm, 40, "stuck", stuck_fn, &s);
    uint64_t t0 = stvm_vm_now_us(vm);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    uint64_t t1 = stvm_vm_now_us(vm);
    cr_assert_eq(s.pre_rc, STVM_OK);
    cr_assert_geq(s.blocked_at - t0, 20000u, "the delay ended early");
    cr_assert_lt(s.blocked_at - t0, 2000000u);
    cr_assert_lt(t1 - s.blocked_at, 1000000u, "stvm_run waited for the 1 s re-arm");
    cr_assert_eq(stats_of(vm).delays_expired, 1u);
    vm_done(vm);
}

/* Real clock: a busy process that only calls stvm_checkpoint is preempted when a
 * higher priority process's delay comes due; it does not have to block first. */
typedef struct busy {
    bool woke;
    uint64_t start, woke_at, spins_after;
    long checkpoints_answering_1;
} busy;

static void busy_sleeper(stvm_vm *vm, void *arg)
{
    busy *b = arg;
    stvm_delay_wait_ms(vm, 20);
    b->woke_at = stvm_vm_now_us(vm);
    b->woke = true;
}

static void busy_spinner(stvm_vm *vm, void *arg)
{
    busy *b = arg;
    /* Spin for at most 2 s of wall time, so a broken checkpoint fails, not hangs. */
    while (!b->woke && stvm_vm_now_us(vm) - b->start < 2000000u)
        if (stvm_checkpoint(vm) == 1)
            b->checkpoints_answering_1++;
    b->spins_after = stvm_vm_now_us(vm);
}

Test(delay, a_due_delay_preempts_a_busy_process_at_its_next_checkpoint, .timeout = 10)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    stvm_vm *vm = vm_make(&cfg);
    busy b = {.start = stvm_vm_now_us(vm)};
    spawn(vm, 50, "sleeper", busy_sleeper, &b);   /* runs first, then sleeps 20 ms */
    spawn(vm, 40, "spinner", busy_spinner, &b);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert(b.woke, "the sleeper never woke while the spinner ran");
    cr_assert_geq(b.woke_at - b.start, 20000u, "the delay ended early");
    cr_assert_lt(b.woke_at - b.start, 1000000u, "woke %llu us after the start",
                 (unsigned long long)(b.woke_at - b.start));
    cr_assert_geq(b.checkpoints_answering_1, 1, "no checkpoint let another process run");
    cr_assert_lt(b.spins_after - b.start, 2000000u, "the spinner ran out its 2 s");
    vm_done(vm);
}

/* ---- termination and suspension ----------------------------------------------------- */

Test(delay, terminating_a_delay_waiter_unschedules_its_delay_and_leaves_no_pending_work)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        for (int block = 0; block < 2; block++) {
            stvm_vm *vm = rep_vm(r);
            one_wait x = {.amount = 1000, .rc = -999};
            killer k = {.after_ms = 10, .then_block_on = block ? sem_make(vm) : NULL};
            k.victim = spawn(vm, 30, "x", one_wait_fn, &x);
            spawn(vm, 40, "killer", killer_fn, &k);
            cr_assert_eq(stvm_run(vm), block ? STVM_EDEADLOCK : STVM_OK, "%s", r->name);
            cr_assert_eq(k.kill_rc, STVM_OK);
            cr_assert_eq(x.rc, -999, "the terminated process never returns");
            cr_assert_eq(k.after.delays_unscheduled - k.before.delays_unscheduled, 1u, "%s",
                         r->name);
            cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 10000u,
                         "%s: the terminated delay kept the VM alive", r->name);
            stvm_stats st = stats_of(vm);
            cr_assert_eq(st.delays_scheduled, 2u);
            cr_assert_eq(st.delays_expired, 1u);
            cr_assert_eq(st.delays_unscheduled, 1u);
            vm_done(vm);
        }
    }
}

Test(delay, terminating_waiters_in_the_heap_or_active_leaves_the_others_on_time)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        for (int victim = 0; victim < 4; victim++) {
            stvm_vm *vm = rep_vm(r);
            static const int64_t ms[4] = {100, 200, 300, 400};
            one_wait w[4];
            stvm_process *p[4];
            for (int i = 0; i < 4; i++) {
                w[i] = (one_wait){.amount = ms[i], .rc = -999};
                p[i] = spawn(vm, 30, "w", one_wait_fn, &w[i]);
            }
            killer k = {.after_ms = 50, .victim = p[victim]};
            spawn(vm, 40, "killer", killer_fn, &k);
            cr_assert_eq(stvm_run(vm), STVM_OK);
            cr_assert_eq(k.kill_rc, STVM_OK);
            for (int i = 0; i < 4; i++) {
                if (i == victim) {
                    cr_assert_eq(w[i].rc, -999);
                    continue;
                }
                cr_assert_eq(w[i].rc, STVM_OK);
                cr_assert_eq(w[i].t1, SIM_START + (uint64_t)ms[i] * 1000u, "%s victim %d: %d",
                             r->name, victim, i);
            }
            cr_assert_eq(stvm_vm_now_us(vm), SIM_START + (victim == 3 ? 300000u : 400000u));
            stvm_stats st = stats_of(vm);
            cr_assert_eq(st.delays_expired, 4u);   /* three waiters and the killer */
            cr_assert_eq(st.delays_unscheduled, 1u);
            vm_done(vm);
        }
    }
}

/* Processes at timing priority: the timing process does not preempt them, so a request
 * can still be queued (not yet taken) when another one terminates the requester. */
typedef struct p80_killer {
    stvm_process *victims[2];
    int kill_rc[2];
    stvm_stats after;
    one_wait own;
} p80_killer;

static void p80_killer_fn(stvm_vm *vm, void *arg)
{
    p80_killer *k = arg;
    for (int i = 0; i < 2; i++)
        k->kill_rc[i] = stvm_process_terminate(vm, k->victims[i]);
    stvm_vm_get_stats(vm, &k->after);
    one_wait_fn(vm, &k->own);   /* queue a request behind the survivors */
}

Test(delay, terminating_a_requester_before_the_timing_process_took_its_request)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        one_wait x[3];
        stvm_process *p[3];
        for (int i = 0; i < 3; i++) {
            x[i] = (one_wait){.amount = 10 * (i + 1), .rc = -999};
            p[i] = spawn(vm, STVM_PRIORITY_TIMING, "x", one_wait_fn, &x[i]);
        }
        /* the middle and the last (tail) request go */
        p80_killer k = {.victims = {p[1], p[2]}, .own = {.amount = 35, .rc = -999}};
        spawn(vm, STVM_PRIORITY_TIMING, "killer", p80_killer_fn, &k);
        cr_assert_eq(stvm_run(vm), STVM_OK, "%s", r->name);
        cr_assert_eq(k.kill_rc[0], STVM_OK);
        cr_assert_eq(k.kill_rc[1], STVM_OK);
        cr_assert_eq(k.after.delays_unscheduled, 2u, "%s", r->name);
        cr_assert_eq(x[0].rc, STVM_OK);
        cr_assert_eq(x[0].t1, SIM_START + 10000u, "%s", r->name);
        cr_assert_eq(x[1].rc, -999);
        cr_assert_eq(x[2].rc, -999);
        cr_assert_eq(k.own.rc, STVM_OK);
        cr_assert_eq(k.own.t1, SIM_START + 35000u, "%s", r->name);
        stvm_stats st = stats_of(vm);
        cr_assert_eq(st.delays_expired, 2u);
        cr_assert_eq(st.delays_unscheduled, 2u);
        cr_assert_eq(st.delays_scheduled, 2u, "requests taken by the timing process");
        vm_done(vm);
    }
}

/* Suspend a delay waiter at 10 ms, resume it at `resume_ms`. */
typedef struct suspender {
    stvm_process *victim;
    int64_t resume_ms;
    int susp_rc, res_rc;
    stvm_process_info mid;
    stvm_stats at_resume, after;
    stvm_semaphore *then_block_on;
} suspender;

static void suspender_fn(stvm_vm *vm, void *arg)
{
    suspender *s = arg;
    stvm_delay_wait_ms(vm, 10);
    s->susp_rc = stvm_process_suspend(vm, s->victim);
    stvm_delay_wait_ms(vm, s->resume_ms - 10);
    stvm_process_get_info(vm, s->victim, &s->mid);
    stvm_vm_get_stats(vm, &s->at_resume);
    s->res_rc = stvm_process_resume(vm, s->victim);
    stvm_yield(vm);
    stvm_vm_get_stats(vm, &s->after);
    if (s->then_block_on)
        stvm_semaphore_wait(vm, s->then_block_on);
}

Test(delay, a_waiter_suspended_and_resumed_before_its_deadline_gets_estate_and_no_stale_delay)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        one_wait x = {.amount = 100, .rc = -999};
        suspender s = {.resume_ms = 20, .then_block_on = sem_make(vm)};
        s.victim = spawn(vm, 40, "x", one_wait_fn, &x);
        spawn(vm, 40, "suspender", suspender_fn, &s);
        /* The suspender then blocks forever: the unscheduled 100 ms delay must not
         * count as work, so the run ends at 20 ms. */
        cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK, "%s", r->name);
        cr_assert_eq(s.susp_rc, STVM_OK);
        cr_assert_eq(s.res_rc, STVM_OK);
        cr_assert_eq(s.mid.state, STVM_PROCESS_SUSPENDED);
        cr_assert_eq(x.rc, STVM_ESTATE, "%s: %s", r->name, stvm_err_name(x.rc));
        cr_assert_eq(x.t1, SIM_START + 20000u, "%s", r->name);
        cr_assert_eq(s.after.delays_unscheduled - s.at_resume.delays_unscheduled, 1u, "%s",
                     r->name);
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 20000u, "%s: the stale deadline was waited for",
                     r->name);
        stvm_stats st = stats_of(vm);
        cr_assert_eq(st.delays_scheduled, 3u);
        cr_assert_eq(st.delays_expired, 2u);
        cr_assert_eq(st.delays_unscheduled, 1u);
        vm_done(vm);
    }
}

Test(delay, a_waiter_suspended_past_its_deadline_stays_suspended_and_gets_estate_on_resume)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        one_wait x = {.amount = 100, .rc = -999};
        suspender s = {.resume_ms = 210};
        s.victim = spawn(vm, 40, "x", one_wait_fn, &x);
        spawn(vm, 40, "suspender", suspender_fn, &s);
        cr_assert_eq(stvm_run(vm), STVM_OK, "%s", r->name);
        cr_assert_eq(s.mid.state, STVM_PROCESS_SUSPENDED, "%s: the expiry resumed a suspended "
                     "process", r->name);
        cr_assert_eq(x.rc, STVM_ESTATE, "%s: %s", r->name, stvm_err_name(x.rc));
        cr_assert_eq(x.t1, SIM_START + 210000u);
        stvm_stats st = stats_of(vm);
        cr_assert_eq(st.delays_scheduled, 3u);
        cr_assert_eq(st.delays_expired + st.delays_unscheduled, 3u, "%s: a delay is unaccounted",
                     r->name);
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 210000u);
        vm_done(vm);
    }
}

Test(delay, terminating_a_process_whose_delay_expired_before_it_ran)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        one_wait x = {.amount = 10, .rc = -999};
        killer k = {.after_ms = 10};   /* both wake at 10 ms; the killer runs first */
        k.victim = spawn(vm, 30, "x", one_wait_fn, &x);
        spawn(vm, 40, "killer", killer_fn, &k);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert_eq(k.info.state, STVM_PROCESS_READY, "%s", r->name);
        cr_assert_eq(k.kill_rc, STVM_OK);
        cr_assert_eq(x.rc, -999);
        stvm_stats st = stats_of(vm);
        cr_assert_eq(st.delays_expired, 2u);
        cr_assert_eq(st.delays_unscheduled, 0u, "an expired delay is not unscheduled");
        vm_done(vm);
    }
}

/* ---- scale and determinism ----------------------------------------------------------- */

Test(delay, two_thousand_processes_with_random_delays_all_finish_with_exact_counts)
{
    enum { NP = 2000, NW = 5 };
    static sleeper s[NP];
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        uint32_t seed = 12345;
        for (int i = 0; i < NP; i++) {
            s[i] = (sleeper){.n = NW, .seed = lcg(&seed), .lo = 0, .hi = 199};
            spawn(vm, 11 + (int)(lcg(&seed) % 60), "p", sleeper_fn, &s[i]);
        }
        cr_assert_eq(stvm_run(vm), STVM_OK, "%s", r->name);
        uint64_t longest = 0;
        for (int i = 0; i < NP; i++) {
            check_sleeper(r, &s[i], i);
            if (s[i].total_ms > longest)
                longest = s[i].total_ms;
        }
        stvm_stats st = stats_of(vm);
        cr_assert_eq(st.delays_scheduled, (uint64_t)NP * NW, "%s", r->name);
        cr_assert_eq(st.delays_expired, (uint64_t)NP * NW, "%s", r->name);
        cr_assert_eq(st.delays_unscheduled, 0u);
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START + longest * 1000u, "%s", r->name);
        cr_assert_eq(st.processes_live, 2u, "idle and timing remain");
        vm_done(vm);
    }
}

/* A mixed scenario: sleepers, semaphore ping-pong with delays, a terminated waiter. */
typedef struct pingpong {
    stvm_semaphore *mine, *theirs;
    int rounds;
    int64_t ms;
} pingpong;

static void pingpong_fn(stvm_vm *vm, void *arg)
{
    pingpong *p = arg;
    for (int i = 0; i < p->rounds; i++) {
        stvm_semaphore_wait(vm, p->mine);
        stvm_delay_wait_ms(vm, p->ms + i % 3);
        stvm_semaphore_signal(vm, p->theirs);
    }
}

static void scenario(const rep *r, uint64_t *end, stvm_stats *st)
{
    stvm_vm *vm = rep_vm(r);
    sleeper s[30];
    uint32_t seed = 4242;
    for (int i = 0; i < 30; i++) {
        s[i] = (sleeper){.n = 10, .seed = lcg(&seed), .lo = 0, .hi = 120};
        spawn(vm, 20 + i % 40, "s", sleeper_fn, &s[i]);
    }
    stvm_semaphore *a = sem_make(vm), *b = sem_make(vm);
    pingpong pa = {.mine = a, .theirs = b, .rounds = 40, .ms = 3};
    pingpong pb = {.mine = b, .theirs = a, .rounds = 40, .ms = 4};
    spawn(vm, 45, "ping", pingpong_fn, &pa);
    spawn(vm, 44, "pong", pingpong_fn, &pb);
    cr_assert_eq(stvm_semaphore_signal(vm, a), STVM_OK);
    one_wait x = {.amount = 5000};
    killer k = {.after_ms = 77};
    k.victim = spawn(vm, 33, "x", one_wait_fn, &x);
    spawn(vm, 50, "k", killer_fn, &k);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    *end = stvm_vm_now_us(vm);
    *st = stats_of(vm);
    vm_done(vm);
}

Test(delay, the_same_sim_scenario_twice_gives_identical_time_and_stats)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        uint64_t e1, e2;
        stvm_stats s1, s2;
        scenario(r, &e1, &s1);
        scenario(r, &e2, &s2);
        cr_assert_eq(e1, e2, "%s: ended at %llu and %llu", r->name, (unsigned long long)e1,
                     (unsigned long long)e2);
        cr_assert_gt(e1, SIM_START);
        cr_assert_eq(s1.context_switches, s2.context_switches, "%s", r->name);
        cr_assert_eq(s1.timing_loop_passes, s2.timing_loop_passes, "%s", r->name);
        cr_assert_eq(s1.delays_scheduled, s2.delays_scheduled, "%s", r->name);
        cr_assert_eq(s1.boxed_allocated, s2.boxed_allocated, "%s", r->name);
        cr_assert_eq(s1.delays_unscheduled, 1u);
        cr_assert(memcmp(&s1, &s2, sizeof s1) == 0, "%s: the stats differ", r->name);
    }
}
