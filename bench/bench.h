/*
 * stvm-bench: what every command shares beyond the record, the option table and the
 * renderers (record.h, options.h, render.h): tracing a cell, the operating system, a
 * histogram, plots and reports. Each command's own measurement code has its own header
 * (delay_run.h, micro.h, ffi_measure.h, io.h, zn_measure.h; nginx.h and wrk.h for zn).
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

/* ---- trace.c: --trace FILE and --trace-events N, which every command has ----------- */

/* A trace is of one cell: BENCH_GO_ON when no trace is asked or `cells` (the cells the
 * options select, repetitions included) is 1; else a usage error (status 2) naming how
 * many they select and `how` to select one. */
int bench_trace_cells(const bench_invocation *inv, long cells, const char *how);
/* Around the traced cell's VM (t NULL or without a path: nothing, STVM_OK). begin starts
 * the ring before the cell runs; end writes the JSON after it. Both print nothing:
 * STVM_OK, or the stvm error with a sentence in why. */
int bench_trace_begin(const bench_trace *t, stvm_vm *vm, char *why, size_t whysize);
int bench_trace_end(const bench_trace *t, stvm_vm *vm, char *why, size_t whysize);

/* ---- sys.c: the operating system ---------------------------------------------------- */

int64_t bench_mono_ns(void);             /* CLOCK_MONOTONIC */
int64_t bench_cpu_ns(void);              /* CLOCK_PROCESS_CPUTIME_ID */
int64_t bench_real_ns(void);             /* CLOCK_REALTIME, the kernel's receive timestamps' */
/* Pin the calling thread to cpu (>= 0). 0 or -errno. */
int bench_pin_cpu(int cpu);
/* Resident set size in bytes from /proc/self/statm, or 0 if unreadable. */
uint64_t bench_rss_bytes(void);
int bench_ncpu(void);
/* The one-, five- and fifteen-minute load averages, NaN if unreadable. */
void bench_load_averages(double load[3]);
/* The first value of key ("model name", "cpu MHz") in /proc/cpuinfo, or "unknown". */
void bench_cpuinfo(const char *key, char *buf, size_t size);
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

void bench_hist_record(bench_hist *h, uint64_t v);
/* The value at quantile q (0..1): the upper edge of the bucket holding it, never above
 * the exact maximum. 0 when empty. */
uint64_t bench_hist_quantile(const bench_hist *h, double q);

/* ---- plot.c: what the charts share ------------------------------------------------ */

/* A plot: r as csv-wide into X.csv beside X.png, then runs gnuplot -e
 * "datafile='X.csv'; outfile='X.png'" on bench/plots/<script> (found in $STVM_PLOTS_DIR,
 * <exe>/../bench/plots, or <exe>/../share/stvm/plots). A missing gnuplot or script is a
 * note on stderr; false (with a message) only when the .csv cannot be written. */
bool bench_plot(const bench_results *r, const bench_invocation *inv, const char *script,
                const char *png);
/* A Markdown report: prose(f, r, data) first (NULL: none), then the markdown view.
 * False, with a message, when the file cannot be written whole. */
bool bench_report(const char *path, const bench_results *r, const bench_invocation *inv,
                  void (*prose)(FILE *, const bench_results *, const void *), const void *data);

/* ---- the commands ------------------------------------------------------------------- */

/* Each command: its table (options.h) and its main (argv[0] is the command's name). */
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
extern const bench_command peers_command;
int peers_main(int argc, char **argv);

#endif
