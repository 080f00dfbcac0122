/*
 * stvm-bench: the one JSON schema of every command, "stvm-bench/1": the context, the
 * parameters as run (bench_echo_json), every record with every sample, the targets with
 * their verdicts and the command's own tables. NaN is null.
 */
#include "render.h"

static const char *const kind_names[] = {"at_most", "at_least", "spread"};

/* `sep"key": value`, the value a string (null for NULL) or a number. */
static void text(FILE *f, const char *sep, const char *key, const char *value)
{
    fprintf(f, "%s\"%s\": ", sep, key);
    bench_json_str(f, value);
}

static void number(FILE *f, const char *sep, const char *key, double value)
{
    fprintf(f, "%s\"%s\": ", sep, key);
    bench_json_num(f, value);
}

static void record(FILE *f, const bench_record *rec)
{
    text(f, "    {", "case", rec->name);
    fputs(", \"params\": {", f);
    for (int k = 0; k < rec->nparams; k++)
        text(f, k ? ", " : "", rec->params[k].key, rec->params[k].value);
    text(f, "}, ", "status", bench_status_name(rec->status));
    text(f, ", ", "note", rec->note);
    fputs(",\n     \"metrics\": [", f);
    for (int k = 0; k < rec->nmetrics; k++) {
        const bench_metric *m = &rec->metrics[k];
        text(f, k ? ",\n       {" : "\n       {", "name", m->name);
        text(f, ", ", "unit", m->unit);
        text(f, ", ", "better", bench_better_name(m->better));
        fprintf(f, ", \"decimals\": %d", m->decimals);
        number(f, ", ", "median", m->median);
        number(f, ", ", "min", m->min);
        number(f, ", ", "max", m->max);
        fputs(", \"samples\": [", f);
        for (int s = 0; s < m->nsamples; s++) {
            fputs(s ? ", " : "", f);
            bench_json_num(f, m->samples[s]);
        }
        fputs("]}", f);
    }
    fputs("]}", f);
}

static void target(FILE *f, const bench_target *t)
{
    text(f, "    {", "text", t->text);
    text(f, ", ", "kind", kind_names[t->kind]);
    text(f, ", ", "select", t->select);
    text(f, ", ", "metric", t->metric);
    number(f, ", ", "limit", t->limit);
    text(f, ", ", "ref_select", t->ref_select);
    text(f, ", ", "ref_metric", t->ref_metric);
    text(f, ",\n     ", "verdict", bench_verdict_name(t->verdict));
    number(f, ", ", "value", t->value);
    number(f, ", ", "bound", t->bound);
    text(f, ", ", "note", t->note);
    fputc('}', f);
}

static void table(FILE *f, const bench_table *t)
{
    text(f, "    {", "title", t->title);
    fputs(", \"rows\": [", f);
    for (int row = 0; row < t->nrows; row++) {
        fputs(row ? ",\n      [" : "\n      [", f);
        for (int c = 0; c < t->ncols; c++) {
            fputs(c ? ", " : "", f);
            bench_json_str(f, t->cells[row * t->ncols + c]);
        }
        fputc(']', f);
    }
    text(f, "], ", "footer", t->footer);
    fputc('}', f);
}

void bench_render_json(FILE *f, const bench_results *r, const bench_invocation *inv, bool unused)
{
    fputs("{\n  \"schema\": \"stvm-bench/1\",\n  \"context\": ", f);
    bench_context_json(f, inv, "  ");
    text(f, ",\n  ", "command", r->command);
    fputs(",\n  \"parameters\": ", f);
    bench_echo_json(f, inv);
    fputs(",\n  \"results\": [\n", f);
    for (int i = 0; i < r->nrecords; i++) {
        fputs(i ? ",\n" : "", f);
        record(f, &r->records[i]);
    }
    fputs("\n  ],\n  \"targets\": [\n", f);
    for (int i = 0; i < r->ntargets; i++) {
        fputs(i ? ",\n" : "", f);
        target(f, &r->targets[i]);
    }
    fputs("\n  ],\n  \"tables\": [\n", f);
    for (int i = 0; i < r->ntables; i++) {
        fputs(i ? ",\n" : "", f);
        table(f, &r->tables[i]);
    }
    text(f, "\n  ],\n  ", "note", r->note);
    fputs("\n}\n", f);
}
