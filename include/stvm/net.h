/*
 * stvm/net.h -- network and descriptors: waiting on a file descriptor, stream sockets
 * (Pharo's Socket: TCP over IPv4 and IPv6, and Unix domain sockets), and socket streams
 * (SocketStream). Includes stvm/core.h; <stvm.h> includes it.
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

/* ---- Sockets (TCP over IPv4 and IPv6, Unix domain) ------------------------------- */

/* A stream socket, TCP or Unix domain, built on the image side's Socket as Pharo's is:
 * non-blocking descriptors, the SocketPlugin primitives (stvm_primitive_call_named,
 * module "SocketPlugin"), three semaphores registered in the external table
 * (connection, read, write), one-shot readiness handlers, and waits bounded through the
 * Delay scheduler (Pharo's DelayWaitTimeout: each timed wait that blocks costs a
 * schedule and an unschedule in the priority-80 timing process, counted in
 * stats.timed_waits). Every call below works on TCP and Unix sockets alike, unless its
 * comment says otherwise.
 *
 * Common to every call below:
 *  - host is a numeric IPv4 or IPv6 address ("127.0.0.1", "::1"), "localhost"
 *    (127.0.0.1), or, for stvm_tcp_connect only, a host name ("db.example.com", the
 *    machine's own name), which is looked up as getaddrinfo does (/etc/hosts, DNS) on
 *    the VM's worker threads while other processes run. Anything else is EINVAL, before
 *    anything is allocated. An address is parsed as Pharo's
 *    NetNameResolver>>addressFromString: does, without a lookup: the SocketPlugin's
 *    resolver is not asked, and its status stays as it was.
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
 *  - The connection, as BSD sockets, libuv and Go have it: after the peer's FIN (its
 *    shutdown(SHUT_WR) or close) reads answer EEOF once everything it sent was read,
 *    and every later read answers EEOF again; sending goes on until this side shuts
 *    (stvm_socket_shutdown) or closes, or the peer resets the connection. Pharo's
 *    Socket counts the peer's FIN as the end of the connection (its status turns
 *    OtherEndClosed, which stvm_socket_status answers here too: the primitives keep
 *    Pharo's rule, docs/differences-from-pharo.md). Nothing raises SIGPIPE.
 *  - The operating system's errors are the library's codes through one map:
 *    ECONNRESET (the peer reset the connection: sends and reads alike), EPIPE (a send
 *    the system refused because the connection is broken), EADDRINUSE,
 *    EADDRNOTAVAIL, ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, EACCES, EMFILE, ENOENT,
 *    ETIMEDOUT, ENOMEM. ESYS is every other failure of the system, and then errno
 *    holds the system's code when the call returns.
 *  - ECLOSED: a send or a stream's write or flush after this side shut its sending
 *    direction (checked before any system call).
 *  - A call that fails changes nothing: what it allocated is freed and taken out of
 *    stats.objects_allocated / bytes_allocated again (a connect that waited and then
 *    failed leaves nothing open, but its allocations stay counted: other processes
 *    allocated meanwhile).
 *  - stvm_vm_free closes the sockets still open and frees their handles. It never
 *    removes a Unix socket's path (see stvm_unix_listen). */
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
 * 1..65535 pending connections. host is an address or "localhost" only: a listen never
 * waits, and a name lookup may (it can take seconds when a name server is slow), so a
 * program that listens on a name looks it up itself. Any thread that may call into the
 * VM; never waits. Allocates; the caller owns *out and closes it with
 * stvm_socket_close.
 * Errors:
 *   EINVAL    vm, host or out NULL; host not an address or "localhost"; port outside
 *             0..65535; backlog outside 1..65535
 *   EADDRINUSE    the port is taken
 *   EADDRNOTAVAIL host is not an address of this machine
 *   EACCES    the system does not let this program use the port
 *   EMFILE    no descriptor left (this process's limit or the system's)
 *   ESYS      socket, bind or listen failed for another reason (errno says why)
 *   EFULL     the external table has no room for the three semaphores
 *   ENOMEM    no memory for the socket's handle, record or semaphores */
STVM_API int stvm_tcp_listen(stvm_vm *vm, const char *host, int port, int backlog,
                             stvm_socket **out);

/* Connect to host:port (1..65535) and store the connected socket in *out (owned by the
 * caller). A host name is looked up first, off the VM's thread (the threads of the
 * FFI's pool, stvm_config.ffi_workers) while other processes run; then each address it
 * has is tried in the order the system gives them until one connects, each attempt
 * given an equal share of the time left (at least 2 s), as Go's dialer does. timeout_ms
 * bounds the lookup and the connects together. A process interrupted or terminated
 * while the name is looked up leaves the lookup to its worker thread, which frees what
 * it finds; the lookup's job (a semaphore in the external table) is kept for the VM's
 * next one. stvm_vm_free waits for a lookup still running as for a threaded FFI call
 * (at most 5 s, then its thread is left to finish it alone). On error nothing is left
 * open. Allocates; switches.
 * Errors:
 *   EINVAL    vm, host or out NULL; host neither an address nor a host name; port out
 *             of range; timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ENOTFOUND host is a name that does not resolve (no such name, or no name server
 *             answered)
 *   ECONNREFUSED  nobody listens there: refused
 *   ENETUNREACH, EHOSTUNREACH  no route to the network or host
 *   EACCES    the system did not let the connection be made
 *   EADDRNOTAVAIL, EMFILE, ESYS  the system's other refusals (for a name, the last
 *             address's)
 *   ETIMEDOUT not looked up and connected within timeout_ms
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    timeout_ms too long (see stvm_delay_wait_ms)
 *   EFULL     the external table has no room for the socket's semaphores, or for the
 *             lookup's
 *   ENOMEM    no memory for the socket
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_tcp_connect(stvm_vm *vm, const char *host, int port, int64_t timeout_ms,
                              stvm_socket **out);

/* Listen on a Unix domain socket at path (at most 107 bytes, as sun_path holds them
 * with the NUL; a path in the file system: Linux's abstract names are not taken) with a
 * backlog of 1..65535. The library never removes a path it did not make, and leaves
 * the one it made in place when the listener is closed, as libuv does: removing it at
 * close could remove the socket another server bound there meanwhile. A server removes
 * a stale path before it listens (unlink(path), ignoring ENOENT) and its own after it
 * closes. Any thread that may call into the VM; never waits. Allocates; the caller owns
 * *out (stvm_socket_close).
 * Errors:
 *   EINVAL    vm, path or out NULL; path "" or too long for sun_path; backlog outside
 *             1..65535
 *   EADDRINUSE    something exists at path (a socket left by an earlier run too)
 *   ENOENT    a directory of path does not exist
 *   EACCES    the directory may not be written
 *   EMFILE    no descriptor left
 *   ESYS      socket, bind or listen failed for another reason (errno says why:
 *             ENOTDIR for a path through a file, ...)
 *   EFULL, ENOMEM as stvm_tcp_listen */
STVM_API int stvm_unix_listen(stvm_vm *vm, const char *path, int backlog,
                              stvm_socket **out);

/* Connect to the Unix domain socket at path and store the connected socket in *out
 * (owned by the caller). On error nothing is left open. Allocates; switches.
 * Errors:
 *   EINVAL    vm, path or out NULL; path "" or too long for sun_path; timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   ENOENT    nothing exists at path
 *   ECONNREFUSED  nobody listens there (a path left by a server that has gone, or a
 *             file that is not a socket)
 *   EACCES    the socket or a directory of path may not be used
 *   ESYS      connect failed for another reason (errno says why: EAGAIN when the
 *             listener's backlog is full, as libuv and Go answer it)
 *   ETIMEDOUT, ESTATE, ERANGE, EFULL, ENOMEM, EINTR as stvm_tcp_connect */
STVM_API int stvm_unix_connect(stvm_vm *vm, const char *path, int64_t timeout_ms,
                               stvm_socket **out);

/* Wait for a connection on listener (TCP or Unix) and store a new connected socket in
 * *out (owned by the caller). Allocates; switches. (Its name was stvm_tcp_accept, which
 * stays a macro for it in stvm/deprecated.h for one release.)
 * Out of descriptors: an accept that finds a connection waiting but no descriptor for it
 * answers EMFILE at once, and the listener is then starved: the connection stays in the
 * backlog, the VM stops watching the listener (it would be ready again at once), and
 * the system is asked again only when this VM closes a descriptor (any socket's) or
 * 100 ms after it was last asked. An accept on a starved listener waits for that within
 * its timeout (so a server that loops on accept is answered at the pace of its timeouts,
 * the VM asleep between), takes the connection as soon as a descriptor is free, and
 * answers EMFILE when its time runs out with none free (0 ms: at once).
 * Errors:
 *   EINVAL    vm, listener or out NULL; not a listener of this VM; timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  another process already accepts on it (0 ms too)
 *   ETIMEDOUT no connection came within timeout_ms
 *   EMFILE    a connection waits, but no descriptor is left for it (this process's
 *             or the system's limit; above): nothing taken, the connection waits
 *   ENOMEM    no memory for the new socket (the system's, or the VM's)
 *   EACCES, ESYS  the system's other refusals of accept (errno says why)
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    timeout_ms too long (see stvm_delay_wait_ms)
 *   EFULL     the external table has no room for the new socket's semaphores
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_socket_accept(stvm_vm *vm, stvm_socket *listener, int64_t timeout_ms,
                                stvm_socket **out);

/* Send all len bytes of buf, waiting for room as needed (Socket>>sendData: with
 * waitForSendDoneFor:), also after the peer's FIN. Answers len, or an error. len 0
 * answers 0 at once. The bytes go through a 4 KiB buffer the VM lends for the call,
 * 4 KiB per send at most. Switches.
 * Errors:
 *   EINVAL    vm or s NULL; buf NULL with len > 0; len > INT64_MAX; s not a connected
 *             socket of this VM; timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  another process already waits to write on s (0 ms too)
 *   ECLOSED   this side shut its sending direction (stvm_socket_shutdown): nothing sent
 *   ECONNRESET the peer reset the connection; some bytes may have been sent
 *   EPIPE     the system refused the send: the connection is broken (the peer closed
 *             it and then reset it); some bytes may have been sent
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
 * bytes read (1..len), or an error: EEOF at the end of the stream. At most 4 KiB per
 * call (the size of the buffer the VM lends it, not held while it waits). A read that
 * found nothing and waited counts in stats.socket_reads_blocked. Switches.
 *   while ((n = stvm_socket_recv(vm, s, buf, sizeof buf, -1)) > 0) ...;
 *   if (n != STVM_EEOF) ... the connection failed ...
 * Errors:
 *   EINVAL    vm, s or buf NULL; len 0 or > INT64_MAX; s not a connected socket of
 *             this VM; timeout_ms < -1
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  another process already waits to read from s, itself or through its
 *             stream (0 ms too: a try would take the waiter's data)
 *   EEOF      the end of the stream: the peer shut its sending side (its FIN) and
 *             everything it sent was read, or this side shut its reading direction
 *             (stvm_socket_shutdown); every later recv answers EEOF again
 *   ECONNRESET the peer reset the connection (or another error of the system ended
 *             it: its code)
 *   ETIMEDOUT nothing arrived within timeout_ms
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    timeout_ms too long (see stvm_delay_wait_ms)
 *   ENOMEM    no buffer could be lent for the read
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int64_t stvm_socket_recv(stvm_vm *vm, stvm_socket *s, void *buf, size_t len,
                                  int64_t timeout_ms);

/* Shut one direction of the connection or both, as shutdown(2): how is <sys/socket.h>'s
 * SHUT_RD (0 on Linux: this side reads no more), SHUT_WR (1: this side sends no more;
 * the peer reads to its end of the stream) or SHUT_RDWR (2: both); no other value is
 * taken. After SHUT_RD, recv and a stream's reads answer EEOF (a stream first gives the
 * bytes it has buffered); after SHUT_WR, send and a stream's writes and flushes answer
 * ECLOSED. Shutting a direction again is a no-op, and so is shutting one of a
 * connection that has ended in order (both sides' FINs; the system would answer
 * ENOTCONN). Before shutting the sending direction
 * the bytes a stream on s holds for sending are flushed, within the stream's write
 * timeout, so that nothing written is lost: that flush switches, and needs a green
 * process (ENOTPROC otherwise); with nothing to flush the call never waits and works
 * from any thread that may call into the VM. The flush is not undone when the call
 * then fails.
 * Errors:
 *   EINVAL    vm or s NULL; s not a connected socket of this VM (a listener); how not
 *             one of the three
 *   EINUSE    a process waits to read from s (SHUT_RD, SHUT_RDWR) or to write on it
 *             (SHUT_WR, SHUT_RDWR): nothing is shut
 *   ENOTPROC  a stream on s holds unsent bytes and the caller is not a green process
 *             of vm on its thread
 *   ECONNRESET the connection is gone (reset); otherwise what ended it (ESYS with
 *             errno ENOTCONN when nothing says)
 *   and the errors of stvm_stream_flush when the stream's bytes could not be sent:
 *   nothing is shut */
STVM_API int stvm_socket_shutdown(stvm_vm *vm, stvm_socket *s, int how);

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

/* The local port of a listener; the peer's port of a connected or accepted socket; 0
 * for a Unix socket.
 * Errors:
 *   EINVAL    s NULL, or not a socket
 *   ESYS      the system cannot tell the port */
STVM_API int stvm_socket_port(const stvm_socket *s);

/* The peer's address of a connected or accepted socket as text into buf (size bytes
 * with the NUL), and its port into *port (port may be NULL): for TCP the numeric
 * address as inet_ntop writes it ("127.0.0.1", "::1", "::ffff:10.0.0.1"), for a Unix
 * socket the path it is connected to ("" for the accepted end of a connection, whose
 * peer has no path) and port 0. On an error buf and *port are untouched. Never waits;
 * allocates nothing that outlives the call.
 * Errors:
 *   EINVAL    vm, s or buf NULL; size 0; s not a connected socket of this VM
 *   ERANGE    the text and its NUL do not fit size bytes (INET6_ADDRSTRLEN, 46, fits
 *             any IP address; 108 any Unix path)
 *   ECONNRESET the connection is gone, and with it what the system knew of the peer
 *             (or what else ended it; ESYS with errno ENOTCONN when nothing says)
 *   ENOMEM    no memory for the primitive's ByteArray */
STVM_API int stvm_socket_peer_address(stvm_vm *vm, const stvm_socket *s, char *buf,
                                      size_t size, int *port);
/* The socket's own address, as stvm_socket_peer_address: the address and port a
 * listener or a connection's end is bound to ("0.0.0.0" for a TCP listener on every
 * interface), the path of a Unix listener and of the ends it accepted ("" for a
 * client's end). A listener too.
 * Errors:
 *   EINVAL    vm, s or buf NULL; size 0; s not a socket of this VM
 *   ERANGE, ECONNRESET, ENOMEM as stvm_socket_peer_address */
STVM_API int stvm_socket_local_address(stvm_vm *vm, const stvm_socket *s, char *buf,
                                       size_t size, int *port);

/* Pharo's connection status of the socket (STVM_SOCKET_*), or EINVAL (NULL, not a
 * socket of this VM). EINVAL and STVM_SOCKET_INVALID are both -1, on purpose: either way
 * there is no socket to use (INVALID is Pharo's answer for a destroyed handle). Looking
 * may complete a connection or take a pending one from the backlog, as the primitive
 * does; it leaves a listener's handler disarmed unless a process accepts on it. After
 * the peer's FIN has been read the status is OTHER_END_CLOSED, Pharo's answer, though
 * the socket still sends; this side's shutdown does not change it. */
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
 * with the stream's read timeout); that wait counts as a blocked read, in the stream's
 * counters and in stats.socket_reads_blocked. Writes collect in the buffer and go out
 * when it is full or at stvm_stream_flush (waitForSendDoneFor: before each send, all
 * within the stream's write timeout).
 * The buffers are the VM's, lent while they hold bytes (read and not yet taken, written
 * and not yet sent): a stream blocked in a read with nothing unsent holds none. A call
 * that needs one may therefore answer ENOMEM.
 * The calls that may wait follow the socket rules above (ENOTPROC, EWAITING, EEOF,
 * ECONNRESET, EPIPE, ECLOSED, ETIMEDOUT with the stream's read or write timeout,
 * ESTATE). */
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

/* Open a stream on a connected socket; timeout_ms (-1 = forever) bounds each read's wait
 * and each flush (its read and write timeouts, which the two calls below set apart).
 * One stream per socket. Allocates; never waits.
 * Errors:
 *   EINVAL    vm, s or out NULL; s not a socket of this VM; timeout_ms < -1
 *   ESTATE    a stream is already open on s
 *   ENOMEM    no memory for the stream */
STVM_API int stvm_stream_open(stvm_vm *vm, stvm_socket *s, int64_t timeout_ms,
                              stvm_stream **out);
/* Set the stream's read timeout (-1 = forever, 0 = only what is there): the bound of
 * each wait of stvm_stream_read and stvm_stream_read_line from the next one on, as Go's
 * SetReadDeadline: a server times out idle readers without cutting short slow writes.
 * A read already waiting keeps its bound. Any thread that may call into the VM; never
 * waits. A timeout too long for the Delay scheduler is answered ERANGE by the wait.
 * Errors:
 *   EINVAL    vm or st NULL; st not a stream of this VM; timeout_ms < -1 */
STVM_API int stvm_stream_set_read_timeout_ms(stvm_vm *vm, stvm_stream *st,
                                             int64_t timeout_ms);
/* Set the stream's write timeout: the bound of each flush (a write that fills the buffer
 * flushes it; stvm_socket_shutdown's flush too), as stvm_stream_set_read_timeout_ms.
 * Errors:
 *   EINVAL    vm or st NULL; st not a stream of this VM; timeout_ms < -1 */
STVM_API int stvm_stream_set_write_timeout_ms(stvm_vm *vm, stvm_stream *st,
                                              int64_t timeout_ms);
/* Read up to len bytes (at least 1), or EEOF at the end of the stream (once what the
 * stream buffered has been read, and every time after). Switches.
 * Errors:
 *   EINVAL    vm, st or buf NULL; len 0 or > INT64_MAX; st not a stream of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  nothing is buffered and another process already waits to read from st's
 *             socket, through st or directly
 *   EEOF      the end of the stream (stvm_socket_recv's)
 *   ECONNRESET the peer reset the connection (or another error of the system ended it)
 *   ETIMEDOUT nothing arrived within the stream's read timeout
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    the stream's read timeout too long (see stvm_delay_wait_ms)
 *   ENOMEM    no buffer could be lent for the read, or no memory to start the Delay
 *             scheduler (the VM's first timed wait)
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int64_t stvm_stream_read(stvm_vm *vm, stvm_stream *st, void *buf, size_t len);
/* Read one line ending in LF (a CR before it is dropped too) into buf as a C string
 * without its end of line. Answers its length (0 for an empty line, buf ""); a last
 * line without LF is answered as a line; then EEOF at the end of the stream, every
 * time, so that
 *   while ((n = stvm_stream_read_line(vm, st, line, sizeof line)) >= 0) ...;
 * ends with n == STVM_EEOF or the error that stopped it. ERANGE: the line does not fit
 * cap - 1 bytes (what fitted is consumed); EINVAL: cap 0; and the errors of
 * stvm_stream_read. On an error buf is untouched, unless bytes of the line were taken
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
 *   ECLOSED   st's socket is shut for sending (stvm_socket_shutdown): nothing buffered
 *   ECONNRESET, EPIPE  the connection broke (stvm_socket_send's); what was not sent
 *             stays buffered
 *   ETIMEDOUT a full buffer was not sent within the stream's write timeout; what was
 *             not sent stays buffered
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    the stream's write timeout too long (see stvm_delay_wait_ms)
 *   ENOMEM    no buffer could be lent for the bytes, or no memory to start the Delay
 *             scheduler (the VM's first timed wait)
 *   EINTR     interrupted (stvm_process_interrupt) or its waits cancelled while it
 *             waited: nothing taken */
STVM_API int stvm_stream_write(stvm_vm *vm, stvm_stream *st, const void *buf, size_t len);
/* Send what is buffered (one send when it fits the socket's room), also after the
 * peer's FIN. Switches.
 * Errors:
 *   EINVAL    vm or st NULL; st not a stream of this VM
 *   ENOTPROC  not called from a green process of vm on its thread
 *   EWAITING  another process already waits to write on st's socket
 *   ECLOSED   st's socket is shut for sending and bytes are buffered: they stay
 *   ECONNRESET, EPIPE  the connection broke; what was not sent stays buffered
 *   ETIMEDOUT not all sent within the stream's write timeout; what was not sent stays
 *             buffered
 *   ESTATE    the caller was suspended while it waited, and resumed
 *   ERANGE    the stream's write timeout too long (see stvm_delay_wait_ms)
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
/* Close the stream (bytes still buffered for writing are dropped: flush first, or shut
 * the socket's sending side, which flushes) and free it; the socket stays open.
 * Errors:
 *   EINVAL    vm or st NULL; st not a stream of this VM
 *   EINUSE    a process waits in it or on its socket: nothing is closed */
STVM_API int stvm_stream_close(stvm_vm *vm, stvm_stream *st);

#ifdef __cplusplus
}
#endif
#endif /* STVM_NET_H */
