/*
 * Announcer: Pharo's Announcements-Core written in C on the primitives. A subscription
 * registry guarded by a mutex, announcements delivered synchronously in the announcing
 * process, and the fast path Pharo has when nobody is subscribed (no lock, no work).
 * zn_log.h builds Zinc's log events on it; nothing here is Zinc's.
 *
 * The shape follows Pharo 6/7's SubscriptionRegistry>>deliver: an announcement to a
 * registry with no subscriptions returns at once, without the lock; otherwise the
 * registry's lock is taken only to copy the subscriptions that handle the
 * announcement, and the copy is delivered to after the lock is released, one
 * subscription after the other, in the announcing process. So:
 *  - a subscriber may wait (a Delay, a semaphore): the announcing process waits with
 *    it, and other processes may announce meanwhile without waiting for the lock;
 *  - a subscription added during a delivery does not receive the announcement being
 *    delivered, only later ones;
 *  - a subscription removed during a delivery still receives the announcement being
 *    delivered if it was copied before the removal (Pharo delivers to its copy too):
 *    after stvm__announcer_unsubscribe its callback may still run for announcements in
 *    flight (announcer_stats.in_flight > 0), so free its argument only when none is.
 *
 * Differences from Pharo: deliveries follow subscription order (Pharo's registry is an
 * IdentitySet, whose order is its hash order); the copy lives on the announcing
 * process's stack up to 8 matches (Pharo allocates an Array each time); the lock is
 * an stvm mutex (Pharo's is a Semaphore forMutualExclusion: the same hand-off to the
 * first waiter, and this code never re-enters it); a callback cannot fail, so Pharo's
 * "deliver to the rest even if one fails" has no counterpart; AnnouncementSets,
 * weak subscriptions, suspending and preventing announcements are not modelled.
 */
#ifndef STVM_IMAGE_STUBS_ANNOUNCER_H
#define STVM_IMAGE_STUBS_ANNOUNCER_H

#include <stdbool.h>
#include <stdint.h>

#include "stvm.h"

/* ---- announcement classes ---------------------------------------------------------- */

/* An announcement class: a name and its superclass, NULL only for the root. Classes are
 * static const data defined by whoever announces them (zn_log.c, a test), single
 * inheritance as in Smalltalk; two classes are the same class when they are the same
 * object. */
typedef struct announcement_class {
    const char *name;                               /* "ZnRequestWrittenEvent" */
    const struct announcement_class *superclass;    /* NULL for Announcement */
} announcement_class;

/* Announcement, the root: a subscription to it receives every announcement. */
extern const announcement_class stvm__announcement_class;

/* The header every announcement starts with. An event struct embeds it as its first
 * member; a subscriber checks the class (stvm__announcement_is) and casts back. */
typedef struct announcement {
    const announcement_class *cls;
} announcement;

/* Is a of class cls or of one of its subclasses (Pharo's "anAnnouncement isKindOf:
 * aClass", which is how a subscription to a class decides)? False for NULLs. */
bool stvm__announcement_is(const announcement *a, const announcement_class *cls);

/* ---- the announcer -------------------------------------------------------------------- */

typedef struct announcer announcer;

/* What a subscription runs, in the announcing process, with the announcement (valid
 * only during the call: copy what is kept) and the argument given at subscription.
 * It may switch and wait; the announcing process waits with it. */
typedef void (*announcement_fn)(stvm_vm *vm, const announcement *a, void *arg);

/* Counters the experiment reads. After every announcement has returned:
 * announced == fast_path + unmatched + delivered + failed. */
typedef struct announcer_stats {
    uint64_t announced;         /* stvm__announce calls accepted (arguments valid) */
    uint64_t fast_path;         /* of those, answered at the "no subscriptions" test:
                                   no lock taken, nothing copied, nothing delivered */
    uint64_t unmatched;         /* took the lock, no subscription handled it */
    uint64_t delivered;         /* reached at least one subscription */
    uint64_t failed;            /* ESTATE or ENOMEM after the test: nothing delivered */
    uint64_t deliveries;        /* subscription callbacks run, all announcements */
    uint64_t mutex_entries;     /* the registry's mutex taken (announce, subscribe,
                                   unsubscribe from a process) */
    uint64_t mutex_waits;       /* of the attempts, those that found it held by
                                   another process and waited */
    uint64_t subscriptions;     /* now (Pharo's numberOfSubscriptions) */
    uint64_t in_flight;         /* announcements past the fast path and not yet over:
                                   taking the lock, or delivering (also nested ones,
                                   and ones whose subscriber waits) */
} announcer_stats;

/* A new announcer of vm with no subscriptions. From the host or a process. Errors:
 * EINVAL, ENOMEM. Allocates (the announcer with malloc, its mutex in the VM's object
 * memory); never switches. The caller owns it and frees it before stvm_vm_free. */
int stvm__announcer_new(stvm_vm *vm, announcer **out);

/* Free an announcer and its subscriptions. Errors: EINVAL, EINUSE (an announcement is
 * in flight, or a process holds, waits for or is committed to the registry's mutex:
 * nothing is freed). A process left blocked inside a delivery keeps it in flight until
 * it returns or is terminated (termination ends its delivery). Never switches. */
int stvm__announcer_free(stvm_vm *vm, announcer *an);

/* Subscribe fn(vm, a, arg) to announcements of class cls and its subclasses (Pharo's
 * when:do:). It goes last in delivery order and does not receive an announcement
 * already being delivered. Stores an id (1, 2, ... per announcer, never reused) in
 * *id_out. From a process it takes the registry's mutex, as Pharo's add: does (it may
 * wait for it: switches); from the host it changes the registry directly (no process
 * can be inside the registry then: a process switched away inside the critical
 * section has not yet looked at it). Errors: EINVAL (NULLs, an announcer of another
 * VM), ENOMEM, ESTATE (suspended while waiting for the mutex: nothing changed).
 * Allocates (the registry grows). */
int stvm__announcer_subscribe(stvm_vm *vm, announcer *an, const announcement_class *cls,
                              announcement_fn fn, void *arg, uint64_t *id_out);

/* Remove the subscription with this id (Pharo's removeSubscription:), also from inside
 * a delivery. See the file comment for what an announcement in flight still delivers.
 * Locking as stvm__announcer_subscribe. Errors: EINVAL (NULLs, no subscription with
 * this id: never given or already removed), ESTATE (as subscribe). Switches. */
int stvm__announcer_unsubscribe(stvm_vm *vm, announcer *an, uint64_t id);

/* Announce a (Pharo's announce:) from the calling process:
 *  - no subscriptions at all: return at once (counted in fast_path), no lock;
 *  - otherwise take the registry's mutex (waiting for it if another process holds it),
 *    pass one preemption checkpoint inside it (where Pharo's critical section can be
 *    interrupted by a process a timer or an external signal woke), copy the
 *    subscriptions whose class a is of, release the mutex, then run the copies'
 *    callbacks in subscription order in this process.
 * STVM_OK once every callback has returned. Errors: EINVAL (NULLs, no class),
 * ENOTPROC (not called from a green process, even with no subscriptions), ESTATE
 * (suspended while waiting for the mutex), ENOMEM (more than 8 matches and no memory
 * for the copy); on an error nothing is delivered. If the process is terminated during
 * a delivery, the delivery ends there (the rest of the copy is not delivered).
 * Switches (the mutex, the checkpoint, the callbacks); allocates past 8 matches. */
int stvm__announce(stvm_vm *vm, announcer *an, const announcement *a);

/* Copy the counters. an must be a live announcer. Never fails. */
void stvm__announcer_get_stats(const announcer *an, announcer_stats *out);

/* The registry's mutex, for tests and experiments that hold it to model contention
 * (hold it with stvm_mutex_enter / stvm_mutex_exit; never free it). */
stvm_mutex *stvm__announcer_mutex(announcer *an);

#endif
