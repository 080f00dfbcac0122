/*
 * stvm-bench delay: one DelayBenchmark run (a fresh VM, one representation, one N).
 * Measurement only: it fills a delay_sample and prints nothing; delay.c turns the
 * samples into records.
 */
#ifndef STVM_BENCH_DELAY_RUN_H
#define STVM_BENCH_DELAY_RUN_H

#include "bench.h"

#include <stdint.h>

#define DELAY_MAX_REPEAT 1000

/* A variant of the run: a representation, and the VM's timer slack. */
typedef struct delay_repr {
    char name[40];          /* "ms-smallint31" ...; "us-smallint61@slack0" when several
                               slacks are compared */
    int delay_clock;        /* STVM_DELAY_CLOCK_MS or _US */
    int smallint_bits;      /* 31 or 61 */
    int timer_slack_us;     /* stvm_config.timer_slack_us */
} delay_repr;

/* One run's figures, all doubles so delay.c reads each one alike. Per-delay figures
 * divide by the delays started in the window (EnterCount); counters are differences
 * over the window. The member names are the metrics' names (delay.c's list). */
typedef struct delay_sample {
    double delays_per_second;       /* enter_count * 1000 / window_ms */
    double cpu_us_per_delay, boxed_per_delay, large_ops_per_delay;
    double late_p50_us, late_p99_us, late_max_us;   /* from the histogram, clamped at 0 */
    double late_min_us;             /* signed: negative when a wait ended early */
    double exit_count;              /* ExitCount after the drain */
    double enter_count;             /* EnterCount at the end of the window: "Count" */
    double exit_in_window;          /* ExitCount at the end of the window */
    double timing_loop_passes_per_delay, clock_reads_per_delay, delays_scheduled_per_delay,
        delays_expired_per_delay, context_switches_per_delay, timer_fires_per_delay;
    double idle_sleeps_per_delay;   /* times the idle process slept in the kernel */
    double early_waits;             /* waits that ended before their nominal end */
    double late_samples;            /* waits whose lateness was recorded */
    double wall_window_ms;          /* measured wall time of the window */
    double cpu_window_ms;           /* process CPU time during the window */
} delay_sample;

typedef struct delay_run_params {
    const delay_repr *repr;
    long n;                 /* worker processes */
    const int *table;       /* DELAY_TABLE_SIZE durations in ms */
    int window_ms;          /* the window, and the drain after it */
    bool sim;               /* simulated clock */
    bool stack_guard;
    const bench_trace *trace;   /* the run's trace, or NULL */
} delay_run_params;

/* Runs one DelayBenchmark in a fresh VM (allocates it and frees it; switches green
 * processes inside it). Errors, as a negative stvm error with a sentence in why:
 *   the VM could not be created or run;
 *   out of memory for the workers;
 *   the trace could not be started or written.
 * STVM_OK and *out filled otherwise. */
int delay_run_one(const delay_run_params *p, delay_sample *out, char *why, size_t whysize);

#endif
