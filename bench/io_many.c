/*
 * stvm-bench io: many connections, their two ends in two VMs of two processes, each
 * holding one descriptor per connection, so 10,000 connections fit under a stock hard
 * RLIMIT_NOFILE of 20,000 (the tool never raises a hard limit).
 *  - the server (this process): an accepting process at priority 50 spawns a handler
 *    at 40 per connection, each echoing fixed-size messages through a SocketStream;
 *  - the clients (a forked child, on the same CPU by inheritance): a coordinator at 30
 *    (it runs only when every client is blocked) spawns them at 40 in batches the
 *    listen backlog holds. Each connects, opens a stream, makes one exchange (the
 *    warm-up touches buffers and stacks as traffic does) and blocks for a greeting.
 * With every process of both VMs blocked in a read, each process reads its RSS and
 * bytes_live (the child reports through a socket pair); then the server greets every
 * stream and each client exchanges `messages` echoes.
 */
#include "io.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define BATCH 128                   /* clients spawned before waiting for them */
#define REPORT_WAIT_MS 100          /* the server looks for the child's report this often */

typedef struct many many;

/* One end of a connection: a handler's argument, or a client's. */
typedef struct conn_end {
    many *m;
    stvm_socket *s;
    stvm_stream *st;
} conn_end;

/* What the client process tells the server process: one message on the socket pair each. */
enum { REPORT_READY = 1, REPORT_DONE = 2, REPORT_FAILED = 3 };
typedef struct client_report {
    int kind;
    int err;
    io_many_side side;              /* REPORT_READY: the client process's memory */
    io_counts counts;               /* REPORT_DONE: its share of the exchange */
    char why[200];                  /* REPORT_FAILED */
} client_report;

/* One process's side: the server's or the clients'. */
struct many {
    const io_params *p;
    io_many_result *r;
    stvm_socket *listener;          /* server */
    int port;
    conn_end *ends;                 /* [connections], allocated and touched beforehand */
    long warm, done, spawned;
    stvm_semaphore *all_done;       /* the last end to finish, or a failure, signals it */
    int report_fd;                  /* the socket pair's end: the server reads reports */
    bool server;
    int err;
    char why[200];
};

static void fail(stvm_vm *vm, many *m, const char *who, const char *what, int64_t err)
{
    if (m->err)
        return;
    m->err = (int)err;
    snprintf(m->why, sizeof m->why, "%s: %s: %s", who, what, stvm_err_name((int)err));
    stvm_semaphore_signal(vm, m->all_done);
}

/* Read exactly len bytes: 0, 1 at the end of the stream before any when end_ok (else
 * STVM_EEOF), or an error. */
static int64_t read_full(stvm_vm *vm, stvm_stream *st, uint8_t *buf, size_t len, bool end_ok)
{
    for (size_t got = 0; got < len;) {
        int64_t n = stvm_stream_read(vm, st, buf + got, len - got);
        if (n == STVM_EEOF)
            return got == 0 && end_ok ? 1 : STVM_EEOF;
        if (n < 0)
            return n;
        got += (size_t)n;
    }
    return 0;
}

static int64_t send_message(stvm_vm *vm, stvm_stream *st, const uint8_t *buf, size_t len)
{
    int err = stvm_stream_write(vm, st, buf, len);
    return err ? err : stvm_stream_flush(vm, st);
}

/* An end has finished: its failure (err < 0) noted, its socket closed (its stream goes
 * with it); the last end signals all_done. */
static void end_done(stvm_vm *vm, conn_end *e, const char *who, const char *what, int64_t err)
{
    many *m = e->m;
    if (err < 0)
        fail(vm, m, who, what, err);
    if (e->s)
        stvm_socket_close(vm, e->s);
    e->s = NULL;
    e->st = NULL;
    if (++m->done == m->p->connections)
        stvm_semaphore_signal(vm, m->all_done);
}

/* ---- the server ----------------------------------------------------------------------------- */

static void handler(stvm_vm *vm, void *arg)
{
    conn_end *e = arg;
    size_t len = (size_t)e->m->p->message_bytes;
    uint8_t buf[IO_MAX_MESSAGE];   /* small: a stack as a real handler's */
    const char *what = "stvm_stream_open";
    int64_t err = stvm_stream_open(vm, e->s, e->m->p->timeout_ms, &e->st);
    for (bool warm = false; !err; warm = true) {
        what = "echo";
        if ((err = read_full(vm, e->st, buf, len, true)) ||
            (err = send_message(vm, e->st, buf, len)))
            break;
        e->m->warm += !warm;
    }
    end_done(vm, e, "handler", what, err);
}

static void acceptor(stvm_vm *vm, void *arg)
{
    many *m = arg;
    for (long i = 0; i < m->p->connections && !m->err; i++) {
        conn_end *e = &m->ends[i];
        int err = stvm_socket_accept(vm, m->listener, m->p->timeout_ms, &e->s);
        if (!err && (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "handler", handler,
                                      e, NULL)))
            stvm_socket_close(vm, e->s);
        if (err) {
            fail(vm, m, "acceptor", "stvm_socket_accept or stvm_spawn", err);
            return;
        }
    }
}

/* The next report of the client process, waiting for it in the VM (other processes run
 * meanwhile). 0, or the failure noted. */
static int await_report(stvm_vm *vm, many *m, int kind, client_report *rep)
{
    for (;;) {
        int ready = stvm_fd_wait(vm, m->report_fd, STVM_IO_READ, REPORT_WAIT_MS);
        if (m->err)
            return m->err;
        if (ready == STVM_ETIMEDOUT)
            continue;
        ssize_t n = ready < 0 ? -1 : read(m->report_fd, rep, sizeof *rep);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == (ssize_t)sizeof *rep && rep->kind == kind)
            return 0;
        if (n == (ssize_t)sizeof *rep && rep->kind == REPORT_FAILED) {
            m->err = rep->err ? rep->err : STVM_ESYS;
            snprintf(m->why, sizeof m->why, "the client process: %.170s", rep->why);
        } else {
            fail(vm, m, "server", "the client process's report (it ended?)", STVM_ESYS);
        }
        return m->err;
    }
}

/* RSS and bytes_live into *side: before (after malloc_trim, so that what earlier VMs
 * freed is not counted) or after the connections. */
static void measure_side(stvm_vm *vm, io_many_side *side, bool after)
{
    stvm_stats st;
    if (!after)
        malloc_trim(0);
    stvm_vm_get_stats(vm, &st);
    *(after ? &side->live_after : &side->live_before) = st.bytes_live;
    *(after ? &side->rss_after : &side->rss_before) = bench_rss_bytes();
}

static void server_coordinator(stvm_vm *vm, void *arg)
{
    many *m = arg;
    io_many_result *r = m->r;
    measure_side(vm, &r->server, false);
    int err = stvm_spawn(vm, STVM_PRIORITY_USER_INTERRUPT, "acceptor", acceptor, m, NULL);
    if (err)
        fail(vm, m, "server", "stvm_spawn", err);
    client_report rep;
    if (m->err || await_report(vm, m, REPORT_READY, &rep))
        goto out;
    r->client = rep.side;
    while (!m->err && m->warm < m->p->connections)
        stvm_delay_wait_ms(vm, 1);
    /* Every connection open, every process of both VMs blocked in a read. */
    measure_side(vm, &r->server, true);
    r->connected = m->p->connections;
    /* The timed part: the greetings, then every handler until its client closes. */
    io_counts_take(vm, &r->counts, -1);
    const uint8_t greeting = 'g';
    for (long i = 0; i < m->p->connections && !m->err; i++)
        if ((err = (int)send_message(vm, m->ends[i].st, &greeting, 1)))
            fail(vm, m, "server", "the greeting", err);
    if (!m->err)
        stvm_semaphore_wait(vm, m->all_done);
    io_counts_take(vm, &r->counts, 1);
    if (!m->err && !await_report(vm, m, REPORT_DONE, &rep))
        io_counts_add(&r->counts, &rep.counts, 1);
    r->counts.round_trips = (long long)m->p->connections * m->p->messages;
out:
    if (m->err)
        stvm_stop(vm);
}

/* ---- the clients (the child process) ----------------------------------------------------- */

/* Connect, warm up, block in a read until the greeting, then exchange. */
static void client(stvm_vm *vm, void *arg)
{
    conn_end *e = arg;
    many *m = e->m;
    size_t len = (size_t)m->p->message_bytes;
    uint8_t out[IO_MAX_MESSAGE], in[IO_MAX_MESSAGE];
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)(i + (size_t)(e - m->ends));
    const char *what = "stvm_tcp_connect";
    int64_t err = stvm_tcp_connect(vm, "127.0.0.1", m->port, m->p->timeout_ms, &e->s);
    if (!err) {
        what = "stvm_stream_open";
        err = stvm_stream_open(vm, e->s, m->p->timeout_ms, &e->st);
    }
    for (int k = -1; k < m->p->messages && !err; k++) {   /* k = -1: the warm-up */
        what = k < 0 ? "the warm-up exchange" : "an exchange";
        out[0] = (uint8_t)k;
        if ((err = send_message(vm, e->st, out, len)) ||
            (err = read_full(vm, e->st, in, len, false)))
            break;
        what = "the echo (wrong bytes came back)";
        if (memcmp(in, out, len) != 0) {
            err = STVM_ESTATE;
        } else if (k < 0) {
            what = "the greeting";
            m->warm++;
            err = read_full(vm, e->st, in, 1, false);
        }
    }
    end_done(vm, e, "client", what, err);
}

/* One message to the server (a lost one shows there as the child's end). */
static void report(const many *m, const client_report *rep)
{
    if (write(m->report_fd, rep, sizeof *rep) != (ssize_t)sizeof *rep)
        return;
}

/* Spawns the clients in batches the listen backlog holds, reports the memory with all
 * of them blocked for the greeting, then their share of the exchange. */
static void client_coordinator(stvm_vm *vm, void *arg)
{
    many *m = arg;
    client_report rep = {.kind = REPORT_READY};
    measure_side(vm, &rep.side, false);
    for (long n = m->p->connections; m->spawned < n && !m->err;) {
        int err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "client", client,
                             &m->ends[m->spawned], NULL);
        if (err)
            fail(vm, m, "clients", "stvm_spawn", err);
        else if (++m->spawned % BATCH == 0 || m->spawned == n)
            while (!m->err && m->warm < m->spawned)
                stvm_delay_wait_ms(vm, 1);
    }
    if (!m->err) {
        measure_side(vm, &rep.side, true);
        io_counts_take(vm, &rep.counts, -1);
        report(m, &rep);
        stvm_semaphore_wait(vm, m->all_done);
    }
    if (m->err) {
        stvm_stop(vm);
        return;
    }
    rep.kind = REPORT_DONE;
    io_counts_take(vm, &rep.counts, 1);
    rep.counts.wall_ns = 0;         /* the exchange's wall time is the server's */
    report(m, &rep);
}

/* A process's VM with its all_done semaphore, m's ends pointing at m; the server's
 * listens, is traced and tells the child its port. Runs the coordinator at priority 30:
 * 0, or an error and why. */
static int run_vm(many *m, void (*coordinator)(stvm_vm *, void *), char *why, size_t whysize)
{
    stvm_vm *vm;
    const bench_trace *trace = m->server ? m->p->trace : NULL;
    for (long i = 0; i < m->p->connections; i++)
        m->ends[i].m = m;
    int backlog = m->p->connections < 65535 ? (int)m->p->connections : 65535;
    int err = io_vm_start(m->p, trace, backlog, &vm, m->server ? &m->listener : NULL, why,
                          whysize);
    if (err)
        return err;
    const char *what = "stvm_semaphore_new";
    if (!(err = stvm_semaphore_new(vm, &m->all_done)) && m->server) {
        m->port = stvm_socket_port(m->listener);
        what = "telling the client process the port";
        if (write(m->report_fd, &m->port, sizeof m->port) != (ssize_t)sizeof m->port)
            err = STVM_ESYS;
    }
    if (!err) {
        what = "stvm_spawn";
        err = stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "coordinator", coordinator, m, NULL);
    }
    if (!err) {
        what = "stvm_run";
        err = stvm_run(vm);
    }
    if (m->err) {
        snprintf(why, whysize, "%s", m->why);
        err = m->err;
    } else if (err) {
        snprintf(why, whysize, "%s: %s", what, stvm_err_name(err));
    } else {
        err = bench_trace_end(trace, vm, why, whysize);
    }
    stvm_vm_free(vm);               /* closes what is still open */
    return err;
}

/* The child: wait for the server's port, run the clients, report a failure. */
static void child_main(const io_params *p, conn_end *ends, int fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);   /* never outlive the tool (its watchdog) */
    many m = {.p = p, .ends = ends, .report_fd = fd};
    if (read(fd, &m.port, sizeof m.port) != (ssize_t)sizeof m.port)
        _exit(BENCH_EXIT_FAIL);     /* the server failed before it listened */
    if (run_vm(&m, client_coordinator, m.why, sizeof m.why)) {
        client_report rep = {.kind = REPORT_FAILED, .err = m.err};
        snprintf(rep.why, sizeof rep.why, "%s", m.why);
        report(&m, &rep);
        _exit(BENCH_EXIT_FAIL);
    }
    _exit(BENCH_EXIT_OK);
}

int io_many_run(const io_params *p, io_many_result *r, char *why, size_t whysize)
{
    *r = (io_many_result){0};
    size_t n = (size_t)p->connections;
    conn_end *ends = calloc(n, sizeof *ends);   /* touched now, so not counted as a VM's */
    int sv[2];                                  /* messages keep their bounds */
    if (!ends || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, whysize, "out of memory or descriptors for %zu connections", n);
        free(ends);
        return STVM_ENOMEM;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child == 0) {
        close(sv[0]);
        child_main(p, ends, sv[1]);
    }
    close(sv[1]);
    many m = {.p = p, .r = r, .ends = ends, .report_fd = sv[0], .server = true};
    int err = child < 0 ? STVM_ESYS : run_vm(&m, server_coordinator, why, whysize);
    if (child < 0)
        snprintf(why, whysize, "fork: %s", strerror(errno));
    close(sv[0]);
    if (child > 0) {
        if (err)
            kill(child, SIGKILL);   /* its clients would wait for greetings forever */
        waitpid(child, NULL, 0);
    }
    free(ends);
    return err;
}
