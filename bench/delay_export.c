/*
 * stvm-bench delay: the report for machines. CSV and JSON walk the same figure list
 * (delay_fields), so a figure has one name in both; CSV carries the medians, JSON also
 * every repetition and the summary.
 */
#include "delay_render.h"

#include "bench.h"
#include "random.h"

#include <math.h>
#include <stvm.h>

/* ---- CSV ------------------------------------------------------------------------------- */

static void csv_figures(FILE *f, const delay_cell *c)
{
    for (size_t i = 0; i < delay_nfields; i++) {
        fputc(',', f);
        if (c->nsamples)
            bench_csv_number(f, delay_field_get(&c->median, &delay_fields[i]),
                             delay_fields[i].csv_decimals);
    }
}

void delay_print_csv(FILE *f, const delay_report *r)
{
    fputs("repr,concurrency,timer_slack_us", f);
    for (size_t i = 0; i < delay_nfields; i++)
        fprintf(f, ",%s", delay_fields[i].name);
    fputs(",clock,window_ms,repeat,samples,status\n", f);
    for (int ni = 0; ni < r->nns; ni++) {
        for (int ri = 0; ri < r->nreprs; ri++) {
            const delay_cell *c = delay_report_cell(r, ni, ri);
            fprintf(f, "%s,%ld,%d", r->reprs[ri].name, c->n, r->reprs[ri].timer_slack_us);
            csv_figures(f, c);
            fprintf(f, ",%s,%d,%d,%d,%s\n", delay_report_clock(r), r->window_ms, r->repeat,
                    c->nsamples, delay_cell_status(r, c));
        }
    }
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_sample(FILE *f, const delay_sample *s)
{
    fputc('{', f);
    for (size_t i = 0; i < delay_nfields; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", delay_fields[i].name);
        bench_json_number(f, delay_field_get(s, &delay_fields[i]));
    }
    fputc('}', f);
}

static void json_params(FILE *f, const delay_report *r)
{
    fprintf(f, "  \"params\": {\"window_ms\": %d, \"drain_ms\": %d, \"repeat\": %d, "
               "\"seed\": %d, \"table_size\": %d, \"max_duration_ms\": %d, "
               "\"table_mean_ms\": %.3f, \"worker_priority\": 41, "
               "\"coordinator_priority\": 42, \"concurrency\": [",
            r->window_ms, r->window_ms, r->repeat, DELAY_SEED, DELAY_TABLE_SIZE, DELAY_MAX_MS,
            r->table_mean_ms);
    for (int ni = 0; ni < r->nns; ni++)
        fprintf(f, "%s%ld", ni ? ", " : "", r->ns[ni]);
    fputs("], \"representations\": [", f);
    for (int ri = 0; ri < r->nreprs; ri++) {
        fprintf(f, "%s{\"name\": \"%s\", \"delay_clock\": \"%s\", \"smallint_bits\": %d, "
                   "\"timer_slack_us\": %d}",
                ri ? ", " : "", r->reprs[ri].name,
                r->reprs[ri].delay_clock == STVM_DELAY_CLOCK_MS ? "ms" : "us",
                r->reprs[ri].smallint_bits, r->reprs[ri].timer_slack_us);
    }
    fputs("]},\n", f);
}

static void json_cell(FILE *f, const delay_report *r, const delay_cell *c)
{
    fprintf(f, "    {\"repr\": \"%s\", \"concurrency\": %ld, \"timer_slack_us\": %d, "
               "\"status\": \"%s\"",
            r->reprs[c->repr].name, c->n, r->reprs[c->repr].timer_slack_us,
            delay_cell_status(r, c));
    if (c->error[0]) {
        fputs(", \"error\": ", f);
        bench_json_string(f, c->error);
    }
    fputs(",\n     \"samples\": [", f);
    for (int k = 0; k < c->nsamples; k++) {
        fputs(k ? ",\n       " : "\n       ", f);
        json_sample(f, &c->samples[k]);
    }
    fputs("],\n     \"median\": ", f);
    if (c->nsamples)
        json_sample(f, &c->median);
    else
        fputs("null", f);
    fputc('}', f);
}

static void json_summary(FILE *f, const delay_report *r, int ri)
{
    const delay_cell *c = delay_report_peak(r, ri);
    double rate = delay_report_peak_rate(r, ri), base = delay_report_peak_rate(r, 0);
    fprintf(f, "    {\"repr\": \"%s\", \"peak_delays_per_second\": ", r->reprs[ri].name);
    bench_json_number(f, rate);
    fputs(", \"peak_concurrency\": ", f);
    bench_json_number(f, c ? (double)c->n : NAN);
    fputs(", \"relative_performance_pct\": ", f);
    bench_json_number(f, 100.0 * rate / base);
    fputs(", \"us_per_scheduled_delay\": ", f);
    bench_json_number(f, 1e6 / rate);
    fputs(", \"relative_time_pct\": ", f);
    bench_json_number(f, 100.0 * base / rate);
    fputs(", \"at_peak\": ", f);
    if (c)
        json_sample(f, &c->median);
    else
        fputs("null", f);
    fprintf(f, "}%s\n", ri + 1 < r->nreprs ? "," : "");
}

void delay_print_json(FILE *f, const delay_report *r)
{
    fputs("{\n  \"schema\": \"stvm-bench/delay/2\",\n  \"context\": ", f);
    bench_json_context(f, "  ", delay_report_clock(r), r->cpu);
    fputs(",\n", f);
    json_params(f, r);
    fputs("  \"results\": [\n", f);
    for (int ni = 0; ni < r->nns; ni++) {
        for (int ri = 0; ri < r->nreprs; ri++) {
            if (ni || ri)
                fputs(",\n", f);
            json_cell(f, r, delay_report_cell(r, ni, ri));
        }
    }
    fputs("\n  ],\n  \"summary\": [\n", f);
    for (int ri = 0; ri < r->nreprs; ri++)
        json_summary(f, r, ri);
    fputs("  ]\n}\n", f);
}
