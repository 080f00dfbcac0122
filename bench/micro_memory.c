/*
 * stvm-bench micro: resident memory per blocked process. A coordinator spawns n workers
 * that each block on a semaphore of their own, reads RSS and the VM's bytes_live before
 * and after, then releases them all so the run ends cleanly. Sized for a scale test:
 * a million processes with the default configuration.
 */
#include "micro_measure.h"

#include "bench.h"

#include <stdlib.h>

/* Often enough to show a million spawns moving, rarely enough to cost nothing. */
#define PROGRESS_EVERY 65536

typedef struct blocked_run {
    stvm_semaphore **sems;   /* one per worker, created by the worker itself */
    micro_memory *m;
    const char *tag;         /* progress on stderr, or NULL */
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

/* Each worker (priority 40) runs at once and blocks before its spawn returns to the
 * coordinator (30), so after the loop every spawned worker is blocked. */
static void spawn_blocked(stvm_vm *vm, blocked_run *b)
{
    micro_memory *m = b->m;
    for (m->spawned = 0; m->spawned < m->asked; m->spawned++) {
        long i = m->spawned;
        int err = stvm_spawn(vm, STVM_PRIORITY_USER_SCHEDULING, NULL, blocked_worker,
                             &b->sems[i], NULL);
        if (err == STVM_OK && !b->sems[i])
            err = STVM_ENOMEM;   /* the worker could not make its semaphore */
        if (err) {
            m->spawn_err = err;
            break;
        }
        if (b->tag && (i + 1) % PROGRESS_EVERY == 0)
            bench_progress("[%s] memory: %ld of %ld processes blocked", b->tag, i + 1,
                           m->asked);
    }
    /* Releasing them and freeing the VM take a while at a million: say so. */
    if (b->tag)
        bench_progress("[%s] memory: %ld of %ld processes blocked; releasing them", b->tag,
                       m->spawned, m->asked);
}

static void blocked_coordinator(stvm_vm *vm, void *arg)
{
    blocked_run *b = arg;
    micro_memory *m = b->m;
    stvm_stats st;
    stvm_get_stats(vm, &st);
    m->live_before = st.bytes_live;
    m->rss_before = bench_rss_bytes();
    spawn_blocked(vm, b);
    m->rss_after = bench_rss_bytes();
    stvm_get_stats(vm, &st);
    m->live_after = st.bytes_live;
    for (long i = 0; i < m->spawned; i++) {
        int err = b->sems[i] ? stvm_semaphore_signal(vm, b->sems[i]) : STVM_OK;
        if (err && !m->run_err)
            m->run_err = err;
    }
}

int micro_memory_run(long n, const char *tag, micro_memory *m)
{
    *m = (micro_memory){.asked = n};
    blocked_run b = {.sems = malloc((size_t)n * sizeof *b.sems), .m = m, .tag = tag};
    if (!b.sems)
        return m->run_err = STVM_ENOMEM;
    /* Pages become resident when first written, so write them all before the first RSS
     * reading or they would count as the processes' memory; volatile, so the compiler
     * cannot turn this into a calloc that leaves them untouched. */
    stvm_semaphore *volatile *touch = b.sems;
    for (long i = 0; i < n; i++)
        touch[i] = NULL;
    stvm_vm *vm = NULL;
    int err = stvm_vm_new(&vm, NULL);
    if (!err)
        err = stvm_spawn(vm, STVM_PRIORITY_USER_BACKGROUND, "memory coordinator",
                         blocked_coordinator, &b, NULL);
    if (!err)
        err = stvm_run(vm);
    if (err && !m->run_err)
        m->run_err = err;
    stvm_vm_free(vm);
    free(b.sems);
    if (tag)
        fputc('\n', stderr);
    return m->spawn_err ? m->spawn_err : m->run_err;
}
