/* Looking at processes: stvm_process_get_info and the blocked report. */
#include "monitor.h"

#include <stdio.h>
#include <string.h>

#include "../vm/abi.h"

static const char *const guard_names[] = {
    [0] = "none",
    [STVM_GUARD_MADVISE] = "madvise",
    [STVM_GUARD_MPROTECT] = "mprotect",
    [STVM_GUARD_CANARY] = "canary",
};

const char *stvm__waiting_on(const stvm_proc *p, const void **object)
{
    const stvm_list *l = p->my_list;
    *object = NULL;
    if (!l)
        return NULL;
    switch (l->kind) {
    case STVM_LIST_SEMAPHORE:
        *object = STVM_CONTAINER(l, stvm_semaphore, list);
        return p->wait_label ? p->wait_label : "semaphore";
    case STVM_LIST_MUTEX:
        *object = STVM_CONTAINER(l, stvm_mutex, list);
        return p->wait_label ? p->wait_label : "mutex";
    case STVM_LIST_MONITOR:
        *object = STVM_CONTAINER(l, stvm_mutex, list);   /* its entry: the monitor's address */
        return p->wait_label ? p->wait_label : "monitor";
    case STVM_LIST_MONITOR_QUEUE:
        *object = STVM_CONTAINER(l, stvm_monitor_queue, list)->monitor;
        return p->wait_label ? p->wait_label : "monitor condition";
    case STVM_LIST_JOIN:
        *object = STVM_CONTAINER(l, stvm_process, joiners);
        return "process";
    default:
        return NULL;   /* a run queue: ready, not waiting */
    }
}

static stvm_process_state state_of(stvm_vm *vm, const stvm_proc *p)
{
    if (!p)
        return STVM_PROCESS_TERMINATED;
    if (p == vm->active)
        return STVM_PROCESS_ACTIVE;
    if (!p->my_list)
        return STVM_PROCESS_SUSPENDED;
    return p->my_list->kind == STVM_LIST_RUNQ ? STVM_PROCESS_READY : STVM_PROCESS_WAITING;
}

int stvm_process_get_info_(stvm_vm *vm, const stvm_process *h, stvm_process_info *out,
                           size_t out_size)
{
    if (!vm || !stvm__is_proc(vm, h) || !out)
        return STVM_EINVAL;
    int err = stvm__struct_size_check(STVM__STRUCT_PROCESS_INFO, out_size);
    if (err)
        return err;
    stvm_process_info info;
    memset(&info, 0, sizeof info);
    const stvm_proc *p = h->core;
    info.name = h->name;
    info.id = h->id;
    info.vm_own = (h->flags & STVM_PF_VM_OWN) != 0;
    info.held = (h->flags & STVM_PF_HELD) && !info.vm_own;
    info.priority = p ? p->priority : h->priority;
    info.state = state_of(vm, p);
    info.terminating = !p;   /* a finished process stays terminating, as in Pharo */
    if (p) {
        info.terminating = (p->flags & STVM_PF_TERMINATING) != 0;
        info.stack_guard = guard_names[p->guard];
        info.waiting_on = stvm__waiting_on(p, &info.waiting_object);
    }
    memcpy(out, &info, out_size);
    return STVM_OK;
}

/* One line per unfinished user process that is not runnable, written straight into
 * buf so that a long name costs room, never a line. */
int stvm_vm_blocked_report(stvm_vm *vm, char *buf, size_t size)
{
    if (!vm || (!buf && size))
        return STVM_EINVAL;
    size_t len = 0;
    if (size)
        buf[0] = 0;
    for (stvm_proc *p = vm->all; p; p = p->all_next) {
        stvm_process_state st = state_of(vm, p);
        if ((p->flags & STVM_PF_VM_OWN) || st == STVM_PROCESS_READY || st == STVM_PROCESS_ACTIVE)
            continue;
        const void *object;
        const char *on = stvm__waiting_on(p, &object);
        char *at = len < size ? buf + len : NULL;
        size_t room = len < size ? size - len : 0;
        int n = on ? snprintf(at, room, "'%s' (priority %d) waits on %s %p\n", p->handle->name,
                              p->priority, on, object)
                   : snprintf(at, room, "'%s' (priority %d) is suspended\n", p->handle->name,
                              p->priority);
        if (n > 0)
            len += (size_t)n;
    }
    return len > (size_t)INT32_MAX ? INT32_MAX : (int)len;
}
