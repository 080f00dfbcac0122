/*
 * Integers on oops: SmallInteger immediates (tag bit 0 set, value in the other bits)
 * and boxed Large(Positive|Negative)Integers with little-endian digits. The SmallInteger
 * range is the VM's (31 or 61 bits), so the same value is an immediate on one VM and a
 * box on another, which is exactly what the Delay benchmark measures.
 *
 * The inline functions are the fast paths (both operands immediate); everything else
 * goes to integer.c, which counts a LargeInteger operation per call.
 */
#ifndef STVM_VM_INTEGER_H
#define STVM_VM_INTEGER_H

#include "vm.h"

/* Set the SmallInteger range from cfg.smallint_bits (31 or 61, already checked). */
void stvm__int_init(stvm_vm *vm);

static inline bool stvm__is_si(stvm_oop o) { return (o & 1) != 0; }
static inline int64_t stvm__si_value(stvm_oop o) { return (int64_t)(intptr_t)o >> 1; }
static inline stvm_oop stvm__si_make(int64_t v) { return ((stvm_oop)v << 1) | 1; }
static inline bool stvm__si_fits(const stvm_vm *vm, int64_t v)
{
    return v >= vm->si_min && v <= vm->si_max;
}

/* A SmallInteger of this VM: tagged and within its range (a tagged word beyond the
 * range of a 31-bit VM is no integer of it). Validates untrusted oops. */
static inline bool stvm__is_si_of(const stvm_vm *vm, stvm_oop o)
{
    return stvm__is_si(o) && stvm__si_fits(vm, stvm__si_value(o));
}

/* Slow paths: any operand or the result boxed. Operands must be integers of this VM
 * (callers check with stvm__is_int). Errors: ERANGE (beyond 64-bit magnitude), ENOMEM. */
int stvm__int_add_slow(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out);
int stvm__int_sub_slow(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out);
int stvm__int_mul_slow(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out);
int stvm__int_cmp_slow(stvm_vm *vm, stvm_oop a, stvm_oop b);

/* Integer oop from a value: immediate if it fits, else a new box. ENOMEM. */
int stvm__int_from_i128(stvm_vm *vm, __int128 v, stvm_oop *out);
/* Value of an integer oop (must be one). */
__int128 stvm__int_value(stvm_oop o);
/* Is o a SmallInteger in this VM's range or a live box of this VM? Validates untrusted
 * oops (on a 31-bit VM a tagged word holding 2^40 is not a SmallInteger of it). */
bool stvm__is_int(stvm_vm *vm, stvm_oop o);
/* Is o (known to be an object of this VM) a boxed integer? */
static inline bool stvm__is_boxed(stvm_oop o)
{
    if (stvm__is_si(o) || o == STVM_NIL)
        return false;
    uint32_t c = ((const stvm_object *)o)->class_index;
    return c == STVM_CLASS_LARGE_POSITIVE_INTEGER || c == STVM_CLASS_LARGE_NEGATIVE_INTEGER;
}
/* Release o if it is a box (no-op for immediates and nil). */
void stvm__int_release(stvm_vm *vm, stvm_oop o);

static inline int stvm__int_add(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out)
{
    if (stvm__is_si(a & b)) {
        int64_t r = stvm__si_value(a) + stvm__si_value(b);  /* |r| <= 2^61: no overflow */
        if (stvm__si_fits(vm, r)) {
            *out = stvm__si_make(r);
            return STVM_OK;
        }
    }
    return stvm__int_add_slow(vm, a, b, out);
}

static inline int stvm__int_sub(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out)
{
    if (stvm__is_si(a & b)) {
        int64_t r = stvm__si_value(a) - stvm__si_value(b);
        if (stvm__si_fits(vm, r)) {
            *out = stvm__si_make(r);
            return STVM_OK;
        }
    }
    return stvm__int_sub_slow(vm, a, b, out);
}

static inline int stvm__int_mul(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out)
{
    if (stvm__is_si(a & b)) {
        int64_t r;
        if (!__builtin_mul_overflow(stvm__si_value(a), stvm__si_value(b), &r) &&
            stvm__si_fits(vm, r)) {
            *out = stvm__si_make(r);
            return STVM_OK;
        }
    }
    return stvm__int_mul_slow(vm, a, b, out);
}

/* -1, 0 or 1. */
static inline int stvm__int_cmp(stvm_vm *vm, stvm_oop a, stvm_oop b)
{
    if (stvm__is_si(a & b)) {
        int64_t x = stvm__si_value(a), y = stvm__si_value(b);
        return (x > y) - (x < y);
    }
    return stvm__int_cmp_slow(vm, a, b);
}

#endif
