/*
 * show --png: who runs, from a trace's running spans, in the layout of run --png
 * (lab/png.c): one row per process, a panel across the event sequence and, when the
 * trace took time, one across ms from the start. lab/png.c reads a live VM's ring; this
 * reads the spans of a JSON file, so both draw the same picture of the same run.
 */
#include "png_trace.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lab_png_trace(const lab_trace *t, const char *path, const char *title)
{
    char data_path[] = "/tmp/stvm-lab-XXXXXX";
    int fd = mkstemp(data_path);
    FILE *data = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!data) {
        fprintf(stderr, "stvm-lab: cannot make a temporary file\n");
        return 1;
    }
    uint64_t span_ns = 0;
    size_t running = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        const lab_span *s = &t->spans[i];
        span_ns = s->ns1 > span_ns ? s->ns1 : span_ns;
        if (s->state != LAB_RUNNING)
            continue;
        fprintf(data, "%u %llu %llu %.3f %.3f\n", s->track + 1, (unsigned long long)s->seq0,
                (unsigned long long)s->seq1, (double)s->ns0 / 1e6, (double)s->ns1 / 1e6);
        running++;
    }
    fclose(data);
    FILE *gp = running ? popen("gnuplot", "w") : NULL;
    if (!gp) {
        unlink(data_path);
        fprintf(stderr, "stvm-lab: %s\n", running ? "cannot run gnuplot" : "no process runs in this trace");
        return 1;
    }
    int panels = span_ns ? 2 : 1, height = 160 + 28 * (int)t->ntracks;
    fprintf(gp, "set terminal pngcairo size 1000,%d\nset output '%s'\n", panels * height, path);
    fprintf(gp, "set multiplot layout %d,1\nset yrange [%zu.5:0.5]\nset grid xtics\nunset key\n",
            panels, t->ntracks);
    fputs("set ytics (", gp);
    for (size_t k = 0; k < t->ntracks; k++) {
        fputs(k ? ", \"" : "\"", gp);
        for (const char *c = t->tracks[k].name; *c; c++)   /* names come from the file */
            fputc(*c == '"' || *c == '\\' || (unsigned char)*c < 0x20 ? '\'' : *c, gp);
        fprintf(gp, "\" %zu", k + 1);
    }
    fputs(")\n", gp);
    char safe[128];
    snprintf(safe, sizeof safe, "%s", title);
    for (char *c = safe; *c; c++)
        if (*c == '\'' || *c == '\\' || (unsigned char)*c < 0x20)
            *c = '_';
    fprintf(gp, "set title '%s: who runs, event after event' noenhanced\n"
                "set xlabel 'trace event number'\n"
                "plot '%s' using 2:1:($3-$2):(0) with vectors nohead lw 14\n",
            safe, data_path);
    if (span_ns)
        fprintf(gp, "set title '%s: who runs, in time' noenhanced\n"
                    "set xlabel 'ms from the start'\n"
                    "plot '%s' using 4:1:($5-$4):(0) with vectors nohead lw 14\n",
                safe, data_path);
    fputs("unset multiplot\n", gp);
    int rc = pclose(gp);
    unlink(data_path);
    if (rc != 0) {
        fprintf(stderr, "stvm-lab: gnuplot failed (%d)\n", rc);
        return 1;
    }
    return 0;
}
