/*
 * stvm-bench delay: the results of a DelayBenchmark sweep, and the one list of the
 * figures of a run that the medians, the CSV columns and the JSON keys all walk, so a
 * figure has one name everywhere.
 *
 * Measurement (delay_run.h) fills these; rendering (delay_render.h) reads them; neither
 * knows the other.
 */
#ifndef STVM_BENCH_DELAY_REPORT_H
#define STVM_BENCH_DELAY_REPORT_H

#include <stdbool.h>
#include <stddef.h>
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

/* One run: a fresh VM, one representation, one N. Per-delay figures divide by the
 * delays started in the window (EnterCount); counters are differences over the window.
 * The member names are the figures' names in CSV and JSON (see delay_fields). */
typedef struct delay_sample {
    double delays_per_second;      /* enter_count * 1000 / window_ms */
    double cpu_us_per_delay;
    double boxed_per_delay;
    double late_p99_us;            /* from the histogram (clamped at 0) */
    uint64_t exit_count;           /* ExitCount after the drain */
    uint64_t enter_count;          /* EnterCount at the end of the window: "Count" */
    uint64_t exit_in_window;       /* ExitCount at the end of the window */
    double large_ops_per_delay;
    double timing_loop_passes_per_delay;
    double clock_reads_per_delay;
    double delays_scheduled_per_delay;
    double delays_expired_per_delay;
    double context_switches_per_delay;
    double idle_sleeps_per_delay;  /* times the idle process slept in the kernel */
    double timer_fires_per_delay;
    double late_p50_us;
    double late_max_us;
    double late_min_us;            /* signed: negative when a wait ended early */
    uint64_t early_waits;          /* waits that ended before their nominal end */
    double wall_window_ms;         /* measured wall time of the window */
    double cpu_window_ms;          /* process CPU time during the window */
    uint64_t late_samples;         /* waits whose lateness was recorded */
} delay_sample;

/* A figure of delay_sample: where it is, whether it counts (uint64_t) or measures
 * (double), and its CSV decimals (the JSON number is exact either way). */
typedef struct delay_field {
    const char *name;
    size_t offset;
    bool integer;
    int csv_decimals;
} delay_field;
extern const delay_field delay_fields[];
extern const size_t delay_nfields;
double delay_field_get(const delay_sample *s, const delay_field *f);
void delay_field_set(delay_sample *s, const delay_field *f, double v);

typedef struct delay_cell {
    int repr;                   /* index into the run's representations */
    long n;                     /* concurrency */
    int nsamples;
    delay_sample *samples;      /* repeat of them */
    delay_sample median;
    bool failed;
    char error[400];
} delay_cell;

typedef struct delay_report {
    const delay_repr *reprs;    /* in the order asked for; the first is 100% */
    int nreprs;
    const long *ns;
    int nns;
    delay_cell *cells;          /* nns * nreprs, cell (ni, ri) at ni * nreprs + ri */
    int repeat;
    int window_ms;
    bool sim;
    int cpu;
    double table_mean_ms;
} delay_report;

/* Each figure of c->median becomes the median of c's samples. */
void delay_cell_median(delay_cell *c);
const delay_cell *delay_report_cell(const delay_report *r, int ni, int ri);
/* The cell of representation ri with the highest median rate, or NULL if all failed. */
const delay_cell *delay_report_peak(const delay_report *r, int ri);
/* Its rate, NaN if none. */
double delay_report_peak_rate(const delay_report *r, int ri);
/* "ok", "partial" (some repetitions failed) or "failed". */
const char *delay_cell_status(const delay_report *r, const delay_cell *c);
const char *delay_report_clock(const delay_report *r);   /* "real" or "sim" */

#endif
