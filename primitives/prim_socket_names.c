/*
 * The SocketPlugin's names for a socket and its errors: primitiveSocketError, LocalPort,
 * RemotePort, LocalAddress, RemoteAddress, the generalised LocalAddressSize/Result and
 * RemoteAddressSize/Result (whole socket addresses, Unix paths too), and the resolver
 * (primitiveInitializeNetwork, primitiveResolverStartNameLookup, NameLookupResult,
 * Status, Error). Addresses travel as ByteArrays: 4 bytes for IPv4 (as in Pharo) and,
 * an stvm extension, 16 bytes for IPv6 (where Pharo's old primitives answer 0.0.0.0);
 * the generalised primitives' socket addresses are whole sockaddrs (sockaddr.h).
 *
 * The resolver is synchronous, as the Unix plugin's: a lookup is finished when
 * primitiveResolverStartNameLookup returns (it signals the resolver semaphore at once),
 * and it only knows numeric IPv4 and IPv6 addresses and "localhost" (127.0.0.1). Host
 * names are looked up for stvm_tcp_connect on the VM's worker threads instead
 * (socket_lookup.c), not through these primitives.
 */
#include "sockaddr.h"
#include "socket_plugin.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

/* primitiveSocketError: socketHandle -> the errno of the last failed operation (0:
 * none). */
int stvm__primitive_socket_error(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                 stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    *result = stvm__si_make(h->error);
    return PRIM_OK;
}

/* The local or the peer's address of h; a zeroed one of h's family when there is
 * none (no descriptor, not connected), as the plugin answers 0. */
static void name_of(const stvm_socket_handle *h, bool peer, struct sockaddr_storage *sa)
{
    socklen_t len = sizeof *sa;
    memset(sa, 0, sizeof *sa);
    int r = h->fd < 0 ? -1
            : peer    ? getpeername(h->fd, (struct sockaddr *)sa, &len)
                      : getsockname(h->fd, (struct sockaddr *)sa, &len);
    if (r != 0 || (sa->ss_family != AF_INET && sa->ss_family != AF_INET6)) {
        memset(sa, 0, sizeof *sa);
        sa->ss_family = (sa_family_t)h->family;
    }
}

static int port_of(stvm_vm *vm, const stvm_oop *args, bool peer, stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    struct sockaddr_storage sa;
    name_of(h, peer, &sa);
    uint16_t port = sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                             : ((struct sockaddr_in *)&sa)->sin_port;
    *result = stvm__si_make(ntohs(port));
    return PRIM_OK;
}

static int address_of(stvm_vm *vm, const stvm_oop *args, bool peer, stvm_oop *result)
{
    int fail;
    stvm_socket_handle *h = stvm__socket_handle(vm, args[0], &fail);
    if (!h)
        return fail;
    struct sockaddr_storage sa;
    name_of(h, peer, &sa);
    stvm_oop bytes = stvm__socket_address_bytes(vm, &sa, &fail);
    if (bytes == STVM_NIL)
        return fail;
    *result = bytes;
    return PRIM_OK;
}

/* primitiveSocketLocalPort: socketHandle -> the local port, 0 if none yet. */
int stvm__primitive_socket_local_port(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                      stvm_oop *result)
{
    return port_of(vm, args, false, result);
}

/* primitiveSocketRemotePort: socketHandle -> the peer's port, 0 if not connected. */
int stvm__primitive_socket_remote_port(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                       stvm_oop *result)
{
    return port_of(vm, args, true, result);
}

/* primitiveSocketLocalAddress: socketHandle -> a new ByteArray (4 or 16 bytes). */
int stvm__primitive_socket_local_address(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                         stvm_oop *result)
{
    return address_of(vm, args, false, result);
}

/* primitiveSocketRemoteAddress: socketHandle -> a new ByteArray, all zero if not
 * connected. */
int stvm__primitive_socket_remote_address(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                          stvm_oop *result)
{
    return address_of(vm, args, true, result);
}

/* ---- the generalised addresses -------------------------------------------------------- */

/* The local or the peer's whole socket address of h (sockaddr.h's socket address: IPv4,
 * IPv6 or a Unix path; an unnamed Unix socket's is its family alone); false when there is
 * none (no descriptor, not connected). */
static bool socket_address(stvm_vm *vm, stvm_oop handle, bool peer,
                           struct sockaddr_storage *sa, socklen_t *len, int *fail)
{
    stvm_socket_handle *h = stvm__socket_handle(vm, handle, fail);
    if (!h)
        return false;
    *len = sizeof *sa;
    memset(sa, 0, sizeof *sa);
    int r = h->fd < 0 ? -1
            : peer    ? getpeername(h->fd, (struct sockaddr *)sa, len)
                      : getsockname(h->fd, (struct sockaddr *)sa, len);
    if (r != 0 || *len > sizeof *sa) {
        *fail = STVM_PRIM_ERR_GENERIC;
        return false;
    }
    return true;
}

static int address_size(stvm_vm *vm, const stvm_oop *args, bool peer, stvm_oop *result)
{
    struct sockaddr_storage sa;
    socklen_t len;
    int fail;
    if (!socket_address(vm, args[0], peer, &sa, &len, &fail))
        return fail;
    *result = stvm__si_make(len);
    return PRIM_OK;
}

/* Fill args[1], a ByteArray of exactly the address's size. */
static int address_result(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args, bool peer,
                          stvm_oop *result)
{
    struct sockaddr_storage sa;
    socklen_t len;
    int fail;
    if (!socket_address(vm, args[0], peer, &sa, &len, &fail))
        return fail;
    stvm_byte_array *b = stvm__bytes_of(vm, args[1]);
    if (!b || b->hdr.byte_size != len)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    memcpy(b->bytes, &sa, len);
    *result = rcvr;
    return PRIM_OK;
}

/* primitiveSocketLocalAddressSize: socketHandle -> the size of its socket address (fails
 * when it has none). */
int stvm__primitive_socket_local_address_size(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                              stvm_oop *result)
{
    return address_size(vm, args, false, result);
}

/* primitiveSocketLocalAddressResult: socketHandle socketAddress (a ByteArray of that
 * size, which it fills). */
int stvm__primitive_socket_local_address_result(stvm_vm *vm, stvm_oop rcvr,
                                                const stvm_oop *args, stvm_oop *result)
{
    return address_result(vm, rcvr, args, false, result);
}

/* primitiveSocketRemoteAddressSize: socketHandle -> the size of the peer's socket
 * address (fails when not connected). */
int stvm__primitive_socket_remote_address_size(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                               stvm_oop *result)
{
    return address_size(vm, args, true, result);
}

/* primitiveSocketRemoteAddressResult: socketHandle socketAddress, as LocalAddressResult. */
int stvm__primitive_socket_remote_address_result(stvm_vm *vm, stvm_oop rcvr,
                                                 const stvm_oop *args, stvm_oop *result)
{
    return address_result(vm, rcvr, args, true, result);
}

/* ---- the resolver ------------------------------------------------------------------ */

/* primitiveInitializeNetwork: resolverSemaIndex (0: none). */
int stvm__primitive_initialize_network(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                       stvm_oop *result)
{
    int64_t index;
    if (!stvm__socket_int_arg(vm, args[0], &index) || index < 0 || index > vm->ext.size)
        return STVM_PRIM_ERR_GENERIC;
    socket_plugin *p = stvm__socket_plugin(vm);
    if (!p)
        return STVM_PRIM_ERR_NO_MEMORY;
    p->resolver_sema = (int)index;
    if (p->resolver_status == RESOLVER_UNINITIALISED)
        p->resolver_status = RESOLVER_SUCCESS;
    *result = rcvr;
    return PRIM_OK;
}

/* primitiveResolverStartNameLookup: hostName (a ByteArray of its characters: stvm has
 * no String). Done before it returns: the status is then Success or Error. */
int stvm__primitive_resolver_start_name_lookup(stvm_vm *vm, stvm_oop rcvr,
                                               const stvm_oop *args, stvm_oop *result)
{
    stvm_byte_array *name = stvm__bytes_of(vm, args[0]);
    if (!name)
        return STVM_PRIM_ERR_GENERIC;
    socket_plugin *p = stvm__socket_plugin(vm);
    if (!p)
        return STVM_PRIM_ERR_NO_MEMORY;
    if (stvm__socket_parse_host(name->bytes, name->hdr.byte_size, p->last_addr,
                                &p->last_addr_len)) {
        p->resolver_status = RESOLVER_SUCCESS;
        p->resolver_error = 0;
    } else {
        p->resolver_status = RESOLVER_ERROR;
        p->resolver_error = 1;   /* h_errno's HOST_NOT_FOUND */
        p->last_addr_len = 0;
    }
    stvm__socket_notify(vm, p->resolver_sema);
    *result = rcvr;
    return PRIM_OK;
}

/* primitiveResolverNameLookupResult -> the address found, a new ByteArray of 4 or 16
 * bytes. Fails when the last lookup found nothing. */
int stvm__primitive_resolver_name_lookup_result(stvm_vm *vm, stvm_oop rcvr,
                                                const stvm_oop *args, stvm_oop *result)
{
    socket_plugin *p = stvm__socket_plugin(vm);
    if (!p)
        return STVM_PRIM_ERR_NO_MEMORY;
    if (p->last_addr_len == 0)
        return STVM_PRIM_ERR_GENERIC;
    stvm_byte_array *b = stvm__bytes_alloc(vm, (size_t)p->last_addr_len);
    if (!b)
        return STVM_PRIM_ERR_NO_MEMORY;
    memcpy(b->bytes, p->last_addr, (size_t)p->last_addr_len);
    *result = (stvm_oop)b;
    return PRIM_OK;
}

/* primitiveResolverStatus -> 0 uninitialised, 1 success, 2 busy (never), 3 error. */
int stvm__primitive_resolver_status(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                    stvm_oop *result)
{
    socket_plugin *p = stvm__socket_plugin(vm);
    if (!p)
        return STVM_PRIM_ERR_NO_MEMORY;
    *result = stvm__si_make(p->resolver_status);
    return PRIM_OK;
}

/* primitiveResolverError -> the last lookup's error (0: none, 1: not found). */
int stvm__primitive_resolver_error(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args,
                                   stvm_oop *result)
{
    socket_plugin *p = stvm__socket_plugin(vm);
    if (!p)
        return STVM_PRIM_ERR_NO_MEMORY;
    *result = stvm__si_make(p->resolver_error);
    return PRIM_OK;
}
