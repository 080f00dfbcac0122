/*
 * stvm-bench: printing results. The delay command's four formats (the seed-shaped text,
 * CSV, JSON, Markdown), its gnuplot files, and the JSON helpers both commands share.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON ------------------------------------------------------------------------------ */

void bench_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void bench_json_number(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("null", f);
    else if (v == floor(v) && fabs(v) < 1e15)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.6g", v);
}

void bench_json_context(FILE *f, const char *indent, const char *clock, int cpu)
{
    char model[256], kernel[256], date[64];
    bench_cpu_model(model, sizeof model);
    bench_kernel(kernel, sizeof kernel);
    bench_date_utc(date, sizeof date);
    fprintf(f, "{\n%s  \"tool\": \"stvm-bench\",\n%s  \"tool_version\": \"%s\",\n", indent,
            indent, STVM_VERSION_STRING);
    fprintf(f, "%s  \"library_version\": ", indent);
    bench_json_string(f, stvm_version_string());
    fprintf(f, ",\n%s  \"backend\": ", indent);
    bench_json_string(f, stvm_context_backend());
    fprintf(f, ",\n%s  \"clock\": ", indent);
    bench_json_string(f, clock);
    fprintf(f, ",\n%s  \"date\": ", indent);
    bench_json_string(f, date);
    fprintf(f, ",\n%s  \"cpu\": ", indent);
    bench_json_string(f, model);
    fprintf(f, ",\n%s  \"ncpu\": %d,\n%s  \"pinned_cpu\": ", indent, bench_ncpu(), indent);
    if (cpu >= 0)
        fprintf(f, "%d", cpu);
    else
        fputs("null", f);
    fprintf(f, ",\n%s  \"kernel\": ", indent);
    bench_json_string(f, kernel);
    fprintf(f, "\n%s}", indent);
}

/* ---- the delay summary ----------------------------------------------------------------- */

static const delay_cell *cell_at(const delay_report *r, int ni, int ri)
{
    return &r->cells[ni * r->nreprs + ri];
}

/* The cell of representation ri with the highest median rate, or NULL if all failed. */
static const delay_cell *peak_cell(const delay_report *r, int ri)
{
    const delay_cell *best = NULL;
    for (int ni = 0; ni < r->nns; ni++) {
        const delay_cell *c = cell_at(r, ni, ri);
        if (c->nsamples == 0)
            continue;
        if (!best || c->median.delays_per_second > best->median.delays_per_second)
            best = c;
    }
    return best;
}

static double peak_rate(const delay_report *r, int ri)
{
    const delay_cell *c = peak_cell(r, ri);
    return c ? c->median.delays_per_second : NAN;
}

static const char *clock_name(const delay_report *r)
{
    return r->sim ? "sim" : "real";
}

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
            const delay_cell *c = cell_at(r, ni, ri);
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
    fmt_num(b, n, peak_rate(r, ri), 0);
}

static void s_rel_rate(char *b, size_t n, const delay_report *r, int ri)
{
    fmt_num(b, n, 100.0 * peak_rate(r, ri) / peak_rate(r, 0), 0);
    if (strcmp(b, "-"))
        strncat(b, "%", n - strlen(b) - 1);
}

static void s_us(char *b, size_t n, const delay_report *r, int ri)
{
    fmt_num(b, n, 1e6 / peak_rate(r, ri), 2);
}

static void s_rel_us(char *b, size_t n, const delay_report *r, int ri)
{
    fmt_num(b, n, 100.0 * peak_rate(r, 0) / peak_rate(r, ri), 0);
    if (strcmp(b, "-"))
        strncat(b, "%", n - strlen(b) - 1);
}

static void s_peak_n(char *b, size_t n, const delay_report *r, int ri)
{
    const delay_cell *c = peak_cell(r, ri);
    if (c)
        snprintf(b, n, "%ld", c->n);
    else
        snprintf(b, n, "-");
}

#define PEAK_FIELD(fn, field, decimals)                                        \
    static void fn(char *b, size_t n, const delay_report *r, int ri)            \
    {                                                                          \
        const delay_cell *c = peak_cell(r, ri);                                \
        fmt_num(b, n, c ? c->median.field : NAN, decimals);                    \
    }
PEAK_FIELD(s_cpu, cpu_us_per_delay, 3)
PEAK_FIELD(s_boxed, boxed_per_delay, 2)
PEAK_FIELD(s_large, large_ops_per_delay, 2)
PEAK_FIELD(s_loops, loop_passes_per_delay, 3)
PEAK_FIELD(s_clock, clock_reads_per_delay, 3)
PEAK_FIELD(s_sleeps, idle_sleeps_per_delay, 3)
PEAK_FIELD(s_exit, exit_count, 0)

static void s_late(char *b, size_t n, const delay_report *r, int ri)
{
    const delay_cell *c = peak_cell(r, ri);
    if (c)
        snprintf(b, n, "%.0f / %.0f / %.0f", c->median.late_p50_us, c->median.late_p99_us,
                 c->median.late_max_us);
    else
        snprintf(b, n, "-");
}

static void s_early(char *b, size_t n, const delay_report *r, int ri)
{
    const delay_cell *c = peak_cell(r, ri);
    if (c)
        snprintf(b, n, "%.0f of %.0f", (double)c->median.early_samples,
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
    fprintf(f, "%8s  %-14s %10s %10s %9s %9s %9s %9s %8s %8s %8s %8s\n", "N", "repr",
            "delays/s", "exit", "CPU us/d", "boxed/d", "LI ops/d", "loops/d", "p50 us",
            "p99 us", "max us", "early");
    for (int ni = 0; ni < r->nns; ni++) {
        for (int ri = 0; ri < r->nreprs; ri++) {
            const delay_cell *c = cell_at(r, ni, ri);
            if (c->nsamples == 0) {
                fprintf(f, "%8ld  %-14s FAILED: %s\n", c->n, r->reprs[ri].name, c->error);
                continue;
            }
            const delay_sample *m = &c->median;
            fprintf(f, "%8ld  %-14s %10.0f %10llu %9.3f %9.2f %9.2f %9.3f %8.0f %8.0f %8.0f "
                       "%8llu\n",
                    c->n, r->reprs[ri].name, m->delays_per_second,
                    (unsigned long long)m->exit_count, m->cpu_us_per_delay, m->boxed_per_delay,
                    m->large_ops_per_delay, m->loop_passes_per_delay, m->late_p50_us,
                    m->late_p99_us, m->late_max_us, (unsigned long long)m->early_samples);
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
            const delay_cell *c = cell_at(r, ni, ri);
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
                    m->large_ops_per_delay, m->loop_passes_per_delay, m->late_p50_us,
                    m->late_p99_us, m->late_max_us, (unsigned long long)m->early_samples);
        }
    }
}

/* ---- the four formats ------------------------------------------------------------------- */

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

void delay_print_csv(FILE *f, const delay_report *r)
{
    fputs("repr,concurrency,delays_per_second,cpu_us_per_delay,boxed_per_delay,late_p99_us,"
          "exit_count,enter_count,exit_in_window,large_ops_per_delay,"
          "timing_loop_passes_per_delay,clock_reads_per_delay,delays_scheduled_per_delay,"
          "delays_expired_per_delay,context_switches_per_delay,idle_sleeps_per_delay,"
          "timer_fires_per_delay,late_p50_us,late_max_us,"
          "late_min_us,early_waits,wall_window_ms,cpu_window_ms,clock,window_ms,repeat,"
          "samples,status\n", f);
    for (int ni = 0; ni < r->nns; ni++) {
        for (int ri = 0; ri < r->nreprs; ri++) {
            const delay_cell *c = cell_at(r, ni, ri);
            const delay_sample *m = &c->median;
            if (c->nsamples == 0) {
                fprintf(f, "%s,%ld,,,,,,,,,,,,,,,,,,,,,,%s,%d,%d,0,failed\n", r->reprs[ri].name,
                        c->n, clock_name(r), r->window_ms, r->repeat);
                continue;
            }
            fprintf(f, "%s,%ld,%.1f,%.4f,%.4f,%.0f,%llu,%llu,%llu,%.4f,%.4f,%.4f,%.4f,%.4f,"
                       "%.4f,%.4f,%.4f,%.0f,%.0f,%.0f,%llu,%.1f,%.1f,%s,%d,%d,%d,%s\n",
                    r->reprs[ri].name, c->n, m->delays_per_second, m->cpu_us_per_delay,
                    m->boxed_per_delay, m->late_p99_us, (unsigned long long)m->exit_count,
                    (unsigned long long)m->enter_count, (unsigned long long)m->exit_in_window,
                    m->large_ops_per_delay, m->loop_passes_per_delay, m->clock_reads_per_delay,
                    m->scheduled_per_delay, m->expired_per_delay, m->switches_per_delay,
                    m->idle_sleeps_per_delay, m->timer_fires_per_delay,
                    m->late_p50_us, m->late_max_us, m->late_min_us,
                    (unsigned long long)m->early_samples, m->wall_window_ms, m->cpu_window_ms,
                    clock_name(r), r->window_ms, r->repeat, c->nsamples,
                    c->nsamples == r->repeat ? "ok" : "partial");
        }
    }
}

static void json_sample(FILE *f, const delay_sample *s)
{
    fputc('{', f);
    for (size_t i = 0; i < delay_nfields; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", delay_fields[i].name);
        bench_json_number(f, delay_field_get(s, &delay_fields[i]));
    }
    fputc('}', f);
}

void delay_print_json(FILE *f, const delay_report *r)
{
    fputs("{\n  \"schema\": \"stvm-bench/delay/1\",\n  \"context\": ", f);
    bench_json_context(f, "  ", clock_name(r), r->cpu);
    fprintf(f, ",\n  \"params\": {\"window_ms\": %d, \"drain_ms\": %d, \"repeat\": %d, "
               "\"seed\": %d, \"table_size\": %d, \"max_duration_ms\": %d, "
               "\"table_mean_ms\": %.3f, \"worker_priority\": 41, "
               "\"coordinator_priority\": 42, \"concurrency\": [",
            r->window_ms, r->window_ms, r->repeat, DELAY_SEED, DELAY_TABLE_SIZE, DELAY_MAX_MS,
            r->table_mean_ms);
    for (int ni = 0; ni < r->nns; ni++)
        fprintf(f, "%s%ld", ni ? ", " : "", r->ns[ni]);
    fputs("], \"representations\": [", f);
    for (int ri = 0; ri < r->nreprs; ri++) {
        fprintf(f, "%s{\"name\": \"%s\", \"delay_clock\": \"%s\", \"smallint_bits\": %d}",
                ri ? ", " : "", r->reprs[ri].name,
                r->reprs[ri].delay_clock == STVM_DELAY_CLOCK_MS ? "ms" : "us",
                r->reprs[ri].smallint_bits);
    }
    fputs("]},\n  \"results\": [\n", f);
    bool first = true;
    for (int ni = 0; ni < r->nns; ni++) {
        for (int ri = 0; ri < r->nreprs; ri++) {
            const delay_cell *c = cell_at(r, ni, ri);
            fprintf(f, "%s    {\"repr\": \"%s\", \"concurrency\": %ld, \"status\": \"%s\"",
                    first ? "" : ",\n", r->reprs[ri].name, c->n,
                    c->nsamples == 0 ? "failed"
                                     : (c->nsamples == r->repeat ? "ok" : "partial"));
            first = false;
            if (c->error[0]) {
                fputs(", \"error\": ", f);
                bench_json_string(f, c->error);
            }
            fputs(",\n     \"samples\": [", f);
            for (int k = 0; k < c->nsamples; k++) {
                fputs(k ? ",\n       " : "\n       ", f);
                json_sample(f, &c->samples[k]);
            }
            fputs("],\n     \"median\": ", f);
            if (c->nsamples)
                json_sample(f, &c->median);
            else
                fputs("null", f);
            fputc('}', f);
        }
    }
    fputs("\n  ],\n  \"summary\": [\n", f);
    for (int ri = 0; ri < r->nreprs; ri++) {
        const delay_cell *c = peak_cell(r, ri);
        double rate = peak_rate(r, ri), base = peak_rate(r, 0);
        fprintf(f, "    {\"repr\": \"%s\", \"peak_delays_per_second\": ", r->reprs[ri].name);
        bench_json_number(f, rate);
        fputs(", \"peak_concurrency\": ", f);
        bench_json_number(f, c ? (double)c->n : NAN);
        fputs(", \"relative_performance_pct\": ", f);
        bench_json_number(f, 100.0 * rate / base);
        fputs(", \"us_per_scheduled_delay\": ", f);
        bench_json_number(f, 1e6 / rate);
        fputs(", \"relative_time_pct\": ", f);
        bench_json_number(f, 100.0 * base / rate);
        fputs(", \"at_peak\": ", f);
        if (c)
            json_sample(f, &c->median);
        else
            fputs("null", f);
        fprintf(f, "}%s\n", ri + 1 < r->nreprs ? "," : "");
    }
    fputs("  ]\n}\n", f);
}

/* ---- gnuplot ---------------------------------------------------------------------------- */

/* A gnuplot single-quoted string ('' stands for a quote). */
static void gp_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

int delay_plot(const char *png, const delay_report *r)
{
    size_t len = strlen(png);
    const char *slash = strrchr(png, '/');
    const char *dot = strrchr(png, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - png) : len;
    char *gp = malloc(stem + 4), *dat = malloc(stem + 5);
    if (!gp || !dat) {
        free(gp);
        free(dat);
        return -1;
    }
    snprintf(gp, stem + 4, "%.*s.gp", (int)stem, png);
    snprintf(dat, stem + 5, "%.*s.dat", (int)stem, png);
    int rc = 0;

    FILE *d = fopen(dat, "w");
    if (!d) {
        fprintf(stderr, "stvm-bench: cannot write %s: %s\n", dat, strerror(errno));
        rc = -1;
        goto out;
    }
    fputs("# N; then delays per second for each representation; then CPU us per delay for"
          " each (medians; ? = failed)\n# N", d);
    for (int ri = 0; ri < r->nreprs; ri++)
        fprintf(d, " rate:%s", r->reprs[ri].name);
    for (int ri = 0; ri < r->nreprs; ri++)
        fprintf(d, " cpu:%s", r->reprs[ri].name);
    fputc('\n', d);
    for (int ni = 0; ni < r->nns; ni++) {
        fprintf(d, "%ld", r->ns[ni]);
        for (int ri = 0; ri < r->nreprs; ri++) {
            const delay_cell *c = cell_at(r, ni, ri);
            if (c->nsamples)
                fprintf(d, " %.1f", c->median.delays_per_second);
            else
                fputs(" ?", d);
        }
        for (int ri = 0; ri < r->nreprs; ri++) {
            const delay_cell *c = cell_at(r, ni, ri);
            if (c->nsamples && isfinite(c->median.cpu_us_per_delay))
                fprintf(d, " %.4f", c->median.cpu_us_per_delay);
            else
                fputs(" ?", d);
        }
        fputc('\n', d);
    }
    if (fclose(d) != 0) {
        fprintf(stderr, "stvm-bench: cannot write %s\n", dat);
        rc = -1;
        goto out;
    }

    FILE *g = fopen(gp, "w");
    if (!g) {
        fprintf(stderr, "stvm-bench: cannot write %s: %s\n", gp, strerror(errno));
        rc = -1;
        goto out;
    }
    fprintf(g, "# stvm-bench delay: delays per second (top) and CPU microseconds per delay "
               "(bottom)\n# against N, one line per representation.\n# Run: gnuplot ");
    gp_string(g, gp);
    fputs("\nif (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "    set terminal pngcairo size 960,900 noenhanced\n"
          "} else {\n"
          "    set terminal png size 960,900 noenhanced\n"
          "}\nset output ", g);
    gp_string(g, png);
    /* Two panels: the benchmark's figure (rate against N) above, its CPU cost below. */
    fprintf(g, "\nset multiplot layout 2,1 title 'DelayBenchmark on stvm %s (%s, %s clock, "
               "window %d ms, median of %d)'\n",
            stvm_version_string(), stvm_context_backend(), r->sim ? "simulated" : "real",
            r->window_ms, r->repeat);
    fprintf(g, "set xlabel 'concurrent delays (N processes)'\n"
               "set key top left\nset grid\nset yrange [0:*]\nset datafile missing '?'\n"
               "set ylabel 'delays per %ssecond'\nplot ",
            r->sim ? "simulated " : "");
    for (int ri = 0; ri < r->nreprs; ri++) {
        if (ri)
            fputs(", \\\n     ", g);
        gp_string(g, ri ? "" : dat);
        fprintf(g, " using 1:%d with linespoints lw 2 title '%s'", ri + 2, r->reprs[ri].name);
    }
    fputs("\nset ylabel 'CPU microseconds per delay'\nplot ", g);
    for (int ri = 0; ri < r->nreprs; ri++) {
        if (ri)
            fputs(", \\\n     ", g);
        gp_string(g, dat);
        fprintf(g, " using 1:%d with linespoints lw 2 title '%s'", r->nreprs + ri + 2,
                r->reprs[ri].name);
    }
    fputs("\nunset multiplot\n", g);
    if (fclose(g) != 0) {
        fprintf(stderr, "stvm-bench: cannot write %s\n", gp);
        rc = -1;
        goto out;
    }

    char *argv[] = {"gnuplot", gp, NULL};
    int st = bench_run(argv);
    if (st == 127)
        fprintf(stderr, "stvm-bench: note: gnuplot is not installed; kept %s and %s "
                        "(run 'gnuplot %s' to make %s)\n", gp, dat, gp, png);
    else if (st != 0)
        fprintf(stderr, "stvm-bench: gnuplot %s failed (status %d); kept %s and %s\n", gp, st,
                gp, dat);
    else
        fprintf(stderr, "stvm-bench: plot written to %s (%s, %s)\n", png, gp, dat);
out:
    free(gp);
    free(dat);
    return rc;
}
