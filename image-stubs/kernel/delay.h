/*
 * Delay and DelayScheduler, the "image side" of Pharo's delays, written in C on the
 * primitives: the types the three files share. delay_heap.c keeps scheduled Delays in
 * order, delay_scheduler.c is the timing process, timed_wait.c is what user processes
 * call (Delay>>wait, DelayWaitTimeout, and the timed waits built on it).
 */
#ifndef STVM_IMAGE_STUBS_DELAY_H
#define STVM_IMAGE_STUBS_DELAY_H

#include "../../scheduler/sched.h"
#include "../../vm/integer.h"
#include "../../vm/objmem.h"

enum delay_state { D_IDLE, D_REQUESTED, D_SCHEDULED, D_EXPIRED };

/* A Delay, on the stack of the process that waits on it (or inside a Delay object,
 * below).
 *
 * Ordered by when the fields are touched once the Delay has gone cold: its expiry (the
 * timing process reads state, sem and timed_list and signals own_sem, whose list and
 * excess signals are its first 40 bytes) and its waiter's wake-up (own_sem's list
 * again, state) use bytes 0 to 63 only, so a waiter that keeps its Delay on a 64-byte
 * boundary (DELAY_ALIGN) has them in one cache line of its cold stack. The rest is
 * touched while the waiter runs (the request), by the timing process right after it
 * (duration, seq, next_req), or at the wake-up's end (guard, in the line the waiter's
 * next Delay is written into anyway). With the old order (guard first, sem last) an
 * expiry touched three lines, and the record spanned three. */
typedef struct delay {
    enum delay_state state;
    bool from_ms;
    stvm_semaphore *sem;        /* what its expiry signals instead of own_sem, or NULL */
    stvm_list *timed_list;      /* a timed wait: the list whose wait it bounds, or NULL */
    stvm_semaphore own_sem;     /* the Delay's semaphore (a plain delay waits on it) */
    stvm_wait_guard guard;      /* unschedules it if its process is terminated */
    stvm_proc *process;         /* the waiting process (NULL: a Delay object scheduled
                                   with no waiter) */
    union {                     /* one at a time, so they share: 128 bytes in all */
        struct delay *next_req; /* D_REQUESTED: the next request queued */
        uint64_t seq;           /* D_SCHEDULED: its scheduling number (its entry's) */
    };
    int64_t duration;           /* in ms (from_ms) or us */
} delay;

/* A Delay on a waiter's stack is declared `DELAY_ALIGN delay d`. */
#define DELAY_ALIGN _Alignas(64)
_Static_assert(offsetof(delay, own_sem) + offsetof(stvm_semaphore, excess_signals) +
                   sizeof(int64_t) <= 64,
               "what an expiry and a wake-up touch fits the first cache line");
_Static_assert(sizeof(delay) == 128, "an aligned Delay fills two cache lines, no more");

/* A Delay object (Pharo's Delay instance; delay_object.c): a delay record that lives
 * in object memory instead of on a stack, and the semaphore its expiry signals. */
struct stvm_delay {
    stvm_delay_head head;       /* class STVM_CLASS_DELAY, its VM */
    stvm_semaphore *sem;        /* delaySemaphore: its own, or a timeout's given one */
    bool own_sem;
    uint32_t users;             /* processes inside a call on it that may switch */
    delay d;                    /* d.sem = sem; d.process = the waiter who scheduled it */
};

/* A scheduled delay as the scheduler keeps it: its resumption time (an integer oop
 * the entry owns), its scheduling number (the order for ties, and its name), and the
 * Delay.
 *
 * The heap never touches a Delay while it sifts: with tens of thousands of sleepers
 * each Delay sits on its own process's stack, and writing a back-pointer into it at
 * every move cost a cache and TLB miss per heap level. Instead a cancelled Delay's
 * number goes into a set of dead numbers and its entry is dropped lazily when it
 * reaches the top (or when dead entries outnumber live ones, by a rebuild). Numbers are
 * never reused, so a dead entry cannot be taken for a later scheduling of its Delay.
 * 24 bytes: a node's four children fill two cache lines (delay_heap.c). */
typedef struct heap_entry {
    stvm_oop key;
    uint64_t seq;
    delay *d;                   /* only to be followed while the entry is live */
} heap_entry;

typedef struct delay_sched {
    stvm_semaphore *timing_sem;
    stvm_process *timing_process;
    bool ms;                    /* the millisecond scheduler (135/136) */
    bool has_active;
    heap_entry active;          /* the earliest delay, kept apart as Pharo does */
    heap_entry *heap;           /* 4-ary min-heap of the other scheduled delays */
    void *heap_mem;             /* its allocation (heap is placed inside it) */
    size_t count, cap, dead;    /* dead: cancelled entries still in the heap */
    uint64_t *dead_seqs;        /* their numbers: an open-addressing set, 0 = empty */
    size_t dead_cap;            /* a power of two, or 0 */
    delay *req_head, *req_tail; /* schedule requests not yet taken */
    size_t nreq;                /* how many */
    stvm_oop last_tick;         /* ms scheduler: activeDelayStartTime */
    uint64_t seq;
    uint64_t pending;           /* requested or scheduled, not yet expired */
} delay_sched;

/* ---- delay_heap.c ---- */
/* a before b: earlier resumption, ties in scheduling order. */
static inline bool stvm__delay_before(stvm_vm *vm, const heap_entry *a, const heap_entry *b)
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
bool stvm__delay_heap_push(stvm_vm *vm, delay_sched *ds, heap_entry e);
/* Room for need entries without growing (false: no memory, nothing changed). */
bool stvm__delay_heap_room(delay_sched *ds, size_t need);
/* The earliest live entry, cancelled ones dropped on the way; false when empty. */
bool stvm__delay_heap_pop(stvm_vm *vm, delay_sched *ds, heap_entry *out);
/* Drop an entry: its timestamp goes back. */
void stvm__delay_discard(stvm_vm *vm, heap_entry e);
/* d's entry in the heap is now dead (its number joins the dead set); rebuilds the heap
 * when the dead outnumber the live, or when the set cannot grow. */
void stvm__delay_cancel_in_heap(stvm_vm *vm, delay_sched *ds, const delay *d);
void stvm__delay_heap_destroy(delay_sched *ds);

/* ---- delay_scheduler.c ---- */
/* The VM's Delay scheduler, started on first use. ENOMEM. */
int stvm__delay_scheduler(stvm_vm *vm, delay_sched **out);
/* What the timing process allocates has nobody to answer ENOMEM to, so the process that
 * hands it a Delay makes room for it first (delay_scheduler.c): a heap slot, and the
 * cells of boxed timestamps (the Delay's duration and resumption time), reserved for the
 * timing process until its pass takes the request. Its every pass also takes two (now,
 * and now + 1 s), reserved once for good when it starts. Only the microsecond scheduler
 * boxes (a 31-bit VM always; a 61-bit one from 2^60 us): the millisecond one's
 * timestamps are SmallIntegers, and it reserves nothing. */
#define DELAY_PASS_CELLS 2
#define DELAY_REQUEST_CELLS 2
static inline size_t stvm__delay_cells(const delay_sched *ds, size_t cells)
{
    return ds->ms ? 0 : cells;
}
/* Room for one more request: STVM_OK (the cells now reserved: the request must follow
 * at once) or STVM_ENOMEM, nothing changed. */
static inline int stvm__delay_room(stvm_vm *vm, delay_sched *ds)
{
    if (ds->count + ds->nreq + 1 > ds->cap && !stvm__delay_heap_room(ds, ds->count + ds->nreq + 1))
        return STVM_ENOMEM;
    return stvm__objmem_reserve_cells(vm, stvm__delay_cells(ds, DELAY_REQUEST_CELLS));
}
/* Queue d for the timing process (the caller then signals the timing semaphore), after
 * stvm__delay_room. */
static inline void stvm__delay_enqueue(delay_sched *ds, delay *d)
{
    d->state = D_REQUESTED;
    d->next_req = NULL;   /* it shares its place with the last scheduling's number */
    ds->pending++;
    ds->nreq++;
    if (ds->req_tail)
        ds->req_tail->next_req = d;
    else
        ds->req_head = d;
    ds->req_tail = d;
}
/* d's guard: unschedules it when its waiter is terminated. */
void stvm__delay_abandon(stvm_vm *vm, stvm_wait_guard *g);
/* Hand d to the timing process (the front half of Delay>>schedule): the timing
 * process preempts the caller here. d's guard is pushed for the caller's wait. Inline:
 * the caller is preempted inside it, and with tens of thousands of processes waiting
 * their turn, each frame between the caller's and the switch is a cold line when the
 * caller runs again. STVM_OK, or STVM_ENOMEM (no room for it: nothing done). */
static inline int stvm__delay_request(stvm_vm *vm, delay_sched *ds, delay *d)
{
    if (stvm__delay_room(vm, ds))
        return STVM_ENOMEM;
    d->process = vm->active;
    stvm__delay_enqueue(ds, d);
    d->guard.undo = stvm__delay_abandon;
    stvm__wait_guard_push(vm, &d->guard);
    stvm__sem_signal(vm, ds->timing_sem);   /* the timing process preempts us here */
    return STVM_OK;
}
/* The same for a Delay object: no guard is pushed, and waiter (NULL: none) is the
 * process the trace names. STVM_OK or STVM_ENOMEM, as stvm__delay_request. */
int stvm__delay_request_by(stvm_vm *vm, delay_sched *ds, delay *d, stvm_proc *waiter);
/* The resumption time of a scheduled d (its entry's key, owned by the scheduler), or
 * STVM_NIL when d is not scheduled. A linear search. */
stvm_oop stvm__delay_key(const delay_sched *ds, const delay *d);
/* The wait d bounded is over, ending with err: unschedule d if it has not expired, pop
 * its guard; answers err (so that the caller keeps nothing across the call). */
int stvm__delay_done(stvm_vm *vm, delay_sched *ds, delay *d, int err);
/* Take d out of the scheduler wherever it is (request queue, active, heap); no-op
 * once it expired. */
void stvm__delay_unschedule(stvm_vm *vm, delay_sched *ds, delay *d);

/* ---- timed_wait.c ---- */
/* A duration a caller asks for (ms or us), checked before anything happens: EINVAL
 * (negative), ERANGE (longer than the scheduler allows, or ending past the clock's
 * end), ENOTPROC. */
int stvm__check_duration(stvm_vm *vm, int64_t duration, bool from_ms);
/* Its checks that need neither a process nor the clock: EINVAL, ERANGE. */
/* The untimed wait of one kind of object: check, and wait on its list if it must. */
typedef int (*stvm_wait_fn)(stvm_vm *vm, void *object);
/* wait(object), which waits on l if it must, ended after duration at the latest
 * (DelayWaitTimeout). The caller stays committed to l throughout, so l's object cannot
 * be freed under it while the timing process runs first. Answers what wait answers,
 * or STVM_ETIMEDOUT. The duration must have passed stvm__check_duration. */
int stvm__timed_wait(stvm_vm *vm, stvm_list *l, stvm_wait_fn wait, void *object,
                     int64_t duration, bool from_ms);

#endif
