/*
 * The external semaphore table's request side: what the bottom layer does with the
 * table is record requests, from any thread, lock-free (its struct is in vm.h with the
 * VM's other state; its slots, drain and public calls are in
 * scheduler/external_drain.c). Every path that turns an outside event into a semaphore
 * signal (another thread, a signal handler, a ready descriptor) goes through here, so N
 * requests are always N signals.
 */
#ifndef STVM_VM_EXTERNAL_REQUESTS_H
#define STVM_VM_EXTERNAL_REQUESTS_H

#include "vm.h"

/* The chunk holding slot i (0-based), or NULL while none of its slots was registered. */
static inline stvm_ext_chunk *stvm__external_chunk(const stvm_vm *vm, int i)
{
    return atomic_load_explicit(&vm->ext.chunks[i / STVM_EXT_CHUNK_SLOTS],
                                memory_order_acquire);
}

/* Record one request for slot index (1-based, in range). Lock-free and
 * async-signal-safe; the VM turns it into a signal at its next scheduling point. A
 * slot whose chunk was never made was never registered: registering forgets earlier
 * requests, so such a request is dropped here rather than counted. */
static inline void stvm__external_request(stvm_vm *vm, int index)
{
    int i = index - 1;
    stvm_ext_chunk *c = stvm__external_chunk(vm, i);
    if (!c)
        return;
    int j = i % STVM_EXT_CHUNK_SLOTS, word = i / 64;
    atomic_fetch_add(&c->requests[j], 1);
    atomic_fetch_or(&c->pending[j / 64], 1ull << (j % 64));
    atomic_fetch_or(&vm->ext.summary[word / 64], 1ull << (word % 64));
    atomic_store(&vm->ext.pending, 1);
}

/* The semaphore registered at index (1-based), or NULL (out of range, free slot). VM
 * thread only. */
static inline stvm_semaphore *stvm__external_sem(const stvm_vm *vm, int index)
{
    if (index < 1 || index > vm->ext.size)
        return NULL;
    stvm_ext_chunk *c = stvm__external_chunk(vm, index - 1);
    return c ? c->sems[(index - 1) % STVM_EXT_CHUNK_SLOTS] : NULL;
}

#endif
