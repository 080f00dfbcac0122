/*
 * stvm-bench io: the report for machines. CSV and JSON walk the same figure list
 * (io_fields), so a figure has one name in both; a figure a row does not have is an
 * empty CSV field and a JSON null.
 */
#include "io_render.h"

#include "bench.h"

#include <string.h>

void io_print_csv(FILE *f, const io_report *r)
{
    bench_rows rows = io_rows(r);
    bench_fields_csv(f, &rows);
}

/* ---- JSON ------------------------------------------------------------------------------ */

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
    bench_rows rows = io_rows(r);
    bench_fields_json(f, &rows);
    fputs("  ],\n", f);
    json_targets(f, r);
    fputs("}\n", f);
}
