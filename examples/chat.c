/*
 * chat.c -- a line-based TCP chat server of green processes, on its own or inside a
 * libuv loop (docs/io.md, "Running inside another event loop").
 *
 * Every line a client sends goes to every client, the sender included, as "cN: line".
 * Each connection has two processes: a reader, which reads lines with an idle timeout
 * (the stream's read timeout; its write timeout is set apart, so a slow reader on the
 * other side is not mistaken for an idle one), and a writer, which sends what the
 * connection's outbox (a bounded SharedQueue) holds. Leaving closes the outbox: the
 * writer sends what is left, says "bye cN", shuts its side (the client reads to its end
 * of the stream) and closes. A client that shuts its side after its last line (nc -N,
 * an HTTP/1.0 client, Python's sock.shutdown(SHUT_WR)) still gets every answer. A ticker
 * at a lower priority sends "* tick N" to everyone every --tick-ms.
 *
 *   chat                 the self-test (make check runs it): serve on a free port, drive
 *                        four clients from an OS thread with plain BSD sockets, check
 *                        what each one reads, exit 0 or 1
 *   chat --uv            the same self-test with the VM driven by a libuv loop
 *   chat --port N [--uv] [--idle-ms MS] [--tick-ms MS] [--max-seconds S]
 *                        serve until SIGINT/SIGTERM (or S seconds); try it with
 *                        `printf 'hello\n' | nc -N 127.0.0.1 N` or telnet
 *
 * Every run ends with a "summary:" line (scripts/chat-check.sh reads it).
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <stvm.h>
#include <uv.h>

enum { MAX_CLIENTS = 64, LINE_CAP = 512, OUTBOX = 64 };

typedef struct client client;

typedef struct chat {
    stvm_socket *listener;
    int port;
    int64_t idle_ms, tick_ms;
    client *clients[MAX_CLIENTS];
    int next_id;
    long lines, joined, idle_kicks, dropped, errors;
} chat;

struct client {
    chat *c;
    int id;
    stvm_socket *sock;
    stvm_stream *st;
    stvm_queue *outbox;   /* malloc'd lines, freed by the writer */
    stvm_process *writer;
};

static void complain(chat *c, const char *what, int64_t err)
{
    fprintf(stderr, "chat: %s: %s\n", what, stvm_strerror((int)err));
    c->errors++;
}

/* Queue a copy of text for one client. A client whose outbox is full reads too slowly:
 * it misses the line rather than holding everyone up. */
static void tell(stvm_vm *vm, client *to, const char *text)
{
    char *copy = strdup(text);
    if (!copy)
        return;
    int err = stvm_queue_put_timeout_ms(vm, to->outbox, copy, 0);
    if (err) {
        free(copy);
        if (err == STVM_ETIMEDOUT)
            to->c->dropped++;
        else if (err != STVM_ECLOSED)   /* it is leaving: nothing more for it */
            complain(to->c, "put", err);
    }
}

static void tell_all(stvm_vm *vm, chat *c, const char *text)
{
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (c->clients[i])
            tell(vm, c->clients[i], text);
}

/* The writer: the outbox to the socket, until the outbox is closed and empty. */
static void writer(stvm_vm *vm, void *arg)
{
    client *cl = arg;
    void *item;
    int err;
    while ((err = stvm_queue_take(vm, cl->outbox, &item)) == STVM_OK) {
        char *line = item;
        err = stvm_stream_write(vm, cl->st, line, strlen(line));
        if (!err)
            err = stvm_stream_flush(vm, cl->st);
        free(line);
        if (err && err != STVM_ECONNRESET && err != STVM_EPIPE)
            complain(cl->c, "write", err);
    }
    if (err != STVM_EEOF)
        complain(cl->c, "take", err);
    /* Our side is done: the client reads what was sent, then its end of the stream. */
    err = stvm_socket_shutdown(vm, cl->sock, SHUT_WR);
    if (err && err != STVM_ECONNRESET && err != STVM_EPIPE)   /* gone without reading */
        complain(cl->c, "shutdown", err);
}

static void free_line(void *item, void *arg)
{
    (void)arg;
    free(item);
}

/* Runs when the reader ends, or in stvm_vm_free for a reader still waiting then (a
 * stop while clients are connected): the lines nobody will send, and the client. The
 * VM itself frees the queue and closes the socket it still holds. */
static void client_gone(stvm_vm *vm, void *arg)
{
    client *cl = arg;
    if (cl->outbox)
        stvm_queue_flush(vm, cl->outbox, free_line, NULL);
    free(cl);
}

/* The reader: one per connection, from accept to the end of the connection. */
static void reader(stvm_vm *vm, void *arg)
{
    client *cl = arg;
    chat *c = cl->c;
    char line[LINE_CAP], text[LINE_CAP + 32];
    int err = stvm_ensure(vm, client_gone, cl);
    if (err) {
        complain(c, "ensure", err);
        stvm_socket_close(vm, cl->sock);
        free(cl);
        return;
    }
    err = stvm_stream_open(vm, cl->sock, -1, &cl->st);
    if (!err)
        err = stvm_stream_set_read_timeout_ms(vm, cl->st, c->idle_ms);
    if (!err)
        err = stvm_stream_set_write_timeout_ms(vm, cl->st, 5000);
    if (!err)
        err = stvm_queue_new(vm, OUTBOX, &cl->outbox);
    if (!err)
        err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "writer", writer, cl, &cl->writer);
    if (err) {
        complain(c, "connection set-up", err);
        stvm_socket_close(vm, cl->sock);   /* its stream too */
        stvm_ensure_pop(vm, true);         /* frees the outbox's lines and cl */
        return;
    }
    c->clients[cl->id % MAX_CLIENTS] = cl;
    c->joined++;
    snprintf(text, sizeof text, "welcome c%d\n", cl->id);
    tell(vm, cl, text);
    int64_t n;
    while ((n = stvm_stream_read_line(vm, cl->st, line, sizeof line)) >= 0) {
        if (!strcmp(line, "/quit"))
            break;
        snprintf(text, sizeof text, "c%d: %s\n", cl->id, line);
        tell_all(vm, c, text);
        c->lines++;
    }
    if (n == STVM_ETIMEDOUT) {
        snprintf(text, sizeof text, "idle for %lld ms\n", (long long)c->idle_ms);
        tell(vm, cl, text);
        c->idle_kicks++;
    } else if (n < 0 && n != STVM_EEOF && n != STVM_ECONNRESET) {
        complain(c, "read", n);
    }
    /* Leave: no more lines to us; the others hear of it; the writer finishes. */
    c->clients[cl->id % MAX_CLIENTS] = NULL;
    snprintf(text, sizeof text, "bye c%d\n", cl->id);
    tell(vm, cl, text);
    snprintf(text, sizeof text, "c%d left\n", cl->id);
    tell_all(vm, c, text);
    if ((err = stvm_queue_close(vm, cl->outbox)))
        complain(c, "close outbox", err);
    if ((err = stvm_process_join(vm, cl->writer, -1)))
        complain(c, "join writer", err);
    if ((err = stvm_queue_free(vm, cl->outbox, free_line, NULL)))
        complain(c, "free outbox", err);
    cl->outbox = NULL;
    if ((err = stvm_socket_close(vm, cl->sock)))
        complain(c, "close", err);
    stvm_ensure_pop(vm, true);   /* frees cl */
}

static void acceptor(stvm_vm *vm, void *arg)
{
    chat *c = arg;
    for (;;) {
        stvm_socket *s;
        int err = stvm_socket_accept(vm, c->listener, -1, &s);
        if (err) {
            complain(c, "accept", err);   /* out of descriptors: wait for some to free */
            stvm_delay_wait_ms(vm, 100);
            continue;
        }
        client *cl = calloc(1, sizeof *cl);
        bool full = c->clients[c->next_id % MAX_CLIENTS] != NULL;
        if (!cl || full) {
            free(cl);
            stvm_socket_close(vm, s);
            c->errors += !cl;
            continue;
        }
        *cl = (client){.c = c, .id = c->next_id++, .sock = s};
        char name[32];
        snprintf(name, sizeof name, "c%d", cl->id);
        stvm_socket_set_name(vm, s, name);   /* the blocked report and traces say "c3" */
        if ((err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, name, reader, cl, NULL))) {
            complain(c, "spawn", err);
            stvm_socket_close(vm, s);
            free(cl);
        }
    }
}

static void ticker(stvm_vm *vm, void *arg)
{
    chat *c = arg;
    char text[64];
    for (long n = 1; stvm_delay_wait_ms(vm, c->tick_ms) == STVM_OK; n++) {
        snprintf(text, sizeof text, "* tick %ld\n", n);
        tell_all(vm, c, text);
    }
}

/* ---- The self-test's clients: an OS thread with plain blocking BSD sockets ---------- */

typedef struct self_test {
    stvm_vm *vm;
    int port;
    int failures;
} self_test;

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timeval tv = {.tv_sec = 5};   /* a hung server fails the test, not the run */
    if (fd >= 0 && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) ||
                    connect(fd, (struct sockaddr *)&a, sizeof a))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The next line from fd that is not a tick, without its LF; "" at the end of the stream,
 * "?" on an error. One byte at a time: simple, and the test is small. */
static const char *next_line(int fd, char *buf, size_t cap)
{
    for (;;) {
        size_t n = 0;
        char ch;
        ssize_t r;
        while ((r = read(fd, &ch, 1)) == 1 && ch != '\n')
            if (n + 1 < cap)
                buf[n++] = ch;
        buf[n] = 0;
        if (r < 0)
            return "?";
        if (r == 0 && n == 0)
            return "";
        if (buf[0] != '*')
            return buf;
    }
}

static void expect(self_test *t, int fd, const char *who, const char *want)
{
    char buf[LINE_CAP];
    const char *got = next_line(fd, buf, sizeof buf);
    if (strcmp(got, want)) {
        printf("FAIL: %s read \"%s\", expected \"%s\"\n", who, got, want);
        t->failures++;
    }
}

static void say(int fd, const char *text)
{
    if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        perror("chat self-test: write");
}

static void *self_test_clients(void *arg)
{
    self_test *t = arg;
    int a = dial(t->port);
    int b = a >= 0 ? dial(t->port) : -1;
    if (b < 0) {
        printf("FAIL: cannot connect to 127.0.0.1:%d\n", t->port);
        t->failures++;
        stvm_stop(t->vm);
        return NULL;
    }
    expect(t, a, "a", "welcome c0");
    expect(t, b, "b", "welcome c1");
    say(a, "hello from a\n");
    expect(t, a, "a", "c0: hello from a");
    expect(t, b, "b", "c0: hello from a");
    /* c: two lines, then its side shut at once (nc -N): the answers still come. */
    int c = dial(t->port);
    expect(t, c, "c", "welcome c2");
    say(c, "one\ntwo\n");
    shutdown(c, SHUT_WR);
    expect(t, c, "c", "c2: one");
    expect(t, c, "c", "c2: two");
    expect(t, c, "c", "bye c2");
    expect(t, c, "c", "");   /* then the end of the stream */
    expect(t, b, "b", "c2: one");
    expect(t, b, "b", "c2: two");
    expect(t, b, "b", "c2 left");
    say(b, "/quit\n");
    expect(t, b, "b", "bye c1");
    expect(t, b, "b", "");
    expect(t, a, "a", "c2: one");   /* what a was sent meanwhile, in order */
    expect(t, a, "a", "c2: two");
    expect(t, a, "a", "c2 left");
    expect(t, a, "a", "c1 left");
    say(a, "/quit\n");
    expect(t, a, "a", "bye c0");
    expect(t, a, "a", "");
    /* d: says nothing, and is shown the door after the idle time. */
    int d = dial(t->port);
    expect(t, d, "d", "welcome c3");
    expect(t, d, "d", "idle for 300 ms");
    expect(t, d, "d", "bye c3");
    expect(t, d, "d", "");
    close(a), close(b), close(c), close(d);
    stvm_stop(t->vm);   /* any thread may stop the VM */
    return NULL;
}

/* ---- Driving the VM: stvm_run, or a libuv loop -------------------------------------- */

static stvm_vm *volatile signal_vm;

static void on_signal(int sig)
{
    (void)sig;
    stvm_stop(signal_vm);   /* async-signal-safe */
}

typedef struct uv_driver {
    stvm_vm *vm;
    uv_poll_t poll;
    uv_timer_t timer;
    int rc;
} uv_driver;

static void uv_turn(uv_driver *d);

static void on_poll(uv_poll_t *p, int status, int events)
{
    (void)status, (void)events;
    uv_turn(p->data);
}

static void on_timer(uv_timer_t *t)
{
    uv_turn(t->data);
}

/* One turn of the VM from the loop, as docs/io.md says: run what can run without
 * waiting, then arm the timer for the VM's next deadline. */
static void uv_turn(uv_driver *d)
{
    int rc = stvm_run_mode(d->vm, STVM_RUN_NOWAIT);
    if (rc != 1) {   /* 1: processes remain; 0 (all done), ESTOPPED or an error: the end */
        d->rc = rc;
        uv_poll_stop(&d->poll);
        uv_timer_stop(&d->timer);
        return;
    }
    int ms = stvm_backend_timeout_ms(d->vm);
    if (ms < 0)
        uv_timer_stop(&d->timer);   /* no deadline: the descriptor alone wakes the VM */
    else
        uv_timer_start(&d->timer, on_timer, (uint64_t)ms, 0);
}

static int run_in_libuv(stvm_vm *vm)
{
    uv_loop_t *loop = uv_default_loop();
    uv_driver d = {.vm = vm};
    d.poll.data = d.timer.data = &d;
    if (uv_poll_init(loop, &d.poll, stvm_backend_fd(vm)) || uv_timer_init(loop, &d.timer) ||
        uv_poll_start(&d.poll, UV_READABLE, on_poll)) {
        fprintf(stderr, "chat: cannot set up the libuv loop\n");
        return STVM_ESYS;
    }
    uv_run(loop, UV_RUN_DEFAULT);   /* no stvm_run first: the first spawn woke the poll */
    uv_close((uv_handle_t *)&d.poll, NULL);
    uv_close((uv_handle_t *)&d.timer, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
    return d.rc;
}

static bool number(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    long port = -1, idle = 2000, tick = 1000, max_seconds = 0;
    bool uv = false;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--uv")) {
            uv = true;
        } else if ((!strcmp(o, "--port") && number(argv[++i], 0, 65535, &port)) ||
                   (!strcmp(o, "--idle-ms") && number(argv[++i], 1, 3600000, &idle)) ||
                   (!strcmp(o, "--tick-ms") && number(argv[++i], 1, 3600000, &tick)) ||
                   (!strcmp(o, "--max-seconds") && number(argv[++i], 1, 86400, &max_seconds))) {
            continue;
        } else {
            fprintf(stderr, "usage: chat [--uv] [--port N [--idle-ms MS] [--tick-ms MS] "
                            "[--max-seconds S]]\n(no --port: the self-test)\n");
            return 2;
        }
    }
    bool testing = port < 0;
    chat c = {.idle_ms = testing ? 300 : idle, .tick_ms = testing ? 50 : tick};
    stvm_vm *vm;
    int err = stvm_vm_create(NULL, &vm);
    if (err) {
        fprintf(stderr, "chat: %s\n", stvm_strerror(err));
        return 1;
    }
    err = stvm_tcp_listen(vm, "127.0.0.1", testing ? 0 : (int)port, 128, &c.listener);
    if (err) {
        fprintf(stderr, "chat: listen on 127.0.0.1:%ld: %s\n", testing ? 0 : port,
                stvm_strerror(err));
        stvm_vm_free(vm);
        return 1;
    }
    c.port = stvm_socket_port(c.listener);
    stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "acceptor", acceptor, &c, NULL);
    stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "ticker", ticker, &c, NULL);
    printf("listening on 127.0.0.1:%d\n", c.port);
    fflush(stdout);   /* scripts wait for this line */
    signal_vm = vm;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (max_seconds)
        alarm((unsigned)max_seconds), signal(SIGALRM, on_signal);
    self_test t = {.vm = vm, .port = c.port};
    pthread_t clients;
    if (testing && pthread_create(&clients, NULL, self_test_clients, &t)) {
        fprintf(stderr, "chat: no thread for the self-test\n");
        return 1;
    }
    err = uv ? run_in_libuv(vm) : stvm_run(vm);
    if (testing)
        pthread_join(clients, NULL);
    if (err != STVM_ESTOPPED)
        complain(&c, "run", err);
    stvm_vm_free(vm);   /* ends the processes still waiting, closes their sockets */
    printf("summary: driver=%s joined=%ld lines=%ld idle_kicks=%ld dropped=%ld errors=%ld "
           "failures=%d\n",
           uv ? "libuv" : "plain", c.joined, c.lines, c.idle_kicks, c.dropped, c.errors,
           t.failures);
    return c.errors || t.failures ? 1 : 0;
}
