/*
 * Mutexes with the VM critical-section semantics (primitives 185-187): an owner,
 * re-entry by the owner, FIFO waiters, and a direct hand-off on exit: the first
 * waiter becomes the owner before it even runs, so no later arrival can barge in.
 * The C API adds a re-entry depth so that enter/exit pairs nest.
 *
 * A monitor's entry is one of these (monitor.c: its list's kind is STVM_LIST_MONITOR, and
 * the mutex is the monitor's first member, so it has the monitor's address). Its events
 * are the monitor's: a wait to enter and a hand-off, nothing for entering or leaving
 * without one.
 */
#include "../vm/objmem.h"
#include "sched.h"

static inline bool is_monitor(const stvm_mutex *m)
{
    return m->list.kind == STVM_LIST_MONITOR;
}

/* One of m's events (STVM_TRACE_MUTEX_*). A monitor's entry shows the monitor's own
 * instead: a wait to enter, and an exit that hands it on; entering and leaving without
 * either are not traced. Looked at only while tracing, so the hot path pays nothing. */
static void trace_event(stvm_vm *vm, int kind, uint64_t process, stvm_mutex *m, int64_t extra)
{
    if (!stvm__tracing(vm))
        return;
    if (!is_monitor(m))
        stvm__trace(vm, kind, process, (uintptr_t)m, extra);
    else if (kind == STVM_TRACE_MUTEX_WAIT)
        stvm__trace(vm, STVM_TRACE_MONITOR_WAIT, process, (uintptr_t)m, STVM_TRACE_MONITOR_ENTRY);
    else if (kind == STVM_TRACE_MUTEX_EXIT && extra)
        stvm__trace_full(vm, STVM_TRACE_MONITOR_SIGNAL, process, (uintptr_t)m, extra,
                         STVM_TRACE_MONITOR_ENTRY, 0);
}

static void add_owned(stvm_proc *p, stvm_mutex *m)
{
    trace_event(p->vm, STVM_TRACE_MUTEX_ENTER, p->id, m, 1);
    m->owner = p;
    m->next_owned = p->owned;
    p->owned = m;
}

static void remove_owned(stvm_proc *p, stvm_mutex *m)
{
    for (stvm_mutex **q = &p->owned; *q; q = &(*q)->next_owned) {
        if (*q == m) {
            *q = m->next_owned;
            break;
        }
    }
    m->next_owned = NULL;
    m->owner = NULL;
}

/* Give m to its first waiter (or nobody). Answers the new owner. */
static stvm_proc *hand_off(stvm_vm *vm, stvm_mutex *m)
{
    stvm_proc *old = m->owner;
    remove_owned(old, m);
    stvm_proc *next = stvm__list_pop(&m->list);
    trace_event(vm, STVM_TRACE_MUTEX_EXIT, old->id, m, next ? (int64_t)next->id : 0);
    if (next) {
        stvm__wait_handed(next, &m->list);
        trace_event(vm, STVM_TRACE_MUTEX_HANDOFF, next->id, m, (int64_t)old->id);
        add_owned(next, m);
        m->depth = 1;
    } else {
        m->depth = 0;
    }
    return next;
}

/* The active process joins m's waiters (as stvm__wait). */
static int wait_for(stvm_vm *vm, stvm_mutex *m)
{
    trace_event(vm, STVM_TRACE_MUTEX_WAIT, vm->active->id, m, (int64_t)m->owner->id);
    return stvm__wait(vm, &m->list);
}

int stvm__mutex_enter_prim(stvm_vm *vm, stvm_mutex *m)
{
    stvm_proc *a = vm->active;
    if (!m->owner) {
        add_owned(a, m);
        m->depth = 1;
        return 0;
    }
    if (m->owner == a)
        return 1;
    return wait_for(vm, m);   /* OK (0): handed to us by the exit */
}

int stvm__mutex_enter(stvm_vm *vm, stvm_mutex *m)
{
    int r = stvm__mutex_try(vm, m);
    if (r != 0)
        return r == 1 ? STVM_OK : r;
    return wait_for(vm, m);   /* OK: handed to us by the exit */
}

bool stvm__mutex_enter_for(stvm_vm *vm, stvm_mutex *m, stvm_proc *p)
{
    if (m->owner) {
        trace_event(vm, STVM_TRACE_MUTEX_WAIT, p->id, m, (int64_t)m->owner->id);
        stvm__list_append(&m->list, p);
        return false;
    }
    stvm__wait_handed(p, &m->list);   /* as a hand-off: given back if p never runs */
    add_owned(p, m);
    m->depth = 1;
    return true;
}

int stvm__mutex_try(stvm_vm *vm, stvm_mutex *m)
{
    stvm_proc *a = vm->active;
    if (!m->owner) {
        add_owned(a, m);
        m->depth = 1;
        return 1;
    }
    if (m->owner != a)
        return 0;
    if (m->depth == UINT32_MAX)
        return STVM_ERANGE;
    m->depth++;
    trace_event(vm, STVM_TRACE_MUTEX_ENTER, a->id, m, m->depth);
    return 1;
}

void stvm__mutex_exit_prim(stvm_vm *vm, stvm_mutex *m)
{
    if (!m->owner)
        return;
    stvm_proc *next = hand_off(vm, m);
    if (next)
        stvm__resume(vm, next);
}

void stvm__mutex_release_all(stvm_vm *vm, stvm_proc *p)
{
    while (p->owned) {
        stvm_proc *next = hand_off(vm, p->owned);
        if (next)
            stvm__make_ready(vm, next);
    }
}

void stvm__mutex_give_back(stvm_vm *vm, stvm_mutex *m, stvm_proc *p)
{
    if (m->owner != p)
        return;
    stvm_proc *next = hand_off(vm, m);
    if (next)
        stvm__make_ready(vm, next);
}

int stvm_mutex_new(stvm_vm *vm, stvm_mutex **out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    stvm_mutex *m = stvm__objmem_alloc(vm, STVM_CLASS_MUTEX, sizeof *m);
    if (!m)
        return STVM_ENOMEM;
    m->list.kind = STVM_LIST_MUTEX;
    m->vm = vm;
    *out = m;
    return STVM_OK;
}

int stvm_mutex_free(stvm_vm *vm, stvm_mutex *m)
{
    if (!vm || !stvm__is_mutex(vm, m))
        return STVM_EINVAL;
    if (m->owner || !stvm__list_idle(&m->list))
        return STVM_EINUSE;
    stvm__objmem_free(vm, m);
    return STVM_OK;
}

int stvm_mutex_enter(stvm_vm *vm, stvm_mutex *m)
{
    if (!vm || !stvm__is_mutex(vm, m))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    return stvm__mutex_enter(vm, m);
}

int stvm_mutex_exit(stvm_vm *vm, stvm_mutex *m)
{
    if (!vm || !stvm__is_mutex(vm, m))
        return STVM_EINVAL;
    if (!stvm__in_process(vm) || m->owner != vm->active)
        return STVM_EPERM;
    if (--m->depth > 0) {
        stvm__trace(vm, STVM_TRACE_MUTEX_EXIT, vm->active->id, (uintptr_t)m,
                    (int64_t)vm->active->id);
        return STVM_OK;
    }
    stvm__mutex_exit_prim(vm, m);
    return STVM_OK;
}

int stvm_mutex_try_enter(stvm_vm *vm, stvm_mutex *m)
{
    if (!vm || !stvm__is_mutex(vm, m))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    int got = stvm__mutex_try(vm, m);
    return got == 1 ? STVM_OK : got == 0 ? STVM_EAGAIN : got;
}

stvm_process *stvm_mutex_owner(stvm_vm *vm, const stvm_mutex *m)
{
    return vm && stvm__is_mutex(vm, m) && m->owner ? m->owner->handle : NULL;
}

int stvm_mutex_critical(stvm_vm *vm, stvm_mutex *m, stvm_fn fn, void *arg)
{
    if (!fn)
        return STVM_EINVAL;
    int err = stvm_mutex_enter(vm, m);
    if (err)
        return err;
    fn(vm, arg);
    return stvm_mutex_exit(vm, m);
}
