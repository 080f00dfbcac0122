/*
 * Host name lookups on the VM's worker threads (see socket_lookup.h): jobs with their
 * registered semaphores, run on the FFI's pool, their answers handed to the caller or
 * freed when it gave up.
 */
#include "socket_lookup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../vm/error.h"
#include "ffi.h"
#include "socket_plugin.h"
#include "../vm/alloc.h"

/* Who frees a job's result. The worker and a caller who gives up each swap in their
 * mark; whoever finds the other's there frees it, so exactly one of them does. */
enum { LOOKUP_PENDING, LOOKUP_ANSWERED, LOOKUP_ABANDONED };

/* ---- the worker's side ------------------------------------------------------------- */

static void lookup_run(stvm_task *t)
{
    socket_lookup *l = (socket_lookup *)t;
    const struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    l->result = NULL;
    l->gai = l->fn(l->host, NULL, &hints, &l->result);
    l->sys_errno = l->gai == EAI_SYSTEM ? errno : 0;
    if (l->gai != 0)
        l->result = NULL;
    int was = atomic_exchange_explicit(&l->claim, LOOKUP_ANSWERED, memory_order_acq_rel);
    if (was == LOOKUP_ABANDONED && l->result) {
        freeaddrinfo(l->result);
        l->result = NULL;
    }
}

/* The VM was freed while the lookup ran: its semaphore went with the VM's objects, the
 * job and what it found are the worker's to free. */
static void lookup_orphan(stvm_task *t)
{
    socket_lookup *l = (socket_lookup *)t;
    if (l->result)
        freeaddrinfo(l->result);
    free(l);
}

/* ---- jobs --------------------------------------------------------------------------- */

static int lookup_new(stvm_vm *vm, socket_plugin *p, socket_lookup **out)
{
    if (!stvm__external_has_room(vm))
        return STVM_EFULL;
    socket_lookup *l = stvm__calloc(1, sizeof *l);
    if (!l)
        return STVM_ENOMEM;
    int err = stvm_semaphore_new(vm, &l->sem);
    if (!err && (err = stvm_external_register(vm, l->sem, &l->task.index)))
        stvm_semaphore_free(vm, l->sem);
    if (err) {
        free(l);
        return err;
    }
    l->task.run = lookup_run;
    l->task.orphan = lookup_orphan;
    atomic_init(&l->task.state, STVM_TASK_IDLE);
    atomic_init(&l->claim, LOOKUP_PENDING);
    l->next = p->lookups;
    p->lookups = l;
    *out = l;
    return STVM_OK;
}

/* Abandoned jobs whose worker answered and whose signal was drained become free. */
static void reap(socket_plugin *p)
{
    for (socket_lookup **at = &p->abandoned_lookups; *at;) {
        socket_lookup *l = *at;
        if (stvm__lookup_done(l) && l->sem->excess_signals > 0) {
            l->sem->excess_signals--;
            *at = l->next_free;
            l->next_free = p->free_lookups;
            p->free_lookups = l;
        } else {
            at = &l->next_free;
        }
    }
}

static void put(socket_plugin *p, socket_lookup *l)
{
    atomic_store_explicit(&l->task.state, STVM_TASK_IDLE, memory_order_relaxed);
    l->next_free = p->free_lookups;
    p->free_lookups = l;
}

int stvm__lookup_start(stvm_vm *vm, const char *host, socket_lookup **out)
{
    socket_plugin *p = stvm__socket_plugin(vm);
    if (!p)
        return STVM_ENOMEM;
    stvm_workers *pool;
    int err = stvm__ffi_pool(vm, &pool);
    if (err)
        return err;
    if (p->abandoned_lookups)
        reap(p);
    socket_lookup *l = p->free_lookups;
    if (l)
        p->free_lookups = l->next_free;
    else if ((err = lookup_new(vm, p, &l)))
        return err;
    snprintf(l->host, sizeof l->host, "%s", host);
    l->fn = p->lookup_fn ? p->lookup_fn : getaddrinfo;
    l->result = NULL;
    l->gai = l->sys_errno = 0;
    atomic_store_explicit(&l->claim, LOOKUP_PENDING, memory_order_relaxed);
    if ((err = stvm__workers_submit(pool, &l->task))) {
        put(p, l);
        return err;
    }
    *out = l;
    return STVM_OK;
}

/* getaddrinfo's failures as the library's codes. */
static int lookup_error(const socket_lookup *l)
{
    switch (l->gai) {
    case EAI_MEMORY: return STVM_ENOMEM;
    case EAI_SYSTEM: return stvm__error_from_errno(l->sys_errno);
    default: return STVM_ENOTFOUND;   /* EAI_NONAME, EAI_NODATA, EAI_AGAIN, EAI_FAIL, ... */
    }
}

int stvm__lookup_answer(stvm_vm *vm, socket_lookup *l, struct addrinfo **res)
{
    int err = l->gai ? lookup_error(l) : l->result ? STVM_OK : STVM_ENOTFOUND;
    *res = err ? NULL : l->result;
    l->result = NULL;
    put(vm->sockets.state, l);
    return err;
}

void stvm__lookup_abandon(stvm_vm *vm, socket_lookup *l)
{
    socket_plugin *p = vm->sockets.state;
    int was = atomic_exchange_explicit(&l->claim, LOOKUP_ABANDONED, memory_order_acq_rel);
    if (was == LOOKUP_ANSWERED && l->result) {
        freeaddrinfo(l->result);
        l->result = NULL;
    }
    l->next_free = p->abandoned_lookups;
    p->abandoned_lookups = l;
}

void stvm__lookups_destroy(stvm_vm *vm)
{
    socket_plugin *p = vm->sockets.state;
    for (socket_lookup *l = p->lookups, *next; l; l = next) {
        next = l->next;
        /* Still running on a detached thread: that thread frees it (lookup_orphan). */
        if (atomic_load_explicit(&l->task.state, memory_order_acquire) == STVM_TASK_RUNNING)
            continue;
        if (l->result)
            freeaddrinfo(l->result);
        free(l);
    }
    p->lookups = p->free_lookups = p->abandoned_lookups = NULL;
}

/* ---- for tests ---------------------------------------------------------------------- */

int stvm__lookup_set_fn(stvm_vm *vm, stvm_lookup_fn *fn)
{
    socket_plugin *p = stvm__socket_plugin(vm);
    if (!p)
        return STVM_ENOMEM;
    p->lookup_fn = fn;
    return STVM_OK;
}

void stvm__lookup_count(stvm_vm *vm, int *jobs, int *free_jobs)
{
    socket_plugin *p = vm->sockets.state;
    if (p && p->abandoned_lookups)
        reap(p);
    *jobs = *free_jobs = 0;
    for (socket_lookup *l = p ? p->lookups : NULL; l; l = l->next)
        ++*jobs;
    for (socket_lookup *l = p ? p->free_lookups : NULL; l; l = l->next_free)
        ++*free_jobs;
}
