/*
 * stvm-bench: Google Benchmark's JSON reporter format, so two runs (two commits, two
 * configurations) compare with its compare.py. A record is a benchmark named
 * command/case/key:value/...; each of its repetitions is an "iteration" run whose
 * real_time (and cpu_time) come from the record's gbench metrics and whose counters are
 * its other metrics; then the median, mean and stddev aggregates, as Google Benchmark
 * writes them after --benchmark_repetitions. Times are written in nanoseconds whatever
 * the metric's unit: compare.py prints whole time units, and a CPU figure of 0.3 µs
 * would show as 0. A record with no time metric (gbench_real
 * -1, a unit other than ns, us, ms or s) or no sample is left out.
 */
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Nanoseconds per unit, 0 for a unit that is not a time. */
static double unit_ns(const char *unit)
{
    static const char *const units[] = {"ns", "us", "ms", "s"};
    static const double ns[] = {1, 1e3, 1e6, 1e9};
    for (int i = 0; i < 4; i++)
        if (strcmp(unit, units[i]) == 0)
            return ns[i];
    return 0;
}

typedef double (*aggregate_fn)(const double *v, int n);

static double mean(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s / n;
}

static double median(const double *v, int n) { return bench_median(v, (size_t)n); }

static double stddev(const double *v, int n)
{
    double m = mean(v, n), s = 0;
    for (int i = 0; i < n; i++)
        s += (v[i] - m) * (v[i] - m);
    return n > 1 ? sqrt(s / (n - 1)) : 0;
}

/* One entry: repetition `rep` (aggregate NULL), or the aggregate over all of them. */
static void entry(FILE *f, const char *name, const bench_record *rec, int rep,
                  const char *aggregate, aggregate_fn fn, bool *first)
{
    const bench_metric *real = &rec->metrics[rec->gbench_real];
    const bench_metric *cpu = rec->gbench_cpu >= 0 ? &rec->metrics[rec->gbench_cpu] : real;
    double real_ns = unit_ns(real->unit);
    double cpu_ns = unit_ns(cpu->unit) ? unit_ns(cpu->unit) : real_ns;
    int n = real->nsamples;
    fprintf(f, "%s    {\n      \"name\": ", *first ? "" : ",\n");
    *first = false;
    char full[1024];
    snprintf(full, sizeof full, "%s%s%s", name, aggregate ? "_" : "", aggregate ? aggregate : "");
    bench_json_str(f, full);
    fputs(",\n      \"run_name\": ", f);
    bench_json_str(f, name);
    fprintf(f, ",\n      \"run_type\": \"%s\",\n      \"repetitions\": %d,\n",
            aggregate ? "aggregate" : "iteration", n);
    if (aggregate)
        fprintf(f, "      \"threads\": 1,\n      \"aggregate_name\": \"%s\",\n"
                   "      \"aggregate_unit\": \"time\",\n      \"iterations\": %d,\n",
                aggregate, n);
    else
        fprintf(f, "      \"repetition_index\": %d,\n      \"threads\": 1,\n"
                   "      \"iterations\": 1,\n", rep);
    double rt = aggregate ? fn(real->samples, n) : real->samples[rep];
    double ct = cpu->nsamples == n ? (aggregate ? fn(cpu->samples, n) : cpu->samples[rep]) : rt;
    fputs("      \"real_time\": ", f);
    bench_json_num(f, rt * real_ns);
    fputs(",\n      \"cpu_time\": ", f);
    bench_json_num(f, ct * cpu_ns);
    fputs(",\n      \"time_unit\": \"ns\"", f);
    for (int k = 0; k < rec->nmetrics; k++) {
        const bench_metric *m = &rec->metrics[k];
        if (m == real || m == cpu || m->nsamples == 0 || (!aggregate && rep >= m->nsamples))
            continue;
        fputs(",\n      ", f);
        bench_json_str(f, m->name);
        fputs(": ", f);
        bench_json_num(f, aggregate ? fn(m->samples, m->nsamples) : m->samples[rep]);
    }
    fputs("\n    }", f);
}

void bench_render_gbench(FILE *f, const bench_results *r, const bench_invocation *inv,
                         bool unused)
{
    static const char *const names[] = {"mean", "median", "stddev"};
    static const aggregate_fn fns[] = {mean, median, stddev};
    fputs("{\n", f);
    bench_context_gbench(f, inv);
    fputs(",\n  \"benchmarks\": [\n", f);
    bool first = true;
    for (int i = 0; i < r->nrecords; i++) {
        const bench_record *rec = &r->records[i];
        if (rec->gbench_real < 0 || rec->gbench_real >= rec->nmetrics ||
            rec->metrics[rec->gbench_real].nsamples == 0 ||
            !unit_ns(rec->metrics[rec->gbench_real].unit))
            continue;
        char name[1024];
        size_t len = (size_t)snprintf(name, sizeof name, "%s/%s", r->command, rec->name);
        for (int k = 0; k < rec->nparams && len < sizeof name; k++)
            len += (size_t)snprintf(name + len, sizeof name - len, "/%s:%s",
                                    rec->params[k].key, rec->params[k].value);
        int n = rec->metrics[rec->gbench_real].nsamples;
        for (int rep = 0; rep < n; rep++)
            entry(f, name, rec, rep, NULL, NULL, &first);
        for (int a = 0; n > 1 && a < 3; a++)
            entry(f, name, rec, 0, names[a], fns[a], &first);
    }
    fputs("\n  ]\n}\n", f);
}
