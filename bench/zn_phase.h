/*
 * stvm-bench zn --phase-plot (zn_phase.c): the subscriber/off ratio of the modelled
 * world over the wake-up cost and the subscriber's cost, with the seed's point, the
 * fitting region and real runs marked.
 */
#ifndef STVM_BENCH_ZN_PHASE_H
#define STVM_BENCH_ZN_PHASE_H

#include "bench.h"
#include "zn_measure.h"

/* A real run drawn on the diagram: where its own costs put it, and what it measured. */
typedef struct zn_phase_point {
    char label[96];
    double wake_us;                 /* its wake-ups' cost (the recording's median, plus
                                       what was injected) */
    double subscriber_cost_us;
    double ratio;                   /* its subscriber's requests/s over logging off's */
} zn_phase_point;

/* Draw the diagram around `around` (its wake_inject_us and subscriber_cost_us are the
 * axes, its other knobs held) into png, with the data beside it as .csv: 0, or an error
 * with why. Runs 31 x 21 grid cells of three model cells each (a few seconds). */
int zn_phase(const zn_config *around, long long requests, uint32_t seed,
             const zn_phase_point *runs, int nruns, const bench_invocation *inv,
             const char *png, char *why, size_t whysize);

#endif
