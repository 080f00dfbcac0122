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
    stvm_job *made;
    int err = stvm__job_new(vm, sizeof(socket_lookup), lookup_run, lookup_orphan, &made);
    if (err)
        return err;
    socket_lookup *l = (socket_lookup *)made;
    atomic_init(&l->claim, LOOKUP_PENDING);
    l->next = p->lookups;
    p->lookups = l;
    *out = l;
    return STVM_OK;
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
    socket_lookup *l = (socket_lookup *)stvm__job_take(&p->spare_lookups);
    if (!l && (err = lookup_new(vm, p, &l)))
        return err;
    snprintf(l->host, sizeof l->host, "%s", host);
    l->fn = p->lookup_fn ? p->lookup_fn : getaddrinfo;
    l->result = NULL;
    l->gai = l->sys_errno = 0;
    atomic_store_explicit(&l->claim, LOOKUP_PENDING, memory_order_relaxed);
    if ((err = stvm__workers_submit(pool, &l->base.task))) {
        stvm__job_put(&p->spare_lookups, &l->base);
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
    socket_plugin *p = vm->sockets.state;
    stvm__job_put(&p->spare_lookups, &l->base);
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
    stvm__job_abandon(&p->spare_lookups, &l->base);
}

void stvm__lookups_destroy(stvm_vm *vm)
{
    socket_plugin *p = vm->sockets.state;
    for (socket_lookup *l = p->lookups, *next; l; l = next) {
        next = l->next;
        /* Still running on a detached thread: that thread frees it (lookup_orphan). */
        if (atomic_load_explicit(&l->base.task.state, memory_order_acquire) ==
            STVM_TASK_RUNNING)
            continue;
        if (l->result)
            freeaddrinfo(l->result);
        free(l);
    }
    p->lookups = NULL;
    p->spare_lookups = (stvm_job_pool){NULL, NULL};
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
    if (p)
        stvm__job_reap(&p->spare_lookups);
    *jobs = *free_jobs = 0;
    for (socket_lookup *l = p ? p->lookups : NULL; l; l = l->next)
        ++*jobs;
    for (stvm_job *j = p ? p->spare_lookups.free : NULL; j; j = j->next_free)
        ++*free_jobs;
}
