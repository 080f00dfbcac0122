/*
 * Worker threads: groups of OS threads that serve one FIFO of tasks each, for the
 * FFI's threaded callouts (a pool per VM, and named workers of one thread). A task runs
 * on a worker and then requests one signal of its external slot (vm/external_requests.h), the
 * exact-count path by which every outside event reaches a waiting process.
 *
 * A group outlives its VM only as long as one of its threads still runs a task that
 * did not return in time at stvm_vm_free: that thread was detached, and when its task
 * returns it hands the task to `orphan` instead of signalling, then frees the group.
 */
#ifndef STVM_SCHEDULER_WORKER_THREADS_H
#define STVM_SCHEDULER_WORKER_THREADS_H

#include <stdatomic.h>
#include <time.h>

#include "../vm/vm.h"
#include "spin.h"

/* Where a task is. Written under the group's lock; DONE is also read without it (the
 * waiter's check, after its signal). */
enum { STVM_TASK_IDLE, STVM_TASK_QUEUED, STVM_TASK_RUNNING, STVM_TASK_DONE };

typedef struct stvm_task {
    void (*run)(struct stvm_task *t);    /* on a worker thread */
    void (*orphan)(struct stvm_task *t); /* on a worker thread, instead of the signal,
                                            when the VM was freed while run ran */
    int index;                           /* external slot to signal when run returns */
    atomic_int state;                    /* STVM_TASK_* */
    struct stvm_task *next;              /* the queue */
} stvm_task;

typedef struct stvm_workers stvm_workers;

/* A group of up to nthreads threads named name (at most 15 characters are kept),
 * started one at a time as queued tasks find every started thread busy. A thread that
 * runs out of tasks looks for the next one for up to spin_ns before it sleeps (spin.h),
 * so that calls made back to back find it awake (0: it sleeps at once). ENOMEM. */
int stvm__workers_new(stvm_vm *vm, const char *name, int nthreads, int64_t spin_ns,
                      stvm_workers **out);
/* Queue t (its run, orphan and index set). ESYS when no thread runs and none could
 * be started: t is not queued. VM thread only. */
int stvm__workers_submit(stvm_workers *w, stvm_task *t);
/* Tasks queued or running. */
int stvm__workers_busy(stvm_workers *w);
/* Stop the group: queued tasks go back to IDLE unrun, running ones may finish until
 * deadline (CLOCK_REALTIME), and each thread is joined; a thread still running then is
 * named on stderr and detached, and its task is orphaned (left in RUNNING). After this
 * the VM must not touch the group. */
void stvm__workers_free(stvm_workers *w, const struct timespec *deadline);

#endif
