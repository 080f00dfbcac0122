/*
 * The scheduler's invariants, checked on demand (every test ends with this check):
 *  - a process is on at most one list and its myList says which; the active process
 *    is on none; lists are acyclic, their prevLinks and lastLink right;
 *  - run queue p-1 holds only processes of priority p, and bit p-1 of ready_bits is
 *    set exactly when it is non-empty;
 *  - the active process has the highest priority of all runnable ones, except while a
 *    process below the idle priority borrows the processor from the idle process;
 *  - a semaphore with waiters has no excess signals; a mutex with waiters has a live
 *    owner; every mutex a process lists is owned by it, at a depth above 0;
 *  - a monitor (its entry is a mutex, so the rules above hold of it: nobody waits to
 *    enter a free monitor unless it was handed to them) is owned by none of the processes
 *    waiting on it, to enter or on a condition queue; its signal-all list holds nobody;
 *  - the counts of unfinished processes agree with the list of them;
 *  - each process-local value belongs to its variable and to a process handle of this
 *    VM, has a value unless a binding pins it, and a variable's bindings in progress
 *    are the pins of its values;
 *  - a SharedQueue the VM ended (closed) keeps no writer waiting for room, and no
 *    reader waiting once nothing is left for it: nothing could ever wake them.
 * Linear in the number of processes, values and queues: each list is walked once, from
 * its head.
 */
#include "monitor.h"
#include "process_local.h"
#include "shared_queue.h"

#include <stdio.h>

#define FAIL(...)                                                \
    do {                                                         \
        if (buf && size)                                         \
            snprintf(buf, size, __VA_ARGS__);                    \
        return STVM_ESTATE;                                      \
    } while (0)

/* Walk l once: members name it, links agree, no cycle. Adds its length to *members. */
static int check_list(stvm_list *l, size_t limit, size_t *members, char *buf, size_t size)
{
    size_t n = 0;
    stvm_proc *prev = NULL;
    for (stvm_proc *p = l->first; p; prev = p, p = p->next_link) {
        if (p->my_list != l)
            FAIL("process '%s' is on a list its myList does not name", p->handle->name);
        if (prev && p->prev_link != prev)
            FAIL("process '%s' has a wrong prevLink", p->handle->name);
        if (p->flags & STVM_PF_TERMINATED)
            FAIL("finished process '%s' is still on a list", p->handle->name);
        if (++n > limit)
            FAIL("a list is cyclic or holds a process twice");
    }
    if (l->last != prev)
        FAIL("a list's lastLink is not its last process");
    *members += n;
    return STVM_OK;
}

static int check_run_queues(stvm_vm *vm, size_t limit, size_t *members, char *buf, size_t size)
{
    for (int i = 0; i < STVM_NUM_PRIORITIES; i++) {
        stvm_list *l = &vm->runq[i];
        bool bit = (vm->ready_bits[i >> 6] >> (i & 63)) & 1;
        if (bit != (l->first != NULL))
            FAIL("priority bitmap disagrees with run queue %d", i + 1);
        if (check_list(l, limit, members, buf, size))
            return STVM_ESTATE;
        for (stvm_proc *p = l->first; p; p = p->next_link)
            if (p->priority != i + 1)
                FAIL("process '%s' of priority %d is on run queue %d", p->handle->name,
                     p->priority, i + 1);
    }
    return STVM_OK;
}

/* What must hold of the object whose waiting list p heads. A message names the object
 * as its program does (its name, a queue for a queue's semaphore): OBJ, made only when
 * a check fails. */
#define OBJ stvm__list_object_text(vm, l, obj, sizeof obj)
static int check_waited_object(const stvm_vm *vm, const stvm_list *l, char *buf, size_t size)
{
    char obj[2 * STVM_NAME_MAX + 64];
    if (l->kind == STVM_LIST_SEMAPHORE &&
        STVM_CONTAINER(l, stvm_semaphore, list)->excess_signals > 0)
        FAIL("%s has both waiters and excess signals", OBJ);
    if (l->kind == STVM_LIST_MUTEX || l->kind == STVM_LIST_MONITOR) {
        const stvm_mutex *m = STVM_CONTAINER(l, stvm_mutex, list);
        if (!m->owner || (m->owner->flags & STVM_PF_TERMINATED))
            FAIL("%s has waiters but no live owner", OBJ);
        for (const stvm_proc *p = l->first; p; p = p->next_link)
            if (p == m->owner)
                FAIL("process '%s' waits to enter %s, which it owns", p->handle->name, OBJ);
    }
    if (l->kind == STVM_LIST_MONITOR_QUEUE) {
        const stvm_monitor *m = STVM_CONTAINER(l, stvm_monitor_queue, list)->monitor;
        for (const stvm_proc *p = l->first; p; p = p->next_link)
            if (p == m->lock.owner)
                FAIL("process '%s' waits on %s, a monitor it owns", p->handle->name, OBJ);
    }
    if (l->kind == STVM_LIST_MONITOR_WAKE)
        FAIL("a process waits on a monitor's signal-all list");
    return STVM_OK;
}
#undef OBJ

/* Every process: counted, not both active and listed, its mutexes its own; every
 * waiting list walked once, from the process at its head. */
static int check_processes(stvm_vm *vm, size_t limit, size_t *members, size_t *listed,
                           char *buf, size_t size)
{
    uint32_t total = 0, user = 0;
    for (stvm_proc *p = vm->all; p; p = p->all_next) {
        total++;
        user += !(p->flags & STVM_PF_VM_OWN);
        if (p == vm->active && p->my_list)
            FAIL("the active process '%s' is on a list", p->handle->name);
        stvm_list *l = p->my_list;
        *listed += l != NULL;
        if (l && l->kind != STVM_LIST_RUNQ && l->first == p &&
            (check_list(l, limit, members, buf, size) || check_waited_object(vm, l, buf, size)))
            return STVM_ESTATE;
        for (stvm_mutex *m = p->owned; m; m = m->next_owned) {
            if (m->owner != p)
                FAIL("process '%s' lists a mutex it does not own", p->handle->name);
            if (m->depth == 0)
                FAIL("process '%s' owns a %s at depth 0", p->handle->name,
                     m->list.kind == STVM_LIST_MUTEX ? "mutex" : "monitor");
        }
        /* A hand-off not yet taken: its taker is off every waiting list, and the object
         * it came from is pinned by it. */
        stvm_list *h = p->handed_from;
        if (h && ((l && l->kind != STVM_LIST_RUNQ) || p == vm->active || !h->pins ||
                  !h->handed || h->handed > h->pins))
            FAIL("process '%s' holds a hand-off while %s", p->handle->name,
                 p == vm->active        ? "it runs"
                 : !h->pins             ? "nothing pins it"
                 : !h->handed           ? "its object counts no hand-off"
                 : h->handed > h->pins ? "its object counts more hand-offs than pins"
                                        : "it waits again");
        if (p->interrupts && !(p->flags & STVM_PF_INTERRUPT))
            FAIL("process '%s' has interrupts but no flag for them", p->handle->name);
        if (total > limit)
            FAIL("the list of unfinished processes is cyclic");
    }
    if (total != vm->live_total || user != vm->live_user)
        FAIL("process counts disagree (%u/%u listed, %u/%u counted)", total, user,
             vm->live_total, vm->live_user);
    return STVM_OK;
}

/* Every variable's values (process_local.h): linked both ways, owned by handles of this
 * VM, pinned exactly by the bindings in progress. A cycle is caught by a second walker
 * going twice as fast. */
static int check_locals(stvm_vm *vm, char *buf, size_t size)
{
    for (const stvm_local *v = vm->locals; v; v = v->next) {
        if (v->hdr.class_index != STVM_CLASS_LOCAL || v->vm != vm)
            FAIL("the VM's list of process-local variables holds something else");
        if (v->next && v->next->prev != v)
            FAIL("the VM's list of process-local variables has a wrong back link");
        uint64_t pins = 0;
        const stvm_local_value *fast = v->values;
        for (const stvm_local_value *e = v->values; e; e = e->var_next) {
            if (e->var != v)
                FAIL("a process-local value is on another variable's list");
            if (e->var_next && e->var_next->var_prev != e)
                FAIL("a process-local variable's list has a wrong back link");
            if (!stvm__is_proc(vm, e->owner))
                FAIL("a process-local value belongs to no process handle of this VM");
            if (!e->value && !e->pins)
                FAIL("process '%s' keeps an empty value that no binding pins",
                     e->owner->name);
            pins += e->pins;
            for (int k = 0; k < 2 && fast; k++)
                fast = fast->var_next;
            if (fast && fast == e)
                FAIL("a process-local variable's list is cyclic");
        }
        if (pins != v->during)
            FAIL("a process-local variable counts %u bindings, its values %llu pins",
                 v->during, (unsigned long long)pins);
    }
    return STVM_OK;
}

static int check_queues(stvm_vm *vm, char *buf, size_t size)
{
    for (stvm_queue *q = vm->queues; q; q = q->next) {
        if (q->ended && !stvm__queue_closed(q))
            FAIL("a queue was ended without being closed");
        if (q->ended && q->room.list.first)
            FAIL("process '%s' waits for room in a closed queue",
                 q->room.list.first->handle->name);
        if (stvm__queue_dry(q) && q->avail.list.first)
            FAIL("process '%s' waits on a closed queue with nothing left",
                 q->avail.list.first->handle->name);
    }
    return STVM_OK;
}

int stvm_vm_check_invariants(stvm_vm *vm, char *buf, size_t size)
{
    if (!vm)
        return STVM_EINVAL;
    size_t limit = (size_t)vm->live_total + 1, members = 0, listed = 0;
    if (check_run_queues(vm, limit, &members, buf, size) ||
        check_processes(vm, limit, &members, &listed, buf, size))
        return STVM_ESTATE;
    /* Each listed process was met once as a member of the list it names; a process
     * on two lists, or on a list it does not name, makes these differ. */
    if (members != listed)
        FAIL("%zu processes say they are on a list, the lists hold %zu", listed, members);
    if (check_locals(vm, buf, size) || check_queues(vm, buf, size))
        return STVM_ESTATE;
    if (vm->idle && (vm->idle->flags & STVM_PF_TERMINATED))
        FAIL("the idle process has finished");
    stvm_proc *a = vm->active;
    if (a && a->priority >= STVM_PRIORITY_IDLE && stvm__runq_highest(vm) > a->priority)
        FAIL("'%s' runs at priority %d while priority %d is runnable", a->handle->name,
             a->priority, stvm__runq_highest(vm));
    if (buf && size)
        buf[0] = 0;
    return STVM_OK;
}
