/*
 * stvm-bench: the two CSV views. Long form (a row per sample and per summary statistic)
 * is what pandas and R want; wide form (a row per record, medians) is what gnuplot
 * plots. Both start with the context as "# key: value" lines, which gnuplot skips and
 * pandas reads with comment='#'. Fields are quoted as RFC 4180 says; numbers are exact
 * (bench_shortest), an unmeasured one an empty field.
 */
#include "render.h"

#include <math.h>
#include <string.h>

#define MAX_KEYS 64

static void text(FILE *f, const char *s, const char *sep)
{
    if (strpbrk(s, ",\"\r\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputs(sep, f);
}

static void number(FILE *f, double v, const char *sep)
{
    char buf[32];
    if (isfinite(v)) {
        bench_shortest(buf, sizeof buf, v);
        fputs(buf, f);
    }
    fputs(sep, f);
}

/* The record's leading fields: (command,) case, every parameter key's value, status. */
static void lead(FILE *f, const bench_results *r, const bench_record *rec, const char **keys,
                 int nkeys, bool wide)
{
    if (!wide)
        text(f, r->command, ",");
    text(f, rec->name, ",");
    for (int k = 0; k < nkeys; k++) {
        const char *v = bench_param_find(rec, keys[k]);
        text(f, v ? v : "", ",");
    }
    text(f, bench_status_name(rec->status), ",");
}

static void long_row(FILE *f, const bench_results *r, const bench_record *rec,
                     const char **keys, int nkeys, const bench_metric *m, const char *stat,
                     int rep, double v)
{
    lead(f, r, rec, keys, nkeys, false);
    text(f, m ? m->name : "", ",");
    text(f, m ? m->unit : "", ",");
    text(f, m ? bench_better_name(m->better) : "", ",");
    text(f, stat, ",");
    if (rep > 0)
        fprintf(f, "%d", rep);
    fputc(',', f);
    number(f, v, "\n");
}

void bench_render_csv(FILE *f, const bench_results *r, const bench_invocation *inv, bool wide)
{
    const char *keys[MAX_KEYS];
    const char *metrics[MAX_KEYS];
    int nkeys = bench_distinct(r->records, r->nrecords, keys, MAX_KEYS, false);
    int nmetrics = bench_distinct(r->records, r->nrecords, metrics, MAX_KEYS, true);
    bench_context_lines(f, inv, "# ");
    fputs(wide ? "case," : "command,case,", f);
    for (int k = 0; k < nkeys; k++)
        text(f, keys[k], ",");
    if (wide) {
        fputs("status,", f);
        for (int k = 0; k < nmetrics; k++)
            text(f, metrics[k], ",");
        fputs("note\n", f);
    } else {
        fputs("status,metric,unit,better,statistic,repetition,value\n", f);
    }
    for (int i = 0; i < r->nrecords; i++) {
        const bench_record *rec = &r->records[i];
        if (wide) {
            lead(f, r, rec, keys, nkeys, true);
            for (int k = 0; k < nmetrics; k++) {
                const bench_metric *m = bench_metric_find(rec, metrics[k]);
                number(f, m ? m->median : NAN, ",");
            }
            text(f, rec->note, "\n");
            continue;
        }
        if (rec->nmetrics == 0)   /* a case that did not run still has its row */
            long_row(f, r, rec, keys, nkeys, NULL, "", 0, NAN);
        for (int k = 0; k < rec->nmetrics; k++) {
            const bench_metric *m = &rec->metrics[k];
            for (int s = 0; s < m->nsamples; s++)
                long_row(f, r, rec, keys, nkeys, m, "sample", s + 1, m->samples[s]);
            long_row(f, r, rec, keys, nkeys, m, "median", 0, m->median);
            long_row(f, r, rec, keys, nkeys, m, "min", 0, m->min);
            long_row(f, r, rec, keys, nkeys, m, "max", 0, m->max);
        }
    }
}
