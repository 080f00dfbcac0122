/*
 * The API table's rows for foreign calls (stvm/ffi.h): how each function is called, and
 * the rows, all written out (tests/test_api_table.c runs them).
 */
#include "api_table.h"

/* Every row of the FFI is written out (none generated). A row's handle (a.h) is, for a
 * function, worker or callback: H_DEFAULT the row VM's own, H_NULL, H_FOREIGN another
 * VM's (V_OTHER's, or V_MAIN's for V_OTHER), H_SEM a semaphore, H_G_ZERO, H_G_ONES,
 * H_G_TEXT readable memory; stvm_ffi_call_on's worker is chosen the same way by a.t
 * (0 = the row VM's named worker, else a handle id; H_NULL = the pool). a.z picks the
 * signature (ffi_sigs), a.n is nargs and a.o the arguments, where the objects below
 * name the FFI's own oops. Besides the snapshot, every FFI row checks that the C
 * function was not called when the call failed, that no FFI counter but callouts_failed
 * moved (and that only with EPRIM), that stvm_ffi_last_failure moved only with EPRIM,
 * and, after stvm_ffi_function_free, that the fixture's functions are still live. */

static atomic_int ffi_add_calls;

static int64_t ffi_add(int64_t a, int64_t b)
{
    atomic_fetch_add(&ffi_add_calls, 1);
    return a + b;
}

static int ffi_echo(stvm_vm *vm, void *arg, const stvm_oop *in, int nargs, stvm_oop *out)
{
    *out = in[0];
    return STVM_OK;
}

/* The fixture's functions need this much stack (so that a probe can tell they live). */
#define FFI_FX_STACK ((size_t)6000)
/* The VMs whose FFI counters every FFI row watches. */
static const int ffi_vms[] = {V_MAIN, V_OTHER, V_31, V_NET};
#define N_FFI_VMS ((int)(sizeof ffi_vms / sizeof ffi_vms[0]))

enum ffi_object_id {
    OBF_FLOAT = 1000,    /* V_MAIN: 1.5 */
    OBF_ADDR,            /* V_MAIN: an ExternalAddress */
    OBF_FOREIGN_FLOAT,   /* V_OTHER: 1.5 */
    OBF_FOREIGN_ADDR,    /* V_OTHER: an ExternalAddress */
};

/* Signatures by a.z: 0 is the fixture's, the others are refused. */
static const char *const ffi_sigs[] = {
    "i64(i64,i64)", "", "i64", "i64(", "i64(i64", "i64(i64,)", "i64(,i64)", "int(i64)",
    "i64(void)", "i64(i64 i64)", "i64(i64)x", "I64(i64)", "i64(i65)", "(i64)", "i64((i64))",
    "i64(i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64,i64)",
};
#define N_FFI_SIGS ((int)(sizeof ffi_sigs / sizeof ffi_sigs[0]))

static void ffi_make_in(fx *f, int v)
{
    stvm_vm *vm = f->vm[v];
    cr_assert_eq(stvm_ffi_function_at(vm, (void *)ffi_add, ffi_sigs[0], &f->ffi.fn[v]), STVM_OK);
    cr_assert_eq(stvm_ffi_function_set_stack(vm, f->ffi.fn[v], FFI_FX_STACK), STVM_OK);
    cr_assert_eq(stvm_ffi_worker_new(vm, "fixture", &f->ffi.worker[v]), STVM_OK);
    cr_assert_eq(stvm_float_new(vm, 1.5, &f->ffi.flt[v]), STVM_OK);
    cr_assert_eq(stvm_ptr_oop(vm, api_g_text, &f->ffi.addr[v]), STVM_OK);
}

/* The FFI's objects of the fixture (ffi_fx). */
void api_ffi_make(fx *f)
{
    for (int i = 0; i < N_FFI_VMS; i++)
        ffi_make_in(f, ffi_vms[i]);
    void *c;
    cr_assert_eq(stvm_ffi_callback_new(f->vm[V_OTHER], "i64(i64)", ffi_echo, NULL, &f->ffi.cb,
                                       &c), STVM_OK);
}

static stvm_oop ffi_oop_of(fx *f, ospec o)
{
    if (o.k != O_OBJ || o.v < OBF_FLOAT)
        return api_oop_of(f, o);
    switch (o.v) {
    case OBF_FLOAT: return f->ffi.flt[V_MAIN];
    case OBF_ADDR: return f->ffi.addr[V_MAIN];
    case OBF_FOREIGN_FLOAT: return f->ffi.flt[V_OTHER];
    case OBF_FOREIGN_ADDR: return f->ffi.addr[V_OTHER];
    }
    return STVM_NIL;
}

/* The FFI handle `which` names for the row's VM (f->ffi's arrays, or the callback). */
static void *ffi_handle(fx *f, const args *a, int which, void *const *own)
{
    int v = home_of(&(row){.a = *a});
    int foreign = v == V_OTHER ? V_MAIN : V_OTHER;
    switch (which) {
    case H_DEFAULT: return own[v];
    case H_FOREIGN: return own[foreign];
    case H_SEM: return f->sem[v] ? (void *)f->sem[v] : (void *)f->sem[V_MAIN];
    case H_G_ZERO: return api_g_zero;
    case H_G_ONES: return api_g_ones;
    case H_G_TEXT: return api_g_text;
    }
    return NULL;
}

typedef struct ffi_watch {
    stvm_ffi_stats st[N_FFI_VMS];
    int last[N_FFI_VMS];
    int calls;
} ffi_watch;

static void ffi_watch_take(fx *f, ffi_watch *w)
{
    memset(w, 0, sizeof *w);
    for (int i = 0; i < N_FFI_VMS; i++) {
        stvm_ffi_get_stats(f->vm[ffi_vms[i]], &w->st[i]);
        w->last[i] = stvm_ffi_last_failure(f->vm[ffi_vms[i]]);
    }
    w->calls = atomic_load(&ffi_add_calls);
}

/* Answers of FFI rows that saw more than the call's answer. */
enum {
    R_FFI_CALLED = R_ANY + 100,   /* failed, yet the C function ran */
    R_FFI_COUNTED,                /* an FFI counter other than callouts_failed moved */
    R_FFI_LAST,                   /* stvm_ffi_last_failure moved without EPRIM */
    R_FFI_LOST,                   /* a fixture function is no longer live */
};

static int ffi_judge(const ffi_watch *a, const ffi_watch *b, int rc)
{
    if (rc != STVM_OK && a->calls != b->calls)
        return R_FFI_CALLED;
    for (int i = 0; i < N_FFI_VMS; i++) {
        stvm_ffi_stats x = a->st[i], y = b->st[i];
        if (rc == STVM_EPRIM)
            y.callouts_failed = x.callouts_failed;
        if (memcmp(&x, &y, sizeof x) != 0)
            return R_FFI_COUNTED;
        if (rc != STVM_EPRIM && a->last[i] != b->last[i])
            return R_FFI_LAST;
    }
    return rc;
}

static bool ffi_fixture_live(fx *f)
{
    for (int i = 0; i < N_FFI_VMS; i++) {
        int v = ffi_vms[i];
        if (stvm_ffi_function_set_stack(f->vm[v], f->ffi.fn[v], FFI_FX_STACK) != STVM_OK)
            return false;
    }
    return true;
}

/* An out-parameter of a type out_slot has no member for: made in a local preset to
 * the pattern, then copied into f->out, so that a write on failure shows. */
#define FFI_OUT(T, name) \
    T name;              \
    memset(&name, OUT_PATTERN, sizeof name)
#define FFI_OUT_DONE(o, name)                \
    do {                                     \
        if (o)                               \
            memcpy((o)->buf, &name, sizeof name); \
    } while (0)

/* The callouts: stvm_ffi_call, _call_threaded and _call_on. */
static int call_ffi_callout(fx *f, int fn, const args *a, union out_slot *o)
{
    stvm_vm *vm = vm_of(f, a->vm);
    stvm_ffi_function *ffn = ffi_handle(f, a, a->h, (void *const *)f->ffi.fn);
    stvm_oop argv[8];
    for (int i = 0; i < 8; i++)
        argv[i] = ffi_oop_of(f, a->o[i]);
    const stvm_oop *av = a->null_ptr ? NULL : argv;
    stvm_oop *res = o ? &o->oop : NULL;
    int rc;
    if (fn == F_ffi_call) {
        rc = stvm_ffi_call(vm, ffn, av, (int)a->n, res);
    } else if (fn == F_ffi_call_threaded) {
        rc = stvm_ffi_call_threaded(vm, ffn, av, (int)a->n, res);
    } else {
        stvm_ffi_worker *w = ffi_handle(f, a, (int)a->t, (void *const *)f->ffi.worker);
        rc = stvm_ffi_call_on(vm, w, ffn, av, (int)a->n, res);
    }
    if (rc == STVM_EPRIM)
        f->fail_code = stvm_ffi_last_failure(vm);
    return rc;
}

/* The others; an unexpected success gives back what it made. */
static int call_ffi_other(fx *f, int fn, const args *a, union out_slot *o)
{
    stvm_vm *vm = vm_of(f, a->vm);
    stvm_oop o0 = ffi_oop_of(f, a->o[0]);
    const char *sig = a->null_ptr || a->z >= (uint64_t)N_FFI_SIGS ? NULL : ffi_sigs[a->z];
    const char *name = a->s == NULL_STR ? NULL : a->s;
    const char *sym = a->s2 == NULL_STR ? NULL : a->s2 ? a->s2 : "labs";
    void *addr = a->n == 1 ? NULL : (void *)ffi_add;
    FFI_OUT(void *, handle);
    FFI_OUT(void *, cfn);
    FFI_OUT(double, d);
    FFI_OUT(stvm_ffi_stats, fst);
    int rc = R_ANY;
    switch (fn) {
    case F_ffi_function_new:
        rc = stvm_ffi_function_new(vm, name, sym, sig, o ? (stvm_ffi_function **)&handle : NULL);
        if (rc == STVM_OK)
            stvm_ffi_function_free(vm, handle);
        break;
    case F_ffi_function_at:
        rc = stvm_ffi_function_at(vm, addr, sig, o ? (stvm_ffi_function **)&handle : NULL);
        if (rc == STVM_OK)
            stvm_ffi_function_free(vm, handle);
        break;
    case F_ffi_function_free:
        stvm_ffi_function_free(vm, ffi_handle(f, a, a->h, (void *const *)f->ffi.fn));
        return ffi_fixture_live(f) ? R_VOID : R_FFI_LOST;
    case F_ffi_function_set_stack:
        return stvm_ffi_function_set_stack(vm, ffi_handle(f, a, a->h, (void *const *)f->ffi.fn),
                                           (size_t)a->z);
    case F_ffi_worker_new:
        rc = stvm_ffi_worker_new(vm, name, o ? (stvm_ffi_worker **)&handle : NULL);
        if (rc == STVM_OK)
            stvm_ffi_worker_free(vm, handle);
        break;
    case F_ffi_worker_free:
        return stvm_ffi_worker_free(vm, ffi_handle(f, a, a->h, (void *const *)f->ffi.worker));
    case F_ffi_last_failure: rc = stvm_ffi_last_failure(vm); return rc < 0 ? rc : R_COUNT;
    case F_float_new: return stvm_float_new(vm, 2.5, o ? &o->oop : NULL);
    case F_float_value: rc = stvm_float_value(vm, o0, o ? &d : NULL); FFI_OUT_DONE(o, d); break;
    case F_ptr_oop: return stvm_ptr_oop(vm, api_g_text, o ? &o->oop : NULL);
    case F_oop_ptr: rc = stvm_oop_ptr(vm, o0, o ? &handle : NULL); break;
    case F_ffi_callback_new:
        rc = stvm_ffi_callback_new(vm, sig, a->null_fail ? NULL : ffi_echo, NULL,
                                   o ? (stvm_ffi_callback **)&handle : NULL,
                                   a->m ? NULL : &cfn);
        if (rc == STVM_OK)
            stvm_ffi_callback_free(vm, handle);
        break;
    case F_ffi_callback_free: {
        void *own[N_VM] = {[V_MAIN] = f->ffi.cb, [V_OTHER] = f->ffi.cb};
        stvm_ffi_callback_free(vm, ffi_handle(f, a, a->h, own));
        return R_VOID;
    }
    case F_ffi_get_stats:
        rc = stvm_ffi_get_stats_(vm, o ? &fst : NULL, SSIZE(stvm_ffi_stats));
        FFI_OUT_DONE(o, fst);
        return rc;
    }
    if (fn != F_float_value)
        FFI_OUT_DONE(o, handle);
    return rc;
}

/* The call of an FFI function: the snapshot's checks and the FFI's own (the C function
 * not called, the counters, the last failure). The FFI's functions end the header. */
static int call(fx *f, int fn, const args *a, const call_in *c)
{
    (void)c;
    if (fn < F_ffi_function_new)
        return R_NOT_MINE;
    union out_slot *o = a->null_out ? NULL : &f->out;
    ffi_watch before, after;
    ffi_watch_take(f, &before);
    int rc = fn == F_ffi_call || fn == F_ffi_call_threaded || fn == F_ffi_call_on
                 ? call_ffi_callout(f, fn, a, o)
                 : call_ffi_other(f, fn, a, o);
    ffi_watch_take(f, &after);
    return ffi_judge(&before, &after, rc);
}

/* One line a function: their rows are written out (below). */
static const fn_line lines[] = {
    NO_DESC(ffi_function_new),
    NO_DESC(ffi_function_at),
    NO_DESC(ffi_function_free),
    NO_DESC(ffi_function_set_stack),
    NO_DESC(ffi_call),
    NO_DESC(ffi_call_threaded),
    NO_DESC(ffi_worker_new),
    NO_DESC(ffi_worker_free),
    NO_DESC(ffi_call_on),
    NO_DESC(ffi_last_failure),
    NO_DESC(float_new),
    NO_DESC(float_value),
    NO_DESC(ptr_oop),
    NO_DESC(oop_ptr),
    NO_DESC(ffi_callback_new),
    NO_DESC(ffi_callback_free),
    NO_DESC(ffi_get_stats),
};

#define FFI(fn, what, ctx, want, ...) ROW(fn, what, ctx, want, __VA_ARGS__)
#define FCALL(fn, what, ctx, fail, ...) \
    {F_##fn, what, ctx, {__VA_ARGS__}, STVM_EPRIM, fail, NULL, NULL}
#define TWO {SI(1), SI(2)}
#define BAD_SIG(fn, sig, ...) \
    FFI(fn, "a signature outside the grammar", C_HOST, E_INVAL, .z = sig, __VA_ARGS__)
#define BAD_SIGS(fn, ...)                                                                     \
    BAD_SIG(fn, 1, __VA_ARGS__), BAD_SIG(fn, 2, __VA_ARGS__), BAD_SIG(fn, 3, __VA_ARGS__),    \
    BAD_SIG(fn, 4, __VA_ARGS__), BAD_SIG(fn, 5, __VA_ARGS__), BAD_SIG(fn, 6, __VA_ARGS__),    \
    BAD_SIG(fn, 7, __VA_ARGS__), BAD_SIG(fn, 8, __VA_ARGS__), BAD_SIG(fn, 9, __VA_ARGS__),    \
    BAD_SIG(fn, 10, __VA_ARGS__), BAD_SIG(fn, 11, __VA_ARGS__), BAD_SIG(fn, 12, __VA_ARGS__), \
    BAD_SIG(fn, 13, __VA_ARGS__), BAD_SIG(fn, 14, __VA_ARGS__), BAD_SIG(fn, 15, __VA_ARGS__)
/* Wrong handles for a function, worker or callback argument. */
#define FFI_WRONG(fn, ctx, want, ...)                                                        \
    FFI(fn, "NULL handle", ctx, want, .h = H_NULL, __VA_ARGS__),                             \
    FFI(fn, "another VM's handle", ctx, want, .h = H_FOREIGN, __VA_ARGS__),                  \
    FFI(fn, "a semaphore", ctx, want, .h = H_SEM, __VA_ARGS__),                              \
    FFI(fn, "zeroed memory", ctx, want, .h = H_G_ZERO, __VA_ARGS__),                         \
    FFI(fn, "0xFF memory", ctx, want, .h = H_G_ONES, __VA_ARGS__),                           \
    FFI(fn, "text", ctx, want, .h = H_G_TEXT, __VA_ARGS__)
/* Arguments an i64 refuses, on a 61-bit VM. */
#define FFI_BAD_VALUES(fn, ctx, ...)                                                              \
    FCALL(fn, "2^64 - 1 for i64", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_BOX_MAX)}, __VA_ARGS__),       \
    FCALL(fn, "2^63 for i64", ctx, BAD_ARG, .n = 2, .o = {OB(OB_BOX_2_63), SI(1)}, __VA_ARGS__),          \
    FCALL(fn, "a float for i64", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OBF_FLOAT)}, __VA_ARGS__),         \
    FCALL(fn, "an address for i64", ctx, BAD_ARG, .n = 2, .o = {OB(OBF_ADDR), SI(1)}, __VA_ARGS__),       \
    FCALL(fn, "nil for i64", ctx, BAD_ARG, .n = 2, .o = {SI(1), RAW(STVM_NIL)}, __VA_ARGS__),             \
    FCALL(fn, "another VM's box", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_FOREIGN_BOX)}, __VA_ARGS__),   \
    FCALL(fn, "a released box", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_RELEASED)}, __VA_ARGS__),        \
    FCALL(fn, "a semaphore", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_SEM)}, __VA_ARGS__),                \
    FCALL(fn, "an unmapped word", ctx, BAD_ARG, .n = 2, .o = {SI(1), RAW(GARBAGE)}, __VA_ARGS__),         \
    FCALL(fn, "zeroed memory", ctx, BAD_ARG, .n = 2, .o = {SI(1), OB(OB_G_ZERO)}, __VA_ARGS__),           \
    FCALL(fn, "one argument of two", ctx, BAD_NARGS, .n = 1, .o = TWO, __VA_ARGS__),                        \
    FCALL(fn, "three arguments of two", ctx, BAD_NARGS, .n = 3, .o = {SI(1), SI(2), SI(3)},       \
          __VA_ARGS__),                                                                          \
    FCALL(fn, "no argument of two, args NULL", ctx, BAD_NARGS, .n = 0, .null_ptr = true,          \
          __VA_ARGS__),                                                                          \
    FFI(fn, "nargs -1", ctx, E_INVAL, .n = -1, .o = TWO, __VA_ARGS__),                            \
    FFI(fn, "args NULL with nargs 2", ctx, E_INVAL, .n = 2, .null_ptr = true, __VA_ARGS__)
/* Words that are no float, or no address, of V_MAIN. */
#define FFI_NOT_OF(fn, want_ok, ...)                                                        \
    FFI(fn, "a SmallInteger", C_HOST, E_INVAL, .o = {SI(1)}),                                \
    FFI(fn, "a boxed integer", C_HOST, E_INVAL, .o = {OB(OB_BOX_MAX)}),                      \
    FFI(fn, "a released box", C_HOST, E_INVAL, .o = {OB(OB_RELEASED)}),                      \
    FFI(fn, "a semaphore", C_HOST, E_INVAL, .o = {OB(OB_SEM)}),                              \
    FFI(fn, "an unmapped word", C_HOST, E_INVAL, .o = {RAW(GARBAGE)}),                       \
    FFI(fn, "zeroed memory", C_HOST, E_INVAL, .o = {OB(OB_G_ZERO)}),                         \
    FFI(fn, "true", C_HOST, E_INVAL, .o = {RAW(STVM_TRUE)}),                                 \
    FFI(fn, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL, .o = {OB(want_ok)}),                   \
    FFI(fn, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true, .o = {OB(want_ok)}),    \
    __VA_ARGS__

static const row rows[] = {
    /* looking functions up */
    FFI(ffi_function_new, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_function_new, "NULL symbol", C_HOST, E_INVAL, .s2 = NULL_STR),
    FFI(ffi_function_new, "NULL signature", C_HOST, E_INVAL, .null_ptr = true),
    FFI(ffi_function_new, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI(ffi_function_new, "a library that does not load", C_HOST, E_INVAL,
        .s = "libstvm-no-such-library.so.0"),
    FFI(ffi_function_new, "a library given as a path that is a directory", C_HOST, E_INVAL,
        .s = "/"),
    FFI(ffi_function_new, "a symbol the program does not have", C_HOST, E_INVAL,
        .s2 = "stvm_no_such_symbol_anywhere"),
    FFI(ffi_function_new, "an empty symbol", C_HOST, E_INVAL, .s2 = ""),
    FFI(ffi_function_new, "a symbol libm does not have", C_HOST, E_INVAL, .s = "libm.so.6",
        .s2 = "stvm_no_such_symbol_anywhere"),
    FFI(ffi_function_new, "a missing symbol, from a green process", C_GREEN, E_INVAL,
        .s2 = "stvm_no_such_symbol_anywhere"),
    FFI(ffi_function_new, "a bad signature for a symbol that exists, 31-bit VM", C_HOST, E_INVAL,
        .vm = V_31, .z = 2),
    BAD_SIGS(ffi_function_new, .vm = V_MAIN),
    FFI(ffi_function_at, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_function_at, "NULL address", C_HOST, E_INVAL, .n = 1),
    FFI(ffi_function_at, "NULL signature", C_HOST, E_INVAL, .null_ptr = true),
    FFI(ffi_function_at, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    BAD_SIGS(ffi_function_at, .vm = V_MAIN),
    FFI(ffi_function_free, "NULL vm", C_HOST, R_VOID, .vm = V_NULL),
    FFI_WRONG(ffi_function_free, C_HOST, R_VOID),
    FFI_WRONG(ffi_function_free, C_GREEN, R_VOID),
    FFI(ffi_function_set_stack, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL, .z = FFI_FX_STACK),
    FFI(ffi_function_set_stack, "64 MiB + 1", C_HOST, E_INVAL, .z = ((size_t)64 << 20) + 1),
    FFI(ffi_function_set_stack, "SIZE_MAX", C_HOST, E_INVAL, .z = SIZE_MAX),
    FFI_WRONG(ffi_function_set_stack, C_HOST, E_INVAL, .z = FFI_FX_STACK),

    /* same-thread callouts: checked before anything is called */
    FFI(ffi_call, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL, .n = 2, .o = TWO),
    FFI_WRONG(ffi_call, C_HOST, E_INVAL, .n = 2, .o = TWO),
    FFI_WRONG(ffi_call, C_GREEN, E_INVAL, .n = 2, .o = TWO),
    FFI_BAD_VALUES(ffi_call, C_HOST),
    FFI_BAD_VALUES(ffi_call, C_GREEN),
    FFI_BAD_VALUES(ffi_call, C_THREAD),
    FCALL(ffi_call, "2^30 on a 31-bit VM (a tagged word it does not have)", C_HOST, BAD_ARG,
          .vm = V_31, .n = 2, .o = {SI(1), SI(MAX31 + 1)}),
    FCALL(ffi_call, "2^40 tagged on a 31-bit VM", C_GREEN, BAD_ARG, .vm = V_31, .n = 2,
          .o = {SI(WIDE), SI(1)}),
    FCALL(ffi_call, "another VM's float", C_HOST, BAD_ARG, .n = 2, .o = {OB(OBF_FOREIGN_FLOAT), SI(1)}),
    FFI(ffi_call, "while the VM runs on another thread, from a process of another VM",
        C_ELSEWHERE, STVM_ENOTPROC, .n = 2, .o = TWO),
    FFI(ffi_call, "while the VM runs on another thread, from that thread", C_BARE,
        STVM_ENOTPROC, .n = 2, .o = TWO),

    /* threaded callouts */
    FFI(ffi_call_threaded, "NULL vm", C_GREEN, E_INVAL, .vm = V_NULL, .n = 2, .o = TWO),
    FFI_WRONG(ffi_call_threaded, C_GREEN, E_INVAL, .vm = V_NET, .n = 2, .o = TWO),
    FFI_BAD_VALUES(ffi_call_threaded, C_GREEN, .vm = V_NET),
    FFI(ffi_call_threaded, "a VM whose external table is full", C_GREEN, STVM_EFULL, .n = 2,
        .o = TWO),
    FFI(ffi_call_threaded, "outside a green process of the VM", C_HOST, STVM_ENOTPROC, .n = 2,
        .o = TWO),
    FFI(ffi_call_threaded, "outside a green process of the VM", C_THREAD, STVM_ENOTPROC,
        .n = 2, .o = TWO),
    FFI(ffi_call_threaded, "outside a green process of the VM", C_ELSEWHERE, STVM_ENOTPROC,
        .n = 2, .o = TWO),
    FFI(ffi_call_threaded, "outside a green process of the VM", C_BARE, STVM_ENOTPROC, .n = 2,
        .o = TWO),
    FFI(ffi_call_on, "NULL vm", C_GREEN, E_INVAL, .vm = V_NULL, .n = 2, .o = TWO),
    FFI(ffi_call_on, "another VM's worker", C_GREEN, E_INVAL, .vm = V_NET, .t = H_FOREIGN,
        .n = 2, .o = TWO),
    FFI(ffi_call_on, "a semaphore as the worker", C_GREEN, E_INVAL, .vm = V_NET, .t = H_SEM,
        .n = 2, .o = TWO),
    FFI(ffi_call_on, "zeroed memory as the worker", C_GREEN, E_INVAL, .vm = V_NET,
        .t = H_G_ZERO, .n = 2, .o = TWO),
    FFI(ffi_call_on, "0xFF memory as the worker", C_GREEN, E_INVAL, .vm = V_NET, .t = H_G_ONES,
        .n = 2, .o = TWO),
    FFI_WRONG(ffi_call_on, C_GREEN, E_INVAL, .vm = V_NET, .n = 2, .o = TWO),
    FFI_BAD_VALUES(ffi_call_on, C_GREEN, .vm = V_NET),
    FFI(ffi_call_on, "outside a green process of the VM", C_HOST, STVM_ENOTPROC, .n = 2,
        .o = TWO),
    FFI(ffi_call_on, "outside a green process of the VM", C_ELSEWHERE, STVM_ENOTPROC, .n = 2,
        .o = TWO),

    /* workers, failures, counters */
    FFI(ffi_worker_new, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_worker_new, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI(ffi_worker_free, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI_WRONG(ffi_worker_free, C_HOST, E_INVAL),
    FFI_WRONG(ffi_worker_free, C_GREEN, E_INVAL),
    FFI(ffi_last_failure, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_last_failure, "answers a code, changing nothing", C_HOST, R_COUNT),
    FFI(ffi_last_failure, "answers a code, changing nothing", C_ELSEWHERE, R_COUNT),
    FFI(ffi_get_stats, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_get_stats, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI(ffi_get_stats, "struct size from a newer header", C_HOST, STVM_ESIZE,
        .ssize = sizeof(stvm_ffi_stats) + 8),

    /* floats and addresses */
    FFI(float_new, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(float_new, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI(ptr_oop, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ptr_oop, "NULL out-parameter", C_HOST, E_INVAL, .null_out = true),
    FFI_NOT_OF(float_value, OBF_FLOAT,
               FFI(float_value, "an address", C_HOST, E_INVAL, .o = {OB(OBF_ADDR)}),
               FFI(float_value, "another VM's float", C_HOST, E_INVAL,
                   .o = {OB(OBF_FOREIGN_FLOAT)}),
               FFI(float_value, "nil", C_HOST, E_INVAL, .o = {RAW(STVM_NIL)})),
    FFI_NOT_OF(oop_ptr, OBF_ADDR,
               FFI(oop_ptr, "a float", C_HOST, E_INVAL, .o = {OB(OBF_FLOAT)}),
               FFI(oop_ptr, "another VM's address", C_HOST, E_INVAL,
                   .o = {OB(OBF_FOREIGN_ADDR)}),
               FFI(oop_ptr, "a ByteArray of another VM", C_HOST, E_INVAL,
                   .o = {OB(OB_FOREIGN_BYTES)})),

    /* callbacks */
    FFI(ffi_callback_new, "NULL vm", C_HOST, E_INVAL, .vm = V_NULL),
    FFI(ffi_callback_new, "NULL signature", C_HOST, E_INVAL, .vm = V_OTHER, .null_ptr = true),
    FFI(ffi_callback_new, "NULL handler", C_HOST, E_INVAL, .vm = V_OTHER, .null_fail = true),
    FFI(ffi_callback_new, "NULL out-parameter", C_HOST, E_INVAL, .vm = V_OTHER,
        .null_out = true),
    FFI(ffi_callback_new, "NULL c_function", C_HOST, E_INVAL, .vm = V_OTHER, .m = 1),
    BAD_SIGS(ffi_callback_new, .vm = V_OTHER),
    FFI(ffi_callback_new, "the first on a VM whose external table is full", C_HOST, STVM_EFULL),
    FFI(ffi_callback_free, "NULL vm", C_HOST, R_VOID, .vm = V_NULL, .h = H_FOREIGN),
    FFI_WRONG(ffi_callback_free, C_HOST, R_VOID, .vm = V_MAIN),
};

const api_module api_rows_ffi = API_MODULE(ffi, NULL);
