/*
 * The API table's rows for the VM and its processes (stvm/core.h: the version, errors, the
 * configuration, the VM's lifetime, spawning, process control, the listing and reports,
 * the run loop and host event loops, the counters): how each function is called, what its
 * generated rows need, and the rows written out (tests/test_api_table.c runs them).
 */
#include "api_table.h"

/* stvm_config_check / stvm_vm_create: the broken field of each enum cfg_fault. */
typedef struct cfg_fault_desc {
    const char *field;   /* what stvm_config_check must name */
    void (*apply)(stvm_config *c);
} cfg_fault_desc;

static void bits_0(stvm_config *c) { c->smallint_bits = 0; }
static void bits_32(stvm_config *c) { c->smallint_bits = 32; }
static void bits_64(stvm_config *c) { c->smallint_bits = 64; }
static void stack_4k(stvm_config *c) { c->stack_size = 4096; }
static void stack_big(stvm_config *c) { c->stack_size = ((size_t)64 << 20) + 1; }
static void stack_max(stvm_config *c) { c->stack_size = SIZE_MAX; }
static void guard_1(stvm_config *c) { c->stack_guard_size = 1; }
static void guard_big(stvm_config *c) { c->stack_guard_size = ((size_t)64 << 20) + 1; }
static void method_neg(stvm_config *c) { c->stack_guard_method = -1; }
static void method_4(stvm_config *c) { c->stack_guard_method = 4; }
static void dclock_2(stvm_config *c) { c->delay_clock = 2; }
static void dclock_neg(stvm_config *c) { c->delay_clock = -1; }
static void clock_2(stvm_config *c) { c->clock = 2; }
static void sim_past_end(stvm_config *c) { c->sim_start_us = CLOCK_END + 1; }
static void sim_max(stvm_config *c) { c->sim_start_us = UINT64_MAX; }
static void ms_start(stvm_config *c) { c->ms_clock_start = MS_MASK + 1; }
static void relinquish_big(stvm_config *c) { c->idle_relinquish_us = 10000001; }
static void ext_0(stvm_config *c) { c->external_table_size = 0; }
static void ext_neg(stvm_config *c) { c->external_table_size = -1; }
static void ext_big(stvm_config *c) { c->external_table_size = 65537; }

static const cfg_fault_desc cfg_faults[N_CFG] = {
    [CFG_OK] = {NULL, NULL},
    [CFG_BITS_0] = {"smallint_bits", bits_0},
    [CFG_BITS_32] = {"smallint_bits", bits_32},
    [CFG_BITS_64] = {"smallint_bits", bits_64},
    [CFG_STACK_4K] = {"stack_size", stack_4k},
    [CFG_STACK_BIG] = {"stack_size", stack_big},
    [CFG_STACK_MAX] = {"stack_size", stack_max},
    [CFG_GUARD_1] = {"stack_guard_size", guard_1},
    [CFG_GUARD_BIG] = {"stack_guard_size", guard_big},
    [CFG_METHOD_NEG] = {"stack_guard_method", method_neg},
    [CFG_METHOD_4] = {"stack_guard_method", method_4},
    [CFG_DCLOCK_2] = {"delay_clock", dclock_2},
    [CFG_DCLOCK_NEG] = {"delay_clock", dclock_neg},
    [CFG_CLOCK_2] = {"clock", clock_2},
    [CFG_SIM_PAST_END] = {"sim_start_us", sim_past_end},
    [CFG_SIM_MAX] = {"sim_start_us", sim_max},
    [CFG_MS_START] = {"ms_clock_start", ms_start},
    [CFG_RELINQUISH_BIG] = {"idle_relinquish_us", relinquish_big},
    [CFG_EXT_0] = {"external_table_size", ext_0},
    [CFG_EXT_NEG] = {"external_table_size", ext_neg},
    [CFG_EXT_BIG] = {"external_table_size", ext_big},
};

/* The first code past the error list (no error has it): one more than the rows of
 * STVM_ERRNO_MAP, which are numbered 0, -1, -2, ... */
enum {
#define COUNT_ERRNO_ROW(name, code, text) ERRNO_ROW_##name,
    STVM_ERRNO_MAP(COUNT_ERRNO_ROW)
#undef COUNT_ERRNO_ROW
    ERRNO_ROWS
};
#define FIRST_UNUSED_CODE (-(int)ERRNO_ROWS)

/* Make the call a row of this module describes (c: its arguments, resolved), or answer
 * R_NOT_MINE for another module's function. */
static int call(fx *f, int fn, const args *a, const call_in *c)
{
    stvm_vm *vm = c->vm;
    stvm_process *p = c->p;
    stvm_fn fnp = c->fnp;
    union out_slot *o = c->o;
    int64_t r;
    stvm_config cfg;
    stvm_config_init(&cfg);
    if (cfg_faults[a->cfg].apply)
        cfg_faults[a->cfg].apply(&cfg);
    switch (fn) {
    case F_version: return yes(stvm_version() == STVM_VERSION_HEX);
    case F_version_string: return yes(strcmp(stvm_version_string(), STVM_VERSION_STRING) == 0);
    case F_context_backend: {
        const char *b = stvm_context_backend();
        return yes(b && (!strcmp(b, "asm-x86_64") || !strcmp(b, "asm-aarch64") ||
                          !strcmp(b, "ucontext")));
    }
    case F_measure_raw_switch: return stvm_measure_raw_switch((uint64_t)a->n, o ? &o->d : NULL);
    case F_strerror: return text_ok(stvm_strerror((int)a->n));
    case F_err_name: return yes(strcmp(stvm_err_name((int)a->n), "STVM_E?") == 0);
    case F_config_init:
        return a->ssize ? stvm_config_init_(o ? &o->cfg : NULL, a->ssize) : stvm_config_init(NULL);
    case F_config_check:
        return stvm_config_check_(a->null_ptr ? NULL : &cfg, a->null_out ? NULL : f->text,
                                  a->z ? a->z : sizeof f->text, SSIZE(stvm_config));
    case F_idle_mode_name: return null_or_not(stvm_idle_mode_name((int)a->n));
    case F_vm_create: {
        int rc = stvm_vm_create_(a->null_ptr ? NULL : &cfg, o ? &o->vm : NULL, SSIZE(stvm_config));
        if (rc == STVM_OK && o)
            stvm_vm_free(o->vm);   /* an unexpected success must not leak */
        return rc;
    }
    case F_vm_free: stvm_vm_free(vm); return R_VOID;
    case F_vm_config: return stvm_vm_config_(vm, o ? &o->cfg : NULL, SSIZE(stvm_config));
    case F_spawn: return stvm_spawn(vm, (int)a->n, "row", fnp, NULL, o ? &o->p : NULL);
    case F_spawn_sized:
        return stvm_spawn_sized(vm, (int)a->n, "row", fnp, NULL, (size_t)a->z, o ? &o->p : NULL);
    case F_spawn_suspended:
        return stvm_spawn_suspended(vm, (int)a->n, "row", fnp, NULL, (size_t)a->z,
                                    o ? &o->p : NULL);
    case F_run: return stvm_run(vm);
    case F_yield: return stvm_yield(vm);
    case F_vm_active_process: return null_or_not(stvm_vm_active_process(vm));
    case F_checkpoint: return stvm_checkpoint(vm);
    case F_work_us: return stvm_work_us(vm, (uint64_t)a->z);
    case F_process_resume: return stvm_process_resume(vm, p);
    case F_process_suspend: return stvm_process_suspend(vm, p);
    case F_process_terminate: return stvm_process_terminate(vm, p);
    case F_process_interrupt: return stvm_process_interrupt(vm, p, fnp, NULL);
    case F_process_release: return stvm_process_release(vm, p);
    case F_process_join: return stvm_process_join(vm, p, a->n);
    case F_ensure: return stvm_ensure(vm, fnp, NULL);
    case F_ensure_pop: return stvm_ensure_pop(vm, a->n != 0);
    case F_process_set_priority: return stvm_process_set_priority(vm, p, (int)a->n);
    case F_process_get_info:
        return stvm_process_get_info_(vm, p, o ? &o->info : NULL, SSIZE(stvm_process_info));
    case F_vm_processes: {
        /* z: the room in the list (at most 64); null_out: no count (a success writes
         * only these locals, so that a failure that writes is still seen) */
        stvm_process *list[64];
        size_t n = 0;
        int rc = stvm_vm_processes(vm, a->null_ptr ? NULL : list, a->z > 64 ? 64 : (size_t)a->z,
                                   a->null_out ? NULL : &n);
        return rc < 0 ? rc : R_COUNT;
    }
    case F_vm_blocked_report: {
        int rc = stvm_vm_blocked_report(vm, a->null_ptr ? NULL : f->text, (size_t)a->z);
        return rc < 0 ? rc : R_COUNT;
    }
    case F_vm_check_invariants:
        return stvm_vm_check_invariants(vm, a->null_ptr ? NULL : f->text, (size_t)a->z);
    case F_run_mode: return stvm_run_mode(vm, (int)a->n);
    case F_backend_fd: r = stvm_backend_fd(vm); return r < 0 ? (int)r : R_COUNT;
    case F_backend_timeout_ms: r = stvm_backend_timeout_ms(vm); return r >= 0 ? R_COUNT : (int)r;
    case F_stop: stvm_stop(vm); return R_VOID;
    case F_vm_get_stats: return stvm_vm_get_stats_(vm, o ? &o->stats : NULL, SSIZE(stvm_stats));
    case F_vm_reset_stats: stvm_vm_reset_stats(vm); return R_VOID;
    }
    return R_NOT_MINE;
}

/* One line a function: what its generated rows need (NO_DESC: none are generated). */
static const fn_line lines[] = {
    NO_DESC(version),
    NO_DESC(version_string),
    NO_DESC(context_backend),
    DESC(measure_raw_switch, .null_out = E_INVAL, .ok = {.n = 1000}),
    NO_DESC(strerror),
    NO_DESC(err_name),
    NO_DESC(config_init),
    NO_DESC(config_check),
    NO_DESC(idle_mode_name),
    DESC(vm_create, .null_out = E_INVAL),
    DESC(vm_free, .null_vm = R_VOID),
    DESC(vm_config, .null_vm = E_INVAL, .null_out = E_INVAL),
    DESC(spawn, .null_vm = E_INVAL, .ok = {.n = 40}),
    DESC(spawn_sized, .null_vm = E_INVAL, .ok = {.n = 40}),
    DESC(spawn_suspended, .null_vm = E_INVAL, .ok = {.n = 40}),
    DESC(run, .null_vm = E_INVAL),
    DESC(yield, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(vm_active_process, .null_vm = R_NULL, .not_proc = R_NULL),
    DESC(checkpoint, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(work_us, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(process_resume, .null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL),
    DESC(process_suspend, .null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL),
    DESC(process_terminate, .null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL),
    DESC(process_interrupt, .null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL),
    DESC(process_release, .null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL),
    DESC(process_join, .null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 0}),
    DESC(ensure, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(ensure_pop, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(process_set_priority, .null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL,
                                .ok = {.n = 40}),
    DESC(process_get_info, .null_vm = E_INVAL, .kind = K_PROC, .bad_handle = E_INVAL,
                            .null_out = E_INVAL),
    DESC(vm_processes, .null_vm = E_INVAL, .null_out = E_INVAL),
    DESC(vm_blocked_report, .null_vm = E_INVAL, .ok = {.z = 0, .null_ptr = true}),
    DESC(vm_check_invariants, .null_vm = E_INVAL),
    /* running inside another event loop (a valid call would run or stop the VM: only
     * the NULL vm is generated) */
    DESC(run_mode, .null_vm = E_INVAL),
    DESC(backend_fd, .null_vm = E_INVAL),
    DESC(backend_timeout_ms, .null_vm = E_INVAL),
    DESC(stop, .null_vm = R_VOID),
    DESC(vm_get_stats, .null_vm = E_INVAL, .null_out = E_INVAL),
    DESC(vm_reset_stats, .null_vm = R_VOID),
};

#define BAD_PRIORITIES(fn, ctx)                                                                 \
    ROW(fn, "priority 0", ctx, E_INVAL, .n = 0),                                                \
    ROW(fn, "priority 81", ctx, E_INVAL, .n = 81),                                              \
    ROW(fn, "priority -1", ctx, E_INVAL, .n = -1),                                              \
    ROW(fn, "priority INT_MAX", ctx, E_INVAL, .n = INT_MAX),                                    \
    ROW(fn, "priority INT_MIN", ctx, E_INVAL, .n = INT_MIN),                                    \
    ROW(fn, "NULL function", ctx, E_INVAL, .n = 40, .null_ptr = true)
#define BAD_STACKS(fn, ctx)                                                                     \
    ROW(fn, "stack 1 byte", ctx, E_INVAL, .n = 40, .z = 1),                                     \
    ROW(fn, "stack 4 KiB", ctx, E_INVAL, .n = 40, .z = 4096),                                   \
    ROW(fn, "stack 8 KiB - 1", ctx, E_INVAL, .n = 40, .z = 8191),                               \
    ROW(fn, "stack 64 MiB + 1", ctx, E_INVAL, .n = 40, .z = ((uint64_t)64 << 20) + 1),          \
    ROW(fn, "stack SIZE_MAX", ctx, E_INVAL, .n = 40, .z = SIZE_MAX)
static const row rows[] = {
    /* ---- functions that never fail: odd inputs still answer sensibly ---- */
    ROW(version, "answers STVM_VERSION_HEX", C_HOST, R_TRUE),
    ROW(version_string, "answers STVM_VERSION_STRING", C_HOST, R_TRUE),
    ROW(context_backend, "names its back end", C_HOST, R_TRUE),
    ROW(strerror, "code 1 has a text", C_HOST, R_TRUE, .n = 1),
    ROW(strerror, "the first unused code has a text", C_HOST, R_TRUE, .n = FIRST_UNUSED_CODE),
    ROW(strerror, "INT_MIN has a text", C_HOST, R_TRUE, .n = INT_MIN),
    ROW(strerror, "INT_MAX has a text", C_HOST, R_TRUE, .n = INT_MAX),
    ROW(err_name, "code 1 is STVM_E?", C_HOST, R_TRUE, .n = 1),
    ROW(err_name, "the first unused code is STVM_E?", C_HOST, R_TRUE, .n = FIRST_UNUSED_CODE),
    ROW(err_name, "INT_MIN is STVM_E?", C_HOST, R_TRUE, .n = INT_MIN),
    ROW(err_name, "INT_MAX is STVM_E?", C_HOST, R_TRUE, .n = INT_MAX),
    ROW(config_init, "NULL cfg", C_HOST, STVM_EINVAL),
    ROW(idle_mode_name, "mode -1: none", C_HOST, R_NULL, .n = -1),
    ROW(idle_mode_name, "STVM_IDLE_MODES: none", C_HOST, R_NULL, .n = STVM_IDLE_MODES),
    ROW(idle_mode_name, "INT_MIN: none", C_HOST, R_NULL, .n = INT_MIN),
    ROW(idle_mode_name, "INT_MAX: none", C_GREEN, R_NULL, .n = INT_MAX),
    ROW(idle_mode_name, "the last mode: its name", C_GREEN, R_NONNULL, .n = STVM_IDLE_MODES - 1),
    ROW(idle_mode_name, "while the VM runs, from another thread: its name", C_BARE, R_NONNULL,
        .n = STVM_IDLE_POLL),

    /* ---- measure_raw_switch ---- */
    ROW(measure_raw_switch, "0 iterations", C_HOST, E_INVAL, .n = 0),
    ROW(measure_raw_switch, "inside stvm_run", C_GREEN, STVM_EBUSY, .n = 1000),

    /* ---- config_check and vm_create (the broken fields are generated) ---- */
    ROW(config_check, "NULL cfg", C_HOST, E_INVAL, .null_ptr = true),
    /* A struct size the library cannot know (include/README.md, "Structs that grow"):
     * from a newer header, holding no field, or cutting one. */
    ROW(config_init, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_config) + 8),
    ROW(config_init, "struct size cutting a field", C_HOST, STVM_ESIZE, .ssize = 2),
    ROW(config_check, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_config) + 8),
    ROW(vm_create, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_config) + 8),
    ROW(vm_create, "struct size holding no field", C_HOST, STVM_ESIZE, .ssize = 1),
    ROW(vm_config, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_config) + 4),
    ROW(vm_config, "struct size cutting stack_size", C_HOST, STVM_ESIZE,
        .ssize = offsetof(stvm_config, stack_size) + 4),
    ROW(process_get_info, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_process_info) + 8),
    ROW(process_get_info, "struct size cutting name", C_GREEN, STVM_ESIZE, .ssize = 4),
    ROW(vm_get_stats, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_stats) + 8),
    ROW(vm_get_stats, "struct size cutting a counter", C_GREEN, STVM_ESIZE, .ssize = 12),
    ROW(config_check, "NULL why with a size", C_HOST, E_INVAL, .null_out = true, .z = 16),

    /* ---- lifetime and runs in the wrong place ---- */
    ROW(vm_free, "its own VM from inside stvm_run: ignored", C_GREEN, R_VOID),
    ROW(vm_free, "a VM running on another thread: ignored", C_BARE, R_VOID),
    ROW(run, "its own VM from inside stvm_run", C_GREEN, STVM_EBUSY),
    ROW(run, "another VM from inside stvm_run (runs do not nest)", C_GREEN, STVM_EBUSY,
        .vm = V_OTHER),
    ROW(run, "a VM already running on another thread", C_BARE, STVM_EBUSY),
    ROW(run, "a VM already running on another thread, from a process", C_ELSEWHERE, STVM_EBUSY),

    /* ---- spawning: priorities, functions, stack sizes ---- */
    BAD_PRIORITIES(spawn, C_HOST), BAD_PRIORITIES(spawn, C_GREEN),
    BAD_PRIORITIES(spawn_sized, C_HOST), BAD_PRIORITIES(spawn_sized, C_GREEN),
    BAD_PRIORITIES(spawn_suspended, C_HOST), BAD_PRIORITIES(spawn_suspended, C_GREEN),
    BAD_STACKS(spawn_sized, C_HOST), BAD_STACKS(spawn_sized, C_GREEN),
    BAD_STACKS(spawn_suspended, C_HOST), BAD_STACKS(spawn_suspended, C_GREEN),

    /* ---- processes in states that refuse the call ---- */
    ROW(process_resume, "a ready process", C_HOST, E_STATE, .h = H_READY),
    ROW(process_resume, "a ready process", C_GREEN, E_STATE, .h = H_READY),
    ROW(process_resume, "a process waiting on a semaphore", C_HOST, E_STATE, .h = H_WAITING),
    ROW(process_resume, "a process waiting on a mutex", C_HOST, E_STATE, .h = H_MWAITER),
    ROW(process_resume, "a finished process", C_HOST, E_STATE, .h = H_DONE),
    ROW(process_resume, "the running process itself", C_GREEN, E_STATE, .h = H_SELF),
    ROW(process_resume, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_resume, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_resume, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_resume, "the timing process", C_GREEN, E_STATE, .h = H_TIMING),
    ROW(process_suspend, "a suspended process", C_HOST, E_STATE, .h = H_PROC),
    ROW(process_suspend, "a suspended process", C_GREEN, E_STATE, .h = H_PROC),
    ROW(process_suspend, "a finished process", C_HOST, E_STATE, .h = H_DONE),
    ROW(process_suspend, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_suspend, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_suspend, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_suspend, "the timing process", C_GREEN, E_STATE, .h = H_TIMING),
    ROW(process_terminate, "a finished process (a no-op, as in Pharo)", C_HOST, STVM_OK,
        .h = H_DONE),
    ROW(process_terminate, "a finished process (a no-op, as in Pharo)", C_GREEN, STVM_OK,
        .h = H_DONE),
    ROW(process_terminate, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_terminate, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_terminate, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_terminate, "the timing process", C_GREEN, E_STATE, .h = H_TIMING),
    ROW(process_interrupt, "a finished process", C_HOST, E_STATE, .h = H_DONE),
    ROW(process_interrupt, "a finished process", C_GREEN, E_STATE, .h = H_DONE),
    ROW(process_interrupt, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_interrupt, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_interrupt, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_interrupt, "the timing process", C_GREEN, E_STATE, .h = H_TIMING),
    ROW(process_release, "a handle nobody holds", C_HOST, E_STATE, .h = H_UNHELD),
    ROW(process_release, "the idle process", C_HOST, E_STATE, .h = H_IDLE),
    ROW(process_release, "the timing process", C_HOST, E_STATE, .h = H_TIMING),
    ROW(process_release, "the idle process", C_GREEN, E_STATE, .h = H_IDLE),
    ROW(process_join, "the caller itself", C_GREEN, E_INVAL, .h = H_SELF, .n = -1),
    ROW(process_join, "a handle nobody holds", C_GREEN, E_STATE, .h = H_UNHELD, .n = -1),
    ROW(process_join, "the idle process", C_GREEN, E_STATE, .h = H_IDLE, .n = -1),
    ROW(process_join, "the timing process", C_GREEN, E_STATE, .h = H_TIMING, .n = -1),
    ROW(process_join, "timeout -2", C_GREEN, E_INVAL, .h = H_WAITING, .n = -2),
    ROW(process_join, "timeout INT64_MIN", C_GREEN, E_INVAL, .h = H_WAITING, .n = INT64_MIN),
    ROW(process_join, "timeout 2^52/1000 + 1 ms", C_GREEN, E_RANGE, .h = H_WAITING,
        .n = MS_MAX_FROM_US + 1),
    ROW(process_join, "timeout INT64_MAX", C_GREEN, E_RANGE, .h = H_WAITING, .n = INT64_MAX),
    ROW(process_join, "timeout 0 on a running process: only checks", C_GREEN, STVM_ETIMEDOUT,
        .h = H_WAITING, .n = 0),
    ROW(process_set_priority, "priority 0", C_HOST, E_INVAL, .n = 0),
    ROW(process_set_priority, "priority 81", C_HOST, E_INVAL, .n = 81),
    ROW(process_set_priority, "priority -1", C_HOST, E_INVAL, .n = -1),
    ROW(process_set_priority, "priority INT_MAX", C_HOST, E_INVAL, .n = INT_MAX),
    ROW(process_set_priority, "priority INT_MIN", C_HOST, E_INVAL, .n = INT_MIN),
    ROW(process_set_priority, "priority 81 for itself", C_GREEN, E_INVAL, .h = H_SELF, .n = 81),
    ROW(process_set_priority, "priority 0 for a waiting process", C_GREEN, E_INVAL,
        .h = H_WAITING, .n = 0),
    ROW(process_set_priority, "a finished process", C_HOST, E_STATE, .h = H_DONE, .n = 40),
    ROW(process_set_priority, "the idle process", C_HOST, E_STATE, .h = H_IDLE, .n = 40),
    ROW(process_set_priority, "the idle process", C_GREEN, E_STATE, .h = H_IDLE, .n = 40),
    ROW(process_set_priority, "the timing process", C_HOST, E_STATE, .h = H_TIMING, .n = 40),
    ROW(process_set_priority, "the timing process", C_GREEN, E_STATE, .h = H_TIMING, .n = 40),
    ROW(ensure, "NULL function", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(ensure_pop, "no cleanup registered", C_GREEN, E_STATE),
    ROW(ensure_pop, "no cleanup registered, run", C_GREEN, E_STATE, .n = 1),

    /* ---- reports ---- */
    ROW(vm_blocked_report, "NULL buf with a size", C_HOST, E_INVAL, .null_ptr = true, .z = 16),
    ROW(vm_blocked_report, "NULL buf, size 0: the length", C_HOST, R_COUNT, .null_ptr = true, .z = 0),
    ROW(vm_blocked_report, "a 1-byte buffer: the length", C_HOST, R_COUNT, .z = 1),
    ROW(vm_check_invariants, "NULL buf with a size", C_HOST, STVM_OK, .null_ptr = true, .z = 16),

    /* ---- work ---- */
    ROW(work_us, "STVM_MAX_WORK_US + 1 us", C_GREEN, STVM_ERANGE, .z = STVM_MAX_WORK_US + 1),
    ROW(work_us, "SIZE_MAX us", C_GREEN, STVM_ERANGE, .z = SIZE_MAX),

    /* ---- the process listing ---- */
    ROW(vm_processes, "NULL out with room for 4", C_HOST, E_INVAL, .null_ptr = true, .z = 4),
    ROW(vm_processes, "NULL out, room 0: the count", C_GREEN, R_COUNT, .null_ptr = true),
    ROW(vm_processes, "room for 1 of many: the count", C_HOST, R_COUNT, .z = 1),
    ROW(vm_processes, "room for 64", C_GREEN, R_COUNT, .z = 64),
    ROW(vm_processes, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC, .z = 4),
    ROW(vm_processes, "while the VM runs, from its thread outside stvm_run", C_BARE,
        STVM_ENOTPROC, .z = 4),

    /* ---- another VM's process on another thread, while this VM runs (the calls that
     * need a process are generated in this context too) ---- */
    ROW(ensure_pop, "no cleanup, run", C_ELSEWHERE, STVM_ENOTPROC, .n = 1),
    ROW(vm_active_process, "the VM's running process (its idle one), changing nothing", C_ELSEWHERE,
        R_NONNULL),

    /* ---- living inside another event loop ---- */
    ROW(run_mode, "mode -1", C_HOST, E_INVAL, .n = -1),
    ROW(run_mode, "mode 3", C_HOST, E_INVAL, .n = 3),
    ROW(run_mode, "mode INT_MAX", C_HOST, E_INVAL, .n = INT_MAX),
    ROW(run_mode, "mode INT_MIN", C_HOST, E_INVAL, .n = INT_MIN),
    ROW(run_mode, "NULL vm, mode 3", C_HOST, E_INVAL, .vm = V_NULL, .n = 3),
    ROW(run_mode, "its own VM from inside stvm_run, once", C_GREEN, STVM_EBUSY, .n = STVM_RUN_ONCE),
    ROW(run_mode, "its own VM from inside stvm_run, nowait", C_GREEN, STVM_EBUSY,
        .n = STVM_RUN_NOWAIT),
    ROW(run_mode, "another VM from inside stvm_run (runs do not nest)", C_GREEN, STVM_EBUSY,
        .vm = V_OTHER, .n = STVM_RUN_NOWAIT),
    ROW(run_mode, "mode 3 from inside stvm_run", C_GREEN, E_INVAL, .n = 3),
    ROW(run_mode, "a VM already running on another thread", C_BARE, STVM_EBUSY,
        .n = STVM_RUN_NOWAIT),
    ROW(run_mode, "a VM already running on another thread", C_BARE, STVM_EBUSY, .vm = V_NET,
        .n = STVM_RUN_ONCE),
    ROW(run_mode, "a VM already running on another thread, from a process", C_ELSEWHERE,
        STVM_EBUSY, .vm = V_NET, .n = STVM_RUN_NOWAIT),
    ROW(backend_fd, "NULL vm", C_GREEN, E_INVAL, .vm = V_NULL),
    ROW(backend_fd, "a VM: its descriptor, changing nothing", C_HOST, R_COUNT),
    ROW(backend_fd, "a VM running on another thread: its descriptor", C_BARE, R_COUNT, .vm = V_NET),
    ROW(backend_timeout_ms, "NULL vm", C_GREEN, E_INVAL, .vm = V_NULL),
    ROW(backend_timeout_ms, "a VM with a ready process: 0, changing nothing", C_HOST, R_COUNT),
    ROW(stop, "NULL vm, from a process", C_GREEN, R_VOID, .vm = V_NULL),
    ROW(stop, "NULL vm, from another thread", C_BARE, R_VOID, .vm = V_NULL),
};

/* Each broken configuration field, to stvm_config_check and to stvm_vm_create. */
static void generate(table *t)
{
    for (int c = CFG_OK + 1; c < N_CFG; c++) {
        api_table_add(t, (row){.fn = F_config_check, .what = cfg_faults[c].field, .ctx = C_HOST,
                     .a = {.cfg = c}, .want = E_INVAL, .text = cfg_faults[c].field});
        api_table_add(t, (row){.fn = F_vm_create, .what = cfg_faults[c].field, .ctx = C_HOST, .a = {.cfg = c},
                     .want = E_INVAL});
    }
}

const api_module api_rows_vm = API_MODULE(vm, generate);
