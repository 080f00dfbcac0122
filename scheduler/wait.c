/*
 * The one way to block (libdill's dill_wait/dill_trigger): semaphores, mutexes, joins,
 * Delays and timed waits all wait here, so the rules of how a wait can end are written
 * once (stvm__wait itself is inline in sched.h: it is on every hand-off's path):
 *  - signalled: whoever ends the wait takes the process off the list (FIFO) and makes
 *    it runnable; the waiter answers STVM_OK;
 *  - timed out: the timing process found the waiter's Delay due while it still waited
 *    (stvm__wait_end with STVM_WAIT_TIMED_OUT): STVM_ETIMEDOUT;
 *  - cut short: suspended off the list (primitive 88); resumed later it answers
 *    STVM_ESTATE and does not have what it waited for;
 *  - terminated: it never returns here; it exits at the switch (runq.c), and what its
 *    wait registered (wait guards) is undone for it.
 */
#include "sched.h"

void stvm__wait_end(stvm_vm *vm, stvm_proc *p, int how)
{
    stvm__unlink(vm, p);
    p->wait_end = (uint8_t)how;
    if (how == STVM_WAIT_TIMED_OUT)
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
