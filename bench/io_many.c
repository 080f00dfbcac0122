/*
 * stvm-bench io: many connections in one VM. An echo server (a listener, an accepting
 * process at priority 50 that spawns one handler process per connection at 40) and N
 * client processes at 40, each end with a SocketStream, exchanging fixed-size messages:
 *
 *  1. a coordinator at priority 30 (so it runs only when every client and handler is
 *     blocked) reads RSS and bytes_live, then spawns the clients in batches small
 *     enough for the listen backlog, waiting after each batch until all of it is warm;
 *  2. each client connects, opens a stream, sends one message and reads its echo (the
 *     warm-up: buffers and stacks are touched as traffic touches them), then blocks
 *     reading a one-byte greeting; each handler, having echoed that message, blocks
 *     reading the next one;
 *  3. with every connection open and every process blocked in a read, the coordinator
 *     reads RSS and bytes_live again; then it writes the greeting into every server-side
 *     stream and the clock runs until each client has had `messages` echoes and closed.
 * Kernel socket buffers are kernel memory, never in the process's RSS.
 */
#include "io_measure.h"

#include "bench.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 128                   /* clients spawned before waiting for them */
#define MAX_MESSAGE 512          /* bytes; small buffers keep the stacks as a real handler's */
#define PROGRESS_EVERY 1024

typedef struct many many;

/* One end of a connection: the handler's argument, or the client's. */
typedef struct conn_end {
    many *m;
    stvm_socket *s;
    stvm_stream *st;
} conn_end;

struct many {
    const io_many_params *p;
    io_many_result *r;
    stvm_socket *listener;
    int port;
    conn_end *servers, *clients;    /* [connections], allocated and touched beforehand */
    long accepted, handlers_warm, clients_warm, clients_done, spawned;
    stvm_semaphore *done;           /* the last client, or a failure, signals it */
    int err;
    char why[200];
};

static void fail(stvm_vm *vm, many *m, const char *who, const char *what, int64_t err)
{
    if (m->err)
        return;
    m->err = (int)err;
    snprintf(m->why, sizeof m->why, "%s: %s: %s", who, what, stvm_err_name((int)err));
    stvm_semaphore_signal(vm, m->done);
}

/* Read exactly len bytes: len, 0 at the end of the stream before any, or an error. */
static int64_t read_full(stvm_vm *vm, stvm_stream *st, uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        int64_t n = stvm_stream_read(vm, st, buf + got, len - got);
        if (n <= 0)
            return got == 0 || n < 0 ? n : STVM_ECLOSED;
        got += (size_t)n;
    }
    return (int64_t)len;
}

static int64_t send_message(stvm_vm *vm, stvm_stream *st, const uint8_t *buf, size_t len)
{
    int err = stvm_stream_write(vm, st, buf, len);
    return err ? err : stvm_stream_flush(vm, st);
}

/* ---- the server --------------------------------------------------------------------------- */

static void handler(stvm_vm *vm, void *arg)
{
    conn_end *e = arg;
    many *m = e->m;
    size_t len = (size_t)m->p->message_bytes;
    uint8_t buf[MAX_MESSAGE];
    int64_t err = stvm_stream_open(vm, e->s, m->p->timeout_ms, &e->st);
    if (err) {
        fail(vm, m, "handler", "stvm_stream_open", err);
        stvm_socket_close(vm, e->s);
        return;
    }
    for (bool warm = false;; warm = true) {
        if ((err = read_full(vm, e->st, buf, len)) <= 0)
            break;
        if ((err = send_message(vm, e->st, buf, len)))
            break;
        if (!warm)
            m->handlers_warm++;
    }
    if (err < 0)
        fail(vm, m, "handler", "echo", err);
    stvm_socket_close(vm, e->s);    /* its stream goes with it */
    e->s = NULL;
    e->st = NULL;
}

static void acceptor(stvm_vm *vm, void *arg)
{
    many *m = arg;
    for (long i = 0; i < m->p->connections && !m->err; i++) {
        conn_end *e = &m->servers[i];
        int err = stvm_tcp_accept(vm, m->listener, m->p->timeout_ms, &e->s);
        if (!err && (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "handler", handler,
                                      e, NULL)))
            stvm_socket_close(vm, e->s);
        if (err) {
            fail(vm, m, "acceptor", "stvm_tcp_accept or stvm_spawn", err);
            return;
        }
        m->accepted++;
    }
}

/* ---- the clients --------------------------------------------------------------------------- */

/* A read of exactly len bytes, where the end of the stream is a failure. */
static int64_t expect(stvm_vm *vm, stvm_stream *st, uint8_t *buf, size_t len)
{
    int64_t n = read_full(vm, st, buf, len);
    return n == (int64_t)len ? 0 : n < 0 ? n : STVM_ECLOSED;
}

/* Connect, warm up, wait for the greeting, exchange: 0, or an error and *what. */
static int64_t client_talk(stvm_vm *vm, conn_end *e, const char **what)
{
    many *m = e->m;
    size_t len = (size_t)m->p->message_bytes;
    uint8_t out[MAX_MESSAGE], in[MAX_MESSAGE];
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)(i + (size_t)(e - m->clients));
    *what = "stvm_tcp_connect";
    int64_t err = stvm_tcp_connect(vm, "127.0.0.1", m->port, m->p->timeout_ms, &e->s);
    if (err)
        return err;
    *what = "stvm_stream_open";
    if ((err = stvm_stream_open(vm, e->s, m->p->timeout_ms, &e->st)))
        return err;
    /* The warm-up exchange, then blocked in a read until the greeting. */
    *what = "the warm-up exchange";
    if ((err = send_message(vm, e->st, out, len)) || (err = expect(vm, e->st, in, len)))
        return err;
    m->clients_warm++;
    *what = "the greeting";
    if ((err = expect(vm, e->st, in, 1)))
        return err;
    *what = "an exchange";
    for (int k = 0; k < m->p->messages; k++) {
        out[0] = (uint8_t)k;
        if ((err = send_message(vm, e->st, out, len)) || (err = expect(vm, e->st, in, len)))
            return err;
        if (memcmp(in, out, len) != 0) {
            *what = "the echo (wrong bytes came back)";
            return STVM_ESTATE;
        }
    }
    return 0;
}

static void client(stvm_vm *vm, void *arg)
{
    conn_end *e = arg;
    many *m = e->m;
    const char *what = "";
    int64_t err = client_talk(vm, e, &what);
    if (err)
        fail(vm, m, "client", what, err);
    if (e->s)
        stvm_socket_close(vm, e->s);    /* its stream goes with it */
    e->s = NULL;
    e->st = NULL;
    if (++m->clients_done == m->p->connections)
        stvm_semaphore_signal(vm, m->done);
}

/* ---- the coordinator ------------------------------------------------------------------------- */

static void wait_until_warm(stvm_vm *vm, many *m)
{
    while (!m->err && (m->clients_warm < m->spawned || m->handlers_warm < m->spawned))
        stvm_delay_wait_ms(vm, 1);
}

static void coordinator(stvm_vm *vm, void *arg)
{
    many *m = arg;
    io_many_result *r = m->r;
    stvm_stats st;
    malloc_trim(0);   /* what earlier VMs freed goes back, so that RSS counts anew */
    stvm_get_stats(vm, &st);
    r->live_before = st.bytes_live;
    r->rss_before = bench_rss_bytes();
    int err = stvm_spawn(vm, STVM_PRIORITY_USER_INTERRUPT, "acceptor", acceptor, m, NULL);
    if (err)
        fail(vm, m, "coordinator", "stvm_spawn", err);
    long n = m->p->connections;
    for (long i = 0; i < n && !m->err; i++) {
        m->clients[i].m = m;
        if ((err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "client", client,
                              &m->clients[i], NULL))) {
            fail(vm, m, "coordinator", "stvm_spawn", err);
            break;
        }
        m->spawned++;
        if (m->spawned % BATCH == 0 || m->spawned == n)
            wait_until_warm(vm, m);
        if (m->p->tag && (m->spawned % PROGRESS_EVERY == 0 || m->spawned == n))
            bench_progress("[%s] %ld of %ld connections open", m->p->tag, m->spawned, n);
    }
    if (m->err) {
        stvm_stop(vm);
        return;
    }
    /* Every connection open, every process blocked in a read. */
    r->rss_after = bench_rss_bytes();
    stvm_get_stats(vm, &st);
    r->live_after = st.bytes_live;
    r->connected = n;
    if (m->p->tag)
        bench_progress("[%s] %ld connections open; exchanging %d messages each", m->p->tag,
                       n, m->p->messages);
    io_snapshot a, b;
    io_snapshot_take(vm, &a);
    const uint8_t greeting = 'g';
    for (long i = 0; i < n && !m->err; i++)
        if ((err = (int)send_message(vm, m->servers[i].st, &greeting, 1)))
            fail(vm, m, "coordinator", "the greeting", err);
    if (!m->err)
        stvm_semaphore_wait(vm, m->done);
    io_snapshot_take(vm, &b);
    io_counts_between(&a, &b, &r->counts);
    r->counts.round_trips = (long long)n * m->p->messages;
    if (m->err)
        stvm_stop(vm);
}

int io_many_run(const io_many_params *p, io_many_result *r, char *why, size_t whysize)
{
    *r = (io_many_result){0};
    if (p->message_bytes < 1 || p->message_bytes > MAX_MESSAGE || p->connections < 1) {
        snprintf(why, whysize, "message size 1..%d bytes and at least one connection",
                 MAX_MESSAGE);
        return STVM_EINVAL;
    }
    size_t n = (size_t)p->connections;
    many m = {.p = p, .r = r, .servers = calloc(n, sizeof(conn_end)),
              .clients = calloc(n, sizeof(conn_end))};
    if (!m.servers || !m.clients) {
        free(m.servers);
        free(m.clients);
        snprintf(why, whysize, "out of memory for %zu connections", n);
        return STVM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)  /* touched now, so not counted as the VM's */
        m.servers[i] = m.clients[i] = (conn_end){.m = &m};
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.idle_mode = p->idle_mode;
    /* Three external semaphores per socket, both ends in this VM, and the listener. */
    long slots = 3 * (2 * p->connections + 1) + 16;
    cfg.external_table_size = slots < 65536 ? (int)slots : 65536;
    stvm_vm *vm = NULL;
    int err = stvm_vm_new(&vm, &cfg);
    const char *what = "stvm_vm_new";
    if (!err && (what = "stvm_semaphore_new", err = stvm_semaphore_new(vm, &m.done)) == 0 &&
        (what = "stvm_tcp_listen",
         err = stvm_tcp_listen(vm, "127.0.0.1", 0,
                               p->connections < 65535 ? (int)p->connections : 65535,
                               &m.listener)) == 0) {
        m.port = stvm_socket_port(m.listener);
        what = "stvm_spawn";
        err = stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "coordinator", coordinator, &m,
                         NULL);
        if (!err) {
            what = "stvm_run";
            err = stvm_run(vm);
        }
    }
    if (p->tag)
        fputc('\n', stderr);
    if (m.err) {
        snprintf(why, whysize, "%s", m.why);
        err = m.err;
    } else if (err) {
        snprintf(why, whysize, "%s: %s", what, stvm_err_name(err));
    }
    stvm_vm_free(vm);               /* closes what is still open */
    free(m.servers);
    free(m.clients);
    return err;
}
