/*
 * Suite "announcer": the Announcer of image-stubs/announcements/announcer.h (Pharo's Announcer and
 * SubscriptionRegistry): the fast path with no subscriptions (no lock, no wait even
 * when another process holds the registry's mutex), the mutex otherwise (a real wait,
 * also for a higher-priority process woken inside the critical section), delivery in
 * subscription order, filtering by class and superclass, subscribing and unsubscribing
 * during a delivery (Pharo's copy), subscribers that wait (the announcer waits exactly
 * that long, the registry does not), nested announcements, termination and suspension
 * in the middle, and bad arguments.
 *
 * The announcer is an internal API of the image side, not of <stvm.h>, so this suite
 * includes its header (which needs only <stvm.h>). Everything runs on the simulated
 * clock. Green processes only record; the host asserts after stvm_run.
 */
#include <stdint.h>
#include <string.h>

#include "../image-stubs/announcements/announcer.h"
#include "helpers.h"

TestSuite(announcer, .timeout = 30);

/* Ping > Pong, and Other beside them, all under Announcement. */
static const announcement_class ping_class = {"Ping", &stvm__announcement_class};
static const announcement_class pong_class = {"Pong", &ping_class};
static const announcement_class other_class = {"Other", &stvm__announcement_class};

/* An announcement carrying a number below 100. */
typedef struct msg {
    announcement ann;
    int n;
} msg;

static msg msg_of(const announcement_class *c, int n)
{
    return (msg){.ann = {c}, .n = n};
}

/* A subscriber: logs who * 100 + the number, notes when, optionally waits a Delay. */
typedef struct listener {
    trace_log *log;
    int who;
    int64_t wait_ms;
    announcer *an;                  /* to sample in_flight */
    int calls;
    uint64_t at[8];
    uint64_t max_in_flight;
} listener;

static void listen(stvm_vm *vm, const announcement *a, void *arg)
{
    listener *l = arg;
    trace_add(l->log, l->who * 100 + ((const msg *)a)->n);
    if (l->calls < 8)
        l->at[l->calls] = stvm_vm_now_us(vm);
    l->calls++;
    if (l->an) {
        announcer_stats s;
        stvm__announcer_get_stats(l->an, &s);
        if (s.in_flight > l->max_in_flight)
            l->max_in_flight = s.in_flight;
    }
    if (l->wait_ms)
        stvm_delay_wait_ms(vm, l->wait_ms);
}

static announcer *an_make(stvm_vm *vm)
{
    announcer *an = NULL;
    cr_assert_eq(stvm__announcer_new(vm, &an), STVM_OK);
    cr_assert_not_null(an);
    return an;
}

static uint64_t sub(stvm_vm *vm, announcer *an, const announcement_class *c, listener *l)
{
    uint64_t id = 0;
    int err = stvm__announcer_subscribe(vm, an, c, listen, l, &id);
    cr_assert_eq(err, STVM_OK, "subscribe: %s", stvm_err_name(err));
    cr_assert_gt(id, 0u);
    return id;
}

static announcer_stats an_stats(const announcer *an)
{
    announcer_stats s;
    stvm__announcer_get_stats(an, &s);
    return s;
}

/* The end of every test: nothing in flight, the counters add up, freed. */
static void an_done(stvm_vm *vm, announcer *an)
{
    announcer_stats s = an_stats(an);
    cr_assert_eq(s.in_flight, 0u);
    cr_assert_eq(s.announced, s.fast_path + s.unmatched + s.delivered + s.failed);
    cr_assert_eq(stvm__announcer_free(vm, an), STVM_OK);
}

/* A process that announces msgs in order after an optional Delay. */
typedef struct shouter {
    announcer *an;
    const msg *msgs;
    int n;
    int64_t pre_ms;
    int rc[8];
    uint64_t t0, t1;
    uint64_t switches0, switches1;
} shouter;

static void shout(stvm_vm *vm, void *arg)
{
    shouter *s = arg;
    if (s->pre_ms)
        stvm_delay_wait_ms(vm, s->pre_ms);
    s->t0 = stvm_vm_now_us(vm);
    s->switches0 = switches(vm);
    for (int i = 0; i < s->n; i++)
        s->rc[i] = stvm__announce(vm, s->an, &s->msgs[i].ann);
    s->switches1 = switches(vm);
    s->t1 = stvm_vm_now_us(vm);
}

static void shouter_expect_ok(const shouter *s)
{
    for (int i = 0; i < s->n; i++)
        cr_assert_eq(s->rc[i], STVM_OK, "announcement %d: %s", i, stvm_err_name(s->rc[i]));
}

/* A process that holds the registry's mutex for hold_ms. */
typedef struct mutex_holder {
    stvm_mutex *m;
    int64_t hold_ms;
    int rc_enter, rc_exit;
} mutex_holder;

static void hold_mutex(stvm_vm *vm, void *arg)
{
    mutex_holder *h = arg;
    h->rc_enter = stvm_mutex_enter(vm, h->m);
    stvm_delay_wait_ms(vm, h->hold_ms);
    h->rc_exit = stvm_mutex_exit(vm, h->m);
}

/* ---- the fast path ------------------------------------------------------------------- */

Test(announcer, with_no_subscriptions_an_announcement_takes_no_lock_and_never_switches)
{
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    msg m[3] = {msg_of(&ping_class, 1), msg_of(&pong_class, 2), msg_of(&other_class, 3)};
    shouter s = {.an = an, .msgs = m, .n = 3};
    spawn(vm, 40, "shouter", shout, &s);
    run_ok(vm);
    shouter_expect_ok(&s);
    cr_assert_eq(s.switches1, s.switches0, "the fast path switched");
    cr_assert_eq(s.t1, s.t0);
    announcer_stats st = an_stats(an);
    cr_assert_eq(st.announced, 3u);
    cr_assert_eq(st.fast_path, 3u);
    cr_assert_eq(st.mutex_entries, 0u);
    cr_assert_eq(st.mutex_waits, 0u);
    cr_assert_eq(st.deliveries, 0u);
    an_done(vm, an);
    vm_done(vm);
}

Test(announcer, a_held_registry_mutex_stops_an_announcement_only_when_someone_is_subscribed)
{
    for (int with_sub = 0; with_sub < 2; with_sub++) {
        stvm_vm *vm = rep_vm(&US61);
        announcer *an = an_make(vm);
        trace_log log = {0};
        listener l = {.log = &log, .who = 1};
        if (with_sub)
            sub(vm, an, &ping_class, &l);
        /* The shouter (40) sleeps 1 ms; meanwhile the holder (30) takes the mutex for
         * 10 ms; the shouter announces at 1 ms. */
        msg m = msg_of(&ping_class, 7);
        shouter s = {.an = an, .msgs = &m, .n = 1, .pre_ms = 1};
        mutex_holder h = {.m = stvm__announcer_mutex(an), .hold_ms = 10};
        spawn(vm, 40, "shouter", shout, &s);
        spawn(vm, 30, "holder", hold_mutex, &h);
        run_ok(vm);
        shouter_expect_ok(&s);
        cr_assert_eq(h.rc_enter, STVM_OK);
        cr_assert_eq(h.rc_exit, STVM_OK);
        cr_assert_eq(s.t0, SIM_START + 1000u);
        announcer_stats st = an_stats(an);
        if (!with_sub) {
            cr_assert_eq(s.t1, s.t0, "an announcement nobody listens to waited");
            cr_assert_eq(st.fast_path, 1u);
            cr_assert_eq(st.mutex_waits, 0u);
            cr_assert_eq(log.n, 0);
        } else {
            cr_assert_eq(s.t1, SIM_START + 10000u, "returned at +%llu us",
                         (unsigned long long)(s.t1 - SIM_START));
            cr_assert_eq(st.mutex_waits, 1u);
            cr_assert_eq(st.mutex_entries, 1u);
            cr_assert_eq(l.calls, 1);
            cr_assert_eq(l.at[0], SIM_START + 10000u, "delivered before the mutex was free");
        }
        an_done(vm, an);
        vm_done(vm);
    }
}

/* ---- a higher-priority process woken inside the critical section --------------------- */

typedef struct woken {
    announcer *an;
    stvm_semaphore *sem;
    int rc_wait, rc;
} woken;

static void wait_then_announce(stvm_vm *vm, void *arg)
{
    woken *w = arg;
    w->rc_wait = stvm_semaphore_wait(vm, w->sem);
    msg m = msg_of(&ping_class, 50);
    w->rc = stvm__announce(vm, w->an, &m.ann);
}

typedef struct signaller_shouter {
    announcer *an;
    int index;
    int rc_signal, rc;
} signaller_shouter;

static void signal_then_announce(stvm_vm *vm, void *arg)
{
    signaller_shouter *s = arg;
    /* Taken at the next scheduling point: the checkpoint inside the registry's lock. */
    s->rc_signal = stvm_external_signal(vm, s->index);
    msg m = msg_of(&ping_class, 30);
    s->rc = stvm__announce(vm, s->an, &m.ann);
}

Test(announcer, a_higher_priority_process_woken_inside_the_lock_waits_for_it_then_delivers_first)
{
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    trace_log log = {0};
    listener l = {.log = &log, .who = 0};
    sub(vm, an, &ping_class, &l);
    stvm_semaphore *sem = sem_make(vm);
    int index = 0;
    cr_assert_eq(stvm_external_register(vm, sem, &index), STVM_OK);
    woken hi = {.an = an, .sem = sem};
    signaller_shouter lo = {.an = an, .index = index};
    spawn(vm, 50, "hi", wait_then_announce, &hi);
    spawn(vm, 30, "lo", signal_then_announce, &lo);
    run_ok(vm);
    cr_assert_eq(hi.rc_wait, STVM_OK);
    cr_assert_eq(hi.rc, STVM_OK);
    cr_assert_eq(lo.rc_signal, STVM_OK);
    cr_assert_eq(lo.rc, STVM_OK);
    /* lo held the lock when hi came: hi waited, got it handed over when lo had copied,
     * and delivered before lo got the processor back. */
    int want[2] = {50, 30};
    trace_expect(&log, want, 2);
    announcer_stats st = an_stats(an);
    cr_assert_eq(st.mutex_waits, 1u);
    cr_assert_eq(st.mutex_entries, 2u);
    cr_assert_eq(st.delivered, 2u);
    cr_assert_eq(stvm_external_unregister(vm, index), STVM_OK);
    an_done(vm, an);
    vm_done(vm);
}

/* ---- order and classes ------------------------------------------------------------------ */

typedef struct order_scenario {
    stvm_vm *vm;
    announcer *an;
    listener *l2;
    uint64_t id2;
    int rc[6];
    int bad_line;
} order_scenario;

static void announce_unsubscribe_resubscribe(stvm_vm *vm, void *arg)
{
    order_scenario *s = arg;
    msg m1 = msg_of(&ping_class, 1), m2 = msg_of(&ping_class, 2), m3 = msg_of(&ping_class, 3);
    s->rc[0] = stvm__announce(vm, s->an, &m1.ann);
    s->rc[1] = stvm__announcer_unsubscribe(vm, s->an, s->id2);
    s->rc[2] = stvm__announce(vm, s->an, &m2.ann);
    uint64_t id = 0;
    s->rc[3] = stvm__announcer_subscribe(vm, s->an, &ping_class, listen, s->l2, &id);
    GCHECK(s, id > s->id2);   /* ids are never reused */
    s->rc[4] = stvm__announce(vm, s->an, &m3.ann);
}

Test(announcer, subscriptions_receive_in_subscription_order_and_a_new_one_goes_last)
{
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    trace_log log = {0};
    listener l[3] = {{.log = &log, .who = 1}, {.log = &log, .who = 2}, {.log = &log, .who = 3}};
    uint64_t id1 = sub(vm, an, &ping_class, &l[0]);
    uint64_t id2 = sub(vm, an, &ping_class, &l[1]);
    uint64_t id3 = sub(vm, an, &ping_class, &l[2]);
    cr_assert(id1 < id2 && id2 < id3);
    order_scenario s = {.vm = vm, .an = an, .l2 = &l[1], .id2 = id2};
    spawn(vm, 40, "order", announce_unsubscribe_resubscribe, &s);
    RUN_OK_GREEN(&s);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(s.rc[i], STVM_OK, "call %d: %s", i, stvm_err_name(s.rc[i]));
    int want[8] = {101, 201, 301, 102, 302, 103, 303, 203};
    trace_expect(&log, want, 8);
    announcer_stats st = an_stats(an);
    cr_assert_eq(st.delivered, 3u);
    cr_assert_eq(st.deliveries, 8u);
    cr_assert_eq(st.subscriptions, 3u);
    cr_assert_eq(st.mutex_entries, 5u, "3 announcements, an unsubscribe, a subscribe");
    an_done(vm, an);
    vm_done(vm);
}

Test(announcer, a_subscription_receives_its_class_and_subclasses_and_the_root_receives_all)
{
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    trace_log log = {0};
    listener to_ping = {.log = &log, .who = 1}, to_pong = {.log = &log, .who = 2};
    listener to_other = {.log = &log, .who = 3}, to_all = {.log = &log, .who = 4};
    sub(vm, an, &ping_class, &to_ping);
    sub(vm, an, &pong_class, &to_pong);
    uint64_t other_id = sub(vm, an, &other_class, &to_other);
    uint64_t all_id = sub(vm, an, &stvm__announcement_class, &to_all);
    msg m[3] = {msg_of(&ping_class, 1), msg_of(&pong_class, 2), msg_of(&other_class, 3)};
    shouter s = {.an = an, .msgs = m, .n = 3};
    spawn(vm, 40, "shouter", shout, &s);
    run_ok(vm);
    shouter_expect_ok(&s);
    int want[7] = {101, 401, 102, 202, 402, 303, 403};
    trace_expect(&log, want, 7);
    /* With only Ping and Pong subscribed, Other is announced under the lock to nobody. */
    cr_assert_eq(stvm__announcer_unsubscribe(vm, an, other_id), STVM_OK);
    cr_assert_eq(stvm__announcer_unsubscribe(vm, an, all_id), STVM_OK);
    announcer_stats before = an_stats(an);
    shouter s2 = {.an = an, .msgs = &m[2], .n = 1};
    spawn(vm, 40, "shouter 2", shout, &s2);
    run_ok(vm);
    shouter_expect_ok(&s2);
    announcer_stats after = an_stats(an);
    cr_assert_eq(after.unmatched, before.unmatched + 1);
    cr_assert_eq(after.mutex_entries, before.mutex_entries + 1, "no lock from the host");
    cr_assert_eq(after.deliveries, before.deliveries);
    cr_assert_eq(log.n, 7);
    an_done(vm, an);
    vm_done(vm);
}

Test(announcer, announcement_is_follows_the_superclass_chain)
{
    msg ping = msg_of(&ping_class, 0), pong = msg_of(&pong_class, 0);
    cr_assert(stvm__announcement_is(&pong.ann, &pong_class));
    cr_assert(stvm__announcement_is(&pong.ann, &ping_class));
    cr_assert(stvm__announcement_is(&pong.ann, &stvm__announcement_class));
    cr_assert_not(stvm__announcement_is(&ping.ann, &pong_class));
    cr_assert_not(stvm__announcement_is(&pong.ann, &other_class));
    cr_assert_not(stvm__announcement_is(NULL, &ping_class));
    cr_assert_not(stvm__announcement_is(&ping.ann, NULL));
}

/* ---- changing the registry during a delivery ----------------------------------------- */

/* The first subscriber: on its first call it removes the third, adds a fourth and
 * removes itself. */
typedef struct mutator {
    listener self;
    announcer *an;
    uint64_t own_id, third_id, fourth_id;
    listener *fourth;
    int rc[3];
} mutator;

static void mutate(stvm_vm *vm, const announcement *a, void *arg)
{
    mutator *m = arg;
    listen(vm, a, &m->self);
    if (m->self.calls != 1)
        return;
    m->rc[0] = stvm__announcer_unsubscribe(vm, m->an, m->third_id);
    m->rc[1] = stvm__announcer_subscribe(vm, m->an, &ping_class, listen, m->fourth, &m->fourth_id);
    m->rc[2] = stvm__announcer_unsubscribe(vm, m->an, m->own_id);
}

Test(announcer, during_a_delivery_a_removed_subscription_still_gets_it_and_an_added_one_does_not)
{
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    trace_log log = {0};
    listener second = {.log = &log, .who = 2}, third = {.log = &log, .who = 3};
    listener fourth = {.log = &log, .who = 4};
    mutator first = {.self = {.log = &log, .who = 1}, .an = an, .fourth = &fourth};
    cr_assert_eq(stvm__announcer_subscribe(vm, an, &ping_class, mutate, &first, &first.own_id),
                 STVM_OK);
    sub(vm, an, &ping_class, &second);
    first.third_id = sub(vm, an, &ping_class, &third);
    msg m[2] = {msg_of(&ping_class, 1), msg_of(&ping_class, 2)};
    shouter s = {.an = an, .msgs = m, .n = 2};
    spawn(vm, 40, "shouter", shout, &s);
    run_ok(vm);
    shouter_expect_ok(&s);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(first.rc[i], STVM_OK, "change %d: %s", i, stvm_err_name(first.rc[i]));
    /* The first announcement goes to its copy (1, 2, 3), the second to the registry as
     * changed (2, 4). */
    int want[5] = {101, 201, 301, 202, 402};
    trace_expect(&log, want, 5);
    announcer_stats st = an_stats(an);
    cr_assert_eq(st.subscriptions, 2u);
    cr_assert_eq(st.mutex_waits, 0u, "the callbacks ran outside the lock");
    an_done(vm, an);
    vm_done(vm);
}

/* ---- subscribers that wait --------------------------------------------------------------- */

Test(announcer, a_subscriber_that_waits_holds_up_its_announcer_that_long_but_not_the_registry)
{
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    trace_log log = {0};
    listener slow = {.log = &log, .who = 1, .wait_ms = 5, .an = an};
    listener after = {.log = &log, .who = 2, .an = an};
    sub(vm, an, &ping_class, &slow);
    sub(vm, an, &ping_class, &after);
    /* a announces at 0 and waits in slow until 5 ms; b announces at 1 ms meanwhile. */
    msg ma = msg_of(&ping_class, 1), mb = msg_of(&ping_class, 2);
    shouter a = {.an = an, .msgs = &ma, .n = 1};
    shouter b = {.an = an, .msgs = &mb, .n = 1, .pre_ms = 1};
    spawn(vm, 40, "a", shout, &a);
    spawn(vm, 40, "b", shout, &b);
    run_ok(vm);
    shouter_expect_ok(&a);
    shouter_expect_ok(&b);
    cr_assert_eq(a.t1 - a.t0, 5000u, "a was held %llu us", (unsigned long long)(a.t1 - a.t0));
    cr_assert_eq(b.t0, SIM_START + 1000u);
    cr_assert_eq(b.t1 - b.t0, 5000u, "b was held %llu us", (unsigned long long)(b.t1 - b.t0));
    cr_assert_eq(after.at[0], SIM_START + 5000u);
    cr_assert_eq(after.at[1], SIM_START + 6000u);
    int want[4] = {101, 102, 201, 202};
    trace_expect(&log, want, 4);
    announcer_stats st = an_stats(an);
    cr_assert_eq(st.mutex_waits, 0u, "b waited for the lock while a's subscriber waited");
    cr_assert_eq(slow.max_in_flight, 2u, "b's delivery began while a's was in flight");
    an_done(vm, an);
    vm_done(vm);
}

/* Another process subscribes while a delivery waits in a subscriber. */
typedef struct late_subscriber {
    announcer *an;
    listener *l;
    int rc;
    uint64_t at;
} late_subscriber;

static void subscribe_late(stvm_vm *vm, void *arg)
{
    late_subscriber *s = arg;
    stvm_delay_wait_ms(vm, 1);
    uint64_t id;
    s->rc = stvm__announcer_subscribe(vm, s->an, &ping_class, listen, s->l, &id);
    s->at = stvm_vm_now_us(vm);
}

Test(announcer, a_process_subscribing_during_a_delivery_gets_only_later_announcements)
{
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    trace_log log = {0};
    listener slow = {.log = &log, .who = 1, .wait_ms = 5};
    listener late = {.log = &log, .who = 3};
    sub(vm, an, &ping_class, &slow);
    /* a announces 1 at 0 (slow holds it until 5 ms) and 2 at 5 ms (until 10 ms); c
     * subscribes at 1 ms, in the middle of the first delivery. */
    msg m[2] = {msg_of(&ping_class, 1), msg_of(&ping_class, 2)};
    shouter a = {.an = an, .msgs = m, .n = 2};
    late_subscriber c = {.an = an, .l = &late};
    spawn(vm, 40, "a", shout, &a);
    spawn(vm, 40, "c", subscribe_late, &c);
    run_ok(vm);
    shouter_expect_ok(&a);
    cr_assert_eq(c.rc, STVM_OK);
    cr_assert_eq(c.at, SIM_START + 1000u, "subscribing did not wait for the delivery");
    int want[3] = {101, 102, 302};
    trace_expect(&log, want, 3);
    cr_assert_eq(late.at[0], SIM_START + 10000u, "after slow, in subscription order");
    cr_assert_eq(an_stats(an).mutex_waits, 0u);
    an_done(vm, an);
    vm_done(vm);
}

/* A subscriber that announces again, from inside the delivery. */
typedef struct echo {
    listener self;
    announcer *an;
    int rc;
} echo;

static void echo_once(stvm_vm *vm, const announcement *a, void *arg)
{
    echo *e = arg;
    listen(vm, a, &e->self);
    if (((const msg *)a)->n == 1) {
        msg again = msg_of(&pong_class, 2);
        e->rc = stvm__announce(vm, e->an, &again.ann);
    }
}

Test(announcer, a_subscriber_may_announce_again_and_the_nested_delivery_finishes_first)
{
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    trace_log log = {0};
    echo first = {.self = {.log = &log, .who = 1, .an = an}, .an = an, .rc = -999};
    listener second = {.log = &log, .who = 2, .an = an};
    uint64_t id;
    cr_assert_eq(stvm__announcer_subscribe(vm, an, &ping_class, echo_once, &first, &id), STVM_OK);
    sub(vm, an, &ping_class, &second);
    msg m = msg_of(&ping_class, 1);
    shouter s = {.an = an, .msgs = &m, .n = 1};
    spawn(vm, 40, "shouter", shout, &s);
    run_ok(vm);
    shouter_expect_ok(&s);
    cr_assert_eq(first.rc, STVM_OK);
    int want[4] = {101, 102, 202, 201};
    trace_expect(&log, want, 4);
    cr_assert_eq(second.max_in_flight, 2u);
    an_done(vm, an);
    vm_done(vm);
}

Test(announcer, more_subscriptions_than_the_stack_copy_holds_are_all_delivered_in_order)
{
    enum { N = 40 };
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    static trace_log log;
    memset(&log, 0, sizeof log);
    static listener l[N];
    for (int i = 0; i < N; i++) {
        l[i] = (listener){.log = &log, .who = i + 1};
        /* every other one to Pong: the copy holds only the matches */
        sub(vm, an, i % 2 ? &pong_class : &ping_class, &l[i]);
    }
    msg m[2] = {msg_of(&ping_class, 1), msg_of(&pong_class, 2)};
    shouter s = {.an = an, .msgs = m, .n = 2};
    spawn(vm, 40, "shouter", shout, &s);
    run_ok(vm);
    shouter_expect_ok(&s);
    int want[N / 2 + N], k = 0;
    for (int i = 0; i < N; i += 2)
        want[k++] = (i + 1) * 100 + 1;
    for (int i = 0; i < N; i++)
        want[k++] = (i + 1) * 100 + 2;
    trace_expect(&log, want, k);
    an_done(vm, an);
    vm_done(vm);
}

/* ---- termination and suspension ---------------------------------------------------------- */

typedef struct stopper {
    stvm_process *victim;
    int64_t after_ms, resume_after_ms;   /* resume_after_ms > 0: suspend, then resume */
    announcer *an;
    int rc, rc_free;
    announcer_stats during;
} stopper;

static void stop_victim(stvm_vm *vm, void *arg)
{
    stopper *k = arg;
    stvm_delay_wait_ms(vm, k->after_ms);
    stvm__announcer_get_stats(k->an, &k->during);
    k->rc_free = stvm__announcer_free(vm, k->an);   /* refused: in flight */
    if (k->resume_after_ms) {
        k->rc = stvm_process_suspend(vm, k->victim);
        stvm_delay_wait_ms(vm, k->resume_after_ms);
        k->rc |= stvm_process_resume(vm, k->victim);
    } else {
        k->rc = stvm_process_terminate(vm, k->victim);
    }
}

Test(announcer, terminating_a_process_in_a_subscriber_ends_its_delivery_and_frees_the_copy)
{
    enum { N = 12 };   /* past the stack copy: the heap copy must not leak */
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    trace_log log = {0};
    listener l[N];
    for (int i = 0; i < N; i++) {
        l[i] = (listener){.log = &log, .who = i + 1, .wait_ms = i == 0 ? 100 : 0};
        sub(vm, an, &ping_class, &l[i]);
    }
    msg m = msg_of(&ping_class, 1);
    shouter s = {.an = an, .msgs = &m, .n = 1, .rc = {-999}};
    stopper k = {.after_ms = 10, .an = an};
    k.victim = spawn(vm, 40, "shouter", shout, &s);
    spawn(vm, 50, "killer", stop_victim, &k);
    run_ok(vm);
    cr_assert_eq(k.rc, STVM_OK);
    cr_assert_eq(k.rc_free, STVM_EINUSE);
    cr_assert_eq(k.during.in_flight, 1u);
    cr_assert_eq(s.rc[0], -999, "the terminated shouter never returns");
    cr_assert_eq(log.n, 1, "only the first subscriber was reached");
    cr_assert_eq(stvm_vm_now_us(vm), SIM_START + 10000u, "the subscriber's Delay was left");
    cr_assert_null(stvm_mutex_owner(vm, stvm__announcer_mutex(an)));
    an_done(vm, an);
    vm_done(vm);
}

Test(announcer, an_announcer_suspended_while_waiting_for_the_lock_gets_estate_and_delivers_nothing)
{
    stvm_vm *vm = rep_vm(&US61);
    announcer *an = an_make(vm);
    trace_log log = {0};
    listener l = {.log = &log, .who = 1};
    sub(vm, an, &ping_class, &l);
    mutex_holder h = {.m = stvm__announcer_mutex(an), .hold_ms = 20};
    msg m = msg_of(&ping_class, 1);
    shouter s = {.an = an, .msgs = &m, .n = 1, .pre_ms = 1};
    stopper k = {.after_ms = 5, .resume_after_ms = 1, .an = an};
    spawn(vm, 30, "holder", hold_mutex, &h);
    k.victim = spawn(vm, 40, "shouter", shout, &s);
    spawn(vm, 50, "suspender", stop_victim, &k);
    run_ok(vm);
    cr_assert_eq(k.rc, STVM_OK);
    cr_assert_eq(k.during.mutex_waits, 1u);
    cr_assert_eq(s.rc[0], STVM_ESTATE, "%s", stvm_err_name(s.rc[0]));
    cr_assert_eq(s.t1, SIM_START + 6000u);
    cr_assert_eq(log.n, 0);
    announcer_stats st = an_stats(an);
    cr_assert_eq(st.failed, 1u);
    cr_assert_eq(st.mutex_entries, 0u);
    an_done(vm, an);
    vm_done(vm);
}

/* ---- bad arguments -------------------------------------------------------------------------- */

typedef struct bad_scenario {
    stvm_vm *vm;
    announcer *an, *foreign;
    int rc[8];
    int bad_line;
} bad_scenario;

static void refuse_free_in_flight(stvm_vm *vm, const announcement *a, void *arg)
{
    bad_scenario *b = arg;
    b->rc[0] = stvm__announcer_free(vm, b->an);
}

static void bad_calls(stvm_vm *vm, void *arg)
{
    bad_scenario *b = arg;
    msg m = msg_of(&ping_class, 1), classless = {0};
    b->rc[1] = stvm__announce(vm, b->an, &classless.ann);
    b->rc[2] = stvm__announce(vm, b->foreign, &m.ann);
    b->rc[3] = stvm__announce(vm, b->an, NULL);
    b->rc[4] = stvm__announce(vm, b->an, &m.ann);   /* the subscriber tries to free */
}

Test(announcer, bad_arguments_and_misuse_are_refused_and_change_nothing)
{
    stvm_vm *vm = rep_vm(&US61);
    stvm_vm *other = rep_vm(&US61);
    announcer *an = an_make(vm), *foreign = an_make(other);
    uint64_t id = 0;
    msg m = msg_of(&ping_class, 1);
    cr_assert_eq(stvm__announcer_new(NULL, &an), STVM_EINVAL);
    cr_assert_eq(stvm__announcer_new(vm, NULL), STVM_EINVAL);
    cr_assert_eq(stvm__announcer_subscribe(vm, an, NULL, listen, NULL, &id), STVM_EINVAL);
    cr_assert_eq(stvm__announcer_subscribe(vm, an, &ping_class, NULL, NULL, &id), STVM_EINVAL);
    cr_assert_eq(stvm__announcer_subscribe(vm, an, &ping_class, listen, NULL, NULL), STVM_EINVAL);
    cr_assert_eq(stvm__announcer_subscribe(vm, foreign, &ping_class, listen, NULL, &id),
                 STVM_EINVAL);
    cr_assert_eq(stvm__announcer_unsubscribe(vm, an, 0), STVM_EINVAL);
    cr_assert_eq(stvm__announcer_unsubscribe(vm, an, 1), STVM_EINVAL, "never given");
    cr_assert_eq(stvm__announce(vm, an, &m.ann), STVM_ENOTPROC, "from the host");
    cr_assert_eq(stvm__announcer_free(vm, foreign), STVM_EINVAL);
    cr_assert_eq(stvm__announcer_free(NULL, an), STVM_EINVAL);
    bad_scenario b = {.vm = vm, .an = an, .foreign = foreign};
    cr_assert_eq(stvm__announcer_subscribe(vm, an, &ping_class, refuse_free_in_flight, &b, &id),
                 STVM_OK);
    spawn(vm, 40, "bad", bad_calls, &b);
    RUN_OK_GREEN(&b);
    cr_assert_eq(b.rc[0], STVM_EINUSE, "freed in flight: %s", stvm_err_name(b.rc[0]));
    cr_assert_eq(b.rc[1], STVM_EINVAL);
    cr_assert_eq(b.rc[2], STVM_EINVAL);
    cr_assert_eq(b.rc[3], STVM_EINVAL);
    cr_assert_eq(b.rc[4], STVM_OK);
    announcer_stats st = an_stats(an);
    cr_assert_eq(st.announced, 1u, "refused calls are not counted");
    cr_assert_eq(st.deliveries, 1u);
    cr_assert_eq(stvm__announcer_unsubscribe(vm, an, id), STVM_OK);
    cr_assert_eq(stvm__announcer_unsubscribe(vm, an, id), STVM_EINVAL, "already removed");
    cr_assert_eq(an_stats(an).subscriptions, 0u);
    an_done(vm, an);
    an_done(other, foreign);
    vm_done(other);
    vm_done(vm);
}
