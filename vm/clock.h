/* The VM clock: real (monotonic, anchored to UTC at start) or simulated, and its
 * public readers (stvm_vm_now_us, stvm_vm_millisecond_clock in clock.c). */
#ifndef STVM_VM_CLOCK_H
#define STVM_VM_CLOCK_H

#include "vm.h"

/* The VM clock stays below this (2^62 us, about 146,000 years after 1901): the
 * simulated clock starts at or before it, deadlines past it are refused (primitive 242
 * fails; a Delay or timed wait that would end later answers ERANGE), so that no sum of
 * a clock value and a duration can overflow. */
#define STVM_CLOCK_MAX_US ((uint64_t)1 << 62)

/* Anchor the clock (called once by stvm_vm_create). ESYS if the OS clock fails. */
int stvm__clock_init(stvm_vm *vm);

int64_t stvm__mono_ns(void);

/* The real clock's fast path. CLOCK_MONOTONIC through the vDSO costs 25 ns warm on
 * this project's KVM machines and about 55 ns in the Delay benchmark, where its
 * lfence waits for the cache misses before it: five reads per delay were a quarter of
 * a delay's CPU. So each thread keeps an anchor (a CLOCK_MONOTONIC reading and the TSC
 * beside it) and reads the TSC alone for up to STVM_TSC_SPAN_NS after it, at a rate
 * measured against CLOCK_MONOTONIC and lowered by 1/1024: between two anchors the
 * answer runs slow, never fast, so a deadline is never seen early; each new anchor
 * catches up (by at most about 100 ns). Per thread, so no VM's state is shared and no
 * lock is taken; without an invariant TSC (or off x86-64) every read is the vDSO's. */
typedef struct stvm_tsc_anchor {
    uint64_t tsc;       /* the TSC at the anchor */
    int64_t ns;         /* CLOCK_MONOTONIC at the anchor (never behind an earlier answer) */
    uint64_t span;      /* TSC ticks the anchor serves; 0: not calibrated, or no TSC */
    uint64_t mult;      /* ns per tick, 32.32 fixed point, lowered by 1/1024 */
    uint64_t cal_tsc;   /* the calibration's first pair */
    int64_t cal_ns;
    int state;          /* 0 unknown, 1 invariant TSC, -1 none */
} stvm_tsc_anchor;

extern _Thread_local stvm_tsc_anchor stvm__tsc_anchor __attribute__((tls_model("initial-exec")));

/* CLOCK_MONOTONIC in ns, anchoring (and calibrating) the calling thread's fast path. */
int64_t stvm__clock_real_ns_slow(void);

/* CLOCK_MONOTONIC in ns, at most about 100 ns behind it, never ahead; never behind an
 * earlier answer on the same thread. */
static inline int64_t stvm__clock_real_ns(void)
{
#if defined(__x86_64__)
    stvm_tsc_anchor *a = &stvm__tsc_anchor;
    uint64_t dt = __builtin_ia32_rdtsc() - a->tsc;
    if (dt < a->span)   /* also false when the TSC went back (another CPU): dt wraps */
        return a->ns + (int64_t)((dt * a->mult) >> 32);
#endif
    return stvm__clock_real_ns_slow();
}

/* UTC microseconds since 1901. Does not count as a clock read (primitives do that). */
static inline uint64_t stvm__clock_now_us(stvm_vm *vm)
{
    if (vm->clock.kind == STVM_CLOCK_SIMULATED)
        return vm->clock.sim_now_us;
    int64_t since = stvm__clock_real_ns() - vm->clock.mono_start_ns;
    return vm->clock.start_us + (since > 0 ? (uint64_t)since / 1000 : 0);
}

/* The millisecond clock at time now_us (masked 0x1FFFFFFF). */
static inline uint32_t stvm__clock_ms_at(const stvm_vm *vm, uint64_t now_us)
{
    uint64_t ms = (now_us - vm->clock.start_us) / 1000 + vm->clock.ms_start;
    return (uint32_t)(ms & STVM_MS_CLOCK_MASK);
}

/* The UTC microsecond at which the millisecond tick containing now_us began. */
static inline uint64_t stvm__clock_tick_start_us(const stvm_vm *vm, uint64_t now_us)
{
    return now_us - (now_us - vm->clock.start_us) % 1000;
}

#endif
