/*
 * stvm-bench micro: the report for machines. CSV and JSON walk the same figure list
 * (micro_fields), so a figure has one name in both; a figure a row does not have is an
 * empty CSV field and a JSON null.
 */
#include "micro_render.h"

#include "bench.h"

#include <math.h>
#include <stdbool.h>

/* ---- CSV ------------------------------------------------------------------------------- */

static void csv_value(FILE *f, const micro_row *r, const micro_field *fl)
{
    if (!micro_field_present(r, fl))
        return;
    int n;
    const double *v;
    switch (fl->kind) {
    case MICRO_TEXT:
        bench_csv_text(f, micro_field_text(r, fl));
        break;
    case MICRO_REAL:
    case MICRO_INTEGER:
        bench_csv_number(f, micro_field_number(r, fl), fl->kind == MICRO_INTEGER ? 0 : -1);
        break;
    case MICRO_SAMPLES:
        v = micro_field_samples(r, fl, &n);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%.6g", i ? ";" : "", v[i]);
        break;
    }
}

void micro_print_csv(FILE *f, const micro_report *r)
{
    for (size_t i = 0; i < micro_nfields; i++)
        fprintf(f, "%s%s", i ? "," : "", micro_fields[i].name);
    fputc('\n', f);
    for (int k = 0; k < r->nrows; k++) {
        for (size_t i = 0; i < micro_nfields; i++) {
            if (i)
                fputc(',', f);
            csv_value(f, &r->rows[k], &micro_fields[i]);
        }
        fputc('\n', f);
    }
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_value(FILE *f, const micro_row *r, const micro_field *fl)
{
    if (fl->kind != MICRO_TEXT && !micro_field_present(r, fl)) {
        fputs("null", f);
        return;
    }
    int n;
    const double *v;
    switch (fl->kind) {
    case MICRO_TEXT:
        bench_json_string(f, micro_field_text(r, fl));
        break;
    case MICRO_REAL:
    case MICRO_INTEGER:
        bench_json_number(f, micro_field_number(r, fl));
        break;
    case MICRO_SAMPLES:
        v = micro_field_samples(r, fl, &n);
        fputc('[', f);
        for (int i = 0; i < n; i++) {
            fputs(i ? ", " : "", f);
            bench_json_number(f, v[i]);
        }
        fputc(']', f);
        break;
    }
}

static void json_row(FILE *f, const micro_row *r, bool last)
{
    fputs("    {\n", f);
    for (size_t i = 0; i < micro_nfields; i++) {
        fprintf(f, "      \"%s\": ", micro_fields[i].name);
        json_value(f, r, &micro_fields[i]);
        fputs(i + 1 < micro_nfields ? ",\n" : "\n", f);
    }
    fprintf(f, "    }%s\n", last ? "" : ",");
}

/* Empty for a back end that is not judged, so a consumer cannot mistake its figures
 * for the assembly back end's. */
static void json_targets(FILE *f, const micro_report *r)
{
    fprintf(f, "  \"targets_backend\": \"%s\",\n  \"targets\": [", MICRO_JUDGED_BACKEND);
    for (size_t i = 0; micro_report_judged(r) && i < micro_ntargets; i++) {
        const micro_target *t = &micro_targets[i];
        const char *met;
        double v = micro_target_measured(r, t, &met);
        fprintf(f, "%s\n    {\"figure\": \"%s\", \"target\": ", i ? "," : "", t->field);
        bench_json_number(f, t->limit);
        fprintf(f, ", \"unit\": \"%s\", \"measured\": ", t->unit);
        bench_json_number(f, v);
        fprintf(f, ", \"met\": %s}",
                isfinite(v) ? (v <= t->limit ? "true" : "false") : "null");
    }
    fputs(micro_report_judged(r) ? "\n  ]\n" : "]\n", f);
}

void micro_print_json(FILE *f, const micro_report *r)
{
    fprintf(f, "{\n  \"schema\": \"stvm-bench/micro/2\",\n  \"context\": ");
    bench_json_context(f, "  ", "real", r->cpu);
    fprintf(f, ",\n  \"params\": {\"repeat\": %d, \"iterations\": %lld, "
               "\"pthread_iterations\": %lld, \"processes\": %ld, \"pthread_cpu\": %d},\n",
            r->repeat, r->iterations, r->pthread_iterations, r->processes, r->pthread_cpu);
    fputs("  \"results\": [\n", f);
    for (int k = 0; k < r->nrows; k++)
        json_row(f, &r->rows[k], k + 1 == r->nrows);
    fputs("  ],\n", f);
    json_targets(f, r);
    fputs("}\n", f);
}
