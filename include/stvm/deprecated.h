/*
 * stvm/deprecated.h -- the public names 0.3.0 replaced (include/README.md, "Naming": the
 * argument order and the noun of a call), kept for one release so that code written
 * against 0.2.0 still builds with 0.3.0; they go in 0.4.0. Each old name is a macro: a
 * plain rename maps to the new name, and a call whose arguments moved is a
 * function-like macro that puts them in the new order. Either way it compiles to a
 * call of the new function: the shared library exports only the new symbols.
 *
 * Included by stvm.h; not for including on its own. Define STVM_NO_DEPRECATED before
 * including stvm.h to hide the old names (the library, its tests, examples, benchmarks
 * and lab are built that way, so none of them uses one).
 */
#ifndef STVM_DEPRECATED_H
#define STVM_DEPRECATED_H

#ifndef STVM_NO_DEPRECATED
/* The VM made: the output after the configuration (an input). */
#define stvm_vm_new(out, cfg) stvm_vm_create((cfg), (out))
/* A call with a time limit: the limit after the function and its argument (inputs). */
#define stvm_run_within_ms(vm, ms, fn, arg) stvm_call_within_ms((vm), (fn), (arg), (ms))
#define stvm_run_within_us(vm, us, fn, arg) stvm_call_within_us((vm), (fn), (arg), (us))
/* Another process's value: the call acts on the process, so its noun is process. */
#define stvm_local_get_of stvm_process_get_local
/* One accept for TCP and Unix listeners. */
#define stvm_tcp_accept stvm_socket_accept
#endif

#endif /* STVM_DEPRECATED_H */
