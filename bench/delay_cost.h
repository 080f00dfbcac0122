/*
 * stvm-bench delay --sim-cost: a modelled CPU cost per operation of the Delay machinery,
 * charged as simulated time on the simulated clock.
 *
 * On the simulated clock nothing costs time, so every representation reaches the rate the
 * durations allow. The model gives each counted operation a cost in nanoseconds, times one
 * scale factor:
 *
 *   charged = scale * (delay * delays_scheduled + pass * timing_loop_passes
 *                      + read * clock_reads + box * boxed_allocated
 *                      + liop * large_int_ops + switch * context_switches)
 *
 * over the counters of stvm_stats (the VM's own, so whatever process did the operation).
 * A worker charges what was counted since the last charge, after each of its waits, with
 * stvm_work_us; the fraction of a microsecond left over is carried to the next charge, in
 * integer picoseconds, so a run is deterministic (the same output byte for byte).
 *
 * The preset "seed1" (experiments/delay-benchmark/README.md, "The simulated cost model") takes the
 * relative costs from stvm's own measurements and one scale calibrated so that
 * ms-smallint31 peaks where Pharo 2015's did (about 128,500 delays per second, 7.8 µs per
 * delay, at N = 5,000).
 */
#ifndef STVM_BENCH_DELAY_COST_H
#define STVM_BENCH_DELAY_COST_H

#include "bench.h"

/* The operations the model charges, in the order of the specification's keys. */
#define DELAY_COST_OPS(X)                                                              \
    X(delay, delays_scheduled)     /* everything a delay costs that is not below */    \
    X(pass, timing_loop_passes)                                                         \
    X(read, clock_reads)           /* primitives 135 and 240 */                         \
    X(box, boxed_allocated)        /* making a LargePositiveInteger and releasing it */ \
    X(liop, large_int_ops)         /* an integer operation with a boxed operand */      \
    X(switch, context_switches)

enum {
#define DELAY_COST_INDEX(key, stat) DELAY_COST_##key,
    DELAY_COST_OPS(DELAY_COST_INDEX)
#undef DELAY_COST_INDEX
    DELAY_COST_NOPS
};

typedef struct delay_cost {
    bool on;                        /* false: "none", nothing is charged */
    char name[24];                  /* "seed1", "custom" (a preset with an override too) */
    double ns[DELAY_COST_NOPS];     /* per operation, before the scale */
    double scale;
} delay_cost;

/* Parses a --sim-cost value: "none"; a preset ("seed1"); or a comma list of key=value
 * (keys delay, pass, read, box, liop, switch in ns, and scale), which may start with a
 * preset whose values it then overrides. Keys not given are 0 (scale 1) without a
 * preset. Errors (false, with a sentence in why):
 *   an unknown preset or key, or a preset after an item;
 *   a value that is not a number from 0 to 1e9, or a key given twice;
 *   an operation that would cost more than a second (ns x scale > 1e9). */
bool delay_cost_parse(const char *spec, delay_cost *out, char *why, size_t whysize);

/* The model in one line for people: "seed1: scale 14.5 x (delay 508 ns, ...)". */
void delay_cost_describe(const delay_cost *c, char *buf, size_t size);

/* One run's charging state (counters at the last charge, the carried fraction). */
typedef struct delay_cost_meter {
    int64_t ps[DELAY_COST_NOPS];    /* scale * ns, as integer picoseconds */
    stvm_stats last;
    uint64_t carry_ps;              /* charged cost not yet a whole microsecond */
    uint64_t charged_us;            /* simulated time charged so far */
} delay_cost_meter;

/* Starts a meter on vm's counters now. */
void delay_cost_start(delay_cost_meter *m, const delay_cost *c, stvm_vm *vm);

/* Charges what was counted since the last charge, from a green process of vm, as work
 * (stvm_work_us) at `priority` when that is above the caller's, then back at its own: a
 * deadline on the way lets the timing process run, but the charge is not put behind the
 * caller's peers (preemption_yields would), so no peer enters a delay on work not yet
 * done. Switches; never allocates.
 * Errors: those of stvm_work_us (EINTR when the caller's waits are cancelled) and of
 * stvm_process_set_priority. */
int delay_cost_charge(delay_cost_meter *m, stvm_vm *vm, int priority);

#endif
