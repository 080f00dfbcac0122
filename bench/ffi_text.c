/*
 * stvm-bench ffi: the report for people, as an aligned table or Markdown: one line per
 * case (median and min..max in its unit, p99 for round trips, the ratio to the row it is
 * compared with, the ticks), the notes that say what each case is, and the targets.
 */
#include "ffi_render.h"

#include "bench.h"

#include <math.h>
#include <string.h>

static void intro(FILE *f, const ffi_report *r, bool md)
{
    char cpu[48];
    if (r->cpu >= 0)
        snprintf(cpu, sizeof cpu, "pinned to CPU %d", r->cpu);
    else
        snprintf(cpu, sizeof cpu, "not pinned");
    if (md)
        fprintf(f, "## stvm-bench ffi\n\n");
    fprintf(f, "%sstvm %s (%s back end), %s, median of %d repetitions (min..max); %lld "
               "same-thread calls and nested callbacks, %lld round trips, %d blocking calls "
               "of %d ms per repetition; %d FFI workers, ffi_spin_us %d%s\n\n",
            md ? "" : "stvm-bench ffi: ", stvm_version_string(), stvm_context_backend(), cpu,
            r->repeat, r->calls, r->round_trips, r->blocking_calls, r->block_ms, r->workers,
            r->spin_us, md ? "." : "");
}

/* "12.3 ns (11.9..13.0)", "99.1 % (97.2..99.8)" or "failed". */
static void figure(char *buf, size_t size, const ffi_row *row)
{
    if (!row->nsamples) {
        snprintf(buf, size, "failed");
        return;
    }
    snprintf(buf, size, "%.1f %s (%.1f..%.1f)", row->median, row->unit, row->min, row->max);
}

static void extra(char *buf, size_t size, const ffi_row *row)
{
    buf[0] = 0;
    if (isfinite(row->ratio))
        snprintf(buf, size, "%.2fx %s", row->ratio, row->versus);
    if (row->kind == FFI_TICKER_SAME || row->kind == FFI_TICKER_THREADED)
        snprintf(buf, size, "%lld of %lld periods, %lld lost", row->ticks, row->periods,
                 row->ticks_lost);
}

static void table(FILE *f, const ffi_report *r, bool md)
{
    if (md)
        fprintf(f, "| case | runner | bits | median (min..max) | p99 | compared |\n"
                   "|---|---|---:|---|---:|---|\n");
    else
        fprintf(f, "%-14s %-12s %4s  %-28s %9s  %s\n", "case", "runner", "bits",
                "median (min..max)", "p99", "compared");
    for (int i = 0; i < r->nrows; i++) {
        const ffi_row *row = &r->rows[i];
        char fig[64], p99[24] = "-", bits[8] = "-", cmp[64];
        figure(fig, sizeof fig, row);
        extra(cmp, sizeof cmp, row);
        if (isfinite(row->p99))
            snprintf(p99, sizeof p99, "%.1f us", row->p99);
        if (row->bits)
            snprintf(bits, sizeof bits, "%lld", row->bits);
        if (md)
            fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", row->case_name, row->runner, bits,
                    fig, p99, cmp);
        else
            fprintf(f, "%-14s %-12s %4s  %-28s %9s  %s\n", row->case_name, row->runner, bits,
                    fig, p99, cmp);
    }
}

static void notes(FILE *f, const ffi_report *r, bool md)
{
    const char *b = md ? "- " : "  ";
    fprintf(f, "\n%s\n", md ? "### Notes\n" : "Notes:");
    fprintf(f, "%sdirect, ffi_call, callout: int64_t add(int64_t, int64_t) through a C "
               "function pointer; through ffi_call with its arguments already C values; "
               "through stvm_ffi_call from a green process, oops in and out (callout-boxed: "
               "2^40 + 1 on a 31-bit VM, arguments and result boxed, the result released). "
               "Compared: the median over repetitions of this row / ffi_call, each "
               "repetition against the reference measured moments before.\n", b);
    fprintf(f, "%scallback nested: a C loop called once through the FFI calls an echo "
               "callback on the VM's thread; the figure is per callback (C to VM to C).\n", b);
    fprintf(f, "%spthread-sem: a sem_t round trip between two unpinned threads, the "
               "reference for threaded: stvm_ffi_call_threaded of add, one caller, a "
               "round trip from the call to its return; callback queued: another OS thread "
               "calls the echo callback, run by the callback process. nospin: the same with "
               "config.ffi_spin_us 0, so that every wait for another thread sleeps in the "
               "OS and is woken, as the reference's do.\n", b);
    fprintf(f, "%sticker: a process at 40 wakes at every 1 ms boundary while a process at 30 "
               "makes %d calls of usleep(%d ms) on the VM's thread (same-thread) or on a "
               "worker; the figure is the share of the calls' 1 ms periods in which the "
               "ticker ran.\n", b, r->blocking_calls, r->block_ms);
    for (int i = 0; i < r->nrows; i++)
        if (r->rows[i].note[0])
            fprintf(f, "%s%s %s: %s\n", b, r->rows[i].case_name, r->rows[i].runner,
                    r->rows[i].note);
}

static void targets(FILE *f, const ffi_report *r, bool md)
{
    fprintf(f, "\n%sTargets (side by side in this run)%s\n", md ? "### " : "", md ? "\n" : ":");
    if (md)
        fputs("| figure | target | measured | |\n|---|---:|---:|---|\n", f);
    for (size_t i = 0; i < ffi_ntargets; i++) {
        const ffi_target *t = &ffi_targets[i];
        const char *met;
        double v = ffi_target_measured(r, t, &met);
        char want[32], got[32] = "-";
        snprintf(want, sizeof want, "%s %.*f %s", t->at_least ? ">=" : "<=", t->decimals,
                 t->limit, t->unit);
        if (isfinite(v))
            snprintf(got, sizeof got, "%.*f %s", t->decimals, v, t->unit);
        if (md)
            fprintf(f, "| %s | %s | %s | %s |\n", t->label, want, got, met);
        else
            fprintf(f, "  %-48s %10s %10s  %s\n", t->label, want, got, met);
    }
}

void ffi_print_table(FILE *f, const ffi_report *r, bool markdown)
{
    intro(f, r, markdown);
    table(f, r, markdown);
    notes(f, r, markdown);
    targets(f, r, markdown);
}
