/*
 * The ZnClient experiment's program, build/experiments/znclient: what its files share
 * (zn_options.c: the option table and its parser; zn.c: the rows, the runs, main;
 * zn_output.c: the JSON it writes). It measures and writes data only; report.py makes
 * the tables, the targets, the words and the plots from that JSON.
 */
#ifndef STVM_ZNCLIENT_CMD_H
#define STVM_ZNCLIENT_CMD_H

#include <stdio.h>

#include "zn_fit.h"
#include "zn_measure.h"
#include "zn_phase.h"
#include "zn_preset.h"
#include "zn_world.h"

#define ZN_MAX_REPEAT 20
#define ZN_MAX_ROWS 400
#define ZN_MAX_LIST 64              /* values in one list option (A..B:STEP included) */

/* Exit statuses: ran; a run failed or an output could not be written; a usage error
 * (before anything runs). ZN_GO_ON: the parser found nothing wrong. */
enum { ZN_EXIT_OK = 0, ZN_EXIT_FAIL = 1, ZN_EXIT_USAGE = 2, ZN_GO_ON = -1 };

extern const char *const zn_logging_words[], *const zn_events_words[], *zn_mode_words[],
    *const zn_wait_words[], *const zn_onoff_words[];

/* A list option's values: "1,2,3", "A..B" or "A..B:STEP", or both, comma-separated. */
typedef struct zn_ints {
    long long v[ZN_MAX_LIST];
    int n;
} zn_ints;

/* What the option table (zn_options.c) fills. */
typedef struct zn_opts {
    unsigned logging, events, modes, wait, background;   /* word sets, a bit per word */
    zn_ints cost, idle_us, inject, before, between, after, server, jitter, client;
    long long event_cost_us, requests, warmup, max_seconds, repeat, wrk_seconds, seed;
    long long fit_requests, cpu;
    int preset, with_preset;
    bool no_wrk, model, fit, phase, quiet, no_context;
    const char *url, *record, *replay, *out, *trace;
} zn_opts;

/* Parse argv into *o (every option's default first): ZN_GO_ON, ZN_EXIT_OK after --help,
 * or ZN_EXIT_USAGE with the reason on stderr. */
int zn_parse(int argc, char **argv, zn_opts *o);
/* A usage error: "znclient: " and the message on stderr, the hint to --help;
 * answers ZN_EXIT_USAGE. */
int zn_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One configuration's row: its samples, one per repetition that ran. */
typedef struct zn_wrk_sample {
    double rps, p50_us, p99_us, errors;
} zn_wrk_sample;

typedef struct zn_row {
    zn_config cfg;
    int nsamples;                   /* repetitions that ran */
    zn_counts samples[ZN_MAX_REPEAT];
    zn_wrk_sample wrk[ZN_MAX_REPEAT];   /* the wrk row only */
    int nversus;                    /* replays of a recorded run (or its recording) */
    double versus_rps[ZN_MAX_REPEAT], versus_blocked[ZN_MAX_REPEAT];
    char note[272];                 /* "repetition K failed: " and a why */
} zn_row;

/* One run of the program: the options, the server, the rows. */
typedef struct zn_run {
    const zn_opts *o;
    char host[64], url[512];
    const char *path;
    int port;
    size_t body_size;               /* 0: not known (--url) */
    zn_world_kind world;
    zn_row *rows;
    int nrows;
    FILE *record;                   /* --record, open during the sweep */
    zn_recording replayed;          /* --replay's file, or --record's read back */
    int done, total;                /* progress: cells run, and to run */
} zn_run;

/* zn.c */
int zn_find_row(const zn_run *z, const zn_config *k);
/* One of a preset's three cells in z's world, into *k (which it answers). */
const zn_config *zn_preset_cell(const zn_run *z, const zn_preset *p, zn_logging l,
                                zn_config *k);
/* The preset the run shows beside the seed (--preset, else --with-preset), or NULL. */
const zn_preset *zn_shown_preset(const zn_opts *o);
double zn_sample_rps(const zn_counts *c);
double zn_sample_blocked(const zn_counts *c);
/* The median of v[0..n) (sorts v); NaN when n is 0. */
double zn_median(double *v, size_t n);

/* What zn_output writes beside the rows: the seed's preset in the model, the fit, the
 * phase grid (each NULL when not run). */
typedef struct zn_extras {
    const zn_triple *preset_model;
    const zn_fit_result *fit;
    const zn_phase_cell *phase;     /* ZN_PHASE_CELLS of them */
    const zn_config *phase_around;
} zn_extras;

/* zn_output.c: the run as one JSON document on f; false on a write error. */
bool zn_output(FILE *f, const zn_run *z, const zn_extras *x);

#endif
