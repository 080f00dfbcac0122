/*
 * fuzz_primitives: sequences of stvm_primitive_call over the primitive table.
 *
 * The input is a configuration (31- or 61-bit SmallIntegers, ms or us Delay scheduler,
 * simulated clock start, guard kind), a pool and a stream of operations. The pool
 * holds SmallIntegers at the edges of the 31- and 61-bit ranges, tagged words beyond
 * them, boxes (stvm_int_from_i64/u64), semaphores, mutexes, processes (suspended,
 * ready, waiting, finished; held handles and handles living in a stack), nil, true,
 * false, stray words and the oops of two other VMs. Operations are mostly primitive
 * calls (a number from stvm_primitive_numbers or one the table lacks, a receiver and
 * arguments drawn from the pool, sometimes the wrong argument count or NULL args),
 * mixed with spawning processes, running the VM, making and releasing boxes, freeing
 * objects and terminating processes. The stream is consumed by the host thread and,
 * during stvm_run, by green "driver" processes, so every primitive is called from
 * both sides.
 *
 * After every call: a result that agrees with a model of the primitive (exact integer
 * arithmetic, the failure code Pharo's VM gives for the receiver or argument, the
 * answer each primitive documents); a failure code among Pharo's; and after a failure
 * the VM exactly as before (fuzz_common.h, the snapshot). After every operation the
 * scheduler's invariants.
 */
#include "fuzz_common.h"

#define SENTINEL ((stvm_oop)0xDEADBEE0u)
#define NO_CODE (-12345)

/* Pharo's argument count per primitive: the table must be exactly this. */
static const struct {
    int number, nargs;
} prim_table[] = {
    {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 1}, {8, 1}, {9, 1},
    {21, 1}, {22, 1}, {23, 1}, {24, 1}, {25, 1}, {26, 1}, {27, 1}, {28, 1}, {29, 1},
    {85, 0}, {86, 0}, {87, 0}, {88, 0}, {135, 0}, {136, 2}, {167, 0},
    {185, 0}, {186, 0}, {187, 0}, {230, 1}, {240, 0}, {242, 2},
};
#define NPRIM ((int)(sizeof prim_table / sizeof prim_table[0]))

/* Numbers the table does not have. */
static const int unknown_numbers[] = {0, -1, 10, 20, 30, 84, 89, 134, 137, 166, 168, 184, 188,
                                      229, 231, 239, 241, 243, 1000, INT32_MIN, INT32_MAX};
#define NUNKNOWN ((int)(sizeof unknown_numbers / sizeof unknown_numbers[0]))

static int table_nargs(int number)
{
    for (int i = 0; i < NPRIM; i++)
        if (prim_table[i].number == number)
            return prim_table[i].nargs;
    return -1;
}

static bool pharo_code(int code)
{
    switch (code) {
    case STVM_PRIM_ERR_GENERIC: case STVM_PRIM_ERR_BAD_RECEIVER:
    case STVM_PRIM_ERR_BAD_ARGUMENT: case STVM_PRIM_ERR_BAD_INDEX:
    case STVM_PRIM_ERR_BAD_NUM_ARGS: case STVM_PRIM_ERR_INAPPROPRIATE:
    case STVM_PRIM_ERR_UNSUPPORTED: case STVM_PRIM_ERR_NO_MEMORY:
        return true;
    default:
        return false;
    }
}

/* ---- what an oop is, as far as the run knows ------------------------------------------ */

enum cls { C_BAD, C_SI, C_BOX, C_SEM, C_MUT, C_PROC };

typedef struct klass {
    enum cls k;
    bool tagged;               /* a tagged word (C_SI, or C_BAD when out of range) */
    __int128 v;                /* C_SI, C_BOX */
    stvm_process *h;           /* C_PROC */
    stvm_process_info info;    /* C_PROC */
} klass;

static bool known_sem(const fz_ctx *c, stvm_oop o)
{
    for (int i = 0; i < c->nsem; i++)
        if (c->sem[i] && stvm_semaphore_oop(c->sem[i]) == o)
            return true;
    return false;
}

static bool known_mut(const fz_ctx *c, stvm_oop o)
{
    for (int i = 0; i < c->nmut; i++)
        if (c->mut[i] && stvm_mutex_oop(c->mut[i]) == o)
            return true;
    return false;
}

static bool known_proc(const fz_ctx *c, stvm_oop o)
{
    for (int i = 0; i < c->nproc; i++)
        if (c->proc[i] && stvm_process_oop(c->proc[i]) == o)
            return true;
    return false;
}

static void expect_class(fz_ctx *c, stvm_oop o, const char *want)
{
    const char *got = stvm_oop_class_name(c->vm, o);
    FZ_CHECK((!got && !want) || (got && want && strcmp(got, want) == 0),
             "class of %#lx: %s, expected %s", (unsigned long)o, got ? got : "NULL",
             want ? want : "NULL");
}

static klass classify(fz_ctx *c, stvm_oop o)
{
    klass r;
    memset(&r, 0, sizeof r);
    r.k = C_BAD;
    if (o == STVM_NIL || o == STVM_TRUE || o == STVM_FALSE) {
        expect_class(c, o, o == STVM_NIL ? "UndefinedObject" : o == STVM_TRUE ? "True" : "False");
        FZ_CHECK(!stvm_oop_is_integer(c->vm, o), "nil/true/false is an integer");
        return r;
    }
    if (o & 1) {
        r.tagged = true;
        r.v = fz_untag(o);
        if (fz_si_in_range(c, o))
            r.k = C_SI;
        FZ_CHECK(stvm_oop_is_integer(c->vm, o) == (r.k == C_SI),
                 "stvm_oop_is_integer(%#lx) disagrees with the SmallInteger range",
                 (unsigned long)o);
        FZ_CHECK(stvm_oop_is_smallint(o), "a tagged word is not a SmallInteger");
        return r;
    }
    if (fz_is_foreign(o) || o == (stvm_oop)fz_stray) {
        expect_class(c, o, NULL);
        FZ_CHECK(!stvm_oop_is_integer(c->vm, o), "a foreign box is an integer of this VM");
        return r;
    }
    int bi = fz_box_index(c, o);
    if (bi >= 0) {
        r.k = C_BOX;
        r.v = c->box[bi].value;
        expect_class(c, o, r.v < 0 ? "LargeNegativeInteger" : "LargePositiveInteger");
        FZ_CHECK(stvm_oop_is_integer(c->vm, o), "a live box is no integer");
        return r;
    }
    if (known_sem(c, o)) {
        expect_class(c, o, "Semaphore");
        r.k = C_SEM;
        return r;
    }
    if (known_mut(c, o)) {
        expect_class(c, o, "Mutex");
        r.k = C_MUT;
        return r;
    }
    bool held = known_proc(c, o);
    const char *name = stvm_oop_class_name(c->vm, o);
    if (held)
        FZ_CHECK(name && strcmp(name, "Process") == 0, "a held handle is not a Process");
    /* Anything else the run does not track itself (stale oops, handles in stacks, the
     * Delay scheduler's boxes, stray words): what the library says it is. */
    if (!name)
        return r;
    if (strcmp(name, "Semaphore") == 0) {
        r.k = C_SEM;
    } else if (strcmp(name, "Mutex") == 0) {
        r.k = C_MUT;
    } else if (strcmp(name, "Process") == 0) {
        r.k = C_PROC;
        r.h = (stvm_process *)o;
        FZ_CHECK(stvm_process_get_info(c->vm, r.h, &r.info) == STVM_OK, "info of a Process");
    } else if (strcmp(name, "LargePositiveInteger") == 0 ||
               strcmp(name, "LargeNegativeInteger") == 0) {
        r.k = C_BOX;
        FZ_CHECK(fz_int_value(c, o, &r.v), "cannot read a %s", name);
        FZ_CHECK(stvm_oop_is_integer(c->vm, o), "a %s is no integer", name);
    } else {
        fz_fail(__FILE__, __LINE__, "class name %s for a word %#lx", name, (unsigned long)o);
    }
    return r;
}

static bool is_int(const klass *k) { return k->k == C_SI || k->k == C_BOX; }
static bool live_proc(const klass *k)
{
    return k->k == C_PROC && k->info.state != STVM_PROCESS_TERMINATED;
}

/* ---- the expected outcome ------------------------------------------------------------ */

enum { EXP_ANY = -1, EXP_EINVAL = -2, EXP_SKIP = -3 };

typedef struct call {
    int number, nargs;
    stvm_oop r, a[3];
    bool null_args;
    klass kr, ka[3];
    bool host;
    stvm_process *me;
    /* state before the call, for checking what a success did */
    int64_t excess_before;
    bool sem_had_waiters;
    stvm_process *owner_before;
    uint64_t now_before;
    stvm_stats stats_before;
} call;

/* Primitives that need a process: from the host thread they fail as inappropriate
 * before anything else is looked at (the table's caller column). */
static bool needs_process(int n)
{
    return n == 86 || n == 167 || n == 185 || n == 186 || n == 187 || n == 230;
}

static int expect(fz_ctx *c, call *x)
{
    int want_nargs = table_nargs(x->number);
    if (want_nargs < 0 || x->nargs < 0 || (x->nargs > 0 && x->null_args))
        return EXP_EINVAL;
    if (x->nargs != want_nargs)
        return STVM_PRIM_ERR_BAD_NUM_ARGS;
    const klass *r = &x->kr, *a0 = &x->ka[0], *a1 = &x->ka[1];
    int n = x->number;
    if (x->host && needs_process(n))
        return STVM_PRIM_ERR_INAPPROPRIATE;
    if (n >= 1 && n <= 9) {
        if (r->k != C_SI)
            return STVM_PRIM_ERR_BAD_RECEIVER;
        if (a0->k != C_SI)
            return STVM_PRIM_ERR_BAD_ARGUMENT;
    }
    if (n >= 21 && n <= 29) {
        if (!is_int(r))
            return STVM_PRIM_ERR_BAD_RECEIVER;
        if (!is_int(a0))
            return STVM_PRIM_ERR_BAD_ARGUMENT;
    }
    if ((n >= 1 && n <= 9) || (n >= 21 && n <= 29)) {
        __int128 v;
        bool small = n < 10;
        int op = small ? n : n - 20;
        if (op == 1)
            v = r->v + a0->v;
        else if (op == 2)
            v = r->v - a0->v;
        else if (op == 9) {
            if (__builtin_mul_overflow(r->v, a0->v, &v))   /* beyond 127 bits */
                return STVM_PRIM_ERR_GENERIC;
        } else
            return 0;   /* comparisons always succeed */
        if (small)
            return fz_fits(c, v) ? 0 : STVM_PRIM_ERR_GENERIC;
        bool in64 = v <= (__int128)UINT64_MAX && v >= -(__int128)UINT64_MAX;
        return in64 ? 0 : STVM_PRIM_ERR_GENERIC;
    }
    switch (n) {
    case 85:
        return r->k == C_SEM ? 0 : STVM_PRIM_ERR_BAD_RECEIVER;
    case 86:
        return r->k == C_SEM ? 0 : STVM_PRIM_ERR_BAD_RECEIVER;
    case 87:
        if (!live_proc(r) || r->info.state != STVM_PROCESS_SUSPENDED)
            return STVM_PRIM_ERR_BAD_RECEIVER;
        return 0;
    case 88:
        if (!live_proc(r) || r->info.vm_own || r->info.state == STVM_PROCESS_SUSPENDED)
            return STVM_PRIM_ERR_BAD_RECEIVER;
        return 0;
    case 135:
    case 240:
        return 0;
    case 136:
        if (x->a[0] != STVM_NIL && a0->k != C_SEM)
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        if (a1->k != C_SI)
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        return a1->v >= 0 ? 0 : STVM_PRIM_ERR_BAD_ARGUMENT;
    case 167:
        return x->host ? STVM_PRIM_ERR_INAPPROPRIATE : 0;
    case 185:
        if (r->k != C_MUT)
            return STVM_PRIM_ERR_BAD_RECEIVER;
        return x->host || x->owner_before != x->me ? STVM_PRIM_ERR_INAPPROPRIATE : 0;
    case 186:
    case 187:
        if (r->k != C_MUT)
            return STVM_PRIM_ERR_BAD_RECEIVER;
        return x->host ? STVM_PRIM_ERR_INAPPROPRIATE : 0;
    case 230:
        if (a0->k != C_SI)
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        return a0->v >= 0 ? 0 : STVM_PRIM_ERR_BAD_ARGUMENT;
    case 242:
        if (x->a[0] != STVM_NIL && a0->k != C_SEM)
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        if (!is_int(a1) || a1->v < 0)
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        /* The clock ends at 2^62 (vm/clock.h): deadlines past it are refused. */
        if (a1->v > (__int128)FZ_CLOCK_END)
            return STVM_PRIM_ERR_BAD_ARGUMENT;
        return 0;
    }
    fz_fail(__FILE__, __LINE__, "no model for primitive %d", n);
}

/* ---- checking a success -------------------------------------------------------------- */

static void check_int_result(fz_ctx *c, const call *x, stvm_oop res, __int128 want)
{
    FZ_CHECK(stvm_oop_is_integer(c->vm, res), "prim %d answered a non-integer %#lx", x->number,
             (unsigned long)res);
    bool small = stvm_oop_is_smallint(res);
    FZ_CHECK(small == fz_fits(c, want), "prim %d: result not normalised (small %d)", x->number,
             small);
    __int128 got = 0;
    FZ_CHECK(fz_int_value(c, res, &got), "prim %d: cannot read the result", x->number);
    char b1[48], b2[48];
    FZ_CHECK(got == want, "prim %d: wrong value (got %s, want %s)", x->number, fz_i128(got, b1),
             fz_i128(want, b2));
    expect_class(c, res, small ? "SmallInteger" : want < 0 ? "LargeNegativeInteger"
                                                          : "LargePositiveInteger");
    if (!small)
        fz_add_box(c, res, want);
}

static void check_success(fz_ctx *c, const call *x, stvm_oop res)
{
    int n = x->number;
    const klass *r = &x->kr, *a0 = &x->ka[0];
    if ((n >= 1 && n <= 9) || (n >= 21 && n <= 29)) {
        int op = n < 10 ? n : n - 20;
        __int128 x0 = r->v, y0 = a0->v;
        switch (op) {
        case 1: check_int_result(c, x, res, x0 + y0); break;
        case 2: check_int_result(c, x, res, x0 - y0); break;
        case 9: {
            __int128 p;
            FZ_CHECK(!__builtin_mul_overflow(x0, y0, &p), "prim %d succeeded beyond 127 bits", n);
            check_int_result(c, x, res, p);
            break;
        }
        default: {
            bool b = op == 3 ? x0 < y0 : op == 4 ? x0 > y0 : op == 5 ? x0 <= y0
                   : op == 6 ? x0 >= y0 : op == 7 ? x0 == y0 : x0 != y0;
            FZ_CHECK(res == (b ? STVM_TRUE : STVM_FALSE), "prim %d answered %#lx", n,
                     (unsigned long)res);
        }
        }
        if (n < 10)
            FZ_CHECK(stvm_oop_is_smallint(res) || res == STVM_TRUE || res == STVM_FALSE,
                     "prim %d answered a box", n);
        return;
    }
    switch (n) {
    case 85:
        FZ_CHECK(res == x->r, "85 must answer its receiver");
        if (!x->sem_had_waiters)
            FZ_CHECK(stvm_semaphore_excess(c->vm, (stvm_semaphore *)x->r) ==
                         x->excess_before + 1,
                     "85 without waiters must count an excess signal");
        break;
    case 86: case 87: case 136: case 167: case 230: case 242:
        FZ_CHECK(res == x->r, "prim %d must answer its receiver", n);
        break;
    case 88:
        if (x->kr.info.waiting_on && strcmp(x->kr.info.waiting_on, "process") != 0)
            FZ_CHECK(res == (stvm_oop)x->kr.info.waiting_object,
                     "88 of a process waiting on %s must answer it", x->kr.info.waiting_on);
        else
            FZ_CHECK(res == STVM_NIL, "88 of a %s process answered %#lx",
                     x->kr.info.waiting_on ? "joining" : "ready or active", (unsigned long)res);
        break;
    case 135:
        FZ_CHECK(stvm_oop_is_smallint(res) && fz_untag(res) >= 0 && fz_untag(res) <= 0x1FFFFFFF,
                 "135 answered %#lx", (unsigned long)res);
        FZ_CHECK((uint32_t)fz_untag(res) == stvm_vm_millisecond_clock(c->vm),
                 "135 disagrees with stvm_vm_millisecond_clock");
        break;
    case 240:
        check_int_result(c, x, res, (__int128)stvm_vm_now_us(c->vm));
        break;
    case 185:
        FZ_CHECK(res == x->r, "185 must answer its receiver");
        FZ_CHECK(stvm_mutex_owner(c->vm, (stvm_mutex *)x->r) != x->me,
                 "185: the caller still owns the mutex");
        break;
    case 186:
        FZ_CHECK(res == STVM_TRUE || res == STVM_FALSE || res == STVM_NIL, "186 answered %#lx",
                 (unsigned long)res);
        if (x->owner_before == x->me)
            FZ_CHECK(res == STVM_TRUE, "186 by the owner must answer true");
        else
            FZ_CHECK(res != STVM_TRUE, "186 by a non-owner answered true");
        if (res != STVM_NIL)
            FZ_CHECK(stvm_mutex_owner(c->vm, (stvm_mutex *)x->r) == x->me,
                     "186 answered %s but the caller does not own the mutex",
                     res == STVM_TRUE ? "true" : "false");
        else
            FZ_CHECK(stvm_mutex_owner(c->vm, (stvm_mutex *)x->r) != x->me,
                     "186 answered nil but the caller owns the mutex");
        break;
    case 187: {
        stvm_oop want = !x->owner_before ? STVM_FALSE
                      : x->owner_before == x->me ? STVM_TRUE : STVM_NIL;
        FZ_CHECK(res == want, "187 answered %#lx, expected %#lx", (unsigned long)res,
                 (unsigned long)want);
        if (!x->owner_before)
            FZ_CHECK(stvm_mutex_owner(c->vm, (stvm_mutex *)x->r) == x->me,
                     "187 on a free mutex must take it");
        break;
    }
    default:
        fz_fail(__FILE__, __LINE__, "success of primitive %d not checked", n);
    }
}

/* ---- one checked call ---------------------------------------------------------------- */

static void prim_call(fz_ctx *c, int number, stvm_oop r, const stvm_oop *args, int nargs,
                      bool null_args)
{
    call x;
    memset(&x, 0, sizeof x);
    x.number = number;
    x.nargs = nargs;
    x.r = r;
    x.null_args = null_args;
    x.me = stvm_vm_active_process(c->vm);
    x.host = x.me == NULL;
    for (int i = 0; i < 3; i++)
        x.a[i] = i < nargs && !null_args ? args[i] : STVM_NIL;
    x.kr = classify(c, r);
    for (int i = 0; i < 3 && i < nargs && !null_args; i++)
        x.ka[i] = classify(c, args[i]);
    if (x.kr.k == C_SEM) {
        x.excess_before = stvm_semaphore_excess(c->vm, (stvm_semaphore *)r);
        x.sem_had_waiters = ((struct stvm_semaphore *)r)->list.first != NULL;
    }
    if (x.kr.k == C_MUT)
        x.owner_before = stvm_mutex_owner(c->vm, (stvm_mutex *)r);
    int want = expect(c, &x);
    if (want == EXP_SKIP)
        return;
    FZ_CHECK((stvm_primitive_name(number) != NULL) == (table_nargs(number) >= 0),
             "stvm_primitive_name(%d) disagrees with the table", number);

    fz_snap *before = fz_before_buf(c);
    fz_snap_take(c, before);
    stvm_oop res = SENTINEL;
    int code = NO_CODE;
    c->calls++;
    FZ_TRACE("[%s] prim %d rcv %#lx args %#lx %#lx %#lx nargs %d%s: expect %d\n",
             x.host ? "host" : "proc", number, (unsigned long)r, (unsigned long)x.a[0],
             (unsigned long)x.a[1], (unsigned long)x.a[2], nargs, null_args ? " NULL" : "", want);
    int rc = stvm_primitive_call(c->vm, number, r, null_args ? NULL : args, nargs, &res, &code);
    FZ_TRACE("    -> %s code %d result %#lx\n", stvm_err_name(rc), code, (unsigned long)res);
    char what[96];
    snprintf(what, sizeof what, "primitive %d (nargs %d, %s)", number, nargs,
             x.host ? "host thread" : "green process");
    if (rc != STVM_OK) {
        c->failed_calls++;
        fz_snap_same(c, before, what);
        FZ_CHECK(res == SENTINEL, "%s failed but wrote a result", what);
        if (rc == STVM_EINVAL) {
            FZ_CHECK(want == EXP_EINVAL, "%s: EINVAL, expected %d", what, want);
            FZ_CHECK(code == NO_CODE, "%s: EINVAL but wrote a failure code", what);
        } else {
            FZ_CHECK(rc == STVM_EPRIM, "%s answered %s", what, stvm_err_name(rc));
            FZ_CHECK(pharo_code(code), "%s: failure code %d is not Pharo's", what, code);
            FZ_CHECK(strcmp(stvm_primitive_error_name(code), "unknown failure code") != 0,
                     "%s: failure code %d has no name", what, code);
            FZ_CHECK(want == EXP_ANY || want == code, "%s failed with code %d (%s), expected %d",
                     what, code, stvm_primitive_error_name(code), want);
        }
    } else {
        FZ_CHECK(want == EXP_ANY || want == 0, "%s succeeded, expected %s %d", what,
                 want == EXP_EINVAL ? "EINVAL" : "failure code", want);
        FZ_CHECK(res != SENTINEL, "%s succeeded without an answer", what);
        if (want == 0)
            check_success(c, &x, res);
    }
    fz_invariants(c, what);
}

/* ---- workers ------------------------------------------------------------------------- */

enum wkind {
    W_DRIVER,        /* consumes the operation stream */
    W_WAIT,          /* 86 on a semaphore */
    W_CRITICAL,      /* 186 on a mutex, 86 on a semaphore, 185 */
    W_DELAY,         /* a Delay of d us */
    W_YIELD,         /* 167 a times */
    W_RETURN,        /* returns at once */
    W_SELF_WAIT,     /* puts its own handle (maybe one living in its stack) in the pool, 86 */
    W_SUSPEND_SELF,  /* 88 on itself */
    W_TIMED_WAIT,    /* stvm_semaphore_wait_timeout_us */
    NKINDS
};

static void exec_op(fz_ctx *c, unsigned op);

static stvm_oop sem_oop(fz_ctx *c, int i)
{
    for (int k = 0; k < c->nsem; k++) {
        stvm_semaphore *s = c->sem[(i + k) % c->nsem];
        if (s)
            return stvm_semaphore_oop(s);
    }
    return STVM_NIL;
}

static stvm_oop mut_oop(fz_ctx *c, int i)
{
    for (int k = 0; k < c->nmut; k++) {
        stvm_mutex *m = c->mut[(i + k) % c->nmut];
        if (m)
            return stvm_mutex_oop(m);
    }
    return STVM_NIL;
}

static void drive(fz_ctx *c)
{
    while (c->ops_left > 0 && c->in.n) {
        c->ops_left--;
        unsigned op = fz_u8(&c->in);
        if (op == 0xFF)   /* this driver stops */
            return;
        exec_op(c, op);
    }
}

static void worker_main(stvm_vm *vm, void *arg)
{
    fz_worker *w = arg;
    fz_ctx *c = w->c;
    w->self = stvm_vm_active_process(vm);
    /* A finished process's stack (and the handle in it) may come back to a new one. */
    for (int i = 0; i < c->nw; i++)
        if (&c->w[i] != w && c->w[i].self == w->self)
            c->w[i].finished = true;
    w->started = true;
    stvm_oop self = stvm_process_oop(w->self);
    switch (w->kind) {
    case W_DRIVER:
        drive(c);
        break;
    case W_WAIT:
        prim_call(c, 86, sem_oop(c, w->a), NULL, 0, false);
        break;
    case W_CRITICAL:
        prim_call(c, 186, mut_oop(c, w->a), NULL, 0, false);
        prim_call(c, 86, sem_oop(c, w->b), NULL, 0, false);
        prim_call(c, 185, mut_oop(c, w->a), NULL, 0, false);
        break;
    case W_DELAY: {
        int rc = stvm_delay_wait_us(vm, w->d);
        FZ_CHECK(rc == STVM_OK || rc == STVM_ERANGE || rc == STVM_ESTATE,
                 "a delay answered %s", stvm_err_name(rc));
        break;
    }
    case W_YIELD:
        for (int i = 0; i < w->a % 4 + 1; i++)
            prim_call(c, 167, STVM_NIL, NULL, 0, false);
        break;
    case W_RETURN:
        break;
    case W_SELF_WAIT:
        fz_add_oop(c, self);
        prim_call(c, 86, sem_oop(c, w->a), NULL, 0, false);
        break;
    case W_SUSPEND_SELF:
        prim_call(c, 88, self, NULL, 0, false);
        break;
    case W_TIMED_WAIT: {
        stvm_oop s = sem_oop(c, w->a);
        if (s != STVM_NIL) {
            int rc = stvm_semaphore_wait_timeout_us(vm, (stvm_semaphore *)s, w->d);
            FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT || rc == STVM_ERANGE ||
                         rc == STVM_ESTATE,
                     "a timed wait answered %s", stvm_err_name(rc));
        }
        break;
    }
    }
    w->finished = true;
}

/* Spawn a worker: its kind, priority, whether the run holds the handle, suspended. */
static void spawn_worker(fz_ctx *c, int kind, int priority, bool held, bool suspended, int a,
                         int b, int64_t d)
{
    if (c->nw >= FZ_MAXW)
        return;
    fz_worker *w = &c->w[c->nw];
    memset(w, 0, sizeof *w);
    w->c = c;
    w->index = c->nw;
    w->kind = kind;
    w->a = a;
    w->b = b;
    w->d = d;
    stvm_process *h = NULL;
    const char *name = fz_names[(unsigned)(a + b) % (sizeof fz_names / sizeof fz_names[0])];
    bool bad = priority < STVM_PRIORITY_MIN || priority > STVM_PRIORITY_MAX;
    fz_snap *before = fz_before_buf(c);
    if (bad)
        fz_snap_take(c, before);
    c->nw++;   /* taken before the call: a higher-priority process runs inside it */
    int rc = suspended ? stvm_spawn_suspended(c->vm, priority, name, worker_main, w, FZ_STACK,
                                              held ? &h : NULL)
                       : stvm_spawn_sized(c->vm, priority, name, worker_main, w, FZ_STACK,
                                          held ? &h : NULL);
    if (bad) {
        FZ_CHECK(rc == STVM_EINVAL, "spawn at priority %d answered %s", priority,
                 stvm_err_name(rc));
        fz_snap_same(c, before, "spawn at a bad priority");
        c->nw--;
        return;
    }
    FZ_CHECK(rc == STVM_OK, "spawn answered %s", stvm_err_name(rc));
    if (held) {
        w->held = h;
        if (!w->self)
            w->self = h;
        fz_add_proc(c, h);
    }
}

/* ---- operations ---------------------------------------------------------------------- */

enum {
    OP_RUN, OP_SPAWN, OP_MAKE_INT, OP_RELEASE, OP_SEM_NEW, OP_SEM_FREE, OP_MUT_NEW,
    OP_MUT_FREE, OP_TERMINATE, OP_SET_PRIORITY, OP_RESUME, OP_TAGGED, NCONTROL
};

static stvm_oop pool_pick(fz_ctx *c)
{
    return c->oop[fz_u8(&c->in) % c->noop];
}

static void op_prim(fz_ctx *c, unsigned op)
{
    unsigned sel = (op * 7 + fz_u8(&c->in)) % (NPRIM + NUNKNOWN / 2 + 1);
    int number = sel < (unsigned)NPRIM ? prim_table[sel].number
                                       : unknown_numbers[fz_u8(&c->in) % NUNKNOWN];
    stvm_oop r = pool_pick(c);
    unsigned m = fz_u8(&c->in);
    int want = table_nargs(number);
    int nargs = want < 0 ? (int)(m % 3) : want;
    bool null_args = false;
    if ((m & 0x30) == 0x30) {   /* a quarter of the calls: another count or NULL args */
        nargs = (int)((m >> 2) & 3) - 1 + (m >> 7);   /* -1 .. 3 */
        null_args = (m & 0x40) != 0;
    }
    stvm_oop args[3] = {STVM_NIL, STVM_NIL, STVM_NIL};
    for (int i = 0; i < nargs && i < 3; i++)
        args[i] = pool_pick(c);
    prim_call(c, number, r, args, nargs > 3 ? 3 : nargs, null_args);
}

static const uint64_t int_edges[] = {
    0, 1, (uint64_t)-1, 1000, 1000000,
    ((uint64_t)1 << 30) - 1, (uint64_t)-((int64_t)1 << 30), (uint64_t)1 << 30,
    (uint64_t)-((int64_t)1 << 30) - 1,
    ((uint64_t)1 << 60) - 1, (uint64_t)-((int64_t)1 << 60), (uint64_t)1 << 60,
    (uint64_t)-((int64_t)1 << 60) - 1,
    (uint64_t)INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX - 1,
    (uint64_t)1 << 62, ((uint64_t)1 << 62) + 1, ((uint64_t)1 << 32) - 1, 0x1FFFFFFF,
    0x20000000, FZ_SIM_START, FZ_SIM_START + 1000000,
};
#define NEDGES ((unsigned)(sizeof int_edges / sizeof int_edges[0]))

static void op_make_int(fz_ctx *c)
{
    unsigned how = fz_u8(&c->in);
    uint64_t v = fz_pick(&c->in, int_edges, NEDGES);
    stvm_oop o = SENTINEL;
    __int128 want = (how & 1) ? (__int128)v : (__int128)(int64_t)v;
    stvm_stats s0, s1;
    stvm_vm_get_stats(c->vm, &s0);
    int rc = (how & 1) ? stvm_int_from_u64(c->vm, v, &o) : stvm_int_from_i64(c->vm, (int64_t)v, &o);
    FZ_CHECK(rc == STVM_OK, "int_from answered %s", stvm_err_name(rc));
    stvm_vm_get_stats(c->vm, &s1);
    FZ_CHECK(stvm_oop_is_smallint(o) == fz_fits(c, want), "int_from: not normalised");
    FZ_CHECK(s1.objects_live == s0.objects_live + !stvm_oop_is_smallint(o),
             "int_from: objects_live %llu -> %llu", (unsigned long long)s0.objects_live,
             (unsigned long long)s1.objects_live);
    if (stvm_oop_is_smallint(o))
        FZ_CHECK(fz_untag(o) == (int64_t)want, "int_from: wrong SmallInteger");
    else
        fz_add_box(c, o, want);
    fz_add_oop(c, o);
}

static void op_release(fz_ctx *c)
{
    if (!c->nbox)
        return;
    int i = (int)(fz_u8(&c->in) % (unsigned)c->nbox);
    stvm_stats s0, s1;
    stvm_vm_get_stats(c->vm, &s0);
    FZ_CHECK(stvm_oop_release(c->vm, c->box[i].oop) == STVM_OK, "release of a box failed");
    stvm_vm_get_stats(c->vm, &s1);
    FZ_CHECK(s1.objects_live + 1 == s0.objects_live, "release did not free the box");
    c->box[i] = c->box[--c->nbox];   /* its oop stays in the pool: a stale oop now */
}

static void op_terminate(fz_ctx *c)
{
    if (!c->nproc)
        return;
    stvm_process *h = c->proc[fz_u8(&c->in) % (unsigned)c->nproc];
    if (!h)
        return;
    stvm_process_info info;
    FZ_CHECK(stvm_process_get_info(c->vm, h, &info) == STVM_OK, "info of a held handle");
    fz_snap *before = fz_before_buf(c);
    fz_snap_take(c, before);
    int rc = stvm_process_terminate(c->vm, h);   /* may not return: terminating itself */
    if (info.state == STVM_PROCESS_TERMINATED) {
        FZ_CHECK(rc == STVM_OK, "terminating a finished process answered %s",
                 stvm_err_name(rc));
        fz_snap_same(c, before, "terminating a finished process");
    } else {
        FZ_CHECK(rc == STVM_OK, "terminate answered %s", stvm_err_name(rc));
    }
}

static void op_set_priority(fz_ctx *c)
{
    if (!c->nproc)
        return;
    stvm_process *h = c->proc[fz_u8(&c->in) % (unsigned)c->nproc];
    unsigned b = fz_u8(&c->in);
    int prio = b < 240 ? (int)(b % 80) + 1 : (int)(b - 240) * 9 - 50;   /* some bad ones */
    if (!h)
        return;
    stvm_process_info info;
    FZ_CHECK(stvm_process_get_info(c->vm, h, &info) == STVM_OK, "info of a held handle");
    fz_snap *before = fz_before_buf(c);
    fz_snap_take(c, before);
    int rc = stvm_process_set_priority(c->vm, h, prio);
    bool bad = prio < 1 || prio > 80;
    int want = info.state == STVM_PROCESS_TERMINATED ? STVM_ESTATE : bad ? STVM_EINVAL : STVM_OK;
    FZ_CHECK(rc == want, "set_priority(%d) answered %s, expected %s", prio, stvm_err_name(rc),
             stvm_err_name(want));
    if (rc)
        fz_snap_same(c, before, "set_priority");
}

static void op_resume(fz_ctx *c)
{
    if (!c->nproc)
        return;
    stvm_process *h = c->proc[fz_u8(&c->in) % (unsigned)c->nproc];
    if (!h)
        return;
    stvm_process_info info;
    FZ_CHECK(stvm_process_get_info(c->vm, h, &info) == STVM_OK, "info of a held handle");
    fz_snap *before = fz_before_buf(c);
    fz_snap_take(c, before);
    int rc = stvm_process_resume(c->vm, h);
    int want = info.state == STVM_PROCESS_SUSPENDED ? STVM_OK : STVM_ESTATE;
    FZ_CHECK(rc == want, "resume of a %d process answered %s", info.state, stvm_err_name(rc));
    if (rc)
        fz_snap_same(c, before, "resume");
}

static void exec_op(fz_ctx *c, unsigned op)
{
    if (op < 176) {
        op_prim(c, op);
        fz_invariants(c, "a primitive");
        return;
    }
    fz_snap *before;
    switch ((op - 176) % NCONTROL) {
    case OP_RUN: {
        if (stvm_vm_active_process(c->vm)) {
            /* runs do not nest: EBUSY, for this VM and for any other on this thread */
            before = fz_before_buf(c);
            fz_snap_take(c, before);
            FZ_CHECK(stvm_run(c->vm) == STVM_EBUSY, "a nested run is not EBUSY");
            FZ_CHECK(stvm_run(fz_foreigners[op & 1].vm) == STVM_EBUSY,
                     "another VM's run inside a run is not EBUSY");
            fz_snap_same(c, before, "a nested stvm_run");
            break;
        }
        if (c->runs_left <= 0)
            break;
        c->runs_left--;
        int rc = stvm_run(c->vm);
        FZ_CHECK(rc == STVM_OK || rc == STVM_EDEADLOCK, "stvm_run answered %s",
                 stvm_err_name(rc));
        break;
    }
    case OP_SPAWN: {
        unsigned k = fz_u8(&c->in), p = fz_u8(&c->in), f = fz_u8(&c->in);
        int prio = p < 250 ? (int)(p % 80) + 1 : (p == 250 ? 0 : p == 251 ? 81 : -1);
        int a = (int)fz_u8(&c->in), b = (int)(f >> 4);
        int64_t d = (int64_t)fz_pick(&c->in, int_edges, 5) % 100000000;
        if (d < 0)
            d = -d;
        spawn_worker(c, (int)(k % NKINDS), prio, (f & 1) != 0, (f & 2) != 0, a, b, d);
        break;
    }
    case OP_MAKE_INT:
        op_make_int(c);
        break;
    case OP_RELEASE:
        op_release(c);
        break;
    case OP_SEM_NEW: {
        stvm_semaphore *s;
        FZ_CHECK(stvm_semaphore_new(c->vm, &s) == STVM_OK, "semaphore_new");
        if (c->nsem < FZ_MAXSEM)
            fz_add_sem(c, s);
        else
            FZ_CHECK(stvm_semaphore_free(c->vm, s) == STVM_OK, "free of a fresh semaphore");
        break;
    }
    case OP_SEM_FREE: {
        if (!c->nsem)
            break;
        int i = (int)(fz_u8(&c->in) % (unsigned)c->nsem);
        if (!c->sem[i])
            break;
        before = fz_before_buf(c);
        fz_snap_take(c, before);
        int rc = stvm_semaphore_free(c->vm, c->sem[i]);
        if (rc == STVM_OK)
            c->sem[i] = NULL;   /* its oop stays in the pool */
        else {
            FZ_CHECK(rc == STVM_EINUSE, "semaphore_free answered %s", stvm_err_name(rc));
            fz_snap_same(c, before, "semaphore_free");
        }
        break;
    }
    case OP_MUT_NEW: {
        stvm_mutex *m;
        FZ_CHECK(stvm_mutex_new(c->vm, &m) == STVM_OK, "mutex_new");
        if (c->nmut < FZ_MAXMUT)
            fz_add_mut(c, m);
        else
            FZ_CHECK(stvm_mutex_free(c->vm, m) == STVM_OK, "free of a fresh mutex");
        break;
    }
    case OP_MUT_FREE: {
        if (!c->nmut)
            break;
        int i = (int)(fz_u8(&c->in) % (unsigned)c->nmut);
        if (!c->mut[i])
            break;
        before = fz_before_buf(c);
        fz_snap_take(c, before);
        int rc = stvm_mutex_free(c->vm, c->mut[i]);
        if (rc == STVM_OK)
            c->mut[i] = NULL;
        else {
            FZ_CHECK(rc == STVM_EINUSE, "mutex_free answered %s", stvm_err_name(rc));
            fz_snap_same(c, before, "mutex_free");
        }
        break;
    }
    case OP_TERMINATE:
        op_terminate(c);
        break;
    case OP_SET_PRIORITY:
        op_set_priority(c);
        break;
    case OP_RESUME:
        op_resume(c);
        break;
    case OP_TAGGED:   /* any tagged word: a SmallInteger of some width, or of none */
        fz_add_oop(c, fz_u64(&c->in) | 1);
        break;
    }
    fz_invariants(c, "an operation");
}

/* ---- one input ------------------------------------------------------------------------ */

static void build_pool(fz_ctx *c)
{
    stvm_vm *vm = c->vm;
    int64_t max = stvm_smallint_max(vm), min = stvm_smallint_min(vm);
    static const stvm_oop fixed[] = {
        STVM_NIL, STVM_TRUE, STVM_FALSE, 4, 8, 0x10, 0x12345670u, 0xFFFFFFFFFFFFFFF0u,
        0x7FFFFFFFFFFFFFFFu, 0x8000000000000001u, 0x4000000000000001u, 0xBFFFFFFFFFFFFFFFu,
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        fz_add_oop(c, fixed[i]);
    const int64_t sis[] = {0, 1, -1, 2, -2, max, min, max - 1, min + 1, max + 1, min - 1,
                           ((int64_t)1 << 30) - 1, -((int64_t)1 << 30), (int64_t)1 << 30,
                           ((int64_t)1 << 60) - 1, -((int64_t)1 << 60), (int64_t)1 << 60,
                           0x1FFFFFFF, 0x20000000, 1000, 1000000};
    for (size_t i = 0; i < sizeof sis / sizeof sis[0]; i++)
        fz_add_oop(c, fz_tag(sis[i]));
    fz_add_oop(c, (stvm_oop)fz_stray);
    for (int i = 0; i < 2; i++) {
        fz_foreign *f = &fz_foreigners[i];
        fz_add_oop(c, stvm_semaphore_oop(f->sem));
        fz_add_oop(c, stvm_mutex_oop(f->mutex));
        fz_add_oop(c, stvm_process_oop(f->proc));
        fz_add_oop(c, f->box);
    }
    /* boxes: just past the SmallIntegers, the 64-bit edges, a timestamp */
    const __int128 boxes[] = {(__int128)max + 1, (__int128)min - 1, UINT64_MAX, INT64_MIN,
                              INT64_MAX, (__int128)1 << 62, ((__int128)1 << 62) + 1,
                              FZ_SIM_START};
    for (size_t i = 0; i < sizeof boxes / sizeof boxes[0]; i++) {
        stvm_oop o;
        __int128 v = boxes[i];
        int rc = v > INT64_MAX ? stvm_int_from_u64(vm, (uint64_t)v, &o)
                               : stvm_int_from_i64(vm, (int64_t)v, &o);
        FZ_CHECK(rc == STVM_OK, "making a box");
        fz_add_box(c, o, v);
        if (stvm_oop_is_smallint(o))
            fz_add_oop(c, o);
    }
    /* -(2^64-1), the most negative integer the VM has, and a released (stale) box */
    stvm_oop zero = fz_tag(0), big, neg, stale;
    FZ_CHECK(stvm_int_from_u64(vm, UINT64_MAX, &big) == STVM_OK, "a box");
    FZ_CHECK(stvm_int_sub(vm, zero, big, &neg) == STVM_OK, "-(2^64-1)");
    fz_add_box(c, neg, -(__int128)UINT64_MAX);
    FZ_CHECK(stvm_oop_release(vm, big) == STVM_OK, "release");
    FZ_CHECK(stvm_int_from_u64(vm, UINT64_MAX - 1, &stale) == STVM_OK, "a box");
    FZ_CHECK(stvm_oop_release(vm, stale) == STVM_OK, "release");
    fz_add_oop(c, stale);
    fz_add_oop(c, stale + 16);   /* the next cell of the slab */

    /* semaphores (one with an excess signal) and mutexes, with derived stray words */
    unsigned b = fz_u8(&c->in);
    for (unsigned i = 0; i < 1 + b % 3; i++) {
        stvm_semaphore *s;
        FZ_CHECK(stvm_semaphore_new(vm, &s) == STVM_OK, "semaphore_new");
        fz_add_sem(c, s);
        if (i == 1)
            stvm_semaphore_signal(vm, s);
    }
    for (unsigned i = 0; i < 1 + (b >> 2) % 2; i++) {
        stvm_mutex *m;
        FZ_CHECK(stvm_mutex_new(vm, &m) == STVM_OK, "mutex_new");
        fz_add_mut(c, m);
    }
    fz_add_oop(c, stvm_semaphore_oop(c->sem[0]) + 16);
    fz_add_oop(c, stvm_semaphore_oop(c->sem[0]) + 8);
    fz_add_oop(c, stvm_mutex_oop(c->mut[0]) + 32);

    /* processes: a suspended one, a ready one that finishes at the first run, and the
     * drivers (1 to 3, at priorities from the input) */
    spawn_worker(c, W_RETURN, 30, true, true, 0, 0, 0);
    spawn_worker(c, W_RETURN, 40, true, false, 1, 0, 0);
    unsigned nd = 1 + (b >> 3) % 3;
    for (unsigned i = 0; i < nd; i++)
        spawn_worker(c, W_DRIVER, (int)(fz_u8(&c->in) % 80) + 1, true, false, 1, 0, 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init_common();
    fz_foreign_init();
    /* The table is Pharo's, as prim_table says. */
    int nums[64];
    int n = stvm_primitive_numbers(nums, 64);
    FZ_CHECK(n == NPRIM, "the table has %d primitives, the model %d", n, NPRIM);
    for (int i = 0; i < n; i++)
        FZ_CHECK(nums[i] == prim_table[i].number, "primitive %d is not in the model", nums[i]);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return -1;   /* keep inputs (and runs) small */
    fz_ctx *c = &fz_c;
    memset(c, 0, sizeof *c);
    c->in = (fz_in){data, size};
    c->ops_left = 400;
    c->runs_left = 6;
    fz_config_from(&c->in, &c->cfg);
    int rc = stvm_vm_create(&c->cfg, &c->vm);
    FZ_CHECK(rc == STVM_OK, "stvm_vm_create: %s", stvm_err_name(rc));
    build_pool(c);
    fz_invariants(c, "building the pool");
    drive(c);   /* the host thread is a driver too; OP_RUN lets the green ones drive */
    if (c->runs_left > 0) {
        rc = stvm_run(c->vm);   /* let what is runnable finish */
        FZ_CHECK(rc == STVM_OK || rc == STVM_EDEADLOCK, "stvm_run answered %s",
                 stvm_err_name(rc));
    }
    fz_invariants(c, "the last run");
    stvm_vm_free(c->vm);
    c->vm = NULL;
    fz_foreign_check();
    return 0;
}
