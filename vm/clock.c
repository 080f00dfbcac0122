#include "clock.h"

#include <time.h>

int64_t stvm__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
