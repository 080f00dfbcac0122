/*
 * stvm-lab --png: a chart of who ran when, from the trace's SWITCH events: one row per
 * process (by id, downwards, named). The first panel runs across the event sequence
 * number: on the simulated clock most events share a time, and their order is what a
 * scenario teaches. When the run took simulated time, a second panel runs across time
 * (ms from the start), where sleeps and work show their length and a dot marks where
 * each run begins. gnuplot draws both from a data file of intervals.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "png.h"

/* One running interval per line: "row first_seq end_seq first_ms end_ms". */
static void interval(FILE *data, uint64_t row, const stvm_trace_event *from,
                     const stvm_trace_event *to, uint64_t start_us)
{
    fprintf(data, "%llu %llu %llu %.3f %.3f\n", (unsigned long long)row,
            (unsigned long long)from->seq, (unsigned long long)to->seq,
            (double)(from->time_us - start_us) / 1000, (double)(to->time_us - start_us) / 1000);
}

/* The intervals; *span_us is the time from the first event to the last. */
static int write_intervals(stvm_vm *vm, FILE *data, uint64_t *max_id, uint64_t *span_us)
{
    int64_t n = stvm_trace_count(vm);
    stvm_trace_event ev = {0}, since = {0}, first = {0};
    stvm_trace_get(vm, 0, &first);
    uint64_t running = 0;
    for (int64_t i = 0; i < n; i++) {
        stvm_trace_get(vm, (size_t)i, &ev);
        if (ev.kind != STVM_TRACE_SWITCH)
            continue;
        if (running)
            interval(data, running, &since, &ev, first.time_us);
        running = ev.object;
        since = ev;
        *max_id = ev.object > *max_id ? ev.object : *max_id;
    }
    if (running)
        interval(data, running, &since, &ev, first.time_us);
    *span_us = ev.time_us - first.time_us;
    return n > 0 ? 0 : -1;
}

/* A row's name: the process's, as the VM's trace knows it. */
static void vm_row_name(void *ctx, size_t row, char *name, size_t size)
{
    stvm_trace_process_name(ctx, row, name, size);
}

/* Replace what would end or escape a quoted gnuplot string. */
static void gnuplot_safe(char *s)
{
    for (; *s; s++)
        if (*s == '\'' || *s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
            *s = '_';
}

int lab_temp_file(char *path, size_t size, const char *suffix)
{
    const char *dir = getenv("TMPDIR");
    int n = snprintf(path, size, "%s/stvm-lab-XXXXXX%s", dir && *dir == '/' ? dir : "/tmp",
                     suffix);
    int fd = n > 0 && (size_t)n < size ? mkstemps(path, (int)strlen(suffix)) : -1;
    if (fd < 0)
        fprintf(stderr, "stvm-lab: cannot make a temporary file\n");
    return fd;
}

FILE *lab_png_data(char *path)
{
    int fd = lab_temp_file(path, LAB_PNG_DATA_PATH, "");
    FILE *data = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !data) {
        close(fd);
        unlink(path);
        fprintf(stderr, "stvm-lab: cannot write a temporary file\n");
    }
    return data;
}

int lab_png_draw(const char *path, const char *title, const char *data_path, size_t nrows,
                 bool timed, const char *time_title, lab_png_row_name *row_name, void *ctx)
{
    FILE *gp = popen("gnuplot", "w");
    if (!gp) {
        unlink(data_path);
        fprintf(stderr, "stvm-lab: cannot run gnuplot\n");
        return 1;
    }
    int panels = timed ? 2 : 1, height = 160 + 28 * (int)nrows;
    fprintf(gp, "set terminal pngcairo size 1000,%d\nset output '%s'\n", panels * height, path);
    fprintf(gp, "set multiplot layout %d,1\nset yrange [%zu.5:0.5]\nset grid xtics\nunset key\n",
            panels, nrows);
    fputs("set ytics (", gp);
    for (size_t row = 1; row <= nrows; row++) {
        char name[64];
        row_name(ctx, row, name, sizeof name);
        gnuplot_safe(name);
        fprintf(gp, "%s\"%s\" %zu", row > 1 ? ", " : "", name, row);
    }
    fputs(")\n", gp);
    char safe[128];
    snprintf(safe, sizeof safe, "%s", title);
    gnuplot_safe(safe);
    fprintf(gp, "set title '%s: who runs, event after event' noenhanced\n"
                "set xlabel 'trace event number'\n"
                "plot '%s' using 2:1:($3-$2):(0) with vectors nohead lw 14\n",
            safe, data_path);
    /* Across time, a process that ran for no time (on the simulated clock, everything
     * but work and sleep, unless the scenario sets costs) would have no bar at all: each
     * run also gets a dot where it begins, so that every process that ran has a mark. */
    if (timed)
        fprintf(gp, "set title '%s: who runs, %s' noenhanced\n"
                    "set xlabel 'ms from the start'\nset autoscale xfix\n"
                    "set offsets graph 0.02, graph 0.02, 0, 0\n"
                    "plot '%s' using 4:1:($5-$4):(0) with vectors nohead lw 14, "
                    "'' using 4:1 with points pt 7 ps 1.2\n",
                safe, time_title, data_path);
    fputs("unset multiplot\n", gp);
    int rc = pclose(gp);
    unlink(data_path);
    if (rc != 0) {
        fprintf(stderr, "stvm-lab: gnuplot failed (%d)\n", rc);
        return 1;
    }
    return 0;
}

int lab_png(stvm_vm *vm, const char *path, const char *title)
{
    char data_path[LAB_PNG_DATA_PATH];
    FILE *data = lab_png_data(data_path);
    if (!data)
        return 1;
    uint64_t max_id = 1, span_us = 0;
    int bad = write_intervals(vm, data, &max_id, &span_us);
    fclose(data);
    if (bad) {
        unlink(data_path);
        fprintf(stderr, "stvm-lab: the trace is empty\n");
        return 1;
    }
    return lab_png_draw(path, title, data_path, (size_t)max_id, span_us != 0,
                        "in simulated time", vm_row_name, vm);
}
