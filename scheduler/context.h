/*
 * Stacks and the context switch. Two back ends chosen at build time: a hand-written
 * x86-64 switch (default there) and a portable ucontext one (-DSTVM_CTX_UCONTEXT).
 */
#ifndef STVM_SCHEDULER_CONTEXT_H
#define STVM_SCHEDULER_CONTEXT_H

#include "../vm/vm.h"

#if !defined(STVM_CTX_UCONTEXT) && !defined(__x86_64__)
#define STVM_CTX_UCONTEXT 1
#endif

/* What a new process runs first, with the process as argument (scheduler.c). */
void stvm__process_entry(void *p);

/* Map a stack of stack_size bytes (plus a guard page when configured), place a zeroed
 * running-state record in its top STVM_PROC_AREA bytes and lay out the first frame so
 * that switching to it calls stvm__process_entry(record). ENOMEM when the mapping (or
 * the guard page's mprotect, e.g. past vm.max_map_count) fails. */
int stvm__ctx_prepare(stvm_vm *vm, size_t stack_size, stvm_proc **out);
/* Give p's stack, and with it p itself, back (to the VM's stack cache when it has the
 * default size). p must not be running. */
void stvm__ctx_release(stvm_vm *vm, stvm_proc *p);
/* Unmap the stack cache (stvm_vm_free). */
void stvm__stack_cache_destroy(stvm_vm *vm);

/* Switch from `from` to `to` (NULL = the embedding thread). Returns when something
 * switches back to `from`. A finished `from` never comes back. */
void stvm__ctx_switch(stvm_vm *vm, stvm_proc *from, stvm_proc *to);
/* First thing a new process does on its stack (sanitizer bookkeeping). */
void stvm__ctx_entered(stvm_vm *vm);

/* Host side of stvm_run: learn the thread's stack (sanitizers), install the overflow
 * reporter for this thread; leave undoes what enter did. */
int stvm__ctx_host_enter(stvm_vm *vm);
void stvm__ctx_host_leave(stvm_vm *vm);

/* Per-VM set-up of the back end (the host context for ucontext). ENOMEM. */
int stvm__ctx_vm_init(stvm_vm *vm);

#endif
