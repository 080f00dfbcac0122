/*
 * stvm-bench micro: a record per case (param backend: stvm_context_backend()) and the
 * targets, judged on the assembly back end only. Comparing back ends is the caller's job
 * (`make bench-micro` runs both binaries), as hyperfine leaves it to its user.
 */
#include "micro.h"
#include "render.h"

#include <math.h>
#include <sched.h>
#include <string.h>
#define JUDGED_BACKEND "asm-x86_64"

typedef struct micro_opts {
    long long repeat, iterations, pthread_iterations, processes;   /* as the table says */
} micro_opts;

static const bench_opt micro_opts_table[] = {
    BENCH_INT("repeat", "K", "5", 1, 100, micro_opts, repeat,
              "Repetitions; the tables show the median and min..max."),
    BENCH_INT("iterations", "N", "2000000", 2, 10000000000LL, micro_opts, iterations,
              "Hand-offs (and raw switches) per repetition."),
    BENCH_INT("pthread-iterations", "N", "200000", 2, 10000000000LL, micro_opts,
              pthread_iterations, "Hand-offs per repetition of the pthread reference."),
    BENCH_INT("processes", "N", "100000", 1, 10000000, micro_opts, processes,
              "Blocked processes for the memory figure."),
};

const bench_command micro_command = {
    "micro",
    "semaphore hand-off, raw context switch, memory per blocked process and a pthread "
    "semaphore reference, for this binary's context-switch back end",
    "The cost of the scheduler's basic moves: a semaphore hand-off between two green "
    "processes of equal priority, both blocking at one call site as processes do at the "
    "scheduler's one switch (case handoff), the same with ping and pong blocking at two "
    "different call sites, so that every switch returns where the processor's return "
    "predictor did not expect (handoff-two-sites), the same through two SharedQueues (queue) "
    "and through a monitor's signal and condition wait (monitor), an uncontended monitor "
    "enter and exit (monitor-enter-exit), a raw switch between two stacks without the "
    "scheduler (raw-switch), resident memory per blocked process (memory), and for "
    "reference a sem_t ping-pong between two OS threads pinned to one core (pthread-sem). "
    "Run it pinned (--cpu 0) for stable figures."
    "\n\nOnly the back end this binary is linked with is measured (make bench-micro runs "
    "stvm-bench and stvm-bench-ucontext); the targets are judged on the asm-x86_64 back "
    "end only.",
    micro_opts_table, sizeof micro_opts_table / sizeof micro_opts_table[0],
    "the hand-off's VM (ping and pong) with --repeat 1; the other cases are not traced"};

/* The VM's cases, in the order they run each repetition. */
enum { HANDOFF, HANDOFF_TWO_SITES, QUEUE, MONITOR, ENTER_EXIT, RAW_SWITCH, NCASES };
static const char *const case_names[NCASES] = {"handoff", "handoff-two-sites", "queue",
                                               "monitor", "monitor-enter-exit",
                                               "raw-switch"};

/* A timed case's record (time_ns, the gbench view's time; with cpu, cpu_ns, the
 * process's CPU over the same rounds, the gbench view's CPU time); answers its index. */
static int timed_record(bench_results *r, const char *name, const char *backend,
                        long long iterations, bool cpu)
{
    bench_record *rec = bench_record_add(r, name);
    bench_param_add(rec, "backend", "%s", backend);
    bench_param_add(rec, "iterations", "%lld", iterations);
    rec->gbench_real = bench_metric_add(rec, "time_ns", "ns", BENCH_BETTER_LOWER, 1, NULL, 0);
    if (cpu)
        rec->gbench_cpu = bench_metric_add(rec, "cpu_ns", "ns", BENCH_BETTER_LOWER, 1, NULL, 0);
    return r->nrecords - 1;
}

/* One repetition of every VM case into the records 0..NCASES-1. */
static int vm_repetition(const micro_opts *o, const bench_trace *trace, bench_results *r,
                         char *why, size_t whysize)
{
    double ns[NCASES], cpu[NCASES];
    int err = STVM_OK;
    for (int c = HANDOFF; !err && c < RAW_SWITCH; c++)
        err = micro_handoff((micro_channel)c, o->iterations, c == HANDOFF ? trace : NULL,
                            &ns[c], &cpu[c], why, whysize);
    /* --iterations is at least 2, so there is at least one raw switch */
    if (!err && (err = stvm_measure_raw_switch((uint64_t)o->iterations / 2, &ns[RAW_SWITCH])))
        snprintf(why, whysize, "stvm_measure_raw_switch: %s", stvm_err_name(err));
    for (int c = 0; !err && c < NCASES; c++) {
        bench_metric_push(&r->records[c].metrics[0], ns[c]);
        if (c != RAW_SWITCH)
            bench_metric_push(&r->records[c].metrics[1], cpu[c]);
    }
    return err;
}

/* The memory record (measured first, shown last): a run that fell short keeps its
 * figures and fails. */
static bool memory_record(bench_results *r, const micro_memory *m, int err)
{
    bench_record *rec = bench_record_add(r, "memory");
    bench_param_add(rec, "backend", "%s", stvm_context_backend());
    bool whole = err == STVM_OK && m->spawned > 0;
    double kib = ((double)m->rss_after - (double)m->rss_before) / 1024.0 / (double)m->spawned;
    double vm = ((double)m->live_after - (double)m->live_before) / (double)m->spawned;
    const double figures[] = {whole ? kib : NAN, whole ? vm : NAN, (double)m->spawned,
                              (double)m->asked, (double)m->rss_before, (double)m->rss_after};
    static const char *const names[] = {"kib_per_process", "vm_bytes_per_process", "processes",
                                        "processes_asked", "rss_before_bytes", "rss_after_bytes"},
                             *const units[] = {"KiB", "B", "", "", "B", "B"};
    for (int i = 0; i < 6; i++)
        bench_metric_add(rec, names[i], units[i], i < 2 || i > 3 ? BENCH_BETTER_LOWER
                                                                 : BENCH_BETTER_NONE,
                         i == 0 ? 2 : 0, &figures[i], i < 2 && !whole ? 0 : 1);
    if (m->spawn_err)
        bench_record_fail(rec, BENCH_FAILED, "spawned %ld of %ld blocked processes, then "
                          "stvm_spawn failed: %s (%s)", m->spawned, m->asked,
                          stvm_err_name(m->spawn_err), stvm_strerror(m->spawn_err));
    else if (m->run_err)
        bench_record_fail(rec, BENCH_FAILED, "memory run with %ld blocked processes failed: "
                          "%s (%s)", m->spawned, stvm_err_name(m->run_err),
                          stvm_strerror(m->run_err));
    return rec->status == BENCH_OK;
}

/* A one-sample ratio a / b of two records' medians on record `into` (none when either is
 * not measured). */
static void ratio(bench_results *r, int into, const char *name, bench_better better, int a,
                  int b)
{
    double v = r->records[a].metrics[0].median / r->records[b].metrics[0].median;
    bench_metric_add(&r->records[into], name, "x", better, 2, &v, isfinite(v) ? 1 : 0);
}

/* The targets, judged on the assembly back end only. */
static void targets(bench_results *r)
{
    static const struct {
        const char *text, *select, *metric;
        double limit;
    } spec[] = {
        {"semaphore hand-off at most 15 ns", "handoff", "time_ns", 15},
        {"raw switch at most 8 ns", "raw-switch", "time_ns", 8},
        {"resident memory per blocked process at most 4 KiB", "memory", "kib_per_process", 4},
        {"SharedQueue put + take at most 2x the semaphore hand-off", "queue",
         "queue_over_handoff", 2},
    };
    char why[160];
    snprintf(why, sizeof why, "on %s: the targets are %s's", stvm_context_backend(),
             JUDGED_BACKEND);
    for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++) {
        bench_target *t = bench_target_add(r, spec[i].text, BENCH_TARGET_AT_MOST,
                                           spec[i].select, spec[i].metric, spec[i].limit,
                                           NULL, NULL);
        if (strcmp(stvm_context_backend(), JUDGED_BACKEND) != 0)
            bench_target_not_judged(t, why);
    }
    bench_judge(r);
}

int micro_main(int argc, char **argv)
{
    micro_opts o;
    bench_invocation inv;
    int rc = bench_parse(&micro_command, argc, argv, &o, &inv);
    if (rc != BENCH_GO_ON ||
        (rc = bench_trace_cells(&inv, (long)o.repeat, "give --repeat 1")) != BENCH_GO_ON)
        return rc;
    const char *backend = stvm_context_backend();
    int total = 1 + 2 * (int)o.repeat, done = 0;
    bench_results r;
    bench_results_init(&r, "micro");

    micro_memory m;
    int merr = micro_memory_run((long)o.processes, &m);
    bench_progress_line(&inv, ++done, total, "memory: %ld of %ld processes blocked (%s)",
                        m.spawned, m.asked, backend);
    for (int c = 0; c < NCASES; c++)
        timed_record(&r, case_names[c], backend,
                     c == RAW_SWITCH ? o.iterations / 2 : o.iterations, c != RAW_SWITCH);
    char why[200] = "";
    for (int k = 0; k < o.repeat && !*why; k++) {
        if (vm_repetition(&o, &inv.common.trace, &r, why, sizeof why))
            for (int c = 0; c < NCASES; c++)
                bench_record_fail(&r.records[c], BENCH_FAILED, "%s", why);
        bench_progress_line(&inv, ++done, total, "hand-off, queue, monitor, raw switch: "
                            "repetition %d of %lld (%s)", k + 1, o.repeat, backend);
    }

    int cpu = inv.common.cpu >= 0 ? inv.common.cpu : sched_getcpu() >= 0 ? sched_getcpu() : 0;
    int pt = timed_record(&r, "pthread-sem", "pthread", o.pthread_iterations, false);
    for (int k = 0; k < o.repeat; k++) {
        double ns;
        if (micro_sem_pingpong(1000, o.pthread_iterations / 2, cpu, NULL, &ns) != 0) {
            bench_record_fail(&r.records[pt], BENCH_SKIPPED, "the pthread reference could "
                              "not run (thread creation or pinning)");
            break;
        }
        bench_metric_push(&r.records[pt].metrics[0], ns);
        bench_progress_line(&inv, ++done, total, "pthread sem_t reference: repetition %d of "
                            "%lld", k + 1, o.repeat);
    }
    if (r.records[pt].status == BENCH_OK)
        bench_record_note(&r.records[pt], "sem_t ping-pong, two OS threads on CPU %d", cpu);
    ratio(&r, HANDOFF, "pthread_over_stvm", BENCH_BETTER_HIGHER, pt, HANDOFF);
    ratio(&r, QUEUE, "queue_over_handoff", BENCH_BETTER_LOWER, QUEUE, HANDOFF);
    bool memory_ok = memory_record(&r, &m, merr);
    targets(&r);
    rc = bench_output(&r, &inv);
    bench_results_free(&r);
    return *why || !memory_ok ? BENCH_EXIT_FAIL : rc;
}
