/*
 * Oops as the primitives see them: the one check that an untrusted oop names an object
 * of a given class, the oops of the C handles, and class names.
 */
#include "../vm/integer.h"
#include "../vm/objmem.h"
#include "prim_table.h"

/* stvm__objmem_is_object answers only for live objects of this VM and reads no address
 * it does not own; after it, the class is all there is to check. */
void *stvm__prim_object_of(stvm_vm *vm, stvm_oop oop, uint32_t class_index)
{
    if (!stvm__objmem_is_object(vm, oop))
        return NULL;
    return ((const stvm_object *)oop)->class_index == class_index ? (void *)oop : NULL;
}

stvm_oop stvm_semaphore_oop(stvm_semaphore *sem) { return (stvm_oop)sem; }
stvm_oop stvm_mutex_oop(stvm_mutex *m) { return (stvm_oop)m; }
stvm_oop stvm_process_oop(stvm_process *p) { return (stvm_oop)p; }

const char *stvm_oop_class_name(stvm_vm *vm, stvm_oop oop)
{
    if (!vm)
        return NULL;
    if (oop == STVM_NIL)
        return "UndefinedObject";
    if (oop == STVM_TRUE)
        return "True";
    if (oop == STVM_FALSE)
        return "False";
    if (stvm__is_si(oop))   /* a tagged word beyond this VM's range is none of its oops */
        return stvm__is_si_of(vm, oop) ? "SmallInteger" : NULL;
    if (!stvm__objmem_is_object(vm, oop))
        return NULL;
    switch (((const stvm_object *)oop)->class_index) {
    case STVM_CLASS_LARGE_POSITIVE_INTEGER: return "LargePositiveInteger";
    case STVM_CLASS_LARGE_NEGATIVE_INTEGER: return "LargeNegativeInteger";
    case STVM_CLASS_SEMAPHORE: return "Semaphore";
    case STVM_CLASS_MUTEX: return "Mutex";
    case STVM_CLASS_PROCESS: return "Process";
    case STVM_CLASS_BYTE_ARRAY: return "ByteArray";
    case STVM_CLASS_SOCKET_HANDLE: return "SocketHandle";
    case STVM_CLASS_SOCKET: return "Socket";
    case STVM_CLASS_SOCKET_STREAM: return "SocketStream";
    case STVM_CLASS_FLOAT: return "BoxedFloat64";
    case STVM_CLASS_EXTERNAL_ADDRESS: return "ExternalAddress";
    case STVM_CLASS_DELAY: return "Delay";
    case STVM_CLASS_MONITOR: return "Monitor";
    default: return NULL;
    }
}
