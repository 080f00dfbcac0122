/*
 * What a debugger reads to find the VMs of a process (scripts/gdb/stvm-gdb.py, the gdb
 * extension: docs/debugging.md). A program may make VMs anywhere (on any thread, in any
 * library that embeds stvm) and keep them where no debugger can guess, and a core file
 * cannot be asked; so the library keeps every live VM on one list, stvm__debug_vms,
 * which the extension finds by its symbol. It is the library's one mutable global: it
 * says which VMs exist, nothing about any of them, and no code of the library reads it.
 * A VM joins when stvm_vm_create has made it whole and leaves first thing in stvm_vm_free,
 * under a mutex (VMs are made and freed on any threads); nothing else touches it, so
 * it costs nothing on any path but those two.
 */
#ifndef STVM_VM_DEBUGGER_H
#define STVM_VM_DEBUGGER_H

#include "vm.h"

/* What the extension checks before it reads anything: it knows this layout version
 * (bumped when a field it reads changes meaning) and this build's context switch. */
typedef struct stvm_debug_info {
    uint32_t version;            /* STVM_DEBUG_VERSION */
    uint32_t switch_words;       /* assembly back end: the words the switch saves below a
                                    switched-out context's return address (or block, on
                                    aarch64), FPU control slot included; 0 for ucontext */
    const char *backend;         /* stvm_context_backend() */
} stvm_debug_info;

#define STVM_DEBUG_VERSION 1

/* Every live VM, newest first, through stvm_vm.debug_next (the extension's only way
 * in). The head is stored complemented (~pointer; all ones: no VM), so that it is no
 * pointer to LeakSanitizer: a VM a program never frees is reachable from nowhere else,
 * and must still be reported as the leak it is (the leak canary of make check). */
extern uintptr_t stvm__debug_vms;

void stvm__debug_register(stvm_vm *vm);
void stvm__debug_unregister(stvm_vm *vm);

#endif
