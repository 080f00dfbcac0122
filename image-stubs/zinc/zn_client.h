/*
 * A ZnClient-shaped HTTP/1.1 client on SocketStream: the subject of the ZnClient
 * experiment, written for the model rather than as a general client. One request is
 * ZnClient>>executeRequestResponse: build the request, write it into the stream's 4 KiB
 * buffer, one flush, the request-written log event, read and parse the status line, the
 * headers and the body (Content-Length or chunked) through the read buffer, then the
 * response-read and transaction events. The connection is kept alive and reused; on
 * "Connection: close" or the end of the stream the next request reconnects, and a
 * request that fails on a reused connection before any of its response arrived is
 * retried once on a new one, as ZnClient does.
 *
 * Logging goes through zn_log.h's three steps, at the three points ZnClient calls them,
 * whatever the level (level 0 builds nothing). Work knobs place pure CPU work
 * (stvm_work_us) before the send, between the send and the first read, and after the
 * read: the placement test of the experiment. A world (zn_client_world) may open the
 * connection instead of TCP (the simulated clock's server) and is told each point of
 * each request (a recorder, or that server). Not modelled: redirects, request
 * bodies, other methods than GET, proxies, TLS, the connection events.
 */
#ifndef STVM_IMAGE_STUBS_ZN_CLIENT_H
#define STVM_IMAGE_STUBS_ZN_CLIENT_H

#include "../network/socket_stream.h"
#include "zn_log.h"

/* ZnNetworkingUtils' default socket stream timeout: 30 s for every wait. */
#define ZN_DEFAULT_TIMEOUT_MS 30000

typedef struct zn_client zn_client;

/* The points of a request a world watches (zn_client_world.at), in their order. */
typedef enum zn_point {
    ZN_AT_CONNECTED,            /* a new connection is open (before its first request) */
    ZN_AT_SEND,                 /* the request is about to be written */
    ZN_AT_SENT,                 /* its flush returned: the request has left */
    ZN_AT_READING,              /* the response's first read begins */
    ZN_AT_READ,                 /* the first read returned bytes */
    ZN_AT_PARSED,               /* the response is read, before the response-read step */
} zn_point;

/* What stands around the client: the real network (all NULL), or a recording of it, or
 * the simulated clock's server. dial opens a connection instead of stvm_tcp_connect
 * (STVM_OK and *out, which the client owns, or an error); at is told each point of each
 * request as the client passes it, in the client's process (it may compute with
 * stvm_work_us, schedule stvm_sim_at events, read the clocks; it must not use the
 * client). */
typedef struct zn_client_world {
    int (*dial)(stvm_vm *vm, void *arg, stvm_socket **out);
    void (*at)(stvm_vm *vm, void *arg, const zn_client *c, zn_point point);
    void *arg;
} zn_client_world;

typedef struct zn_client_config {
    const char *host;           /* numeric IPv4/IPv6 or "localhost" */
    int port;
    int64_t timeout_ms;         /* each wait, connect included: 0 = ZN_DEFAULT_TIMEOUT_MS
                                   (Socket>>waitForDataFor:, a timed wait through the
                                   Delay scheduler); -1 = none (waitForDataIfClosed:, a
                                   plain semaphore wait) */
    zn_log *log;                /* ZnLogEvent's class side; NULL only with level 0 */
    zn_client_log logging;      /* logLevel (ZN_LOG_*) and clientId */
    uint32_t before_us;         /* CPU work before building the request */
    uint32_t between_us;        /* after the flush and the request-written step */
    uint32_t after_us;          /* after the transaction step */
    zn_client_world world;      /* all NULL: TCP to host:port, nothing watches */
} zn_client_config;

/* What the experiment reports; the client adds to these. */
typedef struct zn_client_stats {
    uint64_t requests;          /* answered */
    uint64_t connects;          /* connections opened (the first one included) */
    uint64_t retries;           /* requests sent again on a new connection */
    uint64_t first_reads_blocked;  /* the response's first read found nothing and waited */
    uint64_t reads_blocked;     /* any read of a response that waited (the first too) */
    uint64_t before_ns, between_ns, wait_ns, parse_ns, after_ns;  /* time in each phase
                                   (OS monotonic clock): before = the before work; between
                                   = writing, the request-written step and the between
                                   work; wait = the first read; parse = the rest of the
                                   response; after = the other two steps and the after
                                   work; on the simulated clock, its time */
} zn_client_stats;

typedef struct zn_response {
    int status;
    int64_t content_length;     /* -1 when none was given */
    bool chunked;
    bool close;                 /* "Connection: close", or HTTP/1.0 without keep-alive */
    size_t body_bytes;          /* read (and dropped past the caller's buffer) */
} zn_response;

/* A client for host:port (no connection yet). Errors: EINVAL (NULLs, a port outside
 * 1..65535, a host of 256 bytes or more, timeout_ms < -1, a level outside 0..3, a level
 * above 0 without a log, a work knob above ZN_LOG_MAX_COST_US), ENOMEM. Allocates
 * (malloc); never switches. The caller owns it: stvm__zn_client_free. */
int stvm__zn_client_new(stvm_vm *vm, const zn_client_config *cfg, zn_client **out);

/* GET path (at most 1024 bytes, sent as it is), as ZnClient>>get: does. The body goes
 * into body (up to cap bytes; the rest is counted and dropped) when body is not NULL.
 * STVM_OK and *r, or: EINVAL, ENOTPROC, ECONNREFUSED, ETIMEDOUT, ECLOSED (the peer went
 * away: on a new connection, or again after the one retry), ECONNRESET or EPIPE (the
 * peer reset the connection, likewise), EPROTO (a malformed
 * response: why() tells what), ESTATE, ENOMEM; after an error the connection is closed
 * and the next request opens a new one. Needs an active process; switches (socket
 * waits, log subscribers, the work knobs' checkpoints). */
int stvm__zn_client_get(stvm_vm *vm, zn_client *c, const char *path, uint8_t *body,
                        size_t cap, zn_response *r);

/* Why the last request failed (a sentence; "" after a success). */
const char *stvm__zn_client_why(const zn_client *c);
const zn_client_stats *stvm__zn_client_stats(const zn_client *c);
/* The connection's descriptor, or -1 without one (a recording world reads the kernel's
 * receive timestamps on it). */
int stvm__zn_client_fd(const zn_client *c);

/* Close the connection and free the client (NULL is ignored). Never switches. */
void stvm__zn_client_free(stvm_vm *vm, zn_client *c);

#endif
