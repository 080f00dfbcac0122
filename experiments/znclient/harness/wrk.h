/*
 * The HTTP harness: the baseline for the HTTP experiments, Debian's wrk on the same server in
 * the same run: `wrk -tT -cC -dNs -s /dev/stdin URL`, bounded in time. Its script (stdin,
 * an unlinked scratch file, so nothing is left behind) is a Lua done() printing wrk's
 * figures as "key value" lines after a marker line; only those are read.
 */
#ifndef STVM_HARNESS_WRK_H
#define STVM_HARNESS_WRK_H

#include <stddef.h>

#define WRK_PACKAGE "wrk"   /* Debian's, providing /usr/bin/wrk */
#define WRK_MARKER "stvm-harness-wrk-figures"

typedef struct wrk_options {
    const char *binary;  /* NULL (default): wrk in PATH, then /usr/bin/wrk */
    int threads;         /* -t (default 1) */
    int connections;     /* -c (default 1) */
    int seconds;         /* -d (default 5); wrk is killed if it runs 10 s longer */
} wrk_options;

void wrk_options_init(wrk_options *o);

/* wrk's figures as done(s, l) sees them (times in us): X(key, Lua expression). */
#define WRK_FIGURES(X)                                                                     \
    X(requests, "s.requests") X(duration_us, "s.duration") X(bytes, "s.bytes")             \
    X(errors_connect, "s.errors.connect") X(errors_read, "s.errors.read")                  \
    X(errors_write, "s.errors.write") X(errors_status, "s.errors.status")                  \
    X(errors_timeout, "s.errors.timeout") X(latency_mean_us, "l.mean")                     \
    X(latency_stdev_us, "l.stdev") X(latency_max_us, "l.max")                              \
    X(latency_p50_us, "l:percentile(50)") X(latency_p75_us, "l:percentile(75)")            \
    X(latency_p90_us, "l:percentile(90)") X(latency_p99_us, "l:percentile(99)")

typedef struct wrk_result {
#define WRK_FIELD(key, lua) double key;
    WRK_FIGURES(WRK_FIELD)
#undef WRK_FIELD
    double requests_per_sec;   /* requests / duration */
    char output[4096];         /* what wrk printed (stdout and stderr, truncated) */
} wrk_result;

/* Run wrk on url (http://...) with o (wrk_options_init's defaults, changed); forks and
 * waits. 0, or -1 with err set: wrk missing (naming the package), not ending in time,
 * failing, or printing no figures. r->output holds wrk's text in every case. */
int wrk_run(const wrk_options *o, const char *url, wrk_result *r, char *err, size_t errsize);

/* The "key value" lines after WRK_MARKER in text into r: 0 when every key was there
 * with a number and the duration is positive; -1 otherwise. */
int wrk_parse(const char *text, wrk_result *r);

#endif
