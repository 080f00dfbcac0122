/*
 * Callbacks through libffi closures, after TFFI's: the closure's front end decides where
 * the handler runs.
 *
 *  - On the VM's own thread (a same-thread callout calling back, such as qsort's
 *    comparator) it runs at once, nested, on the calling process's stack: the process
 *    that made the callout is the one that runs the callback.
 *  - On any other thread (a worker's callout, a thread of a C library) the invocation is
 *    queued, one external signal wakes the image side's callback process, and the
 *    thread waits on a semaphore of its own until the handler's answer is in place.
 *
 * A callback that cannot run answers 0 and is counted as refused: it was freed (the
 * closure is kept until stvm_vm_free for exactly this), or it came from another thread
 * while the VM was not inside stvm_run.
 */
#include "ffi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prim_table.h"
#include "../vm/alloc.h"

static void answer_zero(void *ret)
{
    ffi_slot zero;
    memset(&zero, 0, sizeof zero);
    memcpy(ret, &zero, sizeof(ffi_arg));
}

static void refuse(ffi_state *st, void *ret)
{
    answer_zero(ret);
    atomic_fetch_add_explicit(&st->refused, 1, memory_order_relaxed);
}

/* ---- running the handler (VM thread) ------------------------------------------------ */

/* What a running handler holds, undone if its process is terminated inside it. */
typedef struct handler_frame {
    stvm_wait_guard guard;
    stvm_oop *oops;
    int n;
} handler_frame;

static void release_all(stvm_vm *vm, stvm_oop *oops, int n)
{
    for (int i = 0; i < n; i++)
        stvm__ffi_release(vm, oops[i]);
}

static void undo_frame(stvm_vm *vm, stvm_wait_guard *g)
{
    handler_frame *hf = STVM_CONTAINER(g, handler_frame, guard);
    release_all(vm, hf->oops, hf->n);
}

/* The C arguments as oops; on failure none is left. */
static int args_to_oops(stvm_vm *vm, const ffi_sig *sig, void **args, stvm_oop *oops)
{
    for (int i = 0; i < sig->nargs; i++) {
        int err = stvm__ffi_to_oop(vm, (ffi_kind)sig->args[i], args[i], false, &oops[i]);
        if (err) {
            release_all(vm, oops, i);
            return err;
        }
    }
    return STVM_OK;
}

/* The handler's answer into ret (0 when it failed or does not fit), and the answer
 * released unless it is one of the arguments. */
static void answer(stvm_vm *vm, ffi_state *st, const ffi_sig *sig, int err, stvm_oop result,
                   const stvm_oop *oops, void *ret)
{
    ffi_slot out;
    if (err || stvm__ffi_to_c(vm, (ffi_kind)sig->ret, result, &out, true)) {
        answer_zero(ret);
        st->stats.callbacks_failed++;
    } else if (sig->ret != K_VOID) {
        memcpy(ret, &out, sizeof(ffi_arg));
    }
    for (int i = 0; i < sig->nargs; i++)
        if (oops[i] == result)
            return;
    stvm__ffi_release(vm, result);
}

/* The handler, on the current process (or the embedding thread) with its arguments as
 * oops, and its answer as the C result. */
static void run_handler(stvm_vm *vm, ffi_state *st, stvm_ffi_callback *cb, void *ret,
                        void **args)
{
    stvm_oop oops[STVM_FFI_MAX_ARGS];
    int err = args_to_oops(vm, &cb->sig, args, oops);
    if (err) {
        answer_zero(ret);
        st->stats.callbacks_failed++;
        return;
    }
    handler_frame hf = {.guard.undo = undo_frame, .oops = oops, .n = cb->sig.nargs};
    bool in_process = vm->active != NULL;
    if (in_process)
        stvm__wait_guard_push(vm, &hf.guard);
    stvm_oop result = STVM_NIL;
    err = cb->handler(vm, cb->arg, oops, cb->sig.nargs, &result);
    if (in_process)
        stvm__wait_guard_pop(vm, &hf.guard);
    answer(vm, st, &cb->sig, err, result, oops, ret);
    release_all(vm, oops, cb->sig.nargs);
}

/* ---- the front end (any thread) ------------------------------------------------------ */

static bool on_vm_thread(stvm_vm *vm, ffi_state *st)
{
    if (stvm__thread_vm() == vm)
        return true;
    return atomic_load_explicit(&st->host_depth, memory_order_acquire) > 0 &&
           pthread_equal(atomic_load_explicit(&st->host_thread, memory_order_relaxed),
                         pthread_self());
}

static void run_nested(stvm_vm *vm, ffi_state *st, stvm_ffi_callback *cb, void *ret,
                       void **args)
{
    stvm_proc *a = vm->active;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (a && sp - (uintptr_t)a->stack_lo < STVM_FFI_CALLBACK_STACK) {
        refuse(st, ret);   /* the handler would overflow the caller's stack */
        return;
    }
    st->stats.callbacks_nested++;
    run_handler(vm, st, cb, ret, args);
}

static bool answered(void *arg)
{
    return sem_trywait(arg) == 0;
}

/* Look for the answer for a while (a quick handler then costs this thread no wake-up),
 * then sleep for it. Once the answer is posted the VM may be gone (stvm_vm_free answers
 * what is waiting): the spin is a copy, and the VM learns from the wait when it answers. */
static void wait_answer(int64_t window, sem_t *done)
{
    stvm_spin mine;
    stvm__spin_init(&mine, window);
    int64_t since;
    if (stvm__spin(&mine, INT64_MAX, answered, done, &since))
        return;
    while (sem_wait(done) != 0 && errno == EINTR) {
    }
}

/* Queue the invocation for the callback process and wait for its answer. */
static void run_queued(stvm_vm *vm, ffi_state *st, stvm_ffi_callback *cb, void *ret,
                       void **args)
{
    ffi_invocation inv = {.cb = cb, .ret = ret, .args = args};
    if (sem_init(&inv.done, 0, 0) != 0) {
        refuse(st, ret);
        return;
    }
    pthread_mutex_lock(&st->queue_lock);
    if (!st->accepting) {
        pthread_mutex_unlock(&st->queue_lock);
        sem_destroy(&inv.done);
        refuse(st, ret);
        return;
    }
    if (st->queue_tail)
        st->queue_tail->next = &inv;
    else
        st->queue_head = &inv;
    st->queue_tail = &inv;
    inv.queued_at = stvm__spin_now();
    int64_t window = atomic_load_explicit(&st->answer_spin.window_ns, memory_order_relaxed);
    /* Under the lock: stvm_vm_free closes the queue under it before the table goes. */
    stvm_external_signal(vm, st->queue_index);
    pthread_mutex_unlock(&st->queue_lock);
    wait_answer(window, &inv.done);
    sem_destroy(&inv.done);
}

static void frontend(ffi_cif *cif, void *ret, void **args, void *user)
{
    (void)cif;
    stvm_ffi_callback *cb = user;
    stvm_vm *vm = cb->vm;
    ffi_state *st = vm->ffi.state;
    if (atomic_load_explicit(&cb->dead, memory_order_acquire))
        refuse(st, ret);
    else if (on_vm_thread(vm, st))
        run_nested(vm, st, cb, ret, args);
    else
        run_queued(vm, st, cb, ret, args);
}

int stvm__ffi_closure_make(stvm_ffi_callback *cb)
{
    cb->closure = stvm__fault() ? NULL : ffi_closure_alloc(sizeof(ffi_closure), &cb->code);
    if (!cb->closure)
        return STVM_ESYS;
    if (ffi_prep_closure_loc(cb->closure, &cb->sig.cif, frontend, cb, cb->code) != FFI_OK) {
        ffi_closure_free(cb->closure);
        return STVM_ESYS;
    }
    return STVM_OK;
}

/* ---- the queue (the callback process's side) ---------------------------------------- */

void stvm__ffi_callback_queue_open(stvm_vm *vm, int index)
{
    ffi_state *st = vm->ffi.state;
    pthread_mutex_lock(&st->queue_lock);
    st->queue_index = index;
    st->accepting = vm->running;
    pthread_mutex_unlock(&st->queue_lock);
}

ffi_invocation *stvm__ffi_callback_take(stvm_vm *vm)
{
    ffi_state *st = vm->ffi.state;
    pthread_mutex_lock(&st->queue_lock);
    ffi_invocation *inv = st->queue_head;
    if (inv) {
        st->queue_head = inv->next;
        if (!st->queue_head)
            st->queue_tail = NULL;
        st->serving = inv;
    }
    pthread_mutex_unlock(&st->queue_lock);
    return inv;
}

void stvm__ffi_callback_serve(stvm_vm *vm, ffi_invocation *inv)
{
    ffi_state *st = vm->ffi.state;
    if (atomic_load_explicit(&inv->cb->dead, memory_order_acquire)) {
        refuse(st, inv->ret);
    } else {
        st->stats.callbacks_queued++;
        run_handler(vm, st, inv->cb, inv->ret, inv->args);
    }
    pthread_mutex_lock(&st->queue_lock);
    st->serving = NULL;
    pthread_mutex_unlock(&st->queue_lock);
    stvm__spin_waited(&st->answer_spin, stvm__spin_now() - inv->queued_at);
    sem_post(&inv->done);
}

void stvm__ffi_callbacks_flush(stvm_vm *vm, bool closing)
{
    ffi_state *st = vm->ffi.state;
    pthread_mutex_lock(&st->queue_lock);
    st->accepting = false;
    ffi_invocation *inv = st->queue_head;
    st->queue_head = st->queue_tail = NULL;
    /* The one being served is let go only when its process can never answer it: the
     * VM is being freed, and its processes (their stacks) are gone. */
    ffi_invocation *serving = closing ? st->serving : NULL;
    if (closing)
        st->serving = NULL;
    pthread_mutex_unlock(&st->queue_lock);
    for (ffi_invocation *next; inv; inv = next) {
        next = inv->next;
        refuse(st, inv->ret);
        sem_post(&inv->done);
    }
    if (serving) {
        refuse(st, serving->ret);
        sem_post(&serving->done);
    }
}

void stvm__ffi_callbacks_destroy(stvm_vm *vm)
{
    ffi_state *st = vm->ffi.state;
    for (stvm_ffi_callback *cb = st->callbacks, *next; cb; cb = next) {
        next = cb->next;
        ffi_closure_free(cb->closure);
        free(cb);
    }
    st->callbacks = NULL;
}
