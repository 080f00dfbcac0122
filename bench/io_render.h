/*
 * stvm-bench io: the report as aligned tables or Markdown (io_text.c), CSV or JSON
 * (io_export.c). Rendering only: it reads an io_report.
 */
#ifndef STVM_BENCH_IO_RENDER_H
#define STVM_BENCH_IO_RENDER_H

#include <stdio.h>

#include "io_report.h"

void io_print_table(FILE *f, const io_report *r, bool markdown);
/* One row per io_row; the columns are io_fields. */
void io_print_csv(FILE *f, const io_report *r);
/* The same figures under the same names, the parameters and the targets. */
void io_print_json(FILE *f, const io_report *r);

#endif
