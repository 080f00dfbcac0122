/*
 * The clocks and the timer: the millisecond clock (135) and its timer (136), the UTC
 * microsecond clock (240) and its timer (242). prims.h exports the same primitives as
 * C calls, without the table's argument checks, for the Delay scheduler.
 */
#include "../scheduler/sched.h"
#include "../scheduler/timer.h"
#include "../vm/integer.h"
#include "prim_table.h"
#include "prims.h"

stvm_oop stvm__prim_ms_clock(stvm_vm *vm)
{
    vm->stats.clock_reads++;
    return stvm__si_make(stvm__clock_ms_at(vm, stvm__clock_now_us(vm)));
}

int stvm__prim_us_clock(stvm_vm *vm, stvm_oop *out)
{
    vm->stats.clock_reads++;
    return stvm__int_from_i128(vm, stvm__clock_now_us(vm), out);
}

int stvm__primitive_millisecond_clock(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                      stvm_oop *res)
{
    (void)r;
    (void)a;
    *res = stvm__prim_ms_clock(vm);
    return PRIM_OK;
}

int stvm__primitive_utc_microsecond_clock(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                          stvm_oop *res)
{
    (void)r;
    (void)a;
    return stvm__prim_us_clock(vm, res) ? STVM_PRIM_ERR_NO_MEMORY : PRIM_OK;
}

/* The timer's semaphore argument: a Semaphore or nil. */
static int timer_semaphore(stvm_vm *vm, stvm_oop o, stvm_semaphore **out)
{
    *out = o == STVM_NIL ? NULL : stvm__prim_object_of(vm, o, STVM_CLASS_SEMAPHORE);
    return o == STVM_NIL || *out ? PRIM_OK : STVM_PRIM_ERR_BAD_ARGUMENT;
}

int stvm__prim_signal_at_ms(stvm_vm *vm, stvm_semaphore *s, stvm_oop tick)
{
    if (!stvm__is_si_of(vm, tick) || stvm__si_value(tick) < 0)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    if (!s) {
        stvm__timer_arm(vm, NULL, 0);
        return PRIM_OK;
    }
    /* The newer VM's rule: the distance to the tick is taken modulo the clock range;
     * more than half the range ahead means the tick is in the past: fire at once. */
    uint64_t now = stvm__clock_now_us(vm);
    uint32_t ms_now = stvm__clock_ms_at(vm, now);
    uint32_t d = ((uint32_t)stvm__si_value(tick) - ms_now) & STVM_MS_CLOCK_MASK;
    uint64_t deadline = d > STVM_MS_CLOCK_MASK / 2
                            ? now
                            : stvm__clock_tick_start_us(vm, now) + (uint64_t)d * 1000;
    stvm__timer_arm(vm, deadline <= STVM_CLOCK_MAX_US ? s : NULL, deadline);
    return PRIM_OK;
}

/* A deadline past the clock's end disarms: only the Delay scheduler's "now + 1 s" near
 * the end can ask for one (no Delay can end there), and the timer must not fire at the
 * end over and over; primitive 242 refuses such deadlines (below). */
int stvm__prim_signal_at_us(stvm_vm *vm, stvm_semaphore *s, stvm_oop usecs)
{
    if (!stvm__is_si(usecs) && !stvm__is_boxed(usecs))
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    __int128 v = stvm__int_value(usecs);
    if (v < 0)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    if (stvm__is_boxed(usecs))
        vm->stats.large_int_ops++;   /* positive64BitValueOf: walks the digits */
    /* 0 means no deadline, as in Pharo. */
    stvm__timer_arm(vm, v <= (__int128)STVM_CLOCK_MAX_US ? s : NULL, (uint64_t)v);
    return PRIM_OK;
}

int stvm__primitive_signal_at_milliseconds(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                           stvm_oop *res)
{
    stvm_semaphore *s;
    int e = timer_semaphore(vm, a[0], &s);
    if (!e)
        e = stvm__prim_signal_at_ms(vm, s, a[1]);
    if (!e)
        *res = r;
    return e;
}

int stvm__primitive_signal_at_utc_microseconds(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                               stvm_oop *res)
{
    stvm_semaphore *s;
    int e = timer_semaphore(vm, a[0], &s);
    if (!e && (!stvm__is_int(vm, a[1]) || stvm__int_value(a[1]) > (__int128)STVM_CLOCK_MAX_US))
        e = STVM_PRIM_ERR_BAD_ARGUMENT;   /* past the VM clock's end (vm/clock.h) */
    if (!e)
        e = stvm__prim_signal_at_us(vm, s, a[1]);
    if (!e)
        *res = r;
    return e;
}
