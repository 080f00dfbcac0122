/*
 * znclient --phase (zn_phase.c): the subscriber/off ratio of the modelled world over the
 * wake-up cost and the subscriber's cost, on a grid around one configuration. report.py
 * draws it (zn-phase.gp) with the seed's point and the real runs.
 */
#ifndef STVM_ZNCLIENT_PHASE_H
#define STVM_ZNCLIENT_PHASE_H

#include "zn_measure.h"

#define ZN_PHASE_WAKE_MAX 600
#define ZN_PHASE_WAKE_STEP 20
#define ZN_PHASE_SUB_MAX 80
#define ZN_PHASE_SUB_STEP 4
#define ZN_PHASE_CELLS ((ZN_PHASE_WAKE_MAX / ZN_PHASE_WAKE_STEP + 1) * \
                        (ZN_PHASE_SUB_MAX / ZN_PHASE_SUB_STEP + 1))

/* One grid cell: its two costs, the subscriber's requests/s over logging off's, and
 * whether the seed's three figures fit there. */
typedef struct zn_phase_cell {
    uint32_t wake_us, subscriber_cost_us;
    double ratio;
    bool fits;
} zn_phase_cell;

/* The grid around `around` (its wake_inject_us and subscriber_cost_us are the axes, its
 * other knobs held) into cells[ZN_PHASE_CELLS], the wake-up cost outermost: 0, or an
 * error with why. Runs 31 x 21 cells of three model runs each (a few seconds). */
int zn_phase(const zn_config *around, long long requests, uint32_t seed,
             zn_phase_cell cells[ZN_PHASE_CELLS], char *why, size_t whysize);

#endif
