/*
 * stvm-bench delay: the figure list of a run, medians over repetitions, and the
 * questions every rendering asks of a sweep (which cell, which peak, what status).
 */
#include "delay_report.h"

#include "bench.h"

#include <math.h>
#include <string.h>

/* The order is the CSV column order, which scripts rely on: new figures go last. */
#define FIELD(name, integer, decimals) {#name, offsetof(delay_sample, name), integer, decimals}
const delay_field delay_fields[] = {
    FIELD(delays_per_second, false, 1),
    FIELD(cpu_us_per_delay, false, 4),
    FIELD(boxed_per_delay, false, 4),
    FIELD(late_p99_us, false, 0),
    FIELD(exit_count, true, 0),
    FIELD(enter_count, true, 0),
    FIELD(exit_in_window, true, 0),
    FIELD(large_ops_per_delay, false, 4),
    FIELD(timing_loop_passes_per_delay, false, 4),
    FIELD(clock_reads_per_delay, false, 4),
    FIELD(delays_scheduled_per_delay, false, 4),
    FIELD(delays_expired_per_delay, false, 4),
    FIELD(context_switches_per_delay, false, 4),
    FIELD(idle_sleeps_per_delay, false, 4),
    FIELD(timer_fires_per_delay, false, 4),
    FIELD(late_p50_us, false, 0),
    FIELD(late_max_us, false, 0),
    FIELD(late_min_us, false, 0),
    FIELD(early_waits, true, 0),
    FIELD(wall_window_ms, false, 1),
    FIELD(cpu_window_ms, false, 1),
    FIELD(late_samples, true, 0),
};
#undef FIELD
const size_t delay_nfields = sizeof delay_fields / sizeof delay_fields[0];

double delay_field_get(const delay_sample *s, const delay_field *f)
{
    const char *p = (const char *)s + f->offset;
    if (f->integer) {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    double d;
    memcpy(&d, p, sizeof d);
    return d;
}

void delay_field_set(delay_sample *s, const delay_field *f, double v)
{
    char *p = (char *)s + f->offset;
    if (f->integer) {
        uint64_t u = isfinite(v) && v > 0 ? (uint64_t)llround(v) : 0;
        memcpy(p, &u, sizeof u);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

void delay_cell_median(delay_cell *c)
{
    memset(&c->median, 0, sizeof c->median);
    if (!c->nsamples)
        return;
    double v[DELAY_MAX_REPEAT];
    for (size_t f = 0; f < delay_nfields; f++) {
        for (int k = 0; k < c->nsamples; k++)
            v[k] = delay_field_get(&c->samples[k], &delay_fields[f]);
        delay_field_set(&c->median, &delay_fields[f], bench_median(v, (size_t)c->nsamples));
    }
}

const delay_cell *delay_report_cell(const delay_report *r, int ni, int ri)
{
    return &r->cells[ni * r->nreprs + ri];
}

const delay_cell *delay_report_peak(const delay_report *r, int ri)
{
    const delay_cell *best = NULL;
    for (int ni = 0; ni < r->nns; ni++) {
        const delay_cell *c = delay_report_cell(r, ni, ri);
        if (c->nsamples == 0)
            continue;
        if (!best || c->median.delays_per_second > best->median.delays_per_second)
            best = c;
    }
    return best;
}

double delay_report_peak_rate(const delay_report *r, int ri)
{
    const delay_cell *c = delay_report_peak(r, ri);
    return c ? c->median.delays_per_second : NAN;
}

const char *delay_cell_status(const delay_report *r, const delay_cell *c)
{
    if (c->nsamples == 0)
        return "failed";
    return c->nsamples == r->repeat ? "ok" : "partial";
}

const char *delay_report_clock(const delay_report *r)
{
    return r->sim ? "sim" : "real";
}
