/* Pharo's SharedQueue. (Being written: only the wait rule's hook so far.) */
#include "shared_queue.h"

void stvm__queue_give_back(stvm_vm *vm, stvm_list *l, stvm_proc *p)
{
    (void)vm, (void)l, (void)p;
}
