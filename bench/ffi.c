/*
 * stvm-bench ffi: what calling C costs, and what it does to scheduling.
 *
 *  - same-thread callouts of int64_t add(int64_t, int64_t), oops in and out, on 61- and
 *    31-bit VMs (and with boxed values), against a direct C call and a bare ffi_call;
 *  - a callback into the VM from C on the VM's thread, per callback;
 *  - round trips of threaded callouts and of callbacks from another thread, against a
 *    sem_t round trip between two threads;
 *  - a ticker's ticks while a process makes blocking calls on the VM's thread or on a
 *    worker.
 * Within a repetition every case runs once, one after the other, so that noise hits them
 * alike; figures are medians over the repetitions and ratios pair each repetition with
 * its reference.
 */
#include "bench.h"
#include "ffi_measure.h"
#include "ffi_render.h"
#include "ffi_report.h"

#include <stdlib.h>
#include <string.h>

typedef struct ffi_opts {
    int repeat;
    ffi_params p;
    int cpu;
    bench_format format;
    long cases;                 /* bits (1 << ffi_case) of the cases to run */
    bench_trace trace;
} ffi_opts;

/* --case's words, one per case in ffi_case's order. */
static const char *const case_words[FFI_NCASES] = {
    "direct", "ffi_call", "callout-61", "callout-31", "callout-boxed", "callback-nested",
    "pthread-sem", "threaded", "threaded-nospin", "callback-queued", "callback-queued-nospin",
    "ticker-same", "ticker-threaded"};
/* The cases without a VM (nothing to trace). */
#define NO_VM ((1L << FFI_DIRECT) | (1L << FFI_BARE) | (1L << FFI_PTHREAD))

static void ffi_help(FILE *f)
{
    fprintf(f,
            "usage: stvm-bench ffi [OPTIONS]\n"
            "  --repeat K            repetitions, medians reported (default 5)\n"
            "  --calls N             same-thread calls and nested callbacks per repetition\n"
            "                        (default 2000000)\n"
            "  --round-trips N       threaded calls, queued callbacks and pthread hand-offs\n"
            "                        per repetition (default 20000)\n"
            "  --blocking-calls N    the ticker's blocking calls (default 100)\n"
            "  --block-ms M          each blocking call's usleep in ms (default 10)\n"
            "  --workers W           config.ffi_workers (default 2)\n"
            "  --spin-us S           config.ffi_spin_us of the rows that spin (default 50;\n"
            "                        the nospin rows run with 0)\n"
            "  --cpu N               pin the VM's thread to CPU N (default -1: not pinned;\n"
            "                        workers and other threads are never pinned)\n"
            "  --format F            table (default), csv, json or markdown\n"
            "  --case LIST           the cases to run (default all): direct, ffi_call,\n"
            "                        callout-61, callout-31, callout-boxed, callback-nested,\n"
            "                        pthread-sem, threaded, threaded-nospin, callback-queued,\n"
            "                        callback-queued-nospin, ticker-same, ticker-threaded\n");
    bench_trace_help(f, 24, "one case's VM (the caller's: callouts, callbacks, the\n"
                            "ticker); direct, ffi_call and pthread-sem have no VM");
}

static int parse_option(int argc, char **argv, int *i, ffi_opts *o)
{
    if (!strcmp(argv[*i], "--help") || !strcmp(argv[*i], "-h")) {
        ffi_help(stdout);
        return BENCH_EXIT_OK;
    }
    long long n = 0;
    const char *v = NULL;
    if (bench_flag(argc, argv, i, "--case", &v)) {
        o->cases = bench_parse_names(v, case_words, FFI_NCASES);
        if (o->cases < 0)
            return bench_usage_error("ffi ", "--case: '%s' is not a list of cases (see "
                                             "--help)", v ? v : "");
        return BENCH_NEXT;
    }
    int rc = bench_trace_option(argc, argv, i, "ffi ", &o->trace);
    if (rc != BENCH_NOT_MINE)
        return rc;
#define COUNT(flag, lo, hi, dest)                                                       \
    rc = bench_count_option(argc, argv, i, "ffi ", flag, lo, hi, NULL, &n);             \
    if (rc != BENCH_NOT_MINE) {                                                         \
        dest = n;                                                                       \
        return rc;                                                                      \
    }
    COUNT("--repeat", 1, FFI_MAX_REPEAT, o->repeat)
    COUNT("--calls", 1000, 1000000000LL, o->p.calls)
    COUNT("--round-trips", 100, 100000000LL, o->p.round_trips)
    COUNT("--blocking-calls", 1, 100000, o->p.blocking_calls)
    COUNT("--block-ms", 1, 1000, o->p.block_ms)
    COUNT("--workers", 1, 64, o->p.workers)
    COUNT("--spin-us", 0, 10000, o->p.spin_us)
#undef COUNT
    rc = bench_common_option(argc, argv, i, "ffi ", &o->cpu, &o->format);
    if (rc == BENCH_NOT_MINE)
        return bench_usage_error("ffi ", "unknown option '%s'", argv[*i]);
    return rc;
}

/* Every option, then the one-cell rule of --trace: BENCH_NEXT or an exit status. */
static int parse_args(int argc, char **argv, ffi_opts *o)
{
    int rc = BENCH_NEXT;
    for (int i = 1; i < argc && rc == BENCH_NEXT;)
        rc = parse_option(argc, argv, &i, o);
    if (rc != BENCH_NEXT)
        return rc;
    return bench_trace_one_cell(&o->trace, "ffi ",
                                (long)__builtin_popcountl(o->cases & ~NO_VM) * o->repeat,
                                "give --case one case with a VM and --repeat 1");
}

/* ---- the rows and the runs ------------------------------------------------------------- */

static const struct {
    const char *runner;
    const char *unit;
    int bits;
} row_shape[FFI_NCASES] = {
    [FFI_DIRECT] = {"C pointer", "ns", 0},       [FFI_BARE] = {"libffi", "ns", 0},
    [FFI_CALLOUT_61] = {"same-thread", "ns", 61}, [FFI_CALLOUT_31] = {"same-thread", "ns", 31},
    [FFI_CALLOUT_31_BOXED] = {"same-thread", "ns", 31},
    [FFI_CALLBACK_NESTED] = {"nested", "ns", 61}, [FFI_PTHREAD] = {"2 threads", "us", 0},
    [FFI_THREADED] = {"worker", "us", 61},
    [FFI_THREADED_NOSPIN] = {"worker,nospin", "us", 61},
    [FFI_CALLBACK_QUEUED] = {"queued", "us", 61},
    [FFI_CALLBACK_QUEUED_NOSPIN] = {"queued,nospin", "us", 61},
    [FFI_TICKER_SAME] = {"same-thread", "%", 61}, [FFI_TICKER_THREADED] = {"worker", "%", 61},
};

static void make_rows(ffi_report *rep, long cases)
{
    for (int c = 0; c < FFI_NCASES; c++) {
        if (!(cases & (1L << c)))
            continue;
        ffi_row *row = &rep->rows[rep->nrows++];
        row->kind = (ffi_case)c;
        snprintf(row->case_name, sizeof row->case_name, "%s", ffi_case_name(row->kind));
        snprintf(row->runner, sizeof row->runner, "%s", row_shape[c].runner);
        snprintf(row->unit, sizeof row->unit, "%s", row_shape[c].unit);
        row->bits = row_shape[c].bits;
    }
}

static int measure(const ffi_params *p, ffi_case c, ffi_sample *s, char *why, size_t n)
{
    switch (c) {
    case FFI_DIRECT: return ffi_time_direct(p, s, why, n);
    case FFI_BARE: return ffi_time_bare(p, s, why, n);
    case FFI_CALLOUT_61: return ffi_time_callout(p, 61, false, s, why, n);
    case FFI_CALLOUT_31: return ffi_time_callout(p, 31, false, s, why, n);
    case FFI_CALLOUT_31_BOXED: return ffi_time_callout(p, 31, true, s, why, n);
    case FFI_CALLBACK_NESTED: return ffi_time_callback_nested(p, s, why, n);
    case FFI_PTHREAD: return ffi_time_pthread(p, s, why, n);
    case FFI_THREADED: return ffi_time_threaded(p, true, s, why, n);
    case FFI_THREADED_NOSPIN: return ffi_time_threaded(p, false, s, why, n);
    case FFI_CALLBACK_QUEUED: return ffi_time_callback_queued(p, true, s, why, n);
    case FFI_CALLBACK_QUEUED_NOSPIN: return ffi_time_callback_queued(p, false, s, why, n);
    case FFI_TICKER_SAME: return ffi_ticker(p, false, s, why, n);
    default: return ffi_ticker(p, true, s, why, n);
    }
}

/* One case of repetition k; a failure is kept in the row's note and ends the row. */
static bool run_cell(const ffi_opts *o, ffi_row *row, int k)
{
    if (row->note[0])
        return false;
    if (bench_progress_on())
        bench_progress("[%d/%d] %s %s", k + 1, o->repeat, row->case_name, row->runner);
    char why[200] = "";
    bench_watchdog(600);
    int err = measure(&o->p, row->kind, &row->runs[k], why, sizeof why);
    bench_watchdog(0);
    if (err) {
        snprintf(row->note, sizeof row->note, "repetition %d failed: %s", k + 1, why);
        fprintf(stderr, "%sstvm-bench: ffi %s %s: %s\n", bench_progress_on() ? "\n" : "",
                row->case_name, row->runner, row->note);
        return false;
    }
    row->nsamples = k + 1;
    return true;
}

int ffi_main(int argc, char **argv)
{
    ffi_opts o = {.repeat = 5, .cpu = -1, .format = FMT_TABLE,
                  .p = {.calls = 2000000, .round_trips = 20000, .blocking_calls = 100,
                        .block_ms = 10, .workers = 2, .spin_us = 50},
                  .cases = (1L << FFI_NCASES) - 1, .trace.events = BENCH_TRACE_EVENTS};
    o.p.trace = &o.trace;
    int rc = parse_args(argc, argv, &o);
    if (rc != BENCH_NEXT)
        return rc;
    if ((rc = bench_pin_option(o.cpu)) != BENCH_EXIT_OK)
        return rc;
    ffi_report *rep = calloc(1, sizeof *rep);
    if (!rep) {
        fprintf(stderr, "stvm-bench: ffi: out of memory\n");
        return BENCH_EXIT_FAIL;
    }
    *rep = (ffi_report){.repeat = o.repeat, .calls = o.p.calls, .round_trips = o.p.round_trips,
                        .blocking_calls = o.p.blocking_calls, .block_ms = o.p.block_ms,
                        .cpu = o.cpu, .workers = o.p.workers, .spin_us = o.p.spin_us};
    make_rows(rep, o.cases);
    rc = BENCH_EXIT_OK;
    for (int k = 0; k < o.repeat; k++)
        for (int i = 0; i < rep->nrows; i++)
            if (!run_cell(&o, &rep->rows[i], k))
                rc = BENCH_EXIT_FAIL;
    if (bench_progress_on())
        bench_progress("%d repetitions done\n", o.repeat);
    ffi_report_summarise(rep);
    if (o.format == FMT_CSV)
        ffi_print_csv(stdout, rep);
    else if (o.format == FMT_JSON)
        ffi_print_json(stdout, rep);
    else
        ffi_print_table(stdout, rep, o.format == FMT_MARKDOWN);
    free(rep);
    return rc;
}
