/*
 * Processes one by one: spawn and its arguments, suspend and resume, terminate,
 * priority checks, process info and the active process, and the calls that need a
 * process.
 *
 * Green processes record what they see in their test's scenario struct (see helpers.h);
 * the host asserts after stvm_run returns.
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

/* A process suspended and resumed by another one (or by itself), which may be waiting
 * on sem meanwhile. */
typedef struct suspending {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    stvm_process *target;
    int suspend_rc, resume_rc;
    stvm_process_state suspended_state;   /* the target's, after the suspend */
    stvm_process_state resumed_state;     /* the target's, after the resume */
    int wait_rc;                          /* the target's wait */
    int signal_rc;                        /* a signal while it is suspended */
    uint64_t excess_after_signal, excess_at_end;
    int bad_line;
} suspending;

static void suspend_resume_controller(stvm_vm *vm, void *arg)
{
    suspending *s = arg;
    s->suspend_rc = stvm_process_suspend(vm, s->target);
    s->suspended_state = gstate(s->vm, s->target);
    trace_add(&s->log, 1);
    s->resume_rc = stvm_process_resume(vm, s->target);
    s->resumed_state = gstate(s->vm, s->target);
    trace_add(&s->log, 2);
}

Test(process, suspend_takes_a_ready_process_off_its_queue_until_resumed)
{
    suspending s = {.vm = vm_make(NULL)};
    tagged b = {&s.log, 3};
    spawn(s.vm, 40, "controller", suspend_resume_controller, &s);
    s.target = spawn(s.vm, 30, "B", log_tag, &b);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.suspend_rc, STVM_OK);
    cr_assert_eq(s.suspended_state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(s.resume_rc, STVM_OK);
    cr_assert_eq(s.resumed_state, STVM_PROCESS_READY);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    vm_done(s.vm);
}

static void finisher(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

/* A controller resumes four processes none of which is suspended. */
typedef struct refused_resumes {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    stvm_process *ready, *waiter;
    int resume_rc[4];   /* of the ready one, the waiter, itself (active), a finished one */
    uint64_t switches;  /* during the four resumes */
    stvm_process_state ready_state, self_state;   /* after the resumes */
    stvm_process_info waiter_info;                /* after the resumes */
    int bad_line;
} refused_resumes;

static void resume_refuser(stvm_vm *vm, void *arg)
{
    refused_resumes *s = arg;
    stvm_process *self = stvm_vm_active_process(vm);
    stvm_process *done = NULL;
    GCHECK(s, stvm_spawn(vm, 60, "done", finisher, NULL, &done) == STVM_OK);
    GCHECK(s, gstate(s->vm, done) == STVM_PROCESS_TERMINATED);
    uint64_t before = switches(vm);
    s->resume_rc[0] = stvm_process_resume(vm, s->ready);    /* ready */
    s->resume_rc[1] = stvm_process_resume(vm, s->waiter);   /* waiting on sem */
    s->resume_rc[2] = stvm_process_resume(vm, self);        /* active */
    s->resume_rc[3] = stvm_process_resume(vm, done);        /* terminated */
    s->switches = switches(vm) - before;
    s->ready_state = gstate(s->vm, s->ready);
    stvm_process_get_info(vm, s->waiter, &s->waiter_info);
    s->self_state = gstate(s->vm, self);
    trace_add(&s->log, 1);
    stvm_semaphore_signal(vm, s->sem);   /* W (50) preempts */
    trace_add(&s->log, 3);
}

Test(process, resume_of_a_process_that_is_not_suspended_is_estate_and_changes_nothing)
{
    refused_resumes s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    tagged r = {&s.log, 4};
    logged_wait w = {.sem = s.sem, .log = &s.log, .tag = 2};
    s.waiter = spawn(s.vm, 50, "W", wait_and_log, &w);
    spawn(s.vm, 40, "C", resume_refuser, &s);
    s.ready = spawn(s.vm, 30, "R", log_tag, &r);
    RUN_OK_GREEN(&s);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(s.resume_rc[i], STVM_ESTATE, "resume #%d: %s", i,
                     stvm_err_name(s.resume_rc[i]));
    cr_assert_eq(s.switches, 0, "no switch");
    cr_assert_eq(s.ready_state, STVM_PROCESS_READY);
    cr_assert_eq(s.waiter_info.state, STVM_PROCESS_WAITING);
    cr_assert_eq(s.waiter_info.waiting_object, (const void *)s.sem);
    cr_assert_eq(s.self_state, STVM_PROCESS_ACTIVE);
    cr_assert_eq(w.rc, STVM_OK);
    static const int want[] = {1, 2, 3, 4};   /* R ran exactly once, last */
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
}

static void aborted_waiter(stvm_vm *vm, void *arg)
{
    suspending *s = arg;
    trace_add(&s->log, 1);
    s->wait_rc = stvm_semaphore_wait(vm, s->sem);
    trace_add(&s->log, 3);
}

static void waiter_suspender(stvm_vm *vm, void *arg)
{
    suspending *s = arg;
    trace_add(&s->log, 2);
    s->suspend_rc = stvm_process_suspend(vm, s->target);
    s->suspended_state = gstate(s->vm, s->target);
    s->signal_rc = stvm_semaphore_signal(vm, s->sem);   /* nobody waits: an excess signal */
    s->excess_after_signal = (uint64_t)stvm_semaphore_excess(vm, s->sem);
    s->resume_rc = stvm_process_resume(vm, s->target);  /* W (40) preempts, wait -> ESTATE */
    trace_add(&s->log, 4);
    s->excess_at_end = (uint64_t)stvm_semaphore_excess(vm, s->sem);
}

Test(process, suspending_a_waiter_makes_its_wait_return_estate_once_resumed)
{
    suspending s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    s.target = spawn(s.vm, 40, "W", aborted_waiter, &s);
    spawn(s.vm, 30, "C", waiter_suspender, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.suspend_rc, STVM_OK);
    cr_assert_eq(s.suspended_state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(s.signal_rc, STVM_OK);
    cr_assert_eq(s.excess_after_signal, 1, "the suspended waiter did not take the signal");
    cr_assert_eq(s.resume_rc, STVM_OK);
    cr_assert_eq(s.wait_rc, STVM_ESTATE, "wait returned %s", stvm_err_name(s.wait_rc));
    cr_assert_eq(s.excess_at_end, 1, "the signal is still there");
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
}

Test(process, suspend_of_a_suspended_or_finished_process_is_estate)
{
    run_order sc = {.vm = vm_make(NULL)};
    tagged a = {&sc.log, 1};
    stvm_process *s = NULL, *f;
    cr_assert_eq(stvm_spawn_suspended(sc.vm, 30, "s", log_tag, &a, 0, &s), STVM_OK);
    cr_assert_eq(stvm_process_suspend(sc.vm, s), STVM_ESTATE);
    cr_assert_eq(state_of(sc.vm, s), STVM_PROCESS_SUSPENDED);
    cr_assert_eq(stvm_process_terminate(sc.vm, s), STVM_OK);
    cr_assert_eq(stvm_process_suspend(sc.vm, s), STVM_ESTATE);
    f = spawn(sc.vm, 30, "f", finisher, NULL);
    RUN_OK_GREEN(&sc);
    cr_assert_eq(stvm_process_suspend(sc.vm, f), STVM_ESTATE);
    cr_assert_eq(state_of(sc.vm, f), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stvm_process_suspend(sc.vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_process_resume(sc.vm, NULL), STVM_EINVAL);
    vm_done(sc.vm);
}

static void self_suspender(stvm_vm *vm, void *arg)
{
    suspending *s = arg;
    trace_add(&s->log, 1);
    s->suspend_rc = stvm_process_suspend(vm, stvm_vm_active_process(vm));
    trace_add(&s->log, 3);
}

static void self_resumer(stvm_vm *vm, void *arg)
{
    suspending *s = arg;
    s->suspended_state = gstate(s->vm, s->target);
    trace_add(&s->log, 2);
    s->resume_rc = stvm_process_resume(vm, s->target);   /* 40 > 30: runs before this returns */
    trace_add(&s->log, 4);
}

Test(process, a_process_suspending_itself_runs_again_only_after_resume)
{
    suspending s = {.vm = vm_make(NULL)};
    s.target = spawn(s.vm, 40, "S", self_suspender, &s);
    spawn(s.vm, 30, "R", self_resumer, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.suspend_rc, STVM_OK);
    cr_assert_eq(s.resume_rc, STVM_OK);
    cr_assert_eq(s.suspended_state, STVM_PROCESS_SUSPENDED);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
}

/* ---- terminate --------------------------------------------------------------------- */

typedef struct self_terminating {
    stvm_vm *vm;
    trace_log log;
    int terminate_rc;   /* preset: terminate must not return to set it */
    int bad_line;
} self_terminating;

static void self_terminator(stvm_vm *vm, void *arg)
{
    self_terminating *s = arg;
    trace_add(&s->log, 1);
    s->terminate_rc = stvm_process_terminate(vm, stvm_vm_active_process(vm));
    trace_add(&s->log, 99);   /* never */
}

Test(process, terminating_the_active_process_does_not_return)
{
    self_terminating s = {.vm = vm_make(NULL)};
    tagged b = {&s.log, 2};
    s.terminate_rc = 12345;
    stvm_process *p = spawn(s.vm, 40, "self", self_terminator, &s);
    spawn(s.vm, 40, "next", log_tag, &b);
    RUN_OK_GREEN(&s);
    static const int want[] = {1, 2};
    trace_expect(&s.log, want, 2);
    cr_assert_eq(s.terminate_rc, 12345, "terminate returned");
    cr_assert_eq(state_of(s.vm, p), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stats_of(s.vm).processes_live, 1);
    cr_assert_eq(stvm_process_terminate(s.vm, p), STVM_OK, "a finished process: a no-op");
    cr_assert_eq(stats_of(s.vm).processes_live, 1);
    vm_done(s.vm);
}

/* A controller terminates a ready process and one waiting on sem. */
typedef struct terminating {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    stvm_process *ready, *waiter;
    int terminate_ready_rc, terminate_waiter_rc, terminate_again_rc;
    stvm_process_state ready_state, waiter_state;   /* after the terminates */
    int signal_rc;
    uint64_t excess_after_signal;
    int bad_line;
} terminating;

static void terminator(stvm_vm *vm, void *arg)
{
    terminating *s = arg;
    trace_add(&s->log, 1);
    s->terminate_ready_rc = stvm_process_terminate(vm, s->ready);     /* ready */
    s->terminate_waiter_rc = stvm_process_terminate(vm, s->waiter);   /* waiting on sem */
    s->ready_state = gstate(s->vm, s->ready);
    s->waiter_state = gstate(s->vm, s->waiter);
    s->terminate_again_rc = stvm_process_terminate(vm, s->ready);     /* again */
    s->signal_rc = stvm_semaphore_signal(vm, s->sem);
    s->excess_after_signal = (uint64_t)stvm_semaphore_excess(vm, s->sem);
    trace_add(&s->log, 2);
}

Test(process, terminating_ready_and_waiting_processes_removes_them_for_good)
{
    terminating s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    tagged r = {&s.log, 7};
    logged_wait ww = {.sem = s.sem, .log = &s.log, .tag = 6};
    s.waiter = spawn(s.vm, 50, "waiter", wait_and_log, &ww);
    spawn(s.vm, 40, "T", terminator, &s);
    s.ready = spawn(s.vm, 30, "ready", log_tag, &r);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.terminate_ready_rc, STVM_OK);
    cr_assert_eq(s.terminate_waiter_rc, STVM_OK);
    cr_assert_eq(s.ready_state, STVM_PROCESS_TERMINATED);
    cr_assert_eq(s.waiter_state, STVM_PROCESS_TERMINATED);
    cr_assert_eq(s.terminate_again_rc, STVM_OK, "a finished process: a no-op");
    cr_assert_eq(s.excess_after_signal, 1, "the dead waiter did not take the signal");
    static const int want[] = {1, 2};   /* neither victim ever logged */
    trace_expect(&s.log, want, 2);
    cr_assert_eq(stats_of(s.vm).processes_live, 1);
    vm_done(s.vm);
}

Test(process, terminate_from_the_host_before_run)
{
    run_order s = {.vm = vm_make(NULL)};
    tagged a = {&s.log, 1}, b = {&s.log, 2};
    stvm_process *pa = spawn(s.vm, 40, "a", log_tag, &a);
    spawn(s.vm, 40, "b", log_tag, &b);
    cr_assert_eq(stats_of(s.vm).processes_live, 3);
    cr_assert_eq(stvm_process_terminate(s.vm, pa), STVM_OK);
    cr_assert_eq(stats_of(s.vm).processes_live, 2);
    cr_assert_eq(stvm_process_terminate(s.vm, pa), STVM_OK, "a finished process: a no-op");
    cr_assert_eq(stats_of(s.vm).processes_live, 2);
    cr_assert_eq(stvm_process_terminate(s.vm, NULL), STVM_EINVAL);
    stvm_semaphore *sem;
    cr_assert_eq(stvm_semaphore_new(s.vm, &sem), STVM_OK);
    cr_assert_eq(stvm_process_terminate(s.vm, (stvm_process *)sem), STVM_EINVAL,
                 "a semaphore is no process");
    cr_assert_eq(stvm_process_resume(s.vm, (stvm_process *)sem), STVM_EINVAL);
    RUN_OK_GREEN(&s);
    static const int want[] = {2};
    trace_expect(&s.log, want, 1);
    vm_done(s.vm);
}

/* ---- priority checks ---------------------------------------------------------------- */

Test(process, set_priority_rejects_bad_priorities_and_finished_processes)
{
    run_order s = {.vm = vm_make(NULL)};
    tagged a = {&s.log, 1};
    stvm_process *p = spawn(s.vm, 30, "p", log_tag, &a);
    cr_assert_eq(stvm_process_set_priority(s.vm, p, 0), STVM_EINVAL);
    cr_assert_eq(stvm_process_set_priority(s.vm, p, 81), STVM_EINVAL);
    cr_assert_eq(stvm_process_set_priority(s.vm, p, -5), STVM_EINVAL);
    cr_assert_eq(stvm_process_set_priority(s.vm, NULL, 30), STVM_EINVAL);
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(s.vm, p, &info), STVM_OK);
    cr_assert_eq(info.priority, 30);
    cr_assert_eq(info.state, STVM_PROCESS_READY);
    cr_assert_eq(stvm_process_set_priority(s.vm, p, STVM_PRIORITY_MAX), STVM_OK);
    cr_assert_eq(stvm_process_set_priority(s.vm, p, STVM_PRIORITY_MIN), STVM_OK);
    cr_assert_eq(stvm_process_set_priority(s.vm, p, 30), STVM_OK);
    RUN_OK_GREEN(&s);
    cr_assert_eq(stvm_process_set_priority(s.vm, p, 40), STVM_ESTATE);
    cr_assert_eq(stvm_process_get_info(s.vm, p, &info), STVM_OK);
    cr_assert_eq(info.priority, 30);
    vm_done(s.vm);
}

/* ---- process info ------------------------------------------------------------------ */

/* An observer records the info of itself and of a process in each other state. */
typedef struct observed {
    stvm_vm *vm;
    stvm_semaphore *sem;       /* the semaphore waiter's */
    stvm_semaphore *release;   /* the mutex holder's */
    stvm_mutex *m;
    trace_log log;
    stvm_process *ready, *sem_waiter, *mutex_waiter, *suspended;
    stvm_process_info self_info, ready_info, sem_waiter_info, mutex_waiter_info,
        suspended_info;
    int bad_line;
} observed;

static void mutex_waiter(stvm_vm *vm, void *arg)
{
    observed *s = arg;
    GCHECK(s, stvm_mutex_enter(vm, s->m) == STVM_OK);
    GCHECK(s, stvm_mutex_exit(vm, s->m) == STVM_OK);
}

static void observer(stvm_vm *vm, void *arg)
{
    observed *s = arg;
    stvm_process *self = stvm_vm_active_process(vm);
    GCHECK(s, stvm_process_get_info(vm, self, &s->self_info) == STVM_OK);
    GCHECK(s, stvm_process_get_info(vm, s->ready, &s->ready_info) == STVM_OK);
    GCHECK(s, stvm_process_get_info(vm, s->sem_waiter, &s->sem_waiter_info) == STVM_OK);
    GCHECK(s, stvm_process_get_info(vm, s->mutex_waiter, &s->mutex_waiter_info) == STVM_OK);
    GCHECK(s, stvm_process_get_info(vm, s->suspended, &s->suspended_info) == STVM_OK);
    stvm_semaphore_signal(vm, s->release);
    stvm_semaphore_signal(vm, s->sem);
    stvm_process_resume(vm, s->suspended);
}

Test(process, process_info_reports_every_state)
{
    observed s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.release), STVM_OK);
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    stvm_mutex *m = s.m;
    char name[16] = "observer";
    logged_wait ww = {.sem = s.sem, .log = &s.log, .tag = 5};
    tagged rr = {&s.log, 6}, ss = {&s.log, 7};
    holder h = {s.m, s.release, &s.bad_line};
    stvm_process *obs = spawn(s.vm, 40, name, observer, &s);
    strcpy(name, "clobbered");
    s.ready = spawn(s.vm, 30, "ready one", log_tag, &rr);
    s.sem_waiter = spawn(s.vm, 60, "sem waiter", wait_and_log, &ww);
    spawn(s.vm, 55, "holder", hold_until_signalled, &h);
    s.mutex_waiter = spawn(s.vm, 50, "mutex waiter", mutex_waiter, &s);
    cr_assert_eq(stvm_spawn_suspended(s.vm, 20, NULL, log_tag, &ss, 0, &s.suspended), STVM_OK);
    RUN_OK_GREEN(&s);

    cr_assert_str_eq(s.self_info.name, "observer", "the name was copied");
    cr_assert_eq(s.self_info.state, STVM_PROCESS_ACTIVE);
    cr_assert_eq(s.self_info.priority, 40);
    cr_assert_eq(s.self_info.id, 2);
    cr_assert_eq(s.self_info.vm_own, false);
    cr_assert_null(s.self_info.waiting_on);
    cr_assert_null(s.self_info.waiting_object);

    cr_assert_eq(s.ready_info.state, STVM_PROCESS_READY);
    cr_assert_str_eq(s.ready_info.name, "ready one");
    cr_assert_eq(s.ready_info.id, 3);
    cr_assert_null(s.ready_info.waiting_on);

    cr_assert_eq(s.sem_waiter_info.state, STVM_PROCESS_WAITING);
    cr_assert_str_eq(s.sem_waiter_info.waiting_on, "semaphore");
    cr_assert_eq(s.sem_waiter_info.waiting_object, (const void *)s.sem);
    cr_assert_eq(s.sem_waiter_info.priority, 60);

    cr_assert_eq(s.mutex_waiter_info.state, STVM_PROCESS_WAITING);
    cr_assert_str_eq(s.mutex_waiter_info.waiting_on, "mutex");
    cr_assert_eq(s.mutex_waiter_info.waiting_object, (const void *)m);

    cr_assert_eq(s.suspended_info.state, STVM_PROCESS_SUSPENDED);
    cr_assert_str_eq(s.suspended_info.name, "", "NULL name is the empty string");
    cr_assert_eq(s.suspended_info.id, 7);
    cr_assert_null(s.suspended_info.waiting_on);

    stvm_process_info after;
    cr_assert_eq(stvm_process_get_info(s.vm, obs, &after), STVM_OK);
    cr_assert_eq(after.state, STVM_PROCESS_TERMINATED, "handles outlive their processes");
    cr_assert_str_eq(after.name, "observer");
    static const int want[] = {5, 6, 7};
    trace_expect(&s.log, want, 3);
    cr_assert_null(stvm_mutex_owner(s.vm, m));
    cr_assert_eq(stvm_mutex_free(s.vm, m), STVM_OK);
    vm_done(s.vm);
}

Test(process, process_info_rejects_bad_arguments)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_process *p;
    stvm_semaphore *sem;
    cr_assert_eq(stvm_spawn(vm, 30, "p", finisher, NULL, &p), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(vm, NULL, &info), STVM_EINVAL);
    cr_assert_eq(stvm_process_get_info(vm, p, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_process_get_info(NULL, p, &info), STVM_EINVAL);
    cr_assert_eq(stvm_process_get_info(vm, (stvm_process *)sem, &info), STVM_EINVAL);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    vm_done(vm);
}

typedef struct who {
    stvm_vm *vm;
    stvm_process *active;   /* as the process saw it */
    int bad_line;
} who;

static void who_am_i(stvm_vm *vm, void *arg)
{
    who *s = arg;
    s->active = stvm_vm_active_process(vm);
}

Test(process, active_process_is_the_caller_inside_and_null_on_the_host)
{
    who s = {.vm = vm_make(NULL)};
    cr_assert_null(stvm_vm_active_process(s.vm));
    cr_assert_null(stvm_vm_active_process(NULL));
    stvm_process *p = spawn(s.vm, 40, "me", who_am_i, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.active, p);
    cr_assert_null(stvm_vm_active_process(s.vm));
    vm_done(s.vm);
}

/* ---- spawn arguments -------------------------------------------------------------- */

Test(process, spawn_sized_rejects_bad_stack_sizes_and_accepts_good_ones)
{
    run_order s = {.vm = vm_make(NULL)};
    tagged a[4] = {{&s.log, 1}, {&s.log, 2}, {&s.log, 3}, {&s.log, 4}};
    const size_t bad[] = {1, 4096, 8191, ((size_t)64 << 20) + 1, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stvm_process *p = (stvm_process *)(uintptr_t)0x5EED0;
        cr_assert_eq(stvm_spawn_sized(s.vm, 30, "bad", log_tag, &a[0], bad[i], &p), STVM_EINVAL,
                     "size %zu", bad[i]);
        cr_assert_eq((uintptr_t)p, 0x5EED0, "out untouched");
        cr_assert_eq(stvm_spawn_suspended(s.vm, 30, "bad", log_tag, &a[0], bad[i], NULL),
                     STVM_EINVAL, "size %zu", bad[i]);
    }
    cr_assert_eq(stats_of(s.vm).processes_live, 1, "nothing was created");
    cr_assert_eq(stvm_spawn_sized(s.vm, 30, "8k", log_tag, &a[0], 8192, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(s.vm, 30, "odd", log_tag, &a[1], 8192 + 100, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(s.vm, 30, "1m", log_tag, &a[2], (size_t)1 << 20, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(s.vm, 30, "default", log_tag, &a[3], 0, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn_sized(s.vm, 30, "64m", finisher, NULL, (size_t)64 << 20, NULL),
                 STVM_OK, "the upper limit is allowed");
    RUN_OK_GREEN(&s);
    static const int want[] = {1, 2, 3, 4};
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
}

Test(process, spawn_rejects_bad_arguments_and_creates_nothing)
{
    run_order s = {.vm = vm_make(NULL)};
    tagged a = {&s.log, 1};
    stvm_process *p = (stvm_process *)(uintptr_t)0x5EED0;
    cr_assert_eq(stvm_spawn(s.vm, 0, "x", log_tag, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn(s.vm, 81, "x", log_tag, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn(s.vm, 30, "x", NULL, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn(NULL, 30, "x", log_tag, &a, &p), STVM_EINVAL);
    cr_assert_eq(stvm_spawn_suspended(s.vm, 81, "x", log_tag, &a, 0, &p), STVM_EINVAL);
    cr_assert_eq((uintptr_t)p, 0x5EED0);
    cr_assert_eq(stats_of(s.vm).processes_live, 1);
    cr_assert_eq(stvm_spawn(s.vm, STVM_PRIORITY_MAX, "max", log_tag, &a, NULL), STVM_OK,
                 "out may be NULL");
    RUN_OK_GREEN(&s);
    static const int want[] = {1};
    trace_expect(&s.log, want, 1);
    vm_done(s.vm);
}

typedef struct spawned_suspended {
    stvm_vm *vm;
    trace_log log;
    stvm_process *later;
    int spawn_rc, resume_rc;
    stvm_process_state state_before_resume;
    int bad_line;
} spawned_suspended;

static void spawn_suspended_then_resume(stvm_vm *vm, void *arg)
{
    spawned_suspended *s = arg;
    static tagged h;
    h = (tagged){&s->log, 2};
    s->spawn_rc = stvm_spawn_suspended(vm, 50, "later", log_tag, &h, 0, &s->later);
    trace_add(&s->log, 1);
    s->state_before_resume = gstate(s->vm, s->later);
    s->resume_rc = stvm_process_resume(vm, s->later);   /* higher: runs now */
    trace_add(&s->log, 3);
}

Test(process, spawn_suspended_runs_only_after_resume)
{
    spawned_suspended s = {.vm = vm_make(NULL)};
    spawn(s.vm, 30, "starter", spawn_suspended_then_resume, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.spawn_rc, STVM_OK);
    cr_assert_eq(s.resume_rc, STVM_OK);
    cr_assert_eq(s.state_before_resume, STVM_PROCESS_SUSPENDED);
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    vm_done(s.vm);
}

/* Found by the model: a process terminated while it ran a cleanup by hand exits when
 * that cleanup ends; a cleanup of that exit which itself runs one by hand must then run
 * to its end, not start the exit over when the inner one returns. */
typedef struct {
    int log[8];
    int n;
} exit_log;

static void el_inner(stvm_vm *vm, void *arg)
{
    (void)vm;
    exit_log *l = arg;
    l->log[l->n++] = 3;
}

static void el_outer(stvm_vm *vm, void *arg)
{
    exit_log *l = arg;
    l->log[l->n++] = 2;
    cr_assert_eq(stvm_ensure_pop(vm, true), STVM_OK);   /* runs el_inner */
    l->log[l->n++] = 4;                                 /* the rest of this cleanup */
}

static void el_by_hand(stvm_vm *vm, void *arg)
{
    exit_log *l = arg;
    l->log[l->n++] = 1;
    cr_assert_eq(stvm_process_terminate(vm, stvm_vm_active_process(vm)), STVM_OK);
}

static void el_body(stvm_vm *vm, void *arg)
{
    cr_assert_eq(stvm_ensure(vm, el_inner, arg), STVM_OK);
    cr_assert_eq(stvm_ensure(vm, el_outer, arg), STVM_OK);
    cr_assert_eq(stvm_ensure(vm, el_by_hand, arg), STVM_OK);
    stvm_ensure_pop(vm, true);   /* terminated inside: does not return */
    exit_log *l = arg;
    l->log[l->n++] = 99;
}

Test(process, a_cleanup_of_an_exit_after_a_by_hand_cleanup_runs_to_its_end)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    exit_log l = {{0}, 0};
    spawn(vm, 40, "p", el_body, &l);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(l.n, 4);
    cr_assert_eq(l.log[0], 1);
    cr_assert_eq(l.log[1], 2);
    cr_assert_eq(l.log[2], 3);
    cr_assert_eq(l.log[3], 4);
    vm_done(vm);
}
