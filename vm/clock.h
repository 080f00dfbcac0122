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

/* Anchor the clock (called once by stvm_vm_new). ESYS if the OS clock fails. */
int stvm__clock_init(stvm_vm *vm);

int64_t stvm__mono_ns(void);

/* UTC microseconds since 1901. Does not count as a clock read (primitives do that). */
static inline uint64_t stvm__clock_now_us(stvm_vm *vm)
{
    if (vm->clock.kind == STVM_CLOCK_SIMULATED)
        return vm->clock.sim_now_us;
    return vm->clock.start_us + (uint64_t)((stvm__mono_ns() - vm->clock.mono_start_ns) / 1000);
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
