/*
 * The ZnClient experiment: one configuration in a fresh VM. The client runs at priority
 * 40, as Sven's loop ran in Pharo's UI process; a subscriber's callback spends its cost
 * per event in the announcing process. The client, its log and announcer are the image
 * side's (internal.h says why the experiment reaches below the public API for them).
 */
#include "zn_measure.h"

#include "internal.h"
#include "zn_world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct zn_snapshot {
    int64_t mono_ns, cpu_ns;
    stvm_stats vm;
    zn_client_stats client;
    zn_log_stats log;
    zn_sim_counts sim;
} zn_snapshot;

/* The simulated clock's start: 2026-01-01T00:00:00Z, the same on every run. */
#define ZN_SIM_START_US UINT64_C(3944678400000000)

typedef struct zn_bench {
    const zn_params *p;
    zn_counts *c;
    zn_log *log;
    zn_client *client;
    zn_sim *sim;                    /* the simulated world, or NULL on the real clock */
    uint8_t *body;
    size_t body_cap, expect;        /* expect: SIZE_MAX until the first response */
    bool done;                      /* tells the background process to end */
    int err;
    char why[200];
} zn_bench;

static void zn_fail(zn_bench *b, const char *what, int err)
{
    if (b->err)
        return;
    b->err = err;
    const char *detail = b->client ? stvm__zn_client_why(b->client) : "";
    snprintf(b->why, sizeof b->why, "%s: %s%s%s", what, stvm_err_name(err),
             *detail ? ": " : "", detail);
}

/* The run's clock: the OS's, or the simulated one. */
static int64_t now_ns(stvm_vm *vm, const zn_bench *b)
{
    return b->sim ? (int64_t)stvm_vm_now_us(vm) * 1000 : zn_clock_ns(CLOCK_MONOTONIC);
}

static void snapshot(stvm_vm *vm, const zn_bench *b, zn_snapshot *s)
{
    stvm_vm_get_stats(vm, &s->vm);
    s->client = *stvm__zn_client_stats(b->client);
    stvm__zn_log_get_stats(b->log, &s->log);
    s->sim = b->sim ? *zn_sim_counts_of(b->sim) : (zn_sim_counts){0};
    s->cpu_ns = zn_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    s->mono_ns = now_ns(vm, b);
}

/* The simulated clock's sleeps are the world's jumps, which the VM does not count as
 * OS sleeps; its CPU is the time it did not sleep. */
static void simulated_sleeps(zn_counts *c, const zn_snapshot *s0, const zn_snapshot *s1)
{
    const uint64_t *e0 = s0->sim.ends, *e1 = s1->sim.ends;
    c->os_sleeps = s1->sim.sleeps - s0->sim.sleeps;
    c->os_slept_us = s1->sim.slept_us - s0->sim.slept_us;
    c->wakeups_io = e1[STVM_TRACE_END_IO] - e0[STVM_TRACE_END_IO] +
                    e1[STVM_TRACE_END_OUTSIDE] - e0[STVM_TRACE_END_OUTSIDE];
    c->wakeups_timer = e1[STVM_TRACE_END_TIMER] - e0[STVM_TRACE_END_TIMER];
    c->wakeups_relinquish = e1[STVM_TRACE_END_TIMEOUT] - e0[STVM_TRACE_END_TIMEOUT];
    c->wakeups_external = e1[STVM_TRACE_END_EXTERNAL] - e0[STVM_TRACE_END_EXTERNAL];
    c->cpu_ns = c->wall_ns - (int64_t)c->os_slept_us * 1000;
}

/* The inspector's stand-in: its work runs in the announcing process. */
static void subscriber(stvm_vm *vm, const announcement *a, void *arg)
{
    (void)a;
    const zn_bench *b = arg;
    stvm_work_us(vm, b->p->cfg.subscriber_cost_us);
}

/* The class subscribed to, by zn_events. */
static const announcement_class *const subscribed_class[] = {
    &stvm__zn_request_written_class, &stvm__zn_response_read_class,
    &stvm__zn_client_transaction_class, &stvm__zn_log_event_class};

static void background(stvm_vm *vm, void *arg)
{
    const zn_bench *b = arg;
    while (!b->done)
        stvm_checkpoint(vm);
}

static bool one_request(stvm_vm *vm, zn_bench *b)
{
    zn_response r;
    int err = stvm__zn_client_get(vm, b->client, b->p->path, b->body, b->body_cap, &r);
    if (err)
        zn_fail(b, "a request", err);
    else if (r.status != 200)
        snprintf(b->why, sizeof b->why, "the server answered %d, not 200", r.status);
    else if (b->expect != SIZE_MAX && r.body_bytes != b->expect)
        snprintf(b->why, sizeof b->why, "the server answered %zu bytes, not %zu",
                 r.body_bytes, b->expect);
    else
        b->expect = r.body_bytes;
    if (!err && b->why[0])
        b->err = STVM_EPROTO;
    return !b->err;
}

/* The warm-up, then the timed requests: their counts are two snapshots' difference. */
static void request_loop(stvm_vm *vm, zn_bench *b)
{
    const zn_params *p = b->p;
    int64_t warm_end = now_ns(vm, b) + (int64_t)(p->max_seconds * 1e8);
    for (long long i = 0; i < p->warmup && now_ns(vm, b) < warm_end; i++)
        if (!one_request(vm, b))
            return;
    if (p->recorder)
        zn_recorder_mark_timed(p->recorder);
    zn_snapshot s0, s1;
    snapshot(vm, b, &s0);
    int64_t deadline = s0.mono_ns + (int64_t)(p->max_seconds * 1e9);
    long long done = 0;
    while (done < p->requests && one_request(vm, b)) {
        done++;
        if (now_ns(vm, b) >= deadline) {
            b->c->cut_short = done < p->requests;
            break;
        }
    }
    snapshot(vm, b, &s1);
    zn_counts *c = b->c;
    c->wall_ns = s1.mono_ns - s0.mono_ns;
    c->cpu_ns = s1.cpu_ns - s0.cpu_ns;
#define D(f, part, g) c->f = s1.part.g - s0.part.g;
    ZN_COUNTS(D)
#undef D
    if (b->sim)
        simulated_sleeps(c, &s0, &s1);
    c->requests = done;
}

static void ui_process(stvm_vm *vm, void *arg)
{
    zn_bench *b = arg;
    const zn_config *k = &b->p->cfg;
    if (k->background && stvm_spawn(vm, 30, "background", background, b, NULL) != STVM_OK)
        zn_fail(b, "spawning the background process", STVM_ENOMEM);
    if (!b->err)
        request_loop(vm, b);
    b->done = true;
    stvm__zn_client_free(vm, b->client);
    b->client = NULL;
}

/* What stands around the client: the simulated world, or the recorder, or nothing. */
static int world(stvm_vm *vm, zn_bench *b, zn_client_world *w)
{
    const zn_params *p = b->p;
    *w = (zn_client_world){0};
    if (p->world != ZN_WORLD_REAL) {
        if (!(b->sim = zn_sim_new(&p->cfg, p->seed, p->replay)))
            return STVM_ENOMEM;
        zn_sim_attach(b->sim, vm, w);
        return STVM_OK;
    }
    if (!p->recorder)
        return STVM_OK;
    /* The recorder sees the OS sleeps through the trace's hook: a ring must record
     * (the --trace one if there is one; else a small one). */
    int err = p->trace ? STVM_OK : stvm_trace_start(vm, 16);
    return err ? err : zn_recorder_attach(p->recorder, vm, w);
}

/* The log (with the subscriber for subscriber rows), then the world and the client. */
static int setup(stvm_vm *vm, zn_bench *b)
{
    const zn_config *k = &b->p->cfg;
    int err = stvm__zn_log_new(vm, &b->log);
    if (!err)
        err = stvm__zn_log_set_construction_cost_us(b->log, k->event_cost_us);
    if (!err && k->logging == ZN_LOGGING_SUBSCRIBER) {
        announcer *an;
        uint64_t id;
        err = stvm__zn_log_announcer(vm, b->log, &an);
        if (!err)
            err = stvm__announcer_subscribe(vm, an, subscribed_class[k->subscriber_events],
                                            subscriber, b, &id);
    }
    zn_client_world w;
    if (!err)
        err = world(vm, b, &w);
    zn_client_config cc = {.world = w, .host = b->p->host, .port = b->p->port,
                           .timeout_ms = k->plain_wait ? -1 : 0, .log = b->log,
                           .logging = {.level = k->logging == ZN_LOGGING_OFF ? ZN_LOG_OFF
                                                                             : ZN_LOG_ALL},
                           .before_us = k->before_us, .between_us = k->between_us,
                           .after_us = k->after_us};
    return err ? err : stvm__zn_client_new(vm, &cc, &b->client);
}

int zn_measure(const zn_params *p, zn_counts *c, char *why, size_t whysize)
{
    memset(c, 0, sizeof *c);
    /* A body of unknown length is read into 64 KiB and counted past it. */
    zn_bench b = {.p = p, .c = c, .body_cap = p->body_size ? p->body_size + 1 : 65536,
                  .expect = p->body_size ? p->body_size : SIZE_MAX};
    b.body = malloc(b.body_cap);
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.idle_mode = p->cfg.idle_mode;
    cfg.idle_relinquish_us = p->cfg.idle_us;
    cfg.wake_inject_us = p->cfg.wake_inject_us;
    if (p->world != ZN_WORLD_REAL) {
        cfg.clock = STVM_CLOCK_SIMULATED;
        cfg.sim_start_us = ZN_SIM_START_US;
    }
    stvm_vm *vm = NULL;
    int err = b.body ? stvm_vm_create(&cfg, &vm) : STVM_ENOMEM;
    if (err)
        snprintf(b.why, sizeof b.why, "creating the VM: %s", stvm_err_name(err));
    else if (p->trace && (err = stvm_trace_start(vm, ZN_TRACE_EVENTS)))
        snprintf(b.why, sizeof b.why, "stvm_trace_start: %s", stvm_err_name(err));
    else if ((err = setup(vm, &b)))
        snprintf(b.why, sizeof b.why, "setting up the client: %s", stvm_err_name(err));
    else if ((err = stvm_spawn(vm, 40, "ui", ui_process, &b, NULL)) ||
             (err = stvm_run(vm)))
        snprintf(b.why, sizeof b.why, "running the VM: %s", stvm_err_name(err));
    else if (!(err = b.err) && p->trace && (err = stvm_trace_write_json(vm, p->trace)))
        snprintf(b.why, sizeof b.why, "writing the trace to %s: %s", p->trace,
                 stvm_err_name(err));
    else if (!err && p->trace)
        fprintf(stderr, "znclient: trace written to %s: %lld events kept, %lld dropped "
                "(stvm-lab show %s --html PAGE draws it)\n", p->trace,
                (long long)stvm_trace_count(vm), (long long)stvm_trace_dropped(vm), p->trace);
    if (vm) {
        stvm__zn_client_free(vm, b.client);
        if (b.log)
            stvm__zn_log_free(vm, b.log);
        stvm_vm_free(vm);
    }
    zn_sim_free(b.sim);
    free(b.body);
    snprintf(why, whysize, "%s", b.why);
    return err;
}
