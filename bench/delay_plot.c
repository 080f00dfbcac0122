/*
 * stvm-bench delay: the chart. A .dat file of the medians and a .gp script beside the
 * PNG, so the chart can be remade or restyled without rerunning the benchmark; then
 * gnuplot, if it is installed.
 */
#include "delay_render.h"

#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct plot_paths {
    const char *png;
    char *gp, *dat;     /* the PNG's name with .gp and .dat for its extension */
} plot_paths;

static bool paths_make(plot_paths *p, const char *png)
{
    const char *slash = strrchr(png, '/'), *dot = strrchr(png, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - png) : strlen(png);
    p->png = png;
    p->gp = malloc(stem + 4);
    p->dat = malloc(stem + 5);
    if (!p->gp || !p->dat)
        return false;
    snprintf(p->gp, stem + 4, "%.*s.gp", (int)stem, png);
    snprintf(p->dat, stem + 5, "%.*s.dat", (int)stem, png);
    return true;
}

/* fclose with the message both files need; false if the file is not complete. */
static bool close_written(FILE *f, const char *path)
{
    if (fclose(f) == 0)
        return true;
    fprintf(stderr, "stvm-bench: cannot write %s\n", path);
    return false;
}

static FILE *open_written(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "stvm-bench: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

/* One line per N: the rate of each representation, then the CPU cost of each. */
static bool write_dat(const char *dat, const delay_report *r)
{
    FILE *d = open_written(dat);
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
    return close_written(d, dat);
}

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

static void gp_header(FILE *g, const plot_paths *p, const delay_report *r)
{
    fprintf(g, "# stvm-bench delay: delays per second (top) and CPU microseconds per delay "
               "(bottom)\n# against N, one line per representation.\n# Run: gnuplot ");
    gp_string(g, p->gp);
    fputs("\nif (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "    set terminal pngcairo size 960,900 noenhanced\n"
          "} else {\n"
          "    set terminal png size 960,900 noenhanced\n"
          "}\nset output ", g);
    gp_string(g, p->png);
    /* Two panels: the benchmark's figure (rate against N) above, its CPU cost below. */
    fprintf(g, "\nset multiplot layout 2,1 title 'DelayBenchmark on stvm %s (%s, %s clock, "
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
        gp_string(g, reuse && ri ? "" : dat);
        fprintf(g, " using 1:%d with linespoints lw 2 title '%s'", first_column + ri,
                r->reprs[ri].name);
    }
    fputc('\n', g);
}

static bool write_gp(const plot_paths *p, const delay_report *r)
{
    FILE *g = open_written(p->gp);
    if (!g)
        return false;
    gp_header(g, p, r);
    gp_panel(g, p->dat, r, 2, true);
    fputs("set ylabel 'CPU microseconds per delay'\n", g);
    gp_panel(g, p->dat, r, r->nreprs + 2, false);
    fputs("unset multiplot\n", g);
    return close_written(g, p->gp);
}

/* A missing gnuplot is not a failure: the .gp and .dat files are the deliverable. */
static void run_gnuplot(const plot_paths *p)
{
    char *argv[] = {"gnuplot", p->gp, NULL};
    int st = bench_run(argv);
    if (st == 127)
        fprintf(stderr, "stvm-bench: note: gnuplot is not installed; kept %s and %s "
                        "(run 'gnuplot %s' to make %s)\n", p->gp, p->dat, p->gp, p->png);
    else if (st != 0)
        fprintf(stderr, "stvm-bench: gnuplot %s failed (status %d); kept %s and %s\n", p->gp,
                st, p->gp, p->dat);
    else
        fprintf(stderr, "stvm-bench: plot written to %s (%s, %s)\n", p->png, p->gp, p->dat);
}

int delay_plot(const char *png, const delay_report *r)
{
    plot_paths p = {0};
    bool ok = paths_make(&p, png) && write_dat(p.dat, r) && write_gp(&p, r);
    if (ok)
        run_gnuplot(&p);
    free(p.gp);
    free(p.dat);
    return ok ? 0 : -1;
}
