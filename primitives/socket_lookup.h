/*
 * Host name lookups off the VM's thread (socket_lookup.c), for stvm_tcp_connect: a job
 * carries one host name to a thread of the VM's worker pool (the threads of the FFI's
 * threaded callouts, stvm__ffi_pool), getaddrinfo runs there, and the job's semaphore,
 * registered in the external table, brings the answer back as a threaded FFI call's
 * does. Waiting for it is the image side's (image-stubs/network/resolve.c). Jobs are
 * kept with their semaphores and reused, so a lookup costs no allocation once warm.
 *
 * A caller that gives up (its time ran out, it was interrupted or terminated) abandons
 * its job: the addresses the worker found are freed as soon as they arrive, by the
 * worker if they come after the caller gave up and by the caller if they came before,
 * never both; the job goes back to the free list once its signal has been taken. The
 * plugin's resolver primitives (prim_socket_names.c) stay synchronous, as the Unix
 * plugin's are: Pharo's resolver holds one lookup at a time, this one any number.
 */
#ifndef STVM_PRIMITIVES_SOCKET_LOOKUP_H
#define STVM_PRIMITIVES_SOCKET_LOOKUP_H

#include <netdb.h>
#include <stdatomic.h>

#include "../scheduler/worker_jobs.h"

/* The longest host name looked up (RFC 1035: 253 characters without a final dot). */
#define STVM_HOST_NAME_MAX 254

/* What runs on the worker: getaddrinfo, or a stand-in a test sets (stvm__lookup_set_fn). */
typedef int stvm_lookup_fn(const char *host, const char *service, const struct addrinfo *hints,
                           struct addrinfo **res);

typedef struct socket_lookup {
    stvm_job base;                   /* first: its task and semaphore (worker_jobs.h) */
    stvm_lookup_fn *fn;
    char host[STVM_HOST_NAME_MAX + 1];
    struct addrinfo *result;         /* the worker's answer, until taken or freed */
    int gai;                         /* getaddrinfo's return code */
    int sys_errno;                   /* errno after EAI_SYSTEM */
    atomic_int claim;                /* who frees result (socket_lookup.c) */
    struct socket_lookup *next;      /* every job of the VM */
} socket_lookup;

/* Queue a lookup of host (a name, at most STVM_HOST_NAME_MAX bytes) on the VM's pool in
 * a job taken from the free list (abandoned jobs whose answer came back are taken back
 * first) or made: EFULL (no external slot for its semaphore), ENOMEM, ESYS (no thread
 * could start). VM thread only; never switches. */
int stvm__lookup_start(stvm_vm *vm, const char *host, socket_lookup **out);
/* Has the worker answered? (always, once the job's semaphore was signalled) */
static inline bool stvm__lookup_done(socket_lookup *l)
{
    return stvm__job_done(&l->base);
}
/* The answer of a job that is done, its signal taken: STVM_OK with the addresses in *res
 * (the caller's: freeaddrinfo), ENOTFOUND (no such name, or no name server answered),
 * ENOMEM, or another code of stvm__error_from_errno; the job goes back to the free list. */
int stvm__lookup_answer(stvm_vm *vm, socket_lookup *l, struct addrinfo **res);
/* Its caller gives up: the answer is freed when it arrives (now if it has), and the job
 * comes back when its signal has been taken. */
void stvm__lookup_abandon(stvm_vm *vm, socket_lookup *l);
/* stvm_vm_free, after the pool has stopped: free every job no detached thread still runs. */
void stvm__lookups_destroy(stvm_vm *vm);

/* For tests (white-box): what the workers run instead of getaddrinfo (NULL: getaddrinfo
 * again), and the VM's jobs: made, and free once the abandoned ones whose answer came
 * back and whose signal was taken are taken back (the others are neither free nor in
 * use). ENOMEM when the plugin's state cannot be made. */
int stvm__lookup_set_fn(stvm_vm *vm, stvm_lookup_fn *fn);
void stvm__lookup_count(stvm_vm *vm, int *jobs, int *free_jobs);

#endif
