/*
 * The numbered primitive table, with Pharo's numbers, names and failure codes.
 *
 * A primitive validates every oop it is given before touching anything: the receiver
 * and arguments may be any machine word, and a wrong kind of object or a value out of
 * range fails with Pharo's code and leaves the VM exactly as it was.
 */
#include <stddef.h>

#include "../scheduler/sched.h"
#include "../vm/integer.h"
#include "../vm/objmem.h"
#include "prim_table.h"
#include "prims.h"

static stvm_oop boolean(bool b) { return b ? STVM_TRUE : STVM_FALSE; }

/* The one receiver and argument check by class: the object `oop` names if it is a live
 * object of this VM whose class is class_index, else NULL. Safe for any machine word:
 * stvm__objmem_is_object answers only for live objects of this VM and reads no
 * address it does not own; after it, the class is all there is to check. */
static void *object_of(stvm_vm *vm, stvm_oop oop, uint32_t class_index)
{
    if (!stvm__objmem_is_object(vm, oop))
        return NULL;
    return ((const stvm_object *)oop)->class_index == class_index ? (void *)oop : NULL;
}

/* The running state of a Process oop; NULL for anything else or a finished process
 * (Pharo fails such a receiver: its suspendedContext is nil). */
static stvm_proc *running_state(stvm_vm *vm, stvm_oop o)
{
    stvm_process *h = object_of(vm, o, STVM_CLASS_PROCESS);
    return h ? h->core : NULL;
}

/* ---- SmallInteger primitives 1-9: both operands immediate, result must fit ---- */

static int si_operands(stvm_oop r, const stvm_oop *a)
{
    if (!stvm__is_si(r))
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!stvm__is_si(a[0]))
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    return PRIM_OK;
}

/* The exact result in 128 bits (operands are at most 63-bit, so even a product fits);
 * outside the VM's SmallInteger range it fails and the image falls back to
 * LargeInteger code. */
#define SMALLINT_ARITH(fn, op)                                                           \
    int stvm__primitive_##fn(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)  \
    {                                                                                    \
        int e = si_operands(r, a);                                                       \
        if (e)                                                                           \
            return e;                                                                    \
        __int128 v = (__int128)stvm__si_value(r) op stvm__si_value(a[0]);                \
        if (v < INT64_MIN || v > INT64_MAX || !stvm__si_fits(vm, (int64_t)v))            \
            return STVM_PRIM_ERR_GENERIC;                                                \
        *res = stvm__si_make((int64_t)v);                                                \
        return PRIM_OK;                                                                  \
    }

#define SMALLINT_COMPARE(fn, op)                                                         \
    int stvm__primitive_##fn(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)  \
    {                                                                                    \
        (void)vm;                                                                        \
        int e = si_operands(r, a);                                                       \
        if (e)                                                                           \
            return e;                                                                    \
        *res = boolean(stvm__si_value(r) op stvm__si_value(a[0]));                       \
        return PRIM_OK;                                                                  \
    }

SMALLINT_ARITH(add, +)
SMALLINT_ARITH(subtract, -)
SMALLINT_ARITH(multiply, *)
SMALLINT_COMPARE(less_than, <)
SMALLINT_COMPARE(greater_than, >)
SMALLINT_COMPARE(less_or_equal, <=)
SMALLINT_COMPARE(greater_or_equal, >=)
SMALLINT_COMPARE(equal, ==)
SMALLINT_COMPARE(not_equal, !=)

/* ---- LargeInteger primitives 21-29: any integers up to 64-bit magnitude ---- */

static int li_operands(stvm_vm *vm, stvm_oop r, const stvm_oop *a)
{
    if (!stvm__is_int(vm, r))
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!stvm__is_int(vm, a[0]))
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    return PRIM_OK;
}

/* int_op is the vm/integer.h function (immediate fast path, boxes otherwise). */
#define LARGEINT_ARITH(fn, int_op)                                                       \
    int stvm__primitive_##fn(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)  \
    {                                                                                    \
        int e = li_operands(vm, r, a);                                                   \
        if (e)                                                                           \
            return e;                                                                    \
        int err = int_op(vm, r, a[0], res);                                              \
        return err == STVM_OK       ? PRIM_OK                                            \
               : err == STVM_ENOMEM ? STVM_PRIM_ERR_NO_MEMORY                            \
                                    : STVM_PRIM_ERR_GENERIC; /* beyond 64 bits */        \
    }

/* op compares stvm__int_cmp's -1, 0 or 1 with 0. */
#define LARGEINT_COMPARE(fn, op)                                                         \
    int stvm__primitive_##fn(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)  \
    {                                                                                    \
        int e = li_operands(vm, r, a);                                                   \
        if (e)                                                                           \
            return e;                                                                    \
        *res = boolean(stvm__int_cmp(vm, r, a[0]) op 0);                                 \
        return PRIM_OK;                                                                  \
    }

LARGEINT_ARITH(add_large_integers, stvm__int_add)
LARGEINT_ARITH(subtract_large_integers, stvm__int_sub)
LARGEINT_ARITH(multiply_large_integers, stvm__int_mul)
LARGEINT_COMPARE(less_than_large_integers, <)
LARGEINT_COMPARE(greater_than_large_integers, >)
LARGEINT_COMPARE(less_or_equal_large_integers, <=)
LARGEINT_COMPARE(greater_or_equal_large_integers, >=)
LARGEINT_COMPARE(equal_large_integers, ==)
LARGEINT_COMPARE(not_equal_large_integers, !=)

/* ---- process primitives ---- */

int stvm__primitive_signal(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_semaphore *s = object_of(vm, r, STVM_CLASS_SEMAPHORE);
    if (!s)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    *res = r;
    stvm__sem_signal(vm, s);
    return PRIM_OK;
}

int stvm__primitive_wait(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_semaphore *s = object_of(vm, r, STVM_CLASS_SEMAPHORE);
    if (!s)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    *res = r;
    stvm__sem_wait(vm, s);
    return PRIM_OK;
}

int stvm__primitive_resume(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_proc *p = running_state(vm, r);
    if (!p)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    *res = r;
    return stvm__process_resume(vm, p) ? STVM_PRIM_ERR_BAD_RECEIVER : PRIM_OK;
}

int stvm__primitive_suspend(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_proc *p = running_state(vm, r);
    if (!p || (p->flags & STVM_PF_VM_OWN))
        return STVM_PRIM_ERR_BAD_RECEIVER;
    /* Answer the list it was on (Pharo answers the old myList); run queues are not
     * objects here, so a ready process answers nil. */
    stvm_oop old = STVM_NIL;
    if (p->my_list && p->my_list->kind == STVM_LIST_SEMAPHORE)
        old = (stvm_oop)((char *)p->my_list - offsetof(stvm_semaphore, list));
    else if (p->my_list && p->my_list->kind == STVM_LIST_MUTEX)
        old = (stvm_oop)((char *)p->my_list - offsetof(stvm_mutex, list));
    if (p != vm->active && !p->my_list)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    *res = old;
    return stvm__process_suspend(vm, p) ? STVM_PRIM_ERR_BAD_RECEIVER : PRIM_OK;
}

int stvm__primitive_yield(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    *res = r;
    stvm__yield(vm);
    return PRIM_OK;
}

int stvm__primitive_exit_critical_section(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                          stvm_oop *res)
{
    (void)a;
    stvm_mutex *m = object_of(vm, r, STVM_CLASS_MUTEX);
    if (!m)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (m->owner != vm->active)   /* only the owner may exit */
        return STVM_PRIM_ERR_INAPPROPRIATE;
    *res = r;
    stvm__mutex_exit_prim(vm, m);
    return PRIM_OK;
}

int stvm__primitive_enter_critical_section(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                           stvm_oop *res)
{
    (void)a;
    stvm_mutex *m = object_of(vm, r, STVM_CLASS_MUTEX);
    if (!m)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    int got = stvm__mutex_enter_prim(vm, m);
    /* false: acquired; true: already the owner; nil: the wait was cut short by a
     * suspend, so the caller does not own it (Pharo would answer false here). */
    *res = got == 1 ? STVM_TRUE : got == 0 ? STVM_FALSE : STVM_NIL;
    return PRIM_OK;
}

int stvm__primitive_test_and_set_ownership_of_critical_section(stvm_vm *vm, stvm_oop r,
                                                               const stvm_oop *a,
                                                               stvm_oop *res)
{
    (void)a;
    stvm_mutex *m = object_of(vm, r, STVM_CLASS_MUTEX);
    if (!m)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!m->owner) {
        stvm_mutex_try_enter(vm, m);
        *res = STVM_FALSE;
    } else {
        *res = m->owner == vm->active ? STVM_TRUE : STVM_NIL;
    }
    return PRIM_OK;
}

/* ---- clocks and the timer ---- */

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
    *out = o == STVM_NIL ? NULL : object_of(vm, o, STVM_CLASS_SEMAPHORE);
    return o == STVM_NIL || *out ? PRIM_OK : STVM_PRIM_ERR_BAD_ARGUMENT;
}

int stvm__prim_signal_at_ms(stvm_vm *vm, stvm_semaphore *s, stvm_oop tick)
{
    if (!stvm__is_si(tick) || stvm__si_value(tick) < 0)
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
    stvm__timer_arm(vm, s, deadline);
    return PRIM_OK;
}

int stvm__prim_signal_at_us(stvm_vm *vm, stvm_semaphore *s, stvm_oop usecs)
{
    if (!stvm__is_si(usecs) && !stvm__is_boxed(usecs))
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    __int128 v = stvm__int_value(usecs);
    if (v < 0 || v > (__int128)UINT64_MAX)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    if (stvm__is_boxed(usecs))
        vm->stats.large_int_ops++;   /* positive64BitValueOf: walks the digits */
    stvm__timer_arm(vm, s, (uint64_t)v);   /* 0 means no deadline, as in Pharo */
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
    if (!e && !stvm__is_int(vm, a[1]))
        e = STVM_PRIM_ERR_BAD_ARGUMENT;
    if (!e)
        e = stvm__prim_signal_at_us(vm, s, a[1]);
    if (!e)
        *res = r;
    return e;
}

int stvm__primitive_relinquish_processor(stvm_vm *vm, stvm_oop r, const stvm_oop *a,
                                         stvm_oop *res)
{
    if (!stvm__is_si(a[0]) || stvm__si_value(a[0]) < 0)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    *res = r;
    stvm__relinquish(vm, (uint64_t)stvm__si_value(a[0]));
    return PRIM_OK;
}

stvm_oop stvm_semaphore_oop(stvm_semaphore *sem) { return (stvm_oop)sem; }
stvm_oop stvm_mutex_oop(stvm_mutex *m) { return (stvm_oop)m; }
stvm_oop stvm_process_oop(stvm_process *p) { return (stvm_oop)p; }

const char *stvm_oop_class_name(stvm_vm *vm, stvm_oop oop)
{
    if (!vm)
        return NULL;
    if (oop == STVM_NIL)
        return "UndefinedObject";
    if (oop == STVM_TRUE)
        return "True";
    if (oop == STVM_FALSE)
        return "False";
    if (stvm__is_si(oop))
        return "SmallInteger";
    if (!stvm__objmem_is_object(vm, oop))
        return NULL;
    switch (((const stvm_object *)oop)->class_index) {
    case STVM_CLASS_LARGE_POSITIVE_INTEGER: return "LargePositiveInteger";
    case STVM_CLASS_LARGE_NEGATIVE_INTEGER: return "LargeNegativeInteger";
    case STVM_CLASS_SEMAPHORE: return "Semaphore";
    case STVM_CLASS_MUTEX: return "Mutex";
    case STVM_CLASS_PROCESS: return "Process";
    default: return NULL;
    }
}
