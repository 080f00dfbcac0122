/*
 * stvm-bench zn: the ZnClient experiment (Sven Van Caekenberghe's report: logging off
 * about 3,000 requests/s, on 2,500, on with an inspector subscribed 7,000-8,000). Within
 * a repetition wrk runs first, then every configuration once in a fresh VM (zn_run.c),
 * so that noise hits them alike.
 */
#include "zn_cmd.h"

#include "nginx.h"
#include "render.h"
#include "wrk.h"
#include "zn_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const zn_logging_words[] = {"off", "on", "subscriber", NULL};
const char *const zn_events_words[] = {"written", "read", "transaction", "all", NULL};
const char *const zn_mode_words[] = {"poll", "legacy", "spin", NULL}; /* STVM_IDLE_* */
const char *const zn_wait_words[] = {"timed", "plain", NULL};
const char *const zn_onoff_words[] = {"off", "on", NULL};

static const bench_opt zn_table[] = {
    BENCH_WORDS("logging", "off,on,subscriber", zn_logging_words, zn_opts, logging,
                "off: level 0, no event built; on: level 3, three ZnLogEvents per request "
                "announced to nobody; subscriber: level 3 and a synchronous subscriber."),
    BENCH_INTS("subscriber-cost-us", "60", 0, 100000, zn_opts, cost,
               "CPU per delivered event (varies the subscriber rows only)."),
    BENCH_WORDS("subscriber-events", "all", zn_events_words, zn_opts, events,
                "The class subscribed to (varies the subscriber rows only)."),
    BENCH_WORDS("idle-mode", "poll,legacy,spin", zn_mode_words, zn_opts, modes, "The VM's idle mode."),
    BENCH_INTS("idle-us", "1000", 1, 10000000, zn_opts, idle_us,
               "The relinquish quantum (1000: Pharo 6; 50000: Pharo 7 after February 2018)."),
    BENCH_INTS("wake-inject-us", "0", 0, 1000000, zn_opts, inject,
               "Extra latency after every OS sleep."),
    BENCH_INTS("before-us", "0", 0, 100000, zn_opts, before, "CPU work before the send."),
    BENCH_INTS("between-us", "0", 0, 100000, zn_opts, between,
               "CPU work between the send and the first read."),
    BENCH_INTS("after-us", "0", 0, 100000, zn_opts, after, "CPU work after the read."),
    BENCH_WORDS("wait", "timed", zn_wait_words, zn_opts, wait,
                "timed: waitForDataFor: (Pharo's); plain: waitForDataIfClosed:."),
    BENCH_WORDS("background", "off", zn_onoff_words, zn_opts, background,
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

/* ---- the rows --------------------------------------------------------------------- */

int zn_find_row(const zn_run *z, const zn_config *k)
{
    for (int i = 0; i < z->nrows; i++)
        if (!memcmp(&z->rows[i].cfg, k, sizeof *k))
            return i;
    return -1;
}

/* One of a preset's three cells in this run's world (a real run cannot set the server
 * or the client: they are nginx and this machine). */
const zn_config *zn_preset_cell(const zn_run *z, const zn_preset *p, zn_logging l,
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
    if (zn_find_row(z, k) >= 0)
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
        if (!add_row(z, zn_preset_cell(z, with, (zn_logging)l, &k)))
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

const char *zn_row_text(const zn_config *k, char *buf, size_t size)
{
    if (k->logging == ZN_LOGGING_WRK) {
        snprintf(buf, size, "wrk -t1 -c1");
        return buf;
    }
    int n = k->logging == ZN_LOGGING_SUBSCRIBER
                ? snprintf(buf, size, "subscriber %u us/%s, %s %u us", k->subscriber_cost_us,
                           zn_events_words[k->subscriber_events], zn_mode_words[k->idle_mode],
                           k->idle_us)
                : snprintf(buf, size, "%s, %s %u us", zn_logging_words[k->logging],
                           zn_mode_words[k->idle_mode], k->idle_us);
    if (k->wake_inject_us && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ", wake-up %u us", k->wake_inject_us);
    return buf;
}

double zn_sample_rps(const zn_counts *c)
{
    return c->wall_ns > 0 ? (double)c->requests / ((double)c->wall_ns / 1e9) : 0;
}

double zn_sample_blocked(const zn_counts *c)
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
        !zn_recorder_write(p.recorder, z->record, repetition, zn_sample_rps(out),
                           zn_sample_blocked(out))) {
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
        zn_row *row = &z->rows[zn_find_row(z, &cell->cfg)];
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
                            cell->repetition, zn_row_text(&cell->cfg, text, sizeof text));
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
        int r = zn_find_row(z, &cell->cfg);
        zn_counts c;
        char text[128];
        if (r < 0 || reps[r] == ZN_MAX_REPEAT)
            continue;
        zn_row *row = &z->rows[r];
        if (measure(z, &cell->cfg, cell, cell->repetition, &c, why, sizeof why)) {
            row->versus_rps[reps[r]] = zn_sample_rps(&c);
            row->versus_blocked[reps[r]] = zn_sample_blocked(&c);
            row->nversus = ++reps[r];
        } else {
            fprintf(stderr, "stvm-bench: zn: replaying %s: %s\n",
                    zn_row_text(&cell->cfg, text, sizeof text), why);
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
                                zn_row_text(&row->cfg, text, sizeof text));
        }
    return z->record ? replay_recorded(z) && ok : ok;
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
    zn_fit_result fit;
    bool fitted = false;
    if (z->o->fit) {
        char why[240];
        if (zn_fit(z->o->fit_requests, (uint32_t)z->o->seed, &fit, why, sizeof why) != 0) {
            fprintf(stderr, "stvm-bench: zn: --fit: %s\n", why);
            ran = false;
        } else {
            fitted = true;
            fprintf(stderr, "stvm-bench: zn: --fit: %ld configurations in %.1f s\n",
                    fit.evaluated, fit.seconds);
        }
    }
    zn_results(z, r, fitted ? &fit : NULL);
    bench_judge(r);
    zn_explain(r);
    int rc = bench_output(r, z->inv);
    bool sub = false;
    for (int i = 0; i < z->nrows; i++)
        sub |= z->rows[i].cfg.logging == ZN_LOGGING_SUBSCRIBER && z->rows[i].nsamples > 0;
    if (z->o->plot && !sub)
        fprintf(stderr, "stvm-bench: zn: no subscriber rows to plot (--logging subscriber)\n");
    if (z->o->plot && (!sub || !bench_plot(r, z->inv, "zn.gp", z->o->plot)))
        rc = BENCH_EXIT_FAIL;
    if (z->o->report && !bench_report(z->o->report, r, z->inv, zn_prose, z))
        rc = BENCH_EXIT_FAIL;
    if (z->o->phase_plot && !zn_phase_plot(z))
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
