/*
 * valgrind's client requests for the stacks of green processes (vm/stack.c, and the raw
 * switch's stack in scheduler/context.c). memcheck takes a jump of the stack pointer
 * into memory it does not know as a stack for a huge frame ("client switching
 * stacks?"), and the slots of an arena lie close together: without registration a
 * switch from one process to its neighbour marks the memory between as freed, and a
 * thread-pool program reported five million false errors. Each stack handed to a
 * process is registered, and deregistered when it is given back or unmapped.
 *
 * The requests come from <valgrind/valgrind.h> (Debian's valgrind package, which
 * scripts/install-deps.sh installs); without it, or with -DSTVM_NO_VALGRIND, they are
 * nothing. Outside valgrind a request is a few instructions that change no state, and
 * the library asks RUNNING_ON_VALGRIND once per VM and keeps no ids unless it is.
 */
#ifndef STVM_VM_VALGRIND_H
#define STVM_VM_VALGRIND_H

#if !defined(STVM_NO_VALGRIND) && defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define STVM_VALGRIND 1
#endif
#endif

#ifdef STVM_VALGRIND
/* Under valgrind? (0 outside it.) */
#define stvm__on_valgrind() (RUNNING_ON_VALGRIND != 0)
/* Register [lo, lo + size) as a stack: its id + 1 (0 is never an id, so a slot can
 * store 0 for none). */
#define stvm__valgrind_stack_register(lo, size) \
    ((unsigned)VALGRIND_STACK_REGISTER((lo), (lo) + (size) - 1) + 1u)
#define stvm__valgrind_stack_deregister(id1)         \
    do {                                             \
        if (id1)                                     \
            VALGRIND_STACK_DEREGISTER((id1) - 1u);   \
    } while (0)
#else
#define stvm__on_valgrind() 0
#define stvm__valgrind_stack_register(lo, size) ((void)(lo), (void)(size), 0u)
#define stvm__valgrind_stack_deregister(id1) ((void)(id1))
#endif

#endif
