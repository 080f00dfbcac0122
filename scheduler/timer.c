/* The one-shot timer (see timer.h). */
#include "timer.h"

#include "../vm/heartbeat.h"

static inline void arm(stvm_vm *vm, stvm_semaphore *sem, uint64_t deadline_us)
{
    bool armed = sem && deadline_us;
    vm->timer.sem = armed ? sem : NULL;
    vm->timer.deadline_us = armed ? deadline_us : 0;
    vm->timer.keeps_alive = armed;
}

/* While recording, arming goes this way (a tail call: see semaphore.c, signal_traced):
 * ARMED, or DISARMED when an armed timer is cleared. */
static __attribute__((noinline, cold)) void arm_traced(stvm_vm *vm, stvm_semaphore *sem,
                                                      uint64_t deadline_us)
{
    uint64_t by = stvm__trace_active(vm);
    if (sem && deadline_us)
        stvm__trace_emit(vm, STVM_TRACE_TIMER_ARMED, by, (uintptr_t)sem, (int64_t)deadline_us,
                         0, 0);
    else if (vm->timer.deadline_us)
        stvm__trace_emit(vm, STVM_TRACE_TIMER_DISARMED, by, (uintptr_t)vm->timer.sem,
                         (int64_t)vm->timer.deadline_us, 0, 0);
    arm(vm, sem, deadline_us);
}

void stvm__timer_arm(stvm_vm *vm, stvm_semaphore *sem, uint64_t deadline_us)
{
    if (stvm__tracing(vm)) {
        arm_traced(vm, sem, deadline_us);
        return;
    }
    arm(vm, sem, deadline_us);
}

void stvm__timer_keep_alive(stvm_vm *vm, stvm_semaphore *sem, bool keep)
{
    if (vm->timer.sem == sem)
        vm->timer.keeps_alive = keep;
}

uint64_t stvm__timer_deadline(const stvm_vm *vm)
{
    return vm->timer.deadline_us;
}

bool stvm__timer_is_work(const stvm_vm *vm)
{
    return vm->timer.deadline_us && vm->timer.keeps_alive;
}

bool stvm__timer_uses(const stvm_vm *vm, const stvm_semaphore *sem)
{
    return vm->timer.sem == sem;
}

void stvm__timer_fire(stvm_vm *vm)
{
    /* The OpenSmalltalk heartbeat's model: the timer is checked at a beat's interrupt
     * check, against the clock as that beat saw it (vm/heartbeat.h). */
    if (vm->heartbeat && !stvm__heartbeat_saw(vm, vm->timer.deadline_us))
        return;
    stvm_semaphore *s = vm->timer.sem;
    stvm__trace(vm, STVM_TRACE_TIMER_FIRED, stvm__trace_active(vm), (uintptr_t)s,
                (int64_t)vm->timer.deadline_us);
    /* One-shot: cleared before the signal, so the woken code may re-arm it. */
    vm->timer.deadline_us = 0;
    vm->timer.sem = NULL;
    vm->stats.timer_fires++;
    if (s)
        stvm__sem_signal_noswitch(vm, s);
}
