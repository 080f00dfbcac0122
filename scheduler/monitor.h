/*
 * Pharo's Monitor (monitor.c): the layout the timed forms (image-stubs/kernel/timed_wait.c)
 * share.
 *
 * Pharo builds a Monitor on a Semaphore forMutualExclusion (the entry), an owner and a
 * nesting level, and a queue of fresh Semaphores per condition. Here the entry is a mutex
 * (mutex.c: owner, depth, FIFO hand-off, give-back, release when the owner finishes)
 * whose list is of kind STVM_LIST_MONITOR, and each condition queue is a waiting list of
 * its own, so that every wait is stvm__wait's and the give-back rule holds: a waiter
 * handed a signal that never runs to see it passes it to its queue's next waiter.
 *
 * A waiter goes through: on a condition queue (released the monitor) -> handed a signal,
 * or timed out, interrupted, suspended (ready) -> running: takes the monitor again, at
 * once or on the entry list -> handed the monitor (ready) -> owner, its depth restored.
 */
#ifndef STVM_SCHEDULER_MONITOR_H
#define STVM_SCHEDULER_MONITOR_H

#include "sched.h"

typedef struct stvm_monitor_queue {
    stvm_list list;              /* kind STVM_LIST_MONITOR_QUEUE: its waiters, FIFO */
    stvm_monitor *monitor;
    int id;
} stvm_monitor_queue;

struct stvm_monitor {
    /* First, so that its header is the monitor's (class STVM_CLASS_MONITOR) and the
     * events of its entry name the monitor's address. */
    stvm_mutex lock;
    /* What signal-all hands (one per woken waiter): counted here rather than on the
     * waiter's queue, so that one given back is dropped instead of waking a waiter that
     * came after it. Never holds a process. */
    stvm_list woken;
    stvm_monitor_queue queues[STVM_MONITOR_QUEUES];
};

static inline bool stvm__is_monitor(const stvm_vm *vm, const stvm_monitor *m)
{
    return m && m->lock.hdr.class_index == STVM_CLASS_MONITOR && m->lock.vm == vm;
}

/* A condition queue's id in range. */
static inline bool stvm__monitor_queue_ok(int queue)
{
    return queue >= 0 && queue < STVM_MONITOR_QUEUES;
}

/* Validate a call that waits: EINVAL (also for a queue out of range), ENOTPROC, EPERM
 * (the caller does not own m), or OK. */
int stvm__monitor_check_wait(stvm_vm *vm, const stvm_monitor *m, int queue);

/* The two halves of a condition wait, which the timed forms put around their Delay
 * (image-stubs/kernel/timed_wait.c; the untimed ones are in monitor.c):
 *  - the wait itself (an stvm_wait_fn on a stvm_monitor_queue): the caller, the owner,
 *    releases the monitor completely and joins the queue in one step, so that no signal
 *    can come between; answers as stvm__wait, and EINTR at once without releasing for a
 *    process whose waits are cancelled;
 *  - the retake: make the caller the owner again with `depth` (it waits on the entry
 *    list if need be, blocking even when its waits are cancelled; an interrupt meanwhile
 *    runs and the retake goes on); a caller that never released it keeps it. */
int stvm__monitor_queue_wait(stvm_vm *vm, void *queue);
void stvm__monitor_retake(stvm_vm *vm, stvm_monitor *m, uint32_t depth);

#endif
