/*
 * A run with a time limit: Pharo's BlockClosure>>valueWithin:onTimeout:, built as Pharo
 * builds it. A watchdog process just below the timing priority waits on the run's
 * Delay; if the Delay expires before the run ends, it interrupts the running process,
 * whose waits are cancelled from then until the run ends: the wait it is in and every
 * later one answers STVM_EINTR at once, as do stvm_checkpoint and stvm_work_us. C code
 * cannot be unwound, so the function is expected to return when its calls answer
 * EINTR; the run then answers STVM_ETIMEDOUT.
 *
 * Pharo's watchdog runs `delay wait`, which schedules the Delay the caller made. Here
 * the caller schedules it and the watchdog only waits on its semaphore: scheduling may
 * find no memory (the Delay scheduler's room for it), and only the caller can answer
 * that (ENOMEM, fn not called); a watchdog whose timed wait failed had nobody to tell,
 * and the run went on without its limit (found by tests/test_alloc_failure.c).
 */
#include "delay.h"

/* The watchdog's priority: Pharo's timingPriority - 1. */
#define WATCHDOG_PRIORITY (STVM_PRIORITY_MAX - 1)

typedef struct timed_run {
    DELAY_ALIGN delay d;     /* the limit; its expiry signals d.own_sem, the watchdog's */
    stvm_process *target;
    stvm_process *dog;       /* the watchdog, held until the run ends */
    stvm_interrupt expiry;   /* what the watchdog posts to the target (made here: the
                                watchdog would have nobody to tell ENOMEM) */
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
    int err = stvm_semaphore_wait(vm, &r->d.own_sem);
    if (err == STVM_OK && r->running && r->target->core)
        stvm__interrupt_post(vm, r->target->core, &r->expiry);
}

/* The run is over, or never started: the Delay is taken out if it has not expired (or
 * was never handed over), and the watchdog, if there is one yet, may not outlive r, so
 * it is ended wherever it is. Terminating never waits, so a cancelled or terminated
 * caller can do it too. */
static void end_run(stvm_vm *vm, void *arg)
{
    timed_run *r = arg;
    r->running = false;
    if (!vm->active)
        return;   /* stvm_vm_free runs it: the watchdog goes with every other process */
    stvm__interrupt_withdraw(vm->active, &r->expiry);   /* posted, not yet run */
    stvm__delay_unschedule(vm, vm->delay.state, &r->d);
    if (r->dog) {
        stvm_process_terminate(vm, r->dog);
        stvm_process_release(vm, r->dog);
        r->dog = NULL;
    }
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
    delay_sched *ds;
    if ((err = stvm__delay_scheduler(vm, &ds)))
        return err;
    timed_run r = {.target = vm->active->handle, .running = true,
                   .d = {.duration = duration, .from_ms = from_ms}};
    r.expiry = (stvm_interrupt){.fn = expire, .arg = &r, .posters = true};
    stvm__sem_init(vm, &r.d.own_sem);
    /* The run's end is a cleanup of the library's own (Pharo: [...] ensure: [...]),
     * registered before anything can switch (the new watchdog, 79, and the timing
     * process preempt the caller), so that a caller terminated anywhere in the run ends
     * its Delay and watchdog too, which would otherwise wait on r in the dead caller's
     * frame (found by fuzz_api, twice: inside fn, then before it). */
    stvm_proc *a = vm->active;
    stvm_ensure_node end = {.fn = end_run, .arg = &r, .next = a->ensures, .on_stack = true};
    a->ensures = &end;
    stvm_alloc_mark mark = stvm__alloc_mark(vm);
    err = stvm_spawn(vm, WATCHDOG_PRIORITY, "watchdog", watchdog, &r, &r.dog);
    /* The watchdog has run up to its wait; the timing process preempts us here. */
    if (!err)
        err = stvm__delay_request_by(vm, ds, &r.d, r.dog->core);
    if (err) {
        stvm__ensure_unlink(a, &end);
        end_run(vm, &r);   /* a failed call changes nothing */
        stvm__alloc_forget(vm, mark);
        return err;
    }
    fn(vm, arg);
    stvm__ensure_unlink(a, &end);   /* cleanups fn left registered stay */
    end_run(vm, &r);
    if (r.expired)
        stvm__uncancel(vm->active);
    return r.expired ? STVM_ETIMEDOUT : STVM_OK;
}

int stvm_call_within_ms(stvm_vm *vm, stvm_fn fn, void *arg, int64_t ms)
{
    return run_within(vm, ms, true, fn, arg);
}

int stvm_call_within_us(stvm_vm *vm, stvm_fn fn, void *arg, int64_t us)
{
    return run_within(vm, us, false, fn, arg);
}
