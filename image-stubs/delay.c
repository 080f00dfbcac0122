/*
 * Delay and DelayScheduler: the "image side" of Pharo's delays, written in C on top of
 * the primitives, following the Pharo 4/5 schedulers of 2015 (the code the seed
 * measured):
 *
 *  - a timing process at priority 80 loops: wait on the timing semaphore; read the
 *    clock (primitive 240, or 135); take the schedule requests handed over by user
 *    processes; expire every delay that is due; consume the semaphore's extra signals;
 *    arm the VM's one-shot timer (242, or 136) for the earlier of now + 1 s and the
 *    earliest resumption time;
 *  - the earliest delay is kept apart as the active delay, the others in a heap;
 *  - a user process hands a Delay over by queueing it and signalling the timing
 *    semaphore, which preempts it at once (priority 80), then waits on the Delay's
 *    semaphore.
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
#include <stdlib.h>
#include <string.h>

#include "../primitives/prims.h"
#include "../scheduler/sched.h"
#include "../vm/integer.h"
#include "../vm/objmem.h"

/* Longest durations: half the millisecond clock's range (longer is ambiguous after a
 * wrap), and for microseconds 2^52 (142 years), far from any 64-bit overflow. */
#define MAX_MS ((int64_t)(STVM_MS_CLOCK_MASK / 2))
#define MAX_US ((int64_t)1 << 52)

enum delay_state { D_IDLE, D_REQUESTED, D_SCHEDULED, D_EXPIRED };

typedef struct delay {
    stvm_semaphore own_sem;     /* the Delay's semaphore (unless a timed wait) */
    stvm_semaphore *sem;        /* signalled at expiry: own_sem, or the waited one */
    int64_t duration;           /* in ms (from_ms) or us */
    bool from_ms;
    bool timed_wait;            /* DelayWaitTimeout: expiry takes the waiter off sem */
    bool timed_out;
    enum delay_state state;
    stvm_proc *process;      /* the waiting process */
    uint32_t ticket;            /* its slot in the ticket table while scheduled */
    struct delay *next_req;
} delay;

/* A scheduled delay as the scheduler keeps it: its resumption time (an integer oop
 * the entry owns), the scheduling order for ties, and a ticket naming the Delay.
 *
 * The heap never touches a Delay while it sifts: with tens of thousands of sleepers
 * each Delay sits on its own process's stack, and writing a back-pointer into it at
 * every move cost a cache and TLB miss per heap level. Instead a cancelled Delay's
 * ticket is emptied and its entry is dropped lazily when it reaches the top (or when
 * dead entries outnumber live ones, by a rebuild). */
typedef struct heap_entry {
    stvm_oop key;
    uint64_t seq;
    delay *d;                   /* only to be followed while its ticket still names it */
    uint32_t ticket;
} heap_entry;

typedef struct delay_sched {
    stvm_semaphore *timing_sem;
    stvm_process *timing_process;
    bool ms;                    /* the millisecond scheduler (135/136) */
    bool has_active;
    heap_entry active;          /* the earliest delay, kept apart as Pharo does */
    heap_entry *heap;           /* 4-ary min-heap of the other scheduled delays */
    size_t count, cap, dead;    /* dead: cancelled entries still in the heap */
    delay **tickets;            /* ticket -> Delay, NULL once cancelled */
    uint32_t *free_tickets;
    size_t nfree, ntickets;
    delay *req_head, *req_tail; /* schedule requests not yet taken */
    stvm_oop last_tick;         /* ms scheduler: activeDelayStartTime */
    uint64_t seq;
    uint64_t pending;           /* requested or scheduled, not yet expired */
} delay_sched;

/* ---- tickets ------------------------------------------------------------------- */

static bool ticket_take(delay_sched *ds, delay *d)
{
    if (!ds->nfree) {
        size_t n = ds->ntickets ? ds->ntickets * 2 : 256;
        delay **t = realloc(ds->tickets, n * sizeof *t);
        if (!t)
            return false;
        ds->tickets = t;
        uint32_t *f = realloc(ds->free_tickets, n * sizeof *f);
        if (!f)
            return false;
        ds->free_tickets = f;
        for (size_t i = n; i-- > ds->ntickets;)
            ds->free_tickets[ds->nfree++] = (uint32_t)i;
        ds->ntickets = n;
    }
    d->ticket = ds->free_tickets[--ds->nfree];
    ds->tickets[d->ticket] = d;
    return true;
}

static void ticket_return(delay_sched *ds, uint32_t t)
{
    ds->tickets[t] = NULL;
    ds->free_tickets[ds->nfree++] = t;
}

/* ---- the heap of suspended delays ------------------------------------------------ */

/* A 4-ary heap: half the depth of a binary one, and the four children of a node sit
 * in two cache lines. With 75,000 sleepers it cost 10-20% less CPU per delay than
 * arity 2 or 8 in the DelayBenchmark (same instruction count as binary). */
#define ARITY 4

static inline bool before(stvm_vm *vm, const heap_entry *a, const heap_entry *b)
{
    if (stvm__is_si(a->key & b->key)) {
        /* Tagged SmallIntegers order as their values do: compare the words. */
        if (a->key != b->key)
            return (intptr_t)a->key < (intptr_t)b->key;
        return a->seq < b->seq;
    }
    int c = stvm__int_cmp_slow(vm, a->key, b->key);
    return c < 0 || (c == 0 && a->seq < b->seq);
}

static void heap_up(stvm_vm *vm, delay_sched *ds, size_t i)
{
    heap_entry e = ds->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / ARITY;
        if (!before(vm, &e, &ds->heap[parent]))
            break;
        ds->heap[i] = ds->heap[parent];
        i = parent;
    }
    ds->heap[i] = e;
}

static void heap_down(stvm_vm *vm, delay_sched *ds, size_t i)
{
    heap_entry e = ds->heap[i];
    for (;;) {
        size_t first = ARITY * i + 1, best = i;
        const heap_entry *bestp = &e;
        for (size_t c = first; c < first + ARITY && c < ds->count; c++) {
            if (before(vm, &ds->heap[c], bestp)) {
                best = c;
                bestp = &ds->heap[c];
            }
        }
        if (best == i)
            break;
        ds->heap[i] = ds->heap[best];
        i = best;
    }
    ds->heap[i] = e;
}

static bool heap_push(stvm_vm *vm, delay_sched *ds, heap_entry e)
{
    if (ds->count == ds->cap) {
        size_t ncap = ds->cap ? ds->cap * 2 : 256;
        heap_entry *n = realloc(ds->heap, ncap * sizeof *n);
        if (!n)
            return false;
        ds->heap = n;
        ds->cap = ncap;
    }
    ds->heap[ds->count++] = e;
    heap_up(vm, ds, ds->count - 1);
    return true;
}

/* Remove the top. The hole left at the root travels down along the smallest children
 * to a leaf, then the last entry moves into it and climbs: the last entry is usually
 * among the largest, so this saves the comparison against it at every level. */
static heap_entry heap_pop_raw(stvm_vm *vm, delay_sched *ds)
{
    heap_entry top = ds->heap[0];
    size_t n = --ds->count, hole = 0;
    if (n == 0)
        return top;
    for (;;) {
        size_t first = ARITY * hole + 1;
        if (first >= n)
            break;
        size_t best = first;
        for (size_t c = first + 1; c < first + ARITY && c < n; c++)
            if (before(vm, &ds->heap[c], &ds->heap[best]))
                best = c;
        ds->heap[hole] = ds->heap[best];
        hole = best;
    }
    ds->heap[hole] = ds->heap[n];
    heap_up(vm, ds, hole);
    return top;
}

/* Drop an entry whose Delay was cancelled: its timestamp and ticket go back. */
static void discard(stvm_vm *vm, delay_sched *ds, heap_entry e)
{
    stvm__int_release(vm, e.key);
    ticket_return(ds, e.ticket);
}

static inline bool live(const delay_sched *ds, const heap_entry *e)
{
    /* With nothing cancelled (the common case) the ticket table stays untouched. */
    return ds->dead == 0 || ds->tickets[e->ticket] == e->d;
}

/* The earliest live entry, cancelled ones dropped on the way. */
static bool heap_pop(stvm_vm *vm, delay_sched *ds, heap_entry *out)
{
    while (ds->count) {
        heap_entry e = heap_pop_raw(vm, ds);
        if (live(ds, &e)) {
            *out = e;
            return true;
        }
        ds->dead--;
        discard(vm, ds, e);
    }
    return false;
}

/* When cancelled entries outnumber live ones, rebuild the heap without them. */
static void heap_compact(stvm_vm *vm, delay_sched *ds)
{
    size_t j = 0;
    for (size_t i = 0; i < ds->count; i++) {
        if (ds->tickets[ds->heap[i].ticket] == ds->heap[i].d)
            ds->heap[j++] = ds->heap[i];
        else
            discard(vm, ds, ds->heap[i]);
    }
    ds->count = j;
    ds->dead = 0;
    for (size_t i = j / ARITY + 1; i-- > 0;)
        if (i < j)
            heap_down(vm, ds, i);
}

/* ---- the timing process's side ------------------------------------------------- */

static void schedule_delay(stvm_vm *vm, delay_sched *ds, heap_entry e)
{
    vm->stats.delays_scheduled++;
    if (!ds->has_active) {
        ds->active = e;
        ds->has_active = true;
        return;
    }
    if (before(vm, &e, &ds->active)) {
        heap_entry old = ds->active;
        ds->active = e;
        e = old;
    }
    if (!heap_push(vm, ds, e))
        abort();   /* out of memory in the timing process: nothing sane remains */
}

/* The next active delay after the current one expired or was cancelled. */
static void next_active(stvm_vm *vm, delay_sched *ds)
{
    ds->has_active = heap_pop(vm, ds, &ds->active);
}

/* The timing process signals an expired delay (never preempted: it is at 80). */
static void signal_expired(stvm_vm *vm, delay_sched *ds, heap_entry e)
{
    delay *d = e.d;
    discard(vm, ds, e);
    d->state = D_EXPIRED;
    ds->pending--;
    vm->stats.delays_expired++;
    if (!d->timed_wait) {
        stvm__sem_signal_noswitch(vm, d->sem);
        return;
    }
    /* DelayWaitTimeout: only a waiter still on the semaphore has timed out. */
    stvm_proc *p = d->process;
    if (p && p->my_list == &d->sem->list) {
        d->timed_out = true;
        stvm__unlink(vm, p);
        stvm__make_ready(vm, p);
    }
}

/* When the millisecond clock wraps, every pending resumption time moves back by one
 * period; a uniform shift keeps the heap's order. (Millisecond timestamps are always
 * SmallIntegers, so nothing is allocated or released here.) */
static void rebase_after_wrap(stvm_vm *vm, delay_sched *ds)
{
    stvm_oop period = stvm__si_make((int64_t)STVM_MS_CLOCK_MASK + 1);
    if (ds->has_active)
        stvm__int_sub(vm, ds->active.key, period, &ds->active.key);
    for (size_t i = 0; i < ds->count; i++)
        stvm__int_sub(vm, ds->heap[i].key, period, &ds->heap[i].key);
}

/* handleTimerEvent: take requests, expire what is due, answer the next wake-up time
 * (an owned oop when *owned is set, else the active delay's resumption). */
static stvm_oop handle_timer_event(stvm_vm *vm, delay_sched *ds, stvm_oop now, bool *owned)
{
    for (delay *d; (d = ds->req_head) != NULL;) {
        ds->req_head = d->next_req;
        if (!ds->req_head)
            ds->req_tail = NULL;
        d->next_req = NULL;
        stvm_oop duration;
        if (ds->ms) {
            int64_t ms = d->from_ms ? d->duration : (d->duration + 999) / 1000;
            duration = stvm__si_make(ms);
        } else if (d->from_ms) {
            stvm__int_mul(vm, stvm__si_make(1000), stvm__si_make(d->duration), &duration);
        } else {
            stvm__int_from_i128(vm, d->duration, &duration);
        }
        heap_entry e = {.seq = ++ds->seq};
        if (stvm__int_add(vm, now, duration, &e.key) != STVM_OK || !ticket_take(ds, d))
            abort();
        stvm__int_release(vm, duration);
        e.ticket = d->ticket;
        e.d = d;
        d->state = D_SCHEDULED;
        schedule_delay(vm, ds, e);
    }
    while (ds->has_active && stvm__int_cmp(vm, now, ds->active.key) >= 0) {
        heap_entry e = ds->active;
        next_active(vm, ds);
        /* The next Delay sits on another cold stack: start fetching it now. */
        if (ds->has_active)
            __builtin_prefetch(ds->active.d, 1);
        signal_expired(vm, ds, e);
    }
    stvm_oop next;
    stvm__int_add(vm, now, stvm__si_make(ds->ms ? 1000 : 1000000), &next);
    *owned = true;
    if (ds->has_active && stvm__int_cmp(vm, ds->active.key, next) < 0) {
        stvm__int_release(vm, next);
        next = ds->active.key;
        *owned = false;
    }
    return next;
}

static void timing_loop(stvm_vm *vm, void *arg)
{
    delay_sched *ds = arg;
    for (;;) {
        stvm__sem_wait(vm, ds->timing_sem);
        vm->stats.timing_loop_passes++;
        stvm_oop now;
        if (ds->ms) {
            now = stvm__prim_ms_clock(vm);
            if (ds->last_tick != STVM_NIL && stvm__int_cmp(vm, now, ds->last_tick) < 0)
                rebase_after_wrap(vm, ds);
            ds->last_tick = now;
        } else if (stvm__prim_us_clock(vm, &now) != STVM_OK) {
            abort();
        }
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
        if (owned)
            stvm__int_release(vm, next);
        stvm__int_release(vm, now);
    }
}

/* ---- the user's side ------------------------------------------------------------- */

static uint64_t hook_pending(stvm_vm *vm)
{
    return ((delay_sched *)vm->delay.state)->pending;
}

/* Take d out of the scheduler wherever it is (request queue, active, heap). */
static void unschedule(stvm_vm *vm, delay_sched *ds, delay *d)
{
    if (d->state == D_REQUESTED) {
        delay **q = &ds->req_head, *prev = NULL;
        for (; *q && *q != d; prev = *q, q = &(*q)->next_req)
            ;
        if (*q) {
            *q = d->next_req;
            if (ds->req_tail == d)
                ds->req_tail = prev;
        }
    } else if (d->state == D_SCHEDULED) {
        if (ds->has_active && ds->active.ticket == d->ticket) {
            heap_entry e = ds->active;
            next_active(vm, ds);
            discard(vm, ds, e);
        } else {
            ds->tickets[d->ticket] = NULL;   /* its heap entry is now dead */
            if (++ds->dead > ds->count / 2 + 64)
                heap_compact(vm, ds);
        }
    } else {
        return;
    }
    d->state = D_IDLE;
    ds->pending--;
    vm->stats.delays_unscheduled++;
}

static void hook_process_terminated(stvm_vm *vm, stvm_proc *p)
{
    delay *d = p->delay;
    p->delay = NULL;
    p->wait_label = NULL;
    unschedule(vm, vm->delay.state, d);
}

static void hook_destroy(stvm_vm *vm)
{
    delay_sched *ds = vm->delay.state;
    free(ds->heap);
    free(ds->tickets);
    free(ds->free_tickets);
    free(ds);
    memset(&vm->delay, 0, sizeof vm->delay);
}

static int start_scheduler(stvm_vm *vm, delay_sched **out)
{
    if (vm->delay.state) {
        *out = vm->delay.state;
        return STVM_OK;
    }
    delay_sched *ds = calloc(1, sizeof *ds);
    if (!ds)
        return STVM_ENOMEM;
    ds->ms = vm->cfg.delay_clock == STVM_DELAY_CLOCK_MS;
    ds->last_tick = STVM_NIL;
    int err = stvm_semaphore_new(vm, &ds->timing_sem);
    if (err) {
        free(ds);
        return err;
    }
    vm->delay.state = ds;
    vm->delay.timing_sem = ds->timing_sem;
    vm->delay.pending = hook_pending;
    vm->delay.process_terminated = hook_process_terminated;
    vm->delay.destroy = hook_destroy;
    /* At priority 80 it runs at once, up to its first wait. */
    err = stvm__spawn(vm, STVM_PRIORITY_TIMING, "Delay Scheduling Process", timing_loop, ds,
                      0, true, STVM_PF_VM_OWN, &ds->timing_process);
    if (err) {
        vm->delay.timing_sem = NULL;   /* let the semaphore go */
        stvm_semaphore_free(vm, ds->timing_sem);
        hook_destroy(vm);
        return err;
    }
    *out = ds;
    return STVM_OK;
}

/* Validate a duration and make sure the scheduler runs. */
static int prepare(stvm_vm *vm, int64_t duration, bool from_ms, delay_sched **ds)
{
    if (!vm)
        return STVM_EINVAL;
    if (!vm->active)
        return STVM_ENOTPROC;
    if (duration < 0)
        return STVM_EINVAL;
    if (from_ms ? duration > MAX_US / 1000 : duration > MAX_US)
        return STVM_ERANGE;
    int64_t ms = from_ms ? duration : (duration + 999) / 1000;
    if (vm->cfg.delay_clock == STVM_DELAY_CLOCK_MS && ms > MAX_MS)
        return STVM_ERANGE;
    return start_scheduler(vm, ds);
}

/* Hand d to the timing process (the schedule: front half). */
static void request(stvm_vm *vm, delay_sched *ds, delay *d)
{
    d->state = D_REQUESTED;
    d->process = vm->active;
    ds->pending++;
    if (ds->req_tail)
        ds->req_tail->next_req = d;
    else
        ds->req_head = d;
    ds->req_tail = d;
    vm->active->delay = d;
    stvm__sem_signal(vm, ds->timing_sem);   /* the timing process preempts us here */
}

static void done_waiting(stvm_vm *vm, delay_sched *ds, delay *d)
{
    unschedule(vm, ds, d);   /* no-op when it expired, as on the normal path */
    d->process->delay = NULL;
    d->process->wait_label = NULL;
}

static int delay_wait(stvm_vm *vm, int64_t duration, bool from_ms)
{
    delay_sched *ds;
    int err = prepare(vm, duration, from_ms, &ds);
    if (err)
        return err;
    delay d = {.duration = duration, .from_ms = from_ms};
    stvm__sem_init(vm, &d.own_sem);
    d.sem = &d.own_sem;
    request(vm, ds, &d);
    vm->active->wait_label = "delay";
    err = stvm__sem_wait(vm, d.sem);
    done_waiting(vm, ds, &d);
    return err;
}

int stvm_delay_wait_ms(stvm_vm *vm, int64_t ms)
{
    return delay_wait(vm, ms, true);
}

int stvm_delay_wait_us(stvm_vm *vm, int64_t us)
{
    return delay_wait(vm, us, false);
}

int stvm_semaphore_wait_timeout_ms(stvm_vm *vm, stvm_semaphore *sem, int64_t ms)
{
    if (!vm || !stvm__is_sem(vm, sem))
        return STVM_EINVAL;
    delay_sched *ds;
    int err = prepare(vm, ms, true, &ds);
    if (err)
        return err;
    if (sem->excess_signals > 0) {   /* the wait would not block: no delay needed */
        vm->stats.semaphore_waits++;
        sem->excess_signals--;
        return STVM_OK;
    }
    delay d = {.duration = ms, .from_ms = true, .timed_wait = true, .sem = sem};
    request(vm, ds, &d);
    if (d.state == D_EXPIRED) {      /* a 0 ms wait: expired before we could wait */
        done_waiting(vm, ds, &d);
        return STVM_ETIMEDOUT;
    }
    vm->active->wait_label = "timed wait";
    err = stvm__sem_wait(vm, sem);
    done_waiting(vm, ds, &d);
    if (err)
        return err;
    return d.timed_out ? STVM_ETIMEDOUT : STVM_OK;
}
