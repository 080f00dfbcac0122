/*
 * Pharo's Delay scheduler test classes re-expressed against stvm's public API, one
 * suite per Pharo class that has a counterpart here, each Test named after the Pharo
 * selector. The test method's body runs in a green process at
 * STVM_PRIORITY_USER_SCHEDULING; what Pharo asserts there is recorded and asserted by
 * the host after stvm_run. Everything runs on the simulated clock.
 *
 * Pharo's "ticker" is stvm's delay clock: a test class on the microsecond ticker runs
 * in the two microsecond representations (us-largeint31, us-smallint61), one on the
 * millisecond ticker in the two millisecond ones (ms-smallint31, ms-smallint61).
 * `scheduler simulate_vmMilliseconds: t` (the simulated VM clock set to t ms, then a
 * timing pass) is the test process waiting until t ms after its start; the
 * "next wake-up" Pharo reads from its simulated ticker is the deadline of the timer the
 * timing process armed last (the trace's TIMER_ARMED event). `Delay new setDelay: n
 * forSemaphore: Semaphore new` is stvm_delay_new_ms(n) (a Delay with a semaphore of its
 * own, not scheduled); isExpired is stvm_delay_is_expired (its semaphore holds the
 * expiry's signal).
 *
 * Which classes exist, and where (pharo-project/pharo, whose history holds the
 * filetree trees src/Kernel-Tests.package and pharo-core/Kernel-Tests.package too):
 *
 *   DelayBasicSchedulerMicrosecondTickerTest  src/Kernel-Tests, 2019 to now: 18 tests.
 *   DelayBasicSchedulerMillisecondTickerTest  src/Kernel-Tests, 2019 to now: its
 *       subclass, only the ticker changed (the same 18).
 *   DelayMutexSchedulerMicrosecondTickerTest, DelayMutexSchedulerMillisecondTickerTest,
 *   DelaySemaphoreSchedulerMicrosecondTickerTest,
 *   DelaySemaphoreSchedulerMillisecondTickerTest  src/Kernel-Tests, 2019 to now:
 *       subclasses that change only the scheduler class (the same 18 each).
 *   TestDelayBasicSchedulerMicrosecondTicker, TestDelayBasicSchedulerMillisecondTicker,
 *   TestDelayMutexScheduler{Micro,Milli}secondTicker,
 *   TestDelaySemaphoreScheduler{Micro,Milli}secondTicker  src/Kernel-Tests,
 *       2018-09 to 2019-08: the same classes under their earlier names (the same 18;
 *       testMultiSchedule only from 2019, first asking isScheduled for beingWaitedOn).
 *   TestDelaySpinSchedulerMicrosecondTicker, TestDelaySpinSchedulerMillisecondTicker
 *       src/Kernel-Tests, 2018-10 to 2018-11 (removed, issue 22649): the same 18 for
 *       DelaySpinScheduler.
 *   DelayMicrosecondSchedulerTest, DelayMillisecondSchedulerTest  pharo-core and
 *       src/Kernel-Tests(.package), 2015 to 2018-10 (removed with their schedulers):
 *       6 tests each.
 *   DelayTicklessSchedulerTest  src/Kernel-Tests(.package), 2017 to 2018-10 (removed):
 *       DelayMicrosecondSchedulerTest's 6 inherited, testDurationMoreThanMaxTicks
 *       redefined.
 *   DelayNullSchedulerTest  pharo-core and src/Kernel-Tests(.package), to 2018-10
 *       (removed): 1 test.
 *   No class named DelaySchedulerTest or DelayExperimentalSpinSchedulerTest ever
 *   existed in either tree: DelayExperimentalSpinScheduler (and ...Semaphore...,
 *   ...Courageous...) were schedulers, in Kernel and later Morphic-Tests, with no
 *   test class of their own.
 *
 * stvm has one Delay scheduler (request queue, timing process, heap), so the Mutex,
 * Semaphore and Spin variants and the TestDelay* names would be exact duplicates of
 * the two DelayBasicScheduler suites, which stand for them.
 *
 * Other suites check the same ground, none as an exact duplicate: delay_object's
 * is_expired_being_waited_on_and_ms_to_go_at_each_stage (testSimpleOneDelay,
 * testForMilliseconds, testMillisecondsToGo from the waiting process) and
 * scheduling_a_scheduled_delay_is_refused (testMultiSchedule); delay's
 * a_delay_longer_than_a_second_wakes_the_timing_process_every_second
 * (testDurationMoreThanMaxTicks, by counting passes) and
 * equal_resumption_times_fire_in_scheduling_order (the heap); timed_wait's
 * times_out_exactly_after_ms_when_nobody_signals and
 * an_excess_signal_makes_it_return_ok_at_once (the two DelayWaitTimeout tests).
 *
 * Suites DelayBasicSchedulerMicrosecondTickerTest and
 * DelayBasicSchedulerMillisecondTickerTest (each of the 18 in both):
 *   testDelayWaitTimeoutCompleted    fully
 *   testDelayWaitTimeoutTimedOut     fully
 *   testDurationLessThanMaxTicks     fully
 *   testDurationMoreThanMaxTicks     fully
 *   testForMilliseconds              fully
 *   testForSeconds                   fully (the second given in microseconds)
 *   testHeapBackwards                in part: the expiry order; Pharo inspects the
 *                                    scheduler's heap (an instance variable) directly
 *   testHeapForwards                 in part: as testHeapBackwards
 *   testMillisecondsToGo             fully
 *   testMillisecondsToGoExpired      fully, with the assertion Pharo left commented out
 *   testMultiSchedule                fully
 *   testPerformanceInlined_ifNotNil  not: it checks that Pharo's compiler inlines
 *                                    ifNotNil:, a Smalltalk compiler property
 *   testPerformanceInlined_ifTrue    not: the same for ifTrue:
 *   testSimpleOneDelay               fully
 *   testSimpleTwoDelays              fully
 *   testStartStop                    not: stvm's timing process starts on first use and
 *                                    lives as long as its VM; there is no stop to call
 *   testStoppedSchedulerExpiresRemainingDelays  in part: the expiries before the stop;
 *                                    the stop that expires the rest has no counterpart
 *   testSuspendForSnapshot           in part: millisecondsToGo before the shutDown;
 *                                    stvm has no snapshots, so no shutDown/startUp
 *
 * Suites DelayMicrosecondSchedulerTest (microsecond representations) and
 * DelayMillisecondSchedulerTest (millisecond ones):
 *   testDurationLessThanMaxTicks     fully: the next wake-up, and the active Delay's
 *                                    duration as the Delay's own
 *   testDurationMoreThanMaxTicks     fully, as above
 *   testForMilliseconds              fully; Pharo accepts 950..1050 ms of the wall
 *                                    clock, the simulated clock gives exactly 1000
 *   testForSeconds                   fully, as above (the second in microseconds)
 *   testMillisecondsToGo             fully; Pharo's busy wait of 50 ms is stvm_work_us,
 *                                    and 40..60 to go is exactly 50. (Pharo's
 *                                    DelayMillisecondSchedulerTest runs this one on the
 *                                    microsecond scheduler by a slip; here each suite
 *                                    runs it on its own clock.)
 *   testTestInterferenceWithSystemTimingSemaphore  not: Pharo skips it (self skip); it
 *                                    shows an image test replacing the system timing
 *                                    semaphore, which stvm's API cannot reach
 *
 * Suite DelayTicklessSchedulerTest (microsecond representations):
 *   testDurationMoreThanMaxTicks     fully; fails as Pharo states it (a tickless
 *                                    scheduler wakes at the Delay's end, 1234 ms; stvm's
 *                                    timing process wakes at least every second), a
 *                                    documented difference (docs/differences-from-
 *                                    pharo.md, "The timing process's heartbeat"), so the
 *                                    test asserts stvm's 1000 ms
 *   the other five, inherited       not repeated: exact duplicates of
 *                                    DelayMicrosecondSchedulerTest's (one scheduler)
 *
 * DelayNullSchedulerTest (no suite):
 *   testNullDelay                    not: DelayNullScheduler signals every Delay at
 *                                    once; stvm has no scheduler that ignores time
 */
#include <stdint.h>

#include "helpers.h"

TestSuite(DelayBasicSchedulerMicrosecondTickerTest, .timeout = 30);
TestSuite(DelayBasicSchedulerMillisecondTickerTest, .timeout = 30);
TestSuite(DelayMicrosecondSchedulerTest, .timeout = 30);
TestSuite(DelayMillisecondSchedulerTest, .timeout = 30);
TestSuite(DelayTicklessSchedulerTest, .timeout = 30);

#define TEST_PRIORITY STVM_PRIORITY_USER_SCHEDULING
#define NTICKER 2

static const rep *const US_TICKER[NTICKER] = {&REPS[1], &REPS[2]};
static const rep *const MS_TICKER[NTICKER] = {&REPS[0], &REPS[3]};

/* One test body in both DelayBasicScheduler suites, each on its ticker's clock. */
#define BASIC_SCHEDULER_TEST(selector)                                  \
    Test(DelayBasicSchedulerMicrosecondTickerTest, selector)            \
    {                                                                   \
        for (int i = 0; i < NTICKER; i++)                               \
            selector##_on(US_TICKER[i]);                                \
    }                                                                   \
    Test(DelayBasicSchedulerMillisecondTickerTest, selector)            \
    {                                                                   \
        for (int i = 0; i < NTICKER; i++)                               \
            selector##_on(MS_TICKER[i]);                                \
    }

/* What a test's process records. */
typedef struct sched_case {
    stvm_vm *vm;
    const rep *r;
    uint64_t base;            /* the test process's start: Pharo's simulated 0 ms */
    stvm_delay *d[4];
    int rc[4];
    int waited_on[8];         /* beingWaitedOn at each step */
    int expired[8];           /* isExpired at each step */
    int64_t to_go[4];         /* millisecondsToGo at each step */
    int64_t next_wakeup_ms;   /* the last timer armed, in ms after base */
    int64_t duration_ms;      /* a test's Delay length */
    uint64_t took_us;
    int bad_line;
} sched_case;

static void run_test_method(stvm_vm *vm, const char *selector, stvm_fn fn, void *arg)
{
    spawn(vm, TEST_PRIORITY, selector, fn, arg);
    run_ok(vm);
}

/* scheduler simulate_vmMilliseconds: ms — the clock at base + ms, every timing pass due
 * by then done (the test process waits until then; STVM_ESTATE if it is past). */
static int simulate_ms(stvm_vm *vm, const sched_case *c, int64_t ms)
{
    uint64_t at = c->base + (uint64_t)ms * 1000, now = stvm_vm_now_us(vm);
    return at < now ? STVM_ESTATE : stvm_delay_wait_us(vm, (int64_t)(at - now));
}

/* The deadline of the timer armed last, in ms after base (-1: none armed). */
static int64_t next_wakeup_ms(stvm_vm *vm, const sched_case *c)
{
    int64_t n = stvm_trace_count(vm);
    for (int64_t i = n - 1; i >= 0; i--) {
        stvm_trace_event e;
        if (stvm_trace_get(vm, (size_t)i, &e) == STVM_OK && e.kind == STVM_TRACE_TIMER_ARMED)
            return (e.detail - (int64_t)c->base) / 1000;
    }
    return -1;
}

static int64_t ms_to_go(stvm_vm *vm, const stvm_delay *d)
{
    int64_t v = -1;
    return stvm_delay_ms_to_go(vm, d, &v) == STVM_OK ? v : -999;
}

static sched_case case_for(const rep *r)
{
    sched_case c = {.vm = rep_vm(r), .r = r};
    for (int i = 0; i < 4; i++)
        c.rc[i] = -999;
    return c;
}

/* The Delays a test made go with it: unscheduled, then freed. */
static void case_done(sched_case *c)
{
    ASSERT_GREEN_OK(c);
    for (int i = 0; i < 4; i++)
        if (c->d[i])
            cr_assert_eq(stvm_delay_free(c->vm, c->d[i]), STVM_OK, "%s: Delay %d", c->r->name, i);
    vm_done(c->vm);
}

static void unschedule_all(stvm_vm *vm, sched_case *c)
{
    for (int i = 0; i < 4; i++)
        if (c->d[i]) {
            GCHECK(c, stvm_delay_unschedule(vm, c->d[i]) == STVM_OK);
            /* an expiry's signal nobody took stays in the semaphore: take it */
            if (stvm_delay_is_expired(vm, c->d[i]) == 1)
                GCHECK(c, stvm_semaphore_wait(vm, stvm_delay_semaphore(c->d[i])) == STVM_OK);
        }
}

/* ---- DelayWaitTimeout -------------------------------------------------------------- */

static void wait_timeout_completed(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    stvm_semaphore *completed = NULL;
    GCHECK(c, stvm_semaphore_new(vm, &completed) == STVM_OK);
    GCHECK(c, stvm_semaphore_signal(vm, completed) == STVM_OK);
    uint64_t t0 = stvm_vm_now_us(vm);
    c->rc[0] = stvm_semaphore_wait_timeout_ms(vm, completed, 100);
    c->took_us = stvm_vm_now_us(vm) - t0;
    GCHECK(c, stvm_semaphore_free(vm, completed) == STVM_OK);
}

/* DelayBasicScheduler*TickerTest>>testDelayWaitTimeoutCompleted: a wait of at most
 * 100 ms on a semaphore that was signalled before it ends "completed" (STVM_OK), at
 * once. */
static void testDelayWaitTimeoutCompleted_on(const rep *r)
{
    sched_case c = case_for(r);
    run_test_method(c.vm, "testDelayWaitTimeoutCompleted", wait_timeout_completed, &c);
    cr_assert_eq(c.rc[0], STVM_OK, "%s: %s", r->name, stvm_err_name(c.rc[0]));
    cr_assert_eq(c.took_us, 0u, "%s", r->name);
    case_done(&c);
}
BASIC_SCHEDULER_TEST(testDelayWaitTimeoutCompleted)

static void wait_timeout_timed_out(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    stvm_semaphore *completed = NULL;
    GCHECK(c, stvm_semaphore_new(vm, &completed) == STVM_OK);
    uint64_t t0 = stvm_vm_now_us(vm);
    c->rc[0] = stvm_semaphore_wait_timeout_ms(vm, completed, 100);
    c->took_us = stvm_vm_now_us(vm) - t0;
    GCHECK(c, stvm_semaphore_free(vm, completed) == STVM_OK);
}

/* DelayBasicScheduler*TickerTest>>testDelayWaitTimeoutTimedOut: the same wait on a
 * semaphore nobody signals ends "timed out" (STVM_ETIMEDOUT), 100 ms later. */
static void testDelayWaitTimeoutTimedOut_on(const rep *r)
{
    sched_case c = case_for(r);
    run_test_method(c.vm, "testDelayWaitTimeoutTimedOut", wait_timeout_timed_out, &c);
    cr_assert_eq(c.rc[0], STVM_ETIMEDOUT, "%s: %s", r->name, stvm_err_name(c.rc[0]));
    cr_assert_eq(c.took_us, 100000u, "%s", r->name);
    case_done(&c);
}
BASIC_SCHEDULER_TEST(testDelayWaitTimeoutTimedOut)

/* ---- the next wake-up ---------------------------------------------------------------- */

static void wakeup_after_schedule(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->base = stvm_vm_now_us(vm);
    GCHECK(c, stvm_trace_start(vm, 4096) == STVM_OK);
    GCHECK(c, stvm_delay_new_ms(vm, c->duration_ms, &c->d[0]) == STVM_OK);
    GCHECK(c, simulate_ms(vm, c, 100) == STVM_OK);
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    c->next_wakeup_ms = next_wakeup_ms(vm, c);
    /* the Delay's own length is what the scheduler keeps (the active Delay's
     * millisecondDelayDuration in the older classes) */
    c->to_go[0] = ms_to_go(vm, c->d[0]);
    unschedule_all(vm, c);
    stvm_trace_stop(vm);
}

static void check_next_wakeup(const rep *r, int64_t duration_ms, int64_t want_ms)
{
    sched_case c = case_for(r);
    c.duration_ms = duration_ms;
    run_test_method(c.vm, "next wake-up", wakeup_after_schedule, &c);
    cr_assert_eq(c.rc[0], STVM_OK, "%s: %s", r->name, stvm_err_name(c.rc[0]));
    cr_assert_eq(c.next_wakeup_ms, want_ms, "%s: %lld ms: next wake-up at %lld ms, want %lld",
                 r->name, (long long)duration_ms, (long long)c.next_wakeup_ms,
                 (long long)want_ms);
    cr_assert_eq(c.to_go[0], duration_ms, "%s", r->name);
    case_done(&c);
}

/* DelayBasicScheduler*TickerTest>>testDurationLessThanMaxTicks: a Delay of 789 ms
 * scheduled at 100 ms makes the timing process wake next at 889 ms, its end (less than
 * the one-second most it sleeps). */
static void testDurationLessThanMaxTicks_on(const rep *r)
{
    check_next_wakeup(r, 789, 100 + 789);
}
BASIC_SCHEDULER_TEST(testDurationLessThanMaxTicks)

/* DelayBasicScheduler*TickerTest>>testDurationMoreThanMaxTicks: a Delay of 1234 ms
 * scheduled at 100 ms makes it wake next at 1100 ms, one second on. */
static void testDurationMoreThanMaxTicks_on(const rep *r)
{
    check_next_wakeup(r, 1234, 100 + 1000);
}
BASIC_SCHEDULER_TEST(testDurationMoreThanMaxTicks)

/* ---- expiry at its time ---------------------------------------------------------------- */

static void expires_at_its_time(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->base = stvm_vm_now_us(vm);
    GCHECK(c, simulate_ms(vm, c, 100) == STVM_OK);
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    GCHECK(c, simulate_ms(vm, c, 1099) == STVM_OK);
    c->expired[0] = stvm_delay_is_expired(vm, c->d[0]);
    GCHECK(c, simulate_ms(vm, c, 1100) == STVM_OK);
    c->expired[1] = stvm_delay_is_expired(vm, c->d[0]);
    unschedule_all(vm, c);
}

static void check_expires_at_its_time(const rep *r, bool in_us, const char *selector)
{
    sched_case c = case_for(r);
    int err = in_us ? stvm_delay_new_us(c.vm, 1000000, &c.d[0])
                    : stvm_delay_new_ms(c.vm, 1000, &c.d[0]);
    cr_assert_eq(err, STVM_OK);
    run_test_method(c.vm, selector, expires_at_its_time, &c);
    cr_assert_eq(c.rc[0], STVM_OK, "%s: %s", r->name, stvm_err_name(c.rc[0]));
    cr_assert_eq(c.expired[0], 0, "%s: expired 1 ms early", r->name);
    cr_assert_eq(c.expired[1], 1, "%s: not expired at its time", r->name);
    case_done(&c);
}

/* DelayBasicScheduler*TickerTest>>testForMilliseconds: a Delay of 1000 ms scheduled at
 * 100 ms is not expired at 1099 ms and is at 1100 ms. */
static void testForMilliseconds_on(const rep *r)
{
    check_expires_at_its_time(r, false, "testForMilliseconds");
}
BASIC_SCHEDULER_TEST(testForMilliseconds)

/* DelayBasicScheduler*TickerTest>>testForSeconds: the same for a Delay of one second,
 * made from the microsecond count (forSeconds: is forMilliseconds: n * 1000 in Pharo;
 * stvm's other unit is the microsecond). */
static void testForSeconds_on(const rep *r)
{
    check_expires_at_its_time(r, true, "testForSeconds");
}
BASIC_SCHEDULER_TEST(testForSeconds)

/* ---- the heap ------------------------------------------------------------------------ */

typedef struct heap_case {
    stvm_vm *vm;
    const rep *r;
    bool backwards;
    stvm_delay *d[4];         /* 1, 2, 3 and 4 ms */
    uint64_t base;
    int order[4];             /* which Delay each expiry was, in trace order */
    int64_t at_ms[4];         /* when */
    int n;
    int bad_line;
} heap_case;

static void schedule_four(stvm_vm *vm, void *arg)
{
    heap_case *h = arg;
    h->base = stvm_vm_now_us(vm);
    GCHECK(h, stvm_trace_start(vm, 4096) == STVM_OK);
    for (int k = 0; k < 4; k++) {
        int i = h->backwards ? 3 - k : k;
        GCHECK(h, stvm_delay_schedule(vm, h->d[i]) == STVM_OK);
    }
    GCHECK(h, stvm_delay_wait_ms(vm, 10) == STVM_OK);
    int64_t n = stvm_trace_count(vm);
    for (int64_t j = 0; j < n; j++) {
        stvm_trace_event e;
        GCHECK(h, stvm_trace_get(vm, (size_t)j, &e) == STVM_OK);
        if (e.kind != STVM_TRACE_DELAY_EXPIRED)
            continue;
        for (int i = 0; i < 4; i++)
            if (e.object == (uint64_t)(uintptr_t)h->d[i] && h->n < 4) {
                h->order[h->n] = i;
                h->at_ms[h->n++] = (int64_t)(e.time_us - h->base) / 1000;
            }
    }
    stvm_trace_stop(vm);
    for (int i = 0; i < 4; i++)   /* take each expiry's signal */
        GCHECK(h, stvm_semaphore_wait(vm, stvm_delay_semaphore(h->d[i])) == STVM_OK);
}

static void check_heap_order(const rep *r, bool backwards)
{
    heap_case h = {.vm = rep_vm(r), .r = r, .backwards = backwards};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(stvm_delay_new_ms(h.vm, i + 1, &h.d[i]), STVM_OK);
    run_test_method(h.vm, backwards ? "testHeapBackwards" : "testHeapForwards",
                    schedule_four, &h);
    ASSERT_GREEN_OK(&h);
    cr_assert_eq(h.n, 4, "%s: %d expiries", r->name, h.n);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(h.order[i], i, "%s: expiry %d was Delay %d", r->name, i, h.order[i]);
        cr_assert_eq(h.at_ms[i], i + 1, "%s: Delay %d at %lld ms", r->name, i,
                     (long long)h.at_ms[i]);
        cr_assert_eq(stvm_delay_free(h.vm, h.d[i]), STVM_OK);
    }
    vm_done(h.vm);
}

/* DelayBasicScheduler*TickerTest>>testHeapBackwards: Delays of 4, 3, 2 and 1 ms
 * scheduled in that order are kept earliest first (Pharo: the 1 ms one active, the
 * heap giving 2, 3, 4). Here: they expire 1, 2, 3, 4, each at its time. */
static void testHeapBackwards_on(const rep *r)
{
    check_heap_order(r, true);
}
BASIC_SCHEDULER_TEST(testHeapBackwards)

/* DelayBasicScheduler*TickerTest>>testHeapForwards: the same, scheduled 1, 2, 3, 4. */
static void testHeapForwards_on(const rep *r)
{
    check_heap_order(r, false);
}
BASIC_SCHEDULER_TEST(testHeapForwards)

/* ---- millisecondsToGo ------------------------------------------------------------------ */

static void to_go_after_60(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->base = stvm_vm_now_us(vm);
    GCHECK(c, simulate_ms(vm, c, 100) == STVM_OK);
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    GCHECK(c, simulate_ms(vm, c, 160) == STVM_OK);
    c->to_go[0] = ms_to_go(vm, c->d[0]);
    unschedule_all(vm, c);
}

/* DelayBasicScheduler*TickerTest>>testMillisecondsToGo: a Delay of 100 ms scheduled at
 * 100 ms has 40 ms to go at 160 ms. */
static void testMillisecondsToGo_on(const rep *r)
{
    sched_case c = case_for(r);
    cr_assert_eq(stvm_delay_new_ms(c.vm, 100, &c.d[0]), STVM_OK);
    run_test_method(c.vm, "testMillisecondsToGo", to_go_after_60, &c);
    cr_assert_eq(c.rc[0], STVM_OK);
    cr_assert_eq(c.to_go[0], 40, "%s: %lld", r->name, (long long)c.to_go[0]);
    case_done(&c);
}
BASIC_SCHEDULER_TEST(testMillisecondsToGo)

static void to_go_expired(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->base = stvm_vm_now_us(vm);
    GCHECK(c, simulate_ms(vm, c, 1) == STVM_OK);
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    GCHECK(c, simulate_ms(vm, c, 200) == STVM_OK);
    c->to_go[0] = ms_to_go(vm, c->d[0]);
    c->expired[0] = stvm_delay_is_expired(vm, c->d[0]);
    c->waited_on[0] = stvm_delay_being_waited_on(vm, c->d[0]);
    unschedule_all(vm, c);
}

/* DelayBasicScheduler*TickerTest>>testMillisecondsToGoExpired: a Delay of 100 ms
 * scheduled at 1 ms, looked at at 200 ms. Pharo's assertion (0 to go) is commented
 * out; here it holds, and the Delay is expired and no longer waited on. */
static void testMillisecondsToGoExpired_on(const rep *r)
{
    sched_case c = case_for(r);
    cr_assert_eq(stvm_delay_new_ms(c.vm, 100, &c.d[0]), STVM_OK);
    run_test_method(c.vm, "testMillisecondsToGoExpired", to_go_expired, &c);
    cr_assert_eq(c.rc[0], STVM_OK);
    cr_assert_eq(c.to_go[0], 0, "%s: %lld", r->name, (long long)c.to_go[0]);
    cr_assert_eq(c.expired[0], 1, "%s", r->name);
    cr_assert_eq(c.waited_on[0], 0, "%s", r->name);
    case_done(&c);
}
BASIC_SCHEDULER_TEST(testMillisecondsToGoExpired)

/* ---- testMultiSchedule --------------------------------------------------------------- */

static void schedule_another(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->rc[2] = stvm_delay_new_ms(vm, 1000, &c->d[1]);
    if (c->rc[2] == STVM_OK)
        c->rc[3] = stvm_delay_schedule(vm, c->d[1]);
}

static void multi_schedule(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    c->waited_on[0] = stvm_delay_being_waited_on(vm, c->d[0]);
    c->rc[1] = stvm_delay_schedule(vm, c->d[0]);
    /* forkAt: activePriority + 1, in case scheduling blocks */
    GCHECK(c, stvm_spawn(vm, TEST_PRIORITY + 1, "another", schedule_another, c, NULL) ==
                  STVM_OK);
    c->waited_on[1] = c->d[1] ? stvm_delay_being_waited_on(vm, c->d[1]) : -1;
    unschedule_all(vm, c);
}

/* DelayBasicScheduler*TickerTest>>testMultiSchedule: a Delay of 1000 s scheduled once
 * is being waited on, and scheduling it again is refused (an error in Pharo, ESTATE
 * here); the scheduler still takes another Delay afterwards, scheduled by a process one
 * priority higher. */
static void testMultiSchedule_on(const rep *r)
{
    sched_case c = case_for(r);
    cr_assert_eq(stvm_delay_new_ms(c.vm, 1000 * 1000, &c.d[0]), STVM_OK);
    run_test_method(c.vm, "testMultiSchedule", multi_schedule, &c);
    cr_assert_eq(c.rc[0], STVM_OK, "%s", r->name);
    cr_assert_eq(c.waited_on[0], 1, "%s", r->name);
    cr_assert_eq(c.rc[1], STVM_ESTATE, "%s: %s", r->name, stvm_err_name(c.rc[1]));
    cr_assert_eq(c.rc[2], STVM_OK, "%s", r->name);
    cr_assert_eq(c.rc[3], STVM_OK, "%s: %s", r->name, stvm_err_name(c.rc[3]));
    cr_assert_eq(c.waited_on[1], 1, "%s: the other Delay must be scheduled", r->name);
    case_done(&c);
}
BASIC_SCHEDULER_TEST(testMultiSchedule)

/* ---- one and two Delays ------------------------------------------------------------- */

static void simple_one(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->base = stvm_vm_now_us(vm);
    GCHECK(c, simulate_ms(vm, c, 10) == STVM_OK);
    c->waited_on[0] = stvm_delay_being_waited_on(vm, c->d[0]);
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    c->waited_on[1] = stvm_delay_being_waited_on(vm, c->d[0]);
    GCHECK(c, simulate_ms(vm, c, 11) == STVM_OK);
    c->expired[0] = stvm_delay_is_expired(vm, c->d[0]);
    GCHECK(c, simulate_ms(vm, c, 12) == STVM_OK);
    c->expired[1] = stvm_delay_is_expired(vm, c->d[0]);
    unschedule_all(vm, c);
}

/* DelayBasicScheduler*TickerTest>>testSimpleOneDelay: a Delay of 2 ms is not waited on
 * until scheduled (at 10 ms), then is; it is not expired at 11 ms and is at 12 ms. */
static void testSimpleOneDelay_on(const rep *r)
{
    sched_case c = case_for(r);
    cr_assert_eq(stvm_delay_new_ms(c.vm, 2, &c.d[0]), STVM_OK);
    run_test_method(c.vm, "testSimpleOneDelay", simple_one, &c);
    cr_assert_eq(c.rc[0], STVM_OK);
    cr_assert_eq(c.waited_on[0], 0, "%s", r->name);
    cr_assert_eq(c.waited_on[1], 1, "%s", r->name);
    cr_assert_eq(c.expired[0], 0, "%s", r->name);
    cr_assert_eq(c.expired[1], 1, "%s", r->name);
    case_done(&c);
}
BASIC_SCHEDULER_TEST(testSimpleOneDelay)

static void simple_two(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->base = stvm_vm_now_us(vm);
    GCHECK(c, simulate_ms(vm, c, 10) == STVM_OK);
    c->waited_on[0] = stvm_delay_being_waited_on(vm, c->d[0]);
    c->waited_on[1] = stvm_delay_being_waited_on(vm, c->d[1]);
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    c->rc[1] = stvm_delay_schedule(vm, c->d[1]);
    c->waited_on[2] = stvm_delay_being_waited_on(vm, c->d[0]);
    c->waited_on[3] = stvm_delay_being_waited_on(vm, c->d[1]);
    GCHECK(c, simulate_ms(vm, c, 11) == STVM_OK);
    c->expired[0] = stvm_delay_is_expired(vm, c->d[0]);
    c->expired[1] = stvm_delay_is_expired(vm, c->d[1]);
    GCHECK(c, simulate_ms(vm, c, 12) == STVM_OK);
    c->expired[2] = stvm_delay_is_expired(vm, c->d[0]);
    c->expired[3] = stvm_delay_is_expired(vm, c->d[1]);
    GCHECK(c, simulate_ms(vm, c, 13) == STVM_OK);
    c->expired[4] = stvm_delay_is_expired(vm, c->d[1]);
    GCHECK(c, simulate_ms(vm, c, 14) == STVM_OK);
    c->expired[5] = stvm_delay_is_expired(vm, c->d[1]);
    unschedule_all(vm, c);
}

/* DelayBasicScheduler*TickerTest>>testSimpleTwoDelays: Delays of 2 and 4 ms scheduled
 * together at 10 ms: neither expired at 11, the first at 12 (the second not yet, nor
 * at 13), the second at 14. */
static void testSimpleTwoDelays_on(const rep *r)
{
    sched_case c = case_for(r);
    cr_assert_eq(stvm_delay_new_ms(c.vm, 2, &c.d[0]), STVM_OK);
    cr_assert_eq(stvm_delay_new_ms(c.vm, 4, &c.d[1]), STVM_OK);
    run_test_method(c.vm, "testSimpleTwoDelays", simple_two, &c);
    cr_assert_eq(c.rc[0], STVM_OK);
    cr_assert_eq(c.rc[1], STVM_OK);
    const int waited[4] = {0, 0, 1, 1}, expired[6] = {0, 0, 1, 0, 0, 1};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(c.waited_on[i], waited[i], "%s: beingWaitedOn %d", r->name, i);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(c.expired[i], expired[i], "%s: isExpired %d", r->name, i);
    case_done(&c);
}
BASIC_SCHEDULER_TEST(testSimpleTwoDelays)

/* ---- the scheduler stopped, suspended -------------------------------------------------- */

static void three_delays(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->base = stvm_vm_now_us(vm);
    GCHECK(c, simulate_ms(vm, c, 10) == STVM_OK);
    for (int i = 0; i < 3; i++)
        c->rc[i] = stvm_delay_schedule(vm, c->d[i]);
    for (int i = 0; i < 3; i++)
        c->waited_on[i] = stvm_delay_being_waited_on(vm, c->d[i]);
    GCHECK(c, simulate_ms(vm, c, 25) == STVM_OK);
    for (int i = 0; i < 3; i++)
        c->expired[i] = stvm_delay_is_expired(vm, c->d[i]);
    unschedule_all(vm, c);
}

/* DelayBasicScheduler*TickerTest>>testStoppedSchedulerExpiresRemainingDelays, in part:
 * Delays of 9, 99 and 999 ms scheduled at 10 ms are all waited on, and at 25 ms only
 * the first has expired. (Pharo then stops the timing loop, which expires the other
 * two; stvm's timing process has no stop.) */
static void testStoppedSchedulerExpiresRemainingDelays_on(const rep *r)
{
    sched_case c = case_for(r);
    const int64_t ms[3] = {9, 99, 999};
    for (int i = 0; i < 3; i++)
        cr_assert_eq(stvm_delay_new_ms(c.vm, ms[i], &c.d[i]), STVM_OK);
    run_test_method(c.vm, "testStoppedSchedulerExpiresRemainingDelays", three_delays, &c);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(c.rc[i], STVM_OK, "%s", r->name);
        cr_assert_eq(c.waited_on[i], 1, "%s: Delay %d", r->name, i);
        cr_assert_eq(c.expired[i], i == 0, "%s: Delay %d", r->name, i);
    }
    case_done(&c);
}
BASIC_SCHEDULER_TEST(testStoppedSchedulerExpiresRemainingDelays)

static void before_snapshot(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->base = stvm_vm_now_us(vm);
    GCHECK(c, simulate_ms(vm, c, 10) == STVM_OK);
    c->waited_on[0] = stvm_delay_being_waited_on(vm, c->d[0]);
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    c->waited_on[1] = stvm_delay_being_waited_on(vm, c->d[0]);
    c->to_go[0] = ms_to_go(vm, c->d[0]);
    GCHECK(c, simulate_ms(vm, c, 12) == STVM_OK);   /* no shutDown: it expires */
    c->expired[0] = stvm_delay_is_expired(vm, c->d[0]);
    unschedule_all(vm, c);
}

/* DelayBasicScheduler*TickerTest>>testSuspendForSnapshot, in part: a Delay of 2 ms
 * scheduled at 10 ms is waited on with 2 ms to go. (Pharo then shuts the scheduler
 * down for a snapshot, when it has 0 to go and does not expire, and starts it up
 * again with 2 to go; stvm has no snapshots. Here it simply expires at 12 ms.) */
static void testSuspendForSnapshot_on(const rep *r)
{
    sched_case c = case_for(r);
    cr_assert_eq(stvm_delay_new_ms(c.vm, 2, &c.d[0]), STVM_OK);
    run_test_method(c.vm, "testSuspendForSnapshot", before_snapshot, &c);
    cr_assert_eq(c.rc[0], STVM_OK);
    cr_assert_eq(c.waited_on[0], 0, "%s", r->name);
    cr_assert_eq(c.waited_on[1], 1, "%s", r->name);
    cr_assert_eq(c.to_go[0], 2, "%s: %lld", r->name, (long long)c.to_go[0]);
    cr_assert_eq(c.expired[0], 1, "%s", r->name);
    case_done(&c);
}
BASIC_SCHEDULER_TEST(testSuspendForSnapshot)

/* ---- DelayMicrosecondSchedulerTest, DelayMillisecondSchedulerTest ---------------------- */

/* The same body for the two classes (and the Tickless one), each on its clock. */
#define ONE_CLOCK_TEST(suite, ticker, selector, body) \
    Test(suite, selector)                             \
    {                                                 \
        for (int i = 0; i < NTICKER; i++)             \
            body(ticker[i]);                          \
    }

/* Delay{Micro,Milli}secondSchedulerTest>>testDurationLessThanMaxTicks: a timer event
 * at 100 ms with a Delay of 789 ms just scheduled answers the next wake-up 889 ms,
 * and the active Delay keeps its 789 ms. */
static void duration_less_than_max_ticks(const rep *r)
{
    check_next_wakeup(r, 789, 100 + 789);
}
ONE_CLOCK_TEST(DelayMicrosecondSchedulerTest, US_TICKER, testDurationLessThanMaxTicks,
               duration_less_than_max_ticks)
ONE_CLOCK_TEST(DelayMillisecondSchedulerTest, MS_TICKER, testDurationLessThanMaxTicks,
               duration_less_than_max_ticks)

/* Delay{Micro,Milli}secondSchedulerTest>>testDurationMoreThanMaxTicks: with a Delay of
 * 1234 ms the next wake-up is 1100 ms, one second after the event. */
static void duration_more_than_max_ticks(const rep *r)
{
    check_next_wakeup(r, 1234, 100 + 1000);
}
ONE_CLOCK_TEST(DelayMicrosecondSchedulerTest, US_TICKER, testDurationMoreThanMaxTicks,
               duration_more_than_max_ticks)
ONE_CLOCK_TEST(DelayMillisecondSchedulerTest, MS_TICKER, testDurationMoreThanMaxTicks,
               duration_more_than_max_ticks)

static void until_signalled(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    uint64_t t0 = stvm_vm_now_us(vm);
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    c->rc[1] = stvm_semaphore_wait(vm, stvm_delay_semaphore(c->d[0]));
    c->took_us = stvm_vm_now_us(vm) - t0;
}

static void check_one_second(const rep *r, bool in_us, const char *selector)
{
    sched_case c = case_for(r);
    int err = in_us ? stvm_delay_new_us(c.vm, 1000000, &c.d[0])
                    : stvm_delay_new_ms(c.vm, 1000, &c.d[0]);
    cr_assert_eq(err, STVM_OK);
    run_test_method(c.vm, selector, until_signalled, &c);
    cr_assert_eq(c.rc[0], STVM_OK, "%s", r->name);
    cr_assert_eq(c.rc[1], STVM_OK, "%s", r->name);
    cr_assert_eq(c.took_us, 1000000u, "%s: took %llu us", r->name,
                 (unsigned long long)c.took_us);
    case_done(&c);
}

/* Delay{Micro,Milli}secondSchedulerTest>>testForMilliseconds: a Delay of 1000 ms
 * scheduled by the test signals its semaphore between 950 and 1050 ms later (on the
 * simulated clock: exactly 1000). */
static void for_milliseconds(const rep *r)
{
    check_one_second(r, false, "testForMilliseconds");
}
ONE_CLOCK_TEST(DelayMicrosecondSchedulerTest, US_TICKER, testForMilliseconds, for_milliseconds)
ONE_CLOCK_TEST(DelayMillisecondSchedulerTest, MS_TICKER, testForMilliseconds, for_milliseconds)

/* Delay{Micro,Milli}secondSchedulerTest>>testForSeconds: the same for one second, made
 * from its microseconds. */
static void for_seconds(const rep *r)
{
    check_one_second(r, true, "testForSeconds");
}
ONE_CLOCK_TEST(DelayMicrosecondSchedulerTest, US_TICKER, testForSeconds, for_seconds)
ONE_CLOCK_TEST(DelayMillisecondSchedulerTest, MS_TICKER, testForSeconds, for_seconds)

static void to_go_after_busy_wait(stvm_vm *vm, void *arg)
{
    sched_case *c = arg;
    c->rc[0] = stvm_delay_schedule(vm, c->d[0]);
    c->rc[1] = stvm_work_us(vm, 50000);   /* busyWaitMilliseconds: 50 */
    c->to_go[0] = ms_to_go(vm, c->d[0]);
    unschedule_all(vm, c);
}

/* Delay{Micro,Milli}secondSchedulerTest>>testMillisecondsToGo: a Delay of 100 ms
 * scheduled, then 50 ms of busy waiting: between 40 and 60 ms to go (exactly 50 on the
 * simulated clock). */
static void milliseconds_to_go(const rep *r)
{
    sched_case c = case_for(r);
    cr_assert_eq(stvm_delay_new_ms(c.vm, 100, &c.d[0]), STVM_OK);
    run_test_method(c.vm, "testMillisecondsToGo", to_go_after_busy_wait, &c);
    cr_assert_eq(c.rc[0], STVM_OK);
    cr_assert_eq(c.rc[1], STVM_OK, "%s: %s", r->name, stvm_err_name(c.rc[1]));
    cr_assert_eq(c.to_go[0], 50, "%s: %lld", r->name, (long long)c.to_go[0]);
    case_done(&c);
}
ONE_CLOCK_TEST(DelayMicrosecondSchedulerTest, US_TICKER, testMillisecondsToGo,
               milliseconds_to_go)
ONE_CLOCK_TEST(DelayMillisecondSchedulerTest, MS_TICKER, testMillisecondsToGo,
               milliseconds_to_go)

/* ---- DelayTicklessSchedulerTest --------------------------------------------------------- */

/* DelayTicklessSchedulerTest>>testDurationMoreThanMaxTicks: Pharo's tickless scheduler
 * wakes next at the Delay's end, 1234 ms after the event at 100 ms (1334 ms). stvm's
 * timing process wakes at least every second, as the other Pharo schedulers do
 * (docs/differences-from-pharo.md, "The timing process's heartbeat"), so this asserts
 * 1100 ms: the documented difference, checked so that a change to it is seen. */
static void tickless_duration_more_than_max_ticks(const rep *r)
{
    check_next_wakeup(r, 1234, 100 + 1000);
}
ONE_CLOCK_TEST(DelayTicklessSchedulerTest, US_TICKER, testDurationMoreThanMaxTicks,
               tickless_duration_more_than_max_ticks)
