/*
 * stvm-bench: the one JSON schema of every command, "stvm-bench/1": the context, the
 * parameters as run (bench_echo_json), every record with every sample, the targets with
 * their verdicts and the command's own tables. NaN is null.
 */
#include "render.h"

static const char *const kind_names[] = {"at_most", "at_least", "spread"};

static void key(FILE *f, const char *indent, const char *k)
{
    fprintf(f, "%s\"%s\": ", indent, k);
}

static void record(FILE *f, const bench_record *rec)
{
    fputs("    {\"case\": ", f);
    bench_json_str(f, rec->name);
    fputs(", \"params\": {", f);
    for (int k = 0; k < rec->nparams; k++) {
        fputs(k ? ", " : "", f);
        bench_json_str(f, rec->params[k].key);
        fputs(": ", f);
        bench_json_str(f, rec->params[k].value);
    }
    fprintf(f, "}, \"status\": \"%s\", \"note\": ", bench_status_name(rec->status));
    bench_json_str(f, rec->note);
    fputs(",\n     \"metrics\": [", f);
    for (int k = 0; k < rec->nmetrics; k++) {
        const bench_metric *m = &rec->metrics[k];
        fputs(k ? ",\n       {\"name\": " : "\n       {\"name\": ", f);
        bench_json_str(f, m->name);
        fputs(", \"unit\": ", f);
        bench_json_str(f, m->unit);
        fprintf(f, ", \"better\": \"%s\", \"median\": ", bench_better_name(m->better));
        bench_json_num(f, m->median);
        fputs(", \"min\": ", f);
        bench_json_num(f, m->min);
        fputs(", \"max\": ", f);
        bench_json_num(f, m->max);
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
    fputs("    {\"text\": ", f);
    bench_json_str(f, t->text);
    fprintf(f, ", \"kind\": \"%s\", \"select\": ", kind_names[t->kind]);
    bench_json_str(f, t->select);
    fputs(", \"metric\": ", f);
    bench_json_str(f, t->metric);
    fputs(", \"limit\": ", f);
    bench_json_num(f, t->limit);
    fputs(", \"ref_select\": ", f);
    bench_json_str(f, t->ref_select);
    fputs(", \"ref_metric\": ", f);
    bench_json_str(f, t->ref_metric);
    fputs(",\n     \"verdict\": ", f);
    bench_json_str(f, bench_verdict_name(t->verdict));
    fputs(", \"value\": ", f);
    bench_json_num(f, t->value);
    fputs(", \"bound\": ", f);
    bench_json_num(f, t->bound);
    fputs(", \"note\": ", f);
    bench_json_str(f, t->note);
    fputc('}', f);
}

static void table(FILE *f, const bench_table *t)
{
    fputs("    {\"title\": ", f);
    bench_json_str(f, t->title);
    fputs(", \"rows\": [", f);
    for (int row = 0; row < t->nrows; row++) {
        fputs(row ? ",\n      [" : "\n      [", f);
        for (int c = 0; c < t->ncols; c++) {
            fputs(c ? ", " : "", f);
            bench_json_str(f, t->cells[row * t->ncols + c]);
        }
        fputc(']', f);
    }
    fputs("], \"footer\": ", f);
    bench_json_str(f, t->footer);
    fputc('}', f);
}

void bench_render_json(FILE *f, const bench_results *r, const bench_invocation *inv)
{
    fputs("{\n  \"schema\": \"stvm-bench/1\",\n", f);
    key(f, "  ", "context");
    bench_context_json(f, inv, "  ");
    fputs(",\n", f);
    key(f, "  ", "command");
    bench_json_str(f, r->command);
    fputs(",\n", f);
    key(f, "  ", "parameters");
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
    fputs("\n  ],\n", f);
    key(f, "  ", "note");
    bench_json_str(f, r->note);
    fputs("\n}\n", f);
}
