/*
 * stvm-bench delay: one DelayBenchmark run (a fresh VM, one representation, one N).
 * Measurement only: it fills a delay_sample and prints nothing.
 */
#ifndef STVM_BENCH_DELAY_RUN_H
#define STVM_BENCH_DELAY_RUN_H

#include "bench.h"
#include "delay_report.h"

typedef struct delay_run_params {
    const delay_repr *repr;
    long n;                 /* worker processes */
    const int *table;       /* DELAY_TABLE_SIZE durations in ms */
    int window_ms;          /* the window, and the drain after it */
    bool sim;               /* simulated clock */
    bool stack_guard;
    const bench_trace *trace;   /* the run's trace, or NULL */
} delay_run_params;

/* STVM_OK and *out filled, or a negative stvm error and a sentence in why. */
int delay_run_one(const delay_run_params *p, delay_sample *out, char *why, size_t whysize);

#endif
