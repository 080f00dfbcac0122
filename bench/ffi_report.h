/*
 * stvm-bench ffi: the results (one row per case, each with one figure per repetition
 * and its unit), the one list of figures that the CSV columns and the JSON keys both
 * walk, the ratios between rows of the same run, and the targets.
 */
#ifndef STVM_BENCH_FFI_REPORT_H
#define STVM_BENCH_FFI_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "fields.h"

#define FFI_MAX_REPEAT 100

/* The cases, in the order the rows are printed and run. */
typedef enum ffi_case {
    FFI_DIRECT,             /* add(a, b) through a C function pointer */
    FFI_BARE,               /* ffi_call with the arguments already in C: the reference */
    FFI_CALLOUT_61,         /* stvm_ffi_call from a green process, oops in and out */
    FFI_CALLOUT_31,
    FFI_CALLOUT_31_BOXED,   /* arguments and result beyond 31-bit SmallIntegers */
    FFI_CALLBACK_NESTED,    /* C calls a callback on the VM's thread: C to VM to C */
    FFI_PTHREAD,            /* sem_t round trip between two threads: the reference */
    FFI_THREADED,           /* stvm_ffi_call_threaded round trip */
    FFI_THREADED_NOSPIN,    /* ... with config.ffi_spin_us 0: every wait sleeps */
    FFI_CALLBACK_QUEUED,    /* a foreign thread calls back: through the queue */
    FFI_CALLBACK_QUEUED_NOSPIN,
    FFI_TICKER_SAME,        /* ticks kept while blocking calls run on the VM's thread */
    FFI_TICKER_THREADED,    /* ... and on a worker */
    FFI_NCASES
} ffi_case;

/* What one measurement of a case answered. */
typedef struct ffi_sample {
    double value;           /* ns per call, median µs per round trip, or % ticks kept */
    double p99;             /* round trips: µs; NaN for the others */
    long long ticks, periods;   /* the ticker: 1 ms periods in which it ran, of all */
    long long count;        /* calls or round trips timed */
} ffi_sample;

/* The member names are the figures' names in CSV and JSON (see ffi_fields); "case" is
 * case_name. */
typedef struct ffi_row {
    ffi_case kind;
    char case_name[24];
    char runner[16];        /* how C was reached: direct, ffi_call, same-thread, ... */
    char unit[8];           /* of median, min, max: "ns", "us" or "%" */
    long long bits;         /* the VM's SmallInteger width; 0 where no VM takes part */
    int nsamples;
    ffi_sample runs[FFI_MAX_REPEAT];
    double samples[FFI_MAX_REPEAT];       /* runs[k].value */
    double ratio_samples[FFI_MAX_REPEAT]; /* against `versus` in the same repetition */
    double median, min, max, p99;
    double ratio;           /* median of the per-repetition ratios to `versus` */
    char versus[24];        /* the row it is compared with, or "" */
    long long ticks, periods, ticks_lost;   /* the ticker: medians */
    long long count;        /* per repetition */
    long long repeat;
    char note[240];
} ffi_row;

typedef struct ffi_report {
    int repeat;
    long long calls;        /* same-thread calls and nested callbacks per repetition */
    long long round_trips;  /* threaded calls and queued callbacks per repetition */
    int blocking_calls, block_ms;
    int cpu;                /* -1: not pinned */
    int workers;            /* ffi_workers of the VMs */
    int spin_us;            /* ffi_spin_us of the rows that spin */
    ffi_row rows[FFI_NCASES];
    int nrows;
} ffi_report;

const char *ffi_case_name(ffi_case c);

/* The figures, in CSV column order; rows is a mask of bits 1 << ffi_case. */
extern const bench_field ffi_fields[];
extern const size_t ffi_nfields;

/* The report's rows as the CSV and JSON writers walk them. */
bench_rows ffi_rows(const ffi_report *r);

typedef struct ffi_target {
    const char *field;      /* an ffi_fields name */
    ffi_case kind;          /* judged on this row */
    bool at_least;          /* met when >= limit (else <= limit) */
    double limit;
    const char *unit;
    int decimals;           /* of the figure as printed */
    const char *label;
} ffi_target;
extern const ffi_target ffi_targets[];
extern const size_t ffi_ntargets;

/* The judged figure (NaN if not measured); *met is "met", "MISSED" or "not measured",
 * judged on the figure as printed. */
double ffi_target_measured(const ffi_report *r, const ffi_target *t, const char **met);
/* The row of a case, or NULL when it did not run. */
const ffi_row *ffi_row_of(const ffi_report *r, ffi_case c);
/* Medians, extremes, p99 and ratios from the samples. */
void ffi_report_summarise(ffi_report *r);

#endif
