/*
 * --trace FILE and --trace-events N, which every command has (options.c parses them):
 * the one rule that a trace is of one cell, and the one sequence around the traced
 * cell's VM (start the ring before the cell runs, write the Trace Event JSON after, say
 * what was written or why not). `stvm-lab show FILE --html PAGE` draws the file.
 */
#include "bench.h"

#include <string.h>

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
