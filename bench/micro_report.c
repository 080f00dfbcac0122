/*
 * stvm-bench micro: the figure list, the targets, and reading a figure out of a row.
 */
#include "micro_report.h"

#include "bench.h"

#include <math.h>
#include <string.h>

/* The order is the CSV column order, which scripts rely on: new figures go last. */
#define FIELD(name, kind, reference) {#name, kind, offsetof(micro_row, name), reference}
const micro_field micro_fields[] = {
    FIELD(backend, MICRO_TEXT, true),
    FIELD(handoff_ns, MICRO_REAL, true),
    FIELD(handoff_ns_min, MICRO_REAL, true),
    FIELD(handoff_ns_max, MICRO_REAL, true),
    FIELD(raw_switch_ns, MICRO_REAL, false),
    FIELD(raw_switch_ns_min, MICRO_REAL, false),
    FIELD(raw_switch_ns_max, MICRO_REAL, false),
    FIELD(processes_asked, MICRO_INTEGER, false),
    FIELD(processes, MICRO_INTEGER, false),
    FIELD(kib_per_process, MICRO_REAL, false),
    FIELD(vm_bytes_per_process, MICRO_REAL, false),
    FIELD(rss_before_bytes, MICRO_INTEGER, false),
    FIELD(rss_after_bytes, MICRO_INTEGER, false),
    FIELD(pthread_over_stvm, MICRO_REAL, true),
    FIELD(repeat, MICRO_INTEGER, true),
    FIELD(iterations, MICRO_INTEGER, true),
    FIELD(handoff_ns_samples, MICRO_SAMPLES, true),
    FIELD(raw_switch_ns_samples, MICRO_SAMPLES, false),
    FIELD(note, MICRO_TEXT, true),
};
#undef FIELD
const size_t micro_nfields = sizeof micro_fields / sizeof micro_fields[0];

const micro_target micro_targets[] = {
    {"handoff_ns", 25.0, "ns", 1, "semaphore hand-off", "semaphore hand-off"},
    {"raw_switch_ns", 10.0, "ns", 1, "raw switch", "raw switch"},
    {"kib_per_process", 4.0, "KiB", 2, "RSS per blocked process",
     "resident memory per blocked process"},
};
const size_t micro_ntargets = sizeof micro_targets / sizeof micro_targets[0];

bool micro_field_present(const micro_row *r, const micro_field *f)
{
    if (r->reference && !f->reference)
        return false;
    return f->kind != MICRO_REAL || isfinite(micro_field_number(r, f));
}

double micro_field_number(const micro_row *r, const micro_field *f)
{
    const char *p = (const char *)r + f->offset;
    if (f->kind == MICRO_INTEGER) {
        long long v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    double d = NAN;
    if (f->kind == MICRO_REAL)
        memcpy(&d, p, sizeof d);
    return d;
}

const char *micro_field_text(const micro_row *r, const micro_field *f)
{
    return f->kind == MICRO_TEXT ? (const char *)r + f->offset : "";
}

const double *micro_field_samples(const micro_row *r, const micro_field *f, int *n)
{
    *n = f->kind == MICRO_SAMPLES ? r->nsamples : 0;
    return (const double *)(const void *)((const char *)r + f->offset);
}

const micro_field *micro_field_named(const char *name)
{
    for (size_t i = 0; i < micro_nfields; i++)
        if (!strcmp(micro_fields[i].name, name))
            return &micro_fields[i];
    return NULL;
}

bool micro_report_judged(const micro_report *r)
{
    return !strcmp(r->rows[0].backend, MICRO_JUDGED_BACKEND);
}

double micro_target_measured(const micro_report *r, const micro_target *t,
                             const char **met)
{
    const micro_field *f = micro_field_named(t->field);
    double v = f ? micro_field_number(&r->rows[0], f) : NAN;
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
}
