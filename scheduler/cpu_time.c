/*
 * Who used the CPU: each process's time on its VM's thread (stvm_process_info.cpu_ns),
 * while the VM accounts it (stvm_config.cpu_time).
 *
 * A switch is the only place where the thread passes from one process to another, so
 * the time is charged there: the clock is read at each switch, and the process that
 * leaves is charged the time since the last reading. That read is what accounting
 * costs, a few ns per hand-off on the TSC's fast path; with accounting off a switch pays
 * nothing for it, because the hand-off's one test of vm->switch_watch (which tracing
 * needs anyway) covers both. Sampling (a timer signal that charges whoever runs) would
 * cost nothing per switch but would take a signal from the program and give figures
 * only for processes that run for many sampling periods; the scheduler's own clock reads
 * (every 8 switches at most, and only while a deadline is armed) are too few to charge
 * each process its part.
 *
 * The clock is the VM's: on the real one stvm__clock_real_ns (CLOCK_MONOTONIC through
 * the TSC, vm/clock.h), so a process is charged the time the system gave other threads
 * while it held the VM's thread, and the system calls it made; on the simulated one the
 * simulated clock in ns, which only stvm_work_us, modelled costs and the idle process's
 * jumps move: a process is charged exactly the work it modelled. The idle process's OS
 * sleeps and jumps are charged to nobody.
 */
#include "sched.h"

static inline uint64_t now_ns(stvm_vm *vm)
{
    if (vm->clock.kind == STVM_CLOCK_SIMULATED)
        return vm->clock.sim_now_us * 1000;
    return (uint64_t)stvm__clock_real_ns();
}

void stvm__cpu_switch(stvm_vm *vm, stvm_proc *from)
{
    uint64_t now = now_ns(vm);
    if (from && now > vm->cpu_stamp_ns)
        from->cpu_ns += now - vm->cpu_stamp_ns;
    vm->cpu_stamp_ns = now;
}

void stvm__cpu_pause(stvm_vm *vm)
{
    if (vm->cfg.cpu_time)
        stvm__cpu_switch(vm, vm->active);
}

void stvm__cpu_resume(stvm_vm *vm)
{
    if (vm->cfg.cpu_time)
        vm->cpu_stamp_ns = now_ns(vm);
}

uint64_t stvm__cpu_of(stvm_vm *vm, const stvm_proc *p)
{
    if (!vm->cfg.cpu_time)
        return 0;
    uint64_t t = p->cpu_ns;
    if (p == vm->active) {
        uint64_t now = now_ns(vm);
        if (now > vm->cpu_stamp_ns)
            t += now - vm->cpu_stamp_ns;
    }
    return t;
}
