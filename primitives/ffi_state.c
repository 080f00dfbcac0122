/*
 * The VM's FFI state: made on first use and hung off vm->ffi with the hooks stvm_run and
 * stvm_vm_free call; the counters and the last failure code.
 */
#include "ffi.h"

#include "../scheduler/timer.h"
#include "../vm/abi.h"
#include "../vm/alloc.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Callbacks from other threads are run only inside stvm_run: at its start the queue
 * opens, at its end what is still queued is answered 0. */
static void run_edge(stvm_vm *vm, bool running)
{
    ffi_state *st = vm->ffi.state;
    if (running) {
        pthread_mutex_lock(&st->queue_lock);
        st->accepting = st->queue_index != 0;
        pthread_mutex_unlock(&st->queue_lock);
    } else {
        stvm__ffi_callbacks_flush(vm, false);
    }
}

static void destroy(stvm_vm *vm)
{
    ffi_state *st = vm->ffi.state;
    /* Threads waiting for a callback are let go first: a worker among them may then
     * return from its callout, and be joined. */
    stvm__ffi_callbacks_flush(vm, true);
    struct timespec deadline;
    stvm__ffi_shutdown_deadline(&deadline);
    stvm__ffi_jobs_destroy(vm, &deadline);
    stvm__ffi_functions_destroy(vm);
    stvm__ffi_callbacks_destroy(vm);
    pthread_mutex_destroy(&st->queue_lock);
    free(st);
    vm->ffi.state = NULL;
    vm->ffi.destroy = NULL;
    vm->ffi.run_edge = NULL;
}

int stvm__ffi_state(stvm_vm *vm, ffi_state **out)
{
    if (vm->ffi.state) {
        *out = vm->ffi.state;
        return STVM_OK;
    }
    ffi_state *st = stvm__calloc(1, sizeof *st);
    if (!st)
        return STVM_ENOMEM;
    if (pthread_mutex_init(&st->queue_lock, NULL) != 0) {
        free(st);
        return STVM_ENOMEM;
    }
    atomic_init(&st->refused, 0);
    atomic_init(&st->host_depth, 0);
    atomic_init(&st->host_thread, pthread_self());
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 1)
        st->spin_ns = (int64_t)vm->cfg.ffi_spin_us * 1000;
    stvm__spin_init(&st->vm_spin, st->spin_ns);
    stvm__spin_init(&st->answer_spin, st->spin_ns);
    vm->ffi.state = st;
    vm->ffi.destroy = destroy;
    vm->ffi.run_edge = run_edge;
    *out = st;
    return STVM_OK;
}

void stvm__ffi_shutdown_deadline(struct timespec *out)
{
    clock_gettime(CLOCK_REALTIME, out);
    out->tv_sec += STVM_FFI_SHUTDOWN_MS / 1000;
    out->tv_nsec += (long)(STVM_FFI_SHUTDOWN_MS % 1000) * 1000000L;
    if (out->tv_nsec >= 1000000000L) {
        out->tv_sec++;
        out->tv_nsec -= 1000000000L;
    }
}

int stvm__ffi_fail(stvm_vm *vm, int code)
{
    vm->ffi.last_failure = code;
    if (vm->ffi.state)
        ((ffi_state *)vm->ffi.state)->stats.callouts_failed++;
    return STVM_EPRIM;
}

static bool external_pending(void *arg)
{
    stvm_vm *vm = arg;
    return atomic_load_explicit(&vm->ext.pending, memory_order_relaxed) != 0;
}

/* Only while nothing but the idle process could run, and never past the next deadline. */
int64_t stvm__ffi_spin(stvm_vm *vm)
{
    ffi_state *st = vm->ffi.state;
    if (!st->spin_ns || stvm__runq_highest(vm) > STVM_PRIORITY_IDLE)
        return 0;
    int64_t limit = INT64_MAX, since;
    uint64_t deadline = stvm__timer_deadline(vm), now = stvm__clock_now_us(vm);
    if (deadline)
        limit = deadline > now ? (int64_t)(deadline - now) * 1000 : 0;
    stvm__spin(&st->vm_spin, limit, external_pending, vm, &since);
    return since;
}

void stvm__ffi_spin_woke(stvm_vm *vm, int64_t since)
{
    stvm__spin_woke(&((ffi_state *)vm->ffi.state)->vm_spin, since);
}

int stvm_ffi_last_failure(stvm_vm *vm)
{
    return vm ? vm->ffi.last_failure : STVM_EINVAL;
}

int stvm_ffi_get_stats_(stvm_vm *vm, stvm_ffi_stats *out, size_t out_size)
{
    if (!vm || !out)
        return STVM_EINVAL;
    int err = stvm__struct_size_check(STVM__STRUCT_FFI_STATS, out_size);
    if (err)
        return err;
    ffi_state *st = vm->ffi.state;
    stvm_ffi_stats s;
    memset(&s, 0, sizeof s);
    if (st) {
        s = st->stats;
        s.callbacks_refused = atomic_load(&st->refused);
    }
    memcpy(out, &s, out_size);
    return STVM_OK;
}
