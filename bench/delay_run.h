/*
 * stvm-bench delay: one DelayBenchmark run (a fresh VM, one representation, one N).
 * Measurement only: it fills a sample of figures and prints nothing; delay.c turns the
 * samples into records.
 */
#ifndef STVM_BENCH_DELAY_RUN_H
#define STVM_BENCH_DELAY_RUN_H

#include "bench.h"
#include "delay_cost.h"

/* A variant of the run: a representation, and the VM's timer slack. */
typedef struct delay_repr {
    char name[40];          /* "ms-smallint31" ...; "us-smallint61@slack0" when several
                               slacks are compared */
    int delay_clock;        /* STVM_DELAY_CLOCK_MS or _US */
    int smallint_bits;      /* 31 or 61 */
    int timer_slack_us;     /* stvm_config.timer_slack_us */
} delay_repr;

/* One run's figures in the records' order: name, unit, which way is better, decimals.
 * Per-delay figures divide by the delays started in the window (EnterCount); counters
 * are differences over the window. */
#define DELAY_FIGURES(X)                                                                   \
    X(delays_per_second, "1/s", HIGHER, 0)   /* EnterCount * 1000 / window_ms */          \
    X(us_per_delay, "us", LOWER, 2)          /* 1e6 / the rate: gbench's real time */     \
    X(cpu_us_per_delay, "us", LOWER, 3)      /* process CPU: gbench's CPU time */         \
    X(boxed_per_delay, "", LOWER, 2)                                                      \
    X(large_ops_per_delay, "", LOWER, 2)                                                  \
    X(late_p50_us, "us", LOWER, 0)           /* from the histogram, clamped at 0 */       \
    X(late_p99_us, "us", LOWER, 0)                                                        \
    X(late_max_us, "us", LOWER, 0)                                                        \
    X(late_min_us, "us", NONE, 0)            /* signed: negative when a wait ended early */ \
    X(exit_count, "", NONE, 0)               /* ExitCount after the drain */              \
    X(enter_count, "", NONE, 0)              /* EnterCount at the window's end: "Count" */ \
    X(exit_in_window, "", NONE, 0)           /* ExitCount at the window's end */          \
    X(timing_loop_passes_per_delay, "", LOWER, 3)                                         \
    X(clock_reads_per_delay, "", LOWER, 3)                                                \
    X(delays_scheduled_per_delay, "", NONE, 3)                                            \
    X(delays_expired_per_delay, "", NONE, 3)                                              \
    X(context_switches_per_delay, "", LOWER, 3)                                           \
    X(idle_sleeps_per_delay, "", NONE, 3)    /* the idle process slept in the kernel */   \
    X(os_sleeps_per_second, "1/s", LOWER, 0) /* OS waits that could block, per window s */ \
    X(timer_fires_per_delay, "", NONE, 3)                                                 \
    X(early_waits, "", LOWER, 0)             /* waits that ended before their end */      \
    X(late_samples, "", NONE, 0)             /* waits whose lateness was recorded */      \
    X(wall_window_ms, "ms", NONE, 1)         /* measured wall time of the window */       \
    X(cpu_window_ms, "ms", LOWER, 1)         /* process CPU time during the window */    \
    X(sim_cost_us_per_delay, "us", LOWER, 3) /* --sim-cost's charge; NaN without one */

/* A figure's index in a sample: DELAY_delays_per_second, ... */
enum {
#define DELAY_INDEX(name, unit, better, decimals) DELAY_##name,
    DELAY_FIGURES(DELAY_INDEX)
#undef DELAY_INDEX
    DELAY_NFIGURES
};

typedef struct delay_run_params {
    const delay_repr *repr;
    long n;                 /* worker processes */
    const int *table;       /* DELAY_TABLE_SIZE durations in ms */
    int window_ms;          /* the window, and the drain after it */
    bool sim;               /* simulated clock */
    const delay_cost *cost; /* --sim-cost (charged on the simulated clock only), or NULL */
    bool stack_guard;
    const bench_trace *trace;   /* the run's trace, or NULL */
} delay_run_params;

/* Runs one DelayBenchmark in a fresh VM (allocates it and frees it; switches green
 * processes inside it). Errors, as a negative stvm error with a sentence in why:
 *   the VM could not be created or run;
 *   out of memory for the workers;
 *   the trace could not be started or written.
 * STVM_OK and out filled otherwise. */
int delay_run_one(const delay_run_params *p, double out[DELAY_NFIGURES], char *why,
                  size_t whysize);

#endif
