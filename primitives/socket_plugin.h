/*
 * What the SocketPlugin's files share, all of it defined in prim_socket.c: the module's
 * state, the one check of a socket handle, and the small helpers every primitive of the
 * plugin uses. prim_socket_io.c and prim_socket_names.c build on prim_socket.c, which
 * uses neither (addresses come from sockaddr.h). The primitives follow the Unix
 * plugin (sqUnixSocket.c): non-blocking descriptors; readiness reaches the image as a
 * signal of the socket's connection, read or write semaphore through a one-shot aio
 * handler (vm/aio.h) armed by the primitive that found the socket not ready
 * (receiveDataAvailable, sendDone, connect, listen, accept). Where the Unix plugin's
 * handlers change a socket's state (connectHandler, acceptHandler), here the
 * primitives that look at the state bring it up to date (stvm__socket_update).
 */
#ifndef STVM_PRIMITIVES_SOCKET_PLUGIN_H
#define STVM_PRIMITIVES_SOCKET_PLUGIN_H

#include <netdb.h>
#include <sys/socket.h>

#include "../vm/bytes.h"
#include "../scheduler/worker_jobs.h"
#include "../vm/integer.h"
#include "prim_table.h"

/* The resolver's states (Pharo's NetNameResolver). */
enum {
    RESOLVER_UNINITIALISED = 0,
    RESOLVER_SUCCESS = 1,
    RESOLVER_BUSY = 2,
    RESOLVER_ERROR = 3,
};

/* The module's state, one per VM (vm->sockets.state), made on first use. */
typedef struct socket_plugin {
    stvm_socket_handle *open;        /* handles that still hold a descriptor */
    int resolver_sema;               /* primitiveInitializeNetwork's semaphore index */
    int resolver_status;
    int resolver_error;              /* 0, or 1 (host not found) */
    uint8_t last_addr[16];           /* the last name lookup's address */
    int last_addr_len;               /* 4 or 16 */
    /* the lookups on the VM's worker threads (socket_lookup.c) */
    struct socket_lookup *lookups;   /* every job */
    stvm_job_pool spare_lookups;     /* free ones, and those their callers gave up */
    int (*lookup_fn)(const char *, const char *, const struct addrinfo *,
                     struct addrinfo **);   /* NULL: getaddrinfo */
    int starved;                     /* listeners starved of descriptors (prim_socket.c) */
} socket_plugin;

/* The plugin's state, made on first use (NULL when out of memory). */
socket_plugin *stvm__socket_plugin(stvm_vm *vm);

/* The socket record named by oop, or NULL with the primitive's failure code in *fail:
 * not a socket record: STVM_PRIM_ERR_BAD_ARGUMENT (the plugin's socketValueOf:); a
 * destroyed one: STVM_PRIM_ERR_GENERIC (socketValid). */
stvm_socket_handle *stvm__socket_handle(stvm_vm *vm, stvm_oop oop, int *fail);

/* Bring a connecting or listening socket's state up to date (what the Unix plugin's
 * connectHandler and acceptHandler do when the descriptor is ready), re-arming the
 * handler while it still waits. */
void stvm__socket_update(stvm_vm *vm, stvm_socket_handle *h);

/* Request a signal of external slot index (0: none), as signalSemaphoreWithIndex. */
void stvm__socket_notify(stvm_vm *vm, int index);

/* Arm the one-shot handler of event (STVM_IO_READ or _WRITE) of h's descriptor to
 * signal slot index, unless it already is (no slot, no descriptor: nothing). looked:
 * the caller has just seen the event not ready (EAGAIN, a poll that found nothing), so
 * the arming needs no system call (stvm__aio_rearm); otherwise the kernel is asked to
 * report readiness it may already have. */
void stvm__socket_arm(stvm_vm *vm, stvm_socket_handle *h, int event, int index, bool looked);

/* Take h's descriptors out of the aio layer and close them; h stays open or not in the
 * plugin's list as its descriptors say. abort: reset the connection (SO_LINGER 0). */
void stvm__socket_close_fds(stvm_vm *vm, stvm_socket_handle *h, bool abort);

/* A SmallInteger argument (any other oop fails with STVM_PRIM_ERR_GENERIC, as the
 * plugin's stackIntegerValue: does). */
bool stvm__socket_int_arg(stvm_vm *vm, stvm_oop oop, int64_t *out);

#endif
