/*
 * stvm-bench delay: the tables for people (per representation the seed's rows beside
 * stvm's, a seed-shaped summary, the mechanics as the counters state them, the seed's
 * two questions answered with the figures, the per-N table and the seed's transcript),
 * the targets with the reason for each miss, the run's note and the report's words.
 */
#include "delay_cmd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "random.h"

const double seed_rate[2][SEED_ROWS] = {
    {39498, 77808, 99889, 117632, 128507, 118729, 114437, 114792, 115137, 113973},
    {39018, 71906, 98010, 101227, 64728, 90495, 89220, 89585, 88393, 89073},
};
const char *const seed_label[2] = {"withNewCodeEnabled: false, ms",
                                          "withNewCodeEnabled: true, µs"};


/* ---- what the tables share ----------------------------------------------------------- */

static double med(const bench_record *rec, const char *metric)
{
    const bench_metric *m = rec ? bench_metric_find(rec, metric) : NULL;
    return m && m->nsamples ? m->median : NAN;
}

static const bench_record *rec_at(const delay_sweep *s, int ci, int ni, int ri)
{
    return &s->r.records[cell(s, ci, ni, ri)];
}

static double rate_at(const delay_sweep *s, int ci, int ni, int ri)
{
    return med(rec_at(s, ci, ni, ri), "delays_per_second");
}

/* The N index of representation ri's highest median rate on clock ci (the first N at
 * that rate), or -1. */
static int peak_ni(const delay_sweep *s, int ci, int ri)
{
    int best = -1;
    for (int ni = 0; ni < s->o->concurrency.n; ni++)
        if (rate_at(s, ci, ni, ri) > (best < 0 ? -INFINITY : rate_at(s, ci, best, ri)))
            best = ni;   /* the comparison is false for NaN */
    return best;
}

static const bench_record *peak(const delay_sweep *s, int ci, int ri)
{
    int ni = peak_ni(s, ci, ri);
    return ni < 0 ? NULL : rec_at(s, ci, ni, ri);
}

/* The seed's row for a representation: 0 for millisecond SmallIntegers on 31 bits (the
 * old code), 1 for microsecond LargeIntegers on 31 bits (the new code), else -1. */
static int seed_row(const delay_repr *rp)
{
    if (rp->smallint_bits != 31)
        return -1;
    return rp->delay_clock == STVM_DELAY_CLOCK_MS ? 0 : 1;
}

/* The seed's column for N (1000..10000 step 1000), or -1. */
static int seed_col(long long n)
{
    return n % 1000 == 0 && n >= 1000 && n <= 1000 * SEED_ROWS ? (int)(n / 1000) - 1 : -1;
}

static int seed_peak_col(int row)
{
    int best = 0;
    for (int i = 1; i < SEED_ROWS; i++)
        if (seed_rate[row][i] > seed_rate[row][best])
            best = i;
    return best;
}

/* A representation by name among those run, or -1. */
static int repr_index(const delay_sweep *s, const char *name)
{
    for (int ri = 0; ri < s->nreprs; ri++)
        if (!strcmp(s->reprs[ri].name, name))
            return ri;
    return -1;
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

/* "the simulated clock (--sim-cost seed1)", "the real clock". */
static void clock_phrase(char *b, size_t n, const delay_sweep *s, int ci)
{
    if (!s->sims[ci])
        snprintf(b, n, "the real clock");
    else if (s->cost.on)
        snprintf(b, n, "the simulated clock (--sim-cost %s)", s->o->sim_cost);
    else
        snprintf(b, n, "the simulated clock (no modelled cost)");
}

/* ---- the seed beside stvm ------------------------------------------------------------ */

/* Representation ri on clock ci: a row per N with the seed's figures (when it has that
 * N and that representation) and stvm's, then the peaks. */
static void seed_beside_table(bench_results *r, const delay_sweep *s, int ci, int ri)
{
    const delay_repr *rp = &s->reprs[ri];
    int row = seed_row(rp);
    char title[300], where[120];
    clock_phrase(where, sizeof where, s, ci);
    if (row >= 0)
        snprintf(title, sizeof title, "%s: the seed (Pharo 2015, 32-bit Cog VM, %s) beside "
                 "stvm on %s", rp->name, seed_label[row], where);
    else
        snprintf(title, sizeof title, "%s: stvm on %s (the seed ran no 64-bit VM: its "
                 "question \"what about Spur64?\")", rp->name, where);
    bench_table *t = bench_table_add(r, title, 7, "rrrrrrr");
    bench_table_row(t, (const char *const[]){"N", "seed delays/s", "seed relative",
                                             "seed µs/delay", "stvm delays/s",
                                             "stvm relative", "stvm µs/delay"});
    char c[7][64];
    const char *line[7];
    for (int k = 0; k < 7; k++)
        line[k] = c[k];
    for (int ni = 0; ni < s->o->concurrency.n; ni++) {
        long long n = s->o->concurrency.v[ni];
        int sc = seed_col(n);
        double seed = row >= 0 && sc >= 0 ? seed_rate[row][sc] : NAN;
        double seed0 = sc >= 0 ? seed_rate[0][sc] : NAN;
        double v = rate_at(s, ci, ni, ri), v0 = rate_at(s, ci, ni, 0);
        snprintf(c[0], sizeof c[0], "%lld", n);
        fmt(c[1], sizeof c[1], seed, 0, "");
        fmt(c[2], sizeof c[2], 100 * seed / seed0, 0, "%");
        fmt(c[3], sizeof c[3], 1e6 / seed, 2, "");
        fmt(c[4], sizeof c[4], v, 0, "");
        fmt(c[5], sizeof c[5], 100 * v / v0, 0, "%");
        fmt(c[6], sizeof c[6], 1e6 / v, 2, "");
        bench_table_row(t, line);
    }
    int pn = peak_ni(s, ci, ri), p0 = peak_ni(s, ci, 0);
    snprintf(c[0], sizeof c[0], "peak");
    if (row >= 0) {
        int sp = seed_peak_col(row), sp0 = seed_peak_col(0);
        snprintf(c[1], sizeof c[1], "%.0f at %d", seed_rate[row][sp], 1000 * (sp + 1));
        fmt(c[2], sizeof c[2], 100 * seed_rate[row][sp] / seed_rate[0][sp0], 0, "%");
        fmt(c[3], sizeof c[3], 1e6 / seed_rate[row][sp], 2, "");
    } else {
        for (int k = 1; k < 4; k++)
            snprintf(c[k], sizeof c[k], "-");
    }
    double v = pn < 0 ? NAN : rate_at(s, ci, pn, ri), v0 = p0 < 0 ? NAN : rate_at(s, ci, p0, 0);
    if (pn >= 0)
        snprintf(c[4], sizeof c[4], "%.0f at %lld", v, s->o->concurrency.v[pn]);
    else
        snprintf(c[4], sizeof c[4], "-");
    fmt(c[5], sizeof c[5], 100 * v / v0, 0, "%");
    fmt(c[6], sizeof c[6], 1e6 / v, 2, "");
    bench_table_row(t, line);
    bench_table_footer(t, "Relative: to %s at the same N (the seed's: to withNewCodeEnabled: "
                       "false); in the peak row, peak to peak. µs per delay = 1e6 / delays per "
                       "second. The peak is the first N at the highest rate.", s->reprs[0].name);
}

/* ---- the seed-shaped summary --------------------------------------------------------- */

typedef enum summary_kind {
    SUM_METRIC,                     /* the metric's median at the peak N */
    SUM_REL, SUM_REL_TIME, SUM_PEAK_N, SUM_LATENESS, SUM_EARLY,
    SUM_SEED_RATE, SUM_SEED_REL, SUM_SEED_US, SUM_SEED_REL_TIME,
} summary_kind;

static const struct {
    const char *label, *metric;
    summary_kind kind;
} summary_rows[] = {
    {"the seed (Pharo 2015): delays per second at its peak", NULL, SUM_SEED_RATE},
    {"the seed: relative performance", NULL, SUM_SEED_REL},
    {"the seed: µs per scheduled delay (1e6 / peak)", NULL, SUM_SEED_US},
    {"the seed: relative performance (time)", NULL, SUM_SEED_REL_TIME},
    {"stvm: delays scheduled per second (peak over N)", "delays_per_second", SUM_METRIC},
    {"relative performance", NULL, SUM_REL},
    {"µs per scheduled delay (1e6 / peak)", "us_per_delay", SUM_METRIC},
    {"relative performance (time)", NULL, SUM_REL_TIME},
    {"peak at N", NULL, SUM_PEAK_N},
    {"ExitCount at peak N", "exit_count", SUM_METRIC},
    {"modelled cost charged per delay [µs]", "sim_cost_us_per_delay", SUM_METRIC},
    {"CPU µs per delay (at peak N)", "cpu_us_per_delay", SUM_METRIC},
    {"boxed allocations per delay", "boxed_per_delay", SUM_METRIC},
    {"LargeInteger ops per delay", "large_ops_per_delay", SUM_METRIC},
    {"timing loop passes per delay", "timing_loop_passes_per_delay", SUM_METRIC},
    {"clock reads per delay", "clock_reads_per_delay", SUM_METRIC},
    {"idle sleeps (kernel waits) per delay", "idle_sleeps_per_delay", SUM_METRIC},
    {"OS sleeps per second (at peak N)", "os_sleeps_per_second", SUM_METRIC},
    {"lateness p50 / p99 / max [µs]", NULL, SUM_LATENESS},
    {"waits that ended early (ms scheduler)", NULL, SUM_EARLY},
};
#define NSUMMARY ((int)(sizeof summary_rows / sizeof summary_rows[0]))

static void summary_cell(char *b, size_t n, const delay_sweep *s, int ci, int ri, int row)
{
    const bench_record *p = peak(s, ci, ri), *p0 = peak(s, ci, 0);
    double rate = med(p, "delays_per_second"), rate0 = med(p0, "delays_per_second");
    int sr = seed_row(&s->reprs[ri]);
    double seed = sr >= 0 ? seed_rate[sr][seed_peak_col(sr)] : NAN;
    double seed0 = seed_rate[0][seed_peak_col(0)];
    switch (summary_rows[row].kind) {
    case SUM_METRIC:
        median_cell(b, n, p, summary_rows[row].metric);
        break;
    case SUM_REL:
        fmt(b, n, 100.0 * rate / rate0, 0, "%");
        break;
    case SUM_REL_TIME:
        fmt(b, n, 100.0 * rate0 / rate, 0, "%");
        break;
    case SUM_PEAK_N:
        snprintf(b, n, "%s", p ? bench_param_find(p, "concurrency") : "-");
        break;
    case SUM_LATENESS:
        if (p)
            snprintf(b, n, "%.0f / %.0f / %.0f", med(p, "late_p50_us"), med(p, "late_p99_us"),
                     med(p, "late_max_us"));
        else
            snprintf(b, n, "-");
        break;
    case SUM_EARLY:
        if (p)
            snprintf(b, n, "%.0f of %.0f", med(p, "early_waits"), med(p, "late_samples"));
        else
            snprintf(b, n, "-");
        break;
    case SUM_SEED_RATE:
        if (sr >= 0)
            snprintf(b, n, "%.0f (N=%d)", seed, 1000 * (seed_peak_col(sr) + 1));
        else
            snprintf(b, n, "-");
        break;
    case SUM_SEED_REL:
        fmt(b, n, 100.0 * seed / seed0, 0, "%");
        break;
    case SUM_SEED_US:
        fmt(b, n, 1e6 / seed, 2, "");
        break;
    case SUM_SEED_REL_TIME:
        fmt(b, n, 100.0 * seed0 / seed, 0, "%");
        break;
    }
}

static void summary_table(bench_results *r, const delay_sweep *s, int ci)
{
    char align[NKNOWN * MAX_SLACKS + 2] = "l", cells[NKNOWN * MAX_SLACKS + 1][64];
    const char *line[NKNOWN * MAX_SLACKS + 1] = {""};
    for (int ri = 0; ri < s->nreprs; ri++) {
        strcat(align, "r");
        line[ri + 1] = s->reprs[ri].name;
    }
    char title[200], where[120];
    clock_phrase(where, sizeof where, s, ci);
    snprintf(title, sizeof title, "Summary on %s (peak over N; per-delay figures at the peak "
             "N), beside the seed's", where);
    bench_table *t = bench_table_add(r, title, s->nreprs + 1, align);
    bench_table_row(t, line);
    for (int row = 0; row < NSUMMARY; row++) {
        if (summary_rows[row].kind == SUM_METRIC && !s->sims[ci] &&
            !strcmp(summary_rows[row].metric, "sim_cost_us_per_delay"))
            continue;
        line[0] = summary_rows[row].label;
        for (int ri = 0; ri < s->nreprs; ri++) {
            summary_cell(cells[ri], sizeof cells[ri], s, ci, ri, row);
            line[ri + 1] = cells[ri];
        }
        bench_table_row(t, line);
    }
    bench_table_footer(t, "The first representation is 100%%. The seed's rows: its "
                       "withNewCodeEnabled: false under ms-smallint31, true under "
                       "us-largeint31.");
}

/* ---- the mechanics, from the counters ------------------------------------------------ */

/* "ms-smallint31 2.016, us-largeint31 1.949" : metric (or num / den) at each
 * representation's peak N, with the metric's decimals (or `decimals`). */
static size_t per_repr(char *b, size_t n, const delay_sweep *s, int ci, const char *metric,
                       const char *den, int decimals)
{
    size_t used = 0;
    for (int ri = 0; ri < s->nreprs && used < n; ri++) {
        const bench_record *p = peak(s, ci, ri);
        const bench_metric *m = p ? bench_metric_find(p, metric) : NULL;
        double v = med(p, metric);
        if (den)
            v /= med(p, den);
        char num[32];
        fmt(num, sizeof num, v, den ? decimals : m ? m->decimals : 0, "");
        used += (size_t)snprintf(b + used, n - used, "%s%s %s", ri ? ", " : "",
                                 s->reprs[ri].name, num);
    }
    return used;
}

/* Sentences whose every figure comes from this run's counters (a test compares them
 * with the JSON), at each representation's peak N. */
static void mechanics_table(bench_results *r, const delay_sweep *s, int ci)
{
    char title[300], where[120], text[2048], a[400], b[400];
    clock_phrase(where, sizeof where, s, ci);
    snprintf(title, sizeof title, "The mechanics on %s, as the counters state them (each "
             "representation at its peak N)", where);
    bench_table *t = bench_table_add(r, title, 1, "l");
    bench_table_row(t, (const char *const[]){"what the counters say"});
    per_repr(a, sizeof a, s, ci, "clock_reads_per_delay", NULL, 0);
    per_repr(b, sizeof b, s, ci, "clock_reads_per_delay", "timing_loop_passes_per_delay", 2);
    snprintf(text, sizeof text, "Clock reads per delay (clock_reads: primitives 135 and 240, "
             "read by the timing process): %s. Per timing-loop pass: %s (the millisecond "
             "scheduler reads its clock again after arming the timer, to catch a wrap during "
             "the pass; the microsecond one reads it once).", a, b);
    bench_table_row(t, (const char *const[]){text});
    per_repr(a, sizeof a, s, ci, "timing_loop_passes_per_delay", NULL, 0);
    per_repr(b, sizeof b, s, ci, "context_switches_per_delay", NULL, 0);
    snprintf(text, sizeof text, "Timing-loop passes per delay (timing_loop_passes): %s. "
             "Context switches per delay (context_switches): %s.", a, b);
    bench_table_row(t, (const char *const[]){text});
    per_repr(a, sizeof a, s, ci, "boxed_per_delay", NULL, 0);
    per_repr(b, sizeof b, s, ci, "large_ops_per_delay", NULL, 0);
    snprintf(text, sizeof text, "Boxed allocations per delay (boxed_allocated): %s. "
             "LargeInteger operations per delay (large_int_ops): %s.", a, b);
    bench_table_row(t, (const char *const[]){text});
    per_repr(a, sizeof a, s, ci, "cpu_us_per_delay", NULL, 0);
    per_repr(b, sizeof b, s, ci, "idle_sleeps_per_delay", NULL, 0);
    snprintf(text, sizeof text, "CPU µs per delay (the process's CPU time in the window): "
             "%s. Idle sleeps in the kernel per delay (idle_sleeps): %s.%s", a, b,
             s->sims[ci] ? " On the simulated clock this CPU is what the simulation took: "
             "it does not move simulated time." : " On the real clock it includes the "
             "kernel's work for each idle sleep and wake-up.");
    bench_table_row(t, (const char *const[]){text});
    if (s->sims[ci] && s->cost.on) {
        char model[300];
        delay_cost_describe(&s->cost, model, sizeof model);
        per_repr(a, sizeof a, s, ci, "sim_cost_us_per_delay", NULL, 0);
        snprintf(text, sizeof text, "Modelled cost charged per delay (sim_cost_us_per_delay, "
                 "simulated µs; model %s): %s.", model, a);
        bench_table_row(t, (const char *const[]){text});
    }
}

/* ---- the seed's two questions -------------------------------------------------------- */

/* "Is this performance penalty a reasonable trade for eliminating delay clock rollover?"
 * and "It would be interesting to check this on Spur64", with this run's figures. */
static void questions_table(bench_results *r, const delay_sweep *s)
{
    int ms = repr_index(s, "ms-smallint31"), lg = repr_index(s, "us-largeint31");
    int s61 = repr_index(s, "us-smallint61");
    bench_table *t = bench_table_add(r, "The seed's two questions, answered with the figures",
                                     1, "l");
    bench_table_row(t, (const char *const[]){"answer"});
    char text[1200], where[120];
    double seed_ms = 1e6 / seed_rate[0][seed_peak_col(0)];
    double seed_lg = 1e6 / seed_rate[1][seed_peak_col(1)], seed_d = seed_lg - seed_ms;
    snprintf(text, sizeof text, "1. The rollover trade. The seed: (%.1f - %.1f) µs / %.0f µs "
             "= %.4f%% of one 50 ms interCyclePause (with its unrounded peaks, %.2f - %.2f = "
             "%.2f µs). Its 0.004%% is right, as the share of one cycle that one delay's extra "
             "cost takes: an image waiting on one Delay per cycle (20 a second) spends %.0f µs "
             "a second on it. At its peak rate, %.0f delays/s, the same %.2f µs per delay is "
             "%.3f s of every second (%.0f%% of the CPU), which is the benchmark's drop to "
             "%.0f%%.",
             seed_lg, seed_ms, SEED_CYCLE_US, 100 * (seed_lg - seed_ms) / SEED_CYCLE_US,
             seed_lg, seed_ms, seed_d, 20 * seed_d, seed_rate[1][seed_peak_col(1)], seed_d,
             seed_d * seed_rate[1][seed_peak_col(1)] / 1e6,
             100 * seed_d * seed_rate[1][seed_peak_col(1)] / 1e6,
             100 * seed_rate[1][seed_peak_col(1)] / seed_rate[0][seed_peak_col(0)]);
    bench_table_row(t, (const char *const[]){text});
    double worst = seed_d;
    for (int ci = 0; ci < s->nclocks && ms >= 0 && lg >= 0; ci++) {
        const bench_record *pm = peak(s, ci, ms), *pl = peak(s, ci, lg);
        double um = 1e6 / med(pm, "delays_per_second"), ul = 1e6 / med(pl, "delays_per_second");
        double d = ul - um, rl = med(pl, "delays_per_second");
        if (d > worst)
            worst = d;
        clock_phrase(where, sizeof where, s, ci);
        snprintf(text, sizeof text, "   stvm on %s: us-largeint31 %.2f µs per delay against "
                 "ms-smallint31 %.2f at their peaks: (%.2f - %.2f) / %.0f = %.4f%% of one "
                 "cycle, %.0f µs a second at one delay per cycle; at us-largeint31's peak "
                 "rate, %.0f delays/s, %.3f s of every second (its relative performance: "
                 "%.0f%%).", where, ul, um, ul, um, SEED_CYCLE_US, 100 * d / SEED_CYCLE_US,
                 20 * d, rl, d * rl / 1e6, 100 * med(pl, "delays_per_second") /
                 med(pm, "delays_per_second"));
        bench_table_row(t, (const char *const[]){text});
    }
    snprintf(text, sizeof text, "   So the trade is reasonable: at most %.2f µs per delay "
             "above (%.4f%% of a 50 ms UI cycle per delay), which matters only where "
             "scheduling delays is the workload, as in this benchmark at saturation. The "
             "rollover it removes made every pending delay late by up to a second every 6.2 "
             "days in Pharo's millisecond code (stvm's ms scheduler shifts the resumption "
             "times exactly instead).", worst, 100 * worst / SEED_CYCLE_US);
    bench_table_row(t, (const char *const[]){text});
    for (int ci = 0; ci < s->nclocks && ms >= 0 && s61 >= 0; ci++) {
        const bench_record *pm = peak(s, ci, ms), *p6 = peak(s, ci, s61);
        clock_phrase(where, sizeof where, s, ci);
        double rel = 100 * med(p6, "delays_per_second") / med(pm, "delays_per_second");
        snprintf(text, sizeof text, "%s Spur64. On %s us-smallint61 (microsecond "
                 "SmallIntegers on a 61-bit VM) reaches %.1f%% of ms-smallint31's peak "
                 "(%.2f against %.2f µs per delay), with %.2f boxed allocations and %.2f "
                 "LargeInteger operations per delay: %s", ci ? "  " : "2.", where, rel,
                 1e6 / med(p6, "delays_per_second"), 1e6 / med(pm, "delays_per_second"),
                 med(p6, "boxed_per_delay"), med(p6, "large_ops_per_delay"),
                 rel >= 99 ? "the penalty is gone, and the clock keeps its microseconds "
                             "without rollover (2^60 µs from 1901 is the year 38435)."
                           : "slower than ms-smallint31 here, though it boxes nothing: see "
                             "the counters above for what differs.");
        bench_table_row(t, (const char *const[]){text});
    }
}

/* ---- the per-N table and the seed's transcript --------------------------------------- */

static const struct {
    const char *header, *metric;
} per_n_cols[] = {
    {"delays/s", "delays_per_second"}, {"ExitCount", "exit_count"},
    {"CPU µs/delay", "cpu_us_per_delay"}, {"model µs/delay", "sim_cost_us_per_delay"},
    {"boxed/delay", "boxed_per_delay"}, {"LI ops/delay", "large_ops_per_delay"},
    {"loops/delay", "timing_loop_passes_per_delay"}, {"reads/delay", "clock_reads_per_delay"},
    {"p50 µs", "late_p50_us"}, {"p99 µs", "late_p99_us"}, {"max µs", "late_max_us"},
    {"early", "early_waits"},
};
#define NPERN ((int)(sizeof per_n_cols / sizeof per_n_cols[0]))

static void per_n_table(bench_results *r, const delay_sweep *s)
{
    char title[160];
    snprintf(title, sizeof title, "Per N (medians over %lld repetition%s; per delay = per "
             "delay started in the window)", s->o->repeat, s->o->repeat == 1 ? "" : "s");
    bench_table *t = bench_table_add(r, title, NPERN + 3, "lrlrrrrrrrrrrrr");
    const char *line[NPERN + 3] = {"clock", "N", "representation"};
    char cells[NPERN][64];
    for (int k = 0; k < NPERN; k++)
        line[k + 3] = per_n_cols[k].header;
    bench_table_row(t, line);
    for (int i = 0; i < r->nrecords; i++) {
        const bench_record *rec = &r->records[i];
        line[0] = bench_param_find(rec, "clock");
        line[1] = bench_param_find(rec, "concurrency");
        line[2] = rec->name;
        for (int k = 0; k < NPERN; k++) {
            median_cell(cells[k], sizeof cells[k], rec, per_n_cols[k].metric);
            line[k + 3] = rec->status == BENCH_FAILED && !k ? "FAILED" : cells[k];
        }
        bench_table_row(t, line);
    }
}

/* The seed's transcript: "#ConcurrentDelays: N . Count: C per second" per cell. */
static void seed_table(bench_results *r, const delay_sweep *s, int ci)
{
    char title[200], where[120];
    clock_phrase(where, sizeof where, s, ci);
    snprintf(title, sizeof title, "In the seed's words, on %s", where);
    bench_table *t = bench_table_add(r, title, 1, "l");
    bench_table_row(t, (const char *const[]){"transcript"});
    char line[512];
    for (int ri = 0; ri < s->nreprs; ri++) {
        snprintf(line, sizeof line, "DelayBenchmark %s...", s->reprs[ri].name);
        bench_table_row(t, (const char *const[]){line});
        for (int ni = 0; ni < s->o->concurrency.n; ni++) {
            const bench_record *rec = rec_at(s, ci, ni, ri);
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

/* ---- the targets, each miss with its reason ------------------------------------------ */

/* The selector of cell (ci, ni, ri). */
static void selector(char *b, size_t n, const delay_sweep *s, int ci, int ni, int ri)
{
    snprintf(b, n, "%s concurrency=%lld clock=%s", s->reprs[ri].name, s->o->concurrency.v[ni],
             s->sims[ci] ? "sim" : "real");
}

typedef enum target_why {
    WHY_CALIBRATION, WHY_SATURATES_AT_5000, WHY_LARGEINT, WHY_SMALLINT61, WHY_SATURATED,
} target_why;

typedef struct delay_target {
    int index;                      /* in r->targets */
    target_why why;
    int ci;
} delay_target;

#define MAX_DELAY_TARGETS 16

static int add_target(bench_results *r, delay_target *dt, int *n, target_why why, int ci,
                      const char *text, bench_target_kind kind, const char *sel,
                      double limit, const char *ref)
{
    if (*n >= MAX_DELAY_TARGETS)
        return *n;
    bench_target_add(r, text, kind, sel, "delays_per_second", limit, ref,
                     ref ? "delays_per_second" : NULL);
    dt[*n] = (delay_target){.index = r->ntargets - 1, .why = why, .ci = ci};
    return ++*n;
}

static int add_targets(bench_results *r, const delay_sweep *s, delay_target *dt, double mean_ms)
{
    int n = 0, ms = repr_index(s, "ms-smallint31"), lg = repr_index(s, "us-largeint31");
    int s61 = repr_index(s, "us-smallint61");
    char a[160], b[160], text[300];
    for (int ci = 0; ci < s->nclocks && ms >= 0; ci++) {
        bool sim = s->sims[ci], seed1 = sim && s->cost.on && !strcmp(s->cost.name, "seed1");
        int pm = peak_ni(s, ci, ms);
        if (pm < 0)
            continue;
        const char *c = sim ? "simulated clock" : "real clock";
        selector(a, sizeof a, s, ci, pm, ms);
        if (seed1) {
            add_target(r, dt, &n, WHY_CALIBRATION, ci, "simulated clock, seed1: ms-smallint31's "
                       "peak at least the seed's 128,507 delays/s - 1% (the calibration)",
                       BENCH_TARGET_AT_LEAST, a, 128507 * 0.99, NULL);
            add_target(r, dt, &n, WHY_CALIBRATION, ci, "simulated clock, seed1: ms-smallint31's "
                       "peak at most the seed's 128,507 delays/s + 1% (the calibration)",
                       BENCH_TARGET_AT_MOST, a, 128507 * 1.01, NULL);
            for (int ni = 0; ni < s->o->concurrency.n; ni++)
                if (s->o->concurrency.v[ni] == 5000) {
                    selector(b, sizeof b, s, ci, ni, ms);
                    add_target(r, dt, &n, WHY_SATURATES_AT_5000, ci, "simulated clock, seed1: "
                               "ms-smallint31 saturated by N = 5,000 as the seed's was (its "
                               "rate there at least 99% of its peak)", BENCH_TARGET_AT_LEAST,
                               b, 0.99, a);
                }
        }
        if (lg >= 0 && (!sim || s->cost.on)) {
            selector(b, sizeof b, s, ci, peak_ni(s, ci, lg), lg);
            snprintf(text, sizeof text, "%s: us-largeint31 at least 69%% of ms-smallint31, peak "
                     "to peak (the seed's 79%%, within 10 points)", c);
            add_target(r, dt, &n, WHY_LARGEINT, ci, text, BENCH_TARGET_AT_LEAST, b, 0.69, a);
        }
        if (s61 >= 0 && (!sim || s->cost.on)) {
            selector(b, sizeof b, s, ci, peak_ni(s, ci, s61), s61);
            snprintf(text, sizeof text, "%s: us-smallint61 never slower than ms-smallint31, "
                     "peak to peak (at least %s)", c, sim ? "0.99x" : "0.97x, this machine's "
                     "noise");
            add_target(r, dt, &n, WHY_SMALLINT61, ci, text, BENCH_TARGET_AT_LEAST, b,
                       sim ? 0.99 : 0.97, a);
        }
        if (!sim) {
            double allow = (double)s->o->concurrency.v[pm] * 1000.0 / mean_ms;
            snprintf(text, sizeof text, "real clock: the sweep reaches saturation (ms-smallint31's "
                     "peak below 90%% of the %.0f delays/s that N = %lld allows: N x 1000 / "
                     "%.3f ms)", allow, s->o->concurrency.v[pm], mean_ms);
            add_target(r, dt, &n, WHY_SATURATED, ci, text, BENCH_TARGET_AT_MOST, a, 0.9 * allow,
                       NULL);
        }
    }
    return n;
}

/* After bench_judge: every miss gets a sentence with the counters that show why. */
static void explain_misses(bench_results *r, const delay_sweep *s, const delay_target *dt,
                           int n)
{
    int ms = repr_index(s, "ms-smallint31"), lg = repr_index(s, "us-largeint31");
    int s61 = repr_index(s, "us-smallint61");
    for (int i = 0; i < n; i++) {
        bench_target *t = &r->targets[dt[i].index];
        if (t->verdict != BENCH_MISSED)
            continue;
        int ci = dt[i].ci;
        const bench_record *pm = peak(s, ci, ms);
        const bench_record *pl = lg >= 0 ? peak(s, ci, lg) : NULL;
        const bench_record *p6 = s61 >= 0 ? peak(s, ci, s61) : NULL;
        double rm = med(pm, "delays_per_second");
        switch (dt[i].why) {
        case WHY_CALIBRATION:
            bench_target_note(t, "charged %.3f µs per delay (sim_cost_us_per_delay), peak %.0f/s: the "
                    "scale would need to be %.4g x %.0f / 128507", med(pm, "sim_cost_us_per_delay"),
                    rm, s->cost.scale, rm);
            break;
        case WHY_SATURATES_AT_5000:
            bench_target_note(t, "ms-smallint31 peaks at N = %s with %.0f delays/s: its knee is not where "
                    "the seed's was", bench_param_find(pm, "concurrency"), rm);
            break;
        case WHY_LARGEINT:
            /* The renderers keep about 240 characters of a reason: the long story is in
             * the mechanics and questions tables. */
            if (s->sims[ci])
                bench_target_note(t, "%.0f%%: %.2f LargeInteger ops and %.2f boxes per delay "
                        "(large_ops_per_delay, boxed_per_delay) cost %.2f of its %.2f modelled "
                        "µs (sim_cost_us_per_delay); in the seed's Pharo, 2.10 of 9.88",
                        100 * med(pl, "delays_per_second") / rm, med(pl, "large_ops_per_delay"),
                        med(pl, "boxed_per_delay"),
                        med(pl, "sim_cost_us_per_delay") - med(pm, "sim_cost_us_per_delay"),
                        med(pl, "sim_cost_us_per_delay"));
            else
                bench_target_note(t, "%.0f%%: %.2f LargeInteger ops and %.2f boxes per delay "
                        "(large_ops_per_delay, boxed_per_delay) take %.3f µs of CPU against "
                        "ms-smallint31's %.3f (cpu_us_per_delay); in the seed's Pharo, 9.88 "
                        "against 7.78", 100 * med(pl, "delays_per_second") / rm,
                        med(pl, "large_ops_per_delay"), med(pl, "boxed_per_delay"),
                        med(pl, "cpu_us_per_delay"), med(pm, "cpu_us_per_delay"));
            break;
        case WHY_SMALLINT61:
            bench_target_note(t, "%.1f%% with %.2f boxes per delay; timer fires per delay %.3f against "
                    "%.3f, idle sleeps %.3f against %.3f (timer_fires, idle_sleeps): the µs "
                    "scheduler wakes per distinct deadline, the ms one per tick",
                    100 * med(p6, "delays_per_second") / rm, med(p6, "boxed_per_delay"),
                    med(p6, "timer_fires_per_delay"), med(pm, "timer_fires_per_delay"),
                    med(p6, "idle_sleeps_per_delay"), med(pm, "idle_sleeps_per_delay"));
            break;
        case WHY_SATURATED:
            bench_target_note(t, "at N = %s it still sleeps %.3f times per delay in the kernel "
                    "(idle_sleeps): the durations, not the CPU, limit the count",
                    bench_param_find(pm, "concurrency"), med(pm, "idle_sleeps_per_delay"));
            break;
        }
    }
}

/* ---- the run's note, the report, main ------------------------------------------------ */

static double table_mean_ms(const int *table)
{
    long sum = 0;
    for (int i = 0; i < DELAY_TABLE_SIZE; i++)
        sum += table[i];
    return (double)sum / DELAY_TABLE_SIZE;
}

/* What the run was, as the results' note (every view for people shows it). */
static void describe(bench_results *r, const delay_sweep *s)
{
    bool sim = s->o->clocks & CLOCK_BIT(1);
    char model[600] = "", clocks[40];
    if (s->cost.on) {
        char m[240];
        delay_cost_describe(&s->cost, m, sizeof m);
        snprintf(model, sizeof model, " --sim-cost %s: before it enters each delay, a worker "
                 "charges the modelled cost of what the VM counted since the last charge, "
                 "as work (stvm_work_us) above the other workers' priority, so work is never "
                 "postponed behind a delay it paid for.", m);
    }
    snprintf(clocks, sizeof clocks, "%s", s->nclocks == 2 ? "simulated, then real clock"
                                        : s->sims[0] ? "simulated clock" : "real clock");
    bench_results_note(r, "DelayBenchmark: %s, window %lld ms + drain %lld ms, %lld "
                       "repetition%s per cell. Durations: 1000 draws of (Random seed: 42) "
                       "nextInt: 50, mean %.3f ms; workers at priority 41, coordinator at 42. "
                       "Lateness = end of wait - (start + duration); a worker reads "
                       "stvm_vm_now_us once per delay (the end of one is the start of the "
                       "next), which is not among the counted clock reads (the timing "
                       "process's primitives 135 and 240). \"Per delay\" divides by the delays "
                       "started in the window (EnterCount).%s%s",
                       clocks, s->o->window_ms, s->o->window_ms, s->o->repeat,
                       s->o->repeat == 1 ? "" : "s", table_mean_ms(s->table),
                       sim ? " Simulated clock: time jumps to the next deadline when every "
                             "process waits, and moves only by charged work; CPU figures are "
                             "real (what the simulation took)." : "", model);
}

/* What the report says before its tables (data: the sweep); the machine, version and
 * pin are in the context list that follows. */
void delay_report_prose(FILE *f, const bench_results *people, const void *data)
{
    const delay_sweep *s = data;
    fprintf(f, "# DelayBenchmark on stvm, beside the seed's\n\nThe seed: Pharo's "
               "DelayBenchmark in 2015 on a 32-bit Cog VM, the millisecond SmallInteger "
               "Delay code against the new microsecond one (boxed LargePositiveIntegers): "
               "128,507 against 101,227 delays scheduled per second (100%% / 79%%), 7.8 "
               "against 9.9 µs per delay. Below, each representation's ten rows of the seed "
               "beside stvm's at the same N, first on the simulated clock (a modelled cost "
               "per counted operation when --sim-cost is given, calibrated on the seed's "
               "ms-smallint31 peak), then on this machine's real clock (to N large enough to "
               "saturate it, when the sweep goes that far); then a seed-shaped summary, the "
               "mechanics as the counters state them, the seed's two questions answered with "
               "the figures, the per-N table and the targets (each miss with its reason).\n\n"
               "%s\n\nEvery figure of every run, with each repetition's sample, is in the JSON "
               "and CSV views (`--export-json`, `--export-csv`).\n\n", s->r.note);
}


void delay_results(delay_sweep *s)
{
    for (int ci = 0; ci < s->nclocks; ci++)
        for (int ri = 0; ri < s->nreprs; ri++)
            seed_beside_table(&s->r, s, ci, ri);
    for (int ci = 0; ci < s->nclocks; ci++) {
        summary_table(&s->r, s, ci);
        mechanics_table(&s->r, s, ci);
    }
    questions_table(&s->r, s);
    per_n_table(&s->r, s);
    for (int ci = 0; ci < s->nclocks; ci++)
        seed_table(&s->r, s, ci);
    delay_target dt[MAX_DELAY_TARGETS];
    int ntargets = add_targets(&s->r, s, dt, table_mean_ms(s->table));
    bench_judge(&s->r);
    explain_misses(&s->r, s, dt, ntargets);
    describe(&s->r, s);
}
