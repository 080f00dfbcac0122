/*
 * stvm-bench io: the figure list, the targets, the summaries, and reading a figure out
 * of a row.
 */
#include "io_report.h"

#include "bench.h"

#include <math.h>
#include <string.h>

const char *io_case_name(io_case c)
{
    switch (c) {
    case IO_PINGPONG:
        return "pingpong";
    case IO_THREAD_PAIR:
        return "thread-pair";
    case IO_OS_THREADS:
        return "os-threads";
    case IO_MANY:
        return "many";
    }
    return "?";
}

const char *io_idle_mode_name(int mode)
{
    switch (mode) {
    case STVM_IDLE_POLL:
        return "poll";
    case STVM_IDLE_LEGACY:
        return "legacy";
    case STVM_IDLE_SPIN:
        return "spin";
    }
    return "-";
}

/* The order is the CSV column order, which scripts rely on: new figures go last. */
#define FIELD(name, kind, rows) {#name, kind, offsetof(io_row, name), rows}
const io_field io_fields[] = {
    {"case", IO_TEXT, offsetof(io_row, case_name), IO_ALL_ROWS},
    FIELD(idle_mode, IO_TEXT, IO_ALL_ROWS),
    FIELD(us_per_round_trip, IO_REAL, IO_ALL_ROWS),
    FIELD(cpu_us_per_round_trip, IO_REAL, IO_ALL_ROWS),
    FIELD(wakeups_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(round_trips_per_second, IO_REAL, IO_ALL_ROWS),
    FIELD(us_per_round_trip_min, IO_REAL, IO_ALL_ROWS),
    FIELD(us_per_round_trip_max, IO_REAL, IO_ALL_ROWS),
    FIELD(rate_vs_os_threads, IO_REAL, IO_PAIRS | IO_OS_THREADS),
    FIELD(cpu_vs_os_threads, IO_REAL, IO_PAIRS | IO_OS_THREADS),
    FIELD(os_slept_us_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(wakeups_io_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(wakeups_timer_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(wakeups_relinquish_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(wakeups_external_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(fds_ready_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(io_signals_unwaited_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(io_polls_busy_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(socket_reads_blocked_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(timed_waits_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(context_switches_per_round_trip, IO_REAL, IO_VM_ROWS),
    FIELD(voluntary_switches_per_round_trip, IO_REAL, IO_ALL_ROWS),
    FIELD(involuntary_switches_per_round_trip, IO_REAL, IO_ALL_ROWS),
    FIELD(round_trips, IO_INTEGER, IO_ALL_ROWS),
    FIELD(cut_short, IO_INTEGER, IO_ALL_ROWS),
    FIELD(connections_asked, IO_INTEGER, IO_MANY),
    FIELD(connections, IO_INTEGER, IO_MANY),
    FIELD(messages_per_connection, IO_INTEGER, IO_MANY),
    FIELD(message_bytes, IO_INTEGER, IO_MANY),
    FIELD(messages_per_second, IO_REAL, IO_MANY),
    FIELD(kib_per_connection, IO_REAL, IO_MANY),
    FIELD(kib_per_end, IO_REAL, IO_MANY),
    FIELD(vm_bytes_per_connection, IO_REAL, IO_MANY),
    FIELD(rss_before_bytes, IO_INTEGER, IO_MANY),
    FIELD(rss_after_bytes, IO_INTEGER, IO_MANY),
    FIELD(repeat, IO_INTEGER, IO_ALL_ROWS),
    FIELD(us_per_round_trip_samples, IO_SAMPLES, IO_ALL_ROWS),
    FIELD(cpu_us_per_round_trip_samples, IO_SAMPLES, IO_ALL_ROWS),
    FIELD(note, IO_TEXT, IO_ALL_ROWS),
    FIELD(kib_per_server_end, IO_REAL, IO_MANY),
    FIELD(kib_per_client_end, IO_REAL, IO_MANY),
    FIELD(client_rss_before_bytes, IO_INTEGER, IO_MANY),
    FIELD(client_rss_after_bytes, IO_INTEGER, IO_MANY),
};
#undef FIELD
const size_t io_nfields = sizeof io_fields / sizeof io_fields[0];

const io_target io_targets[] = {
    {"rate_vs_os_threads", IO_PINGPONG, STVM_IDLE_POLL, true, 1.0, "x", 2,
     "ping-pong in one VM (poll) / two OS threads, rate"},
    {"connections", IO_MANY, STVM_IDLE_POLL, true, IO_TARGET_CONNECTIONS, "", 0,
     "connections held (many, poll)"},
    {"kib_per_end", IO_MANY, STVM_IDLE_POLL, false, 12.0, "KiB", 1,
     "RSS per connection end (many, poll)"},
};
const size_t io_ntargets = sizeof io_targets / sizeof io_targets[0];

bool io_field_present(const io_row *r, const io_field *f)
{
    if (!(f->rows & (unsigned)r->kind))
        return false;
    return f->kind != IO_REAL || isfinite(io_field_number(r, f));
}

double io_field_number(const io_row *r, const io_field *f)
{
    const char *p = (const char *)r + f->offset;
    if (f->kind == IO_INTEGER) {
        long long v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    double d = NAN;
    if (f->kind == IO_REAL)
        memcpy(&d, p, sizeof d);
    return d;
}

const char *io_field_text(const io_row *r, const io_field *f)
{
    return f->kind == IO_TEXT ? (const char *)r + f->offset : "";
}

const double *io_field_samples(const io_row *r, const io_field *f, int *n)
{
    *n = f->kind == IO_SAMPLES ? r->nsamples : 0;
    return (const double *)(const void *)((const char *)r + f->offset);
}

const io_field *io_field_named(const char *name)
{
    for (size_t i = 0; i < io_nfields; i++)
        if (!strcmp(io_fields[i].name, name))
            return &io_fields[i];
    return NULL;
}

const io_row *io_target_row(const io_report *r, const io_target *t)
{
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].kind == t->kind && r->rows[i].mode == t->mode &&
            r->rows[i].nsamples > 0)
            return &r->rows[i];
    return NULL;
}

double io_target_measured(const io_report *r, const io_target *t, const char **met)
{
    const io_row *row = io_target_row(r, t);
    const io_field *f = io_field_named(t->field);
    double v = row && f && io_field_present(row, f) ? io_field_number(row, f) : NAN;
    if (!isfinite(v)) {
        *met = "not measured";
        return v;
    }
    /* A count target asks for the count: with fewer connections asked it is not judged
     * (a descriptor limit that cut the count short is a miss, said in the row's note). */
    if (!strcmp(t->field, "connections") && row->connections_asked < (long long)t->limit) {
        *met = "not judged";
        return v;
    }
    double scale = pow(10, t->decimals);
    double shown = round(v * scale), limit = t->limit * scale;
    *met = (t->at_least ? shown >= limit : shown <= limit) ? "met" : "MISSED";
    return v;
}

const io_row *io_reference_row(const io_report *r)
{
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].kind == IO_OS_THREADS)
            return &r->rows[i];
    return NULL;
}

/* ---- summaries -------------------------------------------------------------------------- */

/* The median over the repetitions of count(k) / round trips(k). */
#define PER_RT(row, field)                                                              \
    do {                                                                                \
        double v_[IO_MAX_REPEAT];                                                       \
        for (int k_ = 0; k_ < (row)->nsamples; k_++)                                    \
            v_[k_] = (double)(row)->samples[k_].field /                                 \
                     (double)(row)->samples[k_].round_trips;                            \
        (row)->field##_per_round_trip = bench_median(v_, (size_t)(row)->nsamples);      \
    } while (0)

/* Per repetition: the figures of the many case. */
static double kib_growth(const io_many_side *s, const io_many_result *m)
{
    return ((double)s->rss_after - (double)s->rss_before) / 1024.0 / (double)m->connected;
}
static double connected(const io_many_result *m) { return (double)m->connected; }
static double kib_server(const io_many_result *m) { return kib_growth(&m->server, m); }
static double kib_client(const io_many_result *m) { return kib_growth(&m->client, m); }
static double kib_both(const io_many_result *m) { return kib_server(m) + kib_client(m); }
static double live_both(const io_many_result *m)
{
    return ((double)m->server.live_after - (double)m->server.live_before +
            (double)m->client.live_after - (double)m->client.live_before) /
           (double)m->connected;
}
static double server_before(const io_many_result *m) { return (double)m->server.rss_before; }
static double server_after(const io_many_result *m) { return (double)m->server.rss_after; }
static double client_before(const io_many_result *m) { return (double)m->client.rss_before; }
static double client_after(const io_many_result *m) { return (double)m->client.rss_after; }

/* The median over the repetitions of one figure. */
static double many_median(const io_row *row, double (*figure)(const io_many_result *m))
{
    double v[IO_MAX_REPEAT];
    for (int k = 0; k < row->nsamples; k++)
        v[k] = figure(&row->many[k]);
    return bench_median(v, (size_t)row->nsamples);
}

static void summarise_many(io_row *row)
{
    row->connections = (long long)many_median(row, connected);
    row->kib_per_server_end = many_median(row, kib_server);
    row->kib_per_client_end = many_median(row, kib_client);
    row->kib_per_connection = many_median(row, kib_both);
    row->kib_per_end = row->kib_per_connection / 2;
    row->vm_bytes_per_connection = many_median(row, live_both);
    row->rss_before_bytes = (long long)many_median(row, server_before);
    row->rss_after_bytes = (long long)many_median(row, server_after);
    row->client_rss_before_bytes = (long long)many_median(row, client_before);
    row->client_rss_after_bytes = (long long)many_median(row, client_after);
    row->messages_per_second = 1e6 / row->us_per_round_trip;
}

static void summarise_row(io_row *row)
{
    size_t n = (size_t)row->nsamples;
    double rts[IO_MAX_REPEAT];
    row->cut_short = 0;
    for (size_t k = 0; k < n; k++) {
        const io_counts *c = &row->samples[k];
        double rt = (double)c->round_trips;
        row->us_per_round_trip_samples[k] = rt > 0 ? (double)c->wall_ns / 1e3 / rt : NAN;
        row->cpu_us_per_round_trip_samples[k] = rt > 0 ? (double)c->cpu_ns / 1e3 / rt : NAN;
        rts[k] = rt;
        row->cut_short += c->cut_short;
    }
    row->us_per_round_trip = bench_median(row->us_per_round_trip_samples, n);
    row->us_per_round_trip_min = bench_min(row->us_per_round_trip_samples, n);
    row->us_per_round_trip_max = bench_max(row->us_per_round_trip_samples, n);
    row->cpu_us_per_round_trip = bench_median(row->cpu_us_per_round_trip_samples, n);
    row->round_trips_per_second = 1e6 / row->us_per_round_trip;
    row->round_trips = (long long)bench_median(rts, n);
    double slept[IO_MAX_REPEAT], wake[IO_MAX_REPEAT], vol[IO_MAX_REPEAT], invol[IO_MAX_REPEAT];
    for (size_t k = 0; k < n; k++) {
        const io_counts *c = &row->samples[k];
        double rt = (double)c->round_trips;
        wake[k] = (double)c->os_sleeps / rt;
        slept[k] = (double)c->os_slept_us / rt;
        vol[k] = (double)c->voluntary_switches / rt;
        invol[k] = (double)c->involuntary_switches / rt;
    }
    row->wakeups_per_round_trip = bench_median(wake, n);
    row->os_slept_us_per_round_trip = bench_median(slept, n);
    row->voluntary_switches_per_round_trip = bench_median(vol, n);
    row->involuntary_switches_per_round_trip = bench_median(invol, n);
    PER_RT(row, wakeups_io);
    PER_RT(row, wakeups_timer);
    PER_RT(row, wakeups_relinquish);
    PER_RT(row, wakeups_external);
    PER_RT(row, fds_ready);
    PER_RT(row, io_signals_unwaited);
    PER_RT(row, io_polls_busy);
    PER_RT(row, socket_reads_blocked);
    PER_RT(row, timed_waits);
    PER_RT(row, context_switches);
    if (row->kind == IO_MANY)
        summarise_many(row);
}

/* Ratios pair each repetition with the reference's run of the same repetition (measured
 * moments apart), then take the median. */
static void summarise_ratios(io_row *row, const io_row *ref)
{
    double rate[IO_MAX_REPEAT], cpu[IO_MAX_REPEAT];
    int n = 0;
    for (int k = 0; ref && k < row->nsamples && k < ref->nsamples; k++, n++) {
        rate[k] = ref->us_per_round_trip_samples[k] / row->us_per_round_trip_samples[k];
        cpu[k] = ref->cpu_us_per_round_trip_samples[k] / row->cpu_us_per_round_trip_samples[k];
    }
    row->rate_vs_os_threads = bench_median(rate, (size_t)n);
    row->cpu_vs_os_threads = bench_median(cpu, (size_t)n);
}

void io_report_summarise(io_report *r)
{
    for (int i = 0; i < r->nrows; i++) {
        io_row *row = &r->rows[i];
        row->repeat = r->repeat;
        for (size_t j = 0; j < io_nfields; j++) {   /* not measured until summarised */
            if (io_fields[j].kind == IO_REAL) {
                double nan = NAN;
                memcpy((char *)row + io_fields[j].offset, &nan, sizeof nan);
            }
        }
        if (row->nsamples > 0)
            summarise_row(row);
    }
    const io_row *ref = io_reference_row(r);
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].kind & (IO_PAIRS | IO_OS_THREADS))
            summarise_ratios(&r->rows[i], ref);
}
