/*
 * stvm-bench zn: the ZnClient experiment (Sven Van Caekenberghe's report: logging off
 * about 3,000 requests/s, on 2,500, on with an inspector subscribed 7,000-8,000). Within
 * a repetition wrk runs first, then every configuration once in a fresh VM (zn_run.c),
 * so that noise hits them alike.
 */
#include "bench.h"
#include "nginx.h"
#include "record.h"
#include "render.h"
#include "wrk.h"
#include "zn_fit.h"
#include "zn_measure.h"
#include "zn_phase.h"
#include "zn_preset.h"
#include "zn_world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ZN_MAX_REPEAT 20
#define ZN_MAX_ROWS 400

static const char *const logging_words[] = {"off", "on", "subscriber", NULL};
static const char *const events_words[] = {"written", "read", "transaction", "all", NULL};
static const char *const mode_words[] = {"poll", "legacy", "spin", NULL}; /* STVM_IDLE_* */
static const char *const wait_words[] = {"timed", "plain", NULL};
static const char *const onoff_words[] = {"off", "on", NULL};

typedef struct zn_opts {
    unsigned logging, events, modes, wait, background;
    bench_ints cost, idle_us, inject, before, between, after, server, jitter, client;
    long long event_cost_us, requests, warmup, max_seconds, repeat, wrk_seconds, seed;
    long long fit_requests;
    int preset, with_preset;
    bool no_wrk, model, fit;
    const char *url, *plot, *report, *record, *replay, *phase_plot;
} zn_opts;

static const bench_opt zn_table[] = {
    BENCH_WORDS("logging", "off,on,subscriber", logging_words, zn_opts, logging,
                "off: level 0, no event built; on: level 3, three ZnLogEvents per request "
                "announced to nobody; subscriber: level 3 and a synchronous subscriber."),
    BENCH_INTS("subscriber-cost-us", "60", 0, 100000, zn_opts, cost,
               "CPU per delivered event (varies the subscriber rows only)."),
    BENCH_WORDS("subscriber-events", "all", events_words, zn_opts, events,
                "The class subscribed to (varies the subscriber rows only)."),
    BENCH_WORDS("idle-mode", "poll,legacy,spin", mode_words, zn_opts, modes, "The VM's idle mode."),
    BENCH_INTS("idle-us", "1000", 1, 10000000, zn_opts, idle_us,
               "The relinquish quantum (1000: Pharo 6; 50000: Pharo 7 after February 2018)."),
    BENCH_INTS("wake-inject-us", "0", 0, 1000000, zn_opts, inject,
               "Extra latency after every OS sleep."),
    BENCH_INTS("before-us", "0", 0, 100000, zn_opts, before, "CPU work before the send."),
    BENCH_INTS("between-us", "0", 0, 100000, zn_opts, between,
               "CPU work between the send and the first read."),
    BENCH_INTS("after-us", "0", 0, 100000, zn_opts, after, "CPU work after the read."),
    BENCH_WORDS("wait", "timed", wait_words, zn_opts, wait,
                "timed: waitForDataFor: (Pharo's); plain: waitForDataIfClosed:."),
    BENCH_WORDS("background", "off", onoff_words, zn_opts, background,
                "on: a busy process at priority 30, so the idle process never runs."),
    BENCH_INT("event-cost-us", "N", "5", 0, 100000, zn_opts, event_cost_us,
              "CPU to build one ZnLogEvent."),
    BENCH_INT("requests", "N", "2000", 10, 100000000, zn_opts, requests,
              "Timed requests per configuration."),
    BENCH_INT("warmup", "N", "200", 0, 1000000, zn_opts, warmup, "Requests before the timed ones."),
    BENCH_INT("max-seconds", "S", "2", 1, 3600, zn_opts, max_seconds,
              "Time limit of a configuration's timed part."),
    BENCH_INT("repeat", "K", "3", 1, ZN_MAX_REPEAT, zn_opts, repeat,
              "Repetitions; every figure keeps each one's sample."),
    BENCH_INT("wrk-seconds", "S", "2", 1, 60, zn_opts, wrk_seconds,
              "wrk's duration per repetition."),
    BENCH_FLAG("no-wrk", zn_opts, no_wrk, "No wrk baseline."),
    BENCH_FLAG("model", zn_opts, model,
               "Run against a modelled world on the simulated clock instead of nginx: a server "
               "that answers --server-us (plus a spread) after the request left, the "
               "client's own CPU as --client-us of work, --wake-inject-us of simulated time "
               "after every OS sleep; the same client, scheduler and Delays, no wall clock, "
               "the same figures on every run."),
    BENCH_INTS("server-us", "30", 0, 1000000, zn_opts, server,
               "--model: the server's turnaround, at least this (us)."),
    BENCH_INTS("server-jitter-us", "10", 0, 1000000, zn_opts, jitter,
               "--model: plus an exponential spread of this mean (us)."),
    BENCH_INTS("client-us", "20", 0, 1000000, zn_opts, client,
               "--model: the client's own CPU per request, half before the send and half "
               "parsing the response (us)."),
    BENCH_INT("model-seed", "N", "42", 0, 4294967295LL, zn_opts, seed,
              "--model: the turnaround spread's generator."),
    BENCH_WORD("preset", "none", zn_preset_words, zn_opts, preset,
               "A named world's three cells (logging off, on, subscriber) instead of the "
               "knobs' sweep: its idle mode and quantum, wake-up cost, event and subscriber "
               "costs, and with --model its server and client. seed2-2017: the seed's "
               "world as --fit found it."),
    BENCH_WORD("with-preset", "none", zn_preset_words, zn_opts, with_preset,
               "The named world's three cells beside the knobs' sweep."),
    BENCH_OUTPUT("phase-plot", zn_opts, phase_plot,
                 "Draw the inversion's phase diagram into this PNG: the subscriber/off "
                 "ratio of the modelled world around the preset (seed2-2017 unless "
                 "--preset or --with-preset names another) over the wake-up cost and the "
                 "subscriber's cost, the seed's point, where the seed fits, and this run's "
                 "real rows (bench/plots/zn-phase.gp; the data beside it as .csv)."),
    BENCH_FLAG("fit", zn_opts, fit,
               "Search the modelled world's physical parameters (the wake-up cost, the "
               "server's turnaround and spread, the event, subscriber and client costs, the "
               "idle mode and quantum) for the configurations that give the seed's three "
               "figures within 15%; report the best fit, its residuals, the fitting region "
               "and the fit's sensitivity (seconds: every configuration runs on the "
               "simulated clock)."),
    BENCH_INT("fit-requests", "N", "120", 10, 100000, zn_opts, fit_requests,
              "--fit: timed requests per cell of each configuration tried."),
    BENCH_OUTPUT("record", zn_opts, record,
                 "Write down what the outside world did for every request of every "
                 "configuration (the answer's arrival by the kernel's receive timestamp, "
                 "every OS sleep, the client's own CPU), then replay it at once on the "
                 "simulated clock and show the replay beside the run."),
    BENCH_TEXT("replay", "FILE", NULL, zn_opts, replay,
               "Replay a --record file on the simulated clock: the same client, scheduler "
               "and Delays against what the recorded run's world did; no nginx, no wall "
               "clock. Its configurations are the file's (the knob options are ignored)."),
    BENCH_TEXT("url", "URL", NULL, zn_opts, url,
               "http://HOST[:PORT][/PATH] of a server already running, HOST 127.0.0.1, "
               "[::1] or localhost: no nginx is started, every response must be status 200 "
               "with the first one's length; wrk runs on it too unless --no-wrk."),
    BENCH_OUTPUT("plot", zn_opts, plot, "Requests/s and blocked first reads against the "
                 "subscriber cost, one line per idle mode and quantum (bench/plots/zn.gp)."),
    BENCH_OUTPUT("report", zn_opts, report, "The Markdown report."),
};

const bench_command zn_command = {
    "zn", "the ZnClient experiment: logging off, on and subscribed, beside wrk",
    "A ZnClient-shaped client in a fresh VM per configuration GETs a static file from a "
    "local nginx (started for the run, stopped on every exit path) or from --url; wrk "
    "-t1 -c1 runs on the same URL in every repetition.\n\nEvery LIST is comma-separated "
    "and every combination runs.",
    zn_table, (int)(sizeof zn_table / sizeof *zn_table),
    "one configuration's VM (the client's; nginx and wrk are other processes)"};

/* The figures of a VM row: X(ID, name, unit, better, decimals, field, scale). With a
 * field of zn_counts, the figure is that count times scale per request; the others are
 * computed: vs_wrk over the same repetition's wrk rate, requests answered in the timed
 * part, cut_short 1 when the time limit ended it. */
#define C(f) offsetof(zn_counts, f)
#define ZN_FIGURES(X)                                                                          \
    X(RPS, "requests_per_second", "1/s", HIGHER, 0, 0, 1)                                      \
    X(VS_WRK, "vs_wrk", "", HIGHER, 2, 0, 1)                                                   \
    X(US, "us_per_request", "us", LOWER, 1, C(wall_ns), 1e-3)                                  \
    X(CPU_US, "cpu_us_per_request", "us", LOWER, 1, C(cpu_ns), 1e-3)                           \
    X(BLOCKED, "blocked_reads_per_request", "", NONE, 3, C(reads_blocked), 1)                  \
    X(BLOCKED_FIRST, "blocked_first_reads_per_request", "", NONE, 3, C(first_reads_blocked), 1)\
    X(TIMED_WAITS, "timed_waits_per_request", "", NONE, 3, C(timed_waits), 1)                  \
    X(TIMING, "timing_activations_per_request", "", NONE, 3, C(timing_activations), 1)         \
    X(OS_SLEEPS, "os_sleeps_per_request", "", NONE, 3, C(os_sleeps), 1)                        \
    X(SLEPT_US, "os_slept_us_per_request", "us", NONE, 1, C(os_slept_us), 1)                   \
    X(WAKE_IO, "wakeups_io_per_request", "", NONE, 3, C(wakeups_io), 1)                        \
    X(WAKE_TIMER, "wakeups_timer_per_request", "", NONE, 3, C(wakeups_timer), 1)               \
    X(WAKE_RELINQUISH, "wakeups_relinquish_per_request", "", NONE, 3, C(wakeups_relinquish), 1)\
    X(WAKE_EXTERNAL, "wakeups_external_per_request", "", NONE, 3, C(wakeups_external), 1)      \
    X(FDS_READY, "fds_ready_per_request", "", NONE, 3, C(fds_ready), 1)                        \
    X(POLLS_BUSY, "io_polls_busy_per_request", "", NONE, 3, C(io_polls_busy), 1)               \
    X(SWITCHES, "context_switches_per_request", "", NONE, 2, C(context_switches), 1)           \
    X(EVENTS, "events_per_request", "", NONE, 2, C(events_built), 1)                           \
    X(DELIVERIES, "deliveries_per_request", "", NONE, 2, C(deliveries), 1)                     \
    X(BEFORE, "mean_before_us", "us", LOWER, 1, C(before_ns), 1e-3)                            \
    X(BETWEEN, "mean_between_us", "us", LOWER, 1, C(between_ns), 1e-3)                         \
    X(WAIT, "mean_wait_us", "us", LOWER, 1, C(wait_ns), 1e-3)                                  \
    X(PARSE, "mean_parse_us", "us", LOWER, 1, C(parse_ns), 1e-3)                               \
    X(AFTER, "mean_after_us", "us", LOWER, 1, C(after_ns), 1e-3)                               \
    X(CONNECTS, "connects_per_request", "", NONE, 4, C(connects), 1)                           \
    X(REQUESTS, "requests", "", NONE, 0, 0, 1)                                                 \
    X(CUT_SHORT, "cut_short", "", NONE, 0, 0, 1)

/* The wrk row's, computed in run_wrk in this order. */
#define ZN_WRK_FIGURES(X)                                                                      \
    X(RPS, "requests_per_second", "1/s", HIGHER, 0, 0, 1)                                      \
    X(VS_WRK, "vs_wrk", "", HIGHER, 2, 0, 1)                                                   \
    X(US, "us_per_request", "us", LOWER, 1, 0, 1)                                              \
    X(P50, "wrk_p50_us", "us", LOWER, 1, 0, 1)                                                 \
    X(P99, "wrk_p99_us", "us", LOWER, 1, 0, 1)                                                 \
    X(ERRORS, "wrk_errors", "", LOWER, 0, 0, 1)
#define ZN_WRK_NFIGS 6

typedef enum zn_figure {
#define ZN_ENUM(id, name, unit, better, dec, field, scale) ZN_FIG_##id,
    ZN_FIGURES(ZN_ENUM)
#undef ZN_ENUM
    ZN_NFIGS
} zn_figure;

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

/* ---- the rows --------------------------------------------------------------------- */

static int find_row(const zn_run *z, const zn_config *k)
{
    for (int i = 0; i < z->nrows; i++)
        if (!memcmp(&z->rows[i].cfg, k, sizeof *k))
            return i;
    return -1;
}

/* One of a preset's three cells in this run's world (a real run cannot set the server
 * or the client: they are nginx and this machine). */
static const zn_config *preset_cell(const zn_run *z, const zn_preset *p, zn_logging l,
                                    zn_config *k)
{
    *k = p->cfg;
    k->logging = l;
    if (l != ZN_LOGGING_SUBSCRIBER) {
        k->subscriber_cost_us = 0;
        k->subscriber_events = ZN_EVENTS_ALL;
    }
    if (z->world != ZN_WORLD_MODEL)
        k->server_us = k->server_jitter_us = k->client_us = 0;
    return k;
}

/* --preset: the preset's knobs in place of the sweep's (the others stay as given). */
static void apply_preset(zn_opts *o)
{
    const zn_preset *p = zn_preset_get(o->preset);
    if (!p)
        return;
    const zn_config *k = &p->cfg;
    o->logging = 7;   /* off, on, subscriber */
    o->events = 1u << k->subscriber_events;
    o->modes = 1u << k->idle_mode;
    bench_ints *lists[] = {&o->cost, &o->idle_us, &o->inject, &o->server, &o->jitter, &o->client};
    const uint32_t values[] = {k->subscriber_cost_us, k->idle_us, k->wake_inject_us,
                               k->server_us, k->server_jitter_us, k->client_us};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        *lists[i] = (bench_ints){.v = {values[i]}, .n = 1};
    o->event_cost_us = k->event_cost_us;
}

static bool add_row(zn_run *z, const zn_config *k)
{
    if (find_row(z, k) >= 0)
        return true;
    if (z->nrows == ZN_MAX_ROWS)
        return false;
    z->rows[z->nrows++].cfg = *k;
    return true;
}

/* A replay's rows: the recording's configurations, in the order they first appear. */
static bool replay_rows(zn_run *z)
{
    for (int i = 0; i < z->replayed.ncells; i++)
        if (!add_row(z, &z->replayed.cells[i].cfg))
            return false;
    return true;
}

/* Every combination, the first knob outermost; false when there are too many. Off and on
 * rows do not vary with the subscriber's two knobs (innermost): a repeat is one row. */
static bool make_rows(zn_run *z)
{
    const zn_opts *o = z->o;
    if (z->world == ZN_WORLD_REPLAY)
        return replay_rows(z);
    if (!o->no_wrk && z->world == ZN_WORLD_REAL)
        z->rows[z->nrows++].cfg = (zn_config){.logging = ZN_LOGGING_WRK, .idle_mode = -1};
    bench_ints w[5] = {0};   /* the word sets as lists of word numbers */
    const unsigned set[5] = {o->wait, o->background, o->modes, o->logging, o->events};
    for (int d = 0; d < 5; d++)
        for (unsigned b = 0; b < 4; b++)
            if (set[d] >> b & 1)
                w[d].v[w[d].n++] = b;
    /* The modelled world's knobs are 0 elsewhere: they mean nothing to nginx. */
    static const bench_ints none = {.n = 1};
    bool model = z->world == ZN_WORLD_MODEL;
    const bench_ints *knob[] = {&o->idle_us, &o->inject, &w[0], &w[1], &o->before,
                                &o->between, &o->after, model ? &o->server : &none,
                                model ? &o->jitter : &none, model ? &o->client : &none,
                                &w[2], &w[3], &w[4], &o->cost};
    enum { NKNOBS = sizeof knob / sizeof *knob, NPLAIN = 10 };
    zn_config k = {.event_cost_us = (uint32_t)o->event_cost_us};
    uint32_t *to[NPLAIN] = {&k.idle_us, &k.wake_inject_us, &k.plain_wait, &k.background,
                            &k.before_us, &k.between_us, &k.after_us, &k.server_us,
                            &k.server_jitter_us, &k.client_us};
    for (int at[NKNOBS] = {0}, d = 0; d >= 0;) {
#define KNOB(d) ((uint32_t)knob[d]->v[at[d]])
        for (d = 0; d < NPLAIN; d++)
            *to[d] = KNOB(d);
        k.idle_mode = (int)KNOB(NPLAIN);
        k.logging = (zn_logging)KNOB(NPLAIN + 1);
        bool sub = k.logging == ZN_LOGGING_SUBSCRIBER;
        k.subscriber_events = sub ? (zn_events)KNOB(NPLAIN + 2) : ZN_EVENTS_ALL;
        k.subscriber_cost_us = sub ? KNOB(NPLAIN + 3) : 0;
#undef KNOB
        if (!add_row(z, &k))
            return false;
        for (d = NKNOBS - 1; d >= 0 && ++at[d] == knob[d]->n; d--)
            at[d] = 0;
    }
    const zn_preset *with = zn_preset_get(o->with_preset);
    for (int l = 0; with && l < 3; l++)
        if (!add_row(z, preset_cell(z, with, (zn_logging)l, &k)))
            return false;
    return true;
}

/* ---- the runs --------------------------------------------------------------------- */

/* One repetition of the wrk row; false with why. */
static bool run_wrk(const zn_run *z, zn_row *row, int k, char *why, size_t size)
{
    wrk_options wo;
    wrk_options_init(&wo);
    wo.seconds = (int)z->o->wrk_seconds;
    wrk_result w;
    if (wrk_run(&wo, z->url, &w, why, size) != 0)
        return false;
    double errors = w.errors_connect + w.errors_read + w.errors_write + w.errors_status +
                    w.errors_timeout;
    double x[ZN_WRK_NFIGS] = {w.requests_per_sec, 1.0, 1e6 / w.requests_per_sec,
                              w.latency_p50_us, w.latency_p99_us, errors};
    for (int f = 0; f < ZN_WRK_NFIGS; f++)
        row->wrk[f][k] = x[f];
    return true;
}

static const char *row_text(const zn_config *k, char *buf, size_t size)
{
    if (k->logging == ZN_LOGGING_WRK)
        snprintf(buf, size, "wrk -t1 -c1");
    else if (k->logging == ZN_LOGGING_SUBSCRIBER)
        snprintf(buf, size, "subscriber %u us/%s, %s %u us", k->subscriber_cost_us,
                 events_words[k->subscriber_events], mode_words[k->idle_mode], k->idle_us);
    else
        snprintf(buf, size, "%s, %s %u us", logging_words[k->logging],
                 mode_words[k->idle_mode], k->idle_us);
    return buf;
}

static double sample_rps(const zn_counts *c)
{
    return c->wall_ns > 0 ? (double)c->requests / ((double)c->wall_ns / 1e9) : 0;
}

static double sample_blocked(const zn_counts *c)
{
    return c->requests ? (double)c->first_reads_blocked / (double)c->requests : 0;
}

/* Run one configuration in the invocation's world (a recorded cell's in a replay),
 * writing it down when --record asks: false with why. */
static bool measure(const zn_run *z, const zn_config *cfg, const zn_rec_cell *replay,
                    int repetition, zn_counts *out, char *why, size_t size)
{
    const zn_opts *o = z->o;
    zn_params p = {.cfg = *cfg, .host = z->host, .port = z->port, .path = z->path,
                   .body_size = z->body_size, .requests = o->requests, .warmup = o->warmup,
                   .max_seconds = (double)o->max_seconds, .trace = &z->inv->common.trace,
                   .world = replay ? ZN_WORLD_REPLAY : z->world,
                   .seed = (uint32_t)o->seed + (uint32_t)repetition - 1,
                   .replay = replay};
    if (replay) {   /* the recorded run's own requests, however long they take */
        p.requests = replay->ntimed;
        p.warmup = replay->nrequests - replay->ntimed;
        p.max_seconds = 1e6;
        p.body_size = 300;
    }
    if (z->record && !(p.recorder = zn_recorder_new(cfg))) {
        snprintf(why, size, "out of memory for the recorder");
        return false;
    }
    bench_watchdog((unsigned)(3 * o->max_seconds + 60));
    int err = zn_measure(&p, out, why, size);
    bench_watchdog(0);
    if (!err && out->requests == 0)
        snprintf(why, size, "no request completed within the time limit");
    bool ok = !err && out->requests > 0;
    if (ok && p.recorder &&
        !zn_recorder_write(p.recorder, z->record, repetition, sample_rps(out),
                           sample_blocked(out))) {
        snprintf(why, size, "writing the recording to %s failed", o->record);
        ok = false;
    }
    zn_recorder_free(p.recorder);
    return ok;
}

/* One repetition of a VM row; false with why. */
static bool run_cell(const zn_run *z, zn_row *row, int k, char *why, size_t size)
{
    return measure(z, &row->cfg, NULL, k + 1, &row->samples[k], why, size);
}

/* --replay: each recorded cell once, beside what the recording says it measured. */
static bool run_replay(zn_run *z)
{
    bool ok = true;
    for (int i = 0; i < z->replayed.ncells; i++) {
        const zn_rec_cell *cell = &z->replayed.cells[i];
        zn_row *row = &z->rows[find_row(z, &cell->cfg)];
        char why[240] = "", text[128];
        int k = row->nsamples;
        if (row->note[0] || k == ZN_MAX_REPEAT) {
            if (!row->note[0])
                snprintf(row->note, sizeof row->note, "more than %d recorded repetitions: "
                         "the rest were not replayed", ZN_MAX_REPEAT);
            continue;
        }
        if (measure(z, &cell->cfg, cell, cell->repetition, &row->samples[k], why, sizeof why)) {
            row->versus_rps[k] = cell->rps;
            row->versus_blocked[k] = cell->blocked_first;
            row->nsamples = row->nversus = k + 1;
        } else {
            snprintf(row->note, sizeof row->note, "replaying repetition %d failed: %s",
                     cell->repetition, why);
            fprintf(stderr, "stvm-bench: zn: %s\n", row->note);
            ok = false;
        }
        bench_progress_line(z->inv, i + 1, z->replayed.ncells, "replay of repetition %d: %s",
                            cell->repetition, row_text(&cell->cfg, text, sizeof text));
    }
    return ok;
}

/* --record: the file written, read back (the replay reads what a later --replay would)
 * and each cell replayed beside its row's sample. */
static bool replay_recorded(zn_run *z)
{
    char why[300];
    if (fclose(z->record) != 0) {
        z->record = NULL;
        fprintf(stderr, "stvm-bench: zn: writing %s failed\n", z->o->record);
        return false;
    }
    z->record = NULL;
    if (!zn_recording_read(z->o->record, &z->replayed, why, sizeof why)) {
        fprintf(stderr, "stvm-bench: zn: reading the recording back: %s\n", why);
        return false;
    }
    bool ok = true;
    int reps[ZN_MAX_ROWS] = {0};
    for (int i = 0; i < z->replayed.ncells; i++) {
        const zn_rec_cell *cell = &z->replayed.cells[i];
        int r = find_row(z, &cell->cfg);
        zn_counts c;
        char text[128];
        if (r < 0 || reps[r] == ZN_MAX_REPEAT)
            continue;
        zn_row *row = &z->rows[r];
        if (measure(z, &cell->cfg, cell, cell->repetition, &c, why, sizeof why)) {
            row->versus_rps[reps[r]] = sample_rps(&c);
            row->versus_blocked[reps[r]] = sample_blocked(&c);
            row->nversus = ++reps[r];
        } else {
            fprintf(stderr, "stvm-bench: zn: replaying %s: %s\n",
                    row_text(&cell->cfg, text, sizeof text), why);
            ok = false;
        }
    }
    return ok;
}

static bool run_all(zn_run *z)
{
    if (z->world == ZN_WORLD_REPLAY)
        return run_replay(z);
    bool ok = true;
    int total = (int)z->o->repeat * z->nrows, done = 0;
    for (int k = 0; k < z->o->repeat; k++)
        for (int i = 0; i < z->nrows; i++) {
            zn_row *row = &z->rows[i];
            if (row->note[0]) {   /* failed in an earlier repetition */
                done++;
                continue;
            }
            char why[240] = "", text[128];
            if (row->cfg.logging == ZN_LOGGING_WRK ? run_wrk(z, row, k, why, sizeof why)
                                                   : run_cell(z, row, k, why, sizeof why)) {
                row->nsamples = k + 1;
            } else {
                snprintf(row->note, sizeof row->note, "repetition %d failed: %s", k + 1, why);
                fprintf(stderr, "stvm-bench: zn: %s\n", row->note);
                ok = false;
            }
            bench_progress_line(z->inv, ++done, total, "repetition %d: %s", k + 1,
                                row_text(&row->cfg, text, sizeof text));
        }
    return z->record ? replay_recorded(z) && ok : ok;
}

/* ---- the records ------------------------------------------------------------------ */

typedef struct zn_fig {
    const char *name, *unit;
    bench_better better;
    int dec;
    size_t field;
    double scale;
} zn_fig;

#define ZN_META(id, name, unit, better, dec, field, scale) \
    {name, unit, BENCH_BETTER_##better, dec, field, scale},
static const zn_fig zn_figs[] = {ZN_FIGURES(ZN_META)};
static const zn_fig wrk_figs[ZN_WRK_NFIGS] = {ZN_WRK_FIGURES(ZN_META)};
#undef ZN_META

/* Each figure's finite samples v[f][0..nsamples) into rec. */
static void add_metrics(bench_record *rec, const zn_fig *figs, int nfigs,
                        const double (*v)[ZN_MAX_REPEAT], int nsamples)
{
    for (int f = 0; f < nfigs; f++) {
        double col[ZN_MAX_REPEAT];
        int n = 0;
        for (int k = 0; k < nsamples; k++)
            if (isfinite(v[f][k]))
                col[n++] = v[f][k];
        bench_metric_add(rec, figs[f].name, figs[f].unit, figs[f].better, figs[f].dec, col, n);
    }
}

static void vm_metrics(bench_record *rec, const zn_row *row, const zn_row *wrk)
{
    double v[ZN_NFIGS][ZN_MAX_REPEAT];   /* NaN where not defined */
    for (int k = 0; k < row->nsamples; k++) {
        const zn_counts *c = &row->samples[k];
        double n = (double)c->requests, wrk_rps = wrk && k < wrk->nsamples ? wrk->wrk[0][k] : 0;
        for (int f = 0; f < ZN_NFIGS; f++) {   /* every field is a 64-bit count */
            const char *field = (const char *)c + zn_figs[f].field;
            v[f][k] = (double)*(const uint64_t *)(const void *)field * zn_figs[f].scale / n;
        }
        v[ZN_FIG_RPS][k] = n / ((double)c->wall_ns / 1e9);
        v[ZN_FIG_VS_WRK][k] = wrk_rps > 0 ? v[ZN_FIG_RPS][k] / wrk_rps : NAN;
        v[ZN_FIG_REQUESTS][k] = n;
        v[ZN_FIG_CUT_SHORT][k] = c->cut_short;
    }
    add_metrics(rec, zn_figs, ZN_NFIGS, (const double (*)[ZN_MAX_REPEAT])v, row->nsamples);
    rec->gbench_real = ZN_FIG_US;
    rec->gbench_cpu = ZN_FIG_CPU_US;
}

/* A replay beside the run it replays: a recorded run's row carries its replays, a
 * replay's row its recording's figures; either way the errors are the replay's. */
static void versus_metrics(bench_record *rec, const zn_row *row, bool is_replay)
{
    int n = row->nversus < row->nsamples ? row->nversus : row->nsamples;
    double err[ZN_MAX_REPEAT], diff[ZN_MAX_REPEAT];
    for (int k = 0; k < n; k++) {
        double rps = sample_rps(&row->samples[k]), blk = sample_blocked(&row->samples[k]);
        double replay = is_replay ? rps : row->versus_rps[k];
        double recorded = is_replay ? row->versus_rps[k] : rps;
        err[k] = recorded > 0 ? fabs(replay / recorded - 1) : NAN;
        diff[k] = fabs(row->versus_blocked[k] - blk);
    }
    const char *who = is_replay ? "recorded" : "replay";
    char a[64], b[64];
    snprintf(a, sizeof a, "%s_requests_per_second", who);
    snprintf(b, sizeof b, "%s_blocked_first_reads_per_request", who);
    bench_metric_add(rec, a, "1/s", BENCH_BETTER_NONE, 0, row->versus_rps, n);
    bench_metric_add(rec, b, "", BENCH_BETTER_NONE, 3, row->versus_blocked, n);
    bench_metric_add(rec, "replay_rps_error", "", BENCH_BETTER_LOWER, 3, err, n);
    bench_metric_add(rec, "replay_blocked_first_difference", "", BENCH_BETTER_LOWER, 3, diff, n);
}

/* One record per row, in the rows' order (record i is row i). */
static void make_records(const zn_run *z, bench_results *r)
{
    const zn_row *wrk = z->o->no_wrk || z->world != ZN_WORLD_REAL ? NULL : &z->rows[0];
    for (int i = 0; i < z->nrows; i++) {
        const zn_row *row = &z->rows[i];
        const zn_config *k = &row->cfg;
        bool vm = k->logging != ZN_LOGGING_WRK;
        bench_record *rec = bench_record_add(r, vm ? logging_words[k->logging] : "wrk");
        /* nginx's port changes from run to run: a name that compares across runs. */
        static const char *const servers[] = {"nginx", "model", "replay"};
        bench_param_add(rec, "server", "%s", z->o->url ? z->url : servers[z->world]);
        if (vm) {
            if (k->logging == ZN_LOGGING_SUBSCRIBER) {
                bench_param_add(rec, "subscriber_cost_us", "%u", k->subscriber_cost_us);
                bench_param_add(rec, "subscriber_events", "%s", events_words[k->subscriber_events]);
            }
            bench_param_add(rec, "idle_mode", "%s", mode_words[k->idle_mode]);
            const struct { const char *key; uint32_t v; } nums[] = {
                {"idle_us", k->idle_us}, {"wake_inject_us", k->wake_inject_us},
                {"before_us", k->before_us}, {"between_us", k->between_us},
                {"after_us", k->after_us}, {"event_cost_us", k->event_cost_us}};
            for (size_t n = 0; n < sizeof nums / sizeof *nums; n++)
                bench_param_add(rec, nums[n].key, "%u", nums[n].v);
            bench_param_add(rec, "wait", "%s", wait_words[k->plain_wait]);
            bench_param_add(rec, "background", "%s", onoff_words[k->background]);
            if (z->world == ZN_WORLD_MODEL) {
                bench_param_add(rec, "server_us", "%u", k->server_us);
                bench_param_add(rec, "server_jitter_us", "%u", k->server_jitter_us);
                bench_param_add(rec, "client_us", "%u", k->client_us);
            }
            vm_metrics(rec, row, wrk);
            if (row->nversus)
                versus_metrics(rec, row, z->world == ZN_WORLD_REPLAY);
        } else {
            bench_param_add(rec, "wrk_seconds", "%lld", z->o->wrk_seconds);
            add_metrics(rec, wrk_figs, ZN_WRK_NFIGS, row->wrk, row->nsamples);
            rec->gbench_real = 2;   /* us_per_request */
        }
        long long cut = 0;
        for (int s = 0; s < row->nsamples; s++)
            cut += row->samples[s].cut_short;
        if (row->note[0])
            bench_record_fail(rec, BENCH_FAILED, "%s", row->note);
        else if (cut)
            bench_record_note(rec, "%lld repetitions hit the %lld s limit", cut,
                              z->o->max_seconds);
    }
}

/* The plain configuration a target names: no knob but these at their defaults. */
static void plain_select(char *buf, size_t size, zn_logging l, int mode, unsigned cost)
{
    int n = snprintf(buf, size, "%s idle_mode=%s idle_us=1000 wake_inject_us=0 before_us=0 "
                     "between_us=0 after_us=0 wait=timed background=off",
                     logging_words[l], mode_words[mode]);
    if (l == ZN_LOGGING_SUBSCRIBER)
        snprintf(buf + n, size - (size_t)n, " subscriber_events=all subscriber_cost_us=%u", cost);
}

/* Each target only when its records ran: a run that did not ask for it is not judged. */
static void add_targets(const zn_run *z, bench_results *r)
{
    char off[256], other[256];
    plain_select(off, sizeof off, ZN_LOGGING_OFF, STVM_IDLE_POLL, 0);
    if (!z->o->no_wrk && bench_record_select(r, off))
        bench_target_add(r, "logging off, poll, 1000 us: >= 0.8x wrk -t1 -c1",
                         BENCH_TARGET_AT_LEAST, off, "vs_wrk", 0.8, NULL, NULL);
    plain_select(off, sizeof off, ZN_LOGGING_OFF, STVM_IDLE_LEGACY, 0);
    plain_select(other, sizeof other, ZN_LOGGING_SUBSCRIBER, STVM_IDLE_LEGACY, 60);
    if (bench_record_select(r, off) && bench_record_select(r, other))
        bench_target_add(r, "legacy, 1000 us: 60 us subscriber >= 2x logging off",
                         BENCH_TARGET_AT_LEAST, other, "requests_per_second", 2.0, off,
                         "requests_per_second");
    plain_select(other, sizeof other, ZN_LOGGING_ON, STVM_IDLE_LEGACY, 0);
    if (bench_record_select(r, off) && bench_record_select(r, other))
        bench_target_add(r, "legacy, 1000 us: logging on slower than off",
                         BENCH_TARGET_AT_MOST, other, "requests_per_second", 1.0, off,
                         "requests_per_second");
    static const char *const counted[][2] = {
        {"blocked_first_reads_per_request", "blocked first reads"},
        {"timed_waits_per_request", "timed waits"}};
    for (int l = 0; l < 3 && z->o->repeat > 1; l += 2)
        for (int m = 0; m < 3; m++) {
            plain_select(other, sizeof other, (zn_logging)l, m, 60);
            for (int c = 0; c < 2 && bench_record_select(r, other); c++) {
                char text[160];
                snprintf(text, sizeof text, "determinism, %s, %s: %s per request repeat "
                         "within 0.02", l ? "60 us subscriber" : "logging off", mode_words[m],
                         counted[c][1]);
                bench_target_add(r, text, BENCH_TARGET_SPREAD, other, counted[c][0], 0.02,
                                 NULL, NULL);
            }
        }
}

/* ---- the seed's table, the report --------------------------------------------------- */

static double median_of(const bench_results *r, int i, const char *metric)
{
    const bench_metric *m = i >= 0 ? bench_metric_find(&r->records[i], metric) : NULL;
    return m ? m->median : NAN;
}

/* Off, on and subscriber requests/s per idle mode and quantum: one line per plain
 * subscriber row (no other knob) whose off row ran. */
static void seed_table(const zn_run *z, bench_results *r)
{
    static const char *const head[] = {"idle mode", "idle us", "sub. us", "off /s", "on /s",
                                       "subscriber /s", "on/off", "sub/off",
                                       "off: blocked 1st", "sub: blocked 1st"};
    bench_table *t = NULL;
    for (int i = 0; i < z->nrows; i++) {
        zn_config k = z->rows[i].cfg;
        if (k.logging != ZN_LOGGING_SUBSCRIBER || k.subscriber_events != ZN_EVENTS_ALL ||
            k.before_us || k.between_us || k.after_us || k.plain_wait || k.background)
            continue;
        k.subscriber_cost_us = 0;
        k.logging = ZN_LOGGING_OFF;
        int off = find_row(z, &k);
        k.logging = ZN_LOGGING_ON;
        int on = find_row(z, &k);
        const char *rps = "requests_per_second", *blk = "blocked_first_reads_per_request";
        double o = median_of(r, off, rps), n = median_of(r, on, rps), s = median_of(r, i, rps);
        if (off < 0 || !isfinite(s))
            continue;
        if (!t) {
            t = bench_table_add(r, "The seed's table: requests per second with logging off, "
                                "on, and on with a subscriber (medians)", 10, "lrrrrrrrrr");
            bench_table_row(t, head);
        }
        double v[10] = {[3] = o, n, s, n / o, s / o, median_of(r, off, blk),
                        median_of(r, i, blk)};
        char c[10][32];
        const char *cells[10];
        snprintf(c[0], 32, "%s", mode_words[k.idle_mode]);
        snprintf(c[1], 32, "%u", k.idle_us);
        snprintf(c[2], 32, "%u", z->rows[i].cfg.subscriber_cost_us);
        for (int j = 0; j < 10; j++) {
            if (j >= 3 && isfinite(v[j]))   /* rates, then ratios and fractions */
                snprintf(c[j], 32, "%.*f", j < 6 ? 0 : 2, v[j]);
            else if (j >= 3)
                snprintf(c[j], 32, "-");
            cells[j] = c[j];
        }
        bench_table_row(t, cells);
    }
}

/* The preset the run shows beside the seed (--preset, else --with-preset), or NULL. */
static const zn_preset *shown_preset(const zn_opts *o)
{
    return zn_preset_get(o->preset ? o->preset : o->with_preset);
}

static double row_median(const zn_run *z, int i, bool versus, bool blocked)
{
    if (i < 0)
        return NAN;
    const zn_row *row = &z->rows[i];
    double v[ZN_MAX_REPEAT];
    int n = versus ? row->nversus : row->nsamples;
    for (int k = 0; k < n; k++)
        v[k] = versus ? (blocked ? row->versus_blocked[k] : row->versus_rps[k])
                      : (blocked ? sample_blocked(&row->samples[k]) : sample_rps(&row->samples[k]));
    return n ? bench_median(v, (size_t)n) : NAN;
}

static void fmt_or_dash(char *buf, size_t size, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(buf, size, fmt, v);
    else
        snprintf(buf, size, "-");
}

/* Seed 2 side by side: the seed's figures, the modelled world of the preset, this run's
 * cells of it (real: on nginx) and their replay. */
static void seed2_table(const zn_run *z, bench_results *r)
{
    const zn_preset *p = shown_preset(z->o);
    if (!p)
        return;
    zn_triple model;
    char why[240];
    if (zn_triple_run(&p->cfg, 2000, (uint32_t)z->o->seed, &model, why, sizeof why) != 0) {
        fprintf(stderr, "stvm-bench: zn: the model of %s: %s\n", p->name, why);
        return;
    }
    static const char *const names[] = {"logging off", "logging on",
                                        "on, subscriber (all events)"};
    static const char *const seed[] = {"3,000", "2,500", "7,000-8,000"};
    bool real = z->world == ZN_WORLD_REAL;
    char title[400];
    snprintf(title, sizeof title, "Seed 2 side by side: the seed (Pharo 6/7, a 2017 Mac), the "
             "modelled world of --preset %s, this run of it (%s; medians)%s", p->name,
             real ? "a real nginx on this machine, the wake-up cost injected"
                  : z->world == ZN_WORLD_MODEL ? "the model" : "a replay",
             real ? ", and the replay of this run's recording" : "");
    bench_table *t = bench_table_add(r, title, 8, "lrrrrrrr");
    bench_table_row(t, (const char *const[]){"", "seed /s", "model /s", "model: blocked 1st",
                                             "this run /s", "blocked 1st", "replay /s",
                                             "run / model"});
    double run[3];
    for (int l = 0; l < 3; l++) {
        zn_config k;
        int i = find_row(z, preset_cell(z, p, (zn_logging)l, &k));
        run[l] = row_median(z, i, false, false);
        char c[6][32];
        fmt_or_dash(c[0], 32, "%.0f", model.rps[l]);
        fmt_or_dash(c[1], 32, "%.2f", model.blocked[l]);
        fmt_or_dash(c[2], 32, "%.0f", run[l]);
        fmt_or_dash(c[3], 32, "%.2f", row_median(z, i, false, true));
        fmt_or_dash(c[4], 32, "%.0f", real ? row_median(z, i, true, false) : NAN);
        fmt_or_dash(c[5], 32, "%.2f", run[l] / model.rps[l]);
        bench_table_row(t, (const char *const[]){names[l], seed[l], c[0], c[1], c[2], c[3],
                                                 c[4], c[5]});
    }
    bench_table_footer(t, "%s: %s. Ratios: seed on/off 0.83, subscriber/off 2.3-2.7; model "
                       "%.2f and %.2f; this run %.2f and %.2f.", p->name, p->what,
                       model.rps[1] / model.rps[0], model.rps[2] / model.rps[0],
                       run[1] / run[0], run[2] / run[0]);
}

/* The median wake-up cost the recording saw in a row's cells (ns), or NaN. */
static double recorded_wake_ns(const zn_run *z, const zn_config *k)
{
    static double lates[1 << 16];
    size_t n = 0;
    for (int c = 0; c < z->replayed.ncells; c++) {
        const zn_rec_cell *cell = &z->replayed.cells[c];
        if (memcmp(&cell->cfg, k, sizeof *k))
            continue;
        for (long long q = 0; q < cell->nrequests; q++)
            for (int j = 0; j < cell->requests[q].nsleeps && n < sizeof lates / sizeof *lates; j++)
                lates[n++] = (double)cell->requests[q].sleeps[j].late_ns;
    }
    return n ? bench_median(lates, n) : NAN;
}

/* --phase-plot: the diagram around the shown preset, with this run's real poll-mode
 * subscriber rows (to all events) where their wake-up cost puts them. */
static bool phase_plot(const zn_run *z)
{
    const zn_preset *p = shown_preset(z->o);
    p = p ? p : zn_preset_get(1);
    zn_phase_point runs[64];
    int n = 0;
    for (int i = 0; i < z->nrows && n < 64 && z->world == ZN_WORLD_REAL; i++) {
        zn_config k = z->rows[i].cfg;
        if (k.logging != ZN_LOGGING_SUBSCRIBER || k.subscriber_events != ZN_EVENTS_ALL ||
            k.idle_mode != STVM_IDLE_POLL || k.before_us || k.between_us || k.after_us)
            continue;
        zn_config off = k;
        off.logging = ZN_LOGGING_OFF;
        off.subscriber_cost_us = 0;
        double sub = row_median(z, i, false, false),
               o = row_median(z, find_row(z, &off), false, false);
        double late = recorded_wake_ns(z, &k) / 1000;
        if (!isfinite(sub) || !isfinite(o))
            continue;
        runs[n] = (zn_phase_point){.wake_us = k.wake_inject_us + (isfinite(late) ? late : 0),
                                   .subscriber_cost_us = k.subscriber_cost_us, .ratio = sub / o};
        snprintf(runs[n].label, sizeof runs[n].label, "inject %u", k.wake_inject_us);
        n++;
    }
    char why[240];
    if (zn_phase(&p->cfg, 300, (uint32_t)z->o->seed, runs, n, z->inv, z->o->phase_plot, why,
                 sizeof why) != 0) {
        fprintf(stderr, "stvm-bench: zn: --phase-plot: %s\n", why);
        return false;
    }
    return true;
}

static void prose(FILE *f, const bench_results *r, const void *data)
{
    (void)r;
    const zn_run *z = data;
    const zn_opts *o = z->o;
    fprintf(f, "# The ZnClient experiment (stvm-bench zn)\n\nGET %s (%s), %lld requests after "
            "%lld of warm-up per configuration (at most %lld s), each configuration in a fresh "
            "VM, %lld repetitions%s; every figure keeps each repetition's sample.\n\n", z->url,
            z->body_size ? "nginx started for the run, a static file" : "a server given by "
            "--url", o->requests, o->warmup, o->max_seconds, o->repeat,
            o->no_wrk ? "" : "; wrk -t1 -c1 on the same URL in every repetition");
    fputs("The seed's table: requests per second with logging off (level 0), on (level 3, "
          "nobody subscribed: events built, the announcer's fast path) and on with a "
          "synchronous subscriber costing the given CPU per event, per idle mode; with the "
          "fraction of requests whose first read found no data and blocked.\n\n"
          "Per request in every configuration: `blocked_first_reads_per_request` first reads "
          "that blocked, `blocked_reads_per_request` all reads that blocked, "
          "`timed_waits_per_request` timed waits (DelayWaitTimeout), "
          "`timing_activations_per_request` timing-process activations, `os_sleeps` waits in "
          "the OS that could block and `os_slept_us` the time in them, `wakeups_io` / "
          "`wakeups_relinquish` OS sleeps ended by a ready descriptor / by the relinquish "
          "time running out; then the mean microseconds before the send, between the send "
          "and the first read (writing, the request-written event, its subscribers, the "
          "between work), waiting in the first read, parsing the rest, and after (the other "
          "two events, their subscribers, the after work). `vs_wrk` is the median of the "
          "per-repetition ratios to wrk's requests/s.\n\nBelow: the run's context, the seed's "
          "table, every record with its median and range over the repetitions, the targets "
          "and the notes (repetitions cut short by the time limit).\n\n", f);
}

/* ---- the command ------------------------------------------------------------------ */

/* --url into z (host, port, path): BENCH_GO_ON, or a usage error: only loopback. */
static int parse_url(zn_run *z, const char *url)
{
    const char *h = strncmp(url, "http://", 7) ? NULL : url + 7, *end = NULL;
    if (h && *h == '[' && (end = strchr(h, ']')))
        snprintf(z->host, sizeof z->host, "%.*s", (int)(end++ - h - 1), h + 1);
    else if (h && *h != '[')
        snprintf(z->host, sizeof z->host, "%.*s", (int)((end = h + strcspn(h, ":/")) - h), h);
    if (!end || (strcmp(z->host, "127.0.0.1") && strcmp(z->host, "::1") &&
                 strcmp(z->host, "localhost")))
        return bench_usage(&zn_command, "--url wants http://127.0.0.1, http://[::1] or "
                           "http://localhost (traffic stays on loopback), not '%s'", url);
    char *e = (char *)end;
    long port = 80;
    if (*end == ':')
        port = end[1] >= '0' && end[1] <= '9' ? strtol(end + 1, &e, 10) : 0;
    bool clean = !*e || *e == '/';
    for (const char *p = e; *p; p++)
        clean &= (unsigned char)*p > ' ' && *p != 0x7f;
    if (port < 1 || port > 65535 || !clean)
        return bench_usage(&zn_command, "--url '%s': want http://HOST[:PORT][/PATH], a port "
                           "1..65535 and a path without spaces or control characters", url);
    z->port = (int)port;
    z->path = *e ? e : "/";
    snprintf(z->url, sizeof z->url, "%s", url);
    return BENCH_GO_ON;
}

/* The world the options ask for, and what does not go with it: BENCH_GO_ON or a usage
 * error. A replay reads its file here, before anything runs. */
static int open_world(zn_run *z)
{
    const zn_opts *o = z->o;
    if (o->model && o->replay)
        return bench_usage(&zn_command, "--model and --replay are two worlds: give one");
    if (o->record && z->world != ZN_WORLD_REAL)
        return bench_usage(&zn_command, "--record writes down a real run: not with --model "
                           "or --replay");
    if (o->url && z->world != ZN_WORLD_REAL)
        return bench_usage(&zn_command, "--url is a real server: not with --model or --replay");
    if (z->world != ZN_WORLD_REPLAY)
        return BENCH_GO_ON;
    char why[300];
    if (!zn_recording_read(o->replay, &z->replayed, why, sizeof why))
        return bench_usage(&zn_command, "--replay: %s", why);
    return BENCH_GO_ON;
}

/* With the VM pinned (--cpu N), nginx gets the next CPU, so neither waits for the other. */
static int start_nginx(zn_run *z, nginx_server *s)
{
    nginx_options no;
    nginx_options_init(&no);
    no.ipv6 = false;
    if (z->inv->common.cpu >= 0 && bench_ncpu() > 1)
        no.cpu = (z->inv->common.cpu + 1) % bench_ncpu();
    if (nginx_start(s, &no) != 0) {
        fprintf(stderr, "stvm-bench: zn: %s\n", s->error);
        return BENCH_EXIT_FAIL;
    }
    snprintf(z->host, sizeof z->host, "127.0.0.1");
    z->port = s->port;
    z->path = NGINX_PATH_STATIC;
    z->body_size = s->static_size;
    nginx_url(s, NGINX_PATH_STATIC, z->url, sizeof z->url);
    return BENCH_GO_ON;
}

/* The outputs once the sweep ran: BENCH_EXIT_OK or BENCH_EXIT_FAIL. */
static int output(const zn_run *z, bench_results *r, bool ran)
{
    make_records(z, r);
    if (z->o->fit) {
        zn_fit_result f;
        char why[240];
        if (zn_fit(z->o->fit_requests, (uint32_t)z->o->seed, &f, why, sizeof why) != 0) {
            fprintf(stderr, "stvm-bench: zn: --fit: %s\n", why);
            ran = false;
        } else {
            zn_fit_tables(&f, r);
        }
    }
    seed2_table(z, r);
    seed_table(z, r);
    add_targets(z, r);
    bench_judge(r);
    int rc = bench_output(r, z->inv);
    bool sub = false;
    for (int i = 0; i < z->nrows; i++)
        sub |= z->rows[i].cfg.logging == ZN_LOGGING_SUBSCRIBER && z->rows[i].nsamples > 0;
    if (z->o->plot && !sub)
        fprintf(stderr, "stvm-bench: zn: no subscriber rows to plot (--logging subscriber)\n");
    if (z->o->plot && (!sub || !bench_plot(r, z->inv, "zn.gp", z->o->plot)))
        rc = BENCH_EXIT_FAIL;
    if (z->o->report && !bench_report(z->o->report, r, z->inv, prose, z))
        rc = BENCH_EXIT_FAIL;
    if (z->o->phase_plot && !phase_plot(z))
        rc = BENCH_EXIT_FAIL;
    return ran ? rc : BENCH_EXIT_FAIL;
}

int zn_main(int argc, char **argv)
{
    zn_opts o;
    bench_invocation inv;
    int rc = bench_parse(&zn_command, argc, argv, &o, &inv);
    if (rc != BENCH_GO_ON)
        return rc;
    apply_preset(&o);
    zn_run z = {.o = &o, .inv = &inv, .rows = calloc(ZN_MAX_ROWS, sizeof *z.rows),
                .world = o.replay ? ZN_WORLD_REPLAY : o.model ? ZN_WORLD_MODEL : ZN_WORLD_REAL};
    inv.clock = z.world == ZN_WORLD_REAL ? "real" : "sim";
    nginx_server *s = calloc(1, sizeof *s);
    if (!z.rows || !s) {
        fprintf(stderr, "stvm-bench: zn: out of memory\n");
        rc = BENCH_EXIT_FAIL;
    } else if ((rc = open_world(&z)) != BENCH_GO_ON) {
        ;   /* said */
    } else if (!make_rows(&z)) {
        rc = bench_usage(&zn_command, "more than %d combinations", ZN_MAX_ROWS);
    } else {
        rc = bench_trace_cells(&inv, (long)(z.nrows - !o.no_wrk) * o.repeat,
                               "give every LIST one value and --repeat 1");
    }
    if (rc == BENCH_GO_ON && z.world != ZN_WORLD_REAL) {
        /* The request names the host nginx would be: the simulated server reads none. */
        snprintf(z.host, sizeof z.host, "127.0.0.1");
        z.port = 80;
        z.path = NGINX_PATH_STATIC;
        z.body_size = 300;
        snprintf(z.url, sizeof z.url, "%s", z.world == ZN_WORLD_MODEL ? "the modelled server"
                                                                      : o.replay);
    } else if (rc == BENCH_GO_ON)
        rc = o.url ? parse_url(&z, o.url) : start_nginx(&z, s);
    if (rc == BENCH_GO_ON && o.record && !(z.record = fopen(o.record, "w"))) {
        fprintf(stderr, "stvm-bench: zn: cannot write %s\n", o.record);
        rc = BENCH_EXIT_FAIL;
    } else if (z.record) {
        fputs(ZN_RECORDING_MAGIC "\n", z.record);
    }
    if (rc == BENCH_GO_ON) {
        bool ran = run_all(&z);
        nginx_stop(s);
        bench_results r;
        bench_results_init(&r, "zn");
        rc = output(&z, &r, ran);
        bench_results_free(&r);
    }
    if (z.record)
        fclose(z.record);
    zn_recording_free(&z.replayed);
    free(s);
    free(z.rows);
    return rc;
}
