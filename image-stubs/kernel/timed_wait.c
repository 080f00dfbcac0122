/*
 * What user processes call to wait on time: Delay>>wait, and every wait with a time
 * limit, built as Pharo's DelayWaitTimeout is: a Delay handed to the timing process
 * bounds an ordinary wait, and its expiry ends the wait with "timed out" if the
 * process still waits then. So a timed wait costs what it costs in Pharo: a schedule
 * request, a timing-process activation and an unschedule.
 */
#include "../../vm/config.h"
#include "delay.h"
#include "../../scheduler/monitor.h"
#include "../../scheduler/shared_queue.h"

/* Longest durations: half the millisecond clock's range (longer is ambiguous after a
 * wrap), and for microseconds 2^52 (142 years), far from any 64-bit overflow. */
#define MAX_MS ((int64_t)(STVM_MS_CLOCK_MASK / 2))
#define MAX_US ((int64_t)1 << 52)

static inline int check_length(stvm_vm *vm, int64_t duration, bool from_ms)
{
    if (duration < 0)
        return STVM_EINVAL;
    if (from_ms ? duration > MAX_US / 1000 : duration > MAX_US)
        return STVM_ERANGE;
    int64_t ms = from_ms ? duration : (duration + 999) / 1000;
    if (vm->cfg.delay_clock == STVM_DELAY_CLOCK_MS && ms > MAX_MS)
        return STVM_ERANGE;
    return STVM_OK;
}

int stvm__check_duration(stvm_vm *vm, int64_t duration, bool from_ms)
{
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    int err = check_length(vm, duration, from_ms);
    if (err)
        return err;
    int64_t ms = from_ms ? duration : (duration + 999) / 1000;
    bool ms_scheduler = vm->cfg.delay_clock == STVM_DELAY_CLOCK_MS;
    /* It must end before the clock does: exactly for the microsecond scheduler; the
     * millisecond one counts whole ticks from the start of the current one, up to 1 ms
     * more. */
    uint64_t us = ms_scheduler ? (uint64_t)ms * 1000 + 1000
                               : (uint64_t)(from_ms ? duration * 1000 : duration);
    if (stvm__clock_now_us(vm) + us > STVM_CLOCK_MAX_US)
        return STVM_ERANGE;
    return STVM_OK;
}

/* The VM's Delay scheduler, started if need be (ENOMEM). */
static int scheduler_started(stvm_vm *vm)
{
    delay_sched *ds;
    return stvm__delay_scheduler(vm, &ds);
}

static int delay_wait(stvm_vm *vm, int64_t duration, bool from_ms)
{
    int err = !vm ? STVM_EINVAL : stvm__check_duration(vm, duration, from_ms);
    if (err || (err = scheduler_started(vm)))
        return err;
    /* Nothing but vm, &d and err lives across the waits, in registers: the scheduler is
     * read from vm again (a hot line) rather than kept in this frame, whose lines are
     * cold by the time the wait ends (with 100,000 sleepers, a cache miss per Delay). */
    DELAY_ALIGN delay d = {.duration = duration, .from_ms = from_ms};
    stvm__sem_init(vm, &d.own_sem);
    if ((err = stvm__delay_request(vm, vm->delay.state, &d)))
        return err;
    vm->active->wait_label = STVM_WL_DELAY;
    err = stvm__sem_wait(vm, &d.own_sem);
    return stvm__delay_done(vm, vm->delay.state, &d, err);
}

int stvm_delay_wait_ms(stvm_vm *vm, int64_t ms)
{
    return delay_wait(vm, ms, true);
}

int stvm_delay_wait_us(stvm_vm *vm, int64_t us)
{
    return delay_wait(vm, us, false);
}

/* ---- DelayWaitTimeout ---------------------------------------------------------- */

int stvm__timed_wait(stvm_vm *vm, stvm_list *l, stvm_wait_fn wait, void *object,
                     int64_t duration, bool from_ms)
{
    /* Committed first: starting the Delay scheduler and handing it the Delay both let
     * other processes run before this one waits. */
    stvm__wait_commit(vm, l);
    delay_sched *ds;
    int err = stvm__delay_scheduler(vm, &ds);
    if (err) {
        stvm__wait_uncommit(vm->active);
        return err;
    }
    DELAY_ALIGN delay d = {.duration = duration, .from_ms = from_ms, .timed_list = l};
    if ((err = stvm__delay_request(vm, ds, &d))) {
        stvm__wait_uncommit(vm->active);
        return err;
    }
    vm->stats.timed_waits++;
    if (d.state == D_EXPIRED) {      /* expired before we could wait (0 ms, or held up) */
        err = STVM_ETIMEDOUT;
    } else {
        vm->active->wait_label = STVM_WL_TIMED;
        err = wait(vm, object);
    }
    stvm__delay_done(vm, ds, &d, err);
    stvm__wait_uncommit(vm->active);
    return err;
}

static int sem_wait(stvm_vm *vm, void *sem)
{
    return stvm__sem_wait(vm, sem);
}

static int sem_wait_timeout(stvm_vm *vm, stvm_semaphore *sem, int64_t duration, bool from_ms)
{
    if (!vm || !stvm__is_sem(vm, sem))
        return STVM_EINVAL;
    int err = stvm__check_duration(vm, duration, from_ms);
    if (err)
        return err;
    if (stvm__sem_try(vm, sem))   /* the wait would not block: no Delay needed */
        return STVM_OK;
    return stvm__timed_wait(vm, &sem->list, sem_wait, sem, duration, from_ms);
}

int stvm_semaphore_wait_timeout_ms(stvm_vm *vm, stvm_semaphore *sem, int64_t ms)
{
    return sem_wait_timeout(vm, sem, ms, true);
}

int stvm_semaphore_wait_timeout_us(stvm_vm *vm, stvm_semaphore *sem, int64_t us)
{
    return sem_wait_timeout(vm, sem, us, false);
}

static int mutex_enter(stvm_vm *vm, void *m)
{
    return stvm__mutex_enter(vm, m);
}

/* A mutex's, or a monitor's entry (checked by the caller). */
static int enter_timeout(stvm_vm *vm, stvm_mutex *m, int64_t ms)
{
    int err = stvm__check_duration(vm, ms, true);
    if (err)
        return err;
    int got = stvm__mutex_try(vm, m);
    if (got != 0)
        return got == 1 ? STVM_OK : got;
    if (ms == 0)
        return STVM_ETIMEDOUT;
    return stvm__timed_wait(vm, &m->list, mutex_enter, m, ms, true);
}

int stvm_mutex_enter_timeout_ms(stvm_vm *vm, stvm_mutex *m, int64_t ms)
{
    if (!vm || !stvm__is_mutex(vm, m))
        return STVM_EINVAL;
    return enter_timeout(vm, m, ms);
}

/* ---- shared queues -------------------------------------------------------------- */

int stvm_queue_take_timeout_ms(stvm_vm *vm, stvm_queue *q, int64_t ms, void **item)
{
    int err = stvm__queue_check(vm, q);
    if (err || (err = !item ? STVM_EINVAL : stvm__check_duration(vm, ms, true)))
        return err;
    bool handed = false;
    if (!stvm__queue_take_try(vm, q)) {
        if (stvm__queue_dry(q))
            return STVM_EEOF;   /* the end of the queue: every take answers it */
        if (ms == 0)
            return STVM_ETIMEDOUT;
        err = stvm__timed_wait(vm, &q->avail.list, stvm__queue_take_wait, q, ms, true);
        if (err < 0)
            return err == STVM_ECLOSED ? STVM_EEOF : err;
        handed = err == STVM_OK;
    }
    *item = stvm__queue_take_reserved(q, handed);
    return STVM_OK;
}

int stvm_queue_put_timeout_ms(stvm_vm *vm, stvm_queue *q, void *item, int64_t ms)
{
    int err = stvm__queue_check(vm, q);
    if (err || (err = stvm__check_duration(vm, ms, true)))
        return err;
    if (stvm__queue_closed(q))
        return STVM_ECLOSED;
    if (!stvm__queue_slot_try(vm, q)) {
        if (ms == 0)
            return STVM_ETIMEDOUT;
        err = stvm__timed_wait(vm, &q->room.list, stvm__queue_put_wait, q, ms, true);
        if (err < 0)
            return err;
    }
    return stvm__queue_put_held(vm, q, item);
}

/* ---- monitors --------------------------------------------------------------------- */

int stvm_monitor_enter_timeout_ms(stvm_vm *vm, stvm_monitor *m, int64_t ms)
{
    if (!vm || !stvm__is_monitor(vm, m))
        return STVM_EINVAL;
    return enter_timeout(vm, &m->lock, ms);   /* its entry is a mutex */
}

/* Pharo's waitFor:maxMilliseconds:: the Delay is handed over while the caller still owns
 * the monitor, and the monitor is released only as the caller joins the queue (Pharo
 * adds the waiter's semaphore to the queue before it exits, to the same end: no signal
 * is lost in between). Whatever ended the wait, the monitor is taken again. */
int stvm_monitor_wait_on_timeout_ms(stvm_vm *vm, stvm_monitor *m, int queue, int64_t ms)
{
    /* The arguments first (a bad duration is EINVAL or ERANGE whoever calls), then the
     * state (EPERM). */
    if (!vm || !stvm__is_monitor(vm, m) || !stvm__monitor_queue_ok(queue))
        return STVM_EINVAL;
    int err = stvm__check_duration(vm, ms, true);
    if (err || (err = stvm__monitor_check_wait(vm, m, queue)))
        return err;
    if (ms == 0)
        return STVM_ETIMEDOUT;
    uint32_t depth = m->lock.depth;
    err = stvm__timed_wait(vm, &m->queues[queue].list, stvm__monitor_queue_wait,
                           &m->queues[queue], ms, true);
    stvm__monitor_retake(vm, m, depth);
    return err;
}

int stvm_monitor_wait_timeout_ms(stvm_vm *vm, stvm_monitor *m, int64_t ms)
{
    return stvm_monitor_wait_on_timeout_ms(vm, m, 0, ms);
}

/* ---- joining a process ------------------------------------------------------------ */

static int join_wait(stvm_vm *vm, void *handle)
{
    stvm_process *h = handle;
    return h->core ? stvm__wait(vm, &h->joiners) : STVM_OK;
}

static int join_checked(stvm_vm *vm, stvm_process *h, int64_t timeout_ms)
{
    if (!h->core)
        return STVM_OK;
    if (timeout_ms == 0)
        return STVM_ETIMEDOUT;
    if (timeout_ms > 0)
        return stvm__timed_wait(vm, &h->joiners, join_wait, h, timeout_ms, true);
    stvm__wait_commit(vm, &h->joiners);   /* we touch the handle after the wake-up */
    int err = join_wait(vm, h);
    stvm__wait_uncommit(vm->active);
    return err;
}

int stvm_process_join(stvm_vm *vm, stvm_process *h, int64_t timeout_ms)
{
    if (!vm || !stvm__is_proc(vm, h) || timeout_ms < -1)
        return STVM_EINVAL;
    if (!stvm__in_process(vm))
        return STVM_ENOTPROC;
    if (h->core == vm->active)
        return STVM_EINVAL;
    if (!(h->flags & STVM_PF_HELD) || (h->flags & STVM_PF_VM_OWN))
        return STVM_ESTATE;
    int err = timeout_ms > 0 ? stvm__check_duration(vm, timeout_ms, true) : STVM_OK;
    if (!err)
        err = join_checked(vm, h, timeout_ms);
    if (!err)
        h->flags &= ~(uint32_t)STVM_PF_HELD;
    stvm__handle_release_if_unused(vm, h);
    return err;
}
