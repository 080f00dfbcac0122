/*
 * The integer primitives: SmallInteger (1-9) and LargeInteger (21-29) arithmetic and
 * comparisons. Each primitive is one definer line with the real C operator, so the
 * lists below read like the Smalltalk selectors (Wren's definer macros).
 */
#include "../vm/integer.h"
#include "prim_table.h"

static stvm_oop boolean(bool b) { return b ? STVM_TRUE : STVM_FALSE; }

/* ---- SmallInteger primitives 1-9: both operands immediate, result must fit ---- */

static int si_operands(const stvm_vm *vm, stvm_oop r, const stvm_oop *a)
{
    if (!stvm__is_si_of(vm, r))
        return STVM_PRIM_ERR_BAD_RECEIVER;
    if (!stvm__is_si_of(vm, a[0]))
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    return PRIM_OK;
}

/* The exact result in 128 bits (operands are at most 63-bit, so even a product fits);
 * outside the VM's SmallInteger range it fails and the image falls back to
 * LargeInteger code. */
#define SMALLINT_ARITH(fn, op)                                                           \
    int stvm__primitive_##fn(stvm_vm *vm, stvm_oop r, const stvm_oop *a, stvm_oop *res)  \
    {                                                                                    \
        int e = si_operands(vm, r, a);                                                       \
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
        int e = si_operands(vm, r, a);                                                       \
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
