/*
 * stvm-bench zn: one configuration measured (zn_run.c): a fresh VM with the configured
 * idle mode, the ZnClient-shaped client in a priority-40 process (the UI process)
 * making GET requests to nginx, logging off, on, or on with a synchronous subscriber.
 * Measurement only: it fills zn_counts and prints nothing but progress.
 */
#ifndef STVM_BENCH_ZN_MEASURE_H
#define STVM_BENCH_ZN_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include "bench.h"
#include "zn_report.h"

/* Everything one configuration runs with. */
typedef struct zn_params {
    zn_config cfg;                  /* the row's knobs */
    int port;                       /* nginx on 127.0.0.1 */
    const char *path;               /* what is fetched (NGINX_PATH_STATIC) */
    size_t body_size;               /* its length, checked on every response */
    long long requests;             /* timed, after the warm-up */
    long long warmup;
    double max_seconds;             /* the timed requests stop here even if short */
    const bench_trace *trace;       /* the VM's trace, or NULL */
} zn_params;

/* Run one configuration in a fresh VM: 0 and *c, or a negative stvm error with a
 * sentence in why. */
int zn_measure(const zn_params *p, zn_counts *c, char *why, size_t whysize);

#endif
