/* Jobs and their pools (see worker_jobs.h). */
#include "worker_jobs.h"

#include <stdlib.h>

#include "../vm/alloc.h"
#include "sched.h"

int stvm__job_new(stvm_vm *vm, size_t size, void (*run)(stvm_task *t),
                  void (*orphan)(stvm_task *t), stvm_job **out)
{
    if (!stvm__external_has_room(vm))
        return STVM_EFULL;
    stvm_job *job = stvm__calloc(1, size);
    if (!job)
        return STVM_ENOMEM;
    int err = stvm_semaphore_new(vm, &job->sem);
    if (!err && (err = stvm_external_register(vm, job->sem, &job->task.index)))
        stvm_semaphore_free(vm, job->sem);
    if (err) {
        free(job);
        return err;
    }
    job->task.run = run;
    job->task.orphan = orphan;
    atomic_init(&job->task.state, STVM_TASK_IDLE);
    *out = job;
    return STVM_OK;
}

void stvm__job_reap(stvm_job_pool *pool)
{
    for (stvm_job **at = &pool->abandoned; *at;) {
        stvm_job *job = *at;
        if (stvm__job_done(job) && job->sem->excess_signals > 0) {
            job->sem->excess_signals--;
            *at = job->next_free;
            job->next_free = pool->free;
            pool->free = job;
        } else {
            at = &job->next_free;
        }
    }
}

stvm_job *stvm__job_take(stvm_job_pool *pool)
{
    if (pool->abandoned)
        stvm__job_reap(pool);
    stvm_job *job = pool->free;
    if (job)
        pool->free = job->next_free;
    return job;
}

void stvm__job_put(stvm_job_pool *pool, stvm_job *job)
{
    atomic_store_explicit(&job->task.state, STVM_TASK_IDLE, memory_order_relaxed);
    job->next_free = pool->free;
    pool->free = job;
}

void stvm__job_abandon(stvm_job_pool *pool, stvm_job *job)
{
    job->next_free = pool->abandoned;
    pool->abandoned = job;
}
