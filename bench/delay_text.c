/*
 * stvm-bench delay: the report for people. The seed's own "#ConcurrentDelays: N .
 * Count: C per second" lines, a summary shaped like the seed's (peak over N, relative
 * performance, per-delay costs at the peak), and a per-N table; as aligned text or as
 * Markdown.
 */
#include "delay_render.h"

#include "bench.h"

#include <math.h>
#include <string.h>

static void describe_run(FILE *f, const delay_report *r, const char *prefix)
{
    char model[256];
    bench_cpu_model(model, sizeof model);
    fprintf(f, "%sDelayBenchmark on stvm %s (%s back end), %s clock, window %d ms + drain "
               "%d ms, %d repetition%s per cell (medians), ",
            prefix, stvm_version_string(), stvm_context_backend(),
            r->sim ? "simulated" : "real", r->window_ms, r->window_ms, r->repeat,
            r->repeat == 1 ? "" : "s");
    if (r->cpu >= 0)
        fprintf(f, "pinned to CPU %d", r->cpu);
    else
        fputs("not pinned", f);
    fprintf(f, ", %s, %d CPUs.\n", model, bench_ncpu());
    fprintf(f, "%sDurations: 1000 draws of (Random seed: 42) nextInt: 50, mean %.3f ms; "
               "workers at priority 41, coordinator at 42. Lateness = end of wait - (start "
               "+ duration), two stvm_now_us reads per delay (in the CPU figures).\n",
            prefix, r->table_mean_ms);
    if (r->sim)
        fprintf(f, "%sSimulated clock: time jumps to the next deadline when every process "
                   "waits, so counts are per simulated second and measure pure CPU cost; "
                   "CPU figures are real.\n", prefix);
}

static void seed_lines(FILE *f, const delay_report *r)
{
    for (int ri = 0; ri < r->nreprs; ri++) {
        fprintf(f, "DelayBenchmark %s...\n", r->reprs[ri].name);
        for (int ni = 0; ni < r->nns; ni++) {
            const delay_cell *c = delay_report_cell(r, ni, ri);
            if (c->nsamples == 0)
                fprintf(f, "#ConcurrentDelays: %ld . Count: FAILED (%s)\n", c->n, c->error);
            else
                fprintf(f, "#ConcurrentDelays: %ld . Count: %.0f per second\n", c->n,
                        c->median.delays_per_second);
        }
    }
}

/* One row of the seed-shaped summary: a label and a value per representation. */
typedef void (*summary_cell_fn)(char *buf, size_t size, const delay_report *r, int ri);

static void fmt_num(char *buf, size_t size, double v, int decimals)
{
    if (isfinite(v))
        snprintf(buf, size, "%.*f", decimals, v);
    else
        snprintf(buf, size, "-");
}

static void s_rate(char *b, size_t n, const delay_report *r, int ri)
{
    fmt_num(b, n, delay_report_peak_rate(r, ri), 0);
}

static void s_rel_rate(char *b, size_t n, const delay_report *r, int ri)
{
    fmt_num(b, n, 100.0 * delay_report_peak_rate(r, ri) / delay_report_peak_rate(r, 0), 0);
    if (strcmp(b, "-"))
        strncat(b, "%", n - strlen(b) - 1);
}

static void s_us(char *b, size_t n, const delay_report *r, int ri)
{
    fmt_num(b, n, 1e6 / delay_report_peak_rate(r, ri), 2);
}

static void s_rel_us(char *b, size_t n, const delay_report *r, int ri)
{
    fmt_num(b, n, 100.0 * delay_report_peak_rate(r, 0) / delay_report_peak_rate(r, ri), 0);
    if (strcmp(b, "-"))
        strncat(b, "%", n - strlen(b) - 1);
}

static void s_peak_n(char *b, size_t n, const delay_report *r, int ri)
{
    const delay_cell *c = delay_report_peak(r, ri);
    if (c)
        snprintf(b, n, "%ld", c->n);
    else
        snprintf(b, n, "-");
}

#define PEAK_FIELD(fn, field, decimals)                                        \
    static void fn(char *b, size_t n, const delay_report *r, int ri)            \
    {                                                                          \
        const delay_cell *c = delay_report_peak(r, ri);                                \
        fmt_num(b, n, c ? c->median.field : NAN, decimals);                    \
    }
PEAK_FIELD(s_cpu, cpu_us_per_delay, 3)
PEAK_FIELD(s_boxed, boxed_per_delay, 2)
PEAK_FIELD(s_large, large_ops_per_delay, 2)
PEAK_FIELD(s_loops, timing_loop_passes_per_delay, 3)
PEAK_FIELD(s_clock, clock_reads_per_delay, 3)
PEAK_FIELD(s_sleeps, idle_sleeps_per_delay, 3)
PEAK_FIELD(s_exit, exit_count, 0)

static void s_late(char *b, size_t n, const delay_report *r, int ri)
{
    const delay_cell *c = delay_report_peak(r, ri);
    if (c)
        snprintf(b, n, "%.0f / %.0f / %.0f", c->median.late_p50_us, c->median.late_p99_us,
                 c->median.late_max_us);
    else
        snprintf(b, n, "-");
}

static void s_early(char *b, size_t n, const delay_report *r, int ri)
{
    const delay_cell *c = delay_report_peak(r, ri);
    if (c)
        snprintf(b, n, "%.0f of %.0f", (double)c->median.early_waits,
                 (double)c->median.late_samples);
    else
        snprintf(b, n, "-");
}

/* Labels: plain ASCII for the aligned text table, with units spelled out in Markdown. */
static const struct {
    const char *label;
    const char *md_label;
    summary_cell_fn fn;
} summary_rows[] = {
    {"delays scheduled per second (peak)", "delays scheduled per second (peak over N)", s_rate},
    {"relative performance", "relative performance", s_rel_rate},
    {"microseconds per scheduled delay", "µs per scheduled delay (1e6 / peak)", s_us},
    {"relative performance (time)", "relative performance (time)", s_rel_us},
    {"peak at N", "peak at N", s_peak_n},
    {"ExitCount at peak N", "ExitCount at peak N", s_exit},
    {"CPU us per delay (at peak N)", "CPU µs per delay (at peak N)", s_cpu},
    {"boxed allocations per delay", "boxed allocations per delay", s_boxed},
    {"LargeInteger ops per delay", "LargeInteger ops per delay", s_large},
    {"timing loop passes per delay", "timing loop passes per delay", s_loops},
    {"clock reads per delay", "clock reads per delay", s_clock},
    {"idle sleeps (kernel waits) per delay", "idle sleeps (kernel waits) per delay", s_sleeps},
    {"lateness p50 / p99 / max us", "lateness p50 / p99 / max [µs]", s_late},
    {"waits ended early (ms clock)", "waits that ended early (ms scheduler)", s_early},
};
#define NSUMMARY ((int)(sizeof summary_rows / sizeof summary_rows[0]))

static void summary_text(FILE *f, const delay_report *r)
{
    fprintf(f, "%-36s", "");
    for (int ri = 0; ri < r->nreprs; ri++)
        fprintf(f, " %24s", r->reprs[ri].name);
    fputc('\n', f);
    for (int k = 0; k < NSUMMARY; k++) {
        fprintf(f, "%-36s", summary_rows[k].label);
        for (int ri = 0; ri < r->nreprs; ri++) {
            char b[64];
            summary_rows[k].fn(b, sizeof b, r, ri);
            fprintf(f, " %24s", b);
        }
        fputc('\n', f);
    }
}

static void summary_markdown(FILE *f, const delay_report *r)
{
    fputs("| |", f);
    for (int ri = 0; ri < r->nreprs; ri++)
        fprintf(f, " %s |", r->reprs[ri].name);
    fputs("\n|---|", f);
    for (int ri = 0; ri < r->nreprs; ri++)
        fputs("---:|", f);
    fputc('\n', f);
    for (int k = 0; k < NSUMMARY; k++) {
        fprintf(f, "| %s |", summary_rows[k].md_label);
        for (int ri = 0; ri < r->nreprs; ri++) {
            char b[64];
            summary_rows[k].fn(b, sizeof b, r, ri);
            fprintf(f, " %s |", b);
        }
        fputc('\n', f);
    }
}

/* ---- per-N tables ----------------------------------------------------------------------- */

static void per_n_text(FILE *f, const delay_report *r)
{
    int w = 14;   /* as wide as the longest name ("us-smallint61@slack1000" with slacks) */
    for (int ri = 0; ri < r->nreprs; ri++)
        if ((int)strlen(r->reprs[ri].name) > w)
            w = (int)strlen(r->reprs[ri].name);
    fprintf(f, "%8s  %-*s %10s %10s %9s %9s %9s %9s %8s %8s %8s %8s\n", "N", w, "repr",
            "delays/s", "exit", "CPU us/d", "boxed/d", "LI ops/d", "loops/d", "p50 us",
            "p99 us", "max us", "early");
    for (int ni = 0; ni < r->nns; ni++) {
        for (int ri = 0; ri < r->nreprs; ri++) {
            const delay_cell *c = delay_report_cell(r, ni, ri);
            if (c->nsamples == 0) {
                fprintf(f, "%8ld  %-*s FAILED: %s\n", c->n, w, r->reprs[ri].name, c->error);
                continue;
            }
            const delay_sample *m = &c->median;
            fprintf(f, "%8ld  %-*s %10.0f %10llu %9.3f %9.2f %9.2f %9.3f %8.0f %8.0f %8.0f "
                       "%8llu\n",
                    c->n, w, r->reprs[ri].name, m->delays_per_second,
                    (unsigned long long)m->exit_count, m->cpu_us_per_delay, m->boxed_per_delay,
                    m->large_ops_per_delay, m->timing_loop_passes_per_delay, m->late_p50_us,
                    m->late_p99_us, m->late_max_us, (unsigned long long)m->early_waits);
        }
    }
}

static void per_n_markdown(FILE *f, const delay_report *r)
{
    fputs("| N | representation | delays/s | ExitCount | CPU µs/delay | boxed/delay | "
          "LargeInteger ops/delay | loop passes/delay | lateness p50 [µs] | p99 [µs] | "
          "max [µs] | early |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
          f);
    for (int ni = 0; ni < r->nns; ni++) {
        for (int ri = 0; ri < r->nreprs; ri++) {
            const delay_cell *c = delay_report_cell(r, ni, ri);
            if (c->nsamples == 0) {
                fprintf(f, "| %ld | %s | failed: %s | | | | | | | | | |\n", c->n,
                        r->reprs[ri].name, c->error);
                continue;
            }
            const delay_sample *m = &c->median;
            fprintf(f, "| %ld | %s | %.0f | %llu | %.3f | %.2f | %.2f | %.3f | %.0f | %.0f | "
                       "%.0f | %llu |\n",
                    c->n, r->reprs[ri].name, m->delays_per_second,
                    (unsigned long long)m->exit_count, m->cpu_us_per_delay, m->boxed_per_delay,
                    m->large_ops_per_delay, m->timing_loop_passes_per_delay, m->late_p50_us,
                    m->late_p99_us, m->late_max_us, (unsigned long long)m->early_waits);
        }
    }
}

/* ---- the two formats ------------------------------------------------------------------- */

void delay_print_text(FILE *f, const delay_report *r)
{
    describe_run(f, r, "");
    fputc('\n', f);
    seed_lines(f, r);
    fprintf(f, "\nSummary (peak over N; per-delay figures at the peak N%s)\n",
            r->sim ? "; simulated clock" : "");
    summary_text(f, r);
    fprintf(f, "\nPer N (medians over %d repetition%s; per delay = per delay started in the "
               "window)\n", r->repeat, r->repeat == 1 ? "" : "s");
    per_n_text(f, r);
}

void delay_print_markdown(FILE *f, const delay_report *r)
{
    fputs("# DelayBenchmark on stvm\n\n", f);
    describe_run(f, r, "");
    fputs("\n## Summary\n\nPeak over N for each representation (the first is 100%); the "
          "per-delay figures are at the peak N.\n\n", f);
    summary_markdown(f, r);
    fprintf(f, "\n## Per N\n\nMedians over %d repetition%s. \"Per delay\" divides by the "
               "delays started in the window (EnterCount).\n\n",
            r->repeat, r->repeat == 1 ? "" : "s");
    per_n_markdown(f, r);
    fputs("\n## In the seed's words\n\n```\n", f);
    seed_lines(f, r);
    fputs("```\n", f);
}
