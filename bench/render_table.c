/*
 * stvm-bench: the terminal table and Markdown, from one table model. The records become
 * bench_tables, one per group of records (records_tables): a row per record, or
 * transposed, a metric per row and a few records side by side, when the group has more
 * than TRANSPOSE_AT metrics or its rows would be wider than MAX_WIDTH columns, so a wide
 * record set stays readable in a terminal. The command's own tables come first, then
 * the records, the targets and the notes; one printer draws any bench_table in either
 * style.
 */
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_KEYS 64
#define TRANSPOSE_AT 8      /* more metrics than this: a metric per row */
#define MAX_WIDTH 100       /* or a row per record wider than this */
#define RECORDS_PER_BLOCK 4 /* records side by side in a transposed table */

/* Display width of UTF-8 text: continuation bytes take no column. */
static int width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

static void print_table(FILE *f, const bench_table *t, bool md)
{
    int w[64] = {0};
    int ncols = t->ncols < 64 ? t->ncols : 64;
    for (int i = 0; i < t->nrows * t->ncols; i++)
        if (i % t->ncols < 64 && width(t->cells[i]) > w[i % t->ncols])
            w[i % t->ncols] = width(t->cells[i]);
    fputc('\n', f);
    if (*t->title)
        fprintf(f, md ? "**%s**\n\n" : "%s\n", t->title);
    for (int row = 0; row < t->nrows; row++) {
        for (int c = 0; c < ncols; c++) {
            const char *cell = t->cells[row * t->ncols + c];
            int pad = w[c] - width(cell);
            bool right = t->align[c] == 'r';
            fprintf(f, "%s%*s", md ? "| " : c ? "  " : "", right ? pad : 0, "");
            for (const char *p = cell; *p; p++)   /* a | would end a Markdown cell */
                fputs(md && *p == '|' ? "\\|" : (char[]){*p, 0}, f);
            fprintf(f, "%*s", right || (!md && c == ncols - 1) ? 0 : pad, "");
            fputs(md ? " " : "", f);
        }
        fputs(md ? "|\n" : "\n", f);
        for (int c = 0; row == 0 && c < ncols; c++) {
            fputs(md ? "|" : c ? "  " : "", f);
            for (int k = 0; k < w[c] + (md ? 2 : 0) - (md && t->align[c] == 'r'); k++)
                fputc('-', f);
            fputs(md && t->align[c] == 'r' ? ":" : "", f);
        }
        if (row == 0)
            fputs(md ? "|\n" : "\n", f);
    }
    if (*t->footer)
        fprintf(f, "%s%s\n", md ? "\n" : "", t->footer);
}

/* "23.6 (23.1..24.0)", or "-" when not measured. */
static void metric_cell(char *buf, size_t size, const bench_metric *m)
{
    if (!m || m->nsamples == 0 || isnan(m->median))
        snprintf(buf, size, "-");
    else if (m->nsamples > 1 && m->min != m->max)
        snprintf(buf, size, "%.*f (%.*f..%.*f)", m->decimals, m->median, m->decimals, m->min,
                 m->decimals, m->max);
    else
        snprintf(buf, size, "%.*f", m->decimals, m->median);
}

/* "name (unit)", or the name alone when it ends with its unit ("time_ns"). */
static void metric_header(char *buf, size_t size, const bench_metric *m)
{
    size_t n = strlen(m->name), u = strlen(m->unit);
    bool named = u && n > u && m->name[n - u - 1] == '_' &&
                 strcasecmp(m->name + n - u, m->unit) == 0;
    snprintf(buf, size, *m->unit && !named ? "%s (%s)" : "%s", m->name, m->unit);
}

/* The columns of a group of records: its parameter keys and metric names. */
typedef struct columns {
    const char *keys[MAX_KEYS], *metrics[MAX_KEYS];
    const bench_metric *first[MAX_KEYS];   /* where each metric's unit is read */
    int nkeys, nmetrics;
} columns;

/* Row `row` of the record table for rec (NULL: the header): case, the parameters,
 * status, then the metrics. */
static void record_cell(char *buf, size_t size, const bench_record *rec, int row,
                        const columns *c)
{
    const char *v;
    if (row == 0)
        snprintf(buf, size, "%s", rec ? rec->name : "case");
    else if (row <= c->nkeys)
        snprintf(buf, size, "%s", !rec ? c->keys[row - 1]
                                       : (v = bench_param_find(rec, c->keys[row - 1])) ? v : "");
    else if (row == c->nkeys + 1)
        snprintf(buf, size, "%s", rec ? bench_status_name(rec->status) : "status");
    else if (!rec)
        metric_header(buf, size, c->first[row - c->nkeys - 2]);
    else
        metric_cell(buf, size, bench_metric_find(rec, c->metrics[row - c->nkeys - 2]));
}

#define CELL 256

/* One group's table: a row per record, or (more than TRANSPOSE_AT metrics) a metric
 * per row with RECORDS_PER_BLOCK records side by side per table. */
static void group_tables(bench_results *model, const bench_record *recs, int n)
{
    columns c;
    c.nkeys = bench_distinct(recs, n, c.keys, MAX_KEYS, false);
    c.nmetrics = bench_distinct(recs, n, c.metrics, MAX_KEYS, true);
    for (int k = 0; k < c.nmetrics; k++)
        for (int i = 0; i < n && !(c.first[k] = bench_metric_find(&recs[i], c.metrics[k])); i++)
            ;
    int nrows = 2 + c.nkeys + c.nmetrics;   /* case, keys, status, metrics */
    char cells[MAX_KEYS * 2 + 2][CELL];
    int wide = 0;   /* the width of the table a row per record */
    for (int k = 0; k < nrows; k++) {
        int w = 0;
        for (int i = -1; i < n; i++) {
            record_cell(cells[0], CELL, i < 0 ? NULL : &recs[i], k, &c);
            w = width(cells[0]) > w ? width(cells[0]) : w;
        }
        wide += w + 2;
    }
    bool transposed = c.nmetrics > TRANSPOSE_AT || wide > MAX_WIDTH;
    const char *line[MAX_KEYS * 2 + 2];
    char align[MAX_KEYS * 2 + 3] = "";
    for (int first = 0; first < n; first += transposed ? RECORDS_PER_BLOCK : n) {
        int cols = transposed ? 1 + (n - first < RECORDS_PER_BLOCK ? n - first
                                                                   : RECORDS_PER_BLOCK)
                              : nrows;
        for (int k = 0; k < cols; k++)
            align[k] = transposed ? (k ? 'r' : 'l') : (k > c.nkeys + 1 ? 'r' : 'l');
        align[cols] = 0;
        bench_table *t = bench_table_add(model, "", cols, align);
        for (int row = 0; row < (transposed ? nrows : n + 1); row++) {
            for (int k = 0; k < cols; k++) {
                const bench_record *rec = transposed ? (k ? &recs[first + k - 1] : NULL)
                                                     : (row ? &recs[row - 1] : NULL);
                record_cell(cells[k], CELL, rec, transposed ? row : k, &c);
                line[k] = cells[k];
            }
            bench_table_row(t, line);
        }
    }
}

/* A table per group of consecutive records whose first metric has the same name (the
 * hand-offs, then the memory figures), so a case shows only its group's columns; a
 * record without a metric stays in the group before it. */
static void records_tables(bench_results *model, const bench_results *r)
{
    const char *key = NULL;
    for (int first = 0, i = 0; i <= r->nrecords; i++) {
        const char *k = i < r->nrecords && r->records[i].nmetrics ? r->records[i].metrics[0].name
                                                                  : NULL;
        if (i == r->nrecords || (k && key && strcmp(k, key))) {
            if (i > first)
                group_tables(model, &r->records[first], i - first);
            first = i;
            key = NULL;
        }
        key = key ? key : k;
    }
}

static void targets_table(bench_results *model, const bench_results *r)
{
    if (!r->ntargets)
        return;
    bench_table *t = bench_table_add(model, "Targets", 4, "llrr");
    bench_table_row(t, (const char *const[]){"target", "verdict", "value", "bound"});
    for (int i = 0; i < r->ntargets; i++) {
        const bench_target *g = &r->targets[i];
        char value[64] = "-", bound[64] = "-", verdict[CELL];
        if (!isnan(g->value))
            snprintf(value, sizeof value, "%.4g", g->value);
        if (!isnan(g->bound))
            snprintf(bound, sizeof bound, "%s %.4g",
                     g->kind == BENCH_TARGET_AT_LEAST ? ">=" : "<=", g->bound);
        snprintf(verdict, sizeof verdict, *g->note ? "%s (%s)" : "%s",
                 bench_verdict_name(g->verdict), g->note);
        bench_table_row(t, (const char *const[]){g->text, verdict, value, bound});
    }
}

static void notes(FILE *f, const bench_results *r, bool md)
{
    bool any = *r->note;
    for (int i = 0; i < r->nrecords; i++)
        any |= *r->records[i].note != 0;
    if (!any)
        return;
    fputs(md ? "\n**Notes**\n\n" : "\nNotes:\n", f);
    for (int i = 0; i < r->nrecords; i++) {
        const bench_record *rec = &r->records[i];
        if (!*rec->note)
            continue;
        fprintf(f, "%s%s", md ? "- " : "  ", rec->name);
        for (int k = 0; k < rec->nparams; k++)
            fprintf(f, " %s=%s", rec->params[k].key, rec->params[k].value);
        fprintf(f, ": %s\n", rec->note);
    }
    if (*r->note)
        fprintf(f, "\n%s\n", r->note);
}

void bench_render_table(FILE *f, const bench_results *r, const bench_invocation *inv,
                        bool markdown)
{
    if (markdown) {
        fprintf(f, "## stvm-bench %s\n\n", inv->command->name);
        bench_context_lines(f, inv, "- ");
    } else {
        bench_context_header(f, inv);
    }
    /* The command's own tables first (the seed's table is what a reader looks for),
     * then the records, then the targets. */
    for (int k = 0; k < r->ntables; k++)
        print_table(f, &r->tables[k], markdown);
    bench_results model;
    bench_results_init(&model, r->command);
    records_tables(&model, r);
    targets_table(&model, r);
    for (int i = 0; i < model.ntables; i++)
        print_table(f, &model.tables[i], markdown);
    notes(f, r, markdown);
    bench_results_free(&model);
}
