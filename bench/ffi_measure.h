/*
 * stvm-bench ffi: the measurements (same-thread calls and nested callbacks in
 * ffi_callout.c; round trips through worker threads and the callback queue, and their
 * pthread reference, in ffi_threaded.c; the ticker in ffi_ticker.c). Measurement only:
 * each fills an ffi_sample and prints nothing; ffi.c makes the records.
 *
 * The function called is the tool's own `int64_t add(int64_t, int64_t)`, reached with
 * stvm_ffi_function_at; the callback is an echo `int64_t (int64_t)`.
 */
#ifndef STVM_BENCH_FFI_MEASURE_H
#define STVM_BENCH_FFI_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define FFI_MAX_REPEAT 100

/* The cases, in the order the records are made and run (--case's words in ffi.c). */
typedef enum ffi_case {
    FFI_DIRECT,             /* add(a, b) through a C function pointer */
    FFI_BARE,               /* ffi_call with the arguments already in C: the reference */
    FFI_CALLOUT_61,         /* stvm_ffi_call from a green process, oops in and out */
    FFI_CALLOUT_31,
    FFI_CALLOUT_31_BOXED,   /* arguments and result beyond 31-bit SmallIntegers */
    FFI_CALLBACK_NESTED,    /* C calls a callback on the VM's thread: C to VM to C */
    FFI_PTHREAD,            /* sem_t round trip between two threads: the reference */
    FFI_THREADED,           /* stvm_ffi_call_threaded round trip */
    FFI_THREADED_NOSPIN,    /* ... with config.ffi_spin_us 0: every wait sleeps */
    FFI_CALLBACK_QUEUED,    /* a foreign thread calls back: through the queue */
    FFI_CALLBACK_QUEUED_NOSPIN,
    FFI_TICKER_SAME,        /* ticks kept while blocking calls run on the VM's thread */
    FFI_TICKER_THREADED,    /* ... and on a worker */
    FFI_NCASES
} ffi_case;

/* What one measurement of a case answered. */
typedef struct ffi_sample {
    double value;           /* ns per call, median µs per round trip, or % ticks kept */
    double p99;             /* round trips: µs; NaN for the others */
    long long ticks, periods;   /* the ticker: 1 ms periods in which it ran, of all */
    long long count;        /* calls or round trips timed */
} ffi_sample;

typedef struct ffi_params {
    long long calls;            /* same-thread calls, nested callbacks */
    long long round_trips;      /* threaded calls, queued callbacks, pthread hand-offs */
    int blocking_calls, block_ms;
    int workers;                /* config.ffi_workers */
    int spin_us;                /* config.ffi_spin_us of the spinning rows */
    const bench_trace *trace;   /* the case's VM's trace, or NULL */
} ffi_params;

/* The function every callout case calls, and the echo callback (ffi_callout.c). */
int64_t ffi_bench_add(int64_t a, int64_t b);
int ffi_bench_echo(stvm_vm *vm, void *arg, const stvm_oop *args, int nargs, stvm_oop *result);

/* Each answers 0 and fills *s, or a negative stvm error (-1 for a system failure) and a
 * sentence in why. */
int ffi_time_direct(const ffi_params *p, ffi_sample *s, char *why, size_t whysize);
int ffi_time_bare(const ffi_params *p, ffi_sample *s, char *why, size_t whysize);
/* stvm_ffi_call of add from a green process of a fresh VM with `bits`-bit SmallIntegers;
 * boxed: arguments and result beyond 2^30 (boxes on a 31-bit VM). */
int ffi_time_callout(const ffi_params *p, int bits, bool boxed, ffi_sample *s, char *why,
                     size_t whysize);
/* A C loop, called once through the FFI, that calls a callback p->calls times. */
int ffi_time_callback_nested(const ffi_params *p, ffi_sample *s, char *why, size_t whysize);

int ffi_time_pthread(const ffi_params *p, ffi_sample *s, char *why, size_t whysize);
/* spin: config.ffi_spin_us as p->spin_us says, else 0 (every wait sleeps). */
int ffi_time_threaded(const ffi_params *p, bool spin, ffi_sample *s, char *why,
                      size_t whysize);
/* Another OS thread calls the callback p->round_trips times while the VM runs. */
int ffi_time_callback_queued(const ffi_params *p, bool spin, ffi_sample *s, char *why,
                             size_t whysize);

/* A ticker at priority 40 that wakes at every millisecond boundary while a process at
 * 30 makes p->blocking_calls calls of usleep(p->block_ms ms), on the VM's thread or on
 * a worker: the 1 ms periods of the calls' span in which the ticker ran. */
int ffi_ticker(const ffi_params *p, bool threaded, ffi_sample *s, char *why, size_t whysize);

#endif
