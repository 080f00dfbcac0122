/*
 * The simulated clock's outside world (stvm_sim_at): events at simulated times that the
 * VM does not treat as deadlines, and the one routine that moves the simulated clock,
 * running them as it passes them (and the modelled OpenSmalltalk heartbeat's beats,
 * vm/heartbeat.h, when there is one).
 */
#ifndef STVM_VM_SIM_WORLD_H
#define STVM_VM_SIM_WORLD_H

#include "vm.h"

/* The earliest pending outside event's time, or 0 when none is pending. */
static inline uint64_t stvm__sim_next(const stvm_vm *vm)
{
    return vm->outside.n ? vm->outside.events[0].at_us : 0;
}

/* Move the simulated clock forward to `to` (>= now), running every outside event due
 * by then in order, each with the clock at its own time (events they make that fall
 * due by `to` run too). Never allocates itself; the events may. */
void stvm__sim_advance(stvm_vm *vm, uint64_t to);

/* The simulated clock's wake-up cost: after each jump of the idle process (a simulated
 * OS sleep, which ended by `end`, a STVM_TRACE_END_*), fn tells how many us the wake-up
 * takes, and the clock moves on by that much (the outside world acting meanwhile) before
 * the VM looks at anything: the model of a platform whose wake-ups are slow, or, in a
 * replay, of the wake-ups a real run recorded. NULL fn: cfg.wake_inject_us, the real
 * clock's spin, is every wake-up's cost. For the benchmarks, which link the static
 * library; never allocates or switches. */
void stvm__sim_set_wake_cost(stvm_vm *vm, stvm_sim_wake_fn fn, void *arg);

/* stvm_vm_free: drop what is pending, uncalled. */
void stvm__sim_destroy(stvm_vm *vm);

#endif
