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

/* ---- the blocked report's chains: who holds what each blocked process waits for ----- */

typedef struct crossed {
    stvm_mutex *bus;
    stvm_monitor *log;
    stvm_semaphore *gate, *registered;
    stvm_process *meteo;
    int bad_line;
} crossed;

/* Takes the bus, lets busmgr run, then wants the log: busmgr holds it by then. */
static void meteo(stvm_vm *vm, void *arg)
{
    crossed *c = arg;
    GCHECK(c, stvm_mutex_enter(vm, c->bus) == STVM_OK);
    stvm_yield(vm);
    stvm_monitor_enter(vm, c->log);
}

/* Takes the log, then wants the bus, which meteo holds. */
static void busmgr(stvm_vm *vm, void *arg)
{
    crossed *c = arg;
    GCHECK(c, stvm_monitor_enter(vm, c->log) == STVM_OK);
    stvm_mutex_enter(vm, c->bus);
}

static void at_gate(stvm_vm *vm, void *arg) { stvm_semaphore_wait(vm, ((crossed *)arg)->gate); }
static void at_registered(stvm_vm *vm, void *arg) { stvm_semaphore_wait(vm, ((crossed *)arg)->registered); }
static void joins_meteo(stvm_vm *vm, void *arg) { stvm_process_join(vm, ((crossed *)arg)->meteo, -1); }
static void wants_bus(stvm_vm *vm, void *arg) { stvm_mutex_enter(vm, ((crossed *)arg)->bus); }

static stvm_vm *crossed_vm(crossed *c)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    cr_assert_eq(stvm_mutex_new(vm, &c->bus), STVM_OK);
    cr_assert_eq(stvm_mutex_set_name(vm, c->bus, "bus"), STVM_OK);
    cr_assert_eq(stvm_monitor_new(vm, &c->log), STVM_OK);
    cr_assert_eq(stvm_monitor_set_name(vm, c->log, "log"), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(vm, &c->gate), STVM_OK);
    cr_assert_eq(stvm_semaphore_set_name(vm, c->gate, "gate"), STVM_OK);
    return vm;
}

static int line_count(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(process_info, blocked_report_follows_mutex_and_monitor_owners_to_a_cycle)
{
    crossed c = {0};
    stvm_vm *vm = crossed_vm(&c);
    c.meteo = spawn(vm, 40, "meteo", meteo, &c);
    spawn(vm, 40, "busmgr", busmgr, &c);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    ASSERT_GREEN_OK(&c);

    char report[1024], want[512];
    int n = stvm_vm_blocked_report(vm, report, sizeof report);
    cr_assert_eq((size_t)n, strlen(report));
    snprintf(want, sizeof want,
             "'meteo' (priority 40) waits on monitor 'log' %p, owned by 'busmgr', which waits on "
             "mutex 'bus' %p, owned by 'meteo': a deadlock cycle ('meteo' -> 'busmgr' -> "
             "'meteo')\n"
             "'busmgr' (priority 40) waits on mutex 'bus' %p, owned by 'meteo', which waits on "
             "monitor 'log' %p, owned by 'busmgr': a deadlock cycle ('busmgr' -> 'meteo' -> "
             "'busmgr')\n",
             (void *)c.log, (void *)c.bus, (void *)c.bus, (void *)c.log);
    cr_assert_str_eq(report, want, "oldest first, each line its chain");
    stvm_process_release(vm, c.meteo);
    stvm_vm_free(vm);
}

Test(process_info, blocked_report_says_a_semaphore_nobody_can_signal_and_follows_a_join)
{
    crossed c = {0};
    stvm_vm *vm = crossed_vm(&c);
    c.meteo = spawn(vm, 40, "meteo", meteo, &c);
    spawn(vm, 40, "busmgr", busmgr, &c);
    spawn(vm, 50, "c50", at_gate, &c);
    spawn(vm, 30, "shutdown", joins_meteo, &c);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);

    char report[2048], want[512];
    stvm_vm_blocked_report(vm, report, sizeof report);
    cr_assert_eq(line_count(report), 4, "%s", report);
    snprintf(want, sizeof want,
             "'c50' (priority 50) waits on semaphore 'gate' %p, which no process or registered "
             "thread can signal\n", (void *)c.gate);
    cr_assert_not_null(strstr(report, want), "%s", report);
    /* a process that waits behind the cycle: the cycle named is the two, not shutdown */
    snprintf(want, sizeof want,
             "'shutdown' (priority 30) waits on join 'meteo' %p, which waits on monitor 'log' "
             "%p, owned by 'busmgr', which waits on mutex 'bus' %p, owned by 'meteo': a "
             "deadlock cycle ('meteo' -> 'busmgr' -> 'meteo')\n",
             (void *)c.meteo, (void *)c.log, (void *)c.bus);
    cr_assert_not_null(strstr(report, want), "%s", report);
    stvm_process_release(vm, c.meteo);
    stvm_vm_free(vm);
}

/* Reported from a process that runs: what it could still do is not known, so nothing is
 * called impossible; an owner that can run or is suspended ends the chain. */
static void reporter(stvm_vm *vm, void *arg)
{
    crossed *c = arg;
    char report[1024], want[256];
    stvm_vm_blocked_report(vm, report, sizeof report);
    snprintf(want, sizeof want, "'c50' (priority 50) waits on semaphore 'gate' %p\n",
             (void *)c->gate);
    GCHECK(c, strstr(report, want) != NULL);
    snprintf(want, sizeof want,
             "'waiter' (priority 30) waits on mutex 'bus' %p, owned by 'meteo', which is "
             "suspended\n", (void *)c->bus);
    GCHECK(c, strstr(report, want) != NULL);
}

static void holds_bus_and_suspends(stvm_vm *vm, void *arg)
{
    crossed *c = arg;
    GCHECK(c, stvm_mutex_enter(vm, c->bus) == STVM_OK);
    stvm_process_suspend(vm, stvm_vm_active_process(vm));
}

Test(process_info, blocked_report_chain_ends_at_an_owner_that_runs_or_is_suspended)
{
    crossed c = {0};
    stvm_vm *vm = crossed_vm(&c);
    c.meteo = spawn(vm, 40, "meteo", holds_bus_and_suspends, &c);
    spawn(vm, 50, "c50", at_gate, &c);
    spawn(vm, 30, "waiter", wants_bus, &c);
    spawn(vm, 20, "reporter", reporter, &c);
    cr_assert_eq(stvm_run(vm), STVM_EDEADLOCK);
    ASSERT_GREEN_OK(&c);
    /* the owner resumed from the host: it can run, and the chain says so */
    cr_assert_eq(stvm_process_resume(vm, c.meteo), STVM_OK);
    char report[1024], want[256];
    stvm_vm_blocked_report(vm, report, sizeof report);
    snprintf(want, sizeof want,
             "'waiter' (priority 30) waits on mutex 'bus' %p, owned by 'meteo', which can run\n",
             (void *)c.bus);
    cr_assert_not_null(strstr(report, want), "%s", report);
    snprintf(want, sizeof want, "'c50' (priority 50) waits on semaphore 'gate' %p\n",
             (void *)c.gate);
    cr_assert_not_null(strstr(report, want), "meteo can run: nothing is impossible yet\n%s",
                       report);
    stvm_process_release(vm, c.meteo);
    stvm_vm_free(vm);
}

Test(process_info, blocked_report_names_the_slot_of_a_registered_semaphore)
{
    crossed c = {0};
    stvm_vm *vm = crossed_vm(&c);
    cr_assert_eq(stvm_semaphore_new(vm, &c.registered), STVM_OK);
    int slot = 0;
    cr_assert_eq(stvm_external_register(vm, c.registered, &slot), STVM_OK);
    spawn(vm, 40, "listener", at_registered, &c);
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 1, "waits for a thread: no deadlock");
    char report[512], want[256];
    stvm_vm_blocked_report(vm, report, sizeof report);
    snprintf(want, sizeof want,
             "'listener' (priority 40) waits on semaphore %p, registered as external slot %d "
             "(another thread may signal it)\n", (void *)c.registered, slot);
    cr_assert_str_eq(report, want);
    cr_assert_eq(stvm_external_signal(vm, slot), STVM_OK);
    run_ok(vm);
    vm_done(vm);
}

/* ---- who used the CPU: cpu_ns (stvm_config.cpu_time) ------------------------------- */

static stvm_vm *cpu_vm(int clock)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.clock = clock;
    cfg.cpu_time = true;
    return vm_make(&cfg);
}

static uint64_t cpu_of(stvm_vm *vm, stvm_process *p)
{
    stvm_process_info info;
    cr_assert_eq(stvm_process_get_info(vm, p, &info), STVM_OK);
    return info.cpu_ns;
}

typedef struct worked {
    uint64_t first_us, then_us;   /* work before and after a 1 s Delay */
    uint64_t self_ns;             /* what it saw of itself after its first work */
    int bad_line;
} worked;

static void works(stvm_vm *vm, void *arg)
{
    worked *w = arg;
    GCHECK(w, stvm_work_us(vm, w->first_us) == STVM_OK);
    stvm_process_info info;
    GCHECK(w, stvm_process_get_info(vm, stvm_vm_active_process(vm), &info) == STVM_OK);
    w->self_ns = info.cpu_ns;
    GCHECK(w, stvm_delay_wait_ms(vm, 1000) == STVM_OK);
    GCHECK(w, stvm_work_us(vm, w->then_us) == STVM_OK);
}

/* The VM's own processes (idle, timing): their handles, from the listing. */
static stvm_process *own_process(stvm_vm *vm, const char *name)
{
    stvm_process *list[16];
    size_t n = 0;
    cr_assert_eq(stvm_vm_processes(vm, list, 16, &n), STVM_OK);
    for (size_t i = 0; i < n && i < 16; i++) {
        stvm_process_info info;
        cr_assert_eq(stvm_process_get_info(vm, list[i], &info), STVM_OK);
        if (strcmp(info.name, name) == 0)
            return list[i];
    }
    cr_assert_fail("no process '%s'", name);
    return NULL;
}

Test(process_info, cpu_time_charges_each_process_its_work_on_the_simulated_clock)
{
    stvm_vm *vm = cpu_vm(STVM_CLOCK_SIMULATED);
    worked a = {.first_us = 300, .then_us = 200}, b = {.first_us = 100, .then_us = 50};
    stvm_process *pa, *pb;
    cr_assert_eq(stvm_spawn(vm, 40, "a", works, &a, &pa), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 40, "b", works, &b, &pb), STVM_OK);
    uint64_t t0 = stvm_vm_now_us(vm);
    run_ok(vm);
    ASSERT_GREEN_OK(&a);
    ASSERT_GREEN_OK(&b);
    cr_assert_geq(stvm_vm_now_us(vm) - t0, 1000000, "a second passed, in the Delays");
    cr_assert_eq(a.self_ns, 300000, "itself, counted up to now");
    cr_assert_eq(b.self_ns, 100000);
    cr_assert_eq(cpu_of(vm, pa), 500000, "finished: its handle keeps the figure");
    cr_assert_eq(cpu_of(vm, pb), 150000);
    cr_assert_eq(cpu_of(vm, own_process(vm, "Idle Process")), 0,
                 "the idle process's jumps of the clock are nobody's time");
    cr_assert_eq(cpu_of(vm, own_process(vm, "Delay Scheduling Process")), 0);
    stvm_process_release(vm, pa);
    stvm_process_release(vm, pb);
    vm_done(vm);
}

Test(process_info, cpu_time_goes_on_across_a_trace_started_and_stopped)
{
    stvm_vm *vm = cpu_vm(STVM_CLOCK_SIMULATED);
    worked a = {.first_us = 40, .then_us = 60};
    stvm_process *pa;
    cr_assert_eq(stvm_spawn(vm, 40, "a", works, &a, &pa), STVM_OK);
    cr_assert_eq(stvm_trace_start(vm, 64), STVM_OK);
    cr_assert_eq(stvm_trace_stop(vm), STVM_OK);   /* the switch's test must stay on */
    run_ok(vm);
    ASSERT_GREEN_OK(&a);
    cr_assert_eq(cpu_of(vm, pa), 100000);
    stvm_process_release(vm, pa);
    vm_done(vm);
}

Test(process_info, cpu_time_is_zero_when_the_vm_does_not_account_it)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    worked a = {.first_us = 300, .then_us = 200};
    stvm_process *pa;
    cr_assert_eq(stvm_spawn(vm, 40, "a", works, &a, &pa), STVM_OK);
    run_ok(vm);
    ASSERT_GREEN_OK(&a);
    cr_assert_eq(a.self_ns, 0);
    cr_assert_eq(cpu_of(vm, pa), 0);
    stvm_process_release(vm, pa);
    vm_done(vm);
}

/* The real clock: a process that spins 3 ms is charged at least that; one that sleeps
 * 30 ms in a Delay is charged far less, and the idle process is not charged its sleep. */
static void spins(stvm_vm *vm, void *arg)
{
    worked *w = arg;
    GCHECK(w, stvm_work_us(vm, w->first_us) == STVM_OK);
}

static void sleeps(stvm_vm *vm, void *arg)
{
    worked *w = arg;
    GCHECK(w, stvm_delay_wait_ms(vm, 30) == STVM_OK);
}

Test(process_info, cpu_time_on_the_real_clock_charges_work_and_not_sleep)
{
    stvm_vm *vm = cpu_vm(STVM_CLOCK_REAL);
    worked spin = {.first_us = 3000}, nap = {0};
    stvm_process *ps, *pn;
    cr_assert_eq(stvm_spawn(vm, 40, "spinner", spins, &spin, &ps), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 40, "sleeper", sleeps, &nap, &pn), STVM_OK);
    run_ok(vm);
    ASSERT_GREEN_OK(&spin);
    ASSERT_GREEN_OK(&nap);
    uint64_t s = cpu_of(vm, ps), n = cpu_of(vm, pn);
    uint64_t idle = cpu_of(vm, own_process(vm, "Idle Process"));
    cr_assert_geq(s, 3000000, "the spinner worked 3 ms: %llu ns", (unsigned long long)s);
    cr_assert_lt(n, s, "the sleeper ran less than the spinner: %llu ns", (unsigned long long)n);
    cr_assert_lt(idle, 20000000, "the idle process slept about 27 ms, charged %llu ns",
                 (unsigned long long)idle);
    stvm_process_release(vm, ps);
    stvm_process_release(vm, pn);
    vm_done(vm);
}
