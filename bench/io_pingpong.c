/*
 * stvm-bench io: 1-byte ping-pong over loopback TCP. The pinging side sends one byte
 * and waits for it to come back; the echoing side sends back what it reads until the
 * connection ends. A side is a green process (stvm sockets) or an OS thread (a blocking
 * socket); both run the same two loops over one send-or-receive step, so the three
 * pairs differ only in who is at each end. The pinging side runs a warm-up (a tenth of
 * the round trips, at most 1000 and a tenth of the time limit), then the timed round
 * trips between two readings of the clocks and counters. Peer OS threads are pinned to
 * the VM's CPU, so every pair runs on one core. Socket options are the system's
 * defaults on both sides (no TCP_NODELAY, default buffer sizes).
 *
 * Also the counters every io measurement reads, and the VM every one makes.
 */
#include "io.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define WARMUP_MAX 1000

void io_counts_take(stvm_vm *vm, io_counts *c)
{
    stvm_stats st = {0};
    if (vm)
        stvm_vm_get_stats(vm, &st);
#define IO_READ(member, metric, unit, decimals, better) c->member = st.member;
    IO_VM_COUNTERS(IO_READ)
#undef IO_READ
    struct rusage ru = {0};
    getrusage(RUSAGE_SELF, &ru);
    c->voluntary_switches = ru.ru_nvcsw;
    c->involuntary_switches = ru.ru_nivcsw;
    c->cpu_ns = bench_cpu_ns();
    c->wall_ns = bench_mono_ns();
}

void io_counts_add(io_counts *to, const io_counts *c, int sign)
{
    to->wall_ns += sign * c->wall_ns;
    to->cpu_ns += sign * c->cpu_ns;
    to->voluntary_switches += sign * c->voluntary_switches;
    to->involuntary_switches += sign * c->involuntary_switches;
#define IO_ADD(member, metric, unit, decimals, better) to->member += (uint64_t)sign * c->member;
    IO_VM_COUNTERS(IO_ADD)
#undef IO_ADD
}

int io_vm_new(int idle_mode, stvm_vm **vm)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.idle_mode = idle_mode;
    /* The VM before 2017 slept its image's 1 ms quantum, not until something was due. */
    if (idle_mode == STVM_IDLE_LEGACY)
        cfg.idle_relinquish_us = STVM_RELINQUISH_PHARO5_US;
    return stvm_vm_new(vm, &cfg);
}

/* ---- one end of the connection, and the two loops ------------------------------------ */

typedef struct endpoint {
    stvm_vm *vm;                    /* NULL: a blocking descriptor */
    stvm_socket *s;
    int fd;
    int64_t timeout_ms;
} endpoint;

#define PEER_CLOSED (-ECONNRESET)   /* a descriptor's end of the stream, as an error */

/* One byte out or in: 1, 0 at the end of the stream, or a negative error (stvm's on a
 * VM's socket, -errno on a descriptor). */
static int64_t step(endpoint *e, uint8_t *b, bool out)
{
    if (e->vm)
        return out ? stvm_socket_send(e->vm, e->s, b, 1, e->timeout_ms)
                   : stvm_socket_recv(e->vm, e->s, b, 1, e->timeout_ms);
    ssize_t n;
    do
        n = out ? send(e->fd, b, 1, MSG_NOSIGNAL) : recv(e->fd, b, 1, 0);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : n;
}

static int64_t closed(const endpoint *e)
{
    return e->vm ? STVM_ECLOSED : PEER_CLOSED;
}

static int64_t round_trip(endpoint *e, uint8_t seq, const char **what)
{
    uint8_t in = (uint8_t)~seq;
    int64_t n = step(e, &seq, true);
    *what = e->vm ? "stvm_socket_send" : "send";
    if (n == 1) {
        n = step(e, &in, false);
        *what = e->vm ? "stvm_socket_recv" : "recv";
    }
    if (n != 1)
        return n < 0 ? n : closed(e);
    *what = "the echo (a wrong byte came back)";
    return in == seq ? 0 : e->vm ? STVM_ESTATE : -EPROTO;
}

/* The warm-up, then the timed round trips between two readings: 0, or the error. */
static int64_t ping_loop(endpoint *e, const io_params *p, io_counts *c,
                         const char **what)
{
    long long warm = p->round_trips / 10 < WARMUP_MAX ? p->round_trips / 10 : WARMUP_MAX;
    int64_t limit_ns = (int64_t)(p->max_seconds * 1e9);
    int64_t warm_end = bench_mono_ns() + limit_ns / 10;
    uint8_t seq = 0;
    int64_t err = 0;
    for (long long i = 0; i < warm && !err && bench_mono_ns() < warm_end; i++)
        err = round_trip(e, seq++, what);
    if (err)
        return err;
    io_counts a, b;
    io_counts_take(e->vm, &a);
    long long done = 0;
    while (done < p->round_trips && !err) {
        if (bench_mono_ns() - a.wall_ns >= limit_ns) {
            c->cut_short = true;
            break;
        }
        if (!(err = round_trip(e, seq++, what)))
            done++;
    }
    io_counts_take(e->vm, &b);
    io_counts_add(c, &b, 1);
    io_counts_add(c, &a, -1);
    c->round_trips = done;
    return err;
}

/* Send back what arrives until the peer closes: 0, or the error. */
static int64_t echo_loop(endpoint *e, const char **what)
{
    uint8_t b;
    int64_t n;
    while ((n = step(e, &b, false)) == 1)
        if ((n = step(e, &b, true)) != 1) {
            *what = e->vm ? "stvm_socket_send" : "send";
            return n < 0 ? n : closed(e);
        }
    *what = e->vm ? "stvm_socket_recv" : "recv";
    return n;
}

/* ---- the pair ------------------------------------------------------------------------- */

/* A side: a green process (e.vm set) or an OS thread (its descriptor connected before
 * it starts); its own failure, so the threads and the VM never write the same field. */
typedef struct side {
    const io_params *p;
    io_counts *c;
    endpoint e;
    stvm_socket *listener;          /* the VM's: a green echo accepts on it, a green ping
                                       connects to it or (against a thread) accepts */
    bool ping, accept;
    int err;                        /* an stvm error, or -1 outside the VM */
    char why[200];
} side;

static void side_run(side *s)
{
    endpoint *e = &s->e;
    const char *what = s->accept ? "stvm_tcp_accept" : "stvm_tcp_connect";
    int64_t err = 0;
    if (e->vm)
        err = s->accept ? stvm_tcp_accept(e->vm, s->listener, e->timeout_ms, &e->s)
                        : stvm_tcp_connect(e->vm, "127.0.0.1", stvm_socket_port(s->listener),
                                           e->timeout_ms, &e->s);
    if (!err)
        err = s->ping ? ping_loop(e, s->p, s->c, &what) : echo_loop(e, &what);
    if (err && !s->err) {
        s->err = e->vm ? (int)err : -1;
        snprintf(s->why, sizeof s->why, "%s%s: %s: %s", e->vm ? "" : "the thread's ",
                 s->ping ? "ping" : "echo", what, e->vm ? stvm_err_name((int)err)
                 : err == PEER_CLOSED ? "the peer closed" : strerror((int)-err));
    }
    if (e->vm && e->s)
        stvm_socket_close(e->vm, e->s);
    else if (!e->vm)
        shutdown(e->fd, SHUT_WR);   /* the peer sees the end; the runner closes it */
}

static void vm_side(stvm_vm *vm, void *arg)
{
    side_run(arg);
}

static void *os_side(void *arg)
{
    side *s = arg;
    if (s->p->cpu >= 0 && bench_pin_cpu(s->p->cpu) != 0) {   /* runs anyway: its peer ends */
        s->err = -1;
        snprintf(s->why, sizeof s->why, "pinning a thread to CPU %d", s->p->cpu);
    }
    side_run(s);
    return NULL;
}

/* A blocking TCP socket connected to 127.0.0.1:port, or -1 (errno set). */
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

/* Two blocking sockets connected over 127.0.0.1 (the listener's backlog holds the
 * connection until the accept): 0, or -1 and why. */
static int os_connection(int *a, int *b, char *why, size_t whysize)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd >= 0 && bind(lfd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
        listen(lfd, 1) == 0 && getsockname(lfd, (struct sockaddr *)&addr, &len) == 0 &&
        (*a = connect_loopback(ntohs(addr.sin_port))) >= 0 &&
        (*b = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0) {
        close(*a);
        *a = -1;
    }
    if (*b < 0)
        snprintf(why, whysize, "connecting two sockets on 127.0.0.1: %s", strerror(errno));
    if (lfd >= 0)
        close(lfd);
    return *b < 0 ? -1 : 0;
}

/* A VM in the idle mode, listening on 127.0.0.1 (port 0: the system picks), tracing
 * started: 0, or an error and why. */
static int vm_listen(const io_params *p, stvm_vm **vm, stvm_socket **listener,
                     char *why, size_t whysize)
{
    int err = io_vm_new(p->idle_mode, vm);
    if (err) {
        snprintf(why, whysize, "stvm_vm_new: %s", stvm_err_name(err));
        return err;
    }
    if ((err = stvm_tcp_listen(*vm, "127.0.0.1", 0, 4, listener)))
        snprintf(why, whysize, "stvm_tcp_listen: %s", stvm_err_name(err));
    else
        err = bench_trace_begin(p->trace, *vm, why, whysize);
    if (err)
        stvm_vm_free(*vm);          /* closes the listener */
    return err;
}

/* s on an OS thread: true, or false with why. */
static bool start_thread(pthread_t *t, side *s, char *why, size_t whysize)
{
    int rc = pthread_create(t, NULL, os_side, s);
    if (rc)
        snprintf(why, whysize, "pthread_create: %s", strerror(rc));
    return rc == 0;
}

int io_pingpong(io_pair kind, const io_params *p, io_counts *c, char *why,
                size_t whysize)
{
    *c = (io_counts){0};
    side ping = {.p = p, .c = c, .e = {.fd = -1, .timeout_ms = p->timeout_ms}, .ping = true};
    side echo = {.p = p, .c = c, .e = {.fd = -1, .timeout_ms = p->timeout_ms}};
    stvm_vm *vm = NULL;
    int err = kind == IO_PAIR_OS ? os_connection(&ping.e.fd, &echo.e.fd, why, whysize)
                                 : vm_listen(p, &vm, &ping.listener, why, whysize);
    if (err)
        return err;
    echo.listener = ping.listener;
    if (kind != IO_PAIR_OS) {
        ping.e.vm = vm;
        ping.accept = kind == IO_PAIR_THREAD;   /* the thread's connection, made below */
    }
    if (kind == IO_PAIR_VM) {
        echo.e.vm = vm;
        echo.accept = true;
    } else if (kind == IO_PAIR_THREAD &&
               (echo.e.fd = connect_loopback(stvm_socket_port(ping.listener))) < 0) {
        snprintf(why, whysize, "connecting the thread's socket: %s", strerror(errno));
        err = -1;
    }
    pthread_t te, tp;
    bool echo_thread = !err && !echo.e.vm && start_thread(&te, &echo, why, whysize);
    bool ping_thread = !err && !ping.e.vm && echo_thread && start_thread(&tp, &ping, why,
                                                                         whysize);
    if (!err && ((!echo.e.vm && !echo_thread) || (!ping.e.vm && !ping_thread)))
        err = -1;                   /* start_thread said why */
    if (!err && vm) {
        const char *what = "stvm_spawn";
        if ((!echo.e.vm || !(err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "echo",
                                              vm_side, &echo, NULL))) &&
            !(err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "ping", vm_side, &ping,
                               NULL))) {
            what = "stvm_run";
            err = stvm_run(vm);
        }
        if (err)
            snprintf(why, whysize, "%s: %s", what, stvm_err_name(err));
    }
    if (ping_thread)
        pthread_join(tp, NULL);
    if (echo_thread && (err || ping.err))
        shutdown(echo.e.fd, SHUT_RDWR);   /* so that the thread ends */
    if (echo_thread)
        pthread_join(te, NULL);
    if (vm && !err && !ping.err && !echo.err)
        err = bench_trace_end(p->trace, vm, why, whysize);
    stvm_vm_free(vm);
    if (echo.e.fd >= 0)
        close(echo.e.fd);
    if (ping.e.fd >= 0)
        close(ping.e.fd);
    const side *failed = err ? NULL : ping.err ? &ping : echo.err ? &echo : NULL;
    if (failed)
        snprintf(why, whysize, "%s", failed->why);
    return failed ? failed->err : err;
}
