/*
 * The API table's rows for time and Delays (stvm/core.h: the clocks, the simulated world,
 * Delays, timed calls): how each function is called, what its generated rows need, and the
 * rows written out (tests/test_api_table.c runs them).
 */
#include "api_table.h"

/* Make the call a row of this module describes (c: its arguments, resolved), or answer
 * R_NOT_MINE for another module's function. */
static int call(fx *f, int fn, const args *a, const call_in *c)
{
    stvm_vm *vm = c->vm;
    stvm_semaphore *sem = c->sem;
    stvm_delay *dl = c->dl;
    stvm_fn fnp = c->fnp;
    union out_slot *o = c->o;
    const char *name = c->name;
    char *nbuf = c->nbuf;
    size_t nsize = c->nsize;
    switch (fn) {
    case F_vm_now_us: return stvm_vm_now_us(vm) ? R_NONZERO : R_ZERO;
    case F_vm_millisecond_clock: return stvm_vm_millisecond_clock(vm) ? R_NONZERO : R_ZERO;
    case F_sim_at:
        return stvm_sim_at(vm, stvm_vm_now_us(vm) + (uint64_t)a->z, a->null_fail ? NULL : nothing_fn,
                           NULL);
    case F_sim_set_cost: return stvm_sim_set_cost(vm, (int)a->n, (uint32_t)a->z);
    case F_sim_cost: return stvm_sim_cost(vm, (int)a->n);
    case F_delay_wait_ms: return stvm_delay_wait_ms(vm, a->n);
    case F_delay_wait_us: return stvm_delay_wait_us(vm, a->n);
    case F_call_within_ms: return stvm_call_within_ms(vm, fnp, NULL, a->n);
    case F_call_within_us: return stvm_call_within_us(vm, fnp, NULL, a->n);
    case F_delay_new_ms: return stvm_delay_new_ms(vm, a->n, o ? &o->dl : NULL);
    case F_delay_new_us: return stvm_delay_new_us(vm, a->n, o ? &o->dl : NULL);
    case F_delay_free: return stvm_delay_free(vm, dl);
    case F_delay_wait: return stvm_delay_wait(vm, dl);
    case F_delay_schedule: return stvm_delay_schedule(vm, dl);
    case F_delay_unschedule: return stvm_delay_unschedule(vm, dl);
    case F_delay_is_expired: return stvm_delay_is_expired(vm, dl);
    case F_delay_being_waited_on: return stvm_delay_being_waited_on(vm, dl);
    case F_delay_ms_to_go: return stvm_delay_ms_to_go(vm, dl, o ? &o->i64 : NULL);
    case F_delay_us_to_go: return stvm_delay_us_to_go(vm, dl, o ? &o->i64 : NULL);
    case F_delay_semaphore: return null_or_not(stvm_delay_semaphore(dl));
    case F_delay_timeout_semaphore_ms:
        return stvm_delay_timeout_semaphore_ms(vm, sem, a->n, o ? &o->dl : NULL);
    case F_delay_set_name: return stvm_delay_set_name(vm, dl, name);
    case F_delay_get_name: return count_or(stvm_delay_get_name(vm, dl, nbuf, nsize));
    }
    return R_NOT_MINE;
}

/* A function without a vm cannot tell another VM's handle (or a forged one) from its
 * own: it is given only handles of another kind. */
static const int novm_delay_wrong[] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_STREAM, H_BOX,
                                       H_BYTES, H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, 0};

/* One line a function: what its generated rows need (NO_DESC: none are generated). */
static const fn_line lines[] = {
    DESC(vm_now_us, .null_vm = R_ZERO),
    DESC(vm_millisecond_clock, .null_vm = R_ZERO),
    DESC(sim_at, .null_vm = E_INVAL),
    DESC(sim_set_cost, .null_vm = E_INVAL),
    DESC(sim_cost, .null_vm = E_INVAL),
    DESC(delay_wait_ms, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.n = 1}),
    DESC(delay_wait_us, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.n = 1}),
    DESC(call_within_ms, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.n = 1}),
    DESC(call_within_us, .null_vm = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                         .ok = {.n = 1}),
    DESC(delay_new_ms, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.n = 1}),
    DESC(delay_new_us, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.n = 1}),
    DESC(delay_free, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL),
    DESC(delay_wait, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                      .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(delay_schedule, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                          .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(delay_unschedule, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                            .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(delay_is_expired, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL),
    DESC(delay_being_waited_on, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL),
    DESC(delay_ms_to_go, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                          .null_out = E_INVAL),
    DESC(delay_us_to_go, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL,
                          .null_out = E_INVAL),
    DESC(delay_semaphore, .kind = K_DELAY, .bad_handle = R_NULL, .wrong = novm_delay_wrong),
    DESC(delay_timeout_semaphore_ms, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                                .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                                .ok = {.n = 1}),
    DESC(delay_set_name, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL),
    DESC(delay_get_name, .null_vm = E_INVAL, .kind = K_DELAY, .bad_handle = E_INVAL),
};

static const row rows[] = {
    /* ---- the simulated world, durations ---- */
    ROW(sim_at, "NULL fn", C_HOST, E_INVAL, .null_fail = true),
    ROW(sim_at, "1 us before now", C_HOST, E_RANGE, .z = SIZE_MAX),
    ROW(sim_at, "1 us before now, from a process", C_GREEN, E_RANGE, .z = SIZE_MAX),
    ROW(sim_at, "past the clock's end (2^62 us)", C_HOST, E_RANGE, .vm = V_END, .z = 1000),
    ROW(sim_set_cost, "op -1", C_HOST, E_INVAL, .n = -1, .z = 1),
    ROW(sim_set_cost, "op STVM_SIM_COST_OPS", C_GREEN, E_INVAL, .n = STVM_SIM_COST_OPS, .z = 1),
    ROW(sim_set_cost, "STVM_SIM_COST_MAX_US + 1 us", C_HOST, E_RANGE, .z = STVM_SIM_COST_MAX_US + 1),
    ROW(sim_set_cost, "UINT32_MAX us, from a process", C_GREEN, E_RANGE, .n = STVM_SIM_COST_DELAY,
        .z = UINT32_MAX),
    ROW(sim_cost, "op -1", C_HOST, E_INVAL, .n = -1),
    ROW(sim_cost, "op STVM_SIM_COST_OPS", C_HOST, E_INVAL, .n = STVM_SIM_COST_OPS),
    BAD_DURATIONS_MS(delay_wait_ms, .h = H_DEFAULT),
    BAD_DURATIONS_US(delay_wait_us, .h = H_DEFAULT),
    BAD_DURATIONS_MS(call_within_ms, .h = H_DEFAULT),
    BAD_DURATIONS_US(call_within_us, .h = H_DEFAULT),
    ROW(call_within_ms, "NULL function", C_GREEN, E_INVAL, .null_ptr = true, .n = 1),
    ROW(call_within_us, "NULL function", C_GREEN, E_INVAL, .null_ptr = true, .n = 1),
    ROW(call_within_ms, "0 ms: the timeout at once, fn not called", C_GREEN, STVM_ETIMEDOUT,
        .n = 0),
    BAD_DURATIONS_MS(delay_timeout_semaphore_ms, .h = H_DEFAULT),
    ROW(delay_new_ms, "-1 ms", C_HOST, E_INVAL, .n = -1),
    ROW(delay_new_ms, "INT64_MIN ms", C_HOST, E_INVAL, .n = INT64_MIN),
    ROW(delay_new_us, "-1 us", C_HOST, E_INVAL, .n = -1),
    ROW(delay_schedule, "1 ms, ending past the clock's end", C_GREEN, E_RANGE, .vm = V_END),
    ROW(delay_wait, "1 ms, ending past the clock's end", C_GREEN, E_RANGE, .vm = V_END),
    ROW(delay_unschedule, "a Delay nobody scheduled: nothing to do", C_GREEN, STVM_OK),
    ROW(delay_is_expired, "a Delay nobody scheduled", C_HOST, 0),
    ROW(delay_being_waited_on, "a Delay nobody scheduled", C_HOST, 0),
    ROW(delay_semaphore, "a Delay: its semaphore", C_HOST, R_NONNULL),

    /* ---- names (stvm/core.h, "Names") ---- */
    NAME_ROWS(delay, .h = H_DEFAULT),
};

const api_module api_rows_time = API_MODULE(time, NULL);
