/* Pharo's Monitor. (Being written: only the wait rule's hook so far.) */
#include "monitor.h"

void stvm__monitor_give_back(stvm_vm *vm, stvm_list *l, stvm_proc *p)
{
    (void)vm, (void)l, (void)p;
}
