/* The pool of 4 KiB buffers (see buffer_pool.h). */
#include "buffer_pool.h"

stvm_byte_array *stvm__buffer_take(stvm_vm *vm)
{
    stvm_buffer_pool *p = &vm->buffers;
    if (p->nfree > 0)
        return p->free[--p->nfree];
    return stvm__bytes_alloc(vm, STVM_BUFFER_SIZE);
}

void stvm__buffer_give(stvm_vm *vm, stvm_byte_array *b)
{
    stvm_buffer_pool *p = &vm->buffers;
    if (!b)
        return;
    if (p->nfree < STVM_BUFFER_POOL_MAX)
        p->free[p->nfree++] = b;
    else
        stvm__objmem_free(vm, b);
}
