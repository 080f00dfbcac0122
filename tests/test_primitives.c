/*
 * The numbered primitives: the table itself, failure codes for every primitive driven
 * with bad receivers, arguments and argument counts (and proof that a failing call
 * changes nothing), and the results of the integer, process, critical-section, clock
 * and timer primitives.
 */
#include <string.h>

#include "helpers.h"

/* Every test of the suite fails after 30 s instead of hanging the runner. */
TestSuite(primitives, .timeout = 30);

/* ---- the table ------------------------------------------------------------------- */

static const struct {
    int number, nargs;
    const char *name;
} expected_table[] = {
    {1, 1, "primitiveAdd"},
    {2, 1, "primitiveSubtract"},
    {3, 1, "primitiveLessThan"},
    {4, 1, "primitiveGreaterThan"},
    {5, 1, "primitiveLessOrEqual"},
    {6, 1, "primitiveGreaterOrEqual"},
    {7, 1, "primitiveEqual"},
    {8, 1, "primitiveNotEqual"},
    {9, 1, "primitiveMultiply"},
    {21, 1, "primitiveAddLargeIntegers"},
    {22, 1, "primitiveSubtractLargeIntegers"},
    {23, 1, "primitiveLessThanLargeIntegers"},
    {24, 1, "primitiveGreaterThanLargeIntegers"},
    {25, 1, "primitiveLessOrEqualLargeIntegers"},
    {26, 1, "primitiveGreaterOrEqualLargeIntegers"},
    {27, 1, "primitiveEqualLargeIntegers"},
    {28, 1, "primitiveNotEqualLargeIntegers"},
    {29, 1, "primitiveMultiplyLargeIntegers"},
    {85, 0, "primitiveSignal"},
    {86, 0, "primitiveWait"},
    {87, 0, "primitiveResume"},
    {88, 0, "primitiveSuspend"},
    {135, 0, "primitiveMillisecondClock"},
    {136, 2, "primitiveSignalAtMilliseconds"},
    {167, 0, "primitiveYield"},
    {185, 0, "primitiveExitCriticalSection"},
    {186, 0, "primitiveEnterCriticalSection"},
    {187, 0, "primitiveTestAndSetOwnershipOfCriticalSection"},
    {230, 1, "primitiveRelinquishProcessor"},
    {240, 0, "primitiveUTCMicrosecondClock"},
    {242, 2, "primitiveSignalAtUTCMicroseconds"},
    {568, 0, "primitiveSuspendBackingUpV1"},
    {578, 0, "primitiveSuspendBackingUpV2"},
};
enum { NEXPECTED = sizeof expected_table / sizeof expected_table[0] };

Test(primitives, every_reported_number_is_named_and_the_table_is_pharos)
{
    int n = stvm_primitive_numbers(NULL, 0);
    cr_assert_eq(n, NEXPECTED, "the library has %d primitives", n);
    int nums[64];
    memset(nums, 0xFF, sizeof nums);
    cr_assert_eq(stvm_primitive_numbers(nums, 64), n);
    int few[3] = {-1, -1, -1};
    cr_assert_eq(stvm_primitive_numbers(few, 2), n, "answers the total even when capped");
    cr_assert_eq(few[2], -1, "writes no more than cap");
    for (int i = 0; i < n; i++) {
        if (i)
            cr_assert_gt(nums[i], nums[i - 1], "ascending");
        const char *name = stvm_primitive_name(nums[i]);
        cr_assert_not_null(name, "primitive %d has no name", nums[i]);
        cr_assert_gt(strlen(name), 0);
        cr_assert_eq(nums[i], expected_table[i].number);
        cr_assert_str_eq(name, expected_table[i].name);
    }
    cr_assert_eq(few[0], nums[0]);
    cr_assert_eq(few[1], nums[1]);
    const int unknown[] = {0, -1, 10, 20, 30, 84, 89, 137, 241, 243, 1000};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        cr_assert_null(stvm_primitive_name(unknown[i]), "%d", unknown[i]);
}

Test(primitives, unknown_numbers_and_null_arguments_are_einval)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_oop args[3] = {mk_i(vm, 1), mk_i(vm, 2), mk_i(vm, 3)}, res = SENTINEL;
    int code = 77;
    const int unknown[] = {0, -1, 10, 84, 89, 241, 100000};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        cr_assert_eq(stvm_primitive_call(vm, unknown[i], mk_i(vm, 1), args, 1, &res, &code),
                     STVM_EINVAL, "%d", unknown[i]);
    cr_assert_eq(stvm_primitive_call(vm, 1, mk_i(vm, 1), NULL, 1, &res, &code), STVM_EINVAL);
    cr_assert_eq(stvm_primitive_call(NULL, 1, mk_i(vm, 1), args, 1, &res, &code), STVM_EINVAL);
    cr_assert_eq(res, SENTINEL);
    cr_assert_eq(code, 77);
    /* result and fail_code may be NULL */
    cr_assert_eq(stvm_primitive_call(vm, 1, mk_i(vm, 1), args, 1, NULL, NULL), STVM_OK);
    cr_assert_eq(stvm_primitive_call(vm, 1, STVM_NIL, args, 1, NULL, NULL), STVM_EPRIM);
    vm_done(vm);
}

Test(primitives, failure_codes_have_pharo_texts)
{
    cr_assert_str_eq(stvm_primitive_error_name(STVM_PRIM_ERR_BAD_RECEIVER), "bad receiver");
    cr_assert_str_eq(stvm_primitive_error_name(STVM_PRIM_ERR_BAD_ARGUMENT), "bad argument");
    const int codes[] = {STVM_PRIM_ERR_GENERIC,     STVM_PRIM_ERR_BAD_RECEIVER,
                         STVM_PRIM_ERR_BAD_ARGUMENT, STVM_PRIM_ERR_BAD_INDEX,
                         STVM_PRIM_ERR_BAD_NUM_ARGS, STVM_PRIM_ERR_INAPPROPRIATE,
                         STVM_PRIM_ERR_UNSUPPORTED, STVM_PRIM_ERR_NO_MEMORY};
    enum { N = sizeof codes / sizeof codes[0] };
    for (int i = 0; i < N; i++) {
        const char *t = stvm_primitive_error_name(codes[i]);
        cr_assert_not_null(t);
        cr_assert_gt(strlen(t), 0);
        for (int j = 0; j < i; j++)
            cr_assert_str_neq(t, stvm_primitive_error_name(codes[j]));
    }
    cr_assert_not_null(stvm_primitive_error_name(-1));
    cr_assert_not_null(stvm_primitive_error_name(1000));
}

Test(primitives, a_wrong_argument_count_fails_every_primitive_with_bad_num_args)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *sem;
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    stvm_oop s = stvm_semaphore_oop(sem);
    stvm_oop args[4] = {s, mk_i(vm, 1), mk_i(vm, 2), mk_i(vm, 3)};
    stvm_stats before = stats_of(vm);
    for (int i = 0; i < NEXPECTED; i++) {
        int num = expected_table[i].number, want = expected_table[i].nargs;
        const int wrong[] = {want - 1, want + 1, 3, 4};
        for (size_t k = 0; k < sizeof wrong / sizeof wrong[0]; k++) {
            if (wrong[k] < 0)
                continue;
            stvm_oop res = SENTINEL;
            int code = 77;
            int err = stvm_primitive_call(vm, num, s, args, wrong[k], &res, &code);
            cr_assert_eq(err, STVM_EPRIM, "prim %d with %d args: %s", num, wrong[k],
                         stvm_err_name(err));
            cr_assert_eq(code, STVM_PRIM_ERR_BAD_NUM_ARGS, "prim %d with %d args: code %d", num,
                         wrong[k], code);
            cr_assert_eq(res, SENTINEL);
        }
    }
    stvm_stats after = stats_of(vm);
    cr_assert_eq(memcmp(&before, &after, sizeof before), 0, "a failed call changed a counter");
    cr_assert_eq(stvm_semaphore_excess(vm, sem), 0);
    vm_done(vm);
}

/* ---- the failure sweep -------------------------------------------------------------- */

enum kind {
    K_NONE, K_SI, K_NEG, K_GARBAGE, K_NIL, K_TRUE, K_SEM, K_MUTEX, K_PROC /* suspended */,
    K_READY, K_SELF, K_DONE, K_BOX, K_NEGBOX, K_FREED,
};

typedef struct bad_call {
    int prim, rcv, a0, a1, nargs, code;
} bad_call;

#define BR STVM_PRIM_ERR_BAD_RECEIVER
#define BA STVM_PRIM_ERR_BAD_ARGUMENT
#define IN STVM_PRIM_ERR_INAPPROPRIATE

#define SI_BAD(p)                                                                        \
    {p, K_GARBAGE, K_SI, 0, 1, BR}, {p, K_BOX, K_SI, 0, 1, BR}, {p, K_SEM, K_SI, 0, 1, BR}, \
    {p, K_NIL, K_SI, 0, 1, BR}, {p, K_TRUE, K_SI, 0, 1, BR}, {p, K_GARBAGE, K_GARBAGE, 0, 1, BR}, \
    {p, K_SI, K_GARBAGE, 0, 1, BA}, {p, K_SI, K_BOX, 0, 1, BA}, {p, K_SI, K_NIL, 0, 1, BA},  \
    {p, K_SI, K_TRUE, 0, 1, BA}, {p, K_NEG, K_MUTEX, 0, 1, BA}

#define LI_BAD(p)                                                                         \
    {p, K_GARBAGE, K_SI, 0, 1, BR}, {p, K_SEM, K_BOX, 0, 1, BR}, {p, K_NIL, K_SI, 0, 1, BR},  \
    {p, K_FREED, K_SI, 0, 1, BR}, {p, K_TRUE, K_SI, 0, 1, BR}, {p, K_PROC, K_SI, 0, 1, BR},   \
    {p, K_BOX, K_GARBAGE, 0, 1, BA}, {p, K_SI, K_MUTEX, 0, 1, BA},                            \
    {p, K_SI, K_FREED, 0, 1, BA}, {p, K_NEGBOX, K_NIL, 0, 1, BA}

#define RCV_BAD(p, k) {p, k, K_NONE, K_NONE, 0, BR}

static const bad_call bad_calls[] = {
    SI_BAD(1), SI_BAD(2), SI_BAD(3), SI_BAD(4), SI_BAD(5), SI_BAD(6), SI_BAD(7), SI_BAD(8),
    SI_BAD(9),
    LI_BAD(21), LI_BAD(22), LI_BAD(23), LI_BAD(24), LI_BAD(25), LI_BAD(26), LI_BAD(27),
    LI_BAD(28), LI_BAD(29),
    RCV_BAD(85, K_SI), RCV_BAD(85, K_GARBAGE), RCV_BAD(85, K_MUTEX), RCV_BAD(85, K_PROC),
    RCV_BAD(85, K_BOX), RCV_BAD(85, K_NIL), RCV_BAD(85, K_FREED), RCV_BAD(85, K_TRUE),
    RCV_BAD(86, K_SI), RCV_BAD(86, K_GARBAGE), RCV_BAD(86, K_MUTEX), RCV_BAD(86, K_PROC),
    RCV_BAD(86, K_BOX), RCV_BAD(86, K_NIL), RCV_BAD(86, K_FREED), RCV_BAD(86, K_SELF),
    /* resume: anything but a suspended process */
    RCV_BAD(87, K_SEM), RCV_BAD(87, K_SI), RCV_BAD(87, K_GARBAGE), RCV_BAD(87, K_MUTEX),
    RCV_BAD(87, K_NIL), RCV_BAD(87, K_READY), RCV_BAD(87, K_SELF), RCV_BAD(87, K_DONE),
    /* suspend: not a process, or one on no list */
    RCV_BAD(88, K_SEM), RCV_BAD(88, K_SI), RCV_BAD(88, K_GARBAGE), RCV_BAD(88, K_MUTEX),
    RCV_BAD(88, K_NIL), RCV_BAD(88, K_PROC), RCV_BAD(88, K_DONE), RCV_BAD(88, K_BOX),
    /* the suspends that back a waiter up (pharo #10669): the same */
    RCV_BAD(568, K_SEM), RCV_BAD(568, K_SI), RCV_BAD(568, K_GARBAGE), RCV_BAD(568, K_MUTEX),
    RCV_BAD(568, K_NIL), RCV_BAD(568, K_PROC), RCV_BAD(568, K_DONE), RCV_BAD(568, K_BOX),
    RCV_BAD(578, K_SEM), RCV_BAD(578, K_SI), RCV_BAD(578, K_GARBAGE), RCV_BAD(578, K_MUTEX),
    RCV_BAD(578, K_NIL), RCV_BAD(578, K_PROC), RCV_BAD(578, K_DONE), RCV_BAD(578, K_BOX),
    RCV_BAD(185, K_SEM), RCV_BAD(185, K_SI), RCV_BAD(185, K_GARBAGE), RCV_BAD(185, K_PROC),
    RCV_BAD(185, K_NIL), {185, K_MUTEX, K_NONE, K_NONE, 0, IN} /* not the owner */,
    RCV_BAD(186, K_SEM), RCV_BAD(186, K_SI), RCV_BAD(186, K_GARBAGE), RCV_BAD(186, K_PROC),
    RCV_BAD(186, K_NIL), RCV_BAD(186, K_BOX),
    RCV_BAD(187, K_SEM), RCV_BAD(187, K_SI), RCV_BAD(187, K_GARBAGE), RCV_BAD(187, K_PROC),
    RCV_BAD(187, K_NIL), RCV_BAD(187, K_FREED),
    /* the timers: first argument a Semaphore or nil, second a non-negative integer */
    {136, K_NIL, K_SI, K_SI, 2, BA}, {136, K_NIL, K_MUTEX, K_SI, 2, BA},
    {136, K_NIL, K_GARBAGE, K_SI, 2, BA}, {136, K_NIL, K_PROC, K_SI, 2, BA},
    {136, K_NIL, K_TRUE, K_SI, 2, BA}, {136, K_NIL, K_BOX, K_SI, 2, BA},
    {136, K_NIL, K_SEM, K_NEG, 2, BA}, {136, K_NIL, K_SEM, K_GARBAGE, 2, BA},
    {136, K_NIL, K_SEM, K_SEM, 2, BA}, {136, K_NIL, K_NIL, K_NEG, 2, BA},
    {136, K_NIL, K_SEM, K_NIL, 2, BA}, {136, K_NIL, K_SEM, K_NEGBOX, 2, BA},
    {242, K_NIL, K_SI, K_SI, 2, BA}, {242, K_NIL, K_MUTEX, K_SI, 2, BA},
    {242, K_NIL, K_GARBAGE, K_SI, 2, BA}, {242, K_NIL, K_BOX, K_BOX, 2, BA},
    {242, K_NIL, K_FREED, K_SI, 2, BA},
    {242, K_NIL, K_SEM, K_NEG, 2, BA}, {242, K_NIL, K_SEM, K_NEGBOX, 2, BA},
    {242, K_NIL, K_SEM, K_GARBAGE, 2, BA}, {242, K_NIL, K_SEM, K_SEM, 2, BA},
    {242, K_NIL, K_SEM, K_FREED, 2, BA}, {242, K_NIL, K_SEM, K_NIL, 2, BA},
    {242, K_NIL, K_NIL, K_NEG, 2, BA},
    {230, K_NIL, K_NEG, 0, 1, BA}, {230, K_NIL, K_GARBAGE, 0, 1, BA},
    {230, K_NIL, K_BOX, 0, 1, BA}, {230, K_NIL, K_SEM, 0, 1, BA}, {230, K_NIL, K_NIL, 0, 1, BA},
    {230, K_NIL, K_NEGBOX, 0, 1, BA},
};
enum { NBAD = sizeof bad_calls / sizeof bad_calls[0] };

typedef struct sweep {
    stvm_vm *vm;
    stvm_semaphore *sem;
    stvm_mutex *m;
    stvm_process *suspended, *ready, *done;
    stvm_oop box, negbox, freed;
    int bad_line;
    int failed_index;   /* first bad_calls entry that misbehaved, or -1 */
    int got_err, got_code;
    int done_count;
} sweep;

static stvm_oop kind_oop(sweep *c, int k)
{
    switch (k) {
    case K_SI: return (stvm_oop)((7u << 1) | 1u);
    case K_NEG: return (stvm_oop)(((uintptr_t)-5 << 1) | 1u);
    case K_GARBAGE: return GARBAGE;
    case K_NIL: return STVM_NIL;
    case K_TRUE: return STVM_TRUE;
    case K_SEM: return stvm_semaphore_oop(c->sem);
    case K_MUTEX: return stvm_mutex_oop(c->m);
    case K_PROC: return stvm_process_oop(c->suspended);
    case K_READY: return stvm_process_oop(c->ready);
    case K_SELF: return stvm_process_oop(stvm_vm_active_process(c->vm));
    case K_DONE: return stvm_process_oop(c->done);
    case K_BOX: return c->box;
    case K_NEGBOX: return c->negbox;
    case K_FREED: return c->freed;
    default: return STVM_NIL;
    }
}

typedef struct snapshot {
    stvm_stats stats;
    int64_t excess;
    stvm_process *owner;
    stvm_process_state st[3];
} snapshot;

static void take(sweep *c, snapshot *s)
{
    memset(s, 0, sizeof *s);
    stvm_vm_get_stats(c->vm, &s->stats);
    s->excess = stvm_semaphore_excess(c->vm, c->sem);
    s->owner = stvm_mutex_owner(c->vm, c->m);
    s->st[0] = gstate(c->vm, c->suspended);
    s->st[1] = gstate(c->vm, c->ready);
    s->st[2] = gstate(c->vm, c->done);
}

static void sweep_body(stvm_vm *vm, void *arg)
{
    sweep *c = arg;
    for (int i = 0; i < NBAD; i++) {
        const bad_call *b = &bad_calls[i];
        stvm_oop args[2] = {kind_oop(c, b->a0), kind_oop(c, b->a1)};
        stvm_oop res = SENTINEL;
        int code = 77;
        snapshot before, after;
        take(c, &before);
        int err = stvm_primitive_call(vm, b->prim, kind_oop(c, b->rcv), args, b->nargs, &res,
                                      &code);
        take(c, &after);
        bool ok = err == STVM_EPRIM && code == b->code && res == SENTINEL &&
                  memcmp(&before, &after, sizeof before) == 0;
        if (!ok && c->failed_index < 0) {
            c->failed_index = i;
            c->got_err = err;
            c->got_code = code;
        }
        c->done_count++;
    }
}

static void nothing(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

Test(primitives, bad_receivers_and_arguments_fail_with_pharo_codes_and_change_nothing)
{
    sweep c;
    memset(&c, 0, sizeof c);
    c.failed_index = -1;
    c.vm = sim_vm(61, 0, 0);
    cr_assert_eq(stvm_semaphore_new(c.vm, &c.sem), STVM_OK);
    cr_assert_eq(stvm_mutex_new(c.vm, &c.m), STVM_OK);
    cr_assert_eq(stvm_spawn_suspended(c.vm, 30, "suspended", nothing, NULL, 0, &c.suspended),
                 STVM_OK);
    cr_assert_eq(stvm_spawn(c.vm, 20, "ready", nothing, NULL, &c.ready), STVM_OK);
    cr_assert_eq(stvm_spawn(c.vm, 60, "done", nothing, NULL, &c.done), STVM_OK);
    cr_assert_eq(stvm_int_from_u64(c.vm, (uint64_t)1 << 62, &c.box), STVM_OK);
    cr_assert_eq(stvm_int_from_i64(c.vm, -((int64_t)1 << 62), &c.negbox), STVM_OK);
    cr_assert_eq(stvm_int_from_u64(c.vm, UINT64_MAX, &c.freed), STVM_OK);
    cr_assert_eq(stvm_oop_release(c.vm, c.freed), STVM_OK);
    cr_assert_str_eq(stvm_oop_class_name(c.vm, c.box), "LargePositiveInteger");
    cr_assert_str_eq(stvm_oop_class_name(c.vm, c.negbox), "LargeNegativeInteger");
    cr_assert_eq(stvm_spawn(c.vm, 40, "sweeper", sweep_body, &c, NULL), STVM_OK);

    /* every primitive without a receiver or argument to get wrong is listed here;
     * every other one must have entries in the sweep */
    for (int i = 0; i < NEXPECTED; i++) {
        int num = expected_table[i].number, entries = 0;
        for (int j = 0; j < NBAD; j++)
            entries += bad_calls[j].prim == num;
        bool exempt = num == 135 || num == 167 || num == 240;
        cr_assert(exempt || entries > 0, "primitive %d is not in the sweep", num);
    }

    int err = stvm_run(c.vm);
    cr_assert_eq(err, STVM_EDEADLOCK, "the suspended process remains: %s", stvm_err_name(err));
    cr_assert_eq(c.bad_line, 0, "check failed at line %d", c.bad_line);
    cr_assert_eq(c.done_count, NBAD);
    if (c.failed_index >= 0) {
        const bad_call *b = &bad_calls[c.failed_index];
        cr_assert_fail("prim %d (receiver kind %d, args %d/%d, nargs %d): got %s code %d, "
                       "expected EPRIM code %d, with nothing changed",
                       b->prim, b->rcv, b->a0, b->a1, b->nargs, stvm_err_name(c.got_err),
                       c.got_code, b->code);
    }
    cr_assert_eq(stvm_semaphore_excess(c.vm, c.sem), 0);
    cr_assert_null(stvm_mutex_owner(c.vm, c.m));
    cr_assert_eq(stvm_semaphore_free(c.vm, c.sem), STVM_OK, "no timer was armed on it");
    cr_assert_eq(stvm_process_terminate(c.vm, c.suspended), STVM_OK);
    cr_assert_eq(stvm_oop_release(c.vm, c.box), STVM_OK);
    cr_assert_eq(stvm_oop_release(c.vm, c.negbox), STVM_OK);
    vm_done(c.vm);
}

Test(primitives, process_primitives_on_the_host_thread_are_inappropriate)
{
    stvm_vm *vm = vm_make(NULL);
    stvm_semaphore *sem;
    stvm_mutex *m;
    cr_assert_eq(stvm_semaphore_new(vm, &sem), STVM_OK);
    cr_assert_eq(stvm_mutex_new(vm, &m), STVM_OK);
    struct {
        int prim;
        stvm_oop rcv;
    } calls[] = {
        {86, stvm_semaphore_oop(sem)}, {167, STVM_NIL},           {185, stvm_mutex_oop(m)},
        {186, stvm_mutex_oop(m)},      {187, stvm_mutex_oop(m)},
    };
    stvm_stats before = stats_of(vm);
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        stvm_oop res = SENTINEL;
        int code = 77;
        cr_assert_eq(stvm_primitive_call(vm, calls[i].prim, calls[i].rcv, NULL, 0, &res, &code),
                     STVM_EPRIM, "prim %d", calls[i].prim);
        cr_assert_eq(code, STVM_PRIM_ERR_INAPPROPRIATE, "prim %d: code %d", calls[i].prim, code);
        cr_assert_eq(res, SENTINEL);
    }
    stvm_stats after = stats_of(vm);
    cr_assert_eq(memcmp(&before, &after, sizeof before), 0);
    cr_assert_null(stvm_mutex_owner(vm, m));
    cr_assert_eq(stvm_semaphore_excess(vm, sem), 0);
    /* signal needs no process */
    stvm_oop res = SENTINEL;
    cr_assert_eq(stvm_primitive_call(vm, 85, stvm_semaphore_oop(sem), NULL, 0, &res, NULL),
                 STVM_OK);
    cr_assert_eq(res, stvm_semaphore_oop(sem), "answers the receiver");
    cr_assert_eq(stvm_semaphore_excess(vm, sem), 1);
    vm_done(vm);
}

/* ---- integer primitives ----------------------------------------------------------- */

static stvm_oop call1(stvm_vm *vm, int prim, stvm_oop r, stvm_oop a)
{
    stvm_oop res = SENTINEL;
    int code = 77;
    int err = stvm_primitive_call(vm, prim, r, &a, 1, &res, &code);
    cr_assert_eq(err, STVM_OK, "prim %d failed with code %d", prim, code);
    cr_assert_neq(res, SENTINEL);
    return res;
}

static int fail1(stvm_vm *vm, int prim, stvm_oop r, stvm_oop a)
{
    stvm_oop res = SENTINEL;
    int code = 77;
    int err = stvm_primitive_call(vm, prim, r, &a, 1, &res, &code);
    cr_assert_eq(err, STVM_EPRIM, "prim %d: %s", prim, stvm_err_name(err));
    cr_assert_eq(res, SENTINEL);
    return code;
}

static stvm_oop boolean(bool b) { return b ? STVM_TRUE : STVM_FALSE; }

static void check_si_prims(int bits)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.smallint_bits = bits;
    stvm_vm *vm = vm_make(&cfg);
    int64_t max = stvm_smallint_max(vm), min = stvm_smallint_min(vm);
    const int64_t vals[] = {-7, -1, 0, 3, 12, max, min, max / 2, min / 2};
    enum { N = sizeof vals / sizeof vals[0] };
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            int64_t x = vals[i], y = vals[j];
            stvm_oop a = mk_i(vm, x), b = mk_i(vm, y);
            cr_assert_eq(call1(vm, 3, a, b), boolean(x < y));
            cr_assert_eq(call1(vm, 4, a, b), boolean(x > y));
            cr_assert_eq(call1(vm, 5, a, b), boolean(x <= y));
            cr_assert_eq(call1(vm, 6, a, b), boolean(x >= y));
            cr_assert_eq(call1(vm, 7, a, b), boolean(x == y));
            cr_assert_eq(call1(vm, 8, a, b), boolean(x != y));
            int64_t sum = x + y, diff = x - y;   /* |x|,|y| <= 2^60: no C overflow */
            if (sum >= min && sum <= max)
                cr_assert_eq(call1(vm, 1, a, b), mk_i(vm, sum));
            else
                cr_assert_eq(fail1(vm, 1, a, b), STVM_PRIM_ERR_GENERIC, "%lld + %lld",
                             (long long)x, (long long)y);
            if (diff >= min && diff <= max)
                cr_assert_eq(call1(vm, 2, a, b), mk_i(vm, diff));
            else
                cr_assert_eq(fail1(vm, 2, a, b), STVM_PRIM_ERR_GENERIC, "%lld - %lld",
                             (long long)x, (long long)y);
            __int128 prod = (__int128)x * y;
            if (prod >= min && prod <= max)
                cr_assert_eq(call1(vm, 9, a, b), mk_i(vm, (int64_t)prod));
            else
                cr_assert_eq(fail1(vm, 9, a, b), STVM_PRIM_ERR_GENERIC, "%lld * %lld",
                             (long long)x, (long long)y);
        }
    }
    vm_done(vm);
}

Test(primitives, smallinteger_primitives_1_to_9_compute_exactly_on_61_bits)
{
    check_si_prims(61);
}

Test(primitives, smallinteger_primitives_1_to_9_compute_exactly_on_31_bits)
{
    check_si_prims(31);
}

Test(primitives, smallinteger_overflow_fails_with_generic_code_and_allocates_nothing)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.smallint_bits = 31;
    stvm_vm *vm = vm_make(&cfg);
    int64_t max = stvm_smallint_max(vm), min = stvm_smallint_min(vm);
    stvm_stats before = stats_of(vm);
    cr_assert_eq(fail1(vm, 1, mk_i(vm, max), mk_i(vm, 1)), STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(fail1(vm, 2, mk_i(vm, min), mk_i(vm, 1)), STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(fail1(vm, 9, mk_i(vm, max), mk_i(vm, 2)), STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(fail1(vm, 9, mk_i(vm, min), mk_i(vm, -1)), STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(fail1(vm, 9, mk_i(vm, 1 << 16), mk_i(vm, 1 << 16)), STVM_PRIM_ERR_GENERIC);
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.boxed_allocated, before.boxed_allocated);
    cr_assert_eq(after.objects_live, before.objects_live);
    /* the same sums through the LargeInteger primitives succeed with boxes */
    stvm_oop r = call1(vm, 21, mk_i(vm, max), mk_i(vm, 1));
    cr_assert_str_eq(stvm_oop_class_name(vm, r), "LargePositiveInteger");
    cr_assert_eq(val_i(vm, r), max + 1);
    cr_assert_eq(stvm_oop_release(vm, r), STVM_OK);
    vm_done(vm);
}

Test(primitives, large_integer_primitives_21_to_29_work_across_boxes)
{
    stvm_vm *vm = vm_make(NULL);   /* 61 bits */
    int64_t max = stvm_smallint_max(vm);
    stvm_stats before = stats_of(vm);
    stvm_oop one = mk_i(vm, 1);

    stvm_oop big = call1(vm, 21, mk_i(vm, max), one);   /* 2^60: a box */
    cr_assert_str_eq(stvm_oop_class_name(vm, big), "LargePositiveInteger");
    cr_assert_eq(val_i(vm, big), max + 1);
    stvm_oop back = call1(vm, 22, big, one);          /* normalised */
    cr_assert_eq(back, mk_i(vm, max));
    cr_assert_eq(call1(vm, 21, mk_i(vm, 3), mk_i(vm, 4)), mk_i(vm, 7), "immediates too");
    cr_assert_eq(call1(vm, 22, mk_i(vm, 3), mk_i(vm, 4)), mk_i(vm, -1));

    stvm_oop big4 = call1(vm, 29, big, mk_i(vm, 4));    /* 2^62 */
    cr_assert_eq(val_i(vm, big4), (int64_t)1 << 62);
    stvm_oop neg = call1(vm, 29, big, mk_i(vm, -2));    /* -2^61 */
    cr_assert_str_eq(stvm_oop_class_name(vm, neg), "LargeNegativeInteger");
    cr_assert_eq(val_i(vm, neg), -((int64_t)1 << 61));
    cr_assert_eq(call1(vm, 29, mk_i(vm, 1 << 20), mk_i(vm, 1 << 20)), mk_i(vm, (int64_t)1 << 40));
    stvm_oop pos = call1(vm, 29, mk_i(vm, (int64_t)1 << 30), mk_i(vm, (int64_t)1 << 31));
    cr_assert_str_eq(stvm_oop_class_name(vm, pos), "LargePositiveInteger");
    cr_assert_eq(call1(vm, 21, neg, pos), mk_i(vm, 0), "-2^61 + 2^61 = 0, an immediate");

    /* beyond 64 bits: generic failure, nothing allocated */
    stvm_stats mid = stats_of(vm);
    cr_assert_eq(fail1(vm, 29, big4, big4), STVM_PRIM_ERR_GENERIC);
    cr_assert_eq(fail1(vm, 29, big4, mk_i(vm, 8)), STVM_PRIM_ERR_GENERIC);
    stvm_stats mid2 = stats_of(vm);
    cr_assert_eq(mid2.boxed_allocated, mid.boxed_allocated);

    /* comparisons */
    stvm_oop big_again = call1(vm, 21, mk_i(vm, max), one);
    cr_assert_neq(big_again, big, "a fresh box");
    struct {
        stvm_oop a, b;
        int cmp;
    } cases[] = {
        {big, big_again, 0}, {big, mk_i(vm, max), 1},  {mk_i(vm, max), big, -1},
        {neg, mk_i(vm, -1), -1}, {neg, big, -1},       {big4, big, 1},
        {mk_i(vm, 5), mk_i(vm, 5), 0}, {mk_i(vm, -5), mk_i(vm, 5), -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int c = cases[i].cmp;
        cr_assert_eq(call1(vm, 23, cases[i].a, cases[i].b), boolean(c < 0), "case %zu <", i);
        cr_assert_eq(call1(vm, 24, cases[i].a, cases[i].b), boolean(c > 0), "case %zu >", i);
        cr_assert_eq(call1(vm, 25, cases[i].a, cases[i].b), boolean(c <= 0), "case %zu <=", i);
        cr_assert_eq(call1(vm, 26, cases[i].a, cases[i].b), boolean(c >= 0), "case %zu >=", i);
        cr_assert_eq(call1(vm, 27, cases[i].a, cases[i].b), boolean(c == 0), "case %zu =", i);
        cr_assert_eq(call1(vm, 28, cases[i].a, cases[i].b), boolean(c != 0), "case %zu ~=", i);
    }
    stvm_stats after = stats_of(vm);
    cr_assert_gt(after.large_int_ops, before.large_int_ops);
    cr_assert_eq(after.boxed_allocated - before.boxed_allocated, 5);
    const stvm_oop boxes[] = {big, big4, neg, big_again, pos};
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(stvm_oop_release(vm, boxes[i]), STVM_OK);
    cr_assert_eq(stats_of(vm).objects_live, before.objects_live);
    vm_done(vm);
}

/* ---- process primitives ------------------------------------------------------------- */

static int prim0(stvm_vm *vm, int prim, stvm_oop rcv, stvm_oop *res)
{
    int code = 0;
    int err = stvm_primitive_call(vm, prim, rcv, NULL, 0, res, &code);
    return err == STVM_OK ? 0 : err == STVM_EPRIM ? code : 1000 + err;
}

/* One primitive call from a green process: prim0's code (0: success) and its answer. */
typedef struct prim_call {
    int rc;
    stvm_oop res;
} prim_call;

static void call0(stvm_vm *vm, int prim, stvm_oop rcv, prim_call *c)
{
    c->rc = prim0(vm, prim, rcv, &c->res);
}

typedef struct prim_semaphore {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    prim_call wait, signal;   /* the signaller's */
    int64_t excess_after_wait, wait_switches;
    prim_call high_wait;      /* the waiter's */
    int bad_line;
} prim_semaphore;

static void prim_waiter_high(stvm_vm *vm, void *arg)
{
    prim_semaphore *ps = arg;
    call0(vm, 86, stvm_semaphore_oop(ps->sem), &ps->high_wait);   /* blocks */
    trace_add(&ps->log, 2);
}

static void prim_signaller(stvm_vm *vm, void *arg)
{
    prim_semaphore *ps = arg;
    stvm_oop s = stvm_semaphore_oop(ps->sem);
    uint64_t before = switches(vm);
    call0(vm, 86, s, &ps->wait);   /* consumes the host's signal */
    ps->excess_after_wait = stvm_semaphore_excess(vm, ps->sem);
    ps->wait_switches = (int64_t)(switches(vm) - before);
    GCHECK(ps, stvm_spawn(vm, 50, "high", prim_waiter_high, ps, NULL) == STVM_OK);
    trace_add(&ps->log, 1);
    call0(vm, 85, s, &ps->signal);   /* wakes the 50: preempts */
    trace_add(&ps->log, 3);
}

Test(primitives, signal_85_and_wait_86_behave_like_the_c_api)
{
    prim_semaphore ps = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_semaphore_new(ps.vm, &ps.sem), STVM_OK);
    stvm_oop s = stvm_semaphore_oop(ps.sem), r = SENTINEL;
    cr_assert_eq(prim0(ps.vm, 85, s, &r), 0);
    cr_assert_eq(r, s);
    cr_assert_eq(stvm_semaphore_excess(ps.vm, ps.sem), 1);
    cr_assert_eq(stvm_spawn(ps.vm, 30, "signaller", prim_signaller, &ps, NULL), STVM_OK);
    cr_assert_eq(stvm_run(ps.vm), STVM_OK);
    cr_assert_eq(ps.wait.rc, 0);
    cr_assert_eq(ps.wait.res, s, "wait answers the receiver");
    cr_assert_eq(ps.excess_after_wait, 0);
    cr_assert_eq(ps.wait_switches, 0, "no switch when an excess signal is there");
    cr_assert_eq(ps.signal.rc, 0);
    cr_assert_eq(ps.signal.res, s);
    cr_assert_eq(ps.high_wait.rc, 0);
    cr_assert_eq(ps.high_wait.res, s);
    static const int want[] = {1, 2, 3};
    trace_expect(&ps.log, want, 3);
    stvm_stats st;
    stvm_vm_get_stats(ps.vm, &st);
    cr_assert_eq(st.semaphore_signals, 2);
    cr_assert_eq(st.semaphore_waits, 2);
    vm_done(ps.vm);
}

typedef struct prim_suspend {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    stvm_process *controller, *ready, *waiter;
    prim_call suspend_ready, resume_ready, suspend_waiter, resume_waiter;
    stvm_process_state ready_suspended_state, ready_resumed_state, waiter_suspended_state;
    int64_t excess_after_suspend;
    int bad_line;
} prim_suspend;

static void suspend_resume_prims(stvm_vm *vm, void *arg)
{
    prim_suspend *s = arg;
    stvm_oop b = stvm_process_oop(s->ready), wt = stvm_process_oop(s->waiter);
    call0(vm, 88, b, &s->suspend_ready);     /* ready -> suspended, answers nil */
    s->ready_suspended_state = gstate(vm, s->ready);
    call0(vm, 87, b, &s->resume_ready);      /* -> ready, answers the receiver */
    s->ready_resumed_state = gstate(vm, s->ready);
    call0(vm, 88, wt, &s->suspend_waiter);   /* off the semaphore: answers it */
    s->waiter_suspended_state = gstate(vm, s->waiter);
    s->excess_after_suspend = stvm_semaphore_excess(vm, s->sem);
    trace_add(&s->log, 1);
    call0(vm, 87, wt, &s->resume_waiter);    /* the 50 preempts; its wait -> ESTATE */
    trace_add(&s->log, 2);
}

Test(primitives, resume_87_and_suspend_88_behave_like_the_c_api)
{
    prim_suspend s = {.vm = vm_make(NULL)};
    tagged b = {&s.log, 4};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    logged_wait w = {.sem = s.sem, .log = &s.log, .tag = 3};   /* the C API wait */
    cr_assert_eq(stvm_spawn(s.vm, 50, "waiter", wait_and_log, &w, &s.waiter), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 40, "controller", suspend_resume_prims, &s, &s.controller),
                 STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 30, "B", log_tag, &b, &s.ready), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_OK);
    cr_assert_eq(s.suspend_ready.rc, 0);
    cr_assert_eq(s.suspend_ready.res, STVM_NIL);
    cr_assert_eq(s.ready_suspended_state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(s.resume_ready.rc, 0);
    cr_assert_eq(s.resume_ready.res, stvm_process_oop(s.ready));
    cr_assert_eq(s.ready_resumed_state, STVM_PROCESS_READY);
    cr_assert_eq(s.suspend_waiter.rc, 0);
    cr_assert_eq(s.suspend_waiter.res, stvm_semaphore_oop(s.sem), "suspend answers the old list");
    cr_assert_eq(s.waiter_suspended_state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(s.excess_after_suspend, 0);
    cr_assert_eq(s.resume_waiter.rc, 0);
    cr_assert_eq(w.rc, STVM_ESTATE);
    static const int want[] = {1, 3, 2, 4};
    trace_expect(&s.log, want, 4);
    vm_done(s.vm);
}

/* A hog (hold_until_signalled) owns the mutex; the queuer waits for it. */
typedef struct prim_mutex_waiter {
    stvm_vm *vm;
    stvm_mutex *m;
    stvm_semaphore *release;
    stvm_process *hog, *queuer;
    int queuer_enter_rc;
    prim_call suspend_queuer;
    stvm_process_state queuer_state;   /* after the suspend */
    int terminate_rc;
    int bad_line;
} prim_mutex_waiter;

static void mutex_queuer(stvm_vm *vm, void *arg)
{
    prim_mutex_waiter *s = arg;
    s->queuer_enter_rc = stvm_mutex_enter(vm, s->m);
}

static void suspend_mutex_waiter(stvm_vm *vm, void *arg)
{
    prim_mutex_waiter *s = arg;
    call0(vm, 88, stvm_process_oop(s->queuer), &s->suspend_queuer);
    s->queuer_state = gstate(vm, s->queuer);
    s->terminate_rc = stvm_process_terminate(vm, s->queuer);
    stvm_semaphore_signal(vm, s->release);
}

Test(primitives, suspend_88_of_a_mutex_waiter_answers_the_mutex)
{
    prim_mutex_waiter s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.release), STVM_OK);
    holder h = {s.m, s.release, &s.bad_line};
    cr_assert_eq(stvm_spawn(s.vm, 60, "hog", hold_until_signalled, &h, &s.hog), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 50, "queuer", mutex_queuer, &s, &s.queuer), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 40, "suspender", suspend_mutex_waiter, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_OK);
    cr_assert_eq(s.bad_line, 0, "line %d", s.bad_line);
    cr_assert_eq(s.suspend_queuer.rc, 0);
    cr_assert_eq(s.suspend_queuer.res, stvm_mutex_oop(s.m));
    cr_assert_eq(s.queuer_state, STVM_PROCESS_SUSPENDED);
    cr_assert_eq(s.terminate_rc, STVM_OK);
    cr_assert_null(stvm_mutex_owner(s.vm, s.m));
    vm_done(s.vm);
}

typedef struct prim_yield {
    stvm_vm *vm;
    trace_log log;
    prim_call yield;
    int bad_line;
} prim_yield;

static void prim_yielder(stvm_vm *vm, void *arg)
{
    prim_yield *s = arg;
    trace_add(&s->log, 1);
    call0(vm, 167, STVM_NIL, &s->yield);
    trace_add(&s->log, 3);
}

Test(primitives, yield_167_lets_equal_priority_processes_run_first)
{
    prim_yield s = {.vm = vm_make(NULL)};
    tagged b = {&s.log, 2};
    cr_assert_eq(stvm_spawn(s.vm, 30, "A", prim_yielder, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 30, "B", log_tag, &b, NULL), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_OK);
    cr_assert_eq(s.yield.rc, 0);
    cr_assert_eq(s.yield.res, STVM_NIL, "answers the receiver");
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    vm_done(s.vm);
}

/* The critical-section calls of the owner A and the contender (50), in the order they
 * are made; the owner is recorded after some of them. */
enum {
    A_ENTER,            /* 186: acquired, false */
    A_ENTER_AGAIN,      /* 186 by the owner: true */
    A_TEST,             /* 187 by the owner: true */
    A_EXIT,             /* 185: hands off, the contender preempts */
    CONTENDER_TEST,     /* 187 while A owns it: nil */
    CONTENDER_ENTER,    /* 186: blocks, handed over by A's exit */
    CONTENDER_EXIT,     /* 185 */
    A_TEST_FREE,        /* 187 on the free mutex: taken, false */
    A_LAST_EXIT,        /* 185 */
    CS_CALLS
};

typedef struct prim_critical {
    stvm_vm *vm;
    stvm_mutex *m;
    trace_log log;
    stvm_process *a;
    prim_call call[CS_CALLS];
    stvm_process *owner_after[CS_CALLS];
    int bad_line;
} prim_critical;

static void cs_contender(stvm_vm *vm, void *arg)
{
    prim_critical *s = arg;
    stvm_oop m = stvm_mutex_oop(s->m);
    call0(vm, 187, m, &s->call[CONTENDER_TEST]);
    trace_add(&s->log, 2);
    call0(vm, 186, m, &s->call[CONTENDER_ENTER]);
    s->owner_after[CONTENDER_ENTER] = stvm_mutex_owner(vm, s->m);
    trace_add(&s->log, 4);
    call0(vm, 185, m, &s->call[CONTENDER_EXIT]);
    s->owner_after[CONTENDER_EXIT] = stvm_mutex_owner(vm, s->m);
}

static void cs_owner(stvm_vm *vm, void *arg)
{
    prim_critical *s = arg;
    stvm_oop m = stvm_mutex_oop(s->m);
    call0(vm, 186, m, &s->call[A_ENTER]);
    s->owner_after[A_ENTER] = stvm_mutex_owner(vm, s->m);
    call0(vm, 186, m, &s->call[A_ENTER_AGAIN]);
    call0(vm, 187, m, &s->call[A_TEST]);
    trace_add(&s->log, 1);
    GCHECK(s, stvm_spawn(vm, 50, "contender", cs_contender, s, NULL) == STVM_OK);
    trace_add(&s->log, 3);
    call0(vm, 185, m, &s->call[A_EXIT]);
    trace_add(&s->log, 5);
    s->owner_after[A_EXIT] = stvm_mutex_owner(vm, s->m);
    call0(vm, 187, m, &s->call[A_TEST_FREE]);
    s->owner_after[A_TEST_FREE] = stvm_mutex_owner(vm, s->m);
    call0(vm, 185, m, &s->call[A_LAST_EXIT]);
    s->owner_after[A_LAST_EXIT] = stvm_mutex_owner(vm, s->m);
    s->a = stvm_vm_active_process(vm);
}

Test(primitives, critical_section_primitives_185_186_187_behave_like_the_c_api)
{
    prim_critical s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    stvm_oop m = stvm_mutex_oop(s.m);
    cr_assert_eq(stvm_spawn(s.vm, 40, "A", cs_owner, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_OK);
    cr_assert_eq(s.bad_line, 0, "line %d", s.bad_line);
    for (int i = 0; i < CS_CALLS; i++)
        cr_assert_eq(s.call[i].rc, 0, "call %d failed with %d", i, s.call[i].rc);
    cr_assert_eq(s.call[A_ENTER].res, STVM_FALSE, "186 acquired");
    cr_assert_eq(s.owner_after[A_ENTER], s.a);
    cr_assert_eq(s.call[A_ENTER_AGAIN].res, STVM_TRUE, "186 by the owner");
    cr_assert_eq(s.call[A_TEST].res, STVM_TRUE, "187 by the owner");
    cr_assert_eq(s.call[CONTENDER_TEST].res, STVM_NIL, "187 while another owns it");
    cr_assert_eq(s.call[CONTENDER_ENTER].res, STVM_FALSE, "186 after the hand-off: acquired");
    cr_assert_neq(s.owner_after[CONTENDER_ENTER], s.a);
    cr_assert_not_null(s.owner_after[CONTENDER_ENTER]);
    cr_assert_eq(s.call[A_EXIT].res, m, "185 answers the receiver");
    cr_assert_eq(s.call[CONTENDER_EXIT].res, m);
    cr_assert_null(s.owner_after[CONTENDER_EXIT]);
    cr_assert_null(s.owner_after[A_EXIT]);
    cr_assert_eq(s.call[A_TEST_FREE].res, STVM_FALSE, "187 on a free mutex takes it");
    cr_assert_eq(s.owner_after[A_TEST_FREE], s.a);
    cr_assert_null(s.owner_after[A_LAST_EXIT], "one 185 releases, whatever the 186 count");
    static const int want[] = {1, 2, 3, 4, 5};
    trace_expect(&s.log, want, 5);
    vm_done(s.vm);
}

/* A holder owns the mutex through the primitives; a waiter's 186 is cut short. */
typedef struct prim_cut_short {
    stvm_vm *vm;
    stvm_mutex *m;
    stvm_semaphore *release;
    trace_log log;
    stvm_process *holder, *waiter;
    stvm_oop holder_enter_res, holder_exit_res;
    prim_call waiter_enter;
    stvm_process *owner_after_waiter_enter;
    int suspend_rc, resume_rc;
    int bad_line;
} prim_cut_short;

static void cs_holder(stvm_vm *vm, void *arg)
{
    prim_cut_short *s = arg;
    GCHECK(s, prim0(vm, 186, stvm_mutex_oop(s->m), &s->holder_enter_res) == 0);
    GCHECK(s, stvm_semaphore_wait(vm, s->release) == STVM_OK);
    GCHECK(s, prim0(vm, 185, stvm_mutex_oop(s->m), &s->holder_exit_res) == 0);
}

static void cs_aborted(stvm_vm *vm, void *arg)
{
    prim_cut_short *s = arg;
    call0(vm, 186, stvm_mutex_oop(s->m), &s->waiter_enter);   /* blocks */
    s->owner_after_waiter_enter = stvm_mutex_owner(vm, s->m);
    trace_add(&s->log, 2);
}

static void cs_suspender(stvm_vm *vm, void *arg)
{
    prim_cut_short *s = arg;
    s->suspend_rc = stvm_process_suspend(vm, s->waiter);
    trace_add(&s->log, 1);
    s->resume_rc = stvm_process_resume(vm, s->waiter);   /* 50 > 30: runs now */
    trace_add(&s->log, 3);
    stvm_semaphore_signal(vm, s->release);
}

Test(primitives, enter_critical_186_cut_short_by_suspend_answers_nil_without_owning)
{
    prim_cut_short s = {.vm = vm_make(NULL)};
    cr_assert_eq(stvm_mutex_new(s.vm, &s.m), STVM_OK);
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.release), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 60, "holder", cs_holder, &s, &s.holder), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 50, "waiter", cs_aborted, &s, &s.waiter), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 30, "suspender", cs_suspender, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_OK);
    cr_assert_eq(s.bad_line, 0, "line %d", s.bad_line);
    cr_assert_eq(s.suspend_rc, STVM_OK);
    cr_assert_eq(s.resume_rc, STVM_OK);
    cr_assert_eq(s.waiter_enter.rc, 0);
    cr_assert_eq(s.waiter_enter.res, STVM_NIL);
    cr_assert_eq(s.owner_after_waiter_enter, s.holder, "the holder still owns it");
    static const int want[] = {1, 2, 3};
    trace_expect(&s.log, want, 3);
    cr_assert_null(stvm_mutex_owner(s.vm, s.m));
    vm_done(s.vm);
}

/* ---- clocks and timers ------------------------------------------------------------- */

Test(primitives, millisecond_clock_135_answers_a_masked_smallinteger)
{
    stvm_vm *vm = sim_vm(61, 0, 0x1FFFFFFF);
    stvm_vm_reset_stats(vm);
    stvm_oop r = SENTINEL;
    cr_assert_eq(prim0(vm, 135, STVM_NIL, &r), 0);
    cr_assert(stvm_oop_is_smallint(r));
    cr_assert_eq(val_i(vm, r), 0x1FFFFFFF);
    cr_assert_eq(stats_of(vm).clock_reads, 1);
    vm_done(vm);

    vm = vm_make(NULL);
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(prim0(vm, 135, mk_i(vm, 3), &r), 0, "any receiver");
        cr_assert(stvm_oop_is_smallint(r));
        cr_assert_geq(val_i(vm, r), 0);
        cr_assert_leq(val_i(vm, r), 0x1FFFFFFF);
    }
    vm_done(vm);
}

static void check_us_clock(int bits, const char *cls)
{
    const uint64_t start = 3900000000000123ull;   /* 2024-ish, microseconds since 1901 */
    stvm_vm *vm = sim_vm(bits, start, 0);
    stvm_stats before = stats_of(vm);
    stvm_oop r = SENTINEL;
    cr_assert_eq(prim0(vm, 240, STVM_NIL, &r), 0);
    cr_assert_str_eq(stvm_oop_class_name(vm, r), cls);
    uint64_t v = 0;
    cr_assert_eq(stvm_int_to_u64(vm, r, &v), STVM_OK);
    cr_assert_eq(v, start);
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.clock_reads, before.clock_reads + 1);
    cr_assert_eq(after.boxed_allocated - before.boxed_allocated,
                 strcmp(cls, "SmallInteger") ? 1u : 0u);
    cr_assert_eq(stvm_oop_release(vm, r), STVM_OK);
    cr_assert_eq(stats_of(vm).objects_live, before.objects_live);
    vm_done(vm);
}

Test(primitives, microsecond_clock_240_is_a_smallinteger_on_61_bits)
{
    check_us_clock(61, "SmallInteger");
}

Test(primitives, microsecond_clock_240_is_a_large_positive_integer_on_31_bits)
{
    check_us_clock(31, "LargePositiveInteger");
}

Test(primitives, microsecond_clock_240_follows_the_real_clock)
{
    stvm_vm *vm = vm_make(NULL);
    uint64_t t0 = stvm_vm_now_us(vm), v = 0;
    stvm_oop r;
    cr_assert_eq(prim0(vm, 240, STVM_NIL, &r), 0);
    uint64_t t1 = stvm_vm_now_us(vm);
    cr_assert_eq(stvm_int_to_u64(vm, r, &v), STVM_OK);
    cr_assert_geq(v, t0);
    cr_assert_leq(v, t1);
    cr_assert(stvm_oop_is_smallint(r));
    vm_done(vm);
}

typedef struct prim_timer {
    stvm_vm *vm;
    stvm_semaphore *sem;
    int64_t deadline_is_smallint;
    int arm_rc;          /* 242 */
    stvm_oop arm_res;
    int wait_rc;
    int64_t woke_at;     /* us */
    int bad_line;
} prim_timer;

static void timer_user(stvm_vm *vm, void *arg)
{
    prim_timer *s = arg;
    stvm_oop now, delta = (stvm_oop)((5000u << 1) | 1u), deadline, args[2];
    int code = 0;
    GCHECK(s, stvm_primitive_call(vm, 240, STVM_NIL, NULL, 0, &now, &code) == STVM_OK);
    GCHECK(s, stvm_primitive_call(vm, 21, now, &delta, 1, &deadline, &code) == STVM_OK);
    s->deadline_is_smallint = stvm_oop_is_smallint(deadline);
    args[0] = stvm_semaphore_oop(s->sem);
    args[1] = deadline;
    s->arm_rc = stvm_primitive_call(vm, 242, STVM_NIL, args, 2, &s->arm_res, &code);
    s->wait_rc = stvm_semaphore_wait(vm, s->sem);
    s->woke_at = (int64_t)stvm_vm_now_us(vm);
    stvm_oop_release(vm, now);
    stvm_oop_release(vm, deadline);
}

static void check_timer_242(int bits)
{
    const uint64_t start = 3900000000000000ull;
    prim_timer s = {.vm = sim_vm(bits, start, 0)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 40, "sleeper", timer_user, &s, NULL), STVM_OK);
    stvm_stats before = stats_of(s.vm);   /* the process handle is an object too */
    cr_assert_eq(stvm_run(s.vm), STVM_OK);
    cr_assert_eq(s.bad_line, 0, "line %d", s.bad_line);
    cr_assert_eq(s.deadline_is_smallint, bits == 61, "the deadline is boxed only on 31 bits");
    cr_assert_eq(s.arm_rc, STVM_OK);
    cr_assert_eq(s.arm_res, STVM_NIL, "answers the receiver");
    cr_assert_eq(s.wait_rc, STVM_OK);
    cr_assert_eq((uint64_t)s.woke_at, start + 5000, "woke at %llu",
                 (unsigned long long)s.woke_at);
    stvm_stats after = stats_of(s.vm);
    cr_assert_eq(after.timer_fires - before.timer_fires, 1);
    cr_assert_eq(after.objects_live, before.objects_live);
    cr_assert_eq(stvm_semaphore_free(s.vm, s.sem), STVM_OK, "the one-shot timer let go");
    vm_done(s.vm);
}

Test(primitives, signal_at_utc_microseconds_242_wakes_the_waiter_at_the_deadline_61_bits)
{
    check_timer_242(61);
}

Test(primitives, signal_at_utc_microseconds_242_takes_a_boxed_deadline_on_31_bits)
{
    check_timer_242(31);
}

/* A timer armed with 242, then disarmed by a second 242. */
typedef struct disarming {
    stvm_vm *vm;
    stvm_semaphore *sem;
    trace_log log;
    int variant;      /* how arm_then_disarm disarms: 0 with nil, 1 with deadline 0 */
    int disarm_rc;
    int wait_rc;
    int bad_line;
} disarming;

static void arm_then_disarm(stvm_vm *vm, void *arg)
{
    disarming *s = arg;
    stvm_oop args[2] = {stvm_semaphore_oop(s->sem), (stvm_oop)((1000u << 1) | 1u)};
    int code = 0;
    GCHECK(s, stvm_primitive_call(vm, 242, STVM_NIL, args, 2, NULL, &code) == STVM_OK);
    if (s->variant == 0)
        args[0] = STVM_NIL;                        /* nil: disarm */
    else
        args[1] = (stvm_oop)((0u << 1) | 1u);      /* deadline 0: no timer either */
    s->disarm_rc = stvm_primitive_call(vm, 242, STVM_NIL, args, 2, NULL, &code);
    s->wait_rc = stvm_semaphore_wait(vm, s->sem);
    trace_add(&s->log, 1);
}

Test(primitives, signal_at_utc_microseconds_242_with_nil_or_0_disarms_the_timer)
{
    for (int variant = 0; variant < 2; variant++) {
        disarming s = {.vm = sim_vm(61, 0, 0)};
        s.variant = variant;
        cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
        stvm_process *p = NULL;
        cr_assert_eq(stvm_spawn(s.vm, 40, "sleeper", arm_then_disarm, &s, &p), STVM_OK);
        int err = stvm_run(s.vm);
        cr_assert_eq(err, STVM_EDEADLOCK, "variant %d: %s", variant, stvm_err_name(err));
        cr_assert_eq(s.bad_line, 0, "line %d", s.bad_line);
        cr_assert_eq(s.disarm_rc, STVM_OK);
        cr_assert_eq(s.log.n, 0, "nothing fired");
        cr_assert_eq(stats_of(s.vm).timer_fires, 0);
        char report[256];
        stvm_vm_blocked_report(s.vm, report, sizeof report);
        cr_assert_not_null(strstr(report, "sleeper"), "%s", report);
        cr_assert_eq(stvm_process_terminate(s.vm, p), STVM_OK);
        vm_done(s.vm);
    }
}

/* Deadline 0 means "no timer" (as nil does): the semaphore is then not the timer's and
 * may be freed like any other (stvm_semaphore_free's ESTATE cases are waiters and
 * external registration only). */
static void arm_then_zero(stvm_vm *vm, void *arg)
{
    disarming *s = arg;
    stvm_oop args[2] = {stvm_semaphore_oop(s->sem), (stvm_oop)((1000u << 1) | 1u)};
    int code = 0;
    GCHECK(s, stvm_primitive_call(vm, 242, STVM_NIL, args, 2, NULL, &code) == STVM_OK);
    args[1] = (stvm_oop)1u;   /* SmallInteger 0 */
    s->disarm_rc = stvm_primitive_call(vm, 242, STVM_NIL, args, 2, NULL, &code);
}

Test(primitives, a_semaphore_whose_timer_was_disarmed_with_0_can_be_freed)
{
    disarming s = {.vm = sim_vm(61, 0, 0)};
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 40, "disarmer", arm_then_zero, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_OK, "no timer left to wait for");
    cr_assert_eq(s.bad_line, 0, "line %d", s.bad_line);
    cr_assert_eq(s.disarm_rc, STVM_OK);
    cr_assert_eq(stats_of(s.vm).timer_fires, 0);
    int err = stvm_semaphore_free(s.vm, s.sem);
    vm_done(s.vm);
    cr_assert_eq(err, STVM_OK, "free after disarming with 0: %s", stvm_err_name(err));
}

typedef struct ms_timer {
    stvm_vm *vm;
    stvm_semaphore *sem;
    int64_t ahead_ms;                 /* where the tick is set, from the clock's value */
    int64_t ms_before, ms_after;      /* primitive 135 around the wait */
    int64_t woke_at;                  /* us */
    int arm_rc;                       /* 136 */
    stvm_oop arm_res;
    int wait_rc;
    int bad_line;
} ms_timer;

static void ms_timer_user(stvm_vm *vm, void *arg)
{
    ms_timer *s = arg;
    stvm_oop ms, args[2];
    int code = 0;
    GCHECK(s, stvm_primitive_call(vm, 135, STVM_NIL, NULL, 0, &ms, &code) == STVM_OK);
    s->ms_before = (int64_t)(ms >> 1);
    args[0] = stvm_semaphore_oop(s->sem);
    args[1] = (stvm_oop)((((uint64_t)(s->ms_before + s->ahead_ms) & 0x1FFFFFFF) << 1) | 1u);
    s->arm_rc = stvm_primitive_call(vm, 136, STVM_NIL, args, 2, &s->arm_res, &code);
    s->wait_rc = stvm_semaphore_wait(vm, s->sem);
    GCHECK(s, stvm_primitive_call(vm, 135, STVM_NIL, NULL, 0, &ms, &code) == STVM_OK);
    s->ms_after = (int64_t)(ms >> 1);
    s->woke_at = (int64_t)stvm_vm_now_us(vm);
}

Test(primitives, signal_at_milliseconds_136_wakes_the_waiter_at_the_tick)
{
    const uint64_t start = 3900000000000000ull;
    ms_timer s = {.vm = sim_vm(31, start, 100)};
    s.ahead_ms = 7;   /* 7 ms ahead */
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 40, "sleeper", ms_timer_user, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_OK);
    cr_assert_eq(s.bad_line, 0, "line %d", s.bad_line);
    cr_assert_eq(s.ms_before, 100);
    cr_assert_eq(s.arm_rc, STVM_OK);
    cr_assert_eq(s.arm_res, STVM_NIL);
    cr_assert_eq(s.wait_rc, STVM_OK);
    cr_assert_eq(s.ms_after, 107);
    cr_assert_eq((uint64_t)s.woke_at, start + 7000);
    vm_done(s.vm);
}

Test(primitives, signal_at_milliseconds_136_with_a_past_tick_fires_at_once)
{
    const uint64_t start = 3900000000000000ull;
    ms_timer s = {.vm = sim_vm(61, start, 100)};
    s.ahead_ms = -1;   /* one tick in the past */
    cr_assert_eq(stvm_semaphore_new(s.vm, &s.sem), STVM_OK);
    cr_assert_eq(stvm_spawn(s.vm, 40, "sleeper", ms_timer_user, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_OK);
    cr_assert_eq(s.arm_rc, STVM_OK);
    cr_assert_eq(s.wait_rc, STVM_OK);
    cr_assert_eq(s.ms_after, 100, "no time passed");
    cr_assert_eq((uint64_t)s.woke_at, start);
    vm_done(s.vm);
}

typedef struct relinquishing {
    stvm_vm *vm;
    int zero_rc, big_rc;        /* 230 with 0 and with 1000000 */
    stvm_oop zero_res, big_res;
    int64_t elapsed_us;         /* simulated time across both */
    int bad_line;
} relinquishing;

static void relinquisher(stvm_vm *vm, void *arg)
{
    relinquishing *s = arg;
    stvm_oop zero = (stvm_oop)1u, big = (stvm_oop)((1000000u << 1) | 1u);
    uint64_t t0 = stvm_vm_now_us(vm);
    int code = 0;
    s->zero_rc = stvm_primitive_call(vm, 230, STVM_NIL, &zero, 1, &s->zero_res, &code);
    s->big_rc = stvm_primitive_call(vm, 230, STVM_NIL, &big, 1, &s->big_res, &code);
    s->elapsed_us = (int64_t)(stvm_vm_now_us(vm) - t0);
}

Test(primitives, relinquish_230_accepts_non_negative_smallintegers)
{
    relinquishing s = {.vm = sim_vm(61, 0, 0)};
    cr_assert_eq(stvm_spawn(s.vm, 40, "busy", relinquisher, &s, NULL), STVM_OK);
    cr_assert_eq(stvm_run(s.vm), STVM_OK);
    cr_assert_eq(s.zero_rc, STVM_OK);
    cr_assert_eq(s.big_rc, STVM_OK);
    cr_assert_eq(s.zero_res, STVM_NIL, "answers the receiver");
    cr_assert_eq(s.elapsed_us, 0, "simulated time moves only when every process is blocked");
    vm_done(s.vm);
}

/* 230 sleeps its caller, so like 86, 167 and 185-187 it needs an active process: from
 * the embedding thread outside stvm_run it fails with INAPPROPRIATE before looking at
 * its argument, and neither sleeps nor changes anything (it used to sleep and answer
 * the receiver). From a process its argument is still checked. */
typedef struct relinquish_box_run {
    stvm_vm *vm;
    stvm_oop box;          /* a boxed argument: bad for 230 */
    stvm_oop res;
    int rc, code;
} relinquish_box_run;

static void relinquish_box(stvm_vm *vm, void *arg)
{
    relinquish_box_run *r = arg;
    r->rc = stvm_primitive_call(vm, 230, STVM_NIL, &r->box, 1, &r->res, &r->code);
}

Test(primitives, relinquish_230_on_the_host_thread_is_inappropriate_and_does_not_sleep)
{
    stvm_vm *vm = vm_make(NULL);   /* the real clock: the old behaviour slept here */
    const stvm_oop second = (stvm_oop)((1000000u << 1) | 1u), zero = (stvm_oop)1u;
    const stvm_oop args[] = {second, zero, (stvm_oop)-1 << 1 | 1u, STVM_NIL};
    stvm_stats before = stats_of(vm);
    uint64_t t0 = stvm_vm_now_us(vm);
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        stvm_oop res = SENTINEL;
        int code = 77;
        cr_assert_eq(stvm_primitive_call(vm, 230, STVM_NIL, &args[i], 1, &res, &code),
                     STVM_EPRIM, "argument %zu", i);
        cr_assert_eq(code, STVM_PRIM_ERR_INAPPROPRIATE, "argument %zu: code %d", i, code);
        cr_assert_eq(res, SENTINEL);
    }
    cr_assert_lt(stvm_vm_now_us(vm) - t0, 500000u, "the host thread slept");
    stvm_stats after = stats_of(vm);
    cr_assert_eq(after.idle_sleeps, before.idle_sleeps);
    cr_assert_eq(memcmp(&before, &after, sizeof before), 0, "a failed call changed a counter");
    vm_done(vm);

    relinquish_box_run r = {.vm = sim_vm(31, SIM_START, 0), .res = SENTINEL};
    r.box = mk_u(r.vm, 1ull << 40);   /* boxed on a 31-bit VM */
    cr_assert_eq(stvm_spawn(r.vm, 40, "relinquisher", relinquish_box, &r, NULL), STVM_OK);
    cr_assert_eq(stvm_run(r.vm), STVM_OK);
    cr_assert_eq(r.rc, STVM_EPRIM);
    cr_assert_eq(r.code, STVM_PRIM_ERR_BAD_ARGUMENT, "from a process: code %d", r.code);
    cr_assert_eq(r.res, SENTINEL, "a failed call leaves the result alone");
    cr_assert_eq(stvm_oop_release(r.vm, r.box), STVM_OK);
    vm_done(r.vm);
}
