/*
 * stvm-bench micro: the report as an aligned table or Markdown (micro_text.c), CSV or
 * JSON (micro_export.c). Rendering only: it reads a micro_report.
 */
#ifndef STVM_BENCH_MICRO_RENDER_H
#define STVM_BENCH_MICRO_RENDER_H

#include <stdio.h>

#include "micro_report.h"

void micro_print_table(FILE *f, const micro_report *r, bool markdown);
/* One row per micro_row; the columns are micro_fields. */
void micro_print_csv(FILE *f, const micro_report *r);
/* The same figures under the same names, and the targets. */
void micro_print_json(FILE *f, const micro_report *r);

#endif
