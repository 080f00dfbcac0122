/*
 * stvm_run: its results (finished, busy, deadlock), the blocked report, running again
 * after a deadlock, and thousands of processes in one run.
 *
 * Green processes record what they see in their test's scenario struct (see helpers.h);
 * the host asserts after stvm_run returns.
 */
#include <string.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(run, .timeout = 30);

/* ---- stvm_run's results ----------------------------------------------------------- */

typedef struct nested_run {
    stvm_vm *vm;
    trace_log log;
    int run_rc;                   /* stvm_run called by a process */
    stvm_process *active_after;   /* the active process once it returned */
    int bad_line;
} nested_run;

static void nested_runner(stvm_vm *vm, void *arg)
{
    nested_run *s = arg;
    s->run_rc = stvm_run(vm);
    s->active_after = stvm_vm_active_process(vm);
    trace_add(&s->log, 1);
}

Test(run, run_from_inside_a_process_is_ebusy)
{
    nested_run s = {.vm = vm_make(NULL)};
    stvm_process *p = spawn(s.vm, 40, "nested", nested_runner, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.run_rc, STVM_EBUSY);
    cr_assert_eq(s.active_after, p, "still the same process after the refused run");
    static const int want[] = {1};
    trace_expect(&s.log, want, 1);
    vm_done(s.vm);
}

typedef struct tree {
    stvm_vm *vm;
    trace_log log;
    int spawn_rc[3];   /* of the root's three children, in spawn order */
    int bad_line;
} tree;

static void tree_root(stvm_vm *vm, void *arg)
{
    tree *s = arg;
    static tagged kids[3];
    kids[0] = (tagged){&s->log, 60};
    kids[1] = (tagged){&s->log, 20};
    kids[2] = (tagged){&s->log, 40};
    trace_add(&s->log, 40);
    s->spawn_rc[0] = stvm_spawn(vm, 60, "k60", log_tag, &kids[0], NULL);
    s->spawn_rc[1] = stvm_spawn(vm, 20, "k20", log_tag, &kids[1], NULL);
    s->spawn_rc[2] = stvm_spawn(vm, 40, "k40", log_tag, &kids[2], NULL);
    trace_add(&s->log, 41);
}

Test(run, run_returns_ok_when_every_user_process_has_finished)
{
    tree s = {.vm = vm_make(NULL)};
    spawn(s.vm, 40, "root", tree_root, &s);
    RUN_OK_GREEN(&s);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(s.spawn_rc[i], STVM_OK);
    static const int want[] = {40, 60, 41, 40, 20};
    trace_expect(&s.log, want, 5);
    cr_assert_eq(stats_of(s.vm).processes_live, 1);
    cr_assert_null(stvm_vm_active_process(s.vm));
    vm_done(s.vm);
}

/* Processes blocked on one semaphore (their bodies are wait_and_log). */
typedef struct blocked {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    int bad_line;
} blocked;

Test(run, run_is_edeadlock_when_all_wait_and_the_report_names_them)
{
    blocked s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    logged_wait a = {.sem = s.sem, .log = &s.log, .tag = 1};
    logged_wait b = {.sem = s.sem, .log = &s.log, .tag = 2};
    stvm_process *pa = spawn(s.vm, 40, "waiter", wait_and_log, &a);
    spawn(s.vm, 35, "other one", wait_and_log, &b);
    int err = stvm_run(s.vm);
    cr_assert_eq(err, STVM_EDEADLOCK, "stvm_run: %s", stvm_err_name(err));
    cr_assert_eq(s.log.n, 0);
    cr_assert_eq(state_of(s.vm, pa), STVM_PROCESS_WAITING);

    char buf[512];
    int n = stvm_vm_blocked_report(s.vm, buf, sizeof buf);
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
    cr_assert_eq(stvm_vm_blocked_report(s.vm, NULL, 0), n);
    char small[10];
    memset(small, 'x', sizeof small);
    cr_assert_eq(stvm_vm_blocked_report(s.vm, small, sizeof small), n);
    cr_assert_eq(strlen(small), sizeof small - 1);
    cr_assert_eq(strncmp(small, buf, sizeof small - 1), 0);
    cr_assert_eq(stvm_vm_blocked_report(s.vm, NULL, 5), STVM_EINVAL);
    cr_assert_eq(stvm_vm_blocked_report(NULL, buf, sizeof buf), STVM_EINVAL);

    /* more work: one signal wakes the first waiter, the other still blocks */
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
    cr_assert_eq(state_of(s.vm, pa), STVM_PROCESS_READY);
    err = stvm_run(s.vm);
    cr_assert_eq(err, STVM_EDEADLOCK, "stvm_run: %s", stvm_err_name(err));
    static const int want1[] = {1};
    trace_expect(&s.log, want1, 1);
    cr_assert_eq(a.rc, STVM_OK);
    n = stvm_vm_blocked_report(s.vm, buf, sizeof buf);
    cr_assert_null(strstr(buf, "'waiter'"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "other one"), "report: %s", buf);

    /* and the last one */
    cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
    RUN_OK_GREEN(&s);
    static const int want2[] = {1, 2};
    trace_expect(&s.log, want2, 2);
    cr_assert_eq(b.rc, STVM_OK);
    cr_assert_eq(stvm_vm_blocked_report(s.vm, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "");
    cr_assert_eq(stvm_semaphore_excess(s.vm, s.sem), 0);
    vm_done(s.vm);
}

/* Two processes taking two mutexes in opposite orders. */
typedef struct crosswise {
    stvm_vm *vm;
    stvm_mutex *ma, *mb;
    trace_log log;
    int bad_line;
} crosswise;

static void lock_a_then_b(stvm_vm *vm, void *arg)
{
    crosswise *s = arg;
    GCHECK(s, stvm_mutex_enter(vm, s->ma) == STVM_OK);
    stvm_yield(vm);   /* the other takes its first mutex */
    stvm_mutex_enter(vm, s->mb);
    trace_add(&s->log, 1);
}

static void lock_b_then_a(stvm_vm *vm, void *arg)
{
    crosswise *s = arg;
    GCHECK(s, stvm_mutex_enter(vm, s->mb) == STVM_OK);
    stvm_yield(vm);
    stvm_mutex_enter(vm, s->ma);
    trace_add(&s->log, 2);
}

Test(run, two_processes_locking_two_mutexes_crosswise_are_a_reported_deadlock)
{
    crosswise s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.ma), STVM_OK);
    cr_assert_eq(stvm_mutex_new(s.vm, &s.mb), STVM_OK);
    stvm_process *a = spawn(s.vm, 40, "first", lock_a_then_b, &s);
    stvm_process *b = spawn(s.vm, 40, "second", lock_b_then_a, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    ASSERT_GREEN_OK(&s);
    cr_assert_eq(s.log.n, 0);
    cr_assert_eq(stvm_mutex_owner(s.vm, s.ma), a);
    cr_assert_eq(stvm_mutex_owner(s.vm, s.mb), b);
    char buf[512];
    stvm_vm_blocked_report(s.vm, buf, sizeof buf);
    cr_assert_not_null(strstr(buf, "'first' (priority 40) waits on mutex"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "'second' (priority 40) waits on mutex"), "report: %s", buf);
    /* breaking the cycle: terminating one hands its mutex to the other */
    cr_assert_eq(stvm_process_terminate(s.vm, a), STVM_OK);
    cr_assert_eq(stvm_mutex_owner(s.vm, s.ma), b);
    RUN_OK_GREEN(&s);
    static const int want[] = {2};
    trace_expect(&s.log, want, 1);
    cr_assert_null(stvm_mutex_owner(s.vm, s.ma), "released when b finished");
    cr_assert_null(stvm_mutex_owner(s.vm, s.mb));
    vm_done(s.vm);
}

/* A name longer than a line's usual room must not cost the lines after it. */
Test(run, the_blocked_report_keeps_every_line_after_a_300_character_name)
{
    blocked s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    char name[301];
    memset(name, 'n', 300);
    name[300] = '\0';
    logged_wait a = {.sem = s.sem, .log = &s.log, .tag = 1};
    logged_wait b = {.sem = s.sem, .log = &s.log, .tag = 2};
    logged_wait c = {.sem = s.sem, .log = &s.log, .tag = 3};
    spawn(s.vm, 40, name, wait_and_log, &a);
    spawn(s.vm, 39, "second", wait_and_log, &b);
    spawn(s.vm, 38, "third", wait_and_log, &c);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);

    char buf[2048];
    int n = stvm_vm_blocked_report(s.vm, buf, sizeof buf);
    cr_assert_eq((size_t)n, strlen(buf), "the whole report fits: %d bytes", n);
    cr_assert_not_null(strstr(buf, name), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "'second' (priority 39)"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "'third' (priority 38)"), "report: %s", buf);
    int lines = 0;
    for (const char *q = buf; *q; q++)
        lines += *q == '\n';
    cr_assert_eq(lines, 3, "one line per blocked process: %s", buf);

    for (int i = 0; i < 3; i++)
        cr_assert_eq(stvm_semaphore_signal(s.vm, s.sem), STVM_OK);
    RUN_OK_GREEN(&s);
    vm_done(s.vm);
}

Test(run, run_again_after_adding_processes_runs_them)
{
    run_order s = {.vm = vm_make(NULL)};
    tagged a = {&s.log, 1}, b = {&s.log, 2};
    spawn(s.vm, 40, "first", log_tag, &a);
    RUN_OK_GREEN(&s);
    spawn(s.vm, 40, "second", log_tag, &b);
    RUN_OK_GREEN(&s);
    static const int want[] = {1, 2};
    trace_expect(&s.log, want, 2);
    vm_done(s.vm);
}

Test(run, terminating_blocked_processes_after_deadlock_lets_run_finish)
{
    blocked s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    logged_wait a = {.sem = s.sem, .log = &s.log, .tag = 1};
    stvm_process *p = spawn(s.vm, 40, "stuck", wait_and_log, &a);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    cr_assert_eq(stvm_process_terminate(s.vm, p), STVM_OK);
    cr_assert_eq(state_of(s.vm, p), STVM_PROCESS_TERMINATED);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.log.n, 0, "its C code never resumed");
    cr_assert_eq(stvm_semaphore_free(s.vm, s.sem), STVM_OK, "no waiter left");
    vm_done(s.vm);
}

typedef struct self_suspending {
    stvm_vm *vm;
    trace_log log;
    int suspend_rc;
    int bad_line;
} self_suspending;

static void suspends_itself(stvm_vm *vm, void *arg)
{
    self_suspending *s = arg;
    trace_add(&s->log, 1);
    s->suspend_rc = stvm_process_suspend(vm, stvm_vm_active_process(vm));
    trace_add(&s->log, 2);
}

Test(run, suspended_process_left_at_the_end_is_a_deadlock)
{
    self_suspending s = {.vm = vm_make(NULL)};
    stvm_process *p = spawn(s.vm, 30, "sleeper", suspends_itself, &s);
    cr_assert_eq(stvm_run(s.vm), STVM_EDEADLOCK);
    cr_assert_eq(state_of(s.vm, p), STVM_PROCESS_SUSPENDED);
    char buf[256];
    stvm_vm_blocked_report(s.vm, buf, sizeof buf);
    cr_assert_not_null(strstr(buf, "sleeper"), "report: %s", buf);
    cr_assert_not_null(strstr(buf, "suspended"), "report: %s", buf);
    cr_assert_eq(stvm_process_resume(s.vm, p), STVM_OK, "resume from the host");
    cr_assert_eq(state_of(s.vm, p), STVM_PROCESS_READY);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.suspend_rc, STVM_OK);
    static const int want[] = {1, 2};
    trace_expect(&s.log, want, 2);
    vm_done(s.vm);
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
