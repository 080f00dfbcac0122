/*
 * stvm-bench zn: the results. A row is one configuration (every combination of the
 * comma lists) or the wrk baseline; its samples are the repetitions' raw counts, its
 * figures the medians over them of the per-request values. The one list of figures
 * (ZN_FIGURES) names the CSV columns and the JSON keys; the targets are judged here.
 */
#ifndef STVM_BENCH_ZN_REPORT_H
#define STVM_BENCH_ZN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZN_MAX_REPEAT 20
#define ZN_MAX_ROWS 400
#define ZN_MAX_LIST 16              /* values in one comma list */

typedef enum zn_logging {
    ZN_LOGGING_OFF,                 /* loggingOff: level 0, no event built */
    ZN_LOGGING_ON,                  /* loggingOn: level 3, nobody subscribed (fast path) */
    ZN_LOGGING_SUBSCRIBER,          /* level 3 and a synchronous subscriber */
    ZN_LOGGING_WRK,                 /* the baseline row: wrk -t1 -c1, no VM */
} zn_logging;

/* Which events the subscriber receives (a subscription to one class, or to ZnLogEvent). */
typedef enum zn_events {
    ZN_EVENTS_WRITTEN,              /* ZnRequestWrittenEvent: between send and read */
    ZN_EVENTS_READ,                 /* ZnResponseReadEvent: after the read */
    ZN_EVENTS_TRANSACTION,          /* ZnClientTransactionEvent: after the read */
    ZN_EVENTS_ALL,                  /* ZnLogEvent: all three */
} zn_events;

/* The knobs of one row. */
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

/* The same knobs, field by field. */
bool zn_config_equal(const zn_config *a, const zn_config *b);

const char *zn_logging_name(zn_logging l);
const char *zn_events_name(zn_events e);
const char *zn_idle_mode_name(int mode);

/* One repetition of one row: what the timed requests cost. */
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
    double wrk_requests_per_second; /* the wrk row only */
    double wrk_p50_us;
} zn_counts;

/* The figures, per request unless named otherwise: X(ID, name, decimals). */
#define ZN_FIGURES(X)                                                                 \
    X(RPS, "requests_per_second", 0)                                                  \
    X(VS_WRK, "vs_wrk", 2)               /* requests/s over the wrk row's, per rep. */ \
    X(US, "us_per_request", 1)                                                        \
    X(CPU_US, "cpu_us_per_request", 1)                                                \
    X(BLOCKED, "blocked_reads_per_request", 3)                                        \
    X(BLOCKED_FIRST, "blocked_first_reads_per_request", 3)                            \
    X(TIMED_WAITS, "timed_waits_per_request", 3)                                      \
    X(TIMING, "timing_activations_per_request", 3)                                    \
    X(OS_SLEEPS, "os_sleeps_per_request", 3)                                          \
    X(SLEPT_US, "os_slept_us_per_request", 1)                                         \
    X(WAKE_IO, "wakeups_io_per_request", 3)                                           \
    X(WAKE_TIMER, "wakeups_timer_per_request", 3)                                     \
    X(WAKE_RELINQUISH, "wakeups_relinquish_per_request", 3)                           \
    X(WAKE_EXTERNAL, "wakeups_external_per_request", 3)                               \
    X(FDS_READY, "fds_ready_per_request", 3)                                          \
    X(POLLS_BUSY, "io_polls_busy_per_request", 3)                                     \
    X(SWITCHES, "context_switches_per_request", 2)                                    \
    X(EVENTS, "events_per_request", 2)                                                \
    X(DELIVERIES, "deliveries_per_request", 2)                                        \
    X(BEFORE, "mean_before_us", 1)                                                    \
    X(BETWEEN, "mean_between_us", 1)                                                  \
    X(WAIT, "mean_wait_us", 1)                                                        \
    X(PARSE, "mean_parse_us", 1)                                                      \
    X(AFTER, "mean_after_us", 1)                                                      \
    X(CONNECTS, "connects_per_request", 4)                                            \
    X(WRK_P50, "wrk_p50_us", 1)

typedef enum zn_figure {
#define ZN_ENUM(id, name, dec) ZN_FIG_##id,
    ZN_FIGURES(ZN_ENUM)
#undef ZN_ENUM
    ZN_NFIGS
} zn_figure;

extern const char *const zn_figure_names[ZN_NFIGS];
extern const int zn_figure_decimals[ZN_NFIGS];

typedef struct zn_row {
    zn_config cfg;
    int nsamples;                   /* repetitions that ran */
    zn_counts samples[ZN_MAX_REPEAT];
    double values[ZN_MAX_REPEAT][ZN_NFIGS];  /* per repetition (NaN: not defined) */
    double fig[ZN_NFIGS];           /* medians over the repetitions */
    double spread[ZN_NFIGS];        /* max - min over the repetitions */
    long long cut_short;            /* repetitions the time limit ended early */
    char note[240];
} zn_row;

typedef struct zn_report {
    int repeat;
    long long requests, warmup;
    double max_seconds;
    int wrk_seconds;                /* 0: no wrk row */
    int cpu;
    int port;
    size_t body_size;
    char nginx_version[64];
    zn_row rows[ZN_MAX_ROWS];       /* the wrk row first when there is one */
    int nrows;
} zn_report;

/* The medians, spreads and ratios from the samples. */
void zn_report_summarise(zn_report *r);
const zn_row *zn_wrk_row(const zn_report *r);
/* The first row with exactly these knobs, or NULL. */
const zn_row *zn_find_row(const zn_report *r, const zn_config *cfg);

/* ---- the targets ------------------------------------------------------------------------ */

typedef struct zn_verdict {
    const char *label;
    char measured[200];             /* the figures it was judged on */
    const char *met;                /* "met", "MISSED" or "not measured" */
} zn_verdict;

#define ZN_MAX_VERDICTS 16
/* Judge every target whose rows ran; answers how many verdicts were written. */
int zn_judge(const zn_report *r, zn_verdict *out, int max);

#endif
