/*
 * show --png: who runs, from a trace's running spans, in the layout of run --png
 * (lab/png.c): one row per process, a panel across the event sequence and, when the
 * trace took time, one across ms from the start. lab/png.c reads a live VM's ring; this
 * reads the spans of a JSON file, so both draw the same picture of the same run.
 */
#include "png_trace.h"
#include "png.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A row's name: the track's, from the file. */
static void track_name(void *ctx, size_t row, char *name, size_t size)
{
    const lab_trace *t = ctx;
    snprintf(name, size, "%s", t->tracks[row - 1].name);
}

int lab_png_trace(const lab_trace *t, const char *path, const char *title)
{
    char data_path[LAB_PNG_DATA_PATH];
    FILE *data = lab_png_data(data_path);
    if (!data)
        return 1;
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
    if (!running) {
        unlink(data_path);
        fprintf(stderr, "stvm-lab: no process runs in this trace\n");
        return 1;
    }
    return lab_png_draw(path, title, data_path, t->ntracks, span_ns != 0, "in time",
                        track_name, (void *)t);
}
