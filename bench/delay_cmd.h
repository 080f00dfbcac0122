/*
 * stvm-bench delay: what the command's two files share (delay.c: the options, the
 * sweep, main; delay_report.c: the tables for people, the targets with the reasons for
 * their misses, the run's note and the report's words).
 */
#ifndef STVM_BENCH_DELAY_CMD_H
#define STVM_BENCH_DELAY_CMD_H

#include "bench.h"
#include "delay_cost.h"
#include "delay_run.h"
#include "record.h"

#define DEFAULT_SLACK_US 50   /* stvm_config's default timer slack */
#define MAX_SLACKS 8

#define NKNOWN 4          /* the representations delay.c knows */

/* What the option table fills. */
typedef struct delay_opts {
    const char *repr;               /* a TEXT list: its order matters (the first is 100%) */
    bench_ints concurrency;
    unsigned clocks;                /* bit 0 real, bit 1 sim (CLOCK_BIT) */
    long long repeat, window_ms;
    bench_ints slacks;
    bool no_stack_guard;
    const char *sim_cost;
    const char *plot, *report;
} delay_opts;

#define CLOCK_BIT(sim) (1u << (sim))
/* The values of the report's figures that are not stvm's: Pharo 2015's DelayBenchmark
 * (the seed, on a 32-bit Cog VM), per #ConcurrentDelays 1000..10000 step 1000: row 0
 * withNewCodeEnabled: false (ms SmallIntegers), row 1 true (µs LargePositiveIntegers);
 * in delay_report.c. */
#define SEED_ROWS 10
extern const double seed_rate[2][SEED_ROWS];
extern const char *const seed_label[2];
#define SEED_CYCLE_US 50000.0   /* the seed's main Morph interCyclePause, 50 ms */

typedef struct delay_sweep {
    delay_repr reprs[NKNOWN * MAX_SLACKS];   /* each representation at each slack */
    int nreprs;
    int sims[2];                    /* the clocks run, in order (1 sim, 0 real): sim first */
    int nclocks;
    const delay_opts *o;
    const bench_invocation *inv;
    const int *table;
    delay_cost cost;                /* --sim-cost */
    bench_results r;                /* cell (ci, ni, ri) is record cell(s, ci, ni, ri) */
} delay_sweep;

/* The record of cell (clock ci, N ni, representation ri). */
static inline int cell(const delay_sweep *s, int ci, int ni, int ri)
{
    return (ci * s->o->concurrency.n + ni) * s->nreprs + ri;
}

/* delay_report.c: every table for people, the targets (judged, each miss with its
 * reason) and the run's note, into s->r once the sweep ran. */
void delay_results(delay_sweep *s);
/* The report's words before its tables (bench_report's prose; data: the sweep). */
void delay_report_prose(FILE *f, const bench_results *people, const void *data);

#endif
