/* Semaphores with Pharo's semantics: FIFO waiters, excess signals counted. */
#include <stdlib.h>

#include "../vm/objmem.h"
#include "sched.h"
#include "timer.h"

void stvm__sem_init(stvm_vm *vm, stvm_semaphore *s)
{
    s->hdr.class_index = STVM_CLASS_SEMAPHORE;
    s->list.kind = STVM_LIST_SEMAPHORE;
    s->vm = vm;
}

/* Take the first waiter off s, or count an excess signal (NULL). */
static inline stvm_proc *signal_take(stvm_vm *vm, stvm_semaphore *s)
{
    vm->stats.semaphore_signals++;
    stvm_proc *p = stvm__list_pop(&s->list);
    if (p)
        stvm__wait_handed(p, &s->list);
    else
        s->excess_signals++;
    return p;
}

/* While recording, a signal goes this way: out of line and reached by a tail call, so
 * that the untraced path keeps no value across a call and needs no stack frame (the
 * event points cost 56 instructions per Delay with the call inside, about half that
 * without). It records the signaller (0: the embedding thread) and whom it woke, or the
 * excess signals after it. */
static __attribute__((noinline, cold)) void signal_traced(stvm_vm *vm, stvm_semaphore *s,
                                                         bool may_switch)
{
    stvm_proc *p = signal_take(vm, s);
    uint64_t by = stvm__trace_active(vm);
    if (p)
        stvm__trace_emit(vm, STVM_TRACE_SEM_SIGNAL, by, (uintptr_t)s, (int64_t)p->id, 0, 0);
    else
        stvm__trace_emit(vm, STVM_TRACE_SEM_EXCESS, by, (uintptr_t)s, s->excess_signals, 0, 0);
    if (p && may_switch)
        stvm__resume(vm, p);
    else if (p)
        stvm__make_ready(vm, p);
}

void stvm__sem_signal(stvm_vm *vm, stvm_semaphore *s)
{
    if (stvm__tracing(vm)) {
        signal_traced(vm, s, true);
        return;
    }
    stvm_proc *p = signal_take(vm, s);
    if (p)
        stvm__resume(vm, p);
}

void stvm__sem_signal_noswitch(stvm_vm *vm, stvm_semaphore *s)
{
    if (stvm__tracing(vm)) {
        signal_traced(vm, s, false);
        return;
    }
    stvm_proc *p = signal_take(vm, s);
    if (p)
        stvm__make_ready(vm, p);
}

void stvm__sem_give_back(stvm_vm *vm, stvm_semaphore *s)
{
    vm->stats.semaphore_signals--;   /* counted again by the signal that hands it on */
    stvm__sem_signal_noswitch(vm, s);
}

bool stvm__sem_wait_for(stvm_vm *vm, stvm_semaphore *s, stvm_proc *p)
{
    bool took = s->excess_signals > 0;
    vm->stats.semaphore_waits++;
    if (stvm__tracing(vm))
        stvm__trace_emit(vm, STVM_TRACE_SEM_WAIT, p->id, (uintptr_t)s, !took, 0, 0);
    if (!took) {
        stvm__list_append(&s->list, p);
        return false;
    }
    s->excess_signals--;
    stvm__wait_handed(p, &s->list);   /* its own once it runs; given back if it never does */
    return true;
}

bool stvm__sem_try(stvm_vm *vm, stvm_semaphore *s)
{
    if (s->excess_signals <= 0)
        return false;
    vm->stats.semaphore_waits++;
    s->excess_signals--;
    return true;
}

/* A wait while recording (see signal_traced). */
static __attribute__((noinline, cold)) int wait_traced(stvm_vm *vm, stvm_semaphore *s)
{
    bool took = stvm__sem_try(vm, s);
    stvm__trace_emit(vm, STVM_TRACE_SEM_WAIT, vm->active->id, (uintptr_t)s, !took, 0, 0);
    if (took)
        return STVM_OK;
    vm->stats.semaphore_waits++;
    return stvm__wait(vm, &s->list);
}

int stvm__sem_wait(stvm_vm *vm, stvm_semaphore *s)
{
    if (stvm__tracing(vm))
        return wait_traced(vm, s);
    if (stvm__sem_try(vm, s))
        return STVM_OK;
    vm->stats.semaphore_waits++;
    return stvm__wait(vm, &s->list);
}

int stvm_semaphore_new(stvm_vm *vm, stvm_semaphore **out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    stvm_semaphore *s = stvm__objmem_alloc(vm, STVM_CLASS_SEMAPHORE, sizeof *s);
    if (!s)
        return STVM_ENOMEM;
    stvm__sem_init(vm, s);
    *out = s;
    return STVM_OK;
}

int stvm_semaphore_free(stvm_vm *vm, stvm_semaphore *s)
{
    if (!vm || !stvm__is_sem(vm, s))
        return STVM_EINVAL;
    if (!stvm__list_idle(&s->list) || s->external_index || stvm__timer_uses(vm, s))
        return STVM_EINUSE;
    stvm__objmem_free(vm, s);
    return STVM_OK;
}

int stvm_semaphore_signal(stvm_vm *vm, stvm_semaphore *s)
{
    if (!vm || !stvm__is_sem(vm, s))
        return STVM_EINVAL;
    stvm__sem_signal(vm, s);
    return STVM_OK;
}

int stvm_semaphore_wait(stvm_vm *vm, stvm_semaphore *s)
{
    if (!vm || !stvm__is_sem(vm, s))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    return stvm__sem_wait(vm, s);
}

int stvm_semaphore_try_wait(stvm_vm *vm, stvm_semaphore *s)
{
    if (!vm || !stvm__is_sem(vm, s))
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    return stvm__sem_try(vm, s) ? STVM_OK : STVM_EAGAIN;
}

int64_t stvm_semaphore_excess(stvm_vm *vm, const stvm_semaphore *s)
{
    if (!vm || !stvm__is_sem(vm, s))
        return STVM_EINVAL;
    return s->excess_signals;
}

static void critical_exit(stvm_vm *vm, void *sem)
{
    stvm_semaphore *s = sem;
    s->list.pins--;
    stvm__sem_signal(vm, s);
}

/* Pharo's Semaphore>>critical:. Terminated while it waits to enter, the process takes
 * nothing (wait.c: a signal it was handed and never ran to see goes back); terminated
 * inside fn, the cleanup below signals on its way out. */
int stvm_semaphore_critical(stvm_vm *vm, stvm_semaphore *s, stvm_fn fn, void *arg)
{
    if (!vm || !stvm__is_sem(vm, s) || !fn)
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    int err = stvm__sem_wait(vm, s);
    if (err)
        return err;
    stvm_proc *a = vm->active;
    /* Pinned until the exit signal, so that stvm_semaphore_free refuses it meanwhile
     * (the signal would go to freed memory). */
    stvm__list_pin(&s->list);
    stvm_ensure_node exit = {.fn = critical_exit, .arg = s, .next = a->ensures, .on_stack = true};
    a->ensures = &exit;
    fn(vm, arg);
    stvm__ensure_unlink(a, &exit);   /* cleanups fn left registered stay */
    critical_exit(vm, s);
    return STVM_OK;
}
