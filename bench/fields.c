/*
 * stvm-bench: reading a figure out of a row by its field, and writing a command's rows
 * as CSV and JSON from its field list.
 */
#include "fields.h"

#include "bench.h"

#include <math.h>
#include <string.h>

const bench_field *bench_field_named(const bench_field *fields, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(fields[i].name, name))
            return &fields[i];
    return NULL;
}

bool bench_field_present(const void *row, unsigned row_kind, const bench_field *f)
{
    if (!(f->rows & row_kind))
        return false;
    return f->kind != BENCH_REAL || isfinite(bench_field_number(row, f));
}

double bench_field_number(const void *row, const bench_field *f)
{
    const char *p = (const char *)row + f->offset;
    if (f->kind == BENCH_INTEGER) {
        long long v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    double d = NAN;
    if (f->kind == BENCH_REAL)
        memcpy(&d, p, sizeof d);
    return d;
}

const char *bench_field_text(const void *row, const bench_field *f)
{
    return f->kind == BENCH_TEXT ? (const char *)row + f->offset : "";
}

const double *bench_field_samples(const void *row, int nsamples, const bench_field *f,
                                  int *n)
{
    *n = f->kind == BENCH_SAMPLES ? nsamples : 0;
    return (const double *)(const void *)((const char *)row + f->offset);
}

static const void *row_at(const bench_rows *t, int k)
{
    return (const char *)t->rows + (size_t)k * t->row_size;
}

/* ---- CSV ------------------------------------------------------------------------------- */

static void csv_value(FILE *f, const bench_rows *t, const void *row, const bench_field *fl)
{
    if (!bench_field_present(row, t->kind(row), fl))
        return;
    int n;
    const double *v;
    switch (fl->kind) {
    case BENCH_TEXT:
        bench_csv_text(f, bench_field_text(row, fl));
        break;
    case BENCH_REAL:
    case BENCH_INTEGER:
        bench_csv_number(f, bench_field_number(row, fl), fl->kind == BENCH_INTEGER ? 0 : -1);
        break;
    case BENCH_SAMPLES:
        v = bench_field_samples(row, t->nsamples(row), fl, &n);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%.6g", i ? ";" : "", v[i]);
        break;
    }
}

void bench_fields_csv(FILE *f, const bench_rows *t)
{
    for (size_t i = 0; i < t->nfields; i++)
        fprintf(f, "%s%s", i ? "," : "", t->fields[i].name);
    fputc('\n', f);
    for (int k = 0; k < t->nrows; k++) {
        for (size_t i = 0; i < t->nfields; i++) {
            if (i)
                fputc(',', f);
            csv_value(f, t, row_at(t, k), &t->fields[i]);
        }
        fputc('\n', f);
    }
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_value(FILE *f, const bench_rows *t, const void *row, const bench_field *fl)
{
    if (!bench_field_present(row, t->kind(row), fl)) {
        fputs("null", f);
        return;
    }
    int n;
    const double *v;
    switch (fl->kind) {
    case BENCH_TEXT:
        bench_json_string(f, bench_field_text(row, fl));
        break;
    case BENCH_REAL:
    case BENCH_INTEGER:
        bench_json_number(f, bench_field_number(row, fl));
        break;
    case BENCH_SAMPLES:
        v = bench_field_samples(row, t->nsamples(row), fl, &n);
        fputc('[', f);
        for (int i = 0; i < n; i++) {
            fputs(i ? ", " : "", f);
            bench_json_number(f, v[i]);
        }
        fputc(']', f);
        break;
    }
}

void bench_fields_json(FILE *f, const bench_rows *t)
{
    for (int k = 0; k < t->nrows; k++) {
        fputs("    {\n", f);
        for (size_t i = 0; i < t->nfields; i++) {
            fprintf(f, "      \"%s\": ", t->fields[i].name);
            json_value(f, t, row_at(t, k), &t->fields[i]);
            fputs(i + 1 < t->nfields ? ",\n" : "\n", f);
        }
        fprintf(f, "    }%s\n", k + 1 == t->nrows ? "" : ",");
    }
}
