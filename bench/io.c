/*
 * stvm-bench io: what waiting for the network costs, in each idle mode.
 *
 *  - pingpong: 1-byte round trips over loopback TCP between two green processes of one
 *    VM;
 *  - thread-pair: the same between a green process and an OS thread with a blocking
 *    socket;
 *  - os-threads: the same between two OS threads with blocking sockets, the reference
 *    (run once per repetition whenever a ping-pong case is asked, or when named);
 *  - many: N client processes each holding a connection to an echo server in the same
 *    VM, exchanging messages through SocketStreams; throughput and resident memory per
 *    connection.
 * The cells of a repetition run one after the other (the reference, then each idle mode's
 * pingpong and thread-pair, then many), so that noise hits them alike; medians over the
 * repetitions are reported.
 */
#include "bench.h"
#include "io_measure.h"
#include "io_render.h"
#include "io_report.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MAX_CONNECTIONS 21844   /* 3 external semaphores per socket: the server VM's
                                   sockets and its listener in a table of 65536 */
#define FD_RESERVE 16           /* listener, epoll, eventfd, pipes, /proc reads, spare */

typedef struct io_opts {
    unsigned cases;             /* io_case bits */
    int modes[3], nmodes;
    int repeat;
    long long round_trips;
    long long max_seconds;
    long connections;
    int messages, message_bytes;
    int64_t timeout_ms;
    int cpu;
    bool cases_given;
    bench_format format;
    bench_trace trace;
} io_opts;

/* ---- options ---------------------------------------------------------------------------- */

static void io_help(FILE *f)
{
    fprintf(f,
            "usage: stvm-bench io [OPTIONS]\n"
            "  --case LIST          pingpong, thread-pair, many, os-threads (default\n"
            "                       pingpong,thread-pair,many; os-threads, the reference,\n"
            "                       runs whenever a ping-pong case does)\n"
            "  --idle-mode LIST     poll, legacy, spin (default all three)\n"
            "  --repeat K           repetitions, medians reported (default 3)\n"
            "  --rounds N           round trips per ping-pong cell (default 20000)\n"
            "  --max-seconds S      time limit of a ping-pong cell's timed part (default 3)\n"
            "  --connections N      many: connections, one end in this VM, the other in a\n"
            "                       child process's (default 10000, at most %d)\n"
            "  --messages M         many: messages each client exchanges (default 10)\n"
            "  --message-bytes B    many: message size (default 64, at most 512)\n"
            "  --timeout-ms T       every socket wait's timeout in ms, 1..3600000, or -1 for\n"
            "                       none (default); with one, each wait that blocks is\n"
            "                       Pharo's timed wait through the Delay scheduler\n"
            "  --cpu N              pin the VM and the peer threads to CPU N (default 0;\n"
            "                       -1 = no pinning)\n"
            "  --format F           table (default), csv, json or markdown\n",
            MAX_CONNECTIONS);
    bench_trace_help(f, 23, "one case in one idle mode: pingpong's VM (both processes),\n"
                            "thread-pair's VM side (the OS thread has no VM), many's\n"
                            "server VM (the clients' VM runs in the forked child and is\n"
                            "not traced); the os-threads reference has no VM and is not");
}

static int list_option(int argc, char **argv, int *i, io_opts *o)
{
    const char *v = NULL;
    if (bench_flag(argc, argv, i, "--case", &v)) {
        static const char *const names[] = {"pingpong", "thread-pair", "os-threads", "many"};
        long bits = bench_parse_names(v, names, 4);
        if (bits < 0)
            return bench_usage_error("io ", "--case wants a list of pingpong, thread-pair, "
                                            "many, os-threads, not '%s'", v ? v : "");
        o->cases = (unsigned)bits;   /* the bits are io_case's, in its order */
        return BENCH_NEXT;
    }
    if (bench_flag(argc, argv, i, "--idle-mode", &v)) {
        static const char *const names[] = {"poll", "legacy", "spin"};
        long bits = bench_parse_names(v, names, 3);
        if (bits < 0)
            return bench_usage_error("io ", "--idle-mode wants a list of poll, legacy, spin, "
                                            "not '%s'", v ? v : "");
        o->nmodes = 0;
        for (int m = 0; m < 3; m++)   /* names[m] is STVM_IDLE_* m */
            if (bits & (1L << m))
                o->modes[o->nmodes++] = m;
        return BENCH_NEXT;
    }
    return BENCH_NOT_MINE;
}

static int parse_option(int argc, char **argv, int *i, io_opts *o)
{
    if (!strcmp(argv[*i], "--help") || !strcmp(argv[*i], "-h")) {
        io_help(stdout);
        return BENCH_EXIT_OK;
    }
    long long n = 0;
    int rc = list_option(argc, argv, i, o);
    if (rc != BENCH_NOT_MINE)
        return rc;
#define COUNT(flag, lo, hi, dest)                                                       \
    rc = bench_count_option(argc, argv, i, "io ", flag, lo, hi, NULL, &n);              \
    if (rc != BENCH_NOT_MINE) {                                                         \
        dest = n;                                                                       \
        return rc;                                                                      \
    }
    COUNT("--repeat", 1, IO_MAX_REPEAT, o->repeat)
    COUNT("--rounds", 10, 1000000000LL, o->round_trips)
    COUNT("--max-seconds", 1, 3600, o->max_seconds)
    COUNT("--connections", 1, MAX_CONNECTIONS, o->connections)
    COUNT("--messages", 1, 1000000, o->messages)
    COUNT("--message-bytes", 1, 512, o->message_bytes)
    COUNT("--timeout-ms", -1, 3600000, o->timeout_ms)
#undef COUNT
    rc = bench_trace_option(argc, argv, i, "io ", &o->trace);
    if (rc == BENCH_NOT_MINE)
        rc = bench_common_option(argc, argv, i, "io ", &o->cpu, &o->format);
    if (rc == BENCH_NOT_MINE)
        return bench_usage_error("io ", "unknown option '%s'", argv[*i]);
    return rc;
}

/* The cells with a VM the options select, repetitions included. */
static long vm_cells(const io_opts *o)
{
    long cases = __builtin_popcount(o->cases & IO_VM_ROWS);
    return cases * o->nmodes * o->repeat;
}

/* Every option, then what they must agree on: BENCH_NEXT or an exit status. */
static int parse_args(int argc, char **argv, io_opts *o)
{
    int rc = BENCH_NEXT;
    for (int i = 1; i < argc && rc == BENCH_NEXT;)
        rc = parse_option(argc, argv, &i, o);
    if (rc != BENCH_NEXT)
        return rc;
    if (o->timeout_ms == 0)   /* "only try": every wait would fail at once */
        return bench_usage_error("io ", "--timeout-ms wants -1 (none) or 1..3600000, not 0");
    return bench_trace_one_cell(&o->trace, "io ", vm_cells(o),
                                "give one of pingpong, thread-pair, many to --case, one "
                                "--idle-mode and --repeat 1");
}

/* ---- descriptors ---------------------------------------------------------------------------- */

static long open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 8;
    long n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3;   /* ".", ".." and the directory's own */
}

/* Raise the soft RLIMIT_NOFILE to the hard one (this process only; the many case's
 * child inherits it) and answer how many connections fit, at most `asked`: each process
 * holds one end of each, one descriptor. */
static long fit_connections(long asked, io_report *rep)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return asked;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit raised = {.rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            rl.rlim_cur = rl.rlim_max;
    }
    rep->nofile_soft = rl.rlim_cur == RLIM_INFINITY ? -1 : (long long)rl.rlim_cur;
    rep->nofile_hard = rl.rlim_max == RLIM_INFINITY ? -1 : (long long)rl.rlim_max;
    if (rl.rlim_cur == RLIM_INFINITY)
        return asked;
    long long room = (long long)rl.rlim_cur - open_descriptors() - FD_RESERVE;
    long fit = room > 0 ? (long)room : 0;
    if (fit < asked) {
        fprintf(stderr, "stvm-bench: note: %ld connections need about %ld descriptors in each "
                        "process but RLIMIT_NOFILE is %lld (hard limit); running %ld. Raise "
                        "the hard limit (as root: ulimit -Hn %ld, or prlimit) for all of them\n",
                asked, asked + FD_RESERVE, (long long)rl.rlim_cur, fit, asked + 64);
        return fit;
    }
    return asked;
}

/* ---- the rows and the runs ------------------------------------------------------------------- */

static io_row *add_row(io_report *rep, io_case kind, int mode)
{
    io_row *row = &rep->rows[rep->nrows++];
    row->kind = kind;
    row->mode = mode;
    snprintf(row->case_name, sizeof row->case_name, "%s", io_case_name(kind));
    snprintf(row->idle_mode, sizeof row->idle_mode, "%s", io_idle_mode_name(mode));
    if (kind == IO_MANY) {
        row->connections_asked = rep->connections_asked;
        row->messages_per_connection = rep->messages;
        row->message_bytes = rep->message_bytes;
    }
    return row;
}

/* Reading order: the reference, each pair case per mode, then many per mode. */
static void make_rows(const io_opts *o, io_report *rep)
{
    if (o->cases & (IO_PAIRS | IO_OS_THREADS))
        add_row(rep, IO_OS_THREADS, -1);
    const io_case order[] = {IO_PINGPONG, IO_THREAD_PAIR, IO_MANY};
    for (int c = 0; c < 3; c++)
        for (int m = 0; m < o->nmodes; m++)
            if (o->cases & order[c])
                add_row(rep, order[c], o->modes[m]);
}

/* One cell of repetition k; a failure is kept in the row's note and ends the row. */
static bool run_cell(const io_opts *o, io_report *rep, io_row *row, int k)
{
    if (row->note[0])   /* failed in an earlier repetition */
        return false;
    bool tty = bench_progress_on();
    if (tty)
        bench_progress("[%d/%d] %s %s", k + 1, o->repeat, row->case_name, row->idle_mode);
    char why[240] = "", tag[48];
    int err;
    if (row->kind == IO_MANY) {
        snprintf(tag, sizeof tag, "%d/%d many %s", k + 1, o->repeat, row->idle_mode);
        io_many_params p = {.idle_mode = row->mode, .connections = rep->connections,
                            .messages = o->messages, .message_bytes = o->message_bytes,
                            .timeout_ms = o->timeout_ms, .tag = tty ? tag : NULL,
                            .trace = &o->trace};
        bench_watchdog((unsigned)(120 + rep->connections / 20 +
                                  (long long)rep->connections * o->messages / 1000));
        err = io_many_run(&p, &row->many[k], why, sizeof why);
        row->samples[k] = row->many[k].counts;
    } else {
        io_pingpong_params p = {.idle_mode = row->mode, .round_trips = o->round_trips,
                                .max_seconds = (double)o->max_seconds, .cpu = o->cpu,
                                .timeout_ms = o->timeout_ms, .trace = &o->trace};
        bench_watchdog((unsigned)(2 * o->max_seconds + 60));
        err = row->kind == IO_PINGPONG     ? io_pingpong_vm(&p, &row->samples[k], why, sizeof why)
              : row->kind == IO_THREAD_PAIR ? io_pingpong_thread(&p, &row->samples[k], why,
                                                                 sizeof why)
                                            : io_pingpong_os(&p, &row->samples[k], why,
                                                             sizeof why);
    }
    bench_watchdog(0);
    if (!err && row->samples[k].round_trips == 0) {
        snprintf(why, sizeof why, "no round trip completed within the time limit");
        err = -1;
    }
    if (err) {
        snprintf(row->note, sizeof row->note, "repetition %d failed: %s", k + 1, why);
        if (tty)
            fputc('\n', stderr);
        fprintf(stderr, "stvm-bench: io %s %s: %s\n", row->case_name, row->idle_mode,
                row->note);
        return false;
    }
    row->nsamples = k + 1;
    return true;
}

/* Repetition k: the reference and the pairs interleaved by mode, then many. */
static bool run_repetition(const io_opts *o, io_report *rep, int k)
{
    bool ok = true;
    for (int i = 0; i < rep->nrows; i++)
        if (rep->rows[i].kind == IO_OS_THREADS)
            ok &= run_cell(o, rep, &rep->rows[i], k);
    for (int m = 0; m < o->nmodes; m++)
        for (int i = 0; i < rep->nrows; i++)
            if ((rep->rows[i].kind & IO_PAIRS) && rep->rows[i].mode == o->modes[m])
                ok &= run_cell(o, rep, &rep->rows[i], k);
    for (int i = 0; i < rep->nrows; i++)
        if (rep->rows[i].kind == IO_MANY)
            ok &= run_cell(o, rep, &rep->rows[i], k);
    return ok;
}

static void row_notes(io_report *rep)
{
    for (int i = 0; i < rep->nrows; i++) {
        io_row *row = &rep->rows[i];
        size_t len = strlen(row->note);
        if (row->cut_short && row->nsamples)
            snprintf(row->note + len, sizeof row->note - len,
                     "%s%lld of %d repetitions hit the %g s limit (median %lld round trips)",
                     len ? "; " : "", row->cut_short, row->nsamples, rep->max_seconds,
                     row->round_trips);
        len = strlen(row->note);
        if (row->kind == IO_MANY && rep->connections < rep->connections_asked)
            snprintf(row->note + len, sizeof row->note - len,
                     "%sheld %ld of %ld connections asked: RLIMIT_NOFILE is %lld",
                     len ? "; " : "", rep->connections, rep->connections_asked,
                     rep->nofile_hard);
    }
}

int io_main(int argc, char **argv)
{
    io_opts o = {.cases = IO_PINGPONG | IO_THREAD_PAIR | IO_MANY,
                 .modes = {STVM_IDLE_POLL, STVM_IDLE_LEGACY, STVM_IDLE_SPIN}, .nmodes = 3,
                 .repeat = 3, .round_trips = 20000, .max_seconds = 3, .connections = 10000,
                 .messages = 10, .message_bytes = 64, .timeout_ms = -1, .cpu = 0,
                 .format = FMT_TABLE, .trace.events = BENCH_TRACE_EVENTS};
    int rc = parse_args(argc, argv, &o);
    if (rc != BENCH_NEXT)
        return rc;
    if ((rc = bench_pin_option(o.cpu)) != BENCH_EXIT_OK)
        return rc;

    io_report *rep = calloc(1, sizeof *rep);
    if (!rep) {
        fprintf(stderr, "stvm-bench: io: out of memory\n");
        return BENCH_EXIT_FAIL;
    }
    *rep = (io_report){.repeat = o.repeat, .round_trips = o.round_trips,
                       .max_seconds = (double)o.max_seconds, .timeout_ms = o.timeout_ms,
                       .connections_asked = o.connections, .connections = o.connections,
                       .messages = o.messages, .message_bytes = o.message_bytes,
                       .cpu = o.cpu, .nofile_soft = -1, .nofile_hard = -1};
    if (o.cases & IO_MANY) {
        rep->connections = fit_connections(o.connections, rep);
        if (rep->connections < 1) {
            fprintf(stderr, "stvm-bench: io: no room for a single connection under "
                            "RLIMIT_NOFILE\n");
            free(rep);
            return BENCH_EXIT_FAIL;
        }
    }
    make_rows(&o, rep);
    rc = BENCH_EXIT_OK;
    for (int k = 0; k < o.repeat; k++)
        if (!run_repetition(&o, rep, k))
            rc = BENCH_EXIT_FAIL;
    if (bench_progress_on())
        bench_progress("%d repetitions done\n", o.repeat);
    io_report_summarise(rep);
    row_notes(rep);

    if (o.format == FMT_CSV)
        io_print_csv(stdout, rep);
    else if (o.format == FMT_JSON)
        io_print_json(stdout, rep);
    else
        io_print_table(stdout, rep, o.format == FMT_MARKDOWN);
    free(rep);
    return rc;
}
