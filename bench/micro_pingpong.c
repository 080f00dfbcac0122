/*
 * stvm-bench micro: the ping-pong. Two parties hand control to each other through two
 * semaphores (one hand-off is a signal + wait that moves control to the other) or two
 * SharedQueues (a put + take), or a monitor's signal + condition wait; and one process
 * entering and leaving a monitor nobody else wants. Measured on green processes of
 * equal priority (stvm), and on two OS threads pinned to one core (pthread sem_t) for
 * reference.
 */
#include "micro.h"

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
static int monitor_rounds(stvm_vm *vm, pingpong *pp, bool timed)
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
    int n = err ? 0 : stvm_monitor_signal(vm, pp->m);
    return err ? err : n < 0 ? n : stvm_monitor_exit(vm, pp->m);
}

/* One process entering and leaving the monitor nobody else wants, `rounds` times after
 * the warm-up. */
static int enters_and_exits(stvm_vm *vm, pingpong *pp)
{
    int err = STVM_OK;
    for (long long i = 0; !err && i < pp->warmup + pp->rounds; i++) {
        if (i == pp->warmup)
            pp->t0 = bench_mono_ns();
        err = stvm_monitor_enter(vm, pp->m);
        if (!err)
            err = stvm_monitor_exit(vm, pp->m);
    }
    pp->t1 = bench_mono_ns();
    return err;
}

/* One party: ping gives on channel 1 and takes on 2 (and keeps the time), pong takes
 * on 1 and gives on 2. */
static void party(stvm_vm *vm, pingpong *pp, bool is_ping)
{
    int err = STVM_OK;
    if (pp->channel == MICRO_MONITOR)
        err = monitor_rounds(vm, pp, is_ping);
    if (pp->channel == MICRO_ENTER_EXIT)
        err = enters_and_exits(vm, pp);
    bool two = pp->channel <= MICRO_QUEUE;   /* the monitor cases loop above */
    for (long long i = 0; two && !err && i < pp->warmup + pp->rounds; i++) {
        if (is_ping && i == pp->warmup)
            pp->t0 = bench_mono_ns();
        err = is_ping ? give(vm, pp, 1, i) : take(vm, pp, 1, i);
        if (!err)
            err = is_ping ? take(vm, pp, 2, i) : give(vm, pp, 2, i);
    }
    if (is_ping && two)
        pp->t1 = bench_mono_ns();
    if (err)
        pp->err = err;
}

static void ping(stvm_vm *vm, void *arg) { party(vm, arg, true); }
static void pong(stvm_vm *vm, void *arg) { party(vm, arg, false); }

static int make_channels(stvm_vm *vm, pingpong *pp)
{
    if (pp->channel >= MICRO_MONITOR)
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
    bool alone = channel == MICRO_ENTER_EXIT;   /* one process: a round is one pair */
    pingpong pp = {.channel = channel, .warmup = 10000,
                   .rounds = alone ? handoffs : handoffs / 2 > 0 ? handoffs / 2 : 1};
    if ((err = make_channels(vm, &pp)) ||
        (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, alone ? "enter-exit" : "ping",
                          ping, &pp, NULL)) ||
        (!alone &&
         (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "pong", pong, &pp, NULL)))) {
        snprintf(why, whysize, "setting up the ping-pong: %s", stvm_err_name(err));
        stvm_vm_free(vm);
        return err;
    }
    if ((err = bench_trace_begin(trace, vm, why, whysize))) {
        stvm_vm_free(vm);
        return err;
    }
    stvm_stats st;
    stvm_vm_reset_stats(vm);
    err = stvm_run(vm);
    stvm_vm_get_stats(vm, &st);
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
    if (!alone && st.context_switches < want) {
        snprintf(why, whysize,
                 "ping-pong made %llu context switches, expected at least %llu",
                 (unsigned long long)st.context_switches, (unsigned long long)want);
        return STVM_ESTATE;
    }
    *ns = (double)(pp.t1 - pp.t0) / (double)((alone ? 1 : 2) * pp.rounds);
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

/* One thread of the pair: ping posts s1 and waits on s2 (and keeps the time), pong
 * the other way round. */
static void pt_rounds(pt_pair *p, bool is_ping)
{
    if (bench_pin_cpu(p->cpu) != 0)
        p->pin_err = 1;
    for (long long i = 0; i < p->warmup + p->rounds; i++) {
        if (is_ping && i == p->warmup)
            p->t0 = bench_mono_ns();
        if (is_ping)
            sem_post(&p->s1);
        sem_wait_intr(is_ping ? &p->s2 : &p->s1);
        if (!is_ping)
            sem_post(&p->s2);
    }
    if (is_ping)
        p->t1 = bench_mono_ns();
}

static void *pt_ping(void *arg)
{
    pt_rounds(arg, true);
    return NULL;
}

static void *pt_pong(void *arg)
{
    pt_rounds(arg, false);
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
