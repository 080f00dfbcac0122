/*
 * stvm-bench: what the commands' charts share. Each chart is a .dat file of the
 * figures and a .gp script beside the PNG, so it can be remade or restyled without
 * rerunning the benchmark; then gnuplot, if it is installed.
 */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool bench_plot_paths_make(bench_plot_paths *p, const char *png)
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

void bench_plot_paths_free(bench_plot_paths *p)
{
    free(p->gp);
    free(p->dat);
    p->gp = p->dat = NULL;
}

bool bench_close_written(FILE *f, const char *path)
{
    if (fclose(f) == 0)
        return true;
    fprintf(stderr, "stvm-bench: cannot write %s\n", path);
    return false;
}

FILE *bench_open_written(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "stvm-bench: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

void bench_gp_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* A missing gnuplot is not a failure: the .gp and .dat files are the deliverable. */
void bench_run_gnuplot(const bench_plot_paths *p)
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

void bench_gp_terminal(FILE *g, const bench_plot_paths *p)
{
    fputs("# Run: gnuplot ", g);
    bench_gp_string(g, p->gp);
    fputs("\nif (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
          "    set terminal pngcairo size 960,900 noenhanced\n"
          "} else {\n"
          "    set terminal png size 960,900 noenhanced\n"
          "}\nset output ", g);
    bench_gp_string(g, p->png);
    fputc('\n', g);
}
