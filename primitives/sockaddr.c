/*
 * Addresses between the image and the kernel: a ByteArray of 4 (IPv4) or 16 (IPv6)
 * bytes and a port as a sockaddr and back, and the resolver's parse of a host name.
 * Also the generalised primitives' socket addresses (a whole sockaddr in a ByteArray,
 * Unix paths among them). No socket state: the SocketPlugin's primitives (prim_socket.c,
 * prim_socket_names.c) and the image's socket calls (image-stubs/network/) build on it,
 * never the reverse.
 */
#include "sockaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>

bool stvm__socket_sockaddr(stvm_vm *vm, stvm_oop address, int64_t port,
                           struct sockaddr_storage *sa, socklen_t *len)
{
    stvm_byte_array *b = stvm__bytes_of(vm, address);
    if (!b || port < 0 || port > 65535)
        return false;
    memset(sa, 0, sizeof *sa);
    if (b->hdr.byte_size == 4) {
        struct sockaddr_in *in = (struct sockaddr_in *)sa;
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        memcpy(&in->sin_addr, b->bytes, 4);
        *len = sizeof *in;
        return true;
    }
    if (b->hdr.byte_size == 16) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        memcpy(&in6->sin6_addr, b->bytes, 16);
        *len = sizeof *in6;
        return true;
    }
    return false;
}

stvm_oop stvm__socket_address_bytes(stvm_vm *vm, const struct sockaddr_storage *sa, int *fail)
{
    const void *src;
    size_t n;
    if (sa->ss_family == AF_INET6) {
        src = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        n = 16;
    } else {
        src = &((const struct sockaddr_in *)sa)->sin_addr;
        n = 4;
    }
    stvm_byte_array *b = stvm__bytes_alloc(vm, n);
    if (!b) {
        *fail = STVM_PRIM_ERR_NO_MEMORY;
        return STVM_NIL;
    }
    if (sa->ss_family == AF_INET || sa->ss_family == AF_INET6)
        memcpy(b->bytes, src, n);
    return (stvm_oop)b;
}

bool stvm__socket_parse_host(const uint8_t *name, size_t len, uint8_t addr[16], int *addr_len)
{
    char text[64];
    if (len == 0 || len >= sizeof text || memchr(name, 0, len))
        return false;
    memcpy(text, name, len);
    text[len] = '\0';
    if (strcmp(text, "localhost") == 0)
        strcpy(text, "127.0.0.1");
    if (inet_pton(AF_INET, text, addr) == 1) {
        *addr_len = 4;
        return true;
    }
    if (inet_pton(AF_INET6, text, addr) == 1) {
        *addr_len = 16;
        return true;
    }
    return false;
}

/* The size a socket address of family must have, or, for a Unix one, at most (0: not a
 * family stvm models). */
static size_t family_size(int family)
{
    switch (family) {
    case AF_INET: return sizeof(struct sockaddr_in);
    case AF_INET6: return sizeof(struct sockaddr_in6);
    case AF_UNIX: return sizeof(struct sockaddr_un);
    default: return 0;
    }
}

bool stvm__socket_address_sockaddr(stvm_vm *vm, stvm_oop address, struct sockaddr_storage *sa,
                                   socklen_t *len)
{
    stvm_byte_array *b = stvm__bytes_of(vm, address);
    sa_family_t family;
    if (!b || b->hdr.byte_size < sizeof family)
        return false;
    memcpy(&family, b->bytes, sizeof family);
    size_t size = family_size(family), n = b->hdr.byte_size;
    if (family == AF_UNIX) {
        /* A path of at least one byte and its NUL, all inside sun_path. */
        const size_t path = offsetof(struct sockaddr_un, sun_path);
        if (n < path + 2 || n > size || b->bytes[path] == 0 ||
            !memchr(b->bytes + path, 0, n - path))
            return false;
    } else if (size == 0 || n != size) {
        return false;
    }
    memset(sa, 0, sizeof *sa);
    memcpy(sa, b->bytes, n);
    *len = (socklen_t)n;
    return true;
}

stvm_oop stvm__socket_address_new(stvm_vm *vm, const struct sockaddr_storage *sa, socklen_t len)
{
    stvm_byte_array *b = stvm__bytes_alloc(vm, (size_t)len);
    if (b)
        memcpy(b->bytes, sa, (size_t)len);
    return (stvm_oop)b;
}

bool stvm__socket_unix_sockaddr(const char *path, struct sockaddr_storage *sa, socklen_t *len)
{
    struct sockaddr_un *un = (struct sockaddr_un *)sa;
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof un->sun_path)
        return false;
    memset(sa, 0, sizeof *sa);
    un->sun_family = AF_UNIX;
    memcpy(un->sun_path, path, n + 1);
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    return true;
}
