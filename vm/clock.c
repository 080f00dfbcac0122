#include "clock.h"

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
/* A kernel reading between two TSC reads at most this far apart makes a pair (a warm
 * vDSO read is about 80 ticks here, a cold one a few hundred). */
#define STVM_TSC_PAIR_TICKS 2048

_Thread_local stvm_tsc_anchor stvm__tsc_anchor __attribute__((tls_model("initial-exec")));

#if defined(__x86_64__)
#include <cpuid.h>

/* The TSC is used only where the kernel itself keeps time with it: an invariant TSC
 * (CPUID 0x80000007, EDX bit 8: one rate whatever the CPU's power state) and a clock
 * source made from it ("tsc", or "kvm-clock", the TSC scaled by the host). A kernel
 * that found the TSCs of its CPUs out of step has switched to another source, and a
 * thread moving between such CPUs could otherwise read a time ahead of the kernel's.
 * Asked once per thread, at its first clock read. */
static bool tsc_usable(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x80000007)
        return false;
    __get_cpuid(0x80000007, &a, &b, &c, &d);
    if (!((d >> 8) & 1))
        return false;
    char name[32] = "";
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, name, sizeof name - 1);
    close(fd);
    name[n > 0 ? n : 0] = 0;
    return strcmp(name, "tsc\n") == 0 || strcmp(name, "kvm-clock\n") == 0;
}
#endif

#if defined(__x86_64__)
/* A new anchor, and the rate measured again. The kernel's reading is taken between two
 * TSC reads; when they are more than STVM_TSC_PAIR_TICKS apart (an interrupt, a
 * preemption came between) the pair says too little and is not used: the next read
 * tries again. Otherwise each bound is taken on the safe side: the anchor's TSC is the
 * later read, so time extrapolated from it is early; a calibration runs from the
 * earlier read of its first pair to the later read of its last, so the rate is low.
 * A calibration that took the TSC 40 us after the kernel's reading made the rate 0.2%
 * fast, and the clock 116 ns ahead, before the pairs were bracketed. */
static int64_t anchor(stvm_tsc_anchor *a)
{
    uint64_t t1 = __builtin_ia32_rdtsc();
    int64_t ns = stvm__mono_ns();
    uint64_t t2 = __builtin_ia32_rdtsc();
    /* Never behind what the old anchor answered: its low rate keeps it behind the
     * kernel's clock, this guards the rest (a rate changed by NTP meanwhile). */
    uint64_t dt = t2 - a->tsc;
    if (a->span && dt < ((uint64_t)1 << 40)) {
        int64_t old = a->ns + (int64_t)((dt * a->mult) >> 32);
        if (old > ns)
            ns = old;
    }
    if (t2 - t1 > STVM_TSC_PAIR_TICKS)
        return ns;
    if (!a->cal_ns || t1 <= a->cal_tsc || ns < a->cal_ns) {
        a->cal_tsc = t1;
        a->cal_ns = ns;
    } else if (ns - a->cal_ns >= STVM_TSC_CALIBRATE_NS) {
        uint64_t ticks = t2 - a->cal_tsc, elapsed = (uint64_t)(ns - a->cal_ns);
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
            a->cal_tsc = t1;
            a->cal_ns = ns;
        }
    }
    a->tsc = t2;
    a->ns = ns;
    return ns;
}
#endif

int64_t stvm__clock_real_ns_slow(void)
{
#if defined(__x86_64__)
    stvm_tsc_anchor *a = &stvm__tsc_anchor;
    if (a->state == 0)
        a->state = tsc_usable() ? 1 : -1;
    if (a->state > 0)
        return anchor(a);
#endif
    return stvm__mono_ns();
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
    vm->point_clock_us = utc;
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
