/*
 * The public name calls of the scheduler's objects and of Delays (stvm/core.h, "Names"):
 * each checks its handle and its caller, then the table of vm/names.h does the rest.
 * Sockets have theirs beside them (image-stubs/network/socket_name.c).
 */
#include "monitor.h"
#include "shared_queue.h"

#include "../vm/names.h"

/* The caller's side of every name call: a VM, and the VM's thread (the table has no
 * lock). EINVAL and ENOTPROC. */
static int caller_ok(const stvm_vm *vm)
{
    if (!vm)
        return STVM_EINVAL;
    return vm->active && !stvm__in_process(vm) ? STVM_ENOTPROC : STVM_OK;
}

static int set_name(stvm_vm *vm, bool is_kind, const void *obj, const char *name)
{
    int err = caller_ok(vm);
    if (!err && !is_kind)
        err = STVM_EINVAL;
    return err ? err : stvm__name_set(vm, obj, name);
}

static int get_name(const stvm_vm *vm, bool is_kind, const void *obj, char *buf, size_t size)
{
    int err = caller_ok(vm);
    if (!err && (!is_kind || (!buf && size)))
        err = STVM_EINVAL;
    return err ? err : stvm__name_copy(vm, obj, buf, size);
}

int stvm_semaphore_set_name(stvm_vm *vm, stvm_semaphore *sem, const char *name)
{
    return set_name(vm, vm && stvm__is_sem(vm, sem), sem, name);
}

int stvm_semaphore_get_name(stvm_vm *vm, const stvm_semaphore *sem, char *buf, size_t size)
{
    return get_name(vm, vm && stvm__is_sem(vm, sem), sem, buf, size);
}

int stvm_mutex_set_name(stvm_vm *vm, stvm_mutex *m, const char *name)
{
    return set_name(vm, vm && stvm__is_mutex(vm, m), m, name);
}

int stvm_mutex_get_name(stvm_vm *vm, const stvm_mutex *m, char *buf, size_t size)
{
    return get_name(vm, vm && stvm__is_mutex(vm, m), m, buf, size);
}

int stvm_queue_set_name(stvm_vm *vm, stvm_queue *q, const char *name)
{
    return set_name(vm, vm && stvm__is_queue(vm, q), q, name);
}

int stvm_queue_get_name(stvm_vm *vm, const stvm_queue *q, char *buf, size_t size)
{
    return get_name(vm, vm && stvm__is_queue(vm, q), q, buf, size);
}

int stvm_monitor_set_name(stvm_vm *vm, stvm_monitor *m, const char *name)
{
    return set_name(vm, vm && stvm__is_monitor(vm, m), m, name);
}

int stvm_monitor_get_name(stvm_vm *vm, const stvm_monitor *m, char *buf, size_t size)
{
    return get_name(vm, vm && stvm__is_monitor(vm, m), m, buf, size);
}

int stvm_delay_set_name(stvm_vm *vm, stvm_delay *d, const char *name)
{
    return set_name(vm, vm && stvm__is_delay(vm, d), d, name);
}

int stvm_delay_get_name(stvm_vm *vm, const stvm_delay *d, char *buf, size_t size)
{
    return get_name(vm, vm && stvm__is_delay(vm, d), d, buf, size);
}
