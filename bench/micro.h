/*
 * stvm-bench micro: what the command (micro.c) asks of its measurements (the hand-offs
 * in micro_pingpong.c, memory per blocked process in micro_memory.c). They answer
 * numbers and print nothing.
 */
#ifndef STVM_BENCH_MICRO_H
#define STVM_BENCH_MICRO_H

#include "bench.h"

/* What a hand-off goes through: a semaphore's signal and wait (both processes blocking
 * at one call site, or at two: micro_pingpong.c says why it matters), a SharedQueue's
 * put and take, a monitor held in turn and handed over with a signal and a condition
 * wait; or no hand-off, one process's uncontended monitor enter + exit. The order is
 * micro.c's cases'. */
typedef enum micro_channel {
    MICRO_SEMAPHORE, MICRO_SEMAPHORE_TWO_SITES, MICRO_QUEUE, MICRO_MONITOR, MICRO_ENTER_EXIT
} micro_channel;

/* ns per hand-off (or enter + exit pair) by green processes of equal priority in a
 * fresh VM, and the process's CPU ns per hand-off over the same rounds (cpu_ns may be
 * NULL), traced as trace says (NULL: not): STVM_OK, or a negative stvm error and a
 * sentence in why. Runs a VM. */
int micro_handoff(micro_channel channel, long long handoffs, const bench_trace *trace,
                  double *ns, double *cpu_ns, char *why, size_t whysize);
/* A sem_t ping-pong between two new OS threads pinned to cpu (-1: not pinned; ffi's
 * reference too): rounds round trips after warmup. *ns is ns per hand-off (half a
 * round trip); h, when not NULL, gets each round trip in ns. 0, or -1 if the threads
 * could not be made or pinned. */
int micro_sem_pingpong(long long warmup, long long rounds, int cpu, bench_hist *h, double *ns);

/* n processes blocked on one semaphore, in a fresh VM of the default configuration. */
typedef struct micro_memory {
    long asked, spawned;
    int spawn_err;                  /* why spawning stopped short; STVM_OK if it did not */
    int run_err;                    /* a failure of the VM or of a process */
    uint64_t rss_before, rss_after; /* bytes, /proc/self/statm */
    uint64_t live_before, live_after; /* the VM's bytes_live */
} micro_memory;

/* Fills *m; answers STVM_OK, or the first error (spawning or running). */
int micro_memory_run(long n, micro_memory *m);

#endif
