/* BoxedFloat64: a double in a 16-byte cell (vm/objects.h), made and read by the public
 * stvm_float_new and stvm_float_value and by the FFI's marshalling. */
#ifndef STVM_VM_FLOAT_H
#define STVM_VM_FLOAT_H

#include "objmem.h"

/* The float oop names, or NULL if it is not a live float of this VM. Safe for any
 * machine word. */
static inline stvm_float *stvm__float_of(stvm_vm *vm, stvm_oop oop)
{
    if (!stvm__objmem_is_object(vm, oop))
        return NULL;
    stvm_float *f = (stvm_float *)oop;
    return f->hdr.class_index == STVM_CLASS_FLOAT ? f : NULL;
}

/* A new float oop holding d (NaN and infinities too). ENOMEM. */
int stvm__float_make(stvm_vm *vm, double d, stvm_oop *out);

#endif
