/*
 * Host names for stvm_tcp_connect: which strings are names at all, and a name's
 * addresses looked up off the VM's thread (primitives/socket_lookup.h) while the caller
 * waits on the lookup's semaphore and every other process runs.
 */
#ifndef STVM_IMAGE_STUBS_RESOLVE_H
#define STVM_IMAGE_STUBS_RESOLVE_H

#include <netdb.h>
#include <stdbool.h>

#include "../../vm/vm.h"

/* Is host a host name by RFC 1123's rules: dot-separated labels of 1..63 letters,
 * digits, hyphens (not first or last) and underscores (which /etc/hosts files use), at
 * most 253 characters and one final dot, and a last label that is not all digits (so
 * that "999.1.1.1" is a bad address, not a name to look up)? */
bool stvm__host_is_name(const char *host);

/* The addresses of host (a name) before deadline (stvm__socket_deadline's: -1 none),
 * in getaddrinfo's order: STVM_OK with the list in *res (the caller frees it with
 * freeaddrinfo); ENOTFOUND (no such name, or no name server answered); ETIMEDOUT (the
 * time ran out first); EINTR (interrupted) or ESTATE (suspended while it waited, and
 * resumed); EFULL, ENOMEM, ESYS (the lookup could not start), or another code of
 * stvm__error_from_errno. A caller that gives up, or is terminated in the wait, leaves
 * the lookup to its worker, which frees what it finds. Needs an active process;
 * switches. */
int stvm__resolve(stvm_vm *vm, const char *host, int64_t deadline, struct addrinfo **res);

#endif
