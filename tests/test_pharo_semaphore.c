/*
 * Pharo's SemaphoreTest re-expressed against stvm's public API (suite `SemaphoreTest`,
 * one test per Pharo selector). In Pharo the test method runs in the test runner's
 * process at userSchedulingPriority (40); here that part is a green process at
 * STVM_PRIORITY_USER_SCHEDULING named after the selector, and what Pharo asserts in it
 * is recorded in the test's scenario and asserted by the host after stvm_run. Every
 * VM runs on the simulated clock, so Pharo's Delay waits take no wall-clock time.
 *
 * Every test method of Pharo's SemaphoreTest (pharo-project/pharo: the class in
 * src/Kernel-Tests, two methods in src/System-Time-Tests/SemaphoreTest.extension.st;
 * the same 13 selectors in pharo-core 2.0 to 6.0, none removed since):
 *
 *   testAfterCriticalWait                 expressed (below)
 *   testCritical                          expressed
 *   testCriticalIfError                   in part: the error handler around the
 *                                         terminate has no counterpart (no Smalltalk
 *                                         exceptions); what is checked is testCritical's
 *                                         with the terminate one call deeper
 *   testInCriticalWait                    expressed
 *   testMutualExclusion                   expressed, the current form and the older one
 *                                         (pharo-core 2.0 to 6.0, without the two
 *                                         processes waiting for each other to start)
 *   testReturnsAsManyWaitsAsSignalsReceived  expressed
 *   testSchedulesFIFO                     expressed
 *   testSimpleCommunication               expressed
 *   testWaitAndWaitTimeoutTogether        expressed, in the four integer/clock
 *                                         representations
 *   testWaitTimeoutMSecs                  expressed (Pharo 2/3: waitTimeoutMSecs:,
 *                                         now waitTimeoutMilliseconds:; both are
 *                                         stvm_semaphore_wait_timeout_ms)
 *   testWaitTimeoutSecondsOnCompletionOnTimeout  expressed: 0.05 s as 50,000 us, the
 *                                         two blocks as the two branches on the answer
 *   testWaitTimeDuration                  expressed: the Duration as microseconds
 *   testWaitTimeDurationWithCompletionAndTimeoutBlocks  expressed as the one above
 *                                         with the two branches
 *
 * Pharo answers true from a timed wait that timed out and false from one that was
 * signalled; stvm answers STVM_ETIMEDOUT and STVM_OK.
 */
#include "helpers.h"

TestSuite(SemaphoreTest, .timeout = 30);

#define TEST_PRIORITY STVM_PRIORITY_USER_SCHEDULING
/* The most iterations a polling loop of a test process makes before it gives up (a
 * failed check instead of a hung test). */
#define MAX_POLLS 1000

static stvm_vm *sim_vm_us(void) { return vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0); }

/* Pharo's Semaphore forMutualExclusion: a semaphore holding one excess signal. */
static stvm_semaphore *for_mutual_exclusion(stvm_vm *vm)
{
    stvm_semaphore *s = sem_make(vm);
    cr_assert_eq(stvm_semaphore_signal(vm, s), STVM_OK);
    return s;
}

/* Whether p waits on the list of obj (Pharo's `p suspendingList == obj`). */
static bool waits_on(stvm_vm *vm, stvm_process *p, const void *obj)
{
    stvm_process_info info;
    return stvm_process_get_info(vm, p, &info) == STVM_OK &&
           info.state == STVM_PROCESS_WAITING && info.waiting_object == obj;
}

/* The test method's own process, at the runner's priority, named after the selector. */
static void run_test_method(stvm_vm *vm, const char *selector, stvm_fn fn, void *arg)
{
    spawn(vm, TEST_PRIORITY, selector, fn, arg);
    run_ok(vm);
}

/* ---- Semaphore>>critical: and termination ------------------------------------------- */

typedef struct critical_case {
    stvm_vm *vm;
    stvm_semaphore *s;
    stvm_process *p;
    int spawn_rc;
    int polls;                 /* 10 ms Delays the test process waited before p waited */
    bool p_waited_on_s;        /* seen by the test process before it acted */
    int entered;               /* p's critical block ran */
    bool after_terminate;      /* code after a terminate of the active process ran */
    bool critical_returned;    /* p's stvm_semaphore_critical returned */
    int signal_rc, terminate_rc;
    int64_t excess_after;      /* the semaphore's excess signals when the test asserts */
    int bad_line;
} critical_case;

static void empty_block(stvm_vm *vm, void *arg)
{
    (void)vm;
    critical_case *c = arg;
    c->entered++;
}

static void enter_empty_critical(stvm_vm *vm, void *arg)
{
    critical_case *c = arg;
    stvm_semaphore_critical(vm, c->s, empty_block, c);
    c->critical_returned = true;
}

static void after_critical_wait(stvm_vm *vm, void *arg)
{
    critical_case *c = arg;
    c->spawn_rc = stvm_spawn(vm, TEST_PRIORITY - 1, "p", enter_empty_critical, c, &c->p);
    GCHECK(c, c->spawn_rc == STVM_OK);
    while (!waits_on(vm, c->p, c->s) && c->polls < MAX_POLLS) {
        GCHECK(c, stvm_delay_wait_ms(vm, 10) == STVM_OK);
        c->polls++;
    }
    c->p_waited_on_s = waits_on(vm, c->p, c->s);
    /* p is handed the signal but, lower than us, has not run to take it. */
    c->signal_rc = stvm_semaphore_signal(vm, c->s);
    c->terminate_rc = stvm_process_terminate(vm, c->p);
    c->excess_after = stvm_semaphore_excess(vm, c->s);
}

/* SemaphoreTest>>testAfterCriticalWait: a process whose wait at the start of critical:
 * has just been ended by a signal, but which has not yet run, is terminated; the signal
 * it was handed must not be lost: the semaphore ends with one excess signal (stvm's
 * give-back rule, issue 17). */
Test(SemaphoreTest, testAfterCriticalWait)
{
    critical_case c = {.vm = sim_vm_us()};
    c.s = sem_make(c.vm);
    run_test_method(c.vm, "testAfterCriticalWait", after_critical_wait, &c);
    ASSERT_GREEN_OK(&c);
    cr_assert(c.p_waited_on_s, "p never waited on the semaphore (%d polls)", c.polls);
    cr_assert_geq(c.polls, 1, "p, below the test process, ran only when it slept");
    cr_assert_eq(c.signal_rc, STVM_OK);
    cr_assert_eq(c.terminate_rc, STVM_OK);
    cr_assert_eq(c.excess_after, 1, "the handed signal went back to the semaphore");
    cr_assert_eq(c.entered, 0, "p never ran its block");
    cr_assert(!c.critical_returned);
    cr_assert_eq(state_of(c.vm, c.p), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stvm_semaphore_excess(c.vm, c.s), 1);
    stvm_process_release(c.vm, c.p);
    SCENARIO_DONE(&c);
}

static void in_critical_wait(stvm_vm *vm, void *arg)
{
    critical_case *c = arg;
    c->spawn_rc = stvm_spawn(vm, TEST_PRIORITY, "p", enter_empty_critical, c, &c->p);
    GCHECK(c, c->spawn_rc == STVM_OK);
    GCHECK(c, stvm_yield(vm) == STVM_OK);
    c->p_waited_on_s = waits_on(vm, c->p, c->s);
    c->terminate_rc = stvm_process_terminate(vm, c->p);
    c->excess_after = stvm_semaphore_excess(vm, c->s);
}

/* SemaphoreTest>>testInCriticalWait: a process still waiting at the start of critical:
 * (no signal came) is terminated; leaving, it must not signal the semaphore it never
 * acquired: no excess signal afterwards. */
Test(SemaphoreTest, testInCriticalWait)
{
    critical_case c = {.vm = sim_vm_us()};
    c.s = sem_make(c.vm);
    run_test_method(c.vm, "testInCriticalWait", in_critical_wait, &c);
    ASSERT_GREEN_OK(&c);
    cr_assert(c.p_waited_on_s, "after one yield p waits on the semaphore");
    cr_assert_eq(c.terminate_rc, STVM_OK);
    cr_assert_eq(c.excess_after, 0, "a process that never entered does not signal");
    cr_assert_eq(c.entered, 0);
    cr_assert(!c.critical_returned);
    cr_assert_eq(stvm_semaphore_excess(c.vm, c.s), 0);
    stvm_process_release(c.vm, c.p);
    SCENARIO_DONE(&c);
}

/* Pharo's criticalError: the active process terminates itself. */
static void critical_error(stvm_vm *vm, critical_case *c)
{
    c->entered++;
    stvm_process_terminate(vm, stvm_vm_active_process(vm));
    c->after_terminate = true;   /* never: terminating the active process does not return */
}

static void terminating_block(stvm_vm *vm, void *arg) { critical_error(vm, arg); }

/* Stands for the block that wraps criticalError in an error handler: the terminate is
 * one call deeper, and nothing after it (where a handler would act) may run. */
static void terminating_block_in_handler(stvm_vm *vm, void *arg)
{
    critical_case *c = arg;
    critical_error(vm, c);
    c->after_terminate = true;
}

static void critical_terminating(stvm_vm *vm, void *arg)
{
    critical_case *c = arg;
    stvm_semaphore_critical(vm, c->s, terminating_block, c);
    c->critical_returned = true;
}

static void critical_terminating_in_handler(stvm_vm *vm, void *arg)
{
    critical_case *c = arg;
    stvm_semaphore_critical(vm, c->s, terminating_block_in_handler, c);
    c->critical_returned = true;
}

/* Forks the critical section at userInterruptPriority: above the test process, so it
 * runs to its end (its termination) before the spawn returns. */
static void critical_then_look(stvm_vm *vm, critical_case *c, stvm_fn body)
{
    c->spawn_rc = stvm_spawn(vm, STVM_PRIORITY_USER_INTERRUPT, "lock critical", body, c,
                             &c->p);
    GCHECK(c, c->spawn_rc == STVM_OK);
    c->excess_after = stvm_semaphore_excess(vm, c->s);   /* Pharo's isSignaled */
}

static void test_critical(stvm_vm *vm, void *arg) { critical_then_look(vm, arg, critical_terminating); }

static void test_critical_if_error(stvm_vm *vm, void *arg)
{
    critical_then_look(vm, arg, critical_terminating_in_handler);
}

static void assert_critical_released(critical_case *c)
{
    ASSERT_GREEN_OK(c);
    cr_assert_eq(c->entered, 1, "the critical block ran");
    cr_assert(!c->after_terminate);
    cr_assert(!c->critical_returned);
    cr_assert_eq(c->excess_after, 1, "the lock is signalled again after the spawn returned");
    cr_assert_eq(state_of(c->vm, c->p), STVM_PROCESS_TERMINATED);
    stvm_process_release(c->vm, c->p);
    SCENARIO_DONE(c);
}

/* SemaphoreTest>>testCritical: a higher-priority process terminates itself inside
 * critical: of a mutual-exclusion semaphore; by the time the fork returns the
 * semaphore is signalled again (the section released it on the way out). */
Test(SemaphoreTest, testCritical)
{
    critical_case c = {.vm = sim_vm_us()};
    c.s = for_mutual_exclusion(c.vm);
    run_test_method(c.vm, "testCritical", test_critical, &c);
    assert_critical_released(&c);
}

/* SemaphoreTest>>testCriticalIfError: as testCritical, with the self-termination
 * wrapped in an error handler inside the section; the semaphore must still be
 * released. In part: stvm has no exceptions, so the handler is only the extra call
 * level (terminating raises no Error in Pharo either, so its handler never runs). */
Test(SemaphoreTest, testCriticalIfError)
{
    critical_case c = {.vm = sim_vm_us()};
    c.s = for_mutual_exclusion(c.vm);
    run_test_method(c.vm, "testCriticalIfError", test_critical_if_error, &c);
    assert_critical_released(&c);
}

/* ---- mutual exclusion ----------------------------------------------------------------- */

enum { START1 = 1, CRIT1, START2, END1, CRIT2, END2 };

typedef struct mutual {
    stvm_vm *vm;
    stvm_semaphore *lock;
    bool older_form;     /* pharo-core 2.0 to 6.0: nobody waits for the other to start */
    trace_log steps;
    int polls;
    int bad_line;
} mutual;

static bool includes(const trace_log *t, int step)
{
    for (int i = 0; i < t->n; i++)
        if (t->ev[i] == step)
            return true;
    return false;
}

/* Yield until step is in the log (Pharo's `[steps includes: x] whileFalse: [yield]`). */
static void yield_until(stvm_vm *vm, mutual *m, int step)
{
    while (!includes(&m->steps, step) && m->polls++ < MAX_POLLS)
        GCHECK(m, stvm_yield(vm) == STVM_OK);
    GCHECK(m, includes(&m->steps, step));
}

static void section1(stvm_vm *vm, void *arg)
{
    mutual *m = arg;
    trace_add(&m->steps, CRIT1);
    if (m->older_form)
        GCHECK(m, stvm_yield(vm) == STVM_OK);
    else
        yield_until(vm, m, START2);
    trace_add(&m->steps, END1);
}

static void section2(stvm_vm *vm, void *arg)
{
    mutual *m = arg;
    trace_add(&m->steps, CRIT2);
    GCHECK(m, stvm_yield(vm) == STVM_OK);
    trace_add(&m->steps, END2);
}

static void process1(stvm_vm *vm, void *arg)
{
    mutual *m = arg;
    trace_add(&m->steps, START1);
    GCHECK(m, stvm_semaphore_critical(vm, m->lock, section1, m) == STVM_OK);
}

static void process2(stvm_vm *vm, void *arg)
{
    mutual *m = arg;
    if (!m->older_form)
        yield_until(vm, m, START1);
    trace_add(&m->steps, START2);
    GCHECK(m, stvm_semaphore_critical(vm, m->lock, section2, m) == STVM_OK);
}

static void test_mutual_exclusion(stvm_vm *vm, void *arg)
{
    mutual *m = arg;
    GCHECK(m, stvm_spawn(vm, TEST_PRIORITY, "process1", process1, m, NULL) == STVM_OK);
    GCHECK(m, stvm_spawn(vm, TEST_PRIORITY, "process2", process2, m, NULL) == STVM_OK);
    while (m->steps.n < 6 && m->polls++ < MAX_POLLS)
        GCHECK(m, stvm_yield(vm) == STVM_OK);
}

/* SemaphoreTest>>testMutualExclusion: two processes of the test's priority each run a
 * critical: section of one mutual-exclusion semaphore, yielding inside it; the second
 * starts while the first is inside, and enters only after the first has left. Both
 * the current form (each process yields until the other has started) and the older
 * one are run; both give the same order. */
Test(SemaphoreTest, testMutualExclusion)
{
    static const int want[] = {START1, CRIT1, START2, END1, CRIT2, END2};
    for (int older = 0; older <= 1; older++) {
        mutual m = {.vm = sim_vm_us(), .older_form = older};
        m.lock = for_mutual_exclusion(m.vm);
        run_test_method(m.vm, "testMutualExclusion", test_mutual_exclusion, &m);
        ASSERT_GREEN_OK(&m);
        trace_expect(&m.steps, want, 6);
        cr_assert_eq(stvm_semaphore_excess(m.vm, m.lock), 1, "the lock is free again");
        SCENARIO_DONE(&m);
    }
}

/* ---- signals and waits ------------------------------------------------------------------ */

typedef struct comm {
    stvm_vm *vm;
    stvm_semaphore *s;
    bool started, returned_once, returned_twice;
    bool higher_resumed;
    bool seen[8];        /* what the test process saw, in the order it looked */
    int nseen;
    int bad_line;
} comm;

static void look(comm *c, bool v)
{
    if (c->nseen < 8)
        c->seen[c->nseen++] = v;
}

static void waits_twice(stvm_vm *vm, void *arg)
{
    comm *c = arg;
    GCHECK(c, stvm_semaphore_wait(vm, c->s) == STVM_OK);
    c->returned_once = true;
    GCHECK(c, stvm_semaphore_wait(vm, c->s) == STVM_OK);
    c->returned_twice = true;
}

static void returns_as_many_waits(stvm_vm *vm, void *arg)
{
    comm *c = arg;
    GCHECK(c, stvm_spawn(vm, TEST_PRIORITY, "waiter", waits_twice, c, NULL) == STVM_OK);
    GCHECK(c, stvm_yield(vm) == STVM_OK);
    look(c, c->returned_once);
    GCHECK(c, stvm_semaphore_signal(vm, c->s) == STVM_OK);
    GCHECK(c, stvm_yield(vm) == STVM_OK);
    look(c, c->returned_once);
    look(c, c->returned_twice);
    GCHECK(c, stvm_semaphore_signal(vm, c->s) == STVM_OK);
    GCHECK(c, stvm_yield(vm) == STVM_OK);
    look(c, c->returned_twice);
}

/* SemaphoreTest>>testReturnsAsManyWaitsAsSignalsReceived: a process that waits twice
 * gets past one wait per signal: not before the first signal, past the first wait
 * only after it, past the second after the second. */
Test(SemaphoreTest, testReturnsAsManyWaitsAsSignalsReceived)
{
    comm c = {.vm = sim_vm_us()};
    c.s = sem_make(c.vm);
    run_test_method(c.vm, "testReturnsAsManyWaitsAsSignalsReceived", returns_as_many_waits, &c);
    ASSERT_GREEN_OK(&c);
    cr_assert_eq(c.nseen, 4);
    cr_assert(!c.seen[0], "no signal yet: the first wait has not returned");
    cr_assert(c.seen[1], "one signal: the first wait returned");
    cr_assert(!c.seen[2], "one signal: the second wait has not returned");
    cr_assert(c.seen[3], "two signals: the second wait returned");
    cr_assert_eq(stvm_semaphore_excess(c.vm, c.s), 0);
    SCENARIO_DONE(&c);
}

static void waits_then_marks(stvm_vm *vm, void *arg)
{
    comm *c = arg;
    GCHECK(c, stvm_semaphore_wait(vm, c->s) == STVM_OK);
    c->returned_once = true;   /* the longest waiter */
}

static void waits_then_marks_higher(stvm_vm *vm, void *arg)
{
    comm *c = arg;
    GCHECK(c, stvm_semaphore_wait(vm, c->s) == STVM_OK);
    c->higher_resumed = true;
}

static void schedules_fifo(stvm_vm *vm, void *arg)
{
    comm *c = arg;
    /* Both are higher than the test process: each runs to its wait before its spawn
     * returns, the lower one first. */
    GCHECK(c, stvm_spawn(vm, TEST_PRIORITY + 10, "waits longest", waits_then_marks, c,
                         NULL) == STVM_OK);
    GCHECK(c, stvm_spawn(vm, TEST_PRIORITY + 20, "higher priority", waits_then_marks_higher,
                         c, NULL) == STVM_OK);
    look(c, c->returned_once);
    look(c, c->higher_resumed);
    GCHECK(c, stvm_semaphore_signal(vm, c->s) == STVM_OK);
    look(c, c->returned_once);
    look(c, c->higher_resumed);
    GCHECK(c, stvm_semaphore_signal(vm, c->s) == STVM_OK);
    look(c, c->higher_resumed);
}

/* SemaphoreTest>>testSchedulesFIFO: a signal wakes the process that has waited
 * longest, whatever the priorities: the first waiter (priority 50) before the later,
 * higher one (60). Each woken waiter preempts the signaller, so the test sees the
 * effect as soon as its signal returns. */
Test(SemaphoreTest, testSchedulesFIFO)
{
    comm c = {.vm = sim_vm_us()};
    c.s = sem_make(c.vm);
    run_test_method(c.vm, "testSchedulesFIFO", schedules_fifo, &c);
    ASSERT_GREEN_OK(&c);
    cr_assert_eq(c.nseen, 5);
    cr_assert(!c.seen[0] && !c.seen[1], "both wait before any signal");
    cr_assert(c.seen[2], "the first signal resumed the longest waiter");
    cr_assert(!c.seen[3], "... and not the higher-priority one");
    cr_assert(c.seen[4], "the second signal resumed the higher-priority one");
    SCENARIO_DONE(&c);
}

static void starts_waits_finishes(stvm_vm *vm, void *arg)
{
    comm *c = arg;
    c->started = true;
    GCHECK(c, stvm_semaphore_wait(vm, c->s) == STVM_OK);
    c->returned_once = true;
}

static void simple_communication(stvm_vm *vm, void *arg)
{
    comm *c = arg;
    GCHECK(c, stvm_spawn(vm, TEST_PRIORITY, "block", starts_waits_finishes, c, NULL) == STVM_OK);
    GCHECK(c, stvm_yield(vm) == STVM_OK);
    look(c, c->started);
    look(c, c->returned_once);
    GCHECK(c, stvm_semaphore_signal(vm, c->s) == STVM_OK);
    GCHECK(c, stvm_yield(vm) == STVM_OK);
    look(c, c->returned_once);
}

/* SemaphoreTest>>testSimpleCommunication: a process that waits does not go on until a
 * signal is sent: started but not finished after a yield, finished after a signal and
 * a yield. */
Test(SemaphoreTest, testSimpleCommunication)
{
    comm c = {.vm = sim_vm_us()};
    c.s = sem_make(c.vm);
    run_test_method(c.vm, "testSimpleCommunication", simple_communication, &c);
    ASSERT_GREEN_OK(&c);
    cr_assert_eq(c.nseen, 3);
    cr_assert(c.seen[0], "the block started");
    cr_assert(!c.seen[1], "and waits");
    cr_assert(c.seen[2], "the signal let it finish");
    SCENARIO_DONE(&c);
}

/* ---- timed waits -------------------------------------------------------------------------- */

enum { VALUE_NONE, VALUE_WAIT, VALUE_WAIT_TIMEOUT };

typedef struct together {
    stvm_vm *vm;
    stvm_semaphore *s;
    stvm_process *waiter, *timed;
    int value;                 /* Pharo's `value`: who wrote last */
    int wait_rc, timed_rc;
    uint64_t start_us, timed_out_at_us, waiter_done_at_us;
    int polls;
    int bad_line;
} together;

static void plain_wait(stvm_vm *vm, void *arg)
{
    together *t = arg;
    t->wait_rc = stvm_semaphore_wait(vm, t->s);
    t->waiter_done_at_us = stvm_vm_now_us(vm);
    t->value = VALUE_WAIT;
}

static void timed_wait(stvm_vm *vm, void *arg)
{
    together *t = arg;
    t->timed_rc = stvm_semaphore_wait_timeout_ms(vm, t->s, 50);
    t->timed_out_at_us = stvm_vm_now_us(vm);
    t->value = VALUE_WAIT_TIMEOUT;
}

static void wait_and_wait_timeout(stvm_vm *vm, void *arg)
{
    together *t = arg;
    t->start_us = stvm_vm_now_us(vm);
    GCHECK(t, stvm_spawn(vm, TEST_PRIORITY, "wait", plain_wait, t, &t->waiter) == STVM_OK);
    GCHECK(t, stvm_spawn(vm, TEST_PRIORITY, "waitTimeout", timed_wait, t, &t->timed) ==
                  STVM_OK);
    GCHECK(t, stvm_delay_wait_ms(vm, 100) == STVM_OK);   /* the timed wait runs out */
    GCHECK(t, stvm_semaphore_signal(vm, t->s) == STVM_OK);
    while (!(gstate(vm, t->waiter) == STVM_PROCESS_TERMINATED &&
             gstate(vm, t->timed) == STVM_PROCESS_TERMINATED) &&
           t->polls++ < MAX_POLLS)
        GCHECK(t, stvm_delay_wait_ms(vm, 100) == STVM_OK);
}

/* SemaphoreTest>>testWaitAndWaitTimeoutTogether: one process waits on a semaphore
 * without a limit, another with a 50 ms limit; after 100 ms (the timed wait has run
 * out) one signal comes: it must go to the plain waiter, which finishes last, since the
 * timed-out waiter left the semaphore's list. Run in each Delay scheduler and integer
 * width. */
Test(SemaphoreTest, testWaitAndWaitTimeoutTogether)
{
    for (int r = 0; r < NREPS; r++) {
        together t = {.vm = rep_vm(&REPS[r])};
        t.s = sem_make(t.vm);
        run_test_method(t.vm, "testWaitAndWaitTimeoutTogether", wait_and_wait_timeout, &t);
        ASSERT_GREEN_OK(&t);
        cr_assert_eq(t.value, VALUE_WAIT, "%s: the plain waiter wrote last", REPS[r].name);
        cr_assert_eq(t.timed_rc, STVM_ETIMEDOUT, "%s", REPS[r].name);
        cr_assert_eq(t.wait_rc, STVM_OK, "%s", REPS[r].name);
        uint64_t timed_out = t.timed_out_at_us - t.start_us;
        /* the millisecond scheduler counts ticks: up to 1 ms early by the us clock */
        cr_assert(timed_out >= (is_ms(&REPS[r]) ? 49000u : 50000u) && timed_out < 51000u,
                  "%s: timed out after %llu us", REPS[r].name, (unsigned long long)timed_out);
        cr_assert_geq(t.waiter_done_at_us - t.start_us, 99000u, "%s", REPS[r].name);
        cr_assert_eq(stvm_semaphore_excess(t.vm, t.s), 0, "%s: the signal was taken",
                     REPS[r].name);
        stvm_process_release(t.vm, t.waiter);
        stvm_process_release(t.vm, t.timed);
        SCENARIO_DONE(&t);
    }
}

/* The two timed waits every remaining test makes: on a new semaphore (it must time out
 * after the whole duration) and on one already signalled (it must answer at once,
 * taking the signal). `branch` stands for the onCompletion:/onTimeout: blocks: the
 * value of the branch the answer selects. */
enum { NO_BRANCH, COMPLETED, TIMEOUT };

typedef struct timed {
    stvm_vm *vm;
    bool in_us;               /* the wait is given in microseconds */
    int64_t duration;         /* ms or us */
    int rc[2];                /* new semaphore, signalled semaphore */
    int branch[2];
    uint64_t took_us[2];
    int64_t excess_after[2];
    int bad_line;
} timed;

static int timed_wait_on(stvm_vm *vm, timed *t, stvm_semaphore *s)
{
    return t->in_us ? stvm_semaphore_wait_timeout_us(vm, s, t->duration)
                    : stvm_semaphore_wait_timeout_ms(vm, s, t->duration);
}

static void two_timed_waits(stvm_vm *vm, void *arg)
{
    timed *t = arg;
    for (int i = 0; i < 2; i++) {
        stvm_semaphore *s = NULL;
        GCHECK(t, stvm_semaphore_new(vm, &s) == STVM_OK);
        if (i == 1)
            GCHECK(t, stvm_semaphore_signal(vm, s) == STVM_OK);
        uint64_t t0 = stvm_vm_now_us(vm);
        t->rc[i] = timed_wait_on(vm, t, s);
        t->took_us[i] = stvm_vm_now_us(vm) - t0;
        t->branch[i] = t->rc[i] == STVM_ETIMEDOUT ? TIMEOUT
                       : t->rc[i] == STVM_OK      ? COMPLETED
                                                  : NO_BRANCH;
        t->excess_after[i] = stvm_semaphore_excess(vm, s);
        GCHECK(t, stvm_semaphore_free(vm, s) == STVM_OK);
    }
}

static void run_two_timed_waits(const char *selector, bool in_us, int64_t duration)
{
    timed t = {.vm = sim_vm_us(), .in_us = in_us, .duration = duration};
    run_test_method(t.vm, selector, two_timed_waits, &t);
    ASSERT_GREEN_OK(&t);
    cr_assert_eq(t.rc[0], STVM_ETIMEDOUT, "a new semaphore: timed out (Pharo: true)");
    cr_assert_eq(t.branch[0], TIMEOUT);
    cr_assert(t.took_us[0] >= 50000u && t.took_us[0] < 51000u, "took %llu us",
              (unsigned long long)t.took_us[0]);
    cr_assert_eq(t.excess_after[0], 0);
    cr_assert_eq(t.rc[1], STVM_OK, "a signalled semaphore: not timed out (Pharo: false)");
    cr_assert_eq(t.branch[1], COMPLETED);
    cr_assert_eq(t.took_us[1], 0, "the excess signal ends the wait at once");
    cr_assert_eq(t.excess_after[1], 0, "and is taken");
    SCENARIO_DONE(&t);
}

/* SemaphoreTest>>testWaitTimeoutMSecs: a 50 ms timed wait on a new semaphore answers
 * that it timed out; on a semaphore holding a signal it answers that it did not. */
Test(SemaphoreTest, testWaitTimeoutMSecs)
{
    run_two_timed_waits("testWaitTimeoutMSecs", false, 50);
}

/* SemaphoreTest>>testWaitTimeoutSecondsOnCompletionOnTimeout: the same with 0.05 s and
 * a block for each outcome: the timeout block's value when it timed out, the
 * completion block's when signalled. */
Test(SemaphoreTest, testWaitTimeoutSecondsOnCompletionOnTimeout)
{
    run_two_timed_waits("testWaitTimeoutSecondsOnCompletionOnTimeout", true, 50000);
}

/* SemaphoreTest>>testWaitTimeDuration (System-Time-Tests): the same with the limit
 * given as a Duration of 50 ms. */
Test(SemaphoreTest, testWaitTimeDuration)
{
    run_two_timed_waits("testWaitTimeDuration", true, 50 * 1000);
}

/* SemaphoreTest>>testWaitTimeDurationWithCompletionAndTimeoutBlocks
 * (System-Time-Tests): a Duration of 50 ms and a block for each outcome. */
Test(SemaphoreTest, testWaitTimeDurationWithCompletionAndTimeoutBlocks)
{
    run_two_timed_waits("testWaitTimeDurationWithCompletionAndTimeoutBlocks", true, 50 * 1000);
}
