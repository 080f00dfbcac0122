/*
 * stvm-bench micro: the hand-offs of micro.h's channels between green processes of equal
 * priority, and their reference, a sem_t ping-pong between two OS threads.
 */
#include "micro.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

/* ---- on green processes ------------------------------------------------------------ */

typedef struct pingpong {
    micro_channel channel;
    stvm_semaphore *s[2];
    stvm_queue *q[2];
    stvm_monitor *m;
    long long warmup, rounds;   /* one round = two hand-offs (one enter + exit alone) */
    int64_t t0, t1;
    int err;
} pingpong;

/* One half of a hand-off on channel 0 or 1: giving, a signal or a put; taking, a wait
 * or a take (the item is the round's number, checked on arrival). */
static int hand(stvm_vm *vm, pingpong *pp, int ch, long long i, bool giving)
{
    void *item = NULL;
    if (pp->channel != MICRO_QUEUE)
        return giving ? stvm_semaphore_signal(vm, pp->s[ch]) : stvm_semaphore_wait(vm, pp->s[ch]);
    if (giving)
        return stvm_queue_put(vm, pp->q[ch], (void *)(intptr_t)i);
    int err = stvm_queue_take(vm, pp->q[ch], &item);
    return err ? err : (intptr_t)item == i ? STVM_OK : STVM_ESTATE;
}

/* Round i of one party: ping takes on channel 1 and gives on 0, pong takes on 0 and
 * gives on 1, so both block at the same call site, as every process blocks at the
 * scheduler's one switch; ping gave the first item before its loop, and skips the give
 * of its last round, which nobody would take. Two sites (the semaphore only): ping
 * signals first and then waits, pong waits first, so each switch returns to a call site
 * the processor's return predictor did not expect (the cost of switching between
 * processes blocked in different code). On the monitor each signals and waits; alone,
 * an enter and an exit. */
static int round_of(stvm_vm *vm, pingpong *pp, bool is_ping, long long i)
{
    int err;
    switch (pp->channel) {
    case MICRO_ENTER_EXIT:
        err = stvm_monitor_enter(vm, pp->m);
        return err ? err : stvm_monitor_exit(vm, pp->m);
    case MICRO_MONITOR:
        err = stvm_monitor_signal(vm, pp->m);
        return err < 0 ? err : stvm_monitor_wait(vm, pp->m);
    case MICRO_SEMAPHORE_TWO_SITES:
        err = hand(vm, pp, 0, i, is_ping);
        return err ? err : hand(vm, pp, 1, i, !is_ping);
    default:
        err = hand(vm, pp, is_ping, i, false);
        if (err || (is_ping && i + 1 == pp->warmup + pp->rounds))
            return err;
        return hand(vm, pp, !is_ping, is_ping ? i + 1 : i, true);
    }
}

/* One party; ping keeps the time. The monitor is held throughout, and the last signal,
 * after the loop, lets the partner out of its last wait. */
static void party(stvm_vm *vm, pingpong *pp, bool is_ping)
{
    bool held = pp->channel == MICRO_MONITOR;
    bool one_site = pp->channel == MICRO_SEMAPHORE || pp->channel == MICRO_QUEUE;
    int err = held ? stvm_monitor_enter(vm, pp->m)
              : one_site && is_ping ? hand(vm, pp, 0, 0, true)
                                    : STVM_OK;
    for (long long i = 0; !err && i < pp->warmup + pp->rounds; i++) {
        if (is_ping && i == pp->warmup)
            pp->t0 = bench_mono_ns();
        err = round_of(vm, pp, is_ping, i);
    }
    if (is_ping)
        pp->t1 = bench_mono_ns();
    int n = held && !err ? stvm_monitor_signal(vm, pp->m) : 0;
    err = err ? err : n < 0 ? n : held ? stvm_monitor_exit(vm, pp->m) : STVM_OK;
    if (err)
        pp->err = err;
}

static void ping(stvm_vm *vm, void *arg) { party(vm, arg, true); }
static void pong(stvm_vm *vm, void *arg) { party(vm, arg, false); }

static int make_channels(stvm_vm *vm, pingpong *pp)
{
    int err = STVM_OK;
    if (pp->channel >= MICRO_MONITOR)
        return stvm_monitor_new(vm, &pp->m);
    for (int ch = 0; !err && ch < 2; ch++)
        err = pp->channel != MICRO_QUEUE ? stvm_semaphore_new(vm, &pp->s[ch])
                                         : stvm_queue_new(vm, 0, &pp->q[ch]);
    return err;
}

int micro_handoff(micro_channel channel, long long handoffs, const bench_trace *trace,
                  double *ns, char *why, size_t whysize)
{
    bool alone = channel == MICRO_ENTER_EXIT;   /* one process: a round is one pair */
    pingpong pp = {.channel = channel, .warmup = 10000,
                   .rounds = alone ? handoffs : handoffs / 2 > 0 ? handoffs / 2 : 1};
    stvm_vm *vm;
    stvm_stats st;
    int err = stvm_vm_new(&vm, NULL);
    if (err) {
        snprintf(why, whysize, "stvm_vm_new: %s", stvm_err_name(err));
        return err;
    }
    if ((err = make_channels(vm, &pp)) ||
        (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, alone ? "enter-exit" : "ping",
                          ping, &pp, NULL)) ||
        (!alone &&
         (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "pong", pong, &pp, NULL)))) {
        snprintf(why, whysize, "setting up the ping-pong: %s", stvm_err_name(err));
    } else if (!(err = bench_trace_begin(trace, vm, why, whysize))) {
        stvm_vm_reset_stats(vm);
        err = stvm_run(vm);
        stvm_vm_get_stats(vm, &st);
        if ((err = err ? err : pp.err))
            snprintf(why, whysize, "ping-pong: %s", stvm_err_name(err));
        else
            err = bench_trace_end(trace, vm, why, whysize);
    }
    stvm_vm_free(vm);
    if (err)
        return err;
    /* Each round must have cost two switches, or the figure means something else. */
    uint64_t want = 2 * (uint64_t)(pp.warmup + pp.rounds);
    if (!alone && st.context_switches < want) {
        snprintf(why, whysize, "ping-pong made %llu context switches, expected at least %llu",
                 (unsigned long long)st.context_switches, (unsigned long long)want);
        return STVM_ESTATE;
    }
    *ns = (double)(pp.t1 - pp.t0) / (double)((alone ? 1 : 2) * pp.rounds);
    return STVM_OK;
}

/* ---- the sem_t reference ------------------------------------------------------------ */

typedef struct pt_pair {
    sem_t s1, s2;
    long long warmup, rounds;
    int cpu;
    bench_hist *h;
    int64_t t0, t1;
    int pin_err;
} pt_pair;

static void sem_wait_intr(sem_t *s)
{
    while (sem_wait(s) != 0 && errno == EINTR) {
    }
}

/* One thread of the pair: ping posts s1 and waits on s2 (and keeps the times), pong
 * the other way round. */
static void pt_rounds(pt_pair *p, bool is_ping)
{
    if (p->cpu >= 0 && bench_pin_cpu(p->cpu) != 0)
        p->pin_err = 1;
    for (long long i = 0; i < p->warmup + p->rounds; i++) {
        if (is_ping && i == p->warmup)
            p->t0 = bench_mono_ns();
        int64_t t = is_ping && p->h ? bench_mono_ns() : 0;
        if (is_ping)
            sem_post(&p->s1);
        sem_wait_intr(is_ping ? &p->s2 : &p->s1);
        if (!is_ping)
            sem_post(&p->s2);
        if (t && i >= p->warmup)
            bench_hist_record(p->h, (uint64_t)(bench_mono_ns() - t));
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

int micro_sem_pingpong(long long warmup, long long rounds, int cpu, bench_hist *h, double *ns)
{
    pt_pair p = {.warmup = warmup, .rounds = rounds, .cpu = cpu, .h = h};
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
