/*
 * Pharo's Monitor (Kernel, Pharo 13) transcribed onto stvm's public API, for the lab's
 * `monitor NAME pharo` and the upstream suite (tests/test_upstream.c): the reference
 * that reproduces pharo #18104 beside stvm's own Monitor (scheduler/monitor.c), which
 * does not have the defect. Only what the report needs: critical:, enter and exit.
 *
 * Pharo's Monitor is a semaphore made for mutual exclusion, the owner process and a
 * nesting level. Its critical: enters and runs the block inside an ensure: whose
 * cleanup is exit. Enter, for a process that does not own it, waits on the semaphore
 * and then makes itself the owner at level 1; exit lowers the level and, below 1,
 * forgets the owner and signals the semaphore. The enter is inside the protected block,
 * so a process terminated while it waits to enter runs exit too: it lowers the level of
 * the owner it is not, and signals, and the next waiter enters while the owner is still
 * inside. A wait's answer is ignored, as Pharo's `mutex wait` has none.
 *
 * Header-only (static functions), so that the lab and the suite share the one copy
 * without a library of their own. Uses <stvm.h> only.
 */
#ifndef STVM_LAB_PHARO_MONITOR_H
#define STVM_LAB_PHARO_MONITOR_H

#include <stdlib.h>
#include <stvm.h>

typedef struct pharo_monitor {
    stvm_semaphore *mutex;    /* mutex := Semaphore forMutualExclusion */
    stvm_process *owner;      /* ownerProcess */
    int nesting;              /* nestingLevel */
} pharo_monitor;

/* Monitor new: one excess signal on its semaphore. */
static inline int pharo_monitor_new(stvm_vm *vm, pharo_monitor **out)
{
    pharo_monitor *m = calloc(1, sizeof *m);
    if (!m)
        return STVM_ENOMEM;
    int rc = stvm_semaphore_new(vm, &m->mutex);
    if (rc == STVM_OK && (rc = stvm_semaphore_signal(vm, m->mutex)) != STVM_OK)
        stvm_semaphore_free(vm, m->mutex);
    if (rc != STVM_OK) {
        free(m);
        return rc;
    }
    *out = m;
    return STVM_OK;
}

/* The VM frees the semaphore with itself; the record is the caller's. */
static inline void pharo_monitor_free(pharo_monitor *m)
{
    free(m);
}

/* Monitor>>enter */
static inline void pharo_monitor_enter(stvm_vm *vm, pharo_monitor *m)
{
    stvm_process *self = stvm_vm_active_process(vm);
    if (m->owner == self) {
        m->nesting++;
        return;
    }
    stvm_semaphore_wait(vm, m->mutex);
    m->owner = self;
    m->nesting = 1;
}

/* Monitor>>exit, also critical:'s ensure: block (a cleanup: arg is the monitor). */
static inline void pharo_monitor_exit(stvm_vm *vm, void *arg)
{
    pharo_monitor *m = arg;
    m->nesting--;
    if (m->nesting < 1) {
        m->owner = NULL;
        stvm_semaphore_signal(vm, m->mutex);
    }
}

/* The start of Monitor>>critical: `[self enter. aBlock value] ensure: [self exit]`:
 * the cleanup is registered first, then the enter; the caller's block follows, and
 * pharo_monitor_critical_end ends it on the normal path. */
static inline int pharo_monitor_critical_begin(stvm_vm *vm, pharo_monitor *m)
{
    int rc = stvm_ensure(vm, pharo_monitor_exit, m);
    if (rc == STVM_OK)
        pharo_monitor_enter(vm, m);
    return rc;
}

static inline int pharo_monitor_critical_end(stvm_vm *vm)
{
    return stvm_ensure_pop(vm, true);
}

/* Monitor>>critical: aBlock, with fn(vm, arg) as the block. */
static inline int pharo_monitor_critical(stvm_vm *vm, pharo_monitor *m, stvm_fn fn, void *arg)
{
    int rc = pharo_monitor_critical_begin(vm, m);
    if (rc != STVM_OK)
        return rc;
    fn(vm, arg);
    return pharo_monitor_critical_end(vm);
}

#endif
