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
        stvm_get_stats(vm, &st);
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
    *what = "send";
    if (n == 1) {
        n = step(e, &in, false);
        *what = "recv";
    }
    if (n != 1)
        return n < 0 ? n : closed(e);
    *what = "the echo (a wrong byte came back)";
    return in == seq ? 0 : e->vm ? STVM_ESTATE : -EPROTO;
}

/* The warm-up, then the timed round trips between two readings: 0, or the error. */
static int64_t ping_loop(endpoint *e, const io_pingpong_params *p, io_counts *c,
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
            *what = "send";
            return n < 0 ? n : closed(e);
        }
    *what = "recv";
    return n;
}

/* ---- the pair ------------------------------------------------------------------------- */

typedef struct pair {
    const io_pingpong_params *p;
    io_counts *c;
    stvm_socket *listener;          /* the VM's, or NULL */
    int lfd, port;                  /* the OS listener (two OS threads), or -1 */
} pair;

/* A side: a green process (e.vm set) or an OS thread; its own failure, so threads and
 * the VM never write the same field. */
typedef struct side {
    pair *v;
    endpoint e;
    bool ping;                      /* else it echoes */
    bool accept;                    /* it accepts its connection (else it connects, or
                                       has its descriptor already) */
    int err;                        /* an stvm error, or -1 outside the VM */
    char why[200];
} side;

/* A blocking TCP socket connected to 127.0.0.1:port, or -1 (errno set). */
static int connect_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)port)};
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        fd = -1;
    }
    return fd;
}

/* Connect or accept when it must, then ping or echo; the failure into s. */
static void side_run(side *s)
{
    endpoint *e = &s->e;
    const char *what = "";
    int64_t err = 0;
    if (e->vm && !e->s) {
        what = s->accept ? "stvm_tcp_accept" : "stvm_tcp_connect";
        err = s->accept ? stvm_tcp_accept(e->vm, s->v->listener, e->timeout_ms, &e->s)
                        : stvm_tcp_connect(e->vm, "127.0.0.1", s->v->port, e->timeout_ms, &e->s);
    } else if (!e->vm && e->fd < 0) {
        what = s->accept ? "accept" : "connect";
        e->fd = s->accept ? accept4(s->v->lfd, NULL, NULL, SOCK_CLOEXEC)
                          : connect_loopback(s->v->port);
        err = e->fd < 0 ? -errno : 0;
    }
    if (!err)
        err = s->ping ? ping_loop(e, s->v->p, s->v->c, &what) : echo_loop(e, &what);
    if (err) {
        s->err = e->vm ? (int)err : -1;
        snprintf(s->why, sizeof s->why, "%s: %s: %s",
                 e->vm ? (s->ping ? "ping" : "echo") : s->ping ? "the ping thread"
                                                             : "the echo thread",
                 what, e->vm ? stvm_err_name((int)err)
                       : err == PEER_CLOSED ? "the peer closed" : strerror((int)-err));
    }
    if (e->vm && e->s)
        stvm_socket_close(e->vm, e->s);
    else if (!e->vm && e->fd >= 0)
        shutdown(e->fd, SHUT_WR);   /* the peer sees the end; the runner closes it */
}

static void vm_side(stvm_vm *vm, void *arg)
{
    side_run(arg);
}

static void *os_side(void *arg)
{
    side *s = arg;
    int cpu = s->v->p->cpu;
    if (cpu >= 0 && bench_pin_cpu(cpu) != 0) {   /* it runs anyway, so its peer ends */
        s->err = -1;
        snprintf(s->why, sizeof s->why, "pinning the %s thread to CPU %d",
                 s->ping ? "ping" : "echo", cpu);
    }
    side_run(s);
    return NULL;
}

/* The pair's listener on 127.0.0.1 (port 0: the system picks): the VM's, tracing
 * started, when vm is given; else a blocking socket. 0, or an error and why. */
static int pair_listen(pair *v, stvm_vm **vm, char *why, size_t whysize)
{
    if (!vm) {
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        v->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (v->lfd < 0 || bind(v->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
            listen(v->lfd, 4) != 0 || getsockname(v->lfd, (struct sockaddr *)&a, &len) != 0) {
            snprintf(why, whysize, "listening on 127.0.0.1: %s", strerror(errno));
            if (v->lfd >= 0)
                close(v->lfd);
            return -1;
        }
        v->port = ntohs(a.sin_port);
        return 0;
    }
    int err = io_vm_new(v->p->idle_mode, vm);
    if (err) {
        snprintf(why, whysize, "stvm_vm_new: %s", stvm_err_name(err));
        return err;
    }
    if ((err = stvm_tcp_listen(*vm, "127.0.0.1", 0, 4, &v->listener)))
        snprintf(why, whysize, "stvm_tcp_listen: %s", stvm_err_name(err));
    else if (!(err = bench_trace_begin(v->p->trace, *vm, why, whysize)))
        v->port = stvm_socket_port(v->listener);
    if (err)
        stvm_vm_free(*vm);          /* closes the listener */
    return err;
}

static bool start_thread(pthread_t *t, side *s)
{
    if (pthread_create(t, NULL, os_side, s) == 0)
        return true;
    s->err = -1;
    snprintf(s->why, sizeof s->why, "pthread_create failed");
    return false;
}

int io_pingpong(io_pair kind, const io_pingpong_params *p, io_counts *c, char *why,
                size_t whysize)
{
    *c = (io_counts){0};
    pair v = {.p = p, .c = c, .lfd = -1};
    side ping = {.v = &v, .ping = true, .e = {.fd = -1, .timeout_ms = p->timeout_ms}};
    side echo = {.v = &v, .e = {.fd = -1, .timeout_ms = p->timeout_ms}};
    stvm_vm *vm = NULL;
    int err = pair_listen(&v, kind == IO_PAIR_OS ? NULL : &vm, why, whysize);
    if (err)
        return err;
    pthread_t te, tp;
    bool echo_thread = false;
    if (kind == IO_PAIR_OS) {
        echo.accept = true;
        if ((echo_thread = start_thread(&te, &echo)) && start_thread(&tp, &ping))
            pthread_join(tp, NULL);
        if (ping.err)
            shutdown(v.lfd, SHUT_RDWR);   /* ends an accept nobody will answer */
    } else {
        const char *what = "stvm_spawn";
        ping.e.vm = vm;
        if (kind == IO_PAIR_VM) {
            echo.e.vm = vm;
            echo.accept = true;
            err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "echo", vm_side, &echo, NULL);
        } else if ((echo.e.fd = connect_loopback(v.port)) < 0) {
            what = "connecting the OS thread's socket";   /* the backlog holds it */
            err = STVM_ESYS;
        } else {
            ping.accept = true;
            echo_thread = start_thread(&te, &echo);
        }
        if (!err && !echo.err &&
            !(err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "ping", vm_side, &ping,
                               NULL))) {
            what = "stvm_run";
            err = stvm_run(vm);
        }
        if (err)
            snprintf(why, whysize, "%s: %s", what, stvm_err_name(err));
        if (echo.e.fd >= 0 && (err || ping.err))
            shutdown(echo.e.fd, SHUT_RDWR);   /* so that the thread ends */
    }
    if (echo_thread)
        pthread_join(te, NULL);
    if (vm && !err && !ping.err && !echo.err)
        err = bench_trace_end(p->trace, vm, why, whysize);
    stvm_vm_free(vm);
    const int fds[] = {v.lfd, echo.e.vm ? -1 : echo.e.fd, ping.e.vm ? -1 : ping.e.fd};
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    const side *failed = ping.err ? &ping : echo.err ? &echo : NULL;
    if (failed)
        snprintf(why, whysize, "%s", failed->why);
    return failed ? failed->err : err;
}
