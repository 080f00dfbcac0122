/*
 * --trace FILE and --trace-events N, which every command has: the one parser of the two
 * options, the one rule that a trace is of one cell, and the one sequence around the
 * traced cell's VM (start the ring before the cell runs, write the Trace Event JSON
 * after, say what was written or why not).
 */
#include "bench.h"

#include <string.h>

void bench_trace_help(FILE *f, int column, const char *traced)
{
    int pad = column > 22 ? column - 22 : 0;
    fprintf(f, "  --trace FILE        %*strace one cell (--repeat 1) as Trace Event JSON\n"
               "%*s(Perfetto) in FILE:\n", pad, "", column, "");
    for (const char *line = traced, *end; *line; line = end + (*end == '\n')) {
        end = strchr(line, '\n');
        end = end ? end : line + strlen(line);
        fprintf(f, "%*s%.*s\n", column, "", (int)(end - line), line);
    }
    fprintf(f, "  --trace-events N    %*sthe trace ring's capacity, 1..16777216 (default\n"
               "%*s4194304; the newest kept)\n", pad, "", column, "");
}

int bench_trace_option(int argc, char **argv, int *i, const char *command, bench_trace *t)
{
    const char *v = NULL;
    if (bench_flag(argc, argv, i, "--trace", &v)) {
        if (!v || !*v)
            return bench_usage_error(command, "--trace wants a file name");
        t->path = v;
        return BENCH_NEXT;
    }
    long long n = 0;
    int rc = bench_count_option(argc, argv, i, command, "--trace-events", 1,
                                (long long)STVM_TRACE_MAX_EVENTS, NULL, &n);
    if (rc == BENCH_NEXT)
        t->events = (size_t)n;
    return rc;
}

int bench_trace_one_cell(const bench_trace *t, const char *command, long cells,
                         const char *how)
{
    if (!t->path || cells == 1)
        return BENCH_NEXT;
    if (cells == 0)
        return bench_usage_error(command, "--trace: these options run no VM to trace (%s)",
                                 how);
    return bench_usage_error(command, "--trace traces one cell, these options run %ld: %s",
                             cells, how);
}

int bench_trace_begin(const bench_trace *t, stvm_vm *vm, char *why, size_t whysize)
{
    if (!t || !t->path)
        return STVM_OK;
    int err = stvm_trace_start(vm, t->events);
    if (err)
        snprintf(why, whysize, "stvm_trace_start(%zu events): %s", t->events,
                 stvm_err_name(err));
    return err;
}

int bench_trace_end(const bench_trace *t, stvm_vm *vm, char *why, size_t whysize)
{
    if (!t || !t->path)
        return STVM_OK;
    int err = stvm_trace_write_json(vm, t->path);
    if (err) {
        snprintf(why, whysize, "writing the trace to %s: %s", t->path, stvm_err_name(err));
        return err;
    }
    int64_t kept = stvm_trace_count(vm), dropped = stvm_trace_dropped(vm);
    /* One line for scripts (make bench-trace-cost divides by the events recorded). */
    fprintf(stderr, "stvm-bench: trace written to %s: %lld events recorded, %lld kept, "
                    "%lld dropped\n", t->path, (long long)(kept + dropped), (long long)kept,
            (long long)dropped);
    return STVM_OK;
}

int bench_trace_cells(const bench_invocation *inv, long cells, const char *how)
{
    if (!inv->common.trace.path || cells == 1)
        return BENCH_GO_ON;
    if (cells == 0)
        return bench_usage(inv->command, "--trace: these options run no VM to trace (%s)", how);
    return bench_usage(inv->command, "--trace traces one cell, these options run %ld: %s",
                       cells, how);
}
