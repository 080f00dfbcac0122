/*
 * The API table's rows for tracing (stvm/trace.h): how each function is called, what its
 * generated rows need, and the rows written out (tests/test_api_table.c runs them).
 */
#include "api_table.h"

/* Make the call a row of this module describes (c: its arguments, resolved), or answer
 * R_NOT_MINE for another module's function. */
static int call(fx *f, int fn, const args *a, const call_in *c)
{
    stvm_vm *vm = c->vm;
    union out_slot *o = c->o;
    int64_t r;
    switch (fn) {
    case F_trace_start: return stvm_trace_start(vm, (size_t)a->z);
    case F_trace_stop: return stvm_trace_stop(vm);
    case F_trace_dropped: r = stvm_trace_dropped(vm); return r < 0 ? (int)r : R_COUNT;
    case F_trace_count: r = stvm_trace_count(vm); return r < 0 ? (int)r : R_COUNT;
    case F_trace_get:
        return stvm_trace_get_(vm, (size_t)a->z, o ? &o->tev : NULL, SSIZE(stvm_trace_event));
    case F_trace_set_hook: return stvm_trace_set_hook(vm, NULL, NULL);
    case F_trace_process_name:
        return stvm_trace_process_name(vm, (uint64_t)a->n, a->null_ptr ? NULL : f->text,
                                       a->null_ptr ? 0 : a->z ? a->z : sizeof f->text);
    case F_trace_kind_name: return null_or_not(stvm_trace_kind_name((int)a->n));
    case F_trace_write_text: return stvm_trace_write_text(vm, a->null_ptr ? NULL : stdout);
    case F_trace_write_json:
        return stvm_trace_write_json(vm, a->null_ptr ? NULL : "/tmp/stvm-api-table-trace.json");
    }
    return R_NOT_MINE;
}

/* One line a function: what its generated rows need (NO_DESC: none are generated). */
static const fn_line lines[] = {
    NO_DESC(trace_start),
    NO_DESC(trace_stop),
    NO_DESC(trace_dropped),
    NO_DESC(trace_count),
    NO_DESC(trace_get),
    NO_DESC(trace_set_hook),
    NO_DESC(trace_process_name),
    NO_DESC(trace_kind_name),
    NO_DESC(trace_write_text),
    NO_DESC(trace_write_json),
};

/* Tracing. No VM of the fixture records, so every call that needs a ring answers
 * ESTATE (or an empty count), and a refused start must not make one. */
#define TRACE_ROWS(ctx)                                                                      \
    ROW(trace_start, "NULL vm", ctx, E_INVAL, .vm = V_NULL, .z = 8),                         \
    ROW(trace_start, "0 events", ctx, E_INVAL, .z = 0),                                      \
    ROW(trace_start, "2^24 + 1 events", ctx, E_INVAL, .z = STVM_TRACE_MAX_EVENTS + 1),       \
    ROW(trace_start, "SIZE_MAX events", ctx, E_INVAL, .z = SIZE_MAX),                        \
    ROW(trace_stop, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                                  \
    ROW(trace_stop, "not recording", ctx, E_STATE),                                          \
    ROW(trace_dropped, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                               \
    ROW(trace_dropped, "no ring: 0", ctx, R_COUNT),                                          \
    ROW(trace_count, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                                 \
    ROW(trace_count, "no ring: 0", ctx, R_COUNT),                                            \
    ROW(trace_get, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                                   \
    ROW(trace_get, "NULL out", ctx, E_INVAL, .null_out = true),                              \
    ROW(trace_get, "no ring: index 0", ctx, STVM_ERANGE, .z = 0),                            \
    ROW(trace_get, "struct size from a newer header", ctx, STVM_ESIZE,                        \
        .ssize = sizeof(stvm_trace_event) + 8),                                               \
    ROW(trace_get, "no ring: index SIZE_MAX", ctx, STVM_ERANGE, .z = SIZE_MAX),              \
    ROW(trace_set_hook, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                              \
    ROW(trace_process_name, "NULL vm", ctx, E_INVAL, .vm = V_NULL, .n = 1),                  \
    ROW(trace_process_name, "NULL buf", ctx, E_INVAL, .n = 1, .null_ptr = true),             \
    ROW(trace_process_name, "no ring", ctx, E_STATE, .n = 1),                                \
    ROW(trace_kind_name, "kind -1", ctx, R_NULL, .n = -1),                                   \
    ROW(trace_kind_name, "kind STVM_TRACE_KINDS", ctx, R_NULL, .n = STVM_TRACE_KINDS),       \
    ROW(trace_kind_name, "kind INT_MIN", ctx, R_NULL, .n = INT_MIN),                         \
    ROW(trace_write_text, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                            \
    ROW(trace_write_text, "NULL FILE", ctx, E_INVAL, .null_ptr = true),                      \
    ROW(trace_write_text, "no ring", ctx, E_STATE),                                          \
    ROW(trace_write_json, "NULL vm", ctx, E_INVAL, .vm = V_NULL),                            \
    ROW(trace_write_json, "NULL path", ctx, E_INVAL, .null_ptr = true),                      \
    ROW(trace_write_json, "no ring", ctx, E_STATE)
static const row rows[] = {TRACE_ROWS(C_HOST), TRACE_ROWS(C_GREEN), TRACE_ROWS(C_THREAD)};

const api_module api_rows_trace = API_MODULE(trace, NULL);
