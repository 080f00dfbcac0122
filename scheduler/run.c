/*
 * Running: stvm_run and its modes, the idle process, deadlock detection, and stopping
 * from outside (stvm_stop). What the idle process does when nothing can run, and what
 * a wake-up costs, is relinquish.c's.
 *
 * The active process has the highest priority of all runnable ones, except while a
 * process below the idle priority borrows the processor from the idle process.
 */
#include "sched.h"

#include <limits.h>
#include <stdatomic.h>
#include <unistd.h>

#include "../vm/aio.h"
#include "../vm/sim_world.h"
#include "context.h"
#include "timer.h"

/* Hand the processor to the embedding thread; stvm_run answers result. The idle
 * process waits at the front of its queue, so the next run starts where this stopped. */
static void exit_run(stvm_vm *vm, int result)
{
    vm->run_result = result;
    stvm__runq_put(vm, vm->idle, false);
    stvm__transfer_to_host(vm);
}

/* Only processes below the idle priority can run: they borrow the processor (Pharo
 * would starve them; docs/differences-from-pharo.md). Idle waits on its run queue and
 * takes it back at the next scheduling point, where it preempts them. */
static void lend_processor(stvm_vm *vm)
{
    stvm_proc *next = stvm__runq_pop_highest(vm);
    stvm__runq_put(vm, vm->idle, true);
    stvm__transfer_to(vm, next);
}

/* Can anything still wake a process: a deadline worth waiting for, a descriptor
 * somebody waits on, an external signal? The external table's answer may scan the slots
 * in use, so it is asked last. */
static bool can_be_woken(stvm_vm *vm)
{
    return stvm__timer_is_work(vm) || stvm__aio_any_armed(vm) || stvm__external_can_wake(vm) ||
           stvm__sim_next(vm);
}

/* Before a run that may not wait gives the processor back, one look without waiting:
 * a descriptor that became ready before or during the run is seen by this run, not
 * by the next busy poll (20 ms away), and the look takes what made the backend
 * descriptor readable (the edge, the external table's eventfd), so a host loop that
 * watches it is not woken again for what this run has seen. True when it woke a
 * process (its signal is pending: the idle loop drains it and runs again). */
static bool last_look_woke(stvm_vm *vm)
{
    stvm__aio_wait(vm, 0);
    return atomic_load_explicit(&vm->ext.pending, memory_order_relaxed) != 0;
}

/* The idle process's one OS wait: the configured quantum, or until something is due. */
static uint64_t quantum_us(const stvm_vm *vm)
{
    return vm->cfg.idle_relinquish_us ? vm->cfg.idle_relinquish_us : UINT64_MAX;
}

/* Nothing can run: wait in the OS, or give the processor back as the run mode says. */
static void nothing_to_run(stvm_vm *vm)
{
    if (vm->live_user == 0)
        exit_run(vm, vm->run_mode == STVM_RUN_DEFAULT ? STVM_OK : 0);
    else if (!can_be_woken(vm))
        exit_run(vm, STVM_EDEADLOCK);
    else if (vm->run_mode == STVM_RUN_NOWAIT || (vm->run_mode == STVM_RUN_ONCE && vm->run_slept)) {
        if (!last_look_woke(vm))
            exit_run(vm, 1);
    } else {
        stvm__relinquish(vm, quantum_us(vm));
        vm->run_slept = true;
    }
}

void stvm__idle_main(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (;;) {
        if (stvm__poll_events_idle(vm)) {
            vm->stopping = false;
            exit_run(vm, STVM_ESTOPPED);
            continue;
        }
        int h = stvm__runq_highest(vm);
        if (h >= STVM_PRIORITY_IDLE) {
            stvm__runq_put(vm, vm->idle, true);
            stvm__transfer_to(vm, stvm__runq_pop_highest(vm));
        } else if (h) {
            lend_processor(vm);
        } else {
            nothing_to_run(vm);
        }
    }
}

/* Something other than the idle process can run now. */
static bool runnable(const stvm_vm *vm)
{
    const stvm_list *idle_q = &vm->runq[STVM_PRIORITY_IDLE - 1];
    int h = stvm__runq_highest(vm);
    return h > STVM_PRIORITY_IDLE || (h && h < STVM_PRIORITY_IDLE) ||
           (h == STVM_PRIORITY_IDLE && (idle_q->first != vm->idle || idle_q->last != vm->idle));
}

/* A process other than idle is on a run queue, whatever its priority (runnable() above
 * leaves out one below the idle priority while idle waits on its queue ahead of it). */
static bool any_ready_but_idle(const stvm_vm *vm)
{
    const stvm_list *idle_q = &vm->runq[STVM_PRIORITY_IDLE - 1];
    uint64_t others = vm->ready_bits[0] & ~((uint64_t)1 << (STVM_PRIORITY_IDLE - 1));
    return others || vm->ready_bits[1] ||
           (idle_q->first && (idle_q->first != vm->idle || idle_q->last != vm->idle));
}

bool stvm__nothing_can_run(stvm_vm *vm)
{
    return (!vm->active || vm->active == vm->idle) && !any_ready_but_idle(vm) &&
           !can_be_woken(vm);
}

/* Between runs, a ready process is work for a host loop that watches only
 * stvm_backend_fd (docs/io.md, "Running inside another event loop"): the first spawn
 * of a fresh VM, a signal or a put from the embedding thread, work a stopped run left.
 * One write of the wake descriptor until the next run begins, which takes it (its
 * epoll looks consume the eventfd), however many processes become ready meanwhile. */
void stvm__host_ready(stvm_vm *vm)
{
    if (vm->host_told || vm->running || !vm->idle || !runnable(vm))
        return;   /* the idle process's own spawn, or already told */
    vm->host_told = true;
    uint64_t one = 1;
    ssize_t n = write(vm->ext.wake_fd, &one, sizeof one);
    (void)n;   /* EAGAIN: the counter is already non-zero, which is all it needs */
}

int stvm_run_mode(stvm_vm *vm, int mode)
{
    if (!vm || mode < STVM_RUN_DEFAULT || mode > STVM_RUN_NOWAIT)
        return STVM_EINVAL;
    if (vm->running || vm->active || stvm__thread_vm())
        return STVM_EBUSY;   /* this VM, or another on this thread, is running */
    vm->running = true;
    if (vm->host_told) {
        /* Take back what stvm__host_ready wrote: this run runs what was ready, and a run
         * that ends with every process finished makes no last look that would take it
         * (a host loop would be woken again for nothing). A signal or stop it covered
         * too is still pending, and the run's first scheduling point sees it. */
        uint64_t drained;
        ssize_t n = read(vm->ext.wake_fd, &drained, sizeof drained);
        (void)n;
        vm->host_told = false;
    }
    vm->point_clock_us = stvm__clock_now_us(vm);   /* fresh for the run's first waits */
    vm->run_mode = mode;
    vm->run_slept = false;
    /* While it runs, the VM's own waits decide when the wake descriptor is written. */
    atomic_store(&vm->ext.sleeping, 0);
    if (vm->ffi.run_edge)
        vm->ffi.run_edge(vm, true);
    stvm__ctx_host_enter(vm);
    if (stvm__poll_events(vm)) {   /* stopped before it began: the first scheduling point */
        vm->stopping = false;
        vm->run_result = STVM_ESTOPPED;
    } else {
        stvm__transfer_from_host(vm);
    }
    stvm__ctx_host_leave(vm);
    if (vm->ffi.run_edge)
        vm->ffi.run_edge(vm, false);
    /* Between runs every external signal writes it, so stvm_backend_fd tells a host
     * event loop that there is something to do. A signal that came after the run's
     * last look, while its writes were still off, writes it now (the Dekker pair of
     * external_drain.c: sleeping is set before pending is read). */
    atomic_store(&vm->ext.sleeping, 1);
    if (atomic_load(&vm->ext.pending))
        stvm__external_wake_if_sleeping(vm);
    vm->running = false;
    stvm__host_ready(vm);   /* a stopped run may leave processes ready to go on */
    return vm->run_result;
}

int stvm_run(stvm_vm *vm)
{
    return stvm_run_mode(vm, STVM_RUN_DEFAULT);
}

void stvm_stop(stvm_vm *vm)
{
    if (!vm)
        return;
    atomic_store(&vm->stop_requested, 1);
    atomic_store(&vm->ext.pending, 1);
    stvm__external_wake_if_sleeping(vm);
}

int stvm_backend_fd(stvm_vm *vm)
{
    return vm ? vm->aio.epfd : STVM_EINVAL;
}

int stvm_backend_timeout_ms(stvm_vm *vm)
{
    if (!vm)
        return STVM_EINVAL;
    if (runnable(vm) || atomic_load(&vm->ext.pending))
        return 0;
    if (!stvm__timer_is_work(vm))
        return -1;
    if (vm->clock.kind == STVM_CLOCK_SIMULATED)
        return 0;   /* its time moves when it runs, not while the host waits */
    uint64_t now = stvm__clock_now_us(vm), deadline = stvm__timer_deadline(vm);
    uint64_t ms = deadline > now ? (deadline - now + 999) / 1000 : 0;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}
