/*
 * stvm-bench ffi: the measurements (ffi_measure.c). Measurement only: each case fills
 * an ffi_sample and prints nothing; ffi.c makes the records. The function called is the
 * tool's own `int64_t add(int64_t, int64_t)`, reached with stvm_ffi_function_at; the
 * callback is an echo `int64_t (int64_t)`.
 */
#ifndef STVM_BENCH_FFI_MEASURE_H
#define STVM_BENCH_FFI_MEASURE_H

#include "bench.h"

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

/* What one measurement of a case answered; doubles, so ffi.c reads each figure alike. */
typedef struct ffi_sample {
    double value;           /* ns per call, median µs per round trip, or % ticks kept */
    double p99;             /* round trips: µs */
    double ticks, periods, ticks_lost;  /* the ticker: 1 ms periods in which it ran, of all */
    double count;           /* calls or round trips timed */
} ffi_sample;

typedef struct ffi_params {
    long long calls;            /* same-thread calls, nested callbacks */
    long long round_trips;      /* threaded calls, queued callbacks, pthread hand-offs */
    int blocking_calls, block_ms;   /* the ticker's, each a usleep of block_ms */
    int workers;                /* config.ffi_workers */
    int spin_us;                /* config.ffi_spin_us of the spinning cases */
    const bench_trace *trace;   /* the case's VM's trace, or NULL */
} ffi_params;

/* Case c once, in a fresh VM when it has one (made, run and freed here; switches its
 * processes): 0 and *s filled, or a negative stvm error with a sentence in why
 * (STVM_ESYS for a thread that could not be made). */
int ffi_measure(const ffi_params *p, ffi_case c, ffi_sample *s, char *why, size_t whysize);

#endif
