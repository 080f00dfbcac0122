/*
 * The field lists of the public structs, for stvm__struct_size_check. A field is only
 * ever appended to a public struct, so every size an older header gave a struct is the
 * size of a prefix that ends on a field boundary; a size that cuts a field, or that is
 * larger than the struct here, comes from a header this library does not know.
 *
 * When a field is appended to a struct in stvm.h, it is appended to its list here too;
 * the assertion at the end of each list catches a list left behind.
 */
#include "abi.h"

#include <stddef.h>

typedef struct field {
    size_t start, end;   /* bytes [start, end) of the struct */
} field;

#define F(type, name) {offsetof(type, name), offsetof(type, name) + sizeof(((type *)0)->name)}

static const field config_fields[] = {
    F(stvm_config, smallint_bits),       F(stvm_config, preemption_yields),
    F(stvm_config, stack_size),          F(stvm_config, stack_guard),
    F(stvm_config, delay_clock),         F(stvm_config, clock),
    F(stvm_config, sim_start_us),        F(stvm_config, ms_clock_start),
    F(stvm_config, idle_relinquish_us),  F(stvm_config, external_table_size),
    F(stvm_config, stack_guard_size),    F(stvm_config, stack_guard_method),
    F(stvm_config, idle_mode),           F(stvm_config, busy_poll_ms),
    F(stvm_config, wake_inject_us),      F(stvm_config, timer_slack_us),
    F(stvm_config, ffi_workers),         F(stvm_config, ffi_callback_priority),
    F(stvm_config, ffi_spin_us),         F(stvm_config, osvm764_fixes),
    F(stvm_config, osvm764_idle_beat_us), F(stvm_config, cpu_time),
    F(stvm_config, unused_1),
};
#define LAST_CONFIG unused_1

static const field process_info_fields[] = {
    F(stvm_process_info, name),       F(stvm_process_info, priority),
    F(stvm_process_info, state),      F(stvm_process_info, waiting_on),
    F(stvm_process_info, waiting_object), F(stvm_process_info, id),
    F(stvm_process_info, vm_own),     F(stvm_process_info, terminating),
    F(stvm_process_info, held),       F(stvm_process_info, stack_guard),
    F(stvm_process_info, wait_kind),  F(stvm_process_info, wait_fd),
    F(stvm_process_info, wait_handle), F(stvm_process_info, wait_name),
    F(stvm_process_info, wait_since_us), F(stvm_process_info, cpu_ns),
};
#define LAST_PROCESS_INFO cpu_ns

static const field stream_stats_fields[] = {
    F(stvm_stream_stats, fills),     F(stvm_stream_stats, reads_blocked),
    F(stvm_stream_stats, flushes),   F(stvm_stream_stats, bytes_in),
    F(stvm_stream_stats, bytes_out), F(stvm_stream_stats, buffer_bytes),
};
#define LAST_STREAM_STATS buffer_bytes

static const field trace_event_fields[] = {
    F(stvm_trace_event, seq),     F(stvm_trace_event, time_us), F(stvm_trace_event, time_ns),
    F(stvm_trace_event, kind),    F(stvm_trace_event, reason),  F(stvm_trace_event, process),
    F(stvm_trace_event, object),  F(stvm_trace_event, detail),  F(stvm_trace_event, extra),
};
#define LAST_TRACE_EVENT extra

static const field stats_fields[] = {
    F(stvm_stats, context_switches),   F(stvm_stats, semaphore_signals),
    F(stvm_stats, semaphore_waits),    F(stvm_stats, delays_scheduled),
    F(stvm_stats, delays_expired),     F(stvm_stats, delays_unscheduled),
    F(stvm_stats, timing_loop_passes), F(stvm_stats, clock_reads),
    F(stvm_stats, timer_fires),        F(stvm_stats, boxed_allocated),
    F(stvm_stats, large_int_ops),      F(stvm_stats, external_signals),
    F(stvm_stats, idle_sleeps),        F(stvm_stats, objects_allocated),
    F(stvm_stats, bytes_allocated),    F(stvm_stats, objects_live),
    F(stvm_stats, bytes_live),         F(stvm_stats, processes_live),
    F(stvm_stats, os_sleeps),          F(stvm_stats, os_slept_us),
    F(stvm_stats, wakeups_timer),      F(stvm_stats, wakeups_io),
    F(stvm_stats, wakeups_external),   F(stvm_stats, wakeups_relinquish),
    F(stvm_stats, io_polls_busy),      F(stvm_stats, fds_ready),
    F(stvm_stats, io_signals_unwaited), F(stvm_stats, timed_waits),
    F(stvm_stats, socket_reads_blocked),
};
#define LAST_STATS socket_reads_blocked

static const field ffi_stats_fields[] = {
    F(stvm_ffi_stats, callouts),           F(stvm_ffi_stats, callouts_threaded),
    F(stvm_ffi_stats, callouts_failed),    F(stvm_ffi_stats, callouts_abandoned),
    F(stvm_ffi_stats, callbacks_nested),   F(stvm_ffi_stats, callbacks_queued),
    F(stvm_ffi_stats, callbacks_failed),   F(stvm_ffi_stats, callbacks_refused),
};
#define LAST_FFI_STATS callbacks_refused

/* The last field listed must end where the struct ends. This catches a field appended
 * to the struct and not to its list, and it keeps every public struct free of tail
 * padding, which the rule needs: a field appended later then starts exactly at the old
 * sizeof, so an older caller's size never covers part of a newer field. (A struct whose
 * new last field leaves tail padding gets an explicit unused field there, never reused.) */
#define LAST_IS_LAST(type, last)                                                          \
    _Static_assert(sizeof(type) == offsetof(type, last) + sizeof(((type *)0)->last),     \
                   #type " has tail padding, or its field list in vm/abi.c ends early")
LAST_IS_LAST(stvm_config, LAST_CONFIG);
LAST_IS_LAST(stvm_process_info, LAST_PROCESS_INFO);
LAST_IS_LAST(stvm_stream_stats, LAST_STREAM_STATS);
LAST_IS_LAST(stvm_trace_event, LAST_TRACE_EVENT);
LAST_IS_LAST(stvm_stats, LAST_STATS);
LAST_IS_LAST(stvm_ffi_stats, LAST_FFI_STATS);

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct layout {
    const field *fields;
    size_t n, size;
} layouts[STVM__STRUCTS] = {
    [STVM__STRUCT_CONFIG] = {config_fields, N(config_fields), sizeof(stvm_config)},
    [STVM__STRUCT_PROCESS_INFO] = {process_info_fields, N(process_info_fields),
                                   sizeof(stvm_process_info)},
    [STVM__STRUCT_STREAM_STATS] = {stream_stats_fields, N(stream_stats_fields),
                                   sizeof(stvm_stream_stats)},
    [STVM__STRUCT_TRACE_EVENT] = {trace_event_fields, N(trace_event_fields),
                                  sizeof(stvm_trace_event)},
    [STVM__STRUCT_STATS] = {stats_fields, N(stats_fields), sizeof(stvm_stats)},
    [STVM__STRUCT_FFI_STATS] = {ffi_stats_fields, N(ffi_stats_fields), sizeof(stvm_ffi_stats)},
};

int stvm__struct_size_check(stvm__struct which, size_t size)
{
    if ((unsigned)which >= STVM__STRUCTS)
        return STVM_ESIZE;
    const struct layout *l = &layouts[which];
    for (size_t i = 0; i < l->n; i++) {
        size_t next = i + 1 < l->n ? l->fields[i + 1].start : l->size;
        if (size >= l->fields[i].end && size <= next)
            return STVM_OK;
    }
    return STVM_ESIZE;
}
