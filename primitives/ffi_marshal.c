/*
 * FFI values: oops to C values and back, with the VM's integer representation (a C
 * integer that does not fit a SmallInteger comes back as a box), BoxedFloat64s for
 * floating point and ExternalAddresses for pointers.
 *
 * A value that does not fit its C type is refused, never truncated: that is the
 * difference between a bad argument and a silently wrong call.
 */
#include "ffi.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "../vm/address.h"
#include "../vm/bytes.h"
#include "../vm/float.h"
#include "../vm/integer.h"
#include "prim_table.h"

/* The range of each integer kind. */
static const struct { __int128 lo, hi; } ranges[K_COUNT] = {
    [K_I8] = {INT8_MIN, INT8_MAX},     [K_I16] = {INT16_MIN, INT16_MAX},
    [K_I32] = {INT32_MIN, INT32_MAX},  [K_I64] = {INT64_MIN, INT64_MAX},
    [K_U8] = {0, UINT8_MAX},           [K_U16] = {0, UINT16_MAX},
    [K_U32] = {0, UINT32_MAX},         [K_U64] = {0, UINT64_MAX},
    [K_SIZE] = {0, UINT64_MAX},
};

static bool is_integer_kind(ffi_kind k)
{
    return (k >= K_I8 && k <= K_U64) || k == K_SIZE;
}

static bool is_signed_kind(ffi_kind k)
{
    return k >= K_I8 && k <= K_I64;
}

/* The integer an oop stands for where C wants one: SmallIntegers and boxes of this VM,
 * true and false. Floats are refused, as UFFI refuses them. */
static int integer_of(stvm_vm *vm, stvm_oop oop, __int128 *v)
{
    if (stvm__is_si(oop)) {
        if (!stvm__is_si_of(vm, oop))
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        *v = stvm__si_value(oop);
    } else if (oop == STVM_TRUE || oop == STVM_FALSE) {
        *v = oop == STVM_TRUE;
    } else if (stvm__is_int(vm, oop)) {
        *v = stvm__int_value(oop);
    } else {
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    }
    return PRIM_OK;
}

static void store_integer(ffi_kind k, __int128 v, ffi_slot *s, bool widened)
{
    if (widened) {
        if (is_signed_kind(k))
            s->sarg = (ffi_sarg)v;
        else
            s->arg = (ffi_arg)v;
        return;
    }
    switch (k) {
    case K_I8: s->i8 = (int8_t)v; break;
    case K_I16: s->i16 = (int16_t)v; break;
    case K_I32: s->i32 = (int32_t)v; break;
    case K_I64: s->i64 = (int64_t)v; break;
    case K_U8: s->u8 = (uint8_t)v; break;
    case K_U16: s->u16 = (uint16_t)v; break;
    case K_U32: s->u32 = (uint32_t)v; break;
    default: s->u64 = (uint64_t)v; break;
    }
}

/* A double where C wants floating point: a float, or an integer converted. */
static int double_of(stvm_vm *vm, stvm_oop oop, double *d)
{
    stvm_float *f = stvm__float_of(vm, oop);
    if (f) {
        *d = f->value;
        return PRIM_OK;
    }
    if (oop == STVM_TRUE || oop == STVM_FALSE)
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    __int128 v;
    if (integer_of(vm, oop, &v))
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    *d = (double)v;
    return PRIM_OK;
}

/* A pointer where C wants one: nil, an ExternalAddress, or a ByteArray's bytes (for
 * a C string only one that holds its terminating NUL). */
static int pointer_of(stvm_vm *vm, ffi_kind k, stvm_oop oop, void **p)
{
    if (oop == STVM_NIL) {
        *p = NULL;
        return PRIM_OK;
    }
    stvm_external_address *a = stvm__address_of(vm, oop);
    if (a) {
        *p = a->address;
        return PRIM_OK;
    }
    stvm_byte_array *b = stvm__bytes_of(vm, oop);
    if (!b || (k == K_STR && !memchr(b->bytes, 0, b->hdr.byte_size)))
        return STVM_PRIM_ERR_BAD_ARGUMENT;
    *p = b->bytes;
    return PRIM_OK;
}

int stvm__ffi_to_c(stvm_vm *vm, ffi_kind k, stvm_oop oop, ffi_slot *s, bool widened)
{
    if (is_integer_kind(k)) {
        __int128 v;
        if (integer_of(vm, oop, &v) || v < ranges[k].lo || v > ranges[k].hi)
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        store_integer(k, v, s, widened);
        return PRIM_OK;
    }
    if (k == K_F32 || k == K_F64) {
        double d;
        if (double_of(vm, oop, &d))
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        if (k == K_F64) {
            s->f64 = d;
        } else if (isfinite(d) && fabs(d) > FLT_MAX) {
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        } else {
            s->f32 = (float)d;
        }
        return PRIM_OK;
    }
    if (k == K_PTR || k == K_STR)
        return pointer_of(vm, k, oop, &s->p);
    return PRIM_OK;   /* void: a callback's answer, ignored */
}

/* A C integer of kind k at p to an int128 (a widened one is read as a register). */
static __int128 load_integer(ffi_kind k, const ffi_slot *s, bool widened)
{
    switch (k) {
    case K_I8: return widened ? (int8_t)s->sarg : s->i8;
    case K_I16: return widened ? (int16_t)s->sarg : s->i16;
    case K_I32: return widened ? (int32_t)s->sarg : s->i32;
    case K_I64: return s->i64;
    case K_U8: return widened ? (uint8_t)s->arg : s->u8;
    case K_U16: return widened ? (uint16_t)s->arg : s->u16;
    case K_U32: return widened ? (uint32_t)s->arg : s->u32;
    default: return s->u64;
    }
}

int stvm__ffi_to_oop(stvm_vm *vm, ffi_kind k, const void *p, bool widened, stvm_oop *out)
{
    ffi_slot s;
    memcpy(&s, p, k == K_VOID ? 0 : widened ? sizeof s : stvm__ffi_type(k)->size);
    if (is_integer_kind(k))
        return stvm__int_from_i128(vm, load_integer(k, &s, widened), out);
    if (k == K_F32 || k == K_F64)
        return stvm__float_make(vm, k == K_F32 ? (double)s.f32 : s.f64, out);
    if (k == K_PTR || k == K_STR)
        return stvm__address_make(vm, s.p, out);
    *out = STVM_NIL;
    return STVM_OK;
}

int stvm__ffi_marshal(stvm_vm *vm, const ffi_sig *sig, const stvm_oop *args, int nargs,
                      ffi_frame *frame)
{
    if (nargs != sig->nargs)
        return STVM_PRIM_ERR_BAD_NUM_ARGS;
    for (int i = 0; i < nargs; i++) {
        int code = stvm__ffi_to_c(vm, (ffi_kind)sig->args[i], args[i], &frame->slots[i], false);
        if (code)
            return code;
        frame->av[i] = &frame->slots[i];
    }
    return PRIM_OK;
}

void stvm__ffi_release(stvm_vm *vm, stvm_oop oop)
{
    if (stvm__is_si(oop) || oop == STVM_NIL || !stvm__objmem_is_object(vm, oop))
        return;
    uint32_t c = ((const stvm_object *)oop)->class_index;
    if (c == STVM_CLASS_LARGE_POSITIVE_INTEGER || c == STVM_CLASS_LARGE_NEGATIVE_INTEGER ||
        c == STVM_CLASS_FLOAT || c == STVM_CLASS_EXTERNAL_ADDRESS)
        stvm__objmem_free_cell(vm, (void *)oop);
}
