/*
 * The API table's rows for process-local variables and the external semaphore table
 * (stvm/core.h): how each function is called, what its generated rows need, and the rows
 * written out (tests/test_api_table.c runs them).
 */
#include "api_table.h"

/* Make the call a row of this module describes (c: its arguments, resolved), or answer
 * R_NOT_MINE for another module's function. */
static int call(fx *f, int fn, const args *a, const call_in *c)
{
    stvm_vm *vm = c->vm;
    stvm_semaphore *sem = c->sem;
    stvm_local *lv = c->lv;
    stvm_process *lp = c->lp;
    stvm_fn fnp = c->fnp;
    union out_slot *o = c->o;
    switch (fn) {
    case F_local_new: {
        /* z: bit 0 gives destroy_fn, bit 1 inherit_fn */
        int rc = stvm_local_new(vm, (unsigned)a->n, NULL, (a->z & 1) ? local_destroy : NULL,
                                (a->z & 2) ? local_inherit : NULL, o ? &o->lv : NULL);
        if (rc == STVM_OK && o)
            stvm_local_free(vm, o->lv);   /* an unexpected success must not leak */
        return rc;
    }
    case F_local_free: return stvm_local_free(vm, lv);
    case F_local_get: return stvm_local_get(vm, lv, o ? &o->item : NULL);
    case F_process_get_local: return stvm_process_get_local(vm, lp, lv, o ? &o->item : NULL);
    case F_local_set: return stvm_local_set(vm, lv, f);
    case F_local_clear: return stvm_local_clear(vm, lv);
    case F_local_during: return stvm_local_during(vm, lv, f, fnp, NULL);
    case F_external_register: return stvm_external_register(vm, sem, o ? &o->i : NULL);
    case F_external_unregister: return stvm_external_unregister(vm, (int)a->n);
    case F_external_signal: return stvm_external_signal(vm, (int)a->n);
    }
    return R_NOT_MINE;
}

/* One line a function: what its generated rows need (NO_DESC: none are generated). */
static const fn_line lines[] = {
    /* ByteArrays and named primitives */
    DESC(local_new, .null_vm = E_INVAL, .null_out = E_INVAL),
    DESC(local_free, .null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL),
    DESC(local_get, .null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                     .null_out = E_INVAL, .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(process_get_local, .null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                        .null_out = E_INVAL),
    DESC(local_set, .null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                     .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(local_clear, .null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                       .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(local_during, .null_vm = E_INVAL, .kind = K_LOCAL, .bad_handle = E_INVAL,
                        .not_proc = STVM_ENOTPROC, .ctx = C_GREEN),
    DESC(external_register, .null_vm = E_INVAL, .kind = K_SEM, .bad_handle = E_INVAL,
                             .null_out = E_INVAL, .ok = {.vm = V_OTHER}),
    DESC(external_unregister, .null_vm = E_INVAL, .ok = {.n = 1}),
    DESC(external_signal, .null_vm = E_INVAL, .ok = {.n = 1}),
};

static const row rows[] = {
    /* ---- external semaphores: slots and indexes ---- */
    ROW(external_register, "already registered", C_HOST, E_STATE, .h = H_EXT),
    ROW(external_register, "the table is full", C_HOST, STVM_EFULL),
    ROW(external_unregister, "index 0", C_HOST, E_INVAL, .n = 0),
    ROW(external_unregister, "index -1", C_HOST, E_INVAL, .n = -1),
    ROW(external_unregister, "index size + 1", C_HOST, E_INVAL, .n = 3),
    ROW(external_unregister, "index INT_MAX", C_HOST, E_INVAL, .n = INT_MAX),
    ROW(external_unregister, "index INT_MIN", C_HOST, E_INVAL, .n = INT_MIN),
    ROW(external_unregister, "an unused slot", C_HOST, E_INVAL, .vm = V_OTHER, .n = 100),
    ROW(external_unregister, "an unused slot, the last one", C_HOST, E_INVAL, .vm = V_OTHER,
        .n = 256),
    ROW(external_signal, "index 0", C_HOST, E_INVAL, .n = 0),
    ROW(external_signal, "index -1", C_HOST, E_INVAL, .n = -1),
    ROW(external_signal, "index size + 1", C_HOST, E_INVAL, .n = 3),
    ROW(external_signal, "index INT_MAX", C_HOST, E_INVAL, .n = INT_MAX),
    ROW(external_signal, "index INT_MIN", C_HOST, E_INVAL, .n = INT_MIN),
    ROW(external_signal, "index 0 from another thread", C_BARE, E_INVAL, .n = 0),
    ROW(external_signal, "index size + 1 from another thread", C_BARE, E_INVAL, .n = 3),
    ROW(external_signal, "index 0, from another VM's process", C_THREAD, E_INVAL, .n = 0),

    /* ---- process-local variables (the wrong handles and contexts are generated) ---- */
    ROW(local_new, "an unknown flag", C_HOST, E_INVAL, .n = 4),
    ROW(local_new, "every bit set in flags", C_HOST, E_INVAL, .n = -1),
    ROW(local_new, "inherit_fn without STVM_LOCAL_INHERITABLE", C_HOST, E_INVAL, .z = 2),
    ROW(local_new, "inheritable, destroy_fn without inherit_fn", C_HOST, E_INVAL,
        .n = STVM_LOCAL_INHERITABLE, .z = 1),
    ROW(process_get_local, "a NULL process", C_HOST, E_INVAL, .m = H_NULL),
    ROW(process_get_local, "another VM's process", C_HOST, E_INVAL, .m = H_FOREIGN),
    ROW(process_get_local, "a semaphore as the process", C_HOST, E_INVAL, .m = H_SEM),
    ROW(process_get_local, "forged memory as the process", C_HOST, E_INVAL, .m = H_G_FORGED),
    ROW(local_set, "a dynamic variable", C_GREEN, E_INVAL, .h = H_LOCAL_DYN),
    ROW(local_clear, "a dynamic variable", C_GREEN, E_INVAL, .h = H_LOCAL_DYN),
    ROW(local_during, "fn NULL", C_GREEN, E_INVAL, .null_ptr = true),
    ROW(local_set, "a dynamic variable, from the host", C_HOST, E_INVAL, .h = H_LOCAL_DYN),
};

const api_module api_rows_local = API_MODULE(local, NULL);
