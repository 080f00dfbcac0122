/* Boxed floats (see float.h). stvm has no immediate floats (Spur 64's SmallFloat64):
 * every double an oop carries is a box, released with stvm_oop_release. */
#include "float.h"

int stvm__float_make(stvm_vm *vm, double d, stvm_oop *out)
{
    stvm_float *f = stvm__objmem_alloc_cell(vm, STVM_CLASS_FLOAT);
    if (!f)
        return STVM_ENOMEM;
    f->hdr.byte_size = sizeof f->value;
    f->value = d;
    *out = (stvm_oop)f;
    return STVM_OK;
}

int stvm_float_new(stvm_vm *vm, double d, stvm_oop *out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    return stvm__float_make(vm, d, out);
}

int stvm_float_value(stvm_vm *vm, stvm_oop oop, double *out)
{
    stvm_float *f = vm ? stvm__float_of(vm, oop) : NULL;
    if (!f || !out)
        return STVM_EINVAL;
    *out = f->value;
    return STVM_OK;
}
