/*
 * stvm-bench io: what the command (io.c) asks of its measurements: the three loopback
 * ping-pongs (io_pingpong.c) and many connections to an echo server (io_many.c). They
 * answer counts and print nothing.
 */
#ifndef STVM_BENCH_IO_H
#define STVM_BENCH_IO_H

#include "bench.h"

/* The VM's counters that tell how a stretch waited (stvm_stats members), listed once
 * for the counts and the metrics per round trip: X(member, metric, unit, decimals, better). */
#define IO_VM_COUNTERS(X)                                                               \
    X(os_sleeps, "wakeups_per_round_trip", "", 2, LOWER)                                \
    X(os_slept_us, "os_slept_us_per_round_trip", "us", 1, LOWER)                        \
    X(wakeups_io, "wakeups_io_per_round_trip", "", 2, NONE)                             \
    X(wakeups_timer, "wakeups_timer_per_round_trip", "", 2, NONE)                       \
    X(wakeups_relinquish, "wakeups_relinquish_per_round_trip", "", 2, NONE)             \
    X(wakeups_external, "wakeups_external_per_round_trip", "", 2, NONE)                 \
    X(fds_ready, "fds_ready_per_round_trip", "", 2, NONE)                               \
    X(io_signals_unwaited, "io_signals_unwaited_per_round_trip", "", 2, NONE)           \
    X(io_polls_busy, "io_polls_busy_per_round_trip", "", 3, NONE)                       \
    X(socket_reads_blocked, "socket_reads_blocked_per_round_trip", "", 2, LOWER)        \
    X(timed_waits, "timed_waits_per_round_trip", "", 2, NONE)                           \
    X(context_switches, "context_switches_per_round_trip", "", 2, LOWER)

/* What a timed stretch cost: wall and process CPU time (every thread), the process's OS
 * context switches (getrusage), the VM's counters (zero where no VM took part). */
typedef struct io_counts {
    long long round_trips;          /* timed round trips (messages echoed for many) */
    bool cut_short;                 /* the time limit ended it before its round trips */
    int64_t wall_ns, cpu_ns;
    long long voluntary_switches, involuntary_switches;
#define IO_MEMBER(member, metric, unit, decimals, better) uint64_t member;
    IO_VM_COUNTERS(IO_MEMBER)
#undef IO_MEMBER
} io_counts;

/* to += sign * c for every clock and counter (round_trips and cut_short apart). */
void io_counts_add(io_counts *to, const io_counts *c, int sign);
/* c += sign * the clocks and counters now (vm NULL: no VM counters), so -1 at a
 * stretch's start and 1 at its end leave what it cost. */
void io_counts_take(stvm_vm *vm, io_counts *c, int sign);

/* What a cell runs with (a ping-pong reads the first group, many the second). */
typedef struct io_params {
    int idle_mode;                  /* STVM_IDLE_*; ignored by the OS-thread pair */
    int64_t timeout_ms;             /* every socket wait's timeout (-1 = forever) */
    const bench_trace *trace;       /* the VM's (many: the server's), or NULL */
    int cpu;                        /* where peer OS threads are pinned; -1 = not pinned */
    long long round_trips;          /* timed, after the warm-up */
    double max_seconds;             /* the timed stretch stops here even if short */
    long connections;
    int messages;                   /* per client, after the first (warm-up) exchange */
    int message_bytes;              /* 1..IO_MAX_MESSAGE */
} io_params;
#define IO_MAX_MESSAGE 512

/* A fresh VM in p's idle mode (legacy sleeps Pharo 5's quantum), listening on 127.0.0.1
 * (a port the system picks) when listener is not NULL, with trace started: STVM_OK, or
 * the stvm error and a sentence in why. Allocates the VM (the caller frees it). */
int io_vm_start(const io_params *p, const bench_trace *trace, int backlog, stvm_vm **vm,
                stvm_socket **listener, char *why, size_t whysize);

/* The ping-pong pairs, in --case's order: two green processes of one VM, a green
 * process against an OS thread, two OS threads on blocking sockets (the reference). */
typedef enum io_pair { IO_PAIR_VM, IO_PAIR_THREAD, IO_PAIR_OS } io_pair;

/* 1-byte round trips over loopback TCP between the pair: 0 and *c filled, or a
 * negative stvm error (-1 for a failure outside the VM) and a sentence in why. Runs a
 * VM (not IO_PAIR_OS) and OS threads (not IO_PAIR_VM). */
int io_pingpong(io_pair pair, const io_params *p, io_counts *c, char *why, size_t whysize);

/* One process of the many case, before the first connection and with all of them open. */
typedef struct io_many_side {
    uint64_t rss_before, rss_after;     /* bytes, /proc/self/statm */
    uint64_t live_before, live_after;   /* its VM's bytes_live */
} io_many_side;

typedef struct io_many_result {
    long connected;                 /* connections held at the memory reading */
    io_many_side server, client;    /* this process (handlers), the child (clients) */
    io_counts counts;               /* the exchanges (round_trips = messages): the server's
                                       wall time; both processes' CPU and switches */
} io_many_result;

/* An echo server in this process's VM (an accepting process that spawns a handler per
 * connection) and p->connections client processes in a forked child's VM, each end
 * with a SocketStream: 0 and *r filled, or an stvm error and a sentence in why. Forks
 * the child (it dies with the tool) and runs a VM in each process. */
int io_many_run(const io_params *p, io_many_result *r, char *why, size_t whysize);

#endif
