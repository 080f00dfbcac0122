/* The sizes of the public structs that callers may hand the library: which sizes are
 * known, so that a struct from an older header is read or written as its prefix and one
 * from a newer header is refused (include/README.md, "Structs that grow"). */
#ifndef STVM_VM_ABI_H
#define STVM_VM_ABI_H

#include "stvm.h"

typedef enum stvm__struct {
    STVM__STRUCT_CONFIG,
    STVM__STRUCT_PROCESS_INFO,
    STVM__STRUCT_STREAM_STATS,
    STVM__STRUCT_TRACE_EVENT,
    STVM__STRUCT_STATS,
    STVM__STRUCT_FFI_STATS,
    STVM__STRUCTS
} stvm__struct;

/* STVM_OK when size is a size some header gave the struct: it ends on a field boundary
 * (anywhere from the end of a field to the start of the next, padding included), holds
 * at least the first field and is at most the struct's size in this library. Else
 * STVM_ESIZE. Never allocates. */
int stvm__struct_size_check(stvm__struct which, size_t size);

#endif
