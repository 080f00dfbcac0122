/*
 * semantics_tour.c -- observe stvm's scheduling semantics through <stvm.h> alone and
 * check each observation against the documented behaviour (docs/scheduler.md).
 *
 * Every section prints what it saw. Any mismatch prints "FAIL: ..." on stderr and exits
 * with status 1; `make check` runs this program, so it must stay deterministic: the
 * timing checks use the simulated clock, except one real-clock delay with a wide bound.
 */
#define _POSIX_C_SOURCE 200809L   /* pthreads, clock_gettime under -std=c11 */

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stvm.h>

/* ---- checking helpers --------------------------------------------------------------- */

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("semantics_tour: FAIL: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

#define CHECK(cond, ...)          \
    do {                          \
        if (!(cond))              \
            fail(__VA_ARGS__);    \
    } while (0)

/* A call that must succeed; on failure name the call and the error. */
#define MUST(call)                                                                   \
    do {                                                                             \
        int must_err_ = (call);                                                      \
        if (must_err_ != STVM_OK)                                                    \
            fail("line %d: %s returned %s", __LINE__, #call, stvm_err_name(must_err_)); \
    } while (0)

/* Who ran when: each process appends a word. One trace per scenario. */
static char trace[512];

static void note(const char *word)
{
    size_t n = strlen(trace);
    snprintf(trace + n, sizeof trace - n, "%s%s", n ? " " : "", word);
}

static void expect_trace(const char *what, const char *want)
{
    CHECK(strcmp(trace, want) == 0, "%s: trace \"%s\", expected \"%s\"", what, trace, want);
    printf("  %-44s %s\n", what, trace);
    trace[0] = 0;
}

static stvm_vm *make_vm(bool preemption_yields, int clock)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.preemption_yields = preemption_yields;
    cfg.clock = clock;
    stvm_vm *vm = NULL;
    MUST(stvm_vm_create(&cfg, &vm));
    return vm;
}

/* Every scenario ends here: the scheduler's own consistency check, then release. */
static void done_vm(stvm_vm *vm)
{
    char why[256];
    CHECK(stvm_vm_check_invariants(vm, why, sizeof why) == STVM_OK, "invariants: %s", why);
    stvm_vm_free(vm);
}

/* ---- 1. preemption and preemption_yields ------------------------------------------- */

static void high_waiter(stvm_vm *vm, void *sem)
{
    MUST(stvm_semaphore_wait(vm, sem));
    note("H");
}

static void worker_a(stvm_vm *vm, void *sem)
{
    note("A1");
    MUST(stvm_semaphore_signal(vm, sem));   /* H (50) is strictly higher: it runs now */
    note("A2");
}

static void worker_b(stvm_vm *vm, void *arg)
{
    (void)vm;
    (void)arg;
    note("B");
}

/* A and B share priority 30; A wakes H at 50. Where A goes when H preempts it (back or
 * front of its queue) decides whether B runs before A's second half. */
static void preemption(bool yields)
{
    stvm_vm *vm = make_vm(yields, STVM_CLOCK_REAL);
    stvm_semaphore *sem;
    MUST(stvm_semaphore_new(vm, &sem));
    MUST(stvm_spawn(vm, 50, "H", high_waiter, sem, NULL));
    MUST(stvm_spawn(vm, 30, "A", worker_a, sem, NULL));
    MUST(stvm_spawn(vm, 30, "B", worker_b, NULL, NULL));
    MUST(stvm_run(vm));
    expect_trace(yields ? "preemption_yields=true (A to the back):"
                        : "preemption_yields=false (A to the front):",
                 yields ? "A1 H B A2" : "A1 H A2 B");
    done_vm(vm);
}

/* ---- 2. FIFO within a priority ------------------------------------------------------ */

static const char *const digits[] = {"0", "1", "2", "3", "4"};

static void say_name(stvm_vm *vm, void *word)
{
    (void)vm;
    note(word);
}

static void sem_waiter(stvm_vm *vm, void *sem)
{
    stvm_process_info info;
    MUST(stvm_process_get_info(vm, stvm_vm_active_process(vm), &info));
    MUST(stvm_semaphore_wait(vm, sem));
    note(info.name);
}

/* Priority 20 spawns waiters of higher priorities one by one (each runs at once, up to
 * its wait), then signals: the waiting list is FIFO by arrival, not sorted by priority. */
static void sem_controller(stvm_vm *vm, void *sem)
{
    MUST(stvm_spawn(vm, 30, "w30", sem_waiter, sem, NULL));
    MUST(stvm_spawn(vm, 40, "w40", sem_waiter, sem, NULL));
    MUST(stvm_spawn(vm, 35, "w35", sem_waiter, sem, NULL));
    for (int i = 0; i < 3; i++)
        MUST(stvm_semaphore_signal(vm, sem));   /* each waiter preempts us */
}

static void yielder(stvm_vm *vm, void *word)
{
    for (int i = 0; i < 3; i++) {
        note(word);
        MUST(stvm_yield(vm));
    }
}

static void lone_yielder(stvm_vm *vm, void *arg)
{
    (void)arg;
    stvm_stats before, after;
    MUST(stvm_vm_get_stats(vm, &before));
    MUST(stvm_yield(vm));
    MUST(stvm_vm_get_stats(vm, &after));
    CHECK(after.context_switches == before.context_switches,
          "a yield with no peer switched (%llu switches)",
          (unsigned long long)(after.context_switches - before.context_switches));
}

static void fifo(void)
{
    stvm_vm *vm = make_vm(true, STVM_CLOCK_REAL);
    for (int i = 0; i < 5; i++)
        MUST(stvm_spawn(vm, 30, digits[i], say_name, (void *)digits[i], NULL));
    MUST(stvm_run(vm));
    expect_trace("run queue, five spawns at one priority:", "0 1 2 3 4");

    stvm_semaphore *sem;
    MUST(stvm_semaphore_new(vm, &sem));
    MUST(stvm_spawn(vm, 20, "controller", sem_controller, sem, NULL));
    MUST(stvm_run(vm));
    expect_trace("semaphore, waiters arrive 30, 40, 35:", "w30 w40 w35");

    MUST(stvm_spawn(vm, 30, "P", yielder, "P", NULL));
    MUST(stvm_spawn(vm, 30, "Q", yielder, "Q", NULL));
    MUST(stvm_run(vm));
    expect_trace("yield round robin:", "P Q P Q P Q");

    MUST(stvm_spawn(vm, 30, "alone", lone_yielder, NULL, NULL));
    MUST(stvm_run(vm));
    printf("  %-44s no switch\n", "yield with no peer:");
    done_vm(vm);
}

/* ---- 3. excess signals -------------------------------------------------------------- */

static void excess_consumer(stvm_vm *vm, void *sem)
{
    for (int i = 0; i < 3; i++)
        MUST(stvm_semaphore_wait(vm, sem));   /* excess signals: never blocks */
    note("took3");
    MUST(stvm_semaphore_wait(vm, sem));       /* none left: blocks */
    note("woken");
}

static void excess_signaller(stvm_vm *vm, void *sem)
{
    note("signal");
    MUST(stvm_semaphore_signal(vm, sem));
}

static void excess(void)
{
    stvm_vm *vm = make_vm(true, STVM_CLOCK_REAL);
    stvm_semaphore *sem;
    MUST(stvm_semaphore_new(vm, &sem));
    for (int i = 0; i < 3; i++)
        MUST(stvm_semaphore_signal(vm, sem));  /* nobody waits yet: counted */
    CHECK(stvm_semaphore_excess(vm, sem) == 3, "excess %lld after 3 signals, expected 3",
          (long long)stvm_semaphore_excess(vm, sem));
    MUST(stvm_spawn(vm, 30, "consumer", excess_consumer, sem, NULL));
    MUST(stvm_spawn(vm, 20, "signaller", excess_signaller, sem, NULL));
    MUST(stvm_run(vm));
    CHECK(stvm_semaphore_excess(vm, sem) == 0, "excess %lld at the end, expected 0",
          (long long)stvm_semaphore_excess(vm, sem));
    expect_trace("3 signals banked, then 4 waits:", "took3 signal woken");
    done_vm(vm);
}

/* ---- 4. mutex: re-entry and FIFO hand-off ------------------------------------------- */

static void mutex_waiter(stvm_vm *vm, void *m)
{
    stvm_process_info info;
    MUST(stvm_process_get_info(vm, stvm_vm_active_process(vm), &info));
    MUST(stvm_mutex_enter(vm, m));
    CHECK(stvm_mutex_owner(vm, m) == stvm_vm_active_process(vm), "%s runs without owning",
          info.name);
    note(info.name);
    MUST(stvm_mutex_exit(vm, m));
}

static void mutex_owner(stvm_vm *vm, void *m)
{
    stvm_process *self = stvm_vm_active_process(vm), *w[3];
    MUST(stvm_mutex_enter(vm, m));
    MUST(stvm_mutex_enter(vm, m));                 /* re-entry by the owner */
    CHECK(stvm_mutex_try_enter(vm, m) == STVM_OK, "the owner's try_enter did not re-enter");
    CHECK(stvm_mutex_owner(vm, m) == self, "owner is not the process that entered");

    static const char *const names[] = {"W1", "W2", "W3"};
    for (int i = 0; i < 3; i++)
        MUST(stvm_spawn(vm, 30, names[i], mutex_waiter, m, &w[i]));
    MUST(stvm_yield(vm));                          /* W1..W3 queue up on the mutex */
    for (int i = 0; i < 3; i++) {
        stvm_process_info info;
        MUST(stvm_process_get_info(vm, w[i], &info));
        CHECK(info.state == STVM_PROCESS_WAITING && strcmp(info.waiting_on, "mutex") == 0,
              "%s is not waiting on the mutex", names[i]);
    }

    MUST(stvm_mutex_exit(vm, m));
    MUST(stvm_mutex_exit(vm, m));
    CHECK(stvm_mutex_owner(vm, m) == self, "released before the third exit");
    MUST(stvm_mutex_exit(vm, m));                  /* depth 0: hand to the first waiter */
    CHECK(stvm_mutex_owner(vm, m) == w[0], "not handed to W1 on the last exit");
    CHECK(stvm_mutex_try_enter(vm, m) == STVM_EAGAIN, "the old owner barged back in");
    CHECK(stvm_mutex_exit(vm, m) == STVM_EPERM, "exit by a non-owner was accepted");
    note("O");
}

static void mutexes(void)
{
    stvm_vm *vm = make_vm(true, STVM_CLOCK_REAL);
    stvm_mutex *m;
    MUST(stvm_mutex_new(vm, &m));
    MUST(stvm_spawn(vm, 30, "O", mutex_owner, m, NULL));
    MUST(stvm_run(vm));
    CHECK(stvm_mutex_owner(vm, m) == NULL, "the mutex is still owned at the end");
    expect_trace("3 enters, 3 waiters, 3 exits:", "O W1 W2 W3");
    MUST(stvm_mutex_free(vm, m));
    done_vm(vm);
}

/* ---- 5. external signals from OS threads -------------------------------------------- */

#define EXT_THREADS 4
#define EXT_PER_THREAD 50000

typedef struct ext_job {
    stvm_vm *vm;
    int index;
    int errors;
} ext_job;

static void *ext_thread(void *arg)
{
    ext_job *job = arg;
    for (int i = 0; i < EXT_PER_THREAD; i++)
        if (stvm_external_signal(job->vm, job->index) != STVM_OK)
            job->errors++;
    return NULL;
}

static long ext_received;

static void ext_consumer(stvm_vm *vm, void *sem)
{
    for (long i = 0; i < (long)EXT_THREADS * EXT_PER_THREAD; i++) {
        MUST(stvm_semaphore_wait(vm, sem));
        ext_received++;
    }
}

static void external(void)
{
    stvm_vm *vm = make_vm(true, STVM_CLOCK_REAL);
    stvm_semaphore *sem;
    int index;
    MUST(stvm_semaphore_new(vm, &sem));
    MUST(stvm_external_register(vm, sem, &index));
    MUST(stvm_spawn(vm, 40, "consumer", ext_consumer, sem, NULL));

    pthread_t tid[EXT_THREADS];
    ext_job jobs[EXT_THREADS];
    for (int t = 0; t < EXT_THREADS; t++) {
        jobs[t] = (ext_job){vm, index, 0};
        CHECK(pthread_create(&tid[t], NULL, ext_thread, &jobs[t]) == 0, "pthread_create");
    }
    /* While the consumer waits on a registered semaphore the VM sleeps instead of
     * reporting a deadlock: another thread may still signal. */
    MUST(stvm_run(vm));
    for (int t = 0; t < EXT_THREADS; t++) {
        pthread_join(tid[t], NULL);
        CHECK(jobs[t].errors == 0, "stvm_external_signal failed in thread %d", t);
    }
    stvm_stats st;
    MUST(stvm_vm_get_stats(vm, &st));
    long sent = (long)EXT_THREADS * EXT_PER_THREAD;
    CHECK(ext_received == sent, "received %ld signals, sent %ld", ext_received, sent);
    CHECK(st.external_signals == (uint64_t)sent, "external_signals counter %llu, sent %ld",
          (unsigned long long)st.external_signals, sent);
    CHECK(stvm_semaphore_excess(vm, sem) == 0, "%lld signals too many",
          (long long)stvm_semaphore_excess(vm, sem));
    printf("  %-44s %ld sent, %ld received, 0 extra\n", "4 threads x 50000 signals:", sent,
           ext_received);
    MUST(stvm_external_unregister(vm, index));
    done_vm(vm);
}

/* ---- 6. deadlock report ------------------------------------------------------------- */

static void stuck(stvm_vm *vm, void *sem)
{
    MUST(stvm_semaphore_wait(vm, sem));
    note("released");
}

static void deadlock(void)
{
    stvm_vm *vm = make_vm(true, STVM_CLOCK_REAL);
    stvm_semaphore *sem;
    stvm_process *p;
    MUST(stvm_semaphore_new(vm, &sem));
    MUST(stvm_spawn(vm, 30, "stuck", stuck, sem, &p));
    int err = stvm_run(vm);
    CHECK(err == STVM_EDEADLOCK, "stvm_run returned %s, expected STVM_EDEADLOCK",
          stvm_err_name(err));

    char report[256];
    int len = stvm_vm_blocked_report(vm, report, sizeof report);
    CHECK(len > 0 && (size_t)len < sizeof report, "blocked report length %d", len);
    CHECK(strstr(report, "stuck") && strstr(report, "semaphore"),
          "the report does not name the process and its semaphore: %s", report);
    stvm_process_info info;
    MUST(stvm_process_get_info(vm, p, &info));
    CHECK(info.state == STVM_PROCESS_WAITING && info.waiting_object == (const void *)sem,
          "info does not say 'stuck' waits on the semaphore");
    report[strcspn(report, "\n")] = 0;
    printf("  %-44s %s: %s\n", "stvm_run with nothing runnable:", stvm_err_name(err), report);

    /* A deadlock is a report, not an end: give the VM the missing signal, run again. */
    MUST(stvm_semaphore_signal(vm, sem));
    MUST(stvm_run(vm));
    expect_trace("signal from the host, run again:", "released");
    done_vm(vm);
}

/* ---- 7. delays and timed waits on the simulated clock ------------------------------- */

static void sim_delays(stvm_vm *vm, void *arg)
{
    (void)arg;
    uint64_t t0 = stvm_vm_now_us(vm);
    MUST(stvm_delay_wait_ms(vm, 250));
    uint64_t t1 = stvm_vm_now_us(vm);
    CHECK(t1 - t0 == 250000, "250 ms delay advanced the clock by %llu us",
          (unsigned long long)(t1 - t0));
    MUST(stvm_delay_wait_us(vm, 1234));
    uint64_t t2 = stvm_vm_now_us(vm);
    CHECK(t2 - t1 == 1234, "1234 us delay advanced the clock by %llu us",
          (unsigned long long)(t2 - t1));
    printf("  %-44s +%llu us, +%llu us\n", "delay 250 ms, then 1234 us:",
           (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1));
}

static void timed_waiter(stvm_vm *vm, void *sem)
{
    uint64_t t0 = stvm_vm_now_us(vm);
    int err = stvm_semaphore_wait_timeout_ms(vm, sem, 100);
    uint64_t t1 = stvm_vm_now_us(vm);
    CHECK(err == STVM_ETIMEDOUT, "unsignalled timed wait returned %s", stvm_err_name(err));
    CHECK(t1 - t0 == 100000, "timed wait ran out after %llu us, expected 100000",
          (unsigned long long)(t1 - t0));
    CHECK(stvm_semaphore_excess(vm, sem) == 0, "a timed-out wait left a signal behind");
    printf("  %-44s %s after %llu us\n", "wait 100 ms, nobody signals:", stvm_err_name(err),
           (unsigned long long)(t1 - t0));

    t0 = stvm_vm_now_us(vm);
    err = stvm_semaphore_wait_timeout_ms(vm, sem, 100);   /* the helper signals at +30 ms */
    t1 = stvm_vm_now_us(vm);
    CHECK(err == STVM_OK, "signalled timed wait returned %s", stvm_err_name(err));
    CHECK(t1 - t0 == 30000, "signalled after %llu us, expected 30000",
          (unsigned long long)(t1 - t0));
    printf("  %-44s %s after %llu us\n", "wait 100 ms, signalled at 30 ms:",
           stvm_err_name(err), (unsigned long long)(t1 - t0));
}

static void late_signaller(stvm_vm *vm, void *sem)
{
    /* Runs once the waiter blocks in its first timed wait (at 100 ms it will have timed
     * out); waits for the second one to begin, then signals 30 ms into it. */
    MUST(stvm_delay_wait_ms(vm, 100));
    MUST(stvm_delay_wait_ms(vm, 30));
    MUST(stvm_semaphore_signal(vm, sem));
}

static void simulated_time(void)
{
    stvm_vm *vm = make_vm(true, STVM_CLOCK_SIMULATED);
    MUST(stvm_spawn(vm, 30, "sleeper", sim_delays, NULL, NULL));
    MUST(stvm_run(vm));
    done_vm(vm);

    vm = make_vm(true, STVM_CLOCK_SIMULATED);
    stvm_semaphore *sem;
    MUST(stvm_semaphore_new(vm, &sem));
    MUST(stvm_spawn(vm, 30, "waiter", timed_waiter, sem, NULL));
    MUST(stvm_spawn(vm, 20, "signaller", late_signaller, sem, NULL));
    MUST(stvm_run(vm));
    stvm_stats st;
    MUST(stvm_vm_get_stats(vm, &st));
    CHECK(st.delays_unscheduled >= 1, "the signalled wait's delay was not unscheduled");
    done_vm(vm);
}

/* ---- 8. a delay on the real clock --------------------------------------------------- */

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void real_delay(stvm_vm *vm, void *arg)
{
    (void)arg;
    double m0 = mono_ms();
    uint64_t t0 = stvm_vm_now_us(vm);
    MUST(stvm_delay_wait_ms(vm, 20));
    uint64_t t1 = stvm_vm_now_us(vm);
    double m1 = mono_ms();
    /* Never early by the VM clock; the upper bound only catches a lost wake-up. */
    CHECK(t1 - t0 >= 20000, "20 ms delay ended after %llu us", (unsigned long long)(t1 - t0));
    CHECK(m1 - m0 < 1000.0, "20 ms delay took %.1f ms", m1 - m0);
    printf("  %-44s ended after %.3f ms (late by %.3f ms)\n", "delay 20 ms on the real clock:",
           (double)(t1 - t0) / 1e3, (double)(t1 - t0) / 1e3 - 20.0);
}

static void real_time(void)
{
    stvm_vm *vm = make_vm(true, STVM_CLOCK_REAL);
    MUST(stvm_spawn(vm, 30, "sleeper", real_delay, NULL, NULL));
    MUST(stvm_run(vm));
    done_vm(vm);
}

int main(void)
{
    CHECK(stvm_version() == STVM_VERSION_HEX, "header %s, library %s", STVM_VERSION_STRING,
          stvm_version_string());
    printf("stvm %s, %s context switch\n", stvm_version_string(), stvm_context_backend());
    puts("preemption (only a strictly higher priority preempts):");
    preemption(true);
    preemption(false);
    puts("FIFO within a priority:");
    fifo();
    puts("excess signals:");
    excess();
    puts("mutex:");
    mutexes();
    puts("external signals:");
    external();
    puts("deadlock:");
    deadlock();
    puts("simulated clock:");
    simulated_time();
    puts("real clock:");
    real_time();
    puts("all observations match");
    return 0;
}
