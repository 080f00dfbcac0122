/*
 * fuzz_trace_read: the trace JSON reader of `stvm-lab show` (lab/trace_read.c, included
 * whole with the timeline writer: the target needs no VM). Any bytes: the reader accepts
 * with every span and mark on a track that exists, tracks in tid order and each span
 * ending no earlier than it began, and its timeline is then written; or it refuses with
 * a message that starts with the file's name and a line and column, leaving the trace
 * empty. Nothing leaks either way (ASan's leak check).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lab/trace_read.c"
#include "../../lab/timeline.c"

static void check(const lab_trace *t)
{
    for (size_t i = 1; i < t->ntracks; i++)
        if (t->tracks[i - 1].tid >= t->tracks[i].tid)
            abort();
    for (size_t i = 0; i < t->nspans; i++) {
        const lab_span *s = &t->spans[i];
        if (s->track >= t->ntracks || s->seq1 < s->seq0 || s->ns1 < s->ns0 ||
            s->state >= LAB_STATES || s->order1 < s->order0)
            abort();
    }
    for (size_t i = 0; i < t->nmarks; i++)
        if (t->marks[i].track < -1 || t->marks[i].track >= (int64_t)t->ntracks)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lab_trace t;
    char err[512] = "";
    if (lab_trace_parse((const char *)data, size, "input", &t, err, sizeof err) != 0) {
        if (strncmp(err, "input:", 6) != 0 || t.ntracks || t.nspans || t.nmarks || t.ncounts)
            abort();
        return 0;
    }
    check(&t);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        if (lab_timeline_write(&t, mem, 0) != 0)
            abort();
        fclose(mem);
    }
    free(text);
    lab_trace_free(&t);
    return 0;
}
