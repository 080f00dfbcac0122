/* The external semaphore table (see vm.h). Draining it is the scheduler's job. */
#ifndef STVM_VM_EXTERNAL_H
#define STVM_VM_EXTERNAL_H

#include "vm.h"

int stvm__external_init(stvm_vm *vm);     /* ENOMEM, ESYS */
void stvm__external_destroy(stvm_vm *vm);

/* Wake the VM thread if it sleeps (async-signal-safe). */
void stvm__external_wake(stvm_vm *vm);

#endif
