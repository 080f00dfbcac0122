/*
 * The VM's one-shot timer (primitives 136 and 242): one deadline and the semaphore it
 * signals. It answers two questions, as libuv's timers do: "when is the next
 * deadline?" (before the idle process sleeps) and "fire what is due" (at a scheduling
 * point). Nothing outside timer.h and timer.c reads its fields.
 */
#ifndef STVM_SCHEDULER_TIMER_H
#define STVM_SCHEDULER_TIMER_H

#include "sched.h"

/* Arm (sem non-NULL, deadline in VM-clock us) or disarm (sem NULL, or deadline 0,
 * which Pharo's VM also reads as "no timer"). An armed deadline keeps stvm_run waiting
 * for it until stvm__timer_keep_alive says otherwise. */
void stvm__timer_arm(stvm_vm *vm, stvm_semaphore *sem, uint64_t deadline_us);
/* Whether the deadline armed for sem is work that stvm_run should wait for. The Delay
 * scheduler re-arms every second even when no Delay is pending: that alone is not. */
void stvm__timer_keep_alive(stvm_vm *vm, stvm_semaphore *sem, bool keep);
/* The armed deadline, or 0. */
uint64_t stvm__timer_deadline(const stvm_vm *vm);
/* Armed and worth waiting for. */
bool stvm__timer_is_work(const stvm_vm *vm);
/* Is sem the armed timer's semaphore? (it may not be freed then) */
bool stvm__timer_uses(const stvm_vm *vm, const stvm_semaphore *sem);
/* Signal the semaphore (no switch) and disarm. With the OpenSmalltalk heartbeat's
 * model, only once a beat has seen the deadline: until then nothing happens. */
void stvm__timer_fire(stvm_vm *vm);

/* Fire the timer if its deadline is at or before now (the clock as the scheduling
 * point read it: a stale value can only make it fire later, never early). */
static inline void stvm__timer_poll(stvm_vm *vm, uint64_t now)
{
    if (vm->timer.deadline_us && now >= vm->timer.deadline_us)
        stvm__timer_fire(vm);
}

#endif
