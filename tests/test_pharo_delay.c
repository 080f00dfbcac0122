/*
 * Pharo's DelayTest re-expressed against stvm's public API (suite `DelayTest`, one test
 * per Pharo selector). The test method's body runs in a green process at
 * STVM_PRIORITY_USER_SCHEDULING (the runner's priority in Pharo) named after the
 * selector; what Pharo asserts there is recorded and asserted by the host after
 * stvm_run. Every test runs in the four integer/clock representations of helpers.h
 * (REPS) on the simulated clock, so the Delays take no wall-clock time.
 *
 * Every test method DelayTest has had (pharo-project/pharo: src/Kernel-Tests/
 * DelayTest.class.st, the two timeout-semaphore tests moved in 2018 to
 * src/Kernel-Tests-Extended/DelayTest.extension.st and in 2024 to
 * src/Kernel-Extended-Tests; the same five selectors in the older filetree trees,
 * src/Kernel-Tests.package and pharo-core's Kernel-Tests.package, none removed):
 *
 *   testBounds                       expressed fully
 *   testMultiProcessWaitOnSameDelay  expressed fully (moved here from the delay_object
 *                                    suite, where it was its exact duplicate)
 *   testMultiSchedule                expressed fully (delay_object's
 *                                    scheduling_a_scheduled_delay_is_refused checks more
 *                                    around the same refusal)
 *   testSemaphoreNoTimeout           expressed fully (delay_object's
 *                                    timeout_semaphore_can_be_unscheduled checks the
 *                                    same from a lower process, and the times)
 *   testSemaphoreTimeout             expressed fully (delay_object's
 *                                    timeout_semaphore_fires_once_at_its_time covers
 *                                    0 and 20 ms and the single signal)
 *
 * Pharo's `should: [...] raise: Error` is an stvm error code: EINVAL for a negative
 * duration, ESTATE for a Delay that is already scheduled.
 */
#include <stdint.h>

#include "helpers.h"

TestSuite(DelayTest, .timeout = 30);

#define TEST_PRIORITY STVM_PRIORITY_USER_SCHEDULING

/* The test method's own process, at the runner's priority, named after the selector. */
static void run_test_method(stvm_vm *vm, const char *selector, stvm_fn fn, void *arg)
{
    spawn(vm, TEST_PRIORITY, selector, fn, arg);
    run_ok(vm);
}

/* SmallInteger maxVal of a VM with r's SmallIntegers. */
static int64_t smallint_max(const rep *r)
{
    return ((int64_t)1 << (r->bits - 1)) - 1;
}

/* ---- testBounds ------------------------------------------------------------------ */

typedef struct bounds_case {
    stvm_vm *vm;
    const rep *r;
    int negative_rc;          /* Delay forMilliseconds: -1 */
    int half_rc;              /* Delay forMilliseconds: SmallInteger maxVal // 2 + 1 */
    int over_rc;              /* Delay forMilliseconds: SmallInteger maxVal + 1 */
    stvm_delay *negative, *half, *over;
    int pi_wait_rc;           /* (Delay forMilliseconds: Float pi) wait */
    uint64_t pi_took_us;
    int bad_line;
} bounds_case;

static void bounds(stvm_vm *vm, void *arg)
{
    bounds_case *c = arg;
    int64_t max = smallint_max(c->r);
    c->negative_rc = stvm_delay_new_ms(vm, -1, &c->negative);
    c->half_rc = stvm_delay_new_ms(vm, max / 2 + 1, &c->half);
    c->over_rc = stvm_delay_new_ms(vm, max + 1, &c->over);
    /* Pharo keeps `milliseconds asInteger`: pi truncates to 3. */
    stvm_delay *pi = NULL;
    GCHECK(c, stvm_delay_new_ms(vm, 3, &pi) == STVM_OK);
    uint64_t t0 = stvm_vm_now_us(vm);
    c->pi_wait_rc = stvm_delay_wait(vm, pi);
    c->pi_took_us = stvm_vm_now_us(vm) - t0;
    GCHECK(c, stvm_delay_free(vm, pi) == STVM_OK);
}

/* DelayTest>>testBounds: a negative duration is refused; a Delay of half SmallInteger
 * maxVal plus one ms and one of maxVal + 1 ms can be made (Pharo checks only the
 * sign, and so does stvm: the scheduler refuses them only if they are scheduled); a
 * Delay of pi ms waits 3 ms. */
Test(DelayTest, testBounds)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const rep *r = &REPS[ri];
        bounds_case c = {.vm = rep_vm(r), .r = r, .negative_rc = -999, .half_rc = -999,
                         .over_rc = -999, .pi_wait_rc = -999};
        run_test_method(c.vm, "testBounds", bounds, &c);
        ASSERT_GREEN_OK(&c);
        cr_assert_eq(c.negative_rc, STVM_EINVAL, "%s: %s", r->name,
                     stvm_err_name(c.negative_rc));
        cr_assert_null(c.negative);
        cr_assert_eq(c.half_rc, STVM_OK, "%s: maxVal // 2 + 1 ms: %s", r->name,
                     stvm_err_name(c.half_rc));
        cr_assert_eq(c.over_rc, STVM_OK, "%s: maxVal + 1 ms: %s", r->name,
                     stvm_err_name(c.over_rc));
        cr_assert_eq(stvm_delay_being_waited_on(c.vm, c.half), 0);
        cr_assert_eq(stvm_delay_free(c.vm, c.half), STVM_OK);
        cr_assert_eq(stvm_delay_free(c.vm, c.over), STVM_OK);
        cr_assert_eq(c.pi_wait_rc, STVM_OK, "%s: %s", r->name, stvm_err_name(c.pi_wait_rc));
        cr_assert_eq(c.pi_took_us, 3000u, "%s: pi ms took %llu us", r->name,
                     (unsigned long long)c.pi_took_us);
        vm_done(c.vm);
    }
}

/* ---- testMultiProcessWaitOnSameDelay ------------------------------------------------ */

typedef struct multi_wait {
    stvm_vm *vm;
    stvm_delay *d;
    stvm_process *p1, *p2;
    int p1_rc, p2_rc;
    bool was_run;
    int waited_on_before, waited_on_after;
    int bad_line;
} multi_wait;

static void p1_waits(stvm_vm *vm, void *arg)
{
    multi_wait *m = arg;
    m->p1_rc = stvm_delay_wait(vm, m->d);
}

static void p2_waits_too(stvm_vm *vm, void *arg)
{
    multi_wait *m = arg;
    m->p2_rc = stvm_delay_wait(vm, m->d);
    m->was_run = true;
}

static void multi_process_wait(stvm_vm *vm, void *arg)
{
    multi_wait *m = arg;
    GCHECK(m, stvm_spawn(vm, TEST_PRIORITY + 1, "p1", p1_waits, m, &m->p1) == STVM_OK);
    GCHECK(m, stvm_spawn(vm, TEST_PRIORITY + 1, "p2", p2_waits_too, m, &m->p2) == STVM_OK);
    m->waited_on_before = stvm_delay_being_waited_on(vm, m->d);
    GCHECK(m, stvm_process_terminate(vm, m->p1) == STVM_OK);
    GCHECK(m, stvm_process_terminate(vm, m->p2) == STVM_OK);   /* finished: a no-op */
    m->waited_on_after = stvm_delay_being_waited_on(vm, m->d);
    stvm_process_release(vm, m->p1);
    stvm_process_release(vm, m->p2);
}

/* DelayTest>>testMultiProcessWaitOnSameDelay: while one process waits on a Delay of a
 * second, a second process's wait on the same Delay is refused at once and comes back
 * (an error in Pharo, ESTATE here); terminating the first unschedules the Delay, so
 * nothing is left to wait for. */
Test(DelayTest, testMultiProcessWaitOnSameDelay)
{
    for (int ri = 0; ri < NREPS; ri++) {
        multi_wait m = {.vm = rep_vm(&REPS[ri]), .p1_rc = -999, .p2_rc = -999};
        cr_assert_eq(stvm_delay_new_ms(m.vm, 1000, &m.d), STVM_OK);
        uint64_t t0 = stvm_vm_now_us(m.vm);
        run_test_method(m.vm, "testMultiProcessWaitOnSameDelay", multi_process_wait, &m);
        ASSERT_GREEN_OK(&m);
        const char *n = REPS[ri].name;
        cr_assert(m.was_run, "%s: the second wait must come back", n);
        cr_assert_eq(m.p2_rc, STVM_ESTATE, "%s: %s", n, stvm_err_name(m.p2_rc));
        cr_assert_eq(m.p1_rc, -999, "%s: the terminated waiter never returns", n);
        cr_assert_eq(m.waited_on_before, 1, "%s", n);
        cr_assert_eq(m.waited_on_after, 0, "%s: terminating its waiter unschedules it", n);
        cr_assert_eq(stvm_vm_now_us(m.vm), t0, "%s: nothing was left to wait for", n);
        cr_assert_eq(stvm_delay_free(m.vm, m.d), STVM_OK);
        vm_done(m.vm);
    }
}

/* ---- testMultiSchedule ------------------------------------------------------------- */

typedef struct multi_schedule {
    stvm_vm *vm;
    stvm_delay *d;
    int first_rc, second_rc;
    int waited_on_after_refusal;
    int bad_line;
} multi_schedule;

static void schedule_twice(stvm_vm *vm, void *arg)
{
    multi_schedule *m = arg;
    m->first_rc = stvm_delay_schedule(vm, m->d);
    m->second_rc = stvm_delay_schedule(vm, m->d);
    m->waited_on_after_refusal = stvm_delay_being_waited_on(vm, m->d);
    GCHECK(m, stvm_delay_unschedule(vm, m->d) == STVM_OK);   /* Pharo leaves it */
}

/* DelayTest>>testMultiSchedule: a Delay of a second scheduled once cannot be scheduled
 * again while it is (an error in Pharo, ESTATE here), and the refusal leaves it
 * scheduled. */
Test(DelayTest, testMultiSchedule)
{
    for (int ri = 0; ri < NREPS; ri++) {
        multi_schedule m = {.vm = rep_vm(&REPS[ri]), .first_rc = -999, .second_rc = -999};
        cr_assert_eq(stvm_delay_new_ms(m.vm, 1000, &m.d), STVM_OK);
        run_test_method(m.vm, "testMultiSchedule", schedule_twice, &m);
        ASSERT_GREEN_OK(&m);
        cr_assert_eq(m.first_rc, STVM_OK, "%s", REPS[ri].name);
        cr_assert_eq(m.second_rc, STVM_ESTATE, "%s: %s", REPS[ri].name,
                     stvm_err_name(m.second_rc));
        cr_assert_eq(m.waited_on_after_refusal, 1, "%s", REPS[ri].name);
        cr_assert_eq(stats_of(m.vm).delays_scheduled, 1u, "%s", REPS[ri].name);
        cr_assert_eq(stvm_delay_free(m.vm, m.d), STVM_OK);
        vm_done(m.vm);
    }
}

/* ---- testSemaphoreNoTimeout, testSemaphoreTimeout ------------------------------------ */

typedef struct timeout_case {
    stvm_vm *vm;
    stvm_semaphore *sem;
    int64_t after_ms;
    stvm_delay *delay;        /* set by the process */
    stvm_process *process;
    int timeout_rc, wait_rc;
    bool process_done;
    stvm_process_state state_before_signal, state_after_signal;
    uint64_t t0, t_done;
    int bad_line;
} timeout_case;

/* [delay := Delay timeoutSemaphore: sem afterMSecs: n. sem wait] */
static void timeout_then_wait(stvm_vm *vm, void *arg)
{
    timeout_case *c = arg;
    c->timeout_rc = stvm_delay_timeout_semaphore_ms(vm, c->sem, c->after_ms, &c->delay);
    c->wait_rc = stvm_semaphore_wait(vm, c->sem);
    c->t_done = stvm_vm_now_us(vm);
    c->process_done = true;
}

static void no_timeout(stvm_vm *vm, void *arg)
{
    timeout_case *c = arg;
    c->t0 = stvm_vm_now_us(vm);
    /* newProcess, priority: highIOPriority, resume: it runs at once, up to its wait */
    GCHECK(c, stvm_spawn(vm, STVM_PRIORITY_HIGH_IO, "timeout", timeout_then_wait, c,
                         &c->process) == STVM_OK);
    GCHECK(c, c->delay != NULL);
    if (c->delay)
        GCHECK(c, stvm_delay_unschedule(vm, c->delay) == STVM_OK);
    c->state_before_signal = gstate(vm, c->process);
    /* the ensure: block */
    GCHECK(c, stvm_semaphore_signal(vm, c->sem) == STVM_OK);
    c->state_after_signal = gstate(vm, c->process);
}

/* DelayTest>>testSemaphoreNoTimeout: a high-priority process makes a timeout Delay of a
 * second on a semaphore and waits on it; the test unschedules that Delay, and the
 * process is not finished (unscheduling signals nothing); the signal of the ensure:
 * block then lets it finish at once. */
Test(DelayTest, testSemaphoreNoTimeout)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const char *n = REPS[ri].name;
        timeout_case c = {.vm = rep_vm(&REPS[ri]), .after_ms = 1000, .timeout_rc = -999,
                          .wait_rc = -999};
        c.sem = sem_make(c.vm);
        run_test_method(c.vm, "testSemaphoreNoTimeout", no_timeout, &c);
        ASSERT_GREEN_OK(&c);
        cr_assert_eq(c.timeout_rc, STVM_OK, "%s: %s", n, stvm_err_name(c.timeout_rc));
        cr_assert_eq(c.state_before_signal, STVM_PROCESS_WAITING, "%s: it must still wait", n);
        cr_assert_eq(c.state_after_signal, STVM_PROCESS_TERMINATED, "%s", n);
        cr_assert_eq(c.wait_rc, STVM_OK, "%s", n);
        cr_assert_eq(c.t_done, c.t0, "%s: woken by the signal, not by the Delay", n);
        stvm_stats st = stats_of(c.vm);
        cr_assert_eq(st.delays_unscheduled, 1u, "%s", n);
        cr_assert_eq(st.delays_expired, 0u, "%s", n);
        cr_assert_eq(stvm_delay_free(c.vm, c.delay), STVM_OK);
        cr_assert_eq(stvm_semaphore_free(c.vm, c.sem), STVM_OK);
        stvm_process_release(c.vm, c.process);
        vm_done(c.vm);
    }
}

static void zero_timeout(stvm_vm *vm, void *arg)
{
    timeout_case *c = arg;
    c->t0 = stvm_vm_now_us(vm);
    GCHECK(c, stvm_spawn(vm, STVM_PRIORITY_HIGH_IO, "timeout", timeout_then_wait, c,
                         &c->process) == STVM_OK);
    c->state_before_signal = gstate(vm, c->process);   /* Pharo's assert */
    GCHECK(c, stvm_semaphore_signal(vm, c->sem) == STVM_OK);   /* the ensure: block */
}

/* DelayTest>>testSemaphoreTimeout: a Delay made by timeoutSemaphore:afterMSecs: signals
 * the semaphore it was given (Squeak bug 6834): with 0 ms, a high-priority process that
 * makes one and waits on that semaphore has finished by the time its resume returns. */
Test(DelayTest, testSemaphoreTimeout)
{
    for (int ri = 0; ri < NREPS; ri++) {
        const char *n = REPS[ri].name;
        timeout_case c = {.vm = rep_vm(&REPS[ri]), .after_ms = 0, .timeout_rc = -999,
                          .wait_rc = -999};
        c.sem = sem_make(c.vm);
        run_test_method(c.vm, "testSemaphoreTimeout", zero_timeout, &c);
        ASSERT_GREEN_OK(&c);
        cr_assert_eq(c.timeout_rc, STVM_OK, "%s: %s", n, stvm_err_name(c.timeout_rc));
        cr_assert_eq(c.state_before_signal, STVM_PROCESS_TERMINATED,
                     "%s: the process must have finished (state %d)", n, c.state_before_signal);
        cr_assert_eq(c.wait_rc, STVM_OK, "%s", n);
        cr_assert_eq(c.t_done, c.t0, "%s", n);
        cr_assert_eq(stvm_semaphore_excess(c.vm, c.sem), 1, "%s: the ensure: signal", n);
        cr_assert_eq(stats_of(c.vm).delays_expired, 1u, "%s", n);
        cr_assert_eq(stvm_delay_free(c.vm, c.delay), STVM_OK);
        cr_assert_eq(stvm_semaphore_free(c.vm, c.sem), STVM_OK);
        stvm_process_release(c.vm, c.process);
        vm_done(c.vm);
    }
}
