/*
 * stvm-lab --png: a chart of who ran when, from the trace's SWITCH events: one row per
 * process (by id, downwards, named), and across the event sequence number. On the
 * simulated clock everything but the idle process's sleeps takes no time at all, so a
 * time axis would show one column; the order is what a scenario teaches. gnuplot draws
 * it from a data file of intervals.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "png.h"

/* One running interval per line: "row first_seq end_seq". */
static int write_intervals(stvm_vm *vm, FILE *data, uint64_t *max_id)
{
    int64_t n = stvm_trace_count(vm);
    stvm_trace_event ev = {0};
    uint64_t running = 0, since = 0;
    for (int64_t i = 0; i < n; i++) {
        stvm_trace_get(vm, (size_t)i, &ev);
        if (ev.kind != STVM_TRACE_SWITCH)
            continue;
        if (running)
            fprintf(data, "%llu %llu %llu\n", (unsigned long long)running,
                    (unsigned long long)since, (unsigned long long)ev.seq);
        running = ev.object;
        since = ev.seq;
        *max_id = ev.object > *max_id ? ev.object : *max_id;
    }
    if (running)
        fprintf(data, "%llu %llu %llu\n", (unsigned long long)running, (unsigned long long)since,
                (unsigned long long)ev.seq);
    return n > 0 ? 0 : -1;
}

/* The rows' labels: each process's name. */
static void name_rows(stvm_vm *vm, FILE *gp, uint64_t max_id)
{
    fputs("set ytics (", gp);
    for (uint64_t id = 1; id <= max_id; id++) {
        char name[64];
        stvm_trace_process_name(vm, id, name, sizeof name);
        for (char *c = name; *c; c++)
            if (*c == '"' || *c == '\\')
                *c = '\'';
        fprintf(gp, "%s\"%s\" %llu", id > 1 ? ", " : "", name, (unsigned long long)id);
    }
    fputs(")\n", gp);
}

int lab_png(stvm_vm *vm, const char *path, const char *title)
{
    char data_path[] = "/tmp/stvm-lab-XXXXXX";
    int fd = mkstemp(data_path);
    FILE *data = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!data) {
        fprintf(stderr, "stvm-lab: cannot make a temporary file\n");
        return 1;
    }
    uint64_t max_id = 1;
    int bad = write_intervals(vm, data, &max_id);
    fclose(data);
    FILE *gp = bad ? NULL : popen("gnuplot", "w");
    if (!gp) {
        unlink(data_path);
        fprintf(stderr, "stvm-lab: %s\n", bad ? "the trace is empty" : "cannot run gnuplot");
        return 1;
    }
    fprintf(gp, "set terminal pngcairo size 1000,%d\nset output '%s'\n",
            160 + 28 * (int)max_id, path);
    fprintf(gp, "set title '%s: who runs, event after event' noenhanced\n"
                "set xlabel 'trace event number'\nset yrange [%llu.5:0.5]\n"
                "set grid xtics\nunset key\n",
            title, (unsigned long long)max_id);
    name_rows(vm, gp, max_id);
    fprintf(gp, "plot '%s' using 2:1:($3-$2):(0) with vectors nohead lw 14\n", data_path);
    int rc = pclose(gp);
    unlink(data_path);
    if (rc != 0) {
        fprintf(stderr, "stvm-lab: gnuplot failed (%d)\n", rc);
        return 1;
    }
    return 0;
}
