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
 * its reference. One record per case; the core shows them.
 */
#include "bench.h"
#include "ffi_measure.h"
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What the option table fills. */
typedef struct ffi_opts {
    long long repeat, calls, round_trips, blocking_calls, block_ms, workers, spin_us;
    unsigned cases;                 /* bits (1 << ffi_case) of the cases to run */
} ffi_opts;

/* --case's words, one per case in ffi_case's order: the records' names. */
static const char *const case_words[FFI_NCASES + 1] = {
    "direct", "ffi_call", "callout-61", "callout-31", "callout-boxed", "callback-nested",
    "pthread-sem", "threaded", "threaded-nospin", "callback-queued", "callback-queued-nospin",
    "ticker-same", "ticker-threaded", NULL};
/* The cases without a VM (nothing to trace). */
#define NO_VM ((1u << FFI_DIRECT) | (1u << FFI_BARE) | (1u << FFI_PTHREAD))

static const bench_opt ffi_opts_table[] = {
    BENCH_WORDS("case", "direct,ffi_call,callout-61,callout-31,callout-boxed,callback-nested,"
                "pthread-sem,threaded,threaded-nospin,callback-queued,callback-queued-nospin,"
                "ticker-same,ticker-threaded", case_words, ffi_opts, cases,
                "The cases to run; a row whose reference did not run has no ratio, a target "
                "whose row did not run is not measured."),
    BENCH_INT("repeat", "K", "5", 1, FFI_MAX_REPEAT, ffi_opts, repeat,
              "Repetitions; the views show medians and keep every sample."),
    BENCH_INT("calls", "N", "2000000", 1000, 1000000000LL, ffi_opts, calls,
              "Same-thread calls and nested callbacks per repetition."),
    BENCH_INT("round-trips", "N", "20000", 100, 100000000LL, ffi_opts, round_trips,
              "Threaded calls, queued callbacks and pthread hand-offs per repetition."),
    BENCH_INT("blocking-calls", "N", "100", 1, 100000, ffi_opts, blocking_calls,
              "The ticker's blocking calls."),
    BENCH_INT("block-ms", "M", "10", 1, 1000, ffi_opts, block_ms,
              "Each blocking call's usleep in ms."),
    BENCH_INT("workers", "W", "2", 1, 64, ffi_opts, workers, "config.ffi_workers."),
    BENCH_INT("spin-us", "S", "50", 0, 10000, ffi_opts, spin_us,
              "config.ffi_spin_us of the cases that spin (the nospin cases run with 0)."),
};

const bench_command ffi_command = {
    "ffi",
    "C calls through libffi: same-thread callouts against a bare ffi_call, threaded "
    "callouts and callbacks, and a ticker's ticks while blocking calls run",
    "int64_t add(int64_t, int64_t) called directly, through a bare ffi_call and through "
    "stvm_ffi_call from a green process on 61- and 31-bit VMs (and boxed on the 31-bit "
    "one); a nested callback (C to VM to C); a threaded callout's and a queued callback's "
    "round trip, with and without spinning, against a sem_t round trip between two "
    "threads; a ticker at priority 40 while a process at 30 makes blocking usleep calls "
    "on the VM's thread or on a worker.\n\nOne record per case: ns per call, or us per "
    "round trip and its p99, or the share of ticks kept; each compared case's ratio to "
    "its reference (per repetition, then the median); the targets.",
    ffi_opts_table, (int)(sizeof ffi_opts_table / sizeof ffi_opts_table[0]),
    "one case's VM (the caller's: callouts, callbacks, the ticker); direct, ffi_call and "
    "pthread-sem have no VM"};

/* ---- the cases ----------------------------------------------------------------------- */

typedef enum ffi_shape { SHAPE_CALL, SHAPE_ROUND_TRIP, SHAPE_TICKER } ffi_shape;

static const struct {
    const char *runner;
    int bits;
    ffi_shape shape;
    ffi_case versus;                /* the reference, FFI_NCASES for none */
} cases[FFI_NCASES] = {
    [FFI_DIRECT] = {"C pointer", 0, SHAPE_CALL, FFI_BARE},
    [FFI_BARE] = {"libffi", 0, SHAPE_CALL, FFI_NCASES},
    [FFI_CALLOUT_61] = {"same-thread", 61, SHAPE_CALL, FFI_BARE},
    [FFI_CALLOUT_31] = {"same-thread", 31, SHAPE_CALL, FFI_BARE},
    [FFI_CALLOUT_31_BOXED] = {"same-thread", 31, SHAPE_CALL, FFI_BARE},
    [FFI_CALLBACK_NESTED] = {"nested", 61, SHAPE_CALL, FFI_NCASES},
    [FFI_PTHREAD] = {"2 threads", 0, SHAPE_ROUND_TRIP, FFI_NCASES},
    [FFI_THREADED] = {"worker", 61, SHAPE_ROUND_TRIP, FFI_PTHREAD},
    [FFI_THREADED_NOSPIN] = {"worker,nospin", 61, SHAPE_ROUND_TRIP, FFI_PTHREAD},
    [FFI_CALLBACK_QUEUED] = {"queued", 61, SHAPE_ROUND_TRIP, FFI_PTHREAD},
    [FFI_CALLBACK_QUEUED_NOSPIN] = {"queued,nospin", 61, SHAPE_ROUND_TRIP, FFI_PTHREAD},
    [FFI_TICKER_SAME] = {"same-thread", 61, SHAPE_TICKER, FFI_NCASES},
    [FFI_TICKER_THREADED] = {"worker", 61, SHAPE_TICKER, FFI_NCASES},
};

/* The metric each shape is judged and compared on, and its unit. */
static const struct {
    const char *metric, *unit;
    bench_better better;
} shape_metric[] = {
    [SHAPE_CALL] = {"ns_per_call", "ns", BENCH_BETTER_LOWER},
    [SHAPE_ROUND_TRIP] = {"us_per_round_trip", "us", BENCH_BETTER_LOWER},
    [SHAPE_TICKER] = {"ticks_kept_pct", "%", BENCH_BETTER_HIGHER},
};

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

/* Every repetition's samples of each case, and why a case stopped. */
typedef struct ffi_sweep {
    ffi_sample runs[FFI_NCASES][FFI_MAX_REPEAT];
    int nsamples[FFI_NCASES];
    char note[FFI_NCASES][240];
} ffi_sweep;

/* One case of repetition k; a failure is kept in the case's note and ends the case. */
static bool run_cell(const ffi_params *p, ffi_sweep *s, ffi_case c, int k)
{
    char why[200] = "";
    bench_watchdog(600);
    int err = measure(p, c, &s->runs[c][k], why, sizeof why);
    bench_watchdog(0);
    if (err) {
        snprintf(s->note[c], sizeof s->note[c], "repetition %d failed: %s", k + 1, why);
        fprintf(stderr, "stvm-bench ffi: %s: %s\n", case_words[c], s->note[c]);
        return false;
    }
    s->nsamples[c] = k + 1;
    return true;
}

/* A record per case that ran: its figure per repetition, and what goes with it. */
static void fill_records(const ffi_opts *o, const ffi_sweep *s, bench_results *r)
{
    double v[FFI_MAX_REPEAT];
    for (int c = 0; c < FFI_NCASES; c++) {
        if (!(o->cases & (1u << c)))
            continue;
        int n = s->nsamples[c];
        ffi_shape shape = cases[c].shape;
        bench_record *rec = bench_record_add(r, case_words[c]);
        bench_param_add(rec, "runner", "%s", cases[c].runner);
        bench_param_add(rec, "bits", "%d", cases[c].bits);
        for (int k = 0; k < n; k++)
            v[k] = s->runs[c][k].value;
        int main_metric = bench_metric_add(rec, shape_metric[shape].metric,
                                           shape_metric[shape].unit,
                                           shape_metric[shape].better, 1, v, n);
        if (shape != SHAPE_TICKER)
            rec->gbench_real = main_metric;
        ffi_case ref = cases[c].versus;
        if (ref != FFI_NCASES && (o->cases & (1u << ref))) {
            int m = 0;
            for (; m < n && m < s->nsamples[ref]; m++)
                v[m] = s->runs[c][m].value / s->runs[ref][m].value;
            bench_param_add(rec, "versus", "%s", case_words[ref]);
            bench_metric_add(rec, "ratio", "x", BENCH_BETTER_LOWER, 2, v, m);
        }
        if (shape == SHAPE_ROUND_TRIP) {
            for (int k = 0; k < n; k++)
                v[k] = s->runs[c][k].p99;
            bench_metric_add(rec, "p99_us", "us", BENCH_BETTER_LOWER, 1, v, n);
        }
        if (shape == SHAPE_TICKER) {
            for (int k = 0; k < n; k++)
                v[k] = (double)s->runs[c][k].ticks;
            bench_metric_add(rec, "ticks", "", BENCH_BETTER_HIGHER, 0, v, n);
            for (int k = 0; k < n; k++)
                v[k] = (double)s->runs[c][k].periods;
            bench_metric_add(rec, "periods", "", BENCH_BETTER_NONE, 0, v, n);
            for (int k = 0; k < n; k++)
                v[k] = (double)(s->runs[c][k].periods - s->runs[c][k].ticks);
            bench_metric_add(rec, "ticks_lost", "", BENCH_BETTER_LOWER, 0, v, n);
        } else {
            for (int k = 0; k < n; k++)
                v[k] = (double)s->runs[c][k].count;
            bench_metric_add(rec, "count", "", BENCH_BETTER_NONE, 0, v, n);
        }
        if (!n)
            bench_record_fail(rec, BENCH_FAILED, "%s", s->note[c]);
        else if (*s->note[c])
            bench_record_note(rec, "%s", s->note[c]);
    }
}

/* The targets, side by side in this run (a ratio target against the bare
 * ffi_call's figure in the same run). */
static void add_targets(bench_results *r)
{
    bench_target_add(r, "same-thread callout at most 2x a bare ffi_call, 61-bit VM",
                     BENCH_TARGET_AT_MOST, "callout-61", "ns_per_call", 2.0, "ffi_call",
                     "ns_per_call");
    bench_target_add(r, "same-thread callout at most 2x a bare ffi_call, 31-bit VM",
                     BENCH_TARGET_AT_MOST, "callout-31", "ns_per_call", 2.0, "ffi_call",
                     "ns_per_call");
    bench_target_add(r, "threaded callout, median round trip at most 15 us",
                     BENCH_TARGET_AT_MOST, "threaded", "us_per_round_trip", 15.0, NULL, NULL);
    bench_target_add(r, "ticks kept with threaded blocking calls at least 95%",
                     BENCH_TARGET_AT_LEAST, "ticker-threaded", "ticks_kept_pct", 95.0, NULL,
                     NULL);
    bench_judge(r);
}

/* What each case is, as the results' note. */
static void describe(bench_results *r, const ffi_opts *o)
{
    free(r->note);
    if (asprintf(&r->note,
             "%lld same-thread calls and nested callbacks, %lld round trips, %lld blocking "
             "calls of %lld ms per repetition; %lld FFI workers, ffi_spin_us %lld. direct, "
             "ffi_call, callout: int64_t add(int64_t, int64_t) through a C function pointer; "
             "through ffi_call with its arguments already C values; through stvm_ffi_call "
             "from a green process, oops in and out (callout-boxed: 2^40 + 1 on a 31-bit VM, "
             "arguments and result boxed, the result released). ratio: the median over "
             "repetitions of this case / its versus, each repetition against the reference "
             "measured moments before. callback-nested: a C loop called once through the FFI "
             "calls an echo callback on the VM's thread; the figure is per callback (C to VM "
             "to C). pthread-sem: a sem_t round trip between two unpinned threads, the "
             "reference for threaded (stvm_ffi_call_threaded of add, one caller, a round trip "
             "from the call to its return) and callback-queued (another OS thread calls the "
             "echo callback, run by the callback process); nospin: config.ffi_spin_us 0, so "
             "that every wait for another thread sleeps in the OS and is woken, as the "
             "reference's do. ticker: a process at 40 wakes at every 1 ms boundary while a "
             "process at 30 makes the blocking calls of usleep on the VM's thread "
             "(ticker-same) or on a worker (ticker-threaded); the figure is the share of the "
             "calls' 1 ms periods in which the ticker ran.",
             o->calls, o->round_trips, o->blocking_calls, o->block_ms, o->workers,
             o->spin_us) < 0) {
        fputs("stvm-bench ffi: out of memory\n", stderr);
        exit(BENCH_EXIT_FAIL);
    }
}

int ffi_main(int argc, char **argv)
{
    ffi_opts o;
    bench_invocation inv;
    int rc = bench_parse(&ffi_command, argc, argv, &o, &inv);
    if (rc != BENCH_GO_ON ||
        (rc = bench_trace_cells(&inv, (long)__builtin_popcount(o.cases & ~NO_VM) * o.repeat,
                                "give --case one case with a VM and --repeat 1")) != BENCH_GO_ON)
        return rc;
    ffi_params p = {.calls = o.calls, .round_trips = o.round_trips,
                    .blocking_calls = (int)o.blocking_calls, .block_ms = (int)o.block_ms,
                    .workers = (int)o.workers, .spin_us = (int)o.spin_us,
                    .trace = &inv.common.trace};
    ffi_sweep *s = calloc(1, sizeof *s);
    if (!s) {
        fputs("stvm-bench ffi: out of memory\n", stderr);
        return BENCH_EXIT_FAIL;
    }
    rc = BENCH_EXIT_OK;
    int total = __builtin_popcount(o.cases) * (int)o.repeat, done = 0;
    for (int k = 0; k < o.repeat; k++) {
        for (int c = 0; c < FFI_NCASES; c++) {
            if (!(o.cases & (1u << c)))
                continue;
            bool ok = !*s->note[c] && run_cell(&p, s, (ffi_case)c, k);
            rc = *s->note[c] ? BENCH_EXIT_FAIL : rc;
            bench_progress_line(&inv, ++done, total, "%s rep %d/%lld: %.1f %s", case_words[c],
                                k + 1, o.repeat, ok ? s->runs[c][k].value : NAN,
                                shape_metric[cases[c].shape].unit);
        }
    }
    bench_results r;
    bench_results_init(&r, "ffi");
    fill_records(&o, s, &r);
    describe(&r, &o);
    add_targets(&r);
    if (bench_output(&r, &inv) != BENCH_EXIT_OK)
        rc = BENCH_EXIT_FAIL;
    bench_results_free(&r);
    free(s);
    return rc;
}
