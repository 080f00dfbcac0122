/*
 * stvm-bench zn: per-request figures from the raw counts, medians over the repetitions,
 * and the targets of the issue judged on the rows that ran.
 */
#include "zn_report.h"

#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const zn_figure_names[ZN_NFIGS] = {
#define ZN_NAME(id, name, dec) name,
    ZN_FIGURES(ZN_NAME)
#undef ZN_NAME
};

const int zn_figure_decimals[ZN_NFIGS] = {
#define ZN_DEC(id, name, dec) dec,
    ZN_FIGURES(ZN_DEC)
#undef ZN_DEC
};

bool zn_config_equal(const zn_config *a, const zn_config *b)
{
    return a->logging == b->logging && a->subscriber_cost_us == b->subscriber_cost_us &&
           a->subscriber_events == b->subscriber_events && a->idle_mode == b->idle_mode &&
           a->idle_us == b->idle_us && a->wake_inject_us == b->wake_inject_us &&
           a->before_us == b->before_us && a->between_us == b->between_us &&
           a->after_us == b->after_us && a->event_cost_us == b->event_cost_us &&
           a->plain_wait == b->plain_wait && a->background == b->background;
}

const char *zn_logging_name(zn_logging l)
{
    static const char *const names[] = {"off", "on", "subscriber", "wrk"};
    return (unsigned)l < 4 ? names[l] : "?";
}

const char *zn_events_name(zn_events e)
{
    static const char *const names[] = {"written", "read", "transaction", "all"};
    return (unsigned)e < 4 ? names[e] : "?";
}

const char *zn_idle_mode_name(int mode)
{
    static const char *const names[] = {"poll", "legacy", "spin"};
    return mode >= 0 && mode < 3 ? names[mode] : "-";
}

/* ---- figures ------------------------------------------------------------------------------ */

static void wrk_values(const zn_counts *c, double *v)
{
    v[ZN_FIG_RPS] = c->wrk_requests_per_second;
    v[ZN_FIG_VS_WRK] = 1.0;
    v[ZN_FIG_US] = c->wrk_requests_per_second > 0 ? 1e6 / c->wrk_requests_per_second : NAN;
    v[ZN_FIG_WRK_P50] = c->wrk_p50_us;
}

static void vm_values(const zn_counts *c, double wrk_rps, double *v)
{
    double n = (double)c->requests;
    v[ZN_FIG_RPS] = n / ((double)c->wall_ns / 1e9);
    v[ZN_FIG_VS_WRK] = wrk_rps > 0 ? v[ZN_FIG_RPS] / wrk_rps : NAN;
    v[ZN_FIG_US] = (double)c->wall_ns / 1e3 / n;
    v[ZN_FIG_CPU_US] = (double)c->cpu_ns / 1e3 / n;
    const uint64_t per[][2] = {
        {ZN_FIG_BLOCKED, c->reads_blocked}, {ZN_FIG_BLOCKED_FIRST, c->first_reads_blocked},
        {ZN_FIG_TIMED_WAITS, c->timed_waits}, {ZN_FIG_TIMING, c->timing_activations},
        {ZN_FIG_OS_SLEEPS, c->os_sleeps}, {ZN_FIG_SLEPT_US, c->os_slept_us},
        {ZN_FIG_WAKE_IO, c->wakeups_io}, {ZN_FIG_WAKE_TIMER, c->wakeups_timer},
        {ZN_FIG_WAKE_RELINQUISH, c->wakeups_relinquish},
        {ZN_FIG_WAKE_EXTERNAL, c->wakeups_external}, {ZN_FIG_FDS_READY, c->fds_ready},
        {ZN_FIG_POLLS_BUSY, c->io_polls_busy}, {ZN_FIG_SWITCHES, c->context_switches},
        {ZN_FIG_EVENTS, c->events_built}, {ZN_FIG_DELIVERIES, c->deliveries},
        {ZN_FIG_CONNECTS, c->connects}};
    for (size_t i = 0; i < sizeof per / sizeof per[0]; i++)
        v[per[i][0]] = (double)per[i][1] / n;
    const uint64_t phases[][2] = {{ZN_FIG_BEFORE, c->before_ns}, {ZN_FIG_BETWEEN, c->between_ns},
                                  {ZN_FIG_WAIT, c->wait_ns}, {ZN_FIG_PARSE, c->parse_ns},
                                  {ZN_FIG_AFTER, c->after_ns}};
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++)
        v[phases[i][0]] = (double)phases[i][1] / 1e3 / n;
}

const zn_row *zn_wrk_row(const zn_report *r)
{
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].cfg.logging == ZN_LOGGING_WRK)
            return &r->rows[i];
    return NULL;
}

static void summarise_row(zn_row *row, const zn_row *wrk)
{
    for (int k = 0; k < row->nsamples; k++) {
        double *v = row->values[k];
        for (int f = 0; f < ZN_NFIGS; f++)
            v[f] = NAN;
        if (row->cfg.logging == ZN_LOGGING_WRK)
            wrk_values(&row->samples[k], v);
        else if (row->samples[k].requests > 0)
            vm_values(&row->samples[k],
                      wrk && k < wrk->nsamples ? wrk->samples[k].wrk_requests_per_second : 0, v);
        row->cut_short += row->samples[k].cut_short;
    }
    for (int f = 0; f < ZN_NFIGS; f++) {
        double col[ZN_MAX_REPEAT];
        int n = 0;
        for (int k = 0; k < row->nsamples; k++)
            if (isfinite(row->values[k][f]))
                col[n++] = row->values[k][f];
        row->fig[f] = n ? bench_median(col, (size_t)n) : NAN;
        row->spread[f] = n ? bench_max(col, (size_t)n) - bench_min(col, (size_t)n) : NAN;
    }
}

void zn_report_summarise(zn_report *r)
{
    const zn_row *wrk = zn_wrk_row(r);
    for (int i = 0; i < r->nrows; i++)
        summarise_row(&r->rows[i], wrk);
}

const zn_row *zn_find_row(const zn_report *r, const zn_config *cfg)
{
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].nsamples && zn_config_equal(&r->rows[i].cfg, cfg))
            return &r->rows[i];
    return NULL;
}

/* ---- the targets ------------------------------------------------------------------------ */

/* The plain configuration a target is judged on: no knob but these. */
static zn_config plain(zn_logging l, int mode, uint32_t idle_us, uint32_t cost,
                       const zn_report *r)
{
    /* event_cost_us is the command's choice for every row: take it from the first. */
    uint32_t event_cost = 0;
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].cfg.logging != ZN_LOGGING_WRK) {
            event_cost = r->rows[i].cfg.event_cost_us;
            break;
        }
    return (zn_config){.logging = l, .idle_mode = mode, .idle_us = idle_us,
                       .subscriber_events = ZN_EVENTS_ALL,
                       .subscriber_cost_us = l == ZN_LOGGING_SUBSCRIBER ? cost : 0,
                       .event_cost_us = event_cost};
}

static zn_verdict *verdict(zn_verdict *v, const char *label, bool measured, bool ok)
{
    v->label = label;
    v->met = !measured ? "not measured" : ok ? "met" : "MISSED";
    if (!measured)
        snprintf(v->measured, sizeof v->measured, "the rows it needs did not run");
    return v;
}

static int judge_wrk(const zn_report *r, zn_verdict *v)
{
    zn_config k = plain(ZN_LOGGING_OFF, STVM_IDLE_POLL, 1000, 0, r);
    const zn_row *off = zn_find_row(r, &k), *wrk = zn_wrk_row(r);
    bool m = off && wrk && wrk->nsamples;
    double ratio = m ? off->fig[ZN_FIG_VS_WRK] : NAN;
    verdict(v, "logging off, poll, 1000 us: >= 0.8x wrk -t1 -c1", m, ratio >= 0.8);
    if (m)
        snprintf(v->measured, sizeof v->measured, "%.0f vs %.0f requests/s: %.2fx (median of "
                 "per-repetition ratios)", off->fig[ZN_FIG_RPS], wrk->fig[ZN_FIG_RPS], ratio);
    return 1;
}

static int judge_inversion(const zn_report *r, zn_verdict *v)
{
    zn_config ko = plain(ZN_LOGGING_OFF, STVM_IDLE_LEGACY, 1000, 0, r);
    zn_config kn = plain(ZN_LOGGING_ON, STVM_IDLE_LEGACY, 1000, 0, r);
    zn_config ks = plain(ZN_LOGGING_SUBSCRIBER, STVM_IDLE_LEGACY, 1000, 60, r);
    const zn_row *off = zn_find_row(r, &ko), *on = zn_find_row(r, &kn),
                 *sub = zn_find_row(r, &ks);
    bool m = off && sub;
    double x = m ? sub->fig[ZN_FIG_RPS] / off->fig[ZN_FIG_RPS] : NAN;
    verdict(&v[0], "legacy, 1000 us: 60 us subscriber >= 2x logging off", m, x >= 2.0);
    if (m)
        snprintf(v[0].measured, sizeof v[0].measured, "%.0f vs %.0f requests/s: %.2fx",
                 sub->fig[ZN_FIG_RPS], off->fig[ZN_FIG_RPS], x);
    m = off && on;
    verdict(&v[1], "legacy, 1000 us: logging on slower than off", m,
            m && on->fig[ZN_FIG_RPS] < off->fig[ZN_FIG_RPS]);
    if (m)
        snprintf(v[1].measured, sizeof v[1].measured, "%.0f vs %.0f requests/s",
                 on->fig[ZN_FIG_RPS], off->fig[ZN_FIG_RPS]);
    return 2;
}

/* Counts per request repeat within 0.02 (2% of one per request) over the repetitions. */
static int judge_determinism(const zn_report *r, zn_verdict *v, int max)
{
    static const char *const labels[2][3] = {
        {"determinism, logging off, poll", "determinism, logging off, legacy",
         "determinism, logging off, spin"},
        {"determinism, 60 us subscriber, poll", "determinism, 60 us subscriber, legacy",
         "determinism, 60 us subscriber, spin"}};
    int n = 0;
    for (int s = 0; s < 2; s++)
        for (int mode = 0; mode < 3 && n < max; mode++) {
            zn_config k = plain(s ? ZN_LOGGING_SUBSCRIBER : ZN_LOGGING_OFF, mode, 1000, 60, r);
            const zn_row *row = zn_find_row(r, &k);
            bool m = row && row->nsamples > 1;
            double sb = m ? row->spread[ZN_FIG_BLOCKED_FIRST] : NAN;
            double st = m ? row->spread[ZN_FIG_TIMED_WAITS] : NAN;
            verdict(&v[n], labels[s][mode], m, sb <= 0.02 && st <= 0.02);
            if (m)
                snprintf(v[n].measured, sizeof v[n].measured,
                         "blocked first reads %.3f (spread %.3f), timed waits %.3f (spread "
                         "%.3f) per request over %d repetitions",
                         row->fig[ZN_FIG_BLOCKED_FIRST], sb, row->fig[ZN_FIG_TIMED_WAITS], st,
                         row->nsamples);
            n++;
        }
    return n;
}

int zn_judge(const zn_report *r, zn_verdict *out, int max)
{
    if (max < ZN_MAX_VERDICTS)
        return 0;
    int n = judge_wrk(r, out);
    n += judge_inversion(r, out + n);
    n += judge_determinism(r, out + n, max - n);
    /* A target whose rows did not run is left out: the run did not ask for it. */
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(out[i].met, "not measured") != 0)
            out[kept++] = out[i];
    return kept;
}
