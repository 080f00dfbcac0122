/*
 * stvm inside a real host event loop (libuv), driven as docs/io.md tells an embedder:
 * a uv_poll on stvm_backend_fd, a uv_timer armed from stvm_backend_timeout_ms, and
 * stvm_run_mode(vm, STVM_RUN_NOWAIT) when either fires. What the suite holds the VM
 * to: in every run mode a descriptor, signal or deadline that became ready before the
 * call is seen by that call; a host loop that waits as told never spins while nothing
 * is ready or due; an idle VM with the defaults sleeps until something is due; a stop
 * asked from the host ends the next run.
 *
 * These are real-time tests (descriptors and deadlines on the real clock, one second
 * of idleness), so their bounds are generous: each is an order of magnitude inside
 * what the behaviour it rules out would show (20 ms busy polls, 1,000 wake-ups a
 * second, a host at 100% CPU).
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "helpers.h"

TestSuite(host_loop, .timeout = 60);

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CPU time of the calling thread (the host loop's), in ns. */
static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the host loop ------------------------------------------------------------------ */

typedef struct host {
    stvm_vm *vm;
    uv_loop_t loop;
    uv_poll_t poll;
    uv_timer_t timer;
    int mode;        /* what each turn runs the VM in */
    long turns;      /* callbacks of the poll and the timer: how often the host woke */
    int rc;          /* the last run's answer */
} host;

static void on_timer(uv_timer_t *t);

/* One turn: run the VM, then wait as it says (the backend descriptor is watched all
 * along; the timer is armed for the next deadline, or stopped when there is none). */
static void drive(host *h)
{
    h->rc = stvm_run_mode(h->vm, h->mode);
    if (h->rc != 1) {
        uv_poll_stop(&h->poll);
        uv_timer_stop(&h->timer);
        return;
    }
    int ms = stvm_backend_timeout_ms(h->vm);
    if (ms < 0)
        uv_timer_stop(&h->timer);
    else
        uv_timer_start(&h->timer, on_timer, (uint64_t)ms, 0);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    host *h = p->data;
    h->turns++;
    drive(h);
}

static void on_timer(uv_timer_t *t)
{
    host *h = t->data;
    h->turns++;
    drive(h);
}

static void host_open(host *h, stvm_vm *vm, int mode)
{
    *h = (host){.vm = vm, .mode = mode, .rc = 1};
    cr_assert_eq(uv_loop_init(&h->loop), 0);
    cr_assert_eq(uv_poll_init(&h->loop, &h->poll, stvm_backend_fd(vm)), 0);
    cr_assert_eq(uv_timer_init(&h->loop, &h->timer), 0);
    h->poll.data = h->timer.data = h;
    cr_assert_eq(uv_poll_start(&h->poll, UV_READABLE, on_poll), 0);
    drive(h);
}

static void host_close(host *h)
{
    uv_close((uv_handle_t *)&h->poll, NULL);
    uv_close((uv_handle_t *)&h->timer, NULL);
    uv_run(&h->loop, UV_RUN_DEFAULT);
    cr_assert_eq(uv_loop_close(&h->loop), 0);
}

/* A libuv timer that ends uv_run after ms: the host's own work beside the VM. */
static void stop_loop(uv_timer_t *t)
{
    uv_stop(t->loop);
}

static void run_host_for_ms(host *h, uint64_t ms)
{
    uv_timer_t end;
    cr_assert_eq(uv_timer_init(&h->loop, &end), 0);
    cr_assert_eq(uv_timer_start(&end, stop_loop, ms, 0), 0);
    uv_run(&h->loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&end, NULL);
    uv_run(&h->loop, UV_RUN_NOWAIT);
}

/* ---- what a process waits on ------------------------------------------------------- */

enum source { SRC_PIPE, SRC_SOCKET, SRC_EXTERNAL, SRC_TIMER };

typedef struct waiter {
    enum source src;
    int fds[2];              /* pipe: [0] read by the process, [1] written by the host */
    stvm_socket *listener;   /* socket: the process accepts one connection and reads */
    int port, peer;          /* the host's end of the connection */
    stvm_semaphore *sem;     /* external */
    int index;
    atomic_int stage;        /* 1: waiting; 2: woke and saw what it waited for */
    int rc;
    int64_t woke_ns;
} waiter;

static void waits(stvm_vm *vm, void *arg)
{
    waiter *w = arg;
    char c = 0;
    stvm_socket *conn = NULL;
    switch (w->src) {
    case SRC_PIPE:
        atomic_store(&w->stage, 1);
        w->rc = stvm_fd_wait(vm, w->fds[0], STVM_IO_READ, -1);
        if (w->rc == STVM_IO_READ && read(w->fds[0], &c, 1) == 1)
            atomic_store(&w->stage, 2);
        break;
    case SRC_SOCKET:
        w->rc = stvm_socket_accept(vm, w->listener, 10000, &conn);
        if (w->rc != STVM_OK)
            break;
        atomic_store(&w->stage, 1);
        w->rc = (int)stvm_socket_recv(vm, conn, &c, 1, 10000);
        if (w->rc == 1 && c == 'x')
            atomic_store(&w->stage, 2);
        stvm_socket_close(vm, conn);
        break;
    case SRC_EXTERNAL:
        atomic_store(&w->stage, 1);
        w->rc = stvm_semaphore_wait(vm, w->sem);
        if (w->rc == STVM_OK)
            atomic_store(&w->stage, 2);
        break;
    case SRC_TIMER:
        atomic_store(&w->stage, 1);
        w->rc = stvm_delay_wait_ms(vm, 5);
        if (w->rc == STVM_OK)
            atomic_store(&w->stage, 2);
        break;
    }
    w->woke_ns = mono_ns();
}

static void waiter_open(stvm_vm *vm, waiter *w, enum source src)
{
    *w = (waiter){.src = src, .fds = {-1, -1}, .peer = -1};
    if (src == SRC_PIPE)
        cr_assert_eq(pipe(w->fds), 0);
    if (src == SRC_SOCKET) {
        cr_assert_eq(stvm_tcp_listen(vm, "127.0.0.1", 0, 4, &w->listener), STVM_OK);
        w->port = stvm_socket_port(w->listener);
    }
    if (src == SRC_EXTERNAL) {
        w->sem = sem_make(vm);
        cr_assert_eq(stvm_external_register(vm, w->sem, &w->index), STVM_OK);
    }
    cr_assert_eq(stvm_spawn(vm, 40, "waiter", waits, w, NULL), STVM_OK);
}

/* A blocking connect to a listener on loopback completes from the backlog. */
static int connect_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Make what w waits for ready, from outside the VM, while no run is under way. */
static void make_ready(stvm_vm *vm, waiter *w)
{
    switch (w->src) {
    case SRC_PIPE:
        cr_assert_eq(write(w->fds[1], "x", 1), 1);
        break;
    case SRC_SOCKET:
        cr_assert_eq(send(w->peer, "x", 1, MSG_NOSIGNAL), 1);
        break;
    case SRC_EXTERNAL:
        cr_assert_eq(stvm_external_signal(vm, w->index), STVM_OK);
        break;
    case SRC_TIMER: {
        struct timespec ts = {.tv_nsec = 15 * 1000000};   /* past the 5 ms deadline */
        nanosleep(&ts, NULL);
        break;
    }
    }
}

static void waiter_close(stvm_vm *vm, waiter *w)
{
    if (w->fds[0] >= 0) {
        close(w->fds[0]);
        close(w->fds[1]);
    }
    if (w->peer >= 0)
        close(w->peer);
    if (w->listener)
        cr_assert_eq(stvm_socket_close(vm, w->listener), STVM_OK);
    if (w->sem)
        cr_assert_eq(stvm_external_unregister(vm, w->index), STVM_OK);
}

/* The process is brought to its wait by runs that never wait in the OS, the source is
 * made ready, and then exactly one call in mode must see it: the process wakes and
 * finishes within that call. */
static void seen_by_the_next_call(int mode, enum source src)
{
    stvm_vm *vm = vm_make(NULL);
    waiter w;
    waiter_open(vm, &w, src);
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 1);
    if (src == SRC_SOCKET) {
        w.peer = connect_loopback(w.port);
        for (int i = 0; i < 1000 && atomic_load(&w.stage) < 1; i++)
            cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 1, "accepting (rc %d)", w.rc);
    }
    cr_assert_eq(atomic_load(&w.stage), 1, "the process waits");
    make_ready(vm, &w);
    int rc = stvm_run_mode(vm, mode);
    cr_assert_eq(atomic_load(&w.stage), 2, "mode %d, source %d: seen by this call (rc %d, "
                 "process rc %d)", mode, src, rc, w.rc);
    cr_assert_eq(rc, mode == STVM_RUN_DEFAULT ? STVM_OK : 0);
    waiter_close(vm, &w);
    vm_done(vm);
}

Test(host_loop, nowait_sees_a_pipe_that_became_readable_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_NOWAIT, SRC_PIPE);
}
Test(host_loop, nowait_sees_a_socket_that_became_readable_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_NOWAIT, SRC_SOCKET);
}
Test(host_loop, nowait_sees_an_external_signal_sent_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_NOWAIT, SRC_EXTERNAL);
}
Test(host_loop, nowait_sees_a_deadline_that_passed_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_NOWAIT, SRC_TIMER);
}
Test(host_loop, once_sees_a_pipe_that_became_readable_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_ONCE, SRC_PIPE);
}
Test(host_loop, once_sees_a_socket_that_became_readable_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_ONCE, SRC_SOCKET);
}
Test(host_loop, once_sees_an_external_signal_sent_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_ONCE, SRC_EXTERNAL);
}
Test(host_loop, once_sees_a_deadline_that_passed_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_ONCE, SRC_TIMER);
}
Test(host_loop, run_sees_a_pipe_that_became_readable_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_DEFAULT, SRC_PIPE);
}
Test(host_loop, run_sees_a_socket_that_became_readable_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_DEFAULT, SRC_SOCKET);
}
Test(host_loop, run_sees_an_external_signal_sent_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_DEFAULT, SRC_EXTERNAL);
}
Test(host_loop, run_sees_a_deadline_that_passed_before_the_call)
{
    seen_by_the_next_call(STVM_RUN_DEFAULT, SRC_TIMER);
}

/* ---- a libuv loop driving the VM --------------------------------------------------- */

#define PIPE_BYTES 100

typedef struct pinger {
    host *h;
    uv_timer_t tick;   /* the host's own timer, writing one byte each time */
    int fd, sent;
    int64_t sent_ns[PIPE_BYTES];
} pinger;

typedef struct reader {
    int fd, got;
    int64_t woke_ns[PIPE_BYTES];
} reader;

static void reads_bytes(stvm_vm *vm, void *arg)
{
    reader *r = arg;
    char c;
    while (r->got < PIPE_BYTES) {
        if (stvm_fd_wait(vm, r->fd, STVM_IO_READ, -1) != STVM_IO_READ)
            return;
        if (read(r->fd, &c, 1) == 1)
            r->woke_ns[r->got++] = mono_ns();
    }
}

static void write_byte(uv_timer_t *t)
{
    pinger *p = t->data;
    if (p->sent == PIPE_BYTES) {
        uv_timer_stop(t);
        return;
    }
    p->sent_ns[p->sent++] = mono_ns();
    cr_assert_eq(write(p->fd, "x", 1), 1);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

Test(host_loop, a_libuv_loop_sees_each_pipe_write_on_its_next_turn)
{
    stvm_vm *vm = vm_make(NULL);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    reader r = {.fd = fds[0]};
    cr_assert_eq(stvm_spawn(vm, 40, "reader", reads_bytes, &r, NULL), STVM_OK);
    host h;
    host_open(&h, vm, STVM_RUN_NOWAIT);
    pinger p = {.h = &h, .fd = fds[1]};
    cr_assert_eq(uv_timer_init(&h.loop, &p.tick), 0);
    p.tick.data = &p;
    cr_assert_eq(uv_timer_start(&p.tick, write_byte, 2, 2), 0);
    uv_run(&h.loop, UV_RUN_DEFAULT);   /* ends when the VM has finished and the timer stopped */
    cr_assert_eq(h.rc, 0, "every process finished (rc %d)", h.rc);
    cr_assert_eq(r.got, PIPE_BYTES);
    int64_t lat[PIPE_BYTES];
    for (int i = 0; i < PIPE_BYTES; i++)
        lat[i] = r.woke_ns[i] - p.sent_ns[i];
    qsort(lat, PIPE_BYTES, sizeof lat[0], cmp_i64);
    /* A busy poll every 20 ms would put the median near 10 ms and spin the host. */
    cr_assert_lt(lat[PIPE_BYTES / 2], 2000000, "median write-to-wake %lld ns",
                 (long long)lat[PIPE_BYTES / 2]);
    cr_assert_leq(h.turns, 4L * PIPE_BYTES, "%ld host turns for %d bytes", h.turns, PIPE_BYTES);
    uv_close((uv_handle_t *)&p.tick, NULL);
    host_close(&h);
    close(fds[0]);
    close(fds[1]);
    vm_done(vm);
}

/* ---- idleness ---------------------------------------------------------------------- */

/* A VM whose one process waits on a pipe with no deadline, beside the Delay scheduler's
 * timing process (started by a Delay first), so that its heartbeat is counted too. */
typedef struct idler {
    stvm_vm *vm;
    int fds[2];   /* [0] waited on, [1] written to end the wait */
    int rc;       /* what stvm_fd_wait answered (0: still waiting) */
} idler;

static void idles(stvm_vm *vm, void *arg)
{
    idler *w = arg;
    stvm_delay_wait_ms(vm, 1);
    w->rc = stvm_fd_wait(vm, w->fds[0], STVM_IO_READ, -1);
}

static void idler_open(idler *w, const stvm_config *cfg)
{
    *w = (idler){.vm = vm_make(cfg)};
    cr_assert_eq(pipe(w->fds), 0);
    cr_assert_eq(stvm_spawn(w->vm, 40, "idler", idles, w, NULL), STVM_OK);
}

static void idler_close(idler *w)
{
    close(w->fds[0]);
    close(w->fds[1]);
    vm_done(w->vm);
}

Test(host_loop, a_host_loop_driving_an_idle_vm_does_not_spin)
{
    idler w;
    idler_open(&w, NULL);
    host h;
    host_open(&h, w.vm, STVM_RUN_NOWAIT);
    run_host_for_ms(&h, 20);   /* past the first Delay */
    long turns0 = h.turns;
    int64_t cpu0 = thread_cpu_ns(), t0 = mono_ns();
    run_host_for_ms(&h, 1000);
    int64_t cpu = thread_cpu_ns() - cpu0, wall = mono_ns() - t0;
    long turns = h.turns - turns0;
    cr_log_info("idle host loop: %ld turns, %.1f ms CPU in %.0f ms", turns, cpu / 1e6, wall / 1e6);
    cr_assert_leq(turns, 10, "%ld host turns in a second of idleness", turns);
    cr_assert_lt(cpu, 50000000, "%.1f ms of host CPU in a second of idleness", cpu / 1e6);
    cr_assert_eq(write(w.fds[1], "x", 1), 1);
    uv_run(&h.loop, UV_RUN_DEFAULT);
    cr_assert_eq(h.rc, 0);
    cr_assert_eq(w.rc, STVM_IO_READ);
    host_close(&h);
    idler_close(&w);
}

static void *write_after_1s(void *arg)
{
    int fd = *(int *)arg;
    struct timespec ts = {.tv_sec = 1};
    nanosleep(&ts, NULL);
    ssize_t n = write(fd, "x", 1);
    (void)n;
    return NULL;
}

/* OS waits of a VM idle for about a second under plain stvm_run. */
static uint64_t idle_wakeups(uint32_t relinquish_us)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.idle_relinquish_us = relinquish_us;
    idler w;
    idler_open(&w, &cfg);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_after_1s, &w.fds[1]), 0);
    cr_assert_eq(stvm_run(w.vm), STVM_OK);
    pthread_join(t, NULL);
    cr_assert_eq(w.rc, STVM_IO_READ);
    stvm_stats s = stats_of(w.vm);
    idler_close(&w);
    return s.os_sleeps;
}

Test(host_loop, an_idle_vm_with_the_defaults_sleeps_until_something_is_due)
{
    uint64_t n = idle_wakeups(STVM_RELINQUISH_UNTIL_DUE);
    cr_log_info("idle VM, defaults: %llu OS waits in about 1 s", (unsigned long long)n);
    cr_assert_leq(n, 5, "%llu OS waits in a second of idleness", (unsigned long long)n);
}

Test(host_loop, pharos_1ms_quantum_stays_available_and_wakes_the_idle_vm_each_millisecond)
{
    uint64_t n = idle_wakeups(STVM_RELINQUISH_PHARO5_US);
    cr_log_info("idle VM, 1 ms quantum: %llu OS waits in about 1 s", (unsigned long long)n);
    cr_assert_geq(n, 200, "%llu OS waits in a second with a 1 ms quantum", (unsigned long long)n);
}

/* ---- stopping from the host --------------------------------------------------------- */

static void ask_stop(uv_timer_t *t)
{
    host *h = t->data;
    stvm_stop(h->vm);
}

Test(host_loop, a_stop_asked_from_the_host_loop_ends_the_next_run_and_a_later_one_goes_on)
{
    idler w;
    idler_open(&w, NULL);
    host h;
    host_open(&h, w.vm, STVM_RUN_NOWAIT);
    uv_timer_t stopper;
    cr_assert_eq(uv_timer_init(&h.loop, &stopper), 0);
    stopper.data = &h;
    cr_assert_eq(uv_timer_start(&stopper, ask_stop, 10, 0), 0);
    int64_t t0 = mono_ns();
    uv_run(&h.loop, UV_RUN_DEFAULT);   /* the stop's run answers ESTOPPED: drive lets go */
    cr_assert_eq(h.rc, STVM_ESTOPPED);
    cr_assert_lt(mono_ns() - t0, 1000000000, "the stop woke the host loop");
    cr_assert_eq(w.rc, 0, "the process was kept as it was, still waiting");
    cr_assert_eq(write(w.fds[1], "x", 1), 1);
    cr_assert_eq(stvm_run(w.vm), STVM_OK, "a later run goes on");
    cr_assert_eq(w.rc, STVM_IO_READ);
    uv_close((uv_handle_t *)&stopper, NULL);
    host_close(&h);
    idler_close(&w);
}

/* ---- a fresh VM: the backend descriptor alone gets it going (docs/io.md's recipe) ---- */

/* Is the backend descriptor readable now? */
static bool backend_readable(stvm_vm *vm)
{
    struct pollfd p = {.fd = stvm_backend_fd(vm), .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void counts(stvm_vm *vm, void *arg)
{
    (void)vm;
    (*(int *)arg)++;
}

Test(host_loop, backend_fd_readable_after_first_spawn)
{
    stvm_vm *vm = vm_make(NULL);
    cr_assert_not(backend_readable(vm), "a fresh VM has nothing to do");
    int ran = 0;
    cr_assert_eq(stvm_spawn(vm, 40, "first", counts, &ran, NULL), STVM_OK);
    cr_assert(backend_readable(vm), "a process is ready: the host must run the VM");
    cr_assert_eq(stvm_spawn(vm, 40, "second", counts, &ran, NULL), STVM_OK);
    cr_assert(backend_readable(vm));
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 0);
    cr_assert_eq(ran, 2);
    cr_assert_not(backend_readable(vm), "the run took what made it readable: the host sleeps");
    vm_done(vm);
}

typedef struct ping {
    stvm_semaphore *sem;
    int fds[2];
    int got;
} ping;

/* Waits on a pipe (so that a run leaves it waiting, not deadlocked), then on sem. */
static void waits_twice(stvm_vm *vm, void *arg)
{
    ping *p = arg;
    if (stvm_fd_wait(vm, p->fds[0], STVM_IO_READ, -1) == STVM_IO_READ)
        p->got++;
    if (stvm_semaphore_wait(vm, p->sem) == STVM_OK)
        p->got++;
}

static void waits_on(stvm_vm *vm, void *arg)
{
    stvm_semaphore_wait(vm, arg);
}

Test(host_loop, backend_fd_readable_when_the_host_readies_a_process_between_runs)
{
    stvm_vm *vm = vm_make(NULL);
    ping p = {.sem = sem_make(vm)};
    cr_assert_eq(pipe(p.fds), 0);
    stvm_semaphore *other = sem_make(vm);
    cr_assert_eq(stvm_spawn(vm, 40, "waiter", waits_twice, &p, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(vm, 40, "sleeper", waits_on, other, NULL), STVM_OK);
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 1);
    cr_assert_not(backend_readable(vm));
    cr_assert_eq(stvm_semaphore_signal(vm, other), STVM_OK);   /* the host wakes the sleeper */
    cr_assert(backend_readable(vm), "a signal from the host made a process ready");
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 1);
    cr_assert_not(backend_readable(vm));
    cr_assert_eq(write(p.fds[1], "x", 1), 1);
    /* now it waits on p.sem, which only the host can signal */
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), STVM_EDEADLOCK);
    cr_assert_eq(p.got, 1);
    cr_assert_eq(stvm_semaphore_signal(vm, p.sem), STVM_OK);
    cr_assert(backend_readable(vm));
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 0);
    cr_assert_eq(p.got, 2);
    close(p.fds[0]);
    close(p.fds[1]);
    cr_assert_eq(stvm_semaphore_free(vm, p.sem), STVM_OK);
    cr_assert_eq(stvm_semaphore_free(vm, other), STVM_OK);
    vm_done(vm);
}

/* Stops the run it is in and yields: the run ends with this process still ready. */
static void stops_itself(stvm_vm *vm, void *arg)
{
    stvm_stop(vm);
    stvm_yield(vm);
    (*(int *)arg)++;
}

Test(host_loop, backend_fd_readable_after_a_stopped_run_leaves_work)
{
    stvm_vm *vm = vm_make(NULL);
    int done = 0;
    cr_assert_eq(stvm_spawn(vm, 40, "stopper", stops_itself, &done, NULL), STVM_OK);
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), STVM_ESTOPPED);
    cr_assert_eq(done, 0);
    cr_assert(backend_readable(vm), "the stopped run left a process ready");
    cr_assert_eq(stvm_run_mode(vm, STVM_RUN_NOWAIT), 0);
    cr_assert_eq(done, 1);
    vm_done(vm);
}

/* A libuv loop that watches only the backend descriptor, as docs/io.md's recipe says,
 * with no run of its own before uv_run; a guard timer fails the test instead of letting
 * a sleeping loop hang it. */
static void give_up(uv_timer_t *t)
{
    *(bool *)t->data = true;
    uv_stop(t->loop);
}

Test(host_loop, a_libuv_loop_runs_a_fresh_vm_to_completion_without_a_first_run)
{
    stvm_vm *vm = vm_make(NULL);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    reader r = {.fd = fds[0]};
    cr_assert_eq(stvm_spawn(vm, 40, "reader", reads_bytes, &r, NULL), STVM_OK);
    char bytes[PIPE_BYTES];
    memset(bytes, 'x', sizeof bytes);
    cr_assert_eq(write(fds[1], bytes, sizeof bytes), PIPE_BYTES);   /* all there already */
    host h = {.vm = vm, .mode = STVM_RUN_NOWAIT, .rc = 1};
    cr_assert_eq(uv_loop_init(&h.loop), 0);
    cr_assert_eq(uv_poll_init(&h.loop, &h.poll, stvm_backend_fd(vm)), 0);
    cr_assert_eq(uv_timer_init(&h.loop, &h.timer), 0);
    h.poll.data = h.timer.data = &h;
    cr_assert_eq(uv_poll_start(&h.poll, UV_READABLE, on_poll), 0);
    bool gave_up = false;
    uv_timer_t guard;
    cr_assert_eq(uv_timer_init(&h.loop, &guard), 0);
    guard.data = &gave_up;
    cr_assert_eq(uv_timer_start(&guard, give_up, 5000, 0), 0);
    uv_unref((uv_handle_t *)&guard);   /* the loop ends when the VM is done, not the guard */
    uv_run(&h.loop, UV_RUN_DEFAULT);
    cr_assert_not(gave_up, "the loop slept: nothing told it the VM had a process to run");
    cr_assert_eq(h.rc, 0, "every process finished (rc %d)", h.rc);
    cr_assert_eq(r.got, PIPE_BYTES);
    uv_close((uv_handle_t *)&guard, NULL);
    host_close(&h);
    close(fds[0]);
    close(fds[1]);
    vm_done(vm);
}
