/*
 * Addresses between the image and the kernel (sockaddr.c): no socket state, so the
 * SocketPlugin's files and the image's socket calls include it and it includes none of
 * theirs.
 */
#ifndef STVM_PRIMITIVES_SOCKADDR_H
#define STVM_PRIMITIVES_SOCKADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../vm/bytes.h"

/* The resolver's lookup: name (len bytes, not NUL-terminated) into 4 or 16 bytes;
 * false for anything but a numeric IPv4 or IPv6 address or "localhost". Allocates
 * nothing, so a caller can refuse a host before it allocates anything. */
bool stvm__socket_parse_host(const uint8_t *name, size_t len, uint8_t addr[16], int *addr_len);

/* A 4-byte (IPv4) or 16-byte (IPv6) address in a ByteArray and a port 0..65535 as a
 * sockaddr. False when the address is not one of these. */
bool stvm__socket_sockaddr(stvm_vm *vm, stvm_oop address, int64_t port,
                           struct sockaddr_storage *sa, socklen_t *len);

/* A new ByteArray holding a sockaddr's address (4 or 16 bytes), or NIL with *fail set. */
stvm_oop stvm__socket_address_bytes(stvm_vm *vm, const struct sockaddr_storage *sa, int *fail);

/* The generalised address primitives' socket address (Pharo's SocketAddress, which its
 * getaddrinfo resolver makes): in stvm a ByteArray holding the sockaddr itself as the
 * kernel takes it, a sockaddr_in, sockaddr_in6 or sockaddr_un, its first bytes the
 * family (Pharo's puts a session header before it). False when the bytes are not one of
 * these: a wrong size for the family, or a Unix path that is empty (Linux's abstract
 * names are not modelled) or not NUL-terminated inside sun_path. */
bool stvm__socket_address_sockaddr(stvm_vm *vm, stvm_oop address, struct sockaddr_storage *sa,
                                   socklen_t *len);
/* A new ByteArray holding len bytes of sa (a socket address as above), or NIL (no
 * memory). */
stvm_oop stvm__socket_address_new(stvm_vm *vm, const struct sockaddr_storage *sa, socklen_t len);

/* A Unix socket's address for path: false when path is empty or does not fit sun_path
 * with its NUL. */
bool stvm__socket_unix_sockaddr(const char *path, struct sockaddr_storage *sa, socklen_t *len);

#endif
