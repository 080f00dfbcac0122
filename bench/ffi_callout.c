/*
 * stvm-bench ffi: same-thread calls. The same add(a, b) three ways: through a C
 * function pointer, with a bare ffi_call whose arguments are already C values (the
 * reference the callout is judged against), and with stvm_ffi_call from a green
 * process, which also checks and converts the oops going in and the one coming out;
 * and a C loop that calls a callback into the VM on the VM's thread.
 */
#include "ffi_measure.h"

#include "bench.h"

#include <ffi.h>
#include <math.h>

__attribute__((noinline)) int64_t ffi_bench_add(int64_t a, int64_t b)
{
    return a + b;
}

static volatile int64_t sink;   /* keeps results alive */

int ffi_time_direct(const ffi_params *p, ffi_sample *s, char *why, size_t whysize)
{
    (void)why;
    (void)whysize;
    int64_t (*volatile fp)(int64_t, int64_t) = ffi_bench_add;
    int64_t sum = 0;
    int64_t t0 = bench_mono_ns();
    for (long long i = 0; i < p->calls; i++)
        sum += fp(1000, 1);
    int64_t t1 = bench_mono_ns();
    sink = sum;
    *s = (ffi_sample){.value = (double)(t1 - t0) / (double)p->calls, .p99 = NAN,
                      .count = p->calls};
    return 0;
}

int ffi_time_bare(const ffi_params *p, ffi_sample *s, char *why, size_t whysize)
{
    ffi_cif cif;
    ffi_type *types[2] = {&ffi_type_sint64, &ffi_type_sint64};
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 2, &ffi_type_sint64, types) != FFI_OK) {
        snprintf(why, whysize, "ffi_prep_cif failed");
        return -1;
    }
    int64_t a = 1000, b = 1, sum = 0;
    void *av[2] = {&a, &b};
    ffi_arg ret;
    int64_t t0 = bench_mono_ns();
    for (long long i = 0; i < p->calls; i++) {
        ffi_call(&cif, FFI_FN(ffi_bench_add), &ret, av);
        sum += (int64_t)ret;
    }
    int64_t t1 = bench_mono_ns();
    sink = sum;
    *s = (ffi_sample){.value = (double)(t1 - t0) / (double)p->calls, .p99 = NAN,
                      .count = p->calls};
    return 0;
}

/* ---- in a VM ------------------------------------------------------------------------ */

typedef struct callout_run {
    const ffi_params *p;
    stvm_ffi_function *fn;
    stvm_oop args[2];
    bool release;               /* results are boxes: give each back */
    int64_t ns;
    int err;
} callout_run;

static void callout_loop(stvm_vm *vm, void *arg)
{
    callout_run *c = arg;
    stvm_oop r;
    int64_t t0 = bench_mono_ns();
    for (long long i = 0; i < c->p->calls && !c->err; i++) {
        c->err = stvm_ffi_call(vm, c->fn, c->args, 2, &r);
        if (c->release)   /* a box costs its release too */
            stvm_oop_release(vm, r);
    }
    c->ns = bench_mono_ns() - t0;
}

/* A fresh VM with `bits`-bit SmallIntegers, fn the callout of address with sig. */
static int vm_with(int bits, void *address, const char *sig, stvm_vm **vm,
                   stvm_ffi_function **fn, char *why, size_t whysize)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.smallint_bits = bits;
    int err = stvm_vm_new(vm, &cfg);
    if (!err && (err = stvm_ffi_function_at(*vm, address, sig, fn)))
        stvm_vm_free(*vm);
    if (err)
        snprintf(why, whysize, "making the VM and its function: %s", stvm_err_name(err));
    return err;
}

/* Run body(vm, arg) as a process of vm (traced as trace says), then free vm. */
static int run_once(stvm_vm *vm, const bench_trace *trace, stvm_fn body, void *arg, char *why,
                    size_t whysize)
{
    int err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "bench", body, arg, NULL);
    if (!err && !(err = bench_trace_begin(trace, vm, why, whysize)) && !(err = stvm_run(vm)))
        err = bench_trace_end(trace, vm, why, whysize);
    stvm_vm_free(vm);
    if (err && !why[0])
        snprintf(why, whysize, "running: %s", stvm_err_name(err));
    return err;
}

/* c's loop once in vm (freed), then ns per call of p->calls into *s. */
static int run_calls(stvm_vm *vm, const ffi_params *p, callout_run *c, ffi_sample *s,
                     char *why, size_t whysize)
{
    int err = run_once(vm, p->trace, callout_loop, c, why, whysize);
    if (err)
        return err;
    if (c->err) {
        snprintf(why, whysize, "stvm_ffi_call: %s", stvm_err_name(c->err));
        return c->err;
    }
    *s = (ffi_sample){.value = (double)c->ns / (double)p->calls, .p99 = NAN, .count = p->calls};
    return 0;
}

int ffi_time_callout(const ffi_params *p, int bits, bool boxed, ffi_sample *s, char *why,
                     size_t whysize)
{
    stvm_vm *vm;
    callout_run c = {.p = p, .release = boxed};
    int err = vm_with(bits, (void *)ffi_bench_add, "i64(i64,i64)", &vm, &c.fn, why, whysize);
    if (err)
        return err;
    stvm_int_from_i64(vm, boxed ? (int64_t)1 << 40 : 1000, &c.args[0]);
    stvm_int_from_i64(vm, 1, &c.args[1]);
    return run_calls(vm, p, &c, s, why, whysize);
}

/* ---- a callback on the VM's thread ------------------------------------------------------ */

/* The C side: call back n times. */
static int64_t call_back_n(int64_t (*cb)(int64_t), int64_t n)
{
    int64_t sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += cb(i & 1023);
    return sum;
}

int ffi_bench_echo(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs, stvm_oop *result)
{
    (void)vm;
    (void)arg;
    (void)nargs;
    *result = args[0];
    return STVM_OK;
}

int ffi_time_callback_nested(const ffi_params *p, ffi_sample *s, char *why, size_t whysize)
{
    stvm_vm *vm;
    callout_run c = {.p = &(ffi_params){.calls = 1}};
    int err = vm_with(61, (void *)call_back_n, "i64(ptr, i64)", &vm, &c.fn, why, whysize);
    if (err)
        return err;
    stvm_ffi_callback *cb;
    void *code;
    if ((err = stvm_ffi_callback_new(vm, "i64(i64)", ffi_bench_echo, NULL, &cb, &code))) {
        snprintf(why, whysize, "stvm_ffi_callback_new: %s", stvm_err_name(err));
        stvm_vm_free(vm);
        return err;
    }
    stvm_ptr_oop(vm, code, &c.args[0]);
    stvm_int_from_i64(vm, p->calls, &c.args[1]);
    return run_calls(vm, p, &c, s, why, whysize);
}
