/*
 * stvm-bench ffi: what calling C costs, and what it does to scheduling (the cases are in
 * ffi_command's description and the results' note). Within a repetition every case runs
 * once, one after the other, so that noise hits them alike; figures are medians over
 * the repetitions and ratios pair each repetition with its reference.
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
    BENCH_INT("repeat", "K", "5", 1, 100, ffi_opts, repeat,
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

/* Each shape's metrics from ffi_sample, in the records' order; the first is the case's
 * figure (judged, compared, and the gbench view's time but the ticker's), after which
 * comes the ratio when the case has one. */
#define CALL (1u << SHAPE_CALL)
#define TRIP (1u << SHAPE_ROUND_TRIP)
#define TICK (1u << SHAPE_TICKER)
static const struct {
    unsigned shapes;
    const char *name, *unit;
    bench_better better;
    int decimals;
    size_t offset;
} metrics[] = {
    {CALL, "ns_per_call", "ns", BENCH_BETTER_LOWER, 1, offsetof(ffi_sample, value)},
    {TRIP, "us_per_round_trip", "us", BENCH_BETTER_LOWER, 1, offsetof(ffi_sample, value)},
    {TICK, "ticks_kept_pct", "%", BENCH_BETTER_HIGHER, 1, offsetof(ffi_sample, value)},
    {TRIP, "p99_us", "us", BENCH_BETTER_LOWER, 1, offsetof(ffi_sample, p99)},
    {TICK, "ticks", "", BENCH_BETTER_HIGHER, 0, offsetof(ffi_sample, ticks)},
    {TICK, "periods", "", BENCH_BETTER_NONE, 0, offsetof(ffi_sample, periods)},
    {TICK, "ticks_lost", "", BENCH_BETTER_LOWER, 0, offsetof(ffi_sample, ticks_lost)},
    {CALL | TRIP, "count", "", BENCH_BETTER_NONE, 0, offsetof(ffi_sample, count)},
};
#define NMETRICS ((int)(sizeof metrics / sizeof metrics[0]))
#define SELECTED(o, c) (((o)->cases >> (c)) & 1u)

/* A record per case asked, without samples yet. */
static void add_records(const ffi_opts *o, bench_results *r)
{
    for (int c = 0; c < FFI_NCASES; c++) {
        if (!SELECTED(o, c))
            continue;
        bench_record *rec = bench_record_add(r, case_words[c]);
        bench_param_add(rec, "runner", "%s", cases[c].runner);
        bench_param_add(rec, "bits", "%d", cases[c].bits);
        bool ratio = cases[c].versus != FFI_NCASES && SELECTED(o, cases[c].versus);
        if (ratio)
            bench_param_add(rec, "versus", "%s", case_words[cases[c].versus]);
        for (int m = 0; m < NMETRICS; m++) {
            if (!(metrics[m].shapes & (1u << cases[c].shape)))
                continue;
            int i = bench_metric_add(rec, metrics[m].name, metrics[m].unit, metrics[m].better,
                                     metrics[m].decimals, NULL, 0);
            if (i == 0 && cases[c].shape != SHAPE_TICKER)
                rec->gbench_real = i;
            if (i == 0 && ratio)
                bench_metric_add(rec, "ratio", "x", BENCH_BETTER_LOWER, 2, NULL, 0);
        }
    }
}

/* Repetition k of case c into its record; a failure is kept in the record's note and
 * ends the case (a case with no sample fails). */
static bool run_cell(const ffi_params *p, bench_record *rec, ffi_case c, int k)
{
    ffi_sample s;
    char why[200] = "";
    bench_watchdog(600);
    int err = ffi_measure(p, c, &s, why, sizeof why);
    bench_watchdog(0);
    if (err) {
        bench_record_fail(rec, k ? BENCH_OK : BENCH_FAILED, "repetition %d failed: %s", k + 1,
                          why);
        fprintf(stderr, "stvm-bench ffi: %s: %s\n", case_words[c], rec->note);
        return false;
    }
    for (int m = 0; m < NMETRICS; m++)
        if (metrics[m].shapes & (1u << cases[c].shape))
            bench_metric_push(bench_metric_find(rec, metrics[m].name),
                              *(const double *)((const char *)&s + metrics[m].offset));
    return true;
}

/* Each repetition's figure over its reference's in the same repetition. */
static void add_ratios(bench_results *r)
{
    for (int i = 0; i < r->nrecords; i++) {
        bench_record *rec = &r->records[i];
        bench_metric *ratio = bench_metric_find(rec, "ratio");
        const char *versus = bench_param_find(rec, "versus");
        const bench_metric *a = &rec->metrics[0];
        const bench_metric *b = versus ? &bench_record_select(r, versus)->metrics[0] : NULL;
        for (int k = 0; ratio && k < a->nsamples && k < b->nsamples; k++)
            bench_metric_push(ratio, a->samples[k] / b->samples[k]);
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
    bench_results_note(r,
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
             o->spin_us);
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
    bench_results r;
    bench_results_init(&r, "ffi");
    add_records(&o, &r);
    rc = BENCH_EXIT_OK;
    int total = __builtin_popcount(o.cases) * (int)o.repeat, done = 0;
    for (int k = 0; k < o.repeat; k++) {
        for (int c = 0; c < FFI_NCASES; c++) {
            if (!SELECTED(&o, c))
                continue;
            bench_record *rec = bench_record_select(&r, case_words[c]);
            bool ok = !*rec->note && run_cell(&p, rec, (ffi_case)c, k);
            rc = *rec->note ? BENCH_EXIT_FAIL : rc;
            bench_progress_line(&inv, ++done, total, "%s rep %d/%lld: %.1f %s", case_words[c],
                                k + 1, o.repeat, ok ? rec->metrics[0].samples[k] : NAN,
                                rec->metrics[0].unit);
        }
    }
    add_ratios(&r);
    describe(&r, &o);
    add_targets(&r);
    if (bench_output(&r, &inv) != BENCH_EXIT_OK)
        rc = BENCH_EXIT_FAIL;
    bench_results_free(&r);
    return rc;
}
