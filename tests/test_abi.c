/*
 * The ABI rule for the six public structs (suite abi; include/README.md, "Structs that
 * grow"). Each test plays the next release: it takes the struct as a program built
 * before its newest field (the config: its newest two) would have it (a caller-side prefix, defined here), and
 * calls the library the way that program's macros would, with the prefix's sizeof.
 * Canary bytes follow the prefix: the library must read and write the prefix only.
 * Sizes the library cannot know (larger than its struct, holding no field, cutting a
 * field) answer STVM_ESIZE and write nothing.
 */
#include <stddef.h>

#include "helpers.h"

#define CANARY 0xA5
#define PATTERN 0x5A

/* A prefix struct followed at once by canary bytes (the wrapper has the prefix's
 * alignment, and an unsigned char array needs none, so nothing sits between them). */
#define WITH_CANARY(type) \
    struct {              \
        type s;           \
        unsigned char canary[64]; \
    }

static void canary_set(unsigned char *c, size_t n) { memset(c, CANARY, n); }
static bool canary_intact(const unsigned char *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c[i] != CANARY)
            return false;
    return true;
}

/* Every byte of [p, p + n) still holds PATTERN. */
static bool untouched(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != PATTERN)
            return false;
    return true;
}

/* ---- the structs as an older stvm.h declared them: without their newest field ---- */

typedef struct old_config {
    int smallint_bits;
    bool preemption_yields;
    size_t stack_size;
    bool stack_guard;
    int delay_clock;
    int clock;
    uint64_t sim_start_us;
    uint32_t ms_clock_start;
    uint32_t idle_relinquish_us;
    int external_table_size;
    size_t stack_guard_size;
    int stack_guard_method;
    int idle_mode;
    uint32_t busy_poll_ms;
    uint32_t wake_inject_us;
    uint32_t timer_slack_us;
    int ffi_workers;
    int ffi_callback_priority;
    uint32_t ffi_spin_us;
    /* osvm764_fixes and osvm764_idle_beat_us are newer: the two came in one release, as
     * the rule requires here (one 4-byte field alone would have ended the struct in
     * tail padding, and the next field would have had to start after it); so are
     * cpu_time and unused_1, the bytes that fill the struct out after it */
} old_config;

typedef struct old_process_info {
    const char *name;
    int priority;
    stvm_process_state state;
    const char *waiting_on;
    const void *waiting_object;
    uint64_t id;
    bool vm_own;
    bool terminating;
    bool held;
    const char *stack_guard;
    /* wait_kind, wait_fd, wait_handle, wait_name, wait_since_us and cpu_ns are newer */
} old_process_info;

typedef struct old_stream_stats {
    uint64_t fills, reads_blocked, flushes, bytes_in, bytes_out;
    /* buffer_bytes is newer */
} old_stream_stats;

typedef struct old_trace_event {
    uint64_t seq, time_us;
    uint32_t time_ns;
    uint16_t kind, reason;
    uint64_t process, object;
    int64_t detail;
    /* extra is newer */
} old_trace_event;

typedef struct old_stats {
    uint64_t context_switches, semaphore_signals, semaphore_waits, delays_scheduled,
        delays_expired, delays_unscheduled, timing_loop_passes, clock_reads, timer_fires,
        boxed_allocated, large_int_ops, external_signals, idle_sleeps, objects_allocated,
        bytes_allocated, objects_live, bytes_live, processes_live, os_sleeps, os_slept_us,
        wakeups_timer, wakeups_io, wakeups_external, wakeups_relinquish, io_polls_busy,
        fds_ready, io_signals_unwaited, timed_waits;
    /* socket_reads_blocked is newer */
} old_stats;

typedef struct old_ffi_stats {
    uint64_t callouts, callouts_threaded, callouts_failed, callouts_abandoned,
        callbacks_nested, callbacks_queued, callbacks_failed;
    /* callbacks_refused is newer */
} old_ffi_stats;

/* The prefixes lie as in the full structs, and each lacks exactly the last field. */
#define SAME_END(old, full, field, newest)                                            \
    _Static_assert(offsetof(old, field) == offsetof(full, field) &&                   \
                       offsetof(old, field) + sizeof(((old *)0)->field) <=            \
                           offsetof(full, newest) &&                                  \
                       sizeof(old) <= offsetof(full, newest),                         \
                   #old " is " #full " without " #newest)
SAME_END(old_config, stvm_config, ffi_spin_us, osvm764_fixes);
SAME_END(old_process_info, stvm_process_info, stack_guard, wait_kind);
SAME_END(old_stream_stats, stvm_stream_stats, bytes_out, buffer_bytes);
SAME_END(old_trace_event, stvm_trace_event, detail, extra);
SAME_END(old_stats, stvm_stats, timed_waits, socket_reads_blocked);
SAME_END(old_ffi_stats, stvm_ffi_stats, callbacks_failed, callbacks_refused);

/* ---- the config: filled by the caller, read by the library ----------------------- */

Test(abi, an_old_size_config_is_initialised_as_its_prefix_only)
{
    WITH_CANARY(old_config) w;
    memset(&w.s, PATTERN, sizeof w.s);
    canary_set(w.canary, sizeof w.canary);
    cr_assert_eq(stvm_config_init_((stvm_config *)&w.s, sizeof w.s), STVM_OK);
    cr_assert(canary_intact(w.canary, sizeof w.canary), "stvm_config_init wrote past the old size");
    stvm_config full;
    stvm_config_init(&full);
    cr_assert_eq(memcmp(&w.s, &full, sizeof w.s), 0, "the prefix holds the defaults");
    cr_assert_eq(w.s.smallint_bits, 61);
    cr_assert_eq(w.s.ffi_workers, 2);
}

Test(abi, an_old_size_config_gets_the_defaults_of_the_fields_it_lacks)
{
    WITH_CANARY(old_config) w;
    canary_set(w.canary, sizeof w.canary);
    cr_assert_eq(stvm_config_init_((stvm_config *)&w.s, sizeof w.s), STVM_OK);
    w.s.timer_slack_us = 7;
    w.s.ffi_workers = 3;
    w.s.idle_mode = STVM_IDLE_OSVM764;
    char why[160] = "";
    cr_assert_eq(stvm_config_check_((const stvm_config *)&w.s, why, sizeof why, sizeof w.s),
                 STVM_OK, "%s", why);
    stvm_vm *vm = NULL;
    cr_assert_eq(stvm_vm_create_((const stvm_config *)&w.s, &vm, sizeof w.s), STVM_OK);
    cr_assert(canary_intact(w.canary, sizeof w.canary), "stvm_vm_create wrote into the canary");
    stvm_config now;
    cr_assert_eq(stvm_vm_config(vm, &now), STVM_OK);
    cr_assert_eq(now.timer_slack_us, 7, "a field of the prefix is the caller's");
    cr_assert_eq(now.ffi_workers, 3);
    cr_assert_eq(now.idle_mode, STVM_IDLE_OSVM764);
    cr_assert_eq(now.osvm764_fixes, 0, "the fields the old config lacks are at their defaults");
    cr_assert_eq(now.osvm764_idle_beat_us, 0);
    cr_assert(!now.cpu_time, "CPU time is not accounted unless asked for");

    /* Reading the configuration back into the old struct: its prefix only. */
    WITH_CANARY(old_config) back;
    canary_set(back.canary, sizeof back.canary);
    cr_assert_eq(stvm_vm_config_(vm, (stvm_config *)&back.s, sizeof back.s), STVM_OK);
    cr_assert(canary_intact(back.canary, sizeof back.canary), "stvm_vm_config wrote past the old size");
    cr_assert_eq(memcmp(&back.s, &now, sizeof back.s), 0);
    vm_done(vm);
}

/* Sizes no stvm.h ever gave stvm_config: none of its fields, half of a field, one byte
 * past the library's struct, a whole field past it. */
static const size_t bad_config_sizes[] = {
    0, 1, sizeof(int) - 1, offsetof(stvm_config, stack_size) + 1,
    offsetof(stvm_config, sim_start_us) + 4, sizeof(stvm_config) + 1,
    sizeof(stvm_config) + 8, (size_t)-1,
};

Test(abi, a_config_size_the_library_does_not_know_is_refused_and_nothing_changes)
{
    stvm_config defaults;
    stvm_config_init(&defaults);
    for (size_t i = 0; i < sizeof bad_config_sizes / sizeof bad_config_sizes[0]; i++) {
        size_t size = bad_config_sizes[i];
        struct {
            stvm_config c;
            unsigned char more[64];
        } w;
        memset(&w, PATTERN, sizeof w);
        cr_assert_eq(stvm_config_init_(&w.c, size), STVM_ESIZE, "size %zu", size);
        cr_assert(untouched(&w, sizeof w), "stvm_config_init wrote with size %zu", size);

        char why[160] = "";
        cr_assert_eq(stvm_config_check_(&defaults, why, sizeof why, size), STVM_ESIZE);
        cr_assert_not_null(strstr(why, "cfg_size"), "why names the size: %s", why);

        stvm_vm *vm = (stvm_vm *)&w;
        cr_assert_eq(stvm_vm_create_(&defaults, &vm, size), STVM_ESIZE, "size %zu", size);
        cr_assert_eq(vm, (stvm_vm *)&w, "*out unchanged");
    }
    /* With no config there is nothing to read: the size does not matter. */
    stvm_vm *vm = NULL;
    cr_assert_eq(stvm_vm_create_(NULL, &vm, 0), STVM_OK);
    stvm_config w[2];
    memset(w, PATTERN, sizeof w);
    cr_assert_eq(stvm_vm_config_(vm, w, sizeof(stvm_config) + 8), STVM_ESIZE);
    cr_assert_eq(stvm_vm_config_(vm, w, 3), STVM_ESIZE);
    cr_assert(untouched(w, sizeof w));
    vm_done(vm);
}

Test(abi, esize_has_a_text_and_a_name_of_its_own)
{
    cr_assert_str_eq(stvm_err_name(STVM_ESIZE), "STVM_ESIZE");
    cr_assert_not_null(strstr(stvm_strerror(STVM_ESIZE), "struct size"));
    cr_assert_str_neq(stvm_strerror(STVM_ESIZE), stvm_strerror(STVM_EINVAL));
}

Test(abi, the_macros_pass_the_size_of_the_callers_header)
{
    stvm_config a, b;
    memset(&a, PATTERN, sizeof a);
    memset(&b, PATTERN, sizeof b);
    cr_assert_eq(stvm_config_init(&a), STVM_OK);
    cr_assert_eq(stvm_config_init_(&b, sizeof b), STVM_OK);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
    stvm_vm *vm = vm_make(&a);
    stvm_stats s1, s2;
    memset(&s1, PATTERN, sizeof s1);
    memset(&s2, PATTERN, sizeof s2);
    cr_assert_eq(stvm_vm_get_stats(vm, &s1), STVM_OK);
    cr_assert_eq(stvm_vm_get_stats_(vm, &s2, sizeof s2), STVM_OK);
    cr_assert_eq(memcmp(&s1, &s2, sizeof s1), 0, "the macro wrote the whole struct");
    vm_done(vm);
}

/* ---- structs the library writes: stats, FFI stats, process info, trace events ---- */

Test(abi, old_size_stats_are_written_as_their_prefix_only)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_stats full = stats_of(vm);
    WITH_CANARY(old_stats) w;
    memset(&w.s, PATTERN, sizeof w.s);
    canary_set(w.canary, sizeof w.canary);
    cr_assert_eq(stvm_vm_get_stats_(vm, (stvm_stats *)&w.s, sizeof w.s), STVM_OK);
    cr_assert(canary_intact(w.canary, sizeof w.canary), "stvm_vm_get_stats wrote past the old size");
    cr_assert_eq(memcmp(&w.s, &full, sizeof w.s), 0, "the prefix holds the counters");
    cr_assert_eq(w.s.processes_live, full.processes_live);
    cr_assert_gt(w.s.processes_live, 0, "the idle process is counted");

    memset(&full, PATTERN, sizeof full);
    cr_assert_eq(stvm_vm_get_stats_(vm, &full, sizeof full + 8), STVM_ESIZE);
    cr_assert_eq(stvm_vm_get_stats_(vm, &full, 4), STVM_ESIZE);
    cr_assert_eq(stvm_vm_get_stats_(vm, &full, 0), STVM_ESIZE);
    cr_assert(untouched(&full, sizeof full));
    vm_done(vm);
}

Test(abi, old_size_ffi_stats_are_written_as_their_prefix_only)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    WITH_CANARY(old_ffi_stats) w;
    memset(&w.s, PATTERN, sizeof w.s);
    canary_set(w.canary, sizeof w.canary);
    cr_assert_eq(stvm_ffi_get_stats_(vm, (stvm_ffi_stats *)&w.s, sizeof w.s), STVM_OK);
    cr_assert(canary_intact(w.canary, sizeof w.canary), "stvm_ffi_get_stats wrote past the old size");
    cr_assert_eq(w.s.callouts, 0);
    cr_assert_eq(w.s.callbacks_failed, 0, "the prefix's last field is written");

    stvm_ffi_stats full;
    memset(&full, PATTERN, sizeof full);
    cr_assert_eq(stvm_ffi_get_stats_(vm, &full, sizeof full + 1), STVM_ESIZE);
    cr_assert_eq(stvm_ffi_get_stats_(vm, &full, offsetof(stvm_ffi_stats, callouts_failed) + 3),
                 STVM_ESIZE);
    cr_assert(untouched(&full, sizeof full));
    vm_done(vm);
}

static void sleeper(stvm_vm *vm, void *arg) { stvm_delay_wait_ms(vm, 10); }

Test(abi, old_size_process_info_is_written_as_its_prefix_only)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    stvm_process *p = NULL;
    cr_assert_eq(stvm_spawn(vm, 40, "worker", sleeper, NULL, &p), STVM_OK);
    stvm_process_info full;
    cr_assert_eq(stvm_process_get_info(vm, p, &full), STVM_OK);
    WITH_CANARY(old_process_info) w;
    memset(&w.s, PATTERN, sizeof w.s);
    canary_set(w.canary, sizeof w.canary);
    cr_assert_eq(stvm_process_get_info_(vm, p, (stvm_process_info *)&w.s, sizeof w.s), STVM_OK);
    cr_assert(canary_intact(w.canary, sizeof w.canary),
              "stvm_process_get_info wrote past the old size");
    cr_assert_str_eq(w.s.name, "worker");
    cr_assert_eq(w.s.priority, 40);
    cr_assert_eq(w.s.state, STVM_PROCESS_READY);
    cr_assert_eq(w.s.id, full.id);
    cr_assert(w.s.held);
    cr_assert_str_eq(w.s.stack_guard, full.stack_guard);

    memset(&full, PATTERN, sizeof full);
    cr_assert_eq(stvm_process_get_info_(vm, p, &full, sizeof full + 8), STVM_ESIZE);
    cr_assert_eq(stvm_process_get_info_(vm, p, &full, offsetof(stvm_process_info, id) + 4),
                 STVM_ESIZE, "half of id");
    cr_assert_eq(stvm_process_get_info_(vm, p, &full,
                                        offsetof(stvm_process_info, wait_since_us) + 4),
                 STVM_ESIZE, "half of wait_since_us");
    cr_assert(untouched(&full, sizeof full));
    run_ok(vm);
    cr_assert_eq(stvm_process_release(vm, p), STVM_OK);
    vm_done(vm);
}

Test(abi, old_size_trace_events_are_copied_as_their_prefix_only)
{
    stvm_vm *vm = vm_make_sim(61, STVM_DELAY_CLOCK_US);
    cr_assert_eq(stvm_trace_start(vm, 64), STVM_OK);
    spawn(vm, 40, "worker", sleeper, NULL);
    run_ok(vm);
    cr_assert_gt(stvm_trace_count(vm), 2);
    for (size_t i = 0; i < 3; i++) {
        stvm_trace_event full;
        cr_assert_eq(stvm_trace_get(vm, i, &full), STVM_OK);
        WITH_CANARY(old_trace_event) w;
        memset(&w.s, PATTERN, sizeof w.s);
        canary_set(w.canary, sizeof w.canary);
        cr_assert_eq(stvm_trace_get_(vm, i, (stvm_trace_event *)&w.s, sizeof w.s), STVM_OK);
        cr_assert(canary_intact(w.canary, sizeof w.canary), "stvm_trace_get wrote past the old size");
        cr_assert_eq(memcmp(&w.s, &full, sizeof w.s), 0);
        cr_assert_eq(w.s.seq, i);
    }
    stvm_trace_event full;
    memset(&full, PATTERN, sizeof full);
    cr_assert_eq(stvm_trace_get_(vm, 0, &full, sizeof full + 8), STVM_ESIZE);
    cr_assert_eq(stvm_trace_get_(vm, 0, &full, offsetof(stvm_trace_event, kind) + 1), STVM_ESIZE);
    cr_assert_eq(stvm_trace_get_(vm, 0, &full, 7), STVM_ESIZE, "less than seq");
    cr_assert(untouched(&full, sizeof full));
    vm_done(vm);
}

/* ---- the stream's counters (a loopback connection inside one VM) ----------------- */

typedef struct stream_case {
    stvm_socket *listener;
    int port;
    bool prefix_ok, canary_ok, too_big_refused, cut_refused, untouched_ok;
    uint64_t bytes_in;
} stream_case;

static void stream_client(stvm_vm *vm, void *arg)
{
    stream_case *c = arg;
    stvm_socket *s = NULL;
    stvm_stream *st = NULL;
    if (stvm_tcp_connect(vm, "127.0.0.1", c->port, 2000, &s) != STVM_OK)
        return;
    if (stvm_stream_open(vm, s, 2000, &st) == STVM_OK) {
        stvm_stream_write(vm, st, "hello", 5);
        stvm_stream_flush(vm, st);
    }
    stvm_socket_close(vm, s);
}

static void stream_server(stvm_vm *vm, void *arg)
{
    stream_case *c = arg;
    stvm_socket *s = NULL;
    stvm_stream *st = NULL;
    char buf[8];
    if (stvm_spawn(vm, 40, "client", stream_client, c, NULL) != STVM_OK)
        return;
    if (stvm_socket_accept(vm, c->listener, 2000, &s) != STVM_OK)
        return;
    if (stvm_stream_open(vm, s, 2000, &st) != STVM_OK ||
        stvm_stream_read(vm, st, buf, 5) != 5) {
        stvm_socket_close(vm, s);
        return;
    }
    stvm_stream_stats full;
    WITH_CANARY(old_stream_stats) w;
    memset(&w.s, PATTERN, sizeof w.s);
    canary_set(w.canary, sizeof w.canary);
    c->prefix_ok = stvm_stream_get_stats(st, &full) == STVM_OK &&
                   stvm_stream_get_stats_(st, (stvm_stream_stats *)&w.s, sizeof w.s) == STVM_OK &&
                   memcmp(&w.s, &full, sizeof w.s) == 0;
    c->canary_ok = canary_intact(w.canary, sizeof w.canary);
    c->bytes_in = w.s.bytes_in;
    memset(&full, PATTERN, sizeof full);
    c->too_big_refused = stvm_stream_get_stats_(st, &full, sizeof full + 8) == STVM_ESIZE;
    c->cut_refused = stvm_stream_get_stats_(st, &full, 12) == STVM_ESIZE;
    c->untouched_ok = untouched(&full, sizeof full);
    stvm_socket_close(vm, s);
}

static void stream_main(stvm_vm *vm, void *arg)
{
    stream_case *c = arg;
    if (stvm_tcp_listen(vm, "127.0.0.1", 0, 4, &c->listener) != STVM_OK)
        return;
    c->port = stvm_socket_port(c->listener);
    stvm_process *server = NULL;
    if (stvm_spawn(vm, 40, "server", stream_server, c, &server) == STVM_OK)
        stvm_process_join(vm, server, 5000);
    stvm_socket_close(vm, c->listener);
}

Test(abi, old_size_stream_stats_are_written_as_their_prefix_only, .timeout = 20)
{
    stvm_vm *vm = vm_make(NULL);
    stream_case c = {0};
    spawn(vm, 40, "main", stream_main, &c);
    run_ok(vm);
    cr_assert(c.prefix_ok, "the old struct holds the counters");
    cr_assert_eq(c.bytes_in, 5);
    cr_assert(c.canary_ok, "stvm_stream_get_stats wrote past the old size");
    cr_assert(c.too_big_refused, "a larger size is ESIZE");
    cr_assert(c.cut_refused, "a size that cuts reads_blocked is ESIZE");
    cr_assert(c.untouched_ok, "a refused call wrote nothing");
    vm_done(vm);
}
