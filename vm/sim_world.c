/*
 * The simulated clock's outside world. A peer on its own CPU (nginx answering a request)
 * acts while the VM sleeps or computes, and the VM learns of it only by looking: a timer
 * would wake the VM at the answer's instant and hide exactly the latency the legacy idle
 * mode's blind sleep adds. So these events are not deadlines; the clock runs them as it
 * passes them, whoever moves it (the idle process's jump, stvm_work_us).
 */
#include "sim_world.h"

#include <string.h>

#include "clock.h"
#include "grow.h"
#include "heartbeat.h"
#include "trace.h"

/* Events are few (one per request in flight): a sorted array, inserted into by a
 * shift, is simpler than a heap and keeps equal times in the order they were made. */
int stvm_sim_at(stvm_vm *vm, uint64_t at_us, stvm_sim_fn fn, void *arg)
{
    if (!vm || !fn)
        return STVM_EINVAL;
    if (vm->clock.kind != STVM_CLOCK_SIMULATED)
        return STVM_ESTATE;
    if (at_us < vm->clock.sim_now_us || at_us >= STVM_CLOCK_MAX_US)
        return STVM_ERANGE;
    stvm_sim_world *w = &vm->outside;
    if (!stvm__grow((void **)&w->events, &w->cap, w->n + 1, sizeof *w->events, 8))
        return STVM_ENOMEM;
    size_t i = w->n;
    while (i > 0 && w->events[i - 1].at_us > at_us)
        i--;
    memmove(&w->events[i + 1], &w->events[i], (w->n - i) * sizeof *w->events);
    w->events[i] = (stvm_sim_event){.at_us = at_us, .fn = fn, .arg = arg};
    w->n++;
    return STVM_OK;
}

void stvm__sim_advance(stvm_vm *vm, uint64_t to)
{
    stvm_sim_world *w = &vm->outside;
    while (w->n && w->events[0].at_us <= to) {
        stvm_sim_event ev = w->events[0];
        if (vm->heartbeat)   /* the OpenSmalltalk heartbeat's beats, in time order too */
            stvm__heartbeat_sim_until(vm, ev.at_us);
        memmove(&w->events[0], &w->events[1], (w->n - 1) * sizeof *w->events);
        w->n--;
        vm->clock.sim_now_us = vm->point_clock_us = ev.at_us;
        stvm__trace(vm, STVM_TRACE_OUTSIDE, stvm__trace_active(vm), 0, 0);
        ev.fn(vm, ev.arg);
    }
    /* The scheduling points' reading follows: a wait's "since" (stvm_process_info) is
     * then exact on the simulated clock, at no cost to the wait. */
    if (vm->heartbeat)
        stvm__heartbeat_sim_until(vm, to);
    vm->clock.sim_now_us = vm->point_clock_us = to;
}

void stvm__sim_set_wake_cost(stvm_vm *vm, stvm_sim_wake_fn fn, void *arg)
{
    vm->outside.wake_fn = fn;
    vm->outside.wake_arg = arg;
}

void stvm__sim_destroy(stvm_vm *vm)
{
    free(vm->outside.events);
    vm->outside.events = NULL;
    vm->outside.n = vm->outside.cap = 0;
}
