/*
 * stvm/net.h -- network and descriptors: waiting on a file descriptor, TCP sockets over
 * IPv4 and IPv6 (Pharo's Socket), and socket streams (SocketStream). Includes
 * stvm/core.h; <stvm.h> includes it.
 */
#ifndef STVM_NET_H
#define STVM_NET_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Descriptors ---------------------------------------------------------------- */

#define STVM_IO_READ 1
#define STVM_IO_WRITE 2

/* Wait in the calling green process until fd is readable (STVM_IO_READ) and/or
 * writable (STVM_IO_WRITE), as libdill's fdin/fdout or Go's netpoller; other processes
 * run meanwhile. Answers the events that are ready (> 0; an error or hang-up on fd
 * counts as both, and the caller's next read or write says which), or STVM_ETIMEDOUT
 * when timeout_ms ran out (-1 = forever, 0 = only look; longer waits go through the
 * Delay scheduler as every timed wait). A call that fails changes nothing (the
 * allocation counters included). The descriptor stays the caller's; close it only when
 * no process waits on it. Allocates the first time; switches.
 * Errors:
 *   EINVAL    vm NULL; fd < 0 or not a descriptor epoll can watch, such as a closed
 *             one, a regular file or /dev/null, with every timeout, 0 included (epoll
 *             decides, not poll); events not 1..3; timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  another process already waits for one of these events of fd, itself or
 *             through a socket (a listener counts only while a process accepts on it);
 *             0 ms too
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    timeout_ms longer than the Delay scheduler allows (stvm_delay_wait_ms)
 *   EFULL     the external table has no free slot for the wait's semaphore
 *   ENOMEM    no memory for the wait's record or semaphore
 *   ESYS      poll or epoll failed for another reason
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_fd_wait(stvm_vm *vm, int fd, int events, int64_t timeout_ms);

/* ---- Sockets (TCP over IPv4 and IPv6) -------------------------------------------- */

/* A TCP socket, built on the image side's Socket as Pharo's is: non-blocking descriptors,
 * the SocketPlugin primitives (stvm_primitive_call_named, module "SocketPlugin"), three
 * semaphores registered in the external table (connection, read, write), one-shot
 * readiness handlers, and waits bounded through the Delay scheduler (Pharo's
 * DelayWaitTimeout: each timed wait that blocks costs a schedule and an unschedule in
 * the priority-80 timing process, counted in stats.timed_waits).
 *
 * Common to every call below:
 *  - host is a numeric IPv4 or IPv6 address ("127.0.0.1", "::1") or "localhost"
 *    (127.0.0.1); nothing else is resolved (EINVAL, before anything is allocated).
 *    The address is parsed as Pharo's NetNameResolver>>addressFromString: does: the
 *    SocketPlugin's resolver is not asked, and its status stays as it was.
 *  - A call that may wait must be made from a green process of the VM, on the thread
 *    that runs it (ENOTPROC otherwise; stream calls too) and takes timeout_ms: -1
 *    waits forever, 0 only tries, n > 0 waits at most n ms in all (ETIMEDOUT when it
 *    ran out; ERANGE when too long, see stvm_delay_wait_ms). Such calls switch.
 *  - A socket is a handle of its VM. Only one process at a time may wait to read
 *    (recv, or a stream's read), to write (send, flush) or to accept on one socket:
 *    another one gets EWAITING, with timeout_ms 0 too (a try would take the waiter's
 *    data and handler). A process terminated in such a wait leaves nothing
 *    registered, and the socket can be waited on again. ESTATE: the waiting process
 *    was suspended and resumed meanwhile.
 *  - Closing a socket or a stream a process waits on answers EINUSE and closes
 *    nothing.
 *  - ECLOSED: the peer closed or reset the connection (for send), or reset it (for
 *    recv), or the socket was closed. Nothing raises SIGPIPE.
 *  - A call that fails changes nothing: what it allocated is freed and taken out of
 *    stats.objects_allocated / bytes_allocated again (a connect that waited and then
 *    failed leaves nothing open, but its allocations stay counted: other processes
 *    allocated meanwhile).
 *  - stvm_vm_free closes the sockets still open and frees their handles. */
typedef struct stvm_socket stvm_socket;

/* Pharo's connection status values (Socket class>>initialize), answered by
 * stvm_socket_status and primitiveSocketConnectionStatus. */
#define STVM_SOCKET_INVALID (-1)
#define STVM_SOCKET_UNCONNECTED 0
#define STVM_SOCKET_WAITING_FOR_CONNECTION 1
#define STVM_SOCKET_CONNECTED 2
#define STVM_SOCKET_OTHER_END_CLOSED 3
#define STVM_SOCKET_THIS_END_CLOSED 4

/* Listen on host:port (port 0 picks a free one, see stvm_socket_port) with a backlog of
 * 1..65535 pending connections. Any thread that may call into the VM; never waits.
 * Allocates; the caller owns *out and closes it with stvm_socket_close.
 * Errors:
 *   EINVAL    vm, host or out NULL; host not one of the forms above; port outside
 *             0..65535; backlog outside 1..65535
 *   ESYS      the port is taken, or socket, bind or listen failed
 *   EFULL     the external table has no room for the three semaphores
 *   ENOMEM    no memory for the socket's handle, record or semaphores */
STVM_API int stvm_tcp_listen(stvm_vm *vm, const char *host, int port, int backlog,
                             stvm_socket **out);

/* Wait for a connection on listener and store a new connected socket in *out (owned by
 * the caller). Allocates; switches.
 * Errors:
 *   EINVAL    vm, listener or out NULL; not a listener of this VM; timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  another process already accepts on it (0 ms too)
 *   ETIMEDOUT no connection came within timeout_ms
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    timeout_ms too long (see stvm_delay_wait_ms)
 *   EFULL     the external table has no room for the new socket's semaphores
 *   ENOMEM    no memory for the new socket
 *   ESYS      accept failed
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_tcp_accept(stvm_vm *vm, stvm_socket *listener, int64_t timeout_ms,
                             stvm_socket **out);

/* Connect to host:port (1..65535) and store the connected socket in *out (owned by the
 * caller). On error nothing is left open. Allocates; switches.
 * Errors:
 *   EINVAL    vm, host or out NULL; a host not of the forms above; port out of range;
 *             timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ECONNREFUSED nobody listens there: refused
 *   ESYS      any other failure to connect, such as an unreachable address
 *   ETIMEDOUT not connected within timeout_ms
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    timeout_ms too long (see stvm_delay_wait_ms)
 *   EFULL     the external table has no room for the socket's semaphores
 *   ENOMEM    no memory for the socket
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_tcp_connect(stvm_vm *vm, const char *host, int port, int64_t timeout_ms,
                              stvm_socket **out);

/* Send all len bytes of buf, waiting for room as needed (Socket>>sendData: with
 * waitForSendDoneFor:). Answers len, or an error. len 0 answers 0 at once. The bytes
 * go through a 4 KiB buffer the VM lends for the call, 4 KiB per send at most.
 * Switches.
 * Errors:
 *   EINVAL    vm or s NULL; buf NULL with len > 0; len > INT64_MAX; s not a connected
 *             socket of this VM; timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  another process already waits to write on s (0 ms too)
 *   ECLOSED   the peer closed or reset the connection, or s was closed; some bytes may
 *             have been sent
 *   ETIMEDOUT not all sent within timeout_ms; some bytes may have been sent
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    timeout_ms too long (see stvm_delay_wait_ms)
 *   ENOMEM    no buffer could be lent for the send
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int64_t stvm_socket_send(stvm_vm *vm, stvm_socket *s, const void *buf, size_t len,
                                  int64_t timeout_ms);

/* Read up to len bytes into buf, Pharo's way: a non-blocking receive first; only when
 * nothing is there, Socket>>waitForDataFor: (data available? closed? then a timed wait
 * on the read semaphore, looping over spurious signals) and receive again. Answers the
 * bytes read (1..len), 0 at the orderly end of the stream (the peer closed and
 * everything was read), or an error. At most 4 KiB per call (the size of the buffer
 * the VM lends it, not held while it waits). A read that found nothing and waited
 * counts in stats.socket_reads_blocked. Switches.
 * Errors:
 *   EINVAL    vm, s or buf NULL; len 0 or > INT64_MAX; s not a connected socket of
 *             this VM; timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  another process already waits to read from s, itself or through its
 *             stream (0 ms too: a try would take the waiter's data)
 *   ECLOSED   the peer reset the connection, or s was closed
 *   ETIMEDOUT nothing arrived within timeout_ms
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    timeout_ms too long (see stvm_delay_wait_ms)
 *   ENOMEM    no buffer could be lent for the read
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int64_t stvm_socket_recv(stvm_vm *vm, stvm_socket *s, void *buf, size_t len,
                                  int64_t timeout_ms);

/* Close the socket (its stream too, if one is open on it) and free the handle, which
 * must not be used afterwards. Never waits.
 * Errors:
 *   EINVAL    vm or s NULL; s not a socket of this VM
 *   EINUSE    a process waits on it (to read, write, accept or connect, itself or
 *             through its stream): nothing is closed */
STVM_API int stvm_socket_close(stvm_vm *vm, stvm_socket *s);

/* The descriptor (for stvm_fd_wait or socket options; it stays the socket's: do not
 * close it, nor wait on it while the socket's own calls wait).
 * Errors:
 *   EINVAL    s NULL, or not a socket (a stream or another handle) */
STVM_API int stvm_socket_fd(const stvm_socket *s);

/* The local port of a listener; the peer's port of a connected or accepted socket.
 * Errors:
 *   EINVAL    s NULL, or not a socket
 *   ESYS      the system cannot tell the port */
STVM_API int stvm_socket_port(const stvm_socket *s);

/* Pharo's connection status of the socket (STVM_SOCKET_*), or EINVAL (NULL, not a
 * socket of this VM). EINVAL and STVM_SOCKET_INVALID are both -1, on purpose: either way
 * there is no socket to use (INVALID is Pharo's answer for a destroyed handle). Looking
 * may complete a connection or take a pending one from the backlog, as the primitive
 * does; it leaves a listener's handler disarmed unless a process accepts on it. */
STVM_API int stvm_socket_status(stvm_vm *vm, stvm_socket *s);

/* The socket's read semaphore, signalled when its descriptor is found readable. For
 * tests and tools: a signal with no data behind it is a spurious one, which a reader
 * loops over. NULL for NULL or a handle of another kind (a stream, a semaphore...; as
 * stvm_socket_fd, it takes no vm, so it cannot tell another VM's socket). */
STVM_API stvm_semaphore *stvm_socket_read_semaphore(stvm_socket *s);

/* Name s, and read its name (stvm/core.h, "Names"): the name covers its stream and its
 * three internal semaphores ("conn.read", "conn.write", "conn.connection"). */
STVM_API int stvm_socket_set_name(stvm_vm *vm, stvm_socket *s, const char *name);
STVM_API int stvm_socket_get_name(stvm_vm *vm, const stvm_socket *s, char *buf, size_t size);

/* ---- Socket streams (Pharo's SocketStream, Zodiac's ZdcSocketStream) -------------
 * A stream over a connected socket with a 4 KiB read buffer and a 4 KiB write buffer.
 * A read takes what is buffered; an empty buffer is filled by a non-blocking receive
 * first, and only when nothing is there does the stream wait (Socket>>waitForDataFor:
 * with the stream's timeout); that wait counts as a blocked read, in the stream's
 * counters and in stats.socket_reads_blocked. Writes collect in the buffer and go out
 * when it is full or at stvm_stream_flush (waitForSendDoneFor: before each send).
 * The buffers are the VM's, lent while they hold bytes (read and not yet taken, written
 * and not yet sent): a stream blocked in a read with nothing unsent holds none. A call
 * that needs one may therefore answer ENOMEM.
 * The calls that may wait follow the socket rules above (ENOTPROC, EWAITING, ECLOSED,
 * ETIMEDOUT with the stream's timeout, ESTATE). */
typedef struct stvm_stream stvm_stream;

typedef struct stvm_stream_stats {
    uint64_t fills;              /* receives that brought bytes into the read buffer */
    uint64_t reads_blocked;      /* fills that found nothing and waited */
    uint64_t flushes;            /* sends of the write buffer */
    uint64_t bytes_in, bytes_out;
    uint64_t buffer_bytes;       /* now: bytes of the VM's 4 KiB buffers the stream holds
                                    (0, 4096 or 8192): a read buffer while it has unread
                                    bytes, a write buffer while it has unsent ones */
} stvm_stream_stats;

/* Open a stream on a connected socket; timeout_ms (-1 = forever) bounds each wait.
 * One stream per socket. Allocates; never waits.
 * Errors:
 *   EINVAL    vm, s or out NULL; s not a socket of this VM; timeout_ms < -1
 *   ESTATE    a stream is already open on s
 *   ENOMEM    no memory for the stream */
STVM_API int stvm_stream_open(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms,
                              stvm_stream **out);
/* Read up to len bytes (at least 1; 0 at the end of the stream). Switches.
 * Errors:
 *   EINVAL    vm, st or buf NULL; len 0 or > INT64_MAX; st not a stream of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  nothing is buffered and another process already waits to read from st's
 *             socket, through st or directly
 *   ECLOSED   the peer reset the connection
 *   ETIMEDOUT nothing arrived within the stream's timeout
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    the stream's timeout too long (see stvm_delay_wait_ms)
 *   ENOMEM    no buffer could be lent for the read, or no memory to start the Delay
 *             scheduler (the VM's first timed wait)
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int64_t stvm_stream_read(stvm_vm *vm, stvm_stream *st, void *buf, size_t len);
/* Read one line ending in LF (a CR before it is dropped too) into buf as a C string
 * without its end of line. Answers its length, or: 0 with buf "" at the end of the
 * stream, ERANGE (the line does not fit cap - 1 bytes; what fitted is consumed),
 * EINVAL (cap 0), and the errors of stvm_stream_read. A last line without LF is
 * answered as a line. On an error buf is untouched, unless bytes of the line were taken
 * from the stream (ERANGE: the cap - 1 that fitted; or a read failing in mid-line):
 * then buf holds them as a C string, so that nothing read is lost. Switches. */
STVM_API int64_t stvm_stream_read_line(stvm_vm *vm, stvm_stream *st, char *buf, size_t cap);
/* Buffer len bytes, sending the buffer whenever it fills. Switches. On an error some
 * of the bytes may have been buffered or sent.
 * Errors:
 *   EINVAL    vm or st NULL; buf NULL with len > 0; len > INT64_MAX; st not a stream
 *             of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  the buffer is full and another process already waits to write on st's
 *             socket
 *   ECLOSED   the peer closed or reset the connection; what was not sent stays buffered
 *   ETIMEDOUT a full buffer was not sent within the stream's timeout; what was not sent
 *             stays buffered
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    the stream's timeout too long (see stvm_delay_wait_ms)
 *   ENOMEM    no buffer could be lent for the bytes, or no memory to start the Delay
 *             scheduler (the VM's first timed wait)
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_stream_write(stvm_vm *vm, stvm_stream *st, const void *buf, size_t len);
/* Send what is buffered (one send when it fits the socket's room). Switches.
 * Errors:
 *   EINVAL    vm or st NULL; st not a stream of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  another process already waits to write on st's socket
 *   ECLOSED   the peer closed or reset the connection; what was not sent stays buffered
 *   ETIMEDOUT not all sent within the stream's timeout; what was not sent stays buffered
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    the stream's timeout too long (see stvm_delay_wait_ms)
 *   ENOMEM    no memory to start the Delay scheduler (the VM's first timed wait)
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_stream_flush(stvm_vm *vm, stvm_stream *st);
/* Copy the stream's counters into the first out_size bytes of *out.
 * Errors:
 *   EINVAL    st or out NULL; st not a stream
 *   ESIZE     out_size not a size of stvm_stream_stats this library knows */
STVM_API int stvm_stream_get_stats_(const stvm_stream *st, stvm_stream_stats *out,
                                    size_t out_size);
#define stvm_stream_get_stats(st, out) \
    stvm_stream_get_stats_((st), (out), sizeof(stvm_stream_stats))
/* Close the stream (bytes still buffered for writing are dropped: flush first) and free
 * it; the socket stays open.
 * Errors:
 *   EINVAL    vm or st NULL; st not a stream of this VM
 *   EINUSE    a process waits in it or on its socket: nothing is closed */
STVM_API int stvm_stream_close(stvm_vm *vm, stvm_stream *st);

#ifdef __cplusplus
}
#endif
#endif /* STVM_NET_H */
