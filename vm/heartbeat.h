/*
 * The OpenSmalltalk VM's heartbeat, modelled beside stvm's own clock for the idle mode
 * STVM_IDLE_OSVM764 (docs/upstream.md, opensmalltalk-vm #764 and #785). stvm itself has
 * no heartbeat: its scheduling points read the clock and its idle process sleeps until
 * the deadline. The OpenSmalltalk VM keeps a cached clock (ioUTCMicroseconds) that a
 * thread of its own advances every beat, and every beat forces an interrupt check,
 * where the timer is compared with that cached clock. A beat is 2 ms, or, since #764,
 * 50 ms when the beat begins while the VM thread is flagged idle (mainThreadIsIdle).
 *
 * Here: the cached clock, the time of the last beat (what that beat's check compares
 * the timer with) and the idle flag. On the simulated clock the beats are events of the
 * clock's own (stvm__sim_advance passes them as it passes the outside world's, but they
 * are not work that keeps a VM alive, and they never end a sleep); on the real clock
 * they come from a thread that sleeps each beat's period and stores the time (the
 * thread touches only these atomics: it never wakes the VM, as the OpenSmalltalk
 * heartbeat does not). Allocated only for that idle mode: vm->heartbeat is NULL
 * otherwise, and nothing on a hot path looks at it.
 */
#ifndef STVM_VM_HEARTBEAT_H
#define STVM_VM_HEARTBEAT_H

#include <pthread.h>
#include <stdatomic.h>

#include "vm.h"

#define STVM_OSVM_BEAT_US 2000u              /* DEFAULT_BEAT_MS */
#define STVM_OSVM_IDLE_BEAT_US 50000u        /* IDLE_BEAT_MS */
#define STVM_OSVM_RELINQUISH_CAP_US 500000u  /* #764: the most one idle sleep lasts */

typedef struct stvm_heartbeat {
    _Atomic uint64_t clock_us;   /* the cached clock: set by every beat, and by fix A */
    _Atomic uint64_t beat_us;    /* the last beat: its interrupt check saw this time */
    atomic_int idle;             /* mainThreadIsIdle */
    uint32_t idle_beat_us;       /* the period of a beat begun while idle */
    uint64_t next_beat_us;       /* simulated clock: when the next beat comes */
    /* real clock: the thread and how it is stopped */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool started, stop;
} stvm_heartbeat;

/* Make the heartbeat of a VM whose idle mode is STVM_IDLE_OSVM764 (the clock already
 * set up), its cached clock at now; on the real clock, start its thread. ENOMEM, ESYS. */
int stvm__heartbeat_start(stvm_vm *vm);
/* Stop the thread and free the heartbeat (stvm_vm_free); no-op without one. */
void stvm__heartbeat_stop(stvm_vm *vm);

/* The simulated clock reaches t: every beat due by then happens, in order. */
void stvm__heartbeat_sim_until(stvm_vm *vm, uint64_t t);

static inline uint64_t stvm__heartbeat_clock(const stvm_vm *vm)
{
    return atomic_load_explicit(&vm->heartbeat->clock_us, memory_order_relaxed);
}

/* Fix A of #785: the VM thread updates the cached clock itself (after its sleep). */
static inline void stvm__heartbeat_set_clock(stvm_vm *vm, uint64_t now_us)
{
    atomic_store_explicit(&vm->heartbeat->clock_us, now_us, memory_order_relaxed);
}

/* Has a beat's interrupt check seen the clock reach deadline_us? */
static inline bool stvm__heartbeat_saw(const stvm_vm *vm, uint64_t deadline_us)
{
    return atomic_load_explicit(&vm->heartbeat->beat_us, memory_order_relaxed) >= deadline_us;
}

static inline void stvm__heartbeat_set_idle(stvm_vm *vm, bool idle)
{
    atomic_store_explicit(&vm->heartbeat->idle, idle, memory_order_relaxed);
}

/* The simulated clock's next beat (0 without a heartbeat). */
static inline uint64_t stvm__heartbeat_next(const stvm_vm *vm)
{
    return vm->heartbeat ? vm->heartbeat->next_beat_us : 0;
}

#endif
