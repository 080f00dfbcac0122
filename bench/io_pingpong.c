/*
 * stvm-bench io: 1-byte ping-pong over loopback TCP (the system's socket options: no
 * TCP_NODELAY, default buffers). The ping sends a byte and waits for it back; the echo
 * returns what it reads until the end of the stream. A green process (stvm sockets) and
 * an OS thread (a blocking socket) run the same loops over one step, so the pairs differ
 * only in who is at each end. The ping warms up (a tenth of the round trips, at most 1000
 * and a tenth of the time limit), then times. Peer threads are pinned to the VM's CPU.
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
#define PEER_CLOSED (-ECONNRESET)   /* a descriptor's end of the stream, as an error */

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

void io_counts_take(stvm_vm *vm, io_counts *c, int sign)
{
    stvm_stats st = {0};
    if (vm)
        stvm_vm_get_stats(vm, &st);
    struct rusage ru = {0};
    getrusage(RUSAGE_SELF, &ru);
    io_counts now = {.voluntary_switches = ru.ru_nvcsw, .involuntary_switches = ru.ru_nivcsw,
                     .cpu_ns = bench_cpu_ns(), .wall_ns = bench_mono_ns()};
#define IO_READ(member, metric, unit, decimals, better) now.member = st.member;
    IO_VM_COUNTERS(IO_READ)
#undef IO_READ
    io_counts_add(c, &now, sign);
}

int io_vm_start(const io_params *p, const bench_trace *trace, int backlog, stvm_vm **vm,
                stvm_socket **listener, char *why, size_t whysize)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.idle_mode = p->idle_mode;
    /* The VM before 2017 slept its image's 1 ms quantum, not until something was due. */
    if (p->idle_mode == STVM_IDLE_LEGACY)
        cfg.idle_relinquish_us = STVM_RELINQUISH_PHARO5_US;
    int err = stvm_vm_create(&cfg, vm);
    if (err) {
        snprintf(why, whysize, "stvm_vm_create: %s", stvm_err_name(err));
        return err;
    }
    if (listener && (err = stvm_tcp_listen(*vm, "127.0.0.1", 0, backlog, listener)))
        snprintf(why, whysize, "stvm_tcp_listen: %s", stvm_err_name(err));
    else
        err = bench_trace_begin(trace, *vm, why, whysize);
    if (err)
        stvm_vm_free(*vm);          /* closes the listener */
    return err;
}

/* One end: a green process (vm set) or an OS thread (its descriptor connected before it
 * starts), with its own failure, so the threads and the VM never write the same field. */
typedef struct side {
    const io_params *p;
    io_counts *c;                   /* the ping's figures */
    stvm_vm *vm;                    /* NULL: a blocking descriptor */
    stvm_socket *s, *listener;      /* the VM's listener: a green echo accepts on it, a green
                                       ping connects to it or (against a thread) accepts */
    int fd;
    bool ping, accept;
    const char *what;               /* the call that failed */
    int err;                        /* an stvm error, or -1 outside the VM */
    char why[200];
} side;

/* One byte out or in: 0, 1 at the end of the stream when end_ok, or a negative error
 * (stvm's on a VM's socket, -errno on a descriptor); s->what names the call. */
static int64_t step(side *s, uint8_t *b, bool out, bool end_ok)
{
    int64_t n;
    if (s->vm) {
        s->what = out ? "stvm_socket_send" : "stvm_socket_recv";
        n = out ? stvm_socket_send(s->vm, s->s, b, 1, s->p->timeout_ms)
                : stvm_socket_recv(s->vm, s->s, b, 1, s->p->timeout_ms);
        if (n == STVM_EEOF)
            n = 0;   /* the end of the stream, as a descriptor's recv answers it */
    } else {
        s->what = out ? "send" : "recv";
        do
            n = out ? send(s->fd, b, 1, MSG_NOSIGNAL) : recv(s->fd, b, 1, 0);
        while (n < 0 && errno == EINTR);
        n = n < 0 ? -errno : n;
    }
    return n < 0 ? n : n == 1 ? 0 : end_ok ? 1 : s->vm ? STVM_EEOF : PEER_CLOSED;
}

static int64_t round_trip(side *s, uint8_t seq)
{
    uint8_t in = (uint8_t)~seq;
    int64_t err = step(s, &seq, true, false);
    if (err || (err = step(s, &in, false, false)))
        return err;
    s->what = "the echo (a wrong byte came back)";
    return in == seq ? 0 : s->vm ? STVM_ESTATE : -EPROTO;
}

/* The warm-up, then the timed round trips into *s->c: 0, or the error. */
static int64_t ping_loop(side *s)
{
    const io_params *p = s->p;
    io_counts *c = s->c;
    long long warm = p->round_trips / 10 < WARMUP_MAX ? p->round_trips / 10 : WARMUP_MAX;
    int64_t limit_ns = (int64_t)(p->max_seconds * 1e9), end = bench_mono_ns() + limit_ns / 10;
    uint8_t seq = 0;
    int64_t err = 0;
    for (long long i = 0; i < warm && !err && bench_mono_ns() < end; i++)
        err = round_trip(s, seq++);
    if (err)
        return err;
    io_counts_take(s->vm, c, -1);
    end = bench_mono_ns() + limit_ns;
    while (c->round_trips < p->round_trips && !(c->cut_short = bench_mono_ns() >= end) &&
           !(err = round_trip(s, seq++)))
        c->round_trips++;
    io_counts_take(s->vm, c, 1);
    return err;
}

/* Send back what arrives until the peer closes: 0, or the error. */
static int64_t echo_loop(side *s)
{
    uint8_t b;
    int64_t err;
    while (!(err = step(s, &b, false, true)))
        if ((err = step(s, &b, true, false)))
            return err;
    return err == 1 ? 0 : err;
}

static void side_run(side *s)
{
    int64_t err = 0;
    if (s->vm) {
        s->what = s->accept ? "stvm_socket_accept" : "stvm_tcp_connect";
        err = s->accept ? stvm_socket_accept(s->vm, s->listener, s->p->timeout_ms, &s->s)
                        : stvm_tcp_connect(s->vm, "127.0.0.1", stvm_socket_port(s->listener),
                                           s->p->timeout_ms, &s->s);
    }
    if (!err)
        err = s->ping ? ping_loop(s) : echo_loop(s);
    if (err && !s->err) {
        s->err = s->vm ? (int)err : -1;
        snprintf(s->why, sizeof s->why, "%s%s: %s: %s", s->vm ? "" : "the thread's ",
                 s->ping ? "ping" : "echo", s->what, s->vm ? stvm_err_name((int)err)
                 : err == PEER_CLOSED ? "the peer closed" : strerror((int)-err));
    }
    if (s->vm && s->s)
        stvm_socket_close(s->vm, s->s);
    else if (!s->vm)
        shutdown(s->fd, SHUT_WR);   /* the peer sees the end; io_pingpong closes it */
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

int io_pingpong(io_pair pair, const io_params *p, io_counts *c, char *why, size_t whysize)
{
    *c = (io_counts){0};
    int fd[2] = {-1, -1};
    stvm_vm *vm = NULL;
    stvm_socket *listener = NULL;
    int err = pair == IO_PAIR_OS ? os_connection(&fd[0], &fd[1], why, whysize)
                                 : io_vm_start(p, p->trace, 4, &vm, &listener, why, whysize);
    if (err)
        return err;
    side s[2] = {{.p = p, .c = c, .vm = pair == IO_PAIR_OS ? NULL : vm, .listener = listener,
                  .fd = fd[0], .ping = true, .accept = pair == IO_PAIR_THREAD},
                 {.p = p, .c = c, .vm = pair == IO_PAIR_VM ? vm : NULL, .listener = listener,
                  .fd = fd[1], .accept = true}};
    if (pair == IO_PAIR_THREAD && (s[1].fd = connect_loopback(stvm_socket_port(listener))) < 0) {
        snprintf(why, whysize, "connecting the thread's socket: %s", strerror(errno));
        err = -1;
    }
    pthread_t t[2];
    bool threaded[2] = {false, false};
    for (int i = 1; i >= 0 && !err; i--) {      /* the echo first: the ping talks at once */
        if (s[i].vm && (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, i ? "echo" : "ping",
                                         vm_side, &s[i], NULL)))
            snprintf(why, whysize, "stvm_spawn: %s", stvm_err_name(err));
        else if (!s[i].vm && (err = pthread_create(&t[i], NULL, os_side, &s[i])) != 0) {
            snprintf(why, whysize, "pthread_create: %s", strerror(err));
            err = -1;
        }
        threaded[i] = !s[i].vm && !err;
    }
    if (!err && vm && (err = stvm_run(vm)))
        snprintf(why, whysize, "stvm_run: %s", stvm_err_name(err));
    if (threaded[0])
        pthread_join(t[0], NULL);
    if (threaded[1] && (err || s[0].err))
        shutdown(s[1].fd, SHUT_RDWR);   /* so that the echo thread ends */
    if (threaded[1])
        pthread_join(t[1], NULL);
    if (vm && !err && !s[0].err && !s[1].err)
        err = bench_trace_end(p->trace, vm, why, whysize);
    stvm_vm_free(vm);
    for (int i = 0; i < 2; i++)
        if (s[i].fd >= 0)
            close(s[i].fd);
    const side *failed = err ? NULL : s[0].err ? &s[0] : s[1].err ? &s[1] : NULL;
    if (failed)
        snprintf(why, whysize, "%s", failed->why);
    return failed ? failed->err : err;
}
