/*
 * stvm-bench: plots and reports. A plot is a gnuplot script of bench/plots reading the
 * results' csv-wide view, written beside the PNG, so a user restyles it without C and
 * remakes it without rerunning the benchmark; a report is prose and the Markdown view.
 */
#include "bench.h"
#include "render.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The prose (NULL: none) and the view fmt of r into path; false with a message when the
 * file cannot be written whole. */
static bool write_view(const char *path, bench_fmt fmt, const bench_results *r,
                       const bench_invocation *inv,
                       void (*prose)(FILE *, const bench_results *, const void *),
                       const void *data)
{
    FILE *f = fopen(path, "w");
    if (f && prose)
        prose(f, r, data);
    if (f)
        bench_render(f, fmt, r, inv);
    if (f && fclose(f) == 0)
        return true;
    fprintf(stderr, "stvm-bench %s: cannot write %s: %s\n", inv->command->name, path,
            strerror(errno));
    return false;
}

/* A gnuplot single-quoted string into buf ('' stands for a quote). */
static void gp_quote(char *buf, size_t size, const char *s)
{
    size_t n = 0;
    buf[n++] = '\'';
    for (; *s && n + 3 < size; s++) {
        if (*s == '\'')
            buf[n++] = '\'';
        buf[n++] = *s;
    }
    buf[n++] = '\'';
    buf[n] = 0;
}

/* The script's path: $STVM_PLOTS_DIR, the build tree's bench/plots, the installed
 * share/stvm/plots; false when none holds it. */
static bool find_script(const char *script, char *path, size_t size)
{
    char exe[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    const char *env = getenv("STVM_PLOTS_DIR");
    const char *const dirs[][2] = {{env ? env : "", ""}, {exe, "/../bench/plots"},
                                   {exe, "/../share/stvm/plots"}};
    for (int i = 0; i < 3; i++) {
        if (!*dirs[i][0])
            continue;
        snprintf(path, size, "%s%s/%s", dirs[i][0], dirs[i][1], script);
        if (access(path, R_OK) == 0)
            return true;
    }
    return false;
}

bool bench_plot(const bench_results *r, const bench_invocation *inv, const char *script,
                const char *png)
{
    const char *slash = strrchr(png, '/'), *dot = strrchr(png, '.');
    int stem = dot && (!slash || dot > slash) ? (int)(dot - png) : (int)strlen(png);
    char csv[4096], path[4096], qcsv[8200], qpng[8200], expr[16600];
    snprintf(csv, sizeof csv, "%.*s.csv", stem, png);
    if (!write_view(csv, BENCH_FMT_CSV_WIDE, r, inv, NULL, NULL))
        return false;
    if (!find_script(script, path, sizeof path)) {
        fprintf(stderr, "stvm-bench %s: note: no gnuplot script %s (set STVM_PLOTS_DIR); "
                        "kept %s\n", inv->command->name, script, csv);
        return true;
    }
    gp_quote(qcsv, sizeof qcsv, csv);
    gp_quote(qpng, sizeof qpng, png);
    snprintf(expr, sizeof expr, "datafile=%s; outfile=%s", qcsv, qpng);
    char *argv[] = {"gnuplot", "-e", expr, path, NULL};
    int st = bench_run(argv);
    if (st == 127)
        fprintf(stderr, "stvm-bench %s: note: gnuplot is not installed; kept %s (run "
                        "gnuplot -e \"%s\" %s)\n", inv->command->name, csv, expr, path);
    else if (st != 0)
        fprintf(stderr, "stvm-bench %s: note: gnuplot %s failed (status %d); kept %s\n",
                inv->command->name, path, st, csv);
    else
        fprintf(stderr, "stvm-bench %s: plot written to %s (data %s)\n", inv->command->name,
                png, csv);
    return true;
}

bool bench_report(const char *path, const bench_results *r, const bench_invocation *inv,
                  void (*prose)(FILE *, const bench_results *, const void *), const void *data)
{
    fflush(stdout);
    if (!write_view(path, BENCH_FMT_MARKDOWN, r, inv, prose, data))
        return false;
    fprintf(stderr, "stvm-bench %s: report written to %s\n", inv->command->name, path);
    return true;
}
