/*
 * stvm-bench: shared declarations of the benchmark tool.
 *
 * The tool uses the public API only (<stvm.h>) plus the C library, so its figures are
 * what an embedder gets. It keeps no mutable file-scope state: options live in structs
 * owned by each command.
 */
#ifndef STVM_BENCH_H
#define STVM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <stvm.h>

/* Exit statuses (hyperfine/JMH convention). */
#define BENCH_EXIT_OK 0
#define BENCH_EXIT_FAIL 1   /* a benchmark run failed */
#define BENCH_EXIT_USAGE 2  /* unknown flag or bad value */

typedef enum bench_format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_MARKDOWN } bench_format;

/* ---- main.c: option helpers --------------------------------------------------------- */

/* "--name value" or "--name=value": true if argv[*i] is the flag `name`; stores its
 * value and advances *i past it. A missing value ends the tool with a message and
 * status 2. */
bool bench_flag(int argc, char **argv, int *i, const char *name, const char **value);
/* Parse a decimal integer in [lo, hi]; false (and nothing stored) if it is not one. */
bool bench_parse_ll(const char *s, long long lo, long long hi, long long *out);
bool bench_parse_format(const char *s, bench_format *out);
const char *bench_format_name(bench_format f);
/* Print "stvm-bench: <message>" and a hint to stderr; answers BENCH_EXIT_USAGE. */
int bench_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- sys.c: the operating system ------------------------------------------------------ */

int64_t bench_mono_ns(void);             /* CLOCK_MONOTONIC */
int64_t bench_cpu_ns(void);              /* CLOCK_PROCESS_CPUTIME_ID */
/* Pin the calling thread to cpu (>= 0). 0 or -errno. */
int bench_pin_cpu(int cpu);
/* Resident set size in bytes from /proc/self/statm, or 0 if unreadable. */
uint64_t bench_rss_bytes(void);
/* vm.max_map_count, or -1 if unreadable. */
long bench_max_map_count(void);
int bench_ncpu(void);
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

/* ---- stats.c: medians, percentiles, a log-linear histogram --------------------------- */

/* Median of n values (n >= 1); the array is not changed. NaN if n is 0. */
double bench_median(const double *v, size_t n);
double bench_min(const double *v, size_t n);
double bench_max(const double *v, size_t n);

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

/* ---- random.c: Pharo 4/5 Random (Park-Miller minimal standard) -------------------- */

typedef struct pharo_random {
    double seed, a, m, q, r;
} pharo_random;

void pharo_random_init(pharo_random *g, long seed);   /* Random seed: seed */
double pharo_random_next_value(const pharo_random *g); /* Random>>nextValue */
double pharo_random_next(pharo_random *g);             /* Random>>next */
long pharo_random_next_int(pharo_random *g, long n);    /* Random>>nextInt: */

#define DELAY_TABLE_SIZE 1000
#define DELAY_SEED 42
#define DELAY_MAX_MS 50
/* DelayBenchmark's table: 1000 draws of nextInt: 50 from Random seed: 42. */
void delay_table_generate(int table[DELAY_TABLE_SIZE]);
/* Check the table against the known first draws and mean (24.686 ms); false and a
 * message on stderr if it differs. */
bool delay_table_verify(const int table[DELAY_TABLE_SIZE]);

/* ---- the commands --------------------------------------------------------------------- */

int micro_main(int argc, char **argv);
int delay_main(int argc, char **argv);

/* ---- delay results (delay.c measures, output.c prints) ------------------------------- */

typedef struct delay_repr {
    const char *name;       /* "ms-smallint31" ... */
    int delay_clock;        /* STVM_DELAY_CLOCK_MS or _US */
    int smallint_bits;      /* 31 or 61 */
} delay_repr;

/* One run: a fresh VM, one representation, one N. Per-delay figures divide by the
 * delays started in the window (EnterCount); counters are differences over the window. */
typedef struct delay_sample {
    uint64_t enter_count;          /* EnterCount at the end of the window: "Count" */
    uint64_t exit_in_window;       /* ExitCount at the end of the window */
    uint64_t exit_count;           /* ExitCount after the drain */
    double delays_per_second;      /* enter_count * 1000 / window_ms */
    double wall_window_ms;         /* measured wall time of the window */
    double cpu_window_ms;          /* process CPU time during the window */
    double cpu_us_per_delay;
    double boxed_per_delay;
    double large_ops_per_delay;
    double loop_passes_per_delay;
    double clock_reads_per_delay;
    double scheduled_per_delay;
    double expired_per_delay;
    double switches_per_delay;
    double idle_sleeps_per_delay;  /* times the idle process slept in the kernel */
    double timer_fires_per_delay;
    double late_p50_us;            /* from the histogram (clamped at 0) */
    double late_p99_us;
    double late_max_us;
    double late_min_us;            /* signed: negative when a wait ended early */
    uint64_t late_samples;
    uint64_t early_samples;        /* waits that ended before their nominal end */
} delay_sample;

/* The fields of delay_sample that are medians over repetitions, as a table the output
 * code and the median code walk alike. */
typedef struct delay_field {
    const char *name;
    size_t offset;
    bool integer;
} delay_field;
extern const delay_field delay_fields[];
extern const size_t delay_nfields;
double delay_field_get(const delay_sample *s, const delay_field *f);
void delay_field_set(delay_sample *s, const delay_field *f, double v);

typedef struct delay_cell {
    int repr;                   /* index into the run's representations */
    long n;                     /* concurrency */
    int nsamples;
    delay_sample *samples;      /* repeat of them */
    delay_sample median;
    bool failed;
    char error[400];
} delay_cell;

typedef struct delay_report {
    const delay_repr *reprs;    /* in the order asked for; the first is 100% */
    int nreprs;
    const long *ns;
    int nns;
    delay_cell *cells;          /* nns * nreprs, cell (ni, ri) at ni * nreprs + ri */
    int repeat;
    int window_ms;
    bool sim;
    int cpu;
    double table_mean_ms;
} delay_report;

void delay_print_text(FILE *f, const delay_report *r);
void delay_print_csv(FILE *f, const delay_report *r);
void delay_print_json(FILE *f, const delay_report *r);
void delay_print_markdown(FILE *f, const delay_report *r);
/* Write FILE's .gp and .dat siblings and run gnuplot to make FILE (a PNG). 0 or -1. */
int delay_plot(const char *png, const delay_report *r);

/* ---- output helpers ------------------------------------------------------------------- */

/* A JSON string literal (quoted, escaped). */
void bench_json_string(FILE *f, const char *s);
/* A JSON number (null for NaN or infinity). */
void bench_json_number(FILE *f, double v);
/* The shared "context" object of the JSON documents (no trailing comma). */
void bench_json_context(FILE *f, const char *indent, const char *clock, int cpu);

#endif
