/*
 * stvm-bench: what both commands share (command-line helpers, the operating system,
 * statistics, JSON and CSV values). The commands' own data, measurement and rendering
 * live in their own headers (delay_report.h, delay_run.h, delay_render.h, micro_*.h,
 * io_*.h, zn_*.h).
 *
 * The tool uses the public API (<stvm.h>) plus the C library, so its figures are what
 * an embedder gets; only zn_run.c reaches into the image side (the ZnClient-shaped
 * client, its log and announcer are the experiment's subject). It keeps no mutable
 * file-scope state but nginx.c's registry of running servers: options live in structs
 * owned by each command.
 */
#ifndef STVM_BENCH_H
#define STVM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <stvm.h>

#include "options.h"
#include "record.h"

/* Exit statuses (hyperfine/JMH convention). */
#define BENCH_EXIT_OK 0
#define BENCH_EXIT_FAIL 1   /* a benchmark run failed */
#define BENCH_EXIT_USAGE 2  /* unknown flag or bad value */

typedef enum bench_format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_MARKDOWN } bench_format;

/* ---- main.c: command-line helpers --------------------------------------------------- */

/* "--name value" or "--name=value": true if argv[*i] is the flag `name`; stores its
 * value and advances *i past it. A missing value ends the tool with a message and
 * status 2. */
bool bench_flag(int argc, char **argv, int *i, const char *name, const char **value);
/* Parse a decimal integer in [lo, hi]; false (and nothing stored) if it is not one. */
bool bench_parse_ll(const char *s, long long lo, long long hi, long long *out);
bool bench_parse_format(const char *s, bench_format *out);
/* "a,b,c" against names[n] (n <= 31): the bits (1 << index) of the words, or -1 for an
 * unknown word or an empty list. */
long bench_parse_names(const char *s, const char *const *names, int n);
/* "1,20,300": up to max decimal integers in [lo, hi] into out; how many, or -1 (a bad
 * item, too many, an empty list). */
int bench_parse_numbers(const char *s, long long lo, long long hi, long long *out, int max);
/* Print "stvm-bench: <message>" and a hint to stderr; answers BENCH_EXIT_USAGE. */
int bench_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* How an option parser answers for one option: it took it (go on to the next), it is
 * not one of its options, or an exit status (help shown, usage error). */
#define BENCH_NEXT (-1)
#define BENCH_NOT_MINE (-2)
/* --cpu N (-1 = no pinning) and --format F, which every command has. */
int bench_common_option(int argc, char **argv, int *i, const char *command, int *cpu,
                        bench_format *format);
/* FLAG N with lo <= N <= hi into *out (BENCH_NEXT), a usage error naming the range
 * (range, or "lo..hi" when NULL), or BENCH_NOT_MINE when argv[*i] is another flag. */
int bench_count_option(int argc, char **argv, int *i, const char *command, const char *flag,
                       long long lo, long long hi, const char *range, long long *out);
/* Pin the calling thread to cpu unless it is -1; a message and BENCH_EXIT_USAGE if that
 * fails, else BENCH_EXIT_OK. */
int bench_pin_option(int cpu);
/* Progress goes to stderr only when it is a terminal, so redirected output stays clean. */
bool bench_progress_on(void);
/* Overwrite the current stderr line with a progress message. */
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- trace.c: --trace FILE and --trace-events N, which every command has ----------- */

/* The two options' help lines, their text at column `column` (the command's own, >= 22);
 * `traced` says what the trace records (lines separated by "\n", each indented). */
void bench_trace_help(FILE *f, int column, const char *traced);
/* --trace FILE or --trace-events N into *t: BENCH_NEXT, a usage error, or BENCH_NOT_MINE
 * when argv[*i] is another flag. */
int bench_trace_option(int argc, char **argv, int *i, const char *command, bench_trace *t);
/* A trace is of one cell: BENCH_NEXT when t asks for none or `cells` (the traced cells
 * the options select, repetitions included) is 1; else a usage error ending with `how`
 * (how to select one). */
int bench_trace_one_cell(const bench_trace *t, const char *command, long cells,
                         const char *how);
/* The same rule for a command on the option table (options.h): BENCH_GO_ON, or the
 * usage error (status 2) naming how many cells the options select and `how` to select
 * one. */
int bench_trace_cells(const bench_invocation *inv, long cells, const char *how);
/* Around the traced cell's VM (t NULL or without a path: nothing, STVM_OK). begin starts
 * the ring before the cell runs; end writes the JSON after it. Both print nothing:
 * STVM_OK, or the stvm error with a sentence in why. */
int bench_trace_begin(const bench_trace *t, stvm_vm *vm, char *why, size_t whysize);
int bench_trace_end(const bench_trace *t, stvm_vm *vm, char *why, size_t whysize);

/* ---- sys.c: the operating system ---------------------------------------------------- */

int64_t bench_mono_ns(void);             /* CLOCK_MONOTONIC */
int64_t bench_cpu_ns(void);              /* CLOCK_PROCESS_CPUTIME_ID */
/* Pin the calling thread to cpu (>= 0). 0 or -errno. */
int bench_pin_cpu(int cpu);
/* Resident set size in bytes from /proc/self/statm, or 0 if unreadable. */
uint64_t bench_rss_bytes(void);
int bench_ncpu(void);
/* The one-minute load average from /proc/loadavg, NaN if unreadable: a loaded machine
 * is part of what a figure means. */
double bench_load_average(void);
/* The one-, five- and fifteen-minute load averages, NaN if unreadable. */
void bench_load_averages(double load[3]);
/* The first "model name" of /proc/cpuinfo (or "unknown") into buf. */
void bench_cpu_model(char *buf, size_t size);
/* Kernel release (uname -r) into buf. */
void bench_kernel(char *buf, size_t size);
/* Current UTC time as ISO 8601 into buf. */
void bench_date_utc(char *buf, size_t size);
/* Run argv (argv[0] looked up in PATH) with stdio inherited and wait for it. Answers
 * its exit status, 128 + the signal that ended it, 127 if it could not be started, or
 * -1. */
int bench_run(char *const argv[]);
/* Arm (seconds > 0) or disarm (0) a watchdog that ends the tool with a message and
 * status 1 if a run hangs. */
void bench_watchdog(unsigned seconds);

/* ---- stats.c: a log-linear histogram ------------------------------------------------ */


/* Log-linear histogram of non-negative integers (µs): exact below 64, then 32 linear
 * sub-buckets per power of two (relative error <= 1/32). No per-sample storage. */
#define BENCH_HIST_SUB 32
#define BENCH_HIST_BUCKETS (64 + 58 * BENCH_HIST_SUB)
typedef struct bench_hist {
    uint64_t count;
    uint64_t max;
    uint64_t buckets[BENCH_HIST_BUCKETS];
} bench_hist;

void bench_hist_clear(bench_hist *h);
void bench_hist_record(bench_hist *h, uint64_t v);
/* The value at quantile q (0..1): the upper edge of the bucket holding it, never above
 * the exact maximum. 0 when empty. */
uint64_t bench_hist_quantile(const bench_hist *h, double q);

/* ---- plot.c: what the charts share ------------------------------------------------ */

/* A chart's files: the PNG, and beside it the gnuplot script and the data. */
typedef struct bench_plot_paths {
    const char *png;
    char *gp, *dat;     /* the PNG's name with .gp and .dat for its extension */
} bench_plot_paths;

/* Fill p for png (allocates gp and dat); false when out of memory. */
bool bench_plot_paths_make(bench_plot_paths *p, const char *png);
void bench_plot_paths_free(bench_plot_paths *p);
/* fopen for writing, with a message on failure (NULL). */
FILE *bench_open_written(const char *path);
/* fclose with a message; false if the file is not complete. */
bool bench_close_written(FILE *f, const char *path);
/* Write a report file with write(f, data) and say so on stderr, after what stdout has
 * so far (flushed first, so the message does not land inside a table); false, with a
 * message, when the file cannot be written whole. */
bool bench_write_report(const char *path, void (*write)(FILE *f, const void *data),
                        const void *data);
/* A gnuplot single-quoted string ('' stands for a quote). */
void bench_gp_string(FILE *f, const char *s);
/* The script's "# Run:" line, a 960x900 PNG terminal (pngcairo when there is one) and
 * the output file, ending the line. */
void bench_gp_terminal(FILE *g, const bench_plot_paths *p);
/* Run gnuplot on p->gp and say what came of it (a missing gnuplot is only a note). */
void bench_run_gnuplot(const bench_plot_paths *p);

/* The new API (beside the old above until every command is ported). A plot: r as
 * csv-wide to png's name with .csv, then gnuplot -e "datafile='X.csv'; outfile='X.png'"
 * on bench/plots/<script> (found in $STVM_PLOTS_DIR, <exe>/../bench/plots, or
 * <exe>/../share/stvm/plots). A missing gnuplot or script is a note on stderr, not a
 * failure; false (with a message) only when the .csv cannot be written. Runs gnuplot. */
bool bench_plot(const bench_results *r, const bench_invocation *inv, const char *script,
                const char *png);
/* A Markdown report: prose(f, r, data) first (NULL: none), then the markdown view.
 * False, with a message, when the file cannot be written whole. */
bool bench_report(const char *path, const bench_results *r, const bench_invocation *inv,
                  void (*prose)(FILE *, const bench_results *, const void *), const void *data);

/* ---- the commands ------------------------------------------------------------------- */

/* Each command: its table (options.h) and its main (argv[0] is the command's name).
 * The commands not yet on the option table have a bench_command with no option in
 * unported.c, so --man and --help list them. */
extern const bench_command micro_command;
int micro_main(int argc, char **argv);
extern const bench_command delay_command;
int delay_main(int argc, char **argv);
extern const bench_command io_command;
int io_main(int argc, char **argv);
extern const bench_command ffi_command;
int ffi_main(int argc, char **argv);
extern const bench_command zn_command;
int zn_main(int argc, char **argv);

/* ---- export.c: values for machines (JSON, CSV) -------------------------------------- */

/* A JSON string literal (quoted, escaped). */
void bench_json_string(FILE *f, const char *s);
/* A JSON number (null for NaN or infinity). */
void bench_json_number(FILE *f, double v);
/* The shared "context" object of the JSON documents (no trailing comma). */
void bench_json_context(FILE *f, const char *indent, const char *clock, int cpu);
/* A CSV field, quoted (RFC 4180) when it holds a comma, quote or newline. */
void bench_csv_text(FILE *f, const char *s);
/* A CSV number with `decimals` digits after the point, or %.6g when decimals < 0;
 * nothing (an empty field) for NaN or infinity. */
void bench_csv_number(FILE *f, double v, int decimals);

#endif
