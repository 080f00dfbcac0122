/*
 * stvm-bench ffi: the report as an aligned table or Markdown (ffi_text.c), CSV or JSON
 * (ffi_export.c). Rendering only: it reads an ffi_report.
 */
#ifndef STVM_BENCH_FFI_RENDER_H
#define STVM_BENCH_FFI_RENDER_H

#include <stdio.h>

#include "ffi_report.h"

void ffi_print_table(FILE *f, const ffi_report *r, bool markdown);
/* One row per ffi_row; the columns are ffi_fields. */
void ffi_print_csv(FILE *f, const ffi_report *r);
/* The same figures under the same names, the parameters and the targets. */
void ffi_print_json(FILE *f, const ffi_report *r);

#endif
