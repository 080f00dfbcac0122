/*
 * stvm-bench io: 1-byte ping-pong over loopback TCP. The pinging side sends one byte
 * and waits for it to come back; the echoing side sends back what it reads until the
 * connection ends. Three pairs:
 *  - two green processes of one VM (stvm_tcp_accept/connect, stvm_socket_send/recv);
 *  - a green process against an OS thread with a blocking socket;
 *  - two OS threads with blocking sockets, the reference.
 * Each runs a warm-up (a tenth of the round trips, at most 1000 and a tenth of the time
 * limit), then the timed round trips, bracketed by two snapshots of the clocks and
 * counters. The peer OS threads are pinned to the VM's CPU, so every pair runs on one
 * core. Socket options are the system's defaults on both sides (the library sets none
 * that matter here: no TCP_NODELAY, default buffer sizes).
 */
#include "io_measure.h"

#include "bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define WARMUP_MAX 1000

/* ---- counters --------------------------------------------------------------------------- */

void io_snapshot_take(stvm_vm *vm, io_snapshot *s)
{
    memset(s, 0, sizeof *s);
    if (vm)
        stvm_get_stats(vm, &s->vm);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        s->nvcsw = ru.ru_nvcsw;
        s->nivcsw = ru.ru_nivcsw;
    }
    s->cpu_ns = bench_cpu_ns();
    s->mono_ns = bench_mono_ns();
}

void io_counts_between(const io_snapshot *a, const io_snapshot *b, io_counts *c)
{
    c->wall_ns = b->mono_ns - a->mono_ns;
    c->cpu_ns = b->cpu_ns - a->cpu_ns;
    c->voluntary_switches = b->nvcsw - a->nvcsw;
    c->involuntary_switches = b->nivcsw - a->nivcsw;
#define D(f) c->f = b->vm.f - a->vm.f
    D(os_sleeps);
    D(os_slept_us);
    D(wakeups_timer);
    D(wakeups_io);
    D(wakeups_external);
    D(wakeups_relinquish);
    D(io_polls_busy);
    D(fds_ready);
    D(io_signals_unwaited);
    D(socket_reads_blocked);
    D(timed_waits);
    D(context_switches);
#undef D
}

/* ---- the pinging side, on a VM or a blocking descriptor --------------------------------- */

/* One way to do a round trip: 0, or an error with *what naming the call. */
typedef struct pinger {
    int (*round_trip)(struct pinger *pg, uint8_t seq, const char **what);
    stvm_vm *vm;                    /* NULL for the OS-thread pair */
    stvm_socket *s;
    int fd;
    int64_t timeout_ms;
} pinger;

static int stvm_round_trip(pinger *pg, uint8_t seq, const char **what)
{
    uint8_t in = 0;
    int64_t n = stvm_socket_send(pg->vm, pg->s, &seq, 1, pg->timeout_ms);
    if (n != 1) {
        *what = "stvm_socket_send";
        return n < 0 ? (int)n : STVM_ECLOSED;
    }
    n = stvm_socket_recv(pg->vm, pg->s, &in, 1, pg->timeout_ms);
    if (n != 1) {
        *what = "stvm_socket_recv";
        return n < 0 ? (int)n : STVM_ECLOSED;
    }
    if (in != seq) {
        *what = "the echo (a wrong byte came back)";
        return STVM_ESTATE;
    }
    return 0;
}

static int fd_round_trip(pinger *pg, uint8_t seq, const char **what)
{
    uint8_t in = 0;
    ssize_t n;
    do
        n = send(pg->fd, &seq, 1, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != 1) {
        *what = "send";
        return -1;
    }
    do
        n = recv(pg->fd, &in, 1, 0);
    while (n < 0 && errno == EINTR);
    if (n != 1) {
        *what = n == 0 ? "recv (the peer closed)" : "recv";
        return -1;
    }
    if (in != seq) {
        *what = "the echo (a wrong byte came back)";
        return -1;
    }
    return 0;
}

/* The warm-up, then the timed round trips between two snapshots. */
static int ping_loop(pinger *pg, const io_pingpong_params *p, io_counts *c,
                     const char **what)
{
    long long warm = p->round_trips / 10 < WARMUP_MAX ? p->round_trips / 10 : WARMUP_MAX;
    int64_t limit_ns = (int64_t)(p->max_seconds * 1e9);
    int64_t warm_end = bench_mono_ns() + limit_ns / 10;
    uint8_t seq = 0;
    int err = 0;
    for (long long i = 0; i < warm && !err && bench_mono_ns() < warm_end; i++)
        err = pg->round_trip(pg, seq++, what);
    if (err)
        return err;
    io_snapshot a, b;
    io_snapshot_take(pg->vm, &a);
    int64_t deadline = a.mono_ns + limit_ns;
    long long done = 0;
    while (done < p->round_trips && !err) {
        if (bench_mono_ns() >= deadline) {
            c->cut_short = true;
            break;
        }
        if (!(err = pg->round_trip(pg, seq++, what)))
            done++;
    }
    io_snapshot_take(pg->vm, &b);
    io_counts_between(&a, &b, c);
    c->round_trips = done;
    return err;
}

/* ---- the echoing side on a blocking descriptor (an OS thread) --------------------------- */

typedef struct os_echo {
    int fd;                         /* connected; or -1 to accept on listen_fd */
    int listen_fd;
    int cpu;
    int err;                        /* errno, or -1 for a pinning failure */
    const char *what;
} os_echo;

static void *os_echo_thread(void *arg)
{
    os_echo *e = arg;
    if (e->cpu >= 0 && bench_pin_cpu(e->cpu) != 0) {
        e->err = -1;
        e->what = "pinning the echo thread";
    }
    if (e->fd < 0) {
        do
            e->fd = accept(e->listen_fd, NULL, NULL);
        while (e->fd < 0 && errno == EINTR);
        if (e->fd < 0) {
            e->err = errno;
            e->what = "accept";
            return NULL;
        }
    }
    uint8_t b;
    for (;;) {
        ssize_t n = recv(e->fd, &b, 1, 0);
        if (n == 0)
            break;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || send(e->fd, &b, 1, MSG_NOSIGNAL) != 1) {
            e->err = errno;
            e->what = n < 0 ? "recv" : "send";
            break;
        }
    }
    return NULL;
}

/* A blocking TCP socket listening on 127.0.0.1 (port 0: the system picks), or -1. */
static int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* A blocking TCP socket connected to 127.0.0.1:port, or -1. */
static int connect_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)port)};
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* ---- the VM's processes ------------------------------------------------------------------ */

typedef struct vm_pair {
    const io_pingpong_params *p;
    io_counts *c;
    stvm_socket *listener;
    int port;
    int err;                        /* the first failure of a process */
    char why[200];
} vm_pair;

static void vm_fail(vm_pair *v, const char *who, const char *what, int err)
{
    if (v->err)
        return;
    v->err = err;
    snprintf(v->why, sizeof v->why, "%s: %s: %s", who, what, stvm_err_name(err));
}

/* Echo until the peer closes. */
static void vm_echo(stvm_vm *vm, void *arg)
{
    vm_pair *v = arg;
    stvm_socket *s;
    int err = stvm_tcp_accept(vm, v->listener, v->p->timeout_ms, &s);
    if (err) {
        vm_fail(v, "echo", "stvm_tcp_accept", err);
        return;
    }
    uint8_t b;
    int64_t n;
    while ((n = stvm_socket_recv(vm, s, &b, 1, v->p->timeout_ms)) == 1) {
        if ((n = stvm_socket_send(vm, s, &b, 1, v->p->timeout_ms)) != 1)
            break;
    }
    if (n < 0)
        vm_fail(v, "echo", "stvm_socket_recv or send", (int)n);
    stvm_socket_close(vm, s);
}

static void vm_ping_on(stvm_vm *vm, vm_pair *v, stvm_socket *s)
{
    pinger pg = {.round_trip = stvm_round_trip, .vm = vm, .s = s,
                 .timeout_ms = v->p->timeout_ms};
    const char *what = "";
    int err = ping_loop(&pg, v->p, v->c, &what);
    if (err)
        vm_fail(v, "ping", what, err);
    stvm_socket_close(vm, s);
}

/* Connect to the VM's own listener, then ping. */
static void vm_ping_connect(stvm_vm *vm, void *arg)
{
    vm_pair *v = arg;
    stvm_socket *s;
    int err = stvm_tcp_connect(vm, "127.0.0.1", v->port, v->p->timeout_ms, &s);
    if (err)
        vm_fail(v, "ping", "stvm_tcp_connect", err);
    else
        vm_ping_on(vm, v, s);
}

/* Accept the OS thread's connection, then ping. */
static void vm_ping_accept(stvm_vm *vm, void *arg)
{
    vm_pair *v = arg;
    stvm_socket *s;
    int err = stvm_tcp_accept(vm, v->listener, v->p->timeout_ms, &s);
    if (err)
        vm_fail(v, "ping", "stvm_tcp_accept", err);
    else
        vm_ping_on(vm, v, s);
}

/* A VM in the idle mode asked, listening on 127.0.0.1. */
static int vm_setup(vm_pair *v, stvm_vm **out, char *why, size_t whysize)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.idle_mode = v->p->idle_mode;
    /* The VM before 2017 slept its image's 1 ms quantum, not until something was due. */
    if (cfg.idle_mode == STVM_IDLE_LEGACY)
        cfg.idle_relinquish_us = STVM_RELINQUISH_PHARO5_US;
    stvm_vm *vm;
    int err = stvm_vm_new(&vm, &cfg);
    if (err) {
        snprintf(why, whysize, "stvm_vm_new: %s", stvm_err_name(err));
        return err;
    }
    if ((err = stvm_tcp_listen(vm, "127.0.0.1", 0, 4, &v->listener))) {
        snprintf(why, whysize, "stvm_tcp_listen: %s", stvm_err_name(err));
        stvm_vm_free(vm);
        return err;
    }
    v->port = stvm_socket_port(v->listener);
    if ((err = bench_trace_begin(v->p->trace, vm, why, whysize))) {
        stvm_socket_close(vm, v->listener);
        stvm_vm_free(vm);
        return err;
    }
    *out = vm;
    return STVM_OK;
}

/* Run the VM and close it; the first failure (a process's, or the run's) into why. */
static int vm_finish(stvm_vm *vm, vm_pair *v, char *why, size_t whysize)
{
    int err = stvm_run(vm);
    stvm_socket_close(vm, v->listener);
    if (!err && !v->err)
        err = bench_trace_end(v->p->trace, vm, why, whysize);
    else if (err)
        snprintf(why, whysize, "stvm_run: %s", stvm_err_name(err));
    stvm_vm_free(vm);
    if (v->err) {
        snprintf(why, whysize, "%s", v->why);
        return v->err;
    }
    return err;
}

int io_pingpong_vm(const io_pingpong_params *p, io_counts *c, char *why, size_t whysize)
{
    *c = (io_counts){0};
    vm_pair v = {.p = p, .c = c};
    stvm_vm *vm;
    int err = vm_setup(&v, &vm, why, whysize);
    if (err)
        return err;
    if ((err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "echo", vm_echo, &v, NULL)) ||
        (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "ping", vm_ping_connect, &v,
                          NULL)))
        vm_fail(&v, "setup", "stvm_spawn", err);
    return vm_finish(vm, &v, why, whysize);
}

int io_pingpong_thread(const io_pingpong_params *p, io_counts *c, char *why, size_t whysize)
{
    *c = (io_counts){0};
    vm_pair v = {.p = p, .c = c};
    stvm_vm *vm;
    int err = vm_setup(&v, &vm, why, whysize);
    if (err)
        return err;
    /* Connected before the VM runs: the listener's backlog holds it for the accept. */
    os_echo e = {.fd = connect_loopback(v.port), .listen_fd = -1, .cpu = p->cpu};
    pthread_t t;
    if (e.fd < 0 || pthread_create(&t, NULL, os_echo_thread, &e) != 0) {
        snprintf(why, whysize, "%s", e.fd < 0 ? "connecting the OS thread's socket"
                                              : "pthread_create");
        if (e.fd >= 0)
            close(e.fd);
        stvm_socket_close(vm, v.listener);
        stvm_vm_free(vm);
        return -1;
    }
    if ((err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "ping", vm_ping_accept, &v,
                          NULL)))
        vm_fail(&v, "setup", "stvm_spawn", err);
    if (err)
        shutdown(e.fd, SHUT_RDWR);  /* so that the thread ends */
    err = vm_finish(vm, &v, why, whysize);
    if (err)
        shutdown(e.fd, SHUT_RDWR);
    pthread_join(t, NULL);
    close(e.fd);
    if (!err && e.err) {
        snprintf(why, whysize, "the OS thread: %s: %s", e.what,
                 e.err > 0 ? strerror(e.err) : "failed");
        err = -1;
    }
    return err;
}

/* ---- two OS threads ------------------------------------------------------------------------ */

typedef struct os_ping {
    const io_pingpong_params *p;
    io_counts *c;
    int port;
    int err;
    const char *what;
} os_ping;

static void *os_ping_thread(void *arg)
{
    os_ping *o = arg;
    if (o->p->cpu >= 0 && bench_pin_cpu(o->p->cpu) != 0) {
        o->err = -1;
        o->what = "pinning the ping thread";
        return NULL;
    }
    pinger pg = {.round_trip = fd_round_trip, .fd = connect_loopback(o->port)};
    if (pg.fd < 0) {
        o->err = errno;
        o->what = "connect";
        return NULL;
    }
    if (ping_loop(&pg, o->p, o->c, &o->what))
        o->err = errno ? errno : -1;
    close(pg.fd);                   /* the echo thread sees the end and returns */
    return NULL;
}

int io_pingpong_os(const io_pingpong_params *p, io_counts *c, char *why, size_t whysize)
{
    *c = (io_counts){0};
    int port = 0;
    int lfd = listen_loopback(&port);
    if (lfd < 0) {
        snprintf(why, whysize, "listening on 127.0.0.1: %s", strerror(errno));
        return -1;
    }
    os_echo e = {.fd = -1, .listen_fd = lfd, .cpu = p->cpu};
    os_ping o = {.p = p, .c = c, .port = port};
    pthread_t te, tp;
    int rc = pthread_create(&te, NULL, os_echo_thread, &e);
    if (rc == 0) {
        rc = pthread_create(&tp, NULL, os_ping_thread, &o);
        if (rc == 0)
            pthread_join(tp, NULL);
        if (rc != 0 || o.err)
            shutdown(lfd, SHUT_RDWR);   /* ends an accept nobody will answer */
        pthread_join(te, NULL);
    }
    close(lfd);
    if (e.fd >= 0)
        close(e.fd);
    if (rc != 0) {
        snprintf(why, whysize, "pthread_create: %s", strerror(rc));
        return -1;
    }
    if (o.err || e.err) {
        int err = o.err ? o.err : e.err;
        snprintf(why, whysize, "%s thread: %s: %s", o.err ? "the ping" : "the echo",
                 o.err ? o.what : e.what, err > 0 ? strerror(err) : "failed");
        return -1;
    }
    return 0;
}
