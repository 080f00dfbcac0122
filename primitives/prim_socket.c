/*
 * The SocketPlugin's sockets: the module's state, the socket record check, creation,
 * connection, listening and accepting, the connection status, closing and destroying
 * (sqUnixSocket.c's sqSocketCreate..., sqSocketConnectToPort, sqSocketListenOn...,
 * sqSocketAcceptFrom..., sqSocketConnectionStatus, sqSocketCloseConnection,
 * sqSocketAbortConnection, sqSocketDestroy).
 *
 * Every primitive here answers a new object or its receiver, or fails with Pharo's
 * code having changed nothing. Whether a connection attempt worked is not a primitive
 * failure: as in Pharo, the status says so (Unconnected, with primitiveSocketError).
 */
#include "sockaddr.h"
#include "socket_lookup.h"
#include "socket_plugin.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../vm/aio.h"
#include "../vm/clock.h"
#include "../vm/alloc.h"

/* ---- the module's state --------------------------------------------------------- */

/* stvm_vm_free: every descriptor still open is closed (the records go with object
 * memory), and the name lookups' jobs are freed (the FFI's pool, which ran them, has
 * stopped before: vm->ffi.destroy runs first). */
static void plugin_destroy(stvm_vm *vm)
{
    socket_plugin *p = vm->sockets.state;
    /* Nobody accepts any more: the closes below wake no starved listener. */
    for (stvm_socket_handle *h = p->open; h; h = h->next_open)
        h->starved = false;
    p->starved = 0;
    while (p->open)
        stvm__socket_close_fds(vm, p->open, false);
    stvm__lookups_destroy(vm);
    free(p);
    vm->sockets.state = NULL;
    vm->sockets.destroy = NULL;
}

socket_plugin *stvm__socket_plugin(stvm_vm *vm)
{
    if (!vm->sockets.state) {
        socket_plugin *p = stvm__calloc(1, sizeof *p);
        if (!p)
            return NULL;
        vm->sockets.state = p;
        vm->sockets.destroy = plugin_destroy;
    }
    return vm->sockets.state;
}

static void open_list_add(socket_plugin *p, stvm_socket_handle *h)
{
    h->prev_open = NULL;
    h->next_open = p->open;
    if (p->open)
        p->open->prev_open = h;
    p->open = h;
}

static void open_list_remove(socket_plugin *p, stvm_socket_handle *h)
{
    if (h->prev_open)
        h->prev_open->next_open = h->next_open;
    else if (p->open == h)
        p->open = h->next_open;
    if (h->next_open)
        h->next_open->prev_open = h->prev_open;
    h->prev_open = h->next_open = NULL;
}

/* ---- helpers the plugin's files share ------------------------------------------- */

stvm_socket_handle *stvm__socket_handle(stvm_vm *vm, stvm_oop oop, int *fail)
{
    stvm_socket_handle *h = stvm__prim_object_of(vm, oop, STVM_CLASS_SOCKET_HANDLE);
    if (!h) {
        *fail = STVM_PRIM_ERR_BAD_ARGUMENT;
        return NULL;
    }
    if (h->destroyed) {
        *fail = STVM_PRIM_ERR_GENERIC;
        return NULL;
    }
    return h;
}

void stvm__socket_notify(stvm_vm *vm, int index)
{
    if (index >= 1)
        stvm_external_signal(vm, index);
}

void stvm__socket_arm(stvm_vm *vm, stvm_socket_handle *h, int event, int index, bool looked)
{
    if (h->fd < 0 || index < 1 || (stvm__aio_armed(vm, h->fd) & event))
        return;
    if (looked)
        stvm__aio_rearm(vm, h->fd, event, index);
    else
        stvm__aio_arm(vm, h->fd, event, index);
}

/* ---- listeners starved of descriptors ---------------------------------------------
 * An accept(2) that fails for want of a descriptor (EMFILE, ENFILE) or of kernel memory
 * (ENOBUFS, ENOMEM) leaves the connection in the backlog, so the listener stays ready:
 * watched again, epoll would report it at once, and every look would fail the same way
 * (the VM spun on accept4 and epoll_ctl at 100% of a core, issue 32). Such a listener is
 * starved instead: its read handler is disarmed, and the system is asked again only once
 * something may have changed: the VM closed a descriptor (any socket's: the waiting
 * accept is woken at once), or ACCEPT_RETRY_US passed since the last try (a descriptor
 * the embedder closed, which the VM cannot see). libuv closes a reserve descriptor to
 * take and drop the connection instead; here the connection waits for a descriptor, as
 * Go's and nginx's servers let it (they pause accepting). */
#define ACCEPT_RETRY_US 100000

static void starve(stvm_vm *vm, stvm_socket_handle *h)
{
    socket_plugin *p = vm->sockets.state;
    if (!h->starved && p) {
        h->starved = true;
        p->starved++;
    }
    h->accept_retry_us = stvm__clock_now_us(vm) + ACCEPT_RETRY_US;
    stvm__aio_disarm(vm, h->fd, STVM_IO_READ);
}

static void unstarve(stvm_vm *vm, stvm_socket_handle *h)
{
    socket_plugin *p = vm->sockets.state;
    if (h->starved && p) {
        h->starved = false;
        p->starved--;
    }
}

/* The VM closed a descriptor: each starved listener is asked again at its next look, and
 * an accept waiting on one is woken (its connection semaphore). */
static void feed_starved(stvm_vm *vm)
{
    socket_plugin *p = vm->sockets.state;
    for (stvm_socket_handle *h = p ? p->open : NULL; h && p->starved; h = h->next_open)
        if (h->starved) {
            unstarve(vm, h);
            stvm__socket_notify(vm, h->sema);
        }
}

bool stvm__socket_plugin_starved(stvm_vm *vm, stvm_oop handle, int64_t *retry_ms)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, handle, &fail);
    if (!h || !h->starved)
        return false;
    uint64_t now = stvm__clock_now_us(vm);
    uint64_t left = h->accept_retry_us > now ? h->accept_retry_us - now : 0;
    *retry_ms = (int64_t)((left + 999) / 1000);
    if (*retry_ms < 1)
        *retry_ms = 1;
    return true;
}

static void close_one(stvm_vm *vm, int fd, bool abort)
{
    if (fd < 0)
        return;
    if (abort) {
        struct linger l = {.l_onoff = 1, .l_linger = 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    stvm__aio_forget(vm, fd);
    close(fd);
    feed_starved(vm);
}

void stvm__socket_close_fds(stvm_vm *vm, stvm_socket_handle *h, bool abort)
{
    unstarve(vm, h);
    close_one(vm, h->fd, abort);
    close_one(vm, h->accepted_fd, true);
    h->fd = h->accepted_fd = -1;
    socket_plugin *p = vm->sockets.state;
    if (p)
        open_list_remove(p, h);
}

bool stvm__socket_int_arg(stvm_vm *vm, stvm_oop oop, int64_t *out)
{
    if (!stvm__is_si_of(vm, oop))
        return false;
    *out = stvm__si_value(oop);
    return true;
}

/* ---- creation ------------------------------------------------------------------- */

static int new_descriptor(int family)
{
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && family != AF_UNIX) {
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    }
    return fd;
}

/* The Unix plugin's netType, the domain of the new descriptor (its socket family
 * enumeration: 0 unspecified and 2 are IPv4, 1 the local domain, 3 IPv6); 0 for any
 * other value. */
static int domain_of(int64_t net_type)
{
    switch (net_type) {
    case 0: case 2: return AF_INET;
    case 1: return AF_UNIX;
    case 3: return AF_INET6;
    default: return 0;
    }
}

/* A semaphore index argument: 0 (none) or a slot of the external table. */
static bool sema_arg(stvm_vm *vm, stvm_oop oop, int *out)
{
    int64_t v;
    if (!stvm__socket_int_arg(vm, oop, &v) || v < 0 || v > vm->ext.size)
        return false;
    *out = (int)v;
    return true;
}

/* A record for fd in state, with its three semaphore indices; it joins the open list. */
static int make_handle(stvm_vm *vm, socket_plugin *p, int fd, int family, int state,
                       const int sema[3], stvm_oop *result)
{
    stvm_socket_handle *h =
        stvm__objmem_alloc(vm, STVM_CLASS_SOCKET_HANDLE, sizeof(stvm_socket_handle));
    if (!h)
        return STVM_PRIM_ERR_NO_MEMORY;
    h->vm = vm;
    h->fd = fd;
    stvm__aio_own(vm, fd);
    h->family = family;
    h->state = state;
    h->sema = sema[0];
    h->read_sema = sema[1];
    h->write_sema = sema[2];
    h->accepted_fd = -1;
    open_list_add(p, h);
    *result = (stvm_oop)h;
    return PRIM_OK;
}

/* The three semaphore indices (connection, read, write) starting at args[first]. */
static int creation_args(stvm_vm *vm, const stvm_oop *args, int first, int sema[3])
{
    for (int i = 0; i < 3; i++)
        if (!sema_arg(vm, args[first + i], &sema[i]))
            return STVM_PRIM_ERR_BAD_ARGUMENT;
    return PRIM_OK;
}

/* primitiveSocketCreate3Semaphores: netType type rcvBufSize sendBufSize semaIndex
 * readSemaIndex writeSemaIndex -> a socket record. netType is the domain, as the Unix
 * plugin's (domain_of: 1 makes a Unix domain socket, which the generalised address
 * primitives bind, listen and connect); any other value fails. Stream sockets only
 * (type 0): UDP (1) is not modelled. */
int stvm__primitive_socket_create3_semaphores(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                               stvm_oop *result)
{
    int64_t v[4];
    for (int i = 0; i < 4; i++)
        if (!stvm__socket_int_arg(vm, args[i], &v[i]))
            return STVM_PRIM_ERR_GENERIC;
    if (v[1] == 1)
        return STVM_PRIM_ERR_UNSUPPORTED;
    int family = domain_of(v[0]);
    if (v[1] != 0 || !family)
        return STVM_PRIM_ERR_GENERIC;
    int sema[3];
    int code = creation_args(vm, args, 4, sema);
    socket_plugin *p = code ? NULL : stvm__socket_plugin(vm);
    if (code || !p)
        return code ? code : STVM_PRIM_ERR_NO_MEMORY;
    int fd = new_descriptor(family);
    if (fd < 0)
        return STVM_PRIM_ERR_GENERIC;
    code = make_handle(vm, p, fd, family, STVM_SOCKET_UNCONNECTED, sema, result);
    if (code)
        close(fd);
    return code;
}

int stvm__socket_plugin_adopt(stvm_vm *vm, int fd, const int sema[3], stvm_oop *result)
{
    int type = 0;
    socklen_t len = sizeof type;
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    bool ok = fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
              type == SOCK_STREAM && getpeername(fd, (struct sockaddr *)&peer, &plen) == 0;
    for (int i = 0; i < 3 && ok; i++)
        ok = sema[i] >= 0 && sema[i] <= vm->ext.size;
    if (!ok)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    socket_plugin *p = stvm__socket_plugin(vm);
    if (!p)
        return STVM_PRIM_ERR_NO_MEMORY;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    return make_handle(vm, p, fd, peer.ss_family, STVM_SOCKET_CONNECTED, sema, result);
}

int stvm__socket_plugin_shutdown(stvm_vm *vm, stvm_oop handle, int how)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, handle, &fail);
    if (!h || h->fd < 0 || h->listening)
        return ENOTCONN;
    return shutdown(h->fd, how) == 0 ? 0 : errno;
}

/* ---- connecting --------------------------------------------------------------------- */

/* The descriptor of an unconnected socket takes the family of the address it is about
 * to connect to or bind (the IPv6 plugin recreates it the same way). */
static bool take_family(stvm_vm *vm, stvm_socket_handle *h, int family)
{
    if (h->family == family)
        return true;
    int fd = new_descriptor(family);
    if (fd < 0)
        return false;
    close_one(vm, h->fd, false);
    h->fd = fd;
    stvm__aio_own(vm, fd);
    h->family = family;
    return true;
}

/* The connect of both connect primitives, on an unconnected socket h to sa. Only
 * EINPROGRESS means the connection is under way: any other failure, EAGAIN among them
 * (a Unix listener's backlog is full; no local port is left for TCP), ends the attempt,
 * its errno kept for primitiveSocketError. */
static int start_connect(stvm_vm *vm, stvm_socket_handle *h, const struct sockaddr_storage *sa,
                         socklen_t len)
{
    if (h->state != STVM_SOCKET_UNCONNECTED || h->fd < 0 || h->listening ||
        !take_family(vm, h, sa->ss_family))
        return STVM_PRIM_ERR_GENERIC;
    h->error = 0;
    if (connect(h->fd, (const struct sockaddr *)sa, len) == 0) {
        h->state = STVM_SOCKET_CONNECTED;
        stvm__socket_notify(vm, h->sema);
    } else if (errno == EINPROGRESS) {
        h->state = STVM_SOCKET_WAITING_FOR_CONNECTION;
        h->connecting = true;
        stvm__socket_arm(vm, h, STVM_IO_WRITE, h->sema, true);
    } else {
        h->error = errno;   /* refused at once: the status says Unconnected */
        stvm__socket_notify(vm, h->sema);
    }
    return PRIM_OK;
}

/* primitiveSocketConnectToPort: socketHandle hostAddress port. hostAddress is a 4-byte
 * (IPv4) or, as an stvm extension, a 16-byte (IPv6) ByteArray. The socket must be
 * unconnected (the image checks that first; here the primitive fails otherwise). */
int stvm__primitive_socket_connect_to_port(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                            stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    int64_t port;
    struct sockaddr_storage sa;
    socklen_t len;
    if (!stvm__socket_int_arg(vm, args[2], &port) ||
        !stvm__socket_sockaddr(vm, args[1], port, &sa, &len))
        return STVM_PRIM_ERR_GENERIC;
    int code = start_connect(vm, h, &sa, len);
    if (!code)
        *result = rcvr;
    return code;
}

/* primitiveSocketConnectTo: socketHandle socketAddress (a whole sockaddr, sockaddr.h:
 * IPv4, IPv6 or a Unix path), as primitiveSocketConnectToPort otherwise. */
int stvm__primitive_socket_connect_to(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                      stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    struct sockaddr_storage sa;
    socklen_t len;
    if (!stvm__socket_address_sockaddr(vm, args[1], &sa, &len))
        return STVM_PRIM_ERR_GENERIC;
    int code = start_connect(vm, h, &sa, len);
    if (!code)
        *result = rcvr;
    return code;
}

static void update_connecting(stvm_vm *vm, stvm_socket_handle *h)
{
    struct pollfd pf = {.fd = h->fd, .events = POLLOUT};
    if (poll(&pf, 1, 0) <= 0) {
        stvm__socket_arm(vm, h, STVM_IO_WRITE, h->sema, true);
        return;
    }
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    h->connecting = false;
    h->error = err;
    h->state = err ? STVM_SOCKET_UNCONNECTED : STVM_SOCKET_CONNECTED;
    stvm__aio_disarm(vm, h->fd, STVM_IO_WRITE);
}

static void update_listening(stvm_vm *vm, stvm_socket_handle *h)
{
    int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
        h->accepted_fd = fd;
        h->error = 0;
        h->state = STVM_SOCKET_CONNECTED;   /* as acceptHandler: a connection waits */
        stvm__aio_disarm(vm, h->fd, STVM_IO_READ);
    } else {
        /* EAGAIN: no connection waits. No descriptor or no memory for one that waits:
         * starved (above). Otherwise (one aborted, refused by a firewall: the next may
         * do) more may be waiting, and the kernel is asked again. A listener's error is
         * its last accept's: kept for primitiveSocketError until an accept works or
         * finds nothing waiting. */
        int e = errno;
        h->error = e == EAGAIN || e == ECONNABORTED || e == EINTR ? 0 : e;
        if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM)
            starve(vm, h);
        else
            stvm__socket_arm(vm, h, STVM_IO_READ, h->sema, e == EAGAIN);
    }
}

void stvm__socket_update(stvm_vm *vm, stvm_socket_handle *h)
{
    if (h->fd < 0 || h->state != STVM_SOCKET_WAITING_FOR_CONNECTION)
        return;
    if (h->connecting) {
        update_connecting(vm, h);
    } else if (h->listening && h->accepted_fd < 0) {
        if (h->starved && stvm__clock_now_us(vm) < h->accept_retry_us)
            return;   /* nothing changed that the VM knows of: not asked again yet */
        unstarve(vm, h);
        update_listening(vm, h);
    }
}

/* primitiveSocketConnectionStatus: socketHandle -> Pharo's status value. */
int stvm__primitive_socket_connection_status(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                              stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    stvm__socket_update(vm, h);
    *result = stvm__si_make(h->state);
    return PRIM_OK;
}

/* ---- listening and accepting -------------------------------------------------------- */

/* interface: the address to bind (args[3]), or NULL for every IPv4 interface. */
static int listen_on(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args, const stvm_oop *interface,
                     stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    int64_t port, backlog;
    if (!stvm__socket_int_arg(vm, args[1], &port) || !stvm__socket_int_arg(vm, args[2], &backlog) ||
        backlog < 1 || backlog > 65535)
        return STVM_PRIM_ERR_GENERIC;
    struct sockaddr_storage sa = {0};
    socklen_t len = sizeof(struct sockaddr_in);
    if (interface) {
        if (!stvm__socket_sockaddr(vm, *interface, port, &sa, &len))
            return STVM_PRIM_ERR_GENERIC;
    } else {
        /* The plugin's INADDR_ANY. */
        struct sockaddr_in *in = (struct sockaddr_in *)&sa;
        if (port < 0 || port > 65535)
            return STVM_PRIM_ERR_GENERIC;
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
    }
    if (h->state != STVM_SOCKET_UNCONNECTED || h->fd < 0 || !take_family(vm, h, sa.ss_family))
        return STVM_PRIM_ERR_GENERIC;
    if (bind(h->fd, (struct sockaddr *)&sa, len) != 0 || listen(h->fd, (int)backlog) != 0) {
        /* A socket that failed to bind is left as it was: a fresh descriptor; the
         * system's reason (EADDRINUSE, EADDRNOTAVAIL, ...) is primitiveSocketError's, as
         * the Unix plugin's bindTo: keeps it. */
        h->error = errno;
        int fd = new_descriptor(h->family);
        if (fd >= 0) {
            close_one(vm, h->fd, false);
            h->fd = fd;
            stvm__aio_own(vm, fd);
        }
        return STVM_PRIM_ERR_GENERIC;
    }
    h->listening = true;
    h->state = STVM_SOCKET_WAITING_FOR_CONNECTION;
    stvm__socket_arm(vm, h, STVM_IO_READ, h->sema, false);
    *result = rcvr;
    return PRIM_OK;
}

/* primitiveSocketListenOnPortBacklog: socketHandle port backlogSize, on every interface
 * (IPv4). Every backlog size makes a socket that primitiveSocketAccept3Semaphores takes
 * connections from (the plugin's single-connection listen, backlog 1, which turns the
 * listener itself into the connection, is not modelled). */
int stvm__primitive_socket_listen_on_port_backlog(stvm_vm *vm, stvm_oop rcvr,
                                                   const stvm_oop *args, stvm_oop *result)
{
    return listen_on(vm, rcvr, args, NULL, result);
}

/* primitiveSocketListenOnPortBacklogInterface: socketHandle port backlogSize
 * interfaceAddress (4 or 16 bytes: IPv4 or IPv6). */
int stvm__primitive_socket_listen_on_port_backlog_interface(stvm_vm *vm, stvm_oop rcvr,
                                                             const stvm_oop *args,
                                                             stvm_oop *result)
{
    return listen_on(vm, rcvr, args, &args[3], result);
}

/* primitiveSocketBindTo: socketHandle socketAddress (a whole sockaddr, sockaddr.h), on
 * an unconnected socket whose descriptor takes the address's family. A bind that fails
 * changes nothing but primitiveSocketError, which keeps the system's reason (EADDRINUSE
 * for a Unix path that exists: nothing is ever unlinked here). */
int stvm__primitive_socket_bind_to(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                   stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    struct sockaddr_storage sa;
    socklen_t len;
    if (!stvm__socket_address_sockaddr(vm, args[1], &sa, &len) ||
        h->state != STVM_SOCKET_UNCONNECTED || h->fd < 0 || h->listening ||
        !take_family(vm, h, sa.ss_family))
        return STVM_PRIM_ERR_GENERIC;
    if (bind(h->fd, (struct sockaddr *)&sa, len) != 0) {
        h->error = errno;
        return STVM_PRIM_ERR_GENERIC;
    }
    *result = rcvr;
    return PRIM_OK;
}

/* primitiveSocketListenWithBacklog: socketHandle backlogSize (1..65535), on a socket
 * bound by primitiveSocketBindTo; connections are then taken with
 * primitiveSocketAccept3Semaphores, as after primitiveSocketListenOnPortBacklog. */
int stvm__primitive_socket_listen_with_backlog(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                               stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    int64_t backlog;
    if (!stvm__socket_int_arg(vm, args[1], &backlog) || backlog < 1 || backlog > 65535 ||
        h->state != STVM_SOCKET_UNCONNECTED || h->fd < 0 || h->listening)
        return STVM_PRIM_ERR_GENERIC;
    if (listen(h->fd, (int)backlog) != 0) {
        h->error = errno;
        return STVM_PRIM_ERR_GENERIC;
    }
    h->listening = true;
    h->state = STVM_SOCKET_WAITING_FOR_CONNECTION;
    stvm__socket_arm(vm, h, STVM_IO_READ, h->sema, false);
    *result = rcvr;
    return PRIM_OK;
}

/* primitiveSocketAccept3Semaphores: listenerHandle rcvBufSize sendBufSize semaIndex
 * readSemaIndex writeSemaIndex -> the record of the accepted connection. Fails unless a
 * connection is waiting (the listener's status is Connected). */
int stvm__primitive_socket_accept3_semaphores(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                               stvm_oop *result)
{
    int fail;
    stvm_socket_handle *l = stvm__socket_handle(vm, args[0], &fail);
    if (!l)
        return fail;
    int64_t v;
    if (!stvm__socket_int_arg(vm, args[1], &v) || !stvm__socket_int_arg(vm, args[2], &v))
        return STVM_PRIM_ERR_GENERIC;
    int sema[3];
    int code = creation_args(vm, args, 3, sema);
    if (code)
        return code;
    if (!l->listening)
        return STVM_PRIM_ERR_GENERIC;
    stvm__socket_update(vm, l);
    if (l->accepted_fd < 0)
        return STVM_PRIM_ERR_GENERIC;
    socket_plugin *p = stvm__socket_plugin(vm);
    if (!p)
        return STVM_PRIM_ERR_NO_MEMORY;
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    int family = getsockname(l->accepted_fd, (struct sockaddr *)&sa, &len) == 0 ? sa.ss_family
                                                                               : l->family;
    code = make_handle(vm, p, l->accepted_fd, family, STVM_SOCKET_CONNECTED, sema, result);
    if (code)
        return code;
    l->accepted_fd = -1;
    l->state = STVM_SOCKET_WAITING_FOR_CONNECTION;
    stvm__socket_arm(vm, l, STVM_IO_READ, l->sema, false);
    return PRIM_OK;
}

/* ---- closing ----------------------------------------------------------------------- */

static int close_connection(stvm_vm *vm, stvm_oop rcvr, stvm_oop handle, bool abort,
                            stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, handle, &fail);
    if (!h)
        return fail;
    if (h->fd >= 0) {
        /* The close completes at once (no lingering), as the plugin's synchronous case. */
        stvm__socket_close_fds(vm, h, abort);
        h->state = STVM_SOCKET_UNCONNECTED;
        h->connecting = h->listening = false;
    }
    *result = rcvr;
    return PRIM_OK;
}

/* primitiveSocketCloseConnection: socketHandle. */
int stvm__primitive_socket_close_connection(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                             stvm_oop *result)
{
    return close_connection(vm, rcvr, args[0], false, result);
}

/* primitiveSocketAbortConnection: socketHandle (a reset: SO_LINGER 0, then close). */
int stvm__primitive_socket_abort_connection(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                             stvm_oop *result)
{
    return close_connection(vm, rcvr, args[0], true, result);
}

/* primitiveSocketDestroy: socketHandle. An open connection is aborted; every later
 * primitive on the record fails; stvm_oop_release may then free it. */
int stvm__primitive_socket_destroy(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                    stvm_oop *result)
{
    int code = close_connection(vm, rcvr, args[0], true, result);
    if (!code)
        ((stvm_socket_handle *)args[0])->destroyed = true;
    return code;
}
