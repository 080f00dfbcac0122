/*
 * Run queues and switching: the 80 FIFO run queues with their bitmap, preemption, and
 * the transfer of the processor from one process to another.
 *
 * Run queue p-1 holds only processes of priority p, and bit p-1 of ready_bits is set
 * exactly when it is non-empty, so the highest runnable priority is two word tests and
 * a count-leading-zeros away. Only a strictly higher priority preempts; there is no
 * time slicing.
 */
#include "sched.h"

#include <stdatomic.h>

#include "../vm/aio.h"
#include "context.h"
#include "timer.h"

void stvm__list_remove(stvm_list *l, stvm_proc *p)
{
    if (l->first == p) {
        stvm__list_pop(l);
        return;
    }
    stvm_proc *prev = p->prev_link, *next = p->next_link;   /* p is not the head */
    prev->next_link = next;
    if (next)
        next->prev_link = prev;
    else
        l->last = prev;
    p->next_link = NULL;
    p->my_list = NULL;
}

void stvm__unlink(stvm_vm *vm, stvm_proc *p)
{
    stvm_list *l = p->my_list;
    if (!l)
        return;
    stvm__list_remove(l, p);
    if (l->kind == STVM_LIST_RUNQ)
        stvm__ready_bit_clear_if_empty(vm, (int)(l - vm->runq) + 1);
}

/* ---- switching --------------------------------------------------------------------- */

/* Why from leaves the processor, read from where it went: the caller has already put
 * it on a run queue (preempted, or yielded when stvm__yield said so), on a waiting
 * list, or nowhere (it suspended itself or finished). */
static int switch_why(stvm_vm *vm, const stvm_proc *from)
{
    if (!from)
        return STVM_TRACE_WHY_HOST;
    if (from == vm->idle)
        return STVM_TRACE_WHY_IDLE;
    if (from->flags & STVM_PF_TERMINATED)
        return STVM_TRACE_WHY_FINISHED;
    if (!from->my_list)
        return STVM_TRACE_WHY_SUSPENDED;
    if (from->my_list->kind != STVM_LIST_RUNQ)
        return STVM_TRACE_WHY_WAITED;
    return vm->trace && vm->trace->yielding ? STVM_TRACE_WHY_YIELDED : STVM_TRACE_WHY_PREEMPTED;
}

/* Out of line and cold: inlined, it made stvm__transfer_to too big to be inlined into
 * the hand-off paths, which cost every switch a call while tracing was off. */
static __attribute__((noinline, cold)) void trace_switch(stvm_vm *vm, const stvm_proc *from,
                                                        const stvm_proc *to)
{
    int why = switch_why(vm, from);
    if (vm->trace)
        vm->trace->yielding = false;
    stvm__trace_emit(vm, STVM_TRACE_SWITCH, from ? from->id : 0, to ? to->id : 0, 0, 0, why);
}

/* What a switch does beyond switching while vm->switch_watch says there is something:
 * charge the CPU time (cpu_time.c), record the switch. Out of line and cold, for the
 * reason above: with both off, a hand-off pays the one test of switch_watch. */
static __attribute__((noinline, cold)) void switch_watched(stvm_vm *vm, stvm_proc *from,
                                                          const stvm_proc *to)
{
    if (vm->cfg.cpu_time)
        stvm__cpu_switch(vm, from);
    if (stvm__tracing(vm))
        trace_switch(vm, from, to);
}

/* A canary-guarded process leaving the processor: check its stack from a frame below
 * the caller's (out of line, so the hand-off's frame needs no frame pointer). */
static __attribute__((noinline, cold)) void check_canary(stvm_proc *from)
{
    stvm__overflow_check(from, __builtin_frame_address(0));
}

/* Back on the processor with a terminate or an interrupt waiting for it. */
static __attribute__((noinline, cold)) void switched_back_flagged(stvm_vm *vm, stvm_proc *from)
{
    if (from->flags & STVM_PF_TERMINATE)
        stvm__process_exit(vm);
    stvm__interrupts_run(vm, from);
}

/* The switch itself, and what a process checks when it gets the processor back: a
 * finished predecessor's stack to free, and whether it was terminated meanwhile. Inline
 * into the few paths that switch, each of which then makes one call, the register
 * switch, where it made three (the checks are one test each on the record's first
 * cache line, which the switch reads anyway). */
static inline __attribute__((always_inline)) void switch_away(stvm_vm *vm, stvm_proc *from,
                                                             stvm_proc *to)
{
    if (__builtin_expect(from->flags & STVM_PF_CANARY, 0))
        check_canary(from);
    vm->stats.context_switches++;
    stvm__ctx_switch(vm, from, to);
    stvm__after_switch(vm);
    if (__builtin_expect(from->flags & (STVM_PF_TERMINATE | STVM_PF_INTERRUPT), 0))
        switched_back_flagged(vm, from);
}

static inline __attribute__((always_inline)) void transfer(stvm_vm *vm, stvm_proc *next)
{
    stvm_proc *from = vm->active;
    next->my_list = NULL;
    vm->active = next;
    if (from != next) {
        if (__builtin_expect(vm->switch_watch, 0))
            switch_watched(vm, from, next);
        switch_away(vm, from, next);
    }
}

void stvm__transfer_to(stvm_vm *vm, stvm_proc *next)
{
    transfer(vm, next);
}

void stvm__transfer_from_host(stvm_vm *vm)
{
    stvm_proc *next = stvm__runq_pop_highest(vm);   /* never NULL: idle is runnable */
    next->my_list = NULL;
    vm->active = next;
    vm->stats.context_switches++;
    if (__builtin_expect(vm->switch_watch, 0))
        switch_watched(vm, NULL, next);
    stvm__ctx_switch(vm, NULL, next);
    stvm__after_switch(vm);
}

void stvm__transfer_to_host(stvm_vm *vm)
{
    stvm_proc *from = vm->active;
    vm->active = NULL;
    if (__builtin_expect(vm->switch_watch, 0))
        switch_watched(vm, from, NULL);
    switch_away(vm, from, NULL);
}

/* ---- scheduling points ------------------------------------------------------------ */

/* How many scheduling points may pass on a clock value read earlier. Under load a
 * switch takes well under a microsecond while a real clock read costs tens of
 * nanoseconds, so reading at every switch would be a tenth of a hand-off; the few
 * switches in between add far less lateness than the idle process's relinquish
 * granularity. Checkpoints, yields and the idle process always read the clock. */
#define SWITCHES_PER_CLOCK_READ 8

static inline uint64_t point_clock(stvm_vm *vm, bool fresh)
{
    if (fresh || vm->clock.kind == STVM_CLOCK_SIMULATED || --vm->point_countdown <= 0) {
        vm->point_countdown = SWITCHES_PER_CLOCK_READ;
        vm->point_clock_us = stvm__clock_now_us(vm);
    }
    return vm->point_clock_us;
}

/* While processes run, ready descriptors are looked for at most every busy_poll_ms, as
 * the Cog VM's ioProcessEvents (the idle process looks whenever it runs). */
static void busy_poll(stvm_vm *vm, uint64_t now)
{
    if (now < vm->aio.next_busy_poll_us)
        return;
    vm->aio.next_busy_poll_us = now + (uint64_t)vm->cfg.busy_poll_ms * 1000;
    vm->stats.io_polls_busy++;
    stvm__aio_wait(vm, 0);
}

/* External requests, the timer deadline and (busy) ready descriptors. A stale clock
 * can only make the timer fire or the descriptors be looked at later, never early. The
 * clock is read only when a deadline or a busy poll may be due. */
static inline bool check_events(stvm_vm *vm, bool fresh_clock, bool busy)
{
    /* A stop arrives as a pending external request: looked for only then, and every
     * caller acts on it at once, so it is never left for later. */
    bool stop = false;
    if (atomic_load_explicit(&vm->ext.pending, memory_order_relaxed)) {
        stvm__external_drain(vm);
        stop = vm->stopping;
    }
    /* One test for both on the hand-off's path. */
    if ((vm->timer.deadline_us | (busy ? (uint64_t)vm->aio.narmed : 0)) != 0) {
        uint64_t now = point_clock(vm, fresh_clock);
        stvm__timer_poll(vm, now);
        if (busy && stvm__aio_any_armed(vm)) {
            busy_poll(vm, now);
            if (atomic_load_explicit(&vm->ext.pending, memory_order_relaxed)) {
                stvm__external_drain(vm);
                stop = vm->stopping;
            }
        }
    }
    return stop;
}

bool stvm__poll_events(stvm_vm *vm)
{
    return check_events(vm, true, true);
}

bool stvm__poll_events_idle(stvm_vm *vm)
{
    return check_events(vm, true, false);
}

void stvm__stop_here(stvm_vm *vm)
{
    vm->stopping = false;
    vm->run_result = STVM_ESTOPPED;
    stvm__runq_put(vm, vm->active, false);
    stvm__transfer_to_host(vm);
}

void stvm__switch_to_next(stvm_vm *vm)
{
    if (__builtin_expect(check_events(vm, false, true), 0)) {
        vm->stopping = false;   /* the active process is already on its list */
        vm->run_result = STVM_ESTOPPED;
        stvm__transfer_to_host(vm);
        return;
    }
    transfer(vm, stvm__runq_pop_highest(vm));   /* never NULL: idle is runnable */
}

bool stvm__resume_preempting(stvm_vm *vm, stvm_proc *p)
{
    stvm__runq_put(vm, vm->active, vm->cfg.preemption_yields);
    transfer(vm, p);
    return true;
}

bool stvm__preempt_if_needed(stvm_vm *vm)
{
    stvm_proc *a = vm->active;
    if (!a || stvm__runq_highest(vm) <= a->priority)
        return false;
    stvm__runq_put(vm, a, vm->cfg.preemption_yields);
    stvm__transfer_to(vm, stvm__runq_pop_highest(vm));
    return true;
}

int stvm__yield(stvm_vm *vm)
{
    stvm_proc *a = vm->active;
    if (stvm__poll_events(vm)) {
        stvm__stop_here(vm);
        return STVM_OK;
    }
    /* Nothing of equal priority waiting and nothing higher woken: no-op. Otherwise the
     * caller goes to the back of its queue, whoever runs next (a process below the
     * idle priority thereby lets its peers have the borrowed processor first). */
    if (!vm->runq[a->priority - 1].first && stvm__runq_highest(vm) <= a->priority)
        return STVM_OK;
    stvm__runq_put(vm, a, true);
    if (stvm__tracing(vm) && vm->trace)
        vm->trace->yielding = true;
    stvm__transfer_to(vm, stvm__runq_pop_highest(vm));
    return STVM_OK;
}

int stvm_yield(stvm_vm *vm)
{
    if (!vm || !stvm__in_process(vm))
        return vm ? STVM_ENOTPROC : STVM_EINVAL;
    return stvm__yield(vm);
}

int stvm_checkpoint(stvm_vm *vm)
{
    if (!vm || !stvm__in_process(vm))
        return vm ? STVM_ENOTPROC : STVM_EINVAL;
    if (vm->active->flags & STVM_PF_CANARY)
        stvm__overflow_check(vm->active, __builtin_frame_address(0));
    int ran = 0;
    if (stvm__poll_events(vm)) {
        stvm__stop_here(vm);
        ran = 1;
    } else {
        ran = stvm__preempt_if_needed(vm) ? 1 : 0;
    }
    return vm->active->flags & STVM_PF_CANCELLED ? STVM_EINTR : ran;
}
