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
    int64_t t0, t1, c0, c1;     /* the timed rounds' wall and CPU clocks */
    int err;
} pingpong;

/* The one-site ping-pongs. Each party runs rounds { take from its own channel; give on
 * the other's }, ping (which gave first, before its rounds) on channel 1 and pong on 0,
 * so that both block at the same call site, as every process blocks at the scheduler's
 * one switch. Both parties run these single copies (noinline: GCC otherwise made a copy
 * of the loop per party, and the second call site cost about 8 ns a hand-off, as
 * handoff-two-sites shows), and a loop holds nothing but the hand-off (a dispatch on
 * the channel at every call cost a few ns more). */
static __attribute__((noinline)) int semaphore_rounds(stvm_vm *vm, stvm_semaphore *mine,
                                                      stvm_semaphore *other, long long n)
{
    int err = STVM_OK;
    for (long long i = 0; !err && i < n; i++) {
        err = stvm_semaphore_wait(vm, mine);
        if (!err)
            err = stvm_semaphore_signal(vm, other);
    }
    return err;
}

/* The items count the hand-offs: pong's round i takes 2i and gives 2i + 1, ping's takes
 * 2i + 1 and gives 2i + 2 (offset 0 and 1); each is checked on arrival. */
static __attribute__((noinline)) int queue_rounds(stvm_vm *vm, stvm_queue *mine,
                                                  stvm_queue *other, long long from,
                                                  long long n, long long offset)
{
    int err = STVM_OK;
    for (long long i = from; !err && i < from + n; i++) {
        void *item = NULL;
        err = stvm_queue_take(vm, mine, &item);
        if (!err && (intptr_t)item != 2 * i + offset)
            err = STVM_ESTATE;
        if (!err)
            err = stvm_queue_put(vm, other, (void *)(intptr_t)(2 * i + offset + 1));
    }
    return err;
}

static int rounds(stvm_vm *vm, pingpong *pp, bool is_ping, long long from, long long n)
{
    if (pp->channel == MICRO_QUEUE)
        return queue_rounds(vm, pp->q[is_ping], pp->q[!is_ping], from, n, is_ping);
    return semaphore_rounds(vm, pp->s[is_ping], pp->s[!is_ping], n);
}

/* One party of a one-site ping-pong. Ping gives first and keeps the time; its last
 * give stays on the other channel (an excess signal, an item) that nobody takes. */
static int one_site_party(stvm_vm *vm, pingpong *pp, bool is_ping)
{
    if (!is_ping)
        return rounds(vm, pp, false, 0, pp->warmup + pp->rounds);
    int err = pp->channel == MICRO_QUEUE ? stvm_queue_put(vm, pp->q[0], (void *)(intptr_t)0)
                                         : stvm_semaphore_signal(vm, pp->s[0]);
    if (!err)
        err = rounds(vm, pp, true, 0, pp->warmup);
    pp->c0 = bench_cpu_ns();
    pp->t0 = bench_mono_ns();
    if (!err)
        err = rounds(vm, pp, true, pp->warmup, pp->rounds);
    pp->t1 = bench_mono_ns();
    pp->c1 = bench_cpu_ns();
    return err;
}

/* Round i of one party of the other cases. Two sites: ping signals first and then
 * waits, pong waits first, so each switch returns to a call site the processor's
 * return predictor did not expect (the cost of switching between processes blocked in
 * different code). On the monitor each signals and waits; alone, an enter and an exit. */
static int round_of(stvm_vm *vm, pingpong *pp, bool is_ping)
{
    int err;
    switch (pp->channel) {
    case MICRO_ENTER_EXIT:
        err = stvm_monitor_enter(vm, pp->m);
        return err ? err : stvm_monitor_exit(vm, pp->m);
    case MICRO_MONITOR:
        err = stvm_monitor_signal(vm, pp->m);
        return err < 0 ? err : stvm_monitor_wait(vm, pp->m);
    default:   /* MICRO_SEMAPHORE_TWO_SITES */
        err = is_ping ? stvm_semaphore_signal(vm, pp->s[0]) : stvm_semaphore_wait(vm, pp->s[0]);
        if (err)
            return err;
        return is_ping ? stvm_semaphore_wait(vm, pp->s[1]) : stvm_semaphore_signal(vm, pp->s[1]);
    }
}

/* One party; ping keeps the time. The monitor is held throughout, and the last signal,
 * after the loop, lets the partner out of its last wait. */
static void party(stvm_vm *vm, pingpong *pp, bool is_ping)
{
    if (pp->channel == MICRO_SEMAPHORE || pp->channel == MICRO_QUEUE) {
        int err = one_site_party(vm, pp, is_ping);
        if (err)
            pp->err = err;
        return;
    }
    bool held = pp->channel == MICRO_MONITOR;
    int err = held ? stvm_monitor_enter(vm, pp->m) : STVM_OK;
    for (long long i = 0; !err && i < pp->warmup + pp->rounds; i++) {
        if (is_ping && i == pp->warmup) {
            pp->c0 = bench_cpu_ns();
            pp->t0 = bench_mono_ns();
        }
        err = round_of(vm, pp, is_ping);
    }
    if (is_ping) {
        pp->t1 = bench_mono_ns();
        pp->c1 = bench_cpu_ns();
    }
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
                  double *ns, double *cpu_ns, char *why, size_t whysize)
{
    bool alone = channel == MICRO_ENTER_EXIT;   /* one process: a round is one pair */
    pingpong pp = {.channel = channel, .warmup = 10000,
                   .rounds = alone ? handoffs : handoffs / 2 > 0 ? handoffs / 2 : 1};
    stvm_vm *vm;
    stvm_stats st;
    int err = stvm_vm_create(NULL, &vm);
    if (err) {
        snprintf(why, whysize, "stvm_vm_create: %s", stvm_err_name(err));
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
    double n = (double)((alone ? 1 : 2) * pp.rounds);
    *ns = (double)(pp.t1 - pp.t0) / n;
    if (cpu_ns)
        *cpu_ns = (double)(pp.c1 - pp.c0) / n;
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
