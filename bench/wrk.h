/*
 * stvm-bench: the baseline for the HTTP experiments, Debian's wrk run against the same
 * server in the same run: `wrk -tT -cC -dNs -s /dev/stdin URL`, bounded in time. Its
 * script (on stdin, an unlinked scratch file, so nothing is left behind) is a Lua
 * done() that prints wrk's figures after a marker line as "key value" lines; only
 * those are read, wrk's own text is kept for messages. Not a load generator of ours.
 */
#ifndef STVM_BENCH_WRK_H
#define STVM_BENCH_WRK_H

#include <stddef.h>

#define WRK_PACKAGE "wrk"   /* Debian's, providing /usr/bin/wrk */
#define WRK_MARKER "stvm-bench-wrk-figures"

typedef struct wrk_options {
    const char *binary;  /* NULL (default): wrk in PATH, then /usr/bin/wrk */
    int threads;         /* -t (default 1) */
    int connections;     /* -c (default 1) */
    int seconds;         /* -d (default 5); wrk is killed if it runs 10 s longer */
} wrk_options;

void wrk_options_init(wrk_options *o);

/* wrk's figures as its done() sees them; times in microseconds. */
typedef struct wrk_result {
    double requests, duration_us, bytes;
    double errors_connect, errors_read, errors_write, errors_status, errors_timeout;
    double latency_mean_us, latency_stdev_us, latency_max_us;
    double latency_p50_us, latency_p75_us, latency_p90_us, latency_p99_us;
    double requests_per_sec;   /* requests / duration */
    char output[4096];         /* what wrk printed (stdout and stderr, truncated) */
} wrk_result;

/* Run wrk on url (http://...); forks and waits. 0, or -1 with err set: wrk missing
 * (naming the package), not ending in time, failing, or printing no figures. o may be
 * NULL (defaults). r->output holds wrk's text in every case. */
int wrk_run(const wrk_options *o, const char *url, wrk_result *r, char *err, size_t errsize);

/* The "key value" lines after WRK_MARKER in text into r: 0 when every key was there
 * with a number and the duration is positive; -1 otherwise. */
int wrk_parse(const char *text, wrk_result *r);

#endif
