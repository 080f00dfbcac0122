/*
 * stvm-bench micro: the cost of the scheduler's basic moves, for the context-switch
 * back end this binary is linked with (stvm_context_backend()).
 *
 *  - hand-off: two processes of equal priority ping-pong through two semaphores;
 *  - queue hand-off: the same through two SharedQueues (a put and a take), judged
 *    against twice the semaphore's;
 *  - raw switch: stvm_measure_raw_switch (two stacks, no scheduler);
 *  - memory: resident bytes per blocked process, each waiting on its own semaphore;
 *  - reference: the same ping-pong with pthread sem_t between two OS threads pinned to
 *    one core.
 * Comparing back ends is the caller's job (`make bench-micro` runs both binaries), as
 * hyperfine leaves comparison across binaries to its user.
 */
#include "bench.h"
#include "micro_measure.h"
#include "micro_render.h"
#include "micro_report.h"

#include <math.h>
#include <sched.h>
#include <string.h>

typedef struct micro_opts {
    int cpu;                        /* -1: no pinning */
    int repeat;
    long long iterations;           /* hand-offs (and raw switches) per repetition */
    long long pthread_iterations;   /* hand-offs per repetition of the pthread pair */
    long processes;                 /* blocked processes for the memory figure */
    bench_format format;
    bench_trace trace;
} micro_opts;

/* ---- options ------------------------------------------------------------------------- */

static void micro_help(FILE *f)
{
    fprintf(f,
            "usage: stvm-bench micro [OPTIONS]\n"
            "  --cpu N                 pin to CPU N (default 0; -1 = no pinning)\n"
            "  --repeat K              repetitions, medians reported (default 5)\n"
            "  --iterations N          hand-offs and raw switches per repetition "
            "(default 2000000)\n"
            "  --pthread-iterations N  hand-offs of the pthread reference (default 200000)\n"
            "  --processes N           blocked processes for the memory figure "
            "(default 100000)\n"
            "  --format F              table (default), csv, json or markdown\n");
    bench_trace_help(f, 26, "the hand-off's VM (ping and pong); the raw switch, the\n"
                            "memory figure and the pthread reference are not traced");
    fprintf(f,
            "Only the back end this binary is linked with is measured (make bench-micro\n"
            "runs stvm-bench and stvm-bench-ucontext); the targets apply to the\n"
            "asm-x86_64 back end only.\n");
}

/* A count flag in [lo, hi]: BENCH_NEXT, BENCH_NOT_MINE, or a usage error. */
static int parse_option(int argc, char **argv, int *i, micro_opts *o)
{
    if (!strcmp(argv[*i], "--help") || !strcmp(argv[*i], "-h")) {
        micro_help(stdout);
        return BENCH_EXIT_OK;
    }
    long long n = 0;
    int rc = bench_count_option(argc, argv, i, "micro ", "--repeat", 1, MICRO_MAX_REPEAT,
                                "1..100", &n);
    if (rc != BENCH_NOT_MINE) {
        o->repeat = (int)n;
        return rc;
    }
    rc = bench_count_option(argc, argv, i, "micro ", "--iterations", 2, 10000000000LL,
                            "2..10^10", &o->iterations);
    if (rc != BENCH_NOT_MINE)
        return rc;
    rc = bench_count_option(argc, argv, i, "micro ", "--pthread-iterations", 2,
                            10000000000LL, "2..10^10", &o->pthread_iterations);
    if (rc != BENCH_NOT_MINE)
        return rc;
    rc = bench_count_option(argc, argv, i, "micro ", "--processes", 1, 10000000, "1..10^7",
                            &n);
    if (rc != BENCH_NOT_MINE) {
        o->processes = (long)n;
        return rc;
    }
    rc = bench_trace_option(argc, argv, i, "micro ", &o->trace);
    if (rc == BENCH_NOT_MINE)
        rc = bench_common_option(argc, argv, i, "micro ", &o->cpu, &o->format);
    if (rc == BENCH_NOT_MINE)
        return bench_usage_error("micro ", "unknown option '%s'", argv[*i]);
    return rc;
}

/* ---- the back end's figures ---------------------------------------------------------- */

/* The memory figures into r; a run that fell short is kept (with a note) and fails. */
static int memory_figures(const micro_opts *o, micro_row *r)
{
    micro_memory m;
    int err = micro_memory_run(o->processes, bench_progress_on() ? r->backend : NULL, &m);
    r->processes_asked = m.asked;
    r->processes = m.spawned;
    r->rss_before_bytes = (long long)m.rss_before;
    r->rss_after_bytes = (long long)m.rss_after;
    bool whole = err == STVM_OK && m.spawned > 0;
    r->kib_per_process = whole ? ((double)m.rss_after - (double)m.rss_before) / 1024.0 /
                                     (double)m.spawned
                               : NAN;
    r->vm_bytes_per_process =
        whole ? ((double)m.live_after - (double)m.live_before) / (double)m.spawned : NAN;
    if (m.spawn_err)
        snprintf(r->note, sizeof r->note, "spawned %ld of %ld blocked processes, then "
                 "stvm_spawn failed: %s (%s)", m.spawned, m.asked,
                 stvm_err_name(m.spawn_err), stvm_strerror(m.spawn_err));
    else if (m.run_err)
        snprintf(r->note, sizeof r->note, "memory run with %ld blocked processes failed: "
                 "%s (%s)", m.spawned, stvm_err_name(m.run_err), stvm_strerror(m.run_err));
    if (err)
        fprintf(stderr, "stvm-bench: micro (%s): %s\n", r->backend, r->note);
    return err ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
}

/* Hand-off and raw switch, o->repeat times; a failure ends the command. */
static int switch_figures(const micro_opts *o, micro_row *r)
{
    bool tty = bench_progress_on();
    for (int k = 0; k < o->repeat; k++) {
        if (tty)
            bench_progress("[%s] hand-off and raw switch, rep %d/%d", r->backend, k + 1,
                           o->repeat);
        char why[200] = "";
        int err = micro_handoff(MICRO_SEMAPHORE, o->iterations, &o->trace,
                                &r->handoff_ns_samples[k], why, sizeof why);
        if (!err)
            err = micro_handoff(MICRO_QUEUE, o->iterations, NULL, &r->queue_ns_samples[k], why,
                                sizeof why);
        if (!err)
            err = micro_handoff(MICRO_MONITOR, o->iterations, NULL, &r->monitor_ns_samples[k],
                                why, sizeof why);
        if (!err)
            err = micro_monitor_enter_exit(o->iterations, &r->monitor_enter_exit_ns_samples[k],
                                           why, sizeof why);
        uint64_t raw_iter = (uint64_t)(o->iterations / 2 > 0 ? o->iterations / 2 : 1);
        if (!err && (err = stvm_measure_raw_switch(raw_iter, &r->raw_switch_ns_samples[k])))
            snprintf(why, sizeof why, "stvm_measure_raw_switch: %s", stvm_err_name(err));
        if (err) {
            if (tty)
                fputc('\n', stderr);
            fprintf(stderr, "stvm-bench: micro (%s): %s\n", r->backend, why);
            return BENCH_EXIT_FAIL;
        }
        r->nsamples = k + 1;
    }
    if (tty)
        fputc('\n', stderr);
    micro_row_summarise(r);
    return BENCH_EXIT_OK;
}

/* The pthread reference, if it can run: false when it could not (threads, pinning). */
static bool reference_figures(const micro_opts *o, int cpu, micro_row *r)
{
    bool tty = bench_progress_on();
    *r = (micro_row){.reference = true, .repeat = o->repeat,
                     .iterations = o->pthread_iterations, .pthread_over_stvm = 1.0};
    snprintf(r->backend, sizeof r->backend, "%s", MICRO_PTHREAD_ROW);
    for (int k = 0; k < o->repeat; k++) {
        if (tty)
            bench_progress("[pthread] sem_t ping-pong, rep %d/%d", k + 1, o->repeat);
        if (micro_pthread_handoff(o->pthread_iterations, cpu, &r->handoff_ns_samples[k])) {
            snprintf(r->note, sizeof r->note,
                     "the pthread reference could not run (thread creation or pinning)");
            break;
        }
        r->nsamples = k + 1;
    }
    if (tty)
        fputc('\n', stderr);
    if (!r->nsamples)
        fprintf(stderr, "stvm-bench: note: %s\n", r->note);
    micro_row_summarise(r);
    return r->nsamples > 0;
}

int micro_main(int argc, char **argv)
{
    micro_opts o = {.cpu = 0, .repeat = 5, .iterations = 2000000,
                    .pthread_iterations = 200000, .processes = 100000,
                    .format = FMT_TABLE, .trace.events = BENCH_TRACE_EVENTS};
    int rc = BENCH_NEXT;
    for (int i = 1; i < argc && rc == BENCH_NEXT;)
        rc = parse_option(argc, argv, &i, &o);
    if (rc != BENCH_NEXT ||
        (rc = bench_trace_one_cell(&o.trace, "micro ", o.repeat, "give --repeat 1")) !=
            BENCH_NEXT)
        return rc;
    rc = bench_pin_option(o.cpu);
    if (rc != BENCH_EXIT_OK)
        return rc;

    micro_report rep = {.repeat = o.repeat, .iterations = o.iterations,
                        .pthread_iterations = o.pthread_iterations,
                        .processes = o.processes, .cpu = o.cpu, .nrows = 1};
    micro_row *own = &rep.rows[0];
    snprintf(own->backend, sizeof own->backend, "%s", stvm_context_backend());
    own->repeat = o.repeat;
    own->iterations = o.iterations;
    rc = memory_figures(&o, own);
    if (switch_figures(&o, own) != BENCH_EXIT_OK)
        return BENCH_EXIT_FAIL;
    rep.pthread_cpu = o.cpu >= 0 ? o.cpu : sched_getcpu();
    if (rep.pthread_cpu < 0)
        rep.pthread_cpu = 0;
    if (reference_figures(&o, rep.pthread_cpu, &rep.rows[1]))
        rep.nrows = 2;
    own->pthread_over_stvm = rep.nrows == 2 ? rep.rows[1].handoff_ns / own->handoff_ns : NAN;
    own->queue_over_handoff = own->queue_ns / own->handoff_ns;

    if (o.format == FMT_CSV)
        micro_print_csv(stdout, &rep);
    else if (o.format == FMT_JSON)
        micro_print_json(stdout, &rep);
    else
        micro_print_table(stdout, &rep, o.format == FMT_MARKDOWN);
    return rc;
}
