/*
 * stvm-bench: the terminal table and Markdown, from one table model. The records become
 * bench_tables (a row per record; transposed, a metric per row and a few records per
 * table, when a run has more than TRANSPOSE_AT metrics, so a wide record set stays
 * readable in 80 columns), joined by the command's own tables, the targets and the
 * notes; one printer draws any bench_table in either style.
 */
#include "render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 64
#define TRANSPOSE_AT 8      /* more metrics than this: a metric per row */
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
            fprintf(f, "%s%*s%s%*s", md ? "| " : c ? "  " : "", right ? pad : 0, "", cell,
                    right || (!md && c == ncols - 1) ? 0 : pad, "");
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

static void metric_header(char *buf, size_t size, const bench_metric *m)
{
    snprintf(buf, size, *m->unit ? "%s (%s)" : "%s", m->name, m->unit);
}

/* The cell of record rec in the row `row` of the record table: case, the parameters,
 * status, then the metrics. */
static void record_cell(char *buf, size_t size, const bench_record *rec, int row,
                        const char **keys, int nkeys, const bench_metric **metrics)
{
    const char *v;
    if (row == 0)
        snprintf(buf, size, "%s", rec->name);
    else if (row <= nkeys)
        snprintf(buf, size, "%s", (v = bench_param_find(rec, keys[row - 1])) ? v : "");
    else if (row == nkeys + 1)
        snprintf(buf, size, "%s", bench_status_name(rec->status));
    else
        metric_cell(buf, size, bench_metric_find(rec, metrics[row - nkeys - 2]->name));
}

static void row_header(char *buf, size_t size, int row, const char **keys, int nkeys,
                       const bench_metric **metrics)
{
    if (row == 0 || row > nkeys + 1) {
        if (row)
            metric_header(buf, size, metrics[row - nkeys - 2]);
        else
            snprintf(buf, size, "case");
    } else {
        snprintf(buf, size, "%s", row <= nkeys ? keys[row - 1] : "status");
    }
}

#define CELL 256

static void records_tables(bench_results *model, const bench_results *r)
{
    const char *keys[MAX_KEYS];
    const bench_metric *metrics[MAX_KEYS];
    int nkeys = bench_param_keys(r, keys, MAX_KEYS);
    int nmetrics = bench_metric_names(r, metrics, MAX_KEYS);
    int nrows = 2 + nkeys + nmetrics;   /* case, keys, status, metrics */
    char (*cells)[CELL] = calloc((size_t)(nrows > RECORDS_PER_BLOCK ? nrows : RECORDS_PER_BLOCK) + 1,
                                 CELL);
    const char **row = calloc((size_t)nrows + RECORDS_PER_BLOCK + 1, sizeof *row);
    char *align = calloc((size_t)nrows + RECORDS_PER_BLOCK + 1, 1);
    if (!cells || !row || !align) {
        fputs("stvm-bench: out of memory\n", stderr);
        exit(1);
    }
    if (nmetrics <= TRANSPOSE_AT) {
        for (int c = 0; c < nrows; c++) {
            row_header(cells[c], CELL, c, keys, nkeys, metrics);
            row[c] = cells[c];
            align[c] = c > nkeys + 1 ? 'r' : 'l';
        }
        bench_table *t = bench_table_add(model, "", nrows, align);
        bench_table_row(t, row);
        for (int i = 0; i < r->nrecords; i++) {
            for (int c = 0; c < nrows; c++)
                record_cell(cells[c], CELL, &r->records[i], c, keys, nkeys, metrics);
            bench_table_row(t, row);
        }
    }
    for (int first = 0; nmetrics > TRANSPOSE_AT && first < r->nrecords;
         first += RECORDS_PER_BLOCK) {
        int n = r->nrecords - first < RECORDS_PER_BLOCK ? r->nrecords - first
                                                         : RECORDS_PER_BLOCK;
        memset(align, 'r', (size_t)n + 1);
        align[0] = 'l';
        bench_table *t = NULL;
        for (int k = 0; k < nrows; k++) {
            row_header(cells[0], CELL, k, keys, nkeys, metrics);
            for (int i = 0; i < n; i++)
                record_cell(cells[i + 1], CELL, &r->records[first + i], k, keys, nkeys,
                            metrics);
            for (int c = 0; c <= n; c++)
                row[c] = cells[c];
            if (!t)
                t = bench_table_add(model, "", n + 1, align);
            bench_table_row(t, row);
        }
    }
    free(cells);
    free(row);
    free(align);
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
    bench_results model;
    bench_results_init(&model, r->command);
    records_tables(&model, r);
    int nrecord_tables = model.ntables;
    targets_table(&model, r);
    for (int i = 0; i < model.ntables; i++) {
        for (int k = 0; i == nrecord_tables && k < r->ntables; k++)
            print_table(f, &r->tables[k], markdown);
        print_table(f, &model.tables[i], markdown);
    }
    for (int k = 0; nrecord_tables == model.ntables && k < r->ntables; k++)
        print_table(f, &r->tables[k], markdown);
    notes(f, r, markdown);
    bench_results_free(&model);
}
