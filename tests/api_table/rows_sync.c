/*
 * The API table's rows for semaphores, mutexes and monitors (stvm/core.h): how each
 * function is called, what its generated rows need, and the rows written out
 * (tests/test_api_table.c runs them).
 */
#include "api_table.h"

/* Make the call a row of this module describes (c: its arguments, resolved), or answer
 * R_NOT_MINE for another module's function. */
static int call(fx *f, int fn, const args *a, const call_in *c)
{
    stvm_vm *vm = c->vm;
    stvm_semaphore *sem = c->sem;
    stvm_mutex *m = c->m;
    stvm_monitor *mon = c->mon;
    int qid = c->qid;
    stvm_monitor_pred pred = c->pred;
    stvm_fn fnp = c->fnp;
    union out_slot *o = c->o;
    const char *name = c->name;
    char *nbuf = c->nbuf;
    size_t nsize = c->nsize;
    switch (fn) {
    case F_semaphore_new: return stvm_semaphore_new(vm, o ? &o->sem : NULL);
    case F_semaphore_free: return stvm_semaphore_free(vm, sem);
    case F_semaphore_signal: return stvm_semaphore_signal(vm, sem);
    case F_semaphore_wait: return stvm_semaphore_wait(vm, sem);
    case F_semaphore_critical: return stvm_semaphore_critical(vm, sem, fnp, NULL);
    case F_semaphore_try_wait: return stvm_semaphore_try_wait(vm, sem);
    case F_semaphore_excess: {
        int64_t x = stvm_semaphore_excess(vm, sem);
        return x < 0 ? (int)x : R_COUNT;
    }
    case F_semaphore_set_name: return stvm_semaphore_set_name(vm, sem, name);
    case F_semaphore_get_name: return count_or(stvm_semaphore_get_name(vm, sem, nbuf, nsize));
    case F_mutex_new: return stvm_mutex_new(vm, o ? &o->m : NULL);
    case F_mutex_free: return stvm_mutex_free(vm, m);
    case F_mutex_enter: return stvm_mutex_enter(vm, m);
    case F_mutex_enter_timeout_ms: return stvm_mutex_enter_timeout_ms(vm, m, a->n);
    case F_mutex_exit: return stvm_mutex_exit(vm, m);
    case F_mutex_try_enter: return stvm_mutex_try_enter(vm, m);
    case F_mutex_owner: return null_or_not(stvm_mutex_owner(vm, m));
    case F_mutex_critical: return stvm_mutex_critical(vm, m, fnp, NULL);
    case F_mutex_set_name: return stvm_mutex_set_name(vm, m, name);
    case F_mutex_get_name: return count_or(stvm_mutex_get_name(vm, m, nbuf, nsize));
    case F_monitor_new: return stvm_monitor_new(vm, o ? &o->mon : NULL);
    case F_monitor_free: return stvm_monitor_free(vm, mon);
    case F_monitor_enter: return stvm_monitor_enter(vm, mon);
    case F_monitor_enter_timeout_ms: return stvm_monitor_enter_timeout_ms(vm, mon, a->n);
    case F_monitor_try_enter: return stvm_monitor_try_enter(vm, mon);
    case F_monitor_exit: return stvm_monitor_exit(vm, mon);
    case F_monitor_critical: return stvm_monitor_critical(vm, mon, fnp, NULL);
    case F_monitor_owner: return null_or_not(stvm_monitor_owner(vm, mon));
    case F_monitor_depth: {
        int64_t d = stvm_monitor_depth(vm, mon);
        return d < 0 ? (int)d : d == 0 ? R_ZERO : R_NONZERO;
    }
    case F_monitor_wait: return stvm_monitor_wait(vm, mon);
    case F_monitor_wait_timeout_ms: return stvm_monitor_wait_timeout_ms(vm, mon, a->n);
    case F_monitor_wait_on: return stvm_monitor_wait_on(vm, mon, qid);
    case F_monitor_wait_on_timeout_ms:
        return stvm_monitor_wait_on_timeout_ms(vm, mon, qid, a->n);
    case F_monitor_wait_while: return stvm_monitor_wait_while(vm, mon, pred, NULL);
    case F_monitor_wait_until: return stvm_monitor_wait_until(vm, mon, pred, NULL);
    case F_monitor_wait_while_on: return stvm_monitor_wait_while_on(vm, mon, qid, pred, NULL);
    case F_monitor_wait_until_on: return stvm_monitor_wait_until_on(vm, mon, qid, pred, NULL);
    case F_monitor_signal: return stvm_monitor_signal(vm, mon);
    case F_monitor_signal_all: return stvm_monitor_signal_all(vm, mon);
    case F_monitor_signal_on: return stvm_monitor_signal_on(vm, mon, qid);
    case F_monitor_signal_all_on: return stvm_monitor_signal_all_on(vm, mon, qid);
    case F_monitor_signal_really_all: return stvm_monitor_signal_really_all(vm, mon);
    case F_monitor_set_name: return stvm_monitor_set_name(vm, mon, name);
    case F_monitor_get_name: return count_or(stvm_monitor_get_name(vm, mon, nbuf, nsize));
    case F_semaphore_wait_timeout_ms: return stvm_semaphore_wait_timeout_ms(vm, sem, a->n);
    case F_semaphore_wait_timeout_us: return stvm_semaphore_wait_timeout_us(vm, sem, a->n);
    }
    return R_NOT_MINE;
}

/* One line a function: what its generated rows need (NO_DESC: none are generated). */
static const fn_line lines[] = {
    DESC(semaphore_new, .null_vm = E_INVAL, .null_out = E_INVAL),
    DESC(semaphore_free, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL),
    DESC(semaphore_signal, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL),
    DESC(semaphore_wait, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                          .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(semaphore_critical, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                              .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(semaphore_try_wait, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                              .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(semaphore_excess, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL),
    DESC(semaphore_set_name, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL),
    DESC(semaphore_get_name, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL),
    DESC(mutex_new, .null_vm = E_INVAL, .null_out = E_INVAL),
    DESC(mutex_free, .null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL),
    DESC(mutex_enter, .null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(mutex_enter_timeout_ms, .null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                                  .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}),
    /* Leaving a mutex the caller does not own is EPERM, whoever the caller is. */
    DESC(mutex_exit, .null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                      .not_proc = STVM_EPERM, .ctx = C_GREEN),
    DESC(mutex_try_enter, .null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                           .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(mutex_owner, .null_vm = R_NULL, .kind = K_MUTEX, .bad_handle = R_NULL),
    DESC(mutex_critical, .null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL,
                          .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(mutex_set_name, .null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL),
    DESC(mutex_get_name, .null_vm = E_INVAL, .kind = K_MUTEX, .bad_handle = E_INVAL),
    DESC(monitor_new, .null_vm = E_INVAL, .null_out = E_INVAL),
    DESC(monitor_free, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL),
    DESC(monitor_enter, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                         .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(monitor_enter_timeout_ms, .null_vm = E_INVAL, .kind = K_MONITOR,
                                    .bad_handle = E_INVAL, .not_proc = STVM_ENOTPROC,
                                    .ctx = C_GREEN, .ok = {.n = 1}),
    DESC(monitor_try_enter, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                             .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    /* Only the owner leaves or signals: from anywhere else EPERM, as a mutex's exit. */
    DESC(monitor_exit, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                        .not_proc = STVM_EPERM, .ctx = C_GREEN),
    DESC(monitor_critical, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                            .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(monitor_owner, .null_vm = R_NULL, .kind = K_MONITOR, .bad_handle = R_NULL),
    DESC(monitor_depth, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL),
    DESC(monitor_wait, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(monitor_wait_timeout_ms, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                                   .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}),
    DESC(monitor_wait_on, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                           .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.m = 1}),
    DESC(monitor_wait_on_timeout_ms, .null_vm = E_INVAL, .kind = K_MONITOR,
                                      .bad_handle = E_INVAL, .not_proc = STVM_ENOTPROC,
                                      .ctx = C_GREEN, .ok = {.m = 1, .n = 1}),
    DESC(monitor_wait_while, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                              .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(monitor_wait_until, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                              .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(monitor_wait_while_on, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                                 .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.m = 1}),
    DESC(monitor_wait_until_on, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                                 .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.m = 1}),
    DESC(monitor_signal, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                          .not_proc = STVM_EPERM, .ctx = C_GREEN),
    DESC(monitor_signal_all, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                              .not_proc = STVM_EPERM, .ctx = C_GREEN),
    DESC(monitor_signal_on, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                             .not_proc = STVM_EPERM, .ctx = C_GREEN, .ok = {.m = 1}),
    DESC(monitor_signal_all_on, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL,
                                 .not_proc = STVM_EPERM, .ctx = C_GREEN, .ok = {.m = 1}),
    DESC(monitor_signal_really_all, .null_vm = E_INVAL, .kind = K_MONITOR,
                                     .bad_handle = E_INVAL, .not_proc = STVM_EPERM,
                                     .ctx = C_GREEN),
    DESC(monitor_set_name, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL),
    DESC(monitor_get_name, .null_vm = E_INVAL, .kind = K_MONITOR, .bad_handle = E_INVAL),
    DESC(semaphore_wait_timeout_ms, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                                     .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}),
    DESC(semaphore_wait_timeout_us, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                                     .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}),
};

/* Condition queue ids outside 0 .. STVM_MONITOR_QUEUES-1 (in .m). */
#define MONITOR_BAD_QUEUES(fn, ...)                                                             \
    ROW(fn, "queue -1", C_GREEN, E_INVAL, .m = -1, __VA_ARGS__),                                \
    ROW(fn, "queue STVM_MONITOR_QUEUES", C_GREEN, E_INVAL, .m = STVM_MONITOR_QUEUES,            \
        __VA_ARGS__),                                                                           \
    ROW(fn, "queue INT_MIN", C_GREEN, E_INVAL, .m = INT_MIN, __VA_ARGS__),                      \
    ROW(fn, "queue INT_MAX", C_GREEN, E_INVAL, .m = INT_MAX, __VA_ARGS__)

static const row rows[] = {
    /* ---- semaphores in states that refuse the call ---- */
    ROW(semaphore_free, "processes wait on it", C_HOST, STVM_EINUSE, .h = H_PARK),
    ROW(semaphore_free, "processes wait on it", C_GREEN, STVM_EINUSE, .h = H_PARK),
    ROW(semaphore_free, "registered as external", C_HOST, STVM_EINUSE, .h = H_EXT),
    ROW(semaphore_free, "the timer's semaphore (primitive 242)", C_HOST, STVM_EINUSE,
        .vm = V_OTHER, .h = H_ARMED),
    ROW(semaphore_try_wait, "no excess signal: EAGAIN (a try, no time limit)", C_GREEN,
        STVM_EAGAIN),
    ROW(semaphore_wait, "an excess signal, from the host thread: kept", C_HOST, STVM_ENOTPROC,
        .h = H_SEM_EXCESS),
    ROW(semaphore_try_wait, "an excess signal, from the host thread: kept", C_HOST, STVM_ENOTPROC,
        .h = H_SEM_EXCESS),
    ROW(semaphore_try_wait, "an excess signal, from another VM's thread: kept", C_THREAD,
        STVM_ENOTPROC, .h = H_SEM_EXCESS),

    /* ---- mutexes in states that refuse the call ---- */
    ROW(mutex_free, "owned, with a waiter", C_HOST, STVM_EINUSE, .h = H_BUSY),
    ROW(mutex_free, "owned, no waiter", C_HOST, STVM_EINUSE, .h = H_BUSY2),
    ROW(mutex_free, "owned by another process", C_GREEN, STVM_EINUSE, .h = H_BUSY2),
    ROW(mutex_exit, "a free mutex", C_GREEN, STVM_EPERM),
    ROW(mutex_exit, "owned by another process", C_GREEN, STVM_EPERM, .h = H_BUSY),
    ROW(mutex_exit, "owned by a process, from the host thread", C_HOST, STVM_EPERM, .h = H_BUSY),
    ROW(mutex_try_enter, "owned by another process: EAGAIN", C_GREEN, STVM_EAGAIN, .h = H_BUSY),
    ROW(mutex_enter_timeout_ms, "owned by another, 0 ms: ETIMEDOUT", C_GREEN, STVM_ETIMEDOUT,
        .h = H_BUSY, .n = 0),
    ROW(mutex_critical, "NULL function", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(semaphore_critical, "NULL function", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(semaphore_critical, "NULL function, with an excess signal: kept", C_GREEN, E_INVAL,
        .h = H_SEM_EXCESS, .null_ptr = true),
    ROW(mutex_critical, "NULL function, owned by another", C_GREEN, E_INVAL, .h = H_BUSY,
        .null_ptr = true),

    /* ---- durations ---- */
    BAD_DURATIONS_MS(semaphore_wait_timeout_ms, .h = H_DEFAULT),
    BAD_DURATIONS_US(semaphore_wait_timeout_us, .h = H_DEFAULT),
    BAD_DURATIONS_MS(mutex_enter_timeout_ms, .h = H_DEFAULT),
    ROW(semaphore_wait_timeout_ms, "-1 ms with an excess signal: kept", C_GREEN, E_INVAL,
        .h = H_SEM_EXCESS, .n = -1),
    ROW(semaphore_wait_timeout_us, "2^52 + 1 us with an excess signal: kept", C_GREEN, E_RANGE,
        .h = H_SEM_EXCESS, .n = US_MAX_DELAY + 1),
    ROW(mutex_enter_timeout_ms, "-1 ms on a free mutex: not taken", C_GREEN, E_INVAL, .n = -1),
    ROW(mutex_enter_timeout_ms, "INT64_MAX ms on a free mutex: not taken", C_GREEN, E_RANGE,
        .n = INT64_MAX),
    ROW(semaphore_free, "a Delay's semaphore", C_HOST, STVM_EINUSE, .h = H_DELAY_SEM),

    /* ---- names (stvm/core.h, "Names") ---- */
    NAME_ROWS(semaphore, .h = H_DEFAULT),
    NAME_ROWS(mutex, .h = H_DEFAULT),
    NAME_ROWS(monitor, .h = H_DEFAULT),
    ROW(semaphore_set_name, "a process's handle", C_HOST, E_INVAL, .h = H_PROC),
    ROW(semaphore_get_name, "a Delay's semaphore: its own name, none", C_HOST, R_COUNT,
        .h = H_DELAY_SEM),

    /* ---- monitors (the wrong handles and contexts are generated) ---- */
    ROW(monitor_exit, "a monitor the caller does not own (free)", C_GREEN, STVM_EPERM),
    ROW(monitor_exit, "a monitor another process owns", C_GREEN, STVM_EPERM,
        .h = H_MONITOR_OWNED),
    ROW(monitor_try_enter, "a monitor another process owns", C_GREEN, STVM_EAGAIN,
        .h = H_MONITOR_OWNED),
    ROW(monitor_enter_timeout_ms, "a monitor another process owns, 0 ms", C_GREEN,
        STVM_ETIMEDOUT, .h = H_MONITOR_OWNED, .n = 0),
    ROW(monitor_free, "owned by a process", C_HOST, STVM_EINUSE, .h = H_MONITOR_OWNED),
    ROW(monitor_free, "a process waits on its condition queue", C_HOST, STVM_EINUSE,
        .h = H_MONITOR_WAITED),
    ROW(monitor_critical, "fn NULL", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(monitor_wait, "the caller does not own it", C_GREEN, STVM_EPERM),
    ROW(monitor_wait, "another process owns it", C_GREEN, STVM_EPERM, .h = H_MONITOR_OWNED),
    ROW(monitor_wait_timeout_ms, "the caller does not own it", C_GREEN, STVM_EPERM, .n = 1),
    ROW(monitor_wait_timeout_ms, "the caller does not own it, 0 ms", C_GREEN, STVM_EPERM,
        .n = 0),
    ROW(monitor_wait_while, "the caller does not own it", C_GREEN, STVM_EPERM),
    ROW(monitor_wait_until, "the caller does not own it", C_GREEN, STVM_EPERM),
    ROW(monitor_wait_while, "pred NULL", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(monitor_wait_until, "pred NULL", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(monitor_wait_while_on, "pred NULL", C_GREEN, E_INVAL, .null_ptr = true, .m = 1),
    ROW(monitor_wait_until_on, "pred NULL", C_GREEN, E_INVAL, .null_ptr = true, .m = 1),
    ROW(monitor_wait_while_on, "the caller does not own it", C_GREEN, STVM_EPERM, .m = 1),
    ROW(monitor_wait_until_on, "the caller does not own it", C_GREEN, STVM_EPERM, .m = 1),
    ROW(monitor_signal, "the caller does not own it", C_GREEN, STVM_EPERM),
    ROW(monitor_signal, "another process owns it (a waiter there)", C_GREEN, STVM_EPERM,
        .h = H_MONITOR_OWNED),
    ROW(monitor_signal_all, "the caller does not own it (a waiter there)", C_GREEN, STVM_EPERM,
        .h = H_MONITOR_WAITED),
    ROW(monitor_signal_really_all, "the caller does not own it (a waiter there)", C_GREEN,
        STVM_EPERM, .h = H_MONITOR_WAITED),
    ROW(monitor_signal_on, "the caller does not own it (a waiter there)", C_GREEN, STVM_EPERM,
        .h = H_MONITOR_WAITED, .m = 0),
    ROW(monitor_signal_all_on, "the caller does not own it", C_GREEN, STVM_EPERM, .m = 2),
    MONITOR_BAD_QUEUES(monitor_wait_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_wait_on_timeout_ms, .n = 1),
    MONITOR_BAD_QUEUES(monitor_wait_while_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_wait_until_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_signal_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_signal_all_on, .h = H_DEFAULT),
    MONITOR_BAD_QUEUES(monitor_signal_on, .h = H_MONITOR_WAITED),
    BAD_DURATIONS_MS(monitor_enter_timeout_ms, .h = H_DEFAULT),
    BAD_DURATIONS_MS(monitor_wait_timeout_ms, .h = H_DEFAULT),
    BAD_DURATIONS_MS(monitor_wait_on_timeout_ms, .h = H_DEFAULT, .m = 3),

    /* ---- another VM's process on another thread, while this VM runs (the calls that
     * need a process are generated in this context too) ---- */
    ROW(semaphore_try_wait, "an excess signal", C_ELSEWHERE, STVM_ENOTPROC, .h = H_SEM_EXCESS),
    ROW(semaphore_wait, "an excess signal", C_ELSEWHERE, STVM_ENOTPROC, .h = H_SEM_EXCESS),
    ROW(mutex_try_enter, "a mutex owned by another", C_ELSEWHERE, STVM_ENOTPROC, .h = H_BUSY),
    ROW(mutex_enter, "a mutex owned by another", C_ELSEWHERE, STVM_ENOTPROC, .h = H_BUSY),
    ROW(mutex_exit, "a free mutex", C_ELSEWHERE, STVM_EPERM),
};

const api_module api_rows_sync = API_MODULE(sync, NULL);
