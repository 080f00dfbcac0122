/*
 * stvm-bench ffi: the figure list, the targets, the summaries, and reading a figure out
 * of a row.
 */
#include "ffi_report.h"

#include "bench.h"

#include <math.h>
#include <string.h>

const char *ffi_case_name(ffi_case c)
{
    static const char *const names[FFI_NCASES] = {
        [FFI_DIRECT] = "direct",           [FFI_BARE] = "ffi_call",
        [FFI_CALLOUT_61] = "callout",      [FFI_CALLOUT_31] = "callout",
        [FFI_CALLOUT_31_BOXED] = "callout-boxed",
        [FFI_CALLBACK_NESTED] = "callback",
        [FFI_PTHREAD] = "pthread-sem",     [FFI_THREADED] = "threaded",
        [FFI_THREADED_NOSPIN] = "threaded",
        [FFI_CALLBACK_QUEUED] = "callback", [FFI_CALLBACK_QUEUED_NOSPIN] = "callback",
        [FFI_TICKER_SAME] = "ticker",      [FFI_TICKER_THREADED] = "ticker",
    };
    return c < FFI_NCASES ? names[c] : "?";
}

#define B(c) (1u << (c))
#define ALL (B(FFI_NCASES) - 1)
#define TIMED (ALL & ~(B(FFI_TICKER_SAME) | B(FFI_TICKER_THREADED)))
#define ROUND_TRIPS (B(FFI_PTHREAD) | B(FFI_THREADED) | B(FFI_THREADED_NOSPIN) | \
                     B(FFI_CALLBACK_QUEUED) | B(FFI_CALLBACK_QUEUED_NOSPIN))
#define TICKERS (B(FFI_TICKER_SAME) | B(FFI_TICKER_THREADED))
#define COMPARED (B(FFI_CALLOUT_61) | B(FFI_CALLOUT_31) | B(FFI_CALLOUT_31_BOXED) | \
                  B(FFI_DIRECT) | ROUND_TRIPS)

/* The order is the CSV column order, which scripts rely on: new figures go last. */
#define FIELD(name, kind, rows) {#name, kind, offsetof(ffi_row, name), rows}
const bench_field ffi_fields[] = {
    {"case", BENCH_TEXT, offsetof(ffi_row, case_name), ALL},
    FIELD(runner, BENCH_TEXT, ALL),
    FIELD(bits, BENCH_INTEGER, ALL),
    FIELD(unit, BENCH_TEXT, ALL),
    FIELD(median, BENCH_REAL, ALL),
    FIELD(min, BENCH_REAL, ALL),
    FIELD(max, BENCH_REAL, ALL),
    FIELD(p99, BENCH_REAL, ROUND_TRIPS),
    FIELD(ratio, BENCH_REAL, COMPARED),
    FIELD(versus, BENCH_TEXT, COMPARED),
    FIELD(ticks, BENCH_INTEGER, TICKERS),
    FIELD(periods, BENCH_INTEGER, TICKERS),
    FIELD(ticks_lost, BENCH_INTEGER, TICKERS),
    FIELD(count, BENCH_INTEGER, TIMED),
    FIELD(repeat, BENCH_INTEGER, ALL),
    FIELD(samples, BENCH_SAMPLES, ALL),
    FIELD(ratio_samples, BENCH_SAMPLES, COMPARED),
    FIELD(note, BENCH_TEXT, ALL),
};
#undef FIELD
const size_t ffi_nfields = sizeof ffi_fields / sizeof ffi_fields[0];

const ffi_target ffi_targets[] = {
    {"ratio", FFI_CALLOUT_61, false, 2.0, "x", 2,
     "same-thread callout / bare ffi_call, 61-bit VM"},
    {"ratio", FFI_CALLOUT_31, false, 2.0, "x", 2,
     "same-thread callout / bare ffi_call, 31-bit VM"},
    {"median", FFI_THREADED, false, 15.0, "us", 1, "threaded callout, median round trip"},
    {"median", FFI_TICKER_THREADED, true, 95.0, "%", 1,
     "ticks kept with threaded blocking calls"},
};
const size_t ffi_ntargets = sizeof ffi_targets / sizeof ffi_targets[0];

static unsigned row_kind(const void *row)
{
    return B(((const ffi_row *)row)->kind);
}

static int row_nsamples(const void *row)
{
    return ((const ffi_row *)row)->nsamples;
}

bench_rows ffi_rows(const ffi_report *r)
{
    return (bench_rows){ffi_fields, ffi_nfields, r->rows, sizeof r->rows[0], r->nrows,
                        row_kind, row_nsamples};
}

const ffi_row *ffi_row_of(const ffi_report *r, ffi_case c)
{
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].kind == c && r->rows[i].nsamples > 0)
            return &r->rows[i];
    return NULL;
}

double ffi_target_measured(const ffi_report *r, const ffi_target *t, const char **met)
{
    const ffi_row *row = ffi_row_of(r, t->kind);
    const bench_field *f = bench_field_named(ffi_fields, ffi_nfields, t->field);
    double v = row && f && bench_field_present(row, B(row->kind), f)
                   ? bench_field_number(row, f) : NAN;
    if (!isfinite(v)) {
        *met = "not measured";
        return v;
    }
    double scale = pow(10, t->decimals);
    double shown = round(v * scale), limit = t->limit * scale;
    *met = (t->at_least ? shown >= limit : shown <= limit) ? "met" : "MISSED";
    return v;
}

/* ---- summaries ---------------------------------------------------------------------- */

/* The row each compared row is set against: callouts against the bare ffi_call, the
 * direct call too (how much of a call libffi is), round trips against the threads'. */
static ffi_case versus_of(ffi_case c)
{
    switch (c) {
    case FFI_CALLOUT_61:
    case FFI_CALLOUT_31:
    case FFI_CALLOUT_31_BOXED:
    case FFI_DIRECT:
        return FFI_BARE;
    case FFI_THREADED:
    case FFI_THREADED_NOSPIN:
    case FFI_CALLBACK_QUEUED:
    case FFI_CALLBACK_QUEUED_NOSPIN:
        return FFI_PTHREAD;
    default:
        return FFI_NCASES;
    }
}

static void summarise_row(ffi_row *row)
{
    size_t n = (size_t)row->nsamples;
    double p99[FFI_MAX_REPEAT], ticks[FFI_MAX_REPEAT], periods[FFI_MAX_REPEAT],
        count[FFI_MAX_REPEAT];
    for (size_t k = 0; k < n; k++) {
        row->samples[k] = row->runs[k].value;
        p99[k] = row->runs[k].p99;
        ticks[k] = (double)row->runs[k].ticks;
        periods[k] = (double)row->runs[k].periods;
        count[k] = (double)row->runs[k].count;
    }
    row->median = bench_median(row->samples, n);
    row->min = bench_min(row->samples, n);
    row->max = bench_max(row->samples, n);
    row->p99 = bench_median(p99, n);
    row->ticks = (long long)bench_median(ticks, n);
    row->periods = (long long)bench_median(periods, n);
    row->ticks_lost = row->periods - row->ticks;
    row->count = (long long)bench_median(count, n);
}

/* Each repetition against the reference measured moments before it, then the median. */
static void summarise_ratio(ffi_row *row, const ffi_row *ref)
{
    int n = 0;
    for (int k = 0; ref && k < row->nsamples && k < ref->nsamples; k++, n++)
        row->ratio_samples[k] = row->samples[k] / ref->samples[k];
    row->ratio = bench_median(row->ratio_samples, (size_t)n);
    if (ref)
        snprintf(row->versus, sizeof row->versus, "%s", ref->case_name);
}

void ffi_report_summarise(ffi_report *r)
{
    for (int i = 0; i < r->nrows; i++) {
        ffi_row *row = &r->rows[i];
        row->repeat = r->repeat;
        row->median = row->min = row->max = row->p99 = row->ratio = NAN;
        if (row->nsamples > 0)
            summarise_row(row);
    }
    for (int i = 0; i < r->nrows; i++) {
        ffi_row *row = &r->rows[i];
        ffi_case v = versus_of(row->kind);
        if (v != FFI_NCASES && row->nsamples > 0)
            summarise_ratio(row, ffi_row_of(r, v));
    }
}
