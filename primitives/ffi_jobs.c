/*
 * Threaded callouts, after TFFI's worker runner: a job carries one call's frame to a
 * worker thread, and a semaphore registered in the external table carries its
 * completion back (primitiveWorkerCallout queues it, the worker signals the slot,
 * primitiveWorkerExtractReturnValue reads the result). Jobs are kept and reused with
 * their registered semaphores (scheduler/worker_jobs.h, which the host name lookups use
 * too), so a call costs no allocation and no registration once warm; one whose caller
 * was terminated is reused once its signal has been taken.
 */
#include "ffi.h"

#include <stdlib.h>

#include "../vm/config.h"
#include "prim_table.h"
#include "../vm/alloc.h"

/* ---- the worker's side ------------------------------------------------------------- */

static void job_run(stvm_task *t)
{
    ffi_job *job = (ffi_job *)t;
    stvm__ffi_invoke(job->fn, &job->frame);
    stvm__ffi_function_unref(job->fn);
    job->fn = NULL;
}

/* The VM was freed while the job ran: its semaphore went with the VM's objects, its
 * memory is the worker's to free. */
static void job_orphan(stvm_task *t)
{
    free(t);
}

/* ---- jobs ------------------------------------------------------------------------- */

static int job_new(stvm_vm *vm, ffi_state *st, ffi_job **out)
{
    stvm_job *made;
    int err = stvm__job_new(vm, sizeof(ffi_job), job_run, job_orphan, &made);
    if (err)
        return err;
    ffi_job *job = (ffi_job *)made;
    job->next = st->jobs;
    if (st->jobs)
        st->jobs->prev = job;
    st->jobs = job;
    *out = job;
    return STVM_OK;
}

int stvm__ffi_job_take(stvm_vm *vm, ffi_job **out)
{
    ffi_state *st;
    int err = stvm__ffi_state(vm, &st);
    if (err)
        return err;
    ffi_job *job = (ffi_job *)stvm__job_take(&st->spare_jobs);
    if (!job)
        return job_new(vm, st, out);
    *out = job;
    return STVM_OK;
}

void stvm__ffi_job_put(stvm_vm *vm, ffi_job *job)
{
    ffi_state *st = vm->ffi.state;
    stvm__job_put(&st->spare_jobs, &job->base);
}

void stvm__ffi_job_abandon(stvm_vm *vm, ffi_job *job)
{
    ffi_state *st = vm->ffi.state;
    st->stats.callouts_abandoned++;
    stvm__job_abandon(&st->spare_jobs, &job->base);
}

/* ---- the primitives ------------------------------------------------------------------ */

static int pool(stvm_vm *vm, ffi_state *st, stvm_workers **out);

int stvm__ffi_pool(stvm_vm *vm, stvm_workers **out)
{
    ffi_state *st;
    int err = stvm__ffi_state(vm, &st);
    return err ? err : pool(vm, st, out);
}

static int pool(stvm_vm *vm, ffi_state *st, stvm_workers **out)
{
    if (!st->pool) {
        int err = stvm__workers_new(vm, "stvm-ffi", vm->cfg.ffi_workers, st->spin_ns,
                                    &st->pool);
        if (err)
            return err;
    }
    *out = st->pool;
    return STVM_OK;
}

int stvm__ffi_worker_callout(stvm_vm *vm, stvm_ffi_worker *w, stvm_ffi_function *fn,
                             const stvm_oop *args, int nargs, ffi_job *job)
{
    ffi_state *st = vm->ffi.state;
    int code = stvm__ffi_marshal(vm, &fn->sig, args, nargs, &job->frame);
    if (code)
        return stvm__ffi_fail(vm, code);
    stvm_workers *group = w ? w->group : NULL;
    int err = group ? STVM_OK : pool(vm, st, &group);
    if (err)
        return err;
    job->fn = fn;
    job->ret = fn->sig.ret;
    stvm__ffi_function_ref(fn);
    if ((err = stvm__workers_submit(group, &job->base.task))) {
        stvm__ffi_function_unref(fn);
        job->fn = NULL;
        return err;
    }
    st->stats.callouts_threaded++;
    return STVM_OK;
}

int stvm__ffi_worker_result(stvm_vm *vm, ffi_job *job, stvm_oop *result)
{
    ffi_kind k = (ffi_kind)job->ret;
    int err = result ? stvm__ffi_to_oop(vm, k, &job->frame.ret, true, result) : STVM_OK;
    stvm__ffi_job_put(vm, job);
    return err;
}

/* ---- named workers ----------------------------------------------------------------- */

static stvm_ffi_worker *worker_of(stvm_vm *vm, stvm_ffi_worker *w)
{
    return vm && w && w->magic == STVM_FFI_WORKER_MAGIC && w->vm == vm ? w : NULL;
}

int stvm_ffi_worker_new(stvm_vm *vm, const char *name, stvm_ffi_worker **out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    ffi_state *st;
    int err = stvm__ffi_state(vm, &st);
    if (err)
        return err;
    stvm_ffi_worker *w = stvm__calloc(1, sizeof *w);
    if (!w)
        return STVM_ENOMEM;
    if ((err = stvm__workers_new(vm, name, 1, st->spin_ns, &w->group))) {
        free(w);
        return err;
    }
    w->magic = STVM_FFI_WORKER_MAGIC;
    w->vm = vm;
    w->next = st->workers;
    if (st->workers)
        st->workers->prev = w;
    st->workers = w;
    *out = w;
    return STVM_OK;
}

bool stvm__ffi_worker_valid(stvm_vm *vm, stvm_ffi_worker *w)
{
    return worker_of(vm, w) != NULL;
}

static void worker_release(ffi_state *st, stvm_ffi_worker *w, const struct timespec *deadline)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        st->workers = w->next;
    if (w->next)
        w->next->prev = w->prev;
    stvm__workers_free(w->group, deadline);
    w->magic = 0;
    free(w);
}

int stvm_ffi_worker_free(stvm_vm *vm, stvm_ffi_worker *w)
{
    if (!worker_of(vm, w))
        return STVM_EINVAL;
    if (stvm__workers_busy(w->group))
        return STVM_EINUSE;
    /* Idle: its thread ends as soon as it sees the group stop. */
    struct timespec deadline;
    stvm__ffi_shutdown_deadline(&deadline);
    worker_release(vm->ffi.state, w, &deadline);
    return STVM_OK;
}

/* ---- stvm_vm_free ------------------------------------------------------------------- */

void stvm__ffi_jobs_destroy(stvm_vm *vm, const struct timespec *deadline)
{
    ffi_state *st = vm->ffi.state;
    if (st->pool)
        stvm__workers_free(st->pool, deadline);
    while (st->workers)
        worker_release(st, st->workers, deadline);
    for (ffi_job *job = st->jobs, *next; job; job = next) {
        next = job->next;
        /* Still running on a detached thread: that thread frees it. */
        if (atomic_load_explicit(&job->base.task.state, memory_order_acquire) ==
            STVM_TASK_RUNNING)
            continue;
        if (job->fn)   /* queued, never run */
            stvm__ffi_function_unref(job->fn);
        free(job);
    }
    st->jobs = NULL;
    st->spare_jobs = (stvm_job_pool){NULL, NULL};
}
