/*
 * znclient --fit: which physical worlds give the seed's three figures (zn_fit.h).
 * Every configuration is three cells of the deterministic model, so a search of
 * thousands of them takes seconds and gives the same answer on every run.
 */
#include "zn_fit.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define P(field) offsetof(zn_config, field)
const zn_fit_param zn_fit_params[ZN_FIT_NPARAMS] = {
    {"wake_inject_us", P(wake_inject_us), 0, 600},
    {"server_us", P(server_us), 5, 150},
    {"server_jitter_us", P(server_jitter_us), 0, 100},
    {"event_cost_us", P(event_cost_us), 0, 60},
    {"subscriber_cost_us", P(subscriber_cost_us), 0, 150},
    {"client_us", P(client_us), 20, 300},
    {"idle_us", P(idle_us), 50, 2000},
};
#undef P

/* zn_fit_params' rows by name. */
enum { PARAM_WAKE, PARAM_SERVER, PARAM_JITTER, PARAM_EVENT, PARAM_SUBSCRIBER, PARAM_CLIENT,
       PARAM_IDLE };
_Static_assert(PARAM_IDLE == ZN_FIT_PARAM_IDLE, "a row per parameter");

static uint32_t *field(zn_config *k, int i)
{
    return (uint32_t *)(void *)((char *)k + zn_fit_params[i].offset);
}

static uint32_t value(const zn_config *k, int i)
{
    return *(const uint32_t *)(const void *)((const char *)k + zn_fit_params[i].offset);
}

/* The families searched: the poll mode with Pharo 6's 1 ms quantum (which barely
 * matters: a ready socket ends the wait; Pharo 6/7 on the VM since May 2017), the legacy
 * mode with that quantum (Pharo 6 on a VM from before May 2017), and the legacy mode with
 * the quantum as a parameter (no Pharo release used one under 1 ms). */
const zn_fit_family zn_fit_families[ZN_FIT_FAMILIES] = {
    {STVM_IDLE_POLL, false, true},
    {STVM_IDLE_LEGACY, false, true},
    {STVM_IDLE_LEGACY, true, false},
};

static bool moves(int fam, int i)
{
    return i != PARAM_IDLE || zn_fit_families[fam].quantum_moves;
}

/* ---- one configuration ------------------------------------------------------------- */

static double relative(double got, double lo, double hi)
{
    return got < lo ? got / lo - 1 : got > hi ? got / hi - 1 : 0;
}

static void judge(zn_triple *t)
{
    t->err[ZN_OFF] = relative(t->rps[ZN_OFF], SEED2_OFF_RPS, SEED2_OFF_RPS);
    t->err[ZN_ON] = relative(t->rps[ZN_ON], SEED2_ON_RPS, SEED2_ON_RPS);
    t->err[ZN_SUB] = relative(t->rps[ZN_SUB], SEED2_SUB_LO_RPS, SEED2_SUB_HI_RPS);
    double worst = 0, sum = 0;
    for (int c = 0; c < ZN_TRIPLE; c++) {
        worst = fmax(worst, fabs(t->err[c]));
        sum += fabs(t->err[c]);
    }
    bool order = t->rps[ZN_ON] < t->rps[ZN_OFF] && t->rps[ZN_SUB] > 2 * t->rps[ZN_OFF];
    /* An order broken costs as much as being 15% off, so the search leaves it. */
    t->score = worst + sum / 30 + (order ? 0 : SEED2_TOLERANCE);
    t->fits = worst <= SEED2_TOLERANCE && order;
}

static void config_text(const zn_config *k, char *buf, size_t size)
{
    snprintf(buf, size, "%s %u us, wake %u us, server %u+%u us, event %u us, subscriber "
             "%u us, client %u us", stvm_idle_mode_name(k->idle_mode), k->idle_us, k->wake_inject_us,
             k->server_us, k->server_jitter_us, k->event_cost_us, k->subscriber_cost_us,
             k->client_us);
}

int zn_triple_run(const zn_config *cfg, long long requests, uint32_t seed, zn_triple *t,
                  char *why, size_t whysize)
{
    *t = (zn_triple){.cfg = *cfg};
    t->cfg.logging = ZN_LOGGING_SUBSCRIBER;
    t->cfg.subscriber_events = ZN_EVENTS_ALL;
    static const zn_logging cells[ZN_TRIPLE] = {ZN_LOGGING_OFF, ZN_LOGGING_ON,
                                                ZN_LOGGING_SUBSCRIBER};
    for (int c = 0; c < ZN_TRIPLE; c++) {
        zn_params p = {.cfg = t->cfg, .host = "127.0.0.1", .port = 80, .path = "/static",
                       .body_size = 300, .requests = requests, .warmup = requests / 10,
                       .max_seconds = 1e6, .world = ZN_WORLD_MODEL, .seed = seed};
        p.cfg.logging = cells[c];
        if (cells[c] != ZN_LOGGING_SUBSCRIBER)
            p.cfg.subscriber_cost_us = 0;
        zn_counts n;
        int err = zn_measure(&p, &n, why, whysize);
        if (err) {
            char text[256], said[240];
            config_text(&p.cfg, text, sizeof text);
            snprintf(said, sizeof said, "%s", why);
            snprintf(why, whysize, "%s (%s)", said, text);
            return err;
        }
        t->rps[c] = n.wall_ns > 0 ? (double)n.requests * 1e9 / (double)n.wall_ns : 0;
        t->blocked[c] = n.requests ? (double)n.first_reads_blocked / (double)n.requests : 0;
    }
    judge(t);
    return 0;
}

/* ---- the search ------------------------------------------------------------------- */

typedef struct search {
    int best_family;
    long long requests;
    uint32_t seed;
    uint64_t rng;
    zn_fit_result *out;
    char *why;
    size_t whysize;
} search;

static uint64_t next(search *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Evaluate k (of family fam), keeping the region and the bests up to date. */
static int evaluate(search *s, int fam, const zn_config *k, zn_triple *t)
{
    int err = zn_triple_run(k, s->requests, s->seed, t, s->why, s->whysize);
    if (err)
        return err;
    zn_fit_result *f = s->out;
    f->evaluated++;
    zn_triple *best = &f->best_family[fam];
    if (isnan(best->score) || t->score < best->score)
        *best = *t;
    if (!zn_fit_families[fam].pharo)
        return 0;
    if (t->fits) {
        for (int i = 0; i < ZN_FIT_NPARAMS; i++) {
            uint32_t v = value(k, i);
            if (!f->fitting || v < f->region_lo[i])
                f->region_lo[i] = v;
            if (!f->fitting || v > f->region_hi[i])
                f->region_hi[i] = v;
        }
        f->fitting++;
    }
    if (isnan(f->best.score) || t->score < f->best.score) {
        f->best = *t;
        s->best_family = fam;
    }
    return 0;
}

static zn_config random_config(search *s, int fam)
{
    zn_config k = {.idle_mode = zn_fit_families[fam].mode, .idle_us = 1000};
    for (int i = 0; i < ZN_FIT_NPARAMS; i++)
        if (moves(fam, i)) {
            const zn_fit_param *p = &zn_fit_params[i];
            *field(&k, i) = p->lo + (uint32_t)(next(s) % (p->hi - p->lo + 1));
        }
    return k;
}

/* Coordinate descent from t: each parameter up and down by a step that halves when
 * nothing improves, until the step is 1 us. */
static int descend(search *s, int fam, zn_triple *t)
{
    /* A move: the parameters it changes by the step, in their direction; the last one
     * moves the server's turnaround and the event's cost together, because the
     * inversion lives on the edge between them and a descent in one at a time stops
     * at that edge. */
    enum { NMOVES = ZN_FIT_NPARAMS + 1 };
    static const int moved[NMOVES][2] = {{PARAM_WAKE, -1},   {PARAM_SERVER, -1},
                                         {PARAM_JITTER, -1}, {PARAM_EVENT, -1},
                                         {PARAM_SUBSCRIBER, -1}, {PARAM_CLIENT, -1},
                                         {PARAM_IDLE, -1},   {PARAM_SERVER, PARAM_EVENT}};
    uint32_t step = 32;
    while (step >= 1) {
        bool better = false;
        for (int m = 0; m < NMOVES; m++)
            for (int dir = -1; dir <= 1; dir += 2) {
                zn_config k = t->cfg;
                bool ok = true;
                for (int e = 0; e < 2 && moved[m][e] >= 0 && ok; e++) {
                    int i = moved[m][e];
                    int64_t v = (int64_t)value(&k, i) + dir * (int64_t)step;
                    ok = moves(fam, i) && v >= zn_fit_params[i].lo && v <= zn_fit_params[i].hi;
                    *field(&k, i) = (uint32_t)v;
                }
                zn_triple c;
                int err = ok ? evaluate(s, fam, &k, &c) : 0;
                if (err)
                    return err;
                if (ok && c.score < t->score) {
                    *t = c;
                    better = true;
                }
            }
        if (!better)
            step /= 2;
    }
    return 0;
}

/* One parameter moved from the best over its range in 40 steps: where it still fits,
 * and the score at 0.8x and 1.2x. */
static int scan(search *s)
{
    zn_fit_result *f = s->out;
    const zn_config best = f->best.cfg;
    int fam = s->best_family;
    for (int i = 0; i < ZN_FIT_NPARAMS; i++) {
        const zn_fit_param *p = &zn_fit_params[i];
        f->scan_lo[i] = f->scan_hi[i] = value(&best, i);
        f->at_minus[i] = f->at_plus[i] = NAN;
        if (!moves(fam, i))
            continue;
        uint32_t span = p->hi - p->lo, step = span / 40 ? span / 40 : 1;
        for (uint32_t v = p->lo; v <= p->hi; v += step) {
            zn_config k = best;
            *field(&k, i) = v;
            zn_triple t;
            int err = evaluate(s, fam, &k, &t);
            if (err)
                return err;
            if (t.fits && v < f->scan_lo[i])
                f->scan_lo[i] = v;
            if (t.fits && v > f->scan_hi[i])
                f->scan_hi[i] = v;
        }
        for (int side = 0; side < 2; side++) {
            zn_config k = best;
            long v = lround(value(&best, i) * (side ? 1.2 : 0.8));
            *field(&k, i) = (uint32_t)(v < p->lo ? p->lo : v > p->hi ? p->hi : v);
            zn_triple t;
            int err = evaluate(s, fam, &k, &t);
            if (err)
                return err;
            *(side ? &f->at_plus[i] : &f->at_minus[i]) = t.score;
        }
    }
    return 0;
}

#define FIT_RANDOM_PER_FAMILY 700
#define FIT_STARTS 6

/* The best few (*n) of a family's random configurations, best first: 0 or an error. */
static int random_stage(search *s, int fam, zn_triple starts[FIT_STARTS], int *nstarts)
{
    int n = 0;
    for (int i = 0; i < FIT_RANDOM_PER_FAMILY; i++) {
        zn_config k = random_config(s, fam);
        zn_triple t;
        int err = evaluate(s, fam, &k, &t);
        if (err)
            return err;
        *nstarts = n;
        if (n == FIT_STARTS && t.score >= starts[n - 1].score)
            continue;
        int at = n < FIT_STARTS ? n++ : FIT_STARTS - 1;
        for (starts[at] = t; at > 0 && starts[at].score < starts[at - 1].score; at--) {
            zn_triple x = starts[at];
            starts[at] = starts[at - 1];
            starts[at - 1] = x;
        }
        *nstarts = n;
    }
    return 0;
}

/* One family's search (the random stage, then descents from its best few) into f,
 * with a generator of its own so that where it runs does not change what it finds. */
static int search_family(long long requests, uint32_t seed, int fam, zn_fit_result *f,
                         char *why, size_t whysize)
{
    search s = {.requests = requests, .seed = seed,
                .rng = seed ^ (0x9e3779b97f4a7c15u * (uint64_t)(fam + 1)), .out = f,
                .why = why, .whysize = whysize};
    zn_triple starts[FIT_STARTS];
    int n = 0;
    int err = random_stage(&s, fam, starts, &n);
    for (int i = 0; i < n && !err; i++)
        err = descend(&s, fam, &starts[i]);
    return err;
}

static void empty_result(zn_fit_result *f)
{
    *f = (zn_fit_result){.best.score = NAN};
    for (int m = 0; m < ZN_FIT_FAMILIES; m++) {
        f->best_family[m].score = NAN;
    }
}

/* A family's findings into the whole search's. */
static void merge(zn_fit_result *out, int *best_family, const zn_fit_result *part, int fam)
{
    out->evaluated += part->evaluated;
    for (int i = 0; i < ZN_FIT_NPARAMS && part->fitting; i++) {
        if (!out->fitting || part->region_lo[i] < out->region_lo[i])
            out->region_lo[i] = part->region_lo[i];
        if (!out->fitting || part->region_hi[i] > out->region_hi[i])
            out->region_hi[i] = part->region_hi[i];
    }
    out->fitting += part->fitting;
    out->best_family[fam] = part->best_family[fam];
    if (!isnan(part->best.score) && (isnan(out->best.score) || part->best.score < out->best.score)) {
        out->best = part->best;
        *best_family = fam;
    }
}

/* Each family in a child process of its own (the machine's cores work at once), its
 * findings sent back through a pipe as bytes: the same figures as one after another. */
static int run_families(long long requests, uint32_t seed, zn_fit_result *out,
                        int *best_family, char *why, size_t whysize)
{
    pid_t pid[ZN_FIT_FAMILIES];
    int fd[ZN_FIT_FAMILIES];
    for (int fam = 0; fam < ZN_FIT_FAMILIES; fam++) {
        int p[2];
        pid[fam] = -1;
        fflush(NULL);
        if (pipe(p) == 0 && (pid[fam] = fork()) == 0) {
            close(p[0]);
            struct { zn_fit_result f; int err; char why[240]; } msg;
            empty_result(&msg.f);
            msg.err = search_family(requests, seed, fam, &msg.f, msg.why, sizeof msg.why);
            const char *b = (const char *)&msg;
            for (size_t off = 0; off < sizeof msg;) {
                ssize_t n = write(p[1], b + off, sizeof msg - off);
                if (n <= 0)
                    _exit(1);
                off += (size_t)n;
            }
            _exit(0);
        }
        fd[fam] = p[0];
        if (pid[fam] > 0) {
            close(p[1]);
        } else {   /* no child: this family here */
            if (pid[fam] < 0) {
                close(p[0]);
                close(p[1]);
            }
            fd[fam] = -1;
        }
    }
    int err = 0;
    for (int fam = 0; fam < ZN_FIT_FAMILIES; fam++) {
        struct { zn_fit_result f; int err; char why[240]; } msg;
        size_t got = 0;
        if (fd[fam] >= 0) {
            for (ssize_t n; got < sizeof msg && (n = read(fd[fam], (char *)&msg + got,
                                                          sizeof msg - got)) > 0;)
                got += (size_t)n;
            close(fd[fam]);
            waitpid(pid[fam], NULL, 0);
        }
        if (got != sizeof msg) {   /* no child, or one that died: the work is done here */
            empty_result(&msg.f);
            msg.err = search_family(requests, seed, fam, &msg.f, msg.why, sizeof msg.why);
        }
        if (msg.err && !err) {
            err = msg.err;
            snprintf(why, whysize, "%s", msg.why);
        }
        merge(out, best_family, &msg.f, fam);
    }
    return err;
}

int zn_fit(long long requests, uint32_t seed, zn_fit_result *out, char *why, size_t whysize)
{
    empty_result(out);
    int64_t t0 = zn_clock_ns(CLOCK_MONOTONIC);
    search s = {.requests = requests, .seed = seed, .out = out, .why = why,
                .whysize = whysize};
    int err = run_families(requests, seed, out, &s.best_family, why, whysize);
    if (!err)
        err = scan(&s);
    out->quantum_moves = zn_fit_families[s.best_family].quantum_moves;
    out->seconds = (double)(zn_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
    return err;
}
