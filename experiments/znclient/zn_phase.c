/*
 * znclient --phase: the inversion's phase diagram. Around one configuration of the
 * modelled world, the subscriber's rate over logging off's (the seed's 2.3-2.7) on a
 * grid of the two costs the inversion trades: what a blocked read costs (the wake-up)
 * and what the subscriber adds per event. Each grid cell runs the three cells of the
 * deterministic model.
 */
#include "zn_phase.h"

#include "zn_fit.h"

int zn_phase(const zn_config *around, long long requests, uint32_t seed,
             zn_phase_cell cells[ZN_PHASE_CELLS], char *why, size_t whysize)
{
    int n = 0;
    for (uint32_t w = 0; w <= ZN_PHASE_WAKE_MAX; w += ZN_PHASE_WAKE_STEP)
        for (uint32_t g = 0; g <= ZN_PHASE_SUB_MAX; g += ZN_PHASE_SUB_STEP) {
            zn_config k = *around;
            k.wake_inject_us = w;
            k.subscriber_cost_us = g;
            zn_triple t;
            int err = zn_triple_run(&k, requests, seed, &t, why, whysize);
            if (err)
                return err;
            cells[n++] = (zn_phase_cell){w, g, t.rps[ZN_SUB] / t.rps[ZN_OFF], t.fits};
        }
    return 0;
}
