/*
 * Process contexts and the switch between them. Two back ends chosen at build time: a
 * hand-written switch for x86-64 (switch_x86_64.S) and for aarch64 (switch_aarch64.S),
 * the default on those machines, and a portable ucontext one (-DSTVM_CTX_UCONTEXT, and
 * the only one on any other machine). The stacks themselves come from vm/stack.c.
 */
#ifndef STVM_SCHEDULER_CONTEXT_H
#define STVM_SCHEDULER_CONTEXT_H

#include "../vm/sanitizers.h"
#include "../vm/vm.h"

#if !defined(STVM_CTX_UCONTEXT) && !defined(__x86_64__) && !defined(__aarch64__)
#define STVM_CTX_UCONTEXT 1
#endif

/* What a new process runs first, with the process as argument (process.c). */
void stvm__process_entry(void *p);

/* Take a stack of stack_size bytes, place a zeroed running-state record in its top
 * STVM_PROC_AREA bytes and lay out the first frame so that switching to it calls
 * stvm__process_entry(record). ENOMEM. */
int stvm__ctx_prepare(stvm_vm *vm, size_t stack_size, stvm_proc **out);
/* Give p's stack, and with it p itself (and a handle living there), back. p must not
 * be running. */
void stvm__ctx_release(stvm_vm *vm, stvm_proc *p);

/* First thing on every context that gets the processor back: free the stack of a
 * process that finished on the way out (it could not free the stack it ran on). */
static inline void stvm__after_switch(stvm_vm *vm)
{
    stvm_proc *z = vm->zombie;
    if (z) {
        vm->zombie = NULL;
        stvm__ctx_release(vm, z);
    }
}

/* Switch from `from` to `to` (NULL = the embedding thread). Returns when something
 * switches back to `from`. A finished `from` never comes back. On the assembly back end
 * without a sanitizer it is the register switch itself, inline: every hand-off passes
 * here, and a call level of its own cost about a tenth of one. */
#if defined(STVM_CTX_UCONTEXT) || defined(STVM_ASAN) || defined(STVM_TSAN)
void stvm__ctx_switch(stvm_vm *vm, stvm_proc *from, stvm_proc *to);
#else
void stvm__switch_asm(void **save_sp, void *new_sp);
static inline void stvm__ctx_switch(stvm_vm *vm, stvm_proc *from, stvm_proc *to)
{
    stvm__switch_asm(from ? &from->ctx_sp : &vm->host_sp, to ? to->ctx_sp : vm->host_sp);
}
#endif
/* First thing a new process does on its stack (sanitizer bookkeeping). */
void stvm__ctx_entered(stvm_vm *vm);

/* Host side of stvm_run: learn the thread's stack (sanitizers), arm the overflow
 * reporter and tighten the timer slack for this thread; leave undoes what enter did. */
void stvm__ctx_host_enter(stvm_vm *vm);
void stvm__ctx_host_leave(stvm_vm *vm);

/* Per-VM set-up of the back end (the host context for ucontext). ENOMEM. */
int stvm__ctx_vm_init(stvm_vm *vm);
void stvm__ctx_vm_destroy(stvm_vm *vm);

/* ---- stack overflow (overflow.c) ---- */
/* Report an overflow of the stack [lo, ...) of the process named `name` on stderr and
 * abort. Async-signal-safe. */
_Noreturn void stvm__overflow_report(const char *name, size_t stack_size, const char *how);
/* Check a canary-guarded process's stack at a switch or checkpoint (sp: an address in
 * its current frame); reports and aborts when it overflowed. */
void stvm__overflow_check(stvm_proc *p, const void *sp);
/* Install (enter) and remove (leave) the SIGSEGV reporter on an alternate signal stack
 * for the calling thread, which runs vm. */
void stvm__overflow_arm(stvm_vm *vm);
void stvm__overflow_disarm(stvm_vm *vm);

#endif
