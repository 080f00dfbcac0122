/*
 * stvm-bench: what every command shares beyond the record, the option table and the
 * renderers (record.h, options.h, render.h): tracing a cell, the operating system and a
 * histogram. Each command's own measurement code has its own header (delay_run.h,
 * micro.h, ffi_measure.h, io.h).
 *
 * The tool uses the public API (<stvm.h>) and the C library only (scripts/check-layering.sh
 * holds it to that), so its figures are what an embedder gets. It keeps no mutable
 * file-scope state: options live in structs owned by each command.
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

#endif
