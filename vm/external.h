/*
 * Requesting a signal through the external semaphore table (its struct is in vm.h; its
 * set-up, drain and public calls are in scheduler/external.c). Every path that turns
 * an outside event into a semaphore signal (another thread, a signal handler, a ready
 * descriptor) goes through here, so N requests are always N signals.
 */
#ifndef STVM_VM_EXTERNAL_H
#define STVM_VM_EXTERNAL_H

#include "vm.h"

/* Record one request for slot index (1-based, in range). Lock-free and
 * async-signal-safe; the VM turns it into a signal at its next scheduling point. */
static inline void stvm__external_request(stvm_vm *vm, int index)
{
    atomic_fetch_add(&vm->ext.requests[index - 1], 1);
    atomic_store(&vm->ext.pending, 1);
}

#endif
