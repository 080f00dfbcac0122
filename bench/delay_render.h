/*
 * stvm-bench delay: a sweep's report as text, Markdown (delay_text.c), CSV, JSON
 * (delay_export.c) and a gnuplot chart (delay_plot.c). Rendering only: it reads a
 * delay_report and runs nothing but gnuplot.
 */
#ifndef STVM_BENCH_DELAY_RENDER_H
#define STVM_BENCH_DELAY_RENDER_H

#include <stdio.h>

#include "delay_report.h"

void delay_print_text(FILE *f, const delay_report *r);
void delay_print_markdown(FILE *f, const delay_report *r);
/* One row per (N, representation); the figure columns are delay_fields. */
void delay_print_csv(FILE *f, const delay_report *r);
/* The same figures, under the same names, per sample and as medians. */
void delay_print_json(FILE *f, const delay_report *r);
/* Write FILE's .gp and .dat siblings and run gnuplot to make FILE (a PNG). 0 or -1. */
int delay_plot(const char *png, const delay_report *r);

#endif
