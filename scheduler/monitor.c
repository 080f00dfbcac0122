/*
 * Pharo's Monitor: a re-entrant entry (a mutex, mutex.c) and condition queues waited on
 * through stvm__wait (the layout and the life of a waiter are in monitor.h). The timed
 * waits are in image-stubs/kernel/timed_wait.c, which puts a Delay between the two halves of a
 * condition wait below.
 */
#include "monitor.h"

#include "../vm/objmem.h"

/* ---- checks ------------------------------------------------------------------------- */

/* A call that may wait to enter: EINVAL, ENOTPROC or OK. */
static int check_enter(stvm_vm *vm, const stvm_monitor *m)
{
    if (!vm || !stvm__is_monitor(vm, m))
        return STVM_EINVAL;
    return stvm__in_process(vm) ? STVM_OK : STVM_ENOTPROC;
}

int stvm__monitor_check_wait(stvm_vm *vm, const stvm_monitor *m, int queue)
{
    if (!vm || !stvm__is_monitor(vm, m) || !stvm__monitor_queue_ok(queue))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    return m->lock.owner == vm->active ? STVM_OK : STVM_EPERM;
}

/* A call only the owner may make and that never waits (exit, the signals): EINVAL or
 * EPERM (the embedding thread owns nothing) or OK. */
static int check_owner(stvm_vm *vm, const stvm_monitor *m, int queue)
{
    if (!vm || !stvm__is_monitor(vm, m) || !stvm__monitor_queue_ok(queue))
        return STVM_EINVAL;
    return stvm__in_process(vm) && m->lock.owner == vm->active ? STVM_OK : STVM_EPERM;
}

/* ---- the two halves of a condition wait ----------------------------------------------- */

int stvm__monitor_queue_wait(stvm_vm *vm, void *queue)
{
    stvm_monitor_queue *q = queue;
    stvm_monitor *m = q->monitor;
    stvm_proc *a = vm->active;
    /* A wait that would answer at once must not let anyone in meanwhile. */
    if (a->flags & (STVM_PF_CANCELLED | STVM_PF_EINTR_NEXT))
        return stvm__wait_cancelled(vm);
    stvm__trace(vm, STVM_TRACE_MONITOR_WAIT, a->id, (uintptr_t)m, q->id);
    /* Released whatever the depth, to the first entrant (made ready, no switch: the
     * caller joins the queue before anyone can run and signal it). */
    stvm__mutex_give_back(vm, &m->lock, a);
    return stvm__wait_blocking(vm, &q->list);
}

void stvm__monitor_retake(stvm_vm *vm, stvm_monitor *m, uint32_t depth)
{
    stvm_proc *a = vm->active;
    if (m->lock.owner != a) {
        /* Committed: ready between two waits (interrupted), nothing else would keep the
         * monitor from being freed under it. */
        stvm__wait_commit(vm, &m->lock.list);
        /* Free means nobody waits to enter (the last exit hands it to the first), so a
         * free monitor is taken here without passing anyone. */
        while (stvm__mutex_try(vm, &m->lock) != 1) {
            stvm__trace(vm, STVM_TRACE_MONITOR_WAIT, a->id, (uintptr_t)m,
                        STVM_TRACE_MONITOR_ENTRY);
            if (stvm__wait_blocking(vm, &m->lock.list) == STVM_OK && m->lock.owner == a)
                break;   /* handed to us by the exit */
        }
        stvm__wait_uncommit(a);
    }
    m->lock.depth = depth;
}

/* An untimed condition wait on queue q by the owner. */
static int wait_on(stvm_vm *vm, stvm_monitor *m, int queue)
{
    stvm_monitor_queue *q = &m->queues[queue];
    uint32_t depth = m->lock.depth;
    /* Committed from now until the retake: ready after an interrupt or a timeout, the
     * caller is on no list, and the monitor must stay. */
    stvm__wait_commit(vm, &q->list);
    int err = stvm__monitor_queue_wait(vm, q);
    stvm__wait_uncommit(vm->active);
    stvm__monitor_retake(vm, m, depth);
    return err;
}

/* ---- waking ------------------------------------------------------------------------- */

/* Hand p, just taken off a queue of m, its wake-up (counted on `on`, see monitor.h). */
static void handed_wake(stvm_vm *vm, stvm_monitor *m, stvm_proc *p, stvm_list *on, int queue)
{
    stvm__wait_handed(p, on);
    stvm__trace_full(vm, STVM_TRACE_MONITOR_SIGNAL, stvm__trace_active(vm), (uintptr_t)m,
                     (int64_t)p->id, queue, 0);
}

/* Wake the first waiter of queue q (0 or 1). It runs now if strictly higher, and
 * queues to re-enter. */
static int wake_one(stvm_vm *vm, stvm_monitor *m, int queue)
{
    stvm_proc *p = stvm__list_pop(&m->queues[queue].list);
    if (!p) {
        stvm__trace_full(vm, STVM_TRACE_MONITOR_SIGNAL, vm->active->id, (uintptr_t)m, 0, queue, 0);
        return 0;
    }
    handed_wake(vm, m, p, &m->queues[queue].list, queue);
    stvm__resume(vm, p);
    return 1;
}

/* Wake every waiter of queue q, oldest first, each as Pharo's signalAllInQueue: does
 * (a higher one runs at its own signal). Nobody can join the queue meanwhile: only the
 * owner waits, and the caller owns m. */
static int wake_all(stvm_vm *vm, stvm_monitor *m, int queue)
{
    int n = 0;
    for (stvm_proc *p; (p = stvm__list_pop(&m->queues[queue].list)) != NULL; n++) {
        handed_wake(vm, m, p, &m->woken, queue);
        stvm__resume(vm, p);
    }
    if (!n)
        stvm__trace_full(vm, STVM_TRACE_MONITOR_SIGNAL, vm->active->id, (uintptr_t)m, 0, queue, 0);
    return n;
}

void stvm__monitor_give_back(stvm_vm *vm, stvm_list *l, stvm_proc *p)
{
    switch (l->kind) {
    case STVM_LIST_MONITOR:
        stvm__mutex_give_back(vm, STVM_CONTAINER(l, stvm_mutex, list), p);
        return;
    case STVM_LIST_MONITOR_QUEUE: {
        /* The signal goes to the queue's next waiter, made ready, never switching. */
        stvm_monitor_queue *q = STVM_CONTAINER(l, stvm_monitor_queue, list);
        stvm_proc *next = stvm__list_pop(&q->list);
        if (next) {
            handed_wake(vm, q->monitor, next, l, q->id);
            stvm__make_ready(vm, next);
        }
        return;
    }
    default:   /* a signal-all's wake: everyone waiting then was woken too */
        return;
    }
}

/* ---- the public calls ----------------------------------------------------------------- */

int stvm_monitor_new(stvm_vm *vm, stvm_monitor **out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    stvm_monitor *m = stvm__objmem_alloc(vm, STVM_CLASS_MONITOR, sizeof *m);
    if (!m)
        return STVM_ENOMEM;
    m->lock.list.kind = STVM_LIST_MONITOR;
    m->lock.vm = vm;
    m->woken.kind = STVM_LIST_MONITOR_WAKE;
    for (int i = 0; i < STVM_MONITOR_QUEUES; i++) {
        m->queues[i].list.kind = STVM_LIST_MONITOR_QUEUE;
        m->queues[i].monitor = m;
        m->queues[i].id = i;
    }
    *out = m;
    return STVM_OK;
}

int stvm_monitor_free(stvm_vm *vm, stvm_monitor *m)
{
    if (!vm || !stvm__is_monitor(vm, m))
        return STVM_EINVAL;
    bool idle = stvm__list_idle(&m->lock.list) && stvm__list_idle(&m->woken);
    for (int i = 0; idle && i < STVM_MONITOR_QUEUES; i++)
        idle = stvm__list_idle(&m->queues[i].list);
    if (!idle || m->lock.owner)
        return STVM_EINUSE;
    stvm__objmem_free(vm, m);
    return STVM_OK;
}

int stvm_monitor_enter(stvm_vm *vm, stvm_monitor *m)
{
    int err = check_enter(vm, m);
    return err ? err : stvm__mutex_enter(vm, &m->lock);
}

int stvm_monitor_try_enter(stvm_vm *vm, stvm_monitor *m)
{
    int err = check_enter(vm, m);
    if (err)
        return err;
    int got = stvm__mutex_try(vm, &m->lock);
    return got == 1 ? STVM_OK : got == 0 ? STVM_EAGAIN : got;
}

int stvm_monitor_exit(stvm_vm *vm, stvm_monitor *m)
{
    int err = check_owner(vm, m, 0);
    if (err)
        return err;
    if (--m->lock.depth == 0)
        stvm__mutex_exit_prim(vm, &m->lock);   /* to the first entrant, which may preempt */
    return STVM_OK;
}

/* The way out of stvm_monitor_critical for a process terminated inside fn: it leaves
 * the level it entered, unless it owns nothing (terminated in a wait, which released the
 * monitor; or fn left it). */
static void critical_exit(stvm_vm *vm, void *monitor)
{
    stvm_monitor *m = monitor;
    m->lock.list.pins--;
    if (vm->active && m->lock.owner == vm->active)
        stvm_monitor_exit(vm, m);
}

int stvm_monitor_critical(stvm_vm *vm, stvm_monitor *m, stvm_fn fn, void *arg)
{
    if (!fn)
        return STVM_EINVAL;
    int err = stvm_monitor_enter(vm, m);
    if (err)
        return err;
    stvm_proc *a = vm->active;
    /* Pinned until the closing exit, so that stvm_monitor_free refuses it meanwhile even
     * if fn leaves it. */
    stvm__list_pin(&m->lock.list);
    stvm_ensure_node exit = {.fn = critical_exit, .arg = m, .next = a->ensures, .on_stack = true};
    a->ensures = &exit;
    fn(vm, arg);
    stvm__ensure_unlink(a, &exit);   /* cleanups fn left registered stay */
    m->lock.list.pins--;
    return stvm_monitor_exit(vm, m);
}

stvm_process *stvm_monitor_owner(stvm_vm *vm, const stvm_monitor *m)
{
    return vm && stvm__is_monitor(vm, m) && m->lock.owner ? m->lock.owner->handle : NULL;
}

int64_t stvm_monitor_depth(stvm_vm *vm, const stvm_monitor *m)
{
    if (!vm || !stvm__is_monitor(vm, m))
        return STVM_EINVAL;
    return m->lock.owner ? (int64_t)m->lock.depth : 0;
}

int stvm_monitor_wait(stvm_vm *vm, stvm_monitor *m)
{
    return stvm_monitor_wait_on(vm, m, 0);
}

int stvm_monitor_wait_on(stvm_vm *vm, stvm_monitor *m, int queue)
{
    int err = stvm__monitor_check_wait(vm, m, queue);
    return err ? err : wait_on(vm, m, queue);
}

/* Pharo's waitWhile:for:. `until` turns it into waitUntil:for:. */
static int wait_while(stvm_vm *vm, stvm_monitor *m, int queue, stvm_monitor_pred pred,
                      void *arg, bool until)
{
    int err = pred ? stvm__monitor_check_wait(vm, m, queue) : STVM_EINVAL;
    while (!err && pred(vm, arg) != until)
        err = wait_on(vm, m, queue);
    return err;
}

int stvm_monitor_wait_while(stvm_vm *vm, stvm_monitor *m, stvm_monitor_pred pred, void *arg)
{
    return wait_while(vm, m, 0, pred, arg, false);
}

int stvm_monitor_wait_until(stvm_vm *vm, stvm_monitor *m, stvm_monitor_pred pred, void *arg)
{
    return wait_while(vm, m, 0, pred, arg, true);
}

int stvm_monitor_wait_while_on(stvm_vm *vm, stvm_monitor *m, int queue, stvm_monitor_pred pred,
                               void *arg)
{
    return wait_while(vm, m, queue, pred, arg, false);
}

int stvm_monitor_wait_until_on(stvm_vm *vm, stvm_monitor *m, int queue, stvm_monitor_pred pred,
                               void *arg)
{
    return wait_while(vm, m, queue, pred, arg, true);
}

int stvm_monitor_signal(stvm_vm *vm, stvm_monitor *m)
{
    int err = check_owner(vm, m, 0);
    return err ? err : wake_one(vm, m, 0);
}

int stvm_monitor_signal_all(stvm_vm *vm, stvm_monitor *m)
{
    int err = check_owner(vm, m, 0);
    return err ? err : wake_all(vm, m, 0);
}

int stvm_monitor_signal_on(stvm_vm *vm, stvm_monitor *m, int queue)
{
    int err = check_owner(vm, m, queue);
    if (err)
        return err;
    /* Pharo's signal:: nobody waits on the named queue, so the default queue's first. */
    return wake_one(vm, m, m->queues[queue].list.first ? queue : 0);
}

int stvm_monitor_signal_all_on(stvm_vm *vm, stvm_monitor *m, int queue)
{
    int err = check_owner(vm, m, queue);
    if (err)
        return err;
    int n = wake_all(vm, m, 0);   /* Pharo's signalAll:: the default queue too, first */
    return queue ? n + wake_all(vm, m, queue) : n;
}

int stvm_monitor_signal_really_all(stvm_vm *vm, stvm_monitor *m)
{
    int err = check_owner(vm, m, 0);
    if (err)
        return err;
    int n = 0;
    for (int i = 0; i < STVM_MONITOR_QUEUES; i++)
        n += wake_all(vm, m, i);
    return n;
}
