/*
 * External signals. Any thread bumps requests[i]; the VM thread answers each request
 * with one signal and bumps responses[i]. The counters never share a lock with the
 * requester, so stvm_signal_external is safe in a signal handler, and N requests are
 * N signals however they interleave (the design of Cog's sqExternalSemaphores.c).
 * The table lives in vm.h; here are its set-up, the public calls and the drain that a
 * scheduling point runs.
 */
#include "sched.h"

#include "../vm/external.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

int stvm__external_init(stvm_vm *vm)
{
    stvm_external_table *t = &vm->ext;
    t->size = vm->cfg.external_table_size;
    t->requests = calloc((size_t)t->size, sizeof *t->requests);
    t->responses = calloc((size_t)t->size, sizeof *t->responses);
    t->sems = calloc((size_t)t->size, sizeof *t->sems);
    atomic_init(&t->pending, 0);
    t->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!t->requests || !t->responses || !t->sems || t->wake_fd < 0) {
        int err = t->wake_fd < 0 ? STVM_ESYS : STVM_ENOMEM;
        stvm__external_destroy(vm);
        return err;
    }
    for (int i = 0; i < t->size; i++)
        atomic_init(&t->requests[i], 0);
    return STVM_OK;
}

void stvm__external_destroy(stvm_vm *vm)
{
    stvm_external_table *t = &vm->ext;
    free((void *)t->requests);
    free(t->responses);
    free(t->sems);
    if (t->wake_fd >= 0)
        close(t->wake_fd);
    t->requests = NULL;
    t->responses = NULL;
    t->sems = NULL;
    t->wake_fd = -1;
}

void stvm__external_wake_if_sleeping(stvm_vm *vm)
{
    /* Dekker pair with the VM's sleep: it sets sleeping then re-reads pending; we set
     * pending (already done by the caller) then read sleeping. */
    if (!atomic_load(&vm->ext.sleeping))
        return;
    uint64_t one = 1;
    int saved = errno;             /* a signal handler must leave errno as it found it */
    ssize_t n = write(vm->ext.wake_fd, &one, sizeof one);
    (void)n;                       /* EAGAIN: the counter is already non-zero, fine */
    errno = saved;
}

void stvm__external_drain(stvm_vm *vm)
{
    stvm_external_table *t = &vm->ext;
    atomic_store(&t->pending, 0);
    if (atomic_exchange(&vm->stop_requested, 0))
        vm->stopping = true;
    for (int i = 0; i < t->high; i++) {
        uint32_t r = atomic_load(&t->requests[i]);
        while (t->responses[i] != r) {
            t->responses[i]++;
            if (t->sems[i]) {
                vm->stats.external_signals++;
                stvm__sem_signal_noswitch(vm, t->sems[i]);
            }
        }
    }
}

bool stvm__external_can_wake(stvm_vm *vm)
{
    if (atomic_load(&vm->ext.pending))
        return true;
    for (int i = 0; i < vm->ext.high; i++)
        if (vm->ext.sems[i] && vm->ext.sems[i]->list.first)
            return true;
    return false;
}

int stvm_register_external(stvm_vm *vm, stvm_semaphore *sem, int *index_out)
{
    if (!vm || !index_out || !stvm__is_sem(vm, sem))
        return STVM_EINVAL;
    if (sem->external_index)
        return STVM_ESTATE;
    stvm_external_table *t = &vm->ext;
    /* The lowest free slot, searched from where the last search stopped: sockets and
     * descriptor waits register and unregister all the time. */
    for (int i = t->first_free; i < t->size; i++) {
        if (t->sems[i])
            continue;
        t->first_free = i + 1;
        /* Requests made for a previous owner of the slot are forgotten. */
        t->responses[i] = atomic_load(&t->requests[i]);
        t->sems[i] = sem;
        if (i + 1 > t->high)
            t->high = i + 1;
        sem->external_index = i + 1;
        *index_out = i + 1;
        return STVM_OK;
    }
    return STVM_EFULL;
}

int stvm_unregister_external(stvm_vm *vm, int index)
{
    if (!vm || index < 1 || index > vm->ext.size || !vm->ext.sems[index - 1])
        return STVM_EINVAL;
    vm->ext.sems[index - 1]->external_index = 0;
    vm->ext.sems[index - 1] = NULL;
    if (index - 1 < vm->ext.first_free)
        vm->ext.first_free = index - 1;
    return STVM_OK;
}

int stvm_signal_external(stvm_vm *vm, int index)
{
    if (!vm || index < 1 || index > vm->ext.size)
        return STVM_EINVAL;
    stvm__external_request(vm, index);
    stvm__external_wake_if_sleeping(vm);
    return STVM_OK;
}
