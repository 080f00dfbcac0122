/*
 * Suite "zn_client": the ZnClient-shaped HTTP/1.1 client (image-stubs/zinc/zn_client.h).
 * Against a real nginx (the HTTP harness, experiments/znclient/harness/nginx.h, starts
 * one per test; without nginx the tests fail and name the package): a static file
 * byte for byte, keep-alive reuse (one connect for many requests), reconnect after
 * "Connection: close", a chunked body, a 404, the log
 * events ZnClient emits in its order. Against a scripted loopback server in a test thread, for what nginx
 * cannot produce: malformed responses from a fixture table (each an EPROTO with a
 * reason), a body delimited by the end of the connection, HTTP/1.0, a reused connection
 * the server closed or reset (retried once on a new one, never twice, never on a new
 * connection), a late response (the first read blocks), a server that never answers
 * (the timeout), plain waits, refusal, and bad input. On the simulated clock, a world
 * that dials a socketpair and answers as an outside-world event: the points of each
 * request in order, and the phases in simulated time.
 *
 * Waits are bounded everywhere: the script server gives up after SERVER_LIMIT_MS, and
 * every client wait has a timeout. No test sleeps to wait for something; the server's
 * one deliberate delay tests that a late response makes the first read block.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../experiments/znclient/harness/nginx.h"
#include "../image-stubs/zinc/zn_client.h"
#include "helpers.h"

TestSuite(zn_client, .timeout = 60);

#define MAXREQ 64
#define TIMEOUT_MS 10000          /* every client wait: generous, never reached when right */
#define SERVER_LIMIT_MS 10000     /* the script server's bound on each of its waits */

/* ---- the client in a process ------------------------------------------------------------- */

typedef struct zc {
    stvm_vm *vm;
    zn_log *log;
    zn_client *c;
    const char *paths[MAXREQ];
    int n;
    int err[MAXREQ];
    zn_response r[MAXREQ];
    char why[MAXREQ][160];
    uint8_t body[4096];           /* the last request's body */
    size_t cap;
} zc;

static void zc_requests(stvm_vm *vm, void *arg)
{
    zc *z = arg;
    for (int i = 0; i < z->n; i++) {
        z->err[i] = stvm__zn_client_get(vm, z->c, z->paths[i], z->body, z->cap, &z->r[i]);
        snprintf(z->why[i], sizeof z->why[i], "%s", stvm__zn_client_why(z->c));
    }
}

/* A VM (real clock unless cfg says otherwise), a zn_log and a client for port. */
static void zc_make(zc *z, const stvm_config *cfg, int port, zn_client_config cc)
{
    memset(z, 0, sizeof *z);
    z->vm = vm_make(cfg);
    cr_assert_eq(stvm__zn_log_new(z->vm, &z->log), STVM_OK);
    cc.host = cc.host ? cc.host : "127.0.0.1";
    cc.port = port;
    cc.timeout_ms = cc.timeout_ms ? cc.timeout_ms : TIMEOUT_MS;
    cc.log = z->log;
    cr_assert_eq(stvm__zn_client_new(z->vm, &cc, &z->c), STVM_OK);
    z->cap = sizeof z->body;
}

static void zc_get(zc *z, const char *path, int times)
{
    for (int i = 0; i < times; i++)
        z->paths[z->n++] = path;
}

static void zc_run(zc *z)
{
    spawn(z->vm, 40, "client", zc_requests, z);
    cr_assert_eq(stvm_run(z->vm), STVM_OK);
}

static const zn_client_stats *zc_stats(const zc *z) { return stvm__zn_client_stats(z->c); }

static void zc_done(zc *z)
{
    stvm__zn_client_free(z->vm, z->c);
    cr_assert_eq(stvm__zn_log_free(z->vm, z->log), STVM_OK);
    vm_done(z->vm);
}

static void expect_ok(const zc *z, int i, int status)
{
    cr_assert_eq(z->err[i], STVM_OK, "request %d: %s: %s", i, stvm_err_name(z->err[i]),
                 z->why[i]);
    cr_assert_eq(z->r[i].status, status, "request %d", i);
    cr_assert_str_empty(z->why[i]);
}

/* ---- nginx --------------------------------------------------------------------------------- */

static void nginx_up(nginx_server *s)
{
    nginx_options o;
    nginx_options_init(&o);
    o.ipv6 = false;
    cr_assert_eq(nginx_start(s, &o), 0, "%s", s->error);
}

static void nginx_down(nginx_server *s) { cr_assert_eq(nginx_stop(s), 0, "%s", s->error); }

/* nginx and a client of it with cc; zc_nginx_end stops and frees both. */
static void zc_nginx(zc *z, nginx_server *s, zn_client_config cc)
{
    nginx_up(s);
    zc_make(z, NULL, s->port, cc);
}

static void zc_nginx_end(zc *z, nginx_server *s)
{
    zc_done(z);
    nginx_down(s);
}

Test(zn_client, a_static_file_comes_back_byte_for_byte_with_its_status_and_length)
{
    nginx_server s;
    zc z;
    zc_nginx(&z, &s, (zn_client_config){0});
    zc_get(&z, NGINX_PATH_STATIC, 1);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    cr_assert_eq(z.r[0].content_length, (int64_t)s.static_size);
    cr_assert_eq(z.r[0].body_bytes, s.static_size);
    cr_assert(!z.r[0].chunked && !z.r[0].close);
    for (size_t i = 0; i < s.static_size; i++)
        cr_assert_eq(z.body[i], (uint8_t)nginx_static_byte(&s, i), "byte %zu", i);
    zc_nginx_end(&z, &s);
}

/* RFC 7230's Host for an IPv6 literal is bracketed; nginx answers 400 to a bare one. */
Test(zn_client, an_ipv6_host_is_bracketed_in_the_host_header)
{
    nginx_server s;
    cr_assert_eq(nginx_start(&s, NULL), 0, "%s", s.error);
    if (!s.ipv6) {
        nginx_down(&s);
        cr_skip_test("no IPv6 loopback on this machine");
    }
    zc z;
    zc_make(&z, NULL, s.port, (zn_client_config){.host = "::1"});
    zc_get(&z, NGINX_PATH_STATIC, 2);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    expect_ok(&z, 1, 200);
    cr_assert_eq(z.r[1].body_bytes, s.static_size);
    zc_nginx_end(&z, &s);
}

Test(zn_client, keep_alive_reuses_one_connection_for_every_request)
{
    nginx_server s;
    zc z;
    zc_nginx(&z, &s, (zn_client_config){0});
    zc_get(&z, NGINX_PATH_STATIC, 50);
    zc_run(&z);
    for (int i = 0; i < 50; i++)
        expect_ok(&z, i, 200);
    cr_assert_eq(zc_stats(&z)->requests, 50u);
    cr_assert_eq(zc_stats(&z)->connects, 1u);
    cr_assert_eq(zc_stats(&z)->retries, 0u);
    zc_nginx_end(&z, &s);
}

Test(zn_client, connection_close_makes_the_next_request_open_a_new_connection)
{
    nginx_server s;
    zc z;
    zc_nginx(&z, &s, (zn_client_config){0});
    zc_get(&z, NGINX_PATH_CLOSE, 3);
    zc_get(&z, NGINX_PATH_STATIC, 2);
    zc_run(&z);
    for (int i = 0; i < 5; i++)
        expect_ok(&z, i, 200);
    cr_assert(z.r[0].close && z.r[2].close && !z.r[4].close);
    cr_assert_eq(zc_stats(&z)->connects, 4u, "one per /close, then one for both /static");
    cr_assert_eq(zc_stats(&z)->retries, 0u, "a close announced is not a failure");
    zc_nginx_end(&z, &s);
}

Test(zn_client, a_chunked_body_is_decoded)
{
    nginx_server s;
    zc z;
    zc_nginx(&z, &s, (zn_client_config){0});
    zc_get(&z, NGINX_PATH_CHUNKED, 2);
    zc_run(&z);
    expect_ok(&z, 1, 200);
    cr_assert(z.r[1].chunked);
    cr_assert_eq(z.r[1].body_bytes, s.chunked_size);
    size_t n = s.static_size;
    cr_assert(z.body[0] == '[' && z.body[1 + n] == '|' && z.body[2 + 2 * n] == ']' &&
              z.body[3 + 2 * n] == '\n', "the five chunks in order");
    for (size_t i = 0; i < n; i++)
        cr_assert(z.body[1 + i] == (uint8_t)nginx_static_byte(&s, i) &&
                  z.body[2 + n + i] == (uint8_t)nginx_static_byte(&s, i), "the file twice");
    cr_assert_eq(zc_stats(&z)->connects, 1u, "the chunked body ends the response, not "
                                             "the connection");
    zc_nginx_end(&z, &s);
}

Test(zn_client, a_404_is_an_answer_and_the_connection_stays)
{
    nginx_server s;
    zc z;
    zc_nginx(&z, &s, (zn_client_config){0});
    zc_get(&z, NGINX_PATH_404, 1);
    zc_get(&z, NGINX_PATH_STATIC, 1);
    zc_run(&z);
    expect_ok(&z, 0, 404);
    cr_assert_gt(z.r[0].content_length, 0);
    cr_assert_eq(z.r[0].body_bytes, (size_t)z.r[0].content_length);
    expect_ok(&z, 1, 200);
    cr_assert_eq(zc_stats(&z)->connects, 1u);
    zc_nginx_end(&z, &s);
}

/* A subscriber to every ZnLogEvent, noting the classes in order and the status each
 * carries (0 before the response is read). */
typedef struct events_seen {
    int n;
    const announcement_class *cls[16];
    int status[16];
} events_seen;

static void note_event(stvm_vm *vm, const announcement *a, void *arg)
{
    (void)vm;
    events_seen *e = arg;
    if (e->n < 16) {
        e->cls[e->n] = a->cls;
        e->status[e->n] = ((const zn_log_event *)a)->response.status;
    }
    e->n++;
}

Test(zn_client, at_level_3_each_request_emits_written_read_and_transaction_in_that_order)
{
    nginx_server s;
    zc z;
    zc_nginx(&z, &s, (zn_client_config){.logging = {.level = ZN_LOG_ALL}});
    events_seen e = {0};
    announcer *an;
    uint64_t id;
    cr_assert_eq(stvm__zn_log_announcer(z.vm, z.log, &an), STVM_OK);
    cr_assert_eq(stvm__announcer_subscribe(z.vm, an, &stvm__zn_log_event_class, note_event, &e,
                                           &id), STVM_OK);
    zc_get(&z, NGINX_PATH_STATIC, 2);
    zc_run(&z);
    expect_ok(&z, 1, 200);
    cr_assert_eq(e.n, 6);
    for (int i = 0; i < 6; i += 3) {
        cr_assert_eq(e.cls[i], &stvm__zn_request_written_class);
        cr_assert_eq(e.status[i], 0, "written before the response");
        cr_assert_eq(e.cls[i + 1], &stvm__zn_response_read_class);
        cr_assert_eq(e.status[i + 1], 200);
        cr_assert_eq(e.cls[i + 2], &stvm__zn_client_transaction_class);
    }
    zc_nginx_end(&z, &s);
}

Test(zn_client, at_level_0_no_event_is_built_and_no_announcer_made)
{
    nginx_server s;
    zc z;
    zc_nginx(&z, &s, (zn_client_config){.logging = {.level = ZN_LOG_OFF}});
    zc_get(&z, NGINX_PATH_STATIC, 3);
    zc_run(&z);
    expect_ok(&z, 2, 200);
    zn_log_stats ls;
    stvm__zn_log_get_stats(z.log, &ls);
    cr_assert_eq(ls.events_built, 0u);
    cr_assert(!ls.has_announcer);
    zc_nginx_end(&z, &s);
}

/* ---- the scripted server ------------------------------------------------------------------ */

/* What the server does after reading one request (or, for CLOSE_NOW and SILENT, instead
 * of answering). */
typedef enum act { KEEP, CLOSE, RESET, CLOSE_NOW, SILENT } act;

typedef struct reply {
    const char *bytes;            /* sent as they are (NULL: nothing) */
    act then;
    int delay_ms;                 /* before sending: the one deliberate wait */
} reply;

typedef struct script {
    const reply *replies;
    int n;
    int listen_fd, port;
    pthread_t thread;
    int connections, requests;    /* accepted, read */
    bool failed;                  /* a wait of the server ran past SERVER_LIMIT_MS */
} script;

static bool wait_fd(int fd, short events)
{
    struct pollfd p = {.fd = fd, .events = events};
    int rc;
    do
        rc = poll(&p, 1, SERVER_LIMIT_MS);
    while (rc < 0 && errno == EINTR);
    return rc == 1;
}

/* Read up to the end of one request's headers; false when the client closed. */
static bool read_request(script *s, int fd)
{
    char buf[2048];
    size_t n = 0;
    while (n < 4 || memcmp(buf + n - 4, "\r\n\r\n", 4) != 0) {
        if (n == sizeof buf || !wait_fd(fd, POLLIN)) {
            s->failed = true;
            return false;
        }
        ssize_t got = recv(fd, buf + n, 1, 0);
        if (got <= 0)
            return false;
        n++;
    }
    s->requests++;
    return true;
}

static void drain_until_closed(int fd)
{
    char b;
    while (wait_fd(fd, POLLIN) && recv(fd, &b, 1, 0) > 0)
        ;
}

static void end_connection(int fd, act how)
{
    if (how == RESET) {
        struct linger l = {.l_onoff = 1, .l_linger = 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    close(fd);
}

/* Serve the replies in order; a reply that ends the connection moves to the next one. */
static void *serve(void *arg)
{
    script *s = arg;
    int i = 0;
    while (i < s->n) {
        if (!wait_fd(s->listen_fd, POLLIN)) {
            s->failed = true;
            break;
        }
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0)
            break;
        s->connections++;
        for (act then = KEEP; then == KEEP && i < s->n; i++) {
            const reply *r = &s->replies[i];
            then = r->then;
            if (!read_request(s, fd)) {
                close(fd);    /* the client left first: this reply goes to the next one */
                break;
            }
            if (r->delay_ms)
                nanosleep(&(struct timespec){0, r->delay_ms * 1000000L}, NULL);
            if (r->bytes && send(fd, r->bytes, strlen(r->bytes), MSG_NOSIGNAL) < 0)
                then = CLOSE;
            if (then == SILENT)
                drain_until_closed(fd);
            if (then != KEEP)
                end_connection(fd, then);
        }
    }
    return NULL;
}

static void script_start(script *s, const reply *replies, int n)
{
    memset(s, 0, sizeof *s);
    s->replies = replies;
    s->n = n;
    s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    cr_assert_geq(s->listen_fd, 0);
    cr_assert_eq(bind(s->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(s->listen_fd, 8), 0);
    cr_assert_eq(getsockname(s->listen_fd, (struct sockaddr *)&a, &len), 0);
    s->port = ntohs(a.sin_port);
    cr_assert_eq(pthread_create(&s->thread, NULL, serve, s), 0);
}

static void script_end(script *s)
{
    cr_assert_eq(pthread_join(s->thread, NULL), 0);
    close(s->listen_fd);
    cr_assert(!s->failed, "the script server waited past its limit");
}

/* A script server for replies and a client of it with cc, asked for path `times` times
 * (run it with zc_run); zc_end frees both. */
static void zc_scripted(zc *z, script *s, const reply *replies, int n, zn_client_config cc,
                        const char *path, int times)
{
    script_start(s, replies, n);
    zc_make(z, NULL, s->port, cc);
    zc_get(z, path, times);
}

static void zc_end(zc *z, script *s)
{
    zc_done(z);
    script_end(s);
}

#define OK_BODY(body) "HTTP/1.1 200 OK\r\nContent-Length: " #body "\r\n\r\n"

/* ---- malformed responses -------------------------------------------------------------- */

typedef struct fixture {
    const char *name;
    const char *response;         /* the server closes after it */
    const char *why;              /* a word the reason must contain */
} fixture;

static const fixture MALFORMED[] = {
    {"no status code", "HTTP/1.1 OK\r\n\r\n", "status line"},
    {"not HTTP", "ICY 200 OK\r\n\r\n", "status line"},
    {"HTTP/2 status line", "HTTP/2 200 OK\r\n\r\n", "status line"},
    {"code out of range", "HTTP/1.1 999 What\r\n\r\n", "status line"},
    {"header without a colon", "HTTP/1.1 200 OK\r\nContent-Length 5\r\n\r\nhello", "header"},
    {"header with an empty name", "HTTP/1.1 200 OK\r\n: x\r\n\r\n", "header"},
    {"content length not a number", "HTTP/1.1 200 OK\r\nContent-Length: five\r\n\r\n",
     "Content-Length"},
    {"negative content length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
     "Content-Length"},
    {"two different content lengths",
     "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "Content-Length"},
    {"a body shorter than its length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
     "inside the body"},
    {"a chunk size that is not hex",
     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n0\r\n\r\n", "chunk size"},
    {"a chunk longer than its size",
     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n",
     "longer than its size"},
    {"a chunked body cut short", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
     "inside the body"},
};
#define NMALFORMED (int)(sizeof MALFORMED / sizeof MALFORMED[0])

Test(zn_client, each_malformed_response_is_eproto_with_a_reason_and_the_connection_closed)
{
    for (int k = 0; k < NMALFORMED; k++) {
        const fixture *f = &MALFORMED[k];
        reply replies[] = {{f->response, CLOSE, 0}, {OK_BODY(2) "ok", CLOSE, 0}};
        script s;
        zc z;
        zc_scripted(&z, &s, replies, 2, (zn_client_config){0}, "/bad", 1);
        zc_get(&z, "/good", 1);
        zc_run(&z);
        cr_assert_eq(z.err[0], STVM_EPROTO, "%s: %s (%s)", f->name, stvm_err_name(z.err[0]),
                     z.why[0]);
        cr_assert(strstr(z.why[0], f->why), "%s: the reason '%s' should mention '%s'", f->name,
                  z.why[0], f->why);
        expect_ok(&z, 1, 200);
        cr_assert_eq(zc_stats(&z)->connects, 2u, "%s: a new connection after it", f->name);
        cr_assert_eq(zc_stats(&z)->retries, 0u, "%s: a malformed answer is not retried",
                     f->name);
        zc_end(&z, &s);
    }
}

Test(zn_client, a_line_over_1024_bytes_and_more_than_100_headers_are_refused)
{
    static char long_line[1400], many[3000];
    snprintf(long_line, sizeof long_line, "HTTP/1.1 200 OK\r\nX: %01100d\r\n\r\n", 0);
    int n = snprintf(many, sizeof many, "HTTP/1.1 200 OK\r\n");
    for (int i = 0; i < 101; i++)
        n += snprintf(many + n, sizeof many - (size_t)n, "X%d: y\r\n", i);
    snprintf(many + n, sizeof many - (size_t)n, "\r\n");
    reply replies[] = {{long_line, CLOSE, 0}, {many, CLOSE, 0}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 2, (zn_client_config){0}, "/long", 1);
    zc_get(&z, "/many", 1);
    zc_run(&z);
    cr_assert_eq(z.err[0], STVM_EPROTO, "%s", z.why[0]);
    cr_assert(strstr(z.why[0], "1024"), "%s", z.why[0]);
    cr_assert_eq(z.err[1], STVM_EPROTO, "%s", z.why[1]);
    cr_assert(strstr(z.why[1], "100 header"), "%s", z.why[1]);
    zc_end(&z, &s);
}

/* ---- bodies and versions nginx does not send here ------------------------------------- */

Test(zn_client, a_body_without_length_or_chunks_runs_to_the_end_of_the_connection)
{
    reply replies[] = {{"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", CLOSE, 0},
                       {OK_BODY(2) "ok", KEEP, 0}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 2, (zn_client_config){0}, "/a", 1);
    zc_get(&z, "/b", 1);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    cr_assert_eq(z.r[0].body_bytes, strlen("until the end"));
    cr_assert(z.r[0].close);
    expect_ok(&z, 1, 200);
    cr_assert_eq(zc_stats(&z)->connects, 2u);
    zc_end(&z, &s);
}

Test(zn_client, http_1_0_closes_unless_keep_alive_and_204_has_no_body)
{
    reply replies[] = {{"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", CLOSE, 0},
                       {"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok",
                        KEEP, 0},
                       {"HTTP/1.1 204 No Content\r\n\r\n", KEEP, 0},
                       {OK_BODY(2) "ok", CLOSE, 0}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 4, (zn_client_config){0}, "/x", 4);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    cr_assert(z.r[0].close);
    expect_ok(&z, 1, 200);
    cr_assert(!z.r[1].close);
    expect_ok(&z, 2, 204);
    cr_assert_eq(z.r[2].body_bytes, 0u);
    expect_ok(&z, 3, 200);
    cr_assert_eq(zc_stats(&z)->connects, 2u);
    zc_end(&z, &s);
}

/* ---- the retry rule --------------------------------------------------------------------- */

static void retry_case(act how)
{
    reply replies[] = {{OK_BODY(2) "ok", KEEP, 0}, {NULL, how, 0}, {OK_BODY(2) "ok", KEEP, 0}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 3, (zn_client_config){0}, "/x", 2);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    expect_ok(&z, 1, 200);
    cr_assert_eq(zc_stats(&z)->retries, 1u);
    cr_assert_eq(zc_stats(&z)->connects, 2u);
    cr_assert_eq(s.requests, 3, "the request went out twice");
    zc_end(&z, &s);
}

Test(zn_client, a_reused_connection_the_server_closed_is_retried_once_on_a_new_one)
{
    retry_case(CLOSE_NOW);
}

Test(zn_client, a_reused_connection_the_server_reset_is_retried_once_on_a_new_one)
{
    retry_case(RESET);
}

Test(zn_client, a_keep_alive_connection_the_server_closed_while_idle_is_retried_once)
{
    /* The server answers without "Connection: close" and then closes, as a server's
     * keep-alive timeout does: the client finds out only with its next request. */
    reply replies[] = {{OK_BODY(2) "ok", CLOSE, 0}, {OK_BODY(2) "ok", KEEP, 0}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 2, (zn_client_config){0}, "/x", 2);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    cr_assert(!z.r[0].close);
    expect_ok(&z, 1, 200);
    cr_assert_eq(zc_stats(&z)->retries, 1u);
    cr_assert_eq(zc_stats(&z)->connects, 2u);
    cr_assert_eq(s.requests, 2, "the first try of the second request reached no server");
    zc_end(&z, &s);
}

Test(zn_client, the_retry_happens_once_and_never_on_a_new_connection)
{
    reply replies[] = {{OK_BODY(2) "ok", KEEP, 0}, {NULL, CLOSE_NOW, 0}, {NULL, CLOSE_NOW, 0},
                       {NULL, CLOSE_NOW, 0}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 4, (zn_client_config){0}, "/x", 3);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    cr_assert_eq(z.err[1], STVM_ECLOSED, "after the one retry: %s", z.why[1]);
    cr_assert_eq(z.err[2], STVM_ECLOSED, "a new connection is not retried: %s", z.why[2]);
    cr_assert_eq(zc_stats(&z)->retries, 1u);
    cr_assert_eq(zc_stats(&z)->connects, 3u);
    zc_end(&z, &s);
}

Test(zn_client, a_response_cut_short_on_a_reused_connection_is_not_retried)
{
    reply replies[] = {{OK_BODY(2) "ok", KEEP, 0}, {"HTTP/1.1 200 OK\r\nContent-Le", CLOSE, 0}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 2, (zn_client_config){0}, "/x", 2);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    cr_assert_eq(z.err[1], STVM_EPROTO, "%s", z.why[1]);
    cr_assert(strstr(z.why[1], "ended inside"), "%s", z.why[1]);
    cr_assert_eq(zc_stats(&z)->retries, 0u, "part of the response had arrived");
    zc_end(&z, &s);
}

/* ---- blocking, timeouts, refusal ----------------------------------------------------------- */

Test(zn_client, a_late_response_blocks_the_first_read_and_between_work_avoids_it)
{
    /* The server answers the first request 200 ms late; the second at once, while the
     * client spends 300 ms between sending and reading (generous both ways). */
    reply replies[] = {{OK_BODY(2) "ok", KEEP, 200}, {OK_BODY(2) "ok", KEEP, 0}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 2, (zn_client_config){0}, "/x", 1);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    cr_assert_eq(zc_stats(&z)->first_reads_blocked, 1u);
    cr_assert_eq(zc_stats(&z)->reads_blocked, 1u);
    stvm__zn_client_free(z.vm, z.c);
    zn_client_config cc = {.host = "127.0.0.1", .port = s.port, .timeout_ms = TIMEOUT_MS,
                           .between_us = 300000};
    cr_assert_eq(stvm__zn_client_new(z.vm, &cc, &z.c), STVM_OK);
    z.n = 0;
    zc_get(&z, "/x", 1);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    cr_assert_eq(zc_stats(&z)->first_reads_blocked, 0u);
    cr_assert_geq(zc_stats(&z)->between_ns, 300000000u);
    zc_end(&z, &s);
}

/* On the real clock: with a descriptor armed, a simulated-clock VM idles on the OS for
 * the span to its next deadline (a socket may still answer), so a timeout cannot be
 * skipped there. 300 ms, against a server that stays silent for up to 10 s. */
Test(zn_client, a_server_that_never_answers_times_out_and_the_request_is_not_retried)
{
    reply replies[] = {{OK_BODY(2) "ok", KEEP, 0}, {NULL, SILENT, 0}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 2, (zn_client_config){.timeout_ms = 300}, "/x", 2);
    stvm_stats before = stats_of(z.vm);
    zc_run(&z);
    expect_ok(&z, 0, 200);
    cr_assert_eq(z.err[1], STVM_ETIMEDOUT, "%s: %s", stvm_err_name(z.err[1]), z.why[1]);
    cr_assert(strstr(z.why[1], "waiting for the response"), "%s", z.why[1]);
    cr_assert_eq(zc_stats(&z)->retries, 0u, "a timeout on a reused connection is final");
    cr_assert_gt(stats_of(z.vm).timed_waits, before.timed_waits, "a timed wait ran out");
    zc_end(&z, &s);
}

Test(zn_client, the_default_timeout_is_znclients_30_seconds_and_plain_waits_take_no_delay)
{
    reply replies[] = {{OK_BODY(2) "ok", KEEP, 200}, {OK_BODY(2) "ok", KEEP, 200}};
    script s;
    zc z;
    zc_scripted(&z, &s, replies, 2, (zn_client_config){.timeout_ms = -1}, "/x", 2);
    stvm_stats before = stats_of(z.vm);
    zc_run(&z);
    expect_ok(&z, 1, 200);
    cr_assert_eq(zc_stats(&z)->first_reads_blocked, 2u);
    cr_assert_eq(stats_of(z.vm).timed_waits, before.timed_waits,
                 "waitForDataIfClosed: is a plain wait");
    zc_end(&z, &s);
    cr_assert_eq(ZN_DEFAULT_TIMEOUT_MS, 30000);
}

Test(zn_client, a_refused_connection_is_econnrefused)
{
    script s;
    script_start(&s, NULL, 0);   /* a port that was free; the server thread ends at once */
    script_end(&s);
    zc z;
    zc_make(&z, NULL, s.port, (zn_client_config){0});
    zc_get(&z, "/x", 1);
    zc_run(&z);
    cr_assert_eq(z.err[0], STVM_ECONNREFUSED, "%s", z.why[0]);
    cr_assert(strstr(z.why[0], "connecting"), "%s", z.why[0]);
    cr_assert_eq(zc_stats(&z)->connects, 0u);
    zc_done(&z);
}

/* ---- bad input -------------------------------------------------------------------------- */

typedef struct misuse {
    zn_client *c;
    int rc[5];
} misuse;

static void misuser(stvm_vm *vm, void *arg)
{
    misuse *m = arg;
    zn_response r;
    uint8_t b[4];
    m->rc[0] = stvm__zn_client_get(vm, m->c, NULL, b, sizeof b, &r);
    m->rc[1] = stvm__zn_client_get(vm, m->c, "/", NULL, 4, &r);
    m->rc[2] = stvm__zn_client_get(vm, m->c, "/", b, sizeof b, NULL);
    m->rc[3] = stvm__zn_client_get(vm, NULL, "/", b, sizeof b, &r);
    static char long_path[1100];
    memset(long_path, 'a', sizeof long_path - 1);
    m->rc[4] = stvm__zn_client_get(vm, m->c, long_path, b, sizeof b, &r);
}

Test(zn_client, bad_input_is_refused_and_nothing_is_made_or_sent)
{
    stvm_vm *vm = vm_make(NULL);
    zn_log *log;
    cr_assert_eq(stvm__zn_log_new(vm, &log), STVM_OK);
    zn_client *c = (zn_client *)0x1;
    const zn_client_config good = {.host = "127.0.0.1", .port = 80, .log = log};
    zn_client_config bad[] = {good, good, good, good, good, good, good, good};
    bad[0].host = NULL;
    bad[1].port = 0;
    bad[2].port = 65536;
    bad[3].timeout_ms = -2;
    bad[4].logging.level = 4;
    bad[5].logging.level = ZN_LOG_ALL;
    bad[5].log = NULL;
    bad[6].between_us = ZN_LOG_MAX_COST_US + 1;
    char host[300];
    memset(host, 'a', sizeof host - 1);
    host[sizeof host - 1] = 0;
    bad[7].host = host;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(stvm__zn_client_new(vm, &bad[i], &c), STVM_EINVAL, "case %zu", i);
    cr_assert_eq(c, (zn_client *)0x1, "nothing stored");
    cr_assert_eq(stvm__zn_client_new(NULL, &good, &c), STVM_EINVAL);
    cr_assert_eq(stvm__zn_client_new(vm, NULL, &c), STVM_EINVAL);
    cr_assert_eq(stvm__zn_client_new(vm, &good, NULL), STVM_EINVAL);
    cr_assert_eq(stvm__zn_client_new(vm, &good, &c), STVM_OK);
    zn_response r;
    cr_assert_eq(stvm__zn_client_get(vm, c, "/", NULL, 0, &r), STVM_ENOTPROC,
                 "from the host");
    misuse m = {.c = c};
    spawn(vm, 40, "misuser", misuser, &m);
    cr_assert_eq(stvm_run(vm), STVM_OK);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(m.rc[i], STVM_EINVAL, "call %d", i);
    cr_assert_eq(stvm__zn_client_stats(c)->connects, 0u, "nothing was sent");
    stvm__zn_client_free(vm, c);
    stvm__zn_client_free(vm, NULL);
    cr_assert_eq(stvm__zn_log_free(vm, log), STVM_OK);
    vm_done(vm);
}

/* ---- a world around the client: dial and the points of a request --------------------------- */

#include "../image-stubs/network/socket.h"

/* A world on the simulated clock: the connection a socketpair, the server's answer an
 * outside-world event 40 us after the request left; the points noted in order. */
typedef struct world_log {
    int server;
    zn_point seen[32];
    uint64_t at_us[32];
    int n, dials;
} world_log;

static const char world_answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

static void world_server(stvm_vm *vm, void *arg)
{
    world_log *w = arg;
    char buf[2048];
    cr_assert_gt(recv(w->server, buf, sizeof buf, MSG_DONTWAIT), 0, "the request arrived");
    cr_assert_eq(send(w->server, world_answer, sizeof world_answer - 1, 0),
                 (ssize_t)(sizeof world_answer - 1));
}

static int world_dial(stvm_vm *vm, void *arg, stvm_socket **out)
{
    world_log *w = arg;
    int fds[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    w->server = fds[1];
    w->dials++;
    return stvm__socket_adopt(vm, fds[0], out);
}

static void world_at(stvm_vm *vm, void *arg, const zn_client *c, zn_point point)
{
    world_log *w = arg;
    if (w->n < 32) {
        w->at_us[w->n] = stvm_vm_now_us(vm);
        w->seen[w->n++] = point;
    }
    if (point == ZN_AT_SENT)
        cr_assert_eq(stvm_sim_at(vm, stvm_vm_now_us(vm) + 40, world_server, w), STVM_OK);
}

Test(zn_client, a_world_dials_the_connection_and_sees_each_request_s_points_in_order)
{
    stvm_vm *vm = vm_make_sim_at(61, STVM_DELAY_CLOCK_US, SIM_START, 0);
    world_log w = {.server = -1};
    zn_client_config cfg = {.host = "127.0.0.1", .port = 80,
                            .world = {.dial = world_dial, .at = world_at, .arg = &w}};
    zc z = {.vm = vm, .paths = {"/static", "/static"}, .n = 2, .cap = sizeof z.body};
    cr_assert_eq(stvm__zn_client_new(vm, &cfg, &z.c), STVM_OK);
    spawn(vm, 40, "client", zc_requests, &z);
    run_ok(vm);
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(z.err[i], STVM_OK, "request %d: %s", i, z.why[i]);
        cr_expect_eq(z.r[i].status, 200);
        cr_expect_eq(z.r[i].body_bytes, 2u);
    }
    cr_expect_eq(w.dials, 1, "keep-alive: one connection");
    static const zn_point want[] = {ZN_AT_CONNECTED, ZN_AT_SEND, ZN_AT_SENT, ZN_AT_READING,
                                    ZN_AT_READ, ZN_AT_PARSED, ZN_AT_SEND, ZN_AT_SENT,
                                    ZN_AT_READING, ZN_AT_READ, ZN_AT_PARSED};
    cr_assert_eq(w.n, (int)(sizeof want / sizeof *want));
    for (int i = 0; i < w.n; i++)
        cr_expect_eq(w.seen[i], want[i], "point %d", i);
    /* Nothing costs simulated time but the server: the first read waits its 40 us. */
    cr_expect_eq(w.at_us[4] - w.at_us[2], 40u, "READ 40 us after SENT");
    const zn_client_stats *st = stvm__zn_client_stats(z.c);
    cr_expect_eq(st->first_reads_blocked, 2u);
    cr_expect_eq(st->wait_ns, 2 * 40000u, "the phases count simulated time");
    stvm__zn_client_free(vm, z.c);
    close(w.server);
    vm_done(vm);
}
