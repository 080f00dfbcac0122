/*
 * Suite "delay_object": Delay objects (image-stubs/kernel/delay_object.c), Pharo's Delay
 * instances, on the simulated clock and, wherever time matters, in the four integer/
 * clock representations (helpers.h's REPS): made once, waited on, scheduled and
 * unscheduled by other processes, asked (isExpired, beingWaitedOn, millisecondsToGo),
 * reused, shared by several processes as far as Pharo allows, and the timeout
 * semaphore of Delay class>>timeoutSemaphore:afterMSecs:.
 *
 * Tests named after a Pharo test say so (DelayTest, DelayBasicScheduler*TickerTest in
 * pharo-project/pharo src/Kernel-Tests); the Pharo suites themselves are
 * test_pharo_delay.c and test_pharo_delay_scheduler.c. Green processes only record
 * (GCHECK); the host asserts after stvm_run.
 */
#include <stdint.h>
#include <string.h>

#include "helpers.h"

TestSuite(delay_object, .timeout = 30);

static stvm_delay *delay_ms(stvm_vm *vm, int64_t ms)
{
    stvm_delay *d = NULL;
    cr_assert_eq(stvm_delay_new_ms(vm, ms, &d), STVM_OK);
    cr_assert_not_null(d);
    return d;
}

/* The scenario most tests share: one VM, a Delay, a semaphore, and what was seen. */
typedef struct scen {
    stvm_vm *vm;
    const rep *r;
    stvm_delay *d;
    stvm_semaphore *sem;
    stvm_process *victim;
    int64_t amount;
    bool in_us;
    int rc, rc2, rc3;
    uint64_t t0, t1, t2;
    int stage[16];
    int64_t togo[8];
    int done;
    int bad_line;
} scen;

static int64_t ms_to_go(stvm_vm *vm, stvm_delay *d)
{
    int64_t v = -1;
    return stvm_delay_ms_to_go(vm, d, &v) == STVM_OK ? v : -999;
}

static int64_t us_to_go(stvm_vm *vm, stvm_delay *d)
{
    int64_t v = -1;
    return stvm_delay_us_to_go(vm, d, &v) == STVM_OK ? v : -999;
}

/* ---- waiting ------------------------------------------------------------------------ */

static void wait_once(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    s->t0 = stvm_vm_now_us(vm);
    s->rc = stvm_delay_wait(vm, s->d);
    s->t1 = stvm_vm_now_us(vm);
    s->done++;
}

/* Delay>>wait ends exactly `duration` later on the microsecond scheduler and never
 * before it on either (the millisecond one counts whole ticks, exact from a tick's
 * start, which is where a run on the simulated clock begins). */
Test(delay_object, wait_ends_at_its_time_never_early)
{
    const struct { int64_t amount; bool in_us; } cases[] = {{250, false}, {0, false},
                                                             {1500, true}, {1, true}};
    for (int ri = 0; ri < NREPS; ri++) {
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const rep *r = &REPS[ri];
            scen s = {.vm = rep_vm(r), .r = r, .rc = -999};
            int err = cases[c].in_us ? stvm_delay_new_us(s.vm, cases[c].amount, &s.d)
                                     : stvm_delay_new_ms(s.vm, cases[c].amount, &s.d);
            cr_assert_eq(err, STVM_OK);
            spawn(s.vm, 40, "waiter", wait_once, &s);
            RUN_OK_GREEN(&s);
            cr_assert_eq(s.rc, STVM_OK, "%s: %s", r->name, stvm_err_name(s.rc));
            uint64_t want = (uint64_t)cases[c].amount * (cases[c].in_us ? 1 : 1000);
            uint64_t took = s.t1 - s.t0;
            if (is_ms(r) && cases[c].in_us)   /* whole ticks: rounded up to the ms */
                want = (want + 999) / 1000 * 1000;
            cr_assert_eq(took, want, "%s case %zu: took %llu us, want %llu", r->name, c,
                         (unsigned long long)took, (unsigned long long)want);
            cr_assert_eq(stvm_delay_being_waited_on(s.vm, s.d), 0);
            cr_assert_eq(stvm_delay_is_expired(s.vm, s.d), 0, "the wait took the signal");
            stvm_stats st = stats_of(s.vm);
            cr_assert_eq(st.delays_scheduled, 1u);
            cr_assert_eq(st.delays_expired, 1u);
            cr_assert_eq(stvm_delay_free(s.vm, s.d), STVM_OK);
            vm_done(s.vm);
        }
    }
}

/* "A Delay can be used again when the current wait has finished" (Delay's comment):
 * three waits on one Delay, each its full length. */
static void wait_thrice(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    uint64_t t = stvm_vm_now_us(vm);
    for (int i = 0; i < 3; i++) {
        GCHECK(s, stvm_delay_wait(vm, s->d) == STVM_OK);
        uint64_t now = stvm_vm_now_us(vm);
        GCHECK(s, now - t == 30000);
        GCHECK(s, stvm_delay_being_waited_on(vm, s->d) == 0);
        GCHECK(s, stvm_delay_is_expired(vm, s->d) == 0);
        t = now;
    }
    s->done = 1;
}

Test(delay_object, reuse_after_expiry)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri])};
        s.d = delay_ms(s.vm, 30);
        spawn(s.vm, 40, "waiter", wait_thrice, &s);
        RUN_OK_GREEN(&s);
        cr_assert_eq(s.done, 1, "%s", REPS[ri].name);
        cr_assert_eq(stats_of(s.vm).delays_expired, 3u);
        vm_done(s.vm);   /* the Delay goes with the VM */
    }
}

/* ---- the questions at each stage (DelayBasicScheduler*TickerTest: testSimpleOneDelay,
 * testForMilliseconds, testMillisecondsToGo) ------------------------------------------ */

static void stages(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    stvm_delay *d = s->d;
    /* made: not waited on, not expired, nothing to go */
    GCHECK(s, stvm_delay_being_waited_on(vm, d) == 0);
    GCHECK(s, stvm_delay_is_expired(vm, d) == 0);
    s->togo[0] = ms_to_go(vm, d);
    /* scheduled: waited on, its whole duration to go */
    GCHECK(s, stvm_delay_schedule(vm, d) == STVM_OK);
    GCHECK(s, stvm_delay_being_waited_on(vm, d) == 1);
    GCHECK(s, stvm_delay_is_expired(vm, d) == 0);
    s->togo[1] = ms_to_go(vm, d);
    s->togo[2] = us_to_go(vm, d);
    /* 60 of 100 ms later: 40 to go */
    GCHECK(s, stvm_delay_wait_ms(vm, 60) == STVM_OK);
    s->togo[3] = ms_to_go(vm, d);
    s->togo[4] = us_to_go(vm, d);
    GCHECK(s, stvm_delay_is_expired(vm, d) == 0);
    /* 1 ms before its time: not yet; at it: expired, no longer waited on */
    GCHECK(s, stvm_delay_wait_ms(vm, 39) == STVM_OK);
    GCHECK(s, stvm_delay_is_expired(vm, d) == 0);
    s->togo[5] = ms_to_go(vm, d);
    GCHECK(s, stvm_delay_wait_ms(vm, 1) == STVM_OK);
    GCHECK(s, stvm_delay_is_expired(vm, d) == 1);
    GCHECK(s, stvm_delay_being_waited_on(vm, d) == 0);
    s->togo[6] = ms_to_go(vm, d);
    /* its signal waits on the semaphore: taken at once */
    uint64_t t = stvm_vm_now_us(vm);
    GCHECK(s, stvm_semaphore_wait(vm, stvm_delay_semaphore(d)) == STVM_OK);
    GCHECK(s, stvm_vm_now_us(vm) == t);
    GCHECK(s, stvm_delay_is_expired(vm, d) == 0);
    s->done = 1;
}

Test(delay_object, is_expired_being_waited_on_and_ms_to_go_at_each_stage)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri])};
        s.d = delay_ms(s.vm, 100);
        spawn(s.vm, 40, "asker", stages, &s);
        RUN_OK_GREEN(&s);
        const char *n = REPS[ri].name;
        cr_assert_eq(s.done, 1, "%s", n);
        cr_assert_eq(s.togo[0], 0, "%s: not scheduled", n);
        cr_assert_eq(s.togo[1], 100, "%s: %lld", n, (long long)s.togo[1]);
        cr_assert_eq(s.togo[2], 100000, "%s: %lld", n, (long long)s.togo[2]);
        cr_assert_eq(s.togo[3], 40, "%s: %lld", n, (long long)s.togo[3]);
        cr_assert_eq(s.togo[4], 40000, "%s: %lld", n, (long long)s.togo[4]);
        cr_assert_eq(s.togo[5], 1, "%s: %lld", n, (long long)s.togo[5]);
        cr_assert_eq(s.togo[6], 0, "%s: expired", n);
        vm_done(s.vm);
    }
}

/* ---- another process schedules and unschedules ----------------------------------------- */

static void wait_on_its_semaphore(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    s->rc = stvm_semaphore_wait(vm, stvm_delay_semaphore(s->d));
    s->t1 = stvm_vm_now_us(vm);
}

static void schedule_it(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    s->t0 = stvm_vm_now_us(vm);
    s->rc2 = stvm_delay_schedule(vm, s->d);
}

Test(delay_object, scheduled_by_another_process_signals_its_semaphore_in_time)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri]), .rc = -999, .rc2 = -999};
        s.d = delay_ms(s.vm, 30);
        spawn(s.vm, 40, "waiter", wait_on_its_semaphore, &s);
        spawn(s.vm, 30, "scheduler", schedule_it, &s);
        RUN_OK_GREEN(&s);
        cr_assert_eq(s.rc2, STVM_OK);
        cr_assert_eq(s.rc, STVM_OK);
        cr_assert_eq(s.t1 - s.t0, 30000u, "%s", REPS[ri].name);
        cr_assert_eq(stvm_delay_free(s.vm, s.d), STVM_OK);
        vm_done(s.vm);
    }
}

/* Delay>>unschedule from another process: the Delay leaves the scheduler and nothing
 * is signalled, so its waiter stays waiting (as DelayTest>>testSemaphoreNoTimeout's
 * process stays unterminated) until someone signals the semaphore. */
static void unschedule_then_release(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    s->stage[0] = stvm_delay_being_waited_on(vm, s->d);
    s->rc2 = stvm_delay_unschedule(vm, s->d);
    s->stage[1] = stvm_delay_being_waited_on(vm, s->d);
    GCHECK(s, stvm_delay_unschedule(vm, s->d) == STVM_OK);   /* again: nothing */
    GCHECK(s, stvm_delay_wait_ms(vm, 100) == STVM_OK);       /* past its time */
    s->stage[2] = gstate(vm, s->victim);
    s->stage[3] = stvm_delay_is_expired(vm, s->d);
    GCHECK(s, stvm_semaphore_signal(vm, stvm_delay_semaphore(s->d)) == STVM_OK);
}

Test(delay_object, unscheduled_by_another_process_leaves_its_waiter_waiting)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri]), .rc = -999, .rc2 = -999};
        s.d = delay_ms(s.vm, 50);
        s.victim = spawn(s.vm, 40, "waiter", wait_once, &s);
        spawn(s.vm, 30, "unscheduler", unschedule_then_release, &s);
        RUN_OK_GREEN(&s);
        const char *n = REPS[ri].name;
        cr_assert_eq(s.stage[0], 1, "%s", n);
        cr_assert_eq(s.rc2, STVM_OK);
        cr_assert_eq(s.stage[1], 0, "%s", n);
        cr_assert_eq(s.stage[2], STVM_PROCESS_WAITING, "%s: the waiter must still wait", n);
        cr_assert_eq(s.stage[3], 0, "%s: never expired", n);
        cr_assert_eq(s.rc, STVM_OK, "%s: woken by the signal", n);
        cr_assert_eq(s.t1 - s.t0, 100000u, "%s", n);
        stvm_stats st = stats_of(s.vm);
        cr_assert_eq(st.delays_unscheduled, 1u, "%s", n);
        cr_assert_eq(st.delays_expired, 1u, "%s: only the 100 ms one", n);
        vm_done(s.vm);
    }
}

/* ---- scheduling twice (DelayTest>>testMultiSchedule, DelayBasicScheduler*TickerTest>>
 * testMultiSchedule; DelayTest>>testMultiProcessWaitOnSameDelay is in
 * test_pharo_delay.c) ---------------------------------------------------------------- */

static void schedule_twice(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    GCHECK(s, stvm_delay_schedule(vm, s->d) == STVM_OK);
    GCHECK(s, stvm_delay_being_waited_on(vm, s->d) == 1);
    s->rc = stvm_delay_schedule(vm, s->d);
    s->rc2 = stvm_delay_wait(vm, s->d);
    GCHECK(s, stvm_delay_being_waited_on(vm, s->d) == 1);   /* the refusals changed nothing */
    /* the scheduler still takes others */
    stvm_delay *other = NULL;
    GCHECK(s, stvm_delay_new_ms(vm, 1000, &other) == STVM_OK);
    GCHECK(s, stvm_delay_schedule(vm, other) == STVM_OK);
    GCHECK(s, stvm_delay_being_waited_on(vm, other) == 1);
    GCHECK(s, stvm_delay_unschedule(vm, other) == STVM_OK);
    GCHECK(s, stvm_delay_free(vm, other) == STVM_OK);
    /* unscheduled, it may be scheduled again */
    GCHECK(s, stvm_delay_unschedule(vm, s->d) == STVM_OK);
    s->rc3 = stvm_delay_schedule(vm, s->d);
    s->t0 = stvm_vm_now_us(vm);
    GCHECK(s, stvm_semaphore_wait(vm, stvm_delay_semaphore(s->d)) == STVM_OK);
    s->t1 = stvm_vm_now_us(vm);
}

Test(delay_object, scheduling_a_scheduled_delay_is_refused)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri]), .rc = -999, .rc2 = -999, .rc3 = -999};
        s.d = delay_ms(s.vm, 1000);
        spawn(s.vm, 40, "scheduler", schedule_twice, &s);
        RUN_OK_GREEN(&s);
        cr_assert_eq(s.rc, STVM_ESTATE, "%s: %s", REPS[ri].name, stvm_err_name(s.rc));
        cr_assert_eq(s.rc2, STVM_ESTATE, "%s: %s", REPS[ri].name, stvm_err_name(s.rc2));
        cr_assert_eq(s.rc3, STVM_OK);
        cr_assert_eq(s.t1 - s.t0, 1000000u);
        vm_done(s.vm);
    }
}

/* Pharo makes a Delay of any length that is not negative (DelayTest>>testBounds); one
 * longer than the scheduler allows is refused when scheduled or waited on, and the
 * refusal changes nothing. */
typedef struct too_long {
    stvm_vm *vm;
    stvm_delay *d[4];
    int rc[8];
    int bad_line;
} too_long;

static void schedules_too_long(stvm_vm *vm, void *arg)
{
    too_long *t = arg;
    for (int i = 0; i < 4; i++) {
        t->rc[2 * i] = stvm_delay_schedule(vm, t->d[i]);
        t->rc[2 * i + 1] = stvm_delay_wait(vm, t->d[i]);
        GCHECK(t, stvm_delay_being_waited_on(vm, t->d[i]) == 0);
    }
}

Test(delay_object, a_delay_too_long_for_the_scheduler_is_made_and_refused_when_scheduled)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        too_long t = {.vm = rep_vm(r)};
        int64_t ms_too_long = is_ms(r) ? 0x10000000 : ((int64_t)1 << 52) / 1000 + 1;
        cr_assert_eq(stvm_delay_new_ms(t.vm, INT64_MAX, &t.d[0]), STVM_OK, "%s", r->name);
        cr_assert_eq(stvm_delay_new_ms(t.vm, ms_too_long, &t.d[1]), STVM_OK);
        cr_assert_eq(stvm_delay_new_us(t.vm, INT64_MAX, &t.d[2]), STVM_OK);
        cr_assert_eq(stvm_delay_new_us(t.vm, ms_too_long * 1000, &t.d[3]), STVM_OK);
        spawn(t.vm, 40, "scheduler", schedules_too_long, &t);
        RUN_OK_GREEN(&t);
        for (int i = 0; i < 8; i++)
            cr_assert_eq(t.rc[i], STVM_ERANGE, "%s: call %d answered %s", r->name, i,
                         stvm_err_name(t.rc[i]));
        for (int i = 0; i < 4; i++)
            cr_assert_eq(stvm_delay_free(t.vm, t.d[i]), STVM_OK);
        vm_done(t.vm);
    }
}

/* A Delay unscheduled while its request still waited for the timing process (a caller
 * at priority 80 queues requests behind itself) kept its link to the request behind it;
 * scheduled again later as the last request, it brought that Delay back into the
 * scheduler, although nobody had scheduled it (found by the model; with a Delay on a
 * process's stack the link pointed into a finished frame). */
typedef struct two {
    stvm_vm *vm;
    stvm_delay *d0, *d1;
    int waited_d1, waited_d0;
    int bad_line;
} two;

static void unschedules_a_queued_request(stvm_vm *vm, void *arg)
{
    two *t = arg;
    GCHECK(t, stvm_delay_schedule(vm, t->d0) == STVM_OK);
    GCHECK(t, stvm_delay_schedule(vm, t->d1) == STVM_OK);   /* queued behind d0 */
    GCHECK(t, stvm_delay_unschedule(vm, t->d0) == STVM_OK);
    GCHECK(t, stvm_yield(vm) == STVM_OK);                    /* the timing process takes d1 */
    GCHECK(t, stvm_delay_unschedule(vm, t->d1) == STVM_OK);
    GCHECK(t, stvm_delay_schedule(vm, t->d0) == STVM_OK);   /* the only request */
    GCHECK(t, stvm_yield(vm) == STVM_OK);
    t->waited_d0 = stvm_delay_being_waited_on(vm, t->d0);
    t->waited_d1 = stvm_delay_being_waited_on(vm, t->d1);
    stvm_delay_unschedule(vm, t->d0);
    stvm_delay_unschedule(vm, t->d1);
}

Test(delay_object, a_request_unscheduled_before_the_timing_process_took_it_brings_nothing_back)
{
    for (int ri = 0; ri < NREPS; ri++) {
        two t = {.vm = rep_vm(&REPS[ri])};
        t.d0 = delay_ms(t.vm, 1000);
        t.d1 = delay_ms(t.vm, 1000);
        spawn(t.vm, STVM_PRIORITY_TIMING, "at80", unschedules_a_queued_request, &t);
        RUN_OK_GREEN(&t);
        cr_assert_eq(t.waited_d0, 1, "%s", REPS[ri].name);
        cr_assert_eq(t.waited_d1, 0, "%s: d1 came back into the scheduler", REPS[ri].name);
        vm_done(t.vm);
    }
}

/* Several processes waiting on one Delay's semaphore: "only one signal is sent when a
 * delay expires" (DelayBasicScheduler>>schedule:), so each expiry wakes one, FIFO. */
typedef struct sharers {
    stvm_vm *vm;
    stvm_delay *d;
    int order[3], n;
    uint64_t at[3];
    int bad_line;
} sharers;

typedef struct sharer {
    sharers *s;
    int tag;
} sharer;

static void share_wait(stvm_vm *vm, void *arg)
{
    sharer *w = arg;
    GCHECK(w->s, stvm_semaphore_wait(vm, stvm_delay_semaphore(w->s->d)) == STVM_OK);
    w->s->at[w->tag] = stvm_vm_now_us(vm);
    w->s->order[w->s->n++] = w->tag;
}

static void share_driver(stvm_vm *vm, void *arg)
{
    sharers *s = arg;
    for (int i = 0; i < 3; i++) {
        GCHECK(s, stvm_delay_schedule(vm, s->d) == STVM_OK);
        GCHECK(s, stvm_delay_wait_ms(vm, 25) == STVM_OK);   /* 5 ms past its expiry */
        GCHECK(s, s->n == i + 1);
    }
}

Test(delay_object, each_expiry_wakes_one_of_the_semaphores_waiters)
{
    for (int ri = 0; ri < NREPS; ri++) {
        sharers s = {.vm = rep_vm(&REPS[ri])};
        s.d = delay_ms(s.vm, 20);
        uint64_t t0 = stvm_vm_now_us(s.vm);
        sharer w[3];
        for (int i = 0; i < 3; i++) {
            w[i] = (sharer){&s, i};
            spawn(s.vm, 40, "sharer", share_wait, &w[i]);
        }
        spawn(s.vm, 30, "driver", share_driver, &s);
        RUN_OK_GREEN(&s);
        cr_assert_eq(s.n, 3);
        for (int i = 0; i < 3; i++) {
            cr_assert_eq(s.order[i], i, "FIFO");
            cr_assert_eq(s.at[i], t0 + (uint64_t)(25 * i + 20) * 1000, "%s: waiter %d",
                         REPS[ri].name, i);
        }
        vm_done(s.vm);
    }
}

/* ---- early exits: terminate, suspend ---------------------------------------------- */

static void terminate_victim(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    s->stage[0] = stvm_delay_being_waited_on(vm, s->d);
    s->stage[1] = stvm_delay_free(vm, s->d);          /* in use: refused */
    GCHECK(s, stvm_process_terminate(vm, s->victim) == STVM_OK);
    s->stage[2] = stvm_delay_being_waited_on(vm, s->d);
    s->stage[3] = stvm_delay_free(vm, s->d);
}

Test(delay_object, terminating_a_waiter_unschedules_its_delay)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri]), .rc = -999};
        s.d = delay_ms(s.vm, 100);
        uint64_t t0 = stvm_vm_now_us(s.vm);
        s.victim = spawn(s.vm, 40, "waiter", wait_once, &s);
        spawn(s.vm, 30, "killer", terminate_victim, &s);
        RUN_OK_GREEN(&s);
        cr_assert_eq(s.rc, -999, "never returns");
        cr_assert_eq(s.stage[0], 1);
        cr_assert_eq(s.stage[1], STVM_EINUSE);
        cr_assert_eq(s.stage[2], 0);
        cr_assert_eq(s.stage[3], STVM_OK, "freed once nobody uses it");
        cr_assert_eq(stvm_vm_now_us(s.vm), t0);
        stvm_stats st = stats_of(s.vm);
        cr_assert_eq(st.delays_unscheduled, 1u);
        cr_assert_eq(st.delays_expired, 0u);
        stvm_process_release(s.vm, s.victim);
        vm_done(s.vm);
    }
}

static void suspend_resume_victim(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    GCHECK(s, stvm_process_suspend(vm, s->victim) == STVM_OK);
    s->stage[0] = stvm_delay_being_waited_on(vm, s->d);   /* it has not run since */
    GCHECK(s, stvm_process_resume(vm, s->victim) == STVM_OK);
    s->stage[1] = stvm_delay_being_waited_on(vm, s->d);
}

Test(delay_object, a_wait_cut_short_by_a_suspension_unschedules_its_delay)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri]), .rc = -999};
        s.d = delay_ms(s.vm, 100);
        s.victim = spawn(s.vm, 40, "waiter", wait_once, &s);
        spawn(s.vm, 30, "suspender", suspend_resume_victim, &s);
        RUN_OK_GREEN(&s);
        cr_assert_eq(s.rc, STVM_ESTATE, "%s", stvm_err_name(s.rc));
        cr_assert_eq(s.stage[0], 1);
        cr_assert_eq(s.stage[1], 0, "the resumed waiter unscheduled it");
        cr_assert_eq(s.t1, s.t0, "it did not wait for the Delay");
        stvm_process_release(s.vm, s.victim);
        cr_assert_eq(stvm_delay_free(s.vm, s.d), STVM_OK);
        vm_done(s.vm);
    }
}

/* ---- the timeout semaphore (DelayTest>>testSemaphoreTimeout, testSemaphoreNoTimeout) */

static void timeout_fires(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    s->t0 = stvm_vm_now_us(vm);
    s->rc = stvm_delay_timeout_semaphore_ms(vm, s->sem, s->amount, &s->d);
    GCHECK(s, s->rc == STVM_OK);
    GCHECK(s, stvm_delay_semaphore(s->d) == s->sem);
    GCHECK(s, stvm_semaphore_wait(vm, s->sem) == STVM_OK);
    s->t1 = stvm_vm_now_us(vm);
    GCHECK(s, stvm_delay_wait_ms(vm, 200) == STVM_OK);
    s->stage[0] = (int)stvm_semaphore_excess(vm, s->sem);   /* signalled once only */
    s->stage[1] = stvm_delay_being_waited_on(vm, s->d);
    s->stage[2] = stvm_delay_free(vm, s->d);
    s->stage[3] = stvm_semaphore_free(vm, s->sem);
}

Test(delay_object, timeout_semaphore_fires_once_at_its_time)
{
    for (int ri = 0; ri < NREPS; ri++) {
        for (int64_t ms = 0; ms <= 20; ms += 20) {   /* 0: testSemaphoreTimeout */
            scen s = {.vm = rep_vm(&REPS[ri]), .amount = ms, .rc = -999};
            s.sem = sem_make(s.vm);
            spawn(s.vm, STVM_PRIORITY_HIGH_IO, "timed", timeout_fires, &s);
            RUN_OK_GREEN(&s);
            cr_assert_eq(s.t1 - s.t0, (uint64_t)ms * 1000, "%s: %lld ms", REPS[ri].name,
                         (long long)ms);
            cr_assert_eq(s.stage[0], 0);
            cr_assert_eq(s.stage[1], 0);
            cr_assert_eq(s.stage[2], STVM_OK);
            cr_assert_eq(s.stage[3], STVM_OK, "the semaphore is free once the Delay is");
            vm_done(s.vm);
        }
    }
}

static void timeout_waiter(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    GCHECK(s, stvm_delay_timeout_semaphore_ms(vm, s->sem, 1000, &s->d) == STVM_OK);
    s->rc = stvm_semaphore_wait(vm, s->sem);
    s->t1 = stvm_vm_now_us(vm);
}

static void timeout_canceller(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    s->t0 = stvm_vm_now_us(vm);
    GCHECK(s, stvm_delay_being_waited_on(vm, s->d) == 1);
    GCHECK(s, stvm_delay_unschedule(vm, s->d) == STVM_OK);
    s->stage[0] = stvm_semaphore_free(vm, s->sem);      /* the Delay still refers to it */
    GCHECK(s, stvm_delay_wait_ms(vm, 2000) == STVM_OK);
    s->stage[1] = gstate(vm, s->victim);                 /* not signalled by the Delay */
    GCHECK(s, stvm_semaphore_signal(vm, s->sem) == STVM_OK);
    GCHECK(s, stvm_delay_free(vm, s->d) == STVM_OK);
}

Test(delay_object, timeout_semaphore_can_be_unscheduled)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri]), .rc = -999};
        s.sem = sem_make(s.vm);
        s.victim = spawn(s.vm, STVM_PRIORITY_HIGH_IO, "waiter", timeout_waiter, &s);
        spawn(s.vm, 40, "canceller", timeout_canceller, &s);
        RUN_OK_GREEN(&s);
        cr_assert_eq(s.stage[0], STVM_EINUSE);
        cr_assert_eq(s.stage[1], STVM_PROCESS_WAITING);
        cr_assert_eq(s.rc, STVM_OK);
        cr_assert_eq(s.t1 - s.t0, 2000000u, "woken by the signal, not at 1000 ms");
        cr_assert_eq(stats_of(s.vm).delays_unscheduled, 1u);
        cr_assert_eq(stvm_semaphore_free(s.vm, s.sem), STVM_OK);
        vm_done(s.vm);
    }
}

/* ---- freeing -------------------------------------------------------------------------- */

static void free_refusals(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    stvm_semaphore *sem = stvm_delay_semaphore(s->d);
    s->stage[0] = stvm_semaphore_free(vm, sem);   /* a Delay's semaphore */
    GCHECK(s, stvm_delay_schedule(vm, s->d) == STVM_OK);
    s->stage[1] = stvm_delay_free(vm, s->d);      /* scheduled */
    GCHECK(s, stvm_delay_unschedule(vm, s->d) == STVM_OK);
    s->stage[2] = stvm_delay_free(vm, s->d);      /* its semaphore is waited on */
    int idx = 0;
    GCHECK(s, stvm_semaphore_signal(vm, sem) == STVM_OK);   /* the waiter goes */
    GCHECK(s, stvm_external_register(vm, sem, &idx) == STVM_OK);
    s->stage[3] = stvm_delay_free(vm, s->d);      /* registered as external */
    GCHECK(s, stvm_external_unregister(vm, idx) == STVM_OK);
    s->stage[4] = stvm_delay_free(vm, s->d);
}

Test(delay_object, free_is_refused_while_in_use)
{
    scen s = {.vm = rep_vm(&US61), .rc = -999};
    s.d = delay_ms(s.vm, 10);
    spawn(s.vm, 40, "waiter", wait_on_its_semaphore, &s);
    spawn(s.vm, 30, "freer", free_refusals, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.stage[0], STVM_EINUSE);
    cr_assert_eq(s.stage[1], STVM_EINUSE);
    cr_assert_eq(s.stage[2], STVM_EINUSE);
    cr_assert_eq(s.stage[3], STVM_EINUSE);
    cr_assert_eq(s.stage[4], STVM_OK);
    cr_assert_eq(s.rc, STVM_OK);
    vm_done(s.vm);
}

/* What is left at stvm_vm_free goes with the VM (the sanitized run checks for leaks):
 * a scheduled Delay, one a process waits on, a timeout Delay, an idle one. */
static void leave_behind(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    stvm_delay *a = NULL, *b = NULL;
    GCHECK(s, stvm_delay_new_us(vm, 5000000, &a) == STVM_OK);
    GCHECK(s, stvm_delay_schedule(vm, a) == STVM_OK);
    GCHECK(s, stvm_delay_new_ms(vm, 7, &b) == STVM_OK);
    GCHECK(s, stvm_delay_timeout_semaphore_ms(vm, s->sem, 9000, &s->d) == STVM_OK);
    stvm_stop(vm);
    stvm_checkpoint(vm);
    s->done = 1;
}

static void long_wait(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    stvm_delay *d = NULL;
    if (stvm_delay_new_ms(vm, 60000, &d) == STVM_OK)
        s->rc = stvm_delay_wait(vm, d);
}

Test(delay_object, delays_left_at_vm_free_are_freed_with_it)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri]), .rc = -999};
        s.sem = sem_make(s.vm);
        delay_ms(s.vm, 3);   /* never used */
        spawn(s.vm, 41, "long", long_wait, &s);
        spawn(s.vm, 40, "leaver", leave_behind, &s);
        cr_assert_eq(stvm_run(s.vm), STVM_ESTOPPED);
        ASSERT_GREEN_OK(&s);
        cr_assert_eq(s.rc, -999, "still waiting");
        stvm_vm_free(s.vm);
    }
}

/* ---- the trace --------------------------------------------------------------------------- */

static void traced_fn(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    GCHECK(s, stvm_delay_schedule(vm, s->d) == STVM_OK);   /* no waiter: process 0 */
    GCHECK(s, stvm_delay_unschedule(vm, s->d) == STVM_OK);
    GCHECK(s, stvm_delay_wait(vm, s->d) == STVM_OK);       /* the waiter: this process */
}

Test(delay_object, trace_names_the_delay_and_its_waiter)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm(&REPS[ri])};
        s.d = delay_ms(s.vm, 5);
        cr_assert_eq(stvm_trace_start(s.vm, 4096), STVM_OK);
        stvm_process *p = spawn(s.vm, 40, "traced", traced_fn, &s);
        stvm_process_info info;
        cr_assert_eq(stvm_process_get_info(s.vm, p, &info), STVM_OK);
        RUN_OK_GREEN(&s);
        int want[][2] = {{STVM_TRACE_DELAY_SCHEDULED, 0},
                         {STVM_TRACE_DELAY_CANCELLED, 0},
                         {STVM_TRACE_DELAY_SCHEDULED, 1},
                         {STVM_TRACE_DELAY_EXPIRED, 1}};
        int k = 0;
        int64_t n = stvm_trace_count(s.vm);
        for (int64_t i = 0; i < n; i++) {
            stvm_trace_event e;
            cr_assert_eq(stvm_trace_get(s.vm, (size_t)i, &e), STVM_OK);
            if (e.kind != STVM_TRACE_DELAY_SCHEDULED && e.kind != STVM_TRACE_DELAY_EXPIRED &&
                e.kind != STVM_TRACE_DELAY_CANCELLED)
                continue;
            if (e.object != (uint64_t)(uintptr_t)s.d)
                continue;   /* the warm-up of nothing: only this Delay's */
            cr_assert_lt(k, 4, "%s: too many Delay events", REPS[ri].name);
            cr_assert_eq(e.kind, want[k][0], "%s: event %d", REPS[ri].name, k);
            cr_assert_eq(e.process, want[k][1] ? info.id : 0, "%s: event %d", REPS[ri].name, k);
            k++;
        }
        cr_assert_eq(k, 4, "%s: %d Delay events", REPS[ri].name, k);
        stvm_process_release(s.vm, p);
        vm_done(s.vm);
    }
}

/* ---- bad input on every function ------------------------------------------------------ */

typedef struct green_bad {
    stvm_vm *vm, *other;
    stvm_delay *d, *foreign;
    stvm_semaphore *sem;
    int bad_line;
} green_bad;

static void bad_in_process(stvm_vm *vm, void *arg)
{
    green_bad *g = arg;
    stvm_delay *fake = (stvm_delay *)g->sem, *out = NULL;
    stvm_stats before, after;
    stvm_vm_get_stats(vm, &before);
    GCHECK(g, stvm_delay_wait(NULL, g->d) == STVM_EINVAL);
    GCHECK(g, stvm_delay_wait(vm, NULL) == STVM_EINVAL);
    GCHECK(g, stvm_delay_wait(vm, fake) == STVM_EINVAL);
    GCHECK(g, stvm_delay_wait(vm, g->foreign) == STVM_EINVAL);
    GCHECK(g, stvm_delay_schedule(NULL, g->d) == STVM_EINVAL);
    GCHECK(g, stvm_delay_schedule(vm, NULL) == STVM_EINVAL);
    GCHECK(g, stvm_delay_schedule(vm, fake) == STVM_EINVAL);
    GCHECK(g, stvm_delay_schedule(vm, g->foreign) == STVM_EINVAL);
    GCHECK(g, stvm_delay_unschedule(NULL, g->d) == STVM_EINVAL);
    GCHECK(g, stvm_delay_unschedule(vm, NULL) == STVM_EINVAL);
    GCHECK(g, stvm_delay_unschedule(vm, fake) == STVM_EINVAL);
    GCHECK(g, stvm_delay_unschedule(vm, g->foreign) == STVM_EINVAL);
    GCHECK(g, stvm_delay_timeout_semaphore_ms(NULL, g->sem, 1, &out) == STVM_EINVAL);
    GCHECK(g, stvm_delay_timeout_semaphore_ms(vm, NULL, 1, &out) == STVM_EINVAL);
    GCHECK(g, stvm_delay_timeout_semaphore_ms(vm, (stvm_semaphore *)g->d, 1, &out) == STVM_EINVAL);
    GCHECK(g, stvm_delay_timeout_semaphore_ms(vm, g->sem, 1, NULL) == STVM_EINVAL);
    GCHECK(g, stvm_delay_timeout_semaphore_ms(vm, g->sem, -1, &out) == STVM_EINVAL);
    GCHECK(g, stvm_delay_timeout_semaphore_ms(vm, g->sem, INT64_MAX, &out) == STVM_ERANGE);
    GCHECK(g, out == NULL);
    stvm_vm_get_stats(vm, &after);
    GCHECK(g, after.delays_scheduled == before.delays_scheduled);
    GCHECK(g, after.objects_allocated == before.objects_allocated);
    GCHECK(g, stvm_delay_being_waited_on(vm, g->d) == 0);
}

Test(delay_object, bad_input_on_every_function)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        green_bad g = {.vm = rep_vm(r), .other = rep_vm(r)};
        stvm_vm *vm = g.vm;
        g.d = delay_ms(vm, 10);
        g.foreign = delay_ms(g.other, 10);
        g.sem = sem_make(vm);
        stvm_delay *fake = (stvm_delay *)g.sem, *out = NULL;
        int64_t v = 77;
        stvm_stats before = stats_of(vm);
        /* making */
        cr_assert_eq(stvm_delay_new_ms(NULL, 1, &out), STVM_EINVAL);
        cr_assert_eq(stvm_delay_new_ms(vm, 1, NULL), STVM_EINVAL);
        cr_assert_eq(stvm_delay_new_ms(vm, -1, &out), STVM_EINVAL);
        cr_assert_eq(stvm_delay_new_ms(vm, INT64_MIN, &out), STVM_EINVAL);
        cr_assert_eq(stvm_delay_new_us(NULL, 1, &out), STVM_EINVAL);
        cr_assert_eq(stvm_delay_new_us(vm, 1, NULL), STVM_EINVAL);
        cr_assert_eq(stvm_delay_new_us(vm, -1, &out), STVM_EINVAL);
        cr_assert_null(out);
        /* freeing, asking */
        cr_assert_eq(stvm_delay_free(NULL, g.d), STVM_EINVAL);
        cr_assert_eq(stvm_delay_free(vm, NULL), STVM_EINVAL);
        cr_assert_eq(stvm_delay_free(vm, fake), STVM_EINVAL);
        cr_assert_eq(stvm_delay_free(vm, g.foreign), STVM_EINVAL);
        cr_assert_eq(stvm_delay_is_expired(NULL, g.d), STVM_EINVAL);
        cr_assert_eq(stvm_delay_is_expired(vm, NULL), STVM_EINVAL);
        cr_assert_eq(stvm_delay_is_expired(vm, fake), STVM_EINVAL);
        cr_assert_eq(stvm_delay_is_expired(vm, g.foreign), STVM_EINVAL);
        cr_assert_eq(stvm_delay_being_waited_on(NULL, g.d), STVM_EINVAL);
        cr_assert_eq(stvm_delay_being_waited_on(vm, NULL), STVM_EINVAL);
        cr_assert_eq(stvm_delay_being_waited_on(vm, fake), STVM_EINVAL);
        cr_assert_eq(stvm_delay_being_waited_on(vm, g.foreign), STVM_EINVAL);
        cr_assert_eq(stvm_delay_ms_to_go(NULL, g.d, &v), STVM_EINVAL);
        cr_assert_eq(stvm_delay_ms_to_go(vm, NULL, &v), STVM_EINVAL);
        cr_assert_eq(stvm_delay_ms_to_go(vm, fake, &v), STVM_EINVAL);
        cr_assert_eq(stvm_delay_ms_to_go(vm, g.foreign, &v), STVM_EINVAL);
        cr_assert_eq(stvm_delay_ms_to_go(vm, g.d, NULL), STVM_EINVAL);
        cr_assert_eq(stvm_delay_us_to_go(NULL, g.d, &v), STVM_EINVAL);
        cr_assert_eq(stvm_delay_us_to_go(vm, NULL, &v), STVM_EINVAL);
        cr_assert_eq(stvm_delay_us_to_go(vm, fake, &v), STVM_EINVAL);
        cr_assert_eq(stvm_delay_us_to_go(vm, g.foreign, &v), STVM_EINVAL);
        cr_assert_eq(stvm_delay_us_to_go(vm, g.d, NULL), STVM_EINVAL);
        cr_assert_eq(v, 77, "a failed call writes nothing");
        cr_assert_null(stvm_delay_semaphore(NULL));
        cr_assert_null(stvm_delay_semaphore(fake));
        cr_assert_not_null(stvm_delay_semaphore(g.d));
        cr_assert_str_eq(stvm_oop_class_name(vm, (stvm_oop)g.d), "Delay");
        cr_assert_eq(stvm_oop_release(vm, (stvm_oop)g.d), STVM_EINVAL);
        /* what needs a process, from the embedding thread */
        cr_assert_eq(stvm_delay_wait(vm, g.d), STVM_ENOTPROC);
        cr_assert_eq(stvm_delay_schedule(vm, g.d), STVM_ENOTPROC);
        cr_assert_eq(stvm_delay_unschedule(vm, g.d), STVM_ENOTPROC);
        cr_assert_eq(stvm_delay_timeout_semaphore_ms(vm, g.sem, 1, &out), STVM_ENOTPROC);
        cr_assert_null(out);
        stvm_stats after = stats_of(vm);
        cr_assert_eq(after.objects_allocated, before.objects_allocated, "nothing was made");
        cr_assert_eq(after.delays_scheduled, 0u);
        /* and from a process */
        spawn(vm, 40, "bad", bad_in_process, &g);
        RUN_OK_GREEN(&g);
        /* the clock's end: a Delay that would end past it is made, but not scheduled */
        vm_done(g.other);
        vm_done(vm);
    }
}

static void schedule_at_the_end(stvm_vm *vm, void *arg)
{
    scen *s = arg;
    s->rc = stvm_delay_schedule(vm, s->d);
    s->rc2 = stvm_delay_wait(vm, s->d);
    s->stage[0] = stvm_delay_being_waited_on(vm, s->d);
}

Test(delay_object, a_delay_ending_past_the_clocks_end_is_refused_when_scheduled)
{
    for (int ri = 0; ri < NREPS; ri++) {
        scen s = {.vm = rep_vm_at(&REPS[ri], ((uint64_t)1 << 62) - 500, 0), .rc = -999};
        s.d = delay_ms(s.vm, 1);
        spawn(s.vm, 40, "late", schedule_at_the_end, &s);
        RUN_OK_GREEN(&s);
        cr_assert_eq(s.rc, STVM_ERANGE, "%s", stvm_err_name(s.rc));
        cr_assert_eq(s.rc2, STVM_ERANGE, "%s", stvm_err_name(s.rc2));
        cr_assert_eq(s.stage[0], 0);
        cr_assert_eq(stvm_delay_free(s.vm, s.d), STVM_OK);
        vm_done(s.vm);
    }
}
