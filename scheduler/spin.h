/*
 * Looking for an event for a short while before sleeping in the OS, for threads that
 * wait for each other (FFI workers and the VM's thread). A sleeping thread costs a
 * wake-up, which on the development virtual machine is about 25 us between its two
 * cores (docs/ffi.md); a spin costs CPU instead, and pays only when the event comes
 * within it. So the spin learns how soon events come: after a wait (spin, then sleep)
 * that ended within max_ns, or a spin that saw its event, the next spin may last the
 * whole max_ns; after a wait that took longer, the next spin is half as long, down to
 * 1 us. A blocking call of 10 ms thus soon costs its waiter no spinning, and calls that
 * return in microseconds find the waiter awake. Any thread may share one stvm_spin.
 */
#ifndef STVM_SCHEDULER_SPIN_H
#define STVM_SCHEDULER_SPIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define STVM_SPIN_FLOOR_NS 1000

typedef struct stvm_spin {
    int64_t max_ns;                 /* 0: never spin */
    _Atomic int64_t window_ns;      /* the next spin's length */
} stvm_spin;

static inline void stvm__spin_init(stvm_spin *s, int64_t max_ns)
{
    s->max_ns = max_ns;
    atomic_init(&s->window_ns, max_ns);
}

/* Look at ready(arg) until it answers true or the window passes (at most limit_ns when
 * that is shorter). Answers true when ready did; else *since is when the wait began,
 * and the caller, once its sleep has ended, reports it with stvm__spin_woke. */
bool stvm__spin(stvm_spin *s, int64_t limit_ns, bool (*ready)(void *arg), void *arg,
                int64_t *since);
void stvm__spin_woke(stvm_spin *s, int64_t since);
/* The same lesson from a wait someone else timed (waited_ns from start to event). */
void stvm__spin_waited(stvm_spin *s, int64_t waited_ns);
/* CLOCK_MONOTONIC in ns, the clock the spins read. */
int64_t stvm__spin_now(void);

#endif
