/*
 * stvm/prim.h -- primitives and object memory: integers (SmallInteger and boxed
 * Large(Positive|Negative)Integer) and oops, ByteArrays, the numbered and named
 * primitive table with Pharo's failure codes. Includes stvm/core.h; <stvm.h> includes
 * it.
 */
#ifndef STVM_PRIM_H
#define STVM_PRIM_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Integers and oops --------------------------------------------------------- */

/* The SmallInteger range of this VM: [-2^30, 2^30-1] or [-2^60, 2^60-1]. */
STVM_API int64_t stvm_smallint_max(const stvm_vm *vm);
STVM_API int64_t stvm_smallint_min(const stvm_vm *vm);
STVM_API bool stvm_oop_is_smallint(stvm_oop oop);
/* True for a SmallInteger or a boxed integer of this VM. */
STVM_API bool stvm_oop_is_integer(stvm_vm *vm, stvm_oop oop);

/* Make an integer oop: a SmallInteger when it fits, else a boxed Large(Positive|
 * Negative)Integer (allocates).
 * Errors:
 *   EINVAL    vm or out NULL
 *   ENOMEM    no memory for the boxed integer */
STVM_API int stvm_int_from_i64(stvm_vm *vm, int64_t v, stvm_oop *out);
STVM_API int stvm_int_from_u64(stvm_vm *vm, uint64_t v, stvm_oop *out);
/* Read an integer oop exactly.
 * Errors:
 *   EINVAL    vm or out NULL; oop not an integer of this VM
 *   ERANGE    its value does not fit the C type (int64_t, uint64_t) */
STVM_API int stvm_int_to_i64(stvm_vm *vm, stvm_oop oop, int64_t *out);
STVM_API int stvm_int_to_u64(stvm_vm *vm, stvm_oop oop, uint64_t *out);

/* Arithmetic across both representations; results normalised to SmallIntegers when
 * they fit, boxed otherwise (allocates). Magnitudes up to 64 bits.
 * Errors:
 *   EINVAL    vm or out NULL; an operand not an integer of this VM
 *   ERANGE    the result's magnitude beyond 64 bits
 *   ENOMEM    no memory for the boxed result */
STVM_API int stvm_int_add(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out);
STVM_API int stvm_int_sub(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out);
STVM_API int stvm_int_mul(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out);
/* Compare: *out = -1, 0 or 1.
 * Errors:
 *   EINVAL    vm or out NULL; an operand not an integer of this VM */
STVM_API int stvm_int_compare(stvm_vm *vm, stvm_oop a, stvm_oop b, int *out);

/* Give a boxed integer, a BoxedFloat64, an ExternalAddress, a ByteArray or a destroyed
 * socket handle (see primitiveSocketDestroy) back to object memory (stvm has no garbage
 * collector: whoever made an object releases it). SmallIntegers and nil are ignored.
 * Errors:
 *   EINVAL    vm NULL; oop not one of these, or not an object of this VM
 *   EINUSE    a socket handle not yet destroyed: nothing changes */
STVM_API int stvm_oop_release(stvm_vm *vm, stvm_oop oop);

/* A ByteArray of size bytes, all zero (Pharo's ByteArray new:), for the socket
 * primitives' buffers and addresses. Give it back with stvm_oop_release.
 * Allocates.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ERANGE    size above 1 GiB
 *   ENOMEM    no memory for the ByteArray */
STVM_API int stvm_bytes_new(stvm_vm *vm, size_t size, stvm_oop *out);
/* The bytes of a ByteArray and their count, valid until it is released.
 * Errors:
 *   EINVAL    vm, data or size NULL; bytes not a ByteArray of this VM */
STVM_API int stvm_bytes_data(stvm_vm *vm, stvm_oop bytes, uint8_t **data, size_t *size);

/* The oop of a handle, for primitives. */
STVM_API stvm_oop stvm_semaphore_oop(stvm_semaphore *sem);
STVM_API stvm_oop stvm_mutex_oop(stvm_mutex *m);
STVM_API stvm_oop stvm_process_oop(stvm_process *p);
/* The class name of an oop ("SmallInteger", "LargePositiveInteger",
 * "LargeNegativeInteger", "BoxedFloat64", "ExternalAddress", "Semaphore", "Mutex",
 * "Process", "ByteArray", "Delay" (an stvm_delay cast to an oop), "Monitor" (an
 * stvm_monitor cast to an oop), "SocketHandle"
 * (the SocketPlugin's socket record), "Socket" and "SocketStream" (an stvm_socket or
 * stvm_stream cast to an oop), "UndefinedObject", "True", "False") or NULL if the oop is
 * not this VM's. */
STVM_API const char *stvm_oop_class_name(stvm_vm *vm, stvm_oop oop);

/* ---- Primitives ---------------------------------------------------------------- */

/* Pharo's primitive failure codes (the VM's primitive error table). */
#define STVM_PRIM_ERR_GENERIC 1
#define STVM_PRIM_ERR_BAD_RECEIVER 2
#define STVM_PRIM_ERR_BAD_ARGUMENT 3
#define STVM_PRIM_ERR_BAD_INDEX 4
#define STVM_PRIM_ERR_BAD_NUM_ARGS 5
#define STVM_PRIM_ERR_INAPPROPRIATE 6
#define STVM_PRIM_ERR_UNSUPPORTED 7
#define STVM_PRIM_ERR_NO_MEMORY 9
#define STVM_PRIM_ERR_NO_C_MEMORY 10
#define STVM_PRIM_ERR_NOT_FOUND 11
#define STVM_PRIM_ERR_LIMIT_EXCEEDED 15

/* Call primitive `number` with a receiver and nargs arguments. On success returns
 * STVM_OK and stores the answer in *result (result may be NULL). On failure returns
 * STVM_EPRIM, stores Pharo's failure code in *fail_code (may be NULL) and changes
 * nothing. EINVAL for an unknown number or a NULL args with nargs > 0.
 * Process primitives switch like their C counterparts. */
STVM_API int stvm_primitive_call(stvm_vm *vm, int number, stvm_oop receiver,
                                 const stvm_oop *args, int nargs, stvm_oop *result,
                                 int *fail_code);
/* The named counterpart of stvm_primitive_call: the primitive `name` of plugin `module`
 * (Pharo's <primitive: 'name' module: 'module'>), with the same answers and failure
 * rules. EINVAL for an unknown module or name, a NULL vm, module or name, or a NULL args
 * with nargs > 0. Module "SocketPlugin" has Pharo's socket and resolver primitives
 * (primitives/README.md lists them); its sockets are non-blocking and no primitive ever
 * waits (the resolver answers at once: numeric addresses and "localhost" only). */
STVM_API int stvm_primitive_call_named(stvm_vm *vm, const char *module, const char *name,
                                       stvm_oop receiver, const stvm_oop *args, int nargs,
                                       stvm_oop *result, int *fail_code);
/* The named primitives, in table order: writes up to cap module and name pairs into
 * modules and names (either may be NULL), returns how many there are. */
STVM_API int stvm_primitive_named_list(const char **modules, const char **names, int cap);

/* "primitiveSignal" etc., or NULL for a number the table does not have. */
STVM_API const char *stvm_primitive_name(int number);
/* Numbers in the table, ascending: writes up to cap into out, returns the total. */
STVM_API int stvm_primitive_numbers(int *out, int cap);
/* Text of a failure code ("bad receiver"), never NULL. */
STVM_API const char *stvm_primitive_error_name(int code);

#ifdef __cplusplus
}
#endif
#endif /* STVM_PRIM_H */
