/*
 * stvm-bench zn: the report for machines. CSV and JSON name the knobs the same way
 * (zn_knob_text) and walk the same figure list (ZN_FIGURES); a figure a row does not
 * have (the wrk row's counters) is an empty CSV field and a JSON null.
 */
#include "zn_render.h"

#include "bench.h"

#include <math.h>

/* The knob columns, in CSV order. The first six and between_us are the issue's. */
static const char *const knob_names[] = {
    "logging", "subscriber_cost_us", "subscriber_events", "idle_mode", "idle_us",
    "wake_inject_us", "before_us", "between_us", "after_us", "event_cost_us", "wait",
    "background"};
#define NKNOBS (sizeof knob_names / sizeof knob_names[0])

/* Knob i of a row as text ("" where the row has no such knob: the wrk row, the
 * subscriber's knobs on other rows). */
static void knob_text(const zn_config *k, size_t i, char *buf, size_t size)
{
    bool sub = k->logging == ZN_LOGGING_SUBSCRIBER;
    const uint32_t nums[] = {[4] = k->idle_us, k->wake_inject_us, k->before_us,
                             k->between_us, k->after_us, k->event_cost_us};
    buf[0] = 0;
    if (i > 0 && k->logging == ZN_LOGGING_WRK)
        return;
    if (i == 0)
        snprintf(buf, size, "%s", zn_logging_name(k->logging));
    else if (i == 1 && sub)
        snprintf(buf, size, "%u", k->subscriber_cost_us);
    else if (i == 2 && sub)
        snprintf(buf, size, "%s", zn_events_name(k->subscriber_events));
    else if (i == 3)
        snprintf(buf, size, "%s", zn_idle_mode_name(k->idle_mode));
    else if (i >= 4 && i <= 9)
        snprintf(buf, size, "%u", nums[i]);
    else if (i == 10)
        snprintf(buf, size, "%s", k->plain_wait ? "plain" : "timed");
    else if (i == 11)
        snprintf(buf, size, "%s", k->background ? "on" : "off");
}

void zn_print_csv(FILE *f, const zn_report *r)
{
    for (size_t i = 0; i < NKNOBS; i++)
        fprintf(f, "%s,", knob_names[i]);
    for (int i = 0; i < ZN_NFIGS; i++)
        fprintf(f, "%s,", zn_figure_names[i]);
    fputs("repetitions,cut_short,note\n", f);
    char buf[64];
    for (int k = 0; k < r->nrows; k++) {
        const zn_row *row = &r->rows[k];
        for (size_t i = 0; i < NKNOBS; i++) {
            knob_text(&row->cfg, i, buf, sizeof buf);
            bench_csv_text(f, buf);
            fputc(',', f);
        }
        for (int i = 0; i < ZN_NFIGS; i++) {
            bench_csv_number(f, row->fig[i], zn_figure_decimals[i] + 1);
            fputc(',', f);
        }
        fprintf(f, "%d,%lld,", row->nsamples, row->cut_short);
        bench_csv_text(f, row->note);
        fputc('\n', f);
    }
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_row(FILE *f, const zn_row *row)
{
    char buf[64];
    fputs("    {", f);
    for (size_t i = 0; i < NKNOBS; i++) {
        knob_text(&row->cfg, i, buf, sizeof buf);
        fprintf(f, "%s\"%s\": ", i ? ", " : "", knob_names[i]);
        if (buf[0])
            bench_json_string(f, buf);
        else
            fputs("null", f);
    }
    for (int i = 0; i < ZN_NFIGS; i++) {
        fprintf(f, ",\n      \"%s\": ", zn_figure_names[i]);
        bench_json_number(f, row->fig[i]);
        fputs(", \"samples\": [", f);
        for (int k = 0; k < row->nsamples; k++) {
            fputs(k ? ", " : "", f);
            bench_json_number(f, row->values[k][i]);
        }
        fputc(']', f);
    }
    fprintf(f, ",\n      \"repetitions\": %d, \"cut_short\": %lld, \"note\": ", row->nsamples,
            row->cut_short);
    bench_json_string(f, row->note);
    fputc('}', f);
}

static void json_targets(FILE *f, const zn_report *r)
{
    zn_verdict v[ZN_MAX_VERDICTS];
    int n = zn_judge(r, v, ZN_MAX_VERDICTS);
    fputs("  \"targets\": [", f);
    for (int i = 0; i < n; i++) {
        fputs(i ? ",\n    {\"target\": " : "\n    {\"target\": ", f);
        bench_json_string(f, v[i].label);
        fputs(", \"measured\": ", f);
        bench_json_string(f, v[i].measured);
        fputs(", \"verdict\": ", f);
        bench_json_string(f, v[i].met);
        fputc('}', f);
    }
    fputs(n ? "\n  ]\n" : "]\n", f);
}

void zn_print_json(FILE *f, const zn_report *r)
{
    fputs("{\n  \"command\": \"zn\",\n  \"context\": ", f);
    bench_json_context(f, "  ", "real", r->cpu);
    fprintf(f, ",\n  \"parameters\": {\"repeat\": %d, \"requests\": %lld, \"warmup\": %lld, "
               "\"max_seconds\": %g, \"wrk_seconds\": %d, \"body_bytes\": %zu},\n",
            r->repeat, r->requests, r->warmup, r->max_seconds, r->wrk_seconds, r->body_size);
    fputs("  \"rows\": [\n", f);
    for (int k = 0; k < r->nrows; k++) {
        json_row(f, &r->rows[k]);
        fputs(k + 1 < r->nrows ? ",\n" : "\n", f);
    }
    fputs("  ],\n", f);
    json_targets(f, r);
    fputs("}\n", f);
}
