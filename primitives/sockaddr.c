/*
 * Addresses between the image and the kernel: a ByteArray of 4 (IPv4) or 16 (IPv6)
 * bytes and a port as a sockaddr and back, and the resolver's parse of a host name.
 * No socket state: the SocketPlugin's primitives (prim_socket.c, prim_socket_names.c)
 * and the image's socket calls (image-stubs/network/) build on it, never the reverse.
 */
#include "sockaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

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
