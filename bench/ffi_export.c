/*
 * stvm-bench ffi: the report for machines. CSV and JSON walk the same figure list
 * (ffi_fields), so a figure has one name in both; a figure a row does not have is an
 * empty CSV field and a JSON null.
 */
#include "ffi_render.h"

#include "bench.h"

#include <string.h>

static void csv_value(FILE *f, const ffi_row *r, const ffi_field *fl)
{
    if (!ffi_field_present(r, fl))
        return;
    int n;
    const double *v;
    switch (fl->kind) {
    case FFI_TEXT:
        bench_csv_text(f, ffi_field_text(r, fl));
        break;
    case FFI_REAL:
    case FFI_INTEGER:
        bench_csv_number(f, ffi_field_number(r, fl), fl->kind == FFI_INTEGER ? 0 : -1);
        break;
    case FFI_SAMPLES:
        v = ffi_field_samples(r, fl, &n);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%.6g", i ? ";" : "", v[i]);
        break;
    }
}

void ffi_print_csv(FILE *f, const ffi_report *r)
{
    for (size_t i = 0; i < ffi_nfields; i++)
        fprintf(f, "%s%s", i ? "," : "", ffi_fields[i].name);
    fputc('\n', f);
    for (int k = 0; k < r->nrows; k++) {
        for (size_t i = 0; i < ffi_nfields; i++) {
            if (i)
                fputc(',', f);
            csv_value(f, &r->rows[k], &ffi_fields[i]);
        }
        fputc('\n', f);
    }
}

static void json_value(FILE *f, const ffi_row *r, const ffi_field *fl)
{
    if (!ffi_field_present(r, fl)) {
        fputs("null", f);
        return;
    }
    int n;
    const double *v;
    switch (fl->kind) {
    case FFI_TEXT:
        bench_json_string(f, ffi_field_text(r, fl));
        break;
    case FFI_REAL:
    case FFI_INTEGER:
        bench_json_number(f, ffi_field_number(r, fl));
        break;
    case FFI_SAMPLES:
        v = ffi_field_samples(r, fl, &n);
        fputc('[', f);
        for (int i = 0; i < n; i++) {
            fputs(i ? ", " : "", f);
            bench_json_number(f, v[i]);
        }
        fputc(']', f);
        break;
    }
}

static void json_row(FILE *f, const ffi_row *r, bool last)
{
    fputs("    {\n", f);
    for (size_t i = 0; i < ffi_nfields; i++) {
        fprintf(f, "      \"%s\": ", ffi_fields[i].name);
        json_value(f, r, &ffi_fields[i]);
        fputs(i + 1 < ffi_nfields ? ",\n" : "\n", f);
    }
    fprintf(f, "    }%s\n", last ? "" : ",");
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
    for (int k = 0; k < r->nrows; k++)
        json_row(f, &r->rows[k], k + 1 == r->nrows);
    fputs("  ],\n", f);
    json_targets(f, r);
    fputs("}\n", f);
}
