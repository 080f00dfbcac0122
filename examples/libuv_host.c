/*
 * stvm inside a libuv program: an HTTP/1.1 keep-alive server of green processes, driven
 * by a libuv loop that also runs code of its own on the same thread.
 *
 * The VM is embedded the way docs/io.md describes: a uv_poll watches stvm_backend_fd(vm)
 * for reading, a uv_timer is armed from stvm_backend_timeout_ms(vm) after every run, and
 * either one calls stvm_run_mode(vm, STVM_RUN_NOWAIT) (or STVM_RUN_ONCE). A second,
 * independent uv_timer ticks meanwhile: its count shows whether the VM leaves the loop
 * its turn. --driver plain runs the same server under stvm_run for comparison.
 *
 *   libuv_host                       the self-test (make check): serve on a free port and
 *                                    make 200 keep-alive requests to it with a libuv TCP
 *                                    client in the same loop, check every answer, exit
 *   libuv_host --port 8080 [--driver uv|plain] [--run-mode nowait|once] [--max-seconds S]
 *                                    serve until SIGINT/SIGTERM or S seconds
 *   libuv_host --self-test N [...]   the self-test with N requests and the options given
 *   libuv_host --pipe-latency N      how long a green process waiting on a pipe with
 *                                    stvm_fd_wait takes to wake after a byte is written
 *
 * Every run ends with one "summary:" line of key=value fields (scripts parse it).
 * Only this example includes <uv.h>; the library knows nothing of libuv.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <stvm.h>
#include <uv.h>

#define REQ_CAP 8192          /* a request's head must fit: wrk's and curl's are ~100 B */
#define BACKLOG 1024          /* wrk opens its connections at once */
#define SELF_TEST_DEFAULT 200
#define SELF_TEST_MAX_SECONDS 10.0   /* a self-test that hangs fails instead */

static const char BODY[] = "hello, world\n";
static const char RESPONSE[] = "HTTP/1.1 200 OK\r\n"
                               "Content-Type: text/plain\r\n"
                               "Content-Length: 13\r\n"
                               "Connection: keep-alive\r\n"
                               "\r\n"
                               "hello, world\n";
static const char RESPONSE_CLOSE[] = "HTTP/1.1 200 OK\r\n"
                                     "Content-Type: text/plain\r\n"
                                     "Content-Length: 13\r\n"
                                     "Connection: close\r\n"
                                     "\r\n"
                                     "hello, world\n";
static const char RESPONSE_TOO_BIG[] = "HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                       "Content-Length: 0\r\n"
                                       "Connection: close\r\n"
                                       "\r\n";

/* ---- Options ----------------------------------------------------------------------- */

typedef struct options {
    const char *driver;       /* "uv" or "plain" */
    int run_mode;             /* STVM_RUN_NOWAIT or STVM_RUN_ONCE */
    int port;                 /* 0: a free one */
    double max_seconds;       /* 0: no limit */
    int self_test;            /* requests the built-in client makes; 0: none */
    int pipe_latency;         /* wake-ups to measure per row; 0: not this mode */
    unsigned side_timer_ms;   /* the independent libuv timer's period */
} options;

static const char *mode_name(int mode)
{
    return mode == STVM_RUN_ONCE ? "once" : mode == STVM_RUN_NOWAIT ? "nowait" : "default";
}

static void usage(FILE *f)
{
    fprintf(f, "usage: libuv_host [--driver uv|plain] [--run-mode nowait|once] [--port N]\n"
               "                  [--max-seconds S] [--self-test N] [--side-timer-ms MS]\n"
               "       libuv_host --pipe-latency N\n"
               "no arguments: --self-test %d --run-mode nowait --side-timer-ms 1 (a bounded demo)\n",
            SELF_TEST_DEFAULT);
}

static bool parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.driver = "uv", .run_mode = STVM_RUN_NOWAIT, .side_timer_ms = 100};
    if (argc == 1) {
        /* make check runs every example without arguments, so this must be a bounded
         * demo, in the mode a host loop's callbacks use (NOWAIT never blocks the host). */
        o->self_test = SELF_TEST_DEFAULT;
        /* The 200 requests take a few ms: a 1 ms side timer still gets its turns in
         * between, which is the point of the demo. */
        o->side_timer_ms = 1;
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "libuv_host: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--driver") && (!strcmp(v, "uv") || !strcmp(v, "plain"))) {
            o->driver = v;
        } else if (!strcmp(a, "--run-mode") && !strcmp(v, "nowait")) {
            o->run_mode = STVM_RUN_NOWAIT;
        } else if (!strcmp(a, "--run-mode") && !strcmp(v, "once")) {
            o->run_mode = STVM_RUN_ONCE;
        } else if (!strcmp(a, "--port") && parse_int(v, 0, 65535, &n)) {
            o->port = (int)n;
        } else if (!strcmp(a, "--self-test") && parse_int(v, 1, 10000000, &n)) {
            o->self_test = (int)n;
        } else if (!strcmp(a, "--pipe-latency") && parse_int(v, 1, 100000, &n)) {
            o->pipe_latency = (int)n;
        } else if (!strcmp(a, "--side-timer-ms") && parse_int(v, 1, 60000, &n)) {
            o->side_timer_ms = (unsigned)n;
        } else if (!strcmp(a, "--max-seconds")) {
            char *end;
            o->max_seconds = strtod(v, &end);
            if (end == v || *end || !(o->max_seconds >= 0) || o->max_seconds > 86400) {
                fprintf(stderr, "libuv_host: bad --max-seconds %s\n", v);
                return -1;
            }
        } else {
            fprintf(stderr, "libuv_host: bad option %s %s\n", a, v);
            return -1;
        }
    }
    if (o->self_test && strcmp(o->driver, "uv")) {
        fprintf(stderr, "libuv_host: --self-test needs --driver uv (its client is libuv's)\n");
        return -1;
    }
    if (o->self_test && o->run_mode == STVM_RUN_ONCE) {
        /* ONCE waits in the OS until something is due, inside the loop's callback: the
         * client in that same loop could never send what the VM waits for. */
        fprintf(stderr, "libuv_host: --self-test needs --run-mode nowait (a ONCE run would "
                        "block the loop its client lives in)\n");
        return -1;
    }
    return 0;
}

/* ---- Time --------------------------------------------------------------------------- */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru))
        return -1;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* ---- The server: green processes ------------------------------------------------- */

typedef struct server {
    stvm_socket *listener;
    int port;
    uint64_t requests, connections, resets, errors;
    double max_seconds;
    bool ended_by_deadline;
} server;

typedef struct conn {
    server *srv;
    stvm_socket *sock;
    size_t len;
    char buf[REQ_CAP];   /* on the heap: a process has a 16 KiB stack */
} conn;

static void report(server *srv, const char *what, int64_t err)
{
    fprintf(stderr, "libuv_host: %s: %s\n", what, stvm_strerror((int)err));
    srv->errors++;
}

/* Case-insensitive search in the head only (the body never matters here). */
static bool head_has(const char *head, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++) {
        size_t j = 0;
        while (j < n && (head[i + j] | 0x20) == (needle[j] | 0x20))
            j++;
        if (j == n)
            return true;
    }
    return false;
}

static const char *find_end_of_head(const char *buf, size_t len)
{
    for (size_t i = 0; i + 4 <= len; i++)
        if (!memcmp(buf + i, "\r\n\r\n", 4))
            return buf + i + 4;
    return NULL;
}

/* Runs when the handler ends and, for handlers still waiting, in stvm_vm_free after a
 * stop: the only way memory of a process that never returns is given back. The socket
 * is not touched here: stvm_vm_free closes the sockets left open after the processes
 * are gone. */
static void conn_free(stvm_vm *vm, void *arg)
{
    (void)vm;
    free(arg);
}

/* Send all of a response; false when the connection is over. */
static bool send_all(stvm_vm *vm, conn *c, const char *data, size_t len)
{
    int64_t r = stvm_socket_send(vm, c->sock, data, len, -1);
    if (r == (int64_t)len)
        return true;
    if (r == STVM_ECONNRESET || r == STVM_EPIPE)
        c->srv->resets++;
    else
        report(c->srv, "send", r < 0 ? r : STVM_EPROTO);
    return false;
}

/* One connection: read heads up to CRLF CRLF (several may come in one read), answer
 * each, until the client closes or asks to. */
static void handle(stvm_vm *vm, void *arg)
{
    conn *c = arg;
    server *srv = c->srv;
    int err = stvm_ensure(vm, conn_free, c);
    if (err) {
        report(srv, "ensure", err);
        if ((err = stvm_socket_close(vm, c->sock)))
            report(srv, "close", err);
        free(c);
        return;
    }
    for (;;) {
        const char *end = find_end_of_head(c->buf, c->len);
        if (!end) {
            if (c->len == sizeof c->buf) {
                send_all(vm, c, RESPONSE_TOO_BIG, sizeof RESPONSE_TOO_BIG - 1);
                break;
            }
            int64_t n = stvm_socket_recv(vm, c->sock, c->buf + c->len, sizeof c->buf - c->len,
                                         -1);
            if (n == STVM_EEOF)
                break;                        /* the client closed: the usual end */
            if (n < 0) {
                if (n == STVM_ECONNRESET)
                    srv->resets++;
                else
                    report(srv, "recv", n);
                break;
            }
            c->len += (size_t)n;
            continue;
        }
        size_t head = (size_t)(end - c->buf);
        bool http10 = head_has(c->buf, head, "HTTP/1.0\r\n");
        bool close_it = head_has(c->buf, head, "\r\nconnection: close") ||
                        (http10 && !head_has(c->buf, head, "\r\nconnection: keep-alive"));
        const char *resp = close_it ? RESPONSE_CLOSE : RESPONSE;
        size_t resp_len = close_it ? sizeof RESPONSE_CLOSE - 1 : sizeof RESPONSE - 1;
        if (!send_all(vm, c, resp, resp_len))
            break;
        srv->requests++;
        memmove(c->buf, end, c->len - head);
        c->len -= head;
        if (close_it)
            break;
    }
    if ((err = stvm_socket_close(vm, c->sock)))
        report(srv, "close", err);
    if ((err = stvm_ensure_pop(vm, true)))   /* frees c */
        report(srv, "ensure_pop", err);
}

static void accept_loop(stvm_vm *vm, void *arg)
{
    server *srv = arg;
    for (;;) {
        stvm_socket *s;
        int err = stvm_socket_accept(vm, srv->listener, -1, &s);
        if (err) {
            /* Out of descriptors or memory: say so, let handlers finish, try again. */
            report(srv, "accept", err);
            if ((err = stvm_delay_wait_ms(vm, 10)))
                report(srv, "delay", err);
            continue;
        }
        srv->connections++;
        conn *c = malloc(sizeof *c);
        if (!c) {
            fprintf(stderr, "libuv_host: out of memory for a connection\n");
            srv->errors++;
            if ((err = stvm_socket_close(vm, s)))
                report(srv, "close", err);
            continue;
        }
        c->srv = srv;
        c->sock = s;
        c->len = 0;
        /* Spawned at the acceptor's priority: it runs when the acceptor waits again. */
        if ((err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "conn", handle, c, NULL))) {
            report(srv, "spawn", err);
            free(c);
            if ((err = stvm_socket_close(vm, s)))
                report(srv, "close", err);
        }
    }
}

/* --max-seconds under stvm_run: a Delay in the VM, so that the bound also gives the uv
 * driver's timer a real deadline to wait for (stvm_backend_timeout_ms). */
static void deadline(stvm_vm *vm, void *arg)
{
    server *srv = arg;
    int err = stvm_delay_wait_ms(vm, (int64_t)(srv->max_seconds * 1000 + 0.5));
    if (err) {
        report(srv, "deadline delay", err);
        return;
    }
    srv->ended_by_deadline = true;
    stvm_stop(vm);
}

static int server_start(stvm_vm *vm, server *srv, int port)
{
    int err = stvm_tcp_listen(vm, "127.0.0.1", port, BACKLOG, &srv->listener);
    if (err) {
        fprintf(stderr, "libuv_host: listen on 127.0.0.1:%d: %s\n", port, stvm_strerror(err));
        return err;
    }
    srv->port = stvm_socket_port(srv->listener);
    if (srv->port < 0) {
        fprintf(stderr, "libuv_host: socket_port: %s\n", stvm_strerror(srv->port));
        return srv->port;
    }
    if ((err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "accept", accept_loop, srv, NULL))) {
        fprintf(stderr, "libuv_host: spawn accept: %s\n", stvm_strerror(err));
        return err;
    }
    /* Above the handlers, so the bound is kept however busy they are. */
    if (srv->max_seconds > 0 &&
        (err = stvm_spawn(vm, STVM_PRIORITY_USER_INTERRUPT, "deadline", deadline, srv, NULL))) {
        fprintf(stderr, "libuv_host: spawn deadline: %s\n", stvm_strerror(err));
        return err;
    }
    printf("listening on 127.0.0.1:%d\n", srv->port);
    fflush(stdout);   /* scripts wait for this line through a pipe */
    return STVM_OK;
}

/* ---- Signals ------------------------------------------------------------------------ */

/* One handler for both drivers: stvm_stop is async-signal-safe. Under stvm_run it ends
 * the run; between the uv driver's runs it makes the backend descriptor readable, and
 * the next run answers STVM_ESTOPPED, which ends the loop: libuv needs no signal handle
 * of its own. */
static stvm_vm *volatile signal_vm;

static void on_signal(int sig)
{
    (void)sig;
    stvm_stop(signal_vm);
}

static int install_signals(stvm_vm *vm)
{
    signal_vm = vm;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
        perror("libuv_host: sigaction");
        return -1;
    }
    return 0;
}

/* ---- The uv driver ------------------------------------------------------------------ */

typedef struct host host;
typedef void (*after_run_fn)(host *h);

typedef struct client {
    uv_tcp_t tcp;
    uv_connect_t connect;
    uv_write_t write;
    host *h;
    int wanted, answered;
    size_t len;
    char buf[4096];
} client;

struct host {
    uv_loop_t loop;
    stvm_vm *vm;
    int mode;
    uv_poll_t poll;       /* stvm_backend_fd readable */
    uv_timer_t vm_timer;  /* stvm_backend_timeout_ms */
    uv_timer_t side;      /* the loop's own work, independent of the VM */
    uv_timer_t bound;     /* --self-test's safety limit */
    uv_handle_t *extra[4]; /* further handles of the loop, closed with the rest */
    int nextra;
    bool closing;
    uint64_t poll_callbacks, timer_callbacks, side_ticks, vm_runs;
    int failed;           /* an error ended the loop */
    const char *ended_by;
    after_run_fn after_run;
    void *user;
};

static void closed(uv_handle_t *handle)
{
    (void)handle;
}

/* Close every handle; uv_run returns once their close callbacks have run. The uv_poll
 * must go before the VM (and its epoll descriptor) does. */
static void host_shutdown(host *h, const char *why)
{
    if (h->closing)
        return;
    h->closing = true;
    h->ended_by = why;
    uv_close((uv_handle_t *)&h->poll, closed);
    uv_close((uv_handle_t *)&h->vm_timer, closed);
    for (int i = 0; i < h->nextra; i++)
        if (!uv_is_closing(h->extra[i]))
            uv_close(h->extra[i], closed);
}

static void host_adopt(host *h, uv_handle_t *handle)
{
    if (h->nextra == (int)(sizeof h->extra / sizeof h->extra[0])) {
        fprintf(stderr, "libuv_host: more handles than host.extra holds\n");
        abort();   /* a programming error: it would leave a handle open */
    }
    h->extra[h->nextra++] = handle;
}

static void vm_timer_cb(uv_timer_t *t);

/* One VM run, then the timer set to what the VM says it waits for next. */
static void vm_turn(host *h)
{
    if (h->closing)
        return;
    int r = stvm_run_mode(h->vm, h->mode);
    h->vm_runs++;
    if (r == STVM_ESTOPPED) {
        host_shutdown(h, "stop");
        return;
    }
    if (r < 0) {
        fprintf(stderr, "libuv_host: stvm_run_mode(%s): %s\n", mode_name(h->mode),
                stvm_strerror(r));
        h->failed = 1;
        host_shutdown(h, "error");
        return;
    }
    if (h->after_run)
        h->after_run(h);
    if (r == 0) {   /* every user process finished: nothing left for the loop to drive */
        host_shutdown(h, "finished");
        return;
    }
    if (h->closing)
        return;
    int ms = stvm_backend_timeout_ms(h->vm);
    int e;
    if (ms < 0)
        e = uv_timer_stop(&h->vm_timer);   /* no deadline: the descriptor alone wakes it */
    else
        e = uv_timer_start(&h->vm_timer, vm_timer_cb, (uint64_t)ms, 0);
    if (e) {
        fprintf(stderr, "libuv_host: vm timer: %s\n", uv_strerror(e));
        h->failed = 1;
        host_shutdown(h, "error");
    }
}

static void poll_cb(uv_poll_t *p, int status, int events)
{
    (void)events;
    host *h = p->data;
    h->poll_callbacks++;
    if (status < 0) {
        fprintf(stderr, "libuv_host: uv_poll on stvm_backend_fd: %s\n", uv_strerror(status));
        h->failed = 1;
        host_shutdown(h, "error");
        return;
    }
    vm_turn(h);
}

static void vm_timer_cb(uv_timer_t *t)
{
    host *h = t->data;
    h->timer_callbacks++;
    vm_turn(h);
}

static void side_cb(uv_timer_t *t)
{
    host *h = t->data;
    h->side_ticks++;
}

static void bound_cb(uv_timer_t *t)
{
    host *h = t->data;
    fprintf(stderr, "libuv_host: self-test still running after %.0f s\n", SELF_TEST_MAX_SECONDS);
    h->failed = 1;
    host_shutdown(h, "time-limit");
}

static int uv_check(int e, const char *what)
{
    if (e)
        fprintf(stderr, "libuv_host: %s: %s\n", what, uv_strerror(e));
    return e;
}

static int host_init(host *h, stvm_vm *vm, int mode)
{
    memset(h, 0, sizeof *h);
    h->vm = vm;
    h->mode = mode;
    h->ended_by = "?";
    int fd = stvm_backend_fd(vm);
    if (fd < 0) {
        fprintf(stderr, "libuv_host: stvm_backend_fd: %s\n", stvm_strerror(fd));
        return -1;
    }
    if (uv_check(uv_loop_init(&h->loop), "uv_loop_init"))
        return -1;
    if (uv_check(uv_poll_init(&h->loop, &h->poll, fd), "uv_poll_init") ||
        uv_check(uv_timer_init(&h->loop, &h->vm_timer), "uv_timer_init")) {
        uv_loop_close(&h->loop);
        return -1;
    }
    h->poll.data = h;
    h->vm_timer.data = h;
    return 0;
}

/* Watch the backend descriptor, and nothing else: the processes spawned before this are
 * ready, which makes it readable, so the loop's first turn runs the VM; from then on the
 * VM's own answers (descriptor, timeout) decide when it runs. */
static int host_start(host *h)
{
    return uv_check(uv_poll_start(&h->poll, UV_READABLE, poll_cb), "uv_poll_start");
}

/* Start the host and run its loop until every handle is closed; ok false (the set-up
 * failed) shuts it down instead, so that the handles already open are closed. Answers
 * -1 on any failure. */
static int host_run(host *h, bool ok)
{
    if (!ok || host_start(h)) {
        h->failed = 1;
        host_shutdown(h, "error");
    }
    int e = uv_run(&h->loop, UV_RUN_DEFAULT);
    (void)e;   /* nonzero only if handles remain: uv_loop_close says which */
    if ((e = uv_loop_close(&h->loop))) {
        fprintf(stderr, "libuv_host: uv_loop_close: %s (a handle left open)\n", uv_strerror(e));
        return -1;
    }
    return h->failed ? -1 : 0;
}

/* ---- The self-test's client: libuv TCP in the same loop ---------------------------- */

static const char REQUEST[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

static void client_send(client *c);

static void client_fail(client *c, const char *what)
{
    fprintf(stderr, "libuv_host: self-test client: %s (after %d answers)\n", what, c->answered);
    c->h->failed = 1;
    host_shutdown(c->h, "client-error");
}

static void client_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    client *c = handle->data;
    *buf = uv_buf_init(c->buf + c->len, (unsigned)(sizeof c->buf - c->len));
}

/* Check each complete answer: status line, Content-Length, body. */
static void client_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    client *c = s->data;
    if (nread == 0)
        return;   /* EAGAIN: nothing this time */
    if (nread < 0) {
        client_fail(c, nread == UV_EOF ? "the server closed the connection"
                                       : uv_strerror((int)nread));
        return;
    }
    c->len += (size_t)nread;
    const char *end = find_end_of_head(c->buf, c->len);
    if (!end) {
        if (c->len == sizeof c->buf)
            client_fail(c, "an answer's head does not fit 4 KiB");
        return;
    }
    size_t head = (size_t)(end - c->buf);
    static const char status[] = "HTTP/1.1 200 OK\r\n";
    if (c->len < sizeof status - 1 || memcmp(c->buf, status, sizeof status - 1)) {
        client_fail(c, "the answer is not HTTP/1.1 200 OK");
        return;
    }
    const char *cl = NULL;
    for (size_t i = 0; i + 16 <= head; i++)
        if (!strncmp(c->buf + i, "Content-Length: ", 16)) {
            cl = c->buf + i + 16;
            break;
        }
    if (!cl || !head_has(c->buf, head, "\r\nconnection: keep-alive")) {
        client_fail(c, "no Content-Length or no keep-alive in the answer");
        return;
    }
    size_t body = (size_t)strtoul(cl, NULL, 10);
    if (c->len < head + body)
        return;   /* the rest of the body is still coming */
    if (body != sizeof BODY - 1 || memcmp(end, BODY, body)) {
        client_fail(c, "wrong body");
        return;
    }
    /* One request at a time, so anything after the answer is the server's mistake. */
    if (c->len != head + body) {
        client_fail(c, "bytes after the answer (none was asked for)");
        return;
    }
    c->len = 0;
    c->answered++;
    if (c->answered == c->wanted)
        host_shutdown(c->h, "self-test");
    else
        client_send(c);
}

static void client_written(uv_write_t *w, int status)
{
    client *c = w->data;
    if (status < 0 && !c->h->closing)
        client_fail(c, uv_strerror(status));
}

/* One request at a time: keep-alive, not pipelining. */
static void client_send(client *c)
{
    uv_buf_t b = uv_buf_init((char *)REQUEST, sizeof REQUEST - 1);
    c->write.data = c;
    int e = uv_write(&c->write, (uv_stream_t *)&c->tcp, &b, 1, client_written);
    if (e)
        client_fail(c, uv_strerror(e));
}

static void client_connected(uv_connect_t *req, int status)
{
    client *c = req->data;
    if (status < 0) {
        client_fail(c, uv_strerror(status));
        return;
    }
    int e = uv_read_start((uv_stream_t *)&c->tcp, client_alloc, client_read);
    if (e) {
        client_fail(c, uv_strerror(e));
        return;
    }
    client_send(c);
}

static int client_start(host *h, client *c, int port, int requests)
{
    memset(c, 0, sizeof *c);
    c->h = h;
    c->wanted = requests;
    struct sockaddr_in addr;
    if (uv_check(uv_ip4_addr("127.0.0.1", port, &addr), "uv_ip4_addr") ||
        uv_check(uv_tcp_init(&h->loop, &c->tcp), "uv_tcp_init"))
        return -1;
    host_adopt(h, (uv_handle_t *)&c->tcp);
    c->tcp.data = c;
    c->connect.data = c;
    return uv_check(uv_tcp_connect(&c->connect, &c->tcp, (const struct sockaddr *)&addr,
                                   client_connected),
                    "uv_tcp_connect");
}

/* ---- Serving: both drivers -------------------------------------------------------- */

static void print_summary(const char *driver, int mode, const server *srv, const host *h,
                          const stvm_stats *st, const char *ended_by, double wall, double cpu)
{
    printf("summary: driver=%s run-mode=%s requests=%llu connections=%llu resets=%llu "
           "errors=%llu host-turns=%llu poll-callbacks=%llu timer-callbacks=%llu "
           "side-ticks=%llu vm-runs=%llu vm-os-sleeps=%llu vm-busy-polls=%llu "
           "cpu-s=%.3f wall-s=%.3f ended-by=%s\n",
           driver, h ? mode_name(mode) : "default", (unsigned long long)srv->requests,
           (unsigned long long)srv->connections, (unsigned long long)srv->resets,
           (unsigned long long)srv->errors,
           (unsigned long long)(h ? h->poll_callbacks + h->timer_callbacks : 0),
           (unsigned long long)(h ? h->poll_callbacks : 0),
           (unsigned long long)(h ? h->timer_callbacks : 0),
           (unsigned long long)(h ? h->side_ticks : 0), (unsigned long long)(h ? h->vm_runs : 1),
           (unsigned long long)st->os_sleeps, (unsigned long long)st->io_polls_busy, cpu, wall,
           ended_by);
    fflush(stdout);
}

static int serve(const options *o)
{
    stvm_vm *vm;
    int err = stvm_vm_create(NULL, &vm);
    if (err) {
        fprintf(stderr, "libuv_host: stvm_vm_create: %s\n", stvm_strerror(err));
        return 1;
    }
    static server srv;
    static host h;
    static client cl;
    bool uv = !strcmp(o->driver, "uv");
    srv.max_seconds = o->max_seconds;
    int64_t t0 = now_ns();
    double cpu0 = cpu_seconds();
    int rc = 0;
    const char *ended_by = "?";
    if (server_start(vm, &srv, o->port) || install_signals(vm)) {
        stvm_vm_free(vm);
        return 1;
    }
    if (!uv) {
        err = stvm_run(vm);
        if (err == STVM_ESTOPPED) {
            ended_by = srv.ended_by_deadline ? "max-seconds" : "signal";
        } else {
            /* The acceptor never finishes, so OK or a deadlock is a bug. */
            fprintf(stderr, "libuv_host: stvm_run: %s\n", stvm_strerror(err));
            ended_by = "error";
            rc = 1;
        }
    } else {
        if (host_init(&h, vm, o->run_mode)) {
            stvm_vm_free(vm);
            return 1;
        }
        bool ok = uv_check(uv_timer_init(&h.loop, &h.side), "uv_timer_init") == 0;
        if (ok) {
            h.side.data = &h;
            host_adopt(&h, (uv_handle_t *)&h.side);
            ok = !uv_check(uv_timer_start(&h.side, side_cb, o->side_timer_ms, o->side_timer_ms),
                           "uv_timer_start");
        }
        if (ok && o->self_test) {
            ok = !uv_check(uv_timer_init(&h.loop, &h.bound), "uv_timer_init");
            if (ok) {
                h.bound.data = &h;
                host_adopt(&h, (uv_handle_t *)&h.bound);
                ok = !uv_check(uv_timer_start(&h.bound, bound_cb,
                                              (uint64_t)(SELF_TEST_MAX_SECONDS * 1000), 0),
                               "uv_timer_start");
            }
            ok = ok && !client_start(&h, &cl, srv.port, o->self_test);
        }
        if (host_run(&h, ok))
            rc = 1;
        ended_by = h.ended_by;
        if (!strcmp(ended_by, "stop"))
            ended_by = srv.ended_by_deadline ? "max-seconds" : "signal";
    }
    double wall = (double)(now_ns() - t0) / 1e9;
    double cpu = cpu_seconds() - cpu0;
    stvm_stats st;
    if ((err = stvm_vm_get_stats(vm, &st))) {
        fprintf(stderr, "libuv_host: stvm_vm_get_stats: %s\n", stvm_strerror(err));
        memset(&st, 0, sizeof st);
        rc = 1;
    }
    if (o->self_test) {
        printf("self-test: %d of %d answers checked, the side timer (every %u ms) ticked "
               "%llu times meanwhile\n",
               cl.answered, o->self_test, o->side_timer_ms, (unsigned long long)h.side_ticks);
        if (cl.answered != o->self_test)
            rc = 1;
    }
    if (srv.errors)
        rc = 1;
    print_summary(o->driver, o->run_mode, &srv, uv ? &h : NULL, &st, ended_by, wall, cpu);
    signal_vm = NULL;
    stvm_vm_free(vm);
    return rc;
}

/* ---- --pipe-latency: wake-up after a write, per driver ------------------------------ */

typedef struct pipe_bench {
    int rfd, wfd;           /* the pipe the green process waits on */
    int ack_r, ack_w;       /* the writer thread waits here for the reader's turn */
    bool thread_writer;
    int n, issued, done;
    _Atomic int64_t written_ns;
    int64_t *lat_ns;
    int errors;
    uint64_t rng;
    uv_timer_t write_timer; /* the uv side's writer, same thread */
    bool timer_armed;
} pipe_bench;

static uint32_t rng_next(uint64_t *s)
{
    /* xorshift64*: a fixed seed, so runs are alike */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * 2685821657736338717ull) >> 32);
}

static void pipe_reader(stvm_vm *vm, void *arg)
{
    pipe_bench *pb = arg;
    for (int i = 0; i < pb->n; i++) {
        int r = stvm_fd_wait(vm, pb->rfd, STVM_IO_READ, -1);
        int64_t woke = now_ns();
        if (r < 0) {
            fprintf(stderr, "libuv_host: stvm_fd_wait: %s\n", stvm_strerror(r));
            pb->errors++;
            return;
        }
        char b;
        if (read(pb->rfd, &b, 1) != 1) {
            perror("libuv_host: pipe read");
            pb->errors++;
            return;
        }
        pb->lat_ns[i] = woke - atomic_load(&pb->written_ns);
        pb->done++;
        if (pb->thread_writer && write(pb->ack_w, "a", 1) != 1) {
            perror("libuv_host: ack write");
            pb->errors++;
            return;
        }
    }
}

static void write_byte(pipe_bench *pb)
{
    atomic_store(&pb->written_ns, now_ns());
    if (write(pb->wfd, "x", 1) != 1) {
        perror("libuv_host: pipe write");
        pb->errors++;
    }
    pb->issued++;
}

/* Another OS thread writes at random moments, 0.2 to 3 ms after the previous wake-up. */
static void *pipe_writer_thread(void *arg)
{
    pipe_bench *pb = arg;
    for (int i = 0; i < pb->n; i++) {
        uint32_t us = 200 + rng_next(&pb->rng) % 2800;
        struct timespec ts = {0, (long)us * 1000};
        nanosleep(&ts, NULL);
        write_byte(pb);
        char b;
        if (read(pb->ack_r, &b, 1) != 1)   /* the reader's turn is over (or it failed) */
            break;
    }
    return NULL;
}

static void write_timer_cb(uv_timer_t *t)
{
    host *h = t->data;
    pipe_bench *pb = h->user;
    pb->timer_armed = false;
    write_byte(pb);
}

/* After each run: once the reader has taken the last byte, the uv side writes the next
 * one at a random moment 1 to 3 ms later (libuv's timers count whole milliseconds). */
static void pipe_after_run(host *h)
{
    pipe_bench *pb = h->user;
    if (pb->thread_writer || pb->timer_armed || pb->done != pb->issued || pb->issued >= pb->n)
        return;
    pb->timer_armed = true;
    if (uv_check(uv_timer_start(&pb->write_timer, write_timer_cb, 1 + rng_next(&pb->rng) % 3, 0),
                 "uv_timer_start")) {
        h->failed = 1;
        host_shutdown(h, "error");
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int pipe_row(int n, bool uv, int mode, bool thread_writer)
{
    pipe_bench pb;
    memset(&pb, 0, sizeof pb);
    pb.n = n;
    pb.thread_writer = thread_writer;
    pb.rng = 0x9e3779b97f4a7c15ull;
    pb.lat_ns = calloc((size_t)n, sizeof *pb.lat_ns);
    int fds[2], ack[2] = {-1, -1};
    if (!pb.lat_ns || pipe(fds) || (thread_writer && pipe(ack))) {
        perror("libuv_host: pipe");
        free(pb.lat_ns);
        return 1;
    }
    pb.rfd = fds[0];
    pb.wfd = fds[1];
    pb.ack_r = ack[0];
    pb.ack_w = ack[1];
    /* The reader reads only after stvm_fd_wait said readable; non-blocking all the same,
     * so that a wrong answer shows as an error instead of a hang. */
    fcntl(pb.rfd, F_SETFL, fcntl(pb.rfd, F_GETFL) | O_NONBLOCK);

    stvm_vm *vm;
    int err = stvm_vm_create(NULL, &vm), rc = 0;
    if (err) {
        fprintf(stderr, "libuv_host: stvm_vm_create: %s\n", stvm_strerror(err));
        return 1;
    }
    if ((err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "reader", pipe_reader, &pb, NULL))) {
        fprintf(stderr, "libuv_host: spawn reader: %s\n", stvm_strerror(err));
        stvm_vm_free(vm);
        return 1;
    }
    pthread_t writer;
    bool writer_on = false;
    if (thread_writer) {
        if ((err = pthread_create(&writer, NULL, pipe_writer_thread, &pb))) {
            fprintf(stderr, "libuv_host: pthread_create: %s\n", strerror(err));
            stvm_vm_free(vm);
            return 1;
        }
        writer_on = true;
    }
    int64_t t0 = now_ns();
    double cpu0 = cpu_seconds();
    static host h;
    if (!uv) {
        if ((err = stvm_run(vm))) {
            fprintf(stderr, "libuv_host: stvm_run: %s\n", stvm_strerror(err));
            rc = 1;
        }
    } else if (host_init(&h, vm, mode)) {
        rc = 1;
    } else {
        h.user = &pb;
        h.after_run = pipe_after_run;
        bool ok = !uv_check(uv_timer_init(&h.loop, &pb.write_timer), "uv_timer_init");
        if (ok) {
            pb.write_timer.data = &h;
            host_adopt(&h, (uv_handle_t *)&pb.write_timer);
        }
        if (host_run(&h, ok))
            rc = 1;
    }
    double wall = (double)(now_ns() - t0) / 1e9, cpu = cpu_seconds() - cpu0;
    if (writer_on) {
        /* A reader that failed never acks: closing the ack pipe ends the writer. */
        close(pb.ack_w);
        pb.ack_w = -1;
        pthread_join(writer, NULL);
    }
    stvm_vm_free(vm);
    close(pb.rfd);
    close(pb.wfd);
    if (pb.ack_r >= 0)
        close(pb.ack_r);
    if (pb.ack_w >= 0)
        close(pb.ack_w);
    const char *label = !uv ? "plain" : mode_name(mode);
    if (pb.errors || pb.done != n) {
        printf("pipe-latency: driver=%s run-mode=%s writer=%s FAILED: %d of %d wake-ups\n",
               uv ? "uv" : "plain", label, thread_writer ? "thread" : "uv-timer", pb.done, n);
        free(pb.lat_ns);
        return 1;
    }
    qsort(pb.lat_ns, (size_t)n, sizeof *pb.lat_ns, cmp_i64);
    printf("pipe-latency: driver=%s run-mode=%s writer=%s n=%d median-us=%.1f max-us=%.1f "
           "cpu-s=%.3f wall-s=%.3f\n",
           uv ? "uv" : "plain", uv ? label : "default", thread_writer ? "thread" : "uv-timer", n,
           (double)pb.lat_ns[n / 2] / 1e3, (double)pb.lat_ns[n - 1] / 1e3, cpu, wall);
    fflush(stdout);
    free(pb.lat_ns);
    return rc;
}

static int pipe_latency(int n)
{
    int rc = 0;
    /* No ONCE row with the loop's own timer writing: ONCE's wait, until something is
     * due, would hold the loop whose timer is that something. */
    rc |= pipe_row(n, true, STVM_RUN_NOWAIT, false);
    rc |= pipe_row(n, true, STVM_RUN_NOWAIT, true);
    rc |= pipe_row(n, true, STVM_RUN_ONCE, true);
    rc |= pipe_row(n, false, STVM_RUN_DEFAULT, true);
    return rc;
}

int main(int argc, char **argv)
{
    if (stvm_version() != STVM_VERSION_HEX) {
        fprintf(stderr, "libuv_host: stvm.h %s does not match the library %s\n",
                STVM_VERSION_STRING, stvm_version_string());
        return 1;
    }
    options o;
    if (parse_options(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    if (o.pipe_latency)
        return pipe_latency(o.pipe_latency);
    if (o.self_test) {
        printf("self-test: stvm %s, libuv %s, driver uv, run mode %s, %d requests\n",
               stvm_version_string(), uv_version_string(), mode_name(o.run_mode), o.self_test);
    }
    return serve(&o);
}
