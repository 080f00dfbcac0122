/*
 * stvm-bench zn --phase-plot: the inversion's phase diagram. Around one configuration of
 * the modelled world, the subscriber's rate over logging off's (the seed's 2.3-2.7) on a
 * grid of the two costs the inversion trades: what a blocked read costs (the wake-up)
 * and what the subscriber adds per event. Each grid cell runs the three cells of the
 * deterministic model; the cells where the seed's three figures fit are marked, the
 * configuration itself is the seed's point, and real runs are drawn where their own
 * costs put them. One bench_results of records, drawn by bench/plots/zn-phase.gp.
 */
#include "zn_phase.h"

#include <math.h>
#include <string.h>

#include "bench.h"
#include "zn_fit.h"

#define PHASE_WAKE_MAX 600
#define PHASE_WAKE_STEP 20
#define PHASE_SUB_MAX 80
#define PHASE_SUB_STEP 4

static void point(bench_results *r, const char *kind, const char *label, double wake,
                  double sub, double ratio, double fits)
{
    bench_record *rec = bench_record_add(r, kind);
    bench_param_add(rec, "label", "%s", label);
    const struct { const char *name; double v; int dec; } m[] = {
        {"wake_us", wake, 0}, {"subscriber_cost_us", sub, 0}, {"sub_over_off", ratio, 3},
        {"fits", fits, 0}};
    for (size_t i = 0; i < sizeof m / sizeof *m; i++)
        bench_metric_add(rec, m[i].name, i < 2 ? "us" : "", BENCH_BETTER_NONE, m[i].dec,
                         &m[i].v, 1);
}

int zn_phase(const zn_config *around, long long requests, uint32_t seed,
             const zn_phase_point *runs, int nruns, const bench_invocation *inv,
             const char *png, char *why, size_t whysize)
{
    bench_results r;
    bench_results_init(&r, "zn");
    int err = 0, fitting = 0, cells = 0;
    for (uint32_t w = 0; w <= PHASE_WAKE_MAX && !err; w += PHASE_WAKE_STEP)
        for (uint32_t g = 0; g <= PHASE_SUB_MAX && !err; g += PHASE_SUB_STEP) {
            zn_config k = *around;
            k.wake_inject_us = w;
            k.subscriber_cost_us = g;
            zn_triple t;
            if ((err = zn_triple_run(&k, requests, seed, &t, why, whysize)))
                break;
            point(&r, "grid", "", w, g, t.rps[ZN_SUB] / t.rps[ZN_OFF], t.fits);
            fitting += t.fits;
            cells++;
        }
    if (!err) {
        char label[96];
        snprintf(label, sizeof label, "seed (fitted: %u us, %u us)", around->wake_inject_us,
                 around->subscriber_cost_us);
        point(&r, "seed", label, around->wake_inject_us, around->subscriber_cost_us,
              (SEED2_SUB_LO_RPS + SEED2_SUB_HI_RPS) / 2 / SEED2_OFF_RPS, 1);
        for (int i = 0; i < nruns; i++)
            point(&r, "run", runs[i].label, runs[i].wake_us, runs[i].subscriber_cost_us,
                  runs[i].ratio, 0);
        bench_results_note(&r, "%d of %d grid cells fit the seed", fitting, cells);
        if (!bench_plot(&r, inv, "zn-phase.gp", png)) {
            snprintf(why, whysize, "the phase diagram could not be written to %s", png);
            err = STVM_ESYS;
        }
    }
    bench_results_free(&r);
    return err;
}
