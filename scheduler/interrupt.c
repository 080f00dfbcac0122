/*
 * Interrupts: a function of the caller's run in another process at its next scheduling
 * point (the C form of Pharo's Process>>signalException:), and the cancelled state in
 * which every wait of a process answers STVM_EINTR at once.
 *
 * An interrupt ends the wait its process is in, wherever that is, through the one rule
 * of wait.c: the wait answers STVM_EINTR and has taken nothing, and what the process had
 * been handed and not yet run to take is given back. A process that is not waiting
 * (ready, or suspended outside a wait) just runs the function when it next runs; one
 * committed to a wait it has not begun (a timed wait whose Delay is being scheduled)
 * finds that wait ending at once.
 */
#include <stdlib.h>

#include "sched.h"
#include "../vm/alloc.h"

bool stvm__wait_interrupt(stvm_vm *vm, stvm_proc *p)
{
    if (p->handed_from) {            /* woken, not yet run: it never had it */
        stvm__wait_give_back(vm, p);
        p->wait_end = STVM_WAIT_INTERRUPTED;
        return false;
    }
    stvm_list *l = p->my_list;
    if (l && l->kind != STVM_LIST_RUNQ) {
        stvm__wait_end(vm, p, STVM_WAIT_INTERRUPTED);
        return true;
    }
    if (!l && p->wait_end == STVM_WAIT_ABORTED)
        return false;                /* suspended in a wait: it answers ESTATE when resumed */
    if (p->flags & STVM_PF_BACKED_UP) {   /* backed up (568, 578): that wait ends instead */
        p->flags = (uint16_t)(p->flags & ~STVM_PF_BACKED_UP);
        stvm__wait_uncommit(p);
        p->wait_end = STVM_WAIT_INTERRUPTED;
        return false;
    }
    if (p->pinned)
        p->flags |= STVM_PF_EINTR_NEXT;
    return false;
}

void stvm__interrupts_run(stvm_vm *vm, stvm_proc *p)
{
    /* One at a time: an interrupt that comes while one runs ends any wait that one is
     * in (stvm_process_interrupt does that), but runs only after it. */
    if (p->in_interrupt)
        return;
    p->in_interrupt = true;
    /* The function may wait itself: the wait it interrupted must find its own state
     * (how it ended, its commitment) as it left it. */
    uint8_t wait_end = p->wait_end;
    stvm_list *pinned = p->pinned;
    uint8_t label = p->wait_label;
    uint8_t on_kind = p->wait_on_kind;
    p->wait_label = STVM_WL_NONE;   /* fn's own waits say what they wait on */
    p->wait_on_kind = STVM_WAIT_ON_NOTHING;
    uint16_t eintr_next = p->flags & STVM_PF_EINTR_NEXT;
    p->pinned = NULL;
    p->flags &= (uint16_t)~STVM_PF_EINTR_NEXT;
    while (p->flags & STVM_PF_INTERRUPT) {
        stvm_interrupt *n = p->interrupts;
        p->interrupts = n->next;
        if (!p->interrupts)
            p->flags &= (uint16_t)~STVM_PF_INTERRUPT;
        stvm_fn fn = n->fn;
        void *arg = n->arg;
        if (!n->posters)
            free(n);
        if (fn)
            fn(vm, arg);
    }
    p->in_interrupt = false;
    p->wait_end = wait_end;
    p->pinned = pinned;
    p->wait_label = label;
    p->wait_on_kind = on_kind;
    p->flags |= eintr_next;
}

void stvm__interrupts_drop(stvm_proc *p)
{
    for (stvm_interrupt *n; (n = p->interrupts) != NULL;) {
        p->interrupts = n->next;
        if (!n->posters)
            free(n);
    }
    p->flags &= (uint16_t)~STVM_PF_INTERRUPT;
}

/* cancel_depth counts the cancellations in force; this bit, one that never ends. */
#define CANCEL_FOR_GOOD 0x80000000u

void stvm__cancel(stvm_proc *p)
{
    p->cancel_depth++;
    p->flags |= STVM_PF_CANCELLED;
}

void stvm__cancel_for_good(stvm_proc *p)
{
    p->cancel_depth |= CANCEL_FOR_GOOD;
    p->flags |= STVM_PF_CANCELLED;
}

bool stvm__cancelled_for_good(const stvm_proc *p)
{
    return (p->cancel_depth & CANCEL_FOR_GOOD) != 0;
}

void stvm__uncancel(stvm_proc *p)
{
    if ((p->cancel_depth & ~CANCEL_FOR_GOOD) && --p->cancel_depth == 0)
        p->flags &= (uint16_t)~STVM_PF_CANCELLED;
}

int stvm_process_interrupt(stvm_vm *vm, stvm_process *h, stvm_fn fn, void *arg)
{
    stvm_proc *p;
    int err = stvm__process_core(vm, h, true, &p);
    if (err)
        return err;
    if (vm->active && !stvm__in_process(vm))
        return STVM_ENOTPROC;        /* the VM runs on another thread */
    if (p == vm->active) {           /* Pharo signals it in the caller's own context */
        stvm__trace(vm, STVM_TRACE_INTERRUPT, p->id, 0, STVM_TRACE_INTR_SELF);
        if (fn)
            fn(vm, arg);
        return STVM_OK;
    }
    stvm_interrupt *n = stvm__malloc(sizeof *n);
    if (!n)
        return STVM_ENOMEM;
    *n = (stvm_interrupt){.fn = fn, .arg = arg};
    stvm__interrupt_post(vm, p, n);
    return STVM_OK;
}

void stvm__interrupt_post(stvm_vm *vm, stvm_proc *p, stvm_interrupt *n)
{
    stvm__trace(vm, STVM_TRACE_INTERRUPT, p->id, 0, STVM_TRACE_INTR_QUEUED);
    n->next = NULL;
    stvm_interrupt **q = &p->interrupts;
    while (*q)
        q = &(*q)->next;
    *q = n;
    p->flags |= STVM_PF_INTERRUPT;
    bool gives_back = p->handed_from != NULL;
    if (stvm__wait_interrupt(vm, p)) {
        if (vm->active)
            stvm__resume(vm, p);
        else
            stvm__make_ready(vm, p);
    } else if (gives_back && vm->active) {
        stvm__preempt_if_needed(vm);   /* what p gave back may have woken a higher one */
    }
}

void stvm__interrupt_withdraw(stvm_proc *p, stvm_interrupt *n)
{
    for (stvm_interrupt **q = &p->interrupts; *q; q = &(*q)->next) {
        if (*q == n) {
            *q = n->next;
            if (!p->interrupts)
                p->flags &= (uint16_t)~STVM_PF_INTERRUPT;
            return;
        }
    }
}
