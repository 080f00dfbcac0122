/* External addresses (see address.h). */
#include "address.h"

int stvm__address_make(stvm_vm *vm, void *p, stvm_oop *out)
{
    if (!p) {
        *out = STVM_NIL;
        return STVM_OK;
    }
    stvm_external_address *a = stvm__objmem_alloc_cell(vm, STVM_CLASS_EXTERNAL_ADDRESS);
    if (!a)
        return STVM_ENOMEM;
    a->hdr.byte_size = sizeof a->address;
    a->address = p;
    *out = (stvm_oop)a;
    return STVM_OK;
}

int stvm_ptr_oop(stvm_vm *vm, void *p, stvm_oop *out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    return stvm__address_make(vm, p, out);
}

int stvm_oop_ptr(stvm_vm *vm, stvm_oop oop, void **out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    if (oop == STVM_NIL) {
        *out = NULL;
        return STVM_OK;
    }
    stvm_external_address *a = stvm__address_of(vm, oop);
    if (!a)
        return STVM_EINVAL;
    *out = a->address;
    return STVM_OK;
}
