/*
 * stvm-lab --png: a Gantt chart of who ran when, from the trace's SWITCH events: one
 * row per process (by id, downwards), time across in ms from the first event. gnuplot
 * draws it from a data file of intervals.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "png.h"

/* One running interval per line: "row start_ms end_ms". */
static int write_intervals(stvm_vm *vm, FILE *data, uint64_t *max_id)
{
    int64_t n = stvm_trace_count(vm);
    stvm_trace_event ev, first;
    uint64_t running = 0, since = 0;
    if (n <= 0 || stvm_trace_get(vm, 0, &first) != STVM_OK)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        stvm_trace_get(vm, (size_t)i, &ev);
        uint64_t t = ev.time_us - first.time_us;
        if (ev.kind != STVM_TRACE_SWITCH)
            continue;
        if (running)
            fprintf(data, "%llu %.3f %.3f\n", (unsigned long long)running, since / 1000.0,
                    t / 1000.0);
        running = ev.object;
        since = t;
        *max_id = ev.object > *max_id ? ev.object : *max_id;
    }
    if (running)
        fprintf(data, "%llu %.3f %.3f\n", (unsigned long long)running, since / 1000.0,
                (ev.time_us - first.time_us) / 1000.0);
    return 0;
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
            160 + 24 * (int)max_id, path);
    fprintf(gp, "set title '%s: who runs when'\nset xlabel 'ms'\nset ylabel 'process id'\n"
                "set yrange [%llu.5:0.5]\nset ytics 1\nset grid xtics\nunset key\n",
            title, (unsigned long long)max_id);
    fprintf(gp, "plot '%s' using 2:1:($3-$2):(0) with vectors nohead lw 12\n", data_path);
    int rc = pclose(gp);
    unlink(data_path);
    if (rc != 0) {
        fprintf(stderr, "stvm-lab: gnuplot failed (%d)\n", rc);
        return 1;
    }
    return 0;
}
