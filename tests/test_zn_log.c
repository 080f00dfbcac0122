/*
 * Suite "zn_log": Zinc's client log events on the announcer (image-stubs/zinc/zn_log.h).
 * The events ZnClient emits per request at each log level, in its order and with its
 * fields; ids from one counter; classes for subscribers (one class only, a superclass,
 * the root); level 0 builds nothing; with nobody subscribed an event costs its
 * construction and the announcer's fast path; a subscriber that waits holds the client
 * up between writing and reading; the construction-cost knob on both clocks; busy CPU
 * that a higher-priority process preempts; termination in the middle; bad arguments.
 *
 * Like the announcer suite, this one includes the image side's header (it needs only
 * <stvm.h>). Time-dependent tests run on the simulated clock, except the two that
 * show the cost knob burning real CPU: they assert lower bounds only (the cost is
 * never skipped), with upper bounds far above it.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "../image-stubs/zinc/zn_log.h"
#include "helpers.h"

TestSuite(zn_log, .timeout = 30);

/* ---- helpers --------------------------------------------------------------------------- */

static zn_log *zl_make(stvm_vm *vm, uint64_t cost_us)
{
    zn_log *log = NULL;
    cr_assert_eq(stvm__zn_log_new(vm, &log), STVM_OK);
    cr_assert_not_null(log);
    cr_assert_eq(stvm__zn_log_set_construction_cost_us(log, cost_us), STVM_OK);
    return log;
}

static zn_log_stats zl_stats(const zn_log *log)
{
    zn_log_stats s;
    stvm__zn_log_get_stats(log, &s);
    return s;
}

static void zl_done(stvm_vm *vm, zn_log *log)
{
    zn_log_stats s = zl_stats(log);
    cr_assert_eq(s.announcer.in_flight, 0u);
    cr_assert_eq(stvm__zn_log_free(vm, log), STVM_OK);
}

static uint64_t mono_us(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* A subscriber that copies what it receives and notes when; it may wait. */
typedef struct recorder {
    int n;
    zn_log_event ev[16];
    uint64_t at[16];
    int64_t wait_ms;
} recorder;

static void record(stvm_vm *vm, const announcement *a, void *arg)
{
    recorder *r = arg;
    if (r->n < 16) {
        r->ev[r->n] = *(const zn_log_event *)a;
        r->at[r->n] = stvm_vm_now_us(vm);
    }
    r->n++;
    if (r->wait_ms)
        stvm_delay_wait_ms(vm, r->wait_ms);
}

static void subscribe(stvm_vm *vm, zn_log *log, const announcement_class *c, recorder *r)
{
    announcer *an = NULL;
    cr_assert_eq(stvm__zn_log_announcer(vm, log, &an), STVM_OK);
    uint64_t id;
    cr_assert_eq(stvm__announcer_subscribe(vm, an, c, record, r, &id), STVM_OK);
}

/* ZnClient's request loop around the three logging steps: Delays stand for writing
 * the request and reading the response. */
typedef struct client {
    zn_log *log;
    zn_client_log c;
    int requests;
    int64_t pre_ms, write_ms, read_ms;
    zn_request_info req;
    zn_response_info resp;
    int rc[12];
    uint64_t req_us[4], resp_us[4];
    uint64_t t_rw_in[4], t_rw_out[4];   /* around the request-written step */
    uint64_t t0, t1, cpu0, cpu1;
    uint64_t switches0, switches1;
} client;

static void client_run(stvm_vm *vm, void *arg)
{
    client *k = arg;
    if (k->pre_ms)
        stvm_delay_wait_ms(vm, k->pre_ms);
    k->t0 = stvm_vm_now_us(vm);
    k->cpu0 = mono_us(CLOCK_THREAD_CPUTIME_ID);
    k->switches0 = switches(vm);
    for (int i = 0; i < k->requests; i++) {
        uint64_t started = stvm_vm_now_us(vm);
        if (k->write_ms)
            stvm_delay_wait_ms(vm, k->write_ms);
        k->t_rw_in[i] = stvm_vm_now_us(vm);
        k->rc[3 * i] =
            stvm__zn_log_request_written(vm, k->log, &k->c, started, &k->req, &k->req_us[i]);
        k->t_rw_out[i] = started = stvm_vm_now_us(vm);
        if (k->read_ms)
            stvm_delay_wait_ms(vm, k->read_ms);
        k->rc[3 * i + 1] =
            stvm__zn_log_response_read(vm, k->log, &k->c, started, &k->resp, &k->resp_us[i]);
        k->rc[3 * i + 2] = stvm__zn_log_client_transaction(vm, k->log, &k->c, &k->req,
                                                           k->req_us[i], &k->resp, k->resp_us[i]);
    }
    k->switches1 = switches(vm);
    k->cpu1 = mono_us(CLOCK_THREAD_CPUTIME_ID);
    k->t1 = stvm_vm_now_us(vm);
}

static client client_of(zn_log *log, int level, uint64_t client_id, int requests)
{
    client k = {.log = log,
                .c = {.level = level, .client_id = client_id},
                .requests = requests,
                .req = {.method = "GET", .uri = "/small.html", .bytes = 78},
                .resp = {.status = 200, .bytes = 612}};
    for (int i = 0; i < 12; i++)
        k.rc[i] = -999;   /* a step that never returned */
    return k;
}

static void client_expect_ok(const client *k)
{
    for (int i = 0; i < 3 * k->requests; i++)
        cr_assert_eq(k->rc[i], STVM_OK, "step %d: %s", i, stvm_err_name(k->rc[i]));
}

/* ---- what each level emits ----------------------------------------------------------- */

Test(zn_log, level_3_emits_request_written_response_read_and_transaction_with_zincs_fields)
{
    stvm_vm *vm = rep_vm(&US61);
    zn_log *log = zl_make(vm, 0);
    recorder all = {0};
    subscribe(vm, log, &stvm__announcement_class, &all);
    client k = client_of(log, ZN_LOG_ALL, 7, 2);
    k.write_ms = 2;
    k.read_ms = 3;
    spawn(vm, 40, "client", client_run, &k);
    run_ok(vm);
    client_expect_ok(&k);
    cr_assert_eq(all.n, 6);
    const announcement_class *want[3] = {&stvm__zn_request_written_class,
                                         &stvm__zn_response_read_class,
                                         &stvm__zn_client_transaction_class};
    for (int i = 0; i < 6; i++) {
        const zn_log_event *e = &all.ev[i];
        uint64_t start = SIM_START + (uint64_t)(i / 3) * 5000u;
        cr_assert_eq(e->ann.cls, want[i % 3], "event %d is a %s", i, e->ann.cls->name);
        cr_assert_eq(e->id, (uint64_t)i + 1);
        cr_assert_eq(e->client_id, 7u);
        cr_assert_eq(e->timestamp_us, start + (i % 3 == 0 ? 2000u : 5000u), "event %d", i);
    }
    const zn_log_event *rw = &all.ev[0], *rr = &all.ev[1], *tx = &all.ev[2];
    cr_assert_str_eq(rw->request.method, "GET");
    cr_assert_str_eq(rw->request.uri, "/small.html");
    cr_assert_eq(rw->request.bytes, 78u);
    cr_assert_eq(rw->duration_us, 2000u);
    cr_assert_eq(rr->response.status, 200);
    cr_assert_eq(rr->response.bytes, 612u);
    cr_assert_eq(rr->duration_us, 3000u);
    cr_assert_eq(tx->request_us, 2000u);
    cr_assert_eq(tx->response_us, 3000u);
    cr_assert_eq(tx->duration_us, 5000u);
    cr_assert_eq(tx->response.status, 200);
    cr_assert_eq(k.req_us[1], 2000u);
    cr_assert_eq(k.resp_us[1], 3000u);
    zn_log_stats st = zl_stats(log);
    cr_assert_eq(st.events_built, 6u);
    cr_assert_eq(st.events_emitted, 6u);
    cr_assert_eq(st.announcer.deliveries, 6u);
    zl_done(vm, log);
    vm_done(vm);
}

Test(zn_log, each_level_emits_what_zinc_emits_at_it)
{
    static const int want_n[4] = {0, 1, 1, 3};
    for (int level = 0; level < 4; level++) {
        stvm_vm *vm = rep_vm(&US61);
        zn_log *log = zl_make(vm, 0);
        recorder all = {0};
        subscribe(vm, log, &stvm__announcement_class, &all);
        client k = client_of(log, level, 0, 1);
        k.read_ms = 1;
        spawn(vm, 40, "client", client_run, &k);
        run_ok(vm);
        client_expect_ok(&k);
        cr_assert_eq(all.n, want_n[level], "level %d: %d events", level, all.n);
        cr_assert_eq(zl_stats(log).events_built, (uint64_t)want_n[level]);
        if (level == ZN_LOG_SIMPLIFIED)
            cr_assert_eq(all.ev[0].ann.cls, &stvm__zn_simplified_client_transaction_class);
        if (level == ZN_LOG_TRANSACTIONS)
            cr_assert_eq(all.ev[0].ann.cls, &stvm__zn_client_transaction_class);
        if (level == ZN_LOG_SIMPLIFIED || level == ZN_LOG_TRANSACTIONS)
            cr_assert_eq(all.ev[0].duration_us, 1000u, "level %d", level);
        cr_assert_eq(k.resp_us[0], 1000u, "level %d: the step's duration", level);
        zl_done(vm, log);
        vm_done(vm);
    }
}

Test(zn_log, level_0_builds_nothing_reads_no_clock_and_makes_no_announcer)
{
    stvm_vm *vm = rep_vm(&US61);
    zn_log *log = zl_make(vm, 500);
    client k = client_of(log, ZN_LOG_OFF, 0, 4);
    spawn(vm, 40, "client", client_run, &k);
    stvm_stats before = stats_of(vm);
    run_ok(vm);
    client_expect_ok(&k);
    stvm_stats after = stats_of(vm);
    zn_log_stats st = zl_stats(log);
    cr_assert_eq(st.events_built, 0u);
    cr_assert_eq(st.cost_spent_us, 0u);
    cr_assert_not(st.has_announcer);
    cr_assert_eq(after.clock_reads, before.clock_reads, "an event's clock was read");
    zl_done(vm, log);
    vm_done(vm);
}

/* ---- classes and ids ---------------------------------------------------------------------- */

Test(zn_log, a_subscriber_to_one_class_gets_only_those_and_one_to_a_superclass_gets_all)
{
    stvm_vm *vm = rep_vm(&US61);
    zn_log *log = zl_make(vm, 0);
    recorder rw = {0}, rr = {0}, tx = {0}, client_ev = {0}, zn = {0}, all = {0};
    subscribe(vm, log, &stvm__zn_request_written_class, &rw);
    subscribe(vm, log, &stvm__zn_response_read_class, &rr);
    subscribe(vm, log, &stvm__zn_client_transaction_class, &tx);
    subscribe(vm, log, &stvm__zn_client_log_event_class, &client_ev);
    subscribe(vm, log, &stvm__zn_log_event_class, &zn);
    subscribe(vm, log, &stvm__announcement_class, &all);
    /* Two requests at level 3, then one at level 1: its simplified transaction event is
     * a ZnClientLogEvent but not a ZnClientTransactionEvent (they are siblings). */
    client k3 = client_of(log, ZN_LOG_ALL, 0, 2);
    client k1 = client_of(log, ZN_LOG_SIMPLIFIED, 0, 1);
    k1.pre_ms = 1;
    spawn(vm, 40, "level 3", client_run, &k3);
    spawn(vm, 40, "level 1", client_run, &k1);
    run_ok(vm);
    client_expect_ok(&k3);
    client_expect_ok(&k1);
    cr_assert_eq(rw.n, 2);
    cr_assert_eq(rr.n, 2);
    cr_assert_eq(tx.n, 2);
    cr_assert_eq(client_ev.n, 7);
    cr_assert_eq(zn.n, 7);
    cr_assert_eq(all.n, 7);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(rw.ev[i].ann.cls, &stvm__zn_request_written_class);
        cr_assert_eq(rr.ev[i].ann.cls, &stvm__zn_response_read_class);
        cr_assert_eq(tx.ev[i].ann.cls, &stvm__zn_client_transaction_class);
    }
    cr_assert_eq(all.ev[6].ann.cls, &stvm__zn_simplified_client_transaction_class);
    zl_done(vm, log);
    vm_done(vm);
}

Test(zn_log, ids_increase_by_one_across_clients_sharing_the_class_side)
{
    stvm_vm *vm = rep_vm(&US61);
    zn_log *log = zl_make(vm, 0);
    recorder all = {0};
    subscribe(vm, log, &stvm__zn_log_event_class, &all);
    /* Two clients whose requests interleave: each reads for 1 ms. */
    client a = client_of(log, ZN_LOG_ALL, 1, 2), b = client_of(log, ZN_LOG_ALL, 2, 2);
    a.read_ms = b.read_ms = 1;
    spawn(vm, 40, "a", client_run, &a);
    spawn(vm, 40, "b", client_run, &b);
    run_ok(vm);
    client_expect_ok(&a);
    client_expect_ok(&b);
    cr_assert_eq(all.n, 12);
    bool saw_a = false, saw_b = false;
    for (int i = 0; i < 12; i++) {
        cr_assert_eq(all.ev[i].id, (uint64_t)i + 1, "event %d has id %llu", i,
                     (unsigned long long)all.ev[i].id);
        saw_a |= all.ev[i].client_id == 1;
        saw_b |= all.ev[i].client_id == 2;
        if (i > 0)
            cr_assert_geq(all.ev[i].timestamp_us, all.ev[i - 1].timestamp_us);
    }
    cr_assert(saw_a && saw_b);
    cr_assert_neq(all.ev[0].client_id, all.ev[1].client_id, "the requests interleave");
    zl_done(vm, log);
    vm_done(vm);
}

/* ---- the announcer's side ----------------------------------------------------------------- */

Test(zn_log, with_nobody_subscribed_events_are_built_and_announced_on_the_fast_path)
{
    stvm_vm *vm = rep_vm(&US61);
    zn_log *log = zl_make(vm, 0);
    client k = client_of(log, ZN_LOG_ALL, 0, 3);
    spawn(vm, 40, "client", client_run, &k);
    stvm_stats before = stats_of(vm);
    run_ok(vm);
    client_expect_ok(&k);
    stvm_stats after = stats_of(vm);
    zn_log_stats st = zl_stats(log);
    cr_assert_eq(st.events_built, 9u);
    cr_assert_eq(st.events_emitted, 9u);
    cr_assert(st.has_announcer, "made on the first emit, as ZnLogEvent class>>announcer");
    cr_assert_eq(st.announcer.announced, 9u);
    cr_assert_eq(st.announcer.fast_path, 9u);
    cr_assert_eq(st.announcer.mutex_entries, 0u);
    cr_assert_eq(after.clock_reads - before.clock_reads, 9u, "one clock read per event");
    cr_assert_eq(k.switches1, k.switches0, "the client switched while logging");
    zl_done(vm, log);
    vm_done(vm);
}

Test(zn_log, a_request_written_subscriber_that_waits_holds_the_client_between_write_and_read)
{
    stvm_vm *vm = rep_vm(&US61);
    zn_log *log = zl_make(vm, 0);
    recorder rw = {.wait_ms = 4}, rr = {0};
    subscribe(vm, log, &stvm__zn_request_written_class, &rw);
    subscribe(vm, log, &stvm__zn_response_read_class, &rr);
    client k = client_of(log, ZN_LOG_ALL, 0, 1);
    k.write_ms = 1;
    spawn(vm, 40, "client", client_run, &k);
    run_ok(vm);
    client_expect_ok(&k);
    cr_assert_eq(k.t_rw_out[0] - k.t_rw_in[0], 4000u, "held %llu us",
                 (unsigned long long)(k.t_rw_out[0] - k.t_rw_in[0]));
    /* The duration is read before the event is announced: the subscriber is not in it. */
    cr_assert_eq(k.req_us[0], 1000u);
    cr_assert_eq(rw.ev[0].duration_us, 1000u);
    cr_assert_eq(rr.ev[0].timestamp_us, SIM_START + 5000u);
    zl_done(vm, log);
    vm_done(vm);
}

typedef struct emitter {
    zn_log *log;
    int rc[2];
} emitter;

static void emit_two(stvm_vm *vm, void *arg)
{
    emitter *e = arg;
    zn_log_event fields = {
        .id = 77, .client_id = 9, .response = {.status = 404}, .duration_us = 33};
    e->rc[0] = stvm__zn_log_emit(vm, e->log, &stvm__zn_client_log_event_class, &fields);
    e->rc[1] = stvm__zn_log_emit(vm, e->log, &stvm__announcement_class, &fields);
}

Test(zn_log, emit_builds_any_zn_log_event_class_with_the_given_fields)
{
    stvm_vm *vm = rep_vm(&US61);
    zn_log *log = zl_make(vm, 0);
    recorder all = {0};
    subscribe(vm, log, &stvm__announcement_class, &all);
    emitter e = {.log = log};
    spawn(vm, 40, "emitter", emit_two, &e);
    run_ok(vm);
    cr_assert_eq(e.rc[0], STVM_OK);
    cr_assert_eq(e.rc[1], STVM_EINVAL, "not a ZnLogEvent class");
    cr_assert_eq(all.n, 1);
    cr_assert_eq(all.ev[0].ann.cls, &stvm__zn_client_log_event_class);
    cr_assert_eq(all.ev[0].id, 1u, "the id is the counter's, not the template's");
    cr_assert_eq(all.ev[0].client_id, 9u);
    cr_assert_eq(all.ev[0].response.status, 404);
    cr_assert_eq(all.ev[0].duration_us, 33u);
    cr_assert_eq(all.ev[0].timestamp_us, SIM_START);
    zl_done(vm, log);
    vm_done(vm);
}

/* ---- the construction cost ------------------------------------------------------------- */

Test(zn_log, on_the_real_clock_the_cost_knob_spends_at_least_that_much_cpu_per_event, .timeout = 20)
{
    enum { COST = 3000 };
    stvm_config cfg;
    stvm_config_init(&cfg);
    stvm_vm *vm = vm_make(&cfg);
    zn_log *log = zl_make(vm, COST);
    client k = client_of(log, ZN_LOG_ALL, 0, 1);
    spawn(vm, 40, "client", client_run, &k);
    run_ok(vm);
    client_expect_ok(&k);
    uint64_t elapsed = k.t1 - k.t0, cpu = k.cpu1 - k.cpu0;
    cr_assert_geq(elapsed, 3u * COST, "3 events took %llu us", (unsigned long long)elapsed);
    cr_assert_lt(elapsed, 2000000u, "3 events of %d us took %llu us", COST,
                 (unsigned long long)elapsed);
    /* Busy, not asleep: most of it is this thread's CPU (a tenth, to stay clear of a
     * loaded machine that takes the processor away). */
    cr_assert_geq(cpu, 3u * COST / 10u, "only %llu us of CPU", (unsigned long long)cpu);
    cr_assert_geq(zl_stats(log).cost_spent_us, 3u * COST);
    /* Pharo reads the request's duration after building its event: the cost is in it. */
    cr_assert_geq(k.req_us[0], (uint64_t)COST);
    zl_done(vm, log);
    vm_done(vm);
}

Test(zn_log, on_the_simulated_clock_the_cost_moves_the_vm_clock_by_exactly_that_much)
{
    enum { COST = 2000 };
    stvm_vm *vm = rep_vm(&US61);
    zn_log *log = zl_make(vm, COST);
    recorder all = {0};
    subscribe(vm, log, &stvm__announcement_class, &all);
    client k = client_of(log, ZN_LOG_ALL, 0, 1);
    spawn(vm, 40, "client", client_run, &k);
    run_ok(vm);
    client_expect_ok(&k);
    cr_assert_eq(k.t1 - k.t0, 3u * COST, "the simulated clock moved %llu us",
                 (unsigned long long)(k.t1 - k.t0));
    /* Each event reads the clock before its construction cost is spent. */
    for (int i = 0; i < 3; i++)
        cr_assert_eq(all.ev[i].timestamp_us, SIM_START + (uint64_t)i * COST, "event %d", i);
    cr_assert_eq(zl_stats(log).cost_spent_us, 3u * COST);
    zl_done(vm, log);
    vm_done(vm);
}

Test(zn_log, on_a_31_bit_vm_the_clock_read_boxes_and_the_box_is_released)
{
    stvm_vm *vm = rep_vm(&US31);
    zn_log *log = zl_make(vm, 0);
    recorder all = {0};
    subscribe(vm, log, &stvm__announcement_class, &all);
    client k = client_of(log, ZN_LOG_ALL, 0, 1);
    spawn(vm, 40, "client", client_run, &k);
    stvm_stats before = stats_of(vm);
    run_ok(vm);
    client_expect_ok(&k);
    stvm_stats after = stats_of(vm);
    cr_assert_eq(all.ev[0].timestamp_us, SIM_START);
    cr_assert_geq(after.boxed_allocated - before.boxed_allocated, 3u);
    cr_assert_eq(after.objects_live, before.objects_live);
    zl_done(vm, log);
    vm_done(vm);
}

/* A low process spinning is preempted by a higher one; the time the higher one ran is
 * not counted as the low one's. Lower bounds only. */
typedef struct spinner {
    int64_t pre_ms;
    uint64_t us;
    int rc;
    uint64_t t0, t1;
} spinner;

static void spin(stvm_vm *vm, void *arg)
{
    spinner *s = arg;
    if (s->pre_ms)
        stvm_delay_wait_ms(vm, s->pre_ms);
    s->t0 = stvm_vm_now_us(vm);
    s->rc = stvm_work_us(vm, s->us);
    s->t1 = stvm_vm_now_us(vm);
}

Test(zn_log, busy_cpu_lets_a_woken_higher_priority_process_in_and_does_not_count_its_time,
     .timeout = 20)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    stvm_vm *vm = vm_make(&cfg);
    spinner lo = {.us = 20000}, hi = {.pre_ms = 5, .us = 10000};
    spawn(vm, 30, "lo", spin, &lo);
    spawn(vm, 50, "hi", spin, &hi);
    run_ok(vm);
    cr_assert_eq(lo.rc, STVM_OK);
    cr_assert_eq(hi.rc, STVM_OK);
    cr_assert_geq(hi.t1 - hi.t0, 10000u);
    cr_assert_lt(hi.t0, lo.t1, "hi waited for lo's spin to end");
    cr_assert_geq(lo.t1 - lo.t0, 30000u, "lo counted hi's time as its own: %llu us",
                  (unsigned long long)(lo.t1 - lo.t0));
    vm_done(vm);
}

/* ---- termination and bad arguments ----------------------------------------------------- */

typedef struct killer {
    stvm_process *victim;
    zn_log *log;
    int rc, rc_free;
} killer;

static void kill_after_2ms(stvm_vm *vm, void *arg)
{
    killer *k = arg;
    stvm_delay_wait_ms(vm, 2);
    k->rc_free = stvm__zn_log_free(vm, k->log);   /* refused: an event is in flight */
    k->rc = stvm_process_terminate(vm, k->victim);
}

Test(zn_log, a_client_terminated_while_a_subscriber_waits_leaves_no_event_behind)
{
    stvm_vm *vm = rep_vm(&US61);
    zn_log *log = zl_make(vm, 0);
    recorder rw = {.wait_ms = 50};
    subscribe(vm, log, &stvm__zn_request_written_class, &rw);
    client k = client_of(log, ZN_LOG_ALL, 0, 1);
    killer kl = {.log = log};
    kl.victim = spawn(vm, 40, "client", client_run, &k);
    spawn(vm, 50, "killer", kill_after_2ms, &kl);
    run_ok(vm);
    cr_assert_eq(kl.rc, STVM_OK);
    cr_assert_eq(kl.rc_free, STVM_EINUSE);
    cr_assert_eq(k.rc[0], -999, "the client never came back");
    cr_assert_eq(rw.n, 1);
    zn_log_stats st = zl_stats(log);
    cr_assert_eq(st.events_built, 1u);
    cr_assert_eq(st.events_emitted, 0u);
    zl_done(vm, log);   /* the event itself: the sanitizer build checks it was freed */
    vm_done(vm);
}

typedef struct bad_zn {
    zn_log *log, *foreign;
    int rc[10];
} bad_zn;

static void bad_zn_calls(stvm_vm *vm, void *arg)
{
    bad_zn *b = arg;
    zn_client_log ok = {.level = 3}, high = {.level = 4}, low = {.level = -1};
    zn_request_info req = {0};
    zn_response_info resp = {0};
    uint64_t d;
    int i = 0;
    b->rc[i++] = stvm__zn_log_request_written(vm, b->log, &high, 0, &req, &d);
    b->rc[i++] = stvm__zn_log_request_written(vm, b->log, &low, 0, &req, &d);
    b->rc[i++] = stvm__zn_log_request_written(vm, b->log, NULL, 0, &req, &d);
    b->rc[i++] = stvm__zn_log_request_written(vm, b->log, &ok, 0, NULL, &d);
    b->rc[i++] = stvm__zn_log_request_written(vm, b->log, &ok, 0, &req, NULL);
    b->rc[i++] = stvm__zn_log_response_read(vm, b->foreign, &ok, 0, &resp, &d);
    b->rc[i++] = stvm__zn_log_client_transaction(vm, b->log, &ok, &req, 0, NULL, 0);
    b->rc[i++] = stvm__zn_log_emit(vm, b->log, NULL, &(zn_log_event){0});
    b->rc[i++] = stvm_work_us(vm, ZN_LOG_MAX_COST_US + 1);
    b->rc[i++] = stvm_work_us(NULL, 1);
}

Test(zn_log, bad_arguments_are_refused_and_build_nothing)
{
    stvm_vm *vm = rep_vm(&US61);
    stvm_vm *other = rep_vm(&US61);
    zn_log *log = zl_make(vm, 0), *foreign = zl_make(other, 0);
    zn_log *none = NULL;
    cr_assert_eq(stvm__zn_log_new(NULL, &none), STVM_EINVAL);
    cr_assert_eq(stvm__zn_log_new(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm__zn_log_set_construction_cost_us(log, ZN_LOG_MAX_COST_US + 1),
                 STVM_ERANGE);
    cr_assert_eq(stvm__zn_log_set_construction_cost_us(NULL, 1), STVM_EINVAL);
    announcer *an;
    cr_assert_eq(stvm__zn_log_announcer(other, log, &an), STVM_EINVAL);
    cr_assert_eq(stvm__zn_log_free(other, log), STVM_EINVAL);
    /* from the host */
    zn_client_log c = {.level = 3};
    zn_request_info req = {0};
    uint64_t d;
    cr_assert_eq(stvm__zn_log_request_written(vm, log, &c, 0, &req, &d), STVM_ENOTPROC);
    cr_assert_eq(stvm_work_us(vm, 1), STVM_ENOTPROC);
    bad_zn b = {.log = log, .foreign = foreign};
    spawn(vm, 40, "bad", bad_zn_calls, &b);
    run_ok(vm);
    static const int want[10] = {STVM_EINVAL, STVM_EINVAL, STVM_EINVAL, STVM_EINVAL,
                                 STVM_EINVAL, STVM_EINVAL, STVM_EINVAL, STVM_EINVAL,
                                 STVM_ERANGE, STVM_EINVAL};
    for (int i = 0; i < 10; i++)
        cr_assert_eq(b.rc[i], want[i], "call %d gave %s", i, stvm_err_name(b.rc[i]));
    zn_log_stats st = zl_stats(log);
    cr_assert_eq(st.events_built, 0u);
    cr_assert_not(st.has_announcer);
    zl_done(other, foreign);
    zl_done(vm, log);
    vm_done(other);
    vm_done(vm);
}
