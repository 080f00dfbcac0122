/*
 * stvm-bench: the one result record every command fills (Google Benchmark's
 * BenchmarkReporter::Run, hyperfine's BenchmarkResult), and the targets judged on it;
 * render.h shows any command's results in any format.
 *
 * Memory: a bench_results owns everything in it (every add function copies its
 * strings); bench_results_free releases it. Out of memory ends the tool (status 1, a
 * message): a benchmark that cannot record what it measured has nothing to report.
 */
#ifndef STVM_BENCH_RECORD_H
#define STVM_BENCH_RECORD_H

#include <stdbool.h>
#include <stddef.h>

/* Which way a metric is better (stated, never guessed from the name). */
typedef enum bench_better {
    BENCH_BETTER_NONE,              /* a count or a setting: neither way */
    BENCH_BETTER_LOWER,             /* a time, a cost, memory */
    BENCH_BETTER_HIGHER,            /* a rate */
} bench_better;

/* One figure of one case: every sample (one per repetition), and their median, min and
 * max (NaN when there is none). */
typedef struct bench_metric {
    char *name;                     /* snake_case, unique in the record: "handoff_ns" */
    char *unit;                     /* "ns", "us", "1/s", "KiB", "B", "" (a count or ratio) */
    bench_better better;
    int decimals;                   /* for people; machines get every digit */
    double median, min, max;
    double *samples;
    int nsamples;
} bench_metric;

typedef struct bench_param {
    char *key;                      /* "idle_mode", "concurrency" */
    char *value;                    /* always text: "poll", "1000" */
} bench_param;

typedef enum bench_status {
    BENCH_OK,                       /* measured */
    BENCH_FAILED,                   /* a run failed: the note says why */
    BENCH_SKIPPED,                  /* not run (a limit, a missing program): the note says why */
} bench_status;

/* One case: what the command ran with these parameters. */
typedef struct bench_record {
    char *name;                     /* the case: "handoff", "pingpong", "us-smallint61" */
    bench_param *params;
    int nparams;
    bench_metric *metrics;
    int nmetrics;
    bench_status status;
    char *note;                     /* "" or a sentence */
    /* The gbench view's real_time and cpu_time: metric indexes, -1 for none (no
     * real_time: the record is left out of that view). */
    int gbench_real, gbench_cpu;
} bench_record;

/* A table for people (the seed's table, the delay summary), shown before the records
 * in the table and Markdown views and carried as text by JSON: cells of text, the first
 * row the header. */
typedef struct bench_table {
    char *title;                    /* a line above the table, or "" */
    int ncols, nrows;               /* nrows includes the header */
    char **cells;                   /* nrows * ncols, row-major */
    char *align;                    /* per column: 'l' or 'r' */
    char *footer;                   /* lines below the table, or "" */
} bench_table;

/* A target on one metric of one record, judged after the sweep: value = the median
 * (SPREAD: max - min of the samples) in the record `select` picks, rounded to the
 * metric's decimals (judged as printed); bound = limit, or limit * ref_metric's median
 * in the record `ref_select` picks (a ratio target). A selector is "case" or
 * "case key=value ..." (every pair must match; case "*" matches any). No record (or
 * reference) run with a sample: "not measured"; a command may mark a target "not
 * judged" with the reason in its note. */
typedef enum bench_target_kind {
    BENCH_TARGET_AT_MOST,           /* value <= bound */
    BENCH_TARGET_AT_LEAST,          /* value >= bound */
    BENCH_TARGET_SPREAD,            /* spread <= limit */
} bench_target_kind;

typedef enum bench_verdict {
    BENCH_MET,
    BENCH_MISSED,
    BENCH_NOT_MEASURED,
    BENCH_NOT_JUDGED,
} bench_verdict;

typedef struct bench_target {
    char *text;                     /* for people: "hand-off at most 25 ns" */
    bench_target_kind kind;
    char *select;                   /* the record judged */
    char *metric;
    double limit;
    char *ref_select, *ref_metric;  /* NULL unless a ratio target */
    /* Filled by bench_judge: */
    bench_verdict verdict;
    double value;                   /* what was judged (the spread for SPREAD), NaN if none */
    double bound;                   /* what it was judged against, NaN if none */
    char *note;                     /* "" or why not judged */
} bench_target;

/* What a command found: records, tables, targets. */
typedef struct bench_results {
    const char *command;            /* "delay"; static */
    bench_record *records;
    int nrecords, records_cap;
    bench_table *tables;
    int ntables, tables_cap;
    bench_target *targets;
    int ntargets, targets_cap;
    char *note;                     /* a paragraph for the whole run, or "" */
} bench_results;

void bench_results_init(bench_results *r, const char *command);
void bench_results_free(bench_results *r);

/* A new record at the end (status OK, no parameter, no metric, gbench -1); the pointer
 * stays valid until the next bench_record_add on r. */
bench_record *bench_record_add(bench_results *r, const char *name);
/* A parameter; printf-style value. */
void bench_param_add(bench_record *rec, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A metric from n samples (n may be 0: not measured); median, min and max computed
 * here. Answers its index in rec->metrics. */
int bench_metric_add(bench_record *rec, const char *name, const char *unit,
                     bench_better better, int decimals, const double *samples, int n);
/* One sample more on an existing metric (the summary is recomputed). */
void bench_metric_push(bench_metric *m, double sample);
/* The metric called name, or NULL. */
bench_metric *bench_metric_find(const bench_record *rec, const char *name);
/* The parameter's value, or NULL. */
const char *bench_param_find(const bench_record *rec, const char *key);
/* Status and note (printf-style; replaces an earlier note). */
void bench_record_fail(bench_record *rec, bench_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void bench_record_note(bench_record *rec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The whole run's note (printf-style; replaces an earlier one). */
void bench_results_note(bench_results *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The first record matching the selector (see bench_target), or NULL. */
bench_record *bench_record_select(const bench_results *r, const char *select);

/* A table of ncols columns (align: a string of 'l'/'r'); each bench_table_row takes
 * ncols cells, the header first. */
bench_table *bench_table_add(bench_results *r, const char *title, int ncols,
                             const char *align);
void bench_table_row(bench_table *t, const char *const *cells);
void bench_table_footer(bench_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A target to judge (ref_select and ref_metric NULL for an absolute one). */
bench_target *bench_target_add(bench_results *r, const char *text, bench_target_kind kind,
                               const char *select, const char *metric, double limit,
                               const char *ref_select, const char *ref_metric);
/* Mark a target not judged, with the reason (the judge then leaves it alone). */
void bench_target_not_judged(bench_target *t, const char *why);
/* A sentence beside a judged target's verdict (printf-style; replaces an earlier one):
 * for a miss, why it missed, with the counter that shows it. The verdict stays. */
void bench_target_note(bench_target *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Judge every target (one not judged still gets its value and bound); answers how many
 * were MISSED. */
int bench_judge(bench_results *r);
const char *bench_verdict_name(bench_verdict v);   /* "met", "MISSED", "not measured", ... */

/* The median of n values (the array is not changed); NaN when n is 0. */
double bench_median(const double *v, size_t n);

#endif
