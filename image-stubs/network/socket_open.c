/*
 * The public calls that make sockets (stvm/net.h): listening on TCP and on Unix paths,
 * connecting (host names looked up off the VM's thread, resolve.h, each address tried
 * in turn), and accepting. Each checks its arguments and its caller, then does what a
 * Pharo program would: NetNameResolver for the host, Socket>>connectTo:port:waitFor...,
 * listenOn:backlogSize:interface:, bindTo: and listenWithBacklog: for a Unix path,
 * waitForAcceptFor:.
 */
#include <errno.h>
#include <string.h>

#include "../../primitives/sockaddr.h"
#include "../../vm/bytes.h"
#include "../../vm/objmem.h"
#include "../kernel/delay.h"
#include "resolve.h"
#include "socket_api.h"

stvm_socket *stvm__socket_of(stvm_vm *vm, const stvm_socket *s)
{
    return vm ? stvm__prim_object_of(vm, (stvm_oop)s, STVM_CLASS_SOCKET) : NULL;
}

stvm_stream *stvm__stream_of(stvm_vm *vm, const stvm_stream *st)
{
    return vm ? stvm__prim_object_of(vm, (stvm_oop)st, STVM_CLASS_SOCKET_STREAM) : NULL;
}

int stvm__socket_check_timeout(stvm_vm *vm, int64_t timeout_ms)
{
    if (timeout_ms < -1)
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    return timeout_ms > 0 ? stvm__check_duration(vm, timeout_ms, true) : STVM_OK;
}

/* NetNameResolver addressFromString: for an address or "localhost": a new 4- or 16-byte
 * ByteArray; false (nothing allocated) for anything else. Pharo's addressForName:
 * answers such a host without asking the resolver, so its status is never touched. */
static bool address_of(stvm_vm *vm, const char *host, stvm_oop *address, int *err)
{
    uint8_t addr[16];
    int len;
    if (!stvm__socket_parse_host((const uint8_t *)host, strlen(host), addr, &len))
        return false;
    stvm_byte_array *b = stvm__bytes_alloc(vm, (size_t)len);
    if (b)
        memcpy(b->bytes, addr, (size_t)len);
    *address = (stvm_oop)b;
    *err = b ? STVM_OK : STVM_ENOMEM;
    return true;
}

/* ---- listening ------------------------------------------------------------------------- */

/* A call that fails after allocating (a taken port, a full external table) frees what
 * it made and takes it out of the allocation counters: it changes nothing. */
static int listen_on(stvm_vm *vm, stvm_alloc_mark mark, int net_type, stvm_oop address,
                     int port, int backlog, stvm_socket **out)
{
    stvm_socket *s = NULL;
    int err = stvm__socket_new(vm, net_type, &s);
    int e = errno;   /* ESYS's: the system's code, whatever the cleanup does to errno */
    if (!err) {
        err = net_type == SOCKET_NET_LOCAL ? stvm__socket_bind_listen(vm, s, address, backlog)
                                           : stvm__socket_listen(vm, s, port, backlog, address);
        e = errno;
        if (err)
            stvm__socket_free(vm, s);
    }
    stvm_oop_release(vm, address);
    if (err) {
        stvm__alloc_forget(vm, mark);
        errno = e;
        return err;
    }
    *out = s;
    return STVM_OK;
}

int stvm_tcp_listen(stvm_vm *vm, const char *host, int port, int backlog, stvm_socket **out)
{
    if (!vm || !host || !out || port < 0 || port > 65535 || backlog < 1 || backlog > 65535)
        return STVM_EINVAL;
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    stvm_oop address;
    int err;
    if (!address_of(vm, host, &address, &err))
        return STVM_EINVAL;   /* a name: listening never waits for a lookup */
    if (err)
        return err;
    return listen_on(vm, mark, SOCKET_NET_INET, address, port, backlog, out);
}

/* The socket address of a Unix path (sockaddr.h), in *address. EINVAL (empty, or too
 * long for sun_path), ENOMEM. */
static int unix_address(stvm_vm *vm, const char *path, stvm_oop *address)
{
    struct sockaddr_storage sa;
    socklen_t len;
    if (!stvm__socket_unix_sockaddr(path, &sa, &len))
        return STVM_EINVAL;
    *address = stvm__socket_address_new(vm, &sa, len);
    return *address != STVM_NIL ? STVM_OK : STVM_ENOMEM;
}

int stvm_unix_listen(stvm_vm *vm, const char *path, int backlog, stvm_socket **out)
{
    if (!vm || !path || !out || backlog < 1 || backlog > 65535)
        return STVM_EINVAL;
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    stvm_oop address;
    int err = unix_address(vm, path, &address);
    if (err)
        return err;
    return listen_on(vm, mark, SOCKET_NET_LOCAL, address, 0, backlog, out);
}

/* ---- connecting ------------------------------------------------------------------------ */

/* A connect in progress is undone if its process is terminated while it waits. */
typedef struct connecting {
    stvm_wait_guard guard;
    stvm_socket *s;
} connecting;

static void connect_undo(stvm_vm *vm, stvm_wait_guard *g)
{
    stvm__socket_free(vm, STVM_CONTAINER(g, connecting, guard)->s);
}

/* What to connect to: a 4- or 16-byte address and a port, or a socket address. */
typedef struct target {
    int net_type;
    stvm_oop address;
    int port;                        /* 0: address is a socket address */
} target;

/* One attempt: a new socket connecting to t, waiting at most timeout_ms. STVM_OK with
 * *out, or why not (the system's reason: ECONNREFUSED, ENETUNREACH, ENOENT, ...), with
 * nothing left open. t's address is released before the wait (a process terminated in
 * it leaves nothing). mark: nothing has waited yet, so a refusal before the wait takes
 * its allocations out of the counters (NULL: other processes may have allocated). */
static int attempt(stvm_vm *vm, const target *t, int64_t timeout_ms, stvm_alloc_mark *mark,
                   stvm_socket **out)
{
    connecting c = {.guard.undo = connect_undo};
    int err = stvm__socket_new(vm, t->net_type, &c.s);
    if (!err)
        err = t->port ? stvm__socket_connect_nonblocking(vm, c.s, t->address, t->port)
                      : stvm__socket_connect_to(vm, c.s, t->address);
    stvm_oop_release(vm, t->address);
    /* Refused at once (ECONNREFUSED, ENOENT, ENETUNREACH, ...: the status says
     * Unconnected): answered before any wait. */
    if (!err && stvm__socket_status(vm, c.s) == STVM_SOCKET_UNCONNECTED)
        err = stvm__socket_failure(vm, c.s, STVM_ECLOSED);
    int e = errno;   /* ESYS's: the system's code, whatever the cleanup does to errno */
    if (err) {
        if (c.s)
            stvm__socket_free(vm, c.s);
        if (mark)
            stvm__alloc_forget(vm, *mark);
        errno = e;
        return err;
    }
    stvm__wait_guard_push(vm, &c.guard);
    err = stvm__socket_wait_for_connection(vm, c.s, timeout_ms);
    stvm__wait_guard_pop(vm, &c.guard);
    if (err == STVM_ECLOSED)
        err = stvm__socket_failure(vm, c.s, STVM_ECLOSED);   /* refused, unreachable, ... */
    if (err) {
        e = errno;
        stvm__socket_free(vm, c.s);
        errno = e;
        return err;
    }
    *out = c.s;
    return STVM_OK;
}

/* The addresses a name resolved to, freed if the process is terminated among them. */
typedef struct resolved {
    stvm_wait_guard guard;
    struct addrinfo *list;
} resolved;

static void resolved_undo(stvm_vm *vm, stvm_wait_guard *g)
{
    freeaddrinfo(STVM_CONTAINER(g, resolved, guard)->list);
}

/* Errors after which no further address is tried: the caller's time or process, or the
 * VM's resources, not the address. */
static bool stops_trying(int err)
{
    return err == STVM_ETIMEDOUT || err == STVM_EINTR || err == STVM_ESTATE ||
           err == STVM_ERANGE || err == STVM_ENOMEM || err == STVM_EFULL;
}

/* Each address in turn, as Go's dialSerial: an attempt gets an equal share of the time
 * left, at least 2 s (all of it when less is left), so that one address that never
 * answers does not take the time of the others. */
static int connect_each(stvm_vm *vm, struct addrinfo *list, int port, int64_t deadline,
                        stvm_socket **out)
{
    int err = STVM_ENOTFOUND, left_addresses = 0;
    for (struct addrinfo *ai = list; ai; ai = ai->ai_next)
        left_addresses += ai->ai_family == AF_INET || ai->ai_family == AF_INET6;
    for (struct addrinfo *ai = list; ai; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        int64_t left = stvm__socket_remaining(vm, deadline);
        if (left == 0)
            return STVM_ETIMEDOUT;
        int64_t share = left < 0 ? -1 : left / left_addresses--;
        if (share >= 0 && share < 2000)
            share = left < 2000 ? left : 2000;
        struct sockaddr_storage sa = {0};
        memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
        int fail;
        target t = {.net_type = ai->ai_family == AF_INET6 ? SOCKET_NET_INET6 : SOCKET_NET_INET,
                    .address = stvm__socket_address_bytes(vm, &sa, &fail), .port = port};
        if (t.address == STVM_NIL)
            return STVM_ENOMEM;
        err = attempt(vm, &t, share, NULL, out);
        if (!err || stops_trying(err))
            return err;
    }
    return err;
}

int stvm_tcp_connect(stvm_vm *vm, const char *host, int port, int64_t timeout_ms,
                     stvm_socket **out)
{
    if (!vm || !host || !out || port < 1 || port > 65535)
        return STVM_EINVAL;
    int err = stvm__socket_check_timeout(vm, timeout_ms);
    if (err)
        return err;
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    target t = {.net_type = SOCKET_NET_INET, .port = port};
    if (address_of(vm, host, &t.address, &err))
        return err ? err : attempt(vm, &t, timeout_ms, &mark, out);
    if (!stvm__host_is_name(host))
        return STVM_EINVAL;
    /* A name: looked up off the VM's thread, then each address in turn, all within
     * timeout_ms. */
    int64_t deadline = stvm__socket_deadline(vm, timeout_ms);
    resolved r = {.guard.undo = resolved_undo};
    if ((err = stvm__resolve(vm, host, deadline, &r.list)))
        return err;
    stvm__wait_guard_push(vm, &r.guard);
    err = connect_each(vm, r.list, port, deadline, out);
    stvm__wait_guard_pop(vm, &r.guard);
    freeaddrinfo(r.list);
    return err;
}

int stvm_unix_connect(stvm_vm *vm, const char *path, int64_t timeout_ms, stvm_socket **out)
{
    if (!vm || !path || !out)
        return STVM_EINVAL;
    int err = stvm__socket_check_timeout(vm, timeout_ms);
    if (err)
        return err;
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    target t = {.net_type = SOCKET_NET_LOCAL};
    if ((err = unix_address(vm, path, &t.address)))
        return err;
    return attempt(vm, &t, timeout_ms, &mark, out);
}

/* ---- accepting ------------------------------------------------------------------------- */

int stvm_socket_accept(stvm_vm *vm, stvm_socket *listener, int64_t timeout_ms,
                       stvm_socket **out)
{
    stvm_socket *l = stvm__socket_of(vm, listener);
    if (!l || !l->listener || !out)
        return STVM_EINVAL;
    int err = stvm__socket_check_timeout(vm, timeout_ms);
    if (err)
        return err;
    /* Socket>>waitForAcceptFor:: the listener's status turns Connected when a connection
     * waits (a failed accept, EMFILE and the like, answers its error); then
     * Socket>>accept. */
    err = stvm__socket_wait_for_connection(vm, l, timeout_ms);
    if (!err)
        err = stvm__socket_accept_from(vm, l, out);
    return err;
}
