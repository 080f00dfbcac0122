/*
 * stvm-bench zn: the report as aligned tables, Markdown and the Markdown report
 * (zn_text.c), CSV and JSON (zn_export.c), and the gnuplot chart (zn_plot.c).
 * Rendering only: it reads a zn_report and runs nothing but gnuplot.
 */
#ifndef STVM_BENCH_ZN_RENDER_H
#define STVM_BENCH_ZN_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "zn_report.h"

/* The seed-shaped table (when its rows ran), every row, the targets. */
void zn_print_table(FILE *f, const zn_report *r, bool markdown);
/* The Markdown report (--report): the run, the tables, the targets, the per-request
 * counters, what the figures mean. */
void zn_print_report(FILE *f, const zn_report *r);
/* One row per configuration and the wrk row; the knobs, then ZN_FIGURES. */
void zn_print_csv(FILE *f, const zn_report *r);
/* The same figures under the same names, the parameters and the targets. */
void zn_print_json(FILE *f, const zn_report *r);
/* Requests/s against subscriber cost, one line per idle mode (and per other knob
 * combination), from the subscriber rows; writes FILE's .gp and .dat siblings and runs
 * gnuplot. 0 or -1. */
int zn_plot(const char *png, const zn_report *r);

#endif
