/*
 * stvm/deprecated.h -- the public names before the noun_verb sweep (include/README.md,
 * "Naming"), kept for one release so that code written against 0.1.0 still builds with
 * 0.2.0; they go in 0.3.0. Each old name is a macro for its new name, so it compiles to a call of
 * the new function: the shared library exports only the new symbols.
 *
 * Included by stvm.h; not for including on its own. Define STVM_NO_DEPRECATED before
 * including stvm.h to hide the old names (the library, its tests, examples and lab are
 * built that way, so none of them uses one).
 */
#ifndef STVM_DEPRECATED_H
#define STVM_DEPRECATED_H

#ifndef STVM_NO_DEPRECATED
#define stvm_active_process stvm_vm_active_process
#define stvm_blocked_report stvm_vm_blocked_report
#define stvm_check_invariants stvm_vm_check_invariants
#define stvm_process_info_get stvm_process_get_info
#define stvm_register_external stvm_external_register
#define stvm_unregister_external stvm_external_unregister
#define stvm_signal_external stvm_external_signal
#define stvm_now_us stvm_vm_now_us
#define stvm_millisecond_clock stvm_vm_millisecond_clock
#define stvm_timeout_semaphore_ms stvm_delay_timeout_semaphore_ms
#define stvm_get_stats stvm_vm_get_stats
#define stvm_reset_stats stvm_vm_reset_stats
#define stvm_is_smallint stvm_oop_is_smallint
#define stvm_is_integer stvm_oop_is_integer
#define stvm_prim_error_name stvm_primitive_error_name
/* After 0.2.0: one accept for TCP and Unix listeners. */
#define stvm_tcp_accept stvm_socket_accept
#endif

#endif /* STVM_DEPRECATED_H */
