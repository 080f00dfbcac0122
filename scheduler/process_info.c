/* Looking at processes: stvm_process_get_info and the blocked report. */
#include "monitor.h"
#include "shared_queue.h"

#include <stdarg.h>
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
    info.cpu_ns = p ? stvm__cpu_of(vm, p) : h->cpu_ns;
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

/* The report, written straight into the caller's buffer: each piece is sized on its
 * own, so that a long name costs room, never a line, and the length is what the whole
 * report needs (like snprintf). */
typedef struct report {
    char *buf;
    size_t size, len;
} report;

static __attribute__((format(printf, 2, 3))) void put(report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(r->len < r->size ? r->buf + r->len : NULL,
                      r->len < r->size ? r->size - r->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        r->len += (size_t)n;
}

static const char *name_of_proc(const stvm_proc *p)
{
    return p->handle->name;
}

/* "KIND 'NAME' 0x...": the object a wait is on, as the program holds it (a join's by
 * the joined process's name). */
static void put_object(report *r, stvm_vm *vm, const wait_info *w)
{
    put(r, "%s", kind_text(w->kind));
    if (w->kind == STVM_WAIT_ON_FD)
        put(r, " %d", w->fd);
    if (!w->handle)
        return;
    const char *name = w->kind == STVM_WAIT_ON_JOIN
                           ? ((const stvm_process *)w->handle)->name
                           : stvm__name_of(vm, w->handle);
    if (name)
        put(r, " '%s'", name);
    put(r, " %p", w->handle);
}

/* Who must act before a wait can end, when one process is that: a mutex's or a
 * monitor's owner, the process a join waits for. */
static const stvm_proc *holder_of(const wait_info *w)
{
    switch (w->kind) {
    case STVM_WAIT_ON_MUTEX:
    case STVM_WAIT_ON_MONITOR:
        return ((const stvm_mutex *)w->handle)->owner;
    case STVM_WAIT_ON_JOIN:
        return ((const stvm_process *)w->handle)->core;
    default:
        return NULL;
    }
}

/* Why a wait nobody holds cannot end, when nothing can run: what would have to signal,
 * put or take is a process, and none can run, or a thread the object is not
 * registered for. */
static void put_dead_end(report *r, const wait_info *w, bool stuck)
{
    switch (w->kind) {
    case STVM_WAIT_ON_SEMAPHORE: {
        const stvm_semaphore *s = w->handle;
        if (s->external_index)
            put(r, ", registered as external slot %d (another thread may signal it)",
                s->external_index);
        else if (stuck)
            put(r, ", which no process or registered thread can signal");
        break;
    }
    case STVM_WAIT_ON_QUEUE_ITEM:
        if (((const stvm_queue *)w->handle)->external)
            put(r, ", open to other threads (one may put into it)");
        else if (stuck)
            put(r, ", into which no process or registered thread can put");
        break;
    case STVM_WAIT_ON_QUEUE_ROOM:
        if (stuck)
            put(r, ", from which no process can take");
        break;
    case STVM_WAIT_ON_MONITOR_CONDITION:
        if (stuck)
            put(r, ", which no process can signal");
        break;
    default:
        break;
    }
}

/* The longest chain of owners a line follows; a longer one ends in "...". Bounded, so
 * that a report stays linear in the number of processes whatever their chains. */
#define CHAIN_MAX 16

/* After "'p' waits on OBJECT": the processes that hold what p waits for, one after the
 * other ("owned by 'meteo', which waits on monitor 'log' 0x..., owned by 'busmgr', which
 * ..."), to a process that can run, one that is suspended, a wait nobody holds, or a
 * process already on the chain: a cycle, whose members are named in order. */
static void put_chain(report *r, stvm_vm *vm, const stvm_proc *p, wait_info w, bool stuck)
{
    const stvm_proc *chain[CHAIN_MAX + 1];
    int n = 0;
    chain[n++] = p;
    for (;;) {
        const stvm_proc *o = holder_of(&w);
        if (!o) {
            put_dead_end(r, &w, stuck);
            return;
        }
        if (w.kind != STVM_WAIT_ON_JOIN)
            put(r, ", owned by '%s'", name_of_proc(o));
        for (int i = 0; i < n; i++) {
            if (chain[i] != o)
                continue;
            put(r, ": a deadlock cycle (");
            for (int k = i; k < n; k++)
                put(r, "'%s' -> ", name_of_proc(chain[k]));
            put(r, "'%s')", name_of_proc(o));
            return;
        }
        if (n > CHAIN_MAX) {
            put(r, ", ...");
            return;
        }
        chain[n++] = o;
        stvm_process_state st = state_of(vm, o);
        if (st == STVM_PROCESS_ACTIVE || st == STVM_PROCESS_READY) {
            put(r, st == STVM_PROCESS_ACTIVE ? ", which is running" : ", which can run");
            return;
        }
        w = wait_of(o);
        if (w.kind == STVM_WAIT_ON_NOTHING) {
            put(r, ", which is suspended");
            return;
        }
        put(r, ", which waits on ");
        put_object(r, vm, &w);
    }
}

/* One line per unfinished user process that is not runnable, oldest first, as the
 * listing (vm->all holds the newest first). */
int stvm_vm_blocked_report(stvm_vm *vm, char *buf, size_t size)
{
    if (!vm || (!buf && size))
        return STVM_EINVAL;
    report r = {buf, size, 0};
    if (size)
        buf[0] = 0;
    bool stuck = stvm__nothing_can_run(vm);
    stvm_proc *last = vm->all;
    while (last && last->all_next)
        last = last->all_next;
    for (stvm_proc *p = last; p; p = p->all_prev) {
        stvm_process_state st = state_of(vm, p);
        if ((p->flags & STVM_PF_VM_OWN) || st == STVM_PROCESS_READY || st == STVM_PROCESS_ACTIVE)
            continue;
        wait_info w = wait_of(p);
        if (w.kind == STVM_WAIT_ON_NOTHING) {
            put(&r, "'%s' (priority %d) is suspended\n", name_of_proc(p), p->priority);
            continue;
        }
        put(&r, "'%s' (priority %d) waits on ", name_of_proc(p), p->priority);
        put_object(&r, vm, &w);
        put_chain(&r, vm, p, w, stuck);
        put(&r, "\n");
    }
    return r.len > (size_t)INT32_MAX ? INT32_MAX : (int)r.len;
}
