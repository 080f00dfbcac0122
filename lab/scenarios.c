/*
 * The lab's scenarios: each main runs as "main" at priority 40 on a fresh VM with the
 * simulated clock, and sets up the few processes its rule needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lab.h"

/* A process that does nothing but exist: its place in the timeline is the lesson. */
static void nothing(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
}

/* ---- strict priority preemption ----------------------------------------------------- */

static void priority_main(stvm_vm *vm, void *arg)
{
    lab_spawn(vm, 50, "higher", nothing, NULL);   /* runs before this call returns */
    lab_spawn(vm, 40, "equal", nothing, NULL);    /* waits until main leaves the CPU */
    lab_spawn(vm, 30, "lower", nothing, NULL);
}

/* ---- preemption_yields --------------------------------------------------------------- */

typedef struct yields_state {
    stvm_semaphore *wake;
} yields_state;

static void urgent(stvm_vm *vm, void *arg)
{
    yields_state *st = arg;
    lab_check(stvm_semaphore_wait(vm, st->wake), "urgent waits");
}

static void yields_main(stvm_vm *vm, void *arg)
{
    static yields_state st;
    lab_check(stvm_semaphore_new(vm, &st.wake), "a semaphore");
    lab_spawn(vm, 60, "urgent", urgent, &st);   /* runs at once and waits */
    lab_spawn(vm, 40, "peer", nothing, NULL);   /* queued behind main */
    lab_check(stvm_semaphore_signal(vm, st.wake), "main signals");   /* urgent preempts main */
    lab_check(stvm_semaphore_free(vm, st.wake), "freeing the semaphore");
}

static void yields_on(stvm_config *cfg)
{
    cfg->preemption_yields = true;
}

static void yields_off(stvm_config *cfg)
{
    cfg->preemption_yields = false;
}

/* ---- a semaphore's excess signals ---------------------------------------------------- */

static void taker(stvm_vm *vm, void *arg)
{
    stvm_semaphore *s = arg;
    for (int i = 0; i < 3; i++)
        lab_check(stvm_semaphore_wait(vm, s), "taker waits");
}

static void excess_main(stvm_vm *vm, void *arg)
{
    stvm_semaphore *s;
    lab_check(stvm_semaphore_new(vm, &s), "a semaphore");
    lab_check(stvm_semaphore_signal(vm, s), "signal 1");   /* nobody waits: counted */
    lab_check(stvm_semaphore_signal(vm, s), "signal 2");
    lab_spawn(vm, 50, "taker", taker, s);   /* takes two, then blocks on the third */
    lab_check(stvm_semaphore_signal(vm, s), "signal 3");   /* wakes it: preempts main */
    lab_check(stvm_semaphore_free(vm, s), "freeing the semaphore");
}

/* ---- a mutex's FIFO hand-off ----------------------------------------------------------- */

static void enter_exit(stvm_vm *vm, void *arg)
{
    lab_check(stvm_mutex_enter(vm, arg), "enter");
    lab_check(stvm_mutex_exit(vm, arg), "exit");
}

static void handoff_main(stvm_vm *vm, void *arg)
{
    static stvm_mutex *m;
    lab_check(stvm_mutex_new(vm, &m), "a mutex");
    lab_check(stvm_mutex_enter(vm, m), "main enters");
    lab_spawn(vm, 40, "first", enter_exit, m);
    lab_spawn(vm, 40, "second", enter_exit, m);
    lab_check(stvm_yield(vm), "main yields");   /* first, then second, wait on m */
    lab_check(stvm_mutex_exit(vm, m), "main exits");   /* first owns it before it runs */
    lab_spawn(vm, 60, "late", enter_exit, m);   /* cannot barge in: waits behind second */
}

/* ---- priority inversion ------------------------------------------------------------------ */

static stvm_mutex *inversion_mutex;

static void low(stvm_vm *vm, void *arg)
{
    lab_check(stvm_mutex_enter(vm, inversion_mutex), "low enters");
    lab_check(stvm_delay_wait_ms(vm, 2), "low reads a disk");   /* holding the mutex */
    lab_check(stvm_mutex_exit(vm, inversion_mutex), "low exits");
}

static void high(stvm_vm *vm, void *arg)
{
    lab_check(stvm_delay_wait_ms(vm, 1), "high sleeps");
    lab_check(stvm_mutex_enter(vm, inversion_mutex), "high enters");
    lab_check(stvm_mutex_exit(vm, inversion_mutex), "high exits");
}

static void middle(stvm_vm *vm, void *arg)
{
    lab_check(stvm_delay_wait_ms(vm, 2), "middle sleeps");
    for (int i = 0; i < 3; i++)   /* long work: nothing of higher priority is runnable */
        lab_check(stvm_checkpoint(vm), "middle works");
}

static void inversion_main(stvm_vm *vm, void *arg)
{
    lab_check(stvm_mutex_new(vm, &inversion_mutex), "a mutex");
    lab_spawn(vm, 30, "low", low, NULL);
    lab_spawn(vm, 50, "high", high, NULL);
    lab_spawn(vm, 40, "middle", middle, NULL);
}

/* ---- the Delay's round trip ------------------------------------------------------------- */

static void round_trip_main(stvm_vm *vm, void *arg)
{
    lab_check(stvm_delay_wait_ms(vm, 5), "main waits 5 ms");
}

/* ---- the millisecond clock wrapping ------------------------------------------------------ */

static void sleep_ms(stvm_vm *vm, void *arg)
{
    lab_check(stvm_delay_wait_ms(vm, (int64_t)(intptr_t)arg), "a delay");
}

static void wrap_main(stvm_vm *vm, void *arg)
{
    lab_spawn(vm, 40, "two-ms", sleep_ms, (void *)(intptr_t)2);
    lab_spawn(vm, 40, "six-ms", sleep_ms, (void *)(intptr_t)6);
}

static void wrap_config(stvm_config *cfg)
{
    cfg->delay_clock = STVM_DELAY_CLOCK_MS;
    cfg->ms_clock_start = 0x1FFFFFFF - 3;   /* wraps 4 ms after the start */
}

/* ---- the DelayBenchmark in slow motion ----------------------------------------------------- */

#define BENCH_N 5

static void bench_sleeper(stvm_vm *vm, void *arg)
{
    int i = (int)(intptr_t)arg;
    for (int round = 0; round < 2; round++)
        lab_check(stvm_delay_wait_us(vm, 1000 * (i + 1)), "a delay");
}

static void bench_main(stvm_vm *vm, void *arg)
{
    static const char *const names[BENCH_N] = {"sleeper1", "sleeper2", "sleeper3", "sleeper4",
                                               "sleeper5"};
    for (int i = 0; i < BENCH_N; i++)
        lab_spawn(vm, 40, names[i], bench_sleeper, (void *)(intptr_t)i);
}

static void bench_61(stvm_config *cfg)
{
    cfg->smallint_bits = 61;
}

static void bench_31(stvm_config *cfg)
{
    cfg->smallint_bits = 31;
}

/* ---- a ZnClient request whose first read blocks, beside one whose first read does not -- */

#define NGINX_US 40           /* nginx's time to answer, on its own CPU */
#define SUBSCRIBER_US 60      /* a logging subscriber's work on the request-written event */
#define ZN_TIMEOUT_MS 30000   /* ZnClient's socket stream timeout */
#define ZN_CLIENT_FD 100      /* the lowest free descriptor from here is the client's */

/* The connection: a socketpair, so that bytes written are readable at once and the run
 * does not depend on how a loopback TCP stack schedules its work. */
typedef struct zn_wire {
    int client, nginx;
} zn_wire;

static const char zn_request[] = "GET /static HTTP/1.1\r\nHost: localhost\r\n\r\n";
static const char zn_answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/* nginx, outside the VM: it takes the request and writes the answer. The VM learns of
 * it only when it looks at the client's descriptor. */
static void nginx_answers(stvm_vm *vm, void *arg)
{
    zn_wire *w = arg;
    char buf[sizeof zn_request];
    if (read(w->nginx, buf, sizeof buf) <= 0 ||
        write(w->nginx, zn_answer, sizeof zn_answer - 1) != (ssize_t)(sizeof zn_answer - 1))
        lab_check(STVM_ESYS, "nginx's answer");
}

/* ZnClient>>executeRequestResponse reduced to its timing: one flush of the request, the
 * request-written log event (with a subscriber: its work), Zodiac's non-blocking first
 * read and, when that finds nothing, Socket>>waitForDataFor: with the 30 s timeout. */
static void zn_get(stvm_vm *vm, zn_wire *w, uint64_t subscriber_us)
{
    if (write(w->client, zn_request, sizeof zn_request - 1) != (ssize_t)(sizeof zn_request - 1))
        lab_check(STVM_ESYS, "sending the request");
    lab_check(stvm_sim_at(vm, stvm_vm_now_us(vm) + NGINX_US, nginx_answers, w), "nginx");
    if (subscriber_us)
        lab_check(stvm_work_us(vm, subscriber_us), "the subscriber");
    char buf[sizeof zn_answer];
    ssize_t n = recv(w->client, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EAGAIN) {
        lab_check(stvm_fd_wait(vm, w->client, STVM_IO_READ, ZN_TIMEOUT_MS), "waitForDataFor:");
        n = recv(w->client, buf, sizeof buf, MSG_DONTWAIT);
    }
    if (n <= 0)
        lab_check(STVM_ESYS, "reading the answer");
}

static void zn_main(stvm_vm *vm, void *arg)
{
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
        lab_check(STVM_ESYS, "socketpair");
    /* The timeline names the client's descriptor: a fixed number keeps it the same
     * whatever descriptors the caller left open. */
    zn_wire w = {.client = fcntl(fds[0], F_DUPFD_CLOEXEC, ZN_CLIENT_FD), .nginx = fds[1]};
    if (w.client < 0)
        lab_check(STVM_ESYS, "placing the client's descriptor");
    close(fds[0]);
    zn_get(vm, &w, 0);               /* logging off */
    zn_get(vm, &w, SUBSCRIBER_US);   /* logging on, with a subscriber */
    close(w.client);
    close(w.nginx);
}

/* The VM before May 2017 with Pharo 5's image: a blind 1 ms quantum. */
static void zn_legacy(stvm_config *cfg)
{
    cfg->idle_mode = STVM_IDLE_LEGACY;
    cfg->idle_relinquish_us = STVM_RELINQUISH_PHARO5_US;
}

/* ---- the table ------------------------------------------------------------------------------ */

const lab_scenario lab_scenarios[] = {
    {"priority_preemption", "a higher priority preempts at once, an equal one does not",
     "main (40) spawns higher (50), equal (40) and lower (30), then finishes",
     "in which order do main, higher, equal and lower run?",
     "only a strictly higher priority preempts (runq.c, stvm__resume: p->priority <= "
     "a->priority queues p); equal and lower wait for main to leave the processor",
     NULL, priority_main},
    {"preemption_yields_on", "a preempted process goes to the back of its queue",
     "urgent (60) waits on a semaphore; main (40) queues peer (40), then signals it",
     "after urgent finishes, does main or peer run first?",
     "preemption_yields = true (Pharo's default): the preempted main goes to the back of "
     "its run queue (stvm__resume: runq_put(a, cfg.preemption_yields)), so peer runs first",
     yields_on, yields_main},
    {"preemption_yields_off", "a preempted process stays at the front of its queue",
     "as preemption_yields_on, with preemption_yields = false",
     "after urgent finishes, does main or peer run first?",
     "preemption_yields = false: the preempted main goes back to the front of its queue "
     "(stvm__resume: runq_put(a, false)) and continues before peer",
     yields_off, yields_main},
    {"semaphore_excess", "signals with nobody waiting are counted, not lost",
     "main signals a semaphore twice, spawns taker (50) which waits three times, "
     "then signals once more",
     "how many of taker's three waits block?",
     "a signal with no waiter increments excess_signals (semaphore.c, signal_take); a wait "
     "takes one without blocking (stvm__sem_try); only the third wait blocks",
     NULL, excess_main},
    {"mutex_handoff", "a mutex goes to its first waiter on exit: nobody barges in",
     "main (40) owns a mutex; first (40) and second (40) wait on it; main exits, then "
     "spawns late (60), which enters it",
     "does late, with the highest priority, get the mutex before second?",
     "exit hands the mutex to the first waiter before it runs (mutex.c, hand_off: "
     "add_owned(next, m)); late finds it owned and queues FIFO behind second",
     NULL, handoff_main},
    {"priority_inversion", "a middle priority delays a high one waiting on a low one's mutex",
     "low (30) enters a mutex and sleeps 2 ms; high (50) sleeps 1 ms then enters it; "
     "middle (40) sleeps 2 ms then works",
     "when does high get the mutex: before or after middle's work?",
     "Pharo has no priority inheritance: high waits on low (mutex.c, stvm__mutex_enter), "
     "and middle outranks low (runq.c, stvm__runq_highest), so high waits for middle too",
     NULL, inversion_main},
    {"delay_round_trip", "a Delay's trip through the timing process and the VM's timer",
     "main waits on a 5 ms Delay; nothing else runs",
     "how many processes run, and how often, for one Delay?",
     "Delay>>wait hands the Delay to the timing process (80) by a signal that preempts the "
     "waiter (delay_scheduler.c, stvm__delay_request); it arms the one-shot timer, the idle "
     "process jumps the clock to it, the fire wakes the timing process, which signals the "
     "Delay's semaphore",
     NULL, round_trip_main},
    {"ms_clock_wrap", "delays keep their order when the millisecond clock wraps",
     "the millisecond clock starts 4 ms before it wraps; two-ms and six-ms wait 2 and 6 ms",
     "does six-ms, whose resumption time lies past the wrap, wake on time?",
     "when a clock read is below the last one, every pending resumption time moves back "
     "one period (delay_scheduler.c, rebase_after_wrap), so six-ms wakes 6 ms after it asked",
     wrap_config, wrap_main},
    {"delay_benchmark_61", "the DelayBenchmark, N = 5, 61-bit SmallIntegers",
     "five sleepers each wait twice on Delays of 1..5 ms; SmallIntegers of 61 bits",
     "which timestamps are boxed LargePositiveIntegers?",
     "on a 61-bit VM the microsecond clock (about 2^52) is a SmallInteger: nothing is "
     "boxed (vm/integer.h, stvm__si_fits)",
     bench_61, bench_main},
    {"delay_benchmark_31", "the DelayBenchmark, N = 5, 31-bit SmallIntegers (boxed)",
     "as delay_benchmark_61 with SmallIntegers of 31 bits",
     "which timestamps are boxed LargePositiveIntegers?",
     "on a 31-bit VM every microsecond timestamp is boxed (marked BOXED): the clock read, "
     "now + duration and each comparison allocate or follow a LargePositiveInteger",
     bench_31, bench_main},
    {"zn_first_read_legacy", "ZnClient: more work before the read, a faster request (Pharo 6)",
     "main, a ZnClient, sends two GETs to nginx, which answers 40 us after a request comes; "
     "the first request reads at once, the second after a logging subscriber's 60 us of "
     "work; the VM idles as before May 2017 (legacy: sleep 1 ms without looking at sockets)",
     "which request takes longer, and by how much?",
     "the first read of the first request finds nothing and waits; the idle process sleeps "
     "the whole 1 ms blind (relinquish.c, relinquish_simulated: a legacy jump), so the "
     "answer that came at 40 us is seen at 1 ms; the second request's subscriber works past "
     "the answer's arrival, its first read finds the answer and nothing sleeps: 60 us",
     zn_legacy, zn_main},
    {"zn_first_read_poll", "ZnClient: the same requests on today's VM (epoll)",
     "as zn_first_read_legacy, with the idle process waiting in epoll (the default)",
     "which request takes longer now?",
     "the idle process waits until the descriptor is ready (relinquish.c, "
     "relinquish_simulated: the jump ends at the answer), so the blocked first read costs "
     "nothing extra: 40 us against the subscriber's 60",
     NULL, zn_main},
    {0},
};
