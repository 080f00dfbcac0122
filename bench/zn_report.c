/*
 * stvm-bench zn: what the outputs show (zn_cmd.h). A record per row with its figures
 * per request (and, beside a recorded run, its replay's); the seed's tables (seed 2 side
 * by side with the modelled world, the sweep in the seed's shape); the targets, each
 * with the reason for a miss read off the counters; the report's words; the real runs
 * the phase diagram shows.
 */
#include "zn_cmd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zn_fit.h"
#include "zn_phase.h"

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

typedef enum zn_figure {
#define ZN_ENUM(id, name, unit, better, dec, field, scale) ZN_FIG_##id,
    ZN_FIGURES(ZN_ENUM)
#undef ZN_ENUM
    ZN_NFIGS
} zn_figure;

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
        double rps = zn_sample_rps(&row->samples[k]), blk = zn_sample_blocked(&row->samples[k]);
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
        bench_record *rec = bench_record_add(r, vm ? zn_logging_words[k->logging] : "wrk");
        /* nginx's port changes from run to run: a name that compares across runs. */
        static const char *const servers[] = {"nginx", "model", "replay"};
        bench_param_add(rec, "server", "%s", z->o->url ? z->url : servers[z->world]);
        if (vm) {
            if (k->logging == ZN_LOGGING_SUBSCRIBER) {
                bench_param_add(rec, "subscriber_cost_us", "%u", k->subscriber_cost_us);
                bench_param_add(rec, "subscriber_events", "%s", zn_events_words[k->subscriber_events]);
            }
            bench_param_add(rec, "idle_mode", "%s", zn_mode_words[k->idle_mode]);
            const struct { const char *key; uint32_t v; } nums[] = {
                {"idle_us", k->idle_us}, {"wake_inject_us", k->wake_inject_us},
                {"before_us", k->before_us}, {"between_us", k->between_us},
                {"after_us", k->after_us}, {"event_cost_us", k->event_cost_us}};
            for (size_t n = 0; n < sizeof nums / sizeof *nums; n++)
                bench_param_add(rec, nums[n].key, "%u", nums[n].v);
            bench_param_add(rec, "wait", "%s", zn_wait_words[k->plain_wait]);
            bench_param_add(rec, "background", "%s", zn_onoff_words[k->background]);
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

/* The preset the run shows beside the seed (--preset, else --with-preset), or NULL. */
static const zn_preset *shown_preset(const zn_opts *o)
{
    return zn_preset_get(o->preset ? o->preset : o->with_preset);
}

/* The selector of row k's record: its case and every parameter make_records gave it. */
static void row_select(const zn_run *z, const zn_config *k, char *buf, size_t size)
{
    static const char *const servers[] = {"nginx", "model", "replay"};
    int n = snprintf(buf, size, "%s server=%s", zn_logging_words[k->logging],
                     z->o->url ? z->url : servers[z->world]);
    if (k->logging == ZN_LOGGING_SUBSCRIBER)
        n += snprintf(buf + n, size - (size_t)n, " subscriber_cost_us=%u subscriber_events=%s",
                      k->subscriber_cost_us, zn_events_words[k->subscriber_events]);
    n += snprintf(buf + n, size - (size_t)n, " idle_mode=%s idle_us=%u wake_inject_us=%u "
                  "before_us=%u between_us=%u after_us=%u event_cost_us=%u wait=%s "
                  "background=%s", zn_mode_words[k->idle_mode], k->idle_us, k->wake_inject_us,
                  k->before_us, k->between_us, k->after_us, k->event_cost_us,
                  zn_wait_words[k->plain_wait], zn_onoff_words[k->background]);
    if (z->world == ZN_WORLD_MODEL)
        snprintf(buf + n, size - (size_t)n, " server_us=%u server_jitter_us=%u client_us=%u",
                 k->server_us, k->server_jitter_us, k->client_us);
}

/* A metric's median in row i's record (NaN without one). */
static double fig(const bench_results *r, int i, const char *metric)
{
    const bench_metric *m = i >= 0 && i < r->nrecords ? bench_metric_find(&r->records[i], metric)
                                                      : NULL;
    return m && m->nsamples ? m->median : NAN;
}

/* What a request cost in row i, from its counters: the sentence a missed target
 * quotes. */
static void costs(const bench_results *r, int i, const char *who, char *buf, size_t size)
{
    double blocked = fig(r, i, "blocked_first_reads_per_request");
    double wait = fig(r, i, "mean_wait_us");
    snprintf(buf, size, "%s %.0f us per request (%.0f us of it CPU), %.2f first reads "
             "blocked per request, waiting %.0f us each", who, fig(r, i, "us_per_request"),
             fig(r, i, "cpu_us_per_request"), blocked, blocked > 0 ? wait / blocked : 0);
}

typedef struct targets {
    const zn_run *z;
    bench_results *r;
} targets;

/* The median time from a flush's return to the answer's arrival in the recording of a
 * row's configuration (us), or NaN without a recording. */
static double recorded_answer_us(const zn_run *z, const zn_config *k)
{
    static double v[1 << 16];
    size_t n = 0;
    for (int c = 0; c < z->replayed.ncells; c++) {
        const zn_rec_cell *cell = &z->replayed.cells[c];
        for (long long q = 0; !memcmp(&cell->cfg, k, sizeof *k) && q < cell->nrequests &&
                              n < sizeof v / sizeof *v; q++)
            if (cell->requests[q].timed)
                v[n++] = (double)cell->requests[q].answer_ns / 1000;
    }
    return n ? bench_median(v, n) : NAN;
}

/* Why a subscriber (row sub) was not more than twice logging off (row off): what it took
 * away in blocked reads against what it added, and when the recorded answers came. */
static void inversion_reason(const targets *t, int off, int sub, char *buf, size_t size)
{
    char a[200], b[200], c[200] = "";
    costs(t->r, off, "logging off:", a, sizeof a);
    costs(t->r, sub, "the subscriber:", b, sizeof b);
    double removed = fig(t->r, off, "blocked_first_reads_per_request") -
                     fig(t->r, sub, "blocked_first_reads_per_request");
    double answer = recorded_answer_us(t->z, &t->z->rows[off].cfg);
    if (isfinite(answer))
        snprintf(c, sizeof c, "; the recording: nginx's answer came a median %.1f us after "
                 "the flush returned (0: during it)", answer);
    snprintf(buf, size, "%s; %s: it removed %.2f blocked reads per request, which saved less "
             "than the work it added%s", a, b, removed, c);
}

/* A ratio target between two rows (bench_target_add's), with the reason for a miss
 * written now: zn_explain keeps it only beside a miss. */
static void ratio_target(targets *t, const char *text, bench_target_kind kind,
                         const zn_config *num, const zn_config *den, double limit,
                         const char *reason)
{
    char a[600], b[600];
    int i = zn_find_row(t->z, num), j = zn_find_row(t->z, den);
    if (i < 0 || j < 0 || !t->z->rows[i].nsamples || !t->z->rows[j].nsamples)
        return;
    row_select(t->z, num, a, sizeof a);
    row_select(t->z, den, b, sizeof b);
    bench_target *g = bench_target_add(t->r, text, kind, a, "requests_per_second", limit, b,
                                       "requests_per_second");
    bench_target_note(g, "%s", reason);
}

static zn_config plain(zn_logging l, int mode, uint32_t cost)
{
    return (zn_config){.logging = l, .idle_mode = mode, .idle_us = 1000, .event_cost_us = 5,
                       .subscriber_cost_us = l == ZN_LOGGING_SUBSCRIBER ? cost : 0,
                       .subscriber_events = ZN_EVENTS_ALL};
}

/* The shape of the seed in a world: logging on slower than off, and the subscriber more
 * than twice as fast where blocking is dear (inverted: the legacy mode's blind
 * millisecond, a preset's injected wake-up), no faster where it is cheap (the poll
 * and spin modes on this machine: the README's "no inversion on today's Linux"). */
static void shape_targets(targets *t, const char *world, zn_config off, zn_config on,
                          zn_config sub, bool inverted)
{
    char text[200], why[900];
    int o = zn_find_row(t->z, &off), n = zn_find_row(t->z, &on), s = zn_find_row(t->z, &sub);
    if (o < 0 || n < 0 || s < 0)
        return;
    double bo = fig(t->r, o, "blocked_first_reads_per_request"),
           bn = fig(t->r, n, "blocked_first_reads_per_request");
    snprintf(why, sizeof why, "logging on blocked %.2f first reads per request against off's "
             "%.2f: the request-written event's %u us between the send and the read let the "
             "answer arrive first in %.2f of requests, which saved more waiting than the three "
             "events cost", bn, bo, on.event_cost_us, bo - bn);
    snprintf(text, sizeof text, "%s: logging on slower than off (the seed: 0.83x)", world);
    ratio_target(t, text, BENCH_TARGET_AT_MOST, &on, &off, 0.999, why);
    if (inverted) {
        inversion_reason(t, o, s, why, sizeof why);
        snprintf(text, sizeof text, "%s: the subscriber (%u us per event) over 2x logging off "
                 "(the seed: 2.3-2.7x)", world, sub.subscriber_cost_us);
        ratio_target(t, text, BENCH_TARGET_AT_LEAST, &sub, &off, 2.0, why);
        return;
    }
    char a[200], b[200];
    costs(t->r, o, "logging off:", a, sizeof a);
    costs(t->r, s, "the subscriber:", b, sizeof b);
    snprintf(why, sizeof why, "%s; %s: a blocked read cost less here than the subscriber's "
             "work, yet it won: the machine's own rhythm changed nginx's turnaround", a, b);
    snprintf(text, sizeof text, "%s: the subscriber (%u us per event) no faster than logging "
             "off (blocking is cheap: no inversion)", world, sub.subscriber_cost_us);
    ratio_target(t, text, BENCH_TARGET_AT_MOST, &sub, &off, 1.0, why);
}

/* The seed's own figures, within 15%, in the modelled world of a preset. */
static void seed_targets(targets *t, const zn_preset *p)
{
    static const double lo[] = {SEED2_OFF_RPS, SEED2_ON_RPS, SEED2_SUB_LO_RPS},
                        hi[] = {SEED2_OFF_RPS, SEED2_ON_RPS, SEED2_SUB_HI_RPS};
    static const char *const names[] = {"logging off", "logging on", "the subscriber"};
    for (int l = 0; l < 3; l++) {
        zn_config k;
        int i = zn_find_row(t->z, zn_preset_cell(t->z, p, (zn_logging)l, &k));
        if (i < 0 || !t->z->rows[i].nsamples)
            continue;
        char sel[600], text[200];
        row_select(t->z, &k, sel, sizeof sel);
        for (int side = 0; side < 2; side++) {
            double bound = side ? hi[l] * (1 + SEED2_TOLERANCE) : lo[l] * (1 - SEED2_TOLERANCE);
            snprintf(text, sizeof text, "model %s: %s at %s %.0f/s (the seed's %.0f%s, %s 15%%)",
                     p->name, names[l], side ? "most" : "least", bound, side ? hi[l] : lo[l],
                     l == 2 ? (side ? " top" : " bottom") : "", side ? "+" : "-");
            bench_target *g = bench_target_add(t->r, text, side ? BENCH_TARGET_AT_MOST
                                                                : BENCH_TARGET_AT_LEAST,
                                               sel, "requests_per_second", bound, NULL, NULL);
            bench_target_note(g, "the model ran %.0f us per request with %.2f first reads "
                              "blocked; the preset was fitted with --fit-requests cells, "
                              "this run's length differs", fig(t->r, i, "us_per_request"),
                              fig(t->r, i, "blocked_first_reads_per_request"));
        }
    }
}

/* Every row beside its replay: requests/s within 10%, blocked first reads within 0.05. */
static void replay_targets(targets *t)
{
    for (int i = 0; i < t->z->nrows; i++) {
        const zn_row *row = &t->z->rows[i];
        if (!row->nversus || row->cfg.logging == ZN_LOGGING_WRK)
            continue;
        char sel[600], text[300], what[160];
        row_select(t->z, &row->cfg, sel, sizeof sel);
        zn_row_text(&row->cfg, what, sizeof what);
        double rec = t->z->world == ZN_WORLD_REPLAY ? fig(t->r, i, "recorded_requests_per_second")
                                                   : fig(t->r, i, "requests_per_second");
        double rep = t->z->world == ZN_WORLD_REPLAY ? fig(t->r, i, "requests_per_second")
                                                   : fig(t->r, i, "replay_requests_per_second");
        snprintf(text, sizeof text, "replay of %s: requests/s within 10%% of the recorded run",
                 what);
        bench_target *g = bench_target_add(t->r, text, BENCH_TARGET_AT_MOST, sel,
                                           "replay_rps_error", 0.10, NULL, NULL);
        bench_target_note(g, "recorded %.0f/s, replayed %.0f/s: what the replay does not "
                          "model (docs/znclient-experiment.md, \"What a replay cannot "
                          "capture\") moved this cell", rec, rep);
        snprintf(text, sizeof text, "replay of %s: blocked first reads within 0.05 of the "
                 "recorded run", what);
        g = bench_target_add(t->r, text, BENCH_TARGET_AT_MOST, sel,
                             "replay_blocked_first_difference", 0.05, NULL, NULL);
        bench_target_note(g, "a request blocks in the replay when the recorded answer came "
                          "later after the flush than the client's first read did: the "
                          "recorded spans disagree at the boundary for these requests");
    }
}

/* Each target only when its rows ran: a run that did not ask for one is not judged. */
static void add_targets(const zn_run *z, bench_results *r)
{
    targets t = {z, r};
    zn_config off = plain(ZN_LOGGING_OFF, STVM_IDLE_POLL, 0);
    int o = zn_find_row(z, &off), w = z->o->no_wrk || z->world != ZN_WORLD_REAL ? -1 : 0;
    if (o >= 0 && w == 0 && z->rows[o].nsamples) {
        char sel[600], a[200];
        row_select(z, &off, sel, sizeof sel);
        bench_target *g = bench_target_add(r, "logging off, poll, 1 ms: at least 0.8x wrk "
                                           "-t1 -c1's requests/s in the same repetition",
                                           BENCH_TARGET_AT_LEAST, sel, "vs_wrk", 0.8, NULL, NULL);
        costs(r, o, "the client:", a, sizeof a);
        bench_target_note(g, "%s; wrk: %.0f us per request", a, fig(r, 0, "us_per_request"));
    }
    const char *world = z->world == ZN_WORLD_REAL ? "nginx" : z->world == ZN_WORLD_MODEL
                                                                  ? "model" : "replay";
    char name[200];
    for (int m = 0; m < 3; m++) {
        snprintf(name, sizeof name, "%s, %s 1 ms", world, zn_mode_words[m]);
        shape_targets(&t, name, plain(ZN_LOGGING_OFF, m, 0), plain(ZN_LOGGING_ON, m, 0),
                      plain(ZN_LOGGING_SUBSCRIBER, m, 60), m == STVM_IDLE_LEGACY);
    }
    const zn_preset *p = shown_preset(z->o);
    if (p) {
        zn_config k[3];
        for (int l = 0; l < 3; l++)
            zn_preset_cell(z, p, (zn_logging)l, &k[l]);
        snprintf(name, sizeof name, "%s, preset %s", world, p->name);
        shape_targets(&t, name, k[0], k[1], k[2], true);
        if (z->world == ZN_WORLD_MODEL)
            seed_targets(&t, p);
    }
    replay_targets(&t);
}

void zn_explain(bench_results *r)
{
    for (int i = 0; i < r->ntargets; i++)
        if (r->targets[i].verdict != BENCH_MISSED && r->targets[i].verdict != BENCH_NOT_JUDGED)
            bench_target_note(&r->targets[i], "%s", "");
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
    static const char *const head[] = {"idle mode", "idle us", "wake-up us", "sub. us",
                                       "off /s", "on /s", "subscriber /s", "on/off", "sub/off",
                                       "off: blocked 1st", "sub: blocked 1st"};
    bench_table *t = NULL;
    for (int i = 0; i < z->nrows; i++) {
        zn_config k = z->rows[i].cfg;
        if (k.logging != ZN_LOGGING_SUBSCRIBER || k.subscriber_events != ZN_EVENTS_ALL ||
            k.before_us || k.between_us || k.after_us || k.plain_wait || k.background)
            continue;
        k.subscriber_cost_us = 0;
        k.logging = ZN_LOGGING_OFF;
        int off = zn_find_row(z, &k);
        k.logging = ZN_LOGGING_ON;
        int on = zn_find_row(z, &k);
        const char *rps = "requests_per_second", *blk = "blocked_first_reads_per_request";
        double o = median_of(r, off, rps), n = median_of(r, on, rps), s = median_of(r, i, rps);
        if (off < 0 || !isfinite(s))
            continue;
        if (!t) {
            t = bench_table_add(r, "The sweep in the seed's shape: requests per second with "
                                "logging off, on, and on with a subscriber to every event "
                                "(medians)", 11, "lrrrrrrrrrr");
            bench_table_row(t, head);
        }
        double v[11] = {[4] = o, n, s, n / o, s / o, median_of(r, off, blk),
                        median_of(r, i, blk)};
        char c[11][32];
        const char *cells[11];
        snprintf(c[0], 32, "%s", zn_mode_words[k.idle_mode]);
        snprintf(c[1], 32, "%u", k.idle_us);
        snprintf(c[2], 32, "%u", k.wake_inject_us);
        snprintf(c[3], 32, "%u", z->rows[i].cfg.subscriber_cost_us);
        for (int j = 0; j < 11; j++) {
            if (j >= 4 && isfinite(v[j]))   /* rates, then ratios and fractions */
                snprintf(c[j], 32, "%.*f", j < 7 ? 0 : 2, v[j]);
            else if (j >= 4)
                snprintf(c[j], 32, "-");
            cells[j] = c[j];
        }
        bench_table_row(t, cells);
    }
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
                      : (blocked ? zn_sample_blocked(&row->samples[k]) : zn_sample_rps(&row->samples[k]));
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
        int i = zn_find_row(z, zn_preset_cell(z, p, (zn_logging)l, &k));
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
bool zn_phase_plot(const zn_run *z)
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
               o = row_median(z, zn_find_row(z, &off), false, false);
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

/* A sum over the VM rows' records of a per-request metric times the row's requests:
 * the run's total of that counter. */
static double total(const bench_results *r, const char *metric)
{
    double sum = 0;
    for (int i = 0; i < r->nrecords; i++) {
        double per = fig(r, i, metric), n = fig(r, i, "requests");
        if (isfinite(per) && isfinite(n))
            sum += per * n;
    }
    return sum;
}

/* The mechanics the report states, each a ratio of this run's own counters (the suite
 * zn_world checks these lines against the JSON). */
static void mechanics(FILE *f, const bench_results *r)
{
    double blocked = total(r, "blocked_first_reads_per_request");
    fputs("## The mechanics, as this run counted them\n\n", f);
    if (blocked > 0)
        fprintf(f, "- mechanics: per blocked first read, %.2f timed waits (DelayWaitTimeout), "
                "%.2f timing-process activations and %.2f OS sleeps (totals over every "
                "configuration: a blocked read is one of each; one activation, not Pharo's "
                "two, because stvm's waiter unschedules its own Delay).\n",
                total(r, "timed_waits_per_request") / blocked,
                total(r, "timing_activations_per_request") / blocked,
                total(r, "os_sleeps_per_request") / blocked);
    for (int i = 0; i < r->nrecords; i++)
        if (!strcmp(r->records[i].name, "on") && isfinite(fig(r, i, "events_per_request"))) {
            fprintf(f, "- mechanics: logging on builds %.2f ZnLogEvents per request (one, the "
                    "request-written event, between the send and the first read; two after "
                    "it) and delivers %.2f: nobody is subscribed, the announcer returns at "
                    "once.\n", fig(r, i, "events_per_request"), fig(r, i, "deliveries_per_request"));
            break;
        }
    for (int i = 0; i < r->nrecords; i++) {
        const char *ev = bench_param_find(&r->records[i], "subscriber_events");
        if (!strcmp(r->records[i].name, "subscriber") && ev && !strcmp(ev, "all")) {
            fprintf(f, "- mechanics: a subscriber to every ZnLogEvent receives %.2f "
                    "deliveries per request, each in the announcing process.\n",
                    fig(r, i, "deliveries_per_request"));
            break;
        }
    }
    fputc('\n', f);
}

void zn_prose(FILE *f, const bench_results *r, const void *data)
{
    const zn_run *z = data;
    const zn_opts *o = z->o;
    const zn_preset *p = shown_preset(o);
    static const char *const worlds[] = {
        "a real nginx on loopback, the wall clock",
        "the modelled world on the simulated clock (no nginx, no wall clock: the same figures "
        "on every run)",
        "a replay, on the simulated clock, of the recording"};
    fprintf(f, "# The ZnClient experiment (stvm-bench zn)\n\n"
            "The seed: a ZnClient loop against a local nginx on a 2017 Mac (Pharo 6 and 7) "
            "did about **3,000 requests/s with logging off, 2,500 with logging on, and "
            "7,000-8,000 with logging on while a GT inspector was subscribed** to the log "
            "announcer: more work, more than twice as fast.\n\n"
            "This run: %s (%s), %lld requests after %lld of warm-up per configuration (at "
            "most %lld s), each configuration in a fresh VM, %lld repetitions%s. Every figure "
            "is a median over the repetitions and keeps each one's sample.\n\n",
            worlds[z->world], z->world == ZN_WORLD_MODEL ? "its server modelled" : z->url,
            o->requests, o->warmup, o->max_seconds, o->repeat,
            z->world == ZN_WORLD_REAL && !o->no_wrk ? "; wrk -t1 -c1 on the same URL in "
                                                      "every repetition" : "");
    fputs("## How to read it\n\n", f);
    int item = 1;
    if (p)
        fprintf(f, "%d. **Seed 2 side by side**: the seed's three figures, the modelled world "
                "of the preset %s (%s) on the simulated clock, this run's cells of that "
                "world%s. The model reproduces the seed; the real machine shows what differs "
                "(nginx's turnaround here, a wake-up that spins instead of idling) and the "
                "replay shows that the model's machinery reproduces the real run once it is "
                "given the real world's timings.\n", item++, p->name, p->what,
                z->world == ZN_WORLD_REAL ? " on nginx and their replay" : "");
    if (o->fit)
        fprintf(f, "%d. **The fit** (`--fit`): the search over the model's physical parameters for "
              "the seed's figures; the best fit in the worlds Pharo 6/7 ran in, the best per "
              "family of worlds (the legacy idle mode with Pharo 6's 1 ms quantum cannot "
              "exceed about 1,000 requests/s with logging off: the seed's own 3,000 rules it "
              "out), and each parameter's fitting range and sensitivity.\n", item++);
    fprintf(f, "%d. **The sweep in the seed's shape**: per idle mode and quantum, logging off, on "
          "and the subscriber at each cost, with on/off, subscriber/off and the blocked first "
          "reads. The poll mode is the VM since May 2017 (stvm's default), legacy the one "
          "before (a blind sleep of the quantum), spin never sleeps.\n"
          "%d. **The records**: every configuration's figures per request: requests/s, us and "
          "CPU us per request, blocked first reads, timed waits, timing-process activations, "
          "OS sleeps and the time in them, what ended them, the phases (between the send and "
          "the first read, waiting in it, parsing, after), and beside a recorded run its "
          "replay's requests/s and blocked first reads with the replay's errors.\n"
          "%d. **The targets**, each with what it measures, what it got and its bound; a "
          "missed target carries its reason, read off this run's counters.\n\n", item,
          item + 1, item + 2);
    if (z->record || z->replayed.ncells)
        fputs("The replay (`--record`, `--replay`) runs the same client, scheduler and Delay "
              "machinery on the simulated clock against what the recorded run's world did: "
              "for every request the answer's arrival after the flush (the kernel's receive "
              "timestamp), every OS sleep's wake-up cost, and the client's own CPU between its "
              "points. What it cannot capture: how nginx would have answered a different "
              "rhythm (a replay of other knobs keeps the recorded turnarounds), CPU frequency "
              "and cache effects beyond the recorded spans, and preemption of the VM's thread "
              "inside a span (it counts as the client's CPU).\n\n", f);
    mechanics(f, r);
}

void zn_results(const zn_run *z, bench_results *r, const zn_fit_result *fit)
{
    make_records(z, r);
    seed2_table(z, r);
    if (fit)
        zn_fit_tables(fit, r);
    seed_table(z, r);
    add_targets(z, r);
}
