/* A VM's lifetime: stvm_vm_create (with its idle process), stvm_vm_free, its counters. */
#include "sched.h"

#include <stdlib.h>
#include <string.h>

#include "../vm/abi.h"
#include "../vm/aio.h"
#include "../vm/config.h"
#include "../vm/debugger.h"
#include "../vm/heartbeat.h"
#include "../vm/integer.h"
#include "../vm/names.h"
#include "../vm/objmem.h"
#include "../vm/sim_world.h"
#include "../vm/stack.h"
#include "context.h"
#include "process_local.h"
#include "shared_queue.h"
#include "../vm/alloc.h"

static int start_idle(stvm_vm *vm)
{
    stvm_process *idle;
    int err = stvm__spawn(vm, STVM_PRIORITY_IDLE, "Idle Process", stvm__idle_main, NULL, 0,
                          true, STVM_PF_VM_OWN, &idle);
    if (!err)
        vm->idle = idle->core;
    return err;
}

int stvm_vm_create_(const stvm_config *cfg, stvm_vm **out, size_t cfg_size)
{
    if (!out)
        return STVM_EINVAL;
    stvm_config c;
    int err = cfg ? stvm__config_read(cfg, cfg_size, &c) : stvm_config_init(&c);
    if (!err)
        err = stvm__config_normalise(&c, NULL, 0);
    if (err)
        return err;
    stvm_vm *vm = stvm__calloc(1, sizeof *vm);
    if (!vm)
        return STVM_ENOMEM;
    vm->cfg = c;
    stvm__events_update(vm);   /* switch_watch: cfg.cpu_time */
    vm->ext.wake_fd = -1;
    vm->aio.epfd = -1;
    /* Until the first stvm_run, external signals write the wake descriptor (see
     * stvm_run_mode). */
    atomic_init(&vm->ext.sleeping, 1);
    for (int i = 0; i < STVM_NUM_PRIORITIES; i++)
        vm->runq[i].kind = STVM_LIST_RUNQ;
    stvm__int_init(vm);
    stvm__stackmem_init(vm);
    if ((err = stvm__objmem_init(vm)) || (err = stvm__clock_init(vm)) ||
        (err = stvm__external_init(vm)) || (err = stvm__aio_init(vm)) ||
        (err = stvm__ctx_vm_init(vm)) || (err = start_idle(vm)) ||
        (vm->cfg.idle_mode == STVM_IDLE_OSVM764 && (err = stvm__heartbeat_start(vm)))) {
        stvm_vm_free(vm);
        return err;
    }
    stvm__debug_register(vm);   /* whole: a debugger may read it from now on */
    *out = vm;
    return STVM_OK;
}

void stvm_vm_free(stvm_vm *vm)
{
    if (!vm || vm->running)
        return;
    stvm__debug_unregister(vm);
    stvm__heartbeat_stop(vm);
    stvm__processes_destroy(vm);
    /* Before the external table and object memory go: its workers still signal. */
    if (vm->ffi.destroy)
        vm->ffi.destroy(vm);
    if (vm->sockets.destroy)
        vm->sockets.destroy(vm);
    if (vm->delay.destroy)
        vm->delay.destroy(vm);
    stvm__queues_destroy(vm);
    /* After the processes' cleanups (a binding's restore is one), before object memory
     * (held handles, whose values these are, live there). */
    stvm__locals_destroy(vm);
    stvm__stackmem_destroy(vm);
    stvm__aio_destroy(vm);
    stvm__external_destroy(vm);
    stvm__objmem_destroy(vm);
    stvm__names_destroy(vm);   /* after every object went: a free forgets a name */
    stvm__ctx_vm_destroy(vm);
    stvm__trace_destroy(vm);
    stvm__sim_destroy(vm);
    free(vm);
}

int stvm_vm_config_(const stvm_vm *vm, stvm_config *out, size_t out_size)
{
    if (!vm || !out)
        return STVM_EINVAL;
    int err = stvm__struct_size_check(STVM__STRUCT_CONFIG, out_size);
    if (!err)
        memcpy(out, &vm->cfg, out_size);
    return err;
}

int stvm_vm_get_stats_(stvm_vm *vm, stvm_stats *out, size_t out_size)
{
    if (!vm || !out)
        return STVM_EINVAL;
    int err = stvm__struct_size_check(STVM__STRUCT_STATS, out_size);
    if (err)
        return err;
    stvm_stats s = vm->stats;
    s.processes_live = vm->live_total;   /* derived, never stored */
    memcpy(out, &s, out_size);
    return STVM_OK;
}

void stvm_vm_reset_stats(stvm_vm *vm)
{
    if (!vm)
        return;
    stvm_stats keep = vm->stats;
    memset(&vm->stats, 0, sizeof vm->stats);
    vm->stats.objects_live = keep.objects_live;
    vm->stats.bytes_live = keep.bytes_live;
}
