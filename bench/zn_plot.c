/*
 * stvm-bench zn: the chart. Requests per second against the subscriber's cost per
 * event, one line per idle mode (and per combination of the other knobs), with the
 * same configuration's logging-off rate dashed beside it; below, the blocked first
 * reads per request of the same rows, the mechanism's evidence.
 */
#include "zn_render.h"

#include "bench.h"

#include <math.h>
#include <string.h>

#define MAX_LINES 24

/* A line: the subscriber rows that differ only in their cost. */
typedef struct zn_line {
    zn_config key;                  /* cost zeroed */
    char label[96];
} zn_line;

static zn_config line_key(const zn_config *k)
{
    zn_config key = *k;
    key.subscriber_cost_us = 0;
    return key;
}

static int find_lines(const zn_report *r, zn_line *lines)
{
    int n = 0;
    for (int i = 0; i < r->nrows && n < MAX_LINES; i++) {
        const zn_row *row = &r->rows[i];
        if (row->cfg.logging != ZN_LOGGING_SUBSCRIBER || !row->nsamples)
            continue;
        zn_config key = line_key(&row->cfg);
        int k = 0;
        while (k < n && !zn_config_equal(&lines[k].key, &key))
            k++;
        if (k < n)
            continue;
        lines[n].key = key;
        snprintf(lines[n].label, sizeof lines[n].label, "%s %u us%s%s%s",
                 zn_idle_mode_name(key.idle_mode), key.idle_us,
                 key.subscriber_events == ZN_EVENTS_ALL ? "" : " ",
                 key.subscriber_events == ZN_EVENTS_ALL ? "" : zn_events_name(key.subscriber_events),
                 key.wake_inject_us ? " inject" : "");
        n++;
    }
    return n;
}

/* One block per line (gnuplot's index): cost, rate, the off rate, blocked first reads. */
static bool write_dat(const char *dat, const zn_report *r, const zn_line *lines, int n)
{
    FILE *d = bench_open_written(dat);
    if (!d)
        return false;
    fputs("# per line (blocks separated by two blank lines): subscriber cost us, requests/s, "
          "the same configuration's requests/s with logging off, blocked first reads per "
          "request (medians; ? = not run)\n", d);
    for (int l = 0; l < n; l++) {
        fprintf(d, "# %s\n", lines[l].label);
        zn_config off = lines[l].key;
        off.logging = ZN_LOGGING_OFF;
        off.subscriber_events = ZN_EVENTS_ALL;
        const zn_row *o = zn_find_row(r, &off);
        for (int i = 0; i < r->nrows; i++) {
            const zn_row *row = &r->rows[i];
            zn_config key = line_key(&row->cfg);
            if (!row->nsamples || !zn_config_equal(&key, &lines[l].key))
                continue;
            fprintf(d, "%u %.1f ", row->cfg.subscriber_cost_us, row->fig[ZN_FIG_RPS]);
            if (o)
                fprintf(d, "%.1f", o->fig[ZN_FIG_RPS]);
            else
                fputc('?', d);
            fprintf(d, " %.4f\n", row->fig[ZN_FIG_BLOCKED_FIRST]);
        }
        fputs("\n\n", d);
    }
    return bench_close_written(d, dat);
}

static void gp_panel(FILE *g, const char *dat, const zn_line *lines, int n, bool rate)
{
    fputs("plot ", g);
    for (int l = 0; l < n; l++) {
        fputs(l ? ", \\\n     " : "", g);
        bench_gp_string(g, dat);
        fprintf(g, " index %d using 1:%d with linespoints lw 2 lc %d title ", l, rate ? 2 : 4,
                l + 1);
        bench_gp_string(g, lines[l].label);
        if (!rate)
            continue;
        fputs(", \\\n     ", g);
        bench_gp_string(g, dat);
        fprintf(g, " index %d using 1:3 with lines dt 2 lc %d title ", l, l + 1);
        char off[128];
        snprintf(off, sizeof off, "%s, logging off", lines[l].label);
        bench_gp_string(g, off);
    }
    fputc('\n', g);
}

static bool write_gp(const bench_plot_paths *p, const zn_report *r, const zn_line *lines,
                     int n)
{
    FILE *g = bench_open_written(p->gp);
    if (!g)
        return false;
    fputs("# stvm-bench zn: requests per second (top) and blocked first reads per request\n"
          "# (bottom) against the subscriber's cost per event, one line per idle mode.\n", g);
    bench_gp_terminal(g, p);
    fprintf(g, "set multiplot layout 2,1 title 'ZnClient experiment on stvm %s: GET of a "
               "%zu-byte file from nginx, median of %d'\n", stvm_version_string(),
            r->body_size, r->repeat);
    fputs("set xlabel 'subscriber cost per event (us)'\nset key outside right\nset grid\n"
          "set lmargin at screen 0.12\nset rmargin at screen 0.66\n"
          "set yrange [0:*]\nset datafile missing '?'\nset ylabel 'requests per second'\n", g);
    gp_panel(g, p->dat, lines, n, true);
    fputs("set ylabel 'blocked first reads per request'\nset yrange [0:*]\n", g);
    gp_panel(g, p->dat, lines, n, false);
    fputs("unset multiplot\n", g);
    return bench_close_written(g, p->gp);
}

int zn_plot(const char *png, const zn_report *r)
{
    zn_line lines[MAX_LINES];
    int n = find_lines(r, lines);
    if (!n) {
        fprintf(stderr, "stvm-bench: zn: no subscriber rows to plot (--logging subscriber)\n");
        return -1;
    }
    bench_plot_paths p = {0};
    bool ok = bench_plot_paths_make(&p, png) && write_dat(p.dat, r, lines, n) &&
              write_gp(&p, r, lines, n);
    if (ok)
        bench_run_gnuplot(&p);
    bench_plot_paths_free(&p);
    return ok ? 0 : -1;
}
