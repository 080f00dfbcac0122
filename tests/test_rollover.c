/*
 * Suite "rollover": delays across the boundaries where clock values change shape.
 *
 *  - the millisecond clock wraps from 0x1FFFFFFF to 0 (ms scheduler, primitives 135/136):
 *    started 5 minutes before the wrap, delays that span it must end at the right
 *    virtual time, exactly once, never more than 1 ms early;
 *  - microsecond timestamps cross SmallInteger maxVal on a 31-bit VM (2^30: they turn
 *    into boxes mid-run), the 4-byte/5-byte boundary of boxes (2^32), and SmallInteger
 *    maxVal on a 61-bit VM (2^60): delays must end exactly on time throughout.
 *
 * All on the simulated clock, so each elapsed time is asserted exactly. Green
 * processes only record; the host asserts after stvm_run.
 */
#include <stdint.h>
#include <string.h>

#include "helpers.h"

/* A guard against hangs: on the simulated clock a stale timer or delay would keep a
 * blocked VM going forever. */
TestSuite(rollover, .timeout = 30);

#define FIVE_MIN_MS 300000u
#define FIVE_MIN_US 300000000ull
#define TEN_MIN_US 600000000ull

/* A process that keeps waiting for pseudo-random durations until `until_us`, checking
 * every wait: on the us scheduler (durations in us) the clock moves by exactly the
 * duration; on the ms scheduler (durations in ms, every start on a tick boundary) by
 * exactly the duration in ticks, and the millisecond clock by the duration modulo
 * 2^29. It also counts the waits that straddle `boundary_us`. */
typedef struct roller {
    uint64_t until_us, boundary_us;
    uint32_t seed;
    int64_t lo, hi;
    bool ms;
    /* results */
    int waits, errs, wrong, wrong_ms_clock, straddled;
    int64_t bad_amount;
    uint64_t bad_elapsed;
    int first_err;
} roller;

static void roller_fn(stvm_vm *vm, void *arg)
{
    roller *r = arg;
    while (stvm_vm_now_us(vm) < r->until_us) {
        int64_t amount = r->lo + (int64_t)(lcg(&r->seed) % (uint32_t)(r->hi - r->lo + 1));
        uint64_t t0 = stvm_vm_now_us(vm);
        uint32_t ms0 = stvm_vm_millisecond_clock(vm);
        int rc = r->ms ? stvm_delay_wait_ms(vm, amount) : stvm_delay_wait_us(vm, amount);
        uint64_t t1 = stvm_vm_now_us(vm);
        uint64_t want = r->ms ? (uint64_t)amount * 1000u : (uint64_t)amount;
        r->waits++;
        if (rc != STVM_OK) {
            if (!r->errs++)
                r->first_err = rc;
            continue;
        }
        if (t1 - t0 != want && !r->wrong++) {
            r->bad_amount = amount;
            r->bad_elapsed = t1 - t0;
        }
        if (r->ms && stvm_vm_millisecond_clock(vm) != ((ms0 + (uint32_t)amount) & MS_MASK))
            r->wrong_ms_clock++;
        if (t0 < r->boundary_us && t1 >= r->boundary_us)
            r->straddled++;
    }
}

static void check_roller(const rep *rp, const roller *r, int i)
{
    cr_assert_gt(r->waits, 10000, "%s: roller %d did only %d waits", rp->name, i, r->waits);
    cr_assert_eq(r->errs, 0, "%s: roller %d: %d waits failed, first %s", rp->name, i, r->errs,
                 stvm_err_name(r->first_err));
    cr_assert_eq(r->wrong, 0, "%s: roller %d: %d waits off time, first %lld %s took %llu us",
                 rp->name, i, r->wrong, (long long)r->bad_amount, r->ms ? "ms" : "us",
                 (unsigned long long)r->bad_elapsed);
    cr_assert_eq(r->wrong_ms_clock, 0, "%s: roller %d: the ms clock moved wrongly %d times",
                 rp->name, i, r->wrong_ms_clock);
}

/* One long wait. */
typedef struct long_wait {
    int64_t amount;
    bool ms;
    int rc;
    uint64_t t0, t1;
    uint32_t ms0, ms1;
} long_wait;

static void long_wait_fn(stvm_vm *vm, void *arg)
{
    long_wait *l = arg;
    l->t0 = stvm_vm_now_us(vm);
    l->ms0 = stvm_vm_millisecond_clock(vm);
    l->rc = l->ms ? stvm_delay_wait_ms(vm, l->amount) : stvm_delay_wait_us(vm, l->amount);
    l->t1 = stvm_vm_now_us(vm);
    l->ms1 = stvm_vm_millisecond_clock(vm);
}

/* Sample the box counter just before and after a boundary. */
typedef struct probe {
    uint64_t before_us, after_us;
    stvm_stats before, after;
} probe;

static void probe_fn(stvm_vm *vm, void *arg)
{
    probe *p = arg;
    stvm_delay_wait_us(vm, (int64_t)(p->before_us - stvm_vm_now_us(vm)));
    stvm_vm_get_stats(vm, &p->before);
    stvm_delay_wait_us(vm, (int64_t)(p->after_us - stvm_vm_now_us(vm)));
    stvm_vm_get_stats(vm, &p->after);
}

/* ---- the millisecond clock wrap ------------------------------------------------------ */

/* 300000 ms before the wrap: the clock reads 0 after exactly 5 simulated minutes. */
#define MS_START_5MIN_BEFORE_WRAP (MS_MASK - FIVE_MIN_MS + 1)

static void ms_wrap_run(const rep *rp)
{
    stvm_vm *vm = rep_vm_at(rp, SIM_START, MS_START_5MIN_BEFORE_WRAP);
    enum { NR = 2 };
    roller r[NR];
    for (int i = 0; i < NR; i++) {
        r[i] = (roller){.until_us = SIM_START + TEN_MIN_US,
                        .boundary_us = SIM_START + FIVE_MIN_US,
                        .seed = 31u + 17u * (uint32_t)i, .lo = 1, .hi = 50, .ms = true};
        spawn(vm, 30 + i, "roller", roller_fn, &r[i]);
    }
    long_wait l = {.amount = 400000, .ms = true, .rc = -999};
    spawn(vm, 40, "long", long_wait_fn, &l);
    cr_assert_eq(stvm_run(vm), STVM_OK, "%s", rp->name);
    int waits = 0, straddled = 0;
    for (int i = 0; i < NR; i++) {
        check_roller(rp, &r[i], i);
        waits += r[i].waits;
        straddled += r[i].straddled;
    }
    cr_assert_gt(straddled, 0, "no delay spanned the wrap");
    cr_assert_eq(l.rc, STVM_OK);
    cr_assert_eq(l.t0, SIM_START);
    cr_assert_eq(l.t1 - l.t0, 400000000u, "%s: the 400 s delay took %llu us", rp->name,
                 (unsigned long long)(l.t1 - l.t0));
    cr_assert_eq(l.ms0, MS_START_5MIN_BEFORE_WRAP);
    cr_assert_eq(l.ms1, 100000u, "%s: ms clock %u at the end of the long delay", rp->name,
                 l.ms1);
    stvm_stats st = stats_of(vm);
    cr_assert_eq(st.delays_scheduled, (uint64_t)waits + 1u, "%s", rp->name);
    cr_assert_eq(st.delays_expired, (uint64_t)waits + 1u, "%s: some delay fired twice or never",
                 rp->name);
    cr_assert_eq(st.delays_unscheduled, 0u);
    cr_assert_eq(st.boxed_allocated, 0u, "%s: millisecond timestamps are never boxes", rp->name);
    vm_done(vm);
}

Test(rollover, ms_scheduler_delays_spanning_the_millisecond_clock_wrap_fire_on_time)
{
    ms_wrap_run(&MS31);
    ms_wrap_run(&MS61);
}

Test(rollover, ms_scheduler_single_long_delay_across_the_wrap_fires_once_exactly)
{
    stvm_vm *vm = rep_vm_at(&MS31, SIM_START, MS_START_5MIN_BEFORE_WRAP);
    long_wait l = {.amount = 400000, .ms = true, .rc = -999};
    spawn(vm, 40, "long", long_wait_fn, &l);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(l.rc, STVM_OK);
    cr_assert_eq(l.t1 - l.t0, 400000000u, "took %llu us", (unsigned long long)(l.t1 - l.t0));
    cr_assert_eq(l.ms1, 100000u);
    cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 400000000u, "the VM ran on after the delay");
    stvm_stats st = stats_of(vm);
    cr_assert_eq(st.delays_expired, 1u);
    /* 1 request pass, one pass per second (399 of them), the expiry */
    cr_assert_eq(st.timing_loop_passes, 401u);
    vm_done(vm);
}

/* Start delays at every offset from 12 ms before to 3 ms after the wrap, each ending on
 * either side of it, and a wait that ends exactly at the wrap tick. */
typedef struct near_wrap {
    int64_t pre, ms;
    int rc;
    uint64_t t1;
    uint32_t ms1;
} near_wrap;

static void near_wrap_fn(stvm_vm *vm, void *arg)
{
    near_wrap *n = arg;
    n->rc = STVM_OK;
    if (n->pre)
        n->rc = stvm_delay_wait_ms(vm, n->pre);
    n->rc |= stvm_delay_wait_ms(vm, n->ms);
    n->t1 = stvm_vm_now_us(vm);
    n->ms1 = stvm_vm_millisecond_clock(vm);
}

Test(rollover, ms_scheduler_delays_started_next_to_the_wrap_end_on_their_tick)
{
    static const rep *reps[] = {&MS31, &MS61};
    for (int k = 0; k < 2; k++) {
        /* the wrap happens 12 ms after start */
        stvm_vm *vm = rep_vm_at(reps[k], SIM_START, MS_MASK - 11);
        enum { N = 16 * 4 };
        near_wrap n[N];
        for (int i = 0; i < N; i++) {
            n[i] = (near_wrap){.pre = i / 4, .ms = 1 + (i % 4) * 5, .rc = -999};
            spawn(vm, 40, "near", near_wrap_fn, &n[i]);
        }
        cr_assert_eq(stvm_run(vm), STVM_OK);
        for (int i = 0; i < N; i++) {
            uint64_t end_ms = (uint64_t)(n[i].pre + n[i].ms);
            cr_assert_eq(n[i].rc, STVM_OK);
            cr_assert_eq(n[i].t1, SIM_START + end_ms * 1000u, "%s: %lld ms at +%lld ms ended at +%llu us",
                         reps[k]->name, (long long)n[i].ms, (long long)n[i].pre,
                         (unsigned long long)(n[i].t1 - SIM_START));
            cr_assert_eq(n[i].ms1, (uint32_t)((MS_MASK - 11 + end_ms) & MS_MASK));
        }
        stvm_stats st = stats_of(vm);
        cr_assert_eq(st.delays_expired, st.delays_scheduled);
        vm_done(vm);
    }
}

/* A delay requested long after the timing process last ran, with the wrap in between
 * (time moved by a private 242 timer while no delay was pending). */
typedef struct late_request {
    stvm_semaphore *sem;
    int rc1, rc2;
    uint64_t t0, t1;
    uint32_t ms0, ms1;
} late_request;

static void late_request_fn(stvm_vm *vm, void *arg)
{
    late_request *l = arg;
    l->rc1 = stvm_delay_wait_ms(vm, 10);   /* the timing process sees the pre-wrap clock */
    stvm_oop t = STVM_NIL;
    stvm_int_from_u64(vm, stvm_vm_now_us(vm) + 400000000u, &t);
    stvm_oop args[2] = {stvm_semaphore_oop(l->sem), t};
    stvm_primitive_call(vm, 242, STVM_NIL, args, 2, NULL, NULL);
    stvm_oop_release(vm, t);
    stvm_semaphore_wait(vm, l->sem);
    l->t0 = stvm_vm_now_us(vm);
    l->ms0 = stvm_vm_millisecond_clock(vm);
    l->rc2 = stvm_delay_wait_ms(vm, 50);
    l->t1 = stvm_vm_now_us(vm);
    l->ms1 = stvm_vm_millisecond_clock(vm);
}

Test(rollover, ms_scheduler_delay_requested_after_an_unobserved_wrap_fires_on_time)
{
    static const rep *reps[] = {&MS31, &MS61};
    for (int k = 0; k < 2; k++) {
        stvm_vm *vm = rep_vm_at(reps[k], SIM_START, MS_START_5MIN_BEFORE_WRAP);
        late_request l = {.rc1 = -999, .rc2 = -999};
        cr_assert_eq(stvm_semaphore_new(vm, &l.sem), STVM_OK);
        spawn(vm, 40, "late", late_request_fn, &l);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert_eq(l.rc1, STVM_OK);
        cr_assert_eq(l.rc2, STVM_OK);
        cr_assert_eq(l.t0, SIM_START + 400010000u);
        cr_assert_eq(l.ms0, 100010u);
        cr_assert_eq(l.t1 - l.t0, 50000u, "%s: took %llu us", reps[k]->name,
                     (unsigned long long)(l.t1 - l.t0));
        cr_assert_eq(l.ms1, 100060u);
        vm_done(vm);
    }
}

/* ---- microsecond boundaries ------------------------------------------------------------ */

/* Rollers with durations of 1 us .. 50 ms (so starts fall anywhere in a tick) for 10
 * simulated minutes around `boundary`, which is 5 minutes after the start. */
static void us_boundary_run(const rep *rp, uint64_t boundary, bool boxes_before,
                            bool boxes_after)
{
    uint64_t start = boundary - FIVE_MIN_US;
    stvm_vm *vm = rep_vm_at(rp, start, 0);
    enum { NR = 2 };
    roller r[NR];
    for (int i = 0; i < NR; i++) {
        r[i] = (roller){.until_us = start + TEN_MIN_US, .boundary_us = boundary,
                        .seed = 7u + 1000u * (uint32_t)i, .lo = 1, .hi = 50000, .ms = false};
        spawn(vm, 30 + i, "roller", roller_fn, &r[i]);
    }
    probe p = {.before_us = boundary - 2000000u, .after_us = boundary + 2000000u};
    spawn(vm, 50, "probe", probe_fn, &p);
    stvm_stats s0 = stats_of(vm);
    cr_assert_eq(stvm_run(vm), STVM_OK, "%s", rp->name);
    stvm_stats s1 = stats_of(vm);
    int waits = 0, straddled = 0;
    for (int i = 0; i < NR; i++) {
        check_roller(rp, &r[i], i);
        waits += r[i].waits;
        straddled += r[i].straddled;
    }
    cr_assert_gt(straddled, 0, "%s: no delay spanned the boundary", rp->name);
    uint64_t delays = (uint64_t)waits + 2u;
    cr_assert_eq(s1.delays_scheduled, delays, "%s", rp->name);
    cr_assert_eq(s1.delays_expired, delays, "%s: some delay fired twice or never", rp->name);
    cr_assert_eq(s1.delays_unscheduled, 0u);
    if (boxes_before)
        cr_assert_gt(p.before.boxed_allocated, 0u, "%s", rp->name);
    else
        cr_assert_eq(p.before.boxed_allocated, 0u, "%s: boxes before the boundary", rp->name);
    if (boxes_after)
        cr_assert_gt(p.after.boxed_allocated, p.before.boxed_allocated,
                     "%s: timestamps past the boundary must be boxes", rp->name);
    /* Every box made along the way was given back (the timing process and its
     * semaphore are the only objects the run leaves behind). */
    cr_assert_eq(s1.objects_live, s0.objects_live + 2u, "%s: %lld objects left", rp->name,
                 (long long)(s1.objects_live - s0.objects_live));
    vm_done(vm);
}

Test(rollover, us_delays_across_smallint_max_of_a_31_bit_vm_turn_into_boxes_and_stay_exact)
{
    us_boundary_run(&US31, 1ull << 30, false, true);
}

Test(rollover, us_delays_across_2_to_the_32_on_a_31_bit_vm_stay_exact)
{
    us_boundary_run(&US31, 1ull << 32, true, true);
}

Test(rollover, us_delays_across_smallint_max_of_a_61_bit_vm_turn_into_boxes_and_stay_exact)
{
    us_boundary_run(&US61, 1ull << 60, false, true);
}

Test(rollover, a_long_us_delay_across_each_boundary_ends_exactly_on_time)
{
    static const struct { const rep *r; uint64_t boundary; } cases[] = {
        {&US31, 1ull << 30}, {&US31, 1ull << 32}, {&US61, 1ull << 60},
    };
    for (int k = 0; k < 3; k++) {
        uint64_t start = cases[k].boundary - FIVE_MIN_US;
        stvm_vm *vm = rep_vm_at(cases[k].r, start, 0);
        long_wait a = {.amount = 400000, .ms = true, .rc = -999};
        long_wait b = {.amount = 400000000 + 777, .ms = false, .rc = -999};
        spawn(vm, 40, "long-ms", long_wait_fn, &a);
        spawn(vm, 40, "long-us", long_wait_fn, &b);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert_eq(a.rc, STVM_OK);
        cr_assert_eq(b.rc, STVM_OK);
        cr_assert_eq(a.t1 - a.t0, 400000000u, "%s boundary %d", cases[k].r->name, k);
        cr_assert_eq(b.t1 - b.t0, 400000777u, "%s boundary %d", cases[k].r->name, k);
        cr_assert_eq(stvm_vm_now_us(vm), start + 400000777u);
        stvm_stats st = stats_of(vm);
        cr_assert_eq(st.delays_expired, 2u);
        vm_done(vm);
    }
}
