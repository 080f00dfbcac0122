/*
 * stvm-bench ffi: the measurements (what each case is: ffi.c's note). The bare ffi_call
 * has its arguments already in C, so it is what a callout adds to that is judged; the
 * round trips' reference is micro.h's sem_t hand-off between two unpinned threads, the
 * least a round trip between two threads costs.
 */
#include "ffi_measure.h"
#include "micro.h"

#include <ffi.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WARMUP 1000             /* round trips before the timed ones */
#define MS 1000000LL

__attribute__((noinline)) static int64_t add(int64_t a, int64_t b)
{
    return a + b;
}

static int echo(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs, stvm_oop *result)
{
    *result = args[0];
    return STVM_OK;
}

/* The C side of the nested callback: call back n times. */
static int64_t call_back_n(int64_t (*cb)(int64_t), int64_t n)
{
    int64_t sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += cb(i & 1023);
    return sum;
}

static volatile int64_t sink;   /* keeps results alive */

/* p->calls of add through a C function pointer, or through a bare ffi_call. */
static int time_c(const ffi_params *p, bool bare, ffi_sample *s, char *why, size_t whysize)
{
    int64_t (*volatile fp)(int64_t, int64_t) = add;
    ffi_cif cif;
    ffi_type *types[2] = {&ffi_type_sint64, &ffi_type_sint64};
    if (bare && ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 2, &ffi_type_sint64, types) != FFI_OK) {
        snprintf(why, whysize, "ffi_prep_cif failed");
        return STVM_ESYS;
    }
    int64_t a = 1000, b = 1, sum = 0;
    void *av[2] = {&a, &b};
    ffi_arg ret;
    int64_t t0 = bench_mono_ns();
    for (long long i = 0; bare && i < p->calls; i++) {
        ffi_call(&cif, FFI_FN(add), &ret, av);
        sum += (int64_t)ret;
    }
    for (long long i = 0; !bare && i < p->calls; i++)
        sum += fp(1000, 1);
    int64_t t1 = bench_mono_ns();
    sink = sum;
    *s = (ffi_sample){.value = (double)(t1 - t0) / (double)p->calls, .count = (double)p->calls};
    return 0;
}

/* ---- in a VM ------------------------------------------------------------------------- */

/* What a case's processes and threads share; each case uses its part. */
typedef struct run {
    const ffi_params *p;
    stvm_vm *vm;
    stvm_ffi_function *fn;      /* add, call_back_n or usleep */
    stvm_oop args[2];
    int err;                    /* the first failure in a process */
    bool boxed;                 /* results are boxes: give each back */
    long long calls;
    int64_t ns;                 /* the calls' time */
    bench_hist *h;              /* round trips in ns */
    int64_t (*cb)(int64_t);     /* the echo callback's code */
    stvm_semaphore *done;       /* signalled when the calling thread is through */
    int done_index;
    long long wrong;            /* wrong answers of the callback */
    bool threaded, stop;        /* the ticker: blocking calls on a worker; the calls ended */
    int64_t grid;               /* period k is [grid + k ms, grid + (k + 1) ms) */
    int64_t start, end;         /* the calls' span */
    int64_t *wakes;             /* when the ticker ran */
    long long nwakes, cap;
} run;

/* r->vm: bits-bit SmallIntegers, --workers, ffi_spin_us spin_us (-1: the default); r->fn
 * the function at fn with sig; with echo, the echo callback's code in r->cb. */
static int vm_new(run *r, int bits, int spin_us, void *fn, const char *sig, bool echo_cb,
                  char *why, size_t whysize)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.smallint_bits = bits;
    cfg.ffi_workers = r->p->workers;
    if (spin_us >= 0)
        cfg.ffi_spin_us = (uint32_t)spin_us;
    stvm_ffi_callback *cb;
    void *code = NULL;
    int err = stvm_vm_create(&cfg, &r->vm);
    if (err) {
        snprintf(why, whysize, "stvm_vm_create: %s", stvm_err_name(err));
        return err;
    }
    if (!(err = stvm_ffi_function_at(r->vm, fn, sig, &r->fn)) && echo_cb)
        err = stvm_ffi_callback_new(r->vm, "i64(i64)", echo, NULL, &cb, &code);
    memcpy(&r->cb, &code, sizeof code);
    if (err) {
        snprintf(why, whysize, "making the function and callback: %s", stvm_err_name(err));
        stvm_vm_free(r->vm);
    }
    return err;
}

/* body as process `name` at priority 40 of r->vm, run traced as --trace says, then the
 * VM freed: 0, or the error of the run or of a process (r->err) with a sentence. */
static int run_vm(run *r, const char *name, stvm_fn body, char *why, size_t whysize)
{
    const bench_trace *t = r->p->trace;
    int err = stvm_spawn(r->vm, STVM_PRIORITY_USER_SCHEDULING, name, body, r, NULL);
    if (!err && !(err = bench_trace_begin(t, r->vm, why, whysize)) &&
        !(err = stvm_run(r->vm)))
        err = bench_trace_end(t, r->vm, why, whysize);
    stvm_vm_free(r->vm);
    err = err ? err : r->err;
    if (err && !why[0])
        snprintf(why, whysize, "%s: %s", name, stvm_err_name(err));
    return err;
}

static void callout_loop(stvm_vm *vm, void *arg)
{
    run *r = arg;
    stvm_oop res;
    int64_t t0 = bench_mono_ns();
    for (long long i = 0; i < r->calls && !r->err; i++) {
        r->err = stvm_ffi_call(vm, r->fn, r->args, 2, &res);
        if (r->boxed)   /* a box costs its release too */
            stvm_oop_release(vm, res);
    }
    r->ns = bench_mono_ns() - t0;
}

/* stvm_ffi_call from a green process: of add p->calls times (boxed: arguments and
 * result beyond 2^30, boxes on a 31-bit VM), or, nested, once of a C loop that calls
 * the echo callback p->calls times. ns per call or callback. */
static int time_callout(const ffi_params *p, int bits, bool boxed, bool nested, ffi_sample *s,
                        char *why, size_t whysize)
{
    run r = {.p = p, .boxed = boxed, .calls = nested ? 1 : p->calls};
    int err = vm_new(&r, bits, -1, nested ? (void *)call_back_n : (void *)add,
                     nested ? "i64(ptr, i64)" : "i64(i64,i64)", nested, why, whysize);
    if (err)
        return err;
    if (nested)
        stvm_ptr_oop(r.vm, (void *)r.cb, &r.args[0]);
    else
        stvm_int_from_i64(r.vm, boxed ? (int64_t)1 << 40 : 1000, &r.args[0]);
    stvm_int_from_i64(r.vm, nested ? p->calls : 1, &r.args[1]);
    if ((err = run_vm(&r, "callouts", callout_loop, why, whysize)))
        return err;
    *s = (ffi_sample){.value = (double)r.ns / (double)p->calls, .count = (double)p->calls};
    return 0;
}

/* ---- round trips between threads ---------------------------------------------------- */

/* Round trips in ns, summarised in µs. */
static void summarise(const bench_hist *h, ffi_sample *s)
{
    *s = (ffi_sample){.value = (double)bench_hist_quantile(h, 0.5) / 1e3,
                      .p99 = (double)bench_hist_quantile(h, 0.99) / 1e3,
                      .count = (double)h->count};
}

static void threaded_loop(stvm_vm *vm, void *arg)
{
    run *r = arg;
    stvm_oop res;
    stvm_int_from_i64(vm, 1000, &r->args[0]);
    stvm_int_from_i64(vm, 1, &r->args[1]);
    for (long long i = 0; i < WARMUP + r->p->round_trips && !r->err; i++) {
        int64_t t0 = bench_mono_ns();
        r->err = stvm_ffi_call_threaded(vm, r->fn, r->args, 2, &res);
        if (i >= WARMUP)
            bench_hist_record(r->h, (uint64_t)(bench_mono_ns() - t0));
    }
}

static void *call_back_from_thread(void *arg)
{
    run *r = arg;
    for (long long i = 0; i < WARMUP + r->p->round_trips; i++) {
        int64_t t0 = bench_mono_ns();
        r->wrong += r->cb(i & 1023) != (i & 1023);
        if (i >= WARMUP)
            bench_hist_record(r->h, (uint64_t)(bench_mono_ns() - t0));
    }
    stvm_external_signal(r->vm, r->done_index);
    return NULL;
}

/* Starts the calling thread from inside the run (callbacks from other threads are run
 * only then) and waits until it is through. */
static void start_and_wait(stvm_vm *vm, void *arg)
{
    run *r = arg;
    pthread_t th;
    if (pthread_create(&th, NULL, call_back_from_thread, r) != 0) {
        r->err = STVM_ESYS;
        return;
    }
    stvm_semaphore_wait(vm, r->done);
    pthread_join(th, NULL);
}

/* Threaded callouts of add, or (queued) callbacks from another OS thread, p->round_trips
 * after a warm-up; spin: config.ffi_spin_us as p->spin_us says, else 0. */
static int time_round_trips(const ffi_params *p, bool queued, bool spin, ffi_sample *s,
                            char *why, size_t whysize)
{
    run r = {.p = p, .h = calloc(1, sizeof(bench_hist))};
    int err = r.h ? vm_new(&r, 61, spin ? p->spin_us : 0, (void *)add, "i64(i64,i64)", queued,
                           why, whysize)
                  : STVM_ENOMEM;
    if (!err && queued && ((err = stvm_semaphore_new(r.vm, &r.done)) ||
                           (err = stvm_external_register(r.vm, r.done, &r.done_index))))
        stvm_vm_free(r.vm);
    if (!err)
        err = run_vm(&r, queued ? "callbacks from a thread" : "threaded callouts",
                     queued ? start_and_wait : threaded_loop, why, whysize);
    if (!err && r.wrong) {
        snprintf(why, whysize, "callbacks from a thread: %lld wrong answers", r.wrong);
        err = STVM_ESTATE;
    }
    if (!err)
        summarise(r.h, s);
    else if (!why[0])
        snprintf(why, whysize, "setting up: %s", stvm_err_name(err));
    free(r.h);
    return err;
}

static int time_pthread(const ffi_params *p, ffi_sample *s, char *why, size_t whysize)
{
    bench_hist *h = calloc(1, sizeof *h);
    double ns;
    int err = h && micro_sem_pingpong(WARMUP, p->round_trips, -1, h, &ns) == 0 ? 0 : STVM_ESYS;
    if (err)
        snprintf(why, whysize, "setting up the threads failed");
    else
        summarise(h, s);
    free(h);
    return err;
}

/* ---- the ticker ---------------------------------------------------------------------- */

/* A process at priority 40 wakes at every millisecond boundary (on a grid fixed before
 * the run) while a process at 30 makes blocking calls of usleep. A tick is a 1 ms
 * period of the calls' span in which the ticker ran. With the calls on the VM's thread
 * every process stops while one runs, so the ticker runs only between calls; on a
 * worker only the caller waits. */
static void ticker(stvm_vm *vm, void *arg)
{
    run *t = arg;
    while (!t->stop) {
        int64_t now = bench_mono_ns();
        if (t->nwakes < t->cap)
            t->wakes[t->nwakes++] = now;
        int64_t next = t->grid + ((now - t->grid) / MS + 1) * MS;
        stvm_delay_wait_us(vm, (next - now + 999) / 1000);
    }
}

static void blocking_caller(stvm_vm *vm, void *arg)
{
    run *t = arg;
    stvm_oop us;
    stvm_int_from_i64(vm, (int64_t)t->p->block_ms * 1000, &us);
    stvm_delay_wait_ms(vm, 2);   /* the ticker is on its grid by now */
    t->start = bench_mono_ns();
    for (int i = 0; i < t->p->blocking_calls && !t->err; i++)
        t->err = t->threaded ? stvm_ffi_call_threaded(vm, t->fn, &us, 1, NULL)
                             : stvm_ffi_call(vm, t->fn, &us, 1, NULL);
    t->end = bench_mono_ns();
    t->stop = true;
}

/* Distinct whole periods of [start, end) in which the ticker ran. */
static void count_ticks(const run *t, ffi_sample *s)
{
    long long first = (t->start - t->grid + MS - 1) / MS, last = (t->end - t->grid) / MS;
    long long periods = last > first ? last - first : 0, ticks = 0, seen = -1;
    for (long long i = 0; i < t->nwakes; i++) {
        long long k = (t->wakes[i] - t->grid) / MS;
        if (k >= first && k < last && k != seen) {
            ticks++;
            seen = k;
        }
    }
    *s = (ffi_sample){.value = periods ? 100.0 * (double)ticks / (double)periods : NAN,
                      .ticks = (double)ticks, .periods = (double)periods,
                      .ticks_lost = (double)(periods - ticks)};
}

static int time_ticker(const ffi_params *p, bool threaded, ffi_sample *s, char *why,
                       size_t whysize)
{
    run t = {.p = p, .threaded = threaded};
    t.cap = 4 * ((long long)p->blocking_calls * p->block_ms + 100);
    t.wakes = calloc((size_t)t.cap, sizeof *t.wakes);
    int err = t.wakes ? vm_new(&t, 61, -1, (void *)usleep, "i32(u32)", false, why, whysize)
                      : STVM_ENOMEM;
    if (!err && (err = stvm_spawn(t.vm, 30, "caller", blocking_caller, &t, NULL)))
        stvm_vm_free(t.vm);
    t.grid = bench_mono_ns();
    if (!err && !(err = run_vm(&t, "ticker", ticker, why, whysize)))
        count_ticks(&t, s);
    if (err && !why[0])
        snprintf(why, whysize, "setting up the ticker: %s", stvm_err_name(err));
    free(t.wakes);
    return err;
}

int ffi_measure(const ffi_params *p, ffi_case c, ffi_sample *s, char *why, size_t whysize)
{
    switch (c) {
    case FFI_DIRECT: return time_c(p, false, s, why, whysize);
    case FFI_BARE: return time_c(p, true, s, why, whysize);
    case FFI_CALLOUT_61: return time_callout(p, 61, false, false, s, why, whysize);
    case FFI_CALLOUT_31: return time_callout(p, 31, false, false, s, why, whysize);
    case FFI_CALLOUT_31_BOXED: return time_callout(p, 31, true, false, s, why, whysize);
    case FFI_CALLBACK_NESTED: return time_callout(p, 61, false, true, s, why, whysize);
    case FFI_PTHREAD: return time_pthread(p, s, why, whysize);
    case FFI_THREADED: return time_round_trips(p, false, true, s, why, whysize);
    case FFI_THREADED_NOSPIN: return time_round_trips(p, false, false, s, why, whysize);
    case FFI_CALLBACK_QUEUED: return time_round_trips(p, true, true, s, why, whysize);
    case FFI_CALLBACK_QUEUED_NOSPIN: return time_round_trips(p, true, false, s, why, whysize);
    case FFI_TICKER_SAME: return time_ticker(p, false, s, why, whysize);
    default: return time_ticker(p, true, s, why, whysize);
    }
}
