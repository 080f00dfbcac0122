/*
 * Jobs: worker tasks that signal a semaphore of their own (the FFI's threaded calls,
 * primitives/ffi_jobs.c; host name lookups, primitives/socket_lookup.c). The semaphore is
 * registered in the external table when the job is made and kept while the job is
 * reused, as TFFI's pooled calls keep theirs, so that a warm job costs no allocation
 * and no registration. A job whose caller gave it up (terminated, timed out) still runs
 * to the end on its worker; it is reused only once its signal has been taken, so no
 * later caller ever sees it.
 */
#ifndef STVM_SCHEDULER_WORKER_JOBS_H
#define STVM_SCHEDULER_WORKER_JOBS_H

#include "worker_threads.h"

typedef struct stvm_job {
    stvm_task task;                 /* first: the worker group's view of it */
    stvm_semaphore *sem;            /* signalled (task.index is its slot) when run returns */
    struct stvm_job *next_free;     /* the pool's free or abandoned list */
} stvm_job;

/* A kind of job's spare ones: free, and given up by their callers. */
typedef struct stvm_job_pool {
    stvm_job *free, *abandoned;
} stvm_job_pool;

/* A new job in *out, the first member of a zeroed block of size bytes (its owner's
 * struct, which the owner frees): its semaphore made and registered, its task's run and
 * orphan set, idle. EFULL (no external slot) or ENOMEM, with nothing made. */
int stvm__job_new(stvm_vm *vm, size_t size, void (*run)(stvm_task *t),
                  void (*orphan)(stvm_task *t), stvm_job **out);
/* Has the worker returned? (after the job's semaphore was signalled, always) */
static inline bool stvm__job_done(const stvm_job *job)
{
    return atomic_load_explicit(&job->task.state, memory_order_acquire) == STVM_TASK_DONE;
}
/* The abandoned jobs whose work came back and whose signal was drained become free. */
void stvm__job_reap(stvm_job_pool *pool);
/* A free job (reaping first), or NULL: the caller makes one. */
stvm_job *stvm__job_take(stvm_job_pool *pool);
/* job back to the free list, its task idle. */
void stvm__job_put(stvm_job_pool *pool, stvm_job *job);
/* job's caller gave it up: free again once its work came back and its signal was
 * taken (stvm__job_reap). */
void stvm__job_abandon(stvm_job_pool *pool, stvm_job *job);

#endif
