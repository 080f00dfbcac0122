/*
 * CPU work of the active process (stvm_work_us): the model's stand-in for computing,
 * a logging subscriber's or a parser's. On the real clock it spins; on the simulated
 * clock the clock itself moves while the process computes, so that work shows in every
 * timestamp and Delay as it would on a real machine, and what falls due meanwhile (a
 * timer, a peer's answer) happens at its own instant, preempting the worker if it must.
 */
#include "sched.h"

#include "../vm/heartbeat.h"
#include "../vm/sim_world.h"
#include "timer.h"

/* Spin with a checkpoint per clock read; when the checkpoint let others run, the time
 * they took is not the caller's work. */
static uint64_t work_real(stvm_vm *vm, uint64_t us, bool *cut)
{
    uint64_t spent = 0, t = stvm__clock_now_us(vm);
    while (spent < us) {
        uint64_t now = stvm__clock_now_us(vm);
        spent += now - t;
        t = now;
        vm->point_clock_us = now;   /* a reading the scheduling points may use too */
        int r = stvm_checkpoint(vm);
        if (r == STVM_EINTR) {
            *cut = true;
            break;
        }
        if (r == 1)
            t = stvm__clock_now_us(vm);
    }
    return spent;
}

/* Move the clock in steps that end at the next deadline or outside event, with a
 * checkpoint after each: others run in no simulated time unless they work too. */
static uint64_t work_simulated(stvm_vm *vm, uint64_t us, bool *cut)
{
    for (uint64_t left = us;;) {
        if (stvm_checkpoint(vm) == STVM_EINTR) {
            *cut = true;
            return us - left;
        }
        if (!left)
            return us;
        uint64_t now = vm->clock.sim_now_us, step = left;
        uint64_t deadline = stvm__timer_deadline(vm), outside = stvm__sim_next(vm);
        uint64_t beat = stvm__heartbeat_next(vm);   /* where a due timer is checked */
        if (deadline > now && deadline - now < step)
            step = deadline - now;
        if (outside > now && outside - now < step)
            step = outside - now;
        if (beat > now && beat - now < step)
            step = beat - now;
        stvm__sim_advance(vm, now + step);
        left -= step;
    }
}

int stvm__work_us(stvm_vm *vm, uint64_t us, uint64_t *spent_us)
{
    if (!vm)
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    if (us > STVM_MAX_WORK_US)
        return STVM_ERANGE;
    bool cut = false;
    uint64_t spent = vm->clock.kind == STVM_CLOCK_SIMULATED ? work_simulated(vm, us, &cut)
                                                            : work_real(vm, us, &cut);
    if (spent_us)
        *spent_us = spent;
    return cut ? STVM_EINTR : STVM_OK;
}

int stvm_work_us(stvm_vm *vm, uint64_t us)
{
    return stvm__work_us(vm, us, NULL);
}
