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
 * Work knobs place pure CPU work before the send, between the send and the first read,
 * and after the read: the placement test of the experiment.
 */
#ifndef STVM_IMAGE_STUBS_ZN_CLIENT_H
#define STVM_IMAGE_STUBS_ZN_CLIENT_H

#include "socket_stream.h"

/* ZnNetworkingUtils' default socket stream timeout: 30 s for every wait. */
#define ZN_DEFAULT_TIMEOUT_MS 30000

/* The log events of one request, in the order ZnClient emits them. */
typedef enum zn_event_kind {
    ZN_EVENT_REQUEST_WRITTEN,   /* between the flush and the first read */
    ZN_EVENT_RESPONSE_READ,
    ZN_EVENT_TRANSACTION,
} zn_event_kind;

/* What an event carries (ZnClientLogEvent and its subclasses). */
typedef struct zn_event_info {
    int status;                 /* the response's, 0 before it is read */
    size_t request_bytes, response_bytes;
    uint64_t request_duration_us, response_duration_us;
} zn_event_info;

/* Called at each of the three points when the log level asks for the event (the
 * experiment connects this to the ZnLogEvent announcer). */
typedef void (*zn_event_hook)(stvm_vm *vm, zn_event_kind kind, const zn_event_info *info,
                              void *arg);

typedef struct zn_client_config {
    const char *host;           /* numeric IPv4/IPv6 or "localhost" */
    int port;
    int64_t timeout_ms;         /* each wait, connect included; 0 = ZN_DEFAULT_TIMEOUT_MS */
    int log_level;              /* 0: no event; 1, 2: the transaction event; 3: all three */
    zn_event_hook on_event;
    void *event_arg;
    uint32_t before_us;         /* CPU work before building the request */
    uint32_t between_us;        /* after the flush and the request-written event */
    uint32_t after_us;          /* after the transaction event */
} zn_client_config;

/* Per request, what the experiment reports; the client adds to these. */
typedef struct zn_client_stats {
    uint64_t requests;          /* answered */
    uint64_t connects;          /* connections opened (the first one included) */
    uint64_t retries;           /* requests sent again on a new connection */
    uint64_t first_reads_blocked;  /* the response's first read found nothing and waited */
    uint64_t reads_blocked;     /* any read of a response that waited */
    uint64_t before_ns, between_ns, wait_ns, parse_ns, after_ns;  /* time in each phase */
} zn_client_stats;

typedef struct zn_response {
    int status;
    int64_t content_length;     /* -1 when none was given */
    bool chunked;
    bool close;                 /* "Connection: close" */
    size_t body_bytes;          /* read (and dropped unless a buffer is given) */
} zn_response;

typedef struct zn_client zn_client;

/* A client for host:port (no connection yet). EINVAL, ENOMEM. */
int zn_client_new(stvm_vm *vm, const zn_client_config *cfg, zn_client **out);
/* GET path; the body goes into body (up to cap bytes, the rest counted and dropped) when
 * body is not NULL. STVM_OK and *r, or: ECONNREFUSED, ETIMEDOUT, ECLOSED (the peer went
 * away, after the one retry), EPROTO (a malformed response: why() tells what), ESTATE,
 * ENOMEM. Needs an active process; switches. */
int zn_client_get(stvm_vm *vm, zn_client *c, const char *path, uint8_t *body, size_t cap,
                  zn_response *r);
/* Why the last request failed (a sentence, "" after a success). */
const char *zn_client_why(const zn_client *c);
const zn_client_stats *zn_client_stats_of(const zn_client *c);
/* Close the connection and free the client. */
void zn_client_free(stvm_vm *vm, zn_client *c);

/* Spend us of CPU (busy, on the real clock; no time passes on the simulated one). */
void zn_busy_us(stvm_vm *vm, uint32_t us);

#endif
