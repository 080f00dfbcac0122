/*
 * Pharo's MutexTest re-expressed against stvm's public API (suite `MutexTest`, one test
 * per Pharo selector). As in Pharo, the test method runs at userSchedulingPriority (40)
 * (here a green process named after the selector) and forks the processes it watches;
 * its helpers that poll a process every 10 ms until it waits or has finished, and its
 * tearDown that terminates every process it forked, are here too. What Pharo asserts is
 * recorded in the scenario and asserted by the host after stvm_run, on the simulated
 * clock.
 *
 * Every test method of Pharo's MutexTest (pharo-project/pharo
 * src/Kernel-Extended-Tests/MutexTest.class.st, earlier Kernel-Tests-Extended and
 * Kernel-Tests; pharo-core 5.0 and 6.0 Kernel-Tests.package; none removed since). Pharo
 * 5/6 had the same seven selectors in an older form that paced the processes with
 * short Delays instead of polling; each test below runs the current form and then that
 * older one:
 *
 *   testExecutionCriticalSection          expressed (the block's value comes back
 *                                         through fn's argument; one form only)
 *   testFailedCriticalSectionShouldUnblockWaitingOne  in part: the error raised inside
 *                                         the section and caught outside it has no
 *                                         counterpart (no Smalltalk exceptions); the
 *                                         section ends where the error would be raised
 *   testTerminatedCriticalSectionShouldUnblockWaitingOne  expressed, both forms
 *   testTerminatingBlockedCriticalSectionShouldNotUnblockAnotherWaitingSection
 *                                         expressed, both forms
 *   testTerminatingBlockedCriticalWhichWasSignalledButNotResumedYet  expressed, both
 *                                         forms (the older one with its controlling
 *                                         process that suspends itself)
 *   testTwoCriticalsShouldWaitEachOther   expressed, both forms
 *   testTwoRecursiveCriticalsShouldNotWaitEachOther  expressed, both forms
 *
 * Pharo's Mutex>>critical: is a Semaphore>>critical: plus an owner; stvm's mutex is
 * the VM's owned mutex (stvm_mutex_critical). Besides what Pharo asserts, some tests
 * check who owns the mutex at the points that matter (stvm_mutex_owner).
 */
#include "helpers.h"

TestSuite(MutexTest, .timeout = 30);

#define TEST_PRIORITY STVM_PRIORITY_USER_SCHEDULING
#define MAX_POLLS 1000
#define MAX_FORKED 4

typedef struct mutex_case {
    stvm_vm *vm;
    const char *selector;
    stvm_mutex *mutex;
    stvm_semaphore *hold;              /* Pharo's semaphoreToHoldMutex */
    stvm_process *forked[MAX_FORKED];  /* in fork order, as Pharo's forkedProcesses */
    int nforked;
    stvm_process *controlling;         /* the older form's controlling process */
    stvm_process *me;                  /* the test process (its handle is not held) */
    int64_t hold_ms;                   /* older form: how long the holder holds */
    bool first_executed;               /* the holder's section got to its end */
    bool first_executed_first;         /* ... before the last section ran */
    bool last_executed;
    bool should_not_happen;            /* a section Pharo expects never to run */
    bool executed;
    bool older_form;
    int result, critical_rc;
    stvm_process *owner_inside, *owner_nested, *owner_after;
    stvm_process *owner_after_terminate;
    bool last_still_waits;             /* after a waiter before it was terminated */
    bool controlling_suspended;
    int polls;
    int bad_line;
} mutex_case;

/* ---- Pharo's helpers ------------------------------------------------------------------- */

static stvm_process *fork_at(stvm_vm *vm, mutex_case *c, stvm_fn fn, int priority)
{
    stvm_process *p = NULL;
    GCHECK(c, c->nforked < MAX_FORKED);
    GCHECK(c, stvm_spawn(vm, priority, c->selector, fn, c, &p) == STVM_OK);
    if (p && c->nforked < MAX_FORKED)
        c->forked[c->nforked++] = p;
    return p;
}

static stvm_process *fork_(stvm_vm *vm, mutex_case *c, stvm_fn fn)
{
    return fork_at(vm, c, fn, TEST_PRIORITY);
}

static stvm_process *last_forked(mutex_case *c) { return c->nforked ? c->forked[c->nforked - 1] : NULL; }

/* Pharo's waitFor:: sleep 10 ms, then look, until the condition holds. */
static void wait_for_state(stvm_vm *vm, mutex_case *c, stvm_process *p, stvm_process_state st)
{
    int polls = 0;
    do {
        GCHECK(c, stvm_delay_wait_ms(vm, 10) == STVM_OK);
    } while (gstate(vm, p) != st && ++polls < MAX_POLLS);
    GCHECK(c, gstate(vm, p) == st);
}

/* waitLastProcessLock: the last forked process waits on a list (the mutex, or the
 * semaphore inside its section). */
static void wait_last_process_lock(stvm_vm *vm, mutex_case *c)
{
    wait_for_state(vm, c, last_forked(c), STVM_PROCESS_WAITING);
}

static void wait_last_process_terminate(stvm_vm *vm, mutex_case *c)
{
    wait_for_state(vm, c, last_forked(c), STVM_PROCESS_TERMINATED);
}

/* tearDown: terminate what the test forked and left unfinished. */
static void tear_down(stvm_vm *vm, mutex_case *c)
{
    for (int i = 0; i < c->nforked; i++)
        if (gstate(vm, c->forked[i]) != STVM_PROCESS_TERMINATED)
            GCHECK(c, stvm_process_terminate(vm, c->forked[i]) == STVM_OK);
}

typedef void (*test_body)(stvm_vm *vm, mutex_case *c);

typedef struct method {
    mutex_case *c;
    test_body body;
} method;

static void test_method(stvm_vm *vm, void *arg)
{
    method *m = arg;
    m->body(vm, m->c);
    tear_down(vm, m->c);
}

/* setUp, the test method in its own process, tearDown; then the host's checks that
 * every forked process finished and the mutex is free. The caller asserts the rest and
 * calls finish(). */
static void run_case(mutex_case *c, const char *selector, bool older, test_body body)
{
    *c = (mutex_case){.vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0),
                      .selector = selector,
                      .older_form = older};
    cr_assert_eq(stvm_mutex_new(c->vm, &c->mutex), STVM_OK);
    c->hold = sem_make(c->vm);
    method m = {c, body};
    spawn(c->vm, TEST_PRIORITY, selector, test_method, &m);
    run_ok(c->vm);
    ASSERT_GREEN_OK(c);
    for (int i = 0; i < c->nforked; i++)
        cr_assert_eq(state_of(c->vm, c->forked[i]), STVM_PROCESS_TERMINATED);
    if (c->controlling)
        cr_assert_eq(state_of(c->vm, c->controlling), STVM_PROCESS_TERMINATED);
    cr_assert_null(stvm_mutex_owner(c->vm, c->mutex), "the mutex is free at the end");
}

static void finish(mutex_case *c)
{
    for (int i = 0; i < c->nforked; i++)
        cr_assert_eq(stvm_process_release(c->vm, c->forked[i]), STVM_OK);
    if (c->controlling)
        cr_assert_eq(stvm_process_release(c->vm, c->controlling), STVM_OK);
    cr_assert_eq(stvm_mutex_free(c->vm, c->mutex), STVM_OK);
    SCENARIO_DONE(c);
}

/* ---- the sections the forked processes run ---------------------------------------------- */

/* Holds the mutex until `hold` is signalled (older form: for hold_ms). */
static void hold_then_mark_first(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    if (c->older_form)
        GCHECK(c, stvm_delay_wait_ms(vm, c->hold_ms) == STVM_OK);
    else
        GCHECK(c, stvm_semaphore_wait(vm, c->hold) == STVM_OK);
    c->first_executed = true;
    c->first_executed_first = !c->last_executed;
}

static void holds_then_marks_first(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    GCHECK(c, stvm_mutex_critical(vm, c->mutex, hold_then_mark_first, c) == STVM_OK);
}

/* Held until terminated: what comes after the wait must not run. */
static void hold_until_terminated(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    if (c->older_form)
        stvm_delay_wait_ms(vm, 10 * 1000);
    else
        stvm_semaphore_wait(vm, c->hold);
    c->should_not_happen = true;
}

static void holds_until_terminated(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    stvm_mutex_critical(vm, c->mutex, hold_until_terminated, c);
    c->should_not_happen = true;
}

static void mark_last(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    c->last_executed = true;
    c->owner_inside = stvm_mutex_owner(vm, c->mutex);
}

static void last_critical(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    GCHECK(c, stvm_mutex_critical(vm, c->mutex, mark_last, c) == STVM_OK);
}

static void must_not_run(stvm_vm *vm, void *arg)
{
    (void)vm;
    mutex_case *c = arg;
    c->should_not_happen = true;
}

static void critical_that_must_not_run(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    stvm_mutex_critical(vm, c->mutex, must_not_run, c);
    c->should_not_happen = true;
}

/* ---- testExecutionCriticalSection ----------------------------------------------------------- */

static void answer_result(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    c->result = 42;
    c->owner_inside = stvm_mutex_owner(vm, c->mutex);
}

static void execution_critical_section(stvm_vm *vm, mutex_case *c)
{
    c->critical_rc = stvm_mutex_critical(vm, c->mutex, answer_result, c);
    c->owner_after = stvm_mutex_owner(vm, c->mutex);
    c->me = stvm_vm_active_process(vm);
}

/* MutexTest>>testExecutionCriticalSection: critical: runs its block and answers the
 * block's value. */
Test(MutexTest, testExecutionCriticalSection)
{
    mutex_case c;
    run_case(&c, "testExecutionCriticalSection", false, execution_critical_section);
    cr_assert_eq(c.critical_rc, STVM_OK);
    cr_assert_eq(c.result, 42, "the block's value came back");
    cr_assert_eq(c.owner_inside, c.me, "the test process owned it inside");
    cr_assert_null(c.owner_after);
    finish(&c);
}

/* ---- testFailedCriticalSectionShouldUnblockWaitingOne --------------------------------------- */

/* The section that fails: where Pharo raises its error (caught outside the critical:),
 * C can only leave the section. */
static void hold_then_fail(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    if (c->older_form)
        GCHECK(c, stvm_delay_wait_ms(vm, 5) == STVM_OK);
    else
        GCHECK(c, stvm_semaphore_wait(vm, c->hold) == STVM_OK);
    c->first_executed = true;
}

static void failing_critical(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    GCHECK(c, stvm_mutex_critical(vm, c->mutex, hold_then_fail, c) == STVM_OK);
}

static void failed_critical_section(stvm_vm *vm, mutex_case *c)
{
    fork_(vm, c, failing_critical);
    wait_last_process_lock(vm, c);
    fork_(vm, c, last_critical);
    wait_last_process_lock(vm, c);
    GCHECK(c, stvm_semaphore_signal(vm, c->hold) == STVM_OK);
    wait_last_process_terminate(vm, c);
}

static void older_failed_critical_section(stvm_vm *vm, mutex_case *c)
{
    fork_(vm, c, failing_critical);
    fork_(vm, c, last_critical);
    GCHECK(c, stvm_delay_wait_ms(vm, 10) == STVM_OK);
}

/* MutexTest>>testFailedCriticalSectionShouldUnblockWaitingOne: a section that ends in
 * failure while another process waits for the mutex must still let that one in. In
 * part: the failure is only the section's end (no exceptions). */
Test(MutexTest, testFailedCriticalSectionShouldUnblockWaitingOne)
{
    for (int older = 0; older <= 1; older++) {
        mutex_case c;
        run_case(&c, "testFailedCriticalSectionShouldUnblockWaitingOne", older,
                 older ? older_failed_critical_section : failed_critical_section);
        cr_assert(c.first_executed);
        cr_assert(c.last_executed, "the waiting section ran (%s form)",
                  older ? "older" : "current");
        cr_assert_eq(c.owner_inside, c.forked[1]);
        finish(&c);
    }
}

/* ---- testTerminatedCriticalSectionShouldUnblockWaitingOne ------------------------------------ */

static void terminated_critical_section(stvm_vm *vm, mutex_case *c)
{
    stvm_process *holding = fork_(vm, c, holds_until_terminated);
    if (!c->older_form)
        wait_last_process_lock(vm, c);
    fork_(vm, c, last_critical);
    if (c->older_form)
        GCHECK(c, stvm_delay_wait_ms(vm, 10) == STVM_OK);
    else
        wait_last_process_lock(vm, c);
    GCHECK(c, stvm_process_terminate(vm, holding) == STVM_OK);
    c->owner_after_terminate = stvm_mutex_owner(vm, c->mutex);
    if (c->older_form)
        GCHECK(c, stvm_delay_wait_ms(vm, 10) == STVM_OK);
    else
        wait_last_process_terminate(vm, c);
}

/* MutexTest>>testTerminatedCriticalSectionShouldUnblockWaitingOne: terminating the
 * process inside the section (waiting there) releases the mutex to the process
 * waiting for it, which then runs its section. */
Test(MutexTest, testTerminatedCriticalSectionShouldUnblockWaitingOne)
{
    for (int older = 0; older <= 1; older++) {
        mutex_case c;
        run_case(&c, "testTerminatedCriticalSectionShouldUnblockWaitingOne", older,
                 terminated_critical_section);
        cr_assert(!c.should_not_happen, "the terminated section went no further");
        cr_assert(c.last_executed, "the waiting section ran (%s form)",
                  older ? "older" : "current");
        cr_assert_eq(c.owner_after_terminate, c.forked[1], "handed to the waiter at once");
        finish(&c);
    }
}

/* ---- testTerminatingBlockedCriticalSectionShouldNotUnblockAnotherWaitingSection -------------- */

static void terminating_blocked_section(stvm_vm *vm, mutex_case *c)
{
    c->hold_ms = 10;
    fork_(vm, c, holds_then_marks_first);
    if (!c->older_form)
        wait_last_process_lock(vm, c);
    stvm_process *first_waiting = fork_(vm, c, critical_that_must_not_run);
    if (!c->older_form)
        wait_last_process_lock(vm, c);
    fork_(vm, c, last_critical);
    if (c->older_form)
        GCHECK(c, stvm_delay_wait_ms(vm, 5) == STVM_OK);
    else
        wait_last_process_lock(vm, c);
    GCHECK(c, stvm_process_terminate(vm, first_waiting) == STVM_OK);
    c->owner_after_terminate = stvm_mutex_owner(vm, c->mutex);
    if (c->older_form) {
        c->last_still_waits = gstate(vm, last_forked(c)) == STVM_PROCESS_WAITING;
        GCHECK(c, stvm_delay_wait_ms(vm, 10) == STVM_OK);
    } else {
        wait_last_process_lock(vm, c);
        c->last_still_waits = gstate(vm, last_forked(c)) == STVM_PROCESS_WAITING;
        GCHECK(c, stvm_semaphore_signal(vm, c->hold) == STVM_OK);
        wait_last_process_terminate(vm, c);
    }
}

/* MutexTest>>testTerminatingBlockedCriticalSectionShouldNotUnblockAnotherWaitingSection:
 * of two processes waiting for a held mutex, the first is terminated; that must not let
 * the second in while the holder still holds it: the holder's section ends first, and
 * only then does the second run. (The older form's second and third sections both set
 * the last flag; the terminated one never runs, so here it sets should_not_happen.) */
Test(MutexTest, testTerminatingBlockedCriticalSectionShouldNotUnblockAnotherWaitingSection)
{
    for (int older = 0; older <= 1; older++) {
        mutex_case c;
        run_case(&c, "testTerminatingBlockedCriticalSectionShouldNotUnblockAnotherWaitingSection",
                 older, terminating_blocked_section);
        cr_assert_eq(c.owner_after_terminate, c.forked[0], "the holder still owns it");
        cr_assert(c.last_still_waits, "the last section still waits");
        cr_assert(c.first_executed_first, "the holder's section ended before the last ran");
        cr_assert(c.last_executed, "%s form", older ? "older" : "current");
        cr_assert(!c.should_not_happen, "the terminated waiter never ran its section");
        finish(&c);
    }
}

/* ---- testTerminatingBlockedCriticalWhichWasSignalledButNotResumedYet ------------------------ */

static void signalled_not_resumed(stvm_vm *vm, mutex_case *c)
{
    fork_at(vm, c, holds_then_marks_first, TEST_PRIORITY + 1);
    wait_last_process_lock(vm, c);
    /* Below the test process: handed the mutex, it cannot run before we terminate it. */
    stvm_process *waiting = fork_at(vm, c, critical_that_must_not_run, TEST_PRIORITY - 1);
    wait_last_process_lock(vm, c);
    GCHECK(c, !c->first_executed);
    GCHECK(c, stvm_semaphore_signal(vm, c->hold) == STVM_OK);   /* the holder preempts us */
    GCHECK(c, c->first_executed);
    c->owner_after = stvm_mutex_owner(vm, c->mutex);           /* handed to the waiter */
    GCHECK(c, stvm_process_terminate(vm, waiting) == STVM_OK);
    c->owner_after_terminate = stvm_mutex_owner(vm, c->mutex);
    fork_(vm, c, last_critical);
    wait_last_process_terminate(vm, c);
}

/* The older form's controlling process: it suspends itself, is resumed from inside the
 * first section, and then terminates the second section's process, which by then has
 * been handed the mutex but, at a lower priority, has not run. */
static void controlling_process(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    GCHECK(c, stvm_delay_wait_ms(vm, 5) == STVM_OK);
    GCHECK(c, stvm_process_suspend(vm, c->controlling) == STVM_OK);
    GCHECK(c, !c->first_executed);
    GCHECK(c, stvm_yield(vm) == STVM_OK);
    GCHECK(c, c->first_executed);
    GCHECK(c, gstate(vm, c->forked[0]) == STVM_PROCESS_TERMINATED);
    GCHECK(c, !c->should_not_happen);
    c->owner_after = stvm_mutex_owner(vm, c->mutex);
    GCHECK(c, stvm_process_terminate(vm, c->forked[1]) == STVM_OK);
    c->owner_after_terminate = stvm_mutex_owner(vm, c->mutex);
}

static void resume_controlling_then_mark(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    GCHECK(c, stvm_delay_wait_ms(vm, 5) == STVM_OK);
    GCHECK(c, stvm_process_resume(vm, c->controlling) == STVM_OK);
    GCHECK(c, stvm_yield(vm) == STVM_OK);   /* the controlling process looks now */
    c->first_executed = true;
}

static void first_critical_resumes_controlling(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    GCHECK(c, stvm_mutex_critical(vm, c->mutex, resume_controlling_then_mark, c) == STVM_OK);
}

static void older_signalled_not_resumed(stvm_vm *vm, mutex_case *c)
{
    GCHECK(c, stvm_spawn(vm, TEST_PRIORITY, c->selector, controlling_process, c,
                         &c->controlling) == STVM_OK);
    GCHECK(c, stvm_delay_wait_ms(vm, 10) == STVM_OK);
    c->controlling_suspended = gstate(vm, c->controlling) == STVM_PROCESS_SUSPENDED;
    fork_(vm, c, first_critical_resumes_controlling);
    fork_at(vm, c, critical_that_must_not_run, TEST_PRIORITY - 1);
    GCHECK(c, stvm_delay_wait_ms(vm, 15) == STVM_OK);
    fork_(vm, c, last_critical);
    GCHECK(c, stvm_delay_wait_ms(vm, 15) == STVM_OK);
}

/* MutexTest>>testTerminatingBlockedCriticalWhichWasSignalledButNotResumedYet: a
 * process waiting for the mutex is handed it when the holder leaves, but, lower than
 * everyone else, has not run yet when it is terminated; the mutex must not stay with
 * it: a section started afterwards runs. (stvm's give-back rule: the mutex goes back
 * free, as nobody else waits.) */
Test(MutexTest, testTerminatingBlockedCriticalWhichWasSignalledButNotResumedYet)
{
    for (int older = 0; older <= 1; older++) {
        mutex_case c;
        run_case(&c, "testTerminatingBlockedCriticalWhichWasSignalledButNotResumedYet", older,
                 older ? older_signalled_not_resumed : signalled_not_resumed);
        if (older)
            cr_assert(c.controlling_suspended, "the controlling process suspended itself");
        cr_assert(c.first_executed);
        cr_assert_eq(c.owner_after, c.forked[1], "the holder handed it to the waiter");
        cr_assert_null(c.owner_after_terminate, "the terminated waiter gave it back");
        cr_assert(!c.should_not_happen, "the terminated waiter never ran its section");
        cr_assert(c.last_executed, "a later section ran (%s form)", older ? "older" : "current");
        finish(&c);
    }
}

/* ---- testTwoCriticalsShouldWaitEachOther --------------------------------------------------- */

static void two_criticals(stvm_vm *vm, mutex_case *c)
{
    c->hold_ms = 5;
    fork_(vm, c, holds_then_marks_first);
    if (!c->older_form)
        wait_last_process_lock(vm, c);
    fork_(vm, c, last_critical);
    if (c->older_form) {
        GCHECK(c, stvm_delay_wait_ms(vm, 10) == STVM_OK);
    } else {
        wait_last_process_lock(vm, c);
        GCHECK(c, stvm_semaphore_signal(vm, c->hold) == STVM_OK);
        wait_last_process_terminate(vm, c);
    }
}

/* MutexTest>>testTwoCriticalsShouldWaitEachOther: a second section waits for the
 * first to end: it runs, and only after the first finished. */
Test(MutexTest, testTwoCriticalsShouldWaitEachOther)
{
    for (int older = 0; older <= 1; older++) {
        mutex_case c;
        run_case(&c, "testTwoCriticalsShouldWaitEachOther", older, two_criticals);
        cr_assert(c.last_executed, "%s form", older ? "older" : "current");
        cr_assert(c.first_executed_first, "the first section ended before the second ran");
        finish(&c);
    }
}

/* ---- testTwoRecursiveCriticalsShouldNotWaitEachOther --------------------------------------- */

static void nested_mark(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    c->executed = true;
    c->owner_nested = stvm_mutex_owner(vm, c->mutex);
}

static void outer_section(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    GCHECK(c, stvm_mutex_critical(vm, c->mutex, nested_mark, c) == STVM_OK);
}

static void recursive_critical(stvm_vm *vm, void *arg)
{
    mutex_case *c = arg;
    GCHECK(c, stvm_mutex_critical(vm, c->mutex, outer_section, c) == STVM_OK);
}

static void two_recursive(stvm_vm *vm, mutex_case *c)
{
    fork_(vm, c, recursive_critical);
    if (c->older_form)
        GCHECK(c, stvm_delay_wait_ms(vm, 10) == STVM_OK);
    else
        wait_last_process_terminate(vm, c);
}

/* MutexTest>>testTwoRecursiveCriticalsShouldNotWaitEachOther: a process inside a
 * section enters the same mutex again without waiting for itself. */
Test(MutexTest, testTwoRecursiveCriticalsShouldNotWaitEachOther)
{
    for (int older = 0; older <= 1; older++) {
        mutex_case c;
        run_case(&c, "testTwoRecursiveCriticalsShouldNotWaitEachOther", older, two_recursive);
        cr_assert(c.executed, "%s form", older ? "older" : "current");
        cr_assert_eq(c.owner_nested, c.forked[0]);
        finish(&c);
    }
}
