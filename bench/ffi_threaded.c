/*
 * stvm-bench ffi: round trips between threads. A threaded callout of add (the caller
 * waits on its semaphore, a worker calls, the completion comes back as an external
 * signal); a callback made by another OS thread (queued, run by the callback process,
 * answered); and their reference, a sem_t hand-off between two unpinned threads, the
 * least a round trip between two threads costs.
 */
#include "ffi_measure.h"

#include "bench.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP 1000

/* Round trip times in ns, summarised as µs. */
static void summarise(const bench_hist *h, ffi_sample *s)
{
    *s = (ffi_sample){.value = (double)bench_hist_quantile(h, 0.5) / 1e3,
                      .p99 = (double)bench_hist_quantile(h, 0.99) / 1e3,
                      .count = (long long)h->count};
}

/* ---- the reference ------------------------------------------------------------------- */

typedef struct sem_pair {
    sem_t ping, pong;
    long long rounds;
} sem_pair;

static void wait_intr(sem_t *s)
{
    while (sem_wait(s) != 0 && errno == EINTR) {
    }
}

static void *ponger(void *arg)
{
    sem_pair *sp = arg;
    for (long long i = 0; i < sp->rounds; i++) {
        wait_intr(&sp->ping);
        sem_post(&sp->pong);
    }
    return NULL;
}

int ffi_time_pthread(const ffi_params *p, ffi_sample *s, char *why, size_t whysize)
{
    sem_pair sp = {.rounds = WARMUP + p->round_trips};
    bench_hist *h = calloc(1, sizeof *h);
    pthread_t th;
    if (!h || sem_init(&sp.ping, 0, 0) || sem_init(&sp.pong, 0, 0) ||
        pthread_create(&th, NULL, ponger, &sp)) {
        snprintf(why, whysize, "setting up the threads failed");
        free(h);
        return -1;
    }
    for (long long i = 0; i < sp.rounds; i++) {
        int64_t t0 = bench_mono_ns();
        sem_post(&sp.ping);
        wait_intr(&sp.pong);
        if (i >= WARMUP)
            bench_hist_record(h, (uint64_t)(bench_mono_ns() - t0));
    }
    pthread_join(th, NULL);
    summarise(h, s);
    free(h);
    sem_destroy(&sp.ping);
    sem_destroy(&sp.pong);
    return 0;
}

/* ---- threaded callouts -------------------------------------------------------------- */

typedef struct rt_run {
    const ffi_params *p;
    stvm_ffi_function *fn;
    bench_hist *h;
    int err;
} rt_run;

static void threaded_loop(stvm_vm *vm, void *arg)
{
    rt_run *r = arg;
    stvm_oop args[2] = {0, 0}, res;
    stvm_int_from_i64(vm, 1000, &args[0]);
    stvm_int_from_i64(vm, 1, &args[1]);
    for (long long i = 0; i < WARMUP + r->p->round_trips && !r->err; i++) {
        int64_t t0 = bench_mono_ns();
        r->err = stvm_ffi_call_threaded(vm, r->fn, args, 2, &res);
        if (i >= WARMUP)
            bench_hist_record(r->h, (uint64_t)(bench_mono_ns() - t0));
    }
}

/* A fresh VM of the default configuration but p->workers and the spin; fn is add. */
static int vm_with_add(const ffi_params *p, bool spin, stvm_vm **vm, stvm_ffi_function **fn,
                       char *why, size_t whysize)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.ffi_workers = p->workers;
    cfg.ffi_spin_us = spin ? (uint32_t)p->spin_us : 0;
    int err = stvm_vm_new(vm, &cfg);
    if (!err && (err = stvm_ffi_function_at(*vm, (void *)ffi_bench_add, "i64(i64,i64)", fn)))
        stvm_vm_free(*vm);
    if (err)
        snprintf(why, whysize, "making the VM: %s", stvm_err_name(err));
    return err;
}

int ffi_time_threaded(const ffi_params *p, bool spin, ffi_sample *s, char *why,
                      size_t whysize)
{
    stvm_vm *vm;
    rt_run r = {.p = p, .h = calloc(1, sizeof(bench_hist))};
    int err = r.h ? vm_with_add(p, spin, &vm, &r.fn, why, whysize) : STVM_ENOMEM;
    if (err) {
        free(r.h);
        return err;
    }
    err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "caller", threaded_loop, &r, NULL);
    if (!err && !(err = bench_trace_begin(p->trace, vm, why, whysize)) &&
        !(err = stvm_run(vm)) && !r.err)
        err = bench_trace_end(p->trace, vm, why, whysize);
    stvm_vm_free(vm);
    if ((err || r.err) && !why[0])
        snprintf(why, whysize, "threaded callouts: %s", stvm_err_name(err ? err : r.err));
    else
        summarise(r.h, s);
    free(r.h);
    return err ? err : r.err;
}

/* ---- callbacks from another thread -------------------------------------------------- */

typedef struct caller_thread {
    const ffi_params *p;
    int64_t (*cb)(int64_t);
    stvm_vm *vm;
    int done_index;             /* signalled when the thread is through */
    bench_hist *h;
    long long wrong;
} caller_thread;

static void *call_back_from_thread(void *arg)
{
    caller_thread *c = arg;
    for (long long i = 0; i < WARMUP + c->p->round_trips; i++) {
        int64_t t0 = bench_mono_ns();
        c->wrong += c->cb(i & 1023) != (i & 1023);
        if (i >= WARMUP)
            bench_hist_record(c->h, (uint64_t)(bench_mono_ns() - t0));
    }
    stvm_external_signal(c->vm, c->done_index);
    return NULL;
}

typedef struct waiter {
    caller_thread *c;
    stvm_semaphore *done;
    pthread_t th;
    int err;
} waiter;

/* Starts the calling thread from inside the run (callbacks from other threads are run
 * only then) and waits until it is through. */
static void start_and_wait(stvm_vm *vm, void *arg)
{
    waiter *w = arg;
    if (pthread_create(&w->th, NULL, call_back_from_thread, w->c) != 0) {
        w->err = -1;
        return;
    }
    stvm_semaphore_wait(vm, w->done);
    pthread_join(w->th, NULL);
}

static int queued_setup(stvm_vm *vm, caller_thread *c, waiter *w)
{
    stvm_ffi_callback *cb;
    void *code;
    int err = stvm_ffi_callback_new(vm, "i64(i64)", ffi_bench_echo, NULL, &cb, &code);
    if (!err)
        err = stvm_semaphore_new(vm, &w->done);
    if (!err)
        err = stvm_external_register(vm, w->done, &c->done_index);
    memcpy(&c->cb, &code, sizeof code);
    return err;
}

int ffi_time_callback_queued(const ffi_params *p, bool spin, ffi_sample *s, char *why,
                             size_t whysize)
{
    stvm_vm *vm;
    stvm_ffi_function *unused;
    caller_thread c = {.p = p, .h = calloc(1, sizeof(bench_hist))};
    waiter w = {.c = &c};
    int err = c.h ? vm_with_add(p, spin, &vm, &unused, why, whysize) : STVM_ENOMEM;
    if (err) {
        free(c.h);
        return err;
    }
    c.vm = vm;
    if (!(err = queued_setup(vm, &c, &w)) &&
        !(err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "waiter", start_and_wait, &w,
                           NULL)) &&
        !(err = bench_trace_begin(p->trace, vm, why, whysize)) && !(err = stvm_run(vm)))
        err = bench_trace_end(p->trace, vm, why, whysize);
    stvm_vm_free(vm);
    if ((err || w.err || c.wrong) && !why[0])
        snprintf(why, whysize, "callbacks from a thread: %s, %lld wrong answers",
                 err ? stvm_err_name(err) : w.err ? "no thread" : "ok", c.wrong);
    else
        summarise(c.h, s);
    free(c.h);
    return err ? err : w.err ? w.err : c.wrong ? -1 : 0;
}
