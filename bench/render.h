/*
 * stvm-bench: one renderer per format, each showing any command's results (record.h).
 *
 *   table     the terminal table: a column per parameter and per metric (median, and
 *             min..max when there are several samples), then the command's own tables,
 *             the targets with their verdicts, the notes;
 *   markdown  the same table model as Markdown;
 *   csv       long form, one row per sample and one per summary statistic:
 *             command,case,<every parameter key>,status,metric,unit,better,statistic,
 *             repetition,value  (statistic: sample, median, min, max; repetition 1..K
 *             for samples, empty for the summary rows);
 *   csv-wide  one row per record: case,<parameter keys>,status,<metric medians>,note;
 *   json      {"schema":"stvm-bench/1","context":{...},"command":...,"parameters":{...},
 *             "results":[{case, params, status, note, metrics:[{name, unit, better,
 *             median, min, max, samples}]}],"targets":[...],"tables":[...]};
 *   gbench    Google Benchmark's JSON ({"context":{...},"benchmarks":[...]}), one
 *             benchmark per record and repetition with real_time and cpu_time from the
 *             record's gbench metrics and every other metric as a counter, plus the
 *             median aggregate: what compare.py (Debian's libbenchmark-tools) reads.
 *
 * Every format carries the context: stvm version and back end, date, host CPU, kernel,
 * load average, CPU pin, clock, command line.
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

/* The context as a JSON object (used by the json and gbench views). */
void bench_context_json(FILE *f, const bench_invocation *inv, const char *indent);
/* The context as "key: value" lines, each starting with prefix (table, markdown, the
 * CSV's "# " comment lines). */
void bench_context_lines(FILE *f, const bench_invocation *inv, const char *prefix);

/* The context as Google Benchmark's "context" member (its keys, then stvm_* ones). */
void bench_context_gbench(FILE *f, const bench_invocation *inv);
/* The context as two short lines above the terminal table. */
void bench_context_header(FILE *f, const bench_invocation *inv);

/* For the renderers: the distinct parameter keys (or metric names) of n records in the
 * order they first appear, at most max; answers how many. The pointers are the
 * records'. */
int bench_param_keys(const bench_record *recs, int n, const char **keys, int max);
int bench_metric_names(const bench_record *recs, int n, const char **names, int max);
/* "ok", "FAILED", "skipped"; "lower", "higher", "none". */
const char *bench_status_name(bench_status s);
const char *bench_better_name(bench_better b);

/* One renderer per format (bench_render picks one). */
void bench_render_table(FILE *f, const bench_results *r, const bench_invocation *inv,
                        bool markdown);
void bench_render_csv(FILE *f, const bench_results *r, const bench_invocation *inv, bool wide);
void bench_render_json(FILE *f, const bench_results *r, const bench_invocation *inv);
void bench_render_gbench(FILE *f, const bench_results *r, const bench_invocation *inv);

#endif
