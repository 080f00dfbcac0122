/*
 * stvm-bench zn: the ZnClient experiment (Sven Van Caekenberghe's report: logging off
 * about 3,000 requests/s, on 2,500, on with an inspector subscribed 7,000-8,000). The
 * command: its options (each knob a comma list; every combination runs), nginx started
 * for the run (bench/nginx.h), the wrk baseline, the repetitions, and the output.
 * Within a repetition wrk runs first, then every configuration once in a fresh VM, so
 * that noise hits them alike; figures are medians over the repetitions.
 */
#include "bench.h"
#include "nginx.h"
#include "wrk.h"
#include "zn_measure.h"
#include "zn_render.h"
#include "zn_report.h"

#include <stdlib.h>
#include <string.h>

/* One knob's values. */
typedef struct zn_list {
    long long v[ZN_MAX_LIST];
    int n;
} zn_list;

typedef struct zn_opts {
    zn_list logging, cost, events, modes, idle_us, inject, before, between, after, wait, bg;
    long long event_cost_us, requests, warmup, max_seconds, wrk_seconds;
    int repeat, cpu;
    bool no_wrk;
    const char *plot, *report;
    bench_format format;
    bench_trace trace;
} zn_opts;

static void zn_help(FILE *f)
{
    fprintf(f,
            "usage: stvm-bench zn [OPTIONS]   (every LIST is comma-separated; every\n"
            "                                  combination runs)\n"
            "  --logging LIST            off, on, subscriber (default all three)\n"
            "  --subscriber-cost-us LIST CPU per delivered event, 0..100000 (default 60;\n"
            "                            varies the subscriber rows only)\n"
            "  --subscriber-events LIST  written, read, transaction, all (default all)\n"
            "  --idle-mode LIST          poll, legacy, spin (default all three)\n"
            "  --idle-us LIST            relinquish quantum, 1..10000000 (default 1000:\n"
            "                            Pharo 6; 50000: Pharo 7 after February 2018)\n"
            "  --wake-inject-us LIST     extra latency after every OS sleep (default 0)\n"
            "  --before-us LIST          CPU work before the send (default 0)\n"
            "  --between-us LIST         CPU work between the send and the first read\n"
            "  --after-us LIST           CPU work after the read (defaults 0)\n"
            "  --wait LIST               timed (waitForDataFor:, Pharo's; default) or plain\n"
            "                            (waitForDataIfClosed:)\n"
            "  --background LIST         off (default) or on: a busy process at priority 30\n"
            "  --event-cost-us N         CPU to build one ZnLogEvent (default 5)\n"
            "  --requests N              timed requests per configuration (default 2000)\n"
            "  --warmup N                requests before the timed ones (default 200)\n"
            "  --max-seconds S           time limit of a configuration's timed part\n"
            "                            (default 2)\n"
            "  --repeat K                repetitions, medians reported (default 3)\n"
            "  --wrk-seconds S           wrk's duration per repetition (default 2)\n"
            "  --no-wrk                  no wrk baseline row\n"
            "  --cpu N                   pin the VM (and wrk) to CPU N and nginx to the next\n"
            "                            one (default -1: nothing pinned, which suits a shared\n"
            "                            machine best)\n"
            "  --format F                table (default), csv, json or markdown\n"
            "  --plot FILE               requests/s against subscriber cost, one line per\n"
            "                            idle mode (gnuplot; .gp and .dat beside FILE)\n"
            "  --report FILE             the Markdown report\n");
    bench_trace_help(f, 28, "one configuration's VM (the client's; nginx and wrk are\n"
                            "other processes, and the wrk row runs untraced)");
}

/* ---- options ---------------------------------------------------------------------------- */

static int names_option(const char *v, const char *flag, const char *const *names, int n,
                        zn_list *out)
{
    long bits = bench_parse_names(v, names, n);
    if (bits < 0)
        return bench_usage_error("zn ", "%s: '%s' is not a list of known words", flag,
                                 v ? v : "");
    out->n = 0;
    for (int k = 0; k < n; k++)
        if (bits & (1L << k))
            out->v[out->n++] = k;
    return BENCH_NEXT;
}

static int list_option(int argc, char **argv, int *i, zn_opts *o)
{
    static const char *const logging[] = {"off", "on", "subscriber"};
    static const char *const events[] = {"written", "read", "transaction", "all"};
    static const char *const modes[] = {"poll", "legacy", "spin"};   /* STVM_IDLE_* order */
    static const char *const wait[] = {"timed", "plain"};
    static const char *const bg[] = {"off", "on"};
    const struct { const char *flag; const char *const *names; int n; zn_list *out; } w[] = {
        {"--logging", logging, 3, &o->logging}, {"--subscriber-events", events, 4, &o->events},
        {"--idle-mode", modes, 3, &o->modes}, {"--wait", wait, 2, &o->wait},
        {"--background", bg, 2, &o->bg}};
    const struct { const char *flag; long long lo, hi; zn_list *out; } num[] = {
        {"--subscriber-cost-us", 0, 100000, &o->cost}, {"--idle-us", 1, 10000000, &o->idle_us},
        {"--wake-inject-us", 0, 1000000, &o->inject}, {"--before-us", 0, 100000, &o->before},
        {"--between-us", 0, 100000, &o->between}, {"--after-us", 0, 100000, &o->after}};
    const char *v = NULL;
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++)
        if (bench_flag(argc, argv, i, w[k].flag, &v))
            return names_option(v, w[k].flag, w[k].names, w[k].n, w[k].out);
    for (size_t k = 0; k < sizeof num / sizeof num[0]; k++)
        if (bench_flag(argc, argv, i, num[k].flag, &v)) {
            int n = bench_parse_numbers(v, num[k].lo, num[k].hi, num[k].out->v, ZN_MAX_LIST);
            if (n < 0)
                return bench_usage_error("zn ", "%s wants up to %d numbers in %lld..%lld, "
                                         "not '%s'", num[k].flag, ZN_MAX_LIST, num[k].lo,
                                         num[k].hi, v ? v : "");
            num[k].out->n = n;
            return BENCH_NEXT;
        }
    return BENCH_NOT_MINE;
}

static int number_option(int argc, char **argv, int *i, zn_opts *o)
{
    const struct { const char *flag; long long lo, hi; long long *out; } num[] = {
        {"--event-cost-us", 0, 100000, &o->event_cost_us},
        {"--requests", 10, 100000000, &o->requests}, {"--warmup", 0, 1000000, &o->warmup},
        {"--max-seconds", 1, 3600, &o->max_seconds}, {"--wrk-seconds", 1, 60, &o->wrk_seconds}};
    const char *v = NULL;
    long long n;
    for (size_t k = 0; k < sizeof num / sizeof num[0]; k++) {
        int rc = bench_count_option(argc, argv, i, "zn ", num[k].flag, num[k].lo, num[k].hi,
                                    NULL, num[k].out);
        if (rc != BENCH_NOT_MINE)
            return rc;
    }
    if (bench_flag(argc, argv, i, "--repeat", &v)) {
        if (!bench_parse_ll(v, 1, ZN_MAX_REPEAT, &n))
            return bench_usage_error("zn ", "--repeat wants 1..%d, not '%s'", ZN_MAX_REPEAT,
                                     v ? v : "");
        o->repeat = (int)n;
        return BENCH_NEXT;
    }
    return BENCH_NOT_MINE;
}

static int parse_option(int argc, char **argv, int *i, zn_opts *o)
{
    if (!strcmp(argv[*i], "--help") || !strcmp(argv[*i], "-h")) {
        zn_help(stdout);
        return BENCH_EXIT_OK;
    }
    if (!strcmp(argv[*i], "--no-wrk")) {
        o->no_wrk = true;
        (*i)++;
        return BENCH_NEXT;
    }
    const char *v = NULL;
    if (bench_flag(argc, argv, i, "--plot", &v)) {
        o->plot = v;
        return BENCH_NEXT;
    }
    if (bench_flag(argc, argv, i, "--report", &v)) {
        o->report = v;
        return BENCH_NEXT;
    }
    int rc = list_option(argc, argv, i, o);
    if (rc == BENCH_NOT_MINE)
        rc = number_option(argc, argv, i, o);
    if (rc == BENCH_NOT_MINE)
        rc = bench_trace_option(argc, argv, i, "zn ", &o->trace);
    if (rc == BENCH_NOT_MINE)
        rc = bench_common_option(argc, argv, i, "zn ", &o->cpu, &o->format);
    if (rc == BENCH_NOT_MINE)
        return bench_usage_error("zn ", "unknown option '%s'", argv[*i]);
    return rc;
}

/* ---- the rows ------------------------------------------------------------------------------ */

static bool add_row(zn_report *rep, const zn_config *k)
{
    for (int i = 0; i < rep->nrows; i++)
        if (zn_config_equal(&rep->rows[i].cfg, k))
            return true;       /* off and on rows repeat across subscriber knobs */
    if (rep->nrows == ZN_MAX_ROWS)
        return false;
    rep->rows[rep->nrows++].cfg = *k;
    return true;
}

/* Logging, its subscriber knobs (subscriber rows only) and the idle mode, innermost. */
static bool add_inner(const zn_opts *o, zn_report *rep, zn_config k)
{
    for (int m = 0; m < o->modes.n; m++)
        for (int l = 0; l < o->logging.n; l++) {
            k.idle_mode = (int)o->modes.v[m];
            k.logging = (zn_logging)o->logging.v[l];
            bool sub = k.logging == ZN_LOGGING_SUBSCRIBER;
            for (int e = 0; e < (sub ? o->events.n : 1); e++)
                for (int c = 0; c < (sub ? o->cost.n : 1); c++) {
                    k.subscriber_events = sub ? (zn_events)o->events.v[e] : ZN_EVENTS_ALL;
                    k.subscriber_cost_us = sub ? (uint32_t)o->cost.v[c] : 0;
                    if (!add_row(rep, &k))
                        return false;
                }
        }
    return true;
}

static bool make_rows(const zn_opts *o, zn_report *rep)
{
    if (!o->no_wrk)
        rep->rows[rep->nrows++].cfg = (zn_config){.logging = ZN_LOGGING_WRK, .idle_mode = -1};
    zn_config k = {0};
    k.event_cost_us = (uint32_t)o->event_cost_us;
    bool ok = true;
    for (int a = 0; a < o->idle_us.n; a++)
        for (int b = 0; b < o->inject.n; b++)
            for (int c = 0; c < o->wait.n; c++)
                for (int d = 0; d < o->bg.n; d++)
                    for (int e = 0; e < o->before.n; e++)
                        for (int f = 0; f < o->between.n; f++)
                            for (int g = 0; g < o->after.n && ok; g++) {
                                k.idle_us = (uint32_t)o->idle_us.v[a];
                                k.wake_inject_us = (uint32_t)o->inject.v[b];
                                k.plain_wait = o->wait.v[c] == 1;
                                k.background = o->bg.v[d] == 1;
                                k.before_us = (uint32_t)o->before.v[e];
                                k.between_us = (uint32_t)o->between.v[f];
                                k.after_us = (uint32_t)o->after.v[g];
                                ok = add_inner(o, rep, k);
                            }
    return ok;
}

/* The rows, and --trace's one-cell rule: BENCH_NEXT or a usage error. */
static int plan_rows(const zn_opts *o, zn_report *rep)
{
    if (!make_rows(o, rep))
        return bench_usage_error("zn ", "more than %d combinations", ZN_MAX_ROWS);
    long vm_rows = rep->nrows - (o->no_wrk ? 0 : 1);
    return bench_trace_one_cell(&o->trace, "zn ", vm_rows * o->repeat,
                                "give every LIST one value and --repeat 1");
}

/* ---- the runs ----------------------------------------------------------------------------- */

static void row_failed(zn_row *row, int k, const char *why)
{
    snprintf(row->note, sizeof row->note, "repetition %d failed: %s", k + 1, why);
    if (bench_progress_on())
        fputc('\n', stderr);
    fprintf(stderr, "stvm-bench: zn: %s\n", row->note);
}

static bool run_wrk(const zn_opts *o, const nginx_server *s, zn_row *row, int k)
{
    wrk_options wo;
    wrk_options_init(&wo);
    wo.seconds = (int)o->wrk_seconds;
    char url[128], err[256] = "";
    nginx_url(s, NGINX_PATH_STATIC, url, sizeof url);
    wrk_result *w = calloc(1, sizeof *w);
    bool ok = w && wrk_run(&wo, url, w, err, sizeof err) == 0;
    if (ok) {
        row->samples[k].wrk_requests_per_second = w->requests_per_sec;
        row->samples[k].wrk_p50_us = w->latency_p50_us;
        row->nsamples = k + 1;
    } else {
        row_failed(row, k, w ? err : "out of memory");
    }
    free(w);
    return ok;
}

static bool run_cell(const zn_opts *o, const zn_report *rep, zn_row *row, int k, int i)
{
    if (row->note[0])   /* failed in an earlier repetition */
        return false;
    if (bench_progress_on())
        bench_progress("[%d/%d] row %d of %d: %s %s", k + 1, o->repeat, i + 1, rep->nrows,
                       zn_logging_name(row->cfg.logging), zn_idle_mode_name(row->cfg.idle_mode));
    zn_params p = {.cfg = row->cfg, .port = rep->port, .path = NGINX_PATH_STATIC,
                   .body_size = rep->body_size, .requests = rep->requests,
                   .warmup = rep->warmup, .max_seconds = rep->max_seconds,
                   .trace = &o->trace};
    char why[240] = "";
    bench_watchdog((unsigned)(3 * rep->max_seconds + 60));
    int err = zn_measure(&p, &row->samples[k], why, sizeof why);
    bench_watchdog(0);
    if (!err && row->samples[k].requests == 0) {
        snprintf(why, sizeof why, "no request completed within the time limit");
        err = -1;
    }
    if (err) {
        row_failed(row, k, why);
        return false;
    }
    row->nsamples = k + 1;
    return true;
}

static bool run_all(const zn_opts *o, zn_report *rep, const nginx_server *s)
{
    bool ok = true;
    for (int k = 0; k < o->repeat; k++)
        for (int i = 0; i < rep->nrows; i++) {
            zn_row *row = &rep->rows[i];
            if (row->cfg.logging == ZN_LOGGING_WRK) {
                if (bench_progress_on())
                    bench_progress("[%d/%d] wrk -t1 -c1 -d%llds", k + 1, o->repeat,
                                   o->wrk_seconds);
                ok &= run_wrk(o, s, row, k);
            } else {
                ok &= run_cell(o, rep, row, k, i);
            }
        }
    if (bench_progress_on())
        bench_progress("%d repetitions done\n", o->repeat);
    return ok;
}

static void write_report(FILE *f, const void *rep)
{
    zn_print_report(f, rep);
}

/* False when a report or plot file could not be written. */
static bool output(const zn_opts *o, const zn_report *rep)
{
    if (o->format == FMT_CSV)
        zn_print_csv(stdout, rep);
    else if (o->format == FMT_JSON)
        zn_print_json(stdout, rep);
    else
        zn_print_table(stdout, rep, o->format == FMT_MARKDOWN);
    bool ok = !o->report || bench_write_report(o->report, write_report, rep);
    return (!o->plot || zn_plot(o->plot, rep) == 0) && ok;
}

static void list_default(zn_list *l, long long a, long long b, long long c, int n)
{
    l->v[0] = a;
    l->v[1] = b;
    l->v[2] = c;
    l->n = n;
}

static void opts_init(zn_opts *o)
{
    memset(o, 0, sizeof *o);
    list_default(&o->logging, ZN_LOGGING_OFF, ZN_LOGGING_ON, ZN_LOGGING_SUBSCRIBER, 3);
    list_default(&o->cost, 60, 0, 0, 1);
    list_default(&o->events, ZN_EVENTS_ALL, 0, 0, 1);
    list_default(&o->modes, STVM_IDLE_POLL, STVM_IDLE_LEGACY, STVM_IDLE_SPIN, 3);
    list_default(&o->idle_us, 1000, 0, 0, 1);
    zn_list *zero[] = {&o->inject, &o->before, &o->between, &o->after, &o->wait, &o->bg};
    for (size_t k = 0; k < sizeof zero / sizeof zero[0]; k++)
        list_default(zero[k], 0, 0, 0, 1);
    o->event_cost_us = 5;
    o->requests = 2000;
    o->warmup = 200;
    o->max_seconds = 2;
    o->wrk_seconds = 2;
    o->repeat = 3;
    o->cpu = -1;
    o->format = FMT_TABLE;
    o->trace.events = BENCH_TRACE_EVENTS;
}

/* With the VM pinned (--cpu N), nginx gets the next CPU, so neither waits for the other
 * (inheriting the bench's pin would put both on one CPU). */
static int start_nginx(nginx_server *s, zn_report *rep)
{
    nginx_options no;
    nginx_options_init(&no);
    no.ipv6 = false;
    if (rep->cpu >= 0 && bench_ncpu() > 1)
        no.cpu = (rep->cpu + 1) % bench_ncpu();
    if (nginx_start(s, &no) != 0) {
        fprintf(stderr, "stvm-bench: zn: %s\n", s->error);
        return BENCH_EXIT_FAIL;
    }
    rep->port = s->port;
    rep->body_size = s->static_size;
    return BENCH_EXIT_OK;
}

int zn_main(int argc, char **argv)
{
    zn_opts o;
    opts_init(&o);
    int rc = BENCH_NEXT;
    for (int i = 1; i < argc && rc == BENCH_NEXT;)
        rc = parse_option(argc, argv, &i, &o);
    if (rc != BENCH_NEXT)
        return rc;
    if ((rc = bench_pin_option(o.cpu)) != BENCH_EXIT_OK)
        return rc;
    zn_report *rep = calloc(1, sizeof *rep);
    if (!rep) {
        fprintf(stderr, "stvm-bench: zn: out of memory\n");
        return BENCH_EXIT_FAIL;
    }
    rep->repeat = o.repeat;
    rep->requests = o.requests;
    rep->warmup = o.warmup;
    rep->max_seconds = (double)o.max_seconds;
    rep->wrk_seconds = o.no_wrk ? 0 : (int)o.wrk_seconds;
    rep->cpu = o.cpu;
    if ((rc = plan_rows(&o, rep)) != BENCH_NEXT) {
        free(rep);
        return rc;
    }
    nginx_server *s = calloc(1, sizeof *s);
    rc = s ? start_nginx(s, rep) : BENCH_EXIT_FAIL;
    if (rc == BENCH_EXIT_OK) {
        rc = run_all(&o, rep, s) ? BENCH_EXIT_OK : BENCH_EXIT_FAIL;
        nginx_stop(s);
        zn_report_summarise(rep);
        if (!output(&o, rep))
            rc = BENCH_EXIT_FAIL;
    }
    free(s);
    free(rep);
    return rc;
}
