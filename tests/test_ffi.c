/*
 * The FFI on the VM's own thread: signatures, looking functions up, every C type at its
 * edges (the 31- and 61-bit SmallInteger boundaries, boxed results, negative values,
 * NaN and the infinities), failures with Pharo's codes before anything is called, the
 * stack a callout may use, and callbacks run nested on the calling stack (two deep).
 * Threaded callouts and callbacks from other threads are suite ffi_threads.
 *
 * The C functions called are this file's own, reached with stvm_ffi_function_at, and
 * the C library's (cos, qsort, strlen, labs), reached with stvm_ffi_function_new.
 */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>

#include "helpers.h"

TestSuite(ffi, .timeout = 60);

/* ---- the C side ------------------------------------------------------------------- */

static int calls;   /* how many times a C function of this file ran */

static int8_t id_i8(int8_t x) { calls++; return x; }
static int16_t id_i16(int16_t x) { calls++; return x; }
static int32_t id_i32(int32_t x) { calls++; return x; }
static int64_t id_i64(int64_t x) { calls++; return x; }
static uint8_t id_u8(uint8_t x) { calls++; return x; }
static uint16_t id_u16(uint16_t x) { calls++; return x; }
static uint32_t id_u32(uint32_t x) { calls++; return x; }
static uint64_t id_u64(uint64_t x) { calls++; return x; }
static size_t id_size(size_t x) { calls++; return x; }
static float id_f32(float x) { calls++; return x; }
static double id_f64(double x) { calls++; return x; }
static void *id_ptr(void *x) { calls++; return x; }
static void touch(void) { calls++; }
static int64_t add(int64_t a, int64_t b) { calls++; return a + b; }
static double mix(int8_t a, uint16_t b, float c, double d, int64_t e)
{
    calls++;
    return a + b + c + d + (double)e;
}
static void fill(uint8_t *p, size_t n, uint8_t v)
{
    calls++;
    memset(p, v, n);
}

/* Sixteen arguments: the most a signature may have. */
static int64_t sum16(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f,
                     int64_t g, int64_t h, int64_t i, int64_t j, int64_t k, int64_t l,
                     int64_t m, int64_t n, int64_t o, int64_t p)
{
    return a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p;
}

/* Uses about 40 KiB of stack: more than a default process stack has. */
static __attribute__((noinline)) int64_t deep(int64_t seed)
{
    volatile unsigned char big[40 * 1024];
    for (size_t i = 0; i < sizeof big; i += 512)
        big[i] = (unsigned char)(seed + (int64_t)i);
    return big[(size_t)(seed * 512) % sizeof big];
}

/* ---- helpers ------------------------------------------------------------------------ */

static stvm_ffi_function *fn_at(stvm_vm *vm, void *address, const char *sig)
{
    stvm_ffi_function *fn = NULL;
    int err = stvm_ffi_function_at(vm, address, sig, &fn);
    cr_assert_eq(err, STVM_OK, "function_at(%s): %s", sig, stvm_err_name(err));
    return fn;
}

/* Call fn with one argument from the embedding thread; the result or SENTINEL. */
static int call1(stvm_vm *vm, stvm_ffi_function *fn, stvm_oop arg, stvm_oop *result)
{
    *result = SENTINEL;
    return stvm_ffi_call(vm, fn, &arg, 1, result);
}

/* v + d as an integer oop, false when the VM cannot hold it (2^64). */
static bool plus(stvm_vm *vm, stvm_oop v, int64_t d, stvm_oop *out)
{
    int err = stvm_int_add(vm, v, mk_i(vm, d), out);
    cr_assert(err == STVM_OK || err == STVM_ERANGE);
    return err == STVM_OK;
}

/* The call answers EPRIM with `code`, and the C function did not run. */
static void expect_refused(stvm_vm *vm, stvm_ffi_function *fn, const stvm_oop *args, int n,
                           int code)
{
    int before = calls;
    stvm_oop r = SENTINEL;
    cr_assert_eq(stvm_ffi_call(vm, fn, args, n, &r), STVM_EPRIM);
    cr_assert_eq(stvm_ffi_last_failure(vm), code, "failure %d, expected %d",
                 stvm_ffi_last_failure(vm), code);
    cr_assert_eq(r, SENTINEL, "no result on failure");
    cr_assert_eq(calls, before, "nothing was called");
}

/* ---- signatures and look-up --------------------------------------------------------- */

Test(ffi, signatures_outside_the_grammar_are_refused)
{
    stvm_vm *vm = vm_make(NULL);
    static const char *bad[] = {
        "", "i64", "i64(", "i64(i64", "i64(i64,)", "i64(,i64)", "i64(void)", "int(i64)",
        "i64(i64) x", "i64(i64 i64)", "(i64)", "I64(i64)", "i64((i64))", "i64(i64;i64)",
        "i64(i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64)",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stvm_ffi_function *fn = (stvm_ffi_function *)0x1;
        cr_assert_eq(stvm_ffi_function_at(vm, (void *)id_i64, bad[i], &fn), STVM_EINVAL,
                     "'%s'", bad[i]);
        cr_assert_eq(fn, (stvm_ffi_function *)0x1, "out untouched for '%s'", bad[i]);
    }
    vm_done(vm);
}

Test(ffi, signatures_may_have_spaces_and_up_to_sixteen_arguments)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_function *f = fn_at(vm, (void *)add, "  i64 ( i64 ,i64 )  ");
    stvm_oop args[16] = {mk_i(vm, 40), mk_i(vm, 2)}, r;
    cr_assert_eq(stvm_ffi_call(vm, f, args, 2, &r), STVM_OK);
    cr_assert_eq(val_i(vm, r), 42);
    stvm_ffi_function *t = fn_at(vm, (void *)touch, "void( )");
    cr_assert_eq(stvm_ffi_call(vm, t, NULL, 0, &r), STVM_OK);
    cr_assert_eq(r, STVM_NIL, "a void result is nil");
    stvm_ffi_function *s = fn_at(vm, (void *)sum16, "i64(i64,i64,i64,i64,i64,i64,i64,i64,"
                                                    "i64,i64,i64,i64,i64,i64,i64,i64)");
    for (int i = 0; i < 16; i++)
        args[i] = mk_i(vm, i + 1);
    cr_assert_eq(stvm_ffi_call(vm, s, args, 16, &r), STVM_OK);
    cr_assert_eq(val_i(vm, r), 136);
    vm_done(vm);
}

Test(ffi, functions_are_looked_up_in_a_library_or_the_program)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_function *c = NULL, *l = NULL;
    cr_assert_eq(stvm_ffi_function_new(vm, "libm.so.6", "cos", "f64(f64)", &c), STVM_OK);
    cr_assert_eq(stvm_ffi_function_new(vm, NULL, "labs", "i64(i64)", &l), STVM_OK);
    stvm_oop r;
    cr_assert_eq(call1(vm, c, mk_i(vm, 0), &r), STVM_OK, "an integer for an f64");
    double d = 0;
    cr_assert_eq(stvm_float_value(vm, r, &d), STVM_OK);
    cr_assert(d == 1.0, "cos(0) = %g", d);
    cr_assert_eq(stvm_oop_release(vm, r), STVM_OK);
    cr_assert_eq(call1(vm, l, mk_i(vm, -7), &r), STVM_OK);
    cr_assert_eq(val_i(vm, r), 7);
    stvm_ffi_function_free(vm, c);
    stvm_ffi_function_free(vm, l);
    vm_done(vm);
}

Test(ffi, a_missing_library_or_symbol_is_einval_and_makes_nothing)
{
    stvm_vm *vm = vm_make(NULL);
    uint64_t live = stats_of(vm).objects_live;
    stvm_ffi_function *fn = (stvm_ffi_function *)0x1;
    cr_assert_eq(stvm_ffi_function_new(vm, "libnot-there.so.9", "cos", "f64(f64)", &fn),
                 STVM_EINVAL);
    cr_assert_eq(stvm_ffi_function_new(vm, "libm.so.6", "no_such_symbol_at_all", "f64(f64)",
                                       &fn), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_function_new(vm, NULL, "no_such_symbol_at_all", "void()", &fn),
                 STVM_EINVAL);
    cr_assert_eq(fn, (stvm_ffi_function *)0x1);
    stvm_stats s = stats_of(vm);
    cr_assert_eq(s.objects_live, live);
    vm_done(vm);
}

Test(ffi, null_and_foreign_handles_are_einval)
{
    stvm_vm *vm = vm_make(NULL), *other = vm_make(NULL);
    stvm_ffi_function *fn = fn_at(vm, (void *)id_i64, "i64(i64)");
    stvm_ffi_function *theirs = fn_at(other, (void *)id_i64, "i64(i64)");
    stvm_oop a = mk_i(vm, 1), r = SENTINEL;
    cr_assert_eq(stvm_ffi_call(NULL, fn, &a, 1, &r), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_call(vm, NULL, &a, 1, &r), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_call(vm, theirs, &a, 1, &r), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_call(vm, fn, &a, -1, &r), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_call(vm, fn, NULL, 1, &r), STVM_EINVAL);
    cr_assert_eq(r, SENTINEL);
    cr_assert_eq(stvm_ffi_function_at(NULL, (void *)id_i64, "i64(i64)", &fn), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_function_at(vm, NULL, "i64(i64)", &fn), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_function_at(vm, (void *)id_i64, NULL, &fn), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_function_at(vm, (void *)id_i64, "i64(i64)", NULL), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_function_new(vm, NULL, NULL, "void()", &fn), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_function_set_stack(vm, theirs, 0), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_function_set_stack(vm, fn, ((size_t)64 << 20) + 1), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_last_failure(NULL), STVM_EINVAL);
    stvm_ffi_function_free(vm, theirs);   /* ignored: not this VM's */
    stvm_ffi_function_free(vm, NULL);
    stvm_ffi_function_free(NULL, fn);
    cr_assert_eq(call1(vm, fn, a, &r), STVM_OK, "still usable");
    cr_assert_eq(call1(other, theirs, mk_i(other, 5), &r), STVM_OK, "still theirs");
    vm_done(other);
    vm_done(vm);
}

/* ---- integers ------------------------------------------------------------------------- */

typedef struct int_type {
    const char *sig;
    void *fn;
    int64_t lo;
    uint64_t hi;
} int_type;

static const int_type INT_TYPES[] = {
    {"i8(i8)", (void *)id_i8, INT8_MIN, INT8_MAX},
    {"i16(i16)", (void *)id_i16, INT16_MIN, INT16_MAX},
    {"i32(i32)", (void *)id_i32, INT32_MIN, INT32_MAX},
    {"i64(i64)", (void *)id_i64, INT64_MIN, INT64_MAX},
    {"u8(u8)", (void *)id_u8, 0, UINT8_MAX},
    {"u16(u16)", (void *)id_u16, 0, UINT16_MAX},
    {"u32(u32)", (void *)id_u32, 0, UINT32_MAX},
    {"u64(u64)", (void *)id_u64, 0, UINT64_MAX},
    {"size(size)", (void *)id_size, 0, SIZE_MAX},
};

/* The class an integer result must have on this VM. */
static const char *class_for(stvm_vm *vm, stvm_oop v)
{
    int c = 0;
    cr_assert_eq(stvm_int_compare(vm, v, mk_i(vm, stvm_smallint_max(vm)), &c), STVM_OK);
    if (c > 0)
        return "LargePositiveInteger";
    cr_assert_eq(stvm_int_compare(vm, v, mk_i(vm, stvm_smallint_min(vm)), &c), STVM_OK);
    return c < 0 ? "LargeNegativeInteger" : "SmallInteger";
}

/* v goes through the identity function of t and comes back equal, with its class. */
static void expect_identity(stvm_vm *vm, stvm_ffi_function *fn, stvm_oop v)
{
    stvm_oop r;
    cr_assert_eq(call1(vm, fn, v, &r), STVM_OK);
    int c = 1;
    cr_assert_eq(stvm_int_compare(vm, r, v, &c), STVM_OK);
    cr_assert_eq(c, 0, "the value came back changed");
    cr_assert_str_eq(stvm_oop_class_name(vm, r), class_for(vm, v));
    cr_assert_eq(stvm_oop_release(vm, r), STVM_OK);
}

static void integer_edges(int bits)
{
    stvm_vm *vm = vm_make_sim(bits, STVM_DELAY_CLOCK_US);
    for (size_t i = 0; i < sizeof INT_TYPES / sizeof INT_TYPES[0]; i++) {
        const int_type *t = &INT_TYPES[i];
        stvm_ffi_function *fn = fn_at(vm, t->fn, t->sig);
        stvm_oop lo = mk_i(vm, t->lo), hi = mk_u(vm, t->hi);
        expect_identity(vm, fn, lo);
        expect_identity(vm, fn, hi);
        expect_identity(vm, fn, mk_i(vm, t->lo < 0 ? -1 : 1));
        stvm_oop below, above;
        cr_assert(plus(vm, lo, -1, &below));
        expect_refused(vm, fn, &below, 1, STVM_PRIM_ERR_BAD_ARGUMENT);
        if (plus(vm, hi, 1, &above))   /* beyond 2^64 - 1 no integer can go */
            expect_refused(vm, fn, &above, 1, STVM_PRIM_ERR_BAD_ARGUMENT);
        stvm_ffi_function_free(vm, fn);
    }
    vm_done(vm);
}

Test(ffi, every_integer_type_carries_its_edges_and_refuses_one_beyond_on_31_bits)
{
    integer_edges(31);
}

Test(ffi, every_integer_type_carries_its_edges_and_refuses_one_beyond_on_61_bits)
{
    integer_edges(61);
}

Test(ffi, results_beyond_the_smallinteger_range_come_back_boxed_at_31_and_61_bits)
{
    static const int64_t edges[] = {
        (1ll << 30) - 1, 1ll << 30, -(1ll << 30), -(1ll << 30) - 1,
        (1ll << 60) - 1, 1ll << 60, -(1ll << 60), -(1ll << 60) - 1, INT64_MAX, INT64_MIN,
    };
    for (int bits = 31; bits <= 61; bits += 30) {
        stvm_vm *vm = vm_make_sim(bits, STVM_DELAY_CLOCK_US);
        stvm_ffi_function *fn = fn_at(vm, (void *)id_i64, "i64(i64)");
        for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
            stvm_oop r;
            cr_assert_eq(call1(vm, fn, mk_i(vm, edges[i]), &r), STVM_OK);
            cr_assert_eq(val_i(vm, r), edges[i]);
            bool small = edges[i] >= stvm_smallint_min(vm) && edges[i] <= stvm_smallint_max(vm);
            const char *want = small ? "SmallInteger"
                               : edges[i] < 0 ? "LargeNegativeInteger" : "LargePositiveInteger";
            cr_assert_str_eq(stvm_oop_class_name(vm, r), want, "%d bits, %lld", bits,
                             (long long)edges[i]);
            stvm_oop_release(vm, r);
        }
        vm_done(vm);
    }
}

Test(ffi, booleans_are_one_and_zero_and_floats_are_no_integers)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_function *fn = fn_at(vm, (void *)id_u8, "u8(u8)");
    stvm_oop r;
    cr_assert_eq(call1(vm, fn, STVM_TRUE, &r), STVM_OK);
    cr_assert_eq(val_i(vm, r), 1);
    cr_assert_eq(call1(vm, fn, STVM_FALSE, &r), STVM_OK);
    cr_assert_eq(val_i(vm, r), 0);
    stvm_oop f, bad[] = {0, STVM_NIL, GARBAGE, 0};
    cr_assert_eq(stvm_float_new(vm, 1.0, &f), STVM_OK);
    bad[0] = f;
    stvm_semaphore *sem = sem_make(vm);
    bad[3] = stvm_semaphore_oop(sem);
    for (int i = 0; i < 4; i++)
        expect_refused(vm, fn, &bad[i], 1, STVM_PRIM_ERR_BAD_ARGUMENT);
    stvm_oop_release(vm, f);
    vm_done(vm);
}

Test(ffi, a_tagged_word_beyond_a_31_bit_vm_is_no_integer_of_it)
{
    stvm_vm *vm = vm_make_sim(31, STVM_DELAY_CLOCK_US);
    stvm_ffi_function *fn = fn_at(vm, (void *)id_i64, "i64(i64)");
    stvm_oop wide = ((stvm_oop)1 << 41) | 1;   /* 2^40 as a 61-bit VM would tag it */
    expect_refused(vm, fn, &wide, 1, STVM_PRIM_ERR_BAD_ARGUMENT);
    vm_done(vm);
}

/* ---- floats ---------------------------------------------------------------------------- */

static double float_through(stvm_vm *vm, stvm_ffi_function *fn, double d)
{
    stvm_oop a, r;
    cr_assert_eq(stvm_float_new(vm, d, &a), STVM_OK);
    cr_assert_eq(call1(vm, fn, a, &r), STVM_OK, "%g", d);
    cr_assert_str_eq(stvm_oop_class_name(vm, r), "BoxedFloat64");
    double out = 0;
    cr_assert_eq(stvm_float_value(vm, r, &out), STVM_OK);
    stvm_oop_release(vm, a);
    stvm_oop_release(vm, r);
    return out;
}

Test(ffi, doubles_carry_nan_the_infinities_negative_zero_and_the_extremes)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_function *fn = fn_at(vm, (void *)id_f64, "f64(f64)");
    cr_assert(isnan(float_through(vm, fn, NAN)));
    cr_assert(float_through(vm, fn, INFINITY) == INFINITY);
    cr_assert(float_through(vm, fn, -INFINITY) == -INFINITY);
    double z = float_through(vm, fn, -0.0);
    cr_assert(z == 0 && signbit(z), "negative zero keeps its sign");
    cr_assert(float_through(vm, fn, DBL_MAX) == DBL_MAX);
    cr_assert(float_through(vm, fn, -DBL_MAX) == -DBL_MAX);
    cr_assert(float_through(vm, fn, DBL_TRUE_MIN) == DBL_TRUE_MIN, "a denormal");
    stvm_oop r;
    cr_assert_eq(call1(vm, fn, mk_i(vm, -3), &r), STVM_OK, "an integer is converted");
    double d = 0;
    cr_assert_eq(stvm_float_value(vm, r, &d), STVM_OK);
    cr_assert(d == -3.0);
    stvm_oop_release(vm, r);
    expect_refused(vm, fn, (stvm_oop[]){STVM_TRUE}, 1, STVM_PRIM_ERR_BAD_ARGUMENT);
    expect_refused(vm, fn, (stvm_oop[]){STVM_NIL}, 1, STVM_PRIM_ERR_BAD_ARGUMENT);
    vm_done(vm);
}

Test(ffi, floats_carry_nan_and_infinities_and_refuse_what_overflows_them)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_function *fn = fn_at(vm, (void *)id_f32, "f32(f32)");
    cr_assert(isnan(float_through(vm, fn, NAN)));
    cr_assert(float_through(vm, fn, INFINITY) == INFINITY);
    cr_assert(float_through(vm, fn, -INFINITY) == -INFINITY);
    cr_assert(float_through(vm, fn, FLT_MAX) == FLT_MAX);
    cr_assert(float_through(vm, fn, 0.1) == (double)0.1f, "rounded to the nearest float");
    stvm_oop big;
    cr_assert_eq(stvm_float_new(vm, 1e300, &big), STVM_OK);
    expect_refused(vm, fn, &big, 1, STVM_PRIM_ERR_BAD_ARGUMENT);
    stvm_oop_release(vm, big);
    vm_done(vm);
}

Test(ffi, mixed_arguments_are_each_converted_to_their_own_type)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_function *fn = fn_at(vm, (void *)mix, "f64(i8, u16, f32, f64, i64)");
    stvm_oop half, args[5];
    cr_assert_eq(stvm_float_new(vm, 0.5, &half), STVM_OK);
    args[0] = mk_i(vm, -8);
    args[1] = mk_i(vm, 60000);
    args[2] = half;
    args[3] = mk_i(vm, 2);
    args[4] = mk_i(vm, 1000);
    stvm_oop r;
    cr_assert_eq(stvm_ffi_call(vm, fn, args, 5, &r), STVM_OK);
    double d = 0;
    cr_assert_eq(stvm_float_value(vm, r, &d), STVM_OK);
    cr_assert(d == 60994.5, "got %g", d);
    stvm_oop_release(vm, r);
    stvm_oop_release(vm, half);
    vm_done(vm);
}

/* ---- pointers, strings, byte arrays ------------------------------------------------------ */

Test(ffi, pointers_travel_as_external_addresses_and_null_as_nil)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_function *fn = fn_at(vm, (void *)id_ptr, "ptr(ptr)");
    int here = 7;
    stvm_oop a, r;
    cr_assert_eq(stvm_ptr_oop(vm, &here, &a), STVM_OK);
    cr_assert_str_eq(stvm_oop_class_name(vm, a), "ExternalAddress");
    cr_assert_eq(call1(vm, fn, a, &r), STVM_OK);
    void *p = NULL;
    cr_assert_eq(stvm_oop_ptr(vm, r, &p), STVM_OK);
    cr_assert_eq(p, &here);
    cr_assert_neq(r, a, "a new address object");
    cr_assert_eq(call1(vm, fn, STVM_NIL, &r), STVM_OK);
    cr_assert_eq(r, STVM_NIL, "NULL comes back as nil");
    stvm_oop nil_made = SENTINEL;
    cr_assert_eq(stvm_ptr_oop(vm, NULL, &nil_made), STVM_OK);
    cr_assert_eq(nil_made, STVM_NIL);
    cr_assert_eq(stvm_oop_ptr(vm, STVM_NIL, &p), STVM_OK);
    cr_assert_null(p);
    expect_refused(vm, fn, (stvm_oop[]){mk_i(vm, 4096)}, 1, STVM_PRIM_ERR_BAD_ARGUMENT);
    cr_assert_eq(stvm_oop_ptr(vm, mk_i(vm, 1), &p), STVM_EINVAL);
    vm_done(vm);
}

Test(ffi, a_byte_array_is_passed_as_its_bytes_and_a_string_needs_its_nul)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_function *f = fn_at(vm, (void *)fill, "void(ptr, size, u8)");
    stvm_ffi_function *len = NULL;
    cr_assert_eq(stvm_ffi_function_new(vm, NULL, "strlen", "size(str)", &len), STVM_OK);
    stvm_oop bytes;
    cr_assert_eq(stvm_bytes_new(vm, 8, &bytes), STVM_OK);
    uint8_t *data;
    size_t size;
    cr_assert_eq(stvm_bytes_data(vm, bytes, &data, &size), STVM_OK);
    stvm_oop args[3] = {bytes, mk_i(vm, 5), mk_i(vm, 'a')};
    cr_assert_eq(stvm_ffi_call(vm, f, args, 3, NULL), STVM_OK);
    cr_assert_eq(memcmp(data, "aaaaa\0\0\0", 8), 0);
    stvm_oop r;
    cr_assert_eq(call1(vm, len, bytes, &r), STVM_OK);
    cr_assert_eq(val_i(vm, r), 5);
    memset(data, 'b', 8);   /* no NUL left */
    expect_refused(vm, len, &bytes, 1, STVM_PRIM_ERR_BAD_ARGUMENT);
    stvm_oop_release(vm, bytes);
    vm_done(vm);
}

/* ---- failures before the call ----------------------------------------------------------- */

Test(ffi, a_wrong_argument_count_fails_with_bad_num_args_and_calls_nothing)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_function *fn = fn_at(vm, (void *)add, "i64(i64,i64)");
    stvm_oop args[3] = {mk_i(vm, 1), mk_i(vm, 2), mk_i(vm, 3)};
    expect_refused(vm, fn, args, 1, STVM_PRIM_ERR_BAD_NUM_ARGS);
    expect_refused(vm, fn, args, 3, STVM_PRIM_ERR_BAD_NUM_ARGS);
    expect_refused(vm, fn, NULL, 0, STVM_PRIM_ERR_BAD_NUM_ARGS);
    stvm_ffi_stats s;
    cr_assert_eq(stvm_ffi_get_stats(vm, &s), STVM_OK);
    cr_assert_eq(s.callouts_failed, 3);
    cr_assert_eq(s.callouts, 0);
    vm_done(vm);
}

Test(ffi, a_bad_second_argument_calls_nothing_and_allocates_nothing)
{
    stvm_vm *vm = vm_make_sim(31, STVM_DELAY_CLOCK_US);
    stvm_ffi_function *fn = fn_at(vm, (void *)add, "i64(i64,i64)");
    stvm_oop big = mk_i(vm, INT64_MAX);
    uint64_t live = stats_of(vm).objects_live;
    stvm_oop args[2] = {big, GARBAGE};
    expect_refused(vm, fn, args, 2, STVM_PRIM_ERR_BAD_ARGUMENT);
    cr_assert_eq(stats_of(vm).objects_live, live);
    vm_done(vm);
}

/* ---- from a green process: the stack ---------------------------------------------------- */

typedef struct in_process {
    stvm_vm *vm;
    stvm_ffi_function *fn;
    int rc, failure;
    int64_t value;
    int bad_line;
} in_process;

static void call_deep(stvm_vm *vm, void *arg)
{
    in_process *s = arg;
    stvm_oop r = STVM_NIL, a = 0;
    GCHECK(s, stvm_int_from_i64(vm, 3, &a) == STVM_OK);
    s->rc = stvm_ffi_call(vm, s->fn, &a, 1, &r);
    s->failure = stvm_ffi_last_failure(vm);
    if (s->rc == STVM_OK)
        stvm_int_to_i64(vm, r, &s->value);
}

Test(ffi, a_callout_needing_more_stack_than_is_left_fails_with_limit_exceeded)
{
    stvm_vm *vm = vm_make(NULL);
    in_process s = {.vm = vm, .fn = fn_at(vm, (void *)deep, "i64(i64)")};
    cr_assert_eq(stvm_ffi_function_set_stack(vm, s.fn, 48 * 1024), STVM_OK);
    calls = 0;
    spawn(vm, 40, "small stack", call_deep, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc, STVM_EPRIM);
    cr_assert_eq(s.failure, STVM_PRIM_ERR_LIMIT_EXCEEDED);
    /* The same call in a process with room for it. */
    s.rc = -1;
    cr_assert_eq(stvm_spawn_sized(vm, 40, "big stack", call_deep, &s, 128 * 1024, NULL),
                 STVM_OK);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc, STVM_OK);
    cr_assert_eq(s.value, (int64_t)(unsigned char)3);
    SCENARIO_DONE(&s);
}

Test(ffi, the_default_stack_need_fits_a_default_process_with_room_to_spare)
{
    stvm_vm *vm = vm_make(NULL);
    in_process s = {.vm = vm, .fn = fn_at(vm, (void *)id_i64, "i64(i64)")};
    spawn(vm, 40, "caller", call_deep, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(s.rc, STVM_OK);
    cr_assert_eq(s.value, 3);
    SCENARIO_DONE(&s);
}

#if !defined(__SANITIZE_ADDRESS__)

/* A callout told to skip the check overflows its process's stack: the guard region
 * faults and the process is named before the program aborts (the neighbour's stack is
 * never written). In a child, as the abort ends it. */
static void overflow_in_child(void *arg)
{
    (void)arg;
    stvm_vm *vm = NULL;
    if (stvm_vm_create(NULL, &vm) != STVM_OK)
        _exit(3);
    static in_process s;
    s.vm = vm;
    if (stvm_ffi_function_at(vm, (void *)deep, "i64(i64)", &s.fn) ||
        stvm_ffi_function_set_stack(vm, s.fn, 0) ||
        stvm_spawn(vm, 40, "deep caller", call_deep, &s, NULL))
        _exit(4);
    stvm_run(vm);
    _exit(5);
}

Test(ffi, a_callout_that_overflows_the_process_stack_is_caught_and_named)
{
    char err[1024];
    int status = run_in_child(overflow_in_child, NULL, err, sizeof err);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "the child ended with status %#x; stderr: %s", status, err);
    cr_assert_not_null(strstr(err, "stack overflow in process 'deep caller'"), "%s", err);
}

#endif

/* ---- callbacks on the VM's thread ---------------------------------------------------- */

typedef struct sorting {
    stvm_vm *vm;
    stvm_ffi_function *qsort_fn;
    void *outer_c, *inner_c;      /* the comparators' C functions */
    stvm_process *caller;
    stvm_semaphore *gate;         /* what a blocking comparator waits on */
    int outer_calls, inner_calls;
    bool inner_sorted, ran_in_caller;
    int depth, max_depth;
    int bad_line;
} sorting;

static int int_at(stvm_vm *vm, stvm_oop p)
{
    void *addr = NULL;
    stvm_oop_ptr(vm, p, &addr);
    return addr ? *(const int *)addr : 0;
}

/* qsort(base, n, sizeof(int), compar) through the FFI. */
static int sort_ints(stvm_vm *vm, sorting *s, int *base, int n, void *compar)
{
    stvm_oop args[4];
    stvm_ptr_oop(vm, base, &args[0]);
    stvm_int_from_i64(vm, n, &args[1]);
    stvm_int_from_i64(vm, sizeof(int), &args[2]);
    stvm_ptr_oop(vm, compar, &args[3]);
    int rc = stvm_ffi_call(vm, s->qsort_fn, args, 4, NULL);
    stvm_oop_release(vm, args[0]);
    stvm_oop_release(vm, args[3]);
    return rc;
}

static int compare_oops(stvm_vm *vm, const stvm_oop *args, stvm_oop *result)
{
    int a = int_at(vm, args[0]), b = int_at(vm, args[1]);
    return stvm_int_from_i64(vm, (a > b) - (a < b), result);
}

static int inner_compare(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs,
                         stvm_oop *result)
{
    sorting *s = arg;
    s->inner_calls++;
    if (s->depth + 1 > s->max_depth)
        s->max_depth = s->depth + 1;
    return compare_oops(vm, args, result);
}

/* The outer comparator sorts a small array of its own, through a second callback, the
 * first time it runs: a callback two deep. */
static int outer_compare(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs,
                         stvm_oop *result)
{
    sorting *s = arg;
    GCHECK(s, nargs == 2);
    s->outer_calls++;
    s->ran_in_caller |= stvm_vm_active_process(vm) == s->caller;
    if (s->outer_calls == 1 && s->inner_c) {
        int small[5] = {3, 1, 4, 1, 5};
        s->depth = 1;
        GCHECK(s, sort_ints(vm, s, small, 5, s->inner_c) == STVM_OK);
        s->depth = 0;
        s->inner_sorted = small[0] == 1 && small[1] == 1 && small[2] == 3 && small[4] == 5;
    }
    return compare_oops(vm, args, result);
}

static int numbers[64];

static void sort_numbers(stvm_vm *vm, void *arg)
{
    sorting *s = arg;
    s->caller = stvm_vm_active_process(vm);
    GCHECK(s, sort_ints(vm, s, numbers, 64, s->outer_c) == STVM_OK);
}

static void make_sorting(sorting *s, bool nested)
{
    stvm_vm *vm = s->vm;
    stvm_ffi_callback *outer, *inner;
    cr_assert_eq(stvm_ffi_function_new(vm, NULL, "qsort", "void(ptr, size, size, ptr)",
                                       &s->qsort_fn), STVM_OK);
    cr_assert_eq(stvm_ffi_callback_new(vm, "i32(ptr, ptr)", outer_compare, s, &outer,
                                       &s->outer_c), STVM_OK);
    if (nested)
        cr_assert_eq(stvm_ffi_callback_new(vm, "i32(ptr, ptr)", inner_compare, s, &inner,
                                           &s->inner_c), STVM_OK);
    uint32_t seed = 7;
    for (int i = 0; i < 64; i++)
        numbers[i] = (int)(lcg(&seed) % 1000);
}

static void expect_sorted(void)
{
    for (int i = 1; i < 64; i++)
        cr_assert_leq(numbers[i - 1], numbers[i], "numbers[%d]", i);
}

Test(ffi, qsort_calls_back_into_the_calling_process_on_its_own_stack)
{
    sorting s = {.vm = vm_make(NULL)};
    make_sorting(&s, false);
    spawn(s.vm, 40, "sorter", sort_numbers, &s);
    uint64_t live = stats_of(s.vm).objects_live;
    RUN_OK_GREEN(&s);
    expect_sorted();
    cr_assert_gt(s.outer_calls, 63);
    cr_assert(s.ran_in_caller, "the comparator ran as the calling process");
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(s.vm, &st), STVM_OK);
    cr_assert_eq(st.callbacks_nested, (uint64_t)s.outer_calls);
    cr_assert_eq(st.callbacks_queued, 0);
    cr_assert_eq(st.callbacks_failed, 0);
    cr_assert_eq(stats_of(s.vm).objects_live, live, "every argument oop was released");
    SCENARIO_DONE(&s);
}

Test(ffi, a_callback_makes_a_callout_that_calls_back_two_deep)
{
    sorting s = {.vm = vm_make(NULL)};
    make_sorting(&s, true);
    spawn(s.vm, 40, "sorter", sort_numbers, &s);
    RUN_OK_GREEN(&s);
    expect_sorted();
    cr_assert(s.inner_sorted, "the inner sort, two callbacks deep, sorted");
    cr_assert_gt(s.inner_calls, 0);
    cr_assert_eq(s.max_depth, 2);
    SCENARIO_DONE(&s);
}

Test(ffi, the_embedding_thread_outside_run_gets_its_callbacks_nested_too)
{
    sorting s = {.vm = vm_make(NULL)};
    make_sorting(&s, true);
    cr_assert_eq(sort_ints(s.vm, &s, numbers, 64, s.outer_c), STVM_OK);
    expect_sorted();
    cr_assert(s.inner_sorted);
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(s.vm, &st), STVM_OK);
    cr_assert_eq(st.callbacks_refused, 0);
    SCENARIO_DONE(&s);
}

/* ---- callbacks: types, failures, freeing ------------------------------------------------- */

typedef struct answering {
    int rc;                  /* what the handler answers */
    stvm_oop (*make)(stvm_vm *vm, const stvm_oop *args);
    int seen;
    double seen_f;
} answering;

static int answer_handler(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs,
                          stvm_oop *result)
{
    answering *a = arg;
    a->seen++;
    if (nargs == 1 && stvm_float_value(vm, args[0], &a->seen_f) != STVM_OK)
        a->seen_f = NAN;
    *result = a->make(vm, args);
    return a->rc;
}

static stvm_oop echo_first(stvm_vm *vm, const stvm_oop *args)
{
    (void)vm;
    return args[0];
}

static stvm_oop make_300(stvm_vm *vm, const stvm_oop *args)
{
    (void)args;
    stvm_oop o = STVM_NIL;
    stvm_int_from_i64(vm, 300, &o);
    return o;
}

static stvm_oop make_half(stvm_vm *vm, const stvm_oop *args)
{
    (void)args;
    stvm_oop o = STVM_NIL;
    stvm_float_new(vm, 0.5, &o);
    return o;
}

/* A callback's C function, called through the FFI from the embedding thread. */
static stvm_oop call_back(stvm_vm *vm, const char *sig, answering *a, stvm_oop arg,
                          stvm_ffi_callback **cb)
{
    void *c = NULL;
    cr_assert_eq(stvm_ffi_callback_new(vm, sig, answer_handler, a, cb, &c), STVM_OK);
    stvm_ffi_function *fn = fn_at(vm, c, sig);
    stvm_oop r = SENTINEL;
    cr_assert_eq(stvm_ffi_call(vm, fn, &arg, 1, &r), STVM_OK);
    return r;
}

Test(ffi, callback_arguments_and_answers_cross_with_their_types)
{
    stvm_vm *vm = vm_make_sim(31, STVM_DELAY_CLOCK_US);
    stvm_ffi_callback *cb;
    answering a = {.make = echo_first};
    stvm_oop arg = mk_i(vm, INT64_MIN);
    stvm_oop r = call_back(vm, "i64(i64)", &a, arg, &cb);
    uint64_t live = stats_of(vm).objects_live;   /* the callback queue's, and 2 boxes */
    cr_assert_eq(val_i(vm, r), INT64_MIN, "a boxed argument and a boxed answer");
    stvm_oop_release(vm, r);
    stvm_oop_release(vm, arg);
    live -= 2;
    stvm_oop f;
    cr_assert_eq(stvm_float_new(vm, -INFINITY, &f), STVM_OK);
    r = call_back(vm, "f64(f64)", &a, f, &cb);
    double d = 0;
    cr_assert_eq(stvm_float_value(vm, r, &d), STVM_OK);
    cr_assert(d == -INFINITY && a.seen_f == -INFINITY);
    stvm_oop_release(vm, r);
    stvm_oop_release(vm, f);
    answering h = {.make = make_half};
    r = call_back(vm, "f32(u8)", &h, mk_i(vm, 255), &cb);
    cr_assert_eq(stvm_float_value(vm, r, &d), STVM_OK);
    cr_assert(d == 0.5, "the handler's new float became C's answer");
    stvm_oop_release(vm, r);
    cr_assert_eq(stats_of(vm).objects_live, live, "the handler's answer was released");
    vm_done(vm);
}

Test(ffi, a_failing_handler_or_an_answer_that_does_not_fit_gives_c_zero_and_counts)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_ffi_callback *cb;
    answering fails = {.rc = STVM_ESTATE, .make = echo_first};
    stvm_oop r = call_back(vm, "i32(i32)", &fails, mk_i(vm, 9), &cb);
    cr_assert_eq(val_i(vm, r), 0);
    answering too_big = {.make = make_300};
    r = call_back(vm, "u8(u8)", &too_big, mk_i(vm, 1), &cb);
    cr_assert_eq(val_i(vm, r), 0, "300 does not fit a u8");
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(vm, &st), STVM_OK);
    cr_assert_eq(st.callbacks_failed, 2);
    cr_assert_eq(st.callbacks_nested, 2);
    vm_done(vm);
}

Test(ffi, a_freed_callback_answers_zero_without_running_its_handler)
{
    stvm_vm *vm = vm_make(NULL);
    answering a = {.make = echo_first};
    void *c = NULL;
    stvm_ffi_callback *cb;
    cr_assert_eq(stvm_ffi_callback_new(vm, "i64(i64)", answer_handler, &a, &cb, &c), STVM_OK);
    stvm_ffi_function *fn = fn_at(vm, c, "i64(i64)");
    stvm_oop r;
    cr_assert_eq(call1(vm, fn, mk_i(vm, 5), &r), STVM_OK);
    cr_assert_eq(val_i(vm, r), 5);
    stvm_ffi_callback_free(vm, cb);
    stvm_ffi_callback_free(vm, cb);   /* twice: ignored */
    cr_assert_eq(call1(vm, fn, mk_i(vm, 5), &r), STVM_OK);
    cr_assert_eq(val_i(vm, r), 0);
    cr_assert_eq(a.seen, 1, "the handler did not run again");
    stvm_ffi_stats st;
    cr_assert_eq(stvm_ffi_get_stats(vm, &st), STVM_OK);
    cr_assert_eq(st.callbacks_refused, 1);
    vm_done(vm);
}

/* Found by the allocation-failure suite, which checks the invariants mid-run: the first
 * callback starts the VM's callback process (priority 70) and only made it ready, so a
 * process of lower priority that made it went on running while a higher one was
 * runnable. It now lets the callback process start, as Pharo's preemption rule wants. */
typedef struct first_cb {
    stvm_vm *vm;
    int bad_line;
    int rc, invariants;
    char why[200];
    stvm_ffi_callback *cb;
} first_cb;

static void makes_first_callback(stvm_vm *vm, void *arg)
{
    first_cb *f = arg;
    static answering a = {.make = echo_first};
    void *c = NULL;
    f->rc = stvm_ffi_callback_new(vm, "i64(i64)", answer_handler, &a, &f->cb, &c);
    f->invariants = stvm_vm_check_invariants(vm, f->why, sizeof f->why);
    stvm_ffi_callback_free(vm, f->cb);
}

Test(ffi, the_first_callback_made_by_a_process_lets_the_higher_callback_process_start)
{
    first_cb f = {.vm = vm_make(NULL)};
    spawn(f.vm, 40, "maker", makes_first_callback, &f);
    RUN_OK_GREEN(&f);
    cr_assert_eq(f.rc, STVM_OK);
    cr_assert_eq(f.invariants, STVM_OK, "%s", f.why);
    SCENARIO_DONE(&f);
}

Test(ffi, callback_new_refuses_bad_arguments)
{
    stvm_vm *vm = vm_make(NULL);
    answering a = {.make = echo_first};
    stvm_ffi_callback *cb = (stvm_ffi_callback *)0x1;
    void *c = (void *)0x1;
    cr_assert_eq(stvm_ffi_callback_new(NULL, "i64()", answer_handler, &a, &cb, &c), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_callback_new(vm, NULL, answer_handler, &a, &cb, &c), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_callback_new(vm, "i64()", NULL, &a, &cb, &c), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_callback_new(vm, "i64()", answer_handler, &a, NULL, &c), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_callback_new(vm, "i64()", answer_handler, &a, &cb, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_ffi_callback_new(vm, "i64(void)", answer_handler, &a, &cb, &c),
                 STVM_EINVAL);
    cr_assert_eq(cb, (stvm_ffi_callback *)0x1);
    cr_assert_eq(c, (void *)0x1);
    stvm_ffi_callback_free(NULL, cb);
    stvm_ffi_callback_free(vm, NULL);
    vm_done(vm);
}

Test(ffi, floats_and_addresses_are_objects_the_caller_releases)
{
    stvm_vm *vm = vm_make(NULL);
    uint64_t live = stats_of(vm).objects_live;
    stvm_oop f = SENTINEL, p = SENTINEL;
    cr_assert_eq(stvm_float_new(NULL, 1.0, &f), STVM_EINVAL);
    cr_assert_eq(stvm_float_new(vm, 1.0, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_ptr_oop(NULL, &f, &p), STVM_EINVAL);
    cr_assert_eq(stvm_ptr_oop(vm, &f, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_float_new(vm, 2.5, &f), STVM_OK);
    cr_assert_eq(stvm_ptr_oop(vm, &f, &p), STVM_OK);
    double d;
    void *q;
    cr_assert_eq(stvm_float_value(vm, p, &d), STVM_EINVAL, "an address is no float");
    cr_assert_eq(stvm_oop_ptr(vm, f, &q), STVM_EINVAL, "a float is no address");
    cr_assert_eq(stvm_float_value(vm, mk_i(vm, 1), &d), STVM_EINVAL);
    cr_assert_eq(stvm_float_value(vm, f, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_oop_ptr(vm, p, NULL), STVM_EINVAL);
    cr_assert_eq(stats_of(vm).objects_live, live + 2);
    cr_assert_eq(stats_of(vm).boxed_allocated, 0, "floats are not boxed integers");
    cr_assert_eq(stvm_oop_release(vm, f), STVM_OK);
    cr_assert_eq(stvm_oop_release(vm, p), STVM_OK);
    cr_assert_eq(stvm_float_value(vm, f, &d), STVM_EINVAL, "released");
    cr_assert_eq(stvm_oop_release(vm, p), STVM_EINVAL, "released twice");
    cr_assert_eq(stats_of(vm).objects_live, live);
    vm_done(vm);
}

/* The comparator frees the very qsort function that calls it, on its first call. */
static int freeing_compare(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs,
                           stvm_oop *result)
{
    sorting *s = arg;
    if (s->outer_calls++ == 0)
        stvm_ffi_function_free(vm, s->qsort_fn);
    return compare_oops(vm, args, result);
}

Test(ffi, a_function_freed_by_its_own_callback_finishes_the_call_it_is_in)
{
    sorting s = {.vm = vm_make(NULL)};
    stvm_ffi_callback *cb;
    cr_assert_eq(stvm_ffi_function_new(s.vm, NULL, "qsort", "void(ptr, size, size, ptr)",
                                       &s.qsort_fn), STVM_OK);
    cr_assert_eq(stvm_ffi_callback_new(s.vm, "i32(ptr, ptr)", freeing_compare, &s, &cb,
                                       &s.outer_c), STVM_OK);
    uint32_t seed = 3;
    for (int i = 0; i < 64; i++)
        numbers[i] = (int)(lcg(&seed) % 1000);
    cr_assert_eq(sort_ints(s.vm, &s, numbers, 64, s.outer_c), STVM_OK);
    expect_sorted();
    SCENARIO_DONE(&s);
}

/* The comparator frees the qsort function, then waits on a semaphore nobody signals. */
static int freeing_then_blocking_compare(stvm_vm *vm, void *arg, const stvm_oop *args,
                                         int nargs, stvm_oop *result)
{
    sorting *s = arg;
    if (s->outer_calls++ == 0) {
        stvm_ffi_function_free(vm, s->qsort_fn);
        s->qsort_fn = NULL;   /* else the leak check finds it reachable from here */
        GCHECK(s, stvm_semaphore_wait(vm, s->gate) == STVM_OK);
    }
    return compare_oops(vm, args, result);
}

/* Looks qsort up itself: an allocation made under Criterion's frames would be hidden
 * from the leak check by tests/lsan.supp, one made by a process is not. */
static void look_up_and_sort(stvm_vm *vm, void *arg)
{
    sorting *s = arg;
    GCHECK(s, stvm_ffi_function_new(vm, NULL, "qsort", "void(ptr, size, size, ptr)",
                                    &s->qsort_fn) == STVM_OK);
    sort_numbers(vm, arg);
}

static void terminate_sorter(stvm_vm *vm, void *arg)
{
    sorting *s = arg;
    GCHECK(s, s->outer_calls == 1);
    GCHECK(s, stvm_process_terminate(vm, s->caller) == STVM_OK);
}

Test(ffi, a_process_terminated_in_a_callback_lets_go_of_the_function_it_was_calling)
{
    sorting s = {.vm = vm_make(NULL)};
    stvm_ffi_callback *cb;
    cr_assert_eq(stvm_ffi_callback_new(s.vm, "i32(ptr, ptr)", freeing_then_blocking_compare,
                                       &s, &cb, &s.outer_c), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.gate), STVM_OK);
    uint64_t live = stats_of(s.vm).objects_live;
    s.caller = spawn(s.vm, 40, "sorter", look_up_and_sort, &s);
    stvm_process *terminator = spawn(s.vm, 30, "terminator", terminate_sorter, &s);
    RUN_OK_GREEN(&s);
    cr_assert_eq(state_of(s.vm, s.caller), STVM_PROCESS_TERMINATED);
    cr_assert_eq(stvm_process_release(s.vm, s.caller), STVM_OK);
    cr_assert_eq(stvm_process_release(s.vm, terminator), STVM_OK);
    /* The two addresses sort_ints made are its own, abandoned with its frame; the
     * callback's two argument oops went. */
    cr_assert_eq(stats_of(s.vm).objects_live, live + 2, "live %llu, before %llu",
                 (unsigned long long)stats_of(s.vm).objects_live, (unsigned long long)live);
    cr_assert_eq(stvm_semaphore_free(s.vm, s.gate), STVM_OK);
    /* The function's memory: the leak check under ASan fails the run if it was kept. */
    SCENARIO_DONE(&s);
}
