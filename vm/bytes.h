/* ByteArrays: bytes inline after the header (vm/objects.h), made and read by the public
 * stvm_bytes_new and stvm_bytes_data and by the SocketPlugin's buffers. */
#ifndef STVM_VM_BYTES_H
#define STVM_VM_BYTES_H

#include "objmem.h"

/* The largest ByteArray: 1 GiB (the header's byte_size is 32 bits). */
#define STVM_BYTES_MAX ((size_t)1 << 30)

/* A zeroed ByteArray of size bytes, or NULL when out of memory. size <= STVM_BYTES_MAX. */
stvm_byte_array *stvm__bytes_alloc(stvm_vm *vm, size_t size);

/* The ByteArray oop names, or NULL if it is not a live ByteArray of this VM. Safe for
 * any machine word. */
static inline stvm_byte_array *stvm__bytes_of(stvm_vm *vm, stvm_oop oop)
{
    if (!stvm__objmem_is_object(vm, oop))
        return NULL;
    stvm_byte_array *b = (stvm_byte_array *)oop;
    return b->hdr.class_index == STVM_CLASS_BYTE_ARRAY ? b : NULL;
}

#endif
