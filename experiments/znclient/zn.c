/*
 * The ZnClient experiment's program (experiments/znclient/README.md): Sven Van
 * Caekenberghe's report, logging off about 3,000 requests/s, on 2,500, on with an
 * inspector subscribed 7,000-8,000. Within a repetition wrk runs first, then every
 * configuration once in a fresh VM (zn_run.c), so that noise hits them alike. The rows,
 * the runs and main; the options are zn_options.c's, the JSON zn_output.c's.
 */
#include "zn_cmd.h"

#include "harness/nginx.h"
#include "harness/wrk.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

const zn_preset *zn_shown_preset(const zn_opts *o)
{
    return zn_preset_get(o->preset ? o->preset : o->with_preset);
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
    zn_ints *lists[] = {&o->cost, &o->idle_us, &o->inject, &o->server, &o->jitter, &o->client};
    const uint32_t values[] = {k->subscriber_cost_us, k->idle_us, k->wake_inject_us,
                               k->server_us, k->server_jitter_us, k->client_us};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        *lists[i] = (zn_ints){.v = {values[i]}, .n = 1};
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
    zn_ints w[5] = {0};   /* the word sets as lists of word numbers */
    const unsigned set[5] = {o->wait, o->background, o->modes, o->logging, o->events};
    for (int d = 0; d < 5; d++)
        for (unsigned b = 0; b < 4; b++)
            if (set[d] >> b & 1)
                w[d].v[w[d].n++] = b;
    /* The modelled world's knobs are 0 elsewhere: they mean nothing to nginx. */
    static const zn_ints none = {.n = 1};
    bool model = z->world == ZN_WORLD_MODEL;
    const zn_ints *knob[] = {&o->idle_us, &o->inject, &w[0], &w[1], &o->before,
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
    row->wrk[k] = (zn_wrk_sample){w.requests_per_sec, w.latency_p50_us, w.latency_p99_us,
                                  w.errors_connect + w.errors_read + w.errors_write +
                                      w.errors_status + w.errors_timeout};
    return true;
}

/* The row for people (progress lines, messages). */
static const char *row_text(const zn_config *k, char *buf, size_t size)
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double zn_median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void watchdog_fired(int sig)
{
    static const char msg[] = "\nznclient: a run did not finish in time (watchdog); the VM "
                              "hangs or the machine is overloaded\n";
    ssize_t n = write(2, msg, sizeof msg - 1);
    (void)n;
    (void)sig;
    _exit(ZN_EXIT_FAIL);   /* the harness's nginx dies with this process */
}

/* Arm (seconds > 0) or disarm (0) the watchdog that ends a hanging run. */
static void watchdog(unsigned seconds)
{
    if (seconds) {
        struct sigaction sa = {.sa_handler = watchdog_fired};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
    }
    alarm(seconds);
}

/* One line per finished cell on stderr, unless --quiet. */
static void progress(zn_run *z, const char *what, int repetition, const zn_config *k)
{
    char text[128];
    z->done++;
    if (!z->o->quiet)
        fprintf(stderr, "znclient: [%d/%d] %s %d: %s\n", z->done, z->total, what, repetition,
                row_text(k, text, sizeof text));
}

/* Run one configuration in the invocation's world (a recorded cell's in a replay),
 * writing it down when --record asks: false with why. */
static bool measure(const zn_run *z, const zn_config *cfg, const zn_rec_cell *replay,
                    int repetition, zn_counts *out, char *why, size_t size)
{
    const zn_opts *o = z->o;
    zn_params p = {.cfg = *cfg, .host = z->host, .port = z->port, .path = z->path,
                   .body_size = z->body_size, .requests = o->requests, .warmup = o->warmup,
                   .max_seconds = (double)o->max_seconds, .trace = o->trace,
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
    watchdog((unsigned)(3 * o->max_seconds + 60));
    int err = zn_measure(&p, out, why, size);
    watchdog(0);
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
    z->total = z->replayed.ncells;
    for (int i = 0; i < z->replayed.ncells; i++) {
        const zn_rec_cell *cell = &z->replayed.cells[i];
        zn_row *row = &z->rows[zn_find_row(z, &cell->cfg)];
        char why[240] = "";
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
            fprintf(stderr, "znclient: %s\n", row->note);
            ok = false;
        }
        progress(z, "replay of repetition", cell->repetition, &cell->cfg);
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
        fprintf(stderr, "znclient: writing %s failed\n", z->o->record);
        return false;
    }
    z->record = NULL;
    if (!zn_recording_read(z->o->record, &z->replayed, why, sizeof why)) {
        fprintf(stderr, "znclient: reading the recording back: %s\n", why);
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
            fprintf(stderr, "znclient: replaying %s: %s\n",
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
    z->total = (int)z->o->repeat * z->nrows;
    for (int k = 0; k < z->o->repeat; k++)
        for (int i = 0; i < z->nrows; i++) {
            zn_row *row = &z->rows[i];
            if (row->note[0]) {   /* failed in an earlier repetition */
                z->done++;
                continue;
            }
            char why[240] = "";
            if (row->cfg.logging == ZN_LOGGING_WRK ? run_wrk(z, row, k, why, sizeof why)
                                                   : run_cell(z, row, k, why, sizeof why)) {
                row->nsamples = k + 1;
            } else {
                snprintf(row->note, sizeof row->note, "repetition %d failed: %s", k + 1, why);
                fprintf(stderr, "znclient: %s\n", row->note);
                ok = false;
            }
            progress(z, "repetition", k + 1, &row->cfg);
        }
    return z->record ? replay_recorded(z) && ok : ok;
}

/* ---- main --------------------------------------------------------------------- */

/* --url into z (host, port, path): ZN_GO_ON, or a usage error: only loopback. */
static int parse_url(zn_run *z, const char *url)
{
    const char *h = strncmp(url, "http://", 7) ? NULL : url + 7, *end = NULL;
    if (h && *h == '[' && (end = strchr(h, ']')))
        snprintf(z->host, sizeof z->host, "%.*s", (int)(end++ - h - 1), h + 1);
    else if (h && *h != '[')
        snprintf(z->host, sizeof z->host, "%.*s", (int)((end = h + strcspn(h, ":/")) - h), h);
    if (!end || (strcmp(z->host, "127.0.0.1") && strcmp(z->host, "::1") &&
                 strcmp(z->host, "localhost")))
        return zn_usage("--url wants http://127.0.0.1, http://[::1] or http://localhost "
                        "(traffic stays on loopback), not '%s'", url);
    char *e = (char *)end;
    long port = 80;
    if (*end == ':')
        port = end[1] >= '0' && end[1] <= '9' ? strtol(end + 1, &e, 10) : 0;
    bool clean = !*e || *e == '/';
    for (const char *p = e; *p; p++)
        clean &= (unsigned char)*p > ' ' && *p != 0x7f;
    if (port < 1 || port > 65535 || !clean)
        return zn_usage("--url '%s': want http://HOST[:PORT][/PATH], a port 1..65535 and a "
                        "path without spaces or control characters", url);
    z->port = (int)port;
    z->path = *e ? e : "/";
    snprintf(z->url, sizeof z->url, "%s", url);
    return ZN_GO_ON;
}

/* The world the options ask for, and what does not go with it: ZN_GO_ON or a usage
 * error. A replay reads its file here, before anything runs. */
static int open_world(zn_run *z)
{
    const zn_opts *o = z->o;
    if (o->model && o->replay)
        return zn_usage("--model and --replay are two worlds: give one");
    if (o->record && z->world != ZN_WORLD_REAL)
        return zn_usage("--record writes down a real run: not with --model or --replay");
    if (o->url && z->world != ZN_WORLD_REAL)
        return zn_usage("--url is a real server: not with --model or --replay");
    if (z->world != ZN_WORLD_REPLAY)
        return ZN_GO_ON;
    char why[300];
    if (!zn_recording_read(o->replay, &z->replayed, why, sizeof why))
        return zn_usage("--replay: %s", why);
    return ZN_GO_ON;
}

/* --trace traces one configuration's VM: one row (wrk aside) and one repetition. */
static int check_trace(const zn_run *z)
{
    int vm_rows = z->nrows - (z->nrows && z->rows[0].cfg.logging == ZN_LOGGING_WRK);
    if (!z->o->trace || (vm_rows == 1 && z->o->repeat == 1))
        return ZN_GO_ON;
    return zn_usage("--trace traces one configuration, these options run %lld: give every "
                    "LIST one value and --repeat 1", (long long)vm_rows * z->o->repeat);
}

static int ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* With the client pinned (--cpu N), nginx gets the next CPU, so neither waits for the
 * other. */
static int start_nginx(zn_run *z, nginx_server *s)
{
    nginx_options no;
    nginx_options_init(&no);
    no.ipv6 = false;
    if (z->o->cpu >= 0 && ncpu() > 1)
        no.cpu = (int)((z->o->cpu + 1) % ncpu());
    if (nginx_start(s, &no) != 0) {
        fprintf(stderr, "znclient: %s\n", s->error);
        return ZN_EXIT_FAIL;
    }
    snprintf(z->host, sizeof z->host, "127.0.0.1");
    z->port = s->port;
    z->path = NGINX_PATH_STATIC;
    z->body_size = s->static_size;
    nginx_url(s, NGINX_PATH_STATIC, z->url, sizeof z->url);
    return ZN_GO_ON;
}

/* What the model runs besides the sweep (the shown preset's three cells, --fit,
 * --phase), then the JSON: ZN_EXIT_OK or ZN_EXIT_FAIL. */
static int output(const zn_run *z, bool ran)
{
    const zn_opts *o = z->o;
    zn_extras x = {0};
    zn_triple model;
    zn_fit_result fit;
    zn_phase_cell *cells = NULL;
    char why[240];
    const zn_preset *p = zn_shown_preset(o);
    if (p && zn_triple_run(&p->cfg, 2000, (uint32_t)o->seed, &model, why, sizeof why) == 0)
        x.preset_model = &model;
    else if (p)
        fprintf(stderr, "znclient: the model of %s: %s\n", p->name, why);
    if (o->fit && zn_fit(o->fit_requests, (uint32_t)o->seed, &fit, why, sizeof why) != 0) {
        fprintf(stderr, "znclient: --fit: %s\n", why);
        ran = false;
    } else if (o->fit) {
        x.fit = &fit;
        if (!o->quiet)
            fprintf(stderr, "znclient: --fit: %ld configurations in %.1f s\n", fit.evaluated,
                    fit.seconds);
    }
    if (o->phase) {
        const zn_preset *around = p ? p : zn_preset_get(1);
        x.phase_around = &around->cfg;
        if (!(cells = malloc(ZN_PHASE_CELLS * sizeof *cells)) ||
            zn_phase(&around->cfg, 300, (uint32_t)o->seed, cells, why, sizeof why) != 0) {
            fprintf(stderr, "znclient: --phase: %s\n", cells ? why : "out of memory");
            ran = false;
        } else {
            x.phase = cells;
        }
    }
    FILE *f = o->out ? fopen(o->out, "w") : stdout;
    bool written = f && zn_output(f, z, &x);
    if (f && f != stdout)
        written = fclose(f) == 0 && written;
    else if (f)
        written = fflush(f) == 0 && written;
    if (!written)
        fprintf(stderr, "znclient: writing the JSON to %s failed\n", o->out ? o->out : "stdout");
    else if (o->out && !o->quiet)
        fprintf(stderr, "znclient: JSON written to %s\n", o->out);
    free(cells);
    return ran && written ? ZN_EXIT_OK : ZN_EXIT_FAIL;
}

/* --cpu: the calling thread (the VMs run on it) on that CPU. */
static int pin(long long cpu)
{
    if (cpu < 0)
        return ZN_GO_ON;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) == 0)
        return ZN_GO_ON;
    return zn_usage("--cpu %lld: cannot run there", cpu);
}

int main(int argc, char **argv)
{
    zn_opts o;
    int rc = zn_parse(argc, argv, &o);
    if (rc != ZN_GO_ON)
        return rc;
    apply_preset(&o);
    zn_run z = {.o = &o, .rows = calloc(ZN_MAX_ROWS, sizeof *z.rows),
                .world = o.replay ? ZN_WORLD_REPLAY : o.model ? ZN_WORLD_MODEL : ZN_WORLD_REAL};
    nginx_server *s = calloc(1, sizeof *s);
    if (!z.rows || !s) {
        fprintf(stderr, "znclient: out of memory\n");
        rc = ZN_EXIT_FAIL;
    } else if ((rc = open_world(&z)) != ZN_GO_ON) {
        ;   /* said */
    } else if (!make_rows(&z)) {
        rc = zn_usage("more than %d combinations", ZN_MAX_ROWS);
    } else if ((rc = check_trace(&z)) == ZN_GO_ON) {
        rc = pin(o.cpu);
    }
    if (rc == ZN_GO_ON && z.world != ZN_WORLD_REAL) {
        /* The request names the host nginx would be: the simulated server reads none. */
        snprintf(z.host, sizeof z.host, "127.0.0.1");
        z.port = 80;
        z.path = NGINX_PATH_STATIC;
        z.body_size = 300;
        snprintf(z.url, sizeof z.url, "%s", z.world == ZN_WORLD_MODEL ? "the modelled server"
                                                                      : o.replay);
    } else if (rc == ZN_GO_ON) {
        rc = o.url ? parse_url(&z, o.url) : start_nginx(&z, s);
    }
    if (rc == ZN_GO_ON && o.record && !(z.record = fopen(o.record, "w"))) {
        fprintf(stderr, "znclient: cannot write %s\n", o.record);
        rc = ZN_EXIT_FAIL;
    } else if (z.record) {
        fputs(ZN_RECORDING_MAGIC "\n", z.record);
    }
    if (rc == ZN_GO_ON) {
        bool ran = run_all(&z);
        nginx_stop(s);
        rc = output(&z, ran);
    }
    if (z.record)
        fclose(z.record);
    zn_recording_free(&z.replayed);
    free(s);
    free(z.rows);
    return rc;
}
