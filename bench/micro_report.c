/*
 * stvm-bench micro: the figure list, the targets, and reading a figure out of a row.
 */
#include "micro_report.h"

#include "bench.h"

#include <math.h>
#include <string.h>

/* The order is the CSV column order, which scripts rely on: new figures go last. */
#define FIELD(name, kind, reference) \
    {#name, kind, offsetof(micro_row, name), MICRO_ROW_STVM | ((reference) ? MICRO_ROW_PTHREAD : 0)}
const bench_field micro_fields[] = {
    FIELD(backend, BENCH_TEXT, true),
    FIELD(handoff_ns, BENCH_REAL, true),
    FIELD(handoff_ns_min, BENCH_REAL, true),
    FIELD(handoff_ns_max, BENCH_REAL, true),
    FIELD(raw_switch_ns, BENCH_REAL, false),
    FIELD(raw_switch_ns_min, BENCH_REAL, false),
    FIELD(raw_switch_ns_max, BENCH_REAL, false),
    FIELD(processes_asked, BENCH_INTEGER, false),
    FIELD(processes, BENCH_INTEGER, false),
    FIELD(kib_per_process, BENCH_REAL, false),
    FIELD(vm_bytes_per_process, BENCH_REAL, false),
    FIELD(rss_before_bytes, BENCH_INTEGER, false),
    FIELD(rss_after_bytes, BENCH_INTEGER, false),
    FIELD(pthread_over_stvm, BENCH_REAL, true),
    FIELD(repeat, BENCH_INTEGER, true),
    FIELD(iterations, BENCH_INTEGER, true),
    FIELD(handoff_ns_samples, BENCH_SAMPLES, true),
    FIELD(raw_switch_ns_samples, BENCH_SAMPLES, false),
    FIELD(note, BENCH_TEXT, true),
    FIELD(queue_ns, BENCH_REAL, false),
    FIELD(queue_ns_min, BENCH_REAL, false),
    FIELD(queue_ns_max, BENCH_REAL, false),
    FIELD(queue_over_handoff, BENCH_REAL, false),
    FIELD(queue_ns_samples, BENCH_SAMPLES, false),
    FIELD(monitor_ns, BENCH_REAL, false),
    FIELD(monitor_ns_min, BENCH_REAL, false),
    FIELD(monitor_ns_max, BENCH_REAL, false),
    FIELD(monitor_ns_samples, BENCH_SAMPLES, false),
    FIELD(monitor_enter_exit_ns, BENCH_REAL, false),
    FIELD(monitor_enter_exit_ns_min, BENCH_REAL, false),
    FIELD(monitor_enter_exit_ns_max, BENCH_REAL, false),
    FIELD(monitor_enter_exit_ns_samples, BENCH_SAMPLES, false),
};
#undef FIELD
const size_t micro_nfields = sizeof micro_fields / sizeof micro_fields[0];

const micro_target micro_targets[] = {
    {"handoff_ns", 25.0, "ns", 1, "semaphore hand-off", "semaphore hand-off"},
    {"raw_switch_ns", 10.0, "ns", 1, "raw switch", "raw switch"},
    {"kib_per_process", 4.0, "KiB", 2, "RSS per blocked process",
     "resident memory per blocked process"},
    {"queue_over_handoff", 2.0, "x", 2, "queue / semaphore hand-off",
     "SharedQueue put + take / semaphore hand-off"},
};
const size_t micro_ntargets = sizeof micro_targets / sizeof micro_targets[0];

static unsigned row_kind(const void *row)
{
    return ((const micro_row *)row)->reference ? MICRO_ROW_PTHREAD : MICRO_ROW_STVM;
}

static int row_nsamples(const void *row)
{
    return ((const micro_row *)row)->nsamples;
}

bench_rows micro_rows(const micro_report *r)
{
    return (bench_rows){micro_fields, micro_nfields, r->rows, sizeof r->rows[0], r->nrows,
                        row_kind, row_nsamples};
}

bool micro_report_judged(const micro_report *r)
{
    return !strcmp(r->rows[0].backend, MICRO_JUDGED_BACKEND);
}

double micro_target_measured(const micro_report *r, const micro_target *t,
                             const char **met)
{
    const bench_field *f = bench_field_named(micro_fields, micro_nfields, t->field);
    double v = f ? bench_field_number(&r->rows[0], f) : NAN;
    if (!isfinite(v))
        *met = "not measured";
    else   /* judged on the figure as printed (4.0001 KiB prints, and counts, as 4.00) */
        *met = round(v * pow(10, t->decimals)) <= t->limit * pow(10, t->decimals) ? "met"
                                                                                : "MISSED";
    return v;
}

void micro_row_summarise(micro_row *r)
{
    size_t n = (size_t)r->nsamples;
    r->handoff_ns = bench_median(r->handoff_ns_samples, n);
    r->handoff_ns_min = bench_min(r->handoff_ns_samples, n);
    r->handoff_ns_max = bench_max(r->handoff_ns_samples, n);
    r->raw_switch_ns = bench_median(r->raw_switch_ns_samples, n);
    r->raw_switch_ns_min = bench_min(r->raw_switch_ns_samples, n);
    r->raw_switch_ns_max = bench_max(r->raw_switch_ns_samples, n);
    r->queue_ns = bench_median(r->queue_ns_samples, n);
    r->queue_ns_min = bench_min(r->queue_ns_samples, n);
    r->queue_ns_max = bench_max(r->queue_ns_samples, n);
    r->monitor_ns = bench_median(r->monitor_ns_samples, n);
    r->monitor_ns_min = bench_min(r->monitor_ns_samples, n);
    r->monitor_ns_max = bench_max(r->monitor_ns_samples, n);
    r->monitor_enter_exit_ns = bench_median(r->monitor_enter_exit_ns_samples, n);
    r->monitor_enter_exit_ns_min = bench_min(r->monitor_enter_exit_ns_samples, n);
    r->monitor_enter_exit_ns_max = bench_max(r->monitor_enter_exit_ns_samples, n);
}
