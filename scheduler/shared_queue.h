/*
 * Pharo's SharedQueue (shared_queue.c): the layout the timed forms (image-stubs) share.
 *
 * Built as Pharo's SharedQueue of 2015 was, on a semaphore that counts the items
 * (readSynch): a put adds the item and signals `avail`, a take waits on `avail` and
 * takes the front item. A signal handed to a waiting reader reserves an item for it, so
 * no later reader can take that item first, and the give-back rule of wait.c returns
 * the signal (and with it the item) if the reader never runs to take it. A bounded
 * queue counts its free room the same way, with `room`.
 *
 * Items put from other OS threads go to `pending` under `lock` and signal `avail`
 * through the external semaphore table, the one path by which other threads wake the
 * VM; readers take from the buffer first and then from `pending`.
 *
 * Closing (stvm_queue_close, or stvm_queue_close_external from another thread) is two
 * steps. `closed` is set at once, under `lock` for an external queue, and from then on
 * every put is refused. The VM's half (`ended`) runs on the VM's thread: at once for
 * stvm_queue_close, when the VM answers the queue's slot for a thread's close (the
 * budget's STVM_BUDGET_CLOSED bit). It counts what other threads put before the close,
 * releases the writers waiting for room (through wait.c: ECLOSED), and the readers
 * still waiting once nothing is left for them: no excess signal of `avail` and no item
 * promised to a woken reader (`avail.list.handed`). From then on that state is final
 * (nothing can be put; a promised item given back goes to a waiting reader or becomes
 * an excess signal), so a take that finds it answers STVM_EEOF, every time.
 */
#ifndef STVM_SCHEDULER_SHARED_QUEUE_H
#define STVM_SCHEDULER_SHARED_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>

#include "sched.h"

struct stvm_queue {
    stvm_object hdr;
    stvm_vm *vm;
    stvm_queue *prev, *next;     /* vm->queues */
    stvm_semaphore avail;        /* one excess signal per item not yet reserved */
    stvm_semaphore room;         /* bounded: one excess signal per reserved free slot */
    void **items;                /* ring of the items put from the VM's thread */
    size_t head, count, alloc;
    size_t capacity;             /* 0: unbounded */
    /* Free slots of a bounded queue that neither a put nor a reservation holds (all
     * puts, whatever their thread, take one); items + reserved + free = capacity. */
    _Atomic size_t free_slots;
    /* ---- the other threads' side (stvm_queue_open_external) ---- */
    bool external;
    int ext_index;               /* avail's slot in the external table */
    _Atomic uint64_t unsignalled; /* items of other threads the VM has not yet counted
                                    (avail's signal budget) */
    pthread_mutex_t lock;        /* guards the fields below */
    pthread_cond_t has_room;     /* a thread waits for room in a bounded queue */
    void **pending;              /* items put by other threads, oldest at pending_head */
    size_t pending_head, pending_count, pending_alloc;
    unsigned thread_waiters;     /* threads blocked in stvm_queue_put_external */
    /* ---- closing ---- */
    _Atomic bool closed;         /* puts are refused (set under lock when external) */
    bool ended;                  /* the VM's half of the close is done (VM thread only) */
};

static inline bool stvm__is_queue(const stvm_vm *vm, const stvm_queue *q)
{
    return q && q->hdr.class_index == STVM_CLASS_QUEUE && q->vm == vm;
}

/* stvm_vm_free: release every queue left, dropping its items (stvm owns none). */
void stvm__queues_destroy(stvm_vm *vm);
/* The VM's half of a close (the header's comment above): stvm_queue_close's, or the
 * VM answering the slot of a queue a thread closed (external_drain.c). by is the
 * closing process's id for the trace (0: the embedding thread or another thread).
 * Never switches. */
void stvm__queue_end(stvm_vm *vm, stvm_queue *q, uint64_t by);
/* Nothing is left for a reader of q, and nothing ever will be: closed, ended, no excess
 * signal of avail, no item promised to a woken reader. */
static inline bool stvm__queue_dry(const stvm_queue *q)
{
    return q->ended && q->avail.excess_signals <= 0 && !q->avail.list.handed;
}

/* The untimed waits the timed forms bound (stvm__timed_wait's wait functions):
 * STVM_OK when the caller was handed what it waited for, STVM__QUEUE_EXCESS when it
 * was there to take at once, or an error (< 0) as stvm__wait's: STVM_ECLOSED when q was
 * closed (a take: when nothing is left, at once or at the close; a put: at once or at
 * the close). */
enum { STVM__QUEUE_EXCESS = 1 };
int stvm__queue_take_wait(stvm_vm *vm, void *q);
int stvm__queue_put_wait(stvm_vm *vm, void *q);
/* After the wait: take the caller's item (it holds a signal of avail: handed to it,
 * or an excess one it took). */
void *stvm__queue_take_reserved(stvm_queue *q, bool handed);
/* Put item into a slot the caller holds (room reserved, or free). STVM_OK or ENOMEM
 * (nothing changed; the slot is the caller's to give back). */
int stvm__queue_push(stvm_queue *q, void *item);
/* The rest of a put once the caller holds a slot: push, trace, signal a reader.
 * STVM_OK, ENOMEM or ECLOSED (q was closed meanwhile; either way the slot is given
 * back and the item not put). Switches (a higher reader runs at once). */
int stvm__queue_put_held(stvm_vm *vm, stvm_queue *q, void *item);
/* Give back a slot a put could not use (ENOMEM, or a wait that did not end well). */
void stvm__queue_slot_back(stvm_queue *q);
/* Validate a green call on q: EINVAL, ENOTPROC or OK. */
int stvm__queue_check(stvm_vm *vm, const stvm_queue *q);
/* Puts are refused (ECLOSED). Any thread. */
static inline bool stvm__queue_closed(stvm_queue *q)
{
    return atomic_load_explicit(&q->closed, memory_order_acquire);
}
/* Reserve an item without waiting (seeing other threads' puts first), true if the
 * caller holds one. */
bool stvm__queue_take_try(stvm_vm *vm, stvm_queue *q);
/* Try to take a free slot without waiting (bounded), true if the caller holds one. */
bool stvm__queue_slot_try(stvm_vm *vm, stvm_queue *q);

#endif
