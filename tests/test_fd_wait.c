/*
 * Waiting for descriptors (stvm_fd_wait) on pipes and socketpairs, in each idle mode:
 * readiness wakes exactly the waiter, timeouts run out, bad input is refused, a
 * terminated waiter leaves nothing registered, nor does a refused wait, and a waited
 * descriptor is pending work for deadlock detection while an unwaited one is not.
 * Real clock, generous margins, no fixed sleeps: writers are green processes on
 * delays, or OS threads joined.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "helpers.h"

TestSuite(fd_wait, .timeout = 60);

typedef struct pipe_run {
    stvm_vm *vm;
    int fds[2];
    int rc[4];
    int ticks;                 /* a ticker's delays that ran while others waited */
    char got;
    int bad_line;
} pipe_run;

static stvm_vm *vm_mode(int idle_mode, uint32_t wake_inject_us)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.idle_mode = idle_mode;
    cfg.wake_inject_us = wake_inject_us;
    return vm_make(&cfg);
}

static void close_pipe(pipe_run *p)
{
    close(p->fds[0]);
    close(p->fds[1]);
}

static void reads_one(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    p->rc[0] = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, -1);
    GCHECK(p, read(p->fds[0], &p->got, 1) == 1);
}

static void writes_after_5ms(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    stvm_delay_wait_ms(vm, 5);
    GCHECK(p, write(p->fds[1], "x", 1) == 1);
}

static void ticks_meanwhile(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    for (int i = 0; i < 3; i++) {
        stvm_delay_wait_ms(vm, 1);
        p->ticks++;
    }
}

static void wakes_in_mode(int mode)
{
    pipe_run p = {.vm = vm_mode(mode, 0)};
    cr_assert_eq(pipe(p.fds), 0);
    cr_assert_eq(stvm_spawn(p.vm, 40, "reader", reads_one, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(p.vm, 30, "writer", writes_after_5ms, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(p.vm, 20, "ticker", ticks_meanwhile, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    cr_assert_eq(p.bad_line, 0, "line %d", p.bad_line);
    cr_assert_eq(p.rc[0], STVM_IO_READ);
    cr_assert_eq(p.got, 'x');
    cr_assert_eq(p.ticks, 3, "the others ran while the reader waited");
    stvm_stats s = stats_of(p.vm);
    cr_assert_eq(s.fds_ready, 1);
    cr_assert_eq(s.io_signals_unwaited, 0);
    if (mode == STVM_IDLE_SPIN)
        cr_assert_eq(s.os_sleeps, 0, "spin never sleeps in the OS");
    else
        cr_assert_gt(s.os_sleeps, 0);
    close_pipe(&p);
    vm_done(p.vm);
}

Test(fd_wait, a_pipe_becoming_readable_wakes_its_waiter_in_poll_mode) { wakes_in_mode(STVM_IDLE_POLL); }
Test(fd_wait, a_pipe_becoming_readable_wakes_its_waiter_in_legacy_mode) { wakes_in_mode(STVM_IDLE_LEGACY); }
Test(fd_wait, a_pipe_becoming_readable_wakes_its_waiter_in_spin_mode) { wakes_in_mode(STVM_IDLE_SPIN); }

/* ---- wake-ups by cause ------------------------------------------------------------------ */

static void *write_later(void *arg)
{
    pipe_run *p = arg;
    /* The VM is asleep in epoll by now, or soon: either way the write ends its wait. */
    usleep(20000);
    ssize_t n = write(p->fds[1], "y", 1);
    (void)n;
    return NULL;
}

Test(fd_wait, a_poll_mode_sleep_is_ended_by_the_descriptor_and_counted_as_io)
{
    pipe_run p = {.vm = vm_mode(STVM_IDLE_POLL, 0)};
    cr_assert_eq(pipe(p.fds), 0);
    cr_assert_eq(stvm_spawn(p.vm, 40, "reader", reads_one, &p, NULL), STVM_OK);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_later, &p), 0);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    pthread_join(t, NULL);
    cr_assert_eq(p.rc[0], STVM_IO_READ);
    stvm_stats s = stats_of(p.vm);
    cr_assert_geq(s.wakeups_io, 1, "the write ended a sleep");
    cr_assert_eq(s.wakeups_io + s.wakeups_timer + s.wakeups_external + s.wakeups_relinquish,
                 s.os_sleeps, "every OS sleep has one cause");
    cr_assert_geq(s.os_slept_us, 1000, "it slept while it waited");
    close_pipe(&p);
    vm_done(p.vm);
}

/* The writer makes the pipe readable while the VM runs; when the idle process then has
 * nothing to run, its look finds the descriptor ready: no OS sleep is counted. */
static void writes_at_once(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    GCHECK(p, write(p->fds[1], "z", 1) == 1);
}

Test(fd_wait, a_poll_mode_idle_finds_a_descriptor_already_ready_without_an_os_sleep)
{
    pipe_run p = {.vm = vm_mode(STVM_IDLE_POLL, 0)};
    cr_assert_eq(pipe(p.fds), 0);
    cr_assert_eq(stvm_spawn(p.vm, 40, "reader", reads_one, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(p.vm, 40, "writer", writes_at_once, &p, NULL), STVM_OK);
    stvm_stats before = stats_of(p.vm);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    cr_assert_eq(p.bad_line, 0, "line %d", p.bad_line);
    cr_assert_eq(p.rc[0], STVM_IO_READ);
    cr_assert_eq(p.got, 'z');
    stvm_stats s = stats_of(p.vm);
    cr_assert_eq(s.fds_ready - before.fds_ready, 1);
    cr_assert_eq(s.os_sleeps - before.os_sleeps, 0, "found by a look, not a sleep");
    close_pipe(&p);
    vm_done(p.vm);
}

Test(fd_wait, legacy_mode_sleeps_blind_to_descriptors_for_its_whole_quantum)
{
    /* 10 ms idle quantum, under 1/60 s: the write 20 ms in is seen only when a sleep
     * ends, never by one ending early. */
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.idle_mode = STVM_IDLE_LEGACY;
    cfg.idle_relinquish_us = 10000;
    pipe_run p = {.vm = vm_make(&cfg)};
    cr_assert_eq(pipe(p.fds), 0);
    cr_assert_eq(stvm_spawn(p.vm, 40, "reader", reads_one, &p, NULL), STVM_OK);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_later, &p), 0);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    pthread_join(t, NULL);
    stvm_stats s = stats_of(p.vm);
    cr_assert_eq(p.rc[0], STVM_IO_READ);
    cr_assert_eq(s.wakeups_io, 0, "no legacy sleep ends for a descriptor");
    cr_assert_geq(s.wakeups_relinquish, 2, "it slept whole quanta");
    close_pipe(&p);
    vm_done(p.vm);
}

Test(fd_wait, wake_injection_adds_its_latency_after_every_os_sleep)
{
    pipe_run p = {.vm = vm_mode(STVM_IDLE_POLL, 3000)};
    cr_assert_eq(pipe(p.fds), 0);
    cr_assert_eq(stvm_spawn(p.vm, 40, "reader", reads_one, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(p.vm, 30, "writer", writes_after_5ms, &p, NULL), STVM_OK);
    uint64_t t0 = stvm_vm_now_us(p.vm);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    stvm_stats s = stats_of(p.vm);
    cr_assert_geq(s.os_sleeps, 1);
    cr_assert_geq(stvm_vm_now_us(p.vm) - t0, 3000 * s.os_sleeps,
                  "each of %llu sleeps was followed by 3 ms", (unsigned long long)s.os_sleeps);
    close_pipe(&p);
    vm_done(p.vm);
}

/* ---- timeouts, looking, bad input ----------------------------------------------------- */

static void times_out(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    uint64_t t0 = stvm_vm_now_us(vm);
    p->rc[0] = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, 20);
    p->rc[1] = (int)((stvm_vm_now_us(vm) - t0) / 1000);
    p->rc[2] = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, 0);       /* nothing there */
    p->rc[3] = stvm_fd_wait(vm, p->fds[1], STVM_IO_WRITE, 0);      /* room to write */
}

Test(fd_wait, a_timed_wait_runs_out_and_zero_only_looks)
{
    pipe_run p = {.vm = vm_make(NULL)};
    cr_assert_eq(pipe(p.fds), 0);
    cr_assert_eq(stvm_spawn(p.vm, 40, "waiter", times_out, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    cr_assert_eq(p.rc[0], STVM_ETIMEDOUT);
    cr_assert_geq(p.rc[1], 20, "never early: %d ms", p.rc[1]);
    cr_assert_lt(p.rc[1], 2000, "%d ms", p.rc[1]);
    cr_assert_eq(p.rc[2], STVM_ETIMEDOUT);
    cr_assert_eq(p.rc[3], STVM_IO_WRITE);
    cr_assert_eq(stats_of(p.vm).timed_waits, 1, "only the 20 ms wait needed a Delay");
    close_pipe(&p);
    vm_done(p.vm);
}

static void bad_waits(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    char path[] = "/tmp/stvm-fd-wait-XXXXXX";   /* a regular file: epoll cannot watch it */
    int file = mkstemp(path);
    unlink(path);
    int closed[2];   /* made after the file, so that nothing reuses their numbers */
    GCHECK(p, pipe(closed) == 0);
    close(closed[0]);
    close(closed[1]);
    GCHECK(p, stvm_fd_wait(vm, -1, STVM_IO_READ, -1) == STVM_EINVAL);
    GCHECK(p, stvm_fd_wait(vm, p->fds[0], 0, -1) == STVM_EINVAL);
    GCHECK(p, stvm_fd_wait(vm, p->fds[0], 4, -1) == STVM_EINVAL);
    GCHECK(p, stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, -2) == STVM_EINVAL);
    GCHECK(p, stvm_fd_wait(vm, closed[0], STVM_IO_READ, -1) == STVM_EINVAL);
    GCHECK(p, stvm_fd_wait(vm, closed[0], STVM_IO_READ, 0) == STVM_EINVAL);
    GCHECK(p, stvm_fd_wait(vm, file, STVM_IO_READ, -1) == STVM_EINVAL);
    GCHECK(p, stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, INT64_MAX) == STVM_ERANGE);
    GCHECK(p, stvm_fd_wait(NULL, p->fds[0], STVM_IO_READ, -1) == STVM_EINVAL);
    close(file);
}

Test(fd_wait, bad_descriptors_events_and_timeouts_are_refused_and_register_nothing)
{
    pipe_run p = {.vm = vm_make(NULL)};
    cr_assert_eq(pipe(p.fds), 0);
    stvm_stats before = stats_of(p.vm);
    cr_assert_eq(stvm_fd_wait(p.vm, p.fds[0], STVM_IO_READ, -1), STVM_ENOTPROC);
    cr_assert_eq(stvm_spawn(p.vm, 40, "bad", bad_waits, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_run(p.vm), STVM_OK, "nothing was left waiting");
    cr_assert_eq(p.bad_line, 0, "line %d", p.bad_line);
    cr_assert_eq(stats_of(p.vm).objects_live, before.objects_live);
    close_pipe(&p);
    vm_done(p.vm);
}

static void waits_forever(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    p->rc[0] = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, -1);
}

static void second_waiter(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    p->rc[1] = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, -1);
    p->rc[2] = stvm_fd_wait(vm, p->fds[0], STVM_IO_WRITE, 0);   /* the other event is free */
}

Test(fd_wait, a_second_waiter_for_the_same_event_is_refused)
{
    pipe_run p = {.vm = vm_make(NULL)};
    cr_assert_eq(pipe(p.fds), 0);
    stvm_process *first = spawn(p.vm, 40, "first", waits_forever, &p);
    cr_assert_eq(stvm_spawn(p.vm, 40, "second", second_waiter, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(p.vm, 30, "writer", writes_after_5ms, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    cr_assert_eq(p.rc[0], STVM_IO_READ);
    cr_assert_eq(p.rc[1], STVM_EWAITING, "got %s", stvm_err_name(p.rc[1]));
    cr_assert_eq(p.rc[2], STVM_ETIMEDOUT, "a pipe's read end is never writable");
    /* The text tells of the waiter, not of a running VM (EBUSY's). */
    const char *text = stvm_strerror(p.rc[1]);
    cr_assert(strstr(text, "process") && strstr(text, "waits"), "%s", text);
    cr_assert(!strstr(text, "running"), "%s", text);
    cr_assert_eq(stvm_process_release(p.vm, first), STVM_OK);
    close_pipe(&p);
    vm_done(p.vm);
}

static void terminates_the_waiter(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    stvm_process *waiter = NULL;
    GCHECK(p, stvm_spawn(vm, 40, "waiter", waits_forever, p, &waiter) == STVM_OK);
    GCHECK(p, stvm_process_terminate(vm, waiter) == STVM_OK);
    GCHECK(p, stvm_process_release(vm, waiter) == STVM_OK);
    /* Nothing of the first wait is left: the same descriptor can be waited on again. */
    p->rc[1] = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, 10);
}

Test(fd_wait, a_waiter_terminated_in_its_wait_leaves_no_registration_behind)
{
    pipe_run p = {.vm = vm_make(NULL)};
    cr_assert_eq(pipe(p.fds), 0);
    stvm_stats before = stats_of(p.vm);
    cr_assert_eq(stvm_spawn(p.vm, 30, "terminator", terminates_the_waiter, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    cr_assert_eq(p.bad_line, 0, "line %d", p.bad_line);
    cr_assert_eq(p.rc[1], STVM_ETIMEDOUT, "not EWAITING");
    stvm_stats after = stats_of(p.vm);
    /* Made meanwhile: the Delay scheduler's semaphore and its process's handle. */
    cr_assert_eq(after.objects_live, before.objects_live + 2, "no semaphore left behind");
    close_pipe(&p);
    vm_done(p.vm);
}

/* ---- deadlock ------------------------------------------------------------------------ */

static void waits_on_nothing(stvm_vm *vm, void *arg)
{
    stvm_semaphore_wait(vm, arg);
}

Test(fd_wait, a_descriptor_nobody_waits_on_is_no_pending_work)
{
    pipe_run p = {.vm = vm_make(NULL)};
    cr_assert_eq(pipe(p.fds), 0);
    stvm_semaphore *never = sem_make(p.vm);
    cr_assert_eq(stvm_spawn(p.vm, 40, "stuck", waits_on_nothing, never, NULL), STVM_OK);
    cr_assert_eq(stvm_run(p.vm), STVM_EDEADLOCK);
    close_pipe(&p);
    vm_done(p.vm);
}

Test(fd_wait, a_waited_descriptor_keeps_the_run_going_until_it_is_ready)
{
    pipe_run p = {.vm = vm_make(NULL)};
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, p.fds), 0);
    cr_assert_eq(stvm_spawn(p.vm, 40, "reader", reads_one, &p, NULL), STVM_OK);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_later, &p), 0);
    cr_assert_eq(stvm_run(p.vm), STVM_OK, "not a deadlock: the descriptor was waited on");
    pthread_join(t, NULL);
    cr_assert_eq(p.got, 'y');
    close_pipe(&p);
    vm_done(p.vm);
}

/* ---- busy polling ------------------------------------------------------------------- */

typedef struct busy_run {
    stvm_vm *vm;
    int fds[2];
    atomic_int done;
    int rc;
} busy_run;

static void spins_with_checkpoints(stvm_vm *vm, void *arg)
{
    busy_run *b = arg;
    while (!atomic_load(&b->done))
        stvm_checkpoint(vm);
}

static void reads_then_stops_spinner(stvm_vm *vm, void *arg)
{
    busy_run *b = arg;
    b->rc = stvm_fd_wait(vm, b->fds[0], STVM_IO_READ, -1);
    atomic_store(&b->done, 1);
}

static void *write_soon(void *arg)
{
    busy_run *b = arg;
    usleep(10000);
    ssize_t n = write(b->fds[1], "z", 1);
    (void)n;
    return NULL;
}

Test(fd_wait, while_processes_run_descriptors_are_looked_at_by_busy_polling)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.busy_poll_ms = 1;
    busy_run b = {.vm = vm_make(&cfg)};
    cr_assert_eq(pipe(b.fds), 0);
    cr_assert_eq(stvm_spawn(b.vm, 40, "reader", reads_then_stops_spinner, &b, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(b.vm, 30, "spinner", spins_with_checkpoints, &b, NULL), STVM_OK);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_soon, &b), 0);
    cr_assert_eq(stvm_run(b.vm), STVM_OK);
    pthread_join(t, NULL);
    stvm_stats s = stats_of(b.vm);
    cr_assert_eq(b.rc, STVM_IO_READ);
    cr_assert_gt(s.io_polls_busy, 0);
    cr_assert_eq(s.os_sleeps, 0, "the idle process never ran: only busy polls saw it");
    close(b.fds[0]);
    close(b.fds[1]);
    vm_done(b.vm);
}

/* ---- failed waits leave nothing behind ------------------------------------------------ */

static void waits_with_a_full_table(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    stvm_stats before, after;
    GCHECK(p, stvm_vm_get_stats(vm, &before) == STVM_OK);
    p->rc[0] = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, -1);
    GCHECK(p, stvm_vm_get_stats(vm, &after) == STVM_OK);
    GCHECK(p, after.objects_allocated == before.objects_allocated);
    GCHECK(p, after.bytes_allocated == before.bytes_allocated);
    /* Its handler was armed before the table was found full, and disarmed again: the
     * descriptor is nobody's (a look answers, it is not EWAITING). */
    p->rc[1] = stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, 0);
}

/* A VM whose external table of `slots` slots is all taken. */
static stvm_vm *vm_with_a_full_table(int slots)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.external_table_size = slots;
    stvm_vm *vm = vm_make(&cfg);
    int index;
    for (int i = 0; i < slots; i++)
        cr_assert_eq(stvm_external_register(vm, sem_make(vm), &index), STVM_OK);
    return vm;
}

Test(fd_wait, a_wait_refused_for_a_full_table_disarms_and_takes_back_its_allocations)
{
    pipe_run p = {.vm = vm_with_a_full_table(2)};
    cr_assert_eq(pipe(p.fds), 0);
    cr_assert_eq(stvm_spawn(p.vm, 40, "full", waits_with_a_full_table, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    cr_assert_eq(p.bad_line, 0, "line %d", p.bad_line);
    cr_assert_eq(p.rc[0], STVM_EFULL);
    cr_assert_eq(p.rc[1], STVM_ETIMEDOUT, "not EWAITING: no handler was left armed");
    close_pipe(&p);
    vm_done(p.vm);
}

/* Looking (0 ms) and waiting take the same descriptors: epoll's, not poll's (poll
 * answers a regular file and /dev/null as ready, the VM's epoll descriptor as not). */
static void looks_at_what_epoll_refuses(stvm_vm *vm, void *arg)
{
    pipe_run *p = arg;
    char path[] = "/tmp/stvm-fd-look-XXXXXX";
    int file = mkstemp(path);
    unlink(path);
    int null = open("/dev/null", O_RDWR);
    GCHECK(p, file >= 0 && null >= 0);
    const int64_t timeouts[] = {0, -1, 5};
    for (int i = 0; i < 3; i++) {
        GCHECK(p, stvm_fd_wait(vm, file, STVM_IO_READ, timeouts[i]) == STVM_EINVAL);
        GCHECK(p, stvm_fd_wait(vm, null, STVM_IO_WRITE, timeouts[i]) == STVM_EINVAL);
        /* An epoll descriptor poll finds not ready, which epoll still refuses. */
        GCHECK(p, stvm_fd_wait(vm, stvm_backend_fd(vm), STVM_IO_READ, timeouts[i]) == STVM_EINVAL);
    }
    /* The pipe epoll takes is still looked at as before. */
    GCHECK(p, stvm_fd_wait(vm, p->fds[1], STVM_IO_WRITE, 0) == STVM_IO_WRITE);
    close(file);
    close(null);
}

Test(fd_wait, a_regular_file_and_dev_null_are_refused_whatever_the_timeout)
{
    pipe_run p = {.vm = vm_make(NULL)};
    cr_assert_eq(pipe(p.fds), 0);
    cr_assert_eq(stvm_spawn(p.vm, 40, "looker", looks_at_what_epoll_refuses, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_run(p.vm), STVM_OK);
    cr_assert_eq(p.bad_line, 0, "line %d", p.bad_line);
    close_pipe(&p);
    vm_done(p.vm);
}
