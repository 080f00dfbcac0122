/*
 * The ZnClient-shaped HTTP/1.1 client (see zn_client.h): one request as
 * ZnClient>>executeRequestResponse does it, on the SocketStream of socket_stream.c.
 */
#include "zn_client.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../vm/clock.h"
#include "../../vm/alloc.h"

#define LINE_MAX_BYTES 1024          /* a status or header line longer than this is refused */
#define HEADERS_MAX 100

struct zn_client {
    zn_client_config cfg;
    char host[256];
    stvm_socket *socket;             /* NULL: no connection */
    stvm_stream *stream;
    uint64_t requests_on_connection;
    zn_client_stats stats;
    char why[160];
    /* Here rather than on the process's stack (16 KiB by default): one line at a time
     * is parsed, and body bytes past the caller's buffer are dropped through scratch. */
    char line[LINE_MAX_BYTES];
    uint8_t scratch[STVM_STREAM_BUFFER_SIZE];
};

static int fail(zn_client *c, int err, const char *fmt, const char *detail)
{
    snprintf(c->why, sizeof c->why, fmt, detail);
    return err;
}

/* ---- the connection ------------------------------------------------------------------ */

static void disconnect(stvm_vm *vm, zn_client *c)
{
    if (c->stream)
        stvm__stream_close(vm, c->stream);
    if (c->socket)
        stvm_socket_close(vm, c->socket);
    c->stream = NULL;
    c->socket = NULL;
}

static void at(stvm_vm *vm, const zn_client *c, zn_point point)
{
    if (c->cfg.world.at)
        c->cfg.world.at(vm, c->cfg.world.arg, c, point);
}

static int connect_(stvm_vm *vm, zn_client *c)
{
    const zn_client_world *w = &c->cfg.world;
    int err = w->dial ? w->dial(vm, w->arg, &c->socket)
                      : stvm_tcp_connect(vm, c->host, c->cfg.port, c->cfg.timeout_ms, &c->socket);
    if (err) {
        c->socket = NULL;
        return fail(c, err, "connecting to %.100s", c->host);
    }
    /* Pharo's rule for sending: a connection whose peer closed is closed. */
    if ((err = stvm__stream_open(vm, c->socket, c->cfg.timeout_ms, false, &c->stream))) {
        stvm_socket_close(vm, c->socket);
        c->socket = NULL;
        return fail(c, err, "opening a stream to %.100s", c->host);
    }
    c->stats.connects++;
    c->requests_on_connection = 0;
    at(vm, c, ZN_AT_CONNECTED);
    return STVM_OK;
}

static bool config_valid(const zn_client_config *cfg)
{
    int level = cfg->logging.level;
    return cfg->host && cfg->port >= 1 && cfg->port <= 65535 &&
           strlen(cfg->host) < sizeof((zn_client *)0)->host && cfg->timeout_ms >= -1 &&
           level >= ZN_LOG_OFF && level <= ZN_LOG_ALL && (cfg->log || level == ZN_LOG_OFF) &&
           cfg->before_us <= ZN_LOG_MAX_COST_US && cfg->between_us <= ZN_LOG_MAX_COST_US &&
           cfg->after_us <= ZN_LOG_MAX_COST_US;
}

int stvm__zn_client_new(stvm_vm *vm, const zn_client_config *cfg, zn_client **out)
{
    if (!vm || !cfg || !out || !config_valid(cfg))
        return STVM_EINVAL;
    zn_client *c = stvm__calloc(1, sizeof *c);
    if (!c)
        return STVM_ENOMEM;
    c->cfg = *cfg;
    if (!c->cfg.timeout_ms)
        c->cfg.timeout_ms = ZN_DEFAULT_TIMEOUT_MS;
    snprintf(c->host, sizeof c->host, "%s", cfg->host);
    *out = c;
    return STVM_OK;
}

void stvm__zn_client_free(stvm_vm *vm, zn_client *c)
{
    if (!c)
        return;
    disconnect(vm, c);
    free(c);
}

const char *stvm__zn_client_why(const zn_client *c)
{
    return c->why;
}

const zn_client_stats *stvm__zn_client_stats(const zn_client *c)
{
    return &c->stats;
}

int stvm__zn_client_fd(const zn_client *c)
{
    return c && c->socket ? stvm_socket_fd(c->socket) : -1;
}

/* ---- the request --------------------------------------------------------------------- */

/* ZnClient's request: a GET with its default headers, written into the stream's buffer
 * and sent with one flush. */
static int write_request(stvm_vm *vm, zn_client *c, const char *path, size_t *bytes)
{
    /* Fits: the path is at most LINE_MAX_BYTES (checked on entry), the host < 256. */
    char *req = (char *)c->scratch;
    bool v6 = strchr(c->host, ':') != NULL;   /* an IPv6 literal is bracketed (RFC 7230) */
    int n = snprintf(req, sizeof c->scratch,
                     "GET %s HTTP/1.1\r\nUser-Agent: Zinc HTTP Components 1.0\r\n"
                     "Accept: */*\r\nHost: %s%s%s:%d\r\n\r\n",
                     path, v6 ? "[" : "", c->host, v6 ? "]" : "", c->cfg.port);
    at(vm, c, ZN_AT_SEND);
    int err = stvm__stream_write(vm, c->stream, req, (size_t)n);
    if (!err)
        err = stvm__stream_flush(vm, c->stream);
    if (!err)
        at(vm, c, ZN_AT_SENT);
    *bytes = (size_t)n;
    return err ? fail(c, err, "writing the request for %.100s", path) : STVM_OK;
}

/* ---- the response -------------------------------------------------------------------- */

static int read_line(stvm_vm *vm, zn_client *c, char *buf, const char *what)
{
    int64_t n = stvm__stream_read_line(vm, c->stream, buf, LINE_MAX_BYTES);
    if (n == STVM_ERANGE)
        return fail(c, STVM_EPROTO, "a %.100s longer than 1024 bytes", what);
    if (n == STVM_EEOF)
        return fail(c, STVM_ECLOSED, "the connection ended before the %.100s", what);
    if (n < 0)
        return fail(c, (int)n, "reading the %.100s", what);
    /* A line is returned without its LF when the stream ended first: a cut response. */
    if (c->stream->at_end)
        return fail(c, STVM_EPROTO, "the connection ended inside the %.100s", what);
    return STVM_OK;
}

/* "HTTP/1.1 200 OK": the version and the three-digit code. */
static int parse_status(zn_client *c, const char *line, zn_response *r, bool *http10)
{
    int code = 0, used = 0;
    char minor = 0;
    if (sscanf(line, "HTTP/1.%c %3d%n", &minor, &code, &used) != 2 ||
        (minor != '0' && minor != '1') || code < 100 || code > 599 ||
        (line[used] && line[used] != ' '))
        return fail(c, STVM_EPROTO, "a malformed status line: '%.60s'", line);
    r->status = code;
    *http10 = minor == '0';
    return STVM_OK;
}

static bool header_is(const char *line, size_t name_len, const char *name)
{
    return strlen(name) == name_len && strncasecmp(line, name, name_len) == 0;
}

static bool value_has_token(const char *value, const char *token)
{
    for (const char *p = value; (p = strcasestr(p, token)) != NULL; p++) {
        bool start = p == value || *(p - 1) == ' ' || *(p - 1) == ',';
        char end = p[strlen(token)];
        if (start && (end == 0 || end == ',' || end == ' '))
            return true;
    }
    return false;
}

/* One header line into r (the headers the client acts on; others are skipped). */
static int parse_header(zn_client *c, char *line, zn_response *r, bool *keep_alive)
{
    char *colon = strchr(line, ':');
    if (!colon || colon == line)
        return fail(c, STVM_EPROTO, "a malformed header line: '%.60s'", line);
    size_t name_len = (size_t)(colon - line);
    const char *value = colon + 1;
    while (*value == ' ' || *value == '\t')
        value++;
    if (header_is(line, name_len, "Content-Length")) {
        char *end;
        long long v = strtoll(value, &end, 10);
        if (!isdigit((unsigned char)*value) || *end || v < 0 ||
            (r->content_length >= 0 && r->content_length != v))
            return fail(c, STVM_EPROTO, "a malformed Content-Length: '%.40s'", value);
        r->content_length = v;
    } else if (header_is(line, name_len, "Transfer-Encoding")) {
        r->chunked = value_has_token(value, "chunked");
    } else if (header_is(line, name_len, "Connection")) {
        r->close |= value_has_token(value, "close");
        *keep_alive |= value_has_token(value, "keep-alive");
    }
    return STVM_OK;
}

static int read_headers(stvm_vm *vm, zn_client *c, zn_response *r, bool http10)
{
    char *line = c->line;
    bool keep_alive = false;
    for (int i = 0;; i++) {
        int err = read_line(vm, c, line, "header line");
        if (err)
            return err;
        if (!line[0])
            break;
        if (i == HEADERS_MAX)
            return fail(c, STVM_EPROTO, "more than 100 header lines%.100s", "");
        if ((err = parse_header(c, line, r, &keep_alive)))
            return err;
    }
    if (http10 && !keep_alive)
        r->close = true;
    return STVM_OK;
}

/* Exactly n body bytes, into body up to cap, the rest dropped. */
static int read_body_bytes(stvm_vm *vm, zn_client *c, uint64_t n, uint8_t *body, size_t cap,
                           zn_response *r)
{
    while (n > 0) {
        bool keep = body && r->body_bytes < cap;
        uint8_t *to = keep ? body + r->body_bytes : c->scratch;
        size_t room = keep ? cap - r->body_bytes : sizeof c->scratch;
        int64_t got = stvm__stream_read(vm, c->stream, to, n < room ? (size_t)n : room);
        if (got == STVM_EEOF)
            return fail(c, STVM_EPROTO, "the connection ended inside the body%.100s", "");
        if (got < 0)
            return fail(c, (int)got, "reading the body%.100s", "");
        r->body_bytes += (size_t)got;
        n -= (uint64_t)got;
    }
    return STVM_OK;
}

/* A chunked body: hex sizes (extensions ignored), data, CRLF; 0 ends it, then trailers. */
static int read_chunked(stvm_vm *vm, zn_client *c, uint8_t *body, size_t cap, zn_response *r)
{
    char *line = c->line;
    for (;;) {
        int err = read_line(vm, c, line, "chunk size");
        if (err)
            return err;
        char *end;
        unsigned long long size = strtoull(line, &end, 16);
        if (end == line || (*end && *end != ';' && *end != ' '))
            return fail(c, STVM_EPROTO, "a malformed chunk size: '%.40s'", line);
        if (size == 0)
            break;
        if ((err = read_body_bytes(vm, c, size, body, cap, r)) ||
            (err = read_line(vm, c, line, "chunk end")))
            return err;
        if (line[0])
            return fail(c, STVM_EPROTO, "a chunk longer than its size%.100s", "");
    }
    do {   /* trailers, up to the empty line */
        int err = read_line(vm, c, line, "trailer");
        if (err)
            return err;
    } while (line[0]);
    return STVM_OK;
}

/* A body delimited by the end of the connection (neither length nor chunks). */
static int read_to_end(stvm_vm *vm, zn_client *c, uint8_t *body, size_t cap, zn_response *r)
{
    for (;;) {
        bool keep = body && r->body_bytes < cap;
        int64_t got = stvm__stream_read(vm, c->stream, keep ? body + r->body_bytes : c->scratch,
                                        keep ? cap - r->body_bytes : sizeof c->scratch);
        if (got == STVM_EEOF)
            break;
        if (got < 0)
            return fail(c, (int)got, "reading the body%.100s", "");
        r->body_bytes += (size_t)got;
    }
    r->close = true;
    return STVM_OK;
}

static int read_body(stvm_vm *vm, zn_client *c, uint8_t *body, size_t cap, zn_response *r)
{
    if (r->status < 200 || r->status == 204 || r->status == 304)
        return STVM_OK;
    if (r->chunked)
        return read_chunked(vm, c, body, cap, r);
    if (r->content_length >= 0)
        return read_body_bytes(vm, c, (uint64_t)r->content_length, body, cap, r);
    return read_to_end(vm, c, body, cap, r);
}

/* ---- one exchange ------------------------------------------------------------------------ */

/* One request's progress: ZnClient's two durations (VM clock, as its log steps take
 * them) and the phase times (the OS's monotonic clock, or the simulated one: what the
 * experiment reports). */
typedef struct exchange {
    stvm_vm *vm;
    zn_client *c;
    zn_request_info req;
    uint64_t started_us;         /* the VM clock where the current log step's span began */
    uint64_t request_us, response_us;
    int64_t t0;                  /* where the current phase began */
    bool any_response;           /* a byte of the response arrived */
} exchange;

/* The phases' clock: the OS's, or the simulated one, where only modelled work and the
 * outside world take time. */
static int64_t phase_now(stvm_vm *vm)
{
    return vm->clock.kind == STVM_CLOCK_SIMULATED ? (int64_t)stvm__clock_now_us(vm) * 1000
                                                  : stvm__mono_ns();
}

static void phase(exchange *x, uint64_t *into)
{
    int64_t now = phase_now(x->vm);
    *into += (uint64_t)(now - x->t0);
    x->t0 = now;
}

static void exchange_start(stvm_vm *vm, exchange *x, zn_client *c, const char *path)
{
    *x = (exchange){.vm = vm, .c = c, .req = {.method = "GET", .uri = path},
                    .t0 = phase_now(vm)};
}

static void work(stvm_vm *vm, uint32_t us)
{
    if (us)
        stvm_work_us(vm, us);   /* cannot fail: checked in stvm__zn_client_new */
}

/* The first read of the response: a fill of the stream, counted if it had to wait. */
static int first_read(stvm_vm *vm, exchange *x)
{
    zn_client *c = x->c;
    uint64_t blocked = c->stream->stats.reads_blocked;
    at(vm, c, ZN_AT_READING);
    int64_t n = stvm__stream_fill(vm, c->stream);
    if (c->stream->stats.reads_blocked != blocked)
        c->stats.first_reads_blocked++;
    c->stats.reads_blocked += c->stream->stats.reads_blocked - blocked;
    if (n == STVM_EEOF)
        return fail(c, STVM_ECLOSED, "the connection ended before the response%.100s", "");
    if (n < 0)
        return fail(c, (int)n, "waiting for the response%.100s", "");
    x->any_response = true;
    at(vm, c, ZN_AT_READ);
    return STVM_OK;
}

static int read_response(stvm_vm *vm, zn_client *c, uint8_t *body, size_t cap, zn_response *r)
{
    char *line = c->line;
    bool http10 = false;
    *r = (zn_response){.content_length = -1};
    uint64_t blocked = c->stream->stats.reads_blocked;
    int err = read_line(vm, c, line, "status line");
    if (!err)
        err = parse_status(c, line, r, &http10);
    if (!err)
        err = read_headers(vm, c, r, http10);
    if (!err)
        err = read_body(vm, c, body, cap, r);
    c->stats.reads_blocked += c->stream->stats.reads_blocked - blocked;
    return err;
}

/* writeRequest, logRequestWrittenStarted:, the between work, readResponse. */
static int exchange_once(stvm_vm *vm, exchange *x, uint8_t *body, size_t cap, zn_response *r)
{
    zn_client *c = x->c;
    work(vm, c->cfg.before_us);
    phase(x, &c->stats.before_ns);
    x->started_us = stvm__clock_now_us(vm);
    int err = write_request(vm, c, x->req.uri, &x->req.bytes);
    if (!err && c->cfg.log)
        err = stvm__zn_log_request_written(vm, c->cfg.log, &c->cfg.logging, x->started_us,
                                           &x->req, &x->request_us);
    if (err)
        return err;
    work(vm, c->cfg.between_us);
    phase(x, &c->stats.between_ns);
    x->started_us = stvm__clock_now_us(vm);
    if ((err = first_read(vm, x)))
        return err;
    phase(x, &c->stats.wait_ns);
    err = read_response(vm, c, body, cap, r);
    if (!err)
        at(vm, c, ZN_AT_PARSED);
    phase(x, &c->stats.parse_ns);
    return err;
}

/* logResponseReadStarted:, logClientTransaction...:, the after work. */
static int exchange_end(stvm_vm *vm, exchange *x, const zn_response *r)
{
    zn_client *c = x->c;
    zn_response_info resp = {.status = r->status, .bytes = r->body_bytes};
    int err = STVM_OK;
    if (c->cfg.log)   /* without one the level is 0: no step would build anything */
        err = stvm__zn_log_response_read(vm, c->cfg.log, &c->cfg.logging, x->started_us,
                                         &resp, &x->response_us);
    if (!err && c->cfg.log)
        err = stvm__zn_log_client_transaction(vm, c->cfg.log, &c->cfg.logging, &x->req,
                                              x->request_us, &resp, x->response_us);
    work(vm, c->cfg.after_us);
    phase(x, &c->stats.after_ns);
    return err;
}

int stvm__zn_client_get(stvm_vm *vm, zn_client *c, const char *path, uint8_t *body,
                        size_t cap, zn_response *r)
{
    if (!vm || !c || !path || !r || (!body && cap) || strlen(path) > LINE_MAX_BYTES)
        return STVM_EINVAL;
    if (!vm->active)
        return STVM_ENOTPROC;
    c->why[0] = 0;
    exchange x;
    exchange_start(vm, &x, c, path);
    int err = c->stream ? STVM_OK : connect_(vm, c);
    bool reused = c->requests_on_connection > 0;
    if (!err)
        err = exchange_once(vm, &x, body, cap, r);
    /* ZnClient retries once on a new connection when a reused one turns out dead
     * (Pharo's ConnectionClosed: the peer closed it, or reset it). */
    if ((err == STVM_ECLOSED || err == STVM_ECONNRESET || err == STVM_EPIPE) && reused &&
        !x.any_response) {
        disconnect(vm, c);
        c->stats.retries++;
        exchange_start(vm, &x, c, path);
        if (!(err = connect_(vm, c)))
            err = exchange_once(vm, &x, body, cap, r);
    }
    if (!err)
        err = exchange_end(vm, &x, r);
    if (err) {
        disconnect(vm, c);
        return err;
    }
    c->why[0] = 0;   /* a retry that succeeded leaves no reason behind */
    c->requests_on_connection++;
    c->stats.requests++;
    if (r->close || c->stream->at_end)
        disconnect(vm, c);
    return STVM_OK;
}
