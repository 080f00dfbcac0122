/*
 * stvm/ffi.h -- foreign functions through libffi: callouts on the caller's thread, on
 * the worker pool or a worker of their own, callbacks, BoxedFloat64 and
 * ExternalAddress values, the FFI counters (docs/ffi.md). Includes stvm/core.h and
 * stvm/prim.h (a refused call answers Pharo's primitive failure codes); <stvm.h>
 * includes it.
 */
#ifndef STVM_FFI_H
#define STVM_FFI_H

#include "core.h"
#include "prim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Foreign functions (libffi): callouts and callbacks --------------------------
 * After Pharo's UFFI and its threaded FFI (TFFI); docs/ffi.md tells how callouts and
 * scheduling meet and what each way of calling costs.
 *
 * A signature is "RET(ARG,...)" with the type names void i8 i16 i32 i64 u8 u16 u32 u64
 * ptr size f32 f64 str, spaces allowed between the parts, e.g. "i64(i64,i64)",
 * "f64(f64)", "void()"; void only as RET; at most STVM_FFI_MAX_ARGS arguments. Anything
 * else is STVM_EINVAL.
 *
 * Values travel as oops, each C type from and to these:
 *  - integer types (size is size_t): a SmallInteger or a boxed Large(Positive|Negative)
 *    Integer that fits the type; true and false are 1 and 0. A result that does not fit
 *    a SmallInteger comes back boxed;
 *  - f32, f64: a BoxedFloat64 (stvm_float_new) or an integer (converted); a result is a
 *    new BoxedFloat64. NaN and the infinities pass both ways; a finite value beyond the
 *    float range does not fit f32;
 *  - ptr, str: an ExternalAddress (stvm_ptr_oop), nil for NULL, or a ByteArray (its
 *    first byte; for str it must hold a NUL); a result is an ExternalAddress, or nil for
 *    NULL. The C memory stays the caller's. str is a char * like ptr (stvm has no
 *    String), named for the reader;
 *  - a void result answers nil.
 * Boxed results (integers, floats, addresses) belong to the caller, who gives them back
 * with stvm_oop_release. A value that does not fit its C type, a wrong count or kind of
 * argument fails the call with STVM_EPRIM before anything is called, and
 * stvm_ffi_last_failure answers Pharo's failure code (STVM_PRIM_ERR_*). */
typedef struct stvm_ffi_function stvm_ffi_function;
typedef struct stvm_ffi_callback stvm_ffi_callback;
typedef struct stvm_ffi_worker stvm_ffi_worker;

#define STVM_FFI_MAX_ARGS 16
/* The stack a same-thread callout needs free below the calling process's frame unless
 * stvm_ffi_function_set_stack says otherwise (docs/ffi.md, "Stack"). */
#define STVM_FFI_STACK_DEFAULT 4096

/* Look up symbol in library (passed to dlopen unchanged, e.g. "libm.so.6"; NULL = the
 * program and everything it has loaded) and prepare the call for signature once
 * (ffi_prep_cif). Allocates; the caller owns *out and frees it with
 * stvm_ffi_function_free (stvm_vm_free frees what is left). Never switches.
 * Errors:
 *   EINVAL    vm, symbol, signature or out NULL; a bad signature; a library that does
 *             not load; a missing symbol
 *   ENOMEM    no memory for the function (or for the VM's FFI state, on its first use) */
STVM_API int stvm_ffi_function_new(stvm_vm *vm, const char *library, const char *symbol,
                                   const char *signature, stvm_ffi_function **out);
/* The same for a function the caller already has the address of (a function of its
 * own, a callback's c_function, a pointer a C library handed out), cast to void *.
 * Allocates; freed as above.
 * Errors:
 *   EINVAL    vm, address, signature or out NULL; a bad signature
 *   ENOMEM    no memory for the function (or for the VM's FFI state, on its first use) */
STVM_API int stvm_ffi_function_at(stvm_vm *vm, void *address, const char *signature,
                                  stvm_ffi_function **out);
/* Free fn; the handle must not be used afterwards. A threaded call still running keeps
 * what it needs until it returns. NULL, or a handle that is not one of this VM's, is
 * ignored. Never switches. */
STVM_API void stvm_ffi_function_free(stvm_vm *vm, stvm_ffi_function *fn);
/* How many bytes of stack a same-thread callout of fn needs free below the calling
 * process's frame (STVM_FFI_STACK_DEFAULT at first; 0 = no check). A process with less
 * fails the call with STVM_PRIM_ERR_LIMIT_EXCEEDED instead of overflowing: give such a
 * process a bigger stack (stvm_spawn_sized) or the call a worker. The embedding thread
 * outside stvm_run is not checked. Never switches.
 * Errors:
 *   EINVAL    vm NULL; fn not a function of this VM; bytes above 64 MiB */
STVM_API int stvm_ffi_function_set_stack(stvm_vm *vm, stvm_ffi_function *fn, size_t bytes);

/* Call fn with nargs arguments on the calling thread, as UFFI does: every other green
 * process waits until it returns. Allowed from a green process (the call runs on its
 * stack, see stvm_ffi_function_set_stack) or from the embedding thread outside
 * stvm_run. Stores the result in *result (NULL: the result is dropped, nothing is
 * allocated). Allocates (boxed results); switches only if a callback it makes does.
 * Errors:
 *   EINVAL    vm NULL; fn not a function of this VM; nargs < 0; args NULL with
 *             nargs > 0
 *   ENOTPROC  called from another thread while the VM runs (neither a green process
 *             of vm nor the embedding thread outside stvm_run)
 *   EPRIM     a wrong count or kind of argument, a value that does not fit, too little
 *             stack: nothing was called; see stvm_ffi_last_failure
 *   ENOMEM    the call was made, its boxed result could not be */
STVM_API int stvm_ffi_call(stvm_vm *vm, stvm_ffi_function *fn, const stvm_oop *args,
                           int nargs, stvm_oop *result);
/* stvm_ffi_call on a worker of the VM's pool (config ffi_workers; TFFI's worker
 * runner): the caller waits on a semaphore registered in the external table, every
 * other process runs meanwhile, and the worker's completion comes back as one external
 * signal. A process suspended meanwhile goes on waiting when resumed; one terminated
 * meanwhile leaves the call to finish on its worker, which drops the result.
 * Allocates; switches.
 * Errors:
 *   EINVAL    vm NULL; fn not a function of this VM; nargs < 0; args NULL with
 *             nargs > 0
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EPRIM     a wrong count or kind of argument, a value that does not fit: nothing was
 *             called; see stvm_ffi_last_failure (there is no stack check: the call runs
 *             on the worker's stack)
 *   EFULL     no external slot for the call's semaphore
 *   ENOMEM    no memory for the call's record and semaphore or for the pool; or the
 *             call was made and its boxed result could not be
 *   ESYS      no worker thread could start
 *   EINTR     interrupted (stvm_process_interrupt) while it waited: the C call goes on in
 *             its thread and its result is dropped */
STVM_API int stvm_ffi_call_threaded(stvm_vm *vm, stvm_ffi_function *fn, const stvm_oop *args,
                                    int nargs, stvm_oop *result);
/* A named worker (TFFI's TFWorker named:): one OS thread of its own with its own queue,
 * so that its calls run one after the other, apart from the pool's. name is copied
 * (NULL = ""); the thread starts with the first call. Allocates; freed with
 * stvm_ffi_worker_free or by stvm_vm_free.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ENOMEM    no memory for the worker (or for the VM's FFI state, on its first use) */
STVM_API int stvm_ffi_worker_new(stvm_vm *vm, const char *name, stvm_ffi_worker **out);
/* Stop a named worker and join its thread. Never switches.
 * Errors:
 *   EINVAL    not a worker of this VM
 *   EINUSE    a call is queued or running on it: nothing changes */
STVM_API int stvm_ffi_worker_free(stvm_vm *vm, stvm_ffi_worker *w);
/* stvm_ffi_call_threaded on worker w (NULL = the pool).
 * Errors:
 *   EINVAL    vm NULL; w not NULL and not a worker of this VM; fn not a function of
 *             this VM; nargs < 0; args NULL with nargs > 0
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EPRIM     a wrong count or kind of argument, a value that does not fit: nothing was
 *             called; see stvm_ffi_last_failure (no stack check, as for the pool)
 *   EFULL     no external slot for the call's semaphore
 *   ENOMEM    no memory for the call's record and semaphore (or, with w NULL, for the
 *             pool); or the call was made and its boxed result could not be
 *   ESYS      the worker's thread (with w NULL: every thread of the pool) could not
 *             start
 *   EINTR     interrupted (stvm_process_interrupt) while it waited: the C call goes on in
 *             its thread and its result is dropped */
STVM_API int stvm_ffi_call_on(stvm_vm *vm, stvm_ffi_worker *w, stvm_ffi_function *fn,
                              const stvm_oop *args, int nargs, stvm_oop *result);
/* Pharo's failure code of the last FFI call that answered STVM_EPRIM (0 before any),
 * or EINVAL for vm NULL. Never fails otherwise. */
STVM_API int stvm_ffi_last_failure(stvm_vm *vm);

/* A BoxedFloat64 holding d (NaN and infinities too), given back with stvm_oop_release.
 * Allocates.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ENOMEM    no memory for the float */
STVM_API int stvm_float_new(stvm_vm *vm, double d, stvm_oop *out);
/* The double of a BoxedFloat64.
 * Errors:
 *   EINVAL    vm or out NULL; oop not a BoxedFloat64 of vm */
STVM_API int stvm_float_value(stvm_vm *vm, stvm_oop oop, double *out);
/* An ExternalAddress holding p (nil for NULL: nothing allocated), given back with
 * stvm_oop_release; the memory at p stays the caller's. Allocates.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ENOMEM    no memory for the ExternalAddress */
STVM_API int stvm_ptr_oop(stvm_vm *vm, void *p, stvm_oop *out);
/* The pointer of an ExternalAddress (NULL for nil).
 * Errors:
 *   EINVAL    vm or out NULL; oop neither nil nor an ExternalAddress of vm */
STVM_API int stvm_oop_ptr(stvm_vm *vm, stvm_oop oop, void **out);

/* A callback's body: args are the C arguments as oops (the VM's: released after it
 * returns), *result is preset to nil and converted to the C return type afterwards
 * (then released by the VM, unless it is one of args). Answer STVM_OK, or an error: C
 * then sees 0 and the error is counted (stvm_ffi_stats.callbacks_failed), as is a
 * result that does not fit. It runs in a green process (see stvm_ffi_callback_new) and
 * may do anything a process may, waiting and further callouts included. */
typedef int (*stvm_ffi_handler)(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs,
                                stvm_oop *result);

/* Make a C function of the given signature that calls handler(vm, arg, ...) (a libffi
 * closure): the function in *c_function, its handle in *out. Called on the VM's thread
 * during a same-thread callout (a qsort comparator), the handler runs at once, nested,
 * on the calling process's stack (or the embedding thread's). Called from any other
 * thread (a worker's callout, a thread of a C library), the call is queued and a VM
 * process at config.ffi_callback_priority runs it while that thread waits for the
 * result, as TFFI's callback queue does. A call that cannot be run answers 0 at once and
 * is counted (stvm_ffi_stats.callbacks_refused): from another thread while the VM is
 * not inside stvm_run or is being freed, or after the callback was freed. The first
 * callback starts the callback process; from then on stvm_run no longer answers
 * STVM_EDEADLOCK while processes wait (a foreign thread may call back at any time).
 * Allocates; the first callback made from a process switches once (the callback
 * process, higher, runs up to its wait), later ones never switch.
 * Errors:
 *   EINVAL    vm, signature, handler, out or c_function NULL; a bad signature
 *   EFULL     the first callback of a VM whose external table has no free slot for the
 *             queue's semaphore
 *   ENOMEM    no memory for the callback, or (the first callback) for the callback
 *             process and its queue
 *   ESYS      libffi could not make executable memory */
STVM_API int stvm_ffi_callback_new(stvm_vm *vm, const char *signature,
                                   stvm_ffi_handler handler, void *arg,
                                   stvm_ffi_callback **out, void **c_function);
/* Free cb: its C function answers 0 (counted as refused) from now on instead of
 * calling the handler, until stvm_vm_free, after which it must not be called at all.
 * NULL, or a handle that is not one of this VM's live callbacks, is ignored. Never
 * switches. */
STVM_API void stvm_ffi_callback_free(stvm_vm *vm, stvm_ffi_callback *cb);

typedef struct stvm_ffi_stats {
    uint64_t callouts;              /* same-thread calls made */
    uint64_t callouts_threaded;     /* calls handed to a worker */
    uint64_t callouts_failed;       /* calls refused with STVM_EPRIM */
    uint64_t callouts_abandoned;    /* threaded calls whose caller was terminated */
    uint64_t callbacks_nested;      /* callbacks run at once on the calling stack */
    uint64_t callbacks_queued;      /* callbacks from other threads, run by the process */
    uint64_t callbacks_failed;      /* handler errors and results that did not fit */
    uint64_t callbacks_refused;     /* calls answered 0 without running the handler */
} stvm_ffi_stats;

/* Copy the FFI counters into the first out_size bytes of *out. Never allocates.
 * Errors:
 *   EINVAL    vm or out NULL
 *   ESIZE     out_size not a size of stvm_ffi_stats this library knows */
STVM_API int stvm_ffi_get_stats_(stvm_vm *vm, stvm_ffi_stats *out, size_t out_size);
#define stvm_ffi_get_stats(vm, out) stvm_ffi_get_stats_((vm), (out), sizeof(stvm_ffi_stats))

#ifdef __cplusplus
}
#endif
#endif /* STVM_FFI_H */
