/*
 * stvm-bench io: the report for machines. CSV and JSON walk the same figure list
 * (io_fields), so a figure has one name in both; a figure a row does not have is an
 * empty CSV field and a JSON null.
 */
#include "io_render.h"

#include "bench.h"

#include <string.h>

/* ---- CSV ------------------------------------------------------------------------------- */

static void csv_value(FILE *f, const io_row *r, const io_field *fl)
{
    if (!io_field_present(r, fl))
        return;
    int n;
    const double *v;
    switch (fl->kind) {
    case IO_TEXT:
        bench_csv_text(f, io_field_text(r, fl));
        break;
    case IO_REAL:
    case IO_INTEGER:
        bench_csv_number(f, io_field_number(r, fl), fl->kind == IO_INTEGER ? 0 : -1);
        break;
    case IO_SAMPLES:
        v = io_field_samples(r, fl, &n);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%.6g", i ? ";" : "", v[i]);
        break;
    }
}

void io_print_csv(FILE *f, const io_report *r)
{
    for (size_t i = 0; i < io_nfields; i++)
        fprintf(f, "%s%s", i ? "," : "", io_fields[i].name);
    fputc('\n', f);
    for (int k = 0; k < r->nrows; k++) {
        for (size_t i = 0; i < io_nfields; i++) {
            if (i)
                fputc(',', f);
            csv_value(f, &r->rows[k], &io_fields[i]);
        }
        fputc('\n', f);
    }
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_value(FILE *f, const io_row *r, const io_field *fl)
{
    if (!io_field_present(r, fl)) {
        fputs("null", f);
        return;
    }
    int n;
    const double *v;
    switch (fl->kind) {
    case IO_TEXT:
        bench_json_string(f, io_field_text(r, fl));
        break;
    case IO_REAL:
    case IO_INTEGER:
        bench_json_number(f, io_field_number(r, fl));
        break;
    case IO_SAMPLES:
        v = io_field_samples(r, fl, &n);
        fputc('[', f);
        for (int i = 0; i < n; i++) {
            fputs(i ? ", " : "", f);
            bench_json_number(f, v[i]);
        }
        fputc(']', f);
        break;
    }
}

static void json_row(FILE *f, const io_row *r, bool last)
{
    fputs("    {\n", f);
    for (size_t i = 0; i < io_nfields; i++) {
        fprintf(f, "      \"%s\": ", io_fields[i].name);
        json_value(f, r, &io_fields[i]);
        fputs(i + 1 < io_nfields ? ",\n" : "\n", f);
    }
    fprintf(f, "    }%s\n", last ? "" : ",");
}

static void json_targets(FILE *f, const io_report *r)
{
    fputs("  \"targets\": [", f);
    for (size_t i = 0; i < io_ntargets; i++) {
        const io_target *t = &io_targets[i];
        const char *met;
        double v = io_target_measured(r, t, &met);
        fprintf(f, "%s\n    {\"figure\": \"%s\", \"case\": \"%s\", \"idle_mode\": \"%s\", "
                   "\"at_least\": %s, \"target\": ",
                i ? "," : "", t->field, io_case_name(t->kind), io_idle_mode_name(t->mode),
                t->at_least ? "true" : "false");
        bench_json_number(f, t->limit);
        fprintf(f, ", \"unit\": \"%s\", \"measured\": ", t->unit);
        bench_json_number(f, v);
        fprintf(f, ", \"met\": %s, \"verdict\": \"%s\"}",
                !strcmp(met, "met") ? "true" : !strcmp(met, "MISSED") ? "false" : "null", met);
    }
    fputs("\n  ]\n", f);
}

void io_print_json(FILE *f, const io_report *r)
{
    fprintf(f, "{\n  \"schema\": \"stvm-bench/io/1\",\n  \"context\": ");
    bench_json_context(f, "  ", "real", r->cpu);
    fprintf(f, ",\n  \"params\": {\"repeat\": %d, \"round_trips\": %lld, \"max_seconds\": ",
            r->repeat, r->round_trips);
    bench_json_number(f, r->max_seconds);
    fprintf(f, ", \"timeout_ms\": %lld, \"connections_asked\": %ld, \"connections\": %ld, "
               "\"messages\": %d, \"message_bytes\": %d, \"nofile_soft\": %lld, "
               "\"nofile_hard\": %lld},\n",
            (long long)r->timeout_ms, r->connections_asked, r->connections, r->messages,
            r->message_bytes, r->nofile_soft, r->nofile_hard);
    fputs("  \"results\": [\n", f);
    for (int k = 0; k < r->nrows; k++)
        json_row(f, &r->rows[k], k + 1 == r->nrows);
    fputs("  ],\n", f);
    json_targets(f, r);
    fputs("}\n", f);
}
