/*
 * stvm-bench delay: the chart. A .dat file of the medians and a .gp script beside the
 * PNG, so the chart can be remade or restyled without rerunning the benchmark; then
 * gnuplot, if it is installed.
 */
#include "delay_render.h"

#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One line per N: the rate of each representation, then the CPU cost of each. */
static bool write_dat(const char *dat, const delay_report *r)
{
    FILE *d = bench_open_written(dat);
    if (!d)
        return false;
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
            const delay_cell *c = delay_report_cell(r, ni, ri);
            if (c->nsamples)
                fprintf(d, " %.1f", c->median.delays_per_second);
            else
                fputs(" ?", d);
        }
        for (int ri = 0; ri < r->nreprs; ri++) {
            const delay_cell *c = delay_report_cell(r, ni, ri);
            if (c->nsamples && isfinite(c->median.cpu_us_per_delay))
                fprintf(d, " %.4f", c->median.cpu_us_per_delay);
            else
                fputs(" ?", d);
        }
        fputc('\n', d);
    }
    return bench_close_written(d, dat);
}

static void gp_header(FILE *g, const bench_plot_paths *p, const delay_report *r)
{
    fprintf(g, "# stvm-bench delay: delays per second (top) and CPU microseconds per delay "
               "(bottom)\n# against N, one line per representation.\n");
    bench_gp_terminal(g, p);
    /* Two panels: the benchmark's figure (rate against N) above, its CPU cost below. */
    fprintf(g, "set multiplot layout 2,1 title 'DelayBenchmark on stvm %s (%s, %s clock, "
               "window %d ms, median of %d)'\n",
            stvm_version_string(), stvm_context_backend(), r->sim ? "simulated" : "real",
            r->window_ms, r->repeat);
    fprintf(g, "set xlabel 'concurrent delays (N processes)'\n"
               "set key top left\nset grid\nset yrange [0:*]\nset datafile missing '?'\n"
               "set ylabel 'delays per %ssecond'\n",
            r->sim ? "simulated " : "");
}

/* One line per representation from the .dat columns starting at first_column. The
 * rate panel names the file once ('' reuses it), as the original script did. */
static void gp_panel(FILE *g, const char *dat, const delay_report *r, int first_column,
                     bool reuse)
{
    fputs("plot ", g);
    for (int ri = 0; ri < r->nreprs; ri++) {
        if (ri)
            fputs(", \\\n     ", g);
        bench_gp_string(g, reuse && ri ? "" : dat);
        fprintf(g, " using 1:%d with linespoints lw 2 title '%s'", first_column + ri,
                r->reprs[ri].name);
    }
    fputc('\n', g);
}

static bool write_gp(const bench_plot_paths *p, const delay_report *r)
{
    FILE *g = bench_open_written(p->gp);
    if (!g)
        return false;
    gp_header(g, p, r);
    gp_panel(g, p->dat, r, 2, true);
    fputs("set ylabel 'CPU microseconds per delay'\n", g);
    gp_panel(g, p->dat, r, r->nreprs + 2, false);
    fputs("unset multiplot\n", g);
    return bench_close_written(g, p->gp);
}

int delay_plot(const char *png, const delay_report *r)
{
    bench_plot_paths p = {0};
    bool ok = bench_plot_paths_make(&p, png) && write_dat(p.dat, r) && write_gp(&p, r);
    if (ok)
        bench_run_gnuplot(&p);
    bench_plot_paths_free(&p);
    return ok ? 0 : -1;
}
