/*
 * Pharo's MonitorTest re-expressed against stvm's public API (suite `MonitorTest`, one
 * test per Pharo selector). In Pharo the test method runs in the test runner's process
 * at userSchedulingPriority (40); here that part is a green process at
 * STVM_PRIORITY_USER_SCHEDULING named after the selector, and what Pharo asserts in it
 * is recorded in the test's scenario and asserted by the host after stvm_run. The VM
 * runs on the simulated clock, so the timed wait takes no wall-clock time.
 *
 * Every test method of Pharo's MonitorTest (pharo-project/pharo,
 * src/Kernel-Tests/MonitorTest.class.st: the same three methods in both versions read,
 * 26ec2cb and 86c065d; pharo-core's older form, KernelTests-Processes, has testExample1
 * among them):
 *
 *   testExample1             expressed (below)
 *   testExample2             expressed; Pharo's #finish event is condition queue 1
 *   testWaitMaxMilliseconds  expressed
 *
 * None is left out. Pharo's blocks are C functions taking the scenario; its
 * OrderedCollections are arrays with a count.
 */
#include "helpers.h"

TestSuite(MonitorTest, .timeout = 30);

#define TEST_PRIORITY STVM_PRIORITY_USER_SCHEDULING
#define GOAL 1000
/* Pharo's #finish (testExample2). */
#define FINISH 1

typedef struct mt {
    stvm_vm *vm;
    stvm_monitor *monitor;
    stvm_semaphore *finished;
    int work[GOAL + 8];
    int nwork;
    int counter;
    bool goal_reached;
    int active_producers;
    int rc;
    int64_t depth;
    uint64_t waited_ms;
    int bad_line;
} mt;

static mt make(void)
{
    mt s = {.vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0)};
    cr_assert_eq(stvm_monitor_new(s.vm, &s.monitor), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.finished), STVM_OK);
    return s;
}

static void done_with(mt *s)
{
    ASSERT_GREEN_OK(s);
    cr_assert_null(stvm_monitor_owner(s->vm, s->monitor));
    cr_assert_eq(stvm_monitor_free(s->vm, s->monitor), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(s->vm, s->finished), STVM_OK);
    vm_done(s->vm);
}

/* The goal is 1 .. GOAL in order, and work must equal it. */
static void assert_goal_equals_work(const mt *s)
{
    cr_assert_eq(s->nwork, GOAL, "work holds %d numbers", s->nwork);
    for (int i = 0; i < GOAL; i++)
        cr_assert_eq(s->work[i], i + 1, "work[%d] is %d", i, s->work[i]);
}

static bool counter_at_multiple_of_5(stvm_vm *vm, void *arg)
{
    (void)vm;
    return ((mt *)arg)->counter % 5 == 0;
}

/* The body of both producers' critical sections, after their wait: add the next number
 * unless the goal was reached, note whether it is now, and signal. */
static void produce_and_signal(stvm_vm *vm, mt *s)
{
    if (!s->goal_reached && s->nwork < GOAL + 8)
        s->work[s->nwork++] = ++s->counter;
    s->goal_reached = s->counter >= GOAL;
    GCHECK(s, stvm_monitor_signal(vm, s->monitor) >= 0);
}

static void producer1_critical(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    GCHECK(s, stvm_monitor_wait_until(vm, s->monitor, counter_at_multiple_of_5, s) == STVM_OK);
    produce_and_signal(vm, s);
}

static void producer2_critical(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    GCHECK(s, stvm_monitor_wait_while(vm, s->monitor, counter_at_multiple_of_5, s) == STVM_OK);
    produce_and_signal(vm, s);
}

/* ---- testExample1 ---------------------------------------------------------------------- */

static void example1_producer1(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    do
        GCHECK(s, stvm_monitor_critical(vm, s->monitor, producer1_critical, s) == STVM_OK);
    while (!s->goal_reached);
    stvm_semaphore_signal(vm, s->finished);
}

static void example1_producer2(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    do
        GCHECK(s, stvm_monitor_critical(vm, s->monitor, producer2_critical, s) == STVM_OK);
    while (!s->goal_reached);
    stvm_semaphore_signal(vm, s->finished);
}

static void test_example1(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    GCHECK(s, stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "producer1", example1_producer1, s,
                         NULL) == STVM_OK);
    GCHECK(s, stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "producer2", example1_producer2, s,
                         NULL) == STVM_OK);
    GCHECK(s, stvm_semaphore_wait(vm, s->finished) == STVM_OK);
    GCHECK(s, stvm_semaphore_wait(vm, s->finished) == STVM_OK);
}

/* MonitorTest>>testExample1: two producers at userBackgroundPriority share a counter in
 * a monitor; one adds only when the counter is a multiple of 5 (waitUntil:), the other
 * only when it is not (waitWhile:), each signalling after its step. Together they must
 * produce exactly 1 .. 1000 in order, and both must finish (the test process waits for
 * two signals of a semaphore). */
Test(MonitorTest, testExample1)
{
    mt s = make();
    cr_assert_eq(stvm_spawn(s.vm, TEST_PRIORITY, "testExample1", test_example1, &s, NULL),
                 STVM_OK);
    run_ok(s.vm);
    ASSERT_GREEN_OK(&s);
    assert_goal_equals_work(&s);
    done_with(&s);
}

/* ---- testExample2 ---------------------------------------------------------------------- */

static void one_more_producer(stvm_vm *vm, void *arg)
{
    ((mt *)arg)->active_producers++;
}

static void one_producer_less(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    s->active_producers--;
    GCHECK(s, stvm_monitor_signal_on(vm, s->monitor, FINISH) >= 0);
}

static void example2_producer(stvm_vm *vm, mt *s, stvm_fn step)
{
    GCHECK(s, stvm_monitor_critical(vm, s->monitor, one_more_producer, s) == STVM_OK);
    do
        GCHECK(s, stvm_monitor_critical(vm, s->monitor, step, s) == STVM_OK);
    while (!s->goal_reached);
    GCHECK(s, stvm_monitor_critical(vm, s->monitor, one_producer_less, s) == STVM_OK);
}

static void example2_producer1(stvm_vm *vm, void *arg)
{
    example2_producer(vm, arg, producer1_critical);
}

static void example2_producer2(stvm_vm *vm, void *arg)
{
    example2_producer(vm, arg, producer2_critical);
}

static bool all_done(stvm_vm *vm, void *arg)
{
    (void)vm;
    mt *s = arg;
    return s->active_producers == 0 && s->goal_reached;
}

static void waits_until_all_done(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    GCHECK(s, stvm_monitor_wait_until_on(vm, s->monitor, FINISH, all_done, s) == STVM_OK);
}

static void test_example2(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    GCHECK(s, stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "producer1", example2_producer1, s,
                         NULL) == STVM_OK);
    GCHECK(s, stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "producer2", example2_producer2, s,
                         NULL) == STVM_OK);
    GCHECK(s, stvm_monitor_critical(vm, s->monitor, waits_until_all_done, s) == STVM_OK);
}

/* MonitorTest>>testExample2: the same two producers, but the test process learns that
 * both are done through the monitor itself: each producer counts itself in and out of
 * activeProducers inside the monitor and signals the #finish event when it leaves, and
 * the test process waits on #finish until no producer is active and the goal is
 * reached. The work must again be exactly 1 .. 1000. */
Test(MonitorTest, testExample2)
{
    mt s = make();
    cr_assert_eq(stvm_spawn(s.vm, TEST_PRIORITY, "testExample2", test_example2, &s, NULL),
                 STVM_OK);
    run_ok(s.vm);
    ASSERT_GREEN_OK(&s);
    cr_assert_eq(s.active_producers, 0);
    cr_assert(s.goal_reached);
    assert_goal_equals_work(&s);
    done_with(&s);
}

/* ---- testWaitMaxMilliseconds ------------------------------------------------------------ */

static void waits_max_10_ms(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    uint64_t t0 = stvm_vm_now_us(vm);
    s->rc = stvm_monitor_wait_timeout_ms(vm, s->monitor, 10);
    s->waited_ms = (stvm_vm_now_us(vm) - t0) / 1000;
    s->depth = stvm_monitor_owner(vm, s->monitor) == stvm_vm_active_process(vm)
                   ? stvm_monitor_depth(vm, s->monitor)
                   : -1;
}

static void test_wait_max_milliseconds(stvm_vm *vm, void *arg)
{
    mt *s = arg;
    GCHECK(s, stvm_monitor_critical(vm, s->monitor, waits_max_10_ms, s) == STVM_OK);
}

/* MonitorTest>>testWaitMaxMilliseconds: waiting at most 10 ms inside the monitor's
 * critical section, with nobody to signal, comes back (it does not hang) and the
 * critical section then ends normally. Here it also answers that it timed out, after
 * 10 ms of the simulated clock, with the monitor held again at the depth it had. */
Test(MonitorTest, testWaitMaxMilliseconds)
{
    mt s = make();
    cr_assert_eq(stvm_spawn(s.vm, TEST_PRIORITY, "testWaitMaxMilliseconds",
                            test_wait_max_milliseconds, &s, NULL),
                 STVM_OK);
    run_ok(s.vm);
    ASSERT_GREEN_OK(&s);
    cr_assert_eq(s.rc, STVM_ETIMEDOUT);
    cr_assert_eq(s.waited_ms, 10);
    cr_assert_eq(s.depth, 1);
    done_with(&s);
}
