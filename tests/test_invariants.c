/*
 * stvm_vm_check_invariants: it walks every list once, so a check costs time linear in the
 * number of processes, however they are spread over lists. Each test makes long waiting
 * lists and checks them many times within the suite's timeout; a check quadratic in a
 * list's length (each entry looked up in its list again) would take minutes here.
 */
#include "helpers.h"

#include "../scheduler/shared_queue.h"   /* white-box: a queue broken on purpose */

/* The margin is wide: linear checks take milliseconds in all, under ASan too. */
TestSuite(invariants, .timeout = 60);

enum { WAITERS = 20000, CHECKS = 20 };

static void wait_on(stvm_vm *vm, void *arg)
{
    stvm_semaphore_wait(vm, arg);
}

static void enter_and_exit(stvm_vm *vm, void *arg)
{
    if (stvm_mutex_enter(vm, arg) == STVM_OK)
        stvm_mutex_exit(vm, arg);
}

static void hold_until(stvm_vm *vm, void *arg)
{
    void **a = arg;
    stvm_mutex_enter(vm, a[0]);
    stvm_semaphore_wait(vm, a[1]);
    stvm_mutex_exit(vm, a[0]);
}

/* Checks the VM CHECKS times and answers how many checks passed. */
static int checks_passed(stvm_vm *vm)
{
    char why[256];
    int ok = 0;
    for (int i = 0; i < CHECKS; i++)
        ok += stvm_vm_check_invariants(vm, why, sizeof why) == STVM_OK;
    return ok;
}

Test(invariants, a_semaphore_with_20000_waiters_is_checked_in_linear_time)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_semaphore *s;
    cr_assert_eq(stvm_semaphore_new(vm, &s), STVM_OK);
    for (int i = 0; i < WAITERS; i++)
        cr_assert_eq(stvm_spawn(vm, 40, "w", wait_on, s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    cr_assert_eq(checks_passed(vm), CHECKS);

    for (int i = 0; i < WAITERS; i++)
        cr_assert_eq(stvm_semaphore_signal(vm, s), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, s), STVM_OK);
    vm_done(vm);
}

Test(invariants, a_mutex_with_20000_waiters_is_checked_in_linear_time)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_mutex *m;
    stvm_semaphore *release;
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &release), STVM_OK);
    void *holder_arg[2] = {m, release};
    cr_assert_eq(stvm_spawn(vm, 41, "holder", hold_until, holder_arg, NULL), STVM_OK);
    for (int i = 0; i < WAITERS; i++)
        cr_assert_eq(stvm_spawn(vm, 40, "w", enter_and_exit, m, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    cr_assert_eq(checks_passed(vm), CHECKS);

    cr_assert_eq(stvm_semaphore_signal(vm, release), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_null(stvm_mutex_owner(vm, m));
    cr_assert_eq(stvm_mutex_free(vm, m), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, release), STVM_OK);
    vm_done(vm);
}

static void monitor_wait(stvm_vm *vm, void *arg)
{
    if (stvm_monitor_enter(vm, arg) == STVM_OK) {
        stvm_monitor_wait(vm, arg);
        stvm_monitor_exit(vm, arg);
    }
}

static void monitor_hold_until(stvm_vm *vm, void *arg)
{
    void **a = arg;
    stvm_monitor_enter(vm, a[0]);
    stvm_semaphore_wait(vm, a[1]);
    stvm_monitor_signal_all(vm, a[0]);   /* they all queue to take it again */
    stvm_semaphore_wait(vm, a[1]);
    stvm_monitor_exit(vm, a[0]);
}

Test(invariants, a_monitor_with_20000_waiters_on_a_condition_then_its_entry_is_checked_in_linear_time)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_monitor *m;
    stvm_semaphore *step;
    cr_assert_eq(stvm_monitor_new(vm, &m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &step), STVM_OK);
    for (int i = 0; i < WAITERS; i++)
        cr_assert_eq(stvm_spawn(vm, 41, "w", monitor_wait, m, NULL), STVM_OK);
    void *holder_arg[2] = {m, step};
    cr_assert_eq(stvm_spawn(vm, 40, "holder", monitor_hold_until, holder_arg, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);   /* all on the condition, the holder in */
    cr_assert_eq(checks_passed(vm), CHECKS);

    cr_assert_eq(stvm_semaphore_signal(vm, step), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);   /* all on the entry now */
    cr_assert_eq(checks_passed(vm), CHECKS);

    cr_assert_eq(stvm_semaphore_signal(vm, step), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_null(stvm_monitor_owner(vm, m));
    cr_assert_eq(stvm_monitor_free(vm, m), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, step), STVM_OK);
    vm_done(vm);
}

/* ---- messages ------------------------------------------------------------------------ */

static void takes(stvm_vm *vm, void *arg)
{
    void *item;
    stvm_queue_take(vm, arg, &item);
}

/* White-box: the queue's item semaphore is given an excess signal while a reader waits
 * on it, which no call can do. The message names what the program holds: the queue, by
 * its name and handle, not a semaphore inside it. */
Test(invariants, a_broken_queue_is_named_by_the_queue_not_its_internal_semaphore)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_queue *q;
    cr_assert_eq(stvm_queue_new(vm, 0, &q), STVM_OK);
    cr_assert_eq(stvm_queue_set_name(vm, q, "frames"), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 40, "reader", takes, q, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    q->avail.excess_signals = 1;
    char why[256], want[128];
    cr_assert_eq(stvm_vm_check_invariants(vm, why, sizeof why), STVM_ESTATE);
    snprintf(want, sizeof want,
             "the item semaphore of queue 'frames' %p has both waiters and excess signals",
             (void *)q);
    cr_assert_str_eq(why, want);
    q->avail.excess_signals = 0;
    vm_done(vm);
}
