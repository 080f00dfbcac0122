/*
 * SmallIntegers and boxed Large(Positive|Negative)Integers: ranges for 31- and 61-bit
 * VMs, conversions, arithmetic across representations with normalisation, counters
 * and object accounting, and rejection of anything that is not an integer of this VM.
 */
#include <stdint.h>
#include <string.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(integer, .timeout = 30);

static stvm_vm *vm_bits(int bits)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.smallint_bits = bits;
    return vm_make(&cfg);
}

static void expect_class(stvm_vm *vm, stvm_oop o, const char *cls)
{
    const char *got = stvm_oop_class_name(vm, o);
    cr_assert_not_null(got, "no class name (expected %s)", cls);
    cr_assert_str_eq(got, cls);
    cr_assert_eq(stvm_oop_is_smallint(o), strcmp(cls, "SmallInteger") == 0);
    cr_assert(stvm_oop_is_integer(vm, o));
}

static void release(stvm_vm *vm, stvm_oop o)
{
    cr_assert_eq(stvm_oop_release(vm, o), STVM_OK);
}

/* ---- ranges -------------------------------------------------------------------- */

/* The SmallInteger range of a VM of `bits` bits is [-2^(bits-1), 2^(bits-1)-1]: its
 * ends are immediates and one beyond each end is a box of the right sign. */
static void expect_smallint_range(int bits)
{
    stvm_vm *vm = vm_bits(bits);
    int64_t max = ((int64_t)1 << (bits - 1)) - 1, min = -((int64_t)1 << (bits - 1));
    cr_assert_eq(stvm_smallint_max(vm), max);
    cr_assert_eq(stvm_smallint_min(vm), min);

    expect_class(vm, mk_i(vm, max), "SmallInteger");
    expect_class(vm, mk_i(vm, min), "SmallInteger");
    stvm_oop above = mk_i(vm, max + 1), below = mk_i(vm, min - 1);
    expect_class(vm, above, "LargePositiveInteger");
    expect_class(vm, below, "LargeNegativeInteger");
    cr_assert_eq(val_i(vm, above), max + 1);
    cr_assert_eq(val_i(vm, below), min - 1);
    release(vm, above);
    release(vm, below);
    vm_done(vm);
}

Test(integer, smallint_range_of_31_bit_vm_is_minus_2_30_to_2_30_minus_1)
{
    expect_smallint_range(31);
}

Test(integer, smallint_range_of_61_bit_vm_is_minus_2_60_to_2_60_minus_1)
{
    expect_smallint_range(61);
}

Test(integer, default_vm_has_61_bit_smallintegers)
{
    stvm_vm *vm = vm_make(NULL);
    cr_assert_eq(stvm_smallint_max(vm), ((int64_t)1 << 60) - 1);
    cr_assert_eq(stvm_smallint_min(vm), -((int64_t)1 << 60));
    vm_done(vm);
}

/* ---- conversions --------------------------------------------------------------- */

static void roundtrip_u64_on(int bits)
{
    stvm_vm *vm = vm_bits(bits);
    uint64_t max = (uint64_t)stvm_smallint_max(vm);
    const uint64_t values[] = {
        0, 1, max, max + 1, (uint64_t)1 << 32, (uint64_t)1 << 52,
        3900000000000000ull /* a UTC microsecond timestamp since 1901 */, UINT64_MAX,
    };
    enum { N = sizeof values / sizeof values[0] };
    stvm_stats before = stats_of(vm);
    stvm_oop oops[N];
    uint64_t boxes = 0;
    for (int i = 0; i < N; i++) {
        oops[i] = mk_u(vm, values[i]);
        bool small = values[i] <= max;
        boxes += !small;
        expect_class(vm, oops[i], small ? "SmallInteger" : "LargePositiveInteger");
        cr_assert_eq(val_u(vm, oops[i]), values[i], "round trip of %llu on %d bits",
                     (unsigned long long)values[i], bits);
        if (values[i] <= INT64_MAX)
            cr_assert_eq((uint64_t)val_i(vm, oops[i]), values[i]);
    }
    stvm_stats mid = stats_of(vm);
    cr_assert_eq(mid.boxed_allocated - before.boxed_allocated, boxes);
    cr_assert_eq(mid.objects_live - before.objects_live, boxes);
    for (int i = 0; i < N; i++)
        release(vm, oops[i]);
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.objects_live, before.objects_live);
    cr_assert_eq(after.bytes_live, before.bytes_live);
    vm_done(vm);
}

Test(integer, u64_round_trips_exactly_on_31_bit_vm)
{
    roundtrip_u64_on(31);
}

Test(integer, u64_round_trips_exactly_on_61_bit_vm)
{
    roundtrip_u64_on(61);
}

Test(integer, i64_extremes_round_trip_as_boxes)
{
    stvm_vm *vm = vm_bits(61);
    stvm_oop mn = mk_i(vm, INT64_MIN), mx = mk_i(vm, INT64_MAX), m1 = mk_i(vm, -1);
    expect_class(vm, mn, "LargeNegativeInteger");
    expect_class(vm, mx, "LargePositiveInteger");
    expect_class(vm, m1, "SmallInteger");
    cr_assert_eq(val_i(vm, mn), INT64_MIN);
    cr_assert_eq(val_i(vm, mx), INT64_MAX);
    cr_assert_eq(val_i(vm, m1), -1);
    cr_assert_eq(val_u(vm, mx), (uint64_t)INT64_MAX);
    release(vm, mn);
    release(vm, mx);
    vm_done(vm);
}

Test(integer, reading_out_of_range_is_erange_and_leaves_out_untouched)
{
    stvm_vm *vm = vm_bits(61);
    stvm_oop big = mk_u(vm, UINT64_MAX), neg = mk_i(vm, -5), negbox = mk_i(vm, INT64_MIN);
    int64_t i = 77;
    uint64_t u = 77;
    cr_assert_eq(stvm_int_to_i64(vm, big, &i), STVM_ERANGE);
    cr_assert_eq(i, 77);
    cr_assert_eq(stvm_int_to_u64(vm, neg, &u), STVM_ERANGE);
    cr_assert_eq(stvm_int_to_u64(vm, negbox, &u), STVM_ERANGE);
    cr_assert_eq(u, 77);
    /* not integers at all */
    stvm_semaphore *sem;
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    cr_assert_eq(stvm_int_to_i64(vm, GARBAGE, &i), STVM_EINVAL);
    cr_assert_eq(stvm_int_to_u64(vm, stvm_semaphore_oop(sem), &u), STVM_EINVAL);
    cr_assert_eq(stvm_int_to_i64(vm, STVM_NIL, &i), STVM_EINVAL);
    cr_assert_eq(stvm_int_to_i64(vm, big, NULL), STVM_EINVAL);
    cr_assert_eq(i, 77);
    cr_assert_eq(u, 77);
    release(vm, big);
    release(vm, negbox);
    cr_assert_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    vm_done(vm);
}

Test(integer, from_i64_and_u64_reject_null_arguments)
{
    stvm_vm *vm = vm_bits(61);
    stvm_oop o = SENTINEL;
    cr_assert_eq(stvm_int_from_i64(vm, 1, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_int_from_u64(vm, 1, NULL), STVM_EINVAL);
    cr_assert_eq(stvm_int_from_i64(NULL, 1, &o), STVM_EINVAL);
    cr_assert_eq(stvm_int_from_u64(NULL, 1, &o), STVM_EINVAL);
    cr_assert_eq(o, SENTINEL);
    vm_done(vm);
}

/* ---- arithmetic ---------------------------------------------------------------- */

Test(integer, add_overflows_into_box_and_sub_normalises_back_on_61_bits)
{
    stvm_vm *vm = vm_bits(61);
    int64_t max = stvm_smallint_max(vm), min = stvm_smallint_min(vm);
    stvm_oop one = mk_i(vm, 1), r, back;

    cr_assert_eq(stvm_int_add(vm, mk_i(vm, max), one, &r), STVM_OK);
    expect_class(vm, r, "LargePositiveInteger");
    cr_assert_eq(val_i(vm, r), max + 1);
    cr_assert_eq(stvm_int_sub(vm, r, one, &back), STVM_OK);
    expect_class(vm, back, "SmallInteger");
    cr_assert_eq(val_i(vm, back), max);
    cr_assert_eq(back, mk_i(vm, max), "normalised result must be the immediate");
    release(vm, r);

    cr_assert_eq(stvm_int_sub(vm, mk_i(vm, min), one, &r), STVM_OK);
    expect_class(vm, r, "LargeNegativeInteger");
    cr_assert_eq(val_i(vm, r), min - 1);
    cr_assert_eq(stvm_int_add(vm, r, one, &back), STVM_OK);
    expect_class(vm, back, "SmallInteger");
    cr_assert_eq(val_i(vm, back), min);
    release(vm, r);
    vm_done(vm);
}

Test(integer, add_and_sub_normalise_across_the_31_bit_boundary)
{
    stvm_vm *vm = vm_bits(31);
    int64_t two30 = (int64_t)1 << 30;
    stvm_oop big = mk_i(vm, two30), r;
    expect_class(vm, big, "LargePositiveInteger");

    /* 2^30 + (-1) is SmallInteger maxVal again */
    cr_assert_eq(stvm_int_add(vm, big, mk_i(vm, -1), &r), STVM_OK);
    expect_class(vm, r, "SmallInteger");
    cr_assert_eq(val_i(vm, r), two30 - 1);

    /* (-1) + 2^30: the box as the second operand */
    cr_assert_eq(stvm_int_add(vm, mk_i(vm, -1), big, &r), STVM_OK);
    expect_class(vm, r, "SmallInteger");
    cr_assert_eq(val_i(vm, r), two30 - 1);

    /* 2^30 - 2^30 = 0 */
    stvm_oop big2 = mk_i(vm, two30);
    cr_assert_neq(big, big2, "two boxes are two objects");
    cr_assert_eq(stvm_int_sub(vm, big, big2, &r), STVM_OK);
    expect_class(vm, r, "SmallInteger");
    cr_assert_eq(val_i(vm, r), 0);

    /* -2^30 - 1 boxes, -(2^30+1) + 1 = -2^30 is an immediate again */
    stvm_oop nb;
    cr_assert_eq(stvm_int_sub(vm, mk_i(vm, -two30), mk_i(vm, 1), &nb), STVM_OK);
    expect_class(vm, nb, "LargeNegativeInteger");
    cr_assert_eq(val_i(vm, nb), -two30 - 1);
    cr_assert_eq(stvm_int_add(vm, nb, mk_i(vm, 1), &r), STVM_OK);
    expect_class(vm, r, "SmallInteger");
    cr_assert_eq(val_i(vm, r), -two30);

    /* box + box stays boxed; negative box + positive box can be an immediate again */
    stvm_oop s;
    cr_assert_eq(stvm_int_add(vm, big, big2, &s), STVM_OK);
    expect_class(vm, s, "LargePositiveInteger");
    cr_assert_eq(val_i(vm, s), 2 * two30);
    cr_assert_eq(stvm_int_add(vm, nb, s, &r), STVM_OK);   /* -(2^30+1) + 2^31 */
    expect_class(vm, r, "SmallInteger");
    cr_assert_eq(val_i(vm, r), two30 - 1);
    cr_assert_eq(stvm_int_add(vm, s, s, &r), STVM_OK);
    expect_class(vm, r, "LargePositiveInteger");
    cr_assert_eq(val_i(vm, r), 4 * two30);
    release(vm, r);
    release(vm, s);
    release(vm, nb);
    release(vm, big);
    release(vm, big2);
    vm_done(vm);
}

Test(integer, add_beyond_64_bit_magnitude_is_erange)
{
    stvm_vm *vm = vm_bits(61);
    stvm_oop umax = mk_u(vm, UINT64_MAX), r = SENTINEL, neg;
    cr_assert_eq(stvm_int_add(vm, umax, mk_i(vm, 1), &r), STVM_ERANGE);
    cr_assert_eq(r, SENTINEL);
    /* 0 - UINT64_MAX is a LargeNegativeInteger of 64-bit magnitude */
    cr_assert_eq(stvm_int_sub(vm, mk_i(vm, 0), umax, &neg), STVM_OK);
    expect_class(vm, neg, "LargeNegativeInteger");
    int64_t i = 5;
    cr_assert_eq(stvm_int_to_i64(vm, neg, &i), STVM_ERANGE);
    cr_assert_eq(stvm_int_sub(vm, neg, mk_i(vm, 1), &r), STVM_ERANGE);
    cr_assert_eq(r, SENTINEL);
    /* and back: neg + UINT64_MAX == 0 */
    cr_assert_eq(stvm_int_add(vm, neg, umax, &r), STVM_OK);
    cr_assert_eq(r, mk_i(vm, 0));
    release(vm, neg);
    release(vm, umax);
    vm_done(vm);
}

Test(integer, mul_across_representations_boxes_and_normalises)
{
    stvm_vm *vm = vm_bits(31);
    int64_t max = stvm_smallint_max(vm);
    stvm_oop r, r2, r3;
    /* SmallInteger * SmallInteger overflowing into a box */
    cr_assert_eq(stvm_int_mul(vm, mk_i(vm, max), mk_i(vm, 2), &r), STVM_OK);
    expect_class(vm, r, "LargePositiveInteger");
    cr_assert_eq(val_i(vm, r), 2 * max);
    /* box * SmallInteger, negative result */
    cr_assert_eq(stvm_int_mul(vm, r, mk_i(vm, -3), &r2), STVM_OK);
    expect_class(vm, r2, "LargeNegativeInteger");
    cr_assert_eq(val_i(vm, r2), -6 * max);
    /* box * box, both signs */
    cr_assert_eq(stvm_int_mul(vm, r, r, &r3), STVM_OK);
    expect_class(vm, r3, "LargePositiveInteger");
    cr_assert_eq(val_i(vm, r3), 4 * max * max);
    release(vm, r3);
    stvm_oop nb = mk_i(vm, -(max + 2));
    expect_class(vm, nb, "LargeNegativeInteger");
    cr_assert_eq(stvm_int_mul(vm, r, nb, &r3), STVM_OK);
    expect_class(vm, r3, "LargeNegativeInteger");
    cr_assert_eq(val_i(vm, r3), -2 * max * (max + 2));
    release(vm, r3);
    cr_assert_eq(stvm_int_mul(vm, nb, nb, &r3), STVM_OK);
    expect_class(vm, r3, "LargePositiveInteger");
    cr_assert_eq(val_i(vm, r3), (max + 2) * (max + 2));
    release(vm, r3);
    release(vm, nb);
    /* box * 0 is the immediate 0 */
    cr_assert_eq(stvm_int_mul(vm, r, mk_i(vm, 0), &r3), STVM_OK);
    cr_assert_eq(r3, mk_i(vm, 0));
    /* small products stay immediate */
    cr_assert_eq(stvm_int_mul(vm, mk_i(vm, -7), mk_i(vm, 6), &r3), STVM_OK);
    cr_assert_eq(r3, mk_i(vm, -42));
    release(vm, r);
    release(vm, r2);
    vm_done(vm);
}

Test(integer, mul_beyond_64_bits_is_erange_and_leaves_out_untouched)
{
    stvm_vm *vm = vm_bits(61);
    stvm_stats before = stats_of(vm);
    stvm_oop r = SENTINEL;
    int64_t max = stvm_smallint_max(vm);
    /* two SmallIntegers whose product needs ~120 bits */
    cr_assert_eq(stvm_int_mul(vm, mk_i(vm, max), mk_i(vm, max), &r), STVM_ERANGE);
    cr_assert_eq(r, SENTINEL);
    stvm_oop two32 = mk_u(vm, (uint64_t)1 << 32), umax = mk_u(vm, UINT64_MAX);
    /* 2^32 * 2^32 = 2^64 needs 65 bits */
    cr_assert_eq(stvm_int_mul(vm, two32, two32, &r), STVM_ERANGE);
    cr_assert_eq(stvm_int_mul(vm, umax, umax, &r), STVM_ERANGE);
    cr_assert_eq(stvm_int_mul(vm, umax, mk_i(vm, -2), &r), STVM_ERANGE);
    cr_assert_eq(r, SENTINEL);
    /* 2^32 * (2^32 - 1) = 2^64 - 2^32 still fits */
    cr_assert_eq(stvm_int_mul(vm, two32, mk_u(vm, ((uint64_t)1 << 32) - 1), &r), STVM_OK);
    cr_assert_eq(val_u(vm, r), UINT64_MAX - (((uint64_t)1 << 32) - 1));
    release(vm, r);
    release(vm, two32);
    release(vm, umax);
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.objects_live, before.objects_live);
    vm_done(vm);
}

Test(integer, compare_orders_values_across_representations)
{
    stvm_vm *vm = vm_bits(31);
    int64_t two30 = (int64_t)1 << 30;
    const int64_t vals[] = {INT64_MIN, -two30 - 1, -two30, -1, 0, 1, two30 - 1, two30,
                            ((int64_t)1 << 52), INT64_MAX};
    enum { N = sizeof vals / sizeof vals[0] };
    stvm_oop o[N];
    for (int i = 0; i < N; i++)
        o[i] = mk_i(vm, vals[i]);
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            int c = 99;
            cr_assert_eq(stvm_int_compare(vm, o[i], o[j], &c), STVM_OK);
            cr_assert_eq(c, (i > j) - (i < j), "compare(%lld, %lld) = %d", (long long)vals[i],
                         (long long)vals[j], c);
        }
    }
    /* equal values in two different boxes */
    stvm_oop a = mk_u(vm, UINT64_MAX), b = mk_u(vm, UINT64_MAX);
    int c = 99;
    cr_assert_eq(stvm_int_compare(vm, a, b, &c), STVM_OK);
    cr_assert_eq(c, 0);
    cr_assert_eq(stvm_int_compare(vm, a, o[N - 1], &c), STVM_OK);
    cr_assert_eq(c, 1, "UINT64_MAX > INT64_MAX");
    release(vm, a);
    release(vm, b);
    for (int i = 0; i < N; i++)
        release(vm, o[i]);
    vm_done(vm);
}

/* ---- counters and object memory ------------------------------------------------ */

Test(integer, stats_count_boxes_made_and_large_integer_operations)
{
    stvm_vm *vm = vm_bits(61);
    int64_t max = stvm_smallint_max(vm);
    stvm_vm_reset_stats(vm);
    stvm_stats s0 = stats_of(vm);
    cr_assert_eq(s0.boxed_allocated, 0);
    cr_assert_eq(s0.large_int_ops, 0);

    stvm_oop r, r2, big = mk_u(vm, (uint64_t)1 << 61);   /* box, no operation */
    stvm_stats s = stats_of(vm);
    cr_assert_eq(s.boxed_allocated, 1);
    cr_assert_eq(s.large_int_ops, 0);

    cr_assert_eq(stvm_int_add(vm, mk_i(vm, 1), mk_i(vm, 2), &r), STVM_OK);  /* immediate */
    s = stats_of(vm);
    cr_assert_eq(s.boxed_allocated, 1);
    cr_assert_eq(s.large_int_ops, 0);

    cr_assert_eq(stvm_int_add(vm, big, mk_i(vm, 1), &r), STVM_OK);  /* box operand+result */
    s = stats_of(vm);
    cr_assert_eq(s.boxed_allocated, 2);
    cr_assert_eq(s.large_int_ops, 1);

    int c;
    cr_assert_eq(stvm_int_compare(vm, big, mk_i(vm, 3), &c), STVM_OK);   /* box operand */
    s = stats_of(vm);
    cr_assert_eq(s.boxed_allocated, 2);
    cr_assert_eq(s.large_int_ops, 2);

    cr_assert_eq(stvm_int_add(vm, mk_i(vm, max), mk_i(vm, 1), &r2), STVM_OK);  /* boxes */
    s = stats_of(vm);
    cr_assert_eq(s.boxed_allocated, 3);
    cr_assert_eq(s.large_int_ops, 3);

    stvm_oop back;
    cr_assert_eq(stvm_int_sub(vm, r2, mk_i(vm, 1), &back), STVM_OK);  /* box -> immediate */
    s = stats_of(vm);
    cr_assert_eq(s.boxed_allocated, 3);
    cr_assert_eq(s.large_int_ops, 4);
    cr_assert(stvm_oop_is_smallint(back));

    release(vm, r);
    release(vm, r2);
    release(vm, big);
    s = stats_of(vm);
    cr_assert_eq(s.boxed_allocated, 3, "releasing does not change the cumulative count");
    vm_done(vm);
}

Test(integer, objects_live_returns_to_start_after_releasing_every_box)
{
    stvm_vm *vm = vm_bits(31);
    stvm_stats before = stats_of(vm);
    enum { N = 5000 };   /* more than one slab of cells */
    static stvm_oop boxes[N];
    for (int i = 0; i < N; i++)
        boxes[i] = mk_u(vm, ((uint64_t)1 << 40) + (uint64_t)i);
    stvm_stats mid = stats_of(vm);
    cr_assert_eq(mid.objects_live, before.objects_live + N);
    cr_assert_gt(mid.bytes_live, before.bytes_live);
    cr_assert_eq(mid.boxed_allocated, before.boxed_allocated + N);
    for (int i = 0; i < N; i++)
        cr_assert_eq(val_u(vm, boxes[i]), ((uint64_t)1 << 40) + (uint64_t)i);
    for (int i = N; i-- > 0;)
        release(vm, boxes[i]);
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.objects_live, before.objects_live);
    cr_assert_eq(after.bytes_live, before.bytes_live);
    vm_done(vm);
}

Test(integer, release_rejects_garbage_non_boxes_and_double_release)
{
    stvm_vm *vm = vm_bits(61);
    stvm_semaphore *sem;
    stvm_mutex *m;
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    stvm_stats before = stats_of(vm);

    cr_assert_eq(stvm_oop_release(vm, GARBAGE), STVM_EINVAL);
    cr_assert_eq(stvm_oop_release(vm, (stvm_oop)0x10), STVM_EINVAL);
    cr_assert_eq(stvm_oop_release(vm, STVM_TRUE), STVM_EINVAL);
    cr_assert_eq(stvm_oop_release(vm, stvm_semaphore_oop(sem)), STVM_EINVAL);
    cr_assert_eq(stvm_oop_release(vm, stvm_mutex_oop(m)), STVM_EINVAL);
    /* immediates and nil are ignored */
    cr_assert_eq(stvm_oop_release(vm, mk_i(vm, 42)), STVM_OK);
    cr_assert_eq(stvm_oop_release(vm, STVM_NIL), STVM_OK);
    stvm_stats mid = stats_of(vm);
    cr_assert_eq(mid.objects_live, before.objects_live, "nothing released");

    stvm_oop box = mk_u(vm, UINT64_MAX);
    cr_assert_eq(stvm_oop_release(vm, box), STVM_OK);
    cr_assert_eq(stvm_oop_release(vm, box), STVM_EINVAL, "double release");
    cr_assert_eq(stvm_oop_release(NULL, box), STVM_EINVAL);
    cr_assert_null(stvm_oop_class_name(vm, box), "a released box is no object");
    cr_assert(!stvm_oop_is_integer(vm, box));
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.objects_live, before.objects_live);

    /* the semaphore and mutex survived the attempts */
    cr_assert_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    cr_assert_eq(stvm_mutex_free(vm, m), STVM_OK);
    vm_done(vm);
}

Test(integer, bad_operands_are_einval_and_leave_out_untouched)
{
    stvm_vm *vm = vm_bits(31);
    stvm_semaphore *sem;
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    stvm_oop box = mk_u(vm, (uint64_t)1 << 40);
    stvm_oop freed = mk_u(vm, UINT64_MAX);   /* made after `box`: its cell stays free */
    release(vm, freed);
    const stvm_oop bad[] = {GARBAGE, STVM_NIL, STVM_TRUE, STVM_FALSE,
                            stvm_semaphore_oop(sem), freed};
    stvm_oop good[] = {mk_i(vm, 3), box};
    stvm_stats before = stats_of(vm);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (size_t g = 0; g < 2; g++) {
            for (int side = 0; side < 2; side++) {
                stvm_oop a = side ? good[g] : bad[i], b = side ? bad[i] : good[g];
                stvm_oop r = SENTINEL;
                int c = 99;
                cr_assert_eq(stvm_int_add(vm, a, b, &r), STVM_EINVAL, "add bad #%zu", i);
                cr_assert_eq(stvm_int_sub(vm, a, b, &r), STVM_EINVAL, "sub bad #%zu", i);
                cr_assert_eq(stvm_int_mul(vm, a, b, &r), STVM_EINVAL, "mul bad #%zu", i);
                cr_assert_eq(stvm_int_compare(vm, a, b, &c), STVM_EINVAL, "cmp bad #%zu", i);
                cr_assert_eq(r, SENTINEL);
                cr_assert_eq(c, 99);
            }
        }
        cr_assert(!stvm_oop_is_integer(vm, bad[i]), "bad #%zu is no integer", i);
    }
    /* NULL out / NULL vm */
    cr_assert_eq(stvm_int_add(vm, good[0], good[1], NULL), STVM_EINVAL);
    cr_assert_eq(stvm_int_compare(vm, good[0], good[1], NULL), STVM_EINVAL);
    stvm_oop r = SENTINEL;
    cr_assert_eq(stvm_int_add(NULL, good[0], good[0], &r), STVM_EINVAL);
    cr_assert_eq(r, SENTINEL);
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.boxed_allocated, before.boxed_allocated);
    cr_assert_eq(after.large_int_ops, before.large_int_ops);
    cr_assert_eq(after.objects_live, before.objects_live);
    release(vm, box);
    cr_assert_eq(stvm_semaphore_free(vm, sem), STVM_OK);
    vm_done(vm);
}

Test(integer, class_names_of_immediates_boxes_and_nil)
{
    stvm_vm *vm = vm_bits(61);
    cr_assert_str_eq(stvm_oop_class_name(vm, mk_i(vm, -3)), "SmallInteger");
    cr_assert_str_eq(stvm_oop_class_name(vm, STVM_NIL), "UndefinedObject");
    cr_assert_null(stvm_oop_class_name(vm, GARBAGE));
    cr_assert_null(stvm_oop_class_name(NULL, mk_i(vm, 1)));
    cr_assert(stvm_oop_is_smallint(mk_i(vm, 0)));
    cr_assert(!stvm_oop_is_smallint(STVM_NIL));
    cr_assert(!stvm_oop_is_integer(NULL, mk_i(vm, 1)));
    vm_done(vm);
}

Test(integer, a_box_of_one_vm_is_not_an_integer_of_another)
{
    stvm_vm *a = vm_bits(61), *b = vm_bits(61);
    stvm_oop box = mk_u(a, UINT64_MAX);
    cr_assert(stvm_oop_is_integer(a, box));
    cr_assert(!stvm_oop_is_integer(b, box));
    stvm_oop r = SENTINEL;
    cr_assert_eq(stvm_int_add(b, box, mk_i(b, 1), &r), STVM_EINVAL);
    cr_assert_eq(r, SENTINEL);
    cr_assert_eq(stvm_oop_release(b, box), STVM_EINVAL);
    release(a, box);
    vm_done(a);
    vm_done(b);
}
