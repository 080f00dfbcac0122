/*
 * stvm-bench micro: the report for machines. CSV and JSON walk the same figure list
 * (micro_fields), so a figure has one name in both; a figure a row does not have is an
 * empty CSV field and a JSON null.
 */
#include "micro_render.h"

#include "bench.h"

#include <math.h>
#include <stdbool.h>

void micro_print_csv(FILE *f, const micro_report *r)
{
    bench_rows rows = micro_rows(r);
    bench_fields_csv(f, &rows);
}

/* ---- JSON ------------------------------------------------------------------------------ */

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
    bench_rows rows = micro_rows(r);
    bench_fields_json(f, &rows);
    fputs("  ],\n", f);
    json_targets(f, r);
    fputs("}\n", f);
}
