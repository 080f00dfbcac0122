/*
 * stvm-bench zn: one configuration in a fresh VM. The client runs at priority 40, as
 * Sven's loop ran in Pharo's UI process; a subscriber's callback spends its cost per
 * event in the announcing process. The bench may reach below the public API (the image
 * side's client, log and announcer): it links the static library, above image-stubs.
 */
#include "zn_measure.h"

#include "bench.h"

#include <stdlib.h>
#include <string.h>

#include "../image-stubs/zinc/zn_client.h"

typedef struct zn_snapshot {
    int64_t mono_ns, cpu_ns;
    stvm_stats vm;
    zn_client_stats client;
    zn_log_stats log;
} zn_snapshot;

typedef struct zn_bench {
    const zn_params *p;
    zn_counts *c;
    zn_log *log;
    zn_client *client;
    uint8_t *body;
    size_t body_cap, expect;        /* expect: SIZE_MAX until the first response */
    bool done;                      /* tells the background process to end */
    int err;
    char why[200];
} zn_bench;

static void bench_fail(zn_bench *b, const char *what, int err)
{
    if (b->err)
        return;
    b->err = err;
    const char *detail = b->client ? stvm__zn_client_why(b->client) : "";
    snprintf(b->why, sizeof b->why, "%s: %s%s%s", what, stvm_err_name(err),
             *detail ? ": " : "", detail);
}

static void snapshot(stvm_vm *vm, const zn_bench *b, zn_snapshot *s)
{
    stvm_vm_get_stats(vm, &s->vm);
    s->client = *stvm__zn_client_stats(b->client);
    stvm__zn_log_get_stats(b->log, &s->log);
    s->cpu_ns = bench_cpu_ns();
    s->mono_ns = bench_mono_ns();
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
        bench_fail(b, "a request", err);
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
    int64_t warm_end = bench_mono_ns() + (int64_t)(p->max_seconds * 1e8);
    for (long long i = 0; i < p->warmup && bench_mono_ns() < warm_end; i++)
        if (!one_request(vm, b))
            return;
    zn_snapshot s0, s1;
    snapshot(vm, b, &s0);
    int64_t deadline = s0.mono_ns + (int64_t)(p->max_seconds * 1e9);
    long long done = 0;
    while (done < p->requests && one_request(vm, b)) {
        done++;
        if (bench_mono_ns() >= deadline) {
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
    c->requests = done;
}

static void ui_process(stvm_vm *vm, void *arg)
{
    zn_bench *b = arg;
    const zn_config *k = &b->p->cfg;
    if (k->background && stvm_spawn(vm, 30, "background", background, b, NULL) != STVM_OK)
        bench_fail(b, "spawning the background process", STVM_ENOMEM);
    if (!b->err)
        request_loop(vm, b);
    b->done = true;
    stvm__zn_client_free(vm, b->client);
    b->client = NULL;
}

/* The log (with the subscriber for subscriber rows), then the client. */
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
    zn_client_config cc = {.host = b->p->host, .port = b->p->port,
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
    stvm_vm *vm = NULL;
    int err = b.body ? stvm_vm_new(&vm, &cfg) : STVM_ENOMEM;
    if (err)
        snprintf(b.why, sizeof b.why, "creating the VM: %s", stvm_err_name(err));
    else if ((err = setup(vm, &b)))
        snprintf(b.why, sizeof b.why, "setting up the client: %s", stvm_err_name(err));
    else if ((err = bench_trace_begin(p->trace, vm, b.why, sizeof b.why)))
        ;   /* why written */
    else if ((err = stvm_spawn(vm, 40, "ui", ui_process, &b, NULL)) ||
             (err = stvm_run(vm)))
        snprintf(b.why, sizeof b.why, "running the VM: %s", stvm_err_name(err));
    else if (!(err = b.err))
        err = bench_trace_end(p->trace, vm, b.why, sizeof b.why);
    if (vm) {
        stvm__zn_client_free(vm, b.client);
        if (b.log)
            stvm__zn_log_free(vm, b.log);
        stvm_vm_free(vm);
    }
    free(b.body);
    snprintf(why, whysize, "%s", b.why);
    return err;
}
