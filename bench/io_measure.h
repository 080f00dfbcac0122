/*
 * stvm-bench io: the measurements (the three loopback ping-pongs in io_pingpong.c, the
 * many-connections echo in io_many.c). Measurement only: they fill the data of
 * io_report.h (io_counts, io_many_result) and print nothing but progress.
 */
#ifndef STVM_BENCH_IO_MEASURE_H
#define STVM_BENCH_IO_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stvm.h>

#include "bench.h"
#include "io_report.h"

typedef struct io_pingpong_params {
    int idle_mode;                  /* STVM_IDLE_*; ignored by the OS-thread pair */
    long long round_trips;          /* timed, after the warm-up */
    double max_seconds;             /* the timed stretch stops here even if short */
    int cpu;                        /* where peer OS threads are pinned; -1 = not pinned */
    int64_t timeout_ms;             /* every socket wait's timeout (-1 = forever) */
    const bench_trace *trace;       /* the VM's trace (not the OS-thread pair's), or NULL */
} io_pingpong_params;

/* 1-byte round trips over loopback TCP:
 *  - vm: two green processes of one VM (plain stvm sockets);
 *  - thread: a green process against an OS thread with a blocking socket;
 *  - os: two OS threads with blocking sockets (the reference).
 * Each answers 0 and fills *c, or a negative stvm error (-1 for a system failure in
 * the OS-thread pair) and a sentence in why. */
int io_pingpong_vm(const io_pingpong_params *p, io_counts *c, char *why, size_t whysize);
int io_pingpong_thread(const io_pingpong_params *p, io_counts *c, char *why, size_t whysize);
int io_pingpong_os(const io_pingpong_params *p, io_counts *c, char *why, size_t whysize);

/* Many connections in one VM: an echo server (an accepting process that spawns a
 * handler per connection) and N client processes, each end with a SocketStream. */
typedef struct io_many_params {
    int idle_mode;
    long connections;
    int messages;                   /* per client, after the first (warm-up) exchange */
    int message_bytes;
    int64_t timeout_ms;
    const char *tag;                /* progress on stderr ("[tag] ..."), or NULL */
    const bench_trace *trace;       /* the server VM's trace (this process's), or NULL */
} io_many_params;

int io_many_run(const io_many_params *p, io_many_result *r, char *why, size_t whysize);

/* Shared by both files: the counters at one moment, and their difference. */
typedef struct io_snapshot {
    int64_t mono_ns, cpu_ns;
    long long nvcsw, nivcsw;
    stvm_stats vm;                  /* zero when no VM took part */
} io_snapshot;

/* vm may be NULL (the OS-thread pair). */
void io_snapshot_take(stvm_vm *vm, io_snapshot *s);
void io_counts_between(const io_snapshot *a, const io_snapshot *b, io_counts *c);

#endif
