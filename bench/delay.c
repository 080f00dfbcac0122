/*
 * stvm-bench delay: Pharo's DelayBenchmark, run on stvm for each Delay timestamp
 * representation.
 *
 * The workload (KernelTests DelayBenchmark, 2015): 1000 durations of 1..50 ms from
 * Random seed: 42; N worker processes at priority 41 share one index into the table
 * and loop { take the next duration; EnterCount++; wait on a Delay of it; ExitCount++ }
 * while Running; a coordinator at priority 42 resumes them, waits a 1 s Delay (the
 * window), clears Running, waits another 1 s (the drain) and terminates what is left.
 * "Count" is EnterCount at the end of the window. Every (representation, N, repetition)
 * runs in a fresh VM.
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKER_PRIORITY (STVM_PRIORITY_USER_SCHEDULING + 1)        /* 41 */
#define COORDINATOR_PRIORITY (STVM_PRIORITY_USER_SCHEDULING + 2)   /* 42 */
#define MAX_N 1000000L
#define MAX_NS 10000
#define MAX_REPEAT 1000

static const delay_repr known_reprs[] = {
    {"ms-smallint31", STVM_DELAY_CLOCK_MS, 31},
    {"us-largeint31", STVM_DELAY_CLOCK_US, 31},
    {"us-smallint61", STVM_DELAY_CLOCK_US, 61},
    {"ms-smallint61", STVM_DELAY_CLOCK_MS, 61},
};
#define NKNOWN ((int)(sizeof known_reprs / sizeof known_reprs[0]))

typedef struct delay_opts {
    delay_repr reprs[NKNOWN];
    int nreprs;
    long *ns;
    int nns;
    bool sim;
    int repeat;
    int window_ms;
    int cpu;                        /* -1: no pinning */
    bool stack_guard;
    bench_format format;
    const char *plot;
    const char *report;
} delay_opts;

/* ---- one run ------------------------------------------------------------------------- */

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
    while (r->running) {
        int d = r->table[r->index];
        r->index = (r->index + 1) % DELAY_TABLE_SIZE;
        r->enter++;
        uint64_t before = stvm_now_us(vm);
        int err = stvm_delay_wait_ms(vm, d);
        uint64_t after = stvm_now_us(vm);
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
    }
}

static void delay_coordinator(stvm_vm *vm, void *arg)
{
    delay_run *r = arg;
    r->running = true;
    stvm_get_stats(vm, &r->st0);
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
    stvm_get_stats(vm, &r->st1);
    r->enter_at_window = r->enter;
    r->exit_at_window = r->exit;
    if (err)
        run_fail(r, err, "the coordinator's window delay");
    else if ((err = stvm_delay_wait_ms(vm, r->window_ms)))
        run_fail(r, err, "the coordinator's drain delay");
    r->exit_final = r->exit;
    for (long i = 0; i < r->n; i++) {
        stvm_process_info info;
        if (stvm_process_info_get(vm, r->workers[i], &info) == STVM_OK &&
            info.state != STVM_PROCESS_TERMINATED) {
            err = stvm_process_terminate(vm, r->workers[i]);
            if (err)
                run_fail(r, err, "stvm_process_terminate of a worker");
        }
    }
}

static double per(uint64_t a, uint64_t b, uint64_t count)
{
    return count ? (double)(b - a) / (double)count : NAN;
}

/* A watchdog generous enough for any honest run: spawning, two windows, and in the
 * simulated clock the CPU work of every delay at a pessimistic 20 µs each. */
static unsigned watchdog_seconds(const delay_opts *o, long n)
{
    double s = 60 + 4.0 * o->window_ms / 1000.0 + (double)n * 2e-4;
    if (o->sim)
        s += (double)n * 2.0 * o->window_ms / 24.686 * 20e-6;
    return s > 86400 ? 86400 : (unsigned)s;
}

static int run_one(const delay_opts *o, const delay_repr *rp, long n, const int *table,
                   delay_sample *out, char *why, size_t whysize)
{
    stvm_config cfg;
    stvm_config_init(&cfg);
    cfg.delay_clock = rp->delay_clock;
    cfg.smallint_bits = rp->smallint_bits;
    cfg.clock = o->sim ? STVM_CLOCK_SIMULATED : STVM_CLOCK_REAL;
    cfg.stack_guard = o->stack_guard;
    stvm_vm *vm = NULL;
    delay_run *r = calloc(1, sizeof *r);
    int err = r ? stvm_vm_new(&vm, &cfg) : STVM_ENOMEM;
    if (err) {
        snprintf(why, whysize, "stvm_vm_new: %s", stvm_err_name(err));
        free(r);
        return err;
    }
    r->table = table;
    r->n = n;
    r->late_min = INT64_MAX;
    r->window_ms = o->window_ms;
    r->workers = calloc((size_t)n, sizeof *r->workers);
    if (!r->workers) {
        snprintf(why, whysize, "out of memory for %ld worker handles", n);
        err = STVM_ENOMEM;
        goto done;
    }
    for (long i = 0; i < n; i++) {
        err = stvm_spawn_suspended(vm, WORKER_PRIORITY, "DelayBenchmark worker", delay_worker,
                                   r, 0, &r->workers[i]);
        if (err) {
            if (err == STVM_ENOMEM)
                snprintf(why, whysize,
                         "spawning worker %ld of %ld: STVM_ENOMEM; with guard pages each "
                         "process takes 2 memory-map entries and vm.max_map_count is %ld: "
                         "raise it (scripts/install-deps.sh does it as root) or pass "
                         "--no-stack-guard", i + 1, n, bench_max_map_count());
            else
                snprintf(why, whysize, "spawning worker %ld: %s", i + 1, stvm_err_name(err));
            goto done;
        }
    }
    err = stvm_spawn(vm, COORDINATOR_PRIORITY, "DelayBenchmark coordinator", delay_coordinator,
                     r, NULL);
    if (err) {
        snprintf(why, whysize, "spawning the coordinator: %s", stvm_err_name(err));
        goto done;
    }
    bench_watchdog(watchdog_seconds(o, n));
    err = stvm_run(vm);
    bench_watchdog(0);
    if (err) {
        char report[256] = "";
        stvm_blocked_report(vm, report, sizeof report);
        report[strcspn(report, "\n")] = 0;
        snprintf(why, whysize, "stvm_run: %s (first blocked: %s)", stvm_err_name(err),
                 report[0] ? report : "none");
        goto done;
    }
    if (r->err) {
        err = r->err;
        snprintf(why, whysize, "%s: %s", r->err_where, stvm_err_name(err));
        goto done;
    }

    memset(out, 0, sizeof *out);
    uint64_t count = r->enter_at_window;
    out->enter_count = count;
    out->exit_in_window = r->exit_at_window;
    out->exit_count = r->exit_final;
    out->delays_per_second = (double)count * 1000.0 / o->window_ms;
    out->wall_window_ms = (double)(r->wall1 - r->wall0) / 1e6;
    out->cpu_window_ms = (double)(r->cpu1 - r->cpu0) / 1e6;
    out->cpu_us_per_delay = count ? (double)(r->cpu1 - r->cpu0) / 1e3 / (double)count : NAN;
    out->boxed_per_delay = per(r->st0.boxed_allocated, r->st1.boxed_allocated, count);
    out->large_ops_per_delay = per(r->st0.large_int_ops, r->st1.large_int_ops, count);
    out->loop_passes_per_delay = per(r->st0.timing_loop_passes, r->st1.timing_loop_passes,
                                     count);
    out->clock_reads_per_delay = per(r->st0.clock_reads, r->st1.clock_reads, count);
    out->scheduled_per_delay = per(r->st0.delays_scheduled, r->st1.delays_scheduled, count);
    out->expired_per_delay = per(r->st0.delays_expired, r->st1.delays_expired, count);
    out->switches_per_delay = per(r->st0.context_switches, r->st1.context_switches, count);
    out->idle_sleeps_per_delay = per(r->st0.idle_sleeps, r->st1.idle_sleeps, count);
    out->timer_fires_per_delay = per(r->st0.timer_fires, r->st1.timer_fires, count);
    out->late_samples = r->hist.count;
    out->early_samples = r->early;
    out->late_p50_us = (double)bench_hist_quantile(&r->hist, 0.50);
    out->late_p99_us = (double)bench_hist_quantile(&r->hist, 0.99);
    out->late_max_us = (double)r->hist.max;
    out->late_min_us = r->hist.count ? (double)r->late_min : NAN;
    err = STVM_OK;
done:
    stvm_vm_free(vm);
    free(r->workers);
    free(r);
    return err;
}

/* ---- medians over repetitions ------------------------------------------------------- */

#define FIELD(name, integer) {#name, offsetof(delay_sample, name), integer}
const delay_field delay_fields[] = {
    FIELD(delays_per_second, false),   FIELD(enter_count, true),
    FIELD(exit_in_window, true),       FIELD(exit_count, true),
    FIELD(cpu_us_per_delay, false),    FIELD(boxed_per_delay, false),
    FIELD(large_ops_per_delay, false), FIELD(loop_passes_per_delay, false),
    FIELD(clock_reads_per_delay, false), FIELD(scheduled_per_delay, false),
    FIELD(expired_per_delay, false),   FIELD(switches_per_delay, false),
    FIELD(idle_sleeps_per_delay, false), FIELD(timer_fires_per_delay, false),
    FIELD(late_p50_us, false),         FIELD(late_p99_us, false),
    FIELD(late_max_us, false),         FIELD(late_min_us, false),
    FIELD(late_samples, true),         FIELD(early_samples, true),
    FIELD(wall_window_ms, false),      FIELD(cpu_window_ms, false),
};
const size_t delay_nfields = sizeof delay_fields / sizeof delay_fields[0];

double delay_field_get(const delay_sample *s, const delay_field *f)
{
    const char *p = (const char *)s + f->offset;
    if (f->integer) {
        uint64_t v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    double d;
    memcpy(&d, p, sizeof d);
    return d;
}

void delay_field_set(delay_sample *s, const delay_field *f, double v)
{
    char *p = (char *)s + f->offset;
    if (f->integer) {
        uint64_t u = isfinite(v) && v > 0 ? (uint64_t)llround(v) : 0;
        memcpy(p, &u, sizeof u);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

static void cell_median(delay_cell *c)
{
    memset(&c->median, 0, sizeof c->median);
    if (!c->nsamples)
        return;
    double v[MAX_REPEAT];
    for (size_t f = 0; f < delay_nfields; f++) {
        for (int k = 0; k < c->nsamples; k++)
            v[k] = delay_field_get(&c->samples[k], &delay_fields[f]);
        delay_field_set(&c->median, &delay_fields[f], bench_median(v, (size_t)c->nsamples));
    }
}

/* ---- options ------------------------------------------------------------------------- */

static void delay_help(FILE *f)
{
    fprintf(f,
            "usage: stvm-bench delay [OPTIONS]\n"
            "  --repr LIST         representations, comma-separated (default "
            "ms-smallint31,us-largeint31,us-smallint61);\n"
            "                      also ms-smallint61\n"
            "  --concurrency LIST  N values: 1000,2000 or ranges A..B:STEP, mixed "
            "(default 1000..10000:1000);\n"
            "                      each 1..1000000\n"
            "  --clock real|sim    wall clock (default) or simulated time (pure CPU cost)\n"
            "  --repeat K          repetitions per cell, medians reported (default 1)\n"
            "  --window-ms W       window and drain length in ms (default 1000)\n"
            "  --cpu N             pin to CPU N (default 0; -1 = no pinning)\n"
            "  --format F          table (default), csv, json or markdown\n"
            "  --plot FILE         write FILE.gp/.dat beside FILE and run gnuplot for a PNG\n"
            "  --report FILE       also write the Markdown report to FILE\n"
            "  --no-stack-guard    no guard page below each stack (fewer memory maps)\n");
}

static bool parse_reprs(const char *s, delay_opts *o)
{
    o->nreprs = 0;
    char buf[256];
    if (!s || strlen(s) >= sizeof buf)
        return false;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *rest = buf, *t; (t = strsep(&rest, ",")) != NULL;) {
        int k = -1;
        for (int i = 0; i < NKNOWN; i++)
            if (!strcmp(t, known_reprs[i].name))
                k = i;
        if (k < 0) {
            bench_usage_error("delay ",
                              "unknown representation '%s' (known: ms-smallint31, "
                              "us-largeint31, us-smallint61, ms-smallint61)", t);
            return false;
        }
        for (int i = 0; i < o->nreprs; i++) {
            if (!strcmp(o->reprs[i].name, t)) {
                bench_usage_error("delay ", "representation '%s' given twice", t);
                return false;
            }
        }
        o->reprs[o->nreprs++] = known_reprs[k];
    }
    if (!o->nreprs) {
        bench_usage_error("delay ", "--repr wants at least one representation");
        return false;
    }
    return true;
}

static bool push_n(delay_opts *o, long long v)
{
    if (o->nns >= MAX_NS) {
        bench_usage_error("delay ", "--concurrency lists more than %d values", MAX_NS);
        return false;
    }
    o->ns[o->nns++] = (long)v;
    return true;
}

/* "1000,2000", "1000..10000:1000", "10,100..1000:100"; STEP defaults to 1. */
static bool parse_concurrency(const char *s, delay_opts *o)
{
    o->nns = 0;
    if (!s || !*s) {
        bench_usage_error("delay ", "--concurrency wants a list such as 1000,2000 or "
                                    "1000..10000:1000");
        return false;
    }
    char *buf = strdup(s);
    if (!buf)
        return false;
    bool ok = true;
    for (char *rest = buf, *t; ok && (t = strsep(&rest, ",")) != NULL;) {
        char *dots = strstr(t, "..");
        long long a, b, step = 1;
        if (!dots) {
            if (!bench_parse_ll(t, 1, MAX_N, &a)) {
                bench_usage_error("delay ", "--concurrency: '%s' is not a number in "
                                            "1..1000000", t);
                ok = false;
                break;
            }
            ok = push_n(o, a);
            continue;
        }
        *dots = 0;
        char *hi = dots + 2, *colon = strchr(hi, ':');
        if (colon)
            *colon = 0;
        if (!bench_parse_ll(t, 1, MAX_N, &a) || !bench_parse_ll(hi, 1, MAX_N, &b) ||
            (colon && !bench_parse_ll(colon + 1, 1, MAX_N, &step)) || a > b) {
            bench_usage_error("delay ", "--concurrency: bad range (want A..B:STEP with "
                                        "1 <= A <= B <= 1000000, STEP >= 1)");
            ok = false;
            break;
        }
        for (long long v = a; v <= b && ok; v += step)
            ok = push_n(o, v);
    }
    free(buf);
    if (ok && !o->nns) {
        bench_usage_error("delay ", "--concurrency wants at least one value");
        ok = false;
    }
    return ok;
}

/* ---- the command --------------------------------------------------------------------- */

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

int delay_main(int argc, char **argv)
{
    delay_opts o = {.repeat = 1, .window_ms = 1000, .cpu = 0, .stack_guard = true,
                    .format = FMT_TABLE};
    long ns_store[MAX_NS];
    o.ns = ns_store;
    o.reprs[0] = known_reprs[0];
    o.reprs[1] = known_reprs[1];
    o.reprs[2] = known_reprs[2];
    o.nreprs = 3;
    for (long v = 1000; v <= 10000; v += 1000)
        o.ns[o.nns++] = v;

    for (int i = 1; i < argc;) {
        const char *v = NULL;
        long long n;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            delay_help(stdout);
            return BENCH_EXIT_OK;
        } else if (!strcmp(argv[i], "--no-stack-guard")) {
            o.stack_guard = false;
            i++;
        } else if (bench_flag(argc, argv, &i, "--repr", &v)) {
            if (!parse_reprs(v, &o))
                return BENCH_EXIT_USAGE;
        } else if (bench_flag(argc, argv, &i, "--concurrency", &v)) {
            if (!parse_concurrency(v, &o))
                return BENCH_EXIT_USAGE;
        } else if (bench_flag(argc, argv, &i, "--clock", &v)) {
            if (v && !strcmp(v, "real"))
                o.sim = false;
            else if (v && !strcmp(v, "sim"))
                o.sim = true;
            else
                return bench_usage_error("delay ", "--clock wants real or sim, not '%s'",
                                         v ? v : "");
        } else if (bench_flag(argc, argv, &i, "--repeat", &v)) {
            if (!bench_parse_ll(v, 1, MAX_REPEAT, &n))
                return bench_usage_error("delay ", "--repeat wants 1..%d, not '%s'",
                                         MAX_REPEAT, v ? v : "");
            o.repeat = (int)n;
        } else if (bench_flag(argc, argv, &i, "--window-ms", &v)) {
            if (!bench_parse_ll(v, 1, 3600000, &n))
                return bench_usage_error("delay ", "--window-ms wants 1..3600000, not '%s'",
                                         v ? v : "");
            o.window_ms = (int)n;
        } else if (bench_flag(argc, argv, &i, "--cpu", &v)) {
            if (!bench_parse_ll(v, -1, 1023, &n))
                return bench_usage_error("delay ", "--cpu wants a CPU number or -1, not '%s'",
                                         v ? v : "");
            o.cpu = (int)n;
        } else if (bench_flag(argc, argv, &i, "--format", &v)) {
            if (!bench_parse_format(v, &o.format))
                return bench_usage_error("delay ",
                                         "--format wants table, csv, json or markdown, "
                                         "not '%s'", v ? v : "");
        } else if (bench_flag(argc, argv, &i, "--plot", &v)) {
            if (!v || !*v)
                return bench_usage_error("delay ", "--plot wants a file name");
            o.plot = v;
        } else if (bench_flag(argc, argv, &i, "--report", &v)) {
            if (!v || !*v)
                return bench_usage_error("delay ", "--report wants a file name");
            o.report = v;
        } else {
            return bench_usage_error("delay ", "unknown option '%s'", argv[i]);
        }
    }
    if (o.cpu >= 0) {
        int err = bench_pin_cpu(o.cpu);
        if (err) {
            fprintf(stderr, "stvm-bench: cannot pin to CPU %d: %s\n", o.cpu, strerror(-err));
            return BENCH_EXIT_USAGE;
        }
    }
    long need_maps = 0;
    for (int i = 0; i < o.nns; i++)
        if (o.ns[i] > need_maps)
            need_maps = o.ns[i];
    long max_maps = bench_max_map_count();
    if (o.stack_guard && max_maps > 0 && 2 * need_maps + 1000 > max_maps)
        fprintf(stderr, "stvm-bench: note: N=%ld needs about %ld memory maps with guard "
                        "pages but vm.max_map_count is %ld; spawning will fail. Raise it "
                        "(scripts/install-deps.sh does it as root) or pass --no-stack-guard\n",
                need_maps, 2 * need_maps, max_maps);

    int table[DELAY_TABLE_SIZE];   /* verified by main at start-up */
    delay_table_generate(table);
    long sum = 0;
    for (int i = 0; i < DELAY_TABLE_SIZE; i++)
        sum += table[i];

    delay_report rep = {.reprs = o.reprs, .nreprs = o.nreprs, .ns = o.ns, .nns = o.nns,
                        .repeat = o.repeat, .window_ms = o.window_ms, .sim = o.sim,
                        .cpu = o.cpu, .table_mean_ms = (double)sum / DELAY_TABLE_SIZE};
    size_t ncells = (size_t)o.nns * (size_t)o.nreprs;
    rep.cells = calloc(ncells, sizeof *rep.cells);
    delay_sample *samples = calloc(ncells * (size_t)o.repeat, sizeof *samples);
    if (!rep.cells || !samples) {
        fprintf(stderr, "stvm-bench: out of memory\n");
        free(rep.cells);
        free(samples);
        return BENCH_EXIT_FAIL;
    }
    for (int ni = 0; ni < o.nns; ni++) {
        for (int ri = 0; ri < o.nreprs; ri++) {
            delay_cell *c = &rep.cells[ni * o.nreprs + ri];
            c->repr = ri;
            c->n = o.ns[ni];
            c->samples = samples + (size_t)(ni * o.nreprs + ri) * (size_t)o.repeat;
        }
    }

    /* Representations are interleaved within each N and repetition, so drifting noise
     * (frequency, other load) hits them alike. */
    bool tty = isatty(2);
    int total = o.nns * o.repeat * o.nreprs, done = 0, failed = 0;
    int width = snprintf(NULL, 0, "%d", total);
    for (int ni = 0; ni < o.nns; ni++) {
        for (int k = 0; k < o.repeat; k++) {
            for (int ri = 0; ri < o.nreprs; ri++) {
                delay_cell *c = &rep.cells[ni * o.nreprs + ri];
                done++;
                if (tty)
                    progress("[%*d/%d] %s N=%ld rep %d/%d", width, done, total,
                             o.reprs[ri].name, c->n, k + 1, o.repeat);
                if (c->failed)
                    continue;
                char why[sizeof c->error] = "";
                int err = run_one(&o, &o.reprs[ri], c->n, table, &c->samples[c->nsamples],
                                  why, sizeof why);
                if (err) {
                    if (tty)
                        fputc('\n', stderr);
                    fprintf(stderr, "stvm-bench: %s N=%ld rep %d failed: %s\n",
                            o.reprs[ri].name, c->n, k + 1, why);
                    c->failed = true;
                    snprintf(c->error, sizeof c->error, "%s", why);
                    failed++;
                    continue;
                }
                c->nsamples++;
            }
        }
    }
    if (tty)
        progress("%d runs done\n", done);
    for (size_t i = 0; i < ncells; i++)
        cell_median(&rep.cells[i]);

    switch (o.format) {
    case FMT_CSV:
        delay_print_csv(stdout, &rep);
        break;
    case FMT_JSON:
        delay_print_json(stdout, &rep);
        break;
    case FMT_MARKDOWN:
        delay_print_markdown(stdout, &rep);
        break;
    case FMT_TABLE:
        delay_print_text(stdout, &rep);
        break;
    }
    fflush(stdout);
    int rc = failed ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
    if (o.report) {
        FILE *f = fopen(o.report, "w");
        if (!f) {
            fprintf(stderr, "stvm-bench: cannot write %s: %s\n", o.report, strerror(errno));
            rc = BENCH_EXIT_FAIL;
        } else {
            delay_print_markdown(f, &rep);
            if (fclose(f) != 0) {
                fprintf(stderr, "stvm-bench: cannot write %s\n", o.report);
                rc = BENCH_EXIT_FAIL;
            } else {
                fprintf(stderr, "stvm-bench: report written to %s\n", o.report);
            }
        }
    }
    if (o.plot && delay_plot(o.plot, &rep) != 0)
        rc = BENCH_EXIT_FAIL;
    free(samples);
    free(rep.cells);
    return rc;
}
