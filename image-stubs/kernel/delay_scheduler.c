/*
 * The Delay scheduler, following Pharo 4/5's of 2015 (the code the seed measured):
 *
 *  - a timing process at priority 80 loops: wait on the timing semaphore; read the
 *    clock (primitive 240, or 135); take the schedule requests handed over by user
 *    processes; expire every delay that is due; consume the semaphore's extra signals;
 *    arm the VM's one-shot timer (242, or 136) for the earlier of now + 1 s and the
 *    earliest resumption time;
 *  - the earliest delay is kept apart as the active delay, the others in a heap;
 *  - a user process hands a Delay over by queueing it and signalling the timing
 *    semaphore, which preempts it at once (priority 80).
 *
 * Every timestamp is an integer oop and every operation on one goes through the VM's
 * integer operations, so a 31-bit VM pays for boxed microsecond timestamps exactly
 * where Pharo did: the clock read, now + duration, now + 1 s, and each comparison.
 *
 * Deliberate differences (docs/differences-from-pharo.md): started on first use;
 * unschedule is done at once by the caller rather than handed to the timing process
 * (a C frame holding the Delay may vanish right after); the heap is 4-ary and breaks
 * ties by scheduling order; when the millisecond clock wraps, resumption times are
 * moved back by exactly one clock period instead of being rebased on the last tick seen.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../primitives/prims.h"
#include "../../scheduler/timer.h"
#include "delay.h"
#include "../../vm/alloc.h"

/* ---- the timing process's side ------------------------------------------------- */

/* An integer operation of the timing process that failed. Durations and deadlines are
 * checked where they enter, and the memory of every pass is made room for before (the
 * cells its boxed timestamps take, a heap slot per request: stvm__delay_room), so this
 * cannot happen; a timing process that could not compute a resumption time could not
 * go on: say which and stop. */
static void must(int err, const char *what)
{
    if (err == STVM_OK)
        return;
    fprintf(stderr, "stvm: the Delay scheduler's timing process cannot go on: %s: %s\n",
            what, stvm_strerror(err));
    abort();
}

/* The re-arm every second with nothing pending is not work stvm_run waits for. */
static void pending_changed(stvm_vm *vm, delay_sched *ds)
{
    stvm__timer_keep_alive(vm, ds->timing_sem, ds->pending > 0);
}

/* The process a trace event about d names: its waiter, 0 for none. */
static uint64_t waiter_id(const delay *d)
{
    return d->process ? d->process->id : 0;
}

/* The object a trace event about d names: the Delay object holding d (only those set
 * d->sem), else d itself. */
static const void *traced(const delay *d)
{
    return d->sem ? (const void *)STVM_CONTAINER(d, struct stvm_delay, d) : (const void *)d;
}

static void schedule_delay(stvm_vm *vm, delay_sched *ds, heap_entry e)
{
    vm->stats.delays_scheduled++;
    if (stvm__tracing(vm))
        stvm__trace_delay(vm, STVM_TRACE_DELAY_SCHEDULED, waiter_id(e.d), traced(e.d), e.key);
    if (!ds->has_active) {
        ds->active = e;
        ds->has_active = true;
        return;
    }
    if (stvm__delay_before(vm, &e, &ds->active)) {
        heap_entry old = ds->active;
        ds->active = e;
        e = old;
    }
    must(stvm__delay_heap_push(vm, ds, e) ? STVM_OK : STVM_ENOMEM, "growing the heap");
}

/* The next active delay after the current one expired or was cancelled. */
static void next_active(stvm_vm *vm, delay_sched *ds)
{
    ds->has_active = stvm__delay_heap_pop(vm, ds, &ds->active);
}

/* The timing process signals an expired delay (never preempted: it is at 80). */
static void signal_expired(stvm_vm *vm, delay_sched *ds, heap_entry e)
{
    delay *d = e.d;
    if (stvm__tracing(vm))
        stvm__trace_delay(vm, STVM_TRACE_DELAY_EXPIRED, waiter_id(d), traced(d), e.key);
    stvm__delay_discard(vm, e);
    d->state = D_EXPIRED;
    ds->pending--;
    vm->stats.delays_expired++;
    if (!d->timed_list) {
        stvm__sem_signal_noswitch(vm, d->sem ? d->sem : &d->own_sem);
        return;
    }
    /* DelayWaitTimeout: only a waiter still on the list has timed out. */
    stvm_proc *p = d->process;
    if (p && p->my_list == d->timed_list)
        stvm__wait_end(vm, p, STVM_WAIT_TIMED_OUT);
}

/* When the millisecond clock wraps, every pending resumption time moves back by one
 * period; a uniform shift keeps the heap's order. (Millisecond timestamps are always
 * SmallIntegers, so nothing is allocated or released here.) */
static void rebase_after_wrap(stvm_vm *vm, delay_sched *ds)
{
    stvm_oop period = stvm__si_make((int64_t)STVM_MS_CLOCK_MASK + 1);
    if (ds->has_active)
        must(stvm__int_sub(vm, ds->active.key, period, &ds->active.key), "rebasing");
    for (size_t i = 0; i < ds->count; i++)
        must(stvm__int_sub(vm, ds->heap[i].key, period, &ds->heap[i].key), "rebasing");
}

/* A request's duration in the scheduler's unit, as an integer oop. */
static stvm_oop duration_oop(stvm_vm *vm, const delay_sched *ds, const delay *d)
{
    stvm_oop duration;
    if (ds->ms) {
        int64_t ms = d->from_ms ? d->duration : (d->duration + 999) / 1000;
        duration = stvm__si_make(ms);
    } else if (d->from_ms) {
        must(stvm__int_mul(vm, stvm__si_make(1000), stvm__si_make(d->duration), &duration),
             "ms * 1000");
    } else {
        must(stvm__int_from_i128(vm, d->duration, &duration), "a duration");
    }
    return duration;
}

/* Take the requests handed over since the last pass. */
static void take_requests(stvm_vm *vm, delay_sched *ds, stvm_oop now)
{
    for (delay *d; (d = ds->req_head) != NULL;) {
        ds->req_head = d->next_req;
        if (!ds->req_head)
            ds->req_tail = NULL;
        d->next_req = NULL;
        ds->nreq--;
        /* Its room, made by its requester, is what this pass takes now. */
        stvm__objmem_unreserve_cells(vm, stvm__delay_cells(ds, DELAY_REQUEST_CELLS));
        stvm_oop duration = duration_oop(vm, ds, d);
        heap_entry e = {.seq = ++ds->seq, .d = d};
        must(stvm__int_add(vm, now, duration, &e.key), "now + duration");
        stvm__int_release(vm, duration);
        d->seq = e.seq;
        d->state = D_SCHEDULED;
        schedule_delay(vm, ds, e);
    }
}

/* handleTimerEvent: take requests, expire what is due, answer the next wake-up time
 * (an owned oop when *owned is set, else the active delay's resumption). */
static stvm_oop handle_timer_event(stvm_vm *vm, delay_sched *ds, stvm_oop now, bool *owned)
{
    take_requests(vm, ds, now);
    while (ds->has_active && stvm__int_cmp(vm, now, ds->active.key) >= 0) {
        heap_entry e = ds->active;
        next_active(vm, ds);
        /* The next Delay sits on another cold stack: start fetching it now. */
        if (ds->has_active)
            __builtin_prefetch(ds->active.d, 1);
        signal_expired(vm, ds, e);
    }
    stvm_oop next;
    must(stvm__int_add(vm, now, stvm__si_make(ds->ms ? 1000 : 1000000), &next), "now + 1 s");
    *owned = true;
    if (ds->has_active && stvm__int_cmp(vm, ds->active.key, next) < 0) {
        stvm__int_release(vm, next);
        next = ds->active.key;
        *owned = false;
    }
    return next;
}

/* The clock as this scheduler reads it, rebasing after a millisecond-clock wrap. */
static stvm_oop read_clock(stvm_vm *vm, delay_sched *ds)
{
    stvm_oop now;
    if (!ds->ms) {
        must(stvm__prim_us_clock(vm, &now), "reading the clock");
        return now;
    }
    now = stvm__prim_ms_clock(vm);
    if (ds->last_tick != STVM_NIL && stvm__int_cmp(vm, now, ds->last_tick) < 0)
        rebase_after_wrap(vm, ds);
    ds->last_tick = now;
    return now;
}

static void timing_loop(stvm_vm *vm, void *arg)
{
    delay_sched *ds = arg;
    for (;;) {
        stvm__sem_wait(vm, ds->timing_sem);
        vm->stats.timing_loop_passes++;
        stvm_oop now = read_clock(vm, ds);
        bool owned;
        stvm_oop next = handle_timer_event(vm, ds, now, &owned);
        ds->timing_sem->excess_signals = 0;   /* consumeAllSignals, right before arming */
        if (ds->ms) {
            stvm__prim_signal_at_ms(vm, ds->timing_sem, next);
            /* The clock wrapped while we worked: go round again at once. */
            if (stvm__int_cmp(vm, stvm__prim_ms_clock(vm), now) < 0)
                stvm__sem_signal_noswitch(vm, ds->timing_sem);
        } else {
            stvm__prim_signal_at_us(vm, ds->timing_sem, next);
        }
        pending_changed(vm, ds);
        if (owned)
            stvm__int_release(vm, next);
        stvm__int_release(vm, now);
    }
}

/* ---- the user's side ------------------------------------------------------------- */

/* A scheduled Delay's entry (the active one or in the heap) holds its resumption time.
 * Scheduling numbers are never reused, so only d's live entry has d's number. */
stvm_oop stvm__delay_key(const delay_sched *ds, const delay *d)
{
    if (d->state != D_SCHEDULED)
        return STVM_NIL;
    if (ds->has_active && ds->active.seq == d->seq)
        return ds->active.key;
    for (size_t i = 0; i < ds->count; i++)
        if (ds->heap[i].seq == d->seq)
            return ds->heap[i].key;
    return STVM_NIL;
}

/* A scheduled Delay is cancelled (a linear search, made only while tracing). */
static void trace_cancel(stvm_vm *vm, const delay_sched *ds, const delay *d)
{
    stvm__trace_delay(vm, STVM_TRACE_DELAY_CANCELLED, waiter_id(d), traced(d),
                      stvm__delay_key(ds, d));
}

void stvm__delay_unschedule(stvm_vm *vm, delay_sched *ds, delay *d)
{
    if (d->state == D_REQUESTED) {
        delay **q = &ds->req_head, *prev = NULL;
        for (; *q && *q != d; prev = *q, q = &(*q)->next_req)
            ;
        if (*q) {
            *q = d->next_req;
            if (ds->req_tail == d)
                ds->req_tail = prev;
            d->next_req = NULL;   /* a stale link would bring its successor back later */
            ds->nreq--;
            stvm__objmem_unreserve_cells(vm, stvm__delay_cells(ds, DELAY_REQUEST_CELLS));
        }
    } else if (d->state == D_SCHEDULED) {
        if (stvm__tracing(vm))
            trace_cancel(vm, ds, d);
        if (ds->has_active && ds->active.seq == d->seq) {
            heap_entry e = ds->active;
            next_active(vm, ds);
            stvm__delay_discard(vm, e);
        } else {
            stvm__delay_cancel_in_heap(vm, ds, d);
        }
    } else {
        return;
    }
    d->state = D_IDLE;
    ds->pending--;
    pending_changed(vm, ds);
    vm->stats.delays_unscheduled++;
}

/* The process waiting on d was terminated: d must not fire into its stack later. */
void stvm__delay_abandon(stvm_vm *vm, stvm_wait_guard *g)
{
    delay *d = STVM_CONTAINER(g, delay, guard);
    d->process->wait_label = STVM_WL_NONE;
    stvm__delay_unschedule(vm, vm->delay.state, d);
}

int stvm__delay_request_by(stvm_vm *vm, delay_sched *ds, delay *d, stvm_proc *waiter)
{
    if (stvm__delay_room(vm, ds))
        return STVM_ENOMEM;
    d->process = waiter;
    stvm__delay_enqueue(ds, d);
    stvm__sem_signal(vm, ds->timing_sem);   /* the timing process preempts us here */
    return STVM_OK;
}

int stvm__delay_done(stvm_vm *vm, delay_sched *ds, delay *d, int err)
{
    stvm__delay_unschedule(vm, ds, d);   /* no-op when it expired, as on the normal path */
    stvm__wait_guard_pop(vm, &d->guard);
    vm->active->wait_label = STVM_WL_NONE;   /* d's waiter, without reading d->process's line */
    return err;
}

/* ---- hooks and start ------------------------------------------------------------- */

static void hook_destroy(stvm_vm *vm)
{
    delay_sched *ds = vm->delay.state;
    stvm__objmem_reserve_for(vm, NULL);
    stvm__objmem_unreserve_cells(
        vm, stvm__delay_cells(ds, DELAY_PASS_CELLS + DELAY_REQUEST_CELLS * ds->nreq));
    stvm__delay_heap_destroy(ds);
    free(ds);
    memset(&vm->delay, 0, sizeof vm->delay);
}

int stvm__delay_scheduler(stvm_vm *vm, delay_sched **out)
{
    if (vm->delay.state) {
        *out = vm->delay.state;
        return STVM_OK;
    }
    delay_sched *ds = stvm__calloc(1, sizeof *ds);
    if (!ds)
        return STVM_ENOMEM;
    ds->ms = vm->cfg.delay_clock == STVM_DELAY_CLOCK_MS;
    ds->last_tick = STVM_NIL;
    int err = stvm_semaphore_new(vm, &ds->timing_sem);
    if (!err && (err = stvm__objmem_reserve_cells(vm, stvm__delay_cells(ds, DELAY_PASS_CELLS))))
        stvm_semaphore_free(vm, ds->timing_sem);
    if (err) {
        free(ds);
        return err;
    }
    vm->delay = (stvm_delay_hooks){.state = ds, .destroy = hook_destroy};
    /* At priority 80 it runs at once, up to its first wait. */
    err = stvm__spawn(vm, STVM_PRIORITY_TIMING, "Delay Scheduling Process", timing_loop, ds,
                      0, true, STVM_PF_VM_OWN, &ds->timing_process);
    if (err) {
        stvm_semaphore_free(vm, ds->timing_sem);
        hook_destroy(vm);
        return err;
    }
    stvm__objmem_reserve_for(vm, ds->timing_process->core);
    stvm__list_pin(&ds->timing_sem->list);   /* the timing process waits on it for good */
    *out = ds;
    return STVM_OK;
}
