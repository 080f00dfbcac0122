/*
 * Pharo's ProcessTerminateBug (Kernel-Tests; named ProcessTerminateBugTest since
 * Pharo 8, and in pharo-core's Tests and KernelTests-Processes packages before)
 * re-expressed against stvm's public API, one Criterion test per Pharo test method,
 * named after its selector. The Pharo test runs in the test's own process; here that is
 * a green process at priority 40 (userSchedulingPriority) that records what it sees for
 * the host to assert after stvm_run. An ensure: block is a cleanup (stvm_ensure);
 * Semaphore>>critical: is stvm_semaphore_critical and forMutualExclusion a semaphore
 * with one excess signal. Simulated clock throughout.
 *
 * Pharo's nested-unwind tests build `[[[] ensure: [MIDDLE]] ensure: [OUTER]]` as the
 * whole body of the process: the protected blocks are empty, so MIDDLE and then OUTER
 * are what the process does last. Here the process registers OUTER, then MIDDLE, and
 * returns, so that both run as its way out, in that order, and a terminate arriving
 * while MIDDLE runs finds a cleanup in progress, which stvm completes (Pharo 10's rule).
 * Inside MIDDLE, `[X] ensure: [Y]` is stvm_ensure(Y), X, stvm_ensure_pop(run).
 *
 * Every test method the class has had: the 12 of current pharo-project/pharo, whose
 * main line removed none (pharo-core had four of them: testSchedulerTermination,
 * testTerminationDuringUnwind and the two testUnwindFrom... ones).
 * Expressed:
 *   testSchedulerTermination, testTerminationDuringUnwind (also with the unwind block
 *     entered on the normal path, through stvm_ensure_pop),
 *   testTerminationDuringNestedUnwindB1, testTerminationDuringNestedUnwindB2,
 *   testTerminationDuringNestedUnwindR1, testTerminationDuringNestedUnwindR2,
 *   testTerminationDuringNestedUnwindS1, testTerminationDuringNestedUnwindS2,
 *   testUnwindFromActiveProcess, testUnwindFromForeignProcess.
 * Not expressible:
 *   testTerminationDuringNestedUnwindWithReturn1,
 *   testTerminationDuringNestedUnwindWithReturn2: a non-local return
 *     (valueWithExit's exit block) taken from inside an unwind block, which cuts short
 *     the blocks it leaves; C has no non-local return through cleanups.
 * Pending: process-local variables: none of the class's methods use them.
 */
#include "helpers.h"

TestSuite(ProcessTerminateBug, .timeout = 30);

#define MAIN 40

typedef struct tb {
    stvm_vm *vm;
    stvm_semaphore *sem, *sem2;
    stvm_process *p;
    bool got_here, unwind_started, unwind_finished;
    bool x1, x2, x3;
    int64_t excess_inside;   /* the mutual-exclusion semaphore, seen inside critical */
    stvm_fn victim;          /* what testTerminationDuringUnwind forks */
    int rc;
    int bad_line;
} tb;

static stvm_vm *sim(void) { return vm_make_sim(61, STVM_DELAY_CLOCK_US); }

static void run_as_test(tb *t, stvm_fn body)
{
    cr_assert_eq(stvm_spawn(t->vm, MAIN, "test", body, t, NULL), STVM_OK);
    RUN_OK_GREEN(t);
}

static stvm_process_state st(stvm_vm *vm, stvm_process *p) { return gstate(vm, p); }

/* ---- testSchedulerTermination ----------------------------------------------------------- */

static void signals_then_waits(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    stvm_semaphore_signal(vm, t->sem);
    stvm_semaphore_wait(vm, t->sem2);
    t->got_here = true;
}

static void scheduler_termination_body(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    stvm_spawn(vm, MAIN, "victim", signals_then_waits, t, &t->p);
    stvm_semaphore_wait(vm, t->sem);   /* until it has run */
    t->rc = stvm_process_terminate(vm, t->p);
    stvm_semaphore_signal(vm, t->sem2);
    stvm_yield(vm);   /* its chance to go on, which it must not have */
    GCHECK(t, !t->got_here);
    GCHECK(t, st(vm, t->p) == STVM_PROCESS_TERMINATED);
    stvm_process_release(vm, t->p);
}

/* ProcessTerminateBug>>testSchedulerTermination: a process terminated while it waits
 * (after it has run once) never goes on, even when what it waited for is signalled
 * afterwards and it would be next to run. */
Test(ProcessTerminateBug, testSchedulerTermination)
{
    tb t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    t.sem2 = sem_make(t.vm);
    run_as_test(&t, scheduler_termination_body);
    cr_assert_eq(t.rc, STVM_OK);
    cr_assert_eq(stvm_semaphore_excess(t.vm, t.sem2), 1, "the later signal found nobody");
    SCENARIO_DONE(&t);
}

/* ---- testTerminationDuringUnwind ---------------------------------------------------------- */

static void unwind_yields(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    t->unwind_started = true;
    stvm_yield(vm);
    t->unwind_finished = true;
}

static void ensure_at_the_end(stvm_vm *vm, void *arg)
{
    stvm_ensure(vm, unwind_yields, arg);   /* runs as the process returns */
}

static void ensure_popped(stvm_vm *vm, void *arg)
{
    stvm_ensure(vm, unwind_yields, arg);
    stvm_ensure_pop(vm, true);   /* the same block, run on the normal path by hand */
}

static void during_unwind_body(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    stvm_spawn(vm, MAIN, "victim", t->victim, t, &t->p);
    GCHECK(t, !t->unwind_started);
    stvm_yield(vm);
    GCHECK(t, t->unwind_started);
    GCHECK(t, !t->unwind_finished);
    t->rc = stvm_process_terminate(vm, t->p);
}

static void during_unwind(tb *t, stvm_fn victim)
{
    t->vm = sim();
    t->victim = victim;
    run_as_test(t, during_unwind_body);
    cr_assert_eq(t->rc, STVM_OK);
    cr_assert_eq(state_of(t->vm, t->p), STVM_PROCESS_TERMINATED);
    stvm_process_release(t->vm, t->p);
}

/* ProcessTerminateBug>>testTerminationDuringUnwind: a process terminated in the middle
 * of an unwind block (it yielded there) completes that block before terminate returns.
 * Both ways a cleanup runs: as the process's way out, and entered on the normal path
 * through stvm_ensure_pop(run) (the process then finishes when it returns). */
Test(ProcessTerminateBug, testTerminationDuringUnwind)
{
    tb t = {0};
    during_unwind(&t, ensure_at_the_end);
    cr_assert(t.unwind_finished, "the cleanup in progress was completed");
    SCENARIO_DONE(&t);

    tb u = {0};
    during_unwind(&u, ensure_popped);
    cr_assert(u.unwind_started);
    cr_assert(u.unwind_finished, "the cleanup run by hand was completed too");
    SCENARIO_DONE(&u);
}

/* ---- the nested unwinds --------------------------------------------------------------- */

static void sets_x1(stvm_vm *vm, void *arg)
{
    (void)vm;
    ((tb *)arg)->x1 = true;
}

static void sets_x3(stvm_vm *vm, void *arg)
{
    (void)vm;
    ((tb *)arg)->x3 = true;
}

/* What the process stops in, inside the inner protected block or inner unwind block. */
typedef enum stop { STOP_WAIT, STOP_YIELD, STOP_SUSPEND } stop;

static void stops(stvm_vm *vm, tb *t, stop how)
{
    switch (how) {
    case STOP_WAIT:
        stvm_semaphore_wait(vm, t->sem);
        break;
    case STOP_YIELD:
        stvm_yield(vm);
        break;
    case STOP_SUSPEND:
        stvm_process_suspend(vm, stvm_vm_active_process(vm));
        break;
    }
}

typedef struct nested {
    tb *t;
    stop how;
} nested;

/* MIDDLE of the "1" tests: `[STOP] ensure: [x1 := true]. x2 := true`. */
static void middle_stops_in_protected_block(stvm_vm *vm, void *arg)
{
    nested *n = arg;
    stvm_ensure(vm, sets_x1, n->t);
    stops(vm, n->t, n->how);
    stvm_ensure_pop(vm, true);
    n->t->x2 = true;
}

static void inner_stops(stvm_vm *vm, void *arg)
{
    nested *n = arg;
    stops(vm, n->t, n->how);
    n->t->x1 = true;
}

/* MIDDLE of the "2" tests: `[] ensure: [STOP. x1 := true]. x2 := true`. */
static void middle_stops_in_unwind_block(stvm_vm *vm, void *arg)
{
    nested *n = arg;
    stvm_ensure(vm, inner_stops, n);
    stvm_ensure_pop(vm, true);
    n->t->x2 = true;
}


static void nested_victim_1(stvm_vm *vm, void *arg)
{
    nested *n = arg;
    stvm_ensure(vm, sets_x3, n->t);
    stvm_ensure(vm, middle_stops_in_protected_block, n);
}

static void nested_victim_2(stvm_vm *vm, void *arg)
{
    nested *n = arg;
    stvm_ensure(vm, sets_x3, n->t);
    stvm_ensure(vm, middle_stops_in_unwind_block, n);
}

typedef struct nested_run {
    tb *t;
    nested n;
    stvm_fn victim;
    stvm_process_state seen_before;
} nested_run;

static void nested_body(stvm_vm *vm, void *arg)
{
    nested_run *r = arg;
    tb *t = r->t;
    stvm_spawn_suspended(vm, MAIN, "victim", r->victim, &r->n, 0, &t->p);
    stvm_process_resume(vm, t->p);
    stvm_yield(vm);
    r->seen_before = st(vm, t->p);
    GCHECK(t, !t->x1 && !t->x2 && !t->x3);
    t->rc = stvm_process_terminate(vm, t->p);
    GCHECK(t, st(vm, t->p) == STVM_PROCESS_TERMINATED);
    GCHECK(t, t->x1 && t->x2 && t->x3);
    stvm_process_release(vm, t->p);
}

static void nested_unwind(stvm_fn victim, stop how, stvm_process_state before)
{
    tb t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    nested_run r = {.t = &t, .n = {.t = &t, .how = how}, .victim = victim};
    cr_assert_eq(stvm_spawn(t.vm, MAIN, "test", nested_body, &r, NULL), STVM_OK);
    RUN_OK_GREEN(&t);
    cr_assert_eq(r.seen_before, before, "before the terminate the victim is %d", r.seen_before);
    cr_assert_eq(t.rc, STVM_OK);
    cr_assert(t.x1 && t.x2 && t.x3, "x1 %d x2 %d x3 %d", t.x1, t.x2, t.x3);
    cr_assert_eq(stvm_semaphore_excess(t.vm, t.sem), 0, "the cut-short wait took nothing");
    SCENARIO_DONE(&t);
}

/* ProcessTerminateBug>>testTerminationDuringNestedUnwindB1: terminated while blocked on
 * a semaphore in a protected block inside an unwind block, the process completes every
 * unwind block it is in: the inner one, the rest of the one in progress, the outer. */
Test(ProcessTerminateBug, testTerminationDuringNestedUnwindB1)
{
    nested_unwind(nested_victim_1, STOP_WAIT, STVM_PROCESS_WAITING);
}

/* ProcessTerminateBug>>testTerminationDuringNestedUnwindB2: the same, blocked inside an
 * unwind block nested in another one in progress. */
Test(ProcessTerminateBug, testTerminationDuringNestedUnwindB2)
{
    nested_unwind(nested_victim_2, STOP_WAIT, STVM_PROCESS_WAITING);
}

/* ProcessTerminateBug>>testTerminationDuringNestedUnwindR1: the same as B1 with the
 * process runnable (it yielded) instead of blocked. */
Test(ProcessTerminateBug, testTerminationDuringNestedUnwindR1)
{
    nested_unwind(nested_victim_1, STOP_YIELD, STVM_PROCESS_READY);
}

/* ProcessTerminateBug>>testTerminationDuringNestedUnwindR2: the same as B2 with the
 * process runnable (it yielded). */
Test(ProcessTerminateBug, testTerminationDuringNestedUnwindR2)
{
    nested_unwind(nested_victim_2, STOP_YIELD, STVM_PROCESS_READY);
}

/* ProcessTerminateBug>>testTerminationDuringNestedUnwindS1: the same as B1 with the
 * process suspended (by itself). */
Test(ProcessTerminateBug, testTerminationDuringNestedUnwindS1)
{
    nested_unwind(nested_victim_1, STOP_SUSPEND, STVM_PROCESS_SUSPENDED);
}

/* ProcessTerminateBug>>testTerminationDuringNestedUnwindS2: the same as B2 with the
 * process suspended (by itself). */
Test(ProcessTerminateBug, testTerminationDuringNestedUnwindS2)
{
    nested_unwind(nested_victim_2, STOP_SUSPEND, STVM_PROCESS_SUSPENDED);
}

/* ---- critical sections ----------------------------------------------------------------- */

static void inside_then_terminates_itself(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    t->excess_inside = stvm_semaphore_excess(vm, t->sem);
    stvm_process_terminate(vm, stvm_vm_active_process(vm));
    t->got_here = true;
}

static void critical_terminating_itself(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    stvm_semaphore_critical(vm, t->sem, inside_then_terminates_itself, t);
}

static void unwind_from_active_body(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    GCHECK(t, stvm_semaphore_excess(vm, t->sem) == 1);
    stvm_spawn(vm, STVM_PRIORITY_USER_INTERRUPT, "critical", critical_terminating_itself, t,
               NULL);
    GCHECK(t, t->excess_inside == 0);
    GCHECK(t, stvm_semaphore_excess(vm, t->sem) == 1);
}

/* ProcessTerminateBug>>testUnwindFromActiveProcess: a process that terminates itself
 * inside Semaphore>>critical: leaves the semaphore signalled again. */
Test(ProcessTerminateBug, testUnwindFromActiveProcess)
{
    tb t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    stvm_semaphore_signal(t.vm, t.sem);   /* forMutualExclusion */
    t.excess_inside = -1;
    run_as_test(&t, unwind_from_active_body);
    cr_assert(!t.got_here);
    SCENARIO_DONE(&t);
}

static void inside_then_deadlocks(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    t->excess_inside = stvm_semaphore_excess(vm, t->sem);
    stvm_semaphore_wait(vm, t->sem);   /* waits for itself: never signalled */
    t->got_here = true;
}

static void critical_deadlocking(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    stvm_semaphore_critical(vm, t->sem, inside_then_deadlocks, t);
}

static void unwind_from_foreign_body(stvm_vm *vm, void *arg)
{
    tb *t = arg;
    GCHECK(t, stvm_semaphore_excess(vm, t->sem) == 1);
    stvm_spawn(vm, STVM_PRIORITY_USER_INTERRUPT, "critical", critical_deadlocking, t, &t->p);
    GCHECK(t, t->excess_inside == 0);
    GCHECK(t, stvm_semaphore_excess(vm, t->sem) == 0);
    GCHECK(t, st(vm, t->p) == STVM_PROCESS_WAITING);
    t->rc = stvm_process_terminate(vm, t->p);
    GCHECK(t, stvm_semaphore_excess(vm, t->sem) == 1);
    GCHECK(t, st(vm, t->p) == STVM_PROCESS_TERMINATED);
    stvm_process_release(vm, t->p);
}

/* ProcessTerminateBug>>testUnwindFromForeignProcess: a process deadlocked inside
 * Semaphore>>critical: (it waits on the semaphore it holds), terminated by another
 * process, leaves the semaphore signalled again. */
Test(ProcessTerminateBug, testUnwindFromForeignProcess)
{
    tb t = {.vm = sim()};
    t.sem = sem_make(t.vm);
    stvm_semaphore_signal(t.vm, t.sem);
    t.excess_inside = -1;
    run_as_test(&t, unwind_from_foreign_body);
    cr_assert_eq(t.rc, STVM_OK);
    cr_assert(!t.got_here);
    SCENARIO_DONE(&t);
}
