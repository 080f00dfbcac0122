/*
 * Running: stvm_run, the idle process and what it does when nothing can run
 * (relinquish the processor, primitive 230), and deadlock detection.
 *
 * The active process has the highest priority of all runnable ones, except while a
 * process below the idle priority borrows the processor from the idle process.
 */
#include "sched.h"

#include <poll.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "timer.h"

void stvm__relinquish(stvm_vm *vm, uint64_t us)
{
    bool is_idle = vm->active == vm->idle;
    uint64_t now = stvm__clock_now_us(vm), deadline = stvm__timer_deadline(vm);
    if (vm->clock.kind == STVM_CLOCK_SIMULATED) {
        if (!is_idle)
            return;   /* simulated time moves only when every process is blocked */
        if (stvm__timer_is_work(vm)) {
            if (deadline > now)
                vm->clock.sim_now_us = deadline;
            return;
        }
        us = UINT64_MAX;   /* only an external signal can help: wait for it */
    } else if (deadline) {
        uint64_t left = deadline > now ? deadline - now : 0;
        if (left < us)
            us = left;
    }
    if (us == 0)
        return;
    atomic_store(&vm->ext.sleeping, 1);
    if (!atomic_load(&vm->ext.pending)) {
        struct pollfd pfd = {.fd = vm->ext.wake_fd, .events = POLLIN};
        struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
        vm->stats.idle_sleeps++;
        ppoll(&pfd, 1, us == UINT64_MAX ? NULL : &ts, NULL);
    }
    atomic_store(&vm->ext.sleeping, 0);
    uint64_t drained;
    ssize_t n = read(vm->ext.wake_fd, &drained, sizeof drained);
    (void)n;
}

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

void stvm__idle_main(stvm_vm *vm, void *arg)
{
    (void)arg;
    for (;;) {
        stvm__poll_events(vm);
        int h = stvm__runq_highest(vm);
        if (h >= STVM_PRIORITY_IDLE) {
            stvm__runq_put(vm, vm->idle, true);
            stvm__transfer_to(vm, stvm__runq_pop_highest(vm));
        } else if (h) {
            lend_processor(vm);
        } else if (vm->live_user == 0) {
            exit_run(vm, STVM_OK);
        } else if (!stvm__timer_is_work(vm) && !stvm__external_can_wake(vm)) {
            exit_run(vm, STVM_EDEADLOCK);
        } else {
            stvm__relinquish(vm, vm->cfg.idle_relinquish_us);
        }
    }
}

int stvm_run(stvm_vm *vm)
{
    if (!vm)
        return STVM_EINVAL;
    if (vm->running || vm->active || stvm__thread_vm())
        return STVM_EBUSY;   /* this VM, or another on this thread, is running */
    vm->running = true;
    stvm__ctx_host_enter(vm);
    stvm__poll_events(vm);
    stvm__transfer_from_host(vm);
    stvm__ctx_host_leave(vm);
    vm->running = false;
    return vm->run_result;
}
