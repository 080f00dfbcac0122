/*
 * Pharo's SharedQueue (shared_queue.c): the scheduler's interface to it.
 */
#ifndef STVM_SCHEDULER_SHARED_QUEUE_H
#define STVM_SCHEDULER_SHARED_QUEUE_H

#include "sched.h"

/* p, handed an item (l: the readers) or room (l: the writers) of a queue, is terminated
 * or interrupted before it runs: the item or the room goes back to the queue. */
void stvm__queue_give_back(stvm_vm *vm, stvm_list *l, stvm_proc *p);

#endif
