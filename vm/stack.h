/*
 * Stack memory for processes: arenas of equal slots, each a guard region below a
 * stack. Not the switch (scheduler/context.c) and not what lives on a stack.
 */
#ifndef STVM_VM_STACK_H
#define STVM_VM_STACK_H

#include "vm.h"

/* A stack handed out by the allocator: [lo, lo + size), the top STVM_PROC_AREA
 * bytes reserved for the process's records. */
typedef struct stvm_stack {
    unsigned char *lo;
    size_t size;
    uint8_t guard;                  /* STVM_GUARD_MADVISE/_MPROTECT/_CANARY, 0 = none */
} stvm_stack;

/* Per VM, from its configuration. Never fails (nothing is mapped until needed). */
void stvm__stackmem_init(stvm_vm *vm);
/* Unmap every arena, also those of stacks still in use. */
void stvm__stackmem_destroy(stvm_vm *vm);

/* A stack of size bytes (a page multiple): a recently freed one of that size if there
 * is one, else a slot never used before (which gets its guard then). It may hold what
 * an earlier process left, except that a canary stack's lowest bytes read as zero
 * (a process that wrote there was stopped as an overflow). ENOMEM when the arena
 * cannot be mapped. */
int stvm__stack_alloc(stvm_vm *vm, size_t size, stvm_stack *out);
/* Give a stack back. Up to a bound the freed stacks keep their pages for the next
 * process; beyond it their memory goes back to the kernel (the address space stays,
 * for the next burst, until stvm__stackmem_destroy). */
void stvm__stack_free(stvm_vm *vm, const stvm_stack *s);

/* The handed-out slot holding addr: its stack in *out and whether addr lies in its
 * guard region. false if addr is in no slot of this VM. Async-signal-safe. */
bool stvm__stack_find(const stvm_vm *vm, uintptr_t addr, stvm_stack *out, bool *in_guard);

/* A canary stack is intact while its lowest bytes are still zero (they are never
 * written, so checking them does not make the page resident) and sp lies above them. */
bool stvm__stack_canary_ok(const unsigned char *lo, const void *sp);

#endif
