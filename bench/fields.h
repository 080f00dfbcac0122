/*
 * stvm-bench: a command's figures as one list of fields (name, kind, where the figure
 * lives in the command's row struct, which kinds of row have it), which the CSV
 * columns and the JSON keys both walk, so a figure has one name in both. `micro`, `io`
 * and `ffi` use it; `delay` and `zn` keep their own lists, whose rows have another shape
 * (a cell per N and representation, knob columns).
 */
#ifndef STVM_BENCH_FIELDS_H
#define STVM_BENCH_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum bench_kind {
    BENCH_TEXT,                     /* char[] */
    BENCH_REAL,                     /* double; NaN is "not measured" */
    BENCH_INTEGER,                  /* long long */
    BENCH_SAMPLES,                  /* double[nsamples] */
} bench_kind;

typedef struct bench_field {
    const char *name;
    bench_kind kind;
    size_t offset;                  /* into the command's row struct */
    unsigned rows;                  /* the command's kind bits of the rows that have it */
} bench_field;

/* A command's rows as the writers walk them: nrows structs of row_size bytes. */
typedef struct bench_rows {
    const bench_field *fields;
    size_t nfields;
    const void *rows;
    size_t row_size;
    int nrows;
    unsigned (*kind)(const void *row);      /* the row's kind bit */
    int (*nsamples)(const void *row);       /* the length of its BENCH_SAMPLES figures */
} bench_rows;

/* The field called name, or NULL. */
const bench_field *bench_field_named(const bench_field *fields, size_t n, const char *name);
/* False where a row of this kind has no such figure, or a real figure is NaN. */
bool bench_field_present(const void *row, unsigned row_kind, const bench_field *f);
/* An integer or real figure as a double (NaN for the other kinds). */
double bench_field_number(const void *row, const bench_field *f);
/* A text figure ("" for the other kinds). */
const char *bench_field_text(const void *row, const bench_field *f);
/* A samples figure and its length (0 for the other kinds). */
const double *bench_field_samples(const void *row, int nsamples, const bench_field *f,
                                  int *n);

/* A header line naming every field, then a line per row; a figure a row does not have
 * is an empty field. */
void bench_fields_csv(FILE *f, const bench_rows *t);
/* The rows as JSON objects, one per line group, separated by commas, each indented by
 * four spaces (the body of a "results" array); a figure a row does not have is null. */
void bench_fields_json(FILE *f, const bench_rows *t);

#endif
