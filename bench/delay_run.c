/*
 * stvm-bench delay: one run of Pharo's DelayBenchmark on stvm.
 *
 * The workload (KernelTests DelayBenchmark, 2015): 1000 durations of 1..50 ms from
 * Random seed: 42; N worker processes at priority 41 share one index into the table
 * and loop { take the next duration; EnterCount++; wait on a Delay of it; ExitCount++ }
 * while Running; a coordinator at priority 42 resumes them, waits a 1 s Delay (the
 * window), clears Running, waits another 1 s (the drain) and terminates what is left.
 * "Count" is EnterCount at the end of the window. Every run has a fresh VM.
 */
#include "delay_run.h"

#include "delay_cost.h"

#include "random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WORKER_PRIORITY (STVM_PRIORITY_USER_SCHEDULING + 1)        /* 41 */
#define COORDINATOR_PRIORITY (STVM_PRIORITY_USER_SCHEDULING + 2)   /* 42 */

/* Everything the processes of one run share (DelayBenchmark's class variables and the
 * measurement state). Only green processes of one VM touch it, one at a time. */
typedef struct delay_run {
    const int *table;
    int index;                      /* the shared sampleIndex */
    bool running;                   /* Running */
    uint64_t enter, exit;           /* EnterCount, ExitCount */
    long n;
    stvm_process **workers;
    int window_ms;

    int64_t wall0, wall1, cpu0, cpu1;
    stvm_stats st0, st1;
    uint64_t enter_at_window, exit_at_window, exit_final;
    int64_t late_min;
    uint64_t early;
    bench_hist hist;

    bool charge;                    /* --sim-cost: workers charge the modelled cost */
    const delay_cost *cost_model;
    delay_cost_meter cost;          /* started with the window */
    uint64_t charged_at_window;     /* cost.charged_us at the window's end */

    int err;                        /* the first failure, and where */
    const char *err_where;
} delay_run;

static void run_fail(delay_run *r, int err, const char *where)
{
    if (!r->err) {
        r->err = err;
        r->err_where = where;
    }
}

static void delay_worker(stvm_vm *vm, void *arg)
{
    delay_run *r = arg;
    /* Nothing runs between one delay's end and the next one's start, so the time read
     * at its end is the next one's start: one clock read per delay, not two (dropping
     * one cut the CPU per delay by about 5% on the real clock at N = 10,000). */
    uint64_t before = stvm_vm_now_us(vm);
    while (r->running) {
        /* --sim-cost: the modelled cost of what the VM counted since the last charge
         * (the timing process's work included) is this worker's work now, before it
         * enters its next delay; so N workers starting at once pay for each other's
         * scheduling, as Pharo's do, and the work delays the workers queued behind. */
        if (r->charge) {
            int err = delay_cost_charge(&r->cost, vm, COORDINATOR_PRIORITY);
            if (err) {
                run_fail(r, err, "a worker's modelled cost (stvm_work_us)");
                return;
            }
            if (!r->running)
                break;
            before = stvm_vm_now_us(vm);
        }
        int d = r->table[r->index];
        r->index = (r->index + 1) % DELAY_TABLE_SIZE;
        r->enter++;
        int err = stvm_delay_wait_ms(vm, d);
        uint64_t after = stvm_vm_now_us(vm);
        if (err) {
            run_fail(r, err, "a worker's stvm_delay_wait_ms");
            return;
        }
        int64_t late = (int64_t)(after - before) - (int64_t)d * 1000;
        if (late < r->late_min)
            r->late_min = late;
        if (late < 0) {
            r->early++;
            late = 0;
        }
        bench_hist_record(&r->hist, (uint64_t)late);
        r->exit++;
        before = after;
    }
}

static void delay_coordinator(stvm_vm *vm, void *arg)
{
    delay_run *r = arg;
    r->running = true;
    stvm_vm_get_stats(vm, &r->st0);
    if (r->charge)
        delay_cost_start(&r->cost, r->cost_model, vm);
    r->wall0 = bench_mono_ns();
    r->cpu0 = bench_cpu_ns();
    for (long i = 0; i < r->n; i++) {
        int err = stvm_process_resume(vm, r->workers[i]);
        if (err) {
            run_fail(r, err, "stvm_process_resume of a worker");
            break;
        }
    }
    int err = stvm_delay_wait_ms(vm, r->window_ms);
    r->running = false;
    r->cpu1 = bench_cpu_ns();
    r->wall1 = bench_mono_ns();
    stvm_vm_get_stats(vm, &r->st1);
    r->charged_at_window = r->cost.charged_us;
    r->enter_at_window = r->enter;
    r->exit_at_window = r->exit;
    if (err)
        run_fail(r, err, "the coordinator's window delay");
    else if ((err = stvm_delay_wait_ms(vm, r->window_ms)))
        run_fail(r, err, "the coordinator's drain delay");
    r->exit_final = r->exit;
    for (long i = 0; i < r->n; i++) {
        stvm_process_info info;
        if (stvm_process_get_info(vm, r->workers[i], &info) == STVM_OK &&
            info.state != STVM_PROCESS_TERMINATED &&
            (err = stvm_process_terminate(vm, r->workers[i])))
            run_fail(r, err, "stvm_process_terminate of a worker");
    }
}

/* A watchdog generous enough for any honest run: spawning, two windows, and in the
 * simulated clock the CPU work of every delay at a pessimistic 20 µs each. */
static unsigned watchdog_seconds(const delay_run_params *p)
{
    double s = 60 + 4.0 * p->window_ms / 1000.0 + (double)p->n * 2e-4;
    if (p->sim)
        s += (double)p->n * 2.0 * p->window_ms / 24.686 * 20e-6;
    return s > 86400 ? 86400 : (unsigned)s;
}

/* The workers (suspended, so none runs before the coordinator starts the window), the
 * coordinator, then the VM until no process is left; errors of the run or of a process
 * as a sentence. */
static int run_vm(stvm_vm *vm, delay_run *r, unsigned watchdog, char *why, size_t whysize)
{
    for (long i = 0; i < r->n; i++) {
        int err = stvm_spawn_suspended(vm, WORKER_PRIORITY, "DelayBenchmark worker",
                                       delay_worker, r, 0, &r->workers[i]);
        if (err) {
            snprintf(why, whysize, "spawning worker %ld of %ld: %s (%s)", i + 1, r->n,
                     stvm_err_name(err), stvm_strerror(err));
            return err;
        }
    }
    int err = stvm_spawn(vm, COORDINATOR_PRIORITY, "DelayBenchmark coordinator",
                         delay_coordinator, r, NULL);
    if (err) {
        snprintf(why, whysize, "spawning the coordinator: %s", stvm_err_name(err));
        return err;
    }
    bench_watchdog(watchdog);
    err = stvm_run(vm);
    bench_watchdog(0);
    if (err) {
        char report[256] = "";
        stvm_vm_blocked_report(vm, report, sizeof report);
        report[strcspn(report, "\n")] = 0;
        snprintf(why, whysize, "stvm_run: %s (first blocked: %s)", stvm_err_name(err),
                 report[0] ? report : "none");
        return err;
    }
    if (r->err)
        snprintf(why, whysize, "%s: %s", r->err_where, stvm_err_name(r->err));
    return r->err;
}

static void fill_sample(const delay_run *r, double *out)
{
    uint64_t count = r->enter_at_window;
    const stvm_stats *a = &r->st0, *b = &r->st1;
#define PER(stat) (count ? (double)(b->stat - a->stat) / (double)count : NAN)
    const double v[DELAY_NFIGURES] = {   /* designated, so the list's order cannot slip */
        [DELAY_delays_per_second] = (double)count * 1000.0 / r->window_ms,
        [DELAY_us_per_delay] = count ? 1e6 / ((double)count * 1000.0 / r->window_ms) : NAN,
        [DELAY_cpu_us_per_delay] = count ? (double)(r->cpu1 - r->cpu0) / 1e3 / (double)count
                                         : NAN,
        [DELAY_boxed_per_delay] = PER(boxed_allocated),
        [DELAY_large_ops_per_delay] = PER(large_int_ops),
        [DELAY_late_p50_us] = (double)bench_hist_quantile(&r->hist, 0.50),
        [DELAY_late_p99_us] = (double)bench_hist_quantile(&r->hist, 0.99),
        [DELAY_late_max_us] = (double)r->hist.max,
        [DELAY_late_min_us] = r->hist.count ? (double)r->late_min : NAN,
        [DELAY_exit_count] = (double)r->exit_final,
        [DELAY_enter_count] = (double)count,
        [DELAY_exit_in_window] = (double)r->exit_at_window,
        [DELAY_timing_loop_passes_per_delay] = PER(timing_loop_passes),
        [DELAY_clock_reads_per_delay] = PER(clock_reads),
        [DELAY_delays_scheduled_per_delay] = PER(delays_scheduled),
        [DELAY_delays_expired_per_delay] = PER(delays_expired),
        [DELAY_context_switches_per_delay] = PER(context_switches),
        [DELAY_idle_sleeps_per_delay] = PER(idle_sleeps),
        /* Each costs this machine's kernel about 16 us of CPU and leaves the caches to
         * whatever ran meanwhile: per second, the figure the timer slack trades against
         * lateness (per window second, as delays_per_second). */
        [DELAY_os_sleeps_per_second] = (double)(b->os_sleeps - a->os_sleeps) * 1000.0 /
                                       r->window_ms,
        [DELAY_timer_fires_per_delay] = PER(timer_fires),
        [DELAY_early_waits] = (double)r->early,
        [DELAY_late_samples] = (double)r->hist.count,
        [DELAY_wall_window_ms] = (double)(r->wall1 - r->wall0) / 1e6,
        [DELAY_cpu_window_ms] = (double)(r->cpu1 - r->cpu0) / 1e6,
        [DELAY_sim_cost_us_per_delay] = r->charge && count ? (double)r->charged_at_window /
                                                             (double)count : NAN,
    };
#undef PER
    memcpy(out, v, sizeof v);
}

int delay_run_one(const delay_run_params *p, double out[DELAY_NFIGURES], char *why,
                  size_t whysize)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.delay_clock = p->repr->delay_clock;
    cfg.smallint_bits = p->repr->smallint_bits;
    cfg.clock = p->sim ? STVM_CLOCK_SIMULATED : STVM_CLOCK_REAL;
    cfg.stack_guard = p->stack_guard;
    cfg.timer_slack_us = (uint32_t)p->repr->timer_slack_us;
    stvm_vm *vm = NULL;
    delay_run *r = calloc(1, sizeof *r);
    int err = r ? stvm_vm_create(&cfg, &vm) : STVM_ENOMEM;
    if (err) {
        snprintf(why, whysize, "stvm_vm_create: %s", stvm_err_name(err));
        free(r);
        return err;
    }
    *r = (delay_run){.table = p->table, .n = p->n, .late_min = INT64_MAX,
                     .charge = p->sim && p->cost && p->cost->on, .cost_model = p->cost,
                     .window_ms = p->window_ms, .workers = calloc((size_t)p->n, sizeof(void *))};
    if (!r->workers) {
        snprintf(why, whysize, "out of memory for %ld worker handles", p->n);
        err = STVM_ENOMEM;
    }
    if (!err && !(err = bench_trace_begin(p->trace, vm, why, whysize)) &&
        !(err = run_vm(vm, r, watchdog_seconds(p), why, whysize))) {
        fill_sample(r, out);
        err = bench_trace_end(p->trace, vm, why, whysize);
    }
    stvm_vm_free(vm);
    free(r->workers);
    free(r);
    return err;
}
