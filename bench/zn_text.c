/*
 * stvm-bench zn: the report for people. The seed's table (requests per second with
 * logging off, on, and on with a subscriber, per idle mode), every row with the
 * counters that explain it, and the targets; as aligned text, Markdown, or the
 * Markdown report of --report.
 */
#include "zn_render.h"

#include "bench.h"

#include <math.h>
#include <string.h>

/* ---- cells ------------------------------------------------------------------------------ */

static void fmt(char *buf, size_t size, double v, int decimals)
{
    if (isfinite(v))
        snprintf(buf, size, "%.*f", decimals, v);
    else
        snprintf(buf, size, "-");
}

/* A table: a header, then rows of cells; text pads columns, Markdown draws pipes. */
typedef struct table {
    FILE *f;
    bool markdown;
    int ncols;
    const int *width;
} table;

static void table_line(const table *t, const char *const *cells)
{
    for (int c = 0; c < t->ncols; c++) {
        if (t->markdown)
            fprintf(t->f, "| %s ", cells[c]);
        else
            fprintf(t->f, c ? " %*s" : "%-*s", t->width[c], cells[c]);
    }
    fputs(t->markdown ? "|\n" : "\n", t->f);
}

static void table_head(const table *t, const char *const *names)
{
    table_line(t, names);
    if (!t->markdown)
        return;
    for (int c = 0; c < t->ncols; c++)
        fputs(c ? "| ---: " : "| --- ", t->f);
    fputs("|\n", t->f);
}

/* ---- the seed's table ---------------------------------------------------------------------- */

/* The rows of one seed line: the same knobs but the logging. */
static zn_config with_logging(zn_config k, zn_logging l, uint32_t cost)
{
    k.logging = l;
    k.subscriber_events = ZN_EVENTS_ALL;
    k.subscriber_cost_us = l == ZN_LOGGING_SUBSCRIBER ? cost : 0;
    return k;
}

static void seed_line(const table *t, const zn_report *r, const zn_row *sub)
{
    zn_config ko = with_logging(sub->cfg, ZN_LOGGING_OFF, 0);
    zn_config kn = with_logging(sub->cfg, ZN_LOGGING_ON, 0);
    const zn_row *off = zn_find_row(r, &ko), *on = zn_find_row(r, &kn);
    double o = off ? off->fig[ZN_FIG_RPS] : NAN, n = on ? on->fig[ZN_FIG_RPS] : NAN;
    double s = sub->fig[ZN_FIG_RPS];
    char c[10][32];
    snprintf(c[0], 32, "%s", zn_idle_mode_name(sub->cfg.idle_mode));
    snprintf(c[1], 32, "%u", sub->cfg.idle_us);
    snprintf(c[2], 32, "%u", sub->cfg.subscriber_cost_us);
    fmt(c[3], 32, o, 0);
    fmt(c[4], 32, n, 0);
    fmt(c[5], 32, s, 0);
    fmt(c[6], 32, n / o, 2);
    fmt(c[7], 32, s / o, 2);
    fmt(c[8], 32, off ? off->fig[ZN_FIG_BLOCKED_FIRST] : NAN, 2);
    fmt(c[9], 32, sub->fig[ZN_FIG_BLOCKED_FIRST], 2);
    const char *cells[10];
    for (int i = 0; i < 10; i++)
        cells[i] = c[i];
    table_line(t, cells);
}

/* A plain subscriber row (no other knob), whose off row ran too. */
static bool seed_row(const zn_report *r, const zn_row *row)
{
    const zn_config *k = &row->cfg;
    if (k->logging != ZN_LOGGING_SUBSCRIBER || k->subscriber_events != ZN_EVENTS_ALL ||
        k->before_us || k->between_us || k->after_us || k->plain_wait || k->background ||
        !row->nsamples)
        return false;
    zn_config ko = with_logging(*k, ZN_LOGGING_OFF, 0);
    return zn_find_row(r, &ko) != NULL;
}

static void seed_table(FILE *f, const zn_report *r, bool markdown)
{
    static const char *const head[] = {"idle mode", "idle us", "sub. us", "off /s", "on /s",
                                       "subscriber /s", "on/off", "sub/off",
                                       "off: blocked 1st", "sub: blocked 1st"};
    static const int width[] = {9, 7, 7, 8, 8, 13, 6, 7, 16, 16};
    table t = {f, markdown, 10, width};
    bool any = false;
    for (int i = 0; i < r->nrows; i++) {
        if (!seed_row(r, &r->rows[i]))
            continue;
        if (!any)
            table_head(&t, head);
        any = true;
        seed_line(&t, r, &r->rows[i]);
    }
    if (any)
        fputc('\n', f);
}

/* ---- every row --------------------------------------------------------------------------- */

static void knobs_text(const zn_config *k, char *buf, size_t size)
{
    if (k->logging == ZN_LOGGING_WRK) {
        snprintf(buf, size, "wrk -t1 -c1");
        return;
    }
    int n = snprintf(buf, size, "%s", zn_logging_name(k->logging));
    if (k->logging == ZN_LOGGING_SUBSCRIBER)
        n += snprintf(buf + n, size - (size_t)n, " %uus/%s", k->subscriber_cost_us,
                      zn_events_name(k->subscriber_events));
    const struct { const char *name; uint32_t v; } extra[] = {
        {"inject", k->wake_inject_us}, {"before", k->before_us},
        {"between", k->between_us}, {"after", k->after_us}};
    for (size_t i = 0; i < 4 && n < (int)size; i++)
        if (extra[i].v)
            n += snprintf(buf + n, size - (size_t)n, " %s=%u", extra[i].name, extra[i].v);
    if (n < (int)size && k->plain_wait)
        n += snprintf(buf + n, size - (size_t)n, " plain-wait");
    if (n < (int)size && k->background)
        snprintf(buf + n, size - (size_t)n, " background");
}

static const zn_figure row_figs[] = {ZN_FIG_RPS, ZN_FIG_VS_WRK, ZN_FIG_US, ZN_FIG_CPU_US,
                                     ZN_FIG_BLOCKED_FIRST, ZN_FIG_BLOCKED, ZN_FIG_TIMED_WAITS,
                                     ZN_FIG_TIMING, ZN_FIG_OS_SLEEPS, ZN_FIG_SLEPT_US,
                                     ZN_FIG_WAKE_IO, ZN_FIG_WAKE_RELINQUISH, ZN_FIG_BETWEEN,
                                     ZN_FIG_WAIT, ZN_FIG_PARSE, ZN_FIG_AFTER};
#define NROWFIGS (int)(sizeof row_figs / sizeof row_figs[0])

static void rows_table(FILE *f, const zn_report *r, bool markdown)
{
    static const char *const head[] = {
        "configuration", "idle", "idle us", "req/s", "x wrk", "us/req", "cpu us", "blk 1st",
        "blocked", "timed w", "timing", "os sleeps", "slept us", "wake io", "wake rel",
        "between", "wait", "parse", "after"};
    int width[3 + NROWFIGS] = {34, 6, 7};
    for (int i = 3; i < 3 + NROWFIGS; i++)
        width[i] = (int)strlen(head[i]) > 7 ? (int)strlen(head[i]) : 7;
    table t = {f, markdown, 3 + NROWFIGS, width};
    table_head(&t, head);
    for (int i = 0; i < r->nrows; i++) {
        const zn_row *row = &r->rows[i];
        char c[3 + NROWFIGS][64];
        const char *cells[3 + NROWFIGS];
        knobs_text(&row->cfg, c[0], sizeof c[0]);
        snprintf(c[1], 64, "%s", zn_idle_mode_name(row->cfg.idle_mode));
        snprintf(c[2], 64, "%s", row->cfg.logging == ZN_LOGGING_WRK ? "-" : "");
        if (row->cfg.logging != ZN_LOGGING_WRK)
            snprintf(c[2], 64, "%u", row->cfg.idle_us);
        for (int k = 0; k < NROWFIGS; k++)
            fmt(c[3 + k], 64, row->fig[row_figs[k]], zn_figure_decimals[row_figs[k]] > 2
                                                         ? 2 : zn_figure_decimals[row_figs[k]]);
        for (int k = 0; k < 3 + NROWFIGS; k++)
            cells[k] = c[k];
        table_line(&t, cells);
    }
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].note[0] || r->rows[i].cut_short)
            fprintf(f, "%snote, row %d: %s%s%lld repetitions hit the %g s limit\n",
                    markdown ? "\n" : "", i + 1, r->rows[i].note, r->rows[i].note[0] ? "; " : "",
                    r->rows[i].cut_short, r->max_seconds);
    fputc('\n', f);
}

static void targets(FILE *f, const zn_report *r, bool markdown)
{
    zn_verdict v[ZN_MAX_VERDICTS];
    int n = zn_judge(r, v, ZN_MAX_VERDICTS);
    if (!n)
        return;
    fputs(markdown ? "| target | measured | verdict |\n| --- | --- | --- |\n" : "targets:\n", f);
    for (int i = 0; i < n; i++)
        fprintf(f, markdown ? "| %s | %s | %s |\n" : "  %-52s %-8s %s\n", v[i].label,
                markdown ? v[i].measured : v[i].met, markdown ? v[i].met : v[i].measured);
    fputc('\n', f);
}

static void describe_run(FILE *f, const zn_report *r, const char *prefix)
{
    char model[128], date[64];
    bench_cpu_model(model, sizeof model);
    bench_date_utc(date, sizeof date);
    fprintf(f, "%sstvm %s (%s back end), %s, %d CPUs (%s), load average %.1f; nginx on "
               "127.0.0.1, a %zu-byte static file; %lld requests after %lld of warm-up per "
               "configuration (at most %g s), median of %d repetitions%s\n\n",
            prefix, stvm_version_string(), stvm_context_backend(), date, bench_ncpu(), model,
            bench_load_average(), r->body_size, r->requests, r->warmup, r->max_seconds, r->repeat,
            r->wrk_seconds ? "; wrk -t1 -c1 beside it in every repetition" : "");
}

void zn_print_table(FILE *f, const zn_report *r, bool markdown)
{
    describe_run(f, r, markdown ? "" : "# ");
    seed_table(f, r, markdown);
    rows_table(f, r, markdown);
    targets(f, r, markdown);
}

void zn_print_report(FILE *f, const zn_report *r)
{
    fputs("# The ZnClient experiment (stvm-bench zn)\n\n", f);
    describe_run(f, r, "");
    fputs("## The seed's table\n\nRequests per second with logging off (level 0), on "
          "(level 3, nobody subscribed: events built, the announcer's fast path) and on "
          "with a synchronous subscriber costing the given CPU per event, per idle mode; "
          "with the fraction of requests whose first read found no data and blocked.\n\n",
          f);
    seed_table(f, r, true);
    fputs("## Targets\n\n", f);
    targets(f, r, true);
    fputs("## Every configuration\n\nPer request: `blk 1st` first reads that blocked, "
          "`blocked` all reads that blocked, `timed w` timed waits (DelayWaitTimeout), "
          "`timing` timing-process activations, `os sleeps` waits in the OS that could "
          "block and `slept us` the time in them, `wake io` / `wake rel` OS sleeps ended by "
          "a ready descriptor / by the relinquish time running out; then the mean "
          "microseconds between the send and the first read (writing, the request-written "
          "event, its subscribers, the between work), waiting in the first read, parsing "
          "the rest, and after (the other two events, their subscribers, the after "
          "work). `x wrk` is the median of the per-repetition ratios to wrk's requests/s.\n\n",
          f);
    rows_table(f, r, true);
}
