/*
 * Relinquishing the processor (primitive 230, and the idle process's loop): how long
 * the VM may wait in the OS, in which idle mode, what ended the wait, and what the
 * wake-up cost. The seed's effect lives here: a process that blocks on a socket lets
 * the idle process sleep, and pays the wake-up when its data arrives.
 *
 *  - POLL (the VM since May 2017): one epoll wait until the earliest of the relinquish
 *    time, the next deadline, a ready descriptor and an external signal;
 *  - LEGACY (before): for waits under 1/60 s, look at descriptors without waiting,
 *    sleep the whole time without looking at them (an external signal still ends the
 *    sleep, as SIGIO did on the VM thread), and look again; longer waits as POLL;
 *  - SPIN: never sleep; look at descriptors and return;
 *  - OSVM764: the OpenSmalltalk VM after its PR #764, with its heartbeat's model
 *    (vm/heartbeat.h): below, osvm764_relinquish.
 * The simulated clock never sleeps for a deadline: it jumps to it once nothing else
 * can happen.
 */
#include "sched.h"

#include <poll.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "../vm/aio.h"
#include "../vm/config.h"
#include "../vm/heartbeat.h"
#include "../vm/sim_world.h"
#include "timer.h"

#define LEGACY_SLEEP_LIMIT_US 16667   /* 1/60 s: aioSleepForUsecs's threshold */

/* Spin for the configured wake-up latency (a platform whose wake-ups are slow). */
static void inject_wake_latency(stvm_vm *vm)
{
    if (!vm->cfg.wake_inject_us)
        return;
    int64_t until = stvm__mono_ns() + (int64_t)vm->cfg.wake_inject_us * 1000;
    while (stvm__mono_ns() < until)
        ;
}

/* The legacy sleep: only an external signal (the wake descriptor) ends it early. */
static int sleep_blind(stvm_vm *vm, uint64_t us)
{
    struct pollfd pfd = {.fd = vm->ext.wake_fd, .events = POLLIN};
    struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
    int r = ppoll(&pfd, 1, &ts, NULL);
    if (r > 0) {
        uint64_t drained;
        ssize_t n = read(vm->ext.wake_fd, &drained, sizeof drained);
        (void)n;
        return STVM_AIO_EXTERNAL;
    }
    return 0;
}

/* What ended an OS sleep, as a trace says it. */
static int sleep_end(stvm_vm *vm, int what)
{
    uint64_t deadline = stvm__timer_deadline(vm);
    if (what & STVM_AIO_IO)
        return STVM_TRACE_END_IO;
    if (what & STVM_AIO_EXTERNAL)
        return STVM_TRACE_END_EXTERNAL;
    if (deadline && stvm__clock_now_us(vm) >= deadline)
        return STVM_TRACE_END_TIMER;
    return STVM_TRACE_END_TIMEOUT;
}

/* Count what ended an OS sleep of us (UINT64_MAX: until something happened). */
static void account(stvm_vm *vm, int what, uint64_t us, int64_t slept_ns)
{
    int end = sleep_end(vm, what);
    /* The clock as the sleep ended, for what the scheduling points use next (a wait's
     * "since" among them): one read per OS sleep, which costs a thousand times more. */
    vm->point_clock_us = stvm__clock_now_us(vm);
    /* The trace keeps the VM clock's time: a real wait on the simulated one took none. */
    stvm__trace_full(vm, STVM_TRACE_IDLE_SLEEP, stvm__trace_active(vm), 0,
                     us == UINT64_MAX ? -1 : (int64_t)us,
                     vm->clock.kind == STVM_CLOCK_SIMULATED ? 0 : slept_ns / 1000, end);
    vm->stats.os_sleeps++;
    vm->stats.os_slept_us += (uint64_t)(slept_ns / 1000);
    if (vm->active == vm->idle)
        vm->stats.idle_sleeps++;
    switch (end) {
    case STVM_TRACE_END_IO: vm->stats.wakeups_io++; break;
    case STVM_TRACE_END_EXTERNAL: vm->stats.wakeups_external++; break;
    case STVM_TRACE_END_TIMER: vm->stats.wakeups_timer++; break;
    default: vm->stats.wakeups_relinquish++; break;
    }
}

/* One wait in the OS of at most us (UINT64_MAX: no limit), blind to descriptors when
 * blind is set. Skipped when an external signal is already pending (the other side of
 * the Dekker pair in external_drain.c). Answers STVM_AIO_* bits. */
static int os_sleep(stvm_vm *vm, uint64_t us, bool blind)
{
    stvm__cpu_pause(vm);   /* a sleep is nobody's CPU time, the wake-up's included */
    atomic_store(&vm->ext.sleeping, 1);
    int what = STVM_AIO_EXTERNAL;
    int64_t t0 = stvm__mono_ns();
    if (!atomic_load(&vm->ext.pending))
        what = blind ? sleep_blind(vm, us)
                     : stvm__aio_wait(vm, us == UINT64_MAX ? -1 : (int64_t)us * 1000);
    int64_t slept = stvm__mono_ns() - t0;
    atomic_store(&vm->ext.sleeping, 0);
    account(vm, what, us, slept);
    inject_wake_latency(vm);
    stvm__cpu_resume(vm);
    return what;
}

/* The simulated clock jumps by `by` us (requested: what the idle process asked for),
 * passing the outside world's events on the way, then by the wake-up's cost (the real
 * clock's wake_inject_us spin, or the world's model of it), which a real OS sleep's
 * length includes: the trace's OS sleep of virtual time. */
static void jump(stvm_vm *vm, uint64_t requested, uint64_t by, int end)
{
    stvm__cpu_pause(vm);
    stvm__sim_advance(vm, vm->clock.sim_now_us + by);
    const stvm_sim_world *w = &vm->outside;
    uint64_t wake = w->wake_fn ? w->wake_fn(vm, w->wake_arg, requested, by, end)
                               : vm->cfg.wake_inject_us;
    if (wake > STVM_MAX_WAKE_INJECT_US)
        wake = STVM_MAX_WAKE_INJECT_US;
    if (wake)
        stvm__sim_advance(vm, vm->clock.sim_now_us + wake);
    stvm__cpu_resume(vm);
    stvm__trace_full(vm, STVM_TRACE_IDLE_SLEEP, vm->active->id, 0, (int64_t)requested,
                     (int64_t)(by + wake), end);
}

/* The simulated clock: time moves only when nothing else can happen, to the next
 * deadline or outside event (stvm_sim_at), whichever is first. The legacy idle mode
 * keeps its blindness: a relinquish shorter than 1/60 s jumps the whole of it (or to the
 * deadline), seeing descriptors only before and after, so a peer's answer that comes
 * meanwhile waits for the jump's end as it waited for the old VM's sleep. Ready
 * descriptors and external signals from real threads come in real time: with nothing
 * to jump to, the VM waits for them in the OS. */
static void relinquish_simulated(stvm_vm *vm, uint64_t us)
{
    if (vm->active != vm->idle)
        return;
    bool io = stvm__aio_any_armed(vm);
    if (io && stvm__aio_wait(vm, 0))
        return;
    uint64_t now = stvm__clock_now_us(vm);
    uint64_t deadline = stvm__timer_is_work(vm) ? stvm__timer_deadline(vm) : 0;
    uint64_t outside = stvm__sim_next(vm);
    if (deadline && deadline <= now)
        return;
    if (vm->cfg.idle_mode == STVM_IDLE_LEGACY && io && us < LEGACY_SLEEP_LIMIT_US) {
        bool to_deadline = deadline && deadline - now <= us;
        jump(vm, us, to_deadline ? deadline - now : us,
             to_deadline ? STVM_TRACE_END_TIMER : STVM_TRACE_END_TIMEOUT);
        stvm__aio_wait(vm, 0);
        return;
    }
    if (outside && (!deadline || outside < deadline)) {
        jump(vm, deadline ? deadline - now : UINT64_MAX, outside - now, STVM_TRACE_END_OUTSIDE);
        return;
    }
    if (!deadline) {
        os_sleep(vm, UINT64_MAX, false);   /* only a descriptor or a signal can help */
        return;
    }
    if (io && os_sleep(vm, deadline - now, false))
        return;
    jump(vm, deadline - now, deadline - now, STVM_TRACE_END_TIMER);
}

/* ---- OSVM764: the OpenSmalltalk VM after PR #764 (opensmalltalk-vm #785) -------------
 *
 * #764 made the Linux VM ignore the time the image asks to sleep: it sleeps until the
 * next Delay's wake-up as its cached clock (the heartbeat's) sees it, at most 500 ms,
 * and not at all when that wake-up has passed; and it flags the VM thread idle while it
 * sleeps, so that a heartbeat beginning meanwhile lasts 50 ms instead of 2. The timer
 * itself is checked only at a beat, against the time that beat saw (timer.c). #785
 * found a Delay of a few ms waited from an idle VM ending about 500 ms late, and two
 * causes, fixed here by osvm764_fixes: the sleep did not update the cached clock after
 * it (fix A), and the idle flag was set while a Delay was pending (fix B). Nothing
 * wakes the VM thread at a beat: a sleep runs its length, ended early only by a
 * descriptor or an external signal (the simulated clock: an outside event). */
static void osvm764_relinquish(stvm_vm *vm)
{
    bool sim = vm->clock.kind == STVM_CLOCK_SIMULATED;
    if (sim && vm->active != vm->idle)
        return;
    uint64_t next = stvm__timer_deadline(vm), cached = stvm__heartbeat_clock(vm);
    if (next && next <= cached) {
        /* Overdue as the VM sees it: no sleep. The real VM spins through its idle loop
         * until a beat checks the timer; the simulated clock goes to that beat. */
        if (sim)
            stvm__sim_advance(vm, stvm__heartbeat_next(vm));
        else if (stvm__aio_any_armed(vm))
            stvm__aio_wait(vm, 0);
        return;
    }
    uint64_t us = next ? next - cached : STVM_OSVM_RELINQUISH_CAP_US;
    if (us > STVM_OSVM_RELINQUISH_CAP_US)
        us = STVM_OSVM_RELINQUISH_CAP_US;
    bool pending = stvm__timer_is_work(vm);   /* a Delay, not the scheduler's 1 s re-arm */
    bool flag = !(pending && (vm->cfg.osvm764_fixes & STVM_OSVM764_FIX_IDLE_FLAG));
    stvm__heartbeat_set_idle(vm, flag);
    if (!sim) {
        os_sleep(vm, us, false);
    } else {
        uint64_t now = vm->clock.sim_now_us, outside = stvm__sim_next(vm);
        bool io = stvm__aio_any_armed(vm);
        if (io && stvm__aio_wait(vm, 0)) {
            /* a descriptor was ready: no sleep */
        } else if (!pending && !outside) {
            os_sleep(vm, UINT64_MAX, false);   /* only a descriptor or a signal can help */
        } else if (outside && outside < now + us) {
            jump(vm, us, outside - now, STVM_TRACE_END_OUTSIDE);
        } else {
            /* "timer" when it reaches the deadline, not after it (then it only ran out) */
            jump(vm, us, us, next > now && now + us >= next ? STVM_TRACE_END_TIMER
                                                           : STVM_TRACE_END_TIMEOUT);
        }
    }
    stvm__heartbeat_set_idle(vm, false);
    if (vm->cfg.osvm764_fixes & STVM_OSVM764_FIX_CLOCK)
        stvm__heartbeat_set_clock(vm, stvm__clock_now_us(vm));
}

void stvm__relinquish(stvm_vm *vm, uint64_t us)
{
    if (vm->heartbeat) {   /* the idle mode STVM_IDLE_OSVM764: the requested time is ignored */
        osvm764_relinquish(vm);
        return;
    }
    if (vm->clock.kind == STVM_CLOCK_SIMULATED) {
        relinquish_simulated(vm, us);
        return;
    }
    uint64_t deadline = stvm__timer_deadline(vm);
    if (deadline) {
        uint64_t now = stvm__clock_now_us(vm);
        uint64_t left = deadline > now ? deadline - now : 0;
        if (left < us)
            us = left;
    }
    if (us == 0 || vm->cfg.idle_mode == STVM_IDLE_SPIN) {
        stvm__aio_wait(vm, 0);
        return;
    }
    if (vm->cfg.idle_mode == STVM_IDLE_LEGACY && us < LEGACY_SLEEP_LIMIT_US) {
        if (stvm__aio_wait(vm, 0))
            return;
        os_sleep(vm, us, true);
        stvm__aio_wait(vm, 0);
        return;
    }
    /* A descriptor often is ready already (a peer on this machine answered while the
     * VM ran): one look finds it without the bookkeeping of a sleep. */
    if (stvm__aio_any_armed(vm) && stvm__aio_wait(vm, 0))
        return;
    os_sleep(vm, us, false);
}
