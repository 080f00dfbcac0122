/*
 * stvm-bench zn: one configuration measured (zn_run.c): a fresh VM with the configured
 * idle mode, the ZnClient-shaped client in a priority-40 process (the UI process)
 * making GET requests to the server, logging off, on, or on with a synchronous
 * subscriber. Measurement only: it fills zn_counts and prints nothing.
 */
#ifndef STVM_BENCH_ZN_MEASURE_H
#define STVM_BENCH_ZN_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

typedef enum zn_logging {
    ZN_LOGGING_OFF,                 /* loggingOff: level 0, no event built */
    ZN_LOGGING_ON,                  /* loggingOn: level 3, nobody subscribed (fast path) */
    ZN_LOGGING_SUBSCRIBER,          /* level 3 and a synchronous subscriber */
    ZN_LOGGING_WRK,                 /* the baseline: wrk -t1 -c1, no VM */
} zn_logging;

/* Which events the subscriber receives (a subscription to one class, or to ZnLogEvent). */
typedef enum zn_events {
    ZN_EVENTS_WRITTEN,              /* ZnRequestWrittenEvent: between send and read */
    ZN_EVENTS_READ,                 /* ZnResponseReadEvent: after the read */
    ZN_EVENTS_TRANSACTION,          /* ZnClientTransactionEvent: after the read */
    ZN_EVENTS_ALL,                  /* ZnLogEvent: all three */
} zn_events;

/* The knobs of one configuration. */
typedef struct zn_config {
    zn_logging logging;
    uint32_t subscriber_cost_us;    /* CPU per delivered event (subscriber rows) */
    zn_events subscriber_events;
    int idle_mode;                  /* STVM_IDLE_* */
    uint32_t idle_us;               /* the relinquish quantum (primitive 230's argument) */
    uint32_t wake_inject_us;        /* extra latency after every OS sleep */
    uint32_t before_us, between_us, after_us;   /* CPU work placed around the exchange */
    uint32_t event_cost_us;         /* building one ZnLogEvent (DateAndTime now, alloc) */
    bool plain_wait;                /* waitForDataIfClosed: instead of waitForDataFor: */
    bool background;                /* a busy process at priority 30 */
} zn_config;

/* One repetition of one configuration: what the timed requests cost. */
typedef struct zn_counts {
    long long requests;             /* answered in the timed part */
    int64_t wall_ns, cpu_ns;        /* CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID */
    uint64_t reads_blocked, first_reads_blocked, connects, retries;
    uint64_t before_ns, between_ns, wait_ns, parse_ns, after_ns;
    uint64_t timed_waits, timing_activations, os_sleeps, os_slept_us;
    uint64_t wakeups_timer, wakeups_io, wakeups_external, wakeups_relinquish;
    uint64_t fds_ready, io_polls_busy, context_switches;
    uint64_t events_built, deliveries;
    bool cut_short;                 /* the time limit ended it before its requests */
} zn_counts;

/* Everything one configuration runs with. */
typedef struct zn_params {
    zn_config cfg;
    const char *host;               /* "127.0.0.1", "::1" or "localhost" */
    int port;
    const char *path;               /* what is fetched */
    size_t body_size;               /* its length, checked on every response; 0: the
                                       length the first response had */
    long long requests;             /* timed, after the warm-up */
    long long warmup;
    double max_seconds;             /* the timed requests stop here even if short */
    const bench_trace *trace;       /* the VM's trace, or NULL */
} zn_params;

/* Run one configuration in a fresh VM: 0 and *c, or a negative stvm error with a
 * sentence in why. Allocates and frees the VM; blocks until it ends. */
int zn_measure(const zn_params *p, zn_counts *c, char *why, size_t whysize);

#endif
