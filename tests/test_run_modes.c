/*
 * Living inside another event loop: stvm_run_mode's ONCE and NOWAIT, the backend
 * descriptor and timeout a host loop waits with, stvm_stop from another thread, and
 * runs that do not nest on one thread.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "helpers.h"

TestSuite(run_modes, .timeout = 60);

typedef struct host_loop {
    stvm_vm *vm;
    stvm_semaphore *sem;
    int index;                 /* sem in the external table */
    int steps;                 /* how far the worker got */
    atomic_int spins;
    int rc;
    int bad_line;
} host_loop;

static void waits_twice(stvm_vm *vm, void *arg)
{
    host_loop *h = arg;
    h->steps = 1;
    stvm_semaphore_wait(vm, h->sem);
    h->steps = 2;
    stvm_semaphore_wait(vm, h->sem);
    h->steps = 3;
}

Test(run_modes, nowait_runs_what_can_run_and_answers_whether_work_remains)
{
    host_loop h = {.vm = vm_make(NULL)};
    h.sem = sem_make(h.vm);
    cr_assert_eq(stvm_external_register(h.vm, h.sem, &h.index), STVM_OK);
    cr_assert_eq(stvm_spawn(h.vm, 40, "worker", waits_twice, &h, NULL), STVM_OK);
    cr_assert_eq(stvm_run_mode(h.vm, STVM_RUN_NOWAIT), 1, "it waits for an external signal");
    cr_assert_eq(h.steps, 1);
    cr_assert_eq(stvm_backend_timeout_ms(h.vm), -1, "no deadline: wait for the descriptor");
    cr_assert_eq(stvm_external_signal(h.vm, h.index), STVM_OK);
    cr_assert_eq(stvm_backend_timeout_ms(h.vm), 0, "a signal is pending");
    cr_assert_eq(stvm_run_mode(h.vm, STVM_RUN_NOWAIT), 1);
    cr_assert_eq(h.steps, 2);
    cr_assert_eq(stvm_external_signal(h.vm, h.index), STVM_OK);
    cr_assert_eq(stvm_run_mode(h.vm, STVM_RUN_NOWAIT), 0, "everything finished");
    cr_assert_eq(h.steps, 3);
    cr_assert_eq(stvm_run_mode(h.vm, 7), STVM_EINVAL);
    cr_assert_eq(stvm_run_mode(NULL, STVM_RUN_ONCE), STVM_EINVAL);
    cr_assert_eq(stvm_external_unregister(h.vm, h.index), STVM_OK);
    vm_done(h.vm);
}

static void *signal_after_20ms(void *arg)
{
    host_loop *h = arg;
    usleep(20000);
    stvm_external_signal(h->vm, h->index);
    return NULL;
}

Test(run_modes, the_backend_descriptor_becomes_readable_when_a_signal_arrives_between_runs)
{
    host_loop h = {.vm = vm_make(NULL)};
    h.sem = sem_make(h.vm);
    cr_assert_eq(stvm_external_register(h.vm, h.sem, &h.index), STVM_OK);
    cr_assert_eq(stvm_spawn(h.vm, 40, "worker", waits_twice, &h, NULL), STVM_OK);
    cr_assert_eq(stvm_run_mode(h.vm, STVM_RUN_NOWAIT), 1);
    int fd = stvm_backend_fd(h.vm);
    cr_assert_geq(fd, 0);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, signal_after_20ms, &h), 0);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    cr_assert_eq(poll(&p, 1, 30000), 1, "the host loop was woken");
    pthread_join(t, NULL);
    cr_assert_eq(stvm_run_mode(h.vm, STVM_RUN_ONCE), 1);
    cr_assert_eq(h.steps, 2);
    cr_assert_eq(stvm_backend_fd(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_external_unregister(h.vm, h.index), STVM_OK);
    vm_done(h.vm);
}

static void sleeps_20ms(stvm_vm *vm, void *arg)
{
    host_loop *h = arg;
    h->steps = 1;
    stvm_delay_wait_ms(vm, 20);
    h->steps = 2;
}

Test(run_modes, once_waits_in_the_os_at_most_once_and_the_timeout_names_the_deadline)
{
    host_loop h = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_spawn(h.vm, 40, "sleeper", sleeps_20ms, &h, NULL), STVM_OK);
    cr_assert_eq(stvm_run_mode(h.vm, STVM_RUN_NOWAIT), 1);
    int ms = stvm_backend_timeout_ms(h.vm);
    cr_assert(ms >= 1 && ms <= 20, "the deadline is %d ms away", ms);
    stvm_stats before = stats_of(h.vm);
    int rounds = 0, rc;
    while ((rc = stvm_run_mode(h.vm, STVM_RUN_ONCE)) == 1 && rounds < 1000)
        rounds++;
    cr_assert_eq(rc, 0);
    cr_assert_eq(h.steps, 2);
    stvm_stats after = stats_of(h.vm);
    cr_assert_leq(after.os_sleeps - before.os_sleeps, (uint64_t)rounds + 1,
                  "at most one OS wait per run");
    vm_done(h.vm);
}

/* ---- stvm_stop ------------------------------------------------------------------------ */

static void spins_until_told(stvm_vm *vm, void *arg)
{
    host_loop *h = arg;
    while (atomic_load(&h->spins) >= 0) {
        atomic_fetch_add(&h->spins, 1);
        stvm_checkpoint(vm);
    }
}

static void *stop_when_spinning(void *arg)
{
    host_loop *h = arg;
    while (atomic_load(&h->spins) < 1000)
        ;
    stvm_stop(h->vm);
    return NULL;
}

Test(run_modes, stop_from_another_thread_returns_estopped_and_a_later_run_goes_on)
{
    host_loop h = {.vm = vm_make(NULL)};
    stvm_process *p = spawn(h.vm, 40, "spinner", spins_until_told, &h);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, stop_when_spinning, &h), 0);
    cr_assert_eq(stvm_run(h.vm), STVM_ESTOPPED);
    pthread_join(t, NULL);
    cr_assert_eq(gstate(h.vm, p), STVM_PROCESS_READY, "kept as it was: runnable");
    vm_check(h.vm);
    atomic_store(&h.spins, -1);   /* let it finish */
    cr_assert_eq(stvm_run(h.vm), STVM_OK);
    cr_assert_eq(gstate(h.vm, p), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stvm_process_release(h.vm, p), STVM_OK);
    stvm_stop(NULL);
    vm_done(h.vm);
}

static void waits_once(stvm_vm *vm, void *arg)
{
    host_loop *h = arg;
    h->steps = 1;
    stvm_semaphore_wait(vm, h->sem);
    h->steps = 2;
}

Test(run_modes, a_stop_asked_before_a_run_ends_it_at_its_first_scheduling_point)
{
    host_loop h = {.vm = vm_make(NULL)};
    h.sem = sem_make(h.vm);
    cr_assert_eq(stvm_spawn(h.vm, 40, "waiter", waits_once, &h, NULL), STVM_OK);
    stvm_stop(h.vm);
    cr_assert_eq(stvm_run(h.vm), STVM_ESTOPPED);
    cr_assert_leq(h.steps, 1);
    cr_assert_eq(stvm_semaphore_signal(h.vm, h.sem), STVM_OK);
    cr_assert_eq(stvm_run(h.vm), STVM_OK);
    cr_assert_eq(h.steps, 2);
    vm_done(h.vm);
}

/* ---- runs do not nest ------------------------------------------------------------------ */

static void runs_another_vm(stvm_vm *vm, void *arg)
{
    host_loop *h = arg;
    (void)vm;
    h->rc = stvm_run(h->vm);   /* h->vm is a second VM */
    double ns;
    GCHECK(h, stvm_measure_raw_switch(10, &ns) == STVM_EBUSY);
}

static void finishes(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

Test(run_modes, stvm_run_of_another_vm_from_inside_a_process_is_busy)
{
    stvm_vm *outer = vm_make(NULL);
    host_loop h = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_spawn(h.vm, 40, "inner work", finishes, NULL, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(outer, 40, "nester", runs_another_vm, &h, NULL), STVM_OK);
    cr_assert_eq(stvm_run(outer), STVM_OK);
    cr_assert_eq(h.bad_line, 0, "line %d", h.bad_line);
    cr_assert_eq(h.rc, STVM_EBUSY, "runs do not nest on one thread");
    cr_assert_eq(stvm_run(h.vm), STVM_OK, "outside, the second VM runs");
    vm_done(h.vm);
    vm_done(outer);
}
