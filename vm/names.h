/*
 * Names of objects (stvm_semaphore_set_name and its kin): a table beside the objects,
 * keyed by address, so that an object is no larger for having a name and nothing on the
 * scheduling paths reads or copies one. Names are looked up only when something prints
 * them (the blocked report, the process listing, the trace's writers, a getter); an
 * object's name goes when the object is freed (stvm__objmem_free asks).
 */
#ifndef STVM_VM_NAMES_H
#define STVM_VM_NAMES_H

#include "vm.h"

/* Check a name as every setter does: STVM_OK (NULL or "" clear it), EINVAL (a control
 * character: the text timeline and the report are line-based), ERANGE (longer than
 * STVM_NAME_MAX bytes). */
int stvm__name_check(const char *name);
/* Give obj the copy of name (checked; NULL or "" takes its name away). ENOMEM changes
 * nothing. While a trace records, the ring learns the new name (vm/trace.h). */
int stvm__name_set(stvm_vm *vm, const void *obj, const char *name);
/* obj's name, or NULL: valid until obj is named again or freed. */
const char *stvm__name_of(const stvm_vm *vm, const void *obj);
/* The getters' answer: obj's name into buf, NUL-terminated and truncated to size (buf
 * may be NULL when size is 0); the name's length, 0 without one. */
int stvm__name_copy(const stvm_vm *vm, const void *obj, char *buf, size_t size);
/* obj is being freed: its name goes (stvm__objmem_free). True when it had one. */
bool stvm__name_forget(stvm_vm *vm, const void *obj);
/* Call fn for every named object (the trace's start), in no particular order. */
void stvm__names_each(const stvm_vm *vm, void (*fn)(stvm_vm *vm, const void *obj,
                                                   const char *name, void *arg),
                      void *arg);
/* stvm_vm_free. */
void stvm__names_destroy(stvm_vm *vm);

#endif
