/*
 * stvm_run: its results (finished, busy, deadlock), the blocked report, running again
 * after a deadlock, and thousands of processes in one run.
 *
 * Green processes never call Criterion's asserts (they may run on small stacks): they
 * record what they see in a `world`, and GCHECK notes the first line whose condition
 * failed; the host asserts after stvm_run returns.
 */
#include <string.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(run, .timeout = 30);

/* ---- stvm_run's results ----------------------------------------------------------- */

static void nested_runner(stvm_vm *vm, void *arg)
{
    world *w = arg;
    w->rc[0] = stvm_run(vm);
    w->p[0] = stvm_active_process(vm);
    trace_add(&w->t, 1);
}

Test(run, run_from_inside_a_process_is_ebusy)
{
    world w = {.vm = vm_make(NULL)};
    stvm_process *p = spawn(w.vm, 40, "nested", nested_runner, &w);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_EBUSY);
    cr_assert_eq(w.p[0], p, "still the same process after the refused run");
    static const int want[] = {1};
    trace_expect(&w.t, want, 1);
    vm_done(w.vm);
}

static void tree_root(stvm_vm *vm, void *arg)
{
    world *w = arg;
    static actor kids[3];
    kids[0] = (actor){w, 60};
    kids[1] = (actor){w, 20};
    kids[2] = (actor){w, 40};
    trace_add(&w->t, 40);
    w->rc[0] = stvm_spawn(vm, 60, "k60", log_tag, &kids[0], NULL);
    w->rc[1] = stvm_spawn(vm, 20, "k20", log_tag, &kids[1], NULL);
    w->rc[2] = stvm_spawn(vm, 40, "k40", log_tag, &kids[2], NULL);
    trace_add(&w->t, 41);
}

Test(run, run_returns_ok_when_every_user_process_has_finished)
{
    world w = {.vm = vm_make(NULL)};
    spawn(w.vm, 40, "root", tree_root, &w);
    run_ok_green(&w);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(w.rc[i], STVM_OK);
    static const int want[] = {40, 60, 41, 40, 20};
    trace_expect(&w.t, want, 5);
    cr_assert_eq(stats_of(w.vm).processes_live, 1);
    cr_assert_null(stvm_active_process(w.vm));
    vm_done(w.vm);
}

Test(run, run_is_edeadlock_when_all_wait_and_the_report_names_them)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    actor a = {&w, 1}, b = {&w, 2};
    stvm_process *pa = spawn(w.vm, 40, "waiter", sem_waiter, &a);
    spawn(w.vm, 35, "other one", sem_waiter, &b);
    int err = stvm_run(w.vm);
    cr_assert_eq(err, STVM_EDEADLOCK, "stvm_run: %s", stvm_err_name(err));
    cr_assert_eq(w.t.n, 0);
    cr_assert_eq(state_of(w.vm, pa), STVM_PROCESS_WAITING);

    char buf[512];
    int n = stvm_blocked_report(w.vm, buf, sizeof buf);
    cr_assert_gt(n, 0);
    cr_assert_eq((size_t)n, strlen(buf));
    cr_assert_not_null(strstr(buf, "waiter"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "other one"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "priority 40"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "priority 35"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "semaphore"), "report: %s", buf);
    int lines = 0;
    for (const char *q = buf; *q; q++)
        lines += *q == '\n';
    cr_assert_eq(lines, 2, "one line per blocked process: %s", buf);
    /* sizing like snprintf */
    cr_assert_eq(stvm_blocked_report(w.vm, NULL, 0), n);
    char small[10];
    memset(small, 'x', sizeof small);
    cr_assert_eq(stvm_blocked_report(w.vm, small, sizeof small), n);
    cr_assert_eq(strlen(small), sizeof small - 1);
    cr_assert_eq(strncmp(small, buf, sizeof small - 1), 0);
    cr_assert_eq(stvm_blocked_report(w.vm, NULL, 5), STVM_EINVAL);
    cr_assert_eq(stvm_blocked_report(NULL, buf, sizeof buf), STVM_EINVAL);

    /* more work: one signal wakes the first waiter, the other still blocks */
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    cr_assert_eq(state_of(w.vm, pa), STVM_PROCESS_READY);
    err = stvm_run(w.vm);
    cr_assert_eq(err, STVM_EDEADLOCK, "stvm_run: %s", stvm_err_name(err));
    static const int want1[] = {1};
    trace_expect(&w.t, want1, 1);
    cr_assert_eq(w.rc[1], STVM_OK);
    n = stvm_blocked_report(w.vm, buf, sizeof buf);
    cr_assert_null(strstr(buf, "'waiter'"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "other one"), "report: %s", buf);

    /* and the last one */
    cr_assert_eq(stvm_semaphore_signal(w.vm, w.sem), STVM_OK);
    run_ok_green(&w);
    static const int want2[] = {1, 2};
    trace_expect(&w.t, want2, 2);
    cr_assert_eq(w.rc[2], STVM_OK);
    cr_assert_eq(stvm_blocked_report(w.vm, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "");
    cr_assert_eq(stvm_semaphore_excess(w.vm, w.sem), 0);
    vm_done(w.vm);
}

static void lock_a_then_b(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    stvm_yield(vm);   /* the other takes its first mutex */
    stvm_mutex_enter(vm, w->m2);
    trace_add(&w->t, 1);
}

static void lock_b_then_a(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m2) == STVM_OK);
    stvm_yield(vm);
    stvm_mutex_enter(vm, w->m);
    trace_add(&w->t, 2);
}

Test(run, two_processes_locking_two_mutexes_crosswise_are_a_reported_deadlock)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(w.vm, &w.m), STVM_OK);
    cr_assert_eq(stvm_mutex_new(w.vm, &w.m2), STVM_OK);
    stvm_mutex *mb = w.m2;
    stvm_process *a = spawn(w.vm, 40, "first", lock_a_then_b, &w);
    stvm_process *b = spawn(w.vm, 40, "second", lock_b_then_a, &w);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    ASSERT_GREEN_OK(&w);
    cr_assert_eq(w.t.n, 0);
    cr_assert_eq(stvm_mutex_owner(w.vm, w.m), a);
    cr_assert_eq(stvm_mutex_owner(w.vm, mb), b);
    char buf[512];
    stvm_blocked_report(w.vm, buf, sizeof buf);
    cr_assert_not_null(strstr(buf, "'first' (priority 40) waits on mutex"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "'second' (priority 40) waits on mutex"), "report: %s", buf);
    /* breaking the cycle: terminating one hands its mutex to the other */
    cr_assert_eq(stvm_process_terminate(w.vm, a), STVM_OK);
    cr_assert_eq(stvm_mutex_owner(w.vm, w.m), b);
    run_ok_green(&w);
    static const int want[] = {2};
    trace_expect(&w.t, want, 1);
    cr_assert_null(stvm_mutex_owner(w.vm, w.m), "released when b finished");
    cr_assert_null(stvm_mutex_owner(w.vm, mb));
    vm_done(w.vm);
}

Test(run, run_again_after_adding_processes_runs_them)
{
    world w = {.vm = vm_make(NULL)};
    actor a = {&w, 1}, b = {&w, 2};
    spawn(w.vm, 40, "first", log_tag, &a);
    run_ok_green(&w);
    spawn(w.vm, 40, "second", log_tag, &b);
    run_ok_green(&w);
    static const int want[] = {1, 2};
    trace_expect(&w.t, want, 2);
    vm_done(w.vm);
}

Test(run, terminating_blocked_processes_after_deadlock_lets_run_finish)
{
    world w = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(w.vm, &w.sem), STVM_OK);
    actor a = {&w, 1};
    stvm_process *p = spawn(w.vm, 40, "stuck", sem_waiter, &a);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_process_terminate(w.vm, p), STVM_OK);
    cr_assert_eq(state_of(w.vm, p), STVM_PROCESS_TERMINATED);
    run_ok_green(&w);
    cr_assert_eq(w.t.n, 0, "its C code never resumed");
    cr_assert_eq(stvm_semaphore_free(w.vm, w.sem), STVM_OK, "no waiter left");
    vm_done(w.vm);
}

static void suspends_itself(stvm_vm *vm, void *arg)
{
    world *w = arg;
    trace_add(&w->t, 1);
    w->rc[0] = stvm_process_suspend(vm, stvm_active_process(vm));
    trace_add(&w->t, 2);
}

Test(run, suspended_process_left_at_the_end_is_a_deadlock)
{
    world w = {.vm = vm_make(NULL)};
    stvm_process *p = spawn(w.vm, 30, "sleeper", suspends_itself, &w);
    cr_assert_eq(stvm_run(w.vm), STVM_EDEADLOCK);
    cr_assert_eq(state_of(w.vm, p), STVM_PROCESS_SUSPENDED);
    char buf[256];
    stvm_blocked_report(w.vm, buf, sizeof buf);
    cr_assert_not_null(strstr(buf, "sleeper"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "suspended"), "report: %s", buf);
    cr_assert_eq(stvm_process_resume(w.vm, p), STVM_OK, "resume from the host");
    cr_assert_eq(state_of(w.vm, p), STVM_PROCESS_READY);
    run_ok_green(&w);
    cr_assert_eq(w.rc[0], STVM_OK);
    static const int want[] = {1, 2};
    trace_expect(&w.t, want, 2);
    vm_done(w.vm);
}

/* ---- many processes --------------------------------------------------------------- */

typedef struct many {
    long next, count, sum;
    int out_of_order;
} many;

typedef struct many_arg {
    many *m;
    long i;
} many_arg;

static void many_body(stvm_vm *vm, void *arg)
{
    (void)vm;
    many_arg *a = arg;
    if (a->i != a->m->next)
        a->m->out_of_order++;
    a->m->next = a->i + 1;
    a->m->count++;
    a->m->sum += a->i;
}

Test(run, five_thousand_processes_are_spawned_run_in_order_and_finish)
{
    enum { N = 5000 };
    stvm_vm *vm = vm_make(NULL);
    many m = {0};
    static many_arg args[N];
    for (long i = 0; i < N; i++) {
        args[i] = (many_arg){&m, i};
        cr_assert_eq(stvm_spawn(vm, 30, "many", many_body, &args[i], NULL),
                     STVM_OK, "spawn #%ld", i);
    }
    stvm_stats s = stats_of(vm);
    cr_assert_eq(s.processes_live, N + 1);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(m.count, N);
    cr_assert_eq(m.sum, (long)N * (N - 1) / 2);
    cr_assert_eq(m.out_of_order, 0);
    s = stats_of(vm);
    cr_assert_eq(s.processes_live, 1);
    vm_done(vm);
}

static void many_spawner(stvm_vm *vm, void *arg)
{
    many *m = arg;
    static many_arg args[3000];
    for (long i = 0; i < 3000; i++) {
        args[i] = (many_arg){m, i};
        if (stvm_spawn(vm, 20, "child", many_body, &args[i], NULL) != STVM_OK)
            m->out_of_order += 1000000;
        if (i % 100 == 99)
            stvm_yield(vm);   /* no peers at 40: a no-op */
    }
}

Test(run, thousands_of_processes_spawned_from_a_process_all_finish)
{
    stvm_vm *vm = vm_make(NULL);
    many m = {0};
    cr_assert_eq(stvm_spawn(vm, 40, "spawner", many_spawner, &m, NULL), STVM_OK);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    cr_assert_eq(m.count, 3000);
    cr_assert_eq(m.out_of_order, 0);
    cr_assert_eq(stats_of(vm).processes_live, 1);
    vm_done(vm);
}
