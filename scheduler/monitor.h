/*
 * Pharo's Monitor (monitor.c): the scheduler's interface to it.
 */
#ifndef STVM_SCHEDULER_MONITOR_H
#define STVM_SCHEDULER_MONITOR_H

#include "sched.h"

/* p, woken from l (one of a monitor's condition queues) by a signal, is terminated or
 * interrupted before it runs: the signal goes to the queue's next waiter. */
void stvm__monitor_give_back(stvm_vm *vm, stvm_list *l, stvm_proc *p);

#endif
