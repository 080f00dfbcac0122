/*
 * stvm_fd_wait: a green process waits for a descriptor of the embedder's, as a Pharo
 * Socket waits for its own: a semaphore registered in the external table, one-shot
 * aio handlers armed to signal it, and a wait on it (timed ones through the Delay
 * scheduler). Everything it registers goes when the wait ends, also when its process
 * is terminated in the middle (its wait guard).
 */
#include <poll.h>

#include "../../vm/aio.h"
#include "../../vm/objmem.h"
#include "../kernel/delay.h"

typedef struct fd_waiter {
    stvm_wait_guard guard;      /* undoes the registrations if the waiter is terminated */
    int fd, events;
    stvm_semaphore *sem;
    int index;                  /* sem's slot in the external table */
} fd_waiter;

static void release(stvm_vm *vm, fd_waiter *w)
{
    stvm__aio_disarm(vm, w->fd, w->events);
    if (w->index)
        stvm_external_unregister(vm, w->index);
    if (w->sem)
        stvm_semaphore_free(vm, w->sem);
}

static void undo(stvm_vm *vm, stvm_wait_guard *g)
{
    release(vm, STVM_CONTAINER(g, fd_waiter, guard));
}

/* 0 ms: only look, without arming anything. poll answers what epoll refuses (a regular
 * file, /dev/null) as always ready, so a ready answer is checked with epoll: looking and
 * waiting take the same descriptors. One that poll finds not ready has the poll method
 * epoll needs; only an epoll descriptor can still be refused then, and the VM's own is
 * the one a caller can name (stvm_backend_fd). A look that finds nothing stays one
 * system call. */
static int look(stvm_vm *vm, int fd, int events)
{
    if (fd == stvm_backend_fd(vm))
        return STVM_EINVAL;
    struct pollfd p = {.fd = fd, .events = (short)(((events & STVM_IO_READ) ? POLLIN : 0) |
                                                   ((events & STVM_IO_WRITE) ? POLLOUT : 0))};
    if (poll(&p, 1, 0) < 0)
        return STVM_ESYS;
    if (p.revents & POLLNVAL)
        return STVM_EINVAL;
    int ready = ((p.revents & (POLLIN | POLLHUP | POLLERR)) ? STVM_IO_READ : 0) |
                ((p.revents & (POLLOUT | POLLHUP | POLLERR)) ? STVM_IO_WRITE : 0);
    ready &= events;
    if (!ready)
        return STVM_ETIMEDOUT;
    int err = stvm__aio_watchable(vm, fd);
    return err ? err : ready;
}

static int arm_events(stvm_vm *vm, fd_waiter *w, int index)
{
    int err = STVM_OK;
    for (int ev = STVM_IO_READ; ev <= STVM_IO_WRITE && !err; ev <<= 1)
        if (w->events & ev)
            err = stvm__aio_arm(vm, w->fd, ev, index);
    return err;
}

/* The handlers are armed first, with no slot yet (nothing can fire before this process
 * waits): epoll refuses a descriptor it cannot watch before anything is allocated.
 * Giving them the slot is no system call. A failure afterwards (EFULL, ENOMEM) undoes
 * everything, the allocation counters too. */
static int arm(stvm_vm *vm, fd_waiter *w)
{
    int err = arm_events(vm, w, 0);
    if (err) {
        stvm__aio_disarm(vm, w->fd, w->events);
        return err;
    }
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    err = stvm_semaphore_new(vm, &w->sem);
    if (!err)
        err = stvm_external_register(vm, w->sem, &w->index);
    if (!err)
        err = arm_events(vm, w, w->index);
    if (err) {
        release(vm, w);
        stvm__alloc_forget(vm, mark);
    }
    return err;
}

static int sem_wait(stvm_vm *vm, void *sem)
{
    return stvm__sem_wait(vm, sem);
}

int stvm_fd_wait(stvm_vm *vm, int fd, int events, int64_t timeout_ms)
{
    if (!vm || fd < 0 || events < 1 || events > 3 || timeout_ms < -1)
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    if (stvm__aio_armed(vm, fd) & events)
        return STVM_EWAITING;
    int err = timeout_ms > 0 ? stvm__check_duration(vm, timeout_ms, true) : STVM_OK;
    if (err)
        return err;
    if (timeout_ms == 0)
        return look(vm, fd, events);
    fd_waiter w = {.fd = fd, .events = events};
    if ((err = arm(vm, &w)))
        return err;
    w.guard.undo = undo;
    stvm__wait_guard_push(vm, &w.guard);
    stvm_proc *me = vm->active;
    me->wait_on_kind = STVM_WAIT_ON_FD;   /* for the process listing */
    me->wait_fd = fd;
    err = timeout_ms < 0 ? stvm__sem_wait(vm, w.sem)
                         : stvm__timed_wait(vm, &w.sem->list, sem_wait, w.sem, timeout_ms, true);
    me->wait_on_kind = STVM_WAIT_ON_NOTHING;
    stvm__wait_guard_pop(vm, &w.guard);
    int fired = stvm__aio_take_fired(vm, fd, events);
    release(vm, &w);
    return err ? err : fired;
}
