/*
 * stvm-bench micro: the ping-pong. Two parties hand control to each other through two
 * semaphores (one hand-off is a signal + wait that moves control to the other) or two
 * SharedQueues (a put + take), or a monitor's signal + condition wait. Measured on two green processes of equal priority
 * (stvm), and on two OS threads pinned to one core (pthread sem_t) for reference.
 */
#include "micro_measure.h"

#include "bench.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

/* ---- semaphore and SharedQueue hand-offs ------------------------------------------- */

typedef struct pingpong {
    micro_channel channel;
    stvm_semaphore *s1, *s2;
    stvm_queue *q1, *q2;
    stvm_monitor *m;
    long long warmup, rounds;   /* one round = two hand-offs */
    int64_t t0, t1;
    int err;
} pingpong;

/* The giving and the taking half of one hand-off on channel 1 or 2: a signal and a
 * wait, or a put and a take (the item is the round's number, checked on arrival). */
static int give(stvm_vm *vm, pingpong *pp, int ch, long long i)
{
    if (pp->channel == MICRO_SEMAPHORE)
        return stvm_semaphore_signal(vm, ch == 1 ? pp->s1 : pp->s2);
    return stvm_queue_put(vm, ch == 1 ? pp->q1 : pp->q2, (void *)(intptr_t)i);
}

static int take(stvm_vm *vm, pingpong *pp, int ch, long long i)
{
    if (pp->channel == MICRO_SEMAPHORE)
        return stvm_semaphore_wait(vm, ch == 1 ? pp->s1 : pp->s2);
    void *item = NULL;
    int err = stvm_queue_take(vm, ch == 1 ? pp->q1 : pp->q2, &item);
    return err ? err : (intptr_t)item == i ? STVM_OK : STVM_ESTATE;
}

/* The monitor's ping-pong: one round is a signal and a wait by each party; the last
 * signal, after the loop, lets the partner out of its last wait. */
static void monitor_party(stvm_vm *vm, pingpong *pp, bool timed)
{
    int err = stvm_monitor_enter(vm, pp->m);
    for (long long i = 0; !err && i < pp->warmup + pp->rounds; i++) {
        if (timed && i == pp->warmup)
            pp->t0 = bench_mono_ns();
        int n = stvm_monitor_signal(vm, pp->m);
        err = n < 0 ? n : stvm_monitor_wait(vm, pp->m);
    }
    if (timed)
        pp->t1 = bench_mono_ns();
    if (!err) {
        int n = stvm_monitor_signal(vm, pp->m);
        err = n < 0 ? n : stvm_monitor_exit(vm, pp->m);
    }
    if (err)
        pp->err = err;
}

static void ping(stvm_vm *vm, void *arg)
{
    pingpong *pp = arg;
    if (pp->channel == MICRO_MONITOR) {
        monitor_party(vm, pp, true);
        return;
    }
    for (long long i = 0; i < pp->warmup + pp->rounds; i++) {
        if (i == pp->warmup)
            pp->t0 = bench_mono_ns();
        int e1 = give(vm, pp, 1, i);
        int e2 = take(vm, pp, 2, i);
        if (e1 || e2) {
            pp->err = e1 ? e1 : e2;
            break;
        }
    }
    pp->t1 = bench_mono_ns();
}

static void pong(stvm_vm *vm, void *arg)
{
    pingpong *pp = arg;
    if (pp->channel == MICRO_MONITOR) {
        monitor_party(vm, pp, false);
        return;
    }
    for (long long i = 0; i < pp->warmup + pp->rounds; i++) {
        int e1 = take(vm, pp, 1, i);
        int e2 = give(vm, pp, 2, i);
        if (e1 || e2) {
            pp->err = e1 ? e1 : e2;
            break;
        }
    }
}

static int make_channels(stvm_vm *vm, pingpong *pp)
{
    if (pp->channel == MICRO_MONITOR)
        return stvm_monitor_new(vm, &pp->m);
    if (pp->channel == MICRO_SEMAPHORE) {
        int err = stvm_semaphore_new(vm, &pp->s1);
        return err ? err : stvm_semaphore_new(vm, &pp->s2);
    }
    int err = stvm_queue_new(vm, 0, &pp->q1);
    return err ? err : stvm_queue_new(vm, 0, &pp->q2);
}

int micro_handoff(micro_channel channel, long long handoffs, const bench_trace *trace,
                  double *ns, char *why, size_t whysize)
{
    stvm_vm *vm;
    int err = stvm_vm_new(&vm, NULL);
    if (err) {
        snprintf(why, whysize, "stvm_vm_new: %s", stvm_err_name(err));
        return err;
    }
    pingpong pp = {.channel = channel, .warmup = 10000,
                   .rounds = handoffs / 2 > 0 ? handoffs / 2 : 1};
    if ((err = make_channels(vm, &pp)) ||
        (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "ping", ping, &pp, NULL)) ||
        (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "pong", pong, &pp, NULL))) {
        snprintf(why, whysize, "setting up the ping-pong: %s", stvm_err_name(err));
        stvm_vm_free(vm);
        return err;
    }
    if ((err = bench_trace_begin(trace, vm, why, whysize))) {
        stvm_vm_free(vm);
        return err;
    }
    stvm_stats st;
    stvm_reset_stats(vm);
    err = stvm_run(vm);
    stvm_get_stats(vm, &st);
    int werr = err || pp.err ? STVM_OK : bench_trace_end(trace, vm, why, whysize);
    stvm_vm_free(vm);
    if (werr)
        return werr;
    if (err || pp.err) {
        snprintf(why, whysize, "ping-pong: %s", stvm_err_name(err ? err : pp.err));
        return err ? err : pp.err;
    }
    /* Each round must have cost two switches, or the figure means something else. */
    uint64_t want = 2 * (uint64_t)(pp.warmup + pp.rounds);
    if (st.context_switches < want) {
        snprintf(why, whysize,
                 "ping-pong made %llu context switches, expected at least %llu",
                 (unsigned long long)st.context_switches, (unsigned long long)want);
        return STVM_ESTATE;
    }
    *ns = (double)(pp.t1 - pp.t0) / (double)(2 * pp.rounds);
    return STVM_OK;
}

/* ---- a monitor's uncontended enter and exit ------------------------------------------- */

typedef struct enter_exit {
    stvm_monitor *m;
    long long pairs;
    int64_t t0, t1;
    int err;
} enter_exit;

static void enters_and_exits(stvm_vm *vm, void *arg)
{
    enter_exit *e = arg;
    int err = STVM_OK;
    for (long long i = 0; !err && i < 10000; i++)   /* warm-up */
        err = stvm_monitor_enter(vm, e->m) || stvm_monitor_exit(vm, e->m);
    e->t0 = bench_mono_ns();
    for (long long i = 0; !err && i < e->pairs; i++) {
        err = stvm_monitor_enter(vm, e->m);
        if (!err)
            err = stvm_monitor_exit(vm, e->m);
    }
    e->t1 = bench_mono_ns();
    e->err = err ? STVM_ESTATE : STVM_OK;
}

int micro_monitor_enter_exit(long long pairs, double *ns, char *why, size_t whysize)
{
    stvm_vm *vm;
    int err = stvm_vm_new(&vm, NULL);
    enter_exit e = {.pairs = pairs > 0 ? pairs : 1};
    if (!err && !(err = stvm_monitor_new(vm, &e.m)) &&
        !(err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "enter-exit", enters_and_exits,
                           &e, NULL)))
        err = stvm_run(vm);
    if (!err)
        err = e.err;
    if (vm)
        stvm_vm_free(vm);
    if (err) {
        snprintf(why, whysize, "monitor enter + exit: %s", stvm_err_name(err));
        return err;
    }
    *ns = (double)(e.t1 - e.t0) / (double)e.pairs;
    return STVM_OK;
}

/* ---- the pthread reference ------------------------------------------------------------ */

typedef struct pt_pair {
    sem_t s1, s2;
    long long warmup, rounds;
    int cpu;
    int64_t t0, t1;
    int pin_err;
} pt_pair;

static void sem_wait_intr(sem_t *s)
{
    while (sem_wait(s) != 0 && errno == EINTR) {
    }
}

static void *pt_ping(void *arg)
{
    pt_pair *p = arg;
    if (bench_pin_cpu(p->cpu) != 0)
        p->pin_err = 1;
    for (long long i = 0; i < p->warmup + p->rounds; i++) {
        if (i == p->warmup)
            p->t0 = bench_mono_ns();
        sem_post(&p->s1);
        sem_wait_intr(&p->s2);
    }
    p->t1 = bench_mono_ns();
    return NULL;
}

static void *pt_pong(void *arg)
{
    pt_pair *p = arg;
    if (bench_pin_cpu(p->cpu) != 0)
        p->pin_err = 1;
    for (long long i = 0; i < p->warmup + p->rounds; i++) {
        sem_wait_intr(&p->s1);
        sem_post(&p->s2);
    }
    return NULL;
}

int micro_pthread_handoff(long long handoffs, int cpu, double *ns)
{
    pt_pair p = {.warmup = 1000, .rounds = handoffs / 2 > 0 ? handoffs / 2 : 1, .cpu = cpu};
    if (sem_init(&p.s1, 0, 0) != 0 || sem_init(&p.s2, 0, 0) != 0)
        return -1;
    pthread_t a, b;
    int rc = pthread_create(&b, NULL, pt_pong, &p);
    if (rc == 0) {
        rc = pthread_create(&a, NULL, pt_ping, &p);
        if (rc != 0) {
            /* Let the waiting partner finish so it can be joined. */
            for (long long i = 0; i < p.warmup + p.rounds; i++)
                sem_post(&p.s1);
        } else {
            pthread_join(a, NULL);
        }
        pthread_join(b, NULL);
    }
    sem_destroy(&p.s1);
    sem_destroy(&p.s2);
    if (rc != 0 || p.pin_err)
        return -1;
    *ns = (double)(p.t1 - p.t0) / (double)(2 * p.rounds);
    return 0;
}
