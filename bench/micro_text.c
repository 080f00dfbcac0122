/*
 * stvm-bench micro: the report for people. One line per row (median and min..max), the
 * notes, and the targets: judged for the assembly back end, named as not judged for
 * any other.
 */
#include "micro_render.h"

#include "bench.h"

#include <math.h>
#include <stvm.h>

static void table_intro(FILE *f, const micro_report *r, bool md)
{
    char cpu[32];
    if (r->cpu >= 0)
        snprintf(cpu, sizeof cpu, "pinned to CPU %d", r->cpu);
    else
        snprintf(cpu, sizeof cpu, "not pinned");
    if (md)
        fprintf(f, "## stvm-bench micro\n\n");
    fprintf(f, "%sstvm %s (%s back end), %s, median of %d repetitions (min..max), %lld "
               "hand-offs and raw switches each; memory at %ld blocked processes%s\n\n",
            md ? "" : "stvm-bench micro: ", stvm_version_string(), stvm_context_backend(),
            cpu, r->repeat, r->iterations, r->processes, md ? "." : "");
    if (md)
        fprintf(f, "| back end | hand-off [ns] | raw switch [ns] | RSS per blocked process "
                   "[KiB] | VM bytes_live per process | blocked processes | pthread/stvm | "
                   "SharedQueue hand-off [ns] | queue/semaphore |\n"
                   "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    else
        fprintf(f, "%-14s %-26s %-26s %-13s %-13s %-9s %-13s %-26s %s\n", "back end",
                "hand-off ns", "raw switch ns", "KiB/blocked", "VM B/process", "blocked",
                "pthread/stvm", "queue ns", "queue/sem");
}

static void reference_line(FILE *f, const micro_report *rep, const micro_row *r, bool md)
{
    char h[48];
    snprintf(h, sizeof h, "%.0f (%.0f..%.0f)", r->handoff_ns, r->handoff_ns_min,
             r->handoff_ns_max);
    if (md)
        fprintf(f, "| pthread sem_t (2 threads, CPU %d) | %s | | | | | 1.0x | | |\n",
                rep->pthread_cpu, h);
    else
        fprintf(f, "%-14s %-26s %-26s %-13s %-13s %-9s %-13s %-26s %s\n", r->backend, h, "-",
                "-", "-", "-", "1.0x", "-", "-");
}

static void table_line(FILE *f, const micro_report *rep, const micro_row *r, bool md)
{
    if (r->reference) {
        reference_line(f, rep, r, md);
        return;
    }
    char h[48], w[48], q[48], ratio[24];
    snprintf(h, sizeof h, "%.1f (%.1f..%.1f)", r->handoff_ns, r->handoff_ns_min,
             r->handoff_ns_max);
    snprintf(w, sizeof w, "%.1f (%.1f..%.1f)", r->raw_switch_ns, r->raw_switch_ns_min,
             r->raw_switch_ns_max);
    snprintf(q, sizeof q, "%.1f (%.1f..%.1f)", r->queue_ns, r->queue_ns_min, r->queue_ns_max);
    if (isfinite(r->pthread_over_stvm))
        snprintf(ratio, sizeof ratio, "%.1fx", r->pthread_over_stvm);
    else
        snprintf(ratio, sizeof ratio, "-");
    if (md)
        fprintf(f, "| %s | %s | %s | %.2f | %.0f | %lld | %s | %s | %.2fx |\n", r->backend, h,
                w, r->kib_per_process, r->vm_bytes_per_process, r->processes, ratio, q,
                r->queue_over_handoff);
    else
        fprintf(f, "%-14s %-26s %-26s %-13.2f %-13.0f %-9lld %-13s %-26s %.2fx\n", r->backend,
                h, w, r->kib_per_process, r->vm_bytes_per_process, r->processes, ratio, q,
                r->queue_over_handoff);
}

/* The monitor's figures, under the table (the table is wide enough already). */
static void monitor_lines(FILE *f, const micro_report *r, bool md)
{
    const micro_row *m = &r->rows[0];
    if (md)
        fprintf(f, "\n| back end | monitor signal + wait hand-off [ns] | monitor enter + exit, "
                   "uncontended [ns] |\n|---|---:|---:|\n| %s | %.1f (%.1f..%.1f) | "
                   "%.1f (%.1f..%.1f) |\n", m->backend, m->monitor_ns, m->monitor_ns_min,
                m->monitor_ns_max, m->monitor_enter_exit_ns, m->monitor_enter_exit_ns_min,
                m->monitor_enter_exit_ns_max);
    else
        fprintf(f, "\nmonitor (%s): signal + wait hand-off %.1f ns (%.1f..%.1f), enter + exit "
                   "uncontended %.1f ns (%.1f..%.1f)\n", m->backend, m->monitor_ns,
                m->monitor_ns_min, m->monitor_ns_max, m->monitor_enter_exit_ns,
                m->monitor_enter_exit_ns_min, m->monitor_enter_exit_ns_max);
}

static void table_notes(FILE *f, const micro_report *r, bool md)
{
    if (r->nrows > 1 && !md)
        fprintf(f, "\npthread-sem: sem_t ping-pong between two OS threads pinned to CPU %d, "
                   "%lld hand-offs per repetition.\n", r->pthread_cpu, r->pthread_iterations);
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].note[0])
            fprintf(f, "\nnote (%s): %s\n", r->rows[i].backend, r->rows[i].note);
}

static void table_targets(FILE *f, const micro_report *r, bool md)
{
    fprintf(f, "\n%sTargets (%s back end)%s\n", md ? "### " : "", MICRO_JUDGED_BACKEND,
            md ? "\n" : ":");
    if (!micro_report_judged(r)) {
        fprintf(f, "%snot judged: this binary uses the %s back end; the targets apply to "
                   "%s (stvm-bench)\n", md ? "" : "  ", r->rows[0].backend,
                MICRO_JUDGED_BACKEND);
        return;
    }
    if (md)
        fputs("| figure | target | measured | |\n|---|---:|---:|---|\n", f);
    for (size_t i = 0; i < micro_ntargets; i++) {
        const micro_target *t = &micro_targets[i];
        const char *met;
        double v = micro_target_measured(r, t, &met);
        if (md)
            fprintf(f, "| %s | <= %.0f %s | %.*f %s | %s |\n", t->md_label, t->limit,
                    t->unit, t->decimals, v, t->unit, met);
        else
            fprintf(f, "  %-30s <= %2.0f %-3s  %8.*f %-3s  %s\n", t->label, t->limit,
                    t->unit, t->decimals, v, t->unit, met);
    }
}

void micro_print_table(FILE *f, const micro_report *r, bool markdown)
{
    table_intro(f, r, markdown);
    for (int i = 0; i < r->nrows; i++)
        table_line(f, r, &r->rows[i], markdown);
    monitor_lines(f, r, markdown);
    table_notes(f, r, markdown);
    table_targets(f, r, markdown);
}
