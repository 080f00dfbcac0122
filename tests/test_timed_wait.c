/*
 * Suite "timed_wait": stvm_semaphore_wait_timeout_ms (Pharo's waitTimeoutMSecs:), in the
 * four representations (ms-smallint31, us-largeint31, us-smallint61, ms-smallint61).
 *
 * Timeouts happen exactly `ms` later on the simulated clock (every wait here starts on
 * a millisecond boundary, so the millisecond scheduler's whole ticks are exact too); a
 * timeout consumes no signal; a signal before the timeout returns STVM_OK at the
 * signal's time and unschedules the delay, which then keeps nothing alive; the waiter
 * keeps its FIFO place among plain waiters. One test uses the real clock.
 *
 * Green processes only record; the host asserts after stvm_run.
 */
#include <stdint.h>
#include <string.h>

#include "helpers.h"

/* A guard against hangs: on the simulated clock a stale timer or delay would keep a
 * blocked VM going forever. */
TestSuite(timed_wait, .timeout = 30);

/* A waiter: optionally a delay first, then a timed wait (ms >= 0) or a plain wait
 * (ms < 0); optionally a final wait on a semaphore nobody signals. */
typedef struct tw {
    stvm_semaphore *sem;
    int64_t pre_ms, ms;
    int tag;
    trace_log *log;
    stvm_semaphore *then_block_on;
    /* results */
    int rc;
    uint64_t t0, t1;
    int64_t excess_after;
    stvm_stats after;
} tw;

static void tw_fn(stvm_vm *vm, void *arg)
{
    tw *w = arg;
    if (w->pre_ms)
        stvm_delay_wait_ms(vm, w->pre_ms);
    w->t0 = stvm_vm_now_us(vm);
    w->rc = w->ms >= 0 ? stvm_semaphore_wait_timeout_ms(vm, w->sem, w->ms)
                       : stvm_semaphore_wait(vm, w->sem);
    w->t1 = stvm_vm_now_us(vm);
    w->excess_after = stvm_semaphore_excess(vm, w->sem);
    stvm_vm_get_stats(vm, &w->after);
    if (w->log)
        trace_add(w->log, w->tag);
    if (w->then_block_on)
        stvm_semaphore_wait(vm, w->then_block_on);
}

static void tw_init(tw *w, stvm_semaphore *s, int64_t ms)
{
    memset(w, 0, sizeof *w);
    w->sem = s;
    w->ms = ms;
    w->rc = -999;
}

/* A signaller: after `after_ms`, signal `count` times. */
typedef struct signaller {
    stvm_semaphore *sem;
    int64_t after_ms;
    int count;
    uint64_t at;
    stvm_semaphore *then_block_on;
} signaller;

static void signaller_fn(stvm_vm *vm, void *arg)
{
    signaller *s = arg;
    if (s->after_ms)
        stvm_delay_wait_ms(vm, s->after_ms);
    s->at = stvm_vm_now_us(vm);
    for (int i = 0; i < s->count; i++)
        stvm_semaphore_signal(vm, s->sem);
    if (s->then_block_on)
        stvm_semaphore_wait(vm, s->then_block_on);
}

/* ---- timeouts --------------------------------------------------------------------- */

Test(timed_wait, times_out_exactly_after_ms_when_nobody_signals)
{
    static const int64_t amounts[] = {1, 40, 1500};
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        for (int k = 0; k < 3; k++) {
            stvm_vm *vm = rep_vm(r);
            tw w;
            tw_init(&w, sem_make(vm), amounts[k]);
            spawn(vm, 40, "w", tw_fn, &w);
            cr_assert_eq(stvm_run(vm), STVM_OK);
            cr_assert_eq(w.rc, STVM_ETIMEDOUT, "%s: %s", r->name, stvm_err_name(w.rc));
            cr_assert_eq(w.t1 - w.t0, (uint64_t)amounts[k] * 1000u, "%s: %lld ms took %llu us",
                         r->name, (long long)amounts[k], (unsigned long long)(w.t1 - w.t0));
            cr_assert_eq(w.excess_after, 0);
            stvm_stats st = stats_of(vm);
            cr_assert_eq(st.delays_scheduled, 1u);
            cr_assert_eq(st.delays_expired, 1u);
            cr_assert_eq(st.delays_unscheduled, 0u);
            cr_assert_eq(stvm_vm_now_us(vm), SIM_START + (uint64_t)amounts[k] * 1000u);
            vm_done(vm);
        }
    }
}

Test(timed_wait, a_timeout_consumes_no_signal_and_a_later_signal_counts_as_excess)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        stvm_semaphore *s = sem_make(vm);
        tw w;
        tw_init(&w, s, 30);
        spawn(vm, 40, "w", tw_fn, &w);
        signaller sig = {.sem = s, .after_ms = 31, .count = 1};
        spawn(vm, 40, "late signaller", signaller_fn, &sig);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        cr_assert_eq(w.rc, STVM_ETIMEDOUT, "%s: %s", r->name, stvm_err_name(w.rc));
        cr_assert_eq(w.t1, SIM_START + 30000u);
        cr_assert_eq(sig.at, SIM_START + 31000u);
        cr_assert_eq(stvm_semaphore_excess(vm, s), 1, "%s: the late signal was lost", r->name);
        vm_done(vm);
    }
}

Test(timed_wait, zero_ms_without_a_signal_times_out_at_once)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        for (int prio = 0; prio < 2; prio++) {
            /* also at timing priority, where the timing process does not preempt */
            stvm_vm *vm = rep_vm(r);
            stvm_semaphore *s = sem_make(vm);
            tw w;
            tw_init(&w, s, 0);
            spawn(vm, prio ? STVM_PRIORITY_TIMING : 40, "w", tw_fn, &w);
            cr_assert_eq(stvm_run(vm), STVM_OK);
            cr_assert_eq(w.rc, STVM_ETIMEDOUT, "%s prio %d: %s", r->name, prio,
                         stvm_err_name(w.rc));
            cr_assert_eq(w.t1, SIM_START, "%s: time passed", r->name);
            cr_assert_eq(w.t0, SIM_START);
            cr_assert_eq(w.after.delays_expired + w.after.delays_unscheduled,
                         w.after.delays_scheduled, "%s: a delay is still pending", r->name);
            cr_assert_eq(stvm_vm_now_us(vm), SIM_START);
            /* It is off the semaphore: a signal now is an excess signal. */
            cr_assert_eq(stvm_semaphore_signal(vm, s), STVM_OK);
            cr_assert_eq(stvm_semaphore_excess(vm, s), 1);
            vm_done(vm);
        }
    }
}

/* ---- signalled ------------------------------------------------------------------------ */

Test(timed_wait, signalled_before_the_timeout_returns_ok_at_the_signal_time)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        for (int block = 0; block < 2; block++) {
            stvm_vm *vm = rep_vm(r);
            stvm_semaphore *s = sem_make(vm);
            tw w;
            tw_init(&w, s, 100);
            /* With `block`, the waiter then waits forever: the unscheduled timeout must
             * not count as work, so stvm_run reports the deadlock at 15 ms. */
            w.then_block_on = block ? sem_make(vm) : NULL;
            spawn(vm, 40, "w", tw_fn, &w);
            signaller sig = {.sem = s, .after_ms = 15, .count = 1};
            spawn(vm, 40, "signaller", signaller_fn, &sig);
            cr_assert_eq(stvm_run(vm), block ? STVM_EDEADLOCK : STVM_OK, "%s", r->name);
            cr_assert_eq(w.rc, STVM_OK, "%s: %s", r->name, stvm_err_name(w.rc));
            cr_assert_eq(w.t1, SIM_START + 15000u, "%s: returned at +%llu us", r->name,
                         (unsigned long long)(w.t1 - SIM_START));
            cr_assert_eq(w.excess_after, 0, "the signal was consumed");
            cr_assert_eq(w.after.delays_unscheduled, 1u, "%s", r->name);
            cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 15000u,
                         "%s: the VM waited for the old 100 ms deadline", r->name);
            stvm_stats st = stats_of(vm);
            cr_assert_eq(st.delays_scheduled, 2u);
            cr_assert_eq(st.delays_expired, 1u, "only the signaller's delay expired");
            cr_assert_eq(st.delays_unscheduled, 1u);
            vm_done(vm);
        }
    }
}

Test(timed_wait, an_excess_signal_makes_it_return_ok_at_once)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        static const int64_t amounts[] = {0, 50};
        for (int k = 0; k < 2; k++) {
            stvm_vm *vm = rep_vm(r);
            stvm_semaphore *s = sem_make(vm);
            cr_assert_eq(stvm_semaphore_signal(vm, s), STVM_OK);
            cr_assert_eq(stvm_semaphore_signal(vm, s), STVM_OK);
            tw w;
            tw_init(&w, s, amounts[k]);
            spawn(vm, 40, "w", tw_fn, &w);
            cr_assert_eq(stvm_run(vm), STVM_OK);
            cr_assert_eq(w.rc, STVM_OK, "%s %lld ms: %s", r->name, (long long)amounts[k],
                         stvm_err_name(w.rc));
            cr_assert_eq(w.t1, SIM_START);
            cr_assert_eq(w.excess_after, 1, "exactly one signal consumed");
            cr_assert_eq(w.after.delays_scheduled, 0u, "%s: nothing needs scheduling", r->name);
            cr_assert_eq(stvm_vm_now_us(vm), SIM_START);
            vm_done(vm);
        }
    }
}

Test(timed_wait, signal_and_timeout_at_the_same_instant_lose_no_signal)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        for (int order = 0; order < 2; order++) {
            stvm_vm *vm = rep_vm(r);
            stvm_semaphore *s = sem_make(vm);
            tw w;
            tw_init(&w, s, 40);
            signaller sig = {.sem = s, .after_ms = 40, .count = 1};
            if (order) {
                spawn(vm, 40, "signaller", signaller_fn, &sig);
                spawn(vm, 40, "w", tw_fn, &w);
            } else {
                spawn(vm, 40, "w", tw_fn, &w);
                spawn(vm, 40, "signaller", signaller_fn, &sig);
            }
            cr_assert_eq(stvm_run(vm), STVM_OK);
            cr_assert_eq(w.t1, SIM_START + 40000u);
            int64_t excess = stvm_semaphore_excess(vm, s);
            cr_assert((w.rc == STVM_OK && excess == 0) || (w.rc == STVM_ETIMEDOUT && excess == 1),
                      "%s order %d: %s with %lld excess signals", r->name, order,
                      stvm_err_name(w.rc), (long long)excess);
            stvm_stats st = stats_of(vm);
            cr_assert_eq(st.delays_expired + st.delays_unscheduled, st.delays_scheduled);
            vm_done(vm);
        }
    }
}

/* ---- FIFO with plain waiters -------------------------------------------------------- */

Test(timed_wait, a_timed_waiter_keeps_its_fifo_place_among_plain_waiters)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        stvm_semaphore *s = sem_make(vm);
        trace_log log = {0};
        /* plain, timed, plain, timed, plain: waiter i queues at i+1 ms */
        static const int64_t ms[5] = {-1, 1000, -1, 500, -1};
        tw w[5];
        for (int i = 0; i < 5; i++) {
            tw_init(&w[i], s, ms[i]);
            w[i].pre_ms = i + 1;
            w[i].tag = i;
            w[i].log = &log;
            spawn(vm, 40, "w", tw_fn, &w[i]);
        }
        signaller sig = {.sem = s, .after_ms = 10, .count = 5};
        spawn(vm, 40, "signaller", signaller_fn, &sig);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        int want[5] = {0, 1, 2, 3, 4};
        trace_expect(&log, want, 5);
        for (int i = 0; i < 5; i++) {
            cr_assert_eq(w[i].rc, STVM_OK, "%s: waiter %d: %s", r->name, i, stvm_err_name(w[i].rc));
            cr_assert_eq(w[i].t1, SIM_START + 10000u);
        }
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 10000u);
        cr_assert_eq(stats_of(vm).delays_unscheduled, 2u);
        cr_assert_eq(stvm_semaphore_excess(vm, s), 0);
        vm_done(vm);
    }
}

Test(timed_wait, a_timed_out_waiter_leaves_the_queue_without_disturbing_the_others)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        stvm_semaphore *s = sem_make(vm);
        trace_log log = {0};
        /* waiter i queues at i+1 ms; the timed ones time out at 5 and 7 ms */
        static const int64_t ms[4] = {-1, 3, -1, 3};
        tw w[4];
        for (int i = 0; i < 4; i++) {
            tw_init(&w[i], s, ms[i]);
            w[i].pre_ms = i + 1;
            w[i].tag = i;
            w[i].log = &log;
            spawn(vm, 40, "w", tw_fn, &w[i]);
        }
        signaller sig = {.sem = s, .after_ms = 10, .count = 3};
        spawn(vm, 40, "signaller", signaller_fn, &sig);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        int want[4] = {1, 3, 0, 2};
        trace_expect(&log, want, 4);
        cr_assert_eq(w[1].rc, STVM_ETIMEDOUT, "%s", r->name);
        cr_assert_eq(w[1].t1, SIM_START + 5000u);
        cr_assert_eq(w[3].rc, STVM_ETIMEDOUT, "%s", r->name);
        cr_assert_eq(w[3].t1, SIM_START + 7000u);
        cr_assert_eq(w[0].rc, STVM_OK);
        cr_assert_eq(w[2].rc, STVM_OK);
        cr_assert_eq(w[0].t1, SIM_START + 10000u);
        cr_assert_eq(stvm_semaphore_excess(vm, s), 1, "3 signals, 2 waiters left");
        vm_done(vm);
    }
}

Test(timed_wait, a_higher_priority_timed_waiter_that_times_out_runs_before_lower_ones)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        stvm_semaphore *s = sem_make(vm);
        trace_log log = {0};
        tw lo, hi;
        tw_init(&lo, sem_make(vm), 20);   /* a plain timeout on another semaphore */
        lo.tag = 30;
        lo.log = &log;
        tw_init(&hi, s, 15);   /* requested after lo's, same deadline */
        hi.pre_ms = 5;
        hi.tag = 50;
        hi.log = &log;
        spawn(vm, 30, "lo", tw_fn, &lo);
        spawn(vm, 50, "hi", tw_fn, &hi);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        int want[2] = {50, 30};
        trace_expect(&log, want, 2);
        cr_assert_eq(hi.rc, STVM_ETIMEDOUT);
        cr_assert_eq(lo.rc, STVM_ETIMEDOUT);
        cr_assert_eq(hi.t1, SIM_START + 20000u);
        cr_assert_eq(lo.t1, SIM_START + 20000u);
        vm_done(vm);
    }
}

/* ---- bad input ------------------------------------------------------------------------ */

typedef struct bad_tw {
    stvm_semaphore *sem, *foreign;
    stvm_mutex *mutex;
    bool ms_sched;
    int rc[8];
    uint64_t t0, t1;
    stvm_stats s0, s1;
} bad_tw;

static void bad_tw_fn(stvm_vm *vm, void *arg)
{
    bad_tw *b = arg;
    stvm_vm_get_stats(vm, &b->s0);
    b->t0 = stvm_vm_now_us(vm);
    int i = 0;
    b->rc[i++] = stvm_semaphore_wait_timeout_ms(vm, b->sem, -1);
    b->rc[i++] = stvm_semaphore_wait_timeout_ms(vm, b->sem, INT64_MIN);
    b->rc[i++] = stvm_semaphore_wait_timeout_ms(vm, NULL, 10);
    b->rc[i++] = stvm_semaphore_wait_timeout_ms(vm, b->foreign, 10);
    b->rc[i++] = stvm_semaphore_wait_timeout_ms(vm, (stvm_semaphore *)b->mutex, 10);
    b->rc[i++] = stvm_semaphore_wait_timeout_ms(vm, b->sem, INT64_MAX);
    b->rc[i++] = stvm_semaphore_wait_timeout_ms(vm, b->sem, ((int64_t)1 << 52) / 1000 + 1);
    b->rc[i++] = stvm_semaphore_wait_timeout_ms(vm, b->sem,
                                                b->ms_sched ? 0x10000000 : INT64_MAX / 2);
    b->t1 = stvm_vm_now_us(vm);
    stvm_vm_get_stats(vm, &b->s1);
}

Test(timed_wait, bad_arguments_are_rejected_from_a_process_and_the_host_and_nothing_is_scheduled)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        stvm_vm *other = rep_vm(r);
        bad_tw b = {.sem = sem_make(vm), .foreign = sem_make(other), .ms_sched = is_ms(r)};
        cr_assert_eq(stvm_mutex_new(vm, &b.mutex), STVM_OK);
        spawn(vm, 40, "bad", bad_tw_fn, &b);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        static const int want[8] = {STVM_EINVAL, STVM_EINVAL, STVM_EINVAL, STVM_EINVAL,
                                    STVM_EINVAL, STVM_ERANGE, STVM_ERANGE, STVM_ERANGE};
        for (int i = 0; i < 8; i++)
            cr_assert_eq(b.rc[i], want[i], "%s: call %d gave %s, expected %s", r->name, i,
                         stvm_err_name(b.rc[i]), stvm_err_name(want[i]));
        cr_assert_eq(b.t1, b.t0);
        cr_assert_eq(b.s1.delays_scheduled, b.s0.delays_scheduled);
        cr_assert_eq(b.s1.semaphore_waits, b.s0.semaphore_waits, "%s", r->name);
        cr_assert_eq(stvm_semaphore_excess(vm, b.sem), 0);
        vm_done(other);
        vm_done(vm);
    }
    /* from the host: ENOTPROC, and NULL arguments are EINVAL */
    for (int ri = 0; ri < NREPS; ri++) {
        stvm_vm *vm = rep_vm(&REPS[ri]);
        stvm_semaphore *s = sem_make(vm);
        stvm_stats s0 = stats_of(vm);
        cr_assert_eq(stvm_semaphore_wait_timeout_ms(vm, s, 10), STVM_ENOTPROC);
        cr_assert_eq(stvm_semaphore_wait_timeout_ms(vm, s, 0), STVM_ENOTPROC);
        /* with an excess signal as well: it must not be consumed from the host */
        cr_assert_eq(stvm_semaphore_signal(vm, s), STVM_OK);
        cr_assert_eq(stvm_semaphore_wait_timeout_ms(vm, s, 10), STVM_ENOTPROC);
        cr_assert_eq(stvm_semaphore_excess(vm, s), 1);
        cr_assert_eq(stvm_semaphore_wait_timeout_ms(vm, NULL, 10), STVM_EINVAL);
        stvm_stats s1 = stats_of(vm);
        cr_assert_eq(s1.delays_scheduled, s0.delays_scheduled);
        cr_assert_eq(s1.processes_live, s0.processes_live, "no timing process was started");
        vm_done(vm);
    }
    cr_assert_eq(stvm_semaphore_wait_timeout_ms(NULL, NULL, 10), STVM_EINVAL);
}

/* ---- termination and suspension ----------------------------------------------------- */

typedef struct killer {
    stvm_process *victim;
    int64_t after_ms;
    bool suspend;          /* suspend at after_ms, resume 10 ms later, instead of kill */
    int rc;
    stvm_process_info info;
    stvm_stats after;
    stvm_semaphore *then_block_on;
} killer;

static void killer_fn(stvm_vm *vm, void *arg)
{
    killer *k = arg;
    stvm_delay_wait_ms(vm, k->after_ms);
    stvm_process_get_info(vm, k->victim, &k->info);
    if (k->suspend) {
        k->rc = stvm_process_suspend(vm, k->victim);
        stvm_delay_wait_ms(vm, 10);
        k->rc |= stvm_process_resume(vm, k->victim);
        stvm_yield(vm);
    } else {
        k->rc = stvm_process_terminate(vm, k->victim);
    }
    stvm_vm_get_stats(vm, &k->after);
    if (k->then_block_on)
        stvm_semaphore_wait(vm, k->then_block_on);
}

Test(timed_wait, terminating_a_timed_waiter_leaves_no_stale_delay)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        stvm_semaphore *s = sem_make(vm);
        tw w;
        tw_init(&w, s, 1000);
        killer k = {.after_ms = 10, .then_block_on = sem_make(vm)};
        k.victim = spawn(vm, 30, "w", tw_fn, &w);
        spawn(vm, 40, "killer", killer_fn, &k);
        /* the killer then blocks forever: nothing may keep the VM going to 1000 ms */
        cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK, "%s", r->name);
        cr_assert_eq(k.rc, STVM_OK);
        cr_assert_eq(k.info.state, STVM_PROCESS_WAITING);
        cr_assert_str_eq(k.info.waiting_on, "timed wait");
        cr_assert_eq(k.info.waiting_object, (const void *)s);
        cr_assert_eq(w.rc, -999, "the terminated waiter never returns");
        cr_assert_eq(k.after.delays_unscheduled, 1u, "%s", r->name);
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 10000u, "%s: a stale timeout kept time going",
                     r->name);
        /* it is off the semaphore: a signal is an excess signal */
        cr_assert_eq(stvm_semaphore_signal(vm, s), STVM_OK);
        cr_assert_eq(stvm_semaphore_excess(vm, s), 1);
        vm_done(vm);
    }
}

Test(timed_wait, a_suspended_timed_waiter_gets_estate_on_resume_and_its_delay_is_unscheduled)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        stvm_semaphore *s = sem_make(vm);
        tw w;
        tw_init(&w, s, 100);
        w.then_block_on = sem_make(vm);
        killer k = {.after_ms = 10, .suspend = true};
        k.victim = spawn(vm, 40, "w", tw_fn, &w);
        spawn(vm, 40, "suspender", killer_fn, &k);
        cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK, "%s", r->name);
        cr_assert_eq(k.rc, STVM_OK);
        cr_assert_eq(w.rc, STVM_ESTATE, "%s: %s", r->name, stvm_err_name(w.rc));
        cr_assert_eq(w.t1, SIM_START + 20000u);
        cr_assert_eq(w.after.delays_unscheduled, 1u, "%s", r->name);
        cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 20000u, "%s: the old deadline was waited for",
                     r->name);
        cr_assert_eq(stvm_semaphore_signal(vm, s), STVM_OK);
        cr_assert_eq(stvm_semaphore_excess(vm, s), 1, "the waiter is no longer on the semaphore");
        vm_done(vm);
    }
}

/* ---- many cancellations ---------------------------------------------------------------- */

typedef struct canceller {
    stvm_semaphore **sems;
    const int *order;
    int n;
    uint64_t *sig_at;
} canceller;

static void canceller_fn(stvm_vm *vm, void *arg)
{
    canceller *c = arg;
    stvm_delay_wait_ms(vm, 10);
    for (int k = 0; k < c->n; k++) {
        c->sig_at[c->order[k]] = stvm_vm_now_us(vm);
        stvm_semaphore_signal(vm, c->sems[c->order[k]]);
        if (k % 50 == 49)
            stvm_delay_wait_ms(vm, 1);
    }
}

typedef struct plain_sleeper {
    uint32_t seed;
    int n, wrong;
    uint64_t total_ms;
} plain_sleeper;

static void plain_sleeper_fn(stvm_vm *vm, void *arg)
{
    plain_sleeper *p = arg;
    for (int i = 0; i < p->n; i++) {
        int64_t ms = (int64_t)(lcg(&p->seed) % 301u);
        uint64_t t0 = stvm_vm_now_us(vm);
        if (stvm_delay_wait_ms(vm, ms) != STVM_OK || stvm_vm_now_us(vm) - t0 != (uint64_t)ms * 1000u)
            p->wrong++;
        p->total_ms += (uint64_t)ms;
    }
}

Test(timed_wait, hundreds_of_timed_waits_signalled_in_random_order_leave_no_stale_delays)
{
    enum { NW = 600, N_SIGNALS = 500, NS = 40 };
    static tw w[NW];
    static stvm_semaphore *sems[NW];
    static int order[NW];
    static uint64_t sig_at[NW];
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        stvm_vm *vm = rep_vm(r);
        /* start the Delay scheduler first, so the run below allocates nothing lasting */
        tw warm;
        tw_init(&warm, sem_make(vm), 0);
        spawn(vm, 40, "warm-up", tw_fn, &warm);
        cr_assert_eq(stvm_run(vm), STVM_OK);
        uint32_t seed = 99;
        for (int i = 0; i < NW; i++) {
            sems[i] = sem_make(vm);
            tw_init(&w[i], sems[i], 1000 + i);
            spawn(vm, 40, "w", tw_fn, &w[i]);
            order[i] = i;
            sig_at[i] = 0;
        }
        for (int i = NW - 1; i > 0; i--) {   /* shuffle: cancel in random heap positions */
            int j = (int)(lcg(&seed) % (uint32_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        plain_sleeper ps[NS];
        for (int i = 0; i < NS; i++) {
            ps[i] = (plain_sleeper){.seed = lcg(&seed), .n = 8};
            spawn(vm, 35, "sleeper", plain_sleeper_fn, &ps[i]);
        }
        canceller c = {.sems = sems, .order = order, .n = N_SIGNALS, .sig_at = sig_at};
        spawn(vm, 45, "canceller", canceller_fn, &c);
        stvm_stats s0 = stats_of(vm);
        cr_assert_eq(stvm_run(vm), STVM_OK, "%s", r->name);
        stvm_stats s1 = stats_of(vm);
        uint64_t last = 0;
        for (int k = 0; k < NW; k++) {
            int i = order[k];
            if (k < N_SIGNALS) {
                cr_assert_eq(w[i].rc, STVM_OK, "%s: waiter %d: %s", r->name, i,
                             stvm_err_name(w[i].rc));
                cr_assert_eq(w[i].t1, sig_at[i], "%s: waiter %d", r->name, i);
            } else {
                cr_assert_eq(w[i].rc, STVM_ETIMEDOUT, "%s: waiter %d: %s", r->name, i,
                             stvm_err_name(w[i].rc));
                cr_assert_eq(w[i].t1 - w[i].t0, (uint64_t)(1000 + i) * 1000u, "%s: waiter %d",
                             r->name, i);
                if (w[i].t1 > last)
                    last = w[i].t1;
            }
        }
        for (int i = 0; i < NS; i++) {
            cr_assert_eq(ps[i].wrong, 0, "%s: sleeper %d", r->name, i);
            if (SIM_START + ps[i].total_ms * 1000u > last)
                last = SIM_START + ps[i].total_ms * 1000u;
        }
        cr_assert_eq(stvm_vm_now_us(vm), last, "%s", r->name);
        cr_assert_eq(s1.delays_unscheduled - s0.delays_unscheduled, (uint64_t)N_SIGNALS, "%s", r->name);
        cr_assert_eq(s1.delays_expired - s0.delays_expired,
                     (uint64_t)(NW - N_SIGNALS) + NS * 8u + 1u + N_SIGNALS / 50, "%s", r->name);
        cr_assert_eq(s1.objects_live, s0.objects_live, "%s: %lld objects left behind", r->name,
                     (long long)(s1.objects_live - s0.objects_live));
        cr_assert_eq(s1.bytes_live, s0.bytes_live, "%s", r->name);
        vm_done(vm);
    }
}

/* ---- the real clock ---------------------------------------------------------------- */

Test(timed_wait, real_clock_30_ms_timed_wait_times_out, .timeout = 10)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    stvm_vm *vm = vm_make(&cfg);
    tw w;
    tw_init(&w, sem_make(vm), 30);
    spawn(vm, 40, "w", tw_fn, &w);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(w.rc, STVM_ETIMEDOUT, "%s", stvm_err_name(w.rc));
    cr_assert_geq(w.t1 - w.t0, 30000u, "timed out early: %llu us",
                  (unsigned long long)(w.t1 - w.t0));
    cr_assert_lt(w.t1 - w.t0, 2000000u);
    cr_assert_eq(w.excess_after, 0);
    vm_done(vm);
}
