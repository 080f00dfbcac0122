/*
 * The process primitives: Semaphore signal and wait (85, 86), Process resume and
 * suspend (87, 88, and OpenSmalltalk's suspends that back a waiter up, 568 and 578),
 * yield (167), the Mutex critical sections (185-187) and relinquish (230). stvm_primitive_call has checked the argument count and, for the rows marked
 * PROCESS_ONLY, that there is an active process; receivers are checked here.
 */
#include <stddef.h>

#include "../scheduler/sched.h"
#include "../vm/integer.h"
#include "prim_table.h"

/* The running state of a Process oop; NULL for anything else or a finished process
 * (Pharo fails such a receiver: its suspendedContext is nil). */
static stvm_proc *running_state(stvm_vm *vm, stvm_oop o)
{
    stvm_process *h = stvm__prim_object_of(vm, o, STVM_CLASS_PROCESS);
    return h ? h->core : NULL;
}

int stvm__primitive_signal(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_semaphore *s = stvm__prim_object_of(vm, r, STVM_CLASS_SEMAPHORE);
    if (!s)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    *res = r;
    stvm__sem_signal(vm, s);
    return PRIM_OK;
}

int stvm__primitive_wait(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_semaphore *s = stvm__prim_object_of(vm, r, STVM_CLASS_SEMAPHORE);
    if (!s)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    *res = r;
    stvm__sem_wait(vm, s);
    return PRIM_OK;
}

int stvm__primitive_resume(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_proc *p = running_state(vm, r);
    if (!p)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    *res = r;
    return stvm__process_resume(vm, p) ? STVM_PRIM_ERR_BAD_RECEIVER : PRIM_OK;
}

/* Primitives 88, 568 and 578: the same checks and answers, but for what a blocked
 * process does when resumed (88: its wait is over, as classic Pharo's; 568 and 578: it
 * waits again, as OpenSmalltalk's since 2022) and what 578 answers for it. The answer
 * is the list it was on (Pharo answers the old myList); run queues are not objects
 * here, so a ready process answers nil, and so does the active one. */
static int suspend_prim(stvm_vm *vm, stvm_oop r, stvm_oop *res, int number)
{
    stvm_proc *p = running_state(vm, r);
    if (!p || (p->flags & STVM_PF_VM_OWN))
        return STVM_PRIM_ERR_BAD_RECEIVER;
    stvm_oop old = STVM_NIL;
    if (p->my_list && p->my_list->kind == STVM_LIST_SEMAPHORE)
        old = (stvm_oop)((char *)p->my_list - offsetof(stvm_semaphore, list));
    else if (p->my_list && p->my_list->kind == STVM_LIST_MUTEX)
        old = (stvm_oop)((char *)p->my_list - offsetof(stvm_mutex, list));
    if (p != vm->active && !p->my_list)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (number == 578 && stvm__process_backs_up(p))
        old = STVM_NIL;   /* V2: nil for a blocked process, which it backs up */
    *res = old;
    int err = number == 88 ? stvm__process_suspend(vm, p) : stvm__process_suspend_backing_up(vm, p);
    /* EINTR: the caller suspended itself and a terminate, not a resume, brought it back
     * (or it waits no more): the primitive has done its work, and answers nil. */
    return err == STVM_ESTATE ? STVM_PRIM_ERR_BAD_RECEIVER : PRIM_OK;
}

int stvm__primitive_suspend(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    return suspend_prim(vm, r, res, 88);
}

int stvm__primitive_suspend_backing_up_v1(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                          stvm_oop *res)
{
    (void)a;
    return suspend_prim(vm, r, res, 568);
}

int stvm__primitive_suspend_backing_up_v2(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                          stvm_oop *res)
{
    (void)a;
    return suspend_prim(vm, r, res, 578);
}

int stvm__primitive_yield(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    *res = r;
    stvm__yield(vm);
    return PRIM_OK;
}

int stvm__primitive_exit_critical_section(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                          stvm_oop *res)
{
    (void)a;
    stvm_mutex *m = stvm__prim_object_of(vm, r, STVM_CLASS_MUTEX);
    if (!m)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (m->owner != vm->active)   /* only the owner may exit */
        return STVM_PRIM_ERR_INAPPROPRIATE;
    *res = r;
    stvm__mutex_exit_prim(vm, m);
    return PRIM_OK;
}

int stvm__primitive_enter_critical_section(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                           stvm_oop *res)
{
    (void)a;
    stvm_mutex *m = stvm__prim_object_of(vm, r, STVM_CLASS_MUTEX);
    if (!m)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    int got = stvm__mutex_enter_prim(vm, m);
    /* false: acquired; true: already the owner; nil: the wait was cut short by a
     * suspend, so the caller does not own it (Pharo would answer false here). */
    *res = got == 1 ? STVM_TRUE : got == 0 ? STVM_FALSE : STVM_NIL;
    return PRIM_OK;
}

int stvm__primitive_test_and_set_ownership_of_critical_section(stvm_vm *vm, stvm_oop r,
                                                               const stvm_oop *a,
                                                               stvm_oop *res)
{
    (void)a;
    stvm_mutex *m = stvm__prim_object_of(vm, r, STVM_CLASS_MUTEX);
    if (!m)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!m->owner) {
        stvm_mutex_try_enter(vm, m);
        *res = STVM_FALSE;
    } else {
        *res = m->owner == vm->active ? STVM_TRUE : STVM_NIL;
    }
    return PRIM_OK;
}

int stvm__primitive_relinquish_processor(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                         stvm_oop *res)
{
    if (!stvm__is_si_of(vm, a[0]) || stvm__si_value(a[0]) < 0)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    *res = r;
    stvm__relinquish(vm, (uint64_t)stvm__si_value(a[0]));
    return PRIM_OK;
}
