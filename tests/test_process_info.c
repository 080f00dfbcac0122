/*
 * Looking at processes (scheduler/process_info.c): the listing (stvm_vm_processes) and
 * what stvm_process_get_info says each process waits on: the kind of wait, the handle
 * its program holds, that object's name, and since when, on the simulated clock (every
 * process works 100 us before it waits, so each wait begins 100 us after the one before).
 */
#include <unistd.h>

#include "helpers.h"

TestSuite(process_info, .timeout = 30);

typedef struct world {
    stvm_semaphore *s, *timed;
    stvm_mutex *m;
    stvm_monitor *mon, *mon2;
    stvm_queue *frames, *full;
    stvm_delay *tick;
    stvm_process *owner;
    int fds[2];
    int bad_line;
} world;

/* Owns the mutex and the monitor, then waits on its Delay object (10 s). */
static void owner(stvm_vm *vm, void *arg)
{
    world *w = arg;
    GCHECK(w, stvm_mutex_enter(vm, w->m) == STVM_OK);
    GCHECK(w, stvm_monitor_enter(vm, w->mon) == STVM_OK);
    stvm_delay_wait(vm, w->tick);
}

static void work(stvm_vm *vm)
{
    stvm_work_us(vm, 100);
}

static void on_sem(stvm_vm *vm, void *arg) { work(vm); stvm_semaphore_wait(vm, ((world *)arg)->s); }
static void on_mutex(stvm_vm *vm, void *arg) { work(vm); stvm_mutex_enter(vm, ((world *)arg)->m); }
static void on_monitor(stvm_vm *vm, void *arg) { work(vm); stvm_monitor_enter(vm, ((world *)arg)->mon); }

static void on_condition(stvm_vm *vm, void *arg)
{
    world *w = arg;
    stvm_monitor_enter(vm, w->mon2);
    work(vm);
    stvm_monitor_wait(vm, w->mon2);
}

static void on_take(stvm_vm *vm, void *arg)
{
    void *item;
    work(vm);
    stvm_queue_take(vm, ((world *)arg)->frames, &item);
}

static void on_put(stvm_vm *vm, void *arg) { work(vm); stvm_queue_put(vm, ((world *)arg)->full, NULL); }
static void on_delay(stvm_vm *vm, void *arg) { (void)arg; work(vm); stvm_delay_wait_ms(vm, 10000); }
static void on_join(stvm_vm *vm, void *arg) { work(vm); stvm_process_join(vm, ((world *)arg)->owner, -1); }

static void on_fd(stvm_vm *vm, void *arg)
{
    work(vm);
    stvm_fd_wait(vm, ((world *)arg)->fds[0], STVM_IO_READ, -1);
}

static void on_timed(stvm_vm *vm, void *arg)
{
    work(vm);
    stvm_semaphore_wait_timeout_ms(vm, ((world *)arg)->timed, 5000);
}

static void nothing(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

/* What one process of the listing must show. */
typedef struct expect {
    const char *name;
    int kind;
    const void *handle;
    const char *object_name;
    int step;             /* its wait began step * 100 us after the start; -1: not waiting */
} expect;

Test(process_info, listing_shows_what_each_process_waits_on_and_since_when)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    uint64_t t0 = stvm_vm_now_us(vm);
    world w = {0};
    cr_assert_eq(pipe(w.fds), 0);
    cr_assert_eq(stvm_semaphore_new(vm, &w.s), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &w.timed), STVM_OK);
    cr_assert_eq(stvm_mutex_new(vm, &w.m), STVM_OK);
    cr_assert_eq(stvm_monitor_new(vm, &w.mon), STVM_OK);
    cr_assert_eq(stvm_monitor_new(vm, &w.mon2), STVM_OK);
    cr_assert_eq(stvm_queue_new(vm, 0, &w.frames), STVM_OK);
    cr_assert_eq(stvm_queue_new(vm, 1, &w.full), STVM_OK);
    cr_assert_eq(stvm_queue_put(vm, w.full, NULL), STVM_OK);
    cr_assert_eq(stvm_delay_new_ms(vm, 10000, &w.tick), STVM_OK);
    cr_assert_eq(stvm_semaphore_set_name(vm, w.s, "s"), STVM_OK);
    cr_assert_eq(stvm_mutex_set_name(vm, w.m, "bus"), STVM_OK);
    cr_assert_eq(stvm_monitor_set_name(vm, w.mon, "mon"), STVM_OK);
    cr_assert_eq(stvm_queue_set_name(vm, w.frames, "frames"), STVM_OK);
    cr_assert_eq(stvm_delay_set_name(vm, w.tick, "tick"), STVM_OK);

    cr_assert_eq(stvm_spawn(vm, 50, "owner", owner, &w, &w.owner), STVM_OK);
    stvm_fn fns[] = {on_sem, on_mutex, on_monitor, on_condition, on_take, on_put,
                     on_delay, on_join, on_fd, on_timed};
    const char *names[] = {"sem", "mutex", "monitor", "condition", "take", "put",
                           "delay", "join", "fd", "timed"};
    for (int i = 0; i < 10; i++)
        spawn(vm, 40, names[i], fns[i], &w);
    stvm_process *parked, *ready;
    cr_assert_eq(stvm_spawn_suspended(vm, 40, "parked", nothing, NULL, 0, &parked), STVM_OK);
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 1);
    cr_assert_eq(stvm_spawn(vm, 40, "ready", nothing, NULL, &ready), STVM_OK);
    ASSERT_GREEN_OK(&w);

    const expect want[] = {
        {"Idle Process", STVM_WAIT_ON_NOTHING, NULL, NULL, -1},
        {"owner", STVM_WAIT_ON_DELAY, w.tick, "tick", 0},
        {"sem", STVM_WAIT_ON_SEMAPHORE, w.s, "s", 1},
        {"mutex", STVM_WAIT_ON_MUTEX, w.m, "bus", 2},
        {"monitor", STVM_WAIT_ON_MONITOR, w.mon, "mon", 3},
        {"condition", STVM_WAIT_ON_MONITOR_CONDITION, w.mon2, NULL, 4},
        {"take", STVM_WAIT_ON_QUEUE_ITEM, w.frames, "frames", 5},
        {"put", STVM_WAIT_ON_QUEUE_ROOM, w.full, NULL, 6},
        /* its Delay handed to the timing process, which preempts it: it went to the back
         * of its run queue (preemption_yields), and waits once join, fd and timed have
         * worked; timed the same, just after it */
        {"delay", STVM_WAIT_ON_DELAY, NULL, NULL, 10},
        {"join", STVM_WAIT_ON_JOIN, w.owner, NULL, 8},
        {"fd", STVM_WAIT_ON_FD, NULL, NULL, 9},
        {"timed", STVM_WAIT_ON_SEMAPHORE, w.timed, NULL, 10},
        {"parked", STVM_WAIT_ON_NOTHING, NULL, NULL, -1},
        {"Delay Scheduling Process", STVM_WAIT_ON_SEMAPHORE, NULL, NULL, -2},
        {"ready", STVM_WAIT_ON_NOTHING, NULL, NULL, -1},
    };
    const size_t n_want = sizeof want / sizeof want[0];
    stvm_process *list[32];
    size_t count = 0;
    cr_assert_eq(stvm_vm_processes(vm, list, 32, &count), STVM_OK);
    cr_assert_eq(count, n_want, "%zu processes listed", count);
    uint64_t last_id = 0;
    for (size_t i = 0; i < count; i++) {
        stvm_process_info info;
        cr_assert_eq(stvm_process_get_info(vm, list[i], &info), STVM_OK);
        const expect *e = &want[i];
        cr_assert_str_eq(info.name, e->name, "listing %zu", i);
        cr_assert_gt(info.id, last_id, "oldest first");
        last_id = info.id;
        cr_assert_eq(info.vm_own, e->name[0] == 'I' || e->name[0] == 'D', "%s", e->name);
        cr_assert_eq(info.wait_kind, e->kind, "%s: kind %d", e->name, info.wait_kind);
        if (e->step == -2) {   /* the timing process, on its own semaphore */
            cr_assert_not_null(info.wait_handle);
            continue;
        }
        cr_assert_eq(info.wait_handle, e->handle, "%s", e->name);
        if (e->object_name)
            cr_assert_str_eq(info.wait_name, e->object_name, "%s", e->name);
        else
            cr_assert_null(info.wait_name, "%s: %s", e->name, info.wait_name);
        cr_assert_eq(info.wait_fd, e->kind == STVM_WAIT_ON_FD ? w.fds[0] : -1, "%s", e->name);
        uint64_t since = e->step < 0 ? 0 : t0 + 100 * (uint64_t)e->step;
        cr_assert_eq(info.wait_since_us, since, "%s: since %llu us after the start", e->name,
                     (unsigned long long)(info.wait_since_us - t0));
    }
    /* the report names each one's object the same way */
    char report[2048], line[160];
    stvm_vm_blocked_report(vm, report, sizeof report);
    snprintf(line, sizeof line, "'fd' (priority 40) waits on fd %d\n", w.fds[0]);
    cr_assert_not_null(strstr(report, line), "%s", report);
    snprintf(line, sizeof line, "'owner' (priority 50) waits on delay 'tick' %p\n", (void *)w.tick);
    cr_assert_not_null(strstr(report, line), "%s", report);
    cr_assert_not_null(strstr(report, "'delay' (priority 40) waits on delay\n"), "%s", report);
    cr_assert_not_null(strstr(report, "'parked' (priority 40) is suspended\n"), "%s", report);

    stvm_process_release(vm, parked);
    stvm_process_release(vm, ready);
    stvm_process_release(vm, w.owner);
    close(w.fds[1]);
    stvm_vm_free(vm);   /* every process still waits: freed with the VM */
    close(w.fds[0]);
}

Test(process_info, listing_counts_every_process_when_the_array_is_too_small)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    for (int i = 0; i < 5; i++)
        spawn(vm, 40, "p", nothing, NULL);
    size_t count = 0;
    cr_assert_eq(stvm_vm_processes(vm, NULL, 0, &count), STVM_OK);
    cr_assert_eq(count, 6, "the idle process and five");
    stvm_process *two[3] = {NULL, NULL, (stvm_process *)&count};
    cr_assert_eq(stvm_vm_processes(vm, two, 2, &count), STVM_OK);
    cr_assert_eq(count, 6);
    cr_assert_eq(two[2], (stvm_process *)&count, "nothing written past cap");
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(vm, two[0], &info), STVM_OK);
    cr_assert_eq(info.id, 1);
    cr_assert(info.vm_own);
    cr_assert_eq(stvm_process_get_info(vm, two[1], &info), STVM_OK);
    cr_assert_eq(info.id, 2);
    cr_assert_not(info.vm_own);
    run_ok(vm);
    cr_assert_eq(stvm_vm_processes(vm, two, 2, &count), STVM_OK);
    cr_assert_eq(count, 1, "only the idle process is left");
    cr_assert_eq(stvm_vm_processes(NULL, two, 2, &count), STVM_EINVAL);
    cr_assert_eq(stvm_vm_processes(vm, NULL, 2, &count), STVM_EINVAL);
    cr_assert_eq(stvm_vm_processes(vm, two, 2, NULL), STVM_EINVAL);
    vm_done(vm);
}

typedef struct self_seen {
    size_t count;
    int state, bad_line;
} self_seen;

static void lists_itself(stvm_vm *vm, void *arg)
{
    self_seen *s = arg;
    stvm_process *list[8];
    GCHECK(s, stvm_vm_processes(vm, list, 8, &s->count) == STVM_OK);
    stvm_process_info info;
    GCHECK(s, stvm_process_get_info(vm, list[s->count - 1], &info) == STVM_OK);
    s->state = info.state;
    GCHECK(s, list[s->count - 1] == stvm_vm_active_process(vm));
}

Test(process_info, a_process_finds_itself_running_in_the_listing)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    self_seen s = {0};
    spawn(vm, 40, "me", lists_itself, &s);
    run_ok(vm);
    ASSERT_GREEN_OK(&s);
    cr_assert_eq(s.count, 2);
    cr_assert_eq(s.state, STVM_PROCESS_ACTIVE);
    vm_done(vm);
}
