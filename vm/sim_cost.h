/*
 * The simulated clock's modelled cost per scheduler operation (stvm_sim_set_cost): the
 * event points that have a cost move the clock on by it, so that a lesson's events fall
 * at distinct simulated times.
 */
#ifndef STVM_VM_SIM_COST_H
#define STVM_VM_SIM_COST_H

#include "vm.h"

/* Is any cost set? */
bool stvm__sim_costs_set(const stvm_vm *vm);

/* The event of kind `kind` (a stvm_trace_kind; a SWITCH's process and object are the
 * two processes, 0 for the embedding thread) happened: move the simulated clock on by
 * its operation's cost, running the outside events due meanwhile. Nothing when it has
 * no cost, or while a charge runs (an outside event's own events are free). Never
 * allocates itself; never switches. */
void stvm__sim_charge(stvm_vm *vm, int kind, uint64_t process, uint64_t object);

#endif
