/*
 * stvm-bench zn: what the command's files share (zn.c: the options, the rows, the runs;
 * zn_report.c: the records, the seed's tables, the targets, the report's words, the
 * phase diagram's real runs).
 */
#ifndef STVM_BENCH_ZN_CMD_H
#define STVM_BENCH_ZN_CMD_H

#include "bench.h"
#include "record.h"
#include "zn_fit.h"
#include "zn_measure.h"
#include "zn_preset.h"
#include "zn_world.h"

#define ZN_MAX_REPEAT 20
#define ZN_MAX_ROWS 400
#define ZN_WRK_NFIGS 6              /* the wrk row's figures (zn_report.c) */

extern const char *const zn_logging_words[], *const zn_events_words[], *const zn_mode_words[],
    *const zn_wait_words[], *const zn_onoff_words[];
extern const bench_command zn_command;

typedef struct zn_opts {
    unsigned logging, events, modes, wait, background;
    bench_ints cost, idle_us, inject, before, between, after, server, jitter, client;
    long long event_cost_us, requests, warmup, max_seconds, repeat, wrk_seconds, seed;
    long long fit_requests;
    int preset, with_preset;
    bool no_wrk, model, fit;
    const char *url, *plot, *report, *record, *replay, *phase_plot;
} zn_opts;

typedef struct zn_row {
    zn_config cfg;
    int nsamples;                   /* repetitions that ran */
    zn_counts samples[ZN_MAX_REPEAT];
    double wrk[ZN_WRK_NFIGS][ZN_MAX_REPEAT];   /* the wrk row only: wrk_figs' samples */
    int nversus;                    /* replays of a recorded run (or its recording) */
    double versus_rps[ZN_MAX_REPEAT], versus_blocked[ZN_MAX_REPEAT];
    char note[272];                 /* "repetition K failed: " and a why */
} zn_row;

/* One run of the command: the options, the server, the rows. */
typedef struct zn_run {
    const zn_opts *o;
    bench_invocation *inv;
    char host[64], url[512];
    const char *path;
    int port;
    size_t body_size;               /* 0: not known (--url) */
    zn_world_kind world;
    zn_row *rows;
    int nrows;
    FILE *record;                   /* --record, open during the sweep */
    zn_recording replayed;          /* --replay's file, or --record's read back */
} zn_run;

/* zn.c */
int zn_find_row(const zn_run *z, const zn_config *k);
/* One of a preset's three cells in z's world, into *k (which it answers). */
const zn_config *zn_preset_cell(const zn_run *z, const zn_preset *p, zn_logging l, zn_config *k);
const char *zn_row_text(const zn_config *k, char *buf, size_t size);
double zn_sample_rps(const zn_counts *c);
double zn_sample_blocked(const zn_counts *c);

/* zn_report.c */
/* The wrk row's figures of one repetition into row (run_wrk's order). */
void zn_wrk_figures(zn_row *row, int k, double rps, double p50, double p99, double errors);
/* Everything the outputs show: a record per row, the seed's tables (seed 2 side by side
 * first, then the fit when fit is not NULL, then the sweep), the targets. */
void zn_results(const zn_run *z, bench_results *r, const zn_fit_result *fit);
/* After bench_judge: a target's note (the reason for a miss, read off the counters)
 * stays only beside a miss. */
void zn_explain(bench_results *r);
/* The report's words above the tables (bench_report's prose). */
void zn_prose(FILE *f, const bench_results *r, const void *data);
/* --phase-plot: false when it could not be drawn (said on stderr). */
bool zn_phase_plot(const zn_run *z);

#endif
