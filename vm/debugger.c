/* The list of live VMs that debuggers read (debugger.h). */
#include "debugger.h"

#include <pthread.h>

uintptr_t stvm__debug_vms = ~(uintptr_t)0;   /* no VM */
static pthread_mutex_t debug_lock = PTHREAD_MUTEX_INITIALIZER;

/* The head is kept complemented (debugger.h says why): these two are its only readers. */
static stvm_vm *head(void)
{
    return (stvm_vm *)~stvm__debug_vms;
}

static void set_head(stvm_vm *vm)
{
    stvm__debug_vms = ~(uintptr_t)vm;
}

/* The links are written in an order that leaves the list walkable from its head at
 * every instruction, for a debugger that stops the program between two of them. */
void stvm__debug_register(stvm_vm *vm)
{
    pthread_mutex_lock(&debug_lock);
    vm->debug_prev = NULL;
    vm->debug_next = head();
    if (vm->debug_next)
        vm->debug_next->debug_prev = vm;
    set_head(vm);
    vm->debug_listed = true;
    pthread_mutex_unlock(&debug_lock);
}

void stvm__debug_unregister(stvm_vm *vm)
{
    pthread_mutex_lock(&debug_lock);
    if (vm->debug_listed) {
        if (vm->debug_prev)
            vm->debug_prev->debug_next = vm->debug_next;
        else
            set_head(vm->debug_next);
        if (vm->debug_next)
            vm->debug_next->debug_prev = vm->debug_prev;
        vm->debug_listed = false;
    }
    pthread_mutex_unlock(&debug_lock);
}
