/*
 * stvm-bench micro: the results (one row for this binary's back end, one for the
 * pthread reference), the one list of figures that the CSV columns and the JSON keys
 * both walk, and the targets the assembly back end is judged against.
 */
#ifndef STVM_BENCH_MICRO_REPORT_H
#define STVM_BENCH_MICRO_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "fields.h"

#define MICRO_MAX_REPEAT 100
#define MICRO_JUDGED_BACKEND "asm-x86_64"
#define MICRO_PTHREAD_ROW "pthread-sem"

/* The member names are the figures' names in CSV and JSON (see micro_fields). */
typedef struct micro_row {
    char backend[32];               /* stvm_context_backend(), or "pthread-sem" */
    bool reference;                 /* the pthread row: hand-off figures only */
    int nsamples;
    double handoff_ns_samples[MICRO_MAX_REPEAT];
    double raw_switch_ns_samples[MICRO_MAX_REPEAT];
    double handoff_ns, handoff_ns_min, handoff_ns_max;
    double raw_switch_ns, raw_switch_ns_min, raw_switch_ns_max;
    long long processes_asked;
    long long processes;            /* how many actually blocked */
    double kib_per_process;         /* RSS growth / processes */
    double vm_bytes_per_process;    /* bytes_live growth / processes */
    long long rss_before_bytes, rss_after_bytes;
    double pthread_over_stvm;       /* the reference's hand-off / this row's */
    double queue_ns_samples[MICRO_MAX_REPEAT];
    double queue_ns, queue_ns_min, queue_ns_max;   /* a SharedQueue put + take hand-off */
    double queue_over_handoff;      /* queue_ns / handoff_ns (target: at most 2) */
    double monitor_ns_samples[MICRO_MAX_REPEAT];
    double monitor_ns, monitor_ns_min, monitor_ns_max;   /* a monitor signal + wait hand-off */
    double monitor_enter_exit_ns_samples[MICRO_MAX_REPEAT];
    double monitor_enter_exit_ns, monitor_enter_exit_ns_min, monitor_enter_exit_ns_max;
                                    /* an uncontended monitor enter + exit */
    long long repeat, iterations;
    char note[400];
} micro_row;

typedef struct micro_report {
    int repeat;
    long long iterations, pthread_iterations;
    long processes;                 /* asked for */
    int cpu;                        /* -1: not pinned */
    int pthread_cpu;                /* where the reference's two threads ran */
    micro_row rows[2];              /* this binary's back end, then the reference */
    int nrows;                      /* 1 when the reference could not run */
} micro_report;

/* The figures, in CSV column order; rows is a mask of these bits. */
#define MICRO_ROW_STVM 1u           /* this binary's back end */
#define MICRO_ROW_PTHREAD 2u        /* the reference: hand-off figures only */
extern const bench_field micro_fields[];
extern const size_t micro_nfields;

/* The report's rows as the CSV and JSON writers walk them. */
bench_rows micro_rows(const micro_report *r);

typedef struct micro_target {
    const char *field;              /* a micro_fields name */
    double limit;                   /* met when the figure, as printed, is <= limit */
    const char *unit;
    int decimals;                   /* of the measured figure, for people */
    const char *label, *md_label;
} micro_target;
extern const micro_target micro_targets[];
extern const size_t micro_ntargets;

/* Only the assembly back end is judged; other back ends report figures alone. */
bool micro_report_judged(const micro_report *r);
/* The judged figure for target t (NaN if not measured); *met is "met", "MISSED" or
 * "not measured". */
double micro_target_measured(const micro_report *r, const micro_target *t,
                             const char **met);
/* Medians and extremes of the row's samples. */
void micro_row_summarise(micro_row *r);

#endif
