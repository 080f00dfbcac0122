/*
 * stvm-bench io: the results (what one cell measured; one row per case and idle mode,
 * and one for the OS-thread reference), the one list of figures that the CSV columns and the JSON keys both
 * walk, and the targets.
 */
#ifndef STVM_BENCH_IO_REPORT_H
#define STVM_BENCH_IO_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IO_MAX_REPEAT 100
#define IO_MAX_ROWS 16
#define IO_TARGET_CONNECTIONS 10000

/* What one timed stretch cost: wall and process CPU time, the VM's counters that tell
 * how it waited (differences over the stretch; all zero where no VM took part), and the
 * OS's context switches of every thread of the process (getrusage). */
typedef struct io_counts {
    long long round_trips;          /* timed round trips (messages echoed for many) */
    int64_t wall_ns, cpu_ns;
    uint64_t os_sleeps, os_slept_us;
    uint64_t wakeups_timer, wakeups_io, wakeups_external, wakeups_relinquish;
    uint64_t io_polls_busy, fds_ready, io_signals_unwaited;
    uint64_t socket_reads_blocked, timed_waits, context_switches;
    long long voluntary_switches, involuntary_switches;
    bool cut_short;                 /* the time limit ended it before its round trips */
} io_counts;

/* One process of the many case (the server's or the clients'), before the first
 * connection and with all of them open. */
typedef struct io_many_side {
    uint64_t rss_before, rss_after; /* bytes, /proc/self/statm */
    uint64_t live_before, live_after; /* its VM's bytes_live */
} io_many_side;

typedef struct io_many_result {
    long connected;                 /* connections held at the memory reading */
    io_many_side server, client;    /* this process (handlers), the child (clients) */
    io_counts counts;               /* the timed exchanges (round_trips = messages): the
                                       server's wall time; CPU, VM counters and OS
                                       switches of both processes */
} io_many_result;

/* The kinds of row; a figure lists the kinds that have it. */
typedef enum io_case {
    IO_PINGPONG = 1,                /* two green processes of one VM */
    IO_THREAD_PAIR = 2,             /* a green process and an OS thread */
    IO_OS_THREADS = 4,              /* two OS threads, blocking sockets: the reference */
    IO_MANY = 8,                    /* many connections, an echo server in the VM */
} io_case;
#define IO_VM_ROWS (IO_PINGPONG | IO_THREAD_PAIR | IO_MANY)
#define IO_ALL_ROWS (IO_VM_ROWS | IO_OS_THREADS)
#define IO_PAIRS (IO_PINGPONG | IO_THREAD_PAIR)

const char *io_case_name(io_case c);
const char *io_idle_mode_name(int mode);   /* "poll", "legacy", "spin"; "-" for -1 */

/* Member names are the figures' names in CSV and JSON except where io_fields says
 * otherwise (case_name is "case"). Per-round-trip figures are medians over the
 * repetitions of each repetition's count divided by its round trips; for many, a
 * round trip is one message echoed. */
typedef struct io_row {
    io_case kind;
    char case_name[16];
    char idle_mode[8];
    int mode;                       /* STVM_IDLE_*, -1 for the reference */
    int nsamples;                   /* repetitions that ran */
    io_counts samples[IO_MAX_REPEAT];
    io_many_result many[IO_MAX_REPEAT];
    double us_per_round_trip_samples[IO_MAX_REPEAT];
    double cpu_us_per_round_trip_samples[IO_MAX_REPEAT];
    double us_per_round_trip, us_per_round_trip_min, us_per_round_trip_max;
    double round_trips_per_second, cpu_us_per_round_trip;
    double rate_vs_os_threads;      /* median over repetitions of os us / this us */
    double cpu_vs_os_threads;       /* the same for CPU per round trip */
    double wakeups_per_round_trip;  /* stats.os_sleeps */
    double os_slept_us_per_round_trip;
    double wakeups_io_per_round_trip, wakeups_timer_per_round_trip;
    double wakeups_relinquish_per_round_trip, wakeups_external_per_round_trip;
    double fds_ready_per_round_trip, io_signals_unwaited_per_round_trip;
    double io_polls_busy_per_round_trip, socket_reads_blocked_per_round_trip;
    double timed_waits_per_round_trip, context_switches_per_round_trip;
    double voluntary_switches_per_round_trip, involuntary_switches_per_round_trip;
    long long round_trips;          /* timed per repetition (median) */
    long long cut_short;            /* repetitions the time limit ended early */
    long long connections_asked, connections;
    long long messages_per_connection, message_bytes;
    double messages_per_second;
    double kib_per_connection;      /* RSS growth of both processes / connections */
    double kib_per_end;             /* kib_per_connection / 2: one end, on average */
    double kib_per_server_end;      /* the server process's RSS growth / connections */
    double kib_per_client_end;      /* the client process's */
    double vm_bytes_per_connection; /* bytes_live growth of both VMs / connections */
    long long rss_before_bytes, rss_after_bytes;   /* the server process */
    long long client_rss_before_bytes, client_rss_after_bytes;
    long long repeat;
    char note[400];
} io_row;

typedef struct io_report {
    int repeat;
    long long round_trips;          /* asked per cell */
    double max_seconds;
    int64_t timeout_ms;
    long connections_asked, connections;   /* connections run (fewer: descriptors) */
    int messages, message_bytes;
    int cpu;                        /* -1: not pinned */
    long long nofile_soft, nofile_hard;    /* RLIMIT_NOFILE after raising the soft one */
    io_row rows[IO_MAX_ROWS];
    int nrows;
} io_report;

typedef enum io_kind {
    IO_TEXT,                        /* char[] */
    IO_REAL,                        /* double */
    IO_INTEGER,                     /* long long */
    IO_SAMPLES,                     /* double[nsamples] */
} io_kind;

typedef struct io_field {
    const char *name;
    io_kind kind;
    size_t offset;                  /* into io_row */
    unsigned rows;                  /* io_case bits of the rows that have it */
} io_field;
extern const io_field io_fields[];
extern const size_t io_nfields;

/* False where the row has no such figure or it is not a number. */
bool io_field_present(const io_row *r, const io_field *f);
double io_field_number(const io_row *r, const io_field *f);
const char *io_field_text(const io_row *r, const io_field *f);
const double *io_field_samples(const io_row *r, const io_field *f, int *n);
const io_field *io_field_named(const char *name);

typedef struct io_target {
    const char *field;              /* an io_fields name */
    io_case kind;                   /* judged on the row of this case ... */
    int mode;                       /* ... and idle mode */
    bool at_least;                  /* met when >= limit (else <= limit) */
    double limit;
    const char *unit;
    int decimals;                   /* of the measured figure, for people */
    const char *label;
} io_target;
extern const io_target io_targets[];
extern const size_t io_ntargets;

/* The row a target is judged on, or NULL when it did not run. */
const io_row *io_target_row(const io_report *r, const io_target *t);
/* The judged figure (NaN if not measured); *met is "met", "MISSED", "not measured" or
 * "not judged" (fewer connections asked than the target's). Judged on the figure as
 * printed with t->decimals. */
double io_target_measured(const io_report *r, const io_target *t, const char **met);

/* Medians, extremes and ratios from the samples; the reference row (if any) first. */
void io_report_summarise(io_report *r);
const io_row *io_reference_row(const io_report *r);

#endif
