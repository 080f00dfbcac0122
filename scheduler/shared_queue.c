/*
 * Pharo's SharedQueue, with a bounded form and puts from other OS threads (the layout
 * and the design are in shared_queue.h).
 */
#include "shared_queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../vm/objmem.h"
#include "../vm/alloc.h"

int stvm__queue_check(stvm_vm *vm, const stvm_queue *q)
{
    if (!vm || !stvm__is_queue(vm, q))
        return STVM_EINVAL;
    return stvm__in_process(vm) ? STVM_OK : STVM_ENOTPROC;
}

static void queue_lock(stvm_queue *q)
{
    if (q->external)
        pthread_mutex_lock(&q->lock);
}

static void queue_unlock(stvm_queue *q)
{
    if (q->external)
        pthread_mutex_unlock(&q->lock);
}

/* ---- the items ------------------------------------------------------------------------- */

int stvm__queue_push(stvm_queue *q, void *item)
{
    if (q->count == q->alloc) {
        size_t n = q->alloc ? q->alloc * 2 : 8;
        void **a = stvm__malloc(n * sizeof *a);
        if (!a)
            return STVM_ENOMEM;
        for (size_t i = 0; i < q->count; i++)
            a[i] = q->items[(q->head + i) % q->alloc];
        free(q->items);
        q->items = a;
        q->head = 0;
        q->alloc = n;
    }
    q->items[(q->head + q->count++) % q->alloc] = item;
    return STVM_OK;
}

/* The item at position i of the whole queue: the buffer first, then the other threads'. */
static void *item_at(stvm_queue *q, size_t i)
{
    if (i < q->count)
        return q->items[(q->head + i) % q->alloc];
    return q->pending[q->pending_head + (i - q->count)];
}

static void *pop_front(stvm_queue *q)
{
    if (q->count) {
        void *item = q->items[q->head];
        q->head = (q->head + 1) % q->alloc;
        q->count--;
        return item;
    }
    void *item = q->pending[q->pending_head++];
    if (--q->pending_count == 0)
        q->pending_head = 0;
    return item;
}

/* Remove n items from position i of the whole queue on. The items before i are those
 * promised to woken readers, a few at most, so the buffer's shift is short; in the
 * other threads' part the tail moves down. */
static void remove_range(stvm_queue *q, size_t i, size_t n)
{
    if (i < q->count) {
        size_t m = n < q->count - i ? n : q->count - i;
        for (size_t k = i; k-- > 0;)
            q->items[(q->head + k + m) % q->alloc] = q->items[(q->head + k) % q->alloc];
        q->head = (q->head + m) % q->alloc;
        q->count -= m;
        n -= m;
    }
    if (n) {
        size_t j = q->pending_head + (i - q->count);
        memmove(q->pending + j, q->pending + j + n,
                (q->pending_head + q->pending_count - j - n) * sizeof *q->pending);
        if ((q->pending_count -= n) == 0)
            q->pending_head = 0;
    }
}

static void *remove_at(stvm_queue *q, size_t i)
{
    if (i == 0)
        return pop_front(q);
    void *item = item_at(q, i);
    remove_range(q, i, 1);
    return item;
}

/* ---- room in a bounded queue ----------------------------------------------------------- */

static bool free_slot_take(stvm_queue *q)
{
    size_t n = atomic_load(&q->free_slots);
    while (n > 0)
        if (atomic_compare_exchange_weak(&q->free_slots, &n, n - 1))
            return true;
    return false;
}

bool stvm__queue_slot_try(stvm_vm *vm, stvm_queue *q)
{
    return !q->capacity || stvm__sem_try(vm, &q->room) || free_slot_take(q);
}

/* A slot comes free: to the first green writer waiting for one (reserved for it), else
 * to the free count, where a thread blocked in stvm_queue_put_external may take it. */
static void slot_release(stvm_queue *q, bool may_switch)
{
    if (!q->capacity)
        return;
    if (q->room.list.first) {
        if (may_switch)
            stvm__sem_signal(q->vm, &q->room);
        else
            stvm__sem_signal_noswitch(q->vm, &q->room);
        return;
    }
    atomic_fetch_add(&q->free_slots, 1);
    if (q->external) {
        pthread_mutex_lock(&q->lock);
        if (q->thread_waiters)
            pthread_cond_signal(&q->has_room);
        pthread_mutex_unlock(&q->lock);
    }
}

void stvm__queue_slot_back(stvm_queue *q)
{
    slot_release(q, false);
}

/* ---- waits ----------------------------------------------------------------------------- */

/* The wait of a queue call whose try found nothing: as stvm__sem_wait, so that a wait
 * that answers STVM_OK was handed its signal. */
static int labelled_wait(stvm_vm *vm, stvm_semaphore *s)
{
    vm->active->wait_label = STVM_WL_QUEUE;
    int err = stvm__sem_wait(vm, s);
    vm->active->wait_label = STVM_WL_NONE;
    return err;
}

/* Static, so that stvm_queue_take, the hand-off's path, has it inline; the timed forms
 * call it through stvm__queue_take_wait. */
static int take_wait(stvm_vm *vm, stvm_queue *q)
{
    if (stvm__sem_try(vm, &q->avail))
        return STVM__QUEUE_EXCESS;
    if (stvm__queue_dry(q))
        return STVM_ECLOSED;   /* the end of the queue: no wait could ever be answered */
    return labelled_wait(vm, &q->avail);
}

int stvm__queue_take_wait(stvm_vm *vm, void *q)
{
    return take_wait(vm, q);
}

int stvm__queue_put_wait(stvm_vm *vm, void *qv)
{
    stvm_queue *q = qv;
    if (stvm__queue_closed(q))
        return STVM_ECLOSED;
    if (stvm__sem_try(vm, &q->room))
        return STVM__QUEUE_EXCESS;
    return labelled_wait(vm, &q->room);
}

/* Every process waiting on l is released, answering ECLOSED (made ready, no switch). */
static void waiters_end(stvm_vm *vm, stvm_list *l)
{
    for (stvm_proc *p; (p = l->first) != NULL;)
        stvm__wait_end(vm, p, STVM_WAIT_CLOSED);
}

void *stvm__queue_take_reserved(stvm_queue *q, bool handed)
{
    stvm_vm *vm = q->vm;
    queue_lock(q);
    /* A handed reader takes the front item: the front ones are those promised to woken
     * readers (who take them in the order they run). A taker of an excess signal takes
     * the first item nobody was promised. (Items of other threads whose signal the VM
     * has not yet seen are at the back; they count for neither.) */
    void *item = handed ? pop_front(q) : remove_at(q, q->avail.list.handed);
    size_t left = q->count + q->pending_count;
    queue_unlock(q);
    stvm__trace(vm, STVM_TRACE_QUEUE_TAKE, vm->active ? vm->active->id : 0, (uintptr_t)q,
                (int64_t)left);
    if (stvm__queue_dry(q) && q->avail.list.first) {
        /* The last item left in a closed queue: the readers waiting behind it get the end
         * of the queue, and by the rule of the calls a higher one of them runs first.
         * (An ended queue has no writer waiting: the room goes nowhere.) */
        waiters_end(vm, &q->avail.list);
        slot_release(q, false);
        if (stvm__in_process(vm))
            stvm__preempt_if_needed(vm);
        return item;
    }
    slot_release(q, true);
    return item;
}

/* ---- the public calls ------------------------------------------------------------------ */

/* For the trace: a queue's semaphores go by the queue's name ("frames.items"). */
static void trace_members(stvm_vm *vm, const void *obj)
{
    const stvm_queue *q = obj;
    stvm__trace_member(vm, &q->avail, q, STVM_TRACE_LABEL_QUEUE, "items");
    stvm__trace_member(vm, &q->room, q, STVM_TRACE_LABEL_QUEUE, "room");
}

int stvm_queue_new(stvm_vm *vm, size_t capacity, stvm_queue **out)
{
    if (!vm || !out || capacity > (size_t)INT64_MAX)
        return STVM_EINVAL;
    stvm_queue *q = stvm__objmem_alloc(vm, STVM_CLASS_QUEUE, sizeof *q);
    if (!q)
        return STVM_ENOMEM;
    q->vm = vm;
    stvm__sem_init(vm, &q->avail);
    stvm__sem_init(vm, &q->room);
    q->avail.role = STVM_SEM_QUEUE_ITEMS;
    q->room.role = STVM_SEM_QUEUE_ROOM;
    vm->trace_members[STVM_CLASS_QUEUE] = trace_members;
    if (vm->trace)
        trace_members(vm, q);
    q->capacity = capacity;
    atomic_init(&q->free_slots, capacity);
    atomic_init(&q->closed, false);
    q->next = vm->queues;
    if (q->next)
        q->next->prev = q;
    vm->queues = q;
    *out = q;
    return STVM_OK;
}

/* Hand every item left to fn and release q and what it owns. */
static void release(stvm_vm *vm, stvm_queue *q, stvm_item_fn fn, void *arg)
{
    if (q->external) {
        q->avail.signal_budget = NULL;   /* the slot is an ordinary one again, to free */
        stvm_external_unregister(vm, q->ext_index);
    }
    while (q->count || q->pending_count) {
        void *item = pop_front(q);
        if (fn)
            fn(item, arg);
    }
    if (q->external) {
        pthread_mutex_destroy(&q->lock);
        pthread_cond_destroy(&q->has_room);
    }
    if (q->prev)
        q->prev->next = q->next;
    else
        vm->queues = q->next;
    if (q->next)
        q->next->prev = q->prev;
    free(q->items);
    free(q->pending);
    stvm__objmem_free(vm, q);
}

int stvm_queue_free(stvm_vm *vm, stvm_queue *q, stvm_item_fn fn, void *arg)
{
    if (!vm || !stvm__is_queue(vm, q))
        return STVM_EINVAL;
    if (vm->active && !stvm__in_process(vm))
        return STVM_ENOTPROC;
    if (!stvm__list_idle(&q->avail.list) || !stvm__list_idle(&q->room.list))
        return STVM_EINUSE;
    if (q->external) {
        pthread_mutex_lock(&q->lock);
        unsigned waiters = q->thread_waiters;
        pthread_mutex_unlock(&q->lock);
        if (waiters)
            return STVM_EINUSE;
    }
    release(vm, q, fn, arg);
    return STVM_OK;
}

void stvm__queues_destroy(stvm_vm *vm)
{
    while (vm->queues)
        release(vm, vm->queues, NULL, NULL);
}

int stvm_queue_put(stvm_vm *vm, stvm_queue *q, void *item)
{
    if (!vm || !stvm__is_queue(vm, q))
        return STVM_EINVAL;
    bool green = stvm__in_process(vm);
    if (!green && vm->active)
        return STVM_ENOTPROC;   /* the VM runs on another thread */
    if (stvm__queue_closed(q))
        return STVM_ECLOSED;
    if (!stvm__queue_slot_try(vm, q)) {
        if (!green)
            return STVM_EAGAIN;   /* the embedding thread cannot wait: a try that found no room */
        int err = stvm__queue_put_wait(vm, q);
        if (err < 0)
            return err;
    }
    return stvm__queue_put_held(vm, q, item);
}

int stvm__queue_put_held(stvm_vm *vm, stvm_queue *q, void *item)
{
    queue_lock(q);
    /* Closed while the caller waited for room it was then handed, or (external) by a
     * thread just now: refused, as every put after the close is. */
    int err = stvm__queue_closed(q) ? STVM_ECLOSED : stvm__queue_push(q, item);
    size_t now = q->count + q->pending_count;
    queue_unlock(q);
    if (err) {
        stvm__queue_slot_back(q);
        return err;
    }
    bool green = stvm__in_process(vm);
    stvm__trace(vm, STVM_TRACE_QUEUE_PUT, green ? vm->active->id : 0, (uintptr_t)q,
                (int64_t)now);
    if (green)
        stvm__sem_signal(vm, &q->avail);
    else
        stvm__sem_signal_noswitch(vm, &q->avail);
    return STVM_OK;
}

int stvm_queue_take(stvm_vm *vm, stvm_queue *q, void **item)
{
    int err = stvm__queue_check(vm, q);
    if (err)
        return err;
    if (!item)
        return STVM_EINVAL;
    if ((err = take_wait(vm, q)) < 0)
        return err == STVM_ECLOSED ? STVM_EEOF : err;
    *item = stvm__queue_take_reserved(q, err == STVM_OK);
    return STVM_OK;
}

/* A caller switched away in the middle of a call on q: q stays pinned, so that nobody
 * frees it under the call (stvm_queue_free answers EINUSE); a terminate drops the pin. */
typedef struct call_pin {
    stvm_wait_guard guard;
    stvm_queue *q;
} call_pin;

static void call_pin_drop(stvm_vm *vm, stvm_wait_guard *g)
{
    (void)vm;
    STVM_CONTAINER(g, call_pin, guard)->q->avail.list.pins--;
}

/* Requests of other threads become avail's signals now, so that what they put counts.
 * Only inside a run: outside, the drain would also consume a pending stvm_stop meant
 * for the next run; the run drains them when it starts. A reader that wakes (of this
 * queue or, since the whole table drains, of any external semaphore) and is higher than
 * the caller runs now, with q pinned. */
static void drain_external(stvm_vm *vm, stvm_queue *q)
{
    if (!q->external || !stvm__in_process(vm))
        return;
    stvm__external_drain(vm);
    if (stvm__runq_highest(vm) <= vm->active->priority)
        return;   /* nobody to let run: no pin needed */
    call_pin pin = {.guard.undo = call_pin_drop, .q = q};
    q->avail.list.pins++;
    stvm__wait_guard_push(vm, &pin.guard);
    stvm__preempt_if_needed(vm);
    stvm__wait_guard_pop(vm, &pin.guard);
    q->avail.list.pins--;
}

bool stvm__queue_take_try(stvm_vm *vm, stvm_queue *q)
{
    drain_external(vm, q);
    return stvm__sem_try(vm, &q->avail);
}

int stvm_queue_try_take(stvm_vm *vm, stvm_queue *q, void **item)
{
    int err = stvm__queue_check(vm, q);
    if (err)
        return err;
    if (!item)
        return STVM_EINVAL;
    if (!stvm__queue_take_try(vm, q))
        return stvm__queue_dry(q) ? STVM_EEOF : STVM_EAGAIN;
    *item = stvm__queue_take_reserved(q, false);
    return STVM_OK;
}

/* The calls that look at a queue from a process or the embedding thread outside
 * stvm_run: EINVAL or ENOTPROC; then what other threads put is made to count. */
static int look_check(stvm_vm *vm, stvm_queue *q)
{
    if (!vm || !stvm__is_queue(vm, q))
        return STVM_EINVAL;
    if (vm->active && !stvm__in_process(vm))
        return STVM_ENOTPROC;
    drain_external(vm, q);
    return STVM_OK;
}

int stvm_queue_peek(stvm_vm *vm, stvm_queue *q, void **item)
{
    int err = look_check(vm, q);
    if (err || (err = item ? STVM_OK : STVM_EINVAL))
        return err;
    if (q->avail.excess_signals <= 0)
        return stvm__queue_dry(q) ? STVM_EEOF : STVM_EAGAIN;
    queue_lock(q);
    /* Items promised to woken readers come first; the next taker gets the one after. */
    *item = item_at(q, q->avail.list.handed);
    queue_unlock(q);
    return STVM_OK;
}

int64_t stvm_queue_size(stvm_vm *vm, stvm_queue *q)
{
    int err = look_check(vm, q);
    if (err)
        return err;
    return q->avail.excess_signals;
}

int64_t stvm_queue_flush(stvm_vm *vm, stvm_queue *q, stvm_item_fn fn, void *arg)
{
    int err = look_check(vm, q);
    if (err)
        return err;
    int64_t n = q->avail.excess_signals;
    if (n <= 0)
        return 0;
    void **gone = NULL;
    if (fn && !(gone = stvm__malloc((size_t)n * sizeof *gone)))
        return STVM_ENOMEM;   /* nothing removed: fn must see every item it frees */
    q->avail.excess_signals = 0;
    queue_lock(q);
    size_t from = q->avail.list.handed;   /* the items before are promised to readers */
    for (size_t i = 0; gone && i < (size_t)n; i++)
        gone[i] = item_at(q, from + i);
    remove_range(q, from, (size_t)n);
    queue_unlock(q);
    /* Outside the lock: fn may be anything, and the room wakes writers. */
    for (size_t i = 0; i < (size_t)n; i++) {
        if (gone)
            fn(gone[i], arg);
        slot_release(q, false);
    }
    free(gone);
    /* One switch, at the end, so that fn never sees the queue half flushed. */
    if (stvm__in_process(vm))
        stvm__preempt_if_needed(vm);
    return n;
}

/* ---- closing --------------------------------------------------------------------------- */

/* Signal avail once per item other threads put that the VM has not counted yet: after a
 * close nothing more comes, so what is left is exactly what a take can get. */
static void count_thread_items(stvm_vm *vm, stvm_queue *q)
{
    if (q->external)
        stvm__external_budget_answer(vm, &q->avail);
}

void stvm__queue_end(stvm_vm *vm, stvm_queue *q, uint64_t by)
{
    if (q->ended)
        return;
    q->ended = true;
    count_thread_items(vm, q);
    queue_lock(q);
    size_t left = q->count + q->pending_count;
    queue_unlock(q);
    stvm__trace(vm, STVM_TRACE_QUEUE_CLOSE, by, (uintptr_t)q, (int64_t)left);
    waiters_end(vm, &q->room.list);
    if (stvm__queue_dry(q))
        waiters_end(vm, &q->avail.list);
}

int stvm_queue_close(stvm_vm *vm, stvm_queue *q)
{
    if (!vm || !stvm__is_queue(vm, q))
        return STVM_EINVAL;
    if (vm->active && !stvm__in_process(vm))
        return STVM_ENOTPROC;
    queue_lock(q);
    bool was = stvm__queue_closed(q);
    atomic_store_explicit(&q->closed, true, memory_order_release);
    if (q->external && !was)
        pthread_cond_broadcast(&q->has_room);   /* threads waiting for room: refused */
    queue_unlock(q);
    if (was)   /* closed before; by a thread, the VM ends it when it next looks */
        return STVM_ECLOSED;
    stvm__queue_end(vm, q, stvm__in_process(vm) ? vm->active->id : 0);
    if (stvm__in_process(vm))
        stvm__preempt_if_needed(vm);
    return STVM_OK;
}

/* ---- other OS threads ------------------------------------------------------------------ */

int stvm_queue_open_external(stvm_vm *vm, stvm_queue *q)
{
    if (!vm || !stvm__is_queue(vm, q))
        return STVM_EINVAL;
    if (vm->active && !stvm__in_process(vm))
        return STVM_ENOTPROC;
    if (q->external)
        return STVM_ESTATE;
    if (stvm__queue_closed(q))
        return STVM_ECLOSED;
    if (pthread_mutex_init(&q->lock, NULL))
        return STVM_ESYS;
    if (pthread_cond_init(&q->has_room, NULL)) {
        pthread_mutex_destroy(&q->lock);
        return STVM_ESYS;
    }
    int err = stvm_external_register(vm, &q->avail, &q->ext_index);
    if (err) {
        pthread_cond_destroy(&q->has_room);
        pthread_mutex_destroy(&q->lock);
        return err;
    }
    atomic_init(&q->unsignalled, 0);
    q->avail.signal_budget = &q->unsignalled;
    q->external = true;
    return STVM_OK;
}

static struct timespec deadline_of(int64_t timeout_ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += timeout_ms / 1000;
    t.tv_nsec += (timeout_ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

/* A thread waits for a free slot (the caller holds q->lock), until the queue is closed
 * (a close wakes every thread waiting here). */
static int thread_slot_wait(stvm_queue *q, int64_t timeout_ms)
{
    if (timeout_ms == 0)
        return STVM_ETIMEDOUT;   /* a time limit of 0 passed */
    struct timespec until = timeout_ms > 0 ? deadline_of(timeout_ms) : (struct timespec){0};
    int err = STVM_OK;
    q->thread_waiters++;
    for (;;) {
        if (stvm__queue_closed(q)) {
            err = STVM_ECLOSED;
            break;
        }
        if (free_slot_take(q))
            break;
        int rc = timeout_ms < 0 ? pthread_cond_wait(&q->has_room, &q->lock)
                                : pthread_cond_clockwait(&q->has_room, &q->lock,
                                                         CLOCK_MONOTONIC, &until);
        if (rc == ETIMEDOUT) {   /* a last look: closed, or room after all */
            err = stvm__queue_closed(q) ? STVM_ECLOSED
                  : free_slot_take(q)   ? STVM_OK
                                        : STVM_ETIMEDOUT;
            break;
        }
    }
    q->thread_waiters--;
    return err;
}

int stvm_queue_put_external(stvm_queue *q, void *item, int64_t timeout_ms)
{
    if (!q || q->hdr.class_index != STVM_CLASS_QUEUE || !q->external || timeout_ms < -1)
        return STVM_EINVAL;
    pthread_mutex_lock(&q->lock);
    /* Read under the lock: after it, the VM may free q as soon as no thread waits. */
    stvm_vm *vm = q->vm;
    int index = q->ext_index;
    int err = stvm__queue_closed(q) ? STVM_ECLOSED : STVM_OK;
    if (!err && q->capacity && !free_slot_take(q))
        err = thread_slot_wait(q, timeout_ms);
    if (!err && q->pending_head + q->pending_count == q->pending_alloc) {
        if (q->pending_head) {   /* room at the front: move the items down */
            memmove(q->pending, q->pending + q->pending_head, q->pending_count * sizeof *q->pending);
            q->pending_head = 0;
        } else {
            size_t n = q->pending_alloc ? q->pending_alloc * 2 : 16;
            void **a = stvm__realloc(q->pending, n * sizeof *a);
            if (a) {
                q->pending = a;
                q->pending_alloc = n;
            } else {
                err = STVM_ENOMEM;
                if (q->capacity) {   /* the slot goes back, to whoever waits for one */
                    atomic_fetch_add(&q->free_slots, 1);
                    pthread_cond_signal(&q->has_room);
                }
            }
        }
    }
    if (!err) {
        q->pending[q->pending_head + q->pending_count++] = item;
        atomic_fetch_add(&q->unsignalled, 1);   /* before the request the drain answers */
    }
    pthread_mutex_unlock(&q->lock);
    if (!err)
        stvm_external_signal(vm, index);
    return err;
}

int stvm_queue_close_external(stvm_queue *q)
{
    if (!q || q->hdr.class_index != STVM_CLASS_QUEUE || !q->external)
        return STVM_EINVAL;
    pthread_mutex_lock(&q->lock);
    stvm_vm *vm = q->vm;
    int index = q->ext_index;
    bool was = stvm__queue_closed(q);
    if (!was) {
        atomic_store_explicit(&q->closed, true, memory_order_release);
        /* The VM ends the queue when it answers the slot's request below: the bit goes
         * with the items not yet counted, so it sees both at once. */
        atomic_fetch_or(&q->unsignalled, STVM_BUDGET_CLOSED);
        pthread_cond_broadcast(&q->has_room);
    }
    pthread_mutex_unlock(&q->lock);
    if (was)
        return STVM_ECLOSED;
    stvm_external_signal(vm, index);
    return STVM_OK;
}
