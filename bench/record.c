/* stvm-bench: the result record and the judge (record.h). */
#include "record.h"
#include "render.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *must(void *p)
{
    if (!p) {
        fputs("stvm-bench: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

static char *copy(const char *s)
{
    return s ? must(strdup(s)) : NULL;
}

static char *vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        must(NULL);
    return s;
}

/* Grow an array of `size`-byte items so index *n fits; answers the new item, zeroed. */
static void *grow(void *base, int *n, int *cap, size_t size)
{
    void **array = base;
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        *array = must(realloc(*array, (size_t)*cap * size));
    }
    char *item = (char *)*array + (size_t)(*n)++ * size;
    memset(item, 0, size);
    return item;
}

void bench_results_init(bench_results *r, const char *command)
{
    memset(r, 0, sizeof *r);
    r->command = command;
    r->note = copy("");
}

/* free() each of n pointers. */
static void free_all(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    while (n--)
        free(va_arg(ap, void *));
    va_end(ap);
}

void bench_results_free(bench_results *r)
{
    for (int i = 0; i < r->nrecords; i++) {
        bench_record *rec = &r->records[i];
        for (int k = 0; k < rec->nparams; k++)
            free_all(2, rec->params[k].key, rec->params[k].value);
        for (int k = 0; k < rec->nmetrics; k++)
            free_all(3, rec->metrics[k].name, rec->metrics[k].unit, rec->metrics[k].samples);
        free_all(4, rec->params, rec->metrics, rec->name, rec->note);
    }
    for (int i = 0; i < r->ntables; i++) {
        bench_table *t = &r->tables[i];
        for (int k = 0; k < t->nrows * t->ncols; k++)
            free(t->cells[k]);
        free_all(4, t->cells, t->title, t->align, t->footer);
    }
    for (int i = 0; i < r->ntargets; i++) {
        bench_target *t = &r->targets[i];
        free_all(6, t->text, t->select, t->metric, t->ref_select, t->ref_metric, t->note);
    }
    free_all(4, r->records, r->tables, r->targets, r->note);
    memset(r, 0, sizeof *r);
}

bench_record *bench_record_add(bench_results *r, const char *name)
{
    bench_record *rec = grow(&r->records, &r->nrecords, &r->records_cap, sizeof *rec);
    *rec = (bench_record){.name = copy(name), .note = copy(""), .status = BENCH_OK,
                          .gbench_real = -1, .gbench_cpu = -1};
    return rec;
}

void bench_param_add(bench_record *rec, const char *key, const char *fmt, ...)
{
    rec->params = must(realloc(rec->params, (size_t)(rec->nparams + 1) * sizeof *rec->params));
    va_list ap;
    va_start(ap, fmt);
    rec->params[rec->nparams].value = vformat(fmt, ap);
    va_end(ap);
    rec->params[rec->nparams++].key = copy(key);
}

static void metric_summarise(bench_metric *m)
{
    m->median = bench_median(m->samples, (size_t)m->nsamples);
    m->min = m->max = m->nsamples ? m->samples[0] : NAN;
    for (int i = 1; i < m->nsamples; i++) {
        m->min = fmin(m->min, m->samples[i]);
        m->max = fmax(m->max, m->samples[i]);
    }
}

int bench_metric_add(bench_record *rec, const char *name, const char *unit,
                     bench_better better, int decimals, const double *samples, int n)
{
    rec->metrics = must(realloc(rec->metrics, (size_t)(rec->nmetrics + 1) * sizeof *rec->metrics));
    bench_metric *m = &rec->metrics[rec->nmetrics];
    *m = (bench_metric){.name = copy(name), .unit = copy(unit),
                        .better = better, .decimals = decimals, .nsamples = n > 0 ? n : 0};
    m->samples = must(malloc((size_t)(m->nsamples + 1) * sizeof *m->samples));
    if (m->nsamples)
        memcpy(m->samples, samples, (size_t)n * sizeof *samples);
    metric_summarise(m);
    return rec->nmetrics++;
}

void bench_metric_push(bench_metric *m, double sample)
{
    m->samples = must(realloc(m->samples, (size_t)(m->nsamples + 1) * sizeof *m->samples));
    m->samples[m->nsamples++] = sample;
    metric_summarise(m);
}

bench_metric *bench_metric_find(const bench_record *rec, const char *name)
{
    for (int i = 0; i < rec->nmetrics; i++)
        if (strcmp(rec->metrics[i].name, name) == 0)
            return &rec->metrics[i];
    return NULL;
}

const char *bench_param_find(const bench_record *rec, const char *key)
{
    for (int i = 0; i < rec->nparams; i++)
        if (strcmp(rec->params[i].key, key) == 0)
            return rec->params[i].value;
    return NULL;
}

/* *text becomes the printf of fmt (the old text freed). */
static void retext(char **text, const char *fmt, va_list ap)
{
    free(*text);
    *text = vformat(fmt, ap);
}

void bench_record_fail(bench_record *rec, bench_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    retext(&rec->note, fmt, ap);
    va_end(ap);
    rec->status = status;
}

void bench_record_note(bench_record *rec, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    retext(&rec->note, fmt, ap);
    va_end(ap);
}

void bench_results_note(bench_results *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    retext(&r->note, fmt, ap);
    va_end(ap);
}

/* Does rec match "case key=value ..."? Each pair must be one of rec's parameters. */
static bool record_matches(const bench_record *rec, const char *select)
{
    char buf[1024], *save, *word;
    snprintf(buf, sizeof buf, "%s", select);
    word = strtok_r(buf, " ", &save);
    if (!word || (strcmp(word, "*") && strcmp(word, rec->name)))
        return false;
    while ((word = strtok_r(NULL, " ", &save)) != NULL) {
        char *eq = strchr(word, '=');
        const char *v = eq ? (*eq = 0, bench_param_find(rec, word)) : NULL;
        if (!v || strcmp(v, eq + 1))
            return false;
    }
    return true;
}

bench_record *bench_record_select(const bench_results *r, const char *select)
{
    for (int i = 0; i < r->nrecords; i++)
        if (record_matches(&r->records[i], select))
            return &r->records[i];
    return NULL;
}

bench_table *bench_table_add(bench_results *r, const char *title, int ncols,
                             const char *align)
{
    bench_table *t = grow(&r->tables, &r->ntables, &r->tables_cap, sizeof *t);
    *t = (bench_table){.title = copy(title ? title : ""), .ncols = ncols,
                       .align = must(calloc((size_t)ncols + 1, 1)), .footer = copy("")};
    for (int i = 0; i < ncols; i++)
        t->align[i] = align && i < (int)strlen(align) && align[i] == 'r' ? 'r' : 'l';
    return t;
}

void bench_table_row(bench_table *t, const char *const *cells)
{
    size_t n = (size_t)(t->nrows + 1) * (size_t)t->ncols;
    t->cells = must(realloc(t->cells, n * sizeof *t->cells));
    for (int i = 0; i < t->ncols; i++)
        t->cells[t->nrows * t->ncols + i] = copy(cells[i] ? cells[i] : "");
    t->nrows++;
}

void bench_table_footer(bench_table *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    retext(&t->footer, fmt, ap);
    va_end(ap);
}

bench_target *bench_target_add(bench_results *r, const char *text, bench_target_kind kind,
                               const char *select, const char *metric, double limit,
                               const char *ref_select, const char *ref_metric)
{
    bench_target *t = grow(&r->targets, &r->ntargets, &r->targets_cap, sizeof *t);
    *t = (bench_target){.text = copy(text), .kind = kind,
                        .select = copy(select), .metric = copy(metric),
                        .limit = limit, .ref_select = copy(ref_select),
                        .ref_metric = copy(ref_metric), .verdict = BENCH_NOT_MEASURED,
                        .value = NAN, .bound = NAN, .note = copy("")};
    return t;
}

void bench_target_not_judged(bench_target *t, const char *why)
{
    free(t->note);
    t->note = copy(why);
    t->verdict = BENCH_NOT_JUDGED;
}

void bench_target_note(bench_target *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    retext(&t->note, fmt, ap);
    va_end(ap);
}

/* The metric of the selected record, when it ran and has a sample. */
static const bench_metric *measured(const bench_results *r, const char *select,
                                    const char *metric)
{
    const bench_record *rec = bench_record_select(r, select);
    const bench_metric *m = rec && rec->status == BENCH_OK ? bench_metric_find(rec, metric)
                                                           : NULL;
    return m && m->nsamples > 0 && !isnan(m->median) ? m : NULL;
}

int bench_judge(bench_results *r)
{
    int missed = 0;
    for (int i = 0; i < r->ntargets; i++) {
        bench_target *t = &r->targets[i];
        const bench_metric *m = measured(r, t->select, t->metric);
        const bench_metric *ref = t->ref_metric ? measured(r, t->ref_select, t->ref_metric)
                                                : NULL;
        bool judged = t->verdict != BENCH_NOT_JUDGED;   /* a figure all the same */
        t->value = t->bound = NAN;
        if (judged)
            t->verdict = BENCH_NOT_MEASURED;
        if (!m || (t->ref_metric && !ref))
            continue;
        t->value = t->kind == BENCH_TARGET_SPREAD ? m->max - m->min : m->median;
        t->bound = ref ? t->limit * ref->median : t->limit;
        /* Judged on the figure as printed: 4.0001 KiB shows, and counts, as 4.00. */
        double scale = pow(10, m->decimals), v = round(t->value * scale) / scale;
        bool ok = t->kind == BENCH_TARGET_AT_LEAST ? v >= t->bound : v <= t->bound;
        if (judged) {
            t->verdict = ok ? BENCH_MET : BENCH_MISSED;
            missed += !ok;
        }
    }
    return missed;
}

const char *bench_verdict_name(bench_verdict v)
{
    static const char *const names[] = {"met", "MISSED", "not measured", "not judged"};
    return (unsigned)v < 4 ? names[v] : "?";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double *c = must(malloc(n * sizeof *c));
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    free(c);
    return m;
}

int bench_distinct(const bench_record *recs, int n, const char **out, int max, bool metrics)
{
    int found = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < (metrics ? recs[i].nmetrics : recs[i].nparams); k++) {
            const char *s = metrics ? recs[i].metrics[k].name : recs[i].params[k].key;
            int j = 0;
            while (j < found && strcmp(out[j], s))
                j++;
            if (j == found && found < max)
                out[found++] = s;
        }
    return found;
}

const char *bench_status_name(bench_status s)
{
    return s == BENCH_OK ? "ok" : s == BENCH_FAILED ? "FAILED" : "skipped";
}

const char *bench_better_name(bench_better b)
{
    return b == BENCH_BETTER_LOWER ? "lower" : b == BENCH_BETTER_HIGHER ? "higher" : "none";
}
