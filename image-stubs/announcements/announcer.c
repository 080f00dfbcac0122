/*
 * Announcer and SubscriptionRegistry (announcer.h says what is Pharo's and what is not).
 * The registry is an array in subscription order; an announcement copies the matching
 * entries under the mutex and delivers to the copy with the mutex released, so a
 * callback may subscribe, unsubscribe, announce again or wait without the registry
 * changing under the loop that delivers.
 */
#include <stdlib.h>
#include <string.h>

#include "../../scheduler/sched.h"
#include "../../vm/grow.h"
#include "announcer.h"
#include "../../vm/alloc.h"

/* Matches copied on the announcing process's stack (16 bytes each) before the copy
 * goes to the heap. Green stacks are 16 KiB by default: keep it small. */
#define LOCAL_COPIES 8

typedef struct subscription {
    uint64_t id;
    const announcement_class *cls;
    announcement_fn fn;
    void *arg;
} subscription;

/* What a delivery calls: a subscription as it was when the announcement copied it. */
typedef struct copied {
    announcement_fn fn;
    void *arg;
} copied;

/* The registry (Pharo's SubscriptionRegistry and its monitor) and the counters.
 * subs[0..count) is in subscription order; ids only grow. */
struct announcer {
    stvm_vm *vm;
    stvm_mutex *mutex;          /* Pharo's monitor, in the VM's object memory */
    subscription *subs;
    size_t count, cap;
    uint64_t next_id;           /* the last id given */
    announcer_stats stats;      /* subscriptions is kept equal to count */
};

/* One announcement past the fast path, on its process's stack. The guard ends it if
 * the process is terminated in the middle (in a subscriber's wait, say): the frame
 * vanishes then, and in_flight and a heap copy must not outlive it. */
typedef struct delivery {
    stvm_wait_guard guard;
    announcer *an;
    copied *copy;               /* local, or the heap past LOCAL_COPIES */
    size_t n;
    copied local[LOCAL_COPIES];
} delivery;

const announcement_class stvm__announcement_class = {"Announcement", NULL};

bool stvm__announcement_is(const announcement *a, const announcement_class *cls)
{
    if (!a || !cls)
        return false;
    for (const announcement_class *c = a->cls; c; c = c->superclass)
        if (c == cls)
            return true;
    return false;
}

/* ---- the lock ------------------------------------------------------------------------ */

/* Pharo's protected:. OK, or what the mutex's wait answered (ESTATE when suspended off
 * its list; a terminated waiter never comes back). */
static int lock(stvm_vm *vm, announcer *an)
{
    stvm_mutex *m = an->mutex;
    if (m->owner && m->owner != vm->active)
        an->stats.mutex_waits++;
    int err = stvm__mutex_enter(vm, m);
    if (!err)
        an->stats.mutex_entries++;
    return err;
}

/* The depth-aware exit: a process that holds the mutex itself (a test modelling
 * contention) and subscribes keeps it. Cannot fail: this process owns it. */
static void unlock(stvm_vm *vm, announcer *an)
{
    stvm_mutex_exit(vm, an->mutex);
}

/* Whether this call locks: a process does, the host changes the registry directly. */
static int lock_if_process(stvm_vm *vm, announcer *an)
{
    return vm->active ? lock(vm, an) : STVM_OK;
}

static void unlock_if_process(stvm_vm *vm, announcer *an)
{
    if (vm->active)
        unlock(vm, an);
}

/* ---- lifetime and the registry ------------------------------------------------------- */

int stvm__announcer_new(stvm_vm *vm, announcer **out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    announcer *an = stvm__calloc(1, sizeof *an);
    if (!an)
        return STVM_ENOMEM;
    int err = stvm_mutex_new(vm, &an->mutex);
    if (err) {
        free(an);
        return err;
    }
    an->vm = vm;
    *out = an;
    return STVM_OK;
}

int stvm__announcer_free(stvm_vm *vm, announcer *an)
{
    if (!vm || !an || an->vm != vm)
        return STVM_EINVAL;
    if (an->stats.in_flight)
        return STVM_EINUSE;
    int err = stvm_mutex_free(vm, an->mutex);   /* EINUSE while held or waited for */
    if (err)
        return err;
    free(an->subs);
    free(an);
    return STVM_OK;
}

static int add(announcer *an, const announcement_class *cls, announcement_fn fn, void *arg,
               uint64_t *id_out)
{
    void *items = an->subs;
    if (!stvm__grow(&items, &an->cap, an->count + 1, sizeof *an->subs, 8))
        return STVM_ENOMEM;
    an->subs = items;
    uint64_t id = ++an->next_id;
    an->subs[an->count++] = (subscription){.id = id, .cls = cls, .fn = fn, .arg = arg};
    an->stats.subscriptions = an->count;
    *id_out = id;
    return STVM_OK;
}

/* O(n) in the subscriptions, order kept (delivery order is subscription order). */
static int remove_id(announcer *an, uint64_t id)
{
    for (size_t i = 0; i < an->count; i++) {
        if (an->subs[i].id != id)
            continue;
        memmove(&an->subs[i], &an->subs[i + 1], (an->count - i - 1) * sizeof an->subs[0]);
        an->stats.subscriptions = --an->count;
        return STVM_OK;
    }
    return STVM_EINVAL;
}

int stvm__announcer_subscribe(stvm_vm *vm, announcer *an, const announcement_class *cls,
                              announcement_fn fn, void *arg, uint64_t *id_out)
{
    if (!vm || !an || an->vm != vm || !cls || !fn || !id_out)
        return STVM_EINVAL;
    int err = lock_if_process(vm, an);
    if (err)
        return err;
    err = add(an, cls, fn, arg, id_out);
    unlock_if_process(vm, an);
    return err;
}

int stvm__announcer_unsubscribe(stvm_vm *vm, announcer *an, uint64_t id)
{
    if (!vm || !an || an->vm != vm)
        return STVM_EINVAL;
    int err = lock_if_process(vm, an);
    if (err)
        return err;
    err = remove_id(an, id);
    unlock_if_process(vm, an);
    return err;
}

/* ---- announcing ---------------------------------------------------------------------- */

static void delivery_end(delivery *d)
{
    d->an->stats.in_flight--;
    if (d->copy != d->local)
        free(d->copy);
}

/* The announcing process was terminated: end its delivery for it. */
static void abandon(stvm_vm *vm, stvm_wait_guard *g)
{
    (void)vm;
    delivery_end(STVM_CONTAINER(g, delivery, guard));
}

/* Pharo's subscriptionsHandling:, called with the mutex held: copy the subscriptions
 * that handle a, in order. ENOMEM past LOCAL_COPIES without memory. */
static int copy_matching(announcer *an, const announcement *a, delivery *d)
{
    if (an->count > LOCAL_COPIES) {
        d->copy = stvm__malloc(an->count * sizeof *d->copy);
        if (!d->copy) {
            d->copy = d->local;
            return STVM_ENOMEM;
        }
    }
    for (size_t i = 0; i < an->count; i++) {
        const subscription *s = &an->subs[i];
        if (stvm__announcement_is(a, s->cls))
            d->copy[d->n++] = (copied){s->fn, s->arg};
    }
    return STVM_OK;
}

/* Lock, let a woken higher-priority process in, copy, unlock. */
static int pick(stvm_vm *vm, announcer *an, const announcement *a, delivery *d)
{
    int err = lock(vm, an);
    if (err)
        return err;
    /* In Pharo any send inside the critical section may find an interrupt pending (a
     * timer, a socket's semaphore) and switch to the process it woke, which then waits
     * for this lock if it announces too. The copy is taken after this point, so nothing
     * seen before it can go stale. */
    stvm_checkpoint(vm);
    err = copy_matching(an, a, d);
    unlock(vm, an);   /* may hand the mutex to a higher waiter, which runs first */
    return err;
}

int stvm__announce(stvm_vm *vm, announcer *an, const announcement *a)
{
    if (!vm || !an || an->vm != vm || !a || !a->cls)
        return STVM_EINVAL;
    if (!vm->active)
        return STVM_ENOTPROC;
    an->stats.announced++;
    /* Pharo's "subscriptions isEmpty ifTrue: [ ^ self ]", read without the lock: with
     * nobody subscribed an announcement costs this test and nothing else. */
    if (an->count == 0) {
        an->stats.fast_path++;
        return STVM_OK;
    }
    delivery d = {.guard.undo = abandon, .an = an};
    d.copy = d.local;
    an->stats.in_flight++;
    stvm__wait_guard_push(vm, &d.guard);
    int err = pick(vm, an, a, &d);
    if (err)
        an->stats.failed++;
    else if (d.n == 0)
        an->stats.unmatched++;
    else
        an->stats.delivered++;
    for (size_t i = 0; i < d.n && !err; i++) {
        an->stats.deliveries++;
        d.copy[i].fn(vm, a, d.copy[i].arg);
    }
    stvm__wait_guard_pop(vm, &d.guard);
    delivery_end(&d);
    return err;
}

void stvm__announcer_get_stats(const announcer *an, announcer_stats *out)
{
    *out = an->stats;
}

stvm_mutex *stvm__announcer_mutex(announcer *an)
{
    return an->mutex;
}
