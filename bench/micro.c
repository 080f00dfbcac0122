/*
 * stvm-bench micro: the cost of the scheduler's basic moves, per context-switch back end.
 *
 *  - hand-off: two processes of equal priority ping-pong through two semaphores; one
 *    hand-off is a signal + wait that moves control to the other process;
 *  - raw switch: stvm_measure_raw_switch (two stacks, no scheduler);
 *  - memory: resident bytes per blocked process with 100,000 processes each waiting on
 *    its own semaphore (RSS from /proc/self/statm, and the VM's own bytes_live);
 *  - reference: the same ping-pong with pthread sem_t between two OS threads pinned to
 *    one core.
 * A binary measures only the back end it was linked with (stvm_context_backend()):
 * comparing back ends is the caller's job (`make bench-micro` runs both binaries).
 */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MICRO_MAX_REPEAT 100
#define TARGET_HANDOFF_NS 25.0
#define TARGET_RAW_NS 10.0
#define TARGET_KIB 4.0

typedef struct micro_opts {
    int cpu;                        /* -1: no pinning */
    int repeat;
    long long iterations;           /* hand-offs (and raw switches) per repetition */
    long long pthread_iterations;   /* hand-offs per repetition of the pthread pair */
    long processes;                 /* blocked processes for the memory figure */
    bench_format format;
} micro_opts;

/* The figures of the back end this binary was linked with. */
typedef struct micro_result {
    char backend[32];
    int nsamples;
    double handoff[MICRO_MAX_REPEAT];
    double raw[MICRO_MAX_REPEAT];
    double handoff_ns, handoff_min, handoff_max;
    double raw_ns, raw_min, raw_max;
    long processes_asked;
    long processes;                 /* how many actually blocked */
    double kib_per_process;         /* RSS growth / processes */
    double vm_bytes_per_process;    /* bytes_live growth / processes */
    uint64_t rss_before, rss_after;
    char note[320];
} micro_result;

typedef struct micro_pthread {
    int nsamples;
    double handoff[MICRO_MAX_REPEAT];
    double handoff_ns, handoff_min, handoff_max;
    int cpu;
    char note[160];
} micro_pthread;

/* ---- semaphore hand-off -------------------------------------------------------------- */

typedef struct pingpong {
    stvm_semaphore *s1, *s2;
    long long warmup, rounds;   /* one round = two hand-offs */
    int64_t t0, t1;
    int err;
} pingpong;

static void ping(stvm_vm *vm, void *arg)
{
    pingpong *pp = arg;
    for (long long i = 0; i < pp->warmup + pp->rounds; i++) {
        if (i == pp->warmup)
            pp->t0 = bench_mono_ns();
        int e1 = stvm_semaphore_signal(vm, pp->s1);
        int e2 = stvm_semaphore_wait(vm, pp->s2);
        if (e1 || e2) {
            pp->err = e1 ? e1 : e2;
            break;
        }
    }
    pp->t1 = bench_mono_ns();
}

static void pong(stvm_vm *vm, void *arg)
{
    pingpong *pp = arg;
    for (long long i = 0; i < pp->warmup + pp->rounds; i++) {
        int e1 = stvm_semaphore_wait(vm, pp->s1);
        int e2 = stvm_semaphore_signal(vm, pp->s2);
        if (e1 || e2) {
            pp->err = e1 ? e1 : e2;
            break;
        }
    }
}

/* ns per hand-off in a fresh VM, or a negative stvm error. */
static int measure_handoff(long long handoffs, double *ns, char *why, size_t whysize)
{
    stvm_vm *vm;
    int err = stvm_vm_new(&vm, NULL);
    if (err) {
        snprintf(why, whysize, "stvm_vm_new: %s", stvm_err_name(err));
        return err;
    }
    pingpong pp = {.warmup = 10000, .rounds = handoffs / 2 > 0 ? handoffs / 2 : 1};
    if ((err = stvm_semaphore_new(vm, &pp.s1)) || (err = stvm_semaphore_new(vm, &pp.s2)) ||
        (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "ping", ping, &pp, NULL)) ||
        (err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, "pong", pong, &pp, NULL))) {
        snprintf(why, whysize, "setting up the ping-pong: %s", stvm_err_name(err));
        stvm_vm_free(vm);
        return err;
    }
    stvm_stats st;
    stvm_reset_stats(vm);
    err = stvm_run(vm);
    stvm_get_stats(vm, &st);
    stvm_vm_free(vm);
    if (err || pp.err) {
        snprintf(why, whysize, "ping-pong: %s", stvm_err_name(err ? err : pp.err));
        return err ? err : pp.err;
    }
    /* Each round must have cost two switches, or the figure means something else. */
    uint64_t want = 2 * (uint64_t)(pp.warmup + pp.rounds);
    if (st.context_switches < want) {
        snprintf(why, whysize,
                 "ping-pong made %llu context switches, expected at least %llu",
                 (unsigned long long)st.context_switches, (unsigned long long)want);
        return STVM_ESTATE;
    }
    *ns = (double)(pp.t1 - pp.t0) / (double)(2 * pp.rounds);
    return STVM_OK;
}

/* ---- memory per blocked process ------------------------------------------------------ */

typedef struct blocked_run {
    stvm_semaphore **sems;   /* one per worker, created by the worker itself */
    long asked, spawned;
    int spawn_err;
    uint64_t rss0, rss1;
    uint64_t live0, live1;
    int err;
} blocked_run;

static void blocked_worker(stvm_vm *vm, void *arg)
{
    stvm_semaphore **slot = arg;
    if (stvm_semaphore_new(vm, slot) != STVM_OK) {
        *slot = NULL;
        return;
    }
    stvm_semaphore_wait(vm, *slot);
    stvm_semaphore_free(vm, *slot);
    *slot = NULL;
}

/* Priority 30: every worker (40) it spawns runs at once and blocks before the spawn
 * returns, so after the loop all of them are blocked. */
static void blocked_coordinator(stvm_vm *vm, void *arg)
{
    blocked_run *b = arg;
    stvm_stats st;
    stvm_get_stats(vm, &st);
    b->live0 = st.bytes_live;
    b->rss0 = bench_rss_bytes();
    long i;
    for (i = 0; i < b->asked; i++) {
        int err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, NULL, blocked_worker,
                             &b->sems[i], NULL);
        if (err == STVM_OK && !b->sems[i])
            err = STVM_ENOMEM;   /* the worker could not make its semaphore */
        if (err) {
            b->spawn_err = err;
            break;
        }
    }
    b->spawned = i;
    b->rss1 = bench_rss_bytes();
    stvm_get_stats(vm, &st);
    b->live1 = st.bytes_live;
    for (i = 0; i < b->spawned; i++) {
        if (!b->sems[i])
            continue;
        int err = stvm_semaphore_signal(vm, b->sems[i]);
        if (err && !b->err)
            b->err = err;
    }
}

static void measure_memory(long n, micro_result *res)
{
    res->processes_asked = n;
    blocked_run b = {.asked = n};
    /* Touched now, so its pages are resident before the first RSS reading. */
    b.sems = malloc((size_t)n * sizeof *b.sems);
    if (b.sems)
        memset(b.sems, 0, (size_t)n * sizeof *b.sems);
    stvm_vm *vm = NULL;
    int err = b.sems ? stvm_vm_new(&vm, NULL) : STVM_ENOMEM;
    if (!err)
        err = stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "memory coordinator",
                         blocked_coordinator, &b, NULL);
    if (!err)
        err = stvm_run(vm);
    if (!err)
        err = b.err;
    stvm_vm_free(vm);
    free(b.sems);
    res->processes = b.spawned;
    res->rss_before = b.rss0;
    res->rss_after = b.rss1;
    if (err) {
        snprintf(res->note, sizeof res->note, "memory run failed: %s", stvm_err_name(err));
        res->kib_per_process = res->vm_bytes_per_process = NAN;
        return;
    }
    if (b.spawned > 0) {
        res->kib_per_process = ((double)b.rss1 - (double)b.rss0) / 1024.0 / (double)b.spawned;
        res->vm_bytes_per_process = ((double)b.live1 - (double)b.live0) / (double)b.spawned;
    } else {
        res->kib_per_process = res->vm_bytes_per_process = NAN;
    }
    if (b.spawn_err == STVM_ENOMEM) {
        snprintf(res->note, sizeof res->note,
                 "only %ld of %ld processes could be spawned (STVM_ENOMEM): each stack "
                 "mapping plus its guard page takes 2 memory-map entries and "
                 "vm.max_map_count is %ld; raise it (scripts/install-deps.sh does it as "
                 "root: sysctl -w vm.max_map_count=4194304)",
                 b.spawned, n, bench_max_map_count());
    } else if (b.spawn_err) {
        snprintf(res->note, sizeof res->note, "spawning stopped after %ld processes: %s",
                 b.spawned, stvm_err_name(b.spawn_err));
    }
}

/* ---- the pthread reference ------------------------------------------------------------ */

typedef struct pt_pair {
    sem_t s1, s2;
    long long warmup, rounds;
    int cpu;
    int64_t t0, t1;
    int pin_err;
} pt_pair;

static void sem_wait_intr(sem_t *s)
{
    while (sem_wait(s) != 0 && errno == EINTR) {
    }
}

static void *pt_ping(void *arg)
{
    pt_pair *p = arg;
    if (bench_pin_cpu(p->cpu) != 0)
        p->pin_err = 1;
    for (long long i = 0; i < p->warmup + p->rounds; i++) {
        if (i == p->warmup)
            p->t0 = bench_mono_ns();
        sem_post(&p->s1);
        sem_wait_intr(&p->s2);
    }
    p->t1 = bench_mono_ns();
    return NULL;
}

static void *pt_pong(void *arg)
{
    pt_pair *p = arg;
    if (bench_pin_cpu(p->cpu) != 0)
        p->pin_err = 1;
    for (long long i = 0; i < p->warmup + p->rounds; i++) {
        sem_wait_intr(&p->s1);
        sem_post(&p->s2);
    }
    return NULL;
}

static int measure_pthread(long long handoffs, int cpu, double *ns)
{
    pt_pair p = {.warmup = 1000, .rounds = handoffs / 2 > 0 ? handoffs / 2 : 1, .cpu = cpu};
    if (sem_init(&p.s1, 0, 0) != 0 || sem_init(&p.s2, 0, 0) != 0)
        return -1;
    pthread_t a, b;
    int rc = pthread_create(&b, NULL, pt_pong, &p);
    if (rc == 0) {
        rc = pthread_create(&a, NULL, pt_ping, &p);
        if (rc != 0) {
            /* Let the waiting partner finish so it can be joined. */
            for (long long i = 0; i < p.warmup + p.rounds; i++)
                sem_post(&p.s1);
        } else {
            pthread_join(a, NULL);
        }
        pthread_join(b, NULL);
    }
    sem_destroy(&p.s1);
    sem_destroy(&p.s2);
    if (rc != 0 || p.pin_err)
        return -1;
    *ns = (double)(p.t1 - p.t0) / (double)(2 * p.rounds);
    return 0;
}

/* ---- running -------------------------------------------------------------------------- */

static void summarise(micro_result *r)
{
    r->handoff_ns = bench_median(r->handoff, (size_t)r->nsamples);
    r->handoff_min = bench_min(r->handoff, (size_t)r->nsamples);
    r->handoff_max = bench_max(r->handoff, (size_t)r->nsamples);
    r->raw_ns = bench_median(r->raw, (size_t)r->nsamples);
    r->raw_min = bench_min(r->raw, (size_t)r->nsamples);
    r->raw_max = bench_max(r->raw, (size_t)r->nsamples);
}

static bool progress_on(void);

static int run_own(const micro_opts *o, micro_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->backend, sizeof r->backend, "%s", stvm_context_backend());
    bool tty = progress_on();
    if (tty)
        fprintf(stderr, "[%s] memory: %ld blocked processes\n", r->backend, o->processes);
    measure_memory(o->processes, r);
    if (r->note[0])
        fprintf(stderr, "stvm-bench: note (%s): %s\n", r->backend, r->note);
    for (int k = 0; k < o->repeat; k++) {
        if (tty)
            fprintf(stderr, "\r[%s] hand-off and raw switch, rep %d/%d ", r->backend, k + 1,
                    o->repeat);
        char why[200] = "";
        int err = measure_handoff(o->iterations, &r->handoff[k], why, sizeof why);
        if (err) {
            if (tty)
                fputc('\n', stderr);
            fprintf(stderr, "stvm-bench: micro (%s): %s\n", r->backend, why);
            return BENCH_EXIT_FAIL;
        }
        uint64_t raw_iter = (uint64_t)(o->iterations / 2 > 0 ? o->iterations / 2 : 1);
        err = stvm_measure_raw_switch(raw_iter, &r->raw[k]);
        if (err) {
            if (tty)
                fputc('\n', stderr);
            fprintf(stderr, "stvm-bench: stvm_measure_raw_switch: %s\n", stvm_err_name(err));
            return BENCH_EXIT_FAIL;
        }
        r->nsamples = k + 1;
    }
    if (tty)
        fputc('\n', stderr);
    summarise(r);
    return BENCH_EXIT_OK;
}

static bool progress_on(void)
{
    return isatty(2);
}

/* ---- output --------------------------------------------------------------------------- */

static void csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n")) {
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
}

static void csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
}

static void csv_samples(FILE *f, const double *v, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.6g", i ? ";" : "", v[i]);
}

static void print_csv(FILE *f, const micro_opts *o, const micro_result *rs, int nr,
                      const micro_pthread *pt)
{
    fprintf(f, "backend,handoff_ns,handoff_ns_min,handoff_ns_max,raw_switch_ns,"
               "raw_switch_ns_min,raw_switch_ns_max,processes_asked,processes,"
               "kib_per_process,vm_bytes_per_process,rss_before_bytes,rss_after_bytes,"
               "pthread_over_stvm,repeat,iterations,handoff_ns_samples,"
               "raw_switch_ns_samples,note\n");
    for (int i = 0; i < nr; i++) {
        const micro_result *r = &rs[i];
        csv_field(f, r->backend);
        const double timings[] = {r->handoff_ns, r->handoff_min, r->handoff_max,
                                  r->raw_ns, r->raw_min, r->raw_max};
        for (size_t k = 0; k < sizeof timings / sizeof timings[0]; k++) {
            fputc(',', f);
            csv_num(f, timings[k]);
        }
        fprintf(f, ",%ld,%ld,", r->processes_asked, r->processes);
        csv_num(f, r->kib_per_process);
        fputc(',', f);
        csv_num(f, r->vm_bytes_per_process);
        fprintf(f, ",%llu,%llu,", (unsigned long long)r->rss_before,
                (unsigned long long)r->rss_after);
        if (pt)
            csv_num(f, pt->handoff_ns / r->handoff_ns);
        fprintf(f, ",%d,%lld,", o->repeat, o->iterations);
        csv_samples(f, r->handoff, r->nsamples);
        fputc(',', f);
        csv_samples(f, r->raw, r->nsamples);
        fputc(',', f);
        csv_field(f, r->note);
        fputc('\n', f);
    }
    if (pt) {
        fputs("pthread-sem,", f);
        csv_num(f, pt->handoff_ns);
        fputc(',', f);
        csv_num(f, pt->handoff_min);
        fputc(',', f);
        csv_num(f, pt->handoff_max);
        fprintf(f, ",,,,,,,,,,1,%d,%lld,", o->repeat, o->pthread_iterations);
        csv_samples(f, pt->handoff, pt->nsamples);
        fputs(",,", f);
        csv_field(f, pt->note);
        fputc('\n', f);
    }
}

/* Only the assembly back end is judged against the targets. */
static const micro_result *find_asm(const micro_result *rs, int nr)
{
    for (int i = 0; i < nr; i++)
        if (!strcmp(rs[i].backend, "asm-x86_64"))
            return &rs[i];
    return NULL;
}

static const char *met(double v, double target)
{
    if (!isfinite(v))
        return "not measured";
    return v <= target ? "met" : "MISSED";
}

static void print_table(FILE *f, const micro_opts *o, const micro_result *rs, int nr,
                        const micro_pthread *pt, bool markdown)
{
    char cpu[32];
    if (o->cpu >= 0)
        snprintf(cpu, sizeof cpu, "pinned to CPU %d", o->cpu);
    else
        snprintf(cpu, sizeof cpu, "not pinned");
    if (markdown)
        fprintf(f, "## stvm-bench micro\n\n");
    fprintf(f, "%sstvm %s, %s, median of %d repetitions (min..max), %lld hand-offs and "
               "raw switches each; memory at %ld blocked processes%s\n\n",
            markdown ? "" : "stvm-bench micro: ", stvm_version_string(), cpu, o->repeat,
            o->iterations, o->processes, markdown ? "." : "");
    if (markdown) {
        fprintf(f, "| back end | hand-off [ns] | raw switch [ns] | RSS per blocked process "
                   "[KiB] | VM bytes_live per process | blocked processes | pthread/stvm |\n"
                   "|---|---:|---:|---:|---:|---:|---:|\n");
    } else {
        fprintf(f, "%-14s %-26s %-26s %-13s %-13s %-9s %s\n", "back end", "hand-off ns",
                "raw switch ns", "KiB/blocked", "VM B/process", "blocked", "pthread/stvm");
    }
    for (int i = 0; i < nr; i++) {
        const micro_result *r = &rs[i];
        char h[48], w[48], ratio[24];
        snprintf(h, sizeof h, "%.1f (%.1f..%.1f)", r->handoff_ns, r->handoff_min,
                 r->handoff_max);
        snprintf(w, sizeof w, "%.1f (%.1f..%.1f)", r->raw_ns, r->raw_min, r->raw_max);
        if (pt && isfinite(pt->handoff_ns))
            snprintf(ratio, sizeof ratio, "%.1fx", pt->handoff_ns / r->handoff_ns);
        else
            snprintf(ratio, sizeof ratio, "-");
        if (markdown)
            fprintf(f, "| %s | %s | %s | %.2f | %.0f | %ld | %s |\n", r->backend, h, w,
                    r->kib_per_process, r->vm_bytes_per_process, r->processes, ratio);
        else
            fprintf(f, "%-14s %-26s %-26s %-13.2f %-13.0f %-9ld %s\n", r->backend, h, w,
                    r->kib_per_process, r->vm_bytes_per_process, r->processes, ratio);
    }
    if (pt) {
        char h[48];
        snprintf(h, sizeof h, "%.0f (%.0f..%.0f)", pt->handoff_ns, pt->handoff_min,
                 pt->handoff_max);
        if (markdown)
            fprintf(f, "| pthread sem_t (2 threads, CPU %d) | %s | | | | | 1.0x |\n",
                    pt->cpu, h);
        else
            fprintf(f, "%-14s %-26s %-26s %-13s %-13s %-9s %s\n", "pthread-sem", h, "-",
                    "-", "-", "-", "1.0x");
    }
    if (pt && !markdown)
        fprintf(f, "\npthread-sem: sem_t ping-pong between two OS threads pinned to CPU %d, "
                   "%lld hand-offs per repetition.\n", pt->cpu, o->pthread_iterations);
    for (int i = 0; i < nr; i++)
        if (rs[i].note[0])
            fprintf(f, "%snote (%s): %s\n", markdown ? "\n" : "\n", rs[i].backend,
                    rs[i].note);

    const micro_result *a = find_asm(rs, nr);
    fprintf(f, "\n%sTargets (asm-x86_64 back end)%s\n", markdown ? "### " : "",
            markdown ? "\n" : ":");
    if (!a) {
        fprintf(f, "  not judged: this binary uses the %s back end; the targets apply to "
                   "asm-x86_64 (stvm-bench)\n", rs[0].backend);
        return;
    }
    if (markdown)
        fprintf(f, "| figure | target | measured | |\n|---|---:|---:|---|\n"
                   "| semaphore hand-off | <= %.0f ns | %.1f ns | %s |\n"
                   "| raw switch | <= %.0f ns | %.1f ns | %s |\n"
                   "| resident memory per blocked process | <= %.0f KiB | %.2f KiB | %s |\n",
                TARGET_HANDOFF_NS, a->handoff_ns, met(a->handoff_ns, TARGET_HANDOFF_NS),
                TARGET_RAW_NS, a->raw_ns, met(a->raw_ns, TARGET_RAW_NS), TARGET_KIB,
                a->kib_per_process, met(a->kib_per_process, TARGET_KIB));
    else
        fprintf(f, "  semaphore hand-off             <= %2.0f ns   %8.1f ns   %s\n"
                   "  raw switch                     <= %2.0f ns   %8.1f ns   %s\n"
                   "  RSS per blocked process        <= %2.0f KiB  %8.2f KiB  %s\n",
                TARGET_HANDOFF_NS, a->handoff_ns, met(a->handoff_ns, TARGET_HANDOFF_NS),
                TARGET_RAW_NS, a->raw_ns, met(a->raw_ns, TARGET_RAW_NS), TARGET_KIB,
                a->kib_per_process, met(a->kib_per_process, TARGET_KIB));
}

static void json_stat(FILE *f, const char *name, double med, double lo, double hi,
                      const double *samples, int n, bool comma)
{
    fprintf(f, "      \"%s\": {\"median\": ", name);
    bench_json_number(f, med);
    fputs(", \"min\": ", f);
    bench_json_number(f, lo);
    fputs(", \"max\": ", f);
    bench_json_number(f, hi);
    fputs(", \"samples\": [", f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        bench_json_number(f, samples[i]);
    }
    fprintf(f, "]}%s\n", comma ? "," : "");
}

static void print_json(FILE *f, const micro_opts *o, const micro_result *rs, int nr,
                       const micro_pthread *pt)
{
    fprintf(f, "{\n  \"schema\": \"stvm-bench/micro/1\",\n  \"context\": ");
    bench_json_context(f, "  ", "real", o->cpu);
    fprintf(f, ",\n  \"params\": {\"repeat\": %d, \"iterations\": %lld, "
               "\"pthread_iterations\": %lld, \"processes\": %ld},\n",
            o->repeat, o->iterations, o->pthread_iterations, o->processes);
    fprintf(f, "  \"results\": [\n");
    for (int i = 0; i < nr; i++) {
        const micro_result *r = &rs[i];
        fprintf(f, "    {\n      \"backend\": ");
        bench_json_string(f, r->backend);
        fputs(",\n", f);
        json_stat(f, "handoff_ns", r->handoff_ns, r->handoff_min, r->handoff_max,
                  r->handoff, r->nsamples, true);
        json_stat(f, "raw_switch_ns", r->raw_ns, r->raw_min, r->raw_max, r->raw,
                  r->nsamples, true);
        fprintf(f, "      \"memory\": {\"processes_asked\": %ld, \"processes\": %ld, "
                   "\"kib_per_process\": ", r->processes_asked, r->processes);
        bench_json_number(f, r->kib_per_process);
        fputs(", \"vm_bytes_live_per_process\": ", f);
        bench_json_number(f, r->vm_bytes_per_process);
        fprintf(f, ", \"rss_before_bytes\": %llu, \"rss_after_bytes\": %llu},\n",
                (unsigned long long)r->rss_before, (unsigned long long)r->rss_after);
        fputs("      \"pthread_over_stvm\": ", f);
        bench_json_number(f, pt ? pt->handoff_ns / r->handoff_ns : NAN);
        fputs(",\n      \"note\": ", f);
        bench_json_string(f, r->note);
        fprintf(f, "\n    }%s\n", i + 1 < nr ? "," : "");
    }
    fprintf(f, "  ],\n  \"pthread_reference\": ");
    if (pt) {
        fprintf(f, "{\n      \"what\": \"sem_t ping-pong between two OS threads pinned to "
                   "one CPU\",\n      \"cpu\": %d,\n      \"iterations\": %lld,\n",
                pt->cpu, o->pthread_iterations);
        json_stat(f, "handoff_ns", pt->handoff_ns, pt->handoff_min, pt->handoff_max,
                  pt->handoff, pt->nsamples, false);
        fputs("  },\n", f);
    } else {
        fputs("null,\n", f);
    }
    const micro_result *a = find_asm(rs, nr);
    fprintf(f, "  \"targets\": [\n");
    const char *names[3] = {"handoff_ns", "raw_switch_ns", "kib_per_process"};
    double targets[3] = {TARGET_HANDOFF_NS, TARGET_RAW_NS, TARGET_KIB};
    double vals[3] = {a ? a->handoff_ns : NAN, a ? a->raw_ns : NAN,
                      a ? a->kib_per_process : NAN};
    for (int i = 0; i < 3; i++) {
        fprintf(f, "    {\"backend\": \"asm-x86_64\", \"figure\": \"%s\", \"target\": ",
                names[i]);
        bench_json_number(f, targets[i]);
        fputs(", \"measured\": ", f);
        bench_json_number(f, vals[i]);
        fprintf(f, ", \"met\": %s}%s\n",
                isfinite(vals[i]) ? (vals[i] <= targets[i] ? "true" : "false") : "null",
                i < 2 ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}

/* ---- the command ------------------------------------------------------------------------ */

static void micro_help(FILE *f)
{
    fprintf(f,
            "usage: stvm-bench micro [OPTIONS]\n"
            "  --cpu N                 pin to CPU N (default 0; -1 = no pinning)\n"
            "  --repeat K              repetitions, medians reported (default 5)\n"
            "  --iterations N          hand-offs and raw switches per repetition "
            "(default 2000000)\n"
            "  --pthread-iterations N  hand-offs of the pthread reference (default 200000)\n"
            "  --processes N           blocked processes for the memory figure "
            "(default 100000)\n"
            "  --format F              table (default), csv, json or markdown\n"
            "Only the back end this binary is linked with is measured; the targets\n"
            "apply to the asm-x86_64 back end (stvm-bench, not stvm-bench-ucontext).\n");
}

int micro_main(int argc, char **argv)
{
    micro_opts o = {.cpu = 0, .repeat = 5, .iterations = 2000000,
                    .pthread_iterations = 200000, .processes = 100000,
                    .format = FMT_TABLE};
    for (int i = 1; i < argc;) {
        const char *v = NULL;
        long long n;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            micro_help(stdout);
            return BENCH_EXIT_OK;
        } else if (bench_flag(argc, argv, &i, "--cpu", &v)) {
            if (!bench_parse_ll(v, -1, CPU_SETSIZE - 1, &n))
                return bench_usage_error("micro ", "--cpu wants a CPU number or -1, not '%s'",
                                         v ? v : "");
            o.cpu = (int)n;
        } else if (bench_flag(argc, argv, &i, "--repeat", &v)) {
            if (!bench_parse_ll(v, 1, MICRO_MAX_REPEAT, &n))
                return bench_usage_error("micro ", "--repeat wants 1..%d, not '%s'",
                                         MICRO_MAX_REPEAT, v ? v : "");
            o.repeat = (int)n;
        } else if (bench_flag(argc, argv, &i, "--iterations", &v)) {
            if (!bench_parse_ll(v, 2, 10000000000LL, &n))
                return bench_usage_error("micro ", "--iterations wants 2..10^10, not '%s'",
                                         v ? v : "");
            o.iterations = n;
        } else if (bench_flag(argc, argv, &i, "--pthread-iterations", &v)) {
            if (!bench_parse_ll(v, 2, 10000000000LL, &n))
                return bench_usage_error("micro ",
                                         "--pthread-iterations wants 2..10^10, not '%s'",
                                         v ? v : "");
            o.pthread_iterations = n;
        } else if (bench_flag(argc, argv, &i, "--processes", &v)) {
            if (!bench_parse_ll(v, 1, 10000000, &n))
                return bench_usage_error("micro ", "--processes wants 1..10^7, not '%s'",
                                         v ? v : "");
            o.processes = (long)n;
        } else if (bench_flag(argc, argv, &i, "--format", &v)) {
            if (!bench_parse_format(v, &o.format))
                return bench_usage_error("micro ",
                                         "--format wants table, csv, json or markdown, "
                                         "not '%s'", v ? v : "");
        } else {
            return bench_usage_error("micro ", "unknown option '%s'", argv[i]);
        }
    }
    if (o.cpu >= 0) {
        int err = bench_pin_cpu(o.cpu);
        if (err) {
            fprintf(stderr, "stvm-bench: cannot pin to CPU %d: %s\n", o.cpu, strerror(-err));
            return BENCH_EXIT_USAGE;
        }
    }

    micro_result rs[1];
    int nr = 1;
    int rc = run_own(&o, &rs[0]);
    if (rc)
        return rc;

    micro_pthread pt_store, *pt = NULL;
    memset(&pt_store, 0, sizeof pt_store);
    pt_store.cpu = o.cpu >= 0 ? o.cpu : sched_getcpu();
    if (pt_store.cpu < 0)
        pt_store.cpu = 0;
    for (int k = 0; k < o.repeat; k++) {
        if (progress_on())
            fprintf(stderr, "\r[pthread] sem_t ping-pong, rep %d/%d ", k + 1, o.repeat);
        if (measure_pthread(o.pthread_iterations, pt_store.cpu, &pt_store.handoff[k])) {
            snprintf(pt_store.note, sizeof pt_store.note,
                     "the pthread reference could not run (thread creation or pinning)");
            break;
        }
        pt_store.nsamples = k + 1;
    }
    if (progress_on())
        fputc('\n', stderr);
    if (pt_store.nsamples) {
        pt_store.handoff_ns = bench_median(pt_store.handoff, (size_t)pt_store.nsamples);
        pt_store.handoff_min = bench_min(pt_store.handoff, (size_t)pt_store.nsamples);
        pt_store.handoff_max = bench_max(pt_store.handoff, (size_t)pt_store.nsamples);
        pt = &pt_store;
    } else {
        fprintf(stderr, "stvm-bench: note: %s\n", pt_store.note);
    }

    switch (o.format) {
    case FMT_CSV:
        print_csv(stdout, &o, rs, nr, pt);
        break;
    case FMT_JSON:
        print_json(stdout, &o, rs, nr, pt);
        break;
    case FMT_MARKDOWN:
        print_table(stdout, &o, rs, nr, pt, true);
        break;
    case FMT_TABLE:
        print_table(stdout, &o, rs, nr, pt, false);
        break;
    }
    return BENCH_EXIT_OK;
}
