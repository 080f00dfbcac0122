/*
 * The threaded runner's image side, after TFFI's TFExternalAsyncCall: take a job (a
 * pooled semaphore registered in the external table), hand the call to a worker
 * (primitiveWorkerCallout), wait on the semaphore while every other process runs, and
 * read the result (primitiveWorkerExtractReturnValue).
 *
 * A blocking C call cannot be cancelled. A caller terminated in the wait leaves the job
 * to its worker (its wait guard abandons it), and so does one interrupted (it answers
 * STVM_EINTR: the call goes on in its thread, its result is dropped); a caller suspended
 * in the wait and resumed goes back to waiting, because the call it made is still
 * running.
 */
#include "../../primitives/ffi.h"

typedef struct threaded_wait {
    stvm_wait_guard guard;       /* abandons the job if the caller is terminated */
    ffi_job *job;
} threaded_wait;

static void abandon(stvm_vm *vm, stvm_wait_guard *g)
{
    stvm__ffi_job_abandon(vm, STVM_CONTAINER(g, threaded_wait, guard)->job);
}

/* Wait for the worker's signal; a wait cut short by a suspend is resumed. STVM_OK, or
 * STVM_EINTR with the job left to its worker. */
static int wait_for_worker(stvm_vm *vm, ffi_job *job, const stvm_ffi_function *fn)
{
    threaded_wait w = {.guard.undo = abandon, .job = job};
    stvm__wait_guard_push(vm, &w.guard);
    int64_t since = stvm__ffi_spin(vm);
    stvm_proc *me = vm->active;
    me->wait_on_kind = STVM_WAIT_ON_CALLOUT;   /* for the process listing */
    me->wait_on = fn;
    int err;
    while ((err = stvm__sem_wait(vm, job->base.sem)) != STVM_EINTR &&
           (err != STVM_OK || !stvm__ffi_job_done(job))) {
    }
    me->wait_on_kind = STVM_WAIT_ON_NOTHING;
    stvm__ffi_spin_woke(vm, since);
    stvm__wait_guard_pop(vm, &w.guard);
    if (err == STVM_EINTR)
        stvm__ffi_job_abandon(vm, job);
    return err;
}

int stvm_ffi_call_on(stvm_vm *vm, stvm_ffi_worker *w, stvm_ffi_function *fn,
                     const stvm_oop *args, int nargs, stvm_oop *result)
{
    if (!vm || !stvm__ffi_is_function(vm, fn) || nargs < 0 || (nargs > 0 && !args) ||
        (w && !stvm__ffi_worker_valid(vm, w)))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    /* Refused arguments are refused before a job is taken: the first one allocates. */
    ffi_frame check;
    int code = stvm__ffi_marshal(vm, &fn->sig, args, nargs, &check);
    if (code)
        return stvm__ffi_fail(vm, code);
    ffi_job *job;
    int err = stvm__ffi_job_take(vm, &job);
    if (err)
        return err;
    if ((err = stvm__ffi_worker_callout(vm, w, fn, args, nargs, job))) {
        stvm__ffi_job_put(vm, job);
        return err;
    }
    int runner = w ? STVM_TRACE_FFI_WORKER : STVM_TRACE_FFI_THREADED;
    stvm__ffi_trace(vm, STVM_TRACE_FFI_CALL, fn, runner, nargs);
    if ((err = wait_for_worker(vm, job, fn)) != STVM_OK) {
        stvm__ffi_trace(vm, STVM_TRACE_FFI_RETURN, fn, err, runner);
        return err;
    }
    err = stvm__ffi_worker_result(vm, job, result);
    stvm__ffi_trace(vm, STVM_TRACE_FFI_RETURN, fn, err, runner);
    return err;
}

int stvm_ffi_call_threaded(stvm_vm *vm, stvm_ffi_function *fn, const stvm_oop *args,
                           int nargs, stvm_oop *result)
{
    return stvm_ffi_call_on(vm, NULL, fn, args, nargs, result);
}
