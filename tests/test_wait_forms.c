/*
 * The forms every blocking call has through the one wait routine: a try that never
 * waits, a wait in microseconds, and a timed mutex enter; and the rule that an object
 * a process is committed to wait on cannot be freed under it.
 */
#include "helpers.h"

TestSuite(wait_forms, .timeout = 30);

typedef struct forms {
    stvm_vm *vm;
    stvm_semaphore *sem;
    stvm_mutex *m;
    int rc[4];
    uint64_t at_us[4];
    uint64_t switches_before, switches_after;
    int free_rc;
    int bad_line;
} forms;

static uint64_t elapsed_us(stvm_vm *vm)
{
    return stvm_vm_now_us(vm) - SIM_START;
}

/* ---- try_wait ------------------------------------------------------------------ */

static void tries(stvm_vm *vm, void *arg)
{
    forms *f = arg;
    f->switches_before = switches(vm);
    f->rc[0] = stvm_semaphore_try_wait(vm, f->sem);   /* one excess signal: taken */
    f->rc[1] = stvm_semaphore_try_wait(vm, f->sem);   /* none left */
    f->switches_after = switches(vm);
    f->rc[2] = stvm_semaphore_try_wait(vm, NULL);
}

Test(wait_forms, try_wait_takes_an_excess_signal_or_answers_eagain_without_switching)
{
    forms f = {.vm = vm_make(NULL)};
    f.sem = sem_make(f.vm);
    cr_assert_eq(stvm_semaphore_signal(f.vm, f.sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_try_wait(f.vm, f.sem), STVM_ENOTPROC);
    cr_assert_eq(stvm_semaphore_excess(f.vm, f.sem), 1, "a refused call changes nothing");
    cr_assert_eq(stvm_spawn(f.vm, 40, "trier", tries, &f, NULL), STVM_OK);
    cr_assert_eq(stvm_run(f.vm), STVM_OK);
    cr_assert_eq(f.rc[0], STVM_OK);
    cr_assert_eq(f.rc[1], STVM_EAGAIN, "a try, not a time limit: %s", stvm_err_name(f.rc[1]));
    cr_assert_eq(f.rc[2], STVM_EINVAL);
    cr_assert_eq(f.switches_after, f.switches_before, "a try never switches");
    cr_assert_eq(stvm_semaphore_excess(f.vm, f.sem), 0);
    vm_done(f.vm);
}

/* ---- microsecond timed waits ---------------------------------------------------------- */

static void waits_us(stvm_vm *vm, void *arg)
{
    forms *f = arg;
    f->rc[0] = stvm_semaphore_wait_timeout_us(vm, f->sem, 2500);   /* nobody signals */
    f->at_us[0] = elapsed_us(vm);
    f->rc[1] = stvm_semaphore_wait_timeout_us(vm, f->sem, 10000);  /* signalled at 5 ms */
    f->at_us[1] = elapsed_us(vm);
    f->rc[2] = stvm_semaphore_wait_timeout_us(vm, f->sem, -1);
}

static void signals_at_5ms(stvm_vm *vm, void *arg)
{
    forms *f = arg;
    stvm_delay_wait_ms(vm, 5);
    stvm_semaphore_signal(vm, f->sem);
}

Test(wait_forms, a_wait_in_microseconds_times_out_exactly_and_is_ended_by_a_signal)
{
    forms f = {.vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0)};
    f.sem = sem_make(f.vm);
    cr_assert_eq(stvm_spawn(f.vm, 40, "waiter", waits_us, &f, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(f.vm, 30, "signaller", signals_at_5ms, &f, NULL), STVM_OK);
    cr_assert_eq(stvm_run(f.vm), STVM_OK);
    cr_assert_eq(f.rc[0], STVM_ETIMEDOUT);
    cr_assert_eq(f.at_us[0], 2500, "the microsecond scheduler ends it on time, not early");
    cr_assert_eq(f.rc[1], STVM_OK);
    cr_assert_eq(f.at_us[1], 5000);
    cr_assert_eq(f.rc[2], STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_excess(f.vm, f.sem), 0);
    vm_done(f.vm);
}

/* ---- timed mutex enter ---------------------------------------------------------------- */

static void holds_for_20ms(stvm_vm *vm, void *arg)
{
    forms *f = arg;
    stvm_mutex_enter(vm, f->m);
    stvm_delay_wait_ms(vm, 20);
    stvm_mutex_exit(vm, f->m);
}

static void enters_with_timeouts(stvm_vm *vm, void *arg)
{
    forms *f = arg;
    f->rc[0] = stvm_mutex_enter_timeout_ms(vm, f->m, 0);    /* only tries */
    f->rc[1] = stvm_mutex_enter_timeout_ms(vm, f->m, 5);    /* runs out at 5 ms */
    f->at_us[1] = elapsed_us(vm);
    f->rc[2] = stvm_mutex_enter_timeout_ms(vm, f->m, 100);  /* handed over at 20 ms */
    f->at_us[2] = elapsed_us(vm);
    GCHECK(f, stvm_mutex_owner(vm, f->m) == stvm_vm_active_process(vm));
    f->rc[3] = stvm_mutex_enter_timeout_ms(vm, f->m, 100);  /* re-entry */
    stvm_mutex_exit(vm, f->m);
    stvm_mutex_exit(vm, f->m);
}

Test(wait_forms, a_timed_mutex_enter_times_out_or_gets_the_mutex_handed_over)
{
    forms f = {.vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0)};
    cr_assert_eq(stvm_mutex_new(f.vm, &f.m), STVM_OK);
    cr_assert_eq(stvm_spawn(f.vm, 40, "holder", holds_for_20ms, &f, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(f.vm, 30, "contender", enters_with_timeouts, &f, NULL), STVM_OK);
    cr_assert_eq(stvm_run(f.vm), STVM_OK);
    cr_assert_eq(f.bad_line, 0, "line %d", f.bad_line);
    cr_assert_eq(f.rc[0], STVM_ETIMEDOUT);
    cr_assert_eq(f.rc[1], STVM_ETIMEDOUT);
    cr_assert_eq(f.at_us[1], 5000);
    cr_assert_eq(f.rc[2], STVM_OK);
    cr_assert_eq(f.at_us[2], 20000);
    cr_assert_eq(f.rc[3], STVM_OK);
    cr_assert_null(stvm_mutex_owner(f.vm, f.m));
    cr_assert_eq(stvm_mutex_enter_timeout_ms(f.vm, f.m, 1), STVM_ENOTPROC);
    cr_assert_eq(stvm_mutex_enter_timeout_ms(f.vm, NULL, 1), STVM_EINVAL);
    vm_done(f.vm);
}

/* ---- committed waiters ---------------------------------------------------------------- */

static void timed_waiter(stvm_vm *vm, void *arg)
{
    forms *f = arg;
    f->rc[0] = stvm_semaphore_wait_timeout_ms(vm, f->sem, 50);
}

static void frees_the_semaphore(stvm_vm *vm, void *arg)
{
    forms *f = arg;
    f->free_rc = stvm_semaphore_free(vm, f->sem);
}

/* The timed waiter hands its Delay to the timing process first, which preempts it
 * before it joins the semaphore's list; an equal-priority process then runs and must
 * not be able to free the semaphore under it. */
Test(wait_forms, a_semaphore_a_timed_waiter_is_committed_to_cannot_be_freed)
{
    forms f = {.vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0)};
    f.sem = sem_make(f.vm);
    stvm_config cfg;
    stvm_vm_config(f.vm, &cfg);
    cr_assert(cfg.preemption_yields, "the waiter goes to the back of its queue");
    cr_assert_eq(stvm_spawn(f.vm, 40, "timed waiter", timed_waiter, &f, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(f.vm, 40, "freer", frees_the_semaphore, &f, NULL), STVM_OK);
    cr_assert_eq(stvm_run(f.vm), STVM_OK);
    cr_assert_eq(f.free_rc, STVM_EINUSE);
    cr_assert_eq(f.rc[0], STVM_ETIMEDOUT);
    cr_assert_eq(stvm_semaphore_free(f.vm, f.sem), STVM_OK, "free once the wait is over");
    vm_done(f.vm);
}

static void timed_enter(stvm_vm *vm, void *arg)
{
    forms *f = arg;
    f->rc[0] = stvm_mutex_enter_timeout_ms(vm, f->m, 50);
    if (f->rc[0] == STVM_OK)
        stvm_mutex_exit(vm, f->m);
}

/* Holds the mutex across a yield, so that the timed enter finds it taken and commits;
 * the timing process preempts that one before it joins the list, and this one then
 * exits the mutex and tries to free it while the other is still on its way. */
static void holds_then_frees(stvm_vm *vm, void *arg)
{
    forms *f = arg;
    stvm_mutex_enter(vm, f->m);
    stvm_yield(vm);
    stvm_mutex_exit(vm, f->m);
    f->free_rc = stvm_mutex_free(vm, f->m);
}

Test(wait_forms, a_mutex_with_a_committed_timed_waiter_cannot_be_freed)
{
    forms f = {.vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0)};
    cr_assert_eq(stvm_mutex_new(f.vm, &f.m), STVM_OK);
    cr_assert_eq(stvm_spawn(f.vm, 40, "holder", holds_then_frees, &f, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(f.vm, 40, "timed enter", timed_enter, &f, NULL), STVM_OK);
    cr_assert_eq(stvm_run(f.vm), STVM_OK);
    cr_assert_eq(f.free_rc, STVM_EINUSE, "free with a committed waiter");
    cr_assert_eq(f.rc[0], STVM_OK, "the waiter then found it free");
    cr_assert_eq(stvm_mutex_free(f.vm, f.m), STVM_OK);
    vm_done(f.vm);
}
