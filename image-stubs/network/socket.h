/*
 * Pharo's Socket, the image side of a TCP socket, written in C on the SocketPlugin's
 * primitives (primitives/prim_socket*.c), with Pharo's names and semantics: a socket
 * handle (the plugin's record), three semaphores registered in the external table
 * (connection, read, write), and the waits of Socket's "waiting" protocol, each a loop
 * of "check the primitive, then a timed wait on the semaphore through the Delay
 * scheduler" (Semaphore>>waitTimeoutMSecs:, DelayWaitTimeout). socket.c has the
 * Socket, socket_stream.c the SocketStream on it, socket_api.c the public C calls.
 *
 * Every call here that waits takes a timeout in ms (-1: forever) and answers STVM_OK,
 * STVM_ETIMEDOUT, STVM_ECLOSED (the connection is gone), STVM_EWAITING (another process
 * already waits in that role on this socket) or STVM_ESTATE (the waiter was suspended
 * and resumed); it needs an active process (callers check).
 *
 * Two rules for writing. Pharo's: a socket whose status is not Connected is closed, so
 * after the peer's FIN (OtherEndClosed) nothing more is sent (ECLOSED); the image's
 * ZnClient (image-stubs/zinc) writes by it, so the experiments run as in Pharo. The C
 * API's (BSD's, libuv's, Go's): the peer's FIN closes only its direction, and writing
 * goes on until this side shuts or closes or the peer resets (the public calls, and
 * streams opened by stvm_stream_open). Reading is the same under both: the end of the
 * stream is STVM_EEOF, a reset STVM_ECONNRESET (the system's error, mapped by
 * stvm__error_from_errno). The primitives keep Pharo's statuses either way.
 */
#ifndef STVM_IMAGE_STUBS_SOCKET_H
#define STVM_IMAGE_STUBS_SOCKET_H

#include <sys/socket.h>

#include "../../primitives/prim_table.h"
#include "../../scheduler/sched.h"

/* The roles a process can wait in on one socket; one process per role at a time. */
enum { SOCKET_READER, SOCKET_WRITER, SOCKET_CONNECTOR, SOCKET_ROLES };

/* A Socket (Pharo's instance variables, plus what stvm needs to check its callers). It
 * is an object of the VM's object memory (class STVM_CLASS_SOCKET), so a handle a
 * caller passes in is validated like any oop, and stvm_vm_free frees what is left. */
struct stvm_socket {
    stvm_object hdr;
    stvm_vm *vm;
    stvm_oop handle;                 /* socketHandle: the plugin's record */
    stvm_semaphore *semaphore;       /* connection: connect, accept, close */
    stvm_semaphore *read_semaphore;
    stvm_semaphore *write_semaphore;
    int indices[3];                  /* their external slots */
    stvm_proc *waiting[SOCKET_ROLES];/* the process waiting in each role, or NULL */
    struct stvm_stream *stream;      /* the stream open on it, or NULL */
    bool listener;
    bool shut_rd, shut_wr;           /* stvm_socket_shutdown: this side's directions shut */
};

/* The plugin's netType (its socket family numbering) of a new socket's domain. */
enum { SOCKET_NET_INET = 0, SOCKET_NET_LOCAL = 1, SOCKET_NET_INET6 = 3 };

/* Socket>>initialize: (TCP, or a Unix domain stream socket for SOCKET_NET_LOCAL) and
 * Socket>>acceptFrom:. EFULL, ENOMEM, ESYS. */
int stvm__socket_new(stvm_vm *vm, int net_type, stvm_socket **out);
int stvm__socket_accept_from(stvm_vm *vm, stvm_socket *listener, stvm_socket **out);
/* A connected stream descriptor made elsewhere (a socketpair's end, the simulated
 * clock's peer on the other) as a connected Socket, which owns fd from here on (its
 * close closes it). EINVAL (not a connected stream socket: fd stays the caller's),
 * EFULL, ENOMEM. Never switches. */
int stvm__socket_adopt(stvm_vm *vm, int fd, stvm_socket **out);
/* Socket>>close then destroy; the object and its semaphores go (nobody may wait on it). */
void stvm__socket_free(stvm_vm *vm, stvm_socket *s);
/* Does a process wait on s in any role (itself or through its stream)? */
bool stvm__socket_waited_on(const stvm_socket *s);

/* Socket>>connectNonBlockingTo:port: with a 4- or 16-byte address, and
 * Socket>>connectNonBlockingTo: with a socket address (a whole sockaddr, IPv4, IPv6 or a
 * Unix path: primitives/sockaddr.h). EINVAL, ESTATE. */
int stvm__socket_connect_nonblocking(stvm_vm *vm, stvm_socket *s, stvm_oop address, int port);
int stvm__socket_connect_to(stvm_vm *vm, stvm_socket *s, stvm_oop socket_address);
/* Socket>>listenOn:backlogSize:interface:, and Socket>>bindTo: then listenWithBacklog:
 * for a socket address. When the primitive failed: the system's reason
 * (stvm__error_from_errno: EADDRINUSE, EADDRNOTAVAIL, EACCES, ENOENT, ...), or ESYS. */
int stvm__socket_listen(stvm_vm *vm, stvm_socket *s, int port, int backlog, stvm_oop address);
int stvm__socket_bind_listen(stvm_vm *vm, stvm_socket *s, stvm_oop socket_address, int backlog);

/* The queries: primSocketConnectionStatus: (InvalidSocket when the primitive fails),
 * isConnected, dataAvailable, sendDone, socketError, and the ports. */
int stvm__socket_status(stvm_vm *vm, stvm_socket *s);
bool stvm__socket_is_connected(stvm_vm *vm, stvm_socket *s);
bool stvm__socket_data_available(stvm_vm *vm, stvm_socket *s);
bool stvm__socket_send_done(stvm_vm *vm, stvm_socket *s);
int stvm__socket_error(stvm_vm *vm, stvm_socket *s);
int stvm__socket_local_port(stvm_vm *vm, stvm_socket *s);
int stvm__socket_remote_port(stvm_vm *vm, stvm_socket *s);
/* The code for what ended s, from primitiveSocketError (stvm__error_from_errno), or
 * otherwise when it has no error. */
int stvm__socket_failure(stvm_vm *vm, stvm_socket *s, int otherwise);
/* Socket>>localSocketAddress and remoteSocketAddress: the whole address (a sockaddr of
 * IPv4, IPv6 or a Unix path; an unnamed Unix socket's is its family alone) into *sa and
 * *len. STVM_OK; ENOMEM; or, when the system no longer tells (the connection is gone),
 * what ended it (stvm__socket_failure), ESYS with errno ENOTCONN when nothing says. */
int stvm__socket_address(stvm_vm *vm, stvm_socket *s, bool peer, struct sockaddr_storage *sa,
                         socklen_t *len);

/* Socket>>waitForDataFor:ifClosed:ifTimedOut: (-1: waitForDataIfClosed:): data
 * available, else closed, else a timed wait on the read semaphore, looping over
 * spurious signals. *waited (may be NULL) tells whether it blocked at least once. */
int stvm__socket_wait_for_data(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms, bool *waited);
/* Socket>>waitForSendDoneFor:; after_fin: by the C API's rule (above), under which the
 * wait ends with ECLOSED when this side is shut for writing, and with the mapped error
 * (ECONNRESET, EPIPE, ...) when the peer reset the connection. */
int stvm__socket_wait_for_send_done(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms,
                                    bool after_fin);
/* Socket>>waitForConnectionFor:ifTimedOut:: OK when Connected; ETIMEDOUT while still
 * waiting; otherwise the status was Unconnected (see stvm__socket_error): ECLOSED. A
 * listener whose last accept failed (EMFILE, ...) answers that failure, mapped. */
int stvm__socket_wait_for_connection(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms);

/* primSocket:receiveDataInto:startingAt:count: and primSocket:sendData:startIndex:count:
 * on a ByteArray (start is 1-based): the bytes moved, 0 when none could be. */
int64_t stvm__socket_receive_some(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start,
                                  size_t count);
int64_t stvm__socket_send_some(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start,
                               size_t count);

/* A read the Zodiac way (ZdcSimpleSocketStream>>fillReadBuffer): a non-blocking receive
 * first; only when nothing is there, waitForDataFor: and receive again. Answers the
 * bytes read (> 0), STVM_EEOF at the orderly end of the stream (every time; at once
 * after stvm_socket_shutdown shut the reading side), the system's error when the
 * connection broke (ECONNRESET, ...), STVM_ECLOSED when this end is closed, or the
 * wait's error. A read that found nothing and waited counts in
 * stats.socket_reads_blocked and sets *blocked. */
int64_t stvm__socket_read(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start,
                          size_t count, int64_t timeout_ms, bool *blocked);
/* stvm__socket_read of up to count bytes (<= STVM_BUFFER_SIZE) into a buffer lent by
 * the VM's pool (buffer_pool.h), which the read does not hold while it waits: a reader
 * blocked with nothing to read holds no buffer. The bytes read (> 0) are at the start
 * of *lent, which the caller gives back (stvm__buffer_give) when done with them;
 * otherwise *lent is NIL and the answer is stvm__socket_read's, or ENOMEM. */
int64_t stvm__socket_read_lent(stvm_vm *vm, stvm_socket *s, size_t count, int64_t timeout_ms,
                               bool *blocked, stvm_oop *lent);
/* Send count bytes of bytes from start (1-based), waitForSendDoneFor: before each send
 * (Socket>>sendData:): STVM_OK, or an error with *sent telling how far it got: ECLOSED,
 * ETIMEDOUT, and under the C API's rule (after_fin) the system's error for a broken
 * connection (ECONNRESET, EPIPE, ...). timeout_ms bounds the whole. */
int stvm__socket_write(stvm_vm *vm, stvm_socket *s, stvm_oop bytes, size_t start, size_t count,
                       int64_t timeout_ms, bool after_fin, size_t *sent);

/* Time left until a deadline made by stvm__socket_deadline (-1 stays -1, never below 0). */
int64_t stvm__socket_deadline(stvm_vm *vm, int64_t timeout_ms);
int64_t stvm__socket_remaining(stvm_vm *vm, int64_t deadline);

#endif
