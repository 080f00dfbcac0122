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
#include "prims.h"

typedef int (*prim_fn)(stvm_vm *vm, stvm_oop rcvr, const stvm_oop *args, stvm_oop *result);

typedef struct prim_row {
    int number;
    const char *name;
    int nargs;
    prim_fn fn;
} prim_row;

enum { OK = 0 };

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
    return OK;
}

/* The exact result in 128 bits (operands are at most 63-bit, so even a product fits);
 * outside the VM's SmallInteger range it fails and the image falls back to
 * LargeInteger code. */
#define SMALLINT_ARITH(fname, op)                                                        \
    static int fname(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)          \
    {                                                                                    \
        int e = si_operands(r, a);                                                       \
        if (e)                                                                           \
            return e;                                                                    \
        __int128 v = (__int128)stvm__si_value(r) op stvm__si_value(a[0]);                \
        if (v < INT64_MIN || v > INT64_MAX || !stvm__si_fits(vm, (int64_t)v))            \
            return STVM_PRIM_ERR_GENERIC;                                                \
        *res = stvm__si_make((int64_t)v);                                                \
        return OK;                                                                       \
    }

#define SMALLINT_COMPARE(fname, op)                                                      \
    static int fname(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)          \
    {                                                                                    \
        (void)vm;                                                                        \
        int e = si_operands(r, a);                                                       \
        if (e)                                                                           \
            return e;                                                                    \
        *res = boolean(stvm__si_value(r) op stvm__si_value(a[0]));                       \
        return OK;                                                                       \
    }

SMALLINT_ARITH(p_add, +)
SMALLINT_ARITH(p_sub, -)
SMALLINT_ARITH(p_mul, *)
SMALLINT_COMPARE(p_lt, <)
SMALLINT_COMPARE(p_gt, >)
SMALLINT_COMPARE(p_le, <=)
SMALLINT_COMPARE(p_ge, >=)
SMALLINT_COMPARE(p_eq, ==)
SMALLINT_COMPARE(p_ne, !=)

/* ---- LargeInteger primitives 21-29: any integers up to 64-bit magnitude ---- */

static int li_operands(stvm_vm *vm, stvm_oop r, const stvm_oop *a)
{
    if (!stvm__is_int(vm, r))
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!stvm__is_int(vm, a[0]))
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    return OK;
}

/* int_op is the vm/integer.h function (immediate fast path, boxes otherwise). */
#define LARGEINT_ARITH(fname, int_op)                                                    \
    static int fname(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)          \
    {                                                                                    \
        int e = li_operands(vm, r, a);                                                   \
        if (e)                                                                           \
            return e;                                                                    \
        int err = int_op(vm, r, a[0], res);                                              \
        return err == STVM_OK       ? OK                                                 \
               : err == STVM_ENOMEM ? STVM_PRIM_ERR_NO_MEMORY                            \
                                    : STVM_PRIM_ERR_GENERIC; /* beyond 64 bits */        \
    }

/* op compares stvm__int_cmp's -1, 0 or 1 with 0. */
#define LARGEINT_COMPARE(fname, op)                                                      \
    static int fname(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)          \
    {                                                                                    \
        int e = li_operands(vm, r, a);                                                   \
        if (e)                                                                           \
            return e;                                                                    \
        *res = boolean(stvm__int_cmp(vm, r, a[0]) op 0);                                 \
        return OK;                                                                       \
    }

LARGEINT_ARITH(p_ladd, stvm__int_add)
LARGEINT_ARITH(p_lsub, stvm__int_sub)
LARGEINT_ARITH(p_lmul, stvm__int_mul)
LARGEINT_COMPARE(p_llt, <)
LARGEINT_COMPARE(p_lgt, >)
LARGEINT_COMPARE(p_lle, <=)
LARGEINT_COMPARE(p_lge, >=)
LARGEINT_COMPARE(p_leq, ==)
LARGEINT_COMPARE(p_lne, !=)

/* ---- process primitives ---- */

static int p_signal(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_semaphore *s = object_of(vm, r, STVM_CLASS_SEMAPHORE);
    if (!s)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    *res = r;
    stvm__sem_signal(vm, s);
    return OK;
}

static int p_wait(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_semaphore *s = object_of(vm, r, STVM_CLASS_SEMAPHORE);
    if (!s)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!vm->active)
        return STVM_PRIM_ERR_INAPPROPRIATE;
    *res = r;
    stvm__sem_wait(vm, s);
    return OK;
}

static int p_resume(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_proc *p = running_state(vm, r);
    if (!p)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    *res = r;
    return stvm__process_resume(vm, p) ? STVM_PRIM_ERR_BAD_RECEIVER : OK;
}

static int p_suspend(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
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
    return stvm__process_suspend(vm, p) ? STVM_PRIM_ERR_BAD_RECEIVER : OK;
}

static int p_yield(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    if (!vm->active)
        return STVM_PRIM_ERR_INAPPROPRIATE;
    *res = r;
    stvm__yield(vm);
    return OK;
}

static int p_exit_critical(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_mutex *m = object_of(vm, r, STVM_CLASS_MUTEX);
    if (!m)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!vm->active || m->owner != vm->active)
        return STVM_PRIM_ERR_INAPPROPRIATE;
    *res = r;
    stvm__mutex_exit_prim(vm, m);
    return OK;
}

static int p_enter_critical(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_mutex *m = object_of(vm, r, STVM_CLASS_MUTEX);
    if (!m)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!vm->active)
        return STVM_PRIM_ERR_INAPPROPRIATE;
    int got = stvm__mutex_enter_prim(vm, m);
    /* false: acquired; true: already the owner; nil: the wait was cut short by a
     * suspend, so the caller does not own it (Pharo would answer false here). */
    *res = got == 1 ? STVM_TRUE : got == 0 ? STVM_FALSE : STVM_NIL;
    return OK;
}

static int p_test_and_set(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)a;
    stvm_mutex *m = object_of(vm, r, STVM_CLASS_MUTEX);
    if (!m)
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!vm->active)
        return STVM_PRIM_ERR_INAPPROPRIATE;
    if (!m->owner) {
        stvm_mutex_try_enter(vm, m);
        *res = STVM_FALSE;
    } else {
        *res = m->owner == vm->active ? STVM_TRUE : STVM_NIL;
    }
    return OK;
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

static int p_ms_clock(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)r;
    (void)a;
    *res = stvm__prim_ms_clock(vm);
    return OK;
}

static int p_us_clock(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    (void)r;
    (void)a;
    return stvm__prim_us_clock(vm, res) ? STVM_PRIM_ERR_NO_MEMORY : OK;
}

/* The timer's semaphore argument: a Semaphore or nil. */
static int timer_semaphore(stvm_vm *vm, stvm_oop o, stvm_semaphore **out)
{
    *out = o == STVM_NIL ? NULL : object_of(vm, o, STVM_CLASS_SEMAPHORE);
    return o == STVM_NIL || *out ? OK : STVM_PRIM_ERR_BAD_ARGUMENT;
}

int stvm__prim_signal_at_ms(stvm_vm *vm, stvm_semaphore *s, stvm_oop tick)
{
    if (!stvm__is_si(tick) || stvm__si_value(tick) < 0)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    if (!s) {
        stvm__timer_arm(vm, NULL, 0);
        return OK;
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
    return OK;
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
    return OK;
}

static int p_signal_at_ms(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    stvm_semaphore *s;
    int e = timer_semaphore(vm, a[0], &s);
    if (!e)
        e = stvm__prim_signal_at_ms(vm, s, a[1]);
    if (!e)
        *res = r;
    return e;
}

static int p_signal_at_us(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
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

static int p_relinquish(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)
{
    if (!stvm__is_si(a[0]) || stvm__si_value(a[0]) < 0)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    *res = r;
    stvm__relinquish(vm, (uint64_t)stvm__si_value(a[0]));
    return OK;
}

static const prim_row table[] = {
    {1, "primitiveAdd", 1, p_add},
    {2, "primitiveSubtract", 1, p_sub},
    {3, "primitiveLessThan", 1, p_lt},
    {4, "primitiveGreaterThan", 1, p_gt},
    {5, "primitiveLessOrEqual", 1, p_le},
    {6, "primitiveGreaterOrEqual", 1, p_ge},
    {7, "primitiveEqual", 1, p_eq},
    {8, "primitiveNotEqual", 1, p_ne},
    {9, "primitiveMultiply", 1, p_mul},
    {21, "primitiveAddLargeIntegers", 1, p_ladd},
    {22, "primitiveSubtractLargeIntegers", 1, p_lsub},
    {23, "primitiveLessThanLargeIntegers", 1, p_llt},
    {24, "primitiveGreaterThanLargeIntegers", 1, p_lgt},
    {25, "primitiveLessOrEqualLargeIntegers", 1, p_lle},
    {26, "primitiveGreaterOrEqualLargeIntegers", 1, p_lge},
    {27, "primitiveEqualLargeIntegers", 1, p_leq},
    {28, "primitiveNotEqualLargeIntegers", 1, p_lne},
    {29, "primitiveMultiplyLargeIntegers", 1, p_lmul},
    {85, "primitiveSignal", 0, p_signal},
    {86, "primitiveWait", 0, p_wait},
    {87, "primitiveResume", 0, p_resume},
    {88, "primitiveSuspend", 0, p_suspend},
    {135, "primitiveMillisecondClock", 0, p_ms_clock},
    {136, "primitiveSignalAtMilliseconds", 2, p_signal_at_ms},
    {167, "primitiveYield", 0, p_yield},
    {185, "primitiveExitCriticalSection", 0, p_exit_critical},
    {186, "primitiveEnterCriticalSection", 0, p_enter_critical},
    {187, "primitiveTestAndSetOwnershipOfCriticalSection", 0, p_test_and_set},
    {230, "primitiveRelinquishProcessor", 1, p_relinquish},
    {240, "primitiveUTCMicrosecondClock", 0, p_us_clock},
    {242, "primitiveSignalAtUTCMicroseconds", 2, p_signal_at_us},
};

#define NPRIMS ((int)(sizeof table / sizeof table[0]))

static const prim_row *find(int number)
{
    /* The table is sorted by number: a binary search keeps dispatch cheap. */
    int lo = 0, hi = NPRIMS - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (table[mid].number == number)
            return &table[mid];
        if (table[mid].number < number)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

int stvm_primitive_call(stvm_vm *vm, int number, stvm_oop receiver, const stvm_oop *args,
                        int nargs, stvm_oop *result, int *fail_code)
{
    const prim_row *row = find(number);
    if (!vm || !row || nargs < 0 || (nargs > 0 && !args))
        return STVM_EINVAL;
    int code = nargs != row->nargs ? STVM_PRIM_ERR_BAD_NUM_ARGS : OK;
    stvm_oop res = STVM_NIL;
    if (!code)
        code = row->fn(vm, receiver, args, &res);
    if (code) {
        if (fail_code)
            *fail_code = code;
        return STVM_EPRIM;
    }
    if (result)
        *result = res;
    return STVM_OK;
}

const char *stvm_primitive_name(int number)
{
    const prim_row *row = find(number);
    return row ? row->name : NULL;
}

int stvm_primitive_numbers(int *out, int cap)
{
    for (int i = 0; out && i < NPRIMS && i < cap; i++)
        out[i] = table[i].number;
    return NPRIMS;
}

const char *stvm_prim_error_name(int code)
{
    static const char *const names[] = {
        "success", "generic failure", "bad receiver", "bad argument", "bad index",
        "bad number of arguments", "inappropriate operation", "unsupported operation",
        "no modification", "insufficient object memory",
    };
    if (code >= 0 && code < (int)(sizeof names / sizeof names[0]))
        return names[code];
    return "unknown failure code";
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
