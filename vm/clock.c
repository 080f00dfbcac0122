#include "clock.h"

#include <stdbool.h>
#include <time.h>

int64_t stvm__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* How long one anchor serves: its lag grows by 1/1024 of this (98 ns), and a new
 * anchor is one vDSO read per 100 us of reading. */
#define STVM_TSC_SPAN_NS 100000
/* The rate is measured over at least this much CLOCK_MONOTONIC (a pair's two reads are
 * tens of ns apart: a few ppm), and measured again over each second that follows. */
#define STVM_TSC_CALIBRATE_NS 20000000
#define STVM_TSC_RECALIBRATE_NS 1000000000

_Thread_local stvm_tsc_anchor stvm__tsc_anchor __attribute__((tls_model("initial-exec")));

#if defined(__x86_64__)
#include <cpuid.h>

/* An invariant TSC ticks at one rate whatever the CPU's power state (CPUID
 * 0x80000007, EDX bit 8), as Linux requires before it keeps time with it. */
static bool tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
        return false;
    __get_cpuid(0x80000007, &a, &b, &c, &d);
    return (d >> 8) & 1;
}
#endif

int64_t stvm__clock_real_ns_slow(void)
{
    int64_t ns = stvm__mono_ns();
#if defined(__x86_64__)
    stvm_tsc_anchor *a = &stvm__tsc_anchor;
    if (a->state == 0)
        a->state = tsc_invariant() ? 1 : -1;
    if (a->state < 0)
        return ns;
    uint64_t t = __builtin_ia32_rdtsc();
    /* Never behind what the old anchor answered: its slow rate keeps it behind the
     * kernel's clock, this guards the rest (a rate changed by NTP meanwhile). */
    uint64_t dt = t - a->tsc;
    if (a->span && dt < ((uint64_t)1 << 40)) {
        int64_t old = a->ns + (int64_t)((dt * a->mult) >> 32);
        if (old > ns)
            ns = old;
    }
    if (!a->cal_ns || t <= a->cal_tsc || ns < a->cal_ns) {
        a->cal_tsc = t;
        a->cal_ns = ns;
    } else if (ns - a->cal_ns >= STVM_TSC_CALIBRATE_NS) {
        uint64_t ticks = t - a->cal_tsc, elapsed = (uint64_t)(ns - a->cal_ns);
        uint64_t mult = (uint64_t)(((unsigned __int128)elapsed << 32) / ticks);
        mult -= mult >> 10;
        /* A TSC between 100 MHz and 20 GHz; anything else is not a clock to trust. */
        if (mult > ((uint64_t)10 << 32) || mult < ((uint64_t)1 << 32) / 20) {
            a->state = -1;
            a->span = 0;
            return ns;
        }
        a->mult = mult;
        a->span = ((uint64_t)STVM_TSC_SPAN_NS << 32) / mult;
        if (elapsed >= STVM_TSC_RECALIBRATE_NS) {
            a->cal_tsc = t;
            a->cal_ns = ns;
        }
    }
    a->tsc = t;
    a->ns = ns;
#endif
    return ns;
}

int stvm__clock_init(stvm_vm *vm)
{
    struct timespec rt;
    if (clock_gettime(CLOCK_REALTIME, &rt) != 0)
        return STVM_ESYS;
    uint64_t utc = STVM_US_FROM_1901_TO_1970 + (uint64_t)rt.tv_sec * 1000000u +
                   (uint64_t)rt.tv_nsec / 1000u;
    vm->clock.kind = vm->cfg.clock;
    vm->clock.ms_start = vm->cfg.ms_clock_start & STVM_MS_CLOCK_MASK;
    vm->clock.mono_start_ns = stvm__mono_ns();
    if (vm->cfg.clock == STVM_CLOCK_SIMULATED && vm->cfg.sim_start_us)
        utc = vm->cfg.sim_start_us;
    vm->clock.start_us = utc;
    vm->clock.sim_now_us = utc;
    return STVM_OK;
}

uint64_t stvm_vm_now_us(stvm_vm *vm)
{
    return vm ? stvm__clock_now_us(vm) : 0;
}

uint32_t stvm_vm_millisecond_clock(stvm_vm *vm)
{
    return vm ? stvm__clock_ms_at(vm, stvm__clock_now_us(vm)) : 0;
}
