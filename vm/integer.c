/*
 * Boxed integer arithmetic. Pharo's VM handles LargeIntegers of up to 64 bits in
 * primitives 21-37 by reading the digit bytes into a machine word, computing, and
 * building a fresh box for the answer; we do the same, so a boxed timestamp costs a
 * digit walk per operand and an allocation per result, as it did in 2015.
 */
#include "integer.h"

#include "objmem.h"

static inline bool both_immediate(stvm_oop a, stvm_oop b) { return stvm__is_si(a & b); }

__int128 stvm__int_value(stvm_oop o)
{
    if (stvm__is_si(o))
        return stvm__si_value(o);
    const stvm_large_int *li = (const stvm_large_int *)o;
    uint64_t mag = 0;
    for (uint32_t i = li->hdr.byte_size; i-- > 0;)
        mag = (mag << 8) | li->digits[i];
    return li->hdr.class_index == STVM_CLASS_LARGE_NEGATIVE_INTEGER ? -(__int128)mag
                                                                    : (__int128)mag;
}

int stvm__int_from_i128(stvm_vm *vm, __int128 v, stvm_oop *out)
{
    if (v >= vm->si_min && v <= vm->si_max) {
        *out = stvm__si_make((int64_t)v);
        return STVM_OK;
    }
    bool neg = v < 0;
    unsigned __int128 mag = neg ? -(unsigned __int128)v : (unsigned __int128)v;
    if (mag >> 64)
        return STVM_ERANGE;
    stvm_large_int *li = stvm__objmem_alloc_large(vm);
    if (!li)
        return STVM_ENOMEM;
    uint64_t m = (uint64_t)mag;
    uint32_t n = 0;
    do {                              /* normalised: no high zero bytes */
        li->digits[n++] = (uint8_t)m;
        m >>= 8;
    } while (m);
    li->hdr.class_index = neg ? STVM_CLASS_LARGE_NEGATIVE_INTEGER
                              : STVM_CLASS_LARGE_POSITIVE_INTEGER;
    li->hdr.byte_size = n;
    *out = (stvm_oop)li;
    return STVM_OK;
}

bool stvm__is_int(stvm_vm *vm, stvm_oop o)
{
    if (stvm__is_si(o))
        return stvm__is_si_of(vm, o);
    return stvm__objmem_is_object(vm, o) && stvm__is_boxed(o);
}

void stvm__int_release(stvm_vm *vm, stvm_oop o)
{
    if (stvm__is_boxed(o))
        stvm__objmem_free_large(vm, (stvm_large_int *)o);
}

static int finish(stvm_vm *vm, stvm_oop a, stvm_oop b, __int128 r, stvm_oop *out)
{
    int err = stvm__int_from_i128(vm, r, out);
    if (err == STVM_OK && (!both_immediate(a, b) || !stvm__is_si(*out)))
        vm->stats.large_int_ops++;   /* only operations that happened count */
    return err;
}

int stvm__int_add_slow(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out)
{
    return finish(vm, a, b, stvm__int_value(a) + stvm__int_value(b), out);
}

int stvm__int_sub_slow(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out)
{
    return finish(vm, a, b, stvm__int_value(a) - stvm__int_value(b), out);
}

int stvm__int_mul_slow(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out)
{
    __int128 x = stvm__int_value(a), y = stvm__int_value(b), r;
    if (__builtin_mul_overflow(x, y, &r))
        return STVM_ERANGE;
    return finish(vm, a, b, r, out);
}

int stvm__int_cmp_slow(stvm_vm *vm, stvm_oop a, stvm_oop b)
{
    vm->stats.large_int_ops++;
    __int128 x = stvm__int_value(a), y = stvm__int_value(b);
    return (x > y) - (x < y);
}

void stvm__int_init(stvm_vm *vm)
{
    int64_t bits = vm->cfg.smallint_bits;
    vm->si_max = ((int64_t)1 << (bits - 1)) - 1;
    vm->si_min = -((int64_t)1 << (bits - 1));
}

/* ---- public API ---- */

int64_t stvm_smallint_max(const stvm_vm *vm) { return vm ? vm->si_max : 0; }
int64_t stvm_smallint_min(const stvm_vm *vm) { return vm ? vm->si_min : 0; }
bool stvm_oop_is_smallint(stvm_oop oop) { return stvm__is_si(oop); }
bool stvm_oop_is_integer(stvm_vm *vm, stvm_oop oop) { return vm && stvm__is_int(vm, oop); }

int stvm_int_from_i64(stvm_vm *vm, int64_t v, stvm_oop *out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    return stvm__int_from_i128(vm, v, out);
}

int stvm_int_from_u64(stvm_vm *vm, uint64_t v, stvm_oop *out)
{
    if (!vm || !out)
        return STVM_EINVAL;
    return stvm__int_from_i128(vm, (__int128)v, out);
}

static int read_checked(stvm_vm *vm, stvm_oop oop, __int128 *v)
{
    if (!vm || !stvm__is_int(vm, oop))
        return STVM_EINVAL;
    *v = stvm__int_value(oop);
    return STVM_OK;
}

int stvm_int_to_i64(stvm_vm *vm, stvm_oop oop, int64_t *out)
{
    __int128 v;
    int err = out ? read_checked(vm, oop, &v) : STVM_EINVAL;
    if (err)
        return err;
    if (v < INT64_MIN || v > INT64_MAX)
        return STVM_ERANGE;
    *out = (int64_t)v;
    return STVM_OK;
}

int stvm_int_to_u64(stvm_vm *vm, stvm_oop oop, uint64_t *out)
{
    __int128 v;
    int err = out ? read_checked(vm, oop, &v) : STVM_EINVAL;
    if (err)
        return err;
    if (v < 0 || v > (__int128)UINT64_MAX)
        return STVM_ERANGE;
    *out = (uint64_t)v;
    return STVM_OK;
}

static bool operands_ok(stvm_vm *vm, stvm_oop a, stvm_oop b, const void *out)
{
    return vm && out && stvm__is_int(vm, a) && stvm__is_int(vm, b);
}

int stvm_int_add(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out)
{
    return operands_ok(vm, a, b, out) ? stvm__int_add(vm, a, b, out) : STVM_EINVAL;
}

int stvm_int_sub(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out)
{
    return operands_ok(vm, a, b, out) ? stvm__int_sub(vm, a, b, out) : STVM_EINVAL;
}

int stvm_int_mul(stvm_vm *vm, stvm_oop a, stvm_oop b, stvm_oop *out)
{
    return operands_ok(vm, a, b, out) ? stvm__int_mul(vm, a, b, out) : STVM_EINVAL;
}

int stvm_int_compare(stvm_vm *vm, stvm_oop a, stvm_oop b, int *out)
{
    if (!operands_ok(vm, a, b, out))
        return STVM_EINVAL;
    *out = stvm__int_cmp(vm, a, b);
    return STVM_OK;
}

int stvm_oop_release(stvm_vm *vm, stvm_oop oop)
{
    if (!vm)
        return STVM_EINVAL;
    if (stvm__is_si_of(vm, oop) || oop == STVM_NIL)
        return STVM_OK;
    if (stvm__is_si(oop) || !stvm__objmem_is_object(vm, oop))
        return STVM_EINVAL;
    if (stvm__is_boxed(oop)) {
        stvm__int_release(vm, oop);
        return STVM_OK;
    }
    const stvm_object *o = (const stvm_object *)oop;
    if (o->class_index == STVM_CLASS_BYTE_ARRAY) {
        stvm__objmem_free(vm, (void *)oop);
        return STVM_OK;
    }
    if (o->class_index == STVM_CLASS_FLOAT || o->class_index == STVM_CLASS_EXTERNAL_ADDRESS) {
        stvm__objmem_free_cell(vm, (void *)oop);
        return STVM_OK;
    }
    if (o->class_index == STVM_CLASS_SOCKET_HANDLE) {
        /* Only a destroyed socket's record: its descriptor is gone with it. */
        if (!((const stvm_socket_handle *)oop)->destroyed)
            return STVM_EINUSE;   /* still a socket: primitiveSocketDestroy first */
        stvm__objmem_free(vm, (void *)oop);
        return STVM_OK;
    }
    return STVM_EINVAL;
}
