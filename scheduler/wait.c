/*
 * The one way to block (libdill's dill_wait/dill_trigger): semaphores, mutexes, monitors,
 * joins, Delays and timed waits all wait here, so the rules of how a wait can end are written
 * once (stvm__wait itself is inline in sched.h: it is on every hand-off's path):
 *  - signalled: whoever ends the wait takes the process off the list (FIFO) and makes
 *    it runnable; the waiter answers STVM_OK;
 *  - timed out: the timing process found the waiter's Delay due while it still waited
 *    (stvm__wait_end with STVM_WAIT_TIMED_OUT): STVM_ETIMEDOUT;
 *  - cut short: suspended off the list (primitive 88); resumed later it answers
 *    STVM_ESTATE and does not have what it waited for;
 *  - interrupted (stvm_process_interrupt, or a terminate of a process already running
 *    its cleanups): taken off the list and made ready; it answers STVM_EINTR and has
 *    taken nothing;
 *  - closed: the SharedQueue it waited on was closed (stvm_queue_close): taken off the
 *    list and made ready with nothing taken or put; it answers STVM_ECLOSED, which a
 *    reader's call turns into STVM_EEOF;
 *  - terminated: it never returns here; it exits at the switch (runq.c), and what its
 *    wait registered (wait guards) is undone for it.
 * And one rule for all of them: a process handed what it waited for (a signal or a
 * mutex) that is terminated or interrupted before it runs to take it gives it back
 * (stvm__wait_give_back), so no signal or ownership is ever lost with a process that
 * did not live to use it.
 */
#include "sched.h"

void stvm__wait_end(stvm_vm *vm, stvm_proc *p, int how)
{
    stvm__unlink(vm, p);
    p->wait_end = (uint8_t)how;
    if (how == STVM_WAIT_TIMED_OUT || how == STVM_WAIT_CLOSED)
        stvm__make_ready(vm, p);
}

void stvm__wait_commit(stvm_vm *vm, stvm_list *l)
{
    stvm_proc *a = vm->active;
    a->pinned = l;
    l->pins++;
}

void stvm__wait_uncommit(stvm_proc *p)
{
    p->flags &= (uint16_t)~STVM_PF_EINTR_NEXT;   /* the wait it was for is over */
    if (p->pinned) {
        p->pinned->pins--;
        p->pinned = NULL;
    }
}

void stvm__wait_guard_push(stvm_vm *vm, stvm_wait_guard *g)
{
    g->next = vm->active->guards;
    vm->active->guards = g;
}

void stvm__wait_guard_pop(stvm_vm *vm, stvm_wait_guard *g)
{
    stvm_proc *a = vm->active;
    if (a->guards == g)
        a->guards = g->next;
}

void stvm__wait_guards_undo(stvm_vm *vm, stvm_proc *p)
{
    for (stvm_wait_guard *g; (g = p->guards) != NULL;) {
        p->guards = g->next;
        g->undo(vm, g);
    }
}

int stvm__wait_cancelled(stvm_vm *vm)
{
    vm->active->flags &= (uint16_t)~STVM_PF_EINTR_NEXT;   /* one wait only */
    stvm__trace(vm, STVM_TRACE_INTERRUPT, vm->active->id, 0, STVM_TRACE_INTR_CANCELLED);
    return STVM_EINTR;
}

void stvm__wait_give_back(stvm_vm *vm, stvm_proc *p)
{
    stvm_list *l = p->handed_from;
    if (!l)
        return;
    p->handed_from = NULL;
    l->handed--;
    l->pins--;
    stvm__trace(vm, STVM_TRACE_GIVEN_BACK, p->id, 0, l->kind);   /* = STVM_TRACE_GAVE_* */
    switch (l->kind) {
    case STVM_LIST_SEMAPHORE:
        stvm__sem_give_back(vm, STVM_CONTAINER(l, stvm_semaphore, list));
        break;
    case STVM_LIST_MUTEX:
        stvm__mutex_give_back(vm, STVM_CONTAINER(l, stvm_mutex, list), p);
        break;
    case STVM_LIST_MONITOR:
    case STVM_LIST_MONITOR_QUEUE:
    case STVM_LIST_MONITOR_WAKE:
        stvm__monitor_give_back(vm, l, p);
        break;
    default:   /* a join hands nothing: the joined process stays finished */
        break;
    }
}
