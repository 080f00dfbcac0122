/* Semaphores with Pharo's semantics: FIFO waiters, excess signals counted. */
#include <stdlib.h>

#include "../vm/objmem.h"
#include "sched.h"

void stvm__sem_init(stvm_vm *vm, stvm_semaphore *s)
{
    s->hdr.class_index = STVM_CLASS_SEMAPHORE;
    s->list.kind = STVM_LIST_SEMAPHORE;
    s->vm = vm;
}

void stvm__sem_signal(stvm_vm *vm, stvm_semaphore *s)
{
    vm->stats.semaphore_signals++;
    stvm_proc *p = stvm__list_pop(&s->list);
    if (!p) {
        s->excess_signals++;
        return;
    }
    stvm__resume(vm, p);
}

void stvm__sem_signal_noswitch(stvm_vm *vm, stvm_semaphore *s)
{
    vm->stats.semaphore_signals++;
    stvm_proc *p = stvm__list_pop(&s->list);
    if (!p) {
        s->excess_signals++;
        return;
    }
    stvm__make_ready(vm, p);
}

int stvm__sem_wait(stvm_vm *vm, stvm_semaphore *s)
{
    vm->stats.semaphore_waits++;
    if (s->excess_signals > 0) {
        s->excess_signals--;
        return STVM_OK;
    }
    stvm_proc *a = vm->active;
    a->flags &= ~(uint32_t)STVM_PF_WAIT_ABORTED;
    stvm__list_append(&s->list, a);
    stvm__switch_to_next(vm);
    return (a->flags & STVM_PF_WAIT_ABORTED) ? STVM_ESTATE : STVM_OK;
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
    if (s->list.first || s->external_index || vm->timer_sem == s ||
        vm->delay.timing_sem == s)
        return STVM_ESTATE;
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
    if (!vm->active)
        return STVM_ENOTPROC;
    return stvm__sem_wait(vm, s);
}

int64_t stvm_semaphore_excess(stvm_vm *vm, const stvm_semaphore *s)
{
    if (!vm || !stvm__is_sem(vm, s))
        return STVM_EINVAL;
    return s->excess_signals;
}
