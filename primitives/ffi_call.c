/*
 * The same-thread callout (UFFI's callout; TFFI's same-thread runner): the arguments
 * are checked and marshalled, then the function runs on the calling thread and on the
 * calling process's own stack, and every other green process waits until it returns.
 *
 * A process has a fixed stack (16 KiB by default) with a guard region below it, so a
 * callout first checks that the stack the function was declared to need is free below
 * the caller's frame: a call that would overflow fails with LimitExceeded instead of
 * faulting (docs/ffi.md, "Stack").
 */
#include "ffi.h"

#include "prim_table.h"

/* Enough stack left under the caller's frame? (The embedding thread's is not ours to
 * judge.) */
static bool stack_room(const stvm_proc *a, size_t need)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    return sp - (uintptr_t)a->stack_lo >= need;
}

/* A callout of the embedding thread outside stvm_run: callbacks it makes arrive on this
 * thread, and must run here and now rather than wait for a run that cannot come. */
static void invoke_on_host(ffi_state *st, stvm_ffi_function *fn, ffi_frame *f)
{
    atomic_store_explicit(&st->host_thread, pthread_self(), memory_order_relaxed);
    atomic_fetch_add_explicit(&st->host_depth, 1, memory_order_release);
    stvm__ffi_invoke(fn, f);
    atomic_fetch_sub_explicit(&st->host_depth, 1, memory_order_release);
}

/* A same-thread call in progress: fn stays allocated until it returns, even if a callback
 * frees fn, and a process terminated inside a callback it makes lets go of fn as the
 * return would have. */
typedef struct call_hold {
    stvm_wait_guard guard;
    stvm_ffi_function *fn;
} call_hold;

static void let_go(stvm_ffi_function *fn)
{
    if (--fn->running == 0 && fn->magic != STVM_FFI_FUNCTION_MAGIC)
        stvm__ffi_function_unref(fn);
}

static void undo_hold(stvm_vm *vm, stvm_wait_guard *g)
{
    (void)vm;
    let_go(STVM_CONTAINER(g, call_hold, guard)->fn);
}

int stvm_ffi_call(stvm_vm *vm, stvm_ffi_function *fn, const stvm_oop *args, int nargs,
                  stvm_oop *result)
{
    if (!vm || !stvm__ffi_is_function(vm, fn) || nargs < 0 || (nargs > 0 && !args))
        return STVM_EINVAL;
    stvm_proc *a = vm->active;
    if (a && stvm__thread_vm() != vm)
        return STVM_ENOTPROC;
    ffi_frame f;
    int code = stvm__ffi_marshal(vm, &fn->sig, args, nargs, &f);
    if (!code && a && !stack_room(a, fn->stack_need))
        code = STVM_PRIM_ERR_LIMIT_EXCEEDED;
    if (code)
        return stvm__ffi_fail(vm, code);
    ffi_state *st = vm->ffi.state;
    st->stats.callouts++;
    ffi_kind ret = (ffi_kind)fn->sig.ret;
    call_hold hold = {.guard.undo = undo_hold, .fn = fn};
    fn->running++;
    stvm__ffi_trace(vm, STVM_TRACE_FFI_CALL, fn, STVM_TRACE_FFI_SAME_THREAD, nargs);
    if (a) {
        stvm__wait_guard_push(vm, &hold.guard);
        stvm__ffi_invoke(fn, &f);
        stvm__wait_guard_pop(vm, &hold.guard);
    } else {
        invoke_on_host(st, fn, &f);
    }
    let_go(fn);
    int err = result ? stvm__ffi_to_oop(vm, ret, &f.ret, true, result) : STVM_OK;
    stvm__ffi_trace(vm, STVM_TRACE_FFI_RETURN, fn, err, STVM_TRACE_FFI_SAME_THREAD);
    return err;
}

void stvm__ffi_trace_emit(stvm_vm *vm, int kind, const stvm_ffi_function *fn, int64_t detail,
                          int64_t extra)
{
    /* fn's address only labels the event: after a return it may be gone */
    stvm__trace_emit(vm, kind, stvm__trace_active(vm), (uintptr_t)fn, detail, extra, 0);
}
