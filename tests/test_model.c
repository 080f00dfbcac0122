/*
 * Model-based random testing of the scheduler: a reference model of the scheduling
 * rules (tests/model/model.h) runs in lock-step with a VM on the simulated clock
 * (tests/model/driver.h), over scripts of random operations generated from 64-bit
 * seeds. Any disagreement prints its seed and the shortest operation sequence found
 * that still shows it.
 *
 * Environment:
 *   STVM_MODEL_OPS             operations per test binary run, split over the two
 *                              lock-step tests (default 4000000)
 *   STVM_MODEL_OPS_PER_SEED    most operations one seed's script has (default 4000)
 *   STVM_MODEL_SEED            run this one seed only (hex or decimal), printing its trace
 *   STVM_MODEL_SEED_BASE       where the seed sequence starts (default: per build)
 *   STVM_MODEL_SHRINK_SECONDS  how long shrinking a failure may take (default 60)
 *   STVM_MODEL_STORM_OPS       operations of the suspend/resume storm (pharo #6363,
 *                              default 400000)
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "helpers.h"
#include "model/driver.h"

TestSuite(model, .timeout = 900);

#if defined(__SANITIZE_ADDRESS__)
#define MODEL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MODEL_ASAN 1
#endif
#endif
#ifndef MODEL_ASAN
#define MODEL_ASAN 0
#endif

#define DEFAULT_OPS 4000000
#define DEFAULT_OPS_PER_SEED 4000

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    return s && *s ? strtoull(s, NULL, 0) : dflt;
}

/* ---- naming the seed if the VM crashes ------------------------------------------------ */

static volatile uint64_t crash_seed;
static volatile int crash_armed;

static void put_hex(char *p, uint64_t v)
{
    for (int i = 15; i >= 0; i--, v >>= 4)
        p[i] = "0123456789abcdef"[v & 15];
}

static void on_crash(int sig)
{
    if (crash_armed) {
        char msg[] = "\nmodel: crashed while running seed 0x0000000000000000; "
                     "rerun it with STVM_MODEL_SEED=0x0000000000000000\n";
        put_hex(strstr(msg, "0x") + 2, crash_seed);
        put_hex(strrchr(msg, 'x') + 1, crash_seed);
        ssize_t n = write(2, msg, sizeof msg - 1);
        (void)n;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void arm_crash_report(void)
{
    signal(SIGABRT, on_crash);
    if (!MODEL_ASAN) {   /* AddressSanitizer reports faults itself, then aborts */
        signal(SIGSEGV, on_crash);
        signal(SIGBUS, on_crash);
    }
}

/* ---- running seeds ----------------------------------------------------------------------- */

/* Each build starts the seed sequence elsewhere, so the three builds of make check
 * cover different scripts; any seed replays the same on every build. */
static uint64_t default_base(void)
{
    uint64_t h = 0x6d6f64656c5f7631ull;   /* "model_v1" */
    for (const char *s = stvm_context_backend(); *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001B3ull;
    return h ^ (MODEL_ASAN ? 0xA5A5A5A5ull : 0);
}

typedef struct tally {
    uint64_t ops, seeds, violations;
    uint64_t cov[COV_N];
    uint64_t cov_rc[OP_KINDS][RC_BUCKETS];
    uint64_t ms_wraps;
} tally;

/* By the enum's names, so that a new operation cannot shift the rows. */
static const char *const op_kind_name[OP_KINDS] = {
    [OP_WAIT] = "wait", [OP_TRY_WAIT] = "try_wait", [OP_WAIT_TIMEOUT] = "wait_timeout",
    [OP_ENTER] = "enter", [OP_EXIT] = "exit", [OP_TRY_ENTER] = "try_enter",
    [OP_ENTER_TIMEOUT] = "enter_timeout", [OP_YIELD] = "yield", [OP_CHECKPOINT] = "checkpoint",
    [OP_DELAY] = "delay", [OP_JOIN] = "join", [OP_ENSURE] = "ensure",
    [OP_ENSURE_POP] = "ensure_pop", [OP_RETURN] = "return", [OP_QTAKE] = "queue_take",
    [OP_QTRY_TAKE] = "queue_try_take", [OP_QTAKE_TIMEOUT] = "queue_take_timeout",
    [OP_QPUT_TIMEOUT] = "queue_put_timeout", [OP_DWAIT] = "delay_obj_wait",
    [OP_DSCHEDULE] = "delay_obj_schedule", [OP_DUNSCHEDULE] = "delay_obj_unschedule",
    [OP_QPUT] = "queue_put",
    [OP_QFLUSH] = "queue_flush", [OP_INTERRUPT] = "interrupt", [OP_SIGNAL] = "signal",
    [OP_SPAWN] = "spawn", [OP_SUSPEND] = "suspend", [OP_RESUME] = "resume",
    [OP_TERMINATE] = "terminate", [OP_SET_PRIORITY] = "set_priority", [OP_RELEASE] = "release",
    [OP_RENEW_SEM] = "renew_sem", [OP_RENEW_MUTEX] = "renew_mutex", [OP_RUN] = "run",
    [OP_MISUSE] = "misuse", [OP_MENTER] = "monitor_enter", [OP_MTRY_ENTER] = "monitor_try_enter",
    [OP_MEXIT] = "monitor_exit", [OP_MWAIT] = "monitor_wait", [OP_MWAIT_TIMEOUT] = "monitor_wait_timeout",
    [OP_MSIGNAL] = "monitor_signal", [OP_MSIGNAL_ALL] = "monitor_signal_all",
    [OP_MENTER_TIMEOUT] = "monitor_enter_timeout", [OP_RENEW_MON] = "renew_monitor",
    [OP_NAME] = "set_name",
    [OP_QCLOSE] = "queue_close", [OP_RENEW_QUEUE] = "renew_queue",
};

static void print_coverage(const tally *t)
{
    fprintf(stderr, "model: coverage:");
    for (int c = 0; c < COV_N; c++)
        fprintf(stderr, "%s %s %llu", c ? "," : "", cov_name[c], (unsigned long long)t->cov[c]);
    fprintf(stderr, ", millisecond clock wraps %llu\nmodel: answers per operation:\n",
            (unsigned long long)t->ms_wraps);
    for (int k = 0; k < OP_KINDS; k++) {
        fprintf(stderr, "  %-18s", op_kind_name[k] ? op_kind_name[k] : "(unnamed: name it)");
        for (int b = 0; b < RC_BUCKETS; b++) {
            if (!t->cov_rc[k][b])
                continue;
            int rc = b <= 1 ? b : -(b - 1);
            bool number = k == OP_CHECKPOINT || k == OP_QFLUSH || k == OP_MSIGNAL ||
                          k == OP_MSIGNAL_ALL;   /* counts */
            fprintf(stderr, " %s %llu",
                    b == RC_BUCKETS - 1 ? (number ? "more" : "other") : b <= 1 && number ? (b ? "1" : "0") : stvm_err_name(rc),
                    (unsigned long long)t->cov_rc[k][b]);
        }
        fputc('\n', stderr);
    }
}

/* Run one generated seed; on a disagreement report it (shrunk). */
static void run_seed_mix(uint64_t seed, size_t max_ops, bool trace, bool storm, tally *t)
{
    run_params rp = params_of(seed, max_ops);
    rp.storm = storm;
    drv *d = drv_new(&rp);
    d->generating = true;
    d->keep_trace = trace;
    crash_seed = seed;
    crash_armed = 1;
    drv_run(d);
    crash_armed = 0;
    t->ops += d->executed;
    t->seeds++;
    for (int c = 0; c < COV_N; c++)
        t->cov[c] += d->m.cov[c];
    for (int k = 0; k < OP_KINDS; k++)
        for (int b = 0; b < RC_BUCKETS; b++)
            t->cov_rc[k][b] += d->cov_rc[k][b];
    /* Did the millisecond clock wrap during the run? */
    uint64_t ms_end = (d->m.now - rp.sim_start_us) / 1000 + rp.ms_clock_start;
    t->ms_wraps += ms_end > MS_CLOCK_MASK;
    if (trace) {
        char params[256];
        params_text(&rp, params, sizeof params);
        fprintf(stderr, "model: seed 0x%016llx (%s):\n", (unsigned long long)seed, params);
        print_trace(stderr, d);
    }
    if (d->failed) {
        t->violations++;
        report_failure(stderr, d, (double)env_u64("STVM_MODEL_SHRINK_SECONDS", 60));
    }
    drv_free(d);
}

static void run_seed(uint64_t seed, size_t max_ops, bool trace, tally *t)
{
    run_seed_mix(seed, max_ops, trace, false, t);
}

typedef struct seeds_job {
    const char *name;
    bool yields;
    tally t;
} seeds_job;

static void *seeds_thread(void *arg)
{
    seeds_job *job = arg;
    bool yields = job->yields;
    tally t = {0};
    double t0 = seconds_now();
    size_t per_seed = (size_t)env_u64("STVM_MODEL_OPS_PER_SEED", DEFAULT_OPS_PER_SEED);
    uint64_t one = env_u64("STVM_MODEL_SEED", 0);
    if (one) {
        if ((one & 1) == yields)
            run_seed(one, per_seed, true, &t);
    } else {
        uint64_t budget = env_u64("STVM_MODEL_OPS", DEFAULT_OPS) / 2;
        uint64_t s = env_u64("STVM_MODEL_SEED_BASE", default_base());
        while (t.ops < budget) {
            uint64_t seed = (mix64(&s) & ~1ull) | yields;
            run_seed(seed, per_seed, false, &t);
        }
    }
    fprintf(stderr,
            "model: %s on %s%s: %llu operations, %llu seeds, %llu violations, %.1f s\n",
            job->name, stvm_context_backend(), MODEL_ASAN ? " (ASan+UBSan)" : "", (unsigned long long)t.ops,
            (unsigned long long)t.seeds, (unsigned long long)t.violations, seconds_now() - t0);
    if (env_u64("STVM_MODEL_COVERAGE", 0))
        print_coverage(&t);
    job->t = t;
    return NULL;
}

/* The seeds run on a thread of their own: on the main thread every stvm_run would
 * have glibc read /proc/self/maps to find the thread's stack (pthread_getattr_np),
 * which costs more than the rest of a short run. */
static void run_seeds(const char *name, bool yields)
{
    arm_crash_report();
    seeds_job job = {.name = name, .yields = yields};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8u << 20);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, &attr, seeds_thread, &job), 0);
    pthread_join(th, NULL);
    pthread_attr_destroy(&attr);
    cr_assert_eq(job.t.violations, 0, "the model and the VM disagree (see above)");
}

Test(model, lockstep_preemption_yields)
{
    run_seeds("preemption_yields=true", true);
}

Test(model, lockstep_preemption_keeps_place)
{
    run_seeds("preemption_yields=false", false);
}

/* The comparison is live: a model with a deliberate mistake must disagree with the VM,
 * and the disagreement must shrink to a short sequence. */
static void wrong_model_is_caught(int mutation, const char *what)
{
    uint64_t s = 0x77726f6e67ull + (uint64_t)mutation;
    for (int i = 0; i < 200; i++) {
        run_params rp = params_of(mix64(&s), 1500);
        rp.mutation = mutation;
        drv *d = drv_new(&rp);
        d->generating = true;
        drv_run(d);
        if (d->failed) {
            size_t n = d->cursor, replays = 0;
            size_t shrunk = shrink(&rp, d->ops, n, d->category, 20, &replays);
            fprintf(stderr, "model: a model that %s is caught (seed %d, after %llu operations) and "
                            "shrinks to %zu operations\n",
                    what, i, (unsigned long long)d->executed, shrunk);
            cr_expect_leq(shrunk, 30, "%s: shrunk to %zu operations only", what, shrunk);
            drv_free(d);
            return;
        }
        drv_free(d);
    }
    cr_assert_fail("a model that %s agrees with the VM over 200 seeds", what);
}

/* pharo #6363: processes lost when many are suspended and resumed in quick succession
 * (Pharo's in-image lists were not safe against it). The storm's mix (storm_mix in
 * driver.h) in lock-step with the model, from fixed seeds, both preemption rules: every
 * process the VM runs is the one the model predicts at every visible point, the
 * invariants hold after every operation, every cleanup runs once, and the teardown
 * finds every process, none lost. The figures go to stderr. */
static void *storm_thread(void *arg)
{
    tally *t = arg;
    uint64_t budget = env_u64("STVM_MODEL_STORM_OPS", 400000), s = 0x6363;
    while (t->ops < budget) {
        uint64_t seed = mix64(&s);
        run_seed_mix(seed, DEFAULT_OPS_PER_SEED, false, true, t);
    }
    return NULL;
}

Test(model, pharo6363_a_suspend_resume_storm_loses_no_process)
{
    arm_crash_report();
    tally t = {0};
    double t0 = seconds_now();
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8u << 20);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, &attr, storm_thread, &t), 0);
    pthread_join(th, NULL);
    pthread_attr_destroy(&attr);
    uint64_t n[OP_KINDS] = {0};
    for (int k = 0; k < OP_KINDS; k++)
        for (int b = 0; b < 16; b++)
            n[k] += t.cov_rc[k][b];
    fprintf(stderr,
            "model: pharo #6363 storm on %s%s: %llu operations (%llu suspends, %llu resumes, %llu "
            "priority changes, %llu signals, %llu waits), %llu processes spawned (at most %d "
            "at once), %llu seeds, %llu violations, %.1f s\n",
            stvm_context_backend(), MODEL_ASAN ? " (ASan+UBSan)" : "", (unsigned long long)t.ops,
            (unsigned long long)n[OP_SUSPEND],
            (unsigned long long)n[OP_RESUME], (unsigned long long)n[OP_SET_PRIORITY],
            (unsigned long long)n[OP_SIGNAL], (unsigned long long)n[OP_WAIT],
            (unsigned long long)t.cov_rc[OP_SPAWN][0], M_SLOTS, (unsigned long long)t.seeds,
            (unsigned long long)t.violations, seconds_now() - t0);
    cr_assert_eq(t.violations, 0, "the model and the VM disagree (see above)");
    cr_assert_gt(n[OP_SUSPEND] + n[OP_RESUME], t.ops / 4, "not a storm of suspends and resumes");
}

Test(model, a_wrong_model_is_caught_and_shrunk)
{
    wrong_model_is_caught(MUT_PREEMPTED_WRONG_END, "puts a preempted process at the wrong end");
    wrong_model_is_caught(MUT_LIFO_SEMAPHORE, "wakes semaphore waiters last-in first-out");
    wrong_model_is_caught(MUT_CLOCK_EARLY, "jumps the clock 1 us short");
    wrong_model_is_caught(MUT_MON_DEPTH_ONE, "gives a monitor back at depth 1 after a wait");
}

/* The coverage table names each operation; a new one without a name would print a
 * blank row. */
Test(model, every_operation_has_a_name_in_the_coverage_table)
{
    for (int k = 0; k < OP_KINDS; k++)
        cr_assert_not_null(op_kind_name[k], "operation %d has no name", k);
}
