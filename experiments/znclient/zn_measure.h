/* The ZnClient experiment: one configuration measured in a fresh VM (zn_run.c); it fills
 * zn_counts and prints nothing. */
#ifndef STVM_ZNCLIENT_MEASURE_H
#define STVM_ZNCLIENT_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <stvm.h>

/* A clock's reading in ns: CLOCK_MONOTONIC for spans, CLOCK_PROCESS_CPUTIME_ID for CPU,
 * CLOCK_REALTIME for the kernel's receive timestamps (zn_record.c). */
static inline int64_t zn_clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* --trace: the traced configuration's VM recorded into a ring of this many events. */
#define ZN_TRACE_EVENTS ((size_t)1 << 22)

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

/* The knobs of one configuration; every field is 4 bytes, so there is no padding and
 * memcmp tells two configurations apart. */
typedef struct zn_config {
    zn_logging logging;
    uint32_t subscriber_cost_us;    /* CPU per delivered event (subscriber rows) */
    zn_events subscriber_events;
    int idle_mode;                  /* STVM_IDLE_* */
    uint32_t idle_us;               /* the relinquish quantum (primitive 230's argument) */
    uint32_t wake_inject_us;        /* extra latency after every OS sleep */
    uint32_t before_us, between_us, after_us;   /* CPU work placed around the exchange */
    uint32_t event_cost_us;         /* building one ZnLogEvent (DateAndTime now, alloc) */
    uint32_t plain_wait;            /* 1: waitForDataIfClosed: instead of waitForDataFor: */
    uint32_t background;            /* 1: a busy process at priority 30 */
    /* The modelled world's (--model; 0 elsewhere): */
    uint32_t server_us;             /* the server's turnaround: at least this */
    uint32_t server_jitter_us;      /* plus an exponential spread of this mean */
    uint32_t client_us;             /* the client's own CPU per request: half before the
                                       send, half parsing the response */
} zn_config;
_Static_assert(sizeof(zn_config) == 15 * 4, "zn_config has padding");

/* Where a configuration runs (zn_world.h). */
typedef enum zn_world_kind {
    ZN_WORLD_REAL,                  /* nginx over loopback TCP, the wall clock */
    ZN_WORLD_MODEL,                 /* the modelled server, the simulated clock */
    ZN_WORLD_REPLAY,                /* a recorded run, the simulated clock */
} zn_world_kind;

/* The counters a repetition takes the difference of: X(field, snapshot part, its field). */
#define ZN_COUNTS(X)                                                                       \
    X(reads_blocked, client, reads_blocked) X(first_reads_blocked, client, first_reads_blocked) \
    X(connects, client, connects) X(retries, client, retries)                              \
    X(before_ns, client, before_ns) X(between_ns, client, between_ns)                      \
    X(wait_ns, client, wait_ns) X(parse_ns, client, parse_ns) X(after_ns, client, after_ns) \
    X(timed_waits, vm, timed_waits) X(timing_activations, vm, timing_loop_passes)          \
    X(os_sleeps, vm, os_sleeps) X(os_slept_us, vm, os_slept_us)                            \
    X(wakeups_timer, vm, wakeups_timer) X(wakeups_io, vm, wakeups_io)                      \
    X(wakeups_external, vm, wakeups_external) X(wakeups_relinquish, vm, wakeups_relinquish) \
    X(fds_ready, vm, fds_ready) X(io_polls_busy, vm, io_polls_busy)                        \
    X(context_switches, vm, context_switches) X(events_built, log, events_built)           \
    X(deliveries, log, announcer.deliveries)

/* One repetition of one configuration: what the timed requests cost. */
typedef struct zn_counts {
    long long requests;             /* answered in the timed part */
    int64_t wall_ns, cpu_ns;        /* CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID; on the
                                       simulated clock its time, and that time less the
                                       simulated sleeps */
#define ZN_COUNT_FIELD(f, part, g) uint64_t f;
    ZN_COUNTS(ZN_COUNT_FIELD)
#undef ZN_COUNT_FIELD
    bool cut_short;                 /* the time limit ended it before its requests */
} zn_counts;

/* Everything one configuration runs with. */
typedef struct zn_params {
    zn_config cfg;
    const char *host;               /* "127.0.0.1", "::1" or "localhost" */
    int port;
    const char *path;               /* what is fetched */
    size_t body_size;               /* every response's length; 0: the first one's */
    long long requests, warmup;     /* timed, after warmup untimed ones */
    double max_seconds;             /* the timed requests stop here even if short */
    const char *trace;              /* --trace: the VM's trace into this file, or NULL */
    zn_world_kind world;
    uint32_t seed;                  /* the model's spread */
    const struct zn_rec_cell *replay;   /* ZN_WORLD_REPLAY: the recorded cell */
    struct zn_recorder *recorder;   /* ZN_WORLD_REAL: writes down the run, or NULL */
} zn_params;

/* Run one configuration in a fresh VM: 0 and *c, or a negative stvm error with a
 * sentence in why. Allocates and frees the VM; blocks until it ends. */
int zn_measure(const zn_params *p, zn_counts *c, char *why, size_t whysize);

#endif
