/*
 * stvm-bench io: the report for people, as aligned tables or Markdown. Three tables
 * (round trips; what each round trip cost in waits and switches; many connections),
 * the notes that say what the figures are, and the targets.
 */
#include "io_render.h"

#include "bench.h"

#include <math.h>
#include <string.h>

/* v with d decimals, or "-" when it is not a number. */
static const char *num(char *buf, size_t size, double v, int d)
{
    if (isfinite(v))
        snprintf(buf, size, "%.*f", d, v);
    else
        snprintf(buf, size, "-");
    return buf;
}

/* A figure the row has (per io_fields), else NaN so that it prints as "-". */
static double fig(const io_row *row, const char *name)
{
    const io_field *f = io_field_named(name);
    return f && io_field_present(row, f) ? io_field_number(row, f) : NAN;
}

static bool has_kind(const io_report *r, unsigned kinds)
{
    for (int i = 0; i < r->nrows; i++)
        if ((unsigned)r->rows[i].kind & kinds)
            return true;
    return false;
}

static void intro(FILE *f, const io_report *r, bool md)
{
    char cpu[64], timeout[80];
    if (r->cpu >= 0)
        snprintf(cpu, sizeof cpu, "VM and peer threads pinned to CPU %d", r->cpu);
    else
        snprintf(cpu, sizeof cpu, "not pinned");
    if (r->timeout_ms < 0)
        snprintf(timeout, sizeof timeout, "socket waits without a timeout");
    else
        snprintf(timeout, sizeof timeout, "socket waits with a %lld ms timeout",
                 (long long)r->timeout_ms);
    if (md)
        fprintf(f, "## stvm-bench io\n\n");
    fprintf(f, "%sstvm %s (%s back end), %s, median of %d repetitions (min..max), %s",
            md ? "" : "stvm-bench io: ", stvm_version_string(), stvm_context_backend(), cpu,
            r->repeat, timeout);
    if (has_kind(r, IO_PAIRS | IO_OS_THREADS))
        fprintf(f, "; ping-pong: %lld round trips of 1 byte per cell (at most %g s)",
                r->round_trips, r->max_seconds);
    if (has_kind(r, IO_MANY))
        fprintf(f, "; many: %ld connections, %d messages of %d bytes each", r->connections,
                r->messages, r->message_bytes);
    fprintf(f, "%s\n\n", md ? "." : "");
}

/* ---- round trips --------------------------------------------------------------------------- */

static void rates(FILE *f, const io_report *r, bool md)
{
    if (md)
        fprintf(f, "### Round trips (many: one message echoed)\n\n"
                   "| case | idle mode | µs per round trip | round trips/s | CPU µs per round "
                   "trip | wake-ups per round trip | rate vs os-threads | CPU vs os-threads "
                   "|\n|---|---|---:|---:|---:|---:|---:|---:|\n");
    else
        fprintf(f, "Round trips (many: one message echoed)\n"
                   "%-12s %-7s %-22s %10s %8s %9s %9s %9s\n", "case", "idle", "us/round trip",
                "trips/s", "CPU us", "wake-ups", "rate/os", "CPU/os");
    for (int i = 0; i < r->nrows; i++) {
        const io_row *row = &r->rows[i];
        char us[64], a[24], b[24], c[24], d[24], e[24];
        if (row->nsamples)
            snprintf(us, sizeof us, "%.1f (%.1f..%.1f)", row->us_per_round_trip,
                     row->us_per_round_trip_min, row->us_per_round_trip_max);
        else
            snprintf(us, sizeof us, "failed");
        num(a, sizeof a, row->round_trips_per_second, 0);
        num(b, sizeof b, row->cpu_us_per_round_trip, 1);
        num(c, sizeof c, fig(row, "wakeups_per_round_trip"), 2);
        num(d, sizeof d, fig(row, "rate_vs_os_threads"), 2);
        num(e, sizeof e, fig(row, "cpu_vs_os_threads"), 2);
        if (strcmp(d, "-"))
            strcat(d, "x");
        if (strcmp(e, "-"))
            strcat(e, "x");
        if (md)
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", row->case_name,
                    row->idle_mode, us, a, b, c, d, e);
        else
            fprintf(f, "%-12s %-7s %-22s %10s %8s %9s %9s %9s\n", row->case_name,
                    row->idle_mode, us, a, b, c, d, e);
    }
}

/* ---- what a round trip cost ---------------------------------------------------------------- */

static const struct {
    const char *field, *head, *md;
    int decimals;
} cost_columns[] = {
    {"os_slept_us_per_round_trip", "slept", "slept µs", 1},
    {"wakeups_io_per_round_trip", "w:io", "wake-ups: IO", 2},
    {"wakeups_timer_per_round_trip", "w:timer", "timer", 2},
    {"wakeups_relinquish_per_round_trip", "w:rel", "relinquish", 2},
    {"wakeups_external_per_round_trip", "w:ext", "external", 2},
    {"fds_ready_per_round_trip", "fds", "fds ready", 2},
    {"io_signals_unwaited_per_round_trip", "unwait", "unwaited signals", 2},
    {"io_polls_busy_per_round_trip", "busy", "busy polls", 3},
    {"socket_reads_blocked_per_round_trip", "blocked", "reads blocked", 2},
    {"timed_waits_per_round_trip", "timed", "timed waits", 2},
    {"context_switches_per_round_trip", "green", "green switches", 2},
    {"voluntary_switches_per_round_trip", "os-vol", "OS voluntary switches", 2},
    {"involuntary_switches_per_round_trip", "os-inv", "OS involuntary switches", 2},
};
#define NCOST (sizeof cost_columns / sizeof cost_columns[0])

static void costs(FILE *f, const io_report *r, bool md)
{
    if (md) {
        fprintf(f, "\n### Per round trip (many: per message)\n\n| case | idle mode |");
        for (size_t j = 0; j < NCOST; j++)
            fprintf(f, " %s |", cost_columns[j].md);
        fprintf(f, "\n|---|---|");
        for (size_t j = 0; j < NCOST; j++)
            fprintf(f, "---:|");
        fputc('\n', f);
    } else {
        fprintf(f, "\nPer round trip (many: per message)\n%-12s %-7s", "case", "idle");
        for (size_t j = 0; j < NCOST; j++)
            fprintf(f, " %7s", cost_columns[j].head);
        fputc('\n', f);
    }
    for (int i = 0; i < r->nrows; i++) {
        const io_row *row = &r->rows[i];
        if (md)
            fprintf(f, "| %s | %s |", row->case_name, row->idle_mode);
        else
            fprintf(f, "%-12s %-7s", row->case_name, row->idle_mode);
        for (size_t j = 0; j < NCOST; j++) {
            char v[24];
            num(v, sizeof v, fig(row, cost_columns[j].field), cost_columns[j].decimals);
            if (md)
                fprintf(f, " %s |", v);
            else
                fprintf(f, " %7s", v);
        }
        fputc('\n', f);
    }
}

/* ---- many connections ---------------------------------------------------------------------- */

static void many(FILE *f, const io_report *r, bool md)
{
    if (!has_kind(r, IO_MANY))
        return;
    if (md)
        fprintf(f, "\n### Many connections\n\n| idle mode | connections | messages/s | "
                   "KiB per connection (both ends) | KiB per end (mean) | KiB per server "
                   "end | KiB per client end | VM bytes_live per connection | RSS server, "
                   "client before → after [MiB] |\n"
                   "|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    else
        fprintf(f, "\nMany connections\n%-7s %11s %11s %9s %9s %9s %9s %10s %s\n", "idle",
                "connections", "messages/s", "KiB/conn", "KiB/end", "KiB/srv", "KiB/cli",
                "VM B/conn", "RSS MiB server, client before..after");
    for (int i = 0; i < r->nrows; i++) {
        const io_row *row = &r->rows[i];
        if (row->kind != IO_MANY)
            continue;
        char a[24], b[24], c[24], d[24], srv[24], cli[24], conns[24], rss[96];
        num(conns, sizeof conns, row->nsamples ? (double)row->connections : NAN, 0);
        num(a, sizeof a, row->messages_per_second, 0);
        num(b, sizeof b, row->kib_per_connection, 2);
        num(c, sizeof c, row->kib_per_end, 2);
        num(srv, sizeof srv, row->kib_per_server_end, 2);
        num(cli, sizeof cli, row->kib_per_client_end, 2);
        num(d, sizeof d, row->vm_bytes_per_connection, 0);
        if (row->nsamples)
            snprintf(rss, sizeof rss, "%.1f..%.1f, %.1f..%.1f",
                     (double)row->rss_before_bytes / 1048576.0,
                     (double)row->rss_after_bytes / 1048576.0,
                     (double)row->client_rss_before_bytes / 1048576.0,
                     (double)row->client_rss_after_bytes / 1048576.0);
        else
            snprintf(rss, sizeof rss, "-");
        if (md)
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row->idle_mode,
                    conns, a, b, c, srv, cli, d, rss);
        else
            fprintf(f, "%-7s %11s %11s %9s %9s %9s %9s %10s %s\n", row->idle_mode, conns, a,
                    b, c, srv, cli, d, rss);
    }
}

/* ---- notes and targets --------------------------------------------------------------------- */

static void notes(FILE *f, const io_report *r, bool md)
{
    const char *b = md ? "- " : "  ";
    fprintf(f, "\n%s\n", md ? "### Notes\n" : "Notes:");
    if (has_kind(r, IO_PAIRS | IO_OS_THREADS))
        fprintf(f, "%sos-threads: two OS threads with blocking sockets (the reference); "
                   "thread-pair: a green process against an OS thread with a blocking socket; "
                   "pingpong: two green processes of one VM. Peer threads run on the VM's CPU, "
                   "so every pair has one core.\n"
                   "%srate/os, CPU/os: the median over repetitions of the os-threads figure "
                   "divided by this row's, each repetition against the reference measured "
                   "moments before it (above 1: faster, or cheaper, than the reference).\n",
                b, b);
    fprintf(f, "%swake-ups: stats.os_sleeps, waits in the OS that could block (w:* by what "
               "ended them); an epoll wait that finds a descriptor already ready counts "
               "without sleeping: os-vol (voluntary context switches of the whole process, "
               "getrusage) counts real sleeps. fds: one-shot handlers fired; busy: looks at "
               "descriptors while processes ran; blocked: socket reads that waited; green: "
               "the VM's context switches.\n", b);
    if (has_kind(r, IO_MANY))
        fprintf(f, "%smany: an echo server in this process's VM (an accepting process "
                   "spawning one handler process per connection) and one client process per "
                   "connection in a forked child's VM on the same CPU, each end with a "
                   "SocketStream (4 KiB read and write buffers, lent while they hold bytes). "
                   "Each process reads its RSS before the first connection and again with "
                   "every connection open and every green process of both VMs blocked in a "
                   "read after one exchange. An end (KiB/srv: the server process's growth, "
                   "KiB/cli: the client process's, per connection) is one green process, its "
                   "stack, one socket (descriptor, three external semaphores, aio entry) and "
                   "one SocketStream; KiB/conn is both ends, KiB/end their mean. Kernel "
                   "memory (socket buffers, TCP state, epoll items, descriptor tables) is "
                   "not in RSS and not counted. messages/s counts echoes from the first "
                   "greeting to the last echo; CPU and the VM counters are both "
                   "processes'.\n", b);
    if (r->connections < r->connections_asked)
        fprintf(f, "%sdescriptors: %ld connections asked need %ld descriptors in each "
                   "process but RLIMIT_NOFILE allows %lld (soft raised to the hard limit): ran "
                   "%ld. Raise the hard limit (as root: ulimit -Hn %ld, or prlimit) to hold "
                   "them all.\n",
                b, r->connections_asked, r->connections_asked + 16, r->nofile_hard,
                r->connections, r->connections_asked + 64);
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].note[0])
            fprintf(f, "%s%s %s: %s\n", b, r->rows[i].case_name, r->rows[i].idle_mode,
                    r->rows[i].note);
}

static void targets(FILE *f, const io_report *r, bool md)
{
    fprintf(f, "\n%sTargets (one pinned core; ratios side by side in this run)%s\n",
            md ? "### " : "", md ? "\n" : ":");
    if (md)
        fputs("| figure | target | measured | |\n|---|---:|---:|---|\n", f);
    for (size_t i = 0; i < io_ntargets; i++) {
        const io_target *t = &io_targets[i];
        const char *met;
        double v = io_target_measured(r, t, &met);
        char want[32], got[32];
        snprintf(want, sizeof want, "%s %.*f%s%s", t->at_least ? ">=" : "<=", t->decimals,
                 t->limit, *t->unit && strcmp(t->unit, "x") ? " " : "", t->unit);
        num(got, sizeof got, v, t->decimals);
        if (isfinite(v))
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s",
                     *t->unit && strcmp(t->unit, "x") ? " " : "", t->unit);
        if (md)
            fprintf(f, "| %s | %s | %s | %s |\n", t->label, want, got, met);
        else
            fprintf(f, "  %-50s %12s %12s  %s\n", t->label, want, got, met);
    }
}

void io_print_table(FILE *f, const io_report *r, bool markdown)
{
    intro(f, r, markdown);
    rates(f, r, markdown);
    costs(f, r, markdown);
    many(f, r, markdown);
    notes(f, r, markdown);
    targets(f, r, markdown);
}
