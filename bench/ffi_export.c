/*
 * stvm-bench ffi: the report for machines. CSV and JSON walk the same figure list
 * (ffi_fields), so a figure has one name in both; a figure a row does not have is an
 * empty CSV field and a JSON null.
 */
#include "ffi_render.h"

#include "bench.h"

#include <string.h>

void ffi_print_csv(FILE *f, const ffi_report *r)
{
    bench_rows rows = ffi_rows(r);
    bench_fields_csv(f, &rows);
}

static void json_targets(FILE *f, const ffi_report *r)
{
    fputs("  \"targets\": [", f);
    for (size_t i = 0; i < ffi_ntargets; i++) {
        const ffi_target *t = &ffi_targets[i];
        const char *met;
        double v = ffi_target_measured(r, t, &met);
        const ffi_row *row = ffi_row_of(r, t->kind);
        fprintf(f, "%s\n    {\"figure\": \"%s\", \"case\": \"%s\", \"runner\": \"%s\", "
                   "\"bits\": %lld, \"at_least\": %s, \"target\": ",
                i ? "," : "", t->field, ffi_case_name(t->kind), row ? row->runner : "",
                row ? row->bits : 0LL, t->at_least ? "true" : "false");
        bench_json_number(f, t->limit);
        fprintf(f, ", \"unit\": \"%s\", \"measured\": ", t->unit);
        bench_json_number(f, v);
        fprintf(f, ", \"met\": %s, \"verdict\": \"%s\"}",
                !strcmp(met, "met") ? "true" : !strcmp(met, "MISSED") ? "false" : "null", met);
    }
    fputs("\n  ]\n", f);
}

void ffi_print_json(FILE *f, const ffi_report *r)
{
    fprintf(f, "{\n  \"schema\": \"stvm-bench/ffi/1\",\n  \"context\": ");
    bench_json_context(f, "  ", "real", r->cpu);
    fprintf(f, ",\n  \"params\": {\"repeat\": %d, \"calls\": %lld, \"round_trips\": %lld, "
               "\"blocking_calls\": %d, \"block_ms\": %d, \"ffi_workers\": %d, "
               "\"ffi_spin_us\": %d},\n",
            r->repeat, r->calls, r->round_trips, r->blocking_calls, r->block_ms, r->workers,
            r->spin_us);
    fputs("  \"results\": [\n", f);
    bench_rows rows = ffi_rows(r);
    bench_fields_json(f, &rows);
    fputs("  ],\n", f);
    json_targets(f, r);
    fputs("}\n", f);
}
