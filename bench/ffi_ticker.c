/*
 * stvm-bench ffi: the ticker. A process at priority 40 wakes at every millisecond
 * boundary (on a grid fixed before the run) while a process at 30 makes blocking calls
 * of usleep. A tick is a 1 ms period of the calls' span in which the ticker ran. With
 * the calls on the VM's thread every process stops while one runs, so the ticker runs
 * only between calls; on a worker only the caller waits.
 */
#include "ffi_measure.h"

#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000LL

typedef struct ticker_run {
    const ffi_params *p;
    bool threaded;
    stvm_ffi_function *usleep_fn;
    int64_t grid;               /* period k is [grid + k ms, grid + (k + 1) ms) */
    int64_t start, end;         /* the calls' span */
    bool done;
    int64_t *wakes;             /* when the ticker ran */
    long long nwakes, cap;
    int err;
} ticker_run;

static void ticker(stvm_vm *vm, void *arg)
{
    ticker_run *t = arg;
    while (!t->done) {
        int64_t now = bench_mono_ns();
        if (t->nwakes < t->cap)
            t->wakes[t->nwakes++] = now;
        int64_t next = t->grid + ((now - t->grid) / MS + 1) * MS;
        stvm_delay_wait_us(vm, (next - now + 999) / 1000);
    }
}

static void blocking_caller(stvm_vm *vm, void *arg)
{
    ticker_run *t = arg;
    stvm_oop us;
    stvm_int_from_i64(vm, (int64_t)t->p->block_ms * 1000, &us);
    stvm_delay_wait_ms(vm, 2);   /* the ticker is on its grid by now */
    t->start = bench_mono_ns();
    for (int i = 0; i < t->p->blocking_calls && !t->err; i++)
        t->err = t->threaded ? stvm_ffi_call_threaded(vm, t->usleep_fn, &us, 1, NULL)
                             : stvm_ffi_call(vm, t->usleep_fn, &us, 1, NULL);
    t->end = bench_mono_ns();
    t->done = true;
}

/* Distinct whole periods of [start, end) in which the ticker ran. */
static void count_ticks(const ticker_run *t, ffi_sample *s)
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
                      .p99 = NAN, .ticks = ticks, .periods = periods};
}

static int ticker_vm(ticker_run *t, char *why, size_t whysize)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.ffi_workers = t->p->workers;
    stvm_vm *vm = NULL;
    int err = stvm_vm_new(&vm, &cfg);
    if (!err)
        err = stvm_ffi_function_new(vm, NULL, "usleep", "i32(u32)", &t->usleep_fn);
    if (!err)
        err = stvm_spawn(vm, 40, "ticker", ticker, t, NULL);
    if (!err)
        err = stvm_spawn(vm, 30, "caller", blocking_caller, t, NULL);
    if (!err)
        err = bench_trace_begin(t->p->trace, vm, why, whysize);
    t->grid = bench_mono_ns();
    if (!err && !(err = stvm_run(vm)) && !t->err)
        err = bench_trace_end(t->p->trace, vm, why, whysize);
    if (vm && (err || t->err) && !why[0])
        snprintf(why, whysize, "ticker: %s", stvm_err_name(err ? err : t->err));
    stvm_vm_free(vm);
    return err ? err : t->err;
}

int ffi_ticker(const ffi_params *p, bool threaded, ffi_sample *s, char *why, size_t whysize)
{
    ticker_run t = {.p = p, .threaded = threaded};
    t.cap = 4 * ((long long)p->blocking_calls * p->block_ms + 100);
    t.wakes = calloc((size_t)t.cap, sizeof *t.wakes);
    if (!t.wakes) {
        snprintf(why, whysize, "out of memory");
        return STVM_ENOMEM;
    }
    int err = ticker_vm(&t, why, whysize);
    if (!err)
        count_ticks(&t, s);
    free(t.wakes);
    return err;
}
