/*
 * stvm-bench delay: Pharo's DelayBenchmark workload as a sweep: its options, the sweep
 * (each run in delay_run.c) and a record per (clock, representation, N). The views come
 * from the core; the seed's tables, its two questions and the plot are the DelayBenchmark
 * experiment's (experiments/delay-benchmark/), made from this command's JSON.
 */
#include "bench.h"
#include "delay_cost.h"
#include "delay_run.h"
#include "random.h"
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SLACK_US 50   /* stvm_config's default timer slack */
#define MAX_SLACKS 8
#define NKNOWN 4              /* the representations this command knows */

/* What the option table fills. */
typedef struct delay_opts {
    const char *repr;               /* a TEXT list: its order matters (the first is 100%) */
    bench_ints concurrency;
    unsigned clocks;                /* bit 0 real, bit 1 sim (CLOCK_BIT) */
    long long repeat, window_ms;
    bench_ints slacks;
    bool no_stack_guard;
    const char *sim_cost;
} delay_opts;

#define CLOCK_BIT(sim) (1u << (sim))

typedef struct delay_sweep {
    delay_repr reprs[NKNOWN * MAX_SLACKS];   /* each representation at each slack */
    int nreprs;
    int sims[2];                    /* the clocks run, in order (1 sim, 0 real): sim first */
    int nclocks;
    const delay_opts *o;
    const bench_invocation *inv;
    const int *table;
    delay_cost cost;                /* --sim-cost */
    bench_results r;                /* cell (ci, ni, ri) is record cell(s, ci, ni, ri) */
} delay_sweep;

/* The record of cell (clock ci, N ni, representation ri). */
static int cell(const delay_sweep *s, int ci, int ni, int ri)
{
    return (ci * s->o->concurrency.n + ni) * s->nreprs + ri;
}

static const delay_repr known_reprs[] = {
    {"ms-smallint31", STVM_DELAY_CLOCK_MS, 31, DEFAULT_SLACK_US},
    {"us-largeint31", STVM_DELAY_CLOCK_US, 31, DEFAULT_SLACK_US},
    {"us-smallint61", STVM_DELAY_CLOCK_US, 61, DEFAULT_SLACK_US},
    {"ms-smallint61", STVM_DELAY_CLOCK_MS, 61, DEFAULT_SLACK_US},
};
_Static_assert(sizeof known_reprs / sizeof known_reprs[0] == NKNOWN, "NKNOWN counts them");

static const char *const clock_words[] = {"real", "sim", NULL};
static const bench_opt delay_opts_table[] = {
    BENCH_TEXT("repr", "LIST", "ms-smallint31,us-largeint31,us-smallint61", delay_opts, repr,
               "Representations, comma-separated, in the order shown (the first is 100%): "
               "ms-smallint31, us-largeint31, us-smallint61, ms-smallint61."),
    BENCH_INTS("concurrency", "1000..10000:1000", 1, 1000000, delay_opts, concurrency,
               "N, the concurrent delays (worker processes)."),
    BENCH_WORDS("clock", "real", clock_words, delay_opts, clocks,
               "The wall clock, simulated time (no waiting: counts per simulated second; "
               "nothing costs time unless --sim-cost says so), or both (sim,real: the "
               "simulated sweep first, each with its own tables)."),
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
               "it. Each worker charges what was counted with stvm_work_us before it enters its next "
               "delay (bench/delay_cost.h)."),
    BENCH_FLAG("no-stack-guard", delay_opts, no_stack_guard,
               "No guard region below each stack, no overflow check."),
};

const bench_command delay_command = {
    "delay",
    "Pharo's DelayBenchmark: delays per second against concurrency for each Delay "
    "timestamp representation",
    "1000 durations of 1..50 ms from Random seed: 42 (verified at start-up); N workers at "
    "priority 41 share one index into them and wait on a Delay of each in turn; a "
    "coordinator at 42 opens a window, closes it and drains for as long. Every run has a "
    "fresh VM; representations are interleaved within each N and repetition.\n\nOne record "
    "per (clock, representation, N): delays per second, us and CPU us per delay, boxed "
    "allocations, LargeInteger operations and the scheduler's counters per delay, "
    "lateness p50/p99/max. The seed's tables beside these (Pharo 2015) are the "
    "DelayBenchmark experiment's report (experiments/delay-benchmark/README.md).",
    delay_opts_table, (int)(sizeof delay_opts_table / sizeof delay_opts_table[0]),
    "the run's VM (one --repr, one --concurrency value, one --timer-slack-us value and "
    "--repeat 1)"};

/* ---- the sweep ----------------------------------------------------------------------- */

/* --repr at each --timer-slack-us, the slack in the name when there are several; the
 * clocks; the cost model. */
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
    /* The model's table first: the simulated sweep runs before the real one. */
    for (int sim = 1; sim >= 0; sim--)
        if (o->clocks & CLOCK_BIT(sim))
            s->sims[s->nclocks++] = sim;
    char why[200];
    if (!delay_cost_parse(o->sim_cost, &s->cost, why, sizeof why))
        return bench_usage(&delay_command, "--sim-cost: %s", why);
    if (s->cost.on && !(o->clocks & CLOCK_BIT(1)))
        return bench_usage(&delay_command, "--sim-cost charges simulated time: give --clock "
                           "sim (or sim,real) too");
    return BENCH_GO_ON;
}

/* A record per cell, in (clock, N, representation) order, with every figure and no
 * sample. */
static void add_records(delay_sweep *s)
{
    for (int ci = 0; ci < s->nclocks; ci++) {
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
                bench_param_add(rec, "clock", "%s", s->sims[ci] ? "sim" : "real");
#define F(name, unit, better, decimals) \
    bench_metric_add(rec, #name, unit, BENCH_BETTER_##better, decimals, NULL, 0);
                DELAY_FIGURES(F)
#undef F
                rec->gbench_real = DELAY_us_per_delay;
                rec->gbench_cpu = DELAY_cpu_us_per_delay;
            }
        }
    }
}

/* Repetition k of cell (ci, ni, ri) into its record; a failure is kept in the record. */
static bool run_cell(delay_sweep *s, bench_record *rec, int ci, int ni, int ri, int k)
{
    delay_run_params p = {.repr = &s->reprs[ri], .n = (long)s->o->concurrency.v[ni],
                          .table = s->table, .window_ms = (int)s->o->window_ms,
                          .sim = s->sims[ci] == 1, .cost = &s->cost,
                          .stack_guard = !s->o->no_stack_guard,
                          .trace = &s->inv->common.trace};
    double out[DELAY_NFIGURES];
    char why[300] = "";
    if (delay_run_one(&p, out, why, sizeof why) == STVM_OK) {
        /* --no-context on the simulated clock: the figures that are the simulation's own
         * real time are left out, so the run writes the same bytes every time. */
        if (p.sim && s->inv->common.no_context)
            out[DELAY_cpu_us_per_delay] = out[DELAY_wall_window_ms] =
                out[DELAY_cpu_window_ms] = NAN;
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
    int total = s->nclocks * o->concurrency.n * (int)o->repeat * s->nreprs, done = 0;
    int failed = 0;
    for (int ci = 0; ci < s->nclocks; ci++) {
        for (int ni = 0; ni < o->concurrency.n; ni++) {
            for (int k = 0; k < o->repeat; k++) {
                for (int ri = 0; ri < s->nreprs; ri++) {
                    bench_record *rec = &s->r.records[cell(s, ci, ni, ri)];
                    bool ok = rec->status == BENCH_OK && !*rec->note;
                    if (ok && !(ok = run_cell(s, rec, ci, ni, ri, k)))
                        failed++;
                    bench_progress_line(s->inv, ++done, total, "%s clock, %s N=%lld rep "
                                        "%d/%lld: %.0f delays/s", s->sims[ci] ? "sim" : "real",
                                        s->reprs[ri].name, o->concurrency.v[ni], k + 1,
                                        o->repeat, ok ? rec->metrics[0].samples[k] : NAN);
                }
            }
        }
    }
    return failed;
}

int delay_main(int argc, char **argv)
{
    delay_opts o;
    bench_invocation inv;
    int table[DELAY_TABLE_SIZE];   /* verified by main at start-up */
    delay_sweep s = {.o = &o, .inv = &inv, .table = table};
    int rc = bench_parse(&delay_command, argc, argv, &o, &inv);
    if (rc != BENCH_GO_ON || (rc = parse_reprs(&o, &s)) != BENCH_GO_ON ||
        (rc = bench_trace_cells(&inv, (long)s.nclocks * s.nreprs * o.concurrency.n *
                                o.repeat, "give one --clock, one --repr, one --concurrency "
                                "value, one --timer-slack-us value and --repeat 1"))
            != BENCH_GO_ON)
        return rc;
    inv.clock = s.nclocks == 2 ? "sim,real" : s.sims[0] ? "sim" : "real";
    delay_table_generate(table);
    bench_results_init(&s.r, "delay");
    add_records(&s);
    rc = sweep(&s) ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
    if (s.cost.on) {   /* the model's figures, for whoever reads the results */
        char model[240];
        delay_cost_describe(&s.cost, model, sizeof model);
        bench_results_note(&s.r, "--sim-cost %s", model);
    }
    if (bench_output(&s.r, &inv) != BENCH_EXIT_OK)
        rc = BENCH_EXIT_FAIL;
    bench_results_free(&s.r);
    return rc;
}
