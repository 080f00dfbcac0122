/*
 * stvm-bench micro: the measurements (hand-off and raw switch in micro_pingpong.c,
 * memory per blocked process in micro_memory.c). Measurement only: they answer
 * numbers and print nothing but progress.
 */
#ifndef STVM_BENCH_MICRO_MEASURE_H
#define STVM_BENCH_MICRO_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

/* What a hand-off goes through: a semaphore's signal and wait, or a SharedQueue's put
 * and take. */
typedef enum micro_channel { MICRO_SEMAPHORE, MICRO_QUEUE, MICRO_MONITOR } micro_channel;
/* MICRO_MONITOR: each party holds the monitor in turn and hands it over with a signal
 * and a condition wait (the wait releases it, the woken partner takes it again). */

/* ns per hand-off between two green processes of equal priority in a fresh VM (traced
 * as trace says; NULL: not): STVM_OK, or a negative stvm error and a sentence in why. */
int micro_handoff(micro_channel channel, long long handoffs, const bench_trace *trace,
                  double *ns, char *why, size_t whysize);
/* ns per uncontended stvm_monitor_enter + stvm_monitor_exit by one green process, over
 * `pairs` pairs: STVM_OK, or a negative stvm error and a sentence in why. */
int micro_monitor_enter_exit(long long pairs, double *ns, char *why, size_t whysize);
/* ns per hand-off between two OS threads pinned to cpu: 0, or -1 if the threads could
 * not be made or pinned. */
int micro_pthread_handoff(long long handoffs, int cpu, double *ns);

/* n processes each blocked on its own semaphore, in a fresh VM of the default
 * configuration. */
typedef struct micro_memory {
    long asked, spawned;
    int spawn_err;                  /* why spawning stopped short; STVM_OK if it did not */
    int run_err;                    /* a failure of the VM or of a process */
    uint64_t rss_before, rss_after; /* bytes, /proc/self/statm */
    uint64_t live_before, live_after; /* the VM's bytes_live */
} micro_memory;

/* Fills *m; answers STVM_OK, or the first error (spawning or running). With tag, a
 * progress line ("[tag] ...") goes to stderr while it spawns. */
int micro_memory_run(long n, const char *tag, micro_memory *m);

#endif
