/*
 * fuzz_api: the public API's argument space.
 *
 *  - integers: stvm_int_from_i64/u64 of any value, stvm_int_to_i64/u64, add, sub, mul
 *    and compare of SmallIntegers, boxes and arbitrary words, against exact __int128
 *    arithmetic (value, normalisation, ERANGE beyond 64-bit magnitude, EINVAL);
 *  - names: stvm_strerror, stvm_err_name, stvm_primitive_error_name, stvm_primitive_name on
 *    any int; stvm_primitive_numbers with any capacity (it must not write past it);
 *  - configuration: every field of stvm_config (edges and raw values) into
 *    stvm_config_check, with why buffers of every size (nothing written past the size),
 *    against a model of the documented ranges; stvm_vm_create must agree with the check,
 *    and stvm_vm_config answer the normalised values;
 *  - a simulated-clock VM driven from the host thread and from green processes:
 *    durations into stvm_delay_wait_ms/us, semaphore and mutex timed waits and joins
 *    (EINVAL, ERANGE at the documented limits and at the clock's end; a delay never
 *    ends early), priorities and stack sizes into spawn, names (empty, long, not UTF-8,
 *    with format directives), suspend/resume/terminate/release/set_priority, the
 *    blocked report and the invariant text with buffers of every size, process info,
 *    external semaphores (the table full, unused slots, bad indexes), cleanups
 *    (stvm_ensure), interrupts into any process (each wait may then answer EINTR),
 *    Semaphore>>critical: and runs with a time limit, NULL and foreign handles
 *    everywhere; modelled costs per scheduler operation (stvm_sim_set_cost), which the
 *    later operations' events then charge; shared queues (bounded, open to other
 *    threads, closed from a process, the host or as another thread: puts refused with
 *    ECLOSED, the end answered EEOF by every take, tries answering EAGAIN); names of
 *    every kind of object (any bytes, control characters and over-long ones refused, the
 *    getter with buffers of every size) and the process listing (its count, order and
 *    what each process waits on).
 *
 * Every call that fails with an argument or state error must leave the VM as it was
 * (the snapshot of fuzz_common.h); the scheduler's invariants hold after every
 * operation.
 */
#include "fuzz_common.h"

#define SENTINEL ((stvm_oop)0xDEADBEE0u)
#define MAY_WAIT 1000   /* a call that may wait: no single expected answer */

static const uint64_t edges64[] = {
    0, 1, (uint64_t)-1, 2, 999, 1000, 1001, 1000000,
    ((uint64_t)1 << 30) - 1, (uint64_t)-((int64_t)1 << 30), (uint64_t)1 << 30,
    ((uint64_t)1 << 60) - 1, (uint64_t)-((int64_t)1 << 60), (uint64_t)1 << 60,
    (uint64_t)INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX - 1, (uint64_t)1 << 62,
    ((uint64_t)1 << 62) + 1, (uint64_t)1 << 52, ((uint64_t)1 << 52) + 1,
    ((uint64_t)1 << 52) / 1000, ((uint64_t)1 << 52) / 1000 + 1, 0x0FFFFFFF, 0x10000000,
    0x1FFFFFFF, 0x20000000, (uint64_t)INT32_MAX, (uint64_t)INT32_MIN, UINT32_MAX,
    FZ_SIM_START,
};
#define NEDGES64 ((unsigned)(sizeof edges64 / sizeof edges64[0]))

static fz_in *IN(void) { return &fz_c.in; }

/* A snapshot before a call that may fail; checked with failed() afterwards. */
static fz_snap *snap(fz_ctx *c)
{
    fz_snap *s = fz_before_buf(c);
    fz_snap_take(c, s);
    return s;
}

static void unchanged(fz_ctx *c, fz_snap *s, const char *what)
{
    c->failed_calls++;
    fz_snap_same(c, s, what);
}

/* ---- integers ------------------------------------------------------------------------ */

/* An oop for the integer operations: the pool, or an arbitrary word. */
static stvm_oop any_oop(fz_ctx *c)
{
    unsigned s = fz_u8(IN());
    if (s < 200 && c->noop)
        return c->oop[s % (unsigned)c->noop];
    if (s < 220)
        return (stvm_oop)fz_pick(IN(), edges64, NEDGES64) | 1;   /* a tagged word */
    if (s < 230)
        return (stvm_oop)fz_stray;
    return (stvm_oop)fz_u64(IN()) & ~(stvm_oop)1 & ~(stvm_oop)15;   /* an even word */
}

/* Is o an integer of this VM, and which? Known boxes by the run's list; others asked. */
static bool int_of(fz_ctx *c, stvm_oop o, __int128 *v)
{
    if (o & 1) {
        *v = fz_untag(o);
        return fz_si_in_range(c, o);
    }
    int i = fz_box_index(c, o);
    if (i >= 0) {
        *v = c->box[i].value;
        return true;
    }
    if (o == STVM_NIL || o == STVM_TRUE || o == STVM_FALSE || fz_is_foreign(o) ||
        o == (stvm_oop)fz_stray)
        return false;
    /* A word the run does not know: a stale box, a Delay scheduler's timestamp, or
     * nothing; the library's own class is the only witness. */
    const char *name = stvm_oop_class_name(c->vm, o);
    if (!name || strncmp(name, "Large", 5) != 0)
        return false;
    return fz_int_value(c, o, v);
}

static void check_result(fz_ctx *c, const char *what, stvm_oop res, __int128 want)
{
    char b1[48], b2[48];
    FZ_CHECK(stvm_oop_is_integer(c->vm, res), "%s answered a non-integer", what);
    FZ_CHECK(stvm_oop_is_smallint(res) == fz_fits(c, want), "%s: %s not normalised", what,
             fz_i128(want, b1));
    __int128 got = 0;
    FZ_CHECK(fz_int_value(c, res, &got), "%s: unreadable result", what);
    FZ_CHECK(got == want, "%s: got %s, want %s", what, fz_i128(got, b1), fz_i128(want, b2));
    if (!stvm_oop_is_smallint(res))
        fz_add_box(c, res, want);
    else
        fz_add_oop(c, res);
}

static void op_int_from(fz_ctx *c)
{
    unsigned how = fz_u8(IN());
    uint64_t v = fz_pick(IN(), edges64, NEDGES64);
    stvm_oop o = SENTINEL;
    if (how & 2) {   /* NULL out / NULL vm */
        fz_snap *s = snap(c);
        int rc = (how & 1) ? stvm_int_from_u64((how & 4) ? NULL : c->vm, v, (how & 4) ? &o : NULL)
                           : stvm_int_from_i64((how & 4) ? NULL : c->vm, (int64_t)v,
                                               (how & 4) ? &o : NULL);
        FZ_CHECK(rc == STVM_EINVAL && o == SENTINEL, "int_from with NULL answered %d", rc);
        unchanged(c, s, "int_from with NULL");
        return;
    }
    stvm_stats s0, s1;
    stvm_vm_get_stats(c->vm, &s0);
    int rc = (how & 1) ? stvm_int_from_u64(c->vm, v, &o) : stvm_int_from_i64(c->vm, (int64_t)v, &o);
    FZ_CHECK(rc == STVM_OK, "int_from answered %s", stvm_err_name(rc));
    stvm_vm_get_stats(c->vm, &s1);
    FZ_CHECK(s1.objects_live == s0.objects_live + !stvm_oop_is_smallint(o), "int_from: objects_live");
    check_result(c, "int_from", o, (how & 1) ? (__int128)v : (__int128)(int64_t)v);
}

static void op_int_to(fz_ctx *c)
{
    unsigned how = fz_u8(IN());
    stvm_oop o = any_oop(c);
    __int128 v = 0;
    bool is = int_of(c, o, &v);
    int64_t i = 0x5A5A;
    uint64_t u = 0x5A5A;
    fz_snap *s = snap(c);
    int rc;
    bool null = how & 2;
    if (how & 1) {
        rc = stvm_int_to_u64(c->vm, o, null ? NULL : &u);
        int want = null || !is ? STVM_EINVAL : (v < 0 || v > (__int128)UINT64_MAX) ? STVM_ERANGE : 0;
        FZ_CHECK(rc == want, "int_to_u64(%#lx) answered %s, expected %s", (unsigned long)o,
                 stvm_err_name(rc), stvm_err_name(want));
        if (!rc)
            FZ_CHECK(u == (uint64_t)v, "int_to_u64: wrong value");
        else
            FZ_CHECK(u == 0x5A5A, "int_to_u64 failed but wrote");
    } else {
        rc = stvm_int_to_i64(c->vm, o, null ? NULL : &i);
        int want = null || !is ? STVM_EINVAL : (v < INT64_MIN || v > INT64_MAX) ? STVM_ERANGE : 0;
        FZ_CHECK(rc == want, "int_to_i64(%#lx) answered %s, expected %s", (unsigned long)o,
                 stvm_err_name(rc), stvm_err_name(want));
        if (!rc)
            FZ_CHECK(i == (int64_t)v, "int_to_i64: wrong value");
        else
            FZ_CHECK(i == 0x5A5A, "int_to_i64 failed but wrote");
    }
    FZ_CHECK(stvm_oop_is_integer(c->vm, o) == is, "stvm_oop_is_integer(%#lx) says %d", (unsigned long)o,
             !is);
    FZ_CHECK(stvm_oop_is_smallint(o) == ((o & 1) != 0), "stvm_oop_is_smallint");
    if (rc)
        unchanged(c, s, "int_to");
}

static void op_int_arith(fz_ctx *c)
{
    unsigned how = fz_u8(IN());
    stvm_oop a = any_oop(c), b = any_oop(c);
    __int128 x = 0, y = 0, r = 0;
    bool ok_a = int_of(c, a, &x), ok_b = int_of(c, b, &y), ok = ok_a && ok_b;
    int op = how & 3;
    bool null_out = (how & 0x1C) == 0x1C, null_vm = (how & 0xE0) == 0xE0;
    stvm_oop out = SENTINEL;
    int cmp = 77;
    fz_snap *s = snap(c);
    stvm_stats s0;
    stvm_vm_get_stats(c->vm, &s0);
    stvm_vm *vm = null_vm ? NULL : c->vm;
    int rc;
    switch (op) {
    case 0: rc = stvm_int_add(vm, a, b, null_out ? NULL : &out); r = x + y; break;
    case 1: rc = stvm_int_sub(vm, a, b, null_out ? NULL : &out); r = x - y; break;
    case 2:
        rc = stvm_int_mul(vm, a, b, null_out ? NULL : &out);
        if (ok && __builtin_mul_overflow(x, y, &r))
            r = (__int128)1 << 126;   /* beyond 64 bits anyway */
        break;
    default: rc = stvm_int_compare(vm, a, b, null_out ? NULL : &cmp); break;
    }
    static const char *const names[] = {"int_add", "int_sub", "int_mul", "int_compare"};
    bool in64 = r <= (__int128)UINT64_MAX && r >= -(__int128)UINT64_MAX;
    int want = (!ok || null_out || null_vm) ? STVM_EINVAL : (op < 3 && !in64) ? STVM_ERANGE : 0;
    FZ_CHECK(rc == want, "%s(%#lx, %#lx) answered %s, expected %s", names[op], (unsigned long)a,
             (unsigned long)b, stvm_err_name(rc), stvm_err_name(want));
    if (rc) {
        FZ_CHECK(out == SENTINEL && cmp == 77, "%s failed but wrote", names[op]);
        unchanged(c, s, names[op]);
        return;
    }
    if (op == 3) {
        FZ_CHECK(cmp == (x > y) - (x < y), "int_compare answered %d", cmp);
        return;
    }
    stvm_stats s1;
    stvm_vm_get_stats(c->vm, &s1);
    FZ_CHECK(s1.objects_live == s0.objects_live + !stvm_oop_is_smallint(out), "%s: objects_live",
             names[op]);
    check_result(c, names[op], out, r);
}

static void op_int_misc(fz_ctx *c)
{
    unsigned how = fz_u8(IN());
    stvm_oop o = any_oop(c);
    __int128 v;
    bool is = int_of(c, o, &v);
    const char *name = stvm_oop_class_name(c->vm, o);
    if (is)
        FZ_CHECK(name && (strcmp(name, "SmallInteger") == 0 || strncmp(name, "Large", 5) == 0),
                 "an integer's class is %s", name ? name : "NULL");
    FZ_CHECK(stvm_oop_class_name(NULL, o) == NULL, "class name with a NULL vm");
    FZ_CHECK(!stvm_oop_is_integer(NULL, o), "is_integer with a NULL vm");
    FZ_CHECK(stvm_smallint_max(NULL) == 0 && stvm_smallint_min(NULL) == 0, "smallint_max(NULL)");
    FZ_CHECK(stvm_oop_release(NULL, o) == STVM_EINVAL, "release with a NULL vm");
    if (how & 1) {
        /* Release: only what the run may give back (its own boxes) or what is no
         * object at all; a box the run does not own would be a use after free. */
        int bi = fz_box_index(c, o);
        bool object = name && strcmp(name, "SmallInteger") != 0 && strcmp(name, "True") != 0 &&
                      strcmp(name, "False") != 0 && strcmp(name, "UndefinedObject") != 0;
        if (object && bi < 0 && strncmp(name, "Large", 5) == 0)
            return;
        fz_snap *s = snap(c);
        int rc = stvm_oop_release(c->vm, o);
        /* A tagged word beyond the VM's range is no SmallInteger of it (no class name). */
        int want = ((o & 1) && name) || o == STVM_NIL ? 0 : bi >= 0 ? 0 : STVM_EINVAL;
        FZ_CHECK(rc == want, "oop_release(%#lx %s) answered %s", (unsigned long)o,
                 name ? name : "?", stvm_err_name(rc));
        if (rc)
            unchanged(c, s, "oop_release");
        if (bi >= 0)
            c->box[bi] = c->box[--c->nbox];
    }
}

/* ---- names ----------------------------------------------------------------------------- */

static void op_names(fz_ctx *c)
{
    int code = (int)(int32_t)fz_pick(IN(), edges64, NEDGES64);
    unsigned k = fz_u8(IN());
    if (k & 1)
        code = (int)(k >> 1) - 64;   /* small codes, both signs */
    const char *t = stvm_strerror(code), *n = stvm_err_name(code);
    FZ_CHECK(t && n, "strerror/err_name NULL for %d", code);
    /* the model is the header's own list of errors */
    const char *want = NULL, *text = NULL;
#define ROW(name, value, txt)    \
    if (code == (value)) {       \
        want = "STVM_" #name;    \
        text = txt;              \
    }
    STVM_ERRNO_MAP(ROW)
#undef ROW
    if (want) {
        FZ_CHECK(strcmp(n, want) == 0, "err_name(%d) = %s, expected %s", code, n, want);
        FZ_CHECK(strcmp(t, text) == 0, "strerror(%d) = %s, expected %s", code, t, text);
    } else {
        FZ_CHECK(strcmp(n, "STVM_E?") == 0, "err_name(%d) = %s", code, n);
        FZ_CHECK(strcmp(t, "unknown error") == 0, "strerror(%d) = %s", code, t);
    }
    const char *p = stvm_primitive_error_name(code);
    FZ_CHECK(p != NULL, "prim_error_name NULL");
    /* Pharo's table names 0 .. STVM_PRIM_ERR_LIMIT_EXCEEDED (the FFI's highest code). */
    FZ_CHECK((strcmp(p, "unknown failure code") != 0) ==
                 (code >= 0 && code <= STVM_PRIM_ERR_LIMIT_EXCEEDED),
             "prim_error_name(%d) = %s", code, p);
    int nums[64];
    int total = stvm_primitive_numbers(nums, 64);
    bool in_table = false;
    for (int i = 0; i < total && i < 64; i++)
        in_table |= nums[i] == code;
    FZ_CHECK((stvm_primitive_name(code) != NULL) == in_table, "primitive_name(%d)", code);
    (void)c;
}

static void op_prim_numbers(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    int cap = (int)(k % 48) - 8;
    int buf[64 + 8];
    for (int i = 0; i < 72; i++)
        buf[i] = -777;
    int total = stvm_primitive_numbers((k & 0x80) ? NULL : buf, cap);
    /* Pharo's 31 and OpenSmalltalk's two suspends that back a waiter up (568, 578). */
    FZ_CHECK(total == 33, "primitive_numbers answered %d", total);
    int wrote = (k & 0x80) || cap <= 0 ? 0 : cap < total ? cap : total;
    for (int i = 0; i < 72; i++) {
        if (i < wrote) {
            FZ_CHECK(buf[i] != -777 && stvm_primitive_name(buf[i]) != NULL &&
                         (i == 0 || buf[i] > buf[i - 1]),
                     "primitive_numbers: entry %d", i);
        } else {
            FZ_CHECK(buf[i] == -777, "primitive_numbers(cap %d) wrote entry %d", cap, i);
        }
    }
    (void)c;
}

/* ---- configuration -------------------------------------------------------------------- */

static const uint64_t size_edges[] = {
    0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 16384, 65536, ((uint64_t)64 << 20) - 1,
    (uint64_t)64 << 20, ((uint64_t)64 << 20) + 1, SIZE_MAX, SIZE_MAX - 4095,
};

/* The documented ranges (stvm.h), field by field, in the order of the check. */
static const char *config_model(const stvm_config *g)
{
    if (g->smallint_bits != 31 && g->smallint_bits != 61)
        return "smallint_bits";
    if (g->stack_size && (g->stack_size < 8192 || g->stack_size > ((size_t)64 << 20)))
        return "stack_size";
    if (g->stack_guard_size && (g->stack_guard_size < 4096 || g->stack_guard_size > ((size_t)64 << 20)))
        return "stack_guard_size";
    if (g->stack_guard_method < 0 || g->stack_guard_method > 3)
        return "stack_guard_method";
    if (g->delay_clock != 0 && g->delay_clock != 1)
        return "delay_clock";
    if (g->clock != 0 && g->clock != 1)
        return "clock";
    if (g->sim_start_us > FZ_CLOCK_END)
        return "sim_start_us";
    if (g->ms_clock_start > 0x1FFFFFFFu)
        return "ms_clock_start";
    if (g->idle_relinquish_us > 10000000u)
        return "idle_relinquish_us";
    if (g->external_table_size < 1 || g->external_table_size > 65536)
        return "external_table_size";
    return NULL;
}

static int vm_news_left;

static void op_config(fz_ctx *c)
{
    stvm_config g;
    stvm_config_init(&g);
    unsigned mask = fz_u16(IN());   /* which fields to set from the input */
    static const uint64_t int_edges[] = {0, 1, 2, 3, 4, 30, 31, 32, 60, 61, 62, (uint64_t)-1,
                                         (uint64_t)INT32_MIN, (uint64_t)INT32_MAX, 65536, 65537,
                                         10000000, 10000001, 0x1FFFFFFF, 0x20000000};
#define NI ((unsigned)(sizeof int_edges / sizeof int_edges[0]))
#define NS ((unsigned)(sizeof size_edges / sizeof size_edges[0]))
    if (mask & 1) g.smallint_bits = (int)fz_pick(IN(), int_edges, NI);
    if (mask & 2) g.preemption_yields = fz_u8(IN()) & 1;
    if (mask & 4) g.stack_size = (size_t)fz_pick(IN(), size_edges, NS);
    if (mask & 8) g.stack_guard = fz_u8(IN()) & 1;
    if (mask & 16) g.delay_clock = (int)fz_pick(IN(), int_edges, NI);
    if (mask & 32) g.clock = (int)fz_pick(IN(), int_edges, NI);
    if (mask & 64) g.sim_start_us = fz_pick(IN(), fz_sim_starts, 8) + ((mask & 0x8000) ? 1 : 0);
    if (mask & 128) g.ms_clock_start = (uint32_t)fz_pick(IN(), int_edges, NI);
    if (mask & 256) g.idle_relinquish_us = (uint32_t)fz_pick(IN(), int_edges, NI);
    if (mask & 512) g.external_table_size = (int)fz_pick(IN(), int_edges, NI);
    if (mask & 1024) g.stack_guard_size = (size_t)fz_pick(IN(), size_edges, NS);
    if (mask & 2048) g.stack_guard_method = (int)fz_pick(IN(), int_edges, NI);
#undef NI
#undef NS
    const char *bad = config_model(&g);
    unsigned w = fz_u8(IN());
    static const size_t sizes[] = {0, 1, 2, 7, 16, 40, 100, 200};
    size_t size = sizes[w & 7];
    char why[256 + 16];
    memset(why, 'Z', sizeof why);
    bool null_why = (w & 8) != 0;
    int rc = stvm_config_check(&g, null_why ? NULL : why, size);
    if (null_why && size) {
        FZ_CHECK(rc == STVM_EINVAL, "config_check(why NULL, size %zu) answered %d", size, rc);
        return;
    }
    FZ_CHECK(rc == (bad ? STVM_EINVAL : STVM_OK), "config_check answered %s; the model says %s",
             stvm_err_name(rc), bad ? bad : "valid");
    if (!null_why) {
        for (size_t i = size; i < sizeof why; i++)
            FZ_CHECK(why[i] == 'Z', "config_check wrote past size %zu (at %zu)", size, i);
        if (size) {
            FZ_CHECK(memchr(why, 0, size) != NULL, "why not NUL-terminated within %zu", size);
            if (!bad)
                FZ_CHECK(why[0] == 0, "why not empty for a valid config");
            else if (size >= 40)
                FZ_CHECK(strncmp(why, bad, strlen(bad)) == 0 && why[strlen(bad)] == ' ',
                         "why names %s, the model %s", why, bad);
        }
    }
    FZ_CHECK(stvm_config_check(NULL, NULL, 0) == STVM_EINVAL, "config_check(NULL)");
    stvm_config_init(NULL);
    if (!(w & 0x10) || vm_news_left <= 0)
        return;
    vm_news_left--;
    /* stvm_vm_create agrees with the check; on error *out is unchanged */
    if (g.clock == STVM_CLOCK_SIMULATED && !g.sim_start_us)
        g.sim_start_us = FZ_SIM_START;   /* 0 would be "now": not deterministic */
    if (g.stack_guard_method == STVM_GUARD_AUTO || g.stack_guard_method == STVM_GUARD_MADVISE)
        g.stack_guard_method = STVM_GUARD_CANARY;   /* AUTO/MADVISE depend on the kernel */
    stvm_vm *vm = (stvm_vm *)fz_stray;
    rc = stvm_vm_create(&g, &vm);
    if (bad) {
        FZ_CHECK(rc == STVM_EINVAL && vm == (stvm_vm *)fz_stray,
                 "vm_create with a bad %s answered %s", bad, stvm_err_name(rc));
        return;
    }
    FZ_CHECK(rc == STVM_OK, "vm_create with a valid config answered %s", stvm_err_name(rc));
    stvm_config got;
    FZ_CHECK(stvm_vm_config(vm, &got) == STVM_OK, "vm_config");
    FZ_CHECK(stvm_vm_config(vm, NULL) == STVM_EINVAL && stvm_vm_config(NULL, &got) == STVM_EINVAL,
             "vm_config with NULL");
    size_t page = 4096;
    size_t want_stack = g.stack_size ? (g.stack_size + page - 1) / page * page : 16384;
    size_t want_guard = g.stack_guard_size ? (g.stack_guard_size + page - 1) / page * page : 65536;
    FZ_CHECK(got.stack_size == want_stack && got.stack_guard_size == want_guard &&
                 got.smallint_bits == g.smallint_bits && got.clock == g.clock &&
                 got.ms_clock_start == g.ms_clock_start &&
                 got.external_table_size == g.external_table_size &&
                 got.idle_relinquish_us == g.idle_relinquish_us &&
                 got.delay_clock == g.delay_clock,
             "vm_config does not answer the normalised configuration");
    FZ_CHECK(stvm_smallint_max(vm) == ((int64_t)1 << (g.smallint_bits - 1)) - 1,
             "smallint_max of a %d-bit VM", g.smallint_bits);
    FZ_CHECK(stvm_vm_check_invariants(vm, NULL, 0) == STVM_OK, "a new VM's invariants");
    stvm_vm_free(vm);
}

/* ---- the VM: handles ------------------------------------------------------------------ */

/* A handle argument: one of the pool's, NULL, a foreign VM's, or stray memory. */
static stvm_semaphore *pick_sem(fz_ctx *c, unsigned s)
{
    if (s < 200 && c->nsem) {
        for (int k = 0; k < c->nsem; k++) {
            stvm_semaphore *x = c->sem[(s + (unsigned)k) % (unsigned)c->nsem];
            if (x)
                return x;
        }
    }
    if (s < 230) return NULL;
    if (s < 245) return fz_foreigners[s & 1].sem;
    return (stvm_semaphore *)fz_stray;
}

static bool is_pool_sem(fz_ctx *c, const stvm_semaphore *x)
{
    for (int i = 0; i < c->nsem; i++)
        if (x && c->sem[i] == x)
            return true;
    return false;
}

static stvm_mutex *pick_mut(fz_ctx *c, unsigned s)
{
    if (s < 200 && c->nmut) {
        for (int k = 0; k < c->nmut; k++) {
            stvm_mutex *x = c->mut[(s + (unsigned)k) % (unsigned)c->nmut];
            if (x)
                return x;
        }
    }
    if (s < 230) return NULL;
    if (s < 245) return fz_foreigners[s & 1].mutex;
    return (stvm_mutex *)fz_stray;
}

static bool is_pool_mut(fz_ctx *c, const stvm_mutex *x)
{
    for (int i = 0; i < c->nmut; i++)
        if (x && c->mut[i] == x)
            return true;
    return false;
}

static int pick_proc_index(fz_ctx *c, unsigned s)
{
    if (s < 200 && c->nproc) {
        for (int k = 0; k < c->nproc; k++) {
            int i = (int)((s + (unsigned)k) % (unsigned)c->nproc);
            if (c->proc[i])
                return i;
        }
    }
    return -1;
}

static stvm_process *pick_proc(fz_ctx *c, unsigned s, int *index)
{
    *index = pick_proc_index(c, s);
    if (*index >= 0)
        return c->proc[*index];
    if (s < 230) return NULL;
    if (s < 245) return fz_foreigners[s & 1].proc;
    return (stvm_process *)fz_stray;
}

static bool in_proc(fz_ctx *c) { return stvm_vm_active_process(c->vm) != NULL; }

/* ---- durations ------------------------------------------------------------------------- */

#define MAX_US ((int64_t)1 << 52)
#define MAX_MS_SCHED ((int64_t)0x0FFFFFFF)

static int64_t pick_duration(fz_ctx *c)
{
    unsigned s = fz_u8(IN());
    if (s < 128)
        return (int64_t)(s % 64) * ((s & 64) ? 1000 : 1) - ((s & 1) && s > 100 ? 1 : 0);
    return (int64_t)fz_pick(IN(), edges64, NEDGES64);
}

/* The harness's own arithmetic on durations saturates: Delays of any length are made
 * (as Pharo makes them), so a length near INT64_MAX / 1000 ms is valid input, and a
 * product or sum that overflowed would be the harness's undefined behaviour, not the
 * library's. b >= 0. */
static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* d (ms if ms, else us) in us, INT64_MAX when it does not fit. d >= 0. */
static int64_t us_of(int64_t d, bool ms)
{
    return !ms ? d : d > INT64_MAX / 1000 ? INT64_MAX : d * 1000;
}

/* What a wait of d (ms or us) must answer before it waits: ENOTPROC, EINVAL, ERANGE,
 * or 0 (it may wait). */
static int duration_rule(fz_ctx *c, int64_t d, bool ms)
{
    if (!in_proc(c))
        return STVM_ENOTPROC;
    if (d < 0)
        return STVM_EINVAL;
    if (ms ? d > MAX_US / 1000 : d > MAX_US)
        return STVM_ERANGE;
    int64_t dms = ms ? d : (d + 999) / 1000;
    if (c->cfg.delay_clock == STVM_DELAY_CLOCK_MS && dms > MAX_MS_SCHED)
        return STVM_ERANGE;
    /* It must end before the clock does: exactly for the microsecond scheduler, with
     * the millisecond scheduler's rounding to whole ticks (1 ms more) for that one. */
    bool ms_sched = c->cfg.delay_clock == STVM_DELAY_CLOCK_MS;
    uint64_t us = ms_sched ? (uint64_t)dms * 1000 + 1000 : (uint64_t)us_of(d, ms);
    if (stvm_vm_now_us(c->vm) + us > FZ_CLOCK_END)
        return STVM_ERANGE;
    return 0;
}

/* Not a defect: Pharo's timing process wakes at least once a second ("a soft
 * busy-loop so that we don't accidentally miss signals"), and stvm keeps that rule on
 * the simulated clock too, so a wait costs one timing pass per simulated second it lasts
 * (a 2^52 us Delay, documented as valid, would take hours). Valid waits longer than this
 * are skipped to keep each input within libFuzzer's timeout. */
#define FZ_LONG_US ((int64_t)1000 * 1000000)

static bool too_long(int64_t d, bool ms)
{
    return us_of(d, ms) > FZ_LONG_US;
}

/* A wait of d that ended on time: not early (the us scheduler never; the ms one by at
 * most 1 ms). */
static void not_early(fz_ctx *c, const char *what, uint64_t t0, int64_t d, bool ms)
{
    uint64_t waited = stvm_vm_now_us(c->vm) - t0;
    uint64_t want = (uint64_t)us_of(d, ms);
    uint64_t slack = c->cfg.delay_clock == STVM_DELAY_CLOCK_MS ? 1000 : 0;
    FZ_CHECK(waited + slack >= want, "%s of %lld %s ended after %llu us", what, (long long)d,
             ms ? "ms" : "us", (unsigned long long)waited);
}

static void op_delay(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    bool ms = k & 1;
    int64_t d = pick_duration(c);
    int want = duration_rule(c, d, ms);
    if (!want && !(k & 2) && too_long(d, ms))
        return;
    fz_snap *s = want ? snap(c) : NULL;
    uint64_t t0 = stvm_vm_now_us(c->vm);
    int rc = (k & 2) ? (ms ? stvm_delay_wait_ms(NULL, d) : stvm_delay_wait_us(NULL, d))
                     : (ms ? stvm_delay_wait_ms(c->vm, d) : stvm_delay_wait_us(c->vm, d));
    if (k & 2) {
        FZ_CHECK(rc == STVM_EINVAL, "delay with a NULL vm answered %s", stvm_err_name(rc));
        return;
    }
    if (want) {
        FZ_CHECK(rc == want, "delay_wait_%s(%lld) answered %s, expected %s", ms ? "ms" : "us",
                 (long long)d, stvm_err_name(rc), stvm_err_name(want));
        unchanged(c, s, "a delay");
        return;
    }
    FZ_CHECK(rc == STVM_OK || rc == STVM_ESTATE || rc == STVM_EINTR,
             "delay_wait_%s(%lld) answered %s", ms ? "ms" : "us", (long long)d, stvm_err_name(rc));
    if (rc == STVM_OK)
        not_early(c, "a delay", t0, d, ms);
}

static void op_sem_timed(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    bool ms = k & 1;
    stvm_semaphore *sem = pick_sem(c, fz_u8(IN()));
    int64_t d = pick_duration(c);
    bool valid = is_pool_sem(c, sem);
    int want = !valid ? STVM_EINVAL : duration_rule(c, d, ms);
    if (!want && stvm_semaphore_excess(c->vm, sem) == 0 && too_long(d, ms))
        return;
    fz_snap *s = want ? snap(c) : NULL;
    int64_t excess = valid ? stvm_semaphore_excess(c->vm, sem) : 0;
    uint64_t t0 = stvm_vm_now_us(c->vm);
    int rc = ms ? stvm_semaphore_wait_timeout_ms(c->vm, sem, d)
                : stvm_semaphore_wait_timeout_us(c->vm, sem, d);
    if (want) {
        FZ_CHECK(rc == want, "semaphore_wait_timeout_%s(%lld) answered %s, expected %s",
                 ms ? "ms" : "us", (long long)d, stvm_err_name(rc), stvm_err_name(want));
        unchanged(c, s, "a timed semaphore wait");
        return;
    }
    FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT || rc == STVM_ESTATE || rc == STVM_EINTR,
             "semaphore_wait_timeout answered %s", stvm_err_name(rc));
    if (excess > 0)
        FZ_CHECK(rc == STVM_OK && stvm_vm_now_us(c->vm) == t0,
                 "a timed wait with an excess signal must return at once");
    if (rc == STVM_ETIMEDOUT)
        not_early(c, "a timed semaphore wait", t0, d, ms);
}

static void op_mutex_timed(fz_ctx *c)
{
    stvm_mutex *m = pick_mut(c, fz_u8(IN()));
    int64_t d = pick_duration(c);
    bool valid = is_pool_mut(c, m);
    int want = !valid ? STVM_EINVAL : duration_rule(c, d, true);
    if (!want && too_long(d, true))
        return;
    fz_snap *s = want ? snap(c) : NULL;
    stvm_process *owner = valid ? stvm_mutex_owner(c->vm, m) : NULL;
    stvm_process *me = stvm_vm_active_process(c->vm);
    uint64_t t0 = stvm_vm_now_us(c->vm);
    int rc = stvm_mutex_enter_timeout_ms(c->vm, m, d);
    if (want) {
        FZ_CHECK(rc == want, "mutex_enter_timeout_ms(%lld) answered %s, expected %s",
                 (long long)d, stvm_err_name(rc), stvm_err_name(want));
        unchanged(c, s, "a timed mutex enter");
        return;
    }
    FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT || rc == STVM_ESTATE || rc == STVM_EINTR || rc == STVM_ERANGE,
             "mutex_enter_timeout_ms answered %s", stvm_err_name(rc));
    if (!owner || owner == me)
        FZ_CHECK(rc == STVM_OK, "a free or own mutex: timed enter answered %s", stvm_err_name(rc));
    if (rc == STVM_OK)
        FZ_CHECK(stvm_mutex_owner(c->vm, m) == me, "timed enter OK but not the owner");
    if (rc == STVM_ETIMEDOUT) {
        FZ_CHECK(stvm_mutex_owner(c->vm, m) != me, "timed out but owns the mutex");
        not_early(c, "a timed mutex enter", t0, d, true);
    }
}

/* ---- processes ------------------------------------------------------------------------ */

enum wkind { W_DRIVER, W_SEM_WAIT, W_MUTEX_HOLD, W_DELAY, W_JOIN, W_RETURN, W_ENSURE,
             W_SUSPEND_SELF, W_TIMED, NKINDS };

/* ---- names and the process listing --------------------------------------------------- */

enum { NK_SEM, NK_MUTEX, NK_QUEUE, NK_DELAY, NK_MONITOR, NK_KINDS };

static int name_set(fz_ctx *c, int kind, void *h, const char *name)
{
    switch (kind) {
    case NK_SEM: return stvm_semaphore_set_name(c->vm, h, name);
    case NK_MUTEX: return stvm_mutex_set_name(c->vm, h, name);
    case NK_QUEUE: return stvm_queue_set_name(c->vm, h, name);
    case NK_DELAY: return stvm_delay_set_name(c->vm, h, name);
    default: return stvm_monitor_set_name(c->vm, h, name);
    }
}

static int name_get(fz_ctx *c, int kind, const void *h, char *buf, size_t size)
{
    switch (kind) {
    case NK_SEM: return stvm_semaphore_get_name(c->vm, h, buf, size);
    case NK_MUTEX: return stvm_mutex_get_name(c->vm, h, buf, size);
    case NK_QUEUE: return stvm_queue_get_name(c->vm, h, buf, size);
    case NK_DELAY: return stvm_delay_get_name(c->vm, h, buf, size);
    default: return stvm_monitor_get_name(c->vm, h, buf, size);
    }
}

/* A pool object of the kind, or NULL when the pool has none (freed ones are NULL). */
static void *pool_object(fz_ctx *c, int kind, unsigned pick)
{
    switch (kind) {
    case NK_SEM: return c->nsem ? (void *)c->sem[pick % (unsigned)c->nsem] : NULL;
    case NK_MUTEX: return c->nmut ? (void *)c->mut[pick % (unsigned)c->nmut] : NULL;
    case NK_QUEUE: return c->nqueue ? (void *)c->queue[pick % (unsigned)c->nqueue].q : NULL;
    case NK_DELAY: return c->ndly ? (void *)c->dly[pick % (unsigned)c->ndly].d : NULL;
    default: return c->nmon ? (void *)c->mon[pick % (unsigned)c->nmon] : NULL;
    }
}

/* Another VM's object of the kind. */
static void *foreign_object(int kind, unsigned pick)
{
    const fz_foreign *f = &fz_foreigners[pick & 1];
    void *const objs[NK_KINDS] = {f->sem, f->mutex, f->queue, f->delay, f->monitor};
    return objs[kind];
}

static char name_buf[STVM_NAME_MAX * 2 + 64];

/* A setter with any bytes (control characters, not UTF-8, longer than the limit, NULL),
 * on any handle; the getter with buffers of every size; the name must be what the last
 * accepted setter gave, and a refused one changes nothing. */
static void op_object_name(fz_ctx *c)
{
    unsigned k = fz_u8(IN()), pick = fz_u8(IN()), len = fz_u8(IN()) % (STVM_NAME_MAX + 20);
    int kind = (int)(k % NK_KINDS);
    void *h = pool_object(c, kind, pick);
    bool bad_handle = !h || (k & 0x38) == 0x08 || (k & 0x38) == 0x10;
    if ((k & 0x38) == 0x08)
        h = foreign_object(kind, pick);
    else if ((k & 0x38) == 0x10)
        h = (pick & 1) ? NULL : (void *)fz_stray;
    /* the name: NULL, or len bytes of the input (a NUL ends it early: any C string) */
    char *name = NULL;
    if (!(k & 0x40)) {
        for (unsigned i = 0; i < len; i++)
            name_buf[i] = (char)fz_u8(IN());
        name_buf[len] = 0;
        name = name_buf;
    }
    bool control = false, too_long = false;
    for (size_t i = 0; name && name[i]; i++) {
        unsigned char b = (unsigned char)name[i];
        control |= b < 0x20 || b == 0x7F;
        too_long |= i == STVM_NAME_MAX;
    }
    char before[STVM_NAME_MAX + 1] = "", after[STVM_NAME_MAX + 1];
    int before_len = bad_handle ? 0 : name_get(c, kind, h, before, sizeof before);
    fz_snap *s = snap(c);
    int rc = name_set(c, kind, h, name);
    FZ_TRACE("  set_name(kind %d, %s, %zu bytes) -> %s\n", kind, bad_handle ? "bad" : "pool",
             name ? strlen(name) : 0, stvm_err_name(rc));
    if (bad_handle) {
        FZ_CHECK(rc == STVM_EINVAL, "set_name of a bad handle answered %s", stvm_err_name(rc));
        unchanged(c, s, "set_name of a bad handle");
        return;
    }
    if (control || too_long) {
        FZ_CHECK((control && rc == STVM_EINVAL) || (too_long && rc == STVM_ERANGE),
                 "set_name(%s%s) answered %s", control ? "control character " : "",
                 too_long ? "too long" : "", stvm_err_name(rc));
        unchanged(c, s, "a refused set_name");
        int n = name_get(c, kind, h, after, sizeof after);
        FZ_CHECK(n == before_len && strcmp(before, after) == 0,
                 "a refused set_name changed the name \"%s\" to \"%s\"", before, after);
        return;
    }
    FZ_CHECK(rc == STVM_OK, "set_name answered %s", stvm_err_name(rc));
    size_t want = name ? strlen(name) : 0;   /* name is name_buf: read before it is reused */
    char expect[STVM_NAME_MAX + 1];
    snprintf(expect, sizeof expect, "%s", name ? name : "");
    /* the getter: every buffer size, nothing written past it */
    static const size_t sizes[] = {0, 1, 2, 5, STVM_NAME_MAX, STVM_NAME_MAX + 1, sizeof name_buf};
    size_t size = sizes[pick % (sizeof sizes / sizeof sizes[0])];
    memset(name_buf, 'Z', sizeof name_buf);
    int n = name_get(c, kind, h, size ? name_buf : NULL, size);
    FZ_CHECK(n == (int)want, "get_name answered %d, the name has %zu bytes", n, want);
    for (size_t i = size; i < sizeof name_buf; i++)
        FZ_CHECK(name_buf[i] == 'Z', "get_name(size %zu) wrote at %zu", size, i);
    if (size)
        FZ_CHECK(strncmp(name_buf, expect, size - 1) == 0 && strnlen(name_buf, size) < size,
                 "get_name(size %zu) gave \"%.*s\" for \"%s\"", size, (int)size, name_buf, expect);
    FZ_CHECK(name_get(c, kind, h, NULL, 4) == STVM_EINVAL, "get_name(NULL buf, 4)");
}

/* The listing: as many as the VM's live processes, oldest first, none past cap; what
 * each waits on agrees with itself (a name belongs to the handle shown). */
static void op_listing(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    static const size_t caps[] = {0, 1, 3, 16};
    size_t cap = caps[k & 3];
    stvm_process *list[17];
    for (size_t i = 0; i < 17; i++)
        list[i] = (stvm_process *)fz_stray;
    size_t count = 12345;
    if (k & 4) {   /* the refusals */
        fz_snap *s = snap(c);
        FZ_CHECK(stvm_vm_processes(c->vm, NULL, 2, &count) == STVM_EINVAL && count == 12345,
                 "processes(NULL out, cap 2)");
        FZ_CHECK(stvm_vm_processes(c->vm, list, cap, NULL) == STVM_EINVAL, "processes(NULL count)");
        FZ_CHECK(stvm_vm_processes(NULL, list, cap, &count) == STVM_EINVAL, "processes(NULL vm)");
        for (size_t i = 0; i < 17; i++)
            FZ_CHECK(list[i] == (stvm_process *)fz_stray, "a refused listing wrote");
        unchanged(c, s, "a refused listing");
        return;
    }
    FZ_CHECK(stvm_vm_processes(c->vm, list, cap, &count) == STVM_OK, "processes");
    stvm_stats st;
    stvm_vm_get_stats(c->vm, &st);
    FZ_CHECK(count == st.processes_live, "listed %zu of %llu live processes", count,
             (unsigned long long)st.processes_live);
    for (size_t i = cap; i < 17; i++)
        FZ_CHECK(list[i] == (stvm_process *)fz_stray, "the listing wrote past cap %zu", cap);
    uint64_t last = 0;
    for (size_t i = 0; i < cap && i < count; i++) {
        stvm_process_info info;
        FZ_CHECK(stvm_process_get_info(c->vm, list[i], &info) == STVM_OK, "info of a listed one");
        FZ_CHECK(info.id > last && info.state != STVM_PROCESS_TERMINATED,
                 "listed out of order, or finished");
        last = info.id;
        bool waits = info.state == STVM_PROCESS_WAITING;
        FZ_CHECK(info.wait_kind >= 0 && info.wait_kind < STVM_WAIT_ON_KINDS, "wait_kind %d",
                 info.wait_kind);
        FZ_CHECK(waits == (info.wait_kind != STVM_WAIT_ON_NOTHING), "a %s process, wait_kind %d",
                 waits ? "waiting" : "not waiting", info.wait_kind);
        FZ_CHECK(waits || (!info.wait_handle && !info.wait_name && info.wait_since_us == 0 &&
                           info.wait_fd == -1),
                 "wait fields set on a process that does not wait");
        FZ_CHECK(!info.wait_name || info.wait_handle, "a name without a handle");
        FZ_CHECK(!waits || info.wait_since_us <= stvm_vm_now_us(c->vm), "waits since the future");
        int kinds[] = {[STVM_WAIT_ON_SEMAPHORE] = NK_SEM, [STVM_WAIT_ON_MUTEX] = NK_MUTEX,
                       [STVM_WAIT_ON_MONITOR] = NK_MONITOR, [STVM_WAIT_ON_MONITOR_CONDITION] = NK_MONITOR,
                       [STVM_WAIT_ON_QUEUE_ITEM] = NK_QUEUE, [STVM_WAIT_ON_QUEUE_ROOM] = NK_QUEUE,
                       [STVM_WAIT_ON_DELAY] = NK_DELAY, [STVM_WAIT_ON_KINDS - 1] = 0};
        if (info.wait_name && info.wait_kind <= STVM_WAIT_ON_DELAY) {
            char got[STVM_NAME_MAX + 1];
            name_get(c, kinds[info.wait_kind], info.wait_handle, got, sizeof got);
            FZ_CHECK(strcmp(got, info.wait_name) == 0, "wait_name \"%s\", the object's \"%s\"",
                     info.wait_name, got);
        }
    }
}

static void exec_op(fz_ctx *c, unsigned op);
static void op_local(fz_ctx *c, unsigned op);
static void queues_maybe_lossy(fz_ctx *c);

static void drive(fz_ctx *c)
{
    while (c->ops_left > 0 && c->in.n) {
        c->ops_left--;
        unsigned op = fz_u8(&c->in);
        if (op == 0xFF)
            return;
        exec_op(c, op);
        fz_invariants(c, "an operation");
        op_local(c, op);
        fz_invariants(c, "a process-local call");
    }
}

static int cleanups_ran;

static void cleanup(stvm_vm *vm, void *arg)
{
    fz_ctx *c = arg;
    cleanups_ran++;
    /* A cleanup runs in its process (it may wait) or, at stvm_vm_free, on the host
     * with no active process (it must not). */
    if (stvm_vm_active_process(vm) && c->vm == vm)
        FZ_CHECK(stvm_yield(vm) == STVM_OK, "yield in a cleanup");
}

static unsigned interrupts_sent, interrupts_ran;

/* An interrupt's function: it runs in the interrupted process, which may then wait. */
static void interrupt_fn(stvm_vm *vm, void *arg)
{
    fz_ctx *c = arg;
    interrupts_ran++;
    FZ_CHECK(stvm_vm_active_process(vm) != NULL, "an interrupt runs in a process");
    if (c->vm == vm && (interrupts_ran & 1))
        stvm_yield(vm);
}

/* The body of a critical section: yields, so that others may try the semaphore. */
static void critical_fn(stvm_vm *vm, void *arg)
{
    fz_ctx *c = arg;
    if (c->vm == vm)
        stvm_yield(vm);
}

/* What a timed run runs: Delays of 0..7 ms until one is cut short. */
static void timed_fn(stvm_vm *vm, void *arg)
{
    fz_ctx *c = arg;
    for (int i = 0; i < 3; i++) {
        int rc = stvm_delay_wait_ms(vm, (int64_t)(fz_u8(&c->in) % 8));
        FZ_CHECK(rc == STVM_OK || rc == STVM_EINTR || rc == STVM_ESTATE ||
                     (rc == STVM_ERANGE && duration_rule(c, 7, true) == STVM_ERANGE),
                 "a Delay in a timed run answered %s", stvm_err_name(rc));
        if (rc)
            return;
    }
}

static void worker_main(stvm_vm *vm, void *arg)
{
    fz_worker *w = arg;
    fz_ctx *c = w->c;
    w->self = stvm_vm_active_process(vm);
    for (int i = 0; i < c->nw; i++)
        if (&c->w[i] != w && c->w[i].self == w->self)
            c->w[i].finished = true;
    w->started = true;
    switch (w->kind) {
    case W_DRIVER:
        drive(c);
        break;
    case W_SEM_WAIT: {
        stvm_semaphore *s = pick_sem(c, (unsigned)w->a % 200);
        if (s) {
            int rc = stvm_semaphore_wait(vm, s);
            FZ_CHECK(rc == STVM_OK || rc == STVM_ESTATE || rc == STVM_EINTR, "semaphore_wait answered %s",
                     stvm_err_name(rc));
        }
        break;
    }
    case W_MUTEX_HOLD: {
        stvm_mutex *m = pick_mut(c, (unsigned)w->a % 200);
        if (m && stvm_mutex_enter(vm, m) == STVM_OK) {
            /* picked only now: a semaphore may be freed while we wait for the mutex */
            stvm_semaphore *s = pick_sem(c, (unsigned)w->b % 200);
            if (s)
                stvm_semaphore_wait(vm, s);
            FZ_CHECK(stvm_mutex_exit(vm, m) == STVM_OK, "exit of an owned mutex");
        }
        break;
    }
    case W_DELAY: {
        int rc = stvm_delay_wait_us(vm, w->d);
        FZ_CHECK(rc == STVM_OK || rc == STVM_ERANGE || rc == STVM_ESTATE || rc == STVM_EINTR, "delay answered %s",
                 stvm_err_name(rc));
        break;
    }
    case W_JOIN: {
        int i = pick_proc_index(c, (unsigned)w->a % 200);
        if (i >= 0 && c->proc[i] != w->self) {
            stvm_process *h = c->proc[i];
            FZ_TRACE("join of %p by %p\n", (void *)h, (void *)w->self);
            int rc = stvm_process_join(vm, h, w->d % 3 == 2 ? 5 : -1);
            FZ_CHECK(rc == STVM_OK || rc == STVM_ESTATE || rc == STVM_EINTR || rc == STVM_ETIMEDOUT ||
                         rc == STVM_ERANGE,
                     "join answered %s", stvm_err_name(rc));
            if (rc == STVM_OK) {
                for (int k = 0; k < c->nproc; k++)
                    if (c->proc[k] == h)
                        c->proc[k] = NULL;   /* given back */
            }
        }
        break;
    }
    case W_RETURN:
        break;
    case W_ENSURE: {
        for (int i = 0; i <= w->a % 3; i++)
            FZ_CHECK(stvm_ensure(vm, cleanup, c) == STVM_OK, "ensure");
        stvm_semaphore *s = pick_sem(c, (unsigned)w->b % 200);
        if (s)
            stvm_semaphore_wait(vm, s);
        if (w->d & 1)
            FZ_CHECK(stvm_ensure_pop(vm, (w->d & 2) != 0) == STVM_OK, "ensure_pop");
        break;
    }
    case W_SUSPEND_SELF:
        FZ_CHECK(stvm_process_suspend(vm, w->self) == STVM_OK, "suspending itself");
        break;
    case W_TIMED: {
        stvm_semaphore *s = pick_sem(c, (unsigned)w->a % 200);
        if (s) {
            int rc = stvm_semaphore_wait_timeout_ms(vm, s, w->d % 100);
            FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT || rc == STVM_ESTATE || rc == STVM_EINTR ||
                         rc == STVM_ERANGE,
                     "timed wait answered %s", stvm_err_name(rc));
        }
        break;
    }
    }
    w->finished = true;
}

static void op_spawn(fz_ctx *c)
{
    unsigned k = fz_u8(IN()), p = fz_u8(IN()), f = fz_u8(IN());
    int prio = p < 240 ? (int)(p % 80) + 1 : (int)(p - 240) * 7 - 30;
    static const size_t stacks[] = {0, FZ_STACK, 8192, 8191, 4096, ((size_t)64 << 20) + 1,
                                    SIZE_MAX, 100000};
    size_t stack = stacks[(f >> 4) & 7];
    const char *name = (f & 8) ? NULL
                               : fz_names[fz_u8(IN()) % (sizeof fz_names / sizeof fz_names[0])];
    bool held = f & 1, suspended = f & 2, sized = (f & 4) != 0, null_fn = (f & 0x84) == 0x84;
    /* stvm_spawn has no stack size: the VM's default (FZ_STACK here) */
    bool bad = prio < 1 || prio > 80 || null_fn ||
               ((suspended || sized) && stack && (stack < 8192 || stack > ((size_t)64 << 20)));
    if (c->nw >= FZ_MAXW)
        return;
    fz_worker *w = &c->w[c->nw];
    memset(w, 0, sizeof *w);
    w->c = c;
    w->kind = (int)(k % NKINDS);
    w->a = (int)fz_u8(IN());
    w->b = (int)fz_u8(IN());
    w->d = (int64_t)(fz_u16(IN()) % 20000);
    if ((suspended || sized) && stack && stack < FZ_STACK)
        w->kind = W_RETURN;   /* sanitized frames of the other kinds need more than 8 KiB */
    fz_snap *s = bad ? snap(c) : NULL;
    stvm_process *h = (stvm_process *)fz_stray;
    c->nw++;   /* before the call: a higher-priority process runs inside it */
    stvm_fn fn = null_fn ? NULL : worker_main;
    int rc;
    if (suspended)
        rc = stvm_spawn_suspended(c->vm, prio, name, fn, w, stack, held ? &h : NULL);
    else if (sized)
        rc = stvm_spawn_sized(c->vm, prio, name, fn, w, stack, held ? &h : NULL);
    else
        rc = stvm_spawn(c->vm, prio, name, fn, w, held ? &h : NULL);
    if (bad) {
        c->nw--;
        FZ_CHECK(rc == STVM_EINVAL && h == (stvm_process *)fz_stray,
                 "spawn(prio %d, stack %zu, fn %p) answered %s", prio, stack, (void *)fn,
                 stvm_err_name(rc));
        unchanged(c, s, "spawn with a bad argument");
        return;
    }
    FZ_CHECK(rc == STVM_OK, "spawn(prio %d, stack %zu) answered %s", prio, stack,
             stvm_err_name(rc));
    if (held) {
        w->held = h;
        if (!w->self)
            w->self = h;
        fz_add_proc(c, h);
    }
}

static void op_process(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    int idx;
    stvm_process *h = pick_proc(c, fz_u8(IN()), &idx);
    bool ours = idx >= 0;
    stvm_process_info info;
    memset(&info, 0, sizeof info);
    if (ours)
        FZ_CHECK(stvm_process_get_info(c->vm, h, &info) == STVM_OK, "info of a held handle");
    bool finished = ours && info.state == STVM_PROCESS_TERMINATED;
    stvm_process *me = stvm_vm_active_process(c->vm);
    fz_snap *s = snap(c);
    int rc, want;
    const char *what;
    switch (k % 10) {
    case 0:
        what = "suspend";
        want = !ours ? STVM_EINVAL : finished ? STVM_ESTATE
             : info.state == STVM_PROCESS_SUSPENDED ? STVM_ESTATE : 0;
        rc = stvm_process_suspend(c->vm, h);
        break;
    case 1:
        what = "resume";
        want = !ours ? STVM_EINVAL : info.state == STVM_PROCESS_SUSPENDED ? 0 : STVM_ESTATE;
        rc = stvm_process_resume(c->vm, h);
        break;
    case 2:
        what = "terminate";
        want = !ours ? STVM_EINVAL : 0;   /* a finished one: a no-op (Pharo's rule) */
        rc = stvm_process_terminate(c->vm, h);   /* of itself: does not return */
        if (rc == STVM_OK && finished)
            unchanged(c, s, "terminate of a finished process");
        if (rc == STVM_OK)
            queues_maybe_lossy(c);
        break;
    case 3: {
        what = "set_priority";
        unsigned p = fz_u8(IN());
        int prio = p < 240 ? (int)(p % 80) + 1 : (int)(p - 240) * 7 - 30;
        want = !ours ? STVM_EINVAL : finished ? STVM_ESTATE : (prio < 1 || prio > 80) ? STVM_EINVAL : 0;
        rc = stvm_process_set_priority(c->vm, h, prio);
        break;
    }
    case 4:
        what = "release";
        want = !ours ? STVM_EINVAL : 0;
        rc = stvm_process_release(c->vm, h);
        if (rc == STVM_OK)
            c->proc[idx] = NULL;
        /* a second release of the same handle would use it after it went */
        break;
    case 5: {
        what = "join";
        int64_t t = (int64_t)(fz_u8(IN()) % 5) - 2;   /* -2 .. 2 */
        if (t == 2)
            t = (int64_t)fz_pick(IN(), edges64, NEDGES64);
        want = !ours || t < -1 ? STVM_EINVAL : !me ? STVM_ENOTPROC : h == me ? STVM_EINVAL : 0;
        if (!want && t > 0)
            want = duration_rule(c, t, true);   /* ERANGE is checked first */
        if (!want)
            want = finished ? 0 : t == 0 ? STVM_ETIMEDOUT : MAY_WAIT;
        if (want == MAY_WAIT && t > 0 && too_long(t, true))
            return;
        rc = stvm_process_join(c->vm, h, t);
        if (rc == STVM_OK)
            c->proc[idx] = NULL;
        if (want == MAY_WAIT) {   /* it waited */
            FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT || rc == STVM_ESTATE || rc == STVM_EINTR,
                     "join answered %s", stvm_err_name(rc));
            return;
        }
        break;
    }
    case 6:
        what = "interrupt";
        want = !ours ? STVM_EINVAL : finished ? STVM_ESTATE : 0;
        rc = stvm_process_interrupt((k & 0x20) ? NULL : c->vm, h, (k & 0x40) ? NULL : interrupt_fn,
                                    c);
        if (k & 0x20)
            want = STVM_EINVAL;
        if (rc == STVM_OK)
            interrupts_sent++;
        break;
    case 7: {
        what = "semaphore_critical";
        stvm_semaphore *sem = pick_sem(c, fz_u8(IN()));
        bool null_fn = k & 0x40;
        want = !is_pool_sem(c, sem) || null_fn ? STVM_EINVAL : !me ? STVM_ENOTPROC : MAY_WAIT;
        rc = stvm_semaphore_critical(c->vm, sem, null_fn ? NULL : critical_fn, c);
        if (want == MAY_WAIT) {
            FZ_CHECK(rc == STVM_OK || rc == STVM_ESTATE || rc == STVM_EINTR,
                     "semaphore_critical answered %s", stvm_err_name(rc));
            return;
        }
        break;
    }
    case 8: {
        what = "call_within";
        int64_t d = (int64_t)(fz_u8(IN()) % 8) - 1;   /* -1 .. 6 ms */
        bool null_fn = k & 0x40;
        int rule = duration_rule(c, d, true);   /* ENOTPROC, EINVAL, ERANGE in that order */
        want = null_fn ? STVM_EINVAL : rule ? rule : d == 0 ? STVM_ETIMEDOUT : MAY_WAIT;
        rc = stvm_call_within_ms(c->vm, null_fn ? NULL : timed_fn, c, d);
        if (want == MAY_WAIT) {
            FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT, "call_within answered %s",
                     stvm_err_name(rc));
            return;
        }
        break;
    }
    default: {
        what = "process_info_get";
        stvm_process_info out;
        bool null_out = k & 0x80;
        want = !ours || null_out ? STVM_EINVAL : 0;
        rc = stvm_process_get_info((k & 0x40) ? NULL : c->vm, h, null_out ? NULL : &out);
        if (k & 0x40)
            want = STVM_EINVAL;
        if (!rc) {
            FZ_CHECK(out.name && out.id >= 2 && !out.vm_own && out.held,
                     "info of a held handle: name, id, held");
            FZ_CHECK((out.state == STVM_PROCESS_TERMINATED) == (out.stack_guard == NULL),
                     "stack_guard is NULL exactly once finished");
            FZ_CHECK((out.state == STVM_PROCESS_WAITING) == (out.waiting_on != NULL),
                     "waiting_on names what a waiting process waits on (state %d, %s)",
                     out.state, out.waiting_on ? out.waiting_on : "NULL");
            FZ_CHECK(out.priority >= 1 && out.priority <= 80, "info priority %d", out.priority);
            FZ_CHECK((out.state == STVM_PROCESS_ACTIVE) == (h == me), "only the caller is active");
        }
        break;
    }
    }
    FZ_CHECK(rc == want, "%s of a %s handle (state %d) answered %s, expected %s", what,
             ours ? "held" : "foreign/NULL", info.state, stvm_err_name(rc), stvm_err_name(want));
    if (rc)
        unchanged(c, s, what);
}

/* ---- semaphores, mutexes, external signals ------------------------------------------ */

static void op_sem(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    stvm_semaphore *sem = pick_sem(c, fz_u8(IN()));
    bool valid = is_pool_sem(c, sem);
    bool proc = in_proc(c);
    fz_snap *s = snap(c);
    int rc, want;
    const char *what;
    switch (k % 6) {
    case 0: {
        what = "semaphore_new";
        stvm_semaphore *n = (stvm_semaphore *)fz_stray;
        rc = stvm_semaphore_new((k & 0x80) ? NULL : c->vm, (k & 0x40) ? NULL : &n);
        want = (k & 0xC0) ? STVM_EINVAL : 0;
        if (rc == STVM_OK) {
            if (c->nsem < FZ_MAXSEM)
                fz_add_sem(c, n);
            else
                FZ_CHECK(stvm_semaphore_free(c->vm, n) == STVM_OK, "free of a new semaphore");
        }
        break;
    }
    case 1: {
        what = "semaphore_free";
        rc = stvm_semaphore_free(c->vm, sem);
        want = valid ? rc : STVM_EINVAL;   /* EINUSE when waited on: checked unchanged */
        if (valid)
            FZ_CHECK(rc == STVM_OK || rc == STVM_EINUSE, "semaphore_free answered %s",
                     stvm_err_name(rc));
        if (rc == STVM_OK)
            for (int i = 0; i < c->nsem; i++)
                if (c->sem[i] == sem)
                    c->sem[i] = NULL;
        break;
    }
    case 2:
        what = "semaphore_signal";
        rc = stvm_semaphore_signal(c->vm, sem);
        want = valid ? 0 : STVM_EINVAL;
        break;
    case 3:
        what = "semaphore_wait";
        want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC : MAY_WAIT;
        rc = stvm_semaphore_wait(c->vm, sem);
        if (want == MAY_WAIT) {
            FZ_CHECK(rc == STVM_OK || rc == STVM_ESTATE || rc == STVM_EINTR, "semaphore_wait answered %s",
                     stvm_err_name(rc));
            return;
        }
        break;
    case 4: {
        what = "semaphore_try_wait";
        int64_t e = valid ? stvm_semaphore_excess(c->vm, sem) : 0;
        want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC : e > 0 ? 0 : STVM_EAGAIN;
        rc = stvm_semaphore_try_wait(c->vm, sem);
        if (rc == STVM_OK)
            FZ_CHECK(stvm_semaphore_excess(c->vm, sem) == e - 1, "try_wait took no signal");
        break;
    }
    default: {
        what = "semaphore_excess";
        int64_t e = stvm_semaphore_excess(c->vm, sem);
        rc = e < 0 ? (int)e : 0;
        want = valid ? 0 : STVM_EINVAL;
        break;
    }
    }
    FZ_CHECK(rc == want, "%s answered %s, expected %s", what, stvm_err_name(rc),
             stvm_err_name(want));
    if (rc)
        unchanged(c, s, what);
}

static void critical_body(stvm_vm *vm, void *arg)
{
    (void)arg;
    FZ_CHECK(stvm_yield(vm) == STVM_OK, "yield inside a critical section");
}

static void op_mutex(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    stvm_mutex *m = pick_mut(c, fz_u8(IN()));
    bool valid = is_pool_mut(c, m);
    bool proc = in_proc(c);
    stvm_process *me = stvm_vm_active_process(c->vm);
    stvm_process *owner = valid ? stvm_mutex_owner(c->vm, m) : NULL;
    fz_snap *s = snap(c);
    int rc, want;
    const char *what;
    switch (k % 6) {
    case 0: {
        what = "mutex_new";
        stvm_mutex *n = (stvm_mutex *)fz_stray;
        rc = stvm_mutex_new((k & 0x80) ? NULL : c->vm, (k & 0x40) ? NULL : &n);
        want = (k & 0xC0) ? STVM_EINVAL : 0;
        if (rc == STVM_OK) {
            if (c->nmut < FZ_MAXMUT)
                fz_add_mut(c, n);
            else
                FZ_CHECK(stvm_mutex_free(c->vm, n) == STVM_OK, "free of a new mutex");
        }
        break;
    }
    case 1:
        what = "mutex_free";
        rc = stvm_mutex_free(c->vm, m);
        want = !valid ? STVM_EINVAL : owner ? STVM_EINUSE : rc;
        if (valid)
            FZ_CHECK(rc == STVM_OK || rc == STVM_EINUSE, "mutex_free answered %s",
                     stvm_err_name(rc));
        if (rc == STVM_OK)
            for (int i = 0; i < c->nmut; i++)
                if (c->mut[i] == m)
                    c->mut[i] = NULL;
        break;
    case 2:
        what = "mutex_enter";
        want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC : MAY_WAIT;
        rc = stvm_mutex_enter(c->vm, m);
        if (want == MAY_WAIT) {
            FZ_CHECK(rc == STVM_OK || rc == STVM_ESTATE || rc == STVM_EINTR, "mutex_enter answered %s",
                     stvm_err_name(rc));
            if (rc == STVM_OK)
                FZ_CHECK(stvm_mutex_owner(c->vm, m) == me, "entered but not the owner");
            return;
        }
        break;
    case 3:
        what = "mutex_exit";
        want = !valid ? STVM_EINVAL : (!proc || owner != me) ? STVM_EPERM : 0;
        rc = stvm_mutex_exit(c->vm, m);
        break;
    case 4:
        what = "mutex_try_enter";
        want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC
             : (!owner || owner == me) ? STVM_OK : STVM_EAGAIN;
        rc = stvm_mutex_try_enter(c->vm, m);
        if (rc == STVM_OK)
            FZ_CHECK(stvm_mutex_owner(c->vm, m) == me, "try_enter OK but not the owner");
        if (rc == STVM_EAGAIN) {
            FZ_CHECK(want == STVM_EAGAIN, "mutex_try_enter answered EAGAIN, expected %s",
                     stvm_err_name(want));
            unchanged(c, s, "mutex_try_enter (owned by another)");
            return;
        }
        break;
    default:
        what = "mutex_critical";
        want = (k & 0x80) ? STVM_EINVAL : !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC : MAY_WAIT;
        rc = stvm_mutex_critical(c->vm, m, (k & 0x80) ? NULL : critical_body, c);
        if (want == MAY_WAIT) {
            FZ_CHECK(rc == STVM_OK || rc == STVM_ESTATE || rc == STVM_EINTR, "mutex_critical answered %s",
                     stvm_err_name(rc));
            return;
        }
        break;
    }
    if (want == 1 && rc == 1)
        return;
    FZ_CHECK(rc == want, "%s answered %s, expected %s", what, stvm_err_name(rc),
             stvm_err_name(want));
    if (rc)
        unchanged(c, s, what);
}

/* External semaphores: only the two reserved for them (nobody waits on them without a
 * time limit, so a registered one never keeps stvm_run waiting for a signal). */
static stvm_semaphore *ext_sem[2];
static int ext_index[2];
/* Requests accepted by stvm_external_signal since the VM was made: the table may never
 * signal more than this. */
static uint64_t ext_requests;
/* Signals the table had made when the statistics were last reset: stvm_vm_reset_stats (case 6
 * of op_misc, which a process run by a checkpoint may call) sets the counter to 0, and the
 * checks here count from the VM's creation. */
static uint64_t ext_signals_reset;

static int open_queue_slots(const fz_ctx *c)
{
    int n = 0;
    for (int i = 0; i < c->nqueue; i++)
        n += c->queue[i].q && c->queue[i].external;
    return n;
}

static bool is_queue_slot(const fz_ctx *c, int idx)
{
    for (int i = 0; i < c->nqueue; i++)
        if (c->queue[i].q && c->queue[i].external && c->queue[i].q->ext_index == idx)
            return true;
    return false;
}

static uint64_t fz_external_signals(fz_ctx *c)
{
    stvm_stats st;
    FZ_CHECK(stvm_vm_get_stats(c->vm, &st) == STVM_OK, "get_stats");
    return ext_signals_reset + st.external_signals;
}

static void op_external(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    int e = (int)(k >> 7);
    int size = c->cfg.external_table_size;
    fz_snap *s = snap(c);
    int rc, want;
    const char *what;
    switch (k % 5) {
    case 0: {
        what = "register_external";
        int idx = -7;
        bool null = (k & 0x40) != 0;
        rc = stvm_external_register(c->vm, null ? NULL : ext_sem[e], &idx);
        int used = (ext_index[0] > 0) + (ext_index[1] > 0) + open_queue_slots(c);
        want = null ? STVM_EINVAL : ext_index[e] ? STVM_ESTATE : used >= size ? STVM_EFULL : 0;
        if (rc == STVM_OK) {
            FZ_CHECK(idx >= 1 && idx <= size && idx != ext_index[1 - e], "index %d", idx);
            ext_index[e] = idx;
        } else {
            FZ_CHECK(idx == -7, "register failed but wrote the index");
        }
        break;
    }
    case 1: {
        what = "unregister_external";
        int idx = (k & 0x40) ? ext_index[e] : (int)(fz_u8(IN()) % 8) - 2;
        if (is_queue_slot(c, idx))
            return;   /* the queue's: README.md, "Limits of the API" */
        rc = stvm_external_unregister(c->vm, idx);
        want = idx >= 1 && (idx == ext_index[0] || idx == ext_index[1]) ? 0 : STVM_EINVAL;
        if (rc == STVM_OK)
            for (int i = 0; i < 2; i++)
                if (ext_index[i] == idx)
                    ext_index[i] = 0;
        break;
    }
    case 2: {
        what = "signal_external";
        int idx = (k & 0x40) ? ext_index[e] : (int)(fz_u8(IN()) % 8) - 2;
        int n = (int)(fz_u8(IN()) % 4) + 1;
        if (is_queue_slot(c, idx))
            return;   /* a signal without an item: README.md, "Limits of the API" */
        want = idx < 1 || idx > size ? STVM_EINVAL : 0;
        rc = 0;
        for (int i = 0; i < n && !rc; i++) {
            rc = stvm_external_signal((k & 0x20) ? NULL : c->vm, idx);
            ext_requests += rc == STVM_OK;
        }
        if (k & 0x20)
            want = STVM_EINVAL;
        if (!rc) {   /* requests change nothing until the next scheduling point */
            s = NULL;
            if (in_proc(c) && ext_index[e] == idx && idx) {
                /* The checkpoint may run other processes that make and answer requests
                 * of their own before this one resumes: the bound is what the table
                 * signalled meanwhile, and over the whole run what was requested. */
                int64_t before = stvm_semaphore_excess(c->vm, ext_sem[e]);
                uint64_t signalled = fz_external_signals(c);
                FZ_CHECK(stvm_checkpoint(c->vm) >= 0, "checkpoint");
                uint64_t now = fz_external_signals(c);
                /* a process woken by the checkpoint may have taken some (try_wait) */
                FZ_CHECK(stvm_semaphore_excess(c->vm, ext_sem[e]) - before <=
                             (int64_t)(now - signalled),
                         "excess signals beyond what the table signalled");
                FZ_CHECK(now <= ext_requests, "more signals than requests");
            }
        }
        break;
    }
    case 3: {
        what = "try_wait on an external semaphore";
        if (!in_proc(c))
            return;
        int64_t before = stvm_semaphore_excess(c->vm, ext_sem[e]);
        rc = stvm_semaphore_try_wait(c->vm, ext_sem[e]);
        want = before > 0 ? 0 : STVM_EAGAIN;
        break;
    }
    default: {
        what = "timed wait on an external semaphore";
        if (!in_proc(c))
            return;
        rc = stvm_semaphore_wait_timeout_us(c->vm, ext_sem[e], (int64_t)(fz_u8(IN()) % 50));
        FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT || rc == STVM_ESTATE || rc == STVM_EINTR || rc == STVM_ERANGE,
                 "%s answered %s", what, stvm_err_name(rc));
        return;
    }
    }
    FZ_CHECK(rc == want, "%s answered %s, expected %s", what, stvm_err_name(rc),
             stvm_err_name(want));
    if (rc && s)
        unchanged(c, s, what);
}

/* ---- shared queues ------------------------------------------------------------------- */

/* Items are numbers, never pointers the library could follow; 0 is NULL. */
static void *new_item(fz_ctx *c, unsigned k)
{
    if ((k & 0x0C) == 0x0C)
        return NULL;
    return (void *)((++c->item_seq << 4) | 8);
}

/* A queue argument: the pool's, NULL, a foreign VM's, a handle of another kind, stray
 * memory. *qi is the pool index or -1. */
static stvm_queue *pick_queue(fz_ctx *c, unsigned s, int *qi)
{
    *qi = -1;
    if (s < 200 && c->nqueue)
        for (int k = 0; k < c->nqueue; k++) {
            int i = (int)((s + (unsigned)k) % (unsigned)c->nqueue);
            if (c->queue[i].q) {
                *qi = i;
                return c->queue[i].q;
            }
        }
    if (s < 215) return NULL;
    if (s < 230) return fz_foreigners[s & 1].queue;
    if (s < 236 && c->sem[0]) return (stvm_queue *)c->sem[0];
    if (s < 242 && c->mut[0]) return (stvm_queue *)c->mut[0];
    if (s < 248 && c->ndly && c->dly[0].d) return (stvm_queue *)c->dly[0].d;
    return (stvm_queue *)fz_stray;
}

static int q_find(const fz_queue *m, uintptr_t item)
{
    for (int i = 0; i < m->n; i++)
        if (m->items[i] == item)
            return i;
    return -1;
}

static void q_remove_at(fz_queue *m, int i)
{
    if (i >= m->n - m->npend)
        m->npend--;
    memmove(m->items + i, m->items + i + 1, (size_t)(m->n - i - 1) * sizeof m->items[0]);
    m->n--;
}

/* An item a call took (or flushed): it must be in the model, or be the item of a put
 * still in flight (which then must not add it). */
static void q_took(fz_queue *m, uintptr_t item, const char *what)
{
    int i = q_find(m, item);
    if (i >= 0) {
        q_remove_at(m, i);
        return;
    }
    for (int t = 0; t < m->ntent; t++)
        if (m->tent[t].item == item && !m->tent[t].taken) {
            m->tent[t].taken = true;
            return;
        }
    fz_fail(__FILE__, __LINE__, "%s answered an item (%#lx) never put or already taken", what,
            (unsigned long)item);
}

/* The model holds it after a put from the VM's thread: after the other VM-thread items,
 * before those of other threads. */
static void q_put_green(fz_queue *m, uintptr_t item)
{
    int at = m->n - m->npend;
    memmove(m->items + at + 1, m->items + at, (size_t)m->npend * sizeof m->items[0]);
    m->items[at] = item;
    m->n++;
}

static int q_tent_add(fz_queue *m, uintptr_t item)
{
    m->tent[m->ntent].item = item;
    m->tent[m->ntent].taken = false;
    return m->ntent++;
}

/* The put in flight as tent[t] returned: was its item taken meanwhile? (entries are
 * removed by item; puts of NULL items may share one, which does not matter) */
static bool q_tent_done(fz_queue *m, uintptr_t item)
{
    for (int t = m->ntent; t-- > 0;)
        if (m->tent[t].item == item) {
            bool taken = m->tent[t].taken;
            m->tent[t] = m->tent[--m->ntent];
            return taken;
        }
    FZ_CHECK(0, "a put in flight lost its record");
    return false;
}

/* What a flush or free handed to q_collect: on the caller's stack, since a flush may
 * switch to a process that flushes too. */
typedef struct q_seen_t {
    uintptr_t got[FZ_QITEMS + 8];
    int n;
    bool overflow;
} q_seen_t;

static void q_collect(void *item, void *arg)
{
    q_seen_t *seen = arg;
    if (seen->n < (int)(sizeof seen->got / sizeof seen->got[0]))
        seen->got[seen->n++] = (uintptr_t)item;
    else
        seen->overflow = true;
}

/* A process was terminated: one inside a call on a queue may have died holding an item
 * (taken by the library, not yet seen by the model). */
/* Defect 5 (fixed): a call of a process that made a process of higher priority ready
 * without switching to it (stvm_queue_flush handing room to waiting writers; the
 * external table's drain in a queue call) left the VM in a state its invariants reject.
 * Every queue and Delay object call from a process must keep them. */
static void pending_preemption(fz_ctx *c, const char *what)
{
    char why[200];
    if (in_proc(c))
        FZ_CHECK(stvm_vm_check_invariants(c->vm, why, sizeof why) == STVM_OK,
                 "%s broke an invariant: %s", what, why);
}

static void queues_maybe_lossy(fz_ctx *c)
{
    for (int i = 0; i < c->nqueue; i++)
        if (c->queue[i].inflight)
            c->queue[i].lossy = true;
}

static uint64_t switches(fz_ctx *c)
{
    stvm_stats st;
    stvm_vm_get_stats(c->vm, &st);
    return st.context_switches;
}

static void op_queue(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    int qi;
    stvm_queue *q = pick_queue(c, fz_u8(IN()), &qi);
    fz_queue *m = qi >= 0 ? &c->queue[qi] : NULL;
    uint64_t serial = m ? m->serial : 0;   /* the queue this call is on */
    bool valid = m != NULL, proc = in_proc(c);
    /* Asked first: from a process it drains the external table (which changes the VM,
     * and may let a woken reader run), so that the calls below find nothing more to
     * drain. */
    if (valid)
        m->inflight++;
    int64_t size = valid ? stvm_queue_size(c->vm, q) : 0;
    if (valid && m->serial != serial)
        return;   /* freed by a process that ran meanwhile */
    if (valid)
        m->inflight--;
    /* exact: no other call on it in flight, none died inside one */
    if (valid && !m->n && !m->ntent)
        m->unordered = false;
    bool exact = valid && !m->inflight && !m->lossy && !m->unordered;
    bool full = valid && m->capacity && (size_t)m->n >= m->capacity;
    fz_snap *s = snap(c);
    uint64_t sw0 = switches(c);   /* for the calls that never switch */
    FZ_TRACE("  queue case %u on %d: exact %d, model %d items (%d pending), size %lld\n", k % 14,
             qi, exact, m ? m->n : 0, m ? m->npend : 0, (long long)size);
    int rc, want;
    const char *what;
    void *item = (void *)SENTINEL;
    bool closed = valid && m->closed;
    /* Nothing left, for good: a take answers EEOF. Exact only when the VM ended the
     * close and no call is in flight (no item promised to a woken reader). */
    bool at_end = closed && m->ended && exact && !m->n;
    switch (k % 14) {
    case 0: {
        what = "queue_new";
        static const size_t caps[] = {0, 1, 2, 3, 0, 5, (size_t)INT64_MAX,
                                      (size_t)INT64_MAX + 1};
        size_t cap = caps[(k >> 4) & 7];
        stvm_queue *n = (stvm_queue *)fz_stray;
        rc = stvm_queue_new((k & 0x80) && (k & 0x08) ? NULL : c->vm, cap,
                            (k & 0x80) && !(k & 0x08) ? NULL : &n);
        want = (k & 0x80) || cap > (size_t)INT64_MAX ? STVM_EINVAL : 0;
        if (rc == STVM_OK) {
            int at = 0;
            while (at < c->nqueue && c->queue[at].q)
                at++;
            if (at < FZ_MAXQ) {
                fz_queue *nm = &c->queue[at];
                c->nqueue += at == c->nqueue;
                memset(nm, 0, sizeof *nm);
                nm->q = n;
                nm->serial = ++c->queues_made;
                nm->capacity = cap;
            } else {
                FZ_CHECK(stvm_queue_free(c->vm, n, NULL, NULL) == STVM_OK, "free of a new queue");
            }
        } else {
            FZ_CHECK(n == (stvm_queue *)fz_stray, "queue_new failed but wrote");
        }
        break;
    }
    case 1: {
        what = "queue_free";
        q_seen_t q_seen = {0};
        rc = stvm_queue_free(c->vm, q, (k & 0x80) && exact ? NULL : q_collect, &q_seen);
        FZ_CHECK(switches(c) == sw0, "queue_free switched");
        want = !valid ? STVM_EINVAL : exact ? 0 : rc;
        if (valid)
            FZ_CHECK(rc == STVM_OK || rc == STVM_EINUSE, "queue_free answered %s",
                     stvm_err_name(rc));
        if (rc == STVM_OK) {
            FZ_CHECK(!q_seen.overflow, "queue_free handed more items than were put");
            if (exact && !(k & 0x80)) {
                FZ_CHECK(q_seen.n == m->n, "queue_free handed %d items, the model holds %d",
                         q_seen.n, m->n);
                for (int i = 0; i < m->n; i++)
                    FZ_CHECK(q_seen.got[i] == m->items[i], "queue_free: item %d out of order", i);
            } else {
                for (int i = 0; i < q_seen.n; i++)
                    q_took(m, q_seen.got[i], "queue_free");
            }
            m->q = NULL;
        }
        break;
    }
    case 2:
    case 3: {
        bool timed = (k % 14) == 3;
        what = timed ? "queue_put_timeout_ms" : "queue_put";
        if (valid && m->n + m->ntent >= FZ_QITEMS - 1)
            return;
        int64_t ms = timed ? pick_duration(c) : 0;
        uintptr_t it = (uintptr_t)new_item(c, k);
        if (timed)
            want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC : duration_rule(c, ms, true);
        else
            want = !valid ? STVM_EINVAL : 0;
        if (!want && closed)
            want = STVM_ECLOSED;   /* every put after the close, the item not taken */
        bool may_wait = !want && proc && (!exact || full);
        if (!want && !proc && !exact)
            may_wait = true;   /* the host: EAGAIN or not, it cannot tell */
        if (!want && !proc && exact && full)
            want = STVM_EAGAIN;   /* the host cannot wait: a try */
        if (!want && timed && ms == 0 && exact && full)
            want = STVM_ETIMEDOUT;
        if (may_wait && timed && too_long(ms, true))
            return;
        if (want == STVM_ETIMEDOUT || want == STVM_EAGAIN || want == STVM_ECLOSED)
            may_wait = false;
        uint64_t sw = switches(c);
        uint64_t puts = valid ? m->puts : 0;
        if (valid) {
            q_tent_add(m, it);
            m->inflight++;
        }
        rc = timed ? stvm_queue_put_timeout_ms(c->vm, q, (void *)it, ms)
                   : stvm_queue_put(c->vm, q, (void *)it);
        if (valid && m->serial != serial)
            return;   /* freed while this put was switched out */
        if (valid) {
            m->inflight--;
            bool taken = q_tent_done(m, it);
            FZ_CHECK(rc == STVM_OK || !taken, "%s failed (%s) but its item was taken", what,
                     stvm_err_name(rc));
            if (rc == STVM_OK && !taken) {
                /* A put that switched after it put its item may have been overtaken
                 * by another put the model saw first: the order is then unknown until
                 * the queue is empty. */
                if (switches(c) != sw && m->puts != puts)
                    m->unordered = true;
                q_put_green(m, it);
            }
            m->puts++;
        }
        if (may_wait) {
            if (!proc)
                FZ_CHECK(rc == STVM_OK || (rc == STVM_EAGAIN && m->capacity),
                         "%s from the host answered %s", what, stvm_err_name(rc));
            else   /* ECLOSED: a process closed the queue while this one waited for room */
                FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT || rc == STVM_ESTATE ||
                             rc == STVM_EINTR || (rc == STVM_ECLOSED && m->closed),
                         "%s answered %s", what, stvm_err_name(rc));
            FZ_CHECK(rc != STVM_ETIMEDOUT || timed, "%s (untimed) answered ETIMEDOUT", what);
            if (rc == STVM_EAGAIN || (rc == STVM_ETIMEDOUT && ms == 0))
                unchanged(c, s, what);
            return;
        }
        break;
    }
    case 4:
    case 5: {
        bool timed = (k % 14) == 5;
        what = timed ? "queue_take_timeout_ms" : "queue_take";
        bool null_item = (k & 0xC0) == 0xC0;
        int64_t ms = timed ? pick_duration(c) : 0;
        want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC : null_item ? STVM_EINVAL : 0;
        if (!want && timed)
            want = duration_rule(c, ms, true);
        /* Not a defect (it was finding 1 of the hour-long runs): on a queue open to other
         * threads a take looks first, draining the external table, and a process of
         * higher priority that this makes ready runs before the take tries (core.h's
         * rule for every queue call). The caller, preempted, goes behind its peers
         * (preemption_yields), so another process of its priority, in a call on this
         * queue that had switched away, may run and take the item size counted: the
         * take then waits. So such a take may wait, but only if it switched. */
        bool may_lose = !want && size > 0 && m->external;
        if (!want && !timed && m->external && (size <= 0 || !exact) && !at_end)
            return;   /* it would keep stvm_run waiting for other threads forever */
        bool may_wait = !want && size <= 0;
        if (!want && at_end) {
            want = STVM_EEOF;   /* the end of the queue, timed or not, at once */
            may_wait = false;
        }
        if (!want && timed && ms == 0 && size <= 0 && !closed) {
            want = STVM_ETIMEDOUT;   /* it only tries */
            may_wait = false;
        }
        if ((may_wait || may_lose) && timed && too_long(ms, true))
            return;
        if (valid)
            m->inflight++;
        uint64_t sw_take = switches(c);
        rc = timed ? stvm_queue_take_timeout_ms(c->vm, q, ms, null_item ? NULL : &item)
                   : stvm_queue_take(c->vm, q, null_item ? NULL : &item);
        if (valid && m->serial != serial)
            return;   /* freed by a process that ran while this call was switched out */
        if (valid)
            m->inflight--;
        if (may_lose && switches(c) != sw_take)
            may_wait = true;
        if (rc == STVM_OK) {
            FZ_CHECK(!want, "%s answered OK, expected %s", what, stvm_err_name(want));
            if (exact && !may_wait)
                FZ_CHECK(m->n && (uintptr_t)item == m->items[0],
                         "%s: not the first item (%#lx, the model's %#lx)", what,
                         (unsigned long)(uintptr_t)item, m->n ? (unsigned long)m->items[0] : 0ul);
            q_took(m, (uintptr_t)item, what);
            return;
        }
        FZ_CHECK(item == (void *)SENTINEL, "%s failed but wrote the item", what);
        if (may_wait) {   /* EEOF: the queue was closed before or while it waited */
            FZ_CHECK(rc == STVM_ETIMEDOUT || rc == STVM_ESTATE || rc == STVM_EINTR ||
                         (rc == STVM_EEOF && m->closed),
                     "%s answered %s", what, stvm_err_name(rc));
            FZ_CHECK(rc != STVM_ETIMEDOUT || timed, "%s (untimed) answered ETIMEDOUT", what);
            if (rc == STVM_EEOF)
                m->ended = true;
            return;
        }
        break;
    }
    case 6: {
        what = "queue_try_take";
        bool null_item = (k & 0xC0) == 0xC0;
        want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC : null_item ? STVM_EINVAL : 0;
        if (!want && exact)
            want = m->n ? 0 : at_end ? STVM_EEOF : closed && !m->ended ? MAY_WAIT : STVM_EAGAIN;
        if (valid)
            m->inflight++;   /* a writer it gives room to may run (it was defect 4) */
        rc = stvm_queue_try_take(c->vm, q, null_item ? NULL : &item);
        if (valid && m->serial != serial)
            return;   /* freed by a process that ran while this call was switched out */
        if (valid)
            m->inflight--;
        if ((!want && !exact) || want == MAY_WAIT) {
            FZ_CHECK(rc == STVM_OK || rc == STVM_EAGAIN || (rc == STVM_EEOF && closed),
                     "%s answered %s", what, stvm_err_name(rc));
            want = rc;
        }
        if (rc == STVM_OK) {
            if (exact)
                FZ_CHECK((uintptr_t)item == m->items[0], "%s: not the first item", what);
            q_took(m, (uintptr_t)item, what);
        } else {
            FZ_CHECK(item == (void *)SENTINEL, "%s failed but wrote the item", what);
        }
        break;
    }
    case 7: {
        what = "queue_peek";
        bool null_item = (k & 0xC0) == 0xC0;
        want = !valid || null_item ? STVM_EINVAL : size > 0 ? 0 : at_end ? STVM_EEOF
             : closed ? MAY_WAIT : STVM_EAGAIN;
        if (valid)
            m->inflight++;   /* it may switch (the drain of other threads' items) */
        rc = stvm_queue_peek(c->vm, q, null_item ? NULL : &item);
        if (valid && m->serial != serial)
            return;   /* freed by a process that ran while this call was switched out */
        if (valid)
            m->inflight--;
        if (switches(c) != sw0) {   /* only to a reader woken by what threads put */
            FZ_CHECK(valid && m->external, "queue_peek switched");
            want = rc;
            exact = false;
            s = NULL;   /* the woken reader changed the VM, whatever peek answers */
        }
        if (want == MAY_WAIT) {   /* closed: the end, or items promised to woken readers */
            FZ_CHECK(rc == STVM_EEOF || rc == STVM_EAGAIN, "%s answered %s", what,
                     stvm_err_name(rc));
            want = rc;
        }
        if (rc == STVM_OK) {
            if (exact)
                FZ_CHECK((uintptr_t)item == m->items[0], "%s: not the first item", what);
            else
                FZ_CHECK(q_find(m, (uintptr_t)item) >= 0 || m->ntent, "%s: an item not in it", what);
        }
        break;
    }
    case 8: {
        what = "queue_size";
        if (valid)
            m->inflight++;   /* as peek */
        int64_t sz = stvm_queue_size((k & 0x80) ? NULL : c->vm, q);
        if (valid && m->serial != serial)
            return;   /* freed by a process that ran while this call was switched out */
        if (valid)
            m->inflight--;
        rc = sz < 0 ? (int)sz : 0;
        if (switches(c) != sw0) {   /* as peek */
            FZ_CHECK(valid && m->external, "queue_size switched");
            exact = false;
        }
        want = !valid || (k & 0x80) ? STVM_EINVAL : 0;
        if (!rc && exact) {
            if (proc)
                FZ_CHECK(sz == m->n, "queue_size %lld, the model holds %d", (long long)sz, m->n);
            else   /* from the host, other threads' items count once the VM saw them */
                FZ_CHECK(sz <= m->n && sz >= m->n - m->npend,
                         "queue_size %lld, the model holds %d (%d from other threads)",
                         (long long)sz, m->n, m->npend);
        }
        if (!rc && valid && m->capacity && !m->lossy)
            FZ_CHECK((uint64_t)sz <= m->capacity, "queue_size %lld beyond its capacity",
                     (long long)sz);
        break;
    }
    case 9: {
        what = "queue_flush";
        bool nofn = (k & 0x80) && exact;
        int64_t before = size;
        q_seen_t q_seen = {0};
        if (valid)
            m->inflight++;   /* a writer it gives room to runs once all are flushed */
        uint64_t sw_flush = switches(c);
        int64_t n = stvm_queue_flush(c->vm, q, nofn ? NULL : q_collect, &q_seen);
        if (valid && m->serial != serial)
            return;   /* freed by a process that ran while this call was switched out */
        if (valid)
            m->inflight--;
        rc = n < 0 ? (int)n : 0;
        want = valid ? 0 : STVM_EINVAL;
        if (!rc) {
            FZ_CHECK(!q_seen.overflow, "queue_flush handed more items than were put");
            FZ_CHECK(nofn || q_seen.n == n, "queue_flush answered %lld, handed %d", (long long)n,
                     q_seen.n);
            /* Not a defect (finding 2 of the long runs, as finding 1 for a take): on a
             * queue open to other threads the flush looks first, and a process that this
             * lets run may take items, or put some, before it removes what is left. */
            bool overtaken = valid && m->external && switches(c) != sw_flush;
            FZ_CHECK(n == before || overtaken, "queue_flush removed %lld, the size was %lld",
                     (long long)n, (long long)before);
            if (exact) {
                FZ_CHECK(n <= m->n, "queue_flush removed %lld of %d", (long long)n, m->n);
                for (int i = 0; i < n && !nofn; i++)
                    FZ_CHECK(q_seen.got[i] == m->items[i], "queue_flush: item %d out of order", i);
                for (int i = 0; i < n; i++)
                    q_remove_at(m, 0);
            } else {
                for (int i = 0; i < q_seen.n; i++)
                    q_took(m, q_seen.got[i], what);
            }
            if (n == 0 && switches(c) == sw0)
                unchanged(c, s, "queue_flush of nothing");
            else if (n == 0)   /* only to a reader woken by what threads put */
                FZ_CHECK(valid && m->external, "queue_flush of nothing switched");
            return;
        }
        break;
    }
    case 10: {
        what = "queue_open_external";
        if (valid && (m->inflight || m->lossy))
            return;   /* a reader waiting untimed would keep stvm_run waiting for threads */
        int used = (ext_index[0] > 0) + (ext_index[1] > 0) + open_queue_slots(c);
        want = !valid ? STVM_EINVAL : m->external ? STVM_ESTATE : closed ? STVM_ECLOSED
             : used >= c->cfg.external_table_size ? STVM_EFULL : 0;
        rc = stvm_queue_open_external(c->vm, q);
        if (rc == STVM_OK)
            m->external = true;
        break;
    }
    case 11: {
        what = "queue_close";
        bool null_vm = (k & 0x80) && !(k & 0x40);
        want = !valid || null_vm ? STVM_EINVAL : closed ? STVM_ECLOSED : 0;
        if (valid) {
            m->inflight++;   /* a released process of higher priority runs at once */
            if (!want)       /* and finds it closed */
                m->closed = m->ended = true;
        }
        rc = stvm_queue_close(null_vm ? NULL : c->vm, q);
        if (valid && m->serial != serial)
            return;   /* freed by a process that ran while this call was switched out */
        if (valid)
            m->inflight--;
        if (valid && !closed && rc != STVM_OK)
            m->closed = m->ended = false;
        if (rc == STVM_OK && switches(c) != sw0)
            pending_preemption(c, what);
        break;
    }
    case 12: {
        what = "queue_close_external";
        stvm_queue *target = (k & 0x80) && !(k & 0x40) ? NULL : q;
        bool ok_target = target && valid && m->external;
        want = !ok_target ? STVM_EINVAL : closed ? STVM_ECLOSED : 0;
        rc = stvm_queue_close_external(target);
        if (rc == STVM_OK) {
            m->closed = true;   /* ended when the VM looks at its external signals */
            ext_requests++;
            s = NULL;   /* a request to the table: seen at the next scheduling point */
        }
        break;
    }
    default: {
        what = "queue_put_external";
        if (valid && m->n + m->ntent >= FZ_QITEMS - 1)
            return;
        static const int64_t touts[] = {0, -1, 5, -2, INT64_MIN, 0, -1, 1000};
        int64_t t = touts[(k >> 4) & 7];
        /* a bounded queue: only tries (a wait would be on the wall clock, for room no
         * other thread can make) */
        if (valid && m->capacity && t != 0 && t >= -1 && !(exact && !full))
            t = 0;
        uintptr_t it = (uintptr_t)new_item(c, k);
        stvm_queue *target = (k & 0x80) && !(k & 0x40) ? NULL : q;
        bool ok_target = target && valid && m->external;
        want = !ok_target || t < -1 ? STVM_EINVAL : closed ? STVM_ECLOSED
             : exact && full ? STVM_ETIMEDOUT : 0;   /* a time limit of 0 passed */
        rc = stvm_queue_put_external(target, (void *)it, t);
        if (ok_target && t >= -1 && !closed && !exact && m->capacity) {
            FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT, "%s answered %s", what,
                     stvm_err_name(rc));
            want = rc;
        }
        if (rc == STVM_OK) {
            m->items[m->n++] = it;
            m->npend++;
            ext_requests++;   /* one signal of the table per item */
            s = NULL;   /* a request to the table: seen at the next scheduling point */
        }
        break;
    }
    }
    if (rc == STVM_EEOF && valid)
        m->ended = true;   /* only a queue at its end answers it */
    FZ_TRACE("  %s (%s queue %d) -> %s\n", what, valid ? "pool" : "bad", qi, stvm_err_name(rc));
    FZ_CHECK(rc == want, "%s of a %s queue answered %s, expected %s", what,
             valid ? "pool" : "bad", stvm_err_name(rc), stvm_err_name(want));
    /* A call on a queue open to other threads counts what they put first: a reader that
     * wakes and is higher than the caller runs, whatever the call then answers. */
    bool drained = valid && m->external && switches(c) != sw0;
    if (rc && s && !drained)
        unchanged(c, s, what);
}

/* ---- Delay objects ------------------------------------------------------------------- */

static stvm_delay *pick_dly(fz_ctx *c, unsigned s, int *di)
{
    *di = -1;
    if (s < 200 && c->ndly)
        for (int k = 0; k < c->ndly; k++) {
            int i = (int)((s + (unsigned)k) % (unsigned)c->ndly);
            if (c->dly[i].d) {
                *di = i;
                return c->dly[i].d;
            }
        }
    if (s < 215) return NULL;
    if (s < 230) return fz_foreigners[s & 1].delay;
    if (s < 236 && c->sem[0]) return (stvm_delay *)c->sem[0];
    if (s < 242 && c->nqueue && c->queue[0].q) return (stvm_delay *)c->queue[0].q;
    if (s < 248 && c->nproc && c->proc[0]) return (stvm_delay *)c->proc[0];
    return (stvm_delay *)fz_stray;
}

/* A free place in the Delay pool, or -1. */
static int dly_slot(const fz_ctx *c)
{
    for (int i = 0; i < FZ_MAXDLY; i++)
        if (i >= c->ndly || !c->dly[i].d)
            return i;
    return -1;
}

static void dly_add(fz_ctx *c, stvm_delay *d, int64_t dur, bool ms, bool given)
{
    int at = dly_slot(c);
    fz_dly *r = &c->dly[at];
    c->ndly += at == c->ndly;
    memset(r, 0, sizeof *r);
    r->d = d;
    r->dur = dur;
    r->ms = ms;
    r->given_sem = given;
}

static void op_delay_obj(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    int di;
    stvm_delay *d = pick_dly(c, fz_u8(IN()), &di);
    fz_dly *r = di >= 0 ? &c->dly[di] : NULL;
    bool valid = r != NULL, proc = in_proc(c);
    int sched = valid ? stvm_delay_being_waited_on(c->vm, d) : 0;
    fz_snap *s = snap(c);
    int rc, want;
    const char *what;
    switch (k % 9) {
    case 0: {
        bool ms = k & 0x10;
        what = ms ? "delay_new_ms" : "delay_new_us";
        int64_t dur = pick_duration(c);
        stvm_delay *n = (stvm_delay *)fz_stray;
        bool null_vm = (k & 0xC0) == 0xC0, null_out = (k & 0xC0) == 0x80;
        stvm_vm *vm = null_vm ? NULL : c->vm;
        rc = ms ? stvm_delay_new_ms(vm, dur, null_out ? NULL : &n)
                : stvm_delay_new_us(vm, dur, null_out ? NULL : &n);
        want = null_vm || null_out || dur < 0 ? STVM_EINVAL : 0;   /* any length, as Pharo */
        if (rc == STVM_OK) {
            FZ_CHECK(stvm_delay_being_waited_on(c->vm, n) == 0 &&
                         stvm_delay_is_expired(c->vm, n) == 0,
                     "a new Delay is scheduled or expired");
            if (dly_slot(c) >= 0)
                dly_add(c, n, dur, ms, false);
            else
                FZ_CHECK(stvm_delay_free(c->vm, n) == STVM_OK, "free of a new Delay");
        } else {
            FZ_CHECK(n == (stvm_delay *)fz_stray, "%s failed but wrote", what);
        }
        break;
    }
    case 1: {
        what = "delay_free";
        stvm_semaphore *ds = valid ? stvm_delay_semaphore(d) : NULL;
        rc = stvm_delay_free(c->vm, d);
        want = !valid ? STVM_EINVAL : sched ? STVM_EINUSE
             : (!r->users && !r->sem_in_pool) ? 0 : rc;
        if (valid)
            FZ_CHECK(rc == STVM_OK || rc == STVM_EINUSE, "delay_free answered %s",
                     stvm_err_name(rc));
        if (rc == STVM_OK) {
            r->d = NULL;
            if (!r->given_sem)   /* its own semaphore went with it */
                for (int i = 0; i < c->nsem; i++)
                    if (c->sem[i] == ds)
                        c->sem[i] = NULL;
        }
        break;
    }
    case 2:
    case 3: {
        bool wait = (k % 9) == 2;
        what = wait ? "delay_wait" : "delay_schedule";
        want = !valid ? STVM_EINVAL : duration_rule(c, r->dur, r->ms);
        if (want == STVM_EINVAL && valid)
            want = 0;   /* never negative: made so */
        if (!want && sched)
            want = STVM_ESTATE;
        if (!want && too_long(r->dur, r->ms))
            return;
        if (want) {
            rc = wait ? stvm_delay_wait(c->vm, d) : stvm_delay_schedule(c->vm, d);
            break;
        }
        stvm_semaphore *sem = stvm_delay_semaphore(d);
        bool private = !r->given_sem && !r->sem_in_pool && stvm_semaphore_excess(c->vm, sem) == 0;
        bool fresh = c->vm->delay.state == NULL;   /* starting the scheduler lets others run */
        uint64_t t0 = stvm_vm_now_us(c->vm), sw = switches(c);
        r->users++;
        rc = wait ? stvm_delay_wait(c->vm, d) : stvm_delay_schedule(c->vm, d);
        r = &c->dly[di];
        r->users--;
        if (wait) {
            FZ_CHECK(rc == STVM_OK || rc == STVM_ESTATE || rc == STVM_EINTR,
                     "delay_wait answered %s", stvm_err_name(rc));
            /* still private: another driver may have put its semaphore in the pool
             * while it waited, and signalled it */
            if (rc == STVM_OK && private && !r->sem_in_pool)
                not_early(c, "delay_wait", t0, r->dur, r->ms);
        } else {
            FZ_CHECK(rc == STVM_OK || (rc == STVM_ESTATE && (fresh || switches(c) != sw)),
                     "delay_schedule answered %s", stvm_err_name(rc));
            if (rc == STVM_OK && r->dur > 0 && stvm_vm_now_us(c->vm) == t0)
                FZ_CHECK(stvm_delay_being_waited_on(c->vm, d) == 1 || switches(c) != sw,
                         "scheduled but not being waited on");
        }
        return;
    }
    case 4:
        what = "delay_unschedule";
        want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC : 0;
        rc = stvm_delay_unschedule((k & 0x80) ? NULL : c->vm, d);
        if (k & 0x80)
            want = STVM_EINVAL;
        if (rc == STVM_OK)
            FZ_CHECK(stvm_delay_being_waited_on(c->vm, d) == 0, "unscheduled but waited on");
        if (rc == STVM_OK && !sched)
            unchanged(c, s, "unscheduling a Delay that is not scheduled");
        break;
    case 5: {
        what = "delay_is_expired";
        rc = stvm_delay_is_expired((k & 0x80) ? NULL : c->vm, d);
        int w = stvm_delay_being_waited_on((k & 0x80) ? NULL : c->vm, d);
        want = !valid || (k & 0x80) ? STVM_EINVAL : 0;
        if (!want) {
            FZ_CHECK(rc == (stvm_semaphore_excess(c->vm, stvm_delay_semaphore(d)) > 0),
                     "is_expired answered %d", rc);
            FZ_CHECK(w == sched && (w == 0 || w == 1), "being_waited_on answered %d", w);
            rc = 0;
        } else {
            FZ_CHECK(w == STVM_EINVAL, "being_waited_on of a bad Delay answered %d", w);
        }
        break;
    }
    case 6: {
        what = "delay_to_go";
        int64_t us = -77, msl = -77;
        bool null_out = (k & 0xC0) == 0xC0;
        rc = stvm_delay_us_to_go(c->vm, d, null_out ? NULL : &us);
        int rc2 = stvm_delay_ms_to_go(c->vm, d, null_out ? NULL : &msl);
        want = !valid || null_out ? STVM_EINVAL : 0;
        FZ_CHECK(rc == rc2, "us_to_go and ms_to_go disagree");
        if (!rc) {
            int64_t dur_us = us_of(r->dur, r->ms);
            int64_t slack = 0;
            if (c->cfg.delay_clock == STVM_DELAY_CLOCK_MS) {   /* whole ticks, 1 more */
                dur_us = sat_add(dur_us, 999) / 1000 * 1000;
                slack = 1000;
            }
            FZ_CHECK(sched || us == 0, "to_go %lld of a Delay not scheduled", (long long)us);
            FZ_CHECK(us >= 0 && us <= sat_add(dur_us, slack), "us_to_go %lld of a Delay of %lld us",
                     (long long)us, (long long)dur_us);
            FZ_CHECK(msl == (us + 999) / 1000, "ms_to_go %lld, us_to_go %lld", (long long)msl,
                     (long long)us);
        } else {
            FZ_CHECK(us == -77 && msl == -77, "to_go failed but wrote");
        }
        break;
    }
    case 7: {
        what = "delay_semaphore";
        stvm_semaphore *ds = stvm_delay_semaphore(d);
        bool kind = valid || d == fz_foreigners[0].delay || d == fz_foreigners[1].delay;
        FZ_CHECK((ds != NULL) == kind, "delay_semaphore of a %s answered %p",
                 kind ? "Delay" : "bad handle", (void *)ds);
        rc = want = 0;
        if (valid && (k & 0x40) && !r->given_sem && !r->sem_in_pool && c->nsem < FZ_MAXSEM) {
            fz_add_sem(c, ds);   /* waits, signals, timed waits and frees on it */
            r->sem_in_pool = true;
        }
        break;
    }
    default: {
        what = "timeout_semaphore_ms";
        stvm_semaphore *sem = pick_sem(c, fz_u8(IN()));
        int64_t ms = pick_duration(c);
        bool null_out = (k & 0xC0) == 0xC0;
        stvm_delay *n = (stvm_delay *)fz_stray;
        want = !is_pool_sem(c, sem) || null_out ? STVM_EINVAL : duration_rule(c, ms, true);
        if (!want && too_long(ms, true))
            return;
        rc = stvm_delay_timeout_semaphore_ms(c->vm, sem, ms, null_out ? NULL : &n);
        if (rc == STVM_OK) {
            FZ_CHECK(stvm_delay_semaphore(n) == sem, "a timeout's semaphore is not the one given");
            if (dly_slot(c) >= 0) {
                dly_add(c, n, ms, true, true);
            } else {
                FZ_CHECK(stvm_delay_unschedule(c->vm, n) == STVM_OK &&
                             stvm_delay_free(c->vm, n) == STVM_OK,
                         "unschedule and free of a new timeout");
            }
            return;   /* the timing process ran */
        }
        FZ_CHECK(n == (stvm_delay *)fz_stray, "%s failed but wrote", what);
        break;
    }
    }
    FZ_TRACE("  %s (%s Delay %d) -> %s\n", what, valid ? "pool" : "bad", di, stvm_err_name(rc));
    FZ_CHECK(rc == want, "%s of a %s Delay answered %s, expected %s", what,
             valid ? "pool" : "bad", stvm_err_name(rc), stvm_err_name(want));
    if (rc && s)
        unchanged(c, s, what);
}

/* ---- reports, cleanups, runs, odds and ends ------------------------------------------- */

static char report_buf[8192 + 64];

static void op_report(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    static const size_t sizes[] = {0, 1, 2, 10, 40, 64, 200, 8192};
    size_t size = sizes[k & 7];
    bool null_buf = (k & 8) != 0;
    memset(report_buf, 'Z', sizeof report_buf);
    fz_snap *s = snap(c);
    if (k & 0x10) {
        int rc = stvm_vm_check_invariants(c->vm, null_buf ? NULL : report_buf, null_buf ? 0 : size);
        FZ_CHECK(rc == STVM_OK, "invariants");
        for (size_t i = null_buf ? 0 : size; i < sizeof report_buf; i++)
            FZ_CHECK(report_buf[i] == 'Z', "check_invariants wrote past %zu", size);
        if (!null_buf && size)
            FZ_CHECK(report_buf[0] == 0, "check_invariants: text for a VM that is fine");
        FZ_CHECK(stvm_vm_check_invariants(NULL, NULL, 0) == STVM_EINVAL, "check_invariants(NULL)");
        return;
    }
    int full = stvm_vm_blocked_report(c->vm, NULL, 0);
    FZ_CHECK(full >= 0, "blocked_report(NULL, 0) answered %d", full);
    int rc = stvm_vm_blocked_report(c->vm, null_buf ? NULL : report_buf, size);
    if (null_buf && size) {
        FZ_CHECK(rc == STVM_EINVAL, "blocked_report(NULL, %zu) answered %d", size, rc);
        unchanged(c, s, "blocked_report");
        return;
    }
    FZ_CHECK(rc == full, "blocked_report answered %d, the full length is %d", rc, full);
    if (!null_buf) {
        for (size_t i = size; i < sizeof report_buf; i++)
            FZ_CHECK(report_buf[i] == 'Z', "blocked_report(size %zu) wrote at %zu", size, i);
        if (size) {
            size_t len = strnlen(report_buf, size);
            FZ_CHECK(len < size, "blocked_report not NUL-terminated in %zu", size);
            FZ_CHECK(len == ((size_t)full < size ? (size_t)full : size - 1),
                     "blocked_report wrote %zu of %d in %zu", len, full, size);
        }
    }
    FZ_CHECK(stvm_vm_blocked_report(NULL, NULL, 0) == STVM_EINVAL, "blocked_report(NULL vm)");
}

static void op_misc(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    bool proc = in_proc(c);
    fz_snap *s = snap(c);
    int rc = 0, want = 0;
    const char *what = "misc";
    switch (k % 9) {
    case 0:
        what = "yield";
        rc = stvm_yield((k & 0x80) ? NULL : c->vm);
        want = (k & 0x80) ? STVM_EINVAL : proc ? 0 : STVM_ENOTPROC;
        if (proc && !(k & 0x80))
            return;   /* other processes ran: nothing to compare */
        break;
    case 1:
        what = "checkpoint";
        rc = stvm_checkpoint(c->vm);
        if (proc) {
            FZ_CHECK(rc == 0 || rc == 1, "checkpoint answered %d", rc);
            return;
        }
        want = STVM_ENOTPROC;
        break;
    case 2:
        what = "ensure";
        rc = stvm_ensure(c->vm, (k & 0x80) ? NULL : cleanup, c);
        want = (k & 0x80) ? STVM_EINVAL : proc ? 0 : STVM_ENOTPROC;
        break;
    case 3:
        what = "ensure_pop";
        rc = stvm_ensure_pop(c->vm, (k & 0x80) != 0);
        if (proc) {
            FZ_CHECK(rc == STVM_OK || rc == STVM_ESTATE, "ensure_pop answered %s",
                     stvm_err_name(rc));
            want = rc;   /* ESTATE: no cleanup registered (checked unchanged) */
        } else {
            want = STVM_ENOTPROC;
        }
        break;
    case 4: {
        what = "stvm_run";
        if (!proc) {
            if (c->runs_left-- <= 0)
                return;
            rc = stvm_run(c->vm);
            FZ_CHECK(rc == STVM_OK || rc == STVM_EDEADLOCK, "stvm_run answered %s",
                     stvm_err_name(rc));
            return;
        }
        rc = stvm_run((k & 0x80) ? fz_foreigners[k & 1].vm : c->vm);
        want = STVM_EBUSY;
        break;
    }
    case 5: {
        what = "measure_raw_switch";
        double ns = -1;
        uint64_t n = (k & 0x80) ? 0 : (k & 0x40) ? 1 + fz_u8(IN()) % 64 : 1;
        bool null_out = (k & 0x20) != 0;
        rc = stvm_measure_raw_switch(n, null_out ? NULL : &ns);
        want = (n == 0 || null_out) ? STVM_EINVAL : proc ? STVM_EBUSY : 0;
        if (rc == STVM_OK) {
            FZ_CHECK(ns >= 0, "raw switch: %f ns", ns);
            s = NULL;   /* it ran on its own stacks, outside the VM */
        }
        break;
    }
    case 6: {
        what = "stats";
        stvm_stats st;
        rc = stvm_vm_get_stats((k & 0x80) ? NULL : c->vm, (k & 0x40) ? NULL : &st);
        want = (k & 0xC0) ? STVM_EINVAL : 0;
        if (!rc && (k & 0x20)) {
            ext_signals_reset = fz_external_signals(c);
            stvm_vm_reset_stats(c->vm);
            stvm_vm_reset_stats(NULL);
            stvm_stats st2;
            stvm_vm_get_stats(c->vm, &st2);
            FZ_CHECK(st2.objects_live == st.objects_live && st2.bytes_live == st.bytes_live &&
                         st2.processes_live == st.processes_live && st2.context_switches == 0,
                     "reset_stats");
            return;
        }
        break;
    }
    case 7:
        what = "clock";
        FZ_CHECK(stvm_vm_now_us(NULL) == 0 && stvm_vm_millisecond_clock(NULL) == 0, "clock(NULL)");
        FZ_CHECK(stvm_vm_millisecond_clock(c->vm) <= 0x1FFFFFFF, "ms clock beyond its mask");
        FZ_CHECK(stvm_vm_active_process(NULL) == NULL, "active_process(NULL)");
        FZ_CHECK(stvm_version() == STVM_VERSION_HEX &&
                     strcmp(stvm_version_string(), STVM_VERSION_STRING) == 0,
                 "version");
        FZ_CHECK(strcmp(stvm_context_backend(), "asm-x86_64") == 0 ||
                     strcmp(stvm_context_backend(), "asm-aarch64") == 0 ||
                     strcmp(stvm_context_backend(), "ucontext") == 0,
                 "backend");
        break;
    default: {
        what = "NULL handles";
        stvm_process_info info;
        FZ_CHECK(stvm_semaphore_signal(NULL, c->sem[0]) == STVM_EINVAL, "signal(NULL vm)");
        FZ_CHECK(stvm_semaphore_excess(NULL, NULL) == STVM_EINVAL, "excess(NULL)");
        FZ_CHECK(stvm_mutex_owner(c->vm, NULL) == NULL, "owner(NULL)");
        FZ_CHECK(stvm_mutex_owner(c->vm, fz_foreigners[0].mutex) == NULL, "owner(foreign)");
        FZ_CHECK(stvm_process_get_info(c->vm, NULL, &info) == STVM_EINVAL, "info(NULL)");
        FZ_CHECK(stvm_process_get_info(c->vm, fz_foreigners[k & 1].proc, &info) == STVM_EINVAL,
                 "info(foreign)");
        FZ_CHECK(stvm_process_release(c->vm, NULL) == STVM_EINVAL, "release(NULL)");
        FZ_CHECK(stvm_process_terminate(NULL, NULL) == STVM_EINVAL, "terminate(NULL)");
        FZ_CHECK(stvm_run(NULL) == STVM_EINVAL, "run(NULL)");
        FZ_CHECK(stvm_spawn(NULL, 40, "", fz_nothing, NULL, NULL) == STVM_EINVAL, "spawn(NULL)");
        FZ_CHECK(stvm_external_register(c->vm, fz_foreigners[0].sem, NULL) == STVM_EINVAL,
                 "register(foreign)");
        FZ_CHECK(stvm_primitive_call(NULL, 1, 3, NULL, 0, NULL, NULL) == STVM_EINVAL,
                 "primitive_call(NULL vm)");
        break;
    }
    }
    FZ_CHECK(rc == want, "%s answered %s, expected %s", what, stvm_err_name(rc),
             stvm_err_name(want));
    if (rc && s)
        unchanged(c, s, what);
}

/* ---- process-local variables -------------------------------------------------------------
 * op_local came after the corpus was grown and every op byte has a meaning, so it takes
 * no bytes: it runs after each operation, its action chosen from the op byte and the
 * operations left, and it never switches (no yield inside a during), so that the
 * operations of every input, and who runs when, stay as they were. Values are tokens
 * from malloc, freed by destroy_fn: a value dropped twice, used after it was dropped or
 * never dropped is the sanitizers' to find (leak detection is on). The model: the value
 * a driver set or cleared itself is what it must read back. */

#define TOKEN_MAGIC 0x70CA1u

typedef struct fz_token {
    uint32_t magic;
    uint32_t serial;
} fz_token;

static void token_destroy(void *v)
{
    fz_token *t = v;
    FZ_CHECK(t->magic == TOKEN_MAGIC, "destroy_fn got a value that is not a live token");
    t->magic = 0;
    free(t);
}

static void *token_inherit(void *v, stvm_process *child)
{
    fz_token *from = v, *t = malloc(sizeof *t);
    FZ_CHECK(from->magic == TOKEN_MAGIC, "inherit_fn got a value that is not a live token");
    FZ_CHECK(child != NULL, "inherit_fn without the child");
    if (t)
        *t = (fz_token){TOKEN_MAGIC, from->serial + 1000000u};
    return t;   /* NULL: the child answers the default */
}

static fz_token *token_new(fz_ctx *c)
{
    fz_token *t = malloc(sizeof *t);
    FZ_CHECK(t != NULL, "malloc");
    *t = (fz_token){TOKEN_MAGIC, ++c->lv_serial};
    return t;
}

static const unsigned lv_flags[2] = {STVM_LOCAL_INHERITABLE, STVM_LOCAL_DYNAMIC};

static void lv_make(fz_ctx *c, int i)
{
    int rc = stvm_local_new(c->vm, lv_flags[i], NULL, token_destroy, i ? NULL : token_inherit,
                            &c->lv[i]);
    FZ_CHECK(rc == STVM_OK, "local_new: %s", stvm_err_name(rc));
    c->lv_inside[i] = 0;
    if (i == 0)
        for (int k = 0; k < c->nw; k++) {   /* nobody has a value of the new one */
            c->w[k].lknown = true;
            c->w[k].lval = NULL;
        }
}

/* The driver making the call, or NULL (the host; a process that is not a driver). */
static fz_worker *cur_driver(fz_ctx *c)
{
    stvm_process *me = stvm_vm_active_process(c->vm);
    for (int i = 0; me && i < c->nw; i++)
        if (c->w[i].self == me && c->w[i].started && !c->w[i].finished &&
            c->w[i].kind == W_DRIVER)
            return &c->w[i];
    return NULL;
}

/* What a get must answer in the model: own value known, or not. */
static void local_check_get(fz_ctx *c, fz_worker *w, int rc, void *v, const char *what)
{
    FZ_CHECK(rc == 0 || rc == 1, "%s answered %s", what, stvm_err_name(rc));
    FZ_CHECK(rc == 1 ? v != NULL && ((fz_token *)v)->magic == TOKEN_MAGIC : v == NULL,
             "%s answered %d with %p", what, rc, v);
    if (w && w->lknown)
        FZ_CHECK(rc == (w->lval != NULL) && v == w->lval, "%s: %p, the process set %p", what,
                 v, w->lval);
}

typedef struct fz_binding {
    fz_ctx *c;
    int i;
    fz_token *bound;
    bool ran;
} fz_binding;

static void during_body(stvm_vm *vm, void *arg)
{
    fz_binding *b = arg;
    void *v = NULL;
    int rc = stvm_local_get(vm, b->c->lv[b->i], &v);
    FZ_CHECK(rc == 1 && v == b->bound, "inside during: %d %p, bound %p", rc, v,
             (void *)b->bound);
    FZ_CHECK(stvm_local_free(vm, b->c->lv[b->i]) == STVM_EINUSE, "free inside during");
    b->ran = true;
}

static void op_local(fz_ctx *c, unsigned op)
{
    unsigned a = (op * 0x9Du + (unsigned)c->ops_left * 0x3Bu) & 0xFF;
    int i = (int)(a >> 7);   /* which variable */
    stvm_local *v = c->lv[i];
    if (!v) {
        lv_make(c, i);
        return;
    }
    bool proc = in_proc(c);
    fz_worker *w = cur_driver(c);
    uint64_t sw0 = switches(c);
    void *val = (void *)SENTINEL;
    int rc;
    switch (a % 8) {
    case 0:
    case 1: {
        rc = stvm_local_get(c->vm, v, &val);
        if (!proc) {
            FZ_CHECK(rc == STVM_ENOTPROC && val == (void *)SENTINEL, "local_get from the host");
            break;
        }
        local_check_get(c, i == 0 ? w : NULL, rc, val, "local_get");
        void *of = (void *)SENTINEL;
        int rc2 = stvm_process_get_local(c->vm, stvm_vm_active_process(c->vm), v, &of);
        FZ_CHECK(rc2 == rc && of == val, "process_get_local(self) disagrees with local_get");
        break;
    }
    case 2:
    case 3: {   /* set (a dynamic variable refuses) */
        fz_token *t = token_new(c);
        fz_snap *s = snap(c);
        rc = stvm_local_set(c->vm, v, t);
        int want = i == 1 ? STVM_EINVAL : proc ? STVM_OK : STVM_ENOTPROC;
        FZ_CHECK(rc == want, "local_set answered %s, expected %s", stvm_err_name(rc),
                 stvm_err_name(want));
        if (rc) {
            unchanged(c, s, "local_set");
            free(t);
        } else if (w) {
            w->lknown = true;
            w->lval = t;
        }
        break;
    }
    case 4: {
        fz_snap *s = snap(c);
        rc = stvm_local_clear(c->vm, v);
        int want = i == 1 ? STVM_EINVAL : proc ? STVM_OK : STVM_ENOTPROC;
        FZ_CHECK(rc == want, "local_clear answered %s", stvm_err_name(rc));
        if (rc)
            unchanged(c, s, "local_clear");
        else if (w) {
            w->lknown = true;
            w->lval = NULL;
        }
        break;
    }
    case 5:
    case 6: {   /* during, on either kind; its end restores what the model knows */
        fz_binding b = {c, i, token_new(c), false};
        void *before = NULL;
        int own = proc ? stvm_local_get(c->vm, v, &before) : 0;
        c->lv_inside[i]++;
        rc = stvm_local_during(c->vm, v, b.bound, during_body, &b);
        c->lv_inside[i]--;
        FZ_CHECK(rc == (proc ? STVM_OK : STVM_ENOTPROC), "local_during answered %s",
                 stvm_err_name(rc));
        FZ_CHECK(b.ran == (rc == STVM_OK), "local_during's fn ran %d, answered %s", b.ran,
                 stvm_err_name(rc));
        if (rc)
            free(b.bound);   /* not taken */
        else {
            void *after = NULL;
            int own2 = stvm_local_get(c->vm, v, &after);
            FZ_CHECK(own2 == own && after == before, "during did not restore");
        }
        break;
    }
    default: {   /* free (refused while a during is in progress), or bad input */
        if (a & 0x40) {
            fz_snap *s = snap(c);
            rc = stvm_process_get_local(c->vm, NULL, v, &val);
            FZ_CHECK(rc == STVM_EINVAL, "process_get_local(NULL process)");
            rc = stvm_local_set(c->vm, (stvm_local *)c->sem[0], NULL);
            FZ_CHECK(c->sem[0] == NULL || rc == STVM_EINVAL, "local_set(a semaphore)");
            rc = stvm_local_free(c->vm, (stvm_local *)fz_stray);
            FZ_CHECK(rc == STVM_EINVAL, "local_free(stray)");
            rc = stvm_local_during(NULL, v, NULL, during_body, NULL);
            FZ_CHECK(rc == STVM_EINVAL, "local_during(NULL vm)");
            unchanged(c, s, "process-local bad input");
            break;
        }
        rc = stvm_local_free(c->vm, v);
        FZ_CHECK(rc == STVM_OK || (rc == STVM_EINUSE && c->lv_inside[i] > 0),
                 "local_free answered %s (%d durings in progress)", stvm_err_name(rc),
                 c->lv_inside[i]);
        if (rc == STVM_OK) {
            c->lv[i] = NULL;
            if (i == 0)
                for (int k = 0; k < c->nw; k++) {
                    c->w[k].lknown = true;
                    c->w[k].lval = NULL;
                }
        }
        break;
    }
    }
    FZ_CHECK(switches(c) == sw0, "a process-local call switched");
}

/* ---- the operations ------------------------------------------------------------------- */

/* ---- monitors -------------------------------------------------------------------------- */

/* A monitor argument: the pool's, NULL, a foreign VM's, a handle of another kind (a
 * mutex above all: a monitor's entry is one), stray memory. *mi is the pool index or -1. */
static stvm_monitor *pick_mon(fz_ctx *c, unsigned s, int *mi)
{
    *mi = -1;
    if (s < 200 && c->nmon)
        for (int k = 0; k < c->nmon; k++) {
            int i = (int)((s + (unsigned)k) % (unsigned)c->nmon);
            if (c->mon[i]) {
                *mi = i;
                return c->mon[i];
            }
        }
    if (s < 215) return NULL;
    if (s < 230) return fz_foreigners[s & 1].monitor;
    if (s < 236 && c->sem[0]) return (stvm_monitor *)c->sem[0];
    if (s < 242 && c->mut[0]) return (stvm_monitor *)c->mut[0];
    if (s < 248 && c->nqueue && c->queue[0].q) return (stvm_monitor *)c->queue[0].q;
    return (stvm_monitor *)fz_stray;
}

/* A condition queue id: mostly valid, sometimes just outside, sometimes far outside. */
static int pick_mon_queue(unsigned b)
{
    static const int bad[] = {-1, STVM_MONITOR_QUEUES, INT32_MIN, INT32_MAX};
    return (b & 0xC0) == 0xC0 ? bad[b & 3] : (int)(b % STVM_MONITOR_QUEUES);
}

/* waitWhile:'s condition: true for its first two calls of a wait, then false. */
static bool mon_pred(stvm_vm *vm, void *arg)
{
    (void)vm;
    int *n = arg;
    return ++*n <= 2;
}

static void mon_critical_fn(stvm_vm *vm, void *arg)
{
    stvm_monitor_wait_timeout_ms(vm, arg, 1);   /* inside: may be interrupted, terminated */
}

/* Every call on monitors, with the rules a caller can check from outside: a call with a
 * bad handle or queue, or by a process that does not own the monitor where ownership is
 * needed, answers its error and changes nothing; a wait returns owning the monitor at
 * the depth it had, whatever it answers; an enter that answers OK owns it. */
static void op_monitor(fz_ctx *c)
{
    unsigned k = fz_u8(IN());
    int mi;
    stvm_monitor *m = pick_mon(c, fz_u8(IN()), &mi);
    bool valid = mi >= 0, proc = in_proc(c);
    stvm_process *me = stvm_vm_active_process(c->vm);
    stvm_process *owner = valid ? stvm_monitor_owner(c->vm, m) : NULL;
    bool mine = valid && proc && owner == me;
    int64_t d0 = valid ? stvm_monitor_depth(c->vm, m) : 0;
    FZ_CHECK(!valid || (owner != NULL) == (d0 > 0), "a monitor's owner and depth disagree");
    FZ_CHECK(valid || (stvm_monitor_owner(c->vm, m) == NULL &&
                       stvm_monitor_depth(c->vm, m) == STVM_EINVAL),
             "a bad monitor handle was answered");
    int queue = pick_mon_queue(fz_u8(IN()));
    bool qok = queue >= 0 && queue < STVM_MONITOR_QUEUES;
    fz_snap *s = snap(c);
    FZ_TRACE("  monitor case %u on %d: owner %p, depth %lld, queue %d\n", k % 12, mi,
             (void *)owner, (long long)d0, queue);
    int rc, want;
    const char *what;
    bool waits = false;   /* a condition wait: the depth must come back */
    switch (k % 12) {
    case 0: {
        what = "monitor_new";
        stvm_monitor *n = (stvm_monitor *)fz_stray;
        bool bad = (k & 0x80) != 0;
        rc = stvm_monitor_new(bad && (k & 8) ? NULL : c->vm, bad && !(k & 8) ? NULL : &n);
        want = bad ? STVM_EINVAL : STVM_OK;
        if (rc == STVM_OK) {
            int at = 0;
            while (at < c->nmon && c->mon[at])
                at++;
            if (at < FZ_MAXMON) {
                c->mon[at] = n;
                c->nmon += at == c->nmon;
            } else {
                FZ_CHECK(stvm_monitor_free(c->vm, n) == STVM_OK, "free of a new monitor");
            }
        } else {
            FZ_CHECK(n == (stvm_monitor *)fz_stray, "monitor_new failed but wrote");
        }
        break;
    }
    case 1:
        what = "monitor_free";
        rc = stvm_monitor_free(c->vm, m);
        want = !valid ? STVM_EINVAL : owner ? STVM_EINUSE : rc;
        if (valid)
            FZ_CHECK(rc == STVM_OK || rc == STVM_EINUSE, "monitor_free answered %s",
                     stvm_err_name(rc));
        if (rc == STVM_OK) {
            FZ_CHECK(owner == NULL, "monitor_free freed an owned monitor");
            c->mon[mi] = NULL;
        }
        break;
    case 2:
    case 3: {
        bool timed = k % 12 == 3;
        int64_t ms = timed ? pick_duration(c) : 0;
        what = timed ? "monitor_enter_timeout_ms" : "monitor_enter";
        if (timed)
            want = !valid ? STVM_EINVAL : duration_rule(c, ms, true);
        else
            want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC : 0;
        if (!want && timed && too_long(ms, true) && !mine)
            return;
        want = want ? want : MAY_WAIT;   /* OK, ERANGE at the depth's end, or it waited */
        rc = timed ? stvm_monitor_enter_timeout_ms(c->vm, m, ms) : stvm_monitor_enter(c->vm, m);
        if (rc == STVM_OK)
            FZ_CHECK(stvm_monitor_owner(c->vm, m) == me && stvm_monitor_depth(c->vm, m) >= 1,
                     "%s answered OK without the monitor", what);
        if (rc == STVM_OK && mine)
            FZ_CHECK(stvm_monitor_depth(c->vm, m) == d0 + 1, "%s: re-entry depth", what);
        break;
    }
    case 4:
        what = "monitor_try_enter";
        rc = stvm_monitor_try_enter(c->vm, m);
        want = !valid ? STVM_EINVAL : !proc ? STVM_ENOTPROC
             : (mine || !owner) ? STVM_OK : STVM_EAGAIN;
        if (rc == STVM_OK)
            FZ_CHECK(stvm_monitor_owner(c->vm, m) == me &&
                         stvm_monitor_depth(c->vm, m) == (mine ? d0 + 1 : 1),
                     "monitor_try_enter took it wrongly");
        if (rc == STVM_EAGAIN)
            unchanged(c, s, what);
        break;
    case 5:
        what = "monitor_exit";
        rc = stvm_monitor_exit(c->vm, m);
        want = !valid ? STVM_EINVAL : mine ? MAY_WAIT : STVM_EPERM;   /* a hand-off switches */
        if (mine)
            FZ_CHECK(rc == STVM_OK, "monitor_exit by its owner answered %s", stvm_err_name(rc));
        break;
    case 6:
        what = "monitor_critical";
        rc = stvm_monitor_critical(c->vm, m, (k & 0x80) ? NULL : (k & 0x40) ? mon_critical_fn
                                                                            : fz_nothing, m);
        want = !valid || (k & 0x80) ? STVM_EINVAL : !proc ? STVM_ENOTPROC : MAY_WAIT;
        if (rc == STVM_OK && mine)
            FZ_CHECK(stvm_monitor_owner(c->vm, m) == me && stvm_monitor_depth(c->vm, m) == d0,
                     "monitor_critical changed the depth it entered at");
        break;
    case 7:
    case 8: {
        bool timed = k % 12 == 8, named = timed || (k & 0x40);
        int64_t ms = timed ? pick_duration(c) : 0;
        what = timed ? "monitor_wait_on_timeout_ms" : named ? "monitor_wait_on" : "monitor_wait";
        if (!valid || (named && !qok))
            want = STVM_EINVAL;
        else if (timed && (want = duration_rule(c, ms, true)) != 0)
            ;
        else if (!proc)
            want = STVM_ENOTPROC;
        else if (!mine)
            want = STVM_EPERM;
        else
            want = timed && ms == 0 ? STVM_ETIMEDOUT : MAY_WAIT;
        if (want == MAY_WAIT && timed && too_long(ms, true))
            return;
        waits = want == MAY_WAIT || want == STVM_ETIMEDOUT;
        rc = timed ? stvm_monitor_wait_on_timeout_ms(c->vm, m, queue, ms)
             : named ? stvm_monitor_wait_on(c->vm, m, queue)
                     : stvm_monitor_wait(c->vm, m);
        if (waits)
            FZ_CHECK(rc == STVM_OK || rc == STVM_ETIMEDOUT || rc == STVM_EINTR ||
                         rc == STVM_ESTATE,
                     "%s answered %s", what, stvm_err_name(rc));
        break;
    }
    case 9: {
        what = "monitor_wait_while";
        int calls = 0;
        stvm_monitor_pred pred = (k & 0x80) ? NULL : mon_pred;
        bool on = (k & 0x40) != 0, until = (k & 0x20) != 0;
        want = !valid || !pred || (on && !qok) ? STVM_EINVAL
               : !proc                         ? STVM_ENOTPROC
               : !mine                         ? STVM_EPERM
                                               : MAY_WAIT;
        waits = want == MAY_WAIT;
        rc = on ? (until ? stvm_monitor_wait_until_on(c->vm, m, queue, pred, &calls)
                         : stvm_monitor_wait_while_on(c->vm, m, queue, pred, &calls))
                : (until ? stvm_monitor_wait_until(c->vm, m, pred, &calls)
                         : stvm_monitor_wait_while(c->vm, m, pred, &calls));
        if (!waits)
            FZ_CHECK(calls == 0, "%s called its predicate though refused", what);
        else
            FZ_CHECK(rc == STVM_OK || rc == STVM_EINTR || rc == STVM_ESTATE,
                     "%s answered %s", what, stvm_err_name(rc));
        break;
    }
    case 10: {
        what = "monitor_signal";
        unsigned how = (k >> 4) % 5;
        bool named = how == 2 || how == 3;
        want = !valid || (named && !qok) ? STVM_EINVAL : mine ? MAY_WAIT : STVM_EPERM;
        rc = how == 0   ? stvm_monitor_signal(c->vm, m)
             : how == 1 ? stvm_monitor_signal_all(c->vm, m)
             : how == 2 ? stvm_monitor_signal_on(c->vm, m, queue)
             : how == 3 ? stvm_monitor_signal_all_on(c->vm, m, queue)
                        : stvm_monitor_signal_really_all(c->vm, m);
        if (want == MAY_WAIT) {
            FZ_CHECK(rc >= 0 && ((how != 0 && how != 2) || rc <= 1), "%s answered %d", what, rc);
            FZ_CHECK(stvm_monitor_owner(c->vm, m) == me && stvm_monitor_depth(c->vm, m) == d0,
                     "%s moved the monitor", what);
        }
        break;
    }
    default:
        what = "monitor_owner/depth";
        rc = want = STVM_OK;
        FZ_CHECK(stvm_monitor_owner(c->vm, m) == owner &&
                     stvm_monitor_depth(c->vm, m) == (valid ? d0 : STVM_EINVAL),
                 "a monitor's question changed its answer");
        break;
    }
    if (waits && (rc == STVM_OK || rc == STVM_ETIMEDOUT || rc == STVM_EINTR || rc == STVM_ESTATE))
        FZ_CHECK(stvm_monitor_owner(c->vm, m) == me && stvm_monitor_depth(c->vm, m) == d0,
                 "%s returned (%s) without the monitor at depth %lld (owner %p, depth %lld)",
                 what, stvm_err_name(rc), (long long)d0, (void *)stvm_monitor_owner(c->vm, m),
                 (long long)stvm_monitor_depth(c->vm, m));
    if (want != MAY_WAIT)
        FZ_CHECK(rc == want, "%s answered %s, want %s", what, stvm_err_name(rc),
                 stvm_err_name(want));
    if (rc < 0 && want != MAY_WAIT && rc != STVM_ETIMEDOUT)
        unchanged(c, s, what);
}

/* stvm_sim_set_cost with ops one below and one past the valid ones and costs at and past
 * the limit: the documented answer, and a refused call leaves every cost as it was. The
 * costs it sets are then charged by every later operation's events, which the other
 * checks still hold to (a delay never ends early). */
static void op_sim_cost(fz_ctx *c)
{
    static const uint32_t costs[] = {0, 1, 7, 50, STVM_SIM_COST_MAX_US, STVM_SIM_COST_MAX_US + 1,
                                     UINT32_MAX};
    unsigned k = fz_u8(IN());
    int op = (int)(k % 6) - 1;
    uint32_t us = costs[(k >> 3) % (sizeof costs / sizeof costs[0])];
    int64_t before[STVM_SIM_COST_OPS];
    for (int i = 0; i < STVM_SIM_COST_OPS; i++)
        before[i] = stvm_sim_cost(c->vm, i);
    int want = op < 0 || op >= STVM_SIM_COST_OPS ? STVM_EINVAL
             : us > STVM_SIM_COST_MAX_US        ? STVM_ERANGE : STVM_OK;
    fz_snap *s = snap(c);
    int rc = stvm_sim_set_cost(c->vm, op, us);
    FZ_CHECK(rc == want, "sim_set_cost(%d, %u) answered %s, expected %s", op, us,
             stvm_err_name(rc), stvm_err_name(want));
    if (rc)
        unchanged(c, s, "sim_set_cost");
    for (int i = 0; i < STVM_SIM_COST_OPS; i++)
        FZ_CHECK(stvm_sim_cost(c->vm, i) == (i == op && !rc ? (int64_t)us : before[i]),
                 "sim_set_cost(%d, %u): op %d's cost is %lld", op, us, i,
                 (long long)stvm_sim_cost(c->vm, i));
}

static void exec_op(fz_ctx *c, unsigned op)
{
    FZ_TRACE("[%s %p] op %u (%u bytes left)\n", in_proc(c) ? "proc" : "host",
             (void *)stvm_vm_active_process(c->vm), op % 16, (unsigned)c->in.n);
    switch (op % 16) {
    case 0: op_int_from(c); break;
    case 1: op_int_to(c); break;
    case 2: op_int_arith(c); break;
    case 3: op_int_misc(c); break;
    case 4: op_names(c); op_prim_numbers(c); break;
    case 5: op_config(c); break;
    case 6: op_delay(c); break;
    case 7: op_sem_timed(c); break;
    case 8: op_mutex_timed(c); break;
    case 9: op_spawn(c); break;
    case 10: op_process(c); break;
    case 11: op_sem(c); break;
    case 12: op_mutex(c); break;
    case 13: op_external(c); break;
    case 14: op_report(c); break;
    default:
        /* op_misc's op bytes from 0x80 on (0x8F, 0x9F ... 0xEF): the queue, Delay object
         * and monitor (0xEF) operations, added after the corpus was grown, in a corner
         * of the byte space that leaves the other 15 operations and op_misc's own cases
         * as they were (op_misc keeps 0x0F ... 0x7F; 0xFF ends a driver); the modelled
         * costs (0xCF) came last, from the queue's op bytes too */
        if (op == 0xEF) {   /* monitors, taken from the queue's four op bytes */
            op_monitor(c);
            pending_preemption(c, "a monitor call");
        } else if (op == 0xAF) {   /* names and the listing, from the queue's too */
            (fz_u8(IN()) & 1 ? op_listing : op_object_name)(c);
        } else if (op == 0xCF) {
            op_sim_cost(c);
        } else if (op >= 0x80) {
            ((op >> 4) & 1 ? op_delay_obj : op_queue)(c);
            pending_preemption(c, (op >> 4) & 1 ? "a Delay object call" : "a queue call");
        } else
            op_misc(c);
        break;
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init_common();
    fz_foreign_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return -1;
    fz_ctx *c = &fz_c;
    memset(c, 0, sizeof *c);
    c->in = (fz_in){data, size};
    c->ops_left = 300;
    c->runs_left = 6;
    vm_news_left = 2;
    cleanups_ran = 0;
    fz_config_from(&c->in, &c->cfg);
    c->cfg.external_table_size = (int)(fz_u8(&c->in) % 3) + 1;   /* EFULL is reachable */
    int rc = stvm_vm_create(&c->cfg, &c->vm);
    FZ_CHECK(rc == STVM_OK, "stvm_vm_create: %s", stvm_err_name(rc));
    /* the pool: a semaphore with an excess signal, one without, a mutex, a monitor, some
     * boxes, and the two external semaphores */
    for (int i = 0; i < 2; i++) {
        stvm_semaphore *s;
        FZ_CHECK(stvm_semaphore_new(c->vm, &s) == STVM_OK, "semaphore_new");
        fz_add_sem(c, s);
    }
    stvm_semaphore_signal(c->vm, c->sem[1]);
    stvm_mutex *m;
    FZ_CHECK(stvm_mutex_new(c->vm, &m) == STVM_OK, "mutex_new");
    fz_add_mut(c, m);
    lv_make(c, 0);
    lv_make(c, 1);
    FZ_CHECK(stvm_monitor_new(c->vm, &c->mon[0]) == STVM_OK, "monitor_new");
    c->nmon = 1;
    for (int i = 0; i < 2; i++) {
        FZ_CHECK(stvm_semaphore_new(c->vm, &ext_sem[i]) == STVM_OK, "semaphore_new");
        ext_index[i] = 0;
    }
    ext_requests = 0;
    ext_signals_reset = 0;
    static const int64_t vals[] = {0, -1, INT64_MAX, INT64_MIN, (int64_t)1 << 30,
                                   ((int64_t)1 << 60)};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        stvm_oop o;
        FZ_CHECK(stvm_int_from_i64(c->vm, vals[i], &o) == STVM_OK, "int_from_i64");
        if (stvm_oop_is_smallint(o))
            fz_add_oop(c, o);
        else
            fz_add_box(c, o, vals[i]);
    }
    fz_add_oop(c, STVM_NIL);
    fz_add_oop(c, STVM_TRUE);
    fz_add_oop(c, fz_foreigners[0].box);
    fz_add_oop(c, fz_foreigners[1].box);
    fz_add_oop(c, stvm_semaphore_oop(c->sem[0]));
    /* drivers: the host, and 1 or 2 green ones */
    unsigned b = fz_u8(&c->in);
    for (unsigned i = 0; i < 1 + (b & 1); i++) {
        fz_worker *w = &c->w[c->nw];
        memset(w, 0, sizeof *w);
        w->c = c;
        w->kind = W_DRIVER;
        stvm_process *h;
        c->nw++;
        FZ_CHECK(stvm_spawn_sized(c->vm, (int)((b >> 1) + i * 13) % 80 + 1, "driver",
                                  worker_main, w, FZ_STACK, &h) == STVM_OK,
                 "spawn a driver");
        w->held = w->self = h;
        fz_add_proc(c, h);
    }
    fz_invariants(c, "building the pool");
    drive(c);
    for (int i = 0; i < 2; i++) {
        if (ext_index[i])
            FZ_CHECK(stvm_external_unregister(c->vm, ext_index[i]) == STVM_OK, "unregister");
        ext_index[i] = 0;
    }
    if (c->runs_left > 0) {
        rc = stvm_run(c->vm);
        FZ_CHECK(rc == STVM_OK || rc == STVM_EDEADLOCK, "stvm_run answered %s",
                 stvm_err_name(rc));
    }
    fz_invariants(c, "the last run");
    stvm_vm_free(c->vm);
    c->vm = NULL;
    fz_foreign_check();
    return 0;
}
