/*
 * Processes one by one: spawn and its arguments, suspend and resume, terminate,
 * priority checks, process info and the active process, and the calls that need a
 * process.
 *
 * Green processes never call Criterion's asserts (they may run on small stacks): they
 * record what they see in a `world`, and GCHECK notes the first line whose condition
 * failed; the host asserts after stvm_run returns.
 */
#include <string.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(process, .timeout = 30);

/* ---- calls that need a process ---------------------------------------------------- */

Test(process, calls_that_need_a_process_fail_on_the_host_with_enotproc)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *sem;
    stvm_mutex *m;
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    cr_assert_eq(stvm_yield(vm), STVM_ENOTPROC);
    cr_assert_eq(stvm_checkpoint(vm), STVM_ENOTPROC);
    cr_assert_eq(stvm_semaphore_wait(vm, sem), STVM_ENOTPROC);
    cr_assert_eq(stvm_mutex_enter(vm, m), STVM_ENOTPROC);
    cr_assert_eq(stvm_mutex_try_enter(vm, m), STVM_ENOTPROC);
    cr_assert_null(stvm_mutex_owner(vm, m));
    cr_assert_eq(stvm_semaphore_excess(vm, sem), 0);
    cr_assert_eq(stvm_yield(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_run(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    cr_assert_eq(stvm_mutex_free(vm, m), STVM_OK);
    vm_done(vm);
}

/* ---- suspend and resume ------------------------------------------------------------ */

static void suspend_resume_controller(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_process_suspend(vm, w->p[1]);
    w->info[0].state = gstate(w->vm, w->p[1]);
    trace_add(&w->t, 1);
    w->rc[1] = stvm_process_resume(vm, w->p[1]);
    w->info[1].state = gstate(w->vm, w->p[1]);
    trace_add(&w->t, 2);
}

Test(process, suspend_takes_a_ready_process_off_its_queue_until_resumed)
{
    world w = {.vm = vm_make(NULL)};
    actor b = {&w, 3};
    spawn(w.vm, 40, "controller", suspend_resume_controller, &w);
    w.p[1] = spawn(w.vm, 30, "B", log_tag, &b);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.info[0].state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[1].state, STVM_PROCESS_READY);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}

static void finisher(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

static void resume_refuser(stvm_vm *vm, void *arg)
{
    world *w = arg;
    stvm_process *self = stvm_active_process(vm);
    stvm_process *done = NULL;
    GCHECK(w, stvm_spawn(vm, 60, "done", finisher, NULL, &done) == STVM_OK);
    GCHECK(w, gstate(w->vm, done) == STVM_PROCESS_TERMINATED);
    uint64_t before = switches(vm);
    w->rc[0] = stvm_process_resume(vm, w->p[1]);   /* ready */
    w->rc[1] = stvm_process_resume(vm, w->p[2]);   /* waiting on sem */
    w->rc[2] = stvm_process_resume(vm, self);      /* active */
    w->rc[3] = stvm_process_resume(vm, done);      /* terminated */
    w->u[0] = switches(vm) - before;
    w->info[1].state = gstate(w->vm, w->p[1]);
    stvm_process_info_get(vm, w->p[2], &w->info[2]);
    w->info[3].state = gstate(w->vm, self);
    trace_add(&w->t, 1);
    stvm_semaphore_signal(vm, w->sem);   /* W (50) preempts */
    trace_add(&w->t, 3);
}

static void wake_logger(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[4] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 2);
}

Test(process, resume_of_a_process_that_is_not_suspended_is_estate_and_changes_nothing)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    actor r = {&w, 4};
    w.p[2] = spawn(w.vm, 50, "W", wake_logger, &w);
    spawn(w.vm, 40, "C", resume_refuser, &w);
    w.p[1] = spawn(w.vm, 30, "R", log_tag, &r);
    run_ok_green(&w);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(w.rc[i], STVM_ESTATE, "resume #%d: %s", i, stvm_err_name(w.rc[i]));
    cr_assert_eq(w.u[0], 0, "no switch");
    cr_assert_eq(w.info[1].state, STVM_PROCESS_READY);
    cr_assert_eq(w.info[2].state, STVM_PROCESS_WAITING);
    cr_assert_eq(w.info[2].waiting_object, (const void *)w.sem);
    cr_assert_eq(w.info[3].state, STVM_PROCESS_ACTIVE);
    cr_assert_eq(w.rc[4], STVM_OK);
    static const int want[] = {1, 2, 3, 4};   /* R ran exactly once, last */
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

static void aborted_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_semaphore_wait(vm, w->sem);
    trace_add(&w->t, 3);
}

static void waiter_suspender(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 2);
    w->rc[1] = stvm_process_suspend(vm, w->p[0]);
    w->info[0].state = gstate(w->vm, w->p[0]);
    w->rc[2] = stvm_semaphore_signal(vm, w->sem);   /* nobody waits: an excess signal */
    w->u[0] = (uint64_t)stvm_semaphore_excess(vm, w->sem);
    w->rc[3] = stvm_process_resume(vm, w->p[0]);    /* W (40) preempts, wait -> ESTATE */
    trace_add(&w->t, 4);
    w->u[1] = (uint64_t)stvm_semaphore_excess(vm, w->sem);
}

Test(process, suspending_a_waiter_makes_its_wait_return_estate_once_resumed)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    w.p[0] = spawn(w.vm, 40, "W", aborted_waiter, &w);
    spawn(w.vm, 30, "C", waiter_suspender, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[0].state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(w.rc[2], STVM_OK);
    cr_assert_eq(w.u[0], 1, "the suspended waiter did not take the signal");
    cr_assert_eq(w.rc[3], STVM_OK);
    cr_assert_eq(w.rc[0], STVM_ESTATE, "wait returned %s", stvm_err_name(w.rc[0]));
    cr_assert_eq(w.u[1], 1, "the signal is still there");
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

Test(process, suspend_of_a_suspended_or_finished_process_is_estate)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1};
    stvm_process *s = NULL, *f;
    cr_assert_eq(stvm_spawn_suspended(w.vm, 30, "s", log_tag, &a, 0, &s), STVM_OK);
    cr_assert_eq(stvm_process_suspend(w.vm, s), STVM_ESTATE);
    cr_assert_eq(state_of(w.vm, s), STVM_PROCESS_SUSPENDED);
    cr_assert_eq(stvm_process_terminate(w.vm, s), STVM_OK);
    cr_assert_eq(stvm_process_suspend(w.vm, s), STVM_ESTATE);
    f = spawn(w.vm, 30, "f", finisher, NULL);
    run_ok_green(&w);
    cr_assert_eq(stvm_process_suspend(w.vm, f), STVM_ESTATE);
    cr_assert_eq(state_of(w.vm, f), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stvm_process_suspend(w.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_process_resume(w.vm, NULL), STVM_EINVAL);
    vm_done(w.vm);
}

static void self_suspender(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_suspend(vm, stvm_active_process(vm));
    trace_add(&w->t, 3);
}

static void self_resumer(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->info[0].state = gstate(w->vm, w->p[0]);
    trace_add(&w->t, 2);
    w->rc[1] = stvm_process_resume(vm, w->p[0]);   /* 40 > 30: runs before this returns */
    trace_add(&w->t, 4);
}

Test(process, a_process_suspending_itself_runs_again_only_after_resume)
{
    world w = {.vm = vm_make(NULL)};
    w.p[0] = spawn(w.vm, 40, "S", self_suspender, &w);
    spawn(w.vm, 30, "R", self_resumer, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[0].state, STVM_PROCESS_SUSPENDED);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

/* ---- terminate --------------------------------------------------------------------- */

static void self_terminator(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_terminate(vm, stvm_active_process(vm));
    trace_add(&w->t, 99);   /* never */
}

Test(process, terminating_the_active_process_does_not_return)
{
    world w = {.vm = vm_make(NULL)};
    actor b = {&w, 2};
    w.rc[0] = 12345;
    stvm_process *p = spawn(w.vm, 40, "self", self_terminator, &w);
    spawn(w.vm, 40, "next", log_tag, &b);
    run_ok_green(&w);
    static const int want[] = {1, 2};
    trace_expect(&w.t, want, 2);
    cr_assert_eq(w.rc[0], 12345, "terminate returned");
    cr_assert_eq(state_of(w.vm, p), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    cr_assert_eq(stvm_process_terminate(w.vm, p), STVM_ESTATE);
    vm_done(w.vm);
}

static void terminator(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_terminate(vm, w->p[1]);   /* ready */
    w->rc[1] = stvm_process_terminate(vm, w->p[2]);   /* waiting on sem */
    w->info[1].state = gstate(w->vm, w->p[1]);
    w->info[2].state = gstate(w->vm, w->p[2]);
    w->rc[2] = stvm_process_terminate(vm, w->p[1]);   /* again */
    w->rc[3] = stvm_semaphore_signal(vm, w->sem);
    w->u[0] = (uint64_t)stvm_semaphore_excess(vm, w->sem);
    trace_add(&w->t, 2);
}

Test(process, terminating_ready_and_waiting_processes_removes_them_for_good)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    actor r = {&w, 7}, ww = {&w, 6};
    w.p[2] = spawn(w.vm, 50, "waiter", sem_waiter, &ww);
    spawn(w.vm, 40, "T", terminator, &w);
    w.p[1] = spawn(w.vm, 30, "ready", log_tag, &r);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[1].state, STVM_PROCESS_TERMINATED);
    cr_assert_eq(w.info[2].state, STVM_PROCESS_TERMINATED);
    cr_assert_eq(w.rc[2], STVM_ESTATE);
    cr_assert_eq(w.u[0], 1, "the dead waiter did not take the signal");
    static const int want[] = {1, 2};   /* neither victim ever logged */
    trace_expect(&w.t, want, 2);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    vm_done(w.vm);
}

Test(process, terminate_from_the_host_before_run)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1}, b = {&w, 2};
    stvm_process *pa = spawn(w.vm, 40, "a", log_tag, &a);
    spawn(w.vm, 40, "b", log_tag, &b);
    cr_assert_eq(stats_of(w.vm).processes_live, 3);
    cr_assert_eq(stvm_process_terminate(w.vm, pa), STVM_OK);
    cr_assert_eq(stats_of(w.vm).processes_live, 2);
    cr_assert_eq(stvm_process_terminate(w.vm, pa), STVM_ESTATE);
    cr_assert_eq(stvm_process_terminate(w.vm, NULL), STVM_EINVAL);
    stvm_semaphore *sem;
    cr_assert_eq(stvm_semaphore_new(w.vm, &sem), STVM_OK);
    cr_assert_eq(stvm_process_terminate(w.vm, (stvm_process *)sem), STVM_EINVAL,
                 "a semaphore is no process");
    cr_assert_eq(stvm_process_resume(w.vm, (stvm_process *)sem), STVM_EINVAL);
    run_ok_green(&w);
    static const int want[] = {2};
    trace_expect(&w.t, want, 1);
    vm_done(w.vm);
}

Test(process, set_priority_rejects_bad_priorities_and_finished_processes)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1};
    stvm_process *p = spawn(w.vm, 30, "p", log_tag, &a);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, 0), STVM_EINVAL);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, 81), STVM_EINVAL);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, -5), STVM_EINVAL);
    cr_assert_eq(stvm_process_set_priority(w.vm, NULL, 30), STVM_EINVAL);
    stvm_process_info info;
    cr_assert_eq(stvm_process_info_get(w.vm, p, &info), STVM_OK);
    cr_assert_eq(info.priority, 30);
    cr_assert_eq(info.state, STVM_PROCESS_READY);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, STVM_PRIORITY_MAX), STVM_OK);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, STVM_PRIORITY_MIN), STVM_OK);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, 30), STVM_OK);
    run_ok_green(&w);
    cr_assert_eq(stvm_process_set_priority(w.vm, p, 40), STVM_ESTATE);
    cr_assert_eq(stvm_process_info_get(w.vm, p, &info), STVM_OK);
    cr_assert_eq(info.priority, 30);
    vm_done(w.vm);
}

/* ---- process info ------------------------------------------------------------------ */

static void mutex_holder(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    GCHECK(w, stvm_semaphore_wait(vm, w->sem2) == STVM_OK);   /* holds the mutex */
    GCHECK(w, stvm_mutex_exit(vm, w->m) == STVM_OK);
}

static void mutex_waiter(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    GCHECK(w, stvm_mutex_exit(vm, w->m) == STVM_OK);
}

static void observer(stvm_vm *vm, void *arg)
{
    world *w = arg;
    stvm_process *self = stvm_active_process(vm);
    GCHECK(w, stvm_process_info_get(vm, self, &w->info[0]) == STVM_OK);
    for (int i = 1; i <= 4; i++)
        GCHECK(w, stvm_process_info_get(vm, w->p[i], &w->info[i]) == STVM_OK);
    stvm_semaphore_signal(vm, w->sem2);
    stvm_semaphore_signal(vm, w->sem);
    stvm_process_resume(vm, w->p[4]);
}

Test(process, process_info_reports_every_state)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem2), STVM_OK);
    cr_assert_eq(stvm_mutex_new(w.vm, &w.m), STVM_OK);
    stvm_mutex *m = w.m;
    char name[16] = "observer";
    actor ww = {&w, 5}, rr = {&w, 6}, ss = {&w, 7};
    stvm_process *obs = spawn(w.vm, 40, name, observer, &w);
    strcpy(name, "clobbered");
    w.p[1] = spawn(w.vm, 30, "ready one", log_tag, &rr);
    w.p[2] = spawn(w.vm, 60, "sem waiter", sem_waiter, &ww);
    spawn(w.vm, 55, "holder", mutex_holder, &w);
    w.p[3] = spawn(w.vm, 50, "mutex waiter", mutex_waiter, &w);
    cr_assert_eq(stvm_spawn_suspended(w.vm, 20, NULL, log_tag, &ss, 0, &w.p[4]), STVM_OK);
    run_ok_green(&w);

    cr_assert_str_eq(w.info[0].name, "observer", "the name was copied");
    cr_assert_eq(w.info[0].state, STVM_PROCESS_ACTIVE);
    cr_assert_eq(w.info[0].priority, 40);
    cr_assert_eq(w.info[0].id, 2);
    cr_assert_eq(w.info[0].vm_own, false);
    cr_assert_null(w.info[0].waiting_on);
    cr_assert_null(w.info[0].waiting_object);

    cr_assert_eq(w.info[1].state, STVM_PROCESS_READY);
    cr_assert_str_eq(w.info[1].name, "ready one");
    cr_assert_eq(w.info[1].id, 3);
    cr_assert_null(w.info[1].waiting_on);

    cr_assert_eq(w.info[2].state, STVM_PROCESS_WAITING);
    cr_assert_str_eq(w.info[2].waiting_on, "semaphore");
    cr_assert_eq(w.info[2].waiting_object, (const void *)w.sem);
    cr_assert_eq(w.info[2].priority, 60);

    cr_assert_eq(w.info[3].state, STVM_PROCESS_WAITING);
    cr_assert_str_eq(w.info[3].waiting_on, "mutex");
    cr_assert_eq(w.info[3].waiting_object, (const void *)m);

    cr_assert_eq(w.info[4].state, STVM_PROCESS_SUSPENDED);
    cr_assert_str_eq(w.info[4].name, "", "NULL name is the empty string");
    cr_assert_eq(w.info[4].id, 7);
    cr_assert_null(w.info[4].waiting_on);

    stvm_process_info after;
    cr_assert_eq(stvm_process_info_get(w.vm, obs, &after), STVM_OK);
    cr_assert_eq(after.state, STVM_PROCESS_TERMINATED, "handles outlive their processes");
    cr_assert_str_eq(after.name, "observer");
    static const int want[] = {5, 6, 7};
    trace_expect(&w.t, want, 3);
    cr_assert_null(stvm_mutex_owner(w.vm, m));
    cr_assert_eq(stvm_mutex_free(w.vm, m), STVM_OK);
    vm_done(w.vm);
}

Test(process, process_info_rejects_bad_arguments)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_process *p;
    stvm_semaphore *sem;
    cr_assert_eq(stvm_spawn(vm, 30, "p", finisher, NULL, &p), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    stvm_process_info info;
    cr_assert_eq(stvm_process_info_get(vm, NULL, &info), STVM_EINVAL);
    cr_assert_eq(stvm_process_info_get(vm, p, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_process_info_get(NULL, p, &info), STVM_EINVAL);
    cr_assert_eq(stvm_process_info_get(vm, (stvm_process *)sem, &info), STVM_EINVAL);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    vm_done(vm);
}

static void who_am_i(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->p[0] = stvm_active_process(vm);
}

Test(process, active_process_is_the_caller_inside_and_null_on_the_host)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_null(stvm_active_process(w.vm));
    cr_assert_null(stvm_active_process(NULL));
    stvm_process *p = spawn(w.vm, 40, "me", who_am_i, &w);
    run_ok_green(&w);
    cr_assert_eq(w.p[0], p);
    cr_assert_null(stvm_active_process(w.vm));
    vm_done(w.vm);
}

/* ---- spawn arguments -------------------------------------------------------------- */

Test(process, spawn_sized_rejects_bad_stack_sizes_and_accepts_good_ones)
{
    world w = {.vm = vm_make(NULL)};
    actor a[4] = {{&w, 1}, {&w, 2}, {&w, 3}, {&w, 4}};
    const size_t bad[] = {1, 4096, 8191, ((size_t)64 << 20) + 1, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stvm_process *p = (stvm_process *)(uintptr_t)0x5EED0;
        cr_assert_eq(stvm_spawn_sized(w.vm, 30, "bad", log_tag, &a[0], bad[i], &p), STVM_EINVAL,
                     "size %zu", bad[i]);
        cr_assert_eq((uintptr_t)p, 0x5EED0, "out untouched");
        cr_assert_eq(stvm_spawn_suspended(w.vm, 30, "bad", log_tag, &a[0], bad[i], NULL),
                     STVM_EINVAL, "size %zu", bad[i]);
    }
    cr_assert_eq(stats_of(w.vm).processes_live, 1, "nothing was created");
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "8k", log_tag, &a[0], 8192, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "odd", log_tag, &a[1], 8192 + 100, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "1m", log_tag, &a[2], (size_t)1 << 20, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "default", log_tag, &a[3], 0, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(w.vm, 30, "64m", finisher, NULL, (size_t)64 << 20, NULL),
                 STVM_OK, "the upper limit is allowed");
    run_ok_green(&w);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&w.t, want, 4);
    vm_done(w.vm);
}

Test(process, spawn_rejects_bad_arguments_and_creates_nothing)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1};
    stvm_process *p = (stvm_process *)(uintptr_t)0x5EED0;
    cr_assert_eq(stvm_spawn(w.vm, 0, "x", log_tag, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn(w.vm, 81, "x", log_tag, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn(w.vm, 30, "x", NULL, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn(NULL, 30, "x", log_tag, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn_suspended(w.vm, 81, "x", log_tag, &a, 0, &p), STVM_EINVAL);
    cr_assert_eq((uintptr_t)p, 0x5EED0);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    cr_assert_eq(stvm_spawn(w.vm, STVM_PRIORITY_MAX, "max", log_tag, &a, NULL), STVM_OK,
                 "out may be NULL");
    run_ok_green(&w);
    static const int want[] = {1};
    trace_expect(&w.t, want, 1);
    vm_done(w.vm);
}

static void spawn_suspended_then_resume(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor h;
    h = (actor){w, 2};
    w->rc[0] = stvm_spawn_suspended(vm, 50, "later", log_tag, &h, 0, &w->p[1]);
    trace_add(&w->t, 1);
    w->info[1].state = gstate(w->vm, w->p[1]);
    w->rc[1] = stvm_process_resume(vm, w->p[1]);   /* higher: runs now */
    trace_add(&w->t, 3);
}

Test(process, spawn_suspended_runs_only_after_resume)
{
    world w = {.vm = vm_make(NULL)};
    spawn(w.vm, 30, "starter", spawn_suspended_then_resume, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    cr_assert_eq(w.rc[1], STVM_OK);
    cr_assert_eq(w.info[1].state, STVM_PROCESS_SUSPENDED);
    static const int want[] = {1, 2, 3};
    trace_expect(&w.t, want, 3);
    vm_done(w.vm);
}
