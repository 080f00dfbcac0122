/*
 * The simulated clock's outside world (stvm_sim_at): events at simulated times that the
 * VM does not treat as deadlines, and the one routine that moves the simulated clock,
 * running them as it passes them.
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

/* stvm_vm_free: drop what is pending, uncalled. */
void stvm__sim_destroy(stvm_vm *vm);

#endif
