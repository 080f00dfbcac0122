/* ExternalAddress: a C pointer in a 16-byte cell (vm/objects.h). The memory it points
 * at stays the caller's; the object only carries the address, made and read by the
 * public stvm_ptr_oop and stvm_oop_ptr and by the FFI's marshalling. A NULL pointer is
 * nil, never an ExternalAddress. */
#ifndef STVM_VM_ADDRESS_H
#define STVM_VM_ADDRESS_H

#include "objmem.h"

/* The ExternalAddress oop names, or NULL if it is not a live one of this VM. Safe for
 * any machine word. */
static inline stvm_external_address *stvm__address_of(stvm_vm *vm, stvm_oop oop)
{
    if (!stvm__objmem_is_object(vm, oop))
        return NULL;
    stvm_external_address *a = (stvm_external_address *)oop;
    return a->hdr.class_index == STVM_CLASS_EXTERNAL_ADDRESS ? a : NULL;
}

/* nil for NULL, else a new ExternalAddress holding p. ENOMEM. */
int stvm__address_make(stvm_vm *vm, void *p, stvm_oop *out);

#endif
