/* ByteArrays (see bytes.h). */
#include "bytes.h"

stvm_byte_array *stvm__bytes_alloc(stvm_vm *vm, size_t size)
{
    if (size > STVM_BYTES_MAX)
        return NULL;
    return stvm__objmem_alloc(vm, STVM_CLASS_BYTE_ARRAY, sizeof(stvm_byte_array) + size);
}

int stvm_bytes_new(stvm_vm *vm, size_t size, stvm_oop *out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    if (size > STVM_BYTES_MAX)
        return STVM_ERANGE;
    stvm_byte_array *b = stvm__bytes_alloc(vm, size);
    if (!b)
        return STVM_ENOMEM;
    *out = (stvm_oop)b;
    return STVM_OK;
}

int stvm_bytes_data(stvm_vm *vm, stvm_oop bytes, uint8_t **data, size_t *size)
{
    stvm_byte_array *b = vm ? stvm__bytes_of(vm, bytes) : NULL;
    if (!b || !data || !size)
        return STVM_EINVAL;
    *data = b->bytes;
    *size = b->hdr.byte_size;
    return STVM_OK;
}
