/*
 * The numbered primitive table as one list, and what the primitive files share.
 *
 * STVM_PRIMITIVES is the only place a primitive is listed. A row is
 *
 *     X(number, argument count, caller, Pharo name, C function)
 *
 * The C function is stvm__primitive_<C function>. The caller column says whether the
 * embedding thread may call the primitive outside stvm_run (ANY_CALLER) or it needs an
 * active process (PROCESS_ONLY: it blocks, switches or sleeps the caller). From the
 * list come the prototypes below and, in primitives.c, the dispatch array,
 * stvm_primitive_name, stvm_primitive_numbers and the argument-count and caller checks
 * of stvm_primitive_call. Adding a primitive is a row here plus its body.
 */
#ifndef STVM_PRIMITIVES_PRIM_TABLE_H
#define STVM_PRIMITIVES_PRIM_TABLE_H

#include "../vm/vm.h"

#define STVM_PRIMITIVES(X)                                                                 \
    X(  1, 1, ANY_CALLER,   "primitiveAdd", add)                                           \
    X(  2, 1, ANY_CALLER,   "primitiveSubtract", subtract)                                 \
    X(  3, 1, ANY_CALLER,   "primitiveLessThan", less_than)                                \
    X(  4, 1, ANY_CALLER,   "primitiveGreaterThan", greater_than)                          \
    X(  5, 1, ANY_CALLER,   "primitiveLessOrEqual", less_or_equal)                         \
    X(  6, 1, ANY_CALLER,   "primitiveGreaterOrEqual", greater_or_equal)                   \
    X(  7, 1, ANY_CALLER,   "primitiveEqual", equal)                                       \
    X(  8, 1, ANY_CALLER,   "primitiveNotEqual", not_equal)                                \
    X(  9, 1, ANY_CALLER,   "primitiveMultiply", multiply)                                 \
    X( 21, 1, ANY_CALLER,   "primitiveAddLargeIntegers", add_large_integers)               \
    X( 22, 1, ANY_CALLER,   "primitiveSubtractLargeIntegers", subtract_large_integers)     \
    X( 23, 1, ANY_CALLER,   "primitiveLessThanLargeIntegers", less_than_large_integers)    \
    X( 24, 1, ANY_CALLER,   "primitiveGreaterThanLargeIntegers",                           \
                            greater_than_large_integers)                                   \
    X( 25, 1, ANY_CALLER,   "primitiveLessOrEqualLargeIntegers",                           \
                            less_or_equal_large_integers)                                  \
    X( 26, 1, ANY_CALLER,   "primitiveGreaterOrEqualLargeIntegers",                        \
                            greater_or_equal_large_integers)                               \
    X( 27, 1, ANY_CALLER,   "primitiveEqualLargeIntegers", equal_large_integers)           \
    X( 28, 1, ANY_CALLER,   "primitiveNotEqualLargeIntegers", not_equal_large_integers)    \
    X( 29, 1, ANY_CALLER,   "primitiveMultiplyLargeIntegers", multiply_large_integers)     \
    X( 85, 0, ANY_CALLER,   "primitiveSignal", signal)                                     \
    X( 86, 0, PROCESS_ONLY, "primitiveWait", wait)                                         \
    X( 87, 0, ANY_CALLER,   "primitiveResume", resume)                                     \
    X( 88, 0, ANY_CALLER,   "primitiveSuspend", suspend)                                   \
    X(135, 0, ANY_CALLER,   "primitiveMillisecondClock", millisecond_clock)                \
    X(136, 2, ANY_CALLER,   "primitiveSignalAtMilliseconds", signal_at_milliseconds)       \
    X(167, 0, PROCESS_ONLY, "primitiveYield", yield)                                       \
    X(185, 0, PROCESS_ONLY, "primitiveExitCriticalSection", exit_critical_section)         \
    X(186, 0, PROCESS_ONLY, "primitiveEnterCriticalSection", enter_critical_section)       \
    X(187, 0, PROCESS_ONLY, "primitiveTestAndSetOwnershipOfCriticalSection",               \
                            test_and_set_ownership_of_critical_section)                    \
    X(230, 1, PROCESS_ONLY, "primitiveRelinquishProcessor", relinquish_processor)          \
    X(240, 0, ANY_CALLER,   "primitiveUTCMicrosecondClock", utc_microsecond_clock)         \
    X(242, 2, ANY_CALLER,   "primitiveSignalAtUTCMicroseconds",                            \
                            signal_at_utc_microseconds)                                   \
    X(568, 0, ANY_CALLER,   "primitiveSuspendBackingUpV1", suspend_backing_up_v1)          \
    X(578, 0, ANY_CALLER,   "primitiveSuspendBackingUpV2", suspend_backing_up_v2)

/* The named primitives (<primitive: 'name' module: 'module'>), one list as the
 * numbered ones: X(module, Pharo name, argument count, caller, C function). The
 * receiver (the image's Socket) is not looked at, as in the plugin; argument 0 is the
 * socket record where there is one. From the list come the prototypes, the table
 * stvm_primitive_call_named searches and stvm_primitive_named_list. */
#define STVM_NAMED_PRIMITIVES(X)                                                           \
    X("SocketPlugin", "primitiveInitializeNetwork", 1, ANY_CALLER, initialize_network)    \
    X("SocketPlugin", "primitiveSocketCreate3Semaphores", 7, ANY_CALLER,                   \
      socket_create3_semaphores)                                                           \
    X("SocketPlugin", "primitiveSocketConnectToPort", 3, ANY_CALLER,                       \
      socket_connect_to_port)                                                              \
    X("SocketPlugin", "primitiveSocketConnectionStatus", 1, ANY_CALLER,                    \
      socket_connection_status)                                                            \
    X("SocketPlugin", "primitiveSocketSendDataBufCount", 4, ANY_CALLER,                    \
      socket_send_data_buf_count)                                                          \
    X("SocketPlugin", "primitiveSocketSendDone", 1, ANY_CALLER, socket_send_done)          \
    X("SocketPlugin", "primitiveSocketReceiveDataAvailable", 1, ANY_CALLER,                \
      socket_receive_data_available)                                                       \
    X("SocketPlugin", "primitiveSocketReceiveDataBufCount", 4, ANY_CALLER,                 \
      socket_receive_data_buf_count)                                                       \
    X("SocketPlugin", "primitiveSocketCloseConnection", 1, ANY_CALLER,                     \
      socket_close_connection)                                                             \
    X("SocketPlugin", "primitiveSocketAbortConnection", 1, ANY_CALLER,                     \
      socket_abort_connection)                                                             \
    X("SocketPlugin", "primitiveSocketDestroy", 1, ANY_CALLER, socket_destroy)             \
    X("SocketPlugin", "primitiveSocketListenOnPortBacklog", 3, ANY_CALLER,                 \
      socket_listen_on_port_backlog)                                                       \
    X("SocketPlugin", "primitiveSocketListenOnPortBacklogInterface", 4, ANY_CALLER,        \
      socket_listen_on_port_backlog_interface)                                             \
    X("SocketPlugin", "primitiveSocketAccept3Semaphores", 6, ANY_CALLER,                   \
      socket_accept3_semaphores)                                                           \
    X("SocketPlugin", "primitiveSocketError", 1, ANY_CALLER, socket_error)                 \
    X("SocketPlugin", "primitiveSocketLocalPort", 1, ANY_CALLER, socket_local_port)        \
    X("SocketPlugin", "primitiveSocketRemotePort", 1, ANY_CALLER, socket_remote_port)      \
    X("SocketPlugin", "primitiveSocketLocalAddress", 1, ANY_CALLER, socket_local_address)  \
    X("SocketPlugin", "primitiveSocketRemoteAddress", 1, ANY_CALLER,                       \
      socket_remote_address)                                                               \
    X("SocketPlugin", "primitiveSocketBindTo", 2, ANY_CALLER, socket_bind_to)              \
    X("SocketPlugin", "primitiveSocketListenWithBacklog", 2, ANY_CALLER,                   \
      socket_listen_with_backlog)                                                          \
    X("SocketPlugin", "primitiveSocketConnectTo", 2, ANY_CALLER, socket_connect_to)        \
    X("SocketPlugin", "primitiveSocketLocalAddressSize", 1, ANY_CALLER,                    \
      socket_local_address_size)                                                           \
    X("SocketPlugin", "primitiveSocketLocalAddressResult", 2, ANY_CALLER,                  \
      socket_local_address_result)                                                         \
    X("SocketPlugin", "primitiveSocketRemoteAddressSize", 1, ANY_CALLER,                   \
      socket_remote_address_size)                                                          \
    X("SocketPlugin", "primitiveSocketRemoteAddressResult", 2, ANY_CALLER,                 \
      socket_remote_address_result)                                                        \
    X("SocketPlugin", "primitiveResolverStartNameLookup", 1, ANY_CALLER,                   \
      resolver_start_name_lookup)                                                          \
    X("SocketPlugin", "primitiveResolverNameLookupResult", 0, ANY_CALLER,                  \
      resolver_name_lookup_result)                                                         \
    X("SocketPlugin", "primitiveResolverStatus", 0, ANY_CALLER, resolver_status)           \
    X("SocketPlugin", "primitiveResolverError", 0, ANY_CALLER, resolver_error)

/* The caller column. */
enum { ANY_CALLER = 0, PROCESS_ONLY = 1 };

/* A primitive body answers PRIM_OK with *result set, or a Pharo failure code
 * (STVM_PRIM_ERR_*) having changed nothing. stvm_primitive_call has checked the
 * argument count and the caller, so a body may read args[0 .. nargs-1] and, in a
 * PROCESS_ONLY row, rely on vm->active. The receiver and arguments are unchecked: any
 * machine word may arrive. */
enum { PRIM_OK = 0 };
typedef int stvm__primitive_fn(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                               stvm_oop *result);

#define STVM__PRIMITIVE_DECLARE(number, nargs, caller, name, fn) \
    stvm__primitive_fn stvm__primitive_##fn;
STVM_PRIMITIVES(STVM__PRIMITIVE_DECLARE)
#undef STVM__PRIMITIVE_DECLARE
#define STVM__NAMED_PRIMITIVE_DECLARE(module, name, nargs, caller, fn) \
    stvm__primitive_fn stvm__primitive_##fn;
STVM_NAMED_PRIMITIVES(STVM__NAMED_PRIMITIVE_DECLARE)
#undef STVM__NAMED_PRIMITIVE_DECLARE

/* The one receiver and argument check by class, for every primitive: the object `oop`
 * names if it is a live object of this VM whose class is class_index
 * (STVM_CLASS_SEMAPHORE, _MUTEX, _PROCESS, _SOCKET_HANDLE, ...), else NULL. Safe for any machine word.
 * In prim_object.c. */
void *stvm__prim_object_of(stvm_vm *vm, stvm_oop oop, uint32_t class_index);

/* Not a primitive: the SocketPlugin's record for a connected stream descriptor made
 * elsewhere (one end of a socketpair: the simulated clock's peer, whose bytes are
 * there the moment it writes them, where a loopback TCP connection's depend on how the
 * kernel schedules its work). The record owns fd from here on, as one the plugin made;
 * sema: the connection, read and write semaphores' external slots (0: none). PRIM_OK
 * and *result, or STVM_PRIM_ERR_BAD_ARGUMENT (fd not a connected stream socket, or a
 * slot outside the table; fd is then not taken), _NO_MEMORY. In prim_socket.c. */
int stvm__socket_plugin_adopt(stvm_vm *vm, int fd, const int sema[3], stvm_oop *result);

/* Not primitives either: what the C API's sockets do that Pharo's Socket has no
 * primitive for (image-stubs/network/socket.c). stvm__socket_plugin_shutdown half-closes
 * the connection of socket record handle (how: SHUT_RD, SHUT_WR or SHUT_RDWR); 0, or the
 * errno of shutdown(2) (ENOTCONN when the record has no connected descriptor). The
 * record's status is left alone: Pharo's statuses know no half-closed connection.
 * stvm__socket_plugin_room is primitiveSocketSendDone's look for room without its rule
 * that only a Connected socket may send: true when a send would not block, else false
 * with the write handler armed; for writing after the peer's FIN, when the status says
 * OtherEndClosed. In prim_socket.c and prim_socket_io.c. */
int stvm__socket_plugin_shutdown(stvm_vm *vm, stvm_oop handle, int how);
bool stvm__socket_plugin_room(stvm_vm *vm, stvm_oop handle);
/* Is the listener of record handle starved: did its last accept(2) find no descriptor
 * (EMFILE, ENFILE) or no memory for a connection that waits, with nothing changed since
 * that the VM knows of? Then its status stays WaitingForConnection with that errno, no
 * handler watches it (its backlog would make it ready at once), and it is asked again
 * when the VM closes a descriptor (which also signals its connection semaphore) or, at
 * its next look, once *retry_ms (at least 1) have passed. In prim_socket.c. */
bool stvm__socket_plugin_starved(stvm_vm *vm, stvm_oop handle, int64_t *retry_ms);

#endif
