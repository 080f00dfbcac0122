/*
 * stvm-bench: the baseline for the HTTP experiments, Debian's wrk run against the same
 * nginx in the same run: `wrk -t1 -c1 -dNs --latency URL`, bounded in time, its text
 * parsed into figures. Not a load generator of ours.
 */
#ifndef STVM_BENCH_WRK_H
#define STVM_BENCH_WRK_H

#include <stddef.h>
#include <stdint.h>

/* The Debian package that provides /usr/bin/wrk. */
#define WRK_PACKAGE "wrk"

typedef struct wrk_options {
    const char *binary;  /* NULL (default): wrk in PATH, then /usr/bin/wrk */
    int threads;         /* -t (default 1) */
    int connections;     /* -c (default 1) */
    int seconds;         /* -d (default 5); wrk is killed if it runs 10 s longer */
} wrk_options;

void wrk_options_init(wrk_options *o);

/* wrk's figures. Times in microseconds; a field wrk did not print is 0. */
typedef struct wrk_result {
    double requests_per_sec;     /* "Requests/sec:" */
    double transfer_per_sec;     /* "Transfer/sec:", bytes */
    uint64_t requests;           /* "N requests in T, B read" */
    double seconds;              /*   T */
    double bytes_read;           /*   B */
    double latency_avg_us, latency_stdev_us, latency_max_us;        /* "Latency" row */
    double latency_p50_us, latency_p75_us, latency_p90_us, latency_p99_us;  /* --latency */
    uint64_t errors_connect, errors_read, errors_write, errors_timeout; /* "Socket errors" */
    uint64_t non_2xx;            /* "Non-2xx or 3xx responses" */
    char output[4096];           /* what wrk printed (stdout and stderr, truncated) */
} wrk_result;

/* Run wrk on url (http://...) and parse what it prints. 0, or -1 with err set: wrk
 * missing (naming the package), not ending in time, failing, or printing no rate or
 * percentiles. o may be NULL (defaults). r->output holds wrk's text in every case. */
int wrk_run(const wrk_options *o, const char *url, wrk_result *r, char *err, size_t errsize);

/* Parse wrk's text into r (r->output is left alone). 0 when it held Requests/sec and the
 * four latency percentiles; -1 otherwise. */
int wrk_parse(const char *text, wrk_result *r);

#endif
