/*
 * The ZnClient experiment: the seed's three figures against the modelled world (zn_fit.c). The
 * seed (Pharo 6/7 on a 2017 Mac, ZnClient against a local nginx): logging off about
 * 3,000 requests/s, on 2,500, on with the GT inspector subscribed 7,000-8,000. A
 * configuration of the model's physical parameters is judged by its worst relative
 * error against those figures, and fits when every error is within 15%, on is slower
 * than off, and the subscriber more than twice as fast as off.
 */
#ifndef STVM_ZNCLIENT_FIT_H
#define STVM_ZNCLIENT_FIT_H

#include "zn_measure.h"

/* The seed's figures. */
#define SEED2_OFF_RPS 3000.0
#define SEED2_ON_RPS 2500.0
#define SEED2_SUB_LO_RPS 7000.0
#define SEED2_SUB_HI_RPS 8000.0
#define SEED2_TOLERANCE 0.15

/* The three cells of one configuration: logging off, on, subscriber (to all events). */
enum { ZN_OFF, ZN_ON, ZN_SUB, ZN_TRIPLE };

typedef struct zn_triple {
    zn_config cfg;                  /* the subscriber cell's; the others differ in logging */
    double rps[ZN_TRIPLE], blocked[ZN_TRIPLE];
    double err[ZN_TRIPLE];          /* relative errors against the seed (the subscriber's
                                       against 7,000-8,000: 0 inside) */
    double score;                   /* the worst |error|, plus a tenth of their mean */
    bool fits;
} zn_triple;

/* The model's physical parameters the fit moves (a zn_config field each, in us; what
 * each stands for is in the report, report.py). */
typedef struct zn_fit_param {
    const char *name;               /* the field's name, as the JSON's config has it */
    size_t offset;                  /* of the uint32_t in zn_config */
    uint32_t lo, hi;
} zn_fit_param;

#define ZN_FIT_NPARAMS 7
extern const zn_fit_param zn_fit_params[ZN_FIT_NPARAMS];
/* zn_fit_params' row of the idle quantum, which only one family moves. */
#define ZN_FIT_PARAM_IDLE (ZN_FIT_NPARAMS - 1)

/* The families of worlds searched: an idle mode, with Pharo 6's 1 ms quantum or the
 * quantum as a parameter; pharo: a world Pharo 6/7 ran in (the best fit is of these). */
typedef struct zn_fit_family {
    int mode;                       /* STVM_IDLE_* */
    bool quantum_moves, pharo;
} zn_fit_family;
#define ZN_FIT_FAMILIES 3
extern const zn_fit_family zn_fit_families[ZN_FIT_FAMILIES];

/* Run the three cells of cfg (its logging ignored) in the modelled world, `requests`
 * timed after a tenth as many of warm-up: 0 and *t judged against the seed, or a
 * negative stvm error with why. */
int zn_triple_run(const zn_config *cfg, long long requests, uint32_t seed, zn_triple *t,
                  char *why, size_t whysize);

/* What the search found. */
typedef struct zn_fit_result {
    zn_triple best;                 /* the lowest score of all */
    zn_triple best_family[ZN_FIT_FAMILIES];   /* per family (zn_fit_families) */
    bool quantum_moves;             /* the best's family fits the idle quantum too */
    long evaluated, fitting;
    uint32_t region_lo[ZN_FIT_NPARAMS], region_hi[ZN_FIT_NPARAMS];  /* over every fitting
                                       configuration evaluated */
    uint32_t scan_lo[ZN_FIT_NPARAMS], scan_hi[ZN_FIT_NPARAMS];  /* one parameter moved
                                       from the best, the others kept: where it fits */
    double at_minus[ZN_FIT_NPARAMS], at_plus[ZN_FIT_NPARAMS];   /* the score with the
                                       parameter at 0.8x and 1.2x the best's */
    double seconds;                 /* the search's wall time */
} zn_fit_result;

/* The search: deterministic random configurations in the parameters' ranges for the
 * poll mode (Pharo 6's 1 ms quantum) and the legacy mode, then coordinate descent from
 * the best of each, then a scan of each parameter around the best. 0 or an error with
 * why. Allocates and frees a VM per cell: thousands of cells, seconds. */
int zn_fit(long long requests, uint32_t seed, zn_fit_result *out, char *why, size_t whysize);

#endif
