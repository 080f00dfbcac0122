/*
 * Sockets through the public API, over loopback on the real clock: echo over IPv4 and
 * IPv6, many connections, streams and their 4 KiB buffer, sends that must wait, the
 * peer's close and reset, refusal, timeouts, bad input, termination in a wait, spurious
 * signals, stvm_vm_free with sockets open; writing after the peer's FIN (a real C peer,
 * tests/bsd_peer.h), this side's shutdown, the system's errors as their own codes, and
 * addresses as text (host names: test_socket_names.c). Nothing sleeps on the wall clock:
 * the timeouts that must run out are short, those that must not are long (10 s).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "helpers.h"

#include "bsd_peer.h"

#define LONG 10000   /* ms: a timeout that must never run out */

typedef struct net {
    stvm_vm *vm;
    int bad_line;
    const char *host;
    stvm_socket *listener;
    int port;
    int clients;             /* connections the server takes */
    char got[8][64];         /* what each client got back */
    int64_t rc[8];
    stvm_socket *shared;     /* a socket several processes use */
    stvm_semaphore *go;
    size_t big;              /* bytes of the large transfer */
    uint64_t sum_sent, sum_got;
} net;

static net *net_make(const char *host)
{
    static net n;
    memset(&n, 0, sizeof n);
    n.vm = vm_make(NULL);
    n.host = host;
    cr_assert_eq(stvm_tcp_listen(n.vm, host, 0, 16, &n.listener), STVM_OK);
    n.port = stvm_socket_port(n.listener);
    cr_assert_gt(n.port, 0);
    return &n;
}

/* ---- echo --------------------------------------------------------------------------- */

static void echo_one(stvm_vm *vm, void *arg)
{
    net *n = ((void **)arg)[0];
    stvm_socket *c = ((void **)arg)[1];
    free(arg);
    char buf[256];
    int64_t r;
    while ((r = stvm_socket_recv(vm, c, buf, sizeof buf, LONG)) > 0)
        GCHECK(n, stvm_socket_send(vm, c, buf, (size_t)r, LONG) == r);
    GCHECK(n, r == STVM_EEOF);
    GCHECK(n, stvm_socket_close(vm, c) == STVM_OK);
}

static void echo_server(stvm_vm *vm, void *arg)
{
    net *n = arg;
    for (int i = 0; i < n->clients; i++) {
        stvm_socket *c = NULL;
        GCHECK(n, stvm_socket_accept(vm, n->listener, LONG, &c) == STVM_OK);
        if (!c)
            return;
        void **pair = malloc(2 * sizeof *pair);
        pair[0] = n;
        pair[1] = c;
        GCHECK(n, stvm_spawn(vm, 40, "echo", echo_one, pair, NULL) == STVM_OK);
    }
}

typedef struct client_arg {
    net *n;
    int i;
} client_arg;

static void echo_client(stvm_vm *vm, void *arg)
{
    client_arg *a = arg;
    net *n = a->n;
    stvm_socket *c = NULL;
    GCHECK(n, stvm_tcp_connect(vm, n->host, n->port, LONG, &c) == STVM_OK);
    if (!c)
        return;
    char msg[32];
    int len = snprintf(msg, sizeof msg, "hello from %d", a->i);
    GCHECK(n, stvm_socket_send(vm, c, msg, (size_t)len, LONG) == len);
    int got = 0;
    while (got < len) {
        int64_t r = stvm_socket_recv(vm, c, n->got[a->i] + got, (size_t)(len - got), LONG);
        GCHECK(n, r > 0);
        if (r <= 0)
            break;
        got += (int)r;
    }
    GCHECK(n, stvm_socket_close(vm, c) == STVM_OK);
}

static void echo_with_clients(const char *host, int clients)
{
    net *n = net_make(host);
    n->clients = clients;
    client_arg args[8];
    spawn(n->vm, 40, "server", echo_server, n);
    for (int i = 0; i < clients; i++) {
        args[i] = (client_arg){n, i};
        spawn(n->vm, 40, "client", echo_client, &args[i]);
    }
    RUN_OK_GREEN(n);
    for (int i = 0; i < clients; i++) {
        char want[32];
        snprintf(want, sizeof want, "hello from %d", i);
        cr_assert_str_eq(n->got[i], want);
    }
    stvm_stats st = stats_of(n->vm);
    cr_assert_gt(st.socket_reads_blocked, 0, "somebody waited for data");
    cr_assert_gt(st.timed_waits, 0, "the waits went through DelayWaitTimeout");
    cr_assert_eq(stvm_socket_close(n->vm, n->listener), STVM_OK);
    SCENARIO_DONE(n);
}

Test(socket, echo_over_ipv4_loopback) { echo_with_clients("127.0.0.1", 1); }
Test(socket, echo_over_ipv6_loopback) { echo_with_clients("::1", 1); }
Test(socket, echo_through_localhost) { echo_with_clients("localhost", 1); }
Test(socket, many_processes_each_with_a_connection) { echo_with_clients("127.0.0.1", 8); }

/* ---- streams -------------------------------------------------------------------------- */

static void stream_server(stvm_vm *vm, void *arg)
{
    net *n = arg;
    stvm_socket *c = NULL;
    GCHECK(n, stvm_socket_accept(vm, n->listener, LONG, &c) == STVM_OK);
    if (!c)
        return;
    /* A request line, then an answer in pieces: two lines and a body of n->big bytes. */
    stvm_stream *st = NULL;
    GCHECK(n, stvm_stream_open(vm, c, LONG, &st) == STVM_OK);
    char line[64];
    GCHECK(n, stvm_stream_read_line(vm, st, line, sizeof line) == 3);
    GCHECK(n, strcmp(line, "GET") == 0);
    GCHECK(n, stvm_stream_write(vm, st, "HTTP/1.1 200 OK\r\n", 17) == STVM_OK);
    GCHECK(n, stvm_stream_write(vm, st, "X: y\n\r\n", 7) == STVM_OK);
    uint8_t chunk[1000];
    for (size_t sent = 0; sent < n->big;) {
        size_t k = n->big - sent < sizeof chunk ? n->big - sent : sizeof chunk;
        for (size_t j = 0; j < k; j++) {
            chunk[j] = (uint8_t)(sent + j);
            n->sum_sent += chunk[j];
        }
        GCHECK(n, stvm_stream_write(vm, st, chunk, k) == STVM_OK);
        sent += k;
        if (sent % 5000 == 0)
            GCHECK(n, stvm_stream_flush(vm, st) == STVM_OK);
        stvm_yield(vm);
    }
    GCHECK(n, stvm_stream_flush(vm, st) == STVM_OK);
    GCHECK(n, stvm_stream_close(vm, st) == STVM_OK);
    GCHECK(n, stvm_socket_close(vm, c) == STVM_OK);
}

static void stream_client(stvm_vm *vm, void *arg)
{
    net *n = arg;
    stvm_socket *c = NULL;
    GCHECK(n, stvm_tcp_connect(vm, n->host, n->port, LONG, &c) == STVM_OK);
    if (!c)
        return;
    stvm_stream *st = NULL;
    GCHECK(n, stvm_stream_open(vm, c, LONG, &st) == STVM_OK);
    GCHECK(n, stvm_stream_open(vm, c, LONG, &st) == STVM_ESTATE);
    GCHECK(n, stvm_stream_write(vm, st, "GET\r\n", 5) == STVM_OK);
    GCHECK(n, stvm_stream_flush(vm, st) == STVM_OK);
    char line[64];
    GCHECK(n, stvm_stream_read_line(vm, st, line, sizeof line) == 15);
    GCHECK(n, strcmp(line, "HTTP/1.1 200 OK") == 0);
    GCHECK(n, stvm_stream_read_line(vm, st, line, sizeof line) == 4);
    GCHECK(n, stvm_stream_read_line(vm, st, line, sizeof line) == 0);
    size_t total = 0;
    uint8_t buf[700];   /* partial reads: smaller than the 4 KiB buffer */
    int64_t r;
    while ((r = stvm_stream_read(vm, st, buf, sizeof buf)) > 0) {
        GCHECK(n, r <= (int64_t)sizeof buf);
        for (int64_t j = 0; j < r; j++)
            n->sum_got += buf[j];
        total += (size_t)r;
    }
    GCHECK(n, r == STVM_EEOF);
    GCHECK(n, total == n->big);
    GCHECK(n, stvm_stream_read_line(vm, st, line, sizeof line) == STVM_EEOF);
    stvm_stream_stats ss;
    GCHECK(n, stvm_stream_get_stats(st, &ss) == STVM_OK);
    GCHECK(n, ss.bytes_in == n->big + 15 + 2 + 4 + 1 + 2);
    GCHECK(n, ss.fills >= n->big / 4096);
    GCHECK(n, ss.reads_blocked >= 1 && ss.reads_blocked <= ss.fills + 1);
    GCHECK(n, ss.flushes == 1 && ss.bytes_out == 5);
    GCHECK(n, stvm_socket_close(vm, c) == STVM_OK);   /* closes its stream too */
}

Test(socket, a_stream_reads_lines_and_a_body_through_its_4k_buffer)
{
    net *n = net_make("127.0.0.1");
    n->big = 50000;
    spawn(n->vm, 40, "server", stream_server, n);
    spawn(n->vm, 40, "client", stream_client, n);
    RUN_OK_GREEN(n);
    cr_assert_eq(n->sum_got, n->sum_sent);
    SCENARIO_DONE(n);
}

/* ---- stream buffers lent by the VM's pool ------------------------------------------------ */

/* A stream holds a 4 KiB read buffer only while it has unread bytes and a write buffer
 * only while it has unsent ones: a reader blocked with everything read and sent holds
 * none (an idle connection costs no buffer). */
typedef struct lent {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener, *c, *sv;
    stvm_stream *cs, *ss;
    int port;
    uint64_t held[8];
    int nheld;
    char got[8];
} lent;

static bool blocked_soon(stvm_vm *vm, stvm_process *p);

/* A VM with a listener on 127.0.0.1 (port 0: the system picks). */
static stvm_vm *listening_vm(int backlog, stvm_socket **listener, int *port)
{
    stvm_vm *vm = vm_make(NULL);
    cr_assert_eq(stvm_tcp_listen(vm, "127.0.0.1", 0, backlog, listener), STVM_OK);
    *port = stvm_socket_port(*listener);
    return vm;
}

static uint64_t held(stvm_stream *st)
{
    stvm_stream_stats s;
    return stvm_stream_get_stats(st, &s) == STVM_OK ? s.buffer_bytes : UINT64_MAX;
}

static void blocked_stream_reader(stvm_vm *vm, void *arg)
{
    lent *l = arg;
    GCHECK(l, stvm_stream_read(vm, l->ss, l->got, 3) == 3);
}

static void lender(stvm_vm *vm, void *arg)
{
    lent *l = arg;
    GCHECK(l, stvm_tcp_connect(vm, "127.0.0.1", l->port, LONG, &l->c) == STVM_OK);
    GCHECK(l, stvm_socket_accept(vm, l->listener, LONG, &l->sv) == STVM_OK);
    GCHECK(l, stvm_stream_open(vm, l->c, LONG, &l->cs) == STVM_OK);
    GCHECK(l, stvm_stream_open(vm, l->sv, LONG, &l->ss) == STVM_OK);
    if (!l->cs || !l->ss)
        return;
    l->held[l->nheld++] = held(l->cs) + held(l->ss);                /* 0: just opened */
    GCHECK(l, stvm_stream_write(vm, l->cs, "hello", 5) == STVM_OK);
    l->held[l->nheld++] = held(l->cs);                              /* 4096: unsent */
    GCHECK(l, stvm_stream_flush(vm, l->cs) == STVM_OK);
    l->held[l->nheld++] = held(l->cs);                              /* 0: all sent */
    char b[8];
    GCHECK(l, stvm_stream_read(vm, l->ss, b, 2) == 2);
    l->held[l->nheld++] = held(l->ss);                              /* 4096: 3 unread */
    GCHECK(l, stvm_stream_read(vm, l->ss, b, 8) == 3);
    l->held[l->nheld++] = held(l->ss);                              /* 0: all read */
    stvm_process *r = NULL;
    GCHECK(l, stvm_spawn(vm, 40, "reader", blocked_stream_reader, l, &r) == STVM_OK);
    GCHECK(l, blocked_soon(vm, r));
    l->held[l->nheld++] = held(l->ss);                              /* 0: blocked, empty */
    GCHECK(l, stvm_stream_write(vm, l->cs, "abc", 3) == STVM_OK);
    GCHECK(l, stvm_stream_flush(vm, l->cs) == STVM_OK);
    GCHECK(l, stvm_process_join(vm, r, LONG) == STVM_OK);
    l->held[l->nheld++] = held(l->ss);                              /* 0: read it all */
    GCHECK(l, stvm_socket_close(vm, l->c) == STVM_OK);
    GCHECK(l, stvm_socket_close(vm, l->sv) == STVM_OK);
}

Test(socket, a_stream_holds_its_buffers_only_while_they_hold_bytes)
{
    static lent l;
    memset(&l, 0, sizeof l);
    l.vm = listening_vm(4, &l.listener, &l.port);
    spawn(l.vm, 40, "lender", lender, &l);
    RUN_OK_GREEN(&l);
    static const uint64_t want[] = {0, 4096, 0, 4096, 0, 0, 0};
    cr_assert_eq(l.nheld, 7);
    for (int i = 0; i < 7; i++)
        cr_assert_eq(l.held[i], want[i], "step %d: %llu bytes held", i,
                     (unsigned long long)l.held[i]);
    cr_assert_arr_eq(l.got, "abc", 3);
    cr_assert_eq(stvm_socket_close(l.vm, l.listener), STVM_OK);
    SCENARIO_DONE(&l);
}

/* Buffers given back are kept for the next stream, at most 64 of them (256 KiB): after
 * 200 streams that each held a write buffer are closed, the VM keeps no more. */
enum { MANY_STREAMS = 200, POOL_MAX = 64 };

typedef struct pooled {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener, *c[MANY_STREAMS], *sv[MANY_STREAMS];
    int port;
    uint64_t live_before, live_holding, live_after;
} pooled;

static uint64_t live_bytes(stvm_vm *vm)
{
    stvm_stats s;
    stvm_vm_get_stats(vm, &s);
    return s.bytes_live;
}

static void many_streams(stvm_vm *vm, void *arg)
{
    pooled *p = arg;
    for (int i = 0; i < MANY_STREAMS; i++) {
        GCHECK(p, stvm_tcp_connect(vm, "127.0.0.1", p->port, LONG, &p->c[i]) == STVM_OK);
        GCHECK(p, stvm_socket_accept(vm, p->listener, LONG, &p->sv[i]) == STVM_OK);
    }
    p->live_before = live_bytes(vm);
    stvm_stream *st[MANY_STREAMS];
    for (int i = 0; i < MANY_STREAMS && !p->bad_line; i++) {
        GCHECK(p, stvm_stream_open(vm, p->c[i], LONG, &st[i]) == STVM_OK);
        GCHECK(p, stvm_stream_write(vm, st[i], "unsent", 6) == STVM_OK);
    }
    p->live_holding = live_bytes(vm);
    for (int i = 0; i < MANY_STREAMS; i++) {
        stvm_socket_close(vm, p->c[i]);   /* its stream (and what it held) goes too */
        stvm_socket_close(vm, p->sv[i]);
    }
    p->live_after = live_bytes(vm);
}

Test(socket, the_pool_keeps_at_most_64_buffers_once_streams_are_gone, .timeout = 60)
{
    static pooled p;
    memset(&p, 0, sizeof p);
    p.vm = listening_vm(256, &p.listener, &p.port);
    spawn(p.vm, 40, "streams", many_streams, &p);
    RUN_OK_GREEN(&p);
    cr_assert_geq(p.live_holding - p.live_before, (uint64_t)MANY_STREAMS * 4096,
                  "each stream held a write buffer");
    /* The sockets' own objects are gone too, so only the pool can be left above. */
    cr_assert_leq(p.live_after, p.live_before + (uint64_t)POOL_MAX * (4096 + 64),
                  "%llu bytes left over", (unsigned long long)(p.live_after - p.live_before));
    cr_assert_eq(stvm_socket_close(p.vm, p.listener), STVM_OK);
    SCENARIO_DONE(&p);
}

/* ---- large sends ------------------------------------------------------------------------ */

static void slow_reader(stvm_vm *vm, void *arg)
{
    net *n = arg;
    stvm_socket *c = NULL;
    GCHECK(n, stvm_socket_accept(vm, n->listener, LONG, &c) == STVM_OK);
    if (!c)
        return;
    uint8_t buf[3000];
    int64_t r;
    size_t total = 0;
    while ((r = stvm_socket_recv(vm, c, buf, sizeof buf, LONG)) > 0) {
        for (int64_t j = 0; j < r; j++)
            n->sum_got += buf[j];
        total += (size_t)r;
        stvm_yield(vm);
    }
    GCHECK(n, r == STVM_EEOF && total == n->big);
    stvm_socket_close(vm, c);
}

static void big_sender(stvm_vm *vm, void *arg)
{
    net *n = arg;
    stvm_socket *c = NULL;
    GCHECK(n, stvm_tcp_connect(vm, n->host, n->port, LONG, &c) == STVM_OK);
    if (!c)
        return;
    uint8_t *data = malloc(n->big);
    for (size_t j = 0; j < n->big; j++) {
        data[j] = (uint8_t)(j * 7 + (j >> 9));
        n->sum_sent += data[j];
    }
    GCHECK(n, stvm_socket_send(vm, c, data, n->big, LONG) == (int64_t)n->big);
    free(data);
    stvm_socket_close(vm, c);
}

Test(socket, a_large_send_waits_for_the_peer_to_read)
{
    net *n = net_make("127.0.0.1");
    n->big = 8u << 20;   /* far more than both kernels' buffers hold */
    spawn(n->vm, 40, "reader", slow_reader, n);
    spawn(n->vm, 40, "sender", big_sender, n);
    RUN_OK_GREEN(n);
    cr_assert_eq(n->sum_got, n->sum_sent);
    SCENARIO_DONE(n);
}

/* ---- the peer goes away ------------------------------------------------------------------ */

typedef struct ends {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener;
    int port;
    bool reset;              /* the server resets instead of closing */
    int64_t first, second, send_rc;
} ends;

static void closing_server(stvm_vm *vm, void *arg)
{
    ends *e = arg;
    stvm_socket *c = NULL;
    GCHECK(e, stvm_socket_accept(vm, e->listener, LONG, &c) == STVM_OK);
    if (!c)
        return;
    if (e->reset) {
        /* Closing with unread data makes the kernel reset the connection. */
        char b;
        GCHECK(e, stvm_socket_recv(vm, c, &b, 1, LONG) == 1);
    }
    GCHECK(e, stvm_socket_close(vm, c) == STVM_OK);
}

static void waiting_client(stvm_vm *vm, void *arg)
{
    ends *e = arg;
    stvm_socket *c = NULL;
    GCHECK(e, stvm_tcp_connect(vm, "127.0.0.1", e->port, LONG, &c) == STVM_OK);
    if (!c)
        return;
    if (e->reset)
        GCHECK(e, stvm_socket_send(vm, c, "ab", 2, LONG) == 2);
    char buf[16];
    e->first = stvm_socket_recv(vm, c, buf, sizeof buf, LONG);
    e->second = stvm_socket_recv(vm, c, buf, sizeof buf, LONG);
    static char block[65536];
    int64_t r = 0;
    for (int i = 0; i < 64 && r >= 0; i++)
        r = stvm_socket_send(vm, c, block, sizeof block, LONG);
    e->send_rc = r;
    stvm_socket_close(vm, c);
}

static void peer_goes(bool reset, int64_t want)
{
    ends e = {.vm = vm_make(NULL), .reset = reset};
    cr_assert_eq(stvm_tcp_listen(e.vm, "127.0.0.1", 0, 4, &e.listener), STVM_OK);
    e.port = stvm_socket_port(e.listener);
    spawn(e.vm, 40, "server", closing_server, &e);
    spawn(e.vm, 40, "client", waiting_client, &e);
    RUN_OK_GREEN(&e);
    cr_assert_eq(e.first, want, "first recv: %lld", (long long)e.first);
    cr_assert_eq(e.second, want, "second recv: %lld", (long long)e.second);
    /* The peer has closed both directions: the first send may go out, then its reset
     * comes back (EPIPE when it finds the connection half-closed, as Linux answers it,
     * ECONNRESET when it finds it open). */
    cr_assert(e.send_rc == STVM_EPIPE || e.send_rc == STVM_ECONNRESET,
              "send to a peer that has gone: %s", stvm_err_name((int)e.send_rc));
    SCENARIO_DONE(&e);
}

Test(socket, recv_answers_eof_every_time_when_the_peer_closes) { peer_goes(false, STVM_EEOF); }
Test(socket, recv_answers_connreset_every_time_when_the_peer_resets)
{
    peer_goes(true, STVM_ECONNRESET);
}

/* ---- refusal and timeouts ---------------------------------------------------------------- */

typedef struct times {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener;
    int port, dead_port;
    int refused, accept_rc, connect_timeouts;
    int64_t recv_rc, recv0_rc;
} times;

static void timeouts(stvm_vm *vm, void *arg)
{
    times *t = arg;
    stvm_socket *c = NULL;
    t->refused = stvm_tcp_connect(vm, "127.0.0.1", t->dead_port, LONG, &c);
    t->accept_rc = stvm_socket_accept(vm, t->listener, 30, &c);
    /* A connection nobody accepts: the kernel completes it (backlog), no data comes. */
    stvm_socket *d = NULL;
    GCHECK(t, stvm_tcp_connect(vm, "127.0.0.1", t->port, LONG, &d) == STVM_OK);
    if (!d)
        return;
    char b;
    t->recv_rc = stvm_socket_recv(vm, d, &b, 1, 30);
    t->recv0_rc = stvm_socket_recv(vm, d, &b, 1, 0);
    /* Once the backlog is full, connections are not answered: connect times out. */
    stvm_socket *more[8] = {0};
    for (int i = 0; i < 8; i++)
        if (stvm_tcp_connect(vm, "127.0.0.1", t->port, 100, &more[i]) == STVM_ETIMEDOUT)
            t->connect_timeouts++;
    for (int i = 0; i < 8; i++)
        if (more[i])
            stvm_socket_close(vm, more[i]);
    stvm_socket_close(vm, d);
    /* Nothing stays armed on the listener once nobody waits on it. */
    GCHECK(t, stvm_fd_wait(vm, stvm_socket_fd(t->listener), STVM_IO_READ, 0) != STVM_EWAITING);
}

Test(socket, refusal_and_the_timeouts_of_accept_connect_and_recv)
{
    times t = {.vm = vm_make(NULL)};
    stvm_socket *dead;
    cr_assert_eq(stvm_tcp_listen(t.vm, "127.0.0.1", 0, 1, &dead), STVM_OK);
    t.dead_port = stvm_socket_port(dead);
    cr_assert_eq(stvm_socket_close(t.vm, dead), STVM_OK);
    cr_assert_eq(stvm_tcp_listen(t.vm, "127.0.0.1", 0, 1, &t.listener), STVM_OK);
    t.port = stvm_socket_port(t.listener);
    stvm_stats before = stats_of(t.vm);
    spawn(t.vm, 40, "timeouts", timeouts, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.refused, STVM_ECONNREFUSED);
    cr_assert_eq(t.accept_rc, STVM_ETIMEDOUT);
    cr_assert_eq(t.recv_rc, STVM_ETIMEDOUT);
    cr_assert_eq(t.recv0_rc, STVM_ETIMEDOUT);
    cr_assert_gt(t.connect_timeouts, 0);
    stvm_stats after = stats_of(t.vm);
    cr_assert_gt(after.timed_waits, before.timed_waits + 2);
    cr_assert_gt(after.delays_unscheduled + after.delays_expired, 0);
    cr_assert_eq(stvm_socket_close(t.vm, t.listener), STVM_OK);
    SCENARIO_DONE(&t);
}

/* ---- bad input ----------------------------------------------------------------------------- */

typedef struct misuse {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener, *conn;
    int port;
    int busy_rc;
    bool reader_done;
} misuse;

static void blocked_reader(stvm_vm *vm, void *arg)
{
    misuse *m = arg;
    char b;
    GCHECK(m, stvm_socket_recv(vm, m->conn, &b, 1, LONG) == 1);
    m->reader_done = true;
}

static void misuser(stvm_vm *vm, void *arg)
{
    misuse *m = arg;
    stvm_socket *s = NULL;
    int foreign = 0;
    stvm_socket *bogus = (stvm_socket *)&foreign;
    char b[4];
    GCHECK(m, stvm_tcp_connect(vm, "no such host", m->port, LONG, &s) == STVM_EINVAL);
    GCHECK(m, stvm_tcp_connect(vm, "127.0.0.1", 0, LONG, &s) == STVM_EINVAL);
    GCHECK(m, stvm_tcp_connect(vm, "127.0.0.1", 70000, LONG, &s) == STVM_EINVAL);
    GCHECK(m, stvm_tcp_connect(vm, "127.0.0.1", m->port, -2, &s) == STVM_EINVAL);
    GCHECK(m, stvm_tcp_connect(vm, NULL, m->port, LONG, &s) == STVM_EINVAL);
    GCHECK(m, stvm_socket_accept(vm, m->conn, LONG, &s) == STVM_EINVAL);
    GCHECK(m, stvm_socket_accept(vm, bogus, LONG, &s) == STVM_EINVAL);
    GCHECK(m, stvm_socket_recv(vm, m->listener, b, 1, LONG) == STVM_EINVAL);
    GCHECK(m, stvm_socket_recv(vm, bogus, b, 1, LONG) == STVM_EINVAL);
    GCHECK(m, stvm_socket_recv(vm, NULL, b, 1, LONG) == STVM_EINVAL);
    GCHECK(m, stvm_socket_recv(vm, m->conn, b, 0, LONG) == STVM_EINVAL);
    GCHECK(m, stvm_socket_recv(vm, m->conn, NULL, 1, LONG) == STVM_EINVAL);
    GCHECK(m, stvm_socket_recv(vm, m->conn, b, (size_t)-1, LONG) == STVM_EINVAL);
    GCHECK(m, stvm_socket_send(vm, m->conn, b, (size_t)-1, LONG) == STVM_EINVAL);
    GCHECK(m, stvm_socket_send(vm, m->conn, NULL, 1, LONG) == STVM_EINVAL);
    GCHECK(m, stvm_socket_send(vm, m->conn, b, 1, -5) == STVM_EINVAL);
    GCHECK(m, stvm_socket_send(vm, m->conn, b, 0, LONG) == 0);
    GCHECK(m, stvm_socket_close(vm, bogus) == STVM_EINVAL);
    /* A second reader on the same socket. */
    GCHECK(m, stvm_spawn(vm, 40, "reader", blocked_reader, m, NULL) == STVM_OK);
    stvm_yield(vm);
    m->busy_rc = (int)stvm_socket_recv(vm, m->conn, b, 1, LONG);
    GCHECK(m, stvm_socket_close(vm, m->conn) == STVM_EINUSE);
    /* The descriptor is the socket's reader's: stvm_fd_wait says so too. */
    GCHECK(m, stvm_fd_wait(vm, stvm_socket_fd(m->conn), STVM_IO_READ, LONG) == STVM_EWAITING);
}

static void feeder(stvm_vm *vm, void *arg)
{
    misuse *m = arg;
    stvm_socket *c = NULL;
    GCHECK(m, stvm_socket_accept(vm, m->listener, LONG, &c) == STVM_OK);
    while (!m->busy_rc)
        stvm_yield(vm);
    GCHECK(m, stvm_socket_send(vm, c, "z", 1, LONG) == 1);
    while (!m->reader_done)
        stvm_yield(vm);
    stvm_socket_close(vm, c);
}

static void connector(stvm_vm *vm, void *arg)
{
    misuse *m = arg;
    GCHECK(m, stvm_tcp_connect(vm, "127.0.0.1", m->port, LONG, &m->conn) == STVM_OK);
    if (m->conn)
        misuser(vm, m);
}

Test(socket, bad_input_gets_a_clear_error_and_changes_nothing)
{
    misuse m = {.vm = vm_make(NULL)};
    stvm_socket *s = NULL;
    cr_assert_eq(stvm_tcp_listen(NULL, "127.0.0.1", 0, 1, &s), STVM_EINVAL);
    cr_assert_eq(stvm_tcp_listen(m.vm, "127.0.0.1", 0, 0, &s), STVM_EINVAL);
    cr_assert_eq(stvm_tcp_listen(m.vm, "127.0.0.1", -1, 1, &s), STVM_EINVAL);
    cr_assert_eq(stvm_tcp_listen(m.vm, "localhost.example", 0, 1, &s), STVM_EINVAL);
    cr_assert_eq(stvm_tcp_listen(m.vm, "127.0.0.1", 0, 4, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_tcp_listen(m.vm, "127.0.0.1", 0, 4, &m.listener), STVM_OK);
    m.port = stvm_socket_port(m.listener);
    stvm_socket *taken;
    cr_assert_eq(stvm_tcp_listen(m.vm, "127.0.0.1", m.port, 4, &taken), STVM_EADDRINUSE);
    /* Outside a green process. */
    char b;
    cr_assert_eq(stvm_tcp_connect(m.vm, "127.0.0.1", m.port, LONG, &s), STVM_ENOTPROC);
    cr_assert_eq(stvm_socket_accept(m.vm, m.listener, LONG, &s), STVM_ENOTPROC);
    cr_assert_eq(stvm_socket_fd(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_socket_port(NULL), STVM_EINVAL);
    cr_assert_eq(stvm_socket_close(m.vm, NULL), STVM_EINVAL);
    cr_assert_geq(stvm_socket_fd(m.listener), 0);
    spawn(m.vm, 40, "feeder", feeder, &m);
    spawn(m.vm, 40, "connector", connector, &m);
    RUN_OK_GREEN(&m);
    cr_assert_eq(m.busy_rc, STVM_EWAITING);
    cr_assert(m.reader_done);
    cr_assert_eq(stvm_socket_recv(m.vm, m.conn, &b, 1, LONG), STVM_ENOTPROC);
    cr_assert_eq(stvm_socket_close(m.vm, m.conn), STVM_OK);
    cr_assert_eq(stvm_socket_close(m.vm, m.listener), STVM_OK);
    SCENARIO_DONE(&m);
}

/* ---- termination in a wait, spurious signals ---------------------------------------------- */

typedef struct term {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener, *client, *server;
    int port;
    stvm_process *victim;
    int64_t after_rc;
    int64_t try_rc;          /* a 0 ms receive beside a waiting reader */
    int64_t second_rc;       /* a second reader's receive (LONG) */
    int close_rc;            /* closing the socket the reader waits on */
    int accept_after;
    char got;
    int spurious;
} term;

/* Yield until p blocks (a timed wait first hands its Delay to the timing process, which
 * sends p to the back of its run queue), at most 1000 times. */
static bool blocked_soon(stvm_vm *vm, stvm_process *p)
{
    for (int i = 0; i < 1000 && gstate(vm, p) != STVM_PROCESS_WAITING; i++)
        stvm_yield(vm);
    return gstate(vm, p) == STVM_PROCESS_WAITING;
}

/* The scenarios below: a listener on loopback and body in a green process, run to its
 * end; term_connect is a body's first step, a connection with both its ends. */
static void term_run(term *t, const char *name, stvm_fn body)
{
    t->vm = vm_make(NULL);
    cr_assert_eq(stvm_tcp_listen(t->vm, "127.0.0.1", 0, 4, &t->listener), STVM_OK);
    t->port = stvm_socket_port(t->listener);
    spawn(t->vm, 40, name, body, t);
    RUN_OK_GREEN(t);
}

static void term_done(term *t)
{
    cr_assert_eq(stvm_socket_close(t->vm, t->listener), STVM_OK);
    SCENARIO_DONE(t);
}

static void term_hang_up(stvm_vm *vm, term *t)
{
    stvm_socket_close(vm, t->client);
    stvm_socket_close(vm, t->server);
}

static bool term_connect(stvm_vm *vm, term *t)
{
    GCHECK(t, stvm_tcp_connect(vm, "127.0.0.1", t->port, LONG, &t->client) == STVM_OK);
    GCHECK(t, stvm_socket_accept(vm, t->listener, LONG, &t->server) == STVM_OK);
    return t->client && t->server;
}

static void stuck_reader(stvm_vm *vm, void *arg)
{
    term *t = arg;
    char b;
    stvm_socket_recv(vm, t->client, &b, 1, -1);
    GCHECK(t, false);   /* never gets here: it is terminated */
}

static void stuck_acceptor(stvm_vm *vm, void *arg)
{
    term *t = arg;
    stvm_socket *s;
    stvm_socket_accept(vm, t->listener, LONG, &s);
    GCHECK(t, false);
}

static void terminator(stvm_vm *vm, void *arg)
{
    term *t = arg;
    if (!term_connect(vm, t))
        return;
    stvm_process *r = NULL, *a = NULL;
    GCHECK(t, stvm_spawn(vm, 40, "reader", stuck_reader, t, &r) == STVM_OK);
    GCHECK(t, stvm_spawn(vm, 40, "acceptor", stuck_acceptor, t, &a) == STVM_OK);
    GCHECK(t, blocked_soon(vm, r));
    GCHECK(t, blocked_soon(vm, a));
    int fd = stvm_socket_fd(t->client);
    GCHECK(t, stvm_fd_wait(vm, fd, STVM_IO_READ, 0) == STVM_EWAITING);
    GCHECK(t, stvm_socket_close(vm, t->client) == STVM_EINUSE);
    GCHECK(t, stvm_process_terminate(vm, r) == STVM_OK);
    GCHECK(t, stvm_process_terminate(vm, a) == STVM_OK);
    stvm_process_release(vm, r);
    stvm_process_release(vm, a);
    /* Nothing of theirs is left: the descriptors are free to wait on, and the sockets
     * serve the next process. */
    GCHECK(t, stvm_fd_wait(vm, fd, STVM_IO_READ, 0) == STVM_ETIMEDOUT);
    GCHECK(t, stvm_fd_wait(vm, stvm_socket_fd(t->listener), STVM_IO_READ, 0) == STVM_ETIMEDOUT);
    GCHECK(t, stvm_socket_send(vm, t->server, "q", 1, LONG) == 1);
    t->after_rc = stvm_socket_recv(vm, t->client, &t->got, 1, LONG);
    stvm_socket *c2 = NULL, *s2 = NULL;
    GCHECK(t, stvm_tcp_connect(vm, "127.0.0.1", t->port, LONG, &c2) == STVM_OK);
    t->accept_after = stvm_socket_accept(vm, t->listener, LONG, &s2);
    stvm_socket_close(vm, c2);
    stvm_socket_close(vm, s2);
    term_hang_up(vm, t);
}

Test(socket, a_process_terminated_in_recv_or_accept_leaves_nothing_registered)
{
    term t = {0};
    term_run(&t, "terminator", terminator);
    cr_assert_eq(t.after_rc, 1);
    cr_assert_eq(t.got, 'q');
    cr_assert_eq(t.accept_after, STVM_OK);
    term_done(&t);
}

static void patient_reader(stvm_vm *vm, void *arg)
{
    term *t = arg;
    t->after_rc = stvm_socket_recv(vm, t->client, &t->got, 1, LONG);
}

static void spurious_signaller(stvm_vm *vm, void *arg)
{
    term *t = arg;
    if (!term_connect(vm, t))
        return;
    stvm_process *r = NULL;
    GCHECK(t, stvm_spawn(vm, 40, "reader", patient_reader, t, &r) == STVM_OK);
    /* Signals with no data behind them: the reader looks, finds nothing, waits again. */
    for (int i = 0; i < 3; i++) {
        GCHECK(t, blocked_soon(vm, r));
        GCHECK(t, stvm_semaphore_signal(vm, stvm_socket_read_semaphore(t->client)) == STVM_OK);
        stvm_yield(vm);
        t->spurious++;
    }
    GCHECK(t, blocked_soon(vm, r));
    GCHECK(t, stvm_socket_send(vm, t->server, "s", 1, LONG) == 1);
    GCHECK(t, stvm_process_join(vm, r, LONG) == STVM_OK);
    term_hang_up(vm, t);
}

/* Connect, start a reader waiting on the client's socket, do act beside it, then send
 * the byte it waits for and join it (which gives its handle back). */
static void beside_a_reader(stvm_vm *vm, term *t, void (*act)(stvm_vm *, term *), char byte)
{
    if (!term_connect(vm, t))
        return;
    stvm_process *r = NULL;
    GCHECK(t, stvm_spawn(vm, 40, "reader", patient_reader, t, &r) == STVM_OK);
    GCHECK(t, blocked_soon(vm, r));
    act(vm, t);
    GCHECK(t, stvm_socket_send(vm, t->server, &byte, 1, LONG) == 1);
    GCHECK(t, stvm_process_join(vm, r, LONG) == STVM_OK);
    term_hang_up(vm, t);
}

/* A receive that only tries (0 ms) while another process waits to read is refused as a
 * second reader is: were it let through, its giving up would disarm the waiter's read
 * handler, and the waiter would no longer be woken by data. */
static void try_recv(stvm_vm *vm, term *t)
{
    char b;
    t->try_rc = stvm_socket_recv(vm, t->client, &b, 1, 0);
    GCHECK(t, stvm_fd_wait(vm, stvm_socket_fd(t->client), STVM_IO_READ, 0) == STVM_EWAITING);
}

static void tries_beside_a_reader(stvm_vm *vm, void *arg)
{
    beside_a_reader(vm, arg, try_recv, 'w');
}

Test(socket, a_zero_ms_recv_beside_a_waiting_reader_is_refused_and_the_reader_still_wakes)
{
    term t = {0};
    term_run(&t, "trier", tries_beside_a_reader);
    cr_assert_eq(t.try_rc, STVM_EWAITING);
    cr_assert_eq(t.after_rc, 1);
    cr_assert_eq(t.got, 'w');
    term_done(&t);
}

/* A second reader is told another process waits (EWAITING), and closing the socket
 * under the waiter that it is in use (EINUSE): neither is about a running VM (EBUSY,
 * whose text a user once saw for a second reader). */
static void recv_second_and_close(stvm_vm *vm, term *t)
{
    char b;
    t->second_rc = stvm_socket_recv(vm, t->client, &b, 1, LONG);
    t->close_rc = stvm_socket_close(vm, t->client);
}

static void reads_second_and_closes(stvm_vm *vm, void *arg)
{
    beside_a_reader(vm, arg, recv_second_and_close, 'v');
}

Test(socket, a_second_reader_gets_ewaiting_and_a_close_under_it_einuse_texts_name_the_waiter)
{
    term t = {0};
    term_run(&t, "second", reads_second_and_closes);
    cr_assert_eq(t.second_rc, STVM_EWAITING, "got %s", stvm_err_name((int)t.second_rc));
    cr_assert_eq(t.close_rc, STVM_EINUSE, "got %s", stvm_err_name(t.close_rc));
    cr_assert_eq(t.after_rc, 1, "the first reader still gets the data");
    cr_assert_eq(t.got, 'v');
    const char *waiting = stvm_strerror((int)t.second_rc), *in_use = stvm_strerror(t.close_rc);
    cr_assert(strstr(waiting, "process") && strstr(waiting, "waits"), "%s", waiting);
    cr_assert(strstr(in_use, "waiting process"), "%s", in_use);
    cr_assert(!strstr(waiting, "running") && !strstr(in_use, "running"), "%s / %s", waiting,
              in_use);
    term_done(&t);
}

/* A listener's read handler is armed only while a process accepts on it: one nobody
 * accepts on (after listen, an accept that gave up, a look at its status) cannot wake
 * anybody, so a run whose processes all wait for ever ends in a deadlock. */
static void gives_up_then_waits_for_ever(stvm_vm *vm, void *arg)
{
    term *t = arg;
    stvm_socket *s = NULL;
    t->try_rc = stvm_socket_accept(vm, t->listener, 0, &s);
    GCHECK(t, stvm_socket_status(vm, t->listener) == STVM_SOCKET_WAITING_FOR_CONNECTION);
    stvm_semaphore *never = NULL;
    GCHECK(t, stvm_semaphore_new(vm, &never) == STVM_OK);
    stvm_semaphore_wait(vm, never);
}

Test(socket, a_listener_nobody_accepts_on_is_no_pending_work, .timeout = 30)
{
    term t = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_tcp_listen(t.vm, "127.0.0.1", 0, 4, &t.listener), STVM_OK);
    cr_assert_eq(stvm_socket_status(t.vm, t.listener), STVM_SOCKET_WAITING_FOR_CONNECTION);
    spawn(t.vm, 40, "stuck", gives_up_then_waits_for_ever, &t);
    cr_assert_eq(stvm_run(t.vm), STVM_EDEADLOCK);
    cr_assert_eq(t.bad_line, 0, "line %d", t.bad_line);
    cr_assert_eq(t.try_rc, STVM_ETIMEDOUT);
    cr_assert_eq(stvm_socket_close(t.vm, t.listener), STVM_OK);
    vm_done(t.vm);
}

/* A failed read_line leaves buf alone, unless it took bytes of the line from the
 * stream: a line too long for buf is answered ERANGE with the part that fitted, so that
 * nothing read is lost. */
static void reads_lines_that_do_not_fit(stvm_vm *vm, void *arg)
{
    term *t = arg;
    stvm_stream *st = NULL;
    if (!term_connect(vm, t) || stvm_stream_open(vm, t->client, 1, &st) != STVM_OK)
        return;
    char buf[8] = "unset";
    GCHECK(t, stvm_stream_read_line(vm, st, buf, sizeof buf) == STVM_ETIMEDOUT);
    GCHECK(t, strcmp(buf, "unset") == 0);
    GCHECK(t, stvm_socket_send(vm, t->server, "abcdefgh\nrest\n", 14, LONG) == 14);
    GCHECK(t, stvm_fd_wait(vm, stvm_socket_fd(t->client), STVM_IO_READ, LONG) > 0);
    GCHECK(t, stvm_stream_read_line(vm, st, buf, 5) == STVM_ERANGE);
    GCHECK(t, strcmp(buf, "abcd") == 0);
    GCHECK(t, stvm_stream_read_line(vm, st, buf, sizeof buf) == 4);
    GCHECK(t, strcmp(buf, "efgh") == 0);
    GCHECK(t, stvm_stream_read_line(vm, st, buf, sizeof buf) == 4);
    GCHECK(t, strcmp(buf, "rest") == 0);
    stvm_stream_close(vm, st);
    term_hang_up(vm, t);
}

Test(socket, read_line_leaves_buf_alone_when_it_fails_and_answers_what_fitted_with_erange)
{
    term t = {0};
    term_run(&t, "liner", reads_lines_that_do_not_fit);
    term_done(&t);
}

Test(socket, a_reader_loops_over_spurious_signals)
{
    term t = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_tcp_listen(t.vm, "127.0.0.1", 0, 4, &t.listener), STVM_OK);
    t.port = stvm_socket_port(t.listener);
    stvm_stats before = stats_of(t.vm);
    spawn(t.vm, 40, "signaller", spurious_signaller, &t);
    RUN_OK_GREEN(&t);
    cr_assert_eq(t.after_rc, 1);
    cr_assert_eq(t.got, 's');
    stvm_stats after = stats_of(t.vm);
    /* One blocked read, four waits on the read semaphore (three spurious wake-ups). */
    cr_assert_eq(after.socket_reads_blocked - before.socket_reads_blocked, 1);
    cr_assert_geq(after.timed_waits - before.timed_waits, 4);
    cr_assert_eq(stvm_socket_close(t.vm, t.listener), STVM_OK);
    SCENARIO_DONE(&t);
}

/* ---- descriptor numbers used again ----------------------------------------------------------- */

/* The kernel hands out the lowest free descriptor number, so a connection made after a
 * close gets the number back. A socket's read handler is re-armed without a system call
 * once its descriptor is known to the aio layer (edge-triggered); each new descriptor
 * must therefore start afresh there, whether the number last belonged to a socket
 * (forgotten when it closed) or to an embedder's pipe that stvm_fd_wait watched. */
typedef struct reuse {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener;
    int port;
    int rounds;
    int reused;              /* connections that got a number used before */
    int pipe_fd_reused;      /* the client got the pipe's number */
} reuse;

static void send_after_go(stvm_vm *vm, void *arg);

/* One connection: a read that must wait for the peer's byte, then close. */
static bool connect_and_wait_for_a_byte(stvm_vm *vm, reuse *r, int *fd)
{
    stvm_socket *c = NULL, *sv = NULL;
    GCHECK(r, stvm_tcp_connect(vm, "127.0.0.1", r->port, LONG, &c) == STVM_OK);
    GCHECK(r, stvm_socket_accept(vm, r->listener, LONG, &sv) == STVM_OK);
    if (!c || !sv)
        return false;
    *fd = stvm_socket_fd(c);
    char b = 0;
    stvm_stats before;
    stvm_vm_get_stats(vm, &before);
    /* The reader waits (nothing is there yet); the sender runs when it blocks. */
    stvm_semaphore *go = NULL;
    GCHECK(r, stvm_semaphore_new(vm, &go) == STVM_OK);
    void *args[3] = {r, sv, go};
    stvm_process *sender = NULL;
    GCHECK(r, stvm_spawn(vm, 40, "sender", send_after_go, args, &sender) == STVM_OK);
    GCHECK(r, stvm_semaphore_signal(vm, go) == STVM_OK);
    GCHECK(r, stvm_socket_recv(vm, c, &b, 1, LONG) == 1 && b == 'r');
    stvm_stats after;
    stvm_vm_get_stats(vm, &after);
    GCHECK(r, after.socket_reads_blocked == before.socket_reads_blocked + 1);
    GCHECK(r, stvm_process_join(vm, sender, LONG) == STVM_OK);   /* gives the handle back */
    stvm_semaphore_free(vm, go);
    GCHECK(r, stvm_socket_close(vm, c) == STVM_OK);
    GCHECK(r, stvm_socket_close(vm, sv) == STVM_OK);
    return true;
}

static void send_after_go(stvm_vm *vm, void *arg)
{
    void **a = arg;
    reuse *r = a[0];
    GCHECK(r, stvm_semaphore_wait(vm, a[2]) == STVM_OK);
    GCHECK(r, stvm_socket_send(vm, a[1], "r", 1, LONG) == 1);
}

static void reuser(stvm_vm *vm, void *arg)
{
    reuse *r = arg;
    int seen[64] = {0}, fd = -1;
    for (int i = 0; i < r->rounds; i++) {
        if (!connect_and_wait_for_a_byte(vm, r, &fd))
            return;
        if (fd >= 0 && fd < 64 && seen[fd]++)
            r->reused++;
    }
    /* A pipe waited on with stvm_fd_wait, closed, and its number taken by a socket. */
    int p[2];
    GCHECK(r, pipe(p) == 0);
    GCHECK(r, write(p[1], "x", 1) == 1);
    GCHECK(r, stvm_fd_wait(vm, p[0], STVM_IO_READ, LONG) == STVM_IO_READ);
    int pipe_fd = p[0];
    close(p[0]);
    close(p[1]);
    if (connect_and_wait_for_a_byte(vm, r, &fd))
        r->pipe_fd_reused = fd == pipe_fd;
}

Test(socket, descriptor_numbers_used_again_wake_their_new_readers, .timeout = 60)
{
    static reuse r;
    memset(&r, 0, sizeof r);
    r.vm = listening_vm(4, &r.listener, &r.port);
    r.rounds = 20;
    spawn(r.vm, 40, "reuser", reuser, &r);
    RUN_OK_GREEN(&r);
    cr_assert_geq(r.reused, r.rounds - 1, "the numbers came back (%d times)", r.reused);
    cr_assert(r.pipe_fd_reused, "the client socket got the pipe's number");
    cr_assert_eq(stvm_socket_close(r.vm, r.listener), STVM_OK);
    SCENARIO_DONE(&r);
}

/* ---- stvm_vm_free with sockets open -------------------------------------------------------- */

static void leave_open(stvm_vm *vm, void *arg)
{
    term *t = arg;
    GCHECK(t, stvm_tcp_connect(vm, "::1", t->port, LONG, &t->client) == STVM_OK);
    GCHECK(t, stvm_socket_accept(vm, t->listener, LONG, &t->server) == STVM_OK);
    stvm_stream *st;
    GCHECK(t, stvm_stream_open(vm, t->client, LONG, &st) == STVM_OK);
    GCHECK(t, stvm_stream_write(vm, st, "unsent", 6) == STVM_OK);
}

static void read_forever(stvm_vm *vm, void *arg)
{
    term *t = arg;
    char b;
    stvm_socket_recv(vm, t->server, &b, 1, -1);
}

Test(socket, vm_free_closes_the_sockets_left_open)
{
    term t = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_tcp_listen(t.vm, "::1", 0, 4, &t.listener), STVM_OK);
    t.port = stvm_socket_port(t.listener);
    spawn(t.vm, 40, "opener", leave_open, &t);
    RUN_OK_GREEN(&t);
    int fds[3] = {stvm_socket_fd(t.listener), stvm_socket_fd(t.client), stvm_socket_fd(t.server)};
    for (int i = 0; i < 3; i++)
        cr_assert_neq(fcntl(fds[i], F_GETFD), -1);
    /* One process is still blocked in a recv when the VM goes. */
    spawn(t.vm, 40, "reader", read_forever, &t);
    cr_assert_eq(stvm_run_mode(t.vm, STVM_RUN_NOWAIT), 1);
    vm_check(t.vm);
    stvm_vm_free(t.vm);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(fcntl(fds[i], F_GETFD), -1, "descriptor %d is still open", fds[i]);
}

/* ---- the peer's half-close: writing after its FIN ----------------------------------------- */

/* A C client (tests/bsd_peer.h) sends a line, shuts its sending side and reads the
 * answer: the server reads to the end of the stream (EEOF, every time), and its answer
 * still goes out, as BSD sockets, libuv and Go send it. */
typedef struct half {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener;
    bsd_peer peer;
    char got[64];
    size_t ngot;
    int64_t end_rc, again_rc, send_rc;
    int status;
} half;

static void half_server(stvm_vm *vm, void *arg)
{
    half *h = arg;
    stvm_socket *c = NULL;
    GCHECK(h, stvm_socket_accept(vm, h->listener, LONG, &c) == STVM_OK);
    if (!c)
        return;
    int64_t n;
    while ((n = stvm_socket_recv(vm, c, h->got + h->ngot, sizeof h->got - 1 - h->ngot, LONG)) > 0)
        h->ngot += (size_t)n;
    h->end_rc = n;
    char b;
    h->again_rc = stvm_socket_recv(vm, c, &b, 1, LONG);
    h->status = stvm_socket_status(vm, c);
    char reply[96];
    int len = snprintf(reply, sizeof reply, "echo: %s", h->got);
    h->send_rc = stvm_socket_send(vm, c, reply, (size_t)len, LONG);
    GCHECK(h, h->send_rc == len);
    GCHECK(h, stvm_socket_close(vm, c) == STVM_OK);
}

Test(socket, send_after_peer_shutdown_write_is_delivered)
{
    static half h;
    memset(&h, 0, sizeof h);
    h.vm = listening_vm(4, &h.listener, &h.peer.port);
    h.peer.send = "hello\n";
    bsd_peer_start(&h.peer);
    spawn(h.vm, 40, "server", half_server, &h);
    run_ok(h.vm);
    bsd_peer_join(&h.peer);
    cr_assert_eq(h.end_rc, STVM_EEOF, "the end of the stream: %s", stvm_err_name((int)h.end_rc));
    cr_assert_eq(h.again_rc, STVM_EEOF, "and again: %s", stvm_err_name((int)h.again_rc));
    cr_assert_str_eq(h.got, "hello\n");
    cr_assert_eq(h.status, STVM_SOCKET_OTHER_END_CLOSED, "the status stays Pharo's");
    cr_assert_eq(h.send_rc, 12, "the answer after the peer's FIN: %s",
                 stvm_err_name((int)h.send_rc));
    cr_assert_eq(h.peer.err, 0, "the peer's %s failed: %s", h.peer.failed, strerror(h.peer.err));
    cr_assert_str_eq(h.peer.got, "echo: hello\n");
    cr_assert_eq(stvm_socket_close(h.vm, h.listener), STVM_OK);
    SCENARIO_DONE(&h);
}

/* ---- this side's half-close: stvm_socket_shutdown ------------------------------------------ */

typedef struct shut {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener, *client, *server;
    int port;
    int64_t client_eof, server_send_after, server_more, server_eof, shut_again, rd_eof, rd_eof2;
    int64_t client_send_after_fin;
    char client_got[8], server_got[8];
} shut;

static void shut_pair(stvm_vm *vm, shut *s)
{
    GCHECK(s, stvm_tcp_connect(vm, "127.0.0.1", s->port, LONG, &s->client) == STVM_OK);
    GCHECK(s, stvm_socket_accept(vm, s->listener, LONG, &s->server) == STVM_OK);
}

static void shut_client(stvm_vm *vm, void *arg)
{
    shut *s = arg;
    GCHECK(s, stvm_socket_send(vm, s->client, "ping", 4, LONG) == 4);
    GCHECK(s, stvm_socket_recv(vm, s->client, s->client_got, 4, LONG) == 4);
    s->client_eof = stvm_socket_recv(vm, s->client, s->client_got, 4, LONG);
    s->client_send_after_fin = stvm_socket_send(vm, s->client, "more", 4, LONG);
    GCHECK(s, stvm_socket_close(vm, s->client) == STVM_OK);
}

static void shut_server(stvm_vm *vm, void *arg)
{
    shut *s = arg;
    shut_pair(vm, s);
    if (!s->client || !s->server)
        return;
    GCHECK(s, stvm_spawn(vm, 40, "client", shut_client, s, NULL) == STVM_OK);
    GCHECK(s, stvm_socket_recv(vm, s->server, s->server_got, 4, LONG) == 4);
    GCHECK(s, stvm_socket_send(vm, s->server, "pong", 4, LONG) == 4);
    GCHECK(s, stvm_socket_shutdown(vm, s->server, SHUT_WR) == STVM_OK);
    s->server_send_after = stvm_socket_send(vm, s->server, "x", 1, LONG);
    s->shut_again = stvm_socket_shutdown(vm, s->server, SHUT_WR);
    /* This side still reads what the peer sends after reading our end of the stream. */
    s->server_more = stvm_socket_recv(vm, s->server, s->server_got, 4, LONG);
    s->server_eof = stvm_socket_recv(vm, s->server, s->server_got + 4, 4, LONG);
    GCHECK(s, stvm_socket_shutdown(vm, s->server, SHUT_RD) == STVM_OK);
    s->rd_eof = stvm_socket_recv(vm, s->server, s->server_got, 4, LONG);
    s->rd_eof2 = stvm_socket_recv(vm, s->server, s->server_got, 4, 0);
    GCHECK(s, stvm_socket_close(vm, s->server) == STVM_OK);
}

Test(socket, shutdown_write_ends_the_peers_stream_while_this_side_still_reads)
{
    shut s = {0};
    s.vm = listening_vm(4, &s.listener, &s.port);
    spawn(s.vm, 40, "server", shut_server, &s);
    RUN_OK_GREEN(&s);
    cr_assert_arr_eq(s.client_got, "pong", 4);
    cr_assert_eq(s.client_eof, STVM_EEOF, "the peer reads our FIN: %s",
                 stvm_err_name((int)s.client_eof));
    cr_assert_eq(s.server_send_after, STVM_ECLOSED, "a send after our SHUT_WR: %s",
                 stvm_err_name((int)s.server_send_after));
    cr_assert_eq(s.shut_again, STVM_OK, "shutting a shut direction again is a no-op");
    cr_assert_eq(s.client_send_after_fin, 4, "the peer sends after our FIN: %s",
                 stvm_err_name((int)s.client_send_after_fin));
    cr_assert_eq(s.server_more, 4);
    cr_assert_arr_eq(s.server_got, "more", 4);
    cr_assert_eq(s.server_eof, STVM_EEOF);
    cr_assert_eq(s.rd_eof, STVM_EEOF, "a recv after our SHUT_RD: %s", stvm_err_name((int)s.rd_eof));
    cr_assert_eq(s.rd_eof2, STVM_EEOF);
    cr_assert_eq(stvm_socket_close(s.vm, s.listener), STVM_OK);
    SCENARIO_DONE(&s);
}

/* SHUT_RD: the reads answer EEOF at once, before any system call, whatever comes. */
static void shut_read_server(stvm_vm *vm, void *arg)
{
    shut *s = arg;
    shut_pair(vm, s);
    if (!s->client || !s->server)
        return;
    GCHECK(s, stvm_socket_shutdown(vm, s->server, SHUT_RD) == STVM_OK);
    s->rd_eof = stvm_socket_recv(vm, s->server, s->server_got, 4, LONG);
    /* The other direction is untouched. */
    GCHECK(s, stvm_socket_send(vm, s->server, "pong", 4, LONG) == 4);
    GCHECK(s, stvm_socket_recv(vm, s->client, s->client_got, 4, LONG) == 4);
    GCHECK(s, stvm_socket_shutdown(vm, s->server, SHUT_RDWR) == STVM_OK);
    s->server_send_after = stvm_socket_send(vm, s->server, "x", 1, LONG);
    s->client_eof = stvm_socket_recv(vm, s->client, s->client_got, 4, LONG);
    GCHECK(s, stvm_socket_close(vm, s->server) == STVM_OK);
    GCHECK(s, stvm_socket_close(vm, s->client) == STVM_OK);
}

Test(socket, recv_after_shutdown_read_answers_eof_at_once)
{
    shut s = {0};
    s.vm = listening_vm(4, &s.listener, &s.port);
    spawn(s.vm, 40, "server", shut_read_server, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rd_eof, STVM_EEOF, "%s", stvm_err_name((int)s.rd_eof));
    cr_assert_arr_eq(s.client_got, "pong", 4);
    cr_assert_eq(s.server_send_after, STVM_ECLOSED);
    cr_assert_eq(s.client_eof, STVM_EEOF);
    cr_assert_eq(stvm_socket_close(s.vm, s.listener), STVM_OK);
    SCENARIO_DONE(&s);
}

/* What shutdown refuses: a bad how, a listener, a direction a process waits in, and a
 * flush it cannot make from outside a process. Each changes nothing. */
typedef struct shut_refusals {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener, *client, *server;
    stvm_stream *st;
    int port;
    int bad_how[4], on_listener, rd_waited, rdwr_waited, wr_beside_reader;
    int64_t reader_rc;
} shut_refusals;

static void refusal_reader(stvm_vm *vm, void *arg)
{
    shut_refusals *r = arg;
    char b;
    r->reader_rc = stvm_socket_recv(vm, r->server, &b, 1, LONG);
}

static void refuser(stvm_vm *vm, void *arg)
{
    shut_refusals *r = arg;
    GCHECK(r, stvm_tcp_connect(vm, "127.0.0.1", r->port, LONG, &r->client) == STVM_OK);
    GCHECK(r, stvm_socket_accept(vm, r->listener, LONG, &r->server) == STVM_OK);
    if (!r->client || !r->server)
        return;
    const int how[4] = {-1, 3, 42, INT32_MIN};
    for (int i = 0; i < 4; i++)
        r->bad_how[i] = stvm_socket_shutdown(vm, r->server, how[i]);
    r->on_listener = stvm_socket_shutdown(vm, r->listener, SHUT_WR);
    stvm_process *p = NULL;
    GCHECK(r, stvm_spawn(vm, 40, "reader", refusal_reader, r, &p) == STVM_OK);
    GCHECK(r, blocked_soon(vm, p));
    r->rd_waited = stvm_socket_shutdown(vm, r->server, SHUT_RD);
    r->rdwr_waited = stvm_socket_shutdown(vm, r->server, SHUT_RDWR);
    /* The reader waits to read: shutting the sending side beside it is fine. */
    r->wr_beside_reader = stvm_socket_shutdown(vm, r->server, SHUT_WR);
    GCHECK(r, stvm_socket_send(vm, r->client, "z", 1, LONG) == 1);
    GCHECK(r, stvm_process_join(vm, p, LONG) == STVM_OK);
    /* Unsent bytes in a stream: a shutdown from outside a process cannot flush them. */
    GCHECK(r, stvm_stream_open(vm, r->client, LONG, &r->st) == STVM_OK);
    GCHECK(r, stvm_stream_write(vm, r->st, "unsent", 6) == STVM_OK);
}

Test(socket, shutdown_refuses_a_bad_how_a_listener_and_directions_in_use)
{
    shut_refusals r = {0};
    r.vm = listening_vm(4, &r.listener, &r.port);
    spawn(r.vm, 40, "refuser", refuser, &r);
    RUN_OK_GREEN(&r);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(r.bad_how[i], STVM_EINVAL, "how #%d: %s", i, stvm_err_name(r.bad_how[i]));
    cr_assert_eq(r.on_listener, STVM_EINVAL);
    cr_assert_eq(r.rd_waited, STVM_EINUSE);
    cr_assert_eq(r.rdwr_waited, STVM_EINUSE);
    cr_assert_eq(r.wr_beside_reader, STVM_OK);
    cr_assert_eq(r.reader_rc, 1, "the reader was not disturbed");
    cr_assert_eq(stvm_socket_shutdown(r.vm, r.client, SHUT_WR), STVM_ENOTPROC);
    stvm_stream_stats ss;
    cr_assert_eq(stvm_stream_get_stats(r.st, &ss), STVM_OK);
    cr_assert_eq(ss.buffer_bytes, 4096, "the unsent bytes are still there");
    cr_assert_eq(stvm_socket_shutdown(r.vm, r.client, SHUT_RD), STVM_OK, "no flush needed");
    cr_assert_eq(stvm_socket_shutdown(NULL, r.client, SHUT_RD), STVM_EINVAL);
    cr_assert_eq(stvm_socket_shutdown(r.vm, NULL, SHUT_RD), STVM_EINVAL);
    cr_assert_eq(stvm_socket_close(r.vm, r.client), STVM_OK);
    cr_assert_eq(stvm_socket_close(r.vm, r.server), STVM_OK);
    cr_assert_eq(stvm_socket_close(r.vm, r.listener), STVM_OK);
    SCENARIO_DONE(&r);
}

/* ---- the operating system's errors ------------------------------------------------------- */

Test(socket, listen_on_a_taken_port_is_eaddrinuse_and_on_another_machines_address_eaddrnotavail)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_socket *l, *s = NULL;
    cr_assert_eq(stvm_tcp_listen(vm, "127.0.0.1", 0, 4, &l), STVM_OK);
    stvm_stats before = stats_of(vm);
    cr_assert_eq(stvm_tcp_listen(vm, "127.0.0.1", stvm_socket_port(l), 4, &s), STVM_EADDRINUSE);
    cr_assert_eq(stvm_tcp_listen(vm, "192.0.2.1", 0, 4, &s), STVM_EADDRNOTAVAIL);
    cr_assert_null(s);
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.objects_allocated, before.objects_allocated, "nothing allocated stays");
    cr_assert_str_eq(stvm_strerror(STVM_EADDRINUSE), "address already in use");
    cr_assert_eq(stvm_socket_close(vm, l), STVM_OK);
    vm_done(vm);
}

typedef struct unreach {
    stvm_vm *vm;
    int bad_line;
    int broadcast_rc;
} unreach;

static void connect_broadcast(stvm_vm *vm, void *arg)
{
    unreach *u = arg;
    stvm_socket *s = NULL;
    /* The kernel refuses a TCP connection to a broadcast address at once. */
    u->broadcast_rc = stvm_tcp_connect(vm, "255.255.255.255", 80, LONG, &s);
    GCHECK(u, s == NULL);
}

Test(socket, connect_where_no_route_leads_answers_enetunreach)
{
    unreach u = {.vm = vm_make(NULL)};
    spawn(u.vm, 40, "connector", connect_broadcast, &u);
    RUN_OK_GREEN(&u);
    cr_assert_eq(u.broadcast_rc, STVM_ENETUNREACH, "%s", stvm_err_name(u.broadcast_rc));
    SCENARIO_DONE(&u);
}

/* accept(2) failing for want of a descriptor answers EMFILE (the listener stays ready:
 * once a descriptor is free the connection is taken). */
typedef struct emfile {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener;
    int port, client;
    int full_rc, after_rc;
} emfile;

static void accept_without_descriptors(stvm_vm *vm, void *arg)
{
    emfile *e = arg;
    /* Every descriptor the limit allows is taken, then one is given back for accept. */
    int held[256], n = 0;
    while (n < 256 && (held[n] = dup(0)) >= 0)
        n++;
    GCHECK(e, n > 0 && n < 256 && errno == EMFILE);
    stvm_socket *c = NULL;
    e->full_rc = stvm_socket_accept(vm, e->listener, LONG, &c);
    GCHECK(e, c == NULL);
    while (n > 0)
        close(held[--n]);
    e->after_rc = stvm_socket_accept(vm, e->listener, LONG, &c);
    if (c)
        stvm_socket_close(vm, c);
}

/* The Delay scheduler's first timed wait, before descriptors run out. */
static void warm_up(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_delay_wait_ms(vm, 1);
}

Test(socket, accept_answers_emfile_when_no_descriptor_is_left)
{
    emfile e = {0};
    e.vm = listening_vm(4, &e.listener, &e.port);
    /* A connection waits in the backlog, from a plain socket. */
    e.client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)e.port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(e.client, (struct sockaddr *)&sa, sizeof sa), 0);
    /* The VM's own descriptors (the Delay scheduler's timers) exist before the limit. */
    struct rlimit rl;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    int top = dup(0);
    close(top);
    struct rlimit low = {.rlim_cur = (rlim_t)top + 8, .rlim_max = rl.rlim_max};
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
    spawn(e.vm, 40, "warm", warm_up, NULL);
    run_ok(e.vm);
    spawn(e.vm, 40, "acceptor", accept_without_descriptors, &e);
    RUN_OK_GREEN(&e);
    setrlimit(RLIMIT_NOFILE, &rl);
    cr_assert_eq(e.full_rc, STVM_EMFILE, "%s", stvm_err_name(e.full_rc));
    cr_assert_eq(e.after_rc, STVM_OK, "%s", stvm_err_name(e.after_rc));
    close(e.client);
    cr_assert_eq(stvm_socket_close(e.vm, e.listener), STVM_OK);
    SCENARIO_DONE(&e);
}

/* ---- addresses ------------------------------------------------------------------------------ */

typedef struct addr {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener, *client, *server;
    int port;
    char lst_local[64], cli_peer[64], cli_local[64], srv_peer[64];
    int lst_port, cli_peer_port, cli_local_port, srv_peer_port, srv_local_port;
    int range_rc, listener_peer_rc;
    char untouched[16];
    int untouched_port;
} addr;

static void addresses(stvm_vm *vm, void *arg)
{
    addr *a = arg;
    GCHECK(a, stvm_tcp_connect(vm, "localhost", a->port, LONG, &a->client) == STVM_OK);
    GCHECK(a, stvm_socket_accept(vm, a->listener, LONG, &a->server) == STVM_OK);
    if (!a->client || !a->server)
        return;
    GCHECK(a, stvm_socket_local_address(vm, a->listener, a->lst_local, sizeof a->lst_local,
                                        &a->lst_port) == STVM_OK);
    GCHECK(a, stvm_socket_peer_address(vm, a->client, a->cli_peer, sizeof a->cli_peer,
                                       &a->cli_peer_port) == STVM_OK);
    GCHECK(a, stvm_socket_local_address(vm, a->client, a->cli_local, sizeof a->cli_local,
                                        &a->cli_local_port) == STVM_OK);
    GCHECK(a, stvm_socket_peer_address(vm, a->server, a->srv_peer, sizeof a->srv_peer,
                                       &a->srv_peer_port) == STVM_OK);
    GCHECK(a, stvm_socket_local_address(vm, a->server, a->srv_peer, sizeof a->srv_peer, NULL) ==
                  STVM_OK);
    GCHECK(a, stvm_socket_peer_address(vm, a->server, a->srv_peer, sizeof a->srv_peer,
                                       &a->srv_peer_port) == STVM_OK);
    /* "127.0.0.1" and its NUL need 10 bytes: 9 answer ERANGE and write nothing. */
    strcpy(a->untouched, "untouched");
    a->untouched_port = -7;
    a->range_rc = stvm_socket_peer_address(vm, a->client, a->untouched, 9, &a->untouched_port);
    a->listener_peer_rc = stvm_socket_peer_address(vm, a->listener, a->untouched,
                                                   sizeof a->untouched, NULL);
    stvm_socket_close(vm, a->client);
    stvm_socket_close(vm, a->server);
}

static void addresses_on(const char *host, const char *want)
{
    addr a = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_tcp_listen(a.vm, host, 0, 4, &a.listener), STVM_OK);
    a.port = stvm_socket_port(a.listener);
    spawn(a.vm, 40, "addresses", addresses, &a);
    RUN_OK_GREEN(&a);
    cr_assert_str_eq(a.lst_local, want);
    cr_assert_eq(a.lst_port, a.port);
    cr_assert_str_eq(a.cli_peer, "127.0.0.1");
    cr_assert_eq(a.cli_peer_port, a.port);
    cr_assert_str_eq(a.cli_local, "127.0.0.1");
    cr_assert_str_eq(a.srv_peer, "127.0.0.1");
    cr_assert_eq(a.srv_peer_port, a.cli_local_port, "the server sees the client's port");
    cr_assert_gt(a.cli_local_port, 0);
    cr_assert_eq(a.range_rc, STVM_ERANGE);
    cr_assert_str_eq(a.untouched, "untouched");
    cr_assert_eq(a.untouched_port, -7);
    cr_assert_eq(a.listener_peer_rc, STVM_EINVAL, "a listener has no peer");
    cr_assert_eq(stvm_socket_close(a.vm, a.listener), STVM_OK);
    SCENARIO_DONE(&a);
}

Test(socket, peer_and_local_addresses_are_numeric_text_with_their_ports)
{
    addresses_on("127.0.0.1", "127.0.0.1");
}

Test(socket, a_listener_on_every_interface_is_0_0_0_0)
{
    addresses_on("0.0.0.0", "0.0.0.0");
}

typedef struct addr6 {
    stvm_vm *vm;
    int bad_line;
    stvm_socket *listener;
    int port, peer_port;
    char peer[64];
} addr6;

static void addresses6(stvm_vm *vm, void *arg)
{
    addr6 *a = arg;
    stvm_socket *c = NULL;
    GCHECK(a, stvm_tcp_connect(vm, "::1", a->port, LONG, &c) == STVM_OK);
    if (!c)
        return;
    GCHECK(a, stvm_socket_peer_address(vm, c, a->peer, sizeof a->peer, &a->peer_port) ==
                  STVM_OK);
    stvm_socket_close(vm, c);
}

Test(socket, an_ipv6_peer_address_is_written_as_inet_ntop_writes_it)
{
    addr6 a = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_tcp_listen(a.vm, "::1", 0, 4, &a.listener), STVM_OK);
    a.port = stvm_socket_port(a.listener);
    spawn(a.vm, 40, "addresses", addresses6, &a);
    RUN_OK_GREEN(&a);
    cr_assert_str_eq(a.peer, "::1");
    cr_assert_eq(a.peer_port, a.port);
    cr_assert_eq(stvm_socket_close(a.vm, a.listener), STVM_OK);
    SCENARIO_DONE(&a);
}
