/*
 * stvm-bench delay: the command. Its options, the sweep over N, repetitions and
 * representations (each run in delay_run.c), and where the report goes (delay_render.h).
 * It is the one file that sees both measurement and rendering.
 */
#include "bench.h"
#include "delay_render.h"
#include "delay_report.h"
#include "delay_run.h"
#include "random.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N 1000000L
#define MAX_NS 10000

#define DEFAULT_SLACK_US 50   /* stvm_config's default timer slack */
#define MAX_SLACKS 8

static const delay_repr known_reprs[] = {
    {"ms-smallint31", STVM_DELAY_CLOCK_MS, 31, DEFAULT_SLACK_US},
    {"us-largeint31", STVM_DELAY_CLOCK_US, 31, DEFAULT_SLACK_US},
    {"us-smallint61", STVM_DELAY_CLOCK_US, 61, DEFAULT_SLACK_US},
    {"ms-smallint61", STVM_DELAY_CLOCK_MS, 61, DEFAULT_SLACK_US},
};
#define NKNOWN ((int)(sizeof known_reprs / sizeof known_reprs[0]))

typedef struct delay_opts {
    delay_repr reprs[NKNOWN * MAX_SLACKS];   /* each representation at each slack */
    int nreprs;
    int slacks[MAX_SLACKS];
    int nslacks;
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
    bench_trace trace;
} delay_opts;

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
            "  --no-stack-guard    no guard region below each stack, no overflow check\n"
            "  --timer-slack-us LIST  the VMs' timer slack, comma-separated, 0..1000 (default\n"
            "                      50); each representation runs at each\n");
    bench_trace_help(f, 22, "the run's VM (one --repr, one --concurrency value and one\n"
                            "--timer-slack-us value)");
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

/* "0,50": timer slacks in us. */
static bool parse_slacks(const char *s, delay_opts *o)
{
    long long v[MAX_SLACKS];
    int n = bench_parse_numbers(s, 0, 1000, v, MAX_SLACKS);
    if (n < 0) {
        bench_usage_error("delay ", "--timer-slack-us wants a list of at most %d numbers in "
                                    "0..1000, such as 0,50, not '%s'", MAX_SLACKS, s ? s : "");
        return false;
    }
    o->nslacks = n;
    for (int k = 0; k < n; k++)
        o->slacks[k] = (int)v[k];
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

/* One item of --concurrency: N, or A..B:STEP (STEP defaults to 1). */
static bool parse_concurrency_item(char *t, delay_opts *o)
{
    char *dots = strstr(t, "..");
    long long a, b, step = 1;
    if (!dots) {
        if (bench_parse_ll(t, 1, MAX_N, &a))
            return push_n(o, a);
        bench_usage_error("delay ", "--concurrency: '%s' is not a number in 1..1000000", t);
        return false;
    }
    *dots = 0;
    char *hi = dots + 2, *colon = strchr(hi, ':');
    if (colon)
        *colon = 0;
    if (!bench_parse_ll(t, 1, MAX_N, &a) || !bench_parse_ll(hi, 1, MAX_N, &b) ||
        (colon && !bench_parse_ll(colon + 1, 1, MAX_N, &step)) || a > b) {
        bench_usage_error("delay ", "--concurrency: bad range (want A..B:STEP with "
                                    "1 <= A <= B <= 1000000, STEP >= 1)");
        return false;
    }
    bool ok = true;
    for (long long v = a; v <= b && ok; v += step)
        ok = push_n(o, v);
    return ok;
}

/* "1000,2000", "1000..10000:1000", "10,100..1000:100". */
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
    for (char *rest = buf, *t; ok && (t = strsep(&rest, ",")) != NULL;)
        ok = parse_concurrency_item(t, o);
    free(buf);
    if (ok && !o->nns) {
        bench_usage_error("delay ", "--concurrency wants at least one value");
        ok = false;
    }
    return ok;
}

/* The flags with a number, and the end of the list: anything else is unknown. */
static int parse_number_option(int argc, char **argv, int *i, delay_opts *o)
{
    const char *v = NULL;
    long long n;
    if (bench_flag(argc, argv, i, "--repeat", &v)) {
        if (!bench_parse_ll(v, 1, DELAY_MAX_REPEAT, &n))
            return bench_usage_error("delay ", "--repeat wants 1..%d, not '%s'",
                                     DELAY_MAX_REPEAT, v ? v : "");
        o->repeat = (int)n;
        return BENCH_NEXT;
    }
    if (bench_flag(argc, argv, i, "--window-ms", &v)) {
        if (!bench_parse_ll(v, 1, 3600000, &n))
            return bench_usage_error("delay ", "--window-ms wants 1..3600000, not '%s'",
                                     v ? v : "");
        o->window_ms = (int)n;
        return BENCH_NEXT;
    }
    int rc = bench_trace_option(argc, argv, i, "delay ", &o->trace);
    if (rc == BENCH_NOT_MINE)
        rc = bench_common_option(argc, argv, i, "delay ", &o->cpu, &o->format);
    if (rc == BENCH_NOT_MINE)
        return bench_usage_error("delay ", "unknown option '%s'", argv[*i]);
    return rc;
}

static int parse_file_option(const char *flag, const char *v, const char **out)
{
    if (!v || !*v)
        return bench_usage_error("delay ", "%s wants a file name", flag);
    *out = v;
    return BENCH_NEXT;
}

static int parse_option(int argc, char **argv, int *i, delay_opts *o)
{
    const char *v = NULL;
    if (!strcmp(argv[*i], "--help") || !strcmp(argv[*i], "-h")) {
        delay_help(stdout);
        return BENCH_EXIT_OK;
    }
    if (!strcmp(argv[*i], "--no-stack-guard")) {
        o->stack_guard = false;
        (*i)++;
        return BENCH_NEXT;
    }
    if (bench_flag(argc, argv, i, "--repr", &v))
        return parse_reprs(v, o) ? BENCH_NEXT : BENCH_EXIT_USAGE;
    if (bench_flag(argc, argv, i, "--concurrency", &v))
        return parse_concurrency(v, o) ? BENCH_NEXT : BENCH_EXIT_USAGE;
    if (bench_flag(argc, argv, i, "--timer-slack-us", &v))
        return parse_slacks(v, o) ? BENCH_NEXT : BENCH_EXIT_USAGE;
    if (bench_flag(argc, argv, i, "--clock", &v)) {
        if (!v || (strcmp(v, "real") && strcmp(v, "sim")))
            return bench_usage_error("delay ", "--clock wants real or sim, not '%s'",
                                     v ? v : "");
        o->sim = !strcmp(v, "sim");
        return BENCH_NEXT;
    }
    if (bench_flag(argc, argv, i, "--plot", &v))
        return parse_file_option("--plot", v, &o->plot);
    if (bench_flag(argc, argv, i, "--report", &v))
        return parse_file_option("--report", v, &o->report);
    return parse_number_option(argc, argv, i, o);
}

/* Each representation at each slack, the slack in the name when there are several. */
static void expand_slacks(delay_opts *o)
{
    delay_repr base[NKNOWN];
    int nbase = o->nreprs;
    memcpy(base, o->reprs, (size_t)nbase * sizeof *base);
    o->nreprs = 0;
    for (int b = 0; b < nbase; b++) {
        for (int k = 0; k < o->nslacks; k++) {
            delay_repr *v = &o->reprs[o->nreprs++];
            *v = base[b];
            v->timer_slack_us = o->slacks[k];
            if (o->nslacks > 1)
                snprintf(v->name, sizeof v->name, "%.20s@slack%d", base[b].name, o->slacks[k]);
        }
    }
}

/* The defaults (three representations, N = 1000..10000:1000), then the flags. */
static int parse_args(int argc, char **argv, delay_opts *o)
{
    for (int k = 0; k < 3; k++)
        o->reprs[k] = known_reprs[k];
    o->nreprs = 3;
    o->slacks[0] = DEFAULT_SLACK_US;
    o->nslacks = 1;
    for (long v = 1000; v <= 10000; v += 1000)
        o->ns[o->nns++] = v;
    for (int i = 1; i < argc;) {
        int rc = parse_option(argc, argv, &i, o);
        if (rc != BENCH_NEXT)
            return rc;
    }
    expand_slacks(o);
    return bench_trace_one_cell(&o->trace, "delay ", (long)o->nreprs * o->nns * o->repeat,
                                "give one --repr, one --concurrency value, one "
                                "--timer-slack-us value and --repeat 1");
}

/* ---- the sweep ----------------------------------------------------------------------- */

/* The report's cells, each with room for every repetition; false if out of memory. */
static bool report_alloc(const delay_opts *o, const int *table, delay_report *rep)
{
    long sum = 0;
    for (int i = 0; i < DELAY_TABLE_SIZE; i++)
        sum += table[i];
    *rep = (delay_report){.reprs = o->reprs, .nreprs = o->nreprs, .ns = o->ns,
                          .nns = o->nns, .repeat = o->repeat, .window_ms = o->window_ms,
                          .sim = o->sim, .cpu = o->cpu,
                          .table_mean_ms = (double)sum / DELAY_TABLE_SIZE};
    size_t ncells = (size_t)o->nns * (size_t)o->nreprs;
    rep->cells = calloc(ncells, sizeof *rep->cells);
    delay_sample *samples = calloc(ncells * (size_t)o->repeat, sizeof *samples);
    if (!rep->cells || !samples) {
        free(rep->cells);
        free(samples);
        return false;
    }
    for (size_t i = 0; i < ncells; i++) {
        rep->cells[i].repr = (int)(i % (size_t)o->nreprs);
        rep->cells[i].n = o->ns[i / (size_t)o->nreprs];
        rep->cells[i].samples = samples + i * (size_t)o->repeat;
    }
    return true;
}

static void report_free(delay_report *rep)
{
    if (rep->cells)
        free(rep->cells[0].samples);
    free(rep->cells);
}

/* Repetition k of cell c; a failure is kept in the cell, which runs no more. */
static bool run_cell(const delay_opts *o, const int *table, delay_cell *c, int k, bool tty)
{
    const delay_repr *rp = &o->reprs[c->repr];
    delay_run_params p = {.repr = rp, .n = c->n, .table = table, .window_ms = o->window_ms,
                          .sim = o->sim, .stack_guard = o->stack_guard, .trace = &o->trace};
    char why[sizeof c->error] = "";
    if (delay_run_one(&p, &c->samples[c->nsamples], why, sizeof why) == STVM_OK) {
        c->nsamples++;
        return true;
    }
    if (tty)
        fputc('\n', stderr);
    fprintf(stderr, "stvm-bench: %s N=%ld rep %d failed: %s\n", rp->name, c->n, k + 1, why);
    c->failed = true;
    snprintf(c->error, sizeof c->error, "%s", why);
    return false;
}

/* Representations are interleaved within each N and repetition, so drifting noise
 * (frequency, other load) hits them alike. Answers the number of failed runs. */
static int sweep(const delay_opts *o, const int *table, delay_report *rep)
{
    bool tty = bench_progress_on();
    int total = o->nns * o->repeat * o->nreprs, done = 0, failed = 0;
    int width = snprintf(NULL, 0, "%d", total);
    for (int ni = 0; ni < o->nns; ni++) {
        for (int k = 0; k < o->repeat; k++) {
            for (int ri = 0; ri < o->nreprs; ri++) {
                delay_cell *c = &rep->cells[ni * o->nreprs + ri];
                done++;
                if (tty)
                    bench_progress("[%*d/%d] %s N=%ld rep %d/%d", width, done, total,
                                   o->reprs[ri].name, c->n, k + 1, o->repeat);
                if (!c->failed && !run_cell(o, table, c, k, tty))
                    failed++;
            }
        }
    }
    if (tty)
        bench_progress("%d runs done\n", done);
    for (int i = 0; i < o->nns * o->nreprs; i++)
        delay_cell_median(&rep->cells[i]);
    return failed;
}

/* ---- the report ---------------------------------------------------------------------- */

static void print_report(FILE *f, bench_format format, const delay_report *rep)
{
    switch (format) {
    case FMT_CSV:
        delay_print_csv(f, rep);
        break;
    case FMT_JSON:
        delay_print_json(f, rep);
        break;
    case FMT_MARKDOWN:
        delay_print_markdown(f, rep);
        break;
    case FMT_TABLE:
        delay_print_text(f, rep);
        break;
    }
}

static void write_markdown(FILE *f, const void *rep)
{
    delay_print_markdown(f, rep);
}

int delay_main(int argc, char **argv)
{
    long ns_store[MAX_NS];
    delay_opts o = {.repeat = 1, .window_ms = 1000, .cpu = 0, .stack_guard = true,
                    .format = FMT_TABLE, .ns = ns_store,
                    .trace.events = BENCH_TRACE_EVENTS};
    int rc = parse_args(argc, argv, &o);
    if (rc != BENCH_NEXT)
        return rc;
    if ((rc = bench_pin_option(o.cpu)) != BENCH_EXIT_OK)
        return rc;

    int table[DELAY_TABLE_SIZE];   /* verified by main at start-up */
    delay_table_generate(table);
    delay_report rep;
    if (!report_alloc(&o, table, &rep)) {
        fprintf(stderr, "stvm-bench: out of memory\n");
        return BENCH_EXIT_FAIL;
    }
    rc = sweep(&o, table, &rep) ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
    print_report(stdout, o.format, &rep);
    fflush(stdout);
    if (o.report && !bench_write_report(o.report, write_markdown, &rep))
        rc = BENCH_EXIT_FAIL;
    if (o.plot && delay_plot(o.plot, &rep) != 0)
        rc = BENCH_EXIT_FAIL;
    report_free(&rep);
    return rc;
}
