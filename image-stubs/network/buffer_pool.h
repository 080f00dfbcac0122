/*
 * The 4 KiB buffers of SocketStreams and of the public socket calls, lent for as long
 * as they hold bytes: a stream takes its read buffer to receive and gives it back when
 * it has been read and the next receive finds nothing (a reader blocked with an empty
 * buffer holds none), and its write buffer from the first byte written until a flush
 * has sent everything. An idle connection then costs no buffer at all; a VM keeps up to
 * STVM_BUFFER_POOL_MAX free ones (256 KiB) so that busy connections take and give
 * without allocating. The pool itself is in vm.h.
 */
#ifndef STVM_IMAGE_STUBS_BUFFER_POOL_H
#define STVM_IMAGE_STUBS_BUFFER_POOL_H

#include "../../vm/bytes.h"

#define STVM_BUFFER_SIZE 4096

/* A buffer of STVM_BUFFER_SIZE bytes holding whatever its last user left: a pooled
 * one, else a new one (NULL: out of memory). Never switches. */
stvm_byte_array *stvm__buffer_take(stvm_vm *vm);
/* Give b (from stvm__buffer_take; NULL: nothing) back: kept while the pool has room,
 * else released. */
void stvm__buffer_give(stvm_vm *vm, stvm_byte_array *b);

#endif
