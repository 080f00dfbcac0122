/*
 * A run with a time limit: Pharo's BlockClosure>>valueWithin:onTimeout:, built as Pharo
 * builds it. A watchdog process just below the timing priority waits for the run's end
 * with a timed wait; if the time runs out first, it interrupts the running process,
 * whose waits are cancelled from then until the run ends: the wait it is in and every
 * later one answers STVM_EINTR at once, as do stvm_checkpoint and stvm_work_us. C code
 * cannot be unwound, so the function is expected to return when its calls answer
 * EINTR; the run then answers STVM_ETIMEDOUT.
 */
#include "delay.h"

/* The watchdog's priority: Pharo's timingPriority - 1. */
#define WATCHDOG_PRIORITY (STVM_PRIORITY_MAX - 1)

typedef struct timed_run {
    stvm_semaphore done;     /* signalled when the run ends before its time */
    stvm_process *target;
    stvm_process *dog;       /* the watchdog, held until the run ends */
    int64_t duration;
    bool from_ms;
    bool running;            /* the function has not returned yet */
    bool expired;            /* the time ran out while it ran: its waits are cancelled */
} timed_run;

/* Runs in the target, at the scheduling point where the watchdog found it. */
static void expire(stvm_vm *vm, void *arg)
{
    timed_run *r = arg;
    if (r->running && !r->expired) {
        r->expired = true;
        stvm__cancel(vm->active);
    }
}

static void watchdog(stvm_vm *vm, void *arg)
{
    timed_run *r = arg;
    int err = r->from_ms ? stvm_semaphore_wait_timeout_ms(vm, &r->done, r->duration)
                         : stvm_semaphore_wait_timeout_us(vm, &r->done, r->duration);
    if (err == STVM_ETIMEDOUT && r->running)
        stvm_process_interrupt(vm, r->target, expire, r);
}

/* The run is over: the watchdog may not outlive r, so it is ended wherever it is (its
 * Delay is unscheduled by its wait guard). Terminating never waits, so a cancelled or
 * terminated caller can do it too. */
static void end_run(stvm_vm *vm, void *arg)
{
    timed_run *r = arg;
    r->running = false;
    if (!vm->active)
        return;   /* stvm_vm_free runs it: the watchdog goes with every other process */
    stvm_process_terminate(vm, r->dog);
    stvm_process_release(vm, r->dog);
}

static int run_within(stvm_vm *vm, int64_t duration, bool from_ms, stvm_fn fn, void *arg)
{
    if (!vm || !fn)
        return STVM_EINVAL;
    int err = stvm__check_duration(vm, duration, from_ms);
    if (err)
        return err;
    if (duration == 0)
        return STVM_ETIMEDOUT;   /* Pharo: a duration of zero answers the timeout at once */
    timed_run r = {.target = vm->active->handle, .duration = duration, .from_ms = from_ms,
                   .running = true};
    stvm__sem_init(vm, &r.done);
    if ((err = stvm_spawn(vm, WATCHDOG_PRIORITY, "watchdog", watchdog, &r, &r.dog)))
        return err;
    /* The run's end is a cleanup of the library's own (Pharo: [...] ensure: [watchdog
     * terminate]), so that a caller terminated inside fn ends its watchdog too, which
     * would otherwise wait on r in the dead caller's frame. */
    stvm_proc *a = vm->active;
    stvm_ensure_node end = {.fn = end_run, .arg = &r, .next = a->ensures, .on_stack = true};
    a->ensures = &end;
    fn(vm, arg);
    stvm__ensure_unlink(a, &end);   /* cleanups fn left registered stay */
    end_run(vm, &r);
    if (r.expired)
        stvm__uncancel(vm->active);
    return r.expired ? STVM_ETIMEDOUT : STVM_OK;
}

int stvm_run_within_ms(stvm_vm *vm, int64_t ms, stvm_fn fn, void *arg)
{
    return run_within(vm, ms, true, fn, arg);
}

int stvm_run_within_us(stvm_vm *vm, int64_t us, stvm_fn fn, void *arg)
{
    return run_within(vm, us, false, fn, arg);
}
