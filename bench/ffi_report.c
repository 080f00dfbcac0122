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
const ffi_field ffi_fields[] = {
    {"case", FFI_TEXT, offsetof(ffi_row, case_name), ALL},
    FIELD(runner, FFI_TEXT, ALL),
    FIELD(bits, FFI_INTEGER, ALL),
    FIELD(unit, FFI_TEXT, ALL),
    FIELD(median, FFI_REAL, ALL),
    FIELD(min, FFI_REAL, ALL),
    FIELD(max, FFI_REAL, ALL),
    FIELD(p99, FFI_REAL, ROUND_TRIPS),
    FIELD(ratio, FFI_REAL, COMPARED),
    FIELD(versus, FFI_TEXT, COMPARED),
    FIELD(ticks, FFI_INTEGER, TICKERS),
    FIELD(periods, FFI_INTEGER, TICKERS),
    FIELD(ticks_lost, FFI_INTEGER, TICKERS),
    FIELD(count, FFI_INTEGER, TIMED),
    FIELD(repeat, FFI_INTEGER, ALL),
    FIELD(samples, FFI_SAMPLES, ALL),
    FIELD(ratio_samples, FFI_SAMPLES, COMPARED),
    FIELD(note, FFI_TEXT, ALL),
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

bool ffi_field_present(const ffi_row *r, const ffi_field *f)
{
    if (!(f->rows & B(r->kind)))
        return false;
    return f->kind != FFI_REAL || isfinite(ffi_field_number(r, f));
}

double ffi_field_number(const ffi_row *r, const ffi_field *f)
{
    const char *p = (const char *)r + f->offset;
    if (f->kind == FFI_INTEGER) {
        long long v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    double d = NAN;
    if (f->kind == FFI_REAL)
        memcpy(&d, p, sizeof d);
    return d;
}

const char *ffi_field_text(const ffi_row *r, const ffi_field *f)
{
    return f->kind == FFI_TEXT ? (const char *)r + f->offset : "";
}

const double *ffi_field_samples(const ffi_row *r, const ffi_field *f, int *n)
{
    *n = f->kind == FFI_SAMPLES ? r->nsamples : 0;
    return (const double *)(const void *)((const char *)r + f->offset);
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
    const ffi_field *f = NULL;
    for (size_t i = 0; i < ffi_nfields && !f; i++)
        if (!strcmp(ffi_fields[i].name, t->field))
            f = &ffi_fields[i];
    double v = row && f && ffi_field_present(row, f) ? ffi_field_number(row, f) : NAN;
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
