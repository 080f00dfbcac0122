/*
 * stvm-bench delay: Pharo's DelayBenchmark, the command: its options, the sweep (each run
 * in delay_run.c), a record per (representation, N) and the tables for people. The
 * views, the plot and the report come from the core.
 */
#include "bench.h"
#include "delay_run.h"
#include "random.h"
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SLACK_US 50   /* stvm_config's default timer slack */
#define MAX_SLACKS 8

static const delay_repr known_reprs[] = {
    {"ms-smallint31", STVM_DELAY_CLOCK_MS, 31, DEFAULT_SLACK_US},
    {"us-largeint31", STVM_DELAY_CLOCK_US, 31, DEFAULT_SLACK_US},
    {"us-smallint61", STVM_DELAY_CLOCK_US, 61, DEFAULT_SLACK_US},
    {"ms-smallint61", STVM_DELAY_CLOCK_MS, 61, DEFAULT_SLACK_US},
};
#define NKNOWN ((int)(sizeof known_reprs / sizeof known_reprs[0]))

/* What the option table fills. */
typedef struct delay_opts {
    const char *repr;               /* a TEXT list: its order matters (the first is 100%) */
    bench_ints concurrency;
    int clock;                      /* 0 real, 1 sim */
    long long repeat, window_ms;
    bench_ints slacks;
    bool no_stack_guard;
    const char *sim_cost;
    const char *plot, *report;
} delay_opts;

static const char *const clock_words[] = {"real", "sim", NULL};

static const bench_opt delay_opts_table[] = {
    BENCH_TEXT("repr", "LIST", "ms-smallint31,us-largeint31,us-smallint61", delay_opts, repr,
               "Representations, comma-separated, in the order shown (the first is 100%): "
               "ms-smallint31, us-largeint31, us-smallint61, ms-smallint61."),
    BENCH_INTS("concurrency", "1000..10000:1000", 1, 1000000, delay_opts, concurrency,
               "N, the concurrent delays (worker processes)."),
    BENCH_WORD("clock", "real", clock_words, delay_opts, clock,
               "The wall clock, or simulated time (no waiting: pure CPU cost, counts per "
               "simulated second)."),
    BENCH_INT("repeat", "K", "1", 1, 1000, delay_opts, repeat,
              "Repetitions per cell; the views show medians and keep every sample."),
    BENCH_INT("window-ms", "W", "1000", 1, 3600000, delay_opts, window_ms,
              "The window, and the drain after it, in ms."),
    BENCH_INTS("timer-slack-us", "50", 0, 1000, delay_opts, slacks,
               "The VMs' timer slack in us (at most 8 values); each representation runs at "
               "each."),
    BENCH_TEXT("sim-cost", "MODEL", "none", delay_opts, sim_cost,
               "The simulated clock's modelled CPU cost per counted operation: none; seed1 "
               "(stvm's own relative costs, scaled so that ms-smallint31 peaks where Pharo "
               "2015's did, about 128,500 delays/s); or key=value items in ns per operation "
               "(delay, pass, read, box, liop, switch) and scale, after seed1 to override "
               "it. Workers charge it with stvm_work_us after each wait (bench/delay_cost.h)."),
    BENCH_FLAG("no-stack-guard", delay_opts, no_stack_guard,
               "No guard region below each stack, no overflow check."),
    BENCH_OUTPUT("plot", delay_opts, plot,
                 "Draw delays/s and CPU us per delay against N into this PNG (bench/plots/"
                 "delay.gp; the data beside it as .csv)."),
    BENCH_OUTPUT("report", delay_opts, report, "Write the Markdown report to FILE."),
};

const bench_command delay_command = {
    "delay",
    "Pharo's DelayBenchmark: delays per second against concurrency for each Delay "
    "timestamp representation",
    "1000 durations of 1..50 ms from Random seed: 42 (verified at start-up); N workers at "
    "priority 41 share one index into them and wait on a Delay of each in turn; a "
    "coordinator at 42 opens a window, closes it and drains for as long. Every run has a "
    "fresh VM; representations are interleaved within each N and repetition.\n\nOne record "
    "per (representation, N): delays per second, us and CPU us per delay, boxed "
    "allocations, LargeInteger operations and the scheduler's counters per delay, "
    "lateness p50/p99/max; beside them the seed's lines, a seed-shaped summary and a "
    "per-N table.",
    delay_opts_table, (int)(sizeof delay_opts_table / sizeof delay_opts_table[0]),
    "the run's VM (one --repr, one --concurrency value, one --timer-slack-us value and "
    "--repeat 1)"};

/* ---- the sweep ----------------------------------------------------------------------- */

typedef struct delay_sweep {
    delay_repr reprs[NKNOWN * MAX_SLACKS];   /* each representation at each slack */
    int nreprs;
    const delay_opts *o;
    const bench_invocation *inv;
    const int *table;
    delay_cost cost;                /* --sim-cost */
    bench_results r;                /* cell (ni, ri) is record ni * nreprs + ri */
} delay_sweep;

/* --repr at each --timer-slack-us, the slack in the name when there are several. */
static int parse_reprs(const delay_opts *o, delay_sweep *s)
{
    if (o->slacks.n > MAX_SLACKS)
        return bench_usage(&delay_command, "--timer-slack-us takes at most %d values, not %d",
                           MAX_SLACKS, o->slacks.n);
    char buf[256];
    if (strlen(o->repr) >= sizeof buf)
        return bench_usage(&delay_command, "--repr: the list is too long");
    snprintf(buf, sizeof buf, "%s", o->repr);
    int base[NKNOWN], nbase = 0;
    for (char *rest = buf, *t; (t = strsep(&rest, ",")) != NULL;) {
        int k = NKNOWN;
        while (k-- > 0 && strcmp(t, known_reprs[k].name))
            ;
        if (k < 0)
            return bench_usage(&delay_command, "--repr: unknown representation '%s' (known: "
                               "ms-smallint31, us-largeint31, us-smallint61, ms-smallint61)", t);
        for (int i = 0; i < nbase; i++)
            if (base[i] == k)
                return bench_usage(&delay_command, "--repr: '%s' given twice", t);
        base[nbase++] = k;
    }
    for (int b = 0; b < nbase; b++) {
        for (int k = 0; k < o->slacks.n; k++) {
            delay_repr *v = &s->reprs[s->nreprs++];
            *v = known_reprs[base[b]];
            v->timer_slack_us = (int)o->slacks.v[k];
            if (o->slacks.n > 1)
                snprintf(v->name, sizeof v->name, "%.20s@slack%d", known_reprs[base[b]].name,
                         v->timer_slack_us);
        }
    }
    char why[200];
    if (!delay_cost_parse(o->sim_cost, &s->cost, why, sizeof why))
        return bench_usage(&delay_command, "--sim-cost: %s", why);
    if (s->cost.on && o->clock != 1)
        return bench_usage(&delay_command, "--sim-cost charges simulated time: give --clock "
                           "sim too");
    return BENCH_GO_ON;
}

/* A record per cell, in (N, representation) order, with every figure and no sample. */
static void add_records(delay_sweep *s)
{
    for (int ni = 0; ni < s->o->concurrency.n; ni++) {
        for (int ri = 0; ri < s->nreprs; ri++) {
            const delay_repr *rp = &s->reprs[ri];
            bench_record *rec = bench_record_add(&s->r, rp->name);
            bench_param_add(rec, "concurrency", "%lld", s->o->concurrency.v[ni]);
            bench_param_add(rec, "delay_clock", "%s",
                            rp->delay_clock == STVM_DELAY_CLOCK_MS ? "ms" : "us");
            bench_param_add(rec, "smallint_bits", "%d", rp->smallint_bits);
            bench_param_add(rec, "timer_slack_us", "%d", rp->timer_slack_us);
            bench_param_add(rec, "window_ms", "%lld", s->o->window_ms);
#define F(name, unit, better, decimals) \
    bench_metric_add(rec, #name, unit, BENCH_BETTER_##better, decimals, NULL, 0);
            DELAY_FIGURES(F)
#undef F
            rec->gbench_real = DELAY_us_per_delay;
            rec->gbench_cpu = DELAY_cpu_us_per_delay;
        }
    }
}

/* Repetition k of cell (ni, ri) into its record; a failure is kept in the record. */
static bool run_cell(delay_sweep *s, bench_record *rec, int ni, int ri, int k)
{
    delay_run_params p = {.repr = &s->reprs[ri], .n = (long)s->o->concurrency.v[ni],
                          .table = s->table, .window_ms = (int)s->o->window_ms,
                          .sim = s->o->clock == 1, .cost = &s->cost,
                          .stack_guard = !s->o->no_stack_guard,
                          .trace = &s->inv->common.trace};
    double out[DELAY_NFIGURES];
    char why[300] = "";
    if (delay_run_one(&p, out, why, sizeof why) == STVM_OK) {
        for (int f = 0; f < DELAY_NFIGURES; f++)
            bench_metric_push(&rec->metrics[f], out[f]);
        return true;
    }
    fprintf(stderr, "stvm-bench delay: %s N=%ld rep %d failed: %s\n", p.repr->name, p.n,
            k + 1, why);
    if (k == 0)
        bench_record_fail(rec, BENCH_FAILED, "repetition 1 failed: %s", why);
    else
        bench_record_note(rec, "%d of %lld repetitions ran; repetition %d failed: %s", k,
                          s->o->repeat, k + 1, why);
    return false;
}

/* Representations are interleaved within each N and repetition, so drifting noise
 * (frequency, other load) hits them alike; a failed cell skips its later repetitions.
 * Answers the number of failed runs. */
static int sweep(delay_sweep *s)
{
    const delay_opts *o = s->o;
    int total = o->concurrency.n * (int)o->repeat * s->nreprs, done = 0, failed = 0;
    for (int ni = 0; ni < o->concurrency.n; ni++) {
        for (int k = 0; k < o->repeat; k++) {
            for (int ri = 0; ri < s->nreprs; ri++) {
                bench_record *rec = &s->r.records[ni * s->nreprs + ri];
                bool ok = rec->status == BENCH_OK && !*rec->note;
                if (ok && !(ok = run_cell(s, rec, ni, ri, k)))
                    failed++;
                bench_progress_line(s->inv, ++done, total, "%s N=%lld rep %d/%lld: %.0f "
                                    "delays/s", s->reprs[ri].name, o->concurrency.v[ni], k + 1,
                                    o->repeat, ok ? rec->metrics[0].samples[k] : NAN);
            }
        }
    }
    return failed;
}

/* ---- the tables for people ----------------------------------------------------------- */

static double med(const bench_record *rec, const char *metric)
{
    const bench_metric *m = bench_metric_find(rec, metric);
    return m && m->nsamples ? m->median : NAN;
}

/* The record of representation ri with the highest median rate, or NULL. */
static const bench_record *peak(const bench_results *r, int nreprs, int ri)
{
    const bench_record *best = NULL;
    for (int i = ri; i < r->nrecords; i += nreprs)
        if (med(&r->records[i], "delays_per_second") >   /* false for NaN */
            (best ? med(best, "delays_per_second") : -INFINITY))
            best = &r->records[i];
    return best;
}

static void fmt(char *b, size_t n, double v, int decimals, const char *suffix)
{
    if (isfinite(v))
        snprintf(b, n, "%.*f%s", decimals, v, suffix);
    else
        snprintf(b, n, "-");
}

/* A metric's median with the metric's decimals, "-" when not measured. */
static void median_cell(char *b, size_t n, const bench_record *rec, const char *metric)
{
    const bench_metric *m = rec ? bench_metric_find(rec, metric) : NULL;
    fmt(b, n, m && m->nsamples ? m->median : NAN, m ? m->decimals : 0, "");
}

/* The seed-shaped summary: a row per figure (the metric's median at the peak N, or a
 * row below with no metric), a column per representation. */
static const struct {
    const char *label, *metric;
} summary_rows[] = {
    {"delays scheduled per second (peak over N)", "delays_per_second"},
    {"relative performance", NULL}, {"µs per scheduled delay (1e6 / peak)", "us_per_delay"},
    {"relative performance (time)", NULL}, {"peak at N", NULL},
    {"ExitCount at peak N", "exit_count"}, {"CPU µs per delay (at peak N)", "cpu_us_per_delay"},
    {"boxed allocations per delay", "boxed_per_delay"},
    {"LargeInteger ops per delay", "large_ops_per_delay"},
    {"timing loop passes per delay", "timing_loop_passes_per_delay"},
    {"clock reads per delay", "clock_reads_per_delay"},
    {"idle sleeps (kernel waits) per delay", "idle_sleeps_per_delay"},
    {"lateness p50 / p99 / max [µs]", NULL}, {"waits that ended early (ms scheduler)", NULL},
};
#define NSUMMARY ((int)(sizeof summary_rows / sizeof summary_rows[0]))

static void summary_cell(char *b, size_t n, const bench_results *r, int nreprs, int ri, int row)
{
    const bench_record *p = peak(r, nreprs, ri), *p0 = peak(r, nreprs, 0);
    double rate = p ? med(p, "delays_per_second") : NAN;
    double rate0 = p0 ? med(p0, "delays_per_second") : NAN;
    if (summary_rows[row].metric)
        median_cell(b, n, p, summary_rows[row].metric);
    else if (row == 1)
        fmt(b, n, 100.0 * rate / rate0, 0, "%");
    else if (row == 3)
        fmt(b, n, 100.0 * rate0 / rate, 0, "%");
    else if (!p)
        snprintf(b, n, "-");
    else if (row == 4)
        snprintf(b, n, "%s", bench_param_find(p, "concurrency"));
    else if (row == 12)
        snprintf(b, n, "%.0f / %.0f / %.0f", med(p, "late_p50_us"), med(p, "late_p99_us"),
                 med(p, "late_max_us"));
    else
        snprintf(b, n, "%.0f of %.0f", med(p, "early_waits"), med(p, "late_samples"));
}

static void summary_table(bench_results *r, const delay_sweep *s)
{
    char align[NKNOWN * MAX_SLACKS + 2] = "l", cells[NKNOWN * MAX_SLACKS + 1][64];
    const char *line[NKNOWN * MAX_SLACKS + 1] = {""};
    for (int ri = 0; ri < s->nreprs; ri++) {
        strcat(align, "r");
        line[ri + 1] = s->reprs[ri].name;
    }
    bench_table *t = bench_table_add(r, s->o->clock ? "Summary (peak over N; per-delay figures "
                                     "at the peak N; simulated clock)" : "Summary (peak over "
                                     "N; per-delay figures at the peak N)", s->nreprs + 1, align);
    bench_table_row(t, line);
    for (int row = 0; row < NSUMMARY; row++) {
        line[0] = summary_rows[row].label;
        for (int ri = 0; ri < s->nreprs; ri++) {
            summary_cell(cells[ri], sizeof cells[ri], r, s->nreprs, ri, row);
            line[ri + 1] = cells[ri];
        }
        bench_table_row(t, line);
    }
    bench_table_footer(t, "The first representation is 100%%.");
}

/* The per-N table: the figures people compare, one row per record. */
static const struct {
    const char *header, *metric;
} per_n_cols[] = {
    {"delays/s", "delays_per_second"}, {"ExitCount", "exit_count"},
    {"CPU µs/delay", "cpu_us_per_delay"}, {"boxed/delay", "boxed_per_delay"},
    {"LI ops/delay", "large_ops_per_delay"}, {"loops/delay", "timing_loop_passes_per_delay"},
    {"p50 µs", "late_p50_us"}, {"p99 µs", "late_p99_us"}, {"max µs", "late_max_us"},
    {"early", "early_waits"},
};
#define NPERN ((int)(sizeof per_n_cols / sizeof per_n_cols[0]))

static void per_n_table(bench_results *r, const delay_sweep *s)
{
    char title[160];
    snprintf(title, sizeof title, "Per N (medians over %lld repetition%s; per delay = per "
             "delay started in the window)", s->o->repeat, s->o->repeat == 1 ? "" : "s");
    bench_table *t = bench_table_add(r, title, NPERN + 2, "rlrrrrrrrrrr");
    const char *line[NPERN + 2] = {"N", "representation"};
    char cells[NPERN][64];
    for (int k = 0; k < NPERN; k++)
        line[k + 2] = per_n_cols[k].header;
    bench_table_row(t, line);
    for (int i = 0; i < r->nrecords; i++) {
        const bench_record *rec = &r->records[i];
        line[0] = bench_param_find(rec, "concurrency");
        line[1] = rec->name;
        for (int k = 0; k < NPERN; k++) {
            median_cell(cells[k], sizeof cells[k], rec, per_n_cols[k].metric);
            line[k + 2] = rec->status == BENCH_FAILED && !k ? "FAILED" : cells[k];
        }
        bench_table_row(t, line);
    }
}

/* The seed's transcript: "#ConcurrentDelays: N . Count: C per second" per cell. */
static void seed_table(bench_results *r, const delay_sweep *s)
{
    bench_table *t = bench_table_add(r, "In the seed's words", 1, "l");
    bench_table_row(t, (const char *const[]){"transcript"});
    char line[512];
    for (int ri = 0; ri < s->nreprs; ri++) {
        snprintf(line, sizeof line, "DelayBenchmark %s...", s->reprs[ri].name);
        bench_table_row(t, (const char *const[]){line});
        for (int i = ri; i < r->nrecords; i += s->nreprs) {
            const bench_record *rec = &r->records[i];
            if (rec->status == BENCH_FAILED)
                snprintf(line, sizeof line, "#ConcurrentDelays: %s . Count: FAILED (%s)",
                         bench_param_find(rec, "concurrency"), rec->note);
            else
                snprintf(line, sizeof line, "#ConcurrentDelays: %s . Count: %.0f per second",
                         bench_param_find(rec, "concurrency"), med(rec, "delays_per_second"));
            bench_table_row(t, (const char *const[]){line});
        }
    }
}

/* What the run was, as the results' note (every view for people shows it). */
static void describe(bench_results *r, const delay_sweep *s)
{
    long sum = 0;
    for (int i = 0; i < DELAY_TABLE_SIZE; i++)
        sum += s->table[i];
    bool sim = s->o->clock == 1;
    bench_results_note(r, "DelayBenchmark: %s clock, window %lld ms + drain %lld ms, %lld "
                       "repetition%s per cell. Durations: 1000 draws of (Random seed: 42) "
                       "nextInt: 50, mean %.3f ms; workers at priority 41, coordinator at 42. "
                       "Lateness = end of wait - (start + duration), two stvm_vm_now_us reads "
                       "per delay (in the CPU figures). \"Per delay\" divides by the delays "
                       "started in the window (EnterCount).%s",
                       sim ? "simulated" : "real", s->o->window_ms, s->o->window_ms,
                       s->o->repeat, s->o->repeat == 1 ? "" : "s",
                       (double)sum / DELAY_TABLE_SIZE,
                       sim ? " Simulated clock: time jumps to the next deadline when every "
                             "process waits, so counts are per simulated second and measure "
                             "pure CPU cost; CPU figures are real." : "");
}

/* What the report says before its tables (data: the sweep); the machine, version and
 * pin are in the context list that follows. */
static void report_prose(FILE *f, const bench_results *people, const void *data)
{
    const delay_sweep *s = data;
    fprintf(f, "# DelayBenchmark on stvm\n\n%s\n\nThe summary gives each representation's "
               "peak over N (the first is 100%%) and the per-delay figures at that N, the per-N "
               "table the medians of every cell. Every figure of every run, with each "
               "repetition's sample, is in the JSON and CSV views (`--export-json`, "
               "`--export-csv`).\n\n", s->r.note);
}

int delay_main(int argc, char **argv)
{
    delay_opts o;
    bench_invocation inv;
    int table[DELAY_TABLE_SIZE];   /* verified by main at start-up */
    delay_sweep s = {.o = &o, .inv = &inv, .table = table};
    int rc = bench_parse(&delay_command, argc, argv, &o, &inv);
    if (rc != BENCH_GO_ON || (rc = parse_reprs(&o, &s)) != BENCH_GO_ON ||
        (rc = bench_trace_cells(&inv, (long)s.nreprs * o.concurrency.n * o.repeat,
                                "give one --repr, one --concurrency value, one "
                                "--timer-slack-us value and --repeat 1")) != BENCH_GO_ON)
        return rc;
    inv.clock = o.clock ? "sim" : "real";
    delay_table_generate(table);
    bench_results_init(&s.r, "delay");
    add_records(&s);
    rc = sweep(&s) ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
    summary_table(&s.r, &s);
    per_n_table(&s.r, &s);
    seed_table(&s.r, &s);
    describe(&s.r, &s);
    if (bench_output(&s.r, &inv) != BENCH_EXIT_OK)
        rc = BENCH_EXIT_FAIL;
    /* The report is for people: the description, the summary, the per-N table and the
     * seed's lines, without the record tables of every figure. */
    bench_results people = s.r;
    char none[1] = "";
    people.nrecords = 0;
    people.note = none;
    if (o.report && !bench_report(o.report, &people, &inv, report_prose, &s))
        rc = BENCH_EXIT_FAIL;
    if (o.plot && !bench_plot(&s.r, &inv, "delay.gp", o.plot))
        rc = BENCH_EXIT_FAIL;
    bench_results_free(&s.r);
    return rc;
}
