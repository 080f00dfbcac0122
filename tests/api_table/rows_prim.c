/*
 * The API table's rows for integers, oops, ByteArrays and primitives (stvm/prim.h): how
 * each function is called, what its generated rows need, and the rows written out
 * (tests/test_api_table.c runs them).
 */
#include "api_table.h"

/* Make the call a row of this module describes (c: its arguments, resolved), or answer
 * R_NOT_MINE for another module's function. */
static int call(fx *f, int fn, const args *a, const call_in *c)
{
    stvm_vm *vm = c->vm;
    stvm_semaphore *sem = c->sem;
    stvm_mutex *m = c->m;
    stvm_process *p = c->p;
    union out_slot *o = c->o;
    stvm_oop o0 = c->o0;
    const stvm_oop *argv = c->argv;
    switch (fn) {
    case F_smallint_max: (void)stvm_smallint_max(vm); return R_ANY;
    case F_smallint_min: (void)stvm_smallint_min(vm); return R_ANY;
    case F_oop_is_smallint: return yes(stvm_oop_is_smallint(o0));
    case F_oop_is_integer: return yes(stvm_oop_is_integer(vm, o0));
    case F_int_from_i64: return stvm_int_from_i64(vm, a->n, o ? &o->oop : NULL);
    case F_int_from_u64: return stvm_int_from_u64(vm, a->z, o ? &o->oop : NULL);
    case F_int_to_i64: return stvm_int_to_i64(vm, o0, o ? &o->i64 : NULL);
    case F_int_to_u64: return stvm_int_to_u64(vm, o0, o ? &o->u64 : NULL);
    case F_int_add: return stvm_int_add(vm, o0, argv[0], o ? &o->oop : NULL);
    case F_int_sub: return stvm_int_sub(vm, o0, argv[0], o ? &o->oop : NULL);
    case F_int_mul: return stvm_int_mul(vm, o0, argv[0], o ? &o->oop : NULL);
    case F_int_compare: return stvm_int_compare(vm, o0, argv[0], o ? &o->i : NULL);
    case F_oop_release: return stvm_oop_release(vm, o0);
    case F_bytes_new: return stvm_bytes_new(vm, (size_t)a->z, o ? &o->oop : NULL);
    case F_bytes_data:
        return stvm_bytes_data(vm, o0, o ? &o->bd.data : NULL,
                               a->null_ptr ? NULL : &f->out.bd.size);
    case F_semaphore_oop: (void)stvm_semaphore_oop(sem); return R_ANY;
    case F_mutex_oop: (void)stvm_mutex_oop(m); return R_ANY;
    case F_process_oop: (void)stvm_process_oop(p); return R_ANY;
    case F_oop_class_name: return null_or_not(stvm_oop_class_name(vm, o0));
    case F_primitive_call:
        return stvm_primitive_call(vm, (int)a->m, o0, a->null_ptr ? NULL : argv, (int)a->n,
                                   o ? &o->oop : NULL, a->null_fail ? NULL : &f->fail_code);
    case F_primitive_call_named:
        return stvm_primitive_call_named(
            vm, a->s == NULL_STR ? NULL : a->s ? a->s : "SocketPlugin",
            a->s2 == NULL_STR ? NULL : a->s2 ? a->s2 : "primitiveResolverStatus", o0,
            a->null_ptr ? NULL : argv, (int)a->n, o ? &o->oop : NULL,
            a->null_fail ? NULL : &f->fail_code);
    case F_primitive_named_list:
        return yes(stvm_primitive_named_list(a->null_ptr ? NULL : f->out.named[0],
                                             o ? o->named[1] : NULL, (int)a->n) == f->nnamed);
    case F_primitive_name: return null_or_not(stvm_primitive_name((int)a->n));
    case F_primitive_numbers:
        return yes(stvm_primitive_numbers(o ? o->nums : NULL, (int)a->n) == f->nprims);
    case F_primitive_error_name: return text_ok(stvm_primitive_error_name((int)a->n));
    }
    return R_NOT_MINE;
}

/* One line a function: what its generated rows need (NO_DESC: none are generated). */
static const fn_line lines[] = {
    DESC(smallint_max, .null_vm = R_ANY),
    DESC(smallint_min, .null_vm = R_ANY),
    NO_DESC(oop_is_smallint),
    DESC(oop_is_integer, .null_vm = R_FALSE, .ok = {.o = {SI(1)}}),
    DESC(int_from_i64, .null_vm = E_INVAL, .null_out = E_INVAL),
    DESC(int_from_u64, .null_vm = E_INVAL, .null_out = E_INVAL),
    DESC(int_to_i64, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1)}}),
    DESC(int_to_u64, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1)}}),
    DESC(int_add, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1), SI(2)}}),
    DESC(int_sub, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1), SI(2)}}),
    DESC(int_mul, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1), SI(2)}}),
    DESC(int_compare, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.o = {SI(1), SI(2)}}),
    DESC(oop_release, .null_vm = E_INVAL, .ok = {.o = {OB(OB_BOX_MAX)}}),
    DESC(bytes_new, .null_vm = E_INVAL, .null_out = E_INVAL, .ok = {.vm = V_NET, .z = 16}),
    DESC(bytes_data, .null_vm = E_INVAL, .null_out = E_INVAL,
                      .ok = {.vm = V_NET, .o = {OB(OB_BYTES)}}),
    NO_DESC(semaphore_oop),
    NO_DESC(mutex_oop),
    NO_DESC(process_oop),
    DESC(oop_class_name, .null_vm = R_NULL, .ok = {.o = {SI(1)}}),
    DESC(primitive_call, .null_vm = E_INVAL, .ok = {.m = 1, .n = 1, .o = {SI(1), SI(2)}}),
    DESC(primitive_call_named, .null_vm = E_INVAL,
                                .ok = {.vm = V_NET, .s2 = "primitiveResolverStatus"}),
    NO_DESC(primitive_named_list),
    NO_DESC(primitive_name),
    NO_DESC(primitive_numbers),
    NO_DESC(primitive_error_name),
};

#define BDATA(what, ...) ROW(bytes_data, what, C_HOST, E_INVAL, .vm = V_NET, __VA_ARGS__)
#define NAMED(what, want, ...) \
    ROW(primitive_call_named, what, C_HOST, want, .vm = V_NET, __VA_ARGS__)
#define NPRIM(what, ctx, name, nargs, fail, ...)                                               \
    {F_primitive_call_named, what, ctx, {.vm = V_NET, .s2 = name, .n = nargs, __VA_ARGS__},     \
     STVM_EPRIM, fail, NULL, NULL}
/* Words that are not integers of V_MAIN. */
static const struct { const char *what; ospec o; } non_integers[] = {
    {"an unmapped word", RAW(GARBAGE)},
    {"a pointer to zeroed memory", OB(OB_G_ZERO)},
    {"a semaphore", OB(OB_SEM)},
    {"a process", OB(OB_SUSP)},
    {"another VM's box", OB(OB_FOREIGN_BOX)},
    {"a released box", OB(OB_RELEASED)},
    {"nil", RAW(STVM_NIL)},
    {"true", RAW(STVM_TRUE)},
    {"false", RAW(STVM_FALSE)},
    {"an even word", RAW(8)},
    {"the highest aligned word", RAW(UINTPTR_MAX & ~(uintptr_t)15)},
};
#define N_NON_INTEGERS ((int)(sizeof non_integers / sizeof non_integers[0]))

/* Receivers each process/critical-section primitive must refuse (BAD_RECEIVER), by
 * what the primitive wants (a semaphore, a process, a mutex). */
static const struct { const char *what; ospec o; int not_for; } bad_receivers[] = {
    {"an unmapped word", RAW(GARBAGE), K_NONE},
    {"a pointer to zeroed memory", OB(OB_G_ZERO), K_NONE},
    {"a forged Semaphore header", OB(OB_G_FORGED_SEM), K_NONE},
    {"a forged Process header", OB(OB_G_FORGED_PROC), K_NONE},
    {"a SmallInteger", SI(3), K_NONE},
    {"nil", RAW(STVM_NIL), K_NONE},
    {"true", RAW(STVM_TRUE), K_NONE},
    {"a boxed integer", OB(OB_BOX_MAX), K_NONE},
    {"a released box", OB(OB_RELEASED), K_NONE},
    {"a semaphore", OB(OB_SEM), K_SEM},
    {"a mutex", OB(OB_MUTEX), K_MUTEX},
    {"a process", OB(OB_SUSP), K_PROC},
    {"another VM's semaphore", OB(OB_FOREIGN_SEM), K_NONE},
    {"another VM's mutex", OB(OB_FOREIGN_MUTEX), K_NONE},
    {"another VM's process", OB(OB_FOREIGN_PROC), K_NONE},
};
static const struct { int number, wants, ctx; } receiver_prims[] = {
    {85, K_SEM, C_HOST}, {86, K_SEM, C_GREEN}, {87, K_PROC, C_HOST}, {88, K_PROC, C_HOST},
    {185, K_MUTEX, C_GREEN}, {186, K_MUTEX, C_GREEN}, {187, K_MUTEX, C_GREEN},
};

/* Each non-integer as each operand of each integer function. */
static void gen_non_integers(table *t)
{
    for (int i = 0; i < N_NON_INTEGERS; i++) {
        const char *w = non_integers[i].what;
        ospec o = non_integers[i].o;
        api_table_add(t, (row){.fn = F_int_to_i64, .what = w, .a = {.o = {o}}, .want = E_INVAL});
        api_table_add(t, (row){.fn = F_int_to_u64, .what = w, .a = {.o = {o}}, .want = E_INVAL});
        api_table_add(t, (row){.fn = F_oop_is_integer, .what = w, .a = {.o = {o}}, .want = R_FALSE});
        static const int binary[] = {F_int_add, F_int_sub, F_int_mul, F_int_compare};
        for (int b = 0; b < 4; b++) {
            api_table_add(t, (row){.fn = binary[b], .what = w, .a = {.o = {o, SI(1)}}, .want = E_INVAL});
            api_table_add(t, (row){.fn = binary[b], .what = w, .a = {.o = {SI(1), o}}, .want = E_INVAL});
        }
        if (o.k != O_RAW || o.v != STVM_NIL)   /* nil is ignored, as documented */
            api_table_add(t, (row){.fn = F_oop_release, .what = w, .a = {.o = {o}}, .want = E_INVAL});
        api_table_add(t, (row){.fn = F_primitive_call, .what = w, .a = {.m = 21, .n = 1, .o = {o, SI(1)}},
                     .want = STVM_EPRIM, .want_fail = BAD_RCV});
    }
}

/* Each bad receiver for each primitive that takes a semaphore, process or mutex. */
static void gen_bad_receivers(table *t)
{
    for (size_t p = 0; p < sizeof receiver_prims / sizeof receiver_prims[0]; p++)
        for (size_t i = 0; i < sizeof bad_receivers / sizeof bad_receivers[0]; i++) {
            if (bad_receivers[i].not_for == receiver_prims[p].wants)
                continue;   /* the right kind: not a bad receiver */
            api_table_add(t, (row){.fn = F_primitive_call, .what = bad_receivers[i].what,
                         .ctx = receiver_prims[p].ctx,
                         .a = {.m = receiver_prims[p].number, .o = {bad_receivers[i].o}},
                         .want = STVM_EPRIM, .want_fail = BAD_RCV});
        }
}

static const row rows[] = {
    /* ---- functions that never fail: odd inputs still answer sensibly ---- */
    ROW(primitive_name, "number 0", C_HOST, R_NULL, .n = 0),
    ROW(primitive_name, "number -1", C_HOST, R_NULL, .n = -1),
    ROW(primitive_name, "number 243", C_HOST, R_NULL, .n = 243),
    ROW(primitive_name, "INT_MIN", C_HOST, R_NULL, .n = INT_MIN),
    ROW(primitive_name, "INT_MAX", C_HOST, R_NULL, .n = INT_MAX),
    ROW(primitive_numbers, "NULL out, cap 5: the total, nothing written", C_HOST, R_TRUE, .n = 5,
        .null_out = true),
    ROW(primitive_numbers, "cap 0: the total, nothing written", C_HOST, R_TRUE, .n = 0),
    ROW(primitive_numbers, "cap -1: the total, nothing written", C_HOST, R_TRUE, .n = -1),
    ROW(primitive_numbers, "cap INT_MIN: the total, nothing written", C_HOST, R_TRUE, .n = INT_MIN),
    ROW(primitive_error_name, "code -1 has a text", C_HOST, R_TRUE, .n = -1),
    ROW(primitive_error_name, "code 8 has a text", C_HOST, R_TRUE, .n = 8),
    ROW(primitive_error_name, "code 10 has a text", C_HOST, R_TRUE, .n = 10),
    ROW(primitive_error_name, "INT_MIN has a text", C_HOST, R_TRUE, .n = INT_MIN),
    ROW(primitive_error_name, "INT_MAX has a text", C_HOST, R_TRUE, .n = INT_MAX),
    ROW(semaphore_oop, "NULL", C_HOST, R_ANY, .h = H_NULL),
    ROW(mutex_oop, "NULL", C_HOST, R_ANY, .h = H_NULL),
    ROW(process_oop, "NULL", C_HOST, R_ANY, .h = H_NULL),
    ROW(oop_is_smallint, "nil", C_HOST, R_FALSE, .o = {RAW(STVM_NIL)}),
    ROW(oop_is_smallint, "true", C_HOST, R_FALSE, .o = {RAW(STVM_TRUE)}),
    ROW(oop_is_smallint, "false", C_HOST, R_FALSE, .o = {RAW(STVM_FALSE)}),
    ROW(oop_is_smallint, "an unmapped even word", C_HOST, R_FALSE, .o = {RAW(GARBAGE)}),
    ROW(oop_is_smallint, "a box", C_HOST, R_FALSE, .o = {OB(OB_BOX_MAX)}),

    /* ---- integers: ranges ---- */
    ROW(int_to_i64, "2^64 - 1", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX)}),
    ROW(int_to_i64, "2^63", C_HOST, E_RANGE, .o = {OB(OB_BOX_2_63)}),
    ROW(int_to_u64, "-1", C_HOST, E_RANGE, .o = {SI(-1)}),
    ROW(int_to_u64, "-2^63", C_HOST, E_RANGE, .o = {OB(OB_BOX_NEG)}),
    ROW(int_to_u64, "SmallInteger min", C_HOST, E_RANGE, .o = {SI(MIN61)}),
    ROW(int_add, "(2^64 - 1) + 1", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX), SI(1)}),
    ROW(int_add, "1 + (2^64 - 1)", C_HOST, E_RANGE, .o = {SI(1), OB(OB_BOX_MAX)}),
    ROW(int_add, "(2^64 - 1) + (2^64 - 1)", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX), OB(OB_BOX_MAX)}),
    ROW(int_sub, "-1 - (2^64 - 1)", C_HOST, E_RANGE, .o = {SI(-1), OB(OB_BOX_MAX)}),
    ROW(int_sub, "(2^64 - 1) - -1", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX), SI(-1)}),
    ROW(int_mul, "2^32 * 2^32", C_HOST, E_RANGE, .o = {SI((int64_t)1 << 32), SI((int64_t)1 << 32)}),
    ROW(int_mul, "(2^64 - 1) * 2", C_HOST, E_RANGE, .o = {OB(OB_BOX_MAX), SI(2)}),
    ROW(int_mul, "-2^63 * -2^63", C_HOST, E_RANGE, .o = {OB(OB_BOX_NEG), OB(OB_BOX_NEG)}),
    ROW(int_mul, "2^32 * 2^32 on a 31-bit VM (both boxed)", C_HOST, E_RANGE, .vm = V_31,
        .o = {OB(OB_BOX31), OB(OB_BOX31)}),
    ROW(int_to_i64, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(WIDE)}),
    ROW(int_to_u64, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(WIDE)}),
    ROW(int_add, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(WIDE),
        SI(1)}),
    ROW(int_sub, "a tagged -2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(1),
        SI(-WIDE)}),
    ROW(int_mul, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(WIDE),
        SI(0)}),
    ROW(int_compare, "a tagged 2^40 on a 31-bit VM", C_HOST, E_INVAL, .vm = V_31, .o = {SI(0),
        SI(WIDE)}),
    ROW(oop_is_integer, "a tagged 2^40 on a 31-bit VM", C_HOST, R_FALSE, .vm = V_31, .o = {SI(WIDE)}),
    ROW(oop_is_integer, "a tagged 2^30 on a 31-bit VM", C_HOST, R_FALSE, .vm = V_31,
        .o = {SI(MAX31 + 1)}),
    ROW(oop_is_integer, "a tagged -2^30 - 1 on a 31-bit VM", C_HOST, R_FALSE, .vm = V_31,
        .o = {SI(MIN31 - 1)}),
    ROW(oop_is_integer, "a tagged 2^60 (beyond 61 bits)", C_HOST, R_FALSE, .o = {SI(MAX61 + 1)}),
    ROW(int_to_i64, "a tagged 2^60 (beyond 61 bits)", C_HOST, E_INVAL, .o = {SI(MAX61 + 1)}),
    ROW(oop_release, "a SmallInteger: ignored", C_HOST, STVM_OK, .o = {SI(5)}),
    ROW(oop_release, "nil: ignored", C_HOST, STVM_OK, .o = {RAW(STVM_NIL)}),
    ROW(oop_class_name, "an unmapped word", C_HOST, R_NULL, .o = {RAW(GARBAGE)}),
    ROW(oop_class_name, "zeroed memory", C_HOST, R_NULL, .o = {OB(OB_G_ZERO)}),
    ROW(oop_class_name, "a forged Semaphore header", C_HOST, R_NULL, .o = {OB(OB_G_FORGED_SEM)}),
    ROW(oop_class_name, "another VM's semaphore", C_HOST, R_NULL, .o = {OB(OB_FOREIGN_SEM)}),
    ROW(oop_class_name, "another VM's box", C_HOST, R_NULL, .o = {OB(OB_FOREIGN_BOX)}),
    ROW(oop_class_name, "a released box", C_HOST, R_NULL, .o = {OB(OB_RELEASED)}),
    ROW(oop_class_name, "an odd-aligned word", C_HOST, R_NULL, .o = {RAW(GARBAGE + 4)}),
    ROW(oop_class_name, "a tagged 2^40 on a 31-bit VM", C_HOST, R_NULL, .vm = V_31,
        .o = {SI(WIDE)}),
    ROW(oop_class_name, "a tagged 2^60 (beyond 61 bits)", C_HOST, R_NULL, .o = {SI(MAX61 + 1)}),

    /* ---- primitives: the call itself ---- */
    ROW(primitive_call, "unknown number 0", C_HOST, E_INVAL, .m = 0),
    ROW(primitive_call, "unknown number -1", C_HOST, E_INVAL, .m = -1),
    ROW(primitive_call, "unknown number 10", C_HOST, E_INVAL, .m = 10, .n = 1, .o = {SI(1), SI(1)}),
    ROW(primitive_call, "unknown number 84", C_HOST, E_INVAL, .m = 84),
    ROW(primitive_call, "unknown number 243", C_HOST, E_INVAL, .m = 243, .n = 2),
    ROW(primitive_call, "unknown number INT_MAX", C_HOST, E_INVAL, .m = INT_MAX),
    ROW(primitive_call, "unknown number INT_MIN", C_HOST, E_INVAL, .m = INT_MIN),
    ROW(primitive_call, "nargs -1", C_HOST, E_INVAL, .m = 85, .n = -1, .o = {OB(OB_SEM)}),
    ROW(primitive_call, "nargs INT_MIN", C_HOST, E_INVAL, .m = 85, .n = INT_MIN, .o = {OB(OB_SEM)}),
    ROW(primitive_call, "NULL args with nargs 1", C_HOST, E_INVAL, .m = 1, .n = 1, .o = {SI(1)},
        .null_ptr = true),
    ROW(primitive_call, "NULL args with nargs 2", C_HOST, E_INVAL, .m = 242, .n = 2,
        .null_ptr = true),
    PRIM("85 with 1 argument", C_HOST, 85, 1, BAD_NARGS, .o = {OB(OB_SEM)}),
    PRIM("85 with INT_MAX arguments", C_HOST, 85, INT_MAX, BAD_NARGS, .o = {OB(OB_SEM)}),
    PRIM("1 with 0 arguments", C_HOST, 1, 0, BAD_NARGS, .o = {SI(1)}),
    PRIM("1 with 2 arguments", C_HOST, 1, 2, BAD_NARGS, .o = {SI(1), SI(1), SI(1)}),
    PRIM("135 with 1 argument", C_HOST, 135, 1, BAD_NARGS),
    PRIM("240 with 2 arguments", C_HOST, 240, 2, BAD_NARGS),
    PRIM("242 with 1 argument", C_HOST, 242, 1, BAD_NARGS, .o = {RAW(STVM_NIL), OB(OB_SEM)}),
    PRIM("136 with 0 arguments", C_HOST, 136, 0, BAD_NARGS),
    PRIM("230 with 2 arguments", C_HOST, 230, 2, BAD_NARGS, .o = {RAW(STVM_NIL), SI(1), SI(1)}),
    PRIM("85 with a mutex, NULL fail_code", C_HOST, 85, 0, BAD_RCV, .o = {OB(OB_MUTEX)},
        .null_fail = true),

    /* ---- primitives 1-9 and 21-29: SmallInteger and 64-bit edges ---- */
    PRIM("1: SmallInteger max + 1", C_HOST, 1, 1, GENERIC, .o = {SI(MAX61), SI(1)}),
    PRIM("2: SmallInteger min - 1", C_HOST, 2, 1, GENERIC, .o = {SI(MIN61), SI(1)}),
    PRIM("9: 2^30 * 2^30", C_HOST, 9, 1, GENERIC, .o = {SI((int64_t)1 << 30),
        SI((int64_t)1 << 30)}),
    PRIM("9: min * -1", C_HOST, 9, 1, GENERIC, .o = {SI(MIN61), SI(-1)}),
    PRIM("1 on a 31-bit VM: max + 1", C_HOST, 1, 1, GENERIC, .vm = V_31, .o = {SI(MAX31), SI(1)}),
    PRIM("2 on a 31-bit VM: min - 1", C_HOST, 2, 1, GENERIC, .vm = V_31, .o = {SI(MIN31), SI(1)}),
    PRIM("9 on a 31-bit VM: 2^15 * 2^15", C_HOST, 9, 1, GENERIC, .vm = V_31, .o = {SI(1 << 15),
        SI(1 << 15)}),
    PRIM("1: a box receiver", C_HOST, 1, 1, BAD_RCV, .o = {OB(OB_BOX_MAX), SI(1)}),
    PRIM("1: a box argument", C_HOST, 1, 1, BAD_ARG, .o = {SI(1), OB(OB_BOX_MAX)}),
    PRIM("3: nil receiver", C_HOST, 3, 1, BAD_RCV, .o = {RAW(STVM_NIL), SI(1)}),
    PRIM("4: nil argument", C_HOST, 4, 1, BAD_ARG, .o = {SI(1), RAW(STVM_NIL)}),
    PRIM("7: a semaphore argument", C_HOST, 7, 1, BAD_ARG, .o = {SI(1), OB(OB_SEM)}),
    PRIM("8: an unmapped receiver", C_HOST, 8, 1, BAD_RCV, .o = {RAW(GARBAGE), SI(1)}),
    PRIM("1 on a 31-bit VM: a tagged 2^40 receiver (result fits)", C_HOST, 1, 1,
        BAD_RCV, .vm = V_31, .o = {SI(WIDE), SI(-WIDE)}),
    PRIM("3 on a 31-bit VM: a tagged 2^40 receiver", C_HOST, 3, 1, BAD_RCV,
        .vm = V_31, .o = {SI(WIDE), SI(0)}),
    PRIM("7 on a 31-bit VM: a tagged 2^40 argument", C_HOST, 7, 1, BAD_ARG,
        .vm = V_31, .o = {SI(0), SI(WIDE)}),
    PRIM("3 on a 61-bit VM: a tagged 2^60 receiver (beyond 61 bits)", C_HOST, 3,
        1, BAD_RCV, .o = {SI(MAX61 + 1), SI(0)}),
    PRIM("21: (2^64 - 1) + 1", C_HOST, 21, 1, GENERIC, .o = {OB(OB_BOX_MAX), SI(1)}),
    PRIM("22: -1 - (2^64 - 1)", C_HOST, 22, 1, GENERIC, .o = {SI(-1), OB(OB_BOX_MAX)}),
    PRIM("29: 2^32 * 2^32", C_HOST, 29, 1, GENERIC, .o = {SI((int64_t)1 << 32),
        SI((int64_t)1 << 32)}),
    PRIM("21: a semaphore receiver", C_HOST, 21, 1, BAD_RCV, .o = {OB(OB_SEM), SI(1)}),
    PRIM("22: another VM's box argument", C_HOST, 22, 1, BAD_ARG, .o = {SI(1), OB(OB_FOREIGN_BOX)}),
    PRIM("23: a released box receiver", C_HOST, 23, 1, BAD_RCV, .o = {OB(OB_RELEASED), SI(1)}),
    PRIM("24: an unmapped argument", C_HOST, 24, 1, BAD_ARG, .o = {SI(1), RAW(GARBAGE)}),
    PRIM("25 on a 31-bit VM: a tagged 2^40 receiver", C_HOST, 25, 1, BAD_RCV, .vm = V_31,
        .o = {SI(WIDE), SI(1)}),
    PRIM("29 on a 31-bit VM: a tagged 2^40 argument", C_HOST, 29, 1, BAD_ARG, .vm = V_31,
        .o = {SI(1), SI(WIDE)}),
    PRIM("27: true receiver", C_HOST, 27, 1, BAD_RCV, .o = {RAW(STVM_TRUE), SI(1)}),

    /* ---- process primitives in refusing states (bad receivers are generated) ---- */
    PRIM("86 from the host thread", C_HOST, 86, 0, INAPPR, .o = {OB(OB_SEM_EXCESS)}),
    PRIM("86 from another VM's thread", C_THREAD, 86, 0, INAPPR, .o = {OB(OB_SEM_EXCESS)}),
    PRIM("87: a ready process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_READY)}),
    PRIM("87: a waiting process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_WAITING)}),
    PRIM("87: a waiting process nobody holds", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_UNHELD)}),
    PRIM("87: a finished process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_DONE)}),
    PRIM("87: the idle process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_IDLE)}),
    PRIM("87: the timing process", C_HOST, 87, 0, BAD_RCV, .o = {OB(OB_TIMING)}),
    PRIM("87: the running process", C_GREEN, 87, 0, BAD_RCV, .o = {OB(OB_SELF)}),
    PRIM("88: a suspended process", C_HOST, 88, 0, BAD_RCV, .o = {OB(OB_SUSP)}),
    PRIM("88: a finished process", C_HOST, 88, 0, BAD_RCV, .o = {OB(OB_DONE)}),
    PRIM("88: the idle process", C_HOST, 88, 0, BAD_RCV, .o = {OB(OB_IDLE)}),
    PRIM("88: the idle process", C_GREEN, 88, 0, BAD_RCV, .o = {OB(OB_IDLE)}),
    PRIM("88: the timing process", C_HOST, 88, 0, BAD_RCV, .o = {OB(OB_TIMING)}),
    PRIM("88: the timing process", C_GREEN, 88, 0, BAD_RCV, .o = {OB(OB_TIMING)}),
    PRIM("167 from the host thread", C_HOST, 167, 0, INAPPR),
    PRIM("167 from another VM's thread", C_THREAD, 167, 0, INAPPR),
    PRIM("185 from the host thread", C_HOST, 185, 0, INAPPR, .o = {OB(OB_BUSY)}),
    PRIM("185: owned by another process", C_GREEN, 185, 0, INAPPR, .o = {OB(OB_BUSY)}),
    PRIM("185: a free mutex", C_GREEN, 185, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("186 from the host thread", C_HOST, 186, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("186 from another VM's thread", C_THREAD, 186, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("187 from the host thread", C_HOST, 187, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("86 while the VM runs elsewhere", C_ELSEWHERE, 86, 0, INAPPR, .o = {OB(OB_SEM_EXCESS)}),
    PRIM("167 while the VM runs elsewhere", C_ELSEWHERE, 167, 0, INAPPR),
    PRIM("185 while the VM runs elsewhere", C_ELSEWHERE, 185, 0, INAPPR, .o = {OB(OB_BUSY)}),
    PRIM("186 while the VM runs elsewhere", C_ELSEWHERE, 186, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("187 while the VM runs elsewhere", C_ELSEWHERE, 187, 0, INAPPR, .o = {OB(OB_MUTEX)}),
    PRIM("230 while the VM runs elsewhere", C_ELSEWHERE, 230, 1, INAPPR,
         .o = {RAW(STVM_NIL), SI(1)}),

    /* ---- clocks and the timer ---- */
    PRIM("136: a mutex as the semaphore", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER,
        .o = {RAW(STVM_NIL), OB(OB_FOREIGN_MUTEX), SI(5)}),
    PRIM("136: another VM's semaphore", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER,
        .o = {RAW(STVM_NIL), OB(OB_SEM), SI(5)}),
    PRIM("136: a negative tick", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), SI(-1)}),
    PRIM("136: a boxed tick", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), OB(OB_FOREIGN_BOX)}),
    PRIM("136: a nil tick", C_HOST, 136, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), RAW(STVM_NIL)}),
    PRIM("136 on a 31-bit VM: a tagged 2^40 tick", C_HOST, 136, 2, BAD_ARG,
        .vm = V_31, .o = {RAW(STVM_NIL), RAW(STVM_NIL), SI(WIDE)}),
    /* 230 needs a process: from the host it fails before looking at its argument. */
    PRIM("230 from the host: 1 us", C_HOST, 230, 1, STVM_PRIM_ERR_INAPPROPRIATE, .vm = V_31,
        .o = {RAW(STVM_NIL), SI(1)}),
    PRIM("230: -1 us", C_GREEN, 230, 1, BAD_ARG, .vm = V_31, .o = {RAW(STVM_NIL), SI(-1)}),
    PRIM("230: nil", C_GREEN, 230, 1, BAD_ARG, .vm = V_31, .o = {RAW(STVM_NIL), RAW(STVM_NIL)}),
    PRIM("230: a box", C_GREEN, 230, 1, BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_BOX_MAX)}),
    PRIM("230 on a 31-bit VM: a tagged 2^40 us", C_GREEN, 230, 1, BAD_ARG,
        .vm = V_31, .o = {RAW(STVM_NIL), SI(WIDE)}),
    PRIM("242: a mutex as the semaphore", C_HOST, 242, 2, BAD_ARG, .vm = V_OTHER,
        .o = {RAW(STVM_NIL), OB(OB_FOREIGN_MUTEX), SI(5)}),
    PRIM("242: a forged semaphore", C_HOST, 242, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_G_FORGED_SEM), SI(5)}),
    PRIM("242: a negative deadline", C_HOST, 242, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), SI(-1)}),
    PRIM("242: a -2^63 deadline", C_HOST, 242, 2, BAD_ARG, .o = {RAW(STVM_NIL), RAW(STVM_NIL),
        OB(OB_BOX_NEG)}),
    PRIM("242: an unmapped deadline", C_HOST, 242, 2, BAD_ARG, .vm = V_OTHER, .o = {RAW(STVM_NIL),
        OB(OB_OTHER_SEM), RAW(GARBAGE)}),
    PRIM("242: another VM's box as deadline", C_HOST, 242, 2, BAD_ARG, .o = {RAW(STVM_NIL),
        RAW(STVM_NIL), OB(OB_FOREIGN_BOX)}),
    PRIM("242 on a 31-bit VM: a tagged 2^40 deadline", C_HOST, 242, 2, BAD_ARG, .vm = V_31,
        .o = {RAW(STVM_NIL), RAW(STVM_NIL), SI(WIDE)}),
    PRIM("242: a deadline of 2^62 + 1 us", C_HOST, 242, 2, BAD_ARG,
        .vm = V_OTHER, .o = {RAW(STVM_NIL), OB(OB_OTHER_SEM), OB(OB_PAST_END)}),
    PRIM("242: a deadline of 2^64 - 1 us", C_HOST, 242, 2, BAD_ARG,
        .vm = V_OTHER, .o = {RAW(STVM_NIL), OB(OB_OTHER_SEM), OB(OB_FOREIGN_BOX)}),

    /* ---- ByteArrays ---- */
    ROW(bytes_new, "1 GiB + 1 bytes", C_HOST, E_RANGE, .vm = V_NET, .z = ((uint64_t)1 << 30) + 1),
    ROW(bytes_new, "SIZE_MAX bytes", C_HOST, E_RANGE, .vm = V_NET, .z = SIZE_MAX),
    ROW(bytes_new, "SIZE_MAX bytes", C_GREEN, E_RANGE, .vm = V_NET, .z = SIZE_MAX),
    ROW(bytes_new, "NULL out, SIZE_MAX bytes", C_HOST, E_INVAL, .vm = V_NET, .z = SIZE_MAX,
        .null_out = true),
    BDATA("NULL size", .o = {OB(OB_BYTES)}, .null_ptr = true),
    BDATA("another VM's ByteArray", .o = {OB(OB_FOREIGN_BYTES)}),
    BDATA("a released ByteArray", .o = {OB(OB_RELEASED_BYTES)}),
    BDATA("a semaphore", .o = {OB(OB_SEM)}),
    BDATA("a boxed integer", .o = {OB(OB_BOX_MAX)}),
    BDATA("a SmallInteger", .o = {SI(3)}),
    BDATA("nil", .o = {RAW(STVM_NIL)}),
    BDATA("an unmapped word", .o = {RAW(GARBAGE)}),
    BDATA("zeroed memory", .o = {OB(OB_G_ZERO)}),
    BDATA("a SocketHandle record", .o = {OB(OB_RECORD)}),
    BDATA("a socket", .o = {OB(OB_SOCKET)}),
    ROW(bytes_data, "a ByteArray, from a green process of another VM", C_GREEN, E_INVAL,
        .vm = V_MAIN, .o = {OB(OB_BYTES)}),
    ROW(oop_class_name, "another VM's ByteArray", C_HOST, R_NULL, .vm = V_NET,
        .o = {OB(OB_FOREIGN_BYTES)}),
    ROW(oop_class_name, "a released ByteArray", C_HOST, R_NULL, .vm = V_NET,
        .o = {OB(OB_RELEASED_BYTES)}),
    ROW(oop_class_name, "a forged SocketHandle", C_HOST, R_NULL, .vm = V_NET,
        .o = {OB(OB_G_FORGED_RECORD)}),
    ROW(oop_release, "a SocketHandle not destroyed", C_HOST, STVM_EINUSE, .vm = V_NET,
        .o = {OB(OB_RECORD)}),
    ROW(oop_release, "another VM's SocketHandle", C_HOST, E_INVAL, .vm = V_NET,
        .o = {OB(OB_FOREIGN_RECORD)}),
    ROW(oop_release, "a socket (stvm_socket_close frees it)", C_HOST, E_INVAL, .vm = V_NET,
        .o = {OB(OB_SOCKET)}),
    ROW(oop_release, "another VM's ByteArray", C_HOST, E_INVAL, .vm = V_NET,
        .o = {OB(OB_FOREIGN_BYTES)}),
    ROW(oop_release, "a released ByteArray", C_HOST, E_INVAL, .vm = V_NET,
        .o = {OB(OB_RELEASED_BYTES)}),

    /* ---- named primitives: the call itself ---- */
    NAMED("NULL module", E_INVAL, .s = NULL_STR, .s2 = "primitiveResolverStatus"),
    NAMED("NULL name", E_INVAL, .s2 = NULL_STR),
    NAMED("module \"\"", E_INVAL, .s = "", .s2 = "primitiveResolverStatus"),
    NAMED("unknown module", E_INVAL, .s = "FilePlugin", .s2 = "primitiveResolverStatus"),
    NAMED("module in lower case", E_INVAL, .s = "socketplugin", .s2 = "primitiveResolverStatus"),
    NAMED("unknown name", E_INVAL, .s2 = "primitiveSocketFoo"),
    NAMED("a numbered primitive's name", E_INVAL, .s2 = "primitiveSignal"),
    NAMED("nargs -1", E_INVAL, .s2 = "primitiveResolverStatus", .n = -1),
    NAMED("nargs INT_MIN", E_INVAL, .s2 = "primitiveResolverStatus", .n = INT_MIN),
    NAMED("NULL args with nargs 1", E_INVAL, .s2 = "primitiveSocketError", .n = 1,
          .null_ptr = true),
    ROW(primitive_call_named, "NULL vm, NULL name", C_HOST, E_INVAL, .vm = V_NULL, .s2 = NULL_STR),
    NPRIM("ResolverStatus with 1 argument", C_HOST, "primitiveResolverStatus", 1, BAD_NARGS),
    NPRIM("ConnectionStatus with 0 arguments", C_HOST, "primitiveSocketConnectionStatus", 0,
          BAD_NARGS),
    NPRIM("Create3Semaphores with 6 arguments", C_HOST, "primitiveSocketCreate3Semaphores", 6,
          BAD_NARGS, .o = {RAW(STVM_NIL), SI(0), SI(0), SI(8000), SI(8000), SI(0), SI(0)}),
    NPRIM("ConnectionStatus with INT_MAX arguments", C_HOST, "primitiveSocketConnectionStatus",
          INT_MAX, BAD_NARGS, .o = {RAW(STVM_NIL), OB(OB_RECORD)}),

    /* ---- named primitives: socket records and arguments ---- */
    NPRIM("ConnectionStatus: a semaphore", C_HOST, "primitiveSocketConnectionStatus", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), OB(OB_SEM)}),
    NPRIM("ConnectionStatus: nil", C_HOST, "primitiveSocketConnectionStatus", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), RAW(STVM_NIL)}),
    NPRIM("ConnectionStatus: a SmallInteger", C_HOST, "primitiveSocketConnectionStatus", 1,
          BAD_ARG, .o = {RAW(STVM_NIL), SI(7)}),
    NPRIM("ConnectionStatus: an unmapped word", C_HOST, "primitiveSocketConnectionStatus", 1,
          BAD_ARG, .o = {RAW(STVM_NIL), RAW(GARBAGE)}),
    NPRIM("ConnectionStatus: another VM's record", C_HOST, "primitiveSocketConnectionStatus", 1,
          BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_FOREIGN_RECORD)}),
    NPRIM("ConnectionStatus: a forged record", C_HOST, "primitiveSocketConnectionStatus", 1,
          BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_G_FORGED_RECORD)}),
    NPRIM("ConnectionStatus: a socket (not its record)", C_HOST,
          "primitiveSocketConnectionStatus", 1, BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_SOCKET)}),
    NPRIM("ConnectionStatus: a ByteArray", C_HOST, "primitiveSocketConnectionStatus", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), OB(OB_BYTES)}),
    NPRIM("ConnectionStatus: a destroyed record", C_HOST, "primitiveSocketConnectionStatus", 1,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_DEAD_RECORD)}),
    NPRIM("LocalPort: a destroyed record", C_HOST, "primitiveSocketLocalPort", 1, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_DEAD_RECORD)}),
    NPRIM("Error: a boxed integer", C_HOST, "primitiveSocketError", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), OB(OB_BOX_MAX)}),
    NPRIM("Destroy: another VM's record", C_HOST, "primitiveSocketDestroy", 1, BAD_ARG,
          .o = {RAW(STVM_NIL), OB(OB_FOREIGN_RECORD)}),
    NPRIM("CloseConnection: a destroyed record", C_HOST, "primitiveSocketCloseConnection", 1,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_DEAD_RECORD)}),
    NPRIM("Create3Semaphores: UDP", C_HOST, "primitiveSocketCreate3Semaphores", 7,
          STVM_PRIM_ERR_UNSUPPORTED,
          .o = {RAW(STVM_NIL), SI(0), SI(1), SI(8000), SI(8000), SI(0), SI(0), SI(0)}),
    NPRIM("Create3Semaphores: type 2", C_HOST, "primitiveSocketCreate3Semaphores", 7, GENERIC,
          .o = {RAW(STVM_NIL), SI(0), SI(2), SI(8000), SI(8000), SI(0), SI(0), SI(0)}),
    NPRIM("Create3Semaphores: nil netType", C_HOST, "primitiveSocketCreate3Semaphores", 7, GENERIC,
          .o = {RAW(STVM_NIL), RAW(STVM_NIL), SI(0), SI(8000), SI(8000), SI(0), SI(0), SI(0)}),
    NPRIM("Create3Semaphores: semaphore index 257 (table of 256)", C_HOST,
          "primitiveSocketCreate3Semaphores", 7, BAD_ARG,
          .o = {RAW(STVM_NIL), SI(0), SI(0), SI(8000), SI(8000), SI(257), SI(0), SI(0)}),
    NPRIM("Create3Semaphores: semaphore index -1", C_HOST, "primitiveSocketCreate3Semaphores", 7,
          BAD_ARG, .o = {RAW(STVM_NIL), SI(0), SI(0), SI(8000), SI(8000), SI(0), SI(0), SI(-1)}),
    NPRIM("Create3Semaphores: a tagged 2^60 index (beyond 61 bits)", C_HOST,
          "primitiveSocketCreate3Semaphores", 7, BAD_ARG,
          .o = {RAW(STVM_NIL), SI(0), SI(0), SI(8000), SI(8000), SI(MAX61 + 1), SI(0), SI(0)}),
    NPRIM("ConnectToPort: a semaphore as the address", C_HOST, "primitiveSocketConnectToPort", 3,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_SEM), SI(80)}),
    NPRIM("ConnectToPort: a 16-byte address... of 16 zero bytes, port 65536", C_HOST,
          "primitiveSocketConnectToPort", 3, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), SI(65536)}),
    NPRIM("ConnectToPort: a nil port", C_HOST, "primitiveSocketConnectToPort", 3, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), RAW(STVM_NIL)}),
    NPRIM("ConnectToPort: a destroyed record", C_HOST, "primitiveSocketConnectToPort", 3, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_DEAD_RECORD), OB(OB_BYTES), SI(80)}),
    NPRIM("ListenOnPortBacklog: backlog 0", C_HOST, "primitiveSocketListenOnPortBacklog", 3,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(0), SI(0)}),
    NPRIM("ListenOnPortBacklog: backlog 65536", C_HOST, "primitiveSocketListenOnPortBacklog", 3,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(0), SI(65536)}),
    NPRIM("ListenOnPortBacklog: port -1", C_HOST, "primitiveSocketListenOnPortBacklog", 3, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(-1), SI(4)}),
    NPRIM("ListenOnPortBacklog: port 65536", C_HOST, "primitiveSocketListenOnPortBacklog", 3,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(65536), SI(4)}),
    NPRIM("ListenOnPortBacklogInterface: a semaphore as the interface", C_HOST,
          "primitiveSocketListenOnPortBacklogInterface", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(0), SI(4), OB(OB_SEM)}),
    NPRIM("Accept3Semaphores: a record that does not listen", C_HOST,
          "primitiveSocketAccept3Semaphores", 6, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), SI(8000), SI(8000), SI(0), SI(0), SI(0)}),
    NPRIM("SendDataBufCount: a semaphore as the buffer", C_HOST,
          "primitiveSocketSendDataBufCount", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_SEM), SI(1), SI(1)}),
    NPRIM("SendDataBufCount: start index 0", C_HOST, "primitiveSocketSendDataBufCount", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), SI(0), SI(1)}),
    NPRIM("SendDataBufCount: count past the end", C_HOST, "primitiveSocketSendDataBufCount", 4,
          GENERIC, .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), SI(1), SI(17)}),
    NPRIM("ReceiveDataBufCount: count -1", C_HOST, "primitiveSocketReceiveDataBufCount", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_BYTES), SI(1), SI(-1)}),
    NPRIM("ReceiveDataBufCount: another VM's ByteArray", C_HOST,
          "primitiveSocketReceiveDataBufCount", 4, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RECORD), OB(OB_FOREIGN_BYTES), SI(1), SI(1)}),
    NPRIM("ResolverStartNameLookup: a SmallInteger", C_HOST, "primitiveResolverStartNameLookup",
          1, GENERIC, .o = {RAW(STVM_NIL), SI(5)}),
    NPRIM("ResolverStartNameLookup: a released ByteArray", C_HOST,
          "primitiveResolverStartNameLookup", 1, GENERIC,
          .o = {RAW(STVM_NIL), OB(OB_RELEASED_BYTES)}),
    NPRIM("InitializeNetwork: index 257 (table of 256)", C_HOST, "primitiveInitializeNetwork", 1,
          GENERIC, .o = {RAW(STVM_NIL), SI(257)}),
    NPRIM("InitializeNetwork: index -1", C_HOST, "primitiveInitializeNetwork", 1, GENERIC,
          .o = {RAW(STVM_NIL), SI(-1)}),
    NPRIM("ConnectionStatus: a semaphore, from a green process", C_GREEN,
          "primitiveSocketConnectionStatus", 1, BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_SEM)}),
    NPRIM("ConnectionStatus: a semaphore, NULL fail_code", C_HOST,
          "primitiveSocketConnectionStatus", 1, BAD_ARG, .o = {RAW(STVM_NIL), OB(OB_SEM)},
          .null_fail = true),
    ROW(primitive_named_list, "NULL modules and names, cap 5: the total", C_HOST, R_TRUE, .n = 5,
        .null_out = true, .null_ptr = true),
    ROW(primitive_named_list, "cap 0: the total, nothing written", C_HOST, R_TRUE, .n = 0),
    ROW(primitive_named_list, "cap -1: the total, nothing written", C_HOST, R_TRUE, .n = -1),
    ROW(primitive_named_list, "cap INT_MIN: the total, nothing written", C_HOST, R_TRUE,
        .n = INT_MIN),
    ROW(primitive_named_list, "NULL names, cap 0", C_HOST, R_TRUE, .n = 0, .null_out = true),
};

static void generate(table *t)
{
    gen_non_integers(t);
    gen_bad_receivers(t);
}

const api_module api_rows_prim = API_MODULE(prim, generate);
