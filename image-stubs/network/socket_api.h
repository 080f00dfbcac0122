/*
 * What the public socket and stream calls share (socket_open.c: the calls that make
 * sockets; socket_api.c: the calls on a socket; stream_api.c: the streams): the checks
 * every one of them makes first.
 */
#ifndef STVM_IMAGE_STUBS_SOCKET_API_H
#define STVM_IMAGE_STUBS_SOCKET_API_H

#include "socket_stream.h"

/* The longest buffer a call takes (its answer is an int64_t). */
#define STVM_SOCKET_MAX_LEN ((size_t)INT64_MAX)

/* s if it is a socket of vm, else NULL (vm NULL too). */
stvm_socket *stvm__socket_of(stvm_vm *vm, const stvm_socket *s);
/* st if it is a stream of vm, else NULL. */
stvm_stream *stvm__stream_of(stvm_vm *vm, const stvm_stream *st);
/* A wait's timeout and its caller: EINVAL (below -1), ENOTPROC (not a process of vm on
 * its thread), ERANGE (longer than the Delay scheduler takes), else STVM_OK. */
int stvm__socket_check_timeout(stvm_vm *vm, int64_t timeout_ms);

#endif
