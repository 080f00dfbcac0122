/*
 * Callbacks, the image side, after TFFI's TFCallback and TFCallbackQueue: a callback is
 * a closure whose front end (primitives/ffi_callback.c) runs the handler at once on the
 * VM's thread, or queues it from any other thread for the callback process made here.
 *
 * The callback process is one of the VM's own (like the timing process) at
 * config.ffi_callback_priority, 70 by default as Pharo's "Callback queue" process at
 * highIOPriority. It waits on a semaphore registered in the external table: each
 * queued invocation is one external signal, so it takes them one at a time and never
 * misses one.
 */
#include <stdlib.h>

#include "../../primitives/ffi.h"
#include "../../vm/alloc.h"

static void callback_loop(stvm_vm *vm, void *arg)
{
    stvm_semaphore *sem = arg;
    for (;;) {
        int64_t since = sem->excess_signals ? 0 : stvm__ffi_spin(vm);
        stvm__sem_wait(vm, sem);
        stvm__ffi_spin_woke(vm, since);
        ffi_invocation *inv = stvm__ffi_callback_take(vm);
        if (inv)   /* NULL: the run that queued it ended, and answered it 0 */
            stvm__ffi_callback_serve(vm, inv);
    }
}

/* The callback process and its semaphore, once per VM. It is made ready without
 * preempting anyone: it first runs at the caller's next scheduling point. */
static int start_queue(stvm_vm *vm, ffi_state *st)
{
    if (st->callback_process)
        return STVM_OK;
    if (!stvm__external_has_room(vm))
        return STVM_EFULL;
    stvm_semaphore *sem;
    int index, err = stvm_semaphore_new(vm, &sem);
    if (err)
        return err;
    if ((err = stvm_external_register(vm, sem, &index)) ||
        (err = stvm__spawn(vm, vm->cfg.ffi_callback_priority, "FFI Callback Queue",
                           callback_loop, sem, 0, false, STVM_PF_VM_OWN,
                           &st->callback_process))) {
        if (sem->external_index)
            stvm_external_unregister(vm, index);
        stvm_semaphore_free(vm, sem);
        return err;
    }
    stvm__list_pin(&sem->list);   /* waited on for good */
    /* From a process it runs now, up to its wait, as Pharo's preemption rule has it:
     * left ready, it would be runnable above the running caller. */
    if (vm->active)
        stvm__resume(vm, st->callback_process->core);
    else
        stvm__make_ready(vm, st->callback_process->core);
    stvm__ffi_callback_queue_open(vm, index);
    return STVM_OK;
}

int stvm_ffi_callback_new(stvm_vm *vm, const char *signature, stvm_ffi_handler handler,
                          void *arg, stvm_ffi_callback **out, void **c_function)
{
    if (!vm || !signature || !handler || !out || !c_function)
        return STVM_EINVAL;
    ffi_state *st;
    int err = stvm__ffi_state(vm, &st);
    if (err)
        return err;
    stvm_ffi_callback *cb = stvm__calloc(1, sizeof *cb);
    if (!cb)
        return STVM_ENOMEM;
    cb->vm = vm;
    cb->handler = handler;
    cb->arg = arg;
    atomic_init(&cb->dead, 0);
    if ((err = stvm__ffi_sig_parse(signature, &cb->sig)) ||
        (err = stvm__ffi_closure_make(cb))) {
        free(cb);
        return err;
    }
    if ((err = start_queue(vm, st))) {
        ffi_closure_free(cb->closure);
        free(cb);
        return err;
    }
    cb->magic = STVM_FFI_CALLBACK_MAGIC;
    cb->next = st->callbacks;
    st->callbacks = cb;
    *out = cb;
    *c_function = cb->code;
    return STVM_OK;
}

void stvm_ffi_callback_free(stvm_vm *vm, stvm_ffi_callback *cb)
{
    if (!vm || !cb || cb->magic != STVM_FFI_CALLBACK_MAGIC || cb->vm != vm)
        return;
    cb->magic = 0;
    atomic_store_explicit(&cb->dead, 1, memory_order_release);
}
