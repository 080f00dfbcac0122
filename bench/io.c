/*
 * stvm-bench io: what waiting for the network costs, in each idle mode. A record per
 * cell (pingpong and thread-pair per idle mode, the os-threads reference with idle mode
 * "-", many per idle mode) with every repetition's figures; three tables for people
 * (round trips, what a round trip cost, many connections); the targets. Within a
 * repetition the cells run one after the other (the reference, each idle mode's
 * pingpong and thread-pair, then many), so noise hits them alike.
 */
#include "io.h"
#include "render.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MAX_REPEAT 100
#define MAX_CONNECTIONS 21844   /* 3 external semaphores per socket: the server VM's
                                   sockets and its listener in a table of 65536 */
#define FD_RESERVE 16           /* listener, epoll, eventfd, pipes, /proc reads, spare */
#define TARGET_CONNECTIONS 10000

enum { PINGPONG, THREAD_PAIR, OS_THREADS, MANY };   /* --case's words, in order */
static const char *const case_words[] = {"pingpong", "thread-pair", "os-threads", "many", NULL};
static const char *const mode_words[] = {"poll", "legacy", "spin", NULL};   /* STVM_IDLE_* */
#define VM_CASES ((1u << PINGPONG) | (1u << THREAD_PAIR) | (1u << MANY))

typedef struct io_opts {
    unsigned cases, modes;          /* bits of the words */
    long long repeat, rounds, max_seconds, connections, messages, message_bytes, timeout_ms;
} io_opts;

static const bench_opt io_opts_table[] = {
    BENCH_WORDS("case", "pingpong,thread-pair,many", case_words, io_opts, cases,
                "pingpong: two green processes of one VM; thread-pair: a green process and "
                "an OS thread with a blocking socket; os-threads: two OS threads with "
                "blocking sockets, the reference, run whenever a ping-pong case is; many: "
                "many connections to an echo server in the VM."),
    BENCH_WORDS("idle-mode", "poll,legacy,spin", mode_words, io_opts, modes,
                "The VM's idle modes (legacy sleeps Pharo 5's 1 ms quantum)."),
    BENCH_INT("repeat", "K", "3", 1, MAX_REPEAT, io_opts, repeat,
              "Repetitions; the figures are medians over them."),
    BENCH_INT("rounds", "N", "20000", 10, 1000000000LL, io_opts, rounds,
              "Round trips per ping-pong cell, after a warm-up of a tenth (at most 1000)."),
    BENCH_INT("max-seconds", "S", "3", 1, 3600, io_opts, max_seconds,
              "Time limit of a ping-pong cell's timed part (the record's note says so)."),
    BENCH_INT("connections", "N", "10000", 1, MAX_CONNECTIONS, io_opts, connections,
              "many: connections, one end in this process's VM, the other in a forked "
              "child's (fewer when RLIMIT_NOFILE's hard limit cannot hold them)."),
    BENCH_INT("messages", "M", "10", 1, 1000000, io_opts, messages,
              "many: messages each client exchanges after its warm-up exchange."),
    BENCH_INT("message-bytes", "B", "64", 1, IO_MAX_MESSAGE, io_opts, message_bytes,
              "many: the size of a message."),
    BENCH_INT("timeout-ms", "T", "-1", -1, 3600000, io_opts, timeout_ms,
              "Every socket wait's timeout in ms, or -1 for none (0 is refused); with one, "
              "each wait that blocks is Pharo's timed wait through the Delay scheduler."),
};

const bench_command io_command = {
    "io",
    "loopback TCP ping-pong per idle mode, and many connections to an echo server in the "
    "VM: round trips, CPU, wake-ups, memory",
    "What waiting for the network costs in each idle mode: 1-byte round trips over "
    "loopback TCP between two green processes (pingpong), a green process and an OS "
    "thread (thread-pair), and two OS threads (os-threads, the reference); and many "
    "connections (many): an echo server in this process's VM, a handler process per "
    "connection, and the client processes in a second VM in a forked child, each end "
    "with a SocketStream. Run it pinned (--cpu 0): the peer threads and the child then "
    "share the VM's CPU, so every pair has one core."
    "\n\nPer record: us and CPU us per round trip (many: per message echoed), round trips "
    "per second, the ratios to the reference (medians of per-repetition ratios), the VM's "
    "wake-ups, sleeps and socket counters and the process's OS context switches per round "
    "trip; many adds messages per second and resident memory per connection end.",
    io_opts_table, sizeof io_opts_table / sizeof io_opts_table[0],
    "one case in one idle mode with --repeat 1: pingpong's VM, thread-pair's VM side, "
    "many's server VM (the clients' VM in the child is not); os-threads has no VM"};

/* One cell: its repetitions' counts (the many fields for many only). */
typedef struct io_cell {
    int kind, mode;                 /* a case; STVM_IDLE_* or -1 (the reference) */
    int n;                          /* repetitions that ran; a failure ends the cell */
    io_many_result s[MAX_REPEAT];
    char failed[300];
} io_cell;

typedef struct io_sweep {
    const io_opts *o;
    const bench_invocation *inv;
    long connections;               /* run: fewer than asked when descriptors lack */
    long long nofile_soft, nofile_hard;   /* RLIMIT_NOFILE after raising the soft one */
    io_cell cells[1 + 3 * 3];       /* in reading order: the reference, pairs, many */
    int ncells;
} io_sweep;

/* ---- descriptors ------------------------------------------------------------------------- */

static long open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    long n = 0;
    while (d && readdir(d))
        n++;
    if (d)
        closedir(d);
    return d ? n - 3 : 8;           /* ".", ".." and the directory's own */
}

/* Raise the soft RLIMIT_NOFILE to the hard one (this process only; the child inherits
 * it) and answer how many connections fit: each process holds one end of each. */
static long fit_connections(io_sweep *sw, long asked)
{
    struct rlimit rl;
    sw->nofile_soft = sw->nofile_hard = -1;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return asked;
    if (rl.rlim_cur < rl.rlim_max &&
        setrlimit(RLIMIT_NOFILE, &(struct rlimit){rl.rlim_max, rl.rlim_max}) == 0)
        rl.rlim_cur = rl.rlim_max;
    sw->nofile_soft = rl.rlim_cur == RLIM_INFINITY ? -1 : (long long)rl.rlim_cur;
    sw->nofile_hard = rl.rlim_max == RLIM_INFINITY ? -1 : (long long)rl.rlim_max;
    long long room = sw->nofile_soft < 0 ? asked
                                         : sw->nofile_soft - open_descriptors() - FD_RESERVE;
    if (room >= asked)
        return asked;
    long fit = room > 0 ? (long)room : 0;
    fprintf(stderr, "stvm-bench io: note: %ld connections need about %ld descriptors in each "
                    "process but RLIMIT_NOFILE is %lld (hard limit); running %ld. Raise the "
                    "hard limit (as root: ulimit -Hn %ld, or prlimit) for all of them\n",
            asked, asked + FD_RESERVE, sw->nofile_soft, fit, asked + 64);
    return fit;
}

/* ---- the sweep ------------------------------------------------------------------------- */

/* Where a cell runs within a repetition: the reference, each mode's pairs, then many. */
static int run_rank(const io_cell *c)
{
    return c->kind == OS_THREADS ? 0 : c->kind == MANY ? 100 + c->mode
                                                         : 1 + 2 * c->mode + c->kind;
}

static const char *mode_name(int mode)
{
    return mode < 0 ? "-" : mode_words[mode];
}

/* Repetition k of cell c; a failure is kept in the cell and ends it. */
static void run_cell(io_sweep *sw, io_cell *c, int k, int done, int total)
{
    const io_opts *o = sw->o;
    const bench_trace *trace = &sw->inv->common.trace;
    io_many_result *res = &c->s[c->n];
    char why[240] = "";
    int err;
    if (c->kind == MANY) {
        io_many_params p = {.idle_mode = c->mode, .connections = sw->connections,
                            .messages = (int)o->messages, .message_bytes = (int)o->message_bytes,
                            .timeout_ms = o->timeout_ms, .trace = trace};
        bench_watchdog((unsigned)(120 + sw->connections / 20 +
                                  sw->connections * o->messages / 1000));
        err = io_many_run(&p, res, why, sizeof why);
    } else {
        io_pingpong_params p = {.idle_mode = c->mode, .round_trips = o->rounds,
                                .max_seconds = (double)o->max_seconds,
                                .cpu = sw->inv->common.cpu, .timeout_ms = o->timeout_ms,
                                .trace = trace};
        bench_watchdog((unsigned)(2 * o->max_seconds + 60));
        err = io_pingpong(c->kind == PINGPONG ? IO_PAIR_VM : c->kind == THREAD_PAIR
                                                               ? IO_PAIR_THREAD : IO_PAIR_OS,
                          &p, &res->counts, why, sizeof why);
    }
    bench_watchdog(0);
    if (!err && res->counts.round_trips == 0) {
        snprintf(why, sizeof why, "no round trip completed within the time limit");
        err = -1;
    }
    if (err)
        snprintf(c->failed, sizeof c->failed, "repetition %d failed: %s", k + 1, why);
    else
        c->n++;
    char what[64] = "";
    if (!err)
        snprintf(what, sizeof what, "%.1f us per round trip", (double)res->counts.wall_ns /
                                                                  1e3 / (double)res->counts.round_trips);
    bench_progress_line(sw->inv, done, total, "%s %s, repetition %d of %lld: %s",
                        case_words[c->kind], mode_name(c->mode), k + 1, o->repeat,
                        err ? c->failed : what);
}

/* Every repetition, cells in run order; answers whether every cell ran them all. */
static bool sweep(io_sweep *sw)
{
    int order[sizeof sw->cells / sizeof sw->cells[0]], done = 0;
    int total = sw->ncells * (int)sw->o->repeat;
    for (int i = 0; i < sw->ncells; i++) {
        int j = i;
        for (; j > 0 && run_rank(&sw->cells[order[j - 1]]) > run_rank(&sw->cells[i]); j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (int k = 0; k < sw->o->repeat; k++)
        for (int i = 0; i < sw->ncells; i++) {
            io_cell *c = &sw->cells[order[i]];
            if (c->failed[0])
                total--;
            else
                run_cell(sw, c, k, ++done, total);
        }
    for (int i = 0; i < sw->ncells; i++)
        if (sw->cells[i].failed[0])
            return false;
    return true;
}

/* ---- the records ----------------------------------------------------------------------- */

/* A metric whose sample k is expr over s (repetition k's result), t (its counts) and
 * rt (its round trips). */
#define PER_SAMPLE(rec, c, name, unit, better, decimals, expr)                            \
    do {                                                                                 \
        double v_[MAX_REPEAT];                                                           \
        for (int k_ = 0; k_ < (c)->n; k_++) {                                            \
            const io_many_result *s = &(c)->s[k_];                                       \
            const io_counts *t = &s->counts;                                             \
            double rt = (double)t->round_trips;                                          \
            (void)s, (void)t, (void)rt;                                                  \
            v_[k_] = (expr);                                                             \
        }                                                                                \
        bench_metric_add(rec, name, unit, BENCH_BETTER_##better, decimals, v_, (c)->n);  \
    } while (0)

static double us_per_trip(const io_counts *t)
{
    return (double)t->wall_ns / 1e3 / (double)t->round_trips;
}

static double cpu_per_trip(const io_counts *t)
{
    return (double)t->cpu_ns / 1e3 / (double)t->round_trips;
}

/* The reference's figure over this repetition's (measured moments apart), per repetition
 * both ran. */
static void ratio(bench_record *rec, const char *name, const io_cell *c, const io_cell *ref,
                  double (*per_trip)(const io_counts *))
{
    double v[MAX_REPEAT];
    int n = ref ? (c->n < ref->n ? c->n : ref->n) : 0;
    for (int k = 0; k < n; k++)
        v[k] = per_trip(&ref->s[k].counts) / per_trip(&c->s[k].counts);
    bench_metric_add(rec, name, "x", BENCH_BETTER_HIGHER, 2, v, n);
}

static void many_metrics(bench_record *rec, const io_cell *c)
{
#define KIB(side) (((double)s->side.rss_after - (double)s->side.rss_before) / 1024.0 /      \
                   (double)s->connected)
    PER_SAMPLE(rec, c, "connections", "", HIGHER, 0, (double)s->connected);
    PER_SAMPLE(rec, c, "messages_per_second", "1/s", HIGHER, 0, rt * 1e9 / (double)t->wall_ns);
    PER_SAMPLE(rec, c, "kib_per_connection", "KiB", LOWER, 2, KIB(server) + KIB(client));
    PER_SAMPLE(rec, c, "kib_per_end", "KiB", LOWER, 2, (KIB(server) + KIB(client)) / 2);
    PER_SAMPLE(rec, c, "kib_per_server_end", "KiB", LOWER, 2, KIB(server));
    PER_SAMPLE(rec, c, "kib_per_client_end", "KiB", LOWER, 2, KIB(client));
#undef KIB
    PER_SAMPLE(rec, c, "vm_bytes_per_connection", "B", LOWER, 0,
               ((double)s->server.live_after - (double)s->server.live_before +
                (double)s->client.live_after - (double)s->client.live_before) /
                   (double)s->connected);
    PER_SAMPLE(rec, c, "rss_before_bytes", "B", NONE, 0, (double)s->server.rss_before);
    PER_SAMPLE(rec, c, "rss_after_bytes", "B", NONE, 0, (double)s->server.rss_after);
    PER_SAMPLE(rec, c, "client_rss_before_bytes", "B", NONE, 0, (double)s->client.rss_before);
    PER_SAMPLE(rec, c, "client_rss_after_bytes", "B", NONE, 0, (double)s->client.rss_after);
}

static void fill_record(bench_results *r, const io_sweep *sw, const io_cell *c,
                        const io_cell *ref)
{
    const io_opts *o = sw->o;
    bench_record *rec = bench_record_add(r, case_words[c->kind]);
    bench_param_add(rec, "idle_mode", "%s", mode_name(c->mode));
    bench_param_add(rec, "timeout_ms", "%lld", o->timeout_ms);
    if (c->kind == MANY) {
        bench_param_add(rec, "connections_asked", "%lld", o->connections);
        bench_param_add(rec, "messages", "%lld", o->messages);
        bench_param_add(rec, "message_bytes", "%lld", o->message_bytes);
        bench_param_add(rec, "nofile_soft", "%lld", sw->nofile_soft);
        bench_param_add(rec, "nofile_hard", "%lld", sw->nofile_hard);
    } else {
        bench_param_add(rec, "rounds", "%lld", o->rounds);
        bench_param_add(rec, "max_seconds", "%lld", o->max_seconds);
    }
    PER_SAMPLE(rec, c, "us_per_round_trip", "us", LOWER, 1, us_per_trip(t));
    PER_SAMPLE(rec, c, "cpu_us_per_round_trip", "us", LOWER, 1, cpu_per_trip(t));
    rec->gbench_real = 0;
    rec->gbench_cpu = 1;
    PER_SAMPLE(rec, c, "round_trips_per_second", "1/s", HIGHER, 0, rt * 1e9 / (double)t->wall_ns);
    if (c->kind != MANY) {
        ratio(rec, "rate_vs_os_threads", c, ref, us_per_trip);
        ratio(rec, "cpu_vs_os_threads", c, ref, cpu_per_trip);
    }
#define IO_METRIC(member, metric, unit, decimals, better)                                  \
    PER_SAMPLE(rec, c, metric, unit, better, decimals, (double)t->member / rt);
    if (c->kind != OS_THREADS) {
        IO_VM_COUNTERS(IO_METRIC)
    }
#undef IO_METRIC
    PER_SAMPLE(rec, c, "voluntary_switches_per_round_trip", "", LOWER, 2,
               (double)t->voluntary_switches / rt);
    PER_SAMPLE(rec, c, "involuntary_switches_per_round_trip", "", LOWER, 2,
               (double)t->involuntary_switches / rt);
    PER_SAMPLE(rec, c, "round_trips", "", NONE, 0, rt);
    PER_SAMPLE(rec, c, "cut_short", "", NONE, 0, t->cut_short);
    if (c->kind == MANY)
        many_metrics(rec, c);

    char note[600] = "";
    int len = 0, cut = 0;
    for (int k = 0; k < c->n; k++)
        cut += c->s[k].counts.cut_short;
    if (cut)
        len += snprintf(note + len, sizeof note - (size_t)len, "; %d of %d repetitions hit "
                        "the %lld s limit (median %.0f round trips)", cut, c->n, o->max_seconds,
                        bench_metric_find(rec, "round_trips")->median);
    if (c->kind == MANY && sw->connections < o->connections)
        len += snprintf(note + len, sizeof note - (size_t)len, "; held %ld of %lld "
                        "connections asked: RLIMIT_NOFILE is %lld", sw->connections,
                        o->connections, sw->nofile_hard);
    if (c->failed[0])
        snprintf(note + len, sizeof note - (size_t)len, "; %d of %lld repetitions ran, %s",
                 c->n, o->repeat, c->failed);
    if (!c->n)
        bench_record_fail(rec, BENCH_FAILED, "%s", c->failed);
    else if (note[0])
        bench_record_note(rec, "%s", note + 2);
}

/* ---- the tables for people ------------------------------------------------------------- */

/* A column: the case ('c'), the idle mode ('i'), a median ('m'), a median with min..max
 * ('r'), a ratio ('x'), or two byte counts as MiB, this metric..the next ('b'). */
typedef struct column {
    const char *head, *metric;
    char kind;
    int decimals;
} column;

static void cell_text(char *b, size_t size, const bench_record *rec, const column *col)
{
    const bench_metric *m = col->metric ? bench_metric_find(rec, col->metric) : NULL;
    const bench_metric *m2 = col->kind == 'b' ? m + 1 : NULL;
    if (col->kind == 'c' || col->kind == 'i')
        snprintf(b, size, "%s", col->kind == 'c' ? rec->name : bench_param_find(rec, "idle_mode"));
    else if (!m || !m->nsamples || !isfinite(m->median))
        snprintf(b, size, "%s", col->kind == 'r' && rec->status != BENCH_OK ? "failed" : "-");
    else if (col->kind == 'r' && m->nsamples > 1)
        snprintf(b, size, "%.*f (%.*f..%.*f)", col->decimals, m->median, col->decimals, m->min,
                 col->decimals, m->max);
    else if (m2)
        snprintf(b, size, "%.1f..%.1f", m->median / 1048576.0, m2->median / 1048576.0);
    else
        snprintf(b, size, "%.*f%s", col->decimals, m->median, col->kind == 'x' ? "x" : "");
}

static void people_table(bench_results *r, int nrecords, const char *title,
                         const column *cols, int ncols, bool many_only, const char *footer)
{
    char align[32], cells[32][64];
    const char *row[32];
    for (int i = 0; i < ncols; i++) {
        align[i] = cols[i].kind == 'c' || cols[i].kind == 'i' ? 'l' : 'r';
        row[i] = cols[i].head;
    }
    align[ncols] = 0;
    bench_table *t = bench_table_add(r, title, ncols, align);
    bench_table_row(t, row);
    for (int k = 0; k < nrecords; k++) {
        const bench_record *rec = &r->records[k];
        if (many_only && strcmp(rec->name, "many"))
            continue;
        for (int i = 0; i < ncols; i++) {
            cell_text(cells[i], sizeof cells[i], rec, &cols[i]);
            row[i] = cells[i];
        }
        bench_table_row(t, row);
    }
    bench_table_footer(t, "%s", footer);
}

#define NCOLS(a) ((int)(sizeof(a) / sizeof(a)[0]))

static void people_tables(bench_results *r, bool pairs, bool many)
{
    static const column trips[] = {
        {"case", NULL, 'c', 0}, {"idle", NULL, 'i', 0},
        {"us/round trip", "us_per_round_trip", 'r', 1},
        {"trips/s", "round_trips_per_second", 'm', 0},
        {"CPU us", "cpu_us_per_round_trip", 'm', 1},
        {"wake-ups", "wakeups_per_round_trip", 'm', 2},
        {"rate/os", "rate_vs_os_threads", 'x', 2}, {"CPU/os", "cpu_vs_os_threads", 'x', 2}};
    static const column costs[] = {
        {"case", NULL, 'c', 0}, {"idle", NULL, 'i', 0},
        {"slept", "os_slept_us_per_round_trip", 'm', 1},
        {"w:io", "wakeups_io_per_round_trip", 'm', 2},
        {"w:timer", "wakeups_timer_per_round_trip", 'm', 2},
        {"w:rel", "wakeups_relinquish_per_round_trip", 'm', 2},
        {"w:ext", "wakeups_external_per_round_trip", 'm', 2},
        {"fds", "fds_ready_per_round_trip", 'm', 2},
        {"unwait", "io_signals_unwaited_per_round_trip", 'm', 2},
        {"busy", "io_polls_busy_per_round_trip", 'm', 3},
        {"blocked", "socket_reads_blocked_per_round_trip", 'm', 2},
        {"timed", "timed_waits_per_round_trip", 'm', 2},
        {"green", "context_switches_per_round_trip", 'm', 2},
        {"os-vol", "voluntary_switches_per_round_trip", 'm', 2},
        {"os-inv", "involuntary_switches_per_round_trip", 'm', 2}};
    static const column conns[] = {
        {"idle", NULL, 'i', 0}, {"connections", "connections", 'm', 0},
        {"messages/s", "messages_per_second", 'm', 0}, {"KiB/conn", "kib_per_connection", 'm', 2},
        {"KiB/end", "kib_per_end", 'm', 2}, {"KiB/srv", "kib_per_server_end", 'm', 2},
        {"KiB/cli", "kib_per_client_end", 'm', 2}, {"VM B/conn", "vm_bytes_per_connection", 'm', 0},
        {"RSS MiB server", "rss_before_bytes", 'b', 1},
        {"RSS MiB client", "client_rss_before_bytes", 'b', 1}};
    int n = r->nrecords;
    people_table(r, n, "Round trips (many: one message echoed)", trips, NCOLS(trips), false,
                 pairs ? "rate/os, CPU/os: the median over the repetitions of the os-threads "
                         "figure over this row's, each against the reference measured moments "
                         "before (above 1: faster, or cheaper). Peer threads run on the VM's "
                         "CPU when it is pinned." : "");
    people_table(r, n, "Per round trip (many: per message)", costs, NCOLS(costs), false,
                 "wake-ups: stats.os_sleeps, waits in the OS that could block (w:* by what "
                 "ended them: IO, timer, relinquish, external); an epoll wait that finds a "
                 "descriptor ready counts without sleeping, os-vol (voluntary context switches "
                 "of the whole process, getrusage) counts real sleeps. slept: us slept; fds: "
                 "one-shot handlers fired; unwait: their signals that found no waiter; busy: "
                 "looks at descriptors while processes ran; blocked: socket reads that waited; "
                 "timed: timed waits; green: the VM's context switches.");
    if (many)
        people_table(r, n, "Many connections", conns, NCOLS(conns), true,
                     "Each process reads its RSS before the first connection and again with "
                     "every connection open and every green process of both VMs blocked in a "
                     "read, after one exchange. KiB/srv: the server process's growth per "
                     "connection (a handler process and its stack, the accepted socket, three "
                     "external semaphores and an aio entry, a SocketStream); KiB/cli: the "
                     "client process's; KiB/conn both, KiB/end their mean; VM B/conn: both "
                     "VMs' bytes_live. Kernel memory (socket buffers, TCP state, epoll items) "
                     "is not in RSS and not counted. messages/s: from the first greeting to "
                     "the last echo; CPU and the VM counters are both processes'. RSS MiB: "
                     "before..after.");
}

static void targets(bench_results *r, const io_opts *o)
{
    bench_target_add(r, "ping-pong in one VM (poll) at least 1.0x two OS threads' rate",
                     BENCH_TARGET_AT_LEAST, "pingpong idle_mode=poll", "rate_vs_os_threads",
                     1.0, NULL, NULL);
    bench_target *t = bench_target_add(r, "10,000 connections held (many, poll)",
                                       BENCH_TARGET_AT_LEAST, "many idle_mode=poll",
                                       "connections", TARGET_CONNECTIONS, NULL, NULL);
    if (o->connections < TARGET_CONNECTIONS)
        bench_target_not_judged(t, "fewer connections asked");
    bench_target_add(r, "at most 12 KiB RSS per connection end (many, poll)",
                     BENCH_TARGET_AT_MOST, "many idle_mode=poll", "kib_per_end", 12.0, NULL,
                     NULL);
    bench_judge(r);
}

static void add_cell(io_sweep *sw, int kind, int mode)
{
    io_cell *c = &sw->cells[sw->ncells++];
    c->kind = kind;
    c->mode = mode;
}

int io_main(int argc, char **argv)
{
    io_opts o;
    bench_invocation inv;
    int rc = bench_parse(&io_command, argc, argv, &o, &inv);
    if (rc != BENCH_GO_ON)
        return rc;
    if (o.timeout_ms == 0)          /* "only try": every wait would fail at once */
        return bench_usage(&io_command, "--timeout-ms wants -1 (none) or 1..3600000, not 0");
    long vm_cells = __builtin_popcount(o.cases & VM_CASES) * __builtin_popcount(o.modes) *
                    o.repeat;
    if (inv.common.trace.path && vm_cells != 1)
        return bench_usage(&io_command, "--trace traces one cell with a VM, these options "
                           "run %ld: give one of pingpong, thread-pair, many to --case, one "
                           "--idle-mode and --repeat 1", vm_cells);
    io_sweep *sw = calloc(1, sizeof *sw);
    if (!sw) {
        fputs("stvm-bench io: out of memory\n", stderr);
        return BENCH_EXIT_FAIL;
    }
    *sw = (io_sweep){.o = &o, .inv = &inv, .connections = (long)o.connections,
                     .nofile_soft = -1, .nofile_hard = -1};
    bool pairs = o.cases & ((1u << PINGPONG) | (1u << THREAD_PAIR) | (1u << OS_THREADS));
    bool many = o.cases & (1u << MANY);
    if (many && (sw->connections = fit_connections(sw, (long)o.connections)) < 1) {
        fputs("stvm-bench io: no room for a single connection under RLIMIT_NOFILE\n", stderr);
        free(sw);
        return BENCH_EXIT_FAIL;
    }
    if (pairs)
        add_cell(sw, OS_THREADS, -1);
    for (int kind = PINGPONG; kind <= MANY; kind++)
        for (int m = 0; kind != OS_THREADS && m < 3; m++)
            if ((o.cases >> kind & 1) && (o.modes >> m & 1))
                add_cell(sw, kind, m);
    bool ok = sweep(sw);

    bench_results r;
    bench_results_init(&r, "io");
    for (int i = 0; i < sw->ncells; i++)
        fill_record(&r, sw, &sw->cells[i], pairs ? &sw->cells[0] : NULL);
    people_tables(&r, pairs, many);
    targets(&r, &o);
    rc = bench_output(&r, &inv);
    bench_results_free(&r);
    free(sw);
    return ok ? rc : BENCH_EXIT_FAIL;
}
