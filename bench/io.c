/*
 * stvm-bench io: what waiting for the network costs, in each idle mode. A record per
 * cell (pingpong, thread-pair and many per idle mode, the os-threads reference with idle
 * mode "-") with every repetition's figures; two tables for people; the targets. Within
 * a repetition the cells run one after the other, so noise hits them alike.
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
/* The idle modes swept here, by the library's own names (stvm_idle_mode_name), set before
 * main: the option table points at them. */
static const char *mode_words[STVM_IDLE_SPIN + 2];
__attribute__((constructor)) static void name_idle_modes(void)
{
    for (int m = 0; m <= STVM_IDLE_SPIN; m++)
        mode_words[m] = stvm_idle_mode_name(m);
}

typedef struct io_opts {
    unsigned cases, modes;          /* bits of the words */
    long long repeat, rounds, max_seconds, connections, messages, message_bytes, timeout_ms;
} io_opts;

static const bench_opt io_opts_table[] = {
    BENCH_WORDS("case", "pingpong,thread-pair,many", case_words, io_opts, cases,
                "The cases (os-threads, the reference, also runs whenever a ping-pong "
                "case does)."),
    BENCH_WORDS("idle-mode", "poll,legacy,spin", mode_words, io_opts, modes,
                "The VM's idle modes."),
    BENCH_INT("repeat", "K", "3", 1, MAX_REPEAT, io_opts, repeat, "Repetitions (medians)."),
    BENCH_INT("rounds", "N", "20000", 10, 1000000000LL, io_opts, rounds,
              "Round trips per ping-pong cell, after a warm-up of a tenth (at most 1000)."),
    BENCH_INT("max-seconds", "S", "3", 1, 3600, io_opts, max_seconds,
              "Time limit of a ping-pong cell's timed part."),
    BENCH_INT("connections", "N", "10000", 1, MAX_CONNECTIONS, io_opts, connections,
              "many: connections (fewer when RLIMIT_NOFILE's hard limit is too low)."),
    BENCH_INT("messages", "M", "10", 1, 1000000, io_opts, messages,
              "many: messages per client after its warm-up exchange."),
    BENCH_INT("message-bytes", "B", "64", 1, IO_MAX_MESSAGE, io_opts, message_bytes,
              "many: bytes per message."),
    BENCH_INT("timeout-ms", "T", "-1", -1, 3600000, io_opts, timeout_ms,
              "Every socket wait's timeout, -1 for none (0 is refused); with one, a wait "
              "that blocks is Pharo's timed wait through the Delay scheduler."),
};

const bench_command io_command = {
    "io",
    "loopback TCP ping-pong per idle mode, and many connections to an echo server in the "
    "VM: round trips, CPU, wake-ups, memory",
    "What waiting for the network costs in each idle mode: 1-byte round trips over "
    "loopback TCP between two green processes of one VM (pingpong), a green process and "
    "an OS thread with a blocking socket (thread-pair), and two OS threads (os-threads, "
    "the reference, idle mode -); and many connections (many): an echo server in this "
    "process's VM with a handler process per connection, the clients in a second VM in a "
    "forked child, each end with a SocketStream. Run it pinned (--cpu 0): the peer "
    "threads and the child share the VM's CPU, so every pair has one core.",
    io_opts_table, sizeof io_opts_table / sizeof io_opts_table[0],
    "one case in one idle mode with --repeat 1: pingpong's VM, thread-pair's VM side, "
    "many's server VM (not the clients' in the child); os-threads has no VM"};

/* One cell: its repetitions' counts (the many fields for many only). */
typedef struct io_cell {
    bool on;                        /* the options select it */
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
    io_cell cells[1 + 3 * 3];       /* in run order: the reference, each mode's pingpong
                                       and thread-pair, then each mode's many */
} io_sweep;

/* ---- descriptors ------------------------------------------------------------------------- */

static long open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    long n = -3;                    /* ".", ".." and the directory's own */
    if (!d)
        return 8;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
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

static const char *mode_name(int mode)
{
    return mode < 0 ? "-" : mode_words[mode];
}

#define US(t) ((double)(t)->wall_ns / 1e3 / (double)(t)->round_trips)

/* Repetition k of cell c; a failure is kept in the cell and ends it. */
static void run_cell(io_sweep *sw, io_cell *c, int k, int done, int total)
{
    const io_opts *o = sw->o;
    io_counts *t = &c->s[c->n].counts;
    io_params p = {c->mode, o->timeout_ms, &sw->inv->common.trace, sw->inv->common.cpu,
                   o->rounds, (double)o->max_seconds, sw->connections, (int)o->messages,
                   (int)o->message_bytes};
    char why[240] = "";
    bench_watchdog((unsigned)(c->kind == MANY ? 120 + p.connections / 20 +
                                                    p.connections * o->messages / 1000
                                              : 2 * o->max_seconds + 60));
    int err = c->kind == MANY ? io_many_run(&p, &c->s[c->n], why, sizeof why)
                              : io_pingpong((io_pair)c->kind, &p, t, why, sizeof why);
    bench_watchdog(0);
    if (!err && t->round_trips == 0) {
        snprintf(why, sizeof why, "no round trip completed within the time limit");
        err = -1;
    }
    if (err)
        snprintf(c->failed, sizeof c->failed, "repetition %d failed: %s", k + 1, why);
    else
        snprintf(why, sizeof why, "%.1f us per round trip", US(t));
    c->n += !err;
    bench_progress_line(sw->inv, done, total, "%s %s, repetition %d of %lld: %s",
                        case_words[c->kind], mode_name(c->mode), k + 1, o->repeat,
                        err ? c->failed : why);
}

/* Every repetition, the cells in run order; answers whether every cell ran them all. */
static bool sweep(io_sweep *sw)
{
    int total = 0, done = 0;
    bool ok = true;
    for (int i = 0; i < 10; i++)
        total += sw->cells[i].on * (int)sw->o->repeat;
    for (int k = 0; k < sw->o->repeat; k++)
        for (io_cell *c = sw->cells; c < sw->cells + 10; c++) {
            if (c->on && c->failed[0])
                total--;
            else if (c->on)
                run_cell(sw, c, k, ++done, total);
            ok &= !c->failed[0];
        }
    return ok;
}

/* ---- the records ----------------------------------------------------------------------- */

#define CPU(t) ((double)(t)->cpu_ns / 1e3 / (double)(t)->round_trips)
#define KIB(side) (((double)s->side.rss_after - (double)s->side.rss_before) / 1024.0 /    \
                   (double)s->connected)
#define LIVE(side) ((double)s->side.live_after - (double)s->side.live_before)

/* Which records have a metric, with how many samples: every repetition (ALL), those with
 * a VM, those the reference also ran (RATIO, the reference's figure over the cell's),
 * many's. */
enum { ALL, VM, RATIO, MANY_ONLY };

/* Every metric in its order, XVM for the VM's counters: X(name, unit, better, decimals,
 * which, sample k from s (the repetition's result), t (its counts), rt (its round trips)
 * and rt0 (the reference's counts)). */
#define IO_METRICS(X, XVM)                                                                \
    X("us_per_round_trip", "us", LOWER, 1, ALL, US(t))                                     \
    X("cpu_us_per_round_trip", "us", LOWER, 1, ALL, CPU(t))                                \
    X("round_trips_per_second", "1/s", HIGHER, 0, ALL, rt * 1e9 / (double)t->wall_ns)      \
    X("rate_vs_os_threads", "x", HIGHER, 2, RATIO, US(rt0) / US(t))                        \
    X("cpu_vs_os_threads", "x", HIGHER, 2, RATIO, CPU(rt0) / CPU(t))                       \
    IO_VM_COUNTERS(XVM)                                                                   \
    X("voluntary_switches_per_round_trip", "", LOWER, 2, ALL, t->voluntary_switches / rt)  \
    X("involuntary_switches_per_round_trip", "", LOWER, 2, ALL,                            \
      t->involuntary_switches / rt)                                                       \
    X("round_trips", "", NONE, 0, ALL, rt)                                                 \
    X("cut_short", "", NONE, 0, ALL, t->cut_short)                                         \
    X("connections", "", HIGHER, 0, MANY_ONLY, s->connected)                               \
    X("messages_per_second", "1/s", HIGHER, 0, MANY_ONLY, rt * 1e9 / (double)t->wall_ns)   \
    X("kib_per_connection", "KiB", LOWER, 2, MANY_ONLY, KIB(server) + KIB(client))         \
    X("kib_per_end", "KiB", LOWER, 2, MANY_ONLY, (KIB(server) + KIB(client)) / 2)          \
    X("kib_per_server_end", "KiB", LOWER, 2, MANY_ONLY, KIB(server))                       \
    X("kib_per_client_end", "KiB", LOWER, 2, MANY_ONLY, KIB(client))                       \
    X("vm_bytes_per_connection", "B", LOWER, 0, MANY_ONLY,                                 \
      (LIVE(server) + LIVE(client)) / (double)s->connected)                               \
    X("rss_before_bytes", "B", NONE, 0, MANY_ONLY, s->server.rss_before)                   \
    X("rss_after_bytes", "B", NONE, 0, MANY_ONLY, s->server.rss_after)                     \
    X("client_rss_before_bytes", "B", NONE, 0, MANY_ONLY, s->client.rss_before)            \
    X("client_rss_after_bytes", "B", NONE, 0, MANY_ONLY, s->client.rss_after)              \
    X("nofile_soft", "", NONE, 0, MANY_ONLY, sw->nofile_soft)                              \
    X("nofile_hard", "", NONE, 0, MANY_ONLY, sw->nofile_hard)
#define IO_ROW(name, unit, better, decimals, which, expr)                                 \
    {name, unit, BENCH_BETTER_##better, decimals, which},
#define IO_VM_ROW(member, name, unit, decimals, better) IO_ROW(name, unit, better, decimals, VM, 0)
#define IO_VALUE(name, unit, better, decimals, which, expr) v[i++][k] = (double)(expr);
#define IO_VM_VALUE(member, name, unit, decimals, better) v[i++][k] = (double)t->member / rt;

static const struct {
    const char *name, *unit;
    bench_better better;
    int decimals, which;
} metrics[] = {IO_METRICS(IO_ROW, IO_VM_ROW)};
#define NMETRICS ((int)(sizeof metrics / sizeof metrics[0]))

/* The cell's record: its parameters, every figure with every sample, its note. Ratios
 * pair repetition k with the reference's (measured moments apart). */
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
    } else {
        bench_param_add(rec, "rounds", "%lld", o->rounds);
        bench_param_add(rec, "max_seconds", "%lld", o->max_seconds);
    }
    int n = c->n, cut = 0;
    double v[NMETRICS][MAX_REPEAT];
    for (int k = 0; k < n; k++) {
        const io_many_result *s = &c->s[k];
        const io_counts *t = &s->counts, *rt0 = ref && k < ref->n ? &ref->s[k].counts : t;
        double rt = (double)t->round_trips;
        int i = 0;
        IO_METRICS(IO_VALUE, IO_VM_VALUE)
        cut += t->cut_short;
    }
    /* The reference has no VM; the limits are many's metrics, so that a name stays. */
    int count[] = {n, c->kind == OS_THREADS ? 0 : n,
                   !ref || c->kind == MANY ? 0 : n < ref->n ? n : ref->n,
                   c->kind == MANY ? n : -1};
    for (int i = 0; i < NMETRICS; i++)
        if (count[metrics[i].which] >= 0)
            bench_metric_add(rec, metrics[i].name, metrics[i].unit, metrics[i].better,
                             metrics[i].decimals, v[i], count[metrics[i].which]);
    rec->gbench_real = 0;
    rec->gbench_cpu = 1;

    char note[600] = "";
    int len = 0;
    if (cut)
        len += snprintf(note + len, sizeof note - (size_t)len, "; %d of %d repetitions hit "
                        "the %lld s limit (median %.0f round trips)", cut, n, o->max_seconds,
                        bench_metric_find(rec, "round_trips")->median);
    if (c->kind == MANY && sw->connections < o->connections)
        len += snprintf(note + len, sizeof note - (size_t)len, "; held %ld of %lld "
                        "connections asked: RLIMIT_NOFILE is %lld", sw->connections,
                        o->connections, sw->nofile_hard);
    if (c->failed[0])
        snprintf(note + len, sizeof note - (size_t)len, "; %d of %lld repetitions ran, %s", n,
                 o->repeat, c->failed);
    if (!n)
        bench_record_fail(rec, BENCH_FAILED, "%s", c->failed);
    else if (note[0])
        bench_record_note(rec, "%s", note + 2);
}

/* ---- the tables for people ------------------------------------------------------------- */

/* A metric's median for people: "-" when not measured ("failed" in the first column of
 * a failed record), with min..max in the first column, x after a ratio; a byte count
 * *_before_bytes with the next metric's (after) as "before..after" MiB. */
static void metric_text(char *b, size_t size, const bench_record *rec, const char *name,
                        bool first)
{
    const bench_metric *m = bench_metric_find(rec, name);
    int d = m ? m->decimals : 0;
    if (!m || !m->nsamples || !isfinite(m->median))
        snprintf(b, size, "%s", first && rec->status != BENCH_OK ? "failed" : "-");
    else if (strstr(name, "_before_bytes"))
        snprintf(b, size, "%.1f..%.1f", m->median / 1048576.0, m[1].median / 1048576.0);
    else if (first && m->nsamples > 1)
        snprintf(b, size, "%.*f (%.*f..%.*f)", d, m->median, d, m->min, d, m->max);
    else
        snprintf(b, size, "%.*f%s", d, m->median, strcmp(m->unit, "x") ? "" : "x");
}

/* A row per record (of case many only, when many_only): the case (unless many_only),
 * the idle mode, then per column pair {head, metric} the metric's median. */
static void people_table(bench_results *r, const char *title, const char *const *cols,
                         int ncols, bool many_only, const char *footer)
{
    int lead = many_only ? 1 : 2;
    const char *row[16] = {"case", "idle"}, **out = row + 2 - lead;
    char align[16] = "ll", cells[14][64];
    for (int i = 0; i < ncols; i++) {
        align[lead + i] = 'r';
        out[lead + i] = cols[2 * i];
    }
    bench_table *t = bench_table_add(r, title, lead + ncols, align);
    bench_table_row(t, out);
    for (const bench_record *rec = r->records; rec < r->records + r->nrecords; rec++) {
        if (many_only && strcmp(rec->name, "many"))
            continue;
        row[0] = rec->name;
        row[1] = bench_param_find(rec, "idle_mode");
        for (int i = 0; i < ncols; i++) {
            metric_text(cells[i], sizeof cells[i], rec, cols[2 * i + 1], i == 0);
            out[lead + i] = cells[i];
        }
        bench_table_row(t, out);
    }
    bench_table_footer(t, "%s", footer);
}

/* The tables for people, then the targets, judged. */
static void summaries(bench_results *r, const io_opts *o, bool pairs, bool many)
{
    static const char *const trips[] = {
        "us/round trip", "us_per_round_trip", "trips/s", "round_trips_per_second",
        "CPU us", "cpu_us_per_round_trip", "wake-ups", "wakeups_per_round_trip",
        "rate/os", "rate_vs_os_threads", "CPU/os", "cpu_vs_os_threads"};
    static const char *const conns[] = {
        "connections", "connections", "messages/s", "messages_per_second",
        "KiB/conn", "kib_per_connection", "KiB/end", "kib_per_end",
        "KiB/srv", "kib_per_server_end", "KiB/cli", "kib_per_client_end",
        "VM B/conn", "vm_bytes_per_connection", "RSS MiB server", "rss_before_bytes",
        "RSS MiB client", "client_rss_before_bytes"};
    people_table(r, "Round trips (many: one message echoed)", trips, 6, false,
                 pairs ? "rate/os, CPU/os: the median of per-repetition ratios of the "
                         "os-threads figure to this row's (above 1: faster, or cheaper)." : "");
    if (many)
        people_table(r, "Many connections", conns, 9, true,
                     "RSS growth per connection from before the first connection to all "
                     "open, every green process blocked in a read: KiB/srv the server "
                     "process's, KiB/cli the client process's, KiB/conn both, KiB/end their "
                     "mean (kernel memory is not in RSS); RSS MiB: before..after.");
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

int io_main(int argc, char **argv)
{
    io_opts o;
    bench_invocation inv;
    int rc = bench_parse(&io_command, argc, argv, &o, &inv);
    if (rc != BENCH_GO_ON)
        return rc;
    if (o.timeout_ms == 0)          /* "only try": every wait would fail at once */
        return bench_usage(&io_command, "--timeout-ms wants -1 (none) or 1..3600000, not 0");
    long vm_cells = __builtin_popcount(o.cases & ~(1u << OS_THREADS)) *
                    __builtin_popcount(o.modes) * o.repeat;
    if ((rc = bench_trace_cells(&inv, vm_cells, "give one of pingpong, thread-pair, many to "
                                "--case, one --idle-mode and --repeat 1")) != BENCH_GO_ON)
        return rc;
    io_sweep *sw = calloc(1, sizeof *sw);
    if (!sw) {
        fputs("stvm-bench io: out of memory\n", stderr);
        return BENCH_EXIT_FAIL;
    }
    *sw = (io_sweep){.o = &o, .inv = &inv, .connections = (long)o.connections,
                     .nofile_soft = -1, .nofile_hard = -1};
    bool pairs = o.cases & ~(1u << MANY), many = o.cases & (1u << MANY);
    if (many && (sw->connections = fit_connections(sw, (long)o.connections)) < 1) {
        fputs("stvm-bench io: no room for a single connection under RLIMIT_NOFILE\n", stderr);
        free(sw);
        return BENCH_EXIT_FAIL;
    }
    for (int i = 0; i < 10; i++) {
        io_cell *c = &sw->cells[i];
        c->kind = i == 0 ? OS_THREADS : i > 6 ? MANY : (i - 1) % 2;
        c->mode = i == 0 ? -1 : i > 6 ? i - 7 : (i - 1) / 2;
        c->on = i == 0 ? pairs : (o.cases >> c->kind & 1) && (o.modes >> c->mode & 1);
    }
    bool ok = sweep(sw);

    bench_results r;
    bench_results_init(&r, "io");
    static const int reading_order[] = {0, 1, 3, 5, 2, 4, 6, 7, 8, 9};
    for (int i = 0; i < 10; i++)
        if (sw->cells[reading_order[i]].on)
            fill_record(&r, sw, &sw->cells[reading_order[i]], pairs ? sw->cells : NULL);
    summaries(&r, &o, pairs, many);
    rc = bench_output(&r, &inv);
    bench_results_free(&r);
    free(sw);
    return ok ? rc : BENCH_EXIT_FAIL;
}
