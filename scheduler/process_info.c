/* Looking at processes: stvm_process_get_info and the blocked report. */
#include "monitor.h"
#include "shared_queue.h"

#include <stdio.h>
#include <string.h>

#include "../vm/abi.h"
#include "../vm/names.h"

static const char *const guard_names[] = {
    [0] = "none",
    [STVM_GUARD_MADVISE] = "madvise",
    [STVM_GUARD_MPROTECT] = "mprotect",
    [STVM_GUARD_CANARY] = "canary",
};

/* The text stvm_process_info.waiting_on has always given. */
const char *stvm__waiting_on(const stvm_proc *p, const void **object)
{
    static const char *const label[] = {
        [STVM_WL_DELAY] = "delay", [STVM_WL_QUEUE] = "queue", [STVM_WL_TIMED] = "timed wait"};
    const stvm_list *l = p->my_list;
    const char *why = p->wait_label ? label[p->wait_label] : NULL;
    *object = NULL;
    if (!l)
        return NULL;
    switch (l->kind) {
    case STVM_LIST_SEMAPHORE:
        *object = STVM_CONTAINER(l, stvm_semaphore, list);
        return why ? why : "semaphore";
    case STVM_LIST_MUTEX:
        *object = STVM_CONTAINER(l, stvm_mutex, list);
        return why ? why : "mutex";
    case STVM_LIST_MONITOR:
        *object = STVM_CONTAINER(l, stvm_mutex, list);   /* its entry: the monitor's address */
        return why ? why : "monitor";
    case STVM_LIST_MONITOR_QUEUE:
        *object = STVM_CONTAINER(l, stvm_monitor_queue, list)->monitor;
        return why ? why : "monitor condition";
    case STVM_LIST_JOIN:
        *object = STVM_CONTAINER(l, stvm_process, joiners);
        return "process";
    default:
        return NULL;   /* a run queue: ready, not waiting */
    }
}

/* What p waits on, as its program sees it: the kind, the handle it holds (a queue's,
 * not its internal semaphore's) and a descriptor. Read from the list p is on, and from
 * what the waits that go through a semaphore of their own left in its record. */
typedef struct wait_info {
    int kind;
    int fd;
    const void *handle;
} wait_info;

static wait_info wait_of(const stvm_proc *p)
{
    wait_info w = {STVM_WAIT_ON_NOTHING, -1, NULL};
    const stvm_list *l = p->my_list;
    if (!l || l->kind == STVM_LIST_RUNQ)
        return w;
    if (p->wait_on_kind) {   /* a socket, a descriptor, a Delay object, a callout */
        w.kind = p->wait_on_kind;
        w.handle = p->wait_on;
        w.fd = w.kind == STVM_WAIT_ON_FD ? p->wait_fd : -1;
        return w;
    }
    switch (l->kind) {
    case STVM_LIST_SEMAPHORE: {
        const stvm_semaphore *s = STVM_CONTAINER(l, stvm_semaphore, list);
        if (s->role == STVM_SEM_QUEUE_ITEMS) {
            w.kind = STVM_WAIT_ON_QUEUE_ITEM;
            w.handle = STVM_CONTAINER(s, stvm_queue, avail);
        } else if (s->role == STVM_SEM_QUEUE_ROOM) {
            w.kind = STVM_WAIT_ON_QUEUE_ROOM;
            w.handle = STVM_CONTAINER(s, stvm_queue, room);
        } else if (p->wait_label == STVM_WL_DELAY) {
            w.kind = STVM_WAIT_ON_DELAY;   /* stvm_delay_wait_ms's own Delay: none to show */
        } else {
            w.kind = STVM_WAIT_ON_SEMAPHORE;
            w.handle = s;
        }
        break;
    }
    case STVM_LIST_MUTEX:
        w.kind = STVM_WAIT_ON_MUTEX;
        w.handle = STVM_CONTAINER(l, stvm_mutex, list);
        break;
    case STVM_LIST_MONITOR:
        w.kind = STVM_WAIT_ON_MONITOR;
        w.handle = STVM_CONTAINER(l, stvm_monitor, lock.list);
        break;
    case STVM_LIST_MONITOR_QUEUE:
        w.kind = STVM_WAIT_ON_MONITOR_CONDITION;
        w.handle = STVM_CONTAINER(l, stvm_monitor_queue, list)->monitor;
        break;
    case STVM_LIST_JOIN:
        w.kind = STVM_WAIT_ON_JOIN;
        w.handle = STVM_CONTAINER(l, stvm_process, joiners);
        break;
    default:
        break;
    }
    return w;
}

/* The report's word for a kind. */
static const char *kind_text(int kind)
{
    static const char *const text[STVM_WAIT_ON_KINDS] = {
        [STVM_WAIT_ON_NOTHING] = "nothing",
        [STVM_WAIT_ON_SEMAPHORE] = "semaphore",
        [STVM_WAIT_ON_MUTEX] = "mutex",
        [STVM_WAIT_ON_MONITOR] = "monitor",
        [STVM_WAIT_ON_MONITOR_CONDITION] = "monitor condition",
        [STVM_WAIT_ON_QUEUE_ITEM] = "queue item",
        [STVM_WAIT_ON_QUEUE_ROOM] = "queue room",
        [STVM_WAIT_ON_DELAY] = "delay",
        [STVM_WAIT_ON_SOCKET_READ] = "socket read",
        [STVM_WAIT_ON_SOCKET_WRITE] = "socket write",
        [STVM_WAIT_ON_SOCKET_ACCEPT] = "socket accept",
        [STVM_WAIT_ON_SOCKET_CONNECT] = "socket connect",
        [STVM_WAIT_ON_FD] = "fd",
        [STVM_WAIT_ON_JOIN] = "join",
        [STVM_WAIT_ON_CALLOUT] = "callout",
    };
    return kind >= 0 && kind < STVM_WAIT_ON_KINDS ? text[kind] : "?";
}

const char *stvm__list_object_text(const stvm_vm *vm, const stvm_list *l, char *buf,
                                   size_t size)
{
    const void *h = NULL;
    const char *what = "list", *of = "";
    switch (l->kind) {
    case STVM_LIST_SEMAPHORE: {
        const stvm_semaphore *s = STVM_CONTAINER(l, stvm_semaphore, list);
        h = s;
        what = "semaphore";
        if (s->role == STVM_SEM_QUEUE_ITEMS || s->role == STVM_SEM_QUEUE_ROOM) {
            h = s->role == STVM_SEM_QUEUE_ITEMS ? (const void *)STVM_CONTAINER(s, stvm_queue, avail)
                                                : (const void *)STVM_CONTAINER(s, stvm_queue, room);
            of = s->role == STVM_SEM_QUEUE_ITEMS ? "the item semaphore of " : "the room semaphore of ";
            what = "queue";
        }
        break;
    }
    case STVM_LIST_MUTEX:
        h = STVM_CONTAINER(l, stvm_mutex, list);
        what = "mutex";
        break;
    case STVM_LIST_MONITOR:
        h = STVM_CONTAINER(l, stvm_monitor, lock.list);
        what = "monitor";
        break;
    case STVM_LIST_MONITOR_QUEUE:
        h = STVM_CONTAINER(l, stvm_monitor_queue, list)->monitor;
        of = "a condition queue of ";
        what = "monitor";
        break;
    case STVM_LIST_JOIN:
        h = STVM_CONTAINER(l, stvm_process, joiners);
        of = "the joiners of ";
        what = "process";
        break;
    default:
        break;
    }
    const char *name = h ? stvm__name_of(vm, h) : NULL;
    snprintf(buf, size, "%s%s%s%s%s %p", of, what, name ? " '" : "", name ? name : "",
             name ? "'" : "", h ? h : (const void *)l);
    return buf;
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
    info.wait_kind = STVM_WAIT_ON_NOTHING;
    info.wait_fd = -1;
    if (p) {
        info.terminating = (p->flags & STVM_PF_TERMINATING) != 0;
        info.stack_guard = guard_names[p->guard];
        info.waiting_on = stvm__waiting_on(p, &info.waiting_object);
        wait_info w = wait_of(p);
        if (w.kind != STVM_WAIT_ON_NOTHING) {
            info.wait_kind = w.kind;
            info.wait_fd = w.fd;
            info.wait_handle = w.handle;
            info.wait_name = w.handle ? stvm__name_of(vm, w.handle) : NULL;
            info.wait_since_us = p->wait_since_us;
        }
    }
    memcpy(out, &info, out_size);
    return STVM_OK;
}

int stvm_vm_processes(stvm_vm *vm, stvm_process **out, size_t cap, size_t *count)
{
    if (!vm || !count || (!out && cap))
        return STVM_EINVAL;
    if (vm->active && !stvm__in_process(vm))
        return STVM_ENOTPROC;
    /* vm->all holds the newest first: from its end, oldest first. */
    stvm_proc *last = vm->all;
    while (last && last->all_next)
        last = last->all_next;
    size_t n = 0;
    for (stvm_proc *p = last; p; p = p->all_prev, n++)
        if (n < cap)
            out[n] = p->handle;
    *count = n;
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
        wait_info w = wait_of(p);
        const char *name = w.handle ? stvm__name_of(vm, w.handle) : NULL;
        char fd[24] = "";
        if (w.kind == STVM_WAIT_ON_FD)
            snprintf(fd, sizeof fd, " %d", w.fd);
        char *at = len < size ? buf + len : NULL;
        size_t room = len < size ? size - len : 0;
        int n = w.kind == STVM_WAIT_ON_NOTHING
                    ? snprintf(at, room, "'%s' (priority %d) is suspended\n", p->handle->name,
                               p->priority)
                    : snprintf(at, room, "'%s' (priority %d) waits on %s%s", p->handle->name,
                               p->priority, kind_text(w.kind), fd);
        if (n > 0)
            len += (size_t)n;
        if (w.kind == STVM_WAIT_ON_NOTHING)
            continue;
        at = len < size ? buf + len : NULL;
        room = len < size ? size - len : 0;
        n = w.handle ? snprintf(at, room, "%s%s%s %p\n", name ? " '" : "", name ? name : "",
                                name ? "'" : "", w.handle)
                     : snprintf(at, room, "\n");
        if (n > 0)
            len += (size_t)n;
    }
    return len > (size_t)INT32_MAX ? INT32_MAX : (int)len;
}
