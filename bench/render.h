/*
 * stvm-bench: one renderer per format, each showing any command's results (record.h):
 * table and markdown (render_table.c), csv and csv-wide (render_csv.c), json
 * (render_json.c), gbench (render_gbench.c); bench/README.md gives their columns and
 * keys. Every format carries the context (context.c).
 */
#ifndef STVM_BENCH_RENDER_H
#define STVM_BENCH_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "options.h"
#include "record.h"

void bench_render(FILE *f, bench_fmt fmt, const bench_results *r,
                  const bench_invocation *inv);

/* The format chosen by --format on stdout, then each --export-* to its file (one line
 * on stderr per file written, after stdout is flushed). BENCH_EXIT_OK, or
 * BENCH_EXIT_FAIL with a message when a file could not be written whole. */
int bench_output(const bench_results *r, const bench_invocation *inv);

/* The context: a JSON object (json view), "key: value" lines each after prefix (the
 * Markdown list, the CSVs' "# " lines), Google Benchmark's "context" member (its keys,
 * then stvm_* ones), two short lines above the terminal table. */
void bench_context_json(FILE *f, const bench_invocation *inv, const char *indent);
void bench_context_lines(FILE *f, const bench_invocation *inv, const char *prefix);
void bench_context_gbench(FILE *f, const bench_invocation *inv);
void bench_context_header(FILE *f, const bench_invocation *inv);

/* The distinct parameter keys (metrics: metric names) of n records in the order they
 * first appear, at most max; answers how many (the pointers are the records'). */
int bench_distinct(const bench_record *recs, int n, const char **out, int max, bool metrics);
/* "ok", "FAILED", "skipped"; "lower", "higher", "none". */
const char *bench_status_name(bench_status s);
const char *bench_better_name(bench_better b);

void bench_render_table(FILE *f, const bench_results *r, const bench_invocation *inv,
                        bool markdown);
void bench_render_csv(FILE *f, const bench_results *r, const bench_invocation *inv, bool wide);
/* One renderer per format (the bool: markdown, csv-wide; unused by the JSON views). */
void bench_render_json(FILE *f, const bench_results *r, const bench_invocation *inv, bool);
void bench_render_gbench(FILE *f, const bench_results *r, const bench_invocation *inv, bool);

#endif
