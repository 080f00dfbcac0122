/*
 * The API table's rows for shared queues (stvm/core.h): how each function is called, what
 * its generated rows need, and the rows written out (tests/test_api_table.c runs them).
 */
#include "api_table.h"

/* Make the call a row of this module describes (c: its arguments, resolved), or answer
 * R_NOT_MINE for another module's function. */
static int call(fx *f, int fn, const args *a, const call_in *c)
{
    stvm_vm *vm = c->vm;
    stvm_queue *qu = c->qu;
    union out_slot *o = c->o;
    const char *name = c->name;
    char *nbuf = c->nbuf;
    size_t nsize = c->nsize;
    switch (fn) {
    case F_queue_new: return stvm_queue_new(vm, (size_t)a->n, o ? &o->qu : NULL);
    case F_queue_free: return stvm_queue_free(vm, qu, NULL, NULL);
    case F_queue_put: return stvm_queue_put(vm, qu, f);
    case F_queue_put_timeout_ms: return stvm_queue_put_timeout_ms(vm, qu, f, a->n);
    case F_queue_take: return stvm_queue_take(vm, qu, o ? &o->item : NULL);
    case F_queue_take_timeout_ms:
        return stvm_queue_take_timeout_ms(vm, qu, a->n, o ? &o->item : NULL);
    case F_queue_try_take: return stvm_queue_try_take(vm, qu, o ? &o->item : NULL);
    case F_queue_peek: return stvm_queue_peek(vm, qu, o ? &o->item : NULL);
    case F_queue_size: return (int)stvm_queue_size(vm, qu);
    case F_queue_flush: return (int)stvm_queue_flush(vm, qu, NULL, NULL);
    case F_queue_close: return stvm_queue_close(vm, qu);
    case F_queue_open_external: return stvm_queue_open_external(vm, qu);
    case F_queue_put_external: return stvm_queue_put_external(qu, f, a->n);
    case F_queue_close_external: return stvm_queue_close_external(qu);
    case F_queue_set_name: return stvm_queue_set_name(vm, qu, name);
    case F_queue_get_name: return count_or(stvm_queue_get_name(vm, qu, nbuf, nsize));
    }
    return R_NOT_MINE;
}

/* A function without a vm cannot tell another VM's handle (or a forged one) from its
 * own: it is given only handles of another kind. */
static const int novm_queue_wrong[] = {H_NULL, H_SEM, H_MUTEX, H_PROC, H_SOCKET, H_STREAM, H_BOX,
                                       H_BYTES, H_RECORD, H_G_ZERO, H_G_ONES, H_G_TEXT, 0};

/* One line a function: what its generated rows need (NO_DESC: none are generated). */
static const fn_line lines[] = {
    DESC(queue_new, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.n = 0}),
    DESC(queue_free, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL),
    DESC(queue_put, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL),
    DESC(queue_put_timeout_ms, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                                .not_proc = STVM_ENOTPROC, .ctx = C_GREEN, .ok = {.n = 1}),
    DESC(queue_take, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                      .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(queue_take_timeout_ms, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                                 .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN,
                                 .ok = {.n = 1}),
    DESC(queue_try_take, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                          .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(queue_peek, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                      .null_out = E_INVAL),
    DESC(queue_size, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL),
    DESC(queue_flush, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL),
    DESC(queue_close, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                       .ok = {.h = H_QUEUE_CLOSED}),
    DESC(queue_open_external, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL,
                               .ok = {.vm = V_OTHER}),
    DESC(queue_put_external, .kind = K_QUEUE, .bad_handle = E_INVAL, .wrong = novm_queue_wrong,
                              .ok = {.h = H_QUEUE_OPEN, .n = 0}),
    DESC(queue_close_external, .kind = K_QUEUE, .bad_handle = E_INVAL, .wrong = novm_queue_wrong,
                                .ok = {.vm = V_OTHER, .h = H_QUEUE_OPEN_CLOSED}),
    DESC(queue_set_name, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL),
    DESC(queue_get_name, .null_vm = E_INVAL, .kind = K_QUEUE, .bad_handle = E_INVAL),
};

static const row rows[] = {
    /* ---- shared queues (the wrong handles and contexts are generated) ---- */
    ROW(queue_new, "capacity 2^64 - 1", C_HOST, E_INVAL, .n = -1),
    ROW(queue_put, "a full bounded queue, from the host (it cannot wait: a try)", C_HOST,
        STVM_EAGAIN, .h = H_QUEUE_FULL),
    ROW(queue_put_timeout_ms, "a full bounded queue, 0 ms", C_GREEN, STVM_ETIMEDOUT,
        .h = H_QUEUE_FULL, .n = 0),
    ROW(queue_try_take, "an empty queue", C_GREEN, STVM_EAGAIN),
    ROW(queue_take_timeout_ms, "an empty queue, 0 ms", C_GREEN, STVM_ETIMEDOUT, .n = 0),
    ROW(queue_peek, "an empty queue", C_HOST, STVM_EAGAIN),
    ROW(queue_put, "a closed queue, from the host", C_HOST, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_put, "a closed queue", C_GREEN, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_put_timeout_ms, "a closed queue", C_GREEN, STVM_ECLOSED, .h = H_QUEUE_CLOSED,
        .n = 1),
    ROW(queue_take, "a closed empty queue: the end", C_GREEN, STVM_EEOF, .h = H_QUEUE_CLOSED),
    ROW(queue_take_timeout_ms, "a closed empty queue", C_GREEN, STVM_EEOF, .h = H_QUEUE_CLOSED,
        .n = 1),
    ROW(queue_take_timeout_ms, "a closed empty queue, 0 ms", C_GREEN, STVM_EEOF,
        .h = H_QUEUE_CLOSED, .n = 0),
    ROW(queue_try_take, "a closed empty queue", C_GREEN, STVM_EEOF, .h = H_QUEUE_CLOSED),
    ROW(queue_peek, "a closed empty queue", C_HOST, STVM_EEOF, .h = H_QUEUE_CLOSED),
    ROW(queue_close, "a closed queue: closing twice", C_HOST, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_close, "a closed queue: closing twice", C_GREEN, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_close, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_open_external, "a closed queue", C_HOST, STVM_ECLOSED, .h = H_QUEUE_CLOSED),
    ROW(queue_put_external, "a closed queue", C_HOST, STVM_ECLOSED, .vm = V_OTHER,
        .h = H_QUEUE_OPEN_CLOSED, .n = 0),
    ROW(queue_put_external, "a closed queue, waiting for ever", C_HOST, STVM_ECLOSED,
        .vm = V_OTHER, .h = H_QUEUE_OPEN_CLOSED, .n = -1),
    ROW(queue_close_external, "a queue not open for other threads", C_HOST, E_INVAL),
    ROW(queue_close_external, "a closed queue: closing twice", C_HOST, STVM_ECLOSED,
        .vm = V_OTHER, .h = H_QUEUE_OPEN_CLOSED),
    ROW(queue_put, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_peek, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC, .h = H_QUEUE_FULL),
    ROW(queue_size, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_flush, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC,
        .h = H_QUEUE_FULL),
    ROW(queue_free, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_open_external, "while the VM runs elsewhere", C_ELSEWHERE, STVM_ENOTPROC),
    ROW(queue_open_external, "already open", C_HOST, E_STATE, .vm = V_OTHER, .h = H_QUEUE_OPEN),
    ROW(queue_open_external, "the external table is full", C_HOST, STVM_EFULL),
    ROW(queue_put_external, "a queue not open for other threads", C_HOST, E_INVAL),
    ROW(queue_put_external, "timeout -2", C_HOST, E_INVAL, .h = H_QUEUE_OPEN, .n = -2),
    ROW(queue_put_external, "timeout INT64_MIN", C_HOST, E_INVAL, .h = H_QUEUE_OPEN,
        .n = INT64_MIN),
    BAD_DURATIONS_MS(queue_put_timeout_ms, .h = H_DEFAULT),
    BAD_DURATIONS_MS(queue_take_timeout_ms, .h = H_DEFAULT),

    /* ---- names (stvm/core.h, "Names") ---- */
    NAME_ROWS(queue, .h = H_DEFAULT),
    ROW(queue_set_name, "a semaphore's handle", C_HOST, E_INVAL, .h = H_SEM),
};

const api_module api_rows_queue = API_MODULE(queue, NULL);
